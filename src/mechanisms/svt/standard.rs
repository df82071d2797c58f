//! Standard SVT (Lyu, Su & Li 2017, Algorithm 7): one threshold noise, per-query
//! thresholds, cutoff c, optional numeric answers with a separate budget ε₃.

use super::above_threshold::validate_all;
use super::core_state::Stream;
use super::{Answer, Comparator, check_cutoff, check_threshold, count_up};
use crate::Laplace;
use crate::privacy::{PrivacyLoss, check_epsilon, check_sensitivity, round};
use crate::{CryptoRng, Error};

/// Whether the caller promises that the queries are **monotone**: for every pair of
/// neighbouring datasets, either `fᵢ(D) ≥ fᵢ(D′)` for all i or `fᵢ(D) ≤ fᵢ(D′)` for all
/// i (e.g. counting queries under add/remove one record). Only then may the query
/// noise be halved (seed Theorem 5.3.2); a false promise voids the guarantee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Monotonicity {
    /// No assumption: query noise `Lap(2cΔ/ε₂)`.
    General,
    /// Monotone queries: query noise `Lap(cΔ/ε₂)`.
    Monotone,
}

/// Standard SVT (seed 001, Algorithm 8; Lyu, Su & Li 2017, Algorithm 7):
/// `σ = Lap(Δ/ε₁)` drawn **once**; each query gets `νᵢ = Lap(2cΔ/ε₂)`
/// (`Lap(cΔ/ε₂)` for [`Monotonicity::Monotone`]); the answer is ⊤ when
/// `fᵢ(D) + νᵢ ≥ Tᵢ + σ` for a public per-query threshold `Tᵢ`
/// ([`query_with_threshold`](Self::query_with_threshold)) or the default `T`; with
/// ε₃ ([`with_numeric_answers`](Self::with_numeric_answers)) each ⊤ releases
/// `fᵢ(D) + Lap(cΔ/ε₃)` with fresh noise; it halts after `c` ⊤.
///
/// * **Guarantee:** pure (ε₁ + ε₂ + ε₃)-DP for the whole run (seed Theorems 5.3.1,
///   5.3.2).
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
/// let mut svt = StandardSvt::with_optimal_split(0.0, 1.0, 3, 1.0, Monotonicity::General)?;
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
    epsilon3: Option<f64>,
    monotonicity: Monotonicity,
    numeric: Option<Laplace>,
    stream: Stream,
}

