//! Shared statistics for the distribution tests: Pearson's chi-square goodness-of-fit
//! test with its critical value derived from the chi-square distribution (statrs).
#![allow(dead_code)]

use proptest::prelude::*;
use rand_core::{Infallible, TryCryptoRng, TryRng};
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// Significance level of every goodness-of-fit test: a correct sampler fails a given
/// test with probability `ALPHA` (the seeds are fixed, so each run is deterministic).
pub const ALPHA: f64 = 1e-3;

/// Outcome of a chi-square test.
#[derive(Debug)]
pub struct ChiSquare {
    pub statistic: f64,
    pub critical: f64,
    pub degrees_of_freedom: usize,
}

impl ChiSquare {
    pub fn passes(&self) -> bool {
        self.statistic <= self.critical
    }
}

/// Pearson's statistic for `observed` counts against `expected` probabilities (which
/// must sum to 1 over the listed bins); the critical value is the `1 − ALPHA` quantile
/// of χ²(bins − 1).
pub fn chi_square(observed: &[u64], expected: &[f64]) -> ChiSquare {
    assert_eq!(observed.len(), expected.len());
    let n: u64 = observed.iter().sum();
    let total: f64 = expected.iter().sum();
    assert!(
        (total - 1.0).abs() < 1e-9,
        "expected probabilities sum to {total}"
    );
    let statistic = observed
        .iter()
        .zip(expected)
        .map(|(&o, &p)| {
            let e = p * n as f64;
            assert!(e >= 5.0, "bin with expected count {e} < 5: merge bins");
            (o as f64 - e).powi(2) / e
        })
        .sum();
    let degrees_of_freedom = observed.len() - 1;
    let critical = ChiSquared::new(degrees_of_freedom as f64)
        .unwrap()
        .inverse_cdf(1.0 - ALPHA);
    ChiSquare {
        statistic,
        critical,
        degrees_of_freedom,
    }
}

/// Bins over ℤ: `(−∞, b₀], (b₀, b₁], …, (b_last, ∞)` given the sorted upper edges `b`.
pub fn bin_counts(samples: impl Iterator<Item = i128>, edges: &[i128]) -> Vec<u64> {
    let mut counts = vec![0u64; edges.len() + 1];
    for x in samples {
        let bin = edges.partition_point(|&edge| edge < x);
        counts[bin] += 1;
    }
    counts
}

/// Bin probabilities from a CDF `F(z) = Pr[X ≤ z]` for the edges of [`bin_counts`].
pub fn bin_probabilities(cdf: impl Fn(i128) -> f64, edges: &[i128]) -> Vec<f64> {
    let mut probabilities = Vec::with_capacity(edges.len() + 1);
    let mut previous = 0.0;
    for &edge in edges {
        let current = cdf(edge);
        probabilities.push(current - previous);
        previous = current;
    }
    probabilities.push(1.0 - previous);
    probabilities
}

/// The discrete Laplace CDF `Pr[Z ≤ z]` for `α = exp(−1/τ)`:
/// `α^(−z)/(1+α)` for `z < 0`, `1 − α^(z+1)/(1+α)` for `z ≥ 0`.
pub fn discrete_laplace_cdf(tau: f64) -> impl Fn(i128) -> f64 {
    let alpha = (-1.0 / tau).exp();
    move |z| {
        if z < 0 {
            (z as f64 / tau).exp() / (1.0 + alpha)
        } else {
            1.0 - (-(z as f64 + 1.0) / tau).exp() / (1.0 + alpha)
        }
    }
}

/// Edges of about `bins` equal-probability bins of the discrete Laplace of scale τ
/// (deduplicated), from its quantile function.
pub fn discrete_laplace_edges(tau: f64, bins: usize) -> Vec<i128> {
    let alpha = (-1.0 / tau).exp();
    let mut edges: Vec<i128> = (1..bins)
        .map(|j| {
            let p = j as f64 / bins as f64;
            // Smallest z with F(z) ≥ p.
            let lower = p * (1.0 + alpha); // F(z) = α^(−z)/(1+α) for z < 0
            if lower < 1.0 {
                (tau * lower.ln()).ceil() as i128
            } else {
                ((-tau * ((1.0 - p) * (1.0 + alpha)).ln()) - 1.0).ceil() as i128
            }
        })
        .collect();
    edges.dedup();
    edges
}

/// Merges adjacent bins until every expected count is at least `min_expected`.
pub fn merge_small_bins(
    observed: &[u64],
    expected: &[f64],
    n: u64,
    min_expected: f64,
) -> (Vec<u64>, Vec<f64>) {
    let (mut o_out, mut p_out) = (Vec::new(), Vec::new());
    let (mut o_acc, mut p_acc) = (0u64, 0.0f64);
    for (&o, &p) in observed.iter().zip(expected) {
        o_acc += o;
        p_acc += p;
        if p_acc * n as f64 >= min_expected {
            o_out.push(o_acc);
            p_out.push(p_acc);
            o_acc = 0;
            p_acc = 0.0;
        }
    }
    if p_acc > 0.0 || o_acc > 0 {
        *o_out.last_mut().unwrap() += o_acc;
        *p_out.last_mut().unwrap() += p_acc;
    }
    (o_out, p_out)
}

/// A generator that counts the 64-bit words drawn from the wrapped one.
pub struct Counting<R> {
    pub inner: R,
    pub words: u64,
}

impl<R: TryRng<Error = Infallible>> TryRng for Counting<R> {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.words += 1;
        self.inner.try_next_u32()
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.words += 1;
        self.inner.try_next_u64()
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.words += dst.len().div_ceil(8) as u64;
        self.inner.try_fill_bytes(dst)
    }
}

impl<R: TryCryptoRng<Error = Infallible>> TryCryptoRng for Counting<R> {}

/// Chi-square of integer samples against the discrete Laplace of scale `tau`: one bin
/// per integer for small scales, about 60 equal-probability bins otherwise; bins merged
/// until each expects at least 5 samples.
pub fn discrete_laplace_fit(samples: &[i128], tau: f64) -> ChiSquare {
    let edges = if tau <= 30.0 {
        (-(40.0 * tau) as i128 - 2..=(40.0 * tau) as i128 + 2).collect::<Vec<_>>()
    } else {
        discrete_laplace_edges(tau, 60)
    };
    let observed = bin_counts(samples.iter().copied(), &edges);
    let expected = bin_probabilities(discrete_laplace_cdf(tau), &edges);
    let (observed, expected) = merge_small_bins(&observed, &expected, samples.len() as u64, 5.0);
    chi_square(&observed, &expected)
}

/// Arbitrary floats with the special values (NaN, ±∞, ±0, subnormals, extremes)
/// over-represented, for the no-panic property tests.
pub fn any_float() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
        Just(0.0),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
        Just(f64::MAX),
        Just(f64::MIN),
        Just(1.0),
        Just(0.999_999),
        (-1e6f64..1e6),
        any::<f64>(),
        (-300i32..300).prop_map(|e| 10f64.powi(e)),
    ]
}

/// An analyst's adaptive choice of the next ε from the last output (for the adaptive
/// accounting sessions): `above.0 + above.1·u` after an answer above `truth`,
/// `below.0 + below.1·u` otherwise, with `u` uniform in [0, 1) from the seeded `decide`.
pub fn next_epsilon(
    decide: &mut impl rand_core::Rng,
    last: f64,
    truth: f64,
    above: (f64, f64),
    below: (f64, f64),
) -> f64 {
    let u = (decide.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let (base, spread) = if last > truth { above } else { below };
    base + spread * u
}
