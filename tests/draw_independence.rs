//! Draw independence (design §3.5): the number of random words a release draws must
//! reveal nothing about its noise.
//!
//! * `dpmech::audit` of the joint (output, words drawn) on neighbouring inputs must PASS
//!   at the claimed ε for the mechanisms built on the discrete Laplace sampler, while
//!   the previous looping sampler (CKS20 Algorithm 2 by Bernoulli trials, kept here as
//!   the negative control) FAILS the same audit.
//! * A chi-square test of independence between the word count and classes of `|noise|`
//!   over `N = 10⁶` samples, significance `ALPHA = 1e-3`, critical value the `1 − α`
//!   quantile of χ²((rows − 1)(columns − 1)) (statrs): the new sampler passes, the
//!   looping one fails.

use crate::common::{ALPHA, Counting};
use dpmech::audit::{Auditor, Verdict};
use dpmech::sampling::{DiscreteLaplace, OneSidedGeometric, Rational, bernoulli_ratio, uniform_below};
use dpmech::{CryptoRng, Geometric, Laplace};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// The previous kind of sampler, kept here as the negative control: the blocked CKS20
/// Algorithm 2 for an integer scale `τ` (`M` = the largest power of two `≤ τ/2`;
/// `Q` = successes of Bernoulli(`e^(−M/τ)`) before a failure; `R` uniform below `M`
/// accepted with Bernoulli(`e^(−R/τ)`)), then `±G` rejecting (negative, 0). Exact, but
/// its loops, hence its draws, follow the noise.
/// CKS20 Algorithm 1 for `γ = num/den ≤ 1`: `A_k ~ Bernoulli(γ/k)` until the first
/// failure, accept when that `k` is odd.
fn looping_bernoulli_exp_neg<R: CryptoRng + ?Sized>(num: u64, den: u64, rng: &mut R) -> bool {
    let mut k = 1u128;
    while bernoulli_ratio(rng, num as u128, den as u128 * k).unwrap() {
        k += 1;
    }
    k % 2 == 1
}

fn looping_discrete_laplace<R: CryptoRng + ?Sized>(tau: u64, rng: &mut R) -> i64 {
    let block = if tau >= 2 {
        1u64 << (63 - (tau / 2).leading_zeros())
    } else {
        1
    };
    loop {
        let mut q = 0u64;
        while looping_bernoulli_exp_neg(block, tau, rng) {
            q += 1;
        }
        let r = loop {
            let r = uniform_below(rng, block).unwrap();
            if looping_bernoulli_exp_neg(r, tau, rng) {
                break r;
            }
        };
        let g = (q * block + r) as i64;
        let negative = uniform_below(rng, 2).unwrap() == 1;
        if !(negative && g == 0) {
            return if negative { -g } else { g };
        }
    }
}

/// The previous discrete Gaussian (negative control): CKS20 Algorithm 3 for an integer
/// `σ²` on the looping discrete Laplace, accepting with the looping Bernoulli
/// (`exp(−1)` per whole unit of `γ = (|y|·t − σ²)²/(2σ²t²)`, then its fraction).
fn looping_discrete_gaussian<R: CryptoRng + ?Sized>(sigma_squared: u64, rng: &mut R) -> i64 {
    let t = sigma_squared.isqrt() + 1;
    loop {
        let y = looping_discrete_laplace(t, rng);
        let a = (y.unsigned_abs() * t).abs_diff(sigma_squared);
        let (num, den) = (a * a, 2 * sigma_squared * t * t);
        let mut accept = true;
        for _ in 0..num / den {
            if !looping_bernoulli_exp_neg(1, 1, rng) {
                accept = false;
                break;
            }
        }
        if accept && looping_bernoulli_exp_neg(num % den, den, rng) {
            return y;
        }
    }
}

