//! Private count, sum, mean and histogram, each charged to an [`Accountant`] **before**
//! any noise is drawn (a refused charge releases nothing).

use crate::composition::Accountant;
use crate::privacy::{PrivacyLoss, check_epsilon, round};
use crate::sampling::grid::Grid;
use crate::sampling::{BitSource, Rational, bernoulli_exp_neg_bits, uniform_below_bits};
use crate::sensitivity::{Neighbouring, Norm, queries};
use crate::statistics::accuracy::laplace_half_width;
use crate::statistics::records::{Bounds, exact_sum, exact_sum_of};
use crate::{CryptoRng, Error, Geometric, Laplace};

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
}

fn pure(epsilon: f64) -> PrivacyLoss {
    PrivacyLoss::Pure { epsilon }
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
pub fn count<R: CryptoRng + ?Sized>(
    accountant: &Accountant,
    records: u64,
    epsilon: f64,
    rng: &mut R,
) -> Result<Release<i64>, Error> {
    let mechanism = Geometric::new(1, epsilon)?;
    let value = i64::try_from(records).unwrap_or(i64::MAX);
    let released = accountant.run("count", mechanism.privacy_loss(), || {
        mechanism.release(value, rng)
    })?;
    Ok(Release {
        value: released,
        privacy_loss: mechanism.privacy_loss(),
        relation: Neighbouring::AddRemove,
        noise: Some(AdditiveNoise {
            scale: mechanism.scale(),
            rounding: 0.0,
        }),
    })
}

/// A private sum of `values` read by the public [`Bounds`] (NaN imputed, clamped to
/// `[lower, upper]`, rounded to the grid; see [`records`](super::records)) and summed
/// exactly, with the Laplace mechanism calibrated to the sum's sensitivity under
/// `relation` ([`Bounds::sum_sensitivity`]: `max(|lower|, |upper|)` for add/remove,
/// `upper − lower` for substitution) plus the per-record rounding `g`. Pure ε-DP.
///
/// The statistic is the exact sum of the rounded records; it differs from the
/// real-number sum of the clamped records by at most `g/2` per record
/// (`g ≤ 2⁻⁴⁰·Δ`, [`Laplace::granularity`]). It does not depend on the order of the
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
pub fn sum<R: CryptoRng + ?Sized>(
    accountant: &Accountant,
    values: &[f64],
    bounds: impl Into<Bounds>,
    relation: Neighbouring,
    epsilon: f64,
    rng: &mut R,
) -> Result<Release<f64>, Error> {
    let bounds = bounds.into();
    let mechanism = Laplace::new(bounds.sum_sensitivity(relation)?, epsilon)?;
    let released = accountant.run("sum", mechanism.privacy_loss(), || {
        mechanism.release_units(exact_sum(values, &bounds, &mechanism.grid()), rng)
    })?;
    Ok(Release {
        value: released,
        privacy_loss: mechanism.privacy_loss(),
        relation,
        noise: Some(AdditiveNoise {
            scale: mechanism.scale(),
            rounding: 0.0,
        }),
    })
}

/// How a private mean is computed (seed 001, chapter 4).
///
/// The seed's Algorithm 2 (re-sampling the noise until the mean falls in range) is
/// **not** private and is not offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MeanMethod {
    /// Algorithm 1, pure ε-DP under **add/remove**: `S̃ = Σ + Lap(2Δ_S/ε)`,
    /// `C̃ = count + geometric noise at ε/2`; `S̃/C̃` (the midpoint when `C̃ ≤ 1`).
    /// `Δ_S = max(|lower|, |upper|)` — the seed's `upper − lower` is only valid when
    /// `0 ∈ [lower, upper]`.
    NoisySumOverNoisyCount,
    /// Algorithm 3, pure ε-DP under **substitute-one** neighbours only (the count `n` is
    /// public): `clamp((Σ + Lap((upper − lower)/ε))/n)`, and for `n = 0` the seed's Ψ:
    /// `lower` or `upper` with probability `e^(−ε/2)/2` each, otherwise uniform on the
    /// grid of `[lower, upper]`. Under add/remove it is **not** ε-DP: dividing by the
    /// private count scales the density by `(C+1)/C`, e.g. a ratio of 2 between
    /// `{x}` and `{x, x}` near `x` (the seed's Theorem 4.2.3 misses this; a test in
    /// `tests/statistics.rs` certifies the violation).
    ClampedSumOverPublicCount,
    /// Algorithm 4, pure ε-DP under **add/remove**: the sum of `vᵢ − m` (`m` the
    /// midpoint, sensitivity `(upper − lower)/2`) with noise `Lap((upper − lower)/ε)`,
    /// and the count with noise at ε/2 (`Lap(2/ε)`; the seed's `Lap(ε/2)` is a typo);
    /// `S̃/C̃ + m` (or `m` when `C̃ ≤ 1`).
    Normalised,
}

