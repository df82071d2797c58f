//! Selection mechanisms over a slice of scores: the exponential mechanism (and its
//! top-k peeling form) and permute-and-flip, both sampled exactly on a grid.

use super::{Monotonicity, check_all_finite};
use crate::privacy::{PrivacyLoss, check_epsilon, check_sensitivity, round};
use crate::sampling::grid::{Grid, floor_log2};
use crate::sampling::{BitSource, ExpNegLower, sample_index_exp_neg, uniform_below_word, with_scratch};
use crate::{CryptoRng, Error};

/// Scores are rounded to a grid `g ≤ Δu·2⁻²⁰`: the unit sensitivity is about `2²⁰`.
const SCORE_RESOLUTION_BITS: i32 = 20;
/// Gaps `OPT − u` are capped where the weight falls below `e^(−1100)`.
const CAP_EXPONENT: f64 = 1100.0;

/// The public, data-independent discretisation shared by the selection mechanisms:
/// scores on the grid `g = 2ᵏ`, the unit sensitivity `Δᵤ = ⌊Δu/g⌋ + 1`, and the rate
/// `c = m/2ˢ ≤ ε/(λ·Δᵤ)` (λ = 2, or 1 for monotone utilities) rounded **down**.
///
/// For a candidate with grid score `ũᵣ` the weight is `exp(−c·min(OPT − ũᵣ, cap))`,
/// with `cap` the public gap beyond which `c·cap ≥ 1100`.
///
/// **Why this is exactly private.** Rounding moves each score by at most `g/2`, so
/// neighbouring grid scores differ by at most `Δu/g + 1` units, an integer, hence by
/// at most `Δᵤ`. Capping the gap is the same as using the utility
/// `u′ᵣ = max(ũᵣ, OPT − cap)`; `OPT = maxⱼ ũⱼ` and each `ũᵣ` move by at most `Δᵤ`
/// between neighbours, so `u′` has sensitivity `Δᵤ` too (and is monotone when `u` is):
/// the mechanism is the textbook one applied to `u′` with `ε′ = λ·c·Δᵤ ≤ ε`. The cap
/// changes only candidates whose weight is below `e^(−1100)` relative to the best.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ScoreScale {
    grid: Grid,
    /// `Δᵤ`.
    unit_sensitivity: u128,
    /// `c = rate_num / 2^rate_shift`.
    rate_num: u64,
    rate_shift: u32,
    /// `c·2⁶⁴ = rate_num·2^(64 − rate_shift)` (exact, `< 2¹²⁷`): a weight's exponent
    /// `c·gap` in 64.64 fixed point is `rate_fixed·gap`.
    rate_fixed: u128,
    /// Gaps are capped at this many units (`< 2⁶²`).
    cap: u64,
}