impl StandardSvt {
    /// Standard SVT with default threshold `threshold`, per-query sensitivity
    /// `sensitivity`, cutoff `cutoff`, threshold budget `epsilon1` and query budget
    /// `epsilon2`.
    ///
    /// Errors: [`Error::InvalidParameter`], [`Error::InvalidSensitivity`],
    /// [`Error::InvalidEpsilon`], [`Error::ScaleOutOfRange`].
    pub fn new(
        threshold: f64,
        sensitivity: f64,
        cutoff: usize,
        epsilon1: f64,
        epsilon2: f64,
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
            epsilon3: None,
            monotonicity: queries,
            numeric: None,
            stream: Stream::new(comparator, "StandardSvt", cutoff, false),
        })
    }

    /// Standard SVT spending a total `epsilon` on the comparisons, split
    /// ε₁ : ε₂ = 1 : (2c)^(2/3) (general) or 1 : c^(2/3) (monotone), with
    /// ε₁ + ε₂ ≤ ε after rounding.
    pub fn with_optimal_split(
        threshold: f64,
        sensitivity: f64,
        cutoff: usize,
        epsilon: f64,
        queries: Monotonicity,
    ) -> Result<Self, Error> {
        let epsilon = check_epsilon(epsilon)?;
        let cutoff_checked = check_cutoff(cutoff)?;
        let (epsilon1, epsilon2) = optimal_split(epsilon, cutoff_checked, queries);
        Self::new(threshold, sensitivity, cutoff, epsilon1, epsilon2, queries)
    }

    /// Adds numeric answers: each ⊤ releases `fᵢ(D) + Lap(cΔ/ε₃)` (fresh noise), for an
    /// extra ε₃. Only before the first query (else [`Error::InvalidParameter`]).
    pub fn with_numeric_answers(mut self, epsilon3: f64) -> Result<Self, Error> {
        let epsilon3 = check_epsilon(epsilon3)?;
        if self.stream.answered() > 0 {
            return Err(Error::InvalidParameter {
                name: "epsilon3",
                value: epsilon3,
                reason: "numeric answers must be configured before the first query",
            });
        }
        let per_value = round::div_down(epsilon3, count_up(self.stream.cutoff()));
        self.numeric = Some(Laplace::new(self.sensitivity, per_value)?);
        self.epsilon3 = Some(epsilon3);
        Ok(self)
    }

    /// Answers one query against the default threshold T.
    pub fn query<R: CryptoRng + ?Sized>(&mut self, value: f64, rng: &mut R) -> Result<Answer, Error> {
        self.query_with_threshold(value, self.threshold, rng)
    }

    /// Answers one query against its own public threshold `Tᵢ`: [`Answer::Below`],
    /// [`Answer::Above`], or [`Answer::Value`] when ε₃ is set. Errors, before any
    /// randomness and without changing the state: [`Error::Halted`] after `c` ⊤,
    /// [`Error::NonFiniteValue`] for the value, [`Error::InvalidParameter`] for a
    /// non-finite threshold.
    pub fn query_with_threshold<R: CryptoRng + ?Sized>(
        &mut self,
        value: f64,
        threshold: f64,
        rng: &mut R,
    ) -> Result<Answer, Error> {
        self.stream.check(value, threshold)?;
        if !self.stream.compare(value, threshold, rng) {
            return Ok(Answer::Below);
        }
        match &self.numeric {
            Some(numeric) => Ok(Answer::Value(numeric.release(value, rng)?)),
            None => Ok(Answer::Above),
        }
    }

    /// Runs a slice of values against the default threshold, returning the answers up
    /// to the halt. The whole slice is validated first.
    pub fn run<R: CryptoRng + ?Sized>(&mut self, values: &[f64], rng: &mut R) -> Result<Vec<Answer>, Error> {
        validate_all(&self.stream, values, self.threshold)?;
        let mut answers = Vec::new();
        for &value in values {
            if self.stream.is_halted() {
                break;
            }
            answers.push(self.query(value, rng)?);
        }
        Ok(answers)
    }

    /// Runs `(value, threshold)` pairs, returning the answers up to the halt. Every pair
    /// is validated first.
    pub fn run_with_thresholds<R: CryptoRng + ?Sized>(
        &mut self,
        pairs: &[(f64, f64)],
        rng: &mut R,
    ) -> Result<Vec<Answer>, Error> {
        for (offset, &(value, threshold)) in pairs.iter().enumerate() {
            validate_all(&self.stream, &[value], threshold).map_err(|e| match e {
                Error::NonFiniteValue { value, .. } => Error::NonFiniteValue {
                    index: self.stream.answered() + offset,
                    value,
                },
                other => other,
            })?;
        }
        let mut answers = Vec::new();
        for &(value, threshold) in pairs {
            if self.stream.is_halted() {
                break;
            }
            answers.push(self.query_with_threshold(value, threshold, rng)?);
        }
        Ok(answers)
    }

    /// [`run`](Self::run) over any iterator (collected and validated first).
    pub fn run_iter<I, R>(&mut self, values: I, rng: &mut R) -> Result<Vec<Answer>, Error>
    where
        I: IntoIterator<Item = f64>,
        R: CryptoRng + ?Sized,
    {
        let values: Vec<f64> = values.into_iter().collect();
        self.run(&values, rng)
    }

    /// `true` once `c` ⊤ answers have been given.
    pub fn is_halted(&self) -> bool {
        self.stream.is_halted()
    }

    /// Number of queries answered so far.
    pub fn answered(&self) -> usize {
        self.stream.answered()
    }

    /// Number of ⊤ answers so far.
    pub fn positives(&self) -> usize {
        self.stream.positives()
    }

    /// ε₁, the threshold budget.
    pub fn epsilon1(&self) -> f64 {
        self.epsilon1
    }

    /// ε₂, the query budget.
    pub fn epsilon2(&self) -> f64 {
        self.epsilon2
    }

    /// ε₃, the numeric-answer budget, if set.
    pub fn epsilon3(&self) -> Option<f64> {
        self.epsilon3
    }

    /// The declared monotonicity of the queries.
    pub fn monotonicity(&self) -> Monotonicity {
        self.monotonicity
    }

    /// The scale of the threshold noise, `τ_T·g ≥ Δ/ε₁`.
    pub fn threshold_scale(&self) -> f64 {
        self.stream.comparator.threshold_scale()
    }

    /// The scale of each query's noise, `≥ 2cΔ/ε₂` (general) or `≥ cΔ/ε₂` (monotone).
    pub fn query_scale(&self) -> f64 {
        self.stream.comparator.query_scale()
    }

    /// The scale of the numeric answers' noise (`cΔ/ε₃`), if ε₃ is set.
    pub fn value_scale(&self) -> Option<f64> {
        self.numeric.as_ref().map(Laplace::scale)
    }

    /// The grid `g = 2ᵏ` on which values are compared.
    pub fn granularity(&self) -> f64 {
        self.stream.comparator.granularity()
    }

    /// `Pure { ε₁ + ε₂ + ε₃ }` (the sum rounded up) for the whole run.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        let comparisons = round::add_up(self.epsilon1, self.epsilon2);
        let epsilon = match self.epsilon3 {
            Some(e3) => round::add_up(comparisons, e3),
            None => comparisons,
        };
        PrivacyLoss::Pure { epsilon }
    }
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
