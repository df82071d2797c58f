//! Zero-concentrated differential privacy (Bun & Steinke 2016) and its conversions.
//!
//! * **pure → zCDP**: an ε-DP mechanism is `ε²/2`-zCDP (Bun & Steinke 2016, Prop. 1.4).
//! * **composition**: ρᵢ-zCDP mechanisms compose, adaptively, to `Σρᵢ`-zCDP
//!   (Bun & Steinke 2016, Lemma 2.3).
//! * **zCDP → (ε, δ), simple**: ρ-zCDP implies `(ρ + 2√(ρ ln(1/δ)), δ)`-DP for every
//!   δ > 0 (Bun & Steinke 2016, Prop. 1.3).
//! * **zCDP → (ε, δ), tight**: ρ-zCDP implies `(ε, δ)`-DP with
//!   `δ = inf_{α>1} exp((α−1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α`, equivalently
//!   `ε(δ) = inf_{α>1} ρα + (ln(1/δ) + (α−1) ln(1 − 1/α) − ln α)/(α − 1)`
//!   (Canonne, Kamath & Steinke 2020, Prop. 12 / Cor. 13; Asoodeh et al. 2020). It is
//!   never worse than the simple one: at `α = 1 + √(ln(1/δ)/ρ)` the extra terms are
//!   negative and the rest equals the simple bound.
//! * **approximate zCDP → (ε, δ)**: δ-approximate ρ-zCDP implies
//!   `(ρ + 2√(ρ ln(1/δ′)), δ + δ′)`-DP for every δ′ > 0 ([`approximate_zcdp_to_dp`]).
//!
//! Every α > 1 gives a valid bound, so the numerical minimisation over α (a
//! quarter-octave grid around the simple bound's optimum refined by golden-section
//! search) can only lose tightness, never validity; the value at the chosen α is
//! evaluated with every operation rounded toward the larger (safe) result.
//! zCDP is stated here for whichever neighbouring relation the mechanism's ρ was.

use super::{check_epsilon_total, check_steps, largest_satisfying};
use crate::Error;
use crate::privacy::round::{
    add_down, add_up, div_down, div_up, exp_up, ln_1p_down, ln_down, mul_up, sqrt_down, sqrt_up, sub_up,
};
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon, check_rho};

/// `ε²/2` rounded up, for an already validated ε.
pub(crate) fn pure_to_zcdp_unchecked(epsilon: f64) -> f64 {
    let sq = mul_up(epsilon, epsilon);
    // Halving is exact unless it underflows into the subnormals.
    if sq >= 2.0 * f64::MIN_POSITIVE {
        sq / 2.0
    } else {
        (sq / 2.0).next_up()
    }
}

/// ρ = ε²/2 (rounded up): the zCDP guarantee of an ε-DP mechanism.
///
/// ```
/// assert_eq!(dpmech::composition::zcdp::pure_to_zcdp(1.0)?, 0.5);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
/// [`Error::InvalidRho`] if `ε²/2` overflows to +∞.
pub fn pure_to_zcdp(epsilon: f64) -> Result<f64, Error> {
    check_rho(pure_to_zcdp_unchecked(check_epsilon(epsilon)?))
}

/// Σρᵢ (rounded up): the zCDP composition of ρᵢ-zCDP mechanisms, valid adaptively.
///
/// # Errors
///
/// [`Error::EmptyInput`] for an empty list; [`Error::InvalidRho`] if a ρ is not finite
/// and positive, or if the sum overflows to +∞.
pub fn compose(rhos: &[f64]) -> Result<f64, Error> {
    if rhos.is_empty() {
        return Err(Error::EmptyInput { what: "rhos" });
    }
    let mut total = 0.0;
    for &r in rhos {
        total = add_up(total, check_rho(r)?);
    }
    check_rho(total)
}

/// An upper bound on `ln(1/δ)`.
fn ln_inv_up(delta: f64) -> f64 {
    -ln_down(delta)
}

/// `ρ + 2√(ρ ln(1/δ))` (rounded up): the simple zCDP → (ε, δ) conversion.
///
/// ```
/// let eps = dpmech::composition::zcdp::epsilon_simple(0.5, 1e-5)?;
/// assert!((eps - (0.5 + 2.0 * (0.5 * (1e5f64).ln()).sqrt())).abs() < 1e-12);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidRho`] if `rho` is not finite and positive; [`Error::InvalidDelta`] if `delta` is not in (0, 1);
/// [`Error::InvalidParameter`] (`rho`) if the converted ε is not finite.
pub fn epsilon_simple(rho: f64, delta: f64) -> Result<f64, Error> {
    let r = check_rho(rho)?;
    let l = ln_inv_up(check_delta(delta)?);
    check_epsilon(add_up(r, mul_up(2.0, sqrt_up(mul_up(r, l))))).map_err(|_| too_large(rho))
}

