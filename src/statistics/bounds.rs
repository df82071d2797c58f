//! Private bounds: where a column's values lie, for an analyst who has no public range to
//! clamp them to — a noisy histogram over signed powers of two and a threshold, after
//! Google's `ApproxBounds` (Google differential-privacy library; Wilson et al., *Differentially
//! Private SQL with Bounded User Contribution*, PoPETs 2020).

use crate::mechanisms::Mechanism;
use crate::privacy::PrivacyLoss;
use crate::sampling::grid::pow2;
use crate::sensitivity::Neighbouring;
use crate::statistics::Bounds;
use crate::statistics::releases::Release;
use crate::{Accountant, CryptoRng, Error, Geometric};

/// Default smallest exponent of the bins: magnitudes below `2⁻³²` share the two bins
/// next to zero.
pub const DEFAULT_MIN_EXPONENT: i32 = -32;
/// Default largest exponent: magnitudes from `2⁶³` on share the outermost bins.
pub const DEFAULT_MAX_EXPONENT: i32 = 64;
/// The smallest exponent accepted (`2⁻¹⁰²²`, the smallest normal `f64`).
pub const MIN_EXPONENT: i32 = -1022;
/// The largest exponent accepted (`2¹⁰²³`, the largest power of two in `f64`).
pub const MAX_EXPONENT: i32 = 1023;
/// Default failure probability β of the threshold.
pub const DEFAULT_BETA: f64 = 1e-6;

/// Approximate bounds of a column at a chosen ε, when no public range is known
/// ("ApproxBounds").
///
/// # The bins
///
/// For the public exponent range `[a, b]` (default `[−32, 64]`, [`exponents`](Self::exponents))
/// there are `P = b − a + 1` bins on each side of zero, `2P` in all, in increasing order:
///
/// ```text
///  (−∞, −2^(b−1)] … (−2^(k+1), −2^k] … (−2^a, 0) │ [0, 2^a) … [2^k, 2^(k+1)) … [2^(b−1), +∞)
/// ```
///
/// Zero (and `−0.0`) lies in the bin `[0, 2^a)`, so non-negative data gets the lower bound
/// `0` exactly. A record's bin is read from its binary exponent (exact, no logarithm).
/// **Records never cause an error:** `+∞` and values from `2^(b−1)` on count in the top bin,
/// `−∞` and values down from `−2^(b−1)` in the bottom one, and **NaN records count in no
/// bin** (they carry no magnitude; dropping a record is a per-record rule, so the
/// sensitivity below still holds).
///
/// # The release
///
/// 1. Exact counts per bin ([`BoundsHistogram`], mergeable by addition over partitions).
/// 2. Independent discrete Laplace noise on every bin ([`Geometric`] with L1 sensitivity
///    `Δ = c` under add/remove of a privacy unit that contributes at most `c` records
///    (`contributions`), `Δ = 2c` under substitution of a unit), scale `τ ≥ Δ/ε`.
/// 3. The threshold `t = k + 1`, `k` the smallest integer with
///    `Pr[|Z| > k] ≤ 2β/(2P)` ([`Geometric::confidence_half_width`]'s certified rounding):
///    so `Pr[Z ≥ t] ≤ β/(2P)` and, by the union bound, **with probability at least
///    `1 − β` no empty bin clears the threshold**.
/// 4. `lower` = the lower edge of the lowest bin whose noisy count is `≥ t`, `upper` = the
///    upper edge of the highest (edges of the outermost bins: `±2^b`). When **no bin
///    clears**, the data-independent fallback is the whole public range
///    `[−2^b, 2^b]`, flagged by [`PrivateBounds::cleared`]` = false` (not an error).
///
/// * **Guarantee:** pure ε-DP (the histogram is ε-DP; the rest is post-processing) under
///   the stated [`Neighbouring`] of privacy units contributing at most `contributions`
///   records each.
/// * **What the bounds mean:** with probability `≥ 1 − β`, `[lower, upper]` lies within
///   the hull of the bins that hold records (it never extends past the data by more than
///   one power of two); a bin holding `N ≥ t + k` records clears with probability
///   `≥ 1 − β/(2P)` (it fails only when its noise is below `−k`). Bins with fewer records (the tails) may be cut off: the bounds are meant
///   for clamping, which trades that bias for noise.
/// * **Draws:** one discrete Laplace sample per bin, `2P` in all whatever the data (the
///   samplers' draw counts are independent of their samples).
///
/// ```
/// use dpmech::sensitivity::Neighbouring;
/// use dpmech::statistics::ApproxBounds;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let durations: Vec<f64> = (0..5_000).map(|i| f64::from(i % 3000)).collect();
/// let bounds = ApproxBounds::new(1, Neighbouring::AddRemove, 1.0)?;
/// let found = bounds.release(&durations, &mut ChaCha20Rng::seed_from_u64(1));
/// assert!(found.cleared);
/// assert_eq!(found.upper, 4096.0); // 2999 lies in [2048, 4096)
/// assert!(found.lower <= 32.0); // the sparse bins near 0 (e.g. 2 records in [0, 2⁻³²)) may be cut off
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ApproxBounds {
    params: Params,
    noise: Geometric,
    threshold: i64,
}

