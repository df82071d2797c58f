//! Unit tests of the discrete Laplace sampler: the ladder, the exponent bracket, the
//! certified tables (the premises of the fallback bound), exact agreement of the fast
//! paths with arbitrary-precision comparisons (random and planted uniforms), and the
//! laws of the trials.

use super::ladder::{
    self, RUNG_DEN, RUNGS, Rate, SLACK, UNIFORM_MIN_BITS, rung_at_least, rung_numerator, rung_table,
};
use super::*;
use crate::sampling::certified::{Big, Cdt, LOG_GUIDE_BITS, LazyUniform, exact_less_exp_neg, probe};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

/// Scales across every regime: tiny, below 1/4, rungs and non-rungs below 64, every
/// two-word layout, three-word trials, the extremes.
fn scales() -> Vec<Rational> {
    [
        (1u64, 1u64 << 62),
        (1, 3),
        (1, 2),
        (1, 1),
        (7, 1),
        (10, 1),
        (159, 10),
        (1000, 7),
        (64, 1),
        (65, 1),
        (1000, 1),
        (1_000_000, 1),
        ((1 << 26) + (1 << 25), 1),
        ((1 << 27) + 5, 1),
        ((1 << 35) + 3, 1),
        (1 << 35, 1),
        ((1 << 37) - 1, 1),
        (1 << 37, 1),
        ((1 << 40) + 3, 1),
        (u64::MAX, 1),
        (u64::MAX, u64::MAX - 1),
    ]
    .into_iter()
    .map(|(n, d)| Rational::new(n, d).unwrap())
    .collect()
}

/// The rung of `x` is the lowest rung numerator `≥ x`, by brute force over every `x`;
/// the rungs increase, start at 16 and end at 4096, consecutive ones at most 17/16 apart.
#[test]
fn rungs_are_the_lowest_at_least_x() {
    let all: Vec<u64> = (0..RUNGS).map(rung_numerator).collect();
    assert_eq!((all[0], all[RUNGS - 1]), (16, 4096));
    for w in all.windows(2) {
        assert!(w[0] < w[1] && 16 * w[1] <= 17 * w[0], "{w:?}");
    }
    for x in 1..=4096u64 {
        let expected = all.iter().position(|&p| p >= x).unwrap();
        assert_eq!(rung_at_least(x), expected, "x = {x}");
    }
}

/// `2⁶³·x·n/d − x·n/d − 1 < fixed(x) ≤ 2⁶³·x·n/d` (or the cap) against exact big-integer
/// arithmetic, for random ratios of every size and random `x`.
#[test]
fn rates_bracket_their_products() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x4A7E);
    let cap = Big::from_u128(64 << 63);
    for i in 0..200_000 {
        let n = u128::from(rng.next_u64()) << (rng.next_u64() % 13) >> (rng.next_u64() % 64) | 1;
        let d = u128::from(rng.next_u64()) << (rng.next_u64() % 13) >> (rng.next_u64() % 64) | 1;
        let x = rng.next_u64() >> (rng.next_u64() % 64);
        let rate = Rate::new(n, d);
        let e = rate.fixed(x);
        // exact = 2⁶³·x·n, compared with e·d and (e + x·n/d + 1)·d, i.e. e·d + x·n + d.
        let exact = Big::from_u128(u128::from(x)).mul(&Big::from_u128(n)).shl(63);
        let ed = Big::from_u128(e).mul(&Big::from_u128(d));
        assert!(ed.cmp(&exact).is_le(), "case {i}: {n}/{d}, x = {x}");
        if Big::from_u128(e).cmp(&cap).is_lt() {
            let upper = ed
                .add(&Big::from_u128(u128::from(x)).mul(&Big::from_u128(n)))
                .add(&Big::from_u128(d));
            assert!(exact.cmp(&upper).is_lt(), "case {i}: {n}/{d}, x = {x}");
        } else {
            assert_eq!(e, 64 << 63);
        }
    }
    assert_eq!(Rate::new(0, 5).fixed(123), 0);
}

/// A random trial's `J < j_max` and `R < 2ᵐ`.
fn random_trial(rng: &mut ChaCha20Rng, m: u32, j_max: u64) -> (u64, u64) {
    let j = rng.next_u64() % j_max;
    (
        j,
        if m == 0 {
            0
        } else {
            rng.next_u64() & (u64::MAX >> (64 - m))
        },
    )
}

