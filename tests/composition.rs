//! Composition: the seeds' numbers, the optimal-composition table, zCDP conversions,
//! the inverse questions, and properties (monotonicity, no panic/NaN, typed errors).
//! Run with `cargo test -p dpmech --test main -- composition:: --nocapture` to see the figures.
#![allow(clippy::float_cmp)] // exact comparisons are intended where the arithmetic is exact

use dpmech::composition::{Part, advanced, optimal, parallel, parallel_public_sizes, sequential, zcdp};
use dpmech::sensitivity::Neighbouring;
use dpmech::{Error, PrivacyLoss};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

// ---------------------------------------------------------------------------------
// Seed 001, Ejemplo 1.2.18 (erratum 9)

#[test]
fn seed_advanced_composition_k10000() {
    let k = 10_000u64;
    let slack = (-32.0f64).exp();
    let eps = advanced::epsilon(k, 1.0 / 801.0, slack).unwrap();
    // Independent plain-f64 evaluation of the theorem: √(2·10⁴·32)/801 + 10⁴/801·(e^{1/801} − 1).
    let plain = (2.0 * 10_000.0 * 32.0f64).sqrt() / 801.0 + 10_000.0 / 801.0 * (1.0f64 / 801.0).exp_m1();
    println!("advanced composition, k = 10000, delta' = e^-32, eps0 = 1/801: eps' = {eps:.6}");
    assert!(eps > 1.0, "the textbook claim eps' <= 1 is false: {eps}");
    assert!(eps >= plain && eps - plain < 1e-12, "{eps} vs {plain}");
    assert!((eps - 1.0143).abs() < 5e-5);

    let best = advanced::max_epsilon_per_step(k, 1.0, slack).unwrap();
    println!(
        "largest per-step eps with eps' <= 1: {best:.6e} (1/{:.6})",
        1.0 / best
    );
    assert!(advanced::epsilon(k, best, slack).unwrap() <= 1.0);
    // Maximal up to the bisection's resolution: a few ulps more breaks the bound.
    let above = best * (1.0 + 1e-12);
    assert!(advanced::epsilon(k, above, slack).unwrap() > 1.0);
    assert!(best < 1.0 / 801.0);
}

// ---------------------------------------------------------------------------------
// Optimal composition

/// Reference δ_opt from the Murtagh–Vadhan / KOV sum in log space with ln Γ (an
/// independent code path from the library's ratio walk).
fn kov_reference(k: u64, eps: f64, eps_total: f64) -> f64 {
    use statrs::function::gamma::ln_gamma;
    let kf = k as f64;
    let log_norm = kf * (1.0 + eps.exp()).ln();
    let mut sum = 0.0;
    for l in 0..=k {
        let lf = l as f64;
        let a = (kf - lf) * eps;
        let b = eps_total + lf * eps;
        if a <= b {
            continue;
        }
        let log_c = ln_gamma(kf + 1.0) - ln_gamma(lf + 1.0) - ln_gamma(kf - lf + 1.0);
        // C(k,l)(e^a − e^b) = exp(log_c + a)(1 − e^{b−a})
        sum += (log_c + a - log_norm).exp() * -(b - a).exp_m1();
    }
    sum
}

#[test]
fn optimal_composition_table() {
    for (k, eps, totals) in [
        (10u64, 0.1f64, vec![0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9]),
        (100, 0.5, vec![5.0, 10.0, 15.0, 20.0, 25.0, 30.0]),
    ] {
        println!("optimal composition (KOV 2015), k = {k}, eps = {eps}:");
        for t in totals {
            let d = optimal::delta(k, eps, t).unwrap();
            let r = kov_reference(k, eps, t);
            let adv = advanced::delta_slack_for(k, eps, t).ok();
            println!(
                "  eps_total = {t:>5}: delta = {d:.10e}   (reference {r:.10e}; advanced needs delta' = {})",
                adv.map_or("-".to_string(), |a| format!("{a:.3e}"))
            );
            assert!(d >= r * (1.0 - 1e-11), "below the reference: {d} < {r}");
            assert!(d <= r * (1.0 + 1e-9) + 1e-300, "{d} vs {r}");
            if let Some(a) = adv {
                assert!(d <= a, "optimal {d} above advanced {a}");
            }
        }
    }
}