/// The public parameters an [`ApproxBounds`] is built from.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Params {
    contributions: u64,
    relation: Neighbouring,
    epsilon: f64,
    min_exponent: i32,
    max_exponent: i32,
    beta: f64,
}

/// The exact, mergeable state of [`ApproxBounds`]: one count per bin, in increasing
/// order of the bins. Two states of the same layout merge by adding their counts
/// (saturating at `u64::MAX`), in any order and over any partition of the records.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoundsHistogram {
    min_exponent: i32,
    max_exponent: i32,
    counts: Vec<u64>,
}

/// What [`ApproxBounds`] releases.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct PrivateBounds {
    /// The lower edge of the lowest bin that cleared the threshold (`−2^b` if none did).
    pub lower: f64,
    /// The upper edge of the highest bin that cleared the threshold (`2^b` if none did).
    pub upper: f64,
    /// Whether any bin cleared the threshold; `false` means the fallback (the whole public
    /// range) was returned.
    pub cleared: bool,
}

impl PrivateBounds {
    /// The bounds as clamping [`Bounds`] for the other releases (`lower < upper`, both
    /// finite, always).
    pub fn to_bounds(&self) -> Bounds {
        Bounds::from((self.lower, self.upper))
    }
}

impl ApproxBounds {
    /// Bounds at privacy level `epsilon` for privacy units that contribute at most
    /// `contributions` records each, neighbours under `relation`; the default bins
    /// ([`DEFAULT_MIN_EXPONENT`], [`DEFAULT_MAX_EXPONENT`]) and failure probability
    /// ([`DEFAULT_BETA`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSensitivity`] for `contributions = 0` (or `2c` overflowing under
    /// substitution); those of [`Geometric::new`] for ε (not finite or `≤ 0`) and the
    /// scale.
    pub fn new(contributions: u64, relation: Neighbouring, epsilon: f64) -> Result<Self, Error> {
        Self::build(Params {
            contributions,
            relation,
            epsilon,
            min_exponent: DEFAULT_MIN_EXPONENT,
            max_exponent: DEFAULT_MAX_EXPONENT,
            beta: DEFAULT_BETA,
        })
    }

    /// The same with the public exponent range `[min, max]` of the bins (`2(max − min + 1)`
    /// bins).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] unless
    /// [`MIN_EXPONENT`]` ≤ min < max ≤ `[`MAX_EXPONENT`].
    pub fn exponents(self, min: i32, max: i32) -> Result<Self, Error> {
        Self::build(Params {
            min_exponent: min,
            max_exponent: max,
            ..self.params
        })
    }

    /// The same with failure probability `beta` (the chance that an empty bin clears the
    /// threshold somewhere).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] unless `0 < β < 1`.
    pub fn failure_probability(self, beta: f64) -> Result<Self, Error> {
        Self::build(Params { beta, ..self.params })
    }

