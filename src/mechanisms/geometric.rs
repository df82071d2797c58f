//! The geometric mechanism (discrete Laplace noise) for integer-valued queries.

use crate::privacy::{PrivacyLoss, check_epsilon, round};
use crate::sampling::{BatchSink, BitSource, DiscreteLaplace, Rational, saturate_i64};
use crate::{CryptoRng, Error};

/// The geometric mechanism: `M(x) = f(x) + Z` for an integer query `f`, with `Z`
/// two-sided geometric (discrete Laplace), `Pr[Z = z] = (1 − α)/(1 + α) · α^|z|`,
/// `α = exp(−ε/Δ)` (Ghosh, Roughgarden & Sundararajan 2009).
///
/// * **Guarantee:** pure ε-DP.
/// * **Sensitivity:** `Δ` is the **L1** sensitivity of `f` (of the whole vector for
///   [`release_slice`](Self::release_slice)) under whichever neighbouring relation
///   (add/remove or substitute one record) it was computed for; the guarantee holds for
///   that relation.
/// * **Exactness:** the scale `τ = Δ/ε` is rounded **up** to a dyadic rational
///   (`α` up, more noise) and `Z` is sampled exactly (see
///   [`DiscreteLaplace`]), so the privacy loss of a shift by `Δ` is at most `Δ/τ ≤ ε`.
/// * **Overflow:** `f(x) + Z` saturates at `i64::MIN`/`i64::MAX` (post-processing).
///
/// ```
/// use dpmech::Geometric;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let mechanism = Geometric::new(1, 0.5)?; // counting query, ε = 0.5
/// let noisy_count = mechanism.release(120, &mut ChaCha20Rng::seed_from_u64(1));
/// # let _ = noisy_count;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Geometric {
    sensitivity: u64,
    epsilon: f64,
    noise: DiscreteLaplace,
}

impl Geometric {
    /// The geometric mechanism for an integer query of L1 sensitivity `sensitivity`
    /// (≥ 1) at privacy level `epsilon`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidSensitivity`] for `sensitivity = 0`, [`Error::InvalidEpsilon`], and
    /// [`Error::ScaleOutOfRange`] when `Δ/ε` is `2⁶³` or more.
    pub fn new(sensitivity: u64, epsilon: f64) -> Result<Self, Error> {
        if sensitivity == 0 {
            return Err(Error::InvalidSensitivity { value: 0.0 });
        }
        let epsilon = check_epsilon(epsilon)?;
        // τ = Δ/ε, every step rounded up.
        let delta = round::u64_up(sensitivity);
        let scale = Rational::from_f64_up(round::div_up(delta, epsilon))?;
        Ok(Self {
            sensitivity,
            epsilon,
            noise: DiscreteLaplace::new(scale),
        })
    }

    /// `f(x) + Z`, saturating at the `i64` range.
    #[inline]
    pub fn release<R: CryptoRng + ?Sized>(&self, value: i64, rng: &mut R) -> i64 {
        let mut released = Released {
            values: core::slice::from_ref(&value),
            out: [0],
        };
        self.noise.sample_one(&mut released, &mut BitSource::new(rng));
        released.out[0]
    }

    /// Adds independent noise to every coordinate of a vector-valued query whose whole
    /// vector has L1 sensitivity `Δ` (e.g. a histogram: Δ = 1 under add/remove). The
    /// noise is drawn in batches ([`DiscreteLaplace::sample_into`]'s path), faster per
    /// value than separate releases at scales from 64 to `2³⁷`, with the same guarantee.
    pub fn release_slice<R: CryptoRng + ?Sized>(&self, values: &[i64], rng: &mut R) -> Vec<i64> {
        let mut released = Released {
            values,
            out: vec![0; values.len()],
        };
        self.noise
            .sample_batch(values.len(), &mut released, &mut BitSource::new(rng));
        released.out
    }

    /// The noise scale `τ ≥ Δ/ε` actually used (`α = exp(−1/τ)`).
    pub fn scale(&self) -> f64 {
        self.noise.scale().to_f64()
    }

