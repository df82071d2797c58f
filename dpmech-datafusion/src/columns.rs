//! The names of the internal columns, in one place: what the plan's row stage gives the
//! bounding operator, and what the operator gives the final aggregation.
//!
//! ```text
//! rows stage      (__f UInt64, __g, __v0 Int32, …, __b0 Int32, …)     module plan
//! bounding    →   (__g, __k Int64, __count Int64, __units Int64,
//!                  __s0 Decimal128(38, 0), …, __q0 Decimal128(38, 0), …,
//!                  __n Int64)                                          module bound
//! aggregation →   the same columns, summed per (__g, __k)             module aggregate
//! ```
//!
//! `__v` are records in grid units (sums, means, and variances: centred), `__b`
//! records' bins on a histogram's grid, `__q` the bounded records' squares
//! (variances). The bounding emits two kinds of rows: per group one row of **scalar
//! partials** (`__k` = [`SCALARS`], `__n` NULL), and per non-empty (group, bin) one
//! **bin row** (`__k` the bin's index among the bins of all histograms, `__n` its count
//! of bounded records, the scalar partials NULL) — so a histogram costs a row per
//! non-empty bin, not a column per bin.

/// The privacy unit's keyed fingerprint (`UInt64`).
pub(crate) const FINGERPRINT: &str = "__f";
/// The group key (integers as `Int64`, everything else as text).
pub(crate) const GROUP: &str = "__g";
/// Σ min(c, m) over the kept (unit, group) pairs of a group.
pub(crate) const COUNT: &str = "__count";
/// The number of kept (unit, group) pairs of a group: its distinct units.
pub(crate) const UNITS: &str = "__units";
/// The kind of a partial row: [`SCALARS`], or the index of a bin among the bins of all
/// histograms (`Int64`).
pub(crate) const BIN: &str = "__k";
/// The count of bounded records of a bin row (`Int64`, NULL on the scalar row).
pub(crate) const BIN_COUNT: &str = "__n";
/// The [`BIN`] of a group's row of scalar partials.
pub(crate) const SCALARS: i64 = -1;

/// Record column `j` of the rows stage, in grid units.
pub(crate) fn value(j: usize) -> String {
    format!("__v{j}")
}

/// Bin column `j` of the rows stage: each record's bin on histogram `j`'s grid.
pub(crate) fn bin(j: usize) -> String {
    format!("__b{j}")
}

/// The exact sum of record column `j` over the kept pairs of a group.
pub(crate) fn sum(j: usize) -> String {
    format!("__s{j}")
}

/// The exact sum of the squares of the records of square column `i` (a variance's
/// centred record column) over the kept pairs of a group.
pub(crate) fn square(i: usize) -> String {
    format!("__q{i}")
}

/// Where the exact scalar partials of a group stand in its row of partials: the count,
/// the units, one sum per value column, one sum of squares per square column (the
/// histograms' counts are bin rows, read apart).
pub(crate) mod partial {
    /// The bounded row count.
    pub(crate) const COUNT: usize = 0;
    /// The distinct kept units.
    pub(crate) const UNITS: usize = 1;
    /// The sum of value column `j`.
    pub(crate) const fn sum(j: usize) -> usize {
        2 + j
    }
    /// The sum of squares of square column `i`, after `values` sums.
    pub(crate) const fn square(values: usize, i: usize) -> usize {
        2 + values + i
    }
    /// The number of scalar partials of `values` sums and `squares` sums of squares.
    pub(crate) const fn scalars(values: usize, squares: usize) -> usize {
        2 + values + squares
    }
}
