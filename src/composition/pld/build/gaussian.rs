//! The Gaussian and discrete Gaussian builders, plain, Poisson subsampled and sampled
//! without replacement.

use super::{Buckets, MAX_EPSILON, U, certify, check_integer_sensitivity, check_sampling_rate};
use super::{MAX_DISCRETE_ATOMS, check_scale_and_sensitivity, index_up, step_for};
use crate::Error;
use crate::composition::closed::ClosedForms;
use crate::composition::pld::{Grid, Pld};
use crate::composition::rdp::RdpCurve;
use crate::privacy::erfc::erfc;
use crate::privacy::round;

/// Relative error charged to each `erfc` evaluation: twice the crate-wide assumption
/// for its `erfc` (tested against 40-digit references to 10⁻¹⁴), covering also the
/// rounding of its argument.
const ERFC_ERROR: f64 = 2e-13;

/// The subsampled Gaussian builder's far tails: where all the mass beyond a bucket is at
/// most `FAR_TAIL_SHARE` times the grid's tail (10⁻²⁰ by default), `FAR_GROUP` buckets
/// are taken as one and its mass rounded **up** to the group's top point (valid, and
/// first-order only in a mass that small), saving most tail evaluations there: with
/// q = 0.01, σ = 1 about 40 % of the grid points lie in that far tail.
const FAR_TAIL_SHARE: f64 = 1e4;

/// Buckets per group in the far tail (see [`FAR_TAIL_SHARE`]).
const FAR_GROUP: i64 = 16;

impl Pld {
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
        // Z ≥ the truncated sum of lower bounds (non-negative terms, rounded down); the
        // weights are even in x, so the sum is w(0) + 2·Σ_(0 < x ≤ X) w(x).
        let last = reach as usize;
        let one_side = gaussian_weights(last, two_var_down, Side::Down)
            .skip(1)
            .fold(0.0, round::add_down);
        let z_down = round::add_down(1.0, 2.0 * one_side);
        let weight_up: Vec<f64> = gaussian_weights(last, two_var_up, Side::Up).collect();
        let outside = round::mul_up(
            sigma * (2.0 * core::f64::consts::PI).sqrt() * (1.0 + 4.0 * U),
            normal_tail_up((reach - 1.0) / sigma),
        );
        // Loss (Δ² − 2xΔ)/(2σ²), rounded up; scale Δ/σ as for the Gaussian.
        let loss_up = |x: f64| round::div_up(round::sub_up(d * d, round::mul_down(2.0 * x, d)), two_var_down);
        let (lowest, highest) = (loss_up(reach), loss_up(-reach));
        let h = step_for(highest - lowest + 2.0, round::div_up(d, sigma), grid)?;
        let mut b = Buckets::new(h, index_up(lowest, h), index_up(highest, h));
        // Beyond MAX_DISCRETE_ATOMS outputs, runs of consecutive x go to the bucket of
        // the run's highest loss (its first x: the loss falls with x), each with its own
        // mass — rounding losses up, as for the discrete Laplace's runs
        // (`discrete_laplace_atoms`); the run spans less than one grid step.
        let outputs = 2 * reach as u64 + 1;
        let run = outputs.div_ceil(MAX_DISCRETE_ATOMS).max(1) as usize;
        let mut x = -reach;
        while x <= reach {
            let first = x;
            let mut weights = 0.0f64;
            for _ in 0..run {
                if x > reach {
                    break;
                }
                weights = round::add_up(weights, weight_up[x.abs() as usize]);
                x += 1.0;
            }
            b.add(loss_up(first), round::div_up(weights, z_down));
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

/// Which side of a value a bound is on.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Up,
    Down,
}

/// Bounds of `e^(−x²/v)` for `x = 0 ..= last`, `v` a bound of `2σ²` (the upper for
/// [`Side::Up`], the lower for [`Side::Down`], so that the exponent is bounded on the
/// matching side): by the recurrence `w(x + 1) = w(x)·ρ(x)`, `ρ(x) = e^(−(2x + 1)/v)`,
/// `ρ(x + 1) = ρ(x)·e^(−2/v)` — two products per point instead of an `exp` — each
/// product moved one ulp outward (a rounded-to-nearest product is within half an ulp of
/// the exact one, also below the normal range), restarted from direct evaluations every
/// 64 points (so the bounds stay within about 10⁻¹⁴ relative of the exact weights).
fn gaussian_weights(last: usize, v: f64, side: Side) -> impl Iterator<Item = f64> {
    let bound = move |exponent: f64| match side {
        Side::Up => round::exp_up(-round::div_down(exponent, v)),
        Side::Down => round::exp_down(-round::div_up(exponent, v)),
    };
    let outward = move |p: f64| match side {
        Side::Up => p.next_up(),
        Side::Down => p.next_down().max(0.0),
    };
    let factor = bound(2.0);
    let (mut w, mut rho) = (1.0, 1.0);
    (0..=last).map(move |x| {
        if x % 64 == 0 {
            // x ≤ 2²⁶ (σ ≤ 10⁵), so x² and 2x + 1 are exact.
            let x = x as f64;
            w = bound(x * x);
            rho = bound(2.0 * x + 1.0);
        }
        let current = w;
        w = outward(w * rho);
        rho = outward(rho * factor);
        current
    })
}
