//! Certified arithmetic for the draw-independent samplers: arbitrary-precision
//! fixed-point intervals that provably contain `exp(−p/q)`, a lazily extended uniform
//! real, and cumulative-distribution tables (CDT) whose 64-bit entries are certified
//! lower/upper bounds of exact thresholds.
//!
//! Nothing here uses floating point. Every bound is computed with integer arithmetic
//! whose rounding direction is explicit (`floor` for lower bounds, `ceil` for upper
//! bounds), so `lo ≤ 2ᴾ·x ≤ hi` holds for the exact real `x` by construction.

use super::BitSource;
use core::cmp::Ordering;
use rand_core::CryptoRng;

/// An unsigned integer of any size: little-endian 64-bit limbs, no high zero limbs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Big(Vec<u64>);

impl Big {
    pub(crate) fn zero() -> Self {
        Big(Vec::new())
    }

    pub(crate) fn from_u128(x: u128) -> Self {
        Big(vec![x as u64, (x >> 64) as u64]).normalized()
    }

    /// `2ⁿ`.
    pub(crate) fn pow2(n: u64) -> Self {
        Big::from_u128(1).shl(n)
    }

    fn normalized(mut self) -> Self {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn limb(&self, i: usize) -> u64 {
        self.0.get(i).copied().unwrap_or(0)
    }

    pub(crate) fn cmp(&self, other: &Self) -> Ordering {
        match self.0.len().cmp(&other.0.len()) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        for i in (0..self.0.len()).rev() {
            match self.0[i].cmp(&other.0[i]) {
                Ordering::Equal => {}
                unequal => return unequal,
            }
        }
        Ordering::Equal
    }

    pub(crate) fn add(&self, other: &Self) -> Self {
        let n = self.0.len().max(other.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u128;
        for i in 0..n {
            let s = self.limb(i) as u128 + other.limb(i) as u128 + carry;
            out.push(s as u64);
            carry = s >> 64;
        }
        out.push(carry as u64);
        Big(out).normalized()
    }

    /// `self − other`, saturating at 0.
    pub(crate) fn sub_sat(&self, other: &Self) -> Self {
        if self.cmp(other) != Ordering::Greater {
            return Big::zero();
        }
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0u64;
        for i in 0..self.0.len() {
            let (d1, b1) = self.0[i].overflowing_sub(other.limb(i));
            let (d2, b2) = d1.overflowing_sub(borrow);
            out.push(d2);
            borrow = u64::from(b1 || b2);
        }
        Big(out).normalized()
    }

    pub(crate) fn mul(&self, other: &Self) -> Self {
        if self.is_zero() || other.is_zero() {
            return Big::zero();
        }
        let mut out = vec![0u64; self.0.len() + other.0.len()];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in other.0.iter().enumerate() {
                let cur = out[i + j] as u128 + a as u128 * b as u128 + carry;
                out[i + j] = cur as u64;
                carry = cur >> 64;
            }
            out[i + other.0.len()] = carry as u64;
        }
        Big(out).normalized()
    }

    pub(crate) fn shl(&self, n: u64) -> Self {
        if self.is_zero() {
            return Big::zero();
        }
        let (limbs, bits) = ((n / 64) as usize, (n % 64) as u32);
        let mut out = vec![0u64; limbs];
        let mut carry = 0u64;
        for &l in &self.0 {
            if bits == 0 {
                out.push(l);
            } else {
                out.push((l << bits) | carry);
                carry = l >> (64 - bits);
            }
        }
        out.push(carry);
        Big(out).normalized()
    }

    /// `⌊self / 2ⁿ⌋`.
    pub(crate) fn shr(&self, n: u64) -> Self {
        let (limbs, bits) = ((n / 64) as usize, (n % 64) as u32);
        if limbs >= self.0.len() {
            return Big::zero();
        }
        let src = &self.0[limbs..];
        let mut out = Vec::with_capacity(src.len());
        for i in 0..src.len() {
            let low = src[i] >> bits;
            let high = if bits == 0 {
                0
            } else {
                src.get(i + 1).copied().unwrap_or(0) << (64 - bits)
            };
            out.push(low | high);
        }
        Big(out).normalized()
    }

    /// Whether any of the low `n` bits is set.
    fn low_bits_nonzero(&self, n: u64) -> bool {
        let (limbs, bits) = ((n / 64) as usize, n % 64);
        self.0.iter().take(limbs).any(|&l| l != 0)
            || (bits > 0 && self.limb(limbs) & ((1u64 << bits) - 1) != 0)
    }

    /// `⌈self / 2ⁿ⌉`.
    pub(crate) fn shr_ceil(&self, n: u64) -> Self {
        let q = self.shr(n);
        if self.low_bits_nonzero(n) {
            q.add(&Big::from_u128(1))
        } else {
            q
        }
    }

    /// `(⌊self / d⌋, remainder ≠ 0)` for `d ≥ 1`.
    pub(crate) fn div_small(&self, d: u64) -> (Self, bool) {
        let mut out = vec![0u64; self.0.len()];
        let mut rem = 0u128;
        for i in (0..self.0.len()).rev() {
            let cur = (rem << 64) | self.0[i] as u128;
            out[i] = (cur / d as u128) as u64;
            rem = cur % d as u128;
        }
        (Big(out).normalized(), rem != 0)
    }

    pub(crate) fn div_small_floor(&self, d: u64) -> Self {
        self.div_small(d).0
    }

    pub(crate) fn div_small_ceil(&self, d: u64) -> Self {
        let (q, inexact) = self.div_small(d);
        if inexact { q.add(&Big::from_u128(1)) } else { q }
    }

    /// `⌊self / d⌋` for `d ≥ 1` (binary long division; construction only).
    pub(crate) fn div_floor(&self, d: &Self) -> Self {
        debug_assert!(!d.is_zero());
        let nbits = self.bit_len();
        let mut quotient = vec![0u64; self.0.len().max(1)];
        let mut rem = Big::zero();
        for i in (0..nbits).rev() {
            rem = rem.shl(1);
            if (self.limb((i / 64) as usize) >> (i % 64)) & 1 == 1 {
                rem = rem.add(&Big::from_u128(1));
            }
            if rem.cmp(d) != Ordering::Less {
                rem = rem.sub_sat(d);
                quotient[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        Big(quotient).normalized()
    }

    /// `⌈self / d⌉`.
    pub(crate) fn div_ceil(&self, d: &Self) -> Self {
        let q = self.div_floor(d);
        if q.mul(d).cmp(self) == Ordering::Less {
            q.add(&Big::from_u128(1))
        } else {
            q
        }
    }

    pub(crate) fn bit_len(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => 64 * (self.0.len() as u64 - 1) + (64 - top.leading_zeros() as u64),
        }
    }

    /// The value as a `u128`, saturating.
    pub(crate) fn to_u128_sat(&self) -> u128 {
        if self.0.len() > 2 {
            u128::MAX
        } else {
            self.limb(0) as u128 | (self.limb(1) as u128) << 64
        }
    }
}

/// `⌊a·b / 2ᴾ⌋`.
fn mul_down(a: &Big, b: &Big, p: u64) -> Big {
    a.mul(b).shr(p)
}

/// `⌈a·b / 2ᴾ⌉`.
fn mul_up(a: &Big, b: &Big, p: u64) -> Big {
    a.mul(b).shr_ceil(p)
}

/// A certified interval `[lo, hi]` of fixed-point numbers with `P` fractional bits:
/// the exact real `x` satisfies `lo ≤ 2ᴾ·x ≤ hi`.
#[derive(Clone, Debug)]
pub(crate) struct Interval {
    pub(crate) lo: Big,
    pub(crate) hi: Big,
}

impl Interval {
    pub(crate) fn exact(x: Big) -> Self {
        Self { lo: x.clone(), hi: x }
    }

    /// The product, outward rounded.
    pub(crate) fn mul(&self, other: &Self, p: u64) -> Self {
        Self {
            lo: mul_down(&self.lo, &other.lo, p),
            hi: mul_up(&self.hi, &other.hi, p),
        }
    }
}

/// `exp(−f)` for `f ∈ [0, 1]` given as `[f_lo, f_hi]` with `p` fractional bits, by the
/// alternating Taylor series: the terms `fⁱ/i!` do not increase (`f ≤ 1`), so
/// (Leibniz) every partial sum ending on an odd term is a lower bound and every partial
/// sum ending on an even term an upper bound. Terms are computed downward (from
/// `f_lo`, floors) for the sums they lower-bound and upward (from `f_hi`, ceilings) for
/// the ones they upper-bound.
fn exp_neg_unit(f: &Interval, p: u64) -> Interval {
    let one = Big::pow2(p);
    let (mut t_lo, mut t_hi) = (one.clone(), one.clone());
    // even terms (added) and odd terms (subtracted), each summed low and high.
    let (mut even_lo, mut even_hi) = (one.clone(), one.clone());
    let (mut odd_lo, mut odd_hi) = (Big::zero(), Big::zero());
    let mut lower = Big::zero();
    let mut i: u64 = 1;
    loop {
        t_lo = mul_down(&t_lo, &f.lo, p).div_small_floor(i);
        t_hi = mul_up(&t_hi, &f.hi, p).div_small_ceil(i);
        if i % 2 == 1 {
            odd_lo = odd_lo.add(&t_lo);
            odd_hi = odd_hi.add(&t_hi);
            // S_i (i odd) ≤ exp(−f): smallest even parts, largest odd parts.
            lower = even_lo.sub_sat(&odd_hi);
        } else {
            even_lo = even_lo.add(&t_lo);
            even_hi = even_hi.add(&t_hi);
            if t_hi.cmp(&Big::from_u128(1)) != Ordering::Greater {
                // S_i (i even) ≥ exp(−f).
                let upper = even_hi.sub_sat(&odd_lo).min_big(&one);
                return Interval { lo: lower, hi: upper };
            }
        }
        i += 1;
    }
}

impl Big {
    fn min_big(self, other: &Self) -> Self {
        if self.cmp(other) == Ordering::Greater {
            other.clone()
        } else {
            self
        }
    }
}

/// A certified enclosure of `exp(−num/den)` with `p` fractional bits, for any
/// `num ≥ 0` and `den ≥ 1`: `exp(−w)·exp(−f)` with `w = ⌊num/den⌋` (binary powering of
/// an enclosure of `e⁻¹`) and `f = (num mod den)/den` (Taylor). Computed with 64 guard
/// bits, then rounded outward to `p` bits. Returns `lo ≤ 2ᵖ·exp(−num/den) ≤ hi`.
pub(crate) fn exp_neg(num: u128, den: u64, p: u64) -> Interval {
    let (w, r) = (num / den as u128, num % den as u128);
    exp_neg_parts(w, p, |wp| {
        (r != 0).then(|| {
            let scaled = Big::from_u128(r).shl(wp);
            Interval {
                lo: scaled.div_small_floor(den),
                hi: scaled.div_small_ceil(den),
            }
        })
    })
}

/// [`exp_neg`] for integers of any size (`den ≥ 1`): the exact fallback of the
/// one-word Bernoulli trials whose exponent is a wide rational (the discrete
/// Gaussian's acceptance test).
pub(crate) fn exp_neg_big(num: &Big, den: &Big, p: u64) -> Interval {
    let w = num.div_floor(den);
    let r = num.sub_sat(&w.mul(den));
    // A saturated w is far above 2p: the enclosure is then [0, 1 ulp] either way.
    exp_neg_parts(w.to_u128_sat(), p, |wp| {
        (!r.is_zero()).then(|| {
            let scaled = r.shl(wp);
            Interval {
                lo: scaled.div_floor(den),
                hi: scaled.div_ceil(den),
            }
        })
    })
}

/// `exp(−w)·exp(−f)` at `p` fractional bits, with `fraction(wp)` the enclosure of
/// `f ∈ [0, 1)` at the working precision `wp` (`None` for `f = 0`).
fn exp_neg_parts(w: u128, p: u64, fraction: impl FnOnce(u64) -> Option<Interval>) -> Interval {
    let out_one = Big::pow2(p);
    if w >= 2 * p as u128 {
        // exp(−w) ≤ exp(−2p) < 2^(−p): the value lies in [0, 1 ulp].
        return Interval {
            lo: Big::zero(),
            hi: Big::from_u128(1),
        };
    }
    let wp = p + 64;
    let one = Big::pow2(wp);
    let mut result = match fraction(wp) {
        None => Interval::exact(one.clone()),
        Some(f) => exp_neg_unit(&f, wp),
    };
    if w > 0 {
        let mut base = exp_neg_unit(&Interval::exact(one), wp);
        let mut w = w;
        loop {
            if w & 1 == 1 {
                result = result.mul(&base, wp);
            }
            w >>= 1;
            if w == 0 {
                break;
            }
            base = base.mul(&base, wp);
        }
    }
    Interval {
        lo: result.lo.shr(64),
        hi: result.hi.shr_ceil(64).min_big(&out_one),
    }
}

/// Decides `U < exp(−num/den)` exactly for the lazily extended uniform `u`, drawing
/// further words of `U` until enclosures at precision `len + 64` separate (`exp` of a
/// non-zero rational is irrational, so this ends with probability 1; `num = 0` is
/// decided at once, `U < 1`).
pub(crate) fn exact_less_exp_neg<R: CryptoRng + ?Sized>(
    u: &mut LazyUniform,
    num: &Big,
    den: &Big,
    bits: &mut BitSource<'_, R>,
) -> bool {
    loop {
        let p = u.len + 64;
        let e = exp_neg_big(num, den, p);
        let (u_lo, u_hi) = u.bounds(p);
        if u_hi.cmp(&e.lo) != Ordering::Greater {
            return true;
        }
        if u_lo.cmp(&e.hi) != Ordering::Less {
            return false;
        }
        u.extend(bits);
    }
}

/// A uniform real `U ∈ [0, 1)` of which the first `len` bits are known (`U ∈
/// [x/2^len, (x+1)/2^len)`); further bits are drawn one 64-bit word at a time, only when
/// a comparison cannot be decided otherwise.
pub(crate) struct LazyUniform {
    prefix: Big,
    len: u64,
}

impl LazyUniform {
    /// The uniform whose first `len ≤ 64` bits are the low `len` bits of `known`.
    pub(crate) fn new(known: u64, len: u64) -> Self {
        Self {
            prefix: Big::from_u128(known as u128),
            len,
        }
    }

    /// `[2ᵖ·lo, 2ᵖ·hi]` for the interval `[lo, hi)` known to contain `U` (`p ≥ len`).
    pub(crate) fn bounds(&self, p: u64) -> (Big, Big) {
        (
            self.prefix.shl(p - self.len),
            self.prefix.add(&Big::from_u128(1)).shl(p - self.len),
        )
    }

    /// The number of bits of `U` known so far.
    pub(crate) fn known_bits(&self) -> u64 {
        self.len
    }

    /// Draws the next 64 bits of `U`.
    pub(crate) fn extend<R: CryptoRng + ?Sized>(&mut self, bits: &mut BitSource<'_, R>) {
        self.prefix = self.prefix.shl(64).add(&Big::from_u128(bits.word() as u128));
        self.len += 64;
    }
}

/// The threshold of a [`Cdt`] entry: `C_c = (aᶜ − A)/(1 − A)` with `a = exp(−γ)`,
/// `γ = step/den`, and `A = a^K` (`A = 0` when `K` is `None`, i.e. `C_c = aᶜ`); or,
/// when `two_sided` (with `K = None`), `C_c = 2aᶜ/(1 + a)`, the law of the magnitude
/// of a discrete Laplace variable: `Pr[|Z| ≥ c] = 2aᶜ/(1 + a)` for `c ≥ 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Threshold {
    /// `γ·den` (the numerator of γ).
    pub(crate) step: u128,
    /// The denominator of γ.
    pub(crate) den: u64,
    /// `K`, for a truncated table.
    pub(crate) size: Option<u64>,
    /// `C_c = 2aᶜ/(1 + a)` (only with `size = None`).
    pub(crate) two_sided: bool,
}

impl Threshold {
    /// Decides `U < C_c` exactly, drawing further words of `U` until the certified
    /// enclosures at precision `len + 64` separate. Terminates with probability 1: the
    /// thresholds are irrational (`exp` of a non-zero rational is transcendental, so no
    /// rational function of it with rational coefficients is rational), so
    /// `U ≠ C_c` almost surely, and the enclosures shrink to width `O(2^(−len))`.
    pub(crate) fn exact_less<R: CryptoRng + ?Sized>(
        &self,
        u: &mut LazyUniform,
        c: u64,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        loop {
            let p = u.len + 64;
            let one = Big::pow2(p);
            let power = exp_neg(self.step.saturating_mul(c as u128), self.den, p);
            let total = match self.size {
                Some(k) => exp_neg(self.step.saturating_mul(k as u128), self.den, p),
                None => Interval::exact(Big::zero()),
            };
            let u_lo = u.prefix.shl(p - u.len);
            let u_hi = u.prefix.add(&Big::from_u128(1)).shl(p - u.len);
            if self.two_sided {
                // U < 2aᶜ/(1 + a) ⇔ U·(1 + a) < 2aᶜ; the left side increases in U and a.
                let a = exp_neg(self.step, self.den, p);
                let lhs_lo = u_lo.add(&mul_down(&u_lo, &a.lo, p));
                let lhs_hi = u_hi.add(&mul_up(&u_hi, &a.hi, p));
                if lhs_hi.cmp(&power.lo.shl(1)) != Ordering::Greater {
                    return true;
                }
                if lhs_lo.cmp(&power.hi.shl(1)) != Ordering::Less {
                    return false;
                }
                u.extend(bits);
                continue;
            }
            // U < C_c ⇔ U + A·(1 − U) < aᶜ; the left side increases in U and in A.
            let lhs_lo = u_lo.add(&mul_down(&total.lo, &one.sub_sat(&u_hi), p));
            let lhs_hi = u_hi.add(&mul_up(&total.hi, &one.sub_sat(&u_lo), p));
            if lhs_hi.cmp(&power.lo) != Ordering::Greater {
                return true;
            }
            if lhs_lo.cmp(&power.hi) != Ordering::Less {
                return false;
            }
            u.extend(bits);
        }
    }

    /// A certified enclosure of `C_c` at precision `p` (construction of the tables).
    fn enclose(&self, power: &Interval, total: &Interval, inverse: &Interval) -> Interval {
        // (aᶜ − A)·(1/(1 − A)), each factor outward rounded.
        let numerator = Interval {
            lo: power.lo.sub_sat(&total.hi),
            hi: power.hi.sub_sat(&total.lo),
        };
        numerator.mul(inverse, CONSTRUCTION_BITS)
    }
}

/// Precision of the construction-time enclosures (fractional bits).
const CONSTRUCTION_BITS: u64 = 192;

/// Positive weights `w_0, …, w_(K−1)` whose suffix sums `S_c = Σ_(j ≥ c) w_j` define
/// the thresholds `C_c = S_c/S_0` of a complete [`Cdt`] (so `Pr[X = j] = w_j/S_0`):
/// certified enclosures at any precision, for the exact comparisons.
pub(crate) trait Weights: core::fmt::Debug + Send + Sync {
    /// `[S_0, S_1, …, S_(K−1)]`, each a certified enclosure with `p` fractional bits
    /// (any common scale: only the ratios matter), narrowing to the exact sums as `p`
    /// grows.
    fn suffix_sums(&self, p: u64) -> Vec<Interval>;
}

/// The thresholds of a [`Cdt`].
#[derive(Clone, Debug)]
enum Thresholds {
    /// Geometric: closed-form powers (see [`Threshold`]).
    Geometric(Threshold),
    /// Ratios of suffix sums of certified weights.
    Weighted(std::sync::Arc<dyn Weights>),
}

impl Thresholds {
    /// `U < C_c`, exactly (see [`Threshold::exact_less`]).
    fn exact_less<R: CryptoRng + ?Sized>(
        &self,
        u: &mut LazyUniform,
        c: u64,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        match self {
            Thresholds::Geometric(threshold) => threshold.exact_less(u, c, bits),
            Thresholds::Weighted(weights) => loop {
                // U < S_c/S_0 ⇔ U·S_0 < S_c; enclosures at precision len + 64.
                let p = u.len + 64;
                let sums = weights.suffix_sums(p);
                let (first, this) = (&sums[0], &sums[c as usize]);
                let (u_lo, u_hi) = u.bounds(p);
                if u_hi.mul(&first.hi).cmp(&this.lo.shl(p)) != Ordering::Greater {
                    return true;
                }
                if u_lo.mul(&first.lo).cmp(&this.hi.shl(p)) != Ordering::Less {
                    return false;
                }
                u.extend(bits);
            },
        }
    }
}

/// A table for `X = #{c ≥ 1 : U < C_c}` (thresholds decreasing in `c`), so that
/// `Pr[X ≥ c] = Pr[U < C_c] = C_c`. Each entry keeps two certified 64-bit bounds at the
/// resolution `2^(−width)` of the first word of `U`:
///
/// * `lo[c] = ⌊2^width · (lower bound of C_c)⌋`: a first word `u < lo[c]` proves
///   `U < (u+1)/2^width ≤ C_c`;
/// * `hi[c] = ⌈2^width · (upper bound of C_c)⌉ − 1`: a first word `u > hi[c]` proves
///   `U ≥ u/2^width ≥ C_c`.
///
/// Only `lo[c] ≤ u ≤ hi[c]` is undecided: at most two values of `u` per entry (the
/// enclosures are narrower than `2^(−width)`), checked at construction.
#[derive(Clone, Debug)]
pub(crate) struct Cdt {
    thresholds: Thresholds,
    /// `K` when the table is complete (`X ≤ K − 1`), `None` for an open geometric tail.
    size: Option<u64>,
    width: u32,
    pub(crate) lo: Vec<u64>,
    pub(crate) hi: Vec<u64>,
    /// The certain count by a guide table, when the table is flat enough.
    guide: Option<Guide>,
}

/// Bits of a linear [`Guide`]'s bucket index (the top bits of the word).
const GUIDE_BITS: u32 = 10;
/// Bits after the leading one that index a logarithmic [`Guide`]'s buckets.
pub(crate) const LOG_GUIDE_BITS: u32 = 8;
/// The most entries a [`Guide`] bucket may straddle: with 2⁸ logarithmic buckets per
/// octave (or 2¹⁰ linear ones) every discrete Laplace table straddles at most one per
/// bucket (tested at 15 scales from 2⁻⁶² to 2⁶⁴), so a look-up is one bucket read and
/// one comparison — measurably faster than three comparisons over coarser buckets.
const MAX_SPAN: usize = 1;

/// How a [`Guide`] groups words into buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Buckets {
    /// By the top `GUIDE_BITS` bits of the `width`-bit word (nearly uniform tables):
    /// the shift.
    Linear(u32),
    /// By the position of the leading one and the `LOG_GUIDE_BITS` bits after it
    /// (geometric tables, whose thresholds are evenly spaced on a log scale); words
    /// below `2^LOG_GUIDE_BITS` each have their own bucket.
    Log,
}

impl Buckets {
    #[inline]
    fn of(self, u: u64) -> usize {
        match self {
            Buckets::Linear(shift) => (u >> shift) as usize,
            Buckets::Log => {
                // With p the position of the leading one (at least LOG_GUIDE_BITS), the
                // top LOG_GUIDE_BITS + 1 bits `u >> (p − L)` lie in [2ᴸ, 2ᴸ⁺¹) and index
                // octave p's buckets after the (p − L)·2ᴸ of the octaves below; words
                // below 2ᴸ (p = L, no shift) are their own buckets 0 … 2ᴸ − 1.
                let top = 63 - (u | 1).leading_zeros();
                let shift = top.max(LOG_GUIDE_BITS) - LOG_GUIDE_BITS;
                ((u64::from(shift) << LOG_GUIDE_BITS) + (u >> shift)) as usize
            }
        }
    }

