//! The discrete Gaussian distribution `Pr[Z = z] ∝ exp(−z²/(2σ²))` on the integers,
//! sampled exactly for a rational variance `σ² = num/den`.

use super::certified::{Big, Interval, LazyUniform, exact_less_exp_neg};
use super::fixed_exp::enclose_coarse;
use super::{BitSource, Rational, saturate_i64};
use crate::Error;
use rand_core::CryptoRng;

mod fixed;
mod ladder;

/// Largest supported numerator of `σ² = num/den` (`2¹²⁴`, so `σ < 2⁶²·√den`).
pub const MAX_VARIANCE_NUM: u128 = 1 << 124;

/// The span `above − below` of an acceptance band for the exponent bracket
/// `[e, e + slack]` (see [`band`]): `63 + 2·(slack + 2¹⁵ − 1)`.
const fn band_span(slack: u64) -> u64 {
    63 + 2 * (slack + (1 << 15) - 1)
}

/// Exact sampler of the discrete Gaussian `Pr[Z = z] = exp(−z²/(2σ²)) / Σ_y exp(−y²/(2σ²))`
/// on ℤ, for a rational variance parameter `σ² = num/den` (`1 ≤ num ≤ 2¹²⁴`,
/// `1 ≤ den < 2⁶⁴`).
///
/// **Nothing certified is built per σ.** Both regimes sample by rejection from a
/// reference law whose certified inversion table is shared by many σ (a blocked form of
/// the rejection sampling of Canonne, Kamath & Steinke 2020, "CKS20"): a block `J` of
/// `M` consecutive magnitudes is drawn from the table, a value `y = JM + R` inside it
/// uniformly, and `y` is accepted by a certified one-word Bernoulli trial of
/// `exp(−E)`, `E` the difference between the target's and the reference's exponents.
/// Construction computes a rung index and a few integers (a microsecond or less); the
/// first sampler in a process to use a reference table builds it, once. From
/// `⌊σ⌋ = 4096` on one table serves every σ (`M = ⌈σ/65⌉`, reference ratio 65; the
/// private module `discrete_gaussian/fixed.rs` has that regime's algorithm and bounds,
/// `Pr[F] < 2⁻⁴⁷·⁸` per sample). What follows describes the smaller σ.
///
/// **The ladder below `⌊σ⌋ = 4096`.** The reference standard deviations are rungs
/// `σ̂ = p/64`. With `M = 1` for `σ ≤ 64` and above it `M = 2ᵐ` the largest power of two
/// with `r = σ/M > 32` (so `r ∈ (32, 64]`, `m ≤ 6`), a σ uses the lowest rung `σ̂ ≥ r`
/// of its kind. Each rung has a certified table of `K = ⌈10σ̂⌉ ≤ 640` blocks with
/// weights `h_j = exp(−j²/(2σ̂²))` and a tail block:
///
/// * **two-sided** rungs (`M = 1`; the law of `|Ĵ|`: `w_0 = 1`, `w_j = 2h_j`): the 129
///   values `p = (16 + i)·2ʲ` (`i < 16`, `j < 8`) and `p = 4096`, from `1/4` to `64`,
///   consecutive ones at most `17/16` apart (the rungs of the discrete Laplace's
///   ladder), so `σ̂ < 17σ/16`, or `σ̂ = 1/4` for `σ < 1/4`;
/// * **one-sided** rungs (`M ≥ 2`; `w_j = h_j`): the 64 values `p = 2048 + 32(i + 1)`
///   (`σ̂ = 32.5, 33, …, 64`), so `σ̂ < 65r/64` — finer than the two-sided ones, which
///   keeps the exponent's per-block term `J²·c` small and the trials fewer.
///
/// Each table is built on first use, once per process (certified thresholds at 192
/// bits, about 0.6 ms for the largest; all 193 together hold 46 533 thresholds, so
/// memory stays bounded whatever the number of distinct σ: 6.9 MB of bounds and guides
/// with all built, measured in the tests). A trial
///
/// 1. draws a word: its top bit is the sign, its other 63 bits give the block `J` by
///    inversion of the rung's table (`Pr[J = j] = w_j/S`, `S = Σ w_j`);
/// 2. draws a second word: its low `m` bits are `R` uniform on `[0, M)`, `y = JM + R`,
///    and its other `64 − m ≥ 58` bits are the first bits of a uniform `V`, which
///    accepts `y` with probability `exp(−E)`,
///    `E = y²/(2σ²) − J²/(2σ̂²) = J²·c + n/(2σ²)`, `c = M²/(2σ²) − 1/(2σ̂²) ≥ 0`,
///    `n = R(2JM + R)`, compared with a certified bracket of `exp(−E)`;
/// 3. returns `±y`; with blocks the pair (negative, 0), which would count 0 twice, is
///    rejected, while the two-sided table's zero ignores the sign.
///
/// `E ≥ 0` since `y ≥ JM` and `(JM)²/(2σ²) = J²/(2r²) ≥ J²/(2σ̂²)`. A value `y` of
/// block `J` is proposed with probability `(h_J/S)/M` (per sign) and accepted with
/// `exp(−y²/(2σ²))/h_J`: every `±y` is returned with probability
/// `exp(−y²/(2σ²))/(MS)` (halved with blocks), the same constant for every value, so
/// the output is **exactly** the discrete Gaussian. The tail block `J ≥ K` (probability
/// below `2⁻⁶⁸`) has weight `w_K = h_K/(1 − ρ)`, `ρ = exp(−K/σ̂²)` (doubled when
/// two-sided): `J = K + G` with `Pr[G ≥ g] = ρ^g`, whose weight
/// `exp(−(K² + 2KG)/(2σ̂²))` is at least `h_J`, and `y` is accepted with probability
/// `exp(−(y²/(2σ²) − (K² + 2KG)/(2σ̂²)))`, decided by exact comparisons alone. When σ
/// is itself a rung and `M = 1` (every integer σ up to 32, every multiple of `1/4` up
/// to 8, …) `E = 0` in every regular block: a trial is one word and nothing is rejected
/// outside the tail, as the per-σ tables of earlier versions did for `σ < 64`.
///
/// **The acceptance test.** `E` grows with `J` (up to
/// `K²·c ≤ (K²/(2σ̂²))·((17/16)² − 1) ≤ 72·0.129 < 9.3` at the end of a two-sided table
/// for `σ ≥ 1/4`, without bound below; `< 1.6` with blocks), so it is bracketed in
/// fixed point with room for any value: per σ, `Q₆₄ = ⌊2ˢ/(2σ²)⌋ ∈ [2⁶³, 2⁶⁴)` (`M ≥ 2`)
/// and `C = ⌊2⁸³·M²/(2σ²)⌋ − ⌈2⁸³/(2σ̂²)⌉` (saturated at 0), so `C ≤ 2⁸³·c < C + 2`;
/// per trial `e₁ = ⌊n·Q₆₄/2^(s − 63)⌋` (`e₁ ≤ 2⁶³·n/(2σ²) < e₁ + 2`, the neglected part
/// being at most `n/(2σ²) < (2K + 1)/(2r²) < 0.34`; `e₁ = 0` when `M = 1`) and
/// `e₂ = ⌊J²·C/2²⁰⌋` (`e₂ ≤ 2⁶³J²c < e₂ + 1 + 2J²/2²⁰ < e₂ + 2`, `J² < 2¹⁹`), and
/// `e = min(e₁ + e₂, 2⁶⁹)`: `e ≤ 2⁶³·E < e + 4` below the cap, and `E ≥ 64` at it
/// (`C` is itself capped at `2¹⁰⁰` when `M²/(2σ²) ≥ 2¹⁷`, where `E ≥ 2¹⁷ − 8` for every
/// `J ≥ 1`). `exp(−e/2⁶³)` is bounded below to within 64 units of `2⁻⁶⁴` by the
/// table-driven fixed-point exponential of the crate's selection coins (0 from
/// `E ≥ 64` on, where `exp(−E) < 2⁻⁹²`), with the two lowest bytes of the exponent's
/// fraction dropped (which moves it by less than 2¹⁵ units of `2⁻⁶³`). `V` below the
/// band accepts, above it rejects; only when `V`'s known bits leave it inside the band
/// is `V` extended with further words and compared with arbitrary-precision enclosures
/// of `exp(−E)` for the exact rational `E = (y²·den·p² − 4096·num·J²)/(2num·p²)` until
/// decided. The table's own comparisons work the same way: a word between the two
/// bounds of a threshold is extended and compared with enclosures of the exact sums,
/// refined until decided. No floating point is involved anywhere.
///
/// **Draw independence.** Every trial draws a fixed number of words before anything
/// else — 1 on a rung with `M = 1`, 2 otherwise below `⌊σ⌋ = 4096`, 3 from 4096 on
/// ([`words_per_trial`](Self::words_per_trial)) — and the trials are i.i.d., so, as in
/// any rejection sampler, the number of trials is independent of the accepted value.
/// Outside the fallback event `F` ("a comparison needed further words, or the tail
/// block was drawn") the number of words drawn is therefore statistically independent
/// of the sample.
///
/// **Acceptance rate.** With `θ(s) = Σ_z exp(−z²/(2s²))`: for `M = 1` a trial returns
/// something with probability `θ(σ)/θ(σ̂) ≥ σ/σ̂ > 16/17` (`θ(s)/s =
/// √(2π)·(1 + 2Σ_(k≥1) e^(−2π²s²k²))` decreases in s, by Poisson summation), and above
/// `0.999` below `σ = 1/4` (`θ(σ) ≥ 1`, `θ(1/4) < 1.0007`); for `M ≥ 2` with
/// probability `θ(σ)/(2MS) ≥ √(2π)·r/(2S) > 0.97` (`θ(σ) ≥ √(2π)σ`; checked for each
/// of the 64 one-sided rungs from its certified `S` and the least `r` it serves). So
/// fewer than `17/16 = 1.0625` trials on average for `M = 1` and fewer than `1.031` for
/// `M ≥ 2`.
///
/// **Fallback bound.** Per trial: the block's word is undecided with probability at
/// most `2K/2⁶³ ≤ 1280/2⁶³ < 2⁻⁵²·⁶` (each threshold's bounds leave at most two words
/// undecided); the tail block has probability `w_K/S < 2⁻⁶⁸`; and `V`, known to
/// `64 − m ≥ 58` bits, is undecided with probability at most
/// `(band_span(4) + 1 + 2·2ᵐ)/2⁶⁴ = (65 606 + 2·2ᵐ)/2⁶⁴ < 2⁻⁴⁷·⁹⁹` (the three premises
/// asserted in tests, for every rung). So `Pr[F] < 2⁻⁴⁷·⁹` per trial and, with fewer
/// than 1.0625 trials, `Pr[F] < 2⁻⁴⁷·⁸` per sample; on a rung with `M = 1`,
/// `Pr[F] < 2⁻⁵²·⁵`.
///
/// **Cost.** Construction: the rung (an integer square root and a few comparisons),
/// `Q₆₄` and `C` (one long division each) and a small allocation; a new σ costs about a
/// microsecond (about 0.1 µs measured), like any repeated one. The first sampler in a
/// process to reach a rung builds that rung's table (about 0.6 ms for `K = 640`; all 193
/// in a few tens of milliseconds;
/// [`build_rung_tables`](Self::build_rung_tables) builds them ahead of time). A trial:
/// one or two words, one
/// guide-table look-up, two 128-bit products for `E`, the exponential's seven factors,
/// a few comparisons — the same operations for every trial.
///
/// **Timing.** Outside `F` the number of words, trials and table reads does not depend
/// on the sample, and the acceptance test has no branch on its value. The addresses of
/// the table reads follow the uniform words and the exponent (and so the output): a
/// rung's table is at most 641 entries (10 KiB of bounds) with its guide, and the
/// exponential reads seven factors from 16 KiB of tables, at addresses that follow the
/// exponent `E`, whose per-block term `J²c` grows with the output. A cache miss there
/// costs nanoseconds, which a dudect-style test can see: Welch's t between small and
/// large outputs stays within ±4.4 in the runs recorded in `docs/reference/
/// performance.md` (σ = 10, √10, 1000, √1 070 000), but reached −8 at σ = 1000 when
/// blocks used rungs 17/16 apart (a per-block term four times larger).
///
/// ```
/// use dpmech::sampling::{DiscreteGaussianSampler, Rational};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let noise = DiscreteGaussianSampler::new(Rational::new(9, 1)?); // σ² = 9, σ = 3
/// let z = noise.sample(&mut ChaCha20Rng::seed_from_u64(5));
/// assert_eq!(noise.words_per_trial(), 1); // σ = 3 is a rung: one word, no rejection
/// let other = DiscreteGaussianSampler::new(Rational::new(10, 1)?); // σ = √10
/// assert_eq!(other.words_per_trial(), 2); // a rung above it, and an acceptance word
/// # let _ = (z, other.sample(&mut ChaCha20Rng::seed_from_u64(6)));
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Clone)]
pub struct DiscreteGaussianSampler {
    num: u128,
    den: u64,
    /// `t = ⌈σ⌉`.
    t: u64,
    engine: Engine,
}

