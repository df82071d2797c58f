//! The README's main example: private statistics of a 10 000-person survey, each
//! shown beside the true value with a 95 % interval, within one privacy budget.
//!
//! Run: `cargo run --release --example quickstart`

use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{Bounds, MeanMethod, count, histogram, mean, sum};
use dpmech::{Accountant, DefaultRng};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

/// One survey answer: age in years, weekly hours of exercise (NaN: no answer).
struct Answer {
    age: f64,
    exercise_hours: f64,
}

/// 10 000 made-up answers, the same every run (seed 2024): ages 18–90, exercise hours
/// 0–20 with a few implausible outliers and 3 % unanswered.
fn survey() -> Vec<Answer> {
    let mut rng = ChaCha20Rng::seed_from_u64(2024);
    (0..10_000)
        .map(|_| {
            let age = 18.0 + (rng.next_u32() % 73) as f64;
            let r = rng.next_u32() % 1000;
            let exercise_hours = match r {
                0..30 => f64::NAN,
                30..40 => 80.0 + (r % 7) as f64 * 10.0, // implausible: clamped to 40
                _ => (rng.next_u32() % 41) as f64 / 2.0,
            };
            Answer { age, exercise_hours }
        })
        .collect()
}

const AGE_GROUPS: [(&str, f64, f64); 4] = [
    ("18–29", 18.0, 30.0),
    ("30–44", 30.0, 45.0),
    ("45–64", 45.0, 65.0),
    ("65+", 65.0, 200.0),
];

fn main() -> Result<(), dpmech::Error> {
    let people = survey();
    let ages: Vec<f64> = people.iter().map(|p| p.age).collect();
    let hours: Vec<f64> = people.iter().map(|p| p.exercise_hours).collect();

    // The whole analysis may spend ε = 1; each release below is charged before it runs.
    let accountant = Accountant::pure(1.0)?;
    let mut rng = DefaultRng::from_os()?; // fresh noise every run
    // Exercise: a missing answer counts as 0 h, anything above 40 h as 40 h.
    let exercise_bounds = Bounds::new(0.0, 40.0)?.impute_nan(0.0)?;

    let n = count(&accountant, people.len() as u64, 0.125, &mut rng)?;
    let total = sum(
        &accountant,
        &hours,
        exercise_bounds,
        Neighbouring::AddRemove,
        0.375,
        &mut rng,
    )?;
    let mean_age = mean(
        &accountant,
        &ages,
        (18.0, 100.0),
        MeanMethod::Normalised,
        0.25,
        &mut rng,
    )?;
    let group_counts: Vec<u64> = AGE_GROUPS
        .iter()
        .map(|&(_, lo, hi)| ages.iter().filter(|&&a| a >= lo && a < hi).count() as u64)
        .collect();
    let groups = histogram(
        &accountant,
        &group_counts,
        Neighbouring::AddRemove,
        0.25,
        &mut rng,
    )?;

    let beta = 0.05; // 95 % intervals
    let true_hours: f64 = hours.iter().map(|&h| exercise_bounds.read(h)).sum();
    println!(
        "dpmech quickstart: a survey of {} people (made up, fixed seed)",
        people.len()
    );
    println!("Neighbouring datasets differ by one person (added or removed).\n");
    println!(
        "  {:<32} {:>9} {:>18} {:>9}",
        "statistic", "private", "95% interval ±", "true"
    );
    let (w_n, w_total) = (
        n.confidence_half_width(beta).unwrap()?,
        total.confidence_half_width(beta).unwrap()?,
    );
    println!(
        "  {:<32} {:>9} {:>18.0} {:>9}",
        "people",
        n.value,
        w_n,
        people.len()
    );
    println!(
        "  {:<32} {:>9.0} {:>18.0} {:>9.0}",
        "exercise, total hours per week", total.value, w_total, true_hours
    );
    // Post-processing is free: the ratio of two releases, with an interval from both
    // (each holds with probability 95 %, so both with at least 90 %).
    let average = total.value / n.value as f64;
    let low = (total.value - w_total) / (n.value as f64 + w_n);
    let high = (total.value + w_total) / (n.value as f64 - w_n);
    println!(
        "  {:<32} {:>9.3} {:>18} {:>9.3}",
        "exercise, hours per person",
        average,
        format!("[{low:.3}, {high:.3}]*"),
        true_hours / people.len() as f64
    );
    println!(
        "  {:<32} {:>9.2} {:>18} {:>9.2}",
        "mean age (Algorithm 4)",
        mean_age.value,
        "",
        ages.iter().sum::<f64>() / ages.len() as f64
    );
    let w_groups = groups.confidence_half_width(beta).unwrap()?;
    for ((label, _, _), (private, truth)) in AGE_GROUPS.iter().zip(groups.value.iter().zip(&group_counts)) {
        println!(
            "  {:<32} {:>9} {:>18.0} {:>9}",
            format!("aged {label}"),
            private,
            w_groups,
            truth
        );
    }
    println!("  * an interval from the two releases above it (holds with ≥ 90 %).\n");

    println!(
        "Privacy: the whole analysis is {} — spent {}, left {}.",
        accountant.budget(),
        accountant.spent(),
        accountant.remaining()
    );
    for entry in accountant.ledger() {
        println!(
            "  {:<10} {}",
            entry.label.as_deref().unwrap_or("-"),
            entry.charged
        );
    }
    println!("Run it again: the noise is fresh each time, the truth and the guarantee are not.");
    Ok(())
}
