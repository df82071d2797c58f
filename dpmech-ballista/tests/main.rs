//! The integration tests of `dpmech-ballista`, linked into one test binary: each file
//! beside this one is a module (the crate and its dependencies are linked once,
//! not once per file). Run one file's tests with
//! `cargo test --test main -- FILE::` (e.g. `cluster::`).

mod cluster;
mod common;
mod processes;
mod shared_ledger;
