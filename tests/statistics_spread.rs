//! Private bounds, variance / standard deviation and counts of privacy units: audits at
//! the claimed ε beside negative controls that FAIL, fixed-seed distribution tests, draw
//! counts that do not depend on the data, and bad input.

use crate::common;

use crate::common::{ALPHA, Counting, chi_square, discrete_laplace_fit, merge_small_bins};
use dpmech::audit::{AuditReport, Auditor, CountingRng};
use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{ApproxBounds, UnitCount, Variance, approx_bounds, variance};
use dpmech::{Accountant, Error, Geometric, Laplace, PrivacyLoss};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use statrs::distribution::{ContinuousCDF, Normal};

/// The two-sided normal critical value at the suite's α.
fn z() -> f64 {
    Normal::new(0.0, 1.0).unwrap().inverse_cdf(1.0 - ALPHA / 2.0)
}

/// Prints an audit and checks its verdict: an honest release passes (so it certifies no
/// more than it claims), a negative control fails.
fn verdict(what: &str, report: &AuditReport, honest: bool) {
    println!("{what}:\n{report}");
    assert_eq!(report.passed(), honest, "{what}:\n{report}");
}

/// What `release` returns on a generator seeded with `seed`, and the words it drew.
fn drawn<T>(seed: u64, release: impl FnOnce(&mut Counting<ChaCha20Rng>) -> T) -> (T, u64) {
    let mut rng = Counting {
        inner: ChaCha20Rng::seed_from_u64(seed),
        words: 0,
    };
    let out = release(&mut rng);
    (out, rng.words)
}

