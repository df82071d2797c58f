//! The composition rule of each budget: what a charge counts as ([`Accountant::convert`]),
//! how it is added to the running totals, and what remains.

use super::{Accountant, LedgerEntry, Totals};
use crate::Error;
use crate::composition::rdp::RdpCurve;
use crate::composition::validate_loss;
use crate::privacy::PrivacyLoss;
use crate::privacy::round::{add_up, sub_down};
use crate::sensitivity::{Neighbouring, convert_loss};

impl Accountant {
    /// What a charge counts as against this budget, or why it cannot be charged.
    pub(super) fn convert(&self, loss: PrivacyLoss) -> Result<PrivacyLoss, Error> {
        let loss = as_zcdp_if_no_delta(validate_loss(loss)?);
        if matches!(loss, PrivacyLoss::RandomDp { .. }) {
            return Err(Error::IncompatibleLoss {
                reason: "random-DP charges cannot be counted against a worst-case budget",
            });
        }
        if self.renyi.is_some() {
            return match loss {
                PrivacyLoss::Pure { .. } | PrivacyLoss::Zcdp { .. } => Ok(loss),
                PrivacyLoss::Approximate { epsilon, delta: 0.0 } => Ok(PrivacyLoss::Pure { epsilon }),
                _ => Err(Error::IncompatibleLoss {
                    reason: "a Renyi filter accepts pure-DP and zCDP charges only: an (epsilon, delta) \
                             charge with delta > 0 has no RDP bound",
                }),
            };
        }
        if let Some(plan) = &self.plan {
            return match loss {
                PrivacyLoss::Pure { epsilon } if epsilon <= plan.per_step_epsilon => Ok(PrivacyLoss::Pure {
                    epsilon: plan.per_step_epsilon,
                }),
                PrivacyLoss::Pure { .. } => Err(Error::BudgetExceeded {
                    requested: loss,
                    remaining: self.remaining(),
                }),
                _ => Err(Error::IncompatibleLoss {
                    reason: "a composition plan accepts pure-DP charges only",
                }),
            };
        }
        match (self.budget, loss) {
            (PrivacyLoss::Pure { .. }, PrivacyLoss::Pure { .. })
            | (PrivacyLoss::Approximate { .. }, PrivacyLoss::Pure { .. } | PrivacyLoss::Approximate { .. })
            | (PrivacyLoss::Zcdp { .. } | PrivacyLoss::ApproximateZcdp { .. }, PrivacyLoss::Zcdp { .. })
            | (PrivacyLoss::ApproximateZcdp { .. }, PrivacyLoss::ApproximateZcdp { .. }) => Ok(loss),
            (
                PrivacyLoss::Zcdp { .. } | PrivacyLoss::ApproximateZcdp { .. },
                PrivacyLoss::Pure { epsilon },
            ) => Ok(PrivacyLoss::Zcdp {
                rho: crate::composition::zcdp::pure_to_zcdp(epsilon)?,
            }),
            (PrivacyLoss::Pure { .. }, _) => Err(Error::IncompatibleLoss {
                reason: "a pure-DP budget accepts pure-DP charges only",
            }),
            (PrivacyLoss::Approximate { .. }, _) => Err(Error::IncompatibleLoss {
                reason: "an (epsilon, delta) budget does not accept zCDP or approximate-zCDP charges: \
                         convert them with composition::zcdp first",
            }),
            (PrivacyLoss::Zcdp { .. }, PrivacyLoss::ApproximateZcdp { .. }) => Err(Error::IncompatibleLoss {
                reason: "a zCDP budget has no delta: use Accountant::approximate_zcdp",
            }),
            (PrivacyLoss::ApproximateZcdp { .. }, _) => Err(Error::IncompatibleLoss {
                reason: "an approximate-zCDP budget accepts approximate-zCDP, zCDP and pure-DP charges only",
            }),
            _ => Err(Error::IncompatibleLoss {
                reason: "a zCDP budget accepts zCDP and pure-DP charges only",
            }),
        }
    }

    pub(super) fn remaining_locked(&self, state: &Totals) -> PrivacyLoss {
        let left = |budget: f64, spent: f64| sub_down(budget, spent).max(0.0);
        if let Some(filter) = &self.renyi {
            return PrivacyLoss::Zcdp {
                rho: filter.remaining_rho(state.filter_sum),
            };
        }
        if let Some(plan) = &self.plan {
            let epsilon = if state.steps < plan.steps {
                plan.per_step_epsilon
            } else {
                0.0
            };
            return PrivacyLoss::Pure { epsilon };
        }
        match self.budget {
            PrivacyLoss::Pure { epsilon } => PrivacyLoss::Pure {
                epsilon: left(epsilon, state.epsilon),
            },
            PrivacyLoss::Approximate { epsilon, delta } => PrivacyLoss::Approximate {
                epsilon: left(epsilon, state.epsilon),
                delta: left(delta, state.delta),
            },
            PrivacyLoss::Zcdp { rho } => PrivacyLoss::Zcdp {
                rho: left(rho, state.rho),
            },
            PrivacyLoss::ApproximateZcdp { rho, delta } => PrivacyLoss::ApproximateZcdp {
                rho: left(rho, state.rho),
                delta: left(delta, state.delta),
            },
            other => other,
        }
    }

