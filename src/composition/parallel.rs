//! Parallel composition over a data-independent partition.
//!
//! Split the records by a rule fixed before looking at the data (e.g. disjoint bins of
//! a public attribute) and run a mechanism on each part only (McSherry 2009, *Privacy
//! Integrated Queries*, whose theorem is stated for add/remove neighbours; the
//! substitution case is worked out below). What the whole costs depends on how a neighbouring pair of
//! datasets changes the parts, and so on which relation each part's guarantee was
//! stated for — a [`Part`] carries its guarantee together with that relation.
//!
//! * **Add/remove** (the whole dataset gains or loses one record): the record lives in
//!   exactly one part, which sees an add/remove. The whole has the **largest add/remove
//!   loss**. Every part needs an add/remove guarantee; one stated only for substitution
//!   (bounded DP) implies nothing when its part's size changes, and is refused.
//! * **Substitute** (one record replaced by another): either both records fall in the
//!   same part, which sees a *substitution*, or they fall in different parts, which
//!   each see an *add/remove* (one loses a record, the other gains one). The whole has
//!   `max(largest within-part substitution loss, sum of the two largest add/remove
//!   losses)`. A part stated for add/remove has substitution loss by group privacy
//!   ([`convert_loss`]: 2ε, (2ε, (1 + e^ε)δ), 4ρ). A part stated only for substitution
//!   — typically because its guarantee assumes a **public size**, like a mean divided
//!   by the public count — has no add/remove loss: a record moving in or out changes
//!   its size (its "public" count, and with it the output's support), and the loss
//!   is unbounded. Such parts are refused under substitution unless the partition's
//!   part sizes are themselves public ([`parallel_public_sizes`]): then a neighbour
//!   keeps every part's size, so only within-part substitutions exist and the whole
//!   has the largest within-part substitution loss.
//!
//! Two guarantees are combined by their componentwise maximum (an (ε₁, δ₁)- and an
//! (ε₂, δ₂)-guarantee both imply (max ε, max δ)), sums are rounded up. Pure and
//! approximate DP mix (pure is δ = 0); zCDP and approximate zCDP mix (zCDP is δ = 0:
//! max ρ, max δ) but not with (ε, δ)-DP; random DP is refused
//! ([`Error::IncompatibleLoss`]). An approximate-zCDP part has no group-privacy
//! conversion, so it needs its substitution loss stated ([`Part::both`] or
//! [`Part::new`] with [`Neighbouring::Substitute`]): [`Part::add_remove`] refuses it.

use super::validate_loss;
use crate::Error;
use crate::privacy::round::add_up;
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon, check_rho};
use crate::sensitivity::{Neighbouring, convert_loss};

/// One part of a data-independent partition: the guarantee its mechanism gives, under
/// each neighbouring relation for which one is known.
///
/// ```
/// use dpmech::PrivacyLoss;
/// use dpmech::composition::Part;
/// use dpmech::sensitivity::Neighbouring;
/// // A Laplace count (add/remove, ε = 0.5): substitution costs 2 × 0.5 by group privacy.
/// let count = Part::add_remove(PrivacyLoss::pure(0.5)?)?;
/// assert_eq!(count.substitute_loss(), PrivacyLoss::pure(1.0)?);
/// // A mean over a public count (substitution only): no add/remove guarantee.
/// let mean = Part::new(PrivacyLoss::pure(0.5)?, Neighbouring::Substitute)?;
/// assert_eq!(mean.add_remove_loss(), None);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Part {
    add_remove: Option<PrivacyLoss>,
    substitute: PrivacyLoss,
}

impl Part {
    /// A part whose guarantee `loss` is stated for `relation` (e.g. a release's
    /// `privacy_loss` and `relation`). Under [`Neighbouring::AddRemove`] the
    /// substitution loss follows by group privacy; under [`Neighbouring::Substitute`]
    /// no add/remove loss is known.
    ///
    /// # Errors
    ///
    /// The variant of an invalid field of `loss` ([`Error::InvalidEpsilon`],
    /// [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`] for γ).
    /// For an add/remove guarantee, also those of the group-privacy conversion
    /// ([`convert_loss`]): [`Error::IncompatibleLoss`] for random DP and approximate
    /// zCDP with δ > 0, and the field's variant when the doubled parameter leaves its
    /// domain (e.g. `(1 + e^ε)δ ≥ 1`).
    pub fn new(loss: PrivacyLoss, relation: Neighbouring) -> Result<Self, Error> {
        let loss = validate_loss(loss)?;
        match relation {
            Neighbouring::AddRemove => Self::add_remove(loss),
            Neighbouring::Substitute => Ok(Self {
                add_remove: None,
                substitute: loss,
            }),
        }
    }

