//! The private SQL path end to end: bit-identical across partitionings, budget first,
//! total on bad data, and audited at its claimed ε (with the unbounded plan as the
//! negative control).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use datafusion::arrow::array::{Float64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::catalog::streaming::StreamingTable;
use datafusion::datasource::MemTable;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::prelude::{SessionConfig, SessionContext};
use dpmech::audit::Auditor;
use dpmech::statistics::Bounds;
use dpmech::{Accountant, Error};
use dpmech_datafusion::{
    ContributionBounds, DpError, DpmechCodec, GroupedQuery, PlanRunner, PreparedRelease, PrivateSession,
    Release, ReleaseKey,
};

use crate::common::{current_thread_runtime, key_from};

/// Rows `(user, day, duration)`, in one input partition.
fn table(rows: &[(String, String, f64)]) -> Arc<MemTable> {
    table_in_partitions(rows, 1)
}

/// Rows `(user, day, duration)`, their batches of 97 rows dealt over `partitions` input
/// partitions in turn.
fn table_in_partitions(rows: &[(String, String, f64)], partitions: usize) -> Arc<MemTable> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("user_id", DataType::Utf8, false),
        Field::new("day", DataType::Utf8, true),
        Field::new("duration", DataType::Float64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0.clone()))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.clone()))),
            Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.2))),
        ],
    )
    .unwrap();
    // Several batches so that repartitioning has something to split.
    let mut parts = vec![Vec::new(); partitions];
    for (i, start) in (0..batch.num_rows()).step_by(97).enumerate() {
        parts[i % partitions].push(batch.slice(start, 97.min(batch.num_rows() - start)));
    }
    Arc::new(MemTable::try_new(schema, parts).unwrap())
}

/// 300 users over 5 days, a few rows each, deterministic.
fn visits() -> Vec<(String, String, f64)> {
    let mut rows = Vec::new();
    for u in 0..300u64 {
        for r in 0..(1 + u % 4) {
            let day = format!("d{}", (u * 7 + r * 3) % 5);
            rows.push((format!("u{u}"), day, ((u * 37 + r * 11) % 1000) as f64 + 0.25));
        }
    }
    rows
}

const BOUNDS: ContributionBounds = ContributionBounds {
    max_groups: 2,
    max_rows_per_group: 1,
};

fn session(provider: Arc<dyn TableProvider>, partitions: usize, budget: f64) -> PrivateSession {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    let mut s = PrivateSession::new(ctx, Arc::new(Accountant::pure(budget).unwrap()));
    s.register_private("visits", provider, "user_id", BOUNDS).unwrap();
    s
}

