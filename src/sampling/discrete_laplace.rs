//! The discrete Laplace (two-sided geometric) distribution
//! `Pr[Z = z] = (1 − α)/(1 + α) · α^|z|`, `α = exp(−1/τ)`, sampled exactly with a number
//! of random words that is independent of the sample, and **nothing certified built per
//! scale**: the certified tables belong to a fixed ladder of reference scales shared by
//! every τ (`discrete_laplace/ladder.rs`), and a scale adds a rung index and two rates
//! computed by a few integer divisions (about 0.1 µs measured).
//!
//! ## Algorithm
//!
//! Rejection from a reference law that is never lighter than the target. The ladder's
//! rungs are the reference scales `q̂ = p/64`, `p = (16 + i)·2ʲ` (`i < 16`, `j < 8`) and
//! `p = 4096`: 129 rungs from `1/4` to `64`, consecutive ones at most `17/16` apart; each
//! has certified tables of `ρ = exp(−1/q̂)` (built on first use, once per process, like
//! the discrete Gaussian's shared proposal). With `M = 2ᵐ` (`M = 1` up to `τ = 64`;
//! above, the largest power of two with `t = τ/M > 32`, so `t ∈ (32, 64]`) and `t = τ/M`,
//! a scale uses the lowest rung `q̂ ≥ t` (so `q̂ < 17t/16`, or `q̂ = 1/4` for `t < 1/4`).
//!
//! * **`M = 1` (`τ ≤ 64`): the magnitude.** The trial's first word is the sign (top
//!   bit) and 63 bits inverted in the rung's table of `Pr[|Ẑ| ≥ c] = 2ρᶜ/(1 + ρ)`
//!   (`c ≥ 1`); the candidate `±c` is accepted with probability `exp(−E)`,
//!   `E = c·(1/τ − 1/q̂) ≥ 0`, by a uniform `V` (a second word). The accepted mass of
//!   `z` is `(1 − ρ)/(1 + ρ)·ρ^|z|·α^|z|/ρ^|z| ∝ α^|z|`: **exactly** the discrete
//!   Laplace; a zero ignores the sign. When `τ` is itself a rung (every integer up to
//!   32, and many more) `E = 0`: one word, no rejection.
//! * **`M ≥ 2` (`τ > 64`): blocks.** `Z = ±(J·M + R)` with a fair sign, `J` from the
//!   rung's table of `Pr[J ≥ j] = ρʲ` and `R` uniform on `[0, M)`, accepted with
//!   probability `exp(−E)`, `E = J·(1/t − 1/q̂) + R/τ ≥ 0`; the pair (negative, 0),
//!   which would count 0 twice, is rejected (Canonne, Kamath & Steinke 2020,
//!   Algorithm 2, with a blocked geometric). The accepted mass of `y = JM + R` is
//!   `(1 − ρ)ρᴶ/M · α^y/ρᴶ ∝ α^y`: exact.
//!
//! The words are laid out by `m` alone (the one-sided table reads the 54 bits 62…9 of
//! the first word; the sign is bit 63):
//!
//! | `m` | first word | second word | third word |
//! |---|---|---|---|
//! | 0, `τ` a rung | sign, magnitude (63 bits) | — | — |
//! | 0 | sign, magnitude (63 bits) | `V` (64 bits) | — |
//! | `1 … 22` | sign, `J` (54 bits) | `R` (low `m` bits), `V` (`64 − m ≥ 42` bits) | — |
//! | `23 … 31` | sign, `J`, low `m − 22` bits of `R` | rest of `R` (22 bits), `V` (42 bits) | — |
//! | `≥ 32` | sign, `J` | `R` | `V` (64 bits) |
//!
//! **The acceptance exponent** is an exact rational,
//! `E = (J·(den′·p − 64·num) + R·den·p)/(num·p)` with `τ = num/den`, `den′ = den·M`
//! (`J` is `c` when `M = 1`). Per scale two rates are precomputed in floating binary
//! point, `Q = ⌊2ˢ·n/d⌋ ∈ [2⁶³, 2⁶⁴)` for `n/d = 1/t − 1/q̂` and for `1/τ` (a binary
//! long division each); a trial's bracket is `e = ⌊J·Q₁·2^(63−s₁)⌋ + ⌊R·Q₂·2^(63−s₂)⌋`,
//! and since `2^(63−s) ≤ n/d` each term is within `x·n/d + 1` of its exact value, so
//! `e ≤ 2⁶³·E < e + E + 2 < e + 68` below the cap `2⁶³·E < 2⁶⁹` (above, `exp(−E) < 2⁻⁹²`
//! and the bracket is `[2⁶⁹, 2⁶⁹]`). The certified 64-bit `exp` of `fixed_exp` (shared
//! tables, constant work: a lower bound `lo` of `2⁶⁴·exp(−e/2⁶³)` from six table
//! factors, `≤ lo + W′`, `W′ ≤ 64`) turns the bracket into a band `[lo − 2·68, lo + W′)`
//! of at most 200 values of `V` that it does not decide (`exp(−68/2⁶³) ≥ 1 − 68/2⁶³`);
//! `V` outside it is decided by one integer comparison, inside it by exact comparisons
//! of `V`, extended with further words, with enclosures of `exp(−E)` for the exact `E`.
//!
//! **Block scales** (`M ≥ 2`) bracket `2⁵⁷·E` in 64 bits instead, for every `J < 2¹²`
//! (every `J` a table look-up returns outside the fallback event): with
//! `D = ⌊2⁶⁹·(1/t − 1/q̂)⌋` and `C = ⌊2^(57+m)/τ⌋` (shifts of `Q₁` and `Q₂`, exact
//! floors, both below `2⁶⁰` since `1/t − 1/q̂ < 1/(17t) < 2⁻⁹`),
//! `e = ⌊J·2⁵²·D/2⁶⁴⌋ + ⌊R·2^(64−m)·C/2⁶⁴⌋`: two 64×64-bit products (high words), each
//! term less than 2 below its exact value, so `e ≤ 2⁵⁷·E < e + 4 < 2⁶¹`. The band is
//! `[lo − 2⁹, lo + W′)`, `lo` the lower bound of `2⁶⁴·exp(−e/2⁵⁷)`
//! (`2⁶⁴·exp(−4/2⁵⁷) > 2⁶⁴ − 2⁹`): at most 576 values of `V`. The decisions are the
//! same exact comparisons, so the values drawn for given words do not depend on which
//! bracket is used (only how often the exact comparison runs).
//!
//! The tables hold **certified** 64-bit bounds of the thresholds, computed once per rung
//! with integer interval arithmetic (192 fractional bits, outward rounding); a word
//! strictly outside every threshold's bounds is decided by integer comparisons alone,
//! otherwise the uniform is extended and compared exactly. No floating point is
//! involved anywhere.
//!
//! ## Draw independence
//!
//! Every trial draws exactly [`words_per_trial`](DiscreteLaplace::words_per_trial)
//! words (1, 2 or 3, a function of τ alone) before anything else, outside the fallback
//! event `F` ("some comparison needed more words"). The trials are i.i.d. and the first
//! accepted one is returned, so the number of trials `N` is independent of the accepted
//! value (as in any rejection sampler with i.i.d. trials): outside `F`, the number of
//! words drawn is `N·words_per_trial`, statistically independent of `Z`.
//!
//! ## Acceptance and fallback bounds
//!
//! A trial is accepted with probability
//! `tanh(1/(2q̂))/tanh(1/(2τ)) ≥ 16/17` for `M = 1` (`tanh(ax) ≤ a·tanh(x)` for `a ≥ 1`;
//! `≥ tanh 2 > 0.96` below `τ = 1/4`), and
//! `(1 − ρ)(1 + α)/(2M(1 − α)) ≥ t(1 − e^(−1/q̂))·(1 + α)/2 ≥ (16/17)(1 − 1/64)·0.992 > 0.919`
//! for `M ≥ 2`: `E[N] < 1.09`. A table entry leaves at most two values of its word
//! undecided (asserted in tests). The two-sided table (63-bit words) has at most
//! `⌈63·ln 2·64⌉ + 1 = 2797` entries, the one-sided (54-bit words) at most
//! `⌈54·ln 2·64⌉ + 1 = 2397`; `V`, known to `ℓ ≥ 42` bits, is undecided with probability
//! at most `(576 + 2^(65−ℓ))/2⁶⁴ ≤ 2⁻⁴⁰·⁹⁹⁹`. So a trial falls back with probability
//! below `2·2797/2⁶³ + 2⁻⁵⁵ < 2⁻⁵⁰` for `M = 1`, and below
//! `2·2397/2⁵⁴ + 2⁻⁴⁰·⁹⁹⁹ < 2⁻⁴⁰·³²` for `M ≥ 2`; a sample, with `E[N] < 1.09`, below
//! `2⁻⁴⁰·²` at every scale (the tests recompute these from the tables).
//!
//! ## Cost
//!
//! Construction: the rung (a few integer operations), two rates (binary long division,
//! about 200 steps in all) and, the first time a rung is used in a process, its table
//! (at most 2797 certified thresholds, about a millisecond; at most `2·129` tables, so
//! memory is bounded whatever the number of distinct scales: 10.9 MB with every table
//! of both kinds built, 1.3 MB for the 16 one-sided rungs that serve every `τ > 64`,
//! measured in the tests). A trial: one guide-table
//! look-up, two 64×64-bit products for the exponent, five table reads and five products
//! for the certified `exp`, two comparisons; about 260 instructions per sample at
//! `τ = 10⁶` with the two ChaCha20 words (callgrind), of which about 65 generate the
//! words.

