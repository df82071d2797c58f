//! Goodness-of-fit tests of the exact samplers against their exact distributions.
//!
//! Every test is Pearson's chi-square at significance `common::ALPHA = 1e-3`, with
//! `N = 100 000` samples from a fixed, distinct ChaCha20 seed, bins merged until each
//! expects at least 5 samples, and the critical value the `1 − α` quantile of
//! χ²(bins − 1). A negative control — the seeds' `sign × geometric` sampler — must be
//! rejected by the very same check.

use crate::common;

use crate::common::{bin_counts, bin_probabilities, chi_square, discrete_laplace_fit, merge_small_bins};
use dpmech::sampling::{
    BernoulliExpNeg, BitSource, DiscreteLaplace, OneSidedGeometric, Rational, bernoulli_exp_neg,
    bernoulli_ratio, uniform_below,
};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const N: u64 = 100_000;

fn sample_discrete_laplace(scale: Rational, seed: u64) -> Vec<i128> {
    let noise = DiscreteLaplace::new(scale);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut bits = BitSource::new(&mut rng);
    (0..N).map(|_| noise.sample_bits(&mut bits)).collect()
}

#[test]
fn discrete_laplace_matches_its_pmf_at_many_scales() {
    let scales = [
        (1, 3),              // τ = 1/3
        (1, 2),              // τ < 1
        (1, 1),              // τ = 1
        (3, 2),              // τ = 1.5
        (10, 1),             // τ = 10
        (30, 1),             // τ = 30: a rung of the ladder, one word, per-integer bins
        (159, 10),           // τ = 15.9: M = 1, not a rung (two words, rejection)
        (1000, 7),           // τ ≈ 142.9, non-dyadic
        (1000, 1),           // τ = 1000
        (1_000_000, 1),      // τ = 1e6
        (1u64 << 35, 1),     // τ = 2^35 grid units
        (1u64 << 35 | 3, 1), // τ ≈ 2^35, a Laplace release: R's low 8 bits in the first word
        (1u64 << 37 | 1, 1), // τ ≈ 2^37: m = 32, the first three-word scale
        (1u64 << 41 | 3, 1), // τ ≈ 2^41, the statistics' exact sums and the SVT
        (1u64 << 40, 1),     // τ = 2^40
        (1u64 << 60, 1),     // τ = 2^60, the largest scale the issue asks for
        (u64::MAX, 3),       // τ ≈ 2^62.4: a 56-bit remainder, three words per trial
    ];
    for (i, (num, den)) in scales.into_iter().enumerate() {
        let scale = Rational::new(num, den).unwrap();
        let samples = sample_discrete_laplace(scale, 100 + i as u64);
        let fit = discrete_laplace_fit(&samples, scale.to_f64());
        println!("discrete Laplace τ = {num}/{den}: {fit:?}");
        assert!(fit.passes(), "τ = {num}/{den}: {fit:?}");
    }
}

/// At large scales the bins above do not see the low-order digits, which come from the
/// accepted remainder `R`: for `τ ≥ 2³⁵` the bytes of `Z` at bits 0–7, 8–15 and 16–23 are uniform
/// up to a relative `2⁻¹¹`, far below what `N` samples can detect (at `τ = 2³⁵ + 3` the
/// lowest byte comes from the trial's first word, the others from its second). Chi-square
/// with 256 bins each, α = `common::ALPHA`, `N` samples.
#[test]
fn discrete_laplace_low_digits_are_uniform_at_large_scales() {
    for (i, num) in [(1u64 << 35) + 3, (1u64 << 40) + 3, 1 << 60]
        .into_iter()
        .enumerate()
    {
        let samples = sample_discrete_laplace(Rational::new(num, 1).unwrap(), 150 + i as u64);
        for shift in [0u32, 8, 16] {
            let mut counts = vec![0u64; 256];
            for &z in &samples {
                counts[((z >> shift) & 255) as usize] += 1;
            }
            let fit = chi_square(&counts, &[1.0 / 256.0; 256]);
            println!("τ = {num}, byte at bit {shift}: {fit:?}");
            assert!(fit.passes(), "τ = {num}, byte at bit {shift}: {fit:?}");
        }
    }
}

