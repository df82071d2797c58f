//! Releases users actually make, built only from the layers below, and what they mean.
//!
//! * [`count`], [`sum`], [`mean`] ([`MeanMethod`]), [`histogram`]: releases charged to
//!   an [`Accountant`](crate::Accountant) before the noise is drawn (through its generic
//!   [`release`](crate::Accountant::release) path), each stating its
//!   [`PrivacyLoss`](crate::PrivacyLoss) and, when additive, its noise for accuracy.
//! * [`ClampedSum`], [`Mean`]: the same statistics as [`Mechanism`](crate::Mechanism)s,
//!   for generic code (the auditor, other accountants, the SQL layer).
//! * [`records`]: how records are read — a data-independent rule for every `f64`
//!   ([`Bounds`]: NaN imputed by a public value, ±∞ and out-of-range values clamped) and
//!   an exact, order-independent integer sum on the release's grid. No record ever makes
//!   a release fail: errors come from public parameters and the accountant only.
//! * [`Quantile`], [`Quantiles`]: private quantiles over a public [`QuantileGrid`] from
//!   exact, mergeable [`BinCounts`] (permute-and-flip over the grid's edges; several
//!   quantiles by a recursive split); [`ContributionBoundsSuggester`] suggests `L0` and
//!   `L∞` as DP quantiles of the per-unit numbers.
//! * [`ApproxBounds`] ([`approx_bounds`]): private bounds of a column with no known
//!   range, from a noisy histogram over signed powers of two ([`BoundsHistogram`]).
//! * [`Variance`] ([`variance`]): variance, standard deviation and mean from exact sums of
//!   the count, the values and their squares ([`VarianceState`]), with intervals
//!   ([`Spread`]).
//! * [`UnitCount`]: counts of distinct privacy units per group, pure ε-DP or ρ-zCDP, with
//!   the sensitivity that the bound on groups per unit gives.
//! * [`accuracy`]: confidence half-widths of additive noise and their inverse (the ε a
//!   target accuracy needs), and the belief table of Li, Lyu, Su & Yang (2016).

pub mod accuracy;
pub mod bounds;
mod clamped_sum;
mod mean;
pub mod quantile;
pub mod quantile_contributions;
pub mod quantile_grid;
pub mod quantile_split;
pub mod records;
mod releases;
mod unit_count;
mod variance;

pub use bounds::{ApproxBounds, BoundsHistogram, PrivateBounds, approx_bounds};
pub use clamped_sum::ClampedSum;
pub use mean::{Mean, MeanMethod};
pub use quantile::{MAX_CONTRIBUTIONS, MAX_QUANTILES, Quantile};
pub use quantile_contributions::{ChargedSuggestion, ContributionBoundsSuggester, SuggestedBounds};
pub use quantile_grid::{BinCounts, MAX_QUANTILE_BINS, QuantileGrid};
pub use quantile_split::Quantiles;
pub use records::Bounds;
pub use releases::{AdditiveNoise, Release, count, histogram, mean, sum};
pub use unit_count::UnitCount;
pub use variance::{Spread, Variance, VarianceState, variance};
