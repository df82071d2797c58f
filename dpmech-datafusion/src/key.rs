//! Release keys: the secret that makes a release's noise reproducible under retries and
//! distinct between releases.

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sha2::{Digest, Sha256};

/// A secret 256-bit key for **one** release. Every random choice of the release — which
/// rows and groups contribution bounding keeps, and the noise of every cell — is derived
/// from it by HMAC-SHA256 over a label and the cell's key, so recomputing any part of
/// the release (a retried task, a re-run of the final aggregation) reproduces exactly
/// the same answer, while two releases (two keys) share nothing.
///
/// **Why this is safe.** Re-deriving the same noise for the same cell of the same release
/// releases nothing new: whatever is recomputed is identical to what was, or would have
/// been, released once, and the release is charged once. Fresh noise on a retry would
/// instead let two independent noisy answers of one cell escape (the failure mode of
/// engines that draw noise per task attempt). The key comes from the operating system,
/// is never printed (`Debug` hides it) and must never be reused for another release.
#[derive(Clone)]
pub struct ReleaseKey([u8; 32]);

impl core::fmt::Debug for ReleaseKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ReleaseKey(<secret>)")
    }
}

impl ReleaseKey {
    /// A fresh key from the operating system's entropy source.
    ///
    /// # Errors
    ///
    /// [`DpError::Entropy`](crate::DpError::Entropy) if the operating system cannot
    /// provide entropy.
    pub fn from_os() -> Result<Self, crate::error::DpError> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| crate::error::DpError::Entropy(e.to_string()))?;
        Ok(ReleaseKey(key))
    }

    /// A key from given bytes: for **tests and simulations only** (a known key makes the
    /// noise predictable).
    pub fn from_bytes_insecure(bytes: [u8; 32]) -> Self {
        ReleaseKey(bytes)
    }

    /// HMAC-SHA256(key, label ‖ 0 ‖ parts, each length-prefixed): unambiguous for any
    /// sequence of parts.
    pub(crate) fn prf(&self, label: &str, parts: &[&[u8]]) -> [u8; 32] {
        let lengths: Vec<[u8; 8]> = parts.iter().map(|p| (p.len() as u64).to_le_bytes()).collect();
        let mut message: Vec<&[u8]> = vec![label.as_bytes(), &[0u8]];
        for (len, part) in lengths.iter().zip(parts) {
            message.push(len);
            message.push(part);
        }
        hmac_sha256(&self.0, &message)
    }

    /// A SipHash-2-4 key derived from this key for `label` (fast per-row ranking).
    pub(crate) fn rank_key(&self, label: &str) -> RankKey {
        let d = self.prf(label, &[]);
        RankKey(
            u64::from_le_bytes(d[..8].try_into().expect("8 bytes")),
            u64::from_le_bytes(d[8..16].try_into().expect("8 bytes")),
        )
    }

    /// The cryptographic generator of one cell's noise.
    pub(crate) fn cell_rng(&self, label: &str, cell: &[u8]) -> ChaCha20Rng {
        ChaCha20Rng::from_seed(self.prf(label, &[cell]))
    }
}

/// A 128-bit key of SipHash-2-4 (Aumasson & Bernstein 2012), a PRF for short inputs:
/// ordering rows by it is a uniformly random order to anyone without the key.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RankKey(u64, u64);

impl RankKey {
    /// A keyed bijection of 64-bit words, `mix(x ⊕ k₀)`: it spreads integer keys over
    /// all 64 bits without collisions. Not a PRF — for partitioning only; the keyed
    /// choices use [`hasher`](Self::hasher).
    pub(crate) fn permute(&self, x: u64) -> u64 {
        mix(x ^ self.0)
    }

    /// The key's two words (the plan codec's encoding).
    pub(crate) fn words(&self) -> (u64, u64) {
        (self.0, self.1)
    }

    /// A key from its two words.
    pub(crate) fn from_words(k0: u64, k1: u64) -> Self {
        RankKey(k0, k1)
    }

    /// A hasher to feed parts into.
    pub(crate) fn hasher(&self) -> SipHash24 {
        SipHash24::new(self.0, self.1)
    }
}

