//! Private tables and grouped releases.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use datafusion::arrow::array::{Array, Decimal128Array, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::catalog::TableProvider;
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::{DataFrame, SQLOptions, SessionContext};
use datafusion_proto::bytes::{
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use dpmech::privacy::round;
use dpmech::statistics::Bounds;
use dpmech::{Accountant, DiscreteGaussian, Geometric, PrivacyLoss};

use crate::DpError;
use crate::bound::{BoundSpec, BoundedTable};
use crate::codec::DpmechCodec;
use crate::functions::{self, PrivateScan};
use crate::key::ReleaseKey;
use crate::udf::{GridUnits, UnitFingerprint, fits_i64};

/// How much one privacy unit (one person) may contribute, enforced by the plan before
/// any aggregation across units: at most `max_groups` groups (L0) per unit — which ones
/// is a uniformly random choice keyed by the release (see [`ReleaseKey`]), so it does
/// not depend on the data beyond the unit's own groups — and at most
/// `max_rows_per_group` rows (L∞) per unit in each group: a pair of `c` rows counts as
/// `min(c, m)` rows of its own mean, a deterministic rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContributionBounds {
    /// L0: the most groups one unit may touch.
    pub max_groups: u32,
    /// L∞: the most rows one unit may contribute to one group.
    pub max_rows_per_group: u32,
}

#[derive(Debug, Clone)]
struct PrivateTable {
    raw_name: String,
    schema: datafusion::arrow::datatypes::SchemaRef,
    unit: String,
    bounds: ContributionBounds,
}

/// Which groups a release reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Keys {
    /// Every listed key is released (empty groups too, with noise); rows with other keys
    /// are dropped before bounding. Costs no extra privacy.
    Public(Vec<String>),
    /// Keys come from the data: a group is released only if its noisy number of
    /// distinct units reaches a threshold (Laplace thresholding with discrete Laplace
    /// noise), so a key held by one unit appears with probability at most δ. Costs
    /// `(epsilon, delta)` on top of the aggregates.
    Private {
        /// ε spent on selecting the groups.
        epsilon: f64,
        /// δ: the probability bound for releasing a key held by a single unit.
        delta: f64,
    },
}

/// One aggregate of a grouped release.
#[derive(Debug, Clone, PartialEq)]
pub enum Aggregate {
    /// The number of (bounded) rows per group, with its ε.
    Count {
        /// ε of this aggregate (over all groups together).
        epsilon: f64,
    },
    /// The sum of a column clamped to public bounds, summed exactly on a grid.
    Sum {
        /// The column.
        column: String,
        /// Public bounds and NaN rule of the records.
        bounds: Bounds,
        /// ε of this aggregate.
        epsilon: f64,
    },
    /// The mean of a clamped column: a noisy sum over a noisy count, ε split evenly.
    Mean {
        /// The column.
        column: String,
        /// Public bounds and NaN rule of the records.
        bounds: Bounds,
        /// ε of this aggregate.
        epsilon: f64,
    },
}

/// A grouped private release: `SELECT group, aggregates… FROM table GROUP BY group`.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupedQuery {
    table: String,
    group_by: String,
    keys: Keys,
    aggregates: Vec<Aggregate>,
    /// The aggregates' parameters are ρ (ρ-zCDP, discrete Gaussian noise), not ε.
    zcdp: bool,
    /// Test-only: skip contribution bounding (the negative control of the audits).
    unbounded: bool,
}

impl GroupedQuery {
    /// A release over `table` grouped by `group_by`, with public `keys` by default
    /// empty: set them with [`public_keys`](Self::public_keys) or
    /// [`private_keys`](Self::private_keys).
    pub fn new(table: &str, group_by: &str) -> Self {
        GroupedQuery {
            table: table.to_string(),
            group_by: group_by.to_string(),
            keys: Keys::Public(Vec::new()),
            aggregates: Vec::new(),
            zcdp: false,
            unbounded: false,
        }
    }

    /// **ρ-zCDP instead of ε-DP**: every aggregate's parameter (`count(0.5)` …) is read
    /// as its ρ, and each cell gets discrete Gaussian noise with `σ² = L0·Δ∞²/(2ρ)`
    /// (Canonne, Kamath & Steinke 2020: one unit moves at most L0 cells by at most
    /// `Δ∞` each, an L2 sensitivity of `√L0·Δ∞`; the per-cell ρ/L0 is rounded down).
    /// The release is charged `PrivacyLoss::zcdp(Σρ)`, so the accountant must take
    /// zCDP charges. Public keys only: a query with private keys is refused before
    /// anything is charged.
    pub fn zcdp(mut self) -> Self {
        self.zcdp = true;
        self
    }

