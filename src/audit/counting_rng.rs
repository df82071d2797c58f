//! An RNG wrapper that counts the random words drawn, so that the number of draws —
//! a proxy for running time — can be audited jointly with a mechanism's output.

use crate::rng::{TryCryptoRng, TryRng};

/// Wraps a generator and counts the 64-bit words drawn from it.
///
/// `next_u32` and `next_u64` count one word each; `fill_bytes` counts `⌈len / 8⌉`
/// words. The wrapper is a [`CryptoRng`](crate::CryptoRng) exactly when the inner
/// generator is, and `CountingRng<&mut R>` works because `&mut R` is itself a
/// generator.
///
/// An exact sampler whose loop count depends on the sampled value leaks that value
/// through its running time (Jin et al. 2022); auditing `(value, draws)` with
/// [`Auditor::audit_categorical`](super::Auditor::audit_categorical) makes the leak
/// visible:
///
/// ```
/// use dpmech::audit::CountingRng;
/// use dpmech::rng::Rng;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
///
/// let mut rng = ChaCha20Rng::seed_from_u64(7);
/// let mut counting = CountingRng::new(&mut rng);
/// let _ = counting.next_u64();
/// let _ = counting.next_u32();
/// let mut buf = [0u8; 9];
/// counting.fill_bytes(&mut buf);
/// assert_eq!(counting.draws(), 4);
/// ```
#[derive(Debug)]
pub struct CountingRng<R> {
    inner: R,
    draws: u64,
}

impl<R> CountingRng<R> {
    /// Wraps `inner` with a zero count.
    pub fn new(inner: R) -> Self {
        Self { inner, draws: 0 }
    }

    /// The number of 64-bit words drawn so far.
    pub fn draws(&self) -> u64 {
        self.draws
    }

    /// Unwraps the inner generator.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: TryRng> TryRng for CountingRng<R> {
    type Error = R::Error;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        self.draws += 1;
        self.inner.try_next_u32()
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        self.draws += 1;
        self.inner.try_next_u64()
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.draws += dst.len().div_ceil(8) as u64;
        self.inner.try_fill_bytes(dst)
    }
}

impl<R: TryCryptoRng> TryCryptoRng for CountingRng<R> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CryptoRng;
    use crate::rng::Rng;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    fn takes_crypto<R: CryptoRng + ?Sized>(rng: &mut R) -> u64 {
        rng.next_u64()
    }

    #[test]
    fn counts_words_and_passes_values_through() {
        let mut plain = ChaCha20Rng::seed_from_u64(1);
        let expected = plain.next_u64();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let mut c = CountingRng::new(&mut rng);
        assert_eq!(takes_crypto(&mut c), expected);
        c.fill_bytes(&mut [0u8; 0]);
        assert_eq!(c.draws(), 1);
        c.fill_bytes(&mut [0u8; 16]);
        assert_eq!(c.draws(), 3);
        let _ = c.next_u32();
        assert_eq!(c.draws(), 4);
    }
}
