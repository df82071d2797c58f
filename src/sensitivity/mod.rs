//! Sensitivity: how much one person can change a query, per neighbouring relation and
//! norm — the quantity every additive-noise mechanism is calibrated to.
//!
//! * [`Neighbouring`]: **add/remove** one record (unbounded DP) or **substitute** one
//!   record (bounded DP; both datasets have the same, public size).
//! * [`Norm`]: L1 (Laplace, geometric), L2 (Gaussian), L∞ (scores of the exponential
//!   mechanism and report-noisy-max).
//! * [`queries`]: the sensitivity of common queries under each relation (count, clamped
//!   sum, mean with a public count, histogram, a vector of k queries), every computed
//!   value rounded **up**.
//! * [`sampler`]: the sensitivity sampler of Rubinstein & Aldà (2017) for functions
//!   whose sensitivity cannot be derived; it yields *random* DP only.
//! * [`convert_epsilon`] / [`convert_loss`]: what a guarantee for one relation implies
//!   for the other.
//!
//! ```
//! use dpmech::sensitivity::{Neighbouring, Norm, queries};
//! // A census vector (adults, readers of the Quijote): two counts, each of
//! // sensitivity 1, so the L1 sensitivity of the pair is 2.
//! let count = queries::count(Neighbouring::AddRemove);
//! assert_eq!(queries::vector(2, count, Norm::L1)?, 2.0);
//! # Ok::<(), dpmech::Error>(())
//! ```

pub mod queries;
pub mod sampler;

pub use sampler::{SampledSensitivity, SensitivitySampler};

use crate::Error;
use crate::composition::validate_loss;
use crate::privacy::round::{add_up, mul_up, sqrt_up, sub_up};
use crate::privacy::{PrivacyLoss, check_epsilon};

/// Which pairs of datasets count as neighbours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Neighbouring {
    /// Unbounded DP: `D′` is `D` with one record added or removed. The dataset size is
    /// itself private.
    AddRemove,
    /// Bounded DP: `D′` is `D` with one record replaced by another. The dataset size is
    /// public and equal for both.
    Substitute,
}

/// The norm in which a vector-valued query's sensitivity is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Norm {
    /// `Σ|aᵢ − bᵢ|`: calibrates the Laplace and geometric mechanisms.
    L1,
    /// `√Σ(aᵢ − bᵢ)²`: calibrates the Gaussian mechanism.
    L2,
    /// `max|aᵢ − bᵢ|`: the sensitivity of scores (exponential mechanism, noisy max).
    LInf,
}

impl Norm {
    /// `‖a − b‖` in this norm, rounded up.
    ///
    /// ```
    /// use dpmech::sensitivity::Norm;
    /// assert_eq!(Norm::L1.distance(&[1.0, 2.0], &[0.0, 0.0])?, 3.0);
    /// assert_eq!(Norm::LInf.distance(&[1.0, 2.0], &[0.0, 0.0])?, 2.0);
    /// assert!(Norm::L2.distance(&[3.0, 4.0], &[0.0, 0.0])? >= 5.0);
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`length`) for vectors of different lengths, and
    /// [`Error::NonFiniteValue`] for a non-finite coordinate or result.
    pub fn distance(self, a: &[f64], b: &[f64]) -> Result<f64, Error> {
        if a.len() != b.len() {
            return Err(Error::InvalidParameter {
                name: "length",
                value: b.len() as f64,
                reason: "both vectors must have the same length",
            });
        }
        let mut acc = 0.0f64;
        for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
            for v in [x, y] {
                if !v.is_finite() {
                    return Err(Error::NonFiniteValue { index: i, value: v });
                }
            }
            // |x − y| rounded up: the larger minus the smaller, rounded up.
            let d = if x >= y { sub_up(x, y) } else { sub_up(y, x) };
            acc = match self {
                Norm::L1 => add_up(acc, d),
                Norm::L2 => add_up(acc, mul_up(d, d)),
                Norm::LInf => acc.max(d),
            };
        }
        let out = if self == Norm::L2 { sqrt_up(acc) } else { acc };
        if out.is_finite() {
            Ok(out)
        } else {
            Err(Error::NonFiniteValue {
                index: a.len(),
                value: out,
            })
        }
    }
}

