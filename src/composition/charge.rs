//! [`Charge`]: what one charge to an accountant asks for — a guarantee, or a mechanism
//! whose guarantee it is — with an optional label and the neighbouring relation the
//! guarantee was stated for.
//!
//! The three accountants charge the same way, with two verbs:
//!
//! | accountant | `spend(…)` (charge only) | `release(mechanism, input, rng)` (charge, then draw) |
//! | --- | --- | --- |
//! | [`Accountant`](super::Accountant) | `impl Into<Charge>`: a [`PrivacyLoss`], or `Charge::new(loss)` with a label and/or a relation | the mechanism's [`privacy_loss`](crate::Mechanism::privacy_loss), labelled with its type name unless labelled |
//! | [`OnlineAccountant`](super::online::OnlineAccountant) | a [`Release`](super::online::Release) (its PLD and closed forms) | the mechanism described by its `privacy_loss` ([`Release::from_loss`](super::online::Release::from_loss)) |
//! | [`PldAccountant`](super::pld::PldAccountant) | a step's label | the charge's label names the step |
//!
//! `release` takes `impl Into<Charge<&M>>`: a plain `&mechanism`, or
//! `Charge::of(&mechanism)` with a label and/or a relation. Either way the charge is
//! made (or refused) **before** the mechanism draws anything.
//!
//! ```
//! use dpmech::composition::Charge;
//! use dpmech::sensitivity::Neighbouring;
//! use dpmech::{Accountant, Laplace, PrivacyLoss};
//! use rand_chacha::ChaCha20Rng;
//! use rand_core::SeedableRng;
//! let acc = Accountant::pure(1.0)?.with_relation(Neighbouring::Substitute);
//! acc.spend(PrivacyLoss::pure(0.25)?)?; // stated for the budget's relation
//! // Stated for add/remove neighbours: counts double under substitution.
//! acc.spend(Charge::new(PrivacyLoss::pure(0.125)?).labelled("count").relation(Neighbouring::AddRemove))?;
//! let mean = Laplace::new(0.1, 0.25)?;
//! let mut rng = ChaCha20Rng::seed_from_u64(1);
//! acc.release(Charge::of(&mean).labelled("mean age"), 38.2, &mut rng)?;
//! assert_eq!(acc.remaining(), PrivacyLoss::pure(0.25)?);
//! let labels: Vec<_> = acc.ledger().into_iter().map(|e| e.label).collect();
//! assert_eq!(labels, [None, Some("count".into()), Some("mean age".into())]);
//! # Ok::<(), dpmech::Error>(())
//! ```

use crate::Error;
use crate::privacy::PrivacyLoss;
use crate::sensitivity::Neighbouring;

/// One charge: what is charged (`T`: a [`PrivacyLoss`] for `spend`, a mechanism
/// reference for `release`), an optional ledger label, and the neighbouring relation
/// the guarantee was stated for (`None`: the budget's own). See the
/// [module docs](self).
#[derive(Debug, Clone, PartialEq)]
pub struct Charge<T = PrivacyLoss> {
    what: T,
    label: Option<String>,
    relation: Option<Neighbouring>,
}

impl Charge {
    /// A charge of `loss`, unlabelled, stated for the budget's relation.
    pub fn new(loss: PrivacyLoss) -> Self {
        Self::with(loss)
    }

    /// The guarantee charged.
    pub fn loss(&self) -> PrivacyLoss {
        self.what
    }
}

impl<'m, M: ?Sized> Charge<&'m M> {
    /// A charge of `mechanism`'s guarantee ([`Mechanism::privacy_loss`](crate::Mechanism::privacy_loss)), for
    /// `release`.
    pub fn of(mechanism: &'m M) -> Self {
        Self::with(mechanism)
    }

    /// The mechanism charged.
    pub fn mechanism(&self) -> &'m M {
        self.what
    }
}

impl<T> Charge<T> {
    fn with(what: T) -> Self {
        Charge {
            what,
            label: None,
            relation: None,
        }
    }

    /// The same label and relation, charging `f(what)` (e.g. a mechanism's loss).
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Charge<U> {
        Charge {
            what: f(self.what),
            label: self.label,
            relation: self.relation,
        }
    }

    /// The same charge, recorded under `label` in the ledger (for a
    /// [`PldAccountant`](super::pld::PldAccountant): the step charged).
    #[must_use]
    pub fn labelled(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// The same charge, its guarantee stated for neighbours under `stated` (e.g. a
    /// mechanism calibrated to a sensitivity under that relation). The
    /// [`Accountant`](super::Accountant) converts it to its budget's relation or refuses
    /// it; the online and PLD accountants, which hold no relation, refuse any stated
    /// relation.
    #[must_use]
    pub fn relation(mut self, stated: Neighbouring) -> Self {
        self.relation = Some(stated);
        self
    }

    /// The label, if any.
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    /// The relation the guarantee was stated for, if one was given.
    pub fn stated_relation(&self) -> Option<Neighbouring> {
        self.relation
    }
}

impl From<PrivacyLoss> for Charge {
    fn from(loss: PrivacyLoss) -> Self {
        Charge::new(loss)
    }
}

impl<'m, M: ?Sized> From<&'m M> for Charge<&'m M> {
    fn from(mechanism: &'m M) -> Self {
        Charge::of(mechanism)
    }
}

/// `charge`, refused when it states a neighbouring relation: the online and PLD
/// accountants hold guarantees as stated and convert none.
pub(crate) fn no_relation<T>(charge: Charge<T>) -> Result<Charge<T>, Error> {
    match charge.stated_relation() {
        None => Ok(charge),
        Some(_) => Err(Error::IncompatibleLoss {
            reason: "this accountant converts no neighbouring relation: charge guarantees stated \
                     for the relation its budget protects, without a relation",
        }),
    }
}

/// The last segment of `M`'s type name (`"Laplace"`): the default ledger label of a
/// mechanism's charge.
pub(crate) fn type_label<M: ?Sized>() -> &'static str {
    let name = std::any::type_name::<M>();
    name.rsplit("::").next().unwrap_or(name)
}

/// The `release(mechanism, input, rng)` of an accountant, written once for the three:
/// `mechanism` is a `&M` or a [`Charge::of`] it; its guarantee, label and relation go to
/// the accountant's `charge_for(&self, Charge, type_label: &str) -> Result<(), Error>`
/// (the `&str` is [`type_label`] of `M`), and the mechanism draws only if the charge was
/// accepted. The doc comment of each accountant's `release` is the macro's argument.
macro_rules! release_method {
    ($(#[$doc:meta])*) => {
        $(#[$doc])*
        pub fn release<'m, I, M, R>(
            &self,
            mechanism: impl Into<$crate::composition::Charge<&'m M>>,
            input: I,
            rng: &mut R,
        ) -> Result<M::Output, $crate::Error>
        where
            M: $crate::Mechanism<I> + ?Sized + 'm,
            R: $crate::CryptoRng + ?Sized,
        {
            let charge = mechanism.into();
            let m = charge.mechanism();
            let label = $crate::composition::charge::type_label::<M>();
            self.charge_for(charge.map(|m: &M| $crate::Mechanism::privacy_loss(m)), label)?;
            $crate::Mechanism::release(m, input, rng)
        }
    };
}
pub(crate) use release_method;
