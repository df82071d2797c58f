//! `exp(−x/2ˢ)` for any integer `x < 2¹²⁸` and shift `s ≤ 63`, as a certified 64-bit
//! fixed-point enclosure computed in constant work, and the one-word Bernoulli trial
//! built on it (the coins of the selection mechanisms).
//!
//! Write `γ = x/2ˢ = i + f/2⁶⁴` with `i = ⌊γ⌋` and `f < 2⁶⁴` (exact, as `s ≤ 63`), and
//! `f` in eight 8-bit digits `f = Σ dⱼ 2⁸ʲ`. Then
//! `exp(−γ) = exp(−i) · Πⱼ exp(−dⱼ 2⁸ʲ⁻⁶⁴)`, and each factor is read from a table of
//! certified enclosures (built once per process at 128 fractional bits with the
//! integer interval arithmetic of [`certified`](super::certified), then rounded outward to
//! 64 bits; for `i ≥ 64`, `exp(−i) < 2⁻⁹²` and the enclosure is `[0, 2⁻⁶⁴]`). Nine
//! table reads and eight products of the lower bounds, rounded down, give `lo`; with
//! both bounds multiplied out (rounded outward) the width would be at most the sum of
//! the factors' widths plus 2 per product, in any order, so `W` = that sum for the
//! widest entries (25, checked `≤ 64` in tests) gives `lo ≤ 2⁶⁴·exp(−γ) ≤ lo + W` and
//! `hi = lo + W − 1`.
//!
//! **The trial.** One 64-bit word `u` is drawn: `U = u/2⁶⁴ + (further bits)` is uniform
//! on [0, 1); `u < lo` decides `U < exp(−γ)`, `u > hi` decides the opposite, and only
//! the at most 64 words in between fall back to the exact lazy comparison (further
//! words of `U` against enclosures of `exp(−γ)` at growing precision). So every trial
//! draws exactly one word, except with probability at most `64·2⁻⁶⁴ = 2⁻⁵⁸`; the result
//! is exactly Bernoulli(`exp(−γ)`), and the work done does not depend on `γ` outside the
//! fallback.

use super::BitSource;
use super::certified::{Big, Interval, LazyUniform, exact_less_exp_neg, exp_neg, exp_neg_big};
use crate::CryptoRng;
use std::sync::OnceLock;

/// Fractional bits of the construction-time enclosures.
pub(crate) const BUILD_BITS: u64 = 128;

/// Enclosures `(lo, hi)` with `lo ≤ 2⁶⁴·v ≤ hi + 1` (so `hi = u64::MAX` encodes the
/// upper bound 1).
pub(crate) type Entry = (u64, u64);

struct Tables {
    /// `exp(−i)` for `i < 64` (both bounds: the tests' reference).
    #[cfg(test)]
    whole: [Entry; 64],
    /// `digits[j][d]` encloses `exp(−d·2⁸ʲ⁻⁶⁴)` (both bounds: the tests' reference).
    #[cfg(test)]
    digits: [[Entry; 256]; 8],
    /// The lower bounds of `whole` and `digits` alone: all [`enclose`] reads (`whole_lo`
    /// has a 0 at index 64: the lower bound of `exp(−i)` from `i = 64` on).
    whole_lo: [u64; 65],
    digits_lo: [[u64; 256]; 8],
    /// `W`: `2⁶⁴·exp(−γ) ≤ lo + W` for the `lo` of [`enclose`], the sum of the widest
    /// entry's width (`hi + 1 − lo`) of each of the nine factors plus 2 per product.
    width: u64,
    /// `W′`: the same bound for [`ExpNegLower::lower`], whose four lowest bytes are one
    /// linear factor (width 2) instead of four table entries, so six factors and five
    /// products.
    linear_width: u64,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Box<Tables>> = OnceLock::new();
    TABLES.get_or_init(build)
}

/// Rounds a 128-bit enclosure outward to an [`Entry`].
fn entry(v: &Interval) -> Entry {
    let lo = v.lo.shr(BUILD_BITS - 64).to_u128_sat().min(u64::MAX as u128) as u64;
    let ceil = v.hi.shr_ceil(BUILD_BITS - 64).to_u128_sat();
    (lo, ceil.saturating_sub(1).min(u64::MAX as u128) as u64)
}

/// The enclosures of `base⁰, base¹, …` (powers by repeated outward-rounded products).
pub(crate) fn powers<const N: usize>(base: &Interval) -> [Entry; N] {
    let one = Interval {
        lo: Big::pow2(BUILD_BITS),
        hi: Big::pow2(BUILD_BITS),
    };
    let mut out = [(0u64, 0u64); N];
    let mut acc = one;
    for slot in &mut out {
        *slot = entry(&acc);
        acc = acc.mul(base, BUILD_BITS);
    }
    out
}

fn build() -> Box<Tables> {
    let mut digits = [[(0u64, 0u64); 256]; 8];
    // j = 0: t = d·2⁻⁶⁴ and 1 − t ≤ exp(−t) ≤ 1 − t + t²/2, so for d ≥ 1
    // 2⁶⁴ − d ≤ 2⁶⁴·exp(−t) ≤ 2⁶⁴ − d + d²/2⁶⁵ < 2⁶⁴ − d + 1: one unit wide.
    digits[0][0] = (u64::MAX, u64::MAX);
    for (d, slot) in digits[0].iter_mut().enumerate().skip(1) {
        let v = u64::MAX - d as u64 + 1;
        *slot = (v, v);
    }
    for (j, table) in digits.iter_mut().enumerate().skip(1) {
        // exp(−2⁸ʲ⁻⁶⁴) = exp(−1/2^(64−8j)), 2^(64−8j) ≤ 2⁵⁶.
        *table = powers(&exp_neg(1, 1u64 << (64 - 8 * j), BUILD_BITS));
    }
    let whole: [Entry; 64] = powers(&exp_neg(1, 1, BUILD_BITS));
    let widest = |table: &[Entry]| {
        table
            .iter()
            .map(|&(lo, hi)| (u128::from(hi) + 1 - u128::from(lo)) as u64)
            .max()
            .unwrap_or(1)
    };
    // The whole part's factor is an entry of `whole` or, from i = 64 on, [0, 2⁻⁶⁴]
    // (width 1); eight products join the nine factors.
    let width = widest(&whole).max(1) + digits.iter().map(|t| widest(t)).sum::<u64>() + 2 * 8;
    let linear_width = widest(&whole).max(1) + digits[4..].iter().map(|t| widest(t)).sum::<u64>() + 2 + 2 * 5;
    Box::new(Tables {
        whole_lo: core::array::from_fn(|i| whole.get(i).map_or(0, |&(lo, _)| lo)),
        digits_lo: digits.map(|table| table.map(|(lo, _)| lo)),
        #[cfg(test)]
        whole,
        #[cfg(test)]
        digits,
        width,
        linear_width,
    })
}

