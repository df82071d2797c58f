//! The discrete Gaussian for `⌊σ⌋ ≥ 4096` with **nothing built per σ**: one proposal
//! table shared by every σ (certified once per process), and per σ only four integers
//! (`M`, the rate of the acceptance exponent and its correction, Lemire's rejection
//! bound), computed in about a microsecond.
//!
//! **The proposal.** With `M = ⌈σ/65⌉ ≥ 64`, the ratio `r = σ/M` lies in
//! `(65(1 − 1/M), 65] ⊂ (63.98, 65]` (`65(M − 1) < σ ≤ 65M`), and for large σ it is
//! `65` to within `65²/σ`. The reference ratio `r̂ = 65 ≥ r` fixes the block
//! weights `w_j = exp(−j²/(2r̂²))`, `j < K = 10r̂ = 650`, and the tail weight
//! `w_K = exp(−K²/(2r̂²))/(1 − ρ) = e^(−50)/(1 − e^(−2/13))`, `ρ = exp(−K/r̂²)` — numbers
//! that do not involve σ, so their certified inversion table ([`Cdt`], built at 192 bits
//! like the per-σ tables of the smaller σ) is built once. A trial
//!
//! 1. draws the sign and the block `J` by inversion of that table (a block `J ≥ K` is
//!    the tail: `J = K + G`, `G` geometric with `Pr[G ≥ g] = ρ^g`);
//! 2. draws `R` uniform on `[0, M)` by Lemire's multiply-shift (`R = ⌊w·M/2⁶⁴⌋` for a
//!    word `w`, exact when the low half of `w·M` is at least `2⁶⁴ mod M`; otherwise the
//!    trial is rejected, probability below `M/2⁶⁴ ≤ 2⁻⁸`), so `y = JM + R`;
//! 3. accepts `y` with probability `exp(−E)`, `E = y²/(2σ²) − W_J`, by one uniform word
//!    `V` compared with a certified bracket of `exp(−E)`, where `W_J = J²/(2r̂²)` for a
//!    regular block and `W_J = 50 + 2G/13` (`= ln(1/(w_K·(1 − ρ)·ρ^G))`) in the tail;
//! 4. returns `±y`, rejecting (negative, 0), which would count 0 twice.
//!
//! `E ≥ 0`: `y ≥ JM` and `(JM)²/(2σ²) = J²/(2r²) ≥ J²/(2r̂²)`, and in the tail
//! `J² ≥ K² + 2K(J − K)`. So every `y` is proposed with probability `e^(−W_J)/(M·S)`
//! (`S = Σ w_j`) and accepted with `exp(−y²/(2σ²) + W_J)`: it is returned with
//! probability `exp(−y²/(2σ²))/(2MS)` for either sign, **exactly** the discrete
//! Gaussian. This is the block rejection of the smaller σ with a proposal whose blocks
//! may be slightly too heavy (by `r̂/r < M/(M − 1) ≤ 64/63`) instead of exactly right,
//! paid for by at most 1.6 % more rejections (about `65/σ`, so none to speak of for
//! large σ).
//!
//! **The acceptance exponent** of a regular block is
//! `E = J²·c + n/(2σ²)` with `c = M²/(2σ²) − 1/(2r̂²) ∈ [0, 2⁻¹⁸)` and
//! `n = R(2JM + R) < 2¹²⁴`. Precomputed: `Q₆₄ = ⌊2ˢ/(2σ²)⌋ ∈ [2⁶³, 2⁶⁴)` (as for the
//! smaller σ: `e₁ = ⌊n·Q₆₄/2^(s−63)⌋` has `e₁ ≤ 2⁶³n/(2σ²) < e₁ + 2`, since
//! `n/(2σ²) < 1301·M²/(2σ²) < 1301/8187 < 1`) and `C = ⌊2⁸³M²/(2σ²)⌋ − ⌈2⁸³/(2r̂²)⌉` (or 0), with
//! `C ≤ 2⁸³c < C + 2`, so `e₂ = ⌊J²C/2²⁰⌋` has
//! `e₂ ≤ 2⁶³J²c < e₂ + 1 + 2J²/2²⁰ < e₂ + 2` (`J² < 2¹⁹`). With `e = e₁ + e₂`,
//! `e ≤ 2⁶³E < e + 4` and `E < 2`; the band of the certified fixed-point exponential
//! for that bracket decides all but `65 609` of the `2⁶⁴` values of `V`, the rest being
//! decided by exact comparisons of `V`, extended with further words, with enclosures of
//! `exp(−E)` for the exact rational `E = (y²·den·2r̂² − 2num·J²)/(2num·2r̂²)`.
//!
//! **Acceptance rate.** A trial returns something with probability
//! `Σ_z e^(−z²/(2σ²))/(2MS)·(1 − (2⁶⁴ mod M)/2⁶⁴) ≥ √(2π)σ/(2·82.47·M)·(1 − 2⁻⁸) ≥ 0.968`
//! (`Σ_z ≥ √(2π)σ` by Poisson summation, `S ≤ 1 + 65√(π/2) + 10⁻²⁰ < 82.47`,
//! `σ > 65(M − 1) ≥ 65·63M/64`): fewer than 1.033 trials on average.
//!
//! **Draw independence.** Every trial draws exactly three words before anything else;
//! the trials are i.i.d. and the number of trials is independent of the accepted
//! value. The fallback event (further words) has probability per trial at most
//! `2·650/2⁶³` (an undecided block word) `+ w_K/S < 2⁻⁶⁹` (the tail, decided by exact
//! comparisons alone) `+ 65 610/2⁶⁴` (an undecided `V`) `< 2⁻⁴⁷·⁹`, so below `2⁻⁴⁷·⁸`
//! per sample.

