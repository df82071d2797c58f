//! The complementary error function, for the Gaussian calibrations and the PLD
//! builders (tested against 40-digit references to 10⁻¹⁴). It lives with the other
//! numerics of privacy parameters, below both its users (design.md §1).

/// Below this, `erfc = 1 − erf` by the (all-positive) series; above, the continued
/// fraction.
pub(crate) const ERFC_SWITCH: f64 = 1.25;

/// The complementary error function.
pub(crate) fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < ERFC_SWITCH {
        return 1.0 - erf_series(x);
    }
    erfcx(x) * (-x * x).exp()
}

/// `erf(x) = (2/√π)·e^(−x²)·Σₙ 2ⁿx^(2n+1)/(1·3·…·(2n+1))` for small `x ≥ 0` (positive
/// terms, no cancellation).
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    while term > sum * 1e-17 {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
    }
    core::f64::consts::FRAC_2_SQRT_PI * (-x2).exp() * sum
}

/// The scaled complementary error function `e^(x²)·erfc(x)` for `x ≥ ERFC_SWITCH`,
/// from `erfc(x) = Γ(½, x²)/√π` and the even (contracted) continued fraction of the
/// upper incomplete gamma function, `Γ(a, z) = e^(−z) z^a / (z + 1 − a − 1·(1 − a)/(z + 3 − a
/// − 2·(2 − a)/(z + 5 − a − …)))`, evaluated backwards from a fixed depth; it converges
/// quickly for `z = x² ≥ 1.5`.
pub(crate) fn erfcx(x: f64) -> f64 {
    erfcx_to_depth(x, 120)
}

/// The continued fraction of [`erfcx`] cut at `depth` terms (120 is the certified
/// evaluation; fewer give a fast estimate for steering a root finder).
pub(crate) fn erfcx_to_depth(x: f64, depth: usize) -> f64 {
    if x.is_infinite() {
        return 0.0;
    }
    let z = x * x;
    let mut f = z + 2.0 * depth as f64 + 0.5;
    for n in (0..depth).rev() {
        let next = (n + 1) as f64;
        f = z + 2.0 * n as f64 + 0.5 - next * (next - 0.5) / f;
    }
    x / (core::f64::consts::PI.sqrt() * f)
}

/// Certified bounds `(lo, hi)` of `K(x) = √π·e^(x²)·erfc(x)` at two points `x ≥ 1/2`,
/// each by [`scaled_erfc_bounds`]; `None` when either is.
pub(crate) fn scaled_erfc_bounds_pair(x: [f64; 2], tolerance: f64) -> Option<[(f64, f64); 2]> {
    Some([
        scaled_erfc_bounds(x[0], tolerance)?,
        scaled_erfc_bounds(x[1], tolerance)?,
    ])
}

