//! The sparse vector family: behaviour (halting, typed errors, per-query thresholds,
//! the monotone option), empirical privacy loss on neighbouring query streams with
//! negative controls the same test rejects, empirical (α, β)-accuracy, and no panic on
//! any input.
//!
//! The privacy-loss check is self-contained and conservative: run the mechanism `N`
//! times on a query stream `D` and on a neighbouring stream `D′` (every query moves by
//! at most Δ = 1), histogram a transcript of the outputs, bound every bin probability
//! with a Chernoff (binomial relative-entropy) confidence interval at level
//! `CONFIDENCE / (4 · bins)` (Bonferroni over bins, both bounds and both directions),
//! and report the largest certified `ln(p_lower / p′_upper)`. A correct ε-DP mechanism
//! gives a certified bound ≤ ε except with probability `CONFIDENCE`.

mod common;

use common::Counting;
use dpmech::mechanisms::svt::{above_threshold_alpha, numeric_sparse_alpha, sparse_alpha};
use dpmech::{AboveThreshold, Answer, Error, Monotonicity, NumericSparse, PrivacyLoss, Sparse, StandardSvt};
use proptest::prelude::*;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

/// Probability that a correct mechanism fails one privacy-loss test.
const CONFIDENCE: f64 = 1e-4;
/// Runs per stream in the privacy-loss tests.
const N: usize = 1_000_000;

// ---------------------------------------------------------------------------------
// Conservative certified lower bound on the privacy loss.
// ---------------------------------------------------------------------------------

/// `KL(q ‖ p)` for Bernoulli distributions.
fn kl(q: f64, p: f64) -> f64 {
    let term = |a: f64, b: f64| if a == 0.0 { 0.0 } else { a * (a / b).ln() };
    term(q, p) + term(1.0 - q, 1.0 - p)
}

/// Chernoff bounds: `Pr[p̂ ≥ q] ≤ exp(−n·KL(q‖p))` for `q ≥ p` (and symmetrically), so
/// the set `{p : n·KL(p̂‖p) ≤ ln(1/a)}` contains the true p except with probability
/// `≤ a` on each side. Returns `(lower, upper)` by bisection (conservative ends).
fn chernoff_interval(successes: u64, n: u64, a: f64) -> (f64, f64) {
    let q = successes as f64 / n as f64;
    let budget = (1.0 / a).ln() / n as f64;
    let mut lower = 0.0;
    if successes > 0 {
        let (mut lo, mut hi) = (0.0f64, q);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if kl(q, mid) > budget { lo = mid } else { hi = mid }
        }
        lower = lo; // kl(q, lo) > budget: lo is outside, a safe lower end
    }
    let mut upper = 1.0;
    if successes < n {
        let (mut lo, mut hi) = (q, 1.0f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if kl(q, mid) > budget { hi = mid } else { lo = mid }
        }
        upper = hi;
    }
    (lower, upper)
}

/// The largest certified `|ln(p_D/p_D′)|` over `bins` transcript bins.
fn certified_loss(counts_d: &[u64], counts_dp: &[u64], n: u64) -> (f64, usize) {
    assert_eq!(counts_d.len(), counts_dp.len());
    let bins = counts_d.len();
    let a = CONFIDENCE / (4.0 * bins as f64);
    let mut best = (f64::NEG_INFINITY, 0);
    for bin in 0..bins {
        let (lo_d, up_d) = chernoff_interval(counts_d[bin], n, a);
        let (lo_p, up_p) = chernoff_interval(counts_dp[bin], n, a);
        for value in [(lo_d / up_p).ln(), (lo_p / up_d).ln()] {
            if value > best.0 {
                best = (value, bin);
            }
        }
    }
    best
}

/// Runs `mechanism` (a fresh instance per run, returning a transcript bin) `N` times
/// on each stream and returns the certified loss and the bin that achieves it.
fn audit(
    name: &str,
    bins: usize,
    d: &[f64],
    d_prime: &[f64],
    seed: u64,
    mut mechanism: impl FnMut(&[f64], &mut ChaCha20Rng) -> usize,
) -> f64 {
    for (x, y) in d.iter().zip(d_prime) {
        assert!(
            (x - y).abs() <= 1.0,
            "neighbouring streams move each query by ≤ Δ = 1"
        );
    }
    let mut histogram = |stream: &[f64], seed: u64| {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut counts = vec![0u64; bins];
        for _ in 0..N {
            counts[mechanism(stream, &mut rng)] += 1;
        }
        counts
    };
    let counts_d = histogram(d, seed);
    let counts_dp = histogram(d_prime, seed + 1);
    let (loss, bin) = certified_loss(&counts_d, &counts_dp, N as u64);
    println!(
        "{name}: certified privacy loss ≥ {loss:.3} (bin {bin}: {} vs {} of {N})",
        counts_d[bin], counts_dp[bin]
    );
    loss
}