use super::super::BitSource;
use super::super::certified::{Big, Cdt, Interval, LazyUniform, Weights, exact_less_exp_neg, exp_neg};
use super::super::fixed_exp::uniform_in_band;
use super::{band, div_shifted, exact_geometric, exponent, inverse_one_minus, rate, suffix_sums};
use rand_core::CryptoRng;
use std::sync::{Arc, OnceLock};

/// The smallest `⌊σ⌋` sampled with the shared proposal: `σ > 65·63`, so
/// `M = ⌈σ/65⌉ ≥ 64` and `σ/M > 65·63/64`.
pub(super) const MIN_FLOOR_SIGMA: u64 = 4096;
/// The proposal's reference ratio `r̂ = 65 ≥ σ/M`, `M = ⌈σ/r̂⌉`.
const REFERENCE: u64 = 65;
/// `2r̂² = 8450`.
const TWO_REF_SQUARED: u64 = 2 * REFERENCE * REFERENCE;
/// `K = 10r̂ = 650` regular blocks (`KM ≥ 10σ·64/65·…`, in fact `KM > 10σ`).
pub(super) const BLOCKS: u64 = 10 * REFERENCE;
/// `K²/(2r̂²) = 50` and `2K/(2r̂²) = 2/13`, as `TAIL_WHOLE/TAIL_DEN` and
/// `TAIL_STEP/TAIL_DEN`: the tail's `W_J = (650 + 2G)/13`.
const TAIL_WHOLE: u128 = 650;
const TAIL_STEP: u128 = 2;
const TAIL_DEN: u128 = 13;
/// `e ≤ 2⁶³·E < e + SLACK` for the fixed-point exponent.
const SLACK: u128 = 4;
/// `C ≤ 2^(63 + EXCESS_BITS)·c < C + 2`; `J² < 2^(EXCESS_BITS − 1)`.
const EXCESS_BITS: u32 = 20;
/// `⌈2^(63 + EXCESS_BITS)/(2r̂²)⌉`.
const REFERENCE_EXCESS: u128 = (1u128 << (63 + EXCESS_BITS)).div_ceil(TWO_REF_SQUARED as u128);

/// The proposal shared by every σ: its certified table.
#[derive(Debug)]
pub(super) struct Proposal {
    table: Cdt,
    /// The weights behind `table` (for the tests of its bounds).
    #[cfg(test)]
    pub(super) weights: Arc<ProposalWeights>,
}

/// The proposal, built on first use (once per process, 0.8 ms measured).
pub(super) fn proposal() -> &'static Proposal {
    static PROPOSAL: OnceLock<Proposal> = OnceLock::new();
    PROPOSAL.get_or_init(|| {
        let weights = Arc::new(ProposalWeights);
        Proposal {
            table: Cdt::weighted(weights.clone(), 63),
            #[cfg(test)]
            weights,
        }
    })
}

