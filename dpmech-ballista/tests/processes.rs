//! A cluster of separate processes, started from this crate's binaries as a user starts
//! them (a scheduler and two executors on loopback): releases equal one node's, and a
//! release survives the loss of an executor mid-flight with bit-identical values.
//! Every process the tests start is killed when its guard drops, pass or fail.

use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// The child processes of one test, killed on drop.
struct Processes(Vec<Child>);

impl Drop for Processes {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A loopback port free at the time of asking.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A scheduler and `executors` executors as processes; the scheduler's address.
fn start_cluster(executors: usize, processes: &mut Processes) -> SocketAddr {
    let scheduler: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    processes.0.push(
        Command::new(env!("CARGO_BIN_EXE_dpmech-ballista-scheduler"))
            .args([
                "--bind",
                &scheduler.to_string(),
                "--executor-timeout-seconds",
                "3",
            ])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(scheduler).is_err() {
        assert!(Instant::now() < deadline, "the scheduler did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    for _ in 0..executors {
        let (port, grpc) = (free_port(), free_port());
        processes.0.push(
            Command::new(env!("CARGO_BIN_EXE_dpmech-ballista-executor"))
                .args([
                    "--scheduler",
                    &scheduler.to_string(),
                    "--port",
                    &port.to_string(),
                    "--grpc-port",
                    &grpc.to_string(),
                    "--slots",
                    "2",
                ])
                .stdout(Stdio::null())
                .spawn()
                .unwrap(),
        );
    }
    scheduler
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cluster_of_processes_releases_what_one_node_releases() {
    let mut processes = Processes(Vec::new());
    let scheduler = start_cluster(2, &mut processes);
    tokio::time::timeout(Duration::from_secs(300), async {
        let table = visits(20_000, 3);
        for (name, q) in queries() {
            let here = release(&one_node(table.clone(), 4, &q), &q, 9).await;
            let there = release(
                &on_cluster(&format!("df://{scheduler}"), table.clone(), 4, &q),
                &q,
                9,
            )
            .await;
            assert_eq!(there, here, "{name}");
        }
    })
    .await
    .expect("over 300 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_survives_a_lost_executor_with_the_same_values() {
    let mut processes = Processes(Vec::new());
    let scheduler = start_cluster(2, &mut processes);
    let url = format!("df://{scheduler}");
    tokio::time::timeout(Duration::from_secs(300), async {
        // Enough rows that the scan and bounding stage takes a while on every executor,
        // in a CSV file that the executors read themselves.
        let path = std::env::temp_dir().join(format!("dpmech-ballista-retry-{}.csv", std::process::id()));
        write_visits_csv(3_000_000, &path);
        let table =
            dpmech_ballista::csv_table(path.to_str().unwrap(), datafusion::prelude::CsvReadOptions::new())
                .await
                .unwrap();
        let q = &queries()[0].1;
        let start = Instant::now();
        let undisturbed = release(&on_cluster(&url, table.clone(), 16, q), q, 11).await;
        let took = start.elapsed();
        // The same release again; one executor is killed while it runs.
        let session = on_cluster(&url, table.clone(), 16, q);
        let run = tokio::spawn(async move { release(&session, q_owned(), 11).await });
        tokio::time::sleep(took.mul_f64(0.3)).await;
        processes.0[2].kill().unwrap();
        let disturbed = run.await.unwrap();
        println!(
            "undisturbed {took:?}; disturbed {:?} (executor killed at {:?})",
            start.elapsed() - took,
            took.mul_f64(0.3)
        );
        assert_eq!(disturbed, undisturbed);
        assert_eq!(undisturbed, release(&one_node(table, 4, q), q, 11).await);
        let _ = std::fs::remove_file(&path);
    })
    .await
    .expect("over 300 s");
}

fn q_owned() -> &'static dpmech_datafusion::GroupedQuery {
    use std::sync::OnceLock;
    static Q: OnceLock<dpmech_datafusion::GroupedQuery> = OnceLock::new();
    Q.get_or_init(|| queries().swap_remove(0).1)
}
