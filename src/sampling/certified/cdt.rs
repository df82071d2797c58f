//! [`Cdt`]: inversion of a cumulative-distribution table whose 64-bit entries are
//! certified lower/upper bounds of exact thresholds, with a guide table for the fast
//! path and exact comparisons of a lazy uniform for the rest.

use super::bigint::Big;
use super::guide::Guide;
use super::interval::{Interval, exp_neg};
use super::lazy_uniform::LazyUniform;
use super::threshold::{CONSTRUCTION_BITS, Threshold, Thresholds, Weights};
use crate::sampling::BitSource;
use rand_core::CryptoRng;

/// A table for `X = #{c ≥ 1 : U < C_c}` (thresholds decreasing in `c`), so that
/// `Pr[X ≥ c] = Pr[U < C_c] = C_c`. Each entry keeps two certified 64-bit bounds at the
/// resolution `2^(−width)` of the first word of `U`:
///
/// * `lo[c] = ⌊2^width · (lower bound of C_c)⌋`: a first word `u < lo[c]` proves
///   `U < (u+1)/2^width ≤ C_c`;
/// * `hi[c] = ⌈2^width · (upper bound of C_c)⌉ − 1`: a first word `u > hi[c]` proves
///   `U ≥ u/2^width ≥ C_c`.
///
/// Only `lo[c] ≤ u ≤ hi[c]` is undecided: at most two values of `u` per entry (the
/// enclosures are narrower than `2^(−width)`), checked at construction.
#[derive(Clone, Debug)]
pub(crate) struct Cdt {
    thresholds: Thresholds,
    /// `K` when the table is complete (`X ≤ K − 1`), `None` for an open geometric tail.
    size: Option<u64>,
    width: u32,
    lo: Vec<u64>,
    hi: Vec<u64>,
    /// The certain count by a guide table, when the table is flat enough.
    guide: Option<Guide>,
}

impl Cdt {
    /// The table of `C_c = (aᶜ − A)/(1 − A)`, `c = 1 … K−1` when `size = Some(K)`, or
    /// of `C_c = aᶜ` for `c = 1, 2, …` while `C_c` may exceed `2^(−width)` otherwise.
    pub(crate) fn new(threshold: Threshold, width: u32) -> Self {
        let p = CONSTRUCTION_BITS;
        let one = Big::pow2(p);
        let a = exp_neg(threshold.step, threshold.den, p);
        let total = match threshold.size {
            Some(k) => exp_neg(threshold.step.saturating_mul(k as u128), threshold.den, p),
            None => Interval::exact(Big::zero()),
        };
        // 1/(1 − A) at precision p: [2^2p/(1 − A_lo)⁺ ... ] outward; for a two-sided
        // table (A = 0) the factor is 2/(1 + a) instead.
        let inverse = {
            let (den_hi, den_lo) = if threshold.two_sided {
                (one.add(&a.hi), one.add(&a.lo))
            } else {
                (one.sub_sat(&total.lo), one.sub_sat(&total.hi))
            };
            let scaled = Big::pow2(2 * p + u64::from(threshold.two_sided));
            Interval {
                lo: scaled.div_floor(&den_hi),
                hi: scaled.div_ceil(&den_lo),
            }
        };
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        let mut power = a.clone();
        let mut c: u64 = 1;
        loop {
            if threshold.size.is_some_and(|k| c >= k) {
                break;
            }
            let enclosure = threshold.enclose(&power, &total, &inverse);
            let shift = p - width as u64;
            let l = enclosure.lo.shr(shift).to_u128_sat().min(u64::MAX as u128) as u64;
            let h_ceil = enclosure.hi.shr_ceil(shift).to_u128_sat();
            let h = h_ceil.saturating_sub(1).min(u64::MAX as u128) as u64;
            lo.push(l);
            hi.push(h);
            if threshold.size.is_none() && h_ceil <= 1 {
                // C_c ≤ 2^(−width): every first word u ≥ 1 is above this and all later
                // thresholds; u = 0 is left to the exact path.
                break;
            }
            power = power.mul(&a, p);
            c += 1;
        }
        Self::finish(Thresholds::Geometric(threshold), threshold.size, width, lo, hi)
    }

