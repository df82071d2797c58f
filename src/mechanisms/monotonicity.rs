//! Monotone utilities: the one way the crate is told about them.

/// Whether the caller promises that the scores or queries are **monotone**: for every
/// pair of neighbouring datasets, either `fᵢ(D) ≥ fᵢ(D′)` for all i or `fᵢ(D) ≤ fᵢ(D′)`
/// for all i — e.g. counting queries under add/remove one record (one record changes
/// every count it touches in the same direction). Then half the noise suffices:
///
/// | mechanism | `General` | `Monotone` |
/// |---|---|---|
/// | [`Exponential`](super::Exponential) | `Pr[r] ∝ exp(εu/(2Δ))` | `Pr[r] ∝ exp(εu/Δ)` |
/// | [`ReportNoisyMax`](super::ReportNoisyMax) (Laplace) | `Lap(2Δ/ε)` | `Lap(Δ/ε)` (Dwork & Roth, Claim 3.9) |
/// | [`StandardSvt`](super::StandardSvt) | queries `Lap(2cΔ/ε₂)` | `Lap(cΔ/ε₂)` (Lyu, Su & Li 2017, Algorithm 7) |
///
/// Each takes it as its last constructor argument (`new` assumes `General`). A false
/// promise voids the guarantee: pass `Monotone` only for queries that are monotone by
/// construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Monotonicity {
    /// No assumption: scores may move in different directions between neighbours.
    #[default]
    General,
    /// All scores move in the same direction between any two neighbours.
    Monotone,
}

impl Monotonicity {
    /// The factor λ of the noise calibration: 2 for `General`, 1 for `Monotone`.
    pub(crate) fn factor(self) -> f64 {
        match self {
            Self::General => 2.0,
            Self::Monotone => 1.0,
        }
    }
}
