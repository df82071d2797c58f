//! Privacy parameters, privacy guarantees, and conservative floating-point rounding.
//!
//! * [`Epsilon`], [`Delta`] and [`Rho`] are validated newtypes: holding one proves the
//!   value is in its domain.
//! * [`PrivacyLoss`] names the *kind* of guarantee a release carries, so a weaker
//!   guarantee (approximate DP, zCDP, random DP) is never counted as a stronger one.
//! * [`round`] holds every outward-rounding helper of the crate: computations of
//!   privacy parameters round toward *more noise* and *more reported loss*.

use crate::Error;
use core::fmt;

/// Validates ε: finite and strictly positive.
pub(crate) fn check_epsilon(value: f64) -> Result<f64, Error> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::InvalidEpsilon { value })
    }
}

/// Validates δ: in the open interval (0, 1).
pub(crate) fn check_delta(value: f64) -> Result<f64, Error> {
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(Error::InvalidDelta { value })
    }
}

/// Validates ρ: finite and strictly positive.
pub(crate) fn check_rho(value: f64) -> Result<f64, Error> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::InvalidRho { value })
    }
}

/// Validates a real sensitivity: finite and strictly positive.
pub(crate) fn check_sensitivity(value: f64) -> Result<f64, Error> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::InvalidSensitivity { value })
    }
}

