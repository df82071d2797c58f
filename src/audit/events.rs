//! Candidate events, split-sample selection, and certification.
//!
//! Outputs are first mapped to *cells*: the distinct outcomes seen in the selection
//! half (categorical outputs), or the intervals between cut points chosen on the
//! selection half (ordered outputs). An event is a set of cells:
//!
//! * single cells (`x = v`, one bin);
//! * for ordered outputs, every contiguous range of cells — thresholds `{x ≥ t}`,
//!   `{x ≤ t}` and intervals;
//! * for every output kind, the unions of the `j` cells with the highest empirical
//!   likelihood ratio (the Neyman–Pearson family), for every `j`.
//!
//! Every candidate is scored on the **selection half** with a cheap proxy of the
//! bound it would certify; the best `k` distinct events per direction are then
//! certified on the **fresh certification half** with exact Clopper–Pearson bounds,
//! with a Bonferroni split of α over every interval computed. Because the events are
//! a function of the selection half only, searching over many candidates does not
//! affect the confidence of what is certified.

use super::binomial::{clopper_pearson_lower_at, clopper_pearson_upper_at};
use crate::privacy::round;

/// Which way a privacy-loss bound goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `ln(Pr[M(D) ∈ E] / Pr[M(D′) ∈ E])`.
    DOverDPrime,
    /// `ln(Pr[M(D′) ∈ E] / Pr[M(D) ∈ E])`.
    DPrimeOverD,
}

impl Direction {
    /// `(numerator, denominator)` input names for display.
    pub fn names(self) -> (&'static str, &'static str) {
        match self {
            Self::DOverDPrime => ("D", "D′"),
            Self::DPrimeOverD => ("D′", "D"),
        }
    }
}

/// An event as a set of cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Cells `lo..=hi` of an ordered output.
    Range { lo: usize, hi: usize },
    /// An arbitrary set of cells (sorted), e.g. a likelihood-ratio union.
    Set(Vec<usize>),
}

impl Shape {
    /// The cells of the event, sorted.
    pub(crate) fn cells(&self) -> Vec<usize> {
        match self {
            Self::Range { lo, hi } => (*lo..=*hi).collect(),
            Self::Set(v) => v.clone(),
        }
    }

    /// The count of the event in a histogram over cells.
    pub(crate) fn count(&self, hist: &[u64]) -> u64 {
        match self {
            Self::Range { lo, hi } => hist[*lo..=*hi].iter().sum(),
            Self::Set(v) => v.iter().map(|&c| hist[c]).sum(),
        }
    }
}

/// An event chosen on the selection half, with its direction.
#[derive(Debug, Clone)]
pub(crate) struct Selected {
    pub(crate) direction: Direction,
    pub(crate) shape: Shape,
}

/// The per-interval error probability when `alpha` is split over `pairs`
/// (event, direction) pairs, each needing two one-sided intervals.
pub(crate) fn alpha_per_interval(alpha: f64, pairs: usize) -> f64 {
    // Rounded down: a smaller per-interval α only widens the intervals.
    round::div_down(alpha, (2 * pairs.max(1)) as f64)
}

/// A cheap stand-in for the certified bound, used only to rank candidates.
fn proxy(c_num: u64, n_num: u64, c_den: u64, n_den: u64, z: f64, delta: f64) -> f64 {
    let (cn, cd) = (c_num as f64, c_den as f64);
    let lower = (cn - z * cn.sqrt()) / n_num as f64 - delta;
    if lower <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let upper = (cd + z * cd.sqrt() + z * z) / n_den as f64;
    (lower / upper).ln()
}

/// Histograms of the two inputs' outputs over the same cells.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Histograms<'a> {
    /// Counts per cell for `D`.
    pub(crate) d: &'a [u64],
    /// Counts per cell for `D′`.
    pub(crate) dp: &'a [u64],
    /// Number of draws for `D` (cells may not cover unseen outcomes).
    pub(crate) n_d: u64,
    /// Number of draws for `D′`.
    pub(crate) n_dp: u64,
}

impl<'a> Histograms<'a> {
    /// `(numerator, denominator, n_numerator, n_denominator)` for a direction.
    fn oriented(&self, direction: Direction) -> (&'a [u64], &'a [u64], u64, u64) {
        match direction {
            Direction::DOverDPrime => (self.d, self.dp, self.n_d, self.n_dp),
            Direction::DPrimeOverD => (self.dp, self.d, self.n_dp, self.n_d),
        }
    }
}

