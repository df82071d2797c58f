//! Unbiased uniform integers, by rejection on the fewest bits that cover the range.

use super::BitSource;
use crate::Error;
use rand_core::CryptoRng;

/// A uniform integer in `{0, …, n − 1}` for `n ≥ 1`.
///
/// Draws `⌈log₂ n⌉` bits and rejects values `≥ n`: every value has probability exactly
/// `1/n`. Expected cost: fewer than `2⌈log₂ n⌉` bits (exactly `log₂ n` bits, no
/// rejection, when `n` is a power of two).
#[inline]
pub(crate) fn uniform_below_bits<R: CryptoRng + ?Sized>(bits: &mut BitSource<'_, R>, n: u64) -> u64 {
    debug_assert!(n >= 1);
    if n <= 1 {
        return 0;
    }
    let width = 64 - (n - 1).leading_zeros();
    loop {
        let candidate = bits.bits(width);
        if candidate < n {
            return candidate;
        }
    }
}

/// A uniform integer in `{0, …, n − 1}` for `n ≥ 1` from **one** 64-bit word, whatever
/// `n` is (Lemire 2019, "Fast random integer generation in an interval"): with `x` the
/// word, `⌊x·n/2⁶⁴⌋` is returned unless the low half of `x·n` is below `2⁶⁴ mod n`, in
/// which case (probability `< n·2⁻⁶⁴`) a fresh word is drawn. Every value has
/// probability exactly `1/n`, and the words drawn do not depend on `n` outside that
/// event: for counts computed from private data (the tied or the accepted candidates of
/// a selection), where [`uniform_below_bits`]' rejection count would follow `n`.
#[inline]
pub(crate) fn uniform_below_word<R: CryptoRng + ?Sized>(bits: &mut BitSource<'_, R>, n: u64) -> u64 {
    debug_assert!(n >= 1);
    loop {
        let product = u128::from(bits.word()) * u128::from(n);
        let low = product as u64;
        // 2⁶⁴ mod n < n: only a low half below n needs the division.
        if low >= n || low >= n.wrapping_neg() % n {
            return (product >> 64) as u64;
        }
    }
}

/// A uniform integer in `{0, …, n − 1}`, exactly (no modulo bias, no floats).
///
/// Returns [`Error::InvalidParameter`] for `n = 0`.
///
/// ```
/// use dpmech::sampling::uniform_below;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let die = uniform_below(&mut ChaCha20Rng::seed_from_u64(1), 6)?;
/// assert!(die < 6);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`n`) for `n = 0`, before any randomness is drawn.
pub fn uniform_below<R: CryptoRng + ?Sized>(rng: &mut R, n: u64) -> Result<u64, Error> {
    if n == 0 {
        return Err(Error::InvalidParameter {
            name: "n",
            value: 0.0,
            reason: "the range of a uniform integer must be non-empty",
        });
    }
    Ok(uniform_below_bits(&mut BitSource::new(rng), n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::CountingRng;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use statrs::distribution::{ChiSquared, ContinuousCDF};

    /// `uniform_below_word`: one word per draw, and uniform — a chi-square test at
    /// α = 1e-3 (critical value the 0.999 quantile of χ²(n − 1)) over 10⁵ draws for
    /// n = 1, 3, 10, 1000.
    #[test]
    fn one_word_uniform_integers_are_uniform() {
        const DRAWS: u64 = 100_000;
        for (i, n) in [1u64, 3, 10, 1000].into_iter().enumerate() {
            let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(40 + i as u64));
            let mut counts = vec![0u64; n as usize];
            for _ in 0..DRAWS {
                counts[uniform_below_word(&mut BitSource::new(&mut rng), n) as usize] += 1;
            }
            // A second word only with probability < n·2⁻⁶⁴.
            assert_eq!(rng.draws(), DRAWS, "n = {n}");
            if n > 1 {
                let expected = DRAWS as f64 / n as f64;
                let statistic: f64 = counts
                    .iter()
                    .map(|&c| (c as f64 - expected).powi(2) / expected)
                    .sum();
                let critical = ChiSquared::new((n - 1) as f64).unwrap().inverse_cdf(1.0 - 1e-3);
                assert!(statistic <= critical, "n = {n}: {statistic} > {critical}");
            }
        }
    }
}
