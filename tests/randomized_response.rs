//! Randomized response: report frequencies against p (chi-square at α = 1e-3, N = 1e5,
//! fixed seeds), unbiased estimators, and privacy-loss audits (`dpmech::audit`) with
//! negative controls.

use crate::common::chi_square;
use dpmech::audit::Auditor;
use dpmech::composition::pld::{Grid, Pld};
use dpmech::{Error, KaryRandomizedResponse, PrivacyLoss, RandomizedResponse};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const N: u64 = 100_000;

#[test]
fn binary_reports_keep_the_bit_with_probability_p() {
    for (i, epsilon) in [0.1f64, 0.5, 1.0, 3.0].into_iter().enumerate() {
        let rr = RandomizedResponse::new(epsilon).unwrap();
        let p = epsilon.exp() / (1.0 + epsilon.exp());
        assert!((rr.keep_probability() - p).abs() < 1e-15);
        let mut rng = ChaCha20Rng::seed_from_u64(4000 + i as u64);
        for value in [false, true] {
            let kept = (0..N).filter(|_| rr.release(value, &mut rng) == value).count() as u64;
            let result = chi_square(&[kept, N - kept], &[p, 1.0 - p]);
            println!("RR ε = {epsilon}, bit {value}: kept {kept}/{N} (p = {p:.6}), {result:?}");
            assert!(result.passes(), "{result:?}");
        }
        assert_eq!(rr.privacy_loss(), PrivacyLoss::Pure { epsilon });
    }
}

#[test]
fn coin_flip_protocol_is_three_quarters_and_its_estimator_is_unbiased() {
    let rr = RandomizedResponse::coin_flip();
    let mut rng = ChaCha20Rng::seed_from_u64(4100);
    let yes_given_yes = (0..N).filter(|_| rr.release(true, &mut rng)).count() as u64;
    let yes_given_no = (0..N).filter(|_| rr.release(false, &mut rng)).count() as u64;
    for (count, p) in [(yes_given_yes, 0.75), (yes_given_no, 0.25)] {
        let result = chi_square(&[count, N - count], &[p, 1.0 - p]);
        assert!(result.passes(), "{count}: {result:?}");
    }
    assert!(
        matches!(rr.privacy_loss(), PrivacyLoss::Pure { epsilon } if epsilon >= 3f64.ln() && epsilon < 3f64.ln() + 1e-14)
    );
    // 30% true "yes": p̂ = 2s − 1/2 within 4 standard errors (sd of s ≤ 0.5/√n).
    let truth: Vec<bool> = (0..N).map(|i| i % 10 < 3).collect();
    let reports = rr.release_slice(&truth, &mut rng);
    let ones = reports.iter().filter(|&&b| b).count() as u64;
    let estimate = rr.estimate_fraction(ones, N).unwrap();
    let s = ones as f64 / N as f64;
    assert!((estimate - (2.0 * s - 0.5)).abs() < 1e-12);
    println!("coin flip: true fraction 0.3, estimate {estimate:.4}");
    assert!((estimate - 0.3).abs() < 4.0 * 2.0 * 0.5 / (N as f64).sqrt());
    assert!(rr.estimate_fraction(0, 0).is_err());
}

#[test]
fn kary_reports_and_frequency_estimates() {
    let (k, epsilon) = (5u64, 1.0f64);
    let rr = KaryRandomizedResponse::new(k, epsilon).unwrap();
    let p = epsilon.exp() / (epsilon.exp() + (k - 1) as f64);
    let q = 1.0 / (epsilon.exp() + (k - 1) as f64);
    let (ours_p, ours_q) = rr.probabilities();
    assert!((ours_p - p).abs() < 1e-15 && (ours_q - q).abs() < 1e-15);
    let mut rng = ChaCha20Rng::seed_from_u64(4200);
    let mut counts = vec![0u64; k as usize];
    for _ in 0..N {
        counts[rr.release(2, &mut rng).unwrap() as usize] += 1;
    }
    let expected: Vec<f64> = (0..k).map(|j| if j == 2 { p } else { q }).collect();
    let result = chi_square(&counts, &expected);
    println!("k-ary RR k = {k}, ε = {epsilon}: {counts:?}, {result:?}");
    assert!(result.passes(), "{result:?}");

    // Estimator: true distribution (0.5, 0.2, 0.2, 0.1, 0).
    let truth: Vec<u64> = (0..N)
        .map(|i| match i % 10 {
            0..=4 => 0,
            5 | 6 => 1,
            7 | 8 => 2,
            _ => 3,
        })
        .collect();
    let reports = rr.release_slice(&truth, &mut rng).unwrap();
    let mut counts = vec![0u64; k as usize];
    for r in reports {
        counts[r as usize] += 1;
    }
    let estimates = rr.estimate_frequencies(&counts).unwrap();
    println!("k-ary estimates {estimates:?} for (0.5, 0.2, 0.2, 0.1, 0)");
    for (estimate, truth) in estimates.iter().zip([0.5, 0.2, 0.2, 0.1, 0.0]) {
        // sd ≤ 0.5/(√n (p − q)) ≈ 0.0043; allow 5 sd.
        assert!((estimate - truth).abs() < 0.025, "{estimate} vs {truth}");
    }
}

