//! # dpmech — differential-privacy mechanisms with exact noise
//!
//! Work in progress: see the README for the layer diagram.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod error;
pub mod privacy;
pub mod rng;

pub use error::Error;
pub use privacy::{Delta, Epsilon, PrivacyLoss, Rho};
pub use rng::{CryptoRng, DefaultRng, InsecureSimulationRng};
