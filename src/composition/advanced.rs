//! Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20).
//!
//! **Theorem.** For every δ′ ∈ (0, 1), the k-fold adaptive composition of
//! `(ε, δ)`-DP mechanisms is `(ε′, kδ + δ′)`-DP with
//!
//! ```text
//! ε′ = √(2k ln(1/δ′)) · ε + k · ε · (e^ε − 1).
//! ```
//!
//! **Heterogeneous form**: for mechanisms with parameters `(εᵢ, δᵢ)` fixed in advance,
//! `ε′ = √(2 ln(1/δ′) Σεᵢ²) + Σ εᵢ(e^{εᵢ} − 1)`, `δ_total = Σδᵢ + δ′`. This is the same
//! proof as the homogeneous theorem (the i-th privacy-loss increment has conditional
//! mean ≤ εᵢ(e^{εᵢ} − 1) and lies in an interval of length 2εᵢ, so Azuma–Hoeffding
//! bounds the deviation by `√(2 ln(1/δ′) Σεᵢ²)` except with probability δ′); it is the
//! fixed-parameter baseline of Rogers, Roth, Ullman & Vadhan (2016). With all εᵢ equal
//! it reduces to the homogeneous formula.
//!
//! Adaptivity: the *mechanisms* may be chosen adaptively, but k and the εᵢ must be
//! fixed before the first release. Choosing εᵢ adaptively needs a privacy filter
//! (Rogers, Roth, Ullman & Vadhan 2016); [`crate::Accountant`] therefore offers this
//! rule only as a plan declared up front ([`super::Plan`]).
//!
//! Beware the shortcut of keeping only the first term: with k = 10 000, δ′ = e^−32 and
//! per-step ε = 1/801 the first term alone is 800/801 < 1, but the second term adds
//! ≈ 0.0156, so the theorem gives ε′ ≈ 1.0143, not ≤ 1. Everything here is computed,
//! never approximated.

use super::{check_epsilon_total, check_steps, largest_satisfying, validate_loss};
use crate::Error;
use crate::privacy::round::{
    add_up, div_down, exp_m1_up, exp_up, ln_down, mul_down, mul_up, sqrt_up, sub_down,
};
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon};

/// An upper bound on `ln(1/δ)` for δ ∈ (0, 1).
fn ln_inv_up(delta: f64) -> f64 {
    -ln_down(delta)
}

/// Unchecked homogeneous ε′, rounded up (may be +∞ on overflow).
fn epsilon_prime(kf: f64, epsilon: f64, ln_inv: f64) -> f64 {
    let first = mul_up(sqrt_up(mul_up(2.0 * kf, ln_inv)), epsilon);
    let second = mul_up(mul_up(kf, epsilon), exp_m1_up(epsilon));
    add_up(first, second)
}

/// ε′ of the k-fold composition of ε-DP mechanisms with slack δ′, rounded up:
/// `√(2k ln(1/δ′))·ε + k·ε·(e^ε − 1)`.
///
/// ```
/// use dpmech::composition::advanced;
/// let eps = advanced::epsilon(10_000, 1.0 / 801.0, (-32.0f64).exp())?;
/// assert!(eps > 1.0); // not ≤ 1, whatever the textbook shortcut says
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`k`) if `k = 0`; [`Error::InvalidEpsilon`] if `epsilon`
/// is not finite and positive or ε′ overflows to +∞; [`Error::InvalidDelta`] if
/// `delta_slack` is not in (0, 1).
pub fn epsilon(k: u64, epsilon: f64, delta_slack: f64) -> Result<f64, Error> {
    let kf = check_steps(k)?;
    let e = check_epsilon(epsilon)?;
    let d = check_delta(delta_slack)?;
    check_epsilon(epsilon_prime(kf, e, ln_inv_up(d)))
}

/// The k-fold composition of one `Pure` or `Approximate` per-step guarantee with slack
/// δ′: `Approximate { ε′, kδ + δ′ }` (rounded up).
///
/// # Errors
///
/// * [`Error::InvalidParameter`] (`k`) if `k = 0`;
/// * the variant of an invalid field of `per_step` ([`Error::InvalidEpsilon`],
///   [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`]);
/// * [`Error::IncompatibleLoss`] if `per_step` is zCDP or random DP;
/// * [`Error::InvalidDelta`] if `delta_slack` is not in (0, 1) or `kδ + δ′ ≥ 1`;
/// * [`Error::InvalidEpsilon`] if ε′ overflows to +∞.
pub fn advanced(k: u64, per_step: PrivacyLoss, delta_slack: f64) -> Result<PrivacyLoss, Error> {
    let kf = check_steps(k)?;
    let (e, d) = match validate_loss(per_step)? {
        PrivacyLoss::Pure { epsilon } => (epsilon, 0.0),
        PrivacyLoss::Approximate { epsilon, delta } => (epsilon, delta),
        _ => {
            return Err(Error::IncompatibleLoss {
                reason: "advanced composition applies to pure or approximate DP only",
            });
        }
    };
    let slack = check_delta(delta_slack)?;
    let epsilon = check_epsilon(epsilon_prime(kf, e, ln_inv_up(slack)))?;
    let delta = check_delta(add_up(mul_up(kf, d), slack))?;
    Ok(PrivacyLoss::Approximate { epsilon, delta })
}

