//! Composition: how much privacy several releases spend together.
//!
//! Pure functions, one file per rule, plus one stateful [`Accountant`]. Each rule is
//! reachable as one function taking and returning [`PrivacyLoss`] — `composition::{
//! sequential, parallel, advanced, optimal}` — and its module holds the numeric
//! questions around it (`advanced::epsilon`, `optimal::delta`,
//! `optimal::max_epsilon_per_step`, …). **Argument order**, everywhere: the number of
//! steps k, then the per-step guarantee or ε, then the target or slack (δ, δ′ or
//! ε_total).
//!
//! | rule | entry point | guarantee composed | valid under adaptive choice of ε? |
//! | --- | --- | --- | --- |
//! | sequential (basic) | [`sequential()`], [`sequential`](mod@sequential) module | Σε, Σδ (pure / approximate), Σρ (zCDP), Σρ and Σδ (approximate zCDP) | yes (approximate zCDP: its ρ and δ fixed up front) |
//! | parallel, data-independent partition | [`parallel()`], [`parallel_public_sizes`] | add/remove: max; substitute: max(within-part substitution, two largest add/remove) | yes |
//! | advanced (Dwork–Rothblum–Vadhan 2010) | [`advanced()`], [`advanced`](mod@advanced) module | `√(2k ln(1/δ′))ε + kε(e^ε − 1)` | only with k and ε fixed up front |
//! | optimal homogeneous (Kairouz–Oh–Viswanath 2015) | [`optimal()`], [`optimal`](mod@optimal) module | exact δ(ε_total) | only with k and ε fixed up front |
//! | zero-concentrated DP (Bun–Steinke 2016) | [`sequential()`] on ρ, [`zcdp`] module | Σρ; ρ → (ε, δ) simple and tight (CKS 2020); δ-approximate ρ-zCDP: Σρ, Σδ (Lemma 8.3), → (ε, δ + δ′) | yes (approximate zCDP: its ρ and δ fixed up front) |
//! | Rényi DP (Mironov 2017) | [`rdp`] module ([`rdp::RdpCurve`]) | order-wise Σ of RDP curves; → (ε, δ) by CKS 2020 | the curves fixed in advance: yes; curves chosen adaptively: only through the Rényi filter of [`online`] |
//! | privacy loss distributions | [`pld`] module | certified numerical composition, never above the closed forms ([`closed`]) | mechanisms fixed in advance (queries may be adaptive) |
//! | budget accountant | [`Accountant`] (charged by [`Charge`]) | Σε, Σδ, Σρ, (Σρ, Σδ) of approximate zCDP; a declared [`Plan`]; [`Accountant::filter`]: a Rényi filter for (ε, δ) budgets | sums and filter: yes, even the parameters (approximate-zCDP sums: ρ and δ fixed up front); a plan: only with k and ε₀ fixed up front |
//! | durable ledger | [`ledger::LedgerStore`] behind an [`Accountant`] ([`Accountant::with_ledger`]) | the accountant's own rule, over every process's and analyst's charges, committed before any noise | as the accountant's rule |
//! | online accounting | [`online::OnlineAccountant`] | one release at a time: fixed-sequence rule (PLD + closed forms) or Rényi filter (Feldman & Zrnic 2021) | filter: yes, even the mechanisms and their parameters; fixed-sequence: no |
//!
//! Every function validates its arguments first and returns a typed [`Error`] — never
//! a panic, never a NaN. Every *reported loss* is rounded up and every *allowance*
//! (e.g. the largest per-step ε that fits a target) is rounded down, so floating-point
//! error can only make the crate claim less privacy than it provides.
//!
//! ```
//! use dpmech::composition::{advanced, optimal, sequential};
//! // Ten thousand 1/801-DP queries, slack δ′ = e^−32: the textbook says "ε′ ≤ 1"...
//! let eps = advanced::epsilon(10_000, 1.0 / 801.0, (-32.0f64).exp())?;
//! assert!(eps > 1.014 && eps < 1.015); // ...but computing it gives ≈ 1.0143.
//! // The largest per-step ε that really fits, under each rule:
//! let seq = sequential::max_epsilon_per_step(10_000, 1.0)?;
//! let adv = advanced::max_epsilon_per_step(10_000, 1.0, (-32.0f64).exp())?;
//! let opt = optimal::max_epsilon_per_step(10_000, 1.0, (-32.0f64).exp())?;
//! assert!(seq < adv && adv < opt);
//! # Ok::<(), dpmech::Error>(())
//! ```

pub mod accountant;
pub mod advanced;
pub mod charge;
pub mod closed;
pub mod ledger;
pub mod online;
pub mod optimal;
pub mod parallel;
pub mod pld;
pub mod rdp;
pub mod sequential;
pub mod zcdp;

