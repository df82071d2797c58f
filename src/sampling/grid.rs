//! The data-independent power-of-two grid that carries real values to integers and back.
//!
//! A real-valued mechanism picks a granularity `g = 2ᵏ` from **public** parameters only,
//! rounds the (clamped) input to the nearest multiple of `g`, adds `g ×` exact integer
//! noise, and returns the exact multiple of `g`. Because division and multiplication by
//! a power of two are exact in binary floating point, the output carries no trace of
//! the input's low-order bits (the Mironov 2012 attack on textbook float noise).

/// Smallest supported grid exponent (`2^-1022` is the smallest normal `f64`).
pub const MIN_EXPONENT: i32 = -1022;
/// Largest supported grid exponent.
pub const MAX_EXPONENT: i32 = 900;
/// `2⁶³`: magnitudes below it convert through `i64`.
const I64_RANGE: f64 = (1u64 << 63) as f64;
/// Inputs are clamped to `±2^(k + CLAMP_BITS)` before rounding to the grid `2ᵏ`.
pub const CLAMP_BITS: i32 = 100;

/// A power-of-two grid `g·ℤ`, `g = 2ᵏ`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    exponent: i32,
}

impl Grid {
    /// The grid `2^exponent ℤ`; the exponent is clamped into
    /// `[MIN_EXPONENT, MAX_EXPONENT]`.
    pub fn new(exponent: i32) -> Self {
        Self {
            exponent: exponent.clamp(MIN_EXPONENT, MAX_EXPONENT),
        }
    }

    /// `k` in `g = 2ᵏ`.
    #[inline]
    pub fn exponent(&self) -> i32 {
        self.exponent
    }

    /// The granularity `g = 2ᵏ`.
    #[inline]
    pub fn granularity(&self) -> f64 {
        pow2(self.exponent)
    }

    /// The public clamping bound `2^(k + 100)` (at most `2¹⁰⁰⁰`, so it is finite).
    #[inline]
    pub fn clamp_bound(&self) -> f64 {
        pow2(self.exponent + CLAMP_BITS)
    }

    /// The nearest grid point to `clamp(value, ±bound)`, in units of `g`
    /// (ties away from zero). `value` must be finite. `|result| ≤ 2¹⁰⁰`.
    ///
    /// Clamping is 1-Lipschitz and rounding moves a value by at most `g/2`, so two
    /// inputs `a`, `b` map to units differing by at most `|a − b|/g + 1` (and by 0 when
    /// `a = b`).
    #[inline]
    pub fn to_units(&self, value: f64) -> i128 {
        // Multiplying by 2^−k (a normal float for every supported k) is exact, like
        // the division by g it replaces. Below 2^63 units the value is inside the clamp
        // bound 2^(k + 100), so clamping first would change nothing: the clamp is
        // applied only to the rest (the same result, with fewer instructions for the
        // common case).
        let scaled = value * pow2(-self.exponent);
        if scaled.abs() < I64_RANGE {
            i128::from(round_half_away(scaled))
        } else {
            self.clamped_units(value)
        }
    }

    /// [`to_units`](Self::to_units) for `|value/g| ≥ 2⁶³` (or NaN): clamped to the
    /// bound, then scaled; the quotient (at most 2^100) is already an integer.
    #[cold]
    fn clamped_units(&self, value: f64) -> i128 {
        let bound = self.clamp_bound();
        (value.clamp(-bound, bound) * pow2(-self.exponent)) as i128
    }

