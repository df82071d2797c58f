//! The certified RDP accountant (`composition::rdp`) against independent computations:
//! each curve never below its Rényi divergence computed directly, the subsampled
//! Gaussian's ε(δ) never below the exact bracket of the PLD tests, and the conversion
//! never below the exact (ε, δ) where it is known.

#[path = "reference/subsampled.rs"]
mod reference;

use dpmech::composition::pld::{Grid, Pld};
use dpmech::composition::rdp::{ORDERS, RdpCurve};
use dpmech::composition::zcdp;
use dpmech::mechanisms::analytic_gaussian_delta;
use reference::{smallest, subsampled_gaussian_optimistic};

/// ln of the binomial expansion of Mironov, Talwar & Zhang (2019) at integer order n,
/// summed directly in f64 (independent of the crate's log-space, outward-rounded sum).
fn direct_subsampled_gaussian(n: u64, q: f64, sigma: f64) -> f64 {
    let mut sum = 0.0f64;
    let mut binom = 1.0f64;
    for k in 0..=n {
        if k > 0 {
            binom *= (n - k + 1) as f64 / k as f64;
        }
        let kf = k as f64;
        sum += binom
            * (1.0 - q).powi((n - k) as i32)
            * q.powi(k as i32)
            * ((kf * kf - kf) / (2.0 * sigma * sigma)).exp();
    }
    sum.ln() / (n as f64 - 1.0)
}

#[test]
fn subsampled_gaussian_curve_matches_the_direct_binomial_sum() {
    let curve = RdpCurve::poisson_subsampled_gaussian(1.0, 1.0, 0.01).unwrap();
    for (i, &a) in ORDERS.iter().enumerate() {
        // (The direct sum overflows f64 beyond α ≈ 35 at σ = 1.)
        if a.fract() != 0.0 || a > 32.0 {
            continue;
        }
        let direct = direct_subsampled_gaussian(a as u64, 0.01, 1.0);
        let got = curve.at(i);
        assert!(got >= direct * (1.0 - 1e-12), "α={a}: {got} < {direct}");
        assert!(got <= direct * (1.0 + 1e-9) + 1e-15, "α={a}: {got} vs {direct}");
    }
    // A fractional order takes the next integer's value (monotone in α).
    let i = ORDERS.iter().position(|&a| a == 2.5).unwrap();
    let j = ORDERS.iter().position(|&a| a == 3.0).unwrap();
    assert_eq!(curve.at(i), curve.at(j));
}

/// D_α(Lap(0, b) ‖ Lap(Δ, b)) by numerical integration of p^α q^(1−α) (trapezoid,
/// step 1e-4 b over ±60 b), independent of Mironov's closed form.
fn laplace_renyi_numeric(eps: f64, alpha: f64) -> f64 {
    // b = 1, Δ = ε.
    let (h, lim) = (1e-4f64, 60.0f64);
    let n = (2.0 * lim / h) as usize;
    let mut sum = 0.0f64;
    for i in 0..=n {
        let y = -lim + i as f64 * h;
        let lp = -y.abs();
        let lq = -(y - eps).abs();
        let w = if i == 0 || i == n { 0.5 } else { 1.0 };
        sum += w * (alpha * lp + (1.0 - alpha) * lq).exp() / 2.0;
    }
    (sum * h).ln() / (alpha - 1.0)
}

#[test]
fn laplace_curve_matches_numerical_integration() {
    for eps in [0.1f64, 1.0] {
        let curve = RdpCurve::laplace(eps).unwrap();
        for &a in &[1.5f64, 2.0, 4.0, 10.0] {
            let i = ORDERS.iter().position(|&x| x == a).unwrap();
            let numeric = laplace_renyi_numeric(eps, a);
            println!(
                "Laplace ε={eps} α={a}: closed form {:.10}, numeric {numeric:.10}",
                curve.at(i)
            );
            // The trapezoid error at step 1e-4 is ~1e-9 relative; the kinks at 0 and Δ
            // add at most h² per kink.
            assert!((curve.at(i) - numeric).abs() <= 1e-6 * numeric, "ε={eps} α={a}");
            assert!(curve.at(i) <= eps && curve.at(i) <= RdpCurve::pure(eps).unwrap().at(i));
        }
    }
}