impl ScoreScale {
    /// `lambda` = 2 for arbitrary utilities, 1 for monotone ones.
    pub(crate) fn new(sensitivity: f64, epsilon: f64, lambda: f64) -> Result<Self, Error> {
        let sensitivity = check_sensitivity(sensitivity)?;
        let epsilon = check_epsilon(epsilon)?;
        if !(1e-250..=1e250).contains(&sensitivity) {
            return Err(Error::ScaleOutOfRange {
                scale: sensitivity,
                min: 1e-250,
                max: 1e250,
            });
        }
        let grid = Grid::new(floor_log2(sensitivity) - SCORE_RESOLUTION_BITS);
        // Δu/g is exact (division by a power of two); Δᵤ = ⌊Δu/g⌋ + 1 ≤ 2^21 + 1.
        let unit_sensitivity = (sensitivity / grid.granularity()).floor() as u128 + 1;
        // c = ε/(λ·Δᵤ), rounded down, then to the dyadic m/2^s below it with the
        // largest s ≤ 63 keeping m < 2^63.
        let rate = round::div_down(epsilon, round::mul_up(lambda, unit_sensitivity as f64));
        let mut shift: i32 = 63;
        let limit = (1u64 << 63) as f64;
        while shift > 0 && rate * 2f64.powi(shift) >= limit {
            shift -= 1;
        }
        let scaled = (rate * 2f64.powi(shift)).floor();
        if !(scaled >= 4096.0 && scaled < limit) {
            return Err(Error::ScaleOutOfRange {
                scale: lambda * sensitivity / epsilon,
                min: 0.0,
                max: 2f64.powi(40),
            });
        }
        let rate_num = scaled as u64;
        let rate_shift = shift as u32;
        let rate_fixed = u128::from(rate_num) << (64 - rate_shift);
        // cap = ⌈1100·2^s/m⌉ + 1 ≤ 1100·2^63/4096 + 2 < 2^62, and at most
        // ⌊(2¹²⁸ − 1)/(c·2⁶⁴)⌋ (≥ 2, and c·cap ≥ 1100 either way), so that c·gap in 64.64
        // fixed point never exceeds 128 bits.
        let cap = (((CAP_EXPONENT * 2f64.powi(shift)) / scaled).ceil() as u64 + 1)
            .min(u64::try_from(u128::MAX / rate_fixed).unwrap_or(u64::MAX));
        Ok(Self {
            grid,
            unit_sensitivity,
            rate_num,
            rate_shift,
            rate_fixed,
            cap,
        })
    }

    /// Refuses no scores and non-finite ones, before any randomness.
    pub(crate) fn validate(scores: &[f64]) -> Result<(), Error> {
        if scores.is_empty() {
            return Err(Error::EmptyInput {
                what: "the candidate scores",
            });
        }
        check_all_finite(scores)
    }

    /// Validates the scores (before any randomness) and returns them in grid units with
    /// the maximum.
    pub(crate) fn units(&self, scores: &[f64]) -> Result<(Vec<i128>, i128), Error> {
        Self::validate(scores)?;
        let units: Vec<i128> = scores.iter().map(|&s| self.grid.to_units(s)).collect();
        let best = units.iter().copied().max().unwrap_or(0);
        Ok((units, best))
    }

    /// Validates the scores (before any randomness) and returns the best one in grid
    /// units, `OPT = maxᵣ ũᵣ` (the rounding to the grid is monotone, so this is the
    /// rounded maximum): for the one-pass samplers, which round each score as they go.
    #[inline]
    pub(crate) fn best_units(&self, scores: &[f64]) -> Result<i128, Error> {
        Self::validate(scores)?;
        let best = scores
            .iter()
            .fold(f64::NEG_INFINITY, |a, &b| if b > a { b } else { a });
        Ok(self.grid.to_units(best))
    }

    /// The capped gap `min(OPT − ũ, cap)` (`ũ ≤ OPT`, both at most `2¹⁰⁰` in magnitude).
    #[inline(always)]
    pub(crate) fn gap(&self, best: i128, unit: i128) -> u64 {
        debug_assert!(unit <= best);
        // cap < 2⁶²: the minimum fits. (A comparison, not `min`: unoptimised builds
        // call `min`, once per candidate.)
        let gap = (best - unit) as u128;
        if gap < self.cap as u128 {
            gap as u64
        } else {
            self.cap
        }
    }

    /// The exponent `c·gap` of the weight `exp(−c·gap)` of a candidate with grid score
    /// `unit`, in 64.64 fixed point, exactly: `c·2⁶⁴·gap < 2¹²⁸` (the cap sees to it).
    #[inline(always)]
    pub(crate) fn exponent_of(&self, best: i128, unit: i128) -> u128 {
        self.rate_fixed * self.gap(best, unit) as u128
    }

    /// `exp(−c·gap)` as an `f64` (for tests and display only).
    pub(crate) fn weight(&self, gap: u64) -> f64 {
        (-(self.rate_num as f64 / 2f64.powi(self.rate_shift as i32)) * gap as f64).exp()
    }

