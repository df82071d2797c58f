//! A budget accountant over a declared plan of heterogeneous mechanisms, composed by
//! privacy loss distributions.

use std::sync::{Mutex, MutexGuard};

use super::Pld;
use crate::Error;
use crate::composition::Charge;
use crate::composition::charge::{no_relation, release_method};
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon};

/// One kind of release in a [`PldAccountant`]'s plan: a label, the PLD of one release
/// and how many such releases may happen.
#[derive(Debug, Clone)]
pub struct PldStep {
    /// The name releases are charged under.
    pub label: String,
    /// The PLD of one release (a worst case over neighbouring inputs).
    pub pld: Pld,
    /// The most releases of this kind.
    pub count: u64,
}

impl PldStep {
    /// A step of `count` releases whose PLD is `pld`.
    pub fn new(label: impl Into<String>, pld: Pld, count: u64) -> Self {
        PldStep {
            label: label.into(),
            pld,
            count,
        }
    }
}

/// An accountant for a plan declared before the first release: `count` releases of
/// each [`PldStep`], composed by their PLDs. The plan is accepted only if its PLD
/// composition fits the budget `(ε, δ)`; then each release is charged to its step and
/// refused, before any randomness is drawn, once the step's count is used up. It charges
/// like the other accountants (see [`Charge`]): [`spend`](Self::spend) a step, or
/// [`release`](Self::release) a mechanism under a charge labelled with its step.
///
/// **Adaptivity.** The mechanisms (their PLDs) and counts are fixed up front; *which*
/// query each release answers may be chosen adaptively from earlier answers — the
/// composition of fixed dominating pairs holds under adaptive choice (Zhu, Dong & Wang
/// 2022, Theorem 10). Choosing the mechanisms themselves adaptively (a privacy filter)
/// is not covered.
///
/// ```
/// use dpmech::composition::Charge;
/// use dpmech::composition::pld::{Grid, Pld, PldAccountant, PldStep};
/// use dpmech::{Gaussian, Laplace};
/// let g = Grid::default();
/// let plan = vec![
///     PldStep::new("count", Pld::laplace(0.1, g)?, 50),
///     PldStep::new("mean", Pld::gaussian(20.0, 1.0, g)?, 50),
/// ];
/// // Sequential composition would need ε = 5 for the counts alone; the PLD: ≈ 3.6.
/// let acc = PldAccountant::new(4.0, 1e-6, plan)?;
/// let laplace = Laplace::new(1.0, 0.1)?;
/// let mut rng = dpmech::DefaultRng::from_os()?;
/// let noisy = acc.release(Charge::of(&laplace).labelled("count"), 41.0, &mut rng)?;
/// assert!(acc.spent(1e-6)?.epsilon().unwrap() <= 0.1 + 1e-9);
/// assert!(acc.total().epsilon().unwrap() <= 3.7);
/// # let _ = noisy;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug)]
pub struct PldAccountant {
    steps: Vec<PldStep>,
    total: PrivacyLoss,
    used: Mutex<Vec<u64>>,
}

impl PldAccountant {
    /// Accepts the plan if its PLD composition is `(ε′, δ)`-DP with `ε′ ≤ epsilon`;
    /// otherwise [`Error::BudgetExceeded`] (nothing can be released).
    ///
    /// Cost: one [`Pld::self_compose`] per step and one [`Pld::compose`] between steps.
    /// A step's count above [`MAX_SELF_COMPOSITIONS`](super::MAX_SELF_COMPOSITIONS)
    /// (2³²) is refused with [`Error::InvalidParameter`] before anything is composed.
    ///
    /// # Errors
    ///
    /// * [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    ///   [`Error::InvalidDelta`] if `delta` is not in (0, 1);
    /// * [`Error::EmptyInput`] if the plan has no step, or every count is 0;
    /// * [`Error::InvalidParameter`] (`k`) if a count is above `MAX_SELF_COMPOSITIONS`;
    /// * [`Error::Unattainable`] if the composition gives no finite ε at `delta`;
    /// * [`Error::BudgetExceeded`] if the plan's ε′ is above `epsilon`.
    pub fn new(epsilon: f64, delta: f64, steps: Vec<PldStep>) -> Result<Self, Error> {
        let epsilon = check_epsilon(epsilon)?;
        let delta = check_delta(delta)?;
        if steps.is_empty() {
            return Err(Error::EmptyInput { what: "the plan" });
        }
        for step in &steps {
            if step.count > 0 {
                super::check_count(step.count)?;
            }
        }
        let counts: Vec<u64> = steps.iter().map(|s| s.count).collect();
        let total = composed(&steps, &counts)?.ok_or(Error::EmptyInput {
            what: "the plan's counts",
        })?;
        let total = total.privacy_loss(delta)?;
        let budget = PrivacyLoss::Approximate { epsilon, delta };
        if total.epsilon().unwrap_or(f64::INFINITY) > epsilon {
            return Err(Error::BudgetExceeded {
                requested: total,
                remaining: budget,
            });
        }
        Ok(PldAccountant {
            used: Mutex::new(vec![0; steps.len()]),
            steps,
            total,
        })
    }