fn query() -> GroupedQuery {
    GroupedQuery::new("visits", "day")
        .public_keys(["d0", "d1", "d2", "d3", "d4", "d9"])
        .count(0.5)
        .sum("duration", Bounds::new(0.0, 1000.0).unwrap(), 0.25)
        .mean("duration", Bounds::new(0.0, 1000.0).unwrap(), 0.25)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

fn release(s: &PrivateSession, q: &GroupedQuery, key: [u8; 32]) -> Release {
    runtime()
        .block_on(s.release_with_key(q, ReleaseKey::from_bytes_insecure(key)))
        .unwrap()
}

#[test]
fn one_release_key_gives_bit_identical_results_at_1_4_16_partitions() {
    let rows = visits();
    let results: Vec<Release> = [1, 4, 16]
        .iter()
        .map(|&p| {
            release(
                &session(table_in_partitions(&rows, 3), p, 100.0),
                &query(),
                [1; 32],
            )
        })
        .collect();
    for r in &results[1..] {
        assert_eq!(r, &results[0], "partitioning changed a released value");
    }
    let other = release(&session(table(&rows), 4, 100.0), &query(), [2; 32]);
    assert_ne!(
        other.rows, results[0].rows,
        "two release keys must give different noise"
    );
    // Public keys: every listed key is released, the empty "d9" too.
    let keys: Vec<_> = results[0].rows.iter().map(|r| r.key.clone().unwrap()).collect();
    assert_eq!(keys, ["d0", "d1", "d2", "d3", "d4", "d9"]);
    for row in &results[0].rows {
        println!("{:?}: {:?}", row.key, row.values);
    }
}

#[test]
fn a_unit_whose_rows_span_input_partitions_is_bounded_once() {
    // One unit with 97 rows in each of 5 days: its batches are dealt over 3 input
    // partitions, so only a repartition by unit brings them together.
    let rows: Vec<(String, String, f64)> = (0..5 * 97)
        .map(|i| ("u0".to_string(), format!("d{}", i / 97), 1.0))
        .collect();
    let provider = table_in_partitions(&rows, 3);
    // ε = 2000 over L0 = 2 cells of sensitivity 1: the discrete Laplace noise is non-zero
    // with probability 2e^(−1000)/(1 + e^(−1000)) per cell, i.e. never.
    let q = GroupedQuery::new("visits", "day")
        .public_keys(["d0", "d1", "d2", "d3", "d4"])
        .count(2000.0);
    for partitions in [1, 2, 4, 16] {
        let r = release(&session(provider.clone(), partitions, 1e4), &q, [5; 32]);
        let counts: Vec<f64> = r.rows.iter().map(|row| row.values[0].value).collect();
        let total: f64 = counts.iter().sum();
        let limit = f64::from(BOUNDS.max_groups * BOUNDS.max_rows_per_group);
        assert_eq!(total, limit, "{partitions} partitions: counts {counts:?}");
        assert_eq!(
            counts.iter().filter(|&&c| c != 0.0).count(),
            BOUNDS.max_groups as usize
        );
    }
}

#[test]
fn plans_shipped_through_the_plan_codec_release_bit_identical_values() {
    // What a distributed runner does: the physical plan (scan, repartition by unit,
    // bounding operator, per-row functions, aggregates) to protobuf bytes and back,
    // then run. Public and private keys, at 1 and 4 target partitions.
    let rows = visits();
    let private = GroupedQuery::new("visits", "day")
        .private_keys(0.5, 1e-3)
        .count(0.5)
        .mean("duration", Bounds::new(0.0, 1000.0).unwrap(), 0.5);
    let session = |partitions: usize| {
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
        let mut s = PrivateSession::new(ctx, Arc::new(Accountant::approximate(100.0, 0.5).unwrap()));
        s.register_private("visits", table_in_partitions(&rows, 3), "user_id", BOUNDS)
            .unwrap();
        s
    };
    for q in [query(), private] {
        for partitions in [1, 4] {
            let direct = release(&session(partitions), &q, [6; 32]);
            let shipped = session(partitions).with_runner(Arc::new(ThroughTheCodec));
            let shipped = release(&shipped, &q, [6; 32]);
            assert!(!direct.rows.is_empty());
            assert_eq!(shipped, direct, "{partitions} partitions");
        }
    }
}

/// Runs a plan as a distributed runner ships it: to protobuf bytes with the plan codec
/// and back, then in this process.
#[derive(Debug)]
struct ThroughTheCodec;

#[async_trait::async_trait]
impl PlanRunner for ThroughTheCodec {
    async fn collect(
        &self,
        plan: Arc<dyn datafusion::physical_plan::ExecutionPlan>,
        state: &datafusion::execution::SessionState,
    ) -> datafusion::common::Result<Vec<RecordBatch>> {
        use datafusion_proto::bytes::{
            physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
        };
        let codec = DpmechCodec::new();
        let bytes = physical_plan_to_bytes_with_extension_codec(plan, &codec)?;
        let plan = physical_plan_from_bytes_with_extension_codec(&bytes, &state.task_ctx(), &codec)?;
        datafusion::physical_plan::collect(plan, state.task_ctx()).await
    }
}

/// One partition of rows that counts how often it is read.
#[derive(Debug)]
struct CountingPartition {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    reads: Arc<AtomicUsize>,
}

impl PartitionStream for CountingPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }
    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        self.reads.fetch_add(1, Ordering::SeqCst);
        let batches = self.batches.clone().into_iter().map(Ok);
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::iter(batches),
        ))
    }
}

