//! Stage 6, the release: [`PrivateSession`] holds the private tables and the budget, and
//! runs every release in one order — **plan** (validate every public parameter, fix the
//! noise and thresholds, plan the engine's query: module `plan`), **charge** (a refused
//! charge runs nothing), **execute** (the engine bounds and aggregates exactly: modules
//! `bound` and `aggregate`), **noise** (selection and per-cell noise at the client:
//! modules `select` and `noise`).

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::Array;
use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::TableProvider;
use datafusion::common::ScalarValue;
use datafusion::execution::SessionState;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{DataFrame, SQLOptions, SessionContext};
use dpmech::{Accountant, PrivacyLoss};

use crate::aggregate::{
    GroupKey, Histograms, LocalRunner, Partials, PlanRunner, cell_bytes, decode_tuple, exact_partials,
};
use crate::error::DpError;
use crate::functions::{self, PrivateScan};
use crate::key::ReleaseKey;
use crate::noise::{AggregateNoise, ReleasedValue};
use crate::plan::{PrivateTable, ReleasePlan, rekeyed};
use crate::query::{ContributionBounds, GroupedQuery, Keys};
use crate::udf::is_unit_type;

/// One released group.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleasedRow {
    /// The group key as text: the value's text for one grouping column (`None`: the
    /// NULL group), `(a, b, …)` for several (NULL printed as `NULL`), `""` without
    /// grouping columns.
    pub key: Option<String>,
    /// The group key in its columns' own types, one value per grouping column (rows
    /// are sorted by them: integer keys in numeric order).
    pub keys: Vec<ScalarValue>,
    /// The aggregates, in the order of the query: one value each, two for bounds (the
    /// lower, then the upper).
    pub values: Vec<ReleasedValue>,
}

/// The result of a grouped release, with the guarantee charged for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    /// What was charged to the accountant (under add/remove of one privacy unit).
    pub loss: PrivacyLoss,
    /// The released groups, sorted by key.
    pub rows: Vec<ReleasedRow>,
}

/// A DataFusion session with private tables and a privacy budget.
///
/// Releases run in the user's [`SessionContext`] (its configuration, runtime and
/// object stores) but register nothing in it: the private tables' providers stay inside
/// the session, and each release's plan reads them directly. Keep the session on the
/// trusted side and give analysts only its release methods.
pub struct PrivateSession {
    pub(crate) ctx: SessionContext,
    pub(crate) accountant: Arc<Accountant>,
    /// Where SQL and DataFrames are planned: the private tables' stand-ins and the `dp_`
    /// UDAFs.
    pub(crate) planner: SessionContext,
    pub(crate) tables: HashMap<String, PrivateTable>,
    /// Where the physical plans run.
    pub(crate) runner: Arc<dyn PlanRunner>,
}

impl core::fmt::Debug for PrivateSession {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PrivateSession")
            .field("tables", &self.tables.keys().collect::<Vec<_>>())
            .field("budget", &self.accountant.budget())
            .field("runner", &self.runner)
            .finish()
    }
}

impl PrivateSession {
    /// A session over `ctx` whose releases are charged to `accountant` (add/remove of
    /// one privacy unit).
    pub fn new(ctx: SessionContext, accountant: Arc<Accountant>) -> Self {
        let planner = SessionContext::new();
        for udaf in functions::all() {
            planner.register_udaf(udaf);
        }
        PrivateSession {
            ctx,
            accountant,
            planner,
            tables: HashMap::new(),
            runner: Arc::new(LocalRunner),
        }
    }

    /// The session with its releases' physical plans run by `runner` (e.g. on a
    /// Ballista cluster) instead of in this process. Planning, the charge and the noise
    /// stay here: the runner receives a plan only after its charge, and never the
    /// release key.
    pub fn with_runner(mut self, runner: Arc<dyn PlanRunner>) -> Self {
        self.runner = runner;
        self
    }

    /// The accountant releases are charged to.
    pub fn accountant(&self) -> &Accountant {
        &self.accountant
    }

