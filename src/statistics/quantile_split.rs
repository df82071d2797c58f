//! [`Quantiles`]: several private quantiles at once by the recursive split of Kaplan,
//! Schnapp & Stemmer (2022); the mechanism, its guarantee and its ε split are described
//! in the [`quantile`](super::quantile#several-quantiles) module docs.

use super::quantile::{Candidates, MAX_QUANTILES, RankSelector, check_level};
use super::quantile_grid::QuantileGrid;
use crate::privacy::{PrivacyLoss, check_epsilon, round};
use crate::sensitivity::Neighbouring;
use crate::{CryptoRng, Error, Mechanism};

/// One node of the recursive split: quantile `index` (in sorted order) at its relative
/// level, released among the edges between its parent's splits.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Node {
    index: usize,
    selector: RankSelector,
    /// Children in the `nodes` vector (lower, upper).
    lower: Option<usize>,
    upper: Option<usize>,
}

/// Several private quantiles of the same records at once, by the recursive split (see
/// the [module docs](self#several-quantiles)): ε-DP in total, `ε/⌈log₂(m + 1)⌉` per
/// level, under add/remove (or substitution, [`with_relation`](Self::with_relation)).
/// The outputs are edges of the grid, returned in the order of the levels given, and
/// never decrease with the level.
///
/// ```
/// use dpmech::statistics::{QuantileGrid, Quantiles};
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let grid = QuantileGrid::new(0.0, 1000.0, 1000)?;
/// let deciles = Quantiles::new(&grid, &[0.1, 0.5, 0.9], 1.0, 1)?;
/// let data: Vec<f64> = (0..10_000).map(|i| i as f64 / 10.0).collect();
/// let q = deciles.release(&data, &mut ChaCha20Rng::seed_from_u64(7));
/// assert!(q[0] <= q[1] && q[1] <= q[2]);
/// assert!((q[1] - 500.0).abs() < 20.0);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Quantiles {
    grid: QuantileGrid,
    levels: Vec<f64>,
    /// Sorted distinct levels; `slot[i]` = position of `levels[i]` among them.
    slot: Vec<usize>,
    distinct: usize,
    nodes: Vec<Node>,
    root: usize,
    epsilon: f64,
    per_node_epsilon: f64,
    relation: Neighbouring,
}

impl Quantiles {
    /// The quantiles at `levels` at total level ε under add/remove of a unit contributing
    /// at most `contributions` records.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyInput`] for no levels; [`Error::InvalidParameter`] for a level not in
    /// `[0, 1]`, more than [`MAX_QUANTILES`] levels, or `contributions` not in
    /// `1..=`[`MAX_CONTRIBUTIONS`](super::MAX_CONTRIBUTIONS); [`Error::InvalidEpsilon`]; [`Error::ScaleOutOfRange`]
    /// when a level's ε is too small for the selector. All before anything is drawn.
    pub fn new(grid: &QuantileGrid, levels: &[f64], epsilon: f64, contributions: u64) -> Result<Self, Error> {
        Self::with_relation(grid, levels, epsilon, contributions, Neighbouring::AddRemove)
    }

