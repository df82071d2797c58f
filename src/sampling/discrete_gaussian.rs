//! The discrete Gaussian distribution `Pr[Z = z] ∝ exp(−z²/(2σ²))` on the integers,
//! sampled exactly for a rational variance `σ² = num/den`.

use super::certified::{Big, Cdt, Interval, LazyUniform, Weights, exact_less_exp_neg, exp_neg, exp_neg_big};
use super::fixed_exp::{enclose_coarse, uniform_in_band};
use super::{BitSource, Rational, TableCache, cached, saturate_i64};
use crate::Error;
use rand_core::CryptoRng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

mod fixed;

/// Largest supported numerator of `σ² = num/den` (`2¹²⁴`, so `σ < 2⁶²·√den`).
pub const MAX_VARIANCE_NUM: u128 = 1 << 124;

/// Tables built so far, by `(num, den)`.
static CACHE: TableCache<(u128, u64), Tables> = OnceLock::new();

/// Constructions that found their tables in [`CACHE`].
static CACHE_REUSES: AtomicU64 = AtomicU64::new(0);

/// The span `above − below` of an acceptance band for the exponent bracket
/// `[e, e + slack]` (see [`band`]): `63 + 2·(slack + 2¹⁵ − 1)`.
const fn band_span(slack: u64) -> u64 {
    63 + 2 * (slack + (1 << 15) - 1)
}