/// `(a·b)` outward rounded: lower bounds multiply down, upper bounds (stored minus one)
/// multiply up.
#[cfg(test)]
pub(crate) fn product((al, ah): Entry, (bl, bh): Entry) -> Entry {
    let lo = ((al as u128 * bl as u128) >> 64) as u64;
    // ⌈(ah + 1)(bh + 1)/2⁶⁴⌉ − 1 = ⌊(ah·bh + ah + bh)/2⁶⁴⌋ (no overflow: ≤ 2¹²⁸ − 1).
    let hi = ((ah as u128 * bh as u128 + ah as u128 + bh as u128) >> 64) as u64;
    (lo, hi)
}

/// `exp(−x/2^shift)` as a certified enclosure `(lo, hi)`: `lo ≤ 2⁶⁴·exp(−x/2^shift) ≤
/// hi + 1`, `hi + 1 − lo ≤ 64`. `shift ≤ 63`.
///
/// Only the lower bounds are multiplied, as a balanced tree (four products deep instead
/// of nine): a product's width is at most its factors' widths plus 2 in any order, so
/// the upper bound is `lo + W − 1` with the table-wide `W` (checked `≤ 64` in tests).
#[inline]
pub(crate) fn enclose(x: u128, shift: u32) -> (u64, u64) {
    let t = tables();
    let lo = lower_product(lower_factors(t, x, shift));
    (lo, lo.saturating_add(t.width - 1))
}

/// The balanced product tree of [`enclose`] over the nine lower factors.
#[inline(always)]
fn lower_product([first, d0, d1, d2, d3, d4, d5, d6, d7]: [u64; 9]) -> u64 {
    let m = mul_lower;
    m(m(m(first, d0), m(d1, d2)), m(m(d3, d4), m(m(d5, d6), d7)))
}

/// Lower bounds of `exp(−γ)` for `γ = x/2⁶⁴ < 2⁶⁴` given in 64.64 fixed point (`x`
/// exact), with the tables borrowed once (the selection mechanisms evaluate one weight
/// per candidate in a loop): `lower(x) ≤ 2⁶⁴·exp(−x/2⁶⁴) ≤ lower(x) + W′`,
/// [`band_width`](Self::band_width)` = W′ ≤ 64` (checked in tests).
///
/// [`enclose`]'s factorisation, with the whole part and the fraction read off the two
/// halves of `x` (no shift), and the four lowest bytes of the fraction taken together:
/// for `f < 2³²` and `t = f·2⁻⁶⁴ < 2⁻³²`, `1 − t ≤ exp(−t) ≤ 1 − t + t²/2` with
/// `2⁶⁴·t²/2 < 2⁻¹`, so `2⁶⁴ − 1 − f` is a lower bound of `2⁶⁴·exp(−t)` at most 2 units
/// below it, with no table read. The whole part's entry, the four upper bytes' entries
/// and that factor make six factors and five products (instead of nine and eight), and
/// `W′` is their widths' sum plus 2 per product, as for `W`.
#[derive(Clone, Copy)]
pub(crate) struct ExpNegLower {
    tables: &'static Tables,
}

impl core::fmt::Debug for ExpNegLower {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ExpNegLower")
    }
}

impl ExpNegLower {
    /// The view (builds the process-wide tables on first use).
    #[inline]
    pub(crate) fn new() -> Self {
        Self { tables: tables() }
    }

    /// The lower bound: `lower(x) ≤ 2⁶⁴·exp(−x/2⁶⁴) ≤ lower(x) + W′`.
    #[inline(always)]
    pub(crate) fn lower(&self, x: u128) -> u64 {
        // No closures, `min` or `from` calls here: unoptimised builds (examples, debug)
        // would make each a call, once per candidate of a selection.
        let t = self.tables;
        let whole = x >> 64;
        let first = t.whole_lo[if whole < 64 { whole as usize } else { 64 }];
        let frac = x as u64;
        let (d4, d5) = (digit_factor(t, frac, 4), digit_factor(t, frac, 5));
        let (d6, d7) = (digit_factor(t, frac, 6), digit_factor(t, frac, 7));
        let linear = u64::MAX - (frac & 0xffff_ffff);
        let m = mul_lower;
        m(m(m(first, d4), m(d5, d6)), m(d7, linear))
    }

    /// `W′`: `2⁶⁴·exp(−x/2⁶⁴) ≤ lower(x) + W′` for every `x` (`W′ ≤ 64`).
    #[inline]
    pub(crate) fn band_width(&self) -> u64 {
        self.tables.linear_width
    }

    /// Bernoulli(`exp(−x/2⁶⁴)`), exactly, decided by a word `u` already drawn (the
    /// first 64 bits of the uniform `U`): heads when `u < lower(x)`, tails when
    /// `u ≥ lower(x) + W′`, and for the at most `W′ ≤ 64` words in between (probability
    /// `≤ 2⁻⁵⁸`) the exact lazy comparison of `U` with `exp(−x/2⁶⁴)`, drawing further
    /// words of `U` from `bits`. The coins of permute-and-flip; the caller draws the
    /// words (in batches).
    #[inline(always)]
    pub(crate) fn coin<R: CryptoRng + ?Sized>(&self, x: u128, u: u64, bits: &mut BitSource<'_, R>) -> bool {
        let lo = self.lower(x);
        if u >= lo && u - lo < self.tables.linear_width {
            resolve_fixed_point(x, u, bits)
        } else {
            u < lo
        }
    }
}

/// [`ExpNegLower::coin`]'s exact comparison of `U` (first word `u`) with `exp(−x/2⁶⁴)`.
#[cold]
fn resolve_fixed_point<R: CryptoRng + ?Sized>(x: u128, u: u64, bits: &mut BitSource<'_, R>) -> bool {
    x == 0 || resolve_exact(u, 64, (Big::from_u128(x), Big::pow2(64)), bits)
}

/// [`enclose`]'s lower bound of `exp(−x′/2^shift)` for `x′ ≤ x`, `x` with the two
/// lowest bytes of its 64-bit fraction cleared (`x − x′ < 2^(shift − 48)`): two
/// products fewer (those bytes' factors are not read), for callers whose band has room
/// for the coarser argument. `lo ≤ 2⁶⁴·exp(−x′/2^shift) ≤ lo + W`: a product of fewer
/// factors is no wider.
#[inline]
pub(crate) fn enclose_coarse(x: u128, shift: u32) -> u64 {
    let [first, _, _, d2, d3, d4, d5, d6, d7] = lower_factors(tables(), x, shift);
    let m = mul_lower;
    m(m(first, m(d2, d3)), m(m(d4, d5), m(d6, d7)))
}

