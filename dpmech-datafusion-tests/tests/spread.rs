//! Private spread and range in SQL, the DataFrame path and the builder: `dp_variance`,
//! `dp_stddev` (three exact bounded sums per cell — the count, the centred records and
//! their squares — with noise at the client) and `dp_bounds` (a bounded histogram over
//! signed powers of two, thresholded at the client).

use std::sync::Arc;

use crate::common::{
    DAY_BOUNDS, audit_heavy_unit, day_durations, day_rows, day_session, day_table, key, runtime,
    same_release_by_every_path,
};
use datafusion::prelude::{SessionConfig, SessionContext, col};
use dpmech::statistics::Bounds;
use dpmech::{Accountant, PrivacyLoss};
use dpmech_datafusion::functions::{dp_bounds, dp_stddev, dp_variance};
use dpmech_datafusion::{DpError, GroupedQuery, PrivateSession};

/// The population variance of day `day`'s durations ([`day_rows`]) read by the public rule (NaN as
/// the midpoint 500, clamped to [0, 1000]): what the release estimates.
fn true_variance(day: i64) -> f64 {
    let v = day_durations(day);
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n
}

#[test]
fn variances_are_the_same_through_sql_the_dataframe_and_the_builder_on_any_partitioning() {
    let sql = "SELECT day, dp_variance(duration, 0, 1000, 30), dp_stddev(duration, 0, 1000, 30) \
               FROM visits WHERE day IN (1, 2, 3, 4) GROUP BY day";
    let bounds = Bounds::new(0.0, 1000.0).unwrap();
    let builder = GroupedQuery::new("visits", "day")
        .public_keys(["1", "2", "3", "4"])
        .variance("duration", bounds, 30.0)
        .std_dev("duration", bounds, 30.0);
    let aggregates = vec![
        dp_variance(col("duration"), 0.0, 1000.0, 30.0),
        dp_stddev(col("duration"), 0.0, 1000.0, 30.0),
    ];
    let release = same_release_by_every_path((sql, aggregates, 4), &builder, key(1, 3));
    assert_eq!(release.rows.len(), 4);
    for row in &release.rows {
        let day: i64 = row.key.as_deref().unwrap().parse().unwrap();
        let (variance, std_dev) = (&row.values[0], &row.values[1]);
        assert_eq!(variance.name, "variance(duration)");
        assert_eq!(std_dev.name, "stddev(duration)");
        println!(
            "day {day}: variance {:.1} in [{:.1}, {:.1}], std dev {:.2} in [{:.2}, {:.2}]",
            variance.value,
            variance.interval.0,
            variance.interval.1,
            std_dev.value,
            std_dev.interval.0,
            std_dev.interval.1
        );
        if day == 4 {
            // An empty cell: the fallback 0 (the variance of at most one record) and the
            // whole range [0, h²], h = 500.
            assert!(variance.value <= 250_000.0 && std_dev.value <= 500.0);
            assert_eq!(variance.interval, (0.0, 250_000.0));
            assert_eq!(std_dev.interval, (0.0, 500.0));
            continue;
        }
        // Both come from the column's shared noisy sums (count, centred sum, squares at
        // 20 each): each covers the truth, and is within its interval's width of it.
        let truth = true_variance(day);
        for (value, exact) in [(variance, truth), (std_dev, truth.sqrt())] {
            let (lo, hi) = value.interval;
            assert!(
                lo <= exact && exact <= hi,
                "{}: {exact} outside [{lo}, {hi}]",
                value.name
            );
            assert!(lo <= value.value && value.value <= hi);
        }
        // At ε = 30 (5 per sum per cell) the interval is narrow: the variance within 2 %.
        assert!((variance.interval.1 - variance.interval.0) / truth < 0.02);
    }
}

