//! The private mean as a [`Mechanism`], by the noisy-average algorithms (after Li, Lyu, Su
//! & Yang 2016, *Differential Privacy: From Theory to Practice*) numbered 1, 3 and 4 here.

use crate::mechanisms::Mechanism;
use crate::privacy::{PrivacyLoss, check_epsilon, round};
use crate::sampling::grid::Grid;
use crate::sampling::{BitSource, Rational, bernoulli_exp_neg_ratio, uniform_below_bits};
use crate::sensitivity::Neighbouring;
use crate::statistics::records::{Bounds, exact_sum, exact_sum_of};
use crate::{CryptoRng, Error, Geometric, Laplace};

/// How a private mean is computed: the noisy-average algorithms discussed by Li, Lyu,
/// Su & Yang (2016), numbered 1–4 in this crate.
///
/// "Algorithm 2" (re-sampling the noise until the mean falls in range) is **not**
/// private and is not offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MeanMethod {
    /// Algorithm 1, pure ε-DP under **add/remove**: `S̃ = Σ + Lap(2Δ_S/ε)`,
    /// `C̃ = count + geometric noise at ε/2`; `S̃/C̃` (the midpoint when `C̃ ≤ 1`).
    /// `Δ_S = max(|lower|, |upper|)` — `upper − lower`, sometimes given, is only valid when
    /// `0 ∈ [lower, upper]`.
    NoisySumOverNoisyCount,
    /// Algorithm 3, pure ε-DP under **substitute-one** neighbours only (the count `n` is
    /// public): `clamp((Σ + Lap((upper − lower)/ε))/n)`, and for `n = 0` the fallback Ψ:
    /// `lower` or `upper` with probability `e^(−ε/2)/2` each, otherwise uniform on the
    /// grid of `[lower, upper]`. Under add/remove it is **not** ε-DP: dividing by the
    /// private count scales the density by `(C+1)/C`, e.g. a ratio of 2 between
    /// `{x}` and `{x, x}` near `x` (a claim of add/remove privacy for it misses this; a test in
    /// `tests/statistics.rs` certifies the violation).
    ClampedSumOverPublicCount,
    /// Algorithm 4, pure ε-DP under **add/remove**: the sum of `vᵢ − m` (`m` the
    /// midpoint, sensitivity `(upper − lower)/2`) with noise `Lap((upper − lower)/ε)`,
    /// and the count with noise at ε/2 (`Lap(2/ε)`; a printed `Lap(ε/2)` would be a typo);
    /// `S̃/C̃ + m` (or `m` when `C̃ ≤ 1`).
    Normalised,
}

/// A private mean of records read by the public [`Bounds`] (NaN imputed, clamped,
/// rounded to the grid, summed exactly: see [`records`](super::records)), by one of the
/// noisy-average algorithms ([`MeanMethod`]); the result is clamped to `[lower, upper]`
/// (post-processing).
///
/// * **Guarantee:** pure ε-DP under [`relation`](Self::relation): add/remove for
///   Algorithms 1 and 4, substitution (public count) for Algorithm 3.
/// * **Never fails on records.** Empty inputs are fine: the noisy count is then usually
///   ≤ 1 and the midpoint is returned (Algorithm 3 uses its fallback Ψ).
///
/// ```
/// use dpmech::statistics::{Mean, MeanMethod};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mean_height = Mean::new((140.0, 210.0), MeanMethod::Normalised, 1.0)?;
/// let noisy = mean_height.release(&[172.0, 165.5, 181.0], &mut ChaCha20Rng::seed_from_u64(1)); // never refused
/// assert!((140.0..=210.0).contains(&noisy));
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Mean {
    bounds: Bounds,
    method: MeanMethod,
    epsilon: f64,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// Algorithms 1 and 4: noisy sum over noisy count, at ε/2 each.
    Ratio { sum: Laplace, count: Geometric },
    /// Algorithm 3: noisy sum over the public count, Ψ for an empty input.
    PublicCount { sum: Laplace, psi_exponent: Rational },
}

