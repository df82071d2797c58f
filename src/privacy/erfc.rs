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

/// Certified bounds `(lo, hi)` of `K(x) = √π·e^(x²)·erfc(x)` for `x ≥ 1/2`, with
/// `(hi − lo)/lo` at most about `tolerance` (plus the rounding allowance below), or
/// `None` when the fraction has not closed that far within 2000 terms (`x` too small
/// for the requested tolerance). See [`scaled_erfc_bounds_pair`].
#[cfg(test)]
pub(crate) fn scaled_erfc_bounds(x: f64, tolerance: f64) -> Option<(f64, f64)> {
    scaled_erfc_bounds_pair([x, x], tolerance).map(|[first, _]| first)
}

/// Certified bounds `(lo, hi)` of `K(x) = √π·e^(x²)·erfc(x)` at two points `x ≥ 1/2`
/// at once (the two recurrences interleave), each with `(hi − lo)/lo` at most about
/// `tolerance` plus the rounding allowance below; `None` when a fraction has not
/// closed that far within 2000 terms (an `x` too small for the tolerance).
///
/// `K(x) = 1/(x + (1/2)/(x + (2/2)/(x + (3/2)/(x + …))))` (Laplace's continued fraction,
/// Abramowitz & Stegun 7.1.14). Its partial numerators `k/2` and denominators `x` are
/// positive, so the value lies between any two consecutive approximants `f_(k−1)`,
/// `f_k` (the tail beyond level `k` lies in `(0, (k/2)/x)` and the fraction is
/// monotone in it): the truncation is bounded by the approximants themselves, not by
/// a measured depth. They are evaluated forwards, `A_k = x·A_(k−1) + (k−1)/2·A_(k−2)` and
/// the same for `B_k`, with no division: sums of non-negative products, so each step
/// adds at most `2u` (`u = 2⁻⁵³`) to the relative error of `A_k` and of `B_k`, and
/// `f_k = A_k/B_k` is within a relative `(4k + 1)u` of its exact value (rescaling by
/// powers of two is exact). The bounds are widened by `(4k + 8)u` on each side, which
/// also covers the rounding of the widening itself.
pub(crate) fn scaled_erfc_bounds_pair(x: [f64; 2], tolerance: f64) -> Option<[(f64, f64); 2]> {
    const UNIT: f64 = f64::EPSILON / 2.0;
    const MAX_TERMS: u32 = 2000;
    const RESCALE_ABOVE: f64 = 1.157_920_892_373_162e77; // 2^256
    const RESCALE_BY: f64 = 8.636_168_555_094_445e-78; // 2^−256
    const HUGE: f64 = 18_446_744_073_709_551_616.0; // 2^64
    if !(x[0] >= 0.5 && x[1] >= 0.5) {
        return None;
    }
    let widen = |lo: f64, hi: f64, k: u32| {
        let rel = f64::from(4 * k + 8) * UNIT;
        (lo * (1.0 - rel), hi * (1.0 + rel))
    };
    // From x = 2⁶⁴ on (∞ included), f_1 = 1/x and f_2 = x/(x² + 1/2) ≥ (1/x)(1 − 2⁻¹²⁹):
    // 1/x within 4u either way. Such a lane runs the recurrence at x = 1 and is ignored.
    let given = x;
    let huge = [x[0] >= HUGE, x[1] >= HUGE];
    let x = [if huge[0] { 1.0 } else { x[0] }, if huge[1] { 1.0 } else { x[1] }];
    // Per lane (A_(k−1), A_k) and (B_(k−1), B_k), and `gap` = |A_k·B_(k−1) −
    // A_(k−1)·B_k| = ∏_(i ≤ k) (i − 1)/2 (the determinant formula; a_1 = 1), so that
    // |f_k − f_(k−1)|/f_k = gap/(A_k·B_(k−1)): a stopping test without division (in
    // floating point, only a hint: the bounds are decided from the approximants).
    let mut lanes = [Lane::new(x[0]), Lane::new(x[1])];
    let mut k = 1u32;
    // (k − 1)/2 for the next k, kept exactly (a multiple of 1/2 below 2⁵³).
    let mut numerator = 0.5f64;
    loop {
        for _ in 0..2 {
            k += 1;
            for lane in &mut lanes {
                lane.step(numerator);
            }
            numerator += 0.5;
        }
        let mut hinted = true;
        for (lane, &huge) in lanes.iter_mut().zip(&huge) {
            // Two steps multiply B by at most (x + 2000)² < 2²⁰⁰ (x < 2⁶⁴): no overflow.
            if lane.b > RESCALE_ABOVE {
                lane.a *= RESCALE_BY;
                lane.a_prev *= RESCALE_BY;
                lane.b *= RESCALE_BY;
                lane.b_prev *= RESCALE_BY;
                lane.gap *= RESCALE_BY * RESCALE_BY;
            }
            hinted &= huge || lane.gap <= tolerance * lane.a * lane.b_prev;
        }
        if hinted || k >= MAX_TERMS {
            let mut bounds = [(0.0, 0.0); 2];
            let mut closed = true;
            for i in 0..2 {
                let lane = &lanes[i];
                let (last, before) = (lane.a / lane.b, lane.a_prev / lane.b_prev);
                bounds[i] = if last <= before {
                    (last, before)
                } else {
                    (before, last)
                };
                closed &= huge[i] || bounds[i].1 - bounds[i].0 <= tolerance * bounds[i].0;
            }
            if closed {
                let lane = |i: usize, (lo, hi): (f64, f64)| {
                    if huge[i] {
                        let f = 1.0 / given[i];
                        widen(f, f, 1)
                    } else {
                        widen(lo, hi, k)
                    }
                };
                return Some([lane(0, bounds[0]), lane(1, bounds[1])]);
            }
            if k >= MAX_TERMS {
                return None;
            }
        }
    }
}

/// One recurrence of [`scaled_erfc_bounds_pair`]: `(A_(k−1), A_k)`, `(B_(k−1), B_k)` and
/// the determinant `gap`, from `A_0 = 0, A_1 = 1, B_0 = 1, B_1 = x`.
struct Lane {
    x: f64,
    a_prev: f64,
    a: f64,
    b_prev: f64,
    b: f64,
    gap: f64,
}

impl Lane {
    fn new(x: f64) -> Self {
        Self {
            x,
            a_prev: 0.0,
            a: 1.0,
            b_prev: 1.0,
            b: x,
            gap: 1.0,
        }
    }

    /// `A_k = x·A_(k−1) + ((k−1)/2)·A_(k−2)`, the same for `B`, `gap ×= (k−1)/2`.
    #[inline(always)]
    fn step(&mut self, numerator: f64) {
        let next_a = self.x * self.a + numerator * self.a_prev;
        let next_b = self.x * self.b + numerator * self.b_prev;
        (self.a_prev, self.a, self.b_prev, self.b) = (self.a, next_a, self.b, next_b);
        self.gap *= numerator;
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