/// `w_j = exp(−j²/(2r̂²))` for `j < K` and the tail's `w_K = e^(−50)/(1 − e^(−2/13))`.
#[derive(Debug)]
pub(super) struct ProposalWeights;

impl Weights for ProposalWeights {
    /// Suffix sums at `p + 64` fractional bits: `h_(j+1) = h_j·f_j`,
    /// `f_(j+1) = f_j·e^(−2/(2r̂²))`, `f_0 = e^(−1/(2r̂²))`, every product rounded outward;
    /// after `K` steps `h = e^(−K²/(2r̂²))`, the tail's numerator.
    fn suffix_sums(&self, p: u64) -> Vec<Interval> {
        let wp = p + 64;
        let mut factor = exp_neg(1, TWO_REF_SQUARED, wp);
        let step = exp_neg(2, TWO_REF_SQUARED, wp);
        let mut h = Interval::exact(Big::pow2(wp));
        let mut sums = Vec::with_capacity(BLOCKS as usize + 1);
        for _ in 0..BLOCKS {
            sums.push(h.clone());
            h = h.mul(&factor, wp);
            factor = factor.mul(&step, wp);
        }
        let rho = exp_neg(TAIL_STEP, TAIL_DEN as u64, wp);
        sums.push(h.mul(&inverse_one_minus(&rho, wp), wp));
        suffix_sums(sums)
    }
}

/// What a σ adds to the shared proposal (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(super) struct Scaled {
    num: u128,
    den: u64,
    /// `M = ⌈σ/65⌉`.
    block: u64,
    /// `2⁶⁴ mod M`: Lemire's multiply-shift is exact when the low word is at least this.
    reject_below: u64,
    /// `Q₆₄ = ⌊2ˢ/(2σ²)⌋`.
    rate: u64,
    /// `s − 63`.
    rate_shift: u32,
    /// `C`, with `C ≤ 2⁸³·(M²/(2σ²) − 1/(2r̂²)) < C + 2`.
    excess: u128,
    proposal: &'static Proposal,
}

impl Scaled {
    /// The sampler of `σ² = num/den` with `⌊σ⌋ = floor_sigma ≥ MIN_FLOOR_SIGMA`.
    pub(super) fn new(num: u128, den: u64, floor_sigma: u64) -> Self {
        debug_assert!(floor_sigma >= MIN_FLOOR_SIGMA);
        // ⌈σ/65⌉ = ⌊σ/65⌋ + 1 unless σ = 65q exactly; ⌊σ/65⌋ = ⌊⌊σ⌋/65⌋.
        let q = floor_sigma / REFERENCE;
        let root = u128::from(q * REFERENCE);
        let exact = root
            .checked_mul(root)
            .and_then(|x| x.checked_mul(u128::from(den)))
            == Some(num);
        let block = if exact { q } else { q + 1 };
        let (rate, rate_shift) = rate(num, den);
        // C = ⌊2⁸³·M²·den/(2num)⌋ − ⌈2⁸³/(2r̂²)⌉ (saturating): C ≤ 2⁸³·c < C + 2, and
        // M²·den < σ²·den/63.98² < num/2¹¹ ≤ 2¹¹³, so the product fits.
        let square = u128::from(block) * u128::from(block) * u128::from(den);
        let excess = div_shifted(square, 63 + EXCESS_BITS, 2 * num)
            .0
            .saturating_sub(REFERENCE_EXCESS);
        Self {
            num,
            den,
            block,
            reject_below: block.wrapping_neg() % block,
            rate,
            rate_shift,
            excess,
            proposal: proposal(),
        }
    }

    /// The lower end `e` of the bracket `e ≤ 2⁶³·E < e + 4` of block `j`'s exponent for
    /// `n = R(2jM + R)`.
    #[inline(always)]
    fn exponent(&self, j: u64, n: u128) -> u128 {
        exponent(n, self.rate, self.rate_shift) + ((u128::from(j * j) * self.excess) >> EXCESS_BITS)
    }

