//! The discrete Laplace (two-sided geometric) distribution
//! `Pr[Z = z] = (1 − α)/(1 + α) · α^|z|`, `α = exp(−1/τ)`, sampled exactly with a number
//! of random words that is independent of the sample.
//!
//! The type, [`DiscreteLaplace`], comes first; the rest of the file is in four layers,
//! from the API down to the tables (a batch falls back on single samples, so the
//! batch path also calls `sample_inlined`):
//!
//! | layer | entry points |
//! |---|---|
//! | public sampling | `new`, `scale`, `words_per_trial`, `sample`, `sample_into`, `sample_bits`; `sample_inlined` (the crate's own rejection loops) |
//! | batch path | `sample_batch`, `sample_one` (the releases of `Laplace` and `Geometric`), [`BatchSink`]; inside: `sample_two_word_batch`, `FastTwoWord::decide`, `finish_trial` |
//! | one trial | `small_scale_sample` (`τ < 16`), `trial` (for `OneSidedGeometric`), `accepted_trial`; inside: `trial_words`, `trial_from`, `decode_trial` |
//! | tables | `Tables`: the certified tables of one scale, built once and cached; `combine`, `powers_width`, `low_bits` |
//!
//! The file is longer than the crate's usual ~700 lines of non-test code for a reason:
//! more than a third of those lines are documentation (this module doc with the
//! proofs, ~110 lines, and the items' docs), and the four layers share the private
//! `Tables` and `Trial`, so splitting them would only widen their visibility. The
//! certified arithmetic they rest on is in `certified/`.
//!
//! ## Algorithm
//!
//! Two regimes, both by inversion of certified cumulative-distribution
//! tables (CDT: a count of the thresholds of a decreasing sequence above one uniform
//! real `U`):
//!
//! * **`τ < 16`: one word, no rejection.** The top bit of the word is the sign, the
//!   other 63 bits give `|Z|` from the table of `Pr[|Z| ≥ c] = 2αᶜ/(1 + α)`, `c ≥ 1`
//!   (so `Pr[Z = 0] = (1 − α)/(1 + α)` and `Pr[Z = ±k] = (1 − α)αᵏ/(1 + α)`); the sign
//!   of a zero is ignored.
//! * **`τ ≥ 16`.** `Z = ±G` with a fair sign and `G` one-sided geometric,
//!   `Pr[G = g] = (1 − α)αᵍ`; the pair (negative, 0), which would count 0 twice, is
//!   rejected and the whole trial repeated (Canonne, Kamath & Steinke 2020, Algorithm
//!   2; this is **not** the `sign × geometric` sampler, which puts mass 1 − α on 0).
//!   `G = M·Q + R` with `M = 2ᵐ` the largest power of two `≤ τ/32` (`M = 1`, `G = Q`,
//!   below `τ = 64`). `Q` and `R` are independent: `Pr[Q ≥ j] = α^(jM)`, by inversion of
//!   a table read with bits of the trial's first word (its top bit is the sign); and
//!   `R ∈ [0, M)` with `Pr[R = r] ∝ αʳ`, by **rejection**: `R` is `m` uniform bits,
//!   accepted with probability `αᴿ ≥ exp(−1/32)` (else the whole trial is repeated), so
//!   an accepted `R` has exactly the law `∝ αʳ`. The acceptance compares a uniform `V`
//!   with `αᴿ = Πⱼ aⱼ^(dⱼ)` (`dⱼ` the bytes of `R`, `aⱼ = α^(2⁸ʲ)`), a product of
//!   `⌈m/8⌉` certified 64-bit entries of per-scale power tables. The words are laid out
//!   by `m` alone:
//!
//!   | `m` | first word | second word | third word |
//!   |---|---|---|---|
//!   | `≤ 22` | sign, `Q` (63 bits) | `R` (low `m` bits), `V` (`64 − m ≥ 42` bits) | — |
//!   | `23 … 31` | sign, `Q` (`85 − m ≥ 54` bits), low `m − 22` bits of `R` | rest of `R` (22 bits), `V` (42 bits) | — |
//!   | `≥ 32` | sign, `Q` (63 bits) | `R` | `V` (64 bits) |
//!
//! The tables hold **certified** 64-bit bounds of the thresholds and powers, computed
//! at construction with integer interval arithmetic (128 or 192 fractional bits,
//! outward rounding; `exp(−x)` by the alternating Taylor series and binary powering of
//! an enclosure of `e⁻¹`). When the word lies strictly outside the bounds of every
//! threshold, and `V` outside the enclosure of `αᴿ`, everything is decided by integer
//! comparisons alone (fast path). Otherwise that uniform is extended with further
//! words and compared exactly with enclosures refined to its length plus 64 bits,
//! until decided. No floating point is involved anywhere; the output distribution is
//! **exactly** the discrete Laplace distribution.
//!
//! ## Draw independence
//!
//! Below `τ = 16` a sample draws exactly one word (outside the
//! fallback event `F`, "some comparison needed more words"). Above, every trial draws
//! exactly [`words_per_trial`](DiscreteLaplace::words_per_trial) words (1 below `τ = 64`, 2 while
//! `m ≤ 31`, 3 above) before anything else; the number of trials `N` is geometric
//! (rejections: the sign's, probability `(1 − α)/2`, and `R`'s) and, as in any
//! rejection sampler with i.i.d. trials, **independent of the accepted value**. So,
//! outside `F`, the number of words drawn is `N·words_per_trial`, statistically
//! independent of `Z`.
//!
//! ## Fallback bound
//!
//! A table entry leaves at most two values of its word undecided
//! (its enclosure is narrower than one unit of the word; asserted at construction in
//! tests). Below `τ = 16` the magnitude table has at most
//! `⌈τ·(63·ln 2 + ln 2)⌉ + 1 ≤ 712` entries, so a sample falls back with probability
//! `≤ 2·712/2⁶³ < 2⁻⁵²`. Above, the `Q` table read with `w` bits has at most
//! `⌈w·ln 2·τ/M⌉ + 1` entries (`τ/M < 64`): at most 2796 for `w = 63`, so its word falls
//! back with probability `≤ 2·2796/2⁶³ < 2⁻⁵⁰`, and at most 2397 for `w = 54` (the
//! narrowest, `m = 31`): `≤ 2·2397/2⁵⁴ < 2⁻⁴¹·⁷⁷`. The enclosure of `αᴿ` is at most
//! `W ≤ 5⌈m/8⌉ − 2 ≤ 38` units of `2⁻⁶⁴` wide (each power entry at most 3, and a product
//! at most the sum of its factors' widths plus 2; both checked in tests), so `V`, known
//! to `ℓ` bits, is undecided with probability `≤ (W + 2^(65−ℓ))/2⁶⁴`: `< 2⁻⁴²·⁹` for
//! `m ≤ 20` (`ℓ = 64 − m`), `< 2⁻⁴⁰·⁹⁹` for `ℓ = 42`, `< 2⁻⁵⁸` with a word of its own.
//! A trial succeeds with probability at least `exp(−1/32)·(1 − 1/32) > 0.93`, so
//! `E[N] < 1.07` (and `E[N] < 1.032` from `m = 23` on, where `(1 − α)/2 < 2⁻²⁸`). By the
//! union bound a sample falls back with probability `Pr[F] < 2⁻⁴²·⁷` for `m ≤ 20` and
//! `m ≥ 32`, `Pr[F] < 1.07·(2⁻⁵⁰ + 2⁻⁴⁰·⁹⁹) < 2⁻⁴⁰·⁸⁸` for `m = 21, 22`, and
//! `Pr[F] < 1.032·(2⁻⁴¹·⁷⁷ + 2⁻⁴⁰·⁹⁹) < 2⁻⁴⁰·²⁸` for `23 ≤ m ≤ 31` (the two-word layouts
//! that spend `V`'s 42 bits and `Q`'s 54 to 62 bits); so below `2⁻⁴⁰` at every scale.
//!
//! ## Batches
//!
//! [`sample_into`](DiscreteLaplace::sample_into) (and the `release_slice` of
//! [`Laplace`](crate::Laplace) and [`Geometric`](crate::Geometric)) draw the first
//! trial of many samples in one call and decide them together; same distribution, same
//! guarantee.
//!
//! ## Cost
//!
//! One word per sample below `τ = 16`; above, one (`τ < 64`), two
//! (`τ < 2³⁷`, e.g. `τ = 10⁶` or the `τ ≈ 2³⁶` of [`Laplace`](crate::Laplace)) or three
//! words per trial and `E[N] ≤ 1.07` trials (`≤ 1.04` from `τ = 64` on). In the `Q`
//! table a guide-table lookup (one bucket read, then one lower bound and two candidate
//! upper bounds read together and two comparisons, the same for every word); for `R`,
//! `⌈m/8⌉` table reads and `⌈m/8⌉ − 1` products of 64-bit lower bounds.
//! Construction computes the tables (at most `2·712` or `2796` certified thresholds and
//! `⌈m/8⌉·256` powers).

