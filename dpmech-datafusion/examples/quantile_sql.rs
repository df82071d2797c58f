//! dpmech's SQL side of the quantile accuracy comparison with OpenDP
//! (`benches/compare/quantiles_opendp.py --side sql` runs it and prints both sides).
//!
//! Reads raw little-endian `f64` records from the file given; for its first 10⁶ and
//! first 10³ records (one record per privacy unit, L0 = L∞ = 1, no `GROUP BY`: one
//! cell), ε ∈ {1, 0.1}, releases `dp_median` and `dp_quantile(…, 0.9, …)` over
//! `[0, 3600]` with `BINS` bins through SQL, `RELEASES` times (`SMALL` times for 10³),
//! and prints one JSON line per (n, ε, q): the median (and mean) absolute error in ranks
//! (distance from q·n to the released value's rank interval) and in seconds (to the
//! exact quantile `x₍⌈qn⌉₎`). Then the time of one release of `dp_median` beside
//! DataFusion's exact `median()` of the same table and a plain `GROUP BY` of the rows by
//! unit, the floor of any release bounded per unit (median of 9 runs each).
//!
//! ```text
//! cargo run --profile test --features dpmech-datafusion/compare --example quantile_sql -- /tmp/dpmech_durations.f64 40 200 65536
//! ```

use std::sync::Arc;
use std::time::Instant;

use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use dpmech::Accountant;
use dpmech_datafusion::{ContributionBounds, PrivateSession};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// `(user_id, duration)`, one row per user, in 8 batches.
fn table(data: &[f64]) -> Result<Arc<MemTable>, Box<dyn std::error::Error>> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("user_id", DataType::Int64, false),
        Field::new("duration", DataType::Float64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..data.len() as i64)),
        Arc::new(Float64Array::from(data.to_vec())),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    let step = data.len().div_ceil(8).max(1);
    let parts: Vec<Vec<RecordBatch>> = (0..data.len())
        .step_by(step)
        .map(|start| vec![batch.slice(start, step.min(data.len() - start))])
        .collect();
    Ok(Arc::new(MemTable::try_new(schema, parts)?))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: quantile_sql DATA [RELEASES [SMALL [BINS]]]")?;
    let releases: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(40);
    let small: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(200);
    let bins: usize = args.get(4).map(|s| s.parse()).transpose()?.unwrap_or(65536);
    let bytes = std::fs::read(path)?;
    let all: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    let bounds = ContributionBounds {
        max_groups: 1,
        max_rows_per_group: 1,
    };
    for (data, count) in [
        (&all[..all.len().min(1_000_000)], releases),
        (&all[..all.len().min(1000)], small),
    ] {
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
        let mut session = PrivateSession::new(ctx.clone(), Arc::new(Accountant::pure(1e12)?));
        let provider = table(data)?;
        session.register_private("visits", provider.clone(), "user_id", bounds)?;
        ctx.register_table("visits_raw", provider)?;
        let mut sorted: Vec<f64> = data.iter().map(|x| x.clamp(0.0, 3600.0)).collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len() as f64;
        for epsilon in [1.0, 0.1] {
            let sql = format!(
                "SELECT dp_median(duration, 0, 3600, {epsilon:?}, {bins}), \
                 dp_quantile(duration, 0, 3600, 0.9, {epsilon:?}, {bins}) FROM visits"
            );
            let mut released: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            for _ in 0..count {
                let release = session.sql(&sql).await?;
                for (j, out) in released.iter_mut().enumerate() {
                    out.push(release.rows[0].values[j].value);
                }
            }
            for (q, values) in [0.5, 0.9].into_iter().zip(released) {
                let target = q * n;
                let truth = sorted[((target.ceil() as usize).max(1)) - 1];
                let (mut ranks, mut seconds) = (Vec::new(), Vec::new());
                for v in values {
                    let below = sorted.partition_point(|&x| x < v) as f64;
                    let at_most = sorted.partition_point(|&x| x <= v) as f64;
                    ranks.push((below - target).max(target - at_most).max(0.0));
                    seconds.push((v - truth).abs());
                }
                let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
                let (rank_mean, seconds_mean) = (mean(&ranks), mean(&seconds));
                println!(
                    "{{\"n\": {}, \"eps\": {epsilon:?}, \"q\": {q:?}, \"bins\": {bins}, \"truth\": {truth}, \"rank\": {}, \"seconds\": {}, \"rank_mean\": {rank_mean}, \"seconds_mean\": {seconds_mean}}}",
                    data.len(),
                    median(ranks),
                    median(seconds)
                );
            }
        }
        // Time: one dp_median release against DataFusion's exact median().
        // The floor of any release bounded per privacy unit: grouping the rows by unit
        // (DataFusion's own hash aggregation, no privacy).
        let (mut dp, mut exact, mut by_unit) = (Vec::new(), Vec::new(), Vec::new());
        let dp_sql = format!("SELECT dp_median(duration, 0, 3600, 1.0, {bins}) FROM visits");
        for _ in 0..9 {
            let start = Instant::now();
            session.sql(&dp_sql).await?;
            dp.push(start.elapsed().as_secs_f64());
            let start = Instant::now();
            ctx.sql("SELECT median(duration) FROM visits_raw")
                .await?
                .collect()
                .await?;
            exact.push(start.elapsed().as_secs_f64());
            let start = Instant::now();
            ctx.sql("SELECT user_id, count(*) FROM visits_raw GROUP BY user_id")
                .await?
                .collect()
                .await?;
            by_unit.push(start.elapsed().as_secs_f64());
        }
        let (dp, exact, by_unit) = (median(dp), median(exact), median(by_unit));
        println!(
            "time n = {}, {bins} bins: dp_median {:.1} ms, DataFusion median() {:.1} ms, ratio {:.2}; \
             GROUP BY the unit {:.1} ms (dp_median {:.2}× of it)",
            data.len(),
            dp * 1e3,
            exact * 1e3,
            dp / exact,
            by_unit * 1e3,
            dp / by_unit
        );
    }
    Ok(())
}
