//! Stage 5, the noise: each released cell's exact integer partials get exact discrete
//! noise — discrete Laplace (ε-DP) or discrete Gaussian (ρ-zCDP) — from a generator
//! keyed by the release key and the cell, after the final merge and outside the engine.
//! Every noise is built from public parameters when the release is planned, before the
//! charge; here it is only drawn.
//!
//! **Calibration.** One unit touches at most L0 cells of an aggregate (its kept pairs),
//! each by at most `Δ∞` (m rows, or m records of at most `per_record` grid units), so
//! each cell gets the aggregate's budget divided by L0 (rounded down): ε/L0 with
//! discrete Laplace noise of scale `Δ∞·L0/ε`, or ρ/L0 with a discrete Gaussian of
//! `σ² = L0·Δ∞²/(2ρ)`; the cells of a unit then compose to ε (ρ).
//!
//! **Shared moments.** The means, variances and standard deviations of one column (same
//! bounds) in a query that has a variance or standard deviation among them draw one
//! noisy count, one noisy centred sum and one noisy sum of squares per cell
//! ([`Moments`]), each with the budgets of all of them pooled — the count and the sum
//! get ε/2 of each mean plus ε/3 of each variance, the squares ε/3 of each variance —
//! so the query's charge (Σ ε) is unchanged and every one of them is computed from less
//! noisy sums than it would have alone.
//!
//! **Accuracy.** Every released value carries an [`Accuracy`] statement, a function of
//! the public parameters only: an interval at β = 5 % for counts, sums, means,
//! variances and standard deviations, a rank error at β = 5 % for quantiles, the
//! threshold's failure probability for bounds.

use std::sync::Arc;

use dpmech::privacy::round;
use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{ApproxBounds, Bounds, BoundsHistogram, Quantile, QuantileGrid};
use dpmech::{DiscreteGaussian, Geometric};
use rand_chacha::ChaCha20Rng;

mod accuracy;
mod moments;

pub use accuracy::{Accuracy, ReleasedValue};
use accuracy::{BOUNDS_BETA, INTERVAL_BETA, MEAN_BETA, mean_interval};
pub(crate) use moments::{MomentBudgets, Moments, SpreadColumns};
use moments::{SPREAD_BETA, spread_release};

use crate::aggregate::dense_counts;
use crate::columns::partial;
use crate::error::DpError;
use crate::key::ReleaseKey;
use crate::query::Aggregate;
use crate::udf::Grid;

/// The noise of one aggregate's cells.
#[derive(Debug)]
pub(crate) enum CellNoise {
    /// Discrete Laplace, ε/L0 per cell.
    Laplace(Geometric),
    /// Discrete Gaussian, ρ/L0-zCDP per cell (boxed: it is much larger).
    Gaussian(Box<DiscreteGaussian>),
}

/// A budget (ε or ρ) split evenly over a unit's at most `max_groups` cells, rounded
/// down so that the cells together never spend more than the budget.
pub(crate) fn per_cell(budget: f64, max_groups: u32) -> f64 {
    round::div_down(budget, f64::from(max_groups))
}

/// The ε of each cell of a selection mechanism (a quantile, bounds): ε/L0, or under zCDP
/// `√(2ρ/L0)` (ε-DP implies ε²/2-zCDP, Bun & Steinke 2016, Prop. 1.4), rounded down.
fn cell_epsilon(budget: f64, max_groups: u32, zcdp: bool) -> f64 {
    let per_cell = per_cell(budget, max_groups);
    if zcdp {
        round::sqrt_down(round::mul_down(2.0, per_cell))
    } else {
        per_cell
    }
}

impl CellNoise {
    /// The noise of cells of L∞ sensitivity `sensitivity_units`, for an aggregate of
    /// budget `budget` (ε, or ρ under zCDP) over at most `max_groups` cells per unit.
    /// Refuses parameters no noise can meet (a per-cell budget that rounds to 0, a
    /// scale beyond the samplers' range).
    pub(crate) fn new(
        sensitivity_units: u64,
        budget: f64,
        max_groups: u32,
        zcdp: bool,
    ) -> Result<Self, DpError> {
        let per_cell = per_cell(budget, max_groups);
        Ok(if zcdp {
            CellNoise::Gaussian(Box::new(DiscreteGaussian::zcdp(sensitivity_units, per_cell)?))
        } else {
            CellNoise::Laplace(Geometric::new(sensitivity_units, per_cell)?)
        })
    }

