//! A Ballista executor that knows dpmech's plan codec (stock executors cannot decode
//! dpmech's bounding operator).
//!
//! ```text
//! cargo run --release -p dpmech-ballista --bin dpmech-ballista-executor -- \
//!     --scheduler 127.0.0.1:50050 --port 50051 --grpc-port 50052
//! ```
//!
//! Options: `--scheduler host:port` (default `127.0.0.1:50050`), `--host` (to bind and
//! advertise, default `127.0.0.1`), `--port` (Arrow Flight, default 50051),
//! `--grpc-port` (default 50052), `--slots` (concurrent tasks, default 2), `--work-dir`
//! (where shuffle files are written, default a new temporary directory).

use dpmech_ballista::{ClusterOptions, ExecutorAddresses, run_executor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut addresses = ExecutorAddresses {
        host: "127.0.0.1".into(),
        flight_port: 50051,
        grpc_port: 50052,
        scheduler_host: "127.0.0.1".into(),
        scheduler_port: 50050,
    };
    let mut options = ClusterOptions::default();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--scheduler" => {
                let (host, port) = value.rsplit_once(':').ok_or("--scheduler host:port")?;
                addresses.scheduler_host = host.to_string();
                addresses.scheduler_port = port.parse()?;
            }
            "--host" => addresses.host = value,
            "--port" => addresses.flight_port = value.parse()?,
            "--grpc-port" => addresses.grpc_port = value.parse()?,
            "--slots" => options.slots = value.parse()?,
            "--work-dir" => options.work_dir = Some(value),
            _ => {
                return Err(format!(
                    "unknown option {flag} (--scheduler, --host, --port, --grpc-port, --slots, --work-dir)"
                )
                .into());
            }
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(32 * 1024 * 1024)
        .build()?;
    println!(
        "dpmech-ballista executor on {}:{} serving {}:{}",
        addresses.host, addresses.flight_port, addresses.scheduler_host, addresses.scheduler_port
    );
    runtime.block_on(run_executor(addresses, &options))?;
    Ok(())
}
