//! Contribution bounds suggested from the data: the `L0` (groups per privacy unit) and
//! `L∞` (rows per unit and group) a grouped release should bound to, each released as
//! a DP quantile over a public integer grid `1..=max`, charged to an
//! [`Accountant`] before anything is drawn.
//!
//! # The bias–noise trade-off
//!
//! Bounding keeps at most `L0` groups per unit and `L∞` rows per (unit, group) pair, so
//! a release estimates the **bounded** truth: every row dropped is bias (a count of
//! visits comes out low when users with more than `L0·L∞` visits lose some). Larger
//! bounds drop fewer rows but raise the sensitivity — a count or sum per group has L1
//! sensitivity `L0·L∞` (`√L0·L∞` in L2), so the noise grows linearly with the bounds.
//! Suggesting the `q`-quantile (by default `q = 0.9`) of the per-unit numbers keeps all
//! rows of about a fraction `q` of the units (of the pairs, for `L∞`) and bounds the
//! rest: a larger `q` trades noise for less bias. The suggestion itself costs ε (spend a
//! small part of the budget on it) and is noisy: with probability `≥ 1 − β` its rank
//! is within [`Quantile::rank_error`] of the target.
//!
//! # Privacy
//!
//! A privacy unit contributes **one** number of groups (so the `L0` quantile has
//! `contributions = 1`) and, once its pairs are bounded to `pairs_per_unit`, at most
//! that many numbers of rows (`contributions = pairs_per_unit` for the `L∞` quantile).
//! Each is a [`Quantile`] at its ε over the bins of the integer grid (scored tie-aware,
//! see the [quantile docs](super::Quantile) on atoms), calibrated for the accountant's
//! neighbouring relation: together ε-DP by sequential composition.

use super::quantile::Quantile;
use super::quantile_grid::QuantileGrid;
use crate::privacy::{PrivacyLoss, round};
use crate::{Accountant, CryptoRng, Error};

/// The suggested contribution bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuggestedBounds {
    /// The most groups one unit should contribute to.
    pub l0: u64,
    /// The most rows one unit should contribute to one group.
    pub linf: u64,
}

/// Suggests `L0` and `L∞` as DP quantiles of the per-unit numbers over the public
/// integer grids `1..=max_l0` and `1..=max_linf` (values above `max` count as `max`,
/// `0` as `1`). See the [module docs](self) for the trade-off and the guarantee.
///
/// ```
/// use dpmech::Accountant;
/// use dpmech::statistics::ContributionBoundsSuggester;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// // 1000 users: rows per day they visited, one entry per (user, day).
/// let users: Vec<Vec<u64>> = (0..1000).map(|u| vec![1 + u % 3; 1 + (u % 4) as usize]).collect();
/// let accountant = Accountant::pure(1.0)?;
/// let suggester = ContributionBoundsSuggester::new(32, 32)?.quantile(0.9)?;
/// let bounds = suggester.release(&accountant, &users, 0.5, &mut ChaCha20Rng::seed_from_u64(1))?;
/// assert!((1..=32).contains(&bounds.l0) && (1..=32).contains(&bounds.linf));
/// assert_eq!(accountant.charges(), 1);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContributionBoundsSuggester {
    quantile: f64,
    l0_grid: QuantileGrid,
    linf_grid: QuantileGrid,
}

impl ContributionBoundsSuggester {
    /// Suggestions within `1..=max_l0` and `1..=max_linf` (public), at the 0.9 quantile.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when a maximum is not in `1..=2¹⁶`.
    pub fn new(max_l0: u64, max_linf: u64) -> Result<Self, Error> {
        Ok(Self {
            quantile: 0.9,
            l0_grid: integer_grid(max_l0)?,
            linf_grid: integer_grid(max_linf)?,
        })
    }

    /// The same at quantile level `q` (e.g. 0.99 for less bias, more noise).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `q ∉ [0, 1]`.
    pub fn quantile(self, q: f64) -> Result<Self, Error> {
        if !(0.0..=1.0).contains(&q) {
            return Err(Error::InvalidParameter {
                name: "q",
                value: q,
                reason: "a quantile level lies in [0, 1]",
            });
        }
        Ok(Self { quantile: q, ..self })
    }

