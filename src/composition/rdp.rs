//! Rényi differential privacy (Mironov 2017): certified curves at a fixed set of
//! orders, composition by addition, and the tight conversion to `(ε, δ)`.
//!
//! A mechanism is `(α, R)`-RDP when the Rényi divergence of order α between its output
//! distributions on neighbouring inputs is at most `R`, in both directions. An
//! [`RdpCurve`] holds an upper bound `R(α)` for every order of [`ORDERS`] (1.25 … 4096:
//! quarter steps up to 4, halves to 6, every integer up to 64, then a geometric tail).
//! Every value is **rounded up** (`crate::privacy::round`), so a curve can only claim
//! less privacy than the mechanism has.
//!
//! # Curves
//!
//! | mechanism | `R(α)` | source |
//! | --- | --- | --- |
//! | Gaussian, L2 sensitivity Δ, noise σ | `αρ`, `ρ = Δ²/(2σ²)` | Mironov 2017, Prop. 7 |
//! | any ρ-zCDP mechanism (e.g. the discrete Gaussian) | `αρ` | Bun & Steinke 2016, Def. 1.1 |
//! | Laplace, `ε = Δ/b` | `(1/(α−1)) ln(α/(2α−1)·e^((α−1)ε) + (α−1)/(2α−1)·e^(−αε))` | Mironov 2017, Prop. 6 |
//! | randomized response; **any** ε-DP mechanism | `ε + (ln(1 + e^(−(2α−1)ε)) − ln(1 + e^(−ε)))/(α−1)` | binary randomized response dominates every ε-DP pair (Kairouz, Oh & Viswanath 2015), and Rényi divergence obeys data processing |
//! | Poisson-subsampled Gaussian (rate q), integer α | `ln A_α/(α−1)`, `A_α = Σₖ C(α,k)(1−q)^(α−k) qᵏ e^((k²−k)Δ²/(2σ²))` | Mironov, Talwar & Zhang 2019, §3.3 (add/remove neighbours; the same bound holds for both directions at integer α) |
//!
//! The subsampled Gaussian is computed at integer orders only; at a fractional order
//! the value of the next integer order is used (Rényi divergence is non-decreasing in
//! α, so this is an upper bound). `A_α` is summed in log space: each term's logarithm
//! is rounded up, the log-sum-exp is rounded up.
//!
//! # Composition and conversion
//!
//! Curves of releases compose by adding them order by order (Mironov 2017, Prop. 1),
//! **also when each mechanism is chosen adaptively** from earlier outputs, as long as
//! the composed curve is fixed in advance; with adaptively chosen curves a budget is
//! enforced by a Rényi *filter* (Feldman & Zrnic 2021; see [`super::online`]). An `(α, R)`-RDP mechanism is
//! `(ε, δ)`-DP with
//!
//! ```text
//! ε = R + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)
//! ```
//!
//! (Canonne, Kamath & Steinke 2020, Prop. 12; Asoodeh et al. 2021), and
//! [`RdpCurve::epsilon`] returns the minimum over the orders, rounded up;
//! [`RdpCurve::delta`] inverts it per order,
//! `δ = exp((α−1)(R − ε) + (α−1) ln(1 − 1/α) − ln α)`, rounded up.
//!
//! ```
//! use dpmech::composition::rdp::RdpCurve;
//! // DP-SGD: q = 0.01, σ = 1, 1000 steps, δ = 1e-5.
//! let step = RdpCurve::poisson_subsampled_gaussian(1.0, 1.0, 0.01)?;
//! let eps = step.repeat(1000)?.epsilon(1e-5)?;
//! assert!(eps > 1.8 && eps < 2.2);
//! # Ok::<(), dpmech::Error>(())
//! ```

use crate::Error;
use crate::privacy::round::{
    add_up, div_down, div_up, exp_down, exp_up, ln_1p_down, ln_down, ln_up, mul_down, mul_up, sub_down,
    sub_up, u64_up,
};
use crate::privacy::{check_delta, check_epsilon, check_rho};

/// Number of orders in [`ORDERS`].
pub const NUM_ORDERS: usize = 88;

