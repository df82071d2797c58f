//! Grouping by several columns or none, keys from a public table, typed keys, and
//! counts of distinct privacy units (SQL, DataFrame and builder).

use std::sync::Arc;

use crate::common::{audit_release, current_thread_runtime, key, memory_table, runtime};
use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use datafusion::common::ScalarValue;
use datafusion::prelude::{SessionConfig, SessionContext, col};
use dpmech::Accountant;
use dpmech_datafusion::functions::dp_count_units;
use dpmech_datafusion::{ContributionBounds, GroupedQuery, PrivateSession, Release};

const BOUNDS: ContributionBounds = ContributionBounds {
    max_groups: 3,
    max_rows_per_group: 2,
};

/// `(user, day, country, duration)`: 400 users over days 1..=12 and three countries;
/// day 7 × "pl" never occurs.
fn rows() -> Vec<(i64, i64, &'static str, f64)> {
    let mut out = Vec::new();
    for u in 0..400i64 {
        for r in 0..(1 + u % 3) {
            let day = 1 + (u * 5 + r * 7) % 12;
            let country = ["fr", "de", "pl"][((u + r) % 3) as usize];
            if day == 7 && country == "pl" {
                continue;
            }
            out.push((u, day, country, ((u * 31 + r) % 500) as f64));
        }
    }
    out
}

fn table(rows: &[(i64, i64, &str, f64)], partitions: usize) -> Arc<datafusion::datasource::MemTable> {
    memory_table(
        vec![
            (
                "user_id",
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))) as ArrayRef,
            ),
            (
                "day",
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
            ),
            (
                "country",
                Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.2))),
            ),
            (
                "duration",
                Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.3))),
            ),
        ],
        partitions,
    )
}

fn session(partitions: usize, accountant: Accountant) -> PrivateSession {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    let mut s = PrivateSession::new(ctx, Arc::new(accountant));
    s.register_private("visits", table(&rows(), 3), "user_id", BOUNDS)
        .unwrap();
    s
}

fn keys_of(release: &Release) -> Vec<Vec<ScalarValue>> {
    release.rows.iter().map(|r| r.keys.clone()).collect()
}

#[test]
fn several_grouping_columns_release_exactly_the_cross_product_on_any_partitioning() {
    let rt = runtime();
    let q = GroupedQuery::grouped("visits", &["day", "country"])
        .public_keys_product([vec!["7", "8"], vec!["fr", "pl", "xx"]])
        .count(1.0)
        .count_units(0.5);
    let expected: Vec<Vec<ScalarValue>> = [7i64, 8]
        .iter()
        .flat_map(|&d| {
            ["fr", "pl", "xx"].map(|c| vec![ScalarValue::Int64(Some(d)), ScalarValue::Utf8(Some(c.into()))])
        })
        .collect();
    let one = rt
        .block_on(session(1, Accountant::pure(10.0).unwrap()).release_with_key(&q, key(1, 3)))
        .unwrap();
    assert_eq!(
        keys_of(&one),
        expected,
        "every cell of the product, empty ones too, in typed order"
    );
    assert_eq!(one.rows[1].key.as_deref(), Some("(7, pl)"));
    for partitions in [4, 16] {
        let other = rt
            .block_on(session(partitions, Accountant::pure(10.0).unwrap()).release_with_key(&q, key(1, 3)))
            .unwrap();
        assert_eq!(other, one, "{partitions} partitions");
    }
    // The same release written as SQL: one IN list per grouping column, joined by AND.
    let s = session(4, Accountant::pure(10.0).unwrap());
    let from_sql = rt
        .block_on(s.plan_sql(
            "SELECT day, country, dp_count(1.0), dp_count_units(0.5) FROM visits \
             WHERE country IN ('fr', 'pl', 'xx') AND day IN (7, 8) GROUP BY day, country",
        ))
        .unwrap();
    assert_eq!(
        rt.block_on(s.release_with_key(&from_sql, key(1, 3))).unwrap(),
        one
    );
}

