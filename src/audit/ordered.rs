//! Audits of outputs with a total order: any `Ord` type and `f64`. Events are single
//! values (when there are few), thresholds and intervals between quantile cuts of the
//! selection half.

use super::events::Shape;
use super::{AuditReport, Auditor, list, reserve};
use crate::Error;
use core::cmp::Ordering;
use core::fmt::Debug;
use rand_chacha::ChaCha20Rng;

/// Most distinct integer outcomes kept as individual cells; beyond that, integer
/// outputs are binned at quantiles like real ones.
const MAX_INTEGER_CELLS: usize = 256;

impl Auditor {
    /// Audits a mechanism whose outputs have a total order — integers, indices,
    /// booleans, tuples, strings: any `Ord + Clone + Debug` type. `on_d` runs it on `D`,
    /// `on_d_prime` on the neighbouring `D′`. Events are single values (when there are at
    /// most 256 distinct ones), thresholds `x ≥ a`, intervals `a ≤ x < b` and unions of
    /// them. Real outputs (`f64` is not `Ord`) go through [`audit_real`](Self::audit_real);
    /// outputs without a meaningful order through [`audit_categorical`](Self::audit_categorical).
    ///
    /// ```
    /// use dpmech::audit::Auditor;
    /// use dpmech::RandomizedResponse;
    /// let rr = RandomizedResponse::new(1.0)?;
    /// let report = Auditor::new(rr.privacy_loss())?
    ///     .samples(20_000)
    ///     .audit(|rng| rr.release(true, rng), |rng| rr.release(false, rng))?;
    /// assert!(report.passed(), "{report}");
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when a setting is out of range (`samples`, `alpha`,
    /// `events`, `bins`; see [`MAX_SAMPLES`](super::MAX_SAMPLES),
    /// [`MAX_EVENTS`](super::MAX_EVENTS), [`MAX_BINS`](super::MAX_BINS)) or the draws
    /// cannot be allocated.
    pub fn audit<T, F, G>(&self, mut on_d: F, mut on_d_prime: G) -> Result<AuditReport, Error>
    where
        T: Ord + Clone + Debug,
        F: FnMut(&mut ChaCha20Rng) -> T,
        G: FnMut(&mut ChaCha20Rng) -> T,
    {
        self.audit_ordered(
            "ordered outputs: values, thresholds, intervals",
            |rng| Ordinal(on_d(rng)),
            |rng| Ordinal(on_d_prime(rng)),
        )
    }

    /// Audits a mechanism with real outputs (quantile bins, thresholds, intervals).
    /// Outputs are ordered by `f64::total_cmp`, so NaN and ±∞ are ordinary outcomes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when a setting is out of range (`samples`, `alpha`,
    /// `events`, `bins`; see [`MAX_SAMPLES`](super::MAX_SAMPLES),
    /// [`MAX_EVENTS`](super::MAX_EVENTS), [`MAX_BINS`](super::MAX_BINS)) or the draws
    /// cannot be allocated.
    pub fn audit_real<F, G>(&self, on_d: F, on_d_prime: G) -> Result<AuditReport, Error>
    where
        F: FnMut(&mut ChaCha20Rng) -> f64,
        G: FnMut(&mut ChaCha20Rng) -> f64,
    {
        self.audit_ordered(
            "real outputs: quantile bins, thresholds, intervals",
            on_d,
            on_d_prime,
        )
    }

    fn audit_ordered<T, F, G>(
        &self,
        test: &'static str,
        mut on_d: F,
        mut on_d_prime: G,
    ) -> Result<AuditReport, Error>
    where
        T: OrderedOutput,
        F: FnMut(&mut ChaCha20Rng) -> T,
        G: FnMut(&mut ChaCha20Rng) -> T,
    {
        self.validate()?;
        let [mut r_d1, mut r_dp1, mut r_d2, mut r_dp2] = self.streams();
        let (n1, n2) = self.halves();
        // Reserve the selection half and its pooled copy up front: a typed error, not an
        // abort, when the memory is not available.
        let (mut first_d, mut first_dp, mut pooled) = (Vec::new(), Vec::new(), Vec::new());
        reserve(&mut first_d, n1)?;
        reserve(&mut first_dp, n1)?;
        reserve(&mut pooled, 2 * n1)?;
        first_d.extend((0..n1).map(|_| on_d(&mut r_d1)));
        first_dp.extend((0..n1).map(|_| on_d_prime(&mut r_dp1)));
        pooled.extend(first_d.iter().chain(first_dp.iter()).cloned());
        pooled.sort_by(T::cmp_total);
        let cuts = choose_cuts(&pooled, self.bins);
        drop(pooled);
        let cell_of = |x: &T| cuts.partition_point(|c| T::cmp_total(c, x) != Ordering::Greater);
        let cells = cuts.len() + 1;
        let mut h1 = [vec![0u64; cells], vec![0u64; cells]];
        for x in &first_d {
            h1[0][cell_of(x)] += 1;
        }
        for x in &first_dp {
            h1[1][cell_of(x)] += 1;
        }
        drop((first_d, first_dp));
        let mut h2 = [vec![0u64; cells], vec![0u64; cells]];
        for _ in 0..n2 {
            h2[0][cell_of(&on_d(&mut r_d2))] += 1;
        }
        for _ in 0..n2 {
            h2[1][cell_of(&on_d_prime(&mut r_dp2))] += 1;
        }
        let describe_cell = |lo: usize, hi: usize| {
            let lower = (lo > 0).then(|| &cuts[lo - 1]);
            let upper = (hi < cuts.len()).then(|| &cuts[hi]);
            describe_range(lower, upper)
        };
        let describe = |shape: &Shape| match *shape {
            Shape::Range { lo, hi } => describe_cell(lo, hi),
            Shape::Set(ref v) => {
                // Merge runs of adjacent cells into one range each.
                let mut runs: Vec<(usize, usize)> = Vec::new();
                for &c in v {
                    match runs.last_mut() {
                        Some(run) if run.1 + 1 == c => run.1 = c,
                        _ => runs.push((c, c)),
                    }
                }
                let ids: Vec<usize> = (0..runs.len()).collect();
                match runs.as_slice() {
                    [(lo, hi)] => describe_cell(*lo, *hi),
                    _ => list(&ids, " ∪ ", |i| {
                        format!("({})", describe_cell(runs[i].0, runs[i].1))
                    }),
                }
            }
        };
        Ok(self.finish(test, true, &h1, &h2, describe))
    }
}

/// Cut points on the pooled, sorted first half: every distinct integer value when
/// there are few; otherwise equal-mass quantiles plus geometrically finer tail
/// quantiles (levels 2⁻ʲ and 1 − 2⁻ʲ while at least 16 pooled draws lie beyond).
pub(super) fn choose_cuts<T: OrderedOutput>(sorted: &[T], bins: usize) -> Vec<T> {
    let mut cuts: Vec<T> = Vec::new();
    if T::INTEGER {
        for x in sorted {
            if cuts.last().is_none_or(|c| T::cmp_total(c, x) != Ordering::Equal) {
                cuts.push(x.clone());
                if cuts.len() > MAX_INTEGER_CELLS {
                    break;
                }
            }
        }
        if cuts.len() <= MAX_INTEGER_CELLS {
            return cuts;
        }
        cuts.clear();
    }
    let m = sorted.len();
    if m == 0 {
        return cuts;
    }
    let mut levels: Vec<f64> = (1..bins).map(|j| j as f64 / bins as f64).collect();
    let mut t = 1.0 / bins as f64;
    loop {
        t *= 0.5;
        if (m as f64) * t < 16.0 {
            break;
        }
        levels.push(t);
        levels.push(1.0 - t);
    }
    levels.sort_by(f64::total_cmp);
    for level in levels {
        let idx = ((level * m as f64) as usize).min(m - 1);
        let x = &sorted[idx];
        if cuts.last().is_none_or(|c| T::cmp_total(c, x) == Ordering::Less) {
            cuts.push(x.clone());
        }
    }
    cuts
}

/// Output types with a total order: any `Ord` type (through [`Ordinal`]) and `f64`
/// (by `total_cmp`).
pub(super) trait OrderedOutput: Clone + Debug {
    /// Whether distinct values should be kept as cells when there are few.
    const INTEGER: bool;
    fn cmp_total(a: &Self, b: &Self) -> Ordering;
}

/// An output compared by its own `Ord` (the path of [`Auditor::audit`]); displayed as
/// the value itself.
#[derive(Clone)]
pub(super) struct Ordinal<T>(pub(super) T);

impl<T: Debug> Debug for Ordinal<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Ord + Clone + Debug> OrderedOutput for Ordinal<T> {
    const INTEGER: bool = true;
    fn cmp_total(a: &Self, b: &Self) -> Ordering {
        a.0.cmp(&b.0)
    }
}

impl OrderedOutput for f64 {
    const INTEGER: bool = false;
    fn cmp_total(a: &Self, b: &Self) -> Ordering {
        a.total_cmp(b)
    }
}

/// Describes `{lower ≤ x < upper}` (either side may be open).
fn describe_range<T: Debug>(lower: Option<&T>, upper: Option<&T>) -> String {
    match (lower, upper) {
        (Some(a), Some(b)) => format!("{a:?} ≤ x < {b:?}"),
        (Some(a), None) => format!("x ≥ {a:?}"),
        (None, Some(b)) => format!("x < {b:?}"),
        (None, None) => "any outcome".to_string(),
    }
}
