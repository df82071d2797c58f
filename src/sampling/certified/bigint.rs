//! [`Big`], an unsigned integer of any size, and the fixed-point products of the
//! certified enclosures (`⌊a·b/2ᴾ⌋`, `⌈a·b/2ᴾ⌉`). Construction-time and fallback
//! arithmetic only: no sampling fast path touches it.

use core::cmp::Ordering;

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

    /// `⌊self / d⌋` for `d ≥ 1`: binary long division in place (one remainder of
    /// `len(d) + 1` limbs, doubled and reduced once per bit of `self`; the remainder stays
    /// below `d`, so its double fits), with no allocation per bit.
    pub(crate) fn div_floor(&self, d: &Self) -> Self {
        debug_assert!(!d.is_zero());
        if self.cmp(d) == Ordering::Less {
            return Big::zero();
        }
        let mut rem = vec![0u64; d.0.len() + 1];
        let mut quotient = vec![0u64; self.0.len()];
        for i in (0..self.bit_len()).rev() {
            let (limb, bit) = ((i / 64) as usize, i % 64);
            let mut carry = (self.0[limb] >> bit) & 1;
            for r in rem.iter_mut() {
                let out = *r >> 63;
                *r = (*r << 1) | carry;
                carry = out;
            }
            if !limbs_less(&rem, &d.0) {
                limbs_sub(&mut rem, &d.0);
                quotient[limb] |= 1 << bit;
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

    /// The smaller of `self` and `other`.
    pub(crate) fn min_big(self, other: &Self) -> Self {
        if self.cmp(other) == Ordering::Greater {
            other.clone()
        } else {
            self
        }
    }
}

/// `a < b` for little-endian limbs, `b` no longer than `a` (missing limbs are 0).
fn limbs_less(a: &[u64], b: &[u64]) -> bool {
    for i in (0..a.len()).rev() {
        let y = b.get(i).copied().unwrap_or(0);
        if a[i] != y {
            return a[i] < y;
        }
    }
    false
}

/// `a −= b` for little-endian limbs, `a ≥ b`, `b` no longer than `a`.
fn limbs_sub(a: &mut [u64], b: &[u64]) {
    let mut borrow = false;
    for (i, x) in a.iter_mut().enumerate() {
        let (d1, b1) = x.overflowing_sub(b.get(i).copied().unwrap_or(0));
        let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
        *x = d2;
        borrow = b1 || b2;
    }
    debug_assert!(!borrow);
}

/// `⌊a·b / 2ᴾ⌋`.
pub(crate) fn mul_down(a: &Big, b: &Big, p: u64) -> Big {
    a.mul(b).shr(p)
}

/// `⌈a·b / 2ᴾ⌉`.
pub(crate) fn mul_up(a: &Big, b: &Big, p: u64) -> Big {
    a.mul(b).shr_ceil(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wide divisions against the definition, checked with products and sums alone:
    /// `q·d ≤ n < (q + 1)·d` for 4000 random `(n, d)` of 1 to 12 limbs (some of `d`'s
    /// limbs all ones or zero, to reach the carries), and `div_ceil` one above unless
    /// exact.
    #[test]
    fn wide_division_meets_its_definition() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut limbs = |len: u64| {
            let count = 1 + len % 12;
            let limbs: Vec<u64> = (0..count)
                .map(|_| match next() % 5 {
                    0 => u64::MAX,
                    1 => 0,
                    _ => next(),
                })
                .collect();
            Big(limbs).normalized()
        };
        for i in 0..4000u64 {
            let n = limbs(i * 7 + 3);
            let d = limbs(i % 8);
            if d.is_zero() {
                continue;
            }
            let q = n.div_floor(&d);
            assert!(q.mul(&d).cmp(&n).is_le(), "{n:?} / {d:?}");
            assert!(n.cmp(&q.add(&Big::from_u128(1)).mul(&d)).is_lt(), "{n:?} / {d:?}");
            let c = n.div_ceil(&d);
            let exact = q.mul(&d) == n;
            assert_eq!(c, if exact { q } else { q.add(&Big::from_u128(1)) });
        }
    }

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
}