    fn build(params: Params) -> Result<Self, Error> {
        let Params {
            contributions,
            relation,
            epsilon,
            min_exponent,
            max_exponent,
            beta,
        } = params;
        if !(MIN_EXPONENT..=MAX_EXPONENT).contains(&min_exponent)
            || !(MIN_EXPONENT..=MAX_EXPONENT).contains(&max_exponent)
            || min_exponent >= max_exponent
        {
            return Err(Error::InvalidParameter {
                name: "exponents",
                value: f64::from(min_exponent),
                reason: "need -1022 <= min < max <= 1023 for the bins' exponents",
            });
        }
        let sensitivity = per_neighbour(contributions, relation).ok_or(Error::InvalidSensitivity {
            value: contributions as f64,
        })?;
        let noise = Geometric::new(sensitivity, epsilon)?;
        let bins = 2 * (max_exponent - min_exponent + 1) as u64;
        // Pr[Z ≥ k + 1] = Pr[|Z| > k]/2 ≤ β/bins.
        let per_bin = crate::mechanisms::check_beta(beta)? * 2.0 / bins as f64;
        let k = noise.confidence_half_width(crate::privacy::round::down(per_bin))?;
        let threshold = i64::try_from(k).unwrap_or(i64::MAX - 1) + 1;
        Ok(Self {
            params,
            noise,
            threshold,
        })
    }

    /// An empty state for this layout of bins.
    pub fn state(&self) -> BoundsHistogram {
        BoundsHistogram {
            min_exponent: self.params.min_exponent,
            max_exponent: self.params.max_exponent,
            counts: vec![0; self.bins()],
        }
    }

    /// The bounds of `values` (never refused; see the rule for NaN and ±∞ above).
    pub fn release<R: CryptoRng + ?Sized>(&self, values: &[f64], rng: &mut R) -> PrivateBounds {
        let mut state = self.state();
        values.iter().for_each(|&v| state.add(v));
        self.release_noisy(&state.counts, rng)
    }

    /// The bounds from an exact state (e.g. merged by an engine from its partitions).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `state` has another layout of bins than this
    /// mechanism (a public mismatch), before any randomness is drawn.
    pub fn release_from_state<R: CryptoRng + ?Sized>(
        &self,
        state: &BoundsHistogram,
        rng: &mut R,
    ) -> Result<PrivateBounds, Error> {
        if (state.min_exponent, state.max_exponent) != (self.params.min_exponent, self.params.max_exponent) {
            return Err(Error::InvalidParameter {
                name: "state",
                value: f64::from(state.min_exponent),
                reason: "the histogram's bins differ from the mechanism's exponent range",
            });
        }
        Ok(self.release_noisy(&state.counts, rng))
    }

    fn release_noisy<R: CryptoRng + ?Sized>(&self, counts: &[u64], rng: &mut R) -> PrivateBounds {
        let exact: Vec<i64> = counts
            .iter()
            .map(|&c| i64::try_from(c).unwrap_or(i64::MAX))
            .collect();
        let noisy = self.noise.release_slice(&exact, rng);
        let clears = |&(_, &c): &(usize, &i64)| c >= self.threshold;
        let first = noisy.iter().enumerate().find(clears).map(|(i, _)| i);
        let last = noisy.iter().enumerate().rev().find(clears).map(|(i, _)| i);
        match (first, last) {
            (Some(first), Some(last)) => PrivateBounds {
                lower: self.edges(first).0,
                upper: self.edges(last).1,
                cleared: true,
            },
            _ => PrivateBounds {
                lower: -pow2(self.params.max_exponent),
                upper: pow2(self.params.max_exponent),
                cleared: false,
            },
        }
    }

    /// The number of bins, `2(max − min + 1)`.
    pub fn bins(&self) -> usize {
        2 * (self.params.max_exponent - self.params.min_exponent + 1) as usize
    }

    /// The edges `(lower, upper)` reported for bin `index` (in increasing order; the
    /// outermost bins report `±2^max`). Indices past the last bin give the top bin.
    pub fn edges(&self, index: usize) -> (f64, f64) {
        let side = self.bins() / 2;
        let (a, index) = (self.params.min_exponent, index.min(self.bins() - 1));
        if index >= side {
            let j = (index - side) as i32;
            let lower = if j == 0 { 0.0 } else { pow2(a + j - 1) };
            (lower, pow2(a + j))
        } else {
            let j = (side - 1 - index) as i32;
            let upper = if j == 0 { 0.0 } else { -pow2(a + j - 1) };
            (-pow2(a + j), upper)
        }
    }

    /// The threshold `t` a noisy bin count must reach.
    pub fn threshold(&self) -> i64 {
        self.threshold
    }

    /// The noise scale `τ ≥ Δ/ε` of each bin.
    pub fn scale(&self) -> f64 {
        self.noise.scale()
    }