/// Chi-square of integer samples against the discrete Gaussian of variance parameter
/// `sigma2` (its pmf normalised over ±40σ, bins merged to ≥ 5 expected), and that pmf.
fn discrete_gaussian_fit(samples: &[i64], sigma2: f64) -> (common::ChiSquare, Vec<(i64, f64)>) {
    let reach = (40.0 * sigma2.sqrt()).ceil() as i64;
    let weights: Vec<f64> = (-reach..=reach)
        .map(|z| (-(z * z) as f64 / (2.0 * sigma2)).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let pmf: Vec<(i64, f64)> = (-reach..=reach).zip(weights.iter().map(|w| w / total)).collect();
    let mut observed = vec![0u64; pmf.len()];
    for &z in samples {
        observed[(z.clamp(-reach, reach) + reach) as usize] += 1;
    }
    let expected: Vec<f64> = pmf.iter().map(|p| p.1).collect();
    let (observed, expected) = merge_small_bins(&observed, &expected, samples.len() as u64, 5.0);
    (chi_square(&observed, &expected), pmf)
}

fn bits(b: dpmech::statistics::PrivateBounds) -> (u64, u64) {
    (b.lower.to_bits(), b.upper.to_bits())
}

// ---------------------------------------------------------------------------------------
// Private bounds
// ---------------------------------------------------------------------------------------

/// A small layout (26 bins) at ε = 1, and neighbours that sit exactly on the threshold:
/// `D` has `t − 1` records in `[2, 4)` (and plenty in `[1, 2)`), `D′` one more.
fn bounds_pair() -> (ApproxBounds, Vec<f64>, Vec<f64>) {
    let m = ApproxBounds::new(1, Neighbouring::AddRemove, 1.0)
        .unwrap()
        .exponents(-4, 8)
        .unwrap();
    let t = m.threshold() as usize;
    let mut d = vec![1.5; t + 20];
    d.extend(std::iter::repeat_n(3.0, t - 1));
    let mut d_prime = d.clone();
    d_prime.push(3.0);
    (m, d, d_prime)
}

#[test]
fn bounds_pass_an_audit_at_epsilon_and_an_unnoised_histogram_fails() {
    let (m, d, d_prime) = bounds_pair();
    let auditor = Auditor::new(m.privacy_loss()).unwrap().samples(200_000).seed(71);
    let report = auditor
        .audit_categorical(|r| bits(m.release(&d, r)), |r| bits(m.release(&d_prime, r)))
        .unwrap();
    verdict("ApproxBounds at ε = 1", &report, true);
    // Substitution: one record moved from [1, 2) to [2, 4), which moves two bins.
    let swapped = ApproxBounds::new(1, Neighbouring::Substitute, 1.0)
        .unwrap()
        .exponents(-4, 8)
        .unwrap();
    let mut d_swapped = d.clone();
    d_swapped[0] = 3.0;
    let report = auditor
        .audit_categorical(
            |r| bits(swapped.release(&d, r)),
            |r| bits(swapped.release(&d_swapped, r)),
        )
        .unwrap();
    verdict("ApproxBounds under substitution at ε = 1", &report, true);
    // Negative control: the same threshold on the exact counts (no noise). D gives
    // [1, 2], D′ gives [1, 4]: an infinite loss.
    let t = m.threshold() as usize;
    let unnoised = |data: &[f64], _: &mut ChaCha20Rng| -> (u64, u64) {
        let mut state = m.state();
        data.iter().for_each(|&v| state.add(v));
        let clears: Vec<usize> = (0..m.bins())
            .filter(|&i| state.counts()[i] as usize >= t)
            .collect();
        let (lo, hi) = (m.edges(clears[0]).0, m.edges(*clears.last().unwrap()).1);
        (lo.to_bits(), hi.to_bits())
    };
    let report = auditor
        .audit_categorical(|r| unnoised(&d, r), |r| unnoised(&d_prime, r))
        .unwrap();
    verdict("bounds without noise", &report, false);
}

/// A bin holding `N` records clears with probability `Pr[Z ≥ t − N]`, `Z` discrete
/// Laplace of the mechanism's scale: `1/(1+α)` at `N = t`, `α²/(1+α)` at `N = t − 2`.
/// Every other bin is empty and clears with probability at most β = 10⁻⁶ in all.
#[test]
fn a_bin_clears_with_the_probability_of_its_noise() {
    let m = ApproxBounds::new(1, Neighbouring::AddRemove, 0.5).unwrap();
    let t = m.threshold();
    let alpha = (-1.0 / m.scale()).exp();
    let runs = 40_000u64;
    let mut rng = ChaCha20Rng::seed_from_u64(7200);
    for (records, p) in [(t, 1.0 / (1.0 + alpha)), (t - 2, alpha * alpha / (1.0 + alpha))] {
        let data = vec![100.0; records as usize]; // the bin [64, 128)
        let mut hits = 0u64;
        for _ in 0..runs {
            let b = m.release(&data, &mut rng);
            hits += u64::from(b.cleared && (b.lower, b.upper) == (64.0, 128.0));
        }
        let (mean, sd) = (p * runs as f64, (p * (1.0 - p) * runs as f64).sqrt());
        println!("N = {records} (t = {t}): {hits} of {runs} cleared, expected {mean:.0} ± {sd:.0}");
        assert!(
            (hits as f64 - mean).abs() <= z() * sd + 1e-6 * runs as f64,
            "{hits} vs {mean}"
        );
    }
}

#[test]
fn bounds_cover_a_skewed_column_and_fall_back_on_empty_data() {
    let accountant = Accountant::pure(10.0).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(7300);
    // Log-normal-like durations: e^(N(4, 1)) seconds, clamped to an hour, plus junk.
    let normal = Normal::new(4.0, 1.0).unwrap();
    let mut durations: Vec<f64> = (1..100_000)
        .map(|i| normal.inverse_cdf(f64::from(i) / 100_000.0).exp().min(3600.0))
        .collect();
    durations.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 1e308]);
    let found = approx_bounds(&accountant, &durations, 1, Neighbouring::AddRemove, 1.0, &mut rng).unwrap();
    println!("bounds of 10⁵ durations: {:?}", found.value);
    assert!(found.value.cleared);
    assert_eq!(found.privacy_loss, PrivacyLoss::pure(1.0).unwrap());
    // What the bounds promise, each with probability ≥ 1 − β: no empty bin clears (so
    // both ends are edges of bins that hold records), and every bin holding at least
    // 2t records clears (it fails only if its noise is ≤ −t).
    let m = ApproxBounds::new(1, Neighbouring::AddRemove, 1.0).unwrap();
    let mut state = m.state();
    durations.iter().for_each(|&v| state.add(v));
    let t = m.threshold() as u64;
    let (lower, upper) = (found.value.lower, found.value.upper);
    for (i, &c) in state.counts().iter().enumerate() {
        let (lo, hi) = m.edges(i);
        if c >= 2 * t {
            assert!(
                lower <= lo && hi <= upper,
                "bin {lo}..{hi} with {c} records outside"
            );
        }
        if lo == lower || hi == upper {
            assert!(c > 0, "the empty bin {lo}..{hi} cleared");
        }
    }
    assert!(
        (0.0..=2.0).contains(&lower) && (1024.0..=4096.0).contains(&upper),
        "{lower} {upper}"
    );
    // Empty data: nothing clears (but with probability ≤ β), the public range comes back.
    let empty = approx_bounds(&accountant, &[], 1, Neighbouring::AddRemove, 1.0, &mut rng).unwrap();
    assert!(!empty.value.cleared);
    assert_eq!(
        (empty.value.lower, empty.value.upper),
        (-(2f64.powi(64)), 2f64.powi(64))
    );
    let b = empty.value.to_bounds();
    assert!(dpmech::statistics::Bounds::new(b.lower(), b.upper()).is_ok());
    // Only special records: no error either.
    approx_bounds(
        &accountant,
        &[f64::NAN; 50],
        1,
        Neighbouring::AddRemove,
        1.0,
        &mut rng,
    )
    .unwrap();
}

