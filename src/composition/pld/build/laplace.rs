//! The Laplace and discrete Laplace builders, plain and Poisson subsampled.

use super::atoms::{Atom, atom_dist, atom_step};
use super::{
    Buckets, MAX_DISCRETE_ATOMS, amplified_up, certify, check_integer_sensitivity, check_large_epsilon,
    check_sampling_rate, check_scale_and_sensitivity, index_up, step_for,
};
use crate::Error;
use crate::composition::closed::ClosedForms;
use crate::composition::pld::{Grid, Pld};
use crate::composition::rdp::RdpCurve;
use crate::privacy::round;

impl Pld {
    /// The Laplace mechanism with `ε = Δ/b` (noise scale `b`, L1 sensitivity `Δ`): the
    /// loss is `+ε` with probability ½, `−ε` with probability `e^(−ε)/2`, and
    /// `ε − 2y` for `y ∈ (0, ε)` with density `e^(−y)/2` in between. Pure ε-DP; its PLD
    /// is much tighter under composition than the generic [`pure`](Self::pure) one.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700.
    pub fn laplace(epsilon: f64, grid: Grid) -> Result<Pld, Error> {
        let eps = check_large_epsilon(epsilon)?;
        let h = step_for(2.0 * eps, eps, grid)?;
        let (lo, hi) = (index_up(-eps, h), index_up(eps, h));
        let mut b = Buckets::new(h, lo, hi);
        b.add(eps, 0.5);
        b.add(-eps, 0.5 * round::exp_up(-eps));
        for (j, mass) in laplace_buckets(eps, h) {
            b.add_at(j, mass);
        }
        let closed = ClosedForms::pure(eps).and_then(|c| Ok(c.with_rdp(RdpCurve::laplace(eps)?)));
        Ok(b.finish(grid).with_closed(certify(closed)))
    }

    /// Poisson subsampling with rate `q` (add/remove, as in
    /// [`poisson_subsampled`](Self::poisson_subsampled)) of the Laplace mechanism with
    /// `ε = Δ/b`: each bucket of its continuous part (losses in `[(j−1)h, jh]`) is an
    /// atom whose loss is known to that interval, on a step fine enough that the
    /// subsampled losses keep the grid's resolution. Tighter than the subsampled worst
    /// case of ε-DP.
    ///
    /// ```
    /// use dpmech::PrivacyLoss;
    /// use dpmech::composition::pld::{Grid, Pld};
    /// let g = Grid::default();
    /// let laplace = Pld::poisson_subsampled_laplace(1.0, 0.01, g)?.self_compose(1000)?;
    /// let worst = Pld::poisson_subsampled(PrivacyLoss::pure(1.0)?, 0.01, g)?.self_compose(1000)?;
    /// assert!(laplace.epsilon_for_delta(1e-5)? < worst.epsilon_for_delta(1e-5)?);
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700;
    /// [`Error::InvalidParameter`] (`q`) if `q` is not in (0, 1].
    pub fn poisson_subsampled_laplace(epsilon: f64, q: f64, grid: Grid) -> Result<Pld, Error> {
        let eps = check_large_epsilon(epsilon)?;
        check_sampling_rate(q)?;
        // Subsampling maps a loss interval of width w to one of width ≤ g′(ε)·w, with
        // g(l) = ln(1 + q(eˡ − 1)) and g′(ε) = q e^ε/(1 + q(e^ε − 1)); the output grid
        // follows g(ε), so the input step follows g(ε)/g′(ε) (never above ε).
        let g_eps = (q * eps.exp_m1()).ln_1p();
        let slope = q / (q + (1.0 - q) * (-eps).exp());
        let h = step_for(2.0 * eps, (g_eps / slope).min(eps), grid)?;
        let mut atoms = vec![
            Atom::exact(eps, 0.5),
            Atom::exact(-eps, 0.5 * round::exp_up(-eps)),
        ];
        atoms.extend(laplace_buckets(eps, h).map(|(j, mass)| Atom {
            loss_down: round::mul_down((j - 1) as f64, h).max(-eps),
            loss_up: round::mul_up(j as f64, h).min(eps),
            mass,
        }));
        let closed = ClosedForms::pure(amplified_up(eps, q));
        Ok(Self::subsampled_atoms(&atoms, 0.0, q, grid)?.with_closed(certify(closed)))
    }

