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
//!               mean (noisy-average Algorithms 1, 3, 4), histogram; quantiles, private bounds,
//!               variance, unit counts; accuracy
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
//!
//! ## Files
//!
//! One line per file of `src/` (the module docs of `sampling`, `sampling::certified`
//! and `mechanisms` say more about theirs):
//!
//! ```text
//! lib.rs                          this overview, the module tree and the re-exports
//! error.rs                        Error: the one crate-wide error enum
//! privacy.rs                      Epsilon, Delta, Rho, PrivacyLoss; round (outward rounding)
//! privacy/erfc.rs                erfc, for the Gaussian calibrations and PLD builders
//! rng.rs                          DefaultRng (OS-keyed ChaCha20), the fork-safe thread RNG,
//!                                 InsecureSimulationRng
//! sampling/mod.rs                 overview, Rational (noise scales)
//! sampling/bits.rs                BitSource: words and single bits from a CSPRNG
//! sampling/uniform.rs             uniform_below: unbiased uniform integers by rejection
//! sampling/bernoulli.rs           bernoulli_ratio, BernoulliExpNeg, bernoulli_exp_neg
//! sampling/fixed_exp.rs           certified 64-bit exp(−x/2ˢ): one-word coins, weighted index
//! sampling/discrete_laplace.rs    DiscreteLaplace: the algorithm, samples, one trial
//! sampling/discrete_laplace/ladder.rs  the shared ladder of certified tables, per-scale constants
//! sampling/one_sided_geometric.rs OneSidedGeometric: the magnitude of a discrete Laplace trial
//! sampling/discrete_gaussian.rs   DiscreteGaussianSampler, MAX_VARIANCE_NUM
//! sampling/discrete_gaussian/ladder.rs  its ladder of reference tables below σ = 4096, per-σ constants
//! sampling/discrete_gaussian/fixed.rs  its proposal shared by every σ ≥ 4096 (nothing built per σ)
//! sampling/grid.rs                the public power-of-two grid between reals and integers
//! sampling/certified/mod.rs       overview of the certified arithmetic
//! sampling/certified/bigint.rs    Big: unsigned integers of any size, rounded products
//! sampling/certified/interval.rs  Interval and the enclosures exp_neg, exp_neg_big of exp(−x)
//! sampling/certified/lazy_uniform.rs  LazyUniform and the exact comparison with exp(−x)
//! sampling/certified/threshold.rs the thresholds of a table: Threshold, Weights
//! sampling/certified/guide.rs     the guide table (buckets of words), GuideView
//! sampling/certified/cdt.rs       Cdt: certified bounds, fast path and exact fallback
//! mechanisms/mod.rs               overview; the one-call laplace(), geometric(), gaussian()
//! mechanisms/mechanism.rs         the Mechanism trait and its implementations
//! mechanisms/laplace.rs           Laplace on a power-of-two grid
//! mechanisms/geometric.rs         Geometric (two-sided discrete Laplace on integers), the
//!                                 discrete Laplace confidence half-width
//! mechanisms/accuracy.rs          helpers of the accuracy statements (shared with statistics)
//! mechanisms/gaussian/mod.rs      Gaussian (analytic, classical, zCDP) on a grid
//! mechanisms/gaussian/calibration.rs  its σ calibrations; analytic_gaussian_delta, zcdp_delta
//! mechanisms/discrete_gaussian.rs DiscreteGaussian, the mechanism on integers
//! mechanisms/exponential.rs       Exponential and PermuteAndFlip
//! mechanisms/noisy_max.rs         ReportNoisyMax
//! mechanisms/randomized_response.rs  RandomizedResponse, KaryRandomizedResponse
//! mechanisms/monotonicity.rs      Monotonicity: the promise of monotone scores or queries
//! mechanisms/svt/mod.rs           the sparse vector technique: StreamingMechanism, Answer,
//!                                 the exact comparator, the (α, β)-accuracy bounds
//! mechanisms/svt/core_state.rs    the streaming state shared by the SVT types
//! mechanisms/svt/above_threshold.rs  AboveThreshold
//! mechanisms/svt/sparse.rs        Sparse
//! mechanisms/svt/numeric_sparse.rs   NumericSparse
//! mechanisms/svt/standard.rs      StandardSvt and NumericStandardSvt
//! sensitivity/mod.rs              Neighbouring, Norm, conversions between relations
//! sensitivity/queries.rs          the sensitivity of common queries; clamping
//! sensitivity/sampler.rs          SensitivitySampler (random DP, Rubinstein & Aldà 2017)
//! composition/mod.rs              overview and the shared validation of guarantees
//! composition/sequential.rs       sequential (basic) composition
//! composition/parallel.rs         parallel composition over a data-independent partition
//! composition/advanced.rs         advanced composition and its inverse questions
//! composition/optimal.rs          optimal homogeneous composition (Kairouz, Oh & Viswanath)
//! composition/zcdp.rs             zCDP and its conversions to (ε, δ)
//! composition/rdp.rs              certified Rényi DP curves and their conversion
//! composition/closed.rs           closed-form certificates carried beside a PLD
//! composition/accountant.rs       Accountant: the thread-safe budget, charged before noise;
//!                                 a sequence fixed in advance or a privacy filter
//! composition/charge.rs           Charge: what spend and release charge (label, relation)
//! composition/online.rs           OnlineAccountant: one release at a time, refused before
//!                                 noise (fixed-sequence rule or Rényi filter)
//! composition/pld/mod.rs          privacy loss distributions: certified numerical composition
//! composition/pld/build/mod.rs    the worst-case pair of each mechanism, discretised: shared parts
//! composition/pld/build/laplace.rs   Laplace and discrete Laplace builders
//! composition/pld/build/gaussian.rs  Gaussian and discrete Gaussian builders
//! composition/pld/build/atoms.rs  randomized response, stated ε or (ε, δ), subsampled atoms
//! composition/pld/dist.rs         one direction of a discretised PLD and its bounds
//! composition/pld/fft.rs          convolution with a proven ℓ2 error bound
//! composition/pld/accountant.rs   a budget over a declared plan, composed by PLD
//! composition/pld/tests.rs        the PLD unit tests
//! statistics/mod.rs               overview of the releases users make
//! statistics/records.rs           Bounds: the data-independent rule for every record; exact sums
//! statistics/clamped_sum.rs       ClampedSum, a Mechanism
//! statistics/mean.rs              Mean and MeanMethod (noisy-average Algorithms 1, 3, 4)
//! statistics/releases.rs          count, sum, mean, histogram, charged to an Accountant
//! statistics/bounds.rs            ApproxBounds: private bounds from a noisy power-of-two histogram
//! statistics/variance.rs          Variance: variance, standard deviation and mean from exact moments
//! statistics/unit_count.rs        UnitCount: distinct privacy units per group (pure ε or ρ-zCDP)
//! statistics/accuracy.rs          confidence half-widths, their inverses, belief bounds
//! statistics/quantile.rs          Quantile: the rank score over bins, its sensitivity and error,
//!                                 permute-and-flip selection
//! statistics/quantile_grid.rs     QuantileGrid (bins, edges, the rule for every record),
//!                                 BinCounts (the mergeable state)
//! statistics/quantile_split.rs    Quantiles: several quantiles by a recursive split
//! statistics/quantile_contributions.rs  ContributionBoundsSuggester: L0 and L∞ as DP quantiles
//! audit/mod.rs                    Auditor: the empirical privacy test
//! audit/ordered.rs                audits of ordered and real outputs (thresholds, intervals)
//! audit/categorical.rs            audits of categorical outputs, draw counts, float structure
//! audit/events.rs                 candidate events, split-sample selection, certification
//! audit/binomial.rs               exact binomial tails, Clopper–Pearson bounds
//! audit/float_leak.rs             FloatStructure: the low-order bits of an f64 (Mironov 2012)
//! audit/counting_rng.rs           CountingRng: counts the words a mechanism draws
//! audit/report.rs                 AuditReport and its text form
//! ```
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

/// The analysts' guide's core chapters (`docs/guide/`): each Rust block is a doctest.
/// The chapters that use SQL are tested in `dpmech-datafusion` and `dpmech-ballista`.
#[doc = include_str!("../docs/guide/03-epsilon-and-budget.md")]
#[cfg(doctest)]
pub struct GuideEpsilonAndBudget;

/// The guide's chapter on reading a release.
#[doc = include_str!("../docs/guide/05-reading-a-release.md")]
#[cfg(doctest)]
pub struct GuideReadingARelease;

/// The guide's chapter on what dpmech protects against.
#[doc = include_str!("../docs/guide/07-what-it-protects.md")]
#[cfg(doctest)]
pub struct GuideWhatItProtects;
