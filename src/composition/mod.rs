//! Composition: how much privacy several releases spend together.
//!
//! Pure functions, one file per rule, plus one stateful [`Accountant`]:
//!
//! | rule | module | guarantee composed | valid under adaptive choice of ε? |
//! | --- | --- | --- | --- |
//! | sequential (basic) | [`sequential`] | Σε, Σδ (pure / approximate), Σρ (zCDP) | yes |
//! | parallel, data-independent partition | [`parallel`] | max (add/remove), two largest (substitute) | yes |
//! | advanced (Dwork–Rothblum–Vadhan 2010) | [`advanced`] | `√(2k ln(1/δ′))ε + kε(e^ε − 1)` | only with k and ε fixed up front |
//! | optimal homogeneous (Kairouz–Oh–Viswanath 2015) | [`optimal`] | exact δ(ε_total) | only with k and ε fixed up front |
//! | zero-concentrated DP (Bun–Steinke 2016) | [`zcdp`] | Σρ; ρ → (ε, δ) simple and tight (CKS 2020) | yes |
//!
//! Every function validates its arguments first and returns a typed [`Error`] — never
//! a panic, never a NaN. Every *reported loss* is rounded up and every *allowance*
//! (e.g. the largest per-step ε that fits a target) is rounded down, so floating-point
//! error can only make the crate claim less privacy than it provides.
//!
//! ```
//! use dpmech::composition::{advanced, optimal, sequential};
//! // Ten thousand 1/801-DP queries, slack δ′ = e^−32: the textbook says "ε′ ≤ 1"...
//! let eps = advanced::advanced_epsilon(10_000, 1.0 / 801.0, (-32.0f64).exp())?;
//! assert!(eps > 1.014 && eps < 1.015); // ...but computing it gives ≈ 1.0143.
//! // The largest per-step ε that really fits, under each rule:
//! let seq = sequential::max_epsilon_per_step(10_000, 1.0)?;
//! let adv = advanced::max_epsilon_per_step(10_000, 1.0, (-32.0f64).exp())?;
//! let opt = optimal::max_epsilon_per_step(10_000, 1.0, (-32.0f64).exp())?;
//! assert!(seq < adv && adv < opt);
//! # Ok::<(), dpmech::Error>(())
//! ```

pub mod accountant;
pub mod advanced;
pub mod optimal;
pub mod parallel;
pub mod sequential;
pub mod zcdp;

pub use accountant::{Accountant, LedgerEntry, Plan, PlanRule};

use crate::Error;
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon, check_rho};

/// Validates every field of a [`PrivacyLoss`] (its fields are public, so a value may
/// have been built without the checking constructors).
pub(crate) fn validate_loss(loss: PrivacyLoss) -> Result<PrivacyLoss, Error> {
    match loss {
        PrivacyLoss::Pure { epsilon } => {
            check_epsilon(epsilon)?;
        }
        PrivacyLoss::Approximate { epsilon, delta } => {
            check_epsilon(epsilon)?;
            check_delta(delta)?;
        }
        PrivacyLoss::Zcdp { rho } => {
            check_rho(rho)?;
        }
        PrivacyLoss::RandomDp { epsilon, gamma } => {
            check_epsilon(epsilon)?;
            check_gamma(gamma)?;
        }
    }
    Ok(loss)
}

/// Validates the γ of random DP: in the open interval (0, 1).
pub(crate) fn check_gamma(gamma: f64) -> Result<f64, Error> {
    if gamma > 0.0 && gamma < 1.0 {
        Ok(gamma)
    } else {
        Err(Error::InvalidParameter {
            name: "gamma",
            value: gamma,
            reason: "gamma must lie in the open interval (0, 1)",
        })
    }
}

/// Validates a number of composed steps (k ≥ 1) and returns it as an `f64` rounded up.
pub(crate) fn check_steps(k: u64) -> Result<f64, Error> {
    if k == 0 {
        return Err(Error::InvalidParameter {
            name: "k",
            value: 0.0,
            reason: "the number of composed steps must be at least 1",
        });
    }
    Ok(directed::u64_up(k))
}

/// Validates a total ε that may be 0 (as in δ(ε_total)): finite and ≥ 0.
pub(crate) fn check_epsilon_total(value: f64) -> Result<f64, Error> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(Error::InvalidParameter {
            name: "epsilon_total",
            value,
            reason: "the total epsilon must be finite and >= 0",
        })
    }
}

