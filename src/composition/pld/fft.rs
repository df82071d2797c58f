//! Convolution of non-negative mass vectors with a **proven** ℓ2 error bound.
//!
//! Products of up to 2²² multiply–adds (a square counts half: its symmetric products
//! are computed once and doubled exactly) are convolved directly (sums of
//! non-negative products: relative error at most `γ_{m+1}` per entry, Higham,
//! *Accuracy and Stability of Numerical Algorithms*, §3.1, and no absolute error, which
//! is what keeps δ tight after many compositions: see the module docs of `pld`).
//! Larger ones are split by mass (`split`): the bulk of each vector directly, the
//! products involving its tails (a share of at most 10⁻¹² of the mass per side, when
//! the bulk fits the direct budget) through a radix-2 Cooley–Tukey FFT, whose
//! computed transform satisfies `‖ŷ − y‖₂ ≤ η_N ‖y‖₂` with
//! `η_N = Lη/(1 − Lη)`, `L = log₂N`, `η = μ + γ₄(√2 + μ)` and `μ` the error of the
//! computed twiddle factors (Higham, Theorem 24.2). The pointwise product adds at most
//! `√2γ₂` relative per entry (Higham, Lemma 3.5). With `α = ‖a‖₁`, `α₂ = ‖a‖₂` (and
//! `β`, `β₂` for `b`), `s = √N`, Young's and Parseval's identities give
//!
//! ```text
//! ‖Â − A‖₂ ≤ η_N s α₂ =: d_A        ‖B̂‖_∞ ≤ β + d_B =: B∞
//! ‖P̂ − A∘B‖₂ ≤ d_A B∞ + α d_B + κ (s α₂ + d_A) B∞ =: d_P,   κ = √2γ₃
//! ‖ĉ − a∗b‖₂ ≤ (η_N (α s β₂ + d_P) + d_P)/s + s·2⁻¹⁰⁷⁴
//! ```
//!
//! (the last term covers subnormal results of the exact scaling by 1/N). The bound is
//! evaluated in `f64` and then inflated by a relative 10⁻⁹, far more than the few
//! roundings of its own evaluation. Negative computed entries are clipped to 0, which
//! only moves them towards the exact (non-negative) convolution.

use std::sync::{Arc, Mutex};

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

/// Up to this many multiply–adds (non-zero products; half for a square), convolve
/// directly: about 2–4 ms at most, and no absolute error to charge to δ.
const DIRECT_MAX_WORK: usize = 1 << 22;

/// `γ_n = nu/(1 − nu)`.
fn gamma(n: f64) -> f64 {
    n * U / (1.0 - n * U)
}

/// Norms of a non-negative vector, rounded up: (`‖·‖₁`, `‖·‖₂`).
pub(super) fn norms(v: &[f64]) -> (f64, f64) {
    let (mut one, mut two) = (0.0f64, 0.0f64);
    for &x in v {
        one += x;
        two += x * x;
    }
    let slack = 1.0 + gamma(v.len() as f64 + 4.0) * 1.01;
    (one * slack, (two * slack).sqrt() * (1.0 + 4.0 * U))
}

/// How far a computed convolution `ĉ` may be from the exact `a ∗ b`:
/// `a ∗ b ≤ (1 + relative)·ĉ + e` pointwise, with `‖e‖₂ ≤ absolute`.
#[derive(Debug, Clone, Copy)]
pub(super) struct ConvolutionError {
    pub relative: f64,
    pub absolute: f64,
}

/// `a ∗ b` (linear convolution) of non-negative vectors and a bound on its error.
pub(super) fn convolve(a: &[f64], b: &[f64]) -> (Vec<f64>, ConvolutionError) {
    if a.is_empty() || b.is_empty() {
        let none = ConvolutionError {
            relative: 0.0,
            absolute: 0.0,
        };
        return (Vec::new(), none);
    }
    let nonzero = |v: &[f64]| -> Vec<usize> { (0..v.len()).filter(|&i| v[i] != 0.0).collect() };
    let (za, zb) = (nonzero(a), nonzero(b));
    // A square takes half the products (see `direct`).
    let work = if core::ptr::eq(a, b) {
        za.len().saturating_mul(za.len() + 1) / 2
    } else {
        za.len().saturating_mul(zb.len())
    };
    if work <= DIRECT_MAX_WORK {
        direct(a, b, &za, &zb)
    } else {
        split(a, b)
    }
}

