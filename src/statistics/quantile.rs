//! Private quantiles over a public grid: [`Quantile`] (one) and
//! [`Quantiles`](super::Quantiles) (several, by a recursive split), selected by
//! permute-and-flip with exact weights over the edges of a [`QuantileGrid`], from the
//! exact, mergeable [`BinCounts`](super::BinCounts).
//!
//! # The mechanism
//!
//! The candidates are the `B + 1` edges `e₀ = lower, …, e_B = upper` of the grid: the
//! points whose rank the counts know exactly. With `Lⱼ` the number of (read) records
//! below `eⱼ` and `n` their number, edge `j` scores
//!
//! ```text
//! u(j) = −|Lⱼ − q̃·n|        (the rank score of Smith 2011, as OpenDP's make_private_quantile)
//! ```
//!
//! where `q̃ = round(q·2³²)/2³²` (so `|q̃ − q| ≤ 2⁻³³`, a public change of `q`; for
//! `n ≤ 2³²` it moves the target rank by less than a half). The released value is the
//! selected edge itself — a public grid value, so no float leaks the data. Empty data:
//! every edge scores 0 and the edge is uniform.
//!
//! **Sensitivity** (L∞ over candidates; `c` = `contributions`, the most records one
//! privacy unit adds to or removes from the cell):
//!
//! * **add/remove** a unit (`n` private): adding `a` records below `eⱼ` and `c − a` above
//!   moves `Lⱼ − q̃n` by `a − q̃c ∈ [−q̃c, (1 − q̃)c]`, so `Δu = c·max(q̃, 1 − q̃)` (`c/2`
//!   for the median);
//! * **substitution** of a unit's records (`n` public): `Lⱼ` moves by at most `c`, `n`
//!   not at all, so `Δu = c`.
//!
//! The selection is [`PermuteAndFlip`] (McKenna & Sheldon 2020) on these scores at the
//! claimed ε: **pure ε-DP** under the relation `Δu` was computed for, and never worse
//! in expected score than the exponential mechanism OpenDP samples (both share the tail
//! bound below). Each score is computed **exactly** in integers (units of `2⁻³²`
//! ranks), rounded once to the selector's public score grid `g ≤ Δu·2⁻²⁰` (the rounding
//! is charged to the sensitivity by the selector, see [`PermuteAndFlip`]), and gaps to
//! the best score beyond `2⁵²·g` are capped — which is the same mechanism for the utility
//! `max(u, OPT − 2⁵²g)`, of the same sensitivity, and changes only candidates whose
//! weight is below `exp(−ε·2³¹)`. The words drawn (one per candidate's coin and one for
//! the uniform choice among the heads, more only on the coins' rare exact fallback) do
//! not depend on the data. The scores are computed from the counts as the coins read
//! them, in integers, with no vector of them.
//!
//! **Atoms.** All edges above the largest record have `Lⱼ = n` and score alike (likewise
//! between two records), so when the top `1 − q` of the data is one repeated value the
//! rank score cannot prefer the smallest edge above it. Integer data with such atoms
//! (the [`ContributionBoundsSuggester`](super::ContributionBoundsSuggester)) is scored
//! over the **bins** as points instead, tie-aware like OpenDP's score
//! (`−|Lⱼ − q̃(n − cⱼ)|`, `cⱼ` the bin's count, i.e. `(1 − q̃)·below − q̃·above`; same
//! `Δu`), and released as the bin's midpoint.
//!
//! # Error
//!
//! **In ranks.** Let `OPT = minⱼ |Lⱼ − q̃n|` (at most half the count of the bin holding
//! the target rank) and `r(β) = 2(Δu + g)/ε · ln((B + 1)/β) + g`
//! ([`Quantile::rank_error`]). With probability at least `1 − β` the released edge `e`
//! satisfies `|L(e) − q̃n| ≤ OPT + r(β)` — each candidate with a larger gap is selected
//! with probability at most its coin's, `exp(−ε·gap/(2(Δu + g)))`, and there are `B + 1`.
//!
//! **In value units.** On that event the released edge lies between the order
//! statistics `x₍⌊q̃n − OPT − r⌋₎` and `x₍⌈q̃n + OPT + r⌉₊₁₎` of the clamped records,
//! widened to the enclosing edges (at most one bin width `(upper − lower)/B` either
//! way): the error in value is the spread of the data over `±(OPT + r)` ranks around
//! the target, plus the bin width.
//!
//! # Several quantiles
//!
//! [`Quantiles`](super::Quantiles) releases `m` quantiles by the recursive split of
//! Kaplan, Schnapp & Stemmer (2022, *Differentially Private Approximate Quantiles*,
//! ICML): the middle level is released on all records; the records below and
//! at-or-above the released edge form two disjoint sub-problems (a public split: the
//! edge is released) that release the lower and upper levels among the edges up to and
//! from it, relative to their own sizes (`q′ = (q − q_low)/(q_high − q_low)`),
//! recursively. There are `ℓ = ⌈log₂(m + 1)⌉` levels; at each level each record falls
//! in one sub-problem (add/remove), so each level costs `ε/ℓ` by parallel composition
//! and the whole release is **ε-DP** under add/remove. Under substitution a unit's
//! records may leave one sub-problem and enter another, so each selection is calibrated
//! for add/remove at `ε/(2ℓ)` (two add/remove losses per level). JointExp (Gillenwater,
//! Joseph & Kulesza 2021) was not chosen: its sampler is quadratic in the number of
//! candidates (up to `2²⁰ + 1` here), and the recursive split is at least as accurate in
//! Kaplan et al.'s experiments.