#[test]
fn keys_from_a_public_table_are_exactly_its_distinct_rows() {
    let rt = runtime();
    let mut s = session(4, Accountant::pure(10.0).unwrap());
    let calendar = memory_table(
        vec![
            ("d", Arc::new(Int64Array::from(vec![3, 3, 7, 100])) as ArrayRef),
            ("c", Arc::new(StringArray::from(vec!["fr", "fr", "pl", "de"]))),
        ],
        1,
    );
    s.register_public("calendar", calendar).unwrap();
    let q = GroupedQuery::grouped("visits", &["day", "country"])
        .public_keys_from_table("calendar", &["d", "c"])
        .count(1.0);
    let r = rt.block_on(s.release_with_key(&q, key(2, 3))).unwrap();
    let expected: Vec<Vec<ScalarValue>> = [(3, "fr"), (7, "pl"), (100, "de")]
        .iter()
        .map(|&(d, c)| vec![ScalarValue::Int64(Some(d)), ScalarValue::Utf8(Some(c.into()))])
        .collect();
    assert_eq!(keys_of(&r), expected);
    // One grouping column in SQL: `IN (SELECT …)` over the public table.
    let q = rt
        .block_on(s.plan_sql(
            "SELECT day, dp_count(1.0) FROM visits WHERE day IN (SELECT d FROM calendar) GROUP BY day",
        ))
        .unwrap();
    let r = rt.block_on(s.release_with_key(&q, key(3, 3))).unwrap();
    assert_eq!(
        keys_of(&r),
        [3, 7, 100].map(|d| vec![ScalarValue::Int64(Some(d))]).to_vec()
    );
    // A private table cannot be a key table, nor share a public table's name.
    let q = GroupedQuery::new("visits", "day")
        .public_keys_from_table("visits", &["day"])
        .count(1.0);
    assert!(rt.block_on(s.release_with_key(&q, key(4, 3))).is_err());
    assert!(s.register_public("visits", table(&rows(), 1)).is_err());
    assert_eq!(s.accountant().charges(), 2, "refusals spend nothing");
}

#[test]
fn without_group_by_the_whole_table_is_one_cell_and_integer_keys_sort_as_integers() {
    let rt = runtime();
    let s = session(4, Accountant::pure(1e6).unwrap());
    let whole = rt
        .block_on(s.plan_sql("SELECT dp_count(1000.0), dp_count_units(1000.0) FROM visits"))
        .unwrap();
    let r = rt.block_on(s.release_with_key(&whole, key(5, 3))).unwrap();
    assert_eq!(r.rows.len(), 1);
    assert!(r.rows[0].keys.is_empty());
    // ε = 1000 per aggregate: the noise is 0 with overwhelming probability, so the
    // values are the bounded truth (rows: ≤ 2 per user and day, ≤ 3 days per user;
    // units: all 400 users).
    assert_eq!(r.rows[0].values[1].value, 400.0);
    assert!(r.rows[0].values[0].value <= (400 * 3 * 2) as f64);
    let by_day = GroupedQuery::new("visits", "day")
        .public_keys((1..=12).map(|d| d.to_string()))
        .count(1.0);
    let r = rt.block_on(s.release_with_key(&by_day, key(6, 3))).unwrap();
    let days: Vec<ScalarValue> = r.rows.iter().map(|row| row.keys[0].clone()).collect();
    assert_eq!(
        days,
        (1..=12).map(|d| ScalarValue::Int64(Some(d))).collect::<Vec<_>>()
    );
    assert_eq!(r.rows[9].key.as_deref(), Some("10"));
}

