//! Parallel composition over a data-independent partition.
//!
//! **Theorem** (McSherry 2009; seed 001 §1.2, with erratum 6): split the records by a
//! rule fixed before looking at the data (e.g. disjoint bins of a public attribute)
//! and run an `(εᵢ, δᵢ)`-DP mechanism on part `i` only. Under the **add/remove**
//! relation one record lives in exactly one part, so only that part's output changes:
//! the whole is `(max εᵢ, max δᵢ)`-DP (for zCDP, `max ρᵢ`).
//!
//! Under the **substitute** relation a record may be replaced by one that falls in a
//! *different* part, so two parts change: the whole is `(εᵢ + εⱼ, δᵢ + δⱼ)`-DP for the
//! two largest — at most twice the add/remove figure. (If each part's mechanism is
//! itself stated for substitution *within* its part, a substitution that stays inside
//! a part costs only that part; the two-largest bound covers both cases.)

use super::validate_loss;
use crate::Error;
use crate::privacy::round::add_up;
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon, check_rho};
use crate::sensitivity::Neighbouring;

/// The guarantee of mechanisms run on the parts of a data-independent partition.
///
/// All losses must be of one kind family: pure and approximate mix (pure is δ = 0);
/// zCDP composes with zCDP only; random DP is refused ([`Error::IncompatibleLoss`]).
/// With [`Neighbouring::AddRemove`] the result is the componentwise maximum; with
/// [`Neighbouring::Substitute`] it is the sum of the two largest ε (and of the two
/// largest δ, or ρ), rounded up.
///
/// ```
/// use dpmech::PrivacyLoss;
/// use dpmech::composition::parallel::parallel;
/// use dpmech::sensitivity::Neighbouring;
/// let parts = [PrivacyLoss::pure(0.5)?, PrivacyLoss::pure(0.25)?, PrivacyLoss::pure(0.5)?];
/// assert_eq!(parallel(&parts, Neighbouring::AddRemove)?, PrivacyLoss::Pure { epsilon: 0.5 });
/// assert_eq!(parallel(&parts, Neighbouring::Substitute)?, PrivacyLoss::Pure { epsilon: 1.0 });
/// # Ok::<(), dpmech::Error>(())
/// ```
pub fn parallel(losses: &[PrivacyLoss], relation: Neighbouring) -> Result<PrivacyLoss, Error> {
    if losses.is_empty() {
        return Err(Error::EmptyInput { what: "losses" });
    }
    let mut eps = Vec::with_capacity(losses.len());
    let mut deltas = Vec::with_capacity(losses.len());
    let mut rhos = Vec::with_capacity(losses.len());
    for &loss in losses {
        match validate_loss(loss)? {
            PrivacyLoss::Pure { epsilon } => {
                eps.push(epsilon);
                deltas.push(0.0);
            }
            PrivacyLoss::Approximate { epsilon, delta } => {
                eps.push(epsilon);
                deltas.push(delta);
            }
            PrivacyLoss::Zcdp { rho } => rhos.push(rho),
            PrivacyLoss::RandomDp { .. } => {
                return Err(Error::IncompatibleLoss {
                    reason: "parallel composition of random-DP guarantees is not supported",
                });
            }
        }
    }
    if !rhos.is_empty() {
        if !eps.is_empty() {
            return Err(Error::IncompatibleLoss {
                reason: "parallel composition needs all parts in zCDP or all in (epsilon, delta)-DP",
            });
        }
        return Ok(PrivacyLoss::Zcdp {
            rho: check_rho(combine(&rhos, relation))?,
        });
    }
    let epsilon = check_epsilon(combine(&eps, relation))?;
    let delta = combine(&deltas, relation);
    if delta == 0.0 {
        Ok(PrivacyLoss::Pure { epsilon })
    } else {
        Ok(PrivacyLoss::Approximate {
            epsilon,
            delta: check_delta(delta)?,
        })
    }
}

/// Max (add/remove) or sum of the two largest (substitute), rounded up.
fn combine(values: &[f64], relation: Neighbouring) -> f64 {
    let (mut first, mut second) = (0.0f64, 0.0f64);
    for &v in values {
        if v > first {
            second = first;
            first = v;
        } else if v > second {
            second = v;
        }
    }
    match relation {
        Neighbouring::AddRemove => first,
        Neighbouring::Substitute => add_up(first, second),
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
mod tests {
    use super::*;

    #[test]
    fn relation_decides_the_cost() {
        let parts = [
            PrivacyLoss::approximate(0.5, 1e-7).unwrap(),
            PrivacyLoss::pure(1.0).unwrap(),
        ];
        assert_eq!(
            parallel(&parts, Neighbouring::AddRemove).unwrap(),
            PrivacyLoss::Approximate {
                epsilon: 1.0,
                delta: 1e-7
            }
        );
        assert_eq!(
            parallel(&parts, Neighbouring::Substitute).unwrap(),
            PrivacyLoss::Approximate {
                epsilon: 1.5,
                delta: 1e-7
            }
        );
        let one = [PrivacyLoss::pure(0.75).unwrap()];
        assert_eq!(
            parallel(&one, Neighbouring::Substitute).unwrap(),
            PrivacyLoss::Pure { epsilon: 0.75 }
        );
        let z = [PrivacyLoss::zcdp(0.5).unwrap(), PrivacyLoss::zcdp(0.25).unwrap()];
        assert_eq!(
            parallel(&z, Neighbouring::Substitute).unwrap(),
            PrivacyLoss::Zcdp { rho: 0.75 }
        );
        let mixed = [PrivacyLoss::zcdp(0.5).unwrap(), PrivacyLoss::pure(0.25).unwrap()];
        assert!(matches!(
            parallel(&mixed, Neighbouring::AddRemove),
            Err(Error::IncompatibleLoss { .. })
        ));
        assert!(parallel(&[], Neighbouring::AddRemove).is_err());
    }
}