#[test]
fn variance_intervals_cover_the_truth_at_least_95_percent_of_the_time() {
    // 200 releases at ε = 1 (under zCDP, ρ = 1), 3 cells each: the intervals are
    // conservative (a union bound over three noises, each widened outward), so coverage
    // must be at least 95 %. X ~ Bin(600, 0.95) has mean 570 and σ = 5.3; 549 covered
    // cells (4σ below) fail with probability < 10⁻⁴ if the interval were exact.
    let rt = runtime();
    for zcdp in [false, true] {
        let mut s = day_session(&day_rows(), 2, DAY_BOUNDS);
        if zcdp {
            let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
            s = PrivateSession::new(ctx, Arc::new(Accountant::zcdp(1e12).unwrap()));
            s.register_private("visits", day_table(&day_rows(), 3), "user_id", DAY_BOUNDS)
                .unwrap();
        }
        let mut q = rt
            .block_on(s.plan_sql(
                "SELECT day, dp_variance(duration, 0, 1000, 1) FROM visits WHERE day IN (1, 2, 3) GROUP BY day",
            ))
            .unwrap();
        if zcdp {
            q = q.zcdp();
        }
        let mut covered = 0;
        let mut widths = Vec::new();
        let prepared = rt.block_on(s.prepare(&q)).unwrap();
        for i in 0..200 {
            let release = rt.block_on(prepared.release_with_key(key(i, 7))).unwrap();
            for row in &release.rows {
                let day: i64 = row.key.as_deref().unwrap().parse().unwrap();
                let (lo, hi) = row.values[0].interval;
                covered += usize::from(lo <= true_variance(day) && true_variance(day) <= hi);
                widths.push(hi - lo);
            }
        }
        widths.sort_by(f64::total_cmp);
        println!(
            "zcdp {zcdp}: {covered} of 600 intervals cover the truth; median width {:.0} (truth ≈ {:.0})",
            widths[300],
            true_variance(1)
        );
        assert!(covered >= 549, "{covered} of 600");
    }
}

#[test]
fn a_zcdp_variance_is_charged_rho() {
    let rt = runtime();
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    let accountant = Arc::new(Accountant::zcdp(1.0).unwrap());
    let mut s = PrivateSession::new(ctx, accountant.clone());
    s.register_private("visits", day_table(&day_rows(), 3), "user_id", DAY_BOUNDS)
        .unwrap();
    let q = GroupedQuery::new("visits", "day")
        .public_keys(["1"])
        .std_dev("duration", Bounds::new(0.0, 1000.0).unwrap(), 0.25)
        .zcdp();
    assert_eq!(q.privacy_loss().unwrap(), PrivacyLoss::zcdp(0.25).unwrap());
    rt.block_on(s.release(&q)).unwrap();
    assert_eq!(accountant.charges(), 1);
}

#[test]
fn variances_pass_their_audit_through_sql_and_fail_without_bounding() {
    // One cell (no GROUP BY). D′ = D plus one unit with 40 records at the top of the
    // bounds: bounded to L∞ = 1 it adds one record (each of the three sums moves by at
    // most its sensitivity, ε = 1 in all); unbounded, its 40 records pull the variance
    // of D's 21 records from about 5.3 to about 2.6. The audited output is the released
    // variance to a tenth (post-processing).
    audit_heavy_unit(
        "variance",
        "SELECT dp_variance(duration, 0, 8, 1.0) FROM visits",
        8.0,
        |r| (r.rows[0].values[0].value * 10.0).round() as i64,
    );
}

#[test]
fn bounds_are_the_same_through_sql_the_dataframe_and_the_builder_and_hug_the_data() {
    let sql = "SELECT day, dp_bounds(duration, 10) FROM visits WHERE day IN (1, 2, 3) GROUP BY day";
    let builder = GroupedQuery::new("visits", "day")
        .public_keys(["1", "2", "3"])
        .bounds("duration", 10.0);
    let aggregates = vec![dp_bounds(col("duration"), 10.0)];
    let release = same_release_by_every_path((sql, aggregates, 3), &builder, key(2, 3));
    // ε/L0 = 5 per cell with L∞ = 1: discrete Laplace of scale 0.2 on every bin, so a
    // bin's noisy count is within ±1 of its count except with probability
    // 2e^(−10)/(1 + e^(−5)) < 10⁻⁴. Each day has ~200 records in [512, 1024) (clears)
    // and one at 10⁹ (in [2²⁹, 2³⁰): does not clear), one at −50 (does not), and the
    // records below 64 thin out toward 0.
    assert_eq!(release.rows.len(), 3);
    for row in &release.rows {
        let (lower, upper) = (&row.values[0], &row.values[1]);
        println!("day {:?}: bounds [{}, {}]", row.key, lower.value, upper.value);
        assert_eq!(lower.name, "lower_bound(duration)");
        assert_eq!(upper.name, "upper_bound(duration)");
        assert_eq!(upper.value, 1024.0);
        assert!((0.0..=64.0).contains(&lower.value), "{}", lower.value);
        assert!(lower.value == 0.0 || lower.value.log2().fract() == 0.0);
        assert_eq!(upper.interval, (-(2f64.powi(64)), 2f64.powi(64)));
    }
}