    /// Registers `provider` (CSV, Parquet, memory, any [`TableProvider`]; a DataFusion
    /// `DataFrame` through `DataFrame::into_view`) as the private table `name`, whose
    /// rows belong to the privacy unit in column `unit`. The unit column must be of a
    /// type every value of which can be fingerprinted (integers, floats, decimals,
    /// dates, booleans, text, bytes).
    ///
    /// # Errors
    ///
    /// [`DpError::InvalidContributionBounds`] for contribution bounds of 0, [`DpError::UnknownColumn`] if
    /// the unit column does not exist, [`DpError::UnsupportedType`] for a unit column of
    /// another type, [`DpError::DataFusion`] if the stand-in cannot be registered.
    pub fn register_private(
        &mut self,
        name: &str,
        provider: Arc<dyn TableProvider>,
        unit: &str,
        bounds: ContributionBounds,
    ) -> Result<(), DpError> {
        let bounds = bounds.check()?;
        let schema = provider.schema();
        let unit_type = schema
            .field_with_name(unit)
            .map_err(|_| DpError::UnknownColumn(unit.to_string()))?
            .data_type();
        if !is_unit_type(unit_type) {
            return Err(DpError::UnsupportedType {
                column: unit.to_string(),
                data_type: unit_type.to_string(),
                role: "a privacy unit (numbers, dates, booleans, text and bytes can)",
            });
        }
        self.planner.register_table(
            name,
            Arc::new(PrivateScan {
                name: name.to_string(),
                schema: schema.clone(),
            }),
        )?;
        self.tables.insert(
            name.to_string(),
            PrivateTable {
                name: name.to_string(),
                provider,
                unit: unit.to_string(),
                bounds,
            },
        );
        Ok(())
    }

    /// Registers `provider` as the **public** table `name`: its rows are not private
    /// (a calendar, a list of countries), so a release may read them to know which keys
    /// to release ([`GroupedQuery::public_keys_from_table`], or in SQL
    /// `WHERE day IN (SELECT day FROM calendar)`). Never register private data here.
    ///
    /// # Errors
    ///
    /// [`DpError::PrivateTable`] if a private table has the same name;
    /// [`DpError::DataFusion`] if it cannot be registered.
    pub fn register_public(&mut self, name: &str, provider: Arc<dyn TableProvider>) -> Result<(), DpError> {
        if self.tables.contains_key(name) {
            return Err(DpError::PrivateTable(name.to_string()));
        }
        self.planner.register_table(name, provider)?;
        Ok(())
    }

    /// The query with the keys of a public table read into public keys (its distinct
    /// rows; a row with a NULL is skipped, as a public key cannot be NULL).
    async fn with_table_keys(&self, query: &GroupedQuery) -> Result<GroupedQuery, DpError> {
        let Keys::PublicTable { table, columns } = &query.keys else {
            return Ok(query.clone());
        };
        if self.tables.contains_key(table) {
            return Err(DpError::PrivateTable(table.clone()));
        }
        let frame = self
            .planner
            .table(table.as_str())
            .await
            .map_err(|_| DpError::UnknownTable(table.clone()))?;
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let batches = frame
            .select_columns(&names)
            .map_err(|_| DpError::UnknownColumn(columns.join(", ")))?
            .distinct()?
            .collect()
            .await?;
        let mut keys = Vec::new();
        for batch in &batches {
            let texts = batch
                .columns()
                .iter()
                .map(|c| datafusion::arrow::compute::cast(c, &DataType::Utf8))
                .collect::<Result<Vec<_>, _>>()?;
            let texts: Vec<&datafusion::arrow::array::StringArray> =
                texts.iter().filter_map(|t| t.as_any().downcast_ref()).collect();
            for row in 0..batch.num_rows() {
                if texts.iter().all(|t| !t.is_null(row)) {
                    keys.push(texts.iter().map(|t| t.value(row).to_string()).collect::<Vec<_>>());
                }
            }
        }
        let mut query = query.clone();
        query.keys = Keys::Public(keys);
        Ok(query)
    }

