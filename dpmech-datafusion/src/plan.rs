//! Stage 2, the plan: from a query over a private table to everything a release fixes
//! before it reads a row — the guarantee to charge, each aggregate's grid and noise, the
//! selection threshold, and the engine's physical plan. Any of them can refuse the query
//! (an unknown column, a type without a total reading, a grid, sensitivity or threshold
//! that is not representable, a budget no noise can meet), and all of them run **before
//! the charge**, so a refused query spends nothing.
//!
//! The engine's plan is built with DataFusion's `LogicalPlanBuilder` over the private
//! table's provider itself: nothing is registered in the user's `SessionContext`, so a
//! release that fails or is cancelled leaves it as it was.
//!
//! ```text
//! scan(private table) → [filter: public keys]
//!   → project (fingerprint(unit) AS __f, key AS __g,
//!              grid_j(TRY_CAST(column_j AS DOUBLE)) [− centre_j] AS __v_j,
//!              bin_i(TRY_CAST(column_i AS DOUBLE)) AS __b_i)
//!   → repartition by __f → BoundContributionsExec                      (module bound)
//!   → GROUP BY __g, __k: SUM(__count), SUM(__units), SUM(__s_j), SUM(__q_i), SUM(__n)
//!                   as DECIMAL(38, 0)
//! ```
//!
//! `__k` is −1 on a group's row of scalar partials and a bin's index on the rows of
//! the histograms' non-empty bins (module `columns`), so a quantile's grid of up to
//! [`MAX_QUANTILE_BINS`](crate::MAX_QUANTILE_BINS) bins costs rows per non-empty bin,
//! not plan width.
//!
//! The key `__g` is the grouping column itself for one column, the one-to-one text of
//! the columns' texts for several (`GroupKeyText`), and the empty text without `GROUP
//! BY` (one cell).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::catalog::TableProvider;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, TableReference};
use datafusion::datasource::provider_as_source;
use datafusion::execution::SessionState;
use datafusion::functions_aggregate::expr_fn::{count, sum};
use datafusion::logical_expr::{Expr, LogicalPlanBuilder, ScalarUDF, cast, lit, try_cast};
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_expr::projection::ProjectionExpr;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::projection::ProjectionExec;
use dpmech::PrivacyLoss;
use dpmech::statistics::{Bounds, QuantileGrid};

use crate::aggregate::encode_tuple;
use crate::bound::{BoundContributionsExec, BoundSpec, BoundedTable};
use crate::columns;
use crate::error::DpError;
use crate::key::{RankKey, ReleaseKey};
use crate::noise::{AggregateNoise, MomentBudgets, Moments, SpreadColumns};
use crate::query::{Aggregate, ContributionBounds, GroupedQuery, Keys};
use crate::select::Selection;
use crate::udf::{
    Centring, Grid, GridBin, GridUnits, GroupKeyText, MagnitudeBin, UnitFingerprint, fits_i64,
    has_total_text_form,
};

/// A registered private table: the raw rows' provider (kept by the session, never
/// registered anywhere), its privacy unit and contribution bounds.
#[derive(Debug, Clone)]
pub(crate) struct PrivateTable {
    pub(crate) name: String,
    pub(crate) provider: Arc<dyn TableProvider>,
    pub(crate) unit: String,
    pub(crate) bounds: ContributionBounds,
}

/// A release, planned: everything public it fixes before reading a row.
#[derive(Debug)]
pub(crate) struct ReleasePlan {
    /// The guarantee to charge.
    pub(crate) loss: PrivacyLoss,
    /// The noise of each aggregate, in the query's order.
    pub(crate) aggregates: Vec<AggregateNoise>,
    /// Partition selection, for private keys.
    pub(crate) selection: Option<Selection>,
    /// The public keys (each as its cell's text), for public keys.
    pub(crate) public_keys: Option<Vec<String>>,
    /// The grouping columns and their types, in the query's order.
    pub(crate) group_columns: Vec<(String, DataType)>,
    /// The number of a group's exact scalar partials: the count, the units, a sum per
    /// record column and a sum of squares per family of moments (the histograms' bins
    /// are read apart).
    pub(crate) partials: usize,
    /// The engine's plan of the exact partials.
    pub(crate) physical: Arc<dyn ExecutionPlan>,
}

