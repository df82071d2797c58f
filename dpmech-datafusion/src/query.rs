//! Stage 1, the query: what a release asks for ([`GroupedQuery`]), the contribution
//! bounds of a private table, and the validation of every public parameter. Reading SQL
//! text or a DataFrame into a query is module [`sql`](crate::sql).

use dpmech::privacy::round;
use dpmech::statistics::Bounds;
use dpmech::{Delta, PrivacyLoss};

use crate::error::DpError;

/// How much one privacy unit (one person) may contribute, enforced by the plan before
/// any aggregation across units: at most `max_groups` groups (L0) per unit — which ones
/// is a uniformly random choice keyed by the release (see
/// [`ReleaseKey`](crate::ReleaseKey)), so it does not depend on the data beyond the
/// unit's own groups — and at most `max_rows_per_group` rows (L∞) per unit in each
/// group: a pair of `c` rows counts as `min(c, m)` rows of its own mean, a
/// deterministic rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContributionBounds {
    /// L0: the most groups one unit may touch.
    pub max_groups: u32,
    /// L∞: the most rows one unit may contribute to one group.
    pub max_rows_per_group: u32,
}

impl ContributionBounds {
    /// Both bounds at least 1.
    pub(crate) fn check(self) -> Result<Self, DpError> {
        if self.max_groups == 0 || self.max_rows_per_group == 0 {
            return Err(DpError::InvalidContributionBounds {
                max_groups: self.max_groups,
                max_rows_per_group: self.max_rows_per_group,
            });
        }
        Ok(self)
    }
}

/// Which groups a release reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Keys {
    /// Every listed key is released (empty groups too, with noise); rows with other keys
    /// are dropped before bounding. Costs no extra privacy. One key is one text per
    /// grouping column (a value as `CAST(value AS VARCHAR)` prints it); a release
    /// without grouping columns has the one empty key.
    Public(Vec<Vec<String>>),
    /// The keys are the distinct rows of columns of a **public** table registered with
    /// [`PrivateSession::register_public`](crate::PrivateSession::register_public) (one
    /// column per grouping column, in order), read when the release is planned and then
    /// released as [`Public`](Self::Public) keys.
    PublicTable {
        /// The public table.
        table: String,
        /// Its columns holding the keys.
        columns: Vec<String>,
    },
    /// Keys come from the data: a group is a candidate only if at least one kept
    /// (unit, group) pair supports it, and is released only if its noisy number of
    /// distinct units reaches a threshold (Laplace thresholding with discrete Laplace
    /// noise; under [`GroupedQuery::zcdp`], Gaussian thresholding with discrete Gaussian
    /// noise and `epsilon` read as ρ), so a key held by one unit appears with
    /// probability at most δ. Costs `(epsilon, delta)` on top of the aggregates (under
    /// zCDP: the release is δ-approximate (Σρ + ρ)-zCDP); δ must lie in (0, 1).
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
    /// The number of distinct privacy units per group (kept (unit, group) pairs), with
    /// its ε: sensitivity 1 per cell, at most L0 cells per unit.
    CountUnits {
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
    /// The mean of a clamped column: a noisy sum over a noisy count, ε split evenly
    /// (shared with a variance of the same column: [`GroupedQuery::variance`]).
    Mean {
        /// The column.
        column: String,
        /// Public bounds and NaN rule of the records.
        bounds: Bounds,
        /// ε of this aggregate.
        epsilon: f64,
    },
    /// The variance (or, with `std_dev`, the standard deviation) of a clamped column:
    /// the population variance of the bounded records from three noisy exact sums —
    /// the count, the records centred on the bounds' midpoint, and their squares — ε
    /// split in three equal parts.
    Variance {
        /// The column.
        column: String,
        /// Public bounds and NaN rule of the records.
        bounds: Bounds,
        /// Release the standard deviation (the variance's square root) instead.
        std_dev: bool,
        /// ε of this aggregate.
        epsilon: f64,
    },
    /// Approximate bounds of a column, for an analyst without a public range: a noisy
    /// histogram of the bounded records over signed powers of two and a threshold
    /// ([`dpmech::statistics::ApproxBounds`], exponents [−32, 64], β = 10⁻⁶). Releases
    /// two values, the lower then the upper bound.
    Bounds {
        /// The column.
        column: String,
        /// ε of this aggregate.
        epsilon: f64,
    },
    /// The `q`-quantile of a clamped column, selected over the edges of `bins` equal
    /// bins of the bounds ([`dpmech::statistics::Quantile`], permute-and-flip on the
    /// rank score) from the exact counts of the bounded records per bin.
    Quantile {
        /// The column.
        column: String,
        /// Public bounds and NaN rule of the records.
        bounds: Bounds,
        /// The level, in `[0, 1]` (0.5: the median).
        q: f64,
        /// The number of bins of the grid, in `1..=`[`MAX_QUANTILE_BINS`].
        bins: usize,
        /// ε of this aggregate.
        epsilon: f64,
    },
}

