//! How the statistics layer reads records (design §3.6, issue 11 items 1–2):
//!
//! * sums are exact and order-independent, so neighbouring datasets whose *float* sums
//!   differ by more than the sensitivity (Casacuberta et al. 2022) release values that
//!   differ by at most the sensitivity plus one grid step, and the audit still passes;
//! * no record — NaN, ±∞, `f64::MAX`, anywhere — makes a release fail: each is mapped
//!   by the documented rule, the release is charged, and it draws as many random words
//!   as a release on clean data of the same length.

use dpmech::audit::{Auditor, CountingRng, Verdict};
use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{Bounds, MeanMethod, Release, mean, sum};
use dpmech::{Accountant, Laplace};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

/// A sandbox budget under substitution, so that releases stated for either relation
/// can be charged to it (add/remove ones count double).
fn unlimited() -> Accountant {
    Accountant::pure(1e12)
        .unwrap()
        .with_relation(Neighbouring::Substitute)
}

/// 2048 records of 1.0, then 1000 of 3·2⁻⁴²: adding 3·2⁻⁴² to a float sum near 2048
/// (ulp 2⁻⁴¹) rounds to 2⁻⁴⁰, near 2047 (ulp 2⁻⁴²) it is exact. So the float sums of
/// `D` and of `D` minus its first record differ by `1 + 250·2⁻⁴⁰`, more than the
/// sensitivity 1 of a sum clamped to [−1, 1].
fn float_sum_attack() -> (Vec<f64>, Vec<f64>) {
    let tiny = 3.0 * 2f64.powi(-42);
    let mut d = vec![1.0; 2048];
    d.extend(std::iter::repeat_n(tiny, 1000));
    let d_prime = d[1..].to_vec();
    (d, d_prime)
}

fn sum_at(values: &[f64], seed: u64) -> f64 {
    sum(
        &unlimited(),
        values,
        (-1.0, 1.0),
        Neighbouring::AddRemove,
        1.0,
        &mut ChaCha20Rng::seed_from_u64(seed),
    )
    .unwrap()
    .value
}

#[test]
fn neighbouring_sums_move_by_at_most_the_sensitivity() {
    let (d, d_prime) = float_sum_attack();
    let float_gap = d.iter().sum::<f64>() - d_prime.iter().sum::<f64>();
    assert!(float_gap > 1.0, "the attack pair is real: float gap {float_gap}");
    let g = Laplace::new(1.0, 1.0).unwrap().granularity();
    for seed in 0..20 {
        // The same seed draws the same noise: the gap is the statistic's own.
        let gap = sum_at(&d, seed) - sum_at(&d_prime, seed);
        assert!(gap.abs() <= 1.0 + g, "seed {seed}: released gap {gap} > Δ + g");
    }
}

#[test]
fn the_order_of_records_does_not_change_the_release() {
    let (mut d, _) = float_sum_attack();
    let forward = sum_at(&d, 7);
    d.reverse();
    assert_eq!(sum_at(&d, 7), forward);
    // The float sums of the two orders differ by 250 grid steps.
    let mut shuffled = d.clone();
    shuffled.rotate_left(1500);
    assert_eq!(sum_at(&shuffled, 7), forward);
}

#[test]
fn audit_of_sum_on_the_float_attack_pair_passes() {
    let (d, d_prime) = float_sum_attack();
    let accountant = unlimited();
    let release = |data: &[f64], rng: &mut ChaCha20Rng| {
        sum(&accountant, data, (-1.0, 1.0), Neighbouring::AddRemove, 1.0, rng)
            .unwrap()
            .value
    };
    let report = Auditor::pure(1.0)
        .unwrap()
        .samples(100_000)
        .seed(11)
        .audit_real(|r| release(&d, r), |r| release(&d_prime, r))
        .unwrap();
    println!("sum on the float-attack pair: {report}");
    assert_eq!(report.verdict, Verdict::Pass, "{report}");
}

const SPECIALS: [f64; 7] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    f64::MIN,
    1e308,
    -f64::MIN_POSITIVE,
];

/// Every release that reads `f64` records, at bounds [−1, 3] and ε = 0.5.
fn releases(
    values: &[f64],
    accountant: &Accountant,
    rng: &mut CountingRng<ChaCha20Rng>,
) -> Vec<Release<f64>> {
    let bounds = (-1.0, 3.0);
    let mut out = Vec::new();
    for relation in [Neighbouring::AddRemove, Neighbouring::Substitute] {
        out.push(sum(accountant, values, bounds, relation, 0.5, rng).unwrap());
    }
    for method in [
        MeanMethod::NoisySumOverNoisyCount,
        MeanMethod::ClampedSumOverPublicCount,
        MeanMethod::Normalised,
    ] {
        out.push(mean(accountant, values, bounds, method, 0.5, rng).unwrap());
    }
    out
}

