//! The `dp_` aggregate functions as DataFusion aggregate UDFs, for SQL text and for
//! DataFusion's own `DataFrame::aggregate`.
//!
//! ```no_run
//! # async fn demo(session: &dpmech_datafusion::PrivateSession) -> Result<(), dpmech_datafusion::DpError> {
//! use datafusion::prelude::*;
//! use dpmech_datafusion::functions::{dp_count, dp_mean};
//!
//! let frame = session
//!     .table("visits")
//!     .await?
//!     .filter(col("day").in_list(vec![lit("mon"), lit("tue")], false))?
//!     .aggregate(vec![col("day")], vec![dp_count(0.5), dp_mean(col("duration"), 0.0, 3600.0, 0.5)])?;
//! let release = session.release_frame(frame).await?;
//! # Ok(()) }
//! ```
//!
//! A function is a declaration of what to release: DataFusion's planner checks and
//! types it like any aggregate, and [`PrivateSession::release_frame`] (or
//! [`PrivateSession::sql`]) reads the plan, charges its loss, and computes it over the
//! **bounded** rows of the private table (module docs of the crate). The functions are
//! [`Volatility::Volatile`], so no optimiser rule folds, shares or reuses them; and a
//! plan that tries to compute one directly — over a private table, whose scan refuses,
//! or over any other table, whose rows were never bounded — fails before reading a
//! row, with the same error whatever the data.
//!
//! [`PrivateSession::release_frame`]: crate::PrivateSession::release_frame
//! [`PrivateSession::sql`]: crate::PrivateSession::sql

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::function::AccumulatorArgs;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Expr, Signature, TableType, Volatility, lit,
};
use datafusion::physical_plan::ExecutionPlan;

/// Which private aggregate a `dp_` function declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum DpFunction {
    /// `dp_count(ε)`.
    Count,
    /// `dp_count_units(ε)`: distinct privacy units.
    CountUnits,
    /// `dp_sum(column, lower, upper, ε)`.
    Sum,
    /// `dp_mean(column, lower, upper, ε)`.
    Mean,
    /// `dp_variance(column, lower, upper, ε)`.
    Variance,
    /// `dp_stddev(column, lower, upper, ε)`.
    StdDev,
    /// `dp_bounds(column, ε)`.
    Bounds,
    /// `dp_quantile(column, lower, upper, q, ε [, bins])`.
    Quantile,
    /// `dp_median(column, lower, upper, ε [, bins])`.
    Median,
    /// `dp_partition_selection(ε, δ)`: the keys are found in the data.
    PartitionSelection,
}

impl DpFunction {
    const ALL: [DpFunction; 10] = [
        DpFunction::Count,
        DpFunction::CountUnits,
        DpFunction::Sum,
        DpFunction::Mean,
        DpFunction::Variance,
        DpFunction::StdDev,
        DpFunction::Bounds,
        DpFunction::Quantile,
        DpFunction::Median,
        DpFunction::PartitionSelection,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            DpFunction::Count => "dp_count",
            DpFunction::CountUnits => "dp_count_units",
            DpFunction::Sum => "dp_sum",
            DpFunction::Mean => "dp_mean",
            DpFunction::Variance => "dp_variance",
            DpFunction::StdDev => "dp_stddev",
            DpFunction::Bounds => "dp_bounds",
            DpFunction::Quantile => "dp_quantile",
            DpFunction::Median => "dp_median",
            DpFunction::PartitionSelection => "dp_partition_selection",
        }
    }

    /// The function a UDAF of this crate declares, `None` for any other.
    pub(crate) fn of(udaf: &AggregateUDF) -> Option<DpFunction> {
        udaf.inner().downcast_ref::<DpAggregate>().map(|f| f.function)
    }
}

/// The aggregate UDF of one `dp_` function (see the [module docs](self)).
#[derive(Debug, PartialEq, Eq, Hash)]
struct DpAggregate {
    function: DpFunction,
    signature: Signature,
}

impl AggregateUDFImpl for DpAggregate {
    fn name(&self) -> &str {
        self.function.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(match self.function {
            DpFunction::PartitionSelection => DataType::Boolean,
            _ => DataType::Float64,
        })
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        plan_err!(
            "{} is computed only by a private release (PrivateSession::release_frame or \
             PrivateSession::sql), over rows bounded per privacy unit",
            self.function.name()
        )
    }
}

/// The UDAF of `function`.
pub(crate) fn udaf(function: DpFunction) -> AggregateUDF {
    AggregateUDF::new_from_impl(DpAggregate {
        function,
        signature: Signature::variadic_any(Volatility::Volatile),
    })
}

/// Every `dp_` UDAF, for registration in a planning context.
pub(crate) fn all() -> impl Iterator<Item = AggregateUDF> {
    DpFunction::ALL.into_iter().map(udaf)
}

/// `dp_count(ε)`: the number of rows of each group, ε-DP (or ρ-zCDP with `ε` read as ρ
/// under [`GroupedQuery::zcdp`](crate::GroupedQuery::zcdp)).
pub fn dp_count(epsilon: f64) -> Expr {
    udaf(DpFunction::Count).call(vec![lit(epsilon)])
}

/// `dp_count_units(ε)`: the number of distinct privacy units (people, not rows) of each
/// group, ε-DP (ρ-zCDP under [`GroupedQuery::zcdp`](crate::GroupedQuery::zcdp)). One
/// unit adds at most 1 to each of at most L0 groups, so each cell gets ε/L0 with
/// sensitivity 1 — less noise than [`dp_count`], whose cells move by up to L∞ rows.
pub fn dp_count_units(epsilon: f64) -> Expr {
    udaf(DpFunction::CountUnits).call(vec![lit(epsilon)])
}

