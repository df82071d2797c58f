//! Accuracy of additive noise, and what a given ε means for an adversary's beliefs.
//!
//! Every half-width here is rounded **up** (a promised interval is never too narrow),
//! and every "ε needed" is rounded up too (enough budget to meet the target).
//!
//! Every confidence level `β ∈ (0, 1)` is met, however small (down to the smallest
//! subnormal, 5·10⁻³²⁴, where `ln(1/β) ≈ 744.4`): `ln(c/β)` is computed as
//! `ln c − ln β`, so `1/β` never overflows. A half-width that is not a finite `f64`
//! (a scale near `f64::MAX`) is refused with [`Error::Unattainable`], never returned
//! as `+∞`.

use crate::Error;
use crate::mechanisms::accuracy::{finite_half_width, ln_ratio_up};
use crate::mechanisms::check_beta;
use crate::privacy::{check_epsilon, check_sensitivity, round};

fn check_positive(name: &'static str, value: f64) -> Result<f64, Error> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::InvalidParameter {
            name,
            value,
            reason: "must be finite and > 0",
        })
    }
}

/// Half-width `w = b·ln(1/β)` with `Pr[|Lap(b)| ≥ w] = β`: a released value lies within
/// `w` of the true one with probability `1 − β`.
///
/// ```
/// let w = dpmech::statistics::accuracy::laplace_half_width(2.0, 0.05)?;
/// assert!((w - 2.0 * 20f64.ln()).abs() < 1e-12);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] for a non-positive or non-finite `scale` or β outside
/// (0, 1); [`Error::Unattainable`] when the half-width overflows `f64`.
pub fn laplace_half_width(scale: f64, beta: f64) -> Result<f64, Error> {
    let scale = check_positive("scale", scale)?;
    let beta = check_beta(beta)?;
    finite_half_width(round::mul_up(scale, ln_ratio_up(1.0, beta)))
}

/// The smallest ε for which the Laplace mechanism of sensitivity `Δ` has half-width at
/// most `half_width` at level `β`: `ε = Δ·ln(1/β)/w` (rounded up).
///
/// # Errors
///
/// [`Error::InvalidSensitivity`], [`Error::InvalidParameter`] for a non-positive or
/// non-finite `half_width` or β outside (0, 1), and [`Error::InvalidEpsilon`] when the
/// ε needed overflows.
pub fn laplace_epsilon_for_half_width(sensitivity: f64, half_width: f64, beta: f64) -> Result<f64, Error> {
    let sensitivity = check_sensitivity(sensitivity)?;
    let half_width = check_positive("half_width", half_width)?;
    let beta = check_beta(beta)?;
    let epsilon = round::div_up(round::mul_up(sensitivity, ln_ratio_up(1.0, beta)), half_width);
    check_epsilon(epsilon)
}

/// The vector bound: for `n` coordinates with i.i.d. `Lap(b)` noise,
/// `Pr[‖noise‖∞ ≥ ln(n/β)·b] ≤ β` (union bound).
///
/// # Errors
///
/// As [`laplace_half_width`], plus [`Error::EmptyInput`] for `n = 0`.
pub fn laplace_vector_half_width(scale: f64, n: usize, beta: f64) -> Result<f64, Error> {
    let scale = check_positive("scale", scale)?;
    let beta = check_beta(beta)?;
    if n == 0 {
        return Err(Error::EmptyInput { what: "the vector" });
    }
    finite_half_width(round::mul_up(scale, ln_ratio_up(round::u64_up(n as u64), beta)))
}

/// The smallest ε (found by bisection, to a relative `10⁻⁹`, returning the end of the
/// bracket that meets the target) for which the analytic Gaussian mechanism of L2
/// sensitivity `Δ₂` at `δ` has [`Gaussian::accuracy`](crate::Gaussian::accuracy)`(β)`
/// at most `half_width`.
///
/// ```
/// use dpmech::{Gaussian, statistics::accuracy::gaussian_epsilon_for_half_width};
/// let epsilon = gaussian_epsilon_for_half_width(1.0, 5.0, 0.05, 1e-6)?;
/// assert!(Gaussian::analytic(1.0, epsilon, 1e-6)?.accuracy(0.05)? <= 5.0);
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] for a non-positive or non-finite `half_width`, β outside
/// (0, 1), or when no ε up to `10⁶` reaches the target; those of
/// [`Gaussian::analytic`](crate::Gaussian::analytic) for `l2_sensitivity` and δ.
pub fn gaussian_epsilon_for_half_width(
    l2_sensitivity: f64,
    half_width: f64,
    beta: f64,
    delta: f64,
) -> Result<f64, Error> {
    let half_width = check_positive("half_width", half_width)?;
    check_beta(beta)?;
    let meets = |epsilon: f64| -> Result<bool, Error> {
        Ok(crate::Gaussian::analytic(l2_sensitivity, epsilon, delta)?.accuracy(beta)? <= half_width)
    };
    let (mut low, mut high) = (1e-9f64, 1e6f64);
    if !meets(high)? {
        return Err(Error::InvalidParameter {
            name: "half_width",
            value: half_width,
            reason: "no epsilon up to 1e6 gives this accuracy",
        });
    }
    if meets(low)? {
        return Ok(low);
    }
    // Invariant: `low` misses the target, `high` meets it; accuracy falls as ε grows.
    while high / low > 1.0 + 1e-9 {
        let middle = (low * high).sqrt();
        if meets(middle)? {
            high = middle;
        } else {
            low = middle;
        }
    }
    Ok(high)
}