/// The lower bounds of the factors of `exp(−x/2^shift)`: the whole part's (0 from 64
/// on: `exp(−64) < 2⁻⁹²`) and those of the eight bytes of the 64-bit fraction, lowest
/// first.
#[inline(always)]
fn lower_factors(t: &Tables, x: u128, shift: u32) -> [u64; 9] {
    debug_assert!(shift <= 63);
    let whole = x >> shift;
    // The fraction as a 64-bit binary fraction (exact: shift ≤ 63).
    let frac = ((x & ((1u128 << shift) - 1)) << (64 - shift)) as u64;
    let first = t.whole_lo[whole.min(64) as usize];
    let d = |j: usize| digit_factor(t, frac, j);
    [first, d(0), d(1), d(2), d(3), d(4), d(5), d(6), d(7)]
}

/// The lower bound of the factor of byte `j` of the fraction, `exp(−dⱼ·2⁸ʲ⁻⁶⁴)`.
#[inline(always)]
fn digit_factor(t: &Tables, frac: u64, j: usize) -> u64 {
    t.digits_lo[j][((frac >> (8 * j)) & 0xff) as usize]
}

/// `⌊a·b/2⁶⁴⌋`: the product of two lower bounds (units of `2⁻⁶⁴`), rounded down.
#[inline(always)]
fn mul_lower(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) >> 64) as u64
}

/// [`enclose`] with both bounds multiplied out in a chain (the reference of the tests:
/// its width is the actual one, at most `W`).
#[cfg(test)]
fn enclose_chain(x: u128, shift: u32) -> (u64, u64) {
    let t = tables();
    let whole = x >> shift;
    let frac = ((x & ((1u128 << shift) - 1)) << (64 - shift)) as u64;
    let mut acc = if whole < 64 {
        t.whole[whole as usize]
    } else {
        (0, 0)
    };
    for (j, table) in t.digits.iter().enumerate() {
        acc = product(acc, table[((frac >> (8 * j)) & 0xff) as usize]);
    }
    acc
}

/// `x_lo ≤ 2⁶³·num/den ≤ x_hi` for `1 ≤ den ≤ 2⁶⁴`, capped at `64·2⁶³` (where the
/// enclosure of [`enclose`] is `[0, 2⁻⁶⁴]` anyway): one 128-bit division for the
/// whole part and one for 63 fractional bits.
#[inline]
fn dyadic_bounds(num: u128, den: u128) -> (u128, u128) {
    const CAP: u128 = 64 << 63;
    debug_assert!((1..=1 << 64).contains(&den));
    let whole = num / den;
    if whole >= 64 {
        return (CAP, CAP);
    }
    let scaled = (num - whole * den) << 63; // remainder < 2⁶⁴: no overflow
    let fraction = scaled / den;
    let lo = (whole << 63) | fraction;
    (lo, lo + u128::from(fraction * den != scaled))
}

/// Dyadic bounds of `γ = N/D` from `n = ⌊N/2ˢ⌋` and `d = ⌊D/2ˢ⌋` (`1 ≤ d ≤ 2⁶⁴`;
/// `truncated` when `s > 0`): then `n ≤ N/2ˢ < n + 1` and `d ≤ D/2ˢ < d + 1`, so
/// `n/(d + 1) ≤ γ ≤ (n + 1)/d`.
#[inline]
fn ratio_bounds(n: u128, d: u128, truncated: bool) -> (u128, u128) {
    if truncated {
        (dyadic_bounds(n, d + 1).0, dyadic_bounds(n.saturating_add(1), d).1)
    } else {
        dyadic_bounds(n, d)
    }
}

/// Bernoulli(`exp(−γ)`), exactly, for a rational `γ` known to lie in
/// `[x_lo/2⁶³, x_hi/2⁶³]`, from one 64-bit word: the word is compared with the
/// certified enclosures of `exp(−x_hi/2⁶³)` (below it: `U < exp(−γ)`) and
/// `exp(−x_lo/2⁶³)` (above it: `U ≥ exp(−γ)`). The words in between — at most
/// `64 + 2⁶⁴·(e^(−x_lo/2⁶³) − e^(−x_hi/2⁶³)) ≤ 64 + 2·(x_hi − x_lo)` of them — extend
/// `U` and compare it exactly with `exp(−γ)`, `γ = exact()` as (numerator,
/// denominator), at growing precision.
#[inline]
pub(crate) fn bernoulli_exp_neg_bounded<R: CryptoRng + ?Sized>(
    (x_lo, x_hi): (u128, u128),
    exact: impl FnOnce() -> (Big, Big),
    bits: &mut BitSource<'_, R>,
) -> bool {
    bernoulli_in_band(band((x_lo, x_hi)), exact, bits)
}

/// The trial of [`bernoulli_exp_neg_bounded`] from a precomputed [`band`]: one word
/// decides outside `below..=above`, the exact comparison inside.
#[inline]
pub(crate) fn bernoulli_in_band<R: CryptoRng + ?Sized>(
    band: (u64, u64),
    exact: impl FnOnce() -> (Big, Big),
    bits: &mut BitSource<'_, R>,
) -> bool {
    let u = bits.word();
    uniform_in_band(band, u, 64, exact, bits)
}

/// Whether `U < exp(−γ)` for a uniform `U ∈ [0, 1)` whose first `len` bits
/// (`1 ≤ len ≤ 64`) are `prefix`, given the [`band`] of γ: decided when all of `U`'s
/// interval `[prefix, prefix + 1)·2⁻ˡᵉⁿ` lies below `below` or above `above` (in
/// units of `2⁻⁶⁴`), else by extending `U` with further words and comparing it
/// exactly with `exp(−γ)`, `γ = exact()`. With `len = 64` this is
/// [`bernoulli_in_band`]; a shorter prefix (the spare bits of a word that served
/// another purpose) is undecided with probability at most
/// `(above + 1 − below + 2·2⁶⁴⁻ˡᵉⁿ)/2⁶⁴`.
#[inline(always)]
pub(crate) fn uniform_in_band<R: CryptoRng + ?Sized>(
    (below, above): (u64, u64),
    prefix: u64,
    len: u32,
    exact: impl FnOnce() -> (Big, Big),
    bits: &mut BitSource<'_, R>,
) -> bool {
    debug_assert!((1..=64).contains(&len) && (len == 64 || prefix >> len == 0));
    // U's interval is [start, last + 1)/2⁶⁴, in 64-bit arithmetic: last < 2⁶⁴.
    let start = prefix << (64 - len);
    let last = start | ((u64::MAX >> 1) >> (len - 1)); // the low 64 − len bits set
    if last < below {
        true // U < (last + 1)/2⁶⁴ ≤ below/2⁶⁴ ≤ exp(−γ)
    } else if start > above {
        false // U ≥ start/2⁶⁴ ≥ (above + 1)/2⁶⁴ ≥ exp(−γ)
    } else {
        resolve_exact(prefix, len, exact(), bits)
    }
}

