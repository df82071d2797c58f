//! The privacy accountant: a thread-safe budget that charges **before** a mechanism
//! draws its noise and refuses any charge that would exceed the budget.
//!
//! # Rules used, and which sessions they cover
//!
//! An accountant runs in one of two modes ([`Adaptivity`]):
//!
//! * **[`Adaptivity::FixedSequence`]** (the default: [`Accountant::new`], `pure`,
//!   `approximate`, `zcdp`, `approximate_zcdp`, [`Accountant::with_plan`]) — the guarantee of a sequence
//!   of mechanisms fixed in advance; the queries they answer may be chosen adaptively.
//! * **[`Adaptivity::Filter`]** ([`Accountant::filter`]) — a privacy filter: the
//!   guarantee holds even when each mechanism **and its parameters** (ε, δ, ρ) are chosen
//!   from earlier outputs, e.g. a notebook or an SQL session that picks the next query's
//!   ε after seeing the last answer.
//!
//! | budget | accepted charges | running total | fixed sequence | filter |
//! | --- | --- | --- | --- | --- |
//! | [`PrivacyLoss::Pure`] ε | pure | Σε (sequential composition) | ✓ | ✓ (basic composition is a filter) |
//! | [`PrivacyLoss::Approximate`] (ε, δ) | pure (δ = 0), approximate | Σε, Σδ | ✓ | ✓ (basic composition is a filter) |
//! | [`PrivacyLoss::Zcdp`] ρ | zCDP (also approximate zCDP with δ = 0); pure ε counted as ρ = ε²/2 | Σρ | ✓ | ✓ (a Rényi filter at every order) |
//! | [`PrivacyLoss::ApproximateZcdp`] (ρ, δ) | approximate zCDP; zCDP (δ = 0); pure ε counted as ρ = ε²/2, δ = 0 | Σρ, Σδ (Bun & Steinke 2016, Lemma 8.3) | ✓ | — (no filter theorem: [`Accountant::filter`] refuses it) |
//! | a declared [`Plan`] (k steps of ε₀) | pure with ε ≤ ε₀, each counted as ε₀ | at most k steps | ✓ | — |
//! | [`Accountant::filter`] of (ε, δ), δ > 0 | pure, zCDP (also approximate zCDP with δ = 0) | Rényi filter `Σ Rᵢ(α) ≤ B(α)` | ✓ | ✓ (Feldman & Zrnic 2021) |
//!
//! The sums of the first three rows are **basic composition, which is itself a valid
//! privacy filter** (Rogers, Roth, Ullman & Vadhan 2016; for Σρ, the Rényi filter of
//! Feldman & Zrnic 2021 at every order at once): for those budgets both modes apply the
//! same rule and the guarantee covers adaptive sessions either way; [`Accountant::filter`]
//! of a pure or zCDP budget only records the mode. What differs is an `(ε, δ)` budget:
//! by default pure and approximate charges are summed (Σε, Σδ); under the filter pure
//! and zCDP charges are counted by their Rényi-DP bounds (the last row), so many small
//! charges cost about their square-root sum — and `(ε, δ)` charges with δ > 0, which
//! have no RDP bound, are refused. A declared [`Plan`] (advanced or optimal
//! composition) holds only for k and ε₀ fixed before the first release, so it has no
//! filter mode.
//!
//! Charging approximate DP to a zCDP or approximate-zCDP budget, or zCDP to an ε/(ε, δ)
//! budget (outside a Rényi filter), is an [`Error::IncompatibleLoss`]: the conversion
//! needs a choice (of δ) that the caller must make explicitly with [`super::zcdp`].
//! Approximate zCDP with δ > 0 (e.g. partition selection under zCDP) is charged only to
//! an approximate-zCDP budget ([`Accountant::approximate_zcdp`]): a zCDP budget has no
//! δ to charge it to, and pure, (ε, δ), plan and Rényi-filter budgets refuse it (convert
//! it with [`super::zcdp::approximate_zcdp_to_dp`] to charge it as `(ε, δ)`). A
//! hand-built `ApproximateZcdp { rho, delta: 0.0 }` is zCDP everywhere. [`PrivacyLoss::RandomDp`]
//! charges are always refused: random DP (e.g. from the sensitivity sampler) is a
//! guarantee over a data distribution, not a worst-case one, and cannot be counted
//! against a worst-case budget. A random-DP budget is refused for the same reason.
//!
//! # Charging
//!
//! Two verbs, as for the other accountants ([`Charge`]): [`Accountant::spend`] a
//! guarantee (a [`PrivacyLoss`], or a [`Charge`] of one with a ledger label and/or the
//! neighbouring relation it was stated for), or [`Accountant::release`] a mechanism (a
//! `&M`, or a [`Charge::of`] it): charged first, drawn only if the charge was accepted.
//!
//! # Budgets that survive: a durable ledger
//!
//! An accountant lives in memory unless it is given a
//! [`LedgerStore`] with [`Accountant::with_ledger`] (or
//! resumed from one with [`Accountant::open`]): then every charge is committed to the
//! store — inside its lock, after replaying what other processes and analysts charged —
//! before it counts and before anything is drawn, and a restart resumes from the store.
//! The stores (an embedded file, PostgreSQL) are in the `dpmech-ledger` crate; see
//! [`composition::ledger`](super::ledger).
//!
//! # Safety of the arithmetic
//!
//! Totals are accumulated with directed rounding (exact when representable, otherwise
//! rounded up) and the rounded-up total is compared with the budget, so rounding can
//! only refuse a charge, never over-allow one. Remaining budgets are rounded down.
//!
//! ```
//! use dpmech::{Accountant, PrivacyLoss};
//! let acc = Accountant::pure(1.0)?;
//! acc.spend(PrivacyLoss::pure(0.75)?)?;
//! // A second 0.75 would exceed the budget: refused, and nothing is charged.
//! let refused = acc.spend(PrivacyLoss::pure(0.75)?);
//! assert!(matches!(refused, Err(dpmech::Error::BudgetExceeded { .. })));
//! assert_eq!(acc.remaining(), PrivacyLoss::Pure { epsilon: 0.25 });
//! # Ok::<(), dpmech::Error>(())
//! ```