    /// The exact rational scale used by the sampler.
    pub fn rational_scale(&self) -> Rational {
        self.noise.scale()
    }

    /// The smallest `k` with `Pr[|M(x) − f(x)| > k] ≤ β` for one released value.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`beta`) unless `0 < β < 1`.
    pub fn confidence_half_width(&self, beta: f64) -> Result<u64, Error> {
        rational_half_width(self.noise.scale(), beta)
    }

    /// The L1 sensitivity Δ.
    pub fn sensitivity(&self) -> u64 {
        self.sensitivity
    }

    /// `PrivacyLoss::Pure { epsilon }`.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }
}

/// Validates a failure probability β ∈ (0, 1).
pub(crate) fn check_beta(beta: f64) -> Result<f64, Error> {
    if beta > 0.0 && beta < 1.0 {
        Ok(beta)
    } else {
        Err(Error::InvalidParameter {
            name: "beta",
            value: beta,
            reason: "the failure probability must lie in (0, 1)",
        })
    }
}

/// The smallest integer `k` with `Pr[|Z| > k] ≤ β` for discrete Laplace noise of scale
/// `τ` (`α = e^(−1/τ)`, `Pr[|Z| > k] = 2α^(k+1)/(1 + α)`), or a `k` above it: never
/// below the exact answer for the `τ` given (taken as exact).
///
/// `α^(k+1) ≤ β(1+α)/2 ⇔ k + 1 ≥ τ·ln(2/(β(1+α)))`. Every step rounds toward a larger
/// `k`: `α` is rounded **down** (it only appears in `1 + α`, where a larger value would
/// make the tail look smaller), `β(1 + α)` down, the quotient, logarithm and product up.
pub(crate) fn discrete_laplace_half_width(scale: f64, beta: f64) -> Result<u64, Error> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::InvalidParameter {
            name: "scale",
            value: scale,
            reason: "must be finite and > 0",
        });
    }
    let beta = check_beta(beta)?;
    let alpha = round::exp_down(-round::div_up(1.0, scale)).min(1.0);
    let denominator = round::mul_down(beta, round::add_down(1.0, alpha));
    let needed = round::mul_up(round::ln_up(round::div_up(2.0, denominator)), scale);
    Ok((needed.ceil() - 1.0).max(0.0) as u64)
}

/// [`discrete_laplace_half_width`] for the exact rational scale a sampler uses: `τ` is
/// converted to an `f64` rounded **up** (the tail `2α^(k+1)/(1+α)` grows with `τ`
/// for every `k`, so a larger `τ` can only give a larger half-width).
pub(crate) fn rational_half_width(scale: Rational, beta: f64) -> Result<u64, Error> {
    discrete_laplace_half_width(rational_up(scale), beta)
}

/// An `f64` upper bound on `num/den`.
fn rational_up(r: Rational) -> f64 {
    let den = r.den() as f64; // rounded to nearest: step down if it went up.
    let den = if den as u128 > u128::from(r.den()) {
        den.next_down()
    } else {
        den
    };
    round::div_up(round::u64_up(r.num()), den)
}

/// The values of a release, released as their noise arrives (`O` a `Vec` or an array).
struct Released<'a, O> {
    values: &'a [i64],
    out: O,
}

