//! Issue 42 §3: no NaN out of a public function. Every public function of the crate
//! that takes a float parameter and used to return a bare `f64` (or an `Option`)
//! refuses NaN, ±∞ and out-of-domain values with a typed error naming the offending
//! value; one valid call per function returns a finite value.
//!
//! The functions (the sweep of `pub fn … f64 … -> f64` over `src/`, less the
//! arithmetic of `privacy::round` and the functions that read private records, which
//! map every `f64` by a documented rule):
//! `Exponential::accuracy_gap`, `Quantile::rank_error`, `audit::{upper_tail,
//! lower_tail, clopper_pearson_lower, clopper_pearson_upper}`,
//! `mechanisms::{analytic_gaussian_delta, zcdp_delta}`, `ClosedForms::{epsilon, delta}`.
//! The accuracy functions that already returned `Result` are checked beside them.

use dpmech::composition::closed::ClosedForms;
use dpmech::mechanisms::{analytic_gaussian_delta, zcdp_delta};
use dpmech::statistics::QuantileGrid;
use dpmech::statistics::quantile::Quantile;
use dpmech::{Error, Exponential, Gaussian, Laplace, audit};

const NON_FINITE: [f64; 3] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

/// `result` is the typed refusal `expected` says, and carries the offending `value`
/// (bit for bit, so NaN matches NaN).
fn refused<T: std::fmt::Debug>(call: &str, result: Result<T, Error>, value: f64, expected: &str) {
    let error = match result {
        Err(e) => e,
        Ok(v) => panic!("{call}: expected a typed error for {value}, got Ok({v:?})"),
    };
    let (kind, carried) = match &error {
        Error::InvalidParameter { name, value, .. } => (format!("InvalidParameter({name})"), *value),
        Error::InvalidEpsilon { value } => ("InvalidEpsilon".to_string(), *value),
        Error::InvalidDelta { value } => ("InvalidDelta".to_string(), *value),
        Error::InvalidRho { value } => ("InvalidRho".to_string(), *value),
        Error::InvalidSensitivity { value } => ("InvalidSensitivity".to_string(), *value),
        other => panic!("{call}({value}): unexpected error {other:?}"),
    };
    assert_eq!(kind, expected, "{call}({value}): {error}");
    assert_eq!(carried.to_bits(), value.to_bits(), "{call}({value}): {error}");
}

/// A valid call returns a finite value.
fn finite(call: &str, result: Result<f64, Error>) -> f64 {
    let v = result.unwrap_or_else(|e| panic!("{call}: {e}"));
    assert!(v.is_finite(), "{call}: {v}");
    v
}

#[test]
fn exponential_accuracy_gap() {
    let mechanism = Exponential::new(1.0, 1.0).unwrap();
    for t in NON_FINITE.into_iter().chain([-1.0, -f64::MIN_POSITIVE]) {
        refused(
            "accuracy_gap",
            mechanism.accuracy_gap(10, t),
            t,
            "InvalidParameter(t)",
        );
    }
    assert!(matches!(
        mechanism.accuracy_gap(0, 1.0),
        Err(Error::EmptyInput { .. })
    ));
    // (2Δu/ε)(ln 10 + 3) + g, rounded up.
    let gap = finite("accuracy_gap", mechanism.accuracy_gap(10, 3.0));
    assert!(gap >= 2.0 * (10f64.ln() + 3.0) && gap <= 2.0 * (10f64.ln() + 3.0) + 1e-5);
    // A gap beyond f64 is refused, not returned as +∞.
    assert!(matches!(
        mechanism.accuracy_gap(10, f64::MAX),
        Err(Error::Unattainable { .. })
    ));
}

#[test]
fn quantile_rank_error() {
    let grid = QuantileGrid::new(0.0, 100.0, 64).unwrap();
    let median = Quantile::new(&grid, 0.5, 1.0, 1).unwrap();
    for beta in NON_FINITE.into_iter().chain([0.0, 1.0, -0.5, 2.0]) {
        refused(
            "rank_error",
            median.rank_error(beta),
            beta,
            "InvalidParameter(beta)",
        );
    }
    let r = finite("rank_error", median.rank_error(0.05));
    // 2(Δu + g)/ε·ln(65/β) + g with Δu = 1/2.
    assert!(r >= 65f64.ln() - 0.05f64.ln(), "{r}");
    // Every β in (0, 1) is met, down to the smallest subnormal.
    finite("rank_error", median.rank_error(f64::from_bits(1)));
}

