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
//! Dependencies point down; nothing depends on `mechanisms`.
//!
//! ```text
//!  mechanisms   Laplace, Geometric, Gaussian, DiscreteGaussian, sparse vector (svt), one-call
//!               laplace()/geometric()/gaussian()
//!  mechanisms   Laplace, Geometric, Gaussian, DiscreteGaussian, Exponential, PermuteAndFlip,
//!               ReportNoisyMax, RandomizedResponse; one-call laplace()/geometric()/gaussian()
//!  sampling     exact noise from integer arithmetic (no privacy claims)
//!  privacy      Epsilon, Delta, Rho, PrivacyLoss, outward rounding
//!  rng · error  DefaultRng (OS-keyed ChaCha20), one crate-wide Error
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
    Laplace, Monotonicity, NumericSparse, PermuteAndFlip, RandomizedResponse, ReportNoisyMax, Sparse,
    StandardSvt, gaussian, geometric, laplace,
};
pub use privacy::{Delta, Epsilon, PrivacyLoss, Rho};
pub use rng::{CryptoRng, DefaultRng, InsecureSimulationRng};

/// The README's code blocks, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
