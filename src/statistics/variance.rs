//! Variance and standard deviation of records clamped to public bounds: exact integer
//! sums of the count, the centred values and their squares on public grids (mergeable),
//! noise on each, the variance computed from the three noisy moments.

use crate::mechanisms::Mechanism;
use crate::privacy::{PrivacyLoss, check_epsilon, round};
use crate::sampling::grid::Grid;
use crate::sensitivity::Neighbouring;
use crate::statistics::Bounds;
use crate::statistics::releases::Release;
use crate::{Accountant, CryptoRng, Error, Geometric, Laplace};

/// A private variance and standard deviation of records read by the public [`Bounds`]
/// `[lo, hi]` (NaN imputed, clamped: see [`records`](super::records)).
///
/// # The release
///
/// Each record `x` is read (`read(x) ∈ [lo, hi]`) and centred, `y = read(x) − m` with
/// `m = (lo + hi)/2` and `|y| ≤ h = (hi − lo)/2` (as the normalised mean,
/// [`MeanMethod::Normalised`](super::MeanMethod::Normalised)). The exact state
/// ([`VarianceState`], mergeable by addition) holds three integers:
///
/// * `n`, the number of records;
/// * `S₁ = Σ y`, on the grid `g₁` of the sum's noise, each record truncated to whole
///   grid units and clamped to `±⌊h/g₁⌋` units;
/// * `S₂ = Σ y²`, on the grid `g₂` of its noise, each `y²` (computed in `f64`, clamped to
///   `[0, h²]`) truncated and clamped to `[0, ⌊h²/g₂⌋]` units.
///
/// The grids are the finer ones of the crate's exact sums (`g ≤ min(Δ, b)·2⁻⁴⁰`); ε/3
/// beyond about `2²⁰` is refused, as a record would then exceed `2⁶²` units.
///
/// The budget is **split in three equal parts**, `ε/3` each (rounded down), composed
/// sequentially: `ñ = n + Z₀` (discrete Laplace), `S̃₁ = S₁ + Z₁`, `S̃₂ = S₂ + Z₂`
/// (discrete Laplace on the grids, [`Laplace`]). With at most `c` records per privacy unit
/// (`contributions`), the sensitivities are
///
/// | | `n` | `S₁` | `S₂` |
/// |---|---|---|---|
/// | add/remove a unit | `c` | `c·h` | `c·h²` |
/// | substitute a unit | `c` | `2c·h` | `c·h²` |
///
/// (a record's `y²` lies in `[0, h²]` either way; the grid units are clamped so that a
/// record never exceeds them, and the Laplace grid charges one extra unit, [`Laplace`]).
///
/// The released values are post-processing of the three:
///
/// * `variance = clamp(S̃₂/ñ − (S̃₁/ñ)², 0, h²)` — the **population** variance (divided by
///   `n`), and `h² = ((hi − lo)/2)²` is the largest variance of values in `[lo, hi]`;
///   when `ñ ≤ 1`, the data-independent fallback `0` (the variance of zero or one record);
/// * `std_dev = √variance ∈ [0, h]`;
/// * `mean = clamp(m + S̃₁/ñ, lo, hi)` (`m` when `ñ ≤ 1`), at no extra cost.
///
/// * **Guarantee:** pure ε-DP under the stated [`Neighbouring`] of privacy units with at
///   most `contributions` records each.
/// * **Confidence intervals** ([`Spread::variance_interval`], [`Spread::std_dev_interval`]):
///   conservative, from the released values only. Each noise gets the half-width of its
///   exact tail at `β/3` (union bound), widened by the rounding of `n` records to the
///   grids; the variance interval is the range of `S₂/n − (S₁/n)²` over that box, bounded
///   term by term (`S₂/n` and `(S₁/n)²` separately, which only widens it), every step
///   rounded outward, and intersected with `[0, h²]`; `[0, h²]` itself when the box allows
///   `n < 1`. The standard deviation's interval is its square root.
/// * **Never fails on records**; empty data gives a release (usually the fallback).
/// * **Draws:** one discrete Laplace sample for each of the three moments, whatever the
///   data.
///
/// ```
/// use dpmech::sensitivity::Neighbouring;
/// use dpmech::statistics::Variance;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let heights: Vec<f64> = (0..10_000).map(|i| 150.0 + f64::from(i % 41)).collect();
/// let spread = Variance::new((140.0, 210.0), 1, Neighbouring::AddRemove, 1.0)?;
/// let release = spread.release(&heights, &mut ChaCha20Rng::seed_from_u64(1));
/// let (low, high) = release.std_dev_interval(0.05)?; // the true value is 11.83
/// assert!(low <= release.std_dev && release.std_dev <= high && high - low < 2.0);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Variance {
    reader: Reader,
    contributions: u64,
    relation: Neighbouring,
    epsilon: f64,
    noise: Noise,
}