#[test]
fn special_records_anywhere_are_read_by_the_rule_and_charged() {
    let clean = [0.5, 2.0, -0.25, 1.0, 0.0];
    for special in SPECIALS {
        for position in 0..clean.len() {
            let mut dirty = clean;
            dirty[position] = special;
            // The documented rule: NaN → midpoint 1, then clamp to [−1, 3].
            let mut read = clean;
            read[position] = Bounds::new(-1.0, 3.0).unwrap().read(special);
            let accountant = unlimited();
            let mut rng_dirty = CountingRng::new(ChaCha20Rng::seed_from_u64(5));
            let mut rng_read = CountingRng::new(ChaCha20Rng::seed_from_u64(5));
            let mut rng_clean = CountingRng::new(ChaCha20Rng::seed_from_u64(5));
            let dirty_releases = releases(&dirty, &accountant, &mut rng_dirty);
            assert_eq!(
                accountant.charges(),
                5,
                "{special} at {position}: every release charged"
            );
            // Five releases at ε = 0.5 on a substitution budget: the three stated for
            // add/remove count double (group privacy), the two for substitution once.
            let spent = accountant.spent().epsilon().unwrap();
            assert!((4.0..=4.0 + 1e-12).contains(&spent), "{spent}");
            let read_releases = releases(&read, &unlimited(), &mut rng_read);
            let _ = releases(&clean, &unlimited(), &mut rng_clean);
            let values = |r: &[Release<f64>]| r.iter().map(|x| x.value).collect::<Vec<_>>();
            assert_eq!(
                values(&dirty_releases),
                values(&read_releases),
                "{special} at {position}"
            );
            assert_eq!(
                rng_dirty.draws(),
                rng_clean.draws(),
                "{special} at {position}: draws"
            );
        }
    }
    // A caller-chosen imputation value is used instead of the midpoint.
    let bounds = Bounds::new(-1.0, 3.0).unwrap().impute_nan(-1.0).unwrap();
    let accountant = unlimited();
    let nan = sum(
        &accountant,
        &[f64::NAN],
        bounds,
        Neighbouring::AddRemove,
        0.5,
        &mut ChaCha20Rng::seed_from_u64(1),
    )
    .unwrap();
    let minus_one = sum(
        &accountant,
        &[-1.0],
        bounds,
        Neighbouring::AddRemove,
        0.5,
        &mut ChaCha20Rng::seed_from_u64(1),
    )
    .unwrap();
    assert_eq!(nan.value, minus_one.value);
}

#[test]
fn huge_clamped_totals_do_not_fail() {
    // Bounds near f64::MAX (with an ε large enough for a supported noise scale): the
    // float sum of the clamped records overflows to ∞ and used to be refused; the exact
    // sum does not overflow.
    let epsilon = 1e60;
    let accountant = Accountant::pure(1e61).unwrap();
    let values = vec![f64::MAX; 1000];
    let bounds = (-1e307, 1e307);
    let release = sum(
        &accountant,
        &values,
        bounds,
        Neighbouring::AddRemove,
        epsilon,
        &mut ChaCha20Rng::seed_from_u64(2),
    )
    .unwrap();
    // At this absurd ε the grid's own public clamp (2¹⁰⁰ grid units a record, below
    // 10³⁰⁷) binds first; the release is still a positive number, not an error.
    assert!(release.value > 0.0, "{}", release.value);
    let m = mean(
        &accountant,
        &values,
        bounds,
        MeanMethod::Normalised,
        epsilon,
        &mut ChaCha20Rng::seed_from_u64(2),
    )
    .unwrap();
    assert!((-1e307..=1e307).contains(&m.value), "{}", m.value);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, rng_seed: RngSeed::Fixed(0x5EED_0001), ..ProptestConfig::default() })]
    #[test]
    fn any_records_give_a_release(values in prop::collection::vec(any::<f64>(), 0..40), seed in any::<u64>()) {
        let accountant = unlimited();
        let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(seed));
        for release in releases(&values, &accountant, &mut rng) {
            prop_assert!(!release.value.is_nan());
        }
        prop_assert_eq!(accountant.charges(), 5);
    }
}
