//! Contribution bounding as a physical operator of the plan.
//!
//! [`BoundContributionsExec`] reads rows `(__f, __g, __v0, …)` — the privacy unit's
//! keyed fingerprint, the group key and the records in grid units — hash-partitioned by
//! `__f` (a [`RepartitionExec`] below it), so every row of a unit reaches the same
//! partition. Each partition then, in one pass:
//!
//! 1. appends each row to one of [`BUCKETS`] buckets by the top bits of its fingerprint
//!    (sequential writes, no table over all units);
//! 2. links the rows of each unit within a bucket through a small open-addressing table
//!    (a bucket is small enough to stay in cache);
//! 3. per unit: aggregates its (unit, group) pairs exactly, keeps at most `L0` of them —
//!    the smallest keyed ranks (`mix(fingerprint ⊕ group hash)`: the SplitMix64
//!    finaliser of the unit's fingerprint and the group's SipHash-2-4 under a key derived
//!    from the release key — uniform-looking for every unit, fixed by the key and the
//!    values alone), ties broken by the group's bytes — and lets each kept pair count
//!    as `min(c, m)` rows of its own mean ([`pair_share`](partition::pair_share));
//! 4. emits, for each group of the partition that at least one kept pair supports, one
//!    row of scalar partials `(__g, __k = −1, __count, __units, __s0, …, __q0, …, __n =
//!    NULL)` and one row per non-empty bin of its histograms `(__g, __k = bin, NULL, …,
//!    __n = count)`: exact integers that the final `GROUP BY __g, __k` of the engine
//!    sums. A histogram costs memory and rows per non-empty bin (a dense table only when
//!    groups × bins is small), never a column per bin. A group all of whose pairs were
//!    cut is not emitted, so it can never become a candidate of partition selection
//!    (module `select`);
//! 5. tags each row it emits with a check tag and ends with a marker row of its units
//!    (module `columns`), by which the client proves that every row was
//!    merged exactly once — on a cluster that recovers from a lost executor by running
//!    tasks again, a row merged twice would count its units twice.
//!
//! The column names are those of module `columns`.
//!
//! Every choice depends only on the unit's own rows and the key, never on the partition
//! or the batch boundaries, so the released values are bit-identical at any number of
//! partitions. Units whose 64-bit keyed fingerprints collide are bounded together as one
//! unit: that only tightens each one's contribution, and because the repartition is by
//! fingerprint they meet in the same partition whatever the partitioning.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, Distribution, ExecutionPlan,
    ExecutionPlanProperties, InputDistributionRequirements, Partitioning, PlanProperties,
    ReplaceChildrenOptions, SendableRecordBatchStream,
};
use futures::StreamExt;

use crate::columns;
use crate::key::RankKey;
use crate::udf::fits_i64;

mod partition;

use partition::PartitionState;

/// Buckets per partition (by the top bits of the unit fingerprint).
pub(crate) const BUCKETS: usize = 1 << BUCKET_BITS;
const BUCKET_BITS: u32 = 9;

/// The public parameters of the bounding.
#[derive(Debug, Clone)]
pub(crate) struct BoundSpec {
    /// L0: the most groups one unit may touch.
    pub(crate) max_groups: u32,
    /// L∞: the most rows one unit may contribute to one group.
    pub(crate) max_rows: u32,
    /// The key of the pair ranks.
    pub(crate) rank_key: RankKey,
    /// The number of bins of each quantile grid whose bin columns follow the records.
    pub(crate) histograms: Vec<u32>,
    /// The square columns: for each, the record column it squares and the shift of its
    /// squares (`⌊y²/2^shift⌋`, [`Centring`](crate::udf::Centring)).
    pub(crate) squares: Vec<(u32, u32)>,
    /// Keep every pair whole: the negative control of the tests, which exists only with
    /// the `unsafe-testing` feature.
    #[cfg(feature = "unsafe-testing")]
    unbounded: bool,
}