/// The orders α at which every [`RdpCurve`] is held: 1.25, 1.5, 1.75, 2, 2.25, 2.5,
/// 2.75, 3, 3.25, 3.5, 3.75, 4, 4.5, 5, 5.5, 6, 7, …, 64, then 72, 80, 96, 112, 128,
/// 160, 192, 256, 384, 512, 768, 1024, 2048, 4096. Each is a short dyadic number, so
/// `α − 1` and `2α − 1` are exact.
pub const ORDERS: [f64; NUM_ORDERS] = {
    let mut o = [0.0; NUM_ORDERS];
    let head = [
        1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0, 3.25, 3.5, 3.75, 4.0, 4.5, 5.0, 5.5,
    ];
    let tail = [
        72.0, 80.0, 96.0, 112.0, 128.0, 160.0, 192.0, 256.0, 384.0, 512.0, 768.0, 1024.0, 2048.0, 4096.0,
    ];
    let mut i = 0;
    while i < head.len() {
        o[i] = head[i];
        i += 1;
    }
    let mut n = 6;
    while n <= 64 {
        o[i] = n as f64;
        i += 1;
        n += 1;
    }
    let mut j = 0;
    while j < tail.len() {
        o[i] = tail[j];
        i += 1;
        j += 1;
    }
    o
};

/// A certified Rényi-DP curve: an upper bound on the Rényi divergence at each order of
/// [`ORDERS`] (`+∞` where nothing finite is known). See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RdpCurve {
    values: [f64; NUM_ORDERS],
}

/// The order's `α − 1` (exact for the orders held).
fn am1(alpha: f64) -> f64 {
    alpha - 1.0
}

/// An upper bound on `ln(1 − 1/α)` (negative).
fn ln_one_minus_inv_up(alpha: f64) -> f64 {
    ln_up(sub_up(1.0, div_down(1.0, alpha)))
}

/// An upper bound on `ln(1 + x)` for `x ≥ 0`.
fn ln_1p_up(x: f64) -> f64 {
    // ln(1 + x) ≤ x, and the library's ln_1p is faithful: nudge it two ulps.
    x.ln_1p().next_up().next_up().min(x)
}

impl RdpCurve {
    fn from_fn(f: impl Fn(f64) -> f64) -> Self {
        let mut values = [0.0; NUM_ORDERS];
        for (v, &a) in values.iter_mut().zip(ORDERS.iter()) {
            let x = f(a);
            *v = if x.is_nan() { f64::INFINITY } else { x.max(0.0) };
        }
        RdpCurve { values }
    }

    /// The curve of a release that reveals nothing (0 at every order): the identity of
    /// [`compose`](Self::compose).
    pub fn zero() -> Self {
        RdpCurve {
            values: [0.0; NUM_ORDERS],
        }
    }

    /// A curve from explicit values at [`ORDERS`] (each an upper bound on the Rényi
    /// divergence at that order; `+∞` allowed). A NaN or a negative value is refused.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`rdp`) if a value is NaN or negative.
    pub fn from_values(values: [f64; NUM_ORDERS]) -> Result<Self, Error> {
        for &v in &values {
            if v.is_nan() || v < 0.0 {
                return Err(Error::InvalidParameter {
                    name: "rdp",
                    value: v,
                    reason: "a Renyi divergence bound must be >= 0 (+inf allowed)",
                });
            }
        }
        Ok(RdpCurve { values })
    }

    /// `ρα` at every order: a ρ-zCDP mechanism (the Gaussian with `ρ = Δ²/(2σ²)`, the
    /// discrete Gaussian likewise, Canonne, Kamath & Steinke 2020, Thm 4).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRho`] if `rho` is not finite and positive.
    pub fn zcdp(rho: f64) -> Result<Self, Error> {
        let rho = check_rho(rho)?;
        Ok(Self::from_fn(|a| mul_up(a, rho)))
    }

    /// The Gaussian mechanism with L2 sensitivity Δ and noise σ: `αΔ²/(2σ²)`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`sigma`) if `sigma` is not finite and positive;
    /// [`Error::InvalidSensitivity`] if `sensitivity` is not finite and positive; [`Error::InvalidParameter`] (`sigma`) if `Δ²/(2σ²)` is not a finite positive
    /// ρ.
    pub fn gaussian(sigma: f64, sensitivity: f64) -> Result<Self, Error> {
        let (sigma, d) = check_sigma_sensitivity(sigma, sensitivity)?;
        let rho = div_up(mul_up(d, d), mul_down(2.0 * sigma, sigma));
        Self::zcdp(rho).map_err(|_| Error::InvalidParameter {
            name: "sigma",
            value: sigma,
            reason: "sensitivity/sigma is out of range for an RDP curve",
        })
    }