    /// The Laplace mechanism given its noise scale `b` and L1 sensitivity `Δ`
    /// (`ε = Δ/b`, rounded up).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`scale`) if `scale` is not finite and positive;
    /// [`Error::InvalidSensitivity`] if `sensitivity` is not finite and positive;
    /// [`Error::InvalidEpsilon`] if `Δ/b` overflows to +∞; [`Error::InvalidParameter`]
    /// (`epsilon`) if it is above 700.
    pub fn laplace_scale(scale: f64, sensitivity: f64, grid: Grid) -> Result<Pld, Error> {
        let (b, d) = check_scale_and_sensitivity(scale, sensitivity)?;
        Self::laplace(round::div_up(d, b), grid)
    }

    /// The discrete Laplace (geometric) mechanism `Pr[Z = z] ∝ e^(−|z|/t)` on integer
    /// queries of sensitivity `Δ` (at most 2²⁰: the cost is one atom per unit of `Δ`): loss `(|x − Δ| − |x|)/t` for
    /// `x ~ P`. Pure (Δ/t)-DP.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`scale`) if `scale` is not finite and positive;
    /// [`Error::InvalidSensitivity`] if `sensitivity` is 0 or above 2²⁰;
    /// [`Error::InvalidEpsilon`] or [`Error::InvalidParameter`] (`epsilon`) if `Δ/t`
    /// overflows or is above 700.
    pub fn discrete_laplace(scale: f64, sensitivity: u64, grid: Grid) -> Result<Pld, Error> {
        let atoms = discrete_laplace_atoms(scale, sensitivity)?;
        // The losses are multiples of 1/t: the relative grid follows 1/t, not Δ/t.
        let points: Vec<(f64, f64)> = atoms.iter().map(|a| (a.loss_up, a.mass)).collect();
        let h = atom_step(&[&points], Some(round::div_up(1.0, scale)), grid)?;
        let closed = ClosedForms::pure(round::div_up(sensitivity as f64, scale));
        Ok(Pld::symmetric(atom_dist(&points, 0.0, h), grid).with_closed(certify(closed)))
    }

    /// Poisson subsampling with rate `q` (add/remove, as in
    /// [`poisson_subsampled`](Self::poisson_subsampled)) of the discrete Laplace
    /// mechanism of [`discrete_laplace`](Self::discrete_laplace).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`scale`) if `scale` is not finite and positive;
    /// [`Error::InvalidSensitivity`] if `sensitivity` is 0 or above 2²⁰;
    /// [`Error::InvalidEpsilon`] or [`Error::InvalidParameter`] (`epsilon`) if `Δ/t`
    /// overflows or is above 700;
    /// [`Error::InvalidParameter`] (`q`) if `q` is not in (0, 1].
    pub fn poisson_subsampled_discrete_laplace(
        scale: f64,
        sensitivity: u64,
        q: f64,
        grid: Grid,
    ) -> Result<Pld, Error> {
        let pld = Self::subsampled_atoms(&discrete_laplace_atoms(scale, sensitivity)?, 0.0, q, grid)?;
        let epsilon = round::div_up(sensitivity as f64, scale);
        Ok(pld.with_closed(certify(ClosedForms::pure(amplified_up(epsilon, q)))))
    }
}

/// `1 − e^(−a)` rounded up, `a ≥ 0` rounded up by the caller.
fn one_minus_exp_neg_up(a: f64) -> f64 {
    (-(-a).exp_m1()).next_up().next_up().min(1.0)
}

/// The continuous part of the Laplace PLD on step `h`: bucket `j` holds the losses
/// `ε − 2y ∈ [(j−1)h, jh]`, i.e. `y ∈ [(ε − jh)/2, (ε − (j−1)h)/2] ∩ (0, ε)` (widened
/// outward by the rounding of its ends), with P-mass `∫ e^(−y)/2 dy` rounded up.
fn laplace_buckets(eps: f64, h: f64) -> impl Iterator<Item = (i64, f64)> {
    (index_up(-eps, h)..=index_up(eps, h)).filter_map(move |j| {
        let y_lo = (round::sub_down(eps, round::mul_up(j as f64, h)) / 2.0).max(0.0);
        let y_hi = (round::sub_up(eps, round::mul_down((j - 1) as f64, h)) / 2.0).min(eps);
        if y_hi <= y_lo {
            return None;
        }
        let width = round::sub_up(y_hi, y_lo);
        Some((
            j,
            round::mul_up(0.5 * round::exp_up(-y_lo), one_minus_exp_neg_up(width)),
        ))
    })
}