/// The joint (value, words drawn) passes the auditor at the claimed ε (10⁶ samples per
/// side, seed 41) for the geometric and Laplace mechanisms, built on the shared ladder
/// (nothing certified per scale) at τ = 1, 10, 45, 100, 1000, 10⁶ and ≈ 2³⁵ grid units,
/// single releases and slices; the looping sampler fails the same audit.
#[test]
fn value_and_draws_audits_pass_for_geometric_and_laplace() {
    let geometric = Geometric::new(1, 1.0).unwrap();
    let audit = Auditor::new(geometric.privacy_loss())
        .unwrap()
        .samples(1_000_000)
        .seed(41);
    let report = audit
        .audit_with_draw_count(|r| geometric.release(0, r), |r| geometric.release(1, r))
        .unwrap();
    println!("Geometric(Δ = 1, ε = 1), (value, words):\n{report}");
    assert_eq!(report.verdict, Verdict::Pass, "{report}");

    let laplace = Laplace::new(1.0, 1.0).unwrap();
    let report = audit
        .audit_with_draw_count(
            |r| laplace.release(0.0, r).unwrap().round() as i64,
            |r| laplace.release(1.0, r).unwrap().round() as i64,
        )
        .unwrap();
    println!("Laplace(Δ = 1, ε = 1), (round(value), words):\n{report}");
    assert_eq!(report.verdict, Verdict::Pass, "{report}");

    // The batch path: a slice of two values whose first differs by Δ; the event is the
    // first released value (rounded) and the words the whole slice drew.
    let report = audit
        .audit_with_draw_count(
            |r| laplace.release_slice(&[0.0, 5.0], r).unwrap()[0].round() as i64,
            |r| laplace.release_slice(&[1.0, 5.0], r).unwrap()[0].round() as i64,
        )
        .unwrap();
    println!("Laplace::release_slice(Δ = 1, ε = 1), (round(first value), words):\n{report}");
    assert_eq!(report.verdict, Verdict::Pass, "{report}");
    // Δ = 100 at ε = 1: scale 100, blocks (M = 2), two-word trials.
    let wide = Geometric::new(100, 1.0).unwrap();
    let report = audit
        .audit_with_draw_count(
            |r| wide.release_slice(&[0, 7], r)[0],
            |r| wide.release_slice(&[100, 7], r)[0],
        )
        .unwrap();
    println!("Geometric::release_slice(Δ = 100, ε = 1), (first value, words):\n{report}");
    assert_eq!(report.verdict, Verdict::Pass, "{report}");

    // The shared-ladder construction at the scales (τ = Δ/ε = 10, 45 (no rung:
    // rejection at M = 1), 1000, 10⁶ grid units; τ = 1 and τ ≈ 2³⁵ are the two audits
    // above): neighbouring values 0 and Δ.
    for delta in [10u64, 45, 1000, 1_000_000] {
        let mechanism = Geometric::new(delta, 1.0).unwrap();
        let d = delta as i64;
        let report = audit
            .audit_with_draw_count(|r| mechanism.release(0, r), |r| mechanism.release(d, r))
            .unwrap();
        println!("Geometric(Δ = {delta}, ε = 1), (value, words):\n{report}");
        assert_eq!(report.verdict, Verdict::Pass, "Δ = {delta}: {report}");
    }

    // Negative control: the looping sampler at the same scale fails the same audit.
    let report = audit
        .audit_with_draw_count(
            |r| looping_discrete_laplace(1, r),
            |r| 1 + looping_discrete_laplace(1, r),
        )
        .unwrap();
    println!("looping sampler, (value, words):\n{report}");
    assert_eq!(report.verdict, Verdict::Fail, "{report}");
}

/// Pearson's chi-square test of independence on a contingency table (rows and columns
/// with an expected count below 5 are merged into their neighbour first).
fn independence(table: &[Vec<u64>]) -> (f64, f64) {
    let n: u64 = table.iter().flatten().sum();
    let rows: Vec<u64> = table.iter().map(|r| r.iter().sum()).collect();
    let cols: Vec<u64> = (0..table[0].len())
        .map(|j| table.iter().map(|r| r[j]).sum())
        .collect();
    let mut statistic = 0.0;
    for (i, row) in table.iter().enumerate() {
        for (j, &observed) in row.iter().enumerate() {
            let expected = rows[i] as f64 * cols[j] as f64 / n as f64;
            assert!(expected >= 5.0, "cell ({i}, {j}) expects {expected}");
            statistic += (observed as f64 - expected).powi(2) / expected;
        }
    }
    let df = ((rows.len() - 1) * (cols.len() - 1)) as f64;
    let critical = ChiSquared::new(df).unwrap().inverse_cdf(1.0 - ALPHA);
    (statistic, critical)
}

/// Rows: word counts (the `n_classes − 1` smallest values seen, then "more");
/// columns: `|z| = 0, 1, 2, 3…5, ≥ 6` in units of `⌈τ/4⌉`.
fn contingency(samples: &[(u64, i64)], tau: u64, n_classes: usize) -> Vec<Vec<u64>> {
    let mut words: Vec<u64> = samples.iter().map(|s| s.0).collect();
    words.sort_unstable();
    words.dedup();
    let cut: Vec<u64> = words.into_iter().take(n_classes - 1).collect();
    let unit = tau.div_ceil(4).max(1);
    let mut table = vec![vec![0u64; 5]; cut.len() + 1];
    for &(w, z) in samples {
        let row = cut.iter().position(|&c| c == w).unwrap_or(cut.len());
        let col = match z.unsigned_abs() / unit {
            0 => 0,
            1 => 1,
            2 => 2,
            3..=5 => 3,
            _ => 4,
        };
        table[row][col] += 1;
    }
    table.retain(|r| r.iter().sum::<u64>() >= 200);
    table
}

const N: usize = 1_000_000;

