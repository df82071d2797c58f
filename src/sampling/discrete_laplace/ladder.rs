//! What a scale adds to the reference laws shared by every scale: the ladder of
//! certified geometric tables (built once per rung and process) and the per-scale
//! constants of the acceptance exponent (a few integer divisions, no certified
//! arithmetic), with the bounds of the module docs of `discrete_laplace`.

use super::super::certified::{Big, Cdt, Threshold};
use super::super::discrete_gaussian::div_shifted;
use super::super::fixed_exp::{ExpNegLower, uniform_in_band};
use super::super::{BitSource, Rational};
use rand_core::CryptoRng;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Rungs of the ladder: `q̂ = p/64` with `p = (16 + i)·2ʲ` (`i < 16`, `j < 8`), then
/// `p = 4096`: `q̂` from `1/4` to `64`, consecutive rungs at most `17/16` apart.
pub(in crate::sampling) const RUNGS: usize = 129;
/// The reference scales are `p/RUNG_DEN`.
pub(super) const RUNG_DEN: u64 = 64;
/// The bits of a trial's first word that a one-sided table reads (bits 62…9).
pub(super) const ONE_SIDED_BITS: u32 = 54;
/// Below the one-sided table's bits: at most 9 low bits of `R` (`23 ≤ m ≤ 31`).
pub(super) const SPARE_BITS: u32 = 63 - ONE_SIDED_BITS;
/// Up to this many bits of `R`, a trial draws two words; above, three.
pub(super) const TWO_WORD_MAX_BITS: u32 = 31;
/// The fewest bits of the acceptance uniform `V` in a two-word trial.
pub(super) const UNIFORM_MIN_BITS: u32 = 42;
/// `2⁶³·E` is capped here (`E ≥ 64`: `exp(−E) < 2⁻⁹²`, certified as `[0, 2⁻⁶⁴]`).
const CAP: u128 = 64 << 63;
/// `e ≤ 2⁶³·E < e + SLACK` for the bracket of the acceptance exponent (below the cap).
pub(super) const SLACK: u128 = 68;
/// Block scales (`M ≥ 2`) bracket `2⁵⁷·E` in 64 bits for `J` below this (every `J` a
/// guided table look-up returns: the tables have at most 2797 entries).
pub(super) const BLOCK_J_LIMIT: u64 = 1 << 12;
/// The band of a block scale's 64-bit bracket reaches this far below the lower bound
/// (`e ≤ 2⁵⁷·E < e + 4`, and `2⁶⁴·exp(−4/2⁵⁷) > 2⁶⁴ − 2⁹`).
pub(super) const BLOCK_SLACK: u64 = 1 << 9;

/// The numerator `p` of rung `k` (`q̂ = p/64`).
pub(in crate::sampling) const fn rung_numerator(k: usize) -> u64 {
    if k + 1 >= RUNGS {
        4096
    } else {
        ((16 + (k % 16)) as u64) << (k / 16)
    }
}

/// The lowest rung whose numerator is at least `x` (`x ≤ 4096`).
pub(in crate::sampling) fn rung_at_least(x: u64) -> usize {
    debug_assert!(x <= 4096);
    if x <= 16 {
        return 0;
    }
    // 2^(j + 4) ≤ x < 2^(j + 5); (16 + i)·2ʲ ≥ x for i = ⌈x/2ʲ⌉ − 16 ∈ [0, 16] (i = 16
    // is the next octave's i = 0, and x = 4096 gives j = 8, i = 0: rung 128).
    let j = 59 - x.leading_zeros();
    let i = x.div_ceil(1 << j) - 16;
    16 * j as usize + i as usize
}

/// Tables built so far (both kinds), for the tests and benches.
static BUILT: AtomicU64 = AtomicU64::new(0);

