//! Closed-form certificates carried beside a numerical composition, so that an answer
//! is never looser than the best closed form the crate can compute for the same plan.
//!
//! A [`ClosedForms`] value records, for a composition of releases, whatever of these
//! is known (each rounded up, each composed alongside the releases):
//!
//! * **pure steps** — when every release is pure εᵢ-DP: their number, the largest
//!   and smallest εᵢ, `Σεᵢ²` and `Σεᵢ(e^εᵢ − 1)`. They give
//!   [`Bound::Optimal`] (Kairouz–Oh–Viswanath 2015 with the largest εᵢ for every step:
//!   exact when the steps are homogeneous, an upper bound otherwise, since an εᵢ-DP
//!   step is also ε_max-DP) and [`Bound::Advanced`] (heterogeneous Dwork–Rothblum–Vadhan,
//!   `√(2 ln(1/δ) Σεᵢ²) + Σεᵢ(e^εᵢ − 1)`, see [`super::advanced::heterogeneous`]);
//! * **sequential** — `(Σεᵢ, Σδᵢ)` when every release is (εᵢ, δᵢ)-DP
//!   ([`Bound::Sequential`]);
//! * **zCDP** — `Σρᵢ` when every release is ρᵢ-zCDP (a pure step counts `ε²/2`),
//!   converted with the tight bound of [`super::zcdp::epsilon_tight`] ([`Bound::Zcdp`]);
//! * **RDP** — the sum of the releases' [`RdpCurve`]s, converted by
//!   [`RdpCurve::epsilon`] ([`Bound::Rdp`]).
//!
//! Every one of these is an upper bound on the true privacy curve of the composition
//! (for releases fixed in advance; each rule's adaptivity is stated in
//! [`super`]), so the smallest of them, and of the PLD's own answer, is one too.
//! [`ClosedForms::default`] knows nothing; composing with it forgets everything.

use crate::Error;
use crate::composition::rdp::RdpCurve;
use crate::composition::{optimal, zcdp};
use crate::privacy::round::{
    add_up, div_down, exp_m1_up, exp_up, ln_down, mul_down, mul_up, sqrt_up, sub_down,
};
use crate::privacy::{check_delta, check_epsilon};

/// Which rule produced a certified answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Bound {
    /// The certified privacy loss distribution (numerical composition).
    Pld,
    /// Sequential composition: `(Σεᵢ, Σδᵢ)`.
    Sequential,
    /// Optimal composition of pure steps (Kairouz–Oh–Viswanath 2015) at the largest εᵢ.
    Optimal,
    /// Heterogeneous advanced composition of pure steps (Dwork–Rothblum–Vadhan 2010).
    Advanced,
    /// zCDP (`Σρᵢ`) with the tight conversion of Canonne, Kamath & Steinke 2020.
    Zcdp,
    /// Rényi DP curves, converted at the best order held.
    Rdp,
    /// A Rényi privacy filter's budget (adaptive mode of the online accountant).
    RenyiFilter,
}

impl core::fmt::Display for Bound {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let name = match self {
            Bound::Pld => "PLD",
            Bound::Sequential => "sequential",
            Bound::Optimal => "optimal (KOV)",
            Bound::Advanced => "advanced",
            Bound::Zcdp => "zCDP",
            Bound::Rdp => "RDP",
            Bound::RenyiFilter => "Renyi filter",
        };
        f.write_str(name)
    }
}

/// A certified answer: `(ε, δ)` and the rule that gave the smallest value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Certified {
    /// The certified ε (rounded up).
    pub epsilon: f64,
    /// The δ it holds for (the question's δ, or the certified δ for a given ε).
    pub delta: f64,
    /// Which rule won.
    pub bound: Bound,
}

/// Aggregates of a composition of pure steps (every sum rounded up).
#[derive(Debug, Clone, Copy, PartialEq)]
struct PureSteps {
    count: u64,
    max: f64,
    min: f64,
    sum_sq: f64,
    sum_lin: f64,
}

/// Closed-form certificates of a composition (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClosedForms {
    pure: Option<PureSteps>,
    sequential: Option<(f64, f64)>,
    rho: Option<f64>,
    rdp: Option<RdpCurve>,
}