use super::quantile_grid::QuantileGrid;
use crate::mechanisms::PermuteAndFlip;
use crate::mechanisms::accuracy::{finite_half_width, ln_ratio_up};
use crate::privacy::{PrivacyLoss, check_epsilon, round};
use crate::sensitivity::Neighbouring;
use crate::{CryptoRng, Error, Mechanism};

/// The most records one privacy unit may add to a cell: `2²⁰`.
pub const MAX_CONTRIBUTIONS: u64 = 1 << 20;

/// The most quantile levels one [`Quantiles`](super::Quantiles) releases.
pub const MAX_QUANTILES: usize = 1024;

/// `q` in units of `2⁻³²`.
const Q_SHIFT: u32 = 32;
/// Gaps are capped at `2⁵²` score-grid units (exact in `f64`).
const GAP_CAP: u128 = 1 << 52;

/// What a selection chooses among.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Candidates {
    /// The `B + 1` edges, scored `−|Lⱼ − q̃n|` (exact ranks: the release is an edge).
    Edges,
    /// The `B` bins as points, scored tie-aware `−|Lⱼ − q̃(n − cⱼ)|` (records in the bin
    /// count as equal to it): for integer data with atoms, released as the midpoint.
    Bins,
}

/// One selection over a range of the grid: the rank score for the level `q̃ = a/2³²`
/// with sensitivity `Δu`, sampled by permute-and-flip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RankSelector {
    candidates: Candidates,
    /// `q̃·2³²`.
    level: u64,
    sensitivity: f64,
    selector: PermuteAndFlip,
    /// The score grid `g = 2^(shift − 32)` ranks, i.e. `2^shift` score units.
    shift: u32,
}

impl RankSelector {
    pub(super) fn new(
        candidates: Candidates,
        q: f64,
        epsilon: f64,
        contributions: u64,
        relation: Neighbouring,
    ) -> Result<Self, Error> {
        check_level(q)?;
        check_epsilon(epsilon)?;
        if !(1..=MAX_CONTRIBUTIONS).contains(&contributions) {
            return Err(Error::InvalidParameter {
                name: "contributions",
                value: contributions as f64,
                reason: "a unit contributes between 1 and 2^20 records to a cell",
            });
        }
        let one = 1u64 << Q_SHIFT;
        let level = ((q * one as f64).round() as u64).min(one);
        let factor = match relation {
            Neighbouring::AddRemove => level.max(one - level),
            Neighbouring::Substitute => one,
        };
        // c·factor ≤ 2^20·2^32: exact in f64, and so is the division by 2^32.
        let sensitivity = (contributions as f64 * factor as f64) / one as f64;
        let selector = PermuteAndFlip::new(sensitivity, epsilon)?;
        // g is a power of two with 2^-21 ≤ g ≤ 1 (Δu ∈ [1/2, 2^20]).
        let exponent = ((selector.granularity().to_bits() >> 52) & 0x7ff) as i32 - 1023;
        Ok(Self {
            candidates,
            level,
            sensitivity,
            selector,
            shift: (exponent + Q_SHIFT as i32) as u32,
        })
    }