    /// `value + Z` (saturating at the `i64` range: the saturated value is what any
    /// larger noise would give, so no value can cause an error).
    pub(crate) fn release(&self, value: i64, rng: &mut ChaCha20Rng) -> i64 {
        match self {
            CellNoise::Laplace(noise) => noise.release(value, rng),
            CellNoise::Gaussian(noise) => noise.release(value, rng),
        }
    }

    /// An integer `w` with `P(|Z| > w) ≤ β`, rounded up. Discrete Laplace: the smallest
    /// such `w` ([`Geometric::confidence_half_width`]). Discrete Gaussian: sub-Gaussian
    /// with variance proxy σ² (CKS20), so `P(|Z| ≥ t) ≤ 2e^(−t²/(2σ²))` and
    /// `w = ⌈σ·√(2 ln(2/β))⌉`.
    pub(crate) fn half_width(&self, beta: f64) -> Result<f64, DpError> {
        Ok(match self {
            CellNoise::Laplace(noise) => noise.confidence_half_width(beta)? as f64,
            CellNoise::Gaussian(noise) => {
                let width = round::mul_up(
                    sigma_up(noise),
                    round::sqrt_up(round::mul_up(2.0, round::ln_up(round::div_up(2.0, beta)))),
                );
                width.ceil()
            }
        })
    }
}

/// A discrete Gaussian's σ (of its exact rational σ²), rounded up.
pub(crate) fn sigma_up(noise: &DiscreteGaussian) -> f64 {
    let (num, den) = noise.sigma_squared();
    round::sqrt_up(round::div_up(u128_up(num), u64_down(den)))
}

/// `x` as an `f64` at least `x`.
fn u128_up(x: u128) -> f64 {
    let f = x as f64;
    if f >= 2f64.powi(128) || f as u128 >= x {
        f
    } else {
        round::up(f)
    }
}

/// `x` as an `f64` at most `x`.
fn u64_down(x: u64) -> f64 {
    let f = x as f64;
    if u128::from(x) >= f as u128 && f < 2f64.powi(64) {
        f
    } else {
        round::down(f)
    }
}

/// The planned noise of one aggregate.
#[derive(Debug)]
pub(crate) enum AggregateNoise {
    /// A count: `count + Z`.
    Count(CellNoise),
    /// A count of distinct units: `units + Z`, sensitivity 1 per cell.
    Units(CellNoise),
    /// A sum of value column `value`, in units of `grid`.
    Sum {
        column: String,
        value: usize,
        grid: Grid,
        noise: CellNoise,
    },
    /// A mean: a noisy sum over a noisy count, half the budget each.
    Mean {
        column: String,
        value: usize,
        grid: Grid,
        bounds: Bounds,
        count: CellNoise,
        sum: CellNoise,
    },
    /// A variance or standard deviation: from the three noisy sums of its column's
    /// [`Moments`] — the count, the centred records and their squares (ε/3 each when it
    /// shares them with no other aggregate).
    Variance {
        name: String,
        std_dev: bool,
        moments: Arc<Moments>,
    },
    /// A mean that shares its column's [`Moments`] with a variance: the noisy centred
    /// sum over the noisy count, plus the centre.
    SharedMean {
        column: String,
        bounds: Bounds,
        moments: Arc<Moments>,
    },
    /// Bounds: the noisy histogram over signed powers of two from the cell's bins at
    /// `offset` on (one exact count per bin, then the uncounted records without a
    /// magnitude).
    Bounds {
        column: String,
        offset: usize,
        mechanism: ApproxBounds,
    },
    /// A quantile: selected over its grid from the cell's histogram, its bins from
    /// `offset` on (one exact count per bin).
    Quantile {
        column: String,
        offset: usize,
        quantile: Quantile,
    },
}

impl AggregateNoise {
    /// How many candidates a cell's release weighs: a quantile's or bounds' bins, 1 for
    /// the others (one noisy value).
    pub(crate) fn candidates(&self) -> usize {
        match self {
            AggregateNoise::Quantile { quantile, .. } => quantile.grid().bins(),
            AggregateNoise::Bounds { mechanism, .. } => mechanism.bins(),
            _ => 1,
        }
    }