/// The smallest integer `k` with `Pr[|Z| > k] ≤ β` for discrete Laplace noise of scale
/// `τ` (`α = e^(−1/τ)`, `Pr[|Z| > k] = 2α^(k+1)/(1 + α)`).
///
/// # Errors
///
/// [`Error::InvalidParameter`] for a non-positive or non-finite `scale` or β outside
/// (0, 1).
pub fn geometric_half_width(scale: f64, beta: f64) -> Result<u64, Error> {
    crate::mechanisms::discrete_laplace_half_width(scale, beta)
}

/// How far ε-DP lets an adversary's belief move (the table of Li, Lyu, Su & Yang 2016,
/// *Differential Privacy: From Theory to Practice*, on choosing ε): a prior `p` that a
/// hypothesis holds becomes, after seeing an ε-DP release, a posterior in
/// `[max(p·e^−ε, 1 − (1−p)·e^ε), min(p·e^ε, 1 − (1−p)·e^−ε)]`.
///
/// ```
/// let (low, high) = dpmech::statistics::accuracy::belief_bounds(0.5, 1.0)?;
/// assert_eq!((format!("{low:.4}"), format!("{high:.4}")), ("0.1839".into(), "0.8161".into()));
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidParameter`] (`prior`) outside `[0, 1]`, and [`Error::InvalidEpsilon`].
pub fn belief_bounds(prior: f64, epsilon: f64) -> Result<(f64, f64), Error> {
    if !(0.0..=1.0).contains(&prior) {
        return Err(Error::InvalidParameter {
            name: "prior",
            value: prior,
            reason: "a probability must lie in [0, 1]",
        });
    }
    let epsilon = check_epsilon(epsilon)?;
    // Widen outward: the interval must contain the exact one.
    let (grow, shrink) = (round::exp_up(epsilon), round::exp_down(-epsilon));
    let low = round::mul_down(prior, shrink).max(round::sub_down(1.0, round::mul_up(1.0 - prior, grow)));
    let high = round::mul_up(prior, grow).min(round::sub_up(1.0, round::mul_down(1.0 - prior, shrink)));
    Ok((low.max(0.0), high.min(1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figura_1_1_is_reproduced_to_four_decimals() {
        // Rows p, columns ε ∈ {0.01, 0.1, 1, 5, 10}: the table of Li, Lyu, Su & Yang 2016.
        let epsilons = [0.01, 0.1, 1.0, 5.0, 10.0];
        let table: [(f64, [(&str, &str); 5]); 6] = [
            (
                0.001,
                [
                    ("0.0010", "0.0010"),
                    ("0.0009", "0.0011"),
                    ("0.0004", "0.0027"),
                    ("0.0000", "0.1484"),
                    ("0.0000", "1.0000"),
                ],
            ),
            (
                0.01,
                [
                    ("0.0099", "0.0101"),
                    ("0.0090", "0.0111"),
                    ("0.0037", "0.0272"),
                    ("0.0001", "0.9933"),
                    ("0.0000", "1.0000"),
                ],
            ),
            (
                0.1,
                [
                    ("0.0990", "0.1010"),
                    ("0.0905", "0.1105"),
                    ("0.0368", "0.2718"),
                    ("0.0007", "0.9939"),
                    ("0.0000", "1.0000"),
                ],
            ),
            (
                0.5,
                [
                    ("0.4950", "0.5050"),
                    ("0.4524", "0.5476"),
                    ("0.1839", "0.8161"),
                    ("0.0034", "0.9966"),
                    ("0.0000", "1.0000"),
                ],
            ),
            (
                0.75,
                [
                    ("0.7475", "0.7525"),
                    ("0.7237", "0.7738"),
                    ("0.3204", "0.9080"),
                    ("0.0051", "0.9983"),
                    ("0.0000", "1.0000"),
                ],
            ),
            (
                0.99,
                [
                    ("0.9899", "0.9901"),
                    ("0.9889", "0.9910"),
                    ("0.9728", "0.9963"),
                    ("0.0067", "0.9999"),
                    ("0.0000", "1.0000"),
                ],
            ),
        ];
        for (p, row) in table {
            for (epsilon, (low, high)) in epsilons.iter().zip(row) {
                let (l, h) = belief_bounds(p, *epsilon).unwrap();
                assert_eq!(
                    (format!("{l:.4}"), format!("{h:.4}")),
                    (low.to_string(), high.to_string()),
                    "p = {p}, ε = {epsilon}"
                );
            }
        }
    }

    #[test]
    fn half_widths_and_their_inverse() {
        let w = laplace_half_width(1.0, 0.05).unwrap();
        assert!(w >= 20f64.ln() && w < 20f64.ln() * (1.0 + 1e-12));
        let epsilon = laplace_epsilon_for_half_width(1.0, w, 0.05).unwrap();
        assert!((1.0 - 1e-12..=1.0 + 1e-12).contains(&epsilon));
        assert!(laplace_vector_half_width(1.0, 2, 0.05).unwrap() > w);
        // τ = 1: Pr[|Z| > k] = 2e^-(k+1)/(1+e^-1) ≤ 0.05 first at k = 3.
        assert_eq!(geometric_half_width(1.0, 0.05).unwrap(), 3);
        let tail = |k: f64| 2.0 * (-(k + 1.0)).exp() / (1.0 + (-1.0f64).exp());
        assert!(tail(3.0) <= 0.05 && tail(2.0) > 0.05);
        for bad in [0.0, 1.0, f64::NAN] {
            assert!(laplace_half_width(1.0, bad).is_err());
        }
        assert!(belief_bounds(1.5, 1.0).is_err() && belief_bounds(0.5, -1.0).is_err());
        assert!(laplace_vector_half_width(1.0, 0, 0.1).is_err());
    }

    #[test]
    fn tiny_confidence_levels_give_finite_half_widths_and_huge_ones_are_refused() {
        let tiny = 5e-324f64; // the smallest subnormal: 1/β overflows
        let ln_inv = -tiny.ln(); // 744.44
        let w = laplace_half_width(1.0, tiny).unwrap();
        assert!(w >= ln_inv && w < ln_inv * (1.0 + 1e-12), "{w}");
        let v = laplace_vector_half_width(1.0, 10, tiny).unwrap();
        assert!(
            v >= ln_inv + 10f64.ln() && v < (ln_inv + 10f64.ln()) * (1.0 + 1e-12),
            "{v}"
        );
        // The same values as before for ordinary β (the old form ln(n/β)).
        assert!(laplace_vector_half_width(2.0, 3, 0.05).unwrap() >= 2.0 * 60f64.ln());
        let g = crate::Gaussian::analytic(1.0, 1.0, 1e-5).unwrap();
        let a = g.accuracy(tiny).unwrap();
        let sigma = g.sigma();
        assert!(
            a.is_finite() && a >= sigma * (2.0 * (2f64.ln() + ln_inv)).sqrt(),
            "{a}"
        );
        assert!(laplace_epsilon_for_half_width(1.0, 1.0, tiny).unwrap() >= ln_inv);
        // A half-width beyond f64: typed error, not +∞.
        for got in [
            laplace_half_width(f64::MAX, 0.01),
            laplace_vector_half_width(f64::MAX, 2, 0.5),
        ] {
            assert!(matches!(got, Err(Error::Unattainable { .. })), "{got:?}");
        }
    }

    #[test]
    fn gaussian_epsilon_for_a_half_width_is_the_smallest_that_meets_it() {
        for (width, delta) in [(5.0, 1e-6), (0.5, 1e-9), (40.0, 1e-5)] {
            let epsilon = gaussian_epsilon_for_half_width(1.0, width, 0.05, delta).unwrap();
            let at = |e: f64| {
                crate::Gaussian::analytic(1.0, e, delta)
                    .unwrap()
                    .accuracy(0.05)
                    .unwrap()
            };
            assert!(
                at(epsilon) <= width,
                "{width}: ε = {epsilon} gives {}",
                at(epsilon)
            );
            assert!(
                at(epsilon * (1.0 - 1e-6)) > width,
                "{width}: ε = {epsilon} is not the smallest"
            );
        }
        assert!(gaussian_epsilon_for_half_width(1.0, 1e-12, 0.05, 1e-6).is_err());
        assert!(gaussian_epsilon_for_half_width(1.0, 1.0, 2.0, 1e-6).is_err());
    }
}
