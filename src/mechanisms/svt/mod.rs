//! The sparse vector technique (SVT): answer a stream of queries with "above" or
//! "below" a threshold, paying privacy only for the (few) "above" answers.
//!
//! | type | releases | halts after | guarantee |
//! |---|---|---|---|
//! | [`AboveThreshold`] | ⊥…⊥⊤ | the first ⊤ | pure ε-DP |
//! | [`Sparse`] | ⊥/⊤ | `c` ⊤ (threshold re-drawn after each) | pure ε-DP (δ = 0) or (ε, δ)-DP |
//! | [`NumericSparse`] | ⊥ / noisy value | `c` values | pure ε-DP (δ = 0) or (ε, δ)-DP |
//! | [`StandardSvt`] | ⊥/⊤, per-query thresholds | `c` ⊤ | pure (ε₁ + ε₂)-DP |
//! | [`NumericStandardSvt`] | ⊥ / noisy value, per-query thresholds | `c` values | pure (ε₁ + ε₂ + ε₃)-DP |
//!
//! All share [`StreamingMechanism`] (`query`, `run`, `privacy_loss`, `is_halted`);
//! constructors take the threshold, the sensitivity, the privacy parameters, then the
//! cutoff `c` (and, for [`StandardSvt`], the queries' [`Monotonicity`](crate::Monotonicity)).
//!
//! Dwork & Roth 2014, §3.6 (Algorithms 1–3: AboveThreshold, Sparse, NumericSparse) and
//! Lyu, Su & Li 2017, *Understanding the Sparse Vector Technique* (Algorithm 7: the
//! standard SVT). Every type is **stateful and not `Clone`**: a copy would
//! answer further queries from the same noisy threshold and spend the budget twice.
//! Its `Debug` output never shows the noisy threshold.
//!
//! **Neighbouring relation and sensitivity.** Every query `fᵢ` must have sensitivity
//! at most `Δ` (the absolute change `|fᵢ(D) − fᵢ(D′)|`, an L∞ bound per query) under
//! the neighbouring relation the caller uses (add/remove or substitute one record);
//! the guarantee holds for that relation, for the whole run, whatever the number of
//! "below" answers.
//!
//! **Exact comparisons.** A power-of-two grid `g = 2ᵏ` is chosen from the public
//! parameters only (`Δ`, ε, c), with `g ≤ Δ·2⁻⁴⁰`. Thresholds and query values are
//! clamped and rounded to integers on that grid, integer discrete Laplace noise
//! (exact, [`crate::sampling::DiscreteLaplace`]) is added, and the noisy values are
//! compared as `i128` — no float ever decides an answer. Rounding can change a query by
//! one more unit, so the sensitivity in units is `Δ/g + 1` and every noise scale is
//! calibrated to it (rounded up): the guarantee is exactly the one stated, at the cost
//! of a relative `2⁻⁴⁰` of extra noise. Per-query thresholds are public, so their
//! rounding is the same on neighbouring inputs and costs nothing.
//!
//! **What is not private, and never offered.** An SVT that keeps answering after its
//! cutoff (non-halting), one whose queries carry no noise, one that releases the noisy
//! value `fᵢ + νᵢ` used in the comparison, and one that reuses a threshold for more
//! "above" answers than its noise was calibrated for are **not** differentially private
//! for any useful ε (Lyu, Su & Li 2017, whose Algorithms 3–6 are such variants).
//! The numeric variants here release a value with **fresh, independent** noise. The
//! tests of this crate run the broken variants as negative controls.
//!
//! **Timing.** The number of noise draws per query is data-independent, and each
//! discrete Laplace draw consumes a number of random words independent of its value
//! (except on a fallback event of probability `< 2⁻⁴⁰·²`, see
//! [`crate::sampling::DiscreteLaplace`]).
//!
//! **Accuracy.** [`above_threshold_alpha`], [`sparse_alpha`] and
//! [`numeric_sparse_alpha`] give the α of the (α, β)-accuracy theorems 3.24, 3.26
//! and 3.28 of Dwork & Roth 2014 (for sensitivity Δ, the α scales with Δ); the δ > 0
//! case of Theorem 3.28 is corrected (see [`numeric_sparse_alpha`]). The grid adds at
//! most `g ≤ Δ·2⁻⁴⁰` of rounding to the stated α.