/// Share of a vector's mass (each side) left outside its bulk by [`bulk`].
const TAIL_SHARE: f64 = 1e-12;

/// The window `[lo, hi)` of `v` that leaves at most `TAIL_SHARE·‖v‖₁` of its mass
/// outside on each side, then shrunk (dropping the lighter end point first) to at most
/// `max_len` points.
fn bulk(v: &[f64], max_len: usize) -> (usize, usize) {
    let theta = TAIL_SHARE * v.iter().sum::<f64>();
    let (mut lo, mut outside) = (0usize, 0.0f64);
    while lo < v.len() && outside + v[lo] <= theta {
        outside += v[lo];
        lo += 1;
    }
    let (mut hi, mut outside) = (v.len(), 0.0f64);
    while hi > lo && outside + v[hi - 1] <= theta {
        outside += v[hi - 1];
        hi -= 1;
    }
    while hi - lo > max_len {
        if v[lo] <= v[hi - 1] {
            lo += 1;
        } else {
            hi -= 1;
        }
    }
    (lo, hi)
}

/// `v` with the window `[lo, hi)` multiplied by `factor` (0 or 2: exact).
fn with_window(v: &[f64], (lo, hi): (usize, usize), factor: f64) -> Vec<f64> {
    let mut w = v.to_vec();
    for x in &mut w[lo..hi] {
        *x *= factor;
    }
    w
}

/// A large convolution split by mass: with `B` the bulk of each vector (all but a
/// share `TAIL_SHARE` of its mass on each side, as many points as the direct budget
/// allows) and `T = a − B` its tails, `a ∗ b = B_a ∗ B_b + T_a ∗ b + B_a ∗ T_b` (for a
/// square `B ∗ B + T ∗ (a + B)`): the bulk product directly (relative error only), the
/// rest by FFT, whose absolute error is proportional to the tails' norms (every term
/// of `by_fft`'s bound carries a factor `‖T‖₁` or `‖T‖₂`), so about `TAIL_SHARE` times
/// that of one FFT of the whole. Without it an FFT's absolute error (about 10⁻¹⁴ of
/// the total mass) lands on every point, and is amplified by every later composition
/// (Young's inequality): after 1000 Poisson-subsampled Gaussian steps it floored δ
/// near 10⁻⁹ (ε(10⁻⁹) 3.126 against an exact 2.99).
///
/// The sum `ĉ = fl(d̂ + f̂)` of the direct part `d̂` (`D ≤ (1 + r)d̂`) and the FFT part
/// (`F ≤ f̂ + e`, `f̂ ≥ 0`) bounds the exact `D + F ≤ (1 + r)(1 − u)⁻²ĉ + e` (two
/// roundings of non-negative sums).
fn split(a: &[f64], b: &[f64]) -> (Vec<f64>, ConvolutionError) {
    let square = core::ptr::eq(a, b);
    let cap = (DIRECT_MAX_WORK as f64).sqrt() as usize;
    let (wa, wb) = if square {
        let w = bulk(a, cap * 1414 / 1000);
        (w, w)
    } else {
        let (mut wa, mut wb) = (bulk(a, a.len()), bulk(b, b.len()));
        let len = |w: (usize, usize)| w.1 - w.0;
        if len(wa).saturating_mul(len(wb)) > DIRECT_MAX_WORK {
            if len(wa) > cap && len(wb) > cap {
                wa = bulk(a, cap);
                wb = bulk(b, cap);
            } else if len(wa) > cap {
                wa = bulk(a, DIRECT_MAX_WORK / len(wb).max(1));
            } else {
                wb = bulk(b, DIRECT_MAX_WORK / len(wa).max(1));
            }
        }
        (wa, wb)
    };
    // The tails' part f̂ (clipped at 0 by `by_fft`) and its error bound.
    let (mut c, mut absolute) = if square {
        by_fft(&with_window(a, wa, 0.0), &with_window(a, wa, 2.0))
    } else {
        let (mut f, e1) = by_fft(&with_window(a, wa, 0.0), b);
        let mut bulk_a = vec![0.0; a.len()];
        bulk_a[wa.0..wa.1].copy_from_slice(&a[wa.0..wa.1]);
        let (g, e2) = by_fft(&bulk_a, &with_window(b, wb, 0.0));
        for (x, y) in f.iter_mut().zip(g) {
            *x += y;
        }
        (f, e1 + e2)
    };
    let mut relative = 0.0;
    if wa.1 > wa.0 && wb.1 > wb.0 {
        let (ba, bb) = (&a[wa.0..wa.1], &b[wb.0..wb.1]);
        let nonzero = |v: &[f64]| -> Vec<usize> { (0..v.len()).filter(|&i| v[i] != 0.0).collect() };
        let za = nonzero(ba);
        let (d, e) = if square {
            direct(ba, ba, &za, &za)
        } else {
            direct(ba, bb, &za, &nonzero(bb))
        };
        for (slot, x) in c[wa.0 + wb.0..].iter_mut().zip(d) {
            *slot += x;
        }
        relative = e.relative;
        absolute += e.absolute;
    }
    let error = ConvolutionError {
        relative: (1.0 + relative) * (1.0 + 6.0 * U) - 1.0,
        absolute: absolute * (1.0 + 1e-9),
    };
    (c, error)
}

