//! The discrete Laplace (two-sided geometric) distribution
//! `Pr[Z = z] = (1 − α)/(1 + α) · α^|z|`, `α = exp(−1/τ)`, sampled exactly with a number
//! of random words that is independent of the sample.

use super::certified::{Big, Cdt, LazyUniform, Threshold, exact_less_exp_neg, exp_neg};
use super::fixed_exp::{BUILD_BITS, Entry, powers};
use super::{BitSource, Rational, TableCache, cached};
use rand_core::CryptoRng;
use std::sync::{Arc, OnceLock};

/// Tables built so far, by scale.
static CACHE: TableCache<Rational, Tables> = OnceLock::new();

/// Up to this many bits of `R` (`m ≤ 31`, `τ < 2³⁷`), a trial draws two words: the
/// acceptance uniform `V` shares `R`'s second word; above, `R` has the second word
/// and `V` a third.
const TWO_WORD_MAX_BITS: u32 = 31;
/// The fewest bits of `V` in a two-word trial: when `m > 64 − 42 = 22`, the lowest
/// `m − 22` bits of `R` come from the first word (below the `Q` word), so that `V`
/// keeps 42 bits of the second.
const UNIFORM_MIN_BITS: u32 = 42;

/// Exact sampler of the discrete Laplace distribution with rational scale `τ = num/den`
/// (any `num, den ≥ 1`, so `2⁻⁶⁴ < τ < 2⁶⁴`):
/// `Pr[Z = z] = (1 − α)/(1 + α) · α^|z|` for every integer `z`, `α = exp(−1/τ)`.
///
/// **Algorithm.** Two regimes, both by inversion of certified cumulative-distribution
/// tables (CDT: a count of the thresholds of a decreasing sequence above one uniform
/// real `U`):
///
/// * **`τ < 16`: one word, no rejection.** The top bit of the word is the sign, the
///   other 63 bits give `|Z|` from the table of `Pr[|Z| ≥ c] = 2αᶜ/(1 + α)`, `c ≥ 1`
///   (so `Pr[Z = 0] = (1 − α)/(1 + α)` and `Pr[Z = ±k] = (1 − α)αᵏ/(1 + α)`); the sign
///   of a zero is ignored.
/// * **`τ ≥ 16`.** `Z = ±G` with a fair sign and `G` one-sided geometric,
///   `Pr[G = g] = (1 − α)αᵍ`; the pair (negative, 0), which would count 0 twice, is
///   rejected and the whole trial repeated (Canonne, Kamath & Steinke 2020, Algorithm
///   2; this is **not** the `sign × geometric` sampler of the seed document 002).
///   `G = M·Q + R` with `M = 2ᵐ` the largest power of two `≤ τ/32` (`M = 1`, `G = Q`,
///   below `τ = 64`). `Q` and `R` are independent: `Pr[Q ≥ j] = α^(jM)`, by inversion of
///   a table read with bits of the trial's first word (its top bit is the sign); and
///   `R ∈ [0, M)` with `Pr[R = r] ∝ αʳ`, by **rejection**: `R` is `m` uniform bits,
///   accepted with probability `αᴿ ≥ exp(−1/32)` (else the whole trial is repeated), so
///   an accepted `R` has exactly the law `∝ αʳ`. The acceptance compares a uniform `V`
///   with `αᴿ = Πⱼ aⱼ^(dⱼ)` (`dⱼ` the bytes of `R`, `aⱼ = α^(2⁸ʲ)`), a product of
///   `⌈m/8⌉` certified 64-bit entries of per-scale power tables. The words are laid out
///   by `m` alone:
///
///   | `m` | first word | second word | third word |
///   |---|---|---|---|
///   | `≤ 22` | sign, `Q` (63 bits) | `R` (low `m` bits), `V` (`64 − m ≥ 42` bits) | — |
///   | `23 … 31` | sign, `Q` (`85 − m ≥ 54` bits), low `m − 22` bits of `R` | rest of `R` (22 bits), `V` (42 bits) | — |
///   | `≥ 32` | sign, `Q` (63 bits) | `R` | `V` (64 bits) |
///
/// The tables hold **certified** 64-bit bounds of the thresholds and powers, computed
/// at construction with integer interval arithmetic (128 or 192 fractional bits,
/// outward rounding; `exp(−x)` by the alternating Taylor series and binary powering of
/// an enclosure of `e⁻¹`). When the word lies strictly outside the bounds of every
/// threshold, and `V` outside the enclosure of `αᴿ`, everything is decided by integer
/// comparisons alone (fast path). Otherwise that uniform is extended with further
/// words and compared exactly with enclosures refined to its length plus 64 bits,
/// until decided. No floating point is involved anywhere; the output distribution is
/// **exactly** the discrete Laplace distribution.
///
/// **Draw independence.** Below `τ = 16` a sample draws exactly one word (outside the
/// fallback event `F`, "some comparison needed more words"). Above, every trial draws
/// exactly [`words_per_trial`](Self::words_per_trial) words (1 below `τ = 64`, 2 while
/// `m ≤ 31`, 3 above) before anything else; the number of trials `N` is geometric
/// (rejections: the sign's, probability `(1 − α)/2`, and `R`'s) and, as in any
/// rejection sampler with i.i.d. trials, **independent of the accepted value**. So,
/// outside `F`, the number of words drawn is `N·words_per_trial`, statistically
/// independent of `Z`.
///
/// **Fallback bound.** A table entry leaves at most two values of its word undecided
/// (its enclosure is narrower than one unit of the word; asserted at construction in
/// tests). Below `τ = 16` the magnitude table has at most
/// `⌈τ·(63·ln 2 + ln 2)⌉ + 1 ≤ 712` entries, so a sample falls back with probability
/// `≤ 2·712/2⁶³ < 2⁻⁵²`. Above, the `Q` table read with `w` bits has at most
/// `⌈w·ln 2·τ/M⌉ + 1` entries (`τ/M < 64`): at most 2796 for `w = 63`, so its word falls
/// back with probability `≤ 2·2796/2⁶³ < 2⁻⁵⁰`, and at most 2397 for `w = 54` (the
/// narrowest, `m = 31`): `≤ 2·2397/2⁵⁴ < 2⁻⁴¹·⁷⁷`. The enclosure of `αᴿ` is at most
/// `W ≤ 5⌈m/8⌉ − 2 ≤ 38` units of `2⁻⁶⁴` wide (each power entry at most 3, and a product
/// at most the sum of its factors' widths plus 2; both checked in tests), so `V`, known
/// to `ℓ` bits, is undecided with probability `≤ (W + 2^(65−ℓ))/2⁶⁴`: `< 2⁻⁴²·⁹` for
/// `m ≤ 20` (`ℓ = 64 − m`), `< 2⁻⁴⁰·⁹⁹` for `ℓ = 42`, `< 2⁻⁵⁸` with a word of its own.
/// A trial succeeds with probability at least `exp(−1/32)·(1 − 1/32) > 0.93`, so
/// `E[N] < 1.07` (and `E[N] < 1.032` from `m = 23` on, where `(1 − α)/2 < 2⁻²⁸`). By the
/// union bound a sample falls back with probability `Pr[F] < 2⁻⁴²·⁷` for `m ≤ 20` and
/// `m ≥ 32`, `Pr[F] < 1.07·(2⁻⁵⁰ + 2⁻⁴⁰·⁹⁹) < 2⁻⁴⁰·⁸⁸` for `m = 21, 22`, and
/// `Pr[F] < 1.032·(2⁻⁴¹·⁷⁷ + 2⁻⁴⁰·⁹⁹) < 2⁻⁴⁰·²⁸` for `23 ≤ m ≤ 31` (the two-word layouts
/// that spend `V`'s 42 bits and `Q`'s 54 to 62 bits); so below `2⁻⁴⁰` at every scale.
///
/// **Cost.** One word per sample below `τ = 16`; above, one (`τ < 64`), two
/// (`τ < 2³⁷`, e.g. `τ = 10⁶` or the `τ ≈ 2³⁶` of [`Laplace`](crate::Laplace)) or three
/// words per trial and `E[N] ≤ 1.07` trials (`≤ 1.04` from `τ = 64` on). In the `Q`
/// table a guide-table lookup (one bucket read, then one lower bound and two candidate
/// upper bounds read together and two comparisons, the same for every word); for `R`,
/// `⌈m/8⌉` table reads and `⌈m/8⌉ − 1` products of 64-bit lower bounds.
/// Construction computes the tables (at most `2·712` or `2796` certified thresholds and
/// `⌈m/8⌉·256` powers).
///
/// ```
/// use dpmech::sampling::{DiscreteLaplace, Rational};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let noise = DiscreteLaplace::new(Rational::new(10, 1)?); // scale 10: one word
/// let z = noise.sample(&mut ChaCha20Rng::seed_from_u64(5));
/// assert_eq!(noise.words_per_trial(), 1);
/// # let _ = z;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Clone)]
pub struct DiscreteLaplace {
    scale: Rational,
    tables: Arc<Tables>,
}