/// How a [`DiscreteGaussianSampler`] samples: from a rung of the ladder (`⌊σ⌋ < 4096`)
/// or from the proposal shared by every larger σ. Both boxed: the sampler stays small,
/// so the mechanisms that hold several samplers do not grow.
#[derive(Clone)]
enum Engine {
    Ladder(Box<ladder::Scaled>),
    Fixed(Box<fixed::Scaled>),
}

impl core::fmt::Debug for DiscreteGaussianSampler {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DiscreteGaussianSampler")
            .field("sigma_squared", &(self.num, self.den))
            .field("words_per_trial", &self.words_per_trial())
            .finish()
    }
}

impl PartialEq for DiscreteGaussianSampler {
    fn eq(&self, other: &Self) -> bool {
        (self.num, self.den) == (other.num, other.den)
    }
}

impl Eq for DiscreteGaussianSampler {}

/// `1/(1 − x)` for `x ∈ [0, 1)` given by an enclosure at `wp` fractional bits, rounded
/// outward (it increases with `x`).
fn inverse_one_minus(x: &Interval, wp: u64) -> Interval {
    let (one, square) = (Big::pow2(wp), Big::pow2(2 * wp));
    Interval {
        lo: square.div_floor(&one.sub_sat(&x.lo)),
        hi: square.div_ceil(&one.sub_sat(&x.hi)),
    }
}