    /// Releases exactly these keys.
    pub fn public_keys<I: IntoIterator<Item = S>, S: Into<String>>(mut self, keys: I) -> Self {
        self.keys = Keys::Public(keys.into_iter().map(Into::into).collect());
        self
    }

    /// Releases the keys found in the data that pass partition selection.
    pub fn private_keys(mut self, epsilon: f64, delta: f64) -> Self {
        self.keys = Keys::Private { epsilon, delta };
        self
    }

    /// Adds a DP count.
    pub fn count(mut self, epsilon: f64) -> Self {
        self.aggregates.push(Aggregate::Count { epsilon });
        self
    }

    /// Adds a DP sum of `column` clamped to `bounds`.
    pub fn sum(mut self, column: &str, bounds: Bounds, epsilon: f64) -> Self {
        self.aggregates.push(Aggregate::Sum {
            column: column.to_string(),
            bounds,
            epsilon,
        });
        self
    }

    /// Adds a DP mean of `column` clamped to `bounds`.
    pub fn mean(mut self, column: &str, bounds: Bounds, epsilon: f64) -> Self {
        self.aggregates.push(Aggregate::Mean {
            column: column.to_string(),
            bounds,
            epsilon,
        });
        self
    }

    /// **Not private**: the same query without contribution bounding. For negative
    /// controls in tests only.
    #[doc(hidden)]
    pub fn without_contribution_bounding_for_tests(mut self) -> Self {
        self.unbounded = true;
        self
    }

    /// The total guarantee: Σ ε of the aggregates (+ the selection's (ε, δ)), or Σ ρ
    /// under [`zcdp`](Self::zcdp); sums rounded up.
    pub fn privacy_loss(&self) -> Result<PrivacyLoss, DpError> {
        if self.aggregates.is_empty() {
            return Err(DpError::Invalid("a release needs at least one aggregate".into()));
        }
        let mut total = 0.0;
        for a in &self.aggregates {
            let p = match a {
                Aggregate::Count { epsilon } => *epsilon,
                Aggregate::Sum { epsilon, .. } | Aggregate::Mean { epsilon, .. } => *epsilon,
            };
            // Each parameter is checked on its own (positive, finite) before summing.
            let p = if self.zcdp {
                PrivacyLoss::zcdp(p)?;
                p
            } else {
                PrivacyLoss::pure(p)?.epsilon().unwrap_or(0.0)
            };
            total = round::add_up(total, p);
        }
        Ok(match (&self.keys, self.zcdp) {
            (Keys::Public(_), false) => PrivacyLoss::pure(total)?,
            (Keys::Public(_), true) => PrivacyLoss::zcdp(total)?,
            (Keys::Private { .. }, true) => {
                return Err(DpError::Invalid(
                    "partition selection under ρ-zCDP is not supported: use public keys".into(),
                ));
            }
            (Keys::Private { epsilon: e, delta }, false) => {
                let e = PrivacyLoss::pure(*e)?.epsilon().unwrap_or(0.0);
                PrivacyLoss::approximate(round::add_up(total, e), *delta)?
            }
        })
    }
}

