//! Independent references that share no code with the crate, for the accounting tests
//! (`pld`, `pld_closed_forms`, `rdp`).

pub mod double_double;
pub mod subsampled;
