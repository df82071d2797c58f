//! Throughput of the exact samplers and of the Laplace mechanism, each group holding a
//! naive floating-point inverse-CDF Laplace on the same generator as its baseline, so
//! every report shows the price of exactness as a ratio measured in the same run.
//!
//! Run: `cargo bench --bench samplers` (single thread, seeded ChaCha20).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dpmech::sampling::{
    BernoulliExpNeg, BitSource, DiscreteLaplace, OneSidedGeometric, Rational, bernoulli_exp_neg,
};
use dpmech::{Laplace, laplace};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use std::hint::black_box;

/// The textbook float sampler: `x − b·sgn(u)·ln(1 − 2|u|)`, `u` uniform in (−½, ½).
/// Not private (Mironov 2012); here only as the speed baseline.
#[inline]
fn naive_float_laplace(rng: &mut ChaCha20Rng, value: f64, scale: f64) -> f64 {
    let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) - 0.5;
    value - scale * u.signum() * (1.0 - 2.0 * u.abs()).ln()
}

fn laplace_release(c: &mut Criterion) {
    let mut group = c.benchmark_group("laplace_release");
    group.throughput(Throughput::Elements(1));
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    group.bench_function("naive_float_baseline", |b| {
        b.iter(|| naive_float_laplace(&mut rng, black_box(42.0), black_box(2.0)))
    });
    let mechanism = Laplace::new(1.0, 0.5).unwrap();
    group.bench_function("exact_Laplace::release", |b| {
        b.iter(|| mechanism.release(black_box(42.0), &mut rng).unwrap())
    });
    group.bench_function("exact_one_call_laplace_os_rng", |b| {
        b.iter(|| laplace(black_box(42.0), black_box(1.0), black_box(0.5)).unwrap())
    });
    group.finish();
}

fn laplace_slice(c: &mut Criterion) {
    let mut group = c.benchmark_group("laplace_release_slice_1000");
    group.throughput(Throughput::Elements(1000));
    let values: Vec<f64> = (0..1000).map(|i| i as f64 * 0.5).collect();
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    group.bench_function("naive_float_baseline", |b| {
        b.iter(|| {
            values
                .iter()
                .map(|&v| naive_float_laplace(&mut rng, v, 2.0))
                .collect::<Vec<f64>>()
        })
    });
    let mechanism = Laplace::new(1.0, 0.5).unwrap();
    group.bench_function("exact_Laplace::release_slice", |b| {
        b.iter(|| mechanism.release_slice(black_box(&values), &mut rng).unwrap())
    });
    group.finish();
}

fn discrete_laplace(c: &mut Criterion) {
    let mut group = c.benchmark_group("discrete_laplace");
    group.throughput(Throughput::Elements(1));
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    group.bench_function("naive_float_baseline", |b| {
        b.iter(|| naive_float_laplace(&mut rng, 0.0, black_box(10.0)))
    });
    for scale in [1u64, 10, 1_000_000] {
        let noise = DiscreteLaplace::new(Rational::new(scale, 1).unwrap());
        group.bench_with_input(BenchmarkId::new("exact_scale", scale), &noise, |b, noise| {
            b.iter(|| noise.sample(&mut rng))
        });
    }
    // The mechanism on integers: the same noise behind `Geometric::release` (Δ = 1,
    // ε = 1, 0.1, 10⁻⁶: τ = 1, just above 10, just above 10⁶).
    for (scale, epsilon) in [(1u64, 1.0), (10, 0.1), (1_000_000, 1e-6)] {
        let mechanism = dpmech::Geometric::new(1, epsilon).unwrap();
        group.bench_with_input(
            BenchmarkId::new("exact_Geometric::release_scale", scale),
            &mechanism,
            |b, mechanism| b.iter(|| mechanism.release(black_box(42), &mut rng)),
        );
    }
    // The batch path: one bit buffer shared by consecutive samples.
    let noise = DiscreteLaplace::new(Rational::new(1_000_000, 1).unwrap());
    group.bench_function("exact_scale_1000000_shared_bits", |b| {
        let mut bits = BitSource::new(&mut rng);
        b.iter(|| noise.sample_bits(&mut bits))
    });
    group.finish();
}

fn one_sided_geometric(c: &mut Criterion) {
    let mut group = c.benchmark_group("geometric_one_sided");
    group.throughput(Throughput::Elements(1));
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    group.bench_function("naive_float_baseline", |b| {
        b.iter(|| naive_float_laplace(&mut rng, 0.0, black_box(10.0)))
    });
    for scale in [1u64, 10, 1_000_000] {
        let noise = OneSidedGeometric::new(Rational::new(scale, 1).unwrap());
        group.bench_with_input(BenchmarkId::new("exact_scale", scale), &noise, |b, noise| {
            b.iter(|| noise.sample(&mut rng))
        });
    }
    group.finish();
}

fn discrete_laplace_batch(c: &mut Criterion) {
    let mut group = c.benchmark_group("discrete_laplace_sample_into_1000");
    group.throughput(Throughput::Elements(1000));
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    group.bench_function("naive_float_baseline", |b| {
        let mut out = vec![0f64; 1000];
        b.iter(|| {
            for slot in out.iter_mut() {
                *slot = naive_float_laplace(&mut rng, 0.0, 10.0);
            }
            black_box(&out);
        })
    });
    for scale in [1u64, 10, 1_000_000] {
        let noise = DiscreteLaplace::new(Rational::new(scale, 1).unwrap());
        let mut out = vec![0i64; 1000];
        group.bench_with_input(BenchmarkId::new("exact_scale", scale), &noise, |b, noise| {
            b.iter(|| {
                noise.sample_into(&mut out, &mut rng);
                black_box(&out);
            })
        });
    }
    group.finish();
}

fn construction(c: &mut Criterion) {
    let mut group = c.benchmark_group("discrete_laplace_construction_new_scale");
    group.throughput(Throughput::Elements(1));
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    group.bench_function("naive_float_baseline", |b| {
        b.iter(|| naive_float_laplace(&mut rng, 0.0, black_box(10.0)))
    });
    // Distinct scales each time (there is no per-scale cache: a scale is a rung of the
    // shared ladder and two rates).
    let mut next = 1_000_000u64;
    group.bench_function("new_scale_1e6_plus_i", |b| {
        b.iter(|| {
            next += 1;
            DiscreteLaplace::new(Rational::new(next, 1).unwrap())
        })
    });
    group.finish();
}

fn bernoulli(c: &mut Criterion) {
    let mut group = c.benchmark_group("bernoulli_exp_neg");
    group.throughput(Throughput::Elements(1));
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    group.bench_function("naive_float_baseline", |b| {
        b.iter(|| naive_float_laplace(&mut rng, 0.0, black_box(1.0)))
    });
    for (num, den) in [(1u128, 2u128), (1, 1), (7, 2)] {
        group.bench_with_input(
            BenchmarkId::new("exact_gamma", format!("{num}/{den}")),
            &(num, den),
            |b, &(num, den)| b.iter(|| bernoulli_exp_neg(&mut rng, num, den).unwrap()),
        );
        // The precomputed threshold: one word and one comparison per trial.
        let coin = BernoulliExpNeg::new(num, den as u64).unwrap();
        group.bench_with_input(
            BenchmarkId::new("exact_precomputed_gamma", format!("{num}/{den}")),
            &coin,
            |b, coin| b.iter(|| coin.sample(&mut rng)),
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = laplace_release, laplace_slice, discrete_laplace, one_sided_geometric,
        discrete_laplace_batch, construction, bernoulli
}
criterion_main!(benches);