    /// `units · g` as an `f64`: exact when `|units| < 2⁵³`, otherwise the nearest `f64`,
    /// which is still a multiple of `g` (rounding an already private integer is
    /// post-processing and costs no privacy).
    ///
    /// The one branch, `|units| < 2⁵³` (one integer conversion instruction) or not (the
    /// two-halves conversion of `integer_to_f64`), is a function of the returned value
    /// alone: below `2⁵³` the conversion is exact, and from `2⁵³` on the rounded value is
    /// at least `2⁵³` (rounding is monotone and `2⁵³` is an `f64`). So its timing reveals
    /// nothing the output does not.
    #[inline]
    pub fn from_units(&self, units: i128) -> f64 {
        // |units| < 2⁵³ ⇔ units + (2⁵³ − 1) ∈ [0, 2⁵⁴ − 1): one wide addition and one
        // comparison, no branch on the sign.
        const EXACT: i128 = (1 << 53) - 1;
        let value = if (units.wrapping_add(EXACT) as u128) < 2 * EXACT as u128 + 1 {
            units as i64 as f64
        } else {
            integer_to_f64(units)
        };
        value * self.granularity()
    }

    /// `value` released with integer noise: `from_units(to_units(value) + noise)`
    /// (saturating), an exact multiple of `g`.
    #[inline]
    pub(crate) fn add_noise(&self, value: f64, noise: i128) -> f64 {
        self.from_units(self.to_units(value).saturating_add(noise))
    }
}

/// `x` rounded half away from zero, for `|x| < 2⁶³`, without `f64::round` (a library
/// call on baseline x86-64): add the largest double below ½ with the sign of `x`, and
/// truncate — one addition and one truncation, branch-free. (Adding ½ itself would
/// round 0.49999999999999994 up to 1. With the offset 2⁻⁵⁴ below ½, a tie `k + ½` sums
/// to `k + 1 − 2⁻⁵⁴`, which rounds to `k + 1`, while every value below the tie stays
/// below `k + 1`.) The tests compare it with the definition on every magnitude, ties
/// and near-ties (`units_match_the_rounding_definition`).
#[inline(always)]
fn round_half_away(x: f64) -> i64 {
    const BELOW_HALF: f64 = 0.499_999_999_999_999_94;
    (x + BELOW_HALF.copysign(x)) as i64
}

/// `x` as an `f64` with the same instructions for every `x` (no branch on its size, no
/// 128-bit conversion routine): the magnitude's two 64-bit halves are converted and
/// added, and the sign bit set. Exact for `|x| < 2⁶⁴` when the value fits 53 bits
/// (correctly rounded below `2⁶⁴`); above `2⁶⁴` within one unit in the last place of
/// the nearest `f64` (the halves round separately). Either way an integer, so a
/// multiple of the grid, and a fixed function of `x`.
#[inline]
pub(crate) fn integer_to_f64(x: i128) -> f64 {
    const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
    let magnitude = x.unsigned_abs();
    let high = (magnitude >> 64) as u64 as f64 * TWO_POW_64;
    let value = high + magnitude as u64 as f64;
    f64::from_bits(value.to_bits() | (u64::from(x < 0) << 63))
}