    /// Plans the query, charges its loss, then runs it with a fresh key from the OS. A
    /// refused query or charge runs nothing and spends nothing.
    ///
    /// # Errors
    ///
    /// Before anything is charged: [`DpError::UnknownTable`], [`DpError::UnknownColumn`],
    /// [`DpError::UnsupportedType`], [`DpError::Unrepresentable`], [`DpError::UnsupportedQuery`] or
    /// [`DpError::Privacy`] for a query its parameters or the table's schema refuse, and
    /// [`DpError::DataFusion`] if the engine cannot plan it; then
    /// [`DpError::Privacy`] with `BudgetExceeded` if the charge is refused (nothing runs);
    /// after the charge only [`DpError::DataFusion`] or [`DpError::Arrow`] if the engine
    /// fails to run the planned query (an I/O failure, never a record's value).
    /// [`DpError::Entropy`] if no key can be drawn.
    pub async fn release(&self, query: &GroupedQuery) -> Result<Release, DpError> {
        self.release_with_key(query, ReleaseKey::from_os()?).await
    }

    /// Reads a release from SQL text, planned by DataFusion's own SQL planner (e.g.
    /// `SELECT day, dp_count(0.5) FROM visits WHERE day IN ('mon', 'tue') GROUP BY day`;
    /// module [`sql`](crate::sql) gives the accepted form), and releases it as
    /// [`release`](Self::release) does. A query outside the accepted form is refused
    /// before anything is charged or read.
    ///
    /// # Errors
    ///
    /// Before anything is charged: [`DpError::UnknownTable`], [`DpError::UnknownColumn`],
    /// [`DpError::UnsupportedType`], [`DpError::Unrepresentable`], [`DpError::UnsupportedQuery`] or
    /// [`DpError::Privacy`] for a query its parameters or the table's schema refuse, and
    /// [`DpError::DataFusion`] if the engine cannot plan it; then
    /// [`DpError::Privacy`] with `BudgetExceeded` if the charge is refused (nothing runs);
    /// after the charge only [`DpError::DataFusion`] or [`DpError::Arrow`] if the engine
    /// fails to run the planned query (an I/O failure, never a record's value).
    /// A text outside the accepted form is [`DpError::UnsupportedQuery`].
    pub async fn sql(&self, text: &str) -> Result<Release, DpError> {
        self.release(&self.plan_sql(text).await?).await
    }

    /// The release SQL text describes, without running it: DataFusion parses and plans
    /// the text over the private tables' stand-ins (no DDL, DML or other statements),
    /// and the plan is read into a [`GroupedQuery`].
    ///
    /// # Errors
    ///
    /// [`DpError::UnsupportedQuery`] for text that does not plan or is outside the accepted form;
    /// [`DpError::Privacy`] for an invalid ε, ρ or δ.
    pub async fn plan_sql(&self, text: &str) -> Result<GroupedQuery, DpError> {
        let options = SQLOptions::new()
            .with_allow_ddl(false)
            .with_allow_dml(false)
            .with_allow_statements(false);
        let frame = self
            .planner
            .sql_with_options(text, options)
            .await
            .map_err(|e| DpError::UnsupportedQuery(format!("the query does not plan: {e}")))?;
        GroupedQuery::from_plan(frame.logical_plan())
    }

    /// A DataFusion `DataFrame` over the private table `name`, to be filtered by public
    /// keys and aggregated with the `dp_` functions of module
    /// [`functions`](crate::functions) by DataFusion's own `DataFrame::aggregate`, then
    /// released with [`release_frame`](Self::release_frame). Collecting it directly
    /// fails (its scan refuses), whatever the data.
    ///
    /// # Errors
    ///
    /// [`DpError::UnknownTable`] if no private table `name` is registered.
    pub async fn table(&self, name: &str) -> Result<DataFrame, DpError> {
        self.planner
            .table(name)
            .await
            .map_err(|_| DpError::UnknownTable(name.to_string()))
    }

