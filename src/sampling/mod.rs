//! Exact noise from integer arithmetic.
//!
//! This layer makes **no privacy claims**: it turns random bits into samples of exactly
//! the advertised distribution. The `mechanisms` layer calibrates the parameters.
//!
//! Every sampler here uses integer arithmetic only — no `ln`, `exp` or float division on
//! a sampling path — so its output distribution is exactly the one documented, not an
//! approximation whose low-order bits depend on the input (Mironov 2012).
//!
//! | sampler | distribution | reference | cost |
//! |---|---|---|---|
//! | [`uniform_below`] | uniform on `{0..n−1}` | rejection on `⌈log₂ n⌉` bits | `< 2⌈log₂ n⌉` bits |
//! | [`bernoulli_ratio`] | Bernoulli(`p/q`) | lazy bitwise comparison | 2 bits on average |
//! | [`BernoulliExpNeg`], [`bernoulli_exp_neg`] | Bernoulli(`exp(−γ)`), rational γ | one word vs certified `exp(−γ)` | 1 word |
//! | [`OneSidedGeometric`] | `(1−α)αᵏ`, `α = e^(−1/τ)` | rejection from a reference geometric of a shared ladder of certified tables (`J`, `⌊G/M⌋`), uniform remainder, certified one-word acceptance | 1 word (`τ` a rung ≤ 64); else 2 (`τ ≤ 2³⁷`) or 3 words per trial, `< 1.09` trials |
//! | [`DiscreteLaplace`] | `(1−α)/(1+α)·α^abs(z)` | the same ladder (nothing certified built per τ): inversion of a reference magnitude (`τ ≤ 64`) or CKS20 Alg. 2 sign and blocked geometric, certified one-word acceptance | 1 word (`τ` a rung ≤ 64, e.g. integers ≤ 32); else 2 (`τ ≤ 2³⁷`) or 3 words per trial, `< 1.09` trials |
//! | [`DiscreteGaussianSampler`] | `∝ exp(−z²/(2σ²))`, rational σ² | certified CDT inversion of blocks of `M` integers from reference tables shared by many σ, and certified rejection (nothing built per σ): below `σ = 4096` a ladder of reference σ̂ (`M = 1` up to `σ = 64`, else `σ/M ∈ (32, 64]`), from 4096 on blocks of `⌈σ/65⌉` from one table | 1 word when `σ ≤ 64` is a rung (no rejection); else 2 (`σ < 4096`, `< 1.0625` trials) or 3 words per trial (`< 1.033` trials) |
//!
//! Canonne, Kamath & Steinke (2020), *The Discrete Gaussian for Differential Privacy*,
//! NeurIPS; arXiv:2004.00010.
//!
//! **Timing.** [`DiscreteLaplace`], [`OneSidedGeometric`], [`DiscreteGaussianSampler`] and
//! [`BernoulliExpNeg`] draw a number of 64-bit words that is independent of their
//! sample, except on a fallback event of probability `< 2⁻⁴⁰` per sample (each type's
//! docs state the guarantee and the proof). So do the selection mechanisms built on the
//! certified one-word Bernoulli(`exp(−x/2ˢ)`) and the inversion of certified cumulative
//! weights (module `fixed_exp`). [`uniform_below`] rejects whole blocks of bits, so its
//! count is independent of its value too; [`bernoulli_ratio`]'s lazy comparison stops
//! at the first bit that differs from `p`, so its count is correlated with its outcome
//! (no mechanism uses it on private data). An adversary who times a release learns
//! nothing beyond the number of words, up to the data-independent arithmetic (Jin,
//! McMurtry, Rubinstein & Ohrimenko 2022 on the attack this prevents).
//!
//! ## Files
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | this overview and [`Rational`] (noise scales) |
//! | `bits.rs` | [`BitSource`]: whole words and single bits from a cryptographic generator |
//! | `uniform.rs` | [`uniform_below`]: unbiased uniform integers by rejection |
//! | `bernoulli.rs` | [`bernoulli_ratio`], [`BernoulliExpNeg`] and [`bernoulli_exp_neg`] |
//! | `fixed_exp.rs` | certified 64-bit `exp(−x/2ˢ)` in constant work: the one-word coins and weighted index sampling of the selection mechanisms |
//! | `certified/` | certified arithmetic: a big integer, interval `exp(−x)`, the lazy uniform, thresholds, and the CDT with its guide (one concept per file) |
//! | `discrete_laplace.rs` | [`DiscreteLaplace`]: the algorithm and its proofs, samples and one trial; `discrete_laplace/ladder.rs`, the shared certified tables and the per-scale constants |
//! | `one_sided_geometric.rs` | [`OneSidedGeometric`]: the magnitude of a discrete Laplace trial |
//! | `discrete_gaussian.rs` | [`DiscreteGaussianSampler`] and [`MAX_VARIANCE_NUM`]; `discrete_gaussian/ladder.rs`, its reference tables below `σ = 4096`; `discrete_gaussian/fixed.rs`, its proposal shared by every `σ ≥ 4096` |
//! | `grid.rs` | [`grid`]: the public power-of-two grid that carries real values to integers and back |
//!
//! The samplers are named for their distributions; the mechanisms built on them have
//! their own names ([`mechanisms::Geometric`](crate::mechanisms::Geometric) is two-sided
//! noise from [`DiscreteLaplace`]; [`mechanisms::DiscreteGaussian`](crate::mechanisms::DiscreteGaussian)
//! is the mechanism on top of [`DiscreteGaussianSampler`]).

