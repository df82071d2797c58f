//! Throughput of the exact Gaussian-family, selection and randomized-response
//! mechanisms. Every group holds the crate-wide baseline — the naive inverse-CDF float
//! Laplace on the same ChaCha20 — and, where it is the natural comparison, a naive
//! float version of the mechanism itself (Box–Muller Gaussian, float softmax sampling,
//! float coin), so each report shows the price of exactness as a ratio measured in the
//! same run.
//!
//! Run: `cargo bench --bench mechanisms` (single thread, seeded ChaCha20).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dpmech::sampling::{BitSource, DiscreteGaussianSampler};
use dpmech::{Exponential, Gaussian, PermuteAndFlip, RandomizedResponse, ReportNoisyMax};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use std::hint::black_box;

#[inline]
fn uniform01(rng: &mut ChaCha20Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Textbook Box–Muller (one of the pair). Not private (Mironov 2012); baseline only.
#[inline]
fn naive_gaussian(rng: &mut ChaCha20Rng, value: f64, sigma: f64) -> f64 {
    let u = 1.0 - uniform01(rng);
    let v = uniform01(rng);
    value + sigma * (-2.0 * u.ln()).sqrt() * (2.0 * core::f64::consts::PI * v).cos()
}

/// The crate-wide baseline: textbook inverse-CDF Laplace on a float uniform. Not
/// private (Mironov 2012); baseline only.
#[inline]
fn naive_float_laplace(rng: &mut ChaCha20Rng, value: f64, scale: f64) -> f64 {
    let u = uniform01(rng) - 0.5;
    value - scale * u.signum() * (1.0 - 2.0 * u.abs()).ln()
}

/// Float softmax sampling: weights `exp(λ(u − max))`, inverse CDF on a float uniform.
#[inline]
fn naive_softmax(rng: &mut ChaCha20Rng, scores: &[f64], lambda: f64, weights: &mut Vec<f64>) -> usize {
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    weights.clear();
    let mut total = 0.0;
    for &s in scores {
        total += (lambda * (s - best)).exp();
        weights.push(total);
    }
    let target = uniform01(rng) * total;
    weights.partition_point(|&w| w <= target).min(scores.len() - 1)
}

/// Float Gumbel-max: `argmax λ·u − ln(−ln U)` with one float uniform per candidate, the
/// textbook way to sample the exponential mechanism. Not private (float noise); baseline
/// only.
#[inline]
fn naive_gumbel_max(rng: &mut ChaCha20Rng, scores: &[f64], lambda: f64) -> usize {
    let mut best = f64::NEG_INFINITY;
    let mut winner = 0;
    for (i, &s) in scores.iter().enumerate() {
        // U in (0, 1): never 0, so both logarithms are finite.
        let u = ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64);
        let key = lambda * s - (-u.ln()).ln();
        if key > best {
            best = key;
            winner = i;
        }
    }
    winner
}

fn discrete_gaussian(c: &mut Criterion) {
    let mut group = c.benchmark_group("discrete_gaussian");
    group.throughput(Throughput::Elements(1));
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    group.bench_function("naive_float_laplace_baseline", |b| {
        b.iter(|| naive_float_laplace(&mut rng, black_box(42.0), 1.0))
    });
    group.bench_function("naive_box_muller_baseline", |b| {
        b.iter(|| naive_gaussian(&mut rng, 0.0, black_box(10.0)))
    });
    for (label, num) in [
        ("1", 1u128),
        ("10", 100),
        ("1000", 1_000_000),
        ("2^40", 1u128 << 80),
    ] {
        let noise = DiscreteGaussianSampler::from_ratio(num, 1).unwrap();
        group.bench_with_input(BenchmarkId::new("exact_sigma", label), &noise, |b, noise| {
            b.iter(|| noise.sample(&mut rng))
        });
    }
    let noise = DiscreteGaussianSampler::from_ratio(100, 1).unwrap();
    group.bench_function("exact_sigma_10_shared_bits", |b| {
        let mut bits = BitSource::new(&mut rng);
        b.iter(|| noise.sample_bits(&mut bits))
    });
    group.finish();
}