/// Index of the first ⊤ in `answers` (or `len` when there is none).
fn first_above(answers: &[Answer], len: usize) -> usize {
    answers.iter().position(Answer::is_above).unwrap_or(len)
}

/// Transcript of up to `m` ⊥/⊤ answers (missing after a halt) in base 3.
fn pattern(answers: &[Answer], m: usize) -> usize {
    (0..m).fold(0, |acc, i| {
        let digit = match answers.get(i) {
            None => 0,
            Some(Answer::Below) => 1,
            Some(_) => 2,
        };
        acc * 3 + digit
    })
}

// The streams: D has the first queries at 0 and the last at 1, D′ the reverse — the
// shape of the worst case in the proof of AboveThreshold (the maximum of the earlier
// queries and the last query move in opposite directions).
const D5: [f64; 5] = [0.0, 0.0, 0.0, 0.0, 1.0];
const D5_PRIME: [f64; 5] = [1.0, 1.0, 1.0, 1.0, 0.0];
const D3: [f64; 3] = [0.0, 0.0, 1.0];
const D3_PRIME: [f64; 3] = [1.0, 1.0, 0.0];

/// Textbook float Laplace (inverse CDF): for the negative controls only.
fn float_laplace(rng: &mut ChaCha20Rng, scale: f64) -> f64 {
    let u = ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64) - 0.5;
    -scale * u.signum() * (1.0 - 2.0 * u.abs()).ln()
}

/// Bins of a released value: 15 bins with edges −3, −2.5, …, 3.5 (in units of Δ).
fn value_bin(v: f64) -> usize {
    ((v + 3.5) / 0.5).floor().clamp(0.0, 14.0) as usize
}

// ---------------------------------------------------------------------------------
// Privacy loss: the mechanisms pass, the negative controls are caught.
// ---------------------------------------------------------------------------------

#[test]
fn above_threshold_privacy_loss_is_at_most_epsilon_and_noise_free_queries_are_caught() {
    let epsilon = 2.0;
    let loss = audit("AboveThreshold ε=2", 6, &D5, &D5_PRIME, 10, |stream, rng| {
        let mut svt = AboveThreshold::new(0.0, 1.0, epsilon).unwrap();
        first_above(&svt.run(stream, rng).unwrap(), stream.len())
    });
    assert!(loss <= epsilon, "certified {loss} > ε = {epsilon}");
    assert!(
        loss > 0.5 * epsilon,
        "the test should have power: certified {loss}"
    );

    // Negative control: the same thresholding with no query noise (seed Fig. 5.3, A.5
    // style, but halting). The transcript "first ⊤ at the last query" is impossible on D′.
    let control = audit(
        "no query noise (NOT private)",
        6,
        &D5,
        &D5_PRIME,
        12,
        |stream, rng| {
            let noisy_threshold = float_laplace(rng, 2.0 / epsilon);
            stream
                .iter()
                .position(|&q| q >= noisy_threshold)
                .unwrap_or(stream.len())
        },
    );
    assert!(
        control > epsilon,
        "negative control not caught: certified {control}"
    );
}

#[test]
fn numeric_sparse_privacy_loss_is_at_most_epsilon_and_value_revealing_svt_is_caught() {
    let epsilon = 2.0;
    let bins = 3 * 15 + 1;
    let loss = audit(
        "NumericSparse c=1 ε=2",
        bins,
        &D3,
        &D3_PRIME,
        20,
        |stream, rng| {
            let mut svt = NumericSparse::new(0.0, 1.0, 1, epsilon).unwrap();
            let answers = svt.run(stream, rng).unwrap();
            match answers.iter().position(Answer::is_above) {
                Some(i) => i * 15 + value_bin(answers[i].value().unwrap()),
                None => 3 * 15,
            }
        },
    );
    assert!(loss <= epsilon, "certified {loss} > ε = {epsilon}");

    // Negative control: seed Fig. 5.3 A.3 with c = 1 — threshold Lap(Δ/ε₁), query noise
    // Lap(cΔ/ε₂), ε₁ = ε₂ = ε/2, and on ⊤ it releases fᵢ + νᵢ, the comparison's own
    // noise, while charging ε for the comparison only.
    let control = audit(
        "value-revealing SVT (NOT private)",
        bins,
        &D3,
        &D3_PRIME,
        22,
        |stream, rng| {
            let noisy_threshold = float_laplace(rng, 2.0 / epsilon);
            for (i, &q) in stream.iter().enumerate() {
                let noisy = q + float_laplace(rng, 2.0 / epsilon);
                if noisy >= noisy_threshold {
                    return i * 15 + value_bin(noisy);
                }
            }
            3 * 15
        },
    );
    assert!(
        control > epsilon,
        "negative control not caught: certified {control}"
    );
}

