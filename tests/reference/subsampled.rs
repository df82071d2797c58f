//! Independent references for the accounting tests (`tests/pld.rs`, `tests/rdp.rs`,
//! `tests/pld_closed_forms.rs`): a lower bound on the Poisson-subsampled Gaussian's
//! exact k-fold ε(δ) built only from post-processing (buckets merged onto a grid),
//! computed with plain (uncertified) FFTs, and the helpers they share.
#![allow(dead_code)]

/// The smallest ε in [0, 1e4] with `ok(ε)`, to 1e-13 relative (bisection).
pub fn smallest(ok: impl Fn(f64) -> bool) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1e4f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if ok(mid) { hi = mid } else { lo = mid }
    }
    hi
}

/// Linear convolution of two non-negative vectors by a plain complex radix-2 FFT
/// (independent of the crate's certified one; its rounding, ~10⁻¹⁶ of the peak, is far
/// below the masses that matter at δ = 10⁻⁵).
pub fn plain_convolve(a: &[f64], b: &[f64]) -> Vec<f64> {
    fn fft(re: &mut [f64], im: &mut [f64], inverse: bool) {
        let n = re.len();
        let bits = n.trailing_zeros();
        for i in 0..n {
            let j = i.reverse_bits() >> (usize::BITS - bits);
            if j > i {
                re.swap(i, j);
                im.swap(i, j);
            }
        }
        let sign = if inverse { 1.0 } else { -1.0 };
        let table: Vec<(f64, f64)> = (0..n / 2)
            .map(|k| (sign * std::f64::consts::TAU * k as f64 / n as f64).sin_cos())
            .collect();
        let mut len = 2;
        while len <= n {
            let stride = n / len;
            for start in (0..n).step_by(len) {
                for k in 0..len / 2 {
                    let (wi, wr) = table[k * stride];
                    let (x, y) = (start + k, start + k + len / 2);
                    let tr = wr * re[y] - wi * im[y];
                    let ti = wr * im[y] + wi * re[y];
                    re[y] = re[x] - tr;
                    im[y] = im[x] - ti;
                    re[x] += tr;
                    im[x] += ti;
                }
            }
            len *= 2;
        }
    }
    let out = a.len() + b.len() - 1;
    let n = out.next_power_of_two();
    let (mut ar, mut ai, mut br, mut bi) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    ar[..a.len()].copy_from_slice(a);
    br[..b.len()].copy_from_slice(b);
    fft(&mut ar, &mut ai, false);
    fft(&mut br, &mut bi, false);
    for k in 0..n {
        let (x, y) = (ar[k] * br[k] - ai[k] * bi[k], ar[k] * bi[k] + ai[k] * br[k]);
        ar[k] = x;
        ai[k] = y;
    }
    fft(&mut ar, &mut ai, true);
    ar[..out].iter().map(|x| (x / n as f64).max(0.0)).collect()
}

/// The `k`-fold convolution of `one` (whose index 0 stands at `one_offset`) by repeated
/// squaring, `trim` applied to every product: the masses and the offset of index 0.
pub fn convolution_power(
    mut one: Vec<f64>,
    mut one_offset: i64,
    k: u64,
    trim: impl Fn(&mut Vec<f64>, &mut i64),
) -> (Vec<f64>, i64) {
    let (mut result, mut offset): (Option<Vec<f64>>, i64) = (None, 0);
    let mut rest = k;
    loop {
        if rest & 1 == 1 {
            result = Some(match result {
                None => {
                    offset = one_offset;
                    one.clone()
                }
                Some(r) => {
                    offset += one_offset;
                    let mut c = plain_convolve(&r, &one);
                    trim(&mut c, &mut offset);
                    c
                }
            });
        }
        rest >>= 1;
        if rest == 0 {
            break;
        }
        one = plain_convolve(&one, &one);
        one_offset *= 2;
        trim(&mut one, &mut one_offset);
    }
    (result.expect("k ≥ 1"), offset)
}