/// The bracket of the acceptance exponent: `e ≤ 2⁶³·E < e + 68` below the cap, and
/// `2⁶³·E ≥ 2⁶⁹` at the cap, for random trials `(J, R)` at every scale, against the
/// exact rational `E` (and `E ≥ 0`: the reference law is never lighter).
#[test]
fn exponent_brackets_hold() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xE8);
    for scale in scales() {
        for two_sided in [true, false] {
            let law = Scaled::new(scale, two_sided);
            let m = law.block_bits;
            for _ in 0..20_000 {
                let (j, r) = random_trial(&mut rng, m, 3000);
                let (lo, hi) = law.exponent(j, r);
                let (num, den) = law.exact_exponent(j, r);
                let exact = Big::from_u128(num).shl(63);
                let den = Big::from_u128(den);
                assert!(
                    Big::from_u128(lo).mul(&den).cmp(&exact).is_le(),
                    "{scale:?} {j} {r}"
                );
                if lo < 64 << 63 {
                    assert_eq!(hi, lo + SLACK);
                    assert!(
                        exact.cmp(&Big::from_u128(hi).mul(&den)).is_lt(),
                        "{scale:?} {j} {r}"
                    );
                } else {
                    assert_eq!(hi, lo);
                }
            }
        }
    }
}

/// The block scales' 64-bit bracket: `e ≤ 2⁵⁷·E < e + 4` and `e < 2⁶¹` for random
/// trials with `J < 2¹²` (every `J` up to the limit, and `R` up to `2ᵐ − 1`), at every
/// block scale of [`scales`] and a few with `τ` just above a power of two (the largest
/// `t = τ/M`, so the largest rate `C`) and just below the next (`t` near 32), against the
/// exact rational `E`.
#[test]
fn block_exponent_brackets_hold() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xB57);
    let mut more: Vec<Rational> = [(65u64, 1u64), (129, 2), ((1 << 20) + 1, 1), ((1 << 21) - 1, 1)]
        .into_iter()
        .map(|(n, d)| Rational::new(n, d).unwrap())
        .collect();
    more.extend(scales());
    for scale in more {
        for two_sided in [true, false] {
            let law = Scaled::new(scale, two_sided);
            let m = law.block_bits;
            if m == 0 {
                continue;
            }
            for i in 0..20_000u64 {
                let (j, r) = match i {
                    0 => (ladder::BLOCK_J_LIMIT - 1, u64::MAX >> (64 - m)),
                    1 => (0, 0),
                    _ => random_trial(&mut rng, m, ladder::BLOCK_J_LIMIT),
                };
                let e = law.block_exponent(j, r);
                assert!(e < 1 << 61, "{scale:?} {j} {r}");
                let (num, den) = law.exact_exponent(j, r);
                let exact = Big::from_u128(num).shl(57);
                let den = Big::from_u128(den);
                assert!(
                    Big::from_u128(u128::from(e)).mul(&den).cmp(&exact).is_le(),
                    "{scale:?} {j} {r}"
                );
                assert!(
                    exact.cmp(&Big::from_u128(u128::from(e) + 4).mul(&den)).is_lt(),
                    "{scale:?} {j} {r}"
                );
            }
        }
    }
}

/// The premises of the fallback bound, for every rung and both kinds of table: every
/// entry leaves at most two words undecided, the two-sided tables have at most 2797
/// entries (63-bit words) and the one-sided at most 2397 (54-bit words), every table is
/// guided; with the band of `V` (at most 200 words, 576 at block scales) and
/// `E[N] < 1.09`, a sample falls
/// back with probability below `2⁻⁵⁰` (`M = 1`) and `2⁻⁴⁰·²` (`M ≥ 2`, `ℓ ≥ 42`).
#[test]
fn ladder_tables_satisfy_the_fallback_bound_premises() {
    for k in 0..RUNGS {
        for (two_sided, width, most) in [(true, 63u32, 2797usize), (false, 54, 2397)] {
            let table = rung_table(k, two_sided);
            assert_eq!(probe::width(table), width);
            assert!(probe::max_undecided_per_entry(table) <= 2, "rung {k}");
            assert!(probe::len(table) <= most, "rung {k}: {}", probe::len(table));
            assert!(probe::is_guided(table), "rung {k}");
            let band = if two_sided { 200.0 } else { 576.0 } / 2f64.powi(64);
            let v = if two_sided {
                band
            } else {
                band + 2f64.powi(65 - 42) / 2f64.powi(64)
            };
            let per_trial = 2.0 * probe::len(table) as f64 / 2f64.powi(width as i32) + v;
            let bound = if two_sided {
                2f64.powi(-50)
            } else {
                2f64.powf(-40.2)
            };
            assert!(1.09 * per_trial < bound, "rung {k}: {per_trial}");
        }
    }
    assert!(ladder::tables_built() <= 2 * RUNGS as u64);
    // The memory bound: every table of the ladder, both kinds, built.
    let bytes = |two_sided: bool, rungs: std::ops::Range<usize>| -> usize {
        rungs.map(|k| probe::heap_bytes(rung_table(k, two_sided))).sum()
    };
    let (two, one) = (bytes(true, 0..RUNGS), bytes(false, 0..RUNGS));
    let blocks = bytes(false, 113..RUNGS); // q̂ ∈ (32, 64]: every scale above 64
    println!("ladder memory: two-sided {two} B, one-sided {one} B, blocks (τ > 64) {blocks} B");
    assert!(
        two + one <= 12 << 20 && blocks <= 2 << 20,
        "{two} + {one}, {blocks}"
    );
}