/// The accessors every sparse-vector type shares, read from its `stream` and
/// `sensitivity` fields (one definition instead of one per type); with a field path
/// (`stream_accessors!(sparse)`), from the sparse-vector value held there.
macro_rules! stream_accessors {
    ($($via:ident).*) => {
        /// The number of ⊤ answers (or released values) so far.
        pub fn positives(&self) -> usize {
            self$(.$via)*.stream.positives()
        }

        /// The cutoff c (1 for AboveThreshold).
        pub fn cutoff(&self) -> usize {
            self$(.$via)*.stream.cutoff()
        }

        /// The scale of the threshold noise (rounded up from its calibration).
        pub fn threshold_scale(&self) -> f64 {
            self$(.$via)*.stream.comparator.threshold_scale()
        }

        /// The scale of each query's comparison noise (rounded up from its calibration).
        pub fn query_scale(&self) -> f64 {
            self$(.$via)*.stream.comparator.query_scale()
        }

        /// The grid `g = 2ᵏ` on which values are compared.
        pub fn granularity(&self) -> f64 {
            self$(.$via)*.stream.comparator.granularity()
        }

        /// The per-query sensitivity Δ.
        pub fn sensitivity(&self) -> f64 {
            self$(.$via)*.sensitivity
        }
    };
}

/// The [`StreamingMechanism`] methods every sparse-vector type answers from its
/// `stream` and default `threshold` (with a field path, those of the value held there).
macro_rules! stream_state {
    ($($via:ident).*) => {
        fn validate(&self, values: &[f64]) -> Result<(), Error> {
            validate_all(&self$(.$via)*.stream, values, self$(.$via)*.threshold)
        }

        fn is_halted(&self) -> bool {
            self$(.$via)*.stream.is_halted()
        }

        fn answered(&self) -> usize {
            self$(.$via)*.stream.answered()
        }
    };
}

/// The [`StreamingMechanism`] items of a type that answers ⊤/⊥ against its default
/// `threshold` from its `stream`: `Answer`, the state methods and `query`; with
/// `batch`, also the batch `run` that draws from one bit source for the whole slice.
macro_rules! bit_answers {
    () => {
        type Answer = Answer;

        stream_state!();

        fn query<R: CryptoRng + ?Sized>(&mut self, value: f64, rng: &mut R) -> Result<Answer, Error> {
            self.stream.query(value, self.threshold, rng)
        }
    };
    (batch) => {
        bit_answers!();

        /// The batch path: one bit source for the whole slice.
        fn run<R: CryptoRng + ?Sized>(&mut self, values: &[f64], rng: &mut R) -> Result<Vec<Answer>, Error> {
            self.validate(values)?;
            Ok(run_bits(&mut self.stream, values, self.threshold, rng))
        }
    };
}

mod above_threshold;
mod core_state;
mod numeric_sparse;
mod sparse;
mod standard;

pub use above_threshold::AboveThreshold;
pub use numeric_sparse::NumericSparse;
pub use sparse::Sparse;
pub use standard::{NumericStandardSvt, StandardSvt};

use super::check_beta;
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon, round};
use crate::sampling::grid::{Grid, floor_log2};
use crate::sampling::{BitSource, DiscreteLaplace, Rational};
use crate::{CryptoRng, Error, Laplace};

/// One answer of a sparse-vector mechanism that releases no values
/// ([`AboveThreshold`], [`Sparse`], [`StandardSvt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Answer {
    /// ⊥: the noisy query value stayed below the noisy threshold.
    Below,
    /// ⊤: the noisy query value reached the noisy threshold (no value released).
    Above,
}

impl Answer {
    /// `true` for [`Answer::Above`].
    pub fn is_above(&self) -> bool {
        *self == Self::Above
    }
}

/// One answer of a sparse-vector mechanism that releases a value for each ⊤
/// ([`NumericSparse`], [`NumericStandardSvt`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumericAnswer {
    /// ⊥: the noisy query value stayed below the noisy threshold.
    Below,
    /// ⊤ with `fᵢ(D) + fresh noise` (an exact multiple of the numeric release's grid).
    Value(f64),
}

