//! One direction of a discretised privacy loss distribution, and the certified
//! operations on it.

use super::fft::{convolve, norms};
use crate::privacy::round;

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

/// Most finite grid points one direction may hold; beyond it the step doubles (by
/// splitting, see [`Dist::coarsen`]). This bounds the cost of every convolution: one
/// FFT of at most 2²⁰ complex points (about 0.3 s on the reference machine, 32 MiB).
pub(super) const MAX_POINTS: usize = 1 << 19;

/// The losses `L = ln(P(o)/Q(o))`, `o ~ P`, rounded **up** to the grid `h·ℤ`, as
/// masses on `(offset + i)·h`, plus the mass at `+∞`.
///
/// Invariant (what makes every answer certified): the true mass of every grid point is
/// at most `(1 + relative)·mass_i + e_i` for some vector `e` with `‖e‖₂ ≤ error`, and
/// the true mass at `+∞` is at most `infinity`. Entries of `mass` are never negative.
/// Relative error (from builders and direct convolutions) scales with δ itself;
/// absolute error (from FFTs) costs `error·√(points above ε)` in δ.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Dist {
    pub step: f64,
    pub offset: i64,
    pub mass: Vec<f64>,
    pub infinity: f64,
    pub relative: f64,
    pub error: f64,
    /// Upper bounds on the cumulant `ln E[e^(λL); L finite]` of the represented
    /// (rounded-up) distribution at each `λ` of [`LAMBDAS`]: Chernoff bounds on its
    /// tails, independent of the floating-point error of the masses.
    pub cumulants: Vec<f64>,
}

/// The exponents `λ = ±2^i`, `i = −6..=8`, at which cumulants are tracked.
pub(super) fn lambdas() -> impl Iterator<Item = f64> {
    (-6..=8).flat_map(|i| {
        let l = f64::from(i).exp2();
        [l, -l]
    })
}

impl Dist {
    pub fn step(&self) -> f64 {
        self.step
    }

    /// `(1 + relative)` inflated for the summation of `len` masses.
    fn scale(&self) -> f64 {
        (1.0 + self.relative) * (1.0 + gamma(self.mass.len() + 4))
    }

    /// Loss at index `i`: `(offset + i)·h`, rounded up (exact when `h` is a power of
    /// two).
    fn loss(&self, i: usize) -> f64 {
        round::mul_up((self.offset + i as i64) as f64, self.step)
    }

    /// The standard deviation of the finite losses (an estimate, for choosing steps).
    pub fn spread(&self) -> f64 {
        let (mut m0, mut m1, mut m2) = (0.0f64, 0.0f64, 0.0f64);
        for (i, &m) in self.mass.iter().enumerate() {
            let x = i as f64;
            m0 += m;
            m1 += m * x;
            m2 += m * x * x;
        }
        if m0 <= 0.0 {
            return 0.0;
        }
        let mean = m1 / m0;
        (m2 / m0 - mean * mean).max(0.0).sqrt() * self.step
    }

    /// Upper bounds on the cumulants of `mass` itself (for builders: exact masses as
    /// upper bounds, losses on the grid).
    pub fn compute_cumulants(&mut self) {
        let scale = (1.0 + self.relative) * (1.0 + 1e-9);
        let terms: Vec<(f64, f64)> = (0..self.mass.len())
            .filter(|&i| self.mass[i] > 0.0)
            .map(|i| (self.mass[i].ln(), self.loss(i)))
            .collect();
        self.cumulants = lambdas()
            .map(|lambda| {
                // ln Σ m_i e^(λ l_i) by a shifted sum (log-sum-exp), rounded up.
                let shift = terms
                    .iter()
                    .map(|&(ln_m, l)| ln_m + lambda * l)
                    .fold(f64::NEG_INFINITY, f64::max);
                if shift == f64::NEG_INFINITY {
                    return f64::NEG_INFINITY;
                }
                let sum: f64 = terms
                    .iter()
                    .map(|&(ln_m, l)| (ln_m + lambda * l - shift).exp())
                    .sum();
                let slack = 1e-12 * (1.0 + shift.abs());
                shift + (sum * scale).ln() + slack
            })
            .collect();
    }

