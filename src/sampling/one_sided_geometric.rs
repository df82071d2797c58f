//! The one-sided geometric distribution `Pr[G = k] = (1 − α)·αᵏ`, `α = exp(−1/τ)`.

use super::{BitSource, DiscreteLaplace, Rational};
use rand_core::CryptoRng;

/// Exact sampler of `Pr[G = k] = (1 − α)·αᵏ` for `k ≥ 0`, `α = exp(−1/τ)`, for a
/// rational scale `τ = num/den > 0`, drawing a **fixed number of words per trial** and
/// a number of trials independent of the sample.
///
/// **Algorithm.** The magnitude of one one-sided trial of [`DiscreteLaplace`] (the same
/// shared ladder of certified tables, nothing built per scale): `G = M·J + R`, `J` by
/// inversion of the table of the reference scale `q̂ ≥ τ/M` (54 bits of the first word)
/// and `R` uniform on `[0, M)` (`M = 1` up to `τ = 64`), accepted with probability
/// `exp(−(J·(M/τ − 1/q̂) + R/τ))` by a certified one-word comparison, each resolved
/// exactly with further words in the rare case the certified bounds do not decide.
/// Every trial draws exactly [`words_per_sample`](Self::words_per_sample) words (1 when
/// `τ ≤ 64` is a reference scale, e.g. an integer up to 32; else 2 up to `τ = 2³⁷`, 3
/// above), a function of the scale alone; a rejected trial (probability below 0.09)
/// is repeated, and the number of trials is independent of the accepted value. So,
/// except on the fallback event (probability per sample below `2⁻⁴⁰·²`, the bound of
/// [`DiscreteLaplace`]), the words drawn are `N·words_per_sample` with `N` independent
/// of the sample. The output distribution is exact; no floating point is involved.
///
/// ```
/// use dpmech::sampling::{OneSidedGeometric, Rational};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let geometric = OneSidedGeometric::new(Rational::new(3, 2)?); // τ = 1.5
/// let g = geometric.sample(&mut ChaCha20Rng::seed_from_u64(1));
/// assert_eq!(geometric.words_per_sample(), 1);
/// # let _ = g;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneSidedGeometric {
    tables: DiscreteLaplace,
}

impl OneSidedGeometric {
    /// The geometric distribution with `α = exp(−1/scale)`.
    pub fn new(scale: Rational) -> Self {
        Self {
            tables: DiscreteLaplace::one_sided(scale),
        }
    }

    /// The scale τ (`α = exp(−1/τ)`).
    pub fn scale(&self) -> Rational {
        self.tables.scale()
    }

    /// Words drawn per trial (outside the fallback event); a sample takes `N ≥ 1`
    /// trials, `N` independent of its value (`N = 1` when one word suffices).
    pub fn words_per_sample(&self) -> usize {
        self.tables.words_per_trial()
    }

    /// One sample, from a bit source (whole words; buffered bits are left untouched).
    #[inline]
    pub fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> u128 {
        loop {
            let (accepted, _, g) = self.tables.trial(bits);
            if accepted {
                return g;
            }
        }
    }

    /// One sample (saturating at `u64::MAX`, a probability below `2^-60` event for any
    /// supported scale).
    #[inline]
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> u64 {
        let value = self.sample_bits(&mut BitSource::new(rng));
        u64::try_from(value).unwrap_or(u64::MAX)
    }
}
