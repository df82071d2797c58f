//! The statistics layer: unbiased noise, confidence coverage, clamped means, budget
//! charging, and privacy-loss audits of the noisy averages with the seeds' non-private
//! Algorithm 2 as the negative control.

use dpmech::audit::Auditor;
use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{MeanMethod, count, histogram, mean, sum};
use dpmech::{Accountant, Error, Laplace, PrivacyLoss};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

/// z at one-sided 10⁻³ — the tolerance of every binomial/normal check below.
const Z: f64 = 3.090_232;

/// A sandbox budget under substitution, so that releases stated for either relation
/// can be charged to it (add/remove ones count double).
fn unlimited() -> Accountant {
    Accountant::pure(1e12)
        .unwrap()
        .with_relation(Neighbouring::Substitute)
}

#[test]
fn count_and_sum_noise_is_unbiased() {
    let runs = 20_000u32;
    let accountant = unlimited();
    let mut rng = ChaCha20Rng::seed_from_u64(3000);
    // Count: geometric noise at ε = 0.5, variance 2α/(1−α)², α = e^-0.5.
    let alpha = (-0.5f64).exp();
    let sd = (2.0 * alpha).sqrt() / (1.0 - alpha);
    let mean_error: f64 = (0..runs)
        .map(|_| (count(&accountant, 1000, 0.5, &mut rng).unwrap().value - 1000) as f64)
        .sum::<f64>()
        / runs as f64;
    let bound = 2.0 * Z * sd / (runs as f64).sqrt(); // two-sided at 2·10⁻³
    assert!(mean_error.abs() <= bound, "count bias {mean_error} > {bound}");
    // Sum of values clamped to [0, 10]: Laplace with b = 10/ε, sd = √2·b.
    let values: Vec<f64> = (0..50).map(|i| (i % 13) as f64).collect();
    let truth: f64 = values.iter().map(|v| v.clamp(0.0, 10.0)).sum();
    let release = sum(
        &accountant,
        &values,
        (0.0, 10.0),
        Neighbouring::AddRemove,
        1.0,
        &mut rng,
    )
    .unwrap();
    let sd = std::f64::consts::SQRT_2 * release.noise.unwrap().scale;
    let mean_error: f64 = (0..runs)
        .map(|_| {
            sum(
                &accountant,
                &values,
                (0.0, 10.0),
                Neighbouring::AddRemove,
                1.0,
                &mut rng,
            )
            .unwrap()
            .value
                - truth
        })
        .sum::<f64>()
        / runs as f64;
    let bound = 2.0 * Z * sd / (runs as f64).sqrt();
    println!("sum bias {mean_error:.4} (bound {bound:.4}), count bias within its bound");
    assert!(mean_error.abs() <= bound, "sum bias {mean_error} > {bound}");
}

#[test]
fn confidence_intervals_cover_at_least_one_minus_beta() {
    let (runs, beta) = (20_000u32, 0.1);
    let tolerance = Z * (beta * (1.0 - beta) / runs as f64).sqrt();
    let accountant = unlimited();
    let mut rng = ChaCha20Rng::seed_from_u64(3100);
    let values = [3.5, 7.25, 1.0, 9.75, 4.0];
    let truth: f64 = values.iter().sum();
    let mut misses = 0;
    for _ in 0..runs {
        let release = sum(
            &accountant,
            &values,
            (0.0, 10.0),
            Neighbouring::Substitute,
            0.8,
            &mut rng,
        )
        .unwrap();
        let w = release.confidence_half_width(beta).unwrap().unwrap();
        misses += usize::from((release.value - truth).abs() > w);
    }
    let rate = misses as f64 / runs as f64;
    println!("sum: {beta} interval missed in {rate:.4} of runs");
    assert!(rate <= beta + tolerance, "miss rate {rate}");
    let mut misses = 0;
    for _ in 0..runs {
        let release = histogram(&accountant, &[5, 0, 12], Neighbouring::AddRemove, 1.0, &mut rng).unwrap();
        let w = release.confidence_half_width(beta).unwrap().unwrap();
        misses += usize::from(release.value[1].abs() as f64 > w); // the true count of bin 1 is 0
    }
    let rate = misses as f64 / runs as f64;
    assert!(rate <= beta + tolerance, "histogram miss rate {rate}");
}

