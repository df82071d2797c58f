//! Certified arithmetic for the draw-independent samplers: arbitrary-precision
//! fixed-point intervals that provably contain `exp(−p/q)`, a lazily extended uniform
//! real, and cumulative-distribution tables (CDT) whose 64-bit entries are certified
//! lower/upper bounds of exact thresholds.
//!
//! Nothing here uses floating point. Every bound is computed with integer arithmetic
//! whose rounding direction is explicit (`floor` for lower bounds, `ceil` for upper
//! bounds), so `lo ≤ 2ᴾ·x ≤ hi` holds for the exact real `x` by construction.
//!
//! One concept per file, each built on the ones above it:
//!
//! | file | holds |
//! |---|---|
//! | `bigint.rs` | [`Big`], an unsigned integer of any size, and the rounded fixed-point products |
//! | `interval.rs` | [`Interval`] and the enclosures [`exp_neg`], [`exp_neg_big`] of `exp(−x)` |
//! | `lazy_uniform.rs` | [`LazyUniform`] and the exact comparison [`exact_less_exp_neg`] |
//! | `threshold.rs` | the thresholds of a table: [`Threshold`] (geometric) and [`Weights`] (suffix sums) |
//! | `guide.rs` | the guide table (buckets of words) and [`GuideView`] |
//! | `cdt.rs` | [`Cdt`]: certified bounds, the fast path and the exact fallback; `probe` for tests |

mod bigint;
mod cdt;
mod guide;
mod interval;
mod lazy_uniform;
mod threshold;

pub(crate) use bigint::Big;
pub(crate) use cdt::Cdt;
#[cfg(test)]
pub(crate) use cdt::probe;
#[cfg(test)]
pub(crate) use guide::LOG_GUIDE_BITS;
#[cfg(test)]
pub(crate) use interval::prefix_below;
pub(crate) use interval::{Interval, exp_neg, exp_neg_big};
pub(crate) use lazy_uniform::{LazyUniform, exact_less_exp_neg};
pub(crate) use threshold::{Threshold, Weights};