/// One released value with its 95 % confidence interval (from the noise distribution,
/// which is public).
#[derive(Debug, Clone, PartialEq)]
pub struct ReleasedValue {
    /// `count`, `sum(column)` or `mean(column)`.
    pub name: String,
    /// The private value.
    pub value: f64,
    /// A 95 % interval around the true (bounded, clamped) value.
    pub interval: (f64, f64),
}

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
/// The [`SessionContext`] inside holds the raw tables (under internal names): it
/// belongs to the trusted side. Give analysts only [`PrivateSession::release`].
pub struct PrivateSession {
    ctx: SessionContext,
    accountant: Arc<Accountant>,
    /// Where releases are planned: the private tables' stand-ins and the `dp_` UDAFs.
    planner: SessionContext,
    tables: HashMap<String, PrivateTable>,
    releases: AtomicU64,
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
            releases: AtomicU64::new(0),
            ship_through_codec: false,
        }
    }

    /// Test knob: encode every physical plan to bytes with [`DpmechCodec`] and decode it
    /// before running it, as a distributed runner (Ballista) ships plans to executors.
    #[doc(hidden)]
    pub fn ship_plans_through_codec_for_tests(&mut self) {
        self.ship_through_codec = true;
    }

    /// The accountant releases are charged to.
    pub fn accountant(&self) -> &Accountant {
        &self.accountant
    }

    /// Registers `provider` (CSV, Parquet, memory, any [`TableProvider`]; a DataFusion
    /// `DataFrame` through `DataFrame::into_view`) as the private table `name`, whose
    /// rows belong to the privacy unit in column `unit`.
    pub fn register_private(
        &mut self,
        name: &str,
        provider: Arc<dyn TableProvider>,
        unit: &str,
        bounds: ContributionBounds,
    ) -> Result<(), DpError> {
        if bounds.max_groups == 0 || bounds.max_rows_per_group == 0 {
            return Err(DpError::Invalid("contribution bounds must be at least 1".into()));
        }
        if provider.schema().field_with_name(unit).is_err() {
            return Err(DpError::Invalid(format!("no privacy-unit column `{unit}`")));
        }
        let raw_name = format!("__dpmech_raw_{}", self.tables.len());
        let schema = provider.schema();
        self.planner.register_table(
            name,
            Arc::new(PrivateScan {
                name: name.to_string(),
                schema: schema.clone(),
            }),
        )?;
        self.ctx.register_table(raw_name.as_str(), provider)?;
        self.tables.insert(
            name.to_string(),
            PrivateTable {
                raw_name,
                schema,
                unit: unit.to_string(),
                bounds,
            },
        );
        Ok(())
    }

    /// Charges the query's loss, then runs it with a fresh key from the OS. A refused
    /// charge runs nothing.
    pub async fn release(&self, query: &GroupedQuery) -> Result<Release, DpError> {
        self.release_with_key(query, ReleaseKey::from_os()?).await
    }

    /// Reads a release from SQL text, planned by DataFusion's own SQL planner (e.g.
    /// `SELECT day, dp_count(0.5) FROM visits WHERE day IN ('mon', 'tue') GROUP BY day`;
    /// module [`sql`](crate::sql) gives the accepted form), and releases it as
    /// [`release`](Self::release) does. A query outside the accepted form is refused
    /// before anything is charged or read.
    pub async fn sql(&self, text: &str) -> Result<Release, DpError> {
        self.release(&self.plan_sql(text).await?).await
    }

    /// The release SQL text describes, without running it: DataFusion parses and plans
    /// the text over the private tables' stand-ins (no DDL, DML or other statements),
    /// and the plan is read into a [`GroupedQuery`].
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
    pub async fn table(&self, name: &str) -> Result<DataFrame, DpError> {
        self.planner
            .table(name)
            .await
            .map_err(|_| DpError::Invalid(format!("no private table `{name}`")))
    }

    /// Releases a `DataFrame` built from [`table`](Self::table): its logical plan is
    /// read as [`plan_sql`](Self::plan_sql) reads SQL, then released as
    /// [`release`](Self::release) does.
    pub async fn release_frame(&self, frame: DataFrame) -> Result<Release, DpError> {
        self.release(&GroupedQuery::from_frame(&frame)?).await
    }

    /// [`release`](Self::release) with a given key: recomputing with the same key gives
    /// the same answer (retries); every new release must use a new key, and is
    /// charged again.
    pub async fn release_with_key(&self, query: &GroupedQuery, key: ReleaseKey) -> Result<Release, DpError> {
        let table = self
            .tables
            .get(&query.table)
            .ok_or_else(|| DpError::Invalid(format!("no private table `{}`", query.table)))?
            .clone();
        let loss = query.privacy_loss()?;
        let plan = Plan::new(query, &table)?;
        // Budget first: nothing is planned or scanned if the charge is refused.
        self.accountant.spend(loss)?;
        let exact = self.exact_aggregates(query, &table, &plan, &key).await?;
        Ok(Release {
            loss,
            rows: plan.add_noise(query, &exact, &key)?,
        })
    }

    /// Runs the bounded plan: exact integer aggregates per group.
    async fn exact_aggregates(
        &self,
        query: &GroupedQuery,
        table: &PrivateTable,
        plan: &Plan,
        key: &ReleaseKey,
    ) -> Result<HashMap<Option<String>, Vec<i64>>, DpError> {
        let id = self.releases.fetch_add(1, Ordering::Relaxed);
        let fingerprint = format!("__dpmech_unit_{id}");
        self.ctx
            .register_udf(ScalarUDF::new_from_impl(UnitFingerprint::new(
                fingerprint.clone(),
                key,
            )));
        let mut select = vec![
            format!("{fingerprint}({}) AS __f", ident(&table.unit)),
            format!("{} AS __g", ident(&query.group_by)),
        ];
        let mut grid_functions = Vec::new();
        for (j, agg) in query.aggregates.iter().enumerate() {
            if let Aggregate::Sum { column, bounds, .. } | Aggregate::Mean { column, bounds, .. } = agg {
                let f = format!("__dpmech_units_{id}_{j}");
                self.ctx.register_udf(ScalarUDF::new_from_impl(GridUnits::new(
                    f.clone(),
                    *bounds,
                    plan.grid_exp[&j],
                )));
                // TRY_CAST: a text value that does not parse becomes NULL (then the NaN rule),
                // never a data-dependent error.
                select.push(format!(
                    "{f}(TRY_CAST({} AS DOUBLE)) AS __v{}",
                    ident(column),
                    grid_functions.len()
                ));
                grid_functions.push(f);
            }
        }
        let filter = match &query.keys {
            Keys::Public(keys) if keys.is_empty() => " WHERE FALSE".to_string(),
            Keys::Public(keys) => public_key_filter(&query.group_by, &table.schema, keys),
            Keys::Private { .. } => String::new(),
        };
        // The rows, read by the public rules: (unit fingerprint, group, records in grid units).
        let rows = self
            .ctx
            .sql(&format!(
                "SELECT {} FROM {}{filter}",
                select.join(", "),
                ident(&table.raw_name)
            ))
            .await;
        let bounded = format!("__dpmech_bounded_{id}");
        let result = async {
            // Bounding by the plan's own operator after a repartition by unit (module
            // `bound`): per group and partition, Σ min(c, m) rows, the number of kept
            // pairs (= distinct units), Σ pair shares — exact integers.
            let rows = rows?.create_physical_plan().await?;
            let spec = BoundSpec {
                max_groups: table.bounds.max_groups,
                max_rows: table.bounds.max_rows_per_group,
                rank_key: key.rank_key("groups"),
                unbounded: query.unbounded,
            };
            self.ctx
                .register_table(bounded.as_str(), Arc::new(BoundedTable::new(rows, spec)))?;
            // Per group: the partitions' partials summed exactly (DECIMAL(38, 0), i128: a
            // pair's share is at most m records of ~2²¹ units, so no table of fewer than
            // 2¹⁰⁰ rows can overflow it).
            let sums: String = (0..grid_functions.len())
                .map(|j| format!(", SUM(CAST(__s{j} AS DECIMAL(38, 0))) AS __s{j}"))
                .collect();
            let sql = format!(
                "SELECT __g, SUM(CAST(__count AS DECIMAL(38, 0))) AS __count, \
                 SUM(CAST(__units AS DECIMAL(38, 0))) AS __units{sums} FROM {bounded} GROUP BY __g"
            );
            let plan = self.ctx.sql(&sql).await?.create_physical_plan().await?;
            let plan = if self.ship_through_codec {
                // As a distributed runner would: the whole physical plan to protobuf bytes
                // and back, this crate's nodes and functions through `DpmechCodec`.
                let bytes = physical_plan_to_bytes_with_extension_codec(plan, &DpmechCodec)?;
                physical_plan_from_bytes_with_extension_codec(&bytes, &self.ctx.task_ctx(), &DpmechCodec)?
            } else {
                plan
            };
            datafusion::physical_plan::collect(plan, self.ctx.task_ctx()).await
        }
        .await;
        self.ctx.deregister_table(bounded.as_str())?;
        self.ctx.deregister_udf(&fingerprint);
        for f in &grid_functions {
            self.ctx.deregister_udf(f);
        }
        let batches: Vec<datafusion::arrow::array::RecordBatch> = result?;
        let mut out = HashMap::new();
        for batch in batches {
            let keys = cast(batch.column(0), &DataType::Utf8)?;
            let keys = keys.as_any().downcast_ref::<StringArray>().expect("Utf8");
            let columns: Vec<Vec<i64>> = (1..batch.num_columns())
                .map(|c| saturating_i64(batch.column(c)))
                .collect::<Result<_, DpError>>()?;
            for row in 0..batch.num_rows() {
                let k = (!keys.is_null(row)).then(|| keys.value(row).to_string());
                out.insert(k, columns.iter().map(|c| c[row]).collect());
            }
        }
        Ok(out)
    }
}