#[test]
fn means_stay_in_bounds_and_handle_empty_selections() {
    let accountant = unlimited();
    let mut rng = ChaCha20Rng::seed_from_u64(3200);
    let heights = [172.0, 181.5, 165.0, 190.0, 158.5, 177.0, 169.0, 400.0];
    for method in [
        MeanMethod::NoisySumOverNoisyCount,
        MeanMethod::ClampedSumOverPublicCount,
        MeanMethod::Normalised,
    ] {
        for epsilon in [0.01, 0.1, 1.0, 10.0] {
            for data in [&heights[..], &[][..], &heights[..1]] {
                for _ in 0..200 {
                    let release = mean(&accountant, data, (140.0, 210.0), method, epsilon, &mut rng).unwrap();
                    assert!(
                        (140.0..=210.0).contains(&release.value),
                        "{method:?} {epsilon}: {}",
                        release.value
                    );
                    assert_eq!(release.privacy_loss, PrivacyLoss::Pure { epsilon });
                }
            }
        }
        // With a large ε the estimate is close to the truth (clamped values).
        let truth = heights.iter().map(|h| h.clamp(140.0, 210.0)).sum::<f64>() / heights.len() as f64;
        let release = mean(&accountant, &heights, (140.0, 210.0), method, 50.0, &mut rng).unwrap();
        assert!(
            (release.value - truth).abs() < 10.0,
            "{method:?}: {} vs {truth}",
            release.value
        );
    }
}

#[test]
fn the_accountant_is_charged_before_release_and_refuses_overspending() {
    let accountant = Accountant::pure(1.0).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(3300);
    count(&accountant, 10, 0.4, &mut rng).unwrap();
    mean(
        &accountant,
        &[1.0, 2.0],
        (0.0, 5.0),
        MeanMethod::Normalised,
        0.5,
        &mut rng,
    )
    .unwrap();
    let refused = sum(
        &accountant,
        &[1.0],
        (0.0, 5.0),
        Neighbouring::AddRemove,
        0.2,
        &mut rng,
    );
    assert!(
        matches!(refused, Err(Error::BudgetExceeded { .. })),
        "{refused:?}"
    );
    let spent = accountant.spent().epsilon().unwrap();
    assert!((0.9..=0.9 + 1e-12).contains(&spent), "{spent}");
    // Invalid public parameters are refused before anything is charged (a NaN *record*
    // is not an error: tests/statistics_records.rs).
    assert!(
        sum(
            &accountant,
            &[1.0],
            (0.0, f64::NAN),
            Neighbouring::AddRemove,
            0.05,
            &mut rng
        )
        .is_err()
    );
    assert!(
        mean(
            &accountant,
            &[1.0],
            (5.0, 0.0),
            MeanMethod::Normalised,
            0.05,
            &mut rng
        )
        .is_err()
    );
    assert!(count(&accountant, 1, -1.0, &mut rng).is_err());
    assert_eq!(accountant.spent().epsilon().unwrap(), spent);
    assert_eq!(accountant.ledger().len(), 2);
}

/// D = ten records at −1, D′ = D ∪ {+1}, bounds [−1, 1] (seeds' errata 8).
fn neighbours() -> (Vec<f64>, Vec<f64>) {
    let d = vec![-1.0; 10];
    let mut d_prime = d.clone();
    d_prime.push(1.0);
    (d, d_prime)
}

