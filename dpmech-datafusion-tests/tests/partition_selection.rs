//! Partition selection (private keys): a key is a candidate only if some kept
//! (unit, group) pair supports it, so a unit that holds many keys nobody else holds gets
//! at most L0 chances, not one per key; and δ must lie in (0, 1), refused before any
//! charge on every path.

use std::collections::HashSet;

use crate::common::{current_thread_runtime, key, keyed_rows, release, runtime, session_with};
use datafusion::prelude::col;
use dpmech::audit::clopper_pearson_upper;
use dpmech::statistics::Bounds;
use dpmech::{Accountant, Error};
use dpmech_datafusion::functions::{dp_count, dp_partition_selection};
use dpmech_datafusion::{ContributionBounds, DpError, GroupedQuery, PrivateSession, Release};

const L0_2: ContributionBounds = ContributionBounds {
    max_groups: 2,
    max_rows_per_group: 1,
};

/// `units` lonely units (`l{u}`), each holding `keys` keys nobody else holds
/// (`l{u}k{j}`), and a crowd of 100 units on the key `common`.
fn lonely_units(units: usize, keys: usize) -> Vec<(String, String)> {
    let mut rows = Vec::with_capacity(units * keys + 100);
    for u in 0..units {
        for j in 0..keys {
            rows.push((format!("l{u}"), format!("l{u}k{j}")));
        }
    }
    for c in 0..100 {
        rows.push((format!("c{c}"), "common".to_string()));
    }
    rows
}

/// Per lonely unit with a released key, how many of its keys were released.
fn released_per_lonely_unit(release: &Release) -> Vec<usize> {
    let mut per_unit = std::collections::HashMap::<String, usize>::new();
    for row in &release.rows {
        let key = row.key.as_deref().unwrap();
        if let Some(rest) = key.strip_prefix('l') {
            let unit = rest.split('k').next().unwrap().to_string();
            *per_unit.entry(unit).or_default() += 1;
        }
    }
    per_unit.into_values().collect()
}

/// Releases `q` (private keys) `runs` times, each in a fresh session with `accountant`
/// and a fresh key, over `units` lonely units of `keys` keys each and the crowd: asserts
/// that the crowd's key is always released, that no unit gets more than L0 keys, and
/// that the one-sided Clopper–Pearson upper bound at α = 10⁻³ on the probability that
/// some key of a lonely unit is released is at most `delta`.
fn lonely_units_stay_hidden(
    q: &GroupedQuery,
    accountant: impl Fn() -> Accountant,
    (keys, delta, units, runs): (usize, f64, usize, u64),
) {
    const ALPHA: f64 = 1e-3;
    let rt = current_thread_runtime();
    let table = keyed_rows(&lonely_units(units, keys), 2);
    let (mut hits, mut most) = (0u64, 0usize);
    for i in 0..runs {
        // A session per release: each release spends its own δ.
        let s = session_with(table.clone(), L0_2, accountant(), 2);
        let r = release(&rt, &s, q, key(i, 0x51));
        let per_unit = released_per_lonely_unit(&r);
        hits += per_unit.len() as u64;
        most = most.max(per_unit.iter().copied().max().unwrap_or(0));
        assert!(
            r.rows.iter().any(|row| row.key.as_deref() == Some("common")),
            "the crowd's key is released"
        );
    }
    let trials = units as u64 * runs;
    let upper = clopper_pearson_upper(hits, trials, ALPHA).unwrap();
    println!(
        "{keys} keys per unit, δ = {delta}: some key released for {hits} of {trials} units \
         (frequency {:.2e}, Clopper–Pearson upper bound {upper:.2e}); at most {most} keys of one unit",
        hits as f64 / trials as f64
    );
    assert!(
        most <= L0_2.max_groups as usize,
        "a unit got more than L0 keys released"
    );
    assert!(upper <= delta, "upper bound {upper} > δ = {delta}");
}