    /// The first and last word of every bucket, in bucket order.
    fn ranges(self, width: u32) -> Vec<(u64, u64)> {
        match self {
            Buckets::Linear(shift) => (0..1u64 << (width - shift))
                .map(|b| (b << shift, (b << shift) | ((1u64 << shift) - 1)))
                .collect(),
            Buckets::Log => {
                let mut out: Vec<(u64, u64)> = (0..1u64 << LOG_GUIDE_BITS).map(|u| (u, u)).collect();
                for p in LOG_GUIDE_BITS..width {
                    for digits in 0..1u64 << LOG_GUIDE_BITS {
                        let first = (1u64 << p) | (digits << (p - LOG_GUIDE_BITS));
                        out.push((first, first | ((1u64 << (p - LOG_GUIDE_BITS)) - 1)));
                    }
                }
                out
            }
        }
    }
}

/// A guide table for the certain count `#{c : u < lo[c]}` (Chen & Asau 1974, as in
/// CDT samplers): `base[b]` is the count at the top of bucket `b` (a range of words),
/// and at most `MAX_SPAN` further entries can change within a bucket, so the count is
/// `base[b]` plus `MAX_SPAN` comparisons — a fixed amount of work for every word, and the
/// same result as a binary search (checked in the tests). Nearly uniform tables use
/// linear buckets, geometric ones logarithmic buckets.
#[derive(Clone, Debug)]
struct Guide {
    buckets: Buckets,
    base: Vec<u16>,
    /// `lo` followed by `MAX_SPAN` zeros (no word is below 0).
    padded: Vec<u64>,
    /// `hi[c] + 1` (the first word above entry `c`'s undecided words) followed by
    /// `MAX_SPAN + 1` copies of the verdict past the last entry: 0 for a complete table
    /// (every word is decided), `u64::MAX` for an open tail (no word is; words have at
    /// most 63 bits). A look-up reads the `MAX_SPAN + 1` candidates next to its base at
    /// once, so the decision waits for one dependent read fewer.
    decide: Vec<u64>,
}

impl Guide {
    /// The guide of a table, if every bucket of one of the two kinds straddles at most
    /// `MAX_SPAN` entries.
    fn new(lo: &[u64], hi: &[u64], complete: bool, width: u32) -> Option<Self> {
        if lo.len() >= usize::from(u16::MAX) || !(GUIDE_BITS..=63).contains(&width) {
            return None;
        }
        // hi < 2^width ≤ 2⁶³, so hi + 1 does not overflow.
        let past_the_end = if complete { 0 } else { u64::MAX };
        let decide: Vec<u64> = hi
            .iter()
            .map(|&h| h + 1)
            .chain(std::iter::repeat_n(past_the_end, MAX_SPAN + 1))
            .collect();
        [Buckets::Linear(width - GUIDE_BITS), Buckets::Log]
            .into_iter()
            .find_map(|buckets| Self::with(lo, width, buckets))
            .map(|(buckets, base, padded)| Guide {
                buckets,
                base,
                padded,
                decide,
            })
    }

