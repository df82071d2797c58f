//! Online accounting: releases charged one at a time, each refused **before** it draws
//! noise when it would exceed the budget, under one of two rules.
//!
//! # Which guarantee holds in which mode
//!
//! * [`Rule::FixedSequence`] — **non-adaptive composition.** A charge is accepted when
//!   the composition of every accepted release and the new one is within the budget
//!   `(ε, δ)`, by the best certified answer the crate has: the PLD composition
//!   ([`Pld::epsilon_certified`]), never above the closed forms (optimal, advanced,
//!   sequential, zCDP, RDP; see [`super::closed`]). This is valid when the **sequence of
//!   mechanisms and their parameters is fixed in advance** (the queries they answer may
//!   still be chosen adaptively, Zhu, Dong & Wang 2022, Thm 10) — e.g. a notebook that
//!   replays a planned list. If the next mechanism or its noise level is chosen from
//!   earlier outputs, this rule does **not** apply: composition theorems for fixed
//!   sequences can fail when the parameters themselves are adaptive (Rogers, Roth,
//!   Ullman & Vadhan 2016).
//! * [`Rule::RenyiFilter`] — **fully adaptive.** A Rényi privacy filter (Feldman &
//!   Zrnic 2021, Thm 3.1): at one order α fixed up front, the filter keeps the running
//!   sum `Σᵢ Rᵢ(α)` of the releases' RDP bounds, where each `Rᵢ` may depend on every
//!   earlier output, and refuses a release when the sum would exceed
//!   `B = ε − ln(1 − 1/α) − (ln(1/δ) − ln α)/(α − 1)` (rounded down). Whatever the
//!   analyst's adaptive strategy, the whole interaction is then `(α, B)`-RDP, hence
//!   `(ε, δ)`-DP by the conversion of Canonne, Kamath & Steinke 2020 (Prop. 12). Only
//!   releases with an RDP bound can be charged (an `(ε, δ)` release with δ > 0 is
//!   refused with [`Error::IncompatibleLoss`]).
//!
//! Both modes also keep the non-adaptive composition of the releases accepted so far,
//! [`OnlineAccountant::spent_fixed_sequence`], for comparison: under the filter it is
//! what the same releases would cost had they been declared in advance, **not** a
//! guarantee for the adaptive session.
//!
//! The accountant is thread-safe: a charge holds a lock from the check to the record,
//! and a refused charge records nothing. It charges like the other accountants
//! (see [`Charge`]): [`OnlineAccountant::spend`] a [`Release`] description, or
//! [`OnlineAccountant::release`] a mechanism.
//!
//! ```
//! use dpmech::composition::online::OnlineAccountant;
//! use dpmech::{DefaultRng, Error, Laplace};
//! let acc = OnlineAccountant::renyi_filter(1.0, 1e-6)?;
//! let mut rng = DefaultRng::from_os()?;
//! let mut eps = 0.1;
//! let mut answers = 0;
//! // The next ε is chosen from the last output: only the filter is valid here.
//! let refusal = loop {
//!     match acc.release(&Laplace::new(1.0, eps)?, 12.0, &mut rng) {
//!         Ok(y) => eps = if y > 12.0 { 0.05 } else { 0.1 },
//!         Err(e) => break e,
//!     }
//!     answers += 1;
//! };
//! assert!(matches!(refusal, Error::BudgetExceeded { .. }));
//! assert!(answers > 0 && acc.charges() == answers);
//! assert!(acc.spent(1e-6)?.epsilon <= 1.0);
//! # Ok::<(), dpmech::Error>(())
//! ```

use std::sync::{Mutex, MutexGuard};

use super::charge::{Charge, no_relation, release_method};
use super::closed::{Bound, Certified, ClosedForms};
use super::pld::{Grid, Pld};
use super::rdp::{ORDERS, RdpCurve};
use crate::Error;
use crate::privacy::round::{add_up, div_up, ln_down, ln_up, sub_up};
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon};

/// One release as the online accountant sees it: its PLD (when the crate has one) and
/// its closed-form certificates (pure ε, ρ, RDP curve, (ε, δ)).
#[derive(Debug, Clone)]
pub struct Release {
    pld: Option<Pld>,
    closed: ClosedForms,
}

impl Release {
    /// A release described by a PLD and the closed forms it carries.
    pub fn from_pld(pld: Pld) -> Self {
        Release {
            closed: pld.closed_forms().clone(),
            pld: Some(pld),
        }
    }