    /// The number of candidates over `bins` bins: `bins + 1` edges, or the bins.
    #[inline]
    fn candidates(&self, bins: usize) -> usize {
        match self.candidates {
            Candidates::Edges => bins + 1,
            Candidates::Bins => bins,
        }
    }

    /// The rank scores of the candidates over the bins' `counts` (see [`RankScores`]) and
    /// the best (smallest) rounded one, `min round(sⱼ/2^shift)` — the rounded smallest
    /// `sⱼ`, as rounding is monotone — from one pass over the counts.
    ///
    /// `#[inline]` here and on [`UnitCursor::unit`] (the selection's per-candidate path)
    /// has them compiled in the crate that instantiates [`select`](Self::select), at its
    /// optimisation level (the SQL crate's examples build this crate at opt-level 0).
    #[inline]
    fn units(&self, counts: &[u64]) -> (RankScores, u128) {
        // Plain loops and comparisons on this path (no iterator adapters or `min` calls):
        // examples and debug builds run this crate unoptimised, where each is a call.
        let mut n = 0u128;
        for &c in counts {
            n += c as u128;
        }
        let level = self.level as u128;
        let scores = RankScores {
            target: level * n,
            per_count: match self.candidates {
                Candidates::Edges => 0,
                Candidates::Bins => self.level,
            },
            half: 1 << (self.shift - 1),
            shift: self.shift,
        };
        let (mut below, mut best) = (0u128, u128::MAX);
        for &c in counts {
            let s = scores.raw(below, c);
            if s < best {
                best = s;
            }
            below += c as u128;
        }
        if self.candidates == Candidates::Edges {
            let s = scores.raw(n, 0); // the top edge
            if s < best {
                best = s;
            }
        }
        (scores, scores.round(best))
    }

    /// The scores handed to the selector, from the `counts` of the bins in range:
    /// `−min(round(sⱼ/2^shift) − best, 2⁵²)·g`, exact in `f64` (see
    /// [`raw`](Self::raw)).
    fn scores(&self, counts: &[u64]) -> Vec<f64> {
        let (scores, best) = self.units(counts);
        let mut cursor = UnitCursor::new(scores, counts);
        let g = self.selector.granularity();
        (0..self.candidates(counts.len()))
            .map(|j| 0.0 - (cursor.unit(j) - best).min(GAP_CAP) as f64 * g)
            .collect()
    }

    /// The index of the selected candidate (an edge, or a bin) — there is at least one —
    /// over the bins' `counts`.
    ///
    /// The selector receives the scores of [`scores`](Self::scores) as the integers they
    /// stand for, computed as it reads them, without the floats: a score `−k·g` with
    /// `k ≤ 2⁵²` is `−k` units of the selector's grid `g` exactly (and the best is 0),
    /// which is what [`PermuteAndFlip::release`] rounds it to — the same coins from the
    /// same words, in one pass and no vector.
    pub(super) fn select<R: CryptoRng + ?Sized>(&self, counts: &[u64], rng: &mut R) -> usize {
        if self.candidates(counts.len()) == 0 {
            return 0; // no bin to choose (a public shape): nothing drawn, as before
        }
        let (scores, best) = self.units(counts);
        let mut cursor = UnitCursor::new(scores, counts);
        let gap = move |j| {
            let gap = cursor.unit(j) - best;
            -(if gap < GAP_CAP { gap } else { GAP_CAP } as i128)
        };
        self.selector
            .release_units(self.candidates(counts.len()), gap, 0, rng)
    }