mod ladder;
#[cfg(test)]
mod tests;

use super::{BitSource, Rational};
use ladder::Scaled;
pub(super) use ladder::{RUNGS, rung_at_least, rung_numerator};
use rand_core::CryptoRng;
use std::sync::Arc;

/// Exact sampler of the discrete Laplace distribution with rational scale `τ = num/den`
/// (any `num, den ≥ 1`, so `2⁻⁶⁴ < τ < 2⁶⁴`):
/// `Pr[Z = z] = (1 − α)/(1 + α) · α^|z|` for every integer `z`, `α = exp(−1/τ)`.
///
/// The output distribution is **exact**: integer arithmetic only, a rejection sampler
/// whose reference law comes from certified tables shared by every scale (a ladder of
/// 129 reference scales, each table built once per process) and whose acceptance is a
/// certified one-word Bernoulli(`exp(−E)`) trial with an exact fallback. Construction
/// computes a few integers (no certified arithmetic), so a sampler for a scale never
/// seen before costs a fraction of a microsecond (the first sampler on a rung in a
/// process also builds that rung's table, at most about a millisecond, once). Every
/// trial draws
/// [`words_per_trial`](Self::words_per_trial) words (1, 2 or 3, a function of `τ`
/// alone), `E[N] < 1.09` trials; the number of words drawn is independent of the sample
/// except on a fallback event of probability below `2⁻⁴⁰` per sample. The module source
/// states the algorithm and proves these bounds.
///
/// ```
/// use dpmech::sampling::{DiscreteLaplace, Rational};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let noise = DiscreteLaplace::new(Rational::new(10, 1)?); // scale 10: a rung, one word
/// let z = noise.sample(&mut ChaCha20Rng::seed_from_u64(5));
/// assert_eq!(noise.words_per_trial(), 1);
/// # let _ = z;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Clone)]
pub struct DiscreteLaplace {
    scale: Rational,
    /// Shared, so that the mechanisms holding a sampler stay small (one pointer).
    law: Arc<Scaled>,
}