/// A record column of the rows stage: its source column, bounds and grid, and for a
/// variance the centring of its records.
struct ValueColumn {
    column: String,
    bounds: Bounds,
    grid: Grid,
    centring: Option<Centring>,
}

/// A bin column of the rows stage: its source column and binning (one per distinct
/// pair, shared by the aggregates that read it).
struct BinColumn {
    column: String,
    binning: Binning,
}

/// How a bin column bins its records.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Binning {
    /// Equal bins of a quantile's grid ([`GridBin`]).
    Grid(QuantileGrid),
    /// Signed powers of two, for bounds ([`MagnitudeBin`]).
    Magnitude,
}

impl Binning {
    /// The number of bins (histogram columns) of the binning.
    fn bins(&self) -> usize {
        match self {
            Binning::Grid(grid) => grid.bins(),
            Binning::Magnitude => MagnitudeBin::bins(),
        }
    }
}

/// The bin column of `column` binned by `binning` in `bins`, added if new: the index of
/// its first bin among the bins of all histograms.
fn bin_column(bins: &mut Vec<BinColumn>, column: &str, binning: Binning) -> usize {
    let index = match bins
        .iter()
        .position(|b| b.column == column && b.binning == binning)
    {
        Some(i) => i,
        None => {
            bins.push(BinColumn {
                column: column.to_string(),
                binning,
            });
            bins.len() - 1
        }
    };
    bins[..index].iter().map(|b| b.binning.bins()).sum::<usize>()
}