    /// The Laplace mechanism at `ε = Δ/b` (PLD at the default grid, RDP of Mironov 2017).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700 (the PLD builders' limit).
    pub fn laplace(epsilon: f64) -> Result<Self, Error> {
        Ok(Self::from_pld(Pld::laplace(epsilon, Grid::default())?))
    }

    /// The Gaussian mechanism with noise σ and L2 sensitivity Δ.
    ///
    /// # Errors
    ///
    /// Those of [`Pld::gaussian`]: [`Error::InvalidParameter`] (`scale`) if `sigma` is not
    /// finite and positive, (`sigma`) if `Δ/σ` is above 10⁶; [`Error::InvalidSensitivity`]
    /// if `sensitivity` is not finite and positive.
    pub fn gaussian(sigma: f64, sensitivity: f64) -> Result<Self, Error> {
        Ok(Self::from_pld(Pld::gaussian(
            sigma,
            sensitivity,
            Grid::default(),
        )?))
    }

    /// The Gaussian mechanism on a Poisson sample of rate q (add/remove neighbours).
    ///
    /// # Errors
    ///
    /// Those of [`Pld::poisson_subsampled_gaussian`]: [`Error::InvalidParameter`] for `q`
    /// outside (0, 1], a `sigma` that is not finite and positive, or too little noise;
    /// [`Error::InvalidSensitivity`] if `sensitivity` is not finite and positive.
    pub fn poisson_subsampled_gaussian(sigma: f64, sensitivity: f64, q: f64) -> Result<Self, Error> {
        Ok(Self::from_pld(Pld::poisson_subsampled_gaussian(
            sigma,
            sensitivity,
            q,
            Grid::default(),
        )?))
    }

    /// Binary randomized response at ε.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700 (the PLD builders' limit).
    pub fn randomized_response(epsilon: f64) -> Result<Self, Error> {
        Ok(Self::from_pld(Pld::randomized_response(
            epsilon,
            Grid::default(),
        )?))
    }

    /// Any pure ε-DP mechanism (its worst case, randomized response).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700 (the PLD builders' limit).
    pub fn pure(epsilon: f64) -> Result<Self, Error> {
        Ok(Self::from_pld(Pld::pure(epsilon, Grid::default())?))
    }

    /// Any (ε, δ)-DP mechanism (δ > 0 has no RDP bound: the Rényi filter refuses it).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDelta`] if `delta` is not in [0, 1); [`Error::InvalidEpsilon`] if
    /// `epsilon` is not finite and positive; [`Error::InvalidParameter`] (`epsilon`) if it
    /// is above 700 (the PLD builders' limit).
    pub fn approximate(epsilon: f64, delta: f64) -> Result<Self, Error> {
        Ok(Self::from_pld(Pld::approximate(epsilon, delta, Grid::default())?))
    }

    /// Any ρ-zCDP mechanism: no PLD (zCDP does not determine one), RDP curve `αρ`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRho`] if `rho` is not finite and positive.
    pub fn zcdp(rho: f64) -> Result<Self, Error> {
        Ok(Release {
            pld: None,
            closed: ClosedForms::zcdp(rho)?,
        })
    }

    /// Any mechanism with guarantee `loss`, described by the worst case of that guarantee:
    /// [`pure`](Self::pure) for ε-DP (also `(ε, 0)`), [`approximate`](Self::approximate)
    /// for `(ε, δ)`, [`zcdp`](Self::zcdp) for ρ-zCDP (also approximate zCDP with δ = 0).
    ///
    /// # Errors
    ///
    /// Those of the constructor used; [`Error::IncompatibleLoss`] for random DP (a
    /// guarantee over a data distribution, not a worst case) and for approximate zCDP
    /// with δ > 0 (neither a PLD nor an RDP curve: convert it to `(ε, δ)` first with
    /// [`approximate_zcdp_to_dp`](super::zcdp::approximate_zcdp_to_dp)).
    pub fn from_loss(loss: PrivacyLoss) -> Result<Self, Error> {
        match loss {
            PrivacyLoss::Pure { epsilon } | PrivacyLoss::Approximate { epsilon, delta: 0.0 } => {
                Self::pure(epsilon)
            }
            PrivacyLoss::Approximate { epsilon, delta } => Self::approximate(epsilon, delta),
            PrivacyLoss::Zcdp { rho } | PrivacyLoss::ApproximateZcdp { rho, delta: 0.0 } => Self::zcdp(rho),
            PrivacyLoss::ApproximateZcdp { .. } => Err(Error::IncompatibleLoss {
                reason: "an approximate-zCDP release has neither a PLD nor an RDP curve (its delta part \
                         bounds nothing): convert it with composition::zcdp::approximate_zcdp_to_dp first",
            }),
            PrivacyLoss::RandomDp { .. } => Err(Error::IncompatibleLoss {
                reason: "random-DP releases cannot be counted against a worst-case budget",
            }),
        }
    }

