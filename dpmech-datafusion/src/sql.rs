//! Private releases written as SQL text or as DataFusion DataFrames. Both are planned by
//! DataFusion itself — its SQL parser and planner, or `DataFrame::aggregate` — over a
//! stand-in of the private table, with the `dp_` aggregate UDFs of module
//! [`functions`](crate::functions); the logical plan is then read into a
//! [`GroupedQuery`], so the same bounding, exact aggregation, budget and noise apply.
//!
//! ```sql
//! SELECT day, dp_count(0.5), dp_mean(duration, 0, 3600, 0.5)
//! FROM visits
//! WHERE day IN ('mon', 'tue', 'wed')          -- public keys: each one released
//! GROUP BY day
//!
//! SELECT page, dp_count(0.5), dp_sum(duration, 0, 600, 0.5)
//! FROM visits
//! GROUP BY page
//! HAVING dp_partition_selection(0.5, 1e-6)    -- private keys: (ε, δ) partition selection
//! ```
//!
//! Aggregates: `dp_count(ε)`, `dp_count_units(ε)` (distinct privacy units),
//! `dp_sum(column, lower, upper, ε)`, `dp_mean(column, lower, upper, ε)`,
//! `dp_variance(column, lower, upper, ε)`, `dp_stddev(column, lower, upper, ε)`,
//! `dp_bounds(column, ε)` (two values: approximate lower and upper bounds),
//! `dp_quantile(column, lower, upper, q, ε [, bins])` and `dp_median(column, lower,
//! upper, ε [, bins])` (records clamped to the public bounds, NULL and NaN read as their
//! midpoint), with literal parameters. The accepted plan is: one private table (aliased or not); `GROUP BY` of
//! any number of its columns — one, several (a cell per combination: `GROUP BY day,
//! country`) or none (one cell for the whole table); for public keys a filter
//! `column IN (literals…)` per grouping column, joined by `AND` (the cells are their
//! cross-product), or for one grouping column `column IN (SELECT c FROM calendar)` over
//! a table registered as public ([`PrivateSession::register_public`]; its distinct
//! values are the keys); the aggregates; for private keys `HAVING
//! dp_partition_selection(ε, δ)` (in a DataFrame, that function among the aggregates);
//! and a projection that only names or renames the results. Everything else — joins,
//! other filters, other functions, computed columns, `ORDER BY`, `LIMIT`, DDL, several
//! statements — is refused with [`DpError::UnsupportedQuery`]: a query is checked before any
//! budget is charged or any row is read.

use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::{Aggregate as AggregateNode, Expr, LogicalPlan};
use datafusion::prelude::DataFrame;
use dpmech::statistics::Bounds;

#[cfg(doc)]
use crate::PrivateSession;
use crate::error::DpError;
use crate::functions::DpFunction;
use crate::query::GroupedQuery;

fn unsupported(what: impl Into<String>) -> DpError {
    DpError::UnsupportedQuery(what.into())
}

/// The name of a column reference, through aliases.
fn column(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Column(c) => Some(&c.name),
        Expr::Alias(a) => column(&a.expr),
        _ => None,
    }
}

/// A numeric literal, possibly negated.
fn number(expr: &Expr) -> Result<f64, DpError> {
    let refuse = || unsupported(format!("expected a number, found `{expr}`"));
    match expr {
        Expr::Literal(value, _) if value.data_type().is_numeric() && !value.is_null() => {
            match value.cast_to(&datafusion::arrow::datatypes::DataType::Float64) {
                Ok(ScalarValue::Float64(Some(x))) => Ok(x),
                _ => Err(refuse()),
            }
        }
        Expr::Negative(inner) => number(inner).map(|x| -x),
        _ => Err(refuse()),
    }
}

/// A public key: a text or integer literal, as the text it is compared with.
fn key_literal(expr: &Expr) -> Result<String, DpError> {
    let refuse = || {
        unsupported(format!(
            "a public key must be a text or integer literal, found `{expr}`"
        ))
    };
    let Expr::Literal(value, _) = expr else {
        return Err(refuse());
    };
    match value {
        ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) | ScalarValue::Utf8View(Some(s)) => {
            Ok(s.clone())
        }
        v if v.data_type().is_integer() && !v.is_null() => Ok(v.to_string()),
        _ => Err(refuse()),
    }
}

