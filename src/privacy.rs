//! Privacy parameters, privacy guarantees, and conservative floating-point rounding.
//!
//! * [`Epsilon`], [`Delta`] and [`Rho`] are validated newtypes: holding one proves the
//!   value is in its domain.
//! * [`PrivacyLoss`] names the *kind* of guarantee a release carries, so a weaker
//!   guarantee (approximate DP, zCDP, approximate zCDP, random DP) is never counted as a
//!   stronger one.
//! * [`round`] holds every outward-rounding helper of the crate: computations of
//!   privacy parameters round toward *more noise* and *more reported loss*.

use crate::Error;
use core::fmt;

pub(crate) mod erfc;

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

/// Validates the number of values `k` of k-ary randomized response (the mechanism, and
/// its PLD in [`composition::pld`](crate::composition::pld)); here, below both, so the
/// accounting layer does not import from `mechanisms`: at least 2.
pub(crate) fn check_categories(k: u64) -> Result<u64, Error> {
    if k >= 2 {
        Ok(k)
    } else {
        Err(Error::InvalidParameter {
            name: "k",
            value: k as f64,
            reason: "randomized response needs at least 2 values",
        })
    }
}

macro_rules! parameter {
    ($(#[$doc:meta])* $name:ident, $check:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
        pub struct $name(f64);

        impl $name {
            /// Validates `value` and wraps it.
            ///
            /// # Errors
            ///
            /// [`Error::InvalidEpsilon`], [`Error::InvalidDelta`] or [`Error::InvalidRho`] (for
            /// [`Epsilon`], [`Delta`], [`Rho`]) when `value` is outside the parameter's domain.
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
    /// δ-approximate ρ-zCDP (Bun & Steinke 2016, Def. 8.1): for neighbours there are events of
    /// probability at least 1 − δ conditioned on which the outputs' Rényi divergences of every
    /// order α > 1 are at most ρ·α. Partition selection under zCDP gives it (the δ of a key held
    /// by one unit being released). It converts to `(ρ + 2√(ρ ln(1/δ′)), δ + δ′)`-DP
    /// ([`approximate_zcdp_to_dp`](crate::composition::zcdp::approximate_zcdp_to_dp)).
    ApproximateZcdp {
        /// ρ.
        rho: f64,
        /// δ, the probability of the events outside which nothing is bounded.
        delta: f64,
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
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] unless ε is finite and positive.
    pub fn pure(epsilon: f64) -> Result<Self, Error> {
        Ok(Self::Pure {
            epsilon: check_epsilon(epsilon)?,
        })
    }

    /// (ε, δ) for approximate DP, after validating both. δ = 0 is accepted and gives
    /// the pure guarantee [`PrivacyLoss::Pure`] (the same statement), so generic code
    /// need not branch on it; δ must lie in `[0, 1)`.
    ///
    /// ```
    /// use dpmech::PrivacyLoss;
    /// assert_eq!(PrivacyLoss::approximate(1.0, 0.0)?, PrivacyLoss::pure(1.0)?);
    /// assert_eq!(PrivacyLoss::approximate(1.0, 1e-6)?.to_string(), "(ε = 1, δ = 1e-6)");
    /// assert!(PrivacyLoss::approximate(1.0, 1.0).is_err());
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] unless ε is finite and positive; [`Error::InvalidDelta`]
    /// unless δ = 0 or 0 < δ < 1.
    pub fn approximate(epsilon: f64, delta: f64) -> Result<Self, Error> {
        let epsilon = check_epsilon(epsilon)?;
        if delta == 0.0 {
            return Ok(Self::Pure { epsilon });
        }
        Ok(Self::Approximate {
            epsilon,
            delta: check_delta(delta)?,
        })
    }

    /// ρ for zero-concentrated DP, after validating it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRho`] unless ρ is finite and positive.
    pub fn zcdp(rho: f64) -> Result<Self, Error> {
        Ok(Self::Zcdp { rho: check_rho(rho)? })
    }

    /// (ρ, δ) for δ-approximate ρ-zCDP, after validating both. Unlike
    /// [`approximate`](Self::approximate), δ = 0 is refused here (write plain zCDP with
    /// [`zcdp`](Self::zcdp)); a hand-built `ApproximateZcdp { rho, delta: 0.0 }` is still
    /// accepted everywhere as ρ-zCDP.
    ///
    /// ```
    /// use dpmech::PrivacyLoss;
    /// let loss = PrivacyLoss::approximate_zcdp(0.5, 1e-6)?;
    /// assert_eq!(loss.to_string(), "(ρ = 0.5, δ = 1e-6)-zCDP");
    /// assert_eq!((loss.epsilon(), loss.delta()), (None, Some(1e-6)));
    /// assert!(PrivacyLoss::approximate_zcdp(0.5, 0.0).is_err());
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRho`] unless ρ is finite and positive; [`Error::InvalidDelta`]
    /// unless 0 < δ < 1.
    pub fn approximate_zcdp(rho: f64, delta: f64) -> Result<Self, Error> {
        Ok(Self::ApproximateZcdp {
            rho: check_rho(rho)?,
            delta: check_delta(delta)?,
        })
    }

    /// The ε of a pure, approximate or random-DP guarantee (`None` for zCDP and
    /// approximate zCDP).
    pub fn epsilon(&self) -> Option<f64> {
        match *self {
            Self::Pure { epsilon } | Self::Approximate { epsilon, .. } | Self::RandomDp { epsilon, .. } => {
                Some(epsilon)
            }
            Self::Zcdp { .. } | Self::ApproximateZcdp { .. } => None,
        }
    }

    /// The δ of the guarantee: 0 for pure DP, the δ of approximate DP and of approximate
    /// zCDP, `None` for zCDP and random DP.
    pub fn delta(&self) -> Option<f64> {
        match *self {
            Self::Pure { .. } => Some(0.0),
            Self::Approximate { delta, .. } | Self::ApproximateZcdp { delta, .. } => Some(delta),
            Self::Zcdp { .. } | Self::RandomDp { .. } => None,
        }
    }
}

/// In words a user reads without a textbook: `ε = 2 (pure DP)`, `(ε = 1, δ = 1e-6)`,
/// `ρ = 0.5 (zCDP)`, `(ρ = 0.5, δ = 1e-6)-zCDP`, `(ε = 1, γ = 0.05) random DP (weaker
/// than DP)`. Numbers print
/// in full below 10⁶ and down to 10⁻³, in scientific notation outside.
impl fmt::Display for PrivacyLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = Number;
        match *self {
            Self::Pure { epsilon } => write!(f, "ε = {} (pure DP)", n.show(epsilon)),
            Self::Approximate { epsilon, delta } => {
                write!(f, "(ε = {}, δ = {})", n.show(epsilon), n.show(delta))
            }
            Self::Zcdp { rho } => write!(f, "ρ = {} (zCDP)", n.show(rho)),
            Self::ApproximateZcdp { rho, delta } => {
                write!(f, "(ρ = {}, δ = {})-zCDP", n.show(rho), n.show(delta))
            }
            Self::RandomDp { epsilon, gamma } => write!(
                f,
                "(ε = {}, γ = {}) random DP (weaker than DP)",
                n.show(epsilon),
                n.show(gamma)
            ),
        }
    }
}

/// Compact number display for privacy parameters.
struct Number;

impl Number {
    fn show(&self, x: f64) -> String {
        if x == 0.0 || (1e-3..1e6).contains(&x.abs()) || !x.is_finite() {
            format!("{x}")
        } else {
            format!("{x:e}")
        }
    }
}

/// Outward rounding for floating-point computations of privacy parameters: the one
/// place in the crate where it is done.
///
/// `+`, `−`, `×`, `÷` and `√` are *exact when the result is representable*: error-free
/// transformations (TwoSum, FMA residuals) decide whether the correctly rounded result
/// lies below or above the exact one, and the result steps one ulp outward only when
/// needed — so sums of exactly representable charges stay exact, while every inexact
/// result is bounded on the safe side. `ln`/`exp` of the platform library are faithful
/// to within 1 ulp on supported targets, so they are nudged two ulps. The direction is
/// always the *safe* one: a noise scale or a reported loss is rounded up, an allowance
/// (a per-step ε that may be spent) is rounded down.
///
/// These are arithmetic operations, not parameter checks: like `f64`'s own operations
/// they are total, `±∞` and NaN in give `±∞` and NaN out, and they never return an
/// error. Every public function of the crate that takes a privacy parameter checks it
/// (a typed [`Error`]) before any of them sees it.
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

    /// Below this magnitude, FMA residuals may themselves be inexact (underflow): step
    /// unconditionally.
    const TINY: f64 = 1e-280;

    /// An upper bound on the exact `a + b`.
    pub fn add_up(a: f64, b: f64) -> f64 {
        let s = a + b;
        if !s.is_finite() {
            return s;
        }
        let bb = s - a;
        let err = (a - (s - bb)) + (b - bb);
        if err > 0.0 { s.next_up() } else { s }
    }

    /// A lower bound on the exact `a + b`.
    pub fn add_down(a: f64, b: f64) -> f64 {
        let s = a + b;
        if !s.is_finite() {
            return s;
        }
        let bb = s - a;
        let err = (a - (s - bb)) + (b - bb);
        if err < 0.0 { s.next_down() } else { s }
    }

    /// An upper bound on the exact `a − b`.
    pub fn sub_up(a: f64, b: f64) -> f64 {
        add_up(a, -b)
    }

    /// A lower bound on the exact `a − b`.
    pub fn sub_down(a: f64, b: f64) -> f64 {
        add_down(a, -b)
    }

    /// An upper bound on the exact `a × b`.
    pub fn mul_up(a: f64, b: f64) -> f64 {
        let p = a * b;
        if !p.is_finite() {
            return p;
        }
        if p.abs() < TINY {
            return if a == 0.0 || b == 0.0 { p } else { p.next_up() };
        }
        if a.mul_add(b, -p) > 0.0 { p.next_up() } else { p }
    }

    /// A lower bound on the exact `a × b`.
    pub fn mul_down(a: f64, b: f64) -> f64 {
        let p = a * b;
        if !p.is_finite() {
            return p;
        }
        if p.abs() < TINY {
            return if a == 0.0 || b == 0.0 { p } else { p.next_down() };
        }
        if a.mul_add(b, -p) < 0.0 { p.next_down() } else { p }
    }

    /// An upper bound on the exact `a ÷ b` (`b ≠ 0`).
    pub fn div_up(a: f64, b: f64) -> f64 {
        let q = a / b;
        if !q.is_finite() {
            return q;
        }
        if q.abs() < TINY || a.abs() < TINY {
            return if a == 0.0 { q } else { q.next_up() };
        }
        // r = a − q·b exactly; the exact quotient exceeds q iff r/b > 0.
        let r = -q.mul_add(b, -a);
        if (r > 0.0) == (b > 0.0) && r != 0.0 {
            q.next_up()
        } else {
            q
        }
    }

    /// A lower bound on the exact `a ÷ b` (`b ≠ 0`).
    pub fn div_down(a: f64, b: f64) -> f64 {
        let q = a / b;
        if !q.is_finite() {
            return q;
        }
        if q.abs() < TINY || a.abs() < TINY {
            return if a == 0.0 { q } else { q.next_down() };
        }
        let r = -q.mul_add(b, -a);
        if (r < 0.0) == (b > 0.0) && r != 0.0 {
            q.next_down()
        } else {
            q
        }
    }

    /// An upper bound on the exact `√a` (`a ≥ 0`).
    pub fn sqrt_up(a: f64) -> f64 {
        let s = a.sqrt();
        if !s.is_finite() || s == 0.0 {
            return s;
        }
        if a < TINY {
            return s.next_up();
        }
        if s.mul_add(s, -a) < 0.0 { s.next_up() } else { s }
    }

    /// A lower bound on the exact `√a` (`a ≥ 0`), never below 0.
    pub fn sqrt_down(a: f64) -> f64 {
        let s = a.sqrt();
        if !s.is_finite() || s == 0.0 {
            return s;
        }
        if a < TINY {
            return s.next_down().max(0.0);
        }
        if s.mul_add(s, -a) > 0.0 { s.next_down() } else { s }
    }

    /// A lower bound on `ln a`.
    pub fn ln_down(a: f64) -> f64 {
        a.ln().next_down().next_down()
    }

    /// An upper bound on `ln a`.
    pub fn ln_up(a: f64) -> f64 {
        a.ln().next_up().next_up()
    }

    /// A lower bound on `ln(1 + a)`.
    pub fn ln_1p_down(a: f64) -> f64 {
        a.ln_1p().next_down().next_down()
    }

    /// An upper bound on `eᵃ`.
    pub fn exp_up(a: f64) -> f64 {
        a.exp().next_up().next_up()
    }

    /// A lower bound on `eᵃ` (never below 0).
    pub fn exp_down(a: f64) -> f64 {
        a.exp().next_down().next_down().max(0.0)
    }

    /// An upper bound on `eᵃ − 1`.
    pub fn exp_m1_up(a: f64) -> f64 {
        a.exp_m1().next_up().next_up()
    }

    /// `k` as an `f64`, rounded up when `k > 2⁵³` is not representable.
    pub fn u64_up(k: u64) -> f64 {
        let f = k as f64;
        if (f as u128) < u128::from(k) {
            f.next_up()
        } else {
            f
        }
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
    #[allow(clippy::float_cmp)] // exact values are intended: the arithmetic is exact
    fn directed_ops_are_exact_when_representable_and_bracket_otherwise() {
        use round::*;
        assert_eq!(add_up(0.5, 0.25), 0.75);
        assert_eq!(add_down(0.5, 0.25), 0.75);
        assert!(add_up(0.1, 0.2) > add_down(0.1, 0.2));
        // The binary 0.1 + 0.2 is exactly 0.30000000000000001665…, which rounds to
        // nearest *above*: the upper bound is that float, the lower bound one ulp less.
        assert_eq!(add_up(0.1, 0.2), 0.1 + 0.2);
        assert_eq!(add_down(0.1, 0.2), (0.1f64 + 0.2).next_down());
        assert_eq!(mul_up(3.0, 0.5), 1.5);
        assert!(mul_up(0.1, 0.1) >= 0.1 * 0.1 && mul_down(0.1, 0.1) <= 0.1 * 0.1);
        assert!(mul_up(0.1, 0.1) > mul_down(0.1, 0.1));
        assert_eq!(div_up(1.0, 4.0), 0.25);
        assert!(div_up(1.0, 3.0) > div_down(1.0, 3.0));
        assert!(div_up(1.0, 3.0) * 3.0 >= 1.0);
        assert_eq!(sqrt_up(4.0), 2.0);
        assert!(sqrt_up(2.0) * sqrt_up(2.0) >= 2.0);
        assert!(sqrt_down(2.0) * sqrt_down(2.0) <= 2.0);
        assert_eq!(u64_up(u64::MAX), 18_446_744_073_709_551_616.0);
        assert!(u64_up((1 << 53) + 1) > (1u64 << 53) as f64);
    }

    #[test]
    fn outward_rounding_brackets_the_exact_result() {
        // The exact sum of the binary 0.1 and 0.2 is not representable: the bounds are
        // the two floats around it (the nearest float happens to be the upper one).
        let (lo, hi) = (round::add_down(0.1, 0.2), round::add_up(0.1, 0.2));
        assert!(lo < hi && lo <= 0.1 + 0.2 && 0.1 + 0.2 <= hi);
        assert_eq!(hi.next_down(), lo);
        // 1/3 is inexact: its bounds are two adjacent floats around the nearest one.
        assert!(round::div_down(1.0, 3.0) <= 1.0 / 3.0 && 1.0 / 3.0 <= round::div_up(1.0, 3.0));
        assert_eq!(round::div_up(1.0, 3.0).next_down(), round::div_down(1.0, 3.0));
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
        assert_eq!(r.to_string(), "(ε = 1, γ = 0.05) random DP (weaker than DP)");
        assert_eq!(PrivacyLoss::pure(2.0).unwrap().to_string(), "ε = 2 (pure DP)");
        assert_eq!(z.to_string(), "ρ = 0.5 (zCDP)");
        assert_eq!(
            PrivacyLoss::approximate(0.25, 1e-6).unwrap().to_string(),
            "(ε = 0.25, δ = 1e-6)"
        );
        assert_eq!(
            PrivacyLoss::approximate(0.25, 0.0).unwrap(),
            PrivacyLoss::Pure { epsilon: 0.25 }
        );
        assert!(PrivacyLoss::approximate(0.25, -0.0).is_ok());
        assert!(PrivacyLoss::approximate(0.25, f64::NAN).is_err());
        let az = PrivacyLoss::approximate_zcdp(0.5, 1e-6).unwrap();
        assert_eq!(az.to_string(), "(ρ = 0.5, δ = 1e-6)-zCDP");
        assert_eq!((az.epsilon(), az.delta()), (None, Some(1e-6)));
    }
}