/// The bins of a quantile's grid unless said otherwise: 256 (the error of a released
/// quantile is at most one bin, `(upper − lower)/256`, beyond its error in ranks).
pub const DEFAULT_QUANTILE_BINS: usize = 256;

/// The most bins of a quantile's grid in a release: the core's
/// [`dpmech::statistics::MAX_QUANTILE_BINS`] (2²⁰). A bin costs nothing in the engine's plan:
/// the bounding emits one row per non-empty (group, bin), so memory and rows grow with
/// the records, not the grid; at the client each released cell selects over the grid's
/// `bins + 1` edges (a fixed number of random words per edge).
pub const MAX_QUANTILE_BINS: usize = dpmech::statistics::MAX_QUANTILE_BINS;

impl Aggregate {
    /// Its budget: ε, or ρ under zCDP.
    pub(crate) fn budget(&self) -> f64 {
        match self {
            Aggregate::Count { epsilon }
            | Aggregate::CountUnits { epsilon }
            | Aggregate::Sum { epsilon, .. }
            | Aggregate::Mean { epsilon, .. }
            | Aggregate::Variance { epsilon, .. }
            | Aggregate::Bounds { epsilon, .. }
            | Aggregate::Quantile { epsilon, .. } => *epsilon,
        }
    }

    /// The column and bounds of a sum, mean or variance (records in grid units).
    pub(crate) fn column(&self) -> Option<(&str, &Bounds)> {
        match self {
            Aggregate::Count { .. }
            | Aggregate::CountUnits { .. }
            | Aggregate::Bounds { .. }
            | Aggregate::Quantile { .. } => None,
            Aggregate::Sum { column, bounds, .. }
            | Aggregate::Mean { column, bounds, .. }
            | Aggregate::Variance { column, bounds, .. } => Some((column, bounds)),
        }
    }
}

/// A grouped private release: `SELECT group, aggregates… FROM table GROUP BY group` —
/// by one column ([`new`](Self::new)), several or none ([`grouped`](Self::grouped)).
///
/// ```
/// use dpmech::statistics::Bounds;
/// use dpmech_datafusion::GroupedQuery;
///
/// let query = GroupedQuery::new("visits", "day")
///     .public_keys(["mon", "tue"])
///     .count(0.5)
///     .mean("duration", Bounds::new(0.0, 3600.0)?, 0.5);
/// assert_eq!(query.privacy_loss()?, dpmech::PrivacyLoss::pure(1.0)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GroupedQuery {
    pub(crate) table: String,
    pub(crate) group_by: Vec<String>,
    pub(crate) keys: Keys,
    pub(crate) aggregates: Vec<Aggregate>,
    /// The aggregates' parameters are ρ (ρ-zCDP, discrete Gaussian noise), not ε.
    pub(crate) zcdp: bool,
    /// Skip contribution bounding: the negative control of the tests.
    #[cfg(feature = "unsafe-testing")]
    pub(crate) unbounded: bool,
}

impl GroupedQuery {
    /// A release over `table` grouped by `group_by`, with public `keys` by default
    /// empty: set them with [`public_keys`](Self::public_keys) or
    /// [`private_keys`](Self::private_keys).
    pub fn new(table: &str, group_by: &str) -> Self {
        Self::grouped(table, &[group_by])
    }

    /// A release over `table` grouped by every column of `group_by` together (a cell per
    /// combination), or, with no column, one cell for the whole table (its key is the
    /// empty tuple, released by default). Keys are set as for [`new`](Self::new), one
    /// text per column ([`public_key_tuples`](Self::public_key_tuples),
    /// [`public_keys_product`](Self::public_keys_product)).
    ///
    /// ```
    /// use dpmech_datafusion::GroupedQuery;
    /// let by_day_and_country = GroupedQuery::grouped("visits", &["day", "country"])
    ///     .public_keys_product([vec!["1", "2"], vec!["fr", "de"]]) // four cells
    ///     .count(0.5);
    /// let whole_table = GroupedQuery::grouped("visits", &[]).count_units(0.5); // one cell
    /// # let _ = (by_day_and_country, whole_table);
    /// ```
    pub fn grouped(table: &str, group_by: &[&str]) -> Self {
        GroupedQuery {
            table: table.to_string(),
            group_by: group_by.iter().map(|c| c.to_string()).collect(),
            keys: Keys::Public(if group_by.is_empty() {
                vec![Vec::new()]
            } else {
                Vec::new()
            }),
            aggregates: Vec::new(),
            zcdp: false,
            #[cfg(feature = "unsafe-testing")]
            unbounded: false,
        }
    }

