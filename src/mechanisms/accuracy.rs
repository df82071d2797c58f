//! Helpers shared by the mechanisms' accuracy statements and the statistics layer's
//! (`statistics::accuracy`): they live here, below both, so that no mechanism imports
//! from `statistics` (design.md §1: dependencies point down).

use crate::Error;
use crate::privacy::round;

/// An upper bound on `ln(c/β)` for `c ≥ 1` and `β ∈ (0, 1)`, finite even when `c/β`
/// overflows (`β` subnormal): `ln c − ln β`, each logarithm rounded outward.
pub(crate) fn ln_ratio_up(c: f64, beta: f64) -> f64 {
    round::add_up(round::ln_up(c), -round::ln_down(beta)).max(0.0)
}

/// `width` if it is a finite `f64`, else a typed error (a promised half-width of `+∞`
/// promises nothing).
pub(crate) fn finite_half_width(width: f64) -> Result<f64, Error> {
    if width.is_finite() {
        Ok(width)
    } else {
        Err(Error::Unattainable {
            what: "the half-width overflows f64 at this scale and confidence level: use a smaller scale",
        })
    }
}