/// The suffix sums `S_c = Σ_(j≥c) w_j` of enclosures, in place.
fn suffix_sums(mut sums: Vec<Interval>) -> Vec<Interval> {
    for j in (0..sums.len().saturating_sub(1)).rev() {
        sums[j] = Interval {
            lo: sums[j].lo.add(&sums[j + 1].lo),
            hi: sums[j].hi.add(&sums[j + 1].hi),
        };
    }
    sums
}

/// `⌊n·rate/2^shift⌋` for `n/(2σ²) < 1` (`rate = Q₆₄`, `shift = s − 63`): a 192-bit
/// product of which 64 bits are kept (the result is below `2⁶³`).
#[inline(always)]
fn exponent(n: u128, rate: u64, shift: u32) -> u128 {
    let rate = u128::from(rate);
    let low = (n & u128::from(u64::MAX)) * rate;
    let high = (n >> 64) * rate + (low >> 64);
    if shift >= 64 {
        high >> (shift - 64)
    } else {
        // The result is below 2⁶³, so no set bit is shifted out of `high`.
        (high << (64 - shift)) | ((low & u128::from(u64::MAX)) >> shift)
    }
}

/// The words that decide an acceptance on their own, `below..=above`, for the exponent
/// bracket `[e, e + slack]` (`e ≤ 2⁶³·E ≤ e + slack`): `lo` bounds `2⁶⁴·exp(−e′/2⁶³)`
/// below for `e′ ≤ e` within 2¹⁵ units ([`enclose_coarse`]), so
/// `2⁶⁴·exp(−e/2⁶³) ≤ lo + 64` and, with `w = e + slack − e′ ≤ slack + 2¹⁵ − 1`,
/// `2⁶⁴·exp(−(e + slack)/2⁶³) ≥ lo·(1 − w/2⁶³) ≥ lo − 2w`: `below = lo − 2w`,
/// `above = below + band_span(slack) ≥ lo + 63`. From `e = 64·2⁶³` on, `lo = 0` and the
/// band `[0, band_span(slack)]` holds `2⁶⁴·exp(−E) < 1` for any `E ≥ e/2⁶³` (the capped
/// exponents of the ladder).
#[inline(always)]
fn band(e: u128, slack: u128) -> (u64, u64) {
    let coarse = e & !((1 << 15) - 1);
    let lo = enclose_coarse(e, 63);
    let below = lo.saturating_sub(2 * (e + slack - coarse) as u64);
    (below, below.saturating_add(band_span(slack as u64)))
}

