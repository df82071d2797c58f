//! Optimal homogeneous composition (Kairouz, Oh & Viswanath 2015, Thm 3.3; in the
//! closed form of Murtagh & Vadhan 2016, Thm 1.5).
//!
//! **Theorem.** The k-fold adaptive composition of ε-DP mechanisms is
//! `(ε_total, δ)`-DP if and only if `δ ≥ δ_opt(ε_total)`, where
//!
//! ```text
//! δ_opt(ε_total) = (1 + e^ε)^−k · Σ_{l=0}^{k} C(k, l) · max(0, e^{(k−l)ε} − e^{ε_total + lε}).
//! ```
//!
//! The bound is attained by k independent binary randomized responses, so nothing
//! smaller is valid for *every* ε-DP mechanism: it is the exact answer. In probabilistic
//! terms, with `B ~ Binomial(k, p)`, `p = e^ε/(1 + e^ε)` (the number of randomized
//! responses that told the truth) and privacy loss `L = (2B − k)ε`,
//! `δ_opt(ε_total) = E[(1 − e^{ε_total − L})⁺]` — which is how it is computed here.
//!
//! # Numerics
//!
//! The binomial weights are built from the mode outward by the exact ratio
//! `P(j+1)/P(j) = (k − j)/(j + 1) · e^ε`, never forming `C(k, l)`, `e^{kε}` or
//! `(1+e^ε)^k` (which overflow for large k), and normalised by their own sum. The
//! walk stops when a weight drops below 10⁻³⁰⁰ of the mode's; by log-concavity of the
//! binomial every remaining weight is smaller, so `(number left) × 10⁻³⁰⁰` bounds the
//! dropped mass and is *added* to the result. Each weight carries a relative error of
//! at most 5u per step from the mode (u = 2⁻⁵³: one division, two products, and the
//! ≤ 1-ulp error of `e^±ε` that recurs at every step) and each sum ≤ 2u per term; the
//! result is multiplied by `1 + 3η` with `η = (6·steps + 2·terms + 8)·u`, which covers
//! `(1 + η)/(1 − η)`, so the value returned is an upper bound on the exact δ_opt (given
//! the platform's `exp`/`exp_m1` are accurate to 1 ulp, as in [`crate::privacy::round`]). About `75·√(k p (1−p))` terms are
//! visited: k = 10⁶ takes well under a millisecond. k is limited to 2³⁶.
//!
//! Adaptivity: the mechanisms may be chosen adaptively, but k and ε are fixed up front.

use super::{check_epsilon_total, check_steps, largest_satisfying, smallest_satisfying};
use crate::Error;
use crate::privacy::round::{add_up, div_up, mul_up, sub_down};
use crate::privacy::{check_delta, check_epsilon};

/// The largest k accepted by the exact computation.
pub const MAX_STEPS: u64 = 1 << 36;

/// Weights below this fraction of the mode's are not visited (their mass is bounded).
const FLOOR: f64 = 1e-300;

fn check_k(k: u64) -> Result<f64, Error> {
    let kf = check_steps(k)?;
    if k > MAX_STEPS {
        return Err(Error::InvalidParameter {
            name: "k",
            value: kf,
            reason: "exact optimal composition supports k <= 2^36; use advanced composition or zCDP",
        });
    }
    Ok(kf)
}

/// Upper bound on δ_opt(ε_total) for validated inputs (k ≤ 2³⁶, ε > 0, ε_total ≥ 0).
fn delta_upper(k: u64, eps: f64, eps_total: f64) -> f64 {
    let kf = k as f64;
    if eps_total >= mul_up(kf, eps) {
        // No outcome has privacy loss above ε_total.
        return 0.0;
    }
    let e_pos = eps.exp();
    let e_neg = (-eps).exp();
    let p = 1.0 / (1.0 + e_neg);
    let mode = (((kf + 1.0) * p).floor() as u64).min(k);
    // (1 − e^{ε_total − L_j})⁺, rounded up.
    let excess = |j: u64| -> f64 {
        let loss_up = mul_up((2 * j) as f64 - kf, eps);
        let x = sub_down(eps_total, loss_up);
        if x < 0.0 {
            (-x.exp_m1()).next_up().next_up().min(1.0)
        } else {
            0.0
        }
    };
    let mut num = excess(mode);
    let mut den = 1.0f64;
    let mut terms: u64 = 1;
    // Upward from the mode.
    let (mut w, mut j) = (1.0f64, mode);
    let mut steps_up = 0u64;
    while j < k {
        w *= ((k - j) as f64 / (j + 1) as f64) * e_pos;
        j += 1;
        if w.is_nan() || w < FLOOR {
            num += (k - j + 1) as f64 * FLOOR;
            break;
        }
        den += w;
        num += w * excess(j);
        terms += 1;
        steps_up += 1;
    }
    // Downward from the mode.
    let (mut w, mut j) = (1.0f64, mode);
    let mut steps_down = 0u64;
    while j > 0 {
        w *= (j as f64 / (k - j + 1) as f64) * e_neg;
        j -= 1;
        if w.is_nan() || w < FLOOR {
            num += (j + 1) as f64 * FLOOR;
            break;
        }
        den += w;
        num += w * excess(j);
        terms += 1;
        steps_down += 1;
    }
    // Relative error, in units u = 2⁻⁵³: ≤ 5u per step of the walk (division, two
    // products, and the systematic ≤ 2u error of e^±ε), ≤ 2u per summed term.
    let eta = (6 * steps_up.max(steps_down) + 2 * terms + 8) as f64 * f64::EPSILON / 2.0;
    let delta = mul_up(div_up(num, den), add_up(1.0, mul_up(3.0, eta)));
    delta.min(1.0)
}

