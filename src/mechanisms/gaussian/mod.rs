//! The Gaussian mechanism (analytic, classical and zCDP calibrations) on a power-of-two
//! grid with exact discrete Gaussian noise. Its calibrations (σ for (ε, δ) or ρ, shared
//! with the discrete Gaussian mechanism on integers, `discrete_gaussian.rs`) are in
//! `calibration` (the `erfc` they evaluate is `privacy::erfc`, shared with the PLD
//! builders).

mod calibration;
mod first_guess;

pub use calibration::{analytic_gaussian_delta, zcdp_delta};

pub(super) use calibration::conversion_ratio;
use calibration::{analytic_ratio, classical_ratio, zcdp_ratio};

use super::{check_all_finite, check_finite};
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon, check_rho, check_sensitivity, round};
use crate::sampling::grid::{Grid, floor_log2};
use crate::sampling::{BitSource, DiscreteGaussianSampler};
use crate::{CryptoRng, Error};

/// Smallest supported noise standard deviation σ (in the units of the query).
pub const MIN_SIGMA: f64 = 1e-280;
/// Largest supported noise standard deviation σ.
pub const MAX_SIGMA: f64 = 1e250;
/// Smallest δ accepted by the (ε, δ) calibrations of [`Gaussian`] (see its docs: the
/// discrete-noise slack, below `1e-18`, is charged to δ).
pub const MIN_DELTA: f64 = 1e-15;
/// The noise standard deviation is about `2⁶⁰` grid units (`σ/g ∈ [2⁶⁰, 2⁶¹)` before the
/// rounding charge).
const SIGMA_UNITS_BITS: i32 = 60;
/// Upper bound on the δ slack of the discrete noise at `s ≥ 2⁶⁰` units:
/// `2/(√(2π)·s) + 8·e^(−2π²s²) < 6.93·10⁻¹⁹`.
const DISCRETE_SLACK: f64 = 1e-18;

/// How the noise of a [`Gaussian`] was calibrated.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Calibration {
    Analytic { epsilon: f64, delta: f64 },
    Classical { epsilon: f64, delta: f64 },
    Zcdp { rho: f64 },
}