    /// Releases a `DataFrame` built from [`table`](Self::table): its logical plan is
    /// read as [`plan_sql`](Self::plan_sql) reads SQL, then released as
    /// [`release`](Self::release) does.
    ///
    /// # Errors
    ///
    /// Before anything is charged: [`DpError::UnknownTable`], [`DpError::UnknownColumn`],
    /// [`DpError::UnsupportedType`], [`DpError::Unrepresentable`], [`DpError::UnsupportedQuery`] or
    /// [`DpError::Privacy`] for a query its parameters or the table's schema refuse, and
    /// [`DpError::DataFusion`] if the engine cannot plan it; then
    /// [`DpError::Privacy`] with `BudgetExceeded` if the charge is refused (nothing runs);
    /// after the charge only [`DpError::DataFusion`] or [`DpError::Arrow`] if the engine
    /// fails to run the planned query (an I/O failure, never a record's value).
    /// A frame outside the accepted form is [`DpError::UnsupportedQuery`].
    pub async fn release_frame(&self, frame: DataFrame) -> Result<Release, DpError> {
        self.release(&GroupedQuery::from_frame(&frame)?).await
    }

    /// [`release`](Self::release) with a given key: recomputing with the same key gives
    /// the same answer (retries); every new release must use a new key, and is
    /// charged again.
    ///
    /// # Errors
    ///
    /// Before anything is charged: [`DpError::UnknownTable`], [`DpError::UnknownColumn`],
    /// [`DpError::UnsupportedType`], [`DpError::Unrepresentable`], [`DpError::UnsupportedQuery`] or
    /// [`DpError::Privacy`] for a query its parameters or the table's schema refuse, and
    /// [`DpError::DataFusion`] if the engine cannot plan it; then
    /// [`DpError::Privacy`] with `BudgetExceeded` if the charge is refused (nothing runs);
    /// after the charge only [`DpError::DataFusion`] or [`DpError::Arrow`] if the engine
    /// fails to run the planned query (an I/O failure, never a record's value).
    pub async fn release_with_key(&self, query: &GroupedQuery, key: ReleaseKey) -> Result<Release, DpError> {
        let table = self.table_of(query)?;
        let query = &self.with_table_keys(query).await?;
        let state = self.ctx.state();
        let plan = ReleasePlan::new(query, table, &state, &key).await?;
        self.charge_and_run(&plan, plan.physical.clone(), &state, &key)
            .await
    }

    /// Plans `query` once for any number of releases: each
    /// [`PreparedRelease::release`] is charged and keyed anew, and reads the table
    /// as it is then, at the cost of executing the plan only (planning a release takes
    /// milliseconds; a prepared one, microseconds). The keys of a public table
    /// ([`GroupedQuery::public_keys_from_table`]) and the session's configuration
    /// are read here, once. A query refused here spends nothing.
    ///
    /// # Errors
    ///
    /// [`DpError::UnknownTable`], [`DpError::UnknownColumn`], [`DpError::UnsupportedType`],
    /// [`DpError::Unrepresentable`], [`DpError::UnsupportedQuery`] or [`DpError::Privacy`] for
    /// a query its parameters or the table's schema refuse, [`DpError::DataFusion`] if the
    /// engine cannot plan it, [`DpError::Entropy`] if no key can be drawn.
    pub async fn prepare(&self, query: &GroupedQuery) -> Result<PreparedRelease<'_>, DpError> {
        self.table_of(query)?;
        let query = self.with_table_keys(query).await?;
        let state = self.ctx.state();
        // Planned under a key of its own, which no release uses: every release re-keys.
        let plan = ReleasePlan::new(&query, self.table_of(&query)?, &state, &ReleaseKey::from_os()?).await?;
        Ok(PreparedRelease {
            session: self,
            query,
            state,
            plan,
        })
    }

    fn table_of(&self, query: &GroupedQuery) -> Result<&PrivateTable, DpError> {
        self.tables
            .get(&query.table)
            .ok_or_else(|| DpError::UnknownTable(query.table.clone()))
    }

    /// Charges `plan`'s loss, then runs `physical` (its engine plan under `key`) and
    /// noises the partials with `key`. A refused charge runs nothing.
    async fn charge_and_run(
        &self,
        plan: &ReleasePlan,
        physical: Arc<dyn ExecutionPlan>,
        state: &SessionState,
        key: &ReleaseKey,
    ) -> Result<Release, DpError> {
        self.accountant.spend(plan.loss)?;
        let (partials, histograms) = exact_partials(physical, state, self.runner.as_ref()).await?;
        Ok(Release {
            loss: plan.loss,
            rows: noisy_rows(plan, &partials, &histograms, key)?,
        })
    }
}