/// Exact sampler of the discrete Gaussian `Pr[Z = z] = exp(−z²/(2σ²)) / Σ_y exp(−y²/(2σ²))`
/// on ℤ, for a rational variance parameter `σ² = num/den` (`1 ≤ num ≤ 2¹²⁴`,
/// `1 ≤ den < 2⁶⁴`).
///
/// **Two regimes, one algorithm.** Both invert a certified table of blocks of
/// consecutive magnitudes and accept a value inside its block with a certified one-word
/// Bernoulli trial (a blocked form of the rejection sampling of Canonne, Kamath &
/// Steinke 2020, "CKS20"). Below `⌊σ⌋ = 4096` the table is the exact block law of this
/// σ², certified at construction (0.3–0.7 ms) and shared through a process-wide cache
/// of the last 256 variances. From `⌊σ⌋ = 4096` on, **nothing is built per σ**: the
/// blocks have `M = ⌈σ/65⌉` integers and one proposal table, whose blocks are those of
/// the reference ratio `σ/M = 65` (never lighter than the true ones, since `σ/M ≤ 65`),
/// serves every σ; the acceptance trial absorbs the difference. Construction then
/// computes four integers (about a microsecond), the first sampler in a process builds
/// the shared table once (0.8 ms measured; the first release in a process also builds
/// the certified exponential's tables, 0.4 ms), and a trial is `≤ 1.6 %` more
/// likely to be rejected. The details of that regime (the proposal, the exponent
/// bracket `[e, e + 4]`, the tail, the bounds below for it) are in the private module
/// `discrete_gaussian/fixed.rs`; what follows describes the tables of the smaller σ.
///
/// **Algorithm below `⌊σ⌋ = 4096`: inversion of the blocks, rejection inside a block.**
/// Let `t = ⌈σ⌉ ≤ 4096`, `M = 2ᵐ` the largest power of two `≤ t/32` (`M = 1` below
/// `t = 64`; `m ≤ 7`), and
/// `K = ⌈10t/M⌉` (at most 640). The magnitudes `0 … KM − 1` fall into `K` blocks of `M`
/// consecutive integers, `block j = [jM, (j + 1)M)`, bounded above by the density at
/// the block's start, `h_j = exp(−(jM)²/(2σ²))`; the rest, `y ≥ KM`, is a tail block
/// bounded by `h_K·e^(−(y − KM)/t)`. A trial
///
/// 1. draws the sign and the block `Q` by inversion of a certified table of
///    `Pr[Q = j] = w_j/S` (`w_j = M·h_j`, the tail's `w_K = h_K/(1 − e^(−1/t))`,
///    `S = Σ w_j`): the table holds 64-bit bounds of the thresholds `Σ_(i≥c) w_i/S`,
///    certified at construction with interval arithmetic (192 bits);
/// 2. draws `R` uniform on `[0, M)`, so `y = QM + R`, and accepts `y` with probability
///    `exp(−E)`, `E = (y² − (QM)²)/(2σ²) = R·(2QM + R)/(2σ²) ∈ [0, 0.33)`, by one
///    uniform `V` compared with a certified bracket of `exp(−E)`;
/// 3. returns `±y`, rejecting the pair (negative, 0), which would count 0 twice.
///
/// A regular block then yields `y` with probability `(M·h_j/S)·(1/M)·exp(−E) =
/// exp(−y²/(2σ²))/S`, the same constant for every `y`: the output is **exactly** the
/// discrete Gaussian. The tail block (probability below `2⁻⁶⁵`) proposes
/// `y = KM + G`, `G` one-sided geometric with `Pr[G = g] ∝ e^(−g/t)`, accepted with
/// probability `exp(−(y² − (KM)²)/(2σ²) + G/t) ≤ 1` (as `KM·t ≥ σ²`), which gives the
/// same `exp(−y²/(2σ²))/S`; it is decided by exact comparisons alone. Below
/// `t = 64` a block is a single integer (`M = 1`, `E = 0`): the table is that of `|Z|`
/// itself (`w_0 = 1`, `w_j = 2h_j`), the sign is a separate bit and a zero ignores
/// it, so there is no rejection at all.
///
/// **The acceptance test** (`M > 1`). With `n = R·(2QM + R) < 2¹²⁵` and
/// `Q₆₄ = ⌊2ˢ/(2σ²)⌋ ∈ [2⁶³, 2⁶⁴)` precomputed, `e = ⌊n·Q₆₄/2^(s − 63)⌋` satisfies
/// `e ≤ 2⁶³·E < e + 2` (the neglected part `n·2^(63 − s) ≤ n/(2σ²) = E < 1`): one
/// 128×64-bit product. `exp(−e/2⁶³)` is bounded below to within 64 units of `2⁻⁶⁴` by
/// the table-driven fixed-point exponential of the crate's selection coins, with the
/// two lowest bytes of the exponent's fraction dropped (which moves it by less than
/// 2¹⁵ units of `2⁻⁶³`). `V` below the band accepts, above it rejects; only when
/// `V`'s known bits leave it inside the band is `V` extended with further words and
/// compared with arbitrary-precision enclosures of `exp(−E)` (exact rational `E`)
/// until decided. The table's own comparisons work the same way: a word between the
/// two bounds of a threshold is extended and compared with enclosures of the exact
/// sums, refined until decided. No floating point is involved anywhere.
///
/// **Draw independence.** Every trial draws a fixed number of words before anything
/// else — 1 below `t = 64`, 2 up to `⌊σ⌋ = 4095` (`V` is the spare `64 − m ≥ 57` bits
/// of `R`'s word), 3 from 4096 on — and the trials are i.i.d., so, as in any rejection
/// sampler, the number of trials is independent of the accepted value. Outside the
/// fallback event `F` ("a comparison needed further words, or the tail block was
/// drawn") the number of words drawn is therefore statistically independent of the
/// sample. Below `t = 64` it is exactly one word per sample.
///
/// **Fallback bound.** Per trial: the block's word is undecided with probability at
/// most `2K/2⁶³ ≤ 1280/2⁶³ < 2⁻⁵²` (each threshold's bounds leave at most two words
/// undecided; asserted in tests); the tail block has probability
/// `w_K/S ≤ h_K·(t + 1)/M ≤ e^(−50)·65 < 2⁻⁶⁵` (`KM ≥ 10t ≥ 10σ`, `S ≥ w_0 = M`,
/// `1/(1 − e^(−1/t)) ≤ t + 1`, `(t + 1)/M ≤ 65`; doubled for `M = 1`, `S ≥ 1`, and
/// `2·e^(−50)·64 < 2⁻⁶⁵` too); and `V`, known to `64 − m ≥ 57` bits, is undecided with
/// probability at most `(65 602 + 2·2ᵐ)/2⁶⁴ < 2⁻⁴⁷·⁹`. A trial is accepted with
/// probability above 0.71 (`E < 0.324` since `n < 0.627t²` and `t/σ < 64/63`, and
/// (negative, 0) has probability `1/(2S) < 0.0064` with `S ≥ Σ_(y≥0) e^(−y²/(2σ²)) ≥
/// σ·√(π/2)`), so there are fewer than 1.41 trials on average and
/// `Pr[F] < 1.41·2⁻⁴⁷·⁸ < 2⁻⁴⁷·³` per sample; below `t = 64`, `Pr[F] < 2⁻⁵¹`. From
/// `⌊σ⌋ = 4096` on, `Pr[F] < 2⁻⁴⁷·⁸` per sample (see `fixed.rs`).
///
/// **Cost.** Below `t = 64`: one word and one guide-table look-up per sample. Above:
/// about `1 + 0.4·M/σ ≤ 1.013` trials (the mean exponent is
/// `E[E] ≈ E[R]·E|Y|/σ² ≈ 0.4·M/σ`; measured: 1.007 trials at σ = 1000), each of 2
/// words, one table look-up, two 64-bit products for `E` and six for the exponential,
/// and a few comparisons — the same operations for every trial; from 4096 on, 3 words
/// and at most 1.033 trials (measured 1.01–1.02). Construction below 4096 certifies the
/// `K ≤ 640` thresholds (0.3–0.7 ms measured); the tables are shared, through a
/// process-wide cache of the last 256 variances, by every sampler of the same `σ²`
/// ([`table_cache_reuses`](Self::table_cache_reuses) counts the hits).
///
/// **Timing.** Outside `F` the number of words, trials and table reads does not depend
/// on the sample, and the acceptance test has no branch on its value. The addresses of
/// the table reads follow the uniform words and the exponent (and so the output): the
/// block table is at most 650 entries (10 KiB of bounds) with a guide of at most
/// 33 KiB, and the exponential reads seven factors from 16 KiB of tables. A cache miss
/// there costs nanoseconds, which a dudect-style test can see (0.5–2 ns on average
/// between small and large outputs at σ = 10 and 1000; see the README).
///
/// ```
/// use dpmech::sampling::{DiscreteGaussianSampler, Rational};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let noise = DiscreteGaussianSampler::new(Rational::new(9, 1)?); // σ² = 9, σ = 3
/// let z = noise.sample(&mut ChaCha20Rng::seed_from_u64(5));
/// assert_eq!(noise.words_per_trial(), 1); // below t = 64: one word per sample
/// # let _ = z;
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

