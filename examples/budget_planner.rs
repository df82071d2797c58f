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
    println!(
        "Per-query epsilon for k pure-DP queries within a total (epsilon = {epsilon}, delta = {delta:e})\n"
    );
    println!(
        "{:>7} | {:>12} | {:>12} | {:>12} | {:>12} | {:>14}",
        "k", "sequential", "advanced", "zCDP (tight)", "optimal", "zCDP rho/step"
    );
    println!("{}", "-".repeat(84));
    let start = std::time::Instant::now();
    for k in [1u64, 10, 100, 1_000, 10_000, 100_000] {
        let seq = sequential::max_epsilon_per_step(k, epsilon)?;
        let adv = advanced::max_epsilon_per_step(k, epsilon, delta)?;
        let zc = zcdp::max_epsilon_per_step(k, epsilon, delta)?;
        let opt = optimal::max_epsilon_per_step(k, epsilon, delta)?;
        let rho = zcdp::max_rho_per_step(k, epsilon, delta)?;
        println!("{k:>7} | {seq:>12.6e} | {adv:>12.6e} | {zc:>12.6e} | {opt:>12.6e} | {rho:>14.6e}");
    }
    println!(
        "\n(computed in {:?}; every allowance is rounded down and checked forward)",
        start.elapsed()
    );
    Ok(())
}