/// The three noises of a release, kept with it for its confidence intervals.
#[derive(Debug, Clone, PartialEq)]
struct Noise {
    count: Geometric,
    sum: Laplace,
    squares: Laplace,
}

/// How one record enters the state: public parameters only.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Reader {
    bounds: Bounds,
    midpoint: f64,
    /// `h`, rounded up.
    half: f64,
    /// `h²`, rounded up.
    half_squared: f64,
    sum_grid: Grid,
    squares_grid: Grid,
    /// `1/g₁` and `1/g₂` (exact: powers of two).
    per_sum_unit: f64,
    per_square_unit: f64,
    /// `⌊h/g₁⌋ < 2⁶²`.
    max_sum_units: i64,
    /// `⌊h²/g₂⌋ < 2⁶²`.
    max_square_units: i64,
}

/// The exact, mergeable state of [`Variance`]: the count, the sum of the centred records
/// (kept as two saturating accumulators of its positive and negative parts, so the result
/// never depends on the order) and the sum of their squares, in grid units. States of the
/// same mechanism merge by addition, in any order and over any partition of the records.
#[derive(Debug, Clone, PartialEq)]
pub struct VarianceState {
    reader: Reader,
    count: u64,
    positive: i128,
    negative: i128,
    squares: i128,
}

/// What [`Variance`] releases: the variance, the standard deviation and the mean of the
/// clamped records, from the same three noisy moments.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// The population variance, in `[0, h²]`.
    pub variance: f64,
    /// `√variance`, in `[0, h]`.
    pub std_dev: f64,
    /// The mean, in `[lo, hi]`.
    pub mean: f64,
    /// The noisy count `ñ`.
    pub count: i64,
    noisy_sum: f64,
    noisy_squares: f64,
    half_squared: f64,
    noise: Noise,
    sum_record_error: f64,
    square_record_error: f64,
}