/// The SplitMix64 finaliser (Steele, Lea & Flood 2014): a bijection of 64-bit words
/// with full avalanche.
pub(crate) fn mix(x: u64) -> u64 {
    let z = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// SipHash-2-4, streaming.
pub(crate) struct SipHash24 {
    v: [u64; 4],
    tail: u64,
    ntail: usize,
    length: usize,
}

impl SipHash24 {
    fn new(k0: u64, k1: u64) -> Self {
        SipHash24 {
            v: [
                k0 ^ 0x736f_6d65_7073_6575,
                k1 ^ 0x646f_7261_6e64_6f6d,
                k0 ^ 0x6c79_6765_6e65_7261,
                k1 ^ 0x7465_6462_7974_6573,
            ],
            tail: 0,
            ntail: 0,
            length: 0,
        }
    }

    fn round(&mut self) {
        let v = &mut self.v;
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    }

    fn compress(&mut self, m: u64) {
        self.v[3] ^= m;
        self.round();
        self.round();
        self.v[0] ^= m;
    }

    fn write(&mut self, mut bytes: &[u8]) {
        self.length += bytes.len();
        // Whole 8-byte words straight from the input once the tail is empty (the
        // per-row unit fingerprints hash ~10⁷ short parts).
        loop {
            if self.ntail == 0 {
                while let Some((word, rest)) = bytes.split_first_chunk::<8>() {
                    self.compress(u64::from_le_bytes(*word));
                    bytes = rest;
                }
            }
            let Some((&b, rest)) = bytes.split_first() else {
                return;
            };
            bytes = rest;
            self.tail |= u64::from(b) << (8 * self.ntail);
            self.ntail += 1;
            if self.ntail == 8 {
                let m = self.tail;
                self.compress(m);
                self.tail = 0;
                self.ntail = 0;
            }
        }
    }

    /// Appends one length-prefixed part.
    pub(crate) fn part(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }

    pub(crate) fn finish(mut self) -> u64 {
        let m = self.tail | ((self.length as u64 & 0xff) << 56);
        self.compress(m);
        self.v[2] ^= 0xff;
        for _ in 0..4 {
            self.round();
        }
        self.v[0] ^ self.v[1] ^ self.v[2] ^ self.v[3]
    }
}

/// HMAC-SHA256 (RFC 2104) of the concatenated `message` chunks under a 32-byte key.
fn hmac_sha256(key: &[u8; 32], message: &[&[u8]]) -> [u8; 32] {
    let mut inner_key = [0x36u8; 64];
    let mut outer_key = [0x5cu8; 64];
    for (i, b) in key.iter().enumerate() {
        inner_key[i] ^= b;
        outer_key[i] ^= b;
    }
    let mut inner = Sha256::new();
    inner.update(inner_key);
    for chunk in message {
        inner.update(chunk);
    }
    let mut outer = Sha256::new();
    outer.update(outer_key);
    outer.update(inner.finalize());
    outer.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_test_case_2() {
        // RFC 4231 case 2: key "Jefe" (zero-padding a key shorter than the block is
        // part of HMAC, so our 32-byte key is the same key), data split in two chunks.
        let mut key = [0u8; 32];
        key[..4].copy_from_slice(b"Jefe");
        let mac = hmac_sha256(&key, &[b"what do ya want ", b"for nothing?"]);
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn siphash_matches_the_reference_vectors() {
        // Aumasson & Bernstein, appendix A: key 00..0f, message 00..0e (15 bytes).
        let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
        let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
        let mut h = SipHash24::new(k0, k1);
        h.write(&(0u8..15).collect::<Vec<_>>());
        assert_eq!(h.finish(), 0xa129_ca61_49be_45e5);
        // The same message in uneven pieces (the word-at-a-time path and the tail).
        let mut split = SipHash24::new(k0, k1);
        for piece in [&[0u8, 1, 2][..], &[3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], &[14]] {
            split.write(piece);
        }
        assert_eq!(split.finish(), 0xa129_ca61_49be_45e5);
        // The empty message (first entry of the reference vectors_sip64 table).
        assert_eq!(SipHash24::new(k0, k1).finish(), 0x726f_db47_dd0e_0e31);
    }

    #[test]
    fn parts_are_unambiguous_and_keys_independent() {
        let k = ReleaseKey([7; 32]);
        assert_ne!(k.prf("x", &[b"ab", b"c"]), k.prf("x", &[b"a", b"bc"]));
        assert_ne!(k.prf("x", &[b"a"]), k.prf("y", &[b"a"]));
        assert_ne!(k.prf("x", &[b"a"]), ReleaseKey([8; 32]).prf("x", &[b"a"]));
        assert_eq!(format!("{k:?}"), "ReleaseKey(<secret>)");
    }
}