use super::certified::{Big, Cdt, GuideView, LazyUniform, Threshold, exact_less_exp_neg, exp_neg};
use super::fixed_exp::{BUILD_BITS, Entry, powers};
use super::{BitSource, Rational, TableCache, cached};
use rand_core::CryptoRng;
use std::sync::{Arc, OnceLock};

/// Exact sampler of the discrete Laplace distribution with rational scale `τ = num/den`
/// (any `num, den ≥ 1`, so `2⁻⁶⁴ < τ < 2⁶⁴`):
/// `Pr[Z = z] = (1 − α)/(1 + α) · α^|z|` for every integer `z`, `α = exp(−1/τ)`.
///
/// The output distribution is **exact**: integer arithmetic only, with tables of
/// certified bounds built at construction and an exact fallback where a bound does not
/// decide. Below `τ = 16` a sample is one 64-bit word (a sign bit and the inversion of
/// the table of `|Z|`); above, it is the sign-and-geometric rejection sampler of
/// Canonne, Kamath & Steinke (2020, Algorithm 2), every trial drawing
/// [`words_per_trial`](Self::words_per_trial) words (1, 2 or 3, a function of `τ`
/// alone) and `E[N] < 1.07` trials. The number of words drawn is independent of the
/// sample except on a fallback event of probability below `2⁻⁴⁰` per sample.
/// [`sample_into`](Self::sample_into) (and the `release_slice` of
/// [`Laplace`](crate::Laplace) and [`Geometric`](crate::Geometric)) decides many
/// samples in one branch-free pass, with the same distribution and guarantee. The
/// module source states the algorithm and proves these bounds.
///
/// ```
/// use dpmech::sampling::{DiscreteLaplace, Rational};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let noise = DiscreteLaplace::new(Rational::new(10, 1)?); // scale 10: one word
/// let z = noise.sample(&mut ChaCha20Rng::seed_from_u64(5));
/// assert_eq!(noise.words_per_trial(), 1);
/// # let _ = z;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Clone)]
pub struct DiscreteLaplace {
    scale: Rational,
    tables: Arc<Tables>,
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
        self.scale == other.scale
    }
}

impl Eq for DiscreteLaplace {}

// ======================================================================================
// Public sampling: the distribution's API and the crate's inlined single sample.
// ======================================================================================

impl DiscreteLaplace {
    /// The discrete Laplace distribution of scale `τ` (`α = exp(−1/τ)`).
    ///
    /// The tables are a function of `τ` alone and are shared, through a process-wide
    /// cache of the last 256 scales, by every sampler of the same scale.
    pub fn new(scale: Rational) -> Self {
        let tables = cached(&CACHE, scale, || Tables::new(scale));
        Self { scale, tables }
    }

    /// The scale τ.
    pub fn scale(&self) -> Rational {
        self.scale
    }

    /// The number of 64-bit words each trial draws, a function of the scale alone: 1
    /// below `τ = 64`, 2 while `m ≤ 31` (`τ < 2³⁷`), 3 above. A sample draws `N` times
    /// this many (outside the fallback event), `N ≥ 1` independent of the sample:
    /// `N = 1` below `τ = 16`, `E[N] < 1.07` above.
    pub fn words_per_trial(&self) -> usize {
        match self.tables.block_bits {
            0 => 1,
            m if m <= TWO_WORD_MAX_BITS => 2,
            _ => 3,
        }
    }

    /// One sample, saturating to the `i64` range.
    #[inline]
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        let mut out = [0];
        self.sample_one(&mut Saturated(&mut out), &mut BitSource::new(rng));
        out[0]
    }

    /// Fills `out` with independent samples (saturating to `i64`): the distribution of
    /// [`sample`](Self::sample) called `out.len()` times, and as many words in
    /// distribution, independent of the samples outside the fallback event. Use it for
    /// many values at one scale: at two-word scales (`64 ≤ τ < 2³⁷`) it draws the first
    /// trial of up to 48 samples in one generator call and decides them in one
    /// branch-free pass (the few rejected or undecided trials are finished one by one),
    /// which is faster than a call per sample; the words go to the trials in a
    /// different order than `sample`'s, so the values differ from theirs.
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
    /// discrete Laplace proposal in their own loop (a call per proposal measurably
    /// costs more than the proposal's arithmetic).
    #[inline(always)]
    pub(crate) fn sample_inlined<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        if self.tables.magnitude.is_some() {
            let word = bits.word();
            return self.small_scale_sample(word, bits);
        }
        loop {
            let words = self.trial_words(bits);
            if let Some(z) = self.accepted_trial(words, bits) {
                return z;
            }
        }
    }
}

/// Clamps an `i128` into the `i64` range.
#[inline]
pub(crate) fn saturate_i64(value: i128) -> i64 {
    i64::try_from(value).unwrap_or(if value < 0 { i64::MIN } else { i64::MAX })
}

// ======================================================================================
// Batch path: many samples' first trials decided in one branch-free pass.
// ======================================================================================

/// Trials a batch of two-word trials ([`DiscreteLaplace::sample_batch`]) decides at
/// once: their words are drawn in one call (768 bytes).
const BATCH_SAMPLES: usize = 48;

/// Where [`DiscreteLaplace::sample_batch`] puts its samples: sample `i` of the batch goes
/// to `narrow` or to `wide`, or to `narrow` and then to `wide` (when the fast pass did not
/// decide its trial); the last value given is the sample.
pub(crate) trait BatchSink {
    /// Sample `i`, with `|z| < 2⁴⁸`.
    fn narrow(&mut self, i: usize, z: i64);
    /// Sample `i`, of any size; it replaces any earlier `narrow` value of `i`.
    fn wide(&mut self, i: usize, z: i128);
}

/// Samples saturated to `i64`, by index.
struct Saturated<'a>(&'a mut [i64]);

impl BatchSink for Saturated<'_> {
    #[inline(always)]
    fn narrow(&mut self, i: usize, z: i64) {
        self.0[i] = z;
    }

    #[inline(always)]
    fn wide(&mut self, i: usize, z: i128) {
        self.0[i] = saturate_i64(z);
    }
}

impl DiscreteLaplace {
    /// `n` independent samples, handed to `sink` by index (see [`BatchSink`] for the
    /// order). For two-word trials (`64 ≤ τ < 2³⁷`) the words of every
    /// sample's first trial are drawn in bulk ([`BitSource::fill_bytes`], up to
    /// `BATCH_SAMPLES` trials at a time) and decided by one branch-free pass of integer
    /// comparisons, whose samples (`|Z| < 2⁴⁸`) go to [`BatchSink::narrow`]; the few
    /// trials the pass does not decide as accepted (a rejection, probability `< 0.07`,
    /// or an uncertified comparison) are then finished one by one on the same words
    /// ([`finish_trial`](Self::finish_trial)), and their samples go to
    /// [`BatchSink::wide`]. At other
    /// scales every sample is [`sample_bits`](Self::sample_bits) and goes to `wide`.
    ///
    /// Each sample's trials are i.i.d. and its first accepted trial is kept, so the
    /// samples are independent with exactly the distribution of `sample_bits`, and the
    /// words drawn are [`words_per_trial`](Self::words_per_trial) times the total number
    /// of trials (outside the fallback event), as for `n` single samples: only the order
    /// in which words are assigned to trials differs. Which method receives a sample
    /// depends on its trial's uniforms (and is independent of the sample once
    /// accepted, up to the fallback event), not on its value alone.
    #[inline]
    pub(crate) fn sample_batch<R: CryptoRng + ?Sized>(
        &self,
        n: usize,
        sink: &mut impl BatchSink,
        bits: &mut BitSource<'_, R>,
    ) {
        let tables = &*self.tables;
        match (self.words_per_trial(), tables.quotient.guide_view()) {
            (2, Some(guide)) => match tables.power_lower.len() {
                1 => self.sample_two_word_batch::<1, R>(guide, n, sink, bits),
                2 => self.sample_two_word_batch::<2, R>(guide, n, sink, bits),
                3 => self.sample_two_word_batch::<3, R>(guide, n, sink, bits),
                _ => self.sample_two_word_batch::<4, R>(guide, n, sink, bits),
            },
            _ => {
                for i in 0..n {
                    sink.wide(i, self.sample_inlined(bits));
                }
            }
        }
    }