/// Chooses at most `k` distinct events per direction from the selection-half
/// histograms. Only events whose proxy bound is positive on the selection half are
/// kept: the others could not certify a loss and would only split α finer.
pub(crate) fn select(
    h: Histograms<'_>,
    ordered: bool,
    k: usize,
    alpha_each: f64,
    delta: f64,
) -> Vec<Selected> {
    let z = (2.0 * (1.0 / alpha_each).ln()).sqrt();
    let m = h.d.len();
    let mut out = Vec::new();
    for direction in [Direction::DOverDPrime, Direction::DPrimeOverD] {
        let (num, den, n_num, n_den) = h.oriented(direction);
        let score = |a: u64, b: u64| proxy(a, n_num, b, n_den, z, delta);
        let mut candidates: Vec<(f64, Shape)> = Vec::new();
        if ordered {
            // Prefix sums make every range O(1).
            let mut pn = vec![0u64; m + 1];
            let mut pd = vec![0u64; m + 1];
            for i in 0..m {
                pn[i + 1] = pn[i] + num[i];
                pd[i + 1] = pd[i] + den[i];
            }
            for lo in 0..m {
                for hi in lo..m {
                    if lo == 0 && hi + 1 == m {
                        continue; // every outcome: probability 1 on both sides
                    }
                    let s = score(pn[hi + 1] - pn[lo], pd[hi + 1] - pd[lo]);
                    if s > 0.0 {
                        candidates.push((s, Shape::Range { lo, hi }));
                    }
                }
            }
        } else {
            for c in 0..m {
                let s = score(num[c], den[c]);
                if s > 0.0 {
                    candidates.push((s, Shape::Set(vec![c])));
                }
            }
        }
        // Likelihood-ratio unions: cells ranked by (c_num + ½) / (c_den + ½).
        // Cells never seen in the selection half add nothing to a union: leave them out.
        let mut order: Vec<usize> = (0..m).filter(|&c| num[c] + den[c] > 0).collect();
        order.sort_by(|&a, &b| {
            let ra = (num[a] as f64 + 0.5) * (den[b] as f64 + 0.5);
            let rb = (num[b] as f64 + 0.5) * (den[a] as f64 + 0.5);
            rb.total_cmp(&ra).then(num[b].cmp(&num[a])).then(a.cmp(&b))
        });
        let (mut cn, mut cd) = (0u64, 0u64);
        let mut best_prefix: Vec<(f64, usize)> = Vec::new();
        for (j, &c) in order.iter().enumerate() {
            cn += num[c];
            cd += den[c];
            let s = score(cn, cd);
            if s > 0.0 && j + 1 > 1 && j + 1 < m {
                best_prefix.push((s, j + 1));
            }
        }
        // Keep only the best few prefixes (each costs O(m) to materialise).
        best_prefix.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for &(s, len) in best_prefix.iter().take(k) {
            let mut cells = order[..len].to_vec();
            cells.sort_unstable();
            candidates.push((s, Shape::Set(cells)));
        }
        candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
        // Distinct events only: two candidates with the same selection-half counts are
        // (almost always) the same event padded with empty cells; certifying both
        // would only split α finer.
        let mut chosen: Vec<(u64, u64)> = Vec::new();
        for (_, shape) in candidates {
            if chosen.len() == k {
                break;
            }
            let counts = (shape.count(num), shape.count(den));
            if chosen.contains(&counts) {
                continue;
            }
            chosen.push(counts);
            out.push(Selected { direction, shape });
        }
    }
    out
}

/// The certified numbers for one (event, direction) pair.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Certified {
    pub(crate) count_num: u64,
    pub(crate) count_den: u64,
    pub(crate) p_num_lower: f64,
    pub(crate) p_den_upper: f64,
    pub(crate) loss_lower_bound: f64,
}