impl ReleasePlan {
    /// Validates and plans `query` over `table` for the session `state`, with the
    /// bounding keyed by `key`. Reads no row and charges nothing.
    pub(crate) async fn new(
        query: &GroupedQuery,
        table: &PrivateTable,
        state: &SessionState,
        key: &ReleaseKey,
    ) -> Result<Self, DpError> {
        let loss = query.privacy_loss()?;
        let ContributionBounds {
            max_groups,
            max_rows_per_group,
        } = table.bounds;
        let schema = table.provider.schema();
        let mut group_columns = Vec::with_capacity(query.group_by.len());
        for name in &query.group_by {
            let group_type = column_type(&schema, name)?;
            if !has_total_text_form(group_type) {
                return Err(DpError::UnsupportedType {
                    column: name.clone(),
                    data_type: group_type.to_string(),
                    role: "a group key (integers, floats, decimals, dates, booleans and text can)",
                });
            }
            group_columns.push((name.clone(), group_type.clone()));
        }
        let mut values: Vec<ValueColumn> = Vec::new();
        let mut bins: Vec<BinColumn> = Vec::new();
        // Means and variances of one column share its moments (module `noise`).
        let family = moment_families(&query.aggregates);
        // A value column per sum and per mean outside a family, one per family; a
        // square column per family. The squares follow the sums of every value column,
        // the histograms both.
        let square_count = family.iter().enumerate().filter(|&(i, f)| *f == Some(i)).count();
        let value_count = query
            .aggregates
            .iter()
            .zip(&family)
            .filter(|(a, f)| a.column().is_some() && f.is_none())
            .count()
            + square_count;
        let mut squares: Vec<(u32, u32)> = Vec::new();
        let mut shared: Vec<(usize, Arc<Moments>)> = Vec::new();
        let mut aggregates = Vec::with_capacity(query.aggregates.len());
        for (index, aggregate) in query.aggregates.iter().enumerate() {
            // Histograms: a bin column per distinct (column, binning), counts per bin.
            let binned = match aggregate {
                Aggregate::Quantile {
                    column,
                    bounds,
                    bins: size,
                    ..
                } => Some((
                    column,
                    Binning::Grid(
                        QuantileGrid::new(bounds.lower(), bounds.upper(), *size)?
                            .impute_nan(bounds.nan_value())?,
                    ),
                )),
                Aggregate::Bounds { column, .. } => Some((column, Binning::Magnitude)),
                _ => None,
            };
            if let Some((column, binning)) = binned {
                check_value_type(&schema, column)?;
                let offset = bin_column(&mut bins, column, binning);
                aggregates.push(AggregateNoise::new(
                    aggregate,
                    offset,
                    None,
                    max_groups,
                    max_rows_per_group,
                    query.zcdp,
                )?);
                continue;
            }
            if let (Some(leader), Some((column, bounds))) = (family[index], aggregate.column()) {
                if leader == index {
                    // The family's centred record column and its squares, at the next
                    // value and square columns, and the moments its members read.
                    check_value_type(&schema, column)?;
                    let grid = Grid::for_bounds(bounds)?;
                    let centring = Centring::new(bounds, &grid);
                    values.push(ValueColumn {
                        column: column.to_string(),
                        bounds: *bounds,
                        grid,
                        centring: Some(centring),
                    });
                    let value = values.len() - 1;
                    squares.push((value as u32, centring.shift));
                    let columns = SpreadColumns {
                        value,
                        square: crate::columns::partial::square(value_count, squares.len() - 1),
                        grid,
                        centring,
                    };
                    let members = query
                        .aggregates
                        .iter()
                        .zip(&family)
                        .filter(|(_, f)| **f == Some(index))
                        .map(|(a, _)| a);
                    let moments = Moments::new(
                        index,
                        columns,
                        MomentBudgets::of(members),
                        max_groups,
                        max_rows_per_group,
                        query.zcdp,
                    )?;
                    shared.push((index, Arc::new(moments)));
                }
                let moments = shared
                    .iter()
                    .find(|(i, _)| *i == leader)
                    .map(|(_, m)| m.clone())
                    .ok_or_else(|| crate::error::internal("a family's moments precede its members"))?;
                aggregates.push(AggregateNoise::from_moments(aggregate, moments)?);
                continue;
            }
            let (value, grid) = match aggregate.column() {
                None => (0, None),
                Some((column, bounds)) => {
                    check_value_type(&schema, column)?;
                    let grid = Grid::for_bounds(bounds)?;
                    values.push(ValueColumn {
                        column: column.to_string(),
                        bounds: *bounds,
                        grid,
                        centring: None,
                    });
                    (values.len() - 1, Some(grid))
                }
            };
            aggregates.push(AggregateNoise::new(
                aggregate,
                value,
                grid,
                max_groups,
                max_rows_per_group,
                query.zcdp,
            )?);
        }
        let (selection, public_keys) = match &query.keys {
            Keys::Private { epsilon, delta } => (
                Some(Selection::new(*epsilon, *delta, max_groups, query.zcdp)?),
                None,
            ),
            Keys::Public(keys) => (None, Some(keys.iter().map(|k| cell_text(k)).collect())),
            Keys::PublicTable { table, .. } => {
                return Err(crate::error::internal(format!(
                    "the keys of public table `{table}` were not read before planning"
                )));
            }
        };
        let spec = BoundSpec::new(
            max_groups,
            max_rows_per_group,
            key.rank_key("groups"),
            query.unbounded(),
        )?
        .with_histograms(bins.iter().map(|b| b.binning.bins() as u32).collect())
        .with_squares(squares);
        let physical = engine_plan(query, table, &group_columns, (&values, &bins), spec, state, key).await?;
        Ok(ReleasePlan {
            loss,
            aggregates,
            selection,
            public_keys,
            group_columns,
            partials: crate::columns::partial::scalars(values.len(), square_count),
            physical,
        })
    }
}

