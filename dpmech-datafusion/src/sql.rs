//! Private releases written as SQL text: one grouped `SELECT` whose aggregates are the
//! `dp_` functions, translated into a [`GroupedQuery`] (so the same bounding, exact
//! aggregation, budget and noise apply).
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
//! Aggregates: `dp_count(ε)`, `dp_sum(column, lower, upper, ε)` and
//! `dp_mean(column, lower, upper, ε)` (records clamped to the public bounds, NULL and
//! NaN read as their midpoint). Everything else — joins, other filters, other
//! functions, `ORDER BY`, `LIMIT` — is refused with [`DpError::Invalid`]: a query is
//! checked before any budget is charged or any row is read.

use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, SelectItem, SetExpr, Statement,
    TableFactor, Value,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;
use dpmech::statistics::Bounds;

use crate::DpError;
use crate::session::GroupedQuery;

fn invalid(what: impl Into<String>) -> DpError {
    DpError::Invalid(what.into())
}

/// The name of a column reference (`day` or `visits.day`).
fn column(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Identifier(ident) => Some(ident.value.clone()),
        Expr::CompoundIdentifier(parts) => parts.last().map(|p| p.value.clone()),
        _ => None,
    }
}

/// A numeric literal, possibly negated.
fn number(expr: &Expr) -> Result<f64, DpError> {
    let refuse = || invalid(format!("expected a number, found `{expr}`"));
    match expr {
        Expr::Value(v) if matches!(v.value, Value::Number(..)) => {
            expr.to_string().parse().map_err(|_| refuse())
        }
        Expr::UnaryOp { expr: inner, .. } => expr
            .to_string()
            .parse()
            .or_else(|_| number(inner).map(|x| -x))
            .map_err(|_| refuse()),
        _ => Err(refuse()),
    }
}

/// A function call's name (lower case) and positional arguments.
fn call(expr: &Expr) -> Option<(String, Vec<&Expr>)> {
    let Expr::Function(f) = expr else { return None };
    let FunctionArguments::List(list) = &f.args else {
        return Some((f.name.to_string().to_lowercase(), Vec::new()));
    };
    let mut args = Vec::new();
    for arg in &list.args {
        match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(e),
            _ => return None,
        }
    }
    if f.filter.is_some()
        || f.over.is_some()
        || list.duplicate_treatment.is_some()
        || !list.clauses.is_empty()
    {
        return None;
    }
    Some((f.name.to_string().to_lowercase(), args))
}

fn arity(name: &str, args: &[&Expr], n: usize) -> Result<(), DpError> {
    if args.len() == n {
        Ok(())
    } else {
        Err(invalid(format!(
            "{name} takes {n} arguments, found {}",
            args.len()
        )))
    }
}

fn bounded(name: &str, args: &[&Expr]) -> Result<(String, Bounds, f64), DpError> {
    arity(name, args, 4)?;
    let col =
        column(args[0]).ok_or_else(|| invalid(format!("the first argument of {name} must be a column")))?;
    let bounds = Bounds::new(number(args[1])?, number(args[2])?)?;
    Ok((col, bounds, number(args[3])?))
}

