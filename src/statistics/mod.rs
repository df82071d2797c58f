//! Releases users actually make, built only from the layers below, and what they mean.
//!
//! * [`count`], [`sum`], [`mean`] ([`MeanMethod`]), [`histogram`]: releases charged to
//!   an [`Accountant`](crate::Accountant) before the noise is drawn, each stating its
//!   [`PrivacyLoss`](crate::PrivacyLoss) and, when additive, its noise for accuracy.
//! * [`accuracy`]: confidence half-widths of additive noise and their inverse (the ε a
//!   target accuracy needs), and the belief table of seed 001 (Figura 1.1).

pub mod accuracy;
mod releases;

pub use releases::{AdditiveNoise, MeanMethod, Release, count, histogram, mean, sum};
