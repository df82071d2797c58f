//! A release registers nothing in the user's `SessionContext`: completed, failed or
//! cancelled mid-flight, it leaves the context exactly as it was, and several private
//! sessions can share clones of one context.

use std::sync::Arc;

use crate::common::{key, keyed_rows, runtime, session_with};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::catalog::streaming::StreamingTable;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::prelude::SessionContext;
use dpmech::Accountant;
use dpmech_datafusion::{ContributionBounds, GroupedQuery, PrivateSession};
use futures::FutureExt;

const BOUNDS: ContributionBounds = ContributionBounds {
    max_groups: 2,
    max_rows_per_group: 1,
};

/// What a context has registered: its functions and its tables, sorted.
fn registered(ctx: &SessionContext) -> Vec<String> {
    let state = ctx.state();
    let mut names: Vec<String> = state
        .scalar_functions()
        .keys()
        .map(|f| format!("scalar {f}"))
        .chain(
            state
                .aggregate_functions()
                .keys()
                .map(|f| format!("aggregate {f}")),
        )
        .chain(state.window_functions().keys().map(|f| format!("window {f}")))
        .collect();
    for catalog in ctx.catalog_names() {
        let catalog = ctx.catalog(&catalog).unwrap();
        for schema in catalog.schema_names() {
            for table in catalog.schema(&schema).unwrap().table_names() {
                names.push(format!("table {schema}.{table}"));
            }
        }
    }
    names.sort();
    names
}

/// A partition that never yields a row: a release over it stays in flight.
#[derive(Debug)]
struct Stalled(SchemaRef);

impl PartitionStream for Stalled {
    fn schema(&self) -> &SchemaRef {
        &self.0
    }
    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        Box::pin(RecordBatchStreamAdapter::new(
            self.0.clone(),
            futures::stream::pending(),
        ))
    }
}

fn rows() -> Vec<(String, String)> {
    (0..200)
        .map(|u| (format!("u{u}"), format!("g{}", u % 3)))
        .collect()
}

#[test]
fn a_completed_failed_or_cancelled_release_leaves_the_context_as_it_was() {
    let rt = runtime();
    let ctx = SessionContext::new();
    ctx.register_table("mine", keyed_rows(&rows(), 1)).unwrap();
    let before = registered(&ctx);
    let mut s = PrivateSession::new(ctx.clone(), Arc::new(Accountant::pure(100.0).unwrap()));
    s.register_private("t", keyed_rows(&rows(), 2), "user_id", BOUNDS)
        .unwrap();
    let schema = keyed_rows(&rows(), 1).schema();
    let stalled = StreamingTable::try_new(schema.clone(), vec![Arc::new(Stalled(schema))]).unwrap();
    s.register_private("stalled", Arc::new(stalled), "user_id", BOUNDS)
        .unwrap();
    assert_eq!(registered(&ctx), before, "registering a private table");

    let q = |table: &str| GroupedQuery::new(table, "g").public_keys(["g0", "g1"]).count(1.0);
    // Completed, through the builder and through SQL.
    rt.block_on(s.release_with_key(&q("t"), key(1, 1))).unwrap();
    rt.block_on(s.sql("SELECT g, dp_count(1) FROM t WHERE g IN ('g0') GROUP BY g"))
        .unwrap();
    assert_eq!(registered(&ctx), before, "completed releases");
    // Failed: refused before the charge, and refused by the budget.
    assert!(
        rt.block_on(s.release(&GroupedQuery::new("t", "nope").count(1.0)))
            .is_err()
    );
    let greedy = GroupedQuery::new("t", "g").public_keys(["g0"]).count(1000.0);
    assert!(rt.block_on(s.release(&greedy)).is_err());
    assert_eq!(registered(&ctx), before, "failed releases");
    // Cancelled mid-flight: the future is polled until it waits for rows that never
    // come, then dropped (a timeout, a select!, a client gone).
    let charges = s.accountant().charges();
    rt.block_on(async {
        let stalled = q("stalled");
        let mut in_flight = Box::pin(s.release_with_key(&stalled, key(2, 1)));
        for _ in 0..20 {
            assert!(
                (&mut in_flight).now_or_never().is_none(),
                "a stalled release completed"
            );
            tokio::task::yield_now().await;
        }
    });
    assert_eq!(
        s.accountant().charges(),
        charges + 1,
        "the cancelled release was charged"
    );
    assert_eq!(registered(&ctx), before, "a cancelled release");
}

#[test]
fn two_sessions_over_clones_of_one_context_both_release() {
    let rt = runtime();
    let ctx = SessionContext::new();
    let sessions: Vec<PrivateSession> = (0..2).map(|_| session_with_context(ctx.clone())).collect();
    let q = GroupedQuery::new("t", "g")
        .public_keys(["g0", "g1", "g2"])
        .count(1.0);
    let a = rt.block_on(sessions[0].release_with_key(&q, key(3, 1))).unwrap();
    let b = rt.block_on(sessions[1].release_with_key(&q, key(3, 1))).unwrap();
    assert_eq!(
        a, b,
        "the same table and key release the same values in both sessions"
    );
    assert_eq!(a.rows.len(), 3);
    // A session built the usual way agrees too.
    let c = session_with(keyed_rows(&rows(), 2), BOUNDS, Accountant::pure(10.0).unwrap(), 4);
    assert_eq!(rt.block_on(c.release_with_key(&q, key(3, 1))).unwrap(), a);
}

fn session_with_context(ctx: SessionContext) -> PrivateSession {
    let mut s = PrivateSession::new(ctx, Arc::new(Accountant::pure(10.0).unwrap()));
    s.register_private("t", keyed_rows(&rows(), 2), "user_id", BOUNDS)
        .unwrap();
    s
}