#[test]
fn optimal_is_never_above_advanced_on_a_grid() {
    let mut checked = 0;
    for k in [1u64, 2, 3, 5, 10, 30, 100, 1_000, 10_000, 100_000] {
        for eps in [1e-3, 0.01, 0.05, 0.1, 0.5, 1.0, 2.0] {
            for slack in [0.5, 1e-2, 1e-6, 1e-10, (-32.0f64).exp()] {
                let total = advanced::epsilon(k, eps, slack).unwrap();
                let d = optimal::delta(k, eps, total).unwrap();
                assert!(
                    d <= slack,
                    "k {k} eps {eps} slack {slack}: optimal delta {d} at eps' {total}"
                );
                // ...and the exact rule is also never worse than sequential composition.
                let seq = sequential::homogeneous_epsilon(k, eps).unwrap();
                assert_eq!(optimal::delta(k, eps, seq).unwrap(), 0.0);
                checked += 1;
            }
        }
    }
    println!("optimal <= advanced on {checked} grid points");
}

/// δ(ε_g) of k independent binary randomized responses by enumerating all 2^k
/// outcome vectors: Σ_o (P(o) − e^{ε_g} Q(o))⁺.
fn brute_force_rr(k: u32, eps: f64, eps_total: f64) -> f64 {
    let p = eps.exp() / (1.0 + eps.exp());
    let q = 1.0 - p;
    let mut delta = 0.0;
    for o in 0u32..(1 << k) {
        let ones = o.count_ones() as i32;
        let zeros = k as i32 - ones;
        let pd = p.powi(ones) * q.powi(zeros);
        let qd = q.powi(ones) * p.powi(zeros);
        delta += (pd - eps_total.exp() * qd).max(0.0);
    }
    delta
}

#[test]
fn kov_formula_matches_brute_force_randomized_response() {
    let mut worst: f64 = 0.0;
    for k in 1..=12u32 {
        for eps in [0.05, 0.1, 0.5, 1.0, 2.0] {
            for frac in [0.0, 0.05, 0.13, 0.25, 0.4, 0.5, 0.77, 0.99] {
                let t = frac * f64::from(k) * eps;
                let brute = brute_force_rr(k, eps, t);
                let d = optimal::delta(u64::from(k), eps, t).unwrap();
                // The library returns an upper bound, tight to ~1e-13 here; the brute
                // force sums 2^k terms in f64 (relative error ≲ 2^k·1e-16).
                let tol = 1e-12 * brute + 1e-15;
                assert!(d >= brute - tol, "k {k} eps {eps} t {t}: {d} < brute {brute}");
                assert!(
                    d <= brute + tol + 1e-12 * brute,
                    "k {k} eps {eps} t {t}: {d} vs {brute}"
                );
                worst = worst.max((d - brute).abs() / brute.max(1e-300));
            }
        }
    }
    println!("KOV formula vs brute-force RR enumeration (k <= 12): max relative gap {worst:.2e}");
    // Negative control: the same check rejects a formula with the wrong per-step ε.
    let (k, eps, t) = (8u32, 0.5, 1.0);
    let wrong = optimal::delta(u64::from(k), 0.9 * eps, t).unwrap();
    assert!(wrong < brute_force_rr(k, eps, t) * (1.0 - 1e-3));
}