#[test]
fn a_unit_holding_many_keys_nobody_else_holds_is_released_with_probability_at_most_delta() {
    // The review's case: L0 = 2, one row per (unit, group), ε = 1 for the selection, and
    // a unit holding 100 (δ = 0.1) or 200 (δ = 10⁻³) keys nobody else holds. (Bounding
    // keeps 2 of a unit's keys by keyed rank whatever their number, so the selection sees
    // the same two cells with 200 keys as with 2000, at a tenth of the rows: the bound
    // below does not depend on the number of keys.) Each
    // release holds `units` such units, independent trials of "some key of this unit is
    // released" (their bounding and their cells' noise are keyed apart); every release
    // has a fresh key. (The proof gives p ≤ 1 − (1 − r^t/(1 + r))² with r = e^(−1/2) and
    // t = ⌈2·ln(2/δ)⌉: p = 0.061 and 4.2·10⁻⁴. The trial counts give the check its
    // power: at the proven p, the bound exceeds δ with probability below 10⁻⁵ for
    // δ = 0.1 (2000 trials) and about 0.004 for δ = 10⁻³ (60 000 trials).)
    for (keys, delta, units, runs) in [(100, 0.1, 50, 40), (200, 1e-3, 50, 1200)] {
        let q = GroupedQuery::new("t", "g").private_keys(1.0, delta).count(1.0);
        lonely_units_stay_hidden(
            &q,
            || Accountant::approximate(10.0, 0.9).unwrap(),
            (keys, delta, units, runs),
        );
    }
}

#[test]
fn under_zcdp_gaussian_thresholding_hides_lonely_units_and_charges_approximate_zcdp() {
    // The same case (200 keys at δ = 10⁻³, as above) under ρ-zCDP: the selection's ρ = 1
    // gives discrete Gaussian noise of
    // σ² = L0/(2ρ) = 1 and T = 1 + ⌈√(2 ln(2/δ))⌉: 4 at δ = 0.1 and 5 at δ = 10⁻³, so
    // one key of count 1 passes with probability P(Z ≥ 3) ≈ 4.6·10⁻³ and P(Z ≥ 4) ≈
    // 1.3·10⁻⁴ (a unit has two): p ≈ 9·10⁻³ and 2.7·10⁻⁴. At those p the bound exceeds
    // δ with negligible probability: 2 000 trials at δ = 0.1 (about 18 hits expected;
    // the bound passes 0.1 only past ~170), 60 000 at δ = 10⁻³ (about 16 expected; it
    // passes 10⁻³ only past ~40).
    for (keys, delta, units, runs) in [(100, 0.1, 50, 40), (200, 1e-3, 50, 1200)] {
        let q = GroupedQuery::new("t", "g")
            .private_keys(1.0, delta)
            .count(0.5)
            .zcdp();
        assert_eq!(
            q.privacy_loss().unwrap(),
            dpmech::PrivacyLoss::approximate_zcdp(1.5, delta).unwrap()
        );
        lonely_units_stay_hidden(
            &q,
            || Accountant::approximate_zcdp(10.0, 0.9).unwrap(),
            (keys, delta, units, runs),
        );
    }
    // A ρ-only budget has no δ to charge: refused before anything runs, nothing spent.
    let rt = runtime();
    let table = keyed_rows(&lonely_units(2, 2), 2);
    let s = session_with(table, L0_2, Accountant::zcdp(10.0).unwrap(), 2);
    let q = GroupedQuery::new("t", "g")
        .private_keys(1.0, 1e-3)
        .count(0.5)
        .zcdp();
    assert!(matches!(
        rt.block_on(s.release(&q)),
        Err(DpError::Privacy(Error::IncompatibleLoss { .. }))
    ));
    assert_eq!(s.accountant().charges(), 0);
}