/// A release planned once ([`PrivateSession::prepare`]) and run any number of times:
/// each run is charged its loss and has its own key, exactly as
/// [`PrivateSession::release`] of the same query would (the same key gives the same
/// release by either path).
#[derive(Debug)]
pub struct PreparedRelease<'s> {
    session: &'s PrivateSession,
    query: GroupedQuery,
    state: SessionState,
    plan: ReleasePlan,
}

impl PreparedRelease<'_> {
    /// The guarantee each release is charged (under add/remove of one privacy unit).
    pub fn loss(&self) -> PrivacyLoss {
        self.plan.loss
    }

    /// Charges the loss, then runs the release with a fresh key from the OS. A refused
    /// charge runs nothing.
    ///
    /// # Errors
    ///
    /// [`DpError::Entropy`] if no key can be drawn; [`DpError::Privacy`] with
    /// `BudgetExceeded` if the charge is refused; after the charge only
    /// [`DpError::DataFusion`] or [`DpError::Arrow`] if the engine fails to run the plan (an
    /// I/O failure, never a record's value).
    pub async fn release(&self) -> Result<Release, DpError> {
        self.release_with_key(ReleaseKey::from_os()?).await
    }

    /// [`release`](Self::release) with a given key: equal to
    /// [`PrivateSession::release_with_key`] of the same query and key.
    ///
    /// # Errors
    ///
    /// As [`release`](Self::release), without the entropy error.
    pub async fn release_with_key(&self, key: ReleaseKey) -> Result<Release, DpError> {
        let session = self.session;
        let physical = match rekeyed(&self.plan.physical, &key) {
            Some(physical) => physical,
            // Not the plan shape re-keying knows: plan this release anew.
            None => {
                let table = session.table_of(&self.query)?;
                ReleasePlan::new(&self.query, table, &self.state, &key)
                    .await?
                    .physical
            }
        };
        session
            .charge_and_run(&self.plan, physical, &self.state, &key)
            .await
    }
}

/// The released rows: the public keys, or the keys that pass selection, each with its
/// aggregates' noisy values (a key absent from the data has partials 0 and empty
/// histograms).
///
/// Each cell's noise is keyed by the release key, the cell and the aggregate alone, so
/// the cells can be released in any order and on any thread: a release with many
/// candidates in all (a quantile's grid bins times the groups, at least
/// [`PARALLEL_CANDIDATES`]) splits its groups across the machine's cores, with the same
/// values as on one.
fn noisy_rows(
    plan: &ReleasePlan,
    partials: &Partials,
    histograms: &Histograms,
    key: &ReleaseKey,
) -> Result<Vec<ReleasedRow>, DpError> {
    let groups: Vec<GroupKey> = match (&plan.selection, &plan.public_keys) {
        (Some(selection), _) => selection.select(partials, key),
        (None, Some(keys)) => keys.iter().cloned().map(Some).collect(),
        (None, None) => Vec::new(),
    };
    release_cells(
        plan,
        partials,
        histograms,
        key,
        &groups,
        release_threads(plan, groups.len()),
    )
}

/// The threads a release of `groups` cells of `plan` runs on: the machine's cores (at
/// most one per group) when its candidates in all reach [`PARALLEL_CANDIDATES`], else 1.
fn release_threads(plan: &ReleasePlan, groups: usize) -> usize {
    let candidates: usize = plan.aggregates.iter().map(AggregateNoise::candidates).sum();
    if candidates.saturating_mul(groups) >= PARALLEL_CANDIDATES {
        std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(groups)
            .max(1)
    } else {
        1
    }
}

