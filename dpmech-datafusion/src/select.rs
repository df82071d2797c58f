//! Partition selection for private keys: which groups found in the data a release may
//! report (Laplace thresholding, after Korolova et al. 2009 and Desfontaines et al.
//! 2022, with exact discrete Laplace noise).
//!
//! **Candidates.** A group is a candidate only if at least one *kept* (unit, group)
//! pair supports it — after contribution bounding, its number of distinct units is at
//! least 1. A group that bounding emptied (every unit holding it had it cut by L0) is
//! never a candidate: otherwise a unit holding many keys nobody else holds would get one
//! chance per key instead of at most L0.
//!
//! **Threshold.** Each unit adds 1 to the distinct-unit count of at most L0 groups; each
//! count gets discrete Laplace noise of scale `τ ≥ L0/ε` (the per-cell ε/L0 rounded
//! down, then the scale rounded up), and a group passes when `units + Z ≥ T` with
//! `T = 1 + ⌈τ·ln(L0/δ)⌉`. A group held by one unit then passes with probability
//! `P(Z ≥ T − 1) = α^(T−1)/(1 + α) < e^(−(T−1)/τ) ≤ δ/L0` (`α = e^(−1/τ)`), so one
//! unit's at most L0 groups appear with probability below δ: the selection is
//! (ε, δ)-DP under add/remove of a unit. Every float step rounds `T` up; a `T` beyond
//! `2⁶²` is refused when the release is planned.
//!
//! **Under zCDP** ([`GroupedQuery::zcdp`](crate::GroupedQuery::zcdp); Gaussian
//! thresholding) the selection's parameter is ρ: each count gets discrete Gaussian noise
//! of `σ² = L0/(2ρ)` (a unit moves at most L0 counts by 1: L2 sensitivity `√L0`), and
//! `T = 1 + ⌈σ·√(2 ln(L0/δ))⌉`, so a group held by one unit passes with probability
//! `P(Z ≥ T − 1) ≤ e^(−(T−1)²/(2σ²)) ≤ δ/L0` (the discrete Gaussian is sub-Gaussian with
//! variance proxy σ², Canonne, Kamath & Steinke 2020). Conditioned on none of a unit's
//! own groups passing (probability ≥ 1 − δ, on noise independent of the rest), the
//! release is ρ-zCDP: the selection with its aggregates is **δ-approximate zCDP**
//! (Bun & Steinke 2016, Def. 8.1), charged as such.
//!
//! **Integers.** The threshold is at most `2⁶² + 1`; the noisy count saturates at the
//! `i64` range, which only ever lets a group with a count near `2⁶³` pass — a count no
//! table of fewer than `2⁶²` units reaches, and the safe side for a smaller one.

use dpmech::Delta;
use dpmech::privacy::round;

use crate::aggregate::{GroupKey, Partials, cell_bytes};
use crate::columns::partial;
use crate::error::DpError;
use crate::key::ReleaseKey;
use crate::noise::{CellNoise, sigma_up};

/// The largest threshold: `2⁶²` (beyond it no table could pass, and it keeps `1 + T`
/// far from overflow).
const MAX_THRESHOLD: f64 = 4_611_686_018_427_387_904.0;

/// The noise and threshold of a private-keys release, fixed by its public parameters.
#[derive(Debug)]
pub(crate) struct Selection {
    noise: CellNoise,
    threshold: i64,
}

impl Selection {
    /// Selection at `(budget, delta)` — ε, or ρ under `zcdp` — for units touching at
    /// most `max_groups` groups. Refuses δ outside (0, 1), a budget whose per-group
    /// share no noise can meet, and a threshold beyond `2⁶²` — all before anything is
    /// charged.
    pub(crate) fn new(budget: f64, delta: f64, max_groups: u32, zcdp: bool) -> Result<Self, DpError> {
        let delta = Delta::new(delta)?.get();
        let noise = CellNoise::new(1, budget, max_groups, zcdp)?;
        let levels = round::ln_up(round::div_up(f64::from(max_groups), delta)).max(0.0);
        let t = match &noise {
            // τ·ln(L0/δ), each step rounded up (τ as an f64 at least the sampler's scale).
            CellNoise::Laplace(noise) => round::mul_up(round::up(noise.scale()), levels),
            // σ·√(2 ln(L0/δ)), each step rounded up.
            CellNoise::Gaussian(noise) => {
                round::mul_up(sigma_up(noise), round::sqrt_up(round::mul_up(2.0, levels)))
            }
        }
        .ceil();
        if t.is_nan() || t > MAX_THRESHOLD {
            let name = if zcdp { "ρ" } else { "ε" };
            return Err(DpError::Unrepresentable(format!(
                "partition selection at {name} = {budget}, δ = {delta} needs a threshold of {t} units, \
                 beyond 2^62: raise {name}"
            )));
        }
        Ok(Selection {
            noise,
            threshold: 1 + t as i64,
        })
    }

