//! The discrete Gaussian distribution `Pr[Z = z] ∝ exp(−z²/(2σ²))` on the integers,
//! sampled exactly for a rational variance `σ² = num/den`.

use super::certified::Big;
use super::fixed_exp::{Reciprocal, bernoulli_in_band, enclose_coarse, uniform_in_band};
use super::{BitSource, DiscreteLaplace, Rational, saturate_i64};
use crate::Error;
use core::cmp::Ordering;
use rand_core::CryptoRng;
use std::sync::Arc;

/// Largest supported numerator of `σ² = num/den` (`2¹²⁴`, so `σ < 2⁶²·√den`).
pub const MAX_VARIANCE_NUM: u128 = 1 << 124;

/// Exact sampler of the discrete Gaussian `Pr[Z = z] = exp(−z²/(2σ²)) / Σ_y exp(−y²/(2σ²))`
/// on ℤ, for a rational variance parameter `σ² = num/den` (`1 ≤ num ≤ 2¹²⁴`,
/// `1 ≤ den < 2⁶⁴`).
///
/// **Algorithm** (Canonne, Kamath & Steinke 2020, Algorithm 3, with `t = ⌈σ⌉` instead
/// of their `⌊σ⌋ + 1`: the same for every non-integer σ, and at integer σ a proposal
/// closer to the target — at σ = 1 it is accepted with probability 0.70 instead of
/// 0.54; any `t > 0` gives the same output law): with `t = ⌈σ⌉`,
/// draw `Y` from the discrete Laplace distribution of scale `t` ([`DiscreteLaplace`],
/// exact) and accept it with probability `exp(−(|Y| − σ²/t)²/(2σ²))`; otherwise repeat.
/// Since `e^(−|y|/t) · e^(−(|y| − σ²/t)²/(2σ²)) = e^(−y²/(2σ²)) · e^(−σ²/(2t²))`, an
/// accepted `Y` has exactly the discrete Gaussian distribution. The acceptance exponent
/// is the rational
///
/// ```text
/// γ = (|Y|·t·den − num)² / (2·num·den·t²)
/// ```
///
/// and the acceptance is decided by one uniform `U` compared with certified
/// enclosures: γ is bracketed by dyadic rationals `x_lo/2⁶³ ≤ γ ≤ x_hi/2⁶³` by
/// multiplication with a precomputed reciprocal, no division (for `D < 2⁶⁴` of `D`
/// itself, at most 65 units wide; wider `D` after truncating both sides by the same
/// shift, of `⌊D/2ˢ⌋`, at most 130 units; at integer σ, where `γ = (x − t)²/(2t²)`,
/// from a 64-bit square of a fixed-point `|x − t|/t`, at most 290 units, see
/// `integer_bracket`), and `exp(−x_lo/2⁶³)` is bounded below, to within 64 units of
/// `2⁻⁶⁴`, by the table-driven fixed-point exponential of the crate's selection coins
/// (with the two lowest bytes of the exponent's fraction dropped, which moves it by
/// less than 2¹⁵ units of `2⁻⁶³`). `U` below a certified lower bound of
/// `exp(−x_hi/2⁶³)` accepts, above the upper bound of `exp(−x_lo/2⁶³)` rejects; only
/// when `U`'s known bits leave it between the two is `U` extended with further words and
/// compared with arbitrary-precision enclosures of `exp(−γ)` (exact rational γ) until
/// decided.
///
/// **One comparison for two acceptances** (`t ≥ 64`). There the discrete Laplace
/// proposal is itself a rejection sampler: `Y = ±(M·Q + R)` from the fixed words of one
/// trial, `R` uniform on `[0, M)` to be accepted with probability `e^(−R/t)` by a
/// uniform `V` of the same trial (see [`DiscreteLaplace`]). Here `V` decides both at
/// once: it is compared with `exp(−(γ + R/t))` (`2⁶³·R/t` bracketed to within 2 units
/// by a reciprocal of `t`, so the whole exponent to within 292), and the pair
/// (negative, 0) is rejected as in the discrete Laplace sampler. A trial then yields
/// `y` and is accepted with probability `∝ α^(M·Q)·e^(−R/t)·e^(−γ(y)) = α^|y|·e^(−γ(y))`
/// (`α = e^(−1/t)`) — the same as a discrete Laplace proposal followed by its
/// Gaussian acceptance, with one uniform and one exponential instead of two. No
/// floating point is involved; the output distribution is **exactly** the discrete
/// Gaussian.
///
/// **Integer widths.** With `num ≤ 2¹²⁴` and `den < 2⁶⁴`: `t ≤ 2⁶²+1 < 2⁶³`,
/// `t·den < 2¹²⁷`, and the discrete Laplace sample satisfies `|Y| < 2¹²⁷` (it is an
/// `i128`), so `a = ||Y|·t·den − num| < 2²⁵⁴`, `a² < 2⁵⁰⁸`, and the denominator
/// `D = 2·num·den·t² < 2³¹⁵`: all fit the fixed 512-bit integers used here. When
/// `a < 2⁶⁴` and `D < 2⁶⁴` (σ up to about 2¹⁵ with a small denominator, the common
/// case) the bracket is computed in 128-bit arithmetic.
///
/// **Cost.** A proposal is accepted with probability
/// `(1 − e^(−1/t))/(1 + e^(−1/t)) · e^(−σ²/(2t²)) · Σ_y e^(−y²/(2σ²))`: about 0.52 at
/// σ = 0.5 and 0.54 at σ = 1, tending to `e^(−1/2)·√(π/2) ≈ 0.76` for large σ, so
/// fewer than two proposals on average. Below `t = 64` a proposal is one discrete
/// Laplace sample (one word per trial) and one word for the acceptance; from `t = 64`
/// on it is one discrete Laplace trial — 2 words while `m ≤ 20` (`t < 2²⁶`, `V` the
/// spare `64 − m` bits of `R`'s word), 3 above — and the acceptance needs no further
/// word.
///
/// **Draw independence.** Every proposal draws a fixed number of words (a discrete
/// Laplace sample, whose word count is independent of its value, and one word; or one
/// trial's fixed words). Proposals are i.i.d. and, as in any rejection sampler, the
/// number of proposals is independent of the accepted value. So outside the fallback
/// event `F` (some comparison needed further words) the number of words drawn is
/// statistically independent of the sample. **Bound:** the acceptance band holds at
/// most `66 246` word values (units of `2⁻⁶⁴`; see `BAND_SPAN`). Below `t = 64`, per
/// proposal, `Pr[F] < 2⁻⁴²·⁷` (one discrete Laplace sample, see its docs)
/// `+ 66 246·2⁻⁶⁴ < 2⁻⁴²·⁶`. From `t = 64` on, per trial, the `Q` word falls back with
/// probability `< 2⁻⁵⁰` and `V`, known to `64 − m ≥ 44` bits, is undecided with
/// probability at most `(66 246 + 2·2ᵐ)/2⁶⁴ < 2⁻⁴²·⁹`. Fewer than 3 proposals on average,
/// since the acceptance probability above is at least 0.35 for every σ (σ ≤ 1/2:
/// `t = 1`, at least `0.462·e^(−1/8) > 0.40`; 1/2 < σ < 1: at least
/// `0.462·e^(−1/2)·(1 + 2e^(−2)) > 0.35`; σ ≥ 1: `σ ≤ t < σ + 1`, `tanh(1/(2t)) ≥
/// (1 − 1/(12t²))/(2t)` and the sum is at least `√(2π)·σ` (Poisson summation), which give
/// more than 0.37; numerically its minimum is 0.445, near σ = 0.3, and it is above 0.5
/// for σ ≥ 1/2), and fewer than `1.07` trials per proposal (the discrete Laplace bound),
/// so fewer than `3.3` trials per sample. The expected number of fallback events is at
/// most the expected number of proposals (trials) times the per-proposal (per-trial)
/// bound, so `Pr[F] < 3·2⁻⁴²·⁶` or `3.3·(2⁻⁵⁰ + 2⁻⁴²·⁹)`, both `< 2⁻⁴¹` per sample, for
/// every supported σ.
///
/// **Timing.** Outside `F` the number of words, proposals and table look-ups does not
/// depend on the sample. For `t ≤ 1024` the acceptance band of every proposal that
/// occurs with probability above `2⁻⁵⁰` is read from a table built at construction
/// (the same bands as computed, so the same decisions; the look-up's address follows
/// `|Y|`, and so does whether it hits the cache: a dudect-style test at σ = 1000 sees
/// the difference, see the README); beyond it, and for larger `t`, the acceptance
/// test computes its bracket — at integer σ from a 64-bit square (capped, with no
/// product, from `|x − t| ≥ 12t` on); otherwise with 128-bit
/// arithmetic (while `D` and the proposal's offset fit 64 bits), a 256-bit square
/// (while `x·t·den < 2¹²⁸`) or 512-bit products: which one depends on the size of the
/// proposal, so that timing is not constant (all give certified brackets; the last
/// two the same one).
///
/// ```
/// use dpmech::sampling::{DiscreteGaussian, Rational};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let noise = DiscreteGaussian::new(Rational::new(9, 1)?); // σ² = 9, σ = 3
/// let z = noise.sample(&mut ChaCha20Rng::seed_from_u64(5));
/// # let _ = z;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscreteGaussian {
    num: u128,
    den: u64,
    /// `t = ⌈σ⌉`.
    t: u64,
    /// `t·den < 2¹²⁷`.
    t_den: u128,
    proposal: DiscreteLaplace,
    /// `D = 2·num·den·t²`.
    denominator: U512,
    /// `D` when it is below `2⁶⁴` (enables the 128-bit path).
    small_denominator: Option<u128>,
    /// The reciprocal of `⌊D/2ˢ⌋` (of `D` itself when `D < 2⁶⁴`): every bracket is
    /// a multiplication by it, no division.
    reciprocal: Reciprocal,
    /// `s = max(0, bitlen(D) − 64)` and `⌊D/2ˢ⌋ < 2⁶⁴`, for the 256-bit path.
    d_shift: u32,
    d_top: u128,
    /// `M − 1` for the proposal's blocks `G = M·Q + R` (`R = x & block_mask`); 0 when
    /// `M = 1` (`t < 64`), where `R`'s acceptance does not exist.
    block_mask: u64,
    /// The reciprocal of `t`, for the brackets of `R/t` and, at integer σ, of `|x − t|/t`.
    t_reciprocal: Reciprocal,
    /// Whether `σ² = t²` exactly (an integer σ, e.g. every [`crate::Gaussian`]
    /// release): then `γ = (x − t)²/(2t²)`, bracketed by [`integer_bracket`].
    ///
    /// [`integer_bracket`]: Self::integer_bracket
    integer_sigma: bool,
    /// The lower ends of the acceptance bands of `x = 0, 1, …` while a proposal reaches
    /// `x` with probability above `2⁻⁵⁰` (for `t ≤ MAX_BAND_T`; empty otherwise): the
    /// same values [`band`](Self::band) computes, looked up instead.
    bands: Arc<[u64]>,
}

