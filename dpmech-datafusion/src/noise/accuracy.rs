//! The accuracy statements of released values ([`ReleasedValue`], [`Accuracy`]): a
//! function of the public parameters only — an interval at β = 5 % for counts, sums,
//! means, variances and standard deviations, a rank error for quantiles, the threshold's
//! failure probability for bounds.

use dpmech::statistics::Bounds;

/// One released value with its accuracy statement (from the noise distribution and the
/// grid, which are public).
///
/// ```
/// use dpmech_datafusion::{Accuracy, ReleasedValue};
/// fn describe(v: &ReleasedValue) -> String {
///     match v.accuracy {
///         Accuracy::Interval { lower, upper, beta } => {
///             format!("{} in [{lower}, {upper}] with probability {}", v.name, 1.0 - beta)
///         }
///         Accuracy::RankError { ranks, beta } => {
///             format!("{}: rank error ≤ OPT + {ranks} with probability {}", v.name, 1.0 - beta)
///         }
///         Accuracy::FailureProbability { beta } => format!("{}: fails with probability ≤ {beta}", v.name),
///         _ => v.name.clone(),
///     }
/// }
/// # let _ = describe;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ReleasedValue {
    /// `count`, `count_units`, `sum(column)`, `mean(column)`, `variance(column)`,
    /// `stddev(column)`, `quantile(column, q)`, `lower_bound(column)` or
    /// `upper_bound(column)`.
    pub name: String,
    /// The private value.
    pub value: f64,
    /// A 95 % interval around the true (bounded, clamped) value: for counts, sums,
    /// means, variances and standard deviations the interval of
    /// [`accuracy`](Self::accuracy); for quantiles the grid's range and for bounds the
    /// public range `±2⁶⁴` (true but uninformative: their statement is
    /// [`accuracy`](Self::accuracy)'s rank error or failure probability).
    pub interval: (f64, f64),
    /// What can be said of the value's error, with its probability.
    pub accuracy: Accuracy,
}

/// The accuracy statement of a [`ReleasedValue`], from public parameters only.
///
/// | aggregate | statement |
/// |---|---|
/// | `dp_count`, `dp_count_units`, `dp_sum`, `dp_mean`, `dp_variance`, `dp_stddev` | [`Interval`](Self::Interval), β = 0.05 |
/// | `dp_quantile`, `dp_median` | [`RankError`](Self::RankError), β = 0.05 |
/// | `dp_bounds` (both values) | [`FailureProbability`](Self::FailureProbability), β = 10⁻⁶ |
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Accuracy {
    /// With probability at least `1 − beta` the true value of the cell (over its bounded,
    /// clamped records) lies in `[lower, upper]`.
    Interval {
        /// The lower end.
        lower: f64,
        /// The upper end.
        upper: f64,
        /// The probability that it does not.
        beta: f64,
    },
    /// A quantile: with probability at least `1 − beta` the released edge's rank among
    /// the cell's bounded records is within `OPT + ranks` of `q·n`, where `OPT`, the
    /// grid's own error, is at most half the number of records in the bin holding the
    /// target rank ([`dpmech::statistics::Quantile::rank_error`]:
    /// `ranks = 2(Δu + g)/ε·ln((B + 1)/β) + g`). In value units the error is the
    /// data's spread over those ranks, plus one bin.
    RankError {
        /// The rank error beyond the grid's, `r(β)`.
        ranks: f64,
        /// The probability that it is exceeded.
        beta: f64,
    },
    /// Bounds: with probability at least `1 − beta` no bin without records clears the
    /// threshold, so the released bounds lie within the hull of the powers of two that
    /// hold records ([`dpmech::statistics::ApproxBounds`]); bins holding few records may
    /// be cut off.
    FailureProbability {
        /// The probability that an empty bin clears.
        beta: f64,
    },
}

impl Accuracy {
    /// The 95 % interval `[v − w, v + w]`.
    pub(super) fn around(value: f64, width: f64) -> Self {
        Accuracy::Interval {
            lower: value - width,
            upper: value + width,
            beta: INTERVAL_BETA,
        }
    }

    /// The 95 % interval `interval`.
    pub(super) fn interval((lower, upper): (f64, f64)) -> Self {
        Accuracy::Interval {
            lower,
            upper,
            beta: INTERVAL_BETA,
        }
    }
}

/// The β of every interval and rank error: 5 %.
pub(super) const INTERVAL_BETA: f64 = 0.05;

/// The failure probability of the bounds' threshold: 10⁻⁶ (the core's default).
pub(super) const BOUNDS_BETA: f64 = 1e-6;

/// Each of a mean's two noises gets half of the 5 % of its 95 % interval.
pub(super) const MEAN_BETA: f64 = INTERVAL_BETA / 2.0;

/// A mean's 95 % interval, in value units, from the noisy count `n` and sum `s` (value
/// units, of records less `centre`) and the half-widths `wc` and `ws` of their noises
/// at [`MEAN_BETA`] each: the extreme ratios `(s ± ws)/(n ± wc)` (the count at least 1)
/// plus `centre`, intersected with the bounds.
pub(super) fn mean_interval(n: f64, s: f64, wc: f64, ws: f64, bounds: &Bounds, centre: f64) -> (f64, f64) {
    let (lower, upper) = (bounds.lower(), bounds.upper());
    let (lo_n, hi_n) = ((n - wc).max(1.0), n + wc);
    let ratios = [(s - ws) / lo_n, (s - ws) / hi_n, (s + ws) / lo_n, (s + ws) / hi_n];
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min) + centre;
    let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max) + centre;
    (
        clamp_or(lo, lower, upper, lower),
        clamp_or(hi, lower, upper, upper),
    )
}

/// `x` clamped to `[lower, upper]`, or `fallback` if `x` is NaN (∞ − ∞ at the ends of
/// the `f64` range): the interval is then the whole range on that side.
fn clamp_or(x: f64, lower: f64, upper: f64, fallback: f64) -> f64 {
    if x.is_nan() {
        fallback
    } else {
        x.clamp(lower, upper)
    }
}