/// An integer column (Int64 counts, DECIMAL(38, 0) sums) as `i64`, nulls as 0 and
/// values beyond the `i64` range saturated: a 1-Lipschitz map of the exact value, so
/// the sensitivity is unchanged and no value can cause an error.
fn saturating_i64(column: &datafusion::arrow::array::ArrayRef) -> Result<Vec<i64>, DpError> {
    let wide = cast(column, &DataType::Decimal128(38, 0))?;
    let wide = wide
        .as_any()
        .downcast_ref::<Decimal128Array>()
        .expect("cast to Decimal128 yields a Decimal128Array");
    Ok((0..wide.len())
        .map(|i| {
            if wide.is_null(i) {
                0
            } else {
                wide.value(i).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
            }
        })
        .collect())
}

/// `WHERE` clause keeping the rows whose group key, as text, is one of `keys`. On a
/// column of integers it compares numbers (`x = k` exactly when `CAST(x AS VARCHAR) = k`
/// for the keys that are integers in canonical form; no other key can match), which
/// spares converting every row to text.
fn public_key_filter(column: &str, schema: &Schema, keys: &[String]) -> String {
    let integers = schema
        .field_with_name(column)
        .is_ok_and(|f| fits_i64(f.data_type()));
    if !integers {
        let list: Vec<String> = keys.iter().map(|k| literal(k)).collect();
        return format!(
            " WHERE CAST({} AS VARCHAR) IN ({})",
            ident(column),
            list.join(", ")
        );
    }
    let list: Vec<String> = keys
        .iter()
        .filter_map(|k| k.parse::<i64>().ok().filter(|v| v.to_string() == *k))
        .map(|v| v.to_string())
        .collect();
    if list.is_empty() {
        " WHERE FALSE".to_string()
    } else {
        format!(" WHERE {} IN ({})", ident(column), list.join(", "))
    }
}