/// `G ≥ 0` with `Pr[G ≥ g] = exp(−g·step/den)`, by exact comparisons of one lazy uniform
/// `U` alone (`G ≥ g` iff `U < exp(−g·step/den)`; doubling, then binary search): the
/// geometric tails of the discrete Gaussian's proposals, drawn with probability below
/// `2⁻⁶⁵`.
#[cold]
fn exact_geometric<R: CryptoRng + ?Sized>(step: u128, den: u128, bits: &mut BitSource<'_, R>) -> u128 {
    let den = Big::from_u128(den);
    let mut u = LazyUniform::new(bits.word(), 64);
    let mut at_least = |g: u128, bits: &mut BitSource<'_, R>| {
        exact_less_exp_neg(&mut u, &Big::from_u128(g).mul(&Big::from_u128(step)), &den, bits)
    };
    // Invariant: G ≥ low, G < high once `high` has failed.
    let (mut low, mut high) = (0u128, 1u128);
    while at_least(high, bits) {
        low = high;
        high = high.saturating_mul(2);
    }
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if at_least(mid, bits) {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

/// `(Q₆₄, s − 63)` with `Q₆₄ = ⌊2ˢ·den/(2·num)⌋ ∈ [2⁶³, 2⁶⁴)`, for `σ² = num/den ≥ 63²`.
fn rate(num: u128, den: u64) -> (u64, u32) {
    let two_num = 2 * num;
    // den/(2num) ∈ (2^(d − n − 1), 2^(d − n + 1)) for bit lengths d, n: start one low,
    // and take one more quotient bit if that was too low.
    let bits = |x: u128| 128 - x.leading_zeros();
    let s = 63 + bits(two_num) - bits(u128::from(den));
    let (q, rem) = div_shifted(u128::from(den), s, two_num);
    let (q, s) = if q >= 1 << 63 {
        (q, s)
    } else {
        ((q << 1) | u128::from(rem << 1 >= two_num), s + 1)
    };
    debug_assert!((1 << 63..1 << 64).contains(&q));
    (q as u64, s - 63)
}

/// `(⌊a·2^shift/d⌋, a·2^shift mod d)` exactly, for `1 ≤ d < 2¹²⁷` and a quotient
/// below `2¹²⁸`: `a/d` natively, then the remaining quotient bits in chunks, the
/// remainder staying below `d` throughout. Quotient bits that are zero because the
/// remainder shifted by them is still below `d` (those up to one bit short of `d`'s
/// length) are taken at once, without a division.
///
/// * `d < 2⁹⁶` (at least 32 bits of room in 128): up to that many quotient bits per
///   native division.
/// * `2⁹⁶ ≤ d < 2¹²⁵`: 64 bits per chunk from a 128/64-bit estimate. With
///   `t = bitlen(d) − 64` and `D = ⌊d/2ᵗ⌋ + 1 > d/2ᵗ`, the digit
///   `q̂ = ⌊⌊rem·2ᵏ/2ᵗ⌋/D⌋` (`rem·2ᵏ/2ᵗ < 2^(64 + k) ≤ 2¹²⁸`) never exceeds the true
///   `⌊rem·2ᵏ/d⌋` and falls short of it by less than `(2ᵏ + 1)·2ᵗ/d + 2 < 5`
///   (`d ≥ 2^(t+63)`, `k ≤ 64`), so the new remainder `rem·2ᵏ − q̂·d` lies in
///   `[0, 5d) ⊂ [0, 2¹²⁸)`, is computed exactly modulo `2¹²⁸`, and at most four
///   subtractions of `d` finish the digit. (The per-σ constants of the discrete
///   Gaussian at σ ≈ 2⁶⁰, `d ≈ 2¹²¹`, took ~270 one-bit steps before: most of a
///   microsecond; its rate, 64 quotient bits after the zero ones, is now one chunk.)
/// * `d ≥ 2¹²⁵`: one quotient bit per step of binary long division.
pub(super) fn div_shifted(a: u128, shift: u32, d: u128) -> (u128, u128) {
    debug_assert!((1..1 << 127).contains(&d));
    // (No division when a < d, as for every per-σ constant.)
    let (mut q, mut rem) = if a < d { (0, a) } else { (a / d, a % d) };
    // rem·2^zeros < d while rem is shorter than d by more than `zeros` bits: those
    // quotient bits are 0 (q < 2^(128 − shift), so q·2^zeros does not overflow).
    let zeros = (rem.leading_zeros() - d.leading_zeros())
        .saturating_sub(1)
        .min(shift);
    // zeros < 128: rem < d has at least as many leading zeros as d.
    q <<= zeros;
    rem <<= zeros;
    let shift = shift - zeros;
    // The remainder stays below d, so it can be shifted by `room` bits without
    // overflow: with room enough, whole chunks of quotient bits per native division.
    let room = d.leading_zeros();
    if room >= 32 {
        let mut left = shift;
        while left > 0 {
            let k = left.min(room);
            rem <<= k;
            q = (q << k) | (rem / d);
            rem %= d;
            left -= k;
        }
        return (q, rem);
    }
    if room >= 3 {
        let t = 64 - room;
        let top = (d >> t) + 1;
        // One chunk of k quotient bits: the digit and the new remainder.
        let chunk = |rem: u128, k: u32| {
            // ⌊rem·2ᵏ/2ᵗ⌋ < 2^(64 + k) ≤ 2¹²⁸: rem < d < 2^(t + 64).
            let scaled = if t >= k { rem >> (t - k) } else { rem << (k - t) };
            let mut digit = scaled / top;
            // rem·2ᵏ − digit·d ∈ [0, 5d), exact modulo 2¹²⁸ (the bits shifted out of
            // `rem << k` and the product's overflow cancel).
            let mut next = (rem << k).wrapping_sub(digit.wrapping_mul(d));
            while next >= d {
                next -= d;
                digit += 1;
            }
            (digit, next)
        };
        let mut left = shift;
        // Whole chunks of 64 bits (constant shifts), then the rest.
        while left >= 64 {
            let (digit, next) = chunk(rem, 64);
            (q, rem) = ((q << 64) | digit, next);
            left -= 64;
        }
        if left > 0 {
            let (digit, next) = chunk(rem, left);
            (q, rem) = ((q << left) | digit, next);
        }
        return (q, rem);
    }
    div_shifted_bitwise(q, rem, shift, d)
}

/// The quotient bits of [`div_shifted`] one at a time, from the quotient `q` and
/// remainder `rem < d` so far.
fn div_shifted_bitwise(mut q: u128, mut rem: u128, shift: u32, d: u128) -> (u128, u128) {
    for _ in 0..shift {
        rem <<= 1;
        let bit = rem >= d;
        rem -= if bit { d } else { 0 };
        q = (q << 1) | u128::from(bit);
    }
    (q, rem)
}
impl DiscreteGaussianSampler {
    /// The discrete Gaussian with variance parameter `σ² = sigma_squared`.
    pub fn new(sigma_squared: Rational) -> Self {
        Self::build(sigma_squared.num() as u128, sigma_squared.den())
    }

    /// The discrete Gaussian with `σ² = num/den`, for `1 ≤ num ≤ 2¹²⁴` and any
    /// `den ≥ 1`; [`Error::InvalidParameter`] otherwise.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] for `num` outside `[1, 2¹²⁴]` or `den = 0`.
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

    /// The discrete Gaussian with an integer `σ = sigma ∈ [1, 2⁶²]` (`σ² = sigma²/1`):
    /// the same sampler as [`from_ratio`](Self::from_ratio)`(sigma², 1)`, without the
    /// square root that finds `⌊σ⌋` (the Gaussian mechanism's noise, built for every
    /// new σ). [`Error::InvalidParameter`] outside that range.
    pub(crate) fn from_integer_sigma(sigma: u64) -> Result<Self, Error> {
        if !(1..=1 << 62).contains(&sigma) {
            return Err(Error::InvalidParameter {
                name: "sigma",
                value: sigma as f64,
                reason: "an integer sigma must lie in [1, 2^62]",
            });
        }
        Ok(Self::build_from_floor(
            u128::from(sigma) * u128::from(sigma),
            1,
            sigma,
            true,
        ))
    }

    fn build(num: u128, den: u64) -> Self {
        // ⌊√(num/den)⌋ = ⌊√⌊num/den⌋⌋ for non-negative reals.
        let floor_sigma = (num / den as u128).isqrt() as u64; // ≤ 2^62
        // σ² = ⌊σ⌋² exactly: an integer σ ≥ 1.
        let square = u128::from(floor_sigma) * u128::from(floor_sigma);
        let integer = floor_sigma > 0 && square.checked_mul(u128::from(den)) == Some(num);
        Self::build_from_floor(num, den, floor_sigma, integer)
    }

    /// The sampler of `σ² = num/den` given `⌊σ⌋ = floor_sigma` and whether `σ` is that
    /// integer.
    fn build_from_floor(num: u128, den: u64, floor_sigma: u64, integer: bool) -> Self {
        // ⌈σ⌉: ⌊σ⌋ for an integer σ, else ⌊σ⌋ + 1.
        let t = if integer { floor_sigma } else { floor_sigma + 1 };
        let engine = if floor_sigma >= fixed::MIN_FLOOR_SIGMA {
            Engine::Fixed(Box::new(fixed::Scaled::new(num, den, floor_sigma)))
        } else {
            Engine::Ladder(Box::new(ladder::Scaled::new(num, den)))
        };
        Self { num, den, t, engine }
    }

    /// The number of certified rung tables built so far in this process (each at most
    /// once; at most 193, whatever the number of distinct σ). A diagnostic for benchmarks and tests: constructing a sampler for
    /// a new σ builds a table only when its rung was never used before, so a difference
    /// of 0 across a measured loop shows that nothing was built in it.
    pub fn rung_tables_built() -> u64 {
        ladder::tables_built()
    }

    /// Builds every rung table a σ below `⌊σ⌋ = 4096` can reach (193 tables, once per
    /// process; a few tens of milliseconds the first time, nothing afterwards), so that
    /// no later construction pays for a table: for latency-sensitive callers and for
    /// benchmarks of the steady state.
    ///
    /// ```
    /// use dpmech::sampling::DiscreteGaussianSampler;
    /// DiscreteGaussianSampler::build_rung_tables();
    /// let built = DiscreteGaussianSampler::rung_tables_built();
    /// let _ = DiscreteGaussianSampler::from_ratio(1_234_567, 89)?; // σ ≈ 117.8, new
    /// assert_eq!(DiscreteGaussianSampler::rung_tables_built(), built);
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    pub fn build_rung_tables() {
        ladder::build_all();
    }

    /// `σ² = num/den` as `(num, den)`.
    pub fn sigma_squared(&self) -> (u128, u64) {
        (self.num, self.den)
    }

    /// σ as the nearest `f64` (for display; never used on the sampling path).
    pub fn sigma(&self) -> f64 {
        (self.num as f64 / self.den as f64).sqrt()
    }

    /// `t = ⌈σ⌉` (the scale of the tails' bounds; the block size `M` and the rung follow
    /// from σ itself, see the type's docs).
    pub fn proposal_scale(&self) -> u64 {
        self.t
    }

    /// The number of 64-bit words each trial draws, a function of σ alone: 1 when
    /// `σ ≤ 64` is a rung of the ladder (e.g. every integer up to 32; no rejection), 2
    /// otherwise up to `⌊σ⌋ = 4095`, 3 from 4096 on (the shared proposal). A sample draws
    /// `N` times this many (outside the fallback event), `N ≥ 1` independent of the
    /// sample, `E[N] < 1.0625` (`< 1.031` for `64 < σ < 4096`, `< 1.033` from 4096 on).
    pub fn words_per_trial(&self) -> usize {
        match &self.engine {
            Engine::Ladder(scaled) => scaled.words_per_trial(),
            Engine::Fixed(_) => 3,
        }
    }

    /// One sample, from a bit source.
    #[inline]
    pub fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        match &self.engine {
            Engine::Ladder(scaled) => scaled.sample_bits(bits),
            Engine::Fixed(scaled) => scaled.sample_bits(bits),
        }
    }

    /// One sample, saturating to the `i64` range.
    #[inline]
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        saturate_i64(self.sample_bits(&mut BitSource::new(rng)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::certified::{Cdt, exp_neg_big, probe};

    /// The regime and the words per trial follow σ: the ladder below `⌊σ⌋ = 4096` (1
    /// word on a rung with `M = 1`, else 2), the shared proposal from 4096 on (3 words).
    #[test]
    fn the_regime_follows_the_floor_of_sigma() {
        for (num, den, words, shared) in [
            (1u128, 1u64, 1usize, false), // σ = 1, a rung
            (9, 1, 1, false),             // σ = 3
            (100, 1, 1, false),           // σ = 10
            (1024, 1, 1, false),          // σ = 32
            (1, 16, 1, false),            // σ = 1/4, the lowest rung
            (1, 100, 2, false),           // σ = 1/10, below the lowest rung
            (2, 1, 2, false),             // σ = √2
            (3969, 1, 2, false),          // σ = 63: no rung (p = 4032)
            (4096, 1, 1, false),          // σ = 64, the top rung
            (4097, 1, 2, false),          // σ > 64: blocks
            (1_000_000, 1, 2, false),
            (4096 * 4096 - 1, 1, 2, false),
            (4096 * 4096, 1, 3, true),
            ((4096 * 4096) << 20, 1 << 20, 3, true),
            (1 << 120, 1, 3, true),
        ] {
            let noise = DiscreteGaussianSampler::from_ratio(num, den).unwrap();
            assert_eq!(noise.words_per_trial(), words, "σ² = {num}/{den}");
            assert_eq!(
                matches!(noise.engine, Engine::Fixed(_)),
                shared,
                "σ² = {num}/{den}"
            );
        }
    }

    /// Enclosures as `(lo, hi)` pairs.
    pub(super) fn pairs(sums: Vec<Interval>) -> Vec<(Big, Big)> {
        sums.into_iter().map(|s| (s.lo, s.hi)).collect()
    }

    /// A table's bounds hold the thresholds of reference sums: `lo[c]/2⁶³ ≤ C_c ≤
    /// (hi[c] + 1)/2⁶³` is consistent with `C_c ∈ [S_c.lo/S_0.hi, S_c.hi/S_0.lo]` for
    /// every entry.
    pub(super) fn assert_table_holds(table: &Cdt, sums: &[(Big, Big)], label: &str) {
        let (s0_lo, s0_hi) = &sums[0];
        for (c, (sc_lo, sc_hi)) in sums.iter().enumerate().skip(1) {
            let lo = Big::from_u128(u128::from(probe::lo(table)[c - 1]));
            let hi = Big::from_u128(u128::from(probe::hi(table)[c - 1]) + 1);
            assert!(
                lo.mul(s0_lo).cmp(&sc_hi.shl(63)).is_le(),
                "{label}, c = {c}: lower"
            );
            assert!(
                sc_lo.shl(63).cmp(&hi.mul(s0_hi)).is_le(),
                "{label}, c = {c}: upper"
            );
        }
    }

    /// `e ≤ 2⁶³·E < e + slack` for the exact `E = num/den`, and the [`band`] of `e` holds
    /// `2⁶⁴·exp(−E)` (256-bit enclosure) with span `band_span(slack)` (or saturated).
    pub(super) fn assert_bracket_and_band(e: u128, slack: u128, (num_e, den_e): &(Big, Big), label: &str) {
        let scaled = num_e.shl(63);
        assert!(
            Big::from_u128(e).mul(den_e).cmp(&scaled).is_le(),
            "{label}: e too high"
        );
        assert!(
            scaled.cmp(&Big::from_u128(e + slack).mul(den_e)).is_lt(),
            "{label}: e + {slack} too low"
        );
        let (below, above) = band(e, slack);
        assert!(
            above - below == band_span(slack as u64) || above == u64::MAX,
            "{label}"
        );
        let exact = exp_neg_big(num_e, den_e, 256);
        assert!(
            Big::from_u128(below.into()).shl(192).cmp(&exact.lo).is_le(),
            "{label}: band too high"
        );
        assert!(
            exact
                .hi
                .cmp(&Big::from_u128(u128::from(above) + 1).shl(192))
                .is_le(),
            "{label}: band too low"
        );
    }

    /// The z-score of the mean of `excess` against the law `∝ weight(g)` on
    /// `g = 0 … terms − 1` (f64 sums): the tails' tests.
    pub(super) fn mean_excess_z(excess: &[f64], weight: impl Fn(f64) -> f64, terms: u32) -> f64 {
        let total: f64 = (0..terms).map(|g| weight(f64::from(g))).sum();
        let mean: f64 = (0..terms)
            .map(|g| f64::from(g) * weight(f64::from(g)))
            .sum::<f64>()
            / total;
        let second: f64 = (0..terms)
            .map(|g| f64::from(g).powi(2) * weight(f64::from(g)))
            .sum::<f64>()
            / total;
        let n = excess.len() as f64;
        (excess.iter().sum::<f64>() / n - mean) / ((second - mean * mean) / n).sqrt()
    }

    /// `#{c ≥ 1 : U < C_c}` for `U ∈ [u, u + 1)/2ᵇ` against the reference sums, or
    /// `None` when `U`'s interval meets a threshold's enclosure.
    pub(super) fn reference_count(sums: &[(Big, Big)], u: &Big, b: u64) -> Option<u64> {
        let (s0_lo, s0_hi) = &sums[0];
        let u_hi = u.add(&Big::from_u128(1));
        let mut count = 0;
        for (sc_lo, sc_hi) in &sums[1..] {
            if u_hi.mul(s0_hi).cmp(&sc_lo.shl(b)).is_le() {
                count += 1; // U < (u + 1)/2ᵇ ≤ C_c
            } else if u.mul(s0_lo).cmp(&sc_hi.shl(b)).is_ge() {
                break; // U ≥ C_c, and so for every later (smaller) threshold
            } else {
                return None;
            }
        }
        Some(count)
    }

    #[test]
    fn integer_sigma_builds_the_sampler_of_its_square() {
        // From σ = 1 to 2⁶² (both engines and the largest σ the Gaussian mechanism
        // asks for): the same parameters and the same draws, word for word, as
        // from_ratio(σ², 1); outside [1, 2⁶²] an error.
        use rand_core::SeedableRng;
        for sigma in [
            1u64,
            2,
            63,
            64,
            4095,
            4096,
            4097,
            65 * 4096,
            (1 << 60) + 12_345,
            1 << 62,
        ] {
            let fast = DiscreteGaussianSampler::from_integer_sigma(sigma).unwrap();
            let slow = DiscreteGaussianSampler::from_ratio(u128::from(sigma) * u128::from(sigma), 1).unwrap();
            assert_eq!(fast, slow, "σ = {sigma}");
            assert_eq!(fast.t, slow.t, "σ = {sigma}");
            assert_eq!(fast.words_per_trial(), slow.words_per_trial(), "σ = {sigma}");
            let mut a = rand_chacha::ChaCha20Rng::seed_from_u64(sigma);
            let mut b = rand_chacha::ChaCha20Rng::seed_from_u64(sigma);
            let (mut a, mut b) = (BitSource::new(&mut a), BitSource::new(&mut b));
            for _ in 0..64 {
                assert_eq!(fast.sample_bits(&mut a), slow.sample_bits(&mut b), "σ = {sigma}");
            }
        }
        assert!(DiscreteGaussianSampler::from_integer_sigma(0).is_err());
        assert!(DiscreteGaussianSampler::from_integer_sigma((1 << 62) + 1).is_err());
    }

    #[test]
    fn chunked_division_equals_binary_long_division() {
        // Divisors of every bit length from 1 to 127 (the three routes of `div_shifted`)
        // with random dividends and shifts whose quotient fits, against one quotient bit
        // per step; plus the extremes of each route.
        use rand_core::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(385);
        let mut word = || (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
        for bits in 1..=127u32 {
            for _ in 0..40 {
                let d = ((word() >> (128 - bits)) | (1 << (bits - 1))).max(1);
                let a = word() >> (word() % 128) as u32;
                // Quotient a·2^shift/d below 2¹²⁸: shift ≤ 127 − bitlen(a) + bitlen(d) − 1.
                let a_bits = 128 - a.leading_zeros();
                let limit = (127 + bits).saturating_sub(a_bits + 1).min(200);
                let shift = (word() % (u128::from(limit) + 1)) as u32;
                let expected = div_shifted_bitwise(a / d, a % d, shift, d);
                assert_eq!(div_shifted(a, shift, d), expected, "a={a} shift={shift} d={d}");
            }
        }
        for d in [
            (1u128 << 96) - 1,
            1 << 96,
            (1 << 125) - 1,
            1 << 125,
            (1 << 127) - 1,
        ] {
            for a in [0, 1, d - 1, d, u128::MAX >> 1] {
                // The largest shift whose quotient fits in 128 bits.
                let shift = 127 - (128 - (a / d).leading_zeros()).min(127);
                assert_eq!(
                    div_shifted(a, shift, d),
                    div_shifted_bitwise(a / d, a % d, shift, d)
                );
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
                DiscreteGaussianSampler::from_ratio(num, den)
                    .unwrap()
                    .proposal_scale(),
                t
            );
        }
        let big = DiscreteGaussianSampler::from_ratio(MAX_VARIANCE_NUM, 1).unwrap();
        assert_eq!(big.proposal_scale(), 1 << 62);
        assert!(DiscreteGaussianSampler::from_ratio(0, 1).is_err());
        assert!(DiscreteGaussianSampler::from_ratio(MAX_VARIANCE_NUM + 1, 1).is_err());
        assert!(DiscreteGaussianSampler::from_ratio(1, 0).is_err());
        assert_eq!(
            DiscreteGaussianSampler::from_ratio(u64::MAX as u128, u64::MAX)
                .unwrap()
                .proposal_scale(),
            1
        );
    }
}
