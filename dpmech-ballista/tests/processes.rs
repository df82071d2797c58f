//! A cluster of separate processes, started from this crate's binaries as a user starts
//! them (a scheduler and two executors on loopback): releases equal one node's, and a
//! release survives the loss of an executor mid-flight with bit-identical values.
//! Every process the tests start is killed when its guard drops, pass or fail.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
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

/// A scheduler and `executors` executors as processes; the scheduler's address. The
/// executors write their shuffle files under `work_dirs[i]` when given.
fn start_cluster(executors: usize, processes: &mut Processes) -> SocketAddr {
    start_cluster_in(&vec![None; executors], processes)
}

fn start_cluster_in(work_dirs: &[Option<&Path>], processes: &mut Processes) -> SocketAddr {
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
    for work_dir in work_dirs {
        let (port, grpc) = (free_port(), free_port());
        let mut command = Command::new(env!("CARGO_BIN_EXE_dpmech-ballista-executor"));
        command.args([
            "--scheduler",
            &scheduler.to_string(),
            "--port",
            &port.to_string(),
            "--grpc-port",
            &grpc.to_string(),
            "--slots",
            "2",
        ]);
        if let Some(dir) = work_dir {
            command.args(["--work-dir", dir.to_str().unwrap()]);
        }
        processes.0.push(
            command
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        // Up before the next one starts (and before any release): its Flight port
        // answers once it has registered with the scheduler.
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "an executor did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
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

/// Bytes written so far under an executor's work dir, per (job, stage): the shuffle
/// files are `work_dir/job/stage/…`. Files that vanish while being read count 0.
fn shuffle_bytes(work_dir: &Path) -> BTreeMap<(String, usize), u64> {
    fn walk(path: &Path) -> u64 {
        match std::fs::read_dir(path) {
            Ok(entries) => entries
                .flatten()
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => walk(&e.path()).max(1),
                    // A file that exists counts at least 1: its stage has begun writing.
                    Ok(_) => e.metadata().map_or(1, |m| m.len().max(1)),
                    Err(_) => 0,
                })
                .sum(),
            Err(_) => 0,
        }
    }
    let mut out = BTreeMap::new();
    for job in std::fs::read_dir(work_dir).into_iter().flatten().flatten() {
        let name = job.file_name().to_string_lossy().into_owned();
        for stage in std::fs::read_dir(job.path()).into_iter().flatten().flatten() {
            if let Ok(id) = stage.file_name().to_string_lossy().parse::<usize>() {
                out.insert((name.clone(), id), walk(&stage.path()));
            }
        }
    }
    out
}

/// The bytes of stage `stage` of any job, on one executor.
fn stage_bytes(files: &BTreeMap<(String, usize), u64>, stage: usize) -> u64 {
    files
        .iter()
        .filter(|((_, s), _)| *s == stage)
        .map(|(_, b)| b)
        .sum()
}

/// Where a release is when the victim executor is killed, observed in the executors'
/// work dirs (no fixed sleeps).
#[derive(Debug, Clone, Copy)]
enum KillPoint {
    /// The job's first shuffle file appears on either executor: before the map stage's
    /// output is written.
    MapWriteBegins,
    /// The victim has written half its undisturbed share of the first map stage.
    MapWriteHalfway,
    /// The next stage has a file: the first map stage's output is all written.
    MapWritten,
    /// The victim has written half its share of the last map stage (the bounding
    /// stage, whose exact partials the final stage reads).
    LastMapHalfway,
    /// The final stage has a file: every map output is written, the final stage runs.
    FinalBegins,
    /// The victim has written a final-stage partition (which the client must fetch).
    FinalOnVictim,
}

impl KillPoint {
    /// Whether the release has reached this point, given each executor's files of the
    /// release's job(s), the undisturbed run's stages and the victim's bytes per stage.
    fn reached(
        self,
        now: &[BTreeMap<(String, usize), u64>; 2],
        stages: &[usize],
        share: &BTreeMap<usize, u64>,
    ) -> bool {
        let (victim, other) = (&now[0], &now[1]);
        let (first, last) = (stages[0], stages[stages.len() - 1]);
        let last_map = stages[stages.len() - 2];
        let anywhere = |s: usize| stage_bytes(victim, s) + stage_bytes(other, s) > 0;
        let halfway = |s: usize| stage_bytes(victim, s) >= (share[&s] / 2).max(1);
        match self {
            KillPoint::MapWriteBegins => !victim.is_empty() || !other.is_empty(),
            KillPoint::MapWriteHalfway => halfway(first),
            KillPoint::MapWritten => anywhere(stages[1]),
            KillPoint::LastMapHalfway => halfway(last_map),
            KillPoint::FinalBegins => anywhere(last),
            KillPoint::FinalOnVictim => stage_bytes(victim, last) > 0,
        }
    }
}

/// The kill tests' query: counts of units and of rows, a sum and a median per day, at
/// ε = 10⁶ for the counts and the sum (the partials show through the noise, as in the
/// issue's review), under a key fixed by the test.
fn kill_query() -> dpmech_datafusion::GroupedQuery {
    let b = dpmech::statistics::Bounds::new(0.0, 3600.0).unwrap();
    dpmech_datafusion::GroupedQuery::new("visits", "day")
        .public_keys((1..=10).map(|d| d.to_string()))
        .count_units(1e6)
        .count(1e6)
        .sum("duration", b, 1e6)
        .median("duration", b, 1.0)
}

/// A session on `runner` (or one node) over `table` with a budget for a few kill
/// queries.
fn kill_session(
    table: Arc<dyn datafusion::catalog::TableProvider>,
    runner: Option<dpmech_ballista::ClusterRunner>,
) -> dpmech_datafusion::PrivateSession {
    let ctx = datafusion::prelude::SessionContext::new_with_config(
        datafusion::prelude::SessionConfig::new().with_target_partitions(8),
    );
    let accountant = Arc::new(dpmech::Accountant::pure(1e8).unwrap());
    let mut s = dpmech_datafusion::PrivateSession::new(ctx, accountant);
    if let Some(runner) = runner {
        s = s.with_runner(Arc::new(runner));
    }
    s.register_private("visits", table, "user_id", BOUNDS).unwrap();
    s
}

/// The deadline of the kill tests' releases.
const KILL_DEADLINE: Duration = Duration::from_secs(120);

type Snapshot = BTreeMap<(String, usize), u64>;

/// What [`watch`] saw.
struct Watched {
    release: Result<dpmech_datafusion::Release, dpmech_datafusion::DpError>,
    charges: u64,
    took: Duration,
    /// When the victim was killed, and the victim's bytes per stage then.
    killed: Option<(Duration, BTreeMap<usize, u64>)>,
    /// The most bytes seen per stage on each executor (intermediate files are deleted
    /// when a job ends, so they are measured while it runs).
    most: [BTreeMap<usize, u64>; 2],
    /// The jobs seen in the work dirs: one per submission that ran a task.
    jobs: BTreeSet<String>,
}

/// The kill a [`watch`] may make: the victim, the point to kill it at, the undisturbed
/// run's stages and the victim's bytes per stage in that run (see [`KillPoint::reached`]).
type Kill<'a> = (&'a mut Child, KillPoint, &'a [usize], &'a BTreeMap<usize, u64>);