    pub(crate) fn unit_sensitivity(&self) -> u128 {
        self.unit_sensitivity
    }

    pub(crate) fn grid(&self) -> Grid {
        self.grid
    }
}

/// The exponential mechanism (McSherry & Talwar 2007): given scores `u(x, r)` of the
/// candidates `r = 0, …, n−1`, output `r` with probability
/// `∝ exp(ε·u(x, r)/(2Δu))`, or `∝ exp(ε·u(x, r)/Δu)` for monotone utilities.
///
/// * **Guarantee:** pure ε-DP; [`release_top_k`](Self::release_top_k) (peeling: k
///   sequential selections without replacement) is `k·ε`-DP by basic composition.
/// * **Sensitivity:** `Δu` bounds `|u(x, r) − u(x′, r)|` for every candidate `r` and
///   neighbouring `x, x′` (the L∞ sensitivity of the score vector) under the relation it
///   was computed for. [`Monotonicity::Monotone`] additionally requires that between
///   any neighbours all scores move in the same direction (e.g. counts under add/remove).
/// * **Output:** the index only.
/// * **Exactness:** scores are clamped and rounded to a public grid `g ≤ Δu·2⁻²⁰`, the
///   rounding is charged to the sensitivity (`Δᵤ = ⌊Δu/g⌋ + 1` units), and the rate
///   `ε/(2Δᵤ)` is rounded down to a dyadic rational, so the loss never exceeds ε (the
///   effective ε is at least `ε·(1 − 2⁻¹⁹)` for ε ≥ 10⁻⁶). The sampler inverts the
///   cumulative weights `exp(−ε′(OPT − ũᵣ)/(2Δᵤ))`, each enclosed to 64 bits with a
///   certified error, with one uniform word; an undecided word (probability at most
///   `130·n²·2⁻⁶⁴`) draws further words and refines every weight exactly. Gaps beyond
///   the point where the weight is below `e^(−1100)` are capped, which is itself an
///   exact exponential mechanism for a utility of the same sensitivity (see the source).
/// * **Accuracy:** `Pr[u(output) ≤ OPT − (2Δu/ε)(ln n + t)] ≤ e^(−t)` (`Δu/ε` for
///   monotone) — [`accuracy_gap`](Self::accuracy_gap).
/// * **Timing:** one random word per selection whatever the scores (more only on the
///   fallback event above), and the same work for every score vector of a given
///   length: the words drawn reveal nothing about the scores.
///
/// ```
/// use dpmech::Exponential;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mechanism = Exponential::new(1.0, 1.0)?; // Δu = 1, ε = 1
/// let votes = [10.0, 30.0, 12.0];
/// let winner = mechanism.release(&votes, &mut ChaCha20Rng::seed_from_u64(1))?;
/// assert!(winner < 3);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exponential {
    sensitivity: f64,
    epsilon: f64,
    scores: Monotonicity,
    scale: ScoreScale,
}

impl Exponential {
    /// The exponential mechanism for scores of sensitivity `sensitivity` at level
    /// `epsilon`: `Pr[r] ∝ exp(ε·u/(2Δu))`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`], and
    /// [`Error::ScaleOutOfRange`] when the sensitivity lies outside `[1e-250, 1e250]` or
    /// `ε/Δu` is too small to be represented on the score grid.
    pub fn new(sensitivity: f64, epsilon: f64) -> Result<Self, Error> {
        Self::with_monotonicity(sensitivity, epsilon, Monotonicity::General)
    }

    /// The exponential mechanism for scores of the given [`Monotonicity`]:
    /// `Pr[r] ∝ exp(ε·u/(2Δu))`, or `exp(ε·u/Δu)` for monotone utilities.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`], and
    /// [`Error::ScaleOutOfRange`] when the sensitivity lies outside `[1e-250, 1e250]` or
    /// `ε/Δu` is too small to be represented on the score grid.
    pub fn with_monotonicity(sensitivity: f64, epsilon: f64, scores: Monotonicity) -> Result<Self, Error> {
        let scale = ScoreScale::new(sensitivity, epsilon, scores.factor())?;
        Ok(Self {
            sensitivity,
            epsilon,
            scores,
            scale,
        })
    }

