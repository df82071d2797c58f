//! The clamped sum as a [`Mechanism`]: records in, a noisy exact sum out.

use crate::mechanisms::Mechanism;
use crate::privacy::PrivacyLoss;
use crate::sensitivity::Neighbouring;
use crate::statistics::records::{Bounds, exact_sum};
use crate::{CryptoRng, Error, Laplace};

/// `Σ read(vᵢ) + Lap(Δ/ε)` on a public grid: the sum of records read by the public
/// [`Bounds`] (NaN imputed, clamped, rounded to the grid `g`; see
/// [`records`](super::records)), added exactly as integers, plus exact discrete Laplace
/// noise.
///
/// * **Guarantee:** pure ε-DP under `relation`.
/// * **Sensitivity:** `Δ = max(|lower|, |upper|)` (add/remove) or `upper − lower`
///   (substitute), plus the per-record rounding `g` that the Laplace mechanism's unit
///   scale charges ([`Laplace`]).
/// * **Never fails on records:** every `f64` is read by the rule; the result does not
///   depend on the order of the records.
///
/// ```
/// use dpmech::{sensitivity::Neighbouring, statistics::ClampedSum};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let total_hours = ClampedSum::new((0.0, 24.0), Neighbouring::AddRemove, 0.5)?;
/// let noisy = total_hours.release(&[7.5, f64::NAN, 30.0], &mut ChaCha20Rng::seed_from_u64(1)); // never refused
/// # let _ = noisy;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ClampedSum {
    bounds: Bounds,
    relation: Neighbouring,
    laplace: Laplace,
}

impl ClampedSum {
    /// The clamped sum over `bounds` at privacy level `epsilon` under `relation`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] for invalid bounds (not finite, `lower ≥ upper`, or a NaN
    /// imputation value outside them);
    /// those of [`Laplace::new`](crate::Laplace::new) for ε and the sensitivity.
    pub fn new(bounds: impl Into<Bounds>, relation: Neighbouring, epsilon: f64) -> Result<Self, Error> {
        let bounds = bounds.into();
        let laplace = Laplace::for_exact_sums(bounds.sum_sensitivity(relation)?, epsilon)?;
        Ok(Self {
            bounds,
            relation,
            laplace,
        })
    }

    /// The noisy sum of `values` (never refused).
    pub fn release<R: CryptoRng + ?Sized>(&self, values: &[f64], rng: &mut R) -> f64 {
        self.laplace
            .release_units(exact_sum(values, &self.bounds, &self.laplace.grid()), rng)
    }

    /// The noise scale `b ≥ Δ/ε`.
    pub fn scale(&self) -> f64 {
        self.laplace.scale()
    }

    /// The neighbouring relation the guarantee holds for.
    pub fn relation(&self) -> Neighbouring {
        self.relation
    }

    /// `PrivacyLoss::Pure { epsilon }`.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        self.laplace.privacy_loss()
    }
}

impl<'a> Mechanism<&'a [f64]> for ClampedSum {
    type Output = f64;
    fn release<R: CryptoRng + ?Sized>(&self, values: &'a [f64], rng: &mut R) -> Result<f64, Error> {
        Ok(ClampedSum::release(self, values, rng))
    }
    fn privacy_loss(&self) -> PrivacyLoss {
        ClampedSum::privacy_loss(self)
    }
}
