//! The global sensitivity of common queries under each neighbouring relation.
//!
//! Every value computed in floating point is rounded **up** (an over-estimated
//! sensitivity only adds noise). Bounds `[lo, hi]` are public, chosen without looking
//! at the data, and the data must be clamped to them ([`clamp`]) before the query.

use super::{Neighbouring, Norm};
use crate::Error;
use crate::privacy::check_sensitivity;
use crate::privacy::round::{div_up, mul_up, sqrt_up, sub_up, u64_up};

fn check_bounds(lo: f64, hi: f64) -> Result<(), Error> {
    if !lo.is_finite() {
        return Err(Error::InvalidParameter {
            name: "lo",
            value: lo,
            reason: "the clamping bounds must be finite",
        });
    }
    if !hi.is_finite() || hi <= lo {
        return Err(Error::InvalidParameter {
            name: "hi",
            value: hi,
            reason: "the clamping bounds must be finite with lo < hi",
        });
    }
    Ok(())
}

/// The sensitivity of a count: **1** under both relations (adding or removing a record
/// changes a count by at most 1; substituting one changes it by at most 1, as the old
/// record may leave and the new one enter the counted set: −1 + 1 or ±1, never ±2).
pub fn count(relation: Neighbouring) -> f64 {
    match relation {
        Neighbouring::AddRemove | Neighbouring::Substitute => 1.0,
    }
}

/// The sensitivity of a sum of values clamped to `[lo, hi]`:
/// `max(|lo|, |hi|)` under add/remove (the added or removed record contributes at most
/// that), `hi − lo` under substitution (one value moves anywhere inside the interval).
///
/// ```
/// use dpmech::sensitivity::{Neighbouring, queries::clamped_sum};
/// assert_eq!(clamped_sum(-1.0, 3.0, Neighbouring::AddRemove)?, 3.0);
/// assert_eq!(clamped_sum(-1.0, 3.0, Neighbouring::Substitute)?, 4.0);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`lo`, `hi`) unless both bounds are finite with `lo < hi`;
/// [`Error::InvalidSensitivity`] when `hi − lo` overflows `f64` (substitution).
pub fn clamped_sum(lo: f64, hi: f64, relation: Neighbouring) -> Result<f64, Error> {
    check_bounds(lo, hi)?;
    check_sensitivity(match relation {
        Neighbouring::AddRemove => lo.abs().max(hi.abs()),
        Neighbouring::Substitute => sub_up(hi, lo),
    })
}

/// The sensitivity of a mean of `n` values clamped to `[lo, hi]`, where `n` is
/// **public** (not computed from the data):
///
/// * substitution (the natural setting: n is the same for both datasets):
///   `(hi − lo)/n`;
/// * add/remove: the count is not fixed, so this is the sensitivity of the
///   *normalised sum* `Σxᵢ / n` with the public constant `n`: `max(|lo|, |hi|)/n`.
///   (A mean divided by the true, private count is not covered; release a noisy sum
///   and a noisy count instead.)
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`n`) for `n = 0` or a sensitivity that underflows to 0;
/// then as [`clamped_sum`].
pub fn mean_with_public_count(lo: f64, hi: f64, n: u64, relation: Neighbouring) -> Result<f64, Error> {
    if n == 0 {
        return Err(Error::InvalidParameter {
            name: "n",
            value: 0.0,
            reason: "the public count must be at least 1",
        });
    }
    let sum = clamped_sum(lo, hi, relation)?;
    // Dividing by a value rounded down would be needed for an upper bound; n > 2^53 is
    // rounded up by u64_up, so use the exact n when representable, else n's lower bound.
    let nf = u64_up(n);
    let nf = if (nf as u128) > u128::from(n) {
        nf.next_down()
    } else {
        nf
    };
    check_sensitivity(div_up(sum, nf)).map_err(|_| Error::InvalidParameter {
        name: "n",
        value: nf,
        reason: "the sensitivity underflows to 0",
    })
}

/// The sensitivity of a histogram over **disjoint** bins fixed in advance:
///
/// | relation | L1 | L2 | L∞ |
/// | --- | --- | --- | --- |
/// | add/remove | 1 | 1 | 1 |
/// | substitute | 2 | √2 | 1 |
///
/// (one record is in one bin; a substitution may move it between two bins.)
pub fn histogram(relation: Neighbouring, norm: Norm) -> f64 {
    match (relation, norm) {
        (Neighbouring::AddRemove, _) | (Neighbouring::Substitute, Norm::LInf) => 1.0,
        (Neighbouring::Substitute, Norm::L1) => 2.0,
        (Neighbouring::Substitute, Norm::L2) => sqrt_up(2.0),
    }
}

