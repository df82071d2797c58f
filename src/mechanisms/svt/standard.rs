//! Standard SVT (Lyu, Su & Li 2017, Algorithm 7): one threshold noise, per-query
//! thresholds, cutoff c, optional numeric answers with a separate budget ε₃.

use super::above_threshold::validate_all;
use super::core_state::Stream;
use super::{Answer, Comparator, NumericAnswer, StreamingMechanism, check_cutoff, check_threshold, count_up};
use crate::Laplace;
use crate::mechanisms::Monotonicity;
use crate::privacy::{PrivacyLoss, check_epsilon, check_sensitivity, round};
use crate::{CryptoRng, Error};

/// Standard SVT (Lyu, Su & Li 2017, Algorithm 7):
/// `σ = Lap(Δ/ε₁)` drawn **once**; each query gets `νᵢ = Lap(2cΔ/ε₂)`
/// (`Lap(cΔ/ε₂)` for [`Monotonicity::Monotone`]); the answer is ⊤ when
/// `fᵢ(D) + νᵢ ≥ Tᵢ + σ` for a public per-query threshold `Tᵢ`
/// ([`query_with_threshold`](Self::query_with_threshold)) or the default `T`; it
/// halts after `c` ⊤. [`with_numeric_answers`](Self::with_numeric_answers) turns it
/// into a [`NumericStandardSvt`], which releases `fᵢ(D) + Lap(cΔ/ε₃)` with fresh noise
/// for each ⊤.
///
/// * **Guarantee:** pure (ε₁ + ε₂)-DP for the whole run (ε₁ + ε₂ + ε₃ with numeric
///   answers; Lyu, Su & Li 2017, the privacy of Algorithm 7 and of its monotone case).
/// * **Budget split:** [`with_optimal_split`](Self::with_optimal_split) divides a total
///   ε as ε₁ : ε₂ = 1 : (2c)^(2/3) (1 : c^(2/3) for monotone queries), which minimises
///   the variance of the comparison `Lap(Δ/ε₁) − Lap(2cΔ/ε₂)`; ε₁ and ε₂ are rounded
///   down so that ε₁ + ε₂ ≤ ε.
/// * **Neighbouring relation / sensitivity:** each query has sensitivity ≤ Δ under
///   the caller's neighbouring relation (add/remove or substitute).
/// * **Exactness:** grid units with unit sensitivity `Δ/g + 1`, discrete Laplace
///   noise, `i128` comparisons; numeric answers from an exact [`Laplace`].
/// * Not `Clone`. Variants that report the noisy value `fᵢ + νᵢ`, drop the query
///   noise or do not halt are not private and are not offered.
///
/// ```
/// use dpmech::{Monotonicity, StandardSvt};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mut rng = ChaCha20Rng::seed_from_u64(5);
/// let mut svt = StandardSvt::with_optimal_split(0.0, 1.0, 1.0, 3, Monotonicity::General)?;
/// assert!(svt.epsilon1() + svt.epsilon2() <= 1.0);
/// let a = svt.query_with_threshold(10_000.0, 20.0, &mut rng)?; // per-query Tᵢ = 20
/// assert!(a.is_above());
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug)]
pub struct StandardSvt {
    threshold: f64,
    sensitivity: f64,
    epsilon1: f64,
    epsilon2: f64,
    monotonicity: Monotonicity,
    stream: Stream,
}

impl StandardSvt {
    stream_accessors!();

    /// Standard SVT with default threshold `threshold`, per-query sensitivity
    /// `sensitivity`, threshold budget `epsilon1`, query budget `epsilon2`, cutoff
    /// `cutoff` and the queries' monotonicity.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`], [`Error::InvalidSensitivity`],
    /// [`Error::InvalidEpsilon`], [`Error::ScaleOutOfRange`].
    pub fn new(
        threshold: f64,
        sensitivity: f64,
        epsilon1: f64,
        epsilon2: f64,
        cutoff: usize,
        queries: Monotonicity,
    ) -> Result<Self, Error> {
        let threshold = check_threshold(threshold)?;
        let sensitivity = check_sensitivity(sensitivity)?;
        let cutoff = check_cutoff(cutoff)?;
        let epsilon1 = check_epsilon(epsilon1)?;
        let epsilon2 = check_epsilon(epsilon2)?;
        let c = count_up(cutoff);
        let query_multiplier = match queries {
            Monotonicity::General => round::mul_up(2.0, c),
            Monotonicity::Monotone => c,
        };
        let comparator = Comparator::new(
            sensitivity,
            round::div_up(1.0, epsilon1),
            round::div_up(query_multiplier, epsilon2),
        )?;
        Ok(Self {
            threshold,
            sensitivity,
            epsilon1,
            epsilon2,
            monotonicity: queries,
            stream: Stream::new(comparator, "StandardSvt", cutoff, false),
        })
    }

