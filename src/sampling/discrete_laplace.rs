//! The discrete Laplace (two-sided geometric) distribution
//! `Pr[Z = z] = (1 − α)/(1 + α) · α^|z|`, `α = exp(−1/τ)`, sampled exactly with a number
//! of random words that is independent of the sample.

use super::certified::{Cdt, Threshold};
use super::{BitSource, Rational};
use rand_core::CryptoRng;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Tables built so far, by scale: a deterministic function of public parameters, so
/// sharing them changes nothing but the construction time. Cleared when full.
static CACHE: OnceLock<Mutex<HashMap<Rational, Arc<Tables>>>> = OnceLock::new();
/// Most scales kept in [`CACHE`].
const CACHE_CAPACITY: usize = 256;

/// Most chunks of the remainder (`m ≤ 61` bits, 10 bits per chunk).
const MAX_CHUNKS: usize = 7;
/// Bits of the remainder per chunk table (`2¹⁰ − 1` entries each).
const CHUNK_BITS: u32 = 10;

/// Exact sampler of the discrete Laplace distribution with rational scale `τ = num/den`
/// (any `num, den ≥ 1`, so `2⁻⁶⁴ < τ < 2⁶⁴`):
/// `Pr[Z = z] = (1 − α)/(1 + α) · α^|z|` for every integer `z`, `α = exp(−1/τ)`.
///
/// **Algorithm.** Two regimes, both by inversion of certified cumulative-distribution
/// tables (CDT: a count of the thresholds of a decreasing sequence above one uniform
/// real `U`):
///
/// * **`τ < 16`: one word, no rejection.** The top bit of the word is the sign, the
///   other 63 bits give `|Z|` from the table of `Pr[|Z| ≥ c] = 2αᶜ/(1 + α)`, `c ≥ 1`
///   (so `Pr[Z = 0] = (1 − α)/(1 + α)` and `Pr[Z = ±k] = (1 − α)αᵏ/(1 + α)`); the sign
///   of a zero is ignored.
/// * **`τ ≥ 16`.** `Z = ±G` with a fair sign and `G` one-sided geometric,
///   `Pr[G = g] = (1 − α)αᵍ`; the pair (negative, 0), which would count 0 twice, is
///   rejected and the whole trial repeated (Canonne, Kamath & Steinke 2020, Algorithm
///   2; this is **not** the `sign × geometric` sampler of the seed document 002).
///   `G = M·Q + R` with `M = 2ᵐ` the largest power of two `≤ τ/4` (`M = 1`, `G = Q`,
///   for the one-sided [`Geometric`](super::Geometric) below `τ = 16`). `Q` and `R` are
///   independent: `Pr[Q ≥ j] = α^(jM)`, and `R ∈ [0, M)` with `Pr[R = r] ∝ αʳ`, whose
///   10-bit chunks are in turn independent (`αʳ` factors over the binary digits of
///   `r`): chunk `i` with `k` bits and offset `s` has
///   `Pr[chunk ≥ c] = (aᶜ − aᴷ)/(1 − aᴷ)`, `a = α^(2ˢ)`, `K = 2ᵏ`. `Q` uses the low 63
///   bits of the trial's first word (its top bit is the sign); each chunk one further
///   word.
///
/// The tables hold **certified** 64-bit bounds of the thresholds, computed at
/// construction with integer interval arithmetic (192 fractional bits, outward
/// rounding; `exp(−x)` by the alternating Taylor series and binary powering of an
/// enclosure of `e⁻¹`). When the word lies strictly outside the bounds of every
/// threshold, the count is decided by integer comparisons alone (fast path). Otherwise
/// that uniform is extended with further words and compared exactly with enclosures of
/// the thresholds refined to its length plus 64 bits, until decided. No floating point
/// is involved anywhere; the output distribution is **exactly** the discrete Laplace
/// distribution.
///
/// **Draw independence.** Below `τ = 16` a sample draws exactly one word (outside the
/// fallback event `F`, "some comparison needed more words"). Above, every trial draws
/// exactly `1 + ⌈m/10⌉` words ([`words_per_trial`](Self::words_per_trial)) before
/// anything else; the number of trials `N` is geometric with rejection probability
/// `(1 − α)/2` and, as in any rejection sampler with i.i.d. trials, **independent of
/// the accepted value**. So, outside `F`, the number of words drawn is
/// `N·(1 + ⌈m/10⌉)`, statistically independent of `Z`.
///
/// **Fallback bound.** A table entry leaves at most two values of its word undecided
/// (its enclosure is narrower than one unit of the word; asserted at construction in
/// tests). Below `τ = 16` the magnitude table has at most
/// `⌈τ·(63·ln 2 + ln 2)⌉ + 1 ≤ 712` entries, so a sample falls back with probability
/// `≤ 2·712/2⁶³ < 2⁻⁵²`. Above, the `Q` table has at most `⌈63·ln 2·τ/M⌉ + 1 ≤ 351`
/// entries (`τ/M < 8`), so its word falls back with probability `≤ 2·351/2⁶³ < 2⁻⁵³`;
/// each of the `≤ 7` chunk tables has at most 1023 entries, `≤ 2·1023/2⁶⁴ < 2⁻⁵³` each.
/// A trial falls back with probability `< 2⁻⁵³·⁵ + 7·2⁻⁵³ < 2⁻⁵⁰` (union bound), and since
/// `E[N] = 2/(1 + α) ≤ 1.04` for `τ ≥ 16`, a sample does with probability
/// `Pr[F] ≤ E[N]·2⁻⁵⁰ < 2⁻⁴⁹`, for every scale.
///
/// **Cost.** One word per sample below `τ = 16`; above, two (`τ < 2¹³`) to eight words
/// (`τ ≈ 2⁶³`) per trial and `E[N] ≤ 1.04` trials, e.g. 3 words at `τ = 10⁶`, 5 at
/// `τ ≈ 2⁴⁰`. In each table a guide-table lookup (one read and at most three
/// comparisons, the same for every word; logarithmic buckets for the geometric tables,
/// linear ones for the nearly uniform chunks). Construction computes the tables (at
/// most `2·712` or `351 + 7·1023` certified entries).
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