/// One trial of [`DiscreteLaplace`] for `τ ≥ 16`, before `R`'s acceptance (see
/// [`DiscreteLaplace::draw_trial`]).
#[derive(Debug, Clone, Copy)]
struct Trial {
    /// The sign; (negative, 0) must be rejected.
    negative: bool,
    /// `G = M·Q + R`.
    magnitude: u128,
    /// `R`.
    remainder: u64,
    /// The first `uniform_bits` bits of the acceptance uniform `V`.
    uniform: u64,
    /// 0 when `M = 1` (nothing to accept), `64 − m` or 42 when `V` shares `R`'s second
    /// word (`m ≤ 31`), else 64.
    uniform_bits: u32,
}

struct Tables {
    /// `m`, with `M = 2ᵐ`.
    block_bits: u32,
    /// The table of `Q` (`63 − low_bits(m)`-bit words).
    quotient: Cdt,
    /// `powers[j][d]` encloses `aⱼ^d`, `aⱼ = α^(2⁸ʲ)`, for each byte `j` of `R`
    /// (`⌈m/8⌉` tables, none when `M = 1`).
    powers: Vec<[Entry; 256]>,
    /// The lower bounds of `powers` alone, all the fast path reads (half the cache
    /// lines).
    power_lower: Vec<[u64; 256]>,
    /// `W`, with `2⁶⁴·αʳ ≤ lo + W` for the lower bound `lo` of every `r`: the sum of the
    /// widths (`hi + 1 − lo`) of the widest entry of each power table, plus 2 per
    /// product (a product's width is at most its factors' widths plus 2), so that the
    /// fast path needs only the chain of lower bounds.
    power_width: u128,
    /// For `τ < 16`: the table of `|Z|` itself, `Pr[|Z| ≥ c] = 2αᶜ/(1 + α)` (63-bit
    /// words), so that a sample needs no rejection.
    magnitude: Option<Cdt>,
    /// `τ = num/den`, for the exact resolution of an undecided acceptance.
    num: u64,
    den: u64,
}

