//! Sequential (basic) composition.
//!
//! **Theorem** (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, Thm 3.16):
//! running mechanisms `M₁ … M_k` on the same data, where `Mᵢ` is
//! `(εᵢ, δᵢ)`-DP, is `(Σεᵢ, Σδᵢ)`-DP. It holds for **adaptive** composition — each
//! mechanism and even each `εᵢ` may be chosen after seeing the previous outputs, as
//! long as the running total is checked against a fixed budget before each release
//! (this is what [`crate::Accountant`] does). zCDP composes the same way: `Σρᵢ`
//! (Bun & Steinke 2016, Lemma 2.3), and δ-approximate zCDP as `(Σρᵢ, Σδᵢ)` (Lemma 8.3,
//! for mechanisms chosen adaptively but their ρ and δ fixed up front). Valid for either
//! neighbouring relation, as long as
//! every mechanism's guarantee is stated for the same relation.

use super::{check_steps, validate_loss};
use crate::Error;
use crate::privacy::round::{add_up, div_down, mul_up};
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon, check_rho};

/// The sequential composition of a list of guarantees, rounded up.
///
/// * all [`PrivacyLoss::Pure`] → `Pure { Σε }`;
/// * pure and [`PrivacyLoss::Approximate`] → `Approximate { Σε, Σδ }` (pure counts δ = 0);
/// * [`PrivacyLoss::Zcdp`] with pure → `Zcdp { Σρ }`, each pure ε counted as
///   `ρ = ε²/2` (ε-DP ⇒ ε²/2-zCDP, Bun & Steinke 2016, Prop. 1.4);
/// * [`PrivacyLoss::ApproximateZcdp`] with zCDP, pure or approximate zCDP →
///   `ApproximateZcdp { Σρ, Σδ }` (Bun & Steinke 2016, Lemma 8.3; pure counts ρ = ε²/2,
///   zCDP δ = 0) when some part has δ > 0, else `Zcdp { Σρ }`;
/// * zCDP or approximate zCDP with approximate DP → [`Error::IncompatibleLoss`] (convert
///   explicitly with [`super::zcdp`] first: the split of δ is the caller's choice);
/// * [`PrivacyLoss::RandomDp`] with random DP or pure → `RandomDp { Σε, Σγ }` by the
///   union bound over the γ-events, valid for a **fixed, non-adaptive** list of
///   mechanisms only (pure ε-DP is (ε, 0)-random DP); random DP with approximate DP,
///   zCDP or approximate zCDP → [`Error::IncompatibleLoss`].
///
/// ```
/// use dpmech::PrivacyLoss;
/// use dpmech::composition::sequential::sequential;
/// let total = sequential(&[
///     PrivacyLoss::pure(0.5)?,
///     PrivacyLoss::approximate(0.25, 1e-6)?,
/// ])?;
/// assert_eq!(total, PrivacyLoss::Approximate { epsilon: 0.75, delta: 1e-6 });
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// * [`Error::EmptyInput`] for an empty list;
/// * [`Error::InvalidEpsilon`], [`Error::InvalidDelta`], [`Error::InvalidRho`] or
///   [`Error::InvalidParameter`] (`gamma`) for an invalid field in any loss;
/// * [`Error::IncompatibleLoss`] for zCDP or approximate zCDP with approximate DP, or
///   random DP with approximate DP, zCDP or approximate zCDP;
/// * a total that is no longer a guarantee: Σε = +∞ → [`Error::InvalidEpsilon`],
///   Σρ = +∞ → [`Error::InvalidRho`], Σδ ≥ 1 (of approximate DP or of approximate
///   zCDP) → [`Error::InvalidDelta`], Σγ ≥ 1 →
///   [`Error::InvalidParameter`] (`gamma`).
pub fn sequential(losses: &[PrivacyLoss]) -> Result<PrivacyLoss, Error> {
    if losses.is_empty() {
        return Err(Error::EmptyInput { what: "losses" });
    }
    let (mut eps, mut delta, mut rho, mut gamma) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    // The δ of approximate zCDP, kept apart from the (ε, δ) one.
    let mut zcdp_delta = 0.0f64;
    let (mut any_approx, mut any_zcdp, mut any_random) = (false, false, false);
    for &loss in losses {
        match validate_loss(loss)? {
            PrivacyLoss::Pure { epsilon } => {
                eps = add_up(eps, epsilon);
                rho = add_up(rho, super::zcdp::pure_to_zcdp_unchecked(epsilon));
            }
            PrivacyLoss::Approximate { epsilon, delta: d } => {
                any_approx = true;
                eps = add_up(eps, epsilon);
                delta = add_up(delta, d);
            }
            PrivacyLoss::Zcdp { rho: r } => {
                any_zcdp = true;
                rho = add_up(rho, r);
            }
            PrivacyLoss::ApproximateZcdp { rho: r, delta: d } => {
                any_zcdp = true;
                rho = add_up(rho, r);
                zcdp_delta = add_up(zcdp_delta, d);
            }
            PrivacyLoss::RandomDp { epsilon, gamma: g } => {
                any_random = true;
                eps = add_up(eps, epsilon);
                gamma = add_up(gamma, g);
            }
        }
    }
    if any_random && (any_approx || any_zcdp) {
        return Err(Error::IncompatibleLoss {
            reason: "random DP composes only with pure DP and random DP",
        });
    }
    if any_zcdp && any_approx {
        return Err(Error::IncompatibleLoss {
            reason: "zCDP and approximate DP do not compose directly: convert the zCDP part to (epsilon, delta) first",
        });
    }
    if any_zcdp {
        let rho = check_rho(rho)?;
        if zcdp_delta > 0.0 {
            return Ok(PrivacyLoss::ApproximateZcdp {
                rho,
                delta: check_delta(zcdp_delta)?,
            });
        }
        return Ok(PrivacyLoss::Zcdp { rho });
    }
    let epsilon = check_epsilon(eps)?;
    if any_random {
        return Ok(PrivacyLoss::RandomDp {
            epsilon,
            gamma: super::check_gamma(gamma)?,
        });
    }
    if any_approx {
        return Ok(PrivacyLoss::Approximate {
            epsilon,
            delta: check_delta(delta)?,
        });
    }
    Ok(PrivacyLoss::Pure { epsilon })
}