/// The Gaussian mechanism `M(x) = f(x) + N(0, σ²)` for real-valued queries, made exact:
/// the noise is a **discrete** Gaussian on a public power-of-two grid.
///
/// Three calibrations of σ for a query of **L2** sensitivity `Δ₂` (of the whole vector
/// for [`release_slice`](Self::release_slice)), under the neighbouring relation the
/// sensitivity was computed for (add/remove or substitute one record):
///
/// * [`Gaussian::analytic`] — Balle & Wang (2018): the smallest σ with
///   `Φ(Δ/2σ − εσ/Δ) − e^ε·Φ(−Δ/2σ − εσ/Δ) ≤ δ` (to a relative 10⁻¹¹), found by
///   Halley's method and accepted only where an upper bound of the left side, every
///   rounding outward, is at most δ (well under a microsecond for new parameters).
///   Any ε > 0. **Guarantee:** (ε, δ)-DP.
/// * [`Gaussian::classical`] — `σ = Δ₂·√(2 ln(1.25/δ))/ε`, only for `0 < ε < 1`
///   (Dwork & Roth 2014, Theorem A.1). **Guarantee:** (ε, δ)-DP.
/// * [`Gaussian::zcdp`] — `σ = Δ₂/√(2ρ)`. **Guarantee:** ρ-zCDP.
///
/// **How the noise is exact.** A granularity `g = 2ᵏ` is chosen from the public
/// parameters only, so that σ is about `2⁶⁰` grid units. Each input is clamped to
/// `±2^(k+100)` and rounded to the nearest multiple of `g`; integer noise with the
/// discrete Gaussian distribution of variance `s²` (`s` an integer number of units,
/// sampled exactly by [`crate::sampling::DiscreteGaussianSampler`]) is added, and the result is
/// an exact multiple of `g`.
///
/// **The rounding is charged.** Rounding moves each coordinate by at most `g/2`, so
/// neighbouring inputs `x, x′` (`‖f(x) − f(x′)‖₂ ≤ Δ₂`) give unit vectors `u, u′` with
/// `|uᵢ − u′ᵢ| ≤ |fᵢ(x) − fᵢ(x′)|/g + 1`, hence, by the triangle inequality in ℓ₂,
/// `‖u − u′‖₂ ≤ Δ₂/g + √n` for `n` coordinates. Every calibration uses the unit
/// sensitivity `Δᵤ = Δ₂/g + √n` (rounded up); the extra noise is a relative
/// `√n·g/Δ₂`.
///
/// **What the discrete noise guarantees** (Canonne, Kamath & Steinke 2020, "CKS20"):
///
/// * zCDP: for an integer shift `m`, `D_α(N_ℤ(m, s²) ‖ N_ℤ(0, s²)) = α·m²/(2s²)` exactly
///   as for the continuous Gaussian (CKS20 Proposition 5), and Rényi divergences add
///   over independent coordinates, so the mechanism is `Δᵤ²/(2s²)`-zCDP with
///   `s ≥ Δᵤ/√(2ρ)`: **ρ-zCDP** for any `n`.
/// * (ε, δ), one value (`release`): for an integer shift `m` the privacy loss
///   `(m² − 2mZ)/(2s²)` is linear in `Z`, so `δ(ε) = Pr[Z > εs²/m − m/2] −
///   e^ε·Pr[Z > εs²/m + m/2]` with `Z ~ N_ℤ(0, s²)` (CKS20 Theorem 7). Comparing the
///   lattice sums with integrals (the summand `f(z) = e^(−z²/2s²)` is monotone on each
///   side of 0 and at most 1, and `Σ_z f(z) ∈ [√(2π)s, √(2π)s(1 + τ)]`,
///   `τ ≤ 4e^(−2π²s²)`, by Poisson summation) gives
///   `Pr[Z > c₁] ≤ Φ̄(a) + φ(a)/s + τ` and `Pr[Z > c₂] ≥ Φ̄(b)/(1 + τ) − φ(b)/s` with
///   `a = c₁/s`, `b = c₂/s`; since `e^ε·φ(b) = φ(a)` and `e^ε·Φ̄(b) ≤ Φ̄(a) ≤ 1`,
///   `δ_discrete(m) ≤ δ_continuous(m) + 2/(√(2π)s) + 2τ`, and `δ_continuous`
///   increases with `m ≤ Δᵤ` (Balle & Wang 2018). The grid makes `s ≥ 2⁶⁰`, so the
///   slack is below `7·10⁻¹⁹ < 10⁻¹⁸`: the calibration solves `δ_continuous(Δᵤ) ≤ δ − 10⁻¹⁸`
///   (with a further `10⁻¹³` relative margin for the `erfc` evaluations), which is why
///   δ below [`MIN_DELTA`] is refused.
/// * (ε, δ), vectors (`release_slice` with `n ≥ 2`): the noise is calibrated so that
///   its zCDP parameter `ρ = Δᵤ²/(2s²)` converts to (ε, δ) by the tight conversion of
///   CKS20 (Corollary 13): `δ = inf_{α>1} e^((α−1)(αρ−ε))/(α−1)·(1 − 1/α)^α`. This
///   needs somewhat more noise than the one-value case; [`sigma_for`](Self::sigma_for)
///   reports it. The classical calibration uses the larger of its formula and this.
///
/// * **Accuracy:** `Pr[|noise| ≥ w] ≤ β` for `w = `[`accuracy`](Self::accuracy)`(β)`
///   (the discrete Gaussian is σ-subgaussian, CKS20).
/// * **Timing:** the number of random words a release draws is independent of its
///   noise, except on a fallback event of probability `< 2⁻⁴¹` per coordinate (see
///   [`crate::sampling::DiscreteGaussianSampler`]).
///
/// ```
/// use dpmech::Gaussian;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mechanism = Gaussian::analytic(1.0, 1.0, 1e-5)?; // Δ₂ = 1, ε = 1, δ = 1e-5
/// assert!((mechanism.sigma() - 3.73).abs() < 0.01);
/// let noisy = mechanism.release(42.0, &mut ChaCha20Rng::seed_from_u64(1))?;
/// assert_eq!(noisy % mechanism.granularity(), 0.0); // on the public grid
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Gaussian {
    sensitivity: f64,
    calibration: Calibration,
    grid: Grid,
    /// `σ/Δᵤ` for one value; fixed by the calibration.
    scalar_ratio: f64,
    /// `σ/Δᵤ` for vectors (`n ≥ 2`), computed on first use: its calibration (the
    /// CKS20 zCDP conversion, a few microseconds) is only needed by `release_slice`.
    vector_ratio: std::sync::OnceLock<f64>,
    scalar_noise: DiscreteGaussianSampler,
}