/// The span `above − below` of every acceptance band (see
/// [`band`](DiscreteGaussian::band)): `63 + 2·(292 + 2¹⁵ − 1) = 66 245`.
const BAND_SPAN: u64 = 63 + 2 * (292 + (1 << 15) - 1);

/// The largest proposal scale with a table of acceptance bands (at most
/// `⌈51·ln 2·1024⌉ + 1 = 36 201` entries of 8 bytes, 283 KiB).
const MAX_BAND_T: u64 = 1024;

impl DiscreteGaussian {
    /// The discrete Gaussian with variance parameter `σ² = sigma_squared`.
    pub fn new(sigma_squared: Rational) -> Self {
        Self::build(sigma_squared.num() as u128, sigma_squared.den())
    }

    /// The discrete Gaussian with `σ² = num/den`, for `1 ≤ num ≤ 2¹²⁴` and any
    /// `den ≥ 1`; [`Error::InvalidParameter`] otherwise.
    pub fn from_ratio(num: u128, den: u64) -> Result<Self, Error> {
        if num == 0 || num > MAX_VARIANCE_NUM {
            return Err(Error::InvalidParameter {
                name: "sigma_squared numerator",
                value: num as f64,
                reason: "must lie in [1, 2^124]",
            });
        }
        if den == 0 {
            return Err(Error::InvalidParameter {
                name: "sigma_squared denominator",
                value: 0.0,
                reason: "must be at least 1",
            });
        }
        Ok(Self::build(num, den))
    }