    /// A mechanism known only by its RDP curve.
    pub fn rdp(curve: RdpCurve) -> Self {
        Release {
            pld: None,
            closed: ClosedForms::rdp(curve),
        }
    }

    /// The release's RDP curve, if it has one.
    pub fn rdp_curve(&self) -> Option<&RdpCurve> {
        self.closed.rdp_curve()
    }

    /// The release's PLD, if it has one.
    pub fn pld(&self) -> Option<&Pld> {
        self.pld.as_ref()
    }
}

/// The rule by which an [`OnlineAccountant`] accepts charges (see the
/// [module docs](self) for which guarantee holds in which mode).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// Composition of a sequence fixed in advance (PLD and closed forms).
    FixedSequence,
    /// A Rényi filter at one order α (Feldman & Zrnic 2021): valid for adaptively chosen
    /// mechanisms and parameters.
    RenyiFilter {
        /// The order α (one of [`ORDERS`]).
        order: f64,
        /// The RDP budget `B` at α that converts to the accountant's `(ε, δ)`.
        budget: f64,
    },
}

#[derive(Debug, Clone, Default)]
struct State {
    /// Composed PLD of the accepted releases, while every one had a PLD.
    pld: Option<Pld>,
    /// Whether some accepted release had no PLD.
    pld_lost: bool,
    /// Composed closed forms of the accepted releases (`None` before the first).
    closed: Option<ClosedForms>,
    /// Σ Rᵢ(α) at the filter's order.
    filter_sum: f64,
    charges: u64,
}

/// An accountant charged one release at a time (see the [module docs](self)).
#[derive(Debug)]
pub struct OnlineAccountant {
    epsilon: f64,
    delta: f64,
    /// The Rényi filter, or `None` for the fixed-sequence rule.
    filter: Option<RenyiFilter>,
    state: Mutex<State>,
}

/// A Rényi filter (Feldman & Zrnic 2021, Thm 3.1) at one order α of [`ORDERS`]: the
/// RDP budget `B = ε − ln(1 − 1/α) − (ln(1/δ) − ln α)/(α − 1)` (rounded down) that the
/// running sum `Σᵢ Rᵢ(α)` of adaptively chosen releases may not exceed. Shared by the
/// [`OnlineAccountant`] and the [`Accountant`](super::Accountant)'s filter mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RenyiFilter {
    /// Index of the order in [`ORDERS`].
    pub(crate) index: usize,
    /// The RDP budget `B` at that order.
    pub(crate) budget: f64,
}

impl RenyiFilter {
    /// The filter at the order of [`ORDERS`] that leaves the most Gaussian-like budget,
    /// i.e. maximises `B(α)/α` (a public choice, from the budget alone).
    pub(crate) fn best(epsilon: f64, delta: f64) -> Result<Self, Error> {
        let mut best: Option<(usize, f64)> = None;
        for (i, &a) in ORDERS.iter().enumerate() {
            let b = RdpCurve::budget_at(i, epsilon, delta)?;
            if b > 0.0 && best.is_none_or(|(_, s)| b / a > s) {
                best = Some((i, b / a));
            }
        }
        let (index, _) = best.ok_or(Error::Unattainable {
            what: "no Renyi order leaves a positive budget for this (epsilon, delta)",
        })?;
        Self::at(epsilon, delta, ORDERS[index])
    }