impl BoundSpec {
    /// Bounding to `max_groups` pairs of at most `max_rows` rows per unit, ranked by
    /// `rank_key`. `unbounded` (keep everything) is honoured only with the
    /// `unsafe-testing` feature; without it, asking for it is an error.
    pub(crate) fn new(max_groups: u32, max_rows: u32, rank_key: RankKey, unbounded: bool) -> Result<Self> {
        #[cfg(not(feature = "unsafe-testing"))]
        if unbounded {
            return Err(DataFusionError::Plan(
                "a plan without contribution bounding runs only in a test build \
                 (the unsafe-testing feature)"
                    .into(),
            ));
        }
        Ok(BoundSpec {
            max_groups,
            max_rows,
            rank_key,
            histograms: Vec::new(),
            squares: Vec::new(),
            #[cfg(feature = "unsafe-testing")]
            unbounded,
        })
    }

    /// The spec with bin columns of quantile grids of `histograms` bins each after the
    /// record columns.
    pub(crate) fn with_histograms(mut self, histograms: Vec<u32>) -> Self {
        self.histograms = histograms;
        self
    }

    /// The spec with square columns `squares`: `(record column, shift)` each.
    pub(crate) fn with_squares(mut self, squares: Vec<(u32, u32)>) -> Self {
        self.squares = squares;
        self
    }

    /// The number of record columns of an input of `fields` columns.
    fn records(&self, fields: usize) -> usize {
        fields.saturating_sub(2 + self.histograms.len())
    }

    /// Whether every pair is kept whole (never, without `unsafe-testing`).
    pub(crate) fn keeps_everything(&self) -> bool {
        #[cfg(feature = "unsafe-testing")]
        return self.unbounded;
        #[cfg(not(feature = "unsafe-testing"))]
        false
    }
}

/// The output type of a group column: integers stay integers, everything else is read
/// as text, so the groups the operator forms are exactly the ones the final `GROUP BY`
/// forms (text equality; `-0` and `0` are two groups in both).
fn group_type(input: &DataType) -> DataType {
    if fits_i64(input) {
        DataType::Int64
    } else {
        DataType::Utf8
    }
}

/// The output schema for an input `(__f, __g, __v0, …, __b0, …)`: the group, the row's
/// kind (module `columns`), the scalar partials, the bin count.
fn output_schema(input: &Schema, spec: &BoundSpec) -> SchemaRef {
    let mut fields = vec![
        Field::new(columns::GROUP, group_type(input.field(1).data_type()), true),
        Field::new(columns::BIN, DataType::Int64, false),
        Field::new(columns::COUNT, DataType::Int64, true),
        Field::new(columns::UNITS, DataType::Int64, true),
    ];
    for j in 0..spec.records(input.fields().len()) {
        fields.push(Field::new(columns::sum(j), DataType::Decimal128(38, 0), true));
    }
    for i in 0..spec.squares.len() {
        fields.push(Field::new(columns::square(i), DataType::Decimal128(38, 0), true));
    }
    fields.push(Field::new(columns::BIN_COUNT, DataType::Int64, true));
    fields.push(Field::new(columns::TAG, DataType::Decimal128(38, 0), false));
    Arc::new(Schema::new(fields))
}

/// The bounded per-group partials as a table: scanning it plans
/// `BoundContributionsExec(RepartitionExec(hash(__f)), input)` at the session's number
/// of target partitions.
#[derive(Debug)]
pub(crate) struct BoundedTable {
    input: Arc<dyn ExecutionPlan>,
    spec: BoundSpec,
    schema: SchemaRef,
}

impl BoundedTable {
    /// `input` yields `(__f UInt64, __g, __v0 Int32, …)`.
    pub(crate) fn new(input: Arc<dyn ExecutionPlan>, spec: BoundSpec) -> Self {
        let schema = output_schema(&input.schema(), &spec);
        BoundedTable { input, spec, schema }
    }
}

#[async_trait]
impl TableProvider for BoundedTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Temporary
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let fingerprint =
            datafusion::physical_expr::expressions::col(columns::FINGERPRINT, &self.input.schema())?;
        let partitions = state.config().target_partitions().max(1);
        let repartitioned = Arc::new(RepartitionExec::try_new(
            self.input.clone(),
            Partitioning::Hash(vec![fingerprint], partitions),
        )?);
        Ok(Arc::new(BoundContributionsExec::try_new(
            repartitioned,
            self.spec.clone(),
            projection.cloned(),
        )?))
    }
}