/// Heterogeneous advanced composition of guarantees fixed in advance, rounded up:
/// `ε′ = √(2 ln(1/δ′) Σεᵢ²) + Σεᵢ(e^{εᵢ} − 1)`, `δ = Σδᵢ + δ′`.
///
/// ```
/// use dpmech::PrivacyLoss;
/// use dpmech::composition::advanced::{self, advanced};
/// let step = PrivacyLoss::pure(0.01)?;
/// let het = advanced::heterogeneous(&vec![step; 100], 1e-6)?;
/// let hom = advanced(100, step, 1e-6)?;
/// assert!((het.epsilon().unwrap() - hom.epsilon().unwrap()).abs() < 1e-12);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// * [`Error::EmptyInput`] for an empty list;
/// * [`Error::InvalidDelta`] if `delta_slack` is not in (0, 1) or `Σδᵢ + δ′ ≥ 1`;
/// * the variant of an invalid field of any loss ([`Error::InvalidEpsilon`],
///   [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`]);
/// * [`Error::IncompatibleLoss`] if a loss is zCDP or random DP;
/// * [`Error::InvalidEpsilon`] if ε′ overflows to +∞.
pub fn heterogeneous(losses: &[PrivacyLoss], delta_slack: f64) -> Result<PrivacyLoss, Error> {
    if losses.is_empty() {
        return Err(Error::EmptyInput { what: "losses" });
    }
    let slack = check_delta(delta_slack)?;
    let (mut sum_sq, mut sum_lin, mut sum_delta) = (0.0, 0.0, 0.0);
    for &loss in losses {
        let (e, d) = match validate_loss(loss)? {
            PrivacyLoss::Pure { epsilon } => (epsilon, 0.0),
            PrivacyLoss::Approximate { epsilon, delta } => (epsilon, delta),
            _ => {
                return Err(Error::IncompatibleLoss {
                    reason: "advanced composition applies to pure or approximate DP only",
                });
            }
        };
        sum_sq = add_up(sum_sq, mul_up(e, e));
        sum_lin = add_up(sum_lin, mul_up(e, exp_m1_up(e)));
        sum_delta = add_up(sum_delta, d);
    }
    let first = sqrt_up(mul_up(mul_up(2.0, ln_inv_up(slack)), sum_sq));
    let epsilon = check_epsilon(add_up(first, sum_lin))?;
    let delta = check_delta(add_up(sum_delta, slack))?;
    Ok(PrivacyLoss::Approximate { epsilon, delta })
}

/// The largest per-step ε (rounded down) such that k ε-DP steps compose to
/// `ε′ ≤ epsilon_total` under advanced composition with slack `delta_slack`.
///
/// Found by bisection on the computed (rounded-up) ε′, which is increasing in ε; the
/// returned ε was checked to satisfy the bound. For small k the plain sequential
/// allowance `ε_total / k` is larger (and needs no δ): compare with
/// [`super::sequential::max_epsilon_per_step`].
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`k`) if `k = 0`; [`Error::InvalidEpsilon`] if
/// `epsilon_total` is not finite and positive; [`Error::InvalidDelta`] if `delta_slack`
/// is not in (0, 1); [`Error::InvalidParameter`] (`epsilon_total`) if no positive
/// per-step ε fits the target.
pub fn max_epsilon_per_step(k: u64, epsilon_total: f64, delta_slack: f64) -> Result<f64, Error> {
    let kf = check_steps(k)?;
    let target = check_epsilon(epsilon_total)?;
    let ln_inv = ln_inv_up(check_delta(delta_slack)?);
    let fits = |e: f64| epsilon_prime(kf, e, ln_inv) <= target;
    // Start from ε = target and double until the bound fails (it must: ε′ grows
    // without limit in ε).
    let mut hi = target;
    while fits(hi) && hi < f64::MAX / 4.0 {
        hi *= 2.0;
    }
    let e = largest_satisfying(0.0, hi, fits);
    if e > 0.0 && fits(e) {
        Ok(e)
    } else {
        Err(Error::InvalidParameter {
            name: "epsilon_total",
            value: target,
            reason: "no positive per-step epsilon fits this target under advanced composition",
        })
    }
}

