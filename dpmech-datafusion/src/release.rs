//! Stage 6, the release: [`PrivateSession`] holds the private tables and the budget, and
//! runs every release in one order — **plan** (validate every public parameter, fix the
//! noise and thresholds, plan the engine's query: module `plan`), **charge** (a refused
//! charge runs nothing), **execute** (the engine bounds and aggregates exactly: modules
//! `bound` and `aggregate`), **noise** (selection and per-cell noise at the client:
//! modules `select` and `noise`).

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::catalog::TableProvider;
use datafusion::prelude::{DataFrame, SQLOptions, SessionContext};
use dpmech::{Accountant, PrivacyLoss};

use crate::DpError;
use crate::aggregate::{GroupKey, Partials, cell_bytes, exact_partials};
use crate::functions::{self, PrivateScan};
use crate::key::ReleaseKey;
use crate::noise::ReleasedValue;
use crate::plan::{PrivateTable, ReleasePlan};
use crate::query::{ContributionBounds, GroupedQuery};
use crate::udf::is_unit_type;

/// One released group.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleasedRow {
    /// The group key as text (`None`: the NULL group).
    pub key: Option<String>,
    /// The aggregates, in the order of the query.
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
    ctx: SessionContext,
    accountant: Arc<Accountant>,
    /// Where SQL and DataFrames are planned: the private tables' stand-ins and the `dp_`
    /// UDAFs.
    planner: SessionContext,
    tables: HashMap<String, PrivateTable>,
    /// Encode every physical plan with `DpmechCodec` and decode it before running it.
    #[cfg(feature = "unsafe-testing")]
    ship_through_codec: bool,
}

