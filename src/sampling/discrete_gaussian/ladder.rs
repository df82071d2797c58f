//! The discrete Gaussian below `⌊σ⌋ = 4096` with **nothing certified built per σ**: the
//! block tables belong to a fixed ladder of reference standard deviations `σ̂`, each
//! certified once per process on first use and shared by every σ; a σ adds a rung
//! index and three integers computed by a few integer divisions (see the type docs of
//! [`DiscreteGaussianSampler`](super::DiscreteGaussianSampler) for the algorithm and
//! its bounds, which the tests below recompute from the tables).

use super::super::BitSource;
use super::super::certified::{Big, Cdt, Interval, LazyUniform, Weights, exact_less_exp_neg, exp_neg};
use super::super::discrete_laplace::{RUNGS, rung_at_least, rung_numerator};
use super::super::fixed_exp::uniform_in_band;
use super::{band, div_shifted, exact_geometric, exponent, inverse_one_minus, rate, suffix_sums};
use rand_core::CryptoRng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// `1/(2σ̂²) = HALF/p²` for the rung `σ̂ = p/64`.
const HALF: u128 = 2048;
/// `2⁶³·E` is capped here (`E ≥ 64`: `exp(−E) < 2⁻⁹²`, and the band is `[0, band_span]`).
pub(super) const CAP: u128 = 64 << 63;
/// `e ≤ 2⁶³·E < e + SLACK` below the cap.
pub(super) const SLACK: u128 = 4;
/// `C ≤ 2^(63 + EXCESS_BITS)·c < C + 2`; `J² < 2^(EXCESS_BITS − 1)`.
const EXCESS_BITS: u32 = 20;
/// `C` is stored at most this large: it is reached only when `c ≥ 2¹⁷ − 8`, where every
/// `J ≥ 1` has `E ≥ 64` (the cap) and `J = 0` has `E = 0`.
const EXCESS_CAP: u128 = 1 << 100;
/// The largest `m` below `⌊σ⌋ = 4096` (`σ/M > 32` there).
pub(super) const MAX_BLOCK_BITS: u32 = 6;
/// The one-sided rungs (blocks, `M ≥ 2`): `σ̂ = p/64` with `p = 2048 + 32(i + 1)`,
/// `i < 64`, so `σ̂ = 32.5, 33, …, 64`, consecutive ones at most `65/64` apart.
pub(super) const BLOCK_RUNGS: usize = 64;

/// The numerator `p` (`σ̂ = p/64`) of two-sided rung `k < 129` (the discrete Laplace's
/// ladder) or one-sided rung `k < 64`.
pub(super) const fn numerator(k: usize, two_sided: bool) -> u64 {
    if two_sided {
        rung_numerator(k)
    } else {
        2048 + 32 * (k as u64 + 1)
    }
}

/// Rung tables built so far (both kinds), for the tests and benches.
static BUILT: AtomicU64 = AtomicU64::new(0);

/// A rung's certified table of blocks: `Pr[J = j] = w_j/S` for the weights of
/// [`RungWeights`], `j < K`, and the tail `J ≥ K`.
#[derive(Debug)]
pub(super) struct Rung {
    pub(super) table: Cdt,
    /// `p`, with `σ̂ = p/64`.
    pub(super) p: u64,
    /// `K = ⌈10σ̂⌉` regular blocks.
    pub(super) blocks: u64,
    /// The weights behind `table` (for the tests of its bounds).
    #[cfg(test)]
    pub(super) weights: Arc<RungWeights>,
}

/// `K = ⌈10σ̂⌉ = ⌈10p/64⌉` (at most 640), so `K²/(2σ̂²) ≥ 50`.
pub(super) const fn rung_blocks(p: u64) -> u64 {
    (10 * p).div_ceil(64)
}

/// The table of rung `k`: two-sided (`|Ĵ|` with `w_0 = 1`, `w_j = 2h_j`; every `σ ≤
/// 64`) or one-sided (`w_j = h_j`; the blocks of `σ > 64`). Built on first use, once
/// per process.
pub(super) fn rung(k: usize, two_sided: bool) -> &'static Rung {
    static TWO_SIDED: [OnceLock<Rung>; RUNGS] = [const { OnceLock::new() }; RUNGS];
    static ONE_SIDED: [OnceLock<Rung>; BLOCK_RUNGS] = [const { OnceLock::new() }; BLOCK_RUNGS];
    let cell = if two_sided { &TWO_SIDED[k] } else { &ONE_SIDED[k] };
    cell.get_or_init(|| {
        BUILT.fetch_add(1, Ordering::Relaxed);
        let p = numerator(k, two_sided);
        let weights = Arc::new(RungWeights {
            p,
            blocks: rung_blocks(p),
            two_sided,
        });
        Rung {
            table: Cdt::weighted(weights.clone(), 63),
            p,
            blocks: rung_blocks(p),
            #[cfg(test)]
            weights,
        }
    })
}