/// The band of `V` holds `2⁶⁴·exp(−E)` — `below ≤ 2⁶⁴·exp(−E) ≤ above + 1` against a
/// certified 128-bit enclosure of the exact `exp(−E)` — and is at most 200 words wide
/// (`W′ + 2·68`), 600 at block scales (`W′ + 2⁹`), on random trials (both kinds, every scale, `J` up to 3000 so that the
/// cap is reached at the smallest scales).
#[test]
fn acceptance_bands_hold_and_are_narrow() {
    use crate::sampling::certified::exp_neg_big;
    let mut rng = ChaCha20Rng::seed_from_u64(0xBA4D);
    for scale in scales() {
        for two_sided in [true, false] {
            let law = Scaled::new(scale, two_sided);
            let m = law.block_bits;
            for _ in 0..5_000 {
                let (j, r) = random_trial(&mut rng, m, 3000);
                let (below, above) = law.band(j, r);
                // W′ + 2⁹ for block scales (J < 2¹²), W′ + 2·68 otherwise.
                let width = if m > 0 { 600 } else { 200 };
                assert!(above.saturating_sub(below) < width, "{scale:?}: {below}..{above}");
                let (n, d) = law.exact_exponent(j, r);
                let exact = exp_neg_big(&Big::from_u128(n), &Big::from_u128(d), 128);
                let at = |x: u128| Big::from_u128(x).shl(64);
                assert!(at(u128::from(below)).cmp(&exact.lo).is_le(), "{scale:?} {j} {r}");
                assert!(
                    exact.hi.cmp(&at(u128::from(above) + 1)).is_le(),
                    "{scale:?} {j} {r}"
                );
            }
        }
    }
}

/// Every decided acceptance agrees with the exact comparison of `V` with `exp(−E)`
/// (arbitrary precision), on 10⁶ random trials over four scales (`V` of 64, `64 − m`,
/// 42 and 64 bits), and uniforms planted in the middle of the band take the exact path
/// and give the exact answer.
#[test]
fn acceptance_agrees_with_exact_comparisons() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xACCE);
    let mut planted = 0;
    for (num, den) in [
        (159u64, 10u64),
        (1_000_003, 7),
        ((1 << 35) + 3, 1),
        ((1 << 40) + 3, 1),
    ] {
        let law = Scaled::new(Rational::new(num, den).unwrap(), true);
        let m = law.block_bits;
        let len = law.uniform_bits();
        assert!(len >= UNIFORM_MIN_BITS);
        for i in 0..250_000u64 {
            let (j, r) = random_trial(&mut rng, m, 200);
            let prefix = if i % 1000 == 0 {
                planted += 1;
                let (below, above) = law.band(j, r);
                (below / 2 + above / 2) >> (64 - len)
            } else {
                rng.next_u64() >> (64 - len)
            };
            let fast = law.accept(
                j,
                r,
                // The low 64 − len bits of V's word belong to R; set them to check that
                // they are ignored.
                (prefix << (64 - len)) | (u64::MAX >> len.min(63) >> u32::from(len == 64)),
                &mut BitSource::new(&mut ChaCha20Rng::seed_from_u64(i)),
            );
            let (n, d) = law.exact_exponent(j, r);
            let exact = exact_less_exp_neg(
                &mut LazyUniform::new(prefix, u64::from(len)),
                &Big::from_u128(n),
                &Big::from_u128(d),
                &mut BitSource::new(&mut ChaCha20Rng::seed_from_u64(i)),
            );
            assert_eq!(
                fast, exact,
                "τ = {num}/{den}, j = {j}, r = {r}, prefix = {prefix}"
            );
        }
    }
    assert!(planted >= 1000);
}