/// The remainder at a moderate scale: at `τ = 20000` the remainder `R < 2⁹` is
/// accepted with probability `αᴿ` (two words per trial), and `Z mod 4096` has the exact
/// law `Σ_k pmf(r + 4096k)` (summed in `f64` over `|k| ≤ 1200`, tail below 1e-100).
/// Chi-square with 4096 bins, α = `common::ALPHA`, `N` samples.
#[test]
fn discrete_laplace_residues_match_at_a_moderate_scale() {
    let tau = 20_000.0f64;
    let samples = sample_discrete_laplace(Rational::new(20_000, 1).unwrap(), 160);
    let alpha = (-1.0 / tau).exp();
    let pmf = |z: i64| (1.0 - alpha) / (1.0 + alpha) * alpha.powi(z.unsigned_abs() as i32);
    let expected: Vec<f64> = (0..4096i64)
        .map(|r| (-1200..=1200i64).map(|k| pmf(r + 4096 * k)).sum())
        .collect();
    let mut counts = vec![0u64; 4096];
    for &z in &samples {
        counts[z.rem_euclid(4096) as usize] += 1;
    }
    let total: f64 = expected.iter().sum();
    let expected: Vec<f64> = expected.iter().map(|p| p / total).collect();
    let fit = chi_square(&counts, &expected);
    println!("τ = 20000, Z mod 4096: {fit:?}");
    assert!(fit.passes(), "{fit:?}");
}

/// The batch paths: `DiscreteLaplace::sample_into` at a one-word scale (τ = 10),
/// two-word scales with `V` sharing the second word (τ = 10⁶) and with `R`'s low bits
/// in the first word (τ = 2³⁵ + 3, also its low byte), and a three-word scale; and
/// `Laplace::release_slice` of `N` zeros, whose outputs over `g` are the noise in units
/// (τ from `scale_for`). Same check, α and `N` as above.
#[test]
fn batches_match_the_discrete_laplace_pmf() {
    for (i, num) in [10u64, 1_000_000, (1 << 35) + 3, (1 << 37) + 1]
        .into_iter()
        .enumerate()
    {
        let noise = DiscreteLaplace::new(Rational::new(num, 1).unwrap());
        let mut out = vec![0i64; N as usize];
        noise.sample_into(&mut out, &mut ChaCha20Rng::seed_from_u64(170 + i as u64));
        let samples: Vec<i128> = out.iter().map(|&z| i128::from(z)).collect();
        let fit = discrete_laplace_fit(&samples, num as f64);
        println!("sample_into τ = {num}: {fit:?}");
        assert!(fit.passes(), "sample_into τ = {num}: {fit:?}");
        if num == (1 << 35) + 3 {
            let mut counts = vec![0u64; 256];
            for &z in &samples {
                counts[(z & 255) as usize] += 1;
            }
            let fit = chi_square(&counts, &[1.0 / 256.0; 256]);
            println!("sample_into τ = {num}, lowest byte: {fit:?}");
            assert!(fit.passes(), "sample_into τ = {num}, lowest byte: {fit:?}");
        }
    }
    let mechanism = dpmech::Laplace::new(1.0, 0.5).unwrap();
    let released = mechanism
        .release_slice(&vec![0.0; N as usize], &mut ChaCha20Rng::seed_from_u64(175))
        .unwrap();
    let g = mechanism.granularity();
    let tau = mechanism.scale_for(N as usize).unwrap() / g;
    let units: Vec<i128> = released.iter().map(|&y| (y / g) as i128).collect();
    assert!(units.iter().zip(&released).all(|(&u, &y)| u as f64 * g == y));
    let fit = discrete_laplace_fit(&units, tau);
    println!("Laplace::release_slice, τ = {tau}: {fit:?}");
    assert!(fit.passes(), "Laplace::release_slice, τ = {tau}: {fit:?}");
}

/// The seeds' sampler (document 002): `sign × geometric`, keeping (negative, 0). It
/// puts probability `1 − α` on 0 instead of `(1 − α)/(1 + α)`.
fn seeds_wrong_sampler(scale: Rational, seed: u64) -> Vec<i128> {
    let magnitude = OneSidedGeometric::new(scale);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut bits = BitSource::new(&mut rng);
    (0..N)
        .map(|_| {
            let g = magnitude.sample_bits(&mut bits) as i128;
            if bits.bit() { -g } else { g }
        })
        .collect()
}

#[test]
fn the_seeds_sign_times_geometric_sampler_fails_the_same_check() {
    for (i, tau) in [1u64, 3, 10].into_iter().enumerate() {
        let scale = Rational::new(tau, 1).unwrap();
        let fit = discrete_laplace_fit(&seeds_wrong_sampler(scale, 200 + i as u64), tau as f64);
        println!("seeds' sampler τ = {tau}: {fit:?}");
        assert!(!fit.passes(), "the wrong sampler passed at τ = {tau}: {fit:?}");
    }
}

