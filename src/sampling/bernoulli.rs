//! Exact Bernoulli trials: of a rational probability, and of `exp(−γ)` for rational γ.

use super::BitSource;
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

/// Bernoulli(`num/(den·k)`) for `num < den < 2⁶⁴` and `1 ≤ k < 2⁴⁸`: the chunked
/// comparison of [`bernoulli_ratio_bits`] specialised to 64-bit operands.
#[inline(always)]
fn bernoulli_ratio_scaled<R: CryptoRng + ?Sized>(
    bits: &mut BitSource<'_, R>,
    num: u64,
    den: u64,
    k: u64,
) -> bool {
    let u = bits.bits(CHUNK);
    let divisor = k as u128 * den as u128;
    let product = (u * k) as u128 * den as u128;
    let target = (num as u128) << CHUNK;
    if product + divisor <= target {
        true
    } else if product >= target {
        false
    } else {
        bernoulli_ratio_bitwise(bits, target - product, divisor)
    }
}

/// Bernoulli(`exp(−num/den)`) for `num ≤ den < 2⁶⁴`: the 64-bit form of
/// [`bernoulli_exp_neg_at_most_one`].
#[inline]
pub(crate) fn bernoulli_exp_neg_u64<R: CryptoRng + ?Sized>(
    bits: &mut BitSource<'_, R>,
    num: u64,
    den: u64,
) -> bool {
    debug_assert!(num <= den);
    // The cap keeps `u·k` within 64 bits; reaching it has probability below
    // 1/(2⁴⁷)!, so it never alters the distribution in any observable way.
    let mut k: u64 = 1;
    while k < 1 << 47 && bernoulli_ratio_scaled(bits, num, den, k) {
        k += 1;
    }
    k % 2 == 1
}

/// Bernoulli(`exp(−num/den)`) for `num ≤ den` — Canonne, Kamath & Steinke (2020),
/// Algorithm 1: draw `A_k ~ Bernoulli(γ/k)` for `k = 1, 2, …` until the first failure
/// and accept when that `k` is odd. `Pr[accept] = Σ_k odd (γ^(k−1)/(k−1)! − γ^k/k!) = e^−γ`.
/// Expected number of trials: `e^γ ≤ e`.
#[inline]
fn bernoulli_exp_neg_at_most_one<R: CryptoRng + ?Sized>(
    bits: &mut BitSource<'_, R>,
    num: u128,
    den: u128,
) -> bool {
    if num == 0 {
        return true;
    }
    if den <= u64::MAX as u128 {
        return bernoulli_exp_neg_u64(bits, num as u64, den as u64);
    }
    let mut k: u128 = 1;
    while bernoulli_ratio_bits(bits, num, den.saturating_mul(k)) {
        k += 1;
    }
    k % 2 == 1
}

/// Bernoulli(`exp(−num/den)`) for any rational `num/den ≥ 0` (CKS20 Algorithm 1):
/// `exp(−γ) = exp(−1)^⌊γ⌋ · exp(−(γ − ⌊γ⌋))`, each factor an independent trial,
/// stopping at the first failure. Expected cost at most `e/(1 − 1/e) + e ≈ 7` rational
/// trials for any γ.
#[inline]
pub(crate) fn bernoulli_exp_neg_bits<R: CryptoRng + ?Sized>(
    bits: &mut BitSource<'_, R>,
    num: u128,
    den: u128,
) -> bool {
    if num <= den {
        return bernoulli_exp_neg_at_most_one(bits, num, den);
    }
    let (whole, fraction) = (num / den, num % den);
    let mut i: u128 = 0;
    while i < whole {
        if !bernoulli_exp_neg_at_most_one(bits, 1, 1) {
            return false;
        }
        i += 1;
    }
    bernoulli_exp_neg_at_most_one(bits, fraction, den)
}

/// Trials of CKS20 Algorithm 1 whose 8-bit thresholds are precomputed.
const TABLE_TRIALS: usize = 8;

