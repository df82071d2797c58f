//! The low-order structure of an `f64`, for the float-leak check (Mironov 2012).
//!
//! Textbook samplers compute `x + b·ln(u)`-style expressions in floating point. The
//! set of doubles such an expression can produce depends on `x`: e.g. `1 + n` for
//! `n ∈ [−1, −½]` is always a multiple of `2⁻⁵³`, so in `[¼, ½)` it never has its last
//! mantissa bit set, while the noise alone does half of the time. An observer who sees
//! one such output learns which input produced it.
//!
//! [`FloatStructure`] maps an output to its sign, binade and **finest power-of-two
//! grid** (the exponent of its lowest set bit). The map is a post-processing of the
//! output, so a mechanism that really is ε-DP stays ε-DP on this feature, and the
//! ordinary certified audit applied to it keeps its false-alarm guarantee α; a
//! mechanism whose outputs for `D` lie on grids that `D′` never produces fails it
//! with a large certified loss.

use core::fmt;

/// Sign, binade and finest power-of-two grid of an `f64`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatStructure {
    /// `+0.0` or `−0.0` (the sign is kept: it is observable).
    Zero {
        /// Whether the sign bit is set.
        negative: bool,
    },
    /// A finite non-zero value `± m · 2^grid` with `m` odd and `2^binade ≤ |x| < 2^(binade+1)`.
    Finite {
        /// Whether the value is negative.
        negative: bool,
        /// `⌊log₂|x|⌋`.
        binade: i32,
        /// The exponent of the lowest set bit: `x` is an odd multiple of `2^grid`.
        grid: i32,
    },
    /// `±∞`.
    Infinite {
        /// Whether the value is −∞.
        negative: bool,
    },
    /// Any NaN.
    NaN,
}

impl FloatStructure {
    /// The structure of `x`.
    pub fn of(x: f64) -> Self {
        let negative = x.is_sign_negative();
        if x.is_nan() {
            return Self::NaN;
        }
        if x.is_infinite() {
            return Self::Infinite { negative };
        }
        if x == 0.0 {
            return Self::Zero { negative };
        }
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1u64 << 52) - 1);
        // value = significand · 2^scale with an integer significand.
        let (significand, scale) = if biased == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1u64 << 52), biased - 1075)
        };
        let binade = scale + 63 - significand.leading_zeros() as i32;
        let grid = scale + significand.trailing_zeros() as i32;
        Self::Finite {
            negative,
            binade,
            grid,
        }
    }
}

impl fmt::Display for FloatStructure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Zero { negative } => f.write_str(if negative { "-0.0" } else { "+0.0" }),
            Self::Finite {
                negative,
                binade,
                grid,
            } => write!(
                f,
                "{}[2^{binade}, 2^{}) on grid 2^{grid}",
                if negative { "-" } else { "+" },
                binade + 1
            ),
            Self::Infinite { negative } => f.write_str(if negative { "-inf" } else { "+inf" }),
            Self::NaN => f.write_str("NaN"),
        }
    }
}

impl fmt::Debug for FloatStructure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp, reason = "exact values are what these tests check")]
mod tests {
    use super::*;

    fn fin(x: f64) -> (bool, i32, i32) {
        match FloatStructure::of(x) {
            FloatStructure::Finite {
                negative,
                binade,
                grid,
            } => (negative, binade, grid),
            other => panic!("{x} gave {other}"),
        }
    }

    #[test]
    fn binade_and_grid_of_simple_values() {
        assert_eq!(fin(1.0), (false, 0, 0));
        assert_eq!(fin(3.0), (false, 1, 0));
        assert_eq!(fin(-0.375), (true, -2, -3));
        assert_eq!(fin(1.0 + f64::EPSILON), (false, 0, -52));
        assert_eq!(fin(f64::MIN_POSITIVE), (false, -1022, -1022));
        assert_eq!(fin(f64::from_bits(1)), (false, -1074, -1074));
        assert_eq!(fin(f64::from_bits(6)), (false, -1072, -1073));
        assert_eq!(fin(f64::MAX), (false, 1023, 971));
        assert_eq!(FloatStructure::of(-0.0), FloatStructure::Zero { negative: true });
        assert_eq!(FloatStructure::of(f64::NAN), FloatStructure::NaN);
        assert_eq!(
            FloatStructure::of(f64::NEG_INFINITY),
            FloatStructure::Infinite { negative: true }
        );
    }

    #[test]
    fn every_value_is_an_odd_multiple_of_its_grid_within_its_binade() {
        for x in [
            0.1,
            0.2,
            1e-300,
            7.5e200,
            123456.789,
            0.3 - 0.1,
            f64::from_bits(0x000f_0000_0000_0001),
        ] {
            let (_, binade, grid) = fin(x);
            // x / 2^grid is an odd integer, and 2^binade ≤ x < 2^(binade+1).
            let scaled = x * 2f64.powi(-grid.max(-1022)) * 2f64.powi(-(grid - grid.max(-1022)));
            assert_eq!(scaled % 2.0, 1.0, "{x}");
            assert!(2f64.powi(binade) <= x && x < 2f64.powi(binade + 1), "{x}");
        }
    }

    #[test]
    fn display_names_the_grid() {
        assert_eq!(
            FloatStructure::of(0.375).to_string(),
            "+[2^-2, 2^-1) on grid 2^-3"
        );
    }
}
