//! An analyst with no known range: private bounds first, then the variance, standard
//! deviation and mean clamped to them, then how many people (not rows) visited each day —
//! each beside the truth it estimates, all charged to one budget.
//!
//! Run: `cargo run --release --example spread`

use dpmech::composition::Charge;
use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{UnitCount, approx_bounds, variance};
use dpmech::{Accountant, DefaultRng};

/// A deterministic log-normal-like sample: visit durations in seconds, plus junk.
fn durations(n: usize) -> Vec<f64> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut values: Vec<f64> = (0..n)
        .map(|_| {
            // Box–Muller: e^(5 + 0.9·N(0, 1)) seconds, median ≈ 148 s.
            let (u, v) = (uniform(), uniform());
            let normal = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
            (5.0 + 0.9 * normal).exp()
        })
        .collect();
    values.extend([f64::NAN, f64::INFINITY, -1.0, 1e12]); // records never cause an error
    values
}

/// Population variance and mean of `values` clamped to `[lo, hi]` (NaN → the midpoint).
fn clamped_moments(values: &[f64], lo: f64, hi: f64) -> (f64, f64) {
    let read: Vec<f64> = values
        .iter()
        .map(|&v| {
            if v.is_nan() {
                (lo + hi) / 2.0
            } else {
                v.clamp(lo, hi)
            }
        })
        .collect();
    let n = read.len() as f64;
    let mean = read.iter().sum::<f64>() / n;
    (read.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n, mean)
}

fn main() -> Result<(), dpmech::Error> {
    let accountant = Accountant::pure(1.0)?;
    let mut rng = DefaultRng::from_os()?;
    let visits = durations(100_000);

    // 1. Bounds, at ε = 0.2: a noisy histogram over powers of two.
    let found = approx_bounds(&accountant, &visits, 1, Neighbouring::AddRemove, 0.2, &mut rng)?.value;
    let finite: Vec<f64> = visits.iter().copied().filter(|v| v.is_finite()).collect();
    let (min, max) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let outside = finite
        .iter()
        .filter(|&&v| v < found.lower || v > found.upper)
        .count();
    println!(
        "bounds (ε = 0.2): [{}, {}]   (data: [{min:.2}, {max:.3e}])",
        found.lower, found.upper
    );
    println!(
        "  records outside the bounds: {outside} of {} ({:.3} %), clamped by the next releases",
        finite.len(),
        100.0 * outside as f64 / finite.len() as f64
    );

    // 2. Variance, standard deviation and mean within them, at ε = 0.6 (0.2 each part).
    let bounds = found.to_bounds();
    let spread = variance(
        &accountant,
        &visits,
        bounds,
        1,
        Neighbouring::AddRemove,
        0.6,
        &mut rng,
    )?
    .value;
    let (truth, mean) = clamped_moments(&visits, found.lower, found.upper);
    let (var_lo, var_hi) = spread.variance_interval(0.05)?;
    let (sd_lo, sd_hi) = spread.std_dev_interval(0.05)?;
    println!(
        "variance (ε = 0.6): {:.1} s², 95 % interval [{var_lo:.1}, {var_hi:.1}]   (clamped truth {truth:.1})",
        spread.variance
    );
    println!(
        "std dev:            {:.2} s, 95 % interval [{sd_lo:.2}, {sd_hi:.2}]   (clamped truth {:.2})",
        spread.std_dev,
        truth.sqrt()
    );
    println!(
        "mean:               {:.2} s   (clamped truth {mean:.2})",
        spread.mean
    );

    // 3. People per day, at ε = 0.19 (what is left of 1, after rounding up what was spent): each person counted once in at most 3 of their days.
    let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    let pairs: Vec<(u32, &str)> = (0..20_000u32)
        .flat_map(|person| {
            let visits = 1 + (person * 7919) % 6; // 1 to 6 visits each
            (0..visits).map(move |k| (person, days[((person + 3 * k) % 7) as usize]))
        })
        .collect();
    let per_day = UnitCount::pure(3, Neighbouring::AddRemove, 0.19)?;
    // Charged first; `release_groups` bounds each person to 3 of their days by a keyed
    // random choice (drawn from `rng`), then adds the noise.
    accountant.spend(Charge::new(per_day.privacy_loss()).labelled("people per day"))?;
    let noisy = per_day.release_groups(&pairs, &days, &mut rng);
    let width = per_day.confidence_half_width(0.05)?;
    println!("people per day (ε = 0.19, L0 = 3, ±{width} at 95 %):");
    let (raw, expected) = per_day_counts(&pairs, &days, 3);
    for (i, day) in days.iter().enumerate() {
        println!(
            "  {day}: {:>6}   (bounded truth about {:>8.1}, people who visited {:>6})",
            noisy[i], expected[i], raw[i]
        );
    }
    println!(
        "  (a person with d > 3 days keeps each with probability 3/d, a keyed random choice as the\n   \
         SQL crate's: every day loses the same share of its busy visitors, early days are not favoured)"
    );
    println!("spent: {:?}", accountant.spent());
    Ok(())
}

/// Distinct people per day, and the expected count after bounding each person to
/// `max_groups` of their `d` days by a uniformly random choice (each day kept with
/// probability `min(1, max_groups/d)`), as `UnitCount::release_groups` does.
fn per_day_counts(pairs: &[(u32, &str)], days: &[&str], max_groups: u64) -> (Vec<u64>, Vec<f64>) {
    let mut days_of: std::collections::BTreeMap<u32, std::collections::BTreeSet<usize>> = Default::default();
    for (person, day) in pairs {
        if let Some(i) = days.iter().position(|d| d == day) {
            days_of.entry(*person).or_default().insert(i);
        }
    }
    let mut counts = vec![0u64; days.len()];
    let mut expected = vec![0f64; days.len()];
    for kept in days_of.values() {
        let share = (max_groups as f64 / kept.len() as f64).min(1.0);
        for &i in kept {
            counts[i] += 1;
            expected[i] += share;
        }
    }
    (counts, expected)
}