pub use accountant::{Accountant, Adaptivity, LedgerEntry, Plan, PlanRule};
pub use advanced::advanced;
pub use charge::Charge;
pub use optimal::optimal;
pub use parallel::{Part, parallel, parallel_public_sizes};
pub use sequential::sequential;

use crate::Error;
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon, check_rho};

/// Validates every field of a [`PrivacyLoss`] (its fields are public, so a value may
/// have been built without the checking constructors).
pub(crate) fn validate_loss(loss: PrivacyLoss) -> Result<PrivacyLoss, Error> {
    match loss {
        PrivacyLoss::Pure { epsilon } => {
            check_epsilon(epsilon)?;
        }
        PrivacyLoss::Approximate { epsilon, delta } => {
            check_epsilon(epsilon)?;
            // δ = 0 is the pure statement written as a pair: accepted.
            if delta != 0.0 {
                check_delta(delta)?;
            }
        }
        PrivacyLoss::Zcdp { rho } => {
            check_rho(rho)?;
        }
        PrivacyLoss::ApproximateZcdp { rho, delta } => {
            check_rho(rho)?;
            // δ = 0 is plain zCDP written as a pair: accepted.
            if delta != 0.0 {
                check_delta(delta)?;
            }
        }
        PrivacyLoss::RandomDp { epsilon, gamma } => {
            check_epsilon(epsilon)?;
            check_gamma(gamma)?;
        }
    }
    Ok(loss)
}

/// Validates the γ of random DP: in the open interval (0, 1).
pub(crate) fn check_gamma(gamma: f64) -> Result<f64, Error> {
    if gamma > 0.0 && gamma < 1.0 {
        Ok(gamma)
    } else {
        Err(Error::InvalidParameter {
            name: "gamma",
            value: gamma,
            reason: "gamma must lie in the open interval (0, 1)",
        })
    }
}

/// Validates a number of composed steps (k ≥ 1) and returns it as an `f64` rounded up.
pub(crate) fn check_steps(k: u64) -> Result<f64, Error> {
    if k == 0 {
        return Err(Error::InvalidParameter {
            name: "k",
            value: 0.0,
            reason: "the number of composed steps must be at least 1",
        });
    }
    Ok(crate::privacy::round::u64_up(k))
}

/// Validates a total ε that may be 0 (as in δ(ε_total)): finite and ≥ 0, else
/// [`Error::InvalidEpsilon`] (NaN, negative and infinite values are no ε at all).
pub(crate) fn check_epsilon_total(value: f64) -> Result<f64, Error> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(Error::InvalidEpsilon { value })
    }
}

/// The largest `x` in `[lo, hi]` (both finite, `0 ≤ lo ≤ hi`) with `pred(x)`, assuming
/// `pred(lo)` holds and `pred` is monotone (true below a threshold, false above).
///
/// Bisects on the bit patterns of non-negative floats (which are ordered like the
/// values), so it ends on adjacent floats after at most 64 evaluations. The returned
/// value always satisfied `pred` when evaluated: the search can only err on the safe
/// side.
pub(crate) fn largest_satisfying(lo: f64, hi: f64, mut pred: impl FnMut(f64) -> bool) -> f64 {
    let (mut lo_bits, mut hi_bits) = (lo.to_bits(), hi.to_bits());
    if pred(hi) {
        return hi;
    }
    while hi_bits - lo_bits > 1 {
        let mid_bits = lo_bits + (hi_bits - lo_bits) / 2;
        if pred(f64::from_bits(mid_bits)) {
            lo_bits = mid_bits;
        } else {
            hi_bits = mid_bits;
        }
    }
    f64::from_bits(lo_bits)
}

/// The smallest `x` in `[lo, hi]` (both finite, `0 ≤ lo ≤ hi`) with `pred(x)`, assuming
/// `pred(hi)` holds and `pred` is monotone (false below a threshold, true above).
pub(crate) fn smallest_satisfying(lo: f64, hi: f64, mut pred: impl FnMut(f64) -> bool) -> f64 {
    let (mut lo_bits, mut hi_bits) = (lo.to_bits(), hi.to_bits());
    if pred(lo) {
        return lo;
    }
    while hi_bits - lo_bits > 1 {
        let mid_bits = lo_bits + (hi_bits - lo_bits) / 2;
        if pred(f64::from_bits(mid_bits)) {
            hi_bits = mid_bits;
        } else {
            lo_bits = mid_bits;
        }
    }
    f64::from_bits(hi_bits)
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
mod tests {
    #[test]
    fn bit_bisection_finds_adjacent_floats() {
        let x = super::largest_satisfying(0.0, 10.0, |v| v * v <= 2.0);
        assert!(x * x <= 2.0 && x.next_up() * x.next_up() > 2.0);
        let y = super::smallest_satisfying(0.0, 10.0, |v| v * v >= 2.0);
        assert!(y * y >= 2.0 && y.next_down() * y.next_down() < 2.0);
    }
}
