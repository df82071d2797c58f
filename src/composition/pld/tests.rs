use super::*;

#[test]
fn builders_hold_at_least_all_the_mass() {
    let grid = Grid::default();
    for pld in [
        Pld::laplace(1.0, grid).unwrap(),
        Pld::laplace(0.01, grid).unwrap(),
        Pld::discrete_laplace(2.0, 3, grid).unwrap(),
        Pld::gaussian(1.0, 1.0, grid).unwrap(),
        Pld::gaussian(50.0, 1.0, grid).unwrap(),
        Pld::k_ary_randomized_response(10, 1.5, grid).unwrap(),
        Pld::approximate(1.0, 1e-3, grid).unwrap(),
    ] {
        let d = &pld.forward;
        let total: f64 = d.mass.iter().sum::<f64>() + d.infinity;
        // Upper bounds: at least 1; split buckets add the width of their share's
        // enclosure (about 10⁻⁹ of each bucket's mass per 10⁻⁴ of step).
        assert!((1.0..1.0 + 1e-5).contains(&total), "{total}");
    }
}

/// Total P-mass and Q-mass (`Σ m·e^(−l)`) of the finite part of a direction.
fn masses(d: &Dist) -> (f64, f64) {
    let p = d.mass.iter().sum();
    let q = (0..d.mass.len())
        .map(|i| d.mass[i] * (-((d.offset + i as i64) as f64 * d.step)).exp())
        .sum();
    (p, q)
}

#[test]
fn coarsening_splits_keeping_both_masses_and_dominates() {
    for pld in [
        Pld::laplace(1.0, Grid::default()).unwrap(),
        Pld::gaussian(0.7, 1.0, Grid::default()).unwrap(),
        Pld::poisson_subsampled_gaussian(1.0, 1.0, 0.1, Grid::default()).unwrap(),
    ] {
        let original = pld.forward.clone();
        let mut d = original.clone();
        let step = d.step();
        let (p0, q0) = masses(&d);
        let before: Vec<f64> = [0.0, 0.1, 0.5, 1.0].iter().map(|&e| d.delta(e)).collect();
        for _ in 0..3 {
            d.coarsen();
        }
        assert_eq!(d.step(), 8.0 * step);
        let (p1, q1) = masses(&d);
        // A split keeps both masses (up to the upward rounding of its shares).
        assert!(p1 >= p0 * (1.0 - 1e-14) && p1 <= p0 * (1.0 + 1e-12), "{p0} {p1}");
        assert!(q1 >= q0 * (1.0 - 1e-12) && q1 <= q0 * (1.0 + 1e-12), "{q0} {q1}");
        for (&e, &b) in [0.0, 0.1, 0.5, 1.0].iter().zip(&before) {
            let after = d.delta(e);
            // Never below (domination); and the change is of second order: an 8× coarser
            // grid moves δ by far less than rounding every loss up by 8h would (which at
            // most gives the original δ at ε − 8h).
            // (Exactly equal where the weight is linear in e^(−l) on both sides: allow
            // the float noise of the two sums.)
            assert!(after >= b * (1.0 - 1e-12), "ε={e}: {after} < {b}");
            let rounded_up = original.delta((e - 8.0 * step).max(0.0));
            assert!(
                after - b <= 0.25 * (rounded_up - b) + 1e-15,
                "ε={e}: {b} → {after} (vs {rounded_up})"
            );
        }
        assert!(d.cumulants.iter().all(|k| k.is_finite()));
    }
    // Steps that are not powers of two apart: both move to the coarser, rounding up.
    let a = Pld::laplace(0.3, Grid::default()).unwrap();
    let b = Pld::gaussian(1.0, 1.0, Grid::default()).unwrap();
    let ab = a.compose(&b);
    assert_eq!(ab.step(), b.step().max(a.step()));
    assert!(ab.delta_for_epsilon(1.0).unwrap() >= b.delta_for_epsilon(1.0).unwrap());
}

#[test]
fn grid_steps_are_fixed_or_relative() {
    assert_eq!(Grid::new(0.75).unwrap().step(), Some(0.75));
    assert_eq!(Grid::default().step_for_scale(1.0), 1.0 / 1024.0);
    assert_eq!(Grid::default().step_for_scale(0.1), 0.1 / 1024.0);
    assert_eq!(Grid::new(0.01).unwrap().step_for_scale(0.1), 0.01);
    for bad in [0.0, -1.0, 2.0, f64::NAN, 1e-13] {
        assert!(Grid::new(bad).is_err(), "{bad}");
    }
    assert!(Grid::default().with_tail(0.5).is_err());
}
