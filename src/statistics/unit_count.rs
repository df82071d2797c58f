//! Counts of privacy units (how many distinct people, not rows) per group, with the
//! sensitivity that the contribution bound on groups per unit gives them.

use crate::mechanisms::Mechanism;
use crate::privacy::{PrivacyLoss, check_epsilon, check_rho, round};
use crate::sensitivity::Neighbouring;
use crate::{CryptoRng, DiscreteGaussian, Error, Geometric};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

/// A private count of distinct privacy units per group.
///
/// After contribution bounding, each unit is counted **at most once in each of at most
/// `L0` groups** (`max_groups`). Adding or removing one unit then moves each of at most
/// `L0` cells by 1: the grouped release has L1 sensitivity `L0` and L2 sensitivity
/// `√L0`, one cell has sensitivity 1. Substituting one unit for another moves at most
/// `2·L0` cells by 1 (L1 `2L0`, L2 `√(2L0)`).
///
/// * [`UnitCount::pure`]: discrete Laplace noise ([`Geometric`]) of scale `m·L0/ε` on
///   every cell (`m` = 1 for add/remove, 2 for substitution): the **whole grouped
///   release** (any number of cells) is **pure ε-DP**.
/// * [`UnitCount::zcdp`]: discrete Gaussian noise of `σ² = m·L0/(2ρ)` on every cell
///   (per cell `ρ/(m·L0)`, rounded down, for sensitivity 1; the `m·L0` cells a unit can
///   move compose to ρ): the whole release is **ρ-zCDP**.
///
/// The exact state of a cell is an integer, the number of distinct (unit, group) pairs
/// kept by bounding, and mergeable by addition over partitions that never split a unit's
/// pairs (e.g. an engine that repartitions by unit before bounding). The public set of
/// groups (keys) is the caller's: every key is released, empty or not.
///
/// ```
/// use dpmech::sensitivity::Neighbouring;
/// use dpmech::statistics::UnitCount;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// // (user, day) visits; a user counts in at most 2 days.
/// let visits = [(1, "mon"), (1, "mon"), (1, "tue"), (2, "tue"), (3, "wed"), (1, "wed")];
/// let per_day = UnitCount::pure(2, Neighbouring::AddRemove, 1.0)?;
/// let noisy = per_day.release_groups(&visits, &["mon", "tue", "wed"], &mut ChaCha20Rng::seed_from_u64(1));
/// assert_eq!(noisy.len(), 3); // user 1 counts on 2 of its 3 days, chosen at random
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct UnitCount {
    max_groups: u64,
    relation: Neighbouring,
    loss: PrivacyLoss,
    noise: CellNoise,
}

#[derive(Debug, Clone, PartialEq)]
enum CellNoise {
    Laplace(Geometric),
    Gaussian(Box<DiscreteGaussian>),
}

/// `m·L0`: the cells one neighbouring change moves.
fn cells_moved(max_groups: u64, relation: Neighbouring) -> Result<u64, Error> {
    super::bounds::per_neighbour(max_groups, relation).ok_or(Error::InvalidParameter {
        name: "max_groups",
        value: max_groups as f64,
        reason: "a unit must be allowed in at least one group (and 2·L0 must fit a u64)",
    })
}

impl UnitCount {
    /// Pure ε-DP for the whole grouped release: discrete Laplace of scale `m·L0/ε` per cell.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] for `max_groups = 0`; [`Error::InvalidEpsilon`] (ε not
    /// finite or `≤ 0`); [`Error::ScaleOutOfRange`] when the scale is out of range.
    pub fn pure(max_groups: u64, relation: Neighbouring, epsilon: f64) -> Result<Self, Error> {
        let cells = cells_moved(max_groups, relation)?;
        let epsilon = check_epsilon(epsilon)?;
        let noise = Geometric::new(cells, epsilon)?;
        Ok(Self {
            max_groups,
            relation,
            loss: noise.privacy_loss(),
            noise: CellNoise::Laplace(noise),
        })
    }

