//! The thresholds `C_c` of a [`Cdt`](super::Cdt): closed-form geometric ones
//! ([`Threshold`]) and ratios of suffix sums of certified weights ([`Weights`]), each
//! with its certified enclosure and its exact comparison with a lazy uniform.

use super::bigint::{Big, mul_down, mul_up};
use super::interval::{Interval, exp_neg};
use super::lazy_uniform::LazyUniform;
use crate::sampling::BitSource;
use core::cmp::Ordering;
use rand_core::CryptoRng;

/// The threshold of a [`Cdt`](super::Cdt) entry: `C_c = (aᶜ − A)/(1 − A)` with `a = exp(−γ)`,
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
            let p = u.known_bits() + 64;
            let one = Big::pow2(p);
            let power = exp_neg(self.step.saturating_mul(c as u128), self.den, p);
            let total = match self.size {
                Some(k) => exp_neg(self.step.saturating_mul(k as u128), self.den, p),
                None => Interval::exact(Big::zero()),
            };
            let (u_lo, u_hi) = u.bounds(p);
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
    pub(super) fn enclose(&self, power: &Interval, total: &Interval, inverse: &Interval) -> Interval {
        // (aᶜ − A)·(1/(1 − A)), each factor outward rounded.
        let numerator = Interval {
            lo: power.lo.sub_sat(&total.hi),
            hi: power.hi.sub_sat(&total.lo),
        };
        numerator.mul(inverse, CONSTRUCTION_BITS)
    }
}

/// Precision of the construction-time enclosures (fractional bits).
pub(super) const CONSTRUCTION_BITS: u64 = 192;

/// Positive weights `w_0, …, w_(K−1)` whose suffix sums `S_c = Σ_(j ≥ c) w_j` define
/// the thresholds `C_c = S_c/S_0` of a complete [`Cdt`](super::Cdt) (so `Pr[X = j] = w_j/S_0`):
/// certified enclosures at any precision, for the exact comparisons.
pub(crate) trait Weights: core::fmt::Debug + Send + Sync {
    /// `[S_0, S_1, …, S_(K−1)]`, each a certified enclosure with `p` fractional bits
    /// (any common scale: only the ratios matter), narrowing to the exact sums as `p`
    /// grows.
    fn suffix_sums(&self, p: u64) -> Vec<Interval>;
}

/// The thresholds of a [`Cdt`](super::Cdt).
#[derive(Clone, Debug)]
pub(super) enum Thresholds {
    /// Geometric: closed-form powers (see [`Threshold`]).
    Geometric(Threshold),
    /// Ratios of suffix sums of certified weights.
    Weighted(std::sync::Arc<dyn Weights>),
}

impl Thresholds {
    /// `U < C_c`, exactly (see [`Threshold::exact_less`]).
    pub(super) fn exact_less<R: CryptoRng + ?Sized>(
        &self,
        u: &mut LazyUniform,
        c: u64,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        match self {
            Thresholds::Geometric(threshold) => threshold.exact_less(u, c, bits),
            Thresholds::Weighted(weights) => loop {
                // U < S_c/S_0 ⇔ U·S_0 < S_c; enclosures at precision len + 64.
                let p = u.known_bits() + 64;
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
