//! Report-noisy-max with Laplace noise and with exponential noise, exactly on a grid.

use super::Monotonicity;
use super::exponential::{ScoreScale, permute_and_flip};
use crate::privacy::{PrivacyLoss, round};
use crate::sampling::{BatchSink, BitSource, DiscreteLaplace, Rational, uniform_below_word, with_scratch};
use crate::{CryptoRng, Error};

#[derive(Debug, Clone, PartialEq)]
enum Noise {
    /// Discrete Laplace of the given scale (in grid units).
    Laplace(DiscreteLaplace),
    /// Exponential noise, sampled through permute-and-flip.
    Exponential,
}

/// Report-noisy-max (Dwork & Roth 2014, §3.3): add independent noise
/// to every candidate's score and report the **index** of the largest noisy score (the
/// noisy scores themselves are never released: releasing them is not private at this
/// noise level).
///
/// * [`ReportNoisyMax::laplace`] — Laplace noise of scale `2Δu/ε`, for arbitrary scores
///   of L∞ sensitivity `Δu` (either neighbouring relation). **Pure ε-DP.** Twice the
///   textbook counting-query noise, on purpose: with general scores the winner's score
///   can rise by Δu while a rival's falls by Δu, and the proof needs both.
/// * [`ReportNoisyMax::laplace_with_monotonicity`] with [`Monotonicity::Monotone`] —
///   Laplace noise of scale `Δu/ε`, for monotone scores (between any neighbours all
///   scores move in the same direction, e.g. counting queries under add/remove one
///   record: Dwork & Roth Claim 3.9). **Pure ε-DP.**
/// * [`ReportNoisyMax::exponential`] — exponential noise of scale `2Δu/ε`: its output has
///   exactly the distribution of permute-and-flip (Ding, Gong, Kifer et al. 2021,
///   "The permute-and-flip mechanism is identical to report-noisy-max with exponential
///   noise"), and is sampled that way. **Pure ε-DP.**
///
/// **Exactness (Laplace).** Scores are clamped and rounded to a public grid
/// `g ≤ Δu·2⁻²⁰` (`Δᵤ = ⌊Δu/g⌋ + 1` units, the rounding charged), the noise is the exact
/// discrete Laplace of scale `τ = λΔᵤ/ε` units (rounded up), and ties among the largest
/// integer noisy scores are broken uniformly at random. That is the same as taking the
/// argmax of `ũᵣ + Zᵣ + Uᵣ` with `Uᵣ` i.i.d. uniform on `[0, 1)`, and the noise
/// `W = Z + U` satisfies `Pr[W ≥ a − k] ≤ e^(k/τ)·Pr[W ≥ a]` for every real `a` and
/// integer `k ≥ 0` (the discrete Laplace pmf ratio under an integer shift `k` is at
/// most `e^(k/τ)`). That inequality, applied to the winner's threshold (which moves by
/// at most `Δᵤ`, or `2Δᵤ` for arbitrary scores, between neighbours), is all the
/// Dwork–Roth proof uses.
///
/// **Timing:** with Laplace noise, every candidate's noise draws a number of words
/// independent of its value (see [`DiscreteLaplace`]), except on a fallback event of
/// probability `< 2⁻⁴⁰·²` per candidate, and the tie among the largest noisy scores is
/// broken with one more word whether or not there is a tie (a second only with
/// probability `< n·2⁻⁶⁴`), so the words drawn do not depend on the scores. The
/// exponential-noise variant is permute-and-flip, which flips every candidate's coin
/// (see [`PermuteAndFlip`](super::PermuteAndFlip)).
///
/// ```
/// use dpmech::{Monotonicity, ReportNoisyMax};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let counts = [120.0, 95.0, 130.0]; // counting queries: monotone, Δ = 1
/// let mechanism = ReportNoisyMax::laplace_with_monotonicity(1.0, 0.5, Monotonicity::Monotone)?;
/// let winner = mechanism.release(&counts, &mut ChaCha20Rng::seed_from_u64(1))?;
/// assert!(winner < 3);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ReportNoisyMax {
    epsilon: f64,
    scale: ScoreScale,
    noise: Noise,
}

impl ReportNoisyMax {
    /// Laplace noise of scale `2Δu/ε`: ε-DP for any scores of L∞ sensitivity `Δu`
    /// (for monotone scores, half of it suffices:
    /// [`laplace_with_monotonicity`](Self::laplace_with_monotonicity)).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`], and
    /// [`Error::ScaleOutOfRange`] when the sensitivity lies outside `[1e-250, 1e250]` or
    /// `ε/Δu` is too small to be represented on the score grid.
    pub fn laplace(sensitivity: f64, epsilon: f64) -> Result<Self, Error> {
        Self::laplace_with_monotonicity(sensitivity, epsilon, Monotonicity::General)
    }