    /// Standard SVT spending a total `epsilon` on the comparisons, split
    /// ε₁ : ε₂ = 1 : (2c)^(2/3) (general) or 1 : c^(2/3) (monotone), with
    /// ε₁ + ε₂ ≤ ε after rounding.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_optimal_split(
        threshold: f64,
        sensitivity: f64,
        epsilon: f64,
        cutoff: usize,
        queries: Monotonicity,
    ) -> Result<Self, Error> {
        let epsilon = check_epsilon(epsilon)?;
        let cutoff_checked = check_cutoff(cutoff)?;
        let (epsilon1, epsilon2) = optimal_split(epsilon, cutoff_checked, queries);
        Self::new(threshold, sensitivity, epsilon1, epsilon2, cutoff, queries)
    }

    /// Numeric answers: each ⊤ releases `fᵢ(D) + Lap(cΔ/ε₃)` (fresh noise), for an
    /// extra ε₃. Only before the first query (else [`Error::InvalidParameter`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] for `epsilon3`, [`Error::InvalidParameter`] (`epsilon3`) once
    /// a query has been answered, and [`Error::ScaleOutOfRange`] when the numeric noise
    /// scale is out of range.
    pub fn with_numeric_answers(self, epsilon3: f64) -> Result<NumericStandardSvt, Error> {
        let epsilon3 = check_epsilon(epsilon3)?;
        if self.stream.answered() > 0 {
            return Err(Error::InvalidParameter {
                name: "epsilon3",
                value: epsilon3,
                reason: "numeric answers must be configured before the first query",
            });
        }
        let per_value = round::div_down(epsilon3, count_up(self.stream.cutoff()));
        Ok(NumericStandardSvt {
            numeric: Laplace::new(self.sensitivity, per_value)?,
            epsilon3,
            svt: self,
        })
    }

    /// Answers one query against its own public threshold `Tᵢ`: [`Answer::Above`] or
    /// [`Answer::Below`].
    ///
    /// # Errors
    ///
    /// Before any randomness and without changing the state: [`Error::Halted`] after
    /// `c` ⊤, [`Error::NonFiniteValue`] for the value, [`Error::InvalidParameter`]
    /// (`threshold`) for a non-finite threshold.
    pub fn query_with_threshold<R: CryptoRng + ?Sized>(
        &mut self,
        value: f64,
        threshold: f64,
        rng: &mut R,
    ) -> Result<Answer, Error> {
        self.stream.query(value, threshold, rng)
    }

    /// Runs `(value, threshold)` pairs, returning the answers up to the halt. Every pair
    /// is validated first.
    ///
    /// # Errors
    ///
    /// Those of [`query_with_threshold`](Self::query_with_threshold), for every pair before
    /// any randomness is drawn (the index in [`Error::NonFiniteValue`] includes the queries
    /// answered before this call).
    pub fn run_with_thresholds<R: CryptoRng + ?Sized>(
        &mut self,
        pairs: &[(f64, f64)],
        rng: &mut R,
    ) -> Result<Vec<Answer>, Error> {
        run_pairs(self, pairs, |svt, v, t| svt.query_with_threshold(v, t, rng))
    }

    /// Validates `(value, threshold)` pairs as a batch, before any randomness.
    fn check_pairs(&self, pairs: &[(f64, f64)]) -> Result<(), Error> {
        for (offset, &(value, threshold)) in pairs.iter().enumerate() {
            validate_all(&self.stream, &[value], threshold).map_err(|e| match e {
                Error::NonFiniteValue { value, .. } => Error::NonFiniteValue {
                    index: self.stream.answered() + offset,
                    value,
                },
                other => other,
            })?;
        }
        Ok(())
    }

    /// ε₁, the threshold budget.
    pub fn epsilon1(&self) -> f64 {
        self.epsilon1
    }

    /// ε₂, the query budget.
    pub fn epsilon2(&self) -> f64 {
        self.epsilon2
    }

    /// The declared monotonicity of the queries.
    pub fn monotonicity(&self) -> Monotonicity {
        self.monotonicity
    }
}

/// ⊤ or ⊥ against the default threshold, up to `c` ⊤; pure (ε₁ + ε₂)-DP.
impl StreamingMechanism for StandardSvt {
    bit_answers!();

    /// `Pure { ε₁ + ε₂ }` (the sum rounded up) for the whole run.
    fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: round::add_up(self.epsilon1, self.epsilon2),
        }
    }
}

/// A [`StandardSvt`] with numeric answers ([`StandardSvt::with_numeric_answers`]):
/// each ⊤ releases `fᵢ(D) + Lap(cΔ/ε₃)` with **fresh** noise (never the comparison's
/// noise); pure (ε₁ + ε₂ + ε₃)-DP for the whole run.
///
/// ```
/// use dpmech::{Monotonicity, StandardSvt, StreamingMechanism};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let svt = StandardSvt::new(50.0, 1.0, 0.5, 0.5, 1, Monotonicity::General)?;
/// let mut svt = svt.with_numeric_answers(1.0)?;
/// let answers = svt.run(&[1.0, 5000.0], &mut ChaCha20Rng::seed_from_u64(2))?;
/// assert!(answers[1].value().is_some());
/// assert_eq!(svt.privacy_loss(), dpmech::PrivacyLoss::pure(2.0)?);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug)]
pub struct NumericStandardSvt {
    svt: StandardSvt,
    epsilon3: f64,
    numeric: Laplace,
}

