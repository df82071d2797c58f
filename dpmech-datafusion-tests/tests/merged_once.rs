//! A release proves that each bounded row was merged exactly once (issue 42 §1): an
//! engine that merges a bounding partition's rows twice — as Ballista's recovery from an
//! executor lost late did, counting units twice — gets a typed error, never other
//! values. The double merge is made here deterministically, by a runner that replays
//! part of the bounding operator's output before the final aggregation.

use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Array, Int64Array, RecordBatch};
use datafusion::common::Result;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::execution::{SessionState, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use dpmech::statistics::Bounds;
use dpmech_datafusion::{DpError, GroupedQuery, LocalRunner, PlanRunner};
use futures::TryStreamExt;

use crate::common::{DAY_BOUNDS, day_rows, day_session, key, runtime};

/// What the replaying runner merges a second time.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Replay {
    /// Nothing: the control, which must release what the local runner releases.
    Nothing,
    /// Bounding partition 0's whole output, its marker row included.
    WholePartition,
    /// Every other row of partials of bounding partition 0, not its marker: one of the
    /// pieces a shuffle cuts a task's output into, read twice.
    Piece,
}

/// Runs the plan in this process with the bounding operator's output replayed as
/// [`Replay`] says.
#[derive(Debug)]
struct Replaying(Replay);

#[async_trait::async_trait]
impl PlanRunner for Replaying {
    async fn collect(&self, plan: Arc<dyn ExecutionPlan>, state: &SessionState) -> Result<Vec<RecordBatch>> {
        let replay = self.0;
        let plan = plan
            .transform_up(|node| {
                Ok(if node.name() == "BoundContributionsExec" {
                    Transformed::yes(Arc::new(ReplayExec { input: node, replay }) as Arc<dyn ExecutionPlan>)
                } else {
                    Transformed::no(node)
                })
            })?
            .data;
        LocalRunner.collect(plan, state).await
    }
}

/// The bounding operator's output, with partition 0's rows replayed.
#[derive(Debug)]
struct ReplayExec {
    input: Arc<dyn ExecutionPlan>,
    replay: Replay,
}

impl DisplayAs for ReplayExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "ReplayExec: {:?}", self.replay)
    }
}

impl ExecutionPlan for ReplayExec {
    fn name(&self) -> &'static str {
        "ReplayExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(
            &Arc<dyn datafusion::physical_expr::PhysicalExpr>,
        ) -> Result<datafusion::common::tree_node::TreeNodeRecursion>,
    ) -> Result<datafusion::common::tree_node::TreeNodeRecursion> {
        Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
        _: datafusion::physical_plan::ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(ReplayExec {
            input: children.swap_remove(0),
            replay: self.replay,
        }))
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            datafusion::physical_plan::ReplaceChildrenOptions::new(
                datafusion::physical_plan::ChildrenPropertiesMode::Recompute,
            ),
        )
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let schema = input.schema();
        let replay = if partition == 0 {
            self.replay
        } else {
            Replay::Nothing
        };
        let output = async move {
            let batches: Vec<RecordBatch> = input.try_collect().await?;
            let mut out = batches.clone();
            match replay {
                Replay::Nothing => {}
                Replay::WholePartition => out.extend(batches),
                Replay::Piece => {
                    for b in &batches {
                        let kinds = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
                        let rows: Vec<u32> = (0..b.num_rows() as u32)
                            .filter(|&i| i % 2 == 0 && kinds.value(i as usize) >= -1)
                            .collect();
                        let index = datafusion::arrow::array::UInt32Array::from(rows);
                        let columns = b
                            .columns()
                            .iter()
                            .map(|c| datafusion::arrow::compute::take(c.as_ref(), &index, None))
                            .collect::<std::result::Result<Vec<_>, _>>()?;
                        out.push(RecordBatch::try_new(b.schema(), columns)?);
                    }
                }
            }
            Ok::<_, datafusion::error::DataFusionError>(futures::stream::iter(out.into_iter().map(Ok)))
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            schema,
            futures::stream::once(output).try_flatten(),
        )))
    }
}