    fn build(num: u128, den: u64) -> Self {
        // ⌊√(num/den)⌋ = ⌊√⌊num/den⌋⌋ for non-negative reals.
        let floor_sigma = (num / den as u128).isqrt() as u64; // ≤ 2^62
        // ⌈σ⌉: ⌊σ⌋ when σ² = ⌊σ⌋² exactly (an integer σ ≥ 1), else ⌊σ⌋ + 1.
        let square = u128::from(floor_sigma) * u128::from(floor_sigma);
        let integer = floor_sigma > 0 && square.checked_mul(u128::from(den)) == Some(num);
        let t = if integer { floor_sigma } else { floor_sigma + 1 };
        let t_den = t as u128 * den as u128;
        let proposal = DiscreteLaplace::new(Rational::new(t, 1).expect("t ≥ 1"));
        let denominator = U512::from_u128(2 * num)
            .mul(&U512::from_u128(den as u128))
            .mul(&U512::from_u128(t as u128 * t as u128));
        let small_denominator = denominator.to_u128().filter(|&d| d <= u64::MAX as u128);
        let d_shift = denominator.bit_len().saturating_sub(64);
        let d_top = denominator
            .shr(d_shift)
            .to_u128()
            .expect("at most 64 bits after the shift");
        let reciprocal = Reciprocal::new(d_top as u64);
        let block_mask = proposal.block_mask();
        let mut noise = Self {
            num,
            den,
            t,
            t_den,
            proposal,
            denominator,
            small_denominator,
            reciprocal,
            d_shift,
            d_top,
            block_mask,
            t_reciprocal: Reciprocal::new(t),
            integer_sigma: integer,
            bands: Arc::new([]),
        };
        if t <= MAX_BAND_T {
            // Pr[|Y| ≥ x] = 2αˣ/(1 + α) ≤ 2^(1 − x/(t·ln 2)) ≤ 2⁻⁵⁰ from x = 51·ln 2·t on.
            let len = (51.0 * core::f64::consts::LN_2 * t as f64).ceil() as u128 + 1;
            noise.bands = (0..len).map(|x| noise.band(x).0).collect();
        }
        noise
    }

    /// `σ² = num/den` as `(num, den)`.
    pub fn sigma_squared(&self) -> (u128, u64) {
        (self.num, self.den)
    }

    /// σ as the nearest `f64` (for display; never used on the sampling path).
    pub fn sigma(&self) -> f64 {
        (self.num as f64 / self.den as f64).sqrt()
    }

    /// The proposal scale `t = ⌈σ⌉`.
    pub fn proposal_scale(&self) -> u64 {
        self.t
    }

