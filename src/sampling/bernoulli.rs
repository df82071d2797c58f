//! Exact Bernoulli trials: of a rational probability, and of `exp(−γ)` for rational γ.

use super::BitSource;
use super::certified::{LazyUniform, Threshold, exp_neg};
use crate::Error;
use rand_core::CryptoRng;

/// Bits compared at once by [`bernoulli_ratio_bits`] before falling back to the
/// bit-by-bit comparison.
const CHUNK: u32 = 8;

/// Bernoulli(`num/den`): is a uniform real `V ∈ [0, 1)` below `num/den`?
///
/// **Fast path** (`den < 2⁶⁴`): draw the first `c = 8` bits of `V` as an integer `u`;
/// `V ∈ [u/2ᶜ, (u+1)/2ᶜ)`, so `V < p` is decided by `(u+1)·den ≤ num·2ᶜ` (true) or
/// `u·den ≥ num·2ᶜ` (false), one multiplication. Only the single `u` whose interval
/// straddles `p` (probability ≤ 2⁻ᶜ) continues, exactly, with the bits after the
/// first `c`: `V < p` iff the rest of `V` is below `(num·2ᶜ − u·den)/den`.
///
/// **Bit-by-bit** (any `den ≤ 2¹²⁷`): the bits of `V` are drawn one at a time and
/// compared with the binary expansion of `num/den` (long division); the first
/// differing bit decides. Two bits on average.
///
/// Either way the result is exactly Bernoulli(`num/den`); `num ≥ den` gives `true`.
#[inline]
pub(crate) fn bernoulli_ratio_bits<R: CryptoRng + ?Sized>(
    bits: &mut BitSource<'_, R>,
    num: u128,
    den: u128,
) -> bool {
    if num >= den {
        return true;
    }
    if num == 0 {
        return false;
    }
    if den <= u64::MAX as u128 {
        let u = bits.bits(CHUNK) as u128;
        let product = u * den; // < 2^(64+c)
        let target = num << CHUNK; // < 2^(64+c)
        if product + den <= target {
            return true;
        }
        if product >= target {
            return false;
        }
        return bernoulli_ratio_bitwise(bits, target - product, den);
    }
    bernoulli_ratio_bitwise(bits, num, den)
}

/// The bit-by-bit comparison of a fresh uniform real with `num/den < 1`.
#[inline]
pub(crate) fn bernoulli_ratio_bitwise<R: CryptoRng + ?Sized>(
    bits: &mut BitSource<'_, R>,
    num: u128,
    den: u128,
) -> bool {
    let mut remainder = num;
    loop {
        remainder <<= 1;
        let digit = remainder >= den;
        if digit {
            remainder -= den;
        }
        let random = bits.bit();
        if random != digit {
            // random = 0 < digit = 1: V < p. random = 1 > digit = 0: V > p.
            return digit;
        }
        if remainder == 0 {
            // The expansion of p ended; V equals p only with probability 0.
            return false;
        }
    }
}

fn check_ratio(den: u128) -> Result<(), Error> {
    if den == 0 || den > 1 << 127 {
        return Err(Error::InvalidParameter {
            name: "den",
            value: den as f64,
            reason: "the denominator must lie in [1, 2^127]",
        });
    }
    Ok(())
}

/// An exact Bernoulli trial with success probability `min(1, num/den)`.
///
/// ```
/// use dpmech::sampling::bernoulli_ratio;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let coin = bernoulli_ratio(&mut ChaCha20Rng::seed_from_u64(3), 1, 3)?;
/// # let _ = coin;
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`den`) unless `1 ≤ den ≤ 2¹²⁷`, before any randomness is
/// drawn.
pub fn bernoulli_ratio<R: CryptoRng + ?Sized>(rng: &mut R, num: u128, den: u128) -> Result<bool, Error> {
    check_ratio(den)?;
    Ok(bernoulli_ratio_bits(&mut BitSource::new(rng), num, den))
}

/// Bernoulli(`exp(−γ)`) for a fixed rational `γ = num/den ≥ 0` (`num < 2¹²⁸`,
/// `1 ≤ den < 2⁶⁴`) as **one comparison of a 64-bit uniform word** with a certified
/// fixed-point `exp(−γ)`.
///
/// **Algorithm.** At construction, an enclosure `[lo, hi]` of `2⁶⁴·exp(−γ)` is computed
/// with integer interval arithmetic (192 fractional bits, outward rounding; see
/// [`DiscreteLaplace`](super::DiscreteLaplace)). A trial draws one word `u`, the first
/// 64 bits of a uniform real `U`, and returns `U < exp(−γ)`: `true` when
/// `u < ⌊lo⌋` (then `U < (u+1)/2⁶⁴ ≤ exp(−γ)`), `false` when `u ≥ ⌈hi⌉`. Otherwise —
/// at most two values of `u`, probability `≤ 2⁻⁶³` — `U` is extended with further
/// words and compared with enclosures refined to its length plus 64 bits until decided
/// (`exp(−γ)` is irrational for `γ > 0`, so this ends with probability 1). The result is
/// **exactly** Bernoulli(`exp(−γ)`), and every trial draws exactly one word except on
/// that fallback event.
///
/// ```
/// use dpmech::sampling::BernoulliExpNeg;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let coin = BernoulliExpNeg::new(1, 3)?; // p = e^(−1/3)
/// let heads = coin.sample(&mut ChaCha20Rng::seed_from_u64(9));
/// # let _ = heads;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BernoulliExpNeg {
    threshold: Threshold,
    /// `⌊2⁶⁴·lo⌋`: `u` below it decides `true`.
    below: u64,
    /// `⌈2⁶⁴·hi⌉ − 1`: `u` above it decides `false`.
    above: u64,
}

