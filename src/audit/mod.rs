//! A privacy auditor: an empirical test that can catch a false privacy claim.
//!
//! Given a randomized function run on two neighbouring inputs `D` and `D′`, the
//! [`Auditor`] draws outputs from both, looks for an event `E` whose probabilities
//! violate the claim `Pr[M(D) ∈ E] ≤ e^ε · Pr[M(D′) ∈ E] + δ` (in both directions),
//! and certifies with **exact** one-sided Clopper–Pearson bounds a lower bound
//!
//! ```text
//! ε ≥ ln( (p̲_D − δ) / p̄_D′ )
//! ```
//!
//! on the privacy loss. The audit FAILS when that certified bound exceeds the claimed
//! ε. Ideas after StatDP (Ding et al. 2018), DP-Sniper and Google's DP-Auditorium.
//!
//! ## Why a FAIL means something
//!
//! * **Split sample.** `samples(n)` draws per input are split in two halves with
//!   independent random streams. Candidate events — single outcomes, thresholds
//!   `{x ≥ t}` / `{x ≤ t}`, intervals, and unions of outcomes ranked by empirical
//!   likelihood ratio — are searched on the first half only; a small fixed number
//!   (`events(k)` per direction, default 4) is then certified on the fresh second half.
//! * **Bonferroni.** Each certified (event, direction) pair uses two one-sided
//!   intervals; α is split evenly over all of them. If every interval holds, each
//!   reported bound is below the true loss; so a mechanism that satisfies its claim
//!   FAILS with probability at most α (default 10⁻⁶).
//! * **Exact, conservative arithmetic.** Binomial tails are summed exactly in log
//!   space ([`upper_tail`], [`lower_tail`]: relative error about 10⁻¹¹ for `n` up to 10⁷
//!   and tails down to 10⁻¹⁵ and below; `statrs`' incomplete beta, built on a Lanczos
//!   `ln Γ`, drifts by up to ~2·10⁻⁸ relative at `n = 10⁷` in our tests), the bisection for
//!   the Clopper–Pearson bound keeps the safe end of its bracket, and the final
//!   `ln((p̲ − δ)/p̄)` is rounded down. The certified bound never exceeds the loss it
//!   certifies because of rounding.
//!
//! A PASS is weaker: it says this search did not find a violation at this sample size
//! — the certified bound shows how close it came.
//!
//! ## Limits (cost bounds)
//!
//! An audit's cost is `samples` calls of each closure plus, for ordered and real
//! outputs, a sort of the selection half and a search over every range of cells
//! (quadratic in the number of cells). The builder methods accept any value; the
//! `audit_*` methods refuse out-of-range settings with [`Error::InvalidParameter`]
//! before drawing anything:
//!
//! * `samples` in `2..=`[`MAX_SAMPLES`] (10⁸ draws per input). Ordered and real audits
//!   hold the selection half and a sorted copy of it, `2 · samples` outputs at peak
//!   (1.6 GB of `f64` at the maximum); if that memory cannot be reserved the audit
//!   returns [`Error::InvalidParameter`] instead of aborting. Categorical audits hold
//!   one cell per distinct outcome seen in the selection half.
//! * `bins` in `2..=`[`MAX_BINS`] (1024): at most about `MAX_BINS + 2·log₂(samples)`
//!   cells, hence about 6·10⁵ candidate ranges per direction.
//! * `events` in `1..=`[`MAX_EVENTS`] (64) per direction: α is split over them, so
//!   more would only weaken each certificate.
//!
//! No extra dependency is pulled in (`rand_chacha` is already one), so the module is
//! not behind a cargo feature.
//!
//! ## Output kinds
//!
//! * [`Auditor::audit`]: any `Ord + Clone + Debug` output — integers, indices, booleans,
//!   tuples (single values, thresholds, intervals);
//! * [`Auditor::audit_real`]: `f64` outputs (quantile bins chosen on the first half,
//!   with finer bins in the tails; thresholds and intervals between them);
//! * [`Auditor::audit_categorical`]: any `T: Eq + Hash + Clone + Debug` — categories,
//!   `bool` vectors, tuples such as `(value, draws)` with a [`CountingRng`];
//! * [`Auditor::audit_with_draw_count`]: any of the above jointly with the number of
//!   random words the mechanism drew (through a [`CountingRng`]) — a running-time
//!   observable: an exact sampler whose loop count depends on the noise fails it;
//! * [`Auditor::audit_float_leak`]: the float-leak check (Mironov 2012) — the same
//!   certified test on the [`FloatStructure`] (binade and finest power-of-two grid) of
//!   `f64` outputs. A post-processing of an ε-DP output is ε-DP, so an exact
//!   mechanism passes it; a float sampler whose output grid depends on the input fails.
//!
//! User closures receive `&mut ChaCha20Rng` (seeded deterministically from
//! [`Auditor::seed`]); every sampler of this crate is generic over
//! `R: CryptoRng + ?Sized`, so `|rng| mechanism.release(x, rng)` works directly.
//!
//! ## Example
//!
//! The coin-flip randomized response (Dwork & Roth 2014, §3.2) answers truthfully on heads and
//! at random on tails: `Pr[yes | yes] = 3/4`, `Pr[yes | no] = 1/4`, so its privacy
//! loss is exactly ln 3.
//!
//! ```
//! use dpmech::audit::{Auditor, Verdict};
//!
//! fn coin_flip_rr<R: dpmech::CryptoRng + ?Sized>(truth: bool, rng: &mut R) -> bool {
//!     let bits = rng.next_u32();
//!     if bits & 1 == 1 { truth } else { bits & 2 == 2 }
//! }
//!
//! // Claimed ln 3 (rounded up): the audit passes.
//! let ln3 = dpmech::privacy::round::ln_up(3.0);
//! let report = Auditor::pure(ln3)?
//!     .samples(100_000)
//!     .seed(1)
//!     .audit_categorical(|rng| coin_flip_rr(true, rng), |rng| coin_flip_rr(false, rng))?;
//! assert_eq!(report.verdict, Verdict::Pass);
//! assert!(report.lower_bound <= ln3);
//!
//! // Claimed 0.9: the certified loss exceeds it and the audit fails.
//! let report = Auditor::pure(0.9)?
//!     .samples(100_000)
//!     .seed(1)
//!     .audit_categorical(|rng| coin_flip_rr(true, rng), |rng| coin_flip_rr(false, rng))?;
//! assert_eq!(report.verdict, Verdict::Fail);
//! println!("{report}");
//! # Ok::<(), dpmech::Error>(())
//! ```
//!
//! Auditing a mechanism of this crate on one neighbouring pair (a count of 41 versus
//! 42), against the guarantee it reports itself, and checking that the Laplace
//! mechanism's floats do not leak their input:
//!
//! ```
//! use dpmech::audit::Auditor;
//! use dpmech::{Geometric, Laplace};
//!
//! let geometric = Geometric::new(1, 1.0)?;
//! let report = Auditor::new(geometric.privacy_loss())?
//!     .samples(100_000)
//!     .audit(|rng| geometric.release(41, rng), |rng| geometric.release(42, rng))?;
//! assert!(report.passed(), "{report}");
//!
//! let laplace = Laplace::new(1.0, 1.0)?;
//! let report = Auditor::new(laplace.privacy_loss())?.samples(100_000).audit_float_leak(
//!     |rng| laplace.release(0.0, rng).unwrap_or(f64::NAN),
//!     |rng| laplace.release(1.0, rng).unwrap_or(f64::NAN),
//! )?;
//! assert!(report.passed(), "{report}");
//! # Ok::<(), dpmech::Error>(())
//! ```
//!
//! ## What an audit does not show
//!
//! It tests one neighbouring pair `(D, D′)` chosen by the caller; pick pairs that
//! stress the mechanism (boundaries, ties, the largest change of the query). A PASS
//! bounds nothing from above: only a FAIL is a statistical proof (of a broken claim).