#[test]
fn sparse_privacy_loss_is_at_most_epsilon() {
    let epsilon = 2.0;
    let d = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0];
    let d_prime = [1.0, 1.0, 0.0, 1.0, 1.0, 0.0];
    let loss = audit("Sparse c=2 ε=2", 729, &d, &d_prime, 30, |stream, rng| {
        let mut svt = Sparse::new(0.0, 1.0, 2, epsilon).unwrap();
        pattern(&svt.run(stream, rng).unwrap(), 6)
    });
    assert!(loss <= epsilon, "certified {loss} > ε = {epsilon}");
    assert!(loss > 0.0);
}

#[test]
fn standard_svt_privacy_loss_is_at_most_epsilon() {
    let epsilon = 2.0;
    let d = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0];
    let d_prime = [1.0, 1.0, 0.0, 1.0, 1.0, 0.0];
    let loss = audit(
        "StandardSvt c=2 ε=2 (optimal split)",
        729,
        &d,
        &d_prime,
        40,
        |stream, rng| {
            let mut svt =
                StandardSvt::with_optimal_split(0.0, 1.0, 2, epsilon, Monotonicity::General).unwrap();
            pattern(&svt.run(stream, rng).unwrap(), 6)
        },
    );
    assert!(loss <= epsilon, "certified {loss} > ε = {epsilon}");
    assert!(loss > 0.0);
}

#[test]
fn monotone_standard_svt_privacy_loss_is_at_most_epsilon_on_monotone_streams() {
    // Monotone neighbours: every query moves up by 1 (e.g. counts after adding a record).
    let epsilon = 2.0;
    let d = [0.0; 6];
    let d_prime = [1.0; 6];
    let loss = audit(
        "StandardSvt monotone c=2 ε=2",
        729,
        &d,
        &d_prime,
        45,
        |stream, rng| {
            let mut svt =
                StandardSvt::with_optimal_split(0.0, 1.0, 2, epsilon, Monotonicity::Monotone).unwrap();
            pattern(&svt.run(stream, rng).unwrap(), 6)
        },
    );
    assert!(loss <= epsilon, "certified {loss} > ε = {epsilon}");
    assert!(loss > 0.0);
}

#[test]
fn the_certified_bound_is_conservative_on_identical_streams() {
    // Same stream on both sides: the true loss is 0, the certified bound must be ≤ 0.
    let loss = audit("AboveThreshold, D = D′", 6, &D5, &D5, 50, |stream, rng| {
        let mut svt = AboveThreshold::new(0.0, 1.0, 2.0).unwrap();
        first_above(&svt.run(stream, rng).unwrap(), stream.len())
    });
    assert!(loss <= 0.0, "{loss}");
}

// ---------------------------------------------------------------------------------
// Behaviour.
// ---------------------------------------------------------------------------------

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

#[test]
fn above_threshold_halts_after_the_first_above_with_a_typed_error() {
    let mut r = rng(1);
    let mut svt = AboveThreshold::new(10.0, 1.0, 5.0).unwrap();
    let answers = svt.run(&[-100.0, -100.0, 500.0, 500.0, -100.0], &mut r).unwrap();
    assert_eq!(answers, vec![Answer::Below, Answer::Below, Answer::Above]);
    assert!(svt.is_halted());
    assert_eq!(svt.answered(), 3);
    for value in [0.0, 1e9, f64::NAN] {
        assert_eq!(
            svt.query(value, &mut r),
            Err(Error::Halted {
                mechanism: "AboveThreshold",
                cutoff: 1
            })
        );
    }
    assert!(matches!(svt.run(&[1.0], &mut r), Err(Error::Halted { .. })));
    assert_eq!(svt.privacy_loss(), PrivacyLoss::Pure { epsilon: 5.0 });
    // Scales: T̂ = T + Lap(2Δ/ε), ν = Lap(4Δ/ε), up to the 2⁻⁴⁰ grid allowance.
    assert!(svt.threshold_scale() >= 0.4 && svt.threshold_scale() <= 0.4 * (1.0 + 1e-9));
    assert!(svt.query_scale() >= 0.8 && svt.query_scale() <= 0.8 * (1.0 + 1e-9));
    assert!(format!("{svt:?}").contains("<secret>"));
}