#[test]
fn bounds_draw_the_same_words_whatever_the_data() {
    let (m, d, d_prime) = bounds_pair();
    for seed in 0..200 {
        let (_, a) = drawn(seed, |r| m.release(&d, r));
        let (_, b) = drawn(seed, |r| m.release(&[], r));
        assert_eq!(a, b, "seed {seed}");
    }
    let report = Auditor::new(m.privacy_loss())
        .unwrap()
        .samples(100_000)
        .seed(74)
        .audit_with_draw_count(|r| bits(m.release(&d, r)), |r| bits(m.release(&d_prime, r)))
        .unwrap();
    verdict("bounds (output, words drawn)", &report, true);
}

// ---------------------------------------------------------------------------------------
// Variance and standard deviation
// ---------------------------------------------------------------------------------------

/// Ten records at the midpoint of [−10, 10] versus the same plus one at the upper bound:
/// `S₂` moves by the full `h² = 100`.
fn variance_pair() -> (Vec<f64>, Vec<f64>) {
    let d = vec![0.0; 10];
    let mut d_prime = d.clone();
    d_prime.push(10.0);
    (d, d_prime)
}

#[test]
fn variance_passes_an_audit_at_epsilon_and_ignoring_the_square_term_fails() {
    let (d, d_prime) = variance_pair();
    let epsilon = 1.0;
    let m = Variance::new((-10.0, 10.0), 1, Neighbouring::AddRemove, epsilon).unwrap();
    let auditor = Auditor::pure(epsilon).unwrap().samples(200_000).seed(81);
    let report = auditor
        .audit_real(|r| m.release(&d, r).variance, |r| m.release(&d_prime, r).variance)
        .unwrap();
    verdict("variance at ε = 1", &report, true);
    // Under substitution (one record moved from the midpoint to the upper bound; the
    // count is unchanged), the standard deviation, stated for substitution.
    let swapped = Variance::new((-10.0, 10.0), 1, Neighbouring::Substitute, epsilon).unwrap();
    let mut d_swapped = d.clone();
    d_swapped[0] = 10.0;
    let report = auditor
        .audit_real(
            |r| swapped.release(&d, r).std_dev,
            |r| swapped.release(&d_swapped, r).std_dev,
        )
        .unwrap();
    verdict("standard deviation under substitution at ε = 1", &report, true);
    // Negative control: the same three moments, but the sum of squares calibrated to
    // the sensitivity of the sum (h = 10) instead of h² = 100.
    let count = Geometric::new(1, epsilon / 3.0).unwrap();
    let sum = Laplace::new(10.0, epsilon / 3.0).unwrap();
    let squares = Laplace::new(10.0, epsilon / 3.0).unwrap();
    let careless = |data: &[f64], r: &mut ChaCha20Rng| -> f64 {
        let n = count.release(data.len() as i64, r) as f64;
        let s1 = sum.release(data.iter().sum(), r).unwrap();
        let s2 = squares.release(data.iter().map(|y| y * y).sum(), r).unwrap();
        if n <= 1.0 {
            0.0
        } else {
            (s2 / n - (s1 / n).powi(2)).clamp(0.0, 100.0)
        }
    };
    let report = auditor
        .audit_real(|r| careless(&d, r), |r| careless(&d_prime, r))
        .unwrap();
    verdict(
        "variance with the square term's sensitivity ignored",
        &report,
        false,
    );
}

