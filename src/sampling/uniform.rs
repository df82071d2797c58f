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