    /// Any pure ε-DP mechanism: the curve of binary randomized response at ε, which
    /// dominates every ε-DP pair; also at most ε at every order.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive.
    pub fn pure(epsilon: f64) -> Result<Self, Error> {
        let e = check_epsilon(epsilon)?;
        let base = ln_1p_down(exp_down(-e));
        Ok(Self::from_fn(|a| {
            let top = ln_1p_up(exp_up(-mul_down(2.0 * a - 1.0, e)));
            let rr = add_up(e, div_up(sub_up(top, base), am1(a)));
            rr.min(e)
        }))
    }

    /// Binary (or k-ary) randomized response at ε: the [`pure`](Self::pure) curve.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive.
    pub fn randomized_response(epsilon: f64) -> Result<Self, Error> {
        Self::pure(epsilon)
    }

    /// The Laplace mechanism at `ε = Δ/b` (Mironov 2017, Prop. 6), never above the
    /// [`pure`](Self::pure) curve.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive.
    pub fn laplace(epsilon: f64) -> Result<Self, Error> {
        let e = check_epsilon(epsilon)?;
        let pure = Self::pure(e)?;
        let lap = Self::from_fn(|a| {
            let first = ln_up(div_up(a, 2.0 * a - 1.0));
            let second = mul_up(am1(a), e);
            let ratio = div_up(am1(a), a);
            let third = ln_1p_up(mul_up(ratio, exp_up(-mul_down(2.0 * a - 1.0, e))));
            div_up(add_up(add_up(first, second), third), am1(a))
        });
        Ok(lap.min(&pure))
    }

    /// The Poisson-subsampled Gaussian (sampling rate q ∈ (0, 1], L2 sensitivity Δ,
    /// noise σ) under add/remove neighbours, at integer orders by the binomial
    /// expansion of Mironov, Talwar & Zhang 2019 (see the [module docs](self)).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`sigma`) if `sigma` is not finite and positive;
    /// [`Error::InvalidSensitivity`] if `sensitivity` is not finite and positive; [`Error::InvalidParameter`] (`q`) if `q` is not in (0, 1];
    /// [`Error::InvalidParameter`] (`sigma`) if `Δ²/(2σ²)` is not a finite positive
    /// ρ.
    pub fn poisson_subsampled_gaussian(sigma: f64, sensitivity: f64, q: f64) -> Result<Self, Error> {
        let (sigma, d) = check_sigma_sensitivity(sigma, sensitivity)?;
        if !(q > 0.0 && q <= 1.0) {
            return Err(Error::InvalidParameter {
                name: "q",
                value: q,
                reason: "the sampling rate must lie in (0, 1]",
            });
        }
        if q == 1.0 {
            return Self::gaussian(sigma, d);
        }
        // c = Δ²/(2σ²), rounded up.
        let c = div_up(mul_up(d, d), mul_down(2.0 * sigma, sigma));
        if !c.is_finite() {
            return Err(Error::InvalidParameter {
                name: "sigma",
                value: sigma,
                reason: "sensitivity/sigma is out of range for an RDP curve",
            });
        }
        let ln_q = ln_up(q);
        let ln_stay = ln_up(sub_up(1.0, q));
        let gaussian = Self::gaussian(sigma, d)?;
        let mut cache: Vec<(u64, f64)> = Vec::new();
        let mut at_integer = |n: u64| -> f64 {
            if let Some(&(_, v)) = cache.iter().find(|(m, _)| *m == n) {
                return v;
            }
            let v = subsampled_gaussian_integer(n, ln_q, ln_stay, c);
            cache.push((n, v));
            v
        };
        let mut values = [0.0; NUM_ORDERS];
        for (i, &a) in ORDERS.iter().enumerate() {
            let n = a.ceil() as u64;
            // Subsampling never hurts: also at most the Gaussian's own curve at α.
            values[i] = at_integer(n).min(gaussian.values[i]);
        }
        Ok(RdpCurve { values })
    }

    /// The values at [`ORDERS`].
    pub fn values(&self) -> &[f64; NUM_ORDERS] {
        &self.values
    }

    /// The bound at `ORDERS[index]`.
    pub fn at(&self, index: usize) -> f64 {
        self.values[index]
    }

    /// Order-wise minimum of two valid curves for the same mechanism.
    pub fn min(&self, other: &RdpCurve) -> RdpCurve {
        let mut values = self.values;
        for (v, o) in values.iter_mut().zip(other.values.iter()) {
            *v = v.min(*o);
        }
        RdpCurve { values }
    }

