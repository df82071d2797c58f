//! Any `f64` — NaN, ±∞, −0.0, subnormals, extremes — given to the Gaussian family,
//! the selection mechanisms and randomized response yields a typed error or a valid
//! release, never a panic.

use dpmech::{
    DiscreteGaussian, Error, Exponential, Gaussian, KaryRandomizedResponse, PermuteAndFlip,
    RandomizedResponse, ReportNoisyMax,
};
mod common;

use common::any_float;
use proptest::prelude::*;
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
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

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
                let slice = mechanism.release_slice(&[value, 1.0], &mut rng);
                prop_assert_eq!(slice.is_ok(), value.is_finite());
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