impl BernoulliExpNeg {
    /// Bernoulli(`exp(−num/den)`); [`Error::InvalidParameter`] when `den = 0`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`den`) for `den = 0`.
    pub fn new(num: u128, den: u64) -> Result<Self, Error> {
        check_ratio(den as u128)?;
        let enclosure = exp_neg(num, den, 192);
        let below = enclosure.lo.shr(128).to_u128_sat().min(u64::MAX as u128) as u64;
        let ceil = enclosure.hi.shr_ceil(128).to_u128_sat();
        Ok(Self {
            threshold: Threshold {
                step: num,
                den,
                size: None,
                two_sided: false,
            },
            below,
            above: ceil.saturating_sub(1).min(u64::MAX as u128) as u64,
        })
    }

    /// One trial from a bit source (one whole word; buffered bits are left untouched).
    #[inline]
    pub fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> bool {
        let u = bits.word();
        if u < self.below {
            true
        } else if u > self.above {
            false
        } else {
            self.resolve(u, bits)
        }
    }

    #[cold]
    fn resolve<R: CryptoRng + ?Sized>(&self, u: u64, bits: &mut BitSource<'_, R>) -> bool {
        if self.threshold.step == 0 {
            return true; // exp(0) = 1
        }
        self.threshold.exact_less(&mut LazyUniform::new(u, 64), 1, bits)
    }

    /// One trial.
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> bool {
        self.sample_bits(&mut BitSource::new(rng))
    }

    /// The words `u` the fast path leaves undecided, `below..=above` (empty when
    /// `above < below`); at most two.
    #[cfg(test)]
    pub(crate) fn band(&self) -> (u64, u64) {
        (self.below, self.above)
    }
}

/// An exact Bernoulli trial with success probability `exp(−num/den)`: one word, see
/// [`BernoulliExpNeg`]. This function computes the certified threshold on every call
/// (tens of microseconds of big-integer arithmetic); for repeated trials at one γ build
/// a [`BernoulliExpNeg`] once (nanoseconds per trial).
///
/// ```
/// use dpmech::sampling::bernoulli_exp_neg;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let accepted = bernoulli_exp_neg(&mut ChaCha20Rng::seed_from_u64(3), 1, 2)?; // p = e^(-1/2)
/// # let _ = accepted;
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`den`) unless `1 ≤ den < 2⁶⁴`, before any randomness is
/// drawn.
pub fn bernoulli_exp_neg<R: CryptoRng + ?Sized>(rng: &mut R, num: u128, den: u128) -> Result<bool, Error> {
    check_ratio(den)?;
    if den > u64::MAX as u128 {
        return Err(Error::InvalidParameter {
            name: "den",
            value: den as f64,
            reason: "the denominator of gamma must fit in 64 bits",
        });
    }
    Ok(BernoulliExpNeg::new(num, den as u64)?.sample(rng))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::certified::prefix_below as reference;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{Rng, SeedableRng};

    /// The certified one-word decision agrees with a 512-bit evaluation on 10⁶ random
    /// words (over five values of γ).
    #[test]
    fn fast_path_agrees_with_high_precision_on_a_million_words() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xBE27);
        let mut decided = 0u64;
        for (num, den) in [
            (1u128, 3u64),
            (1, 1),
            (7, 2),
            (1, 1 << 40),
            ((1u128 << 70) + 1, u64::MAX),
        ] {
            let coin = BernoulliExpNeg::new(num, den).unwrap();
            let e = exp_neg(num, den, 512);
            for _ in 0..200_000 {
                let u = rng.next_u64();
                let (below, above) = coin.band();
                if u < below || u > above {
                    assert_eq!(Some(u < below), reference(&[u], &e), "γ = {num}/{den}, u = {u}");
                    decided += 1;
                }
            }
        }
        assert!(decided >= 1_000_000 - 10, "{decided}");
    }

    /// Words planted in the undecided band take the exact path, and its answer agrees
    /// with the 512-bit reference on the same extended uniform.
    #[test]
    fn planted_band_words_resolve_exactly() {
        let mut planted = 0;
        for (num, den) in [(1u128, 3u64), (1, 1), (7, 2), (1, 1 << 40), (5, 1), (100, 1)] {
            let coin = BernoulliExpNeg::new(num, den).unwrap();
            let (below, above) = coin.band();
            let e = exp_neg(num, den, 512);
            assert!(
                above.wrapping_sub(below) <= 1 || above < below,
                "γ = {num}/{den}: band too wide"
            );
            for u in below..=above {
                for seed in 0..8u64 {
                    let mut rng = ChaCha20Rng::seed_from_u64(seed);
                    let got = coin.resolve(u, &mut BitSource::new(&mut rng));
                    let mut replay = ChaCha20Rng::seed_from_u64(seed);
                    let words = [u, replay.next_u64(), replay.next_u64(), replay.next_u64()];
                    assert_eq!(Some(got), reference(&words, &e), "γ = {num}/{den}, u = {u}");
                    planted += 1;
                }
            }
        }
        assert!(planted >= 8, "{planted}");
    }

    #[test]
    fn gamma_zero_is_certain_and_zero_den_is_refused() {
        let coin = BernoulliExpNeg::new(0, 1).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        assert!((0..1000).all(|_| coin.sample(&mut rng)));
        assert!(coin.resolve(u64::MAX, &mut BitSource::new(&mut rng)));
        assert!(BernoulliExpNeg::new(1, 0).is_err());
    }
}
