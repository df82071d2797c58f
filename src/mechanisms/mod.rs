//! Differential-privacy mechanisms: each calibrates exact noise from `sampling` to a
//! sensitivity and privacy parameters, and documents its guarantee, its neighbouring
//! relation and its sensitivity norm.
//!
//! | mechanism | input → output | guarantee | sensitivity norm |
//! |---|---|---|---|
//! | [`Laplace`] | `f64` (or slice) → `f64` on a `2ᵏ` grid | pure ε-DP | L1 |
//! | [`Geometric`] | `i64` (or slice) → `i64` | pure ε-DP | L1 |
//! | [`AboveThreshold`] | stream of `f64` → ⊥…⊥⊤, halts | pure ε-DP | per-query Δ (L∞) |
//! | [`Sparse`] | stream → ⊥/⊤, halts after c ⊤ | pure ε-DP or (ε, δ)-DP | per-query Δ (L∞) |
//! | [`NumericSparse`] | stream → ⊥/noisy value, halts after c | pure ε-DP or (ε, δ)-DP | per-query Δ (L∞) |
//! | [`StandardSvt`] | stream → ⊥/⊤ (or value), per-query Tᵢ, halts after c | pure (ε₁+ε₂+ε₃)-DP | per-query Δ (L∞) |
//! | [`Gaussian::analytic`], [`Gaussian::classical`] | `f64` (or slice) → `f64` on a `2ᵏ` grid | (ε, δ)-DP | L2 |
//! | [`Gaussian::zcdp`] | `f64` (or slice) → `f64` on a `2ᵏ` grid | ρ-zCDP | L2 |
//! | [`DiscreteGaussian`] | `i64` (or slice) → `i64` | ρ-zCDP or (ε, δ)-DP | L2 |
//! | [`Exponential`] | scores (`f64` slice) → index | pure ε-DP (`k·ε` for top-k) | L∞ over candidates |
//! | [`PermuteAndFlip`] | scores → index | pure ε-DP | L∞ over candidates |
//! | [`ReportNoisyMax`] | scores → index (never the noisy value) | pure ε-DP | L∞ over candidates |
//! | [`RandomizedResponse`] | one respondent's bit → bit | pure ε-DP (local) | change of the bit |
//! | [`KaryRandomizedResponse`] | value in `0..k` → value | pure ε-DP (local) | change of the value |
//!
//! The neighbouring relation (add/remove one record, or substitute one record) is the
//! one under which the caller computed the sensitivity; the guarantee holds for it.
//!
//! ## Files
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | this overview and the one-call functions [`laplace()`], [`geometric()`], [`gaussian()`] |
//! | `mechanism.rs` | the [`Mechanism`] trait and its implementations for every mechanism |
//! | `laplace.rs` | [`Laplace`] on a power-of-two grid |
//! | `geometric.rs` | [`Geometric`], two-sided discrete Laplace noise on integers |
//! | `gaussian/` | [`Gaussian`] (analytic, classical, zCDP) on a grid; its calibrations |
//! | `discrete_gaussian.rs` | [`DiscreteGaussian`], the mechanism on integers |
//! | `accuracy.rs` | helpers of the accuracy statements, shared with `statistics::accuracy` |
//! | `exponential.rs` | [`Exponential`] and [`PermuteAndFlip`] |
//! | `noisy_max.rs` | [`ReportNoisyMax`] |
//! | `randomized_response.rs` | [`RandomizedResponse`] and [`KaryRandomizedResponse`] |
//! | `monotonicity.rs` | [`Monotonicity`]: the caller's promise of monotone scores or queries, which halves the noise |
//! | `svt/` | the sparse vector family: [`AboveThreshold`], [`Sparse`], [`NumericSparse`], [`StandardSvt`] |

pub(crate) mod accuracy;
mod discrete_gaussian;
mod exponential;
mod gaussian;
mod geometric;
mod laplace;
mod mechanism;
mod monotonicity;
mod noisy_max;
mod randomized_response;
pub mod svt;

pub use discrete_gaussian::DiscreteGaussian;
pub use exponential::{Exponential, PermuteAndFlip};
pub use gaussian::{Gaussian, MAX_SIGMA, MIN_DELTA, MIN_SIGMA, analytic_gaussian_delta, zcdp_delta};
pub use geometric::Geometric;
pub(crate) use geometric::{check_beta, discrete_laplace_half_width};
pub use laplace::Laplace;
pub(crate) use laplace::{check_all_finite, check_finite};
pub use mechanism::Mechanism;
pub use monotonicity::Monotonicity;
pub use noisy_max::ReportNoisyMax;
pub use randomized_response::{KaryRandomizedResponse, RandomizedResponse};
pub use svt::{
    AboveThreshold, Answer, NumericAnswer, NumericSparse, NumericStandardSvt, Sparse, StandardSvt,
    StreamingMechanism,
};