/// A `dp_` call: its function and positional arguments, through an alias.
fn dp_call(expr: &Expr) -> Result<(DpFunction, &[Expr]), DpError> {
    match expr {
        Expr::Alias(a) => dp_call(&a.expr),
        Expr::AggregateFunction(f) => {
            let p = &f.params;
            let function = DpFunction::of(&f.func).ok_or_else(|| {
                unsupported(format!(
                    "`{}` is not a private aggregate: use dp_count, dp_count_units, dp_sum, dp_mean, dp_variance, dp_stddev, dp_bounds, dp_quantile or dp_median",
                    f.func.name()
                ))
            })?;
            if p.distinct || p.filter.is_some() || !p.order_by.is_empty() || p.null_treatment.is_some() {
                return Err(unsupported(format!(
                    "{}: DISTINCT, FILTER, ORDER BY and null treatment are not supported",
                    function.name()
                )));
            }
            Ok((function, &p.args))
        }
        other => Err(unsupported(format!(
            "`{other}`: only the grouping column and dp_ aggregates can be selected"
        ))),
    }
}

fn arity(function: DpFunction, args: &[Expr], n: usize) -> Result<(), DpError> {
    if args.len() == n {
        Ok(())
    } else {
        Err(unsupported(format!(
            "{} takes {n} arguments, found {}",
            function.name(),
            args.len()
        )))
    }
}

/// `(column, lower, upper, x)`: the column, its bounds and the number `x`.
fn bounded(function: DpFunction, args: &[Expr]) -> Result<(String, Bounds, f64), DpError> {
    arity(function, args, 4)?;
    let col = column(&args[0]).ok_or_else(|| {
        unsupported(format!(
            "the first argument of {} must be a column",
            function.name()
        ))
    })?;
    let bounds = Bounds::new(number(&args[1])?, number(&args[2])?)?;
    Ok((col.to_string(), bounds, number(&args[3])?))
}

/// The output columns of the plan above the aggregate: `None` if it has no projection
/// (all of them, in order), else the names the projection takes, in its order.
struct Shape<'a> {
    aggregate: &'a AggregateNode,
    projected: Option<Vec<&'a str>>,
    /// The name of the aggregate column a `HAVING` filter tests.
    having: Option<&'a str>,
}

