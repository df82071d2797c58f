//! The discrete Laplace (two-sided geometric) distribution
//! `Pr[Z = z] = (1 − α)/(1 + α) · α^|z|`, `α = exp(−1/τ)`.

use super::{BitSource, Geometric, Rational};
use rand_core::CryptoRng;

/// Exact sampler of the discrete Laplace distribution with rational scale `τ`:
/// `Pr[Z = z] = (1 − α)/(1 + α) · α^|z|` for every integer `z`, `α = exp(−1/τ)`.
///
/// **Algorithm** (Canonne, Kamath & Steinke 2020, Algorithm 2): draw a magnitude
/// `G ~ Geometric(α)` ([`Geometric`], exact) and a fair sign bit; reject the pair
/// (negative, 0), which would count 0 twice; return `±G`. Then
/// `Pr[Z = z] ∝ α^|z|` exactly. This is **not** the `sign × geometric` sampler of the
/// seed document 002, which keeps (negative, 0) and so puts `1 − α` on 0 and is not
/// ε-DP.
///
/// **Cost.** The rejection happens with probability `(1 − α)/2`; the cost is that of
/// [`Geometric`] plus one bit.
///
/// **Timing.** See [`Geometric`]: the running time depends on the sample.
///
/// ```
/// use dpmech::sampling::{DiscreteLaplace, Rational};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let noise = DiscreteLaplace::new(Rational::new(10, 1)?); // scale 10
/// let z = noise.sample(&mut ChaCha20Rng::seed_from_u64(5));
/// # let _ = z;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscreteLaplace {
    magnitude: Geometric,
}

impl DiscreteLaplace {
    /// The discrete Laplace distribution of scale `τ` (`α = exp(−1/τ)`).
    pub fn new(scale: Rational) -> Self {
        Self {
            magnitude: Geometric::new(scale),
        }
    }

    /// The scale τ.
    pub fn scale(&self) -> Rational {
        self.magnitude.scale()
    }

    /// One sample, from a bit source, as an `i128` (never saturates in practice:
    /// `|Z| < 2¹²⁷`).
    #[inline]
    pub fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        loop {
            let magnitude = self.magnitude.sample_bits(bits);
            let negative = bits.bit();
            if negative && magnitude == 0 {
                continue;
            }
            let magnitude = i128::try_from(magnitude).unwrap_or(i128::MAX);
            return if negative { -magnitude } else { magnitude };
        }
    }

    /// One sample, saturating to the `i64` range.
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        saturate_i64(self.sample_bits(&mut BitSource::new(rng)))
    }
}

/// Clamps an `i128` into the `i64` range.
#[inline]
pub(crate) fn saturate_i64(value: i128) -> i64 {
    i64::try_from(value).unwrap_or(if value < 0 { i64::MIN } else { i64::MAX })
}
