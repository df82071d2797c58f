//! The `Accountant` the statistics and SQL layers use (issue 32 §2, issue 33 §2): two
//! charging verbs (`spend`, `release`) with an optional [`Charge`], and the choice
//! between composition of a sequence fixed in advance (the default) and a privacy
//! filter valid for adaptively chosen releases.

use crate::common;

use dpmech::audit::CountingRng;
use dpmech::composition::online::{OnlineAccountant, Release};
use dpmech::composition::pld::{Grid, Pld, PldAccountant, PldStep};
use dpmech::composition::rdp::{ORDERS, RdpCurve};
use dpmech::composition::{Adaptivity, Charge};
use dpmech::sensitivity::Neighbouring;
use dpmech::{Accountant, Error, Laplace, PrivacyLoss};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

/// A session of up to 100 adaptively chosen Laplace releases — the next ε depends on
/// the last output — against an `(ε, δ) = (2, 10⁻⁶)` budget under the Rényi filter.
/// It stops exactly at the budget: every accepted release keeps the filter's sum
/// `Σ Rᵢ(α)` within its RDP budget `B`, the first that would exceed it is refused with
/// nothing recorded and **no random word drawn**. The same releases are then accounted
/// under the non-adaptive rules for comparison.
#[test]
fn adaptive_session_stops_exactly_at_the_budget_under_the_filter() {
    let (epsilon, delta) = (2.0, 1e-6);
    let acc = Accountant::filter(PrivacyLoss::approximate(epsilon, delta).unwrap()).unwrap();
    assert_eq!(acc.adaptivity(), Adaptivity::Filter);
    let (order, start, budget) = acc.filter_level().expect("an (ε, δ) filter is a Rényi filter");
    assert_eq!(start, 0.0);
    let index = ORDERS.iter().position(|&a| a == order).unwrap();
    // The filter's budget, recomputed from its formula (rounded down there).
    let b = epsilon - (1.0 - 1.0 / order).ln() - ((1.0 / delta).ln() - order.ln()) / (order - 1.0);
    assert!(budget <= b && budget >= b - 1e-9, "B = {budget} vs {b}");

    let mut noise = CountingRng::new(ChaCha20Rng::seed_from_u64(32));
    let mut decide = ChaCha20Rng::seed_from_u64(7);
    let (truth, mut last) = (50.0f64, 50.0f64);
    let mut accepted: Vec<f64> = Vec::new(); // the charged ε of each accepted release
    let mut refused_at = None;
    for i in 0..100u64 {
        // Adaptive choice: a smaller ε after an answer above the truth, larger below.
        let eps = common::next_epsilon(&mut decide, last, truth, (0.02, 0.04), (0.04, 0.08));
        let mechanism = Laplace::new(1.0, eps).unwrap();
        let charged = mechanism.privacy_loss().epsilon().unwrap();
        let r = RdpCurve::pure(charged).unwrap().at(index);
        let (_, before, _) = acc.filter_level().unwrap();
        let (draws, charges, spent) = (noise.draws(), acc.charges(), acc.spent());
        match acc.release(&mechanism, truth, &mut noise) {
            Ok(y) => {
                last = y;
                accepted.push(charged);
                let (_, now, _) = acc.filter_level().unwrap();
                assert!(
                    now <= budget && now >= before + r,
                    "{before} + {r} -> {now} (B = {budget})"
                );
                assert!(noise.draws() > draws);
            }
            Err(Error::BudgetExceeded { .. }) => {
                // Exactly at the budget: the accepted ones fit, this one would not.
                assert!(
                    before <= budget && before + r > budget,
                    "{before} + {r} vs {budget}"
                );
                // Nothing recorded, nothing drawn.
                assert_eq!(noise.draws(), draws, "the refusal came before any noise");
                assert_eq!(acc.charges(), charges);
                assert_eq!(acc.spent(), spent);
                assert_eq!(acc.filter_level().unwrap().1, before);
                refused_at = Some((i, r));
                break;
            }
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    let (refused_at, refused_r) = refused_at.expect("the budget should be reached within 100 releases");
    let n = accepted.len() as u64;
    assert_eq!(refused_at, n);
    assert_eq!(acc.charges(), n);
    let filter = acc.spent().epsilon().unwrap();

    // The same releases under the non-adaptive rules: basic composition (the default
    // accountant's Σε) and the best certified fixed-sequence composition (PLD of the
    // same Laplace releases, never above the closed forms).
    let sequential: f64 = accepted.iter().sum();
    let default = Accountant::approximate(epsilon, delta).unwrap();
    let default_admits = accepted
        .iter()
        .take_while(|&&e| default.spend(PrivacyLoss::pure(e).unwrap()).is_ok())
        .count();
    let fixed = OnlineAccountant::fixed_sequence(1e6, delta).unwrap();
    for &e in &accepted {
        fixed.spend(&Release::laplace(e).unwrap()).unwrap();
    }
    let fixed = fixed.spent_fixed_sequence(delta).unwrap();
    println!(
        "adaptive session, budget (ε = {epsilon}, δ = {delta:e}), Rényi filter at α = {order} (RDP budget {budget:.5}):\n  \
         {n} releases accepted, release {} refused before drawing (Σ R(α) = {:.5} + {:.5} > B)\n  \
         filter's spent ε = {filter:.4} (the guarantee of the adaptive session is the budget, ε = {epsilon})\n  \
         the same releases under the non-adaptive rules: sequential Σε = {sequential:.4}; \
         certified fixed-sequence composition ε = {:.4} ({})\n  \
         a default (basic composition) accountant with the same budget admits {default_admits} of them",
        refused_at + 1,
        acc.filter_level().unwrap().1,
        refused_r,
        fixed.epsilon,
        fixed.bound,
    );
    assert!(filter <= epsilon);
    // Many small charges: the filter admits more than basic composition would.
    assert!(sequential > epsilon, "Σε = {sequential}");
    assert!((default_admits as u64) < n);
    // Had the sequence been fixed in advance, its composition is never above the filter.
    assert!(fixed.epsilon <= filter, "{} > {filter}", fixed.epsilon);
}

/// The filter mode's rules: pure and zCDP budgets keep their sums (basic composition is
/// itself a filter); an `(ε, δ)` filter refuses `(ε, δ)` charges with δ > 0 (no RDP
/// bound), accepts zCDP charges, and reports what is left as a ρ.
#[test]
fn filter_mode_rules() {
    // Pure budget: the same Σε as the default, and the same refusals.
    let filter = Accountant::filter(PrivacyLoss::pure(1.0).unwrap()).unwrap();
    let default = Accountant::pure(1.0).unwrap();
    assert_eq!(default.adaptivity(), Adaptivity::FixedSequence);
    assert!(filter.filter_level().is_none());
    for e in [0.5, 0.25, 0.5, 0.25] {
        let loss = PrivacyLoss::pure(e).unwrap();
        assert_eq!(filter.spend(loss).is_ok(), default.spend(loss).is_ok(), "ε = {e}");
    }
    assert_eq!(filter.spent(), PrivacyLoss::Pure { epsilon: 1.0 });
    assert_eq!(filter.spent(), default.spent());

    // (ε, δ) budget under the Rényi filter.
    let acc = Accountant::filter(PrivacyLoss::approximate(1.0, 1e-6).unwrap()).unwrap();
    assert_eq!(
        acc.spent(),
        PrivacyLoss::Approximate {
            epsilon: 0.0,
            delta: 0.0
        }
    );
    assert!(matches!(
        acc.spend(PrivacyLoss::approximate(0.1, 1e-8).unwrap()),
        Err(Error::IncompatibleLoss { .. })
    ));
    assert_eq!(acc.charges(), 0);
    acc.spend(PrivacyLoss::zcdp(0.001).unwrap()).unwrap();
    acc.spend(PrivacyLoss::approximate(0.05, 0.0).unwrap()).unwrap(); // δ = 0: pure
    let (order, sum, budget) = acc.filter_level().unwrap();
    let PrivacyLoss::Zcdp { rho } = acc.remaining() else {
        panic!("a Rényi filter reports what is left as a ρ")
    };
    assert!(
        rho > 0.0 && rho * order <= budget - sum,
        "{rho}·{order} vs {budget} − {sum}"
    );
    // A ρ-zCDP charge a little above what is left is refused; what is left, halved, fits.
    assert!(matches!(
        acc.spend(PrivacyLoss::zcdp(rho * 1.001).unwrap()),
        Err(Error::BudgetExceeded { .. })
    ));
    acc.spend(PrivacyLoss::zcdp(rho / 2.0).unwrap()).unwrap();
    assert!(acc.spent().epsilon().unwrap() <= 1.0);

    // A budget too small for any order is a typed error, not a filter that refuses all.
    assert!(matches!(
        Accountant::filter(PrivacyLoss::approximate(1e-6, 1e-12).unwrap()),
        Err(Error::Unattainable { .. })
    ));
}

/// Two verbs with an optional [`Charge`]: the label and the stated relation reach the
/// ledger and the conversion, for `spend` and `release` alike; the online and PLD
/// accountants charge the same way.
#[test]
fn one_way_to_charge() {
    let acc = Accountant::pure(2.0)
        .unwrap()
        .with_relation(Neighbouring::Substitute);
    let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(1));
    let laplace = Laplace::new(1.0, 0.25).unwrap();
    acc.spend(PrivacyLoss::pure(0.25).unwrap()).unwrap();
    acc.spend(Charge::new(PrivacyLoss::pure(0.25).unwrap()).labelled("count"))
        .unwrap();
    acc.release(&laplace, 1.0, &mut rng).unwrap();
    acc.release(
        Charge::of(&laplace)
            .labelled("sum")
            .relation(Neighbouring::AddRemove),
        1.0,
        &mut rng,
    )
    .unwrap();
    let ledger = acc.ledger();
    let labels: Vec<_> = ledger.iter().map(|e| e.label.as_deref()).collect();
    assert_eq!(labels, [None, Some("count"), Some("Laplace"), Some("sum")]);
    // The add/remove guarantee counted double under substitution (group privacy).
    let charged = ledger[3].charged.epsilon().unwrap();
    assert_eq!(charged, 2.0 * laplace.privacy_loss().epsilon().unwrap());
    // A substitution-only guarantee cannot be charged to an add/remove budget, and the
    // refusal draws nothing.
    let unbounded = Accountant::pure(2.0).unwrap();
    let draws = rng.draws();
    assert!(matches!(
        unbounded.release(
            Charge::of(&laplace).relation(Neighbouring::Substitute),
            1.0,
            &mut rng
        ),
        Err(Error::IncompatibleLoss { .. })
    ));
    assert_eq!(rng.draws(), draws);

    // The online accountant: spend a description, release a mechanism (described by its
    // guarantee); it converts no relation.
    let online = OnlineAccountant::renyi_filter(1.0, 1e-6).unwrap();
    online.spend(&Release::laplace(0.1).unwrap()).unwrap();
    online.release(&laplace, 1.0, &mut rng).unwrap();
    assert_eq!(online.charges(), 2);
    let draws = rng.draws();
    assert!(matches!(
        online.release(
            Charge::of(&laplace).relation(Neighbouring::AddRemove),
            1.0,
            &mut rng
        ),
        Err(Error::IncompatibleLoss { .. })
    ));
    assert_eq!((online.charges(), rng.draws()), (2, draws));

    // The PLD accountant: the charge's label names the step.
    let plan = vec![PldStep::new(
        "count",
        Pld::laplace(0.25, Grid::default()).unwrap(),
        2,
    )];
    let pld = PldAccountant::new(1.0, 1e-6, plan).unwrap();
    pld.spend("count").unwrap();
    pld.release(Charge::of(&laplace).labelled("count"), 1.0, &mut rng)
        .unwrap();
    let draws = rng.draws();
    for refused in [
        pld.release(&laplace, 1.0, &mut rng), // no step named
        pld.release(Charge::of(&laplace).labelled("count"), 1.0, &mut rng), // used up
    ] {
        assert!(matches!(
            refused,
            Err(Error::IncompatibleLoss { .. } | Error::BudgetExceeded { .. })
        ));
    }
    assert_eq!(rng.draws(), draws);
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 200, rng_seed: proptest::test_runner::RngSeed::Fixed(33), ..Default::default() })]

    /// Whatever sequence of pure and zCDP charges an analyst tries (accepted or not),
    /// the Rényi filter's spent ε never exceeds the budget, its sum never exceeds `B`,
    /// and a refused charge changes nothing.
    #[test]
    fn the_filter_never_overspends(
        budget in 0.1f64..5.0,
        charges in proptest::collection::vec((proptest::bool::ANY, 1e-4f64..2.0), 1..60),
    ) {
        let acc = Accountant::filter(PrivacyLoss::approximate(budget, 1e-6).unwrap()).unwrap();
        for (pure, size) in charges {
            let loss = if pure { PrivacyLoss::pure(size) } else { PrivacyLoss::zcdp(size / 10.0) }.unwrap();
            let before = (acc.charges(), acc.filter_level().unwrap().1, acc.spent());
            match acc.spend(loss) {
                Ok(()) => proptest::prop_assert_eq!(acc.charges(), before.0 + 1),
                Err(Error::BudgetExceeded { .. }) => {
                    proptest::prop_assert_eq!((acc.charges(), acc.filter_level().unwrap().1, acc.spent()), before);
                }
                Err(e) => proptest::prop_assert!(false, "unexpected error {}", e),
            }
            let (_, sum, b) = acc.filter_level().unwrap();
            proptest::prop_assert!(sum <= b);
            proptest::prop_assert!(acc.spent().epsilon().unwrap() <= budget);
        }
    }
}