mod durable;
mod plan;
mod rules;

pub use plan::{Plan, PlanRule};

use super::charge::{Charge, release_method};
use super::ledger::LedgerStore;
use super::online::RenyiFilter;
use super::validate_loss;
use crate::Error;
use crate::privacy::PrivacyLoss;
use crate::sensitivity::Neighbouring;
use rules::as_zcdp_if_no_delta;
use std::sync::{Mutex, MutexGuard};

/// One accepted charge.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerEntry {
    /// The label given with the charge, if any.
    pub label: Option<String>,
    /// The guarantee the caller asked to charge.
    pub requested: PrivacyLoss,
    /// What was counted against the budget (after conversion, e.g. pure ε → ε²/2 for a
    /// zCDP budget, or ε → ε₀ for a plan).
    pub charged: PrivacyLoss,
    /// The neighbouring relation `requested` was stated for.
    pub relation: Neighbouring,
    /// Who charged: the analyst of a ledger store ([`Accountant::with_ledger`]); `None`
    /// for an in-memory accountant.
    pub analyst: Option<String>,
    /// When the charge was accepted, in milliseconds since the Unix epoch.
    pub unix_millis: u64,
}

/// The running totals of a budget (copied, then replaced, so a refused charge leaves
/// them untouched).
#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    epsilon: f64,
    delta: f64,
    rho: f64,
    steps: u64,
    /// Σ Rᵢ(α) at a Rényi filter's order.
    filter_sum: f64,
    /// Already above the budget (an analyst's share lowered below what was spent):
    /// every further charge is refused.
    over: bool,
}