    /// A part with an add/remove guarantee (its substitution loss by group privacy).
    ///
    /// # Errors
    ///
    /// The variant of an invalid field of `loss` ([`Error::InvalidEpsilon`],
    /// [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`] for γ).
    /// Also those of the group-privacy conversion
    /// ([`convert_loss`]): [`Error::IncompatibleLoss`] for random DP and approximate
    /// zCDP with δ > 0, and the field's variant when the doubled parameter leaves its
    /// domain (e.g. `(1 + e^ε)δ ≥ 1`).
    pub fn add_remove(loss: PrivacyLoss) -> Result<Self, Error> {
        let loss = validate_loss(loss)?;
        Ok(Self {
            add_remove: Some(loss),
            substitute: convert_loss(loss, Neighbouring::AddRemove, Neighbouring::Substitute)?,
        })
    }

    /// A part whose guarantees under both relations are known separately (e.g. a
    /// clamped sum: sensitivity `max(|L|, |U|)` for add/remove, `U − L` for
    /// substitution, which can be less than twice the former).
    ///
    /// # Errors
    ///
    /// The variant of an invalid field of either loss ([`Error::InvalidEpsilon`],
    /// [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`] for γ).
    pub fn both(add_remove: PrivacyLoss, substitute: PrivacyLoss) -> Result<Self, Error> {
        Ok(Self {
            add_remove: Some(validate_loss(add_remove)?),
            substitute: validate_loss(substitute)?,
        })
    }

    /// The loss when one record is added to or removed from this part, if known.
    pub fn add_remove_loss(&self) -> Option<PrivacyLoss> {
        self.add_remove
    }

    /// The loss when one record of this part is replaced by another of this part.
    pub fn substitute_loss(&self) -> PrivacyLoss {
        self.substitute
    }
}

/// The guarantee of mechanisms run on the parts of a data-independent partition, for
/// neighbours under `relation` (see the [module docs](self) for the reasoning):
///
/// * [`Neighbouring::AddRemove`]: the largest add/remove loss; a part without one is
///   refused;
/// * [`Neighbouring::Substitute`]: `max(largest substitution loss, sum of the two
///   largest add/remove losses)`; a part without an add/remove loss is refused (use
///   [`parallel_public_sizes`] if the part sizes are public).
///
/// ```
/// use dpmech::PrivacyLoss;
/// use dpmech::composition::{Part, parallel};
/// use dpmech::sensitivity::Neighbouring;
/// let parts = [
///     Part::add_remove(PrivacyLoss::pure(1.0)?)?,
///     Part::add_remove(PrivacyLoss::pure(0.1)?)?,
/// ];
/// assert_eq!(parallel(&parts, Neighbouring::AddRemove)?, PrivacyLoss::pure(1.0)?);
/// // A substitution inside the first part costs 2 × 1.0 (more than 1.0 + 0.1).
/// assert_eq!(parallel(&parts, Neighbouring::Substitute)?, PrivacyLoss::pure(2.0)?);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// * [`Error::EmptyInput`] for no parts;
/// * [`Error::IncompatibleLoss`] if a part has no add/remove guarantee, a part is
///   random DP, or zCDP or approximate-zCDP parts are mixed with (ε, δ)-DP parts;
/// * under [`Neighbouring::Substitute`], [`Error::InvalidEpsilon`],
///   [`Error::InvalidRho`] or [`Error::InvalidDelta`] if the sum of the two largest
///   losses leaves its domain (ε or ρ overflows to +∞, δ ≥ 1).
pub fn parallel(parts: &[Part], relation: Neighbouring) -> Result<PrivacyLoss, Error> {
    if parts.is_empty() {
        return Err(Error::EmptyInput { what: "parts" });
    }
    let mut add_remove = Vec::with_capacity(parts.len());
    for part in parts {
        add_remove.push(part.add_remove.ok_or(Error::IncompatibleLoss {
            reason: "a part stated only for substitution (e.g. a public-size mean) has no add/remove guarantee: \
                     a record moving in or out of it is unbounded. parallel_public_sizes applies ONLY if \
                     every part's size is fixed and public (identical in every neighbouring dataset, \
                     e.g. a stratified sample with published strata sizes); when a substitution can move \
                     a record between parts it understates the loss. Otherwise state the part for add/remove",
        })?);
    }
    let largest = Combined::of(&add_remove)?;
    match relation {
        Neighbouring::AddRemove => largest.first(),
        Neighbouring::Substitute => {
            let substitutions: Vec<PrivacyLoss> = parts.iter().map(Part::substitute_loss).collect();
            let within = Combined::of(&substitutions)?.first()?;
            let across = largest.two_largest()?;
            max_of(within, across)
        }
    }
}

