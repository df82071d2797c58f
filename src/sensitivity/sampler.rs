//! The sensitivity sampler (Rubinstein & Aldà, "Pain-free random differential privacy
//! with sensitivity sampling", ICML 2017).
//!
//! When the global sensitivity of `f` is unknown or infinite, sample it: draw `m`
//! pairs of neighbouring datasets `(D, D′)` from a distribution `P` supplied by the
//! user, compute `Gᵢ = ‖f(D) − f(D′)‖`, sort them, and return the k-th smallest `Δ̂`.
//! A mechanism calibrated to `Δ̂` that would be ε-DP with sensitivity `Δ̂` is then
//! **(ε, γ)-random DP** (Hall, Wasserman & Rinaldo 2013): ε-DP holds except on a set
//! of neighbouring pairs of probability at most γ under `P` — *not* ε-DP
//! (Rubinstein & Aldà 2017). [`SampledSensitivity::privacy_loss`] therefore only ever returns
//! [`PrivacyLoss::RandomDp`].
//!
//! # The order statistic
//!
//! Let `F` be the CDF of `G = ‖f(D) − f(D′)‖` and `F_m` the empirical CDF of the m
//! samples. By the one-sided Dvoretzky–Kiefer–Wolfowitz inequality (Massart 1990),
//! `Pr[sup_x (F_m(x) − F(x)) > ξ] ≤ e^{−2mξ²} = ρ` for `ξ = √(ln(1/ρ)/(2m))`. With
//!
//! ```text
//! k = ⌈m (1 − γ + ρ + ξ)⌉,   which needs  γ ≥ γ_min(m) = ρ + √(ln(1/ρ)/(2m)),
//! ```
//!
//! outside the ρ-event `F(Δ̂) ≥ F_m(Δ̂) − ξ ≥ k/m − ξ ≥ 1 − γ + ρ`, so a fresh pair has
//! `Pr[G > Δ̂] ≤ γ − ρ`, and `≤ γ` overall (Rubinstein & Aldà 2017, the sampler's
//! main theorem; the same rule as the authors' R package `diffpriv`). The free ρ is chosen to minimise γ_min(m):
//! the root of `2ρ√(2m ln(1/ρ)) = 1` (found by bisection; any ρ ∈ (0, 1) is valid, so
//! the root's accuracy only affects tightness). γ_min and k are rounded up.
//!
//! Sampling *data* is not noise: the user's sampler may use any [`rand_core::Rng`].
//! The pair distribution must match the neighbouring relation the mechanism claims
//! (e.g. for substitution, `D` and `D′` share n − 1 records drawn from `P` and differ
//! in one independently drawn record).

use super::Norm;
use crate::Error;
use crate::composition::{check_gamma, largest_satisfying};
use crate::privacy::round::{add_up, div_up, ln_down, mul_up, sqrt_up, sub_up};
use crate::privacy::{PrivacyLoss, check_epsilon};
use rand_core::Rng;

/// The largest sample size accepted (memory: 8 bytes per sample).
pub const MAX_SAMPLES: usize = 1 << 32;

/// A configured sensitivity sampler: sample size m, confidence γ, order statistic k.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SensitivitySampler {
    m: usize,
    k: usize,
    gamma: f64,
    rho: f64,
    norm: Norm,
}

/// The DKW split ρ minimising γ_min(m), and γ_min(m) rounded up.
fn gamma_min(m: usize) -> (f64, f64) {
    let two_m = 2.0 * m as f64;
    // h(ρ) = 2ρ√(2m ln(1/ρ)) is increasing on (0, e^−½) and h(e^−½) = 2e^−½√m ≥ 1.
    let h = |rho: f64| 2.0 * rho * (two_m * (1.0 / rho).ln()).sqrt() <= 1.0;
    let rho = largest_satisfying(0.0, (-0.5f64).exp(), |r| r > 0.0 && h(r)).max(1e-300);
    let xi = sqrt_up(div_up(-ln_down(rho), two_m));
    (rho, add_up(rho, xi))
}

fn check_m(m: usize) -> Result<(), Error> {
    if m == 0 || m > MAX_SAMPLES {
        return Err(Error::InvalidParameter {
            name: "m",
            value: m as f64,
            reason: "the sample size must be between 1 and 2^32",
        });
    }
    Ok(())
}