fn gaussian_release(c: &mut Criterion) {
    let mut group = c.benchmark_group("gaussian_release");
    group.throughput(Throughput::Elements(1));
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    group.bench_function("naive_float_laplace_baseline", |b| {
        b.iter(|| naive_float_laplace(&mut rng, black_box(42.0), 1.0))
    });
    let mechanism = Gaussian::analytic(1.0, 1.0, 1e-6).unwrap();
    let sigma = mechanism.sigma();
    group.bench_function("naive_box_muller_baseline", |b| {
        b.iter(|| naive_gaussian(&mut rng, black_box(42.0), sigma))
    });
    group.bench_function("exact_Gaussian::release", |b| {
        b.iter(|| mechanism.release(black_box(42.0), &mut rng).unwrap())
    });
    // The one-call function with fixed parameters (per-thread calibration cache, OS-keyed
    // thread RNG with its fork check).
    group.bench_function("exact_one_call_gaussian", |b| {
        b.iter(|| dpmech::gaussian(black_box(42.0), 1.0, 1.0, 1e-6).unwrap())
    });
    group.finish();

    // Construction: the analytic calibration (regula falsi on ln δ, certified accept).
    let mut group = c.benchmark_group("gaussian_construction");
    group.throughput(Throughput::Elements(1));
    group.bench_function("Gaussian::analytic", |b| {
        b.iter(|| Gaussian::analytic(1.0, black_box(1.0), 1e-6).unwrap())
    });
    // Distinct parameters each time, so no cache hits: the calibration, and the discrete
    // Gaussian's certified block table of its σ².
    let mut epsilon = 1.0f64;
    group.bench_function("Gaussian::analytic_uncached", |b| {
        b.iter(|| {
            epsilon = epsilon.next_up();
            Gaussian::analytic(1.0, black_box(epsilon), 1e-6).unwrap()
        })
    });
    let mut variance = 1_000_000u128;
    group.bench_function("DiscreteGaussianSampler::from_ratio_uncached_sigma_1000", |b| {
        b.iter(|| {
            variance += 1;
            DiscreteGaussianSampler::from_ratio(black_box(variance), 1).unwrap()
        })
    });
    group.finish();
}

fn selection(c: &mut Criterion) {
    for n in [10usize, 1000] {
        let mut group = c.benchmark_group(format!("selection_{n}_candidates"));
        group.throughput(Throughput::Elements(1));
        // Scores 0, 0.1, 0.2, …: a spread of (n/10)·Δu between best and worst.
        let scores: Vec<f64> = (0..n).map(|i| i as f64 * 0.1).collect();
        let mut rng = ChaCha20Rng::seed_from_u64(3 + n as u64);
        let mut weights = Vec::with_capacity(n);
        group.bench_function("naive_float_laplace_baseline", |b| {
            b.iter(|| naive_float_laplace(&mut rng, black_box(42.0), 1.0))
        });
        group.bench_function("naive_float_softmax_baseline", |b| {
            b.iter(|| naive_softmax(&mut rng, black_box(&scores), 0.5, &mut weights))
        });
        group.bench_function("naive_float_gumbel_max_baseline", |b| {
            b.iter(|| naive_gumbel_max(&mut rng, black_box(&scores), 0.5))
        });
        let exponential = Exponential::new(1.0, 1.0).unwrap();
        group.bench_function("exact_Exponential::release", |b| {
            b.iter(|| exponential.release(black_box(&scores), &mut rng).unwrap())
        });
        let pf = PermuteAndFlip::new(1.0, 1.0).unwrap();
        group.bench_function("exact_PermuteAndFlip::release", |b| {
            b.iter(|| pf.release(black_box(&scores), &mut rng).unwrap())
        });
        let rnm = ReportNoisyMax::laplace(1.0, 1.0).unwrap();
        group.bench_function("exact_ReportNoisyMax::laplace", |b| {
            b.iter(|| rnm.release(black_box(&scores), &mut rng).unwrap())
        });
        group.finish();
    }
}

fn randomized_response(c: &mut Criterion) {
    let mut group = c.benchmark_group("randomized_response");
    group.throughput(Throughput::Elements(1));
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    group.bench_function("naive_float_laplace_baseline", |b| {
        b.iter(|| naive_float_laplace(&mut rng, black_box(42.0), 1.0))
    });
    let p = 1f64.exp() / (1.0 + 1f64.exp());
    group.bench_function("naive_float_coin_baseline", |b| {
        b.iter(|| {
            let keep = uniform01(&mut rng) < p;
            black_box(true) == keep
        })
    });
    let rr = RandomizedResponse::new(1.0).unwrap();
    group.bench_function("exact_RandomizedResponse::release", |b| {
        b.iter(|| rr.release(black_box(true), &mut rng))
    });
    let values = vec![true; 1000];
    group.throughput(Throughput::Elements(1000));
    group.bench_function("exact_release_slice_1000", |b| {
        b.iter(|| rr.release_slice(black_box(&values), &mut rng))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1));
    targets = discrete_gaussian, gaussian_release, selection, randomized_response
}
criterion_main!(benches);