/// The largest `x` in `[lo, hi]` (both finite, `0 ≤ lo ≤ hi`) with `pred(x)`, assuming
/// `pred(lo)` holds and `pred` is monotone (true below a threshold, false above).
///
/// Bisects on the bit patterns of non-negative floats (which are ordered like the
/// values), so it ends on adjacent floats after at most 64 evaluations. The returned
/// value always satisfied `pred` when evaluated: the search can only err on the safe
/// side.
pub(crate) fn largest_satisfying(lo: f64, hi: f64, mut pred: impl FnMut(f64) -> bool) -> f64 {
    let (mut lo_bits, mut hi_bits) = (lo.to_bits(), hi.to_bits());
    if pred(hi) {
        return hi;
    }
    while hi_bits - lo_bits > 1 {
        let mid_bits = lo_bits + (hi_bits - lo_bits) / 2;
        if pred(f64::from_bits(mid_bits)) {
            lo_bits = mid_bits;
        } else {
            hi_bits = mid_bits;
        }
    }
    f64::from_bits(lo_bits)
}

/// The smallest `x` in `[lo, hi]` (both finite, `0 ≤ lo ≤ hi`) with `pred(x)`, assuming
/// `pred(hi)` holds and `pred` is monotone (false below a threshold, true above).
pub(crate) fn smallest_satisfying(lo: f64, hi: f64, mut pred: impl FnMut(f64) -> bool) -> f64 {
    let (mut lo_bits, mut hi_bits) = (lo.to_bits(), hi.to_bits());
    if pred(lo) {
        return lo;
    }
    while hi_bits - lo_bits > 1 {
        let mid_bits = lo_bits + (hi_bits - lo_bits) / 2;
        if pred(f64::from_bits(mid_bits)) {
            hi_bits = mid_bits;
        } else {
            lo_bits = mid_bits;
        }
    }
    f64::from_bits(hi_bits)
}

/// Directed (outward) rounding that is *exact when the result is representable*.
///
/// `+`, `×`, `÷` and `√` use error-free transformations (TwoSum, FMA residuals) to
/// decide whether the correctly rounded result lies below or above the exact one, and
/// step one ulp only when needed — so sums of exactly representable charges (e.g.
/// multiples of 2⁻¹⁰) stay exact, while any inexact result is bounded on the safe side.
/// Transcendentals (`ln`, `exp`, `ln_1p`, `exp_m1`) are nudged two ulps, as in
/// [`crate::privacy::round`].
pub(crate) mod directed {
    /// Below this magnitude, FMA residuals may themselves be inexact (underflow): step
    /// unconditionally.
    const TINY: f64 = 1e-280;

    /// An upper bound on the exact `a + b`.
    pub fn add_up(a: f64, b: f64) -> f64 {
        let s = a + b;
        if !s.is_finite() {
            return s;
        }
        let bb = s - a;
        let err = (a - (s - bb)) + (b - bb);
        if err > 0.0 { s.next_up() } else { s }
    }

    /// A lower bound on the exact `a + b`.
    pub fn add_down(a: f64, b: f64) -> f64 {
        let s = a + b;
        if !s.is_finite() {
            return s;
        }
        let bb = s - a;
        let err = (a - (s - bb)) + (b - bb);
        if err < 0.0 { s.next_down() } else { s }
    }

    /// An upper bound on the exact `a − b`.
    pub fn sub_up(a: f64, b: f64) -> f64 {
        add_up(a, -b)
    }

    /// A lower bound on the exact `a − b`.
    pub fn sub_down(a: f64, b: f64) -> f64 {
        add_down(a, -b)
    }

    /// An upper bound on the exact `a × b`.
    pub fn mul_up(a: f64, b: f64) -> f64 {
        let p = a * b;
        if !p.is_finite() {
            return p;
        }
        if p.abs() < TINY {
            return if a == 0.0 || b == 0.0 { p } else { p.next_up() };
        }
        if a.mul_add(b, -p) > 0.0 {
            p.next_up()
        } else {
            p
        }
    }

    /// A lower bound on the exact `a × b`.
    pub fn mul_down(a: f64, b: f64) -> f64 {
        let p = a * b;
        if !p.is_finite() {
            return p;
        }
        if p.abs() < TINY {
            return if a == 0.0 || b == 0.0 {
                p
            } else {
                p.next_down()
            };
        }
        if a.mul_add(b, -p) < 0.0 {
            p.next_down()
        } else {
            p
        }
    }

    /// An upper bound on the exact `a ÷ b` (`b ≠ 0`).
    pub fn div_up(a: f64, b: f64) -> f64 {
        let q = a / b;
        if !q.is_finite() {
            return q;
        }
        if q.abs() < TINY || a.abs() < TINY {
            return if a == 0.0 { q } else { q.next_up() };
        }
        // r = a − q·b exactly; the exact quotient exceeds q iff r/b > 0.
        let r = -q.mul_add(b, -a);
        if (r > 0.0) == (b > 0.0) && r != 0.0 {
            q.next_up()
        } else {
            q
        }
    }