    /// The neighbouring relation the guarantee holds for.
    pub fn relation(&self) -> Neighbouring {
        self.params.relation
    }

    /// `PrivacyLoss::Pure { epsilon }`.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        self.noise.privacy_loss()
    }
}

/// What one neighbouring change of a unit that touches at most `k` cells (records,
/// groups) moves: `k` cells under add/remove, `2k` under substitution; `None` for `k = 0`
/// or an overflow.
pub(super) fn per_neighbour(k: u64, relation: Neighbouring) -> Option<u64> {
    let factor = match relation {
        Neighbouring::AddRemove => 1,
        Neighbouring::Substitute => 2,
    };
    k.checked_mul(factor).filter(|&moved| moved > 0)
}

impl BoundsHistogram {
    /// Counts one record in its bin (NaN in none). Never fails.
    #[inline]
    pub fn add(&mut self, value: f64) {
        if let Some(bin) = self.bin(value) {
            self.counts[bin] = self.counts[bin].saturating_add(1);
        }
    }

    /// The bin of `value` (`None` for NaN), by its binary exponent.
    #[inline]
    pub fn bin(&self, value: f64) -> Option<usize> {
        if value.is_nan() {
            return None;
        }
        let side = self.counts.len() / 2;
        let (a, b) = (self.min_exponent, self.max_exponent);
        let magnitude = value.abs();
        let j = if magnitude < pow2(a) {
            0
        } else {
            // a ≥ −1022, so the magnitude is normal (or +∞): its exponent is exact.
            let exponent = ((magnitude.to_bits() >> 52) & 0x7ff) as i32 - 1023;
            (exponent.min(b - 1) - a + 1) as usize
        };
        Some(if value >= 0.0 { side + j } else { side - 1 - j })
    }

    /// Adds the counts of `other` (same layout) to these.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when the layouts differ (nothing is added).
    pub fn merge(&mut self, other: &BoundsHistogram) -> Result<(), Error> {
        if (self.min_exponent, self.max_exponent) != (other.min_exponent, other.max_exponent) {
            return Err(Error::InvalidParameter {
                name: "state",
                value: f64::from(other.min_exponent),
                reason: "cannot merge histograms over different bins",
            });
        }
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine = mine.saturating_add(*theirs);
        }
        Ok(())
    }

    /// The counts per bin, in increasing order of the bins.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// A state for `mechanism`'s bins from counts kept elsewhere (e.g. an engine's
    /// serialised partial state).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `counts.len()` is not `mechanism.bins()`.
    pub fn from_counts(mechanism: &ApproxBounds, counts: Vec<u64>) -> Result<Self, Error> {
        if counts.len() != mechanism.bins() {
            return Err(Error::InvalidParameter {
                name: "counts",
                value: counts.len() as f64,
                reason: "one count per bin of the mechanism is needed",
            });
        }
        Ok(Self {
            counts,
            ..mechanism.state()
        })
    }
}

impl<'a> Mechanism<&'a [f64]> for ApproxBounds {
    type Output = PrivateBounds;
    fn release<R: CryptoRng + ?Sized>(&self, values: &'a [f64], rng: &mut R) -> Result<PrivateBounds, Error> {
        Ok(ApproxBounds::release(self, values, rng))
    }
    fn privacy_loss(&self) -> PrivacyLoss {
        ApproxBounds::privacy_loss(self)
    }
}

impl<'a> Mechanism<&'a BoundsHistogram> for ApproxBounds {
    type Output = PrivateBounds;
    fn release<R: CryptoRng + ?Sized>(
        &self,
        state: &'a BoundsHistogram,
        rng: &mut R,
    ) -> Result<PrivateBounds, Error> {
        self.release_from_state(state, rng)
    }
    fn privacy_loss(&self) -> PrivacyLoss {
        ApproxBounds::privacy_loss(self)
    }
}

