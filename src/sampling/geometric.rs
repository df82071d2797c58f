//! The one-sided geometric distribution `Pr[G = k] = (1 − α)·αᵏ`, `α = exp(−1/τ)`.

use super::{BitSource, DiscreteLaplace, Rational};
use rand_core::CryptoRng;

/// Exact sampler of `Pr[G = k] = (1 − α)·αᵏ` for `k ≥ 0`, `α = exp(−1/τ)`, for a
/// rational scale `τ = num/den > 0`, drawing a **fixed number of words** per sample.
///
/// **Algorithm.** The magnitude of one trial of [`DiscreteLaplace`] above `τ = 16`
/// (same tables, same scale; `M = 1` below): `G = M·Q + R` by inversion of certified cumulative-distribution tables, one
/// 63-bit uniform for `Q` (the 64th bit of that word is discarded) and one 64-bit
/// uniform per 10-bit chunk of `R`, each resolved exactly with further words in the rare
/// case the certified bounds do not decide. No rejection: every sample draws exactly
/// [`words_per_sample`](Self::words_per_sample) `= 1 + ⌈m/10⌉` words, a function of the
/// scale alone, except on the fallback event, whose probability per sample is below
/// `2⁻⁵⁰` for every scale (the per-trial bound of [`DiscreteLaplace`]). The output
/// distribution is exact; no floating point is involved.
///
/// ```
/// use dpmech::sampling::{Geometric, Rational};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let geometric = Geometric::new(Rational::new(3, 2)?); // τ = 1.5
/// let g = geometric.sample(&mut ChaCha20Rng::seed_from_u64(1));
/// assert_eq!(geometric.words_per_sample(), 1);
/// # let _ = g;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometric {
    tables: DiscreteLaplace,
}

impl Geometric {
    /// The geometric distribution with `α = exp(−1/scale)`.
    pub fn new(scale: Rational) -> Self {
        Self {
            tables: DiscreteLaplace::new(scale),
        }
    }

    /// The scale τ (`α = exp(−1/τ)`).
    pub fn scale(&self) -> Rational {
        self.tables.scale()
    }

    /// Words drawn per sample (outside the fallback event): `1 + ⌈m/10⌉`.
    pub fn words_per_sample(&self) -> usize {
        self.tables.words_per_trial()
    }

    /// One sample, from a bit source (whole words; buffered bits are left untouched).
    #[inline]
    pub fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> u128 {
        self.tables.trial(bits).1
    }

    /// One sample (saturating at `u64::MAX`, a probability below `2^-60` event for any
    /// supported scale).
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> u64 {
        let value = self.sample_bits(&mut BitSource::new(rng));
        u64::try_from(value).unwrap_or(u64::MAX)
    }
}