#[test]
fn randomized_response_privacy_loss_and_negative_control() {
    /// Draws per input of each audit (half choose the events, half certify).
    const RUNS: usize = 200_000;
    let epsilon = 1.0;
    let audit = |rr: &RandomizedResponse, seed: u64| {
        Auditor::pure(epsilon)
            .unwrap()
            .samples(RUNS)
            .seed(seed)
            .audit_categorical(|r| rr.release(false, r), |r| rr.release(true, r))
            .unwrap()
    };
    let report = audit(&RandomizedResponse::new(epsilon).unwrap(), 4300);
    println!("RR ε = {epsilon}, false vs true:\n{report}");
    assert!(report.passed() && report.lower_bound <= epsilon, "{report}");
    // The bound is nearly tight: RR's loss is exactly ε.
    assert!(report.lower_bound > 0.9 * epsilon, "{report}");
    // Negative control: RR run with 2ε but claimed at ε.
    let report = audit(&RandomizedResponse::new(2.0 * epsilon).unwrap(), 4301);
    println!("RR run at 2ε, claimed ε = {epsilon}:\n{report}");
    assert!(
        !report.passed() && report.lower_bound <= 2.0 * epsilon,
        "{report}"
    );

    let audit_kary = |kary: &KaryRandomizedResponse, seed: u64| {
        Auditor::pure(epsilon)
            .unwrap()
            .samples(RUNS)
            .seed(seed)
            .audit_categorical(|r| kary.release(0, r).unwrap(), |r| kary.release(1, r).unwrap())
            .unwrap()
    };
    let report = audit_kary(&KaryRandomizedResponse::new(4, epsilon).unwrap(), 4302);
    println!("k-ary RR k = 4, ε = {epsilon}, 0 vs 1:\n{report}");
    assert!(report.passed() && report.lower_bound <= epsilon, "{report}");
    // k-ary RR's loss is exactly ε too (outcomes 0 and 1 have ratio e^ε).
    assert!(report.lower_bound > 0.8 * epsilon, "{report}");
    // Negative control: k-ary RR run with 2ε but claimed at ε.
    let report = audit_kary(&KaryRandomizedResponse::new(4, 2.0 * epsilon).unwrap(), 4303);
    println!("k-ary RR k = 4 run at 2ε, claimed ε = {epsilon}:\n{report}");
    assert!(
        !report.passed() && report.lower_bound <= 2.0 * epsilon,
        "{report}"
    );
}

#[test]
fn randomized_response_rejects_bad_parameters() {
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            RandomizedResponse::new(bad),
            Err(Error::InvalidEpsilon { .. })
        ));
        assert!(KaryRandomizedResponse::new(3, bad).is_err());
    }
    // k < 2 is one cause, refused alike by the mechanism and by its PLDs, before ε.
    let grid = Grid::new(1e-3).unwrap();
    for k in [0, 1] {
        let refusal = KaryRandomizedResponse::new(k, f64::NAN).unwrap_err();
        assert!(matches!(refusal, Error::InvalidParameter { name: "k", .. }));
        assert_eq!(
            Pld::k_ary_randomized_response(k, f64::NAN, grid).err(),
            Some(refusal.clone())
        );
        assert_eq!(
            Pld::poisson_subsampled_randomized_response(k, f64::NAN, 0.5, grid).err(),
            Some(refusal)
        );
    }
    let rr = KaryRandomizedResponse::new(3, 1.0).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(4400);
    assert!(rr.release(3, &mut rng).is_err());
    assert!(rr.release_slice(&[0, 1, 7], &mut rng).is_err());
    assert!(rr.estimate_frequencies(&[1, 2]).is_err());
    // Huge ε: the bit is kept with probability 1 − e^(−64)/(1 + …), and k-ary with k = u64::MAX works.
    let sharp = RandomizedResponse::new(1e300).unwrap();
    assert!(sharp.release(true, &mut rng));
    let huge = KaryRandomizedResponse::new(u64::MAX, 0.5).unwrap();
    assert!(huge.release(u64::MAX - 1, &mut rng).unwrap() < u64::MAX);
}