    /// ρ-zCDP for the whole grouped release: a discrete Gaussian of `σ² = m·L0/(2ρ)` per
    /// cell.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] for `max_groups = 0`; [`Error::InvalidRho`] (ρ not
    /// finite or `≤ 0`); [`Error::ScaleOutOfRange`] when σ² is out of range.
    pub fn zcdp(max_groups: u64, relation: Neighbouring, rho: f64) -> Result<Self, Error> {
        let cells = cells_moved(max_groups, relation)?;
        let rho = check_rho(rho)?;
        let per_cell = round::div_down(rho, round::u64_up(cells));
        let noise = DiscreteGaussian::zcdp(1, per_cell)?;
        Ok(Self {
            max_groups,
            relation,
            loss: PrivacyLoss::Zcdp { rho },
            noise: CellNoise::Gaussian(Box::new(noise)),
        })
    }

    /// One cell: `distinct_units + Z` (saturating at the `i64` range), from the exact state
    /// of the cell (its number of distinct units after bounding).
    pub fn release_from_state<R: CryptoRng + ?Sized>(&self, distinct_units: u64, rng: &mut R) -> i64 {
        let value = i64::try_from(distinct_units).unwrap_or(i64::MAX);
        match &self.noise {
            CellNoise::Laplace(noise) => noise.release(value, rng),
            CellNoise::Gaussian(noise) => noise.release(value, rng),
        }
    }

    /// Every cell of a grouped release, from the exact states of the cells (one per public
    /// key, in the caller's order).
    pub fn release_slice<R: CryptoRng + ?Sized>(&self, distinct_units: &[u64], rng: &mut R) -> Vec<i64> {
        distinct_units
            .iter()
            .map(|&c| self.release_from_state(c, rng))
            .collect()
    }

    /// The distinct units among `units` (one cell, e.g. a release without groups), plus
    /// noise. Never refused.
    pub fn release<U: Hash + Eq, R: CryptoRng + ?Sized>(&self, units: &[U], rng: &mut R) -> i64 {
        let distinct = units.iter().collect::<HashSet<_>>().len();
        self.release_from_state(distinct as u64, rng)
    }

    /// A grouped release from `(unit, group)` pairs over the public `keys` (one noisy
    /// count per key, in that order; pairs whose group is not a key are dropped).
    ///
    /// Bounding, a data-independent per-unit rule: a unit in at most `L0` keys counts
    /// once in each; a unit in `d > L0` keys keeps the `L0` of them with the smallest
    /// **keyed random ranks** and counts once in each, so each of its keys is kept with
    /// probability `L0/d`, whatever the keys' order (no bias toward small keys). The
    /// rank of a (unit, key) pair is a pseudo-random function of the unit and the key's
    /// position under a fresh key drawn from `rng` for this release (ChaCha20's block
    /// at stream = the unit's keyed fingerprint, counter = the key's position), as the
    /// SQL crate's bounding ranks pairs under a key derived from its release key. The
    /// key takes the first 48 bytes drawn, whatever the data; then the noise. Never
    /// refused.
    pub fn release_groups<U, G, R>(&self, pairs: &[(U, G)], keys: &[G], rng: &mut R) -> Vec<i64>
    where
        U: Hash + Eq,
        G: Ord,
        R: CryptoRng + ?Sized,
    {
        let order = BoundingOrder::draw(rng);
        let index: BTreeMap<&G, usize> = keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
        let mut groups_of: HashMap<&U, BTreeSet<usize>> = HashMap::new();
        for (unit, group) in pairs {
            if let Some(&i) = index.get(group) {
                groups_of.entry(unit).or_default().insert(i);
            }
        }
        let mut cells = vec![0u64; keys.len()];
        let keep = usize::try_from(self.max_groups).unwrap_or(usize::MAX);
        for (unit, groups) in &groups_of {
            if groups.len() <= keep {
                for &i in groups {
                    cells[i] = cells[i].saturating_add(1);
                }
            } else {
                for i in order.keep(*unit, groups, keep) {
                    cells[i] = cells[i].saturating_add(1);
                }
            }
        }
        self.release_slice(&cells, rng)
    }