impl core::fmt::Debug for DiscreteLaplace {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DiscreteLaplace")
            .field("scale", &self.scale)
            .field("words_per_trial", &self.words_per_trial())
            .finish()
    }
}

impl PartialEq for DiscreteLaplace {
    fn eq(&self, other: &Self) -> bool {
        self.scale == other.scale && self.law.two_sided == other.law.two_sided
    }
}

impl Eq for DiscreteLaplace {}

/// Where [`DiscreteLaplace::sample_batch`] puts its samples, by index.
pub(crate) trait BatchSink {
    /// Sample `i`, of any size.
    fn wide(&mut self, i: usize, z: i128);
}

/// Samples saturated to `i64`, by index.
struct Saturated<'a>(&'a mut [i64]);

impl BatchSink for Saturated<'_> {
    #[inline(always)]
    fn wide(&mut self, i: usize, z: i128) {
        self.0[i] = saturate_i64(z);
    }
}

/// Clamps an `i128` into the `i64` range.
#[inline]
pub(crate) fn saturate_i64(value: i128) -> i64 {
    let low = value as i64;
    if i128::from(low) == value {
        low
    } else if value < 0 {
        i64::MIN
    } else {
        i64::MAX
    }
}

impl DiscreteLaplace {
    /// The discrete Laplace distribution of scale `τ` (`α = exp(−1/τ)`): a rung of the
    /// shared ladder and two rates, computed by integer arithmetic (no table is built
    /// for `τ`; the rung's table is built once per process on its first use).
    pub fn new(scale: Rational) -> Self {
        Self {
            scale,
            law: Arc::new(Scaled::new(scale, true)),
        }
    }

    /// The one-sided trials of `τ` at every scale (`OneSidedGeometric`): `M = 1` uses
    /// the one-sided table too, so that a trial's magnitude is a geometric candidate.
    pub(crate) fn one_sided(scale: Rational) -> Self {
        Self {
            scale,
            law: Arc::new(Scaled::new(scale, false)),
        }
    }