impl NumericAnswer {
    /// `true` for [`NumericAnswer::Value`].
    pub fn is_above(&self) -> bool {
        matches!(self, Self::Value(_))
    }

    /// The released value, if any.
    pub fn value(&self) -> Option<f64> {
        match *self {
            Self::Value(v) => Some(v),
            Self::Below => None,
        }
    }
}

/// The shape shared by the interactive mechanisms: a stream of query values `fᵢ(D)`
/// (each of sensitivity at most Δ, chosen adaptively if need be), one answer each, one
/// guarantee for the whole run, and a halt after which every query is refused.
///
/// The non-interactive mechanisms share [`Mechanism`](crate::Mechanism) instead; charge
/// a streaming mechanism's [`privacy_loss`](Self::privacy_loss) once, before its first
/// query (e.g. with [`Accountant::spend`](crate::Accountant::spend)).
///
/// ```
/// use dpmech::{AboveThreshold, Sparse, StreamingMechanism};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// // Generic code: count the ⊤ answers of any streaming mechanism.
/// fn above<M: StreamingMechanism>(m: &mut M, values: &[f64], rng: &mut ChaCha20Rng) -> usize
/// where
///     M::Answer: std::fmt::Debug,
/// {
///     m.run(values, rng).unwrap().iter().filter(|a| format!("{a:?}") != "Below").count()
/// }
/// let mut rng = ChaCha20Rng::seed_from_u64(1);
/// let values = [0.0, 1e6, 0.0, 1e6];
/// assert_eq!(above(&mut AboveThreshold::new(100.0, 1.0, 1.0)?, &values, &mut rng), 1);
/// assert_eq!(above(&mut Sparse::new(100.0, 1.0, 1.0, 2)?, &values, &mut rng), 2);
/// # Ok::<(), dpmech::Error>(())
/// ```
pub trait StreamingMechanism {
    /// What one query releases.
    type Answer;

    /// Answers one query value `fᵢ(D)`. Refuses, before any randomness and without
    /// changing the state, after the halt ([`Error::Halted`]) and for a non-finite
    /// value ([`Error::NonFiniteValue`]: a query of finite sensitivity cannot produce
    /// one).
    ///
    /// # Errors
    ///
    /// [`Error::Halted`] and [`Error::NonFiniteValue`], as above.
    fn query<R: CryptoRng + ?Sized>(&mut self, value: f64, rng: &mut R) -> Result<Self::Answer, Error>;

    /// Checks a whole batch as [`query`](Self::query) would, before any randomness.
    ///
    /// # Errors
    ///
    /// Those of [`query`](Self::query), for the first offending value.
    fn validate(&self, values: &[f64]) -> Result<(), Error>;

    /// The guarantee of the whole run, however many queries it answers.
    fn privacy_loss(&self) -> PrivacyLoss;

    /// `true` once the mechanism has stopped answering.
    fn is_halted(&self) -> bool;

    /// The number of queries answered so far.
    fn answered(&self) -> usize;

    /// Answers a slice of values up to the halt (later values are not used). The whole
    /// slice is validated first.
    ///
    /// # Errors
    ///
    /// Those of [`validate`](Self::validate) for the whole slice, before any randomness is
    /// drawn.
    fn run<R: CryptoRng + ?Sized>(
        &mut self,
        values: &[f64],
        rng: &mut R,
    ) -> Result<Vec<Self::Answer>, Error> {
        self.validate(values)?;
        let mut answers = Vec::with_capacity(values.len());
        for &value in values {
            if self.is_halted() {
                break;
            }
            answers.push(self.query(value, rng)?);
        }
        Ok(answers)
    }

    /// [`run`](Self::run) over any iterator of values (collected first, so a
    /// non-finite value anywhere is refused before any randomness is drawn).
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run).
    fn run_iter<I, R>(&mut self, values: I, rng: &mut R) -> Result<Vec<Self::Answer>, Error>
    where
        I: IntoIterator<Item = f64>,
        R: CryptoRng + ?Sized,
    {
        let values: Vec<f64> = values.into_iter().collect();
        self.run(&values, rng)
    }
}

