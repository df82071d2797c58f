//! Builders: the worst-case pair of each mechanism, discretised pessimistically.
//!
//! Every mass is an upper bound on the true mass of its grid point (outward rounding
//! through [`crate::privacy::round`]); every loss is rounded up to the grid.
//!
//! One file per family: `laplace` (Laplace and discrete Laplace, plain and Poisson
//! subsampled), `gaussian` (Gaussian and discrete Gaussian, plain and subsampled), and
//! `atoms` (randomized response and the worst cases of a stated ε or (ε, δ)
//! guarantee, plain and subsampled); this file holds what they share.

mod atoms;
mod gaussian;
mod laplace;

use super::dist::Dist;
use super::{Grid, Pld};
use crate::Error;
use crate::composition::closed::ClosedForms;
use crate::privacy::{check_epsilon, round};

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

/// Largest ε a builder accepts: beyond it `e^ε` overflows and nothing is learned.
const MAX_EPSILON: f64 = 700.0;

/// Most grid points a builder lays out per direction ([`super::MAX_BUILD_POINTS`]).
const MAX_BUILD_POINTS: usize = super::MAX_BUILD_POINTS;

/// Most atoms the discrete builders emit (discrete Laplace: the inner outputs, two more
/// at `±Δ/t`; discrete Gaussian: the outputs within reach): beyond, consecutive outputs
/// share one atom (see `laplace::discrete_laplace_atoms`), so what follows an atom list
/// (bucketing, the subsampled losses' `expm1` and `ln_1p`) costs at most this many steps.
const MAX_DISCRETE_ATOMS: u64 = 1 << 16;

/// The grid's step for a mechanism of loss scale `scale`, doubled until `width` spans
/// at most `MAX_BUILD_POINTS − 8` points (a coarser step rounds up, never less safe).
/// A width that is not finite (a loss range that overflows) is a typed error: no step
/// could hold it, and a step of `+∞` would put every loss at one point.
fn step_for(width: f64, scale: f64, grid: Grid) -> Result<f64, Error> {
    if !(width.is_finite() && width >= 0.0) {
        return Err(Error::InvalidParameter {
            name: "width",
            value: width,
            reason: "the range of privacy losses of these parameters is not finite in f64; \
                     use more noise or a larger epsilon-scale grid",
        });
    }
    let mut h = grid.step_for_scale(scale);
    while width / h > (MAX_BUILD_POINTS - 8) as f64 {
        h *= 2.0;
    }
    Ok(h)
}

/// `⌈loss/h⌉`, never below the exact value.
fn index_up(loss: f64, h: f64) -> i64 {
    round::div_up(loss, h).ceil() as i64
}

/// Accumulates masses at grid indices `first ..= last`.
struct Buckets {
    step: f64,
    first: i64,
    mass: Vec<f64>,
    infinity: f64,
}

impl Buckets {
    fn new(step: f64, first: i64, last: i64) -> Self {
        Buckets {
            step,
            first,
            mass: vec![0.0; (last - first + 1) as usize],
            infinity: 0.0,
        }
    }

    /// Adds an upper bound `mass` at the (already rounded-up) index.
    fn add_at(&mut self, index: i64, mass: f64) {
        let slot = &mut self.mass[(index - self.first) as usize];
        *slot = round::add_up(*slot, mass);
    }

    /// Adds an upper bound `mass` at loss `loss` (rounded up to the grid).
    fn add(&mut self, loss: f64, mass: f64) {
        self.add_at(index_up(loss, self.step), mass);
    }