/// The rows of `groups`, released on `threads` threads (each a run of the groups).
fn release_cells(
    plan: &ReleasePlan,
    partials: &Partials,
    histograms: &Histograms,
    key: &ReleaseKey,
    groups: &[GroupKey],
    threads: usize,
) -> Result<Vec<ReleasedRow>, DpError> {
    let zeros = vec![0i64; plan.partials];
    let release_cell = |k: &GroupKey| -> Result<ReleasedRow, DpError> {
        let cells = partials.get(k).unwrap_or(&zeros);
        let bins = histograms.get(k).map_or(&[][..], Vec::as_slice);
        let values = plan
            .aggregates
            .iter()
            .enumerate()
            .map(|(j, aggregate)| aggregate.release(j, cell_bytes(k), cells, bins, key))
            .collect::<Result<Vec<_>, _>>()?
            .concat();
        let (key, keys) = typed_key(k, &plan.group_columns);
        Ok(ReleasedRow { key, keys, values })
    };
    let mut rows = if threads > 1 && groups.len() > 1 {
        let chunk = groups.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = groups
                .chunks(chunk)
                .map(|part| scope.spawn(|| part.iter().map(release_cell).collect::<Result<Vec<_>, _>>()))
                .collect();
            parts
                .into_iter()
                .map(|part| {
                    part.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect::<Result<Vec<_>, _>>()
        })?
        .concat()
    } else {
        groups.iter().map(release_cell).collect::<Result<Vec<_>, _>>()?
    };
    rows.sort_by(|a, b| compare_keys(&a.keys, &b.keys).then_with(|| a.key.cmp(&b.key)));
    Ok(rows)
}

/// The candidates in all (groups times each group's quantile and bounds bins) from which
/// a release's cells are drawn on several threads: 2²⁰, e.g. 16 groups of a 2¹⁶-bin
/// median (≈ 15 ms of selection on one core), where a thread's start (≈ 50 µs) is
/// well paid for.
const PARALLEL_CANDIDATES: usize = 1 << 20;