/// δ-approximate ρ-zCDP budgets (what partition selection under zCDP spends): Σρ and Σδ
/// against the budget, pure and zCDP charges with δ = 0, (ε, δ) charges refused; the
/// other budgets refuse approximate zCDP with δ > 0.
#[test]
fn approximate_zcdp_budget_sums_rho_and_delta() {
    let acc = Accountant::approximate_zcdp(1.0, 1e-5).unwrap();
    let part = PrivacyLoss::approximate_zcdp(0.4, 4e-6).unwrap();
    acc.spend(part).unwrap();
    acc.spend(part).unwrap();
    assert_eq!(
        acc.spent(),
        PrivacyLoss::ApproximateZcdp {
            rho: 0.8,
            delta: 8e-6
        }
    );
    assert!(matches!(acc.spend(part), Err(Error::BudgetExceeded { .. })));
    assert_eq!(acc.charges(), 2);
    acc.spend(PrivacyLoss::zcdp(0.1).unwrap()).unwrap();
    acc.spend(PrivacyLoss::pure(0.2).unwrap()).unwrap(); // ρ = 0.02
    let PrivacyLoss::Zcdp { rho: counted } = acc.ledger()[3].charged else {
        panic!("a pure charge counts as zCDP");
    };
    assert!((0.02..0.02 + 1e-15).contains(&counted), "{counted}");
    let PrivacyLoss::ApproximateZcdp { rho, delta } = acc.spent() else {
        panic!("spent is of the budget's kind");
    };
    assert!((rho - 0.92).abs() < 1e-12 && delta == 8e-6, "{rho} {delta}");
    let PrivacyLoss::ApproximateZcdp { rho, delta } = acc.remaining() else {
        panic!("remaining is of the budget's kind");
    };
    assert!(
        (rho - 0.08).abs() < 1e-12 && (delta - 2e-6).abs() < 1e-18,
        "{rho} {delta}"
    );
    assert!(matches!(
        acc.spend(PrivacyLoss::approximate(0.01, 1e-9).unwrap()),
        Err(Error::IncompatibleLoss { .. })
    ));
    assert_eq!(acc.charges(), 4);

    let z = Accountant::zcdp(1.0).unwrap();
    let with_delta = PrivacyLoss::ApproximateZcdp {
        rho: 0.1,
        delta: 1e-6,
    };
    assert!(matches!(z.spend(with_delta), Err(Error::IncompatibleLoss { .. })));
    z.spend(PrivacyLoss::ApproximateZcdp { rho: 0.1, delta: 0.0 })
        .unwrap();
    assert_eq!(z.spent(), PrivacyLoss::Zcdp { rho: 0.1 });

    for other in [
        Accountant::pure(1.0).unwrap(),
        Accountant::approximate(1.0, 1e-5).unwrap(),
        Accountant::filter(PrivacyLoss::approximate(1.0, 1e-5).unwrap()).unwrap(),
    ] {
        assert!(matches!(
            other.spend(with_delta),
            Err(Error::IncompatibleLoss { .. })
        ));
        assert_eq!(other.charges(), 0);
    }
    // No filter theorem for approximate zCDP: refused rather than over-claimed.
    assert!(matches!(
        Accountant::filter(PrivacyLoss::approximate_zcdp(1.0, 1e-5).unwrap()),
        Err(Error::IncompatibleLoss { .. })
    ));
}