    /// The number of certified ladder tables built so far in this process (each at most
    /// once; at most 258 whatever the number of scales). A diagnostic for benches and
    /// tests: constructing a sampler for a new scale builds a table only when its rung
    /// was never used before.
    pub fn ladder_tables_built() -> u64 {
        ladder::tables_built()
    }

    /// The scale τ.
    pub fn scale(&self) -> Rational {
        self.scale
    }

    /// The number of 64-bit words each trial draws, a function of the scale alone: 1
    /// when `τ ≤ 64` is itself a reference scale of the ladder (e.g. every integer up to
    /// 32), 2 up to `τ = 2³⁷` (`m ≤ 31`), 3 above. A sample draws `N` times this many
    /// (outside the fallback event), `N ≥ 1` independent of the sample, `E[N] < 1.09`.
    pub fn words_per_trial(&self) -> usize {
        self.law.words as usize
    }

    /// One sample, saturating to the `i64` range.
    #[inline]
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        saturate_i64(self.sample_inlined(&mut BitSource::new(rng)))
    }

    /// Fills `out` with independent samples (saturating to `i64`): the distribution of
    /// [`sample`](Self::sample) called `out.len()` times, drawing the same words.
    pub fn sample_into<R: CryptoRng + ?Sized>(&self, out: &mut [i64], rng: &mut R) {
        self.sample_batch(out.len(), &mut Saturated(out), &mut BitSource::new(rng));
    }

    /// One sample, from a bit source, as an `i128`. Draws whole words
    /// ([`BitSource::word`]); buffered bits are left untouched.
    #[inline]
    pub fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        self.sample_inlined(bits)
    }

    /// [`sample_bits`](Self::sample_bits), always inlined: for samplers that draw a
    /// discrete Laplace proposal in their own loop.
    #[inline(always)]
    pub(crate) fn sample_inlined<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        let law = &*self.law;
        if law.words == 1 && law.two_sided {
            // A rung: the trial is the sample (no acceptance, no rejection).
            let word = bits.word();
            let magnitude = i128::from(law.table.sample(word & (u64::MAX >> 1), bits));
            let mask = -i128::from(word >> 63);
            return (magnitude ^ mask) - mask;
        }
        loop {
            let (accepted, negative, magnitude) = self.trial(bits);
            // No branch on the sign or the value: one test of the combined condition.
            let reject = !accepted | (negative & (magnitude == 0) & !law.two_sided);
            if !reject {
                // A trial's magnitude is below 2¹²⁷ (`trial`): no overflow.
                let magnitude = magnitude as i128;
                // Two's complement negation when `negative`, branch-free; a two-sided
                // zero stays 0 whatever its sign.
                let mask = -i128::from(negative);
                return (magnitude ^ mask) - mask;
            }
        }
    }

    /// `n` independent samples, handed to `sink` by index ([`BatchSink::wide`]).
    #[inline]
    pub(crate) fn sample_batch<R: CryptoRng + ?Sized>(
        &self,
        n: usize,
        sink: &mut impl BatchSink,
        bits: &mut BitSource<'_, R>,
    ) {
        for i in 0..n {
            sink.wide(i, self.sample_inlined(bits));
        }
    }

    /// One sample handed to `sink` as sample 0.
    #[inline(always)]
    pub(crate) fn sample_one<R: CryptoRng + ?Sized>(
        &self,
        sink: &mut impl BatchSink,
        bits: &mut BitSource<'_, R>,
    ) {
        sink.wide(0, self.sample_inlined(bits));
    }

    /// One trial: whether it is accepted (before the sign's rejection), the sign and
    /// the magnitude (`c`, or `G = J·M + R`), all fixed words drawn first.
    #[inline(always)]
    pub(crate) fn trial<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> (bool, bool, u128) {
        let law = &*self.law;
        let first = bits.word();
        let second = if law.words >= 2 { bits.word() } else { 0 };
        let third = if law.words >= 3 { bits.word() } else { 0 };
        let negative = first >> 63 == 1;
        // Bits 62…0 for the two-sided table, 62…9 for the one-sided one.
        let j = law
            .table
            .sample((first & (u64::MAX >> 1)) >> law.table_shift, bits);
        let (r, word) = law.layout(first, second, third);
        let accepted = law.words == 1 || law.accept(j, r, word, bits);
        // j < 2⁶⁴ and m ≤ 63, r < 2ᵐ: J·M + R < 2¹²⁷.
        (
            accepted,
            negative,
            // J·M by one 64×64-bit product (a shift by a variable count is several
            // instructions on a 128-bit integer), R < M added.
            u128::from(j) * u128::from(law.block) + u128::from(r),
        )
    }
}