impl GroupedQuery {
    /// Reads one private release from SQL text (see the [module docs](crate::sql) for
    /// the accepted form): the grouping column, `dp_count` / `dp_sum` / `dp_mean`
    /// aggregates, one table, and either `WHERE key IN (…)` (public keys) or
    /// `HAVING dp_partition_selection(ε, δ)` (private keys). Anything else is a typed
    /// error.
    ///
    /// ```
    /// use dpmech_datafusion::GroupedQuery;
    /// let query = GroupedQuery::from_sql(
    ///     "SELECT day, dp_count(0.5), dp_mean(duration, 0, 3600, 0.5) FROM visits \
    ///      WHERE day IN ('mon', 'tue') GROUP BY day",
    /// )?;
    /// assert_eq!(query.privacy_loss()?.epsilon(), Some(1.0));
    /// assert!(GroupedQuery::from_sql("SELECT day, count(*) FROM visits GROUP BY day").is_err());
    /// # Ok::<(), dpmech_datafusion::DpError>(())
    /// ```
    pub fn from_sql(text: &str) -> Result<GroupedQuery, DpError> {
        let statements = Parser::parse_sql(&GenericDialect {}, text)
            .map_err(|e| invalid(format!("SQL does not parse: {e}")))?;
        let [Statement::Query(query)] = statements.as_slice() else {
            return Err(invalid("expected exactly one SELECT statement"));
        };
        if query.with.is_some()
            || query.order_by.is_some()
            || query.limit_clause.is_some()
            || query.fetch.is_some()
            || !query.locks.is_empty()
        {
            return Err(invalid(
                "WITH, ORDER BY, LIMIT and FETCH are not supported in a private release",
            ));
        }
        let SetExpr::Select(select) = query.body.as_ref() else {
            return Err(invalid("expected a plain SELECT (no UNION, VALUES or subquery)"));
        };
        if select.distinct.is_some()
            || select.top.is_some()
            || select.into.is_some()
            || !select.lateral_views.is_empty()
            || select.prewhere.is_some()
            || !select.connect_by.is_empty()
            || !select.cluster_by.is_empty()
            || !select.distribute_by.is_empty()
            || !select.sort_by.is_empty()
            || !select.named_window.is_empty()
            || select.qualify.is_some()
        {
            return Err(invalid(
                "only SELECT … FROM … [WHERE key IN (…)] GROUP BY key [HAVING …] is supported",
            ));
        }
        let [from] = select.from.as_slice() else {
            return Err(invalid("a private release reads exactly one table"));
        };
        let TableFactor::Table { name: table, .. } = &from.relation else {
            return Err(invalid(
                "a private release reads a registered table, not a subquery",
            ));
        };
        if !from.joins.is_empty() {
            return Err(invalid("joins are not supported in a private release"));
        }
        let GroupByExpr::Expressions(groups, modifiers) = &select.group_by else {
            return Err(invalid("GROUP BY ALL is not supported"));
        };
        let ([group], true) = (groups.as_slice(), modifiers.is_empty()) else {
            return Err(invalid("a private release groups by exactly one column"));
        };
        let key = column(group).ok_or_else(|| invalid("GROUP BY must name a column"))?;
        let mut release = GroupedQuery::new(&table.to_string(), &key);

        // Keys: public from `WHERE key IN (…)`, private from `HAVING dp_partition_selection`.
        release = match (&select.selection, &select.having) {
            (
                Some(Expr::InList {
                    expr,
                    list,
                    negated: false,
                }),
                None,
            ) if column(expr).as_deref() == Some(&key) => {
                let keys = list
                    .iter()
                    .map(|k| match k {
                        Expr::Value(v) => match &v.value {
                            Value::SingleQuotedString(s) => Ok(s.clone()),
                            Value::Number(..) => Ok(k.to_string()),
                            _ => Err(invalid(format!("a public key must be a literal, found `{k}`"))),
                        },
                        _ => Err(invalid(format!("a public key must be a literal, found `{k}`"))),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                release.public_keys(keys)
            }
            (None, Some(having)) => match call(having) {
                Some((name, args)) if name == "dp_partition_selection" => {
                    arity(&name, &args, 2)?;
                    release.private_keys(number(args[0])?, number(args[1])?)
                }
                _ => return Err(invalid("HAVING must be dp_partition_selection(epsilon, delta)")),
            },
            (None, None) => {
                return Err(invalid(
                    "declare the keys: WHERE key IN (…) for public keys, or \
                     HAVING dp_partition_selection(epsilon, delta) for keys found in the data",
                ));
            }
            _ => {
                return Err(invalid(
                    "the only filter allowed is WHERE <group column> IN (<literal keys>), \
                     and not together with HAVING",
                ));
            }
        };

        for item in &select.projection {
            let expr = match item {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
                _ => return Err(invalid("wildcards cannot be selected in a private release")),
            };
            if column(expr).as_deref() == Some(&key) {
                continue;
            }
            let Some((name, args)) = call(expr) else {
                return Err(invalid(format!(
                    "`{expr}`: only the grouping column and dp_count / dp_sum / dp_mean can be selected"
                )));
            };
            release = match name.as_str() {
                "dp_count" => {
                    arity(&name, &args, 1)?;
                    release.count(number(args[0])?)
                }
                "dp_sum" => {
                    let (col, bounds, epsilon) = bounded(&name, &args)?;
                    release.sum(&col, bounds, epsilon)
                }
                "dp_mean" => {
                    let (col, bounds, epsilon) = bounded(&name, &args)?;
                    release.mean(&col, bounds, epsilon)
                }
                other => {
                    return Err(invalid(format!(
                        "`{other}` is not a private aggregate: use dp_count, dp_sum or dp_mean"
                    )));
                }
            };
        }
        // Validates every ε (and the selection's δ) before anything runs.
        release.privacy_loss()?;
        Ok(release)
    }
}
