//! The Laplace mechanism for real-valued queries, with exact noise on a power-of-two grid.

use crate::privacy::{PrivacyLoss, check_epsilon, check_sensitivity, round};
use crate::sampling::grid::{Grid, floor_log2};
use crate::sampling::{BatchSink, BitSource, DiscreteLaplace, Rational};
use crate::{CryptoRng, Error};

/// Bits of resolution of a release's grid relative to the noise scale: `g ≤ b·2⁻³⁵`,
/// so the noise has `τ ≈ 2³⁵ … 2³⁶` units and a trial fits two random words
/// ([`DiscreteLaplace`]).
const NOISE_RESOLUTION_BITS: i32 = 35;
/// Bits of resolution relative to the sensitivity: `g ≤ Δ·2⁻²⁴`, so the rounding adds at
/// most a relative `n·2⁻²⁴` to the noise scale (binding only for ε below `2⁻¹¹`).
const SENSITIVITY_RESOLUTION_BITS: i32 = 24;
/// The grid of the statistics' exact sums: `g ≤ min(Δ, b)·2⁻⁴⁰`, so that summing `n`
/// rounded records moves the sum by at most `n·Δ·2⁻⁴¹`.
const EXACT_SUM_RESOLUTION_BITS: i32 = 40;
/// The integer noise scale stays below `2⁶¹` grid units.
const MAX_UNITS_BITS: i32 = 60;

/// The Laplace mechanism `M(x) = f(x) + Lap(b)`, `b = Δ₁/ε`, made exact
/// (Dwork, McSherry, Nissim & Smith 2006).
///
/// * **Guarantee:** pure ε-DP.
/// * **Sensitivity:** `Δ₁` is the **L1** sensitivity of `f` (of the whole vector for
///   [`release_slice`](Self::release_slice)) under the neighbouring relation it was
///   computed for (add/remove or substitute one record).
/// * **How the noise is exact.** A granularity `g = 2ᵏ` is chosen from `Δ` and `ε` alone:
///   the largest power of two with `g ≤ b·2⁻³⁵` and `g ≤ Δ·2⁻²⁴`. The input is clamped to
///   `±2^(k+100)` and rounded to the nearest multiple of `g`; integer noise `Z` with the
///   discrete Laplace distribution of scale `τ` (in units of `g`) is added; the result
///   `g·(round(f(x)/g) + Z)` is an exact multiple of `g`. Rounding can move each
///   coordinate by up to one unit, so for `n` coordinates the sensitivity in units is
///   `Δ/g + n` and `τ = ⌈(Δ/g + n)/ε⌉` (every step rounded up): the loss of a
///   neighbouring change is at most `(Δ/g + n)/τ ≤ ε`. The extra noise is a relative
///   `n·g/Δ ≤ n·min(2⁻³⁵/ε, 2⁻²⁴)`.
/// * **Resolution.** The output is a multiple of `g ≈ b·2⁻³⁵` (for `ε ≥ 2⁻¹¹`): the noise
///   is a discrete Laplace of `τ ≈ 2³⁵ … 2³⁶` units, whose distance to `Lap(b)` rounded
///   to the grid is far below anything a float release can show; the noise then needs
///   two random words per trial instead of three (the speed of a release; see the
///   README). The statistics' exact sums ([`statistics`](crate::statistics)) keep a
///   finer grid, `g ≤ min(Δ, b)·2⁻⁴⁰`, so that rounding `n` records moves their sum by at
///   most `n·Δ·2⁻⁴¹`.
/// * **Distribution:** `(M(x) − g·round(f(x)/g))/g` is discrete Laplace with scale
///   `τ ≈ b/g`: for all practical purposes `Lap(b)`, with `b·(1 + n·g/Δ)`.
/// * **Accuracy:** for `n` coordinates, `Pr[‖f(x) − M(x)‖∞ ≥ ln(n/β)·b] ≤ β`
///   (up to the `g/2` rounding).
/// * **Timing:** the number of random words a release draws is independent of its
///   noise, except on a fallback event of probability `< 2⁻⁴⁰·²` (two words per
///   trial at `τ ≈ 2³⁵ … 2³⁶`; see [`DiscreteLaplace`]); per-release timing still has
///   data-dependent branches (table searches; and inputs beyond `±2⁶³·g`, or `±2⁶²·g`
///   in [`release_slice`](Self::release_slice), round through a slower conversion),
///   so do not treat it as constant-time.
///
/// ```
/// use dpmech::Laplace;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mechanism = Laplace::new(1.0, 0.5)?; // sensitivity 1, ε = 0.5: b = 2
/// let noisy = mechanism.release(42.0, &mut ChaCha20Rng::seed_from_u64(1))?;
/// assert_eq!(noisy % mechanism.granularity(), 0.0); // on the public grid
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Laplace {
    sensitivity: f64,
    epsilon: f64,
    grid: Grid,
    /// `Δ/(g·ε)`, rounded up.
    units_per_epsilon: f64,
    /// The discrete Laplace noise for a single value (`n = 1`).
    scalar_noise: DiscreteLaplace,
}

