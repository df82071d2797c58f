//! Parallel composition under substitution (issue 11, item 4): the review's two
//! counterexamples, each with the exact loss, the composed loss the crate reports,
//! and an audit of the composed release at that loss.
//!
//! Both releases are pairs (one output per part). The part whose data does not
//! change has the same output distribution on both datasets and independent noise,
//! so the pair's privacy loss equals the changed part's: auditing that part's output
//! audits the composed release. Run with `--nocapture` for the reports.

use dpmech::PrivacyLoss;
use dpmech::audit::{Auditor, Verdict};
use dpmech::composition::{Part, parallel, parallel_public_sizes};
use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{ClampedSum, Mean, MeanMethod};
use rand_chacha::ChaCha20Rng;

const SAMPLES: usize = 200_000;

/// Parts running `sum(.., AddRemove, ε)` on [−1, 1] with ε = 1.0 and 0.1. A
/// substitution inside the first part (−1 → +1) moves its sum by 2Δ = 2 under
/// Laplace noise of scale Δ/ε = 1: exact loss 2.0. The old rule (sum of the two
/// largest) said 1.1.
#[test]
fn within_part_substitution_on_add_remove_parts() {
    let first = ClampedSum::new((-1.0, 1.0), Neighbouring::AddRemove, 1.0).unwrap();
    let second = ClampedSum::new((-1.0, 1.0), Neighbouring::AddRemove, 0.1).unwrap();
    let parts = [
        Part::new(first.privacy_loss(), first.relation()).unwrap(),
        Part::new(second.privacy_loss(), second.relation()).unwrap(),
    ];
    let composed = parallel(&parts, Neighbouring::Substitute).unwrap();
    let exact = 2.0;
    println!("within-part substitution: exact loss {exact}, composed {composed:?}");
    assert!(composed.epsilon().unwrap() >= exact);

    let d = [-1.0, 0.5, -0.25];
    let d_prime = [1.0, 0.5, -0.25];
    let audit = |claimed: f64| {
        Auditor::pure(claimed)
            .unwrap()
            .samples(SAMPLES)
            .seed(21)
            .audit_real(
                |r: &mut ChaCha20Rng| first.release(&d, r),
                |r| first.release(&d_prime, r),
            )
            .unwrap()
    };
    let at_composed = audit(composed.epsilon().unwrap());
    println!("audit at the composed loss: {at_composed}");
    assert_eq!(at_composed.verdict, Verdict::Pass, "{at_composed}");
    // Negative control: the old rule's 1.1 is certified false on the same pair.
    let at_old = audit(1.1);
    println!("audit at the old rule's 1.1: {at_old}");
    assert_eq!(at_old.verdict, Verdict::Fail, "{at_old}");
}

/// Parts running `mean(.., ClampedSumOverPublicCount)`, stated for substitution with
/// the part's size public. A record moving from the first part to the second changes
/// the first part's count from 2 to 1: its outputs move from multiples of g/2 to
/// multiples of g (g the noise grid), a change of support, so the exact loss is
/// infinite. The old rule said 2. The crate now refuses that composition, and accepts
/// it only when the part sizes are declared public (then no record can move).
#[test]
fn cross_part_move_with_public_count_means() {
    let mean = Mean::new((-1.0, 1.0), MeanMethod::ClampedSumOverPublicCount, 1.0).unwrap();
    let part = Part::new(mean.privacy_loss(), mean.relation()).unwrap();
    assert_eq!(mean.relation(), Neighbouring::Substitute);
    let refused = parallel(&[part, part], Neighbouring::Substitute);
    println!("cross-part substitution with public-count means: {refused:?}");
    assert!(matches!(refused, Err(dpmech::Error::IncompatibleLoss { .. })));

    // Why: the move is certified far above the old rule's 2 (support change).
    let d = [0.25, 0.75];
    let d_moved = [0.25];
    let moved = Auditor::pure(2.0)
        .unwrap()
        .samples(SAMPLES)
        .seed(22)
        .audit_float_leak(
            |r: &mut ChaCha20Rng| mean.release(&d, r),
            |r| mean.release(&d_moved, r),
        )
        .unwrap();
    println!("audit of the cross-part move at the old rule's 2: {moved}");
    assert_eq!(moved.verdict, Verdict::Fail, "{moved}");

    // With public part sizes only within-part substitutions exist: loss ε = 1.
    let composed = parallel_public_sizes(&[part, part]).unwrap();
    assert_eq!(composed, PrivacyLoss::pure(1.0).unwrap());
    let d_sub = [-1.0, 0.75];
    let d_sub_prime = [1.0, 0.75];
    let within = Auditor::new(composed)
        .unwrap()
        .samples(SAMPLES)
        .seed(23)
        .audit_real(
            |r: &mut ChaCha20Rng| mean.release(&d_sub, r),
            |r| mean.release(&d_sub_prime, r),
        )
        .unwrap();
    println!("audit of a within-part substitution at the composed loss: {within}");
    assert_eq!(within.verdict, Verdict::Pass, "{within}");
}