    /// The complete table of `C_c = S_c/S_0`, `c = 1 … K−1`, for `K` certified weights
    /// (`X ∈ [0, K − 1]`, `Pr[X = j] = w_j/S_0`).
    pub(crate) fn weighted(weights: std::sync::Arc<dyn Weights>, width: u32) -> Self {
        let p = CONSTRUCTION_BITS;
        let sums = weights.suffix_sums(p);
        let size = sums.len() as u64;
        let first = &sums[0];
        // Reciprocals of S_0 with p + 64 significant bits, rounded outward: `2ᵉ/S_0` in
        // `[inverse_lo, inverse_hi]`, so `C_c = S_c/S_0` lies in
        // `[S_c.lo·inverse_lo, S_c.hi·inverse_hi]/2ᵉ` (two divisions per table).
        let e = first.hi.bit_len() + p + 64;
        let inverse_lo = Big::pow2(e).div_floor(&first.hi);
        let inverse_hi = Big::pow2(e).div_ceil(&first.lo);
        // From 2ᵉ to the table's 2^width: one shift.
        let shift = e - width as u64;
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        for sum in &sums[1..] {
            let l = sum.lo.mul(&inverse_lo).shr(shift).to_u128_sat();
            let h_ceil = sum.hi.mul(&inverse_hi).shr_ceil(shift).to_u128_sat();
            lo.push(l.min(u64::MAX as u128) as u64);
            hi.push(h_ceil.saturating_sub(1).min(u64::MAX as u128) as u64);
        }
        Self::finish(Thresholds::Weighted(weights), Some(size), width, lo, hi)
    }

    fn finish(
        thresholds: Thresholds,
        size: Option<u64>,
        width: u32,
        mut lo: Vec<u64>,
        mut hi: Vec<u64>,
    ) -> Self {
        // Keep the certificates monotone (lowering a lower bound or raising an upper
        // bound keeps it valid), so that counts are partition points.
        for i in 1..lo.len() {
            lo[i] = lo[i].min(lo[i - 1]);
        }
        for i in (0..hi.len().saturating_sub(1)).rev() {
            hi[i] = hi[i].max(hi[i + 1]);
        }
        let guide = Guide::new(&lo, &hi, size.is_some(), width);
        Self {
            thresholds,
            size,
            width,
            lo,
            hi,
            guide,
        }
    }

    /// `Ok(X)` when the first word `u` (of `width` bits) decides every comparison;
    /// otherwise `Err(certain)`, the count of thresholds certainly above `U`, from which
    /// the exact path continues.
    #[inline(always)]
    pub(crate) fn fast(&self, u: u64) -> Result<u64, u64> {
        // `certain` = #{c : u < lo[c]}. Since lo[c] ≤ hi[c] + 1, every such c also has
        // u ≤ hi[c], so #{c : u ≤ hi[c]} ≥ certain, with equality iff the next entry
        // (if any) has u > hi[next]: one guide lookup or binary search, and one
        // comparison.
        let (certain, decided) = match &self.guide {
            Some(guide) => guide.locate(u),
            None => {
                let certain = self.lo.partition_point(|&l| u < l);
                (certain, self.decided_at(u, certain))
            }
        };
        if decided {
            Ok(certain as u64)
        } else {
            Err(certain as u64)
        }
    }

    /// Whether `u`, of which `certain` thresholds are certainly above, decides the table:
    /// `u > hi[certain]`, or past the last entry, the table is complete (the open tail
    /// is not).
    fn decided_at(&self, u: u64, certain: usize) -> bool {
        match self.hi.get(certain) {
            Some(&h) => u > h,
            None => self.size.is_some(),
        }
    }

