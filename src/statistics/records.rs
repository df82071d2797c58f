//! How the statistics layer reads private records: a data-independent rule for every
//! `f64` (NaN, ±∞, out of range included) and an exact, order-independent sum.
//!
//! # Why
//!
//! A value computed from private records must never cause an error: an error (or a
//! refusal that spends nothing) is itself a release, and the position of a bad record
//! would leak with it (design §3.6). And a floating-point sum of clamped records does
//! **not** have the sensitivity of the exact sum: addition rounds, absorbs small
//! addends and depends on the order, so two neighbouring datasets can have float sums
//! further apart than the clamping bound (Casacuberta, Shoemate, Vadhan & Wagaman,
//! CCS 2022). Both are fixed here, once, for every release that reads records.
//!
//! # The rule ([`Bounds`])
//!
//! Each record `v` becomes, in this order and independently of every other record:
//!
//! 1. **NaN → the imputation value**, public and chosen by the caller
//!    ([`Bounds::impute_nan`]); by default the midpoint of `[lower, upper]`;
//! 2. **clamped** to `[lower, upper]` (so `+∞ → upper`, `−∞ → lower`, `f64::MAX → upper`);
//! 3. **rounded** to the nearest multiple of the release's public grid `g = 2ᵏ` (ties away
//!    from zero), as an integer number of grid units.
//!
//! # The exact sum
//!
//! The units are added as integers: non-negative and negative contributions in two
//! separate `i128` accumulators, each saturating at `i128::MAX` — the **public cap**,
//! `2¹²⁷ − 1` grid units, far beyond any dataset that fits in memory (a record is at
//! most `2¹⁰¹` units). Each accumulator is `min(true partial sum, cap)`, a 1-Lipschitz
//! function of a sum of non-negative terms, so the result is exact whenever the cap is
//! not reached, **never depends on the order of the records**, and moves by at most one
//! record's units when one record is added, removed or replaced.
//!
//! The grid also clamps a record to its public range `±2¹⁰⁰·g` (see
//! [`Grid::to_units`]); with the Laplace grid this binds only when the bounds exceed the
//! noise scale by more than `2⁵⁹` (e.g. ε > 2⁵⁹ under add/remove), and like every clamp
//! it cannot increase the sensitivity.
//!
//! Rounding moves a record by at most `g/2`, so one record changes the sum by at most
//! `Δ + g` (`Δ` the sensitivity of the exact clamped sum under the relation). The
//! Laplace mechanism on the grid `g` charges exactly this: its unit scale is
//! `τ = ⌈(Δ/g + 1)/ε⌉` (see [`Laplace`](crate::Laplace)), so the released sum is ε-DP
//! for the rounded records, not only for idealised real arithmetic.

use crate::Error;
use crate::sampling::grid::Grid;
use crate::sensitivity::{Neighbouring, queries};

/// Public clamping bounds `[lower, upper]` for records, with the public value that
/// replaces a NaN record (see the [module docs](self) for the full rule).
///
/// `(lower, upper)` tuples convert into `Bounds` with the default imputation (the
/// midpoint); the bounds are validated when a release uses them.
///
/// ```
/// use dpmech::statistics::Bounds;
/// let hours = Bounds::new(0.0, 24.0)?.impute_nan(0.0)?; // a missing answer counts as 0 h
/// assert_eq!(hours.read(f64::NAN), 0.0);
/// assert_eq!(hours.read(f64::INFINITY), 24.0);
/// assert_eq!(hours.read(-3.0), 0.0);
/// assert_eq!(Bounds::new(0.0, 24.0)?.read(f64::NAN), 12.0); // default: the midpoint
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    lower: f64,
    upper: f64,
    nan: Option<f64>,
}

impl Bounds {
    /// `[lower, upper]`, both finite with `lower < upper`; NaN records become the
    /// midpoint unless [`impute_nan`](Self::impute_nan) says otherwise.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] for invalid bounds (not finite, `lower ≥ upper`, or a NaN
    /// imputation value outside them); [`Error::InvalidSensitivity`] when
    /// `upper − lower` overflows.
    pub fn new(lower: f64, upper: f64) -> Result<Self, Error> {
        let bounds = Self {
            lower,
            upper,
            nan: None,
        };
        bounds.validate()?;
        Ok(bounds)
    }

    /// NaN records become `value` (public, finite, within the bounds).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `value` is not within the bounds.
    pub fn impute_nan(self, value: f64) -> Result<Self, Error> {
        let bounds = Self {
            nan: Some(value),
            ..self
        };
        bounds.validate()?;
        Ok(bounds)
    }

    /// The lower bound.
    pub fn lower(&self) -> f64 {
        self.lower
    }

    /// The upper bound.
    pub fn upper(&self) -> f64 {
        self.upper
    }