impl Laplace {
    /// Smallest supported noise scale `b = Δ/ε`.
    pub const MIN_SCALE: f64 = 1e-280;
    /// Largest supported noise scale `b = Δ/ε`.
    pub const MAX_SCALE: f64 = 1e250;

    /// The Laplace mechanism for a query of L1 sensitivity `l1_sensitivity` at
    /// privacy level `epsilon`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`], and
    /// [`Error::ScaleOutOfRange`] when `b = Δ/ε` lies outside
    /// [`Self::MIN_SCALE`]`..=`[`Self::MAX_SCALE`] or ε is below `2⁻⁵⁹`.
    pub fn new(l1_sensitivity: f64, epsilon: f64) -> Result<Self, Error> {
        Self::with_grid(l1_sensitivity, epsilon, |sensitivity, scale| {
            (floor_log2(scale) - NOISE_RESOLUTION_BITS)
                .min(floor_log2(sensitivity) - SENSITIVITY_RESOLUTION_BITS)
        })
    }

    /// The mechanism on the finer grid of the statistics' exact sums,
    /// `g ≤ min(Δ, b)·2⁻⁴⁰` (three random words per noise trial instead of two).
    pub(crate) fn for_exact_sums(l1_sensitivity: f64, epsilon: f64) -> Result<Self, Error> {
        Self::with_grid(l1_sensitivity, epsilon, |sensitivity, scale| {
            floor_log2(sensitivity.min(scale)) - EXACT_SUM_RESOLUTION_BITS
        })
    }

    /// The mechanism on the grid `2^max(fine(Δ, b), ⌊log₂ b⌋ − 60)` (the cap keeps
    /// `τ < 2⁶²`).
    fn with_grid(l1_sensitivity: f64, epsilon: f64, fine: impl Fn(f64, f64) -> i32) -> Result<Self, Error> {
        let sensitivity = check_sensitivity(l1_sensitivity)?;
        let epsilon = check_epsilon(epsilon)?;
        let scale = round::div_up(sensitivity, epsilon);
        let min_epsilon = 2f64.powi(-59);
        if !(Self::MIN_SCALE..=Self::MAX_SCALE).contains(&scale) || epsilon < min_epsilon {
            return Err(Error::ScaleOutOfRange {
                scale,
                min: Self::MIN_SCALE,
                max: Self::MAX_SCALE,
            });
        }
        let cap = floor_log2(scale) - MAX_UNITS_BITS;
        let grid = Grid::new(fine(sensitivity, scale).max(cap));
        let g = grid.granularity();
        // Δ/(g·ε) = b/g with b already rounded up; the division by g is exact or rounded up.
        let units_per_epsilon = round::div_up(scale, g);
        let scalar_noise = DiscreteLaplace::new(units_scale(units_per_epsilon, 1, epsilon)?);
        Ok(Self {
            sensitivity,
            epsilon,
            grid,
            units_per_epsilon,
            scalar_noise,
        })
    }