/// Quotes an identifier for SQL.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Quotes a string literal for SQL.
fn literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// The public parameters of a release: grids and noise, fixed before any data is read.
struct Plan {
    /// Grid exponent per sum/mean aggregate (by index in the query).
    grid_exp: HashMap<usize, i32>,
    bounds: ContributionBounds,
}

impl Plan {
    fn new(query: &GroupedQuery, table: &PrivateTable) -> Result<Self, DpError> {
        let mut grid_exp = HashMap::new();
        for (j, a) in query.aggregates.iter().enumerate() {
            if let Aggregate::Sum { bounds, .. } | Aggregate::Mean { bounds, .. } = a {
                // g = 2^k with about 20 bits below the largest bound: each record in
                // units is an integer of at most ~2^21, sums stay far from i64 limits.
                let big = bounds.lower().abs().max(bounds.upper().abs());
                grid_exp.insert(j, big.log2().floor() as i32 - 20);
            }
        }
        Ok(Plan {
            grid_exp,
            bounds: table.bounds,
        })
    }

    /// The grid `g` of sum/mean aggregate `j` and the largest record in units of `g`.
    fn grid(&self, j: usize, bounds: &Bounds) -> (f64, u64) {
        let e = self.grid_exp[&j];
        let units = |v: f64| GridUnits::units(bounds, e, Some(v)).unsigned_abs();
        (
            f64::from(e).exp2(),
            units(bounds.lower()).max(units(bounds.upper())),
        )
    }

    /// The noise of one aggregate's cells, from its budget (ε, or ρ under zCDP) and the
    /// L∞ sensitivity of a cell in grid units: one unit touches at most L0 cells, each by
    /// at most `sensitivity_units`, so each cell gets the budget / L0 (rounded down).
    fn cell_noise(&self, sensitivity_units: u64, budget: f64, zcdp: bool) -> Result<CellNoise, DpError> {
        let per_cell = per_cell(budget, self.bounds.max_groups);
        Ok(if zcdp {
            CellNoise::Gaussian(Box::new(DiscreteGaussian::zcdp(sensitivity_units, per_cell)?))
        } else {
            CellNoise::Laplace {
                noise: Geometric::new(sensitivity_units, per_cell)?,
                sensitivity: sensitivity_units,
                epsilon: per_cell,
            }
        })
    }