impl core::fmt::Debug for PrivateSession {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PrivateSession")
            .field("tables", &self.tables.keys().collect::<Vec<_>>())
            .field("budget", &self.accountant.budget())
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
            #[cfg(feature = "unsafe-testing")]
            ship_through_codec: false,
        }
    }

    /// Test switch (`unsafe-testing` feature only): encode every physical plan to bytes
    /// with [`DpmechCodec`](crate::DpmechCodec) and decode it before running it, as a
    /// distributed runner ships plans to executors.
    #[cfg(feature = "unsafe-testing")]
    pub fn ship_plans_through_codec_for_tests(&mut self) {
        self.ship_through_codec = true;
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
    /// [`DpError::Invalid`] for contribution bounds of 0, [`DpError::UnknownColumn`] if
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

    /// Plans the query, charges its loss, then runs it with a fresh key from the OS. A
    /// refused query or charge runs nothing and spends nothing.
    ///
    /// # Errors
    ///
    /// Before anything is charged: [`DpError::UnknownTable`], [`DpError::UnknownColumn`],
    /// [`DpError::UnsupportedType`], [`DpError::Unrepresentable`], [`DpError::Invalid`] or
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
    /// [`DpError::UnsupportedType`], [`DpError::Unrepresentable`], [`DpError::Invalid`] or
    /// [`DpError::Privacy`] for a query its parameters or the table's schema refuse, and
    /// [`DpError::DataFusion`] if the engine cannot plan it; then
    /// [`DpError::Privacy`] with `BudgetExceeded` if the charge is refused (nothing runs);
    /// after the charge only [`DpError::DataFusion`] or [`DpError::Arrow`] if the engine
    /// fails to run the planned query (an I/O failure, never a record's value).
    /// A text outside the accepted form is [`DpError::Invalid`].
    pub async fn sql(&self, text: &str) -> Result<Release, DpError> {
        self.release(&self.plan_sql(text).await?).await
    }

    /// The release SQL text describes, without running it: DataFusion parses and plans
    /// the text over the private tables' stand-ins (no DDL, DML or other statements),
    /// and the plan is read into a [`GroupedQuery`].
    ///
    /// # Errors
    ///
    /// [`DpError::Invalid`] for text that does not plan or is outside the accepted form;
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
            .map_err(|e| DpError::Invalid(format!("the query does not plan: {e}")))?;
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
    /// [`DpError::UnsupportedType`], [`DpError::Unrepresentable`], [`DpError::Invalid`] or
    /// [`DpError::Privacy`] for a query its parameters or the table's schema refuse, and
    /// [`DpError::DataFusion`] if the engine cannot plan it; then
    /// [`DpError::Privacy`] with `BudgetExceeded` if the charge is refused (nothing runs);
    /// after the charge only [`DpError::DataFusion`] or [`DpError::Arrow`] if the engine
    /// fails to run the planned query (an I/O failure, never a record's value).
    /// A frame outside the accepted form is [`DpError::Invalid`].
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
    /// [`DpError::UnsupportedType`], [`DpError::Unrepresentable`], [`DpError::Invalid`] or
    /// [`DpError::Privacy`] for a query its parameters or the table's schema refuse, and
    /// [`DpError::DataFusion`] if the engine cannot plan it; then
    /// [`DpError::Privacy`] with `BudgetExceeded` if the charge is refused (nothing runs);
    /// after the charge only [`DpError::DataFusion`] or [`DpError::Arrow`] if the engine
    /// fails to run the planned query (an I/O failure, never a record's value).
    pub async fn release_with_key(&self, query: &GroupedQuery, key: ReleaseKey) -> Result<Release, DpError> {
        let table = self
            .tables
            .get(&query.table)
            .ok_or_else(|| DpError::UnknownTable(query.table.clone()))?;
        let state = self.ctx.state();
        let plan = ReleasePlan::new(query, table, &state, &key).await?;
        // Budget first: a refused charge runs nothing.
        self.accountant.spend(plan.loss)?;
        let physical = self.shipped(plan.physical.clone())?;
        let partials = exact_partials(physical, state.task_ctx()).await?;
        Ok(Release {
            loss: plan.loss,
            rows: noisy_rows(&plan, &partials, &key)?,
        })
    }

    #[cfg(feature = "unsafe-testing")]
    fn shipped(
        &self,
        plan: Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    ) -> Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>, DpError> {
        use datafusion_proto::bytes::{
            physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
        };
        if !self.ship_through_codec {
            return Ok(plan);
        }
        // As a distributed runner would: the whole physical plan to protobuf bytes and
        // back, this crate's nodes and functions through `DpmechCodec`.
        let codec = crate::DpmechCodec;
        let bytes = physical_plan_to_bytes_with_extension_codec(plan, &codec)?;
        Ok(physical_plan_from_bytes_with_extension_codec(
            &bytes,
            &self.ctx.task_ctx(),
            &codec,
        )?)
    }

    #[cfg(not(feature = "unsafe-testing"))]
    fn shipped(
        &self,
        plan: Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    ) -> Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>, DpError> {
        Ok(plan)
    }
}

/// The released rows: the public keys, or the keys that pass selection, each with its
/// aggregates' noisy values (a key absent from the data has partials 0).
fn noisy_rows(
    plan: &ReleasePlan,
    partials: &Partials,
    key: &ReleaseKey,
) -> Result<Vec<ReleasedRow>, DpError> {
    let groups: Vec<GroupKey> = match (&plan.selection, &plan.public_keys) {
        (Some(selection), _) => selection.select(partials, key),
        (None, Some(keys)) => keys.iter().cloned().map(Some).collect(),
        (None, None) => Vec::new(),
    };
    let zeros = vec![0i64; crate::columns::partial::sum(plan.value_columns)];
    let mut rows = Vec::with_capacity(groups.len());
    for k in groups {
        let cells = partials.get(&k).unwrap_or(&zeros);
        let values = plan
            .aggregates
            .iter()
            .enumerate()
            .map(|(j, aggregate)| aggregate.release(j, cell_bytes(&k), cells, key))
            .collect::<Result<_, _>>()?;
        rows.push(ReleasedRow { key: k, values });
    }
    rows.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(rows)
}
