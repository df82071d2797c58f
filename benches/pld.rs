//! Time to answer "what (ε, δ) do 1000 releases cost?" with the certified PLD
//! accountant: build one release's PLD, compose it 1000 times (repeated squaring),
//! and query ε at δ = 1e-5. Throughput is releases composed per second.
//!
//! Run: `cargo bench --bench pld` (single thread).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpmech::composition::pld::{Grid, Pld};
use std::hint::black_box;
use std::time::Duration;

const K: u64 = 1000;

/// A named way to build one release's PLD.
type Case = (&'static str, Box<dyn Fn() -> Pld>);

fn answer(build: impl Fn() -> Pld) -> f64 {
    build().self_compose(K).unwrap().epsilon_for_delta(1e-5).unwrap()
}

fn thousand_releases(c: &mut Criterion) {
    let mut group = c.benchmark_group("pld_1000_releases");
    group.throughput(Throughput::Elements(K));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(5));
    let coarse = Grid::new(1.0 / 64.0).unwrap();
    let cases: [Case; 6] = [
        (
            "laplace_eps1_default_grid",
            Box::new(|| Pld::laplace(1.0, Grid::default()).unwrap()),
        ),
        (
            "laplace_eps1_step_1/64",
            Box::new(move || Pld::laplace(1.0, coarse).unwrap()),
        ),
        (
            "gaussian_sigma_sqrt1000_default_grid",
            Box::new(|| Pld::gaussian((K as f64).sqrt(), 1.0, Grid::default()).unwrap()),
        ),
        (
            "gaussian_sigma_sqrt1000_step_1e-3",
            Box::new(|| Pld::gaussian((K as f64).sqrt(), 1.0, Grid::new(1e-3).unwrap()).unwrap()),
        ),
        (
            "subsampled_gaussian_q0.01_sigma1_default_grid",
            Box::new(|| Pld::poisson_subsampled_gaussian(1.0, 1.0, 0.01, Grid::default()).unwrap()),
        ),
        (
            "subsampled_gaussian_q0.01_sigma1_step_1e-4",
            Box::new(|| Pld::poisson_subsampled_gaussian(1.0, 1.0, 0.01, Grid::new(1e-4).unwrap()).unwrap()),
        ),
    ];
    for (name, build) in &cases {
        let all = build().self_compose(K).unwrap();
        println!(
            "{name}: ε(1e-5) = {:.5}, ε(1e-9) = {:.5}",
            all.epsilon_for_delta(1e-5).unwrap(),
            all.epsilon_for_delta(1e-9).unwrap()
        );
        group.bench_function(*name, |b| b.iter(|| black_box(answer(build))));
    }
    group.finish();
}

/// Issue 32: 1000 × Laplace(b = 10) answered at small δ (PLD and closed forms, which
/// bound won is printed), the RDP accountant on DP-SGD's setting, and an online session
/// of 100 charges under the Rényi filter.
fn small_delta_rdp_and_online(c: &mut Criterion) {
    use dpmech::composition::online::{OnlineAccountant, Release};
    use dpmech::composition::rdp::RdpCurve;
    let mut group = c.benchmark_group("accountant_2");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    let certified = |delta: f64| {
        Pld::laplace(0.1, Grid::default())
            .unwrap()
            .self_compose(K)
            .unwrap()
            .epsilon_certified(delta)
            .unwrap()
    };
    for delta in [1e-6, 1e-9, 1e-12] {
        let a = certified(delta);
        println!(
            "1000 × Laplace(b = 10), δ = {delta:e}: ε = {:.4} ({})",
            a.epsilon, a.bound
        );
        group.bench_function(format!("laplace_b10_1000_certified_delta_{delta:e}"), |b| {
            b.iter(|| black_box(certified(delta)))
        });
    }
    let rdp = || {
        RdpCurve::poisson_subsampled_gaussian(1.0, 1.0, 0.01)
            .unwrap()
            .repeat(K)
            .unwrap()
            .epsilon(1e-5)
            .unwrap()
    };
    println!("RDP, q = 0.01, σ = 1, 1000 steps, δ = 1e-5: ε = {:.4}", rdp());
    group.bench_function("rdp_subsampled_gaussian_1000_steps", |b| {
        b.iter(|| black_box(rdp()))
    });
    let session = || {
        let acc = OnlineAccountant::renyi_filter(3.0, 1e-6).unwrap();
        let release = Release::laplace(0.05).unwrap();
        (0..100).filter(|_| acc.spend(&release).is_ok()).count()
    };
    println!(
        "Rényi filter (3, 1e-6): {} of 100 Laplace(0.05) charges accepted",
        session()
    );
    group.bench_function("online_filter_100_laplace_charges", |b| {
        b.iter(|| black_box(session()))
    });
    group.finish();
}

criterion_group!(benches, thousand_releases, small_delta_rdp_and_online);
criterion_main!(benches);
