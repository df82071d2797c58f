//! Differentially private releases over tables in [Apache DataFusion], built on
//! [`dpmech`].
//!
//! A table is registered with its **privacy unit** (the column that identifies a
//! person) and its **contribution bounds**; a [`GroupedQuery`] then releases counts,
//! sums and means per group, with public keys or with partition selection, under
//! add/remove of one privacy unit:
//!
//! 1. **Budget first.** The query's total loss (Σ ε of its aggregates, plus the
//!    selection's (ε, δ)) is charged to a [`dpmech::Accountant`] before anything is
//!    planned or scanned; a refused charge runs nothing.
//! 2. **Contribution bounding in the plan.** The rows are repartitioned by a fingerprint
//!    of the unit, so all rows of one unit meet in one partition, and a physical
//!    operator of the plan (`BoundContributionsExec`, one pass over cache-sized buckets,
//!    no sort) aggregates each (unit, group) pair exactly; the pair then counts as at
//!    most `max_rows_per_group` rows of its own mean (count `min(c, m)`, sum
//!    `⌊sum·min(c, m)/c⌋` in grid units: a deterministic rule, so sums and counts stay
//!    consistent and no rows need choosing), and at most `max_groups` pairs per unit
//!    are kept, the first in an order keyed by the release (a SipHash-2-4 key derived
//!    from the [`ReleaseKey`]), so the choice depends on nothing but the unit's own
//!    groups and the key. The operator emits exact per-group partials that the engine's
//!    `GROUP BY` sums.
//! 3. **Exact aggregation.** Values are read by a public rule (NULL and NaN → the
//!    bounds' NaN value, by default the midpoint — so does text that does not parse;
//!    ±∞ and out-of-range values clamped)
//!    and summed as **integers** on a power-of-two grid, so the result does not depend
//!    on partitioning, thread count or summation order (Casacuberta et al. 2022), and
//!    no record can cause an error.
//! 4. **Noise once, at the end, retry-safe.** After the final merge, outside the
//!    engine, each released cell gets exact discrete Laplace noise (dpmech's
//!    draw-independent sampler) from a ChaCha20 generator keyed by
//!    HMAC-SHA256(release key, cell key): recomputing gives the same noise, two releases
//!    share none.
//!
//! Releases are written as SQL text ([`PrivateSession::sql`]: `SELECT day,
//! dp_count(0.5), dp_mean(duration, 0, 3600, 0.5) FROM visits WHERE day IN ('mon',
//! 'tue') GROUP BY day`), built with DataFusion's own `DataFrame::aggregate` over
//! [`PrivateSession::table`] with the `dp_` aggregate UDFs of module [`functions`]
//! ([`PrivateSession::release_frame`]), or built with [`GroupedQuery`]. SQL and
//! DataFrames are planned by DataFusion and their logical plan read into the same
//! [`GroupedQuery`] (module [`sql`] gives the accepted form).
//!
//! 5. **Plans that travel.** The physical plan of a release serialises with
//!    DataFusion's protobuf plan codec; [`DpmechCodec`] carries this crate's operator
//!    and functions, so a distributed runner (Ballista) can ship every stage to its
//!    executors, and the decoded plan releases bit-identical values.
//!
//! Aggregates are ε-DP with discrete Laplace noise, or ρ-zCDP with discrete Gaussian
//! noise ([`GroupedQuery::zcdp`], public keys). A DataFusion `DataFrame` registers as a
//! private table through `DataFrame::into_view`.
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

mod bound;
mod codec;
pub mod functions;
mod key;
mod session;
pub mod sql;
mod udf;

pub use codec::DpmechCodec;
pub use key::ReleaseKey;
pub use session::{
    Aggregate, ContributionBounds, GroupedQuery, Keys, PrivateSession, Release, ReleasedRow, ReleasedValue,
};

/// Everything that can go wrong in a private release. Only public parameters and the
/// query plan can cause an error; records never do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DpError {
    /// A privacy parameter or the budget (e.g. [`dpmech::Error::BudgetExceeded`]).
    #[error(transparent)]
    Privacy(#[from] dpmech::Error),
    /// DataFusion failed to plan or run the query (a schema or SQL problem).
    #[error(transparent)]
    DataFusion(#[from] datafusion::error::DataFusionError),
    /// Arrow failed to convert a column.
    #[error(transparent)]
    Arrow(#[from] datafusion::arrow::error::ArrowError),
    /// The query or a registration is malformed.
    #[error("invalid private query: {0}")]
    Invalid(String),
    /// The operating system could not provide entropy for a release key.
    #[error("the operating system's entropy source failed: {0}")]
    Entropy(String),
}
