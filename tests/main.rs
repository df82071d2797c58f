//! The integration tests of `dpmech`, linked into one test binary: each file
//! beside this one is a module (the crate and its dependencies are linked once,
//! not once per file). Run one file's tests with
//! `cargo test --test main -- FILE::` (e.g. `accountant_modes::`).

mod accountant_modes;
mod audit_reference;
mod bounded_time;
mod common;
mod composition;
mod composition_optimal;
mod draw_independence;
mod fork_safety;
mod gaussian;
mod laplace_geometric;
mod mechanism_trait;
mod no_nan;
mod online_accountant;
mod parallel_composition;
mod pld;
mod pld_closed_forms;
mod proptest_gaussian_selection;
mod proptest_inputs;
mod quantile;
mod randomized_response;
mod rdp;
mod reference;
mod sampling_distribution;
mod selection;
mod sensitivity;
mod statistics;
mod statistics_records;
mod statistics_spread;
mod svt;