    /// The grid of the numbers of groups per unit: bin `v − 1` holds the value `v`
    /// (records are the numbers as `f64`, e.g. `grid.bin_of(groups as f64)`).
    pub fn l0_grid(&self) -> QuantileGrid {
        self.l0_grid
    }

    /// The grid of the numbers of rows per (unit, group) pair.
    pub fn linf_grid(&self) -> QuantileGrid {
        self.linf_grid
    }

    /// Suggested `L0` from exact counts over [`l0_grid`](Self::l0_grid) (one entry per
    /// unit), at ε, charged to `accountant` before anything is drawn.
    ///
    /// # Errors
    ///
    /// Those of [`Quantile::new`] for ε, [`Error::InvalidParameter`] for counts of the
    /// wrong length, then the accountant's refusal ([`Error::BudgetExceeded`], …) — all
    /// before anything is drawn.
    pub fn release_l0_counts<R: CryptoRng + ?Sized>(
        &self,
        accountant: &Accountant,
        counts: &[u64],
        epsilon: f64,
        rng: &mut R,
    ) -> Result<u64, Error> {
        let mechanism = self.mechanism(self.l0_grid, accountant, epsilon, 1)?;
        self.l0_grid.check_counts(counts)?;
        accountant.spend(mechanism.privacy_loss())?;
        Ok(to_bound(mechanism.release_counts(counts, rng)?))
    }

    /// Suggested `L∞` from exact counts over [`linf_grid`](Self::linf_grid) (one entry
    /// per kept (unit, group) pair, each unit's pairs bounded to `pairs_per_unit` by the
    /// caller), at ε, charged to `accountant` before anything is drawn.
    ///
    /// # Errors
    ///
    /// As [`release_l0_counts`](Self::release_l0_counts); `pairs_per_unit` must be in
    /// `1..=2²⁰`.
    pub fn release_linf_counts<R: CryptoRng + ?Sized>(
        &self,
        accountant: &Accountant,
        counts: &[u64],
        pairs_per_unit: u64,
        epsilon: f64,
        rng: &mut R,
    ) -> Result<u64, Error> {
        let mechanism = self.mechanism(self.linf_grid, accountant, epsilon, pairs_per_unit)?;
        self.linf_grid.check_counts(counts)?;
        accountant.spend(mechanism.privacy_loss())?;
        Ok(to_bound(mechanism.release_counts(counts, rng)?))
    }

    /// Both suggestions from per-unit data: `units[i]` lists unit `i`'s rows in each
    /// group it touches. ε is split evenly: `L0` from the numbers of groups at `ε/2`,
    /// then `L∞` from the rows of each unit's **first** `L0` pairs (in the order given;
    /// the engine uses a keyed pseudo-random order) at `ε/2`. One charge of ε, made
    /// before anything is drawn.
    ///
    /// # Errors
    ///
    /// Those of [`Quantile::new`] for `ε/2` (checked for the largest `L0` the grid
    /// allows, so nothing can fail after the charge), then the accountant's refusal.
    pub fn release<U: AsRef<[u64]>, R: CryptoRng + ?Sized>(
        &self,
        accountant: &Accountant,
        units: &[U],
        epsilon: f64,
        rng: &mut R,
    ) -> Result<SuggestedBounds, Error> {
        let charged = self.charge(accountant, epsilon)?;
        let mut groups = self.l0_grid.counts(&[]);
        for unit in units {
            groups.add(&self.l0_grid, unit.as_ref().len() as f64);
        }
        let l0 = charged.l0(groups.as_slice(), rng)?;
        let mut rows = self.linf_grid.counts(&[]);
        for unit in units {
            for &r in unit.as_ref().iter().take(l0 as usize) {
                rows.add(&self.linf_grid, r as f64);
            }
        }
        let linf = charged.linf(rows.as_slice(), l0, rng)?;
        Ok(SuggestedBounds { l0, linf })
    }