    /// The buckets, their bases and the padded `lo`, if every bucket straddles at most
    /// `MAX_SPAN` entries.
    fn with(lo: &[u64], width: u32, buckets: Buckets) -> Option<(Buckets, Vec<u16>, Vec<u64>)> {
        // `count(u) = #{c : u < lo[c]}` falls as `u` grows (`lo` is non-increasing), and
        // the buckets come in increasing word order: one merge instead of two binary
        // searches per bucket.
        let mut count = lo.len();
        let mut count_at = |u: u64| {
            while count > 0 && u >= lo[count - 1] {
                count -= 1;
            }
            count
        };
        let mut base = Vec::new();
        let mut span = 0;
        for (first, last) in buckets.ranges(width) {
            let at_first = count_at(first);
            let at_last = count_at(last);
            span = span.max(at_first - at_last);
            base.push(at_last as u16);
        }
        if span > MAX_SPAN {
            return None;
        }
        let mut padded = lo.to_vec();
        padded.resize(lo.len() + MAX_SPAN, 0);
        Some((buckets, base, padded))
    }

    /// The certain count and whether `u` decides the table ([`Cdt::fast`]). Always
    /// `MAX_SPAN` comparisons: entries past the bucket's own span are at most the
    /// bucket's first word, so they never count.
    #[inline(always)]
    fn locate(&self, u: u64) -> (usize, bool) {
        self.view().locate(u)
    }

