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
//! Only outcomes with `L > ε_total` contribute, and `L = (2j − k)ε` grows with `j`, so
//! the sum runs over `j ≥ j₀`. It starts at `j_s = max(j₀, mode)`, whose probability
//! `P(j_s)` is evaluated directly in log space with Loader's saddle-point formula (no
//! `C(k, j)`, `e^{kε}` or `(1+e^ε)^k`, no cancellation), and walks outward by the exact
//! ratio `P(j+1)/P(j) = (k − j)/(j + 1) · e^ε`: upward (weights decreasing, excess
//! increasing) and, when `j₀` lies below the mode, downward to `j₀` (weights and excess
//! both decreasing). Terms below `j₀` have loss at most `ε_total` and contribute exactly
//! 0. Each walk stops once the mass it has not visited is provably below `2⁻⁵⁰` of the
//! sum so far: by log-concavity the ratios keep shrinking, so the rest is bounded by a
//! geometric series in the current ratio `r` — upward by `w·min(r/(1−r), a·r/(1−r) +
//! 2ε·r/(1−r)²)` with `a = L_j − ε_total` (as `1 − e^{−x} ≤ x`), downward by
//! `w·excess_j·r/(1−r)` — and that bound is *added*. Nothing else is dropped: there is no
//! floor relative to the mode, and a result far below `f64::MIN_POSITIVE` is still
//! computed in log space (`ln P(j_s) + ln Σ`) and only exponentiated at the end.
//!
//! Error accounting: the log-probability carries its own absolute error bound (see
//! `ln_pmf_pq`: a few ulps of the magnitudes involved); each walk step multiplies a
//! relative error of at most 5u (u = 2⁻⁵³: one division, two products, and the ≤ 1-ulp
//! error of `e^±ε` that recurs at every step) and each sum ≤ 2u per term; the result
//! is multiplied by `1 + 3η` with `η = (6·steps + 2·terms + 8)·u`, covering `(1 + η)/(1 −
//! η)`. The value returned is therefore an upper bound on the exact δ_opt (given the
//! platform's `exp`/`ln` are faithful, as in [`crate::privacy::round`]), and it is
//! within about `10⁻¹²` relative of it for every k accepted. A positive δ_opt below the
//! smallest positive `f64` (2⁻¹⁰⁷⁴) is reported as a value of that size, never as 0: 0
//! is returned only when no outcome has loss above `ε_total`, i.e. `ε_total ≥ kε`.
//!
//! Cost: each evaluation visits about `20·√(k p (1−p))` terms at most (the walks stop
//! about 9 standard deviations past the start) and is capped at 2²⁰ steps per side, so
//! `delta` answers in milliseconds for every accepted k, and the searches
//! (`epsilon`, `max_epsilon_per_step`: at most 64 evaluations each, on a bracket
//! found in closed form) well within a second. k is limited to [`MAX_STEPS`] = 2²⁶; beyond it
//! the functions refuse with a typed error (use advanced composition or zCDP, which
//! are looser but closed-form).
//!
//! Adaptivity: the mechanisms may be chosen adaptively, but k and ε are fixed up front.

use super::{check_epsilon_total, check_steps, largest_satisfying, smallest_satisfying};
use crate::Error;
use crate::audit::binomial::ln_pmf_pq;
use crate::privacy::PrivacyLoss;
use crate::privacy::round::{add_up, div_up, exp_up, ln_up, mul_up, sub_down, sub_up};
use crate::privacy::{check_delta, check_epsilon};

/// The largest k accepted by the exact computation (2²⁶ ≈ 6.7·10⁷): it bounds the
/// cost of one evaluation (see the module docs).
pub const MAX_STEPS: u64 = 1 << 26;

/// Unit roundoff u = 2⁻⁵³.
const U: f64 = f64::EPSILON / 2.0;

/// A walk stops once the mass it has not visited is below this fraction of its sum.
const NEGLIGIBLE: f64 = 1.0 / 1_125_899_906_842_624.0; // 2⁻⁵⁰

/// At most this many steps per walk; past it the geometric bound is added as it is.
const MAX_WALK: u64 = 1 << 20;

fn check_k(k: u64) -> Result<f64, Error> {
    let kf = check_steps(k)?;
    if k > MAX_STEPS {
        return Err(Error::InvalidParameter {
            name: "k",
            value: kf,
            reason: "exact optimal composition supports k <= 2^26; use advanced composition or zCDP",
        });
    }
    Ok(kf)
}