#[test]
fn the_noisy_count_of_a_variance_is_discrete_laplace_of_its_scale() {
    let m = Variance::new((0.0, 5.0), 2, Neighbouring::Substitute, 0.75).unwrap();
    let (tau, _, _) = m.scales();
    assert!((8.0..8.0 * (1.0 + 1e-9)).contains(&tau), "{tau}"); // c/(ε/3)
    let data: Vec<f64> = (0..500).map(|i| f64::from(i % 6)).collect();
    let mut rng = ChaCha20Rng::seed_from_u64(8200);
    let samples: Vec<i128> = (0..100_000)
        .map(|_| i128::from(m.release(&data, &mut rng).count) - 500)
        .collect();
    let fit = discrete_laplace_fit(&samples, tau);
    println!(
        "variance's count noise: χ² = {:.1} (critical {:.1})",
        fit.statistic, fit.critical
    );
    assert!(fit.passes(), "{fit:?}");
}

/// The zCDP variance: its count noise is the discrete Gaussian of `σ² = c²/(2ρ/3)`, it
/// passes an audit at its converted (ε, δ), and its intervals cover.
#[test]
fn zcdp_variance_has_its_noise_passes_an_audit_and_covers() {
    let m = Variance::zcdp((-10.0, 10.0), 1, Neighbouring::AddRemove, 0.375).unwrap();
    assert_eq!(m.privacy_loss(), PrivacyLoss::zcdp(0.375).unwrap());
    let mut rng = ChaCha20Rng::seed_from_u64(8400);
    let data = vec![2.5; 50];
    let samples: Vec<i64> = (0..100_000)
        .map(|_| m.release(&data, &mut rng).count - 50)
        .collect();
    let (fit, _) = discrete_gaussian_fit(&samples, 4.0); // 1/(2·0.125)
    println!(
        "zCDP variance's count noise: χ² = {:.1} (critical {:.1})",
        fit.statistic, fit.critical
    );
    assert!(fit.passes(), "{fit:?}");
    let (d, d_prime) = variance_pair();
    let delta = 1e-6;
    let epsilon = dpmech::composition::zcdp::epsilon_tight(0.375, delta).unwrap();
    let report = Auditor::approximate(epsilon, delta)
        .unwrap()
        .samples(200_000)
        .seed(84)
        .audit_real(|r| m.release(&d, r).variance, |r| m.release(&d_prime, r).variance)
        .unwrap();
    verdict(
        &format!("zCDP variance, ρ = 0.375 as ({epsilon:.3}, {delta})"),
        &report,
        true,
    );
    let (runs, beta) = (2_000u32, 0.2);
    let sharp = Variance::zcdp((0.0, 60.0), 1, Neighbouring::AddRemove, 2.0).unwrap();
    let values: Vec<f64> = (0..300).map(|i| f64::from(i % 61)).collect();
    let mean = values.iter().sum::<f64>() / 300.0;
    let truth = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 300.0;
    let misses = (0..runs)
        .filter(|_| {
            let release = sharp.release(&values, &mut rng);
            let (lo, hi) = release.variance_interval(beta).unwrap();
            assert!(lo <= release.variance && release.variance <= hi, "{release:?}");
            !(lo..=hi).contains(&truth)
        })
        .count();
    let tolerance = z() * (beta * (1.0 - beta) / f64::from(runs)).sqrt();
    println!("zCDP variance {truth:.1}: {beta} intervals missed {misses} of {runs}");
    assert!(misses as f64 / f64::from(runs) <= beta + tolerance);
}