    /// The guide's arrays, borrowed.
    #[inline(always)]
    fn view(&self) -> GuideView<'_> {
        GuideView {
            buckets: self.buckets,
            base: &self.base,
            padded: &self.padded,
            decide: &self.decide,
        }
    }
}

/// A [`Guide`]'s arrays borrowed once, so that a batch of look-ups
/// ([`Cdt::guide_view`]) reads them from registers instead of through the table.
#[derive(Clone, Copy)]
pub(crate) struct GuideView<'a> {
    buckets: Buckets,
    base: &'a [u16],
    padded: &'a [u64],
    decide: &'a [u64],
}

impl GuideView<'_> {
    /// The certain count and whether `u` decides the table (as [`Cdt::fast`]).
    #[inline(always)]
    pub(crate) fn locate(&self, u: u64) -> (usize, bool) {
        let base = usize::from(self.base[self.buckets.of(u)]);
        let lower: &[u64; MAX_SPAN] = self.padded[base..base + MAX_SPAN]
            .try_into()
            .expect("padded by MAX_SPAN");
        let bounds: &[u64; MAX_SPAN + 1] = self.decide[base..base + MAX_SPAN + 1]
            .try_into()
            .expect("padded by MAX_SPAN + 1");
        let above = lower.iter().map(|&l| usize::from(u < l)).sum::<usize>();
        (base + above, u >= bounds[above.min(MAX_SPAN)])
    }
}

