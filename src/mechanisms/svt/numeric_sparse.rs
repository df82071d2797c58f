//! NumericSparse: Sparse that releases a freshly noised value for each ⊤.

use super::above_threshold::validate_all;
use super::{
    NumericAnswer, Sparse, StreamingMechanism, advanced_composition_up, approximate_sigma, check_sparse,
    count_up, pure_sigma,
};
use crate::Laplace;
use crate::privacy::{PrivacyLoss, check_delta, round};
use crate::{CryptoRng, Error};

/// NumericSparse (Dwork & Roth 2014, Algorithm 3): Sparse at
/// budget ε₁ decides which queries are above the threshold; for each ⊤ it releases
/// `fᵢ(D) + Lap(σ(ε₂))` with **fresh** noise (never the comparison noise νᵢ) and
/// re-draws the threshold; it halts after `c` values.
///
/// Constants, exactly as Dwork & Roth state them:
///
/// * **δ = 0** ([`new`](Self::new)): ε₁ = 8ε/9, ε₂ = 2ε/9, `σ(x) = 2cΔ/x`. The
///   threshold noise is `Lap(σ(ε₁)) = Lap(9cΔ/(4ε))`, the query noise
///   `Lap(2σ(ε₁)) = Lap(9cΔ/(2ε))`, the released values carry `Lap(σ(ε₂)) = Lap(9cΔ/ε)`.
///   Privacy: Sparse at ε₁ = 8ε/9 plus `c` Laplace releases of ε/(9c) each (total
///   ε/9) — pure ε-DP in all (the proof of Dwork & Roth's Theorem 3.27 charges ε/9 for the
///   Laplace part; the 2ε/9 of the split is the parameter of `σ`, not the cost).
/// * **δ > 0** ([`approximate`](Self::approximate)): ε₁ = ε√512/(√512 + 1),
///   ε₂ = 2ε/(√512 + 1), `σ(x) = √(32c ln(2/δ))Δ/x`. Privacy: Sparse at (ε₁, δ/2)
///   composed with the `c` releases, (≤ ε − ε₁, δ/2) by advanced composition — both
///   bounds are computed and checked by the constructor, which rejects ε too large
///   for them. (ε, δ)-DP in all.
///
/// * **Neighbouring relation / sensitivity:** each query has sensitivity ≤ Δ under
///   the caller's neighbouring relation (add/remove or substitute).
/// * **Exactness:** comparisons on the grid as for [`Sparse`](super::Sparse); the
///   released values come from an exact [`Laplace`] and are exact multiples of its
///   grid ([`value_granularity`](Self::value_granularity)).
/// * **Accuracy:** [`numeric_sparse_alpha`](super::numeric_sparse_alpha) (Dwork & Roth
///   2014, Theorem 3.28).
/// * Releasing `fᵢ(D) + νᵢ` (the comparison's own noise) while charging only for the
///   comparison is **not** private (Lyu, Su & Li 2017, Algorithm 3).
///
/// ```
/// use dpmech::{NumericSparse, StreamingMechanism};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mut rng = ChaCha20Rng::seed_from_u64(11);
/// let mut svt = NumericSparse::new(100.0, 1.0, 2.0, 1)?; // T = 100, Δ = 1, ε = 2, c = 1
/// let answers = svt.run(&[1.0, 5000.0], &mut rng)?;
/// let value = answers[1].value().expect("far above the threshold");
/// assert_eq!(value % svt.value_granularity(), 0.0);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug)]
pub struct NumericSparse {
    /// Sparse at ε₁, carrying the whole run's guarantee and named NumericSparse.
    sparse: Sparse,
    /// The fresh noise of the released values.
    numeric: Laplace,
}

impl NumericSparse {
    stream_accessors!(sparse);

