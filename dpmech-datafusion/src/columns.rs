//! The names of the internal columns, in one place: what the plan's row stage gives the
//! bounding operator, and what the operator gives the final aggregation.
//!
//! ```text
//! rows stage      (__f UInt64, __g, __v0 Int32, …, __b0 Int32, …)     module plan
//! bounding    →   (__g, __k Int64, __count Int64, __units Int64,
//!                  __s0 Decimal128(38, 0), …, __q0 Decimal128(38, 0), …,
//!                  __n Int64, __t Decimal128(38, 0))                   module bound
//! aggregation →   the same columns, summed per (__g, __k),
//!                 and __reads Int64, the rows merged into each        module aggregate
//! ```
//!
//! `__v` are records in grid units (sums, means, and variances: centred), `__b`
//! records' bins on a histogram's grid, `__q` the bounded records' squares
//! (variances). The bounding emits two kinds of rows: per group one row of **scalar
//! partials** (`__k` = [`SCALARS`], `__n` NULL), and per non-empty (group, bin) one
//! **bin row** (`__k` the bin's index among the bins of all histograms, `__n` its count
//! of bounded records, the scalar partials NULL) — so a histogram costs a row per
//! non-empty bin, not a column per bin.
//!
//! Every row also carries a **check tag** `__t`, and each bounding task that saw a unit
//! emits one **marker row** (`__g` NULL, `__k` = [`marker(id)`](marker) for the task's
//! identity — a hash of its units' fingerprints, the same however the engine numbers
//! its tasks — `__count` its number of other rows, `__units` its number of units, `__t`
//! minus the sum of its other rows' tags): the client proves with them that the final
//! aggregation merged every bounding row exactly once (module `aggregate`,
//! [`check_complete`](crate::check_complete)).

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
/// A row's check tag (`Decimal128(38, 0)`): pseudo-random in `[1, 2⁶²)` on the rows of
/// partials, minus their sum on the partition's marker row.
pub(crate) const TAG: &str = "__t";
/// The number of bounding rows the final aggregation merged into a row (`Int64`).
pub(crate) const READS: &str = "__reads";

/// The [`BIN`] of the marker row of the bounding task of identity `id` (62 bits used):
/// `−2 − id`, below every other kind.
pub(crate) fn marker(id: u64) -> i64 {
    -2 - (id >> 2) as i64
}

/// The identity whose marker row has kind `kind`, if it is a marker's.
pub(crate) fn marker_id(kind: i64) -> Option<u64> {
    (kind <= -2).then(|| (-(kind + 2)) as u64)
}

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