impl Cdt {
    /// The table of `C_c = (aᶜ − A)/(1 − A)`, `c = 1 … K−1` when `size = Some(K)`, or
    /// of `C_c = aᶜ` for `c = 1, 2, …` while `C_c` may exceed `2^(−width)` otherwise.
    pub(crate) fn new(threshold: Threshold, width: u32) -> Self {
        let p = CONSTRUCTION_BITS;
        let one = Big::pow2(p);
        let a = exp_neg(threshold.step, threshold.den, p);
        let total = match threshold.size {
            Some(k) => exp_neg(threshold.step.saturating_mul(k as u128), threshold.den, p),
            None => Interval::exact(Big::zero()),
        };
        // 1/(1 − A) at precision p: [2^2p/(1 − A_lo)⁺ ... ] outward; for a two-sided
        // table (A = 0) the factor is 2/(1 + a) instead.
        let inverse = {
            let (den_hi, den_lo) = if threshold.two_sided {
                (one.add(&a.hi), one.add(&a.lo))
            } else {
                (one.sub_sat(&total.lo), one.sub_sat(&total.hi))
            };
            let scaled = Big::pow2(2 * p + u64::from(threshold.two_sided));
            Interval {
                lo: scaled.div_floor(&den_hi),
                hi: scaled.div_ceil(&den_lo),
            }
        };
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        let mut power = a.clone();
        let mut c: u64 = 1;
        loop {
            if threshold.size.is_some_and(|k| c >= k) {
                break;
            }
            let enclosure = threshold.enclose(&power, &total, &inverse);
            let shift = p - width as u64;
            let l = enclosure.lo.shr(shift).to_u128_sat().min(u64::MAX as u128) as u64;
            let h_ceil = enclosure.hi.shr_ceil(shift).to_u128_sat();
            let h = h_ceil.saturating_sub(1).min(u64::MAX as u128) as u64;
            lo.push(l);
            hi.push(h);
            if threshold.size.is_none() && h_ceil <= 1 {
                // C_c ≤ 2^(−width): every first word u ≥ 1 is above this and all later
                // thresholds; u = 0 is left to the exact path.
                break;
            }
            power = power.mul(&a, p);
            c += 1;
        }
        Self::finish(Thresholds::Geometric(threshold), threshold.size, width, lo, hi)
    }