    /// `f(x) + noise` for a single real value, an exact multiple of
    /// [`granularity`](Self::granularity). A non-finite query answer is refused
    /// ([`Error::NonFiniteValue`]) before any randomness is drawn: a query with a finite
    /// sensitivity cannot produce one, so the refusal reveals nothing about a dataset
    /// that the query's own definition did not already. Layers that read *records*
    /// (e.g. [`statistics`](crate::statistics)) never pass one: they map every record
    /// by a data-independent rule first.
    ///
    /// # Errors
    ///
    /// [`Error::NonFiniteValue`] for a NaN or infinite `value`, before any randomness is drawn.
    #[inline]
    pub fn release<R: CryptoRng + ?Sized>(&self, value: f64, rng: &mut R) -> Result<f64, Error> {
        check_finite(0, value)?;
        let mut released = Released {
            grid: self.grid,
            values: core::slice::from_ref(&value),
            out: [0.0],
        };
        self.scalar_noise
            .sample_one(&mut released, &mut BitSource::new(rng));
        Ok(released.out[0])
    }

    /// Adds independent noise to every coordinate of a vector-valued query whose **whole
    /// vector** has L1 sensitivity `Δ` (e.g. the census example: two counts, `Δ = 2`).
    /// The unit scale accounts for the rounding of all `n` coordinates.
    ///
    /// Prefer it to `n` calls of [`release`](Self::release) for a vector: besides the
    /// calibration (the rounding of every coordinate is accounted for once), it draws
    /// the noise through [`DiscreteLaplace::sample_into`]'s path. The guarantee and the
    /// independence of the words drawn from the noise are those of single releases.
    ///
    /// # Errors
    ///
    /// [`Error::NonFiniteValue`] for the first non-finite coordinate, and
    /// [`Error::ScaleOutOfRange`] when the noise scale for `values.len()` coordinates is
    /// out of the sampler's range; both before any randomness is drawn.
    pub fn release_slice<R: CryptoRng + ?Sized>(
        &self,
        values: &[f64],
        rng: &mut R,
    ) -> Result<Vec<f64>, Error> {
        check_all_finite(values)?;
        let noise = self.noise_for(values.len())?;
        let mut released = Released {
            grid: self.grid,
            values,
            out: vec![0.0; values.len()],
        };
        noise.sample_batch(values.len(), &mut released, &mut BitSource::new(rng));
        Ok(released.out)
    }

    /// `g·(units + Z)` for a statistic already computed exactly as `units` grid units
    /// (e.g. an exact sum of rounded records): no input rounding, the noise of one value.
    pub(crate) fn release_units<R: CryptoRng + ?Sized>(&self, units: i128, rng: &mut R) -> f64 {
        let mut bits = BitSource::new(rng);
        self.grid
            .from_units(units.saturating_add(self.scalar_noise.sample_bits(&mut bits)))
    }

    /// The public grid of this mechanism.
    pub(crate) fn grid(&self) -> Grid {
        self.grid
    }

    /// The discrete noise for a vector of `n` coordinates.
    fn noise_for(&self, n: usize) -> Result<DiscreteLaplace, Error> {
        if n <= 1 {
            return Ok(self.scalar_noise.clone());
        }
        Ok(DiscreteLaplace::new(units_scale(
            self.units_per_epsilon,
            n,
            self.epsilon,
        )?))
    }

    /// The noise scale of a single release, `τ·g ≥ Δ/ε` (in the units of the query).
    pub fn scale(&self) -> f64 {
        self.scalar_noise.scale().to_f64() * self.grid.granularity()
    }

    /// The noise scale used by [`release_slice`](Self::release_slice) for `len`
    /// values: `τₙ·g` with `τₙ = ⌈(Δ/g + n)/ε⌉`, marginally above `Δ/ε`.
    ///
    /// # Errors
    ///
    /// [`Error::ScaleOutOfRange`] when the scale for `len` coordinates is out of the
    /// sampler's range.
    pub fn scale_for(&self, len: usize) -> Result<f64, Error> {
        Ok(self.noise_for(len)?.scale().to_f64() * self.grid.granularity())
    }

