//! Releases users actually make, built only from the layers below, and what they mean.
//!
//! * [`accuracy`]: confidence half-widths of additive noise and their inverse (the ε a
//!   target accuracy needs), and the belief table of seed 001 (Figura 1.1).

pub mod accuracy;