/// The number of rung tables built in this process (at most `129 + 64`).
pub(super) fn tables_built() -> u64 {
    BUILT.load(Ordering::Relaxed)
}

/// Every rung table: the 129 two-sided (`σ ≤ 64`) and the 64 one-sided (blocks have
/// `r = σ/M ∈ (32, 64]`): 193 tables.
pub(super) fn reachable() -> impl Iterator<Item = (usize, bool)> {
    (0..RUNGS)
        .map(|k| (k, true))
        .chain((0..BLOCK_RUNGS).map(|k| (k, false)))
}

/// Builds every [`reachable`] table (those not built yet).
pub(super) fn build_all() {
    for (k, two_sided) in reachable() {
        rung(k, two_sided);
    }
}

/// `h_j = exp(−j²/(2σ̂²))` for `j < K` (doubled for `j ≥ 1` when two-sided) and the
/// tail's `w_K = h_K/(1 − ρ)`, `ρ = exp(−K/σ̂²)` (doubled when two-sided): the law of
/// `J = K + G`, `Pr[G ≥ g] = ρ^g`, with `w_K(1 − ρ)ρ^G = exp(−(K² + 2KG)/(2σ̂²)) ≥
/// exp(−J²/(2σ̂²))`.
#[derive(Debug)]
pub(super) struct RungWeights {
    pub(super) p: u64,
    pub(super) blocks: u64,
    pub(super) two_sided: bool,
}

impl Weights for RungWeights {
    /// Suffix sums at `p + 64` fractional bits: `h_(j+1) = h_j·f_j`,
    /// `f_(j+1) = f_j·exp(−1/σ̂²)`, `f_0 = exp(−1/(2σ̂²))`, every product rounded
    /// outward; after `K` steps `h = h_K`.
    fn suffix_sums(&self, p: u64) -> Vec<Interval> {
        let wp = p + 64;
        let square = self.p * self.p; // ≤ 2²⁴
        let mut factor = exp_neg(HALF, square, wp);
        let step = exp_neg(2 * HALF, square, wp);
        let mut h = Interval::exact(Big::pow2(wp));
        let double = |x: &Interval| Interval {
            lo: x.lo.shl(1),
            hi: x.hi.shl(1),
        };
        let mut weights = Vec::with_capacity(self.blocks as usize + 1);
        for j in 0..self.blocks {
            weights.push(if self.two_sided && j > 0 {
                double(&h)
            } else {
                h.clone()
            });
            h = h.mul(&factor, wp);
            factor = factor.mul(&step, wp);
        }
        let rho = exp_neg(2 * HALF * u128::from(self.blocks), square, wp);
        let tail = h.mul(&inverse_one_minus(&rho, wp), wp);
        weights.push(if self.two_sided { double(&tail) } else { tail });
        suffix_sums(weights)
    }
}

/// What a σ adds to its rung (see the type docs of
/// [`DiscreteGaussianSampler`](super::DiscreteGaussianSampler)).
#[derive(Clone, Copy, Debug)]
pub(super) struct Scaled {
    num: u128,
    den: u64,
    pub(super) rung: &'static Rung,
    /// `m`, `M = 2ᵐ ≤ 64`.
    pub(super) block_bits: u32,
    /// `M = 1`: the two-sided table (a zero ignores the sign, no (negative, 0)
    /// rejection).
    pub(super) two_sided: bool,
    /// `σ = σ̂` with `M = 1`: `E = 0` in every regular block, one word per trial.
    pub(super) on_rung: bool,
    /// `Q₆₄ = ⌊2ˢ/(2σ²)⌋` and `s − 63` (zero when `M = 1`, where `R = 0`).
    rate: u64,
    rate_shift: u32,
    /// `C`, with `C ≤ 2⁸³·c < C + 2` for `c = M²/(2σ²) − 1/(2σ̂²)` (or [`EXCESS_CAP`]).
    pub(super) excess: u128,
}