    /// The filter at `order`, one of [`ORDERS`] leaving a positive budget.
    pub(crate) fn at(epsilon: f64, delta: f64, order: f64) -> Result<Self, Error> {
        let index = ORDERS
            .iter()
            .position(|&a| a == order)
            .ok_or(Error::InvalidParameter {
                name: "order",
                value: order,
                reason: "the filter's order must be one of composition::rdp::ORDERS",
            })?;
        let budget = RdpCurve::budget_at(index, epsilon, delta)?;
        if budget.is_nan() || budget <= 0.0 {
            return Err(Error::Unattainable {
                what: "this Renyi order leaves no positive budget for this (epsilon, delta)",
            });
        }
        Ok(RenyiFilter { index, budget })
    }

    /// The order α.
    pub(crate) fn order(&self) -> f64 {
        ORDERS[self.index]
    }

    /// The running sum after one more release of RDP level `r` (rounded up): `Ok` when
    /// it stays within the budget, `Err` with the sum that would exceed it.
    pub(crate) fn add(&self, sum: f64, r: f64) -> Result<f64, f64> {
        let next = add_up(sum, r);
        if next.is_nan() || next > self.budget {
            Err(next)
        } else {
            Ok(next)
        }
    }

    /// The ε that a running sum `r` converts to at `δ` (rounded up).
    pub(crate) fn epsilon(&self, r: f64, delta: f64) -> f64 {
        let a = self.order();
        let num = sub_up(-ln_down(delta), ln_down(a));
        let ln_factor = ln_up(sub_up(1.0, crate::privacy::round::div_down(1.0, a)));
        add_up(add_up(r, ln_factor), div_up(num, a - 1.0)).max(0.0)
    }

    /// The largest ρ whose zCDP release (RDP `αρ`) still fits after `sum` (rounded down).
    pub(crate) fn remaining_rho(&self, sum: f64) -> f64 {
        crate::privacy::round::div_down(crate::privacy::round::sub_down(self.budget, sum), self.order())
            .max(0.0)
    }
}

/// The result of composing one more release onto a state (nothing recorded yet).
struct Candidate {
    pld: Option<Pld>,
    pld_lost: bool,
    closed: ClosedForms,
}

impl OnlineAccountant {
    /// An accountant with budget `(ε, δ)` under [`Rule::FixedSequence`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidDelta`] if `delta` is not in (0, 1).
    pub fn fixed_sequence(epsilon: f64, delta: f64) -> Result<Self, Error> {
        Self::with_filter(epsilon, delta, None)
    }

    fn with_filter(epsilon: f64, delta: f64, filter: Option<RenyiFilter>) -> Result<Self, Error> {
        Ok(OnlineAccountant {
            epsilon: check_epsilon(epsilon)?,
            delta: check_delta(delta)?,
            filter,
            state: Mutex::new(State::default()),
        })
    }

    /// An accountant with budget `(ε, δ)` under a Rényi filter at the order of
    /// [`ORDERS`] that leaves the most Gaussian-like budget, i.e. maximises `B(α)/α`
    /// (a public choice, from the budget alone). A typed error if no order leaves a
    /// positive budget.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidDelta`] if `delta` is not in (0, 1);
    /// [`Error::Unattainable`] if no order leaves a positive budget.
    pub fn renyi_filter(epsilon: f64, delta: f64) -> Result<Self, Error> {
        Self::with_filter(epsilon, delta, Some(RenyiFilter::best(epsilon, delta)?))
    }

