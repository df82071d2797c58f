//! The public grid of a private quantile: `B` bins of equal width over `[lower, upper]`,
//! the data-independent rule that puts every `f64` into one bin, and the exact,
//! mergeable state (a count per bin).
//!
//! # The rule
//!
//! A record `x` is first read by [`Bounds::read`] (NaN → the public imputation value,
//! by default the midpoint; ±∞ and out-of-range values clamped to `[lower, upper]`),
//! then put in bin `j` when `eⱼ ≤ x < eⱼ₊₁` (the last bin also holds `x = upper`). The
//! edges are `e₀ = lower`, `e_B = upper` and `eⱼ = min(lower + j·w, upper)` with
//! `w = (upper − lower)/B`, each the same `f64` expression every time (a deterministic,
//! public function of `(lower, upper, B, j)`; rounding is monotone, so the edges never
//! decrease; bins narrower than the `f64` spacing near `lower` may be empty, never
//! overlapping). A record's bin is guessed from one product and confirmed against the
//! two edges (a binary search over the edges in the rare case rounding put the guess one
//! bin off), so the rule is exactly the comparison with the edges. So for every edge,
//! `Lⱼ = Σ_{i<j} countᵢ` is **exactly** the number of records `< eⱼ` (`L_B = n`), the
//! quantity the quantile's rank score is built from. A record never causes an error.
//!
//! # The state
//!
//! [`BinCounts`]: one `u64` per bin. Two partitions' counts merge by adding bin by bin
//! (each bin saturating at `u64::MAX`, a public cap), so the state of a grouped quantile
//! can be computed per partition or executor and merged exactly, in any order, before
//! the single release. Saturating a bin is 1-Lipschitz: adding or removing records moves
//! each saturated count by at most as much as the exact one, so the sensitivity analysis
//! of [`Quantile`](super::Quantile) holds for the saturated counts too.

use super::records::Bounds;
use crate::Error;

/// The most bins a [`QuantileGrid`] may have: `2²⁰` (one-millisecond bins of an hour
/// and finer; a release selects over `B + 1` edges, a fixed number of words each, and
/// its state is one `u64` per bin).
pub const MAX_QUANTILE_BINS: usize = 1 << 20;

/// `B` bins of equal width over public bounds `[lower, upper]`, with the public value
/// that replaces NaN records. See the [module docs](self) for the rule and the edges.
///
/// ```
/// use dpmech::statistics::QuantileGrid;
/// let seconds = QuantileGrid::new(0.0, 3600.0, 3600)?; // one-second bins
/// assert_eq!(seconds.bin_of(12.7), 12);
/// assert_eq!(seconds.bin_of(f64::INFINITY), 3599); // clamped to the last bin
/// assert_eq!(seconds.bin_of(-4.0), 0);
/// assert_eq!(seconds.bin_of(f64::NAN), 1800); // the midpoint, 1800 s
/// assert_eq!(seconds.interval(12), (12.0, 13.0));
/// assert_eq!(seconds.midpoint(12), 12.5);
/// let counts = seconds.counts(&[1.5, 2.5, 2.5, f64::NAN]);
/// assert_eq!(counts.total(), 4);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantileGrid {
    bounds: Bounds,
    /// `bounds`' fields, flat for the per-record path.
    lower: f64,
    upper: f64,
    nan: f64,
    bins: usize,
    width: f64,
    inverse_width: f64,
}