#[test]
fn a_refused_budget_runs_nothing() {
    // The visits as one partition that counts how often its rows are read. Planning (also
    // of a refused release) reads none; only an accepted release does.
    let reads = Arc::new(AtomicUsize::new(0));
    let memory = table(&visits());
    let schema = memory.schema();
    let batches = runtime()
        .block_on(SessionContext::new().read_table(memory).unwrap().collect())
        .unwrap();
    let partition = CountingPartition {
        schema: schema.clone(),
        batches,
        reads: reads.clone(),
    };
    let provider = Arc::new(StreamingTable::try_new(schema, vec![Arc::new(partition)]).unwrap());
    let s = session(provider, 4, 1.5);
    let q = query(); // ε = 1
    release(&s, &q, [3; 32]);
    let after_first = reads.load(Ordering::SeqCst);
    assert!(after_first >= 1, "the accepted release read the table");
    let refused = runtime().block_on(s.release_with_key(&q, ReleaseKey::from_bytes_insecure([4; 32])));
    assert!(
        matches!(refused, Err(DpError::Privacy(Error::BudgetExceeded { .. }))),
        "{refused:?}"
    );
    assert_eq!(
        reads.load(Ordering::SeqCst),
        after_first,
        "a refused release read nothing"
    );
}

#[test]
fn bad_records_are_read_by_the_rule_and_move_cells_by_at_most_the_bound() {
    // D′ adds one unit whose values are NaN, ±∞, huge and negative, in many groups.
    // With the same release key the noise of every cell is identical, so released
    // differences are the differences of the bounded exact aggregates.
    let rows = visits();
    let mut with_bad = rows.clone();
    for (i, v) in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -5.0]
        .iter()
        .enumerate()
    {
        with_bad.push(("bad".into(), format!("d{}", i % 5), *v));
    }
    let q = GroupedQuery::new("visits", "day")
        .public_keys(["d0", "d1", "d2", "d3", "d4"])
        .count(0.5)
        .sum("duration", Bounds::new(0.0, 1000.0).unwrap(), 0.5);
    let a = release(&session(table(&rows), 4, 100.0), &q, [5; 32]);
    let b = release(&session(table(&with_bad), 4, 100.0), &q, [5; 32]);
    let mut changed = 0;
    for (ra, rb) in a.rows.iter().zip(&b.rows) {
        let dc = (rb.values[0].value - ra.values[0].value).abs();
        let ds = (rb.values[1].value - ra.values[1].value).abs();
        assert!(dc <= f64::from(BOUNDS.max_rows_per_group), "count moved by {dc}");
        assert!(
            ds <= 1000.0 * f64::from(BOUNDS.max_rows_per_group),
            "sum moved by {ds}"
        );
        changed += usize::from(dc > 0.0 || ds > 0.0);
    }
    assert!(
        changed >= 1 && changed <= BOUNDS.max_groups as usize,
        "{changed} cells changed"
    );
}