/// A cell's key as released: its display text and its values in the columns' types (a
/// text that does not parse back stays text — it cannot happen for the types a group
/// key may have, whose text form is total).
fn typed_key(cell: &GroupKey, columns: &[(String, DataType)]) -> (Option<String>, Vec<ScalarValue>) {
    let parts: Vec<Option<String>> = match columns.len() {
        1 => vec![cell.clone()],
        _ => cell.as_deref().and_then(decode_tuple).unwrap_or_default(),
    };
    let values = parts
        .iter()
        .zip(columns)
        .map(|(part, (_, data_type))| match part {
            None => ScalarValue::try_from(data_type).unwrap_or(ScalarValue::Null),
            Some(text) => ScalarValue::try_from_string(text.clone(), data_type)
                .unwrap_or_else(|_| ScalarValue::Utf8(Some(text.clone()))),
        })
        .collect();
    let display = match columns.len() {
        1 => cell.clone(),
        _ => Some(format!(
            "({})",
            parts
                .iter()
                .map(|p| p.as_deref().unwrap_or("NULL"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .filter(|_| !columns.is_empty())
        .or(Some(String::new())),
    };
    (display, values)
}

/// Keys in order, column by column, NULL first.
fn compare_keys(a: &[ScalarValue], b: &[ScalarValue]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        let order = match (x.is_null(), y.is_null()) {
            (true, true) => std::cmp::Ordering::Equal,
            (true, false) => std::cmp::Ordering::Less,
            (false, true) => std::cmp::Ordering::Greater,
            _ => x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal),
        };
        if order.is_ne() {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
    use datafusion::datasource::MemTable;
    use datafusion::prelude::SessionConfig;
    use dpmech::statistics::Bounds;

    use super::*;
    use crate::plan::keyed_parts;

    /// A prepared release's plan is re-keyed in place (its fingerprint and its bounding
    /// carry the release's keys), not planned anew, at any number of partitions.
    #[test]
    fn prepared_plans_are_rekeyed_not_planned_anew() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let column = |v: Vec<i64>| Arc::new(Int64Array::from(v)) as ArrayRef;
        let batch = RecordBatch::try_from_iter([
            ("user_id", column(vec![1, 2, 3, 3])),
            ("day", column(vec![1, 1, 2, 2])),
            (
                "v",
                Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0, 0.5])) as ArrayRef,
            ),
        ])
        .unwrap();
        let table =
            Arc::new(MemTable::try_new(batch.schema(), vec![vec![batch.clone()], vec![batch]]).unwrap());
        let bounds = Bounds::new(0.0, 4.0).unwrap();
        for partitions in [1, 4] {
            let ctx =
                SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
            let mut s = PrivateSession::new(ctx, Arc::new(Accountant::pure(10.0).unwrap()));
            let one = ContributionBounds {
                max_groups: 1,
                max_rows_per_group: 1,
            };
            s.register_private("t", table.clone(), "user_id", one).unwrap();
            for q in [
                GroupedQuery::new("t", "day").public_keys(["1", "2"]).count(1.0),
                GroupedQuery::grouped("t", &["day", "v"])
                    .private_keys(1.0, 1e-6)
                    .count(1.0),
                GroupedQuery::new("t", "day")
                    .public_keys(["1"])
                    .variance("v", bounds, 1.0)
                    .quantile_on("v", bounds, 0.5, 1 << 16, 1.0),
            ] {
                let prepared = rt.block_on(s.prepare(&q)).unwrap();
                let key = ReleaseKey::from_bytes_insecure([7; 32]);
                let physical = rekeyed(&prepared.plan.physical, &key).expect("re-keyed");
                let keys = Some((key.rank_key("units"), key.rank_key("groups")));
                assert_eq!(keyed_parts(&physical), keys);
                assert!(keyed_parts(&prepared.plan.physical).is_some_and(|k| Some(k) != keys));
            }
        }
    }

    /// A release with many candidates draws its cells on several threads, with the values
    /// one thread draws: 24 days of a 2¹⁶-bin median and a count (≥ 2²⁰ candidates), on 1,
    /// 2, 3 and 7 threads, under three keys.
    #[test]
    fn cells_released_on_several_threads_equal_one_thread() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let rows = 2_400i64;
        let column = |v: Vec<i64>| Arc::new(Int64Array::from(v)) as ArrayRef;
        let batch = RecordBatch::try_from_iter([
            ("user_id", column((0..rows).collect())),
            ("day", column((0..rows).map(|i| 1 + i % 24).collect())),
            (
                "v",
                Arc::new(Float64Array::from(
                    (0..rows).map(|i| (i % 97) as f64 / 9.7).collect::<Vec<_>>(),
                )) as ArrayRef,
            ),
        ])
        .unwrap();
        let table = Arc::new(MemTable::try_new(batch.schema(), vec![vec![batch]]).unwrap());
        let mut s = PrivateSession::new(SessionContext::new(), Arc::new(Accountant::pure(1e9).unwrap()));
        let one = ContributionBounds {
            max_groups: 1,
            max_rows_per_group: 1,
        };
        s.register_private("t", table, "user_id", one).unwrap();
        let days: Vec<String> = (1..=24).map(|d| d.to_string()).collect();
        let q = GroupedQuery::new("t", "day")
            .public_keys(days.clone())
            .count(1.0)
            .quantile_on("v", Bounds::new(0.0, 10.0).unwrap(), 0.5, 1 << 16, 1.0);
        let prepared = rt.block_on(s.prepare(&q)).unwrap();
        let plan = &prepared.plan;
        let groups: Vec<GroupKey> = days.into_iter().map(Some).collect();
        // 2¹⁶ + 1 candidates a group: 16 groups reach 2²⁰, 15 do not.
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(release_threads(plan, groups.len()), cores.min(24));
        assert_eq!(release_threads(plan, 16), cores.min(16));
        assert_eq!(release_threads(plan, 15), 1);
        for salt in [1u8, 2, 3] {
            let key = ReleaseKey::from_bytes_insecure([salt; 32]);
            let physical = rekeyed(&plan.physical, &key).expect("re-keyed");
            let (partials, histograms) = rt
                .block_on(exact_partials(physical, &prepared.state, &LocalRunner))
                .unwrap();
            let one = release_cells(plan, &partials, &histograms, &key, &groups, 1).unwrap();
            assert_eq!(one.len(), 24);
            assert!(one.iter().all(|r| r.values.len() == 2));
            for threads in [2, 3, 7] {
                assert_eq!(
                    release_cells(plan, &partials, &histograms, &key, &groups, threads).unwrap(),
                    one,
                    "{threads} threads, key {salt}"
                );
            }
            assert_eq!(noisy_rows(plan, &partials, &histograms, &key).unwrap(), one);
        }
    }
}
