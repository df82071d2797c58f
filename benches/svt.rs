//! Queries per second through the sparse vector technique: the exact `AboveThreshold`
//! and `Sparse` (c = 10) against a naive floating-point implementation (inverse-CDF
//! Laplace, float comparisons — not private, Mironov 2012) in the same group.
//!
//! Run: `cargo bench --bench svt` (single thread, seeded ChaCha20).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpmech::{AboveThreshold, Sparse, StreamingMechanism};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use std::hint::black_box;

const QUERIES: usize = 1000;

#[inline]
fn naive_float_laplace(rng: &mut ChaCha20Rng, scale: f64) -> f64 {
    let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) - 0.5;
    -scale * u.signum() * (1.0 - 2.0 * u.abs()).ln()
}

/// Naive float Sparse: `T + Lap(σ)` re-drawn after each ⊤, `Lap(2σ)` per query.
fn naive_sparse(rng: &mut ChaCha20Rng, values: &[f64], threshold: f64, sigma: f64, cutoff: usize) -> usize {
    let mut noisy_threshold = threshold + naive_float_laplace(rng, sigma);
    let mut positives = 0;
    let mut answered = 0;
    for &v in values {
        answered += 1;
        if v + naive_float_laplace(rng, 2.0 * sigma) >= noisy_threshold {
            positives += 1;
            if positives == cutoff {
                break;
            }
            noisy_threshold = threshold + naive_float_laplace(rng, sigma);
        }
    }
    answered
}

fn above_threshold(c: &mut Criterion) {
    let mut group = c.benchmark_group("svt_above_threshold_1000_queries");
    group.throughput(Throughput::Elements(QUERIES as u64));
    // All queries far below the threshold: the stream never halts.
    let values: Vec<f64> = (0..QUERIES).map(|i| (i % 17) as f64).collect();
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    group.bench_function("naive_float_baseline", |b| {
        b.iter(|| naive_sparse(&mut rng, black_box(&values), 1e6, 2.0, 1))
    });
    group.bench_function("exact_AboveThreshold::run", |b| {
        b.iter(|| {
            let mut svt = AboveThreshold::new(1e6, 1.0, 1.0).unwrap();
            svt.run(black_box(&values), &mut rng).unwrap().len()
        })
    });
    group.finish();
}

fn sparse(c: &mut Criterion) {
    let mut group = c.benchmark_group("svt_sparse_c10_1000_queries");
    group.throughput(Throughput::Elements(QUERIES as u64));
    // Ten queries far above the threshold (the last one last), the rest far below.
    let values: Vec<f64> = (0..QUERIES)
        .map(|i| if (i + 1) % 100 == 0 { 1e7 } else { (i % 17) as f64 })
        .collect();
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    group.bench_function("naive_float_baseline", |b| {
        b.iter(|| naive_sparse(&mut rng, black_box(&values), 1e5, 20.0, 10))
    });
    group.bench_function("exact_Sparse::run", |b| {
        b.iter(|| {
            let mut svt = Sparse::new(1e5, 1.0, 1.0, 10).unwrap();
            svt.run(black_box(&values), &mut rng).unwrap().len()
        })
    });
    group.finish();
}

criterion_group!(benches, above_threshold, sparse);
criterion_main!(benches);