/// The certified table of rung `k`: the magnitude `Pr[|Ẑ| ≥ c] = 2ρᶜ/(1 + ρ)` (63-bit
/// words) when `two_sided`, else `Pr[J ≥ j] = ρʲ` (54-bit words), `ρ = exp(−64/p)`.
/// Built on first use, once per process.
pub(super) fn rung_table(k: usize, two_sided: bool) -> &'static Cdt {
    static TWO_SIDED: [OnceLock<Cdt>; RUNGS] = [const { OnceLock::new() }; RUNGS];
    static ONE_SIDED: [OnceLock<Cdt>; RUNGS] = [const { OnceLock::new() }; RUNGS];
    let cell = if two_sided { &TWO_SIDED[k] } else { &ONE_SIDED[k] };
    cell.get_or_init(|| {
        BUILT.fetch_add(1, Ordering::Relaxed);
        let threshold = Threshold {
            step: u128::from(RUNG_DEN),
            den: rung_numerator(k),
            size: None,
            two_sided,
        };
        Cdt::new(threshold, if two_sided { 63 } else { ONE_SIDED_BITS })
    })
}

/// The number of ladder tables built in this process (at most `2·129`).
pub(super) fn tables_built() -> u64 {
    BUILT.load(Ordering::Relaxed)
}

/// A positive ratio `n/d` in floating binary point: `Q = ⌊2ˢ·n/d⌋ ∈ [2⁶³, 2⁶⁴)`, or
/// zero. [`fixed`](Self::fixed) is `⌊x·Q·2^(63 − s)⌋`, within `x·n/d + 1` below
/// `2⁶³·x·n/d` (`2^(63 − s) ≤ n/d`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Rate {
    q: u64,
    shift: i32,
    /// `s − 63` when `s ≥ 63` (every rate below 1: all rates of block scales), the
    /// product's right shift; `Q` is stored as 0 when that shift is 128 or more (the
    /// floor is then 0 for every `x < 2⁶⁴`).
    down: u32,
}

impl Rate {
    pub(super) const ZERO: Rate = Rate {
        q: 0,
        shift: 63,
        down: 0,
    };

    /// `n/d` for `n < 2¹²⁷`, `1 ≤ d < 2¹²⁷` (zero when `n = 0`).
    pub(super) fn new(n: u128, d: u128) -> Self {
        if n == 0 {
            return Self::ZERO;
        }
        let bits = |x: u128| 128 - x.leading_zeros() as i32;
        // n/d ∈ (2^(bn − bd − 1), 2^(bn − bd + 1)): with s = 63 + bd − bn the quotient is
        // in (2⁶², 2⁶⁴).
        let quotient = |s: i32| -> u128 {
            if s >= 0 {
                div_shifted(n, s as u32, d).0
            } else {
                // ⌊n/(d·2ᵏ)⌋ = ⌊⌊n/2ᵏ⌋/d⌋
                (n >> s.unsigned_abs()) / d
            }
        };
        // One division at s + 1: a quotient in (2⁶³, 2⁶⁵), halved (⌊⌊x⌋/2⌋ = ⌊x/2⌋)
        // when it is 2⁶⁴ or more.
        let s = 64 + bits(d) - bits(n);
        let q = quotient(s);
        let (q, s) = if q >= 1 << 64 { (q >> 1, s - 1) } else { (q, s) };
        debug_assert!((1 << 63..1 << 64).contains(&q));
        let down = (s - 63).max(0) as u32;
        Self {
            q: if down >= 128 { 0 } else { q as u64 },
            shift: s,
            down: down.min(127),
        }
    }

    /// Whether [`fixed_down`](Self::fixed_down) applies and stays below `2¹²⁷` (`s ≥
    /// 64`, every rate below 1, or zero), so that two of them add without overflow.
    pub(super) fn is_below_one(&self) -> bool {
        self.shift >= 64 || self.q == 0
    }

    /// `⌊x·Q·2^(63 − s)⌋`, saturating at `CAP`; constant work for a given rate.
    #[inline(always)]
    pub(super) fn fixed(&self, x: u64) -> u128 {
        if self.shift >= 63 {
            self.fixed_down(x).min(CAP)
        } else {
            let product = u128::from(x) * u128::from(self.q);
            let up = (63 - self.shift) as u32;
            if product.leading_zeros() >= up {
                (product << up).min(CAP)
            } else {
                CAP
            }
        }
    }

