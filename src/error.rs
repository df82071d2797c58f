//! The crate-wide error type.
//!
//! Every parameter and input check happens **before** any randomness is drawn, so an
//! `Err` never consumes noise and never depends on the private data beyond the fact
//! that the input was malformed.

use crate::privacy::PrivacyLoss;

/// Everything that can go wrong in `dpmech`. Each variant carries the offending value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// ε must be finite and strictly positive.
    #[error("invalid epsilon = {value}: epsilon must be finite and > 0")]
    InvalidEpsilon {
        /// The rejected ε.
        value: f64,
    },
    /// δ must lie in the open interval (0, 1).
    #[error("invalid delta = {value}: delta must lie in the open interval (0, 1)")]
    InvalidDelta {
        /// The rejected δ.
        value: f64,
    },
    /// ρ (zero-concentrated DP) must be finite and strictly positive.
    #[error("invalid rho = {value}: rho must be finite and > 0")]
    InvalidRho {
        /// The rejected ρ.
        value: f64,
    },
    /// A sensitivity must be finite and strictly positive.
    #[error("invalid sensitivity = {value}: sensitivity must be finite and > 0")]
    InvalidSensitivity {
        /// The rejected sensitivity.
        value: f64,
    },
    /// A named parameter is outside its domain. ε, δ, ρ and a sensitivity outside their
    /// own domains get their dedicated variants ([`InvalidEpsilon`](Self::InvalidEpsilon),
    /// …); `InvalidParameter` names one of them only when a valid value is outside what a
    /// particular calibration supports (e.g. `epsilon` ≥ 1 for the classical Gaussian,
    /// `delta` below the Gaussian's `MIN_DELTA`).
    #[error("invalid parameter `{name}` = {value}: {reason}")]
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// What the parameter must satisfy.
        reason: &'static str,
    },
    /// A data value is NaN or infinite.
    #[error("non-finite input value {value} at position {index}")]
    NonFiniteValue {
        /// Position of the value in the input (0 for a scalar).
        index: usize,
        /// The rejected value.
        value: f64,
    },
    /// An input that must not be empty was empty.
    #[error("empty input: {what} must not be empty")]
    EmptyInput {
        /// What was empty.
        what: &'static str,
    },
    /// The noise scale implied by the parameters cannot be represented exactly: a
    /// documented parameter limit (e.g. `Laplace::MAX_SCALE` = `gaussian::MAX_SIGMA` =
    /// 10²⁵⁰), refused whatever the data. The message names the parameter (the noise
    /// scale, i.e. the sensitivity — for sums and means the bounds' magnitude — over ε,
    /// or σ) and the limit.
    #[error(
        "noise scale {scale:e} is outside the supported range [{min:e}, {max:e}]: the noise scale \
         (sensitivity / epsilon, or sigma; for a sum or mean the sensitivity is set by the bounds) \
         must lie in that range (the Laplace mechanism also needs epsilon >= 2^-59); narrow the \
         bounds, lower the sensitivity or raise epsilon"
    )]
    ScaleOutOfRange {
        /// The requested scale.
        scale: f64,
        /// Smallest supported scale.
        min: f64,
        /// Largest supported scale.
        max: f64,
    },
    /// A charge would exceed the privacy budget; nothing was spent or released.
    #[error("privacy budget exceeded: requested {requested}, remaining {remaining}")]
    BudgetExceeded {
        /// The refused charge.
        requested: PrivacyLoss,
        /// What was left of the budget.
        remaining: PrivacyLoss,
    },
    /// A durable ledger store failed or refused (see
    /// [`composition::ledger`](crate::composition::ledger)): no charge was made and no
    /// noise drawn (for `Unavailable` after a lost connection, the charge may have been
    /// committed: counted, never refunded — the safe side).
    #[error("privacy ledger {kind}: {detail}")]
    Ledger {
        /// What kind of failure.
        kind: crate::composition::ledger::LedgerErrorKind,
        /// What the store reported.
        detail: String,
    },
    /// Two privacy guarantees of different kinds cannot be combined this way.
    #[error("incompatible privacy losses: {reason}")]
    IncompatibleLoss {
        /// Why the combination is not allowed.
        reason: &'static str,
    },
    /// A stateful mechanism (e.g. a sparse-vector instance) has stopped answering: it
    /// reached its cutoff of "above" answers. Answering more would not be private.
    #[error(
        "{mechanism} has halted after {cutoff} above-threshold answer(s); start a new instance with fresh budget"
    )]
    Halted {
        /// Which mechanism halted.
        mechanism: &'static str,
        /// Its cutoff `c` (the number of "above" answers it gives before halting).
        cutoff: usize,
    },
    /// A question has no finite answer (e.g. no finite ε reaches the requested δ).
    #[error("no finite answer: {what}")]
    Unattainable {
        /// Why, and what to change.
        what: &'static str,
    },
    /// The operating system could not provide entropy to seed the default RNG.
    #[error("the operating system's entropy source failed: {0}")]
    Entropy(String),
}
