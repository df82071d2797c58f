//! The exact discrete Gaussian sampler and the Gaussian-family mechanisms.
//!
//! Distribution tests are Pearson's chi-square at `common::ALPHA = 1e-3` with
//! `N = 100 000` samples from fixed, distinct ChaCha20 seeds, bins merged until each
//! expects at least 5 samples; the critical value is the `1 − α` quantile of
//! χ²(bins − 1).

mod common;

use common::{bin_counts, chi_square, merge_small_bins};
use dpmech::sampling::{BitSource, DiscreteGaussian, Rational};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use statrs::distribution::{ContinuousCDF, Normal};

const N: u64 = 100_000;

/// The exact discrete Gaussian CDF on `[−L, L]` (mass outside is below 1e-30), with
/// the normaliser summed as a series in f64 (an oracle, not a sampler).
fn discrete_gaussian_cdf(sigma_squared: f64) -> impl Fn(i128) -> f64 {
    let limit = (14.0 * sigma_squared.sqrt()).ceil() as i128 + 2;
    let weights: Vec<f64> = (-limit..=limit)
        .map(|z| (-((z * z) as f64) / (2.0 * sigma_squared)).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let mut cumulative = Vec::with_capacity(weights.len());
    let mut acc = 0.0;
    for w in &weights {
        acc += w / total;
        cumulative.push(acc);
    }
    move |z| {
        if z < -limit {
            0.0
        } else if z >= limit {
            1.0
        } else {
            cumulative[(z + limit) as usize]
        }
    }
}

/// Equal-probability edges from a CDF (deduplicated), searching `[−L, L]`.
fn quantile_edges(cdf: &dyn Fn(i128) -> f64, limit: i128, bins: usize) -> Vec<i128> {
    let mut edges: Vec<i128> = (1..bins)
        .map(|j| {
            let p = j as f64 / bins as f64;
            let (mut lo, mut hi) = (-limit, limit);
            while lo < hi {
                let mid = lo + (hi - lo).div_euclid(2);
                if cdf(mid) >= p { hi = mid } else { lo = mid + 1 }
            }
            lo
        })
        .collect();
    edges.dedup();
    edges
}

fn fit(samples: &[i128], cdf: &dyn Fn(i128) -> f64, edges: &[i128]) -> common::ChiSquare {
    let observed = bin_counts(samples.iter().copied(), edges);
    let expected = common::bin_probabilities(cdf, edges);
    let (observed, expected) = merge_small_bins(&observed, &expected, samples.len() as u64, 5.0);
    chi_square(&observed, &expected)
}

fn draw(noise: &DiscreteGaussian, seed: u64) -> Vec<i128> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut bits = BitSource::new(&mut rng);
    (0..N).map(|_| noise.sample_bits(&mut bits)).collect()
}

#[test]
fn discrete_gaussian_matches_its_exact_pmf() {
    // (σ² as num/den, label). The last two use a huge denominator, which forces the
    // 512-bit acceptance path at small σ where the exact pmf is known.
    let cases: [(u128, u64, &str); 7] = [
        (1, 1, "σ = 1"),
        (9, 1, "σ = 3"),
        (100, 1, "σ = 10"),
        (1_000_000, 1, "σ = 1000"),
        (1, 4, "σ = 1/2"),
        (10u128 << 60, 1 << 60, "σ² = 10 (wide path)"),
        (7u128 << 62, 3 << 60, "σ² = 28/3 (wide path)"),
    ];
    for (i, (num, den, label)) in cases.into_iter().enumerate() {
        let noise = DiscreteGaussian::from_ratio(num, den).unwrap();
        let sigma_squared = num as f64 / den as f64;
        let samples = draw(&noise, 3000 + i as u64);
        let cdf = discrete_gaussian_cdf(sigma_squared);
        let sigma = sigma_squared.sqrt();
        let edges: Vec<i128> = if sigma <= 12.0 {
            let l = (8.0 * sigma).ceil() as i128 + 1;
            (-l..=l).collect()
        } else {
            quantile_edges(&cdf, (14.0 * sigma) as i128, 60)
        };
        let result = fit(&samples, &cdf, &edges);
        println!("discrete Gaussian {label}: {result:?}");
        assert!(result.passes(), "{label}: {result:?}");
    }
}

#[test]
fn discrete_gaussian_at_large_sigma_matches_the_normal_cdf() {
    // σ = 2⁴⁰ (the wide path with den = 1). At this σ the discrete and continuous bin
    // probabilities differ by < 1e-12 (Euler–Maclaurin/Poisson summation), far below
    // what 1e5 samples resolve; the continuity-corrected normal CDF is the oracle.
    let sigma = (1u64 << 40) as f64;
    let noise = DiscreteGaussian::from_ratio(1u128 << 80, 1).unwrap();
    let samples = draw(&noise, 3100);
    let normal = Normal::new(0.0, sigma).unwrap();
    let cdf = |z: i128| normal.cdf(z as f64 + 0.5);
    let edges: Vec<i128> = (1..60)
        .map(|j| normal.inverse_cdf(j as f64 / 60.0).round() as i128)
        .collect();
    let result = fit(&samples, &cdf, &edges);
    println!("discrete Gaussian σ = 2^40: {result:?}");
    assert!(result.passes(), "{result:?}");
}

#[test]
fn a_discrete_laplace_in_place_of_the_gaussian_fails_the_same_check() {
    // Negative control: the proposal distribution itself (discrete Laplace, t = 4 for
    // σ = 3) must be rejected by the σ = 3 check.
    let proposal = dpmech::sampling::DiscreteLaplace::new(Rational::new(3, 1).unwrap());
    let mut rng = ChaCha20Rng::seed_from_u64(3200);
    let samples: Vec<i128> = (0..N).map(|_| proposal.sample(&mut rng) as i128).collect();
    let edges: Vec<i128> = (-25..=25).collect();
    let result = fit(&samples, &discrete_gaussian_cdf(9.0), &edges);
    assert!(!result.passes(), "{result:?}");
}

#[test]
fn sampler_constructors_and_pinned_values() {
    let noise = DiscreteGaussian::new(Rational::new(9, 1).unwrap());
    assert_eq!(noise.sigma_squared(), (9, 1));
    assert_eq!(noise.sigma(), 3.0);
    let mut rng = ChaCha20Rng::seed_from_u64(2026);
    let pinned: Vec<i64> = (0..8).map(|_| noise.sample(&mut rng)).collect();
    println!("pinned discrete Gaussian σ = 3: {pinned:?}");
    assert_eq!(pinned, PINNED);
}

const PINNED: [i64; 8] = [3, 1, -6, -1, 3, -3, 0, 1];
