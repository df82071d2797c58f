//! Prepared releases ([`PrivateSession::prepare`]): planned once, each run charged and
//! keyed anew, equal to the direct release of the same query under the same key.

use std::sync::Arc;

use crate::common::{DAY_BOUNDS, day_rows, day_table, key, runtime};
use datafusion::prelude::{SessionConfig, SessionContext};
use dpmech::statistics::Bounds;
use dpmech::{Accountant, Error, PrivacyLoss};
use dpmech_datafusion::{DpError, GroupedQuery, PrivateSession};

/// Every kind of release: public and private keys, one, two and no grouping columns,
/// counts, sums, means, variances, bounds, unit counts and quantiles (on the default
/// grid and on 2¹⁶ bins), under ε-DP and ρ-zCDP.
fn queries() -> Vec<GroupedQuery> {
    let bounds = Bounds::new(0.0, 1000.0).unwrap();
    let days = ["1", "2", "3"];
    vec![
        GroupedQuery::new("visits", "day")
            .public_keys(days)
            .count(1.0)
            .sum("duration", bounds, 1.0)
            .mean("duration", bounds, 1.0),
        GroupedQuery::new("visits", "day")
            .private_keys(1.0, 1e-6)
            .count(1.0)
            .count_units(1.0),
        GroupedQuery::grouped("visits", &["day", "user_id"])
            .public_key_tuples([["1", "3"], ["2", "4"], ["3", "5"]])
            .count(1.0),
        GroupedQuery::grouped("visits", &[])
            .count(1.0)
            .bounds("duration", 1.0),
        GroupedQuery::new("visits", "day")
            .public_keys(days)
            .variance("duration", bounds, 1.0)
            .median("duration", bounds, 1.0)
            .quantile_on("duration", bounds, 0.9, 1 << 16, 1.0),
        GroupedQuery::new("visits", "day")
            .public_keys(days)
            .count(0.5)
            .sum("duration", bounds, 0.5)
            .zcdp(),
    ]
}

/// A session over [`day_rows`] as `visits` whose budget accepts `q`'s kind of loss.
fn session(partitions: usize, q: &GroupedQuery) -> PrivateSession {
    let accountant = match q.privacy_loss().unwrap() {
        PrivacyLoss::Zcdp { .. } => Accountant::zcdp(1e12),
        PrivacyLoss::Approximate { .. } => Accountant::approximate(1e12, 0.5),
        _ => Accountant::pure(1e12),
    };
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    let mut s = PrivateSession::new(ctx, Arc::new(accountant.unwrap()));
    s.register_private("visits", day_table(&day_rows(), 3), "user_id", DAY_BOUNDS)
        .unwrap();
    s
}

#[test]
fn prepared_releases_equal_direct_releases_under_every_key() {
    let rt = runtime();
    for partitions in [1, 3] {
        for (n, q) in queries().iter().enumerate() {
            let s = session(partitions, q);
            let prepared = rt.block_on(s.prepare(q)).unwrap();
            assert_eq!(prepared.loss(), q.privacy_loss().unwrap());
            let mut releases = Vec::new();
            for i in 0..4 {
                let direct = rt.block_on(s.release_with_key(q, key(i, 9))).unwrap();
                let again = rt.block_on(prepared.release_with_key(key(i, 9))).unwrap();
                assert_eq!(again, direct, "query {n}, key {i}, {partitions} partitions");
                releases.push(again);
            }
            // The key reaches the plan: four keys, four different releases (each has a
            // count or bound with noise of scale ≥ 1 on the grid).
            releases.dedup();
            assert_eq!(releases.len(), 4, "query {n}: a prepared release ignored its key");
        }
    }
}

#[test]
fn each_prepared_release_is_charged_and_the_budget_refuses_the_one_past_it() {
    let rt = runtime();
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    let mut s = PrivateSession::new(ctx, Arc::new(Accountant::pure(3.0).unwrap()));
    s.register_private("visits", day_table(&day_rows(), 2), "user_id", DAY_BOUNDS)
        .unwrap();
    let q = GroupedQuery::new("visits", "day")
        .public_keys(["1", "2"])
        .count(1.0);
    let prepared = rt.block_on(s.prepare(&q)).unwrap();
    // Preparing spends nothing; each release is one charge of ε = 1.
    assert_eq!(s.accountant().charges(), 0);
    for i in 1..=3 {
        rt.block_on(prepared.release_with_key(key(i, 5))).unwrap();
        assert_eq!(s.accountant().charges(), i);
    }
    let refused = rt.block_on(prepared.release_with_key(key(4, 5)));
    assert!(
        matches!(refused, Err(DpError::Privacy(Error::BudgetExceeded { .. }))),
        "{refused:?}"
    );
    assert_eq!(s.accountant().charges(), 3);
    // A query refused at planning is refused by `prepare`, before any charge.
    let bad = GroupedQuery::new("visits", "no_such_column").count(1.0);
    assert!(matches!(
        rt.block_on(s.prepare(&bad)),
        Err(DpError::UnknownColumn(_))
    ));
    assert_eq!(s.accountant().charges(), 3);
}
