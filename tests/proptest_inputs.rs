//! Any `f64`/`i64`/`u64` — NaN, ±∞, −0.0, subnormals, extremes — gives either a typed
//! error or a valid release, never a panic, and every released value is finite and on
//! the mechanism's grid.

use dpmech::{Error, Geometric, Laplace};

use crate::common::any_float;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

fn is_typed_parameter_error(e: &Error) -> bool {
    matches!(
        e,
        Error::InvalidSensitivity { .. } | Error::InvalidEpsilon { .. } | Error::ScaleOutOfRange { .. }
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, rng_seed: RngSeed::Fixed(0x5EED_0002), ..ProptestConfig::default() })]

    #[test]
    fn laplace_never_panics(value in any_float(), sensitivity in any_float(), epsilon in any_float(), seed in any::<u64>()) {
        match Laplace::new(sensitivity, epsilon) {
            Err(e) => prop_assert!(is_typed_parameter_error(&e), "{e}"),
            Ok(mechanism) => {
                prop_assert!(mechanism.scale() >= sensitivity / epsilon);
                let g = mechanism.granularity();
                prop_assert!(g > 0.0 && g.is_finite());
                let mut rng = ChaCha20Rng::seed_from_u64(seed);
                match mechanism.release(value, &mut rng) {
                    Ok(y) => {
                        prop_assert!(value.is_finite());
                        prop_assert!(y.is_finite());
                        prop_assert_eq!((y / g).fract(), 0.0);
                    }
                    Err(e) => {
                        prop_assert!(!value.is_finite());
                        prop_assert!(matches!(e, Error::NonFiniteValue { .. }), "{}", e);
                    }
                }
                let slice = mechanism.release_slice(&[value, 1.0, -value], &mut rng);
                prop_assert_eq!(slice.is_ok(), value.is_finite());
                if let Ok(ys) = slice {
                    prop_assert!(ys.iter().all(|y| y.is_finite() && (y / g).fract() == 0.0));
                }
            }
        }
        let _ = dpmech::laplace(value, sensitivity, epsilon);
    }

    #[test]
    fn geometric_never_panics(value in any::<i64>(), sensitivity in any::<u64>(), epsilon in any_float(), seed in any::<u64>()) {
        match Geometric::new(sensitivity, epsilon) {
            Err(e) => prop_assert!(is_typed_parameter_error(&e), "{e}"),
            Ok(mechanism) => {
                prop_assert!(mechanism.scale() >= sensitivity as f64 / epsilon * (1.0 - 1e-15));
                let mut rng = ChaCha20Rng::seed_from_u64(seed);
                let _ = mechanism.release(value, &mut rng);
                let out = mechanism.release_slice(&[value, i64::MIN, i64::MAX], &mut rng);
                prop_assert_eq!(out.len(), 3);
            }
        }
        let _ = dpmech::geometric(value, sensitivity, epsilon);
    }

    #[test]
    fn extreme_integers_saturate(sensitivity in 1u64..1000, seed in any::<u64>()) {
        let mechanism = Geometric::new(sensitivity, 0.01).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for value in [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX] {
            let _ = mechanism.release(value, &mut rng);
        }
    }
}
