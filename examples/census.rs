//! A census example: two counting queries released together with the Laplace
//! mechanism. Adding or removing one person changes (adults, readers of the Quijote) by
//! at most (1, 1), so the L1 sensitivity of the vector is Δ = 2.
//!
//! Run: `cargo run --release --example census`

use dpmech::statistics::accuracy::laplace_vector_half_width;
use dpmech::{DefaultRng, Laplace};

fn main() -> Result<(), dpmech::Error> {
    let truth = [120.0, 10.0]; // adults, Quijote readers
    let mut rng = DefaultRng::from_os()?;
    println!("census: f = (adults, Quijote readers) = (120, 10), Δ₁ = 2, add/remove-one neighbours");
    println!(
        "{:>6} {:>10} {:>12} {:>12} {:>22}",
        "ε", "scale b", "adults", "readers", "95% bound on max error"
    );
    for epsilon in [0.1, 0.5, 1.0, 2.0] {
        let mechanism = Laplace::new(2.0, epsilon)?;
        let noisy = mechanism.release_slice(&truth, &mut rng)?;
        let bound = laplace_vector_half_width(mechanism.scale_for(truth.len())?, truth.len(), 0.05)?;
        println!(
            "{epsilon:>6} {:>10.3} {:>12.3} {:>12.3} {:>22.3}",
            mechanism.scale(),
            noisy[0],
            noisy[1],
            bound
        );
    }
    println!(
        "each row is ε-DP for the whole vector (not ε per count); outputs are exact multiples of a 2^k grid"
    );
    Ok(())
}