/// An independent **lower bound** on the exact ε(δ) of `k` Poisson-subsampled Gaussian
/// steps (sampling rate `q`, `s` = Δ/σ, add/remove neighbours), both directions, built
/// only from post-processing, so that it can only fall below the exact value:
///
/// 1. The output `o` (units of σ) is **bucketed** on `[−14, s + 14]` in steps of `h/8`
///    (outputs outside are dropped, which only lowers δ): each bucket is one outcome with
///    its exact P- and Q-mass (`statrs` normal tails), the pair `(1 − q)N(0, 1) +
///    qN(s, 1)` vs `N(0, 1)` (remove) and its reverse (add).
/// 2. The bucket outcomes, in increasing order of loss, are **merged** onto the grid
///    `h·ℤ`: a running merge of outcomes takes just the fraction `β` of the next one that
///    makes its loss `ln(P/Q)` exactly the next grid point (a randomised post-processing,
///    the reverse of the certified side's split), and the rest of that outcome starts the
///    next merge; a last incomplete merge is rounded down to the grid. Merging is
///    post-processing, so δ
///    falls, but only at second order in `h` (the certified side's rounding-up costs
///    first order).
/// 3. The k-fold sum of the grid losses is formed by plain FFTs of the exponentially
///    tilted masses `m_i e^(2 l_i)` (tilting commutes with convolution and puts the tail
///    δ reads near the peak, where the FFT's rounding, ~10⁻¹⁶ of the peak, is
///    negligible), dropping every loss above 12 and tilted masses below 10⁻¹⁵ of the
///    peak at either end (δ falls).
///
/// Its only upward errors are floating-point roundings (a few ulps per bucket, the FFT's
/// ~10⁻¹⁶ of the tilted peak), far below the gaps it is used to measure.
pub struct SubsampledGaussianLower {
    /// Per direction: the k-fold grid losses and their P-masses.
    directions: Vec<Vec<(f64, f64)>>,
}

impl SubsampledGaussianLower {
    pub fn new(q: f64, s: f64, k: u64, h: f64) -> Self {
        use statrs::distribution::{ContinuousCDF, Normal};
        let n = Normal::new(0.0, 1.0).unwrap();
        // P(a < Z ≤ b) for a standard normal Z, from the tail on the far side of 0.
        let mass = |a: f64, b: f64| {
            if a >= 0.0 {
                n.sf(a) - n.sf(b)
            } else if b <= 0.0 {
                n.cdf(b) - n.cdf(a)
            } else {
                1.0 - n.cdf(a) - n.sf(b)
            }
            .max(0.0)
        };
        let width = h / 8.0;
        let (lo, hi) = (-14.0, s + 14.0);
        let buckets = ((hi - lo) / width).ceil() as usize;
        // (mixture mass, null mass) of each bucket, in increasing o.
        let pairs: Vec<(f64, f64)> = (0..buckets)
            .map(|i| {
                let (a, b) = (lo + i as f64 * width, lo + (i + 1) as f64 * width);
                let null = mass(a, b);
                ((1.0 - q) * null + q * mass(a - s, b - s), null)
            })
            .filter(|&(m, z)| m > 0.0 && z > 0.0)
            .collect();
        // Remove: P = mixture, loss increasing in o. Add: P = null, loss decreasing in o.
        let remove: Vec<(f64, f64)> = pairs.clone();
        let add: Vec<(f64, f64)> = pairs.iter().rev().map(|&(m, z)| (z, m)).collect();
        let directions = [remove, add]
            .into_iter()
            .map(|outcomes| tilted_k_fold(Self::merge_onto_grid(&outcomes, h), h, k, 2.0, 1e-15, 12.0))
            .collect();
        SubsampledGaussianLower { directions }
    }