    /// The threshold `T` on the noisy number of distinct units.
    #[cfg(test)]
    pub(crate) fn threshold(&self) -> i64 {
        self.threshold
    }

    /// The groups of `partials` that pass, sorted; only groups with at least one kept
    /// unit are candidates.
    pub(crate) fn select(&self, partials: &Partials, key: &ReleaseKey) -> Vec<GroupKey> {
        let mut keys: Vec<GroupKey> = partials
            .iter()
            .filter(|(_, cells)| cells[partial::UNITS] >= 1)
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort();
        keys.retain(|k| {
            let mut rng = key.cell_rng("select", cell_bytes(k));
            self.noise.release(partials[k][partial::UNITS], &mut rng) >= self.threshold
        });
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_held_by_one_unit_is_released_in_at_most_delta_of_runs() {
        // The selection stage on fixed exact partials (what the bounded plan returns):
        // "solo" has one distinct unit, "crowd" 10 000, "emptied" none (bounding cut
        // every pair of it). Each run uses a fresh key.
        let (l0, delta) = (3, 1e-3);
        let selection = Selection::new(1.0, delta, l0, false).unwrap();
        let partials: Partials = [
            (Some("solo".to_string()), vec![1, 1]),
            (Some("crowd".to_string()), vec![10_000, 10_000]),
            (Some("emptied".to_string()), vec![0, 0]),
        ]
        .into_iter()
        .collect();
        let runs = 100_000u64;
        let (mut solo, mut crowd) = (0u64, 0u64);
        for i in 0..runs {
            let mut k = [0u8; 32];
            k[..8].copy_from_slice(&i.to_le_bytes());
            for g in selection.select(&partials, &ReleaseKey::from_bytes_insecure(k)) {
                match g.as_deref() {
                    Some("solo") => solo += 1,
                    Some("crowd") => crowd += 1,
                    other => panic!("{other:?} released"),
                }
            }
        }
        // Bernstein: P(X ≥ np + t) ≤ exp(−t²/(2(np + t/3))) ≤ 1e-9 for X ~ Bin(n, p),
        // p = δ/L0 the proven per-group bound.
        let np = runs as f64 * delta / f64::from(l0);
        let z = (1e9f64).ln();
        let t = z / 3.0 + ((z / 3.0).powi(2) + 2.0 * np * z).sqrt();
        println!(
            "solo released {solo} / {runs} times (bound {:.1}); crowd {crowd}",
            np + t
        );
        assert!((solo as f64) <= np + t);
        assert_eq!(crowd, runs);
    }

    #[test]
    fn thresholds_round_up_and_refuse_what_they_cannot_represent() {
        // τ = 3/1 = 3 (L0 = 3, ε = 1), δ = 3e-3: T = 1 + ⌈3·ln(1000)⌉ = 1 + ⌈20.72⌉ = 22.
        assert_eq!(Selection::new(1.0, 3e-3, 3, false).unwrap().threshold(), 22);
        // A tiny ln(L0/δ) still needs one unit above the single unit's count.
        assert_eq!(Selection::new(1.0, 0.999_999, 1, false).unwrap().threshold(), 2);
        // δ outside (0, 1) is refused, not wrapped.
        for delta in [0.0, 1.0, -1.0, 2.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                Selection::new(1.0, delta, 2, false),
                Err(DpError::Privacy(dpmech::Error::InvalidDelta { .. }))
            ));
        }
        // Thresholds past 2⁶², and budgets no noise meets, are refused.
        assert!(Selection::new(1e-12, 1e-300, u32::MAX, false).is_err());
        assert!(Selection::new(1e-300, 1e-6, 2, false).is_err());
        // Near the limit: τ = 10¹⁵, ln(1/δ) = 690.8 gives T ≈ 6.9·10¹⁷, accepted; ten
        // times the scale would need 6.9·10¹⁸ > 2⁶², refused.
        let near = Selection::new(1e-15, 1e-300, 1, false).unwrap().threshold();
        assert!((6.9e17..=6.91e17).contains(&(near as f64)), "{near}");
        assert!(Selection::new(1e-16, 1e-300, 1, false).is_err());
    }
}