#[test]
fn the_sql_path_passes_its_audit_and_fails_without_bounding() {
    // D′ = D plus one unit with 8 rows in each of 4 days. Audit the count of "d0", with
    // Laplace noise (ε-DP) and with discrete Gaussian noise (ρ-zCDP).
    let rows = visits();
    let mut with_heavy = rows.clone();
    for day in 0..4 {
        for r in 0..8 {
            with_heavy.push(("heavy".into(), format!("d{day}"), f64::from(r)));
        }
    }
    let rt = current_thread_runtime();
    let audit = |bounded: bool, zcdp: bool| {
        let mut q = GroupedQuery::new("visits", "day").public_keys(["d0"]);
        q = if zcdp { q.count(0.05).zcdp() } else { q.count(1.0) };
        if !bounded {
            q = q.without_contribution_bounding_for_tests();
        }
        let session = |rows: &[(String, String, f64)]| {
            let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
            let budget = if zcdp {
                Accountant::zcdp(1e12)
            } else {
                Accountant::pure(1e12)
            };
            let mut s = PrivateSession::new(ctx, Arc::new(budget.unwrap()));
            s.register_private("visits", table(rows), "user_id", BOUNDS)
                .unwrap();
            s
        };
        let (d, d_prime) = (session(&rows), session(&with_heavy));
        let (d, d_prime) = (
            rt.block_on(d.prepare(&q)).unwrap(),
            rt.block_on(d_prime.prepare(&q)).unwrap(),
        );
        let run = |s: &PreparedRelease<'_>, rng: &mut rand_chacha::ChaCha20Rng| {
            let r = rt.block_on(s.release_with_key(key_from(rng))).unwrap();
            r.rows[0].values[0].value as i64
        };
        // ε-DP at ε = 1; ρ = 0.05-zCDP claimed as the (ε, δ) of its tight conversion.
        let auditor = if zcdp {
            let delta = 1e-6;
            let epsilon = dpmech::composition::zcdp::epsilon_tight(0.05, delta).unwrap();
            Auditor::approximate(epsilon, delta).unwrap()
        } else {
            Auditor::pure(1.0).unwrap()
        };
        auditor
            .samples(6_000)
            .audit(|rng| run(&d, rng), |rng| run(&d_prime, rng))
            .unwrap()
    };
    for zcdp in [false, true] {
        let good = audit(true, zcdp);
        println!("bounded{}: {good}", if zcdp { ", ρ-zCDP" } else { "" });
        assert!(good.passed());
        let bad = audit(false, zcdp);
        println!(
            "unbounded (negative control){}: {bad}",
            if zcdp { ", ρ-zCDP" } else { "" }
        );
        assert!(!bad.passed());
    }
}

#[test]
fn unparsable_text_values_are_records_not_errors() {
    // A text column: "abc" and "" cannot be read as numbers. They must follow the NULL/NaN
    // rule (the bounds' midpoint) instead of failing the query, which would reveal them.
    let schema = Arc::new(Schema::new(vec![
        Field::new("user_id", DataType::Utf8, false),
        Field::new("day", DataType::Utf8, false),
        Field::new("duration", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(vec!["a", "b", "c"])),
            Arc::new(StringArray::from(vec!["d0", "d0", "d0"])),
            Arc::new(StringArray::from(vec![Some("12.5"), Some("abc"), Some("")])),
        ],
    )
    .unwrap();
    let provider = Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap());
    let q = GroupedQuery::new("visits", "day").public_keys(["d0"]).sum(
        "duration",
        Bounds::new(0.0, 100.0).unwrap(),
        1.0,
    );
    let r = release(&session(provider, 1, 10.0), &q, [6; 32]);
    assert_eq!(r.rows.len(), 1);
    assert!(r.rows[0].values[0].value.is_finite());
}

#[test]
fn sql_text_is_the_same_release_as_the_builder() {
    let text = "SELECT day, dp_count(0.5), dp_sum(duration, 0, 1000, 0.25) AS total, \
                dp_mean(visits.duration, 0, 1000, 0.25) \
                FROM visits WHERE day IN ('d0', 'd1', 'd2', 'd3', 'd4', 'd9') GROUP BY day";
    let rows = visits();
    let s = session(table(&rows), 4, 100.0);
    let parsed = runtime().block_on(s.plan_sql(text)).unwrap();
    assert_eq!(parsed, query());
    assert_eq!(release(&s, &parsed, [7; 32]), release(&s, &query(), [7; 32]));
    // Private keys through HAVING, the table under an alias, columns renamed.
    let private = runtime()
        .block_on(s.plan_sql(
            "SELECT v.day AS d, dp_count(1) AS n FROM visits v GROUP BY v.day \
             HAVING dp_partition_selection(0.5, 1e-6)",
        ))
        .unwrap();
    assert_eq!(
        private,
        GroupedQuery::new("visits", "day")
            .private_keys(0.5, 1e-6)
            .count(1.0)
    );
    // Aggregates are released in the order the SELECT lists them; negative bounds.
    let reordered = runtime()
        .block_on(s.plan_sql(
            "SELECT dp_sum(duration, -5, 5, 0.25), day, dp_count(0.5) FROM visits \
             WHERE day IN ('d0') GROUP BY day",
        ))
        .unwrap();
    assert_eq!(
        reordered,
        GroupedQuery::new("visits", "day")
            .public_keys(["d0"])
            .sum("duration", Bounds::new(-5.0, 5.0).unwrap(), 0.25)
            .count(0.5)
    );
    // The session's own SQL entry point charges and releases (a fresh key).
    let released = runtime().block_on(s.sql(text)).unwrap();
    assert_eq!(released.rows.len(), 6);
}