fn both<T: Copy>(a: Option<T>, b: Option<T>, f: impl Fn(T, T) -> T) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(f(x, y)),
        _ => None,
    }
}

impl ClosedForms {
    /// Nothing known (the default).
    pub fn unknown() -> Self {
        Self::default()
    }

    /// One pure ε-DP release: every certificate (its RDP curve is that of randomized
    /// response, which dominates every ε-DP mechanism).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidRho`] if its zCDP ρ = ε²/2 overflows to +∞.
    pub fn pure(epsilon: f64) -> Result<Self, Error> {
        let e = check_epsilon(epsilon)?;
        Ok(ClosedForms {
            pure: Some(PureSteps {
                count: 1,
                max: e,
                min: e,
                sum_sq: mul_up(e, e),
                sum_lin: mul_up(e, exp_m1_up(e)),
            }),
            sequential: Some((e, 0.0)),
            rho: Some(crate::composition::zcdp::pure_to_zcdp(e)?),
            rdp: Some(RdpCurve::pure(e)?),
        })
    }

    /// One (ε, δ)-DP release (δ may be 0): sequential composition only (or everything,
    /// when δ = 0).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidDelta`] if `delta` is not in [0, 1); for δ = 0, those of
    /// [`pure`](Self::pure).
    pub fn approximate(epsilon: f64, delta: f64) -> Result<Self, Error> {
        if delta == 0.0 {
            return Self::pure(epsilon);
        }
        let e = check_epsilon(epsilon)?;
        let d = check_delta(delta)?;
        Ok(ClosedForms {
            sequential: Some((e, d)),
            ..Self::default()
        })
    }

    /// One ρ-zCDP release: zCDP and its RDP curve `αρ`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRho`] if `rho` is not finite and positive.
    pub fn zcdp(rho: f64) -> Result<Self, Error> {
        let curve = RdpCurve::zcdp(rho)?;
        Ok(ClosedForms {
            rho: Some(rho),
            rdp: Some(curve),
            ..Self::default()
        })
    }

    /// One release known only by its RDP curve.
    pub fn rdp(curve: RdpCurve) -> Self {
        ClosedForms {
            rdp: Some(curve),
            ..Self::default()
        }
    }

    /// The same certificates with a second valid RDP curve for the same release taken
    /// into account (order-wise minimum; sets the curve if none was known).
    pub fn with_rdp(mut self, curve: RdpCurve) -> Self {
        self.rdp = Some(match self.rdp {
            Some(c) => c.min(&curve),
            None => curve,
        });
        self
    }

    /// Whether nothing is known.
    pub fn is_unknown(&self) -> bool {
        *self == Self::default()
    }

    /// The composed RDP curve, if known.
    pub fn rdp_curve(&self) -> Option<&RdpCurve> {
        self.rdp.as_ref()
    }

    /// The composed zCDP ρ, if known.
    pub fn rho(&self) -> Option<f64> {
        self.rho
    }

    /// The sequential `(Σε, Σδ)`, if known.
    pub fn sequential(&self) -> Option<(f64, f64)> {
        self.sequential
    }

    /// The certificates of both compositions (only what both know survives).
    pub fn compose(&self, other: &ClosedForms) -> ClosedForms {
        ClosedForms {
            pure: both(self.pure, other.pure, |a, b| PureSteps {
                count: a.count.saturating_add(b.count),
                max: a.max.max(b.max),
                min: a.min.min(b.min),
                sum_sq: add_up(a.sum_sq, b.sum_sq),
                sum_lin: add_up(a.sum_lin, b.sum_lin),
            }),
            sequential: both(self.sequential, other.sequential, |a, b| {
                (add_up(a.0, b.0), add_up(a.1, b.1))
            }),
            rho: both(self.rho, other.rho, add_up),
            rdp: match (&self.rdp, &other.rdp) {
                (Some(a), Some(b)) => Some(a.compose(b)),
                _ => None,
            },
        }
    }