#[derive(Debug)]
struct Tables {
    /// `m`, with `M = 2ᵐ`.
    block_bits: u32,
    /// The table of `Q` (63-bit words).
    quotient: Cdt,
    /// `(offset s, table)` for each chunk of `R` (64-bit words).
    chunks: Vec<(u32, Cdt)>,
    /// For `M = 1`: the table of `|Z|` itself, `Pr[|Z| ≥ c] = 2αᶜ/(1 + α)` (63-bit
    /// words), so that a sample needs no rejection.
    magnitude: Option<Cdt>,
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

impl DiscreteLaplace {
    /// The discrete Laplace distribution of scale `τ` (`α = exp(−1/τ)`).
    ///
    /// The tables are a function of `τ` alone and are shared, through a process-wide
    /// cache of the last 256 scales, by every sampler of the same scale.
    pub fn new(scale: Rational) -> Self {
        let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
        let cached = cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&scale)
            .cloned();
        let tables = cached.unwrap_or_else(|| {
            let tables = Arc::new(Tables::new(scale));
            let mut map = cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if map.len() >= CACHE_CAPACITY {
                map.clear();
            }
            map.insert(scale, Arc::clone(&tables));
            tables
        });
        Self { scale, tables }
    }
}

impl Tables {
    fn new(scale: Rational) -> Self {
        let (num, den) = (scale.num() as u128, scale.den() as u128);
        // M = 1 below τ = 16 (one table, at most 700 entries); above, the largest power
        // of two ≤ τ/4.
        let block_bits = if num < 16 * den {
            0
        } else {
            127 - (num / (4 * den)).leading_zeros()
        };
        let quotient = Cdt::new(
            Threshold {
                step: den << block_bits,
                den: scale.num(),
                size: None,
                two_sided: false,
            },
            63,
        );
        let magnitude = (block_bits == 0).then(|| {
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
        let count = block_bits.div_ceil(CHUNK_BITS);
        let mut chunks = Vec::with_capacity(count as usize);
        let mut offset = 0;
        for i in 0..count {
            // Sizes as even as possible: the remaining bits over the remaining chunks.
            let size = (block_bits - offset).div_ceil(count - i);
            let table = Cdt::new(
                Threshold {
                    step: den << offset,
                    den: scale.num(),
                    size: Some(1u64 << size),
                    two_sided: false,
                },
                64,
            );
            chunks.push((offset, table));
            offset += size;
        }
        debug_assert!(chunks.len() <= MAX_CHUNKS);
        Tables {
            block_bits,
            quotient,
            chunks,
            magnitude,
        }
    }
}

impl DiscreteLaplace {
    /// The scale τ.
    pub fn scale(&self) -> Rational {
        self.scale
    }

    /// The number of 64-bit words each trial draws: `1 + ⌈m/10⌉`, a function of the
    /// scale alone (1 below `τ = 16`). A sample draws `N` times this many (outside the
    /// fallback event), `N ≥ 1` independent of the sample: `N = 1` below `τ = 16`,
    /// `E[N] = 2/(1 + α)` above.
    pub fn words_per_trial(&self) -> usize {
        1 + self.tables.chunks.len()
    }

    /// One sample, from a bit source, as an `i128`. Draws whole words
    /// ([`BitSource::word`]); buffered bits are left untouched.
    #[inline]
    pub fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        if let Some(table) = &self.tables.magnitude {
            // One word: the sign (top bit) and |Z| by inversion; a zero ignores the sign.
            let word = bits.word();
            let magnitude = i128::from(table.sample(word & (u64::MAX >> 1), bits));
            let mask = -i128::from(word >> 63);
            return (magnitude ^ mask) - mask;
        }
        loop {
            let (negative, magnitude) = self.trial(bits);
            // No branch on the sign: with short-circuit `&&` and `if negative`, the
            // accepted zero (always positive) and large outputs (either sign) took
            // different branch patterns, a timing difference that followed the output.
            let reject = negative & (magnitude == 0);
            if reject {
                continue;
            }
            let magnitude = i128::try_from(magnitude).unwrap_or(i128::MAX);
            // Two's complement negation when `negative`, branch-free: (m ⊕ −1) + 1 = −m.
            let mask = -i128::from(negative);
            return (magnitude ^ mask) - mask;
        }
    }

    /// One trial: the sign and `G`, all fixed words drawn first.
    #[inline]
    pub(crate) fn trial<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> (bool, u128) {
        let tables = &*self.tables;
        let first = bits.word();
        let mut words = [0u64; MAX_CHUNKS];
        for word in words.iter_mut().take(tables.chunks.len()) {
            *word = bits.word();
        }
        let negative = first >> 63 == 1;
        let q = tables.quotient.sample(first & (u64::MAX >> 1), bits);
        let mut r: u64 = 0;
        for ((offset, table), &word) in tables.chunks.iter().zip(&words) {
            r |= table.sample(word, bits) << offset;
        }
        let g = (q as u128)
            .saturating_mul(1u128 << tables.block_bits)
            .saturating_add(r as u128);
        (negative, g)
    }

    /// One sample, saturating to the `i64` range.
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        saturate_i64(self.sample_bits(&mut BitSource::new(rng)))
    }