    /// Outcomes `(p, q)` in increasing order of `ln(p/q)`, merged onto the grid `h·ℤ`:
    /// `(grid index, P-mass)`.
    fn merge_onto_grid(outcomes: &[(f64, f64)], h: f64) -> Vec<(i64, f64)> {
        let mut out: Vec<(i64, f64)> = Vec::new();
        // The running merge (P, Q) and its target grid index.
        let (mut p, mut q, mut target) = (0.0f64, 0.0f64, i64::MIN);
        for &(mut op, mut oq) in outcomes {
            loop {
                if p == 0.0 {
                    let l = (op / oq).ln();
                    target = (l / h).ceil() as i64;
                    if l == target as f64 * h {
                        out.push((target, op));
                    } else {
                        (p, q) = (op, oq);
                    }
                    break;
                }
                let g = (target as f64 * h).exp();
                if p + op < g * (q + oq) {
                    // Still below the target: all of it joins the merge.
                    p += op;
                    q += oq;
                    break;
                }
                // The fraction β of this outcome that brings the merge's loss to the target.
                let beta = ((g * q - p) / (op - g * oq)).clamp(0.0, 1.0);
                out.push((target, p + beta * op));
                (p, q) = (0.0, 0.0);
                op *= 1.0 - beta;
                oq *= 1.0 - beta;
                if op <= 0.0 || oq <= 0.0 {
                    break;
                }
            }
        }
        // A last merge that never reached its target (no outcome above it) is rounded
        // down to the grid point below its loss: δ can only fall.
        if p > 0.0 {
            out.push((((p / q).ln() / h).floor() as i64, p));
        }
        out
    }

    /// The lower bound on ε(δ): the larger of the two directions'.
    pub fn epsilon(&self, delta: f64) -> f64 {
        self.directions
            .iter()
            .map(|points| epsilon_for(points, delta))
            .fold(0.0, f64::max)
    }
}

/// The `k`-fold sum of one release's losses on the grid `h·ℤ` (atoms `(grid index,
/// P-mass)`), as `(loss, P-mass)`: plain FFTs of the exponentially tilted masses
/// `m e^(λl)` (tilting commutes with convolution and puts the tail δ reads near the
/// peak, where the FFT's rounding, ~10⁻¹⁶ of the peak, is negligible), untilted at the
/// end. Each product drops every loss above `cap` and the tilted masses below `cut`
/// times its peak at either end: both only lower δ.
pub fn tilted_k_fold(
    atoms: Vec<(i64, f64)>,
    h: f64,
    k: u64,
    lambda: f64,
    cut: f64,
    cap: f64,
) -> Vec<(f64, f64)> {
    let lo = atoms.iter().map(|a| a.0).min().unwrap();
    let hi = atoms.iter().map(|a| a.0).max().unwrap();
    let mut base = vec![0.0f64; (hi - lo + 1) as usize];
    for (i, m) in atoms {
        base[(i - lo) as usize] += m * (lambda * i as f64 * h).exp();
    }
    let trim = |v: &mut Vec<f64>, offset: &mut i64| {
        if cap.is_finite() {
            let top = (cap / h) as i64;
            v.truncate((top - *offset).clamp(0, v.len() as i64) as usize);
        }
        let peak = v.iter().copied().fold(0.0, f64::max);
        let first = v.iter().position(|&m| m > cut * peak).unwrap_or(0);
        let last = v.iter().rposition(|&m| m > cut * peak).unwrap_or(0);
        v.truncate(last + 1);
        v.drain(..first);
        *offset += first as i64;
    };
    let (result, offset) = convolution_power(base, lo, k, trim);
    result
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let l = (offset + i as i64) as f64 * h;
            (l, m.max(0.0) * (-lambda * l).exp())
        })
        .collect()
}

/// The smallest ε with `δ(ε) = Σ_(l > ε) m (1 − e^(ε − l)) ≤ delta` over the points
/// `(loss, P-mass)`.
pub fn epsilon_for(points: &[(f64, f64)], delta: f64) -> f64 {
    let delta_at = |e: f64| -> f64 {
        points
            .iter()
            .filter(|&&(l, _)| l > e)
            .map(|&(l, m)| m * -(e - l).exp_m1())
            .sum()
    };
    smallest(|e| delta_at(e) <= delta)
}
