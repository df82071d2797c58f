//! Tables, sessions and a runtime shared by the integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use dpmech::Accountant;
use dpmech_datafusion::{ContributionBounds, GroupedQuery, PrivateSession, Release, ReleaseKey};

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
/// audited output being `output` of the release.
pub fn audit_release(
    rt: &tokio::runtime::Runtime,
    (d, d_prime): (&PrivateSession, &PrivateSession),
    q: &GroupedQuery,
    epsilon: f64,
    samples: usize,
    output: impl Fn(&Release) -> i64,
) -> dpmech::audit::AuditReport {
    let run = |s: &PrivateSession, rng: &mut rand_chacha::ChaCha20Rng| {
        let mut k = [0u8; 32];
        rand_core::Rng::fill_bytes(rng, &mut k);
        output(&release(rt, s, q, ReleaseKey::from_bytes_insecure(k)))
    };
    dpmech::audit::Auditor::pure(epsilon)
        .unwrap()
        .samples(samples)
        .audit(|rng| run(d, rng), |rng| run(d_prime, rng))
        .unwrap()
}