/// The words `below..=above` that [`bernoulli_exp_neg_bounded`] leaves undecided, from
/// one enclosure `(lo, hi)` of `exp(−x_lo/2⁶³)`: with `w = x_hi − x_lo`,
/// `2⁶⁴·exp(−x_hi/2⁶³) ≥ 2⁶⁴·exp(−x_lo/2⁶³)·(1 − w/2⁶³) ≥ lo − 2w`, so `lo − 2w` is a
/// lower enclosure of `exp(−x_hi/2⁶³)` (the band grows by `2w`, as documented; a second
/// table evaluation is used only for an unusually wide bracket).
#[inline]
pub(crate) fn band((x_lo, x_hi): (u128, u128)) -> (u64, u64) {
    let (lo, hi) = enclose(x_lo, 63);
    let w = x_hi - x_lo;
    let below = if w <= 1 << 10 {
        lo.saturating_sub(2 * w as u64)
    } else {
        enclose(x_hi, 63).0
    };
    (below, hi)
}

#[cold]
fn resolve_exact<R: CryptoRng + ?Sized>(
    prefix: u64,
    len: u32,
    (num, den): (Big, Big),
    bits: &mut BitSource<'_, R>,
) -> bool {
    exact_less_exp_neg(&mut LazyUniform::new(prefix, u64::from(len)), &num, &den, bits)
}

/// Bernoulli(`exp(−num/den)`), exactly, for any `num < 2¹²⁸` and `den ≥ 1`, from one
/// 64-bit word except on a fallback event of probability at most `324·2⁻⁶⁴ < 2⁻⁵⁵`
/// (see [`bernoulli_exp_neg_bounded`]: with `den ≤ 2⁶⁴`, `x_hi − x_lo ≤ 1`; wider
/// denominators are truncated to 64 bits, which moves `2⁶³γ < 2⁶⁹` by at most
/// `2⁶³γ·2⁻⁶² + 2 ≤ 130` units). The same work and one word whatever γ is, so the
/// trial's cost reveals nothing about it.
#[inline]
pub(crate) fn bernoulli_exp_neg_ratio<R: CryptoRng + ?Sized>(
    num: u128,
    den: u128,
    bits: &mut BitSource<'_, R>,
) -> bool {
    debug_assert!(den >= 1);
    let shift = 64u32.saturating_sub(den.leading_zeros());
    let bounds = ratio_bounds(num >> shift, den >> shift, shift > 0);
    bernoulli_exp_neg_bounded(bounds, || (Big::from_u128(num), Big::from_u128(den)), bits)
}

/// Bernoulli(`1/(1 + m·exp(−x/2ˢ))`) for an integer `m ≥ 1`, from one 64-bit word: the
/// keep-or-change coin of randomized response (`m = 1`: keep with `e^ε/(1 + e^ε)`; `m = k
/// − 1`: keep with `e^ε/(e^ε + k − 1)`). Both decision thresholds are computed once, at
/// construction, from the certified enclosure of `exp(−x/2ˢ)` (at most 64 units of
/// `2⁻⁶⁴` wide), so the words left undecided number at most `64·m + 2`: with
/// probability at most `(64·m + 2)·2⁻⁶⁴` per trial (`≤ 2⁻⁴¹` for `m < 2¹⁶`) the trial
/// falls back to an exact lazy comparison drawing further words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeepCoin {
    x: u128,
    shift: u32,
    m: u64,
    /// `u < keep_below` decides "keep".
    keep_below: u128,
    /// `u ≥ change_from` decides "change".
    change_from: u128,
}

impl KeepCoin {
    /// The coin for `1/(1 + m·exp(−x/2^shift))`; `m ≥ 1`, `shift ≤ 63`.
    pub(crate) fn new(x: u128, shift: u32, m: u64) -> Self {
        let (lo, hi) = enclose(x, shift);
        // 2⁶⁴·(1 + m·w) lies in [d_lo, d_hi] (each ≤ 2⁶⁴ + (2⁶⁴ − 1)·2⁶⁴ < 2¹²⁸).
        let d_lo = (1u128 << 64) + m as u128 * lo as u128;
        let d_hi = (1u128 << 64) + m as u128 * (hi as u128 + 1);
        // Keep for sure when (u + 1)/2⁶⁴ ≤ 2⁶⁴/d_hi, i.e. u + 1 ≤ ⌊2¹²⁸/d_hi⌋ (taken as
        // ⌊(2¹²⁸ − 1)/d_hi⌋, never larger); change for sure when u/2⁶⁴ ≥ 2⁶⁴/d_lo, i.e.
        // u ≥ ⌈2¹²⁸/d_lo⌉ = ⌊(2¹²⁸ − 1)/d_lo⌋ + 1.
        Self {
            x,
            shift,
            m,
            keep_below: u128::MAX / d_hi,
            change_from: u128::MAX / d_lo + 1,
        }
    }

    /// One trial: `true` (keep) with probability `1/(1 + m·exp(−x/2ˢ))`, exactly.
    #[inline]
    pub(crate) fn sample<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> bool {
        let u = bits.word() as u128;
        if u < self.keep_below {
            true
        } else if u >= self.change_from {
            false
        } else {
            self.resolve(u as u64, bits)
        }
    }

    /// `U·(1 + m·w) < 1`, decided exactly with further words of `U`.
    #[cold]
    fn resolve<R: CryptoRng + ?Sized>(&self, u: u64, bits: &mut BitSource<'_, R>) -> bool {
        let mut uniform = LazyUniform::new(u, 64);
        let m = Big::from_u128(self.m as u128);
        loop {
            let p = uniform.known_bits() + 64;
            let w = exp_neg(self.x, 1u64 << self.shift, p);
            let (u_lo, u_hi) = uniform.bounds(p);
            let one = Big::pow2(p);
            let scale = Big::pow2(2 * p);
            let lhs_hi = u_hi.mul(&one.add(&m.mul(&w.hi)));
            let lhs_lo = u_lo.mul(&one.add(&m.mul(&w.lo)));
            if lhs_hi.cmp(&scale) != core::cmp::Ordering::Greater {
                return true;
            }
            if lhs_lo.cmp(&scale) != core::cmp::Ordering::Less {
                return false;
            }
            uniform.extend(bits);
        }
    }