    /// `r(β) = 2(Δu + g)/ε·ln(K/β) + g` for `K` candidates, rounded up; a typed error
    /// for β outside (0, 1) or a bound beyond `f64`.
    fn rank_error(&self, epsilon: f64, candidates: usize, beta: f64) -> Result<f64, Error> {
        let beta = crate::mechanisms::check_beta(beta)?;
        let g = self.selector.granularity();
        let log = ln_ratio_up(round::u64_up(candidates as u64), beta);
        let scale = round::div_up(round::mul_up(2.0, round::add_up(self.sensitivity, g)), epsilon);
        finite_half_width(round::add_up(round::mul_up(scale, log), g))
    }
}

/// The rank scores of one selection, in units of `2⁻³²` ranks: candidate `j` with
/// `Lⱼ` records below its edge and `cⱼ` in its bin scores `sⱼ = |Lⱼ·2³² − a·n|` per edge
/// and `|Lⱼ·2³² − a·(n − cⱼ)|` per bin (`a = q̃·2³²`), i.e. `|Lⱼ·2³² − (a·n − w·cⱼ)|`
/// with `w = 0` per edge and `a` per bin. Exact: `a·n ≤ 2³²·2⁸⁴`.
#[derive(Debug, Clone, Copy)]
struct RankScores {
    /// `a·n`.
    target: u128,
    /// `w`.
    per_count: u64,
    /// `2^(shift − 1)`.
    half: u128,
    /// The selector's grid is `2^shift` units.
    shift: u32,
}

impl RankScores {
    /// `sⱼ` from `below = Lⱼ` and `count = cⱼ` (`cⱼ ≤ n`).
    #[inline(always)]
    fn raw(&self, below: u128, count: u64) -> u128 {
        let target = self.target - self.per_count as u128 * count as u128;
        (below << Q_SHIFT).abs_diff(target)
    }

    /// `round(s/2^shift)`, half up: the score in units of the selector's grid.
    #[inline(always)]
    fn round(&self, s: u128) -> u128 {
        (s + self.half) >> self.shift
    }
}

/// The rounded scores `round(sⱼ/2^shift)` of the candidates over `counts`, in order:
/// [`unit`](Self::unit)`(j)` must be called for `j = 0, 1, …` (it carries `Lⱼ` along).
struct UnitCursor<'c> {
    scores: RankScores,
    counts: &'c [u64],
    /// `Lⱼ` of the next candidate.
    below: u128,
}

impl<'c> UnitCursor<'c> {
    fn new(scores: RankScores, counts: &'c [u64]) -> Self {
        Self {
            scores,
            counts,
            below: 0,
        }
    }

    /// Candidate `j`'s rounded score (plain indexing and comparisons: see
    /// [`RankSelector::units`]).
    #[inline]
    fn unit(&mut self, j: usize) -> u128 {
        // The candidate past the last bin is the top edge (edges only): count 0.
        let c = if j < self.counts.len() { self.counts[j] } else { 0 };
        let unit = self.scores.round(self.scores.raw(self.below, c));
        self.below += c as u128;
        unit
    }
}

pub(super) fn check_level(q: f64) -> Result<(), Error> {
    if (0.0..=1.0).contains(&q) {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            name: "q",
            value: q,
            reason: "a quantile level lies in [0, 1]",
        })
    }
}

/// One private quantile of records clamped to a [`QuantileGrid`]: permute-and-flip
/// over the grid's edges with the rank score (see the [module docs](self) for the
/// formula, the sensitivity and the error bounds).
///
/// * **Guarantee:** pure ε-DP under add/remove of a privacy unit contributing at most
///   `contributions` records ([`new`](Self::new); `Δu = contributions·max(q, 1 − q)`),
///   or under substitution ([`with_relation`](Self::with_relation); `Δu =
///   contributions`).
/// * **State:** exact [`BinCounts`](super::BinCounts), mergeable across partitions; the release reads
///   only them ([`release_counts`](Self::release_counts)).
/// * **Output:** an edge of the grid (empty data: every edge scores 0, so the edge is
///   uniform — the release still works).
/// * **Timing:** the words drawn depend only on `B`, never on the records.
///
/// ```
/// use dpmech::statistics::{Quantile, QuantileGrid};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let grid = QuantileGrid::new(0.0, 3600.0, 3600)?;
/// let median = Quantile::new(&grid, 0.5, 1.0, 1)?; // ε = 1, one record per unit
/// let durations: Vec<f64> = (0..1001).map(|i| i as f64).collect();
/// let released = median.release(&durations, &mut ChaCha20Rng::seed_from_u64(1));
/// assert!((released - 500.0).abs() <= 50.0);
/// // The same from counts merged elsewhere:
/// let counts = grid.counts(&durations);
/// let again = median.release_counts(counts.as_slice(), &mut ChaCha20Rng::seed_from_u64(1))?;
/// assert_eq!(again, released);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantile {
    grid: QuantileGrid,
    q: f64,
    epsilon: f64,
    contributions: u64,
    relation: Neighbouring,
    selector: RankSelector,
}