#[test]
fn variance_intervals_cover_the_truth_at_least_one_minus_beta() {
    let (runs, beta) = (5_000u32, 0.2);
    // Exponential-ish waits clamped to [0, 60].
    let data: Vec<f64> = (1..=400).map(|i| -8.0 * (f64::from(i) / 401.0).ln()).collect();
    let clamped: Vec<f64> = data.iter().map(|v| v.clamp(0.0, 60.0)).collect();
    let n = clamped.len() as f64;
    let mean = clamped.iter().sum::<f64>() / n;
    let truth = clamped.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let m = Variance::new((0.0, 60.0), 1, Neighbouring::AddRemove, 2.0).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(8300);
    let (mut var_misses, mut sd_misses, mut width) = (0u32, 0u32, 0.0);
    for _ in 0..runs {
        let release = m.release(&data, &mut rng);
        let (lo, hi) = release.variance_interval(beta).unwrap();
        assert!(lo <= release.variance && release.variance <= hi, "{release:?}");
        var_misses += u32::from(!(lo..=hi).contains(&truth));
        let (lo, hi) = release.std_dev_interval(beta).unwrap();
        sd_misses += u32::from(!(lo..=hi).contains(&truth.sqrt()));
        width += (hi - lo) / f64::from(runs);
    }
    let tolerance = z() * (beta * (1.0 - beta) / f64::from(runs)).sqrt();
    println!(
        "variance {truth:.2} (sd {:.2}): {beta} intervals missed {var_misses} and {sd_misses} of {runs}; mean sd width {width:.2}",
        truth.sqrt()
    );
    assert!(f64::from(var_misses) / f64::from(runs) <= beta + tolerance);
    assert!(f64::from(sd_misses) / f64::from(runs) <= beta + tolerance);
    // A large ε: the release is close to the truth.
    let sharp = Variance::new((0.0, 60.0), 1, Neighbouring::AddRemove, 1e4).unwrap();
    let release = sharp.release(&data, &mut rng);
    assert!(
        (release.variance - truth).abs() < 1e-3 * truth,
        "{} vs {truth}",
        release.variance
    );
    assert!((release.mean - mean).abs() < 1e-3, "{} vs {mean}", release.mean);
}