    /// The complete table of `C_c = S_c/S_0`, `c = 1 … K−1`, for `K` certified weights
    /// (`X ∈ [0, K − 1]`, `Pr[X = j] = w_j/S_0`).
    pub(crate) fn weighted(weights: std::sync::Arc<dyn Weights>, width: u32) -> Self {
        let p = CONSTRUCTION_BITS;
        let sums = weights.suffix_sums(p);
        let size = sums.len() as u64;
        let first = &sums[0];
        // Reciprocals of S_0 with p + 64 significant bits, rounded outward: `2ᵉ/S_0` in
        // `[inverse_lo, inverse_hi]`, so `C_c = S_c/S_0` lies in
        // `[S_c.lo·inverse_lo, S_c.hi·inverse_hi]/2ᵉ` (two divisions per table).
        let e = first.hi.bit_len() + p + 64;
        let inverse_lo = Big::pow2(e).div_floor(&first.hi);
        let inverse_hi = Big::pow2(e).div_ceil(&first.lo);
        // From 2ᵉ to the table's 2^width: one shift.
        let shift = e - width as u64;
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        for sum in &sums[1..] {
            let l = sum.lo.mul(&inverse_lo).shr(shift).to_u128_sat();
            let h_ceil = sum.hi.mul(&inverse_hi).shr_ceil(shift).to_u128_sat();
            lo.push(l.min(u64::MAX as u128) as u64);
            hi.push(h_ceil.saturating_sub(1).min(u64::MAX as u128) as u64);
        }
        Self::finish(Thresholds::Weighted(weights), Some(size), width, lo, hi)
    }