/// Runs `session`'s release of `q` while polling the two executors' work dirs every few
/// milliseconds, and kills `victim` the first time `point` holds.
async fn watch(
    session: dpmech_datafusion::PrivateSession,
    q: &dpmech_datafusion::GroupedQuery,
    salt: u8,
    work: &[PathBuf; 2],
    mut kill: Option<Kill<'_>>,
) -> Watched {
    let query = q.clone();
    let start = Instant::now();
    let run = tokio::spawn(async move {
        let release = session.release_with_key(&query, key(salt)).await;
        (release, session.accountant().charges())
    });
    let mut most = [BTreeMap::new(), BTreeMap::new()];
    let mut jobs = BTreeSet::new();
    let mut killed = None;
    while !run.is_finished() {
        let now: [Snapshot; 2] = [shuffle_bytes(&work[0]), shuffle_bytes(&work[1])];
        for (seen, files) in most.iter_mut().zip(&now) {
            for ((job, stage), bytes) in files {
                jobs.insert(job.clone());
                let m = seen.entry(*stage).or_insert(0);
                *m = (*m).max(*bytes);
            }
        }
        if let Some((victim, point, stages, share)) = &mut kill
            && point.reached(&now, stages, share)
        {
            victim.kill().unwrap();
            let bytes = stages.iter().map(|&s| (s, stage_bytes(&now[0], s))).collect();
            killed = Some((start.elapsed(), bytes));
            kill = None;
        }
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let (release, charges) = run.await.unwrap();
    let took = start.elapsed();
    for w in work {
        jobs.extend(shuffle_bytes(w).into_keys().map(|(job, _)| job));
    }
    Watched {
        release,
        charges,
        took,
        killed,
        most,
        jobs,
    }
}

/// Kills one of two executor processes at each [`KillPoint`] of a release over 2·10⁶
/// CSV rows (a fresh cluster per point) and requires the one-node values, bit for bit,
/// within [`KILL_DEADLINE`], with the budget charged once. On Ballista 55 alone a late
/// kill reports a final partition twice, fails a fetch, or — killed while the bounding
/// stage writes — merges a bounding task's output twice in a job that looks complete
/// (day 1's units 441 against 301 before the check tags); the runner discards such a job
/// (printed with its reason) and resubmits the plan whole (each submission that ran a
/// task leaves a job directory in the work dirs, counted below).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_killed_at_any_point_returns_the_one_node_values_within_its_deadline() {
    let root = std::env::temp_dir().join(format!("dpmech-ballista-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let csv = root.join("visits.csv");
    write_visits_csv(2_000_000, &csv);
    let table = dpmech_ballista::csv_table(csv.to_str().unwrap(), datafusion::prelude::CsvReadOptions::new())
        .await
        .unwrap();
    let q = kill_query();
    let salt = 11;
    let start = Instant::now();
    let one_node = kill_session(table.clone(), None)
        .release_with_key(&q, key(salt))
        .await
        .unwrap();
    println!("one node: {:.2?}", start.elapsed());
    let day_1_units = |r: &dpmech_datafusion::Release| r.rows[0].values[0].value;
    let dirs = |name: &str| -> [PathBuf; 2] {
        let d = [root.join(format!("{name}-0")), root.join(format!("{name}-1"))];
        for x in &d {
            std::fs::create_dir_all(x).unwrap();
        }
        d
    };
    let session_on = |scheduler: SocketAddr| {
        let runner = dpmech_ballista::ClusterRunner::new(&format!("df://{scheduler}"))
            .unwrap()
            .with_deadline(KILL_DEADLINE);
        (kill_session(table.clone(), Some(runner.clone())), runner)
    };

    // An undisturbed run: its stages, the victim's bytes per stage, its time.
    let (stages, share, undisturbed) = {
        let work = dirs("undisturbed");
        let mut processes = Processes(Vec::new());
        let scheduler = start_cluster_in(
            &[Some(work[0].as_path()), Some(work[1].as_path())],
            &mut processes,
        );
        let run = watch(session_on(scheduler).0, &q, salt, &work, None).await;
        assert_eq!(run.release.unwrap(), one_node, "undisturbed");
        let stages: Vec<usize> = run.most[0]
            .keys()
            .chain(run.most[1].keys())
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let share: BTreeMap<usize, u64> = stages
            .iter()
            .map(|&s| (s, run.most[0].get(&s).copied().unwrap_or(0)))
            .collect();
        println!(
            "undisturbed: {:.2?}, stages {stages:?}, bytes per stage {:?} and {:?}, {} job(s)",
            run.took,
            run.most[0],
            run.most[1],
            run.jobs.len()
        );
        (stages, share, run.took)
    };
    assert!(stages.len() >= 3, "two map stages and a final one: {stages:?}");

    let points = [
        KillPoint::MapWriteBegins,
        KillPoint::MapWriteHalfway,
        KillPoint::MapWritten,
        KillPoint::LastMapHalfway,
        KillPoint::FinalBegins,
        KillPoint::FinalOnVictim,
    ];
    // A point that depends on where the scheduler put the tasks (the victim's share of a
    // stage) may not be reached in one run: such a run must still equal one node, and
    // the point is tried again on a fresh cluster, at most `TRIES` times in all.
    const TRIES: usize = 3;
    for (i, point) in points.into_iter().enumerate() {
        let mut reached = false;
        for attempt in 0..TRIES {
            let work = dirs(&format!("kill{i}-{attempt}"));
            let mut processes = Processes(Vec::new());
            let scheduler = start_cluster_in(
                &[Some(work[0].as_path()), Some(work[1].as_path())],
                &mut processes,
            );
            let (session, runner) = session_on(scheduler);
            let run = watch(
                session,
                &q,
                salt,
                &work,
                Some((&mut processes.0[1], point, &stages, &share)),
            )
            .await;
            let release = run.release.unwrap_or_else(|e| panic!("{point:?}: {e}"));
            assert_eq!(release, one_node, "{point:?}");
            assert_eq!(run.charges, 1, "{point:?}");
            assert!(run.took < KILL_DEADLINE, "{point:?}");
            let Some((at, victim)) = run.killed else {
                println!("{point:?}: the release ended before the kill point (attempt {attempt}); again");
                continue;
            };
            println!(
                "{point:?}: killed at {at:.2?} (undisturbed {undisturbed:.2?}; victim's bytes per stage then {victim:?}); \
                 released in {:.2?}, {} job(s) ran; day 1 units {} (one node {}); charges {}; jobs discarded: {:?}",
                run.took,
                run.jobs.len(),
                day_1_units(&release),
                day_1_units(&one_node),
                run.charges,
                runner.discarded_jobs(),
            );
            reached = true;
            break;
        }
        assert!(reached, "{point:?}: not reached in {TRIES} releases");
    }
    let _ = std::fs::remove_dir_all(&root);
}
