//! The sparse vector technique: find which of many counting queries exceed a
//! threshold, paying privacy only for the few that do.
//!
//! Run: `cargo run --release --example sparse_vector`

use dpmech::mechanisms::svt::sparse_alpha;
use dpmech::{
    AboveThreshold, DefaultRng, Monotonicity, NumericSparse, Sparse, StandardSvt, StreamingMechanism,
};

fn main() -> Result<(), dpmech::Error> {
    let mut rng = DefaultRng::from_os()?;
    println!("1000 counting queries (each changes by at most 1 when one person is added or");
    println!("removed); three of them are 5000, the rest below 50. Which exceed 1000?\n");
    // 1000 counting queries (sensitivity 1 under add/remove one record); three are large.
    let counts: Vec<f64> = (0..1000)
        .map(|i| {
            if [40, 520, 870].contains(&i) {
                5000.0
            } else {
                (i % 50) as f64
            }
        })
        .collect();

    let mut first = AboveThreshold::new(1000.0, 1.0, 0.5)?;
    let answers = first.run(&counts, &mut rng)?;
    println!(
        "AboveThreshold (ε = 0.5): first count above 1000 is query {}",
        answers.len() - 1
    );

    let mut sparse = Sparse::new(1000.0, 1.0, 1.0, 3)?;
    let above: Vec<usize> = sparse
        .run(&counts, &mut rng)?
        .iter()
        .enumerate()
        .filter_map(|(i, a)| a.is_above().then_some(i))
        .collect();
    let alpha = sparse_alpha(1.0, 1.0, None, 3, counts.len(), 0.05)?;
    println!("Sparse (c = 3, ε = 1): above at {above:?}; (α, β) = ({alpha:.0}, 0.05)");

    let mut numeric = NumericSparse::new(1000.0, 1.0, 1.0, 3)?;
    let values: Vec<String> = numeric
        .run(&counts, &mut rng)?
        .iter()
        .enumerate()
        .filter_map(|(i, a)| a.value().map(|v| format!("query {i}: {v:.1}")))
        .collect();
    println!(
        "NumericSparse (c = 3, ε = 1): noisy counts of those above 1000 (true 5000): {}",
        values.join(", ")
    );

    // Per-query thresholds and the optimal budget split, monotone counts.
    let mut standard = StandardSvt::with_optimal_split(0.0, 1.0, 1.0, 3, Monotonicity::Monotone)?;
    let pairs: Vec<(f64, f64)> = counts.iter().map(|&c| (c, 1000.0 + c / 10.0)).collect();
    let hits = standard.run_with_thresholds(&pairs, &mut rng)?;
    println!(
        "StandardSvt: ε₁ = {:.4}, ε₂ = {:.4}, query noise scale {:.2}, {} answers, {}",
        standard.epsilon1(),
        standard.epsilon2(),
        standard.query_scale(),
        hits.len(),
        standard.privacy_loss()
    );
    Ok(())
}