    /// A half-width `w` with `Pr[|M(x) − f(x)| > w] ≤ β` for one released value: the
    /// exact tail of the discrete noise plus the rounding of the input (`g/2`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`beta`) unless `0 < β < 1`.
    pub fn confidence_half_width(&self, beta: f64) -> Result<f64, Error> {
        let units = super::geometric::rational_half_width(self.scalar_noise.scale(), beta)?;
        let g = self.grid.granularity();
        Ok(round::add_up(round::mul_up(units as f64, g), g / 2.0))
    }

    /// The grid `g = 2ᵏ`: every output is an exact multiple of it.
    pub fn granularity(&self) -> f64 {
        self.grid.granularity()
    }

    /// The L1 sensitivity Δ.
    pub fn sensitivity(&self) -> f64 {
        self.sensitivity
    }

    /// `PrivacyLoss::Pure { epsilon }`.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }
}

/// The values of a release, released as their noise arrives (`O` a `Vec` or an array).
struct Released<'a, O> {
    grid: Grid,
    values: &'a [f64],
    out: O,
}

impl<O: AsMut<[f64]>> BatchSink for Released<'_, O> {
    #[inline(always)]
    fn wide(&mut self, i: usize, z: i128) {
        self.out.as_mut()[i] = self.grid.add_noise(self.values[i], z);
    }
}

/// `τ = ⌈Δ/(g·ε) + n/ε⌉` as an integer rational.
fn units_scale(units_per_epsilon: f64, n: usize, epsilon: f64) -> Result<Rational, Error> {
    let rounding = round::div_up(round::u64_up(n as u64), epsilon);
    let tau = round::add_up(units_per_epsilon, rounding).ceil();
    Rational::from_f64_up(tau)
}

pub(crate) fn check_finite(index: usize, value: f64) -> Result<(), Error> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(Error::NonFiniteValue { index, value })
    }
}

/// [`Error::NonFiniteValue`] for the first non-finite value of a slice.
pub(crate) fn check_all_finite(values: &[f64]) -> Result<(), Error> {
    for (index, &value) in values.iter().enumerate() {
        check_finite(index, value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two grids follow their rules: a release's is the largest power of two with
    /// `g ≤ b·2⁻³⁵` and `g ≤ Δ·2⁻²⁴`, so that for ε ≥ 2⁻¹¹ the noise has
    /// `2³⁵ ≤ τ < 2³⁷` units and two words per trial; the exact sums' is the largest
    /// with `g ≤ min(Δ, b)·2⁻⁴⁰` (three words per trial at these ε).
    #[test]
    fn grids_follow_their_rules() {
        for sensitivity in [1e-6, 0.3, 1.0, 2.0, 250.0, 1e9] {
            for epsilon in [2f64.powi(-11), 0.01, 0.1, 0.5, 1.0, 3.0, 50.0] {
                let b = sensitivity / epsilon;
                let release = Laplace::new(sensitivity, epsilon).unwrap();
                let g = release.granularity();
                assert!(g <= b * 2f64.powi(-35) && g <= sensitivity * 2f64.powi(-24));
                assert!(2.0 * g > b * 2f64.powi(-35) || 2.0 * g > sensitivity * 2f64.powi(-24));
                let tau = release.scalar_noise.scale().to_f64();
                assert!(
                    (2f64.powi(35)..2f64.powi(37)).contains(&tau),
                    "Δ = {sensitivity}, ε = {epsilon}: τ = {tau}"
                );
                assert_eq!(
                    release.scalar_noise.words_per_trial(),
                    2,
                    "Δ = {sensitivity}, ε = {epsilon}"
                );

                let sums = Laplace::for_exact_sums(sensitivity, epsilon).unwrap();
                let fine = sensitivity.min(b) * 2f64.powi(-40);
                let g = sums.granularity();
                assert!(g <= fine && 2.0 * g > fine, "Δ = {sensitivity}, ε = {epsilon}");
                assert!(sums.scale() >= b, "Δ = {sensitivity}, ε = {epsilon}");
            }
        }
    }
}
