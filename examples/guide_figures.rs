//! The pictures of the analysts' guide (`docs/guide/`), from real releases of the core
//! crate on generated data, with a seeded ChaCha20 generator (so a rerun draws the same
//! figures; the noise is the crate's exact noise all the same):
//!
//! * `error_vs_epsilon_{count,sum,mean,median}.svg`: the mean relative error of a
//!   private count, sum, mean and median of n log-normal visit durations (clamped to
//!   [0, 3600] s, one record per person) against ε, for n = 100, 1 000 and 10 000;
//! * `bounds_dropped.svg` and `bounds_error_eps1.svg`, `bounds_error_eps01.svg`: for 30
//!   per-day counts of visits by 10 000 users, the share of rows that contribution
//!   bounding drops, and the error of a released count against the raw count, against
//!   the bounds L0 (days per user) and L∞ (visits per user and day) at ε = 1 and 0.1;
//! * `privacy_loss_curve.svg`: the privacy-loss curve δ(ε) of composed plans from the
//!   certified PLD accountant, beside the optimal composition of generic ε₀-DP steps.
//!
//! Each figure's numbers are also printed. Run from the repository root:
//!
//! ```text
//! cargo run --release --example guide_figures     # writes docs/guide/figures/*.svg
//! ```
//!
//! The bounding here is the rule of `dpmech-datafusion`'s `dp_count` written out on
//! plain vectors: each user keeps `L0` of their days, chosen uniformly at random, and
//! each kept day counts `min(visits, L∞)`; the count's noise is discrete Laplace of scale
//! `L0·L∞/ε` (the same scale as `dp_count(ε)`).

#[path = "support/svg.rs"]
mod svg;

use std::path::PathBuf;

use dpmech::composition::optimal;
use dpmech::composition::pld::{Grid, Pld};
use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{
    Bounds, ClampedSum, ContributionBoundsSuggester, Mean, MeanMethod, Quantile, QuantileGrid,
};
use dpmech::{Accountant, Geometric};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

/// Releases per point of the error curves.
const TRIALS: usize = 200;
/// The ε of the error curves.
const EPSILONS: [f64; 10] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0];
/// Data sizes of the error curves.
const SIZES: [usize; 3] = [100, 1_000, 10_000];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/guide/figures");
    let mut data = ChaCha20Rng::seed_from_u64(41);
    let mut noise = ChaCha20Rng::seed_from_u64(4141);
    error_vs_epsilon(&dir, &mut data, &mut noise)?;
    contribution_bounds(&dir, &mut data, &mut noise)?;
    privacy_loss_curve(&dir)?;
    println!("figures written to {}", dir.display());
    Ok(())
}

/// A uniform in (0, 1) from 53 random bits (data, not noise).
fn unit(rng: &mut ChaCha20Rng) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A log-normal draw with the given median and log-scale σ (Box–Muller; data, not noise).
fn log_normal(rng: &mut ChaCha20Rng, median: f64, sigma: f64) -> f64 {
    let z = (-2.0 * unit(rng).ln()).sqrt() * (2.0 * std::f64::consts::PI * unit(rng)).cos();
    median * (sigma * z).exp()
}

/// The median of `values` (sorted in place).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Error against ε of count, sum, mean and median at three sizes.
fn error_vs_epsilon(
    dir: &std::path::Path,
    data: &mut ChaCha20Rng,
    noise: &mut ChaCha20Rng,
) -> Result<(), Box<dyn std::error::Error>> {
    let bounds = Bounds::new(0.0, 3600.0)?;
    let grid = QuantileGrid::new(0.0, 3600.0, 1024)?;
    let names = ["count", "sum", "mean", "median"];
    let mut curves: Vec<Vec<svg::Series>> = names.iter().map(|_| vec![]).collect();
    println!(
        "Mean relative error (%) over {TRIALS} releases, durations log-normal (median 150 s) in [0, 3600] s:"
    );
    for &n in &SIZES {
        let records: Vec<f64> = (0..n).map(|_| log_normal(data, 150.0, 1.2)).collect();
        let clamped: Vec<f64> = records.iter().map(|&x| bounds.read(x)).collect();
        let true_sum: f64 = clamped.iter().sum();
        let true_mean = true_sum / n as f64;
        let mut sorted = clamped.clone();
        let true_median = median(&mut sorted);
        let truths = [n as f64, true_sum, true_mean, true_median];
        for series in curves.iter_mut() {
            series.push(svg::Series {
                name: format!("n = {}", thousands(n)),
                points: vec![],
            });
        }
        for &epsilon in &EPSILONS {
            let count = Geometric::new(1, epsilon)?;
            let sum = ClampedSum::new(bounds, Neighbouring::AddRemove, epsilon)?;
            let mean = Mean::new(bounds, MeanMethod::NoisySumOverNoisyCount, epsilon)?;
            let quantile = Quantile::new(&grid, 0.5, epsilon, 1)?;
            let counts = grid.counts(&records);
            let mut errors: Vec<Vec<f64>> = names.iter().map(|_| Vec::with_capacity(TRIALS)).collect();
            for _ in 0..TRIALS {
                let released = [
                    count.release(n as i64, noise) as f64,
                    sum.release(&records, noise),
                    mean.release(&records, noise),
                    quantile.release_counts(counts.as_slice(), noise)?,
                ];
                for (i, value) in released.iter().enumerate() {
                    errors[i].push((value - truths[i]).abs() / truths[i] * 100.0);
                }
            }
            print!("  n = {n:>6}, ε = {epsilon:>5}:");
            for (i, e) in errors.iter().enumerate() {
                let m = e.iter().sum::<f64>() / e.len() as f64;
                print!(" {} {m:.3}", names[i]);
                if let Some(series) = curves[i].last_mut() {
                    series.points.push((epsilon, m));
                }
            }
            println!();
        }
    }
    let titles = [
        "Private count: error against ε",
        "Private sum of durations in [0, 3600] s: error against ε",
        "Private mean duration (noisy sum / noisy count): error against ε",
        "Private median duration (1024 bins of [0, 3600] s): error against ε",
    ];
    for (i, name) in names.iter().enumerate() {
        svg::line_plot_in(
            dir,
            &format!("error_vs_epsilon_{name}.svg"),
            titles[i],
            ("ε (log scale)", true),
            ("mean relative error, % (log scale)", true),
            &curves[i],
        )?;
    }
    Ok(())
}