impl SensitivitySampler {
    /// The smallest γ achievable with m samples: `min_ρ ρ + √(ln(1/ρ)/(2m))` (rounded
    /// up). E.g. ≈ 0.160 for m = 100, ≈ 0.0565 for m = 1 000 and ≈ 0.0195 for m = 10 000.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`m`) unless `1 ≤ m ≤ 2³²`.
    pub fn gamma_min(m: usize) -> Result<f64, Error> {
        check_m(m)?;
        Ok(gamma_min(m).1)
    }

    /// A sampler with `m` samples for confidence γ: `k = ⌈m(1 − γ + γ_min(m))⌉`.
    ///
    /// ```
    /// use dpmech::sensitivity::{Norm, SensitivitySampler};
    /// let s = SensitivitySampler::new(10_000, 0.05, Norm::L1)?;
    /// assert!(s.order_statistic() < 10_000 && s.order_statistic() > 9_500);
    /// assert!(SensitivitySampler::new(100, 0.05, Norm::L1).is_err()); // γ_min(100) ≈ 0.16
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`]: `m` outside `1..=2³²`, γ outside (0, 1), or `γ < γ_min(m)`
    /// (more samples are needed).
    pub fn new(m: usize, gamma: f64, norm: Norm) -> Result<Self, Error> {
        check_m(m)?;
        let gamma = check_gamma(gamma)?;
        let (rho, g_min) = gamma_min(m);
        if gamma < g_min {
            return Err(Error::InvalidParameter {
                name: "gamma",
                value: gamma,
                reason: "gamma is below the minimum this sample size m can certify: increase m",
            });
        }
        let level = add_up(sub_up(1.0, gamma), g_min);
        let k = mul_up(m as f64, level).ceil().max(1.0);
        if k > m as f64 {
            return Err(Error::InvalidParameter {
                name: "gamma",
                value: gamma,
                reason: "gamma is below the minimum this sample size m can certify: increase m",
            });
        }
        Ok(Self {
            m,
            k: k as usize,
            gamma,
            rho,
            norm,
        })
    }

    /// A sampler with the smallest m that certifies γ (then k = m when γ = γ_min(m)).
    /// E.g. γ = 0.05 needs m = 1 305 (and then k = m: the sample maximum).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`gamma`) for γ outside (0, 1) or too small to certify
    /// with at most `2³²` samples.
    pub fn for_gamma(gamma: f64, norm: Norm) -> Result<Self, Error> {
        let gamma = check_gamma(gamma)?;
        if gamma_min(MAX_SAMPLES).1 > gamma {
            return Err(Error::InvalidParameter {
                name: "gamma",
                value: gamma,
                reason: "gamma is too small to certify with at most 2^32 samples",
            });
        }
        let (mut lo, mut hi) = (1usize, 1usize);
        while gamma_min(hi).1 > gamma {
            lo = hi;
            hi = (hi * 2).min(MAX_SAMPLES);
        }
        // Invariant: gamma_min(hi) ≤ γ; shrink hi to the smallest such m.
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if gamma_min(mid).1 <= gamma {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Self::new(hi, gamma, norm)
    }

    /// m, the number of sampled pairs.
    pub fn sample_size(&self) -> usize {
        self.m
    }

    /// k, the (1-based) order statistic returned.
    pub fn order_statistic(&self) -> usize {
        self.k
    }

    /// γ, the random-DP confidence parameter.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The DKW failure probability ρ used in the rule.
    pub fn dkw_rho(&self) -> f64 {
        self.rho
    }

    /// The norm of `f(D) − f(D′)`.
    pub fn norm(&self) -> Norm {
        self.norm
    }

    /// Draws m neighbouring pairs with `draw_pair`, evaluates `f` on both, and returns
    /// the k-th smallest distance. `f` returns the query's value as a slice-like vector
    /// (`[x]` for a scalar query).
    ///
    /// ```
    /// use dpmech::sensitivity::{Norm, SensitivitySampler};
    /// use rand_chacha::ChaCha20Rng;
    /// use rand_core::{Rng, SeedableRng};
    /// let mut rng = ChaCha20Rng::seed_from_u64(7);
    /// let sampler = SensitivitySampler::new(2_000, 0.1, Norm::L1)?;
    /// // One record uniform on [0, 1): the sensitivity of the identity is |x − x′| ≤ 1.
    /// let uniform = |r: &mut ChaCha20Rng| (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    /// let out = sampler.sample(&mut rng, |r| (uniform(r), uniform(r)), |x| [*x])?;
    /// assert!(out.sensitivity > 0.6 && out.sensitivity < 1.0);
    /// assert!(matches!(out.privacy_loss(1.0)?, dpmech::PrivacyLoss::RandomDp { .. }));
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`length`) when `f` returns outputs of different lengths
    /// for D and D′, and [`Error::NonFiniteValue`] (with the index of the sample) for a
    /// non-finite output or distance.
    pub fn sample<R, D, P, F, V>(
        &self,
        rng: &mut R,
        mut draw_pair: P,
        mut f: F,
    ) -> Result<SampledSensitivity, Error>
    where
        R: Rng + ?Sized,
        P: FnMut(&mut R) -> (D, D),
        F: FnMut(&D) -> V,
        V: AsRef<[f64]>,
    {
        let mut gs = Vec::with_capacity(self.m);
        let mut sum = 0.0f64;
        for i in 0..self.m {
            let (d1, d2) = draw_pair(rng);
            let (a, b) = (f(&d1), f(&d2));
            let g = self.norm.distance(a.as_ref(), b.as_ref()).map_err(|e| match e {
                Error::NonFiniteValue { value, .. } => Error::NonFiniteValue { index: i, value },
                other => other,
            })?;
            sum += g;
            gs.push(g);
        }
        let (_, kth, _) = gs.select_nth_unstable_by(self.k - 1, f64::total_cmp);
        let sensitivity = *kth;
        let mean = sum / self.m as f64;
        if !mean.is_finite() {
            return Err(Error::NonFiniteValue {
                index: self.m,
                value: mean,
            });
        }
        Ok(SampledSensitivity {
            sensitivity,
            gamma: self.gamma,
            mean,
            sample_size: self.m,
            order_statistic: self.k,
            norm: self.norm,
        })
    }
}