/// Certified bounds `(lo, hi)` of `K(x) = √π·e^(x²)·erfc(x)` for `x ≥ 1/2`, with
/// `(hi − lo)/lo` at most about `tolerance` plus the rounding allowance below; `None`
/// when the fraction has not closed that far within 2000 terms (an `x` too small for
/// the tolerance).
///
/// `K(x) = 1/(x + (1/2)/(x + (2/2)/(x + (3/2)/(x + …))))` (Laplace's continued fraction,
/// Abramowitz & Stegun 7.1.14). Its partial numerators `k/2` and denominators `x` are
/// positive, so the value lies between any two consecutive approximants `f_(k−1)`,
/// `f_k` (the tail beyond level `k` lies in `(0, (k/2)/x)` and the fraction is
/// monotone in it): the truncation is bounded by the approximants themselves, not by
/// a measured depth. They are evaluated forwards, `A_k = x·A_(k−1) + (k−1)/2·A_(k−2)` and
/// the same for `B_k`, with no division, two levels per step from the same pair:
/// `A_(k+1) = x·A_k + (k/2)·A_(k−1)` and
/// `A_(k+2) = (x² + (k+1)/2)·A_k + (x·k/2)·A_(k−1)` (so the second does not wait for
/// the first). Both are sums of non-negative products: the first adds at most `2u`
/// (`u = 2⁻⁵³`) to the larger relative error of `A_k`, `A_(k−1)`, the second at most
/// `4u` (the roundings of `x²`, of the sum with `(k+1)/2` and of the product; of `x·k/2`
/// and its product; of the sum), so the relative error of `A_k` (and of `B_k`) stays
/// below `2ku`, and `f_k = A_k/B_k` is within a relative `(4k + 1)u` of its exact value
/// (rescaling by powers of two is exact). The bounds are widened by `(4k + 8)u` on each
/// side, which also covers the rounding of the widening itself.
///
/// The stopping test needs no division either: `gap = |A_k·B_(k−1) − A_(k−1)·B_k| =
/// ∏_(i ≤ k) (i − 1)/2` (the determinant formula; `a_1 = 1`), so
/// `|f_k − f_(k−1)|/f_k = gap/(A_k·B_(k−1))` (in floating point only a hint: the bounds
/// are decided from the approximants).
pub(crate) fn scaled_erfc_bounds(x: f64, tolerance: f64) -> Option<(f64, f64)> {
    const UNIT: f64 = f64::EPSILON / 2.0;
    const MAX_TERMS: u32 = 2000;
    const HUGE: f64 = 18_446_744_073_709_551_616.0; // 2^64
    const RESCALE_ABOVE: f64 = 1.157_920_892_373_162e77; // 2^256
    const RESCALE_BY: f64 = 8.636_168_555_094_445e-78; // 2^−256
    let widen = |lo: f64, hi: f64, k: u32| {
        let rel = f64::from(4 * k + 8) * UNIT;
        (lo * (1.0 - rel), hi * (1.0 + rel))
    };
    if x.is_nan() || x < 0.5 {
        return None;
    }
    if x >= HUGE {
        // From x = 2⁶⁴ on (∞ included), f_1 = 1/x and f_2 = x/(x² + 1/2) ≥
        // (1/x)(1 − 2⁻¹²⁹): 1/x within 4u either way.
        let f = 1.0 / x;
        return Some(widen(f, f, 1));
    }
    let x_squared = x * x;
    // [A_(k−1), B_(k−1)] and [A_k, B_k] from A_0 = 0, A_1 = 1, B_0 = 1, B_1 = x (as pairs,
    // so that each operation runs on A and B at once).
    let (mut prev, mut cur, mut gap) = ([0.0, 1.0], [1.0, x], 1.0);
    let mut k = 1u32;
    // k/2 for the current k, kept exactly (a multiple of 1/2 below 2⁵³).
    let mut numerator = 0.5f64;
    loop {
        let next = numerator + 0.5;
        let (outer, inner) = (x_squared + next, x * numerator);
        (prev, cur) = (
            [x * cur[0] + numerator * prev[0], x * cur[1] + numerator * prev[1]],
            [outer * cur[0] + inner * prev[0], outer * cur[1] + inner * prev[1]],
        );
        // (k/2)·((k+1)/2) is exact: a product of two multiples of 1/2 below 2¹¹.
        gap *= numerator * next;
        numerator += 1.0;
        k += 2;
        // Two levels multiply B by at most (x + 2000)² < 2²⁰⁰ (x < 2⁶⁴): no overflow.
        if cur[1] > RESCALE_ABOVE {
            prev = [prev[0] * RESCALE_BY, prev[1] * RESCALE_BY];
            cur = [cur[0] * RESCALE_BY, cur[1] * RESCALE_BY];
            gap *= RESCALE_BY * RESCALE_BY;
        }
        let ([a_prev, b_prev], [a, b]) = (prev, cur);
        if gap <= tolerance * a * b_prev || k >= MAX_TERMS {
            let (last, before) = (a / b, a_prev / b_prev);
            let (lo, hi) = if last <= before {
                (last, before)
            } else {
                (before, last)
            };
            if hi - lo <= tolerance * lo {
                return Some(widen(lo, hi, k));
            }
            if k >= MAX_TERMS {
                return None;
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    #[allow(clippy::excessive_precision)]
    fn erfc_matches_high_precision_references_and_statrs() {
        // 40-digit references (mpmath), rounded to 20 significant digits.
        let references = [
            (-1.5, 1.9661051464753107271),
            (0.3, 0.67137324054087257236),
            (1.2, 0.089686021770364619762),
            (1.25, 0.077099871743541769863),
            (1.3, 0.065992055059347563396),
            (-1.4241999999999848, 1.9560033740238536443),
            (0.5075000000000178, 0.47293402981491421071),
            (2.0, 0.0046777349810472658379),
            (3.5, 7.4309837234141274552e-7),
            (6.0, 2.1519736712498913117e-17),
            (10.0, 2.088487583762544757e-45),
            (20.0, 5.3958656116079009289e-176),
        ];
        for (x, reference) in references {
            let relative = ((erfc(x) - reference) / reference).abs();
            println!("erfc({x}): relative error {relative:e}");
            assert!(relative < 1e-14, "erfc({x}) = {} vs {reference}", erfc(x));
        }
        // A dense sweep against statrs, whose own erfc is off by up to ~1e-10 relative
        // (e.g. erfc(−1.4242): statrs 1.9560033740258163, 40-digit value
        // 1.9560033740238536443, ours 1.9560033740238536; erfc(0.5075): statrs
        // 0.47293402986321076, 40-digit 0.47293402981491421071, ours
        // 0.47293402981491417): a coarse cross-check of the whole range.
        let mut worst: f64 = 0.0;
        let mut x = -6.0;
        while x < 26.0 {
            let reference = statrs::function::erf::erfc(x);
            let relative = ((erfc(x) - reference) / reference).abs();
            worst = worst.max(relative);
            assert!(relative < 1e-9, "erfc({x}) = {} vs statrs {reference}", erfc(x));
            x += 0.0137;
        }
        println!("worst relative difference from statrs: {worst:e}");
        assert_eq!(erfc(f64::INFINITY), 0.0);
        assert_eq!(erfc(f64::NEG_INFINITY), 2.0);
    }

    /// `K(x) = √π·e^(x²)·erfc(x)`: 50-digit references (mpmath), rounded to 20 digits
    /// (also the calibration's tests' references).
    #[allow(clippy::excessive_precision)]
    pub(crate) const SCALED_ERFC_REFERENCES: [(f64, f64); 11] = [
        (0.5, 1.0912827215300940842),
        (0.75, 0.89852359043107830681),
        (1.0, 0.75787215614131210604),
        (1.25, 0.6519491447172853068),
        (2.0, 0.45267704998117457936),
        (3.5, 0.27525083790517968577),
        (6.0, 0.16444218487186090741),
        (10.0, 0.099507318782446974738),
        (1000.0, 0.00099999950000074999813),
        (1e10, 9.9999999999999999999e-11),
        (1e20, 1.0e-20),
    ];

    #[test]
    #[allow(clippy::excessive_precision)]
    fn scaled_erfc_bounds_enclose_high_precision_references() {
        let references = SCALED_ERFC_REFERENCES;
        let tolerance = 2f64.powi(-50);
        for (x, reference) in references {
            let (lo, hi) = scaled_erfc_bounds(x, tolerance).unwrap();
            println!("K({x}) ∈ [{lo:e}, {hi:e}], width {:e}", (hi - lo) / lo);
            // The references carry 20 digits: a relative 10⁻¹⁹ either way.
            assert!(
                lo <= reference * (1.0 + 1e-19) && hi >= reference * (1.0 - 1e-19),
                "K({x})"
            );
            assert!((hi - lo) / lo < 1e-12, "K({x}): [{lo}, {hi}]");
            // The bounds agree with the backward evaluation of `erfcx` where it applies.
            if x >= ERFC_SWITCH {
                let k = core::f64::consts::PI.sqrt() * erfcx(x);
                assert!(lo <= k * (1.0 + 1e-14) && k <= hi * (1.0 + 1e-14), "K({x}) = {k}");
            }
        }
        assert_eq!(scaled_erfc_bounds(f64::INFINITY, tolerance), Some((0.0, 0.0)));
        assert_eq!(scaled_erfc_bounds(0.4, tolerance), None);
        assert_eq!(scaled_erfc_bounds(f64::NAN, tolerance), None);
    }
}
