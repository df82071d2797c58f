//! The crate's one error type: what a private release can refuse, and why.

/// Everything that can go wrong in a private release. Only public parameters and the
/// query plan can cause an error; records never do. Every variant is returned before
/// anything is charged, except [`Privacy`](Self::Privacy) with
/// [`dpmech::Error::BudgetExceeded`] (the charge itself), and [`DataFusion`](Self::DataFusion)
/// or [`Arrow`](Self::Arrow) from the engine while it runs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DpError {
    /// A privacy parameter or the budget (e.g. [`dpmech::Error::InvalidDelta`] for a
    /// selection δ outside (0, 1), [`dpmech::Error::BudgetExceeded`]).
    #[error(transparent)]
    Privacy(#[from] dpmech::Error),
    /// DataFusion failed to plan or run the query.
    #[error(transparent)]
    DataFusion(#[from] datafusion::error::DataFusionError),
    /// Arrow failed to convert a column.
    #[error(transparent)]
    Arrow(#[from] datafusion::arrow::error::ArrowError),
    /// No private table of this name is registered.
    #[error("no private table `{0}`")]
    UnknownTable(String),
    /// The private table has no column of this name.
    #[error("no column `{0}` in the private table")]
    UnknownColumn(String),
    /// A column's type has no total reading for its role (a group key, a value, a
    /// privacy unit).
    #[error("column `{column}` of type {data_type} cannot be {role}")]
    UnsupportedType {
        /// The column.
        column: String,
        /// Its type, as DataFusion prints it.
        data_type: String,
        /// What it was asked to be, and what is accepted.
        role: &'static str,
    },
    /// A public parameter whose grid, sensitivity or threshold cannot be represented.
    #[error("{0}")]
    Unrepresentable(String),
    /// The query is outside the form a private release accepts (module [`sql`](crate::sql)): the
    /// construct found, and why.
    #[error("not a private release: {0}")]
    UnsupportedQuery(String),
    /// Contribution bounds of 0 (a unit must be allowed at least one group and one row).
    #[error("contribution bounds must be at least 1 (L0 = {max_groups}, L∞ = {max_rows_per_group})")]
    InvalidContributionBounds {
        /// L0 as given.
        max_groups: u32,
        /// L∞ as given.
        max_rows_per_group: u32,
    },
    /// A release without any `dp_` aggregate.
    #[error("a release needs at least one aggregate")]
    NoAggregates,
    /// Public keys whose tuples do not have one value per grouping column.
    #[error("public keys give {found} values where the query groups by {expected} columns")]
    KeyArity {
        /// The number of grouping columns.
        expected: usize,
        /// The number of values in a key (or columns of the key table).
        found: usize,
    },
    /// Private keys (partition selection) without `GROUP BY`: the one cell of such a
    /// release is public.
    #[error("a release without GROUP BY has one public cell: partition selection does not apply")]
    SelectionWithoutGroups,
    /// A private table named where only a public one may be (public keys, or a public
    /// registration under a private table's name).
    #[error("`{0}` is a private table")]
    PrivateTable(String),
    /// The operating system could not provide entropy for a release key.
    #[error("the operating system's entropy source failed: {0}")]
    Entropy(String),
    /// The engine's exact partials do not prove that each bounded row was merged
    /// exactly once ([`check_complete`](crate::check_complete)): a row merged twice
    /// would count its units twice, so nothing is released. It depends on how the
    /// engine ran (e.g. a cluster's recovery from a lost executor), never on the data;
    /// the charge stays spent.
    #[error("the engine's partials are incomplete: {0}")]
    IncompletePartials(String),
}

/// A broken invariant of the crate itself (never a cause in the query or the data): an
/// internal DataFusion error.
pub(crate) fn internal(what: impl Into<String>) -> DpError {
    DpError::DataFusion(datafusion::error::DataFusionError::Internal(what.into()))
}