pub(crate) mod binomial;
mod categorical;
mod counting_rng;
mod events;
mod float_leak;
mod ordered;
mod report;

pub use binomial::{clopper_pearson_lower, clopper_pearson_upper, lower_tail, upper_tail};
pub use counting_rng::CountingRng;
pub use events::Direction;
pub use float_leak::FloatStructure;
pub use report::{AuditReport, CertifiedEvent, Verdict};

use crate::privacy::{PrivacyLoss, check_delta, check_epsilon};
use crate::{Error, rng::Rng};
use core::fmt::Debug;
use events::{Histograms, Selected, Shape};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

/// Most draws per input an audit accepts (10⁸); see the [module docs](self#limits-cost-bounds).
pub const MAX_SAMPLES: usize = 100_000_000;

/// Most quantile bins for real outputs (1024): the event search is quadratic in them.
pub const MAX_BINS: usize = 1024;

/// Most events certified per direction (64).
pub const MAX_EVENTS: usize = 64;

/// Runs privacy audits of a claimed guarantee. Build with [`Auditor::new`],
/// [`Auditor::pure`] or [`Auditor::approximate`], tune with the builder methods, then
/// call one of the `audit_*` methods. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Auditor {
    claimed: PrivacyLoss,
    epsilon: f64,
    delta: f64,
    samples: usize,
    alpha: f64,
    seed: u64,
    events: usize,
    bins: usize,
}

