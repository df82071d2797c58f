//! Budget planner: how large may each of k pure-DP queries be so that the whole
//! analysis stays within a target (ε, δ)? Compares the composition rules side by side.
//!
//! ```text
//! cargo run --release --example budget_planner              # target (1, 1e-6)
//! cargo run --release --example budget_planner -- 0.5 1e-9  # target (0.5, 1e-9)
//! ```
//!
//! * sequential: ε/k, no δ needed, valid for adaptively chosen ε;
//! * advanced (Dwork–Rothblum–Vadhan) with slack δ′ = δ;
//! * zCDP: each ε-DP step is ε²/2-zCDP, Σρ converted with the tight CKS20 bound;
//! * optimal (Kairouz–Oh–Viswanath): the exact answer for k ε-DP steps.
//!
//! Advanced, zCDP-of-pure and optimal assume k and ε fixed in advance (declare them as
//! an `Accountant::with_plan`); the last column is the per-step ρ for Gaussian-type
//! (zCDP) mechanisms.

use dpmech::composition::{advanced, optimal, sequential, zcdp};

fn main() -> Result<(), dpmech::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parse =
        |i: usize, default: f64| -> f64 { args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default) };
    let (epsilon, delta) = (parse(0, 1.0), parse(1, 1e-6));
    println!("You plan k queries and want the whole analysis to be (ε = {epsilon}, δ = {delta:e})-DP.");
    println!("How much ε may each query spend? Larger is better: less noise per query.\n");
    println!(
        "{:>7} | {:>10} | {:>10} | {:>10} | {:>10} | {:>13}",
        "k", "sequential", "advanced", "zCDP", "optimal", "ρ per query"
    );
    println!("{}", "-".repeat(76));
    let start = std::time::Instant::now();
    for k in [1u64, 10, 100, 1_000, 10_000, 100_000] {
        let seq = sequential::max_epsilon_per_step(k, epsilon)?;
        let adv = advanced::max_epsilon_per_step(k, epsilon, delta)?;
        let zc = zcdp::max_epsilon_per_step(k, epsilon, delta)?;
        let opt = optimal::max_epsilon_per_step(k, epsilon, delta)?;
        let rho = zcdp::max_rho_per_step(k, epsilon, delta)?;
        println!(
            "{k:>7} | {:>10} | {:>10} | {:>10} | {:>10} | {:>13}",
            readable(seq),
            readable(adv),
            readable(zc),
            readable(opt),
            readable(rho)
        );
    }
    println!("\nsequential: ε/k, safe even if you choose each query after seeing earlier answers.");
    println!(
        "advanced, zCDP, optimal: better for many queries, for k queries fixed in advance (Accountant::with_plan)."
    );
    println!("optimal is exact for k ε-DP queries; ρ per query is for Gaussian (zCDP) queries.");
    println!(
        "(computed in {:.1} ms; every allowance is rounded down and checked forward)",
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// Four significant digits, in plain decimals down to 0.001.
fn readable(x: f64) -> String {
    if x >= 0.000_999_95 {
        let decimals = (3 - x.log10().floor() as i32).clamp(0, 6) as usize;
        format!("{x:.decimals$}")
    } else {
        format!("{x:.3e}")
    }
}
