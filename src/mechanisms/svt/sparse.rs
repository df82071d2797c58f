//! Sparse: AboveThreshold restarted with a fresh threshold after each ⊤, up to c times.

use super::above_threshold::validate_all;
use super::core_state::{Stream, run_bits};

use super::{Answer, Comparator, StreamingMechanism, approximate_sigma, check_sparse, pure_sigma};
use crate::privacy::{PrivacyLoss, check_delta, round};
use crate::{CryptoRng, Error};

/// Sparse (Dwork & Roth 2014, Algorithm 2): answers ⊥/⊤ and
/// halts after `c` ⊤ answers. With `σ = 2cΔ/ε` (δ = 0) or
/// `σ = √(32c ln(1/δ))·Δ/ε` (δ > 0), the threshold is `T̂ = T + Lap(σ)`, **re-drawn
/// after every ⊤**, and each query gets fresh noise `νᵢ = Lap(2σ)`.
///
/// * **Guarantee:** it is `c` successive runs of [`AboveThreshold`](super::AboveThreshold)
///   at ε′ = ε/c (δ = 0: pure ε-DP by basic composition) or at
///   ε′ = ε/√(8c ln(1/δ)) (δ > 0: (ε, δ)-DP by advanced composition, which needs
///   `√(2c ln(1/δ))ε′ + cε′(e^ε′ − 1) ≤ ε`; [`approximate`](Self::approximate) checks
///   this and rejects ε where it fails).
/// * **Neighbouring relation / sensitivity:** each query has sensitivity ≤ Δ under
///   the caller's neighbouring relation (add/remove or substitute).
/// * **Exactness:** as [`AboveThreshold`](super::AboveThreshold): grid units, unit
///   sensitivity `Δ/g + 1`, discrete Laplace noise, `i128` comparisons.
/// * **Accuracy:** [`sparse_alpha`](super::sparse_alpha) (Theorem 5.1.6).
/// * Not `Clone`. Answering after `c` ⊤, or keeping the threshold across ⊤ answers
///   with this calibration, would not be private and is not possible.
///
/// ```
/// use dpmech::{Answer, Sparse, StreamingMechanism};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mut rng = ChaCha20Rng::seed_from_u64(3);
/// let mut svt = Sparse::new(50.0, 1.0, 1.0, 2)?; // T = 50, Δ = 1, ε = 1, c = 2
/// let answers = svt.run(&[0.0, 900.0, 1.0, 1000.0, 2.0], &mut rng)?;
/// assert_eq!(answers.iter().filter(|a| a.is_above()).count(), 2);
/// assert!(svt.is_halted());
/// # let _ = Answer::Below;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug)]
pub struct Sparse {
    pub(super) threshold: f64,
    pub(super) sensitivity: f64,
    pub(super) loss: PrivacyLoss,
    pub(super) stream: Stream,
}

impl Sparse {
    stream_accessors!();

    /// Pure ε-DP Sparse with cutoff `cutoff` (δ = 0, `σ = 2cΔ/ε`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (non-finite threshold, cutoff outside `1..=2⁴⁰`),
    /// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`],
    /// [`Error::ScaleOutOfRange`].
    pub fn new(threshold: f64, sensitivity: f64, epsilon: f64, cutoff: usize) -> Result<Self, Error> {
        let (threshold, sensitivity, cutoff, epsilon) =
            check_sparse(threshold, sensitivity, cutoff, epsilon)?;
        let sigma = pure_sigma(epsilon, cutoff);
        Self::build(
            threshold,
            sensitivity,
            cutoff,
            sigma,
            PrivacyLoss::Pure { epsilon },
            "Sparse",
        )
    }

    /// (ε, δ)-DP Sparse with cutoff `cutoff` (`σ = √(32c ln(1/δ))·Δ/ε`).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), plus [`Error::InvalidDelta`] and
    /// [`Error::InvalidParameter`] when ε is so large that the advanced-composition
    /// bound exceeds ε (use [`new`](Self::new) there).
    pub fn approximate(
        threshold: f64,
        sensitivity: f64,
        epsilon: f64,
        delta: f64,
        cutoff: usize,
    ) -> Result<Self, Error> {
        let (threshold, sensitivity, cutoff, epsilon) =
            check_sparse(threshold, sensitivity, cutoff, epsilon)?;
        let delta = check_delta(delta)?;
        let sigma = approximate_sigma(epsilon, delta, cutoff)?;
        Self::build(
            threshold,
            sensitivity,
            cutoff,
            sigma,
            PrivacyLoss::Approximate { epsilon, delta },
            "Sparse",
        )
    }

    /// The ⊤/⊥ stream of Sparse (and of NumericSparse, which holds one named
    /// `mechanism` in its halt errors): threshold noise `σΔ`, query noise `2σΔ`, the
    /// threshold re-drawn after each ⊤; the whole run's guarantee is `loss`.
    pub(super) fn build(
        threshold: f64,
        sensitivity: f64,
        cutoff: usize,
        sigma: f64,
        loss: PrivacyLoss,
        mechanism: &'static str,
    ) -> Result<Self, Error> {
        let comparator = Comparator::new(sensitivity, sigma, round::mul_up(2.0, sigma))?;
        Ok(Self {
            threshold,
            sensitivity,
            loss,
            stream: Stream::new(comparator, mechanism, cutoff, true),
        })
    }
}

/// ⊤ or ⊥ for each query, up to `c` ⊤; the guarantee of the constructor for the run.
impl StreamingMechanism for Sparse {
    bit_answers!(batch);

    fn privacy_loss(&self) -> PrivacyLoss {
        self.loss
    }
}
