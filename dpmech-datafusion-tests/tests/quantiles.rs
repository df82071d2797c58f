//! Private quantiles in SQL, the DataFrame path and the builder: `dp_quantile`,
//! `dp_median` (exact bounded histograms per cell, permute-and-flip over the grid's
//! edges at the client).

use std::sync::Arc;

use crate::common::{
    DAY_BOUNDS, audit_heavy_unit, day_durations, day_rows, day_session, day_table, key, runtime,
    same_release_by_every_path,
};
use datafusion::prelude::{SessionConfig, SessionContext, col};
use dpmech::Accountant;
use dpmech::statistics::Bounds;
use dpmech_datafusion::functions::{dp_median, dp_quantile, dp_quantile_on};
use dpmech_datafusion::{DpError, GroupedQuery, PrivateSession};

/// The gap in ranks `|L(e) − q·n|` of a released edge `e`, with `L(e)` the number of
/// day `day`'s durations below it, read by the public rule (NaN as the midpoint 500,
/// clamped to [0, 1000]).
fn rank_gap(day: i64, q: f64, e: f64) -> f64 {
    let v = day_durations(day);
    let below = v.iter().filter(|&&x| x < e).count() as f64;
    (below - q * v.len() as f64).abs()
}

#[test]
fn quantiles_are_the_same_through_sql_the_dataframe_and_the_builder_on_any_partitioning() {
    let sql = "SELECT day, dp_median(duration, 0, 1000, 50), dp_quantile(duration, 0, 1000, 0.9, 50) \
               FROM visits WHERE day IN (1, 2, 3) GROUP BY day";
    let bounds = Bounds::new(0.0, 1000.0).unwrap();
    let builder = GroupedQuery::new("visits", "day")
        .public_keys(["1", "2", "3"])
        .median("duration", bounds, 50.0)
        .quantile("duration", bounds, 0.9, 50.0);
    let aggregates = vec![
        dp_median(col("duration"), 0.0, 1000.0, 50.0),
        dp_quantile(col("duration"), 0.0, 1000.0, 0.9, 50.0),
    ];
    let release = same_release_by_every_path((sql, aggregates, 3), &builder, key(1, 9));
    // At ε = 50 (25 per cell, Δu = 1/2) the rank error at β = 10⁻⁶ is
    // r = 2·(Δu + g)/ε·ln(257/β) ≈ 0.8 ranks, on top of OPT (at most half the count of
    // the bin holding the target: at most 5 records per bin of 3.9 here), so
    // |L(e) − q·n| ≤ OPT + r ≤ 2.5 + 0.8.
    assert_eq!(release.rows.len(), 3);
    for row in &release.rows {
        let day: i64 = row.key.as_deref().unwrap().parse().unwrap();
        for (value, q) in [(&row.values[0], 0.5), (&row.values[1], 0.9)] {
            let gap = rank_gap(day, q, value.value);
            println!("day {day} q {q}: released {}, {gap} ranks from q·n", value.value);
            assert!(
                gap <= 2.5 + 0.8,
                "day {day} q {q}: {} is {gap} ranks off",
                value.value
            );
            assert!(value.name.starts_with("quantile(duration"));
            // A released quantile is an edge of the public grid.
            assert_eq!((value.value * 256.0 / 1000.0).fract(), 0.0);
        }
    }
}