    /// The same, ε-DP under `relation`.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_relation(
        grid: &QuantileGrid,
        levels: &[f64],
        epsilon: f64,
        contributions: u64,
        relation: Neighbouring,
    ) -> Result<Self, Error> {
        if levels.is_empty() {
            return Err(Error::EmptyInput {
                what: "the quantile levels",
            });
        }
        if levels.len() > MAX_QUANTILES {
            return Err(Error::InvalidParameter {
                name: "levels",
                value: levels.len() as f64,
                reason: "at most 1024 quantile levels at once",
            });
        }
        for &q in levels {
            check_level(q)?;
        }
        let epsilon = check_epsilon(epsilon)?;
        let mut sorted = levels.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted.dedup();
        let slot = levels.iter().map(|q| sorted.partition_point(|s| s < q)).collect();
        let depth = usize::BITS - sorted.len().leading_zeros(); // ⌈log₂(m + 1)⌉
        let mut per_node_epsilon = round::div_down(epsilon, depth as f64);
        if relation == Neighbouring::Substitute {
            per_node_epsilon = round::div_down(per_node_epsilon, 2.0);
        }
        let mut nodes = Vec::with_capacity(sorted.len());
        let root = build(
            &sorted,
            0,
            sorted.len(),
            (0.0, 1.0),
            per_node_epsilon,
            contributions,
            &mut nodes,
        )?;
        Ok(Self {
            grid: *grid,
            levels: levels.to_vec(),
            slot,
            distinct: sorted.len(),
            nodes,
            root: root.unwrap_or(0),
            epsilon,
            per_node_epsilon,
            relation,
        })
    }

    /// The released quantiles from exact counts per bin, in the order of the levels.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `counts.len()` is not the grid's number of bins,
    /// before anything is drawn.
    pub fn release_counts<R: CryptoRng + ?Sized>(
        &self,
        counts: &[u64],
        rng: &mut R,
    ) -> Result<Vec<f64>, Error> {
        self.grid.check_counts(counts)?;
        let mut edges = vec![0usize; self.distinct];
        self.descend(self.root, (0, self.grid.bins()), counts, &mut edges, rng);
        Ok(self.slot.iter().map(|&s| self.grid.edge(edges[s])).collect())
    }

    /// The released quantiles of `records` (binned by the grid's rule). Never fails.
    pub fn release<R: CryptoRng + ?Sized>(&self, records: &[f64], rng: &mut R) -> Vec<f64> {
        let counts = self.grid.counts(records);
        // The counts come from the grid itself, so their shape is right.
        self.release_counts(counts.as_slice(), rng)
            .unwrap_or_else(|_| vec![self.grid.lower(); self.levels.len()])
    }

    /// Releases node `id` among edges `lo..=hi` from the records in bins `lo..hi`, then
    /// its children among the edges up to and from the released edge `k`, from the
    /// records below and at-or-above it.
    fn descend<R: CryptoRng + ?Sized>(
        &self,
        id: usize,
        (lo, hi): (usize, usize),
        counts: &[u64],
        edges: &mut [usize],
        rng: &mut R,
    ) {
        let node = self.nodes[id];
        let k = lo + node.selector.select(&counts[lo..hi], rng);
        edges[node.index] = k;
        if let Some(child) = node.lower {
            self.descend(child, (lo, k), counts, edges, rng);
        }
        if let Some(child) = node.upper {
            self.descend(child, (k, hi), counts, edges, rng);
        }
    }

    /// The ε spent by each selection (`ε/⌈log₂(m + 1)⌉`, halved under substitution).
    pub fn epsilon_per_selection(&self) -> f64 {
        self.per_node_epsilon
    }

    /// The levels as given.
    pub fn levels(&self) -> &[f64] {
        &self.levels
    }

    /// The neighbouring relation the guarantee is stated for.
    pub fn relation(&self) -> Neighbouring {
        self.relation
    }

    /// `PrivacyLoss::Pure { epsilon }` for the whole release.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }
}

impl<'a> Mechanism<&'a [f64]> for Quantiles {
    type Output = Vec<f64>;
    fn release<R: CryptoRng + ?Sized>(&self, input: &'a [f64], rng: &mut R) -> Result<Vec<f64>, Error> {
        Ok(Quantiles::release(self, input, rng))
    }
    fn privacy_loss(&self) -> PrivacyLoss {
        Quantiles::privacy_loss(self)
    }
}

/// Builds the subtree for the sorted levels `levels[from..to]`, which lie between the
/// levels `(low, high)` of the enclosing splits; returns its root.
fn build(
    levels: &[f64],
    from: usize,
    to: usize,
    (low, high): (f64, f64),
    epsilon: f64,
    contributions: u64,
    nodes: &mut Vec<Node>,
) -> Result<Option<usize>, Error> {
    if from >= to {
        return Ok(None);
    }
    let mid = from + (to - from) / 2;
    let q = levels[mid];
    // Relative level within the sub-problem (public: a function of the levels only).
    let relative = if high > low {
        ((q - low) / (high - low)).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let selector = RankSelector::new(
        Candidates::Edges,
        relative,
        epsilon,
        contributions,
        Neighbouring::AddRemove,
    )?;
    let id = nodes.len();
    nodes.push(Node {
        index: mid,
        selector,
        lower: None,
        upper: None,
    });
    let lower = build(levels, from, mid, (low, q), epsilon, contributions, nodes)?;
    let upper = build(levels, mid + 1, to, (q, high), epsilon, contributions, nodes)?;
    nodes[id].lower = lower;
    nodes[id].upper = upper;
    Ok(Some(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    #[test]
    fn the_split_tree_covers_every_level_once() {
        let grid = QuantileGrid::new(0.0, 1.0, 10).unwrap();
        let qs = Quantiles::new(&grid, &[0.9, 0.1, 0.5, 0.5, 0.3], 1.0, 1).unwrap();
        assert_eq!(qs.nodes.len(), 4);
        // 4 distinct levels: ⌈log₂ 5⌉ = 3 levels of ε/3.
        assert!(qs.epsilon_per_selection() <= 1.0 / 3.0);
        let out = qs.release(&[0.55; 50], &mut ChaCha20Rng::seed_from_u64(2));
        assert_eq!(out.len(), 5);
        assert_eq!(out[2], out[3]);
    }
}