/// Bernoulli(`exp(−num/den)`) for a **fixed** `num ≤ den < 2⁶⁴`, with the 8-bit
/// thresholds `T_k = ⌊2⁸·num/(k·den)⌋` of the first trials of CKS20 Algorithm 1
/// computed once: a trial is then one table comparison (`u < T_k`: success; `u > T_k`:
/// failure), and only `u = T_k` (probability 2⁻⁸) completes the comparison exactly with
/// further bits. Same distribution as [`bernoulli_exp_neg_u64`], fewer multiplications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FixedExpNeg {
    num: u64,
    den: u64,
    thresholds: [u16; TABLE_TRIALS],
}

impl FixedExpNeg {
    /// Precomputes the thresholds for `γ = num/den ≤ 1`.
    pub(crate) fn new(num: u64, den: u64) -> Self {
        debug_assert!(num <= den && den > 0);
        let mut thresholds = [0u16; TABLE_TRIALS];
        for (j, t) in thresholds.iter_mut().enumerate() {
            let divisor = (j as u128 + 1) * den as u128;
            *t = (((num as u128) << CHUNK) / divisor) as u16; // ≤ 2⁸
        }
        Self { num, den, thresholds }
    }

    /// One trial.
    #[inline]
    pub(crate) fn sample<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> bool {
        let mut k: u64 = 1;
        for &threshold in &self.thresholds {
            let u = bits.bits(CHUNK) as u16;
            let success = if u != threshold {
                u < threshold
            } else {
                let divisor = k as u128 * self.den as u128;
                let remainder = ((self.num as u128) << CHUNK) - threshold as u128 * divisor;
                // remainder = 0: the chunk's interval starts exactly at p, so V ≥ p.
                remainder != 0 && bernoulli_ratio_bitwise(bits, remainder, divisor)
            };
            if !success {
                return k % 2 == 1;
            }
            k += 1;
        }
        // Beyond the table (probability ≤ 1/8!): the general trials.
        while k < 1 << 47 && bernoulli_ratio_scaled(bits, self.num, self.den, k) {
            k += 1;
        }
        k % 2 == 1
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
pub fn bernoulli_ratio<R: CryptoRng + ?Sized>(rng: &mut R, num: u128, den: u128) -> Result<bool, Error> {
    check_ratio(den)?;
    Ok(bernoulli_ratio_bits(&mut BitSource::new(rng), num, den))
}

/// An exact Bernoulli trial with success probability `exp(−num/den)`.
///
/// ```
/// use dpmech::sampling::bernoulli_exp_neg;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let accepted = bernoulli_exp_neg(&mut ChaCha20Rng::seed_from_u64(3), 1, 2)?; // p = e^(-1/2)
/// # let _ = accepted;
/// # Ok::<(), dpmech::Error>(())
/// ```
pub fn bernoulli_exp_neg<R: CryptoRng + ?Sized>(rng: &mut R, num: u128, den: u128) -> Result<bool, Error> {
    check_ratio(den)?;
    if den > u64::MAX as u128 {
        return Err(Error::InvalidParameter {
            name: "den",
            value: den as f64,
            reason: "the denominator of gamma must fit in 64 bits",
        });
    }
    Ok(bernoulli_exp_neg_bits(&mut BitSource::new(rng), num, den))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    /// The table form makes the same decision from the same bits as the multiplying
    /// form, so with one seed the two produce identical sequences — including γ = 1,
    /// γ with an exactly representable threshold (1/2), and tiny γ.
    #[test]
    fn fixed_table_trials_equal_the_general_trials_bit_for_bit() {
        for (num, den) in [
            (1u64, 1u64),
            (1, 2),
            (7, 10),
            (1, 3),
            (1, 1 << 40),
            ((1 << 40) - 1, 1 << 40),
        ] {
            let table = FixedExpNeg::new(num, den);
            let (mut a, mut b) = (
                ChaCha20Rng::seed_from_u64(num ^ den),
                ChaCha20Rng::seed_from_u64(num ^ den),
            );
            let (mut bits_a, mut bits_b) = (BitSource::new(&mut a), BitSource::new(&mut b));
            for i in 0..20_000 {
                assert_eq!(
                    table.sample(&mut bits_a),
                    bernoulli_exp_neg_u64(&mut bits_b, num, den),
                    "γ = {num}/{den}, draw {i}"
                );
            }
        }
    }
}