#[test]
fn optimal_is_stable_for_a_million_steps() {
    let start = std::time::Instant::now();
    let k = 1_000_000u64;
    let eps = 1e-3;
    for t in [1.0, 2.0, 3.0, 5.0] {
        let d = optimal::delta(k, eps, t).unwrap();
        let r = kov_reference_normal(k, eps, t);
        println!("k = 1e6, eps = 1e-3, eps_total = {t}: delta = {d:.10e} (normal approx {r:.3e})");
        assert!(d.is_finite() && d > 0.0 && d < 1.0);
        // The privacy loss is ≈ N(kε·tanh(ε/2), k ε²(1 − tanh²)): same order of magnitude.
        assert!(d / r < 3.0 && r / d < 3.0, "{d} vs {r}");
    }
    let e = optimal::max_epsilon_per_step(k, 1.0, 1e-6).unwrap();
    println!(
        "k = 1e6, target (1, 1e-6): optimal per-step eps = {e:.6e} ({:?})",
        start.elapsed()
    );
    assert!(optimal::delta(k, e, 1.0).unwrap() <= 1e-6);
}

/// Gaussian approximation of δ for many small steps: the privacy loss L is ≈ N(μ, σ²)
/// with μ = kε·tanh(ε/2), σ² = kε²(1 − tanh²(ε/2)), and
/// E[(1 − e^{t−L})⁺] = Φ((μ − t)/σ) − e^{t − μ + σ²/2}·Φ((μ − σ² − t)/σ).
fn kov_reference_normal(k: u64, eps: f64, t: f64) -> f64 {
    use statrs::function::erf::erfc;
    let phi = |x: f64| 0.5 * erfc(-x / std::f64::consts::SQRT_2);
    let th = (eps / 2.0).tanh();
    let mu = k as f64 * eps * th;
    let s2 = k as f64 * eps * eps * (1.0 - th * th);
    let sigma = s2.sqrt();
    phi((mu - t) / sigma) - (t - mu + s2 / 2.0).exp() * phi((mu - s2 - t) / sigma)
}

// ---------------------------------------------------------------------------------
// zCDP

/// ε(δ) of the CKS bound by a dense plain-f64 scan over α (independent of the library's
/// minimiser): grid 1 + 10^x, x ∈ [−6, 6] in steps of 10⁻⁴.
fn cks_reference(rho: f64, delta: f64) -> f64 {
    let l = (1.0 / delta).ln();
    let mut best = f64::INFINITY;
    for i in -60_000..=60_000 {
        let a = 1.0 + 10f64.powf(f64::from(i) * 1e-4);
        let v = rho * a + (l + (a - 1.0) * (1.0 - 1.0 / a).ln() - a.ln()) / (a - 1.0);
        best = best.min(v);
    }
    best
}

#[test]
fn zcdp_conversions_table() {
    let delta = 1e-5;
    println!("zCDP -> (eps, delta = 1e-5):");
    for rho in [0.01, 0.5, 10.0] {
        let simple = zcdp::epsilon_simple(rho, delta).unwrap();
        let tight = zcdp::epsilon_tight(rho, delta).unwrap();
        let reference = cks_reference(rho, delta);
        println!(
            "  rho = {rho:>5}: simple rho + 2 sqrt(rho ln(1/delta)) = {simple:.6}, tight (CKS20) = {tight:.6}"
        );
        assert!(tight <= simple, "tight {tight} > simple {simple}");
        assert!(
            tight <= reference + 1e-12,
            "minimiser worse than a grid: {tight} vs {reference}"
        );
        assert!(
            tight >= reference * (1.0 - 1e-6),
            "below the infimum? {tight} vs {reference}"
        );
        // Round trip: the δ of the tight bound at that ε is δ (to the search resolution).
        let back = zcdp::delta_tight(rho, tight).unwrap();
        assert!(
            back <= delta * (1.0 + 1e-6) && back >= delta * (1.0 - 1e-3),
            "{back}"
        );
    }
    // Pure → zCDP and composition.
    assert_eq!(zcdp::pure_to_zcdp(0.5).unwrap(), 0.125);
    assert_eq!(zcdp::compose(&[0.125, 0.25]).unwrap(), 0.375);
}

// ---------------------------------------------------------------------------------
// Inverse questions