    /// Pure ε-DP NumericSparse with cutoff `cutoff` (δ = 0).
    ///
    /// # Errors
    ///
    /// Those of [`Sparse::new`](super::Sparse::new), for the same checks.
    pub fn new(threshold: f64, sensitivity: f64, epsilon: f64, cutoff: usize) -> Result<Self, Error> {
        let (threshold, sensitivity, cutoff, epsilon) =
            check_sparse(threshold, sensitivity, cutoff, epsilon)?;
        let epsilon1 = round::div_down(round::mul_down(8.0, epsilon), 9.0);
        let sigma = pure_sigma(epsilon1, cutoff);
        // σ(ε₂) = 2cΔ/ε₂ = 9cΔ/ε: a Laplace release at ε/(9c) per value.
        let per_value = round::div_down(epsilon, round::mul_up(9.0, count_up(cutoff)));
        let loss = PrivacyLoss::Pure { epsilon };
        Self::build(threshold, sensitivity, cutoff, sigma, loss, per_value)
    }

    /// (ε, δ)-DP NumericSparse with cutoff `cutoff` (δ > 0).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), plus [`Error::InvalidDelta`], and
    /// [`Error::InvalidParameter`] when ε is too large for the advanced-composition
    /// bounds (use [`new`](Self::new)).
    pub fn approximate(
        threshold: f64,
        sensitivity: f64,
        epsilon: f64,
        delta: f64,
        cutoff: usize,
    ) -> Result<Self, Error> {
        let (threshold, sensitivity, cutoff, epsilon) =
            check_sparse(threshold, sensitivity, cutoff, epsilon)?;
        let delta = check_delta(delta)?;
        let root512 = round::sqrt_down(512.0);
        let denominator = round::add_up(round::sqrt_up(512.0), 1.0);
        let epsilon1 = round::div_down(round::mul_down(epsilon, root512), denominator);
        let epsilon2 = round::div_down(round::mul_down(2.0, epsilon), denominator);
        let half_delta = delta / 2.0; // exact
        let sigma = approximate_sigma(epsilon1, half_delta, cutoff)?;
        // σ(ε₂) = √(32c ln(2/δ))Δ/ε₂: a Laplace release at ε₂/√(32c ln(2/δ)) per value.
        let root = round::sqrt_up(round::mul_up(
            round::mul_up(32.0, count_up(cutoff)),
            round::ln_up(round::div_up(2.0, delta)),
        ));
        let per_value = round::div_down(epsilon2, root);
        let remainder = round::sub_down(epsilon, epsilon1);
        if per_value <= 0.0 || advanced_composition_up(cutoff, per_value, half_delta) > remainder {
            return Err(Error::InvalidParameter {
                name: "epsilon",
                value: epsilon,
                reason: "with delta > 0, the c numeric releases exceed their share of epsilon under advanced composition; use delta = 0",
            });
        }
        let loss = PrivacyLoss::Approximate { epsilon, delta };
        Self::build(threshold, sensitivity, cutoff, sigma, loss, per_value)
    }

    /// Sparse with threshold noise `σΔ` (query noise `2σΔ`) and values released at
    /// `per_value`-DP each (the Laplace mechanism is built first, as its scale's error
    /// comes first).
    fn build(
        threshold: f64,
        sensitivity: f64,
        cutoff: usize,
        sigma: f64,
        loss: PrivacyLoss,
        per_value: f64,
    ) -> Result<Self, Error> {
        let numeric = Laplace::new(sensitivity, per_value)?;
        Ok(Self {
            sparse: Sparse::build(threshold, sensitivity, cutoff, sigma, loss, "NumericSparse")?,
            numeric,
        })
    }

    /// The scale of the fresh noise on released values (`9cΔ/ε` for δ = 0).
    pub fn value_scale(&self) -> f64 {
        self.numeric.scale()
    }

    /// The grid of the released values.
    pub fn value_granularity(&self) -> f64 {
        self.numeric.granularity()
    }
}

/// A value with fresh noise or ⊥ for each query, up to `c` values; the guarantee of the
/// constructor for the run.
impl StreamingMechanism for NumericSparse {
    type Answer = NumericAnswer;

    stream_state!(sparse);

    fn query<R: CryptoRng + ?Sized>(&mut self, value: f64, rng: &mut R) -> Result<NumericAnswer, Error> {
        match self.sparse.stream.query(value, self.sparse.threshold, rng)? {
            super::Answer::Above => Ok(NumericAnswer::Value(self.numeric.release(value, rng)?)),
            super::Answer::Below => Ok(NumericAnswer::Below),
        }
    }

    fn privacy_loss(&self) -> PrivacyLoss {
        self.sparse.loss
    }
}