/// A lower bound on `ln((p_num − δ) / p_den)` from confidence bounds, rounded down.
pub(crate) fn loss_bound(p_num_lower: f64, p_den_upper: f64, delta: f64) -> f64 {
    let numerator = if delta == 0.0 {
        p_num_lower
    } else {
        round::sub_down(p_num_lower, delta)
    };
    if numerator <= 0.0 || p_den_upper <= 0.0 {
        return f64::NEG_INFINITY;
    }
    round::ln_down(round::div_down(numerator, p_den_upper))
}

/// Certifies one selected event on the certification-half histograms.
pub(crate) fn certify(sel: &Selected, h: Histograms<'_>, alpha_each: f64, delta: f64) -> Certified {
    let (num, den, n_num, n_den) = h.oriented(sel.direction);
    let count_num = sel.shape.count(num);
    let count_den = sel.shape.count(den);
    let p_num_lower = clopper_pearson_lower_at(count_num, n_num, alpha_each);
    let p_den_upper = clopper_pearson_upper_at(count_den, n_den, alpha_each);
    Certified {
        count_num,
        count_den,
        p_num_lower,
        p_den_upper,
        loss_lower_bound: loss_bound(p_num_lower, p_den_upper, delta),
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp, reason = "exact values are what these tests check")]
mod tests {
    use super::*;

    /// Histograms of 1000 draws each.
    fn thousand<'a>(d: &'a [u64], dp: &'a [u64]) -> Histograms<'a> {
        Histograms {
            d,
            dp,
            n_d: 1000,
            n_dp: 1000,
        }
    }

    #[test]
    fn selection_finds_the_separating_cell_and_ranges() {
        // Cells 0..5; cell 4 is common under D and rare under D′.
        let h_d = [100, 100, 100, 100, 600];
        let h_dp = [250, 250, 250, 200, 50];
        let h = thousand(&h_d, &h_dp);
        let sel = select(h, true, 3, 1e-7, 0.0);
        let first = sel
            .iter()
            .find(|s| s.direction == Direction::DOverDPrime)
            .unwrap();
        assert_eq!(first.shape.cells(), vec![4]);
        // And in the other direction the complement range {0..=3} (or part of it) wins.
        let back = sel
            .iter()
            .find(|s| s.direction == Direction::DPrimeOverD)
            .unwrap();
        assert!(back.shape.cells().iter().all(|&c| c < 4));
        // At most k per direction, all distinct.
        for d in [Direction::DOverDPrime, Direction::DPrimeOverD] {
            let mine: Vec<_> = sel
                .iter()
                .filter(|s| s.direction == d)
                .map(|s| s.shape.cells())
                .collect();
            assert!(mine.len() <= 3);
            for i in 0..mine.len() {
                for j in 0..i {
                    assert_ne!(mine[i], mine[j]);
                }
            }
        }
    }

    #[test]
    fn likelihood_ratio_union_beats_single_cells_on_unordered_outputs() {
        // Four categories each with ratio 3 under D: their union has the most mass.
        let h_d = [150, 150, 150, 150, 400];
        let h_dp = [50, 50, 50, 50, 800];
        let h = thousand(&h_d, &h_dp);
        let sel = select(h, false, 1, 1e-7, 0.0);
        let first = sel
            .iter()
            .find(|s| s.direction == Direction::DOverDPrime)
            .unwrap();
        assert_eq!(first.shape.cells(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn identical_histograms_give_no_positive_certified_loss() {
        let h = [300, 300, 400];
        let hs = thousand(&h, &h);
        let sel = select(hs, true, 4, 1e-7, 0.0);
        for s in &sel {
            let c = certify(s, hs, 1e-7, 0.0);
            assert!(c.loss_lower_bound < 0.0, "{s:?}: {}", c.loss_lower_bound);
        }
    }

    #[test]
    fn loss_bound_handles_delta_and_degenerate_inputs() {
        assert_eq!(loss_bound(0.1, 0.2, 0.1), f64::NEG_INFINITY);
        assert_eq!(loss_bound(0.0, 0.2, 0.0), f64::NEG_INFINITY);
        let b = loss_bound(0.5, 0.25, 0.0);
        assert!(b < core::f64::consts::LN_2 && b > 0.693);
        assert!(loss_bound(0.5, 0.25, 1e-3) < b);
        // 1e-6 / 8 is exact in binary floating point; the split never exceeds it.
        assert!(alpha_per_interval(1e-6, 4) <= 1e-6 / 8.0);
    }
}