    /// One sample handed to `sink` as sample 0: [`sample_batch`](Self::sample_batch)
    /// of one, without its buffers (the trial's two words from two
    /// [`word`](BitSource::word) calls).
    #[inline(always)]
    pub(crate) fn sample_one<R: CryptoRng + ?Sized>(
        &self,
        sink: &mut impl BatchSink,
        bits: &mut BitSource<'_, R>,
    ) {
        let tables = &*self.tables;
        let (2, Some(guide)) = (self.words_per_trial(), tables.quotient.guide_view()) else {
            return sink.wide(0, self.sample_inlined(bits));
        };
        let (first, second) = (bits.word(), bits.word());
        let (z, decided) = match tables.power_lower.len() {
            1 => self.fast_two_word::<1>(guide).decide(first, second),
            2 => self.fast_two_word::<2>(guide).decide(first, second),
            3 => self.fast_two_word::<3>(guide).decide(first, second),
            _ => self.fast_two_word::<4>(guide).decide(first, second),
        };
        if decided {
            sink.narrow(0, z);
        } else {
            sink.wide(0, self.finish_trial([first, second, 0], bits));
        }
    }

    /// The sample of a trial the fast pass left undecided: its own, by
    /// [`accepted_trial`](Self::accepted_trial) on its words (exact comparisons with
    /// further words where a bound does not decide), or, when it is rejected, that of
    /// fresh trials.
    #[inline]
    fn finish_trial<R: CryptoRng + ?Sized>(&self, words: [u64; 3], bits: &mut BitSource<'_, R>) -> i128 {
        match self.accepted_trial(words, bits) {
            Some(z) => z,
            None => self.sample_inlined(bits),
        }
    }

    /// [`sample_batch`](Self::sample_batch) for two-word trials whose `Q` table has a
    /// guide and `P = ⌈m/8⌉ ≤ 4` power tables (`1 ≤ m ≤ 31`), with the tables borrowed
    /// once.
    #[inline(always)]
    fn sample_two_word_batch<const P: usize, R: CryptoRng + ?Sized>(
        &self,
        guide: GuideView<'_>,
        n: usize,
        sink: &mut impl BatchSink,
        bits: &mut BitSource<'_, R>,
    ) {
        let fast = self.fast_two_word::<P>(guide);
        let word = |bytes: &[u8; 16], j: usize| {
            u64::from_le_bytes(bytes[8 * j..8 * j + 8].try_into().expect("eight bytes"))
        };
        let mut bytes = [0u8; 16 * BATCH_SAMPLES];
        let mut pending = [0u8; BATCH_SAMPLES];
        for start in (0..n).step_by(BATCH_SAMPLES) {
            let bytes = &mut bytes[..16 * BATCH_SAMPLES.min(n - start)];
            bits.fill_bytes(bytes);
            let trials = bytes.as_chunks::<16>().0;
            let mut undecided = 0;
            for (i, trial) in trials.iter().enumerate() {
                let (z, decided) = fast.decide(word(trial, 0), word(trial, 1));
                // An undecided trial's value is passed too (the same work for every
                // trial) and replaced below.
                sink.narrow(start + i, z);
                pending[undecided] = i as u8;
                undecided += usize::from(!decided);
            }
            for &i in &pending[..undecided] {
                let i = usize::from(i);
                let trial = [word(&trials[i], 0), word(&trials[i], 1), 0];
                sink.wide(start + i, self.finish_trial(trial, bits));
            }
        }
    }

    /// The tables of two-word trials with `P` power tables, borrowed for
    /// [`FastTwoWord::decide`].
    #[inline(always)]
    fn fast_two_word<'a, const P: usize>(&'a self, guide: GuideView<'a>) -> FastTwoWord<'a, P> {
        let tables = &*self.tables;
        let m = tables.block_bits;
        debug_assert!((1..=TWO_WORD_MAX_BITS).contains(&m) && tables.power_lower.len() == P);
        FastTwoWord {
            guide,
            powers: tables.power_lower[..P].try_into().expect("P power tables"),
            m,
            low: low_bits(m),
        }
    }
}

/// A two-word trial decided by integer comparisons alone ([`DiscreteLaplace::sample_batch`]).
struct FastTwoWord<'a, const P: usize> {
    guide: GuideView<'a>,
    /// The lower bounds of the `P = ⌈m/8⌉` power tables.
    powers: &'a [[u64; 256]; P],
    m: u32,
    /// `low_bits(m)`.
    low: u32,
}

impl<const P: usize> FastTwoWord<'_, P> {
    /// The trial of the words `first`, `second`, without a branch: its sample and
    /// `true` when the `Q` word decides the table, `V` is certainly below `αᴿ` (as in
    /// `decode_trial` and `Tables::accept`) and the pair (negative, 0) was not drawn;
    /// otherwise `false`, with a meaningless sample (the trial is then
    /// [`DiscreteLaplace::accepted_trial`]'s). Either way `|sample| < 2⁴⁸`: `Q` is at
    /// most the table's size (below 2¹⁶, a guide's limit) and `R < 2³¹`.
    #[inline(always)]
    fn decide(&self, first: u64, second: u64) -> (i64, bool) {
        let (m, low) = (self.m, self.low);
        let high = m - low;
        let (q, q_decided) = self.guide.locate((first & (u64::MAX >> 1)) >> low);
        let r = (first & ((1u64 << low) - 1)) | ((second & ((1u64 << high) - 1)) << low);
        let lower = combine(self.powers, r, u64::MAX, |a, b| {
            ((u128::from(a) * u128::from(b)) >> 64) as u64
        });
        // V < (prefix + 1)/2^len ≤ αᴿ, the prefix being `second >> high` (len = 64 − high).
        let accepted = second >> high < lower >> high;
        let negative = first >> 63;
        let magnitude = ((q as u64) << m) | r;
        let decided = q_decided & accepted & ((negative == 0) | (magnitude != 0));
        let mask = (negative as i64).wrapping_neg();
        (((magnitude as i64) ^ mask) - mask, decided)
    }
}

// ======================================================================================
// One trial: a sample below τ = 16, and one rejection trial above.
// ======================================================================================

/// One trial of [`DiscreteLaplace`] for `τ ≥ 16`, before `R`'s acceptance (see
/// [`DiscreteLaplace::decode_trial`]).
#[derive(Debug, Clone, Copy)]
struct Trial {
    /// The sign; (negative, 0) must be rejected.
    negative: bool,
    /// `G = M·Q + R`.
    magnitude: u128,
    /// `R`.
    remainder: u64,
    /// The first `uniform_bits` bits of the acceptance uniform `V`.
    uniform: u64,
    /// 0 when `M = 1` (nothing to accept), `64 − m` or 42 when `V` shares `R`'s second
    /// word (`m ≤ 31`), else 64.
    uniform_bits: u32,
}

impl DiscreteLaplace {
    /// A sample for `τ < 16` from its one word: the sign (top bit) and `|Z|` by
    /// inversion; a zero ignores the sign.
    #[inline(always)]
    fn small_scale_sample<R: CryptoRng + ?Sized>(&self, word: u64, bits: &mut BitSource<'_, R>) -> i128 {
        let table = self.tables.magnitude.as_ref().expect("a scale below 16");
        let magnitude = i128::from(table.sample(word & (u64::MAX >> 1), bits));
        let mask = -i128::from(word >> 63);
        (magnitude ^ mask) - mask
    }