/// The result of [`SensitivitySampler::sample`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampledSensitivity {
    /// Δ̂, the k-th smallest sampled distance: the sensitivity to calibrate with. May
    /// be 0 if `f` looked constant (mechanisms reject a zero sensitivity).
    pub sensitivity: f64,
    /// γ: the guarantee of a mechanism calibrated to Δ̂ is (ε, γ)-random DP.
    pub gamma: f64,
    /// The mean of the sampled distances, an estimate of `E[Δf]` — reported for
    /// information only: calibrating to it gives **no** DP guarantee (Rubinstein & Aldà 2017).
    pub mean: f64,
    /// m.
    pub sample_size: usize,
    /// k.
    pub order_statistic: usize,
    /// The norm used.
    pub norm: Norm,
}

impl SampledSensitivity {
    /// The guarantee of an ε-DP-calibrated mechanism using this sensitivity:
    /// `PrivacyLoss::RandomDp { epsilon, gamma }`, never `Pure`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] unless ε is finite and positive.
    pub fn privacy_loss(&self, epsilon: f64) -> Result<PrivacyLoss, Error> {
        Ok(PrivacyLoss::RandomDp {
            epsilon: check_epsilon(epsilon)?,
            gamma: self.gamma,
        })
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
mod tests {
    use super::*;

    #[test]
    fn gamma_min_matches_the_closed_form() {
        // ρ* = exp(W₋₁(−1/(4m))/2); check the defining equation and the value.
        for m in [100usize, 1_000, 10_000, 1_000_000] {
            let (rho, g) = gamma_min(m);
            let h = 2.0 * rho * (2.0 * m as f64 * (1.0 / rho).ln()).sqrt();
            assert!((h - 1.0).abs() < 1e-9, "m {m}: h = {h}");
            // γ_min is a minimum: nearby ρ give larger values.
            for r in [rho * 0.9, rho * 1.1] {
                assert!(r + ((1.0 / r).ln() / (2.0 * m as f64)).sqrt() >= g - 1e-15);
            }
        }
        // Independent values (bisection on the same equation in Python double precision).
        assert!((gamma_min(1_000).1 - 0.056_467_707_8).abs() < 1e-9);
        assert!((gamma_min(10_000).1 - 0.019_526_170_8).abs() < 1e-9);
        let s = SensitivitySampler::for_gamma(0.05, Norm::L1).unwrap();
        assert_eq!((s.sample_size(), s.order_statistic()), (1_305, 1_305));
        assert!(gamma_min(s.sample_size()).1 <= 0.05);
        assert!(gamma_min(s.sample_size() - 1).1 > 0.05);
        assert!(SensitivitySampler::new(0, 0.05, Norm::L1).is_err());
        assert!(SensitivitySampler::new(1000, 1.5, Norm::L1).is_err());
        assert!(SensitivitySampler::for_gamma(1e-9, Norm::L1).is_err());
    }
}