#[test]
fn word_count_is_independent_of_the_noise_magnitude() {
    // τ = 1 and 10: rungs of the shared ladder (one word, no rejection); τ = 45: not a
    // rung, M = 1, two words per trial (the magnitude and the acceptance); τ = 1000, 10⁶:
    // blocks, two words per trial; τ = 2³⁵ + 3: a Laplace release (the grid
    // g ≈ b·2⁻³⁵), two words per trial with R's low bits in the first word. Every scale
    // is built on the shared ladder (nothing certified per scale).
    for (i, tau) in [1u64, 10, 45, 1000, 1_000_000, (1 << 35) + 3]
        .into_iter()
        .enumerate()
    {
        let scale = Rational::new(tau, 1).unwrap();
        let new = DiscreteLaplace::new(scale);
        let one_sided = OneSidedGeometric::new(scale);
        let mut rng = Counting {
            inner: ChaCha20Rng::seed_from_u64(500 + i as u64),
            words: 0,
        };
        let mut draw = |f: &dyn Fn(&mut Counting<ChaCha20Rng>) -> i64| -> Vec<(u64, i64)> {
            (0..N)
                .map(|_| {
                    let before = rng.words;
                    let z = f(&mut rng);
                    (rng.words - before, z)
                })
                .collect()
        };
        let new_samples = draw(&|r| new.sample(r));
        // The batch path: the words of a batch of two samples against the second's |z|.
        let batch_samples = draw(&|r| {
            let mut pair = [0i64; 2];
            new.sample_into(&mut pair, r);
            pair[1]
        });
        let words = |s: &[(u64, i64)]| {
            let mean = s.iter().map(|x| x.0 as f64).sum::<f64>() / s.len() as f64;
            (mean, s.iter().map(|x| x.0).max().unwrap_or(0))
        };
        let old_samples = draw(&|r| looping_discrete_laplace(tau, r));
        let one_sided_samples = draw(&|r| one_sided.sample(r) as i64);
        println!(
            "τ = {tau}: words per sample over {N} samples (mean, max): discrete Laplace {:?}, \
             one-sided geometric {:?}, looping discrete Laplace {:?}",
            words(&new_samples),
            words(&one_sided_samples),
            words(&old_samples)
        );
        let table = contingency(&new_samples, tau, 4);
        if table.len() >= 2 {
            let (s, c) = independence(&table);
            println!("τ = {tau}: new sampler χ² = {s:.1} (critical {c:.1})");
            assert!(s <= c, "τ = {tau}: word count depends on |noise|: {s} > {c}");
        } else {
            // A rejection has probability (1 − α)/2 ≈ 1/(2τ): the count is constant
            // but for a handful of samples.
            let first = new_samples[0].0;
            let other = new_samples.iter().filter(|s| s.0 != first).count();
            println!("τ = {tau}: new sampler drew {first} words in all but {other} samples");
            assert!(other < 200, "τ = {tau}: {other}");
        }
        let table = contingency(&batch_samples, tau, 4);
        if table.len() >= 2 {
            let (s, c) = independence(&table);
            println!("τ = {tau}: batches of two, χ² = {s:.1} (critical {c:.1})");
            assert!(
                s <= c,
                "τ = {tau}: a batch's word count depends on |noise|: {s} > {c}"
            );
        } else {
            let other = batch_samples.iter().filter(|s| s.0 != batch_samples[0].0).count();
            println!(
                "τ = {tau}: batches of two drew {} words in all but {other}",
                batch_samples[0].0
            );
            assert!(other < 400, "τ = {tau}: {other}");
        }
        // Outside the fallback event the count is a multiple of the words per trial.
        for samples in [&new_samples, &batch_samples] {
            assert!(
                samples
                    .iter()
                    .all(|&(w, _)| w % new.words_per_trial() as u64 == 0)
            );
        }
        // The one-sided geometric: a multiple of its words per trial (a constant at the
        // rungs, where no trial is rejected), independent of the sample elsewhere.
        let fixed = one_sided.words_per_sample() as u64;
        assert!(
            one_sided_samples.iter().all(|&(w, _)| w % fixed == 0),
            "τ = {tau}"
        );
        if fixed == 1 {
            assert!(one_sided_samples.iter().all(|&(w, _)| w == fixed), "τ = {tau}");
        } else {
            let table = contingency(&one_sided_samples, tau, 4);
            assert!(table.len() >= 2, "τ = {tau}: the remainder was never rejected");
            let (s, c) = independence(&table);
            println!("τ = {tau}: one-sided geometric χ² = {s:.1} (critical {c:.1})");
            assert!(
                s <= c,
                "τ = {tau}: one-sided word count depends on the value: {s} > {c}"
            );
        }
        let table = contingency(&old_samples, tau, 4);
        if table.len() >= 2 {
            let (s, c) = independence(&table);
            println!("τ = {tau}: looping sampler χ² = {s:.1} (critical {c:.1})");
            assert!(s > c, "τ = {tau}: the negative control passed: {s} ≤ {c}");
        } else {
            println!("τ = {tau}: looping sampler drew one word count only");
        }
    }
}