/// Bits of relative resolution of the grid, `g ≤ min(Δ, b)·2⁻⁴⁰` with `b` the smallest
/// noise scale (like the statistics' exact sums; a single [`crate::Laplace`] release
/// uses the coarser `b·2⁻³⁵`).
const RESOLUTION_BITS: i32 = 40;
/// Integer noise scales stay below `2⁶¹` grid units.
const MAX_UNITS_BITS: i32 = 60;

/// The exact comparison machinery shared by the sparse-vector types: the grid, the
/// threshold noise and the query noise, both in integer units of the grid.
#[derive(Clone)]
pub(super) struct Comparator {
    grid: Grid,
    threshold_noise: DiscreteLaplace,
    query_noise: DiscreteLaplace,
}

impl Comparator {
    /// Threshold noise of scale `Δ·threshold_factor` and query noise of scale
    /// `Δ·query_factor` (factors already rounded up), calibrated in grid units to the
    /// rounded sensitivity `Δ/g + 1`.
    pub(super) fn new(sensitivity: f64, threshold_factor: f64, query_factor: f64) -> Result<Self, Error> {
        let threshold_scale = round::mul_up(sensitivity, threshold_factor);
        let query_scale = round::mul_up(sensitivity, query_factor);
        let (low, high) = (threshold_scale.min(query_scale), threshold_scale.max(query_scale));
        for scale in [low, high] {
            if !(Laplace::MIN_SCALE..=Laplace::MAX_SCALE).contains(&scale) {
                return Err(Error::ScaleOutOfRange {
                    scale,
                    min: Laplace::MIN_SCALE,
                    max: Laplace::MAX_SCALE,
                });
            }
        }
        let fine = floor_log2(sensitivity.min(low)) - RESOLUTION_BITS;
        let cap = floor_log2(high) - MAX_UNITS_BITS;
        let grid = Grid::new(fine.max(cap));
        // Sensitivity in units: Δ/g (exact or rounded up) plus one unit of rounding.
        let units_sensitivity = round::add_up(round::div_up(sensitivity, grid.granularity()), 1.0);
        let units = |factor: f64| -> Result<DiscreteLaplace, Error> {
            let tau = round::mul_up(units_sensitivity, factor).ceil();
            Ok(DiscreteLaplace::new(Rational::from_f64_up(tau)?))
        };
        Ok(Self {
            grid,
            threshold_noise: units(threshold_factor)?,
            query_noise: units(query_factor)?,
        })
    }

    pub(super) fn granularity(&self) -> f64 {
        self.grid.granularity()
    }

    pub(super) fn threshold_scale(&self) -> f64 {
        self.threshold_noise.scale().to_f64() * self.grid.granularity()
    }

    pub(super) fn query_scale(&self) -> f64 {
        self.query_noise.scale().to_f64() * self.grid.granularity()
    }

    /// A fresh threshold noise `σ` in units.
    pub(super) fn draw_threshold_noise<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        self.threshold_noise.sample_inlined(bits)
    }

    /// `round(value) + ν ≥ round(threshold) + σ`, exactly, in grid units.
    pub(super) fn is_above<R: CryptoRng + ?Sized>(
        &self,
        value: f64,
        threshold: f64,
        threshold_noise: i128,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        let noisy_value = self
            .grid
            .to_units(value)
            .saturating_add(self.query_noise.sample_inlined(bits));
        let noisy_threshold = self.grid.to_units(threshold).saturating_add(threshold_noise);
        noisy_value >= noisy_threshold
    }
}

/// Validates a public threshold: finite.
pub(super) fn check_threshold(threshold: f64) -> Result<f64, Error> {
    if threshold.is_finite() {
        Ok(threshold)
    } else {
        Err(Error::InvalidParameter {
            name: "threshold",
            value: threshold,
            reason: "the threshold must be finite",
        })
    }
}

/// Validates a cutoff: at least 1 (and small enough to be computed with exactly).
pub(super) fn check_cutoff(cutoff: usize) -> Result<usize, Error> {
    if (1..=1usize << 40).contains(&cutoff) {
        Ok(cutoff)
    } else {
        Err(Error::InvalidParameter {
            name: "cutoff",
            value: cutoff as f64,
            reason: "the cutoff c must lie in 1..=2^40",
        })
    }
}