    /// One sample (see the module docs).
    #[inline]
    pub(super) fn sample_bits<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> i128 {
        let table = &self.proposal.table;
        loop {
            let first = bits.word();
            let second = bits.word();
            let third = bits.word();
            let j = table.sample(first & (u64::MAX >> 1), bits);
            let negative = first >> 63 == 1;
            let mask = -i128::from(negative);
            if j >= BLOCKS {
                match self.tail(bits) {
                    Some(y) => return (y ^ mask) - mask,
                    None => continue,
                }
            }
            let product = u128::from(second) * u128::from(self.block);
            let r = (product >> 64) as u64;
            let exact_r = product as u64 >= self.reject_below;
            // y = jM + R < 650·2⁵⁷; n = R(2jM + R) < 2¹²⁴.
            let start = u128::from(j) * u128::from(self.block);
            let y = start + u128::from(r);
            let n = u128::from(r) * (2 * start + u128::from(r));
            let band = band(self.exponent(j, n), SLACK);
            let accepted = uniform_in_band(band, third, 64, || self.exact(j, y), bits);
            // All three decisions computed, no short-circuit.
            if accepted & exact_r & !(negative & (y == 0)) {
                let y = y as i128;
                return (y ^ mask) - mask;
            }
        }
    }

    /// The acceptance exponent of `y` in regular block `j` exactly,
    /// `E = y²/(2σ²) − j²/(2r̂²) = (y²·den·2r̂² − 2num·j²)/(2num·2r̂²)`, as (numerator,
    /// denominator).
    #[cold]
    pub(super) fn exact(&self, j: u64, y: u128) -> (Big, Big) {
        let y = Big::from_u128(y);
        let two_num = Big::from_u128(2 * self.num);
        let numerator = y
            .mul(&y)
            .mul(&Big::from_u128(
                u128::from(self.den) * u128::from(TWO_REF_SQUARED),
            ))
            .sub_sat(&two_num.mul(&Big::from_u128(u128::from(j) * u128::from(j))));
        (
            numerator,
            two_num.mul(&Big::from_u128(u128::from(TWO_REF_SQUARED))),
        )
    }

    /// The tail block (probability below `2⁻⁶⁹` per trial), by exact comparisons alone:
    /// `J = K + G` with `Pr[G ≥ g] = e^(−2g/13)`, `R` uniform on `[0, M)`, and
    /// `y = JM + R` accepted with probability `exp(−(y²/(2σ²) − (650 + 2G)/13))`, i.e.
    /// `exp(−(13·y²·den − 2num·(650 + 2G))/(26·num))`. `None` when rejected.
    #[cold]
    #[inline(never)]
    pub(super) fn tail<R: CryptoRng + ?Sized>(&self, bits: &mut BitSource<'_, R>) -> Option<i128> {
        let g = exact_geometric(TAIL_STEP, TAIL_DEN, bits);
        let r = loop {
            let product = u128::from(bits.word()) * u128::from(self.block);
            if product as u64 >= self.reject_below {
                break (product >> 64) as u64;
            }
        };
        let j = Big::from_u128(u128::from(BLOCKS).saturating_add(g));
        let y = j
            .mul(&Big::from_u128(u128::from(self.block)))
            .add(&Big::from_u128(u128::from(r)));
        let two_num = Big::from_u128(2 * self.num);
        let numerator = y
            .mul(&y)
            .mul(&Big::from_u128(TAIL_DEN * u128::from(self.den)))
            .sub_sat(&two_num.mul(&Big::from_u128(TAIL_WHOLE).add(&Big::from_u128(g).shl(1))));
        let denominator = two_num.mul(&Big::from_u128(TAIL_DEN));
        let mut v = LazyUniform::new(bits.word(), 64);
        let accepted = exact_less_exp_neg(&mut v, &numerator, &denominator, bits);
        accepted.then(|| i128::try_from(y.to_u128_sat()).unwrap_or(i128::MAX))
    }

    /// [`Self::exponent`], for the tests.
    #[cfg(test)]
    pub(super) fn exponent_for_test(&self, j: u64, n: u128) -> u128 {
        self.exponent(j, n)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_bracket_and_band, assert_table_holds, mean_excess_z, pairs};
    use super::*;
    use crate::sampling::certified::probe;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{Rng, SeedableRng};