/// The discrete Gaussian and the real-valued `Gaussian` built on it: the joint (value,
/// words drawn) passes the audit at each mechanism's claimed (ε, δ); the looping
/// sampler at the same σ fails it. Then, over 10⁶ samples each: at σ = 0.5, 1 and 10
/// (rungs of the ladder, `M = 1`: no rejection) every sample draws exactly one word; at
/// σ = √0.3, √10 and √3970 (`M = 1` off a rung: a wider rung and an acceptance word),
/// 64.01 and 1000 (blocks, `M = 2` and 16), 4160 (the shared proposal at its reference
/// ratio), 2⁴⁰ and 2⁶⁰ a chi-square test of independence between the word count and
/// `|z|` classes at α = 10⁻³ (the looping sampler at σ = 10 as the negative control).
/// Off a rung a sample is rejected with probability up to 1/17: thousands of two-trial
/// samples in each class. (Below σ = 1/4 a sample is 0 with probability above 0.999
/// and takes a second trial with probability below `7·10⁻⁴`: too few of either for a
/// contingency table; its trials are bounded in `discrete_gaussian/ladder.rs`.)
#[test]
fn discrete_gaussian_word_count_is_independent_of_the_noise() {
    let mechanism = dpmech::DiscreteGaussian::approximate(1, 1.0, 1e-6).unwrap();
    let audit = Auditor::new(mechanism.privacy_loss())
        .unwrap()
        .samples(1_000_000)
        .seed(46);
    let report = audit
        .audit_with_draw_count(|r| mechanism.release(0, r), |r| mechanism.release(1, r))
        .unwrap();
    println!(
        "DiscreteGaussian(Δ₂ = 1, ε = 1, δ = 1e-6; σ² = {:?}), (value, words):\n{report}",
        mechanism.sigma_squared()
    );
    assert_eq!(report.verdict, Verdict::Pass, "{report}");

    // The real-valued Gaussian (a discrete Gaussian on its grid): (round(value), words).
    let gaussian = dpmech::Gaussian::analytic(1.0, 1.0, 1e-6).unwrap();
    let report = Auditor::new(gaussian.privacy_loss())
        .unwrap()
        .samples(1_000_000)
        .seed(47)
        .audit_with_draw_count(
            |r| gaussian.release(0.0, r).unwrap().round() as i64,
            |r| gaussian.release(1.0, r).unwrap().round() as i64,
        )
        .unwrap();
    println!(
        "Gaussian::analytic(Δ₂ = 1, ε = 1, δ = 1e-6; σ = {}), (round(value), words):\n{report}",
        gaussian.sigma()
    );
    assert_eq!(report.verdict, Verdict::Pass, "{report}");

    // The discrete Gaussian mechanism with σ in the shared-proposal regime (Δ₂ = 5000,
    // σ ≈ 2.3·10⁴): (⌊value/500⌋, words) on neighbours 0 and 5000. Coarsening the value
    // is post-processing (it cannot raise the loss) and gives the auditor's events about
    // a hundred values to work with instead of 10⁵; the same audit of the same mechanism
    // on neighbours 5000 apart with a sensitivity claim of 1250 (four times too little
    // noise for that claim: the σ of Δ₂ = 1250 is a quarter of this one) must FAIL.
    let large = dpmech::DiscreteGaussian::approximate(5000, 1.0, 1e-6).unwrap();
    assert!(large.sigma() >= 4096.0, "σ = {}", large.sigma());
    let coarse = |value: i64| value.div_euclid(500);
    let report = Auditor::new(large.privacy_loss())
        .unwrap()
        .samples(1_000_000)
        .seed(48)
        .audit_with_draw_count(
            |r| coarse(large.release(0, r)),
            |r| coarse(large.release(5000, r)),
        )
        .unwrap();
    println!(
        "DiscreteGaussian(Δ₂ = 5000, ε = 1, δ = 1e-6; σ = {:.1}), (⌊value/500⌋, words):\n{report}",
        large.sigma()
    );
    assert_eq!(report.verdict, Verdict::Pass, "{report}");
    let small = dpmech::DiscreteGaussian::approximate(1250, 1.0, 1e-6).unwrap();
    let under = Auditor::new(large.privacy_loss())
        .unwrap()
        .samples(1_000_000)
        .seed(49)
        .audit_with_draw_count(
            |r| small.release(0, r).div_euclid(125),
            |r| small.release(5000, r).div_euclid(125),
        )
        .unwrap();
    println!(
        "negative control: σ = {:.1} on neighbours 5000 apart, claimed (1, 1e-6):\n{under}",
        small.sigma()
    );
    assert_eq!(under.verdict, Verdict::Fail, "{under}");

    let (num, den) = mechanism.sigma_squared();
    let integer_variance = num.div_ceil(u128::from(den)) as u64;
    let report = audit
        .audit_with_draw_count(
            |r| looping_discrete_gaussian(integer_variance, r),
            |r| 1 + looping_discrete_gaussian(integer_variance, r),
        )
        .unwrap();
    println!("looping discrete Gaussian σ² = {integer_variance}, (value, words):\n{report}");
    assert_eq!(report.verdict, Verdict::Fail, "{report}");

    // σ = 0.5, 1, 10 (rungs), √0.3, √10, √3970 (off a rung), 64.01 and 1000
    // (blocks), and the shared proposal of ⌊σ⌋ ≥ 4096: σ² = 4160² − 1 (M = 64, σ/M just
    // below 65, the proposal's reference ratio), σ = 2⁴⁰ and 2⁶⁰ (the Gaussian
    // mechanism's grid units).
    let cases: [(u128, u64, f64); 11] = [
        (1, 4, 0.5),
        (1, 1, 1.0),
        (100, 1, 10.0),
        (3, 10, 0.3f64.sqrt()),
        (10, 1, 10f64.sqrt()),
        (3970, 1, 3970f64.sqrt()),
        (4097, 1, 4097f64.sqrt()),
        (1_000_000, 1, 1000.0),
        (4160 * 4160 - 1, 1, 4160.0),
        (1 << 80, 1, 2f64.powi(40)),
        (1 << 120, 1, 2f64.powi(60)),
    ];
    for (i, (num, den, sigma)) in cases.into_iter().enumerate() {
        let noise = dpmech::sampling::DiscreteGaussianSampler::from_ratio(num, den).unwrap();
        let mut rng = Counting {
            inner: ChaCha20Rng::seed_from_u64(600 + i as u64),
            words: 0,
        };
        let samples: Vec<(u64, i64)> = (0..N)
            .map(|_| {
                let before = rng.words;
                let z = noise.sample(&mut rng);
                (rng.words - before, z)
            })
            .collect();
        let mean = samples.iter().map(|s| s.0 as f64).sum::<f64>() / N as f64;
        let max = samples.iter().map(|s| s.0).max().unwrap_or(0);
        if noise.words_per_trial() == 1 {
            // On a rung with M = 1 there is no rejection: one word per sample, every
            // sample (a constant count is independent of everything).
            println!("σ = {sigma}: words per sample (mean {mean:.3}, max {max}): constant");
            assert!(samples.iter().all(|s| s.0 == 1), "σ = {sigma}");
            continue;
        }
        let table = magnitude_contingency(&samples, sigma);
        let (s, c) = independence(&table);
        println!("σ = {sigma}: words per sample (mean {mean:.3}, max {max}); χ² = {s:.1} (critical {c:.1})");
        assert!(s <= c, "σ = {sigma}: word count depends on |noise|: {s} > {c}");
    }
    let mut rng = Counting {
        inner: ChaCha20Rng::seed_from_u64(620),
        words: 0,
    };
    let old: Vec<(u64, i64)> = (0..N / 4)
        .map(|_| {
            let before = rng.words;
            let z = looping_discrete_gaussian(100, &mut rng);
            (rng.words - before, z)
        })
        .collect();
    let (s, c) = independence(&magnitude_contingency(&old, 10.0));
    println!("σ = 10, looping sampler: χ² = {s:.1} (critical {c:.1})");
    assert!(s > c, "the negative control passed: {s} ≤ {c}");
}