#[test]
fn binomial_tails_and_clopper_pearson() {
    for p in NON_FINITE.into_iter().chain([-0.1, 1.5]) {
        refused(
            "upper_tail",
            audit::upper_tail(10, 3, p),
            p,
            "InvalidParameter(p)",
        );
        refused(
            "lower_tail",
            audit::lower_tail(10, 3, p),
            p,
            "InvalidParameter(p)",
        );
    }
    for alpha in NON_FINITE.into_iter().chain([0.0, 1.0, -0.1, 1.5]) {
        refused(
            "clopper_pearson_lower",
            audit::clopper_pearson_lower(5, 10, alpha),
            alpha,
            "InvalidParameter(alpha)",
        );
        refused(
            "clopper_pearson_upper",
            audit::clopper_pearson_upper(5, 10, alpha),
            alpha,
            "InvalidParameter(alpha)",
        );
    }
    // Pr[X ≥ 3] + Pr[X ≤ 2] = 1 for X ~ Binomial(10, 0.3).
    let up = finite("upper_tail", audit::upper_tail(10, 3, 0.3));
    let low = finite("lower_tail", audit::lower_tail(10, 2, 0.3));
    assert!((up + low - 1.0).abs() < 1e-12, "{up} + {low}");
    let lo = finite("clopper_pearson_lower", audit::clopper_pearson_lower(5, 10, 0.05));
    let hi = finite("clopper_pearson_upper", audit::clopper_pearson_upper(5, 10, 0.05));
    assert!(0.0 < lo && lo < 0.5 && 0.5 < hi && hi < 1.0, "[{lo}, {hi}]");
}

#[test]
fn gaussian_delta_functions() {
    for bad in NON_FINITE.into_iter().chain([0.0, -1.0]) {
        refused(
            "analytic_gaussian_delta(Δ)",
            analytic_gaussian_delta(bad, 1.0, 1.0),
            bad,
            "InvalidSensitivity",
        );
        refused(
            "analytic_gaussian_delta(σ)",
            analytic_gaussian_delta(1.0, bad, 1.0),
            bad,
            "InvalidParameter(sigma)",
        );
        refused("zcdp_delta(ρ)", zcdp_delta(bad, 1.0), bad, "InvalidRho");
    }
    for bad in NON_FINITE.into_iter().chain([-1.0]) {
        refused(
            "analytic_gaussian_delta(ε)",
            analytic_gaussian_delta(1.0, 1.0, bad),
            bad,
            "InvalidEpsilon",
        );
        refused("zcdp_delta(ε)", zcdp_delta(0.5, bad), bad, "InvalidEpsilon");
    }
    // ε = 0 is a valid question (the total variation distance).
    finite("analytic_gaussian_delta", analytic_gaussian_delta(1.0, 1.0, 0.0));
    let delta = finite(
        "analytic_gaussian_delta",
        analytic_gaussian_delta(1.0, 3.7307, 1.0),
    );
    assert!(delta > 0.99e-5 && delta < 1e-5, "{delta}");
    let delta = finite("zcdp_delta", zcdp_delta(0.5, 3.0));
    assert!(delta > 0.0 && delta < 0.01, "{delta}");
}

#[test]
fn closed_forms_answers() {
    let forms = ClosedForms::pure(1.0).unwrap();
    for delta in NON_FINITE.into_iter().chain([0.0, 1.0, -0.5]) {
        refused(
            "ClosedForms::epsilon",
            forms.epsilon(delta),
            delta,
            "InvalidDelta",
        );
    }
    for epsilon in [f64::NAN, f64::NEG_INFINITY, -1.0] {
        refused(
            "ClosedForms::delta",
            forms.delta(epsilon),
            epsilon,
            "InvalidEpsilon",
        );
    }
    // One 1-DP step: ε(10⁻⁶) is at most 1 (optimal composition shaves a little off).
    let (epsilon, _) = forms.epsilon(1e-6).unwrap().unwrap();
    assert!(epsilon > 0.99 && epsilon <= 1.0, "{epsilon}");
    let (delta, _) = forms.delta(1.0).unwrap().unwrap();
    assert_eq!(delta, 0.0);
    // +∞ asks for the mass of infinite loss: none for a pure step.
    assert_eq!(forms.delta(f64::INFINITY).unwrap().unwrap().0, 0.0);
}

/// The accuracy functions that already returned `Result`: the same table, so that a
/// later change cannot let NaN through them either.
#[test]
fn accuracy_functions_that_already_refused() {
    let gaussian = Gaussian::analytic(1.0, 1.0, 1e-6).unwrap();
    let laplace = Laplace::new(1.0, 1.0).unwrap();
    for beta in NON_FINITE.into_iter().chain([0.0, 1.0, -0.5]) {
        refused(
            "Gaussian::accuracy",
            gaussian.accuracy(beta),
            beta,
            "InvalidParameter(beta)",
        );
        refused(
            "Laplace::confidence_half_width",
            laplace.confidence_half_width(beta),
            beta,
            "InvalidParameter(beta)",
        );
        refused(
            "laplace_half_width",
            dpmech::statistics::accuracy::laplace_half_width(1.0, beta),
            beta,
            "InvalidParameter(beta)",
        );
    }
    finite("Gaussian::accuracy", gaussian.accuracy(0.05));
    finite(
        "Laplace::confidence_half_width",
        laplace.confidence_half_width(0.05),
    );
}
