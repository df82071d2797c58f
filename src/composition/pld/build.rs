//! Builders: the worst-case pair of each mechanism, discretised pessimistically.
//!
//! Every mass is an upper bound on the true mass of its grid point (outward rounding
//! through [`crate::privacy::round`]); every loss is rounded up to the grid.

use super::dist::Dist;
use super::{Grid, Pld};
use crate::Error;
use crate::composition::closed::ClosedForms;
use crate::composition::rdp::RdpCurve;
use crate::mechanisms::{check_categories, erfc};
use crate::privacy::{PrivacyLoss, check_delta, check_epsilon, round};

/// Relative error charged to each `erfc` evaluation: twice the crate-wide assumption
/// for its `erfc` (tested against 40-digit references to 10⁻¹⁴), covering also the
/// rounding of its argument.
const ERFC_ERROR: f64 = 2e-13;

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

/// The subsampled Gaussian builder's far tails: where all the mass beyond a bucket is at
/// most `FAR_TAIL_SHARE` times the grid's tail (10⁻²⁰ by default), `FAR_GROUP` buckets
/// are taken as one and its mass rounded **up** to the group's top point (valid, and
/// first-order only in a mass that small), saving most tail evaluations there: with
/// q = 0.01, σ = 1 about 40 % of the grid points lie in that far tail.
const FAR_TAIL_SHARE: f64 = 1e4;

/// Buckets per group in the far tail (see [`FAR_TAIL_SHARE`]).
const FAR_GROUP: i64 = 16;

/// Largest ε a builder accepts: beyond it `e^ε` overflows and nothing is learned.
const MAX_EPSILON: f64 = 700.0;

/// Most grid points a builder lays out per direction ([`super::MAX_BUILD_POINTS`]).
const MAX_BUILD_POINTS: usize = super::MAX_BUILD_POINTS;

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