    fn finish(
        thresholds: Thresholds,
        size: Option<u64>,
        width: u32,
        mut lo: Vec<u64>,
        mut hi: Vec<u64>,
    ) -> Self {
        // Keep the certificates monotone (lowering a lower bound or raising an upper
        // bound keeps it valid), so that counts are partition points.
        for i in 1..lo.len() {
            lo[i] = lo[i].min(lo[i - 1]);
        }
        for i in (0..hi.len().saturating_sub(1)).rev() {
            hi[i] = hi[i].max(hi[i + 1]);
        }
        let guide = Guide::new(&lo, &hi, size.is_some(), width);
        Self {
            thresholds,
            size,
            width,
            lo,
            hi,
            guide,
        }
    }

    /// Number of entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lo.len()
    }

    /// The bits of the first word of `U` that the table reads.
    #[cfg(test)]
    pub(crate) fn width(&self) -> u32 {
        self.width
    }

    /// The largest number of first words `u` left undecided by any single entry
    /// (`hi[c] − lo[c] + 1`); 2 or less by construction.
    #[cfg(test)]
    pub(crate) fn max_undecided_per_entry(&self) -> u64 {
        self.lo
            .iter()
            .zip(&self.hi)
            .map(|(&l, &h)| (h as u128 + 1).saturating_sub(l as u128) as u64)
            .max()
            .unwrap_or(0)
    }

    /// `Ok(X)` when the first word `u` (of `width` bits) decides every comparison;
    /// otherwise `Err(certain)`, the count of thresholds certainly above `U`, from which
    /// the exact path continues.
    #[inline(always)]
    pub(crate) fn fast(&self, u: u64) -> Result<u64, u64> {
        // `certain` = #{c : u < lo[c]}. Since lo[c] ≤ hi[c] + 1, every such c also has
        // u ≤ hi[c], so #{c : u ≤ hi[c]} ≥ certain, with equality iff the next entry
        // (if any) has u > hi[next]: one guide lookup or binary search, and one
        // comparison.
        let (certain, decided) = match &self.guide {
            Some(guide) => guide.locate(u),
            None => {
                let certain = self.lo.partition_point(|&l| u < l);
                (certain, self.decided_at(u, certain))
            }
        };
        if decided {
            Ok(certain as u64)
        } else {
            Err(certain as u64)
        }
    }

    /// The guide table's arrays for a batch of [`GuideView::locate`] look-ups, when the
    /// table has a guide.
    #[inline]
    pub(crate) fn guide_view(&self) -> Option<GuideView<'_>> {
        self.guide.as_ref().map(Guide::view)
    }

    /// Whether `u`, of which `certain` thresholds are certainly above, decides the table:
    /// `u > hi[certain]`, or past the last entry, the table is complete (the open tail
    /// is not).
    fn decided_at(&self, u: u64, certain: usize) -> bool {
        match self.hi.get(certain) {
            Some(&h) => u > h,
            None => self.size.is_some(),
        }
    }

    /// `X` exactly: the certified count, then exact comparisons of the lazily extended
    /// uniform from the first undecided entry on.
    #[inline]
    pub(crate) fn sample<R: CryptoRng + ?Sized>(&self, u: u64, bits: &mut BitSource<'_, R>) -> u64 {
        match self.fast(u) {
            Ok(x) => x,
            Err(certain) => self.resolve(u, certain, bits),
        }
    }

    #[cold]
    pub(crate) fn resolve<R: CryptoRng + ?Sized>(
        &self,
        u: u64,
        certain: u64,
        bits: &mut BitSource<'_, R>,
    ) -> u64 {
        let mut lazy = LazyUniform::new(u, self.width as u64);
        let mut x = certain;
        loop {
            if self.size.is_some_and(|k| x + 1 >= k) {
                return x;
            }
            if !self.thresholds.exact_less(&mut lazy, x + 1, bits) {
                return x;
            }
            x += 1;
        }
    }

    /// `U < C_c` decided by the exact path alone, for `U` with first word `u` (the
    /// arbitrary-precision reference of the tests).
    #[cfg(test)]
    pub(crate) fn exact_less_at<R: CryptoRng + ?Sized>(
        &self,
        u: u64,
        c: u64,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        let mut lazy = LazyUniform::new(u, self.width as u64);
        self.thresholds.exact_less(&mut lazy, c, bits)
    }

    /// Whether the certain count comes from a guide table.
    #[cfg(test)]
    pub(crate) fn is_guided(&self) -> bool {
        self.guide.is_some()
    }

    /// The certain count by binary search (the reference of the guide's test).
    #[cfg(test)]
    pub(crate) fn certain_by_search(&self, u: u64) -> u64 {
        self.lo.partition_point(|&l| u < l) as u64
    }

    /// Whether `u` decides the table, by binary search (the reference of the guide's
    /// test).
    #[cfg(test)]
    pub(crate) fn decided_by_search(&self, u: u64) -> bool {
        self.decided_at(u, self.certain_by_search(u) as usize)
    }

    /// The number of thresholds, `K − 1` for a truncated table.
    #[cfg(test)]
    pub(crate) fn bound(&self) -> Option<u64> {
        self.size.map(|k| k - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_arithmetic_matches_u128() {
        let values = [0u128, 1, 7, u64::MAX as u128, (1 << 100) + 12345, u128::MAX >> 3];
        for &a in &values {
            for &b in &values {
                let (x, y) = (Big::from_u128(a), Big::from_u128(b));
                assert_eq!(x.cmp(&y), a.cmp(&b));
                if let Some(s) = a.checked_add(b) {
                    assert_eq!(x.add(&y).to_u128_sat(), s);
                }
                assert_eq!(x.sub_sat(&y).to_u128_sat(), a.saturating_sub(b));
                if let Some(m) = a.checked_mul(b) {
                    assert_eq!(x.mul(&y), Big::from_u128(m));
                }
                if let Some(q) = a.checked_div(b) {
                    assert_eq!(x.div_floor(&y).to_u128_sat(), q);
                    assert_eq!(x.div_ceil(&y).to_u128_sat(), a.div_ceil(b));
                }
            }
            for s in [0u64, 1, 63, 64, 65, 100] {
                assert_eq!(Big::from_u128(a).shl(s).shr(s).to_u128_sat(), a);
                if s < 128 {
                    assert_eq!(Big::from_u128(a).shr(s).to_u128_sat(), a >> s);
                    assert_eq!(Big::from_u128(a).shr_ceil(s).to_u128_sat(), a.div_ceil(1 << s));
                }
            }
            for d in [1u64, 3, 1 << 40, u64::MAX] {
                assert_eq!(Big::from_u128(a).div_small_floor(d).to_u128_sat(), a / d as u128);
                assert_eq!(
                    Big::from_u128(a).div_small_ceil(d).to_u128_sat(),
                    a.div_ceil(d as u128)
                );
            }
        }
    }

    /// The enclosures contain `exp(−x)` (checked against `f64`, which is accurate to
    /// ~1e-16 relative) and are narrow.
    #[test]
    fn exp_neg_encloses_the_value() {
        for (num, den) in [
            (1u128, 1u64),
            (1, 3),
            (2, 3),
            (5, 2),
            (100, 7),
            (1, 1 << 40),
            (37, 1),
        ] {
            let p = 100;
            let e = exp_neg(num, den, p);
            let scale = 2f64.powi(p as i32);
            let lo = e.lo.to_u128_sat() as f64 / scale;
            let hi = e.hi.to_u128_sat() as f64 / scale;
            let exact = (-(num as f64) / den as f64).exp();
            assert!(
                lo <= exact * (1.0 + 1e-15) && hi >= exact * (1.0 - 1e-15),
                "{num}/{den}"
            );
            assert!(e.hi.sub_sat(&e.lo).to_u128_sat() <= 4, "{num}/{den}: too wide");
        }
        // The first 60 bits of e⁻¹ at precision 200, exactly.
        let e = exp_neg(1, 1, 200);
        let top_lo = e.lo.shr(140).to_u128_sat();
        let top_hi = e.hi.shr(140).to_u128_sat();
        // ⌊2^60 · e⁻¹⌋ = 424136118829305329 (computed independently with `bc -l`:
        // `scale=80; e(-1)*2^60` = 424136118829305329.67…).
        assert_eq!(top_lo, 424_136_118_829_305_329);
        assert_eq!(top_hi, 424_136_118_829_305_329);
    }
}