/// Only valid when **every part's size is fixed and public** (identical in every
/// neighbouring dataset, e.g. a stratified sample with published strata sizes): the
/// largest substitution loss of the parts.
///
/// It assumes neighbours replace one record by another **of the same part**. If the
/// partition is by a private attribute, a substitution can move a record from one part
/// to another, changing two part sizes: this function then **understates** the loss
/// (a pair of substitution-only parts reported as 1 can leak 5.9 or more). In that case
/// use [`parallel`] with parts stated for add/remove. This is the only way to compose
/// parts whose guarantee assumes their size is public.
///
/// ```
/// use dpmech::PrivacyLoss;
/// use dpmech::composition::{Part, parallel, parallel_public_sizes};
/// use dpmech::sensitivity::Neighbouring;
/// let means = [
///     Part::new(PrivacyLoss::pure(1.0)?, Neighbouring::Substitute)?,
///     Part::new(PrivacyLoss::pure(0.5)?, Neighbouring::Substitute)?,
/// ];
/// assert!(parallel(&means, Neighbouring::Substitute).is_err());
/// assert_eq!(parallel_public_sizes(&means)?, PrivacyLoss::pure(1.0)?);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::EmptyInput`] for no parts; [`Error::IncompatibleLoss`] if a part is random
/// DP or zCDP or approximate-zCDP parts are mixed with (ε, δ)-DP parts.
pub fn parallel_public_sizes(parts: &[Part]) -> Result<PrivacyLoss, Error> {
    if parts.is_empty() {
        return Err(Error::EmptyInput { what: "parts" });
    }
    let substitutions: Vec<PrivacyLoss> = parts.iter().map(Part::substitute_loss).collect();
    Combined::of(&substitutions)?.first()
}

/// The largest and second largest ε (or ρ) and δ over a list of guarantees of one
/// family: (ε, δ)-DP, or zCDP with approximate zCDP.
#[derive(Debug, Clone, Copy)]
struct Combined {
    zcdp: bool,
    eps: [f64; 2],
    delta: [f64; 2],
}

impl Combined {
    fn of(losses: &[PrivacyLoss]) -> Result<Self, Error> {
        let mut out = Self {
            zcdp: false,
            eps: [0.0; 2],
            delta: [0.0; 2],
        };
        let (mut dp, mut zcdp) = (false, false);
        for &loss in losses {
            let (e, d) = match validate_loss(loss)? {
                PrivacyLoss::Pure { epsilon } => (epsilon, 0.0),
                PrivacyLoss::Approximate { epsilon, delta } => (epsilon, delta),
                PrivacyLoss::Zcdp { rho } => (rho, 0.0),
                PrivacyLoss::ApproximateZcdp { rho, delta } => (rho, delta),
                PrivacyLoss::RandomDp { .. } => {
                    return Err(Error::IncompatibleLoss {
                        reason: "parallel composition of random-DP guarantees is not supported",
                    });
                }
            };
            if is_zcdp(loss) {
                zcdp = true;
            } else {
                dp = true;
            }
            insert(&mut out.eps, e);
            insert(&mut out.delta, d);
        }
        if dp && zcdp {
            return Err(mixed_families());
        }
        out.zcdp = zcdp;
        Ok(out)
    }

    fn first(&self) -> Result<PrivacyLoss, Error> {
        self.loss(self.eps[0], self.delta[0])
    }

    fn two_largest(&self) -> Result<PrivacyLoss, Error> {
        self.loss(
            add_up(self.eps[0], self.eps[1]),
            add_up(self.delta[0], self.delta[1]),
        )
    }

    fn loss(&self, eps: f64, delta: f64) -> Result<PrivacyLoss, Error> {
        if self.zcdp {
            loss_from(true, check_rho(eps)?, delta)
        } else {
            loss_from(false, check_epsilon(eps)?, delta)
        }
    }
}

/// Keeps the two largest values seen, largest first.
fn insert(top: &mut [f64; 2], v: f64) {
    if v > top[0] {
        top[1] = top[0];
        top[0] = v;
    } else if v > top[1] {
        top[1] = v;
    }
}

