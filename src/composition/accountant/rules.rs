//! The composition rule of each budget: what a charge counts as ([`Accountant::convert`]),
//! how it is added to the running totals, and what remains.

use super::{Accountant, LedgerEntry, State};
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

    pub(super) fn remaining_locked(&self, state: &State) -> PrivacyLoss {
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

    /// Charges `loss`, a guarantee stated for neighbours under `stated`.
    pub(super) fn charge_stated(
        &self,
        loss: PrivacyLoss,
        stated: Neighbouring,
        label: Option<&str>,
    ) -> Result<(), Error> {
        let charged = self.convert(convert_loss(loss, stated, self.relation)?)?;
        // The charge's RDP bound at a Rényi filter's order (computed before locking).
        let rdp = match (&self.renyi, charged) {
            (Some(f), PrivacyLoss::Pure { epsilon }) => Some(RdpCurve::pure(epsilon)?.at(f.index)),
            (Some(f), PrivacyLoss::Zcdp { rho }) => Some(RdpCurve::zcdp(rho)?.at(f.index)),
            _ => None,
        };
        let mut state = self.lock();
        let refuse = |state: &State| Error::BudgetExceeded {
            requested: loss,
            remaining: self.remaining_locked(state),
        };
        match (&self.plan, self.budget, charged) {
            _ if self.renyi.is_some() => {
                let (Some(filter), Some(r)) = (&self.renyi, rdp) else {
                    return Err(refuse(&state));
                };
                state.filter_sum = filter.add(state.filter_sum, r).map_err(|_| refuse(&state))?;
            }
            (Some(plan), _, _) => {
                if state.steps >= plan.steps {
                    return Err(refuse(&state));
                }
            }
            (None, PrivacyLoss::Pure { epsilon: b }, PrivacyLoss::Pure { epsilon }) => {
                state.epsilon = within(state.epsilon, epsilon, b).ok_or_else(|| refuse(&state))?;
            }
            (
                None,
                PrivacyLoss::Approximate {
                    epsilon: be,
                    delta: bd,
                },
                c,
            ) => {
                let (ce, cd) = match c {
                    PrivacyLoss::Pure { epsilon } => (epsilon, 0.0),
                    PrivacyLoss::Approximate { epsilon, delta } => (epsilon, delta),
                    _ => return Err(refuse(&state)),
                };
                let (Some(e), Some(d)) = (within(state.epsilon, ce, be), within(state.delta, cd, bd)) else {
                    return Err(refuse(&state));
                };
                state.epsilon = e;
                state.delta = d;
            }
            (None, PrivacyLoss::Zcdp { rho: b }, PrivacyLoss::Zcdp { rho }) => {
                state.rho = within(state.rho, rho, b).ok_or_else(|| refuse(&state))?;
            }
            (None, PrivacyLoss::ApproximateZcdp { rho: br, delta: bd }, c) => {
                let (cr, cd) = match c {
                    PrivacyLoss::Zcdp { rho } => (rho, 0.0),
                    PrivacyLoss::ApproximateZcdp { rho, delta } => (rho, delta),
                    _ => return Err(refuse(&state)),
                };
                let (Some(r), Some(d)) = (within(state.rho, cr, br), within(state.delta, cd, bd)) else {
                    return Err(refuse(&state));
                };
                state.rho = r;
                state.delta = d;
            }
            _ => return Err(refuse(&state)),
        }
        state.steps += 1;
        state.ledger.push(LedgerEntry {
            label: label.map(str::to_owned),
            requested: loss,
            charged,
        });
        Ok(())
    }
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