#[test]
fn sparse_and_numeric_sparse_halt_after_c_above_answers() {
    let mut r = rng(2);
    let c = 3;
    let stream: Vec<f64> = (0..20).map(|i| if i % 4 == 1 { 1e4 } else { -1e4 }).collect();
    let mut sparse = Sparse::new(0.0, 1.0, c, 1.0).unwrap();
    let answers = sparse.run(&stream, &mut r).unwrap();
    assert_eq!(answers.len(), 10, "halts at the third ⊤ (query 9)");
    assert_eq!(answers.iter().filter(|a| a.is_above()).count(), c);
    assert!(sparse.is_halted());
    assert_eq!(sparse.positives(), c);
    assert!(matches!(
        sparse.query(0.0, &mut r),
        Err(Error::Halted {
            mechanism: "Sparse",
            cutoff: 3
        })
    ));
    // σ = 2cΔ/ε, query noise 2σ.
    assert!(sparse.threshold_scale() >= 6.0 && sparse.threshold_scale() <= 6.0 * (1.0 + 1e-9));
    assert!(sparse.query_scale() >= 12.0 && sparse.query_scale() <= 12.0 * (1.0 + 1e-9));

    let mut numeric = NumericSparse::new(0.0, 1.0, c, 1.0).unwrap();
    let answers = numeric.run(&stream, &mut r).unwrap();
    assert_eq!(answers.len(), 10);
    let values: Vec<f64> = answers.iter().filter_map(Answer::value).collect();
    assert_eq!(values.len(), c);
    for v in values {
        assert_eq!(v % numeric.value_granularity(), 0.0, "on the public grid");
        assert!((v - 1e4).abs() < 2000.0);
    }
    // δ = 0 constants: σ(ε₁) = 2c/(8ε/9) = 9c/(4ε), values Lap(9cΔ/ε).
    assert!(numeric.threshold_scale() >= 6.75 && numeric.threshold_scale() <= 6.75 * (1.0 + 1e-9));
    assert!(numeric.query_scale() >= 13.5 && numeric.query_scale() <= 13.5 * (1.0 + 1e-9));
    assert!(numeric.value_scale() >= 27.0 && numeric.value_scale() <= 27.0 * (1.0 + 1e-9));
    assert!(matches!(numeric.query(0.0, &mut r), Err(Error::Halted { .. })));
    assert_eq!(numeric.privacy_loss(), PrivacyLoss::Pure { epsilon: 1.0 });
}

#[test]
fn approximate_variants_report_epsilon_delta_and_reject_too_large_epsilon() {
    let sparse = Sparse::approximate(0.0, 1.0, 10, 1.0, 1e-6).unwrap();
    assert_eq!(
        sparse.privacy_loss(),
        PrivacyLoss::Approximate {
            epsilon: 1.0,
            delta: 1e-6
        }
    );
    let sigma = (32.0 * 10.0 * 1e6f64.ln()).sqrt();
    assert!(sparse.threshold_scale() >= sigma && sparse.threshold_scale() <= sigma * (1.0 + 1e-9));
    assert!(sparse.query_scale() >= 2.0 * sigma);
    let numeric = NumericSparse::approximate(0.0, 1.0, 10, 1.0, 1e-6).unwrap();
    assert_eq!(
        numeric.privacy_loss(),
        PrivacyLoss::Approximate {
            epsilon: 1.0,
            delta: 1e-6
        }
    );
    let sigma1 = (32.0 * 10.0 * 2e6f64.ln()).sqrt() * (512f64.sqrt() + 1.0) / 512f64.sqrt();
    assert!(numeric.threshold_scale() >= sigma1 && numeric.threshold_scale() <= sigma1 * (1.0 + 1e-9));
    assert!(matches!(
        Sparse::approximate(0.0, 1.0, 10, 1000.0, 0.5),
        Err(Error::InvalidParameter { name: "epsilon", .. })
    ));
    assert!(matches!(
        Sparse::approximate(0.0, 1.0, 10, 1.0, 0.0),
        Err(Error::InvalidDelta { .. })
    ));
}