    /// An integer `w` with `Pr[|Z| > w] ≤ β` for one cell. Discrete Laplace: the smallest
    /// such `w` (exact tail). Discrete Gaussian: its sub-Gaussian tail (Canonne, Kamath &
    /// Steinke 2020), `Pr[|Z| ≥ t] ≤ 2e^(−t²/(2σ²))`, so `w = ⌈σ·√(2 ln(2/β))⌉`, rounded up.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] unless `0 < β < 1`.
    pub fn confidence_half_width(&self, beta: f64) -> Result<u64, Error> {
        match &self.noise {
            CellNoise::Laplace(noise) => noise.confidence_half_width(beta),
            CellNoise::Gaussian(noise) => gaussian_half_width(noise, beta),
        }
    }

    /// The bound `L0` on groups per unit.
    pub fn max_groups(&self) -> u64 {
        self.max_groups
    }

    /// The neighbouring relation the guarantee holds for.
    pub fn relation(&self) -> Neighbouring {
        self.relation
    }

    /// `Pure { epsilon }` or `Zcdp { rho }` of the whole grouped release.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        self.loss
    }
}

/// `⌈σ·√(2 ln(2/β))⌉` rounded up, with `Pr[|Z| > w] ≤ β` for the discrete Gaussian `Z`
/// of `noise`: it is sub-Gaussian with variance proxy σ² (Canonne, Kamath & Steinke 2020),
/// `Pr[|Z| ≥ t] ≤ 2e^(−t²/(2σ²))`.
pub(super) fn gaussian_half_width(noise: &DiscreteGaussian, beta: f64) -> Result<u64, Error> {
    let beta = crate::mechanisms::check_beta(beta)?;
    let (num, den) = noise.sigma_squared();
    // σ² rounded up: num rounded up, den rounded down.
    let variance = round::div_up(round::up(num as f64), round::down(den as f64));
    let width = round::mul_up(
        round::sqrt_up(variance),
        round::sqrt_up(round::mul_up(2.0, round::ln_up(round::div_up(2.0, beta)))),
    );
    Ok(width.ceil() as u64)
}

impl Mechanism<u64> for UnitCount {
    type Output = i64;
    fn release<R: CryptoRng + ?Sized>(&self, distinct_units: u64, rng: &mut R) -> Result<i64, Error> {
        Ok(self.release_from_state(distinct_units, rng))
    }
    fn privacy_loss(&self) -> PrivacyLoss {
        self.loss
    }
}

impl<'a> Mechanism<&'a [u64]> for UnitCount {
    type Output = Vec<i64>;
    fn release<R: CryptoRng + ?Sized>(
        &self,
        distinct_units: &'a [u64],
        rng: &mut R,
    ) -> Result<Vec<i64>, Error> {
        Ok(self.release_slice(distinct_units, rng))
    }
    fn privacy_loss(&self) -> PrivacyLoss {
        self.loss
    }
}

/// The keyed random order of one grouped release's bounding: a 256-bit ChaCha20 key and
/// a 128-bit fingerprint key, drawn from the release's generator.
struct BoundingOrder {
    stream_key: [u8; 32],
    fingerprint_key: [u8; 16],
}