    /// An accountant with budget `(ε, δ)` under a Rényi filter at order `order`, which
    /// must be one of [`ORDERS`] and leave a positive budget.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`order`) if `order` is not one of [`ORDERS`];
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidDelta`] if `delta` is not in (0, 1);
    /// [`Error::Unattainable`] if the order leaves no positive budget.
    pub fn renyi_filter_at(epsilon: f64, delta: f64, order: f64) -> Result<Self, Error> {
        Self::with_filter(epsilon, delta, Some(RenyiFilter::at(epsilon, delta, order)?))
    }

    /// The rule in force.
    pub fn rule(&self) -> Rule {
        match self.filter {
            None => Rule::FixedSequence,
            Some(f) => Rule::RenyiFilter {
                order: f.order(),
                budget: f.budget,
            },
        }
    }

    /// The budget `(ε, δ)`.
    pub fn budget(&self) -> PrivacyLoss {
        PrivacyLoss::Approximate {
            epsilon: self.epsilon,
            delta: self.delta,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn candidate(state: &State, release: &Release) -> Candidate {
        let pld_lost = state.pld_lost || release.pld.is_none();
        let pld = if pld_lost {
            None
        } else {
            match (&state.pld, &release.pld) {
                // The running composition is coarsened by splitting as it spreads
                // (certified, as in `Pld::self_compose`, but finer: above 2¹³ points
                // and down to 1/64 of its spread), so each charge stays cheap (100
                // Laplace charges: about 27 ms, within 0.5 % of the uncoarsened ε).
                (Some(a), Some(b)) => Some(a.compacted(1 << 13, 64.0).compose(b)),
                (None, Some(b)) => Some(b.clone()),
                _ => None,
            }
        };
        let closed = match &state.closed {
            Some(c) => c.compose(&release.closed),
            None => release.closed.clone(),
        };
        Candidate {
            pld,
            pld_lost,
            closed,
        }
    }

    /// The best certified ε(δ) of a fixed sequence (PLD and closed forms).
    fn fixed_answer(pld: Option<&Pld>, closed: &ClosedForms, delta: f64) -> Result<Certified, Error> {
        match pld {
            Some(p) => p.epsilon_certified(delta),
            None => closed
                .epsilon(delta)?
                .map(|(epsilon, bound)| Certified {
                    epsilon,
                    delta,
                    bound,
                })
                .ok_or(Error::Unattainable {
                    what: "no rule of the crate answers for this sequence at this delta",
                }),
        }
    }

    /// Charges one release described by `release` (its PLD and closed forms): accepted
    /// and recorded when it fits the budget under the rule in force; otherwise
    /// [`Error::BudgetExceeded`] (or, under the filter, [`Error::IncompatibleLoss`] for a
    /// release without an RDP bound) and **nothing is recorded**. Call it before the
    /// release draws noise ([`release`](Self::release) does).
    ///
    /// # Errors
    ///
    /// [`Error::IncompatibleLoss`] under the filter for a release without an RDP curve;
    /// [`Error::BudgetExceeded`] if the release does not fit (under the fixed-sequence
    /// rule, also when no rule certifies the composition at the budget's δ). Nothing is
    /// recorded then.
    pub fn spend(&self, release: &Release) -> Result<(), Error> {
        let mut state = self.lock();
        let mut filter_sum = state.filter_sum;
        if let Some(filter) = &self.filter {
            let r = release
                .rdp_curve()
                .map(|c| c.at(filter.index))
                .ok_or(Error::IncompatibleLoss {
                    reason: "the Renyi filter needs an RDP bound; an (epsilon, delta) release with \
                             delta > 0 has none",
                })?;
            filter_sum = filter.add(filter_sum, r).map_err(|over| Error::BudgetExceeded {
                requested: PrivacyLoss::Approximate {
                    epsilon: filter.epsilon(over, self.delta),
                    delta: self.delta,
                },
                remaining: self.budget(),
            })?;
        }
        let candidate = Self::candidate(&state, release);
        if self.filter.is_none() {
            let answer = Self::fixed_answer(candidate.pld.as_ref(), &candidate.closed, self.delta);
            let fits = matches!(answer, Ok(c) if c.epsilon <= self.epsilon);
            if !fits {
                return Err(Error::BudgetExceeded {
                    requested: PrivacyLoss::Approximate {
                        epsilon: answer.map_or(f64::INFINITY, |c| c.epsilon),
                        delta: self.delta,
                    },
                    remaining: self.budget(),
                });
            }
        }
        state.pld = candidate.pld;
        state.pld_lost = candidate.pld_lost;
        state.closed = Some(candidate.closed);
        state.filter_sum = filter_sum;
        state.charges += 1;
        Ok(())
    }

    release_method! {
        /// Charges `mechanism` (a `&M`, or a [`Charge::of`] it), described by its
        /// [`privacy_loss`](crate::Mechanism::privacy_loss) ([`Release::from_loss`]: the
        /// worst case of its guarantee), then releases `input` through it; a refused
        /// charge draws nothing. For a tighter description (e.g. [`Release::laplace`]'s PLD instead of
        /// the worst ε-DP pair), [`spend`](Self::spend) it and call the mechanism yourself.
        /// A charge's label is not used (this accountant keeps no ledger).
        ///
        /// # Errors
        ///
        /// Those of [`Release::from_loss`] and of [`spend`](Self::spend), and
        /// [`Error::IncompatibleLoss`] if the charge states a neighbouring relation (this
        /// accountant converts none), all before anything is drawn; then the error of
        /// [`Mechanism::release`](crate::Mechanism::release) if the mechanism refuses `input`
        /// (the charge is not refunded).
    }

    /// Charges a mechanism's guarantee for [`release`](Self::release), described by
    /// [`Release::from_loss`].
    fn charge_for(&self, charge: Charge, _type_label: &str) -> Result<(), Error> {
        self.spend(&Release::from_loss(no_relation(charge)?.loss())?)
    }

    /// Number of accepted charges.
    pub fn charges(&self) -> u64 {
        self.lock().charges
    }

    /// What has been spent, at `δ`, under the rule in force:
    ///
    /// * fixed sequence: the certified composition of the accepted releases at `δ`
    ///   (as [`spent_fixed_sequence`](Self::spent_fixed_sequence));
    /// * Rényi filter: the filter's running sum at its order converted at `δ`
    ///   ([`Bound::RenyiFilter`]). The guarantee certified for the adaptive session is the
    ///   budget; this is how much of it the filter has used (a filter started with this
    ///   budget would have let the same releases through).
    ///
    /// `ε = 0` (with δ = 0) before the first charge.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDelta`] if `delta` is not in (0, 1); under the fixed-sequence rule,
    /// those of [`spent_fixed_sequence`](Self::spent_fixed_sequence).
    pub fn spent(&self, delta: f64) -> Result<Certified, Error> {
        let delta = check_delta(delta)?;
        match self.rule() {
            Rule::FixedSequence => self.spent_fixed_sequence(delta),
            Rule::RenyiFilter { .. } => {
                let state = self.lock();
                if state.charges == 0 {
                    return Ok(nothing());
                }
                Ok(Certified {
                    epsilon: self.filter.map_or(0.0, |f| f.epsilon(state.filter_sum, delta)),
                    delta,
                    bound: Bound::RenyiFilter,
                })
            }
        }
    }

    /// The certified composition of the accepted releases at `δ` **as if their sequence
    /// had been fixed in advance** (PLD, never above the closed forms): the guarantee of
    /// [`Rule::FixedSequence`]; under the filter, a comparison only.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDelta`] if `delta` is not in (0, 1); [`Error::Unattainable`] if
    /// neither the PLD nor a closed form gives a finite ε at `delta` for the accepted
    /// releases.
    pub fn spent_fixed_sequence(&self, delta: f64) -> Result<Certified, Error> {
        let delta = check_delta(delta)?;
        let state = self.lock();
        match &state.closed {
            None => Ok(nothing()),
            Some(closed) => Self::fixed_answer(state.pld.as_ref(), closed, delta),
        }
    }

    /// The filter's running sum `Σ Rᵢ(α)` and its budget `B` (`None` under
    /// [`Rule::FixedSequence`]).
    pub fn filter_level(&self) -> Option<(f64, f64)> {
        self.filter.map(|f| (self.lock().filter_sum, f.budget))
    }

    /// The index of the filter's order in [`ORDERS`] (0 under the fixed-sequence rule).
    pub fn order_index(&self) -> usize {
        self.filter.map_or(0, |f| f.index)
    }
}

fn nothing() -> Certified {
    Certified {
        epsilon: 0.0,
        delta: 0.0,
        bound: Bound::Sequential,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_refuses_releases_without_rdp_and_records_nothing() {
        let acc = OnlineAccountant::renyi_filter(1.0, 1e-6).unwrap();
        let r = Release::approximate(0.1, 1e-8).unwrap();
        assert!(matches!(acc.spend(&r), Err(Error::IncompatibleLoss { .. })));
        assert_eq!(acc.charges(), 0);
        assert_eq!(acc.spent(1e-6).unwrap().epsilon, 0.0);
        assert!(OnlineAccountant::renyi_filter_at(1.0, 1e-6, 1.3).is_err());
    }

    #[test]
    fn fixed_sequence_accepts_zcdp_without_a_pld() {
        let acc = OnlineAccountant::fixed_sequence(1.0, 1e-6).unwrap();
        acc.spend(&Release::zcdp(0.01).unwrap()).unwrap();
        acc.spend(&Release::laplace(0.1).unwrap()).unwrap();
        let spent = acc.spent(1e-6).unwrap();
        assert!(spent.epsilon > 0.0 && spent.epsilon <= 1.0, "{spent:?}");
        assert_ne!(spent.bound, Bound::Pld);
    }
}