    /// One sample, from a bit source.
    #[inline]
    pub fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        if self.block_mask == 0 {
            // t < 64: a whole discrete Laplace sample, then one word for the acceptance.
            loop {
                let y = self.proposal.sample_inlined(bits);
                let x = y.unsigned_abs();
                if bernoulli_in_band(self.band_of(x), || self.exact(x), bits) {
                    return y;
                }
            }
        }
        // t ≥ 64: one trial's fixed words; the remainder's acceptance `αᴿ` and the
        // proposal's `exp(−γ)` decided together by the trial's own uniform `V`.
        loop {
            let trial = self.proposal.draw_trial(bits);
            let x = trial.magnitude;
            let accepted = uniform_in_band(
                self.band_of(x),
                trial.uniform,
                trial.uniform_bits,
                || self.exact(x),
                bits,
            );
            // Both decisions computed, no short-circuit: (negative, 0) counts 0 twice.
            if accepted & !(trial.negative & (x == 0)) {
                let x = i128::try_from(x).unwrap_or(i128::MAX);
                let mask = -i128::from(trial.negative);
                return (x ^ mask) - mask;
            }
        }
    }

    /// One sample, saturating to the `i64` range.
    #[inline]
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        saturate_i64(self.sample_bits(&mut BitSource::new(rng)))
    }

    /// The acceptance band of a proposal of magnitude `x`: from the table while it
    /// covers `x`, else computed (the same values).
    #[inline(always)]
    fn band_of(&self, x: u128) -> (u64, u64) {
        match self.bands.get(x as usize) {
            Some(&below) if x < self.bands.len() as u128 => (below, below.saturating_add(BAND_SPAN)),
            _ => self.band(x),
        }
    }

    /// The words that decide the acceptance of `x` on their own (see [`band`]): of
    /// `exp(−γ(x))`, times `αᴿ = exp(−R/t)` with `R = x & (M − 1)` when `M > 1`.
    /// The words that decide the acceptance of `x` on their own, `below..=above`
    /// with `above = below + BAND_SPAN`: for the exponent bracket `(e_lo, e_hi)`
    /// (`γ(x)`, plus `R/t` with `R = x & (M − 1)` when `M > 1`), `lo` is a lower bound
    /// of `2⁶⁴·exp(−e′/2⁶³)` for `e′ ≤ e_lo` within 2¹⁵ units ([`enclose_coarse`]), so
    /// `2⁶⁴·exp(−e_lo/2⁶³) ≤ lo + 64` and, with `w = e_hi − e′`,
    /// `2⁶⁴·exp(−e_hi/2⁶³) ≥ lo·(1 − w/2⁶³) ≥ lo − 2w`: `below = lo − 2w`. The span
    /// `63 + 2w ≤ 63 + 2·(292 + 2¹⁵ − 1)` is widened to the common [`BAND_SPAN`], so that the
    /// table needs the lower end alone (half the memory).
    fn band(&self, x: u128) -> (u64, u64) {
        let (e_lo, e_hi) = self.exponent_bracket(x);
        let coarse = e_lo & !((1 << 15) - 1); // e′: what `enclose_coarse` evaluates
        let lo = enclose_coarse(e_lo, 63);
        let below = lo.saturating_sub(2 * (e_hi - coarse) as u64);
        (below, below.saturating_add(BAND_SPAN))
    }

    /// `(e_lo, e_hi)` with `e_lo ≤ 2⁶³·(γ(x) + R/t) ≤ e_hi` (`R = x & (M − 1)`, none
    /// when `M = 1`), or with a capped γ part: at most `290 + 2 = 292` units wide.
    /// `2⁶³·R/t` lies in `[L, L + 2]` with `L` the reciprocal's lower bound
    /// (`R < M ≤ t/32`, so `⌊R/2ᵇ⌋ = 0`, see [`Reciprocal`]).
    #[inline]
    fn exponent_bracket(&self, x: u128) -> (u128, u128) {
        let (lo, hi) = if self.integer_sigma {
            self.integer_bracket(x)
        } else {
            self.bracket(x)
        };
        if self.block_mask == 0 {
            return (lo, hi);
        }
        let r_lo = self.t_reciprocal.lower_small(x as u64 & self.block_mask);
        (lo + r_lo, hi + r_lo + 2)
    }

    /// `(x_lo, x_hi)` with `x_lo ≤ 2⁶³·γ(x) ≤ x_hi` at integer σ = t, where
    /// `2⁶³·γ = 2⁶³·a²/(2t²) = (2⁶⁰·a/t)²/2⁵⁸` with `a = |x − t|`; capped from
    /// `a ≥ 12t` on (`γ ≥ 72`). The reciprocal of `t` puts `2⁶³·a/t` in
    /// `[L, L + ⌊a/2ᵇ⌋ + 2]` (`⌊a/2ᵇ⌋ ≤ 11`), so `e = ⌊L/8⌋ ≤ 2⁶⁰·a/t ≤ e + 3` and
    /// `x_lo = ⌊e²/2⁵⁸⌋ ≤ 2⁶³·γ ≤ (e + 3)²/2⁵⁸ < x_lo + 1 + (6e + 9)/2⁵⁸ < x_lo + 290`
    /// (`e < 12·2⁶⁰`): one reciprocal product and one 64-bit square instead of the
    /// general path's 256-bit square.
    #[inline]
    fn integer_bracket(&self, x: u128) -> (u128, u128) {
        let t = u128::from(self.t);
        let a = x.abs_diff(t);
        if a >= 12 * t {
            return (CAPPED, CAPPED);
        }
        let lower = if self.t < 1 << 60 {
            // a < 12t < 2⁶⁴: one 64-bit product (a property of t, not of x).
            self.t_reciprocal.lower_small(a as u64)
        } else {
            self.t_reciprocal.lower(a)
        };
        let e = (lower >> 3) as u64;
        let x_lo = (u128::from(e) * u128::from(e)) >> 58;
        (x_lo, x_lo + 290)
    }

    /// `(x_lo, x_hi)`, `x_lo ≤ 2⁶³·γ(x) ≤ x_hi` (or capped).
    #[inline]
    fn bracket(&self, x: u128) -> (u128, u128) {
        if let Some(scaled) = x.checked_mul(self.t_den) {
            let a = scaled.abs_diff(self.num);
            if self.small_denominator.is_some() && a <= u64::MAX as u128 {
                return self.reciprocal.bounds(a * a);
            }
            // The bounds of the 512-bit path below, from a 256-bit square: the same
            // truncation `⌊a²/2ˢ⌋`, `⌊D/2ˢ⌋`, so the same words decide.
            return match shr_256(square_256(a), self.d_shift) {
                Some(n) => truncated_bounds(n, &self.reciprocal, self.d_shift > 0),
                None => (CAPPED, CAPPED),
            };
        }
        self.wide_bracket(x)
    }

    /// [`bracket`](Self::bracket) in 512-bit arithmetic, for any `x`.
    fn wide_bracket(&self, x: u128) -> (u128, u128) {
        let scaled = U512::from_u128(x).mul(&U512::from_u128(self.t_den));
        let a = scaled.abs_diff(&U512::from_u128(self.num));
        wide_bounds(&a.mul(&a), &self.denominator)
    }

    /// `γ(x) + R/t` exactly (`R = x & (M − 1)`), as (numerator, denominator), for the
    /// exact comparison: `(a² + R·2·num·den·t) / D`, `D = 2·num·den·t²`.
    #[cold]
    fn exact(&self, x: u128) -> (Big, Big) {
        let (square, denominator) = self.exact_gamma(x);
        let r = Big::from_u128(x & u128::from(self.block_mask));
        let d_over_t = Big::from_u128(2 * self.num)
            .mul(&Big::from_u128(u128::from(self.den)))
            .mul(&Big::from_u128(u128::from(self.t)));
        (square.add(&r.mul(&d_over_t)), denominator)
    }

    /// `γ(x)` exactly, as (numerator `a²`, denominator `D`).
    fn exact_gamma(&self, x: u128) -> (Big, Big) {
        let scaled = U512::from_u128(x).mul(&U512::from_u128(self.t_den));
        let a = scaled.abs_diff(&U512::from_u128(self.num));
        (
            Big::from_limbs(&a.mul(&a).0),
            Big::from_limbs(&self.denominator.0),
        )
    }
}

