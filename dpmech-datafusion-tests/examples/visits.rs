//! Private SQL on a generated table of 10⁷ page visits by 10⁶ users over 30 days:
//! contribution bounds suggested from the data, with the rows bounding drops before and
//! after; per-day counts and mean durations with public days (SQL text), beside the
//! bounded truth (what the DP values estimate) and the raw truth; per-day median, 90th
//! percentile and standard deviation of the duration and counts of users; a day ×
//! country breakdown; private bounds of the duration; and the most visited pages with
//! private keys (partition selection; DataFusion's DataFrame API) — next to the true
//! values and the non-private GROUP BY of the same run; the time of `dp_median` per day
//! on grids of 256, 2¹⁶ and 2²⁰ bins beside DataFusion's exact `median()`.
//!
//! ```text
//! cargo run --example visits   (from the repository root; `-p` would select other features and rebuild DataFusion)
//! ```
//!
//! The table is written once as CSV to `target/visits-by-country.csv` (≈ 280 MB).

use std::sync::Arc;
use std::time::Instant;

use datafusion::arrow::array::{Array, Float64Array, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::prelude::*;
use dpmech::Accountant;
use dpmech::statistics::ContributionBoundsSuggester;
use dpmech_datafusion::functions::{dp_count, dp_partition_selection};
use dpmech_datafusion::{ContributionBounds, PrivateSession, ReleaseKey};

#[path = "../../dpmech-datafusion/examples/shared/visits_table.rs"]
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
    let budget = Arc::new(Accountant::approximate(10.0, 1e-6)?);
    let raw = ctx.clone(); // the raw table, for the true values
    let mut session = PrivateSession::new(ctx, budget.clone());
    let bounds = ContributionBounds {
        max_groups: 3,
        max_rows_per_group: 2,
    };
    session.register_private("visits", provider.clone(), "user_id", bounds)?;

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
    let suggested_bounds = ContributionBounds {
        max_groups: u32::try_from(suggested.l0.max(1))?,
        max_rows_per_group: u32::try_from(suggested.linf.max(1))?,
    };
    session.register_private("visits_suggested", provider.clone(), "user_id", suggested_bounds)?;

    // The bounded truth — what a DP value estimates — is the release's own bounded rows,
    // which its key chooses: the example reads it by running the same query with the
    // same key at ε = 10⁶ per aggregate on an unlimited budget (noise below 10⁻⁵).
    // NOT private: the example's look behind the curtain, like the raw values.
    let mut truth = PrivateSession::new(raw.clone(), Arc::new(Accountant::pure(1e12)?));
    truth.register_private("visits", provider.clone(), "user_id", bounds)?;
    truth.register_private("visits_suggested", provider, "user_id", suggested_bounds)?;

    // The release as SQL text: the 30 days are public keys (every one is released).
    let days: Vec<String> = (1..=30).map(|d| d.to_string()).collect();
    let per_day = format!(
        "SELECT day, dp_count(0.5), dp_mean(duration, 0, 3600, 0.5) FROM visits \
         WHERE day IN ({}) GROUP BY day",
        days.join(", ")
    );
    println!("\n{per_day}");
    let key = ReleaseKey::from_os()?;
    let start = Instant::now();
    let release = session
        .release_with_key(&session.plan_sql(&per_day).await?, key.clone())
        .await?;
    let dp_seconds = start.elapsed().as_secs_f64();
    let counts_of = |table: &str, filter: &str, group: &str| {
        format!("SELECT {group}, dp_count(1e6) FROM {table} WHERE {filter} GROUP BY {group}")
    };
    let all_days = format!("day IN ({})", days.join(", "));
    let kept = bounded_truth(&truth, &counts_of("visits", &all_days, "day"), &key).await?;

    // The share of rows bounding drops, with the example's bounds and the suggested ones.
    let suggested_key = ReleaseKey::from_os()?;
    let kept_suggested = bounded_truth(
        &truth,
        &counts_of("visits_suggested", &all_days, "day"),
        &suggested_key,
    )
    .await?;
    let total: i64 = true_values.values().map(|v| v.0).sum();
    for (label, b, k) in [
        ("this example's", bounds, &kept),
        ("the suggested", suggested_bounds, &kept_suggested),
    ] {
        let rows: i64 = k.values().sum();
        println!(
            "  With {label} bounds ({} days × {} visits), bounding keeps {rows} of {total} rows: it drops {:.1} %.",
            b.max_groups,
            b.max_rows_per_group,
            100.0 * (1.0 - rows as f64 / total as f64)
        );
    }

    println!(
        "\nVisits per day, each user bounded to {} days × {} visits ({}), public days:",
        bounds.max_groups, bounds.max_rows_per_group, release.loss
    );
    println!(
        "{:>4} {:>10} {:>18} {:>10} {:>10} | {:>8} {:>20} {:>8}",
        "day", "DP count", "95% interval", "bounded", "raw count", "DP mean", "95% interval", "raw mean"
    );
    for row in release.rows.iter().take(8) {
        let key = row.key.clone().unwrap_or_default();
        let (n, mean) = true_values.get(&key).copied().unwrap_or((0, f64::NAN));
        let (c, m) = (&row.values[0], &row.values[1]);
        println!(
            "{key:>4} {:>10.0} [{:>7.0}, {:>7.0}] {:>10} {n:>10} | {:>8.1} [{:>8.1}, {:>8.1}] {mean:>8.1}",
            c.value,
            c.interval.0,
            c.interval.1,
            kept.get(&key).copied().unwrap_or(0),
            m.value,
            m.interval.0,
            m.interval.1
        );
    }
    println!(
        "  … ({} days). The DP count estimates the bounded count (its interval is about it); \
         the raw count also holds the visits bounding drops.",
        release.rows.len()
    );

    // The same counts with the suggested bounds: more rows kept, more noise per cell.
    let suggested_release = session
        .release_with_key(
            &session
                .plan_sql(&format!(
                    "SELECT day, dp_count(0.5) FROM visits_suggested WHERE day IN ({}) GROUP BY day",
                    days.join(", ")
                ))
                .await?,
            suggested_key,
        )
        .await?;
    println!(
        "\nVisits per day with the suggested bounds ({} days × {} visits, {}):",
        suggested_bounds.max_groups, suggested_bounds.max_rows_per_group, suggested_release.loss
    );
    println!(
        "{:>4} {:>10} {:>18} {:>10} {:>10}",
        "day", "DP count", "95% interval", "bounded", "raw count"
    );
    for row in suggested_release.rows.iter().take(4) {
        let key = row.key.clone().unwrap_or_default();
        let c = &row.values[0];
        println!(
            "{key:>4} {:>10.0} [{:>7.0}, {:>7.0}] {:>10} {:>10}",
            c.value,
            c.interval.0,
            c.interval.1,
            kept_suggested.get(&key).copied().unwrap_or(0),
            true_values.get(&key).map_or(0, |v| v.0)
        );
    }

    // Quantiles and people per day (ε = 0.5 each), beside the true values of the raw
    // table, and the time of the DP median beside DataFusion's exact median().
    let spread = format!(
        "SELECT day, dp_median(duration, 0, 3600, 0.5), dp_quantile(duration, 0, 3600, 0.9, 0.5), \
         dp_count_units(0.5), dp_stddev(duration, 0, 3600, 0.5) FROM visits WHERE day IN ({}) GROUP BY day",
        days.join(", ")
    );
    println!("\n{spread}");
    let quantiles = session.sql(&spread).await?;
    // The grouped median alone, private and not, timed in the same run: on the default
    // grid (256 bins) and on the finer grids a large group needs (a bin of 2²⁰ over
    // [0, 3600] is 3.4 ms wide).
    let mut dp_median_seconds = Vec::new();
    for bins in [256u32, 1 << 16, 1 << 20] {
        let start = Instant::now();
        session
            .sql(&format!(
                "SELECT day, dp_median(duration, 0, 3600, 0.5, {bins}) FROM visits WHERE day IN ({}) GROUP BY day",
                days.join(", ")
            ))
            .await?;
        dp_median_seconds.push((bins, start.elapsed().as_secs_f64()));
    }
    let start = Instant::now();
    raw.sql("SELECT day, median(duration) FROM visits_raw GROUP BY day")
        .await?
        .collect()
        .await?;
    let median_seconds = start.elapsed().as_secs_f64();
    let exact = raw
        .sql(
            "SELECT day, median(duration), approx_percentile_cont(duration, 0.9), \
             COUNT(DISTINCT user_id), stddev_pop(duration) FROM visits_raw GROUP BY day",
        )
        .await?
        .collect()
        .await?;
    let mut true_spread = std::collections::HashMap::new();
    for batch in &exact {
        let column = |i: usize| cast(batch.column(i), &DataType::Float64);
        let (day, median, p90, users, sd) = (column(0)?, column(1)?, column(2)?, column(3)?, column(4)?);
        let f = |a: &Arc<dyn Array>, i: usize| {
            a.as_any()
                .downcast_ref::<Float64Array>()
                .expect("Float64")
                .value(i)
        };
        for i in 0..batch.num_rows() {
            true_spread.insert(
                (f(&day, i) as i64).to_string(),
                (f(&median, i), f(&p90, i), f(&users, i), f(&sd, i)),
            );
        }
    }
    println!(
        "\nDuration quantiles and users per day ({}; a user counts in at most {} days):",
        quantiles.loss, bounds.max_groups
    );
    println!(
        "{:>4} {:>9} {:>9} | {:>9} {:>11} | {:>9} {:>9} | {:>9} {:>17} {:>9}",
        "day", "DP median", "median", "DP p90", "p90 (≈)", "DP users", "users", "DP sd", "95% interval", "sd"
    );
    for row in quantiles.rows.iter().take(8) {
        let key = row.key.clone().unwrap_or_default();
        let (median, p90, users, sd) =
            true_spread
                .get(&key)
                .copied()
                .unwrap_or((f64::NAN, f64::NAN, f64::NAN, f64::NAN));
        let sd_dp = &row.values[3];
        println!(
            "{key:>4} {:>9.1} {median:>9.1} | {:>9.1} {p90:>11.1} | {:>9.0} {users:>9.0} | {:>9.1} [{:>6.1}, {:>6.1}] {sd:>9.1}",
            row.values[0].value,
            row.values[1].value,
            row.values[2].value,
            sd_dp.value,
            sd_dp.interval.0,
            sd_dp.interval.1
        );
    }
    println!(
        "  … Quantiles are edges of 256 bins of 14.1 s; the true users include the days \
         bounding drops (each user visits 5 days); the DP standard deviation reads a \
         missing duration as 1800 s, the true one skips it."
    );

    // Two grouping columns: a cell per (day, country) of the public keys' cross-product.
    let countries: Vec<String> = visits_table::COUNTRIES.iter().map(|c| format!("'{c}'")).collect();
    let by_country = format!(
        "SELECT day, country, dp_count(0.5), dp_count_units(0.5) FROM visits \
         WHERE day IN (1, 2) AND country IN ({}) GROUP BY day, country",
        countries.join(", ")
    );
    println!("\n{by_country}");
    let country_key = ReleaseKey::from_os()?;
    let cells = session
        .release_with_key(&session.plan_sql(&by_country).await?, country_key.clone())
        .await?;
    let exact = raw
        .sql(
            "SELECT day, country, COUNT(*), COUNT(DISTINCT user_id) FROM visits_raw \
             WHERE day IN (1, 2) GROUP BY day, country",
        )
        .await?
        .collect()
        .await?;
    let mut true_cells = std::collections::HashMap::new();
    for batch in &exact {
        let text = |i: usize| cast(batch.column(i), &DataType::Utf8);
        let (day, country) = (text(0)?, text(1)?);
        let (rows, users) = (
            cast(batch.column(2), &DataType::Int64)?,
            cast(batch.column(3), &DataType::Int64)?,
        );
        let s = |a: &Arc<dyn Array>, i: usize| {
            a.as_any()
                .downcast_ref::<datafusion::arrow::array::StringArray>()
                .expect("Utf8")
                .value(i)
                .to_string()
        };
        let n =
            |a: &Arc<dyn Array>, i: usize| a.as_any().downcast_ref::<Int64Array>().expect("Int64").value(i);
        for i in 0..batch.num_rows() {
            true_cells.insert(
                format!("({}, {})", s(&day, i), s(&country, i)),
                (n(&rows, i), n(&users, i)),
            );
        }
    }
    println!("\nVisits and users per day and country ({}):", cells.loss);
    println!(
        "{:>9} {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9}",
        "cell", "DP rows", "bounded", "raw rows", "DP users", "±95%", "users"
    );
    let kept_cells = bounded_truth(
        &truth,
        &format!(
            "SELECT day, country, dp_count(1e6) FROM visits \
             WHERE day IN (1, 2) AND country IN ({}) GROUP BY day, country",
            countries.join(", ")
        ),
        &country_key,
    )
    .await?;
    for row in &cells.rows {
        let key = row.key.clone().unwrap_or_default();
        let (rows, users) = true_cells.get(&key).copied().unwrap_or((0, 0));
        let (c, u) = (&row.values[0], &row.values[1]);
        println!(
            "{key:>9} {:>9.0} {:>9} {rows:>9} | {:>9.0} {:>9.0} {users:>9}",
            c.value,
            kept_cells.get(&key).copied().unwrap_or(0),
            u.value,
            u.value - u.interval.0
        );
    }

    // Private bounds of the duration over the whole table (one cell), for an analyst who
    // would not know to clamp it to [0, 3600].
    let range = session
        .sql("SELECT dp_bounds(duration, 0.25) FROM visits")
        .await?;
    let (lower, upper) = (&range.rows[0].values[0], &range.rows[0].values[1]);
    println!(
        "\nPrivate bounds of the duration ({}): [{}, {}] — signed powers of two that hold \
         all but the sparse tail (the raw durations lie in [0, {:.0}]).",
        range.loss,
        lower.value,
        upper.value,
        max_duration(&raw).await?
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
    println!("Time: DataFusion's median() per day {median_seconds:.2} s; dp_median per day:");
    for (bins, seconds) in dp_median_seconds {
        println!(
            "  {bins:>8} bins {seconds:.2} s (ratio {:.1}×)",
            seconds / median_seconds
        );
    }
    println!("Budget: spent {}, left {}.", budget.spent(), budget.remaining());
    Ok(())
}

/// The bounded truth of a count query (`dp_count(1e6)` as its one aggregate), released
/// with the key of the private release it stands beside, so bounding keeps the same rows;
/// at ε = 10⁶ the noise is below 10⁻⁵, so the rounded values are the exact bounded
/// counts. Not private: the example's look at the raw table.
async fn bounded_truth(
    truth: &PrivateSession,
    sql: &str,
    key: &ReleaseKey,
) -> Result<std::collections::HashMap<String, i64>, Box<dyn std::error::Error>> {
    let release = truth
        .release_with_key(&truth.plan_sql(sql).await?, key.clone())
        .await?;
    Ok(release
        .rows
        .iter()
        .map(|row| {
            (
                row.key.clone().unwrap_or_default(),
                row.values[0].value.round() as i64,
            )
        })
        .collect())
}

/// The largest raw duration.
async fn max_duration(raw: &SessionContext) -> Result<f64, Box<dyn std::error::Error>> {
    let batches = raw
        .sql("SELECT MAX(duration) FROM visits_raw")
        .await?
        .collect()
        .await?;
    let max = cast(batches[0].column(0), &DataType::Float64)?;
    Ok(max
        .as_any()
        .downcast_ref::<Float64Array>()
        .expect("Float64")
        .value(0))
}
