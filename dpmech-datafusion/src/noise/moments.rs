//! The moments a column's means, variances and standard deviations share in one query
//! (module docs of `noise`, "Shared moments"): one noisy count, centred sum and sum of
//! squares per cell, their budgets, and the variance's value and interval from them.

use dpmech::privacy::round;
use rand_chacha::ChaCha20Rng;

use super::CellNoise;
use super::accuracy::{INTERVAL_BETA, MEAN_BETA};
use crate::columns::partial;
use crate::error::DpError;
use crate::query::Aggregate;
use crate::udf::{Centring, Grid};

/// The noisy count, centred sum and sum of squares of one column shared by its means,
/// variances and standard deviations in one query (module docs): drawn once per cell
/// from the generator of aggregate `label` (the first of them), so each of them reads
/// the same three noisy sums.
#[derive(Debug)]
pub(crate) struct Moments {
    /// The index of the aggregate whose generator draws the three sums.
    pub(crate) label: usize,
    pub(crate) columns: SpreadColumns,
    pub(super) count: CellNoise,
    pub(super) sum: CellNoise,
    pub(super) squares: CellNoise,
}

/// The budgets (ε, or ρ) of a column's [`Moments`]: the count, the centred sum and the
/// sum of squares.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct MomentBudgets {
    pub(crate) count: f64,
    pub(crate) sum: f64,
    pub(crate) squares: f64,
    /// Whether a mean reads them (its interval must be finite too).
    pub(crate) mean: bool,
}

impl MomentBudgets {
    /// The budgets of `aggregates`, the means and variances of one column: ε/2 of each
    /// mean to the count and the sum, ε/3 of each variance to each of the three (rounded
    /// down, so their total never exceeds Σ ε).
    pub(crate) fn of<'a>(aggregates: impl IntoIterator<Item = &'a Aggregate>) -> Self {
        let mut b = MomentBudgets::default();
        for a in aggregates {
            match a {
                Aggregate::Mean { epsilon, .. } => {
                    b.mean = true;
                    let half = round::div_down(*epsilon, 2.0);
                    b.count = round::add_down(b.count, half);
                    b.sum = round::add_down(b.sum, half);
                }
                Aggregate::Variance { epsilon, .. } => {
                    let third = round::div_down(*epsilon, 3.0);
                    b.count = round::add_down(b.count, third);
                    b.sum = round::add_down(b.sum, third);
                    b.squares = round::add_down(b.squares, third);
                }
                _ => {}
            }
        }
        b
    }
}

impl Moments {
    /// The three noises of a column read as `columns`, over at most `max_groups` cells of
    /// `max_rows` rows per unit: the count (sensitivity m), the centred sum (m·half
    /// units) and the sum of squares (m·⌊half²/2^shift⌋ units of `2^shift`), at
    /// `budgets`; drawn by aggregate `label`.
    pub(crate) fn new(
        label: usize,
        columns: SpreadColumns,
        budgets: MomentBudgets,
        max_groups: u32,
        max_rows: u32,
        zcdp: bool,
    ) -> Result<Self, DpError> {
        let m = u64::from(max_rows);
        let unrepresentable = |what: &str| {
            DpError::Unrepresentable(format!(
                "the variance's {what} is not representable: lower max_rows_per_group or narrow the bounds"
            ))
        };
        let half = columns.centring.half;
        let sum_sensitivity = m
            .checked_mul(half)
            .ok_or_else(|| unrepresentable("sum sensitivity"))?;
        let squares_sensitivity = m
            .checked_mul(columns.centring.largest_square())
            .ok_or_else(|| unrepresentable("sensitivity of the squares"))?;
        // The largest variance, h², must be a finite f64 in value units.
        let h = half as f64 * columns.grid.step();
        if !(h * h).is_finite() {
            return Err(unrepresentable("largest value (half the bounds' width, squared)"));
        }
        let moments = Moments {
            label,
            columns,
            count: CellNoise::new(m, budgets.count, max_groups, zcdp)?,
            sum: CellNoise::new(sum_sensitivity, budgets.sum, max_groups, zcdp)?,
            squares: CellNoise::new(squares_sensitivity, budgets.squares, max_groups, zcdp)?,
        };
        // The intervals' widths must be finite: the variance's, and a mean's in value
        // units.
        let square_unit = f64::from(columns.centring.shift).exp2();
        if !(moments.squares.half_width(SPREAD_BETA)? * square_unit).is_finite()
            || !moments.sum.half_width(SPREAD_BETA)?.is_finite()
            || (budgets.mean && !(moments.sum.half_width(MEAN_BETA)? * columns.grid.step()).is_finite())
        {
            return Err(unrepresentable("noise width"));
        }
        Ok(moments)
    }