    /// The sample of one trial (`τ ≥ 16`) from its words (`words_per_trial` of them,
    /// the rest 0), or `None` when the trial is rejected.
    #[inline(always)]
    fn accepted_trial<R: CryptoRng + ?Sized>(
        &self,
        words: [u64; 3],
        bits: &mut BitSource<'_, R>,
    ) -> Option<i128> {
        let (accepted, negative, magnitude) = self.trial_from(words, bits);
        // No branch on the sign: with short-circuit `&&` and `if negative`, the
        // accepted zero (always positive) and large outputs (either sign) took
        // different branch patterns, a timing difference that followed the output.
        let reject = !accepted | (negative & (magnitude == 0));
        if reject {
            return None;
        }
        let magnitude = i128::try_from(magnitude).unwrap_or(i128::MAX);
        // Two's complement negation when `negative`, branch-free: (m ⊕ −1) + 1 = −m.
        let mask = -i128::from(negative);
        Some((magnitude ^ mask) - mask)
    }

    /// One trial: whether `R` is accepted, the sign and `G`, all fixed words drawn first.
    #[inline(always)]
    pub(crate) fn trial<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> (bool, bool, u128) {
        let words = self.trial_words(bits);
        self.trial_from(words, bits)
    }

    /// The [`words_per_trial`](Self::words_per_trial) words of one trial (`τ ≥ 16`),
    /// the rest 0.
    #[inline(always)]
    fn trial_words<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> [u64; 3] {
        let m = self.tables.block_bits;
        let first = bits.word();
        let second = if m > 0 { bits.word() } else { 0 };
        let third = if m > TWO_WORD_MAX_BITS { bits.word() } else { 0 };
        [first, second, third]
    }

    /// One trial from its fixed words: whether `R` is accepted, the sign and `G`.
    #[inline(always)]
    fn trial_from<R: CryptoRng + ?Sized>(
        &self,
        words: [u64; 3],
        bits: &mut BitSource<'_, R>,
    ) -> (bool, bool, u128) {
        let trial = self.decode_trial(words, bits);
        let accepted = trial.uniform_bits == 0
            || self
                .tables
                .accept(trial.remainder, trial.uniform, trial.uniform_bits, bits);
        (accepted, trial.negative, trial.magnitude)
    }

    /// The fixed words of one trial, decoded, with `R`'s acceptance left to
    /// [`trial_from`](Self::trial_from): the sign, `G = M·Q + R`, `R`, and the first
    /// bits of the uniform `V` that is to be compared with `αᴿ` (none when `M = 1`).
    #[inline(always)]
    fn decode_trial<R: CryptoRng + ?Sized>(&self, words: [u64; 3], bits: &mut BitSource<'_, R>) -> Trial {
        let tables = &*self.tables;
        let m = tables.block_bits;
        let [first, second, third] = words;
        // The `Q` word: the bits between the sign and `R`'s low bits (if any).
        let low = low_bits(m);
        let q = tables.quotient.sample((first & (u64::MAX >> 1)) >> low, bits);
        let (r, uniform, uniform_bits) = match m {
            0 => (0, 0, 0),
            m if m <= TWO_WORD_MAX_BITS => {
                // R: `low` bits of the first word, `high ≥ 1` of the second; V: the rest.
                let high = m - low;
                let r = (first & ((1u64 << low) - 1)) | ((second & ((1u64 << high) - 1)) << low);
                (r, second >> high, 64 - high)
            }
            _ => (second & ((1u64 << m) - 1), third, 64),
        };
        Trial {
            negative: first >> 63 == 1,
            // q < 2⁶⁴ and m ≤ 63 (τ < 2⁶⁴), r < 2ᵐ: G = q·2ᵐ + r < 2¹²⁷, no overflow.
            magnitude: (u128::from(q) << m) | u128::from(r),
            remainder: r,
            uniform,
            uniform_bits,
        }
    }
}

// ======================================================================================
// Tables: the certified tables of one scale, built once and shared.
// ======================================================================================

/// Tables built so far, by scale.
static CACHE: TableCache<Rational, Tables> = OnceLock::new();

/// Up to this many bits of `R` (`m ≤ 31`, `τ < 2³⁷`), a trial draws two words: the
/// acceptance uniform `V` shares `R`'s second word; above, `R` has the second word
/// and `V` a third.
const TWO_WORD_MAX_BITS: u32 = 31;

/// The fewest bits of `V` in a two-word trial: when `m > 64 − 42 = 22`, the lowest
/// `m − 22` bits of `R` come from the first word (below the `Q` word), so that `V`
/// keeps 42 bits of the second.
const UNIFORM_MIN_BITS: u32 = 42;

struct Tables {
    /// `m`, with `M = 2ᵐ`.
    block_bits: u32,
    /// The table of `Q` (`63 − low_bits(m)`-bit words).
    quotient: Cdt,
    /// `powers[j][d]` encloses `aⱼ^d`, `aⱼ = α^(2⁸ʲ)`, for each byte `j` of `R`
    /// (`⌈m/8⌉` tables, none when `M = 1`).
    powers: Vec<[Entry; 256]>,
    /// The lower bounds of `powers` alone, all the fast path reads (half the cache
    /// lines).
    power_lower: Vec<[u64; 256]>,
    /// `W`, with `2⁶⁴·αʳ ≤ lo + W` for the lower bound `lo` of every `r`: the sum of the
    /// widths (`hi + 1 − lo`) of the widest entry of each power table, plus 2 per
    /// product (a product's width is at most its factors' widths plus 2), so that the
    /// fast path needs only the chain of lower bounds.
    power_width: u128,
    /// For `τ < 16`: the table of `|Z|` itself, `Pr[|Z| ≥ c] = 2αᶜ/(1 + α)` (63-bit
    /// words), so that a sample needs no rejection.
    magnitude: Option<Cdt>,
    /// `τ = num/den`, for the exact resolution of an undecided acceptance.
    num: u64,
    den: u64,
}

impl core::fmt::Debug for Tables {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Tables")
            .field("block_bits", &self.block_bits)
            .field("power_tables", &self.powers.len())
            .finish_non_exhaustive()
    }
}

impl Tables {
    fn new(scale: Rational) -> Self {
        let (num, den) = (scale.num() as u128, scale.den() as u128);
        let small = num < 16 * den;
        // M = 1 below τ = 64; above, the largest power of two ≤ τ/32 (so τ/M ∈ [32, 64)).
        let block_bits = if num < 64 * den {
            0
        } else {
            127 - (num / (32 * den)).leading_zeros()
        };
        let quotient = Cdt::new(
            Threshold {
                step: den << block_bits,
                den: scale.num(),
                size: None,
                two_sided: false,
            },
            63 - low_bits(block_bits),
        );
        let magnitude = small.then(|| {
            Cdt::new(
                Threshold {
                    step: den,
                    den: scale.num(),
                    size: None,
                    two_sided: true,
                },
                63,
            )
        });
        // aⱼ = α^(2⁸ʲ) = exp(−2⁸ʲ·den/num) for each byte j of R (2⁸ʲ·den < 2¹²⁰).
        let powers: Vec<[Entry; 256]> = (0..block_bits.div_ceil(8))
            .map(|j| powers(&exp_neg(den << (8 * j), scale.num(), BUILD_BITS)))
            .collect();
        let power_width = powers_width(&powers);
        let power_lower = powers.iter().map(|table| table.map(|(lo, _)| lo)).collect();
        Tables {
            block_bits,
            quotient,
            powers,
            power_lower,
            power_width,
            magnitude,
            num: scale.num(),
            den: scale.den(),
        }
    }

    /// The lower bound `lo ≤ 2⁶⁴·αʳ`, from one entry per byte of `r` (the same reads and
    /// products for every `r`); `2⁶⁴·αʳ ≤ lo + power_width` (see `power_width`).
    #[inline(always)]
    fn power_lower_bound(&self, r: u64) -> u64 {
        let low = |a: u64, b: u64| ((u128::from(a) * u128::from(b)) >> 64) as u64;
        combine(&self.power_lower, r, u64::MAX, low)
    }

