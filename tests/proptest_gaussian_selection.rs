//! Any `f64` — NaN, ±∞, −0.0, subnormals, extremes — given to the Gaussian family,
//! the selection mechanisms and randomized response yields a typed error or a valid
//! release, never a panic.

use dpmech::{
    DiscreteGaussian, Error, Exponential, Gaussian, KaryRandomizedResponse, PermuteAndFlip,
    RandomizedResponse, ReportNoisyMax,
};

use crate::common::any_float;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

fn is_typed(e: &Error) -> bool {
    matches!(
        e,
        Error::InvalidSensitivity { .. }
            | Error::InvalidEpsilon { .. }
            | Error::InvalidDelta { .. }
            | Error::InvalidRho { .. }
            | Error::InvalidParameter { .. }
            | Error::ScaleOutOfRange { .. }
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, rng_seed: RngSeed::Fixed(0x5EED_0004), ..ProptestConfig::default() })]

    #[test]
    fn gaussian_never_panics(
        value in any_float(), sensitivity in any_float(), epsilon in any_float(),
        delta in any_float(), seed in any::<u64>(), which in 0u8..3,
    ) {
        let built = match which {
            0 => Gaussian::analytic(sensitivity, epsilon, delta),
            1 => Gaussian::classical(sensitivity, epsilon, delta),
            _ => Gaussian::zcdp(sensitivity, epsilon),
        };
        match built {
            Err(e) => prop_assert!(is_typed(&e), "{e}"),
            Ok(mechanism) => {
                let g = mechanism.granularity();
                prop_assert!(g > 0.0 && g.is_finite() && mechanism.sigma().is_finite());
                let mut rng = ChaCha20Rng::seed_from_u64(seed);
                match mechanism.release(value, &mut rng) {
                    Ok(y) => prop_assert!(value.is_finite() && y.is_finite() && (y / g).fract() == 0.0),
                    Err(e) => prop_assert!(matches!(e, Error::NonFiniteValue { .. }), "{e}"),
                }
                // A finite vector is released, or refused with a typed error when its
                // (lazily computed) vector calibration leaves the sampler's range on this
                // mechanism's grid — a function of the parameters and the length only.
                match mechanism.release_slice(&[value, 1.0], &mut rng) {
                    Ok(_) => prop_assert!(value.is_finite()),
                    Err(Error::NonFiniteValue { .. }) => prop_assert!(!value.is_finite()),
                    Err(e) => prop_assert!(value.is_finite() && matches!(e, Error::ScaleOutOfRange { .. }), "{e}"),
                }
            }
        }
        let _ = dpmech::gaussian(value, sensitivity, epsilon, delta);
    }

    #[test]
    fn discrete_gaussian_never_panics(
        value in any::<i64>(), sensitivity in any::<u64>(), epsilon in any_float(), delta in any_float(), seed in any::<u64>(),
    ) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for built in [DiscreteGaussian::zcdp(sensitivity, epsilon), DiscreteGaussian::approximate(sensitivity, epsilon, delta)] {
            match built {
                Err(e) => prop_assert!(is_typed(&e), "{e}"),
                Ok(mechanism) => {
                    let _ = mechanism.release(value, &mut rng);
                    prop_assert_eq!(mechanism.release_slice(&[value, i64::MIN], &mut rng).len(), 2);
                }
            }
        }
    }

    #[test]
    fn selection_never_panics(
        scores in proptest::collection::vec(any_float(), 0..6), sensitivity in any_float(),
        epsilon in any_float(), seed in any::<u64>(),
    ) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let valid = !scores.is_empty() && scores.iter().all(|s| s.is_finite());
        let results = [
            Exponential::new(sensitivity, epsilon).map(|m| m.release(&scores, &mut rng)),
            Exponential::with_monotonicity(sensitivity, epsilon, dpmech::Monotonicity::Monotone).map(|m| m.release(&scores, &mut rng)),
            PermuteAndFlip::new(sensitivity, epsilon).map(|m| m.release(&scores, &mut rng)),
            ReportNoisyMax::laplace(sensitivity, epsilon).map(|m| m.release(&scores, &mut rng)),
            ReportNoisyMax::exponential(sensitivity, epsilon).map(|m| m.release(&scores, &mut rng)),
        ];
        for result in results {
            match result {
                Err(e) => prop_assert!(is_typed(&e), "{e}"),
                Ok(Ok(index)) => prop_assert!(valid && index < scores.len()),
                Ok(Err(e)) => prop_assert!(!valid, "{e}"),
            }
        }
    }

    #[test]
    fn randomized_response_never_panics(epsilon in any_float(), k in any::<u64>(), value in any::<u64>(), seed in any::<u64>()) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        match RandomizedResponse::new(epsilon) {
            Err(e) => prop_assert!(matches!(e, Error::InvalidEpsilon { .. }), "{}", e),
            Ok(rr) => { let _ = rr.release(value % 2 == 0, &mut rng); }
        }
        match KaryRandomizedResponse::new(k, epsilon) {
            Err(e) => prop_assert!(is_typed(&e), "{e}"),
            Ok(rr) => match rr.release(value, &mut rng) {
                Ok(report) => prop_assert!(value < k && report < k),
                Err(e) => prop_assert!(value >= k && is_typed(&e)),
            },
        }
    }
}

/// The case a random proptest run found (value −0.0, Δ = 1, ε = f64::MAX, δ = 0.999999):
/// the scalar release works; the pair's vector calibration leaves the sampler's range on
/// the scalar's grid and is refused with a typed error, before any randomness is drawn.
#[test]
fn an_absurd_epsilon_refuses_the_vector_release_with_a_typed_error() {
    let mechanism = Gaussian::analytic(1.0, f64::MAX, 0.999_999).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(0);
    assert!(mechanism.release(-0.0, &mut rng).unwrap().is_finite());
    let refused = mechanism.release_slice(&[-0.0, 1.0], &mut rng);
    assert!(
        matches!(refused, Err(Error::ScaleOutOfRange { .. })),
        "{refused:?}"
    );
}