    /// The noisy count, centred sum and sum of squares of the cell whose generator is
    /// `rng` (that of aggregate `label`), in this order, whoever reads them.
    pub(super) fn draw(&self, partials: &[i64], rng: &mut ChaCha20Rng) -> (f64, f64, f64) {
        let n = self.count.release(partials[partial::COUNT], rng) as f64;
        let s1 = self.sum.release(partials[partial::sum(self.columns.value)], rng) as f64;
        let s2 = self.squares.release(partials[self.columns.square], rng) as f64;
        (n, s1, s2)
    }
}

/// Where a variance's partials are and how its records were read: the sum of its
/// centred records at `partial::sum(value)`, the sum of their squares at `square`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpreadColumns {
    pub(crate) value: usize,
    pub(crate) square: usize,
    pub(crate) grid: Grid,
    pub(crate) centring: Centring,
}

/// Each of a variance's three noises gets a third of the 5 % of its 95 % interval
/// (union bound).
pub(super) const SPREAD_BETA: f64 = INTERVAL_BETA / 3.0;

/// A variance (or standard deviation) and its 95 % interval, in value units, from the
/// noisy count `n`, centred sum `s1` (grid units) and sum of squares `s2` (units of
/// `2^shift` grid units²), and the noises' half-widths at [`SPREAD_BETA`] each.
///
/// The value is `clamp(s2·2^shift/n − (s1/n)², 0, half²)·g²` (0 when `n ≤ 1`, the
/// variance of at most one record), the standard deviation its square root. The
/// interval is the range of `S₂/n − (S₁/n)²` over the box of the three noises' widths,
/// widened for the truncations of the exact sums (a pair's share of a sum and each
/// square are truncated, by less than one unit each: at most `2n` units of the squares
/// and `n` of the sum), bounded term by term and rounded outward, intersected with
/// `[0, half²]`; the whole `[0, half²]` when the box allows `n < 1`.
pub(super) fn spread_release(
    n: f64,
    s1: f64,
    s2: f64,
    (wc, w1, w2): (f64, f64, f64),
    columns: &SpreadColumns,
    std_dev: bool,
) -> (f64, (f64, f64)) {
    let half = columns.centring.half as f64;
    let largest = round::mul_up(half, half);
    let square_unit = f64::from(columns.centring.shift).exp2();
    let variance = if n <= 1.0 {
        0.0
    } else {
        (s2 * square_unit / n - (s1 / n).powi(2)).clamp(0.0, largest)
    };
    let (n_low, n_high) = (round::sub_down(n, wc), round::add_up(n, wc));
    let interval = if n_low.is_nan() || n_low < 1.0 || !n_high.is_finite() {
        (0.0, largest)
    } else {
        let s2_low = round::mul_down(round::sub_down(s2, w2).max(0.0), square_unit);
        let s2_high = round::mul_up(
            round::add_up(round::add_up(s2, w2), round::mul_up(2.0, n_high)),
            square_unit,
        );
        let s1_width = round::add_up(w1, n_high);
        let (s1_low, s1_high) = (round::sub_down(s1, s1_width), round::add_up(s1, s1_width));
        // S₂/n, and the range of S₁/n (then of its square) over the box.
        let (a_low, a_high) = (round::div_down(s2_low, n_high), round::div_up(s2_high, n_low));
        let r_low = round::div_down(s1_low, if s1_low < 0.0 { n_low } else { n_high });
        let r_high = round::div_up(s1_high, if s1_high < 0.0 { n_high } else { n_low });
        let b_high = round::mul_up(r_low.abs().max(r_high.abs()), r_low.abs().max(r_high.abs()));
        let b_low = if r_low <= 0.0 && r_high >= 0.0 {
            0.0
        } else {
            let nearest = r_low.abs().min(r_high.abs());
            round::mul_down(nearest, nearest)
        };
        (
            round::sub_down(a_low, b_high).clamp(0.0, largest),
            round::sub_up(a_high, b_low).clamp(0.0, largest),
        )
    };
    // In value units: × g² (exact, a power of two, unless it leaves the f64 range).
    let g = columns.grid.step();
    let to_value = |v: f64| v * g * g;
    if std_dev {
        (
            variance.sqrt() * g,
            (round::sqrt_down(interval.0) * g, round::sqrt_up(interval.1) * g),
        )
    } else {
        (to_value(variance), (to_value(interval.0), to_value(interval.1)))
    }
}