    /// A lower bound on the exact `a ÷ b` (`b ≠ 0`).
    pub fn div_down(a: f64, b: f64) -> f64 {
        let q = a / b;
        if !q.is_finite() {
            return q;
        }
        if q.abs() < TINY || a.abs() < TINY {
            return if a == 0.0 { q } else { q.next_down() };
        }
        let r = -q.mul_add(b, -a);
        if (r < 0.0) == (b > 0.0) && r != 0.0 {
            q.next_down()
        } else {
            q
        }
    }

    /// An upper bound on the exact `√a` (`a ≥ 0`).
    pub fn sqrt_up(a: f64) -> f64 {
        let s = a.sqrt();
        if !s.is_finite() || s == 0.0 {
            return s;
        }
        if a < TINY {
            return s.next_up();
        }
        if s.mul_add(s, -a) < 0.0 {
            s.next_up()
        } else {
            s
        }
    }

    /// A lower bound on the exact `√a` (`a ≥ 0`), never below 0.
    pub fn sqrt_down(a: f64) -> f64 {
        let s = a.sqrt();
        if !s.is_finite() || s == 0.0 {
            return s;
        }
        if a < TINY {
            return s.next_down().max(0.0);
        }
        if s.mul_add(s, -a) > 0.0 {
            s.next_down()
        } else {
            s
        }
    }

    /// A lower bound on `ln a`.
    pub fn ln_down(a: f64) -> f64 {
        a.ln().next_down().next_down()
    }

    /// A lower bound on `ln(1 + a)`.
    pub fn ln_1p_down(a: f64) -> f64 {
        a.ln_1p().next_down().next_down()
    }

    /// An upper bound on `eᵃ`.
    pub fn exp_up(a: f64) -> f64 {
        a.exp().next_up().next_up()
    }

    /// An upper bound on `eᵃ − 1`.
    pub fn exp_m1_up(a: f64) -> f64 {
        a.exp_m1().next_up().next_up()
    }

    /// `k` as an `f64`, rounded up when `k > 2⁵³` is not representable.
    pub fn u64_up(k: u64) -> f64 {
        let f = k as f64;
        if (f as u128) < u128::from(k) {
            f.next_up()
        } else {
            f
        }
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
mod tests {
    use super::directed::*;

    #[test]
    fn directed_ops_are_exact_when_representable_and_bracket_otherwise() {
        assert_eq!(add_up(0.5, 0.25), 0.75);
        assert_eq!(add_down(0.5, 0.25), 0.75);
        assert!(add_up(0.1, 0.2) > add_down(0.1, 0.2));
        // The binary 0.1 + 0.2 is exactly 0.30000000000000001665…, which rounds to
        // nearest *above*: the upper bound is that float, the lower bound one ulp less.
        assert_eq!(add_up(0.1, 0.2), 0.1 + 0.2);
        assert_eq!(add_down(0.1, 0.2), (0.1f64 + 0.2).next_down());
        assert_eq!(mul_up(3.0, 0.5), 1.5);
        assert!(mul_up(0.1, 0.1) >= 0.1 * 0.1 && mul_down(0.1, 0.1) <= 0.1 * 0.1);
        assert!(mul_up(0.1, 0.1) > mul_down(0.1, 0.1));
        assert_eq!(div_up(1.0, 4.0), 0.25);
        assert!(div_up(1.0, 3.0) > div_down(1.0, 3.0));
        assert!(div_up(1.0, 3.0) * 3.0 >= 1.0);
        assert_eq!(sqrt_up(4.0), 2.0);
        assert!(sqrt_up(2.0) * sqrt_up(2.0) >= 2.0);
        assert!(sqrt_down(2.0) * sqrt_down(2.0) <= 2.0);
        assert_eq!(u64_up(u64::MAX), 18_446_744_073_709_551_616.0);
        assert!(u64_up((1 << 53) + 1) > (1u64 << 53) as f64);
    }

    #[test]
    fn bit_bisection_finds_adjacent_floats() {
        let x = super::largest_satisfying(0.0, 10.0, |v| v * v <= 2.0);
        assert!(x * x <= 2.0 && x.next_up() * x.next_up() > 2.0);
        let y = super::smallest_satisfying(0.0, 10.0, |v| v * v >= 2.0);
        assert!(y * y >= 2.0 && y.next_down() * y.next_down() < 2.0);
    }
}