/// A private mean of `values` read by the public [`Bounds`] (NaN imputed, clamped,
/// rounded to the grid, summed exactly: see [`records`](super::records)); the result is
/// clamped to `[lower, upper]` too (post-processing). Empty inputs are fine: the noisy
/// count is then usually ≤ 1 and the midpoint is returned. No record, whatever its
/// value, makes the release fail.
pub fn mean<R: CryptoRng + ?Sized>(
    accountant: &Accountant,
    values: &[f64],
    bounds: impl Into<Bounds>,
    method: MeanMethod,
    epsilon: f64,
    rng: &mut R,
) -> Result<Release<f64>, Error> {
    let bounds = bounds.into();
    bounds.validate()?;
    let epsilon = check_epsilon(epsilon)?;
    if method == MeanMethod::ClampedSumOverPublicCount {
        return clamped_mean_public_count(accountant, values, &bounds, epsilon, rng);
    }
    let half = round::mul_down(epsilon, 0.5);
    let midpoint = bounds.midpoint();
    let count_mechanism = Geometric::new(1, half)?;
    let sum_mechanism = match method {
        MeanMethod::Normalised => Laplace::new(half_range(&bounds), half)?,
        _ => Laplace::new(bounds.sum_sensitivity(Neighbouring::AddRemove)?, half)?,
    };
    let n = i64::try_from(values.len()).unwrap_or(i64::MAX);
    let loss = pure(epsilon);
    let (noisy_sum, noisy_count) = accountant.run("mean", loss, || {
        let grid = sum_mechanism.grid();
        let total = match method {
            // Σ (vᵢ − m), each shifted record clamped to [−h, h] so its contribution
            // stays within the sensitivity whatever the rounding of the subtraction.
            MeanMethod::Normalised => {
                let h = half_range(&bounds);
                exact_sum_of(
                    values.iter().map(|&v| (bounds.read(v) - midpoint).clamp(-h, h)),
                    &grid,
                )
            }
            _ => exact_sum(values, &bounds, &grid),
        };
        let s = sum_mechanism.release_units(total, rng);
        let c = count_mechanism.release(n, rng);
        (s, c)
    })?;
    let estimate = if noisy_count <= 1 {
        midpoint
    } else {
        let ratio = noisy_sum / noisy_count as f64;
        match method {
            MeanMethod::Normalised => ratio + midpoint,
            _ => ratio,
        }
    };
    Ok(Release {
        value: estimate.clamp(bounds.lower(), bounds.upper()),
        privacy_loss: loss,
        relation: Neighbouring::AddRemove,
        noise: None,
    })
}

/// `h = (upper − lower)/2`, rounded up: the sensitivity of the normalised sum.
fn half_range(bounds: &Bounds) -> f64 {
    round::mul_up(round::sub_up(bounds.upper(), bounds.lower()), 0.5)
}

/// Algorithm 3 under substitution: the Laplace mechanism on the exact clamped sum
/// (sensitivity `upper − lower`) divided by the public `n`, clamped. The noisy sum is an
/// exact multiple of the grid `g` and `n` is public, so the quotient lies on the
/// data-independent set `(gℤ)/n`, and its rounding to `f64` is post-processing.
fn clamped_mean_public_count<R: CryptoRng + ?Sized>(
    accountant: &Accountant,
    values: &[f64],
    bounds: &Bounds,
    epsilon: f64,
    rng: &mut R,
) -> Result<Release<f64>, Error> {
    let (lower, upper) = (bounds.lower(), bounds.upper());
    let mechanism = Laplace::new(bounds.sum_sensitivity(Neighbouring::Substitute)?, epsilon)?;
    let n = values.len();
    let psi_exponent = Rational::from_f64_up(round::mul_up(epsilon, 0.5))?;
    let grid = mechanism.grid();
    let (first, last) = (
        grid.to_units(lower.max(-grid.clamp_bound())),
        grid.to_units(upper.min(grid.clamp_bound())),
    );
    let value = accountant.run("mean", mechanism.privacy_loss(), || {
        if n == 0 {
            psi(&grid, (first, last), psi_exponent, rng).clamp(lower, upper)
        } else {
            let noisy = mechanism.release_units(exact_sum(values, bounds, &grid), rng);
            (noisy / n as f64).clamp(lower, upper)
        }
    })?;
    Ok(Release {
        value,
        privacy_loss: mechanism.privacy_loss(),
        relation: Neighbouring::Substitute,
        noise: None,
    })
}

/// The seed's Ψ for an empty selection: an end point with probability `e^(−γ)/2` each,
/// otherwise a uniform grid point between them (exact sampling throughout).
fn psi<R: CryptoRng + ?Sized>(grid: &Grid, (first, last): (i128, i128), gamma: Rational, rng: &mut R) -> f64 {
    let mut bits = BitSource::new(rng);
    if bernoulli_exp_neg_bits(&mut bits, gamma.num() as u128, gamma.den() as u128) {
        let units = if bits.bit() { last } else { first };
        return grid.from_units(units);
    }
    let span = u64::try_from(last - first).unwrap_or(u64::MAX - 1) + 1;
    grid.from_units(first + uniform_below_bits(&mut bits, span) as i128)
}

/// A private histogram over public, disjoint bins (the counts `bin_counts` computed by
/// the caller), with independent geometric noise per bin. One record touches one bin
/// (add/remove: L1 sensitivity 1) or two (substitute: 2), so the **whole** histogram is
/// ε-DP — parallel composition over a data-independent partition, paid once.
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
    let released = accountant.run("histogram", mechanism.privacy_loss(), || {
        mechanism.release_slice(&counts, rng)
    })?;
    Ok(Release {
        value: released,
        privacy_loss: mechanism.privacy_loss(),
        relation,
        noise: Some(AdditiveNoise {
            scale: mechanism.scale(),
            rounding: 0.0,
        }),
    })
}
