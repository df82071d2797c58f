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
use dpmech_datafusion::functions::{dp_median, dp_quantile};
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
        "SELECT day, dp_median(duration, 0, 1000, 1, 4097) FROM visits WHERE day IN (1) GROUP BY day",
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