/// One user's visits: the number of visits on each of their active days.
struct User {
    days: Vec<(usize, u64)>,
}

/// Rows dropped and error against the contribution bounds.
fn contribution_bounds(
    dir: &std::path::Path,
    data: &mut ChaCha20Rng,
    noise: &mut ChaCha20Rng,
) -> Result<(), Box<dyn std::error::Error>> {
    const DAYS: usize = 30;
    const USERS: usize = 10_000;
    const REPEATS: usize = 20;
    // Active days per user: log-normal around 3, at most 30; visits per active day:
    // log-normal around 1.5, at most 50 (a few heavy users, as in real logs).
    let users: Vec<User> = (0..USERS)
        .map(|_| {
            let active = (log_normal(data, 3.0, 0.9).ceil() as usize).clamp(1, DAYS);
            let mut all: Vec<usize> = (0..DAYS).collect();
            for i in 0..active {
                let j = i + (data.next_u64() % (DAYS - i) as u64) as usize;
                all.swap(i, j);
            }
            let days = all[..active]
                .iter()
                .map(|&d| (d, (log_normal(data, 1.5, 0.8).ceil() as u64).clamp(1, 50)))
                .collect();
            User { days }
        })
        .collect();
    let mut raw = [0u64; DAYS];
    for user in &users {
        for &(d, v) in &user.days {
            raw[d] += v;
        }
    }
    let total: u64 = raw.iter().sum();
    println!(
        "\n{USERS} users, {total} visits over {DAYS} days (raw per-day mean {:.0}):",
        total as f64 / DAYS as f64
    );

    // What the suggester proposes on the same data (ε = 0.5, 0.9-quantiles).
    let suggester = ContributionBoundsSuggester::new(30, 50)?.quantile(0.9)?;
    let per_unit: Vec<Vec<u64>> = users
        .iter()
        .map(|u| u.days.iter().map(|&(_, v)| v).collect())
        .collect();
    let budget = Accountant::pure(0.5)?;
    let suggested = suggester.release(&budget, &per_unit, 0.5, noise)?;
    println!(
        "  suggested bounds (ε = 0.5, 0.9-quantiles): L0 = {}, L∞ = {}",
        suggested.l0, suggested.linf
    );

    let l0s = [1u64, 2, 3, 4, 6, 8, 12, 16, 24, 30];
    let linfs = [1u64, 2, 4, 8];
    let epsilons = [1.0, 0.1];
    let mut dropped_curves = vec![];
    let mut error_curves: Vec<Vec<svg::Series>> = epsilons.iter().map(|_| vec![]).collect();
    for &linf in &linfs {
        let mut dropped = svg::Series {
            name: format!("L∞ = {linf} visit{} per day", if linf == 1 { "" } else { "s" }),
            points: vec![],
        };
        let mut errors: Vec<svg::Series> = epsilons
            .iter()
            .map(|_| svg::Series {
                name: format!("L∞ = {linf} visit{} per day", if linf == 1 { "" } else { "s" }),
                points: vec![],
            })
            .collect();
        for &l0 in &l0s {
            let mechanisms = epsilons
                .iter()
                .map(|&e| Geometric::new(l0 * linf, e))
                .collect::<Result<Vec<_>, _>>()?;
            let (mut kept_total, mut abs_error) = (0u64, vec![0.0; epsilons.len()]);
            for _ in 0..REPEATS {
                // Bounding: each user keeps L0 days uniformly at random (a fresh order per
                // release, as a fresh release key gives), each kept day min(visits, L∞).
                let mut bounded = [0u64; DAYS];
                for user in &users {
                    let mut order: Vec<usize> = (0..user.days.len()).collect();
                    for i in 0..order.len() {
                        let j = i + (data.next_u64() % (order.len() - i) as u64) as usize;
                        order.swap(i, j);
                    }
                    for &k in order.iter().take(l0 as usize) {
                        let (d, v) = user.days[k];
                        bounded[d] += v.min(linf);
                    }
                }
                kept_total += bounded.iter().sum::<u64>();
                let bounded: Vec<i64> = bounded.iter().map(|&c| c as i64).collect();
                for (mechanism, sum) in mechanisms.iter().zip(abs_error.iter_mut()) {
                    *sum += mechanism
                        .release_slice(&bounded, noise)
                        .iter()
                        .zip(&raw)
                        .map(|(&r, &t)| (r as f64 - t as f64).abs())
                        .sum::<f64>();
                }
            }
            let share_dropped = 100.0 * (1.0 - kept_total as f64 / (REPEATS as u64 * total) as f64);
            print!(
                "  L0 = {l0:>2}, L∞ = {linf}: drops {share_dropped:5.1} % of rows; mean |DP count − raw count| per day"
            );
            for ((series, sum), epsilon) in errors.iter_mut().zip(&abs_error).zip(&epsilons) {
                let mean_error = sum / (REPEATS * DAYS) as f64;
                print!(" {mean_error:7.1} at ε = {epsilon}");
                series.points.push((l0 as f64, mean_error));
            }
            println!(" (noise scale L0·L∞/ε, L0·L∞ = {})", l0 * linf);
            dropped.points.push((l0 as f64, share_dropped));
        }
        dropped_curves.push(dropped);
        for (curves, series) in error_curves.iter_mut().zip(errors) {
            curves.push(series);
        }
    }
    svg::line_plot_in(
        dir,
        "bounds_dropped.svg",
        "Rows that contribution bounding drops (10 000 users, 30 days)",
        ("L0: days kept per user", false),
        ("rows dropped, %", false),
        &dropped_curves,
    )?;
    for ((file, epsilon), curves) in ["bounds_error_eps1.svg", "bounds_error_eps01.svg"]
        .iter()
        .zip(&epsilons)
        .zip(&error_curves)
    {
        svg::line_plot_in(
            dir,
            file,
            &format!("Error of a per-day count against the raw count, ε = {epsilon}"),
            ("L0: days kept per user", false),
            ("mean |released − raw| per day, visits (log scale)", true),
            curves,
        )?;
    }
    Ok(())
}

