//! One shape for every non-interactive mechanism: [`Mechanism`].
//!
//! A mechanism takes one input (a query answer, a vector of them, a score vector, a
//! respondent's value) and returns one private output, at a privacy loss it states up
//! front. The accountant ([`Accountant::release`](crate::Accountant::release)), the
//! statistics layer and generic code such as the auditor's callers speak to mechanisms
//! only through this trait.
//!
//! | mechanism | `Input` | `Output` |
//! |---|---|---|
//! | [`Laplace`], [`Gaussian`] | `f64` / `&[f64]` | `f64` / `Vec<f64>` on the public grid |
//! | [`Geometric`], [`DiscreteGaussian`] | `i64` / `&[i64]` | `i64` / `Vec<i64>` |
//! | [`Exponential`], [`PermuteAndFlip`], [`ReportNoisyMax`] | `&[f64]` (scores) | `usize` (index) |
//! | [`RandomizedResponse`] | `bool` / `&[bool]` | `bool` / `Vec<bool>` |
//! | [`KaryRandomizedResponse`] | `u64` / `&[u64]` | `u64` / `Vec<u64>` |
//!
//! Each type also has inherent methods with the same names (`release`,
//! `release_slice`, `privacy_loss`), so concrete code needs no import; their return
//! type is a `Result` exactly when the release can be refused (a non-finite query
//! answer, an empty score vector, a value outside `0..k`), while through the trait every
//! release returns a `Result`. Interactive mechanisms (the sparse vector family) answer
//! a stream and have their own shape in [`svt`](super::svt).

use crate::privacy::PrivacyLoss;
use crate::{
    CryptoRng, DiscreteGaussian, Error, Exponential, Gaussian, Geometric, KaryRandomizedResponse, Laplace,
    PermuteAndFlip, RandomizedResponse, ReportNoisyMax,
};

/// A non-interactive differentially private mechanism on inputs of type `Input`.
///
/// `release` validates the input and refuses it with a typed [`Error`] **before** any
/// randomness is drawn; `privacy_loss` is the guarantee of one release, under the
/// neighbouring relation and sensitivity norm the mechanism was calibrated for.
///
/// ```
/// use dpmech::{Accountant, Geometric, Laplace, Mechanism, PrivacyLoss};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
///
/// // Any mechanism on f64 answers, released through one generic function.
/// fn release_twice<M: Mechanism<f64, Output = f64>>(m: &M, x: f64) -> Result<(f64, f64), dpmech::Error> {
///     let mut rng = ChaCha20Rng::seed_from_u64(7);
///     Ok((m.release(x, &mut rng)?, m.release(x, &mut rng)?))
/// }
/// let (a, b) = release_twice(&Laplace::new(1.0, 0.5)?, 10.0)?;
/// # let _ = (a, b);
///
/// // The accountant charges the stated loss, then releases.
/// let accountant = Accountant::pure(1.0)?;
/// let count = Geometric::new(1, 0.25)?;
/// let noisy = accountant.release(&count, 120, &mut ChaCha20Rng::seed_from_u64(8))?;
/// assert_eq!(accountant.spent(), PrivacyLoss::Pure { epsilon: 0.25 });
/// # let _ = noisy;
/// # Ok::<(), dpmech::Error>(())
/// ```
pub trait Mechanism<Input> {
    /// What one release returns.
    type Output;

    /// One private release of `input`.
    ///
    /// # Errors
    ///
    /// Those of the implementing type's release method (e.g. [`Error::NonFiniteValue`] for a
    /// non-finite input, [`Error::EmptyInput`] for no scores), always before any randomness
    /// is drawn.
    fn release<R: CryptoRng + ?Sized>(&self, input: Input, rng: &mut R) -> Result<Self::Output, Error>;

    /// The guarantee of one release.
    fn privacy_loss(&self) -> PrivacyLoss;
}

/// Implements `Mechanism<$input>` for `$ty` by delegating to the inherent method of
/// the same shape; `ok` wraps one that cannot be refused.
macro_rules! delegate {
    ($ty:ty, $input:ty => $output:ty, $method:ident) => {
        impl<'a> Mechanism<$input> for $ty {
            type Output = $output;
            fn release<R: CryptoRng + ?Sized>(&self, input: $input, rng: &mut R) -> Result<$output, Error> {
                <$ty>::$method(self, input, rng)
            }
            fn privacy_loss(&self) -> PrivacyLoss {
                <$ty>::privacy_loss(self)
            }
        }
    };
    ($ty:ty, $input:ty => $output:ty, $method:ident, ok) => {
        impl<'a> Mechanism<$input> for $ty {
            type Output = $output;
            fn release<R: CryptoRng + ?Sized>(&self, input: $input, rng: &mut R) -> Result<$output, Error> {
                Ok(<$ty>::$method(self, input, rng))
            }
            fn privacy_loss(&self) -> PrivacyLoss {
                <$ty>::privacy_loss(self)
            }
        }
    };
}

delegate!(Laplace, f64 => f64, release);
delegate!(Laplace, &'a [f64] => Vec<f64>, release_slice);
delegate!(Gaussian, f64 => f64, release);
delegate!(Gaussian, &'a [f64] => Vec<f64>, release_slice);
delegate!(Geometric, i64 => i64, release, ok);
delegate!(Geometric, &'a [i64] => Vec<i64>, release_slice, ok);
delegate!(DiscreteGaussian, i64 => i64, release, ok);
delegate!(DiscreteGaussian, &'a [i64] => Vec<i64>, release_slice, ok);
delegate!(Exponential, &'a [f64] => usize, release);
delegate!(PermuteAndFlip, &'a [f64] => usize, release);
delegate!(ReportNoisyMax, &'a [f64] => usize, release);
delegate!(RandomizedResponse, bool => bool, release, ok);
delegate!(RandomizedResponse, &'a [bool] => Vec<bool>, release_slice, ok);
delegate!(KaryRandomizedResponse, u64 => u64, release);
delegate!(KaryRandomizedResponse, &'a [u64] => Vec<u64>, release_slice);
