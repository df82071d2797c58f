//! Noisy averages (after Li, Lyu, Su & Yang 2016, *Differential Privacy: From Theory to
//! Practice*): the private mean of 1000 values in [0, 100] with Algorithm 1
//! (noisy sum / noisy count), Algorithm 3 (clamped noisy sum over the count, private
//! only when the count is public: substitute-one neighbours) and Algorithm 4
//! (normalised sum), mean absolute error against ε, as a table and an SVG plot.
//! Algorithm 2 is not private and is not offered (see `dpmech::statistics::MeanMethod`).
//!
//! Run: `cargo run --release --example noisy_average`

#[path = "support/svg.rs"]
mod svg;

use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{MeanMethod, mean};
use dpmech::{Accountant, DefaultRng};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Public bounds [0, 100]; the data (not noise) come from a seeded generator.
    let mut data_rng = ChaCha20Rng::seed_from_u64(4);
    let values: Vec<f64> = (0..1000)
        .map(|_| 30.0 + (data_rng.next_u32() % 4000) as f64 / 100.0)
        .collect();
    let truth = values.iter().sum::<f64>() / values.len() as f64;
    // A sandbox budget for the simulation, under substitution so that Algorithm 3
    // (stated for substitution) can be charged next to Algorithms 1 and 4 (stated for
    // add/remove, which count double there).
    let accountant = Accountant::pure(1e9)?.with_relation(Neighbouring::Substitute);
    let mut rng = DefaultRng::from_os()?;
    let trials = 400;
    let epsilons: Vec<f64> = (0..13).map(|i| 10f64.powf(-2.0 + i as f64 / 4.0)).collect();
    println!(
        "private mean of {} values in [0, 100] (true mean {truth:.3}), {trials} trials per ε",
        values.len()
    );
    println!(
        "{:>8} {:>16} {:>16} {:>16}",
        "ε", "MAE Algorithm 1", "MAE Algorithm 3", "MAE Algorithm 4"
    );
    let methods = [
        MeanMethod::NoisySumOverNoisyCount,
        MeanMethod::ClampedSumOverPublicCount,
        MeanMethod::Normalised,
    ];
    let names = [
        "Algorithm 1 (add/remove)",
        "Algorithm 3 (substitution)",
        "Algorithm 4 (add/remove)",
    ];
    let mut curves: Vec<svg::Series> = names
        .iter()
        .map(|name| svg::Series {
            name: name.to_string(),
            points: vec![],
        })
        .collect();
    for &epsilon in &epsilons {
        let mut errors = [0.0; 3];
        for (i, method) in methods.into_iter().enumerate() {
            for _ in 0..trials {
                errors[i] += (mean(&accountant, &values, (0.0, 100.0), method, epsilon, &mut rng)?.value
                    - truth)
                    .abs();
            }
            errors[i] /= trials as f64;
            curves[i].points.push((epsilon, errors[i]));
        }
        println!(
            "{epsilon:>8.4} {:>16.4} {:>16.4} {:>16.4}",
            errors[0], errors[1], errors[2]
        );
    }
    let path = svg::line_plot(
        "noisy_average.svg",
        "Private mean of 1000 values in [0, 100]: mean absolute error",
        ("ε (log scale)", true),
        ("mean absolute error (log scale)", true),
        &curves,
    )?;
    println!("plot written to {}", path.display());
    Ok(())
}