    /// Fills `out` with independent samples (saturating to `i64`). Same distribution and
    /// same words as calling [`sample`](Self::sample) `out.len()` times; use it to
    /// release many values at one scale without re-creating the sampler.
    pub fn sample_into<R: CryptoRng + ?Sized>(&self, out: &mut [i64], rng: &mut R) {
        let mut bits = BitSource::new(rng);
        for slot in out.iter_mut() {
            *slot = saturate_i64(self.sample_bits(&mut bits));
        }
    }

    /// The table entries left undecided per entry, at most (≤ 2 by construction), and
    /// the sizes of the `Q`, chunk and magnitude tables: the inputs of the fallback
    /// bound.
    #[cfg(test)]
    fn table_shape(&self) -> (u64, usize, Vec<usize>, Option<usize>) {
        let t = &*self.tables;
        let worst = t
            .chunks
            .iter()
            .map(|(_, c)| c)
            .chain([&t.quotient])
            .chain(&t.magnitude)
            .map(Cdt::max_undecided_per_entry)
            .max()
            .unwrap_or(0);
        (
            worst,
            t.quotient.len(),
            t.chunks.iter().map(|(_, c)| c.len()).collect(),
            t.magnitude.as_ref().map(Cdt::len),
        )
    }
}

/// Clamps an `i128` into the `i64` range.
#[inline]
pub(crate) fn saturate_i64(value: i128) -> i64 {
    i64::try_from(value).unwrap_or(if value < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{Rng, SeedableRng};

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
    /// table has at most 351 entries and the chunk tables 1023, so a trial falls back
    /// with probability below 2⁻⁵⁰.
    #[test]
    fn tables_satisfy_the_fallback_bound_premises() {
        for scale in scales() {
            let noise = DiscreteLaplace::new(scale);
            let (worst, q_len, chunks, magnitude) = noise.table_shape();
            assert!(worst <= 2, "{scale:?}: {worst}");
            let small = u128::from(scale.num()) < 16 * u128::from(scale.den());
            assert_eq!(magnitude.is_some(), small, "{scale:?}");
            assert_eq!(chunks.is_empty(), small, "{scale:?}");
            let bound = if let Some(m) = magnitude {
                assert!(q_len <= 712 && m <= 712, "{scale:?}: {q_len}, {m}");
                2.0 * m.max(q_len) as f64 / 2f64.powi(63)
            } else {
                assert!(q_len <= 351, "{scale:?}: {q_len}");
                assert!(
                    chunks.len() <= MAX_CHUNKS && chunks.iter().all(|&c| c <= 1023),
                    "{scale:?}"
                );
                2.0 * q_len as f64 / 2f64.powi(63)
                    + chunks.iter().map(|&c| 2.0 * c as f64).sum::<f64>() / 2f64.powi(64)
            };
            assert!(bound < 2f64.powi(-50), "{scale:?}: {bound}");
        }
    }

    /// Each table on its own: `Q` and every chunk follow their exact laws
    /// (`Pr[Q = j] ∝ α^(jM)`, `Pr[chunk = c] ∝ aᶜ` on `[0, K)`), Pearson's chi-square with
    /// α = 1e-3, 10⁵ words per table, critical value from statrs; bins merged so each
    /// expects ≥ 5. Where the chunk's tilt `aᴷ` is below 0.9, a uniform law is rejected.
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
        for (num, den) in [(5000u64, 1u64), (1_000_000, 1), (1, 3)] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let tau = num as f64 / den as f64;
            let t = &*noise.tables;
            let m = 1u64 << t.block_bits;
            let mut tables: Vec<(&Cdt, u32, f64, usize)> =
                vec![(&t.quotient, 63, (-(m as f64) / tau).exp(), t.quotient.len() + 1)];
            for (offset, table) in &t.chunks {
                let a = (-((1u64 << offset) as f64) / tau).exp();
                tables.push((table, 64, a, table.len() + 1));
            }
            for (table, width, a, support) in tables {
                let mut counts = vec![0u64; support + 1];
                let mut bits = BitSource::new(&mut rng);
                for _ in 0..n {
                    let u = bits.word() >> (64 - width);
                    let x = table.sample(u, &mut bits) as usize;
                    counts[x.min(support)] += 1;
                }
                let bounded = table.bound().is_some();
                let weights: Vec<f64> = (0..=support)
                    .map(|c| {
                        if bounded && c == support {
                            0.0
                        } else {
                            a.powi(c as i32)
                        }
                    })
                    .collect();
                let total: f64 = if bounded {
                    weights.iter().sum()
                } else {
                    1.0 / (1.0 - a)
                };
                let mut p: Vec<f64> = weights.iter().map(|w| w / total).collect();
                if !bounded {
                    p[support] = a.powi(support as i32) / (1.0 - a) / total;
                }
                let (stat, critical) = fit(&counts, &p);
                assert!(stat <= critical, "τ = {num}/{den}: {stat} > {critical}");
                if bounded && support > 8 && a.powi(support as i32) < 0.9 {
                    let uniform = vec![1.0 / support as f64; support];
                    let (stat, critical) = fit(&counts[..support], &uniform);
                    assert!(stat > critical, "τ = {num}/{den}: uniform not rejected");
                }
            }
        }
    }

    /// `X = x` holds exactly iff `U < C_x` (or `x = 0`) and `U ≥ C_(x+1)` (or `x` is
    /// the largest value), since the exact thresholds decrease.
    /// Each comparison extends `U` with the same words, from a generator seeded `seed`.
    fn exact_agrees(table: &Cdt, u: u64, x: u64, seed: u64) -> bool {
        let less = |c: u64| {
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            table.exact_less_at(u, c, &mut BitSource::new(&mut rng))
        };
        (x == 0 || less(x)) && (table.bound() == Some(x) || !less(x + 1))
    }

    /// The guide tables give the same certain count as a binary search: on random
    /// words, on both sides of every threshold bound and at every bucket edge (linear
    /// and logarithmic). Every table (`Q`, chunks, magnitude), at every scale, is guided.
    #[test]
    fn guide_tables_count_like_a_binary_search() {
        let mut rng = ChaCha20Rng::seed_from_u64(0x6D1DE);
        for (num, den) in [
            (1u64, 3u64),
            (1, 1),
            (10, 1),
            (159, 10),
            (1_000_000, 1),
            ((1 << 40) + 3, 1),
            (u64::MAX, 1),
        ] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let t = &*noise.tables;
            let mut tables: Vec<(&Cdt, u32)> = vec![(&t.quotient, 63)];
            tables.extend(t.chunks.iter().map(|(_, c)| (c, 64)));
            tables.extend(t.magnitude.iter().map(|c| (c, 63)));
            for (i, (table, width)) in tables.into_iter().enumerate() {
                assert!(table.is_guided(), "τ = {num}/{den}: table {i} not guided");
                let mask = u64::MAX >> (64 - width);
                let mut words: Vec<u64> = (0..20_000).map(|_| rng.next_u64() & mask).collect();
                for &l in &table.lo {
                    words.extend([l, l.saturating_sub(1), l.saturating_add(1) & mask]);
                }
                for b in 0..1u64 << 10 {
                    let first = b << (width - 10);
                    words.extend([first, first.saturating_sub(1), first | 1]);
                }
                for p in 0..width {
                    for digits in 0..16u64 {
                        let first = (1u64 << p) | (digits << p.saturating_sub(4));
                        words.extend([first, first - 1, first | 1]);
                    }
                }
                for u in words {
                    let fast = table.fast(u).unwrap_or_else(|c| c);
                    assert_eq!(
                        fast,
                        table.certain_by_search(u),
                        "τ = {num}/{den}, table {i}, u = {u}"
                    );
                }
            }
        }
    }

    /// The certified fast path agrees with an arbitrary-precision evaluation on 10⁶
    /// random words (spread over the tables of three scales), and words planted inside
    /// every entry's undecided band take the exact path and still give the exact answer.
    #[test]
    fn certified_fast_path_agrees_with_exact_comparisons() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xCE27);
        let mut checked = 0u64;
        for (num, den) in [(1u64, 3u64), (10, 1), ((1 << 40) + 3, 1)] {
            let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
            let t = &*noise.tables;
            let mut tables: Vec<(&Cdt, u32)> = vec![(&t.quotient, 63)];
            tables.extend(t.chunks.iter().map(|(_, c)| (c, 64)));
            tables.extend(t.magnitude.iter().map(|c| (c, 63)));
            let per_table = 1_000_000 / (3 * tables.len() as u64) + 1;
            for (table, width) in tables {
                for _ in 0..per_table {
                    let u = rng.next_u64() >> (64 - width);
                    if let Ok(x) = table.fast(u) {
                        assert!(exact_agrees(table, u, x, checked), "τ = {num}/{den}, u = {u}");
                        checked += 1;
                    }
                }
                let mut planted = 0;
                for c in 0..table.len() {
                    for u in table.lo[c]..=table.hi[c] {
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
}