/// `1 − e^(−a)` rounded up, `a ≥ 0` rounded up by the caller.
fn one_minus_exp_neg_up(a: f64) -> f64 {
    (-(-a).exp_m1()).next_up().next_up().min(1.0)
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

    /// The Gaussian mechanism with noise `σ` and L2 sensitivity `Δ`: the loss is
    /// `N(μ, 2μ)` with `μ = Δ²/(2σ²)` (both directions alike). Its tails beyond
    /// `tail` are merged into the lowest grid point (lower) or charged to δ (upper).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`scale`) if `sigma` is not finite and positive;
    /// [`Error::InvalidSensitivity`] if `sensitivity` is not finite and positive;
    /// [`Error::InvalidParameter`] (`sigma`) if `Δ/σ` is above 10⁶.
    pub fn gaussian(sigma: f64, sensitivity: f64, grid: Grid) -> Result<Pld, Error> {
        let (sigma, d) = check_scale_and_sensitivity(sigma, sensitivity)?;
        let s = round::div_up(d, sigma); // standard deviation of the loss, rounded up
        let mu = round::mul_up(s, s) / 2.0; // a larger mean only shifts losses up
        if !(s.is_finite() && mu.is_finite() && s <= 1e6) {
            return Err(Error::InvalidParameter {
                name: "sigma",
                value: sigma,
                reason: "sensitivity/sigma must be at most 1e6 for a Gaussian PLD",
            });
        }
        // Q(z) = ½erfc(z/√2) ≤ e^(−z²/2)/2: beyond z_t the tail is below `tail`.
        let z_t = (2.0 * (1.0 / grid.tail).ln()).sqrt() + 1.0;
        // The pair P = N(s, 1), Q = N(0, 1) of outputs o, loss L(o) = so − s²/2. Outputs
        // and s are multiples of a power of two g (s rounded up: a larger s dominates),
        // so that `o − s` is exact and each mass is bounded both ways by one evaluation.
        let g = (s + z_t + 2.0).log2().ceil().exp2() * 2f64.powi(-50);
        let s = (s / g).ceil() * g;
        let mu = (round::mul_down(s, s) / 2.0, round::mul_up(s, s) / 2.0);
        // Buckets are split between their grid points (`Buckets::add_split`): the
        // default step is 2⁻⁷ of the loss's standard deviation s (not 2⁻¹⁰: the split
        // costs only second-order tightness, and composition coarsens it anyway).
        let h = step_for(2.0 * z_t * s + 2.0, 8.0 * s, grid)?;
        let (lo, hi) = (index_up(mu.1 - z_t * s, h), index_up(mu.1 + z_t * s, h));
        // Grid point j ↔ o_j ≤ (jh + μ)/s, so L(o_j) ≤ jh; bucket j is (o_(j−1), o_j].
        let point = |j: i64| {
            let o = round::div_down(round::add_down(round::mul_down(j as f64, h), mu.0), s);
            (o / g).floor() * g
        };
        let loss_bounds = |o: f64| {
            let so = (round::mul_down(s, o), round::mul_up(s, o));
            (round::sub_down(so.0, mu.1), round::sub_up(so.1, mu.0))
        };
        let mut b = Buckets::new(h, lo, hi);
        // Each bucket end's two tails (under P and Q) are evaluated once, for both of
        // the buckets it bounds.
        let mut below = point(lo);
        let (mut below_p, mut below_q) = (End::at(below - s), End::at(below));
        b.add_at(lo, normal_mass_between(End::at(f64::NEG_INFINITY), below_p).1);
        for j in lo + 1..=hi {
            let above = point(j).max(below);
            let (above_p, above_q) = (End::at(above - s), End::at(above));
            let p = normal_mass_between(below_p, above_p);
            let q = normal_mass_between(below_q, above_q);
            b.add_split(j, (loss_bounds(below).0, loss_bounds(above).1), p.1, q.0);
            (below, below_p, below_q) = (above, above_p, above_q);
        }
        b.infinity = normal_mass_between(below_p, End::at(f64::INFINITY)).1;
        let rho = round::div_up(round::mul_up(d, d), round::mul_down(2.0 * sigma, sigma));
        Ok(b.finish(grid).with_closed(certify(ClosedForms::zcdp(rho))))
    }

    /// The discrete Gaussian mechanism `Pr[Z = z] ∝ e^(−z²/(2σ²))` on integers
    /// (Canonne, Kamath & Steinke 2020) with integer sensitivity `Δ`: the loss at output
    /// `x ~ N_ℤ(0, σ²)` is `(Δ² − 2xΔ)/(2σ²)`, its exact (not the continuous) PLD.
    /// `σ ≤ 10⁵` (the support is enumerated; beyond, the continuous
    /// [`gaussian`](Self::gaussian) is within 10⁻¹⁰⁰ of it).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`sigma`) if `sigma` is not in [0.1, 10⁵];
    /// [`Error::InvalidSensitivity`] if `sensitivity` is 0 or above 2²⁰.
    pub fn discrete_gaussian(sigma: f64, sensitivity: u64, grid: Grid) -> Result<Pld, Error> {
        if !(sigma.is_finite() && (0.1..=1e5).contains(&sigma)) {
            return Err(Error::InvalidParameter {
                name: "sigma",
                value: sigma,
                reason: "the discrete Gaussian PLD supports sigma in [0.1, 1e5]",
            });
        }
        let d = check_integer_sensitivity(sensitivity, 1 << 20)?;
        let two_var_down = round::mul_down(2.0 * sigma, sigma);
        let two_var_up = round::mul_up(2.0 * sigma, sigma);
        // Enumerate |x| ≤ X: beyond, Σ e^(−x²/2σ²) ≤ σ√(2π)·Q((X − 1)/σ) per side.
        let z_t = (2.0 * (1.0 / grid.tail).ln()).sqrt() + 1.0;
        let reach = (z_t * sigma).ceil() + 2.0;
        let weight_up = |x: f64| round::exp_up(-round::div_down(x * x, two_var_up));
        let weight_down = |x: f64| round::exp_down(-round::div_up(x * x, two_var_down));
        // Z ≥ the truncated sum of lower bounds (non-negative terms, rounded down).
        let mut z_down = 0.0f64;
        let mut x = -reach;
        while x <= reach {
            z_down = round::add_down(z_down, weight_down(x));
            x += 1.0;
        }
        let outside = round::mul_up(
            sigma * (2.0 * core::f64::consts::PI).sqrt() * (1.0 + 4.0 * U),
            normal_tail_up((reach - 1.0) / sigma),
        );
        // Loss (Δ² − 2xΔ)/(2σ²), rounded up; scale Δ/σ as for the Gaussian.
        let loss_up = |x: f64| round::div_up(round::sub_up(d * d, round::mul_down(2.0 * x, d)), two_var_down);
        let (lowest, highest) = (loss_up(reach), loss_up(-reach));
        let h = step_for(highest - lowest + 2.0, round::div_up(d, sigma), grid)?;
        let mut b = Buckets::new(h, index_up(lowest, h), index_up(highest, h));
        let mut x = -reach;
        while x <= reach {
            b.add(loss_up(x), round::div_up(weight_up(x), z_down));
            x += 1.0;
        }
        // Outputs below −X have the highest losses: charged to δ; above X: merged
        // into the lowest point.
        let per_side = round::div_up(outside, z_down);
        b.infinity = per_side;
        b.add(lowest, per_side);
        // The discrete Gaussian is Δ²/(2σ²)-zCDP (Canonne, Kamath & Steinke 2020, Thm 4).
        let rho = round::div_up(round::mul_up(d, d), two_var_down);
        Ok(b.finish(grid).with_closed(certify(ClosedForms::zcdp(rho))))
    }

    /// The Gaussian mechanism (noise `σ`, L2 sensitivity `Δ`) run on a **Poisson
    /// subsample** (each record kept independently with probability `q ∈ (0, 1]`),
    /// under **add/remove** neighbours: the pair `(1 − q)N(0, σ²) + qN(Δ, σ²)` vs
    /// `N(0, σ²)`, in both directions, which differ (amplification by subsampling,
    /// e.g. Zhu, Dong & Wang 2022). This is DP-SGD's accounting.
    ///
    /// ```
    /// use dpmech::composition::pld::{Grid, Pld};
    /// let step = Pld::poisson_subsampled_gaussian(1.0, 1.0, 0.01, Grid::default())?;
    /// let eps = step.self_compose(100)?.epsilon_for_delta(1e-5)?;
    /// assert!(eps < 1.0);
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// * [`Error::InvalidParameter`] (`q`) if `q` is not in (0, 1];
    /// * [`Error::InvalidParameter`] (`scale`) if `sigma` is not finite and positive;
    ///   [`Error::InvalidSensitivity`] if `sensitivity` is not finite and positive;
    /// * [`Error::InvalidParameter`] (`sigma`) if `Δ/σ` is above 10³ or a privacy loss
    ///   would exceed 700 (about `Δ/σ ≤ 27` at the default tail); for a rate of 1, those of
    ///   [`gaussian`](Self::gaussian).
    pub fn poisson_subsampled_gaussian(
        sigma: f64,
        sensitivity: f64,
        q: f64,
        grid: Grid,
    ) -> Result<Pld, Error> {
        check_sampling_rate(q)?;
        if q == 1.0 {
            return Self::gaussian(sigma, sensitivity, grid);
        }
        let closed =
            certify(RdpCurve::poisson_subsampled_gaussian(sigma, sensitivity, q).map(ClosedForms::rdp));
        let pair = MixturePair::new(sigma, sensitivity, q, grid)?;
        let h = pair.h;
        let (q, s) = (pair.q, pair.s);
        let (fwd_lo, fwd_hi) = (pair.loss(-pair.z_t), pair.loss(s + pair.z_t));
        let (bwd_lo, bwd_hi) = (-pair.loss(pair.z_t), -(-q).ln_1p());

        // Forward: o ~ P, L = L(o). Grid point j ↔ o_j ≤ o_at(jh) (so L(o_j) ≤ jh);
        // bucket j is o ∈ (o_(j−1), o_j], the lowest reaching −∞.
        let (lo, hi) = (index_up(fwd_lo, h) - 1, index_up(fwd_hi, h) + 1);
        let mut forward = Buckets::new(h, lo, hi);
        let mut below = pair.point(lo);
        let mut below_ends = pair.ends(below);
        let beyond = pair.ends(f64::INFINITY);
        let far = FAR_TAIL_SHARE * grid.tail;
        forward.add_at(lo, pair.masses(f64::NEG_INFINITY, below).1.1);
        let mut j = lo + 1;
        while j <= hi {
            // In the far upper tail (all the P-mass above `below` at most `far`), a group
            // of `FAR_GROUP` buckets is one, its P-mass rounded up to its top point.
            let far_tail = pair.masses_between(below_ends, beyond).1.1 <= far;
            let top = if far_tail { (j + FAR_GROUP - 1).min(hi) } else { j };
            let above = pair.point(top).max(below);
            let above_ends = pair.ends(above);
            let (null, mixture) = pair.masses_between(below_ends, above_ends);
            if far_tail {
                forward.add_at(top, mixture.1);
            } else {
                let range = (pair.loss_bounds(below).0, pair.loss_bounds(above).1);
                forward.add_split(j, range, mixture.1, null.0);
            }
            (below, below_ends) = (above, above_ends);
            j = top + 1;
        }
        forward.infinity = pair.masses(below, f64::INFINITY).1.1 + f64::MIN_POSITIVE;

        // Backward: o ~ Q, L = −L(o), decreasing in o. Grid point j ↔ o′_j ≥ o_at(−jh)
        // (so −L(o′_j) ≤ jh); bucket j is o ∈ (o′_j, o′_(j−1)], the lowest reaching +∞.
        let (lo, hi) = (index_up(bwd_lo, h) - 1, index_up(bwd_hi, h) + 1);
        let point = |j: i64| pair.on_grid(subsampled_inverse(-round::mul_down(j as f64, h), q, s).1, true);
        let mut backward = Buckets::new(h, lo, hi);
        let mut above = point(lo);
        let mut above_ends = pair.ends(above);
        backward.add_at(lo, pair.masses(above, f64::INFINITY).0.1);
        // The far tail comes first here (large outputs, the lowest losses): groups of
        // `FAR_GROUP` buckets while the Q-mass above the group's lower end is at most
        // `far`, then (the condition only fails from there on) one bucket at a time.
        let mut far_tail = true;
        let mut j = lo + 1;
        while j <= hi {
            if far_tail {
                let top = (j + FAR_GROUP - 1).min(hi);
                let below = point(top).min(above);
                let below_ends = pair.ends(below);
                if pair.masses_between(below_ends, beyond).0.1 <= far {
                    let (null, _) = pair.masses_between(below_ends, above_ends);
                    backward.add_at(top, null.1);
                    (above, above_ends) = (below, below_ends);
                    j = top + 1;
                    continue;
                }
                far_tail = false;
            }
            let below = point(j).min(above);
            let below_ends = pair.ends(below);
            let (null, mixture) = pair.masses_between(below_ends, above_ends);
            let range = (-pair.loss_bounds(above).1, -pair.loss_bounds(below).0);
            backward.add_split(j, range, null.1, mixture.0);
            (above, above_ends) = (below, below_ends);
            j += 1;
        }
        backward.infinity = pair.masses(f64::NEG_INFINITY, above).0.1 + f64::MIN_POSITIVE;

        Ok(Pld {
            tail: grid.tail,
            forward: forward.into_dist(),
            backward: Some(backward.into_dist()),
            closed: ClosedForms::default(),
        }
        .with_closed(closed))
    }

    /// The Gaussian mechanism (noise `σ`, L2 sensitivity `Δ` **under substitution**) run
    /// on a sample drawn **without replacement** (a uniformly random subset of a fixed
    /// size `m` of the `n` records, `γ = m/n ∈ (0, 1]`), under **substitution**
    /// neighbours (the relation for which a fixed sample size is public).
    ///
    /// With `(P, Q) = (N(Δ, σ²), N(0, σ²))` the base mechanism's dominating pair and
    /// `δ_M` its privacy profile, the subsample's profile is at most
    /// `δ(ε′) = γ·δ_M(ε)` with `e^ε′ = 1 + γ(e^ε − 1)`, in both directions (advanced
    /// joint convexity, Balle, Barthe & Gaboardi 2018, Theorem 9; tight over the
    /// mechanisms with this profile). For ε′ ≥ 0 this is exactly the curve of
    /// `(γP + (1 − γ)Q, Q)`; the PLD built here is the **symmetric** pair with that
    /// curve — the losses above 0 of `γP + (1 − γ)Q` against `Q`, their mirror image
    /// below 0 with the Q-masses, and the rest at 0 — which dominates the subsampled
    /// mechanism for every order of the hockey-stick divergence (below 1 through the
    /// same bound on the reversed pair), so it composes with any other PLD.
    ///
    /// ```
    /// use dpmech::composition::pld::{Grid, Pld};
    /// // Batches of 1 % of the records, 1000 steps of σ = 2 (Δ = 2 under substitution):
    /// let step = Pld::sampled_without_replacement_gaussian(2.0, 2.0, 0.01, Grid::default())?;
    /// let eps = step.self_compose(1000)?.epsilon_for_delta(1e-5)?;
    /// assert!(eps < 2.5); // about 2.41 (Poisson sampling, add/remove, Δ = 1: 1.83)
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// * [`Error::InvalidParameter`] (`q`) if `gamma` is not in (0, 1];
    /// * [`Error::InvalidParameter`] (`scale`) if `sigma` is not finite and positive;
    ///   [`Error::InvalidSensitivity`] if `sensitivity` is not finite and positive;
    /// * [`Error::InvalidParameter`] (`sigma`) if `Δ/σ` is above 10³ or a privacy loss
    ///   would exceed 700 (about `Δ/σ ≤ 27` at the default tail); for a rate of 1, those of
    ///   [`gaussian`](Self::gaussian).
    pub fn sampled_without_replacement_gaussian(
        sigma: f64,
        sensitivity: f64,
        gamma: f64,
        grid: Grid,
    ) -> Result<Pld, Error> {
        check_sampling_rate(gamma)?;
        if gamma == 1.0 {
            return Self::gaussian(sigma, sensitivity, grid);
        }
        let pair = MixturePair::new(sigma, sensitivity, gamma, grid)?;
        let (h, s) = (pair.h, pair.s);
        let top = pair.loss(s + pair.z_t);
        let (lo, hi) = (-index_up(top, h) - 2, index_up(top, h) + 1);
        let mut b = Buckets::new(h, lo, hi);
        // L(o) > 0 exactly for o > s/2 (e^(so − s²/2) > 1), an exact point of the grid.
        let mut below = s / 2.0;
        let mut below_ends = pair.ends(below);
        for j in 1..=hi {
            let above = pair.point(j).max(below);
            let above_ends = pair.ends(above);
            let (null, mixture) = pair.masses_between(below_ends, above_ends);
            let range = (pair.loss_bounds(below).0.max(0.0), pair.loss_bounds(above).1);
            b.add_split(j, range, mixture.1, null.0);
            // The mirror image: losses in [−upper, −lower], P-mass the Q-mass `null`
            // and Q-mass the P-mass `mixture`, split below the first grid point that
            // bounds it.
            let mirror = (-range.1, -range.0);
            let index = index_up(mirror.1, h);
            b.add_split(index, mirror, null.1, mixture.0);
            (below, below_ends) = (above, above_ends);
        }
        let (null, mixture) = pair.masses(below, f64::INFINITY);
        b.infinity = mixture.1 + f64::MIN_POSITIVE;
        // The mirrored top tail lies below every grid point: rounded up to the lowest.
        b.add_at(lo, null.1);
        // The rest of the P-mass sits at loss 0: 1 − P′(L > 0) − Q(L > 0).
        let (null, mixture) = pair.masses(s / 2.0, f64::INFINITY);
        let rest = round::sub_up(1.0, round::add_down(null.0, mixture.0)).max(0.0);
        b.add_at(0, rest);
        Ok(b.finish(grid))
    }

    /// Binary randomized response with `ε` (keep the bit with probability
    /// `e^ε/(1 + e^ε)`): loss `±ε`. This is also the worst case of every pure ε-DP
    /// mechanism, see [`pure`](Self::pure).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700.
    pub fn randomized_response(epsilon: f64, grid: Grid) -> Result<Pld, Error> {
        Self::k_ary_randomized_response(2, epsilon, grid)
    }

    /// k-ary randomized response with `ε` (the true value with probability
    /// `e^ε/(e^ε + k − 1)`): loss `+ε`, `0` (k − 2 outputs) or `−ε`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`k`) if `k < 2`;
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700.
    pub fn k_ary_randomized_response(k: u64, epsilon: f64, grid: Grid) -> Result<Pld, Error> {
        let atoms = randomized_response_atoms(k, epsilon)?;
        Ok(Self::atoms(&atoms, 0.0, grid)?.with_closed(certify(ClosedForms::pure(epsilon))))
    }

    /// The worst case of any pure ε-DP mechanism (its PLD dominates theirs: Kairouz,
    /// Oh & Viswanath 2015): randomized response with ε.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700.
    pub fn pure(epsilon: f64, grid: Grid) -> Result<Pld, Error> {
        Self::randomized_response(epsilon, grid)
    }

    /// The worst case of any (ε, δ)-DP mechanism: infinite loss with probability δ,
    /// otherwise randomized response with ε (Kairouz, Oh & Viswanath 2015).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDelta`] if `delta` is not in [0, 1);
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700.
    pub fn approximate(epsilon: f64, delta: f64, grid: Grid) -> Result<Pld, Error> {
        if delta == 0.0 {
            return Self::pure(epsilon, grid);
        }
        let (atoms, delta) = approximate_atoms(epsilon, delta)?;
        let closed = ClosedForms::approximate(epsilon, delta);
        Ok(Self::atoms(&atoms, delta, grid)?.with_closed(certify(closed)))
    }

    /// The worst-case PLD of a stated guarantee: [`pure`](Self::pure) for ε-DP,
    /// [`approximate`](Self::approximate) for (ε, δ)-DP. ρ-zCDP, approximate zCDP and random DP do not
    /// determine a PLD (build the mechanism's own, e.g. [`gaussian`](Self::gaussian)):
    /// a typed error. This is how any mechanism of this crate enters a PLD plan, via
    /// its `privacy_loss()`.
    ///
    /// # Errors
    ///
    /// * the variant of an invalid field of `loss` ([`Error::InvalidEpsilon`],
    ///   [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`] for γ);
    /// * [`Error::IncompatibleLoss`] for a zCDP, approximate-zCDP or random-DP `loss`;
    /// * [`Error::InvalidParameter`] (`epsilon`) if its ε is above 700.
    pub fn from_loss(loss: PrivacyLoss, grid: Grid) -> Result<Pld, Error> {
        match crate::composition::validate_loss(loss)? {
            PrivacyLoss::Pure { epsilon } => Self::pure(epsilon, grid),
            PrivacyLoss::Approximate { epsilon, delta } => Self::approximate(epsilon, delta, grid),
            PrivacyLoss::Zcdp { .. } | PrivacyLoss::ApproximateZcdp { .. } | PrivacyLoss::RandomDp { .. } => {
                Err(Error::IncompatibleLoss {
                    reason: "a zCDP, approximate-zCDP or random-DP statement does not determine a privacy loss \
                         distribution; build the mechanism's own PLD (e.g. Pld::gaussian)",
                })
            }
        }
    }

    /// A PLD from point masses and the mass at `+∞` (the same in both directions).
    fn atoms(atoms: &[Atom], infinity: f64, grid: Grid) -> Result<Pld, Error> {
        let points: Vec<(f64, f64)> = atoms.iter().map(|a| (a.loss_up, a.mass)).collect();
        let h = atom_step(&[&points], None, grid)?;
        Ok(Pld::symmetric(atom_dist(&points, infinity, h), grid))
    }

    /// **Poisson subsampling** with rate `q ∈ (0, 1]` (each record enters the
    /// mechanism's input independently with probability `q`; add/remove neighbours) of
    /// the worst case of a stated guarantee: `ε`-DP ([`pure`](Self::pure)) or
    /// `(ε, δ)`-DP ([`approximate`](Self::approximate)). Valid for **every** mechanism
    /// with that guarantee, e.g. any mechanism of this crate through its
    /// `privacy_loss()`; the Gaussian and the Laplace have tighter builders of their own
    /// ([`poisson_subsampled_gaussian`](Self::poisson_subsampled_gaussian),
    /// [`poisson_subsampled_laplace`](Self::poisson_subsampled_laplace)).
    ///
    /// A worst-case pair `(P, Q)` dominates the mechanism, and then `(qP + (1 − q)Q, Q)`
    /// (remove) and `(Q, qP + (1 − q)Q)` (add) dominate the subsampled mechanism (Zhu,
    /// Dong & Wang 2022, Theorem 11): an outcome of loss `l` gets loss
    /// `ln(1 + q(eˡ − 1))`, resp. `−ln(1 + q(eˡ − 1))` under `Q`. Both directions are
    /// kept and every answer takes the worse.
    ///
    /// ```
    /// use dpmech::PrivacyLoss;
    /// use dpmech::composition::pld::{Grid, Pld};
    /// // A 1-DP release on a 1 % Poisson sample, 1000 times:
    /// let step = Pld::poisson_subsampled(PrivacyLoss::pure(1.0)?, 0.01, Grid::default())?;
    /// let eps = step.self_compose(1000)?.epsilon_for_delta(1e-6)?;
    /// assert!(eps < 4.0); // sequential composition of the subsampled ε' = ln(1 + q(e − 1)): 17.0
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// * the variant of an invalid field of `loss` ([`Error::InvalidEpsilon`],
    ///   [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`] for γ);
    /// * [`Error::IncompatibleLoss`] for a zCDP, approximate-zCDP or random-DP `loss`;
    /// * [`Error::InvalidParameter`] (`epsilon`) if its ε is above 700;
    /// * [`Error::InvalidParameter`] (`q`) if `q` is not in (0, 1].
    pub fn poisson_subsampled(loss: PrivacyLoss, q: f64, grid: Grid) -> Result<Pld, Error> {
        match crate::composition::validate_loss(loss)? {
            PrivacyLoss::Pure { epsilon } => {
                let pld = Self::subsampled_atoms(&randomized_response_atoms(2, epsilon)?, 0.0, q, grid)?;
                Ok(pld.with_closed(certify(ClosedForms::pure(amplified_up(epsilon, q)))))
            }
            PrivacyLoss::Approximate { epsilon, delta } => {
                let (atoms, delta_atoms) = approximate_atoms(epsilon, delta)?;
                let pld = Self::subsampled_atoms(&atoms, delta_atoms, q, grid)?;
                let closed = ClosedForms::approximate(amplified_up(epsilon, q), round::mul_up(q, delta));
                Ok(pld.with_closed(certify(closed)))
            }
            PrivacyLoss::Zcdp { .. } | PrivacyLoss::ApproximateZcdp { .. } | PrivacyLoss::RandomDp { .. } => {
                Err(Error::IncompatibleLoss {
                    reason: "a zCDP, approximate-zCDP or random-DP statement does not determine a privacy loss \
                         distribution; use Pld::poisson_subsampled_gaussian for the Gaussian",
                })
            }
        }
    }

    /// Sampling **without replacement** (a uniformly random subset of fixed size `m` of
    /// the `n` records, `γ = m/n ∈ (0, 1]`) under **substitution** neighbours, of the
    /// worst case of a stated guarantee: `ε`-DP or `(ε, δ)`-DP under substitution. The
    /// subsample's profile is `γ·δ_M(ε)` at `e^ε′ = 1 + γ(e^ε − 1)` (Balle, Barthe &
    /// Gaboardi 2018, tight for these worst cases); the PLD is the symmetric pair with
    /// that curve (see
    /// [`sampled_without_replacement_gaussian`](Self::sampled_without_replacement_gaussian)):
    /// with `g = ln(1 + γ(e^ε − 1))`, P-masses `(1 − δ)(γe^ε + 1 − γ)/(1 + e^ε)` at `+g`,
    /// `(1 − δ)/(1 + e^ε)` at `−g`, `(1 − γ)(e^ε − 1 + 2δ)/(1 + e^ε)` at 0 and `γδ` at
    /// `+∞`.
    ///
    /// ```
    /// use dpmech::PrivacyLoss;
    /// use dpmech::composition::pld::{Grid, Pld};
    /// // A 1-DP release on batches of 1 % of the records, 1000 times:
    /// let step = Pld::sampled_without_replacement(PrivacyLoss::pure(1.0)?, 0.01, Grid::default())?;
    /// let eps = step.self_compose(1000)?.epsilon_for_delta(1e-6)?;
    /// assert!(eps < 4.0);
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// * [`Error::InvalidParameter`] (`q`) if `gamma` is not in (0, 1];
    /// * the variant of an invalid field of `loss` ([`Error::InvalidEpsilon`],
    ///   [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`]
    ///   for γ); here an `Approximate` δ must lie in (0, 1);
    /// * [`Error::IncompatibleLoss`] for a zCDP, approximate-zCDP or random-DP `loss`;
    /// * [`Error::InvalidParameter`] (`epsilon`) if its ε is above 700.
    pub fn sampled_without_replacement(loss: PrivacyLoss, gamma: f64, grid: Grid) -> Result<Pld, Error> {
        check_sampling_rate(gamma)?;
        let (epsilon, delta) = match crate::composition::validate_loss(loss)? {
            PrivacyLoss::Pure { epsilon } => (check_large_epsilon(epsilon)?, 0.0),
            PrivacyLoss::Approximate { epsilon, delta } => {
                (check_large_epsilon(epsilon)?, check_delta(delta)?)
            }
            PrivacyLoss::Zcdp { .. } | PrivacyLoss::ApproximateZcdp { .. } | PrivacyLoss::RandomDp { .. } => {
                return Err(Error::IncompatibleLoss {
                    reason: "a zCDP, approximate-zCDP or random-DP statement does not determine a privacy loss \
                             distribution; use Pld::sampled_without_replacement_gaussian",
                });
            }
        };
        if gamma == 1.0 {
            return Self::from_loss(loss, grid);
        }
        let e_up = round::exp_up(epsilon);
        let denominator = round::add_down(1.0, round::exp_down(epsilon));
        let (keep, drop) = (round::sub_up(1.0, delta), round::sub_up(1.0, gamma));
        let (g_down, g_up) = subsampled_loss(epsilon, gamma);
        let up = round::add_up(round::mul_up(gamma, e_up), drop);
        let atoms = [
            Atom {
                loss_down: g_down,
                loss_up: g_up,
                mass: round::div_up(round::mul_up(keep, up), denominator),
            },
            Atom {
                loss_down: -g_up,
                loss_up: -g_down,
                mass: round::div_up(keep, denominator),
            },
            Atom::exact(
                0.0,
                round::div_up(
                    round::mul_up(drop, round::add_up(round::exp_m1_up(epsilon), 2.0 * delta)),
                    denominator,
                ),
            ),
        ];
        Self::atoms(&atoms, round::mul_up(gamma, delta), grid)
    }

    /// Poisson subsampling with rate `q` (add/remove, as in
    /// [`poisson_subsampled`](Self::poisson_subsampled)) of k-ary randomized response
    /// with `ε` — e.g. a local-DP survey of a random subset.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`k`) if `k < 2`;
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700;
    /// [`Error::InvalidParameter`] (`q`) if `q` is not in (0, 1].
    pub fn poisson_subsampled_randomized_response(
        k: u64,
        epsilon: f64,
        q: f64,
        grid: Grid,
    ) -> Result<Pld, Error> {
        let pld = Self::subsampled_atoms(&randomized_response_atoms(k, epsilon)?, 0.0, q, grid)?;
        Ok(pld.with_closed(certify(ClosedForms::pure(amplified_up(epsilon, q)))))
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

    /// The subsampled pair of a mechanism given by its loss atoms, with `delta` of mass
    /// where only `P` (and, for the symmetric worst case, only `Q`) puts mass.
    fn subsampled_atoms(atoms: &[Atom], delta: f64, q: f64, grid: Grid) -> Result<Pld, Error> {
        check_sampling_rate(q)?;
        if q == 1.0 {
            return Self::atoms(atoms, delta, grid);
        }
        let stay = round::sub_up(1.0, q);
        // Remove: P' = qP + (1 − q)Q against Q. An atom of P-mass p and loss l has Q-mass
        // p·e^(−l) (upper bound from the lower end of l); its new loss is g(l).
        let mut forward: Vec<(f64, f64)> = atoms
            .iter()
            .map(|a| {
                let q_mass = round::mul_up(a.mass, round::exp_up(-a.loss_down));
                let mass = round::add_up(round::mul_up(q, a.mass), round::mul_up(stay, q_mass));
                (subsampled_loss(a.loss_up, q).1, mass)
            })
            .collect();
        // Add: Q against P' — mass p·e^(−l), loss −g(l).
        let mut backward: Vec<(f64, f64)> = atoms
            .iter()
            .map(|a| {
                let q_mass = round::mul_up(a.mass, round::exp_up(-a.loss_down));
                (-subsampled_loss(a.loss_down, q).0, q_mass)
            })
            .collect();
        if delta > 0.0 {
            // The worst case's Q-only mass δ: loss ln(1 − q) forward (P'-mass (1 − q)δ),
            // −ln(1 − q) backward; its P-only mass δ: +∞ forward with P'-mass qδ.
            let ln_stay = (-q).ln_1p();
            let slack = 4.0 * U * (1.0 + ln_stay.abs());
            forward.push((ln_stay + slack, round::mul_up(stay, delta)));
            backward.push((-ln_stay + slack, delta));
        }
        let h = atom_step(&[&forward, &backward], None, grid)?;
        Ok(Pld {
            tail: grid.tail,
            forward: atom_dist(&forward, round::mul_up(q, delta), h),
            backward: Some(atom_dist(&backward, 0.0, h)),
            closed: ClosedForms::default(),
        })
    }
}

/// A point mass of a worst-case pair: the true loss lies in `[loss_down, loss_up]` and
/// its P-mass is at most `mass`.
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

#[derive(Debug, Clone, Copy)]
struct Atom {
    loss_down: f64,
    loss_up: f64,
    mass: f64,
}

impl Atom {
    fn exact(loss: f64, mass: f64) -> Self {
        Atom {
            loss_down: loss,
            loss_up: loss,
            mass,
        }
    }
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

/// One step for several atom lists, relative to `scale` (default: their largest loss).
fn atom_step(lists: &[&[(f64, f64)]], scale: Option<f64>, grid: Grid) -> Result<f64, Error> {
    let (min, max) = lists
        .iter()
        .flat_map(|l| l.iter())
        .fold((0.0f64, 0.0f64), |(a, b), &(l, _)| (a.min(l), b.max(l)));
    step_for(max - min, scale.unwrap_or(max.max(-min)), grid)
}

/// One direction from point masses `(loss, mass upper bound)` on step `h`.
fn atom_dist(points: &[(f64, f64)], infinity: f64, h: f64) -> Dist {
    let (min, max) = points
        .iter()
        .fold((0.0f64, 0.0f64), |(a, b), &(l, _)| (a.min(l), b.max(l)));
    let mut b = Buckets::new(h, index_up(min, h), index_up(max, h));
    for &(loss, mass) in points {
        b.add(loss, mass);
    }
    b.infinity = infinity;
    b.into_dist()
}

/// An enclosure `(down, up)` of `g(l) = ln(1 + q(eˡ − 1))`, the loss of an outcome of
/// loss `l` after Poisson subsampling with rate `q < 1` (expm1, the product and ln_1p
/// are each faithful, and `|d ln(1 + x)/dx · x| ≤ q/(1 − q)` bounds the propagation).
fn subsampled_loss(l: f64, q: f64) -> (f64, f64) {
    let x = q * l.exp_m1();
    let g = x.ln_1p();
    let slack = 8.0 * U * (g.abs() + x.abs() / (1.0 + x)) + f64::MIN_POSITIVE;
    (g - slack, g + slack)
}

/// k-ary randomized response with ε: with `w = e^(−ε)`, P-masses `1/(1 + (k−1)w)` at
/// `+ε`, `w/(1 + (k−1)w)` at `−ε` and `(k−2)w/(1 + (k−1)w)` at 0.
fn randomized_response_atoms(k: u64, epsilon: f64) -> Result<Vec<Atom>, Error> {
    let k = check_categories(k)?;
    let eps = check_large_epsilon(epsilon)?;
    let kf = round::u64_up(k);
    let w_down = round::exp_down(-eps);
    let w_up = round::exp_up(-eps);
    let denominator = round::add_down(1.0, round::mul_down(kf - 1.0, w_down));
    Ok(vec![
        Atom::exact(eps, round::div_up(1.0, denominator)),
        Atom::exact(-eps, round::div_up(w_up, denominator)),
        Atom::exact(0.0, round::div_up(round::mul_up(kf - 2.0, w_up), denominator)),
    ])
}

/// The (ε, δ) worst case (Kairouz, Oh & Viswanath 2015): P-masses `(1 − δ)/(1 + e^(−ε))`
/// at `+ε`, `(1 − δ)e^(−ε)/(1 + e^(−ε))` at `−ε`, δ where only P (and δ where only Q)
/// puts mass. Returns the atoms and δ (δ = 0 gives the pure case).
fn approximate_atoms(epsilon: f64, delta: f64) -> Result<(Vec<Atom>, f64), Error> {
    if delta == 0.0 {
        return Ok((randomized_response_atoms(2, epsilon)?, 0.0));
    }
    let delta = check_delta(delta)?;
    let eps = check_large_epsilon(epsilon)?;
    let keep = round::sub_up(1.0, delta);
    let w_down = round::exp_down(-eps);
    let denominator = round::add_down(1.0, w_down);
    let atoms = vec![
        Atom::exact(eps, round::mul_up(keep, round::div_up(1.0, denominator))),
        Atom::exact(
            -eps,
            round::mul_up(keep, round::div_up(round::exp_up(-eps), denominator)),
        ),
    ];
    Ok((atoms, delta))
}

/// Largest integer sensitivity of the discrete Laplace builders: they enumerate one
/// atom per unit of sensitivity, so this bounds their cost (about 0.2 s at the maximum).
const MAX_DISCRETE_LAPLACE_SENSITIVITY: u64 = 1 << 20;

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

/// The discrete Laplace mechanism's loss atoms: with `r = e^(−1/t)`, P-masses
/// `1/(1+r)` at `+Δ/t`, `r^Δ/(1+r)` at `−Δ/t`, `(1−r)/(1+r)·r^x` at `(Δ − 2x)/t` for
/// `0 < x < Δ`.
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
    for x in 1..sensitivity {
        let mass = round::mul_up(inner, round::exp_up(-round::div_down(x as f64, scale)));
        atoms.push(Atom {
            mass,
            ..loss(d - 2.0 * x as f64)
        });
    }
    Ok(atoms)
}

/// The pair `((1 − q)N(0, 1) + qN(s, 1), N(0, 1))` of outputs `o` (units of σ), with
/// loss `L(o) = ln(1 − q + q e^(so − s²/2))`, increasing in `o`, and the grid it is
/// discretised on. Outputs and `s` are multiples of a power of two `g`, small against
/// every bucket and large enough that `o − s` is exact for `|o| ≤ s + z_t + 1`: both
/// laws' tails are evaluated at exact points, so one evaluation bounds a mass both ways.
struct MixturePair {
    q: f64,
    s: f64,
    g: f64,
    z_t: f64,
    h: f64,
}

impl MixturePair {
    fn new(sigma: f64, sensitivity: f64, q: f64, grid: Grid) -> Result<Self, Error> {
        let (sigma, d) = check_scale_and_sensitivity(sigma, sensitivity)?;
        // In units of σ: P1 = N(s, 1), P0 = N(0, 1); a larger s dominates (rounded up).
        let s = round::div_up(d, sigma);
        if !(s.is_finite() && s <= 1e3) {
            return Err(Error::InvalidParameter {
                name: "sigma",
                value: sigma,
                reason: "sensitivity/sigma must be at most 1e3 for a subsampled Gaussian PLD",
            });
        }
        let z_t = (2.0 * (1.0 / grid.tail).ln()).sqrt() + 1.0;
        let g = (s + z_t + 2.0).log2().ceil().exp2() * 2f64.powi(-50);
        let s = (s / g).ceil() * g;
        let mut pair = MixturePair { q, s, g, z_t, h: 0.0 };
        let (fwd_lo, fwd_hi) = (pair.loss(-z_t), pair.loss(s + z_t));
        let (bwd_lo, bwd_hi) = (-pair.loss(z_t), -(-q).ln_1p());
        let width = (fwd_hi - fwd_lo).max(bwd_hi - bwd_lo);
        // Buckets are split between their two grid points (`Buckets::add_split`), which
        // costs tightness only at second order in h over the loss's spread: the
        // relative default grid takes 1/16 of (an estimate of) its standard deviation,
        // q·√(e^(s²) − 1), instead of 2⁻¹⁰ of the far wider support.
        let spread = q * (s * s).exp_m1().sqrt();
        // Every loss must stay within `MAX_EPSILON`: beyond, `e^l` in the inverse of the
        // loss (`subsampled_inverse`) overflows and no grid point could bound the top
        // bucket (at the default tail this allows Δ/σ up to about 27).
        if !(width.is_finite() && fwd_hi <= MAX_EPSILON) {
            return Err(Error::InvalidParameter {
                name: "sigma",
                value: sigma,
                reason: "a subsampled Gaussian PLD needs every privacy loss below 700 (about \
                         sensitivity/sigma <= 27 at the default tail): use more noise",
            });
        }
        // The span covers the symmetric layout of the sampling-without-replacement
        // builder (losses in ±fwd_hi) too.
        let span = width.max(2.0 * fwd_hi) + 4.0;
        pair.h = step_for(span, (64.0 * spread).min(width), grid)?;
        Ok(pair)
    }

    fn on_grid(&self, o: f64, up: bool) -> f64 {
        if up {
            (o / self.g).ceil() * self.g
        } else {
            (o / self.g).floor() * self.g
        }
    }

    fn loss(&self, o: f64) -> f64 {
        let s = self.s;
        (self.q * (s * o - s * s / 2.0).exp_m1()).ln_1p()
    }

    /// An enclosure of `L(o)` (its derivative in `so − s²/2` is at most 1).
    fn loss_bounds(&self, o: f64) -> (f64, f64) {
        let l = self.loss(o);
        let x = if o == f64::NEG_INFINITY {
            0.0
        } else {
            (self.s * o).abs()
        };
        let slack = 1e-15 * (x + self.s * self.s + l.abs() + 1.0);
        (l - slack, l + slack)
    }

    /// The grid point of index j: `o_j ≤ o_at(jh)`, so `L(o_j) ≤ jh`.
    fn point(&self, j: i64) -> f64 {
        self.on_grid(
            subsampled_inverse(round::mul_down(j as f64, self.h), self.q, self.s).0,
            false,
        )
    }

    /// Enclosures of the Q-mass (`N(0, 1)`) and the P-mass (the mixture) of `o ∈ (a, b]`.
    fn masses(&self, a: f64, b: f64) -> ((f64, f64), (f64, f64)) {
        self.masses_between(self.ends(a), self.ends(b))
    }

    /// The ends of a bucket at `o` for both laws: `o` (for `N(0, 1)`) and `o − s` (for
    /// `N(s, 1)`), each with its one tail evaluation.
    fn ends(&self, o: f64) -> (End, End) {
        (End::at(o), End::at(o - self.s))
    }

    /// [`masses`](Self::masses) from the ends' tails, evaluated once per end.
    fn masses_between(&self, a: (End, End), b: (End, End)) -> ((f64, f64), (f64, f64)) {
        let q = self.q;
        let null = normal_mass_between(a.0, b.0);
        let shifted = normal_mass_between(a.1, b.1);
        let (keep_down, keep_up) = (round::sub_down(1.0, q), round::sub_up(1.0, q));
        let mixture = (
            round::add_down(round::mul_down(keep_down, null.0), round::mul_down(q, shifted.0)),
            round::add_up(round::mul_up(keep_up, null.1), round::mul_up(q, shifted.1)),
        );
        (null, mixture)
    }
}

/// `Q(z) = P(Z > z)` for a standard normal `Z`.
fn normal_tail(z: f64) -> f64 {
    0.5 * erfc(z * core::f64::consts::FRAC_1_SQRT_2)
}

/// An upper bound on the standard normal tail `Q(z)`.
fn normal_tail_up(z: f64) -> f64 {
    normal_tail(z) * (1.0 + ERFC_ERROR) + f64::MIN_POSITIVE
}

/// An exact bucket end `z` (possibly infinite) with `Q(|z|)`: the one tail evaluation
/// [`normal_mass_between`] needs per end, shared by the two buckets an end bounds.
#[derive(Debug, Clone, Copy)]
struct End {
    z: f64,
    tail: f64,
}

impl End {
    fn at(z: f64) -> End {
        End {
            z,
            tail: normal_tail(z.abs()),
        }
    }
}

/// Lower and upper bounds on `P(za < Z ≤ zb)` for a standard normal `Z` (`za`, `zb`
/// exact; either may be infinite), from the ends' tails: with `Q(|z|)` at both ends, the mass
/// is `Q(za) − Q(zb)` on the positive side, `Q(−zb) − Q(−za)` on the negative side and
/// `1 − Q(−za) − Q(zb)` across 0 (the tail on the far side of 0 from each end, so no
/// tail near 1 is subtracted).
fn normal_mass_between(a: End, b: End) -> (f64, f64) {
    let (za, zb) = (a.z, b.z);
    if za.partial_cmp(&zb) != Some(core::cmp::Ordering::Less) {
        return (0.0, 0.0);
    }
    let slack = ERFC_ERROR + 4.0 * U;
    let (qa, qb) = (a.tail, b.tail);
    let (mass, err) = if za >= 0.0 {
        (qa - qb, slack * (qa + qb))
    } else if zb <= 0.0 {
        (qb - qa, slack * (qa + qb))
    } else {
        (1.0 - qa - qb, slack * (qa + qb + 1.0))
    };
    let tiny = f64::MIN_POSITIVE;
    ((mass - err - tiny).max(0.0), (mass + err + tiny).min(1.0 + slack))
}

/// The output `o` at which the subsampled Gaussian's forward loss
/// `ln(1 − q + q e^(so − s²/2))` equals `l`, as a bracket `(below, above)` that
/// contains the exact value: `o = s/2 + ln((e^l − 1 + q)/q)/s`, or `−∞` where
/// `l ≤ ln(1 − q)`. The bracket's width bounds every rounding of the evaluation
/// (twice over).
fn subsampled_inverse(l: f64, q: f64, s: f64) -> (f64, f64) {
    let em1 = l.exp_m1();
    let arg = em1 + q;
    // |error of arg| ≤ 4u(|e^l − 1| + q): the sum and expm1's faithful rounding.
    let arg_error = 4.0 * U * (em1.abs() + q);
    if arg - arg_error <= 0.0 {
        let above = if arg + arg_error <= 0.0 {
            f64::NEG_INFINITY
        } else {
            let t = ((arg + arg_error) / q).ln();
            (s * s / 2.0 + t) / s + 1e-9 * (1.0 + t.abs() / s)
        };
        return (f64::NEG_INFINITY, above);
    }
    let t = (arg / q).ln();
    // ln's argument carries relative error ≤ arg_error/arg + 2u; ln adds 2u|t| + u.
    let t_error = arg_error / (arg - arg_error) + 4.0 * U * (1.0 + t.abs());
    let o = (s * s / 2.0 + t) / s;
    let o_error = (t_error + 4.0 * U * (s * s / 2.0 + t.abs())) / s + 4.0 * U * o.abs();
    let widen = 2.0 * o_error + f64::MIN_POSITIVE;
    (o - widen, o + widen)
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