    /// **ρ-zCDP instead of ε-DP**: every aggregate's parameter (`count(0.5)` …) is read
    /// as its ρ, and each cell gets discrete Gaussian noise with `σ² = L0·Δ∞²/(2ρ)`
    /// (Canonne, Kamath & Steinke 2020: one unit moves at most L0 cells by at most
    /// `Δ∞` each, an L2 sensitivity of `√L0·Δ∞`; the per-cell ρ/L0 is rounded down).
    /// The release is charged `PrivacyLoss::zcdp(Σρ)`, so the accountant must take
    /// zCDP charges. With [`private_keys`](Self::private_keys)`(ρ, δ)` the keys pass
    /// Gaussian thresholding and the release is charged
    /// `PrivacyLoss::approximate_zcdp(Σρ + ρ, δ)` (δ-approximate zCDP: an accountant
    /// built with `Accountant::approximate_zcdp`).
    pub fn zcdp(mut self) -> Self {
        self.zcdp = true;
        self
    }

    /// Releases exactly these keys (grouped by one column).
    pub fn public_keys<I: IntoIterator<Item = S>, S: Into<String>>(mut self, keys: I) -> Self {
        self.keys = Keys::Public(keys.into_iter().map(|k| vec![k.into()]).collect());
        self
    }

    /// Releases exactly these keys, one text per grouping column each.
    pub fn public_key_tuples<I, T, S>(mut self, keys: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.keys = Keys::Public(
            keys.into_iter()
                .map(|t| t.into_iter().map(Into::into).collect())
                .collect(),
        );
        self
    }

    /// Releases the distinct rows of `columns` of the public table `table` (one column
    /// per grouping column), e.g. a calendar of (day, country) pairs.
    pub fn public_keys_from_table(mut self, table: &str, columns: &[&str]) -> Self {
        self.keys = Keys::PublicTable {
            table: table.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
        };
        self
    }

    /// Releases every combination of one key per grouping column (the cross-product of
    /// `columns`, one list per grouping column, in their order).
    pub fn public_keys_product<I, T, S>(self, columns: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut tuples: Vec<Vec<String>> = vec![Vec::new()];
        for column in columns {
            let values: Vec<String> = column.into_iter().map(Into::into).collect();
            tuples = tuples
                .iter()
                .flat_map(|t| {
                    values.iter().map(move |v| {
                        let mut t = t.clone();
                        t.push(v.clone());
                        t
                    })
                })
                .collect();
        }
        self.public_key_tuples(tuples)
    }

    /// Releases the keys found in the data that pass partition selection at
    /// `(epsilon, delta)`, `delta` in (0, 1) — under [`zcdp`](Self::zcdp), at
    /// `(ρ, δ)`: Gaussian thresholding (module `select`).
    pub fn private_keys(mut self, epsilon: f64, delta: f64) -> Self {
        self.keys = Keys::Private { epsilon, delta };
        self
    }

    /// Adds a DP count.
    pub fn count(mut self, epsilon: f64) -> Self {
        self.aggregates.push(Aggregate::Count { epsilon });
        self
    }

