//! The geometric mechanism (Ghosh, Roughgarden & Sundararajan 2009) done right, for an
//! integer query.
//!
//! A common mistake samples `sign × geometric`, which puts probability 1 − α on a zero
//! noise instead of (1 − α)/(1 + α), and a simulation that draws both outputs from the
//! same input does not notice. Here: the exact two-sided geometric (discrete Laplace) noise, its
//! empirical pmf next to the exact one, and the privacy-loss ratio between the inputs
//! x = 5 and x′ = 6 — for the correct sampler and for `sign × geometric`.
//!
//! Run: `cargo run --release --example geometric_mechanism`

use dpmech::Geometric;
use dpmech::sampling::{BitSource, OneSidedGeometric, Rational};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use std::collections::HashMap;

const N: usize = 1_000_000;

fn histogram(mut draw: impl FnMut() -> i64) -> HashMap<i64, usize> {
    let mut counts = HashMap::new();
    for _ in 0..N {
        *counts.entry(draw()).or_insert(0) += 1;
    }
    counts
}

fn main() -> Result<(), dpmech::Error> {
    let epsilon: f64 = 1.0;
    let alpha = f64::exp(-epsilon);
    let mechanism = Geometric::new(1, epsilon)?;
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let correct_5 = histogram(|| mechanism.release(5, &mut rng));
    let correct_6 = histogram(|| mechanism.release(6, &mut rng));

    // The wrong sampler: sign × Geometric(1 − α), keeping "−0".
    let magnitude = OneSidedGeometric::new(Rational::new(1, 1)?);
    let mut wrong = |x: i64| {
        let mut bits = BitSource::new(&mut rng);
        let g = magnitude.sample_bits(&mut bits) as i64;
        x + if bits.bit() { -g } else { g }
    };
    let wrong_5 = histogram(|| wrong(5));
    let wrong_6 = histogram(|| wrong(6));

    println!("geometric mechanism, ε = {epsilon}, Δ = 1, α = e^-ε = {alpha:.4}, {N} draws per input");
    println!("exact pmf of the noise: (1-α)/(1+α)·α^|z|");
    println!(
        "{:>3} {:>10} {:>10} | {:>16} {:>16}",
        "z", "exact", "empirical", "ratio M(5)/M(6)", "sign×geom ratio"
    );
    let freq = |h: &HashMap<i64, usize>, y: i64| *h.get(&y).unwrap_or(&0) as f64 / N as f64;
    for z in -4..=4i64 {
        let exact = (1.0 - alpha) / (1.0 + alpha) * alpha.powi(z.abs() as i32);
        let y = 5 + z;
        println!(
            "{z:>3} {exact:>10.5} {:>10.5} | {:>16.4} {:>16.4}",
            freq(&correct_5, y),
            freq(&correct_5, y) / freq(&correct_6, y),
            freq(&wrong_5, y) / freq(&wrong_6, y)
        );
    }
    println!(
        "exact ratios of the correct mechanism are e^±ε = {:.4} / {:.4} (the empirical ones differ by sampling noise);",
        epsilon.exp(),
        (-epsilon).exp()
    );
    println!(
        "the sign × geometric sampler reaches 2/α = 2e^ε = {:.4} at output 5 (noise 0): it is not ε-DP.",
        2.0 * epsilon.exp()
    );
    Ok(())
}