impl Quantile {
    /// The `q`-quantile at level ε under add/remove of a unit contributing at most
    /// `contributions` records (the SQL layer's L∞ bound).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] for `q ∉ [0, 1]` (or NaN) or `contributions` not in
    /// `1..=`[`MAX_CONTRIBUTIONS`]; [`Error::InvalidEpsilon`]; [`Error::ScaleOutOfRange`]
    /// when `ε/Δu` is too small for the selector's score grid. All before anything is
    /// drawn.
    pub fn new(grid: &QuantileGrid, q: f64, epsilon: f64, contributions: u64) -> Result<Self, Error> {
        Self::with_relation(grid, q, epsilon, contributions, Neighbouring::AddRemove)
    }

    /// The same under the neighbouring `relation` (substitution: `Δu = contributions`).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_relation(
        grid: &QuantileGrid,
        q: f64,
        epsilon: f64,
        contributions: u64,
        relation: Neighbouring,
    ) -> Result<Self, Error> {
        let selector = RankSelector::new(Candidates::Edges, q, epsilon, contributions, relation)?;
        Ok(Self {
            grid: *grid,
            q,
            epsilon,
            contributions,
            relation,
            selector,
        })
    }

    /// The same selection over the grid's bins as points instead of its edges
    /// (tie-aware score, midpoint released: for integer data with atoms, the
    /// contribution bounds suggester). The candidates change nothing else: the
    /// sensitivity, the score grid and the guarantee are those of `self`.
    pub(super) fn over_bins(self) -> Self {
        Self {
            selector: RankSelector {
                candidates: Candidates::Bins,
                ..self.selector
            },
            ..self
        }
    }

    /// The released quantile from exact counts per bin (e.g. merged over partitions).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `counts.len()` is not the grid's number of bins
    /// (a public shape), before anything is drawn. Never because of the counts' values.
    pub fn release_counts<R: CryptoRng + ?Sized>(&self, counts: &[u64], rng: &mut R) -> Result<f64, Error> {
        self.grid.check_counts(counts)?;
        Ok(self.value(self.select_counts(counts, rng)))
    }

    /// The released quantile of `records` (binned by the grid's rule, then
    /// [`release_counts`](Self::release_counts)). Never fails: NaN, ±∞, out-of-range
    /// values and empty data are all handled by the rule.
    pub fn release<R: CryptoRng + ?Sized>(&self, records: &[f64], rng: &mut R) -> f64 {
        let counts = self.grid.counts(records);
        self.value(self.select_counts(counts.as_slice(), rng))
    }

    /// The selection from the counts per bin.
    fn select_counts<R: CryptoRng + ?Sized>(&self, counts: &[u64], rng: &mut R) -> usize {
        self.selector.select(counts, rng)
    }

    /// The exact scores the selector receives for `counts`, one per edge (`≤ 0`, the
    /// best `0`): for tests and explanation.
    ///
    /// # Errors
    ///
    /// As [`release_counts`](Self::release_counts).
    pub fn scores(&self, counts: &[u64]) -> Result<Vec<f64>, Error> {
        self.grid.check_counts(counts)?;
        Ok(self.selector.scores(counts))
    }

    /// `r(β)`: with probability `≥ 1 − β` the released edge's rank is within
    /// `OPT + r(β)` of `q̃n` (see the [module docs](self#error)).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`beta`) unless `0 < β < 1`; [`Error::Unattainable`]
    /// when the bound overflows `f64`.
    pub fn rank_error(&self, beta: f64) -> Result<f64, Error> {
        self.selector.rank_error(self.epsilon, self.grid.bins() + 1, beta)
    }

    /// The released value of candidate `j`.
    fn value(&self, j: usize) -> f64 {
        match self.selector.candidates {
            Candidates::Edges => self.grid.edge(j),
            Candidates::Bins => self.grid.midpoint(j),
        }
    }

    /// The sensitivity `Δu` of the rank score, in ranks.
    pub fn sensitivity(&self) -> f64 {
        self.selector.sensitivity
    }

    /// The quantile level `q` as given.
    pub fn level(&self) -> f64 {
        self.q
    }

    /// The grid.
    pub fn grid(&self) -> &QuantileGrid {
        &self.grid
    }

    /// The most records one unit contributes.
    pub fn contributions(&self) -> u64 {
        self.contributions
    }

    /// The neighbouring relation the guarantee is stated for.
    pub fn relation(&self) -> Neighbouring {
        self.relation
    }

    /// `PrivacyLoss::Pure { epsilon }`, under [`relation`](Self::relation).
    pub fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }
}