/// `2^e` for `e ∈ [-1022, 1023]`, built from its bit pattern (exact).
#[inline]
pub(crate) fn pow2(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// `⌊log₂ x⌋` for a positive finite `x`, read exactly off the bit pattern.
pub(crate) fn floor_log2(x: f64) -> i32 {
    debug_assert!(x.is_finite() && x > 0.0);
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Subnormal: x = fraction · 2^-1074.
        let fraction = bits & ((1u64 << 52) - 1);
        63 - fraction.leading_zeros() as i32 - 1074
    } else {
        biased - 1023
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_convert_exactly_below_2_pow_64_and_closely_above() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut cases: Vec<i128> = vec![
            0,
            1,
            -1,
            (1 << 53) + 1,
            -(1 << 63),
            i128::from(u64::MAX),
            i128::MAX,
            i128::MIN + 1,
        ];
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let shift = x % 127;
            cases.push((i128::from(x) << 63 | i128::from(x)) >> shift);
        }
        for v in cases.into_iter().flat_map(|v| [v, v.saturating_neg()]) {
            let (fast, exact) = (integer_to_f64(v), v as f64);
            if v.unsigned_abs() < 1 << 64 {
                assert_eq!(fast.to_bits(), exact.to_bits(), "{v}");
            } else {
                assert!((fast - exact).abs() <= exact.abs() * f64::EPSILON, "{v}");
                assert_eq!(fast.fract(), 0.0);
            }
        }
    }

    /// The rounding equals the definition (`f64::round`, half away from zero, of the
    /// exact quotient, then an exact integer conversion) on random values of every
    /// magnitude (both branches), ties and near-ties, and subnormals.
    #[test]
    fn units_match_the_rounding_definition() {
        let reference = |grid: Grid, value: f64| -> i128 {
            let bound = grid.clamp_bound();
            (value.clamp(-bound, bound) * pow2(-grid.exponent())).round() as i128
        };
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for k in [-1022, -1000, -60, -40, -2, 0, 3, 40, 500, 900] {
            let grid = Grid::new(k);
            let g = grid.granularity();
            for _ in 0..20_000 {
                let bits = next();
                // Random magnitudes around the grid: 2^(k − 60) … 2^(k + 110).
                let exponent = (k - 60 + (bits % 171) as i32).clamp(-1074, 1023);
                let value = f64::from_bits(next() >> 12 | 0x3ff0_0000_0000_0000)
                    * 2f64.powi(exponent.max(-1022))
                    * if bits >> 63 == 1 { -1.0 } else { 1.0 };
                assert_eq!(grid.to_units(value), reference(grid, value), "k = {k}, {value:e}");
                // Ties and their neighbours: (n + ½)·g.
                let tie = ((bits >> 20) % (1 << 40)) as f64 * g + g / 2.0;
                for v in [tie, tie.next_up(), tie.next_down(), -tie] {
                    assert_eq!(grid.to_units(v), reference(grid, v), "k = {k}, {v:e}");
                }
            }
            for v in [0.0, -0.0, 5e-324, -5e-324, f64::MIN_POSITIVE, f64::MAX, f64::MIN] {
                assert_eq!(grid.to_units(v), reference(grid, v), "k = {k}, {v:e}");
            }
        }
    }

    #[test]
    fn floor_log2_matches_definition() {
        for (x, e) in [
            (1.0, 0),
            (1.5, 0),
            (2.0, 1),
            (0.75, -1),
            (1e-310, -1030),
            (5e-324, -1074),
        ] {
            assert_eq!(floor_log2(x), e, "{x}");
        }
        assert_eq!(floor_log2(f64::MAX), 1023);
    }

    #[test]
    fn units_round_and_clamp() {
        let grid = Grid::new(-2); // g = 0.25
        assert_eq!(grid.granularity(), 0.25);
        assert_eq!(grid.to_units(1.0), 4);
        assert_eq!(grid.to_units(0.13), 1);
        assert_eq!(grid.to_units(-0.13), -1);
        assert_eq!(grid.to_units(-0.0), 0);
        // Half-way cases round away from zero; just below half rounds down.
        assert_eq!(grid.to_units(0.125), 1);
        assert_eq!(grid.to_units(-0.125), -1);
        assert_eq!(grid.to_units(0.375), 2);
        assert_eq!(grid.to_units(0.125f64.next_down()), 0);
        assert_eq!(Grid::new(0).to_units(0.49999999999999994), 0);
        assert_eq!(Grid::new(0).to_units(4503599627370495.5), 4503599627370496);
        assert_eq!(Grid::new(0).to_units(-4503599627370495.5), -4503599627370496);
        assert_eq!(grid.to_units(f64::MAX), 1i128 << 100);
        assert_eq!(grid.to_units(f64::MIN), -(1i128 << 100));
        assert_eq!(grid.from_units(5), 1.25);
        let coarse = Grid::new(2000);
        assert_eq!(coarse.exponent(), MAX_EXPONENT);
        assert_eq!(coarse.clamp_bound(), 2f64.powi(1000));
    }
}