impl core::fmt::Debug for Tables {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Tables")
            .field("block_bits", &self.block_bits)
            .field("power_tables", &self.powers.len())
            .finish_non_exhaustive()
    }
}

impl core::fmt::Debug for DiscreteLaplace {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DiscreteLaplace")
            .field("scale", &self.scale)
            .field("words_per_trial", &self.words_per_trial())
            .finish()
    }
}

impl PartialEq for DiscreteLaplace {
    fn eq(&self, other: &Self) -> bool {
        self.scale == other.scale
    }
}

impl Eq for DiscreteLaplace {}

impl DiscreteLaplace {
    /// The discrete Laplace distribution of scale `τ` (`α = exp(−1/τ)`).
    ///
    /// The tables are a function of `τ` alone and are shared, through a process-wide
    /// cache of the last 256 scales, by every sampler of the same scale.
    pub fn new(scale: Rational) -> Self {
        let tables = cached(&CACHE, scale, || Tables::new(scale));
        Self { scale, tables }
    }
}

impl Tables {
    fn new(scale: Rational) -> Self {
        let (num, den) = (scale.num() as u128, scale.den() as u128);
        let small = num < 16 * den;
        // M = 1 below τ = 64; above, the largest power of two ≤ τ/32 (so τ/M ∈ [32, 64)).
        let block_bits = if num < 64 * den {
            0
        } else {
            127 - (num / (32 * den)).leading_zeros()
        };
        let quotient = Cdt::new(
            Threshold {
                step: den << block_bits,
                den: scale.num(),
                size: None,
                two_sided: false,
            },
            63 - low_bits(block_bits),
        );
        let magnitude = small.then(|| {
            Cdt::new(
                Threshold {
                    step: den,
                    den: scale.num(),
                    size: None,
                    two_sided: true,
                },
                63,
            )
        });
        // aⱼ = α^(2⁸ʲ) = exp(−2⁸ʲ·den/num) for each byte j of R (2⁸ʲ·den < 2¹²⁰).
        let powers: Vec<[Entry; 256]> = (0..block_bits.div_ceil(8))
            .map(|j| powers(&exp_neg(den << (8 * j), scale.num(), BUILD_BITS)))
            .collect();
        let power_width = powers_width(&powers);
        let power_lower = powers.iter().map(|table| table.map(|(lo, _)| lo)).collect();
        Tables {
            block_bits,
            quotient,
            powers,
            power_lower,
            power_width,
            magnitude,
            num: scale.num(),
            den: scale.den(),
        }
    }

    /// The lower bound `lo ≤ 2⁶⁴·αʳ`, from one entry per byte of `r` (the same reads and
    /// products for every `r`); `2⁶⁴·αʳ ≤ lo + power_width` (see `power_width`).
    #[inline(always)]
    fn power_lower_bound(&self, r: u64) -> u64 {
        let low = |a: u64, b: u64| ((u128::from(a) * u128::from(b)) >> 64) as u64;
        combine(&self.power_lower, r, u64::MAX, low)
    }

    /// The full certified enclosure `(lo, hi)` of `αʳ`, `lo ≤ 2⁶⁴·αʳ ≤ hi + 1` (the
    /// same products in the same order, so the same `lo` as
    /// [`power_lower_bound`](Self::power_lower_bound)): the reference of the tests of
    /// `power_width`.
    #[cfg(test)]
    fn enclose_power(&self, r: u64) -> Entry {
        combine(&self.powers, r, (u64::MAX, u64::MAX), super::fixed_exp::product)
    }

    /// Whether `V < αʳ`, for `V` uniform on [0, 1) of which the first `len` bits are
    /// `prefix`: decided by the enclosure `[lo, lo + power_width)` when `V`'s interval
    /// lies on one side of it, else exactly (further words).
    #[inline(always)]
    fn accept<R: CryptoRng + ?Sized>(
        &self,
        r: u64,
        prefix: u64,
        len: u32,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        let lo = self.power_lower_bound(r);
        let shift = 64 - len;
        // (prefix + 1)·2^shift ≤ lo, in 64-bit arithmetic: V < (prefix + 1)/2^len ≤ αʳ.
        // The common case (αᴿ > 0.969) first.
        if prefix < lo >> shift {
            return true;
        }
        let lo = u128::from(lo);
        let start = u128::from(prefix) << shift;
        if start >= lo + self.power_width {
            false // V ≥ start/2⁶⁴ ≥ (lo + W)/2⁶⁴ ≥ αʳ
        } else {
            self.accept_exactly(r, prefix, len, bits)
        }
    }