impl<'a> Mechanism<&'a [f64]> for Quantile {
    type Output = f64;
    fn release<R: CryptoRng + ?Sized>(&self, input: &'a [f64], rng: &mut R) -> Result<f64, Error> {
        Ok(Quantile::release(self, input, rng))
    }
    fn privacy_loss(&self) -> PrivacyLoss {
        Quantile::privacy_loss(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{Rng, SeedableRng};

    /// Today's `QuantileGrid::prefix` before the selection streamed (issue 42): `Lⱼ`.
    fn prefix_before(counts: &[u64]) -> Vec<u128> {
        let mut prefix = Vec::with_capacity(counts.len() + 1);
        let mut below = 0u128;
        prefix.push(0);
        for &c in counts {
            below += c as u128;
            prefix.push(below);
        }
        prefix
    }

    /// Today's `RankSelector::scores` before the selection streamed, verbatim.
    fn scores_before(selector: &RankSelector, below: &[u128], n: u128) -> Vec<f64> {
        let level = selector.level as u128; // a·n ≤ 2^32·2^80
        let half = 1u128 << (selector.shift - 1);
        let round = |s: u128| (s + half) >> selector.shift;
        let units: Vec<u128> = match selector.candidates {
            Candidates::Edges => below
                .iter()
                .map(|&l| round((l << Q_SHIFT).abs_diff(level * n)))
                .collect(),
            Candidates::Bins => below
                .windows(2)
                .map(|w| round((w[0] << Q_SHIFT).abs_diff(level * (n - (w[1] - w[0])))))
                .collect(),
        };
        let best = units.iter().copied().min().unwrap_or(0);
        let g = selector.selector.granularity();
        units
            .into_iter()
            .map(|u| 0.0 - (u - best).min(GAP_CAP) as f64 * g)
            .collect()
    }

    /// Today's `RankSelector::select`: the `f64` scores through `PermuteAndFlip::release`.
    fn select_before(selector: &RankSelector, counts: &[u64], rng: &mut ChaCha20Rng) -> usize {
        let below = prefix_before(counts);
        let n = below[below.len() - 1];
        let scores = scores_before(selector, &below, n);
        selector.selector.release(&scores, rng).unwrap_or(0)
    }

    /// The streamed selection (issue 42) against today's, on 400 seeded count vectors
    /// (1 to 2¹⁷ bins; empty, sparse, dense, tied and near-`u64::MAX` counts; edges and
    /// bins; levels 0, 1/2, 0.9, 1 and random; ε from 0.01 to 20; both relations): the
    /// same scores, the same index and the same generator state afterwards (stream
    /// position and the next word). The words in the coins' exact band are exercised in
    /// `mechanisms::exponential`'s test of the integer path.
    #[test]
    fn streamed_selection_equals_the_selection_through_scores() {
        let mut rng = ChaCha20Rng::seed_from_u64(4242);
        let sizes = [1usize, 2, 3, 63, 64, 65, 255, 1000, 4096, 1 << 17];
        for case in 0..400u64 {
            let bins = if case % 9 == 8 {
                1 + (rng.next_u64() % (1 << 17)) as usize
            } else {
                sizes[case as usize % sizes.len()]
            };
            let counts: Vec<u64> = (0..bins)
                .map(|_| match case % 5 {
                    0 => 0,
                    1 => u64::from(rng.next_u64() % 8 == 0) * (rng.next_u64() % 50),
                    2 => rng.next_u64() % 1000,
                    3 => 7,
                    _ => rng.next_u64() >> (rng.next_u64() % 64),
                })
                .collect();
            let q = [0.0, 0.5, 0.9, 1.0, (rng.next_u64() % 1000) as f64 / 1000.0][case as usize % 5];
            let epsilon = [0.01, 0.1, 1.0, 20.0][(case / 5) as usize % 4];
            let contributions = 1 + rng.next_u64() % 16;
            let relation = if case % 2 == 0 {
                Neighbouring::AddRemove
            } else {
                Neighbouring::Substitute
            };
            let candidates = if case % 3 == 0 && bins >= 1 {
                Candidates::Bins
            } else {
                Candidates::Edges
            };
            let selector = RankSelector::new(candidates, q, epsilon, contributions, relation).unwrap();
            let below = prefix_before(&counts);
            let n = below[below.len() - 1];
            assert_eq!(
                selector.scores(&counts),
                scores_before(&selector, &below, n),
                "case {case}"
            );
            let seed = rng.next_u64();
            let (mut old, mut new) = (ChaCha20Rng::seed_from_u64(seed), ChaCha20Rng::seed_from_u64(seed));
            let want = select_before(&selector, &counts, &mut old);
            let got = selector.select(&counts, &mut new);
            assert_eq!(got, want, "case {case}, {bins} bins");
            assert_eq!(new.get_word_pos(), old.get_word_pos(), "case {case}");
            assert_eq!(new.next_u64(), old.next_u64(), "case {case}");
        }
    }

    #[test]
    fn scores_are_exact_ranks_on_the_grid() {
        let grid = QuantileGrid::new(0.0, 4.0, 4).unwrap();
        let median = Quantile::new(&grid, 0.5, 1.0, 1).unwrap();
        // Records 0.5, 1.5, 1.5, 3.5: L = [0, 1, 3, 3, 4], n = 4, target 2: |L − 2| =
        // [2, 1, 1, 1, 2], handed over as gaps to the best.
        let scores = median.scores(&[1, 2, 0, 1]).unwrap();
        assert_eq!(scores, vec![-1.0, 0.0, 0.0, 0.0, -1.0]);
        // Over bins, tie-aware for q = 0.9: |Lⱼ − 0.9(n − cⱼ)| = [2.7, 0.8, 0.6, 0.3].
        let q9 = Quantile::new(&grid, 0.9, 1.0, 1).unwrap().over_bins();
        let scores = q9.scores(&[1, 2, 0, 1]).unwrap();
        let want = [-2.4, -0.5, -0.3, 0.0];
        assert!(
            scores.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-5),
            "{scores:?}"
        );
        assert_eq!(median.sensitivity(), 0.5);
        let q9 = Quantile::new(&grid, 0.9, 1.0, 3).unwrap();
        assert!((q9.sensitivity() - 2.7).abs() < 1e-9);
        let sub = Quantile::with_relation(&grid, 0.9, 1.0, 3, Neighbouring::Substitute).unwrap();
        assert_eq!(sub.sensitivity(), 3.0);
    }

    #[test]
    fn huge_counts_do_not_overflow_and_empty_data_releases() {
        let grid = QuantileGrid::new(0.0, 1.0, 3).unwrap();
        let q = Quantile::new(&grid, 0.25, 1.0, 1).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let v = q.release_counts(&[u64::MAX; 3], &mut rng).unwrap();
        assert!((0.0..=1.0).contains(&v));
        assert!(q.scores(&[0; 3]).unwrap().iter().all(|&s| s == 0.0));
        let v = q.release(&[], &mut rng);
        assert!((0.0..=1.0).contains(&v));
    }
}