#[test]
fn unit_counts_pass_their_audit_through_sql_and_fail_without_bounding() {
    // D′ = D plus one unit with a row in each of 4 days. The audited output is the sum
    // of the released unit counts of those 4 days: under L0 = 1 the unit moves it by at
    // most 1 (noise of scale L0/ε = 1 per cell), without bounding by 4.
    let bounds = ContributionBounds {
        max_groups: 1,
        max_rows_per_group: 1,
    };
    let base = rows();
    let mut heavy = base.clone();
    for day in 1..=4 {
        heavy.push((10_000, day, "fr", 1.0));
    }
    let rt = current_thread_runtime();
    let audit = |bounded: bool| {
        let session = |rows: &[(i64, i64, &str, f64)]| {
            let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
            let mut s = PrivateSession::new(ctx, Arc::new(Accountant::pure(1e12).unwrap()));
            s.register_private("visits", table(rows, 2), "user_id", bounds)
                .unwrap();
            s
        };
        let (d, d_prime) = (session(&base), session(&heavy));
        let mut q = rt
            .block_on(d.plan_sql(
                "SELECT day, dp_count_units(1.0) FROM visits WHERE day IN (1, 2, 3, 4) GROUP BY day",
            ))
            .unwrap();
        if !bounded {
            q = q.without_contribution_bounding_for_tests();
        }
        audit_release(&rt, (&d, &d_prime), &q, 1.0, 6_000, |r| {
            r.rows.iter().map(|row| row.values[0].value as i64).sum::<i64>()
        })
    };
    let good = audit(true);
    println!("unit count, bounded: {good}");
    assert!(good.passed());
    let bad = audit(false);
    println!("unit count without bounding (negative control): {bad}");
    assert!(!bad.passed());
}

#[test]
fn unit_counts_through_the_dataframe_path_equal_the_sql_path() {
    let rt = runtime();
    let s = session(4, Accountant::pure(100.0).unwrap());
    let frame = rt
        .block_on(s.table("visits"))
        .unwrap()
        .filter(col("day").in_list(
            vec![datafusion::prelude::lit(2i64), datafusion::prelude::lit(3i64)],
            false,
        ))
        .unwrap()
        .aggregate(vec![col("day")], vec![dp_count_units(0.5)])
        .unwrap();
    let from_frame = GroupedQuery::from_frame(&frame).unwrap();
    let from_sql = rt
        .block_on(s.plan_sql("SELECT day, dp_count_units(0.5) FROM visits WHERE day IN (2, 3) GROUP BY day"))
        .unwrap();
    assert_eq!(from_frame, from_sql);
    let r = rt.block_on(s.release_with_key(&from_frame, key(7, 3))).unwrap();
    assert_eq!(r.rows.len(), 2);
    assert_eq!(r.rows[0].values[0].name, "count_units");
}

#[test]
fn listed_key_tuples_keep_only_their_rows_so_unlisted_combinations_spend_no_l0_slot() {
    // 200 users, each with one row at (1, "de") and one at (2, "de"). The keys are the
    // tuples (1, "de") and (2, "fr"): each column's values alone would also admit
    // (2, "de"), which nobody asked for. With L0 = 1 a user keeps one pair: if (2, "de")
    // reached the bounding, about half the users would spend their slot on it; with the
    // tuples filtered, every user keeps (1, "de").
    let rows: Vec<(i64, i64, &str, f64)> = (0..200)
        .flat_map(|u| [(u, 1, "de", 1.0), (u, 2, "de", 1.0)])
        .collect();
    let bounds = ContributionBounds {
        max_groups: 1,
        max_rows_per_group: 1,
    };
    let rt = runtime();
    for partitions in [1, 4] {
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
        let mut s = PrivateSession::new(ctx, Arc::new(Accountant::pure(1e6).unwrap()));
        s.register_private("visits", table(&rows, 3), "user_id", bounds)
            .unwrap();
        let q = GroupedQuery::grouped("visits", &["day", "country"])
            .public_key_tuples([["1", "de"], ["2", "fr"]])
            .count_units(1000.0);
        let r = rt.block_on(s.release_with_key(&q, key(8, 3))).unwrap();
        // ε = 1000 per cell (L0 = 1): discrete Laplace of scale 10⁻³, 0 with
        // probability 1 − 2e^(−1000)/(1 + e^(−1000)).
        let values: Vec<f64> = r.rows.iter().map(|row| row.values[0].value).collect();
        assert_eq!(values, [200.0, 0.0], "{partitions} partitions");
    }
}