    /// Adds a DP count of distinct privacy units (people, not rows).
    pub fn count_units(mut self, epsilon: f64) -> Self {
        self.aggregates.push(Aggregate::CountUnits { epsilon });
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

    /// Adds a DP variance of `column` clamped to `bounds`: the population variance of
    /// the bounded records, `clamp(S̃₂/ñ − (S̃₁/ñ)², 0, h²)` with `h` half the bounds'
    /// width, from the noisy count `ñ`, sum `S̃₁` of the records centred on the bounds'
    /// midpoint and sum `S̃₂` of their squares, ε/3 each (0 when `ñ ≤ 1`). Pure ε-DP
    /// (each cell ε/(3·L0) per sum, sensitivities L∞, L∞·h and L∞·h²), or ρ-zCDP under
    /// [`zcdp`](Self::zcdp).
    ///
    /// **Shared with means.** The [`mean`](Self::mean)s, variances and
    /// [`std_dev`](Self::std_dev)s of one column with the same bounds in one query, when
    /// at least one variance or standard deviation is among them, draw one noisy count
    /// `ñ`, one noisy centred sum `S̃₁` and one noisy sum of squares `S̃₂` per cell, with
    /// their budgets pooled: the count and the sum each get ε/2 of every mean plus ε/3
    /// of every variance, the squares ε/3 of every variance (so a mean at ε₁ and a
    /// variance at ε₂ give the count and the sum ε₁/2 + ε₂/3 each and the squares
    /// ε₂/3). The charge is still Σ ε; the mean is then `centre + S̃₁/ñ` (clamped to
    /// the bounds), with less noise than alone.
    pub fn variance(self, column: &str, bounds: Bounds, epsilon: f64) -> Self {
        self.spread(column, bounds, false, epsilon)
    }

    /// Adds a DP standard deviation of `column` clamped to `bounds`: the square root of
    /// [`variance`](Self::variance), at the same cost.
    pub fn std_dev(self, column: &str, bounds: Bounds, epsilon: f64) -> Self {
        self.spread(column, bounds, true, epsilon)
    }

    fn spread(mut self, column: &str, bounds: Bounds, std_dev: bool, epsilon: f64) -> Self {
        self.aggregates.push(Aggregate::Variance {
            column: column.to_string(),
            bounds,
            std_dev,
            epsilon,
        });
        self
    }

    /// Adds DP approximate bounds of `column` (no public range needed), for choosing the
    /// bounds of later sums, means, variances and quantiles: the lowest and highest of
    /// the signed powers of two (`… (−2, −1], (−1, −½] … [½, 1), [1, 2) …`, exponents
    /// [−32, 64]) whose noisy count of bounded records clears a threshold
    /// ([`dpmech::statistics::ApproxBounds`] at β = 10⁻⁶: with probability `1 − β` no
    /// empty bin clears); the whole range `±2⁶⁴` when none does. Releases two values,
    /// `lower_bound(column)` then `upper_bound(column)`. NULL and NaN records count in no
    /// bin. Pure ε-DP: ε/L0 per cell, each bin moved by at most L∞ records; under
    /// [`zcdp`](Self::zcdp) each cell runs at `ε = √(2ρ/L0)`.
    pub fn bounds(mut self, column: &str, epsilon: f64) -> Self {
        self.aggregates.push(Aggregate::Bounds {
            column: column.to_string(),
            epsilon,
        });
        self
    }

    /// Adds a DP `q`-quantile of `column` clamped to `bounds`, on a grid of
    /// [`DEFAULT_QUANTILE_BINS`] bins ([`quantile_on`](Self::quantile_on) for another).
    /// Pure ε-DP (ε/L0 per cell, each cell's rank score of sensitivity L∞/2-to-L∞ under
    /// add/remove of a unit); under [`zcdp`](Self::zcdp) its parameter is ρ and each
    /// cell runs at `ε = √(2ρ/L0)` (ε-DP implies ε²/2-zCDP).
    pub fn quantile(self, column: &str, bounds: Bounds, q: f64, epsilon: f64) -> Self {
        self.quantile_on(column, bounds, q, DEFAULT_QUANTILE_BINS, epsilon)
    }

    /// Adds a DP median of `column` clamped to `bounds` ([`quantile`](Self::quantile)
    /// at `q = 0.5`).
    pub fn median(self, column: &str, bounds: Bounds, epsilon: f64) -> Self {
        self.quantile(column, bounds, 0.5, epsilon)
    }

    /// Adds a DP `q`-quantile of `column` clamped to `bounds` on a grid of `bins` bins.
    pub fn quantile_on(mut self, column: &str, bounds: Bounds, q: f64, bins: usize, epsilon: f64) -> Self {
        self.aggregates.push(Aggregate::Quantile {
            column: column.to_string(),
            bounds,
            q,
            bins,
            epsilon,
        });
        self
    }

    /// **Not private**: the same query without contribution bounding, for the negative
    /// controls of tests. Exists only with the `unsafe-testing` feature, which must never
    /// be enabled in production.
    #[cfg(feature = "unsafe-testing")]
    pub fn without_contribution_bounding_for_tests(mut self) -> Self {
        self.unbounded = true;
        self
    }

    /// Whether the query skips contribution bounding (only ever with `unsafe-testing`).
    pub(crate) fn unbounded(&self) -> bool {
        #[cfg(feature = "unsafe-testing")]
        return self.unbounded;
        #[cfg(not(feature = "unsafe-testing"))]
        false
    }

    /// The total guarantee: Σ ε of the aggregates (+ the selection's (ε, δ)), or Σ ρ
    /// under [`zcdp`](Self::zcdp); sums rounded up. Validates every parameter: each ε
    /// (or ρ) finite and positive, the selection's δ in (0, 1), at least one aggregate.
    /// Under zCDP with private keys: δ-approximate (Σρ + ρ)-zCDP.
    ///
    /// # Errors
    ///
    /// [`DpError::Privacy`] with `InvalidEpsilon` / `InvalidRho` for a parameter that is
    /// not finite and positive, `InvalidDelta` for a selection δ outside (0, 1);
    /// [`DpError::NoAggregates`],
    /// [`DpError::SelectionWithoutGroups`], or [`DpError::KeyArity`] for a public key
    /// that does not have one value per grouping column.
    pub fn privacy_loss(&self) -> Result<PrivacyLoss, DpError> {
        if self.aggregates.is_empty() {
            return Err(DpError::NoAggregates);
        }
        if let Keys::Public(keys) = &self.keys
            && let Some(k) = keys.iter().find(|k| k.len() != self.group_by.len())
        {
            return Err(DpError::KeyArity {
                expected: self.group_by.len(),
                found: k.len(),
            });
        }
        if let Keys::PublicTable { columns, .. } = &self.keys
            && columns.len() != self.group_by.len()
        {
            return Err(DpError::KeyArity {
                expected: self.group_by.len(),
                found: columns.len(),
            });
        }
        if self.group_by.is_empty() && matches!(self.keys, Keys::Private { .. }) {
            return Err(DpError::SelectionWithoutGroups);
        }
        for a in &self.aggregates {
            if let Aggregate::Quantile { q, bins, .. } = a {
                if !(0.0..=1.0).contains(q) {
                    return Err(DpError::Privacy(dpmech::Error::InvalidParameter {
                        name: "q",
                        value: *q,
                        reason: "a quantile's level lies in [0, 1]",
                    }));
                }
                if !(1..=MAX_QUANTILE_BINS).contains(bins) {
                    return Err(DpError::Privacy(dpmech::Error::InvalidParameter {
                        name: "bins",
                        value: *bins as f64,
                        reason: "a quantile's grid in a release has between 1 and MAX_QUANTILE_BINS bins",
                    }));
                }
            }
        }
        let mut total = 0.0;
        for a in &self.aggregates {
            // Each parameter is checked on its own (positive, finite) before summing.
            let p = a.budget();
            if self.zcdp {
                PrivacyLoss::zcdp(p)?;
            } else {
                PrivacyLoss::pure(p)?;
            }
            total = round::add_up(total, p);
        }
        Ok(match (&self.keys, self.zcdp) {
            (Keys::Public(_) | Keys::PublicTable { .. }, false) => PrivacyLoss::pure(total)?,
            (Keys::Public(_) | Keys::PublicTable { .. }, true) => PrivacyLoss::zcdp(total)?,
            (Keys::Private { epsilon: rho, delta }, true) => {
                let delta = Delta::new(*delta)?.get();
                PrivacyLoss::zcdp(*rho)?;
                PrivacyLoss::approximate_zcdp(round::add_up(total, *rho), delta)?
            }
            (Keys::Private { epsilon, delta }, false) => {
                // δ = 0 would be a pure-DP charge for a selection that is not pure DP.
                let delta = Delta::new(*delta)?.get();
                PrivacyLoss::pure(*epsilon)?;
                PrivacyLoss::approximate(round::add_up(total, *epsilon), delta)?
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zcdp_releases_charge_the_sum_of_rho_and_private_keys_add_delta() {
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
        assert_eq!(
            private.privacy_loss().unwrap(),
            PrivacyLoss::approximate_zcdp(1.5, 1e-6).unwrap()
        );
        assert!(matches!(
            GroupedQuery::new("t", "g").count(-1.0).zcdp().privacy_loss(),
            Err(DpError::Privacy(_))
        ));
    }

    #[test]
    fn the_selection_delta_must_lie_strictly_between_0_and_1() {
        for delta in [0.0, -0.0, 1.0, 1.5, -1e-300, f64::NAN, f64::INFINITY] {
            let q = GroupedQuery::new("t", "g").private_keys(1.0, delta).count(1.0);
            assert!(
                matches!(
                    q.privacy_loss(),
                    Err(DpError::Privacy(dpmech::Error::InvalidDelta { .. }))
                ),
                "δ = {delta}"
            );
        }
        let q = GroupedQuery::new("t", "g").private_keys(1.0, 1e-9).count(1.0);
        assert_eq!(
            q.privacy_loss().unwrap(),
            PrivacyLoss::approximate(2.0, 1e-9).unwrap()
        );
    }
}