    /// A variance (or standard deviation) or a mean read from the shared `moments` of
    /// its column.
    pub(crate) fn from_moments(aggregate: &Aggregate, moments: Arc<Moments>) -> Result<Self, DpError> {
        Ok(match aggregate {
            Aggregate::Variance { column, std_dev, .. } => AggregateNoise::Variance {
                name: format!("{}({column})", if *std_dev { "stddev" } else { "variance" }),
                std_dev: *std_dev,
                moments,
            },
            Aggregate::Mean { column, bounds, .. } => AggregateNoise::SharedMean {
                column: column.clone(),
                bounds: *bounds,
                moments,
            },
            _ => {
                return Err(crate::error::internal(
                    "only means and variances read a column's moments",
                ));
            }
        })
    }

    /// The noise of `aggregate`, whose records (if any) are value column `value` on
    /// `grid`, for cells bounded by `max_groups` cells of `max_rows` rows per unit.
    pub(crate) fn new(
        aggregate: &Aggregate,
        value: usize,
        grid: Option<Grid>,
        max_groups: u32,
        max_rows: u32,
        zcdp: bool,
    ) -> Result<Self, DpError> {
        let m = u64::from(max_rows);
        let budget = aggregate.budget();
        // Δ∞ of a sum cell: m records of at most `per_record` units each.
        let sum_sensitivity = |grid: &Grid| {
            m.checked_mul(grid.largest_record()).ok_or_else(|| {
                DpError::Unrepresentable(format!(
                    "the sum's sensitivity ({m} rows × {} grid units) is not representable: \
                     lower max_rows_per_group",
                    grid.largest_record()
                ))
            })
        };
        // The 95 % half-width of a sum in value units must be finite, or the interval
        // would be (−∞, ∞) or NaN.
        let finite_width = |noise: CellNoise, grid: &Grid| {
            let width = noise.half_width(0.025)? * grid.step();
            if width.is_finite() {
                Ok(noise)
            } else {
                Err(DpError::Unrepresentable(format!(
                    "the noise of this aggregate is too wide for an f64 interval (budget {budget:e}): \
                     raise its epsilon or narrow its bounds"
                )))
            }
        };
        Ok(match (aggregate, grid) {
            (Aggregate::Count { .. }, _) => {
                AggregateNoise::Count(CellNoise::new(m, budget, max_groups, zcdp)?)
            }
            // A unit is one kept pair per group: it moves each of its ≤ L0 cells by 1.
            (Aggregate::CountUnits { .. }, _) => {
                AggregateNoise::Units(CellNoise::new(1, budget, max_groups, zcdp)?)
            }
            (Aggregate::Sum { column, .. }, Some(grid)) => AggregateNoise::Sum {
                column: column.clone(),
                value,
                noise: finite_width(
                    CellNoise::new(sum_sensitivity(&grid)?, budget, max_groups, zcdp)?,
                    &grid,
                )?,
                grid,
            },
            (Aggregate::Mean { column, bounds, .. }, Some(grid)) => {
                let half = round::div_down(budget, 2.0);
                AggregateNoise::Mean {
                    column: column.clone(),
                    value,
                    bounds: *bounds,
                    count: CellNoise::new(m, half, max_groups, zcdp)?,
                    sum: finite_width(
                        CellNoise::new(sum_sensitivity(&grid)?, half, max_groups, zcdp)?,
                        &grid,
                    )?,
                    grid,
                }
            }
            // A unit adds at most m records to each of its ≤ L0 cells: the rank score's
            // sensitivity is that of m contributions (dpmech's Quantile), at ε/L0 per
            // cell; under zCDP at ε = √(2ρ/L0), which is (ρ/L0)-zCDP (BS16, Prop. 1.4).
            (
                Aggregate::Quantile {
                    column,
                    bounds,
                    q,
                    bins,
                    ..
                },
                _,
            ) => {
                let grid = QuantileGrid::new(bounds.lower(), bounds.upper(), *bins)?
                    .impute_nan(bounds.nan_value())?;
                AggregateNoise::Quantile {
                    column: column.clone(),
                    offset: value,
                    quantile: Quantile::new(&grid, *q, cell_epsilon(budget, max_groups, zcdp), m)?,
                }
            }
            // A unit adds at most m records to each of its ≤ L0 cells: the histogram's L1
            // sensitivity is m (ApproxBounds' contributions), at ε/L0 per cell; under
            // zCDP at ε = √(2ρ/L0).
            (Aggregate::Bounds { column, .. }, _) => AggregateNoise::Bounds {
                column: column.clone(),
                offset: value,
                mechanism: ApproxBounds::new(
                    m,
                    Neighbouring::AddRemove,
                    cell_epsilon(budget, max_groups, zcdp),
                )?
                .failure_probability(BOUNDS_BETA)?,
            },
            (Aggregate::Variance { .. }, _) => {
                return Err(crate::error::internal(
                    "a variance's noise is planned by `spread`",
                ));
            }
            (_, None) => return Err(crate::error::internal("a sum or mean needs its grid")),
        })
    }