    /// The index of the selected candidate. Scores must be finite and non-empty
    /// (checked before any randomness).
    ///
    /// # Errors
    ///
    /// [`Error::EmptyInput`] for no scores and [`Error::NonFiniteValue`] for a NaN or
    /// infinite score, before any randomness is drawn.
    pub fn release<R: CryptoRng + ?Sized>(&self, scores: &[f64], rng: &mut R) -> Result<usize, Error> {
        let best = self.scale.best_units(scores)?;
        let grid = self.scale.grid;
        let mut bits = BitSource::new(rng);
        Ok(self.select(scores.len(), move |i| grid.to_units(scores[i]), best, &mut bits))
    }

    /// Inversion of the exact cumulative weights `exp(−c·gapᵢ)` of the `n` candidates
    /// with grid scores `unit_of(i)` and maximum `best`, in one pass over them (one word
    /// per selection, more only on a fallback event of probability `≤ 130·n²·2⁻⁶⁴`; see
    /// `sampling::fixed_exp`): the words drawn do not depend on the scores.
    #[inline(always)]
    fn select<R: CryptoRng + ?Sized>(
        &self,
        n: usize,
        unit_of: impl Fn(usize) -> i128,
        best: i128,
        bits: &mut BitSource<'_, R>,
    ) -> usize {
        let scale = self.scale;
        sample_index_exp_neg(n, move |i| scale.exponent_of(best, unit_of(i)), bits)
    }

    /// Top-k by peeling: `k` successive selections, each removing the chosen candidate;
    /// returns the indices in selection order. `k·ε`-DP
    /// ([`top_k_privacy_loss`](Self::top_k_privacy_loss)). `k` must be at most the
    /// number of candidates.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyInput`] for no scores and [`Error::NonFiniteValue`] for a NaN or
    /// infinite score, before any randomness is drawn.
    /// [`Error::InvalidParameter`] (`k`) when `k` exceeds the number of candidates.
    pub fn release_top_k<R: CryptoRng + ?Sized>(
        &self,
        scores: &[f64],
        k: usize,
        rng: &mut R,
    ) -> Result<Vec<usize>, Error> {
        let (units, _) = self.scale.units(scores)?;
        if k > units.len() {
            return Err(Error::InvalidParameter {
                name: "k",
                value: k as f64,
                reason: "k must not exceed the number of candidates",
            });
        }
        let mut remaining: Vec<(usize, i128)> = units.into_iter().enumerate().collect();
        let mut chosen = Vec::with_capacity(k);
        let mut bits = BitSource::new(rng);
        for _ in 0..k {
            let best = remaining.iter().map(|&(_, u)| u).max().unwrap_or(0);
            let pick = self.select(remaining.len(), |i| remaining[i].1, best, &mut bits);
            chosen.push(remaining.swap_remove(pick).0);
        }
        Ok(chosen)
    }

    /// The exact selection probabilities of this implementation for `scores`, as
    /// `f64` (for testing and explanation; not used to sample).
    ///
    /// # Errors
    ///
    /// [`Error::EmptyInput`] for no scores and [`Error::NonFiniteValue`] for a NaN or
    /// infinite score.
    pub fn probabilities(&self, scores: &[f64]) -> Result<Vec<f64>, Error> {
        let (units, best) = self.scale.units(scores)?;
        let weights: Vec<f64> = units
            .iter()
            .map(|&u| self.scale.weight(self.scale.gap(best, u)))
            .collect();
        let total: f64 = weights.iter().sum();
        Ok(weights.into_iter().map(|w| w / total).collect())
    }