/// δ-approximate ρ-zCDP → `(ρ + 2√(ρ ln(1/δ′)), δ + δ′)`-DP, both rounded up.
///
/// Why: the outputs on neighbours are mixtures `(1 − δ)P + δP″` and `(1 − δ)Q + δQ″`
/// where `P`, `Q` (the outputs conditioned on the events of probability ≥ 1 − δ of
/// Bun & Steinke 2016, Def. 8.1) satisfy the Rényi bounds of ρ-zCDP, hence
/// `P(S) ≤ e^ε Q(S) + δ′` by Prop. 1.3; then
/// `Pr[M(x) ∈ S] ≤ (1 − δ)(e^ε Q(S) + δ′) + δ ≤ e^ε Pr[M(x′) ∈ S] + δ + δ′`.
/// δ = 0 (plain ρ-zCDP written as a pair) is accepted: the result is the simple
/// zCDP conversion [`epsilon_simple`] at δ′.
///
/// ```
/// use dpmech::PrivacyLoss;
/// use dpmech::composition::zcdp::approximate_zcdp_to_dp;
/// let dp = approximate_zcdp_to_dp(0.5, 1e-6, 1e-6)?;
/// let PrivacyLoss::Approximate { epsilon, delta } = dp else { unreachable!() };
/// assert!(epsilon >= 0.5 + 2.0 * (0.5 * 1e6f64.ln()).sqrt() && delta >= 2e-6);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidRho`] if `rho` is not finite and positive; [`Error::InvalidDelta`] if
/// `delta` is not in [0, 1), `delta_prime` not in (0, 1), or `δ + δ′ ≥ 1`;
/// [`Error::InvalidParameter`] (`rho`) if the converted ε is not finite.
pub fn approximate_zcdp_to_dp(rho: f64, delta: f64, delta_prime: f64) -> Result<PrivacyLoss, Error> {
    let delta = if delta == 0.0 { 0.0 } else { check_delta(delta)? };
    let epsilon = epsilon_simple(rho, delta_prime)?;
    Ok(PrivacyLoss::Approximate {
        epsilon,
        delta: check_delta(add_up(delta, delta_prime))?,
    })
}

fn too_large(rho: f64) -> Error {
    Error::InvalidParameter {
        name: "rho",
        value: rho,
        reason: "the converted epsilon is not finite",
    }
}

/// Upper bound on the CKS objective at `t = α − 1 > 0`:
/// `ρ + ρt + L/t + ln(t/(1+t)) − ln(1+t)/t`.
fn eps_objective(rho: f64, l: f64, t: f64) -> f64 {
    let a = add_up(rho, mul_up(rho, t));
    let b = div_up(l, t);
    let c = -ln_1p_down(div_down(1.0, t));
    let d = -div_down(ln_1p_down(t), t);
    let v = add_up(add_up(add_up(a, b), c), d);
    if v.is_nan() { f64::INFINITY } else { v }
}

/// Upper bound on `ln δ` of the CKS bound at `t = α − 1 > 0`:
/// `t((1+t)ρ − ε) + (1+t) ln(t/(1+t)) − ln t`.
fn log_delta_objective(rho: f64, eps: f64, t: f64) -> f64 {
    let first = mul_up(t, sub_up(mul_up(add_up(1.0, t), rho), eps));
    let q = -ln_1p_down(div_down(1.0, t));
    let second = mul_up(add_down(1.0, t), q);
    let third = -ln_down(t);
    let v = add_up(add_up(first, second), third);
    if v.is_nan() { f64::INFINITY } else { v }
}

/// Minimises `f` over `t > 0` near `t0`: a quarter-octave grid over 2^±20 · t0, then
/// golden-section search in ln t around the best grid point. Returns the smallest
/// value of `f` evaluated (each evaluation is itself a valid bound).
fn minimise(t0: f64, f: impl Fn(f64) -> f64) -> f64 {
    let t0 = t0.clamp(1e-200, 1e200);
    let mut best_u = t0.ln();
    let mut best = f(t0);
    for s in -80..=80 {
        let u = t0.ln() + f64::from(s) * core::f64::consts::LN_2 / 4.0;
        let v = f(u.exp());
        if v < best {
            best = v;
            best_u = u;
        }
    }
    let inv_phi = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (
        best_u - core::f64::consts::LN_2 / 4.0,
        best_u + core::f64::consts::LN_2 / 4.0,
    );
    let mut c = b - inv_phi * (b - a);
    let mut d = a + inv_phi * (b - a);
    let (mut fc, mut fd) = (f(c.exp()), f(d.exp()));
    for _ in 0..80 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - inv_phi * (b - a);
            fc = f(c.exp());
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + inv_phi * (b - a);
            fd = f(d.exp());
        }
    }
    best.min(fc).min(fd)
}