/// `2⁶³·γ` at and beyond the cap of the brackets (`γ ≥ 64`: `exp(−γ) < 2⁻⁹²`).
const CAPPED: u128 = 64 << 63;

/// `a²` as `(high, low)` 128-bit halves.
#[inline]
fn square_256(a: u128) -> (u128, u128) {
    let (a0, a1) = (a & u64::MAX as u128, a >> 64);
    let (p00, p01, p11) = (a0 * a0, a0 * a1, a1 * a1);
    // a² = p11·2¹²⁸ + p01·2⁶⁵ + p00, and p01·2⁶⁵ = (p01 >> 63)·2¹²⁸ + (p01 << 65 mod 2¹²⁸).
    let (low, carry) = p00.overflowing_add(p01 << 65);
    (p11 + (p01 >> 63) + u128::from(carry), low)
}

/// `⌊v/2ˢ⌋` for a 256-bit `v = (high, low)`, or `None` when it does not fit 128 bits.
#[inline]
fn shr_256((high, low): (u128, u128), s: u32) -> Option<u128> {
    match s {
        0 => (high == 0).then_some(low),
        1..=127 => (high >> s == 0).then(|| (high << (128 - s)) | (low >> s)),
        128..=255 => Some(high >> (s - 128)),
        _ => Some(0),
    }
}

/// Dyadic bounds (63 fractional bits) of `γ = n/d` for 512-bit `n` and `d ≥ 1`: both
/// are truncated by the same shift until `d` fits 64 bits; a numerator still above
/// `2¹²⁸` then means `γ > 2⁶³`, far beyond the cap of 64. (The reference path: it
/// builds the reciprocal of its `d` per call.)
fn wide_bounds(n: &U512, d: &U512) -> (u128, u128) {
    let shift = d.bit_len().saturating_sub(64);
    let (n, d) = (n.shr(shift), d.shr(shift));
    match (n.to_u128(), d.to_u128()) {
        (Some(n), Some(d)) => truncated_bounds(n, &Reciprocal::new(d as u64), shift > 0),
        _ => (CAPPED, CAPPED),
    }
}