impl BoundingOrder {
    /// A fresh order: 48 bytes from `rng`.
    fn draw<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut order = BoundingOrder {
            stream_key: [0; 32],
            fingerprint_key: [0; 16],
        };
        rng.fill_bytes(&mut order.stream_key);
        rng.fill_bytes(&mut order.fingerprint_key);
        order
    }

    /// The `keep` positions of `groups` with the smallest ranks `PRF(fingerprint(unit),
    /// position)`: the first word of ChaCha20's block `position` on the stream
    /// `fingerprint(unit)` (a 64-bit SipHash of the secret fingerprint key and the unit),
    /// ties (probability about 2⁻⁶⁴ per pair) broken by position.
    fn keep<U: Hash>(&self, unit: &U, groups: &BTreeSet<usize>, keep: usize) -> impl Iterator<Item = usize> {
        let mut hasher = DefaultHasher::new();
        hasher.write(&self.fingerprint_key);
        unit.hash(&mut hasher);
        let mut stream = ChaCha20Rng::from_seed(self.stream_key);
        stream.set_stream(hasher.finish());
        let mut ranked: Vec<(u64, usize)> = groups
            .iter()
            .map(|&i| {
                stream.set_word_pos(16 * i as u128);
                (stream.next_u64(), i)
            })
            .collect();
        ranked.sort_unstable();
        ranked.into_iter().take(keep).map(|(_, i)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_releases_count_each_unit_once_in_at_most_l0_keys() {
        use rand_chacha::ChaCha20Rng;
        use rand_core::SeedableRng;
        // ε = 10⁶: the noise is 0 except with probability ~e^(−10⁶/2).
        let exact = UnitCount::pure(2, Neighbouring::AddRemove, 1e6).unwrap();
        let visits = [
            (1, "mon"),
            (1, "mon"),
            (1, "wed"),
            (1, "tue"),
            (2, "tue"),
            (3, "wed"),
            (4, "sun"), // not a key: dropped
        ];
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let keys = ["mon", "tue", "wed", "thu"];
        // Unit 1 keeps two of "mon", "tue", "wed"; units 2 and 3 keep theirs.
        let cells = exact.release_groups(&visits, &keys, &mut rng);
        assert_eq!(cells.iter().sum::<i64>(), 4, "{cells:?}");
        assert!(cells[0] <= 1 && (1..=2).contains(&cells[1]) && (1..=2).contains(&cells[2]));
        assert_eq!(cells[3], 0);
        assert_eq!(exact.release(&[7, 7, 8, 7], &mut rng), 2);
        let empty: [(u8, &str); 0] = [];
        assert_eq!(exact.release_groups(&empty, &keys, &mut rng), [0, 0, 0, 0]);
    }

    #[test]
    fn calibration_follows_the_groups_per_unit() {
        let one = UnitCount::pure(1, Neighbouring::AddRemove, 1.0).unwrap();
        let three = UnitCount::pure(3, Neighbouring::AddRemove, 1.0).unwrap();
        let sub = UnitCount::pure(3, Neighbouring::Substitute, 1.0).unwrap();
        let scale = |u: &UnitCount| match &u.noise {
            CellNoise::Laplace(g) => g.scale(),
            CellNoise::Gaussian(_) => f64::NAN,
        };
        assert!(scale(&one) >= 1.0 && scale(&one) < 1.0 + 1e-9);
        assert!(scale(&three) >= 3.0 && scale(&three) < 3.0 + 1e-9);
        assert!(scale(&sub) >= 6.0 && scale(&sub) < 6.0 + 1e-9);
        // zCDP: σ² = L0/(2ρ) = 4/(2·0.5) = 4.
        let gaussian = UnitCount::zcdp(4, Neighbouring::AddRemove, 0.5).unwrap();
        let CellNoise::Gaussian(g) = &gaussian.noise else {
            panic!()
        };
        assert!(
            (g.sigma() - 2.0).abs() < 1e-9 && g.sigma() >= 2.0,
            "{}",
            g.sigma()
        );
        assert_eq!(gaussian.privacy_loss(), PrivacyLoss::Zcdp { rho: 0.5 });
        for bad in [
            UnitCount::pure(0, Neighbouring::AddRemove, 1.0),
            UnitCount::pure(u64::MAX, Neighbouring::Substitute, 1.0),
            UnitCount::pure(1, Neighbouring::AddRemove, 0.0),
            UnitCount::pure(1, Neighbouring::AddRemove, f64::NAN),
            UnitCount::zcdp(1, Neighbouring::AddRemove, -1.0),
            UnitCount::zcdp(0, Neighbouring::AddRemove, 1.0),
        ] {
            assert!(bad.is_err(), "{bad:?}");
        }
    }
}