impl Variance {
    /// The variance of records clamped to `bounds`, at privacy level `epsilon`, for units
    /// of at most `contributions` records, neighbours under `relation`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] for invalid bounds (not finite, `lower ≥ upper`, or a
    /// NaN imputation value outside them); [`Error::InvalidEpsilon`] for ε not finite or
    /// `≤ 0`; [`Error::InvalidSensitivity`] for `contributions = 0` or a sensitivity that
    /// overflows; [`Error::ScaleOutOfRange`] when a noise scale is out of range. All
    /// before anything is charged or drawn.
    pub fn new(
        bounds: impl Into<Bounds>,
        contributions: u64,
        relation: Neighbouring,
        epsilon: f64,
    ) -> Result<Self, Error> {
        let bounds = bounds.into();
        bounds.validate()?;
        let epsilon = check_epsilon(epsilon)?;
        if contributions == 0 {
            return Err(Error::InvalidSensitivity { value: 0.0 });
        }
        let third = round::div_down(epsilon, 3.0);
        let half = round::mul_up(round::sub_up(bounds.upper(), bounds.lower()), 0.5);
        let half_squared = round::mul_up(half, half);
        let c = round::u64_up(contributions);
        let sum_factor = match relation {
            Neighbouring::AddRemove => c,
            Neighbouring::Substitute => round::mul_up(2.0, c),
        };
        let count = Geometric::new(contributions, third)?;
        let sum = Laplace::for_exact_sums(round::mul_up(sum_factor, half), third)?;
        let squares = Laplace::for_exact_sums(round::mul_up(c, half_squared), third)?;
        let (sum_grid, squares_grid) = (sum.grid(), squares.grid());
        let reader = Reader {
            bounds,
            midpoint: bounds.midpoint(),
            half,
            half_squared,
            sum_grid,
            squares_grid,
            per_sum_unit: 1.0 / sum_grid.granularity(),
            per_square_unit: 1.0 / squares_grid.granularity(),
            max_sum_units: max_units(half, sum_grid)?,
            max_square_units: max_units(half_squared, squares_grid)?,
        };
        Ok(Self {
            reader,
            contributions,
            relation,
            epsilon,
            noise: Noise { count, sum, squares },
        })
    }

    /// An empty state for this mechanism.
    pub fn state(&self) -> VarianceState {
        VarianceState {
            reader: self.reader,
            count: 0,
            positive: 0,
            negative: 0,
            squares: 0,
        }
    }

    /// The release for `values` (never refused).
    pub fn release<R: CryptoRng + ?Sized>(&self, values: &[f64], rng: &mut R) -> Spread {
        let mut state = self.state();
        values.iter().for_each(|&v| state.add(v));
        self.release_exact(&state, rng)
    }

    /// The release from an exact state (e.g. merged by an engine from its partitions).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `state` was built for other public parameters
    /// (bounds or grids) than this mechanism, before any randomness is drawn.
    pub fn release_from_state<R: CryptoRng + ?Sized>(
        &self,
        state: &VarianceState,
        rng: &mut R,
    ) -> Result<Spread, Error> {
        if state.reader != self.reader {
            return Err(mismatch());
        }
        Ok(self.release_exact(state, rng))
    }

    fn release_exact<R: CryptoRng + ?Sized>(&self, state: &VarianceState, rng: &mut R) -> Spread {
        let reader = &self.reader;
        let n = i64::try_from(state.count).unwrap_or(i64::MAX);
        let count = self.noise.count.release(n, rng);
        let noisy_sum = self.noise.sum.release_units(state.positive - state.negative, rng);
        let noisy_squares = self.noise.squares.release_units(state.squares, rng);
        let (lo, hi) = (reader.bounds.lower(), reader.bounds.upper());
        let (variance, mean) = if count <= 1 {
            (0.0, reader.midpoint)
        } else {
            let n = count as f64;
            let centred = noisy_sum / n;
            (
                (noisy_squares / n - centred * centred).clamp(0.0, reader.half_squared),
                (reader.midpoint + centred).clamp(lo, hi),
            )
        };
        Spread {
            variance,
            std_dev: variance.sqrt().min(reader.half),
            mean,
            count,
            noisy_sum,
            noisy_squares,
            half_squared: reader.half_squared,
            noise: self.noise.clone(),
            // Truncating to the grid and clamping the units move a record by less than
            // one grid step; computing y and y² in f64 by at most a relative 2⁻⁵².
            sum_record_error: record_error(reader.sum_grid, reader.half, 1.0),
            square_record_error: record_error(reader.squares_grid, reader.half_squared, 4.0),
        }
    }

    /// The neighbouring relation the guarantee holds for.
    pub fn relation(&self) -> Neighbouring {
        self.relation
    }

    /// The bound on records per privacy unit.
    pub fn contributions(&self) -> u64 {
        self.contributions
    }