/// Rows: the three smallest word counts seen, then "more"; columns: `|z| ≤ σ/2`,
/// `≤ σ`, `≤ 2σ`, `> 2σ` (for σ < 1: `z = 0` and `z ≠ 0`). Rows and columns with fewer
/// than 200 samples are dropped.
fn magnitude_contingency(samples: &[(u64, i64)], sigma: f64) -> Vec<Vec<u64>> {
    let mut words: Vec<u64> = samples.iter().map(|s| s.0).collect();
    words.sort_unstable();
    words.dedup();
    let cut: Vec<u64> = words.into_iter().take(3).collect();
    let column = |z: i64| {
        let m = z.unsigned_abs() as f64;
        if sigma < 1.0 {
            usize::from(m > 0.0)
        } else if m <= sigma / 2.0 {
            0
        } else if m <= sigma {
            1
        } else if m <= 2.0 * sigma {
            2
        } else {
            3
        }
    };
    let mut table = vec![vec![0u64; 4]; cut.len() + 1];
    for &(w, z) in samples {
        let row = cut.iter().position(|&c| c == w).unwrap_or(cut.len());
        table[row][column(z)] += 1;
    }
    table.retain(|r| r.iter().sum::<u64>() >= 200);
    let keep: Vec<usize> = (0..4)
        .filter(|&j| table.iter().map(|r| r[j]).sum::<u64>() >= 200)
        .collect();
    table
        .into_iter()
        .map(|r| keep.iter().map(|&j| r[j]).collect())
        .collect()
}