    /// The guarantee of the whole plan (what the PLD certifies for every step used up).
    pub fn total(&self) -> PrivacyLoss {
        self.total
    }

    fn lock(&self) -> MutexGuard<'_, Vec<u64>> {
        self.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Charges one release of step `label`: refused with [`Error::BudgetExceeded`] when
    /// its count is used up, and with [`Error::IncompatibleLoss`] when no step has that
    /// label.
    ///
    /// # Errors
    ///
    /// [`Error::IncompatibleLoss`] if no step has this label; [`Error::BudgetExceeded`] if
    /// the step's count is used up. Nothing is charged then.
    pub fn spend(&self, label: &str) -> Result<(), Error> {
        let index = self
            .steps
            .iter()
            .position(|s| s.label == label)
            .ok_or(Error::IncompatibleLoss {
                reason: "no step of the declared plan has this label",
            })?;
        let mut used = self.lock();
        if used[index] >= self.steps[index].count {
            return Err(Error::BudgetExceeded {
                requested: self.total,
                remaining: PrivacyLoss::Pure { epsilon: 0.0 },
            });
        }
        used[index] += 1;
        Ok(())
    }

    release_method! {
        /// Charges the step named by the charge's label (`Charge::of(&mechanism)
        /// .labelled(step)`), then releases `input` through the mechanism; a refused charge
        /// draws nothing. The caller is responsible for the mechanism matching the step's
        /// PLD (e.g. the same noise scale and sensitivity).
        ///
        /// # Errors
        ///
        /// [`Error::IncompatibleLoss`] if the charge has no label or states a neighbouring
        /// relation (the steps' PLDs carry their own); those of [`spend`](Self::spend); all
        /// before anything is drawn; then the error of
        /// [`Mechanism::release`](crate::Mechanism::release) if the mechanism refuses `input`
        /// (the charge is not refunded).
    }

    /// Charges the step named by the charge's label, for [`release`](Self::release).
    fn charge_for(&self, charge: Charge, _type_label: &str) -> Result<(), Error> {
        let charge = no_relation(charge)?;
        let step = charge.label().ok_or(Error::IncompatibleLoss {
            reason: "a release under a declared plan is charged to a step: label the charge with it",
        })?;
        self.spend(step)
    }

    /// The guarantee of the releases charged so far at `delta` (their PLD composition;
    /// ε = 0 before the first).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDelta`] if `delta` is not in (0, 1); [`Error::Unattainable`] if the
    /// releases charged so far give no finite ε at `delta`.
    pub fn spent(&self, delta: f64) -> Result<PrivacyLoss, Error> {
        let delta = check_delta(delta)?;
        let used = self.lock().clone();
        match composed(&self.steps, &used)? {
            None => Ok(PrivacyLoss::Approximate {
                epsilon: 0.0,
                delta: 0.0,
            }),
            Some(pld) => pld.privacy_loss(delta),
        }
    }
}

/// The composition of `counts[i]` releases of each step (`None` if all counts are 0).
fn composed(steps: &[PldStep], counts: &[u64]) -> Result<Option<Pld>, Error> {
    let mut total: Option<Pld> = None;
    for (step, &count) in steps.iter().zip(counts) {
        if count == 0 {
            continue;
        }
        let part = step.pld.self_compose(count)?;
        total = Some(match total {
            None => part,
            Some(t) => t.compose(&part),
        });
    }
    Ok(total)
}
