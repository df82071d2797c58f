//! The integration tests and the `visits` example of `dpmech-datafusion`, in a package
//! of their own (nothing to import here: see `tests/` and `examples/`).
//!
//! Why a package: a test binary or example that links DataFusion instantiates much of
//! its generic code itself, and at opt-level 3 (what `dpmech-datafusion`'s per-row code
//! needs) that took ~225 s of a fresh `cargo test`. Here they build at opt-level 1 (the
//! workspace's `Cargo.toml`), reusing the instances the planner crates share, while
//! every release they run executes `dpmech-datafusion`'s own code at opt-level 3.
#![forbid(unsafe_code)]