/// Peels `Projection? → Filter(HAVING)? → Aggregate`.
fn shape(plan: &LogicalPlan) -> Result<Shape<'_>, DpError> {
    let (projected, below) = match plan {
        LogicalPlan::Projection(p) => {
            let names = p
                .expr
                .iter()
                .map(|e| {
                    column(e).ok_or_else(|| {
                        unsupported(format!(
                            "`{e}`: only the grouping column and dp_ aggregates can be selected"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            (Some(names), p.input.as_ref())
        }
        other => (None, other),
    };
    let (having, below) = match below {
        LogicalPlan::Filter(f) => (
            Some(
                column(&f.predicate)
                    .ok_or_else(|| unsupported("HAVING must be dp_partition_selection(epsilon, delta)"))?,
            ),
            f.input.as_ref(),
        ),
        other => (None, other),
    };
    match below {
        LogicalPlan::Aggregate(aggregate) => Ok(Shape {
            aggregate,
            projected,
            having,
        }),
        other => Err(unsupported(format!(
            "a private release is one grouped aggregate of dp_ functions; found `{}`",
            other.display()
        ))),
    }
}

/// The `IN` lists of a public-keys filter: one `column IN (literals…)` per grouping
/// column, joined by `AND` (their cross-product is the keys), in any order.
fn key_lists(predicate: &Expr, columns: &[String]) -> Result<Vec<Vec<String>>, DpError> {
    let refuse = || {
        unsupported(
            "the only filter allowed is WHERE <group column> IN (<literal keys>), one per \
             grouping column, joined by AND",
        )
    };
    let mut lists: Vec<Option<Vec<String>>> = vec![None; columns.len()];
    let mut pending = vec![predicate];
    while let Some(expr) = pending.pop() {
        match expr {
            Expr::BinaryExpr(b) if b.op == datafusion::logical_expr::Operator::And => {
                pending.push(&b.left);
                pending.push(&b.right);
            }
            Expr::InList(InList {
                expr,
                list,
                negated: false,
            }) => {
                let i = column(expr)
                    .and_then(|c| columns.iter().position(|g| g == c))
                    .ok_or_else(refuse)?;
                if lists[i].is_some() {
                    return Err(unsupported(format!("two key lists for `{}`", columns[i])));
                }
                lists[i] = Some(list.iter().map(key_literal).collect::<Result<Vec<_>, _>>()?);
            }
            _ => return Err(refuse()),
        }
    }
    lists
        .into_iter()
        .zip(columns)
        .map(|(l, c)| l.ok_or_else(|| unsupported(format!("public keys need a key list for `{c}` too"))))
        .collect()
}

/// The public table and column of `key IN (SELECT column FROM table)`, if that is the
/// predicate.
fn key_subquery(predicate: &Expr, key: &str) -> Option<(String, String)> {
    let Expr::InSubquery(s) = predicate else {
        return None;
    };
    if s.negated || column(&s.expr) != Some(key) {
        return None;
    }
    let LogicalPlan::Projection(p) = s.subquery.subquery.as_ref() else {
        return None;
    };
    let [projected] = p.expr.as_slice() else {
        return None;
    };
    let name = column(projected)?;
    let mut below = p.input.as_ref();
    if let LogicalPlan::SubqueryAlias(a) = below {
        below = a.input.as_ref();
    }
    match below {
        LogicalPlan::TableScan(scan) if scan.filters.is_empty() && scan.fetch.is_none() => {
            Some((scan.table_name.table().to_string(), name.to_string()))
        }
        _ => None,
    }
}

/// The public keys a filter declares.
enum Declared {
    /// Literal lists, one per grouping column.
    Lists(Vec<Vec<String>>),
    /// A column of a public table (one grouping column).
    Table(String, String),
}

/// Peels `Filter(keys)? → SubqueryAlias? → TableScan`: the table and, if filtered, the
/// public keys it declares.
fn source(plan: &LogicalPlan, keys: &[String]) -> Result<(String, Option<Declared>), DpError> {
    let (lists, below) = match plan {
        LogicalPlan::Filter(f) => {
            let declared = match keys {
                [key] => key_subquery(&f.predicate, key).map(|(t, c)| Declared::Table(t, c)),
                _ => None,
            };
            let declared = match declared {
                Some(d) => d,
                None => Declared::Lists(key_lists(&f.predicate, keys)?),
            };
            (Some(declared), f.input.as_ref())
        }
        other => (None, other),
    };
    let below = match below {
        LogicalPlan::SubqueryAlias(a) => a.input.as_ref(),
        other => other,
    };
    match below {
        LogicalPlan::TableScan(scan) if scan.filters.is_empty() && scan.fetch.is_none() => {
            Ok((scan.table_name.table().to_string(), lists))
        }
        LogicalPlan::Join(_) => Err(unsupported("joins are not supported in a private release")),
        other => Err(unsupported(format!(
            "a private release reads one registered table; found `{}`",
            other.display()
        ))),
    }
}

impl GroupedQuery {
    /// Reads the release a DataFrame built from [`PrivateSession::table`] describes
    /// (what [`PrivateSession::release_frame`] releases), without running it.
    ///
    /// [`PrivateSession::table`]: crate::PrivateSession::table
    /// [`PrivateSession::release_frame`]: crate::PrivateSession::release_frame
    ///
    /// # Errors
    ///
    /// [`DpError::UnsupportedQuery`] for a frame outside the accepted form (module docs);
    /// [`DpError::Privacy`] for an invalid ε, ρ or δ.
    pub fn from_frame(frame: &DataFrame) -> Result<GroupedQuery, DpError> {
        GroupedQuery::from_plan(frame.logical_plan())
    }

    /// Reads one private release from a DataFusion logical plan (the
    /// [module docs](crate::sql) give the accepted form). Anything else is a typed error,
    /// returned before anything is charged or read.
    pub(crate) fn from_plan(plan: &LogicalPlan) -> Result<GroupedQuery, DpError> {
        let Shape {
            aggregate,
            projected,
            having,
        } = shape(plan)?;
        let keys: Vec<String> = aggregate
            .group_expr
            .iter()
            .map(|g| {
                column(g)
                    .map(String::from)
                    .ok_or_else(|| unsupported("GROUP BY must name columns"))
            })
            .collect::<Result<_, _>>()?;
        let (table, public) = source(&aggregate.input, &keys)?;

        // The aggregates by their output name (the aggregate's schema: groups, then each).
        let names: Vec<&str> = aggregate
            .schema
            .fields()
            .iter()
            .skip(keys.len())
            .map(|f| f.name().as_str())
            .collect();
        let calls: Vec<(DpFunction, &[Expr])> = aggregate
            .aggr_expr
            .iter()
            .map(dp_call)
            .collect::<Result<_, _>>()?;
        let selection = calls
            .iter()
            .position(|(f, _)| *f == DpFunction::PartitionSelection);
        if calls
            .iter()
            .filter(|(f, _)| *f == DpFunction::PartitionSelection)
            .count()
            > 1
        {
            return Err(unsupported("dp_partition_selection appears more than once"));
        }
        if let Some(tested) = having
            && selection.map(|i| names[i]) != Some(tested)
        {
            return Err(unsupported(
                "HAVING must be dp_partition_selection(epsilon, delta)",
            ));
        }

        let columns: Vec<&str> = keys.iter().map(String::as_str).collect();
        let mut release = GroupedQuery::grouped(&table, &columns);
        release = match (public, selection) {
            (Some(Declared::Lists(lists)), None) => release.public_keys_product(lists),
            (Some(Declared::Table(table, column)), None) => {
                release.public_keys_from_table(&table, &[&column])
            }
            // Without GROUP BY: the one cell of the whole table.
            (None, None) if keys.is_empty() => release,
            (None, Some(i)) => {
                let args = calls[i].1;
                arity(DpFunction::PartitionSelection, args, 2)?;
                release.private_keys(number(&args[0])?, number(&args[1])?)
            }
            (None, None) => {
                return Err(unsupported(
                    "declare the keys: WHERE key IN (…) for public keys, or \
                     HAVING dp_partition_selection(epsilon, delta) for keys found in the data",
                ));
            }
            (Some(_), Some(_)) => {
                return Err(unsupported(
                    "public keys (WHERE key IN …) and partition selection exclude each other",
                ));
            }
        };

        // The released aggregates, in the order of the projection if there is one.
        let order: Vec<usize> = match &projected {
            None => (0..calls.len()).collect(),
            Some(columns) => columns
                .iter()
                .filter(|c| !keys.iter().any(|k| k == *c))
                .map(|c| {
                    names.iter().position(|n| n == c).ok_or_else(|| {
                        unsupported(format!(
                            "`{c}`: only the grouping column and dp_ aggregates can be selected"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        for i in order {
            let (function, args) = calls[i];
            release = match function {
                DpFunction::Count => {
                    arity(function, args, 1)?;
                    release.count(number(&args[0])?)
                }
                DpFunction::CountUnits => {
                    arity(function, args, 1)?;
                    release.count_units(number(&args[0])?)
                }
                DpFunction::Sum => {
                    let (col, bounds, epsilon) = bounded(function, args)?;
                    release.sum(&col, bounds, epsilon)
                }
                DpFunction::Mean => {
                    let (col, bounds, epsilon) = bounded(function, args)?;
                    release.mean(&col, bounds, epsilon)
                }
                DpFunction::Variance => {
                    let (col, bounds, epsilon) = bounded(function, args)?;
                    release.variance(&col, bounds, epsilon)
                }
                DpFunction::StdDev => {
                    let (col, bounds, epsilon) = bounded(function, args)?;
                    release.std_dev(&col, bounds, epsilon)
                }
                DpFunction::Bounds => {
                    arity(function, args, 2)?;
                    let col = column(&args[0])
                        .ok_or_else(|| unsupported("the first argument of dp_bounds must be a column"))?;
                    release.bounds(col, number(&args[1])?)
                }
                DpFunction::Quantile | DpFunction::Median => {
                    // (column, lower, upper, [q,] ε [, bins])
                    let median = function == DpFunction::Median;
                    let required = if median { 4 } else { 5 };
                    if args.len() != required && args.len() != required + 1 {
                        arity(function, args, required)?;
                    }
                    let (col, bounds, _) = bounded(function, &args[..4])?;
                    let q = if median { 0.5 } else { number(&args[3])? };
                    let epsilon = number(&args[required - 1])?;
                    let bins = match args.get(required) {
                        None => crate::DEFAULT_QUANTILE_BINS,
                        Some(b) => {
                            // A count of bins; its range is checked with the other
                            // parameters (`privacy_loss`).
                            let b = number(b)?;
                            if b.fract() != 0.0 || b < 0.0 {
                                return Err(unsupported(format!(
                                    "{}: bins must be a whole number, found {b}",
                                    function.name()
                                )));
                            }
                            b as usize
                        }
                    };
                    release.quantile_on(&col, bounds, q, bins, epsilon)
                }
                // The keys' rule, not a released column.
                DpFunction::PartitionSelection => release,
            };
        }
        // Validates every ε (and the selection's δ) before anything runs.
        release.privacy_loss()?;
        Ok(release)
    }
}