impl Auditor {
    /// An auditor for a pure or approximate DP claim. Other kinds (zCDP, approximate zCDP, random DP)
    /// are refused with [`Error::IncompatibleLoss`]: convert them to (ε, δ) first.
    ///
    /// # Errors
    ///
    /// [`Error::IncompatibleLoss`] for a zCDP or random-DP claim; [`Error::InvalidEpsilon`] or
    /// [`Error::InvalidDelta`] for a claim with an invalid parameter.
    pub fn new(claimed: PrivacyLoss) -> Result<Self, Error> {
        let (epsilon, delta) = match claimed {
            PrivacyLoss::Pure { epsilon } => (check_epsilon(epsilon)?, 0.0),
            PrivacyLoss::Approximate { epsilon, delta: 0.0 } => (check_epsilon(epsilon)?, 0.0),
            PrivacyLoss::Approximate { epsilon, delta } => (check_epsilon(epsilon)?, check_delta(delta)?),
            _ => {
                return Err(Error::IncompatibleLoss {
                    reason: "the auditor tests pure or (epsilon, delta) claims; convert the guarantee first",
                });
            }
        };
        Ok(Self {
            claimed,
            epsilon,
            delta,
            samples: 200_000,
            alpha: 1e-6,
            seed: 0,
            events: 4,
            bins: 32,
        })
    }

    /// The guarantee being audited.
    pub fn claimed(&self) -> PrivacyLoss {
        self.claimed
    }

    /// An auditor for a pure ε-DP claim.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] unless ε is finite and positive.
    pub fn pure(epsilon: f64) -> Result<Self, Error> {
        Self::new(PrivacyLoss::pure(epsilon)?)
    }

    /// An auditor for an (ε, δ)-DP claim (δ = 0 is the pure claim).
    ///
    /// # Errors
    ///
    /// As [`PrivacyLoss::approximate`].
    pub fn approximate(epsilon: f64, delta: f64) -> Result<Self, Error> {
        Self::new(PrivacyLoss::approximate(epsilon, delta)?)
    }

    /// Draws per input (default 200 000): half choose the events, half certify them.
    /// Must lie in `2..=`[`MAX_SAMPLES`] (checked when the audit runs).
    pub fn samples(mut self, n: usize) -> Self {
        self.samples = n;
        self
    }