    /// Whether `V < αʳ`, for `V` uniform on [0, 1) of which the first `len` bits are
    /// `prefix`: decided by the enclosure `[lo, lo + power_width)` when `V`'s interval
    /// lies on one side of it, else exactly (further words).
    #[inline(always)]
    fn accept<R: CryptoRng + ?Sized>(
        &self,
        r: u64,
        prefix: u64,
        len: u32,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        let lo = self.power_lower_bound(r);
        let shift = 64 - len;
        // (prefix + 1)·2^shift ≤ lo, in 64-bit arithmetic: V < (prefix + 1)/2^len ≤ αʳ.
        // The common case (αᴿ > 0.969) first.
        if prefix < lo >> shift {
            return true;
        }
        let lo = u128::from(lo);
        let start = u128::from(prefix) << shift;
        if start >= lo + self.power_width {
            false // V ≥ start/2⁶⁴ ≥ (lo + W)/2⁶⁴ ≥ αʳ
        } else {
            self.accept_exactly(r, prefix, len, bits)
        }
    }

    #[cold]
    fn accept_exactly<R: CryptoRng + ?Sized>(
        &self,
        r: u64,
        prefix: u64,
        len: u32,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        // αʳ = exp(−r·den/num); r < 2⁶¹ and den < 2⁶⁴, so r·den < 2¹²⁵.
        let num = Big::from_u128(u128::from(r) * u128::from(self.den));
        let den = Big::from_u128(u128::from(self.num));
        exact_less_exp_neg(&mut LazyUniform::new(prefix, u64::from(len)), &num, &den, bits)
    }
}

/// The product of one entry per byte of `r` (entry `tables[j][byte j]`), `one` for no
/// table: balanced, so the dependent products are at most three deep for up to five
/// tables (the width bound of `powers_width` holds for any order).
#[inline(always)]
fn combine<T: Copy>(tables: &[[T; 256]], r: u64, one: T, mul: impl Fn(T, T) -> T) -> T {
    let f = |j: usize| tables[j][((r >> (8 * j)) & 0xff) as usize];
    match tables.len() {
        0 => one, // M = 1: r = 0, α⁰ = 1
        1 => f(0),
        2 => mul(f(0), f(1)),
        3 => mul(mul(f(0), f(1)), f(2)),
        4 => mul(mul(f(0), f(1)), mul(f(2), f(3))),
        5 => mul(mul(mul(f(0), f(1)), mul(f(2), f(3))), f(4)),
        n => (2..n).fold(mul(f(0), f(1)), |acc, j| mul(acc, f(j))),
    }
}

/// The width bound `W` of a product of one entry from each table (see
/// `Tables::power_width`); 1 for no table (`α⁰ = 1`, lower bound `2⁶⁴ − 1`).
///
/// Why a product adds at most 2: with factors `x ∈ [a, a + wₐ)`, `y ∈ [b, b + w_b)` (units
/// of `2⁻⁶⁴`, `a, b < 2⁶⁴`) the product's bounds are `⌊ab/2⁶⁴⌋ > ab/2⁶⁴ − 1` and
/// `⌈(a + wₐ)(b + w_b)/2⁶⁴⌉ < ab/2⁶⁴ + wₐ + w_b + wₐw_b/2⁶⁴ + 1`, so its integer width is
/// below `wₐ + w_b + 2 + wₐw_b/2⁶⁴` and at most `wₐ + w_b + 2`, whatever the order of the
/// products. `power_lower_bound` computes exactly the lower bounds of those products
/// (the tests compare it with the full both-bounds products in the same order).
fn powers_width(powers: &[[Entry; 256]]) -> u128 {
    let widest = |table: &[Entry; 256]| {
        table
            .iter()
            .map(|&(lo, hi)| u128::from(hi) + 1 - u128::from(lo))
            .max()
            .unwrap_or(1)
    };
    let sum: u128 = powers.iter().map(widest).sum();
    (sum + 2 * (powers.len() as u128).saturating_sub(1)).max(1)
}