/// Two Gaussian mechanisms are equal when their parameters and noise are; whether the
/// vector calibration was computed yet does not matter.
impl PartialEq for Gaussian {
    fn eq(&self, other: &Self) -> bool {
        self.sensitivity == other.sensitivity
            && self.calibration == other.calibration
            && self.grid == other.grid
            && self.scalar_ratio == other.scalar_ratio
            && self.scalar_noise == other.scalar_noise
    }
}

impl Gaussian {
    /// The analytic Gaussian mechanism of Balle & Wang (2018): (ε, δ)-DP for any
    /// `ε > 0` and `δ ∈ [`[`MIN_DELTA`]`, 1)`, for a query of L2 sensitivity
    /// `l2_sensitivity`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`], [`Error::InvalidDelta`]
    /// (δ outside (0, 1)), [`Error::InvalidParameter`] (`delta` below [`MIN_DELTA`]) and
    /// [`Error::ScaleOutOfRange`] when σ falls outside the supported range.
    pub fn analytic(l2_sensitivity: f64, epsilon: f64, delta: f64) -> Result<Self, Error> {
        let sensitivity = check_sensitivity(l2_sensitivity)?;
        let epsilon = check_epsilon(epsilon)?;
        let delta = check_min_delta(delta)?;
        let ratio = analytic_ratio(epsilon, delta - DISCRETE_SLACK)?;
        Self::build(sensitivity, Calibration::Analytic { epsilon, delta }, ratio)
    }

    /// The classical Gaussian mechanism, `σ = Δ₂·√(2 ln(1.25/δ))/ε`: (ε, δ)-DP, only
    /// for `0 < ε < 1` ([`Error::InvalidParameter`] otherwise).
    ///
    /// # Errors
    ///
    /// As [`analytic`](Self::analytic), plus [`Error::InvalidParameter`] (`epsilon`) for
    /// `ε ≥ 1`.
    pub fn classical(l2_sensitivity: f64, epsilon: f64, delta: f64) -> Result<Self, Error> {
        let sensitivity = check_sensitivity(l2_sensitivity)?;
        let epsilon = check_epsilon(epsilon)?;
        if epsilon >= 1.0 {
            return Err(Error::InvalidParameter {
                name: "epsilon",
                value: epsilon,
                reason: "the classical Gaussian calibration holds only for 0 < epsilon < 1; use Gaussian::analytic",
            });
        }
        let delta = check_min_delta(delta)?;
        let formula = classical_ratio(epsilon, delta);
        let ratio = formula.max(analytic_ratio(epsilon, delta - DISCRETE_SLACK)?);
        Self::build(sensitivity, Calibration::Classical { epsilon, delta }, ratio)
    }

    /// The Gaussian mechanism with `σ = Δ₂/√(2ρ)`: ρ-zCDP (Bun & Steinke 2016).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSensitivity`], [`Error::InvalidRho`], and [`Error::ScaleOutOfRange`]
    /// when σ falls outside the supported range.
    pub fn zcdp(l2_sensitivity: f64, rho: f64) -> Result<Self, Error> {
        let sensitivity = check_sensitivity(l2_sensitivity)?;
        let rho = check_rho(rho)?;
        Self::build(sensitivity, Calibration::Zcdp { rho }, zcdp_ratio(rho))
    }

