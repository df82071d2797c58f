//! A Ballista scheduler that knows dpmech's plan codec.
//!
//! ```text
//! cargo run --release -p dpmech-ballista --bin dpmech-ballista-scheduler -- --bind 127.0.0.1:50050
//! ```
//!
//! Options: `--bind host:port` (default `127.0.0.1:50050`), `--executor-timeout-seconds N`
//! (default 10: an executor silent this long is declared lost and its tasks rerun).

use std::net::SocketAddr;
use std::time::Duration;

use dpmech_ballista::{ClusterOptions, run_scheduler};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut bind: SocketAddr = "127.0.0.1:50050".parse()?;
    let mut options = ClusterOptions::default();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--bind" => bind = value.parse()?,
            "--executor-timeout-seconds" => options.executor_timeout = Duration::from_secs(value.parse()?),
            _ => return Err(format!("unknown option {flag} (--bind, --executor-timeout-seconds)").into()),
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(32 * 1024 * 1024)
        .build()?;
    println!("dpmech-ballista scheduler listening on {bind}");
    runtime.block_on(run_scheduler(bind, &options))?;
    Ok(())
}