/// How a [`DiscreteGaussianSampler`] samples: the tables of its own σ² (`⌊σ⌋ < 4096`,
/// shared through the process-wide cache), or the proposal shared by every larger σ.
#[derive(Clone)]
enum Engine {
    Table(Arc<Tables>),
    /// Boxed: the sampler stays as small as with a table (an `Arc`), so the mechanisms
    /// that hold several samplers do not grow.
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

struct Tables {
    /// `m`, with `M = 2ᵐ`.
    block_bits: u32,
    /// `K`, the number of regular blocks; `Q = K` is the tail block.
    blocks: u64,
    /// The table of `Q` (63-bit words).
    table: Cdt,
    /// `Q₆₄ = ⌊2ˢ/(2σ²)⌋ ∈ [2⁶³, 2⁶⁴)` (unused when `M = 1`).
    rate: u64,
    /// `s − 63`, in `[13, 127]`.
    rate_shift: u32,
    /// The weights behind `table` (for the tests of its bounds).
    #[cfg(test)]
    weights: Arc<BlockWeights>,
}

/// The weights of the blocks (see [`DiscreteGaussianSampler`]): `w_j = M·h_j` for `j < K` (or
/// `w_0 = 1`, `w_j = 2h_j` when `M = 1`), `h_j = exp(−(jM)²/(2σ²))`, and the tail's
/// `w_K = h_K/(1 − e^(−1/t))` (doubled when `M = 1`).
#[derive(Debug)]
struct BlockWeights {
    num: u128,
    den: u64,
    t: u64,
    block_bits: u32,
    blocks: u64,
}

impl BlockWeights {
    /// `M = 1` (below `t = 64`): the table is that of `|Z|`, the sign a separate bit.
    fn two_sided(&self) -> bool {
        self.block_bits == 0
    }
}

impl Weights for BlockWeights {
    /// Suffix sums at `p + 64` fractional bits: `h_(j+1) = h_j·f_j` and
    /// `f_(j+1) = f_j·e^(−2c)` (`c = M²/(2σ²)`, `f_0 = e^(−c)`), every product rounded
    /// outward, so each enclosure is certified; `2K + 2` roundings of `2⁻⁽ᵖ⁺⁶⁴⁾` keep
    /// the widths far below `2⁻ᵖ`.
    fn suffix_sums(&self, p: u64) -> Vec<Interval> {
        let wp = p + 64;
        let one = Big::pow2(wp);
        let two_num = Big::from_u128(2 * self.num);
        let c_num = Big::from_u128(u128::from(self.den)).shl(2 * u64::from(self.block_bits));
        let mut factor = exp_neg_big(&c_num, &two_num, wp);
        let step = exp_neg_big(&c_num.shl(1), &two_num, wp);
        let mut h = Interval::exact(one.clone());
        let scale = |x: &Interval, bits: u64| Interval {
            lo: x.lo.shl(bits),
            hi: x.hi.shl(bits),
        };
        let mut weights = Vec::with_capacity(self.blocks as usize + 1);
        for j in 0..self.blocks {
            weights.push(match (self.two_sided(), j) {
                (true, 0) => h.clone(),
                (true, _) => scale(&h, 1),
                (false, _) => scale(&h, u64::from(self.block_bits)),
            });
            h = h.mul(&factor, wp);
            factor = factor.mul(&step, wp);
        }
        // The tail: h_K/(1 − a), a = e^(−1/t).
        let tail = h.mul(&inverse_one_minus(&exp_neg(1, self.t, wp), wp), wp);
        weights.push(if self.two_sided() { scale(&tail, 1) } else { tail });
        suffix_sums(weights)
    }
}

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

impl Tables {
    fn new(num: u128, den: u64, t: u64) -> Self {
        // M = 1 below t = 64; above, the largest power of two ≤ t/32.
        let block_bits = if t < 64 { 0 } else { 63 - (t / 32).leading_zeros() };
        let blocks = (10 * u128::from(t)).div_ceil(1u128 << block_bits) as u64;
        let weights = Arc::new(BlockWeights {
            num,
            den,
            t,
            block_bits,
            blocks,
        });
        let table = Cdt::weighted(weights.clone(), 63);
        let (rate, rate_shift) = if block_bits == 0 { (0, 0) } else { rate(num, den) };
        Tables {
            block_bits,
            blocks,
            table,
            rate,
            rate_shift,
            #[cfg(test)]
            weights,
        }
    }