    /// The mechanism for `σ/Δ = scalar_ratio` (the scalar calibration, computed once by
    /// the caller).
    fn build(sensitivity: f64, calibration: Calibration, scalar_ratio: f64) -> Result<Self, Error> {
        let sigma_estimate = round::mul_up(sensitivity, scalar_ratio);
        if !(MIN_SIGMA..=MAX_SIGMA).contains(&sigma_estimate) {
            return Err(Error::ScaleOutOfRange {
                scale: sigma_estimate,
                min: MIN_SIGMA,
                max: MAX_SIGMA,
            });
        }
        let grid = Grid::new(floor_log2(sigma_estimate) - SIGMA_UNITS_BITS);
        let vector_ratio = std::sync::OnceLock::new();
        if let Calibration::Zcdp { .. } = calibration {
            let _ = vector_ratio.set(scalar_ratio);
        }
        let scalar_noise = unit_noise(sensitivity, &grid, 1, scalar_ratio)?;
        Ok(Self {
            sensitivity,
            calibration,
            grid,
            scalar_ratio,
            vector_ratio,
            scalar_noise,
        })
    }

    /// `σ/Δᵤ` for vectors: the CKS20 conversion of ρ-zCDP to (ε, δ) (of the classical
    /// formula, if larger), computed once.
    fn vector_ratio(&self) -> Result<f64, Error> {
        if let Some(&r) = self.vector_ratio.get() {
            return Ok(r);
        }
        let ratio = match self.calibration {
            Calibration::Zcdp { rho } => zcdp_ratio(rho),
            Calibration::Analytic { epsilon, delta } => conversion_ratio(epsilon, delta)?,
            Calibration::Classical { epsilon, delta } => {
                classical_ratio(epsilon, delta).max(conversion_ratio(epsilon, delta)?)
            }
        };
        Ok(*self.vector_ratio.get_or_init(|| ratio))
    }

    /// The discrete noise for a vector of `n` coordinates.
    fn noise_for(&self, n: usize) -> Result<DiscreteGaussianSampler, Error> {
        let ratio = if n <= 1 {
            self.scalar_ratio
        } else {
            self.vector_ratio()?
        };
        unit_noise(self.sensitivity, &self.grid, n, ratio)
    }

    /// `f(x) + noise` for one real value, an exact multiple of
    /// [`granularity`](Self::granularity). Non-finite values are rejected before any
    /// randomness is drawn.
    ///
    /// # Errors
    ///
    /// [`Error::NonFiniteValue`] for a NaN or infinite `value`, before any randomness is drawn.
    #[inline]
    pub fn release<R: CryptoRng + ?Sized>(&self, value: f64, rng: &mut R) -> Result<f64, Error> {
        check_finite(0, value)?;
        let mut bits = BitSource::new(rng);
        Ok(self.release_unit(value, &self.scalar_noise, &mut bits))
    }

    /// Adds independent noise to every coordinate of a vector-valued query whose
    /// **whole vector** has L2 sensitivity `Δ₂`. The noise accounts for the rounding of
    /// all `n` coordinates (see [`sigma_for`](Self::sigma_for)). Refused, before any
    /// randomness is drawn, with [`Error::NonFiniteValue`] for a non-finite coordinate and
    /// with [`Error::ScaleOutOfRange`] when the vector calibration (computed on first use)
    /// falls outside the sampler's range on this mechanism's grid — which depends only on
    /// the parameters and `n`, e.g. for an absurd ε such as `f64::MAX`.
    ///
    /// # Errors
    ///
    /// [`Error::NonFiniteValue`] and [`Error::ScaleOutOfRange`], as described above.
    pub fn release_slice<R: CryptoRng + ?Sized>(
        &self,
        values: &[f64],
        rng: &mut R,
    ) -> Result<Vec<f64>, Error> {
        check_all_finite(values)?;
        // No clone of the scalar sampler (from σ = 4096 units on it owns a boxed state).
        let vector;
        let noise = if values.len() <= 1 {
            &self.scalar_noise
        } else {
            vector = self.noise_for(values.len())?;
            &vector
        };
        let mut bits = BitSource::new(rng);
        Ok(values
            .iter()
            .map(|&v| self.release_unit(v, noise, &mut bits))
            .collect())
    }

    #[inline]
    fn release_unit<R: CryptoRng + ?Sized>(
        &self,
        value: f64,
        noise: &DiscreteGaussianSampler,
        bits: &mut BitSource<'_, R>,
    ) -> f64 {
        self.grid.add_noise(value, noise.sample_bits(bits))
    }