    /// The false-alarm probability bound α in (0, 1) (default 10⁻⁶).
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.alpha = alpha;
        self
    }

    /// The seed of the audit's random streams (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// How many events per direction to certify (default 4, in `1..=`[`MAX_EVENTS`]).
    /// More events give the search more chances but split α finer.
    pub fn events(mut self, k: usize) -> Self {
        self.events = k;
        self
    }

    /// Number of equal-mass quantile bins for real outputs (default 32, in
    /// `2..=`[`MAX_BINS`]); finer bins are always added in the tails.
    pub fn bins(mut self, bins: usize) -> Self {
        self.bins = bins;
        self
    }

    fn validate(&self) -> Result<(), Error> {
        if self.samples < 2 {
            return Err(Error::InvalidParameter {
                name: "samples",
                value: self.samples as f64,
                reason: "need at least 2 draws per input (one per half)",
            });
        }
        if self.samples > MAX_SAMPLES {
            return Err(Error::InvalidParameter {
                name: "samples",
                value: self.samples as f64,
                reason: "at most 10^8 draws per input (audit::MAX_SAMPLES)",
            });
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(Error::InvalidParameter {
                name: "alpha",
                value: self.alpha,
                reason: "alpha must lie in the open interval (0, 1)",
            });
        }
        if self.events == 0 || self.events > MAX_EVENTS {
            return Err(Error::InvalidParameter {
                name: "events",
                value: self.events as f64,
                reason: "certify between 1 and 64 events per direction (audit::MAX_EVENTS)",
            });
        }
        if !(2..=MAX_BINS).contains(&self.bins) {
            return Err(Error::InvalidParameter {
                name: "bins",
                value: self.bins as f64,
                reason: "need between 2 and 1024 bins (audit::MAX_BINS)",
            });
        }
        Ok(())
    }

    /// Four independent streams: (D, D′) × (selection, certification).
    fn streams(&self) -> [ChaCha20Rng; 4] {
        let mut master = ChaCha20Rng::seed_from_u64(self.seed);
        core::array::from_fn(|_| {
            let mut key = [0u8; 32];
            master.fill_bytes(&mut key);
            ChaCha20Rng::from_seed(key)
        })
    }

    fn halves(&self) -> (usize, usize) {
        let first = self.samples / 2;
        (first, self.samples - first)
    }

    /// Selects on the first-half histograms, certifies on the second, and reports.
    fn finish(
        &self,
        test: &'static str,
        ordered: bool,
        h1: &[Vec<u64>; 2],
        h2: &[Vec<u64>; 2],
        describe: impl Fn(&Shape) -> String,
    ) -> AuditReport {
        let (n1, n2) = self.halves();
        let planned = events::alpha_per_interval(self.alpha, 2 * self.events);
        let first = Histograms {
            d: &h1[0],
            dp: &h1[1],
            n_d: n1 as u64,
            n_dp: n1 as u64,
        };
        let selected: Vec<Selected> = events::select(first, ordered, self.events, planned, self.delta);
        let alpha_each = events::alpha_per_interval(self.alpha, selected.len());
        let second = Histograms {
            d: &h2[0],
            dp: &h2[1],
            n_d: n2 as u64,
            n_dp: n2 as u64,
        };
        let mut certified: Vec<CertifiedEvent> = selected
            .iter()
            .map(|s| {
                let c = events::certify(s, second, alpha_each, self.delta);
                CertifiedEvent {
                    description: describe(&s.shape),
                    direction: s.direction,
                    count_numerator: c.count_num,
                    count_denominator: c.count_den,
                    p_numerator_lower: c.p_num_lower,
                    p_denominator_upper: c.p_den_upper,
                    loss_lower_bound: c.loss_lower_bound,
                }
            })
            .collect();
        certified.sort_by(|a, b| b.loss_lower_bound.total_cmp(&a.loss_lower_bound));
        let best = certified
            .first()
            .map_or(f64::NEG_INFINITY, |e| e.loss_lower_bound);
        let lower_bound = best.max(0.0);
        AuditReport {
            test,
            verdict: if lower_bound > self.epsilon {
                Verdict::Fail
            } else {
                Verdict::Pass
            },
            claimed: self.claimed,
            lower_bound,
            events: certified,
            selection_samples: n1,
            certification_samples: n2,
            alpha: self.alpha,
            seed: self.seed,
        }
    }
}

/// Reserves room for `n` more elements, or a typed error when the allocator refuses.
fn reserve<T>(v: &mut Vec<T>, n: usize) -> Result<(), Error> {
    v.try_reserve_exact(n).map_err(|_| Error::InvalidParameter {
        name: "samples",
        value: n as f64,
        reason: "not enough memory for the selection half of this audit: use fewer samples",
    })
}

/// `a, b, c, … (n in all)` — at most eight members are named.
fn list(items: &[usize], sep: &str, name: impl Fn(usize) -> String) -> String {
    const SHOWN: usize = 8;
    let mut s: Vec<String> = items.iter().take(SHOWN).map(|&c| name(c)).collect();
    if items.len() > SHOWN {
        s.push(format!("… ({} in all)", items.len()));
    }
    s.join(sep)
}

#[cfg(test)]
#[allow(clippy::float_cmp, reason = "exact values are what these tests check")]
mod tests {
    use super::ordered::{Ordinal, choose_cuts};
    use super::*;