/// The tight (Canonne–Kamath–Steinke 2020) ε such that ρ-zCDP implies `(ε, δ)`-DP,
/// rounded up: `inf_{α>1} ρα + (ln(1/δ) + (α−1) ln(1−1/α) − ln α)/(α−1)`.
/// Returns 0 when the infimum is negative (then `(0, δ)`-DP already holds, which can
/// happen for large δ).
///
/// ```
/// use dpmech::composition::zcdp::{epsilon_simple, epsilon_tight};
/// let (tight, simple) = (epsilon_tight(0.5, 1e-5)?, epsilon_simple(0.5, 1e-5)?);
/// assert!(tight < simple);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidRho`] if `rho` is not finite and positive; [`Error::InvalidDelta`] if `delta` is not in (0, 1);
/// [`Error::InvalidParameter`] (`rho`) if the converted ε is not finite.
pub fn epsilon_tight(rho: f64, delta: f64) -> Result<f64, Error> {
    let r = check_rho(rho)?;
    let l = ln_inv_up(check_delta(delta)?);
    let t_simple = (l / r).sqrt();
    let e = minimise(t_simple, |t| eps_objective(r, l, t)).min(eps_objective(r, l, t_simple));
    if e.is_finite() {
        // A negative infimum means (0, δ)-DP already holds.
        Ok(e.max(0.0))
    } else {
        Err(too_large(rho))
    }
}

/// The tight (CKS 2020) δ such that ρ-zCDP implies `(ε, δ)`-DP, rounded up and capped
/// at 1: `inf_{α>1} exp((α−1)(αρ − ε)) / (α−1) · (1 − 1/α)^α`. Accepts ε ≥ 0.
///
/// # Errors
///
/// [`Error::InvalidRho`] if `rho` is not finite and positive;
/// [`Error::InvalidEpsilon`] if `epsilon` is not finite and ≥ 0.
pub fn delta_tight(rho: f64, epsilon: f64) -> Result<f64, Error> {
    let r = check_rho(rho)?;
    let e = check_epsilon_total(epsilon)?;
    let t0 = if e > r { (e - r) / (2.0 * r) } else { 1.0 };
    let log_d = minimise(t0, |t| log_delta_objective(r, e, t));
    Ok(exp_up(log_d).min(1.0))
}

/// The simple δ such that ρ-zCDP implies `(ε, δ)`-DP (rounded up, capped at 1):
/// `exp(−(ε − ρ)²/(4ρ))` for ε > ρ, else 1 (solving `ε = ρ + 2√(ρ ln(1/δ))` for δ).
///
/// # Errors
///
/// [`Error::InvalidRho`] if `rho` is not finite and positive;
/// [`Error::InvalidEpsilon`] if `epsilon` is not finite and ≥ 0.
pub fn delta_simple(rho: f64, epsilon: f64) -> Result<f64, Error> {
    let r = check_rho(rho)?;
    let e = check_epsilon_total(epsilon)?;
    let m = crate::privacy::round::sub_down(e, r);
    if m.is_nan() || m <= 0.0 {
        return Ok(1.0);
    }
    let exponent = div_down(crate::privacy::round::mul_down(m, m), mul_up(4.0, r));
    Ok(exp_up(-exponent).min(1.0))
}

/// The largest total ρ (rounded down) such that ρ-zCDP implies `(ε, δ)`-DP by the tight
/// conversion. Bisection on [`epsilon_tight`], which is increasing in ρ.
///
/// ```
/// use dpmech::composition::zcdp::{epsilon_tight, max_rho};
/// let rho = max_rho(1.0, 1e-6)?;
/// assert!(epsilon_tight(rho, 1e-6)? <= 1.0);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive; [`Error::InvalidDelta`] if `delta` is not in (0, 1);
/// [`Error::InvalidParameter`] (`epsilon`) if no positive ρ converts to `(ε, δ)`.
pub fn max_rho(epsilon: f64, delta: f64) -> Result<f64, Error> {
    let target = check_epsilon(epsilon)?;
    let d = check_delta(delta)?;
    let fits = |r: f64| r > 0.0 && epsilon_tight(r, d).is_ok_and(|e| e <= target);
    let r = largest_satisfying(0.0, target, fits);
    if fits(r) {
        Ok(r)
    } else {
        Err(Error::InvalidParameter {
            name: "epsilon",
            value: target,
            reason: "no positive rho converts to this (epsilon, delta)",
        })
    }
}

