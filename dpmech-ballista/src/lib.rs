//! Private SQL of [`dpmech_datafusion`] on an [Apache DataFusion Ballista] cluster.
//!
//! A [`PrivateSession`] plans, charges and adds noise at the client, exactly as on one
//! node; only the engine's work moves: a [`ClusterRunner`] submits the release's
//! physical plan to a Ballista scheduler, whose executors scan the private table, bound
//! each unit's contributions (dpmech's operator, shipped in the plan by
//! [`DpmechCodec`](dpmech_datafusion::DpmechCodec)) and pre-aggregate, and the client
//! fetches only the per-group exact partials of the final stage.
//!
//! * **Budget first, on the client.** The charge happens before anything is submitted;
//!   a refused query submits nothing.
//! * **The noise key stays at the client.** The plan carries two keys derived from the
//!   release key — the bounding order's and the unit fingerprint's, each
//!   HMAC-SHA256(release key, label) truncated to 128 bits. HMAC-SHA256 is a PRF: its
//!   outputs reveal nothing about the key or about its outputs for other labels, so
//!   the executors, who see the rows anyway, learn nothing about the noise, which is
//!   keyed by HMAC-SHA256(release key, cell) and drawn at the client.
//! * **Bit-identical to one node.** Bounding is deterministic given the key, the
//!   partials are exact integers (their sum does not depend on the partitioning, the
//!   number of executors or the order of merges), and the noise is drawn once after the
//!   final merge: the same key releases the same values on a cluster of any size and
//!   on one node. A job that loses an executor is not patched up inside the cluster:
//!   the runner accepts a result only with each output partition exactly once, and
//!   otherwise resubmits the plan whole (same derived keys, same partials, one charge,
//!   noise drawn once) or fails with a typed error within its deadline (module
//!   `runner`).
//! * **Reachable by the client only.** Anyone who can reach the scheduler's port can
//!   submit any plan — one without bounding — and read exact partials: run the
//!   scheduler and the executors on a network only the client reaches (a network
//!   policy, or TLS with client authentication).
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use datafusion::prelude::CsvReadOptions;
//! use dpmech::Accountant;
//! use dpmech_ballista::EmbeddedCluster;
//! use dpmech_datafusion::ContributionBounds;
//!
//! let cluster = EmbeddedCluster::start(2).await?; // or dpmech_ballista::private_session("df://host:50050", …)
//! let mut session = cluster.private_session(Arc::new(Accountant::pure(1.0)?))?;
//! let visits = dpmech_ballista::csv_table("visits.csv", CsvReadOptions::new()).await?;
//! session.register_private("visits", visits, "user_id",
//!     ContributionBounds { max_groups: 3, max_rows_per_group: 2 })?;
//! let release = session.sql("SELECT day, dp_count(0.5) FROM visits WHERE day IN (1, 2) GROUP BY day").await?;
//! # let _ = release; Ok(()) }
//! ```
//!
//! # The files
//!
//! | file | what it holds |
//! |---|---|
//! | `codec.rs` | [`physical_codec`], [`ballista_codec`]: dpmech's codec in front of Ballista's |
//! | `runner.rs` | [`ClusterRunner`]: submits a planned release to a scheduler, collects each partition's partials exactly once (or resubmits, or fails) within a deadline |
//! | `cluster.rs` | [`EmbeddedCluster`], [`run_scheduler`], [`run_executor`], [`ClusterOptions`] |
//! | `bin/dpmech-ballista-scheduler.rs`, `bin/dpmech-ballista-executor.rs` | the processes of a cluster |
//!
//! [Apache DataFusion Ballista]: https://datafusion.apache.org/ballista/

#![forbid(unsafe_code)]

mod cluster;
mod codec;
mod runner;

use std::sync::Arc;

use datafusion::catalog::TableProvider;
use datafusion::prelude::{CsvReadOptions, SessionConfig, SessionContext};
use dpmech::Accountant;
pub use dpmech_datafusion::PrivateSession;

pub use cluster::{ClusterOptions, EmbeddedCluster, ExecutorAddresses, run_executor, run_scheduler};
pub use codec::{ballista_codec, physical_codec};
pub use runner::{
    ClusterRunner, DEFAULT_ATTEMPTS, DEFAULT_DEADLINE, DEFAULT_FETCH_RETRIES, DEFAULT_FETCH_RETRY_WAIT,
};

/// Everything that can go wrong in starting or reaching a cluster.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// An address that is not `df://host:port`.
    #[error("not a scheduler address (df://host:port): `{0}`")]
    Address(String),
    /// A process of the cluster cannot be reached.
    #[error("cannot reach {0}")]
    Unreachable(String),
    /// Ballista failed.
    #[error(transparent)]
    Ballista(#[from] ballista_core::error::BallistaError),
    /// DataFusion failed.
    #[error(transparent)]
    DataFusion(#[from] datafusion::error::DataFusionError),
    /// A socket failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A release did not finish within its deadline ([`ClusterRunner::with_deadline`]);
    /// its job was cancelled and nothing was released (the charge stands).
    #[error("the cluster at {scheduler} did not finish the release within {deadline:?}")]
    Deadline {
        /// The scheduler's address.
        scheduler: String,
        /// The deadline that passed.
        deadline: std::time::Duration,
    },
    /// Every submission of a release failed or returned a result that was not each
    /// output partition exactly once (e.g. after a lost executor); nothing was released
    /// (the charge stands).
    #[error("the cluster returned no complete result in {attempts} attempts: {reasons}")]
    Incomplete {
        /// The submissions made.
        attempts: u32,
        /// Why each was discarded.
        reasons: String,
    },
}

/// A private session whose releases run on the cluster at `scheduler`
/// (`df://host:port`), planned with `config` (its target partitions are the
/// partitions of the cluster's stages) and charged to `accountant`.
///
/// # Errors
///
/// [`ClusterError::Address`] for an address that is not `df://host:port`.
pub fn private_session(
    scheduler: &str,
    config: SessionConfig,
    accountant: Arc<Accountant>,
) -> Result<PrivateSession, ClusterError> {
    let runner = ClusterRunner::new(scheduler)?;
    Ok(
        PrivateSession::new(SessionContext::new_with_config(config), accountant)
            .with_runner(Arc::new(runner)),
    )
}

impl EmbeddedCluster {
    /// A private session whose releases run on this cluster, planned with DataFusion's
    /// default configuration.
    ///
    /// # Errors
    ///
    /// None in practice (the cluster's own address is well formed).
    pub fn private_session(&self, accountant: Arc<Accountant>) -> Result<PrivateSession, ClusterError> {
        private_session(&self.url(), SessionConfig::new(), accountant)
    }
}

/// A CSV file as a table provider the cluster's executors can read (the file must be at
/// the same path on every executor: a shared or local disk).
///
/// # Errors
///
/// [`ClusterError::DataFusion`] if the file cannot be read or its schema inferred.
pub async fn csv_table(
    path: &str,
    options: CsvReadOptions<'_>,
) -> Result<Arc<dyn TableProvider>, ClusterError> {
    let ctx = SessionContext::new();
    ctx.register_csv("t", path, options).await?;
    Ok(ctx.table_provider("t").await?)
}

/// The analysts' guide's chapter on running on a cluster (`docs/guide/06-cluster.md`):
/// its Rust block is a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/06-cluster.md")]
pub struct GuideCluster;