/// `(x_lo, x_hi)` with `x_lo ≤ 2⁶³·γ ≤ x_hi` (or both capped, see [`CAPPED`]), by
/// one multiplication with the reciprocal of `d` (`1 ≤ d < 2⁶⁴`, see [`Reciprocal`]):
///
/// * not truncated: `γ = n/d` exactly, a bracket at most 65 units wide;
/// * truncated (`n = ⌊N/2ˢ⌋`, `d = ⌊D/2ˢ⌋ ≥ 2⁶³`, `s > 0`): `γ = N/D` lies in
///   `(n/(d + 1), (n + 1)/d)`. With `L` the reciprocal's lower bound of `2⁶³n/d`:
///   for the lower end, `2⁶³n/d − 2⁶³n/(d + 1) = 2⁶³n/(d(d + 1)) < 64` while
///   `n < 64d` (`d + 1 > 2⁶³`), so `L − 64` is below it — and when `L` is capped
///   (`n ≥ 64d`), `2⁶³n/(d + 1) > 64·2⁶³ − 64` still is; for the upper end,
///   `2⁶³(n + 1)/d = 2⁶³n/d + 2⁶³/d < L + ⌊n/2ᵇ⌋ + 2 + 1` (`2⁶³/d ≤ 1`). Width at most
///   `64 + 63 + 3 = 130` units.
#[inline]
fn truncated_bounds(n: u128, reciprocal: &Reciprocal, truncated: bool) -> (u128, u128) {
    if !truncated {
        return reciprocal.bounds(n);
    }
    let lower = reciprocal.lower(n);
    if lower == CAPPED {
        return (CAPPED - 64, CAPPED);
    }
    (lower.saturating_sub(64), reciprocal.upper_from(n, lower) + 1)
}

/// A fixed 512-bit unsigned integer (little-endian 64-bit limbs) with exactly the
/// operations the acceptance test needs. Callers guarantee no overflow (see the width
/// argument on [`DiscreteGaussian`]); products are truncated to 512 bits otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct U512([u64; 8]);

impl U512 {
    fn from_u128(x: u128) -> Self {
        let mut limbs = [0u64; 8];
        limbs[0] = x as u64;
        limbs[1] = (x >> 64) as u64;
        Self(limbs)
    }

    fn to_u128(self) -> Option<u128> {
        if self.0[2..].iter().any(|&l| l != 0) {
            None
        } else {
            Some(self.0[0] as u128 | (self.0[1] as u128) << 64)
        }
    }

    fn len(&self) -> usize {
        self.0.iter().rposition(|&l| l != 0).map_or(0, |i| i + 1)
    }

    fn mul(&self, other: &Self) -> Self {
        let (n, m) = (self.len(), other.len());
        let mut out = [0u64; 8];
        for i in 0..n {
            let mut carry: u128 = 0;
            for j in 0..m {
                if i + j >= 8 {
                    break;
                }
                let cur = out[i + j] as u128 + self.0[i] as u128 * other.0[j] as u128 + carry;
                out[i + j] = cur as u64;
                carry = cur >> 64;
            }
            if i + m < 8 {
                out[i + m] = carry as u64;
            }
        }
        Self(out)
    }

    fn cmp(&self, other: &Self) -> Ordering {
        for i in (0..8).rev() {
            match self.0[i].cmp(&other.0[i]) {
                Ordering::Equal => continue,
                unequal => return unequal,
            }
        }
        Ordering::Equal
    }

    /// `self −= other`, for `self ≥ other`.
    fn sub_assign(&mut self, other: &Self) {
        let mut borrow = false;
        for i in 0..8 {
            let (d1, b1) = self.0[i].overflowing_sub(other.0[i]);
            let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
            self.0[i] = d2;
            borrow = b1 || b2;
        }
        debug_assert!(!borrow);
    }

    fn abs_diff(&self, other: &Self) -> Self {
        let (mut big, small) = if self.cmp(other) == Ordering::Less {
            (*other, self)
        } else {
            (*self, other)
        };
        big.sub_assign(small);
        big
    }

    fn bit_len(&self) -> u32 {
        match self.len() {
            0 => 0,
            n => 64 * (n as u32 - 1) + (64 - self.0[n - 1].leading_zeros()),
        }
    }