#[derive(Debug, Default)]
struct State {
    totals: Totals,
    ledger: Vec<LedgerEntry>,
    /// The sequence number of the last ledger record applied (0: none).
    synced: u64,
    /// The analyst's share and its own accountant, replaying the analyst's charges.
    share: Option<(PrivacyLoss, Box<Accountant>)>,
}

/// Which sessions the accountant's guarantee covers (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Adaptivity {
    /// Composition of a sequence of mechanisms fixed in advance (the queries they answer
    /// may be adaptive): the default, and the only mode for a declared [`Plan`].
    #[default]
    FixedSequence,
    /// A privacy filter: the budget holds even when each mechanism and its parameters
    /// (its ε, δ or ρ) are chosen from earlier outputs.
    Filter,
}

/// A thread-safe privacy budget (`Send + Sync`, a `Mutex` inside). Deliberately not
/// `Clone`: a copy would let the same budget be spent twice. Share it with `Arc`.
#[derive(Debug)]
pub struct Accountant {
    budget: PrivacyLoss,
    plan: Option<Plan>,
    adaptivity: Adaptivity,
    /// The Rényi filter of an `(ε, δ)` budget (δ > 0) in [`Adaptivity::Filter`] mode.
    renyi: Option<RenyiFilter>,
    relation: Neighbouring,
    state: Mutex<State>,
    /// The durable ledger, if any: charges are committed there before they count.
    store: Option<Box<dyn LedgerStore>>,
}

impl Accountant {
    /// An accountant for a total budget: `Pure`, `Approximate`, `Zcdp` or
    /// `ApproximateZcdp` (validated; `ApproximateZcdp` with δ = 0 is the `Zcdp` budget).
    /// A `RandomDp` budget is an [`Error::IncompatibleLoss`].
    ///
    /// # Errors
    ///
    /// The variant of an invalid field ([`Error::InvalidEpsilon`], [`Error::InvalidDelta`],
    /// [`Error::InvalidRho`], [`Error::InvalidParameter`] for γ) of `budget`;
    /// [`Error::IncompatibleLoss`] for a random-DP budget.
    pub fn new(budget: PrivacyLoss) -> Result<Self, Error> {
        let budget = as_zcdp_if_no_delta(validate_loss(budget)?);
        if matches!(budget, PrivacyLoss::RandomDp { .. }) {
            return Err(Error::IncompatibleLoss {
                reason: "an accountant budget must be a worst-case guarantee, not random DP",
            });
        }
        Ok(Self {
            budget,
            plan: None,
            adaptivity: Adaptivity::FixedSequence,
            renyi: None,
            relation: Neighbouring::AddRemove,
            state: Mutex::new(State::default()),
            store: None,
        })
    }