    /// Laplace noise of scale `2Δu/ε` for [`Monotonicity::General`] scores, `Δu/ε` for
    /// [`Monotonicity::Monotone`] ones (e.g. counts under add/remove one record).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`], and
    /// [`Error::ScaleOutOfRange`] when the sensitivity lies outside `[1e-250, 1e250]` or
    /// `ε/Δu` is too small to be represented on the score grid.
    pub fn laplace_with_monotonicity(
        sensitivity: f64,
        epsilon: f64,
        scores: Monotonicity,
    ) -> Result<Self, Error> {
        Self::with_laplace(sensitivity, epsilon, scores.factor())
    }

    /// Exponential noise of scale `2Δu/ε` (sampled as permute-and-flip): ε-DP.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`], and
    /// [`Error::ScaleOutOfRange`] when the sensitivity lies outside `[1e-250, 1e250]` or
    /// `ε/Δu` is too small to be represented on the score grid.
    pub fn exponential(sensitivity: f64, epsilon: f64) -> Result<Self, Error> {
        Ok(Self {
            epsilon,
            scale: ScoreScale::new(sensitivity, epsilon, 2.0)?,
            noise: Noise::Exponential,
        })
    }

    fn with_laplace(sensitivity: f64, epsilon: f64, lambda: f64) -> Result<Self, Error> {
        let scale = ScoreScale::new(sensitivity, epsilon, lambda)?;
        let units = round::mul_up(lambda, scale.unit_sensitivity() as f64);
        let tau = round::div_up(units, epsilon).ceil();
        let noise = DiscreteLaplace::new(Rational::from_f64_up(tau)?);
        Ok(Self {
            epsilon,
            scale,
            noise: Noise::Laplace(noise),
        })
    }

    /// The index of the largest noisy score (ties broken uniformly). Scores must be
    /// finite and non-empty (checked before any randomness).
    ///
    /// # Errors
    ///
    /// [`Error::EmptyInput`] for no scores and [`Error::NonFiniteValue`] for a NaN or
    /// infinite score, before any randomness is drawn.
    pub fn release<R: CryptoRng + ?Sized>(&self, scores: &[f64], rng: &mut R) -> Result<usize, Error> {
        let grid = self.scale.grid();
        let to_units = move |i: usize| grid.to_units(scores[i]);
        Ok(match &self.noise {
            Noise::Exponential => {
                let best = self.scale.best_units(scores)?;
                permute_and_flip(
                    &self.scale,
                    scores.len(),
                    to_units,
                    best,
                    &mut BitSource::new(rng),
                )
            }
            Noise::Laplace(noise) => {
                // The Laplace path needs no maximum before the noise: validation alone.
                ScoreScale::validate(scores)?;
                with_scratch(scores.len(), |noisy: &mut [i128]| {
                    laplace_noisy_max(noise, to_units, noisy, &mut BitSource::new(rng))
                })
            }
        })
    }

    /// The Laplace noise scale in the units of the scores (`None` for exponential
    /// noise): at least `Δu/ε` (monotone) or `2Δu/ε`.
    pub fn noise_scale(&self) -> Option<f64> {
        match &self.noise {
            Noise::Laplace(noise) => Some(noise.scale().to_f64() * self.scale.grid().granularity()),
            Noise::Exponential => None,
        }
    }

    /// `PrivacyLoss::Pure { epsilon }`.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }
}

/// Noise samples by index, as the discrete Laplace batch path hands them over.
struct Samples<'a>(&'a mut [i128]);

impl BatchSink for Samples<'_> {
    #[inline(always)]
    fn wide(&mut self, i: usize, z: i128) {
        self.0[i] = z;
    }
}

/// The index of the largest `unit_of(r) + Zᵣ` over the `noisy.len()` candidates, ties
/// broken uniformly: the noise of every candidate from the discrete Laplace batch path
/// (words in distribution as for one sample each, independent of the values), then one
/// word choosing among the `t ≥ 1` tied maxima ([`uniform_below_word`], drawn even when
/// `t = 1`, so a tie costs no extra word).
#[inline(always)]
fn laplace_noisy_max<R: CryptoRng + ?Sized>(
    noise: &DiscreteLaplace,
    unit_of: impl Fn(usize) -> i128,
    noisy: &mut [i128],
    bits: &mut BitSource<'_, R>,
) -> usize {
    noise.sample_batch(noisy.len(), &mut Samples(noisy), bits);
    let (mut top, mut winner, mut ties) = (i128::MIN, 0usize, 0u64);
    for (r, value) in noisy.iter_mut().enumerate() {
        *value = unit_of(r).saturating_add(*value);
        if *value > top {
            (top, winner, ties) = (*value, r, 1);
        } else if *value == top {
            ties += 1;
        }
    }
    let pick = uniform_below_word(bits, ties) as usize;
    if pick == 0 {
        return winner;
    }
    // The pick-th tied maximum after the first.
    noisy
        .iter()
        .enumerate()
        .skip(winner + 1)
        .filter(|&(_, &value)| value == top)
        .nth(pick - 1)
        .map_or(winner, |(r, _)| r)
}
