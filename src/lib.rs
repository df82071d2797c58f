//! # dpmech — differential-privacy mechanisms with exact noise
//!
//! ```
//! use dpmech::{DefaultRng, Laplace};
//! let mut rng = DefaultRng::from_os()?;
//! let mechanism = Laplace::new(1.0, 0.5)?; // L1 sensitivity 1, ε = 0.5
//! let noisy = mechanism.release(42.0, &mut rng)?;
//! assert_eq!(noisy % mechanism.granularity(), 0.0); // an exact multiple of the public grid
//! # Ok::<(), dpmech::Error>(())
//! ```
//!
//! ## Layers
//!
//! Dependencies point down; nothing below `statistics` depends on it, and nothing
//! below `mechanisms` depends on `mechanisms`.
//!
//! ```text
//!  statistics   count, sum, mean (seeds' Algorithms 1, 3, 4), histogram; accuracy
//!  mechanisms   Laplace, Geometric, Gaussian, DiscreteGaussian, Exponential, PermuteAndFlip,
//!               ReportNoisyMax, RandomizedResponse, sparse vector (svt); one-call
//!               laplace() / geometric() / gaussian()
//!  sampling     exact noise from integer arithmetic (no privacy claims)
//!  sensitivity · composition (+ Accountant) · privacy (Epsilon, Delta, Rho,
//!               PrivacyLoss, outward rounding)
//!  rng · error  DefaultRng (OS-keyed ChaCha20), one crate-wide Error
//!  audit        the empirical privacy auditor (used by the tests of every layer)
//! ```
//!
//! Every mechanism documents its guarantee (pure ε-DP, (ε, δ)-DP or ρ-zCDP), the
//! neighbouring relation it holds for and the norm of its sensitivity; every parameter
//! and input is validated before any randomness is drawn.
#![forbid(unsafe_code)]

pub mod audit;
pub mod composition;
pub mod error;
pub mod mechanisms;
pub mod privacy;
pub mod rng;
pub mod sampling;
pub mod sensitivity;
pub mod statistics;

pub use composition::Accountant;
pub use error::Error;
pub use mechanisms::{
    AboveThreshold, Answer, DiscreteGaussian, Exponential, Gaussian, Geometric, KaryRandomizedResponse,
    Laplace, Mechanism, Monotonicity, NumericSparse, PermuteAndFlip, RandomizedResponse, ReportNoisyMax,
    Sparse, StandardSvt, gaussian, geometric, laplace,
};
pub use privacy::{Delta, Epsilon, PrivacyLoss, Rho};
pub use rng::{CryptoRng, DefaultRng, InsecureSimulationRng};

/// The README's code blocks, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
