//! Private SQL on a generated table of 10⁷ page visits by 10⁶ users over 30 days:
//! per-day counts and mean durations with public days (SQL text); per-day median and
//! 90th percentile of the duration and counts of users; and the most visited pages with
//! private keys (partition selection; DataFusion's DataFrame API) — next to the true
//! values and the non-private GROUP BY of the same run.
//!
//! ```text
//! cargo run --example visits   (from the repository root; `-p` would select other features and rebuild DataFusion)
//! ```
//!
//! The table is written once as CSV to `target/visits.csv` (≈ 250 MB).

use std::sync::Arc;
use std::time::Instant;

use datafusion::arrow::array::{Array, Float64Array, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::prelude::*;
use dpmech::Accountant;
use dpmech::statistics::ContributionBoundsSuggester;
use dpmech_datafusion::functions::{dp_count, dp_partition_selection};
use dpmech_datafusion::{ContributionBounds, PrivateSession};

#[path = "shared/visits_table.rs"]
mod visits_table;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = visits_table::visits_csv()?;
    let ctx = SessionContext::new();
    ctx.register_csv(
        "visits_raw",
        path.to_str().expect("utf-8 path"),
        CsvReadOptions::new(),
    )
    .await?;

    // The non-private query, for the true values and the overhead ratio.
    let start = Instant::now();
    let truth = ctx
        .sql("SELECT day, COUNT(*) AS n, AVG(duration) AS mean FROM visits_raw GROUP BY day ORDER BY day")
        .await?
        .collect()
        .await?;
    let plain_seconds = start.elapsed().as_secs_f64();
    let mut true_values = std::collections::HashMap::new();
    for batch in &truth {
        let day = cast(batch.column(0), &DataType::Int64)?;
        let day = day.as_any().downcast_ref::<Int64Array>().expect("Int64");
        let n = cast(batch.column(1), &DataType::Int64)?;
        let n = n.as_any().downcast_ref::<Int64Array>().expect("Int64");
        let mean = batch
            .column(2)
            .as_any()
            .downcast_ref::<Float64Array>()
            .expect("Float64");
        for i in 0..batch.num_rows() {
            true_values.insert(day.value(i).to_string(), (n.value(i), mean.value(i)));
        }
    }

    let provider = ctx.table_provider("visits_raw").await?;
    let budget = Arc::new(Accountant::approximate(5.0, 1e-6)?);
    let raw = ctx.clone(); // the raw table, for the true values
    let mut session = PrivateSession::new(ctx, budget.clone());
    let bounds = ContributionBounds {
        max_groups: 3,
        max_rows_per_group: 2,
    };
    session.register_private("visits", provider, "user_id", bounds)?;

    // What bounds would the data suggest? L0 and L∞ as DP 0.9-quantiles of the days per
    // user and the visits per (user, day), at ε = 0.5 of the budget.
    let suggester = ContributionBoundsSuggester::new(30, 20)?.quantile(0.9)?;
    let start = Instant::now();
    let suggested = session
        .suggest_contribution_bounds("visits", &["day"], &suggester, 0.5)
        .await?;
    println!(
        "\nSuggested contribution bounds (ε = 0.5, 0.9-quantiles, {:.1} s): L0 = {} days, L∞ = {} visits \
         per day; this example bounds to {} × {} (fewer rows kept, less noise).",
        start.elapsed().as_secs_f64(),
        suggested.l0,
        suggested.linf,
        bounds.max_groups,
        bounds.max_rows_per_group
    );

    // The release as SQL text: the 30 days are public keys (every one is released).
    let days: Vec<String> = (1..=30).map(|d| d.to_string()).collect();
    let per_day = format!(
        "SELECT day, dp_count(0.5), dp_mean(duration, 0, 3600, 0.5) FROM visits \
         WHERE day IN ({}) GROUP BY day",
        days.join(", ")
    );
    println!("\n{per_day}");
    let start = Instant::now();
    let release = session.sql(&per_day).await?;
    let dp_seconds = start.elapsed().as_secs_f64();
    println!(
        "\nVisits per day, each user bounded to {} days × {} visits ({}), public days:",
        bounds.max_groups, bounds.max_rows_per_group, release.loss
    );
    println!(
        "{:>4} {:>10} {:>18} {:>10} | {:>8} {:>20} {:>8}",
        "day", "DP count", "95% interval", "raw count", "DP mean", "95% interval", "raw mean"
    );
    for row in release.rows.iter().take(8) {
        let key = row.key.clone().unwrap_or_default();
        let (n, mean) = true_values.get(&key).copied().unwrap_or((0, f64::NAN));
        let (c, m) = (&row.values[0], &row.values[1]);
        println!(
            "{key:>4} {:>10.0} [{:>7.0}, {:>7.0}] {n:>10} | {:>8.1} [{:>8.1}, {:>8.1}] {mean:>8.1}",
            c.value, c.interval.0, c.interval.1, m.value, m.interval.0, m.interval.1
        );
    }
    println!(
        "  … ({} days). Raw counts include the visits bounding drops (at most 6 per user).",
        release.rows.len()
    );

    // Quantiles and people per day (ε = 0.5 each), beside the true values of the raw
    // table, and the time of the DP median beside DataFusion's exact median().
    let spread = format!(
        "SELECT day, dp_median(duration, 0, 3600, 0.5), dp_quantile(duration, 0, 3600, 0.9, 0.5), \
         dp_count_units(0.5) FROM visits WHERE day IN ({}) GROUP BY day",
        days.join(", ")
    );
    println!("\n{spread}");
    let quantiles = session.sql(&spread).await?;
    // The grouped median alone, private and not, timed in the same run.
    let start = Instant::now();
    session
        .sql(&format!(
            "SELECT day, dp_median(duration, 0, 3600, 0.5) FROM visits WHERE day IN ({}) GROUP BY day",
            days.join(", ")
        ))
        .await?;
    let dp_median_seconds = start.elapsed().as_secs_f64();
    let start = Instant::now();
    raw.sql("SELECT day, median(duration) FROM visits_raw GROUP BY day")
        .await?
        .collect()
        .await?;
    let median_seconds = start.elapsed().as_secs_f64();
    let exact = raw
        .sql(
            "SELECT day, median(duration), approx_percentile_cont(duration, 0.9), \
             COUNT(DISTINCT user_id) FROM visits_raw GROUP BY day",
        )
        .await?
        .collect()
        .await?;
    let mut true_spread = std::collections::HashMap::new();
    for batch in &exact {
        let column = |i: usize| cast(batch.column(i), &DataType::Float64);
        let (day, median, p90, users) = (column(0)?, column(1)?, column(2)?, column(3)?);
        let f = |a: &Arc<dyn Array>, i: usize| {
            a.as_any()
                .downcast_ref::<Float64Array>()
                .expect("Float64")
                .value(i)
        };
        for i in 0..batch.num_rows() {
            true_spread.insert(
                (f(&day, i) as i64).to_string(),
                (f(&median, i), f(&p90, i), f(&users, i)),
            );
        }
    }
    println!(
        "\nDuration quantiles and users per day ({}; a user counts in at most {} days):",
        quantiles.loss, bounds.max_groups
    );
    println!(
        "{:>4} {:>9} {:>9} | {:>9} {:>11} | {:>9} {:>9}",
        "day", "DP median", "median", "DP p90", "p90 (≈)", "DP users", "users"
    );
    for row in quantiles.rows.iter().take(8) {
        let key = row.key.clone().unwrap_or_default();
        let (median, p90, users) = true_spread
            .get(&key)
            .copied()
            .unwrap_or((f64::NAN, f64::NAN, f64::NAN));
        println!(
            "{key:>4} {:>9.1} {median:>9.1} | {:>9.1} {p90:>11.1} | {:>9.0} {users:>9.0}",
            row.values[0].value, row.values[1].value, row.values[2].value
        );
    }
    println!(
        "  … Quantiles are edges of 256 bins of 14.1 s; the true users include the days \
         bounding drops (each user visits 5 days)."
    );

    // Through DataFusion's DataFrame API with the dp_ aggregate UDFs; keys found in the
    // data, (ε, δ) partition selection.
    let pages = session.table("visits").await?.aggregate(
        vec![col("page")],
        vec![dp_count(0.5), dp_partition_selection(0.5, 1e-6)],
    )?;
    let start = Instant::now();
    let popular = session.release_frame(pages).await?;
    let pages_seconds = start.elapsed().as_secs_f64();
    println!(
        "\nPages with private keys ({}): {} released (keys held by few users are suppressed); the top ones:",
        popular.loss,
        popular.rows.len()
    );
    let mut top = popular.rows.clone();
    top.sort_by(|a, b| b.values[0].value.total_cmp(&a.values[0].value));
    for row in top.iter().take(5) {
        println!(
            "  page {:>6}: {:>9.0} visits (±{:.0})",
            row.key.clone().unwrap_or_default(),
            row.values[0].value,
            row.values[0].value - row.values[0].interval.0
        );
    }

    println!(
        "\nTime: non-private GROUP BY {plain_seconds:.2} s; DP per-day release {dp_seconds:.2} s (ratio {:.1}×); DP pages {pages_seconds:.2} s.",
        dp_seconds / plain_seconds
    );
    println!(
        "Time: DataFusion's median() per day {median_seconds:.2} s; dp_median per day {dp_median_seconds:.2} s (ratio {:.1}×).",
        dp_median_seconds / median_seconds
    );
    println!("Budget: spent {}, left {}.", budget.spent(), budget.remaining());
    Ok(())
}