    /// `⌊2ᵏ·n/d⌋` for `k ≤ s` (`⌊⌊2ˢ·n/d⌋/2^(s − k)⌋`, exact), 0 for the zero rate.
    pub(super) fn floor_at(&self, k: i32) -> u64 {
        if self.q == 0 {
            return 0;
        }
        debug_assert!(k <= self.shift);
        self.q.checked_shr((self.shift - k) as u32).unwrap_or(0)
    }

    /// [`fixed`](Self::fixed) for a rate with `s ≥ 63`, without the cap (below
    /// `2¹²⁸ >> 1`): one product and one shift.
    #[inline(always)]
    pub(super) fn fixed_down(&self, x: u64) -> u128 {
        debug_assert!(self.shift >= 63);
        (u128::from(x) * u128::from(self.q)) >> self.down
    }
}

/// The per-scale part of a [`DiscreteLaplace`](super::DiscreteLaplace): the rung, the
/// layout and the rates of the acceptance exponent
/// `E = (J·(den′·p − 64·num) + R·den·p)/(num·p)`, `den′ = den·M`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scaled {
    pub(super) table: &'static Cdt,
    /// The magnitude table of `M = 1` (no sign rejection) instead of blocks.
    pub(super) two_sided: bool,
    /// `m`, `M = 2ᵐ`.
    pub(super) block_bits: u32,
    /// `M = 2ᵐ` (`m ≤ 63`).
    pub(super) block: u64,
    /// The right shift of a trial's first word (without its sign bit) that the table
    /// reads: 0 for the two-sided table, [`SPARE_BITS`] for the one-sided.
    pub(super) table_shift: u32,
    /// Words per trial: 1 (no acceptance), 2 or 3.
    pub(super) words: u32,
    /// The layout of the module docs as masks and shifts (a function of `m` and the
    /// words alone): `R = (first & r_low) | ((second & r_high) << r_split)`, and `V`'s
    /// first bits are its word (the third when there is one, else the second) without
    /// the low bits `v_mask` (which belong to `R`).
    r_low: u64,
    r_high: u64,
    r_split: u32,
    v_mask: u64,
    /// Both rates are below 1 ([`Rate::is_below_one`]): the exponent is two products and
    /// two shifts.
    down_only: bool,
    /// Block scales: `D = ⌊2⁶⁹·(1/t − 1/q̂)⌋` and `C = ⌊2^(57 + m)/τ⌋` (both below
    /// `2⁶⁰`), so that `2⁵⁷·E` is bracketed by two 64-bit products (see
    /// [`block_exponent`](Self::block_exponent)); zero when `M = 1`.
    j_rate: u64,
    r_rate: u64,
    /// [`BLOCK_J_LIMIT`] at block scales, 0 when `M = 1`: `J` below it takes the 64-bit
    /// bracket.
    j_limit: u64,
    /// `J·(1/t − 1/q̂)`, `t = τ/M`: rate `(den′·p − 64·num)/(num·p)`.
    excess: Rate,
    /// `R/τ`: rate `den/num` (zero when `M = 1`).
    inverse: Rate,
    /// The exact exponent's parts: `den′·p − 64·num`, `den·p` and `num·p`.
    excess_num: u128,
    remainder_num: u128,
    common_den: u128,
    /// The shared certified `exp(−x/2⁶⁴)` (lower bounds, six factors).
    exp: ExpNegLower,
}

