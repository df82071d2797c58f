//! Tables, sessions and a runtime shared by the integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use dpmech::Accountant;
use dpmech_datafusion::{
    ContributionBounds, GroupedQuery, PreparedRelease, PrivateSession, Release, ReleaseKey,
};

/// A memory table of `columns`, its rows cut into batches of 97 dealt over `partitions`
/// input partitions in turn.
pub fn memory_table(columns: Vec<(&str, ArrayRef)>, partitions: usize) -> Arc<MemTable> {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(schema.clone(), columns.into_iter().map(|c| c.1).collect()).unwrap();
    let mut parts = vec![Vec::new(); partitions.max(1)];
    for (i, start) in (0..batch.num_rows()).step_by(97).enumerate() {
        parts[i % partitions.max(1)].push(batch.slice(start, 97.min(batch.num_rows() - start)));
    }
    Arc::new(MemTable::try_new(schema, parts).unwrap())
}

/// Rows `(user_id, g)` of text.
pub fn keyed_rows(rows: &[(String, String)], partitions: usize) -> Arc<MemTable> {
    memory_table(
        vec![
            (
                "user_id",
                Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0.as_str()))),
            ),
            (
                "g",
                Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.as_str()))),
            ),
            (
                "v",
                Arc::new(Float64Array::from_iter_values(rows.iter().map(|_| 1.0))),
            ),
        ],
        partitions,
    )
}

/// A session over `provider` registered as `t` (unit `user_id`) with an accountant.
pub fn session_with(
    provider: Arc<dyn datafusion::catalog::TableProvider>,
    bounds: ContributionBounds,
    accountant: Accountant,
    partitions: usize,
) -> PrivateSession {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    let mut s = PrivateSession::new(ctx, Arc::new(accountant));
    s.register_private("t", provider, "user_id", bounds).unwrap();
    s
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

/// The runtime of the tests that run thousands of releases (the audits and the
/// frequency tests): a release's partitions run as concurrent streams on the test's own
/// thread, without a wake-up across threads per batch (on the multi-thread runtime that
/// overhead was a third of these tests' time). What a release returns depends on its key
/// alone, not on the runtime: `prepared` and `same_release_by_every_path` compare
/// releases made on [`runtime`].
pub fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The key of run `i` of a test: distinct for every run.
pub fn key(i: u64, salt: u8) -> ReleaseKey {
    let mut k = [salt; 32];
    k[..8].copy_from_slice(&i.to_le_bytes());
    ReleaseKey::from_bytes_insecure(k)
}

pub fn release(
    rt: &tokio::runtime::Runtime,
    s: &PrivateSession,
    q: &GroupedQuery,
    key: ReleaseKey,
) -> Release {
    rt.block_on(s.release_with_key(q, key)).unwrap()
}

/// The audit at pure `epsilon` of releasing `q` on sessions `d` and `d_prime`
/// (neighbours), each run under a fresh key drawn from the auditor's generator, the
/// audited output being `output` of the release. Each session prepares `q` once
/// ([`PrivateSession::prepare`]; test `prepared` checks that a prepared release equals
/// the direct one under every key) and charges every run.
pub fn audit_release(
    rt: &tokio::runtime::Runtime,
    (d, d_prime): (&PrivateSession, &PrivateSession),
    q: &GroupedQuery,
    epsilon: f64,
    samples: usize,
    output: impl Fn(&Release) -> i64,
) -> dpmech::audit::AuditReport {
    let (d, d_prime) = (
        rt.block_on(d.prepare(q)).unwrap(),
        rt.block_on(d_prime.prepare(q)).unwrap(),
    );
    let run = |s: &PreparedRelease<'_>, rng: &mut rand_chacha::ChaCha20Rng| {
        output(&rt.block_on(s.release_with_key(key_from(rng))).unwrap())
    };
    dpmech::audit::Auditor::pure(epsilon)
        .unwrap()
        .samples(samples)
        .audit(|rng| run(&d, rng), |rng| run(&d_prime, rng))
        .unwrap()
}

/// A release key of 32 bytes drawn from `rng` (an auditor's run).
pub fn key_from(rng: &mut rand_chacha::ChaCha20Rng) -> ReleaseKey {
    let mut k = [0u8; 32];
    rand_core::Rng::fill_bytes(rng, &mut k);
    ReleaseKey::from_bytes_insecure(k)
}

/// The days table of the quantile and spread tests: `(user, day, duration)`, 600 users, each with one visit on each of two days of 1..=3
/// (so bounding at L0 = 2, L∞ = 1 drops nothing), durations spread over [0, 1000) with
/// a NaN, a NULL-like negative and an out-of-range value among them.
pub fn day_rows() -> Vec<(i64, i64, f64)> {
    let mut out = Vec::new();
    for u in 0..600i64 {
        for r in 0..2 {
            let day = 1 + (u + r) % 3;
            let duration = match u {
                7 => f64::NAN,
                8 => -50.0,
                9 => 1e9,
                _ => ((u * 37 + r * 101) % 1000) as f64,
            };
            out.push((u, day, duration));
        }
    }
    out
}