/// The three ways to write a private-keys release, each run `runs` times with fresh keys.
fn releases_on_every_path(
    fresh: impl Fn() -> PrivateSession,
    epsilon: f64,
    delta: f64,
    runs: usize,
) -> Vec<(&'static str, Release)> {
    let rt = runtime();
    let builder = GroupedQuery::new("t", "g")
        .private_keys(epsilon, delta)
        .count(1.0)
        .sum("v", Bounds::new(0.0, 2.0).unwrap(), 0.5);
    let sql =
        format!("SELECT g, dp_count(1) FROM t GROUP BY g HAVING dp_partition_selection({epsilon}, {delta})");
    let mut out = Vec::new();
    for _ in 0..runs {
        let s = fresh();
        out.push(("builder", rt.block_on(s.release(&builder)).unwrap()));
        let s = fresh();
        out.push(("SQL", rt.block_on(s.sql(&sql)).unwrap()));
        let s = fresh();
        let frame = rt
            .block_on(s.table("t"))
            .unwrap()
            .aggregate(
                vec![col("g")],
                vec![dp_count(1.0), dp_partition_selection(epsilon, delta)],
            )
            .unwrap();
        out.push(("DataFrame", rt.block_on(s.release_frame(frame)).unwrap()));
    }
    out
}

#[test]
fn groups_that_bounding_emptied_are_never_candidates_on_any_path() {
    // One unit with 1000 keys nobody else holds, L0 = 2: bounding keeps two of its pairs
    // and empties the other 998 groups. With δ = 0.5 a group of count 0 would pass with
    // probability ≈ 0.08 each (≈ 80 keys a release) if it were a candidate; a supported
    // group is released at most for each of the L0 kept pairs.
    let table = keyed_rows(&lonely_units(1, 1000), 3);
    let fresh = || {
        session_with(
            table.clone(),
            L0_2,
            Accountant::approximate(10.0, 0.9).unwrap(),
            4,
        )
    };
    for (path, r) in releases_on_every_path(fresh, 1.0, 0.5, 20) {
        let lonely = released_per_lonely_unit(&r);
        assert!(
            lonely.iter().all(|&n| n <= 2),
            "{path}: {lonely:?} keys of one unit released"
        );
        let keys: HashSet<_> = r.rows.iter().map(|row| row.key.clone()).collect();
        assert!(keys.contains(&Some("common".to_string())), "{path}");
    }
}

#[test]
fn delta_outside_the_open_unit_interval_is_refused_before_any_charge() {
    let s = session_with(
        keyed_rows(&lonely_units(3, 4), 1),
        L0_2,
        Accountant::approximate(100.0, 0.5).unwrap(),
        2,
    );
    let rt = runtime();
    for delta in [
        0.0,
        -0.0,
        1.0,
        2.0,
        -1e-9,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        let builder = GroupedQuery::new("t", "g").private_keys(1.0, delta).count(1.0);
        let refused = rt.block_on(s.release(&builder));
        assert!(
            matches!(refused, Err(DpError::Privacy(Error::InvalidDelta { .. }))),
            "builder, δ = {delta}: {refused:?}"
        );
        let frame = rt
            .block_on(s.table("t"))
            .unwrap()
            .aggregate(
                vec![col("g")],
                vec![dp_count(1.0), dp_partition_selection(1.0, delta)],
            )
            .unwrap();
        let refused = rt.block_on(s.release_frame(frame));
        assert!(refused.is_err(), "DataFrame, δ = {delta}: {refused:?}");
        if delta.is_finite() {
            let refused = rt.block_on(s.sql(&format!(
                "SELECT g, dp_count(1) FROM t GROUP BY g HAVING dp_partition_selection(1, {delta})"
            )));
            assert!(refused.is_err(), "SQL, δ = {delta}: {refused:?}");
        }
        assert_eq!(s.accountant().charges(), 0, "δ = {delta} was charged");
    }
    // A valid δ is accepted and charged once.
    let q = GroupedQuery::new("t", "g").private_keys(1.0, 1e-6).count(1.0);
    rt.block_on(s.release(&q)).unwrap();
    assert_eq!(s.accountant().charges(), 1);
}