    /// The released values of cell `cell` (its exact scalar partials and the non-empty
    /// bins of its histograms), aggregate `index` of the query, with noise keyed by the
    /// release key and the cell: one value, two for bounds (the lower, then the upper).
    pub(crate) fn release(
        &self,
        index: usize,
        cell: &[u8],
        partials: &[i64],
        bins: &[(u32, u64)],
        key: &ReleaseKey,
    ) -> Result<Vec<ReleasedValue>, DpError> {
        // Shared moments are drawn from the generator of the first aggregate reading
        // them, so every reader sees the same noisy sums.
        let label = match self {
            AggregateNoise::Variance { moments, .. } | AggregateNoise::SharedMean { moments, .. } => {
                moments.label
            }
            _ => index,
        };
        let mut rng = key.cell_rng(&format!("agg{label}"), cell);
        Ok(vec![match self {
            AggregateNoise::Count(noise) | AggregateNoise::Units(noise) => {
                let (name, exact) = match self {
                    AggregateNoise::Count(_) => ("count", partials[partial::COUNT]),
                    _ => ("count_units", partials[partial::UNITS]),
                };
                let v = noise.release(exact, &mut rng) as f64;
                let w = noise.half_width(0.05)?;
                ReleasedValue {
                    name: name.into(),
                    value: v,
                    interval: (v - w, v + w),
                    accuracy: Accuracy::around(v, w),
                }
            }
            AggregateNoise::Sum {
                column,
                value,
                grid,
                noise,
            } => {
                let g = grid.step();
                let v = noise.release(partials[partial::sum(*value)], &mut rng) as f64 * g;
                let w = noise.half_width(0.05)? * g;
                ReleasedValue {
                    name: format!("sum({column})"),
                    value: v,
                    interval: (v - w, v + w),
                    accuracy: Accuracy::around(v, w),
                }
            }
            AggregateNoise::Mean {
                column,
                value,
                grid,
                bounds,
                count,
                sum,
            } => {
                let g = grid.step();
                let n = count.release(partials[partial::COUNT], &mut rng) as f64;
                let s = sum.release(partials[partial::sum(*value)], &mut rng) as f64 * g;
                let (lower, upper) = (bounds.lower(), bounds.upper());
                let mean = (s / n.max(1.0)).clamp(lower, upper);
                // 95 %: each of the two at 97.5 %, then the extreme ratios.
                let wc = count.half_width(MEAN_BETA)?;
                let ws = sum.half_width(MEAN_BETA)? * g;
                let interval = mean_interval(n, s, wc, ws, bounds, 0.0);
                ReleasedValue {
                    name: format!("mean({column})"),
                    value: mean,
                    interval,
                    accuracy: Accuracy::interval(interval),
                }
            }
            AggregateNoise::SharedMean {
                column,
                bounds,
                moments,
            } => {
                // The column's noisy count and centred sum (the squares are drawn too,
                // in the shared order, and not read).
                let (n, s1, _) = moments.draw(partials, &mut rng);
                let g = moments.columns.grid.step();
                let centre = f64::from(moments.columns.centring.centre) * g;
                let (lower, upper) = (bounds.lower(), bounds.upper());
                let mean = (centre + s1 * g / n.max(1.0)).clamp(lower, upper);
                // A pair's share of the centred sum is truncated by less than one unit:
                // the sum's width grows by at most n units.
                let wc = moments.count.half_width(MEAN_BETA)?;
                let ws = round::add_up(moments.sum.half_width(MEAN_BETA)?, round::add_up(n, wc).max(0.0)) * g;
                let interval = mean_interval(n, s1 * g, wc, ws, bounds, centre);
                ReleasedValue {
                    name: format!("mean({column})"),
                    value: mean,
                    interval,
                    accuracy: Accuracy::interval(interval),
                }
            }
            AggregateNoise::Variance {
                name,
                std_dev,
                moments,
            } => {
                let (n, s1, s2) = moments.draw(partials, &mut rng);
                let widths = (
                    moments.count.half_width(SPREAD_BETA)?,
                    moments.sum.half_width(SPREAD_BETA)?,
                    moments.squares.half_width(SPREAD_BETA)?,
                );
                let (value, interval) = spread_release(n, s1, s2, widths, &moments.columns, *std_dev);
                ReleasedValue {
                    name: name.clone(),
                    value,
                    interval,
                    accuracy: Accuracy::interval(interval),
                }
            }
            AggregateNoise::Bounds {
                column,
                offset,
                mechanism,
            } => {
                // Exact counts, without the last bin (no magnitude).
                let counts = dense_counts(bins, *offset, mechanism.bins());
                let found = mechanism
                    .release_from_state(&BoundsHistogram::from_counts(mechanism, counts)?, &mut rng)?;
                // The data-free statement is the threshold's (no empty bin clears with
                // probability 1 − β); the interval of each is the public range.
                let range = mechanism.edges(0).0;
                let range = (range, -range);
                let accuracy = Accuracy::FailureProbability { beta: BOUNDS_BETA };
                return Ok(vec![
                    ReleasedValue {
                        name: format!("lower_bound({column})"),
                        value: found.lower,
                        interval: range,
                        accuracy,
                    },
                    ReleasedValue {
                        name: format!("upper_bound({column})"),
                        value: found.upper,
                        interval: range,
                        accuracy,
                    },
                ]);
            }
            AggregateNoise::Quantile {
                column,
                offset,
                quantile,
            } => {
                // Exact counts (empty bins 0).
                let counts = dense_counts(bins, *offset, quantile.grid().bins());
                let value = quantile.release_counts(&counts, &mut rng)?;
                ReleasedValue {
                    name: format!("quantile({column}, {})", quantile.level()),
                    value,
                    // In value units the error depends on the data's spread; the
                    // data-free statement is in ranks (`rank_error`); the interval is
                    // the grid's.
                    interval: (quantile.grid().lower(), quantile.grid().upper()),
                    accuracy: Accuracy::RankError {
                        ranks: quantile.rank_error(INTERVAL_BETA)?,
                        beta: INTERVAL_BETA,
                    },
                }
            }
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::udf::Centring;

    #[test]
    fn gaussian_half_widths_round_up_and_laplace_ones_are_the_smallest() {
        // L0 = 3 cells of Δ∞ = 2, ρ = 0.3: σ² = 3·4/(2·0.3) = 20; ⌈√20·√(2 ln 40)⌉ = 13.
        let noise = CellNoise::new(2, 0.3, 3, true).unwrap();
        assert_eq!(noise.half_width(0.05).unwrap(), 13.0);
        // Discrete Laplace of scale 2·3/1 = 6: the smallest w with 2α^(w+1)/(1+α) ≤ 0.05.
        let noise = CellNoise::new(2, 1.0, 3, false).unwrap();
        let w = noise.half_width(0.05).unwrap();
        let alpha = (-1.0f64 / 6.0).exp();
        let tail = |w: f64| 2.0 * alpha.powf(w + 1.0) / (1.0 + alpha);
        assert!(tail(w) <= 0.05 && tail(w - 1.0) > 0.05, "w = {w}");
    }

    #[test]
    fn zcdp_cells_get_discrete_gaussian_noise_of_the_calibrated_variance() {
        // L0 = 3 cells of Δ∞ = m = 2 rows per unit, ρ = 0.3: σ² = L0·m²/(2ρ) = 20.
        let count = AggregateNoise::new(&Aggregate::Count { epsilon: 0.3 }, 0, None, 3, 2, true).unwrap();
        let runs = 20_000;
        let noise: Vec<f64> = (0..runs)
            .map(|i: u64| {
                let mut k = [0u8; 32];
                k[..8].copy_from_slice(&i.to_le_bytes());
                let released = count
                    .release(0, b"a", &[1000, 400], &[], &ReleaseKey::from_bytes_insecure(k))
                    .unwrap();
                released[0].value - 1000.0
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
        let interval = count
            .release(
                0,
                b"a",
                &[1000, 400],
                &[],
                &ReleaseKey::from_bytes_insecure([1; 32]),
            )
            .unwrap()[0]
            .interval;
        assert_eq!(interval.1 - interval.0, 26.0);
    }

    #[test]
    fn a_mean_from_shared_moments_has_a_fraction_of_the_error_of_a_mean_alone() {
        // 400 records of 700 in [0, 1000], L0 = m = 1. Alone at ε = 1: a sum of
        // sensitivity 1000 and a count at ε/2 each, the mean's error variance ≈
        // 2(2000/400)² + 2(700·2/400)² ≈ 74.5. Shared with a variance at ε = 1: the
        // centred sum (sensitivity 500) and the count at 5/6, ≈ 2(600/400)² +
        // 2(200·1.2/400)² ≈ 5.2, a ratio of 0.07. Over 20 000 draws each the mean squared
        // errors have relative standard deviations below 2 %, so a ratio above 0.5 is
        // out of reach unless the sharing is lost.
        let bounds = Bounds::new(0.0, 1000.0).unwrap();
        let grid = Grid::for_bounds(&bounds).unwrap();
        let centring = Centring::new(&bounds, &grid);
        let g = grid.step();
        let units = (700.0 / g) as i64;
        let y = units - i64::from(centring.centre);
        let mean = Aggregate::Mean {
            column: "v".into(),
            bounds,
            epsilon: 1.0,
        };
        let variance = Aggregate::Variance {
            column: "v".into(),
            bounds,
            std_dev: false,
            epsilon: 1.0,
        };
        let alone = AggregateNoise::new(&mean, 0, Some(grid), 1, 1, false).unwrap();
        let columns = SpreadColumns {
            value: 0,
            square: partial::square(1, 0),
            grid,
            centring,
        };
        let budgets = MomentBudgets::of([&mean, &variance]);
        assert_eq!((budgets.count, budgets.sum), (0.5 + 1.0 / 3.0, 0.5 + 1.0 / 3.0));
        let moments = Arc::new(Moments::new(0, columns, budgets, 1, 1, false).unwrap());
        let shared = AggregateNoise::from_moments(&mean, moments).unwrap();
        let alone_partials = [400, 400, 400 * units];
        let shared_partials = [400, 400, 400 * y, 400 * ((y * y) >> centring.shift)];
        let (mut e_alone, mut e_shared) = (0.0, 0.0);
        let runs = 20_000u64;
        for i in 0..runs {
            let mut k = [7u8; 32];
            k[..8].copy_from_slice(&i.to_le_bytes());
            let key = ReleaseKey::from_bytes_insecure(k);
            let a = alone.release(0, b"c", &alone_partials, &[], &key).unwrap()[0].value;
            let b = shared.release(0, b"c", &shared_partials, &[], &key).unwrap()[0].value;
            e_alone += (a - 700.0).powi(2);
            e_shared += (b - 700.0).powi(2);
        }
        let (e_alone, e_shared) = (e_alone / runs as f64, e_shared / runs as f64);
        println!("mean squared error: alone {e_alone:.2}, shared {e_shared:.2}");
        assert!(e_shared < 0.5 * e_alone, "alone {e_alone}, shared {e_shared}");
    }

    #[test]
    fn budgets_that_round_to_nothing_are_refused() {
        assert!(CellNoise::new(1, 1e-300, u32::MAX, false).is_err());
        assert!(CellNoise::new(1, 5e-324, 2, true).is_err());
        assert!(CellNoise::new(u64::MAX, 1e-300, 1, false).is_err());
    }
}