    /// `⌊self / 2ⁿ⌋`.
    fn shr(&self, n: u32) -> Self {
        let (limbs, bits) = ((n / 64) as usize, n % 64);
        let mut out = [0u64; 8];
        for (i, slot) in out.iter_mut().enumerate().take(8usize.saturating_sub(limbs)) {
            let low = self.0[i + limbs] >> bits;
            let high = match (bits, self.0.get(i + limbs + 1)) {
                (0, _) | (_, None) => 0,
                (_, Some(&next)) => next << (64 - bits),
            };
            *slot = low | high;
        }
        Self(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::certified::exp_neg_big;

    /// `lo ≤ 2⁶³·n/d`, and `2⁶³·n/d ≤ hi` unless the upper end is capped.
    fn assert_holds((lo, hi): (u128, u128), (n, d): (&Big, &Big), uncapped: bool, label: &str) {
        let scaled = n.shl(63);
        assert!(
            Big::from_u128(lo).mul(d).cmp(&scaled).is_le(),
            "{label}: lower end too high"
        );
        if uncapped {
            assert!(
                scaled.cmp(&Big::from_u128(hi).mul(d)).is_le(),
                "{label}: upper end too low"
            );
        }
    }

    /// The 256-bit path of the acceptance bracket gives exactly the 512-bit path's
    /// bracket, and both contain the exact `2⁶³·γ` (arbitrary precision) within 130
    /// units, on random and extreme proposals, for integer, rational and huge variances.
    #[test]
    fn the_256_bit_band_equals_the_512_bit_band() {
        use rand_chacha::ChaCha20Rng;
        use rand_core::{Rng, SeedableRng};
        let mut rng = ChaCha20Rng::seed_from_u64(0x256);
        for (num, den) in [
            (1u128 << 80, 1u64),                                // σ = 2⁴⁰, integer
            (4_398_046_511_104u128 * 4_398_046_511_104 + 7, 1), // σ ≈ 2⁴², not integer
            (1_000_003, 7),                                     // small, rational
            (MAX_VARIANCE_NUM, 3),                              // the largest numerator
            (12_345_678_901_234_567, u64::MAX),                 // a wide denominator
            (100, 1),                                           // D < 2⁶⁴
        ] {
            let noise = DiscreteGaussian::from_ratio(num, den).unwrap();
            let t = noise.t as u128;
            let mut xs: Vec<u128> = (0..20_000)
                .map(|_| u128::from(rng.next_u64()) % (64 * t + 2))
                .collect();
            xs.extend([
                0,
                1,
                t,
                t + 1,
                2 * t,
                u128::from(u64::MAX),
                1 << 80,
                u128::MAX / noise.t_den,
            ]);
            let mut inside = 0;
            for x in xs {
                let (x_lo, x_hi) = noise.bracket(x);
                assert_eq!((x_lo, x_hi), noise.wide_bracket(x), "σ² = {num}/{den}, x = {x}");
                // The bracket holds the exact 2⁶³·γ = 2⁶³·N/D (N = a², D as built), is at
                // most 130 units wide, and only a capped upper end may fall short.
                let (n, d) = noise.exact_gamma(x);
                assert_holds(
                    (x_lo, x_hi),
                    (&n, &d),
                    x_hi < CAPPED,
                    &format!("σ² = {num}/{den}, x = {x}"),
                );
                inside += usize::from(x_hi < CAPPED);
                assert!(x_hi - x_lo <= 130, "σ² = {num}/{den}, x = {x}: {}", x_hi - x_lo);
            }
            assert!(inside > 0, "σ² = {num}/{den}: no uncapped proposal");
        }
        for _ in 0..100_000 {
            let a = u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64());
            let a = a >> (rng.next_u64() % 128);
            let wide = U512::from_u128(a).mul(&U512::from_u128(a));
            let (high, low) = square_256(a);
            assert_eq!(
                wide.0[..4],
                [low as u64, (low >> 64) as u64, high as u64, (high >> 64) as u64]
            );
            let s = (rng.next_u64() % 300) as u32;
            assert_eq!(shr_256((high, low), s), wide.shr(s).to_u128(), "a = {a}, s = {s}");
        }
    }

    /// The bracket of the whole acceptance exponent `γ(x) + R/t` (`R = x mod M`, the
    /// remainder's own acceptance folded in for `t ≥ 64`) holds the exact value and
    /// is at most 292 units wide (below `t = 64` it is the bracket of γ alone), and the
    /// band of words holds `2⁶⁴·exp(−exponent)` (256-bit enclosure).
    #[test]
    fn the_acceptance_exponent_bracket_holds_gamma_plus_remainder_over_t() {
        use rand_chacha::ChaCha20Rng;
        use rand_core::{Rng, SeedableRng};
        let mut rng = ChaCha20Rng::seed_from_u64(0x263);
        for (num, den, merged) in [
            (100u128, 1u64, false),                    // t = 10, M = 1
            (4900 * 5, 5, true),                       // integer σ = 70, den = 5
            ((1u128 << 84) + 7, 1, true),              // σ just above 2⁴², not integer
            (4900, 1, true),                           // t = 70, M = 2
            (1_000_000, 1, true),                      // t = 1000, M = 16 (band table)
            (9_000_000, 7, true),                      // t = 1134, rational
            (1u128 << 80, 1, true),                    // t = 2⁴⁰, V a word of its own
            (1u128 << 120, 1, true),                   // t = 2⁶⁰
            (12_345_678_901_234_567, u64::MAX, false), // t = 1, wide denominator
        ] {
            let noise = DiscreteGaussian::from_ratio(num, den).unwrap();
            assert_eq!(noise.block_mask > 0, merged, "σ² = {num}/{den}");
            let t = noise.t as u128;
            let mut xs: Vec<u128> = (0..5000)
                .map(|_| u128::from(rng.next_u64()) % (20 * t + 2))
                .collect();
            xs.extend([0, 1, t, t + 1, u128::from(noise.block_mask), 64 * t]);
            for x in xs {
                let (e_lo, e_hi) = noise.exponent_bracket(x);
                let (g_lo, g_hi) = noise.bracket(x);
                let (n, d) = noise.exact(x);
                assert_holds(
                    (e_lo, e_hi),
                    (&n, &d),
                    g_hi < CAPPED,
                    &format!("σ² = {num}/{den}, x = {x}"),
                );
                // The band holds 2⁶⁴·exp(−exact exponent): below ≤ it ≤ above + 1.
                let (below, above) = noise.band(x);
                let e = exp_neg_big(&n, &d, 256);
                assert!(
                    Big::from_u128(below.into()).shl(192).cmp(&e.lo).is_le(),
                    "σ² = {num}/{den}, x = {x}: band too high"
                );
                assert!(
                    e.hi.cmp(&Big::from_u128(u128::from(above) + 1).shl(192)).is_le(),
                    "σ² = {num}/{den}, x = {x}: band too low"
                );
                assert!(e_hi - e_lo <= 292, "σ² = {num}/{den}, x = {x}: {}", e_hi - e_lo);
                if !merged && !noise.integer_sigma {
                    assert_eq!((e_lo, e_hi), (g_lo, g_hi));
                }
            }
        }
    }

    #[test]
    fn wide_arithmetic_matches_u128() {
        let pairs = [
            (0u128, 5u128),
            (3, 7),
            (u64::MAX as u128, u64::MAX as u128),
            (1 << 100, 3),
        ];
        for (a, b) in pairs {
            let (wa, wb) = (U512::from_u128(a), U512::from_u128(b));
            assert_eq!(wa.mul(&wb).to_u128(), a.checked_mul(b));
            assert_eq!(wa.cmp(&wb), a.cmp(&b));
            assert_eq!(wa.abs_diff(&wb).to_u128(), Some(a.abs_diff(b)));
            assert_eq!(wa.shr(3).to_u128(), Some(a >> 3));
            assert_eq!(wa.bit_len(), 128 - a.leading_zeros());
        }
        // (2^127)^2 = 2^254: limb 3, bit 62.
        let x = U512::from_u128(1 << 127);
        let sq = x.mul(&x);
        assert_eq!(sq.0[3], 1 << 62);
        assert_eq!(sq.len(), 4);
        assert_eq!(sq.bit_len(), 255);
        assert_eq!(sq.shr(254).to_u128(), Some(1));
        assert_eq!(sq.shr(190).to_u128(), Some(1 << 64));
        assert_eq!(sq.shr(64).0[2], 1 << 62);
        assert_eq!(sq.shr(255).to_u128(), Some(0));
    }

    /// The band table covers every proposal magnitude of probability above 2⁻⁵⁰ (the
    /// exact tail `2αˣ/(1 + α)` at its length is below it), holds the computed bands,
    /// and exists exactly up to `t = 1024`.
    #[test]
    fn acceptance_band_table_covers_all_but_a_2_pow_minus_50_tail() {
        for (num, den) in [
            (1u128, 4u64),
            (1, 1),
            (100, 1),
            (1_000_000, 1),
            (1023 * 1023, 1),
            (1024 * 1024, 1),
        ] {
            let noise = DiscreteGaussian::from_ratio(num, den).unwrap();
            let t = noise.proposal_scale();
            let len = noise.bands.len();
            if t > MAX_BAND_T {
                assert_eq!(len, 0, "t = {t}");
                continue;
            }
            let alpha = (-1.0 / t as f64).exp();
            let tail = 2.0 * alpha.powi(len as i32) / (1.0 + alpha);
            assert!(tail <= 2f64.powi(-50), "t = {t}: {tail}");
            for x in [0, 1, len / 2, len - 1] {
                assert_eq!(noise.bands[x], noise.band(x as u128).0, "t = {t}, x = {x}");
            }
        }
    }

    #[test]
    fn t_is_the_ceiling_of_sigma() {
        for (num, den, t) in [
            (1u128, 1u64, 1u64),
            (9, 1, 3),
            (8, 1, 3),
            (10, 1, 4),
            (1, 4, 1),
            (99, 1, 10),
            (100, 1, 10),
            (101, 1, 11),
            (9, 4, 2),
            (25, 4, 3),
        ] {
            assert_eq!(
                DiscreteGaussian::from_ratio(num, den).unwrap().proposal_scale(),
                t
            );
        }
        let big = DiscreteGaussian::from_ratio(MAX_VARIANCE_NUM, 1).unwrap();
        assert_eq!(big.proposal_scale(), 1 << 62);
        assert!(big.small_denominator.is_none());
        assert!(DiscreteGaussian::from_ratio(0, 1).is_err());
        assert!(DiscreteGaussian::from_ratio(MAX_VARIANCE_NUM + 1, 1).is_err());
        assert!(DiscreteGaussian::from_ratio(1, 0).is_err());
        assert_eq!(
            DiscreteGaussian::from_ratio(u64::MAX as u128, u64::MAX)
                .unwrap()
                .proposal_scale(),
            1
        );
    }
}