    /// The standard deviation parameter σ of the noise of one release, `s·g` (at least
    /// the σ of the chosen calibration).
    pub fn sigma(&self) -> f64 {
        self.scalar_noise.sigma() * self.grid.granularity()
    }

    /// σ of the noise used by [`release_slice`](Self::release_slice) for `len` values.
    ///
    /// # Errors
    ///
    /// [`Error::ScaleOutOfRange`] when the calibration for `len` coordinates is out of the
    /// sampler's range.
    pub fn sigma_for(&self, len: usize) -> Result<f64, Error> {
        Ok(self.noise_for(len)?.sigma() * self.grid.granularity())
    }

    /// The grid `g = 2ᵏ`: every output is an exact multiple of it.
    pub fn granularity(&self) -> f64 {
        self.grid.granularity()
    }

    /// The L2 sensitivity Δ₂.
    pub fn l2_sensitivity(&self) -> f64 {
        self.sensitivity
    }

    /// `Approximate { epsilon, delta }` for the analytic and classical calibrations,
    /// `Zcdp { rho }` for the zCDP one (see the type's documentation for why these
    /// hold with discrete noise).
    pub fn privacy_loss(&self) -> PrivacyLoss {
        match self.calibration {
            Calibration::Analytic { epsilon, delta } | Calibration::Classical { epsilon, delta } => {
                PrivacyLoss::Approximate { epsilon, delta }
            }
            Calibration::Zcdp { rho } => PrivacyLoss::Zcdp { rho },
        }
    }

    /// A half-width `w` with `Pr[|M(x) − f(x)| > w] ≤ β` for one release:
    /// `σ·√(2 ln(2/β)) + g/2` (subgaussian tail of the discrete Gaussian, CKS20, plus
    /// the rounding of the input). `β` must lie in (0, 1); every such β is met with a
    /// finite half-width (`ln(2/β)` is `ln 2 − ln β`: no overflow for a subnormal β),
    /// and a half-width beyond `f64` is refused ([`Error::Unattainable`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`beta`) unless `0 < β < 1`; [`Error::Unattainable`] when
    /// the half-width overflows `f64`.
    pub fn accuracy(&self, beta: f64) -> Result<f64, Error> {
        use crate::mechanisms::accuracy::{finite_half_width, ln_ratio_up};
        let beta = super::check_beta(beta)?;
        let tail = round::sqrt_up(round::mul_up(2.0, ln_ratio_up(2.0, beta)));
        finite_half_width(round::add_up(
            round::mul_up(self.sigma(), tail),
            self.granularity() / 2.0,
        ))
    }
}

/// The discrete noise on `grid` for `n` coordinates of L2 sensitivity `sensitivity`
/// and `σ/Δᵤ = ratio`: `s = ⌈Δᵤ·ratio⌉` units, `Δᵤ = Δ₂/g + √n` (rounded up).
fn unit_noise(sensitivity: f64, grid: &Grid, n: usize, ratio: f64) -> Result<DiscreteGaussianSampler, Error> {
    let units = round::div_up(sensitivity, grid.granularity());
    // √1 = 1 exactly (the scalar release, every one-call function).
    let root_n = if n <= 1 {
        1.0
    } else {
        round::sqrt_up(crate::privacy::round::u64_up(n as u64))
    };
    let unit_sensitivity = round::add_up(units, root_n);
    let sigma_units = round::mul_up(unit_sensitivity, ratio).ceil();
    let max = (1u64 << 62) as f64;
    if !(sigma_units.is_finite() && (1.0..=max).contains(&sigma_units)) {
        return Err(Error::ScaleOutOfRange {
            scale: sigma_units * grid.granularity(),
            min: MIN_SIGMA,
            max: MAX_SIGMA,
        });
    }
    // An integer in [1, 2⁶²], exact.
    DiscreteGaussianSampler::from_integer_sigma(sigma_units as u64)
}

fn check_min_delta(delta: f64) -> Result<f64, Error> {
    let delta = check_delta(delta)?;
    if delta < MIN_DELTA {
        return Err(Error::InvalidParameter {
            name: "delta",
            value: delta,
            reason: "delta below 1e-15 is not supported by the Gaussian mechanism's discrete-noise analysis",
        });
    }
    Ok(delta)
}
