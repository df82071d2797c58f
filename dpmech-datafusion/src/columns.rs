//! The names of the internal columns, in one place: what the plan's row stage gives the
//! bounding operator, and what the operator gives the final aggregation.
//!
//! ```text
//! rows stage      (__f UInt64, __g, __v0 Int32, __v1 Int32, …)      module plan
//! bounding    →   (__g, __count Int64, __units Int64, __s0 Decimal128(38, 0), …)   module bound
//! aggregation →   the same columns, summed per __g                    module aggregate
//! ```

/// The privacy unit's keyed fingerprint (`UInt64`).
pub(crate) const FINGERPRINT: &str = "__f";
/// The group key (integers as `Int64`, everything else as text).
pub(crate) const GROUP: &str = "__g";
/// Σ min(c, m) over the kept (unit, group) pairs of a group.
pub(crate) const COUNT: &str = "__count";
/// The number of kept (unit, group) pairs of a group: its distinct units.
pub(crate) const UNITS: &str = "__units";

/// Record column `j` of the rows stage, in grid units.
pub(crate) fn value(j: usize) -> String {
    format!("__v{j}")
}

/// The exact sum of record column `j` over the kept pairs of a group.
pub(crate) fn sum(j: usize) -> String {
    format!("__s{j}")
}

/// Where the exact partials of a group stand in its row of partials: the count, the
/// units, then one sum per value column.
pub(crate) mod partial {
    /// The bounded row count.
    pub(crate) const COUNT: usize = 0;
    /// The distinct kept units.
    pub(crate) const UNITS: usize = 1;
    /// The sum of value column `j`.
    pub(crate) const fn sum(j: usize) -> usize {
        2 + j
    }
}