/// Upper bound on δ_opt(ε_total) for validated inputs (k ≤ 2²⁶, ε > 0, ε_total ≥ 0).
fn delta_upper(k: u64, eps: f64, eps_total: f64) -> f64 {
    let kf = k as f64;
    if eps_total >= mul_up(kf, eps) {
        // No outcome has privacy loss above ε_total.
        return 0.0;
    }
    let e_pos = eps.exp();
    let e_neg = (-eps).exp();
    let p = 1.0 / (1.0 + e_neg);
    let q = e_neg / (1.0 + e_neg);
    let mode = (((kf + 1.0) * p).floor() as u64).min(k);
    // L_j > ε_total ⟺ j > (k + ε_total/ε)/2; two below the computed value is certainly
    // at or below the exact threshold (the float error is far below 1 for k ≤ 2²⁶).
    let threshold = (kf + eps_total / eps) / 2.0;
    let j0 = if threshold.is_finite() {
        ((threshold.floor() as u64).saturating_sub(2)).min(k)
    } else {
        k
    };
    // The loss minus ε_total, rounded up (≥ 0 when the term can contribute).
    let gap_up = |j: u64| sub_up(mul_up((2 * j) as f64 - kf, eps), eps_total);
    // (1 − e^{ε_total − L_j})⁺, rounded up.
    let excess = |j: u64| -> f64 {
        let x = sub_down(eps_total, mul_up((2 * j) as f64 - kf, eps));
        if x < 0.0 {
            (-x.exp_m1()).next_up().next_up().min(1.0)
        } else {
            0.0
        }
    };
    // A ratio rounded up past its ≤ 5u computation error (and never 0 when the exact
    // ratio is positive but underflowed).
    let ratio_up = |r: f64| (r * (1.0 + 8.0 * U)).next_up();
    let geometric = |r: f64| {
        if r < 1.0 {
            div_up(r, sub_down(1.0, r))
        } else {
            f64::INFINITY
        }
    };

    // A weight whose relative error is no longer tracked (subnormal) is bounded by the
    // smallest normal number times two.
    let normal_or_min = |w: f64| {
        if w < f64::MIN_POSITIVE {
            2.0 * f64::MIN_POSITIVE
        } else {
            w
        }
    };
    let start = j0.max(mode);
    let (ln_ref, ln_ref_err) = ln_pmf_pq(k, start, p, q);
    // Weights relative to P(start); the sum of weight × excess.
    let mut sum = 0.0f64;
    let mut terms: u64 = 0;
    // Upward from `start`: weights decrease, excess increases.
    let (mut w, mut j, mut steps_up) = (1.0f64, start, 0u64);
    loop {
        sum += w * excess(j);
        terms += 1;
        if j == k {
            break;
        }
        let r = ratio_up(((k - j) as f64 / (j + 1) as f64) * e_pos);
        let g = geometric(r);
        if g.is_finite() {
            // Σ_{n≥1} w rⁿ (a + 2nε) with a = L_j − ε_total, and excess ≤ 1.
            let a = gap_up(j).max(0.0);
            let linear = add_up(
                mul_up(a, g),
                mul_up(mul_up(2.0, eps), mul_up(g, div_up(1.0, sub_down(1.0, r)))),
            );
            let rest = mul_up(normal_or_min(w), g.min(linear));
            if rest <= sum * NEGLIGIBLE || steps_up >= MAX_WALK || w < f64::MIN_POSITIVE {
                sum = add_up(sum, rest);
                break;
            }
        } else if steps_up >= MAX_WALK {
            // Cannot happen past the mode; refuse to claim anything below 1.
            return 1.0;
        }
        w *= ((k - j) as f64 / (j + 1) as f64) * e_pos;
        j += 1;
        steps_up += 1;
    }
    // Downward from the mode to j0 when j0 lies below it: weights and excess decrease.
    let (mut w, mut j, mut steps_down) = (1.0f64, start, 0u64);
    while j > j0 {
        w *= (j as f64 / (k - j + 1) as f64) * e_neg;
        j -= 1;
        steps_down += 1;
        let x = excess(j);
        sum += w * x;
        terms += 1;
        if j == 0 || x == 0.0 {
            break;
        }
        let r = ratio_up((j as f64 / (k - j + 1) as f64) * e_neg);
        let rest = mul_up(mul_up(normal_or_min(w), x), geometric(r));
        if rest <= sum * NEGLIGIBLE || steps_down >= MAX_WALK || w < f64::MIN_POSITIVE {
            sum = add_up(sum, rest);
            break;
        }
    }
    // Products and sums that fell into the subnormal range carry an absolute error of
    // at most half of 2⁻¹⁰⁷⁴ each instead of a relative one.
    sum = add_up(sum, mul_up(terms as f64, 1e-323));
    // Relative error, in units u: ≤ 5u per step of a walk, ≤ 2u per summed term.
    let eta = (6 * steps_up.max(steps_down) + 2 * terms + 8) as f64 * U;
    let ln_factor = ln_up(add_up(1.0, mul_up(3.0, eta)));
    let ln_delta = add_up(add_up(add_up(ln_ref, ln_ref_err), ln_up(sum)), ln_factor);
    exp_up(ln_delta).min(1.0)
}