/// The low bits of `R` drawn from a trial's first word, below the `Q` word, for `M = 2ᵐ`:
/// `m − 22` for `22 < m ≤ 31` (so that `V` keeps 42 bits of the second word), else 0.
#[inline(always)]
fn low_bits(m: u32) -> u32 {
    if m <= TWO_WORD_MAX_BITS {
        m.saturating_sub(64 - UNIFORM_MIN_BITS)
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::certified::{LOG_GUIDE_BITS, probe};
    use rand_chacha::ChaCha20Rng;
    use rand_core::{Rng, SeedableRng};

    /// The table entries left undecided per entry, at most (≤ 2 by construction), the
    /// size of the `Q` table, the widest power entry (units of `2⁻⁶⁴`) and the size of
    /// the magnitude table: the inputs of the fallback bound.
    fn table_shape(noise: &DiscreteLaplace) -> (u64, usize, u128, Option<usize>) {
        let t = &*noise.tables;
        let worst = [&t.quotient]
            .into_iter()
            .chain(&t.magnitude)
            .map(probe::max_undecided_per_entry)
            .max()
            .unwrap_or(0);
        let widest = t
            .powers
            .iter()
            .flatten()
            .map(|&(lo, hi)| u128::from(hi) + 1 - u128::from(lo))
            .max()
            .unwrap_or(0);
        (
            worst,
            probe::len(&t.quotient),
            widest,
            t.magnitude.as_ref().map(probe::len),
        )
    }

    /// The full certified enclosure `(lo, hi)` of `αʳ`, `lo ≤ 2⁶⁴·αʳ ≤ hi + 1` (the
    /// same products in the same order, so the same `lo` as
    /// [`Tables::power_lower_bound`]): the reference of the tests of
    /// `power_width`.
    fn enclose_power(t: &Tables, r: u64) -> Entry {
        combine(
            &t.powers,
            r,
            (u64::MAX, u64::MAX),
            crate::sampling::fixed_exp::product,
        )
    }

    fn scales() -> Vec<Rational> {
        [
            (1u64, 1u64 << 62),
            (1, 3),
            (1, 2),
            (1, 1),
            (7, 1),
            (8, 1),
            (10, 1),
            (159, 10),
            (16, 1),
            (1000, 7),
            (1_000_000, 1),
            ((1 << 26) + (1 << 25), 1),
            ((1 << 27) + 5, 1),
            ((1 << 28) + 7, 1),
            ((1 << 35) + 3, 1),
            ((1 << 37) - 1, 1),
            (1 << 37, 1),
            ((1 << 40) + 3, 1),
            (1 << 60, 1),
            (u64::MAX, 1),
            (u64::MAX, u64::MAX - 1),
        ]
        .into_iter()
        .map(|(n, d)| Rational::new(n, d).unwrap())
        .collect()
    }

    /// The premises of the fallback bound: every entry leaves at most two words
    /// undecided; below τ = 16 the `Q` and magnitude tables have at most 712 entries
    /// (one word per sample falls back with probability below 2⁻⁵²); above, the `Q`
    /// table read with `w` bits has at most `⌈w·ln 2·64⌉ + 1` entries and every power
    /// entry is at most 3 units wide, so the enclosure of `αᴿ` is at most `5⌈m/8⌉ − 2`
    /// wide (checked on random `R`), and a sample falls back with probability below
    /// 2⁻⁴²·⁷, or 2⁻⁴⁰·⁸⁸ and 2⁻⁴⁰·²⁸ for the two-word layouts with `m = 21, 22` and
    /// `23 ≤ m ≤ 31` (the documented bounds, with the layout of each scale).
    #[test]
    fn tables_satisfy_the_fallback_bound_premises() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xFA11);
        for scale in scales() {
            let noise = DiscreteLaplace::new(scale);
            let (worst, q_len, widest, magnitude) = table_shape(&noise);
            assert!(worst <= 2, "{scale:?}: {worst}");
            // Guided (one bucket read, one comparison), so the look-up's work is the same
            // for every word.
            assert!(
                probe::is_guided(&noise.tables.quotient),
                "{scale:?}: Q table not guided"
            );
            if let Some(table) = &noise.tables.magnitude {
                assert!(probe::is_guided(table), "{scale:?}: magnitude table not guided");
            }
            let small = u128::from(scale.num()) < 16 * u128::from(scale.den());
            assert_eq!(magnitude.is_some(), small, "{scale:?}");
            let t = &*noise.tables;
            let m = t.block_bits;
            assert_eq!(t.powers.len() as u32, m.div_ceil(8), "{scale:?}");
            assert_eq!(
                m > 0,
                u128::from(scale.num()) >= 64 * u128::from(scale.den()),
                "{scale:?}"
            );
            let bound = if let Some(mag) = magnitude {
                assert!(q_len <= 712 && mag <= 712, "{scale:?}: {q_len}, {mag}");
                2.0 * mag.max(q_len) as f64 / 2f64.powi(63)
            } else {
                let width = probe::width(&t.quotient);
                assert_eq!(width, 63 - low_bits(m), "{scale:?}");
                let entries = (f64::from(width) * 2f64.ln() * 64.0).ceil() as usize + 1;
                assert!(q_len <= entries, "{scale:?}: {q_len} > {entries}");
                assert!(widest <= 3, "{scale:?}: {widest}");
                let w = t.power_width;
                assert!(w <= 5 * u128::from(m.div_ceil(8)).max(1) - 2, "{scale:?}: {w}");
                for _ in 0..10_000 {
                    let r = rng.next_u64() & ((1u64 << m) - 1);
                    let (lo, hi) = enclose_power(t, r);
                    assert_eq!(lo, t.power_lower_bound(r), "{scale:?}, r = {r}");
                    assert!(u128::from(hi) + 1 - u128::from(lo) <= w, "{scale:?}, r = {r}");
                }
                // V's length ℓ, from the layout: all of R in the second word, or its
                // low bits in the first word and V's 42 in the second.
                let len = match m {
                    0 => 0,
                    m if m <= TWO_WORD_MAX_BITS => {
                        assert_eq!(low_bits(m), m.saturating_sub(22), "{scale:?}");
                        64 - (m - low_bits(m))
                    }
                    _ => 64,
                };
                assert!(m == 0 || len >= UNIFORM_MIN_BITS, "{scale:?}: ℓ = {len}");
                let undecided = if m == 0 {
                    0.0
                } else {
                    (w as f64 + 2f64.powi(65 - len as i32)) / 2f64.powi(64)
                };
                // E[N] < 1.07 trials per sample, < 1.032 from m = 23 on.
                let trials = if m >= 23 { 1.032 } else { 1.07 };
                trials * (2.0 * q_len as f64 / 2f64.powi(width as i32) + undecided)
            };
            let documented = match t.block_bits {
                21 | 22 => -40.88,
                23..=TWO_WORD_MAX_BITS => -40.28,
                _ => -42.7,
            };
            assert!(bound < 2f64.powf(documented), "{scale:?}: {bound}");
        }
    }

    /// `Q` follows its exact law `Pr[Q = j] ∝ α^(jM)`, and the accepted `R` its law
    /// `Pr[R = r] ∝ αʳ` on `[0, M)`: Pearson's chi-square with α = 1e-3, 10⁵ draws each,
    /// critical value from statrs; bins merged so each expects ≥ 5. The acceptance rate
    /// matches `E[αᴿ] = (1 − α^M)/(M(1 − α))` within 5 standard deviations (a sampler
    /// that skipped the acceptance would be 25 or more away at these scales).
    #[test]
    fn each_table_follows_its_exact_law() {
        use statrs::distribution::{ChiSquared, ContinuousCDF};
        let n = 100_000usize;
        let mut rng = ChaCha20Rng::seed_from_u64(0x7AB1E);
        let fit = |counts: &[u64], p: &[f64]| -> (f64, f64) {
            let (mut stat, mut bins, mut acc_o, mut acc_e) = (0.0, 0usize, 0.0, 0.0);
            for (&o, &q) in counts.iter().zip(p) {
                acc_o += o as f64;
                acc_e += q * n as f64;
                if acc_e >= 5.0 {
                    stat += (acc_o - acc_e).powi(2) / acc_e;
                    bins += 1;
                    (acc_o, acc_e) = (0.0, 0.0);
                }
            }
            stat += if acc_e > 0.0 {
                (acc_o - acc_e).powi(2) / acc_e
            } else {
                0.0
            };
            let critical = ChiSquared::new(bins as f64).unwrap().inverse_cdf(1.0 - 1e-3);
            (stat, critical)
        };
        for (num, den) in [
            (5000u64, 1u64),
            (1_000_000, 1),
            (1, 3),
            ((1 << 35) + 3, 1),
            ((1 << 40) + 3, 1),
        ] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let tau = num as f64 / den as f64;
            let t = &*noise.tables;
            let big_m = 1u64 << t.block_bits;
            // Q, by inversion of its table.
            let a = (-(big_m as f64) / tau).exp();
            let support = probe::len(&t.quotient) + 1;
            let mut counts = vec![0u64; support + 1];
            let mut bits = BitSource::new(&mut rng);
            let width = probe::width(&t.quotient);
            for _ in 0..n {
                let u = bits.word() >> (64 - width);
                let x = t.quotient.sample(u, &mut bits) as usize;
                counts[x.min(support)] += 1;
            }
            let mut p: Vec<f64> = (0..=support).map(|c| (1.0 - a) * a.powi(c as i32)).collect();
            p[support] = a.powi(support as i32);
            let (stat, critical) = fit(&counts, &p);
            assert!(stat <= critical, "τ = {num}/{den}, Q: {stat} > {critical}");
            if t.block_bits == 0 {
                continue;
            }
            // R, by rejection: the accepted remainders of whole trials.
            let alpha = (-1.0 / tau).exp();
            let (mut accepted, mut trials) = (0usize, 0usize);
            let bins = 1024usize.min(big_m as usize);
            let width = big_m as usize / bins;
            let mut counts = vec![0u64; bins];
            while accepted < n {
                let (ok, _, g) = noise.trial(&mut bits);
                trials += 1;
                if ok {
                    accepted += 1;
                    counts[(g % u128::from(big_m)) as usize / width] += 1;
                }
            }
            // Bin b holds r ∈ [b·w, (b + 1)·w): mass ∝ α^(bw)(1 − α^w).
            let total = 1.0 - alpha.powf(big_m as f64);
            let p: Vec<f64> = (0..bins)
                .map(|b| alpha.powf((b * width) as f64) * (1.0 - alpha.powf(width as f64)) / total)
                .collect();
            let (stat, critical) = fit(&counts, &p);
            assert!(stat <= critical, "τ = {num}/{den}, R: {stat} > {critical}");
            let rate = total / (big_m as f64 * (1.0 - alpha));
            let sd = (rate * (1.0 - rate) / trials as f64).sqrt();
            let seen = accepted as f64 / trials as f64;
            assert!(
                (seen - rate).abs() <= 5.0 * sd,
                "τ = {num}/{den}: {seen} vs {rate}"
            );
        }
    }

    /// `X = x` holds exactly iff `U < C_x` (or `x = 0`) and `U ≥ C_(x+1)` (or `x` is
    /// the largest value), since the exact thresholds decrease.
    /// Each comparison extends `U` with the same words, from a generator seeded `seed`.
    fn exact_agrees(table: &Cdt, u: u64, x: u64, seed: u64) -> bool {
        let less = |c: u64| {
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            probe::exact_less_at(table, u, c, &mut BitSource::new(&mut rng))
        };
        (x == 0 || less(x)) && (probe::bound(table) == Some(x) || !less(x + 1))
    }

    /// The guide tables give the same certain count and decision as a binary search: on random
    /// words, on both sides of every threshold bound and at every bucket edge (linear
    /// and logarithmic). Every table (`Q`, magnitude), at every scale, is guided.
    #[test]
    fn guide_tables_count_like_a_binary_search() {
        let mut rng = ChaCha20Rng::seed_from_u64(0x6D1DE);
        for (num, den) in [
            (1u64, 3u64),
            (1, 1),
            (10, 1),
            (159, 10),
            (1_000_000, 1),
            ((1 << 35) + 3, 1),
            ((1 << 40) + 3, 1),
            (u64::MAX, 1),
        ] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let t = &*noise.tables;
            let mut tables: Vec<(&Cdt, u32)> = vec![(&t.quotient, probe::width(&t.quotient))];
            tables.extend(t.magnitude.iter().map(|c| (c, 63)));
            for (i, (table, width)) in tables.into_iter().enumerate() {
                assert!(probe::is_guided(table), "τ = {num}/{den}: table {i} not guided");
                let mask = u64::MAX >> (64 - width);
                let mut words: Vec<u64> = (0..20_000).map(|_| rng.next_u64() & mask).collect();
                for &l in probe::lo(table) {
                    words.extend([l, l.saturating_sub(1), l.saturating_add(1) & mask]);
                }
                for b in 0..1u64 << 10 {
                    let first = b << (width - 10);
                    words.extend([first, first.saturating_sub(1), first | 1]);
                }
                let log_bits = LOG_GUIDE_BITS;
                for p in 0..width {
                    for digits in 0..1u64 << log_bits {
                        let first =
                            (1u64 << p) | ((digits << p.saturating_sub(log_bits)) & ((1u64 << p) - 1));
                        words.extend([first, first - 1, first | 1]);
                    }
                }
                for u in words {
                    let fast = table.fast(u);
                    assert_eq!(
                        fast.unwrap_or_else(|c| c),
                        probe::certain_by_search(table, u),
                        "τ = {num}/{den}, table {i}, u = {u}"
                    );
                    assert_eq!(
                        fast.is_ok(),
                        probe::decided_by_search(table, u),
                        "τ = {num}/{den}, table {i}, u = {u}: decision"
                    );
                }
            }
        }
    }

    /// The certified fast path agrees with an arbitrary-precision evaluation on 10⁶
    /// random words (spread over the tables of four scales, one with a 54-bit `Q` word), and words planted inside
    /// every entry's undecided band take the exact path and still give the exact answer.
    #[test]
    fn certified_fast_path_agrees_with_exact_comparisons() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xCE27);
        let mut checked = 0u64;
        for (num, den) in [(1u64, 3u64), (10, 1), ((1u64 << 37) - 1, 1), ((1 << 40) + 3, 1)] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let t = &*noise.tables;
            let mut tables: Vec<(&Cdt, u32)> = vec![(&t.quotient, probe::width(&t.quotient))];
            tables.extend(t.magnitude.iter().map(|c| (c, 63)));
            let per_table = 1_000_000 / (4 * tables.len() as u64) + 1;
            for (table, width) in tables {
                for _ in 0..per_table {
                    let u = rng.next_u64() >> (64 - width);
                    if let Ok(x) = table.fast(u) {
                        assert!(exact_agrees(table, u, x, checked), "τ = {num}/{den}, u = {u}");
                        checked += 1;
                    }
                }
                let mut planted = 0;
                for c in 0..probe::len(table) {
                    for u in probe::lo(table)[c]..=probe::hi(table)[c] {
                        if (width < 64 && u >> width != 0) || table.fast(u).is_ok() {
                            continue;
                        }
                        planted += 1;
                        for seed in 0..4 {
                            let mut rng = ChaCha20Rng::seed_from_u64(seed);
                            let x = table.sample(u, &mut BitSource::new(&mut rng));
                            assert!(exact_agrees(table, u, x, seed), "planted u = {u}");
                        }
                    }
                }
                assert!(planted > 0, "τ = {num}/{den}: no undecided word");
            }
        }
        assert!(checked >= 1_000_000, "{checked}");
    }

    /// The acceptance of `R`: on 10⁶ random remainders (over four scales: `V` of
    /// `64 − m` bits, of 42 bits, and of a word of its own) the product of power entries encloses the exact `αʳ`
    /// (an arbitrary-precision evaluation at 128 bits) and every decided comparison
    /// agrees with it; uniforms planted inside the enclosure take the exact path and
    /// give the exact answer.
    #[test]
    fn acceptance_enclosures_hold_and_planted_uniforms_resolve_exactly() {
        use super::super::certified::exp_neg as exact_exp_neg;
        let mut rng = ChaCha20Rng::seed_from_u64(0xACCE);
        let mut checked = 0u64;
        for (num, den) in [
            (1_000_000u64, 1u64),
            (1_000_003, 7),
            ((1 << 35) + 3, 1),
            ((1 << 40) + 3, 1),
        ] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let t = &*noise.tables;
            let m = t.block_bits;
            let len = if m <= TWO_WORD_MAX_BITS {
                64 - (m - low_bits(m))
            } else {
                64
            };
            let mut planted = 0;
            for i in 0..255_000u64 {
                let r = rng.next_u64() & ((1u64 << m) - 1);
                let (lo, hi) = enclose_power(t, r);
                assert_eq!(lo, t.power_lower_bound(r));
                // lo·2⁶⁴ ≤ 2¹²⁸·αʳ ≤ (hi + 1)·2⁶⁴ ≤ (lo + W)·2⁶⁴: the fast path's bounds.
                let exact = exact_exp_neg(u128::from(r) * u128::from(den), num, 128);
                let lo_big = Big::from_u128(u128::from(lo)).shl(64);
                let hi_big = Big::from_u128(u128::from(hi) + 1).shl(64);
                assert!(u128::from(hi) < u128::from(lo) + t.power_width);
                assert!(lo_big.cmp(&exact.lo).is_le(), "τ = {num}/{den}, r = {r}");
                assert!(exact.hi.cmp(&hi_big).is_le(), "τ = {num}/{den}, r = {r}");
                // A random uniform, or one planted inside the enclosure.
                let prefix = if i % 1000 == 0 {
                    planted += 1;
                    (((2 * u128::from(lo) + t.power_width) / 2) >> (64 - len)) as u64
                } else {
                    rng.next_u64() >> (64 - len)
                };
                let seed = i;
                let fast = t.accept(
                    r,
                    prefix,
                    len,
                    &mut BitSource::new(&mut ChaCha20Rng::seed_from_u64(seed)),
                );
                let exact = exact_less_exp_neg(
                    &mut LazyUniform::new(prefix, u64::from(len)),
                    &Big::from_u128(u128::from(r) * u128::from(den)),
                    &Big::from_u128(u128::from(num)),
                    &mut BitSource::new(&mut ChaCha20Rng::seed_from_u64(seed)),
                );
                assert_eq!(fast, exact, "τ = {num}/{den}, r = {r}, prefix = {prefix}");
                checked += 1;
            }
            assert!(planted >= 255, "τ = {num}/{den}");
        }
        assert!(checked >= 1_000_000, "{checked}");
    }

    /// Words from a list, then from a seeded ChaCha20: plants chosen words in front of a
    /// random stream. `fill_bytes` hands out whole words little-endian, like ChaCha's.
    struct Replay {
        planted: std::vec::IntoIter<u64>,
        rest: ChaCha20Rng,
    }

    impl Replay {
        fn new(planted: Vec<u64>, seed: u64) -> Self {
            Self {
                planted: planted.into_iter(),
                rest: ChaCha20Rng::seed_from_u64(seed),
            }
        }
    }

    impl rand_core::TryRng for Replay {
        type Error = core::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            Ok(self.try_next_u64()? as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            Ok(self.planted.next().unwrap_or_else(|| self.rest.next_u64()))
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
            for chunk in dst.chunks_mut(8) {
                let word = self.try_next_u64()?.to_le_bytes();
                chunk.copy_from_slice(&word[..chunk.len()]);
            }
            Ok(())
        }
    }

    impl rand_core::TryCryptoRng for Replay {}

    /// Records a batch's samples by index, and which ones `narrow` gave last.
    struct Recorder {
        samples: Vec<Option<i128>>,
        narrow: Vec<bool>,
    }

    impl Recorder {
        fn new(n: usize) -> Self {
            Self {
                samples: vec![None; n],
                narrow: vec![false; n],
            }
        }

        /// The samples, each present, and the narrow ones checked to be below 2⁴⁸.
        fn finish(self) -> Vec<i128> {
            self.samples
                .iter()
                .zip(&self.narrow)
                .enumerate()
                .map(|(i, (z, &narrow))| {
                    let z = z.unwrap_or_else(|| panic!("sample {i} missing"));
                    assert!(!narrow || z.unsigned_abs() < 1 << 48, "narrow sample {i} = {z}");
                    z
                })
                .collect()
        }
    }

    impl BatchSink for Recorder {
        fn narrow(&mut self, i: usize, z: i64) {
            self.samples[i] = Some(i128::from(z));
            self.narrow[i] = true;
        }
        fn wide(&mut self, i: usize, z: i128) {
            self.samples[i] = Some(z);
            self.narrow[i] = false;
        }
    }

    /// `sample_batch` as its documentation describes it, from the scalar functions: the
    /// first trials' words of up to `BATCH_SAMPLES` samples (two-word scales), then each
    /// trial in order by `accepted_trial` and a rejected one repeated; elsewhere
    /// `sample_inlined` per sample.
    fn reference_batch<R: CryptoRng + ?Sized>(noise: &DiscreteLaplace, n: usize, rng: &mut R) -> Vec<i128> {
        let mut bits = BitSource::new(rng);
        if noise.words_per_trial() != 2 || noise.tables.quotient.guide_view().is_none() {
            return (0..n).map(|_| noise.sample_inlined(&mut bits)).collect();
        }
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let count = BATCH_SAMPLES.min(n - out.len());
            let words: Vec<[u64; 3]> = (0..count).map(|_| [bits.word(), bits.word(), 0]).collect();
            for trial in words {
                let z = noise.accepted_trial(trial, &mut bits);
                out.push(z.unwrap_or_else(|| noise.sample_inlined(&mut bits)));
            }
        }
        out
    }

    /// [`FastTwoWord::decide`] at a two-word scale with a guide.
    fn decide(noise: &DiscreteLaplace, first: u64, second: u64) -> (i64, bool) {
        let guide = noise.tables.quotient.guide_view().expect("a guide");
        match noise.tables.power_lower.len() {
            1 => noise.fast_two_word::<1>(guide).decide(first, second),
            2 => noise.fast_two_word::<2>(guide).decide(first, second),
            3 => noise.fast_two_word::<3>(guide).decide(first, second),
            _ => noise.fast_two_word::<4>(guide).decide(first, second),
        }
    }

    const BATCH_SCALES: [(u64, u64); 10] = [
        (1, 3),
        (10, 1),
        (20, 1),
        (1000, 1),
        (1_000_003, 7),
        (1_000_000, 1),
        ((1 << 35) + 3, 1),
        ((1 << 37) - 1, 1),
        ((1 << 37) + 1, 1),
        (1 << 60, 1),
    ];

    /// A batch gives, sample for sample, what its description built from the scalar
    /// functions gives on the same seeded stream (so its bulk words are the scalar
    /// path's words, and its fast pass decides as `accepted_trial` does), at every
    /// regime: one word (`τ < 16`, `τ < 64`), two words with `V` sharing the second word
    /// (`m = 4, 12, 14`) and with `R`'s low bits in the first (`m = 30, 31`), three words.
    /// Sizes that are not a multiple of the batch check the last, partial batch.
    #[test]
    fn batches_follow_their_description() {
        for (num, den) in BATCH_SCALES {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            for (n, seed) in [(1usize, 1u64), (47, 2), (48, 3), (20_011, 4)] {
                let mut recorder = Recorder::new(n);
                let mut rng = ChaCha20Rng::seed_from_u64(seed);
                noise.sample_batch(n, &mut recorder, &mut BitSource::new(&mut rng));
                let batch = recorder.finish();
                let reference = reference_batch(&noise, n, &mut ChaCha20Rng::seed_from_u64(seed));
                assert_eq!(batch, reference, "τ = {num}/{den}, n = {n}");
                // Both stopped at the same point of the stream.
                assert_eq!(
                    rng.next_u64(),
                    {
                        let mut again = ChaCha20Rng::seed_from_u64(seed);
                        reference_batch(&noise, n, &mut again);
                        again.next_u64()
                    },
                    "τ = {num}/{den}, n = {n}"
                );
            }
        }
    }

    /// `sample_one` (behind `sample` and the single releases) takes the very words and
    /// gives the very samples of the scalar path, `sample_inlined`, at every regime:
    /// 20 000 samples per scale from one seeded stream each, and the streams end at the
    /// same point.
    #[test]
    fn single_samples_are_the_scalar_path() {
        for (i, (num, den)) in BATCH_SCALES.into_iter().enumerate() {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let (mut one, mut scalar) = (
                ChaCha20Rng::seed_from_u64(i as u64),
                ChaCha20Rng::seed_from_u64(i as u64),
            );
            for _ in 0..20_000 {
                let mut recorder = Recorder::new(1);
                noise.sample_one(&mut recorder, &mut BitSource::new(&mut one));
                let expected = noise.sample_inlined(&mut BitSource::new(&mut scalar));
                assert_eq!(recorder.finish(), [expected], "τ = {num}/{den}");
            }
            assert_eq!(one.next_u64(), scalar.next_u64(), "τ = {num}/{den}");
        }
    }

    /// The branch-free pass on 10⁶ random word pairs (four two-word scales, `m` = 4 to
    /// 31): every trial it decides is accepted by `accepted_trial` with the same sample
    /// and without a further word; it leaves at most the rejections' share undecided
    /// (`< 0.04`, here measured); and words planted inside an undecided band of the `Q`
    /// table or inside the enclosure of `αᴿ` are never decided by it, and resolve
    /// exactly through the batch's second pass (compared with the scalar path).
    #[test]
    fn fast_pass_decides_as_the_certified_path() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xBA7C);
        let mut checked = 0u64;
        for (num, den) in [
            (1000u64, 1u64),
            (1_000_003, 7),
            ((1 << 35) + 3, 1),
            ((1 << 37) - 1, 1),
        ] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let t = &*noise.tables;
            assert_eq!(noise.words_per_trial(), 2);
            let fast = |first, second| decide(&noise, first, second);
            let mut undecided = 0u64;
            for _ in 0..250_000 {
                let (first, second) = (rng.next_u64(), rng.next_u64());
                let (z, decided) = fast(first, second);
                if decided {
                    let mut counting = crate::audit::CountingRng::new(ChaCha20Rng::seed_from_u64(0));
                    let exact = noise.accepted_trial([first, second, 0], &mut BitSource::new(&mut counting));
                    assert_eq!(exact, Some(i128::from(z)), "τ = {num}/{den}");
                    assert_eq!(counting.draws(), 0);
                    checked += 1;
                } else {
                    undecided += 1;
                }
            }
            assert!(undecided < 10_000, "τ = {num}/{den}: {undecided} undecided");

            // Planted: a `Q` word inside an entry's undecided band (sign +, R = 0,
            // V = 0), and a `V` inside the enclosure of αᴿ for a random R (Q decided).
            let m = t.block_bits;
            let (low, high) = (low_bits(m), m - low_bits(m));
            let mut planted = Vec::new();
            for c in 0..probe::len(&t.quotient) {
                if let Some(u) = (probe::lo(&t.quotient)[c]..=probe::hi(&t.quotient)[c])
                    .find(|&u| t.quotient.fast(u).is_err())
                {
                    planted.push([u << low, 0]);
                }
            }
            let bands = planted.len();
            assert!(bands > 0, "τ = {num}/{den}: no undecided Q word");
            for _ in 0..100 {
                let r = rng.next_u64() & ((1u64 << m) - 1);
                let lo = t.power_lower_bound(r);
                let prefix = (((2 * u128::from(lo) + t.power_width) / 2) >> high) as u64;
                let first = (1u64 << 62) | (r & ((1u64 << low) - 1)); // Q = 0, decided
                planted.push([first, (prefix << high) | (r >> low)]);
            }
            for &[first, second] in &planted {
                assert!(!fast(first, second).1, "τ = {num}/{den}: planted words decided");
            }
            for seed in 0..4 {
                let words: Vec<u64> = planted.iter().flatten().copied().collect();
                let n = planted.len();
                let mut recorder = Recorder::new(n);
                noise.sample_batch(
                    n,
                    &mut recorder,
                    &mut BitSource::new(&mut Replay::new(words.clone(), seed)),
                );
                let reference = reference_batch(&noise, n, &mut Replay::new(words, seed));
                assert_eq!(recorder.finish(), reference, "τ = {num}/{den}, seed {seed}");
            }
        }
        assert!(checked >= 900_000, "{checked}");
    }
}