    /// `e = ⌊n·Q₆₄/2^(s − 63)⌋`, with `e ≤ 2⁶³·n/(2σ²) < e + 2` (see
    /// [`DiscreteGaussianSampler`]): a 192-bit product of which 64 bits are kept.
    #[inline(always)]
    fn exponent(&self, n: u128) -> u128 {
        exponent(n, self.rate, self.rate_shift)
    }

    /// The words that decide the acceptance on their own for the bracket `[e, e + 2]`
    /// (see [`band`]).
    #[inline(always)]
    fn band(e: u128) -> (u64, u64) {
        band(e, 2)
    }
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
/// `above = below + band_span(slack) ≥ lo + 63`.
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
/// remainder staying below `d` throughout.
///
/// * `d < 2⁹⁶` (at least 32 bits of room in 128): up to that many quotient bits per
///   native division.
/// * `2⁹⁶ ≤ d < 2¹²⁵`: 62 bits per chunk from a 128/64-bit estimate. With
///   `t = bitlen(d) − 64` and `D = ⌊d/2ᵗ⌋ + 1 > d/2ᵗ`, the digit
///   `q̂ = ⌊⌊rem·2ᵏ/2ᵗ⌋/D⌋` never exceeds the true `⌊rem·2ᵏ/d⌋` and falls short of it
///   by less than `(2ᵏ + 1)·2ᵗ/d + 2 < 3` (`d ≥ 2^(t+63)`, `k ≤ 62`), so the new
///   remainder `rem·2ᵏ − q̂·d` lies in `[0, 3d) ⊂ [0, 2¹²⁷)`, is computed exactly modulo
///   `2¹²⁸`, and at most three subtractions of `d` finish the digit. (The per-σ
///   constants of the discrete Gaussian at σ ≈ 2⁶⁰, `d ≈ 2¹²¹`, took ~270 one-bit
///   steps before: most of a microsecond.)
/// * `d ≥ 2¹²⁵`: one quotient bit per step of binary long division.
pub(super) fn div_shifted(a: u128, shift: u32, d: u128) -> (u128, u128) {
    debug_assert!((1..1 << 127).contains(&d));
    let (mut q, mut rem) = (a / d, a % d);
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
        let mut left = shift;
        while left > 0 {
            let k = left.min(62);
            // ⌊rem·2ᵏ/2ᵗ⌋ < 2^(64 + k): rem < d < 2^(t + 64).
            let scaled = if t >= k { rem >> (t - k) } else { rem << (k - t) };
            let mut digit = scaled / top;
            // rem·2ᵏ − digit·d ∈ [0, 3d), exact modulo 2¹²⁸ (the bits shifted out of
            // `rem << k` and the product's overflow cancel).
            let mut next = (rem << k).wrapping_sub(digit.wrapping_mul(d));
            while next >= d {
                next -= d;
                digit += 1;
            }
            q = (q << k) | digit;
            rem = next;
            left -= k;
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

    fn build(num: u128, den: u64) -> Self {
        // ⌊√(num/den)⌋ = ⌊√⌊num/den⌋⌋ for non-negative reals.
        let floor_sigma = (num / den as u128).isqrt() as u64; // ≤ 2^62
        // ⌈σ⌉: ⌊σ⌋ when σ² = ⌊σ⌋² exactly (an integer σ ≥ 1), else ⌊σ⌋ + 1.
        let square = u128::from(floor_sigma) * u128::from(floor_sigma);
        let integer = floor_sigma > 0 && square.checked_mul(u128::from(den)) == Some(num);
        let t = if integer { floor_sigma } else { floor_sigma + 1 };
        let engine = if floor_sigma >= fixed::MIN_FLOOR_SIGMA {
            Engine::Fixed(Box::new(fixed::Scaled::new(num, den, floor_sigma)))
        } else {
            let mut built = false;
            let tables = cached(&CACHE, (num, den), || {
                built = true;
                Tables::new(num, den, t)
            });
            if !built {
                CACHE_REUSES.fetch_add(1, Ordering::Relaxed);
            }
            Engine::Table(tables)
        };
        Self { num, den, t, engine }
    }

    /// The number of constructions, process-wide so far, that reused the tables of a σ²
    /// built before (through the cache of the last 256 σ² with `⌊σ⌋ < 4096`; larger σ
    /// build nothing per σ², so they never count). For benchmarks that must measure
    /// construction for new parameters: a difference of 0 across the measured loop
    /// shows that no construction was a cache hit.
    pub fn table_cache_reuses() -> u64 {
        CACHE_REUSES.load(Ordering::Relaxed)
    }

    /// The tables of a σ² below the shared-proposal regime (tests only).
    #[cfg(test)]
    fn tables(&self) -> &Tables {
        match &self.engine {
            Engine::Table(tables) => tables,
            Engine::Fixed(_) => panic!("σ² = {}/{} uses the shared proposal", self.num, self.den),
        }
    }

    /// `σ² = num/den` as `(num, den)`.
    pub fn sigma_squared(&self) -> (u128, u64) {
        (self.num, self.den)
    }

    /// σ as the nearest `f64` (for display; never used on the sampling path).
    pub fn sigma(&self) -> f64 {
        (self.num as f64 / self.den as f64).sqrt()
    }

    /// `t = ⌈σ⌉`, which sets the block size `M` (see the type's docs).
    pub fn proposal_scale(&self) -> u64 {
        self.t
    }

    /// The number of 64-bit words each trial draws, a function of σ alone: 1 below
    /// `t = 64` (one trial per sample), 2 up to `⌊σ⌋ = 4095`, 3 from 4096 on (the shared
    /// proposal). A sample draws `N` times this many (outside the fallback event),
    /// `N ≥ 1` independent of the sample, `E[N] < 1.41` (at most about 1.013 below 4096
    /// and 1.033 above in practice).
    pub fn words_per_trial(&self) -> usize {
        let tables = match &self.engine {
            Engine::Table(tables) => tables,
            Engine::Fixed(_) => return 3,
        };
        if tables.block_bits == 0 { 1 } else { 2 }
    }

    /// One sample, from a bit source.
    #[inline]
    pub fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        match &self.engine {
            Engine::Table(tables) => self.sample_table(tables, bits),
            Engine::Fixed(scaled) => scaled.sample_bits(bits),
        }
    }

    /// One sample from the tables of this σ² (`⌊σ⌋ < 4096`).
    #[inline(always)]
    fn sample_table<R: CryptoRng + ?Sized>(&self, tables: &Tables, bits: &mut BitSource<'_, R>) -> i128 {
        if tables.block_bits == 0 {
            // t < 64: one word, the sign (top bit) and |Z| by inversion; a zero ignores
            // the sign.
            loop {
                let word = bits.word();
                let q = tables.table.sample(word & (u64::MAX >> 1), bits);
                let magnitude = if q < tables.blocks {
                    i128::from(q)
                } else {
                    match self.tail(bits) {
                        Some(y) => y,
                        None => continue,
                    }
                };
                let mask = -i128::from(word >> 63);
                return (magnitude ^ mask) - mask;
            }
        }
        let m = tables.block_bits;
        loop {
            let first = bits.word();
            let second = bits.word();
            let q = tables.table.sample(first & (u64::MAX >> 1), bits);
            let negative = first >> 63 == 1;
            let mask = -i128::from(negative);
            if q >= tables.blocks {
                match self.tail(bits) {
                    Some(y) => return (y ^ mask) - mask,
                    None => continue,
                }
            }
            let r = second & ((1u64 << m) - 1);
            // V: the spare 64 − m ≥ 57 bits of R's word.
            let (uniform, uniform_bits) = (second >> m, 64 - m);
            // y = QM + R < 2⁶⁸; n = R·(2QM + R) < 2¹²⁵.
            let start = u128::from(q) << m;
            let y = start | u128::from(r);
            let n = u128::from(r) * (2 * start + u128::from(r));
            let band = Tables::band(tables.exponent(n));
            let accepted = uniform_in_band(band, uniform, uniform_bits, || self.exact(n), bits);
            // Both decisions computed, no short-circuit: (negative, 0) counts 0 twice.
            if accepted & !(negative & (y == 0)) {
                let y = y as i128;
                return (y ^ mask) - mask;
            }
        }
    }

    /// One sample, saturating to the `i64` range.
    #[inline]
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        saturate_i64(self.sample_bits(&mut BitSource::new(rng)))
    }

