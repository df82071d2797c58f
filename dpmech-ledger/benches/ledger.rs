//! The cost of one durable charge: the in-memory accountant, the embedded ledger (SQLite,
//! WAL, fsync on every commit) and PostgreSQL on loopback (a throw-away server started
//! here), beside a naive float Laplace draw as the baseline. Criterion reports the
//! median; a plain timed loop of 1000 charges per store prints p50 and p99.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use dpmech::{Accountant, PrivacyLoss};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A budget no bench exhausts, and the charge each iteration makes.
fn accountant() -> Accountant {
    Accountant::pure(1e9).unwrap()
}

fn charge(acc: &Accountant) {
    acc.spend(PrivacyLoss::Pure { epsilon: 1e-3 }).unwrap();
}

/// The naive float Laplace sample (inverse CDF): the baseline of the crate's benches.
fn naive_laplace(rng: &mut ChaCha20Rng, scale: f64) -> f64 {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
    -scale * u.signum() * (1.0 - 2.0 * u.abs()).ln()
}

/// p50 and p99 of `n` timed charges, printed.
fn percentiles(name: &str, acc: &Accountant, n: usize) {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            charge(acc);
            t.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "{name}: p50 {:?}, p99 {:?} over {n} charges",
        times[n / 2],
        times[n * 99 / 100]
    );
}

fn bench(c: &mut Criterion) {
    let scratch = common::Scratch::new("bench");
    let memory = accountant();
    let embedded =
        dpmech_ledger::embedded(scratch.path("bench.sqlite"), "bench", "bench", accountant()).unwrap();
    let server = common::PgServer::start();
    let pg = server
        .as_ref()
        .map(|s| dpmech_ledger::postgres(&s.conninfo(), "bench", "bench", accountant()).unwrap());

    let mut group = c.benchmark_group("durable_charge");
    group.sample_size(30).measurement_time(Duration::from_secs(5));
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    group.bench_function("naive_float_laplace", |b| {
        b.iter(|| naive_laplace(&mut rng, black_box(1.0)))
    });
    group.bench_function("in_memory", |b| b.iter(|| charge(&memory)));
    group.bench_function("embedded_sqlite_fsync", |b| b.iter(|| charge(&embedded)));
    if let Some(pg) = &pg {
        group.bench_function("postgres_loopback", |b| b.iter(|| charge(pg)));
    }
    group.finish();

    percentiles("in_memory", &memory, 1000);
    percentiles("embedded_sqlite_fsync", &embedded, 1000);
    if let Some(pg) = &pg {
        percentiles("postgres_loopback", pg, 1000);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
