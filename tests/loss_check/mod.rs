//! A small, self-contained empirical privacy-loss check (until `dpmech::audit` lands).
//!
//! Run a mechanism `N` times on each of two neighbouring inputs `D`, `D′` and count, for
//! a family of **data-independent** output events `S₁ … S_K` fixed before sampling, how
//! often each occurs. For every event and both directions, exact Clopper–Pearson bounds
//! at level `α/(4K)` (Bonferroni over the `2K` lower and `2K` upper bounds) give, with
//! probability at least `1 − α` jointly,
//!
//! ```text
//! p_D(S) ≥ p_lo,  p_D′(S) ≤ q_hi   ⇒   ln((p_D(S) − δ)/p_D′(S)) ≥ ln((p_lo − δ)/q_hi),
//! ```
//!
//! so the largest such value is a certified **lower** bound on the ε any (ε, δ)
//! guarantee must have. A mechanism whose claim holds passes (`certified ≤ ε`) except
//! with probability `α`; a negative control whose true loss is well above ε fails.
//! Seeds are fixed, so every run is deterministic.
#![allow(dead_code)]

use statrs::distribution::{Beta, ContinuousCDF};

/// Joint confidence level of one check.
pub const ALPHA: f64 = 1e-3;

/// Exact (Clopper–Pearson) lower confidence bound for a binomial proportion.
pub fn clopper_pearson_lower(k: u64, n: u64, level: f64) -> f64 {
    if k == 0 {
        return 0.0;
    }
    Beta::new(k as f64, (n - k + 1) as f64)
        .unwrap()
        .inverse_cdf(level)
}

/// Exact (Clopper–Pearson) upper confidence bound for a binomial proportion.
pub fn clopper_pearson_upper(k: u64, n: u64, level: f64) -> f64 {
    if k == n {
        return 1.0;
    }
    Beta::new((k + 1) as f64, (n - k) as f64)
        .unwrap()
        .inverse_cdf(1.0 - level)
}

/// The outcome of a check.
#[derive(Debug, Clone)]
pub struct Certified {
    /// Certified lower bound on ε (−∞ when no event certifies anything).
    pub epsilon_lower: f64,
    /// The event (index into the family) and direction that attained it.
    pub event: usize,
    pub forward: bool,
}

/// Certified lower bound on ε from event counts `a[i]` (under D) and `b[i]` (under D′),
/// `n` runs each, for approximate DP with the given δ.
pub fn certify(a: &[u64], b: &[u64], n: u64, delta: f64) -> Certified {
    assert_eq!(a.len(), b.len());
    let k = a.len() as f64;
    let level = ALPHA / (4.0 * k);
    let mut best = Certified {
        epsilon_lower: f64::NEG_INFINITY,
        event: 0,
        forward: true,
    };
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        for (forward, p, q) in [(true, x, y), (false, y, x)] {
            let p_lo = clopper_pearson_lower(p, n, level);
            let q_hi = clopper_pearson_upper(q, n, level);
            if p_lo > delta {
                let value = ((p_lo - delta) / q_hi).ln();
                if value > best.epsilon_lower {
                    best = Certified {
                        epsilon_lower: value,
                        event: i,
                        forward,
                    };
                }
            }
        }
    }
    best
}

/// Counts of the singleton events `{output = j}` for `j < k`.
pub fn singleton_counts(outputs: impl Iterator<Item = usize>, k: usize) -> Vec<u64> {
    let mut counts = vec![0u64; k];
    for o in outputs {
        counts[o] += 1;
    }
    counts
}

/// Counts of the threshold events `{y ≤ c}` and `{y > c}` for every threshold `c`
/// (outputs first, thresholds after, both in the same order for D and D′).
pub fn threshold_counts(outputs: &[f64], thresholds: &[f64]) -> Vec<u64> {
    let mut counts = vec![0u64; 2 * thresholds.len()];
    for &y in outputs {
        for (j, &c) in thresholds.iter().enumerate() {
            if y <= c {
                counts[2 * j] += 1;
            } else {
                counts[2 * j + 1] += 1;
            }
        }
    }
    counts
}