/// The engine's plan of a release planned under one key, keyed for another release:
/// the only keyed parts of a plan are the unit fingerprint (`__f`, in a projection) and
/// the bounding's rank key, so both are replaced, and every node is rebuilt with fresh
/// state (`reset_state`), as if planned anew. `None` if the plan does not have exactly
/// that shape (one fingerprint, one bounding operator, both re-keyed): the caller then
/// plans the release anew instead.
pub(crate) fn rekeyed(plan: &Arc<dyn ExecutionPlan>, key: &ReleaseKey) -> Option<Arc<dyn ExecutionPlan>> {
    let (units, groups) = (key.rank_key("units"), key.rank_key("groups"));
    let mut replaced = (0usize, 0usize);
    let fresh = plan
        .clone()
        .transform_up(|node| {
            if let Some(bound) = node.downcast_ref::<BoundContributionsExec>() {
                replaced.1 += 1;
                return Ok(Transformed::yes(Arc::new(bound.with_rank_key(groups)?) as _));
            }
            if let Some(projection) = node.downcast_ref::<ProjectionExec>() {
                let schema = projection.input().schema();
                let exprs = projection
                    .expr()
                    .iter()
                    .map(|p| {
                        let expr = p.expr.clone().transform_up(|e| {
                            let Some(f) = e.downcast_ref::<ScalarFunctionExpr>() else {
                                return Ok(Transformed::no(e));
                            };
                            if f.fun().inner().downcast_ref::<UnitFingerprint>().is_none() {
                                return Ok(Transformed::no(e));
                            }
                            replaced.0 += 1;
                            let udf = ScalarUDF::new_from_impl(UnitFingerprint::from_key(
                                f.fun().name().into(),
                                units,
                            ));
                            Ok(Transformed::yes(Arc::new(ScalarFunctionExpr::new(
                                f.name(),
                                Arc::new(udf),
                                f.args().to_vec(),
                                e.return_field(&schema)?,
                                Arc::new(f.config_options().clone()),
                            )) as _))
                        })?;
                        Ok(ProjectionExpr {
                            expr: expr.data,
                            alias: p.alias.clone(),
                        })
                    })
                    .collect::<datafusion::common::Result<Vec<_>>>()?;
                return Ok(Transformed::yes(Arc::new(ProjectionExec::try_new(
                    exprs,
                    projection.input().clone(),
                )?) as _));
            }
            Ok(Transformed::yes(node.reset_state()?))
        })
        .ok()?
        .data;
    (replaced == (1, 1) && keyed_parts(&fresh) == Some((units, groups))).then_some(fresh)
}