    /// The words `u` left to the exact comparison, `keep_below..change_from`.
    #[cfg(test)]
    pub(crate) fn band(&self) -> (u128, u128) {
        (self.keep_below, self.change_from)
    }
}

/// `⌊a·b/2⁶⁴⌋` (or the ceiling) for `a ≤ 2⁶⁴`, `b < 2¹²⁶`.
fn mul_shr64(a: u128, b: u128, ceil: bool) -> u128 {
    let high = a * (b >> 64);
    let low = a * (b & u64::MAX as u128);
    let floor = high + (low >> 64);
    floor + u128::from(ceil && (low & u64::MAX as u128) != 0)
}

/// Values a [`with_scratch`] buffer keeps on the stack (a heap buffer above).
const STACK_SCRATCH: usize = 32;

/// Runs `f` on a zeroed scratch slice of `len` values: on the stack up to
/// `STACK_SCRATCH`, on the heap above (one allocation per call, where the work is
/// proportional to `len` anyway). The selection mechanisms keep one value per
/// candidate in it.
#[inline(always)]
pub(crate) fn with_scratch<T: Copy + Default, O>(len: usize, f: impl FnOnce(&mut [T]) -> O) -> O {
    if len <= STACK_SCRATCH {
        f(&mut [T::default(); STACK_SCRATCH][..len])
    } else {
        f(&mut vec![T::default(); len])
    }
}

/// An index `i < n` drawn with probability `exp(−xᵢ/2⁶⁴) / Σⱼ exp(−xⱼ/2⁶⁴)`, exactly,
/// by inversion of the cumulative weights, with `xᵢ = x_of(i)` (the exponents in 64.64
/// fixed point, exact): one pass
/// computes the certified lower bounds `ℓᵢ` of the weights ([`ExpNegLower`], so
/// `ℓᵢ ≤ 2⁶⁴·wᵢ ≤ ℓᵢ + W`) and their prefix sums `Lₖ = Σ_{i<k} ℓᵢ`, which enclose the
/// cumulative weights `2⁶⁴·Cₖ ∈ [Lₖ, Lₖ + k·W]`. One 64-bit word `u` then places
/// `2⁶⁴·U·S` (`S` the total weight) in `[⌊u·Lₙ/2⁶⁴⌋, ⌈(u + 1)(Lₙ + nW)/2⁶⁴⌉)`, and the
/// index is decided when the enclosures of its two boundaries separate that interval
/// from the others; otherwise further words of `U` are drawn and every weight is
/// enclosed again at growing precision until they do. The output is the exact inversion
/// of `U` whichever path decides it.
///
/// **Fallback bound.** Boundary `k`'s enclosure is `k·W ≤ nW` units wide and the
/// interval of `2⁶⁴·U·S` at most `nW + n + 2` (rounding included, with `S ≤ n`); as `u`
/// steps by one the interval moves by `Lₙ/2⁶⁴ ≥ 1 − 2⁻⁶⁴` units (the best weight is 1),
/// so at most `2nW + n + 4` words leave one of the `n − 1` inner boundaries undecided,
/// and `(n − 1)(2nW + n + 4) ≤ 130·n²` in all (`W ≤ 64`): the fallback has probability
/// at most `130·n²·2⁻⁶⁴`. Outside it one word is drawn, whatever the `xᵢ`.
///
/// Requires `min xᵢ = 0` (so `S ≥ 1`) and `n ≥ 1`.
#[inline]
pub(crate) fn sample_index_exp_neg<R: CryptoRng + ?Sized>(
    n: usize,
    x_of: impl Fn(usize) -> u128,
    bits: &mut BitSource<'_, R>,
) -> usize {
    debug_assert!(n >= 1);
    with_scratch(n + 1, |sums: &mut [u128]| {
        prefix_sums(sums, &x_of);
        let u = bits.word();
        invert(sums, u, &x_of, bits)
    })
}

/// The prefix sums `sums[k] = Lₖ` of the `sums.len() − 1` weights' lower bounds.
#[inline(always)]
fn prefix_sums(sums: &mut [u128], x_of: &impl Fn(usize) -> u128) {
    let weights = ExpNegLower::new();
    let mut total = 0u128;
    for (i, slot) in sums[1..].iter_mut().enumerate() {
        total += u128::from(weights.lower(x_of(i)));
        *slot = total;
    }
}

/// The inversion of [`sample_index_exp_neg`] from the prefix sums and the uniform's first
/// word `u` (further words from `bits` only on the fallback).
#[inline(always)]
fn invert<R: CryptoRng + ?Sized>(
    sums: &[u128],
    u: u64,
    x_of: &impl Fn(usize) -> u128,
    bits: &mut BitSource<'_, R>,
) -> usize {
    let n = sums.len() - 1;
    let total = sums[n];
    let width = u128::from(ExpNegLower::new().band_width());
    // 2⁶⁴·U·S lies in [lower, upper).
    let lower = mul_shr64(u128::from(u), total, false);
    let upper = mul_shr64(u128::from(u) + 1, total + n as u128 * width, true);
    // The last boundary certainly at or below U·S: the largest i < n with
    // Lᵢ + i·W ≤ lower (an increasing sequence, 0 at i = 0).
    let (mut i, mut above) = (0usize, n);
    while above - i > 1 {
        let mid = i + (above - i) / 2;
        if sums[mid] + mid as u128 * width <= lower {
            i = mid;
        } else {
            above = mid;
        }
    }
    if i + 1 == n || upper <= sums[i + 1] {
        i
    } else {
        let xs: Vec<u128> = (0..n).map(x_of).collect();
        resolve_index(&xs, u, bits)
    }
}