/// Direct convolution over the non-zero entries (`za`, `zb`; sparse distributions such
/// as k-fold randomized response stay exact this way, without an FFT's absolute error
/// in their gaps): each entry is a sum of at most `m = min(nnz)` non-negative products
/// accumulated in order, so it is within relative `γ_(m+1)` of the exact value
/// (Higham §3.1); subnormal products add at most 2⁻¹⁰⁷⁴ each.
fn direct(a: &[f64], b: &[f64], za: &[usize], zb: &[usize]) -> (Vec<f64>, ConvolutionError) {
    let mut c = vec![0.0; a.len() + b.len() - 1];
    if core::ptr::eq(a, b) {
        // A square: c_k = Σ_i a_i² [2i = k] + Σ_(i<j) 2a_i·a_j, half the products. Each
        // product 2a_i·a_j = a_i·(2a_j) carries one rounding (the doubling is exact), and
        // each entry still sums at most m of them in order: the same bound γ_(m+1).
        for &i in za {
            let x = a[i];
            c[2 * i] += x * x;
            let twice = 2.0 * x;
            for (slot, &y) in c[2 * i + 1..].iter_mut().zip(&a[i + 1..]) {
                *slot += twice * y;
            }
        }
    } else if zb.len() * 4 >= b.len() {
        for &i in za {
            let x = a[i];
            for (slot, &y) in c[i..].iter_mut().zip(b) {
                *slot += x * y;
            }
        }
    } else {
        for &i in za {
            let x = a[i];
            for &j in zb {
                c[i + j] += x * b[j];
            }
        }
    }
    let m = za.len().min(zb.len()).max(1) as f64;
    let g = gamma(m + 1.0);
    let underflow = (c.len() as f64).sqrt() * m * f64::from_bits(1);
    let error = ConvolutionError {
        relative: g / (1.0 - g) * (1.0 + 1e-9),
        absolute: underflow,
    };
    (c, error)
}

/// Twiddle factors `e^(−2πij/N)`, `j < N/2`, for the largest size seen so far; smaller
/// sizes use every `(Nmax/N)`-th entry.
struct Twiddles {
    size: usize,
    re: Vec<f64>,
    im: Vec<f64>,
}

static TWIDDLES: Mutex<Option<Arc<Twiddles>>> = Mutex::new(None);

/// Error bound `μ` of one computed twiddle: the angle `2πj/N` (computed for
/// `j ≤ N/8`, the rest by exact symmetries) carries relative error ≤ 2u, and
/// `sin`/`cos` are faithful (≤ 1 ulp each), so `|ŵ − w| ≤ (1.6 + 2√2)u < 8u`.
const TWIDDLE_ERROR: f64 = 8.0 * U;

fn twiddles(n: usize) -> Arc<Twiddles> {
    let mut cache = TWIDDLES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(t) = cache.as_ref()
        && t.size >= n
    {
        return Arc::clone(t);
    }
    let half = n / 2;
    let mut re = vec![0.0; half];
    let mut im = vec![0.0; half];
    let base = core::f64::consts::TAU / n as f64;
    let eighth = n / 8;
    for j in 0..=eighth.min(half.saturating_sub(1)) {
        let (s, c) = (j as f64 * base).sin_cos();
        re[j] = c;
        im[j] = -s;
    }
    let quarter = n / 4;
    for j in eighth + 1..=quarter.min(half.saturating_sub(1)) {
        // θ_j = π/2 − θ_(N/4 − j).
        re[j] = -im[quarter - j];
        im[j] = -re[quarter - j];
    }
    for j in quarter + 1..half {
        // θ_j = π/2 + θ_(j − N/4): cos θ = −sin θ′, sin θ = cos θ′.
        re[j] = im[j - quarter];
        im[j] = -re[j - quarter];
    }
    let t = Arc::new(Twiddles { size: n, re, im });
    *cache = Some(Arc::clone(&t));
    t
}

