//! Records per second into the exact, mergeable states of the spread releases — what an
//! engine pays per row for `dp_variance` / `dp_stddev` and `dp_bounds` — against the
//! naive float accumulation of the same moments (`Σx`, `Σx²`, count; a running min/max)
//! in the same group, and the release from a state (the noise, paid once per cell).
//!
//! Run: `cargo bench --bench spread` (single thread, seeded ChaCha20).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{ApproxBounds, Variance};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use std::hint::black_box;

const RECORDS: usize = 1_000_000;

/// Log-normal-like durations in seconds, some beyond the bounds.
fn durations() -> Vec<f64> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..RECORDS)
        .map(|_| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            (4.0 + 3.0 * (u - 0.5)).exp() * 10.0
        })
        .collect()
}

fn variance_state(c: &mut Criterion) {
    let values = durations();
    let mut group = c.benchmark_group("variance_state_1e6_records");
    group.throughput(Throughput::Elements(RECORDS as u64));
    group.bench_function("naive_float_moments_baseline", |b| {
        b.iter(|| {
            let (mut n, mut s1, mut s2) = (0u64, 0.0f64, 0.0f64);
            for &v in black_box(&values) {
                let x = v.clamp(0.0, 3600.0);
                n += 1;
                s1 += x;
                s2 += x * x;
            }
            (n, s1, s2)
        })
    });
    let m = Variance::new((0.0, 3600.0), 1, Neighbouring::AddRemove, 1.0).unwrap();
    group.bench_function("exact_VarianceState::add", |b| {
        b.iter(|| {
            let mut state = m.state();
            black_box(&values).iter().for_each(|&v| state.add(v));
            state.parts()
        })
    });
    group.finish();
}

fn bounds_state(c: &mut Criterion) {
    let values = durations();
    let mut group = c.benchmark_group("bounds_state_1e6_records");
    group.throughput(Throughput::Elements(RECORDS as u64));
    group.bench_function("naive_float_min_max_baseline", |b| {
        b.iter(|| {
            black_box(&values)
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                    (lo.min(v), hi.max(v))
                })
        })
    });
    let m = ApproxBounds::new(1, Neighbouring::AddRemove, 1.0).unwrap();
    group.bench_function("exact_BoundsHistogram::add", |b| {
        b.iter(|| {
            let mut state = m.state();
            black_box(&values).iter().for_each(|&v| state.add(v));
            state.counts()[100]
        })
    });
    group.finish();
}

fn release(c: &mut Criterion) {
    let values = durations();
    let mut group = c.benchmark_group("spread_release_from_state");
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let variance = Variance::new((0.0, 3600.0), 1, Neighbouring::AddRemove, 1.0).unwrap();
    let mut moments = variance.state();
    values.iter().for_each(|&v| moments.add(v));
    group.bench_function("Variance::release_from_state", |b| {
        b.iter(|| {
            variance
                .release_from_state(black_box(&moments), &mut rng)
                .unwrap()
                .variance
        })
    });
    let bounds = ApproxBounds::new(1, Neighbouring::AddRemove, 1.0).unwrap();
    let mut histogram = bounds.state();
    values.iter().for_each(|&v| histogram.add(v));
    group.bench_function("ApproxBounds::release_from_state_194_bins", |b| {
        b.iter(|| {
            bounds
                .release_from_state(black_box(&histogram), &mut rng)
                .unwrap()
                .upper
        })
    });
    group.finish();
}

criterion_group!(benches, variance_state, bounds_state, release);
criterion_main!(benches);