    #[cold]
    fn accept_exactly<R: CryptoRng + ?Sized>(
        &self,
        r: u64,
        prefix: u64,
        len: u32,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        // αʳ = exp(−r·den/num); r < 2⁶¹ and den < 2⁶⁴, so r·den < 2¹²⁵.
        let num = Big::from_u128(u128::from(r) * u128::from(self.den));
        let den = Big::from_u128(u128::from(self.num));
        exact_less_exp_neg(&mut LazyUniform::new(prefix, u64::from(len)), &num, &den, bits)
    }
}

impl DiscreteLaplace {
    /// The scale τ.
    pub fn scale(&self) -> Rational {
        self.scale
    }

    /// The number of 64-bit words each trial draws, a function of the scale alone: 1
    /// below `τ = 64`, 2 while `m ≤ 31` (`τ < 2³⁷`), 3 above. A sample draws `N` times
    /// this many (outside the fallback event), `N ≥ 1` independent of the sample:
    /// `N = 1` below `τ = 16`, `E[N] < 1.07` above.
    pub fn words_per_trial(&self) -> usize {
        match self.tables.block_bits {
            0 => 1,
            m if m <= TWO_WORD_MAX_BITS => 2,
            _ => 3,
        }
    }

    /// One sample, from a bit source, as an `i128`. Draws whole words
    /// ([`BitSource::word`]); buffered bits are left untouched.
    #[inline]
    pub fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        self.sample_inlined(bits)
    }

    /// [`sample_bits`](Self::sample_bits), always inlined: for samplers that draw a
    /// discrete Laplace proposal in their own loop (a call per proposal measurably
    /// costs more than the proposal's arithmetic).
    #[inline(always)]
    pub(crate) fn sample_inlined<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        if let Some(table) = &self.tables.magnitude {
            // One word: the sign (top bit) and |Z| by inversion; a zero ignores the sign.
            let word = bits.word();
            let magnitude = i128::from(table.sample(word & (u64::MAX >> 1), bits));
            let mask = -i128::from(word >> 63);
            return (magnitude ^ mask) - mask;
        }
        loop {
            let (accepted, negative, magnitude) = self.trial(bits);
            // No branch on the sign: with short-circuit `&&` and `if negative`, the
            // accepted zero (always positive) and large outputs (either sign) took
            // different branch patterns, a timing difference that followed the output.
            let reject = !accepted | (negative & (magnitude == 0));
            if reject {
                continue;
            }
            let magnitude = i128::try_from(magnitude).unwrap_or(i128::MAX);
            // Two's complement negation when `negative`, branch-free: (m ⊕ −1) + 1 = −m.
            let mask = -i128::from(negative);
            return (magnitude ^ mask) - mask;
        }
    }

    /// One trial: whether `R` is accepted, the sign and `G`, all fixed words drawn first.
    #[inline(always)]
    pub(crate) fn trial<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> (bool, bool, u128) {
        let trial = self.draw_trial(bits);
        let accepted = trial.uniform_bits == 0
            || self
                .tables
                .accept(trial.remainder, trial.uniform, trial.uniform_bits, bits);
        (accepted, trial.negative, trial.magnitude)
    }

    /// The fixed words of one trial, decoded, with `R`'s acceptance left to
    /// [`trial`](Self::trial): the sign, `G = M·Q + R`, `R`, and the first bits of the
    /// uniform `V` that is to be compared with `αᴿ` (none when `M = 1`).
    #[inline(always)]
    fn draw_trial<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> Trial {
        let tables = &*self.tables;
        let m = tables.block_bits;
        let first = bits.word();
        let second = if m > 0 { bits.word() } else { 0 };
        let third = if m > TWO_WORD_MAX_BITS { bits.word() } else { 0 };
        // The `Q` word: the bits between the sign and `R`'s low bits (if any).
        let low = low_bits(m);
        let q = tables.quotient.sample((first & (u64::MAX >> 1)) >> low, bits);
        let (r, uniform, uniform_bits) = match m {
            0 => (0, 0, 0),
            m if m <= TWO_WORD_MAX_BITS => {
                // R: `low` bits of the first word, `high ≥ 1` of the second; V: the rest.
                let high = m - low;
                let r = (first & ((1u64 << low) - 1)) | ((second & ((1u64 << high) - 1)) << low);
                (r, second >> high, 64 - high)
            }
            _ => (second & ((1u64 << m) - 1), third, 64),
        };
        Trial {
            negative: first >> 63 == 1,
            // q < 2⁶⁴ and m ≤ 63 (τ < 2⁶⁴), r < 2ᵐ: G = q·2ᵐ + r < 2¹²⁷, no overflow.
            magnitude: (u128::from(q) << m) | u128::from(r),
            remainder: r,
            uniform,
            uniform_bits,
        }
    }

    /// One sample, saturating to the `i64` range.
    #[inline]
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        saturate_i64(self.sample_inlined(&mut BitSource::new(rng)))
    }

    /// Fills `out` with independent samples (saturating to `i64`). Same distribution and
    /// same words as calling [`sample`](Self::sample) `out.len()` times; use it to
    /// release many values at one scale without re-creating the sampler.
    pub fn sample_into<R: CryptoRng + ?Sized>(&self, out: &mut [i64], rng: &mut R) {
        let mut bits = BitSource::new(rng);
        for slot in out.iter_mut() {
            *slot = saturate_i64(self.sample_bits(&mut bits));
        }
    }

    /// The table entries left undecided per entry, at most (≤ 2 by construction), the
    /// size of the `Q` table, the widest power entry (units of `2⁻⁶⁴`) and the size of
    /// the magnitude table: the inputs of the fallback bound.
    #[cfg(test)]
    fn table_shape(&self) -> (u64, usize, u128, Option<usize>) {
        let t = &*self.tables;
        let worst = [&t.quotient]
            .into_iter()
            .chain(&t.magnitude)
            .map(Cdt::max_undecided_per_entry)
            .max()
            .unwrap_or(0);
        let widest = t
            .powers
            .iter()
            .flatten()
            .map(|&(lo, hi)| u128::from(hi) + 1 - u128::from(lo))
            .max()
            .unwrap_or(0);
        (
            worst,
            t.quotient.len(),
            widest,
            t.magnitude.as_ref().map(Cdt::len),
        )
    }
}