    /// σ² at the ends of the regime and in between, as `(num, den)`.
    fn variances() -> Vec<(u128, u64)> {
        vec![
            (4096 * 4096, 1),                   // σ = 4096: M = 64, r = 64
            (4160 * 4160 - 1, 1),               // ⌊σ⌋ = 4159: M = 64, r just below 65
            (4160 * 4160, 1),                   // σ = 65·64: M = 64, r = 65, c = 0
            (4161 * 4161, 1),                   // σ = 4161: M = 65, r = 64.02
            ((4097 * 4097) * 3 + 1, 3),         // rational, den = 3
            (1_000_000_007u128 << 10, 1 << 10), // σ² ≈ 10⁹ with a dyadic denominator
            (1 << 52, 1),                       // σ = 2²⁶
            (1 << 80, 1),                       // σ = 2⁴⁰
            ((1 << 84) + 7, 1),                 // σ just above 2⁴², not integer
            (1 << 120, 1),                      // σ = 2⁶⁰
            (1 << 124, 3),                      // the largest numerator, rational
            (1 << 124, 1),                      // σ = 2⁶²
        ]
    }

    fn scaled(num: u128, den: u64) -> Scaled {
        let floor_sigma = (num / u128::from(den)).isqrt() as u64;
        Scaled::new(num, den, floor_sigma)
    }

    /// `65(M − 1) < σ ≤ 65M` (so `c ≥ 0` and the proposal dominates), `C ≤ 2⁸³·c < C + 2`
    /// (big-integer check), `Q₆₄` as defined, and Lemire's bound is `2⁶⁴ mod M`.
    #[test]
    fn the_scale_parameters_hold_their_definitions() {
        for (num, den) in variances() {
            let s = scaled(num, den);
            let m = u128::from(s.block);
            let label = format!("σ² = {num}/{den}");
            // 65(M − 1) < σ ⇔ (65(M − 1))²·den < num; σ ≤ 65M ⇔ num ≤ (65M)²·den.
            let den_big = Big::from_u128(u128::from(den));
            let square = |k: u128| Big::from_u128(65 * k).mul(&Big::from_u128(65 * k)).mul(&den_big);
            assert!(square(m - 1).cmp(&Big::from_u128(num)).is_lt(), "{label}");
            assert!(Big::from_u128(num).cmp(&square(m)).is_le(), "{label}");
            assert!(m >= 64, "{label}");
            // C·2num·8450 ≤ 2⁸³(M²·den·8450 − 2num) < (C + 2)·2num·8450.
            let two_num = Big::from_u128(2 * num);
            let target = Big::from_u128(m * m)
                .mul(&Big::from_u128(u128::from(den) * 8450))
                .sub_sat(&two_num)
                .shl(83);
            let unit = two_num.mul(&Big::from_u128(8450));
            assert!(
                Big::from_u128(s.excess).mul(&unit).cmp(&target).is_le(),
                "{label}"
            );
            assert!(
                target.cmp(&Big::from_u128(s.excess + 2).mul(&unit)).is_lt(),
                "{label}"
            );
            // Q₆₄ = ⌊2ˢ·den/(2num)⌋ ∈ [2⁶³, 2⁶⁴): Q·2num ≤ 2ˢ·den < (Q + 1)·2num.
            let shifted = den_big.shl(u64::from(s.rate_shift) + 63);
            assert!(
                Big::from_u128(u128::from(s.rate))
                    .mul(&two_num)
                    .cmp(&shifted)
                    .is_le(),
                "{label}"
            );
            assert!(
                shifted
                    .cmp(&Big::from_u128(u128::from(s.rate) + 1).mul(&two_num))
                    .is_lt(),
                "{label}"
            );
            assert!(s.rate >= 1 << 63, "{label}");
            assert_eq!(u128::from(s.reject_below), (1u128 << 64) % m, "{label}");
        }
        // The tail constants: K²/(2r̂²) = 650/13 and 2K/(2r̂²) = 2/13.
        assert_eq!(
            u128::from(BLOCKS * BLOCKS) * TAIL_DEN,
            TAIL_WHOLE * u128::from(TWO_REF_SQUARED)
        );
        assert_eq!(
            u128::from(2 * BLOCKS) * TAIL_DEN,
            TAIL_STEP * u128::from(TWO_REF_SQUARED)
        );
    }

