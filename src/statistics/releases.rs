//! Private count, sum, mean and histogram, each charged to an [`Accountant`] **before**
//! any noise is drawn (a refused charge releases nothing).

use crate::composition::{Accountant, Charge};
use crate::privacy::{PrivacyLoss, round};
use crate::sensitivity::{Neighbouring, Norm, queries};
use crate::statistics::accuracy::laplace_half_width;
use crate::statistics::{Bounds, ClampedSum, Mean, MeanMethod};
use crate::{CryptoRng, Error, Geometric, Mechanism};

/// A released statistic and the guarantee it carries.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Release<T> {
    /// The private value.
    pub value: T,
    /// What the release cost (already charged to the accountant).
    pub privacy_loss: PrivacyLoss,
    /// The neighbouring relation under which `privacy_loss` holds.
    pub relation: Neighbouring,
    /// For `value = statistic + noise`: the scale `b` of the (discrete) Laplace noise
    /// and the input rounding to the grid; `None` for non-additive releases (means).
    pub noise: Option<AdditiveNoise>,
}

/// The additive noise of a release: discrete Laplace of scale `scale` on a grid, after
/// rounding the statistic by at most `rounding`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdditiveNoise {
    /// The scale `b` (in the statistic's units).
    pub scale: f64,
    /// The largest movement of the statistic by rounding to the grid (`g/2`, or 0).
    pub rounding: f64,
}

impl<T> Release<T> {
    /// A half-width `w` with `Pr[|value − statistic| > w] ≤ β` per coordinate:
    /// `b·ln(1/β) + rounding` (the discrete Laplace tail on the grid is below the
    /// continuous one, so this is conservative). `None` for non-additive releases.
    pub fn confidence_half_width(&self, beta: f64) -> Option<Result<f64, Error>> {
        self.noise
            .map(|noise| laplace_half_width(noise.scale, beta).map(|w| round::add_up(w, noise.rounding)))
    }

    /// Charges `mechanism` to `accountant` under `label`, its guarantee stated for
    /// `relation` (refused before anything is drawn), releases `input` through it, and
    /// records the guarantee, the relation and, for additive noise, its `scale` (the
    /// statistic itself is not rounded: `rounding` 0).
    pub(super) fn charged<I, M, R>(
        accountant: &Accountant,
        label: &str,
        relation: Neighbouring,
        mechanism: &M,
        input: I,
        scale: Option<f64>,
        rng: &mut R,
    ) -> Result<Self, Error>
    where
        M: Mechanism<I, Output = T>,
        R: CryptoRng + ?Sized,
    {
        Ok(Release {
            value: accountant.release(
                Charge::of(mechanism).labelled(label).relation(relation),
                input,
                rng,
            )?,
            privacy_loss: mechanism.privacy_loss(),
            relation,
            noise: scale.map(|scale| AdditiveNoise { scale, rounding: 0.0 }),
        })
    }
}

/// A private count of `records` (pure ε-DP under add/remove **and** substitution: a
/// count moves by at most 1), with the geometric mechanism.
///
/// ```
/// use dpmech::{Accountant, DefaultRng, statistics::count};
/// let accountant = Accountant::pure(1.0)?;
/// let release = count(&accountant, 120, 0.5, &mut DefaultRng::from_os()?)?;
/// assert_eq!(release.privacy_loss, dpmech::PrivacyLoss::Pure { epsilon: 0.5 });
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// Those of [`Geometric::new`](crate::Geometric::new) for ε, then the accountant's refusal
/// ([`Error::BudgetExceeded`], or [`Error::IncompatibleLoss`] when the guarantee cannot be
/// charged to its budget), with nothing spent and nothing released. Never because of a
/// record.
pub fn count<R: CryptoRng + ?Sized>(
    accountant: &Accountant,
    records: u64,
    epsilon: f64,
    rng: &mut R,
) -> Result<Release<i64>, Error> {
    let mechanism = Geometric::new(1, epsilon)?;
    let value = i64::try_from(records).unwrap_or(i64::MAX);
    // Sensitivity 1 under either relation: stated for the accountant's.
    let relation = accountant.relation();
    Release::charged(
        accountant,
        "count",
        relation,
        &mechanism,
        value,
        Some(mechanism.scale()),
        rng,
    )
}