    fn add_noise(
        &self,
        query: &GroupedQuery,
        exact: &HashMap<Option<String>, Vec<i64>>,
        key: &ReleaseKey,
    ) -> Result<Vec<ReleasedRow>, DpError> {
        let m = u64::from(self.bounds.max_rows_per_group);
        let l0 = f64::from(self.bounds.max_groups);
        // Which groups: the public list, or those passing the noisy threshold.
        let zeros = vec![0i64; 2 + self.grid_exp.len()];
        let groups: Vec<Option<String>> = match &query.keys {
            Keys::Public(keys) => keys.iter().cloned().map(Some).collect(),
            Keys::Private { epsilon, delta } => {
                // Each unit adds 1 to the distinct-unit count of at most L0 groups:
                // discrete Laplace of scale b = L0/ε; threshold τ = 1 + ⌈b·ln(L0/δ)⌉ so
                // that a group held by one unit passes with probability ≤ δ/L0 (each of
                // its ≤ L0 groups), ≤ δ in all.
                let per_cell = per_cell(*epsilon, self.bounds.max_groups);
                let selector = Geometric::new(1, per_cell)?;
                // ⌈ln(L0/δ)/ε′⌉ with a margin above the float rounding of ln and ÷, so the
                // threshold is never one too low.
                let x = (l0 / delta).ln() / per_cell;
                let threshold = 1 + (x * (1.0 + 1e-12) + 1e-9).ceil() as i64;
                let mut keys: Vec<Option<String>> = exact.keys().cloned().collect();
                keys.sort();
                keys.into_iter()
                    .filter(|k| {
                        let mut rng = key.cell_rng("select", cell_bytes(k));
                        selector.release(exact[k][1], &mut rng) >= threshold
                    })
                    .collect()
            }
        };
        let mut rows = Vec::with_capacity(groups.len());
        for k in groups {
            let cells = exact.get(&k).unwrap_or(&zeros);
            let mut values = Vec::new();
            let mut sum_index = 2;
            for (j, agg) in query.aggregates.iter().enumerate() {
                let label = format!("agg{j}");
                let mut rng = key.cell_rng(&label, cell_bytes(&k));
                match agg {
                    Aggregate::Count { epsilon } => {
                        let noise = self.cell_noise(m, *epsilon, query.zcdp)?;
                        let v = noise.release(cells[0], &mut rng) as f64;
                        let w = noise.half_width(0.05);
                        values.push(ReleasedValue {
                            name: "count".into(),
                            value: v,
                            interval: (v - w, v + w),
                        });
                    }
                    Aggregate::Sum {
                        column,
                        bounds,
                        epsilon,
                    } => {
                        let (g, per_record) = self.grid(j, bounds);
                        let noise = self.cell_noise(m * per_record, *epsilon, query.zcdp)?;
                        let v = noise.release(cells[sum_index], &mut rng) as f64 * g;
                        let w = noise.half_width(0.05) * g;
                        values.push(ReleasedValue {
                            name: format!("sum({column})"),
                            value: v,
                            interval: (v - w, v + w),
                        });
                        sum_index += 1;
                    }
                    Aggregate::Mean {
                        column,
                        bounds,
                        epsilon,
                    } => {
                        let (g, per_record) = self.grid(j, bounds);
                        let half = *epsilon / 2.0;
                        let count_noise = self.cell_noise(m, half, query.zcdp)?;
                        let sum_noise = self.cell_noise(m * per_record, half, query.zcdp)?;
                        let count = count_noise.release(cells[0], &mut rng) as f64;
                        let sum = sum_noise.release(cells[sum_index], &mut rng) as f64 * g;
                        let value = (sum / count.max(1.0)).clamp(bounds.lower(), bounds.upper());
                        // 95 %: each of the two at 97.5 %, then the extreme ratios.
                        let wc = count_noise.half_width(0.025);
                        let ws = sum_noise.half_width(0.025) * g;
                        let lo_c = (count - wc).max(1.0);
                        let hi_c = count + wc;
                        let ratios = [
                            (sum - ws) / lo_c,
                            (sum - ws) / hi_c,
                            (sum + ws) / lo_c,
                            (sum + ws) / hi_c,
                        ];
                        let lo = ratios
                            .iter()
                            .cloned()
                            .fold(f64::INFINITY, f64::min)
                            .clamp(bounds.lower(), bounds.upper());
                        let hi = ratios
                            .iter()
                            .cloned()
                            .fold(f64::NEG_INFINITY, f64::max)
                            .clamp(bounds.lower(), bounds.upper());
                        values.push(ReleasedValue {
                            name: format!("mean({column})"),
                            value,
                            interval: (lo, hi),
                        });
                        sum_index += 1;
                    }
                }
            }
            rows.push(ReleasedRow { key: k, values });
        }
        rows.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(rows)
    }
}

/// The bytes a cell's noise is keyed by (NULL differs from every string).
fn cell_bytes(key: &Option<String>) -> &[u8] {
    match key {
        Some(k) => k.as_bytes(),
        None => &[0xff, 0xfe],
    }
}

/// A budget (ε or ρ) split evenly over a unit's at most `max_groups` cells, rounded
/// down so that the cells together never spend more than the budget.
fn per_cell(budget: f64, max_groups: u32) -> f64 {
    round::div_down(budget, f64::from(max_groups))
}