/// The product of one entry per byte of `r` (entry `tables[j][byte j]`), `one` for no
/// table: balanced, so the dependent products are at most three deep for up to five
/// tables (the width bound of `powers_width` holds for any order).
#[inline(always)]
fn combine<T: Copy>(tables: &[[T; 256]], r: u64, one: T, mul: impl Fn(T, T) -> T) -> T {
    let f = |j: usize| tables[j][((r >> (8 * j)) & 0xff) as usize];
    match tables.len() {
        0 => one, // M = 1: r = 0, α⁰ = 1
        1 => f(0),
        2 => mul(f(0), f(1)),
        3 => mul(mul(f(0), f(1)), f(2)),
        4 => mul(mul(f(0), f(1)), mul(f(2), f(3))),
        5 => mul(mul(mul(f(0), f(1)), mul(f(2), f(3))), f(4)),
        n => (2..n).fold(mul(f(0), f(1)), |acc, j| mul(acc, f(j))),
    }
}

/// The width bound `W` of a product of one entry from each table (see
/// `Tables::power_width`); 1 for no table (`α⁰ = 1`, lower bound `2⁶⁴ − 1`).
///
/// Why a product adds at most 2: with factors `x ∈ [a, a + wₐ)`, `y ∈ [b, b + w_b)` (units
/// of `2⁻⁶⁴`, `a, b < 2⁶⁴`) the product's bounds are `⌊ab/2⁶⁴⌋ > ab/2⁶⁴ − 1` and
/// `⌈(a + wₐ)(b + w_b)/2⁶⁴⌉ < ab/2⁶⁴ + wₐ + w_b + wₐw_b/2⁶⁴ + 1`, so its integer width is
/// below `wₐ + w_b + 2 + wₐw_b/2⁶⁴` and at most `wₐ + w_b + 2`, whatever the order of the
/// products. `power_lower_bound` computes exactly the lower bounds of those products
/// (the tests compare it with the full both-bounds products in the same order).
fn powers_width(powers: &[[Entry; 256]]) -> u128 {
    let widest = |table: &[Entry; 256]| {
        table
            .iter()
            .map(|&(lo, hi)| u128::from(hi) + 1 - u128::from(lo))
            .max()
            .unwrap_or(1)
    };
    let sum: u128 = powers.iter().map(widest).sum();
    (sum + 2 * (powers.len() as u128).saturating_sub(1)).max(1)
}

/// The low bits of `R` drawn from a trial's first word, below the `Q` word, for `M = 2ᵐ`:
/// `m − 22` for `22 < m ≤ 31` (so that `V` keeps 42 bits of the second word), else 0.
#[inline(always)]
fn low_bits(m: u32) -> u32 {
    if m <= TWO_WORD_MAX_BITS {
        m.saturating_sub(64 - UNIFORM_MIN_BITS)
    } else {
        0
    }
}