/// What an ε guarantee for one relation implies for the other.
///
/// * same relation → ε;
/// * add/remove → substitute: a substitution is a removal followed by an addition, so
///   ε-DP under add/remove gives **2ε**-DP under substitution (group privacy, k = 2);
/// * substitute → add/remove: **no implication** — bounded DP compares only datasets of
///   the same size and says nothing when the size changes (a mechanism that publishes
///   the exact dataset size is 0-DP under substitution and not DP at all under
///   add/remove). Returns [`Error::IncompatibleLoss`].
///
/// ```
/// use dpmech::sensitivity::{Neighbouring, convert_epsilon};
/// assert_eq!(convert_epsilon(0.5, Neighbouring::AddRemove, Neighbouring::Substitute)?, 1.0);
/// assert!(convert_epsilon(0.5, Neighbouring::Substitute, Neighbouring::AddRemove).is_err());
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidEpsilon`] for an invalid ε or when `2ε` overflows;
/// [`Error::IncompatibleLoss`] from substitution to add/remove.
pub fn convert_epsilon(epsilon: f64, from: Neighbouring, to: Neighbouring) -> Result<f64, Error> {
    let e = check_epsilon(epsilon)?;
    match (from, to) {
        (a, b) if a == b => Ok(e),
        (Neighbouring::AddRemove, Neighbouring::Substitute) => check_epsilon(mul_up(2.0, e)),
        _ => Err(no_bounded_to_unbounded()),
    }
}

fn no_bounded_to_unbounded() -> Error {
    Error::IncompatibleLoss {
        reason: "a substitute-one (bounded) guarantee implies nothing for add/remove (unbounded) neighbours",
    }
}

/// [`convert_epsilon`] for any guarantee, via group privacy for k = 2 (rounded up):
/// pure ε → 2ε; approximate (ε, δ) → (2ε, (1 + e^ε)δ); zCDP ρ → 4ρ (Bun & Steinke
/// 2016, Prop. 1.9); random DP is refused (its γ refers to a pair distribution), and so
/// is approximate zCDP with δ > 0 (its group privacy has no simple closed form). Any guarantee is
/// returned unchanged when `from == to`.
///
/// # Errors
///
/// The variant of an invalid field of `loss` ([`Error::InvalidEpsilon`],
/// [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`] for γ);
/// [`Error::IncompatibleLoss`] from substitution to add/remove, and for random DP and
/// approximate zCDP with δ > 0; the
/// field's variant also when the converted parameter leaves its domain (e.g. δ ≥ 1).
pub fn convert_loss(loss: PrivacyLoss, from: Neighbouring, to: Neighbouring) -> Result<PrivacyLoss, Error> {
    let loss = validate_loss(loss)?;
    if from == to {
        return Ok(loss);
    }
    if from == Neighbouring::Substitute {
        return Err(no_bounded_to_unbounded());
    }
    match loss {
        PrivacyLoss::Pure { epsilon } => Ok(PrivacyLoss::Pure {
            epsilon: check_epsilon(mul_up(2.0, epsilon))?,
        }),
        PrivacyLoss::Approximate { epsilon, delta } => {
            let factor = add_up(1.0, crate::privacy::round::exp_up(epsilon));
            Ok(PrivacyLoss::Approximate {
                epsilon: check_epsilon(mul_up(2.0, epsilon))?,
                delta: crate::privacy::check_delta(mul_up(factor, delta))?,
            })
        }
        // δ = 0 is plain zCDP written as a pair.
        PrivacyLoss::Zcdp { rho } | PrivacyLoss::ApproximateZcdp { rho, delta: 0.0 } => {
            Ok(PrivacyLoss::Zcdp {
                rho: crate::privacy::check_rho(mul_up(4.0, rho))?,
            })
        }
        PrivacyLoss::RandomDp { .. } => Err(Error::IncompatibleLoss {
            reason: "random DP cannot be converted between neighbouring relations",
        }),
        PrivacyLoss::ApproximateZcdp { .. } => Err(Error::IncompatibleLoss {
            reason: "approximate zCDP is converted between neighbouring relations only when they \
                     are the same: group privacy for approximate zCDP has no simple closed form; \
                     state the guarantee for the budget's relation",
        }),
    }
}

/// The sensitivity under substitution implied by one under add/remove: `2s` (a
/// substitution is a removal then an addition; triangle inequality).
///
/// # Errors
///
/// [`Error::InvalidSensitivity`] unless the sensitivity (and its double) is finite and
/// positive.
pub fn substitute_from_add_remove(sensitivity: f64) -> Result<f64, Error> {
    let s = crate::privacy::check_sensitivity(sensitivity)?;
    crate::privacy::check_sensitivity(mul_up(2.0, s))
}