/// The keys of a plan's unit fingerprints and bounding operators, if it has exactly one
/// of each.
pub(crate) fn keyed_parts(plan: &Arc<dyn ExecutionPlan>) -> Option<(RankKey, RankKey)> {
    let (mut units, mut groups) = (Vec::new(), Vec::new());
    plan.apply(|node| {
        if let Some(bound) = node.downcast_ref::<BoundContributionsExec>() {
            groups.push(bound.spec().rank_key);
        }
        node.apply_expressions(&mut |root| {
            root.apply(|e| {
                if let Some(f) = e.downcast_ref::<ScalarFunctionExpr>()
                    && let Some(fingerprint) = f.fun().inner().downcast_ref::<UnitFingerprint>()
                {
                    units.push(*fingerprint.key());
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    })
    .ok()?;
    match (units.as_slice(), groups.as_slice()) {
        ([u], [g]) => Some((*u, *g)),
        _ => None,
    }
}

/// For each aggregate, the first aggregate of its family of moments, if it has one: the
/// means, variances and standard deviations of one column with the same bounds form a
/// family when a variance or standard deviation is among them (module `noise`).
fn moment_families(aggregates: &[Aggregate]) -> Vec<Option<usize>> {
    let moment = |a: &Aggregate| match a {
        Aggregate::Mean { column, bounds, .. } | Aggregate::Variance { column, bounds, .. } => {
            Some((column.clone(), *bounds))
        }
        _ => None,
    };
    aggregates
        .iter()
        .map(|a| {
            let key = moment(a)?;
            let has_variance = aggregates
                .iter()
                .any(|b| matches!(b, Aggregate::Variance { .. }) && moment(b).as_ref() == Some(&key));
            has_variance
                .then(|| aggregates.iter().position(|b| moment(b).as_ref() == Some(&key)))
                .flatten()
        })
        .collect()
}

/// The text of a cell's key (see [`GroupKey`](crate::aggregate::GroupKey)).
fn cell_text(key: &[String]) -> String {
    match key {
        [one] => one.clone(),
        many => encode_tuple(&many.iter().map(Some).collect::<Vec<_>>()),
    }
}

/// The type of column `name` of the private table.
fn column_type<'a>(schema: &'a Schema, name: &str) -> Result<&'a DataType, DpError> {
    schema
        .field_with_name(name)
        .map(|f| f.data_type())
        .map_err(|_| DpError::UnknownColumn(name.to_string()))
}

/// Refuses a record column whose type has no total reading as a number.
fn check_value_type(schema: &Schema, column: &str) -> Result<(), DpError> {
    let data_type = column_type(schema, column)?;
    if is_value_type(data_type) {
        Ok(())
    } else {
        Err(DpError::UnsupportedType {
            column: column.to_string(),
            data_type: data_type.to_string(),
            role: "read as a number (numbers, booleans and text can)",
        })
    }
}

/// Types a record may have: numbers, and text that is parsed (what does not parse is
/// NULL, then the NaN rule) — `TRY_CAST(… AS DOUBLE)` of them never fails.
fn is_value_type(data_type: &DataType) -> bool {
    match data_type {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Boolean | DataType::Null => {
            true
        }
        DataType::Dictionary(_, values) => is_value_type(values),
        t => t.is_numeric(),
    }
}

/// A column by its exact name (no parsing of dots or quotes).
fn column(name: &str) -> Expr {
    Expr::Column(Column::new_unqualified(name))
}

/// The engine's plan (see the module docs) over the record and bin columns, physically
/// planned for `state`.
async fn engine_plan(
    query: &GroupedQuery,
    table: &PrivateTable,
    group_columns: &[(String, DataType)],
    (values, bins): (&[ValueColumn], &[BinColumn]),
    spec: BoundSpec,
    state: &SessionState,
    key: &ReleaseKey,
) -> Result<Arc<dyn ExecutionPlan>, DpError> {
    // The rows, read by the public rules: (unit fingerprint, group, records in grid units).
    let fingerprint = ScalarUDF::new_from_impl(UnitFingerprint::new("dpmech_unit_fingerprint".into(), key));
    let group_key = match group_columns {
        [(one, _)] => column(one),
        [] => lit(""),
        many => {
            ScalarUDF::new_from_impl(GroupKeyText::new()).call(many.iter().map(|(c, _)| column(c)).collect())
        }
    };
    let mut projection = vec![
        fingerprint
            .call(vec![column(&table.unit)])
            .alias(columns::FINGERPRINT),
        group_key.clone().alias(columns::GROUP),
    ];
    for (j, v) in values.iter().enumerate() {
        let grid = ScalarUDF::new_from_impl(GridUnits::new(
            format!("dpmech_grid_units_{j}"),
            v.bounds,
            v.grid.exp(),
        ));
        // TRY_CAST: a text value that does not parse becomes NULL (then the NaN rule),
        // never a data-dependent error.
        let units = grid.call(vec![try_cast(column(&v.column), DataType::Float64)]);
        // A variance's records are centred (Int32 − Int32: |y| ≤ 2²¹ + 1, exact).
        let units = match v.centring {
            None => units,
            Some(c) => units - lit(c.centre),
        };
        projection.push(units.alias(columns::value(j)));
    }
    for (j, b) in bins.iter().enumerate() {
        let bin = match b.binning {
            Binning::Grid(grid) => {
                ScalarUDF::new_from_impl(GridBin::new(format!("dpmech_grid_bin_{j}"), grid))
            }
            Binning::Magnitude => {
                ScalarUDF::new_from_impl(MagnitudeBin::new(format!("dpmech_magnitude_bin_{j}"))?)
            }
        };
        projection.push(
            bin.call(vec![try_cast(column(&b.column), DataType::Float64)])
                .alias(columns::bin(j)),
        );
    }
    let mut rows = LogicalPlanBuilder::scan(
        TableReference::bare(table.name.as_str()),
        provider_as_source(table.provider.clone()),
        None,
    )?;
    // Public keys: each grouping column restricted to the values it takes in the keys
    // (exactly the keys for one column, and for several whose keys are the product of
    // those values); for several columns whose keys are not a product, also the tuple's
    // text restricted to the listed tuples, so that no row of an unlisted combination
    // reaches the bounding and spends one of its unit's L0 slots.
    if let Keys::Public(keys) = &query.keys {
        let mut combinations = 1usize;
        for (i, (name, data_type)) in group_columns.iter().enumerate() {
            let mut values: Vec<String> = keys.iter().map(|k| k[i].clone()).collect();
            values.sort();
            values.dedup();
            combinations = combinations.saturating_mul(values.len());
            rows = rows.filter(public_key_filter(name, data_type, &values))?;
        }
        if group_columns.len() > 1 {
            let mut tuples: Vec<String> = keys.iter().map(|k| cell_text(k)).collect();
            tuples.sort();
            tuples.dedup();
            if tuples.len() < combinations {
                rows = rows.filter(
                    group_key
                        .clone()
                        .in_list(tuples.iter().map(|t| lit(t.as_str())).collect(), false),
                )?;
            }
        }
    }
    let rows = state
        .create_physical_plan(&rows.project(projection)?.build()?)
        .await?;

    // Bounding by the plan's own operator after a repartition by unit (module `bound`),
    // then per group the partitions' partials summed exactly (DECIMAL(38, 0), i128: a
    // pair's share is at most m records of ~2²¹ units, so no table of fewer than 2¹⁰⁰
    // rows can overflow it).
    let bounded = provider_as_source(Arc::new(BoundedTable::new(rows, spec)));
    let exact = |name: &str| sum(cast(column(name), DataType::Decimal128(38, 0))).alias(name);
    let mut sums = vec![exact(columns::COUNT), exact(columns::UNITS)];
    sums.extend((0..values.len()).map(|j| exact(&columns::sum(j))));
    let square_columns = values.iter().filter(|v| v.centring.is_some()).count();
    sums.extend((0..square_columns).map(|i| exact(&columns::square(i))));
    sums.push(exact(columns::BIN_COUNT));
    // The completeness check's columns (module `columns`): the tags' sum, and how many
    // bounding rows each row merges.
    sums.push(exact(columns::TAG));
    sums.push(count(column(columns::TAG)).alias(columns::READS));
    let merged = LogicalPlanBuilder::scan("dpmech_bounded", bounded, None)?
        .aggregate(vec![column(columns::GROUP), column(columns::BIN)], sums)?
        .build()?;
    Ok(state.create_physical_plan(&merged).await?)
}

/// The predicate keeping the rows whose group key, as text, is one of `keys`. On a
/// column of integers it compares numbers (`x = k` exactly when `CAST(x AS VARCHAR) = k`
/// for the keys that are integers in canonical form; no other key can match), which
/// spares converting every row to text.
fn public_key_filter(group: &str, data_type: &DataType, keys: &[String]) -> Expr {
    let list: Vec<Expr> = if fits_i64(data_type) {
        keys.iter()
            .filter_map(|k| k.parse::<i64>().ok().filter(|v| v.to_string() == *k))
            .map(lit)
            .collect()
    } else {
        keys.iter().map(|k| lit(k.as_str())).collect()
    };
    if list.is_empty() {
        return lit(false);
    }
    let key = if fits_i64(data_type) {
        column(group)
    } else {
        cast(column(group), DataType::Utf8)
    };
    key.in_list(list, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_keys_on_integer_columns_compare_numbers_with_the_same_meaning() {
        let keys: Vec<String> = ["1", "01", "-3", "+4", "x", "9223372036854775808"]
            .map(String::from)
            .into();
        // Only canonical integers can equal CAST(day AS VARCHAR).
        assert_eq!(
            public_key_filter("day", &DataType::Int32, &keys),
            column("day").in_list(vec![lit(1i64), lit(-3i64)], false)
        );
        assert_eq!(public_key_filter("day", &DataType::Int32, &keys[4..]), lit(false));
        assert_eq!(
            public_key_filter("name", &DataType::Utf8, &keys[..2]),
            cast(column("name"), DataType::Utf8).in_list(vec![lit("1"), lit("01")], false)
        );
        assert_eq!(public_key_filter("name", &DataType::Utf8, &[]), lit(false));
    }
}