    /// Charges ε for both suggestions (`ε/2` each, calibrated for the accountant's
    /// relation) and returns the two selections, to be run on exact counts computed
    /// elsewhere (e.g. by a query engine) — so a refused charge reads no data. The
    /// `L0` counts hold one entry per unit; the `L∞` counts one per (unit, group) pair
    /// of each unit's at most `l0` pairs (in an order that does not depend on other
    /// units), `l0` being the released `L0`.
    ///
    /// # Errors
    ///
    /// Those of [`Quantile::new`] for `ε/2` (checked for the largest `L0` the grid
    /// allows, so nothing can fail after the charge but a count vector of the wrong
    /// length), then the accountant's refusal ([`Error::BudgetExceeded`], …).
    pub fn charge(&self, accountant: &Accountant, epsilon: f64) -> Result<ChargedSuggestion, Error> {
        crate::privacy::check_epsilon(epsilon)?;
        let half = round::div_down(epsilon, 2.0);
        let l0 = self.mechanism(self.l0_grid, accountant, half, 1)?;
        let max_l0 = self.l0_grid.bins() as u64;
        // The worst L∞ calibration that can follow: refuse it now, not after the charge.
        self.mechanism(self.linf_grid, accountant, half, max_l0)?;
        accountant.spend(PrivacyLoss::pure(epsilon)?)?;
        Ok(ChargedSuggestion {
            suggester: *self,
            relation: accountant.relation(),
            half,
            l0,
        })
    }

    fn mechanism(
        &self,
        grid: QuantileGrid,
        accountant: &Accountant,
        epsilon: f64,
        contributions: u64,
    ) -> Result<Quantile, Error> {
        Quantile::with_relation(
            &grid,
            self.quantile,
            epsilon,
            contributions,
            accountant.relation(),
        )
        .map(Quantile::over_bins)
    }
}

/// Both suggestions of a [`ContributionBoundsSuggester`], already charged
/// ([`ContributionBoundsSuggester::charge`]): run them on exact counts.
#[derive(Debug, Clone, Copy)]
pub struct ChargedSuggestion {
    suggester: ContributionBoundsSuggester,
    relation: crate::sensitivity::Neighbouring,
    half: f64,
    l0: Quantile,
}

impl ChargedSuggestion {
    /// The grid of the `L0` counts.
    pub fn l0_grid(&self) -> QuantileGrid {
        self.suggester.l0_grid
    }

    /// The grid of the `L∞` counts.
    pub fn linf_grid(&self) -> QuantileGrid {
        self.suggester.linf_grid
    }

    /// Suggested `L0` from exact counts of the numbers of groups per unit over
    /// [`l0_grid`](Self::l0_grid).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] for counts of the wrong length.
    pub fn l0<R: CryptoRng + ?Sized>(&self, counts: &[u64], rng: &mut R) -> Result<u64, Error> {
        Ok(to_bound(self.l0.release_counts(counts, rng)?))
    }

    /// Suggested `L∞` from exact counts of the numbers of rows of each unit's at most
    /// `l0` pairs over [`linf_grid`](Self::linf_grid), `l0` the released `L0`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] for counts of the wrong length or `l0` beyond the
    /// `L0` grid.
    pub fn linf<R: CryptoRng + ?Sized>(&self, counts: &[u64], l0: u64, rng: &mut R) -> Result<u64, Error> {
        if !(1..=self.suggester.l0_grid.bins() as u64).contains(&l0) {
            return Err(Error::InvalidParameter {
                name: "l0",
                value: l0 as f64,
                reason: "the released L0 lies on the L0 grid",
            });
        }
        let s = &self.suggester;
        let mechanism =
            Quantile::with_relation(&s.linf_grid, s.quantile, self.half, l0, self.relation)?.over_bins();
        Ok(to_bound(mechanism.release_counts(counts, rng)?))
    }
}

/// The largest maximum of a suggested bound: `2¹⁶`.
const MAX_SUGGESTED: u64 = 1 << 16;

/// `[0.5, max + 0.5]` in `max` bins: bin `v − 1` is `[v − 1/2, v + 1/2)`, midpoint `v`.
fn integer_grid(max: u64) -> Result<QuantileGrid, Error> {
    if !(1..=MAX_SUGGESTED).contains(&max) {
        return Err(Error::InvalidParameter {
            name: "max",
            value: max as f64,
            reason: "a suggested bound's maximum lies in 1..=2^16",
        });
    }
    QuantileGrid::new(0.5, max as f64 + 0.5, max as usize)?.impute_nan(0.5)
}

/// The released midpoint `v` as the bound `v`: about a fraction `q` of the numbers are
/// at most `v`.
fn to_bound(midpoint: f64) -> u64 {
    (midpoint.round() as u64).max(1)
}