    /// The noise scales `(count, sum, sum of squares)`, each `≥ Δ/(ε/3)` in its units.
    pub fn scales(&self) -> (f64, f64, f64) {
        (
            self.noise.count.scale(),
            self.noise.sum.scale(),
            self.noise.squares.scale(),
        )
    }

    /// `PrivacyLoss::Pure { epsilon }` (three parts of `ε/3`).
    pub fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }
}

/// `⌊largest/g⌋`, refused unless below `2⁶²` (a record's units then fit an `i64`; this
/// binds only for ε/3 beyond about `2²⁰`).
fn max_units(largest: f64, grid: Grid) -> Result<i64, Error> {
    let units = (largest / grid.granularity()).floor();
    if units < 2f64.powi(62) {
        Ok(units as i64)
    } else {
        Err(Error::InvalidParameter {
            name: "epsilon",
            value: units,
            reason: "too large for the variance's grids (a record would exceed 2^62 grid units)",
        })
    }
}

/// The largest distance between a record's term (at most `largest` in magnitude,
/// computed with a relative error of `ulps·2⁻⁵²`) and its units on `grid` (truncated,
/// then clamped: less than one grid step), rounded up.
fn record_error(grid: Grid, largest: f64, ulps: f64) -> f64 {
    round::add_up(grid.granularity(), round::mul_up(largest, ulps * f64::EPSILON))
}

fn mismatch() -> Error {
    Error::InvalidParameter {
        name: "state",
        value: f64::NAN,
        reason: "the state was built for other bounds or grids than this mechanism",
    }
}

impl VarianceState {
    /// Adds one record (never fails: NaN imputed, ±∞ and out-of-range values clamped).
    pub fn add(&mut self, value: f64) {
        let r = &self.reader;
        let y = (r.bounds.read(value) - r.midpoint).clamp(-r.half, r.half);
        // Truncated to whole grid units (|y/g₁| < 2⁶³, so the conversion is exact up to
        // the truncation, at most one unit) and clamped to the public bound per record.
        let units = ((y * r.per_sum_unit) as i64).clamp(-r.max_sum_units, r.max_sum_units);
        let square = (((y * y).min(r.half_squared) * r.per_square_unit) as i64).clamp(0, r.max_square_units);
        self.count = self.count.saturating_add(1);
        self.positive = self.positive.saturating_add(i128::from(units.max(0)));
        self.negative = self.negative.saturating_add(i128::from((-units).max(0)));
        self.squares = self.squares.saturating_add(i128::from(square));
    }

    /// Adds the partial sums of `other` (a state of the same mechanism).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `other` was built for other public parameters
    /// (nothing is added).
    pub fn merge(&mut self, other: &VarianceState) -> Result<(), Error> {
        if self.reader != other.reader {
            return Err(mismatch());
        }
        self.count = self.count.saturating_add(other.count);
        self.positive = self.positive.saturating_add(other.positive);
        self.negative = self.negative.saturating_add(other.negative);
        self.squares = self.squares.saturating_add(other.squares);
        Ok(())
    }

    /// The exact parts `(n, positive part of S₁, negative part of S₁, S₂)`, sums in grid
    /// units (for an engine to store; [`from_parts`](Self::from_parts) rebuilds it).
    pub fn parts(&self) -> (u64, i128, i128, i128) {
        (self.count, self.positive, self.negative, self.squares)
    }

    /// A state of `mechanism` from stored [`parts`](Self::parts).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] for a negative part.
    pub fn from_parts(
        mechanism: &Variance,
        (count, positive, negative, squares): (u64, i128, i128, i128),
    ) -> Result<Self, Error> {
        if positive < 0 || negative < 0 || squares < 0 {
            return Err(Error::InvalidParameter {
                name: "parts",
                value: f64::NAN,
                reason: "the parts of a variance state are non-negative",
            });
        }
        Ok(Self {
            count,
            positive,
            negative,
            squares,
            ..mechanism.state()
        })
    }
}