/// Σεᵢ of pure ε-DP mechanisms, rounded up (exact when representable).
///
/// ```
/// assert_eq!(dpmech::composition::sequential::epsilon_sum(&[0.5, 0.25])?, 0.75);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::EmptyInput`] for an empty list; [`Error::InvalidEpsilon`] if an ε is not
/// finite and positive, or if the sum overflows to +∞.
pub fn epsilon_sum(epsilons: &[f64]) -> Result<f64, Error> {
    if epsilons.is_empty() {
        return Err(Error::EmptyInput { what: "epsilons" });
    }
    let mut total = 0.0;
    for &e in epsilons {
        total = add_up(total, check_epsilon(e)?);
    }
    check_epsilon(total)
}

/// `k·ε` for `k` runs of one ε-DP mechanism, rounded up.
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`k`) if `k = 0`; [`Error::InvalidEpsilon`] if `epsilon`
/// is not finite and positive, or if `k·ε` overflows to +∞.
pub fn homogeneous_epsilon(k: u64, epsilon: f64) -> Result<f64, Error> {
    let kf = check_steps(k)?;
    check_epsilon(mul_up(kf, check_epsilon(epsilon)?))
}

/// The largest per-step ε such that `k` ε-DP steps stay within a total ε (`ε/k`,
/// rounded down). Sequential composition needs no δ.
///
/// ```
/// let per_step = dpmech::composition::sequential::max_epsilon_per_step(10, 1.0)?;
/// assert!(per_step <= 0.1 && 10.0 * per_step <= 1.0);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`k`) if `k = 0` or if `ε/k` underflows to 0;
/// [`Error::InvalidEpsilon`] if `epsilon_total` is not finite and positive.
pub fn max_epsilon_per_step(k: u64, epsilon_total: f64) -> Result<f64, Error> {
    let kf = check_steps(k)?;
    let e = check_epsilon(epsilon_total)?;
    check_epsilon(div_down(e, kf)).map_err(|_| Error::InvalidParameter {
        name: "k",
        value: kf,
        reason: "the per-step epsilon underflows to 0",
    })
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
mod tests {
    use super::*;

    #[test]
    fn kinds_compose_as_documented() {
        let p = PrivacyLoss::pure(1.0).unwrap();
        let a = PrivacyLoss::approximate(0.5, 1e-6).unwrap();
        let z = PrivacyLoss::zcdp(0.125).unwrap();
        let r = PrivacyLoss::RandomDp {
            epsilon: 1.0,
            gamma: 0.05,
        };
        assert_eq!(sequential(&[p, p]).unwrap(), PrivacyLoss::Pure { epsilon: 2.0 });
        assert_eq!(
            sequential(&[p, a]).unwrap(),
            PrivacyLoss::Approximate {
                epsilon: 1.5,
                delta: 1e-6
            }
        );
        // 1-DP is 0.5-zCDP.
        assert_eq!(sequential(&[p, z]).unwrap(), PrivacyLoss::Zcdp { rho: 0.625 });
        assert!(matches!(sequential(&[a, z]), Err(Error::IncompatibleLoss { .. })));
        assert!(matches!(sequential(&[a, r]), Err(Error::IncompatibleLoss { .. })));
        assert!(matches!(
            sequential(&[r, p]).unwrap(),
            PrivacyLoss::RandomDp { epsilon, gamma } if epsilon == 2.0 && gamma == 0.05
        ));
        assert!(matches!(sequential(&[]), Err(Error::EmptyInput { .. })));
        let az = PrivacyLoss::approximate_zcdp(0.25, 0.5).unwrap();
        assert_eq!(
            sequential(&[az, z]).unwrap(),
            PrivacyLoss::ApproximateZcdp {
                rho: 0.375,
                delta: 0.5
            }
        );
        assert!(matches!(sequential(&[az, az]), Err(Error::InvalidDelta { .. })));
        assert!(matches!(
            sequential(&[az, r]),
            Err(Error::IncompatibleLoss { .. })
        ));
        let big = PrivacyLoss::approximate(1.0, 0.6).unwrap();
        assert!(matches!(sequential(&[big, big]), Err(Error::InvalidDelta { .. })));
        let bad = PrivacyLoss::Pure { epsilon: f64::NAN };
        assert!(matches!(sequential(&[bad]), Err(Error::InvalidEpsilon { .. })));
    }

    #[test]
    fn inexact_sums_round_up() {
        let s = epsilon_sum(&[0.1, 0.2]).unwrap();
        assert!(s >= 0.1 + 0.2);
        assert_eq!(homogeneous_epsilon(3, 0.25).unwrap(), 0.75);
        assert!(max_epsilon_per_step(3, 1.0).unwrap() * 3.0 <= 1.0);
        assert!(max_epsilon_per_step(0, 1.0).is_err());
    }
}