/// A private sum of `values` with [`ClampedSum`], charged to `accountant` first: the
/// records are read by the public [`Bounds`] (NaN imputed, clamped to
/// `[lower, upper]`, rounded to the grid; see [`records`](super::records)) and summed
/// exactly, with the Laplace mechanism calibrated to the sum's sensitivity under
/// `relation` ([`Bounds::sum_sensitivity`]: `max(|lower|, |upper|)` for add/remove,
/// `upper − lower` for substitution) plus the per-record rounding `g`. Pure ε-DP.
///
/// The statistic is the exact sum of the rounded records; it differs from the
/// real-number sum of the clamped records by at most `g/2` per record
/// (`g ≤ 2⁻⁴⁰·Δ`, [`Laplace::granularity`](crate::Laplace::granularity)). It does not depend on the order of the
/// records. No record, whatever its value, makes the release fail: errors come from
/// the public parameters only (bounds, ε) or from the accountant.
///
/// ```
/// use dpmech::{Accountant, DefaultRng, statistics::{Bounds, sum}};
/// use dpmech::sensitivity::Neighbouring;
/// let accountant = Accountant::pure(1.0)?;
/// let hours = [7.5, f64::NAN, 30.0, 6.0]; // NaN → 0 h, 30 → 24 h
/// let bounds = Bounds::new(0.0, 24.0)?.impute_nan(0.0)?;
/// let release = sum(&accountant, &hours, bounds, Neighbouring::AddRemove, 0.5, &mut DefaultRng::from_os()?)?;
/// # let _ = release;
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// Those of [`ClampedSum::new`] for the bounds and ε, then the accountant's refusal
/// ([`Error::BudgetExceeded`], or [`Error::IncompatibleLoss`] when the guarantee cannot be
/// charged to its budget), with nothing spent and nothing released. Never because of a
/// record.
pub fn sum<R: CryptoRng + ?Sized>(
    accountant: &Accountant,
    values: &[f64],
    bounds: impl Into<Bounds>,
    relation: Neighbouring,
    epsilon: f64,
    rng: &mut R,
) -> Result<Release<f64>, Error> {
    let mechanism = ClampedSum::new(bounds, relation, epsilon)?;
    Release::charged(
        accountant,
        "sum",
        relation,
        &mechanism,
        values,
        Some(mechanism.scale()),
        rng,
    )
}

/// A private mean of `values` with [`Mean`] (read by the public [`Bounds`], summed
/// exactly, by one of the noisy-average algorithms of [`MeanMethod`]), charged to
/// `accountant` first. No record, whatever its value, makes the release fail.
///
/// # Errors
///
/// Those of [`Mean::new`] for the bounds and ε, then the accountant's refusal
/// ([`Error::BudgetExceeded`], or [`Error::IncompatibleLoss`] when the guarantee cannot be
/// charged to its budget), with nothing spent and nothing released. Never because of a
/// record.
pub fn mean<R: CryptoRng + ?Sized>(
    accountant: &Accountant,
    values: &[f64],
    bounds: impl Into<Bounds>,
    method: MeanMethod,
    epsilon: f64,
    rng: &mut R,
) -> Result<Release<f64>, Error> {
    let mechanism = Mean::new(bounds, method, epsilon)?;
    Release::charged(
        accountant,
        "mean",
        mechanism.relation(),
        &mechanism,
        values,
        None,
        rng,
    )
}

/// A private histogram over public, disjoint bins (the counts `bin_counts` computed by
/// the caller), with independent geometric noise per bin. One record touches one bin
/// (add/remove: L1 sensitivity 1) or two (substitute: 2), so the **whole** histogram is
/// ε-DP — parallel composition over a data-independent partition, paid once.
///
/// # Errors
///
/// Those of [`Geometric::new`](crate::Geometric::new) for ε, then the accountant's refusal
/// ([`Error::BudgetExceeded`], or [`Error::IncompatibleLoss`] when the guarantee cannot be
/// charged to its budget), with nothing spent and nothing released. Never because of a
/// record.
pub fn histogram<R: CryptoRng + ?Sized>(
    accountant: &Accountant,
    bin_counts: &[u64],
    relation: Neighbouring,
    epsilon: f64,
    rng: &mut R,
) -> Result<Release<Vec<i64>>, Error> {
    let sensitivity = queries::histogram(relation, Norm::L1).ceil() as u64;
    let mechanism = Geometric::new(sensitivity, epsilon)?;
    let counts: Vec<i64> = bin_counts
        .iter()
        .map(|&c| i64::try_from(c).unwrap_or(i64::MAX))
        .collect();
    Release::charged(
        accountant,
        "histogram",
        relation,
        &mechanism,
        &counts[..],
        Some(mechanism.scale()),
        rng,
    )
}