impl Scaled {
    /// The sampler of `σ² = num/den < 4096²`.
    pub(super) fn new(num: u128, den: u64) -> Self {
        let wide = u128::from(den);
        // M = 1 up to σ = 64; above, the largest 2ᵐ with σ/2ᵐ > 32 (σ² > 1024·4ᵐ), so
        // σ/M ∈ (32, 64], and m ≤ 6 below σ = 4096.
        let mut block_bits = 0;
        while num > (1024 * wide) << (2 * (block_bits + 1)) {
            block_bits += 1;
        }
        debug_assert!(block_bits <= MAX_BLOCK_BITS);
        let blocks_den = wide << (2 * block_bits); // M²·den < 2⁷⁶
        // The rung: the least p with (p/64)² ≥ r² = num/(M²·den), i.e.
        // p² ≥ x = ⌈4096·num/(M²·den)⌉ ≤ 4096²  (num < 4096²·den < 2⁸⁸).
        let x = (4096 * num).div_ceil(blocks_den);
        let root = x.isqrt();
        let least = if root * root < x { root + 1 } else { root };
        let two_sided = block_bits == 0;
        // Blocks: r > 32, so least > 2048.
        let k = if two_sided {
            rung_at_least(least.max(1) as u64)
        } else {
            (least as usize - 2048).div_ceil(32) - 1
        };
        let table = rung(k, two_sided);
        let square = u128::from(table.p) * u128::from(table.p);
        // C = ⌊2⁸³·M²·den/(2num)⌋ − ⌈2⁸³·2048/p²⌉, saturated at 0; capped when
        // M²·den/(2num) ≥ 2¹⁷.
        let excess = if blocks_den >= (2 * num) << 17 {
            EXCESS_CAP
        } else {
            div_shifted(blocks_den, 63 + EXCESS_BITS, 2 * num)
                .0
                .saturating_sub((1u128 << (63 + EXCESS_BITS + 11)).div_ceil(square))
        };
        let (rate, rate_shift) = if two_sided { (0, 0) } else { rate(num, den) };
        Self {
            num,
            den,
            rung: table,
            block_bits,
            two_sided,
            on_rung: two_sided && wide * square == 4096 * num,
            rate,
            rate_shift,
            excess,
        }
    }

    /// Words per trial: 1 on a rung with `M = 1`, else 2.
    pub(super) fn words_per_trial(&self) -> usize {
        if self.on_rung { 1 } else { 2 }
    }

    /// The lower end `e` of the bracket `e ≤ 2⁶³·E < e + 4` of block `j`'s exponent for
    /// `n = R(2jM + R)`, or [`CAP`] when `E ≥ 64`.
    #[inline(always)]
    pub(super) fn exponent(&self, j: u64, n: u128) -> u128 {
        let within = exponent(n, self.rate, self.rate_shift);
        let across = (u128::from(j * j) * self.excess) >> EXCESS_BITS;
        (within + across).min(CAP)
    }