#[cold]
fn resolve_index<R: CryptoRng + ?Sized>(xs: &[u128], u: u64, bits: &mut BitSource<'_, R>) -> usize {
    let n = xs.len();
    let mut uniform = LazyUniform::new(u, 64);
    let den = Big::pow2(64);
    loop {
        let p = uniform.known_bits() + 64;
        let mut lo_sums = vec![Big::zero()];
        let mut hi_sums = vec![Big::zero()];
        for &x in xs {
            let w = exp_neg_big(&Big::from_u128(x), &den, p);
            let next_lo = lo_sums[lo_sums.len() - 1].add(&w.lo);
            let next_hi = hi_sums[hi_sums.len() - 1].add(&w.hi);
            lo_sums.push(next_lo);
            hi_sums.push(next_hi);
        }
        let (u_lo, u_hi) = uniform.bounds(p);
        let lower = u_lo.mul(&lo_sums[n]).shr(p);
        let upper = u_hi.mul(&hi_sums[n]).shr_ceil(p);
        let i = hi_sums[..n].partition_point(|c| c.cmp(&lower) != core::cmp::Ordering::Greater) - 1;
        if i + 1 == n || upper.cmp(&lo_sums[i + 1]) != core::cmp::Ordering::Greater {
            return i;
        }
        uniform.extend(bits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::CountingRng;
    use crate::sampling::certified::{exp_neg_big, prefix_below as reference};
    use rand_chacha::ChaCha20Rng;
    use rand_core::{Rng, SeedableRng};

    /// Random rationals γ = num/den over the whole range the samplers use: narrow and
    /// wide denominators (up to 2¹²⁸ − 1), γ from 0 to beyond the cap of 64.
    fn random_ratio(rng: &mut ChaCha20Rng) -> (u128, u128) {
        let den_bits = 1 + rng.next_u32() % 128;
        let den = ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) >> (128 - den_bits);
        let den = den.max(1);
        // γ = num/den up to about 2⁷ (and beyond the cap of 64 one time in eight).
        let gamma_bits = rng.next_u32() % 8;
        let num = (den >> (rng.next_u32() % 8))
            .saturating_mul(1 << gamma_bits)
            .saturating_add(rng.next_u64() as u128 % den);
        (num, den)
    }

    /// The bracket contains γ, the band is at most 324 words wide, and every word the
    /// fast path decides agrees with a 512-bit evaluation: 10⁶ (γ, word) pairs.
    #[test]
    fn ratio_trial_agrees_with_high_precision_on_a_million_words() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xD6);
        let (mut decided, mut widest) = (0u64, 0u64);
        for _ in 0..10_000 {
            let (num, den) = random_ratio(&mut rng);
            let shift = 64u32.saturating_sub(den.leading_zeros());
            let (x_lo, x_hi) = ratio_bounds(num >> shift, den >> shift, shift > 0);
            // x_lo·den ≤ 2⁶³·num ≤ x_hi·den, exactly (x is capped at 64·2⁶³).
            let (n, d) = (Big::from_u128(num), Big::from_u128(den));
            let scaled = n.shl(63);
            assert!(Big::from_u128(x_lo).mul(&d).cmp(&scaled) != core::cmp::Ordering::Greater);
            if x_hi < 64 << 63 {
                assert!(Big::from_u128(x_hi).mul(&d).cmp(&scaled) != core::cmp::Ordering::Less);
            }
            let (below, above) = band((x_lo, x_hi));
            let e = exp_neg_big(&n, &d, 512);
            widest = widest.max(above.saturating_sub(below).saturating_add(1));
            assert!(
                above < below || above - below < 324,
                "{num}/{den}: band {below}..={above}"
            );
            for _ in 0..100 {
                let u = rng.next_u64();
                if u < below || u > above {
                    assert_eq!(Some(u < below), reference(&[u], &e), "{num}/{den}, u = {u}");
                    decided += 1;
                }
            }
        }
        println!("decided {decided} words; widest band {widest}");
        assert!(decided >= 1_000_000 - 100, "{decided}");
    }

    /// Words planted inside the band take the exact fallback, and its answer agrees
    /// with the 512-bit reference on the same extended uniform (replayed).
    #[test]
    fn ratio_band_words_resolve_exactly() {
        let mut planted = 0;
        let mut rng = ChaCha20Rng::seed_from_u64(0xD7);
        let mut cases = vec![(1u128, 3u128), (1, 1), (0, 5), (7, 2), (u128::MAX, 1 << 122)];
        cases.extend((0..40).map(|_| random_ratio(&mut rng)));
        for (num, den) in cases {
            let shift = 64u32.saturating_sub(den.leading_zeros());
            let (below, above) = band(ratio_bounds(num >> shift, den >> shift, shift > 0));
            let (n, d) = (Big::from_u128(num), Big::from_u128(den));
            let e = exp_neg_big(&n, &d, 512);
            for u in (below..=above).take(40) {
                let seed = planted as u64;
                let mut source = ChaCha20Rng::seed_from_u64(seed);
                let got = resolve_exact(u, 64, (n.clone(), d.clone()), &mut BitSource::new(&mut source));
                let mut replay = ChaCha20Rng::seed_from_u64(seed);
                let words = [u, replay.next_u64(), replay.next_u64(), replay.next_u64()];
                assert_eq!(Some(got), reference(&words, &e), "{num}/{den}, u = {u}");
                planted += 1;
            }
        }
        assert!(planted >= 100, "{planted}");
    }

    /// A uniform known to fewer than 64 bits (the spare bits of a word): prefixes whose
    /// interval meets the band take the exact fallback and agree with the 512-bit
    /// reference on the replayed extension; the prefixes just outside the band decide
    /// without a further word, and correctly.
    #[test]
    fn short_prefixes_decide_outside_the_band_and_resolve_inside() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xD8);
        let (mut planted, mut outside) = (0u64, 0u64);
        let mut cases = vec![(1u128, 3u128), (1, 1), (7, 2)];
        cases.extend((0..30).map(|_| random_ratio(&mut rng)));
        for (num, den) in cases {
            let shift = 64u32.saturating_sub(den.leading_zeros());
            let (below, above) = band(ratio_bounds(num >> shift, den >> shift, shift > 0));
            let (n, d) = (Big::from_u128(num), Big::from_u128(den));
            let e = exp_neg_big(&n, &d, 512);
            for len in [40u32, 44, 57, 63] {
                let cell = |u: u64| u >> (64 - len);
                let (first, last) = (cell(below), cell(above));
                let top = cell(u64::MAX); // the largest `len`-bit prefix
                let candidates = (first.saturating_sub(2)..=(first + 2).min(top))
                    .chain(last.saturating_sub(2)..=(last + 2).min(top));
                for prefix in candidates {
                    let seed = 1000 + planted + outside;
                    let mut source = ChaCha20Rng::seed_from_u64(seed);
                    let mut bits = BitSource::new(&mut source);
                    let got =
                        uniform_in_band((below, above), prefix, len, || (n.clone(), d.clone()), &mut bits);
                    // The words drawn, if any, replayed after the prefix.
                    let mut replay = ChaCha20Rng::seed_from_u64(seed);
                    let start = u128::from(prefix) << (64 - len);
                    let end = (u128::from(prefix) + 1) << (64 - len);
                    let decided_alone = end <= u128::from(below) || start > u128::from(above);
                    let mut bound = Big::from_u128(u128::from(prefix));
                    let mut known = u64::from(len);
                    if !decided_alone {
                        for _ in 0..3 {
                            bound = bound.shl(64).add(&Big::from_u128(replay.next_u64().into()));
                            known += 64;
                        }
                        planted += 1;
                    } else {
                        outside += 1;
                    }
                    let lo = bound.shl(512 - known);
                    let hi = bound.add(&Big::from_u128(1)).shl(512 - known);
                    let expected = if hi.cmp(&e.lo).is_le() {
                        Some(true)
                    } else if lo.cmp(&e.hi).is_ge() {
                        Some(false)
                    } else {
                        None
                    };
                    assert_eq!(Some(got), expected, "{num}/{den}, len {len}, prefix {prefix}");
                }
            }
        }
        assert!(
            planted >= 100 && outside >= 100,
            "{planted} inside, {outside} outside"
        );
    }

    /// The 64-bit enclosure contains a 192-bit one computed directly, and is at most
    /// 64 units wide, over random (x, shift) across the whole range.
    #[test]
    fn enclosures_contain_the_direct_evaluation() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let mut widest = 0u128;
        for case in 0..3000u32 {
            let shift = rng.next_u32() % 64;
            // γ from 0 to ~2¹⁰ (the selection mechanisms cap γ near 1100) and beyond.
            let x = if case % 7 == 0 {
                0
            } else {
                (rng.next_u64() as u128) << (shift / 2)
            };
            let (lo, hi) = enclose(x, shift);
            let direct = exp_neg(x, 1u64 << shift, 192);
            let lo_direct = direct.lo.shr(128).to_u128_sat();
            let hi_direct = direct.hi.shr_ceil(128).to_u128_sat();
            assert!(
                lo as u128 <= lo_direct.min(u64::MAX as u128),
                "x={x} s={shift}: lo {lo} > {lo_direct}"
            );
            assert!(
                hi as u128 + 1 >= hi_direct,
                "x={x} s={shift}: hi {hi} < {hi_direct}"
            );
            assert!(
                hi as u128 + 1 - lo as u128 <= 64,
                "x={x} s={shift}: width {}",
                hi as u128 + 1 - lo as u128
            );
            widest = widest.max(hi as u128 + 1 - lo as u128);
            // The width bound W behind `hi = lo + W − 1` holds for the chained product
            // of both bounds too (the same argument, another order).
            let (chain_lo, chain_hi) = enclose_chain(x, shift);
            assert!(u128::from(chain_hi) + 1 - u128::from(chain_lo) <= u128::from(tables().width));
            assert!(u128::from(chain_lo) <= lo_direct && hi_direct <= u128::from(chain_hi) + 1);
            // The coarse lower bound encloses exp(−x′/2^shift), x′ = x with the lowest
            // fraction byte cleared, with the same width bound.
            let dropped = if shift >= 56 {
                (1u128 << (shift - 56)) - 1
            } else {
                0
            };
            let coarse = enclose_coarse(x, shift);
            let direct = exp_neg(x & !dropped, 1u64 << shift, 192);
            let (lo_c, hi_c) = (
                direct.lo.shr(128).to_u128_sat(),
                direct.hi.shr_ceil(128).to_u128_sat(),
            );
            assert!(
                u128::from(coarse) <= lo_c,
                "x={x} s={shift}: coarse {coarse} > {lo_c}"
            );
            assert!(
                hi_c <= u128::from(coarse) + u128::from(tables().width),
                "x={x} s={shift}"
            );
        }
        assert!(tables().width <= 64, "W = {}", tables().width);
        println!("widest 64-bit enclosure: {widest} units (W = {})", tables().width);
    }

    /// Random 64.64 fixed-point exponents over the range the selection mechanisms use
    /// (`γ` from 0 to about 2¹¹, beyond the whole part's 64, and exact zeros).
    fn random_fixed_point(rng: &mut ChaCha20Rng, case: u32) -> u128 {
        match case % 7 {
            0 => 0,
            1 => u128::from(rng.next_u64()), // γ < 1
            _ => (u128::from(rng.next_u64()) << (rng.next_u32() % 12)) | u128::from(rng.next_u64()),
        }
    }

    /// `ExpNegLower`: `lower(x) ≤ 2⁶⁴·exp(−x/2⁶⁴) ≤ lower(x) + W′` against a 192-bit
    /// evaluation over random `x` (10⁴ cases), with `W′ ≤ 64`.
    #[test]
    fn fixed_point_lower_bounds_contain_the_direct_evaluation() {
        let view = ExpNegLower::new();
        let den = Big::pow2(64);
        let mut rng = ChaCha20Rng::seed_from_u64(8);
        let mut widest = 0u128;
        for case in 0..10_000u32 {
            let x = random_fixed_point(&mut rng, case);
            let lo = u128::from(view.lower(x));
            let direct = exp_neg_big(&Big::from_u128(x), &den, 192);
            let (lo_direct, hi_direct) = (
                direct.lo.shr(128).to_u128_sat(),
                direct.hi.shr_ceil(128).to_u128_sat(),
            );
            assert!(lo <= lo_direct, "x={x}: lower {lo} > {lo_direct}");
            assert!(
                hi_direct <= lo + u128::from(view.band_width()),
                "x={x}: {hi_direct} > {lo} + W′"
            );
            widest = widest.max(hi_direct - lo);
        }
        assert!(view.band_width() <= 64, "W′ = {}", view.band_width());
        println!("W′ = {}, widest observed {widest}", view.band_width());
    }

    /// The fixed-point coin: every word outside the band decides as a 512-bit
    /// evaluation does, and words planted inside the band take the exact fallback, whose
    /// answer agrees with the reference on the replayed extension of `U`.
    #[test]
    fn fixed_point_coin_agrees_with_high_precision_inside_and_outside_the_band() {
        let view = ExpNegLower::new();
        let den = Big::pow2(64);
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let (mut planted, mut decided) = (0u64, 0u64);
        for case in 0..300u32 {
            let x = random_fixed_point(&mut rng, case);
            let e = exp_neg_big(&Big::from_u128(x), &den, 512);
            let lo = view.lower(x);
            let band = (lo..=lo.saturating_add(view.band_width() - 1)).take(20);
            let random = (0..20).map(|_| rng.next_u64());
            for u in band.chain(random) {
                let seed = 5000 + planted + decided;
                let mut source = ChaCha20Rng::seed_from_u64(seed);
                let got = view.coin(x, u, &mut BitSource::new(&mut source));
                let mut replay = ChaCha20Rng::seed_from_u64(seed);
                let words = [u, replay.next_u64(), replay.next_u64(), replay.next_u64()];
                assert_eq!(Some(got), reference(&words, &e), "x={x}, u={u}");
                if u >= lo && u - lo < view.band_width() {
                    planted += 1;
                } else {
                    decided += 1;
                }
            }
        }
        assert!(
            planted >= 1000 && decided >= 1000,
            "{planted} planted, {decided} decided"
        );
    }

    /// The cumulative weights `2⁵¹²·Cₖ` of `exp(−xᵢ/2⁶⁴)`, enclosed at 512 bits.
    fn reference_sums(xs: &[u128]) -> (Vec<Big>, Vec<Big>) {
        let den = Big::pow2(64);
        let (mut lo_sums, mut hi_sums) = (vec![Big::zero()], vec![Big::zero()]);
        for &x in xs {
            let w = exp_neg_big(&Big::from_u128(x), &den, 512);
            lo_sums.push(lo_sums.last().unwrap().add(&w.lo));
            hi_sums.push(hi_sums.last().unwrap().add(&w.hi));
        }
        (lo_sums, hi_sums)
    }

    /// The exact inversion at 512 bits: the index `i` with `Cᵢ ≤ U·S < Cᵢ₊₁` for the
    /// uniform whose first words are `words` (`None` if 512 bits cannot decide).
    fn reference_index((lo_sums, hi_sums): &(Vec<Big>, Vec<Big>), words: &[u64]) -> Option<usize> {
        let n = lo_sums.len() - 1;
        let mut prefix = Big::zero();
        for &w in words {
            prefix = prefix.shl(64).add(&Big::from_u128(u128::from(w)));
        }
        let bits = 64 * words.len() as u64;
        // 2^(512 + bits)·U·S lies in [lower, upper].
        let lower = prefix.mul(&lo_sums[n]);
        let upper = prefix.add(&Big::from_u128(1)).mul(&hi_sums[n]);
        (0..n).find(|&i| {
            hi_sums[i].shl(bits).cmp(&lower).is_le()
                && (i + 1 == n || upper.cmp(&lo_sums[i + 1].shl(bits)).is_le())
        })
    }

    /// `sample_index_exp_neg` is the exact inversion of its uniform: random weight
    /// vectors (1 to 300 candidates, including ties and weights below 2⁻⁶⁴), random
    /// first words (decided by the fast path, one word drawn) and words planted at the
    /// cumulative boundaries (the exact fallback, more words), all against the 512-bit
    /// inversion of the replayed uniform.
    #[test]
    fn inversion_is_exact_on_the_fast_path_and_the_fallback() {
        let mut rng = ChaCha20Rng::seed_from_u64(10);
        let (mut fast, mut fallback) = (0u64, 0u64);
        for case in 0..120u32 {
            let n = [1usize, 2, 3, 10, 40, 300][case as usize % 6];
            let mut xs: Vec<u128> = (0..n)
                .map(|k| random_fixed_point(&mut rng, k as u32 + case))
                .collect();
            xs[rng.next_u32() as usize % n] = 0; // the best candidate
            if case % 5 == 0 && n > 2 {
                xs[1] = xs[2]; // a tie
            }
            // The first words: random ones, and the words just around every cumulative
            // boundary 2⁶⁴·C_k/S of a few k (computed in floating point, then ±2).
            let weights: Vec<f64> = xs.iter().map(|&x| (-(x as f64) / 2f64.powi(64)).exp()).collect();
            let total: f64 = weights.iter().sum();
            let mut firsts: Vec<u64> = (0..10).map(|_| rng.next_u64()).collect();
            let mut cumulative = 0.0;
            for (k, w) in weights.iter().enumerate().take(n - 1) {
                cumulative += w;
                if k % (1 + n / 8) == 0 {
                    let centre = (cumulative / total * 2f64.powi(64)) as u64;
                    firsts.extend((0..5u64).map(|d| centre.wrapping_add(d).wrapping_sub(2)));
                }
            }
            let sums = reference_sums(&xs);
            for u in firsts {
                let seed = 9000 + fast + fallback;
                // The first word u, then a fresh generator's words, counted.
                let mut source = CountingRng::new(ChaCha20Rng::seed_from_u64(seed));
                let got = with_scratch(n + 1, |scratch: &mut [u128]| {
                    prefix_sums(scratch, &|i| xs[i]);
                    invert(scratch, u, &|i| xs[i], &mut BitSource::new(&mut source))
                });
                let words = 1 + source.draws();
                let mut replay = ChaCha20Rng::seed_from_u64(seed);
                let known = [u, replay.next_u64(), replay.next_u64(), replay.next_u64()];
                let expected = reference_index(&sums, &known[..words.min(4) as usize]);
                let expected = expected.or_else(|| reference_index(&sums, &known));
                assert_eq!(Some(got), expected, "n={n}, u={u}, words {words}");
                if words == 1 {
                    fast += 1;
                } else {
                    fallback += 1;
                }
            }
        }
        println!("{fast} decided by one word, {fallback} by the fallback");
        assert!(fast >= 1000 && fallback >= 20, "{fast} fast, {fallback} fallback");
    }

    /// The keep coin's thresholds bracket the exact probability, its band is small,
    /// and band words resolve consistently with a 256-bit evaluation.
    #[test]
    fn keep_coin_thresholds_and_band() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        for (x, m) in [
            (1u128 << 62, 1u64),
            (3 << 61, 1),
            (5 << 60, 9),
            (1 << 62, 65_535),
            (64 << 62, 1),
        ] {
            let coin = KeepCoin::new(x, 62, m);
            let (keep_below, change_from) = coin.band();
            // p = 1/(1 + m·w) at 256 bits: 2^256·p in [2^512/(2^256 + m·w_hi), …].
            let w = exp_neg(x, 1 << 62, 256);
            let mm = Big::from_u128(m as u128);
            let one = Big::pow2(256);
            let p_hi = Big::pow2(512).div_ceil(&one.add(&mm.mul(&w.lo)));
            let p_lo = Big::pow2(512).div_floor(&one.add(&mm.mul(&w.hi)));
            // keep_below/2^64 ≤ p ≤ change_from/2^64.
            assert!(Big::from_u128(keep_below).shl(192).cmp(&p_hi) != core::cmp::Ordering::Greater);
            assert!(Big::from_u128(change_from).shl(192).cmp(&p_lo) != core::cmp::Ordering::Less);
            assert!(
                change_from - keep_below <= 64 * m as u128 + 2,
                "band {}",
                change_from - keep_below
            );
            for u in keep_below..change_from.min(keep_below + 200) {
                let got = coin.resolve(u as u64, &mut BitSource::new(&mut rng));
                let u_lo = Big::from_u128(u).shl(192);
                let u_hi = Big::from_u128(u + 1).shl(192);
                if u_hi.cmp(&p_lo) != core::cmp::Ordering::Greater {
                    assert!(got, "x={x} m={m} u={u}");
                }
                if u_lo.cmp(&p_hi) != core::cmp::Ordering::Less {
                    assert!(!got, "x={x} m={m} u={u}");
                }
            }
        }
    }
}