mod bernoulli;
mod bits;
mod certified;
mod discrete_gaussian;
mod discrete_laplace;
mod fixed_exp;
pub mod grid;
mod one_sided_geometric;
mod uniform;

pub use bernoulli::{BernoulliExpNeg, bernoulli_exp_neg, bernoulli_ratio};
pub use bits::BitSource;
#[cfg(test)]
pub(crate) use certified::{Big, exp_neg};
pub use discrete_gaussian::{DiscreteGaussianSampler, MAX_VARIANCE_NUM};
pub use discrete_laplace::DiscreteLaplace;
pub(crate) use discrete_laplace::{BatchSink, saturate_i64};
pub(crate) use fixed_exp::{
    ExpNegLower, KeepCoin, bernoulli_exp_neg_ratio, sample_index_exp_neg, with_scratch,
};
pub use one_sided_geometric::OneSidedGeometric;
pub use uniform::uniform_below;
pub(crate) use uniform::{uniform_below_bits, uniform_below_word};

use crate::Error;

/// A positive rational number `num/den` with 64-bit parts, used for noise scales.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rational {
    num: u64,
    den: u64,
}

impl Rational {
    /// `num/den`; both must be at least 1.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when `num` or `den` is 0.
    pub fn new(num: u64, den: u64) -> Result<Self, Error> {
        if num == 0 || den == 0 {
            return Err(Error::InvalidParameter {
                name: if num == 0 { "numerator" } else { "denominator" },
                value: 0.0,
                reason: "numerator and denominator must both be at least 1",
            });
        }
        Ok(Self { num, den })
    }

    /// The smallest rational of the form `p/2ʲ` (`p < 2⁶³`, `j ≤ 62`) that is `≥ x`:
    /// exact whenever `x` has such a form, otherwise rounded **up**.
    ///
    /// # Errors
    ///
    /// [`Error::ScaleOutOfRange`] for a non-finite, non-positive or too large (`≥ 2⁶³`) `x`.
    pub fn from_f64_up(x: f64) -> Result<Self, Error> {
        const MAX: f64 = (1u64 << 63) as f64; // 2^63
        if !(x.is_finite() && x > 0.0 && x < MAX) {
            return Err(Error::ScaleOutOfRange {
                scale: x,
                min: f64::MIN_POSITIVE,
                max: MAX,
            });
        }
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1u64 << 52) - 1);
        let (mut mantissa, exponent) = if biased == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1u64 << 52), biased - 1075)
        };
        // x = mantissa · 2^exponent exactly.
        if exponent >= 0 {
            return Ok(Self {
                num: mantissa << exponent, // < 2^63 because x < 2^63
                den: 1,
            });
        }
        let mut shift = exponent.unsigned_abs();
        let common = mantissa.trailing_zeros().min(shift);
        mantissa >>= common;
        shift -= common;
        if shift <= 62 {
            return Ok(Self {
                num: mantissa,
                den: 1u64 << shift,
            });
        }
        let drop = shift - 62;
        let num = if drop >= 64 {
            1
        } else {
            let kept = mantissa >> drop;
            let lost = mantissa & ((1u64 << drop) - 1);
            (kept + u64::from(lost != 0)).max(1)
        };
        Ok(Self { num, den: 1u64 << 62 })
    }

    /// The numerator.
    pub fn num(&self) -> u64 {
        self.num
    }

    /// The denominator.
    pub fn den(&self) -> u64 {
        self.den
    }

    /// The nearest `f64` (for display; not used on any sampling path).
    pub fn to_f64(&self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rational_from_f64_is_exact_or_rounds_up() {
        assert_eq!(Rational::from_f64_up(0.5).unwrap(), Rational::new(1, 2).unwrap());
        assert_eq!(Rational::from_f64_up(3.0).unwrap(), Rational::new(3, 1).unwrap());
        assert_eq!(Rational::from_f64_up(0.75).unwrap(), Rational::new(3, 4).unwrap());
        for x in [0.1, 1.0 / 3.0, 1e-30, 5e-324, 1e18, 123.456, 2.0f64.powi(-62)] {
            let r = Rational::from_f64_up(x).unwrap();
            // Compare r ≥ x exactly: r·2^k vs x·2^k in u128/f64-free form is awkward,
            // so check via f64 rounding down of r, which is exact when den is a power
            // of two and num < 2^53, and otherwise an under-estimate.
            assert!(r.num() as f64 / r.den() as f64 >= x * (1.0 - 1e-15), "{x}");
            assert!(r.den().is_power_of_two());
        }
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e19] {
            assert!(Rational::from_f64_up(bad).is_err(), "{bad}");
        }
        assert!(Rational::new(0, 1).is_err() && Rational::new(1, 0).is_err());
    }

    #[test]
    fn rational_for_tiny_values_never_rounds_down_to_zero() {
        let r = Rational::from_f64_up(1e-300).unwrap();
        assert_eq!(r, Rational::new(1, 1 << 62).unwrap());
        // Exactly representable dyadic: 2^-62.
        let r = Rational::from_f64_up(2.0f64.powi(-62)).unwrap();
        assert_eq!(r, Rational::new(1, 1 << 62).unwrap());
        // 3·2^-64 needs rounding up to 1/2^62.
        let r = Rational::from_f64_up(3.0 * 2.0f64.powi(-64)).unwrap();
        assert_eq!(r, Rational::new(1, 1 << 62).unwrap());
    }
}
