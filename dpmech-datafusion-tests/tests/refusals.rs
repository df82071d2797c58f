//! Budget first, but a refused query spends nothing: every public parameter is
//! validated and the query planned (columns exist, types fit, grids, sensitivities and
//! thresholds representable) before the charge, on the builder, SQL and DataFrame
//! paths; and no combination of extreme bounds panics.

use std::sync::Arc;

use crate::common::{memory_table, runtime, session_with};
use datafusion::arrow::array::{ArrayRef, BinaryArray, Float64Array, StringArray};
use dpmech::Accountant;
use dpmech::statistics::Bounds;
use dpmech_datafusion::{ContributionBounds, GroupedQuery, PrivateSession};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Rows `(user_id, g, v, blob)`: 40 units over 4 groups, a binary column.
fn table() -> Arc<datafusion::datasource::MemTable> {
    let n = 160;
    let users: Vec<String> = (0..n).map(|i| format!("u{}", i % 40)).collect();
    let groups: Vec<String> = (0..n).map(|i| format!("g{}", i % 4)).collect();
    let blobs: Vec<&[u8]> = (0..n)
        .map(|i| if i % 2 == 0 { &b"\xff\xfe"[..] } else { &b"ok"[..] })
        .collect();
    memory_table(
        vec![
            (
                "user_id",
                Arc::new(StringArray::from_iter_values(users)) as ArrayRef,
            ),
            ("g", Arc::new(StringArray::from_iter_values(groups))),
            (
                "v",
                Arc::new(Float64Array::from_iter_values((0..n).map(|i| i as f64))),
            ),
            ("blob", Arc::new(BinaryArray::from_vec(blobs))),
        ],
        2,
    )
}

fn session(bounds: ContributionBounds) -> PrivateSession {
    session_with(table(), bounds, Accountant::approximate(1e6, 0.5).unwrap(), 2)
}

const BOUNDS: ContributionBounds = ContributionBounds {
    max_groups: 2,
    max_rows_per_group: 3,
};

#[test]
fn refusals_of_the_builder_spend_nothing() {
    let rt = runtime();
    let s = session(BOUNDS);
    let unit = Bounds::new(0.0, 1.0).unwrap();
    let refused: Vec<(&str, GroupedQuery)> = vec![
        (
            "unknown value column",
            GroupedQuery::new("t", "g")
                .public_keys(["g0"])
                .sum("nope", unit, 1.0),
        ),
        (
            "unknown group column",
            GroupedQuery::new("t", "nope").public_keys(["g0"]).count(1.0),
        ),
        (
            "unknown group column, private keys",
            GroupedQuery::new("t", "nope").private_keys(1.0, 1e-6).count(1.0),
        ),
        (
            "unknown table",
            GroupedQuery::new("nope", "g").public_keys(["g0"]).count(1.0),
        ),
        (
            "a value column that is not a number",
            GroupedQuery::new("t", "g")
                .public_keys(["g0"])
                .mean("blob", unit, 1.0),
        ),
        (
            "a group column whose values are not text",
            GroupedQuery::new("t", "blob").private_keys(1.0, 1e-6).count(1.0),
        ),
        (
            "a grid below the smallest float",
            GroupedQuery::new("t", "g")
                .public_keys(["g0"])
                .sum("v", Bounds::new(0.0, 1e-305).unwrap(), 1.0),
        ),
        (
            "a selection ε too small for any noise",
            GroupedQuery::new("t", "g").private_keys(1e-300, 1e-6).count(1.0),
        ),
        (
            "a count ε too small for any noise",
            GroupedQuery::new("t", "g").public_keys(["g0"]).count(1e-300),
        ),
        ("no aggregate", GroupedQuery::new("t", "g").public_keys(["g0"])),
    ];
    for (what, q) in refused {
        let result = rt.block_on(s.release(&q));
        println!("{what}: {result:?}");
        assert!(result.is_err(), "{what} was released");
        assert_eq!(s.accountant().charges(), 0, "{what} was charged");
    }
}