/// Welch's t statistic of two samples of times.
fn welch_t(a: &[f64], b: &[f64]) -> f64 {
    let stats = |x: &[f64]| {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var, n)
    };
    let ((ma, va, na), (mb, vb, nb)) = (stats(a), stats(b));
    (ma - mb) / (va / na + vb / nb).sqrt()
}

/// dudect-style timing diagnostic (not a pass/fail check: timings depend on the
/// machine): per-release times of small-|noise| (`|z| ≤ τ/4`) and large-|noise|
/// (`|z| ≥ 2τ`) outputs, Welch's t between the two classes (|t| > 4.5 is dudect's
/// "leak" threshold), old looping sampler vs the draw-independent one.
/// Run: `cargo test --release -p dpmech --test main -- draw_independence:: --ignored --nocapture`.
#[test]
#[ignore = "timing diagnostic; prints Welch t statistics"]
fn timing_diagnostic_welch_t() {
    use std::time::Instant;
    const RELEASES: usize = 400_000;
    let classify = |name: &str, tau: f64, f: &mut dyn FnMut() -> i64| {
        let (mut small, mut large) = (Vec::new(), Vec::new());
        for _ in 0..RELEASES {
            let start = Instant::now();
            let z = std::hint::black_box(f());
            let ns = start.elapsed().as_nanos() as f64;
            let magnitude = z.unsigned_abs() as f64;
            if magnitude <= tau / 4.0 {
                small.push(ns);
            } else if magnitude >= 2.0 * tau {
                large.push(ns);
            }
        }
        println!(
            "{name:<44} small n = {:>6}, large n = {:>6}, Welch t = {:>8.2}",
            small.len(),
            large.len(),
            welch_t(&small, &large)
        );
    };
    let mut rng = ChaCha20Rng::seed_from_u64(900);
    for tau in [1u64, 10, 45, 1000, 1_000_000] {
        let new = Geometric::new(1, 1.0 / tau as f64).unwrap();
        classify(
            &format!("Geometric::release τ = {tau} (new)"),
            tau as f64,
            &mut || new.release(0, &mut rng),
        );
        classify(
            &format!("looping discrete Laplace τ = {tau} (old)"),
            tau as f64,
            &mut || looping_discrete_laplace(tau, &mut rng),
        );
    }
    let laplace = Laplace::new(1.0, 1.0).unwrap();
    classify("Laplace::release b = 1 (new)", 1.0, &mut || {
        (laplace.release(0.0, &mut rng).unwrap() * 1e6) as i64 / 1_000_000
    });
    let gaussian = dpmech::sampling::DiscreteGaussianSampler::new(Rational::new(100, 1).unwrap());
    classify("DiscreteGaussianSampler σ = 10 (new)", 10.0, &mut || {
        gaussian.sample(&mut rng)
    });
    classify("looping discrete Gaussian σ = 10 (old)", 10.0, &mut || {
        looping_discrete_gaussian(100, &mut rng)
    });
    // Off a rung (σ = √10: a rung above it, 2 words per trial), blocks (σ = 1000 on the
    // rung σ/M = 62.5, σ² = 1 070 000 a rung above σ/M ≈ 32.3; 2 words per trial) and the
    // shared proposal (σ = 2⁴⁰, 3 words per trial).
    for (variance, sigma) in [
        (10u128, 10f64.sqrt()),
        (1_000_000, 1000.0),
        (1_070_000, 1_070_000f64.sqrt()),
        (1 << 80, 2f64.powi(40)),
    ] {
        let noise = dpmech::sampling::DiscreteGaussianSampler::from_ratio(variance, 1).unwrap();
        classify(
            &format!("DiscreteGaussianSampler σ = {sigma} (new)"),
            sigma,
            &mut || noise.sample(&mut rng),
        );
    }
}

/// The generator the auditor hands to a release when it counts the words drawn.
type Counted<'a> = dpmech::audit::CountingRng<&'a mut ChaCha20Rng>;
/// A selection release on a score vector.
type Release<'m> = dyn Fn(&[f64], &mut Counted<'_>) -> usize + 'm;

/// The selection mechanisms (issue 13, item 3): the old rejection loop drew a number of
/// words that followed the **score vector** (1 round for equal scores, more when one
/// candidate stands out), so the index alone passed an audit while (index, words
/// drawn) failed it. Scores `[0; 100]` against `[1, 0, …, 0]` (sensitivity 1, ε = 1):
/// every selection mechanism now passes the joint audit at its claimed loss, and the
/// looping exponential mechanism (kept here as the negative control) fails it.
#[test]
fn selection_mechanisms_draw_the_same_words_whatever_the_scores() {
    audit_selection_index_and_words(100, 200_000, 43);
}