    /// A **privacy filter** for `budget`: the guarantee holds for adaptively chosen
    /// releases — each mechanism and its ε, δ or ρ may depend on earlier outputs — and
    /// a charge that would exceed the budget is refused before anything is drawn.
    ///
    /// | budget | rule | why it is a filter |
    /// | --- | --- | --- |
    /// | pure ε | Σε ≤ ε (as [`Accountant::pure`]) | basic composition is a valid filter (Rogers, Roth, Ullman & Vadhan 2016) |
    /// | ρ-zCDP | Σρ ≤ ρ, pure ε counted as ε²/2 (as [`Accountant::zcdp`]) | a Rényi filter at every order α at once (Feldman & Zrnic 2021, Thm 3.1) |
    /// | `(ε, δ)`, δ > 0 | Rényi filter: `Σ Rᵢ(α) ≤ B(α)` at one order α | Feldman & Zrnic 2021, Thm 3.1, then the RDP → `(ε, δ)` conversion of Canonne, Kamath & Steinke 2020 |
    ///
    /// For an `(ε, δ)` budget the order α is the one of [`ORDERS`](super::rdp::ORDERS)
    /// maximising `B(α)/α` (chosen from the budget alone), with
    /// `B = ε − ln(1 − 1/α) − (ln(1/δ) − ln α)/(α − 1)` rounded down. A pure ε-DP charge
    /// counts its RDP bound at α (that of randomized response, which dominates every
    /// ε-DP mechanism), a ρ-zCDP charge `αρ`; an `(ε, δ)` charge with δ > 0 has no RDP
    /// bound and is refused ([`Error::IncompatibleLoss`]). Many small charges then cost
    /// about their square-root sum instead of Σε; a few large ones may cost more than
    /// Σε, which [`Accountant::approximate`] (basic composition, also a valid filter)
    /// would give. [`spent`](Self::spent) is the filter's sum converted at the budget's δ,
    /// [`remaining`](Self::remaining) the largest ρ-zCDP charge that still fits.
    ///
    /// ```
    /// use dpmech::composition::Adaptivity;
    /// use dpmech::{Accountant, Laplace, PrivacyLoss};
    /// use rand_chacha::ChaCha20Rng;
    /// use rand_core::SeedableRng;
    /// let acc = Accountant::filter(PrivacyLoss::approximate(1.0, 1e-6)?)?;
    /// assert_eq!(acc.adaptivity(), Adaptivity::Filter);
    /// let mut rng = ChaCha20Rng::seed_from_u64(5);
    /// let (mut eps, mut n) = (0.05, 0);
    /// // The next ε depends on the last output: only a filter's guarantee covers this.
    /// while let Ok(y) = acc.release(&Laplace::new(1.0, eps)?, 10.0, &mut rng) {
    ///     eps = if y > 10.0 { 0.03 } else { 0.06 };
    ///     n += 1;
    /// }
    /// assert!(acc.spent().epsilon().unwrap() <= 1.0);
    /// assert!(n > 20); // Σε of the accepted releases exceeds 1
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`Accountant::new`]; for an `(ε, δ)` budget with δ > 0,
    /// [`Error::Unattainable`] if no order leaves a positive RDP budget (ε far below
    /// `ln(1/δ)/4096`); [`Error::IncompatibleLoss`] for an approximate-zCDP budget with
    /// δ > 0 (this crate has no filter theorem for approximate zCDP: use
    /// [`Accountant::approximate_zcdp`], whose guarantee needs the charges' ρ and δ fixed
    /// up front).
    pub fn filter(budget: PrivacyLoss) -> Result<Self, Error> {
        let mut acc = Self::new(budget)?;
        if matches!(acc.budget, PrivacyLoss::ApproximateZcdp { .. }) {
            return Err(Error::IncompatibleLoss {
                reason: "no privacy filter for approximate zCDP is established: use \
                         Accountant::approximate_zcdp with charges fixed up front",
            });
        }
        acc.adaptivity = Adaptivity::Filter;
        if let PrivacyLoss::Approximate { epsilon, delta } = acc.budget
            && delta > 0.0
        {
            acc.renyi = Some(RenyiFilter::best(epsilon, delta)?);
        }
        Ok(acc)
    }

    /// Which sessions the guarantee covers: [`Adaptivity::Filter`] for an accountant
    /// built by [`Accountant::filter`], else [`Adaptivity::FixedSequence`].
    pub fn adaptivity(&self) -> Adaptivity {
        self.adaptivity
    }

    /// Under a Rényi filter ([`Accountant::filter`] of an `(ε, δ)` budget, δ > 0): its
    /// order α, running sum `Σ Rᵢ(α)` and RDP budget `B`; `None` otherwise.
    pub fn filter_level(&self) -> Option<(f64, f64, f64)> {
        self.renyi
            .map(|f| (f.order(), self.lock().totals.filter_sum, f.budget))
    }

    /// A pure ε budget (sequential composition).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive.
    pub fn pure(epsilon: f64) -> Result<Self, Error> {
        Self::new(PrivacyLoss::pure(epsilon)?)
    }

    /// An (ε, δ) budget (sequential composition of ε and of δ).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidDelta`] if `delta` is not in [0, 1).
    pub fn approximate(epsilon: f64, delta: f64) -> Result<Self, Error> {
        Self::new(PrivacyLoss::approximate(epsilon, delta)?)
    }

    /// A ρ-zCDP budget (Σρ; pure charges count ε²/2).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRho`] if `rho` is not finite and positive.
    pub fn zcdp(rho: f64) -> Result<Self, Error> {
        Self::new(PrivacyLoss::zcdp(rho)?)
    }

    /// A δ-approximate ρ-zCDP budget (Σρ and Σδ, Bun & Steinke 2016, Lemma 8.3): accepts
    /// approximate-zCDP charges, zCDP charges (δ = 0) and pure charges (ρ = ε²/2, δ = 0);
    /// refuses `(ε, δ)` charges. It is what partition selection under zCDP spends.
    ///
    /// ```
    /// use dpmech::{Accountant, PrivacyLoss};
    /// let acc = Accountant::approximate_zcdp(1.0, 1e-5)?;
    /// acc.spend(PrivacyLoss::approximate_zcdp(0.5, 4e-6)?)?;
    /// acc.spend(PrivacyLoss::pure(0.5)?)?; // ρ = 0.125, δ = 0
    /// assert_eq!(acc.spent(), PrivacyLoss::ApproximateZcdp { rho: 0.625, delta: 4e-6 });
    /// assert!(acc.spend(PrivacyLoss::approximate(0.1, 1e-9)?).is_err()); // no (ε, δ) charges
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRho`] if `rho` is not finite and positive; [`Error::InvalidDelta`]
    /// if `delta` is not in (0, 1).
    pub fn approximate_zcdp(rho: f64, delta: f64) -> Result<Self, Error> {
        Self::new(PrivacyLoss::approximate_zcdp(rho, delta)?)
    }

    /// An accountant for a plan declared up front: at most `plan.steps` charges, each a
    /// pure ε ≤ `plan.per_step_epsilon` (counted as ε₀). Its [`Accountant::budget`] is
    /// [`Plan::total`]. For a plan of *heterogeneous* mechanisms composed by their
    /// privacy loss distributions (far tighter), use
    /// [`PldAccountant`](crate::composition::pld::PldAccountant).
    ///
    /// ```
    /// use dpmech::{Accountant, PrivacyLoss};
    /// use dpmech::composition::{Plan, PlanRule};
    /// let plan = Plan { steps: 2, per_step_epsilon: 0.1, rule: PlanRule::Advanced { delta_slack: 1e-6 } };
    /// let acc = Accountant::with_plan(plan)?;
    /// acc.spend(PrivacyLoss::pure(0.1)?)?;
    /// acc.spend(PrivacyLoss::pure(0.05)?)?; // smaller is fine, counted as 0.1
    /// assert!(acc.spend(PrivacyLoss::pure(0.1)?).is_err()); // the plan had two steps
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`Plan::total`].
    pub fn with_plan(plan: Plan) -> Result<Self, Error> {
        let budget = plan.total()?;
        Ok(Self {
            budget,
            plan: Some(plan),
            adaptivity: Adaptivity::FixedSequence,
            renyi: None,
            relation: Neighbouring::AddRemove,
            state: Mutex::new(State::default()),
            store: None,
        })
    }

    /// The same accountant for datasets that are neighbours under `relation` (the
    /// default is [`Neighbouring::AddRemove`]). Every charge whose guarantee is stated
    /// for another relation is converted first (a [`Charge`] with a relation): an
    /// add/remove guarantee counts double under substitution (group privacy, see
    /// [`convert_loss`](crate::sensitivity::convert_loss)); a substitution-only guarantee (e.g. a mean over a public
    /// count) cannot be charged to an add/remove budget and is refused.
    ///
    /// ```
    /// use dpmech::composition::Charge;
    /// use dpmech::{Accountant, PrivacyLoss};
    /// use dpmech::sensitivity::Neighbouring::{AddRemove, Substitute};
    /// let acc = Accountant::pure(1.0)?.with_relation(Substitute);
    /// acc.spend(Charge::new(PrivacyLoss::pure(0.25)?).relation(AddRemove))?; // counts 0.5
    /// assert_eq!(acc.remaining(), PrivacyLoss::pure(0.5)?);
    /// let unbounded = Accountant::pure(1.0)?; // add/remove
    /// assert!(unbounded.spend(Charge::new(PrivacyLoss::pure(0.25)?).relation(Substitute)).is_err());
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    pub fn with_relation(mut self, relation: Neighbouring) -> Self {
        self.relation = relation;
        self
    }

    /// The neighbouring relation this budget protects (see [`Accountant::with_relation`]).
    pub fn relation(&self) -> Neighbouring {
        self.relation
    }

    /// The total budget (for a plan: the guarantee of the whole plan).
    pub fn budget(&self) -> PrivacyLoss {
        self.budget
    }

    /// The declared plan, if this accountant was built with one.
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_ref()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is only modified after every check passed, so it is consistent
        // even if a thread panicked while holding the lock.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Accountant {
    /// Atomically charges a guarantee — a [`PrivacyLoss`], or a [`Charge`] of one with a
    /// ledger label and/or the neighbouring relation it was stated for (converted to this
    /// budget's [`relation`](Accountant::relation) first; the ledger keeps both) — or
    /// refuses with [`Error::BudgetExceeded`] (naming the requested and remaining budget)
    /// and charges nothing. Call it before the release it pays for draws anything
    /// ([`release`](Self::release) does both).
    ///
    /// ```
    /// use dpmech::composition::Charge;
    /// use dpmech::{Accountant, PrivacyLoss};
    /// let acc = Accountant::pure(1.0)?;
    /// acc.spend(PrivacyLoss::pure(0.25)?)?;
    /// acc.spend(Charge::new(PrivacyLoss::pure(0.5)?).labelled("mean age"))?;
    /// // A third charge of 0.5 would exceed the budget: refused, nothing charged.
    /// assert!(matches!(acc.spend(PrivacyLoss::pure(0.5)?), Err(dpmech::Error::BudgetExceeded { .. })));
    /// assert_eq!(acc.remaining(), PrivacyLoss::Pure { epsilon: 0.25 });
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// * the variant of an invalid field ([`Error::InvalidEpsilon`], [`Error::InvalidDelta`],
    ///   [`Error::InvalidRho`], [`Error::InvalidParameter`] for γ) of the loss, or when
    ///   converting it to this budget's relation or kind takes a parameter out of its
    ///   domain (e.g. `(1 + e^ε)δ ≥ 1`, or ε²/2 = +∞);
    /// * [`Error::IncompatibleLoss`] if the loss is random DP, is stated only for
    ///   substitution while the budget protects add/remove, or is of a kind the budget does
    ///   not accept (see the [module docs](self); a plan accepts pure DP only, a Rényi
    ///   filter no `(ε, δ)` with δ > 0);
    /// * [`Error::BudgetExceeded`] if it does not fit what is left (for a plan: ε above ε₀,
    ///   or no step left).
    ///
    /// Nothing is charged when an error is returned.
    pub fn spend(&self, charge: impl Into<Charge>) -> Result<(), Error> {
        let charge = charge.into();
        let stated = charge.stated_relation().unwrap_or(self.relation);
        self.charge_stated(charge.loss(), stated, charge.label())
    }

    release_method! {
        /// Charges `mechanism`'s [`privacy_loss`](crate::Mechanism::privacy_loss), then
        /// releases `input` through it: the one generic path from a budget to a private
        /// output. A refused charge returns the error before any randomness is drawn.
        /// `mechanism` is a `&M` (the ledger entry is labelled with its type name, its guarantee taken as
        /// stated for this budget's relation) or a [`Charge::of`] it with a label and/or
        /// the relation its guarantee was stated for (e.g. calibrated to a sensitivity under
        /// that relation: converted as in [`spend`](Self::spend); the `statistics` releases
        /// go through it). An input the mechanism refuses (e.g. a non-finite query answer)
        /// is refused after the charge, which is not refunded: that errs on the safe side.
        ///
        /// ```
        /// use dpmech::{Accountant, Laplace, Mechanism};
        /// use dpmech::audit::CountingRng;
        /// use rand_chacha::ChaCha20Rng;
        /// use rand_core::SeedableRng;
        /// let accountant = Accountant::pure(1.0)?;
        /// let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(1));
        /// let mean_age = Laplace::new(0.1, 0.75)?;
        /// accountant.release(&mean_age, 38.2, &mut rng)?;
        /// // A second release would overspend: refused before any randomness is drawn.
        /// let draws = rng.draws();
        /// assert!(accountant.release(&mean_age, 38.2, &mut rng).is_err());
        /// assert_eq!(rng.draws(), draws);
        /// assert_eq!(accountant.ledger()[0].label.as_deref(), Some("Laplace"));
        /// # Ok::<(), dpmech::Error>(())
        /// ```
        ///
        /// # Errors
        ///
        /// As [`Accountant::spend`] for the mechanism's
        /// [`privacy_loss`](crate::Mechanism::privacy_loss), before anything is drawn; then
        /// the error of [`Mechanism::release`](crate::Mechanism::release) if the mechanism
        /// refuses `input` (the charge is not refunded).
    }

    /// Charges a mechanism's guarantee for [`release`](Self::release), labelled with
    /// `type_label` unless the charge has a label.
    fn charge_for(&self, charge: Charge, type_label: &str) -> Result<(), Error> {
        let stated = charge.stated_relation().unwrap_or(self.relation);
        self.charge_stated(charge.loss(), stated, Some(charge.label().unwrap_or(type_label)))
    }

    /// What is left, rounded down. Same kind as the budget; for a plan, `Pure { ε₀ }`
    /// while steps remain (the largest single charge allowed) and `Pure { 0 }` after;
    /// under a Rényi filter ([`Accountant::filter`] of an `(ε, δ)` budget), `Zcdp { ρ }`
    /// for the largest ρ-zCDP charge that still fits (`Σ Rᵢ(α) + αρ ≤ B`).
    pub fn remaining(&self) -> PrivacyLoss {
        let state = self.lock();
        self.remaining_locked(&state.totals)
    }

    /// What was spent, rounded up. Same kind as the budget (a zero charge total is
    /// reported with ε, δ or ρ = 0). For a plan: the guarantee of the steps taken so far
    /// under the plan's rule (`Pure { 0 }` before the first). Under a Rényi filter: the
    /// filter's sum converted at the budget's δ, `Approximate { ε, δ }` (`(0, 0)` before
    /// the first charge) — how much of the budget the filter has used; the guarantee of
    /// the adaptive session is the budget.
    pub fn spent(&self) -> PrivacyLoss {
        let state = self.lock().totals;
        if let (Some(filter), PrivacyLoss::Approximate { delta, .. }) = (&self.renyi, self.budget) {
            if state.steps == 0 {
                return PrivacyLoss::Approximate {
                    epsilon: 0.0,
                    delta: 0.0,
                };
            }
            return PrivacyLoss::Approximate {
                epsilon: filter.epsilon(state.filter_sum, delta),
                delta,
            };
        }
        if let Some(plan) = &self.plan {
            if state.steps == 0 {
                return PrivacyLoss::Pure { epsilon: 0.0 };
            }
            let prefix = Plan {
                steps: state.steps,
                ..*plan
            };
            return prefix.total().unwrap_or(self.budget);
        }
        match self.budget {
            PrivacyLoss::Pure { .. } => PrivacyLoss::Pure {
                epsilon: state.epsilon,
            },
            PrivacyLoss::Approximate { .. } => PrivacyLoss::Approximate {
                epsilon: state.epsilon,
                delta: state.delta,
            },
            PrivacyLoss::ApproximateZcdp { .. } => PrivacyLoss::ApproximateZcdp {
                rho: state.rho,
                delta: state.delta,
            },
            _ => PrivacyLoss::Zcdp { rho: state.rho },
        }
    }

    /// The number of accepted charges.
    pub fn charges(&self) -> u64 {
        self.lock().totals.steps
    }

    /// A copy of the ledger: every accepted charge, in order.
    pub fn ledger(&self) -> Vec<LedgerEntry> {
        self.lock().ledger.clone()
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn accountant_is_send_and_sync() {
        assert_send_sync::<Accountant>();
    }

    #[test]
    fn kinds_and_conversions() {
        let z = Accountant::zcdp(1.0).unwrap();
        z.spend(PrivacyLoss::pure(1.0).unwrap()).unwrap(); // counts 0.5
        assert_eq!(z.spent(), PrivacyLoss::Zcdp { rho: 0.5 });
        assert!(matches!(
            z.spend(PrivacyLoss::approximate(0.1, 1e-6).unwrap()),
            Err(Error::IncompatibleLoss { .. })
        ));
        let p = Accountant::pure(1.0).unwrap();
        assert!(matches!(
            p.spend(PrivacyLoss::RandomDp {
                epsilon: 0.1,
                gamma: 0.05
            }),
            Err(Error::IncompatibleLoss { .. })
        ));
        assert!(matches!(
            p.spend(PrivacyLoss::Pure { epsilon: f64::NAN }),
            Err(Error::InvalidEpsilon { .. })
        ));
        let a = Accountant::approximate(1.0, 1e-6).unwrap();
        a.spend(Charge::new(PrivacyLoss::pure(0.5).unwrap()).labelled("q1"))
            .unwrap();
        a.spend(PrivacyLoss::approximate(0.5, 1e-6).unwrap()).unwrap();
        assert!(matches!(
            a.spend(PrivacyLoss::approximate(1e-9, 1e-12).unwrap()),
            Err(Error::BudgetExceeded { .. })
        ));
        let ledger = a.ledger();
        assert_eq!(ledger.len(), 2);
        assert_eq!(ledger[0].label.as_deref(), Some("q1"));
        assert!(
            Accountant::new(PrivacyLoss::RandomDp {
                epsilon: 1.0,
                gamma: 0.1
            })
            .is_err()
        );
    }

    #[test]
    fn refusal_charges_nothing_and_names_the_remaining_budget() {
        let acc = Accountant::pure(1.0).unwrap();
        acc.spend(PrivacyLoss::pure(0.75).unwrap()).unwrap();
        let err = acc.spend(PrivacyLoss::pure(0.5).unwrap()).unwrap_err();
        assert_eq!(
            err,
            Error::BudgetExceeded {
                requested: PrivacyLoss::Pure { epsilon: 0.5 },
                remaining: PrivacyLoss::Pure { epsilon: 0.25 },
            }
        );
        assert_eq!(acc.spent(), PrivacyLoss::Pure { epsilon: 0.75 });
        acc.spend(PrivacyLoss::pure(0.25).unwrap()).unwrap();
        assert_eq!(acc.remaining(), PrivacyLoss::Pure { epsilon: 0.0 });
    }

    #[test]
    fn rounding_can_only_refuse() {
        // In binary, 0.1 + 0.2 = 0.3000000000000000166… exceeds the float 0.3 =
        // 0.2999999999999999888…: the exact total would overspend, so it is refused
        // (a naive `sum <= budget + tolerance` check would have allowed it).
        let acc = Accountant::pure(0.3).unwrap();
        acc.spend(PrivacyLoss::pure(0.1).unwrap()).unwrap();
        assert!(matches!(
            acc.spend(PrivacyLoss::pure(0.2).unwrap()),
            Err(Error::BudgetExceeded { .. })
        ));
        // What `remaining()` reports can always be spent, and then nothing is left.
        let rest = acc.remaining();
        acc.spend(rest).unwrap();
        assert!(acc.spend(PrivacyLoss::pure(f64::MIN_POSITIVE).unwrap()).is_err());
    }
}