#[test]
fn noisy_averages_pass_a_privacy_audit_and_resampling_fails_it() {
    let (d, d_prime) = neighbours();
    let accountant = unlimited();
    let auditor = Auditor::pure(1.0).unwrap().samples(200_000).seed(31);
    for method in [MeanMethod::NoisySumOverNoisyCount, MeanMethod::Normalised] {
        let report = auditor
            .audit_real(
                |r| mean(&accountant, &d, (-1.0, 1.0), method, 1.0, r).unwrap().value,
                |r| {
                    mean(&accountant, &d_prime, (-1.0, 1.0), method, 1.0, r)
                        .unwrap()
                        .value
                },
            )
            .unwrap();
        println!("{method:?}:\n{report}");
        assert!(report.passed() && report.lower_bound <= 1.0, "{report}");
    }
    // The seeds' Algorithm 2: noisy sum over the true count, re-drawn until the mean
    // falls inside [−1, 1]. Not private: its true loss here is about 1.39 at ε = 1.
    let laplace = Laplace::new(2.0, 1.0).unwrap();
    let resampling = |data: &[f64], r: &mut ChaCha20Rng| -> f64 {
        let (s, c) = (data.iter().sum::<f64>(), data.len() as f64);
        loop {
            let a = laplace.release(s, r).unwrap() / c;
            if (-1.0..=1.0).contains(&a) {
                return a;
            }
        }
    };
    let report = auditor
        .audit_real(|r| resampling(&d, r), |r| resampling(&d_prime, r))
        .unwrap();
    println!("Algorithm 2 (resampling):\n{report}");
    assert!(!report.passed(), "{report}");
}

#[test]
fn algorithm_3_records_its_relation_and_its_psi_fallback_has_the_seeds_weights() {
    let accountant = unlimited();
    let mut rng = ChaCha20Rng::seed_from_u64(3400);
    let release = mean(
        &accountant,
        &[1.0, 2.0],
        (0.0, 5.0),
        MeanMethod::ClampedSumOverPublicCount,
        1.0,
        &mut rng,
    )
    .unwrap();
    assert_eq!(release.relation, Neighbouring::Substitute);
    let release = mean(
        &accountant,
        &[1.0, 2.0],
        (0.0, 5.0),
        MeanMethod::Normalised,
        1.0,
        &mut rng,
    )
    .unwrap();
    assert_eq!(release.relation, Neighbouring::AddRemove);
    // Ψ at ε = 1: each end point with probability e^{-1/2}/2, the interior otherwise.
    let runs = 100_000u64;
    let mut cells = [0u64; 3];
    for _ in 0..runs {
        let v = mean(
            &accountant,
            &[],
            (0.0, 5.0),
            MeanMethod::ClampedSumOverPublicCount,
            1.0,
            &mut rng,
        )
        .unwrap()
        .value;
        cells[if v == 0.0 {
            0
        } else if v == 5.0 {
            2
        } else {
            1
        }] += 1;
    }
    let end = (-0.5f64).exp() / 2.0;
    let expected = [end, 1.0 - 2.0 * end, end];
    let statistic: f64 = cells
        .iter()
        .zip(expected)
        .map(|(&o, p)| (o as f64 - p * runs as f64).powi(2) / (p * runs as f64))
        .sum();
    // χ²(2) at α = 10⁻³: −2 ln(10⁻³).
    let critical = -2.0 * 1e-3f64.ln();
    println!("Ψ cells {cells:?}, χ² = {statistic:.2} (critical {critical:.2})");
    assert!(statistic <= critical, "{cells:?}");
}

