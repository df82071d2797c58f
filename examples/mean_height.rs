//! The mean height of 500 people who each report their height with Laplace
//! noise (local model), error against ε for several sensitivities — with the guarantee
//! each one actually gives:
//!
//! * `E[Δf]`, `E[Δf] + σ`, `E[Δf] + 2σ` ("typical" sensitivities): **no** DP
//!   guarantee at all, since heights are unbounded (Rubinstein & Aldà 2017 explain why
//!   an estimated sensitivity gives at most random DP);
//! * the sensitivity sampler's `Δ̂` (Rubinstein & Aldà 2017): (ε, γ)-random DP;
//! * heights clamped to the public range [140, 210] cm, `Δ = 70`: pure ε-DP.
//!
//! Run: `cargo run --release --example mean_height` (plot under `target/plots/`).

#[path = "support/svg.rs"]
mod svg;

use dpmech::sensitivity::{Norm, SensitivitySampler};
use dpmech::{DefaultRng, Laplace};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

const MU_M: f64 = 178.0;
const SIGMA_M: f64 = 7.0;
const MU_F: f64 = 162.0;
const SIGMA_F: f64 = 6.5;

/// A height from ½N(178, 7²) + ½N(162, 6.5²) (data, not noise: Box–Muller is fine).
fn height(rng: &mut ChaCha20Rng) -> f64 {
    let unit = |r: &mut ChaCha20Rng| ((r.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (mu, sigma) = if rng.next_u64() & 1 == 1 {
        (MU_M, SIGMA_M)
    } else {
        (MU_F, SIGMA_F)
    };
    mu + sigma * (-2.0 * unit(rng).ln()).sqrt() * (2.0 * std::f64::consts::PI * unit(rng)).cos()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut data = ChaCha20Rng::seed_from_u64(500);
    let heights: Vec<f64> = (0..500).map(|_| height(&mut data)).collect();
    let true_mean = heights.iter().sum::<f64>() / heights.len() as f64;

    // The closed form of E[Δf] = E|X − X′| and the mixture's σ.
    let m = (MU_M - MU_F) / (2.0 * (SIGMA_M.powi(2) + SIGMA_F.powi(2))).sqrt();
    let erf_m = 1.0 - erfc_series(m);
    let expected = (SIGMA_M
        + SIGMA_F
        + (2.0 * (SIGMA_M.powi(2) + SIGMA_F.powi(2))).sqrt()
            * ((-m * m).exp() + std::f64::consts::PI.sqrt() * m * erf_m))
        / (2.0 * std::f64::consts::PI.sqrt());
    let sigma = (0.5 * (SIGMA_M.powi(2) + SIGMA_F.powi(2)) + 0.25 * (MU_M - MU_F).powi(2)).sqrt();
    let sampled = SensitivitySampler::new(20_000, 0.05, Norm::L1)?.sample(
        &mut data,
        |r| (height(r), height(r)),
        |x| [*x],
    )?;

    let mut clamped_heights = heights.clone();
    clamped_heights
        .iter_mut()
        .for_each(|h| *h = h.clamp(140.0, 210.0));
    let calibrations: Vec<(String, f64, &[f64])> = vec![
        (
            format!("E[Δf] = {expected:.2} (no guarantee)"),
            expected,
            &heights,
        ),
        (
            format!("E[Δf]+σ = {:.2} (no guarantee)", expected + sigma),
            expected + sigma,
            &heights,
        ),
        (
            format!("E[Δf]+2σ = {:.2} (no guarantee)", expected + 2.0 * sigma),
            expected + 2.0 * sigma,
            &heights,
        ),
        (
            format!("sampled Δ̂ = {:.2} (ε, 0.05)-random DP", sampled.sensitivity),
            sampled.sensitivity,
            &heights,
        ),
        (
            "clamped [140, 210]: Δ = 70, pure ε-DP".to_string(),
            70.0,
            &clamped_heights,
        ),
    ];

    let mut rng = DefaultRng::from_os()?;
    let epsilons: Vec<f64> = (0..12).map(|i| 10f64.powf(-1.5 + i as f64 * 0.2)).collect();
    let trials = 40;
    println!("mean height of 500 people (true mean {true_mean:.2} cm), each reports height + Lap(Δ/ε)");
    println!("mean absolute error (cm) over {trials} trials:");
    print!("{:>8}", "ε");
    for i in 0..calibrations.len() {
        print!(" {:>10}", format!("Δ#{}", i + 1));
    }
    println!();
    let mut curves: Vec<svg::Series> = calibrations
        .iter()
        .map(|(name, _, _)| svg::Series {
            name: name.clone(),
            points: vec![],
        })
        .collect();
    for &epsilon in &epsilons {
        print!("{epsilon:>8.3}");
        for (i, (_, sensitivity, reports)) in calibrations.iter().enumerate() {
            let mechanism = Laplace::new(*sensitivity, epsilon)?;
            let mut error = 0.0;
            for _ in 0..trials {
                let noisy: f64 = reports
                    .iter()
                    .map(|&h| mechanism.release(h, &mut rng))
                    .sum::<Result<f64, _>>()?;
                error += (noisy / reports.len() as f64 - true_mean).abs();
            }
            error /= trials as f64;
            curves[i].points.push((epsilon, error));
            print!(" {error:>10.3}");
        }
        println!();
    }
    for (i, (name, _, _)) in calibrations.iter().enumerate() {
        println!("  Δ#{}: {name}", i + 1);
    }
    let path = svg::line_plot(
        "mean_height.svg",
        "Mean height of 500 people, local Laplace noise",
        ("ε (log scale)", true),
        ("mean absolute error, cm (log scale)", true),
        &curves,
    )?;
    println!("plot written to {}", path.display());
    Ok(())
}

/// erfc by its continued fraction / series (only for the closed form above).
fn erfc_series(x: f64) -> f64 {
    // erf(x) = 2/√π Σ (−1)ⁿ x^(2n+1) / (n! (2n+1)), enough terms for |x| ≤ 3.
    let mut sum = 0.0;
    let mut term = x;
    for n in 0..60 {
        sum += term / (2 * n + 1) as f64;
        term *= -x * x / (n + 1) as f64;
    }
    1.0 - 2.0 / std::f64::consts::PI.sqrt() * sum
}
