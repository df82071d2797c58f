//! A composition [`Plan`] declared before the first release: k pure ε₀-DP steps
//! composed by advanced or optimal composition.

use crate::Error;
use crate::composition::{advanced, optimal};
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon};

/// The composition theorem of a [`Plan`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum PlanRule {
    /// Advanced composition (Dwork–Rothblum–Vadhan) with slack δ′: the plan is
    /// `(min(ε′, kε₀), δ′)`-DP, `ε′ = √(2k ln(1/δ′))ε₀ + kε₀(e^ε₀ − 1)`.
    Advanced {
        /// δ′ ∈ (0, 1).
        delta_slack: f64,
    },
    /// Optimal homogeneous composition (Kairouz–Oh–Viswanath 2015): the plan is
    /// `(ε_opt, δ)`-DP with ε_opt the smallest total for which δ_opt(ε_opt) ≤ δ.
    Optimal {
        /// δ ∈ (0, 1).
        delta: f64,
    },
}

/// A composition plan declared before the first release: `steps` pure
/// `per_step_epsilon`-DP mechanisms (chosen adaptively or not), composed by `rule`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// k, the number of mechanisms (≥ 1).
    pub steps: u64,
    /// ε₀, the pure-DP parameter of every step.
    pub per_step_epsilon: f64,
    /// The composition theorem used.
    pub rule: PlanRule,
}

impl Plan {
    /// The plan of `steps` pure-DP steps with the largest per-step ε that keeps the
    /// whole within `(epsilon_total, delta)` under advanced composition (slack δ′ = δ).
    ///
    /// ```
    /// use dpmech::Accountant;
    /// use dpmech::composition::Plan;
    /// let plan = Plan::advanced_within(10_000, 1.0, (-32.0f64).exp())?;
    /// assert!(plan.per_step_epsilon < 1.0 / 801.0); // not the textbook 1/801
    /// let acc = Accountant::with_plan(plan)?;
    /// assert!(acc.budget().epsilon().unwrap() <= 1.0);
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`advanced::max_epsilon_per_step`]: [`Error::InvalidParameter`] (`k`) if
    /// `steps = 0`; [`Error::InvalidEpsilon`] if `epsilon_total` is not finite and
    /// positive; [`Error::InvalidDelta`] if `delta` is not in (0, 1);
    /// [`Error::InvalidParameter`] (`epsilon_total`) if no positive per-step ε fits.
    pub fn advanced_within(steps: u64, epsilon_total: f64, delta: f64) -> Result<Self, Error> {
        Ok(Self {
            steps,
            per_step_epsilon: advanced::max_epsilon_per_step(steps, epsilon_total, delta)?,
            rule: PlanRule::Advanced { delta_slack: delta },
        })
    }

    /// The plan of `steps` pure-DP steps with the largest per-step ε that keeps the
    /// whole within `(epsilon_total, delta)` under optimal composition.
    ///
    /// # Errors
    ///
    /// Those of [`optimal::max_epsilon_per_step`]: [`Error::InvalidParameter`] (`k`) if
    /// `steps = 0` or `steps > optimal::MAX_STEPS`; [`Error::InvalidEpsilon`] if
    /// `epsilon_total` is not finite and positive; [`Error::InvalidDelta`] if `delta` is
    /// not in (0, 1); [`Error::InvalidParameter`] (`epsilon_total`) if the per-step ε
    /// underflows to 0.
    pub fn optimal_within(steps: u64, epsilon_total: f64, delta: f64) -> Result<Self, Error> {
        Ok(Self {
            steps,
            per_step_epsilon: optimal::max_epsilon_per_step(steps, epsilon_total, delta)?,
            rule: PlanRule::Optimal { delta },
        })
    }

    /// The guarantee of the whole plan (rounded up), an [`PrivacyLoss::Approximate`].
    ///
    /// ```
    /// use dpmech::composition::{Plan, PlanRule};
    /// let plan = Plan { steps: 100, per_step_epsilon: 0.05, rule: PlanRule::Optimal { delta: 1e-6 } };
    /// let total = plan.total()?;
    /// assert!(total.epsilon().unwrap() < 5.0); // better than the sequential 100 × 0.05
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// * [`Error::InvalidEpsilon`] if `per_step_epsilon` is not finite and positive, or
    ///   `k·ε₀` (or, for [`PlanRule::Advanced`], ε′) overflows to +∞;
    /// * [`Error::InvalidParameter`] (`k`) if `steps = 0`, or, for [`PlanRule::Optimal`],
    ///   `steps > optimal::MAX_STEPS`;
    /// * [`Error::InvalidDelta`] if the rule's δ is not in (0, 1).
    pub fn total(&self) -> Result<PrivacyLoss, Error> {
        let e0 = check_epsilon(self.per_step_epsilon)?;
        let sequential = crate::composition::sequential::homogeneous_epsilon(self.steps, e0)?;
        match self.rule {
            PlanRule::Advanced { delta_slack } => {
                let d = check_delta(delta_slack)?;
                let adv = advanced::epsilon(self.steps, e0, d)?;
                Ok(PrivacyLoss::Approximate {
                    epsilon: adv.min(sequential),
                    delta: d,
                })
            }
            PlanRule::Optimal { delta } => {
                let d = check_delta(delta)?;
                let opt = optimal::epsilon(self.steps, e0, d)?;
                Ok(PrivacyLoss::Approximate {
                    epsilon: opt.max(f64::MIN_POSITIVE),
                    delta: d,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Accountant;

    #[test]
    fn plans_within_a_target_fit_it() {
        for k in [1u64, 7, 100, 5_000] {
            let a = Plan::advanced_within(k, 1.0, 1e-6).unwrap().total().unwrap();
            let o = Plan::optimal_within(k, 1.0, 1e-6).unwrap().total().unwrap();
            for t in [a, o] {
                assert!(
                    t.epsilon().unwrap() <= 1.0 && t.delta().unwrap() <= 1e-6,
                    "k {k}: {t}"
                );
            }
        }
    }

    #[test]
    fn plan_counts_steps() {
        let plan = Plan {
            steps: 3,
            per_step_epsilon: 0.1,
            rule: PlanRule::Optimal { delta: 1e-6 },
        };
        let acc = Accountant::with_plan(plan).unwrap();
        assert!(matches!(
            acc.spend(PrivacyLoss::pure(0.2).unwrap()),
            Err(Error::BudgetExceeded { .. })
        ));
        for _ in 0..3 {
            acc.spend(PrivacyLoss::pure(0.1).unwrap()).unwrap();
        }
        assert!(acc.spend(PrivacyLoss::pure(0.01).unwrap()).is_err());
        assert_eq!(acc.remaining(), PrivacyLoss::Pure { epsilon: 0.0 });
        let total = acc.spent().epsilon().unwrap();
        assert!(total <= 0.3 + 1e-12, "{total}");
        assert_eq!(acc.budget(), plan.total().unwrap());
    }
}