    /// The accuracy bound: with probability at least `1 − e^(−t)` the selected score is
    /// above `OPT − accuracy_gap(n, t)`, where `accuracy_gap = (2Δu/ε)(ln n + t)`
    /// (`(Δu/ε)(ln n + t)` for monotone utilities), up to the grid rounding `g`
    /// (rounded up).
    ///
    /// ```
    /// use dpmech::Exponential;
    /// let mechanism = Exponential::new(1.0, 1.0)?; // Δu = 1, ε = 1
    /// // With probability ≥ 1 − e^(−3) the choice among 10 is within 2(ln 10 + 3) of the best.
    /// let gap = mechanism.accuracy_gap(10, 3.0)?;
    /// assert!((gap - 2.0 * (10f64.ln() + 3.0)).abs() < 1e-5);
    /// assert!(mechanism.accuracy_gap(10, f64::NAN).is_err());
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`t`) unless `t` is finite and `≥ 0`;
    /// [`Error::EmptyInput`] for no candidates; [`Error::Unattainable`] when the gap
    /// overflows `f64`.
    pub fn accuracy_gap(&self, candidates: usize, t: f64) -> Result<f64, Error> {
        if !(t.is_finite() && t >= 0.0) {
            return Err(Error::InvalidParameter {
                name: "t",
                value: t,
                reason: "the confidence exponent t (level 1 - e^-t) must be finite and >= 0",
            });
        }
        if candidates == 0 {
            return Err(Error::EmptyInput {
                what: "the candidates",
            });
        }
        let lambda = self.scores.factor();
        let log_n = round::ln_up(round::u64_up(candidates as u64));
        super::accuracy::finite_half_width(round::add_up(
            round::mul_up(
                round::div_up(round::mul_up(lambda, self.sensitivity), self.epsilon),
                round::add_up(log_n, t),
            ),
            self.scale.grid().granularity(),
        ))
    }

    /// The declared monotonicity of the scores.
    pub fn monotonicity(&self) -> Monotonicity {
        self.scores
    }

    /// The score grid `g`.
    pub fn granularity(&self) -> f64 {
        self.scale.grid().granularity()
    }

    /// `PrivacyLoss::Pure { epsilon }` for one selection.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }

    /// `PrivacyLoss::Pure { k·ε }` (rounded up) for [`release_top_k`](Self::release_top_k).
    pub fn top_k_privacy_loss(&self, k: usize) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: round::mul_up(self.epsilon, crate::privacy::round::u64_up(k as u64)),
        }
    }
}

/// Permute-and-flip (McKenna & Sheldon 2020): visit the candidates in a uniformly
/// random order and output the first `r` for which a coin with probability
/// `exp(ε(u(x, r) − OPT)/(2Δu))` comes up heads (the best candidate always does).
///
/// * **Guarantee:** pure ε-DP, with the same sensitivity notion as [`Exponential`]
///   (L∞ over candidates, under the relation `Δu` was computed for). Never worse in
///   expected score than the exponential mechanism (McKenna & Sheldon 2020).
/// * **Output:** the index only. It is distributed exactly as report-noisy-max with
///   exponential noise (Ding et al. 2021), which is how
///   [`ReportNoisyMax::exponential`](super::ReportNoisyMax::exponential) samples.
/// * **Exactness:** the same public score grid, charged rounding and rounded-down
///   rate as [`Exponential`]; the coins are one-word certified Bernoulli(`exp(−γ)`)
///   trials and the final choice an exact uniform integer.
/// * **Sampling:** **every** candidate's coin is flipped, in index order, and the
///   output is a uniformly chosen candidate among those that came up heads (the best
///   one always does). That is permute-and-flip exactly: with the coins independent of
///   a uniform order, the first heads in that order is uniform over the heads.
/// * **Timing:** one word per coin and one for the choice, `n + 1` words per release
///   whatever the scores (more only on fallback events of probability `≤ 2⁻⁵⁸` per coin
///   and `< n·2⁻⁶⁴` for the choice). The price: `n` coins per release instead of the
///   `O(n / Σ weights)` an early exit would need.
///
/// ```
/// use dpmech::PermuteAndFlip;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mechanism = PermuteAndFlip::new(1.0, 1.0)?;
/// let winner = mechanism.release(&[10.0, 30.0, 12.0], &mut ChaCha20Rng::seed_from_u64(1))?;
/// assert!(winner < 3);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PermuteAndFlip {
    epsilon: f64,
    scale: ScoreScale,
}