    /// The curve of both releases: the order-wise sum, rounded up.
    pub fn compose(&self, other: &RdpCurve) -> RdpCurve {
        let mut values = self.values;
        for (v, o) in values.iter_mut().zip(other.values.iter()) {
            *v = add_up(*v, *o);
        }
        RdpCurve { values }
    }

    /// `k ≥ 1` releases of this mechanism: the curve times k, rounded up.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`k`) if `k = 0`.
    pub fn repeat(&self, k: u64) -> Result<RdpCurve, Error> {
        let kf = crate::composition::check_steps(k)?;
        let mut values = self.values;
        for v in values.iter_mut() {
            *v = mul_up(*v, kf);
        }
        Ok(RdpCurve { values })
    }

    /// The ε of the conversion at `ORDERS[index]` (rounded up; may be negative or +∞).
    pub(crate) fn epsilon_at(&self, index: usize, ln_inv_delta: f64) -> f64 {
        let a = ORDERS[index];
        let r = self.values[index];
        let num = sub_up(ln_inv_delta, ln_down(a));
        let v = add_up(add_up(r, ln_one_minus_inv_up(a)), div_up(num, am1(a)));
        if v.is_nan() { f64::INFINITY } else { v }
    }

    /// The smallest ε (rounded up, ≥ 0) such that a mechanism with this curve is
    /// `(ε, δ)`-DP by the conversion of Canonne, Kamath & Steinke (2020), minimised over
    /// the orders held. A typed error if no order gives a finite ε.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDelta`] if `delta` is not in (0, 1); [`Error::Unattainable`] if the
    /// curve is infinite at every order held.
    pub fn epsilon(&self, delta: f64) -> Result<f64, Error> {
        Ok(self.epsilon_with_order(delta)?.0)
    }

    /// As [`epsilon`](Self::epsilon), with the order α that achieved it.
    ///
    /// # Errors
    ///
    /// As [`epsilon`](Self::epsilon).
    pub fn epsilon_with_order(&self, delta: f64) -> Result<(f64, f64), Error> {
        let d = check_delta(delta)?;
        let l = -ln_down(d);
        let mut best = (f64::INFINITY, f64::NAN);
        for (i, &a) in ORDERS.iter().enumerate() {
            let e = self.epsilon_at(i, l);
            if e < best.0 {
                best = (e, a);
            }
        }
        if best.0.is_finite() {
            Ok((best.0.max(0.0), best.1))
        } else {
            Err(Error::Unattainable {
                what: "the RDP curve is infinite at every order held",
            })
        }
    }

    /// The smallest δ (rounded up, at most 1) such that a mechanism with this curve is
    /// `(ε, δ)`-DP by the same conversion, minimised over the orders held (`ε ≥ 0`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and ≥ 0.
    pub fn delta(&self, epsilon: f64) -> Result<f64, Error> {
        let e = crate::composition::check_epsilon_total(epsilon)?;
        let mut best = 1.0f64;
        for (i, &a) in ORDERS.iter().enumerate() {
            let r = self.values[i];
            let first = mul_up(am1(a), sub_up(r, e));
            let second = mul_up(am1(a), ln_one_minus_inv_up(a));
            let ln_d = sub_up(add_up(first, second), ln_down(a));
            if !ln_d.is_nan() {
                best = best.min(exp_up(ln_d));
            }
        }
        Ok(best)
    }

    /// The most RDP budget at `ORDERS[index]` that still converts to `(ε, δ)`: `ε −
    /// ln(1 − 1/α) − (ln(1/δ) − ln α)/(α − 1)`, rounded **down** (an allowance; may be
    /// negative, when nothing fits at that order).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidDelta`] if `delta` is not in (0, 1); [`Error::InvalidParameter`]
    /// (`index`) if `index ≥ NUM_ORDERS`.
    pub fn budget_at(index: usize, epsilon: f64, delta: f64) -> Result<f64, Error> {
        let e = check_epsilon(epsilon)?;
        let d = check_delta(delta)?;
        if index >= NUM_ORDERS {
            return Err(Error::InvalidParameter {
                name: "index",
                value: index as f64,
                reason: "no RDP order has this index",
            });
        }
        let a = ORDERS[index];
        let l = -ln_down(d);
        let num = sub_up(l, ln_down(a));
        // ε − (upper bound of ln(1 − 1/α)) − (upper bound of the fraction).
        Ok(sub_down(sub_down(e, ln_one_minus_inv_up(a)), div_up(num, am1(a))))
    }
}