/// δ(ε) of composed plans, from the certified PLD accountant.
fn privacy_loss_curve(dir: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let laplace = Pld::laplace(0.1, Grid::default())?;
    let laplace_100 = laplace.self_compose(100)?;
    let laplace_10 = laplace.self_compose(10)?;
    // A mixed plan: the 100 Laplace releases and 100 Gaussian ones (σ = 20, Δ₂ = 1).
    let gaussian_100 = Pld::gaussian(20.0, 1.0, Grid::default())?.self_compose(100)?;
    let mixed = laplace_100.compose(&gaussian_100);
    let mut curves = vec![
        svg::Series {
            name: "10 × Laplace ε₀ = 0.1 (PLD)".into(),
            points: vec![],
        },
        svg::Series {
            name: "100 × Laplace ε₀ = 0.1 (PLD)".into(),
            points: vec![],
        },
        svg::Series {
            name: "100 × generic 0.1-DP steps (optimal composition)".into(),
            points: vec![],
        },
        svg::Series {
            name: "100 × Laplace ε₀ = 0.1 + 100 × Gaussian σ = 20 (PLD)".into(),
            points: vec![],
        },
    ];
    println!(
        "\nδ(ε) of composed plans (certified upper bounds; sequential composition: ε = 1 and 10 at δ = 0):"
    );
    for i in 0..=80 {
        let epsilon = 0.1 * i as f64;
        let deltas = [
            laplace_10.delta_for_epsilon(epsilon)?,
            laplace_100.delta_for_epsilon(epsilon)?,
            optimal::delta(100, 0.1, epsilon)?,
            mixed.delta_for_epsilon(epsilon)?,
        ];
        if i % 10 == 0 {
            println!(
                "  ε = {epsilon:.1}: δ = {:.3e} / {:.3e} / {:.3e} / {:.3e}",
                deltas[0], deltas[1], deltas[2], deltas[3]
            );
        }
        for (curve, &delta) in curves.iter_mut().zip(&deltas) {
            // The log axis stops at 10⁻¹²: smaller δ are off the picture.
            if delta >= 1e-12 {
                curve.points.push((epsilon, delta));
            }
        }
    }
    svg::line_plot_in(
        dir,
        "privacy_loss_curve.svg",
        "Privacy-loss curve δ(ε) of composed plans",
        ("ε", false),
        ("δ (log scale)", true),
        &curves,
    )?;
    Ok(())
}

/// `n` with a thin space between groups of three digits (10 000).
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
}