/// Bounds that drop nothing from [`day_rows`].
pub const DAY_BOUNDS: ContributionBounds = ContributionBounds {
    max_groups: 2,
    max_rows_per_group: 1,
};

/// A memory table `(user_id, day, duration)` of `rows`.
pub fn day_table(rows: &[(i64, i64, f64)], partitions: usize) -> Arc<datafusion::datasource::MemTable> {
    let ints = |f: fn(&(i64, i64, f64)) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(rows.iter().map(f)))
    };
    let durations = Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.2)));
    memory_table(
        vec![
            ("user_id", ints(|r| r.0)),
            ("day", ints(|r| r.1)),
            ("duration", durations),
        ],
        partitions,
    )
}

/// A session over [`day_table`] as the private table `visits` (3 input partitions,
/// `partitions` target partitions), with a budget no test exhausts.
pub fn day_session(
    rows: &[(i64, i64, f64)],
    partitions: usize,
    bounds: ContributionBounds,
) -> PrivateSession {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    let mut s = PrivateSession::new(ctx, Arc::new(Accountant::pure(1e12).unwrap()));
    s.register_private("visits", day_table(rows, 3), "user_id", bounds)
        .unwrap();
    s
}

/// The audit at ε = 1 of the one-cell release `sql` (of aggregate `name`) on D — 21
/// units of one record each, `(u % 8) + 0.5` — against D′ = D plus one unit with 40
/// records of value `heavy` (4 000 samples each; `output` reads the audited value):
/// asserts that it PASSES **bounded** to one record per unit and, the negative control,
/// FAILS **without bounding**.
pub fn audit_heavy_unit(name: &str, sql: &str, heavy: f64, output: impl Fn(&Release) -> i64 + Copy) {
    let bounds = ContributionBounds {
        max_groups: 1,
        max_rows_per_group: 1,
    };
    let base: Vec<(i64, i64, f64)> = (0..21).map(|u| (u, 1, (u % 8) as f64 + 0.5)).collect();
    let mut with_heavy = base.clone();
    with_heavy.extend((0..40).map(|_| (10_000, 1, heavy)));
    let rt = current_thread_runtime();
    let audit = |bounded: bool| {
        let (d, d_prime) = (day_session(&base, 2, bounds), day_session(&with_heavy, 2, bounds));
        let mut q = rt.block_on(d.plan_sql(sql)).unwrap();
        if !bounded {
            q = q.without_contribution_bounding_for_tests();
        }
        audit_release(&rt, (&d, &d_prime), &q, 1.0, 4_000, output)
    };
    let good = audit(true);
    println!("{name}, bounded: {good}");
    assert!(good.passed());
    let bad = audit(false);
    println!("{name} without bounding (negative control): {bad}");
    assert!(!bad.passed());
}

/// Day `day`'s durations of [`day_rows`] read by the public rule of bounds [0, 1000]
/// (NaN as the midpoint 500, the rest clamped).
pub fn day_durations(day: i64) -> Vec<f64> {
    day_rows()
        .iter()
        .filter(|r| r.1 == day)
        .map(|r| {
            if r.2.is_nan() {
                500.0
            } else {
                r.2.clamp(0.0, 1000.0)
            }
        })
        .collect()
}

/// The release of `sql` over [`day_rows`] by its three paths — SQL text, a DataFrame
/// with the same `dp_` aggregates over `days`, and `builder` — at 1, 4 and 16 target
/// partitions: each path must read the same query, and every run release the same rows.
pub fn same_release_by_every_path(
    (sql, aggregates, days): (&str, Vec<datafusion::prelude::Expr>, i64),
    builder: &GroupedQuery,
    key: ReleaseKey,
) -> Release {
    let rt = runtime();
    let mut first: Option<Release> = None;
    for partitions in [1, 4, 16] {
        let s = day_session(&day_rows(), partitions, DAY_BOUNDS);
        let from_sql = rt.block_on(s.plan_sql(sql)).unwrap();
        let frame = rt
            .block_on(s.table("visits"))
            .unwrap()
            .filter(
                datafusion::prelude::col("day")
                    .in_list((1..=days).map(datafusion::prelude::lit).collect(), false),
            )
            .unwrap()
            .aggregate(vec![datafusion::prelude::col("day")], aggregates.clone())
            .unwrap();
        assert_eq!(&from_sql, builder);
        assert_eq!(&GroupedQuery::from_frame(&frame).unwrap(), builder);
        let release = rt.block_on(s.release_with_key(&from_sql, key.clone())).unwrap();
        let prepared = rt.block_on(s.prepare(&from_sql)).unwrap();
        assert_eq!(
            rt.block_on(prepared.release_with_key(key.clone())).unwrap(),
            release,
            "prepared, {partitions} partitions"
        );
        match &first {
            None => first = Some(release),
            Some(one) => assert_eq!(one.rows, release.rows, "{partitions} partitions"),
        }
    }
    first.expect("three runs")
}