#[test]
fn per_step_allowances_fit_and_are_ordered() {
    let (target, delta) = (1.0, 1e-6);
    println!("per-step eps for a total (1, 1e-6):");
    for k in [1u64, 10, 100, 1_000, 10_000] {
        let seq = sequential::max_epsilon_per_step(k, target).unwrap();
        let adv = advanced::max_epsilon_per_step(k, target, delta).unwrap();
        let opt = optimal::max_epsilon_per_step(k, target, delta).unwrap();
        let zc = zcdp::max_epsilon_per_step(k, target, delta).unwrap();
        println!("  k = {k:>5}: sequential {seq:.6e}  advanced {adv:.6e}  zCDP {zc:.6e}  optimal {opt:.6e}");
        // Each allowance satisfies its own forward computation...
        assert!(sequential::homogeneous_epsilon(k, seq).unwrap() <= target);
        assert!(advanced::epsilon(k, adv, delta).unwrap() <= target);
        assert!(optimal::delta(k, opt, target).unwrap() <= delta);
        let rho = zcdp::compose(&vec![zcdp::pure_to_zcdp(zc).unwrap(); k as usize]).unwrap();
        assert!(zcdp::epsilon_tight(rho, delta).unwrap() <= target * (1.0 + 1e-12));
        // ...and the exact rule dominates every valid rule.
        assert!(opt >= seq && opt >= adv && opt >= zc, "k {k}");
        // Maximality (optimal): 1e-9 relatively more breaks it.
        assert!(optimal::delta(k, opt * (1.0 + 1e-9), target).unwrap() > delta);
    }
    // δ for a given total ε: optimal needs less slack than advanced.
    let d_opt = optimal::delta(1000, 0.01, 1.0).unwrap();
    let d_adv = advanced::delta_slack_for(1000, 0.01, 1.0).unwrap();
    println!("k = 1000, eps = 0.01, eps_total = 1: delta optimal {d_opt:.3e}, advanced {d_adv:.3e}");
    assert!(d_opt <= d_adv);
    let e_opt = optimal::epsilon(1000, 0.01, 1e-6).unwrap();
    assert!(optimal::delta(1000, 0.01, e_opt).unwrap() <= 1e-6);
    assert!(optimal::delta(1000, 0.01, e_opt * (1.0 - 1e-9)).unwrap() > 1e-6);
}

// ---------------------------------------------------------------------------------
// Properties

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        Just(f64::MIN_POSITIVE / 4.0),
        Just(f64::MAX),
        Just(1.0),
        any::<f64>(),
        -10.0..10.0f64,
        1e-12..1.0f64,
    ]
}

fn any_k() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1u64),
        Just(u64::MAX),
        0..100_000u64,
        any::<u64>()
    ]
}