#[test]
fn bad_quantile_parameters_are_typed_errors_before_any_charge() {
    let rt = runtime();
    let s = day_session(&day_rows(), 2, DAY_BOUNDS);
    for bad in [
        "SELECT day, dp_quantile(duration, 0, 1000, 1.5, 1) FROM visits WHERE day IN (1) GROUP BY day",
        "SELECT day, dp_quantile(duration, 0, 1000, -0.1, 1) FROM visits WHERE day IN (1) GROUP BY day",
        "SELECT day, dp_median(duration, 0, 1000, 1, 0) FROM visits WHERE day IN (1) GROUP BY day",
        "SELECT day, dp_median(duration, 0, 1000, 1, 1048577) FROM visits WHERE day IN (1) GROUP BY day",
        "SELECT day, dp_median(duration, 1000, 0, 1) FROM visits WHERE day IN (1) GROUP BY day",
        "SELECT day, dp_median(duration, 0, 1000, -1) FROM visits WHERE day IN (1) GROUP BY day",
    ] {
        let refused = rt.block_on(s.sql(bad));
        assert!(matches!(refused, Err(DpError::Privacy(_))), "{bad}: {refused:?}");
    }
    for bad in [
        "SELECT day, dp_median(duration, 0, 1000, 1, 2.5) FROM visits WHERE day IN (1) GROUP BY day",
        "SELECT day, dp_median(duration, 0, 1000) FROM visits WHERE day IN (1) GROUP BY day",
    ] {
        let refused = rt.block_on(s.sql(bad));
        assert!(
            matches!(refused, Err(DpError::UnsupportedQuery(_))),
            "{bad}: {refused:?}"
        );
    }
    assert_eq!(s.accountant().charges(), 0);
    // Records never cause an error: NaN, out-of-range values and empty cells (day 9).
    let release = rt
        .block_on(
            s.sql("SELECT day, dp_median(duration, 0, 1000, 1) FROM visits WHERE day IN (1, 9) GROUP BY day"),
        )
        .unwrap();
    assert_eq!(release.rows.len(), 2);
    assert!(
        release
            .rows
            .iter()
            .all(|r| (0.0..=1000.0).contains(&r.values[0].value))
    );
}

#[test]
fn quantiles_pass_their_audit_through_sql_and_fail_without_bounding() {
    // One cell (no GROUP BY). D′ = D plus one unit with 40 records at the top of the
    // grid: bounded to L∞ = 1 it adds one record (the median's rank score moves by
    // Δu = 1/2, the mechanism's ε = 1); unbounded, its 40 records move the median of
    // D's 21 records to the top.
    audit_heavy_unit(
        "median",
        "SELECT dp_median(duration, 0, 8, 1.0, 8) FROM visits",
        7.5,
        |r| r.rows[0].values[0].value as i64,
    );
}

#[test]
fn contribution_bounds_are_suggested_from_the_data_and_charged_first() {
    // 2 000 users; user u visits 1 + u % 4 days with 1 + u % 3 visits on each. Groups
    // per unit are 1..=4, a quarter each: the 0.9-quantile is 4. Rows per pair (every
    // pair kept at L0 = 4) are 1, 2, 3, a third each: the 0.9-quantile is 3. At ε = 1
    // (ε/2 each) the tie-aware scores put the right bin ahead of every other by at least
    // 50 ranks (Δu = 0.9) and 167 ranks (Δu = 4·0.9): each other bin wins with
    // probability at most e^(−0.5·50/1.8) ≈ 10⁻⁶ and e^(−0.5·167/7.2) ≈ 10⁻⁵ per run.
    let mut rows = Vec::new();
    for u in 0..2000i64 {
        for day in 1..=(1 + u % 4) {
            rows.extend((0..(1 + u % 3)).map(|_| (u, day, 1.0)));
        }
    }
    let rt = runtime();
    let suggester = dpmech::statistics::ContributionBoundsSuggester::new(8, 8)
        .unwrap()
        .quantile(0.9)
        .unwrap();
    let with_budget = |budget: f64| {
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
        let mut s = PrivateSession::new(ctx, Arc::new(Accountant::pure(budget).unwrap()));
        s.register_private("visits", day_table(&rows, 3), "user_id", DAY_BOUNDS)
            .unwrap();
        s
    };
    let s = with_budget(3.0);
    for run in 0..3 {
        let bounds = rt
            .block_on(s.suggest_contribution_bounds_with_key(
                "visits",
                &["day"],
                &suggester,
                1.0,
                key(run, 5),
            ))
            .unwrap();
        println!("suggested: L0 = {}, L∞ = {}", bounds.l0, bounds.linf);
        assert_eq!((bounds.l0, bounds.linf), (4, 3), "run {run}");
    }
    assert_eq!(s.accountant().charges(), 3);
    // A refused charge reads nothing and spends nothing; unknown names are refused first.
    let poor = with_budget(0.2);
    let refused = rt.block_on(poor.suggest_contribution_bounds("visits", &["day"], &suggester, 1.0));
    assert!(
        matches!(
            refused,
            Err(DpError::Privacy(dpmech::Error::BudgetExceeded { .. }))
        ),
        "{refused:?}"
    );
    for (table, column) in [("nope", "day"), ("visits", "nope")] {
        assert!(
            rt.block_on(poor.suggest_contribution_bounds(table, &[column], &suggester, 0.1))
                .is_err()
        );
    }
    assert_eq!(poor.accountant().charges(), 0);
}