#[test]
fn algorithm_3_is_private_under_substitution_and_not_under_add_remove() {
    let accountant = unlimited();
    // Substitution: ten records at −1 vs one of them changed to +1; n = 10 is public.
    let d = vec![-1.0; 10];
    let mut d_substituted = d.clone();
    d_substituted[0] = 1.0;
    let auditor = Auditor::pure(1.0).unwrap().samples(200_000).seed(34);
    let alg3 = |data: &[f64], r: &mut ChaCha20Rng| {
        mean(
            &accountant,
            data,
            (-1.0, 1.0),
            MeanMethod::ClampedSumOverPublicCount,
            1.0,
            r,
        )
        .unwrap()
        .value
    };
    let report = auditor
        .audit_real(|r| alg3(&d, r), |r| alg3(&d_substituted, r))
        .unwrap();
    println!("Algorithm 3, substitution:\n{report}");
    assert!(report.passed() && report.lower_bound <= 1.0, "{report}");
    // Add/remove: {0.5} vs {0.5, 0.5} at ε = 0.1. The density of (S + L)/C near 0.5 is
    // twice as high for the larger dataset, a loss of about ln 2 ≫ 0.1.
    let auditor = Auditor::pure(0.1).unwrap().samples(200_000).seed(35);
    let small = |r: &mut ChaCha20Rng| {
        mean(
            &accountant,
            &[0.5],
            (0.0, 1.0),
            MeanMethod::ClampedSumOverPublicCount,
            0.1,
            r,
        )
        .unwrap()
        .value
    };
    let large = |r: &mut ChaCha20Rng| {
        mean(
            &accountant,
            &[0.5, 0.5],
            (0.0, 1.0),
            MeanMethod::ClampedSumOverPublicCount,
            0.1,
            r,
        )
        .unwrap()
        .value
    };
    let report = auditor.audit_real(small, large).unwrap();
    println!("Algorithm 3 under add/remove (not offered):\n{report}");
    assert!(!report.passed(), "{report}");
    assert!(report.lower_bound <= 0.1 + std::f64::consts::LN_2, "{report}");
}

/// The accountant knows which relation it protects (issue 11's review, "check every
/// place that converts between the relations"): a substitution-only release (the
/// public-count mean) is refused by an add/remove budget before anything is drawn or
/// charged, and a release stated for add/remove counts double on a substitution budget.
#[test]
fn releases_are_charged_under_the_accountants_relation() {
    let values = [0.5, 2.0, -0.25];
    let add_remove = Accountant::pure(10.0).unwrap();
    let mut rng = dpmech::audit::CountingRng::new(ChaCha20Rng::seed_from_u64(8));
    let refused = mean(
        &add_remove,
        &values,
        (-1.0, 3.0),
        MeanMethod::ClampedSumOverPublicCount,
        0.5,
        &mut rng,
    );
    assert!(
        matches!(refused, Err(dpmech::Error::IncompatibleLoss { .. })),
        "{refused:?}"
    );
    assert_eq!((add_remove.charges(), rng.draws()), (0, 0));
    // The same release on a substitution budget: charged as stated.
    let substitute = Accountant::pure(10.0)
        .unwrap()
        .with_relation(Neighbouring::Substitute);
    mean(
        &substitute,
        &values,
        (-1.0, 3.0),
        MeanMethod::ClampedSumOverPublicCount,
        0.5,
        &mut rng,
    )
    .unwrap();
    assert_eq!(substitute.spent(), dpmech::PrivacyLoss::pure(0.5).unwrap());
    // An add/remove sum on it counts 2 × 0.5; a count (sensitivity 1 either way) is
    // stated for the budget's relation and counts once.
    sum(
        &substitute,
        &values,
        (-1.0, 3.0),
        Neighbouring::AddRemove,
        0.5,
        &mut rng,
    )
    .unwrap();
    let c = count(&substitute, 3, 0.5, &mut rng).unwrap();
    assert_eq!(c.relation, Neighbouring::Substitute);
    assert_eq!(substitute.spent(), dpmech::PrivacyLoss::pure(2.0).unwrap());
    let ledger = substitute.ledger();
    assert_eq!(ledger[1].requested, dpmech::PrivacyLoss::pure(0.5).unwrap());
    assert_eq!(ledger[1].charged, dpmech::PrivacyLoss::pure(1.0).unwrap());
}