use crate::Error;
use crate::rng::ThreadRngSlot;
use std::cell::RefCell;

/// The one-call functions' state on a thread, in one thread-local (one look-up and one
/// borrow per call): the OS-keyed generator and the memo of each function.
struct OneCall {
    rng: ThreadRngSlot,
    laplace: Memo<Laplace>,
    geometric: Memo<Geometric>,
    gaussian: Memo<Gaussian>,
}

thread_local! {
    static ONE_CALL: RefCell<OneCall> = const {
        RefCell::new(OneCall {
            rng: ThreadRngSlot::new(),
            laplace: Memo::new(),
            geometric: Memo::new(),
            gaussian: Memo::new(),
        })
    };
}

/// One call: `value + Lap(sensitivity/epsilon)`, exact, on a public power-of-two grid,
/// from a fork-safe CSPRNG keyed by the operating system. Pure ε-DP for a query of L1
/// sensitivity `sensitivity`. See [`Laplace`]. The mechanisms of the last 16 parameter
/// pairs are kept per thread, keyed by their exact bits (the identical mechanism on a
/// hit); a new pair costs one construction (about a microsecond, nothing certified is
/// built for it).
///
/// ```
/// let noisy_mean_age = dpmech::laplace(38.2, 0.1, 1.0)?;
/// # let _ = noisy_mean_age;
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// Those of [`Laplace::new`] and [`Error::NonFiniteValue`] for a non-finite `value`;
/// [`Error::Entropy`] if the operating system cannot seed the generator.
pub fn laplace(value: f64, sensitivity: f64, epsilon: f64) -> Result<f64, Error> {
    ONE_CALL.with(|state| {
        let OneCall { rng, laplace, .. } = &mut *state.borrow_mut();
        let key = [sensitivity.to_bits(), epsilon.to_bits(), 0];
        let mechanism = laplace.get_or_try_insert(key, || Laplace::new(sensitivity, epsilon))?;
        check_finite(0, value)?;
        mechanism.release(value, rng.get()?)
    })
}

/// One call: `value + discrete Laplace noise` with `α = exp(−ε/Δ)`, exact, from a
/// fork-safe OS-keyed CSPRNG. Pure ε-DP for an integer query of L1 sensitivity
/// `sensitivity`. See [`Geometric`]. The last 16 parameter pairs are kept per thread, as
/// for [`laplace`].
///
/// ```
/// let noisy_count = dpmech::geometric(120, 1, 0.5)?;
/// # let _ = noisy_count;
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// Those of [`Geometric::new`]; [`Error::Entropy`] if the operating system cannot seed
/// the generator.
pub fn geometric(value: i64, sensitivity: u64, epsilon: f64) -> Result<i64, Error> {
    ONE_CALL.with(|state| {
        let OneCall { rng, geometric, .. } = &mut *state.borrow_mut();
        let key = [sensitivity, epsilon.to_bits(), 0];
        let mechanism = geometric.get_or_try_insert(key, || Geometric::new(sensitivity, epsilon))?;
        Ok(mechanism.release(value, rng.get()?))
    })
}

/// One call: `value + N(0, σ²)` with σ from the analytic calibration of Balle & Wang
/// (2018), as exact discrete Gaussian noise on a public power-of-two grid, from a
/// fork-safe OS-keyed CSPRNG. (ε, δ)-DP for a query of L2 sensitivity
/// `l2_sensitivity`. See [`Gaussian::analytic`]. The calibration (≈ 0.6 µs) is cached per
/// thread for the last 16 parameter sets, keyed by their exact bits: a repeated call
/// with the same `(Δ₂, ε, δ)` reuses the identical mechanism, so the cache never
/// changes the guarantee.
///
/// ```
/// let noisy_mean_age = dpmech::gaussian(38.2, 0.1, 1.0, 1e-6)?;
/// # let _ = noisy_mean_age;
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// Those of [`Gaussian::analytic`] and [`Error::NonFiniteValue`] for a non-finite
/// `value`; [`Error::Entropy`] if the operating system cannot seed the generator.
pub fn gaussian(value: f64, l2_sensitivity: f64, epsilon: f64, delta: f64) -> Result<f64, Error> {
    ONE_CALL.with(|state| {
        let OneCall { rng, gaussian, .. } = &mut *state.borrow_mut();
        let key = [l2_sensitivity.to_bits(), epsilon.to_bits(), delta.to_bits()];
        let mechanism =
            gaussian.get_or_try_insert(key, || Gaussian::analytic(l2_sensitivity, epsilon, delta))?;
        check_finite(0, value)?;
        mechanism.release(value, rng.get()?)
    })
}