/// δ_opt(ε_total) for the k-fold composition of ε-DP mechanisms (Kairouz–Oh–Viswanath
/// 2015), as an upper bound that is tight to about 10⁻¹² relative (see the module
/// docs). `epsilon_total ≥ 0` (0 gives the total-variation distance); the result is 0
/// once `ε_total ≥ kε`, and never 0 before.
///
/// ```
/// use dpmech::composition::optimal;
/// // Two 1-DP steps: δ(1) = e(e − 1)/(1 + e)² exactly.
/// let e = std::f64::consts::E;
/// let exact = e * (e - 1.0) / ((1.0 + e) * (1.0 + e));
/// let d = optimal::delta(2, 1.0, 1.0)?;
/// assert!(d >= exact && d < exact * (1.0 + 1e-12));
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`k`) if `k = 0` or `k > MAX_STEPS`; [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
/// [`Error::InvalidEpsilon`] if `epsilon_total` is not finite and ≥ 0.
pub fn delta(k: u64, epsilon: f64, epsilon_total: f64) -> Result<f64, Error> {
    check_k(k)?;
    let e = check_epsilon(epsilon)?;
    let total = check_epsilon_total(epsilon_total)?;
    Ok(delta_upper(k, e, total))
}

/// The guarantee of k runs of one pure ε-DP step (`per_step`) at a target δ, by the
/// optimal composition theorem: `(ε_opt, δ)` with ε_opt = [`epsilon`]`(k, ε, δ)`.
///
/// ```
/// use dpmech::PrivacyLoss;
/// use dpmech::composition::{advanced, optimal, sequential};
/// let step = PrivacyLoss::pure(0.01)?;
/// let opt = optimal(1000, step, 1e-6)?;
/// let adv = advanced(1000, step, 1e-6)?;
/// let seq = sequential(&vec![step; 1000])?;
/// assert!(opt.epsilon() < adv.epsilon() && adv.epsilon() < seq.epsilon());
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// * the variant of an invalid field of `per_step` ([`Error::InvalidEpsilon`],
///   [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`]);
/// * [`Error::IncompatibleLoss`] if `per_step` is not pure DP;
/// * [`Error::InvalidDelta`] if `delta` is not in (0, 1);
/// * those of [`epsilon`] (`k`, and `k·ε` overflowing).
pub fn optimal(k: u64, per_step: PrivacyLoss, delta: f64) -> Result<PrivacyLoss, Error> {
    let PrivacyLoss::Pure { epsilon: e } = super::validate_loss(per_step)? else {
        return Err(Error::IncompatibleLoss {
            reason: "optimal homogeneous composition applies to pure-DP steps only",
        });
    };
    let d = check_delta(delta)?;
    Ok(PrivacyLoss::Approximate {
        epsilon: epsilon(k, e, d)?.max(f64::MIN_POSITIVE),
        delta: d,
    })
}

/// The smallest ε_total (rounded up) such that k ε-DP steps are `(ε_total, δ)`-DP by
/// the optimal composition theorem. Returns 0 when even ε_total = 0 meets δ.
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`k`) if `k = 0` or `k > MAX_STEPS`; [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
/// [`Error::InvalidDelta`] if `delta` is not in (0, 1); [`Error::InvalidParameter`]
/// (`epsilon`) if `k·ε` overflows.
pub fn epsilon(k: u64, epsilon: f64, delta: f64) -> Result<f64, Error> {
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
/// assert!(optimal::delta(100, opt, 1.0)? <= 1e-6);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`k`) if `k = 0` or `k > MAX_STEPS`; [`Error::InvalidEpsilon`] if `epsilon_total` is not finite and positive;
/// [`Error::InvalidDelta`] if `delta` is not in (0, 1); [`Error::InvalidParameter`]
/// (`epsilon_total`) if `ε_total/k` underflows to 0.
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
    // One step is the most permissive case (δ_opt only grows with k), and for k = 1
    // δ_opt(t) = (e^ε − e^t)/(1 + e^ε) ≤ δ ⟺ ε ≤ t + ln(1 + δe^{−t}) − ln(1 − δ):
    // a bracket in closed form, rounded up (then 64 bisection steps at most).
    let one_step = add_up(add_up(target, (d * (-target).exp()).ln_1p()), -(-d).ln_1p());
    let hi = mul_up(one_step, 1.0 + 1e-12).max(lo).min(f64::MAX);
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
        let d = delta(1, eps, t).unwrap();
        assert!(d >= exact && d <= exact * (1.0 + 1e-13), "{d} vs {exact}");
        assert_eq!(delta(1, eps, 1.0).unwrap(), 0.0);
    }

    #[test]
    fn huge_k_and_extreme_epsilon_do_not_break() {
        let d = delta(1_000_000, 0.001, 10.0).unwrap();
        assert!(d.is_finite() && d > 0.0 && d < 1.0, "{d}");
        for eps in [1e-12, 1e-3, 50.0, 800.0, 1e300] {
            let d = delta(1000, eps, 1.0).unwrap();
            assert!((0.0..=1.0).contains(&d), "{eps}: {d}");
        }
        assert!(delta(MAX_STEPS + 1, 0.1, 1.0).is_err());
    }
}