#[test]
fn gaussian_conversion_is_never_below_exact_and_close_to_tight_zcdp() {
    for (sigma, delta) in [(1.0f64, 1e-5f64), (5.0, 1e-9), (0.5, 1e-6)] {
        let curve = RdpCurve::gaussian(sigma, 1.0).unwrap();
        let (eps, alpha) = curve.epsilon_with_order(delta).unwrap();
        let exact = smallest(|e| analytic_gaussian_delta(1.0, sigma, e) <= delta);
        let z = zcdp::epsilon_tight(1.0 / (2.0 * sigma * sigma), delta).unwrap();
        println!(
            "Gaussian σ={sigma} δ={delta:e}: RDP {eps:.5} (α={alpha}), tight zCDP {z:.5}, exact {exact:.5}"
        );
        assert!(eps >= exact && eps >= z * (1.0 - 1e-12));
        // The orders are a grid in α: within 2 % of the continuous minimum.
        assert!(eps <= z * 1.02, "σ={sigma}");
        // And δ(ε) inverts it: at the answer, δ is at most the target.
        assert!(curve.delta(eps).unwrap() <= delta * (1.0 + 1e-9));
    }
}

/// DP-SGD's textbook setting (q = 0.01, σ = 1, 1000 steps): the RDP ε(δ) is never
/// below the exact value, whose independent lower bracket (optimistic discretisation)
/// is computed here, and never below the certified PLD's answer by more than the PLD's
/// own gap to exact (the PLD is within 1 % of exact; RDP is known to be looser).
#[test]
fn subsampled_gaussian_thousand_steps_rdp_versus_pld_and_published() {
    let (q, sigma, k) = (0.01f64, 1.0f64, 1000u64);
    let curve = RdpCurve::poisson_subsampled_gaussian(sigma, 1.0, q)
        .unwrap()
        .repeat(k)
        .unwrap();
    let pld = Pld::poisson_subsampled_gaussian(sigma, 1.0, q, Grid::default())
        .unwrap()
        .self_compose(k)
        .unwrap();
    for (delta, h) in [(1e-5f64, 1e-4f64), (1e-9, 1e-4)] {
        let (eps, alpha) = curve.epsilon_with_order(delta).unwrap();
        // The classic conversion of TF-Privacy/Opacus before 2020: min R(α) + ln(1/δ)/(α−1),
        // at the integer orders (what their `get_privacy_spent` used to report).
        let classic = ORDERS
            .iter()
            .enumerate()
            .filter(|&(_, &a)| a.fract() == 0.0)
            .map(|(i, &a)| curve.at(i) + (1.0 / delta).ln() / (a - 1.0))
            .fold(f64::INFINITY, f64::min);
        let certified = pld.epsilon_certified(delta).unwrap();
        let lower = subsampled_gaussian_optimistic(q, 1.0 / sigma, k, h, delta);
        println!(
            "q={q} σ={sigma} k={k} δ={delta:e}: RDP (CKS20 conversion) {eps:.4} at α={alpha}, \
             classic conversion {classic:.4}; certified PLD {:.4} ({}); exact ≥ {lower:.4}",
            certified.epsilon, certified.bound
        );
        assert!(eps >= lower, "RDP below the exact value's lower bracket");
        assert!(eps <= classic);
        // The PLD's answer is never above RDP's for the same plan (RDP is one of its
        // closed forms).
        assert!(certified.epsilon <= eps);
    }
}

#[test]
fn composition_adds_curves_and_typed_errors() {
    let a = RdpCurve::laplace(0.3).unwrap();
    let b = RdpCurve::gaussian(2.0, 1.0).unwrap();
    let ab = a.compose(&b);
    for i in 0..ORDERS.len() {
        assert!(ab.at(i) >= a.at(i) + b.at(i) - 1e-15);
    }
    assert_eq!(
        a.repeat(3).unwrap().at(5),
        a.compose(&a).compose(&a).at(5).max(a.repeat(3).unwrap().at(5))
    );
    assert!(RdpCurve::gaussian(0.0, 1.0).is_err());
    assert!(RdpCurve::gaussian(1.0, f64::NAN).is_err());
    assert!(RdpCurve::poisson_subsampled_gaussian(1.0, 1.0, 1.5).is_err());
    assert!(RdpCurve::poisson_subsampled_gaussian(1.0, 1.0, 0.0).is_err());
    assert!(RdpCurve::laplace(f64::INFINITY).is_err());
    assert!(a.repeat(0).is_err());
    assert!(a.epsilon(0.0).is_err() && a.epsilon(1.0).is_err());
    // An infinite curve answers nothing: a typed error.
    let inf = RdpCurve::from_values([f64::INFINITY; ORDERS.len()]).unwrap();
    assert!(inf.epsilon(1e-6).is_err());
    assert!(RdpCurve::from_values([-1.0; ORDERS.len()]).is_err());
}