#[test]
fn standard_svt_uses_per_query_thresholds() {
    let mut r = rng(3);
    let mut svt = StandardSvt::new(0.0, 1.0, 2, 50.0, 50.0, Monotonicity::General).unwrap();
    let answers = svt
        .run_with_thresholds(
            &[(100.0, 1000.0), (100.0, -1000.0), (100.0, 1000.0), (-5.0, -900.0)],
            &mut r,
        )
        .unwrap();
    assert_eq!(
        answers,
        vec![Answer::Below, Answer::Above, Answer::Below, Answer::Above]
    );
    assert!(svt.is_halted());
    assert!(matches!(
        svt.query_with_threshold(1.0, 0.0, &mut r),
        Err(Error::Halted {
            mechanism: "StandardSvt",
            cutoff: 2
        })
    ));
    let mut fresh = StandardSvt::new(0.0, 1.0, 2, 50.0, 50.0, Monotonicity::General).unwrap();
    assert!(matches!(
        fresh.query_with_threshold(1.0, f64::NAN, &mut r),
        Err(Error::InvalidParameter {
            name: "threshold",
            ..
        })
    ));
    assert_eq!(fresh.answered(), 0);
}

#[test]
fn monotone_option_halves_the_query_noise_exactly_as_documented() {
    let (c, e1, e2) = (4usize, 0.5, 1.0);
    let general = StandardSvt::new(0.0, 1.0, c, e1, e2, Monotonicity::General).unwrap();
    let monotone = StandardSvt::new(0.0, 1.0, c, e1, e2, Monotonicity::Monotone).unwrap();
    // General: Lap(2cΔ/ε₂) = 8; monotone: Lap(cΔ/ε₂) = 4; threshold Lap(Δ/ε₁) = 2 in both.
    let close = |x: f64, target: f64| x >= target && x <= target * (1.0 + 1e-9);
    assert!(close(general.query_scale(), 8.0), "{}", general.query_scale());
    assert!(close(monotone.query_scale(), 4.0), "{}", monotone.query_scale());
    assert!(close(general.threshold_scale(), 2.0) && close(monotone.threshold_scale(), 2.0));
    assert_eq!(
        general.privacy_loss(),
        // ε₁ + ε₂ = 0.5 + 1.0 is exact in binary, so the outward rounding keeps it.
        PrivacyLoss::Pure { epsilon: 1.5 }
    );
    // The optimal split: ε₁ : ε₂ = 1 : (2c)^(2/3), or 1 : c^(2/3) for monotone queries.
    for (kind, base) in [
        (Monotonicity::General, 2.0 * c as f64),
        (Monotonicity::Monotone, c as f64),
    ] {
        let svt = StandardSvt::with_optimal_split(0.0, 1.0, c, 1.0, kind).unwrap();
        let ratio = svt.epsilon2() / svt.epsilon1();
        assert!((ratio - base.powf(2.0 / 3.0)).abs() < 1e-9, "{kind:?}: {ratio}");
        assert!(svt.epsilon1() + svt.epsilon2() <= 1.0);
        assert!(svt.privacy_loss().epsilon().unwrap() <= 1.0);
        assert_eq!(svt.monotonicity(), kind);
    }
    // Numeric answers: Lap(cΔ/ε₃), charged on top.
    let numeric = StandardSvt::new(0.0, 1.0, c, e1, e2, Monotonicity::General)
        .unwrap()
        .with_numeric_answers(0.5)
        .unwrap();
    assert!(close(numeric.value_scale().unwrap(), 8.0));
    assert!(numeric.privacy_loss().epsilon().unwrap() >= 2.0);
}

