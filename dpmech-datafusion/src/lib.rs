//! Differentially private releases over tables in [Apache DataFusion], built on
//! [`dpmech`].
//!
//! A table is registered with its **privacy unit** (the column that identifies a
//! person) and its **contribution bounds**; a [`GroupedQuery`] then releases counts of
//! rows and of distinct units, sums, means, variances and standard deviations,
//! quantiles and approximate bounds per group — grouped by one column,
//! several (a cell per combination) or none (one cell) — with public keys (listed, or
//! the rows of a table registered as public) or with partition selection, under
//! add/remove of one privacy unit:
//!
//! 1. **Plan, then charge.** Every public parameter is validated and the whole query
//!    planned — columns exist, types have a total reading, grids, sensitivities and the
//!    selection threshold are representable, every noise can be built — before the
//!    query's total loss (Σ ε of its aggregates, plus the selection's (ε, δ)) is charged
//!    to a [`dpmech::Accountant`]. A refused query spends nothing; a refused charge runs
//!    nothing.
//! 2. **Contribution bounding in the plan.** The rows are repartitioned by a fingerprint
//!    of the unit, so all rows of one unit meet in one partition, and a physical
//!    operator of the plan (`BoundContributionsExec`, one pass over cache-sized buckets,
//!    no sort) aggregates each (unit, group) pair exactly; the pair then counts as at
//!    most `max_rows_per_group` rows of its own mean (count `min(c, m)`, sum
//!    `⌊sum·min(c, m)/c⌋` in grid units: a deterministic rule, so sums and counts stay
//!    consistent and no rows need choosing), and at most `max_groups` pairs per unit
//!    are kept, the first in an order keyed by the release (a SipHash-2-4 key derived
//!    from the [`ReleaseKey`]), so the choice depends on nothing but the unit's own
//!    groups and the key. (Histograms — quantiles, bounds — keep a keyed uniform
//!    `max_rows_per_group`-subset of a larger pair's records; variances also sum the
//!    squares of the centred records, each pair as its own mean square.) The operator
//!    emits exact per-group partials, for the groups a kept pair supports, that the
//!    engine's `GROUP BY` sums — histograms as one row per non-empty (group, bin), so a
//!    quantile's grid of up to [`MAX_QUANTILE_BINS`] bins costs rows per non-empty bin,
//!    not plan width.
//! 3. **Exact aggregation.** Values are read by a public rule (NULL and NaN → the
//!    bounds' NaN value, by default the midpoint — so does text that does not parse;
//!    ±∞ and out-of-range values clamped) and summed as **integers** on a power-of-two
//!    grid, so the result does not depend on partitioning, thread count or summation
//!    order (Casacuberta et al. 2022), and no record can cause an error.
//! 4. **Keys.** Public keys are released all, empty ones with noise. Private keys pass
//!    partition selection: a group is a candidate only if a kept pair supports it, and
//!    is released only if its noisy number of distinct units reaches a threshold
//!    (Laplace, or under zCDP Gaussian, thresholding; δ in (0, 1), charged).
//! 5. **Noise once, at the end, retry-safe.** After the final merge, outside the
//!    engine, each released cell gets exact discrete Laplace noise (dpmech's
//!    draw-independent sampler) or discrete Gaussian noise ([`GroupedQuery::zcdp`])
//!    from a ChaCha20 generator keyed by HMAC-SHA256(release key, cell
//!    key): recomputing gives the same noise, two releases share none.
//! 6. **Plans that travel.** The physical plan of a release serialises with
//!    DataFusion's protobuf plan codec; [`DpmechCodec`] carries this crate's operator
//!    and functions, so a distributed runner (a [`PlanRunner`]; the `dpmech-ballista`
//!    crate runs releases on a Ballista cluster) can ship every stage to its executors,
//!    and the decoded plan releases bit-identical values.
//!
//! Releases are written as SQL text ([`PrivateSession::sql`]: `SELECT day,
//! dp_count(0.5), dp_mean(duration, 0, 3600, 0.5) FROM visits WHERE day IN ('mon',
//! 'tue') GROUP BY day`), built with DataFusion's own `DataFrame::aggregate` over
//! [`PrivateSession::table`] with the `dp_` aggregate UDFs of module [`functions`]
//! ([`PrivateSession::release_frame`]), or built with [`GroupedQuery`]. SQL and
//! DataFrames are planned by DataFusion and their logical plan read into the same
//! [`GroupedQuery`] (module [`sql`] gives the accepted form). A DataFusion `DataFrame`
//! registers as a private table through `DataFrame::into_view`. A release registers
//! nothing in the user's `SessionContext`: one that fails or is cancelled leaves it as
//! it was, and several sessions can share clones of one context.
//!
//! # The files, by stage
//!
//! | file | stage | what it holds |
//! |---|---|---|
//! | `query.rs` | 1. query | [`GroupedQuery`], [`Keys`], [`Aggregate`], [`ContributionBounds`]; validation of every parameter and the guarantee to charge |
//! | `sql.rs` | 1. query | SQL text and DataFrames read into a [`GroupedQuery`] (module [`sql`]) |
//! | `functions.rs` | 1. query | the `dp_` aggregate UDFs of SQL and DataFrames, and the private tables' stand-ins (module [`functions`]) |
//! | `plan.rs` | 2. plan | grids, noises and threshold fixed from public parameters; the engine's plan built with `LogicalPlanBuilder` — all before the charge |
//! | `udf.rs` | 2. plan | the per-row functions: the unit's keyed fingerprint, the record rule on a grid (`Grid`, and a variance's `Centring`), the bins of quantiles (`GridBin`) and of bounds (`MagnitudeBin`), and the text key of several grouping columns; which column types are accepted |
//! | `columns.rs` | 2.–4. | the internal column names and the order of a group's partials |
//! | `bound.rs` | 3. bound | `BoundContributionsExec`, the contribution-bounding operator, and its table provider |
//! | `bound/partition.rs` | 3. bound | one partition's pass: buckets by fingerprint, each unit's pairs, L0 by keyed rank, L∞ by the pair's own mean (and mean square), or a keyed subset for histograms |
//! | `aggregate.rs` | 4. aggregate | [`PlanRunner`] and [`LocalRunner`] (where the plan runs), reading the exact per-group partials and histogram bins, the text of a cell's key |
//! | `select.rs` | 5. noise | partition selection for private keys |
//! | `noise.rs` | 5. noise | per-cell noise, its calibration, the moments shared by a column's means and variances, and accuracy statements ([`ReleasedValue`], [`Accuracy`]) |
//! | `release.rs` | 6. release | [`PrivateSession`]: plan → charge → execute → noise; [`Release`], [`ReleasedRow`] |
//! | `suggest.rs` | before a release | [`PrivateSession::suggest_contribution_bounds`]: L0 and L∞ from the data, as DP quantiles |
//! | `key.rs` | keys | [`ReleaseKey`], the derivation of the noise and bounding keys |
//! | `codec.rs` | distribution | [`DpmechCodec`], the plan codec for distributed executors |
//!
//! # Integer arithmetic on the privacy path
//!
//! No integer computation between the records and a release can wrap, in any build:
//! a record is clamped to its bounds and rounded to at most about 2²¹ grid units, then
//! saturated into 32 bits (`bound::partition::record_word`); a pair's share is computed in `i128`
//! and saturated to `i64` (`bound::partition::pair_share`); partials are summed as
//! `DECIMAL(38, 0)` (no table of fewer than 2¹⁰⁰ rows reaches its limit) and read back
//! saturated to `i64` (`aggregate`); a sum cell's sensitivity `m × per-record units` is
//! a checked multiplication, refused before the charge if it overflows (`noise`); the
//! selection threshold is refused beyond 2⁶² and the noisy count saturates
//! (`select`); noise is added with saturation at the `i64` range (the samplers of
//! `dpmech`). Each saturation maps a value beyond the range to the range's end, a
//! 1-Lipschitz map, so no sensitivity grows and no record can cause an error; the
//! crate's tests run without overflow checks (`[profile.test.package.dpmech-datafusion]`),
//! as a release build does, so a wrap cannot hide behind a debug panic.
//!
//! ```no_run
//! # async fn demo() -> Result<(), dpmech_datafusion::DpError> {
//! use std::sync::Arc;
//! use datafusion::prelude::*;
//! use dpmech::{Accountant, statistics::Bounds};
//! use dpmech_datafusion::{ContributionBounds, GroupedQuery, PrivateSession};
//!
//! let ctx = SessionContext::new();
//! let visits = ctx.table_provider("visits_raw").await?; // any registered table
//! let mut session = PrivateSession::new(ctx, Arc::new(Accountant::pure(1.0)?));
//! session.register_private("visits", visits, "user_id",
//!     ContributionBounds { max_groups: 3, max_rows_per_group: 2 })?;
//! let query = GroupedQuery::new("visits", "day")
//!     .public_keys(["mon", "tue", "wed"])
//!     .count(0.5)
//!     .mean("duration", Bounds::new(0.0, 3600.0)?, 0.5);
//! let release = session.release(&query).await?;
//! for row in &release.rows {
//!     println!("{:?}: {:?}", row.key, row.values);
//! }
//! # Ok(()) }
//! ```
//!
//! [Apache DataFusion]: https://datafusion.apache.org

#![forbid(unsafe_code)]

mod aggregate;
mod bound;
mod codec;
mod columns;
mod error;
pub mod functions;
mod key;
mod noise;
mod plan;
mod query;
mod release;
mod select;
pub mod sql;
mod suggest;
mod udf;

pub use aggregate::{LocalRunner, PlanRunner, check_complete};
pub use codec::DpmechCodec;
pub use error::DpError;
pub use key::ReleaseKey;
pub use noise::{Accuracy, ReleasedValue};
pub use query::{
    Aggregate, ContributionBounds, DEFAULT_QUANTILE_BINS, GroupedQuery, Keys, MAX_QUANTILE_BINS,
};
pub use release::{PreparedRelease, PrivateSession, Release, ReleasedRow};

/// The analysts' guide's chapters that use private SQL (`docs/guide/`): each Rust
/// block is a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/01-first-release.md")]
pub struct GuideFirstRelease;

/// The guide's chapter on the privacy unit and contribution bounds.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/02-privacy-unit.md")]
pub struct GuidePrivacyUnit;

/// The guide's chapter on public keys and partition selection.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/04-keys.md")]
pub struct GuideKeys;