/// `X = x` holds exactly iff `U < C_x` (or `x = 0`) and `U ≥ C_(x+1)`.
fn exact_agrees(table: &Cdt, u: u64, x: u64, seed: u64) -> bool {
    let less = |c: u64| {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        probe::exact_less_at(table, u, c, &mut BitSource::new(&mut rng))
    };
    (x == 0 || less(x)) && (probe::bound(table) == Some(x) || !less(x + 1))
}

/// The certified fast path of the ladder tables agrees with arbitrary-precision
/// comparisons on random words, words planted inside every entry's undecided band take
/// the exact path and still give the exact answer, and the guide counts like a binary
/// search (random words, threshold bounds, bucket edges), for rungs across the ladder.
#[test]
fn ladder_tables_agree_with_exact_comparisons() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xCE27);
    for k in [0, 17, 64, 100, 127, 128] {
        for two_sided in [true, false] {
            let table = rung_table(k, two_sided);
            let width = probe::width(table);
            let mask = u64::MAX >> (64 - width);
            for i in 0..20_000 {
                let u = rng.next_u64() & mask;
                if let Ok(x) = table.fast(u) {
                    assert!(exact_agrees(table, u, x, i), "rung {k}, u = {u}");
                }
            }
            let mut planted = 0;
            for c in (0..probe::len(table)).step_by(7) {
                for u in probe::lo(table)[c]..=probe::hi(table)[c] {
                    if u >> width != 0 || table.fast(u).is_ok() {
                        continue;
                    }
                    planted += 1;
                    let mut rng = ChaCha20Rng::seed_from_u64(u);
                    let x = table.sample(u, &mut BitSource::new(&mut rng));
                    assert!(exact_agrees(table, u, x, u), "rung {k}: planted u = {u}");
                }
            }
            assert!(planted > 0, "rung {k}: no undecided word");
            let mut words: Vec<u64> = (0..5000).map(|_| rng.next_u64() & mask).collect();
            for &l in probe::lo(table) {
                words.extend([l, l.saturating_sub(1), l.saturating_add(1) & mask]);
            }
            for p in 0..width {
                for digits in 0..1u64 << LOG_GUIDE_BITS {
                    let first =
                        (1u64 << p) | ((digits << p.saturating_sub(LOG_GUIDE_BITS)) & ((1u64 << p) - 1));
                    words.extend([first, first - 1, first | 1]);
                }
            }
            for u in words {
                let fast = table.fast(u);
                assert_eq!(
                    fast.unwrap_or_else(|c| c),
                    probe::certain_by_search(table, u),
                    "rung {k}"
                );
                assert_eq!(fast.is_ok(), probe::decided_by_search(table, u), "rung {k}");
            }
        }
    }
}

/// Words per trial follow the layout: one word exactly when τ ≤ 64 is a rung
/// (`τ = p/64`), two up to `m = 31`, three above; integers up to 32 are rungs.
#[test]
fn words_per_trial_follow_the_layout() {
    for tau in 1..=32u64 {
        assert_eq!(
            DiscreteLaplace::new(Rational::new(tau, 1).unwrap()).words_per_trial(),
            1,
            "{tau}"
        );
    }
    for (num, den, words) in [
        (1u64, 3u64, 2usize),
        (1, 4, 1),
        (1, 1 << 62, 2),
        (159, 10, 2),
        (33, 1, 2),
        (64, 1, 1),
        (65, 1, 2),
        ((1 << 37) - 1, 1, 2),
        (1 << 37, 1, 2),
        ((1 << 37) + 1, 1, 3),
        (u64::MAX, 1, 3),
    ] {
        let noise = DiscreteLaplace::new(Rational::new(num, den).unwrap());
        assert_eq!(noise.words_per_trial(), words, "{num}/{den}");
    }
    // Rung p/64 for p = 17·2ʲ: τ = 17/64·2ʲ.
    assert_eq!(
        DiscreteLaplace::new(Rational::new(17, 16).unwrap()).words_per_trial(),
        1
    );
    assert_eq!(
        DiscreteLaplace::new(Rational::new(33, 32).unwrap()).words_per_trial(),
        2
    );
}