/// The public parameters Sparse and NumericSparse check first, in this order:
/// threshold, sensitivity, cutoff, ε.
fn check_sparse(
    threshold: f64,
    sensitivity: f64,
    cutoff: usize,
    epsilon: f64,
) -> Result<(f64, f64, usize, f64), Error> {
    Ok((
        check_threshold(threshold)?,
        crate::privacy::check_sensitivity(sensitivity)?,
        check_cutoff(cutoff)?,
        check_epsilon(epsilon)?,
    ))
}

/// `n` as an `f64`, rounded up (exact below `2⁵³`).
pub(super) fn count_up(n: usize) -> f64 {
    crate::privacy::round::u64_up(n as u64)
}

/// An upper bound on the ε of the advanced composition (Dwork, Rothblum & Vadhan 2010)
/// of `c` pure `epsilon_step`-DP mechanisms with slack δ′ — from the composition layer
/// ([`crate::composition::advanced::epsilon`]); ∞ when it is undefined.
pub(super) fn advanced_composition_up(c: usize, epsilon_step: f64, slack: f64) -> f64 {
    crate::composition::advanced::epsilon(c as u64, epsilon_step, slack).unwrap_or(f64::INFINITY)
}

/// The noise multiplier σ of pure ε-DP Sparse with cutoff `c` (threshold noise `σΔ`,
/// query noise `2σΔ`): `σ = 2c/ε`, rounded up. NumericSparse's Sparse part uses it at ε₁.
pub(super) fn pure_sigma(epsilon: f64, cutoff: usize) -> f64 {
    round::div_up(round::mul_up(2.0, count_up(cutoff)), epsilon)
}

/// The noise multiplier σ `= 2/ε′` of (ε, δ)-DP Sparse with cutoff `c`, for the
/// per-round ε′ `= ε/√(8c ln(1/δ))` (rounded down, so σ is rounded up), after checking
/// that `c` rounds of ε′ compose to at most ε with slack δ. NumericSparse's Sparse part
/// uses it at (ε₁, δ/2).
pub(super) fn approximate_sigma(epsilon: f64, delta: f64, cutoff: usize) -> Result<f64, Error> {
    let log_term = round::ln_down(round::div_down(1.0, delta));
    let denominator = round::sqrt_up(round::mul_up(
        round::mul_up(8.0, count_up(cutoff)),
        round::ln_up(round::div_up(1.0, delta)),
    ));
    let step = round::div_down(epsilon, denominator);
    if step <= 0.0 || log_term <= 0.0 || advanced_composition_up(cutoff, step, delta) > epsilon {
        return Err(Error::InvalidParameter {
            name: "epsilon",
            value: epsilon,
            reason: "with delta > 0, advanced composition of c rounds at epsilon/sqrt(8c ln(1/delta)) exceeds epsilon; use delta = 0 (pure) for this epsilon",
        });
    }
    Ok(round::div_up(2.0, step))
}

fn check_queries(queries: usize) -> Result<f64, Error> {
    if queries >= 1 {
        Ok(count_up(queries))
    } else {
        Err(Error::InvalidParameter {
            name: "queries",
            value: 0.0,
            reason: "the number of queries k must be at least 1",
        })
    }
}

/// `ln k + ln(m/β)`, rounded up.
fn log_terms(queries: f64, multiplier: f64, beta: f64) -> f64 {
    round::add_up(
        round::ln_up(queries),
        round::ln_up(round::div_up(multiplier, beta)),
    )
}

/// The public inputs of an accuracy bound, validated in the order sensitivity, ε,
/// cutoff (when the mechanism has one; `c = 1` otherwise), queries, β, δ (when given).
struct AlphaInputs {
    sensitivity: f64,
    epsilon: f64,
    c: f64,
    k: f64,
    beta: f64,
    delta: Option<f64>,
}