impl Scaled {
    /// The constants of scale `τ = num/den`; `two_sided` for the discrete Laplace's
    /// magnitude table when `M = 1` (`τ ≤ 64`), else the one-sided blocks.
    pub(super) fn new(scale: Rational, two_sided: bool) -> Self {
        let (num, den) = (u128::from(scale.num()), u128::from(scale.den()));
        // M = 1 up to τ = 64; above, the largest 2ᵐ with t = τ/2ᵐ > 32, so t ∈ (32, 64].
        let block_bits = if num <= 64 * den {
            0
        } else {
            // 2ᵐ < τ/32 ≤ 2^(m + 1): m = ⌈log₂(τ/32)⌉ − 1 = bitlen(⌈num/(32den)⌉ − 1) − 1.
            let ratio = num.div_ceil(32 * den);
            127 - (ratio - 1).leading_zeros()
        };
        let den_blocks = den << block_bits; // < 2⁵⁹ when m > 0 (den′ < num/32)
        // The rung: the least p with p/64 ≥ t = num/den′, i.e. p ≥ ⌈64·num/den′⌉ ≤ 4096.
        let k = rung_at_least((64 * num).div_ceil(den_blocks) as u64);
        let p = u128::from(rung_numerator(k));
        let two_sided = two_sided && block_bits == 0;
        let excess_num = den_blocks * p - 64 * num;
        let common_den = num * p;
        let remainder_num = den * p;
        let words = match block_bits {
            0 if excess_num == 0 => 1,
            m if m <= TWO_WORD_MAX_BITS => 2,
            _ => 3,
        };
        // R's bits in the first word, in the second, and V's shift in its word.
        let free = 64 - UNIFORM_MIN_BITS; // 22 bits of R in the second word at most
        let (r_split, r_high_bits, v_shift) = match block_bits {
            m if words == 3 => (0, m, 0),
            m if m <= free => (0, m, m),
            m => (m - free, free, free),
        };
        let mask = |n: u32| u64::MAX.checked_shr(64 - n).unwrap_or(0);
        let excess = Rate::new(excess_num, common_den);
        let inverse = if block_bits == 0 {
            Rate::ZERO
        } else {
            Rate::new(den, num)
        };
        Self {
            table: rung_table(k, two_sided),
            two_sided,
            block_bits,
            block: 1 << block_bits,
            table_shift: if two_sided { 0 } else { SPARE_BITS },
            words,
            r_low: mask(r_split),
            r_high: mask(r_high_bits),
            r_split,
            v_mask: mask(v_shift),
            down_only: excess.is_below_one() && inverse.is_below_one(),
            // 1/t − 1/q̂ < 1/(17t) < 2⁻⁹ gives s ≥ 72 for the excess, and 1/τ ∈
            // [2^−(m+6), 2^−(m+5)) gives s = m + 68 or m + 69 for the inverse: both
            // floors are shifts of the rates' quotients.
            j_rate: if block_bits == 0 { 0 } else { excess.floor_at(69) },
            j_limit: if block_bits == 0 { 0 } else { BLOCK_J_LIMIT },
            r_rate: if block_bits == 0 {
                0
            } else {
                inverse.floor_at(57 + block_bits as i32)
            },
            excess,
            inverse,
            excess_num,
            remainder_num,
            common_den,
            exp: ExpNegLower::new(),
        }
    }

    /// The bracket `[e, e + SLACK)` of `2⁶³·E` for a trial's `J` and `R` (or `(CAP,
    /// CAP)` when `E ≥ 64`): the same arithmetic for every trial.
    #[inline(always)]
    pub(super) fn exponent(&self, j: u64, r: u64) -> (u128, u128) {
        let e = if self.down_only {
            (self.excess.fixed_down(j) + self.inverse.fixed_down(r)).min(CAP)
        } else {
            (self.excess.fixed(j) + self.inverse.fixed(r)).min(CAP)
        };
        (e, if e == CAP { CAP } else { e + SLACK })
    }

    /// A block scale's bracket `e ≤ 2⁵⁷·E < e + 4` for `J < 2¹²`, in 64 bits (below
    /// `2⁶¹`): `e = ⌊J·D/2¹²⌋ + ⌊R·C/2ᵐ⌋`, each the high word of one 64×64-bit product
    /// (`J·2⁵²` and `R·2^(64 − m)` against `D` and `C`). Each term is at most
    /// `1 + J/2¹² < 2` (or `1 + R/2ᵐ < 2`) below its exact value, and
    /// `2⁵⁷·E < 2⁵⁷·(2¹²·2⁻⁹ + 2⁻⁵)`.
    #[inline(always)]
    pub(super) fn block_exponent(&self, j: u64, r: u64) -> u64 {
        debug_assert!(self.block_bits > 0 && j < BLOCK_J_LIMIT);
        let high = |a: u64, b: u64| ((u128::from(a) * u128::from(b)) >> 64) as u64;
        high(j << 52, self.j_rate) + high(r << (64 - self.block_bits), self.r_rate)
    }