/// The noise of one aggregate's cells.
enum CellNoise {
    /// Discrete Laplace: ε per cell, sensitivity Δ∞ per cell.
    Laplace {
        noise: Geometric,
        sensitivity: u64,
        epsilon: f64,
    },
    /// Discrete Gaussian, ρ/L0-zCDP per cell (boxed: it is much larger).
    Gaussian(Box<DiscreteGaussian>),
}

impl CellNoise {
    fn release(&self, value: i64, rng: &mut rand_chacha::ChaCha20Rng) -> i64 {
        match self {
            CellNoise::Laplace { noise, .. } => noise.release(value, rng),
            CellNoise::Gaussian(noise) => noise.release(value, rng),
        }
    }

    /// An integer `w` with `P(|Z| > w) ≤ β`. Discrete Laplace of scale `Δ/ε`:
    /// `P(|Z| > w) = 2r^(w+1)/(1 + r)`, `r = e^(−ε/Δ)`, the smallest such `w`. Discrete
    /// Gaussian: sub-Gaussian with variance proxy σ² (CKS20), so
    /// `P(|Z| ≥ t) ≤ 2e^(−t²/(2σ²))` and `w = ⌈σ·√(2 ln(2/β))⌉` (conservative).
    fn half_width(&self, beta: f64) -> f64 {
        match self {
            CellNoise::Laplace {
                sensitivity, epsilon, ..
            } => {
                let r = (-epsilon / *sensitivity as f64).exp();
                let w = ((beta * (1.0 + r) / 2.0).ln() / r.ln() - 1.0).ceil();
                w.max(0.0)
            }
            CellNoise::Gaussian(noise) => (noise.sigma() * (2.0 * (2.0 / beta).ln()).sqrt()).ceil(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sums_beyond_i64_saturate_instead_of_wrapping_or_failing() {
        use datafusion::arrow::array::{ArrayRef, Int64Array};
        let wide: ArrayRef = Arc::new(
            Decimal128Array::from(vec![
                Some(i128::from(i64::MAX) + 5),
                None,
                Some(-7),
                Some(i128::MIN / 2),
            ])
            .with_precision_and_scale(38, 0)
            .unwrap(),
        );
        assert_eq!(saturating_i64(&wide).unwrap(), vec![i64::MAX, 0, -7, i64::MIN]);
        let counts: ArrayRef = Arc::new(Int64Array::from(vec![Some(3), None]));
        assert_eq!(saturating_i64(&counts).unwrap(), vec![3, 0]);
    }

    #[test]
    fn public_keys_on_integer_columns_compare_numbers_with_the_same_meaning() {
        use datafusion::arrow::datatypes::Field;
        let schema = Schema::new(vec![
            Field::new("day", DataType::Int32, true),
            Field::new("name", DataType::Utf8, true),
        ]);
        let keys: Vec<String> = ["1", "01", "-3", "+4", "x", "9223372036854775808"]
            .map(String::from)
            .into();
        // Only canonical integers can equal CAST(day AS VARCHAR).
        assert_eq!(
            public_key_filter("day", &schema, &keys),
            " WHERE \"day\" IN (1, -3)"
        );
        assert_eq!(public_key_filter("day", &schema, &keys[4..]), " WHERE FALSE");
        assert_eq!(
            public_key_filter("name", &schema, &keys[..2]),
            " WHERE CAST(\"name\" AS VARCHAR) IN ('1', '01')"
        );
    }

    #[test]
    fn zcdp_releases_charge_the_sum_of_rho_and_refuse_private_keys() {
        let bounds = Bounds::new(0.0, 1.0).unwrap();
        let q = GroupedQuery::new("t", "g")
            .public_keys(["a"])
            .count(0.5)
            .sum("v", bounds, 0.25)
            .mean("v", bounds, 0.25)
            .zcdp();
        assert_eq!(q.privacy_loss().unwrap(), PrivacyLoss::zcdp(1.0).unwrap());
        // Each ε is charged; the sum is rounded up, never down.
        let thirds = GroupedQuery::new("t", "g").count(0.1).count(0.2);
        assert!(thirds.privacy_loss().unwrap().epsilon().unwrap() >= 0.1 + 0.2);
        let private = GroupedQuery::new("t", "g")
            .private_keys(1.0, 1e-6)
            .count(0.5)
            .zcdp();
        assert!(matches!(private.privacy_loss(), Err(DpError::Invalid(_))));
        assert!(matches!(
            GroupedQuery::new("t", "g").count(-1.0).zcdp().privacy_loss(),
            Err(DpError::Privacy(_))
        ));
    }

    #[test]
    fn zcdp_cells_get_discrete_gaussian_noise_of_the_calibrated_variance() {
        // L0 = 3 cells of Δ∞ = m = 2 rows per unit, ρ = 0.3: σ² = L0·m²/(2ρ) = 20.
        let plan = Plan {
            grid_exp: HashMap::new(),
            bounds: ContributionBounds {
                max_groups: 3,
                max_rows_per_group: 2,
            },
        };
        let query = GroupedQuery::new("t", "g").public_keys(["a"]).count(0.3).zcdp();
        let exact: HashMap<Option<String>, Vec<i64>> = [(Some("a".to_string()), vec![1000, 400])].into();
        let runs = 20_000;
        let noise: Vec<f64> = (0..runs)
            .map(|i: u64| {
                let mut k = [0u8; 32];
                k[..8].copy_from_slice(&i.to_le_bytes());
                let rows = plan
                    .add_noise(&query, &exact, &ReleaseKey::from_bytes_insecure(k))
                    .unwrap();
                rows[0].values[0].value - 1000.0
            })
            .collect();
        let mean = noise.iter().sum::<f64>() / runs as f64;
        let variance = noise.iter().map(|z| (z - mean).powi(2)).sum::<f64>() / (runs - 1) as f64;
        // (n − 1)s²/σ² is χ²(n − 1) for Gaussian noise (the discrete Gaussian's variance
        // differs from σ² by < e^(−2π²σ²) here): two-sided α = 1e-6, z = 4.89, normal
        // approximation of χ² at n − 1 = 19 999 degrees of freedom.
        let sigma2 = 20.0;
        let tolerance = 4.89 * (2.0 / (runs - 1) as f64).sqrt();
        println!(
            "variance {variance:.3} vs σ² = {sigma2} (±{:.3})",
            tolerance * sigma2
        );
        assert!((variance / sigma2 - 1.0).abs() <= tolerance);
        assert!(mean.abs() <= 4.89 * (sigma2 / runs as f64).sqrt());
        // The interval: ⌈σ·√(2 ln 40)⌉ = ⌈4.47·2.716⌉ = 13.
        let w = plan
            .add_noise(&query, &exact, &ReleaseKey::from_bytes_insecure([1; 32]))
            .unwrap()[0]
            .values[0]
            .interval;
        assert_eq!(w.1 - w.0, 26.0);
    }

    #[test]
    fn a_key_held_by_one_unit_is_released_in_at_most_delta_of_runs() {
        // The selection stage on fixed exact aggregates (what the bounded plan returns):
        // "solo" has one distinct unit, "crowd" 10 000. Each run uses a fresh key.
        let bounds = ContributionBounds {
            max_groups: 3,
            max_rows_per_group: 1,
        };
        let plan = Plan {
            grid_exp: HashMap::new(),
            bounds,
        };
        let delta = 1e-3;
        let query = GroupedQuery::new("t", "g").private_keys(1.0, delta).count(0.5);
        let exact: HashMap<Option<String>, Vec<i64>> = [
            (Some("solo".to_string()), vec![1, 1]),
            (Some("crowd".to_string()), vec![10_000, 10_000]),
        ]
        .into_iter()
        .collect();
        let runs = 100_000u64;
        let (mut solo, mut crowd) = (0u64, 0u64);
        for i in 0..runs {
            let mut k = [0u8; 32];
            k[..8].copy_from_slice(&i.to_le_bytes());
            let rows = plan
                .add_noise(&query, &exact, &ReleaseKey::from_bytes_insecure(k))
                .unwrap();
            for r in rows {
                match r.key.as_deref() {
                    Some("solo") => solo += 1,
                    Some("crowd") => crowd += 1,
                    _ => unreachable!(),
                }
            }
        }
        // Bernstein: P(X ≥ np + t) ≤ exp(−t²/(2(np + t/3))) ≤ 1e-9 for X ~ Bin(n, p),
        // p = δ/L0 the proven per-group bound.
        let np = runs as f64 * delta / f64::from(bounds.max_groups);
        let z = (1e9f64).ln();
        let t = z / 3.0 + ((z / 3.0).powi(2) + 2.0 * np * z).sqrt();
        println!(
            "solo released {solo} / {runs} times (bound {:.1}); crowd {crowd}",
            np + t
        );
        assert!((solo as f64) <= np + t);
        assert_eq!(crowd, runs);
    }
}