#[test]
fn refusals_of_the_sql_path_spend_nothing() {
    let rt = runtime();
    let s = session(BOUNDS);
    for text in [
        "SELECT g, dp_sum(nope, 0, 1, 1) FROM t WHERE g IN ('g0') GROUP BY g",
        "SELECT nope, dp_count(1) FROM t GROUP BY nope HAVING dp_partition_selection(1, 1e-6)",
        "SELECT g, dp_mean(blob, 0, 1, 1) FROM t WHERE g IN ('g0') GROUP BY g",
        "SELECT blob, dp_count(1) FROM t GROUP BY blob HAVING dp_partition_selection(1, 1e-6)",
        "SELECT g, dp_sum(v, 0, 1e-305, 1) FROM t WHERE g IN ('g0') GROUP BY g",
        "SELECT g, dp_count(1) FROM t GROUP BY g HAVING dp_partition_selection(1e-300, 1e-6)",
        "SELECT g, dp_count(1e-300) FROM t WHERE g IN ('g0') GROUP BY g",
    ] {
        let result = rt.block_on(s.sql(text));
        println!("{text}: {result:?}");
        assert!(result.is_err(), "{text} was released");
        assert_eq!(s.accountant().charges(), 0, "{text} was charged");
    }
}

/// Values at the ends of the `f64` range and around the grid's limits.
const EXTREMES: [f64; 15] = [
    -f64::MAX,
    -1e305,
    -1e300,
    -1.0,
    -1e-305,
    -5e-324,
    0.0,
    5e-324,
    1e-308,
    1e-305,
    1e-300,
    1.0,
    1e300,
    1e305,
    f64::MAX,
];

#[test]
fn no_bounds_and_contribution_bounds_panic_and_every_refusal_is_free() {
    // A proptest over extreme public parameters (fixed seed): Bounds from EXTREMES,
    // contribution bounds up to u32::MAX, ε from 1e-300 to 1e300. Each query either
    // releases values that are not NaN or is refused without a charge; never a panic.
    let rt = runtime();
    let parameters = (
        0..EXTREMES.len(),
        0..EXTREMES.len(),
        prop::sample::select(vec![1u32, 2, 3, 1000, u32::MAX]),
        prop::sample::select(vec![1u32, 3, 1000, u32::MAX]),
        prop::sample::select(vec![1e-300, 1e-10, 0.1, 1.0, 10.0, 1e300]),
        any::<bool>(),
    );
    let config = Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let (released, refused) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    runner
        .run(&parameters, |(lo, hi, max_groups, max_rows, epsilon, private)| {
            let Ok(bounds) = Bounds::new(EXTREMES[lo], EXTREMES[hi]) else {
                refused.set(refused.get() + 1);
                return Ok(());
            };
            let s = session(ContributionBounds {
                max_groups,
                max_rows_per_group: max_rows,
            });
            let q = GroupedQuery::new("t", "g")
                .count(epsilon)
                .sum("v", bounds, epsilon)
                .mean("v", bounds, epsilon);
            let q = if private {
                q.private_keys(epsilon, 1e-6)
            } else {
                q.public_keys(["g0", "g1", "g9"])
            };
            match rt.block_on(s.release(&q)) {
                Ok(release) => {
                    released.set(released.get() + 1);
                    prop_assert_eq!(s.accountant().charges(), 1);
                    for row in &release.rows {
                        for v in &row.values {
                            prop_assert!(!v.value.is_nan(), "{:?}", v);
                            prop_assert!(!v.interval.0.is_nan() && !v.interval.1.is_nan(), "{:?}", v);
                        }
                    }
                }
                Err(e) => {
                    refused.set(refused.get() + 1);
                    println!("refused: {e}");
                    prop_assert_eq!(s.accountant().charges(), 0, "{} charged", e)
                }
            }
            Ok(())
        })
        .unwrap();
    println!("{} released, {} refused", released.get(), refused.get());
    // Both outcomes occur, so both branches were checked.
    assert!(released.get() >= 10 && refused.get() >= 10);
}