impl Spread {
    /// An interval that holds the variance of the clamped records with probability at
    /// least `1 − β` (see [`Variance`] for how it is built).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] unless `0 < β < 1`.
    pub fn variance_interval(&self, beta: f64) -> Result<(f64, f64), Error> {
        let third = round::down(crate::mechanisms::check_beta(beta)? / 3.0);
        let count_width = self.noise.count.confidence_half_width(third)? as f64;
        let n = self.count as f64;
        let (n_low, n_high) = (round::sub_down(n, count_width), round::add_up(n, count_width));
        let full = (0.0, self.half_squared);
        if n_low.is_nan() || n_low < 1.0 || !n_high.is_finite() {
            return Ok(full);
        }
        let width = |noise: &Laplace, per_record: f64| -> Result<f64, Error> {
            Ok(round::add_up(
                noise.confidence_half_width(third)?,
                round::mul_up(n_high, per_record),
            ))
        };
        let sum_width = width(&self.noise.sum, self.sum_record_error)?;
        let squares_width = width(&self.noise.squares, self.square_record_error)?;
        let squares_low = round::sub_down(self.noisy_squares, squares_width).max(0.0);
        let squares_high = round::add_up(self.noisy_squares, squares_width);
        let (sum_low, sum_high) = (
            round::sub_down(self.noisy_sum, sum_width),
            round::add_up(self.noisy_sum, sum_width),
        );
        let abs_high = sum_low.abs().max(sum_high.abs());
        let abs_low = if sum_low <= 0.0 && sum_high >= 0.0 {
            0.0
        } else {
            sum_low.abs().min(sum_high.abs())
        };
        let mean_high = round::div_up(abs_high, n_low);
        let mean_low = round::div_down(abs_low, n_high);
        let low = round::sub_down(
            round::div_down(squares_low, n_high),
            round::mul_up(mean_high, mean_high),
        );
        let high = round::sub_up(
            round::div_up(squares_high, n_low),
            round::mul_down(mean_low, mean_low),
        );
        if !(low.is_finite() && high.is_finite()) {
            return Ok(full);
        }
        Ok((
            low.clamp(0.0, self.half_squared),
            high.clamp(0.0, self.half_squared),
        ))
    }

    /// An interval that holds the standard deviation of the clamped records with
    /// probability at least `1 − β`: the square roots of
    /// [`variance_interval`](Self::variance_interval)'s ends, rounded outward.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] unless `0 < β < 1`.
    pub fn std_dev_interval(&self, beta: f64) -> Result<(f64, f64), Error> {
        let (low, high) = self.variance_interval(beta)?;
        Ok((round::sqrt_down(low).max(0.0), round::sqrt_up(high)))
    }
}

impl<'a> Mechanism<&'a [f64]> for Variance {
    type Output = Spread;
    fn release<R: CryptoRng + ?Sized>(&self, values: &'a [f64], rng: &mut R) -> Result<Spread, Error> {
        Ok(Variance::release(self, values, rng))
    }
    fn privacy_loss(&self) -> PrivacyLoss {
        Variance::privacy_loss(self)
    }
}

impl<'a> Mechanism<&'a VarianceState> for Variance {
    type Output = Spread;
    fn release<R: CryptoRng + ?Sized>(&self, state: &'a VarianceState, rng: &mut R) -> Result<Spread, Error> {
        self.release_from_state(state, rng)
    }
    fn privacy_loss(&self) -> PrivacyLoss {
        Variance::privacy_loss(self)
    }
}