/// Lowers `x` until `ok(x)`: a few ulps first, then by halving (bounded: at most 80
/// tries); returns 0 when nothing positive satisfies `ok`.
fn step_down_until(mut x: f64, ok: impl Fn(f64) -> bool) -> f64 {
    for i in 0..80 {
        if x > 0.0 && ok(x) {
            return x;
        }
        x = if i < 8 { x.next_down() } else { x / 2.0 };
    }
    0.0
}

fn underflow() -> Error {
    Error::InvalidParameter {
        name: "k",
        value: 0.0,
        reason: "the per-step allowance underflows to 0",
    }
}

/// The largest per-step ρ (rounded down) for k steps within `(ε, δ)`: `max_rho / k`.
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`k`) if `k = 0` or the per-step ρ underflows to 0; the
/// errors of [`max_rho`] for `(epsilon, delta)`.
pub fn max_rho_per_step(k: u64, epsilon: f64, delta: f64) -> Result<f64, Error> {
    let kf = check_steps(k)?;
    let total = max_rho(epsilon, delta)?;
    let per = step_down_until(div_down(total, kf), |p| mul_up(kf, p) <= total);
    check_rho(per).map_err(|_| underflow())
}

/// The largest per-step ε (rounded down) such that k ε-DP steps, composed as zCDP
/// (each ε²/2) and converted with the tight bound, stay within `(ε_total, δ)`:
/// `√(2·max_rho/k)`, checked back through the rounded-up forward computation.
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`k`) if `k = 0` or the per-step ε underflows to 0; the
/// errors of [`max_rho`] for `(epsilon_total, delta)`.
pub fn max_epsilon_per_step(k: u64, epsilon_total: f64, delta: f64) -> Result<f64, Error> {
    let kf = check_steps(k)?;
    let total = max_rho(epsilon_total, delta)?;
    let e = step_down_until(sqrt_down(div_down(mul_up(2.0, total), kf)), |e| {
        mul_up(kf, pure_to_zcdp_unchecked(e)) <= total
    });
    check_epsilon(e).map_err(|_| underflow())
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
mod tests {
    use super::*;

    #[test]
    fn tight_never_exceeds_simple_and_round_trips() {
        for rho in [1e-6, 0.01, 0.5, 10.0, 1e4] {
            for delta in [1e-12, 1e-5, 0.1] {
                let t = epsilon_tight(rho, delta).unwrap();
                let s = epsilon_simple(rho, delta).unwrap();
                assert!(t <= s, "rho {rho} delta {delta}: {t} > {s}");
                // δ at the tight ε is at most δ (up to the search's resolution).
                let d = delta_tight(rho, t).unwrap();
                assert!(d <= delta * (1.0 + 1e-6), "rho {rho}: {d} vs {delta}");
                assert!(delta_simple(rho, s).unwrap() <= delta * (1.0 + 1e-9));
            }
        }
    }

    #[test]
    fn approximate_zcdp_converts_with_delta_added() {
        let PrivacyLoss::Approximate { epsilon, delta } = approximate_zcdp_to_dp(0.5, 1e-6, 1e-6).unwrap()
        else {
            panic!("expected (epsilon, delta)");
        };
        assert_eq!(epsilon, epsilon_simple(0.5, 1e-6).unwrap());
        assert!((2e-6..=2e-6 * (1.0 + 1e-15)).contains(&delta));
        assert!(matches!(
            approximate_zcdp_to_dp(0.5, 0.6, 0.5),
            Err(Error::InvalidDelta { .. })
        ));
        assert!(matches!(
            approximate_zcdp_to_dp(0.5, 1e-6, 0.0),
            Err(Error::InvalidDelta { .. })
        ));
        assert!(matches!(
            approximate_zcdp_to_dp(0.0, 1e-6, 1e-6),
            Err(Error::InvalidRho { .. })
        ));
        assert!(approximate_zcdp_to_dp(0.5, 0.0, 1e-6).is_ok());
    }

    #[test]
    fn per_step_allowances_fit() {
        let e = max_epsilon_per_step(100, 1.0, 1e-6).unwrap();
        let rho = mul_up(100.0, pure_to_zcdp(e).unwrap());
        assert!(epsilon_tight(rho, 1e-6).unwrap() <= 1.0);
        assert!(max_rho_per_step(0, 1.0, 1e-6).is_err());
    }
}
