//! The README's main example: a private count, sum and mean of a small survey, with
//! 95% confidence intervals and the privacy budget they spend.
//!
//! Run: `cargo run --release --example quickstart`

use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{MeanMethod, count, mean, sum};
use dpmech::{Accountant, DefaultRng};

fn main() -> Result<(), dpmech::Error> {
    // Ages in a (tiny) survey; public bounds [0, 100]. Neighbours: add/remove one person.
    let ages = [
        34.0, 27.0, 45.0, 61.0, 19.0, 38.0, 52.0, 29.0, 73.0, 41.0, 36.0, 58.0,
    ];
    let bounds = (0.0, 100.0);
    let accountant = Accountant::pure(2.0)?; // the whole analysis may spend ε = 2
    let mut rng = DefaultRng::from_os()?;

    let n = count(&accountant, ages.len() as u64, 0.5, &mut rng)?;
    let total = sum(&accountant, &ages, bounds, Neighbouring::AddRemove, 0.5, &mut rng)?;
    let average = mean(&accountant, &ages, bounds, MeanMethod::Normalised, 1.0, &mut rng)?;

    let true_sum: f64 = ages.iter().sum();
    println!(
        "dpmech quickstart — {} survey answers, ages in [0, 100], add/remove-one neighbours",
        ages.len()
    );
    println!(
        "  count {:>8}   ± {:<6.1} (95%)   true {}",
        n.value,
        n.confidence_half_width(0.05).unwrap()?,
        ages.len()
    );
    println!(
        "  sum   {:>8.1}   ± {:<6.1} (95%)   true {true_sum}",
        total.value,
        total.confidence_half_width(0.05).unwrap()?
    );
    println!(
        "  mean  {:>8.2}   (Algorithm 4, clamped to the bounds)   true {:.2}",
        average.value,
        true_sum / ages.len() as f64
    );
    println!(
        "  budget: spent {}, remaining {}",
        accountant.spent(),
        accountant.remaining()
    );
    for entry in accountant.ledger() {
        println!(
            "    {:<6} charged {}",
            entry.label.as_deref().unwrap_or("-"),
            entry.charged
        );
    }
    Ok(())
}