#[test]
fn variance_draws_the_same_words_whatever_the_data_and_never_fails_on_records() {
    let pure = Variance::new((-1.0, 1.0), 3, Neighbouring::AddRemove, 0.5).unwrap();
    let zcdp = Variance::zcdp((-1.0, 1.0), 3, Neighbouring::AddRemove, 0.5).unwrap();
    let junk = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e308,
        -1e-320,
        -0.0,
        0.5,
    ];
    for (seed, m) in (0..400).zip([&pure, &zcdp].into_iter().cycle()) {
        let (x, a) = drawn(seed, |r| m.release(&junk, r));
        let (y, b) = drawn(seed, |r| m.release(&[], r));
        assert_eq!(a, b, "seed {seed}");
        for s in [&x, &y] {
            assert!((0.0..=1.0).contains(&s.variance) && (0.0..=1.0).contains(&s.std_dev));
            assert!((-1.0..=1.0).contains(&s.mean));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Counts of privacy units
// ---------------------------------------------------------------------------------------

/// `(unit, group)` pairs.
type Pairs = Vec<(u32, u32)>;

/// Five units in group 0; `D′` adds a sixth unit present in groups 0, 1 and 2.
fn unit_pairs() -> (Pairs, Pairs) {
    let d: Vec<(u32, u32)> = (1..=5).map(|u| (u, 0)).collect();
    let mut d_prime = d.clone();
    d_prime.extend([(6, 0), (6, 1), (6, 1), (6, 2)]);
    (d, d_prime)
}

/// The smallest shift of the three cells over their counts under `D`, clipped to
/// `[−8, 8]`: a post-processing under which a unit's moves add up.
fn smallest_shift(cells: &[i64]) -> i64 {
    (cells[0] - 5).min(cells[1]).min(cells[2]).clamp(-8, 8)
}

#[test]
fn unit_counts_pass_an_audit_at_epsilon_and_ignoring_l0_fails() {
    let (d, d_prime) = unit_pairs();
    let keys = [0, 1, 2];
    let epsilon = 0.5;
    let honest = UnitCount::pure(3, Neighbouring::AddRemove, epsilon).unwrap();
    let auditor = Auditor::pure(epsilon).unwrap().samples(200_000).seed(91);
    let report = auditor
        .audit(
            |r| smallest_shift(&honest.release_groups(&d, &keys, r)),
            |r| smallest_shift(&honest.release_groups(&d_prime, &keys, r)),
        )
        .unwrap();
    verdict(&format!("unit counts, L0 = 3, ε = {epsilon}"), &report, true);
    // Bounding to L0 = 1 keeps the guarantee with a per-cell calibration of 1.
    let bounded = UnitCount::pure(1, Neighbouring::AddRemove, epsilon).unwrap();
    let report = auditor
        .audit(
            |r| smallest_shift(&bounded.release_groups(&d, &keys, r)),
            |r| smallest_shift(&bounded.release_groups(&d_prime, &keys, r)),
        )
        .unwrap();
    assert!(report.passed(), "{report}");
    // Negative control: distinct units per group with no bound on groups per unit and
    // noise calibrated for one cell: unit 6 moves three cells, a loss of 3ε.
    let careless_noise = Geometric::new(1, epsilon).unwrap();
    let careless = |pairs: &[(u32, u32)], r: &mut ChaCha20Rng| -> i64 {
        let cells: Vec<i64> = keys
            .iter()
            .map(|k| {
                let units: std::collections::HashSet<u32> =
                    pairs.iter().filter(|p| p.1 == *k).map(|p| p.0).collect();
                careless_noise.release(units.len() as i64, r)
            })
            .collect();
        smallest_shift(&cells)
    };
    let report = auditor
        .audit(|r| careless(&d, r), |r| careless(&d_prime, r))
        .unwrap();
    verdict("unit counts ignoring L0", &report, false);
}

#[test]
fn zcdp_unit_counts_pass_an_audit_at_their_converted_epsilon() {
    let (d, d_prime) = unit_pairs();
    let keys = [0, 1, 2];
    let (rho, delta) = (0.5, 1e-6);
    let m = UnitCount::zcdp(3, Neighbouring::AddRemove, rho).unwrap();
    let epsilon = dpmech::composition::zcdp::epsilon_tight(rho, delta).unwrap();
    let report = Auditor::approximate(epsilon, delta)
        .unwrap()
        .samples(200_000)
        .seed(92)
        .audit(
            |r| smallest_shift(&m.release_groups(&d, &keys, r)),
            |r| smallest_shift(&m.release_groups(&d_prime, &keys, r)),
        )
        .unwrap();
    verdict(
        &format!("unit counts, zCDP ρ = {rho} as ({epsilon:.3}, {delta})-DP"),
        &report,
        true,
    );
}

/// The two-sided acceptance region `[lo, hi]` of `X ~ Binomial(n, p)` at level `alpha`
/// (each tail at most `alpha/2`), from the exact tails.
fn binomial_region(n: u64, p: f64, alpha: f64) -> (u64, u64) {
    let mean = (n as f64 * p) as u64;
    let hi = (mean..=n)
        .find(|&c| dpmech::audit::upper_tail(n, c, p).unwrap() <= alpha / 2.0)
        .unwrap_or(n + 1);
    let lo = (0..=mean)
        .rev()
        .find(|&c| dpmech::audit::lower_tail(n, c, p).unwrap() <= alpha / 2.0)
        .map_or(0, |c| c + 1);
    (lo, hi - 1)
}

/// Issue 42 §6: a unit in `d > L0` keys keeps each of them with probability `L0/d`
/// (a keyed random choice), not its `L0` smallest keys. `n` units are each in the same
/// `d` keys; with `ε = 10⁶` the noise is 0 (except with probability ~e^(−10⁶/6)), so
/// each cell is `Binomial(n, L0/d)` and every unit counts exactly `L0` times. Each of the
/// `d` cells of each seed is tested two-sided at `α = ALPHA/(2d)` (exact binomial
/// tails; by Bonferroni, a correct bounding fails one seed's checks of both populations
/// with probability at most `ALPHA`), `n = 20 000`, seeds 4201–4203.
/// Keeping the smallest keys gives cells `n, n, n, 0, …`: far outside every region.
#[test]
fn unit_counts_keep_each_key_with_probability_l0_over_d() {
    let n = 20_000u32;
    let l0 = 3u64;
    let exact = UnitCount::pure(l0, Neighbouring::AddRemove, 1e6).unwrap();
    // Two populations: units in all 10 keys (each kept with probability 3/10), and
    // units in the last 4 keys listed in reverse order (3/4).
    let ten: Vec<u32> = (0..10).collect();
    let four: Vec<u32> = vec![9, 8, 7, 6];
    for (keys, in_keys) in [(ten.clone(), ten.clone()), (four.clone(), four.clone())] {
        let d = in_keys.len() as u64;
        let p = l0 as f64 / d as f64;
        let (lo, hi) = binomial_region(u64::from(n), p, ALPHA / (2.0 * d as f64));
        let pairs: Vec<(u32, u32)> = (0..n)
            .flat_map(|u| in_keys.iter().map(move |&k| (u, k)))
            .collect();
        for seed in 4201..=4203 {
            let cells = exact.release_groups(&pairs, &keys, &mut ChaCha20Rng::seed_from_u64(seed));
            println!("d = {d}, L0 = {l0}, seed {seed}: cells {cells:?}, region [{lo}, {hi}]");
            assert_eq!(cells.iter().sum::<i64>(), i64::from(n) * l0 as i64, "{cells:?}");
            for (k, &c) in cells.iter().enumerate() {
                assert!(
                    (lo as i64..=hi as i64).contains(&c),
                    "key {k}: {c} outside [{lo}, {hi}] (d = {d}, seed {seed})"
                );
            }
        }
    }
}

#[test]
fn unit_count_noise_has_its_distribution() {
    let mut rng = ChaCha20Rng::seed_from_u64(9300);
    let runs = 100_000;
    // Pure: discrete Laplace of scale L0/ε = 4.
    let pure = UnitCount::pure(2, Neighbouring::AddRemove, 0.5).unwrap();
    let samples: Vec<i128> = (0..runs)
        .map(|_| i128::from(pure.release_from_state(40, &mut rng)) - 40)
        .collect();
    let fit = discrete_laplace_fit(&samples, 4.0);
    println!(
        "pure unit count: χ² = {:.1} (critical {:.1})",
        fit.statistic, fit.critical
    );
    assert!(fit.passes(), "{fit:?}");
    // zCDP: discrete Gaussian of σ² = 2·L0/(2ρ) = 2·2/(2·0.25) = 8 under substitution.
    let gaussian = UnitCount::zcdp(2, Neighbouring::Substitute, 0.25).unwrap();
    let samples: Vec<i64> = (0..runs)
        .map(|_| gaussian.release_from_state(7, &mut rng) - 7)
        .collect();
    let (fit, pmf) = discrete_gaussian_fit(&samples, 8.0);
    println!(
        "zCDP unit count: χ² = {:.1} (critical {:.1})",
        fit.statistic, fit.critical
    );
    assert!(fit.passes(), "{fit:?}");
    // Its half-width holds: Pr[|Z| > w] ≤ β.
    let w = gaussian.confidence_half_width(0.05).unwrap();
    let tail: f64 = pmf
        .iter()
        .filter(|(z, _)| z.unsigned_abs() > w)
        .map(|(_, p)| p)
        .sum();
    assert!(tail <= 0.05, "{w}: {tail}");
}

#[test]
fn unit_counts_draw_the_same_words_whatever_the_data() {
    let (d, d_prime) = unit_pairs();
    for m in [
        UnitCount::pure(2, Neighbouring::AddRemove, 1.0).unwrap(),
        UnitCount::zcdp(2, Neighbouring::AddRemove, 1.0).unwrap(),
    ] {
        for seed in 0..200 {
            let (_, a) = drawn(seed, |r| m.release_groups(&d, &[0, 1, 2], r));
            let (_, b) = drawn(seed, |r| m.release_groups(&d_prime, &[0, 1, 2], r));
            assert_eq!(a, b, "seed {seed}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Bad parameters: typed errors before any charge or draw
// ---------------------------------------------------------------------------------------

#[test]
fn bad_parameters_are_refused_before_anything_is_charged_or_drawn() {
    let accountant = Accountant::pure(10.0).unwrap();
    let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(1));
    let data = [1.0, 2.0, f64::NAN];
    for epsilon in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let got = approx_bounds(&accountant, &data, 1, Neighbouring::AddRemove, epsilon, &mut rng);
        assert!(matches!(got, Err(Error::InvalidEpsilon { .. })), "{got:?}");
        let got = variance(
            &accountant,
            &data,
            (0.0, 1.0),
            1,
            Neighbouring::AddRemove,
            epsilon,
            &mut rng,
        );
        assert!(matches!(got, Err(Error::InvalidEpsilon { .. })), "{got:?}");
        assert!(matches!(
            UnitCount::pure(1, Neighbouring::AddRemove, epsilon),
            Err(Error::InvalidEpsilon { .. })
        ));
        assert!(matches!(
            UnitCount::zcdp(1, Neighbouring::AddRemove, epsilon),
            Err(Error::InvalidRho { .. })
        ));
        assert!(matches!(
            Variance::zcdp((0.0, 1.0), 1, Neighbouring::AddRemove, epsilon),
            Err(Error::InvalidRho { .. })
        ));
    }
    for bounds in [(1.0, 1.0), (2.0, 1.0), (f64::NAN, 1.0), (0.0, f64::INFINITY)] {
        let got = variance(
            &accountant,
            &data,
            bounds,
            1,
            Neighbouring::AddRemove,
            1.0,
            &mut rng,
        );
        assert!(
            matches!(got, Err(Error::InvalidParameter { .. })),
            "{bounds:?}: {got:?}"
        );
    }
    let got = variance(
        &accountant,
        &data,
        (0.0, 1.0),
        0,
        Neighbouring::AddRemove,
        1.0,
        &mut rng,
    );
    assert!(matches!(got, Err(Error::InvalidSensitivity { .. })), "{got:?}");
    let got = approx_bounds(&accountant, &data, 0, Neighbouring::AddRemove, 1.0, &mut rng);
    assert!(matches!(got, Err(Error::InvalidSensitivity { .. })), "{got:?}");
    assert!(matches!(
        ApproxBounds::new(1, Neighbouring::AddRemove, 1.0)
            .unwrap()
            .exponents(5, 2),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        ApproxBounds::new(1, Neighbouring::AddRemove, 1.0)
            .unwrap()
            .failure_probability(1.0),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        UnitCount::pure(0, Neighbouring::AddRemove, 1.0),
        Err(Error::InvalidParameter { .. })
    ));
    assert_eq!((accountant.charges(), rng.draws()), (0, 0));
    // An overspend is refused by the accountant, also before anything is drawn.
    approx_bounds(&accountant, &data, 1, Neighbouring::AddRemove, 6.0, &mut rng).unwrap();
    let drawn = rng.draws();
    let got = variance(
        &accountant,
        &data,
        (0.0, 1.0),
        1,
        Neighbouring::AddRemove,
        6.0,
        &mut rng,
    );
    assert!(matches!(got, Err(Error::BudgetExceeded { .. })), "{got:?}");
    assert_eq!((accountant.charges(), rng.draws()), (1, drawn));
    // A substitution budget counts an add/remove release twice.
    let substitute = Accountant::pure(10.0)
        .unwrap()
        .with_relation(Neighbouring::Substitute);
    variance(
        &substitute,
        &data,
        (0.0, 1.0),
        1,
        Neighbouring::AddRemove,
        1.0,
        &mut rng,
    )
    .unwrap();
    variance(
        &substitute,
        &data,
        (0.0, 1.0),
        1,
        Neighbouring::Substitute,
        1.0,
        &mut rng,
    )
    .unwrap();
    assert_eq!(substitute.spent(), PrivacyLoss::pure(3.0).unwrap());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 300,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5EED_5003),
        ..proptest::prelude::ProptestConfig::default()
    })]
    /// Any records and any valid parameters give a release (never an error, never a
    /// panic), within the documented ranges; invalid parameters give a typed error.
    #[test]
    fn any_records_and_parameters_give_a_release_or_a_typed_error(
        values in proptest::collection::vec(common::any_float(), 0..40),
        lower in common::any_float(),
        upper in common::any_float(),
        epsilon in common::any_float(),
        contributions in 0u64..4,
        seed in proptest::prelude::any::<u64>(),
    ) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let relation = Neighbouring::AddRemove;
        if let Ok(m) = ApproxBounds::new(contributions, relation, epsilon) {
            let b = m.release(&values, &mut rng);
            proptest::prop_assert!(b.lower < b.upper && b.lower.is_finite() && b.upper.is_finite());
        }
        match Variance::new((lower, upper), contributions, relation, epsilon) {
            Ok(m) => {
                let s = m.release(&values, &mut rng);
                let h2 = ((upper - lower) / 2.0).powi(2);
                proptest::prop_assert!((0.0..=h2 * (1.0 + 1e-12)).contains(&s.variance), "{s:?}");
                proptest::prop_assert!((lower..=upper).contains(&s.mean), "{s:?}");
                let (lo, hi) = s.variance_interval(0.05).unwrap();
                proptest::prop_assert!(lo <= s.variance && s.variance <= hi, "{lo} {hi} {s:?}");
            }
            Err(e) => proptest::prop_assert!(matches!(
                e,
                Error::InvalidParameter { .. }
                    | Error::InvalidEpsilon { .. }
                    | Error::InvalidSensitivity { .. }
                    | Error::ScaleOutOfRange { .. }
            ), "{e:?}"),
        }
        if let Ok(m) = UnitCount::pure(contributions, relation, epsilon) {
            m.release(&values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), &mut rng);
        }
    }
}