/// The sensitivity of a vector of `k` queries, each of sensitivity `s` (in absolute
/// value, for the same neighbouring relation), when one record may affect all of them:
/// L1 `k·s`, L2 `√k·s`, L∞ `s` (rounded up).
///
/// ```
/// use dpmech::sensitivity::{Norm, queries::vector};
/// assert_eq!(vector(4, 1.5, Norm::L1)?, 6.0);
/// assert_eq!(vector(4, 1.5, Norm::L2)?, 3.0);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`k`) for `k = 0`; [`Error::InvalidSensitivity`] for an
/// invalid `s` or a result that overflows.
pub fn vector(k: u64, s: f64, norm: Norm) -> Result<f64, Error> {
    if k == 0 {
        return Err(Error::InvalidParameter {
            name: "k",
            value: 0.0,
            reason: "the number of queries must be at least 1",
        });
    }
    let s = check_sensitivity(s)?;
    let kf = u64_up(k);
    check_sensitivity(match norm {
        Norm::L1 => mul_up(kf, s),
        Norm::L2 => mul_up(sqrt_up(kf), s),
        Norm::LInf => s,
    })
}

/// Clamps `value` to `[lo, hi]`. Clamping is 1-Lipschitz, so it never increases a
/// query's sensitivity. ±∞ go to the nearest bound; NaN is mapped to `lo` (a
/// data-independent choice, so a NaN record cannot cause an error that reveals it).
///
/// ```
/// use dpmech::sensitivity::queries::clamp;
/// assert_eq!(clamp(250.0, 100.0, 220.0)?, 220.0);
/// assert_eq!(clamp(f64::NAN, 100.0, 220.0)?, 100.0);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`lo`, `hi`) unless both bounds are finite with `lo < hi`; never
/// because of `value`.
pub fn clamp(value: f64, lo: f64, hi: f64) -> Result<f64, Error> {
    check_bounds(lo, hi)?;
    Ok(clamp_unchecked(value, lo, hi))
}

fn clamp_unchecked(value: f64, lo: f64, hi: f64) -> f64 {
    if value.is_nan() { lo } else { value.clamp(lo, hi) }
}

/// [`clamp`] applied to every value.
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`lo`, `hi`) unless both bounds are finite with `lo < hi`; never
/// because of `values`.
pub fn clamp_slice(values: &[f64], lo: f64, hi: f64) -> Result<Vec<f64>, Error> {
    check_bounds(lo, hi)?;
    Ok(values.iter().map(|&v| clamp_unchecked(v, lo, hi)).collect())
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
mod tests {
    use super::*;

    #[test]
    fn formulas_per_relation() {
        assert_eq!(count(Neighbouring::AddRemove), 1.0);
        assert_eq!(count(Neighbouring::Substitute), 1.0);
        assert_eq!(clamped_sum(0.0, 1.0, Neighbouring::AddRemove).unwrap(), 1.0);
        assert_eq!(clamped_sum(2.0, 5.0, Neighbouring::AddRemove).unwrap(), 5.0);
        assert_eq!(clamped_sum(2.0, 5.0, Neighbouring::Substitute).unwrap(), 3.0);
        assert_eq!(
            mean_with_public_count(0.0, 10.0, 4, Neighbouring::Substitute).unwrap(),
            2.5
        );
        assert!(mean_with_public_count(0.0, 1.0, 3, Neighbouring::Substitute).unwrap() >= 1.0 / 3.0);
        assert_eq!(histogram(Neighbouring::Substitute, Norm::L1), 2.0);
        assert!(histogram(Neighbouring::Substitute, Norm::L2) >= std::f64::consts::SQRT_2);
        assert_eq!(histogram(Neighbouring::AddRemove, Norm::L2), 1.0);
        let l2 = vector(3, 1.0, Norm::L2).unwrap();
        assert!(l2 >= 3f64.sqrt() && l2 < 3f64.sqrt() * (1.0 + 1e-15));
        assert_eq!(vector(5, 2.0, Norm::LInf).unwrap(), 2.0);
    }

    #[test]
    fn invalid_inputs_are_typed_errors() {
        assert!(clamped_sum(1.0, 1.0, Neighbouring::Substitute).is_err());
        assert!(clamped_sum(f64::NAN, 1.0, Neighbouring::Substitute).is_err());
        assert!(clamped_sum(0.0, f64::INFINITY, Neighbouring::AddRemove).is_err());
        assert!(mean_with_public_count(0.0, 1.0, 0, Neighbouring::Substitute).is_err());
        assert!(vector(0, 1.0, Norm::L1).is_err());
        assert!(matches!(
            vector(2, -1.0, Norm::L1),
            Err(Error::InvalidSensitivity { .. })
        ));
        assert!(clamp(0.0, 2.0, 1.0).is_err());
        assert_eq!(
            clamp_slice(&[f64::NEG_INFINITY, 0.5, 9.0], 0.0, 1.0).unwrap(),
            vec![0.0, 0.5, 1.0]
        );
    }
}