    /// The certificates of `k ≥ 1` copies.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`k`) if `k = 0`.
    pub fn repeat(&self, k: u64) -> Result<ClosedForms, Error> {
        let kf = crate::composition::check_steps(k)?;
        Ok(ClosedForms {
            pure: self.pure.map(|p| PureSteps {
                count: p.count.saturating_mul(k),
                max: p.max,
                min: p.min,
                sum_sq: mul_up(p.sum_sq, kf),
                sum_lin: mul_up(p.sum_lin, kf),
            }),
            sequential: self.sequential.map(|(e, d)| (mul_up(e, kf), mul_up(d, kf))),
            rho: self.rho.map(|r| mul_up(r, kf)),
            rdp: match &self.rdp {
                Some(c) => Some(c.repeat(k)?),
                None => None,
            },
        })
    }

    /// The smallest certified ε among the closed forms at `δ ∈ (0, 1)`, with its rule;
    /// `None` when no closed form answers.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDelta`] unless `0 < δ < 1`.
    pub fn epsilon(&self, delta: f64) -> Result<Option<(f64, Bound)>, Error> {
        let d = check_delta(delta)?;
        let mut best: Option<(f64, Bound)> = None;
        let mut offer = |e: f64, b: Bound| {
            if e.is_finite() && e >= 0.0 && best.is_none_or(|(x, _)| e < x) {
                best = Some((e, b));
            }
        };
        if let Some((e, sd)) = self.sequential
            && sd <= d
        {
            offer(e, Bound::Sequential);
        }
        if let Some(p) = self.pure {
            if p.count <= optimal::MAX_STEPS
                && let Ok(e) = optimal::epsilon(p.count, p.max, d)
            {
                offer(e, Bound::Optimal);
            }
            let ln_inv = -ln_down(d);
            let first = sqrt_up(mul_up(mul_up(2.0, ln_inv), p.sum_sq));
            offer(add_up(first, p.sum_lin), Bound::Advanced);
        }
        if let Some(r) = self.rho
            && let Ok(e) = zcdp::epsilon_tight(r, d)
        {
            offer(e, Bound::Zcdp);
        }
        if let Some(c) = &self.rdp
            && let Ok(e) = c.epsilon(d)
        {
            offer(e, Bound::Rdp);
        }
        Ok(best)
    }

    /// The smallest certified δ among the closed forms at `ε ≥ 0`, with its rule;
    /// `None` when no closed form answers below 1. `ε = +∞` asks for the mass of
    /// infinite loss (as [`Pld::delta_for_epsilon`](super::pld::Pld::delta_for_epsilon)
    /// does): only the sequential bound answers it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is NaN or negative.
    pub fn delta(&self, epsilon: f64) -> Result<Option<(f64, Bound)>, Error> {
        if epsilon.is_nan() || epsilon < 0.0 {
            return Err(Error::InvalidEpsilon { value: epsilon });
        }
        let mut best: Option<(f64, Bound)> = None;
        let mut offer = |d: f64, b: Bound| {
            if (0.0..1.0).contains(&d) && best.is_none_or(|(x, _)| d < x) {
                best = Some((d, b));
            }
        };
        if let Some((e, sd)) = self.sequential
            && epsilon >= e
        {
            offer(sd, Bound::Sequential);
        }
        if !epsilon.is_finite() {
            return Ok(best);
        }
        if let Some(p) = self.pure {
            if p.count <= optimal::MAX_STEPS
                && let Ok(d) = optimal::delta(p.count, p.max, epsilon)
            {
                offer(d, Bound::Optimal);
            }
            // ε = √(2L Σε²) + Σε(e^ε − 1) solved for δ = e^(−L): e^(−(ε − lin)²/(2 Σε²)).
            let gap = sub_down(epsilon, p.sum_lin);
            if gap > 0.0 {
                let exponent = div_down(mul_down(gap, gap), mul_up(2.0, p.sum_sq));
                offer(exp_up(-exponent), Bound::Advanced);
            }
        }
        if let Some(r) = self.rho
            && let Ok(d) = zcdp::delta_tight(r, epsilon)
        {
            offer(d, Bound::Zcdp);
        }
        if let Some(c) = &self.rdp
            && let Ok(d) = c.delta(epsilon)
        {
            offer(d, Bound::Rdp);
        }
        Ok(best)
    }
}
