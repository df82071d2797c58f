//! The one-sided geometric distribution `Pr[G = k] = (1 − α)·αᵏ`, `α = exp(−1/τ)`.

use super::bernoulli::{FixedExpNeg, bernoulli_exp_neg_bits, bernoulli_exp_neg_u64};
use super::{BitSource, Rational};
use rand_core::CryptoRng;

/// Exact sampler of `Pr[G = k] = (1 − α)·αᵏ` for `k ≥ 0`, `α = exp(−1/τ)`, for a
/// rational scale `τ > 0`.
///
/// **Algorithm.** Write `G = q·M + r` with `M = 2ᵐ` the largest power of two
/// `≤ 0.7·τ` (`M = 1` for smaller `τ`). Then `q` and `r` are independent:
/// `q ~ Geometric(α^M)` is the number of successes of Bernoulli(`exp(−M/τ)`) before the
/// first failure, and `r ∈ {0, …, M−1}` has `Pr[r] ∝ α^r`, drawn as `m` uniform bits
/// accepted with Bernoulli(`exp(−r/τ)`). Every trial is an exact
/// Bernoulli(`exp(−γ)`) of Canonne, Kamath & Steinke (2020, Algorithm 1) with a
/// rational γ ≤ 1 (or `⌈γ⌉` such trials for `τ < 1`), so the output distribution is
/// exact; no floating point is involved. This is the blocked form of CKS20
/// Algorithm 2 with the block length a power of two, so the uniform part costs bits
/// rather than a rejection-sampled integer.
///
/// **Cost.** With `c = M/τ ∈ (0.35, 0.7]` the proposal for `r` is accepted with
/// probability `(1 − e^(−c))/c ≥ 0.72`; a sample takes about six Bernoulli trials of
/// 8 bits each (see [`bernoulli_ratio`](super::bernoulli_ratio)) plus `m` bits per
/// proposal of `r`: under two 64-bit words at `τ ≈ 2⁴⁰`.
///
/// **Timing.** The number of loop iterations is random and correlated with the output
/// (larger `q` takes longer), so the running time leaks information about the sample
/// (Jin et al. 2022). Do not expose timing of a single release to an adversary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometric {
    scale: Rational,
    block_bits: u32,
    /// Bernoulli(`exp(−M/τ)`), the block trial (used when `τ ≥ 1`).
    block_trial: FixedExpNeg,
}

impl Geometric {
    /// The geometric distribution with `α = exp(−1/scale)`.
    pub fn new(scale: Rational) -> Self {
        // M = the largest power of two ≤ 0.7·τ (M = 1 below that): the expected number
        // of Bernoulli trials, e^c/(1 − e^−c) + e^c with c = M/τ ∈ (0.35, 0.7], stays
        // within 4% of its minimum (≈ 5.85 at c ≈ 0.5).
        let scaled = (scale.num() as u128 * 7) / (scale.den() as u128 * 10);
        let block_bits = if scaled == 0 {
            0
        } else {
            127 - scaled.leading_zeros()
        };
        // For τ ≥ 1, M·den ≤ num; for τ < 1 the block trial is unused.
        let block_num = (1u64 << block_bits).saturating_mul(scale.den()).min(scale.num());
        Self {
            scale,
            block_bits,
            block_trial: FixedExpNeg::new(block_num, scale.num()),
        }
    }

    /// The scale τ (`α = exp(−1/τ)`).
    pub fn scale(&self) -> Rational {
        self.scale
    }

    /// One sample, from a bit source.
    #[inline]
    pub fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> u128 {
        let (num, den) = (self.scale.num(), self.scale.den());
        if num < den {
            return self.sample_small_scale(bits);
        }
        // τ ≥ 1: every γ below is at most 1 and fits in 64 bits (block·den ≤ num).
        let block = 1u64 << self.block_bits;
        let mut blocks: u128 = 0;
        while self.block_trial.sample(bits) {
            blocks += 1;
        }
        let remainder = loop {
            let candidate = bits.bits(self.block_bits);
            if bernoulli_exp_neg_u64(bits, candidate * den, num) {
                break candidate;
            }
        };
        blocks.saturating_mul(block as u128) + remainder as u128
    }

    /// τ < 1: `G` counts successes of Bernoulli(`exp(−1/τ)`), γ = `den/num` > 1.
    fn sample_small_scale<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> u128 {
        let (num, den) = (self.scale.num() as u128, self.scale.den() as u128);
        let mut count: u128 = 0;
        while bernoulli_exp_neg_bits(bits, den, num) {
            count += 1;
        }
        count
    }

    /// One sample (saturating at `u64::MAX`, a probability below `2^-60` event for any
    /// supported scale).
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> u64 {
        let value = self.sample_bits(&mut BitSource::new(rng));
        u64::try_from(value).unwrap_or(u64::MAX)
    }
}