impl PermuteAndFlip {
    /// Permute-and-flip for scores of sensitivity `sensitivity` at level `epsilon`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSensitivity`], [`Error::InvalidEpsilon`], and
    /// [`Error::ScaleOutOfRange`] when the sensitivity lies outside `[1e-250, 1e250]` or
    /// `ε/Δu` is too small to be represented on the score grid.
    pub fn new(sensitivity: f64, epsilon: f64) -> Result<Self, Error> {
        Ok(Self {
            epsilon,
            scale: ScoreScale::new(sensitivity, epsilon, 2.0)?,
        })
    }

    /// The index of the selected candidate (scores finite and non-empty, checked
    /// before any randomness).
    ///
    /// # Errors
    ///
    /// [`Error::EmptyInput`] for no scores and [`Error::NonFiniteValue`] for a NaN or
    /// infinite score, before any randomness is drawn.
    pub fn release<R: CryptoRng + ?Sized>(&self, scores: &[f64], rng: &mut R) -> Result<usize, Error> {
        let best = self.scale.best_units(scores)?;
        let grid = self.scale.grid;
        let mut bits = BitSource::new(rng);
        Ok(permute_and_flip(
            &self.scale,
            scores.len(),
            move |i| grid.to_units(scores[i]),
            best,
            &mut bits,
        ))
    }

    /// [`release`](Self::release) for scores given as grid units already: `unit_of(i)`
    /// is candidate `i`'s score in units of [`granularity`](Self::granularity) (called
    /// once per index, in increasing order) and `best` their maximum. The same words and
    /// the same index as `release` on the scores `unit_of(i)·g` whenever those are exact
    /// `f64` (`|unit_of(i)| < 2⁵³`), which `release` rounds back to these integers.
    pub(crate) fn release_units<R: CryptoRng + ?Sized>(
        &self,
        n: usize,
        unit_of: impl FnMut(usize) -> i128,
        best: i128,
        rng: &mut R,
    ) -> usize {
        permute_and_flip(&self.scale, n, unit_of, best, &mut BitSource::new(rng))
    }

    /// The score grid `g`.
    pub fn granularity(&self) -> f64 {
        self.scale.grid().granularity()
    }

    /// `PrivacyLoss::Pure { epsilon }`.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }
}

/// Coins whose words [`permute_and_flip`] draws in one generator call (and whose
/// outcomes fill one 64-bit mask).
const COIN_BATCH: usize = 64;

