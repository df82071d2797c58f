//! A uniform real in `[0, 1)` whose bits are drawn lazily, one 64-bit word at a time,
//! and its exact comparison with `exp(−num/den)`: the fallback that decides what the
//! certified 64-bit bounds leave undecided.

use super::bigint::Big;
use super::interval::exp_neg_big;
use crate::sampling::BitSource;
use core::cmp::Ordering;
use rand_core::CryptoRng;

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
