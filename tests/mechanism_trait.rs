//! Every non-interactive mechanism speaks the one `Mechanism` trait, and the
//! accountant's generic path charges before it draws: an overspend is refused with
//! zero random words consumed.

use dpmech::audit::CountingRng;
use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{ClampedSum, Mean, MeanMethod};
use dpmech::{
    Accountant, DiscreteGaussian, Error, Exponential, Gaussian, Geometric, KaryRandomizedResponse, Laplace,
    Mechanism, PermuteAndFlip, PrivacyLoss, RandomizedResponse, ReportNoisyMax,
};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use std::fmt::Debug;

/// Generic over any mechanism: releases are reproducible for a fixed seed, the
/// accountant's generic path charges exactly `privacy_loss()`, and a release that
/// would overspend is refused before a single random word is drawn.
fn exercise<I: Copy, M: Mechanism<I>>(name: &str, mechanism: &M, input: I)
where
    M::Output: PartialEq + Debug,
{
    let loss = mechanism.privacy_loss();
    let first = mechanism
        .release(input, &mut ChaCha20Rng::seed_from_u64(1))
        .unwrap();
    let again = mechanism
        .release(input, &mut ChaCha20Rng::seed_from_u64(1))
        .unwrap();
    assert_eq!(first, again, "{name}: same seed, same release");

    let accountant = Accountant::new(loss).unwrap();
    let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(2));
    accountant.release(mechanism, input, &mut rng).unwrap();
    assert!(rng.draws() > 0, "{name}: a release draws randomness");
    assert_eq!(accountant.charges(), 1, "{name}");
    assert_eq!(
        accountant.ledger()[0].requested,
        loss,
        "{name}: charged its own loss"
    );

    let before = rng.draws();
    let refused = accountant.release(mechanism, input, &mut rng);
    assert!(
        matches!(refused, Err(Error::BudgetExceeded { .. })),
        "{name}: {refused:?}"
    );
    assert_eq!(rng.draws(), before, "{name}: refused before any randomness");
    assert_eq!(accountant.charges(), 1, "{name}: nothing charged by the refusal");
}

#[test]
fn every_mechanism_goes_through_the_generic_path() {
    let reals = [1.5, -2.0, 40.25];
    let integers = [3, -7, 120];
    let scores = [10.0, 12.0, 11.5, 3.0];
    exercise("Laplace", &Laplace::new(1.0, 0.5).unwrap(), 10.0);
    exercise("Laplace slice", &Laplace::new(3.0, 0.5).unwrap(), &reals[..]);
    exercise("Gaussian", &Gaussian::analytic(1.0, 0.5, 1e-6).unwrap(), 10.0);
    exercise("Gaussian slice", &Gaussian::zcdp(1.0, 0.5).unwrap(), &reals[..]);
    exercise("Geometric", &Geometric::new(1, 0.5).unwrap(), 120i64);
    exercise("Geometric slice", &Geometric::new(3, 0.5).unwrap(), &integers[..]);
    exercise(
        "DiscreteGaussian",
        &DiscreteGaussian::zcdp(1, 0.5).unwrap(),
        120i64,
    );
    exercise(
        "DiscreteGaussian slice",
        &DiscreteGaussian::zcdp(2, 0.5).unwrap(),
        &integers[..],
    );
    exercise("Exponential", &Exponential::new(1.0, 0.5).unwrap(), &scores[..]);
    exercise(
        "PermuteAndFlip",
        &PermuteAndFlip::new(1.0, 0.5).unwrap(),
        &scores[..],
    );
    exercise(
        "ReportNoisyMax",
        &ReportNoisyMax::exponential(1.0, 0.5).unwrap(),
        &scores[..],
    );
    exercise("RandomizedResponse", &RandomizedResponse::new(0.5).unwrap(), true);
    exercise(
        "RandomizedResponse slice",
        &RandomizedResponse::coin_flip(),
        &[true, false][..],
    );
    exercise(
        "KaryRandomizedResponse",
        &KaryRandomizedResponse::new(4, 0.5).unwrap(),
        2u64,
    );
    exercise(
        "KaryRandomizedResponse slice",
        &KaryRandomizedResponse::new(4, 0.5).unwrap(),
        &[0u64, 3][..],
    );
    exercise(
        "ClampedSum",
        &ClampedSum::new((0.0, 10.0), Neighbouring::AddRemove, 0.5).unwrap(),
        &reals[..],
    );
    exercise(
        "Mean",
        &Mean::new((0.0, 50.0), MeanMethod::Normalised, 0.5).unwrap(),
        &reals[..],
    );
}

#[test]
fn a_refused_input_never_draws_randomness() {
    let accountant = Accountant::pure(10.0).unwrap();
    let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(3));
    assert!(
        accountant
            .release(&Laplace::new(1.0, 0.5).unwrap(), f64::NAN, &mut rng)
            .is_err()
    );
    let empty: &[f64] = &[];
    assert!(
        accountant
            .release(&Exponential::new(1.0, 0.5).unwrap(), empty, &mut rng)
            .is_err()
    );
    assert!(
        accountant
            .release(&KaryRandomizedResponse::new(4, 0.5).unwrap(), 9u64, &mut rng)
            .is_err()
    );
    assert_eq!(rng.draws(), 0);
    // Each was charged (the charge comes first and is not refunded: the safe side).
    assert_eq!(accountant.spent(), PrivacyLoss::Pure { epsilon: 1.5 });
}