/// The guarantee of a family with parameter `x` (ε, or ρ when `zcdp`) and `delta`: pure
/// DP or zCDP for δ = 0, else approximate DP or approximate zCDP.
fn loss_from(zcdp: bool, x: f64, delta: f64) -> Result<PrivacyLoss, Error> {
    let delta = if delta == 0.0 { 0.0 } else { check_delta(delta)? };
    Ok(match (zcdp, delta == 0.0) {
        (false, true) => PrivacyLoss::Pure { epsilon: x },
        (false, false) => PrivacyLoss::Approximate { epsilon: x, delta },
        (true, true) => PrivacyLoss::Zcdp { rho: x },
        (true, false) => PrivacyLoss::ApproximateZcdp { rho: x, delta },
    })
}

fn mixed_families() -> Error {
    Error::IncompatibleLoss {
        reason: "parallel composition needs all parts in zCDP (or approximate zCDP) or all in (epsilon, delta)-DP",
    }
}

/// Whether `loss` is of the zCDP family (zCDP or approximate zCDP).
fn is_zcdp(loss: PrivacyLoss) -> bool {
    matches!(
        loss,
        PrivacyLoss::Zcdp { .. } | PrivacyLoss::ApproximateZcdp { .. }
    )
}

/// The ρ of a guarantee of the zCDP family (0 otherwise).
fn rho_of(loss: PrivacyLoss) -> f64 {
    match loss {
        PrivacyLoss::Zcdp { rho } | PrivacyLoss::ApproximateZcdp { rho, .. } => rho,
        _ => 0.0,
    }
}