    #[test]
    fn bad_parameters_are_typed_errors() {
        let a = Auditor::pure(1.0).unwrap();
        let f = |_: &mut ChaCha20Rng| 0i64;
        assert!(matches!(
            a.clone().samples(1).audit(f, f),
            Err(Error::InvalidParameter { name: "samples", .. })
        ));
        for bad in [0.0, 1.0, -1.0, f64::NAN] {
            assert!(matches!(
                a.clone().alpha(bad).audit(f, f),
                Err(Error::InvalidParameter { name: "alpha", .. })
            ));
        }
        assert!(a.clone().events(0).audit(f, f).is_err());
        assert!(a.clone().bins(1).audit_real(|_| 0.0, |_| 0.0).is_err());
        assert!(matches!(Auditor::pure(0.0), Err(Error::InvalidEpsilon { .. })));
        assert!(matches!(
            Auditor::approximate(1.0, 1.0),
            Err(Error::InvalidDelta { .. })
        ));
        // δ = 0 is the pure claim, not an error.
        assert_eq!(
            Auditor::approximate(1.0, 0.0).unwrap().claimed(),
            PrivacyLoss::Pure { epsilon: 1.0 }
        );
        assert!(matches!(
            Auditor::new(PrivacyLoss::Zcdp { rho: 0.5 }),
            Err(Error::IncompatibleLoss { .. })
        ));
        assert!(matches!(
            Auditor::new(PrivacyLoss::Pure { epsilon: f64::NAN }),
            Err(Error::InvalidEpsilon { .. })
        ));
    }

    #[test]
    fn constant_and_identical_mechanisms_pass_with_zero_bound() {
        let a = Auditor::pure(0.1).unwrap().samples(2000);
        let r = a.audit(|_| 7, |_| 7).unwrap();
        assert!(r.passed() && r.lower_bound == 0.0, "{r}");
        let r = a
            .audit_real(|rng| rng.next_u32() as f64, |rng| rng.next_u32() as f64)
            .unwrap();
        assert!(r.passed(), "{r}");
        let r = a
            .audit_categorical(|rng| rng.next_u32() % 3, |rng| rng.next_u32() % 3)
            .unwrap();
        assert!(r.passed(), "{r}");
    }

    #[test]
    fn disjoint_supports_fail_with_a_named_witness() {
        let r = Auditor::pure(1.0)
            .unwrap()
            .samples(2000)
            .audit(|_| 0, |_| 1)
            .unwrap();
        assert_eq!(r.verdict, Verdict::Fail);
        let w = r.witness().unwrap();
        assert!(w.description.contains('x'), "{r}");
        assert!(r.to_string().contains("FAIL"));
    }

    #[test]
    fn cuts_are_distinct_integers_or_sorted_quantiles() {
        let inner = |c: Vec<Ordinal<i64>>| c.into_iter().map(|o| o.0).collect::<Vec<i64>>();
        let v: Vec<Ordinal<i64>> = [1, 1, 2, 5, 5, 5].into_iter().map(Ordinal).collect();
        assert_eq!(inner(choose_cuts(&v, 4)), vec![1, 2, 5]);
        let w: Vec<Ordinal<i64>> = (0..10_000).map(Ordinal).collect();
        let c = inner(choose_cuts(&w, 8));
        assert!(c.len() < 40 && c.windows(2).all(|p| p[0] < p[1]));
        let x: Vec<f64> = (0..4096).map(|i| i as f64).collect();
        let c = choose_cuts(&x, 4);
        assert!(
            c.contains(&1024.0) && c.contains(&2048.0) && c.contains(&16.0),
            "{c:?}"
        );
    }

    #[test]
    fn same_seed_same_report() {
        let a = Auditor::pure(1.0).unwrap().samples(4000).seed(9);
        let run = || {
            a.audit(
                |rng| (rng.next_u32() % 5) as i64,
                |rng| (rng.next_u32() % 6) as i64,
            )
            .unwrap()
        };
        assert_eq!(run().lower_bound, run().lower_bound);
    }