    /// One sample.
    #[inline]
    pub(super) fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        let (table, blocks) = (&self.rung.table, self.rung.blocks);
        if self.on_rung {
            // σ = σ̂, M = 1: |Z| by inversion from one word, the sign its top bit.
            loop {
                let word = bits.word();
                let j = table.sample(word & (u64::MAX >> 1), bits);
                let magnitude = if j < blocks {
                    i128::from(j)
                } else {
                    match self.tail(bits) {
                        Some(y) => y,
                        None => continue,
                    }
                };
                let mask = -i128::from(word >> 63);
                return (magnitude ^ mask) - mask;
            }
        }
        let m = self.block_bits;
        loop {
            let first = bits.word();
            let second = bits.word();
            let j = table.sample(first & (u64::MAX >> 1), bits);
            let negative = first >> 63 == 1;
            let mask = -i128::from(negative);
            if j >= blocks {
                match self.tail(bits) {
                    Some(y) => return (y ^ mask) - mask,
                    None => continue,
                }
            }
            let r = second & ((1u64 << m) - 1);
            // V: the 64 − m ≥ 58 bits of the second word above R.
            let (uniform, uniform_bits) = (second >> m, 64 - m);
            let start = u128::from(j) << m;
            let y = start | u128::from(r);
            let n = u128::from(r) * (2 * start + u128::from(r));
            let band = band(self.exponent(j, n), SLACK);
            let accepted = uniform_in_band(band, uniform, uniform_bits, || self.exact(j, y), bits);
            // Both decisions computed, no short-circuit: with blocks, (negative, 0)
            // would count 0 twice; the two-sided table's zero ignores the sign.
            if accepted & !(negative & (y == 0) & !self.two_sided) {
                let y = y as i128;
                return (y ^ mask) - mask;
            }
        }
    }

    /// The acceptance exponent of `y` in regular block `j` exactly,
    /// `E = y²/(2σ²) − j²/(2σ̂²) = (y²·den·p² − 4096·num·j²)/(2num·p²)`, as (numerator,
    /// denominator).
    #[cold]
    pub(super) fn exact(&self, j: u64, y: u128) -> (Big, Big) {
        let square = Big::from_u128(u128::from(self.rung.p) * u128::from(self.rung.p));
        let y = Big::from_u128(y);
        let numerator = y
            .mul(&y)
            .mul(&Big::from_u128(u128::from(self.den)))
            .mul(&square)
            .sub_sat(
                &Big::from_u128(2 * HALF * self.num).mul(&Big::from_u128(u128::from(j) * u128::from(j))),
            );
        (numerator, Big::from_u128(2 * self.num).mul(&square))
    }

    /// The tail (`J ≥ K`, probability below `2⁻⁶⁸` per trial), by exact comparisons
    /// alone: `J = K + G` with `Pr[G ≥ g] = ρ^g = exp(−4096·K·g/p²)`, `R` uniform on
    /// `[0, M)` (the low bits of a fresh word), and `y = JM + R` accepted with
    /// probability `exp(−(y²/(2σ²) − (K² + 2KG)/(2σ̂²)))`. `None` when rejected.
    #[cold]
    #[inline(never)]
    pub(super) fn tail<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> Option<i128> {
        let k = u128::from(self.rung.blocks);
        let square = u128::from(self.rung.p) * u128::from(self.rung.p);
        let g = exact_geometric(2 * HALF * k, square, bits);
        let r = if self.block_bits == 0 {
            0
        } else {
            bits.word() & ((1u64 << self.block_bits) - 1)
        };
        let g_big = Big::from_u128(g);
        let j = Big::from_u128(k).add(&g_big);
        let y = j
            .shl(u64::from(self.block_bits))
            .add(&Big::from_u128(u128::from(r)));
        // W_J·2num·p² = 4096·num·(K² + 2KG).
        let weight = Big::from_u128(k * k).add(&g_big.mul(&Big::from_u128(2 * k)));
        let square = Big::from_u128(square);
        let numerator = y
            .mul(&y)
            .mul(&Big::from_u128(u128::from(self.den)))
            .mul(&square)
            .sub_sat(&Big::from_u128(2 * HALF * self.num).mul(&weight));
        let denominator = Big::from_u128(2 * self.num).mul(&square);
        let mut v = LazyUniform::new(bits.word(), 64);
        let accepted = exact_less_exp_neg(&mut v, &numerator, &denominator, bits);
        accepted.then(|| i128::try_from(y.to_u128_sat()).unwrap_or(i128::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{
        assert_bracket_and_band, assert_table_holds, mean_excess_z, pairs, reference_count,
    };
    use super::super::{DiscreteGaussianSampler, band_span};
    use super::*;
    use crate::audit::CountingRng;
    use crate::sampling::certified::{exp_neg_big, probe};
    use rand_chacha::ChaCha20Rng;
    use rand_core::{Rng, SeedableRng};

    /// σ² below `⌊σ⌋ = 4096`, as `(num, den)`: every kind of rung and block size.
    fn variances() -> Vec<(u128, u64)> {
        vec![
            (1, 1 << 60),                       // σ = 2⁻³⁰: C capped
            (12_345_678_901_234_567, u64::MAX), // σ ≈ 0.026, wide denominator
            (1, 100),                           // σ = 1/10, below the lowest rung
            (1, 16),                            // σ = 1/4, the lowest rung
            (1, 4),                             // σ = 1/2, a rung
            (3, 10),                            // σ² = 0.3
            (1, 1),                             // σ = 1
            (2, 1),                             // σ = √2
            (10u128 << 60, 1 << 60),            // σ² = 10, den = 2⁶⁰
            (100, 1),                           // σ = 10
            (3969, 1),                          // σ = 63, no rung
            (4096, 1),                          // σ = 64, the top rung
            (4097, 1),                          // M = 2, r just above 32
            (4900 * 5, 5),                      // σ = 70, den = 5
            (1_000_000, 1),                     // σ = 1000, M = 16
            (1_000_007, 1),                     // σ² = 1000007
            (9_000_000, 7),                     // σ ≈ 1134, rational
            (27_000_001, 3),                    // σ ≈ 3000, M = 64
            (4096 * 4096 - 1, 1),               // ⌊σ⌋ = 4095, the last of the ladder
        ]
    }

    /// The stated lower bound of a block trial's acceptance.
    const BLOCK_ACCEPTANCE: f64 = 0.97;

    /// `x` at `bits` fractional bits as an `f64` (for the acceptance bound's margin).
    fn approx(x: &Big, bits: u64) -> f64 {
        x.shr(bits - 40).to_u128_sat() as f64 / (1u64 << 40) as f64
    }

    /// The premises of the fallback and acceptance bounds, for every reachable table:
    /// `K = ⌈10σ̂⌉ ≤ 640`, `K` entries, at most two undecided words per entry, the tail's
    /// probability below `2⁻⁶⁸` (from the certified sums); for the one-sided tables,
    /// `√(2π)·r/(2S) > 0.97` at the least `r` each serves (the rung below, or 32); 193
    /// tables in all, and the memory they hold.
    #[test]
    fn every_reachable_rung_meets_the_premises_of_its_bounds() {
        let mut bytes = 0;
        let reached: Vec<(usize, bool)> = reachable().collect();
        assert_eq!(reached.len(), 193);
        for &(k, two_sided) in &reached {
            let r = rung(k, two_sided);
            let label = format!("rung {k} (p = {}), two-sided: {two_sided}", r.p);
            assert_eq!(r.blocks, rung_blocks(r.p));
            assert!(r.blocks <= 640 && r.blocks * 64 >= 10 * r.p, "{label}");
            assert_eq!(probe::len(&r.table) as u64, r.blocks, "{label}");
            assert!(probe::max_undecided_per_entry(&r.table) <= 2, "{label}");
            if !probe::is_guided(&r.table) {
                println!("{label}: no guide");
            }
            let sums = r.weights.suffix_sums(128);
            let tail = &sums[r.blocks as usize];
            assert!(
                tail.hi.shl(68).cmp(&sums[0].lo).is_lt(),
                "{label}: tail too heavy"
            );
            if !two_sided {
                // The least r this rung serves: above the rung below (or above 32).
                let least = if k == 0 { 2048 } else { numerator(k - 1, false) } as f64 / 64.0;
                let rate = (2.0 * core::f64::consts::PI).sqrt() * least / (2.0 * approx(&sums[0].hi, 192));
                assert!(rate > BLOCK_ACCEPTANCE, "{label}: acceptance {rate}");
            }
            bytes += probe::heap_bytes(&r.table);
        }
        println!("193 rung tables: {bytes} bytes of bounds and guides");
        assert!(bytes < 8 << 20, "{bytes}");
    }

    /// `h_j` from its own exponential at 256 bits (not the recurrence), doubled for
    /// `j ≥ 1` when two-sided, and the tail `h_K/(1 − ρ)`: suffix sums as `(lo, hi)`.
    fn reference_sums(r: &Rung, two_sided: bool) -> Vec<(Big, Big)> {
        let p = 256;
        let square = r.p * r.p;
        let double = |x: Interval| Interval {
            lo: x.lo.shl(1),
            hi: x.hi.shl(1),
        };
        let mut weights: Vec<Interval> = (0..r.blocks)
            .map(|j| {
                let h = exp_neg(HALF * u128::from(j * j), square, p);
                if two_sided && j > 0 { double(h) } else { h }
            })
            .collect();
        let k = u128::from(r.blocks);
        let tail =
            exp_neg(HALF * k * k, square, p).mul(&inverse_one_minus(&exp_neg(2 * HALF * k, square, p), p), p);
        weights.push(if two_sided { double(tail) } else { tail });
        pairs(suffix_sums(weights))
    }

    const TABLE_CASES: [(usize, bool); 8] = [
        (0, true),
        (5, true),
        (37, true),
        (80, true),
        (112, true),
        (0, false),
        (128, true),
        (63, false),
    ];

    /// The rung tables' bounds hold the thresholds of the independent evaluation:
    /// `lo[c]/2⁶³ ≤ C_c ≤ (hi[c] + 1)/2⁶³` is consistent with
    /// `C_c ∈ [S_c.lo/S_0.hi, S_c.hi/S_0.lo]` for every entry.
    #[test]
    fn rung_thresholds_hold_the_direct_evaluation() {
        for (k, two_sided) in TABLE_CASES {
            let r = rung(k, two_sided);
            let label = format!("rung {k}, two-sided: {two_sided}");
            assert_table_holds(&r.table, &reference_sums(r, two_sided), &label);
        }
    }

    /// The certified fast path of the rung tables agrees with the 256-bit reference on
    /// 10⁶ random words (half of them shifted right by a random amount, to reach the
    /// tail); words planted inside the bounds of an entry take the exact path and agree
    /// with the reference on the same extended uniform (replayed words).
    #[test]
    fn the_rung_tables_agree_with_a_256_bit_reference() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xB10C);
        let (mut decided, mut planted) = (0u64, 0u64);
        for (k, two_sided) in TABLE_CASES {
            let r = rung(k, two_sided);
            let sums = reference_sums(r, two_sided);
            for i in 0..130_000 {
                let word = rng.next_u64() >> 1;
                let u = if i % 2 == 0 {
                    word
                } else {
                    word >> (rng.next_u64() % 63)
                };
                if let Ok(x) = r.table.fast(u) {
                    let reference = reference_count(&sums, &Big::from_u128(u.into()), 63);
                    assert_eq!(Some(x), reference, "rung {k}, u = {u}");
                    decided += 1;
                }
            }
            for c in 0..probe::len(&r.table) {
                for u in [probe::lo(&r.table)[c], probe::hi(&r.table)[c]] {
                    if r.table.fast(u).is_ok() {
                        continue;
                    }
                    let mut replay = rng.clone();
                    let x = r.table.sample(u, &mut BitSource::new(&mut rng));
                    // U's first 63 + 128 bits: the exact path read at most two words.
                    let (w1, w2) = (replay.next_u64(), replay.next_u64());
                    let prefix = Big::from_u128(u.into())
                        .shl(128)
                        .add(&Big::from_u128(u128::from(w1) << 64 | u128::from(w2)));
                    let reference = reference_count(&sums, &prefix, 191);
                    assert_eq!(Some(x), reference, "rung {k}, planted u = {u}");
                    planted += 1;
                }
            }
        }
        println!("rung tables: {decided} words decided by the fast path, {planted} planted");
        assert!(decided >= 1_000_000, "{decided}");
        assert!(planted >= 100, "{planted}");
    }

    /// The per-σ constants hold their definitions (big-integer checks): `M = 1` for
    /// `σ ≤ 64`, else `32 < σ/M ≤ 64`; the rung is the least `σ̂ ≥ σ/M`; `C ≤ 2⁸³·c <
    /// C + 2` for `c = M²/(2σ²) − 1/(2σ̂²)` (or `c ≥ 2¹⁷ − 8` where `C` is capped);
    /// `Q₆₄ = ⌊2ˢ/(2σ²)⌋ ∈ [2⁶³, 2⁶⁴)` when `M ≥ 2`; one word exactly when `c = 0`,
    /// `M = 1`.
    #[test]
    fn the_scale_parameters_hold_their_definitions() {
        for (num, den) in variances() {
            let s = Scaled::new(num, den);
            let label = format!("σ² = {num}/{den}");
            let big = Big::from_u128;
            let m2den = u128::from(den) << (2 * s.block_bits);
            if s.block_bits == 0 {
                assert!(num <= 4096 * u128::from(den), "{label}");
            } else {
                assert!(1024 * m2den < num && num <= 4096 * m2den, "{label}");
            }
            let p = s.rung.p;
            let square = u128::from(p) * u128::from(p);
            assert!(square * m2den >= 4096 * num, "{label}: rung below σ/M");
            let two_sided = s.block_bits == 0;
            let count = if two_sided { RUNGS } else { BLOCK_RUNGS };
            let index = (0..count).find(|&k| numerator(k, two_sided) == p).unwrap();
            if index > 0 {
                let below = u128::from(numerator(index - 1, two_sided)).pow(2);
                assert!(below * m2den < 4096 * num, "{label}: a lower rung would do");
            }
            // c = (M²·den·p² − 4096·num)/(2num·p²).
            let c_num = big(square).mul(&big(m2den)).sub_sat(&big(4096 * num));
            let c_den = big(2 * num).mul(&big(square));
            if s.excess == EXCESS_CAP {
                assert!(c_num.cmp(&c_den.mul(&big((1 << 17) - 8))).is_ge(), "{label}");
            } else {
                assert!(big(s.excess).mul(&c_den).cmp(&c_num.shl(83)).is_le(), "{label}");
                assert!(
                    c_num.shl(83).cmp(&big(s.excess + 2).mul(&c_den)).is_lt(),
                    "{label}"
                );
            }
            assert_eq!(s.on_rung, s.block_bits == 0 && c_num.is_zero(), "{label}");
            if s.block_bits > 0 {
                let shifted = big(u128::from(den)).shl(u64::from(s.rate_shift) + 63);
                assert!(big(u128::from(s.rate)).mul(&big(2 * num)).cmp(&shifted).is_le());
                assert!(
                    shifted
                        .cmp(&big(u128::from(s.rate) + 1).mul(&big(2 * num)))
                        .is_lt()
                );
                assert!(s.rate >= 1 << 63, "{label}");
            }
        }
    }

    /// `(j, R)` for the exponent tests: random and extreme.
    fn cases(s: &Scaled, rng: &mut ChaCha20Rng, count: usize) -> Vec<(u64, u64)> {
        let (k, m) = (s.rung.blocks, s.block_bits);
        let mut cases: Vec<(u64, u64)> = (0..count)
            .map(|_| (rng.next_u64() % k, rng.next_u64() & ((1 << m) - 1)))
            .collect();
        cases.extend([
            (0, 0),
            (0, (1 << m) - 1),
            (1, 0),
            (k - 1, (1 << m) - 1),
            (k - 1, 0),
        ]);
        cases
    }

    /// `e ≤ 2⁶³·E < e + 4` for the exact `E = y²/(2σ²) − j²/(2σ̂²)` on random and
    /// extreme `(j, R)`, and the band holds `2⁶⁴·exp(−E)` (256-bit enclosure); at the cap,
    /// `E ≥ 64` and the band is `[0, band_span(4)]`.
    #[test]
    fn the_acceptance_exponent_and_band_hold_the_exact_values() {
        let mut rng = ChaCha20Rng::seed_from_u64(0x263);
        let mut capped = 0;
        for (num, den) in variances() {
            let s = Scaled::new(num, den);
            for (j, r) in cases(&s, &mut rng, 3000) {
                let start = u128::from(j) << s.block_bits;
                let (y, n) = (start + u128::from(r), u128::from(r) * (2 * start + u128::from(r)));
                let e = s.exponent(j, n);
                let exact = s.exact(j, y);
                let label = format!("σ² = {num}/{den}, j = {j}, r = {r}");
                if e == CAP {
                    assert!(exact.0.cmp(&exact.1.mul(&Big::from_u128(64))).is_ge(), "{label}");
                    assert_eq!(band(e, SLACK), (0, band_span(SLACK as u64)), "{label}");
                    capped += 1;
                } else {
                    assert_bracket_and_band(e, SLACK, &exact, &label);
                }
            }
        }
        assert!(capped >= 1000, "{capped}");
    }

    /// The acceptance decision (band, then exact comparison inside it) agrees with a
    /// 256-bit evaluation of `exp(−E)` on 10⁶ uniforms: 100 uniforms for each of 10⁴
    /// random `(j, R)`, with the sampler's prefix length (`64 − m` bits).
    #[test]
    fn acceptance_decisions_agree_with_a_256_bit_reference() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xACC);
        let mut checked = 0u64;
        for (num, den) in [(2u128, 1u64), (3, 10), (3969, 1), (1_000_007, 1), (27_000_001, 3)] {
            let s = Scaled::new(num, den);
            let len = 64 - s.block_bits;
            for (j, r) in cases(&s, &mut rng, 1995) {
                let start = u128::from(j) << s.block_bits;
                let (y, n) = (start + u128::from(r), u128::from(r) * (2 * start + u128::from(r)));
                let band = band(s.exponent(j, n), SLACK);
                let (num_e, den_e) = s.exact(j, y);
                let e = exp_neg_big(&num_e, &den_e, 256);
                for _ in 0..100 {
                    let v = rng.next_u64() >> (64 - len);
                    let mut bits = BitSource::new(&mut rng);
                    let accepted = uniform_in_band(band, v, len, || s.exact(j, y), &mut bits);
                    // V ∈ [v, v + 1)/2^len: decided by the reference unless it meets e.
                    let (low, high) = (Big::from_u128(v.into()), Big::from_u128(u128::from(v) + 1));
                    if high.shl(256 - u64::from(len)).cmp(&e.lo).is_le() {
                        assert!(accepted, "σ² = {num}/{den}, y = {y}, v = {v}");
                    } else if low.shl(256 - u64::from(len)).cmp(&e.hi).is_ge() {
                        assert!(!accepted, "σ² = {num}/{den}, y = {y}, v = {v}");
                    } else {
                        continue;
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked >= 999_000, "{checked}");
    }

    /// The tail, forced, at σ = 10 (two-sided, on its rung: `K = 100`), σ = 1000
    /// (`M = 16`, on the one-sided rung `σ̂ = 62.5`: `KM = 10 000`) and σ² = 1 070 000
    /// (`M = 32`, `σ̂ = 32.5`, a rung above `σ/M ≈ 32.3`: `KM = 10 400`): every value lies
    /// at or beyond `KM`, and the mean excess `E[Y − KM | Y ≥ KM]` matches the exact
    /// discrete Gaussian's (f64 sums) within 5 standard errors (two-sided α ≈ 5.7·10⁻⁷
    /// each).
    #[test]
    fn the_tail_has_the_discrete_gaussian_law_beyond_the_table() {
        for (variance, start, trials, seed) in [
            (100u128, 100i128, 3000, 7u64),
            (1_000_000, 10_000, 3000, 8),
            (1_070_000, 10_400, 3000, 9),
        ] {
            let s = Scaled::new(variance, 1);
            assert_eq!(i128::from(s.rung.blocks << s.block_bits), start);
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let mut bits = BitSource::new(&mut rng);
            let excess: Vec<f64> = (0..trials)
                .filter_map(|_| s.tail(&mut bits))
                .map(|y| {
                    assert!(y >= start, "{y}");
                    (y - start) as f64
                })
                .collect();
            assert!(excess.len() >= 300, "{} accepted", excess.len());
            let (first, sigma_squared) = (start as f64, variance as f64);
            let weight = |g: f64| (-((first + g).powi(2) - first * first) / (2.0 * sigma_squared)).exp();
            let z = mean_excess_z(&excess, weight, 20_000);
            println!(
                "σ² = {variance}: tail {} accepted of {trials}, z = {z:.2}",
                excess.len()
            );
            assert!(z.abs() < 5.0, "σ² = {variance}: z = {z}");
        }
    }

    /// The mean number of trials per sample stays below the stated bounds: `17/16` for
    /// `M = 1` (`1.001` below `σ = 1/4`), `1/0.97` for blocks. Trials are counted as
    /// words drawn over words per trial (the fallback, below `2⁻⁴⁷`, never occurs in
    /// `n` samples); the bound must exceed the observed mean by 5 standard errors of a
    /// geometric count (`√((1 − a)/a²/n)` at the bound's acceptance `a`): `n = 10⁵`, and
    /// `10⁶` below `σ = 1/4`, where the bound is within `3·10⁻⁴` of the true mean.
    #[test]
    fn trials_per_sample_stay_below_the_stated_bounds() {
        for (num, den, bound, n, seed) in [
            (1u128, 100u64, 1.001, 1_000_000u64, 11u64),
            (3, 10, 17.0 / 16.0, 100_000, 12),
            (2, 1, 17.0 / 16.0, 100_000, 13),
            (3969, 1, 17.0 / 16.0, 100_000, 14),
            (4097, 1, 1.0 / BLOCK_ACCEPTANCE, 100_000, 15),
            (1_000_007, 1, 1.0 / BLOCK_ACCEPTANCE, 100_000, 16),
        ] {
            let noise = DiscreteGaussianSampler::from_ratio(num, den).unwrap();
            let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(seed));
            for _ in 0..n {
                noise.sample(&mut rng);
            }
            let trials = rng.draws() as f64 / noise.words_per_trial() as f64 / n as f64;
            let a = 1.0 / bound;
            let standard_error = ((1.0 - a) / (a * a) / n as f64).sqrt();
            println!("σ² = {num}/{den}: {trials:.4} trials per sample (bound {bound:.4})");
            assert!(
                trials + 5.0 * standard_error < bound,
                "σ² = {num}/{den}: {trials}"
            );
        }
    }
}
