//! The visits table (10⁷ rows) released on a Ballista cluster: the per-day private
//! counts and means of `dpmech-datafusion`'s `visits` example, computed by the cluster's
//! executors, next to the same release on one node (same key: the same values) and the
//! plain `GROUP BY` on the same cluster.
//!
//! ```text
//! cargo run --example visits_cluster                                  # an embedded cluster: a scheduler and 2 executors in this process
//! cargo run --example visits_cluster -- --scheduler df://127.0.0.1:50050   # a running cluster (README, "On a cluster")
//! ```
//!
//! (From the repository root. The dev profile already optimises every dependency and
//! the SQL crate, so it reuses the tests' build; `--release` works too, after a second
//! build of DataFusion and Ballista.)

use std::sync::Arc;
use std::time::Instant;

use datafusion::prelude::{CsvReadOptions, SessionConfig, SessionContext};
use dpmech::Accountant;
use dpmech_ballista::{ClusterRunner, EmbeddedCluster};
use dpmech_datafusion::{ContributionBounds, PlanRunner, PrivateSession, Release, ReleaseKey};

#[path = "../../dpmech-datafusion/examples/shared/visits_table.rs"]
mod visits_table;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut scheduler = None;
    let mut executors = 2;
    let mut repetitions = 5;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match (flag.as_str(), args.next()) {
            ("--scheduler", Some(url)) => scheduler = Some(url),
            ("--executors", Some(n)) => executors = n.parse()?,
            ("--repetitions", Some(n)) if n.parse::<usize>().is_ok_and(|n| n > 0) => {
                repetitions = n.parse()?
            }
            _ => {
                return Err(
                    "usage: visits_cluster [--scheduler df://host:port | --executors N] [--repetitions N]"
                        .into(),
                );
            }
        }
    }
    let path = visits_table::visits_csv()?;
    let path = path.to_str().ok_or("a UTF-8 path")?;
    let url = match scheduler {
        Some(url) => url,
        None => {
            // Its scheduler and executors run on this runtime until the example ends.
            let cluster = EmbeddedCluster::start(executors).await?;
            println!(
                "embedded cluster: a scheduler and {executors} executors at {}",
                cluster.url()
            );
            cluster.url()
        }
    };
    let config = SessionConfig::new();
    let visits = dpmech_ballista::csv_table(path, CsvReadOptions::new()).await?;
    let bounds = ContributionBounds {
        max_groups: 3,
        max_rows_per_group: 2,
    };
    let days: Vec<String> = (1..=30).map(|d| d.to_string()).collect();
    let per_day = format!(
        "SELECT day, dp_count(0.5), dp_mean(duration, 0, 3600, 0.5) FROM visits WHERE day IN ({}) GROUP BY day",
        days.join(", ")
    );
    // One key for every run, to show they release the same values. (A deployment
    // releases once per key; recomputing with the same key releases nothing new.) Each
    // timed repetition is charged: the budgets cover them.
    let key = ReleaseKey::from_os()?;
    let budget = || Accountant::pure(repetitions as f64);
    let mut cluster = dpmech_ballista::private_session(&url, config.clone(), Arc::new(budget()?))?;
    cluster.register_private("visits", visits.clone(), "user_id", bounds)?;
    let mut one_node = PrivateSession::new(
        SessionContext::new_with_config(config.clone()),
        Arc::new(budget()?),
    );
    one_node.register_private("visits", visits.clone(), "user_id", bounds)?;
    // The plain GROUP BY, planned here and run on the same cluster by the same runner.
    let ctx = SessionContext::new_with_config(config);
    ctx.register_table("visits", visits)?;
    let plain = ctx
        .sql("SELECT day, COUNT(*), AVG(duration) FROM visits GROUP BY day")
        .await?
        .create_physical_plan()
        .await?;
    let runner = ClusterRunner::new(&url)?;

    // The three runs, interleaved in a rotating order so that no one always runs first
    // (cold caches) or last; medians over the repetitions.
    let (mut on_cluster, mut on_one_node, mut truth) = (None, None, Vec::new());
    let mut seconds = [Vec::new(), Vec::new(), Vec::new()];
    for repetition in 0..repetitions {
        for run in (0..3).map(|i| (i + repetition) % 3) {
            let start = Instant::now();
            match run {
                0 => truth = runner.collect(plain.clone(), &ctx.state()).await?,
                1 => on_cluster = Some(release(&cluster, &per_day, &key).await?),
                _ => on_one_node = Some(release(&one_node, &per_day, &key).await?),
            }
            seconds[run].push(start.elapsed().as_secs_f64());
        }
    }
    let [plain_seconds, cluster_seconds, node_seconds] = seconds.map(median);
    let (on_cluster, on_one_node) = (on_cluster.ok_or("no run")?, on_one_node.ok_or("no run")?);
    let truth = datafusion::arrow::util::pretty::pretty_format_batches(&truth)?.to_string();

    println!("\n{per_day}\n({})\n", on_cluster.loss);
    println!(
        "{:>4} {:>12} {:>12} | {:>10} {:>10}",
        "day", "DP count", "one node", "DP mean", "one node"
    );
    for (c, n) in on_cluster.rows.iter().zip(&on_one_node.rows).take(8) {
        println!(
            "{:>4} {:>12.0} {:>12.0} | {:>10.1} {:>10.1}",
            c.key.clone().unwrap_or_default(),
            c.values[0].value,
            n.values[0].value,
            c.values[1].value,
            n.values[1].value
        );
    }
    println!("  … ({} days)", on_cluster.rows.len());
    println!(
        "cluster and one node released {} values",
        if on_cluster.rows == on_one_node.rows {
            "bit-identical"
        } else {
            "DIFFERENT"
        }
    );
    println!("\nthe plain GROUP BY on the cluster (first lines):");
    for line in truth.lines().take(6) {
        println!("  {line}");
    }
    println!(
        "\nTime (medians of {repetitions} interleaved runs): plain GROUP BY on the cluster {plain_seconds:.2} s; \
         DP release on the cluster {cluster_seconds:.2} s (ratio {:.2}×); DP release on one node {node_seconds:.2} s.",
        cluster_seconds / plain_seconds
    );
    Ok(())
}

/// The release of `query` by `session` under `key`.
async fn release(
    session: &PrivateSession,
    query: &str,
    key: &ReleaseKey,
) -> Result<Release, dpmech_datafusion::DpError> {
    session
        .release_with_key(&session.plan_sql(query).await?, key.clone())
        .await
}

/// The median of `values` (the mean of the middle two for an even count).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (values[(n - 1) / 2] + values[n / 2]) / 2.0
}