/// `dp_sum(column, lower, upper, ε)`: the sum of `column` per group, each record clamped
/// to `[lower, upper]` (NULL and NaN read as the midpoint).
pub fn dp_sum(column: Expr, lower: f64, upper: f64, epsilon: f64) -> Expr {
    udaf(DpFunction::Sum).call(vec![column, lit(lower), lit(upper), lit(epsilon)])
}

/// `dp_mean(column, lower, upper, ε)`: the mean of `column` per group, records read as
/// for [`dp_sum`]: a noisy sum over a noisy count, ε/2 each. With a [`dp_variance`] or
/// [`dp_stddev`] of the same column and bounds in the query, they share one noisy count
/// and one noisy sum (module docs of [`GroupedQuery::variance`](crate::GroupedQuery::variance)).
pub fn dp_mean(column: Expr, lower: f64, upper: f64, epsilon: f64) -> Expr {
    udaf(DpFunction::Mean).call(vec![column, lit(lower), lit(upper), lit(epsilon)])
}

/// `dp_variance(column, lower, upper, ε)`: the population variance of `column` per
/// group, records read as for [`dp_sum`], from three noisy exact sums at ε/3 each
/// ([`GroupedQuery::variance`](crate::GroupedQuery::variance)), shared with the
/// [`dp_mean`]s and [`dp_stddev`]s of the same column and bounds in the query.
pub fn dp_variance(column: Expr, lower: f64, upper: f64, epsilon: f64) -> Expr {
    udaf(DpFunction::Variance).call(vec![column, lit(lower), lit(upper), lit(epsilon)])
}

/// `dp_stddev(column, lower, upper, ε)`: the square root of [`dp_variance`], at the same
/// cost.
pub fn dp_stddev(column: Expr, lower: f64, upper: f64, epsilon: f64) -> Expr {
    udaf(DpFunction::StdDev).call(vec![column, lit(lower), lit(upper), lit(epsilon)])
}

/// `dp_bounds(column, ε)`: approximate bounds of `column` per group, for an analyst
/// without a public range — two released values, the lower then the upper bound
/// ([`GroupedQuery::bounds`](crate::GroupedQuery::bounds)).
pub fn dp_bounds(column: Expr, epsilon: f64) -> Expr {
    udaf(DpFunction::Bounds).call(vec![column, lit(epsilon)])
}

/// `dp_quantile(column, lower, upper, q, ε)`: the `q`-quantile of `column` per group,
/// records clamped to `[lower, upper]` (NULL and NaN read as the midpoint), selected over
/// the edges of [`DEFAULT_QUANTILE_BINS`](crate::DEFAULT_QUANTILE_BINS) equal bins
/// (in SQL an optional sixth argument sets the bins). Pure ε-DP
/// ([`GroupedQuery::quantile`](crate::GroupedQuery::quantile)).
pub fn dp_quantile(column: Expr, lower: f64, upper: f64, q: f64, epsilon: f64) -> Expr {
    udaf(DpFunction::Quantile).call(vec![column, lit(lower), lit(upper), lit(q), lit(epsilon)])
}

/// `dp_quantile(column, lower, upper, q, ε, bins)`: [`dp_quantile`] on a grid of `bins`
/// equal bins, up to [`MAX_QUANTILE_BINS`](crate::MAX_QUANTILE_BINS) (SQL's optional
/// sixth argument).
pub fn dp_quantile_on(column: Expr, lower: f64, upper: f64, q: f64, epsilon: f64, bins: u32) -> Expr {
    udaf(DpFunction::Quantile).call(vec![
        column,
        lit(lower),
        lit(upper),
        lit(q),
        lit(epsilon),
        lit(i64::from(bins)),
    ])
}

/// `dp_median(column, lower, upper, ε)`: [`dp_quantile`] at `q = 0.5`.
pub fn dp_median(column: Expr, lower: f64, upper: f64, epsilon: f64) -> Expr {
    udaf(DpFunction::Median).call(vec![column, lit(lower), lit(upper), lit(epsilon)])
}

/// `dp_partition_selection(ε, δ)`: the groups are keys found in the data, each released
/// only if enough units hold it ((ε, δ) partition selection). In SQL it is the `HAVING`
/// clause; in a DataFrame, one of the aggregates.
pub fn dp_partition_selection(epsilon: f64, delta: f64) -> Expr {
    udaf(DpFunction::PartitionSelection).call(vec![lit(epsilon), lit(delta)])
}

/// The stand-in of a private table in the planning context: its schema, for the
/// planner to check and type queries, and a scan that refuses, so a plan over the
/// private table can run only as a release.
pub(crate) struct PrivateScan {
    pub(crate) name: String,
    pub(crate) schema: SchemaRef,
}

impl fmt::Debug for PrivateScan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PrivateScan({})", self.name)
    }
}

#[async_trait]
impl TableProvider for PrivateScan {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        _projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan_err!(
            "`{}` is a private table: release it with PrivateSession::release_frame or \
             PrivateSession::sql",
            self.name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_function_is_volatile_and_recognised_by_its_udaf() {
        for function in DpFunction::ALL {
            let udaf = udaf(function);
            assert_eq!(udaf.name(), function.name());
            assert_eq!(udaf.signature().volatility, Volatility::Volatile);
            assert_eq!(DpFunction::of(&udaf), Some(function));
        }
        let other = datafusion::functions_aggregate::count::count_udaf();
        assert_eq!(DpFunction::of(&other), None);
    }
}