/// The joint audit of (index, words drawn) for every selection mechanism on `[0; n]`
/// against `[1, 0, …, 0]` (Δu = 1, ε = 1, `samples` runs per input), each of which must
/// PASS at its claimed loss, and for the looping exponential mechanism (uniform
/// candidate, accepted with Bernoulli(exp(−gap/2)) by CKS20 Algorithm 1; exact in its
/// index), which must FAIL.
fn audit_selection_index_and_words(n: usize, samples: usize, seed: u64) {
    use dpmech::{Exponential, PermuteAndFlip, ReportNoisyMax};
    let d = vec![0.0f64; n];
    let mut d_prime = d.clone();
    d_prime[0] = 1.0;
    let audit = |loss| Auditor::new(loss).unwrap().samples(samples).seed(seed);

    let exponential = Exponential::new(1.0, 1.0).unwrap();
    let pf = PermuteAndFlip::new(1.0, 1.0).unwrap();
    let rnm_laplace = ReportNoisyMax::laplace(1.0, 1.0).unwrap();
    let rnm_exponential = ReportNoisyMax::exponential(1.0, 1.0).unwrap();
    let mechanisms: [(&str, dpmech::PrivacyLoss, &Release<'_>); 4] = [
        ("Exponential", exponential.privacy_loss(), &|s, r| {
            exponential.release(s, r).unwrap()
        }),
        ("PermuteAndFlip", pf.privacy_loss(), &|s, r| {
            pf.release(s, r).unwrap()
        }),
        ("ReportNoisyMax::laplace", rnm_laplace.privacy_loss(), &|s, r| {
            rnm_laplace.release(s, r).unwrap()
        }),
        (
            "ReportNoisyMax::exponential",
            rnm_exponential.privacy_loss(),
            &|s, r| rnm_exponential.release(s, r).unwrap(),
        ),
    ];
    for (name, loss, release) in mechanisms {
        let report = audit(loss)
            .audit_with_draw_count(|r| release(&d, r) as i64, |r| release(&d_prime, r) as i64)
            .unwrap();
        println!("{name}, {n} candidates, (index, words):\n{report}");
        assert_eq!(report.verdict, Verdict::Pass, "{name}: {report}");
    }

    let looping = |scores: &[f64], rng: &mut Counted<'_>| -> i64 {
        let best = scores.iter().copied().fold(f64::MIN, f64::max);
        loop {
            let r = uniform_below(rng, scores.len() as u64).unwrap() as usize;
            if scores[r] == best || looping_bernoulli_exp_neg(1, 2, rng) {
                return r as i64;
            }
        }
    };
    let report = audit(exponential.privacy_loss())
        .audit_with_draw_count(|r| looping(&d, r), |r| looping(&d_prime, r))
        .unwrap();
    println!("looping exponential mechanism, {n} candidates, (index, words):\n{report}");
    assert_eq!(report.verdict, Verdict::Fail, "{report}");
}