/// Largest integer sensitivity of the discrete Laplace builders: they read one output
/// per unit of sensitivity (one `exp` each), so this bounds their cost.
const MAX_DISCRETE_LAPLACE_SENSITIVITY: u64 = 1 << 20;

/// The discrete Laplace mechanism's loss atoms: with `r = e^(−1/t)`, P-masses
/// `1/(1+r)` at `+Δ/t`, `r^Δ/(1+r)` at `−Δ/t`, `(1−r)/(1+r)·r^x` at `(Δ − 2x)/t` for
/// `0 < x < Δ`.
///
/// Above [`MAX_DISCRETE_ATOMS`] inner outputs, runs of `R = ⌈(Δ − 1)/MAX_DISCRETE_ATOMS⌉`
/// consecutive `x` share one atom: its mass the sum of theirs (rounded up), its loss
/// range from the run's lowest loss to its highest. Every output then carries a loss
/// at most the atom's upper end with its own P-mass: rounding losses up, which only
/// moves `δ(ε)` up (never a merge of outputs, which would be post-processing and could
/// move it down). The run spans `2(R − 1)/t`, below the builder's grid step (`≥ 2Δ/(t·2¹⁶)`),
/// so it costs at most about one step of tightness, and `Δ ≤ 2¹⁶` is unchanged.
fn discrete_laplace_atoms(scale: f64, sensitivity: u64) -> Result<Vec<Atom>, Error> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::InvalidParameter {
            name: "scale",
            value: scale,
            reason: "the scale must be finite and > 0",
        });
    }
    let d = check_integer_sensitivity(sensitivity, MAX_DISCRETE_LAPLACE_SENSITIVITY)?;
    check_large_epsilon(round::div_up(d, scale))?;
    let loss = |numerator: f64| Atom {
        loss_down: round::div_down(numerator, scale),
        loss_up: round::div_up(numerator, scale),
        mass: 0.0,
    };
    let r_down = round::exp_down(-round::div_up(1.0, scale));
    let one_plus_r = round::add_down(1.0, r_down);
    let mut atoms = vec![
        Atom {
            mass: round::div_up(1.0, one_plus_r),
            ..loss(d)
        },
        Atom {
            mass: round::div_up(round::exp_up(-round::div_down(d, scale)), one_plus_r),
            ..loss(-d)
        },
    ];
    let inner = round::div_up(one_minus_exp_neg_up(round::div_up(1.0, scale)), one_plus_r);
    // Upper bounds of inner·r^x, x = 1 … Δ − 1: one product by r (bounded above) per x,
    // moved one ulp up (a rounded-to-nearest product is within half an ulp), restarted
    // from the direct evaluation every 64 values.
    let direct = |x: u64| round::mul_up(inner, round::exp_up(-round::div_down(x as f64, scale)));
    let r_up = round::exp_up(-round::div_down(1.0, scale));
    let mut mass_up = 0.0f64;
    let mut masses = (1..sensitivity).map(|x| {
        mass_up = if x % 64 == 1 {
            direct(x)
        } else {
            (mass_up * r_up).next_up()
        };
        mass_up
    });
    let run = (sensitivity - 1).div_ceil(MAX_DISCRETE_ATOMS).max(1);
    let mut first = 1u64;
    while first < sensitivity {
        let last = (first + run - 1).min(sensitivity - 1);
        let mass = masses
            .by_ref()
            .take((last - first + 1) as usize)
            .fold(0.0, round::add_up);
        // Loss (Δ − 2x)/t falls with x: the run's highest at `first`, lowest at `last`.
        atoms.push(Atom {
            loss_down: loss(d - 2.0 * last as f64).loss_down,
            loss_up: loss(d - 2.0 * first as f64).loss_up,
            mass,
        });
        first = last + 1;
    }
    Ok(atoms)
}