impl QuantileGrid {
    /// `bins` bins of equal width over `[lower, upper]`; NaN records are read as the
    /// midpoint unless [`impute_nan`](Self::impute_nan) says otherwise.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `lower` or `upper` is not finite, `lower ≥ upper`,
    /// `upper − lower` overflows, or `bins` is not in `1..=`[`MAX_QUANTILE_BINS`]
    /// ([`Error::InvalidSensitivity`] when `upper − lower` overflows, as for [`Bounds`]).
    pub fn new(lower: f64, upper: f64, bins: usize) -> Result<Self, Error> {
        let bounds = Bounds::new(lower, upper)?;
        if !(1..=MAX_QUANTILE_BINS).contains(&bins) {
            return Err(Error::InvalidParameter {
                name: "bins",
                value: bins as f64,
                reason: "a quantile grid has between 1 and 2^20 bins",
            });
        }
        let width = (upper - lower) / bins as f64;
        let inverse_width = bins as f64 / (upper - lower);
        if !(width > 0.0 && inverse_width.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "bins",
                value: bins as f64,
                reason: "the bins must have a positive width representable in f64",
            });
        }
        Ok(Self {
            bounds,
            lower,
            upper,
            nan: bounds.nan_value(),
            bins,
            width,
            inverse_width,
        })
    }

    /// The same grid, NaN records read as `value` (public, within the bounds).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `value` is not within `[lower, upper]`.
    pub fn impute_nan(self, value: f64) -> Result<Self, Error> {
        let bounds = self.bounds.impute_nan(value)?;
        Ok(Self {
            bounds,
            nan: bounds.nan_value(),
            ..self
        })
    }

    /// The number of bins `B`.
    pub fn bins(&self) -> usize {
        self.bins
    }

    /// The lower bound `e₀`.
    pub fn lower(&self) -> f64 {
        self.lower
    }

    /// The upper bound `e_B`.
    pub fn upper(&self) -> f64 {
        self.upper
    }

    /// The clamping and NaN rule applied to every record.
    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// Edge `eⱼ` for `j` in `0..=B` (`e₀ = lower`, `e_B = upper`); `j > B` gives `upper`.
    #[inline]
    pub fn edge(&self, j: usize) -> f64 {
        if j == 0 {
            self.lower()
        } else if j >= self.bins {
            self.upper()
        } else {
            (self.lower() + j as f64 * self.width).min(self.upper())
        }
    }

    /// The values bin `j` holds: `[eⱼ, eⱼ₊₁)` (`[e_{B−1}, upper]` for the last bin).
    pub fn interval(&self, j: usize) -> (f64, f64) {
        (self.edge(j), self.edge(j + 1))
    }

    /// The midpoint `eⱼ/2 + eⱼ₊₁/2` of bin `j`: the value a quantile release returns.
    pub fn midpoint(&self, j: usize) -> f64 {
        self.edge(j) / 2.0 + self.edge(j + 1) / 2.0
    }

    /// The bin of one record, by the [rule](self#the-rule): constant memory, no
    /// allocation, never an error. The answer is always in `0..B`.
    #[inline]
    pub fn bin_of(&self, x: f64) -> usize {
        // The rule of `Bounds::read`, inlined: NaN imputed, then clamped (±∞ included).
        let v = if x.is_nan() {
            self.nan
        } else {
            x.max(self.lower).min(self.upper)
        };
        // A guess from one product (a float-to-int cast saturates), accepted when the
        // exact comparison with the public edges confirms it; otherwise (rare: only
        // when rounding puts the guess one bin off) a binary search over the edges.
        let j = (((v - self.lower) * self.inverse_width) as usize).min(self.bins - 1);
        if v < self.edge(j) || (j + 1 < self.bins && v >= self.edge(j + 1)) {
            return self.search(v);
        }
        j
    }

    /// The last bin `j` with `eⱼ ≤ v` (the edges never decrease and `e₀ ≤ v`).
    #[cold]
    #[inline(never)]
    fn search(&self, v: f64) -> usize {
        let (mut low, mut high) = (0, self.bins);
        while high - low > 1 {
            let mid = low + (high - low) / 2;
            if self.edge(mid) <= v {
                low = mid;
            } else {
                high = mid;
            }
        }
        low
    }

    /// The exact counts of `records` per bin.
    #[inline]
    pub fn counts(&self, records: &[f64]) -> BinCounts {
        let mut counts = BinCounts::new(self);
        counts.add_all(self, records);
        counts
    }

    /// Checks that `counts` has one entry per bin (a public shape).
    pub(crate) fn check_counts(&self, counts: &[u64]) -> Result<(), Error> {
        if counts.len() == self.bins {
            Ok(())
        } else {
            Err(Error::InvalidParameter {
                name: "counts",
                value: counts.len() as f64,
                reason: "the counts must have one entry per bin of the grid",
            })
        }
    }
}

/// Exact counts per bin of a [`QuantileGrid`]: the mergeable state of a private
/// quantile. Merging adds bin by bin, saturating at `u64::MAX` (see the
/// [module docs](self#the-state)).
///
/// ```
/// use dpmech::statistics::{BinCounts, QuantileGrid};
/// let grid = QuantileGrid::new(0.0, 10.0, 10)?;
/// let mut left = grid.counts(&[1.0, 2.0]);
/// let right = grid.counts(&[2.5, 9.0]);
/// left.merge(&right)?;
/// assert_eq!(left.as_slice()[2], 2);
/// assert_eq!(left, grid.counts(&[1.0, 2.0, 2.5, 9.0]));
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinCounts {
    counts: Vec<u64>,
}

