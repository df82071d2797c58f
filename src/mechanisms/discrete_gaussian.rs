//! The discrete Gaussian mechanism on integers: exact discrete Gaussian noise for
//! integer queries, calibrated for ρ-zCDP or, through the tight conversion of
//! Canonne, Kamath & Steinke (2020), for (ε, δ)-DP.

use super::gaussian::conversion_ratio;
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon, check_rho, round};
use crate::sampling::{BitSource, DiscreteGaussianSampler, MAX_VARIANCE_NUM, Rational, saturate_i64};
use crate::{CryptoRng, Error};

/// The discrete Gaussian mechanism on integers: `M(x) = f(x) + Z`,
/// `Pr[Z = z] ∝ exp(−z²/(2σ²))` (Canonne, Kamath & Steinke 2020), for integer queries
/// of integer **L2** sensitivity `Δ₂` (of the whole vector for
/// [`release_slice`](Self::release_slice)), under the neighbouring relation the
/// sensitivity was computed for.
///
/// * [`DiscreteGaussian::zcdp`]: `σ² = Δ₂²/(2ρ)` rounded up to a dyadic rational;
///   **ρ-zCDP** (CKS20 Proposition 5 and additivity of Rényi divergence over
///   coordinates; integer inputs need no rounding charge).
/// * [`DiscreteGaussian::approximate`]: the largest ρ whose tight CKS20 conversion
///   (Corollary 13) gives (ε, δ) is found, then σ as above; **(ε, δ)-DP**. This is a
///   proven bound, slightly more noise than the exact discrete δ(ε) of CKS20 Theorem 7
///   would need.
/// * **Overflow:** `f(x) + Z` saturates at the `i64` range (post-processing).
/// * **Timing:** the number of random words drawn is independent of the noise, except
///   on a fallback event of probability `< 2⁻⁴¹` per coordinate (see
///   [`crate::sampling::DiscreteGaussianSampler`]).
///
/// ```
/// use dpmech::DiscreteGaussian;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mechanism = DiscreteGaussian::zcdp(1, 0.125)?; // σ² = 4 (rounded up by an ulp)
/// assert!((mechanism.sigma() - 2.0).abs() < 1e-12);
/// let noisy_count = mechanism.release(120, &mut ChaCha20Rng::seed_from_u64(1));
/// # let _ = noisy_count;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DiscreteGaussian {
    sensitivity: u64,
    loss: PrivacyLoss,
    noise: DiscreteGaussianSampler,
}

impl DiscreteGaussian {
    /// ρ-zCDP with `σ² = Δ₂²/(2ρ)` (rounded up).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRho`], [`Error::InvalidSensitivity`] for `l2_sensitivity = 0`, and
    /// [`Error::ScaleOutOfRange`] when σ² is outside the sampler's range.
    pub fn zcdp(l2_sensitivity: u64, rho: f64) -> Result<Self, Error> {
        let rho = check_rho(rho)?;
        Self::with_rho(l2_sensitivity, rho, PrivacyLoss::Zcdp { rho })
    }

    /// (ε, δ)-DP, through the tight CKS20 zCDP conversion.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`], [`Error::InvalidDelta`], [`Error::InvalidSensitivity`] for
    /// `l2_sensitivity = 0`, and [`Error::ScaleOutOfRange`] when σ is outside the
    /// supported range.
    pub fn approximate(l2_sensitivity: u64, epsilon: f64, delta: f64) -> Result<Self, Error> {
        let epsilon = check_epsilon(epsilon)?;
        let delta = check_delta(delta)?;
        let ratio = conversion_ratio(epsilon, delta)?;
        // ρ = 1/(2r²), rounded down (less privacy spent means more noise).
        let rho = round::div_down(0.5, round::mul_up(ratio, ratio));
        Self::with_rho(l2_sensitivity, rho, PrivacyLoss::Approximate { epsilon, delta })
    }

    fn with_rho(l2_sensitivity: u64, rho: f64, loss: PrivacyLoss) -> Result<Self, Error> {
        if l2_sensitivity == 0 {
            return Err(Error::InvalidSensitivity { value: 0.0 });
        }
        let delta = crate::privacy::round::u64_up(l2_sensitivity);
        let variance = round::div_up(round::mul_up(delta, delta), round::mul_down(2.0, rho));
        // Below 2⁶² as a dyadic rational rounded up; above, an f64 is an integer and is
        // used exactly (up to the sampler's 2¹²⁴, σ < 2⁶²).
        let noise = if variance < 2f64.powi(62) {
            DiscreteGaussianSampler::new(Rational::from_f64_up(variance)?)
        } else if variance <= MAX_VARIANCE_NUM as f64 {
            DiscreteGaussianSampler::from_ratio(variance as u128, 1)?
        } else {
            return Err(Error::ScaleOutOfRange {
                scale: variance,
                min: f64::MIN_POSITIVE,
                max: MAX_VARIANCE_NUM as f64,
            });
        };
        Ok(Self {
            sensitivity: l2_sensitivity,
            loss,
            noise,
        })
    }

    /// `f(x) + Z`, saturating at the `i64` range.
    #[inline]
    pub fn release<R: CryptoRng + ?Sized>(&self, value: i64, rng: &mut R) -> i64 {
        let mut bits = BitSource::new(rng);
        saturate_i64(i128::from(value) + self.noise.sample_bits(&mut bits))
    }

    /// Independent noise on every coordinate of a vector whose whole vector has L2
    /// sensitivity `Δ₂`.
    pub fn release_slice<R: CryptoRng + ?Sized>(&self, values: &[i64], rng: &mut R) -> Vec<i64> {
        let mut bits = BitSource::new(rng);
        values
            .iter()
            .map(|&v| saturate_i64(i128::from(v) + self.noise.sample_bits(&mut bits)))
            .collect()
    }

    /// σ (the square root of the exact rational variance parameter).
    pub fn sigma(&self) -> f64 {
        self.noise.sigma()
    }

    /// The exact variance parameter `σ² = num/den` used by the sampler.
    pub fn sigma_squared(&self) -> (u128, u64) {
        self.noise.sigma_squared()
    }

    /// The L2 sensitivity Δ₂.
    pub fn l2_sensitivity(&self) -> u64 {
        self.sensitivity
    }

    /// `Zcdp { rho }` or `Approximate { epsilon, delta }`, as constructed.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        self.loss
    }
}