#[test]
fn bad_spread_and_bounds_parameters_are_typed_errors_before_any_charge() {
    let rt = runtime();
    let s = day_session(&day_rows(), 2, DAY_BOUNDS);
    let refused = |sql: &str| {
        let result = rt.block_on(s.sql(sql));
        assert!(result.is_err(), "{sql} was accepted");
        result.unwrap_err()
    };
    // Bounds with lower ≥ upper, ε ≤ 0 or NaN: the core's typed errors.
    for sql in [
        "SELECT dp_variance(duration, 5, 1, 1.0) FROM visits",
        "SELECT dp_stddev(duration, 1, 1, 1.0) FROM visits",
        "SELECT dp_variance(duration, 0, 1, 0) FROM visits",
        "SELECT dp_stddev(duration, 0, 1, -1) FROM visits",
        "SELECT dp_bounds(duration, 0) FROM visits",
    ] {
        assert!(matches!(refused(sql), DpError::Privacy(_)), "{sql}");
    }
    // NaN and ∞ through the builder (SQL literals cannot spell them).
    for epsilon in [f64::NAN, f64::INFINITY] {
        let q = GroupedQuery::new("visits", "day")
            .public_keys(["1"])
            .bounds("duration", epsilon);
        assert!(matches!(rt.block_on(s.release(&q)), Err(DpError::Privacy(_))));
        let q = GroupedQuery::new("visits", "day").public_keys(["1"]).variance(
            "duration",
            Bounds::new(0.0, 1.0).unwrap(),
            epsilon,
        );
        assert!(matches!(rt.block_on(s.release(&q)), Err(DpError::Privacy(_))));
    }
    // A variance whose largest value, ((hi − lo)/2)², is not a finite f64.
    assert!(matches!(
        refused("SELECT dp_variance(duration, -1e200, 1e200, 1.0) FROM visits"),
        DpError::Unrepresentable(_)
    ));
    // Wrong arity, a non-column first argument.
    assert!(matches!(
        refused("SELECT dp_bounds(duration) FROM visits"),
        DpError::UnsupportedQuery(_)
    ));
    assert!(matches!(
        refused("SELECT dp_bounds(1.5, 1.0) FROM visits"),
        DpError::UnsupportedQuery(_)
    ));
    assert_eq!(s.accountant().charges(), 0);
}

#[test]
fn a_mean_and_a_variance_of_one_column_share_one_noisy_count_and_sum() {
    // dp_mean(ε = 1) beside dp_variance(ε = 1) of the same column and bounds: the count
    // and the centred sum get ε/2 + ε/3 = 5/6 each and the squares 1/3, so the mean's
    // noise is that of a sum of sensitivity m·h = 500 at 5/6 per cell budget (over L0)
    // instead of m·1000 at 1/2 alone: its interval is about (500/(5/6))/(1000/(1/2)) =
    // 0.3 times as wide. Alone the two draw separate noise and the mean's interval is
    // exactly that of a mean alone.
    let sql = "SELECT day, dp_mean(duration, 0, 1000, 1), dp_variance(duration, 0, 1000, 1) \
               FROM visits WHERE day IN (1, 2, 3) GROUP BY day";
    let bounds = Bounds::new(0.0, 1000.0).unwrap();
    let builder = GroupedQuery::new("visits", "day")
        .public_keys(["1", "2", "3"])
        .mean("duration", bounds, 1.0)
        .variance("duration", bounds, 1.0);
    let aggregates = vec![
        dpmech_datafusion::functions::dp_mean(col("duration"), 0.0, 1000.0, 1.0),
        dp_variance(col("duration"), 0.0, 1000.0, 1.0),
    ];
    let shared = same_release_by_every_path((sql, aggregates, 3), &builder, key(2, 3));
    assert_eq!(
        shared.loss,
        PrivacyLoss::pure(2.0).unwrap(),
        "the charge is unchanged"
    );
    let rt = runtime();
    let s = day_session(&day_rows(), 2, DAY_BOUNDS);
    let alone = rt
        .block_on(
            s.release_with_key(
                &GroupedQuery::new("visits", "day")
                    .public_keys(["1", "2", "3"])
                    .mean("duration", bounds, 1.0),
                key(2, 3),
            ),
        )
        .unwrap();
    for (with, without) in shared.rows.iter().zip(&alone.rows) {
        let width = |v: &dpmech_datafusion::ReleasedValue| v.interval.1 - v.interval.0;
        let (a, b) = (width(&with.values[0]), width(&without.values[0]));
        println!(
            "day {:?}: mean interval width {a:.2} shared, {b:.2} alone",
            with.key
        );
        assert!(a <= 0.5 * b, "shared {a}, alone {b}");
    }
}
