//! # dpmech — differential-privacy mechanisms with exact noise
//!
//! Every sample is drawn with integer arithmetic on a data-independent grid, every
//! privacy parameter computed in floating point is rounded toward more noise, and every
//! mechanism states its guarantee, its neighbouring relation and its sensitivity norm.
//!
//! ## A five-minute tour
//!
//! **1. A mechanism.** Build it from its sensitivity and privacy parameters (errors come
//! back as a typed [`Error`] before any randomness is drawn), then `release`:
//!
//! ```
//! use dpmech::{DefaultRng, Laplace};
//! let mut rng = DefaultRng::from_os()?; // ChaCha20 keyed by the OS
//! let mean_age = Laplace::new(0.1, 0.5)?; // L1 sensitivity 0.1, ε = 0.5
//! let noisy = mean_age.release(38.2, &mut rng)?;
//! assert_eq!(noisy % mean_age.granularity(), 0.0); // an exact multiple of the public grid
//! # Ok::<(), dpmech::Error>(())
//! ```
//!
//! **2. One shape.** Every non-interactive mechanism implements [`Mechanism`] (input,
//! output, `release`, `privacy_loss`), so generic code takes any of them:
//!
//! ```
//! use dpmech::{Geometric, Laplace, Mechanism};
//! use rand_chacha::ChaCha20Rng;
//! use rand_core::SeedableRng;
//! // Releases a count through any mechanism on integers.
//! fn noisy_count<M: Mechanism<i64, Output = i64>>(m: &M, count: i64) -> Result<i64, dpmech::Error> {
//!     m.release(count, &mut ChaCha20Rng::seed_from_u64(1))
//! }
//! let noisy = noisy_count(&Geometric::new(1, 0.25)?, 120)?;
//! # let _ = noisy;
//! // A vector query through the same trait: Laplace on slices.
//! let census = Laplace::new(2.0, 1.0)?; // two counts, Δ₁ = 2
//! let noisy = Mechanism::release(&census, &[120.0, 10.0][..], &mut ChaCha20Rng::seed_from_u64(2))?;
//! # let _ = noisy;
//! # Ok::<(), dpmech::Error>(())
//! ```
//!
//! **3. A budget.** An [`Accountant`] charges each release *before* its noise is drawn
//! and refuses one that would overspend; the [`statistics`] layer (count, sum, mean,
//! histogram) releases through it:
//!
//! ```
//! use dpmech::{Accountant, DefaultRng, Geometric, sensitivity::Neighbouring, statistics::sum};
//! let accountant = Accountant::pure(1.0)?;
//! let mut rng = DefaultRng::from_os()?;
//! let visits = accountant.release(&Geometric::new(1, 0.5)?, 1200, &mut rng)?;
//! let hours = sum(&accountant, &[2.5, 7.0, f64::NAN], (0.0, 24.0), Neighbouring::AddRemove, 0.5, &mut rng)?;
//! assert!(accountant.release(&Geometric::new(1, 0.5)?, 1200, &mut rng).is_err()); // spent
//! # let _ = (visits, hours);
//! # Ok::<(), dpmech::Error>(())
//! ```
//!
//! **4. A check.** The [`audit`] module tests a privacy claim empirically on two
//! neighbouring inputs and certifies a lower bound on the true loss; a false claim
//! FAILS:
//!
//! ```
//! use dpmech::{Laplace, audit::{Auditor, Verdict}};
//! let honest = Laplace::new(1.0, 1.0)?;
//! let report = Auditor::pure(1.0)?.samples(20_000).seed(1)
//!     .audit_real(|rng| honest.release(0.0, rng).unwrap(), |rng| honest.release(1.0, rng).unwrap())?;
//! assert_eq!(report.verdict, Verdict::Pass);
//! # Ok::<(), dpmech::Error>(())
//! ```
//!
//! ## Conventions
//!
//! * **Argument order:** data first, then sensitivity, then privacy parameters (ε, δ,
//!   ρ), then structural parameters (a cutoff, a number of candidates or steps):
//!   `laplace(value, sensitivity, ε)`, `Gaussian::analytic(Δ₂, ε, δ)`,
//!   `Sparse::new(threshold, Δ, ε, cutoff)`; composition: k, the per-step guarantee,
//!   the target (`composition::advanced(k, step, δ′)`).
//! * **Monotone scores are said one way:** a [`Monotonicity`] value as the last
//!   argument (`Exponential::with_monotonicity`, `ReportNoisyMax::laplace_with_monotonicity`,
//!   `StandardSvt::new`); plain constructors assume `General`.
//! * **One verb:** a mechanism *releases* (`release`, `release_slice`,
//!   `release_top_k`) through [`Mechanism`]; an interactive one answers a stream
//!   (`query`, `run`) through [`StreamingMechanism`].
//! * **`Result` wherever a release can be refused** (a non-finite query answer, an
//!   empty score vector, a halted stream); inherent methods that cannot be refused
//!   return the value itself, while through [`Mechanism`] every release is a `Result`.
//!   Parameters are always validated at construction.
//! * **Named constructors or builders** where there are more than three numbers or a
//!   choice of guarantee (`Gaussian::{analytic, classical, zcdp}`).
//! * **Records never cause an error:** layers that read records map NaN, ±∞ and
//!   out-of-range values by a documented, data-independent rule
//!   ([`statistics::records`]); a refusal would itself be a release.
//! * **Guarantees are typed:** [`PrivacyLoss`] (pure, (ε, δ), zCDP, random DP) never
//!   lets a weaker guarantee be counted as a stronger one.
//!
//! ## Layers
//!
//! Dependencies point down; nothing below `statistics` depends on it, and nothing
//! below `mechanisms` depends on `mechanisms`.
//!
//! ```text
//!  statistics   records (the rule for NaN/±∞/out of range, exact sums); count, sum,
//!               mean (seeds' Algorithms 1, 3, 4), histogram; accuracy
//!  mechanisms   the Mechanism trait; Laplace, Geometric, Gaussian, DiscreteGaussian, Exponential, PermuteAndFlip,
//!               ReportNoisyMax, RandomizedResponse, sparse vector (svt); one-call
//!               laplace() / geometric() / gaussian()
//!  sampling     exact noise from integer arithmetic (no privacy claims)
//!  sensitivity · composition (+ Accountant, whose generic `release` speaks the
//!               Mechanism trait) · privacy (Epsilon, Delta, Rho,
//!               PrivacyLoss, outward rounding)
//!               composition also holds pld (certified PLD, never above the closed
//!               forms of closed), rdp (certified Rényi curves) and online
//!               (OnlineAccountant: fixed-sequence rule or Rényi filter)
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
    Laplace, Mechanism, Monotonicity, NumericAnswer, NumericSparse, NumericStandardSvt, PermuteAndFlip,
    RandomizedResponse, ReportNoisyMax, Sparse, StandardSvt, StreamingMechanism, gaussian, geometric,
    laplace,
};
pub use privacy::{Delta, Epsilon, PrivacyLoss, Rho};
pub use rng::{CryptoRng, DefaultRng, InsecureSimulationRng};

/// The README's code blocks, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