/// Permute-and-flip on grid scores (shared with report-noisy-max): a coin
/// Bernoulli(`exp(−c·gapᵣ)`) for **every** candidate `r` (grid score `unit_of(r)`, called
/// once per `r` in increasing order; maximum `best`), then a uniform choice among the
/// heads.
///
/// **Why this is permute-and-flip.** Permute-and-flip visits the candidates in a
/// uniform order `π` and returns the first heads. Flipping every coin (those after the
/// first heads are ignored) changes nothing, and then the coins are independent of
/// `π`: given the set `H` of heads (never empty: the best candidate's weight is 1), the
/// first element of `H` in a uniform order is uniform over `H`. So drawing `H` and
/// choosing uniformly in it has exactly the output distribution of permute-and-flip,
/// without drawing the order.
///
/// **Words.** The coins' words are drawn `COIN_BATCH` at a time
/// ([`BitSource::fill_bytes`]); each coin is decided by its word except on a fallback
/// event of probability `≤ 2⁻⁵⁸` (further words), and the choice is one word
/// ([`uniform_below_word`], a second with probability `< n·2⁻⁶⁴`): `n + 1` words
/// whatever the scores.
#[inline(always)]
pub(crate) fn permute_and_flip<R: CryptoRng + ?Sized>(
    scale: &ScoreScale,
    n: usize,
    mut unit_of: impl FnMut(usize) -> i128,
    best: i128,
    bits: &mut BitSource<'_, R>,
) -> usize {
    let (scale, coins) = (*scale, ExpNegLower::new());
    // One bit per coin, set for heads, COIN_BATCH coins to a mask.
    with_scratch(n.div_ceil(COIN_BATCH), |masks: &mut [u64]| {
        let mut heads = 0u64;
        let mut bytes = [0u8; 8 * COIN_BATCH];
        for (batch, mask) in masks.iter_mut().enumerate() {
            let start = batch * COIN_BATCH;
            let len = if n - start < COIN_BATCH {
                n - start
            } else {
                COIN_BATCH
            };
            bits.fill_bytes(&mut bytes[..8 * len]);
            // Indexing, not iterator adapters, per coin: unoptimised builds (examples,
            // debug) make every adapter a call.
            for k in 0..len {
                let b = 8 * k;
                let u = u64::from_le_bytes([
                    bytes[b],
                    bytes[b + 1],
                    bytes[b + 2],
                    bytes[b + 3],
                    bytes[b + 4],
                    bytes[b + 5],
                    bytes[b + 6],
                    bytes[b + 7],
                ]);
                let flip = coins.coin(scale.exponent_of(best, unit_of(start + k)), u, bits);
                *mask |= (flip as u64) << k;
            }
            heads += mask.count_ones() as u64;
        }
        // The chosen heads, counted from the first.
        let mut rank = uniform_below_word(bits, heads.max(1));
        for (batch, &mask) in masks.iter().enumerate() {
            let count = u64::from(mask.count_ones());
            if rank < count {
                // Clear the `rank` lowest set bits; the lowest remaining one is chosen.
                let mut rest = mask;
                for _ in 0..rank {
                    rest &= rest - 1;
                }
                return batch * COIN_BATCH + rest.trailing_zeros() as usize;
            }
            rank -= count;
        }
        // Not reached: the best candidate's coin always comes up heads.
        debug_assert!(false, "no heads");
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, TryCryptoRng, TryRng};
    use core::convert::Infallible;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    /// ChaCha20's words with some replaced: word number `p` of the stream (counting
    /// every word drawn, `fill_bytes` eight bytes to a word) is `planted[p]` when set.
    /// Test-only: it lets a test put a coin's word in its exact band on purpose.
    struct Planted {
        inner: ChaCha20Rng,
        drawn: u64,
        planted: std::collections::BTreeMap<u64, u64>,
    }

    impl Planted {
        fn new(seed: u64, planted: std::collections::BTreeMap<u64, u64>) -> Self {
            let inner = ChaCha20Rng::seed_from_u64(seed);
            Self {
                inner,
                drawn: 0,
                planted,
            }
        }

        fn word(&mut self) -> u64 {
            let fresh = self.inner.next_u64();
            let word = self.planted.get(&self.drawn).copied().unwrap_or(fresh);
            self.drawn += 1;
            word
        }

        /// The generator's state: the words drawn and the inner stream's position.
        fn state(&self) -> (u64, u128) {
            (self.drawn, self.inner.get_word_pos())
        }
    }

    impl TryRng for Planted {
        type Error = Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Infallible> {
            Ok(self.word() as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Infallible> {
            Ok(self.word())
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
            for chunk in dst.chunks_mut(8) {
                let word = self.word().to_le_bytes();
                chunk.copy_from_slice(&word[..chunk.len()]);
            }
            Ok(())
        }
    }

    impl TryCryptoRng for Planted {}

    /// Random gaps in score-grid units for `n` candidates, the best (gap 0) at a random
    /// index: ties, small gaps, gaps around the cap and beyond it up to 2⁵², by case.
    fn random_gaps(rng: &mut ChaCha20Rng, n: usize, cap: u64, case: u64) -> Vec<u64> {
        let mut gaps: Vec<u64> = (0..n)
            .map(|_| match (case + rng.next_u64() % 5) % 5 {
                0 => rng.next_u64() % 4,           // ties near the best
                1 => rng.next_u64() % (1 << 22),   // one unit of Δ and a few
                2 => rng.next_u64() % cap.max(1),  // anywhere below the cap
                3 => cap - 2 + rng.next_u64() % 5, // around the cap
                _ => rng.next_u64() % (1 << 52),   // far, mostly capped
            })
            .collect();
        gaps[(rng.next_u64() % n as u64) as usize] = 0;
        gaps
    }

    /// `PermuteAndFlip::release_units` (the quantiles' integer path) against
    /// `PermuteAndFlip::release` on the `f64` scores `−gap·g` (the path the quantiles
    /// took before, issue 42): the same index and the same generator state afterwards
    /// (words drawn and stream position), over 300 seeded gap vectors of 1 to 2¹⁷
    /// candidates at several scales, with words planted in the exact band of coins of
    /// the first batch (each one takes the fallback, which draws further words).
    #[test]
    fn integer_scores_select_as_the_float_scores_did() {
        let coins = ExpNegLower::new();
        let mut rng = ChaCha20Rng::seed_from_u64(42);
        let (mut fallbacks, mut in_band) = (0u64, 0u64);
        let sizes = [1usize, 2, 3, 63, 64, 65, 129, 1000, 4097, 1 << 17];
        for case in 0..300u64 {
            let n = if case % 11 == 10 {
                1 + (rng.next_u64() % (1 << 17)) as usize
            } else {
                sizes[case as usize % sizes.len()]
            };
            let (sensitivity, epsilon) =
                [(0.5, 1.0), (1.0, 0.1), (3.7, 5.0), (1e-3, 2.0), (2.0, 40.0)][case as usize % 5];
            let mechanism = PermuteAndFlip::new(sensitivity, epsilon).unwrap();
            let scale = mechanism.scale;
            let gaps = random_gaps(&mut rng, n, scale.cap, case);
            let g = mechanism.granularity();
            let scores: Vec<f64> = gaps.iter().map(|&k| 0.0 - k as f64 * g).collect();
            // Band words for some coins of the first batch: lower(x) + d, d < W′.
            let mut planted = std::collections::BTreeMap::new();
            for (p, &gap) in gaps.iter().enumerate().take(COIN_BATCH) {
                if rng.next_u64() % 4 == 0 {
                    let lo = coins.lower(scale.exponent_of(0, -(gap as i128)));
                    if let Some(u) = lo.checked_add(rng.next_u64() % coins.band_width()) {
                        planted.insert(p as u64, u);
                    }
                }
            }
            in_band += planted.len() as u64;
            let seed = rng.next_u64();
            let mut old = Planted::new(seed, planted.clone());
            let mut new = Planted::new(seed, planted);
            let want = mechanism.release(&scores, &mut old).unwrap();
            let got = mechanism.release_units(n, |i| -(gaps[i] as i128), 0, &mut new);
            assert_eq!(got, want, "case {case}, n = {n}");
            assert_eq!(new.state(), old.state(), "case {case}, n = {n}");
            assert_eq!(new.word(), old.word(), "case {case}");
            fallbacks += old.state().0 - (n as u64 + 1);
        }
        // Every planted word takes the exact comparison; it draws further words unless
        // its first word decides at a higher precision (x = 0, or a capped weight).
        assert!(
            in_band >= 1000 && fallbacks >= 100,
            "{in_band} planted, {fallbacks} further words"
        );
        println!("{in_band} coins in the band, {fallbacks} further words");
    }
}