/// `ln A_n / (n − 1)` for the Poisson-subsampled Gaussian at integer order `n ≥ 2`,
/// rounded up, from upper bounds on `ln q`, `ln(1 − q)` and `c = Δ²/(2σ²)`.
fn subsampled_gaussian_integer(n: u64, ln_q: f64, ln_stay: f64, c: f64) -> f64 {
    // Terms t_k = ln C(n, k) + (n − k) ln(1 − q) + k ln q + (k² − k) c, each rounded up.
    let mut terms = Vec::with_capacity(n as usize + 1);
    let mut ln_binom = 0.0f64; // ln C(n, 0), then upper bounds by the ratio recursion
    for k in 0..=n {
        if k > 0 {
            ln_binom = sub_up(add_up(ln_binom, ln_up((n - k + 1) as f64)), ln_down(k as f64));
        }
        let kf = k as f64;
        let t = add_up(
            add_up(ln_binom, mul_up((n - k) as f64, ln_stay)),
            add_up(mul_up(kf, ln_q), mul_up(kf * kf - kf, c)),
        );
        terms.push(t);
    }
    let m = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        return f64::INFINITY;
    }
    let mut s = 0.0f64;
    for &t in &terms {
        s = add_up(s, exp_up(sub_up(t, m)));
    }
    let ln_a = add_up(m, ln_up(s)).max(0.0);
    div_up(ln_a, u64_up(n - 1))
}

fn check_sigma_sensitivity(sigma: f64, sensitivity: f64) -> Result<(f64, f64), Error> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(Error::InvalidParameter {
            name: "sigma",
            value: sigma,
            reason: "sigma must be finite and > 0",
        });
    }
    if !(sensitivity.is_finite() && sensitivity > 0.0) {
        return Err(Error::InvalidSensitivity { value: sensitivity });
    }
    Ok((sigma, sensitivity))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_increasing_and_dyadic() {
        for w in ORDERS.windows(2) {
            assert!(w[0] < w[1]);
        }
        assert_eq!(ORDERS[0], 1.25);
        assert_eq!(ORDERS[NUM_ORDERS - 1], 4096.0);
        for &a in &ORDERS {
            assert_eq!((a - 1.0) + 1.0, a);
            assert_eq!((a * 4.0).fract(), 0.0);
        }
    }

    #[test]
    fn pure_curve_matches_the_direct_formula() {
        // D_α(RR_ε) = ln(p^α q^(1−α) + q^α p^(1−α))/(α − 1), p = e^ε/(1 + e^ε).
        for eps in [0.01f64, 0.5, 2.0] {
            let c = RdpCurve::pure(eps).unwrap();
            for (i, &a) in ORDERS.iter().enumerate().take(40) {
                let p = eps.exp() / (1.0 + eps.exp());
                let q = 1.0 - p;
                let direct = (p.powf(a) * q.powf(1.0 - a) + q.powf(a) * p.powf(1.0 - a)).ln() / (a - 1.0);
                assert!(
                    c.at(i) >= direct * (1.0 - 1e-9),
                    "ε {eps} α {a}: {} < {direct}",
                    c.at(i)
                );
                assert!(
                    c.at(i) <= direct * (1.0 + 1e-6) + 1e-15,
                    "ε {eps} α {a}: {} vs {direct}",
                    c.at(i)
                );
            }
        }
    }

    #[test]
    fn subsampled_gaussian_at_q_one_and_tiny_q() {
        let g = RdpCurve::gaussian(2.0, 1.0).unwrap();
        let s = RdpCurve::poisson_subsampled_gaussian(2.0, 1.0, 1.0).unwrap();
        assert_eq!(g, s);
        let t = RdpCurve::poisson_subsampled_gaussian(2.0, 1.0, 1e-6).unwrap();
        for i in 0..NUM_ORDERS {
            assert!(t.at(i) <= g.at(i));
        }
        // At α = 2: A_2 = 1 + q²(e^(2c) − 1) exactly (c = 1/8).
        let i2 = ORDERS.iter().position(|&a| a == 2.0).unwrap();
        let q = 0.1f64;
        let exact = (q * q * (0.25f64).exp_m1()).ln_1p();
        let got = RdpCurve::poisson_subsampled_gaussian(2.0, 1.0, q).unwrap().at(i2);
        assert!(
            got >= exact && got <= exact * (1.0 + 1e-9) + 1e-15,
            "{got} vs {exact}"
        );
    }
}