/// Issue 32 §4, at 1000 candidates: the words a selection draws are a function of the
/// seed alone. For each mechanism and each of three seeds, the per-release word counts
/// of 40 releases are the same sequence for five very different score vectors (all
/// tied; one candidate 1000·Δu ahead; a ramp; a permuted spread; clamped extremes with
/// a third of the candidates tied at the top), and they are the documented counts:
/// one word for `Exponential`, `n + 1` for permute-and-flip (both constructors), and for
/// report-noisy-max with Laplace noise two words per discrete Laplace trial plus the
/// tie-breaking word (every candidate's noise takes at least one trial). Any count that
/// followed the scores — a tie drawing extra bits, a loop over the candidates that
/// stopped early — would make two of the sequences differ.
#[test]
fn selection_words_at_1000_candidates_are_a_function_of_the_seed_alone() {
    use dpmech::audit::CountingRng;
    use dpmech::{Exponential, PermuteAndFlip, ReportNoisyMax};
    let n = 1000;
    let vectors: Vec<Vec<f64>> = vec![
        vec![0.0; n],
        (0..n).map(|i| if i == 0 { 1000.0 } else { 0.0 }).collect(),
        (0..n).map(|i| i as f64 * 0.1).collect(),
        (0..n).map(|i| ((i * 7919) % 1000) as f64 * 0.01).collect(),
        (0..n)
            .map(|i| match i % 3 {
                0 => f64::MAX,
                1 => -1e300,
                _ => 5.0,
            })
            .collect(),
    ];
    let exponential = Exponential::new(1.0, 1.0).unwrap();
    let monotone = Exponential::with_monotonicity(1.0, 0.01, dpmech::Monotonicity::Monotone).unwrap();
    let pf = PermuteAndFlip::new(1.0, 1.0).unwrap();
    let rnm_laplace = ReportNoisyMax::laplace(1.0, 1.0).unwrap();
    let rnm_exponential = ReportNoisyMax::exponential(1.0, 1.0).unwrap();
    type Select<'m> = dyn Fn(&[f64], &mut CountingRng<ChaCha20Rng>) -> usize + 'm;
    /// Whether a release's word count is the documented one.
    type Documented<'m> = dyn Fn(u64) -> bool + 'm;
    let mechanisms: [(&str, &Select<'_>, &Documented<'_>); 5] = [
        ("Exponential", &|s, r| exponential.release(s, r).unwrap(), &|w| {
            w == 1
        }),
        (
            "Exponential (monotone, ε = 0.01)",
            &|s, r| monotone.release(s, r).unwrap(),
            &|w| w == 1,
        ),
        ("PermuteAndFlip", &|s, r| pf.release(s, r).unwrap(), &|w| {
            w == n as u64 + 1
        }),
        (
            "ReportNoisyMax::exponential",
            &|s, r| rnm_exponential.release(s, r).unwrap(),
            &|w| w == n as u64 + 1,
        ),
        (
            "ReportNoisyMax::laplace",
            &|s, r| rnm_laplace.release(s, r).unwrap(),
            &|w| w % 2 == 1 && w > 2 * n as u64,
        ),
    ];
    for (name, release, documented) in mechanisms {
        for seed in 0..3u64 {
            let counts = |scores: &[f64]| -> Vec<u64> {
                let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(4200 + seed));
                (0..40)
                    .map(|_| {
                        let before = rng.draws();
                        release(scores, &mut rng);
                        rng.draws() - before
                    })
                    .collect()
            };
            let reference = counts(&vectors[0]);
            assert!(reference.iter().all(|&w| documented(w)), "{name}: {reference:?}");
            for scores in &vectors[1..] {
                assert_eq!(counts(scores), reference, "{name}, seed {seed}");
            }
            println!("{name}, seed {seed}: words per release {:?}", &reference[..8]);
        }
    }
}

/// The joint audit of (index, words drawn) at 1000 candidates, scores `[0; 1000]`
/// against `[1, 0, …, 0]` (Δu = 1, ε = 1, 100 000 runs per input): every selection
/// mechanism passes at its claimed ε, and the looping exponential mechanism (the
/// negative control of the test above at 100 candidates) fails.
#[test]
fn selection_index_and_words_audit_at_1000_candidates() {
    audit_selection_index_and_words(1000, 100_000, 44);
}

/// Randomized response: one word per report whatever the bit and the outcome. The
/// previous Bernoulli factory (a fair coin keeps, else Bernoulli(e^−ε) flips, else
/// repeat) drew more words on the flipping path, so (report, words) revealed the true
/// bit: it is kept here as the negative control.
#[test]
fn randomized_response_draws_the_same_words_whatever_the_answer() {
    use dpmech::{KaryRandomizedResponse, RandomizedResponse};
    let rr = RandomizedResponse::new(1.0).unwrap();
    let audit = Auditor::new(rr.privacy_loss()).unwrap().samples(500_000).seed(44);
    let report = audit
        .audit_with_draw_count(
            |r| i64::from(rr.release(true, r)),
            |r| i64::from(rr.release(false, r)),
        )
        .unwrap();
    println!("RandomizedResponse(ε = 1), (report, words):\n{report}");
    assert_eq!(report.verdict, Verdict::Pass, "{report}");

    let kary = KaryRandomizedResponse::new(4, 1.0).unwrap();
    let report = Auditor::new(kary.privacy_loss())
        .unwrap()
        .samples(500_000)
        .seed(45)
        .audit_with_draw_count(
            |r| kary.release(0, r).unwrap() as i64,
            |r| kary.release(1, r).unwrap() as i64,
        )
        .unwrap();
    println!("KaryRandomizedResponse(k = 4, ε = 1), (report, words):\n{report}");
    assert_eq!(report.verdict, Verdict::Pass, "{report}");

    let factory = |truth: bool, rng: &mut Counted<'_>| -> i64 {
        loop {
            if bernoulli_ratio(rng, 1, 2).unwrap() {
                return i64::from(truth);
            }
            if looping_bernoulli_exp_neg(1, 1, rng) {
                return i64::from(!truth);
            }
        }
    };
    let report = audit
        .audit_with_draw_count(|r| factory(true, r), |r| factory(false, r))
        .unwrap();
    println!("looping Bernoulli factory, (report, words):\n{report}");
    assert_eq!(report.verdict, Verdict::Fail, "{report}");
}
