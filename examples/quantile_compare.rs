//! dpmech's side of the quantile accuracy comparison with OpenDP
//! (`benches/compare/quantiles_opendp.py` runs it and prints both sides).
//!
//! Reads raw little-endian `f64` records from the file given, and for its first 10⁶
//! and first 10³ records, ε ∈ {1, 0.1} and q ∈ {0.1, 0.5, 0.9}, releases the
//! q-quantile `RELEASES` times (`SMALL` times for 10³) with [`Quantile`] over the
//! 3601 edges of 3600 one-second bins of
//! [0, 3600] (add/remove, one record per unit), printing one JSON line per setting: the
//! median (and mean) absolute error in ranks and in seconds, and the exact quantile.
//!
//! Run: `cargo run --release --example quantile_compare -- /tmp/dpmech_durations.f64 200 2000`

use dpmech::statistics::{Quantile, QuantileGrid};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: quantile_compare DATA [RELEASES [SMALL]]")?;
    let releases: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(200);
    let small: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(2000);
    let bytes = std::fs::read(path)?;
    let all: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    let grid = QuantileGrid::new(0.0, 3600.0, 3600)?;
    let mut rng = ChaCha20Rng::seed_from_u64(31);
    for (data, count) in [
        (&all[..all.len().min(1_000_000)], releases),
        (&all[..all.len().min(1000)], small),
    ] {
        let mut sorted = data.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len() as f64;
        let counts = grid.counts(data);
        for epsilon in [1.0, 0.1] {
            for q in [0.1, 0.5, 0.9] {
                let quantile = Quantile::new(&grid, q, epsilon, 1)?;
                let target = q * n;
                let truth = sorted[((target.ceil() as usize).max(1)) - 1];
                let (mut ranks, mut seconds) = (Vec::new(), Vec::new());
                for _ in 0..count {
                    let v = quantile.release_counts(counts.as_slice(), &mut rng)?;
                    let below = sorted.partition_point(|&x| x < v) as f64;
                    let at_most = sorted.partition_point(|&x| x <= v) as f64;
                    ranks.push((below - target).max(target - at_most).max(0.0));
                    seconds.push((v - truth).abs());
                }
                let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
                let (rank_mean, seconds_mean) = (mean(&ranks), mean(&seconds));
                println!(
                    "{{\"n\": {}, \"eps\": {epsilon:?}, \"q\": {q:?}, \"truth\": {truth}, \"rank\": {}, \"seconds\": {}, \"rank_mean\": {rank_mean}, \"seconds_mean\": {seconds_mean}}}",
                    data.len(),
                    median(ranks),
                    median(seconds)
                );
            }
        }
    }
    Ok(())
}