/// Units, rows, a sum and a median per day — the kill test's query on the cluster —
/// at ε = 10⁶ for the counts and the sum, so that a unit counted twice shows through.
fn query() -> GroupedQuery {
    let b = Bounds::new(0.0, 1000.0).unwrap();
    GroupedQuery::new("visits", "day")
        .public_keys(["1", "2", "3"])
        .count_units(1e6)
        .count(1e6)
        .sum("duration", b, 1e6)
        .median("duration", b, 1.0)
}

/// A bounding partition's rows merged twice — whole, or a piece of them without its
/// marker — give [`DpError::IncompletePartials`] and no values, at 1, 3 and 8
/// partitions; the control (nothing replayed) releases what the local runner
/// releases, bit for bit. Without the check, the replayed runs released more units than
/// the data has (asserted on the partials' own totals below: the double merge is real).
#[test]
fn rows_merged_twice_give_a_typed_error_never_other_values() {
    let rt = runtime();
    let rows = day_rows();
    let q = query();
    for partitions in [1, 3, 8] {
        let local = rt
            .block_on(day_session(&rows, partitions, DAY_BOUNDS).release_with_key(&q, key(1, 42)))
            .unwrap();
        // 600 units, each on two of three days: about 400 per day at ε = 10⁶.
        let units: f64 = local.rows.iter().map(|r| r.values[0].value).sum();
        assert_eq!(units, 1200.0, "{partitions} partitions");
        for replay in [Replay::Nothing, Replay::WholePartition, Replay::Piece] {
            let session = day_session(&rows, partitions, DAY_BOUNDS).with_runner(Arc::new(Replaying(replay)));
            let charges_before = session.accountant().charges();
            let got = rt.block_on(session.release_with_key(&q, key(1, 42)));
            match replay {
                Replay::Nothing => assert_eq!(got.unwrap(), local, "{partitions} partitions"),
                _ => match got {
                    Err(DpError::IncompletePartials(why)) => {
                        println!("{partitions} partitions, {replay:?}: {why}")
                    }
                    other => panic!("{partitions} partitions, {replay:?}: {other:?}"),
                },
            }
            // The charge is made before the plan runs, once, whatever happens after.
            assert_eq!(session.accountant().charges(), charges_before + 1);
        }
    }
}

/// The double merge the runner makes is real: the final aggregation's rows count more
/// merged bounding rows than without the replay (read by a runner that records them
/// before the release checks them).
#[test]
fn the_replaying_runner_really_merges_rows_twice() {
    /// Records the merged rows (`__reads`, the last column) of what it returns.
    #[derive(Debug)]
    struct Recording(Replaying, Arc<Mutex<Vec<i64>>>);

    #[async_trait::async_trait]
    impl PlanRunner for Recording {
        async fn collect(
            &self,
            plan: Arc<dyn ExecutionPlan>,
            state: &SessionState,
        ) -> Result<Vec<RecordBatch>> {
            let batches = self.0.collect(plan, state).await?;
            let reads: i64 = batches
                .iter()
                .map(|b| {
                    let reads = b.column(b.num_columns() - 1);
                    let reads = reads.as_any().downcast_ref::<Int64Array>().unwrap();
                    (0..reads.len()).map(|i| reads.value(i)).sum::<i64>()
                })
                .sum();
            self.1.lock().unwrap().push(reads);
            Ok(batches)
        }
    }

    let rt = runtime();
    let rows = day_rows();
    let seen = Arc::new(Mutex::new(Vec::new()));
    for replay in [Replay::Nothing, Replay::WholePartition, Replay::Piece] {
        let runner = Recording(Replaying(replay), seen.clone());
        let session = day_session(&rows, 3, DAY_BOUNDS).with_runner(Arc::new(runner));
        let released = rt.block_on(session.release_with_key(&query(), key(2, 42)));
        assert_eq!(released.is_ok(), replay == Replay::Nothing, "{replay:?}");
    }
    let seen = seen.lock().unwrap().clone();
    let [once, whole, piece] = seen[..] else {
        panic!("{seen:?}")
    };
    assert!(whole > once && piece > once, "{once} {whole} {piece}");
}