/// Slots of a one-call function's per-thread memo.
const MEMO_SLOTS: usize = 16;

/// The mechanisms a one-call function built last on this thread, keyed by the exact
/// bits of their parameters (so a hit is the identical mechanism: the memo never changes
/// a guarantee), at most [`MEMO_SLOTS`] of them, replaced in turn: bounded memory
/// whatever the number of distinct parameters, and a program cycling through up to 16
/// parameter sets never rebuilds one. The keys are kept apart from the mechanisms, so
/// that a lookup reads 384 contiguous bytes (a slot's key counts only once the slot is
/// filled).
struct Memo<M> {
    keys: [[u64; 3]; MEMO_SLOTS],
    slots: [Option<M>; MEMO_SLOTS],
    next: usize,
    /// The slot of the last hit or insertion, compared first (a program that repeats
    /// one parameter set finds it with one comparison).
    last: usize,
}

impl<M> Memo<M> {
    const fn new() -> Self {
        Self {
            keys: [[0; 3]; MEMO_SLOTS],
            slots: [const { None }; MEMO_SLOTS],
            next: 0,
            last: 0,
        }
    }

    /// Whether slot `i` holds the mechanism of `key`.
    #[inline]
    fn holds(&self, i: usize, key: &[u64; 3]) -> bool {
        self.keys[i] == *key && self.slots[i].is_some()
    }

    /// The mechanism of `key`, built by `build` (and remembered) when absent; a build
    /// error is returned and nothing is remembered.
    #[inline]
    fn get_or_try_insert(
        &mut self,
        key: [u64; 3],
        build: impl FnOnce() -> Result<M, Error>,
    ) -> Result<&M, Error> {
        let index = if self.holds(self.last, &key) {
            self.last
        } else {
            match (0..MEMO_SLOTS).find(|&i| self.holds(i, &key)) {
                Some(i) => i,
                None => {
                    let i = self.next;
                    self.slots[i] = Some(build()?);
                    self.keys[i] = key;
                    self.next = (i + 1) % MEMO_SLOTS;
                    i
                }
            }
        };
        self.last = index;
        Ok(self.slots[index].as_ref().expect("filled above"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memo_remembers_the_last_sixteen_keys_and_nothing_that_failed() {
        let mut memo = Memo::<u64>::new();
        let builds = std::cell::Cell::new(0);
        let get = |memo: &mut Memo<u64>, key: [u64; 3]| {
            *memo
                .get_or_try_insert(key, || {
                    builds.set(builds.get() + 1);
                    Ok(key[0] * 10)
                })
                .unwrap()
        };
        // An empty memo holds nothing, not even the all-zero key its slots start with.
        assert_eq!(get(&mut memo, [0; 3]), 0);
        for k in 1..16 {
            assert_eq!(get(&mut memo, [k, 1, 2]), k * 10);
        }
        // 16 keys, each built once; asked again in any order, none is rebuilt.
        for k in (1..16).rev() {
            assert_eq!(get(&mut memo, [k, 1, 2]), k * 10);
        }
        assert_eq!(get(&mut memo, [0; 3]), 0);
        assert_eq!(builds.get(), 16);
        // A failed build is returned and remembered nowhere: the slot it would take
        // keeps its key and mechanism.
        let failed = memo.get_or_try_insert([99, 0, 0], || {
            Err(Error::InvalidParameter {
                name: "test",
                value: 0.0,
                reason: "a failing build",
            })
        });
        assert!(failed.is_err());
        let mut rebuilt = false;
        assert_eq!(
            *memo
                .get_or_try_insert([0; 3], || {
                    rebuilt = true;
                    Ok(7)
                })
                .unwrap(),
            0
        );
        assert!(!rebuilt);
        // A 17th key replaces the oldest (the all-zero key, in slot 0).
        assert_eq!(*memo.get_or_try_insert([16, 1, 2], || Ok(160)).unwrap(), 160);
        assert_eq!(*memo.get_or_try_insert([0; 3], || Ok(7)).unwrap(), 7);
    }
}