macro_rules! parameter {
    ($(#[$doc:meta])* $name:ident, $check:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
        pub struct $name(f64);

        impl $name {
            /// Validates `value` and wraps it.
            pub fn new(value: f64) -> Result<Self, Error> {
                $check(value).map(Self)
            }

            /// The wrapped value.
            pub fn get(self) -> f64 {
                self.0
            }
        }

        impl TryFrom<f64> for $name {
            type Error = Error;
            fn try_from(value: f64) -> Result<Self, Error> {
                Self::new(value)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

parameter!(
    /// The privacy parameter ε of pure or approximate DP: finite and > 0.
    Epsilon,
    check_epsilon
);
parameter!(
    /// The failure probability δ of approximate DP: in (0, 1).
    Delta,
    check_delta
);
parameter!(
    /// The parameter ρ of zero-concentrated DP (Bun & Steinke 2016): finite and > 0.
    Rho,
    check_rho
);

/// The guarantee a mechanism or a whole analysis provides.
///
/// The variants are ordered from strongest to weakest kind, and they are **not**
/// interchangeable: converting between them goes through the explicit, conservative
/// conversions of the `composition` layer.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum PrivacyLoss {
    /// Pure ε-differential privacy: `Pr[M(D) ∈ S] ≤ e^ε · Pr[M(D′) ∈ S]`.
    Pure {
        /// ε.
        epsilon: f64,
    },
    /// Approximate (ε, δ)-differential privacy:
    /// `Pr[M(D) ∈ S] ≤ e^ε · Pr[M(D′) ∈ S] + δ`.
    Approximate {
        /// ε.
        epsilon: f64,
        /// δ.
        delta: f64,
    },
    /// ρ-zero-concentrated differential privacy (Bun & Steinke 2016): the Rényi
    /// divergence of every order α > 1 is at most ρ·α.
    Zcdp {
        /// ρ.
        rho: f64,
    },
    /// (ε, γ)-random differential privacy (Hall, Wasserman & Rinaldo 2013;
    /// Rubinstein & Aldà 2017): ε-DP holds for all but a γ-fraction of neighbouring
    /// pairs drawn from the data distribution. Strictly weaker than any of the above.
    RandomDp {
        /// ε.
        epsilon: f64,
        /// γ, the probability mass of neighbouring pairs not covered.
        gamma: f64,
    },
}

impl PrivacyLoss {
    /// ε for pure DP, after validating it.
    pub fn pure(epsilon: f64) -> Result<Self, Error> {
        Ok(Self::Pure {
            epsilon: check_epsilon(epsilon)?,
        })
    }

    /// (ε, δ) for approximate DP, after validating both.
    pub fn approximate(epsilon: f64, delta: f64) -> Result<Self, Error> {
        Ok(Self::Approximate {
            epsilon: check_epsilon(epsilon)?,
            delta: check_delta(delta)?,
        })
    }

    /// ρ for zero-concentrated DP, after validating it.
    pub fn zcdp(rho: f64) -> Result<Self, Error> {
        Ok(Self::Zcdp { rho: check_rho(rho)? })
    }

    /// The ε of a pure, approximate or random-DP guarantee (`None` for zCDP).
    pub fn epsilon(&self) -> Option<f64> {
        match *self {
            Self::Pure { epsilon } | Self::Approximate { epsilon, .. } | Self::RandomDp { epsilon, .. } => {
                Some(epsilon)
            }
            Self::Zcdp { .. } => None,
        }
    }

    /// The δ of the guarantee: 0 for pure DP, `None` for zCDP and random DP.
    pub fn delta(&self) -> Option<f64> {
        match *self {
            Self::Pure { .. } => Some(0.0),
            Self::Approximate { delta, .. } => Some(delta),
            Self::Zcdp { .. } | Self::RandomDp { .. } => None,
        }
    }
}

impl fmt::Display for PrivacyLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Pure { epsilon } => write!(f, "{epsilon}-DP (pure)"),
            Self::Approximate { epsilon, delta } => write!(f, "({epsilon}, {delta})-DP"),
            Self::Zcdp { rho } => write!(f, "{rho}-zCDP"),
            Self::RandomDp { epsilon, gamma } => {
                write!(f, "({epsilon}, {gamma})-random DP (not pure DP)")
            }
        }
    }
}

/// Outward rounding for floating-point computations of privacy parameters.
///
/// IEEE-754 `+ − × ÷ √` are correctly rounded (error ≤ ½ ulp); nudging the result one
/// ulp outward therefore bounds the exact real result. `ln`/`exp` of the platform
/// library are faithful to within 1 ulp on supported targets, so they are nudged two
/// ulps. The direction is always the *safe* one: a noise scale or a reported loss is
/// rounded up, an allowance (a per-step ε that may be spent) is rounded down.
pub mod round {
    /// The smallest `f64` strictly above `x` (∞ stays ∞, NaN stays NaN).
    #[inline]
    pub fn up(x: f64) -> f64 {
        x.next_up()
    }

    /// The largest `f64` strictly below `x`.
    #[inline]
    pub fn down(x: f64) -> f64 {
        x.next_down()
    }

    /// An upper bound on the exact `a + b`.
    #[inline]
    pub fn add_up(a: f64, b: f64) -> f64 {
        up(a + b)
    }

    /// A lower bound on the exact `a + b`.
    #[inline]
    pub fn add_down(a: f64, b: f64) -> f64 {
        down(a + b)
    }

    /// An upper bound on the exact `a − b`.
    #[inline]
    pub fn sub_up(a: f64, b: f64) -> f64 {
        up(a - b)
    }

    /// A lower bound on the exact `a − b`.
    #[inline]
    pub fn sub_down(a: f64, b: f64) -> f64 {
        down(a - b)
    }

    /// An upper bound on the exact `a × b`.
    #[inline]
    pub fn mul_up(a: f64, b: f64) -> f64 {
        up(a * b)
    }

    /// A lower bound on the exact `a × b`.
    #[inline]
    pub fn mul_down(a: f64, b: f64) -> f64 {
        down(a * b)
    }

    /// An upper bound on the exact `a ÷ b`.
    #[inline]
    pub fn div_up(a: f64, b: f64) -> f64 {
        up(a / b)
    }

    /// A lower bound on the exact `a ÷ b`.
    #[inline]
    pub fn div_down(a: f64, b: f64) -> f64 {
        down(a / b)
    }

    /// An upper bound on the exact `√a`.
    #[inline]
    pub fn sqrt_up(a: f64) -> f64 {
        up(a.sqrt())
    }

    /// A lower bound on the exact `√a` (never below 0).
    #[inline]
    pub fn sqrt_down(a: f64) -> f64 {
        down(a.sqrt()).max(0.0)
    }

    /// An upper bound on the exact `ln a`.
    #[inline]
    pub fn ln_up(a: f64) -> f64 {
        up(up(a.ln()))
    }

    /// A lower bound on the exact `ln a`.
    #[inline]
    pub fn ln_down(a: f64) -> f64 {
        down(down(a.ln()))
    }

    /// An upper bound on the exact `eᵃ`.
    #[inline]
    pub fn exp_up(a: f64) -> f64 {
        up(up(a.exp()))
    }

    /// A lower bound on the exact `eᵃ` (never below 0).
    #[inline]
    pub fn exp_down(a: f64) -> f64 {
        down(down(a.exp())).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_reject_their_invalid_domains() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0] {
            assert!(Epsilon::new(bad).is_err(), "epsilon {bad}");
            assert!(Rho::new(bad).is_err(), "rho {bad}");
        }
        for bad in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
            assert!(
                matches!(Delta::new(bad), Err(Error::InvalidDelta { .. })),
                "delta {bad}"
            );
        }
        assert!(matches!(Epsilon::new(-2.0), Err(Error::InvalidEpsilon { value }) if value == -2.0));
        assert_eq!(Epsilon::new(0.5).unwrap().get(), 0.5);
        assert_eq!(Delta::new(1e-9).unwrap().get(), 1e-9);
    }

    #[test]
    fn outward_rounding_brackets_the_exact_result() {
        // 0.1 + 0.2 is not representable: the bounds must straddle the exact 0.3...
        // computed from the exact binary values of 0.1 and 0.2.
        let (lo, hi) = (round::add_down(0.1, 0.2), round::add_up(0.1, 0.2));
        assert!(lo < 0.1 + 0.2 && 0.1 + 0.2 < hi);
        assert!(round::div_up(1.0, 3.0) > 1.0 / 3.0);
        assert!(round::div_down(1.0, 3.0) < 1.0 / 3.0);
        assert!(round::ln_up(2.0) > core::f64::consts::LN_2);
        assert!(round::ln_down(2.0) < core::f64::consts::LN_2);
        assert!(round::exp_up(1.0) > core::f64::consts::E);
        assert!(round::exp_down(1.0) < core::f64::consts::E);
        assert_eq!(round::sqrt_down(0.0), 0.0);
    }

    #[test]
    fn loss_accessors_and_display() {
        let p = PrivacyLoss::pure(1.0).unwrap();
        assert_eq!(p.epsilon(), Some(1.0));
        assert_eq!(p.delta(), Some(0.0));
        let z = PrivacyLoss::zcdp(0.5).unwrap();
        assert_eq!(z.epsilon(), None);
        assert!(PrivacyLoss::approximate(1.0, 1.0).is_err());
        let r = PrivacyLoss::RandomDp {
            epsilon: 1.0,
            gamma: 0.05,
        };
        assert!(r.to_string().contains("not pure"));
    }
}