    /// The premises of the fallback and acceptance bounds, from the certified sums:
    /// `K` entries, at most two undecided words per entry, the tail's probability below
    /// `2⁻⁶⁹`, and `S < 82.47`.
    #[test]
    fn the_shared_proposal_meets_the_premises_of_its_bounds() {
        let p = proposal();
        assert_eq!(probe::len(&p.table) as u64, BLOCKS);
        assert!(probe::max_undecided_per_entry(&p.table) <= 2);
        let sums = p.weights.suffix_sums(128);
        let tail = &sums[BLOCKS as usize];
        assert!(tail.hi.shl(69).cmp(&sums[0].lo).is_lt(), "tail too heavy");
        // S_0 < 82.47: 100·S_0 < 8247 (units of 2¹⁹²).
        let s0 = sums[0].hi.mul(&Big::from_u128(100));
        assert!(s0.cmp(&Big::from_u128(8247).shl(192)).is_lt());
        assert!(probe::is_guided(&p.table), "the shared table has a guide");
    }

    /// The shared table's bounds hold the thresholds of an independent evaluation
    /// (each weight from its own exponential at 256 bits, `exp(−j²/8450)` and the tail
    /// `e^(−50)/(1 − e^(−2/13))`, then summed): `lo[c]/2⁶³ ≤ C_c ≤ (hi[c] + 1)/2⁶³` is
    /// consistent with `C_c ∈ [S_c.lo/S_0.hi, S_c.hi/S_0.lo]` for every entry.
    #[test]
    fn the_shared_thresholds_hold_the_direct_evaluation() {
        let p = 256;
        let mut weights: Vec<Interval> = (0..BLOCKS)
            .map(|j| exp_neg(u128::from(j * j), TWO_REF_SQUARED, p))
            .collect();
        weights.push(exp_neg(50, 1, p).mul(&inverse_one_minus(&exp_neg(2, 13, p), p), p));
        assert_table_holds(&proposal().table, &pairs(suffix_sums(weights)), "shared proposal");
    }

    /// `e ≤ 2⁶³·E < e + 4` for the exact `E` on random and extreme `(j, R)`, and the band
    /// holds `2⁶⁴·exp(−E)` (256-bit enclosure).
    #[test]
    fn the_acceptance_exponent_and_band_hold_the_exact_values() {
        let mut rng = ChaCha20Rng::seed_from_u64(0xF1ED);
        for (num, den) in variances() {
            let s = scaled(num, den);
            let m = s.block;
            let mut cases: Vec<(u64, u64)> = (0..3000)
                .map(|_| (rng.next_u64() % BLOCKS, rng.next_u64() % m))
                .collect();
            cases.extend([(0, 0), (0, 1), (BLOCKS - 1, m - 1), (BLOCKS - 1, 0), (1, m - 1)]);
            for (j, r) in cases {
                let start = u128::from(j) * u128::from(m);
                let y = start + u128::from(r);
                let n = u128::from(r) * (2 * start + u128::from(r));
                let label = format!("σ² = {num}/{den}, j = {j}, r = {r}");
                assert_bracket_and_band(s.exponent_for_test(j, n), SLACK, &s.exact(j, y), &label);
            }
        }
    }

    /// The tail, forced, at σ = 4096 (`KM = 41 600`): every value lies at or beyond `KM`,
    /// and the mean excess `E[Y − KM | Y ≥ KM]` matches the exact discrete Gaussian's
    /// (f64 sums) within 5 standard errors.
    #[test]
    fn the_tail_has_the_discrete_gaussian_law_beyond_the_table() {
        let mut rng = ChaCha20Rng::seed_from_u64(8);
        let s = scaled(4096 * 4096, 1);
        let start = i128::from(BLOCKS * s.block);
        let mut bits = BitSource::new(&mut rng);
        let excess: Vec<f64> = (0..3000)
            .filter_map(|_| s.tail(&mut bits))
            .map(|y| {
                assert!(y >= start, "{y}");
                (y - start) as f64
            })
            .collect();
        assert!(excess.len() >= 300, "{} accepted", excess.len());
        let sigma_squared = 4096.0f64 * 4096.0;
        let first = start as f64;
        let weight = |g: f64| (-((first + g).powi(2) - first * first) / (2.0 * sigma_squared)).exp();
        let z = mean_excess_z(&excess, weight, 20_000);
        println!("tail: {} accepted of 3000, mean excess z = {z:.2}", excess.len());
        assert!(z.abs() < 5.0, "z = {z}");
    }
}