/// In-place unnormalised forward DFT `y_k = Σ x_j e^(−2πijk/N)` (radix-2, decimation
/// in time, bit-reversed input order).
fn fft(re: &mut [f64], im: &mut [f64], tw: &Twiddles) {
    let n = re.len();
    let bits = n.trailing_zeros();
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - bits);
        if j > i {
            re.swap(i, j);
            im.swap(i, j);
        }
    }
    let mut len = 2;
    while len <= n {
        let half = len / 2;
        let stride = tw.size / len;
        for start in (0..n).step_by(len) {
            for k in 0..half {
                let (wr, wi) = (tw.re[k * stride], tw.im[k * stride]);
                let (i, j) = (start + k, start + k + half);
                let tr = wr * re[j] - wi * im[j];
                let ti = wr * im[j] + wi * re[j];
                re[j] = re[i] - tr;
                im[j] = im[i] - ti;
                re[i] += tr;
                im[i] += ti;
            }
        }
        len *= 2;
    }
}

fn by_fft(a: &[f64], b: &[f64]) -> (Vec<f64>, f64) {
    let out_len = a.len() + b.len() - 1;
    let n = out_len.next_power_of_two().max(8);
    let tw = twiddles(n);
    let square = core::ptr::eq(a, b);

    let mut ar = vec![0.0; n];
    let mut ai = vec![0.0; n];
    ar[..a.len()].copy_from_slice(a);
    fft(&mut ar, &mut ai, &tw);
    let (br, bi) = if square {
        (ar.clone(), ai.clone())
    } else {
        let mut br = vec![0.0; n];
        let mut bi = vec![0.0; n];
        br[..b.len()].copy_from_slice(b);
        fft(&mut br, &mut bi, &tw);
        (br, bi)
    };
    // Pointwise product, conjugated so that a forward transform inverts it:
    // IDFT(P) = conj(DFT(conj(P)))/N.
    for k in 0..n {
        let (x, y) = (ar[k], ai[k]);
        ar[k] = x * br[k] - y * bi[k];
        ai[k] = -(x * bi[k] + y * br[k]);
    }
    fft(&mut ar, &mut ai, &tw);
    let scale = 1.0 / n as f64;
    let c: Vec<f64> = ar[..out_len].iter().map(|&x| (x * scale).max(0.0)).collect();

    let (alpha, alpha2) = norms(a);
    let (beta, beta2) = norms(b);
    let nf = n as f64;
    let s = nf.sqrt();
    let l = nf.log2();
    let eta = TWIDDLE_ERROR + gamma(4.0) * (core::f64::consts::SQRT_2 + TWIDDLE_ERROR);
    let eta_n = l * eta / (1.0 - l * eta);
    let d_a = eta_n * s * alpha2;
    let d_b = eta_n * s * beta2;
    let b_inf = beta + d_b;
    let kappa = core::f64::consts::SQRT_2 * gamma(3.0);
    let d_p = d_a * b_inf + alpha * d_b + kappa * (s * alpha2 + d_a) * b_inf;
    let error = (eta_n * (alpha * s * beta2 + d_p) + d_p) / s + s * f64::from_bits(1);
    (c, error * (1.0 + 1e-9))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact convolution of small non-negative integer vectors (exact in f64).
    fn exact(a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut c = vec![0.0; a.len() + b.len() - 1];
        for (i, x) in a.iter().enumerate() {
            for (j, y) in b.iter().enumerate() {
                c[i + j] += x * y;
            }
        }
        c
    }

    /// A xorshift64 generator (test inputs only).
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    fn distance(x: &[f64], y: &[f64]) -> f64 {
        x.iter()
            .zip(y)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt()
    }

    #[test]
    fn fft_convolution_is_within_its_proven_bound() {
        // Integer-valued inputs: the direct convolution is exact, so the FFT's true
        // error is measured, and must lie below the bound it reports.
        let mut bits = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut next = || (bits() % 1000) as f64;
        for (la, lb) in [(700, 900), (1500, 1500), (3000, 100)] {
            let a: Vec<f64> = (0..la).map(|_| next()).collect();
            let b: Vec<f64> = (0..lb).map(|_| next()).collect();
            let reference = exact(&a, &b);
            let (c, bound) = by_fft(&a, &b);
            let err = distance(&c, &reference);
            println!("fft {la}×{lb}: error {err:e}, bound {bound:e}");
            assert!(err <= bound, "error {err} above bound {bound}");
            assert!(bound < 1e-6 * norms(&reference).1, "bound {bound} is useless");
            let all = |v: &[f64]| (0..v.len()).collect::<Vec<_>>();
            let (d, _) = direct(&a, &b, &all(&a), &all(&b));
            assert_eq!(d, reference);
        }
        // Squaring takes the one-transform path.
        let a: Vec<f64> = (0..2000).map(|_| next()).collect();
        let (c, bound) = by_fft(&a, &a);
        assert!(distance(&c, &exact(&a, &a)) <= bound);
    }

    /// Mass split: the bulk convolved directly, the tails by FFT. Integer inputs with a
    /// bulk near 2⁴⁰ and tails of 1–4 (a share of about 10⁻¹³ each side): the exact
    /// convolution in i128 must lie within the reported bound, `exact ≤ (1 + r)ĉ + e`
    /// with `‖e‖₂ ≤ absolute`, and the absolute bound must be far below the FFT's of
    /// the whole vector.
    #[test]
    fn split_convolution_is_within_its_bound_and_far_below_a_whole_fft() {
        let mut next = xorshift(0x853c_49e6_748f_ea9b);
        let mut vector = |tail: usize, bulk: usize| -> Vec<f64> {
            let mut v: Vec<f64> = (0..tail).map(|_| (1 + next() % 4) as f64).collect();
            v.extend((0..bulk).map(|_| ((1u64 << 39) + next() % (1u64 << 39)) as f64));
            v.extend((0..tail).map(|_| (1 + next() % 4) as f64));
            v
        };
        let a = vector(500, 2000);
        let b = vector(400, 1800);
        let exact = |x: &[f64], y: &[f64]| -> Vec<i128> {
            let mut c = vec![0i128; x.len() + y.len() - 1];
            for (i, &p) in x.iter().enumerate() {
                for (j, &q) in y.iter().enumerate() {
                    c[i + j] += p as i128 * q as i128;
                }
            }
            c
        };
        for (x, y) in [(&a[..], &a[..]), (&a[..], &b[..])] {
            let (c, err) = convolve(x, y);
            let reference = exact(x, y);
            let excess: f64 = c
                .iter()
                .zip(&reference)
                .map(|(&got, &want)| {
                    let e = (want as f64 - (1.0 + err.relative) * got * (1.0 + 4.0 * U)).max(0.0);
                    e * e
                })
                .sum::<f64>()
                .sqrt();
            let whole = by_fft(x, y).1;
            println!(
                "split {}×{}: excess {excess:e}, bound {:e} (relative {:e}); one FFT of the whole: {whole:e}",
                x.len(),
                y.len(),
                err.absolute,
                err.relative
            );
            assert!(
                excess <= err.absolute,
                "error {excess} above bound {}",
                err.absolute
            );
            assert!(err.absolute <= 1e-9 * whole, "no gain over an FFT of the whole");
            assert!(err.relative < 1e-12);
        }
    }

    #[test]
    fn direct_squares_are_exact_on_integers_and_within_their_relative_bound() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        // Integers (some zero): the symmetric square must equal the exact convolution.
        let a: Vec<f64> = (0..300)
            .map(|_| (next() % 7) as f64 * f64::from(!next().is_multiple_of(3)))
            .collect();
        let (c, err) = convolve(&a, &a);
        assert_eq!(c, exact(&a, &a));
        assert!(
            err.absolute < 1e-300,
            "only the subnormal allowance: {}",
            err.absolute
        );
        // Reals: within the reported relative error of the general (unsymmetric) path.
        let b: Vec<f64> = (0..500)
            .map(|_| (next() >> 11) as f64 / (1u64 << 53) as f64)
            .collect();
        let b2 = b.clone();
        let (square, e1) = convolve(&b, &b);
        let (general, e2) = convolve(&b, &b2);
        for (x, y) in square.iter().zip(&general) {
            assert!(
                (x - y).abs() <= (e1.relative + e2.relative) * x.max(*y),
                "{x} vs {y}"
            );
        }
    }
}