#[test]
fn every_aggregate_states_its_accuracy_and_a_quantiles_rank_error_holds() {
    // 100 releases of the median and the 0.9-quantile of days 1–3 at ε = 1 (ε/L0 = 1/2
    // per cell, m = 1, 256 bins). Each value states r(0.05) =
    // Quantile::rank_error(0.05) of its cell's mechanism and claims |L(e) − q·n| ≤
    // OPT + r with probability ≥ 0.95, OPT = min over edges of |L(eⱼ) − q·n|. Over 600
    // values, failures are at most Bin(600, 0.05) (mean 30, σ = 5.3) if the statement
    // holds: more than 52 (4σ above) would refute it at α < 10⁻⁴.
    use dpmech::statistics::{Quantile, QuantileGrid};
    use dpmech_datafusion::Accuracy;
    let rt = runtime();
    let s = day_session(&day_rows(), 2, DAY_BOUNDS);
    let q = rt
        .block_on(s.plan_sql(
            "SELECT day, dp_median(duration, 0, 1000, 1), dp_quantile(duration, 0, 1000, 0.9, 1) \
             FROM visits WHERE day IN (1, 2, 3) GROUP BY day",
        ))
        .unwrap();
    let grid = QuantileGrid::new(0.0, 1000.0, 256).unwrap();
    // OPT of each (day, level), once.
    let opts: Vec<((i64, u64), f64)> = [1i64, 2, 3]
        .iter()
        .flat_map(|&day| [0.5f64, 0.9].map(|level| (day, level)))
        .map(|(day, level)| {
            let best = (0..=256)
                .map(|j| rank_gap(day, level, grid.edge(j)))
                .fold(f64::INFINITY, f64::min);
            ((day, level.to_bits()), best)
        })
        .collect();
    let opt = |day: i64, level: f64| {
        opts.iter()
            .find(|(k, _)| *k == (day, level.to_bits()))
            .map(|(_, v)| *v)
            .unwrap()
    };
    let mut failures = 0;
    let prepared = rt.block_on(s.prepare(&q)).unwrap();
    for i in 0..100 {
        let release = rt.block_on(prepared.release_with_key(key(i, 21))).unwrap();
        for row in &release.rows {
            let day: i64 = row.key.as_deref().unwrap().parse().unwrap();
            for (value, level) in [(&row.values[0], 0.5), (&row.values[1], 0.9)] {
                let ranks = Quantile::new(&grid, level, 0.5, 1)
                    .unwrap()
                    .rank_error(0.05)
                    .unwrap();
                assert_eq!(value.accuracy, Accuracy::RankError { ranks, beta: 0.05 });
                failures += usize::from(rank_gap(day, level, value.value) > opt(day, level) + ranks);
            }
        }
    }
    println!("rank error statements failed {failures} times of 600");
    assert!(failures <= 52, "{failures} of 600");
    // The other aggregates: intervals at β = 0.05 (the 95 % interval), and the bounds'
    // failure probability β = 10⁻⁶.
    let release = rt
        .block_on(s.sql(
            "SELECT day, dp_count(1), dp_count_units(1), dp_sum(duration, 0, 1000, 1), \
             dp_mean(duration, 0, 1000, 1), dp_variance(duration, 0, 1000, 1), \
             dp_stddev(duration, 0, 1000, 1), dp_bounds(duration, 1) \
             FROM visits WHERE day IN (1, 2) GROUP BY day",
        ))
        .unwrap();
    for row in &release.rows {
        assert_eq!(row.values.len(), 8);
        for value in &row.values[..6] {
            let (lower, upper) = value.interval;
            assert_eq!(
                value.accuracy,
                Accuracy::Interval {
                    lower,
                    upper,
                    beta: 0.05
                },
                "{}",
                value.name
            );
            assert!(lower <= upper && lower.is_finite() && upper.is_finite());
        }
        for value in &row.values[6..] {
            assert_eq!(value.accuracy, Accuracy::FailureProbability { beta: 1e-6 });
        }
    }
}