/// Clamps an `i128` into the `i64` range.
#[inline]
pub(crate) fn saturate_i64(value: i128) -> i64 {
    i64::try_from(value).unwrap_or(if value < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{Rng, SeedableRng};

    fn scales() -> Vec<Rational> {
        [
            (1u64, 1u64 << 62),
            (1, 3),
            (1, 2),
            (1, 1),
            (7, 1),
            (8, 1),
            (10, 1),
            (159, 10),
            (16, 1),
            (1000, 7),
            (1_000_000, 1),
            ((1 << 26) + (1 << 25), 1),
            ((1 << 27) + 5, 1),
            ((1 << 28) + 7, 1),
            ((1 << 35) + 3, 1),
            ((1 << 37) - 1, 1),
            (1 << 37, 1),
            ((1 << 40) + 3, 1),
            (1 << 60, 1),
            (u64::MAX, 1),
            (u64::MAX, u64::MAX - 1),
        ]
        .into_iter()
        .map(|(n, d)| Rational::new(n, d).unwrap())
        .collect()
    }

    /// The premises of the fallback bound: every entry leaves at most two words
    /// undecided; below τ = 16 the `Q` and magnitude tables have at most 712 entries
    /// (one word per sample falls back with probability below 2⁻⁵²); above, the `Q`
    /// table read with `w` bits has at most `⌈w·ln 2·64⌉ + 1` entries and every power
    /// entry is at most 3 units wide, so the enclosure of `αᴿ` is at most `5⌈m/8⌉ − 2`
    /// wide (checked on random `R`), and a sample falls back with probability below
    /// 2⁻⁴²·⁷, or 2⁻⁴⁰·⁸⁸ and 2⁻⁴⁰·²⁸ for the two-word layouts with `m = 21, 22` and
    /// `23 ≤ m ≤ 31` (the documented bounds, with the layout of each scale).
    #[test]
    fn tables_satisfy_the_fallback_bound_premises() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xFA11);
        for scale in scales() {
            let noise = DiscreteLaplace::new(scale);
            let (worst, q_len, widest, magnitude) = noise.table_shape();
            assert!(worst <= 2, "{scale:?}: {worst}");
            // Guided (one bucket read, one comparison), so the look-up's work is the same
            // for every word.
            assert!(noise.tables.quotient.is_guided(), "{scale:?}: Q table not guided");
            if let Some(table) = &noise.tables.magnitude {
                assert!(table.is_guided(), "{scale:?}: magnitude table not guided");
            }
            let small = u128::from(scale.num()) < 16 * u128::from(scale.den());
            assert_eq!(magnitude.is_some(), small, "{scale:?}");
            let t = &*noise.tables;
            let m = t.block_bits;
            assert_eq!(t.powers.len() as u32, m.div_ceil(8), "{scale:?}");
            assert_eq!(
                m > 0,
                u128::from(scale.num()) >= 64 * u128::from(scale.den()),
                "{scale:?}"
            );
            let bound = if let Some(mag) = magnitude {
                assert!(q_len <= 712 && mag <= 712, "{scale:?}: {q_len}, {mag}");
                2.0 * mag.max(q_len) as f64 / 2f64.powi(63)
            } else {
                let width = t.quotient.width();
                assert_eq!(width, 63 - low_bits(m), "{scale:?}");
                let entries = (f64::from(width) * 2f64.ln() * 64.0).ceil() as usize + 1;
                assert!(q_len <= entries, "{scale:?}: {q_len} > {entries}");
                assert!(widest <= 3, "{scale:?}: {widest}");
                let w = t.power_width;
                assert!(w <= 5 * u128::from(m.div_ceil(8)).max(1) - 2, "{scale:?}: {w}");
                for _ in 0..10_000 {
                    let r = rng.next_u64() & ((1u64 << m) - 1);
                    let (lo, hi) = t.enclose_power(r);
                    assert_eq!(lo, t.power_lower_bound(r), "{scale:?}, r = {r}");
                    assert!(u128::from(hi) + 1 - u128::from(lo) <= w, "{scale:?}, r = {r}");
                }
                // V's length ℓ, from the layout: all of R in the second word, or its
                // low bits in the first word and V's 42 in the second.
                let len = match m {
                    0 => 0,
                    m if m <= TWO_WORD_MAX_BITS => {
                        assert_eq!(low_bits(m), m.saturating_sub(22), "{scale:?}");
                        64 - (m - low_bits(m))
                    }
                    _ => 64,
                };
                assert!(m == 0 || len >= UNIFORM_MIN_BITS, "{scale:?}: ℓ = {len}");
                let undecided = if m == 0 {
                    0.0
                } else {
                    (w as f64 + 2f64.powi(65 - len as i32)) / 2f64.powi(64)
                };
                // E[N] < 1.07 trials per sample, < 1.032 from m = 23 on.
                let trials = if m >= 23 { 1.032 } else { 1.07 };
                trials * (2.0 * q_len as f64 / 2f64.powi(width as i32) + undecided)
            };
            let documented = match t.block_bits {
                21 | 22 => -40.88,
                23..=TWO_WORD_MAX_BITS => -40.28,
                _ => -42.7,
            };
            assert!(bound < 2f64.powf(documented), "{scale:?}: {bound}");
        }
    }

    /// `Q` follows its exact law `Pr[Q = j] ∝ α^(jM)`, and the accepted `R` its law
    /// `Pr[R = r] ∝ αʳ` on `[0, M)`: Pearson's chi-square with α = 1e-3, 10⁵ draws each,
    /// critical value from statrs; bins merged so each expects ≥ 5. The acceptance rate
    /// matches `E[αᴿ] = (1 − α^M)/(M(1 − α))` within 5 standard deviations (a sampler
    /// that skipped the acceptance would be 25 or more away at these scales).
    #[test]
    fn each_table_follows_its_exact_law() {
        use statrs::distribution::{ChiSquared, ContinuousCDF};
        let n = 100_000usize;
        let mut rng = ChaCha20Rng::seed_from_u64(0x7AB1E);
        let fit = |counts: &[u64], p: &[f64]| -> (f64, f64) {
            let (mut stat, mut bins, mut acc_o, mut acc_e) = (0.0, 0usize, 0.0, 0.0);
            for (&o, &q) in counts.iter().zip(p) {
                acc_o += o as f64;
                acc_e += q * n as f64;
                if acc_e >= 5.0 {
                    stat += (acc_o - acc_e).powi(2) / acc_e;
                    bins += 1;
                    (acc_o, acc_e) = (0.0, 0.0);
                }
            }
            stat += if acc_e > 0.0 {
                (acc_o - acc_e).powi(2) / acc_e
            } else {
                0.0
            };
            let critical = ChiSquared::new(bins as f64).unwrap().inverse_cdf(1.0 - 1e-3);
            (stat, critical)
        };
        for (num, den) in [
            (5000u64, 1u64),
            (1_000_000, 1),
            (1, 3),
            ((1 << 35) + 3, 1),
            ((1 << 40) + 3, 1),
        ] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let tau = num as f64 / den as f64;
            let t = &*noise.tables;
            let big_m = 1u64 << t.block_bits;
            // Q, by inversion of its table.
            let a = (-(big_m as f64) / tau).exp();
            let support = t.quotient.len() + 1;
            let mut counts = vec![0u64; support + 1];
            let mut bits = BitSource::new(&mut rng);
            let width = t.quotient.width();
            for _ in 0..n {
                let u = bits.word() >> (64 - width);
                let x = t.quotient.sample(u, &mut bits) as usize;
                counts[x.min(support)] += 1;
            }
            let mut p: Vec<f64> = (0..=support).map(|c| (1.0 - a) * a.powi(c as i32)).collect();
            p[support] = a.powi(support as i32);
            let (stat, critical) = fit(&counts, &p);
            assert!(stat <= critical, "τ = {num}/{den}, Q: {stat} > {critical}");
            if t.block_bits == 0 {
                continue;
            }
            // R, by rejection: the accepted remainders of whole trials.
            let alpha = (-1.0 / tau).exp();
            let (mut accepted, mut trials) = (0usize, 0usize);
            let bins = 1024usize.min(big_m as usize);
            let width = big_m as usize / bins;
            let mut counts = vec![0u64; bins];
            while accepted < n {
                let (ok, _, g) = noise.trial(&mut bits);
                trials += 1;
                if ok {
                    accepted += 1;
                    counts[(g % u128::from(big_m)) as usize / width] += 1;
                }
            }
            // Bin b holds r ∈ [b·w, (b + 1)·w): mass ∝ α^(bw)(1 − α^w).
            let total = 1.0 - alpha.powf(big_m as f64);
            let p: Vec<f64> = (0..bins)
                .map(|b| alpha.powf((b * width) as f64) * (1.0 - alpha.powf(width as f64)) / total)
                .collect();
            let (stat, critical) = fit(&counts, &p);
            assert!(stat <= critical, "τ = {num}/{den}, R: {stat} > {critical}");
            let rate = total / (big_m as f64 * (1.0 - alpha));
            let sd = (rate * (1.0 - rate) / trials as f64).sqrt();
            let seen = accepted as f64 / trials as f64;
            assert!(
                (seen - rate).abs() <= 5.0 * sd,
                "τ = {num}/{den}: {seen} vs {rate}"
            );
        }
    }

    /// `X = x` holds exactly iff `U < C_x` (or `x = 0`) and `U ≥ C_(x+1)` (or `x` is
    /// the largest value), since the exact thresholds decrease.
    /// Each comparison extends `U` with the same words, from a generator seeded `seed`.
    fn exact_agrees(table: &Cdt, u: u64, x: u64, seed: u64) -> bool {
        let less = |c: u64| {
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            table.exact_less_at(u, c, &mut BitSource::new(&mut rng))
        };
        (x == 0 || less(x)) && (table.bound() == Some(x) || !less(x + 1))
    }

    /// The guide tables give the same certain count and decision as a binary search: on random
    /// words, on both sides of every threshold bound and at every bucket edge (linear
    /// and logarithmic). Every table (`Q`, magnitude), at every scale, is guided.
    #[test]
    fn guide_tables_count_like_a_binary_search() {
        let mut rng = ChaCha20Rng::seed_from_u64(0x6D1DE);
        for (num, den) in [
            (1u64, 3u64),
            (1, 1),
            (10, 1),
            (159, 10),
            (1_000_000, 1),
            ((1 << 35) + 3, 1),
            ((1 << 40) + 3, 1),
            (u64::MAX, 1),
        ] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let t = &*noise.tables;
            let mut tables: Vec<(&Cdt, u32)> = vec![(&t.quotient, t.quotient.width())];
            tables.extend(t.magnitude.iter().map(|c| (c, 63)));
            for (i, (table, width)) in tables.into_iter().enumerate() {
                assert!(table.is_guided(), "τ = {num}/{den}: table {i} not guided");
                let mask = u64::MAX >> (64 - width);
                let mut words: Vec<u64> = (0..20_000).map(|_| rng.next_u64() & mask).collect();
                for &l in &table.lo {
                    words.extend([l, l.saturating_sub(1), l.saturating_add(1) & mask]);
                }
                for b in 0..1u64 << 10 {
                    let first = b << (width - 10);
                    words.extend([first, first.saturating_sub(1), first | 1]);
                }
                let log_bits = super::super::certified::LOG_GUIDE_BITS;
                for p in 0..width {
                    for digits in 0..1u64 << log_bits {
                        let first =
                            (1u64 << p) | ((digits << p.saturating_sub(log_bits)) & ((1u64 << p) - 1));
                        words.extend([first, first - 1, first | 1]);
                    }
                }
                for u in words {
                    let fast = table.fast(u);
                    assert_eq!(
                        fast.unwrap_or_else(|c| c),
                        table.certain_by_search(u),
                        "τ = {num}/{den}, table {i}, u = {u}"
                    );
                    assert_eq!(
                        fast.is_ok(),
                        table.decided_by_search(u),
                        "τ = {num}/{den}, table {i}, u = {u}: decision"
                    );
                }
            }
        }
    }

    /// The certified fast path agrees with an arbitrary-precision evaluation on 10⁶
    /// random words (spread over the tables of four scales, one with a 54-bit `Q` word), and words planted inside
    /// every entry's undecided band take the exact path and still give the exact answer.
    #[test]
    fn certified_fast_path_agrees_with_exact_comparisons() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xCE27);
        let mut checked = 0u64;
        for (num, den) in [(1u64, 3u64), (10, 1), ((1u64 << 37) - 1, 1), ((1 << 40) + 3, 1)] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let t = &*noise.tables;
            let mut tables: Vec<(&Cdt, u32)> = vec![(&t.quotient, t.quotient.width())];
            tables.extend(t.magnitude.iter().map(|c| (c, 63)));
            let per_table = 1_000_000 / (4 * tables.len() as u64) + 1;
            for (table, width) in tables {
                for _ in 0..per_table {
                    let u = rng.next_u64() >> (64 - width);
                    if let Ok(x) = table.fast(u) {
                        assert!(exact_agrees(table, u, x, checked), "τ = {num}/{den}, u = {u}");
                        checked += 1;
                    }
                }
                let mut planted = 0;
                for c in 0..table.len() {
                    for u in table.lo[c]..=table.hi[c] {
                        if (width < 64 && u >> width != 0) || table.fast(u).is_ok() {
                            continue;
                        }
                        planted += 1;
                        for seed in 0..4 {
                            let mut rng = ChaCha20Rng::seed_from_u64(seed);
                            let x = table.sample(u, &mut BitSource::new(&mut rng));
                            assert!(exact_agrees(table, u, x, seed), "planted u = {u}");
                        }
                    }
                }
                assert!(planted > 0, "τ = {num}/{den}: no undecided word");
            }
        }
        assert!(checked >= 1_000_000, "{checked}");
    }

    /// The acceptance of `R`: on 10⁶ random remainders (over four scales: `V` of
    /// `64 − m` bits, of 42 bits, and of a word of its own) the product of power entries encloses the exact `αʳ`
    /// (an arbitrary-precision evaluation at 128 bits) and every decided comparison
    /// agrees with it; uniforms planted inside the enclosure take the exact path and
    /// give the exact answer.
    #[test]
    fn acceptance_enclosures_hold_and_planted_uniforms_resolve_exactly() {
        use super::super::certified::exp_neg as exact_exp_neg;
        let mut rng = ChaCha20Rng::seed_from_u64(0xACCE);
        let mut checked = 0u64;
        for (num, den) in [
            (1_000_000u64, 1u64),
            (1_000_003, 7),
            ((1 << 35) + 3, 1),
            ((1 << 40) + 3, 1),
        ] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let t = &*noise.tables;
            let m = t.block_bits;
            let len = if m <= TWO_WORD_MAX_BITS {
                64 - (m - low_bits(m))
            } else {
                64
            };
            let mut planted = 0;
            for i in 0..255_000u64 {
                let r = rng.next_u64() & ((1u64 << m) - 1);
                let (lo, hi) = t.enclose_power(r);
                assert_eq!(lo, t.power_lower_bound(r));
                // lo·2⁶⁴ ≤ 2¹²⁸·αʳ ≤ (hi + 1)·2⁶⁴ ≤ (lo + W)·2⁶⁴: the fast path's bounds.
                let exact = exact_exp_neg(u128::from(r) * u128::from(den), num, 128);
                let lo_big = Big::from_u128(u128::from(lo)).shl(64);
                let hi_big = Big::from_u128(u128::from(hi) + 1).shl(64);
                assert!(u128::from(hi) < u128::from(lo) + t.power_width);
                assert!(lo_big.cmp(&exact.lo).is_le(), "τ = {num}/{den}, r = {r}");
                assert!(exact.hi.cmp(&hi_big).is_le(), "τ = {num}/{den}, r = {r}");
                // A random uniform, or one planted inside the enclosure.
                let prefix = if i % 1000 == 0 {
                    planted += 1;
                    (((2 * u128::from(lo) + t.power_width) / 2) >> (64 - len)) as u64
                } else {
                    rng.next_u64() >> (64 - len)
                };
                let seed = i;
                let fast = t.accept(
                    r,
                    prefix,
                    len,
                    &mut BitSource::new(&mut ChaCha20Rng::seed_from_u64(seed)),
                );
                let exact = exact_less_exp_neg(
                    &mut LazyUniform::new(prefix, u64::from(len)),
                    &Big::from_u128(u128::from(r) * u128::from(den)),
                    &Big::from_u128(u128::from(num)),
                    &mut BitSource::new(&mut ChaCha20Rng::seed_from_u64(seed)),
                );
                assert_eq!(fast, exact, "τ = {num}/{den}, r = {r}, prefix = {prefix}");
                checked += 1;
            }
            assert!(planted >= 255, "τ = {num}/{den}");
        }
        assert!(checked >= 1_000_000, "{checked}");
    }
}