#[test]
fn a_dataframe_aggregate_with_the_dp_functions_is_the_same_release() {
    use datafusion::prelude::{col, lit};
    use dpmech_datafusion::functions::{dp_count, dp_mean, dp_partition_selection, dp_sum};
    let s = session(table(&visits()), 4, 100.0);
    let rt = runtime();
    let keys = ["d0", "d1", "d2", "d3", "d4", "d9"].map(lit).to_vec();
    let frame = rt
        .block_on(s.table("visits"))
        .unwrap()
        .filter(col("day").in_list(keys, false))
        .unwrap()
        .aggregate(
            vec![col("day")],
            vec![
                dp_count(0.5),
                dp_sum(col("duration"), 0.0, 1000.0, 0.25),
                dp_mean(col("duration"), 0.0, 1000.0, 0.25).alias("mean"),
            ],
        )
        .unwrap();
    assert_eq!(GroupedQuery::from_frame(&frame).unwrap(), query());
    let released = rt.block_on(s.release_frame(frame.clone())).unwrap();
    assert_eq!(released.rows.len(), 6);
    assert_eq!(s.accountant().charges(), 1);
    // Private keys: the selection among the aggregates.
    let private = rt
        .block_on(s.table("visits"))
        .unwrap()
        .aggregate(
            vec![col("day")],
            vec![dp_count(1.0), dp_partition_selection(0.5, 1e-6)],
        )
        .unwrap();
    assert_eq!(
        GroupedQuery::from_frame(&private).unwrap(),
        GroupedQuery::new("visits", "day")
            .private_keys(0.5, 1e-6)
            .count(1.0)
    );
    // Running the frame, or a dp_ function, in the engine directly fails before a row
    // is read, and charges nothing; so does any frame outside the private form.
    assert!(rt.block_on(frame.collect()).is_err());
    let whole = rt.block_on(s.table("visits")).unwrap();
    assert!(rt.block_on(whole.collect()).is_err());
    let not_private = rt
        .block_on(s.table("visits"))
        .unwrap()
        .filter(col("day").in_list(vec![lit("d0")], false))
        .unwrap()
        .aggregate(
            vec![col("day")],
            vec![datafusion::functions_aggregate::expr_fn::count(col("duration"))],
        )
        .unwrap();
    assert!(matches!(
        rt.block_on(s.release_frame(not_private)),
        Err(DpError::UnsupportedQuery(_))
    ));
    let ctx = SessionContext::new();
    ctx.register_table("raw", table(&visits())).unwrap();
    let unbounded = rt
        .block_on(ctx.table("raw"))
        .unwrap()
        .aggregate(vec![col("day")], vec![dp_count(1.0)])
        .unwrap();
    assert!(rt.block_on(unbounded.collect()).is_err());
    assert_eq!(s.accountant().charges(), 1);
}

#[test]
fn a_dataframe_registers_as_a_private_table() {
    // A DataFrame (here: the rows of users below u200, the durations halved) as the
    // private table, against a memory table holding the same rows.
    use datafusion::prelude::{col, lit};
    let rows = visits();
    let ctx = SessionContext::new();
    let frame = ctx
        .read_table(table_in_partitions(&rows, 3))
        .unwrap()
        .filter(col("user_id").lt(lit("u200")))
        .unwrap()
        .select(vec![
            col("user_id"),
            col("day"),
            (col("duration") / lit(2.0)).alias("duration"),
        ])
        .unwrap();
    let same: Vec<(String, String, f64)> = rows
        .iter()
        .filter(|r| r.0.as_str() < "u200")
        .map(|r| (r.0.clone(), r.1.clone(), r.2 / 2.0))
        .collect();
    assert!(same.len() < rows.len());
    let from_frame = release(&session(frame.into_view(), 4, 100.0), &query(), [8; 32]);
    let from_table = release(&session(table(&same), 4, 100.0), &query(), [8; 32]);
    assert_eq!(from_frame, from_table);
}