fn ok_not_nan(r: Result<f64, Error>) -> Result<(), TestCaseError> {
    if let Ok(v) = r {
        prop_assert!(!v.is_nan(), "NaN escaped");
        prop_assert!(v >= 0.0, "negative result {v}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, rng_seed: RngSeed::Fixed(0x5EED_0003), ..ProptestConfig::default() })]

    #[test]
    fn no_panic_and_no_nan_on_any_input(k in any_k(), a in any_f64(), b in any_f64(), c in any_f64()) {
        // Keep the exact optimal computation affordable: k above 2^26 is refused
        // anyway, and k in (10^6, 2^26] takes up to a few ms per call.
        let k_opt = if k > 1_000_000 && k <= optimal::MAX_STEPS { k % 1_000_000 } else { k };
        ok_not_nan(sequential::epsilon_sum(&[a, b]))?;
        ok_not_nan(sequential::homogeneous_epsilon(k, a))?;
        ok_not_nan(sequential::max_epsilon_per_step(k, a))?;
        ok_not_nan(advanced::epsilon(k, a, b))?;
        ok_not_nan(advanced::max_epsilon_per_step(k, a, b))?;
        ok_not_nan(advanced::delta_slack_for(k, a, b))?;
        ok_not_nan(optimal::delta(k_opt, a, b))?;
        ok_not_nan(zcdp::pure_to_zcdp(a))?;
        ok_not_nan(zcdp::compose(&[a, b, c]))?;
        ok_not_nan(zcdp::epsilon_simple(a, b))?;
        ok_not_nan(zcdp::epsilon_tight(a, b))?;
        ok_not_nan(zcdp::delta_tight(a, b))?;
        ok_not_nan(zcdp::delta_simple(a, b))?;
        let losses = [
            PrivacyLoss::Pure { epsilon: a },
            PrivacyLoss::Approximate { epsilon: b, delta: c },
            PrivacyLoss::Zcdp { rho: c },
            PrivacyLoss::RandomDp { epsilon: a, gamma: c },
        ];
        for l in losses {
            if let Ok(total) = sequential::sequential(&[l, l]) {
                prop_assert!(total.epsilon().is_none_or(|e| e.is_finite() && e > 0.0));
            }
            let _ = advanced::advanced(k, l, b);
            for relation in [Neighbouring::AddRemove, Neighbouring::Substitute] {
                if let Ok(part) = Part::new(l, relation) {
                    let _ = parallel(&[part, part], Neighbouring::Substitute);
                    let _ = parallel_public_sizes(&[part]);
                }
            }
        }
    }

    #[test]
    fn slow_inverse_questions_do_not_panic(k in 0..5_000u64, a in any_f64(), b in any_f64()) {
        ok_not_nan(optimal::max_epsilon_per_step(k, a, b))?;
        ok_not_nan(optimal::epsilon(k, a, b))?;
        ok_not_nan(zcdp::max_rho(a, b))?;
        ok_not_nan(zcdp::max_epsilon_per_step(k, a, b))?;
    }

    #[test]
    fn invalid_parameters_give_typed_errors(bad_eps in prop_oneof![Just(f64::NAN), Just(0.0), -1e9..0.0f64, Just(f64::INFINITY)],
                                            bad_delta in prop_oneof![Just(f64::NAN), Just(0.0), Just(1.0), 1.0..1e9f64, -1.0..0.0f64]) {
        prop_assert!(matches!(advanced::epsilon(10, bad_eps, 1e-6), Err(Error::InvalidEpsilon { .. })), "expected a typed error");
        prop_assert!(matches!(advanced::epsilon(10, 0.1, bad_delta), Err(Error::InvalidDelta { .. })), "expected a typed error");
        prop_assert!(matches!(advanced::epsilon(0, 0.1, 1e-6), Err(Error::InvalidParameter { name: "k", .. })), "expected a typed error");
        prop_assert!(matches!(optimal::delta(10, bad_eps, 1.0), Err(Error::InvalidEpsilon { .. })), "expected a typed error");
        prop_assert!(matches!(optimal::max_epsilon_per_step(10, 1.0, bad_delta), Err(Error::InvalidDelta { .. })), "expected a typed error");
        prop_assert!(matches!(zcdp::epsilon_tight(bad_eps, 1e-6), Err(Error::InvalidRho { .. })), "expected a typed error");
        prop_assert!(matches!(zcdp::epsilon_tight(0.5, bad_delta), Err(Error::InvalidDelta { .. })), "expected a typed error");
        prop_assert!(matches!(sequential::epsilon_sum(&[0.5, bad_eps]), Err(Error::InvalidEpsilon { .. })), "expected a typed error");
        prop_assert!(matches!(dpmech::Accountant::pure(bad_eps), Err(Error::InvalidEpsilon { .. })), "expected a typed error");
        // An (ε, δ) budget with δ = 0 is the pure budget; every other bad δ is refused.
        if bad_delta == 0.0 {
            prop_assert_eq!(dpmech::Accountant::approximate(1.0, bad_delta).unwrap().budget(), PrivacyLoss::Pure { epsilon: 1.0 });
        } else {
            prop_assert!(matches!(dpmech::Accountant::approximate(1.0, bad_delta), Err(Error::InvalidDelta { .. })), "expected a typed error");
        }
    }

    #[test]
    fn sequential_and_advanced_are_monotone(k1 in 1..100_000u64, dk in 0..100_000u64,
                                            e1 in 1e-6..2.0f64, de in 0.0..2.0f64,
                                            d1 in 1e-12..0.5f64, dd in 0.0..0.5f64) {
        let (k2, e2, d2) = (k1 + dk, e1 + de, d1 + dd);
        prop_assert!(sequential::homogeneous_epsilon(k1, e1).unwrap() <= sequential::homogeneous_epsilon(k2, e2).unwrap());
        prop_assert!(sequential::epsilon_sum(&[e1, e1]).unwrap() <= sequential::epsilon_sum(&[e1, e2]).unwrap());
        let a = |k, e, d| advanced::epsilon(k, e, d).unwrap();
        prop_assert!(a(k1, e1, d1) <= a(k2, e1, d1));
        prop_assert!(a(k1, e1, d1) <= a(k1, e2, d1));
        prop_assert!(a(k1, e1, d2) <= a(k1, e1, d1)); // more slack, less ε
        prop_assert!(sequential::max_epsilon_per_step(k2, e1).unwrap() <= sequential::max_epsilon_per_step(k1, e2).unwrap());
        prop_assert!(advanced::max_epsilon_per_step(k2, e1, d1).unwrap() <= advanced::max_epsilon_per_step(k1, e2, d2).unwrap());
    }

    #[test]
    fn optimal_and_zcdp_are_monotone(k1 in 1..2_000u64, dk in 0..2_000u64,
                                     e1 in 1e-4..1.0f64, de in 0.0..1.0f64,
                                     t1 in 0.0..5.0f64, dt in 0.0..5.0f64,
                                     r1 in 1e-6..10.0f64, dr in 0.0..10.0f64,
                                     d1 in 1e-12..0.5f64, dd in 0.0..0.5f64) {
        // The exact δ_opt is monotone; the computed upper bound may wobble by its own
        // error bound (≤ 1e-12 relative here), so compare with that slack.
        let o = |k, e, t| optimal::delta(k, e, t).unwrap();
        let slack = 1e-12;
        let (k2, e2, t2) = (k1 + dk, e1 + de, t1 + dt);
        prop_assert!(o(k1, e1, t1) <= o(k2, e1, t1) * (1.0 + slack) + 1e-300);
        prop_assert!(o(k1, e1, t1) <= o(k1, e2, t1) * (1.0 + slack) + 1e-300);
        prop_assert!(o(k1, e1, t2) <= o(k1, e1, t1) * (1.0 + slack) + 1e-300);
        let z = |r, d| zcdp::epsilon_tight(r, d).unwrap();
        let (r2, d2) = (r1 + dr, d1 + dd);
        prop_assert!(z(r1, d1) <= z(r2, d1) * (1.0 + slack));
        prop_assert!(z(r1, d2) <= z(r1, d1) * (1.0 + slack));
        let s = |r, d| zcdp::epsilon_simple(r, d).unwrap();
        prop_assert!(s(r1, d1) <= s(r2, d1) && s(r1, d2) <= s(r1, d1));
        prop_assert!(z(r1, d1) <= s(r1, d1));
    }

    #[test]
    fn accountant_never_exceeds_its_budget(budget in 1e-3..10.0f64,
                                           charges in prop::collection::vec(prop_oneof![1e-4..3.0f64, any_f64()], 1..60)) {
        let acc = dpmech::Accountant::approximate(budget, 1e-6).unwrap();
        let mut accepted = Vec::new();
        for (i, c) in charges.iter().enumerate() {
            let loss = if i % 2 == 0 { PrivacyLoss::Pure { epsilon: *c } } else { PrivacyLoss::Approximate { epsilon: *c, delta: 1e-7 } };
            if acc.spend(loss).is_ok() { accepted.push(loss); }
        }
        let spent = acc.spent();
        prop_assert!(spent.epsilon().unwrap() <= budget);
        // The reported remainder is always spendable (it is rounded down).
        if let PrivacyLoss::Approximate { epsilon, .. } = acc.remaining()
            && epsilon > 0.0
        {
            prop_assert!(acc.spend(PrivacyLoss::Pure { epsilon }).is_ok(), "remaining not spendable");
            prop_assert!(acc.spent().epsilon().unwrap() <= budget);
            accepted.push(PrivacyLoss::Pure { epsilon });
        }
        prop_assert!(spent.delta().unwrap() <= 1e-6);
        prop_assert_eq!(acc.ledger().len(), accepted.len());
        if !accepted.is_empty() {
            let seq = sequential::sequential(&accepted).unwrap();
            // Both round up from the same exact sum; they may differ by the order of
            // the roundings, never by more than the budget allows.
            let now = acc.spent().epsilon().unwrap();
            prop_assert!(seq.epsilon().unwrap() <= now * (1.0 + 1e-12));
            prop_assert!(now <= budget);
        }
    }
}

// ---------------------------------------------------------------------------------
// The accountant under contention

#[test]
fn accountant_under_eight_threads() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    // Charges are multiples of 2⁻¹⁰ so every sum is exact: "spent" must then equal the
    // sum of the successful charges exactly, not approximately.
    const UNIT: f64 = 1.0 / 1024.0;
    const THREADS: u64 = 8;
    const ATTEMPTS: u64 = 100_000;
    let budget_units = 1_000 * 1024u64; // ε = 1000
    let acc = Arc::new(dpmech::Accountant::pure(budget_units as f64 * UNIT).unwrap());
    let released = Arc::new(AtomicU64::new(0));
    let start = std::time::Instant::now();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (acc, released) = (Arc::clone(&acc), Arc::clone(&released));
            std::thread::spawn(move || {
                // A per-thread xorshift picks charge sizes (test scheduling only).
                let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (t + 1);
                let (mut ok_units, mut ok_count, mut refused) = (0u64, 0u64, 0u64);
                for _ in 0..ATTEMPTS {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let units = 1 + x % 64; // 1..64 units: mean ≈ 32 → ~25 600 ε requested in all
                    let loss = PrivacyLoss::pure(units as f64 * UNIT).unwrap();
                    match acc.spend(loss) {
                        Ok(()) => {
                            released.fetch_add(1, Ordering::SeqCst);
                            ok_units += units;
                            ok_count += 1;
                        }
                        Err(Error::BudgetExceeded { .. }) => refused += 1,
                        Err(e) => panic!("unexpected error {e}"),
                    }
                }
                (ok_units, ok_count, refused)
            })
        })
        .collect();
    let (mut ok_units, mut ok_count, mut refused) = (0u64, 0u64, 0u64);
    for h in handles {
        let (u, c, r) = h.join().unwrap();
        ok_units += u;
        ok_count += c;
        refused += r;
    }
    let spent = acc.spent().epsilon().unwrap();
    println!(
        "8 threads x 100000 attempts in {:?}: {ok_count} charges accepted, {refused} refused; \
         spent {spent} of budget 1000 (sum of accepted charges {})",
        start.elapsed(),
        ok_units as f64 * UNIT
    );
    assert_eq!(ok_count + refused, THREADS * ATTEMPTS);
    assert!(
        refused > 0,
        "the budget must have been exhausted for this test to mean anything"
    );
    assert!(ok_units <= budget_units);
    assert_eq!(spent, ok_units as f64 * UNIT);
    // Refused charges released nothing: the mechanism ran exactly once per accepted charge.
    assert_eq!(released.load(Ordering::SeqCst), ok_count);
    assert_eq!(acc.ledger().len() as u64, ok_count);
    assert_eq!(acc.charges(), ok_count);
    // Nothing larger than the remainder fits any more.
    let remaining = acc.remaining().epsilon().unwrap();
    assert_eq!(remaining, (budget_units - ok_units) as f64 * UNIT);
}