impl AlphaInputs {
    fn check(
        sensitivity: f64,
        epsilon: f64,
        delta: Option<f64>,
        cutoff: Option<usize>,
        queries: usize,
        beta: f64,
    ) -> Result<Self, Error> {
        let sensitivity = crate::privacy::check_sensitivity(sensitivity)?;
        let epsilon = check_epsilon(epsilon)?;
        let c = match cutoff {
            Some(cutoff) => count_up(check_cutoff(cutoff)?),
            None => 1.0,
        };
        Ok(Self {
            sensitivity,
            epsilon,
            c,
            k: check_queries(queries)?,
            beta: check_beta(beta)?,
            delta: delta.map(check_delta).transpose()?,
        })
    }

    /// `ln k + ln(m·c/β)`, rounded up.
    fn logs(&self, m: f64) -> f64 {
        log_terms(self.k, round::mul_up(m, self.c), self.beta)
    }

    /// `factor·Δ·logs/ε`, rounded up.
    fn alpha(&self, factor: f64, logs: f64) -> f64 {
        round::div_up(
            round::mul_up(round::mul_up(factor, self.sensitivity), logs),
            self.epsilon,
        )
    }
}

/// Dwork & Roth 2014, Theorem 3.24: on `k` queries of sensitivity Δ, of which only the last
/// comes within α of the threshold (`fᵢ(D) < T − α` for `i < k`), [`AboveThreshold`]
/// at ε is (α, β)-accurate — with probability at least `1 − β` it does not halt before
/// `f_k`, every ⊤ has `fᵢ(D) ≥ T − α` and every ⊥ has `fᵢ(D) ≤ T + α` — for
/// `α = 8Δ(ln k + ln(2/β))/ε` (rounded up).
///
/// ```
/// let alpha = dpmech::mechanisms::svt::above_threshold_alpha(1.0, 1.0, 100, 0.05)?;
/// assert!((alpha - 8.0 * (100f64.ln() + 40f64.ln())).abs() < 1e-9);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`], and [`Error::InvalidParameter`]
/// for `queries = 0` or β outside (0, 1).
pub fn above_threshold_alpha(
    sensitivity: f64,
    epsilon: f64,
    queries: usize,
    beta: f64,
) -> Result<f64, Error> {
    let inputs = AlphaInputs::check(sensitivity, epsilon, None, None, queries, beta)?;
    Ok(inputs.alpha(8.0, inputs.logs(2.0)))
}

/// Dwork & Roth 2014, Theorem 3.26: on `k` queries of sensitivity Δ with at least `c` of
/// them within α of the threshold, [`Sparse`] with cutoff `c` is (α, β)-accurate for
/// `α = 8cΔ(ln k + ln(2c/β))/ε` when `delta` is `None` (pure), and
/// `α = Δ(ln k + ln(2c/β))·√(512c ln(1/δ))/ε` for `Some(δ)`. Rounded up.
///
/// # Errors
///
/// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`], [`Error::InvalidParameter`]
/// for a cutoff outside `1..=2⁴⁰`, `queries = 0` or β outside (0, 1), and
/// [`Error::InvalidDelta`].
pub fn sparse_alpha(
    sensitivity: f64,
    epsilon: f64,
    delta: Option<f64>,
    cutoff: usize,
    queries: usize,
    beta: f64,
) -> Result<f64, Error> {
    let inputs = AlphaInputs::check(sensitivity, epsilon, delta, Some(cutoff), queries, beta)?;
    let c = inputs.c;
    let logs = inputs.logs(2.0);
    let factor = match inputs.delta {
        None => round::mul_up(8.0, c),
        Some(delta) => round::sqrt_up(round::mul_up(
            round::mul_up(512.0, c),
            round::ln_up(round::div_up(1.0, delta)),
        )),
    };
    Ok(inputs.alpha(factor, logs))
}

