//! Certified intervals of fixed-point numbers and enclosures of `exp(−x)` for rational
//! `x` (small or of any size), rounded outward at every step.

use super::bigint::{Big, mul_down, mul_up};
use core::cmp::Ordering;

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

/// Test reference: `U < x` for `U` = the given words (most significant first)
/// followed by anything, decided against a 512-bit enclosure `e` of `x` (from
/// [`exp_neg`] or [`exp_neg_big`] at `p = 512`), independently of the lazy paths'
/// precision schedules. `None` if even that cannot decide.
#[cfg(test)]
pub(crate) fn prefix_below(words: &[u64], e: &Interval) -> Option<bool> {
    let mut prefix = Big::zero();
    for &w in words {
        prefix = prefix.shl(64).add(&Big::from_u128(u128::from(w)));
    }
    let len = 64 * words.len() as u64;
    let lo = prefix.shl(512 - len);
    let hi = prefix.add(&Big::from_u128(1)).shl(512 - len);
    if hi.cmp(&e.lo) != Ordering::Greater {
        Some(true)
    } else if lo.cmp(&e.hi) != Ordering::Less {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