#[test]
fn non_finite_values_are_rejected_before_any_randomness_and_keep_the_state() {
    let mut counting = Counting {
        inner: rng(4),
        words: 0,
    };
    let mut at = AboveThreshold::new(0.0, 1.0, 1.0).unwrap();
    let mut sparse = Sparse::new(0.0, 1.0, 2, 1.0).unwrap();
    let mut numeric = NumericSparse::new(0.0, 1.0, 2, 1.0).unwrap();
    let mut standard = StandardSvt::with_optimal_split(0.0, 1.0, 2, 1.0, Monotonicity::General).unwrap();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let expected = |e: Result<Answer, Error>| matches!(e, Err(Error::NonFiniteValue { index: 0, .. }));
        assert!(expected(at.query(bad, &mut counting)));
        assert!(expected(sparse.query(bad, &mut counting)));
        assert!(expected(numeric.query(bad, &mut counting)));
        assert!(expected(standard.query(bad, &mut counting)));
        assert!(matches!(
            sparse.run(&[1.0, 2.0, bad], &mut counting),
            Err(Error::NonFiniteValue { index: 2, .. })
        ));
        assert!(matches!(
            at.run_iter([1.0, bad], &mut counting),
            Err(Error::NonFiniteValue { index: 1, .. })
        ));
    }
    assert_eq!(counting.words, 0, "no randomness drawn");
    assert_eq!(
        (
            at.answered(),
            sparse.answered(),
            numeric.answered(),
            standard.answered()
        ),
        (0, 0, 0, 0)
    );
    assert!(!at.is_halted());
    // The stream continues normally.
    assert_eq!(at.query(-1e6, &mut counting), Ok(Answer::Below));
    assert!(matches!(
        at.query(f64::NAN, &mut counting),
        Err(Error::NonFiniteValue { index: 1, .. })
    ));
    assert_eq!(at.answered(), 1);
}

#[test]
fn invalid_parameters_are_typed_errors() {
    assert!(matches!(
        AboveThreshold::new(f64::NAN, 1.0, 1.0),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        AboveThreshold::new(0.0, 0.0, 1.0),
        Err(Error::InvalidSensitivity { .. })
    ));
    assert!(matches!(
        AboveThreshold::new(0.0, 1.0, -1.0),
        Err(Error::InvalidEpsilon { .. })
    ));
    assert!(matches!(
        Sparse::new(0.0, 1.0, 0, 1.0),
        Err(Error::InvalidParameter { name: "cutoff", .. })
    ));
    assert!(matches!(
        StandardSvt::new(0.0, 1.0, 1, 1.0, f64::INFINITY, Monotonicity::Monotone),
        Err(Error::InvalidEpsilon { .. })
    ));
    assert!(matches!(
        AboveThreshold::new(0.0, 1e-300, 1e10),
        Err(Error::ScaleOutOfRange { .. })
    ));
}

#[test]
fn pinned_answers_for_a_fixed_seed() {
    let mut r = rng(99);
    let mut svt = Sparse::new(0.0, 1.0, 2, 1.0).unwrap();
    let stream = [-3.0, 1.0, 2.0, -1.0, 5.0, 0.0, 4.0, 3.0];
    let first = svt.run(&stream, &mut r).unwrap();
    let mut r2 = rng(99);
    let mut again = Sparse::new(0.0, 1.0, 2, 1.0).unwrap();
    assert_eq!(
        first,
        again.run(&stream, &mut r2).unwrap(),
        "deterministic for a seed"
    );
    use Answer::{Above, Below, Value};
    assert_eq!(
        first,
        vec![Below, Below, Above, Below, Below, Below, Below, Above]
    );
    let mut numeric = NumericSparse::new(0.0, 1.0, 2, 4.0).unwrap();
    let values = numeric.run(&[-30.0, 50.0, -30.0, 60.0], &mut rng(100)).unwrap();
    let g = numeric.value_granularity();
    assert_eq!(g, 2f64.powi(-40));
    // Exact grid multiples, pinned as integers of units.
    assert_eq!(
        values,
        vec![
            Below,
            Value(54_549_587_587_853.0 * g),
            Below,
            Value(67_548_646_983_978.0 * g)
        ]
    );
}

// ---------------------------------------------------------------------------------
// Empirical (α, β)-accuracy.
// ---------------------------------------------------------------------------------

/// Fails if more than the binomial tolerance of `runs` violated a β statement:
/// `β·R + 4√(R·β(1−β))` (a correct mechanism, whose violation probability is ≤ β,
/// exceeds it with probability below 1e-4 by the normal tail; the theorems' union
/// bounds make the true rate far smaller).
fn assert_within_beta(name: &str, violations: usize, runs: usize, beta: f64) {
    let r = runs as f64;
    let tolerance = beta * r + 4.0 * (r * beta * (1.0 - beta)).sqrt();
    println!(
        "{name}: {violations}/{runs} runs violate the (α, β) statement (fraction {:.4}, β = {beta}, tolerance {:.0})",
        violations as f64 / r,
        tolerance
    );
    assert!(
        (violations as f64) <= tolerance,
        "{name}: {violations} > {tolerance}"
    );
}