/// A private variance, standard deviation and mean of `values` with [`Variance`]
/// (records clamped to `bounds`, at most `contributions` per unit), charged to
/// `accountant` **before** the noise is drawn. Pure ε-DP under `relation`.
///
/// ```
/// use dpmech::{Accountant, DefaultRng, sensitivity::Neighbouring, statistics::variance};
/// let accountant = Accountant::pure(1.0)?;
/// let waits = [3.0, 7.5, f64::NAN, 12.0, 600.0]; // NaN → the midpoint, 600 → 60
/// let release = variance(&accountant, &waits, (0.0, 60.0), 1, Neighbouring::AddRemove, 1.0, &mut DefaultRng::from_os()?)?;
/// assert!((0.0..=900.0).contains(&release.value.variance));
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// Those of [`Variance::new`] (bounds, `contributions = 0`, ε), then the accountant's
/// refusal ([`Error::BudgetExceeded`], [`Error::IncompatibleLoss`]), with nothing spent
/// and nothing drawn. Never because of a record.
pub fn variance<R: CryptoRng + ?Sized>(
    accountant: &Accountant,
    values: &[f64],
    bounds: impl Into<Bounds>,
    contributions: u64,
    relation: Neighbouring,
    epsilon: f64,
    rng: &mut R,
) -> Result<Release<Spread>, Error> {
    let mechanism = Variance::new(bounds, contributions, relation, epsilon)?;
    Release::charged(accountant, "variance", relation, &mechanism, values, None, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    #[test]
    fn states_merge_exactly_and_record_the_clamped_moments() {
        let m = Variance::new((-2.0, 6.0), 1, Neighbouring::AddRemove, 1.0).unwrap();
        let values: Vec<f64> = (0..3000).map(|i| f64::from(i % 17) * 0.5 - 3.0).collect();
        let mut whole = m.state();
        values.iter().for_each(|&v| whole.add(v));
        let (mut a, mut b) = (m.state(), m.state());
        values[..1234].iter().rev().for_each(|&v| a.add(v));
        values[1234..].iter().for_each(|&v| b.add(v));
        b.merge(&a).unwrap();
        assert_eq!(b, whole);
        let rebuilt = VarianceState::from_parts(&m, whole.parts()).unwrap();
        assert_eq!(rebuilt, whole);
        // The exact moments, converted back, are those of the clamped records.
        let (n, pos, neg, sq) = whole.parts();
        let g1 = m.reader.sum_grid.granularity();
        let g2 = m.reader.squares_grid.granularity();
        let ys: Vec<f64> = values.iter().map(|v| v.clamp(-2.0, 6.0) - 2.0).collect();
        let s1: f64 = ys.iter().sum();
        let s2: f64 = ys.iter().map(|y| y * y).sum();
        assert_eq!(n, 3000);
        assert!(((pos - neg) as f64 * g1 - s1).abs() <= 3000.0 * g1, "{s1}");
        assert!((sq as f64 * g2 - s2).abs() <= 3000.0 * g2, "{s2}");
        let other = Variance::new((-2.0, 7.0), 1, Neighbouring::AddRemove, 1.0).unwrap();
        assert!(whole.merge(&other.state()).is_err());
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        assert!(other.release_from_state(&whole, &mut rng).is_err());
        assert!(VarianceState::from_parts(&m, (1, -1, 0, 0)).is_err());
    }

    #[test]
    fn parameters_are_refused_before_anything_is_drawn() {
        for (bounds, c, e) in [
            ((1.0, 1.0), 1, 1.0),
            ((2.0, 1.0), 1, 1.0),
            ((0.0, f64::NAN), 1, 1.0),
            ((0.0, f64::INFINITY), 1, 1.0),
            ((0.0, 1.0), 0, 1.0),
            ((0.0, 1.0), 1, 0.0),
            ((0.0, 1.0), 1, -1.0),
            ((0.0, 1.0), 1, f64::NAN),
            ((0.0, 1.0), 1, f64::INFINITY),
            ((0.0, 1e300), 1, 1.0),
        ] {
            assert!(
                Variance::new(bounds, c, Neighbouring::AddRemove, e).is_err(),
                "{bounds:?} {c} {e}"
            );
        }
    }
}