/// Chi-square fit of the whole sampler against the exact law `(1 − α)/(1 + α)·α^|z|`
/// (bins of equal width in `|z|` units of `⌈τ/8⌉`, merged to expect ≥ 5, α = 10⁻³,
/// 2·10⁵ samples), at scales of every regime including the tiny one; and of the
/// one-sided trials' accepted magnitudes against `(1 − α)αᵍ`. The acceptance rate is
/// above the documented `1/1.09`.
#[test]
fn samples_follow_the_exact_law() {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    let n = 200_000usize;
    let mut rng = ChaCha20Rng::seed_from_u64(0x7AB1E);
    for (num, den) in [
        (1u64, 3u64),
        (1, 1),
        (159, 10),
        (33, 1),
        (1000, 1),
        ((1 << 35) + 3, 1),
        ((1 << 40) + 3, 1),
    ] {
        let tau = num as f64 / den as f64;
        let alpha = (-1.0 / tau).exp();
        let unit = (tau / 8.0).ceil().max(1.0);
        let bins = 64usize;
        // Pr[|Z| ∈ [a, b)] for the two-sided law, Pr[G ∈ [a, b)] for the one-sided.
        // Pr[|Z| ≥ a] (two-sided, a ≥ 1) or Pr[G ≥ a] (one-sided), for integer a.
        let tail = |two_sided: bool, a: f64| match (two_sided, a <= 0.0) {
            (_, true) => 1.0,
            (true, false) => 2.0 * alpha.powf(a) / (1.0 + alpha),
            (false, false) => alpha.powf(a),
        };
        for (kind, noise) in [
            (
                "two-sided",
                DiscreteLaplace::new(Rational::new(num, den).unwrap()),
            ),
            (
                "one-sided",
                DiscreteLaplace::one_sided(Rational::new(num, den).unwrap()),
            ),
        ] {
            let mut counts = vec![0u64; bins + 1];
            let (mut accepted, mut trials) = (0usize, 0usize);
            let mut bits = BitSource::new(&mut rng);
            while accepted < n {
                trials += 1;
                let value = if kind == "two-sided" {
                    let z = noise.sample_bits(&mut bits);
                    accepted += 1;
                    z.unsigned_abs()
                } else {
                    let (ok, _, g) = noise.trial(&mut bits);
                    if !ok {
                        continue;
                    }
                    accepted += 1;
                    g
                };
                counts[((value as f64 / unit) as usize).min(bins)] += 1;
            }
            let two_sided = kind == "two-sided";
            let p: Vec<f64> = (0..=bins)
                .map(|b| {
                    let a = b as f64 * unit;
                    let at_least = tail(two_sided, a);
                    if b == bins {
                        at_least
                    } else {
                        at_least - tail(two_sided, a + unit)
                    }
                })
                .collect();
            let (mut stat, mut used, mut acc_o, mut acc_e) = (0.0, 0usize, 0.0, 0.0);
            for (&o, &q) in counts.iter().zip(&p) {
                acc_o += o as f64;
                acc_e += q * n as f64;
                if acc_e >= 5.0 {
                    stat += (acc_o - acc_e).powi(2) / acc_e;
                    used += 1;
                    (acc_o, acc_e) = (0.0, 0.0);
                }
            }
            if acc_e > 0.0 {
                stat += (acc_o - acc_e).powi(2) / acc_e;
            }
            let critical = ChiSquared::new(used.max(2) as f64 - 1.0)
                .unwrap()
                .inverse_cdf(1.0 - 1e-3);
            assert!(
                stat <= critical,
                "τ = {num}/{den} {kind}: χ² = {stat} > {critical}"
            );
            if kind == "one-sided" {
                assert!((accepted as f64 / trials as f64) > 1.0 / 1.09, "τ = {num}/{den}");
            }
        }
    }
}

/// A new scale builds nothing when its rung exists: after one sampler per rung kind,
/// 10 000 fresh scales build no table; and a sample from a cloned sampler is the same.
#[test]
fn new_scales_reuse_the_ladder() {
    for tau in [1u64, 100, 1_000_000, 1 << 40] {
        let _ = DiscreteLaplace::new(Rational::new(tau, 3).unwrap());
    }
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let scales: Vec<Rational> = (0..10_000)
        .map(|i| Rational::new(1_000_000 + rng.next_u64() % 1_000_000 + i, 1).unwrap())
        .collect();
    // Build the rungs these scales use, then check that building them again adds nothing.
    let warm: Vec<DiscreteLaplace> = scales.iter().map(|&s| DiscreteLaplace::new(s)).collect();
    let before = ladder::tables_built();
    for &s in &scales {
        let noise = DiscreteLaplace::new(s);
        let copy = noise.clone();
        let a = noise.sample(&mut ChaCha20Rng::seed_from_u64(9));
        let b = copy.sample(&mut ChaCha20Rng::seed_from_u64(9));
        assert_eq!(a, b);
    }
    assert_eq!(ladder::tables_built(), before);
    assert!(!warm.is_empty() && RUNG_DEN == 64);
}
