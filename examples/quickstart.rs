//! The README's main example: private count, sum and mean of a small data set, with
//! exact noise and the privacy each release spends.
//!
//! Run: `cargo run --release --example quickstart`

use dpmech::{DefaultRng, Geometric, Laplace, PrivacyLoss};

fn main() -> Result<(), dpmech::Error> {
    // Ages of the people in a (tiny) survey. Public bounds: ages are clamped to [0, 100].
    let ages: [f64; 12] = [
        34.0, 27.0, 45.0, 61.0, 19.0, 38.0, 52.0, 29.0, 73.0, 41.0, 36.0, 58.0,
    ];
    let (lower, upper) = (0.0, 100.0);
    let mut rng = DefaultRng::from_os()?;

    // A count changes by at most 1 when one person is added or removed: Δ = 1.
    let count = Geometric::new(1, 0.5)?;
    let noisy_count = count.release(ages.len() as i64, &mut rng);

    // A sum of values clamped to [0, 100] changes by at most 100: Δ = 100.
    let clamped_sum: f64 = ages.iter().map(|a| a.clamp(lower, upper)).sum();
    let sum = Laplace::new(upper, 0.5)?;
    let noisy_sum = sum.release(clamped_sum, &mut rng)?;

    // The mean as post-processing of the two releases (no extra privacy cost).
    let noisy_mean = (noisy_sum / noisy_count.max(1) as f64).clamp(lower, upper);

    let total = sum_epsilons(&[count.privacy_loss(), sum.privacy_loss()]);
    println!(
        "dpmech quickstart — {} survey answers, add/remove-one neighbours",
        ages.len()
    );
    println!(
        "  count: {noisy_count:>8}        (true {}, geometric noise, scale {:.2})",
        ages.len(),
        count.scale()
    );
    println!(
        "  sum:   {noisy_sum:>11.2}     (true {clamped_sum}, Laplace noise, scale {:.2})",
        sum.scale()
    );
    println!(
        "  mean:  {noisy_mean:>11.2}     (true {:.2}, post-processed)",
        clamped_sum / ages.len() as f64
    );
    // 95% of Laplace noise lies within b·ln(1/0.05) of zero.
    println!(
        "  95% half-width of the sum noise: ±{:.1}",
        sum.scale() * (1.0f64 / 0.05).ln()
    );
    println!("  privacy spent: ε = {total} (sequential composition of two pure-DP releases)");
    println!(
        "  every real output is an exact multiple of 2^{}",
        sum.granularity().log2()
    );
    Ok(())
}

fn sum_epsilons(losses: &[PrivacyLoss]) -> f64 {
    losses.iter().filter_map(PrivacyLoss::epsilon).sum()
}