impl NumericStandardSvt {
    /// Answers one query against its own public threshold `Tᵢ`: a value with fresh
    /// noise or [`NumericAnswer::Below`]; errors as
    /// [`StandardSvt::query_with_threshold`].
    ///
    /// # Errors
    ///
    /// As [`StandardSvt::query_with_threshold`].
    pub fn query_with_threshold<R: CryptoRng + ?Sized>(
        &mut self,
        value: f64,
        threshold: f64,
        rng: &mut R,
    ) -> Result<NumericAnswer, Error> {
        match self.svt.query_with_threshold(value, threshold, rng)? {
            Answer::Above => Ok(NumericAnswer::Value(self.numeric.release(value, rng)?)),
            Answer::Below => Ok(NumericAnswer::Below),
        }
    }

    /// Runs `(value, threshold)` pairs, returning the answers up to the halt. Every pair
    /// is validated first.
    ///
    /// # Errors
    ///
    /// As [`StandardSvt::run_with_thresholds`].
    pub fn run_with_thresholds<R: CryptoRng + ?Sized>(
        &mut self,
        pairs: &[(f64, f64)],
        rng: &mut R,
    ) -> Result<Vec<NumericAnswer>, Error> {
        run_pairs(self, pairs, |svt, v, t| svt.query_with_threshold(v, t, rng))
    }

    /// The comparisons' part (budgets ε₁ and ε₂, scales, counts).
    pub fn comparisons(&self) -> &StandardSvt {
        &self.svt
    }

    /// ε₃, the numeric-answer budget.
    pub fn epsilon3(&self) -> f64 {
        self.epsilon3
    }

    /// The scale of the numeric answers' noise (`cΔ/ε₃`).
    pub fn value_scale(&self) -> f64 {
        self.numeric.scale()
    }

    /// The grid of the released values.
    pub fn value_granularity(&self) -> f64 {
        self.numeric.granularity()
    }
}

/// A value with fresh noise or ⊥ against the default threshold, up to `c` values; pure
/// (ε₁ + ε₂ + ε₃)-DP.
impl StreamingMechanism for NumericStandardSvt {
    type Answer = NumericAnswer;

    fn query<R: CryptoRng + ?Sized>(&mut self, value: f64, rng: &mut R) -> Result<NumericAnswer, Error> {
        self.query_with_threshold(value, self.svt.threshold, rng)
    }

    fn validate(&self, values: &[f64]) -> Result<(), Error> {
        self.svt.validate(values)
    }

    /// `Pure { ε₁ + ε₂ + ε₃ }` (the sum rounded up) for the whole run.
    fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: round::add_up(round::add_up(self.svt.epsilon1, self.svt.epsilon2), self.epsilon3),
        }
    }

    fn is_halted(&self) -> bool {
        self.svt.is_halted()
    }

    fn answered(&self) -> usize {
        self.svt.answered()
    }
}

/// The two StandardSvt forms, for [`run_pairs`].
trait PerQueryThresholds: StreamingMechanism {
    fn check_pairs(&self, pairs: &[(f64, f64)]) -> Result<(), Error>;
}

impl PerQueryThresholds for StandardSvt {
    fn check_pairs(&self, pairs: &[(f64, f64)]) -> Result<(), Error> {
        StandardSvt::check_pairs(self, pairs)
    }
}

impl PerQueryThresholds for NumericStandardSvt {
    fn check_pairs(&self, pairs: &[(f64, f64)]) -> Result<(), Error> {
        self.svt.check_pairs(pairs)
    }
}

/// Validates every pair, then answers them in order up to the halt.
fn run_pairs<M: PerQueryThresholds, A>(
    svt: &mut M,
    pairs: &[(f64, f64)],
    mut answer: impl FnMut(&mut M, f64, f64) -> Result<A, Error>,
) -> Result<Vec<A>, Error> {
    svt.check_pairs(pairs)?;
    let mut answers = Vec::with_capacity(pairs.len());
    for &(value, threshold) in pairs {
        if svt.is_halted() {
            break;
        }
        answers.push(answer(svt, value, threshold)?);
    }
    Ok(answers)
}

/// ε₁ = ε/(1 + r), ε₂ = ε − ε₁ with r = (2c)^(2/3) or c^(2/3), rounded so that the
/// rounded-up sum ε₁ ⊕ ε₂ stays ≤ ε.
fn optimal_split(epsilon: f64, cutoff: usize, queries: Monotonicity) -> (f64, f64) {
    let c = cutoff as f64;
    let base = match queries {
        Monotonicity::General => 2.0 * c,
        Monotonicity::Monotone => c,
    };
    let ratio = base.powf(2.0 / 3.0);
    let epsilon1 = round::div_down(epsilon, round::add_up(1.0, ratio));
    let mut epsilon2 = round::sub_down(epsilon, epsilon1);
    while epsilon2 > 0.0 && round::add_up(epsilon1, epsilon2) > epsilon {
        epsilon2 = round::down(epsilon2);
    }
    (epsilon1, epsilon2)
}