    /// Chernoff bound on the represented mass with loss `≥ l` (`upper`) or `≤ l`.
    fn tail_bound(&self, l: f64, upper: bool) -> f64 {
        lambdas()
            .zip(&self.cumulants)
            .filter(|&(lambda, _)| (lambda > 0.0) == upper)
            .map(|(lambda, &k)| {
                let exponent = k - lambda * l;
                (exponent + 1e-12 * (1.0 + k.abs() + (lambda * l).abs())).exp()
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// Moves the tails beyond the Chernoff bounds (at most `tail` each) to `+∞`.
    fn trim_by_cumulants(&mut self, tail: f64) {
        if self.cumulants.is_empty() || self.mass.is_empty() {
            return;
        }
        let n = self.mass.len();
        // Largest cut from the top: indices ≥ hi removed, bound on their mass ≤ tail.
        let (mut lo_i, mut hi_i) = (0usize, n);
        let (mut cut_hi, mut cut_lo) = (0.0, 0.0);
        let (mut a, mut b) = (0usize, n); // search hi in [a, b]
        while a < b {
            let mid = (a + b) / 2;
            if self.tail_bound(self.loss(mid), true) <= tail {
                b = mid;
            } else {
                a = mid + 1;
            }
        }
        if a < n {
            hi_i = a;
            cut_hi = self.tail_bound(self.loss(a), true);
        }
        let (mut a, mut b) = (0usize, hi_i); // lowest index kept: indices < lo removed
        while a < b {
            let mid = (a + b).div_ceil(2);
            if self.tail_bound(self.loss(mid - 1), false) <= tail {
                a = mid;
            } else {
                b = mid - 1;
            }
        }
        if a > 0 {
            lo_i = a;
            cut_lo = self.tail_bound(self.loss(a - 1), false);
        }
        if lo_i == 0 && hi_i == n {
            return;
        }
        self.infinity = ((self.infinity + cut_hi + cut_lo) * (1.0 + 4.0 * U)).min(1.0);
        self.mass.truncate(hi_i);
        self.mass.drain(..lo_i);
        self.offset += lo_i as i64;
    }

    /// Drops zero ends and moves the outer tails (at most `tail` each, counting the
    /// error bound) to `+∞`: the true mass there is counted as the worst loss.
    pub fn trim(&mut self, tail: f64) {
        let n = self.mass.len();
        // Upper tail: the largest suffix whose mass bound stays within `tail`.
        let (mut hi, mut moved_hi) = (n, 0.0f64);
        while hi > 0 {
            let next = moved_hi + self.mass[hi - 1];
            let bound = next * self.scale() + ((n - hi + 1) as f64).sqrt() * self.error;
            if bound > tail {
                break;
            }
            moved_hi = next;
            hi -= 1;
        }
        let (mut lo, mut moved_lo) = (0usize, 0.0f64);
        while lo < hi {
            let next = moved_lo + self.mass[lo];
            let bound = next * self.scale() + ((lo + 1) as f64).sqrt() * self.error;
            if bound > tail {
                break;
            }
            moved_lo = next;
            lo += 1;
        }
        if lo == 0 && hi == n {
            return;
        }
        let sqrt_up = |k: usize| (k as f64).sqrt() * (1.0 + 4.0 * U);
        let charge = (moved_hi + moved_lo) * self.scale() + (sqrt_up(n - hi) + sqrt_up(lo)) * self.error;
        self.infinity = (self.infinity + charge) * (1.0 + 2.0 * U);
        self.mass.truncate(hi);
        self.mass.drain(..lo);
        self.offset += lo as i64;
    }

    /// Doubles the step by **splitting** ("connect the dots", Doroshenko et al. 2022):
    /// an even index `2j` moves to `j` unchanged; the mass `p` of an odd index `2j + 1`
    /// (loss `l`) goes to its two neighbours `l ∓ h`, `p·e^(−h)/(1 + e^(−h))` below and
    /// `p/(1 + e^(−h))` above, which keeps both its P-mass `p` and its Q-mass `p·e^(−l)`.
    /// The old pair is a post-processing (a merge) of the new one, so the new one
    /// dominates it for every ε and under any composition; unlike rounding every loss up,
    /// the change of `δ(ε)` is of second order in `h` (it is exactly zero for the terms
    /// with both neighbours above ε, where the weight `1 − e^(ε − l)` is linear in
    /// `e^(−l)`). Coarsening therefore costs almost no tightness.
    pub fn coarsen(&mut self) {
        let h = self.step();
        let first = self.offset.div_euclid(2);
        let last_index = self.offset + self.mass.len() as i64 - 1;
        let last = last_index.div_euclid(2) + i64::from(last_index.rem_euclid(2) != 0);
        let mut merged = vec![0.0; (last - first + 1).max(0) as usize];
        // Shares rounded up (each within one rounding of the exact value).
        let denominator = round::add_down(1.0, round::exp_down(-h));
        let below = round::div_up(round::exp_up(-h), denominator);
        let above = round::div_up(1.0, denominator);
        for (i, &m) in self.mass.iter().enumerate() {
            let index = self.offset + i as i64;
            let slot = (index.div_euclid(2) - first) as usize;
            if index.rem_euclid(2) == 0 {
                merged[slot] += m;
            } else {
                merged[slot] += m * below;
                merged[slot + 1] += m * above;
            }
        }
        // Each new entry: at most three products and two sums. The exact split S maps
        // an error vector with ‖S‖₂ ≤ √(‖S‖₁‖S‖∞) ≤ √(1·2).
        self.relative = (1.0 + self.relative) * (1.0 + gamma(6)) - 1.0;
        self.error = self.error * core::f64::consts::SQRT_2 * (1.0 + 1e-9);
        // Each piece moves by at most h: `e^(λl)` grows by at most `e^(|λ|h)`. (For
        // −1 < λ < 0 it is concave in `e^(−l)`, so a split, a mean-preserving spread
        // of `e^(−L)`, cannot raise its expectation.)
        for (k, lambda) in self.cumulants.iter_mut().zip(lambdas()) {
            if !(-1.0 < lambda && lambda < 0.0) {
                *k += lambda.abs() * h * (1.0 + 4.0 * U) + 1e-12 * (1.0 + k.abs());
            }
        }
        self.mass = merged;
        self.offset = first;
        self.step *= 2.0;
    }

    /// Moves every mass to the grid `step·ℤ` (`step > self.step`): index `m` goes to
    /// `⌈m·h/step⌉`, rounding the loss up again.
    fn regrid(&mut self, step: f64) {
        let target = |m: i64| round::div_up(round::mul_up(m as f64, self.step), step).ceil() as i64;
        let first = target(self.offset);
        let last = target(self.offset + self.mass.len() as i64 - 1);
        let mut merged = vec![0.0; (last - first + 1).max(1) as usize];
        for (i, &m) in self.mass.iter().enumerate() {
            let slot = &mut merged[(target(self.offset + i as i64) - first) as usize];
            *slot += m;
        }
        // At most r = ⌈step/h⌉ + 1 old points merge into one.
        let r = (step / self.step).ceil() + 1.0;
        self.relative = (1.0 + self.relative) * (1.0 + gamma(r as usize + 1)) - 1.0;
        self.error = self.error * r.sqrt() * (1.0 + 1e-9);
        for (k, lambda) in self.cumulants.iter_mut().zip(lambdas()) {
            if lambda > 0.0 {
                *k += lambda * step * (1.0 + 4.0 * U) + 1e-12 * (1.0 + k.abs());
            }
        }
        self.mass = merged;
        self.offset = first;
        self.step = step;
    }

    /// Regrids to `step` (if coarser), then coarsens until at most `MAX_POINTS` remain
    /// and every grid index stays below 2⁵⁰ in magnitude (so sums of two offsets cannot
    /// overflow).
    pub fn fit(&mut self, step: f64) {
        const MAX_INDEX: u64 = 1 << 50;
        if self.step < step {
            let ratio = step / self.step;
            if ratio.fract() == 0.0 && (ratio as u64).is_power_of_two() && ratio < 1e15 {
                while self.step < step {
                    self.coarsen();
                }
            } else {
                self.regrid(step);
            }
        }
        while self.mass.len() > MAX_POINTS || self.offset.unsigned_abs() + self.mass.len() as u64 > MAX_INDEX
        {
            self.coarsen();
        }
    }

    /// The distribution of the sum of the two losses (independent releases).
    pub fn compose(&self, other: &Dist, tail: f64) -> Dist {
        let step = self.step.max(other.step);
        let (mut a, mut b) = (self.clone(), other.clone());
        a.fit(step);
        b.fit(step);
        Self::compose_same_grid(&a, &b, tail)
    }

    /// `self` composed with itself.
    pub fn square(&self, tail: f64) -> Dist {
        Self::compose_same_grid(self, self, tail)
    }

    fn compose_same_grid(a: &Dist, b: &Dist, tail: f64) -> Dist {
        debug_assert_eq!(a.step, b.step);
        let (mass, conv) = convolve(&a.mass, &b.mass);
        let (a1, _) = norms(&a.mass);
        let (b1, _) = norms(&b.mass);
        // With x = (1 + r)m + e bounding each side: x_a ∗ x_b = (1+r_a)(1+r_b) m_a ∗ m_b
        // + (1+r_a) m_a ∗ e_b + e_a ∗ x_b, and m_a ∗ m_b ≤ (1 + r_c)ĉ + e_c. Young:
        // ‖u ∗ v‖₂ ≤ ‖u‖₂‖v‖₁; ‖x_b‖₁ ≤ (1+r_b)‖m_b‖₁ + √n_b·E_b.
        let ra = 1.0 + a.relative;
        let rb = 1.0 + b.relative;
        let product = ra * rb * (1.0 + 4.0 * U);
        let relative = product * (1.0 + conv.relative) * (1.0 + 2.0 * U) - 1.0;
        let xb1 = rb * b1 + (b.mass.len() as f64).sqrt() * b.error;
        let error = (product * conv.absolute + ra * a1 * b.error + a.error * xb1) * (1.0 + 1e-9);
        let mut c = Dist {
            step: a.step,
            offset: a.offset + b.offset,
            mass,
            infinity: ((a.infinity + b.infinity) * (1.0 + 2.0 * U)).min(1.0),
            relative,
            error,
            cumulants: a
                .cumulants
                .iter()
                .zip(&b.cumulants)
                .map(|(x, y)| (x + y) + 1e-12 * (1.0 + x.abs() + y.abs()))
                .collect(),
        };
        c.trim_by_cumulants(tail);
        c.trim(tail);
        c.fit(c.step);
        c
    }

    /// An upper bound on `δ(ε) = x_∞ + Σ_{l_i > ε} x_i (1 − e^(ε − l_i))`, the hockey-stick
    /// divergence of the pair this direction describes.
    ///
    /// The points above ε are summed from ε upwards; the sum may stop at any point, the
    /// rest being bounded by the Chernoff bound of the cumulants (which hold whatever
    /// the floating-point error of the masses). Stopping early charges the absolute
    /// error `error·√count` over fewer points, which matters when δ is small; the
    /// smallest of the candidates (cut after 1, 2, 4, … points, or none) is returned.
    pub fn delta(&self, epsilon: f64) -> f64 {
        let n = self.mass.len();
        // The first point above ε (losses increase with the index).
        let (mut a, mut b) = (0usize, n);
        while a < b {
            let mid = (a + b) / 2;
            if self.loss(mid) > epsilon {
                b = mid;
            } else {
                a = mid + 1;
            }
        }
        let mut best = if a == n { 0.0 } else { f64::INFINITY };
        let (mut sum, mut count, mut check) = (0.0f64, 0usize, 1usize);
        for i in a..n {
            let l = self.loss(i);
            sum += self.mass[i] * -(epsilon - l).exp_m1();
            count += 1;
            if count == check || i + 1 == n {
                check *= 2;
                // Each term: ε − l, expm1 (faithful) and the product each within a few
                // u; the sum of `count` non-negative terms within γ_count.
                let summed = sum * (1.0 + gamma(count + 16) * 1.01) * (1.0 + self.relative);
                let error = (count as f64).sqrt() * (1.0 + 4.0 * U) * self.error;
                let rest = if i + 1 < n {
                    self.tail_bound(self.loss(i + 1), true)
                } else {
                    0.0
                };
                best = best.min(((summed + error) * (1.0 + 2.0 * U) + rest) * (1.0 + 2.0 * U));
            }
        }
        ((best + self.infinity) * (1.0 + 2.0 * U)).min(1.0)
    }

    /// The smallest ε (up to rounding, never smaller than certified) with
    /// `delta(ε) ≤ target`, or `None` if even ε = ∞ leaves more than `target` (the mass at
    /// `+∞` alone exceeds it).
    pub fn epsilon(&self, target: f64) -> Option<f64> {
        if self.delta(f64::INFINITY) > target {
            return None;
        }
        if self.delta(0.0) <= target {
            return Some(0.0);
        }
        // Scan down from the top. For ε in [max(l_j, 0), l_(j+1)): δ(ε) ≈ ∞-mass + S_j −
        // e^(ε − l_j) R_j + error·√count, with S_j = Σ_(i>j) m_i and
        // R_j = Σ_(i>j) m_i e^(l_j − l_i). This locates the crossing; `delta` certifies it.
        let h = self.step();
        let decay = (-h).exp();
        let (mut s, mut r) = (0.0f64, 0.0f64);
        let n = self.mass.len();
        let mut bracket = (0.0, self.loss(0).max(0.0), f64::NAN);
        for j in (0..n).rev() {
            let l = self.loss(j);
            let lower = l.max(0.0);
            let count = n - 1 - j;
            let fixed = self.infinity + s * (1.0 + self.relative) + (count as f64).sqrt() * self.error;
            if fixed - r * (lower - l).exp() > target {
                let upper = if j + 1 < n { self.loss(j + 1) } else { lower };
                bracket = (lower, upper, l + ((fixed - target) / r).ln());
                break;
            }
            if l <= 0.0 {
                break;
            }
            s += self.mass[j];
            r = (r + self.mass[j] * (1.0 + self.relative)) * decay;
        }
        let (mut lo, mut hi, guess) = bracket;
        // `hi` must be certified; the grid point above the crossing normally is. If not,
        // the step doubles (h, 2h, 4h, …): O(log) evaluations of `delta` instead of one
        // per grid step. This terminates: above the largest finite loss, `delta` is the
        // mass at `+∞` alone, which was checked above to be within the target. Each
        // doubling adds one bisection step below, so the final bracket is never wider
        // than the grid step's (h·2⁻⁶⁰) was with a walk of single steps.
        let mut stride = h;
        let mut doublings = 0u32;
        while self.delta(hi) > target {
            lo = hi;
            hi += stride;
            stride *= 2.0;
            doublings += 1;
        }
        // The certified bound may cut the error charge short (see `delta`) and accept
        // less than the estimate above: look below `lo` too.
        if lo > 0.0 && self.delta(lo) <= target {
            let mut down = h;
            hi = lo;
            loop {
                let next = (hi - down).max(0.0);
                if self.delta(next) > target {
                    lo = next;
                    break;
                }
                hi = next;
                if next == 0.0 {
                    return Some(0.0);
                }
                down *= 2.0;
            }
        }
        if guess.is_finite() && guess > lo && guess < hi {
            let mut eps = guess;
            for _ in 0..8 {
                if self.delta(eps) <= target {
                    return Some(eps);
                }
                eps = (eps + (eps.abs() + 1.0) * 1e-12).next_up();
                if eps >= hi {
                    break;
                }
            }
        }
        // Bisection on the certified bound: `hi` accepted, `lo` not (or the bracket end).
        for _ in 0..60 + doublings {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if self.delta(mid) <= target {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }
}

/// `γ_n = nu/(1 − nu)` for an integer count.
fn gamma(n: usize) -> f64 {
    let nu = n as f64 * U;
    nu / (1.0 - nu)
}