#[test]
fn a_zcdp_release_is_charged_rho_to_a_zcdp_budget() {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    let mut s = PrivateSession::new(ctx, Arc::new(Accountant::zcdp(1.0).unwrap()));
    s.register_private("visits", table(&visits()), "user_id", BOUNDS)
        .unwrap();
    let q = query().zcdp(); // ρ = 0.5 + 0.25 + 0.25
    let r = release(&s, &q, [9; 32]);
    assert_eq!(r.loss, dpmech::PrivacyLoss::zcdp(1.0).unwrap());
    assert_eq!(r.rows.len(), 6);
    let refused = runtime().block_on(s.release_with_key(&q, ReleaseKey::from_bytes_insecure([10; 32])));
    assert!(
        matches!(refused, Err(DpError::Privacy(Error::BudgetExceeded { .. }))),
        "{refused:?}"
    );
    // The same query as ε-DP is a different release (Laplace noise).
    let pure = release(&session(table(&visits()), 2, 100.0), &query(), [9; 32]);
    assert_ne!(pure.rows, r.rows);
}

#[test]
fn sql_outside_the_private_form_is_refused_before_any_charge() {
    let rows = visits();
    let s = session(table(&rows), 2, 1.0);
    for bad in [
        "SELECT day, count(*) FROM visits WHERE day IN ('d0') GROUP BY day",
        "SELECT day, dp_count(0.5) FROM visits GROUP BY day",
        "SELECT day, dp_count(0.5) FROM visits WHERE duration > 3 GROUP BY day",
        "SELECT day, dp_count(0.5) FROM visits a JOIN visits b ON a.day = b.day WHERE day IN ('d0') GROUP BY day",
        "SELECT day, dp_count(0.5) FROM visits WHERE day IN ('d0') GROUP BY day ORDER BY day",
        "SELECT day, dp_count(0.5) FROM visits WHERE day IN ('d0') GROUP BY day LIMIT 1",
        "SELECT day, user_id, dp_count(0.5) FROM visits WHERE day IN ('d0') GROUP BY day",
        "SELECT day, dp_count(-1) FROM visits WHERE day IN ('d0') GROUP BY day",
        "SELECT day, dp_sum(duration, 10, 0, 0.5) FROM visits WHERE day IN ('d0') GROUP BY day",
        "SELECT day, dp_mean(duration, 0, 10) FROM visits WHERE day IN ('d0') GROUP BY day",
        "SELECT day, dp_count(0.5) FROM visits GROUP BY day HAVING dp_partition_selection(0.5, 2)",
        "SELECT * FROM visits WHERE day IN ('d0') GROUP BY day",
        "SELECT day, dp_count(0.5) FROM visits WHERE day IN ('d0') GROUP BY day; SELECT 1",
        "not sql at all",
        "SELECT day, dp_count(0.5) FROM visits WHERE day IN ('d0') GROUP BY day HAVING dp_partition_selection(0.5, 1e-6)",
        "SELECT day, dp_count(0.5) FROM visits GROUP BY day HAVING dp_count(0.5) > 3",
        "SELECT day, dp_count(0.5) + 1 FROM visits WHERE day IN ('d0') GROUP BY day",
        "SELECT day, dp_count(0.5) FROM (SELECT * FROM visits) t WHERE day IN ('d0') GROUP BY day",
        "SELECT day, dp_count(DISTINCT 0.5) FROM visits WHERE day IN ('d0') GROUP BY day",
        "SELECT day, dp_count(0.5) FROM visits WHERE day IN (1.5) GROUP BY day",
        "SELECT day, dp_count(0.5) FROM raw WHERE day IN ('d0') GROUP BY day",
        "CREATE TABLE t AS SELECT 1",
    ] {
        let refused = runtime().block_on(s.sql(bad));
        assert!(
            matches!(
                refused,
                Err(DpError::UnsupportedQuery(_)) | Err(DpError::Privacy(_))
            ),
            "{bad}: {refused:?}"
        );
        assert_eq!(s.accountant().charges(), 0, "{bad} charged the budget");
    }
}