    /// Adds a bucket of outputs whose losses all lie in `range = (lower, upper)` and in
    /// `(−∞, jh]` (the grid point j bounds them by construction), with P-mass at most
    /// `p_hi` and Q-mass at least `q_lo`: **split** between the grid points `j − 1` and
    /// `j` so that both masses are kept ("connect the dots", Doroshenko et al. 2022).
    /// The share sent up is `b = ∫ β dP` with `β(l) = (1 − e^(lower − l))/(1 −
    /// e^(lower − upper)) ∈ [0, 1]`, i.e. `b = (p − q·e^lower)/(1 − e^(lower − upper))`,
    /// and `a = p − b` goes down. The bucket is a merge (post-processing) of the split
    /// pair, so the split dominates it at every ε and under composition, while `δ(ε)`
    /// moves only at second order in h (rounding every loss up moves it at first
    /// order). An upper bound `up ≥ b` goes up and `p_hi − up` down (from the exact
    /// split, moving `up − b` up is rounding up), so the total stays `p_hi`. When the
    /// bound is useless (an overflow, say) everything goes up, which is rounding up.
    fn add_split(&mut self, j: i64, range: (f64, f64), p_hi: f64, q_lo: f64) {
        // Any bracket of the bucket's losses may be used: its lower end never above the
        // grid point j − 1 (that piece then only moves up), its upper end exactly at or
        // below the grid point j (which bounds the losses by construction).
        let lower = range.0.min(round::mul_up((j - 1) as f64, self.step));
        let upper = range.1.min(round::mul_up(j as f64, self.step));
        let denominator = -round::exp_m1_up(-round::sub_down(upper, lower));
        let up = round::div_up(
            round::sub_up(p_hi, round::mul_down(q_lo, round::exp_down(lower))),
            denominator,
        );
        if !(up.is_finite() && denominator > 0.0) {
            self.add_at(j, p_hi);
            return;
        }
        // From the exact split (a, b), moving the part `up − b ≥ 0` of the lower share
        // up is rounding up: (p_hi − up, up) is valid and keeps the total at p_hi (no
        // mass is added for the width of the enclosure, which compounds over k steps).
        let up = up.clamp(0.0, p_hi);
        self.add_at(j - 1, round::sub_up(p_hi, up).max(0.0));
        self.add_at(j, up);
    }

    fn finish(self, grid: Grid) -> Pld {
        Pld::symmetric(self.into_dist(), grid)
    }

    fn into_dist(self) -> Dist {
        let mut dist = Dist {
            step: self.step,
            offset: self.first,
            mass: self.mass,
            infinity: self.infinity.min(1.0),
            relative: 0.0,
            error: 0.0,
            cumulants: Vec::new(),
        };
        dist.trim(0.0);
        dist.compute_cumulants();
        dist
    }
}

fn check_large_epsilon(epsilon: f64) -> Result<f64, Error> {
    let e = check_epsilon(epsilon)?;
    if e > MAX_EPSILON {
        return Err(Error::InvalidParameter {
            name: "epsilon",
            value: e,
            reason: "PLD builders support epsilon <= 700 (e^epsilon overflows beyond)",
        });
    }
    Ok(e)
}

/// The certificates of a builder, or none when they cannot be computed (a closed form
/// is only ever an extra upper bound: dropping it is safe).
fn certify(closed: Result<ClosedForms, Error>) -> ClosedForms {
    closed.unwrap_or_default()
}

/// `ln(1 + q(e^ε − 1))`, rounded up: the pure ε of an ε-DP mechanism applied to a
/// Poisson sample of rate q, under add/remove neighbours (Li, Qin & Yang 2012; Balle,
/// Barthe & Gaboardi 2018, Thm 8).
fn amplified_up(epsilon: f64, q: f64) -> f64 {
    let x = round::mul_up(q, round::exp_m1_up(epsilon));
    // ln(1 + x) ≤ x, and 1 + q(e^ε − 1) ≤ e^ε for q ≤ 1.
    round::ln_up(round::add_up(1.0, x)).min(x).min(epsilon)
}

/// A Poisson sampling rate in `(0, 1]`.
fn check_sampling_rate(q: f64) -> Result<(), Error> {
    if q > 0.0 && q <= 1.0 {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            name: "q",
            value: q,
            reason: "the sampling rate must lie in (0, 1]",
        })
    }
}

/// An integer sensitivity in `[1, max]`, as `f64` (exact: `max ≤ 2⁵³`).
fn check_integer_sensitivity(sensitivity: u64, max: u64) -> Result<f64, Error> {
    if sensitivity == 0 || sensitivity > max {
        return Err(Error::InvalidSensitivity {
            value: sensitivity as f64,
        });
    }
    Ok(sensitivity as f64)
}

fn check_scale_and_sensitivity(scale: f64, sensitivity: f64) -> Result<(f64, f64), Error> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::InvalidParameter {
            name: "scale",
            value: scale,
            reason: "the noise scale must be finite and > 0",
        });
    }
    if !(sensitivity.is_finite() && sensitivity > 0.0) {
        return Err(Error::InvalidSensitivity { value: sensitivity });
    }
    Ok((scale, sensitivity))
}
