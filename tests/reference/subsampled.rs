//! An independent reference for the accounting tests (`tests/pld.rs`, `tests/rdp.rs`):
//! an optimistic discretisation of the Poisson-subsampled Gaussian's k-fold privacy
//! loss, below the exact ε(δ) by about k·h/2, computed with plain (uncertified) FFTs.
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

/// An independent **optimistic** estimate of the exact ε(δ) of `k` Poisson-subsampled
/// Gaussian steps (units of σ, s = Δ/σ, the add direction), below it up to float
/// rounding: each step's loss is rounded **down** to the grid `h·ℤ` (bucket masses
/// from `statrs`), the k-fold sum is formed by plain FFTs with no coarsening, and mass
/// below 10⁻²⁰ at the ends or at losses above 12 is dropped. Every one of these moves δ(ε) down; the rounding costs up to
/// k·h (about k·h/2 on average), so the estimate sits below the exact value by about that.
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

pub fn subsampled_gaussian_optimistic(q: f64, s: f64, k: u64, h: f64, delta: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    let n = Normal::new(0.0, 1.0).unwrap();
    let loss = |o: f64| (q * (s * o - s * s / 2.0).exp_m1()).ln_1p();
    let o_at = |l: f64| s / 2.0 + ((l.exp_m1() + q) / q).ln() / s;
    let (lo, hi) = (
        (loss(-12.0) / h).floor() as i64,
        (loss(s + 12.0) / h).ceil() as i64,
    );
    let mass = |a: f64, b: f64| (1.0 - q) * (n.cdf(b) - n.cdf(a)) + q * (n.cdf(b - s) - n.cdf(a - s));
    // Bucket j: losses in [jh, (j+1)h), placed at jh.
    let mut one: Vec<f64> = (lo..hi)
        .map(|j| {
            let a = if j == lo {
                f64::NEG_INFINITY
            } else {
                o_at(j as f64 * h)
            };
            let b = o_at((j + 1) as f64 * h);
            if b.is_nan() || b == f64::NEG_INFINITY {
                0.0
            } else {
                mass(a.max(-40.0), b).max(0.0)
            }
        })
        .collect();
    let mut one_offset = lo;
    // Dropping mass only lowers δ: masses below 10⁻²⁰ at the ends, and every loss above
    // `cap` (far above the answer: at most its mass counts there).
    let cap = (12.0 / h) as i64;
    let trim = |v: &mut Vec<f64>, offset: &mut i64| {
        v.truncate((cap - *offset).clamp(0, v.len() as i64) as usize);
        let first = v.iter().position(|&m| m > 1e-20).unwrap_or(0);
        let last = v.iter().rposition(|&m| m > 1e-20).unwrap_or(0);
        v.truncate(last + 1);
        v.drain(..first);
        *offset += first as i64;
    };
    trim(&mut one, &mut one_offset);
    let (result, offset) = convolution_power(one, one_offset, k, trim);
    let delta_at = |e: f64| -> f64 {
        (0..result.len())
            .map(|i| (result[i], (offset + i as i64) as f64 * h))
            .filter(|&(_, l)| l > e)
            .map(|(m, l)| m * -(e - l).exp_m1())
            .sum()
    };
    smallest(|e| delta_at(e) <= delta)
}