#[test]
fn above_threshold_is_alpha_beta_accurate() {
    let (epsilon, k, beta, runs) = (1.0, 50, 0.1, 4000);
    let alpha = above_threshold_alpha(1.0, epsilon, k, beta).unwrap();
    // Premise of Theorem 5.1.4: every query before the last is below T − α.
    let threshold = 10.0;
    let mut stream = vec![threshold - alpha - 1.0; k];
    stream[k - 1] = threshold + alpha + 1.0;
    let mut r = rng(60);
    let mut violations = 0;
    for _ in 0..runs {
        let mut svt = AboveThreshold::new(threshold, 1.0, epsilon).unwrap();
        let answers = svt.run(&stream, &mut r).unwrap();
        let ok = answers.len() == k
            && answers.iter().zip(&stream).all(|(a, &f)| match a {
                Answer::Below => f <= threshold + alpha,
                _ => f >= threshold - alpha,
            });
        violations += usize::from(!ok);
    }
    assert_within_beta("AboveThreshold", violations, runs, beta);
}

/// `k` queries, `c` of them (the last at position k − 1) at `T + α + 1`, the rest at
/// `T − α − 1`: the premise of Theorems 5.1.6 and 5.1.9.
fn sparse_stream(threshold: f64, alpha: f64, c: usize, k: usize) -> Vec<f64> {
    let mut stream = vec![threshold - alpha - 1.0; k];
    for j in 1..=c {
        stream[j * k / c - 1] = threshold + alpha + 1.0;
    }
    stream
}

fn sparse_violation(answers: &[Answer], stream: &[f64], threshold: f64, alpha: f64) -> bool {
    answers.len() != stream.len()
        || !answers.iter().zip(stream).all(|(a, &f)| match *a {
            Answer::Below => f <= threshold + alpha,
            Answer::Above => f >= threshold - alpha,
            Answer::Value(v) => (v - f).abs() <= alpha,
        })
}

#[test]
fn sparse_is_alpha_beta_accurate_pure_and_approximate() {
    let (epsilon, c, k, beta, runs) = (1.0, 3, 60, 0.1, 2000);
    let threshold = 0.0;
    for delta in [None, Some(1e-6)] {
        let alpha = sparse_alpha(1.0, epsilon, delta, c, k, beta).unwrap();
        let stream = sparse_stream(threshold, alpha, c, k);
        let mut r = rng(70);
        let mut violations = 0;
        for _ in 0..runs {
            let mut svt = match delta {
                None => Sparse::new(threshold, 1.0, c, epsilon).unwrap(),
                Some(d) => Sparse::approximate(threshold, 1.0, c, epsilon, d).unwrap(),
            };
            let answers = svt.run(&stream, &mut r).unwrap();
            violations += usize::from(sparse_violation(&answers, &stream, threshold, alpha));
        }
        assert_within_beta(
            &format!("Sparse δ={delta:?} α={alpha:.1}"),
            violations,
            runs,
            beta,
        );
    }
}

#[test]
fn numeric_sparse_is_alpha_beta_accurate() {
    let (epsilon, c, k, beta, runs) = (1.0, 3, 60, 0.1, 2000);
    let threshold = 0.0;
    for delta in [None, Some(1e-6)] {
        let alpha = numeric_sparse_alpha(1.0, epsilon, delta, c, k, beta).unwrap();
        let stream = sparse_stream(threshold, alpha, c, k);
        let mut r = rng(80);
        let mut violations = 0;
        for _ in 0..runs {
            let mut svt = match delta {
                None => NumericSparse::new(threshold, 1.0, c, epsilon).unwrap(),
                Some(d) => NumericSparse::approximate(threshold, 1.0, c, epsilon, d).unwrap(),
            };
            let answers = svt.run(&stream, &mut r).unwrap();
            violations += usize::from(sparse_violation(&answers, &stream, threshold, alpha));
        }
        assert_within_beta(
            &format!("NumericSparse δ={delta:?} α={alpha:.1}"),
            violations,
            runs,
            beta,
        );
    }
}

