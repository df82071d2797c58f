//! Issue 32 §2: the online accountant — one release at a time, refused before any
//! noise is drawn when it would exceed the budget; a Rényi filter for adaptively chosen
//! releases beside the non-adaptive (fixed-sequence) composition.

use crate::common;

use dpmech::composition::closed::Bound;
use dpmech::composition::online::{OnlineAccountant, Release, Rule};
use dpmech::composition::pld::{Grid, Pld};
use dpmech::composition::rdp::{ORDERS, RdpCurve};
use dpmech::{Error, Laplace};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

/// A session of 100 adaptively chosen Laplace releases: the next ε depends on the last
/// output (a seeded generator decides, so the run is reproducible). Under the Rényi
/// filter it stops exactly at the budget: every accepted charge keeps the filter's sum
/// within its RDP budget, and the first charge that would exceed it is refused with
/// nothing recorded and no noise drawn.
#[test]
fn adaptive_session_stops_exactly_at_the_budget_under_the_filter() {
    let (epsilon, delta) = (3.0, 1e-6);
    let acc = OnlineAccountant::renyi_filter(epsilon, delta).unwrap();
    let Rule::RenyiFilter { order, budget } = acc.rule() else {
        panic!("a filter was asked for")
    };
    let index = acc.order_index();
    assert_eq!(ORDERS[index], order);
    let mut noise = ChaCha20Rng::seed_from_u64(32);
    let mut decide = ChaCha20Rng::seed_from_u64(7);
    let (truth, mut last) = (50.0f64, 50.0f64);
    let (mut accepted, mut sum_eps) = (0u64, 0.0f64);
    let mut refused_at = None;
    for i in 0..100u64 {
        // Adaptive choice: a smaller ε after an answer above the truth, larger below.
        let eps = common::next_epsilon(&mut decide, last, truth, (0.02, 0.06), (0.05, 0.15));
        let release = Release::laplace(eps).unwrap();
        let mechanism = Laplace::new(1.0, eps).unwrap();
        let (before, _) = acc.filter_level().unwrap();
        let spent_before = acc.spent(delta).unwrap();
        let rng_before = noise.clone();
        match acc
            .spend(&release)
            .and_then(|()| mechanism.release(truth, &mut noise))
        {
            Ok(y) => {
                last = y;
                accepted += 1;
                sum_eps += eps;
                let (now, b) = acc.filter_level().unwrap();
                assert!(now <= b && now > before);
            }
            Err(Error::BudgetExceeded { .. }) => {
                // Exactly at the budget: the accepted ones fit, this one would not.
                let r = release.rdp_curve().unwrap().at(index);
                assert!(before <= budget && before + r > budget);
                // Nothing recorded, no noise drawn.
                assert_eq!(acc.filter_level().unwrap().0, before);
                assert_eq!(acc.charges(), accepted);
                assert_eq!(acc.spent(delta).unwrap(), spent_before);
                assert_eq!(noise.clone().next_u64(), rng_before.clone().next_u64());
                refused_at = Some(i);
                break;
            }
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    let refused_at = refused_at.expect("the budget should be reached within 100 releases");
    let filter = acc.spent(delta).unwrap();
    let fixed = acc.spent_fixed_sequence(delta).unwrap();
    println!(
        "adaptive session, budget (ε = {epsilon}, δ = {delta:e}), filter at α = {order} (RDP budget {budget:.5}):\n  \
         {accepted} releases accepted, release {} refused (would exceed the budget)\n  \
         filter's spent ε = {:.4} (valid for the adaptive session: the budget {epsilon} holds)\n  \
         same releases under the non-adaptive rule: ε = {:.4} ({}), valid only had the sequence been fixed in advance\n  \
         sequential Σε = {sum_eps:.4}",
        refused_at + 1,
        filter.epsilon,
        fixed.epsilon,
        fixed.bound,
    );
    assert_eq!(filter.bound, Bound::RenyiFilter);
    assert!(filter.epsilon <= epsilon);
    // The non-adaptive composition of the same releases includes their RDP sum among
    // its closed forms, so it is never above the filter's level.
    assert!(fixed.epsilon <= filter.epsilon);
}

/// Under the filter, releases of the same Gaussian: exactly ⌊B / R(α)⌋ are accepted.
#[test]
fn filter_admits_exactly_the_number_that_fits() {
    let acc = OnlineAccountant::renyi_filter(1.0, 1e-6).unwrap();
    let Rule::RenyiFilter { budget, .. } = acc.rule() else {
        unreachable!()
    };
    let release = Release::gaussian(20.0, 1.0).unwrap();
    let r = release.rdp_curve().unwrap().at(acc.order_index());
    let mut n = 0u64;
    while acc.spend(&release).is_ok() {
        n += 1;
        assert!(n < 100_000);
    }
    // The filter adds with rounding up: n is ⌊B/r⌋ or one below it.
    let expected = (budget / r).floor() as u64;
    println!(
        "Gaussian σ=20 under a (1, 1e-6) filter: {n} releases (B/R = {:.3})",
        budget / r
    );
    assert!(n == expected || n + 1 == expected, "{n} vs {expected}");
    // A filter at an order that is not held is refused.
    assert!(matches!(
        OnlineAccountant::renyi_filter_at(1.0, 1e-6, 1.1),
        Err(Error::InvalidParameter { .. })
    ));
}

/// The fixed-sequence rule: each charge is checked against the certified composition
/// of everything accepted plus the new release; the first that would exceed the budget
/// is refused before drawing.
#[test]
fn fixed_sequence_refuses_before_drawing_and_matches_the_declared_plan() {
    let (epsilon, delta, step) = (2.0, 1e-6, 0.1);
    let acc = OnlineAccountant::fixed_sequence(epsilon, delta).unwrap();
    assert_eq!(acc.spent(delta).unwrap().epsilon, 0.0);
    let mechanism = Laplace::new(1.0, step).unwrap();
    let release = Release::laplace(step).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let mut n = 0u64;
    loop {
        let before = rng.clone();
        let spent = acc.spent(delta).unwrap();
        match acc
            .spend(&release)
            .and_then(|()| mechanism.release(1.0, &mut rng))
        {
            Ok(_) => n += 1,
            Err(Error::BudgetExceeded { requested, .. }) => {
                assert!(requested.epsilon().unwrap() > epsilon);
                assert_eq!(acc.spent(delta).unwrap(), spent);
                assert_eq!(acc.charges(), n);
                assert_eq!(rng.clone().next_u64(), before.clone().next_u64());
                break;
            }
            Err(e) => panic!("{e}"),
        }
        assert!(n < 1000);
    }
    let online = acc.spent(delta).unwrap();
    let declared = Pld::laplace(step, Grid::default())
        .unwrap()
        .self_compose(n)
        .unwrap();
    let declared_eps = declared.epsilon_for_delta(delta).unwrap();
    let declared_next = declared
        .compose(&Pld::laplace(step, Grid::default()).unwrap())
        .epsilon_for_delta(delta)
        .unwrap();
    println!(
        "fixed sequence within (2, 1e-6): {n} × Laplace(0.1) accepted (sequential would allow 20), \
         spent {:.4} ({}); declared plan of {n}: {declared_eps:.4}, of {}: {declared_next:.4}",
        online.epsilon,
        online.bound,
        n + 1
    );
    assert!(online.epsilon <= epsilon);
    assert!(n > 20, "tighter than sequential composition");
    // Composing one at a time and by squaring differ only by certified rounding.
    assert!((online.epsilon - declared_eps).abs() <= 0.01 * declared_eps);
    assert!(declared_next > epsilon * 0.99);
}

#[test]
fn mixed_releases_and_thread_safety() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<OnlineAccountant>();
    let acc = std::sync::Arc::new(OnlineAccountant::fixed_sequence(5.0, 1e-6).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let acc = acc.clone();
            std::thread::spawn(move || {
                let r = match t {
                    0 => Release::gaussian(10.0, 1.0).unwrap(),
                    1 => Release::randomized_response(0.5).unwrap(),
                    2 => Release::zcdp(0.01).unwrap(),
                    _ => Release::rdp(RdpCurve::poisson_subsampled_gaussian(1.0, 1.0, 0.01).unwrap()),
                };
                (0..5).filter(|_| acc.spend(&r).is_ok()).count()
            })
        })
        .collect();
    let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(acc.charges(), total as u64);
    let spent = acc.spent(1e-6).unwrap();
    println!(
        "mixed session: {total} charges, spent {:.4} ({})",
        spent.epsilon, spent.bound
    );
    assert!(spent.epsilon <= 5.0);
    // An (ε, δ) release is charged under the fixed-sequence rule (sequential / PLD).
    let acc = OnlineAccountant::fixed_sequence(1.0, 1e-5).unwrap();
    acc.spend(&Release::approximate(0.5, 1e-7).unwrap()).unwrap();
    assert!(acc.spend(&Release::approximate(0.6, 1e-7).unwrap()).is_err());
}
