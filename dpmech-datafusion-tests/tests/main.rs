//! The integration tests of `dpmech-datafusion`, linked into one test binary: each file
//! beside this one is a module (the crate and its dependencies are linked once,
//! not once per file). Run one file's tests with
//! `cargo test --test main -- FILE::` (e.g. `grouping::`).

mod common;
mod grouping;
mod merged_once;
mod partition_selection;
mod pinned;
mod prepared;
mod private_sql;
mod quantiles;
mod refusals;
mod session_context;
mod spread;