    #[test]
    fn odd_outputs_and_extreme_parameters_do_not_panic() {
        let specials = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            0.0,
            5e-324,
            f64::MAX,
        ];
        let pick = |rng: &mut ChaCha20Rng| specials[(rng.next_u32() % 7) as usize];
        let a = Auditor::pure(1.0).unwrap().samples(2000);
        assert!(a.audit_real(pick, pick).unwrap().passed());
        assert!(a.audit_float_leak(pick, pick).unwrap().passed());
        let ends = |rng: &mut ChaCha20Rng| {
            if rng.next_u32() & 1 == 1 {
                i64::MIN
            } else {
                i64::MAX
            }
        };
        let r = a.audit(ends, |_| i64::MAX).unwrap();
        assert!(!r.passed(), "{r}");
        let _ = r.to_string();
        // The smallest sample size and a tiny alpha.
        let r = Auditor::pure(1.0)
            .unwrap()
            .samples(2)
            .alpha(1e-12)
            .audit(|_| 0, |_| 1)
            .unwrap();
        assert!(
            r.passed(),
            "two draws cannot certify anything at alpha = 1e-12: {r}"
        );
        // Many distinct integers fall back to quantile cells.
        let wide = |rng: &mut ChaCha20Rng| rng.next_u64() as i64;
        assert!(a.audit(wide, wide).unwrap().passed());
    }

    #[test]
    fn split_sample_keeps_many_event_search_honest() {
        // Identical mechanisms, 4000 equally likely outcomes, ~5 draws per outcome and
        // half: the best-looking events of the first half are pure noise.
        let uniform = |rng: &mut ChaCha20Rng| rng.next_u32() % 4000;
        let a = Auditor::pure(0.5).unwrap().samples(40_000).seed(3);
        let report = a.audit_categorical(uniform, uniform).unwrap();
        assert!(report.passed(), "{report}");
        // Certifying the same events on the half that chose them (what the split
        // prevents) would "prove" a loss above 0.5 for a mechanism with loss 0.
        let [mut r0, mut r1, ..] = a.streams();
        let mut h = [vec![0u64; 4000], vec![0u64; 4000]];
        for _ in 0..20_000 {
            h[0][uniform(&mut r0) as usize] += 1;
            h[1][uniform(&mut r1) as usize] += 1;
        }
        let hs = Histograms {
            d: &h[0],
            dp: &h[1],
            n_d: 20_000,
            n_dp: 20_000,
        };
        let alpha_each = events::alpha_per_interval(1e-6, 8);
        let selected = events::select(hs, false, 4, alpha_each, 0.0);
        let reused = selected
            .iter()
            .map(|s| events::certify(s, hs, alpha_each, 0.0).loss_lower_bound)
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(reused > 0.5, "reusing the selection half certified only {reused}");
    }

    #[test]
    fn draw_count_audit_sees_a_value_dependent_loop() {
        // Outputs 0 or 1 with equal probability for both inputs, but D draws one
        // extra word whenever it outputs 1.
        let d = |rng: &mut CountingRng<&mut ChaCha20Rng>| {
            let b = rng.next_u32() & 1;
            if b == 1 {
                let _ = rng.next_u64();
            }
            b
        };
        let dp = |rng: &mut CountingRng<&mut ChaCha20Rng>| rng.next_u32() & 1;
        let a = Auditor::pure(1.0).unwrap().samples(20_000);
        let r = a.audit_with_draw_count(d, dp).unwrap();
        assert_eq!(r.verdict, Verdict::Fail, "{r}");
        assert!(a.audit_with_draw_count(dp, dp).unwrap().passed());
        assert!(
            a.audit_categorical(|r| r.next_u32() & 1, |r| r.next_u32() & 1)
                .unwrap()
                .passed()
        );
    }

    #[test]
    fn report_display_names_verdict_claim_bound_event_samples_and_alpha() {
        let r = Auditor::approximate(0.5, 1e-6)
            .unwrap()
            .samples(3000)
            .alpha(1e-4)
            .seed(5)
            .audit(|_| 0, |r| (r.next_u32() % 2) as i64)
            .unwrap();
        let text = r.to_string();
        for needle in [
            "FAIL",
            "(ε = 0.5, δ = 1e-6)",
            "ε ≥",
            "x ≥ 1",
            "1500 per input",
            "α = 1e-4",
            "seed             5",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
        let w = r.witness().unwrap();
        assert_eq!(w.direction, Direction::DPrimeOverD);
        assert!(w.loss_lower_bound == r.lower_bound && r.lower_bound > 0.5);
    }
}
