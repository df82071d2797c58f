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
//! * [`accuracy`]: confidence half-widths of additive noise and their inverse (the ε a
//!   target accuracy needs), and the belief table of Li, Lyu, Su & Yang (2016).

pub mod accuracy;
mod clamped_sum;
mod mean;
pub mod records;
mod releases;

pub use clamped_sum::ClampedSum;
pub use mean::{Mean, MeanMethod};
pub use records::Bounds;
pub use releases::{AdditiveNoise, Release, count, histogram, mean, sum};