/// The bounding operator (see the module docs). Its input must be hash-partitioned by
/// the fingerprint `__f`.
#[derive(Debug)]
pub(crate) struct BoundContributionsExec {
    input: Arc<dyn ExecutionPlan>,
    fingerprint: Arc<dyn PhysicalExpr>,
    spec: BoundSpec,
    projection: Option<Vec<usize>>,
    full_schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl BoundContributionsExec {
    pub(crate) fn try_new(
        input: Arc<dyn ExecutionPlan>,
        spec: BoundSpec,
        projection: Option<Vec<usize>>,
    ) -> Result<Self> {
        let fingerprint = datafusion::physical_expr::expressions::col(columns::FINGERPRINT, &input.schema())?;
        let full_schema = output_schema(&input.schema(), &spec);
        let records = spec.records(input.schema().fields().len());
        // Bins are indexed over all histograms in 32 bits.
        let all_bins: u64 = spec.histograms.iter().map(|&b| u64::from(b)).sum();
        if input.schema().fields().len() < 2 + spec.histograms.len()
            || all_bins > u64::from(u32::MAX)
            || spec
                .squares
                .iter()
                .any(|&(j, shift)| j as usize >= records || shift > 64)
        {
            return Err(DataFusionError::Internal(
                "BoundContributionsExec: fewer input columns than its spec reads".into(),
            ));
        }
        let schema = match &projection {
            Some(p) => Arc::new(full_schema.project(p)?),
            None => full_schema.clone(),
        };
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(input.output_partitioning().partition_count()),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        Ok(BoundContributionsExec {
            input,
            fingerprint,
            spec,
            projection,
            full_schema,
            properties,
        })
    }
}

impl BoundContributionsExec {
    /// The public parameters (and rank key) of the bounding.
    pub(crate) fn spec(&self) -> &BoundSpec {
        &self.spec
    }

    /// The operator over the same input with another rank key (another release's).
    pub(crate) fn with_rank_key(&self, rank_key: RankKey) -> Result<Self> {
        let spec = BoundSpec {
            rank_key,
            ..self.spec.clone()
        };
        Self::try_new(self.input.clone(), spec, self.projection.clone())
    }

    /// The output columns, if projected.
    pub(crate) fn projection(&self) -> Option<&[usize]> {
        self.projection.as_deref()
    }
}

impl DisplayAs for BoundContributionsExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "BoundContributionsExec: max_groups={}, max_rows_per_group={}{}",
            self.spec.max_groups,
            self.spec.max_rows,
            if self.spec.keeps_everything() {
                ", UNBOUNDED (test only)"
            } else {
                ""
            }
        )
    }
}

impl ExecutionPlan for BoundContributionsExec {
    fn name(&self) -> &'static str {
        "BoundContributionsExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    /// Every row of a unit in one partition: without this requirement the optimiser
    /// would drop the repartition, and a unit split over partitions would be bounded
    /// once per partition.
    fn input_distribution_requirements(&self) -> InputDistributionRequirements {
        InputDistributionRequirements::new(vec![Distribution::KeyPartitioned(vec![self.fingerprint.clone()])])
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
        _: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return Err(DataFusionError::Internal(
                "BoundContributionsExec has one input".into(),
            ));
        }
        Ok(Arc::new(BoundContributionsExec::try_new(
            children.swap_remove(0),
            self.spec.clone(),
            self.projection.clone(),
        )?))
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let mut input = self.input.execute(partition, context)?;
        let spec = self.spec.clone();
        let full_schema = self.full_schema.clone();
        let projection = self.projection.clone();
        let output = async move {
            let mut state = PartitionState::new(
                spec.records(input.schema().fields().len()),
                spec.histograms.clone(),
            );
            while let Some(batch) = input.next().await {
                state.push(&batch?)?;
            }
            let batch = state.finish(&spec, full_schema)?;
            Ok(match projection {
                Some(p) => batch.project(&p)?,
                None => batch,
            })
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema(),
            futures::stream::once(output),
        )))
    }
}