/// Dwork & Roth 2014, Theorem 3.28, corrected for δ > 0: on `k` queries of sensitivity Δ
/// with at least `c` of them within α of the threshold, [`NumericSparse`] with cutoff
/// `c` is (α, β)-accurate — every released value is within α of `fᵢ(D)`, every ⊥ has
/// `fᵢ(D) ≤ T + α` — for
///
/// * `delta = None`: `α = 9cΔ(ln k + ln(4c/β))/ε` (as in the theorem);
/// * `Some(δ)`: `α = max(α_T, α_L)` with the theorem's
///   `α_T = Δ(ln k + ln(4c/β))(√512 + 1)√(c ln(2/δ))/ε` (the threshold part: Theorem
///   3.26 at (ε₁, δ/2), β/2) and the Laplace part `α_L = b·ln(2c/β)`,
///   `b = √(32c ln(2/δ))Δ/ε₂ = 2√2(√512 + 1)√(c ln(2/δ))Δ/ε`, so that the `c` released
///   values are within α with probability `1 − β/2`. **Erratum:** the theorem as
///   stated gives only `α_T`, which is smaller than `α_L` whenever
///   `2√2·ln(2c/β) > ln k + ln(4c/β)`; with its α, more than a β fraction of runs can
///   fail (the crate's accuracy test measures about 12% at β = 10%, k = 60, c = 3).
///
/// Rounded up.
///
/// # Errors
///
/// As [`sparse_alpha`].
pub fn numeric_sparse_alpha(
    sensitivity: f64,
    epsilon: f64,
    delta: Option<f64>,
    cutoff: usize,
    queries: usize,
    beta: f64,
) -> Result<f64, Error> {
    let inputs = AlphaInputs::check(sensitivity, epsilon, delta, Some(cutoff), queries, beta)?;
    let (c, beta) = (inputs.c, inputs.beta);
    let logs = inputs.logs(4.0);
    let factor = match inputs.delta {
        None => round::mul_up(9.0, c),
        Some(delta) => {
            let root = round::sqrt_up(round::mul_up(c, round::ln_up(round::div_up(2.0, delta))));
            let base = round::mul_up(round::add_up(round::sqrt_up(512.0), 1.0), root);
            let threshold_part = round::mul_up(base, logs);
            let laplace_part = round::mul_up(
                round::mul_up(round::sqrt_up(8.0), base),
                round::ln_up(round::div_up(round::mul_up(2.0, c), beta)),
            );
            return Ok(round::div_up(
                round::mul_up(threshold_part.max(laplace_part), inputs.sensitivity),
                inputs.epsilon,
            ));
        }
    };
    Ok(inputs.alpha(factor, logs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparator_units_cover_the_rounding() {
        let c = Comparator::new(1.0, 2.0, 4.0).unwrap();
        let g = c.granularity();
        assert!(g <= 2f64.powi(-40));
        assert!(c.threshold_scale() >= 2.0 && c.threshold_scale() <= 2.0 * (1.0 + 1e-9));
        assert!(c.query_scale() >= 4.0 && c.query_scale() <= 4.0 * (1.0 + 1e-9));
    }

    #[test]
    fn advanced_composition_matches_the_formula() {
        let e = advanced_composition_up(10, 0.01, 1e-6);
        let exact = (20.0 * 1e6f64.ln()).sqrt() * 0.01 + 10.0 * 0.01 * (0.01f64.exp() - 1.0);
        assert!(e >= exact && e <= exact * (1.0 + 1e-12));
    }

    #[test]
    fn accuracy_formulas() {
        let a = sparse_alpha(1.0, 1.0, None, 10, 100, 0.05).unwrap();
        assert!((a - 80.0 * (100f64.ln() + 400f64.ln())).abs() < 1e-9);
        let n = numeric_sparse_alpha(1.0, 1.0, None, 10, 100, 0.05).unwrap();
        assert!((n - 90.0 * (100f64.ln() + 800f64.ln())).abs() < 1e-9);
        let s = sparse_alpha(2.0, 1.0, Some(1e-6), 4, 10, 0.1).unwrap();
        let exact = 2.0 * (10f64.ln() + 80f64.ln()) * (2048.0 * 1e6f64.ln()).sqrt();
        assert!(s >= exact && s <= exact * (1.0 + 1e-12));
        assert!(above_threshold_alpha(1.0, 1.0, 0, 0.1).is_err());
        assert!(sparse_alpha(1.0, 1.0, None, 0, 10, 0.1).is_err());
        assert!(numeric_sparse_alpha(1.0, 1.0, None, 1, 10, 1.0).is_err());
    }
}