    /// The midpoint `lower/2 + upper/2` (no overflow for any finite bounds).
    pub fn midpoint(&self) -> f64 {
        self.lower / 2.0 + self.upper / 2.0
    }

    /// The value that replaces a NaN record.
    pub fn nan_value(&self) -> f64 {
        self.nan.unwrap_or_else(|| self.midpoint())
    }

    /// One record after the rule: NaN imputed, then clamped. Total: every `f64` maps to
    /// a finite value in `[lower, upper]`.
    pub fn read(&self, value: f64) -> f64 {
        let value = if value.is_nan() { self.nan_value() } else { value };
        value.clamp(self.lower, self.upper)
    }

    /// The sensitivity of the exact sum of records under `relation`:
    /// `max(|lower|, |upper|)` for add/remove, `upper − lower` for substitution
    /// (rounded up).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new) (bounds converted from a tuple are checked here).
    pub fn sum_sensitivity(&self, relation: Neighbouring) -> Result<f64, Error> {
        self.validate()?;
        queries::clamped_sum(self.lower, self.upper, relation)
    }

    /// Checks the public parameters (a tuple converted with `From` is checked here).
    pub(crate) fn validate(&self) -> Result<(), Error> {
        queries::clamped_sum(self.lower, self.upper, Neighbouring::Substitute)?;
        if let Some(nan) = self.nan
            && !(nan >= self.lower && nan <= self.upper)
        {
            return Err(Error::InvalidParameter {
                name: "nan imputation value",
                value: nan,
                reason: "the value that replaces NaN records must lie within [lower, upper]",
            });
        }
        Ok(())
    }
}

impl From<(f64, f64)> for Bounds {
    /// `(lower, upper)` with the default NaN imputation (the midpoint); validated when
    /// used.
    fn from((lower, upper): (f64, f64)) -> Self {
        Self {
            lower,
            upper,
            nan: None,
        }
    }
}

/// `Σ units(read(vᵢ))` on `grid`, exact and order-independent, saturating at the public
/// cap `±(2¹²⁷ − 1)` units (see the [module docs](self)). Never fails.
pub(crate) fn exact_sum(values: &[f64], bounds: &Bounds, grid: &Grid) -> i128 {
    exact_sum_of(values.iter().map(|&v| bounds.read(v)), grid)
}

/// The exact sum of already-read (finite) values on `grid`.
pub(crate) fn exact_sum_of(values: impl Iterator<Item = f64>, grid: &Grid) -> i128 {
    let (mut positive, mut negative) = (0i128, 0i128);
    for value in values {
        let units = grid.to_units(value);
        if units >= 0 {
            positive = positive.saturating_add(units);
        } else {
            negative = negative.saturating_add(-units);
        }
    }
    // Both lie in [0, i128::MAX], so the difference cannot overflow.
    positive - negative
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_float_is_read_into_the_bounds() {
        let b = Bounds::new(-1.0, 3.0).unwrap();
        for (v, want) in [
            (f64::NAN, 1.0),
            (f64::INFINITY, 3.0),
            (f64::NEG_INFINITY, -1.0),
            (f64::MAX, 3.0),
            (f64::MIN, -1.0),
            (-0.0, 0.0),
            (2.5, 2.5),
        ] {
            assert_eq!(b.read(v), want, "{v}");
        }
        assert_eq!(b.impute_nan(-1.0).unwrap().read(f64::NAN), -1.0);
        assert!(b.impute_nan(4.0).is_err());
        assert!(b.impute_nan(f64::NAN).is_err());
        assert!(Bounds::new(1.0, 1.0).is_err());
        assert!(Bounds::new(f64::NEG_INFINITY, 1.0).is_err());
        assert!(Bounds::from((2.0, 1.0)).validate().is_err());
    }

    #[test]
    fn exact_sum_is_exact_and_order_independent() {
        let grid = Grid::new(-40);
        let b = Bounds::new(-1.0, 1.0).unwrap();
        let tiny = 3.0 * 2f64.powi(-42);
        let mut values = vec![1.0; 2048];
        values.extend(std::iter::repeat_n(tiny, 1000));
        let forward = exact_sum(&values, &b, &grid);
        values.reverse();
        assert_eq!(exact_sum(&values, &b, &grid), forward);
        // 2048·2⁴⁰ + 1000·round(0.75) units.
        assert_eq!(forward, 2048 * (1i128 << 40) + 1000);
        // Records of 2¹⁰⁰ units (the most a record can have on this grid) of both signs
        // cancel exactly, in any order.
        let coarse = Grid::new(-100);
        assert_eq!(exact_sum_of([1.0, 1.0].into_iter(), &coarse), 2i128 << 100);
        assert_eq!(exact_sum_of([1.0, -1.0, 1.0, -1.0].into_iter(), &coarse), 0);
        assert_eq!(exact_sum_of([-1.0, -1.0, 1.0, 1.0].into_iter(), &coarse), 0);
    }
}