#[test]
fn one_sided_geometric_matches_its_pmf() {
    for (i, (num, den)) in [(3u64, 10u64), (1, 1), (15, 2), (12, 1), (1_000_000, 1)]
        .into_iter()
        .enumerate()
    {
        let scale = Rational::new(num, den).unwrap();
        let tau = scale.to_f64();
        let sampler = OneSidedGeometric::new(scale);
        let mut rng = ChaCha20Rng::seed_from_u64(300 + i as u64);
        let samples: Vec<i128> = (0..N).map(|_| sampler.sample(&mut rng) as i128).collect();
        // Pr[G ≤ k] = 1 − α^(k+1).
        let cdf = |k: i128| {
            if k < 0 {
                0.0
            } else {
                1.0 - (-(k as f64 + 1.0) / tau).exp()
            }
        };
        let edges: Vec<i128> = if tau < 30.0 {
            (0..=(40.0 * tau) as i128 + 2).collect()
        } else {
            let mut e: Vec<i128> = (1..60)
                .map(|j| (-tau * (1.0 - j as f64 / 60.0).ln()).ceil() as i128 - 1)
                .collect();
            e.dedup();
            e
        };
        let observed = bin_counts(samples.into_iter(), &edges);
        let expected = bin_probabilities(cdf, &edges);
        let (observed, expected) = merge_small_bins(&observed, &expected, N, 5.0);
        let fit = chi_square(&observed, &expected);
        println!("geometric τ = {num}/{den}: {fit:?}");
        assert!(fit.passes(), "τ = {num}/{den}: {fit:?}");
    }
}

fn bernoulli_fit(successes: u64, p: f64) -> common::ChiSquare {
    chi_square(&[successes, N - successes], &[p, 1.0 - p])
}

#[test]
fn bernoulli_of_a_rational_matches_p() {
    let cases: [(u128, u128); 5] = [
        (1, 3),
        (2, 7),
        (999, 1000),
        (u64::MAX as u128 / 3, u64::MAX as u128),
        // Denominator above 2^64: exercises the bit-by-bit path.
        ((1u128 << 100) / 5, 1u128 << 100),
    ];
    for (i, (num, den)) in cases.into_iter().enumerate() {
        let mut rng = ChaCha20Rng::seed_from_u64(400 + i as u64);
        let successes = (0..N)
            .filter(|_| bernoulli_ratio(&mut rng, num, den).unwrap())
            .count() as u64;
        let p = num as f64 / den as f64;
        let fit = bernoulli_fit(successes, p);
        assert!(fit.passes(), "Bernoulli({num}/{den}): {successes}/{N}, {fit:?}");
    }
    let mut rng = ChaCha20Rng::seed_from_u64(499);
    assert!(bernoulli_ratio(&mut rng, 5, 5).unwrap());
    assert!(!bernoulli_ratio(&mut rng, 0, 5).unwrap());
    assert!(bernoulli_ratio(&mut rng, 1, 0).is_err());
}

#[test]
fn bernoulli_of_exp_minus_gamma_matches_its_probability() {
    let cases: [(u128, u128); 6] = [(0, 1), (1, 3), (1, 1), (5, 2), (20, 3), (1, 1u128 << 40)];
    for (i, (num, den)) in cases.into_iter().enumerate() {
        let mut rng = ChaCha20Rng::seed_from_u64(500 + i as u64);
        // The struct (threshold computed once) and the one-call function agree.
        let coin = BernoulliExpNeg::new(num, den as u64).unwrap();
        let mut replay = ChaCha20Rng::seed_from_u64(500 + i as u64);
        for _ in 0..100 {
            assert_eq!(
                coin.sample(&mut replay),
                bernoulli_exp_neg(&mut rng, num, den).unwrap()
            );
        }
        let successes = (0..N).filter(|_| coin.sample(&mut rng)).count() as u64;
        let p = (-(num as f64) / den as f64).exp();
        if p == 1.0 {
            assert_eq!(successes, N);
            continue;
        }
        // Merge into a one-sided check when a cell would expect fewer than 5.
        if p * N as f64 >= 5.0 && (1.0 - p) * N as f64 >= 5.0 {
            let fit = bernoulli_fit(successes, p);
            assert!(
                fit.passes(),
                "Bernoulli(exp(-{num}/{den})): {successes}/{N}, {fit:?}"
            );
        } else {
            // exp(−1/2^40): failures are Binomial(N, ≈ 2^-40); seeing one has
            // probability below 1e-7.
            assert!(N - successes <= 1, "{successes}");
        }
    }
}

#[test]
fn uniform_below_is_uniform() {
    for (i, n) in [2u64, 6, 7, 1000].into_iter().enumerate() {
        let mut rng = ChaCha20Rng::seed_from_u64(600 + i as u64);
        let mut counts = vec![0u64; n as usize];
        for _ in 0..N {
            counts[uniform_below(&mut rng, n).unwrap() as usize] += 1;
        }
        let fit = chi_square(&counts, &vec![1.0 / n as f64; n as usize]);
        assert!(fit.passes(), "uniform below {n}: {fit:?}");
    }
    let mut rng = ChaCha20Rng::seed_from_u64(699);
    assert_eq!(uniform_below(&mut rng, 1).unwrap(), 0);
    assert!(uniform_below(&mut rng, 0).is_err());
}
