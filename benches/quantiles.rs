//! One private quantile of 10⁶ records — binning into a public grid plus the exact
//! permute-and-flip selection over the bins — against sorting the same records with
//! `sort_unstable_by` (the first step of an exact, non-private quantile), in the same
//! group. Target: the private quantile at most 2× the sort.
//!
//! The group `quantile_selection` times the selection alone at the finest grids (2¹⁶
//! and 2²⁰ bins: 2¹⁶ + 1 and 2²⁰ + 1 candidates, one coin each) beside the crate-wide
//! baseline, the naive inverse-CDF float Laplace on the same ChaCha20: once through
//! `Quantile::release_counts` (prefix sums, exact rank scores, permute-and-flip; what
//! `dp_median` runs per group) and once as `PermuteAndFlip::release` on those scores.
//!
//! Run: `cargo bench --bench quantiles` (single thread, seeded ChaCha20).

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dpmech::PermuteAndFlip;
use dpmech::statistics::{Quantile, QuantileGrid};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use std::hint::black_box;

const RECORDS: usize = 1_000_000;

/// Log-normal durations (median e⁵ ≈ 148 s, σ = 1.2) clamped to [0, 3600], from a
/// fixed seed (Box–Muller on ChaCha20: test data, not noise).
fn durations() -> Vec<f64> {
    let mut rng = ChaCha20Rng::seed_from_u64(2026);
    let mut unit = || ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    (0..RECORDS)
        .map(|_| {
            let z = (-2.0 * unit().ln()).sqrt() * (2.0 * std::f64::consts::PI * unit()).cos();
            (5.0 + 1.2 * z).exp().min(3600.0)
        })
        .collect()
}

fn one_quantile(c: &mut Criterion) {
    let data = durations();
    let mut group = c.benchmark_group("quantile_1e6_records");
    group.throughput(Throughput::Elements(RECORDS as u64));
    group.sample_size(20);
    group.bench_function("sort_unstable_by (baseline)", |b| {
        b.iter_batched_ref(
            || data.clone(),
            |v| {
                v.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap());
                black_box(v[RECORDS / 2])
            },
            BatchSize::LargeInput,
        )
    });
    for bins in [3600usize, 1 << 16] {
        let grid = QuantileGrid::new(0.0, 3600.0, bins).unwrap();
        let median = Quantile::new(&grid, 0.5, 1.0, 1).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        group.bench_function(format!("dp median, {bins} bins (binning + selection)"), |b| {
            b.iter(|| black_box(median.release(black_box(&data), &mut rng)))
        });
        let counts = grid.counts(&data);
        group.bench_function(format!("dp median, {bins} bins (selection from counts)"), |b| {
            b.iter(|| {
                black_box(
                    median
                        .release_counts(black_box(counts.as_slice()), &mut rng)
                        .unwrap(),
                )
            })
        });
    }
    group.finish();
}

/// The crate-wide baseline: textbook inverse-CDF Laplace on a float uniform. Not
/// private (Mironov 2012); baseline only.
#[inline]
fn naive_float_laplace(rng: &mut ChaCha20Rng, value: f64, scale: f64) -> f64 {
    let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) - 0.5;
    value - scale * u.signum() * (1.0 - 2.0 * u.abs()).ln()
}

fn selection(c: &mut Criterion) {
    let data = durations();
    let mut group = c.benchmark_group("quantile_selection");
    group.sample_size(20);
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    group.bench_function("naive_float_laplace_baseline", |b| {
        b.iter(|| naive_float_laplace(&mut rng, black_box(42.0), 1.0))
    });
    for bins in [1usize << 16, 1 << 20] {
        let grid = QuantileGrid::new(0.0, 3600.0, bins).unwrap();
        let median = Quantile::new(&grid, 0.5, 1.0, 1).unwrap();
        let counts = grid.counts(&data);
        let label = format!("2^{}", bins.trailing_zeros());
        group.bench_with_input(
            BenchmarkId::new("median_from_counts", &label),
            &counts,
            |b, counts| {
                b.iter(|| {
                    median
                        .release_counts(black_box(counts.as_slice()), &mut rng)
                        .unwrap()
                })
            },
        );
        // The same selection on the scores the median hands over (Δu = 1/2, ε = 1).
        let scores = median.scores(counts.as_slice()).unwrap();
        let selector = PermuteAndFlip::new(0.5, 1.0).unwrap();
        group.bench_with_input(
            BenchmarkId::new("permute_and_flip", &label),
            &scores,
            |b, scores| b.iter(|| selector.release(black_box(scores), &mut rng).unwrap()),
        );
    }
    group.finish();
}

criterion_group!(benches, one_quantile, selection);
criterion_main!(benches);