    /// The charge's RDP bound at a Rényi filter's order (`None` outside a filter).
    pub(super) fn rdp_of(&self, charged: PrivacyLoss) -> Result<Option<f64>, Error> {
        Ok(match (&self.renyi, charged) {
            (Some(f), PrivacyLoss::Pure { epsilon }) => Some(RdpCurve::pure(epsilon)?.at(f.index)),
            (Some(f), PrivacyLoss::Zcdp { rho }) => Some(RdpCurve::zcdp(rho)?.at(f.index)),
            _ => None,
        })
    }

    /// Adds `charged` (with its RDP bound `rdp` under a filter) to `totals` if it fits
    /// this budget; `false`, and `totals` untouched, if it does not.
    pub(super) fn admit(&self, totals: &mut Totals, charged: PrivacyLoss, rdp: Option<f64>) -> bool {
        if totals.over {
            return false;
        }
        let mut t = *totals;
        let fits = match (&self.plan, self.budget, charged) {
            _ if self.renyi.is_some() => match (&self.renyi, rdp) {
                (Some(filter), Some(r)) => filter.add(t.filter_sum, r).map(|s| t.filter_sum = s).is_ok(),
                _ => false,
            },
            (Some(plan), _, _) => t.steps < plan.steps,
            (None, PrivacyLoss::Pure { epsilon: b }, PrivacyLoss::Pure { epsilon }) => {
                within(t.epsilon, epsilon, b).map(|e| t.epsilon = e).is_some()
            }
            (
                None,
                PrivacyLoss::Approximate {
                    epsilon: be,
                    delta: bd,
                },
                PrivacyLoss::Pure { epsilon: ce } | PrivacyLoss::Approximate { epsilon: ce, .. },
            ) => {
                let cd = charged.delta().unwrap_or(0.0);
                match (within(t.epsilon, ce, be), within(t.delta, cd, bd)) {
                    (Some(e), Some(d)) => {
                        (t.epsilon, t.delta) = (e, d);
                        true
                    }
                    _ => false,
                }
            }
            (None, PrivacyLoss::Zcdp { rho: b }, PrivacyLoss::Zcdp { rho }) => {
                within(t.rho, rho, b).map(|r| t.rho = r).is_some()
            }
            (
                None,
                PrivacyLoss::ApproximateZcdp { rho: br, delta: bd },
                PrivacyLoss::Zcdp { rho: cr } | PrivacyLoss::ApproximateZcdp { rho: cr, .. },
            ) => {
                let cd = match charged {
                    PrivacyLoss::ApproximateZcdp { delta, .. } => delta,
                    _ => 0.0,
                };
                match (within(t.rho, cr, br), within(t.delta, cd, bd)) {
                    (Some(r), Some(d)) => {
                        (t.rho, t.delta) = (r, d);
                        true
                    }
                    _ => false,
                }
            }
            _ => false,
        };
        if fits {
            t.steps += 1;
            *totals = t;
        }
        fits
    }

    /// The refusal of `requested` when `totals` leave no room for it.
    pub(super) fn refusal(&self, requested: PrivacyLoss, totals: &Totals) -> Error {
        Error::BudgetExceeded {
            requested,
            remaining: self.remaining_locked(totals),
        }
    }

    /// Charges `loss`, a guarantee stated for neighbours under `stated`: in memory, or
    /// durably first when the accountant has a ledger store.
    pub(super) fn charge_stated(
        &self,
        loss: PrivacyLoss,
        stated: Neighbouring,
        label: Option<&str>,
    ) -> Result<(), Error> {
        let charged = self.convert(convert_loss(loss, stated, self.relation)?)?;
        // The charge's RDP bound at a Rényi filter's order (computed before locking).
        let rdp = self.rdp_of(charged)?;
        let entry = LedgerEntry {
            label: label.map(str::to_owned),
            requested: loss,
            charged,
            relation: stated,
            analyst: None,
            unix_millis: unix_millis(),
        };
        if self.store.is_some() {
            return self.charge_durably(entry, rdp);
        }
        let mut state = self.lock();
        if !self.admit(&mut state.totals, charged, rdp) {
            return Err(self.refusal(loss, &state.totals));
        }
        state.ledger.push(entry);
        Ok(())
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(super) fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `total + charge` rounded up, if it stays within `budget` (NaN never does).
pub(super) fn within(total: f64, charge: f64, budget: f64) -> Option<f64> {
    let t = add_up(total, charge);
    (t <= budget).then_some(t)
}

/// `ApproximateZcdp { ρ, δ = 0 }` is plain ρ-zCDP: written as `Zcdp { ρ }`.
pub(super) fn as_zcdp_if_no_delta(loss: PrivacyLoss) -> PrivacyLoss {
    match loss {
        PrivacyLoss::ApproximateZcdp { rho, delta: 0.0 } => PrivacyLoss::Zcdp { rho },
        other => other,
    }
}