    /// `X` exactly: the certified count, then exact comparisons of the lazily extended
    /// uniform from the first undecided entry on.
    #[inline]
    pub(crate) fn sample<R: CryptoRng + ?Sized>(&self, u: u64, bits: &mut BitSource<'_, R>) -> u64 {
        match self.fast(u) {
            Ok(x) => x,
            Err(certain) => self.resolve(u, certain, bits),
        }
    }

    #[cold]
    pub(crate) fn resolve<R: CryptoRng + ?Sized>(
        &self,
        u: u64,
        certain: u64,
        bits: &mut BitSource<'_, R>,
    ) -> u64 {
        let mut lazy = LazyUniform::new(u, self.width as u64);
        let mut x = certain;
        loop {
            if self.size.is_some_and(|k| x + 1 >= k) {
                return x;
            }
            if !self.thresholds.exact_less(&mut lazy, x + 1, bits) {
                return x;
            }
            x += 1;
        }
    }
}

/// Read-only views of a table's internals, for the tests of the table and of the
/// samplers built on it (the production type exposes only what sampling needs).
#[cfg(test)]
pub(crate) mod probe {
    use super::{Cdt, LazyUniform};
    use crate::sampling::BitSource;
    use rand_core::CryptoRng;

    /// Number of entries.
    pub(crate) fn len(table: &Cdt) -> usize {
        table.lo.len()
    }

    /// The certified lower bounds `lo[c]` (see [`Cdt`]).
    pub(crate) fn lo(table: &Cdt) -> &[u64] {
        &table.lo
    }

    /// The certified upper bounds `hi[c]` (see [`Cdt`]).
    pub(crate) fn hi(table: &Cdt) -> &[u64] {
        &table.hi
    }

    /// The bits of the first word of `U` that the table reads.
    pub(crate) fn width(table: &Cdt) -> u32 {
        table.width
    }

    /// The largest number of first words `u` left undecided by any single entry
    /// (`hi[c] − lo[c] + 1`); 2 or less by construction.
    pub(crate) fn max_undecided_per_entry(table: &Cdt) -> u64 {
        table
            .lo
            .iter()
            .zip(&table.hi)
            .map(|(&l, &h)| (h as u128 + 1).saturating_sub(l as u128) as u64)
            .max()
            .unwrap_or(0)
    }

    /// `U < C_c` decided by the exact path alone, for `U` with first word `u` (the
    /// arbitrary-precision reference of the tests).
    pub(crate) fn exact_less_at<R: CryptoRng + ?Sized>(
        table: &Cdt,
        u: u64,
        c: u64,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        let mut lazy = LazyUniform::new(u, table.width as u64);
        table.thresholds.exact_less(&mut lazy, c, bits)
    }

    /// The bytes of the table's arrays: bounds and guide (the memory bound's test).
    pub(crate) fn heap_bytes(table: &Cdt) -> usize {
        8 * (table.lo.len() + table.hi.len()) + table.guide.as_ref().map_or(0, |g| g.heap_bytes())
    }

    /// Whether the certain count comes from a guide table.
    pub(crate) fn is_guided(table: &Cdt) -> bool {
        table.guide.is_some()
    }

    /// The certain count by binary search (the reference of the guide's test).
    pub(crate) fn certain_by_search(table: &Cdt, u: u64) -> u64 {
        table.lo.partition_point(|&l| u < l) as u64
    }

    /// Whether `u` decides the table, by binary search (the reference of the guide's
    /// test).
    pub(crate) fn decided_by_search(table: &Cdt, u: u64) -> bool {
        table.decided_at(u, certain_by_search(table, u) as usize)
    }

    /// The number of thresholds, `K − 1` for a truncated table.
    pub(crate) fn bound(table: &Cdt) -> Option<u64> {
        table.size.map(|k| k - 1)
    }
}
