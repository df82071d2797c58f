//! A buffer of random bits: one 64-bit word from the generator serves 64 coin flips.

use rand_core::CryptoRng;

/// Hands out random bits from a cryptographic generator one word at a time.
///
/// The exact samplers consume a few bits per decision (a lazy Bernoulli trial needs two
/// bits on average), so buffering a `u64` and spending it bit by bit makes them cost
/// roughly one generator call per sample instead of a dozen.
///
/// Bits left in the buffer when the `BitSource` is dropped are discarded, never reused.
///
/// ```
/// use dpmech::sampling::BitSource;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mut rng = ChaCha20Rng::seed_from_u64(7);
/// let mut bits = BitSource::new(&mut rng);
/// let byte = bits.bits(8);
/// assert!(byte < 256);
/// ```
pub struct BitSource<'a, R: CryptoRng + ?Sized> {
    rng: &'a mut R,
    buffer: u64,
    available: u32,
}

impl<'a, R: CryptoRng + ?Sized> BitSource<'a, R> {
    /// A bit source drawing from `rng`; nothing is drawn until a bit is asked for.
    #[inline]
    pub fn new(rng: &'a mut R) -> Self {
        Self {
            rng,
            buffer: 0,
            available: 0,
        }
    }

    /// One fair random bit.
    #[inline]
    pub fn bit(&mut self) -> bool {
        if self.available == 0 {
            self.buffer = self.rng.next_u64();
            self.available = 64;
        }
        let bit = self.buffer & 1 == 1;
        self.buffer >>= 1;
        self.available -= 1;
        bit
    }

    /// `n` fair random bits as the low bits of a `u64` (`n` is clamped to 64).
    #[inline]
    pub fn bits(&mut self, n: u32) -> u64 {
        let n = n.min(64);
        if n <= self.available {
            let value = self.buffer & low_mask(n);
            self.buffer = self.buffer.checked_shr(n).unwrap_or(0);
            self.available -= n;
            value
        } else {
            // Take what is left, then the rest from a fresh word.
            let have = self.available;
            let low = self.buffer & low_mask(have);
            let fresh = self.rng.next_u64();
            let need = n - have;
            let high = fresh & low_mask(need);
            self.buffer = fresh.checked_shr(need).unwrap_or(0);
            self.available = 64 - need;
            low | high.checked_shl(have).unwrap_or(0)
        }
    }

    /// A full 64-bit word straight from the generator (bypasses the buffer).
    #[inline]
    pub fn word(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Fills `out` with bytes straight from the generator (bypassing the buffer), in one
    /// call. For a generator whose `next_u64` reads its byte stream little-endian, as
    /// ChaCha's does, the 8-byte chunks of `out` read little-endian are the words that
    /// `out.len()/8` calls of [`word`](Self::word) would return.
    #[inline]
    pub fn fill_bytes(&mut self, out: &mut [u8]) {
        self.rng.fill_bytes(out);
    }
}

#[inline]
fn low_mask(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{Rng, SeedableRng};

    #[test]
    fn bits_reassemble_the_generator_words() {
        // Reading 64 words' worth of bits in odd-sized chunks must reproduce the
        // generator's words exactly: no bit is lost or reused.
        let mut reference = ChaCha20Rng::seed_from_u64(1);
        let words: Vec<u64> = (0..64).map(|_| reference.next_u64()).collect();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let mut source = BitSource::new(&mut rng);
        let mut collected: Vec<bool> = Vec::new();
        for chunk in [1u32, 7, 13, 64, 3, 33, 5].iter().cycle() {
            if collected.len() + *chunk as usize > 64 * 64 {
                break;
            }
            let v = source.bits(*chunk);
            collected.extend((0..*chunk).map(|i| (v >> i) & 1 == 1));
        }
        for (i, bit) in collected.iter().enumerate() {
            assert_eq!(*bit, (words[i / 64] >> (i % 64)) & 1 == 1, "bit {i}");
        }
        assert!(collected.len() > 60 * 64);
    }

    #[test]
    fn single_bits_match_words() {
        let mut reference = ChaCha20Rng::seed_from_u64(2);
        let word = reference.next_u64();
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let mut source = BitSource::new(&mut rng);
        for i in 0..64 {
            assert_eq!(source.bit(), (word >> i) & 1 == 1);
        }
        assert_eq!(source.bits(0), 0);
    }
}