#[test]
fn plan_accountant_uses_the_declared_rule() {
    use dpmech::composition::{Plan, PlanRule};
    let plan = Plan {
        steps: 10_000,
        per_step_epsilon: 1.0 / 801.0,
        rule: PlanRule::Advanced {
            delta_slack: (-32.0f64).exp(),
        },
    };
    let acc = dpmech::Accountant::with_plan(plan).unwrap();
    let total = acc.budget().epsilon().unwrap();
    println!(
        "plan of 10000 steps of 1/801 under advanced composition: total {}",
        acc.budget()
    );
    assert!(total > 1.0 && total < 1.0144);
    for _ in 0..10_000 {
        acc.spend(PrivacyLoss::pure(1.0 / 801.0).unwrap()).unwrap();
    }
    assert!(matches!(
        acc.spend(PrivacyLoss::pure(1e-6).unwrap()),
        Err(Error::BudgetExceeded { .. })
    ));
    assert_eq!(acc.spent(), acc.budget());
    assert!(matches!(
        acc.spend(PrivacyLoss::approximate(1e-6, 1e-9).unwrap()),
        Err(Error::IncompatibleLoss { .. })
    ));
}

/// δ-approximate ρ-zCDP: checked constructor, sequential composition (Σρ, Σδ; pure as
/// ε²/2), no group-privacy conversion, and the conversion to (ε, δ)-DP.
#[test]
fn approximate_zcdp_composes_and_converts() {
    let az = PrivacyLoss::approximate_zcdp(0.2, 1e-6).unwrap();
    let total = sequential(&[
        PrivacyLoss::zcdp(0.1).unwrap(),
        az,
        PrivacyLoss::pure(1.0).unwrap(),
    ])
    .unwrap();
    let PrivacyLoss::ApproximateZcdp { rho, delta } = total else {
        panic!("expected approximate zCDP, got {total}");
    };
    assert!(
        (rho - 0.8).abs() < 1e-12 && rho >= 0.1 + 0.2 + 0.5 && delta == 1e-6,
        "{total}"
    );
    let approx = PrivacyLoss::approximate(0.5, 1e-6).unwrap();
    assert!(matches!(
        sequential(&[az, approx]),
        Err(Error::IncompatibleLoss { .. })
    ));

    for (rho, delta) in [(0.0, 1e-6), (-1.0, 1e-6), (f64::NAN, 1e-6), (f64::INFINITY, 1e-6)] {
        assert!(matches!(
            PrivacyLoss::approximate_zcdp(rho, delta),
            Err(Error::InvalidRho { .. })
        ));
    }
    for delta in [0.0, 1.0, -1e-6, 1.5, f64::NAN] {
        assert!(matches!(
            PrivacyLoss::approximate_zcdp(0.5, delta),
            Err(Error::InvalidDelta { .. })
        ));
    }
    assert!(matches!(
        dpmech::sensitivity::convert_loss(az, Neighbouring::AddRemove, Neighbouring::Substitute),
        Err(Error::IncompatibleLoss { .. })
    ));
    assert_eq!(
        dpmech::sensitivity::convert_loss(az, Neighbouring::Substitute, Neighbouring::Substitute).unwrap(),
        az
    );

    let PrivacyLoss::Approximate { epsilon, delta } = zcdp::approximate_zcdp_to_dp(0.5, 1e-6, 1e-6).unwrap()
    else {
        panic!("expected (epsilon, delta)-DP");
    };
    let formula = 0.5 + 2.0 * (0.5 * 1e6f64.ln()).sqrt();
    assert!(
        epsilon >= formula && (epsilon - formula) / formula < 1e-12,
        "{epsilon} vs {formula}"
    );
    assert!((2e-6..2e-6 * (1.0 + 1e-12)).contains(&delta), "{delta}");
}