/// δ_opt(ε_total) for the k-fold composition of ε-DP mechanisms (Kairouz–Oh–Viswanath
/// 2015), as an upper bound that is tight to ≈ k·10⁻¹⁶ relative. `epsilon_total ≥ 0`
/// (0 gives the total-variation distance); the result is 0 once `ε_total ≥ kε`.
///
/// ```
/// use dpmech::composition::optimal::optimal_delta;
/// // Two 1-DP steps: δ(1) = e(e − 1)/(1 + e)² exactly.
/// let e = std::f64::consts::E;
/// let exact = e * (e - 1.0) / ((1.0 + e) * (1.0 + e));
/// let d = optimal_delta(2, 1.0, 1.0)?;
/// assert!(d >= exact && d < exact * (1.0 + 1e-12));
/// # Ok::<(), dpmech::Error>(())
/// ```
pub fn optimal_delta(k: u64, epsilon: f64, epsilon_total: f64) -> Result<f64, Error> {
    check_k(k)?;
    let e = check_epsilon(epsilon)?;
    let total = check_epsilon_total(epsilon_total)?;
    Ok(delta_upper(k, e, total))
}

/// The smallest ε_total (rounded up) such that k ε-DP steps are `(ε_total, δ)`-DP by
/// the optimal composition theorem. Returns 0 when even ε_total = 0 meets δ.
pub fn optimal_epsilon(k: u64, epsilon: f64, delta: f64) -> Result<f64, Error> {
    let kf = check_k(k)?;
    let e = check_epsilon(epsilon)?;
    let d = check_delta(delta)?;
    let hi = mul_up(kf, e);
    if !hi.is_finite() {
        return Err(Error::InvalidParameter {
            name: "epsilon",
            value: e,
            reason: "k * epsilon overflows",
        });
    }
    Ok(smallest_satisfying(0.0, hi, |t| delta_upper(k, e, t) <= d))
}

/// The largest per-step ε (rounded down) such that k ε-DP steps are
/// `(epsilon_total, delta)`-DP by the optimal composition theorem.
///
/// Never below the sequential allowance `ε_total/k` (rounded down), which needs no δ.
///
/// ```
/// use dpmech::composition::{optimal, sequential};
/// let opt = optimal::max_epsilon_per_step(100, 1.0, 1e-6)?;
/// assert!(opt > sequential::max_epsilon_per_step(100, 1.0)?);
/// assert!(optimal::optimal_delta(100, opt, 1.0)? <= 1e-6);
/// # Ok::<(), dpmech::Error>(())
/// ```
pub fn max_epsilon_per_step(k: u64, epsilon_total: f64, delta: f64) -> Result<f64, Error> {
    let kf = check_k(k)?;
    let target = check_epsilon(epsilon_total)?;
    let d = check_delta(delta)?;
    let lo = crate::privacy::round::div_down(target, kf);
    if lo.is_nan() || lo <= 0.0 {
        return Err(Error::InvalidParameter {
            name: "epsilon_total",
            value: target,
            reason: "the per-step epsilon underflows to 0",
        });
    }
    let fits = |e: f64| delta_upper(k, e, target) <= d;
    let mut hi = lo;
    let mut doublings = 0;
    while fits(hi) && doublings < 1100 {
        hi *= 2.0;
        doublings += 1;
        if !hi.is_finite() {
            hi = f64::MAX;
            break;
        }
    }
    Ok(largest_satisfying(lo, hi, fits).max(lo))
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
mod tests {
    use super::*;

    #[test]
    fn one_step_is_the_randomized_response_gap() {
        // k = 1: δ(t) = (e^ε − e^t)/(1 + e^ε) for t < ε.
        let (eps, t) = (1.0f64, 0.25f64);
        let exact = (eps.exp() - t.exp()) / (1.0 + eps.exp());
        let d = optimal_delta(1, eps, t).unwrap();
        assert!(d >= exact && d <= exact * (1.0 + 1e-13), "{d} vs {exact}");
        assert_eq!(optimal_delta(1, eps, 1.0).unwrap(), 0.0);
    }

    #[test]
    fn huge_k_and_extreme_epsilon_do_not_break() {
        let d = optimal_delta(1_000_000, 0.001, 10.0).unwrap();
        assert!(d.is_finite() && d > 0.0 && d < 1.0, "{d}");
        for eps in [1e-12, 1e-3, 50.0, 800.0, 1e300] {
            let d = optimal_delta(1000, eps, 1.0).unwrap();
            assert!((0.0..=1.0).contains(&d), "{eps}: {d}");
        }
        assert!(optimal_delta(MAX_STEPS + 1, 0.1, 1.0).is_err());
    }
}