#[test]
fn quantiles_on_a_grid_of_2_16_bins_are_the_same_by_every_path_and_sharper() {
    // 2¹⁶ bins of [0, 1000] (width 0.015): every bin is a row of the bounding's output
    // only when it holds records, not a column of the plan. At ε = 50 (25 per cell) the
    // released edge's gap |L(e) − q·n| is at most OPT + r(10⁻⁶), OPT = min over the
    // grid's edges (0 to 1 here: edges lie between any two distinct durations) and
    // r(10⁻⁶) = Quantile::rank_error(10⁻⁶) ≈ 1.8 ranks, except with probability 10⁻⁶
    // per value.
    use dpmech::statistics::{Quantile, QuantileGrid};
    let grid = QuantileGrid::new(0.0, 1000.0, 65536).unwrap();
    let sql = "SELECT day, dp_median(duration, 0, 1000, 50, 65536), \
               dp_quantile(duration, 0, 1000, 0.9, 50, 65536) \
               FROM visits WHERE day IN (1, 2, 3) GROUP BY day";
    let bounds = Bounds::new(0.0, 1000.0).unwrap();
    let builder = GroupedQuery::new("visits", "day")
        .public_keys(["1", "2", "3"])
        .quantile_on("duration", bounds, 0.5, 65536, 50.0)
        .quantile_on("duration", bounds, 0.9, 65536, 50.0);
    let aggregates = vec![
        dp_quantile_on(col("duration"), 0.0, 1000.0, 0.5, 50.0, 65536),
        dp_quantile_on(col("duration"), 0.0, 1000.0, 0.9, 50.0, 65536),
    ];
    let release = same_release_by_every_path((sql, aggregates, 3), &builder, key(3, 9));
    assert_eq!(release.rows.len(), 3);
    for row in &release.rows {
        let day: i64 = row.key.as_deref().unwrap().parse().unwrap();
        for (value, q) in [(&row.values[0], 0.5), (&row.values[1], 0.9)] {
            let gap = rank_gap(day, q, value.value);
            let mut sorted = day_durations(day);
            sorted.sort_by(f64::total_cmp);
            let target = q * sorted.len() as f64;
            let opt = (0..=65536)
                .map(|j| (sorted.partition_point(|&x| x < grid.edge(j)) as f64 - target).abs())
                .fold(f64::INFINITY, f64::min);
            let r = Quantile::new(&grid, q, 25.0, 1)
                .unwrap()
                .rank_error(1e-6)
                .unwrap();
            println!(
                "day {day} q {q}: released {}, {gap} ranks from q·n (OPT {opt}, r {r:.2})",
                value.value
            );
            assert!(
                gap <= opt + r,
                "day {day} q {q}: {} is {gap} ranks off",
                value.value
            );
            assert!(r < 2.0 && opt <= 1.0, "OPT {opt}, r {r}");
            // An edge of the 2¹⁶-bin grid.
            assert_eq!((value.value * 65536.0 / 1000.0).fract(), 0.0);
        }
    }
}

#[test]
fn medians_on_2_16_bins_pass_their_audit_through_sql_and_fail_without_bounding() {
    // As the 8-bin audit, on a grid of 2¹⁶ bins of [0, 8]: the audited output is the
    // released edge's whole part (the bin of one-unit width holding it).
    audit_heavy_unit(
        "median on 2^16 bins",
        "SELECT dp_median(duration, 0, 8, 1.0, 65536) FROM visits",
        7.5,
        |r| r.rows[0].values[0].value as i64,
    );
}