    /// The values `below..=above` of `V`'s first 64 bits that the certified bounds
    /// leave undecided: with `e` the exponent's lower end and `lo` the shared lower
    /// bound of `2⁶⁴·exp(−e/2ᵏ)` (`≤ lo + W′`), `2⁶⁴·exp(−E) ≤ lo + W′`, and
    /// `2⁶⁴·exp(−E) ≥ lo·exp(−w/2ᵏ)` for a bracket of width `w`. Block scales (`J <
    /// 2¹²`): [`block_exponent`](Self::block_exponent), `k = 57`, `w = 4`, so the band
    /// starts `2⁹` below `lo` (at most `W′ + 2⁹ ≤ 576` values); otherwise `k = 63`,
    /// `w = 68` and `2·68` below `lo` (at most `W′ + 2·68 ≤ 200` values; at the cap
    /// `lo = 0`).
    #[inline(always)]
    pub(super) fn band(&self, j: u64, r: u64) -> (u64, u64) {
        if j < self.j_limit {
            let lo = self.exp.lower(u128::from(self.block_exponent(j, r)) << 7);
            return (
                lo.saturating_sub(BLOCK_SLACK),
                lo.saturating_add(self.exp.band_width() - 1),
            );
        }
        let (e, _) = self.exponent(j, r);
        let lo = self.exp.lower(e << 1);
        (
            lo.saturating_sub(2 * SLACK as u64),
            lo.saturating_add(self.exp.band_width() - 1),
        )
    }

    /// `R` and the word holding `V`'s first bits, from a trial's words (the third is
    /// ignored unless the trial draws three): the layout of the module docs.
    #[inline(always)]
    pub(super) fn layout(&self, first: u64, second: u64, third: u64) -> (u64, u64) {
        let r = (first & self.r_low) | ((second & self.r_high) << self.r_split);
        (r, if self.words >= 3 { third } else { second })
    }

    /// The number of bits of `V` in its word (42 to 64).
    pub(super) fn uniform_bits(&self) -> u32 {
        64 - self.v_mask.count_ones()
    }

    /// Whether `V < exp(−E)`, for `V` uniform on [0, 1) whose first bits are those of
    /// `word` outside `v_mask`: `V ∈ [start, last + 1)/2⁶⁴` with `start = word & !v_mask`
    /// and `last = word | v_mask`, decided against the certified [`band`](Self::band) by
    /// two comparisons, and by exact comparisons (further words) when it overlaps the
    /// band.
    #[inline(always)]
    pub(super) fn accept<R: CryptoRng + ?Sized>(
        &self,
        j: u64,
        r: u64,
        word: u64,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        let (below, above) = self.band(j, r);
        let (start, last) = (word & !self.v_mask, word | self.v_mask);
        if last < below {
            true // V < (last + 1)/2⁶⁴ ≤ below/2⁶⁴ ≤ exp(−E)
        } else if start > above {
            false // V ≥ start/2⁶⁴ ≥ (above + 1)/2⁶⁴ ≥ exp(−E)
        } else {
            self.resolve(j, r, word, bits)
        }
    }

    /// [`accept`](Self::accept) inside the band: the exact comparison.
    #[cold]
    #[inline(never)]
    fn resolve<R: CryptoRng + ?Sized>(&self, j: u64, r: u64, word: u64, bits: &mut BitSource<'_, R>) -> bool {
        let exact = || {
            let num = Big::from_u128(u128::from(j))
                .mul(&Big::from_u128(self.excess_num))
                .add(&Big::from_u128(u128::from(r)).mul(&Big::from_u128(self.remainder_num)));
            (num, Big::from_u128(self.common_den))
        };
        let len = self.uniform_bits();
        uniform_in_band(self.band(j, r), word >> (64 - len), len, exact, bits)
    }

    /// The exact exponent `E` as (numerator, denominator), for the tests.
    #[cfg(test)]
    pub(super) fn exact_exponent(&self, j: u64, r: u64) -> (u128, u128) {
        (
            u128::from(j) * self.excess_num + u128::from(r) * self.remainder_num,
            self.common_den,
        )
    }
}