/// The smallest slack δ′ (rounded up) for which k ε-DP steps compose to
/// `epsilon_total` under advanced composition: solving the theorem for δ′,
/// `δ′ = exp(−((ε_total − kε(e^ε − 1))/ε)² / (2k))`.
///
/// When `epsilon_total ≤ kε(e^ε − 1)` no δ′ < 1 works.
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`k`) if `k = 0`; [`Error::InvalidEpsilon`] if `epsilon`
/// is not finite and positive, or `epsilon_total` not finite and ≥ 0;
/// [`Error::InvalidParameter`] (`epsilon_total`) if `epsilon_total` is at or below
/// `kε(e^ε − 1)`, or is too small for any δ′ < 1.
pub fn delta_slack_for(k: u64, epsilon: f64, epsilon_total: f64) -> Result<f64, Error> {
    let kf = check_steps(k)?;
    let e = check_epsilon(epsilon)?;
    let total = check_epsilon_total(epsilon_total)?;
    let drift = mul_up(mul_up(kf, e), exp_m1_up(e));
    let margin = sub_down(total, drift);
    if margin.is_nan() || margin <= 0.0 {
        return Err(Error::InvalidParameter {
            name: "epsilon_total",
            value: total,
            reason: "at or below k*eps*(e^eps - 1): advanced composition gives no bound",
        });
    }
    let t = div_down(margin, e);
    let exponent = div_down(mul_down(t, t), 2.0 * kf);
    let delta = exp_up(-exponent);
    if delta < 1.0 {
        Ok(delta)
    } else {
        Err(Error::InvalidParameter {
            name: "epsilon_total",
            value: total,
            reason: "too small: advanced composition gives no delta below 1",
        })
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
mod tests {
    use super::*;

    #[test]
    fn textbook_example_is_above_one() {
        let eps = epsilon(10_000, 1.0 / 801.0, (-32.0f64).exp()).unwrap();
        // 800/801 + 10000/801·(e^(1/801) − 1) = 0.998752 + 0.015591
        assert!((eps - 1.014343).abs() < 1e-5, "{eps}");
        let best = max_epsilon_per_step(10_000, 1.0, (-32.0f64).exp()).unwrap();
        assert!(best < 1.0 / 801.0);
        assert!(epsilon(10_000, best, (-32.0f64).exp()).unwrap() <= 1.0);
        assert!(epsilon(10_000, best.next_up().next_up(), (-32.0f64).exp()).unwrap() > 1.0);
    }

    #[test]
    fn heterogeneous_matches_homogeneous_and_orders_correctly() {
        let eps = [0.01, 0.02, 0.05, 0.1];
        let losses: Vec<_> = eps.iter().map(|&e| PrivacyLoss::pure(e).unwrap()).collect();
        let het = heterogeneous(&losses, 1e-6).unwrap();
        // Hand evaluation: √(2 ln 1e6 · Σε²) + Σε(e^ε − 1).
        let sq: f64 = eps.iter().map(|e| e * e).sum();
        let lin: f64 = eps.iter().map(|e: &f64| e * e.exp_m1()).sum();
        let expected = (2.0 * 1e6f64.ln() * sq).sqrt() + lin;
        let got = het.epsilon().unwrap();
        assert!(
            got >= expected && got <= expected * (1.0 + 1e-14),
            "{got} vs {expected}"
        );
        // Bounded by the homogeneous bound at the largest ε.
        assert!(got <= epsilon(4, 0.1, 1e-6).unwrap());
        let with_delta = heterogeneous(
            &[
                PrivacyLoss::approximate(0.1, 1e-7).unwrap(),
                PrivacyLoss::pure(0.1).unwrap(),
            ],
            1e-6,
        )
        .unwrap();
        assert!(with_delta.delta().unwrap() >= 1.1e-6);
        assert!(matches!(
            heterogeneous(&[PrivacyLoss::zcdp(0.1).unwrap()], 1e-6),
            Err(Error::IncompatibleLoss { .. })
        ));
    }

    #[test]
    fn delta_slack_inverts_epsilon() {
        let d = delta_slack_for(100, 0.05, 2.0).unwrap();
        let e = epsilon(100, 0.05, d).unwrap();
        assert!((2.0 - 1e-9..=2.0 + 1e-9).contains(&e), "{e}");
        assert!(delta_slack_for(100, 0.05, 0.1).is_err());
    }
}
