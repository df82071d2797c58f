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
        assert!((1.0..1.0 + 1e-6).contains(&total), "{total}");
    }
}

#[test]
fn coarsening_rounds_losses_up() {
    let mut d = Pld::laplace(1.0, Grid::default()).unwrap().forward;
    let before = d.delta(0.5);
    d.coarsen();
    d.coarsen();
    assert_eq!(d.step(), 2f64.powi(-8));
    // Steps that are not powers of two apart: both move to the coarser, rounding up.
    let a = Pld::laplace(0.3, Grid::default()).unwrap();
    let b = Pld::gaussian(1.0, 1.0, Grid::default()).unwrap();
    let ab = a.compose(&b);
    assert_eq!(ab.step(), 1.0 / 1024.0);
    assert!(ab.delta_for_epsilon(1.0).unwrap() >= b.delta_for_epsilon(1.0).unwrap());
    assert!(d.cumulants.iter().all(|k| k.is_finite()));
    assert!(d.delta(0.5) >= before);
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