#[test]
fn the_seeds_delta_positive_numeric_sparse_alpha_is_too_small() {
    // Theorem 5.1.9 as printed (δ > 0) covers the threshold part only: with its α the
    // released values alone miss by more than α in more than a β fraction of runs.
    let (epsilon, c, k, beta, delta, runs) = (1.0, 3usize, 60usize, 0.1, 1e-6f64, 10_000);
    let root512 = 512f64.sqrt();
    let logs = (k as f64).ln() + (4.0 * c as f64 / beta).ln();
    let seed_alpha = logs * (root512 + 1.0) * (c as f64 * (2.0 / delta).ln()).sqrt() / epsilon;
    let corrected = numeric_sparse_alpha(1.0, epsilon, Some(delta), c, k, beta).unwrap();
    assert!(corrected > seed_alpha);
    let threshold = 0.0;
    let stream = sparse_stream(threshold, corrected, c, k);
    let mut r = rng(81);
    let mut violations = 0;
    for _ in 0..runs {
        let mut svt = NumericSparse::approximate(threshold, 1.0, c, epsilon, delta).unwrap();
        let answers = svt.run(&stream, &mut r).unwrap();
        violations += usize::from(sparse_violation(&answers, &stream, threshold, seed_alpha));
    }
    let r = runs as f64;
    let fraction = violations as f64 / r;
    // The released values miss by more than α_T with probability 1 − (1 − e^(−α_T/b))^c
    // ≈ 0.12 here; require the count to exceed β·R by 3 binomial standard deviations.
    let excess = beta * r + 3.0 * (r * beta * (1.0 - beta)).sqrt();
    println!(
        "seed's δ>0 α = {seed_alpha:.1} (corrected {corrected:.1}): {violations}/{runs} = {fraction:.3} violate, β = {beta}"
    );
    assert!(
        violations as f64 > excess,
        "the seed's α looked sufficient: {fraction}"
    );
}

// ---------------------------------------------------------------------------------
// No panic on any input.
// ---------------------------------------------------------------------------------

fn any_float() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
        Just(0.0),
        Just(5e-324),
        Just(f64::MAX),
        Just(f64::MIN),
        (-1e6f64..1e6),
        any::<f64>(),
        (-300i32..300).prop_map(|e| 10f64.powi(e)),
    ]
}

/// Feeds `values` one by one; checks that errors are typed and leave the state as it
/// was, and that answers stop at the halt.
macro_rules! exercise {
    ($svt:expr, $values:expr, $rng:expr) => {{
        let mut svt = $svt;
        for &value in $values {
            let (before, halted) = (svt.answered(), svt.is_halted());
            match svt.query(value, $rng) {
                Ok(answer) => {
                    prop_assert!(!halted && value.is_finite());
                    prop_assert_eq!(svt.answered(), before + 1);
                    if let Some(v) = answer.value() {
                        prop_assert!(v.is_finite());
                    }
                }
                Err(Error::Halted { .. }) => prop_assert!(halted && svt.answered() == before),
                Err(Error::NonFiniteValue { .. }) => {
                    prop_assert!(!value.is_finite() && svt.answered() == before && svt.is_halted() == halted)
                }
                Err(other) => prop_assert!(false, "unexpected error {other:?}"),
            }
        }
    }};
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn no_panic_on_any_input(
        threshold in any_float(),
        sensitivity in any_float(),
        epsilon in any_float(),
        delta in any_float(),
        cutoff in 0usize..5,
        values in proptest::collection::vec(any_float(), 0..12),
        seed in any::<u64>(),
    ) {
        let mut r = rng(seed);
        if let Ok(svt) = AboveThreshold::new(threshold, sensitivity, epsilon) {
            exercise!(svt, &values, &mut r);
        }
        if let Ok(svt) = Sparse::new(threshold, sensitivity, cutoff, epsilon) {
            exercise!(svt, &values, &mut r);
        }
        if let Ok(svt) = Sparse::approximate(threshold, sensitivity, cutoff, epsilon, delta) {
            exercise!(svt, &values, &mut r);
        }
        if let Ok(svt) = NumericSparse::new(threshold, sensitivity, cutoff, epsilon) {
            exercise!(svt, &values, &mut r);
        }
        if let Ok(svt) = NumericSparse::approximate(threshold, sensitivity, cutoff, epsilon, delta) {
            exercise!(svt, &values, &mut r);
        }
        for kind in [Monotonicity::General, Monotonicity::Monotone] {
            if let Ok(svt) = StandardSvt::with_optimal_split(threshold, sensitivity, cutoff, epsilon, kind) {
                exercise!(svt, &values, &mut r);
            }
            if let Ok(svt) = StandardSvt::new(threshold, sensitivity, cutoff, epsilon, delta, kind)
                .and_then(|s| s.with_numeric_answers(epsilon))
            {
                exercise!(svt, &values, &mut r);
            }
        }
        // Batch helpers: never panic either.
        if let Ok(mut svt) = Sparse::new(threshold, sensitivity, cutoff, epsilon) {
            let _ = svt.run(&values, &mut r);
        }
    }
}