impl Mean {
    /// The mean over `bounds` by `method` at privacy level `epsilon`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] for invalid bounds (not finite, `lower ≥ upper`, or a NaN
    /// imputation value outside them);
    /// [`Error::InvalidEpsilon`]; [`Error::ScaleOutOfRange`] when a noise scale is out of
    /// range.
    pub fn new(bounds: impl Into<Bounds>, method: MeanMethod, epsilon: f64) -> Result<Self, Error> {
        let bounds = bounds.into();
        bounds.validate()?;
        let epsilon = check_epsilon(epsilon)?;
        let half = round::mul_down(epsilon, 0.5);
        let kind = match method {
            MeanMethod::ClampedSumOverPublicCount => Kind::PublicCount {
                sum: Laplace::for_exact_sums(bounds.sum_sensitivity(Neighbouring::Substitute)?, epsilon)?,
                psi_exponent: Rational::from_f64_up(half)?,
            },
            MeanMethod::Normalised => Kind::Ratio {
                sum: Laplace::for_exact_sums(half_range(&bounds), half)?,
                count: Geometric::new(1, half)?,
            },
            MeanMethod::NoisySumOverNoisyCount => Kind::Ratio {
                sum: Laplace::for_exact_sums(bounds.sum_sensitivity(Neighbouring::AddRemove)?, half)?,
                count: Geometric::new(1, half)?,
            },
        };
        Ok(Self {
            bounds,
            method,
            epsilon,
            kind,
        })
    }

    /// The private mean of `values` (never refused).
    pub fn release<R: CryptoRng + ?Sized>(&self, values: &[f64], rng: &mut R) -> f64 {
        let bounds = &self.bounds;
        let (lower, upper) = (bounds.lower(), bounds.upper());
        let midpoint = bounds.midpoint();
        let estimate = match &self.kind {
            Kind::PublicCount { sum, psi_exponent } => {
                let grid = sum.grid();
                if values.is_empty() {
                    let first = grid.to_units(lower.max(-grid.clamp_bound()));
                    let last = grid.to_units(upper.min(grid.clamp_bound()));
                    psi(&grid, (first, last), *psi_exponent, rng)
                } else {
                    sum.release_units(exact_sum(values, bounds, &grid), rng) / values.len() as f64
                }
            }
            Kind::Ratio { sum, count } => {
                let grid = sum.grid();
                let normalised = self.method == MeanMethod::Normalised;
                let total = if normalised {
                    // Σ (vᵢ − m), each shifted record clamped to [−h, h] so its
                    // contribution stays within the sensitivity whatever the rounding
                    // of the subtraction.
                    let h = half_range(bounds);
                    exact_sum_of(
                        values.iter().map(|&v| (bounds.read(v) - midpoint).clamp(-h, h)),
                        &grid,
                    )
                } else {
                    exact_sum(values, bounds, &grid)
                };
                let noisy_sum = sum.release_units(total, rng);
                let n = i64::try_from(values.len()).unwrap_or(i64::MAX);
                let noisy_count = count.release(n, rng);
                if noisy_count <= 1 {
                    midpoint
                } else if normalised {
                    noisy_sum / noisy_count as f64 + midpoint
                } else {
                    noisy_sum / noisy_count as f64
                }
            }
        };
        estimate.clamp(lower, upper)
    }

    /// The neighbouring relation the guarantee holds for.
    pub fn relation(&self) -> Neighbouring {
        match self.kind {
            Kind::PublicCount { .. } => Neighbouring::Substitute,
            Kind::Ratio { .. } => Neighbouring::AddRemove,
        }
    }

    /// `PrivacyLoss::Pure { epsilon }`.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }
}

impl<'a> Mechanism<&'a [f64]> for Mean {
    type Output = f64;
    fn release<R: CryptoRng + ?Sized>(&self, values: &'a [f64], rng: &mut R) -> Result<f64, Error> {
        Ok(Mean::release(self, values, rng))
    }
    fn privacy_loss(&self) -> PrivacyLoss {
        Mean::privacy_loss(self)
    }
}

/// `h = (upper − lower)/2`, rounded up: the sensitivity of the normalised sum.
fn half_range(bounds: &Bounds) -> f64 {
    round::mul_up(round::sub_up(bounds.upper(), bounds.lower()), 0.5)
}

/// Algorithm 3's fallback Ψ for an empty selection: an end point with probability
/// `e^(−γ)/2` each, otherwise a uniform grid point between them (exact sampling throughout).
fn psi<R: CryptoRng + ?Sized>(grid: &Grid, (first, last): (i128, i128), gamma: Rational, rng: &mut R) -> f64 {
    let mut bits = BitSource::new(rng);
    if bernoulli_exp_neg_ratio(gamma.num() as u128, gamma.den() as u128, &mut bits) {
        let units = if bits.bit() { last } else { first };
        return grid.from_units(units);
    }
    let span = u64::try_from(last - first).unwrap_or(u64::MAX - 1) + 1;
    grid.from_units(first + uniform_below_bits(&mut bits, span) as i128)
}