/// Private bounds of `values` with [`ApproxBounds`] (default bins and β), charged to
/// `accountant` **before** the noise is drawn; units contribute at most `contributions`
/// records each. Pure ε-DP under `relation`.
///
/// ```
/// use dpmech::{Accountant, DefaultRng, sensitivity::Neighbouring, statistics::approx_bounds};
/// let accountant = Accountant::pure(1.0)?;
/// let incomes = vec![35_000.0; 1_000];
/// let found = approx_bounds(&accountant, &incomes, 1, Neighbouring::AddRemove, 0.5, &mut DefaultRng::from_os()?)?;
/// assert_eq!((found.value.lower, found.value.upper), (32_768.0, 65_536.0));
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// Those of [`ApproxBounds::new`] (`contributions = 0`, ε), then the accountant's refusal
/// ([`Error::BudgetExceeded`], [`Error::IncompatibleLoss`]), with nothing spent and
/// nothing drawn. Never because of a record.
pub fn approx_bounds<R: CryptoRng + ?Sized>(
    accountant: &Accountant,
    values: &[f64],
    contributions: u64,
    relation: Neighbouring,
    epsilon: f64,
    rng: &mut R,
) -> Result<Release<PrivateBounds>, Error> {
    let mechanism = ApproxBounds::new(contributions, relation, epsilon)?;
    Release::charged(
        accountant,
        "approx_bounds",
        relation,
        &mechanism,
        values,
        None,
        rng,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_fall_in_their_power_of_two_bins() {
        let m = ApproxBounds::new(1, Neighbouring::AddRemove, 1.0)
            .unwrap()
            .exponents(-2, 3)
            .unwrap();
        assert_eq!(m.bins(), 12);
        let s = m.state();
        let edges_of = |v: f64| m.edges(s.bin(v).unwrap());
        for (v, want) in [
            (0.0, (0.0, 0.25)),
            (-0.0, (0.0, 0.25)),
            (0.1, (0.0, 0.25)),
            (-0.1, (-0.25, 0.0)),
            (0.25, (0.25, 0.5)),
            (-0.25, (-0.5, -0.25)),
            (1.0, (1.0, 2.0)),
            (1.999, (1.0, 2.0)),
            (-2.0, (-4.0, -2.0)),
            (4.0, (4.0, 8.0)),
            (1e300, (4.0, 8.0)),
            (f64::INFINITY, (4.0, 8.0)),
            (f64::NEG_INFINITY, (-8.0, -4.0)),
            (f64::MIN_POSITIVE / 4.0, (0.0, 0.25)),
        ] {
            assert_eq!(edges_of(v), want, "{v}");
            let (lo, hi) = want;
            if v.is_finite() && v.abs() < 8.0 {
                assert!(lo <= v && v <= hi, "{v} outside {want:?}");
            }
        }
        assert_eq!(s.bin(f64::NAN), None);
        // The bins are in increasing order and tile the line.
        for i in 1..m.bins() {
            assert_eq!(m.edges(i - 1).1, m.edges(i).0);
        }
        assert!(
            ApproxBounds::new(1, Neighbouring::AddRemove, 1.0)
                .unwrap()
                .exponents(3, 3)
                .is_err()
        );
        assert!(
            ApproxBounds::new(1, Neighbouring::AddRemove, 1.0)
                .unwrap()
                .exponents(-1023, 3)
                .is_err()
        );
        assert!(
            ApproxBounds::new(1, Neighbouring::AddRemove, 1.0)
                .unwrap()
                .exponents(-1022, 1023)
                .is_ok()
        );
        assert!(ApproxBounds::new(0, Neighbouring::AddRemove, 1.0).is_err());
        assert!(ApproxBounds::new(u64::MAX, Neighbouring::Substitute, 1.0).is_err());
    }

    #[test]
    fn states_merge_exactly_in_any_order() {
        let m = ApproxBounds::new(2, Neighbouring::AddRemove, 1.0).unwrap();
        let values: Vec<f64> = (0..1000).map(|i| (f64::from(i) - 300.0) * 1.7).collect();
        let mut whole = m.state();
        values.iter().for_each(|&v| whole.add(v));
        let (mut left, mut right) = (m.state(), m.state());
        values[..400].iter().for_each(|&v| left.add(v));
        values[400..].iter().rev().for_each(|&v| right.add(v));
        right.merge(&left).unwrap();
        assert_eq!(right, whole);
        assert_eq!(whole.counts().iter().sum::<u64>(), 1000);
        let other = m.clone().exponents(-3, 5).unwrap();
        assert!(whole.merge(&other.state()).is_err());
        assert!(BoundsHistogram::from_counts(&m, vec![0; 3]).is_err());
        let rebuilt = BoundsHistogram::from_counts(&m, whole.counts().to_vec()).unwrap();
        assert_eq!(rebuilt, whole);
    }
}
