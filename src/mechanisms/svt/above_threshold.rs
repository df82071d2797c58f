//! AboveThreshold: halt at the first query whose noisy value reaches the noisy threshold.

use super::core_state::{Stream, run_bits};
use super::{Answer, Comparator, StreamingMechanism, check_threshold};
use crate::privacy::{PrivacyLoss, check_epsilon, check_sensitivity, round};
use crate::{CryptoRng, Error};

/// AboveThreshold (Dwork & Roth 2014, Algorithm 1): the
/// threshold is perturbed once, `T̂ = T + Lap(2Δ/ε)`, each query gets fresh noise
/// `νᵢ = Lap(4Δ/ε)`, the answer is ⊤ when `fᵢ(D) + νᵢ ≥ T̂` and ⊥ otherwise, and the
/// mechanism **halts** at the first ⊤: every further query returns
/// [`Error::Halted`].
///
/// * **Guarantee:** pure ε-DP for the whole run, however many ⊥ answers it gives
///   (Dwork & Roth 2014, Theorem 3.23; it is pure, not "(ε, δ)" as sometimes restated).
/// * **Neighbouring relation / sensitivity:** every query has sensitivity at most Δ
///   (`|fᵢ(D) − fᵢ(D′)| ≤ Δ`) under the caller's neighbouring relation (add/remove or
///   substitute one record); queries may be chosen adaptively.
/// * **Exactness:** values and threshold on a public `2ᵏ` grid, integer discrete
///   Laplace noise at unit scales `⌈2(Δ/g + 1)/ε⌉` and `⌈4(Δ/g + 1)/ε⌉`, comparisons
///   in `i128` (see [the module](super)).
/// * **Accuracy:** [`above_threshold_alpha`](super::above_threshold_alpha)
///   (Theorem 5.1.4).
/// * Not `Clone` (a copy would answer again from the same noisy threshold); its
///   `Debug` output hides the noisy threshold. Continuing after the first ⊤, or
///   dropping the query noise, is not private and is not possible here.
///
/// ```
/// use dpmech::{AboveThreshold, Answer, Error, StreamingMechanism};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mut rng = ChaCha20Rng::seed_from_u64(7);
/// let mut svt = AboveThreshold::new(100.0, 1.0, 1.0)?; // T = 100, Δ = 1, ε = 1
/// let answers = svt.run(&[3.0, 10.0, 250.0, 4.0], &mut rng)?;
/// assert_eq!(answers.last(), Some(&Answer::Above)); // stops at the first ⊤
/// assert!(matches!(svt.query(0.0, &mut rng), Err(Error::Halted { .. })));
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug)]
pub struct AboveThreshold {
    threshold: f64,
    sensitivity: f64,
    epsilon: f64,
    stream: Stream,
}

impl AboveThreshold {
    stream_accessors!();

    /// AboveThreshold for public threshold `threshold`, per-query sensitivity
    /// `sensitivity` and privacy level `epsilon`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (non-finite threshold),
    /// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`],
    /// [`Error::ScaleOutOfRange`].
    pub fn new(threshold: f64, sensitivity: f64, epsilon: f64) -> Result<Self, Error> {
        let threshold = check_threshold(threshold)?;
        let sensitivity = check_sensitivity(sensitivity)?;
        let epsilon = check_epsilon(epsilon)?;
        let comparator = Comparator::new(
            sensitivity,
            round::div_up(2.0, epsilon),
            round::div_up(4.0, epsilon),
        )?;
        Ok(Self {
            threshold,
            sensitivity,
            epsilon,
            stream: Stream::new(comparator, "AboveThreshold", 1, false),
        })
    }

    /// The public threshold T.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
}

/// ⊤ (and halt) or ⊥ for each query; pure ε-DP for the whole run.
impl StreamingMechanism for AboveThreshold {
    bit_answers!(batch);

    fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }
}

/// Validates a whole batch before any randomness: not halted, every value finite.
pub(super) fn validate_all(stream: &Stream, values: &[f64], threshold: f64) -> Result<(), Error> {
    if stream.is_halted() {
        return Err(stream.halted_error());
    }
    check_threshold(threshold)?;
    for (offset, &value) in values.iter().enumerate() {
        if !value.is_finite() {
            return Err(Error::NonFiniteValue {
                index: stream.answered() + offset,
                value,
            });
        }
    }
    Ok(())
}