impl<O: AsMut<[i64]>> BatchSink for Released<'_, O> {
    #[inline(always)]
    fn wide(&mut self, i: usize, z: i128) {
        self.out.as_mut()[i] = saturate_i64(i128::from(self.values[i]) + z);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::{Big, exp_neg};
    use core::cmp::Ordering;

    /// Fractional bits of the certified enclosures.
    const P: u64 = 256;

    /// `β = m·2^(−s)` exactly (β a normal `f64` in (0, 1)).
    fn dyadic(beta: f64) -> (u128, u64) {
        let bits = beta.to_bits();
        let m = (bits & ((1 << 52) - 1)) | (1 << 52);
        let e = ((bits >> 52) & 0x7ff) as i64 - 1075;
        (u128::from(m), (-e) as u64)
    }

    /// Decides `2α^(k+1)/(1+α) ≤ β` for `α = e^(−den/num)` with certified enclosures:
    /// `Some(true)` / `Some(false)` when the enclosures settle it, `None` otherwise.
    fn tail_at_most(num: u64, den: u64, k: u64, beta: f64) -> Option<bool> {
        let (m, s) = dyadic(beta);
        let power = exp_neg(u128::from(den) * u128::from(k + 1), num, P);
        let alpha = exp_neg(u128::from(den), num, P);
        let m = Big::from_u128(m);
        // 2·α^(k+1)·2^s against m·(1 + α), all scaled by 2^P.
        let holds = power.hi.shl(s + 1).cmp(&m.mul(&Big::pow2(P).add(&alpha.lo)));
        let fails = power.lo.shl(s + 1).cmp(&m.mul(&Big::pow2(P).add(&alpha.hi)));
        if holds != Ordering::Greater {
            Some(true)
        } else if fails == Ordering::Greater {
            Some(false)
        } else {
            None
        }
    }

    /// The half-width is never below the exact smallest `k` (the tail at `k` is
    /// certified ≤ β) and at most one above it (the tail at `k − 2` is certified > β),
    /// for scales given as `f64` and as rationals that no `f64` holds.
    #[test]
    fn half_width_is_certified_against_exact_tails() {
        let betas = [0.5, 0.05, 1e-3, 1e-9, 1e-15];
        let dyadic_scales: [(u64, u64); 6] = [(1, 1), (1, 2), (2, 1), (10, 1), (3, 4), ((1 << 20) + 1, 1)];
        let rational_scales: [(u64, u64); 4] = [(10, 3), (1000, 7), (1, 3), (123_456_789, 1000)];
        let mut tight = 0;
        let mut cases = 0;
        for &beta in &betas {
            for (num, den, k) in dyadic_scales
                .iter()
                .map(|&(n, d)| {
                    (
                        n,
                        d,
                        discrete_laplace_half_width(n as f64 / d as f64, beta).unwrap(),
                    )
                })
                .chain(rational_scales.iter().map(|&(n, d)| {
                    (
                        n,
                        d,
                        rational_half_width(Rational::new(n, d).unwrap(), beta).unwrap(),
                    )
                }))
            {
                cases += 1;
                assert_eq!(
                    tail_at_most(num, den, k, beta),
                    Some(true),
                    "τ = {num}/{den}, β = {beta}, k = {k}"
                );
                if k >= 2 {
                    assert_eq!(
                        tail_at_most(num, den, k - 2, beta),
                        Some(false),
                        "τ = {num}/{den}, β = {beta}: k = {k} is more than one above the exact answer"
                    );
                }
                if k == 0 || tail_at_most(num, den, k - 1, beta) == Some(false) {
                    tight += 1;
                }
            }
        }
        // The outward rounding costs at most a few ulps: almost every answer is exact.
        assert!(tight + 2 >= cases, "{tight} of {cases} exact");
    }

    #[test]
    fn rational_up_never_rounds_down() {
        for (num, den) in [
            (1u64, 3u64),
            (10, 3),
            (u64::MAX, 3),
            (u64::MAX, u64::MAX - 1),
            ((1 << 53) + 1, 1),
        ] {
            let x = rational_up(Rational::new(num, den).unwrap());
            // x·den ≥ num in exact integer arithmetic (x is a dyadic f64 here, ≤ 2^64).
            let bits = x.to_bits();
            let m = u128::from((bits & ((1 << 52) - 1)) | (1 << 52));
            let e = ((bits >> 52) & 0x7ff) as i64 - 1075;
            let lhs = Big::from_u128(m).mul(&Big::from_u128(u128::from(den)));
            let rhs = Big::from_u128(u128::from(num));
            let ok = if e >= 0 {
                lhs.shl(e as u64).cmp(&rhs) != Ordering::Less
            } else {
                lhs.cmp(&rhs.shl((-e) as u64)) != Ordering::Less
            };
            assert!(ok, "{num}/{den} -> {x}");
        }
    }
}