    /// The acceptance exponent `E = n/(2σ²) = n·den/(2·num)` exactly, as (numerator,
    /// denominator).
    #[cold]
    fn exact(&self, n: u128) -> (Big, Big) {
        (
            Big::from_u128(n).mul(&Big::from_u128(u128::from(self.den))),
            Big::from_u128(2 * self.num),
        )
    }

    /// The tail block (`y ≥ KM`, probability below `2⁻⁶⁵` per trial), by exact
    /// comparisons alone: `G ≥ g` iff `U < e^(−g/t)` for a fresh uniform `U`
    /// (exponential then binary search), and `y = KM + G` is accepted with probability
    /// `exp(−(G·(2KM + G)/(2σ²) − G/t))`. `None` when rejected.
    #[cold]
    #[inline(never)]
    fn tail<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> Option<i128> {
        let low = exact_geometric(1, u128::from(self.t), bits);
        let t = Big::from_u128(u128::from(self.t));
        let g = Big::from_u128(low);
        let Engine::Table(tables) = &self.engine else {
            unreachable!("the tail of the per-σ tables")
        };
        let start = Big::from_u128(u128::from(tables.blocks) << tables.block_bits);
        // (G(2KM + G)·den·t − 2·num·G) / (2·num·t) ≥ 0, since KM·t ≥ σ².
        let two_num = Big::from_u128(2 * self.num);
        let numerator = g
            .mul(&start.shl(1).add(&g))
            .mul(&Big::from_u128(u128::from(self.den)))
            .mul(&t)
            .sub_sat(&two_num.mul(&g));
        let denominator = two_num.mul(&t);
        let mut v = LazyUniform::new(bits.word(), 64);
        let accepted = exact_less_exp_neg(&mut v, &numerator, &denominator, bits);
        let y = start.add(&g).to_u128_sat();
        accepted.then(|| i128::try_from(y).unwrap_or(i128::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::certified::probe;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{Rng, SeedableRng};

    fn variances() -> Vec<(u128, u64)> {
        vec![
            (1, 4),                             // σ = 0.5, t = 1
            (1, 1),                             // σ = 1
            (100, 1),                           // σ = 10
            (3969, 1),                          // σ = 63, the last two-sided
            (4096, 1),                          // σ = 64, M = 2
            (4900 * 5, 5),                      // integer σ = 70, den = 5
            (1_000_000, 1),                     // σ = 1000, M = 16
            (9_000_000, 7),                     // σ ≈ 1134, rational
            (4096 * 4096 - 1, 1),               // ⌊σ⌋ = 4095, the last per-σ table
            (4096 * 4096, 1),                   // σ = 4096, the shared proposal from here on
            (1u128 << 52, 1),                   // σ = 2²⁶
            (1u128 << 80, 1),                   // σ = 2⁴⁰
            ((1u128 << 84) + 7, 1),             // σ just above 2⁴², not integer
            (1u128 << 120, 1),                  // σ = 2⁶⁰
            (MAX_VARIANCE_NUM, 3),              // the largest numerator, rational
            (12_345_678_901_234_567, u64::MAX), // σ < 1, wide denominator
        ]
    }

    /// The variances of [`variances`] below the shared-proposal regime (`⌊σ⌋ < 4096`).
    fn table_variances() -> Vec<(u128, u64)> {
        variances()
            .into_iter()
            .filter(|&(num, den)| (num / u128::from(den)).isqrt() < u128::from(fixed::MIN_FLOOR_SIGMA))
            .collect()
    }

    /// The regime and the words per trial follow `⌊σ⌋`: per-σ tables below 4096 (1 word
    /// below `t = 64`, 2 above), the shared proposal from 4096 on (3 words).
    #[test]
    fn the_regime_follows_the_floor_of_sigma() {
        for (num, den, words, shared) in [
            (3969u128, 1u64, 1usize, false),
            (4096, 1, 2, false),
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

    /// The premises of the fallback bound: at most 640 blocks, at most two undecided
    /// words per threshold, `KM ≥ 10t`, `M ≤ t/32` (or `M = 1` below `t = 64`), and the
    /// tail block's probability below `2⁻⁶⁵` (from the certified sums).
    #[test]
    fn block_tables_meet_the_premises_of_the_fallback_bound() {
        for (num, den) in table_variances() {
            let noise = DiscreteGaussianSampler::from_ratio(num, den).unwrap();
            let tables = noise.tables();
            let (t, m, k) = (u128::from(noise.t), tables.block_bits, u128::from(tables.blocks));
            assert!(k <= 640, "σ² = {num}/{den}: K = {k}");
            assert!(k << m >= 10 * t, "σ² = {num}/{den}");
            assert_eq!(tables.block_bits == 0, t < 64);
            if t >= 64 {
                assert!(32u128 << m <= t && t < 64u128 << m, "σ² = {num}/{den}");
            }
            assert!(
                probe::max_undecided_per_entry(&tables.table) <= 2,
                "σ² = {num}/{den}"
            );
            assert_eq!(probe::len(&tables.table) as u128, k, "σ² = {num}/{den}");
            let sums = tables.weights.suffix_sums(128);
            // w_K/S < 2⁻⁶⁵: S_K·2⁶⁵ < S_0.
            let tail = &sums[k as usize];
            assert!(
                tail.hi.shl(65).cmp(&sums[0].lo).is_lt(),
                "σ² = {num}/{den}: tail too heavy"
            );
        }
    }

    /// The suffix sums `S_0 … S_K` evaluated independently of the sampler's recurrence:
    /// each weight from its own exponential, at 256 bits, as `(lo, hi)`.
    fn reference_sums(noise: &DiscreteGaussianSampler) -> Vec<(Big, Big)> {
        let tables = noise.tables();
        let (num, den) = (noise.num, noise.den);
        let (m, k) = (u64::from(tables.block_bits), tables.blocks);
        let p = 256;
        let h = |j: u64| -> Interval {
            let square = Big::from_u128(u128::from(j) * u128::from(j));
            let exponent = square.mul(&Big::from_u128(u128::from(den))).shl(2 * m);
            exp_neg_big(&exponent, &Big::from_u128(2 * num), p)
        };
        let times = |x: &Interval, bits: u64| Interval {
            lo: x.lo.shl(bits),
            hi: x.hi.shl(bits),
        };
        let mut weights: Vec<Interval> = (0..k)
            .map(|j| match (tables.block_bits == 0, j) {
                (true, 0) => h(0),
                (true, _) => times(&h(j), 1),
                (false, _) => times(&h(j), m),
            })
            .collect();
        let inverse = inverse_one_minus(&exp_neg(1, noise.t, p), p);
        weights.push(times(&h(k).mul(&inverse, p), u64::from(tables.block_bits == 0)));
        pairs(suffix_sums(weights))
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
    fn reference_count(sums: &[(Big, Big)], u: &Big, b: u64) -> Option<u64> {
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

    const TABLE_CASES: [(u128, u64); 6] = [
        (1, 4),
        (100, 1),
        (4096, 1),
        (1_000_000, 1),
        (9_000_000, 7),
        (4096 * 4096 - 1, 1),
    ];

    /// The table's bounds hold the thresholds of the reference sums:
    /// `lo[c]/2⁶³ ≤ C_c ≤ (hi[c] + 1)/2⁶³` is consistent with `C_c ∈ [S_c.lo/S_0.hi,
    /// S_c.hi/S_0.lo]` for every entry.
    #[test]
    fn block_thresholds_hold_the_direct_evaluation() {
        for (num, den) in TABLE_CASES {
            let noise = DiscreteGaussianSampler::from_ratio(num, den).unwrap();
            let sums = reference_sums(&noise);
            assert_table_holds(&noise.tables().table, &sums, &format!("σ² = {num}/{den}"));
        }
    }

    /// The certified fast path of the block table agrees with the 256-bit reference on
    /// 10⁶ random words (half of them shifted right by a random amount, to reach the
    /// tail); words planted inside the bounds of an entry take the exact path and agree
    /// with the reference on the same extended uniform (replayed words).
    #[test]
    fn the_block_table_agrees_with_a_256_bit_reference() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xB10C);
        let (mut decided, mut planted) = (0u64, 0u64);
        for (num, den) in TABLE_CASES {
            let noise = DiscreteGaussianSampler::from_ratio(num, den).unwrap();
            let table = &noise.tables().table;
            let sums = reference_sums(&noise);
            for i in 0..180_000 {
                let word = rng.next_u64() >> 1;
                let u = if i % 2 == 0 {
                    word
                } else {
                    word >> (rng.next_u64() % 63)
                };
                if let Ok(x) = table.fast(u) {
                    let reference = reference_count(&sums, &Big::from_u128(u.into()), 63);
                    assert_eq!(Some(x), reference, "σ² = {num}/{den}, u = {u}");
                    decided += 1;
                }
            }
            for c in 0..probe::len(table) {
                for u in [probe::lo(table)[c], probe::hi(table)[c]] {
                    if table.fast(u).is_ok() {
                        continue;
                    }
                    let mut replay = rng.clone();
                    let x = table.sample(u, &mut BitSource::new(&mut rng));
                    // U's first 63 + 128 bits: the exact path read at most two words.
                    let (w1, w2) = (replay.next_u64(), replay.next_u64());
                    let prefix = Big::from_u128(u.into())
                        .shl(128)
                        .add(&Big::from_u128(u128::from(w1) << 64 | u128::from(w2)));
                    let reference = reference_count(&sums, &prefix, 191);
                    assert_eq!(Some(x), reference, "σ² = {num}/{den}, planted u = {u}");
                    planted += 1;
                }
            }
        }
        println!("block tables: {decided} words decided by the fast path, {planted} planted");
        assert!(decided >= 1_000_000, "{decided}");
        assert!(planted >= 100, "{planted}");
    }

    /// The acceptance decision (band, then exact comparison inside it) agrees with a
    /// 256-bit evaluation of `exp(−E)` on 10⁶ uniforms: 100 uniforms for each of 10⁴
    /// random `(Q, R)`, with the sampler's prefix length (`64 − m` bits or 64).
    #[test]
    fn acceptance_decisions_agree_with_a_256_bit_reference() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xACC);
        let mut checked = 0u64;
        for (num, den) in [
            (1_000_000u128, 1u64),
            (9_000_000, 7),
            (27_000_001, 3),
            (4096 * 4096 - 1, 1),
        ] {
            let noise = DiscreteGaussianSampler::from_ratio(num, den).unwrap();
            let tables = noise.tables();
            let (m, k) = (tables.block_bits, tables.blocks);
            let len = 64 - m;
            for _ in 0..2500 {
                let (q, r) = (rng.next_u64() % k, rng.next_u64() & ((1 << m) - 1));
                let start = u128::from(q) << m;
                let n = u128::from(r) * (2 * start + u128::from(r));
                let band = Tables::band(tables.exponent(n));
                let (num_e, den_e) = noise.exact(n);
                let e = exp_neg_big(&num_e, &den_e, 256);
                for _ in 0..100 {
                    let v = rng.next_u64() >> (64 - len);
                    let mut bits = BitSource::new(&mut rng);
                    let accepted = uniform_in_band(band, v, len, || noise.exact(n), &mut bits);
                    // V ∈ [v, v + 1)/2^len: decided by the reference unless it meets e.
                    let (low, high) = (Big::from_u128(v.into()), Big::from_u128(u128::from(v) + 1));
                    if high.shl(256 - u64::from(len)).cmp(&e.lo).is_le() {
                        assert!(accepted, "σ² = {num}/{den}, n = {n}, v = {v}");
                    } else if low.shl(256 - u64::from(len)).cmp(&e.hi).is_ge() {
                        assert!(!accepted, "σ² = {num}/{den}, n = {n}, v = {v}");
                    } else {
                        continue;
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked >= 999_000, "{checked}");
    }

    /// `e ≤ 2⁶³·E < e + 2` for the exact `E = R(2QM + R)/(2σ²)` on random and extreme
    /// `(Q, R)`, and the band holds `2⁶⁴·exp(−E)` (256-bit enclosure).
    #[test]
    fn the_acceptance_exponent_and_band_hold_the_exact_values() {
        let mut rng = ChaCha20Rng::seed_from_u64(0x263);
        for (num, den) in table_variances() {
            let noise = DiscreteGaussianSampler::from_ratio(num, den).unwrap();
            let tables = noise.tables();
            if tables.block_bits == 0 {
                continue;
            }
            let (m, k) = (tables.block_bits, tables.blocks);
            let mut cases: Vec<(u64, u64)> = (0..5000)
                .map(|_| (rng.next_u64() % k, rng.next_u64() & ((1 << m) - 1)))
                .collect();
            cases.extend([
                (0, 0),
                (0, 1),
                (k - 1, (1 << m) - 1),
                (k - 1, 0),
                (1, (1 << m) - 1),
            ]);
            for (q, r) in cases {
                let start = u128::from(q) << m;
                let n = u128::from(r) * (2 * start + u128::from(r));
                let e = tables.exponent(n);
                let label = format!("σ² = {num}/{den}, q = {q}, r = {r}");
                assert_eq!(Tables::band(e), band(e, 2), "{label}");
                assert_bracket_and_band(e, 2, &noise.exact(n), &label);
            }
        }
    }

    /// The tail block, forced, at σ = 10 (`KM = 100`): every value lies at or beyond
    /// `KM`, and the mean excess of the accepted values matches the exact
    /// `Σ g·e^(−(KM + g)²/(2σ²)) / Σ e^(−(KM + g)²/(2σ²))` within 5 standard errors.
    #[test]
    fn the_tail_block_has_the_discrete_gaussian_law_beyond_the_table() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        let noise = DiscreteGaussianSampler::from_ratio(100, 1).unwrap();
        let start = i128::from(noise.tables().blocks) << noise.tables().block_bits;
        assert_eq!(start, 100);
        let mut bits = BitSource::new(&mut rng);
        let excess: Vec<f64> = (0..4000)
            .filter_map(|_| noise.tail(&mut bits))
            .map(|y| {
                assert!(y >= start, "{y}");
                (y - start) as f64
            })
            .collect();
        assert!(excess.len() >= 300, "{} accepted", excess.len());
        let weight = |g: f64| (-((100.0 + g).powi(2) - 100.0f64.powi(2)) / 200.0).exp();
        let z = mean_excess_z(&excess, weight, 400);
        assert!(z.abs() < 5.0, "z = {z}");
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