impl BinCounts {
    /// All-zero counts for `grid`.
    pub fn new(grid: &QuantileGrid) -> Self {
        Self {
            counts: vec![0; grid.bins()],
        }
    }

    /// Counts computed elsewhere (e.g. by an engine), one per bin of `grid`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `counts.len()` is not the number of bins.
    pub fn from_counts(grid: &QuantileGrid, counts: Vec<u64>) -> Result<Self, Error> {
        grid.check_counts(&counts)?;
        Ok(Self { counts })
    }

    /// Adds one record (read by `grid`'s rule), saturating.
    #[inline]
    pub fn add(&mut self, grid: &QuantileGrid, x: f64) {
        if let Some(c) = self.counts.get_mut(grid.bin_of(x)) {
            *c = c.saturating_add(1);
        }
    }

    /// Adds every record of `records`.
    #[inline]
    pub fn add_all(&mut self, grid: &QuantileGrid, records: &[f64]) {
        for &x in records {
            self.add(grid, x);
        }
    }

    /// Adds `other` bin by bin, saturating at `u64::MAX`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when the two have different numbers of bins (nothing
    /// is changed).
    pub fn merge(&mut self, other: &BinCounts) -> Result<(), Error> {
        if other.counts.len() != self.counts.len() {
            return Err(Error::InvalidParameter {
                name: "counts",
                value: other.counts.len() as f64,
                reason: "only counts over the same grid merge",
            });
        }
        for (a, &b) in self.counts.iter_mut().zip(&other.counts) {
            *a = a.saturating_add(b);
        }
        Ok(())
    }

    /// The counts, one per bin.
    pub fn as_slice(&self) -> &[u64] {
        &self.counts
    }

    /// The number of records counted (exact, `u128`).
    pub fn total(&self) -> u128 {
        self.counts.iter().map(|&c| c as u128).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_float_lands_in_the_bin_of_its_edges() {
        let grid = QuantileGrid::new(-1.0, 2.0, 7).unwrap();
        let special = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN,
            -0.0,
            f64::MIN_POSITIVE,
            -1.0,
            2.0,
            1.0 / 7.0,
        ];
        let ordinary = (0..2000).map(|i| -1.5 + i as f64 * 0.0017);
        for x in special.into_iter().chain(ordinary) {
            let j = grid.bin_of(x);
            let v = grid.bounds().read(x);
            assert!(j < 7);
            assert!(grid.edge(j) <= v, "{x}");
            assert!(v < grid.edge(j + 1) || (j == 6 && v == 2.0), "{x}");
        }
        for j in 0..7 {
            assert!(grid.edge(j) < grid.edge(j + 1));
            assert_eq!(grid.bin_of(grid.edge(j)), j);
        }
        assert_eq!(grid.bin_of(f64::NAN), grid.bin_of(0.5));
        assert_eq!(grid.impute_nan(-1.0).unwrap().bin_of(f64::NAN), 0);
    }

    #[test]
    fn bad_grids_are_refused() {
        assert!(QuantileGrid::new(1.0, 1.0, 4).is_err());
        assert!(QuantileGrid::new(2.0, 1.0, 4).is_err());
        assert!(QuantileGrid::new(f64::NAN, 1.0, 4).is_err());
        assert!(QuantileGrid::new(0.0, f64::INFINITY, 4).is_err());
        assert!(QuantileGrid::new(f64::MIN, f64::MAX, 4).is_err());
        assert!(QuantileGrid::new(0.0, 1.0, 0).is_err());
        assert!(QuantileGrid::new(0.0, 1.0, MAX_QUANTILE_BINS + 1).is_err());
        assert!(QuantileGrid::new(0.0, 1.0, MAX_QUANTILE_BINS).is_ok());
        assert!(QuantileGrid::new(0.0, 1.0, 4).unwrap().impute_nan(2.0).is_err());
    }

    #[test]
    fn merging_is_addition_and_saturates() {
        let grid = QuantileGrid::new(0.0, 4.0, 4).unwrap();
        let mut a = BinCounts::from_counts(&grid, vec![u64::MAX - 1, 1, 0, 0]).unwrap();
        a.merge(&BinCounts::from_counts(&grid, vec![5, 1, 0, 2]).unwrap())
            .unwrap();
        assert_eq!(a.as_slice(), &[u64::MAX, 2, 0, 2]);
        let other = QuantileGrid::new(0.0, 4.0, 3).unwrap();
        assert!(a.merge(&BinCounts::new(&other)).is_err());
        assert!(BinCounts::from_counts(&grid, vec![1; 3]).is_err());
    }
}