/// The componentwise maximum of two guarantees of one family.
fn max_of(a: PrivacyLoss, b: PrivacyLoss) -> Result<PrivacyLoss, Error> {
    let d = a.delta().unwrap_or(0.0).max(b.delta().unwrap_or(0.0));
    match (is_zcdp(a), is_zcdp(b)) {
        (true, true) => return loss_from(true, rho_of(a).max(rho_of(b)), d),
        (false, false) => {}
        // E.g. a part stated as zCDP for add/remove and as pure DP for substitution.
        _ => return Err(mixed_families()),
    }
    let e = a.epsilon().unwrap_or(0.0).max(b.epsilon().unwrap_or(0.0));
    loss_from(false, e, d)
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
mod tests {
    use super::*;

    fn ar(loss: PrivacyLoss) -> Part {
        Part::add_remove(loss).unwrap()
    }

    #[test]
    fn add_remove_takes_the_largest() {
        let parts = [
            ar(PrivacyLoss::approximate(0.5, 1e-7).unwrap()),
            ar(PrivacyLoss::pure(1.0).unwrap()),
        ];
        assert_eq!(
            parallel(&parts, Neighbouring::AddRemove).unwrap(),
            PrivacyLoss::Approximate {
                epsilon: 1.0,
                delta: 1e-7
            }
        );
        let sub_only = Part::new(PrivacyLoss::pure(0.5).unwrap(), Neighbouring::Substitute).unwrap();
        assert!(matches!(
            parallel(&[sub_only], Neighbouring::AddRemove),
            Err(Error::IncompatibleLoss { .. })
        ));
        assert!(parallel(&[], Neighbouring::AddRemove).is_err());
    }

    #[test]
    fn substitution_is_the_worse_of_within_and_across() {
        // Across wins: two equal parts, 0.5 + 0.5 = 1 = 2 × 0.5.
        let even = [
            ar(PrivacyLoss::pure(0.5).unwrap()),
            ar(PrivacyLoss::pure(0.5).unwrap()),
        ];
        assert_eq!(
            parallel(&even, Neighbouring::Substitute).unwrap(),
            PrivacyLoss::Pure { epsilon: 1.0 }
        );
        // Within wins: 2 × 1.0 > 1.0 + 0.1 (the old rule reported 1.1).
        let uneven = [
            ar(PrivacyLoss::pure(1.0).unwrap()),
            ar(PrivacyLoss::pure(0.1).unwrap()),
        ];
        assert_eq!(
            parallel(&uneven, Neighbouring::Substitute).unwrap(),
            PrivacyLoss::Pure { epsilon: 2.0 }
        );
        // A part with a tighter substitution guarantee of its own: across dominates.
        let both = [
            Part::both(PrivacyLoss::pure(1.0).unwrap(), PrivacyLoss::pure(1.0).unwrap()).unwrap(),
            ar(PrivacyLoss::pure(0.75).unwrap()),
        ];
        assert_eq!(
            parallel(&both, Neighbouring::Substitute).unwrap(),
            PrivacyLoss::Pure { epsilon: 1.75 }
        );
        // Approximate: within (2ε, (1 + e^ε)δ) vs across (ε₁ + ε₂, δ₁ + δ₂), componentwise max.
        let approx = [
            ar(PrivacyLoss::approximate(1.0, 1e-6).unwrap()),
            ar(PrivacyLoss::approximate(0.2, 1e-9).unwrap()),
        ];
        let PrivacyLoss::Approximate { epsilon, delta } =
            parallel(&approx, Neighbouring::Substitute).unwrap()
        else {
            panic!("expected an approximate guarantee");
        };
        assert_eq!(epsilon, 2.0);
        assert!(delta >= (1.0 + 1f64.exp()) * 1e-6 && delta < 3.72e-6, "{delta}");
        // zCDP: within 4ρ vs across ρ₁ + ρ₂.
        let z = [
            ar(PrivacyLoss::zcdp(0.5).unwrap()),
            ar(PrivacyLoss::zcdp(0.25).unwrap()),
        ];
        assert_eq!(
            parallel(&z, Neighbouring::Substitute).unwrap(),
            PrivacyLoss::Zcdp { rho: 2.0 }
        );
        let mixed = [
            ar(PrivacyLoss::zcdp(0.5).unwrap()),
            ar(PrivacyLoss::pure(0.25).unwrap()),
        ];
        assert!(matches!(
            parallel(&mixed, Neighbouring::AddRemove),
            Err(Error::IncompatibleLoss { .. })
        ));
    }

    #[test]
    fn approximate_zcdp_parts_take_max_rho_and_max_delta() {
        let az = PrivacyLoss::approximate_zcdp(0.25, 1e-6).unwrap();
        assert!(matches!(
            Part::add_remove(az),
            Err(Error::IncompatibleLoss { .. })
        ));
        let parts = [
            Part::both(az, PrivacyLoss::approximate_zcdp(0.5, 1e-6).unwrap()).unwrap(),
            Part::both(PrivacyLoss::zcdp(0.5).unwrap(), PrivacyLoss::zcdp(1.0).unwrap()).unwrap(),
        ];
        assert_eq!(
            parallel(&parts, Neighbouring::AddRemove).unwrap(),
            PrivacyLoss::ApproximateZcdp {
                rho: 0.5,
                delta: 1e-6
            }
        );
        // Substitute: within (1.0, 1e-6) vs across (0.75, 1e-6).
        assert_eq!(
            parallel(&parts, Neighbouring::Substitute).unwrap(),
            PrivacyLoss::ApproximateZcdp {
                rho: 1.0,
                delta: 1e-6
            }
        );
        let mixed = [
            Part::both(az, az).unwrap(),
            Part::both(PrivacyLoss::pure(0.1).unwrap(), PrivacyLoss::pure(0.2).unwrap()).unwrap(),
        ];
        assert!(matches!(
            parallel(&mixed, Neighbouring::AddRemove),
            Err(Error::IncompatibleLoss { .. })
        ));
        // A part stated as zCDP for add/remove and pure DP for substitution: no mixed max.
        let odd = [Part::both(PrivacyLoss::zcdp(0.5).unwrap(), PrivacyLoss::pure(1.0).unwrap()).unwrap()];
        assert!(matches!(
            parallel(&odd, Neighbouring::Substitute),
            Err(Error::IncompatibleLoss { .. })
        ));
    }

    #[test]
    fn public_size_parts_compose_only_with_public_sizes() {
        let mean = |e| Part::new(PrivacyLoss::pure(e).unwrap(), Neighbouring::Substitute).unwrap();
        let parts = [mean(1.0), mean(0.25)];
        assert!(matches!(
            parallel(&parts, Neighbouring::Substitute),
            Err(Error::IncompatibleLoss { .. })
        ));
        assert_eq!(
            parallel_public_sizes(&parts).unwrap(),
            PrivacyLoss::Pure { epsilon: 1.0 }
        );
        // Add/remove parts under public sizes: their substitution loss (group privacy).
        assert_eq!(
            parallel_public_sizes(&[mean(1.0), ar(PrivacyLoss::pure(0.75).unwrap())]).unwrap(),
            PrivacyLoss::Pure { epsilon: 1.5 }
        );
        assert!(parallel_public_sizes(&[]).is_err());
    }
}
