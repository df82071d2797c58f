//! Privacy loss distributions (PLD): numerical composition whose answers are
//! **certified upper bounds**.
//!
//! The privacy loss of a mechanism M on neighbours x, x′ is `L = ln(P(o)/Q(o))` with
//! `o ~ P = M(x)`, `Q = M(x′)`; its distribution determines the whole privacy curve,
//! `δ(ε) = E[(1 − e^(ε − L))₊]` (plus the mass at `L = +∞`), and the loss of
//! independent releases is the **sum** of their losses, so composition is convolution
//! (Meiser & Mohammadi 2018; Koskela et al. 2020; Doroshenko et al. 2022). A [`Pld`]
//! holds this distribution in both directions (P vs Q and Q vs P) where they differ.
//!
//! # Why every answer is an upper bound
//!
//! A direction is held as a measure μ of P-mass on the grid `h·ℤ` (plus a mass at
//! `+∞`); its answer is `δ_ε(μ) = ∫ (1 − e^(ε − l))₊ dμ(l)`, and composition is
//! convolution. For any non-negative ν (the other releases), `l ↦ δ_ε(δ_l ∗ ν)` is
//! **non-decreasing in l and convex in e^(−l)** (a non-negative sum of the functions
//! `(1 − e^(ε − m)·e^(−l))₊`). Every operation below moves μ up in that order, so
//! every composed answer dominates the true one, for every ε:
//!
//! * **Rounding a loss up** (builders for atoms and for Laplace's continuous part,
//!   regridding between unequal steps): monotonicity.
//! * **Splitting** ("connect the dots", Doroshenko et al. 2022): a mass p at a loss l
//!   (or a whole bucket of losses in `[a, b]`) is shared between two grid points
//!   `a ≤ l ≤ b` so that both its P-mass and its Q-mass `∫ e^(−l) dμ` are kept — a
//!   mean-preserving spread of `e^(−L)`, so convexity makes it dominate (the split
//!   pair is also a pair of which the original is a post-processing). The Gaussian and
//!   subsampled-Gaussian builders split each bucket (`Buckets::add_split`), and
//!   coarsening splits every odd point between its neighbours (`Dist::coarsen`).
//!   Unlike rounding up, a split changes `δ` only at **second order** in the step (not
//!   at all where both points lie above ε, where the weight is linear in `e^(−l)`).
//! * **Masses rounded up.** Every mass a builder stores is an upper bound on the true
//!   mass (outward-rounded arithmetic, `erfc` charged its relative error 2·10⁻¹³;
//!   a split's two shares from enclosures of both masses). Total mass above 1 is
//!   harmless: `δ` is linear with non-negative weights.
//! * **Tails charged to δ.** Mass cut off on either side (at most `tail` per side per
//!   operation) is moved to `L = +∞`, which counts fully in `δ` for every ε.
//! * **Convolution error bounded.** Each convolution (direct or FFT) reports a proven
//!   bound on the ℓ2 norm of its floating-point error (module `fft`, from Higham's
//!   bounds for the radix-2 FFT); the bound is carried through later operations
//!   (Young's inequality; a split's matrix has ℓ2 norm at most √2) and added to `δ(ε)`
//!   as `error·√(number of grid points summed)` (Cauchy–Schwarz, each weight ≤ 1). The
//!   sum may stop early, the points above the cut being bounded by a Chernoff bound from
//!   tracked cumulants (valid whatever the float error), which keeps the charge small
//!   when δ is (e.g. 10⁻⁹ after 1000 releases). Convolutions of up to 2²² products
//!   (squares of up to about 2900 points) are computed **directly**, with a relative
//!   error only and no absolute one; since an absolute error introduced early is
//!   multiplied by the number of later copies (Young's inequality), keeping the early
//!   squarings exact is what removes the floor: for 1000 Laplace releases the ℓ2
//!   bound falls from 2.9·10⁻¹⁰ to 4·10⁻¹⁵, and ε(10⁻⁹) from 25.600 to 22.83. Larger
//!   convolutions are **split by mass**: the bulk of each vector (all but 10⁻¹² of its
//!   mass on each side, as many points as that budget allows) is convolved directly,
//!   and only the products involving a tail go through the FFT, whose absolute error is
//!   proportional to the tails' norms: about 10⁻¹² of an FFT of the whole. (A Poisson-
//!   subsampled Gaussian step spans some 9000 points, nearly all of them far-tail mass;
//!   after 1000 steps the ℓ2 bound falls from 3.3·10⁻¹¹ to 10⁻²², and ε(10⁻⁹) from 3.126
//!   to 2.991, exact 2.990.)
//! * **Queries.** `δ(ε)` sums non-negative terms and is inflated by `γ_(n+16)`;
//!   `ε(δ)` is only returned after that certified `δ(ε) ≤ δ` accepts it.
//! * **Never looser than a closed form.** Each builder attaches the closed-form
//!   certificates of its mechanism ([`ClosedForms`]: pure ε for Laplace, discrete
//!   Laplace, randomized response and their Poisson-subsampled versions (amplified
//!   `ln(1 + q(e^ε − 1))`); ρ for the Gaussian and discrete Gaussian; the RDP curve of
//!   Mironov 2017 / Mironov, Talwar & Zhang 2019 for Laplace and the subsampled
//!   Gaussian; `(ε, δ)` for a generic approximate-DP step). They compose with the PLD
//!   ([`Pld::compose`], [`Pld::self_compose`]; only what both sides know survives), and
//!   [`Pld::epsilon_for_delta`] / [`Pld::delta_for_epsilon`] answer the **minimum** of
//!   the PLD's certified answer and every closed form (optimal composition of pure
//!   steps at the largest ε, heterogeneous advanced, sequential, tight zCDP, RDP), each
//!   an upper bound rounded up. [`Pld::epsilon_certified`] / [`Pld::delta_certified`]
//!   also say which [`Bound`] won; [`Pld::pld_epsilon_for_delta`] and
//!   [`Pld::pld_delta_for_epsilon`] give the PLD alone. (1000 randomized responses at
//!   ε = 0.1, δ = 10⁻⁹: the PLD alone 23.313, optimal composition, exact there, 23.276,
//!   which is answered.)
//!
//! # Tightness and cost
//!
//! The default [`Grid`] takes `h` = 2⁻¹⁰ of each release's loss scale for builders
//! that round up (a cost of at most `h` per release) and a coarser step for those that
//! split (2⁻⁷ of the Gaussian's loss deviation; 1/16 of the subsampled Gaussian's).
//! [`Pld::self_compose`] splits the growing base down to at most 2¹⁰ points before each
//! squaring, as long as its step stays below 1/16 of its spread, so its convolutions
//! stay small: on a shared 2-core machine 1000 Laplace releases take about 4 ms, 1000
//! Gaussians about 8 ms, 1000 Poisson-subsampled Gaussian steps (q = 0.01, σ = 1) about
//! 86 ms (`benches/pld.rs`), each within 1 % of the exact ε in the test cases (`tests/pld.rs`;
//! down to δ = 10⁻¹² for the Gaussian, the Laplace and the discrete Laplace, and
//! 10⁻⁹ for the subsampled Gaussian, `tests/pld_closed_forms.rs`). A finer [`Grid`] is
//! never looser at the builder, and costs proportionally more there, up to its cap.
//!
//! # Cost bounds (every call answers in bounded time or refuses)
//!
//! * **Builders** lay out at most [`MAX_BUILD_POINTS`] = 2¹⁶ grid points per direction:
//!   a finer requested step (e.g. `Grid::new(1e-12)`) is doubled until the support
//!   fits, which rounds losses up (or splits), so it is never less safe, only no finer.
//!   The discrete Laplace builders read one output per unit of sensitivity (at most
//!   2²⁰) and the discrete Gaussian one per integer within about 12σ (σ ≤ 10⁵), each by
//!   a product (a recurrence with an outward ulp, restarted from `exp` every 64
//!   outputs); above 2¹⁶ outputs, runs of consecutive outputs share one atom at the
//!   run's highest loss (rounding losses up, by less than one grid step), so bucketing
//!   and subsampling cost at most 2¹⁶ steps. The largest discrete builds (Δ = 2²⁰,
//!   σ = 10⁵, finest grid) take 27, 34 (Poisson-subsampled) and 72 ms on the reference
//!   machine, quiet (97, 234 and 223 ms before); every builder answers within 0.1 s
//!   (`tests/bounded_time.rs` prints them). Parameters
//!   whose losses overflow `f64` are refused with a typed error.
//! * **Composition** holds at most 2¹⁹ points per direction (4 MiB), coarsening by
//!   splitting beyond; one [`Pld::compose`] is one convolution, an FFT of at most 2²⁰
//!   complex points per buffer (32 MiB).
//! * [`Pld::self_compose`] refuses `k` above [`MAX_SELF_COMPOSITIONS`] = 2³² with
//!   [`Error::InvalidParameter`] (so do [`PldAccountant::new`] for a step's count and
//!   [`smallest_noise`] for its `k`); below, it takes at most 2·32 convolutions, in
//!   practice far smaller than the cap (k = 2³² Poisson-subsampled Gaussian steps: about
//!   0.15 s).
//! * **Queries**: `δ(ε)` is one pass over the points; `ε(δ)` brackets its answer by
//!   doubling steps and bisects, O(log) passes.
//!
//! # Neighbouring relation and adaptivity
//!
//! A PLD describes one pair of neighbouring inputs under the relation its parameters
//! were computed for (e.g. a sensitivity under add/remove or under substitution); the
//! builders here are worst-case pairs, valid for either relation with the matching
//! sensitivity. Composition here assumes the releases are **fixed in advance**
//! (non-adaptive choice of mechanisms); adaptively chosen mechanisms need a privacy
//! filter, which this module does not provide.
//!
//! ```
//! use dpmech::composition::pld::{Grid, Pld};
//! // 100 Laplace releases at ε = 0.1 each, (ε, δ = 1e-6) of the whole:
//! let one = Pld::laplace(0.1, Grid::default())?;
//! let all = one.self_compose(100)?;
//! let eps = all.epsilon_for_delta(1e-6)?;
//! assert!(eps < 10.0 * 0.5); // far below sequential composition's 10
//! # Ok::<(), dpmech::Error>(())
//! ```

mod accountant;
mod build;
mod dist;
mod fft;

use crate::Error;
use crate::composition::closed::{Bound, Certified, ClosedForms};
use crate::privacy::PrivacyLoss;
use dist::Dist;

pub use accountant::{PldAccountant, PldStep};

/// Most grid points a builder lays out per direction: a finer step is doubled until the
/// mechanism's support fits (rounding up, never less safe). Bounds every builder's cost.
pub const MAX_BUILD_POINTS: usize = 1 << 16;

/// Most releases [`Pld::self_compose`] composes in one call (2³², about 4.3·10⁹);
/// more is refused with a typed error. The cost of self-composition grows with the
/// support, which widens like `√k`; at this maximum it stays below about 0.2 s for
/// the builders of this module at the default grid.
pub const MAX_SELF_COMPOSITIONS: u64 = 1 << 32;

/// Self-composition coarsens its base only while it holds more points than this…
const COARSEN_ABOVE: usize = 1 << 10;

/// … and while its step stays below its standard deviation over this.
const STEPS_PER_SPREAD: f64 = 16.0;

/// The discretisation of a [`Pld`]: a power-of-two step `h` for the losses and the
/// tail mass that may be cut off (and charged to δ) per side per operation.
///
/// The default grid is **relative**: each builder that rounds losses up uses the step
/// 2⁻¹⁰ times its mechanism's loss scale (ε for Laplace and randomized response, `1/t`
/// for the discrete Laplace), so point masses at ±ε fall exactly on the grid and the
/// rounding costs at most about 0.1 % of each release's loss, whatever its size; the
/// builders that split their buckets (see the [module docs](self)) use a coarser
/// relative step (2⁻⁷ of `Δ/σ` for the Gaussian, 1/16 of the loss's spread for the
/// subsampled Gaussian). [`Grid::new`] fixes one absolute step instead. Composing PLDs
/// on different steps moves both to the coarser one (rounding up again).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    /// `None`: relative (2⁻¹⁰ of the loss scale); `Some(h)`: the step h.
    step: Option<f64>,
    tail: f64,
}

impl Default for Grid {
    /// Relative step (2⁻¹⁰ of each mechanism's loss scale), tail 10⁻²⁴.
    fn default() -> Self {
        Grid {
            step: None,
            tail: 1e-24,
        }
    }
}

impl Grid {
    /// A grid of fixed step `h ∈ [10⁻¹², 1]` for every mechanism (a finer grid is
    /// tighter and never less safe; a power of two keeps every loss exact). A builder
    /// uses at most [`MAX_BUILD_POINTS`] points per direction: where `h` would need
    /// more, it doubles `h` until the support fits (see the [module docs](self)).
    ///
    /// ```
    /// use dpmech::composition::pld::Grid;
    /// assert_eq!(Grid::new(0.001)?.step(), Some(0.001));
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`step`) if `step` is not in [10⁻¹², 1].
    pub fn new(step: f64) -> Result<Self, Error> {
        if !(1e-12..=1.0).contains(&step) {
            return Err(Error::InvalidParameter {
                name: "step",
                value: step,
                reason: "the PLD grid step must lie in [1e-12, 1]",
            });
        }
        Ok(Grid {
            step: Some(step),
            ..Grid::default()
        })
    }

    /// The same grid with a different tail mass, in `[10⁻³⁰⁰, 10⁻⁶]`. Smaller tails
    /// answer smaller δ and cost a slightly wider support.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`tail`) if `tail` is not in [10⁻³⁰⁰, 10⁻⁶].
    pub fn with_tail(self, tail: f64) -> Result<Self, Error> {
        if !(1e-300..=1e-6).contains(&tail) {
            return Err(Error::InvalidParameter {
                name: "tail",
                value: tail,
                reason: "the PLD tail mass must lie in [1e-300, 1e-6]",
            });
        }
        Ok(Grid { tail, ..self })
    }

    /// The fixed step `h`, or `None` for the relative default.
    pub fn step(&self) -> Option<f64> {
        self.step
    }

    /// The step for a mechanism whose losses have scale `scale` (2⁻¹⁰·scale, exactly,
    /// kept within [10⁻¹², 1]).
    fn step_for_scale(&self, scale: f64) -> f64 {
        match self.step {
            Some(h) => h,
            None if scale.is_finite() && scale > 0.0 => (scale / 1024.0).clamp(1e-12, 1.0),
            None => 1.0 / 1024.0,
        }
    }

    /// The tail mass cut off per side per operation.
    pub fn tail(&self) -> f64 {
        self.tail
    }
}

/// A discretised privacy loss distribution whose every answer is a certified upper
/// bound on the true one (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct Pld {
    tail: f64,
    /// Loss of P = M(x) against Q = M(x′).
    forward: Dist,
    /// Loss of Q against P, when it differs from `forward`.
    backward: Option<Dist>,
    /// Closed-form certificates of the same releases (see [`ClosedForms`]).
    closed: ClosedForms,
}

impl Pld {
    fn symmetric(forward: Dist, grid: Grid) -> Self {
        Pld {
            tail: grid.tail,
            forward,
            backward: None,
            closed: ClosedForms::default(),
        }
    }

    /// The same PLD with closed-form certificates of the same release attached.
    pub(crate) fn with_closed(mut self, closed: ClosedForms) -> Pld {
        self.closed = closed;
        self
    }

    /// The closed-form certificates known for these releases (see [`ClosedForms`]):
    /// what [`epsilon_certified`](Self::epsilon_certified) compares the PLD against.
    pub fn closed_forms(&self) -> &ClosedForms {
        &self.closed
    }

    /// The PLD of both releases, independent and fixed in advance: the sum of the losses.
    ///
    /// ```
    /// use dpmech::composition::pld::{Grid, Pld};
    /// let both = Pld::laplace(1.0, Grid::default())?
    ///     .compose(&Pld::gaussian(2.0, 1.0, Grid::default())?);
    /// assert!(both.epsilon_for_delta(1e-6)? < 1.0 + 2.8);
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    pub fn compose(&self, other: &Pld) -> Pld {
        let tail = self.tail.max(other.tail);
        let forward = self.forward.compose(&other.forward, tail);
        let backward = match (&self.backward, &other.backward) {
            (None, None) => None,
            (a, b) => Some(
                a.as_ref()
                    .unwrap_or(&self.forward)
                    .compose(b.as_ref().unwrap_or(&other.forward), tail),
            ),
        };
        Pld {
            tail,
            forward,
            backward,
            closed: self.closed.compose(&other.closed),
        }
    }

    /// `k` releases of this mechanism (`1 ≤ k ≤` [`MAX_SELF_COMPOSITIONS`] = 2³²), in
    /// O(log k) convolutions (repeated squaring): at most 2·32, each of at most 2¹⁹
    /// points per direction. A larger `k` is refused with [`Error::InvalidParameter`]
    /// (`name: "k"`) at once, rather than spending minutes to report a useless bound.
    ///
    /// ```
    /// use dpmech::composition::pld::{Grid, Pld};
    /// let k = Pld::gaussian(10.0, 1.0, Grid::default())?.self_compose(100)?;
    /// // 100 Gaussians of σ = 10 are exactly one of σ = 1: exact ε(1e-5) = 4.3772.
    /// let eps = k.epsilon_for_delta(1e-5)?;
    /// assert!(eps > 4.3772 && eps < 4.3772 * 1.01);
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`k`) if `k = 0` or `k > MAX_SELF_COMPOSITIONS`.
    pub fn self_compose(&self, k: u64) -> Result<Pld, Error> {
        check_count(k)?;
        let power = |d: &Dist| {
            // Before each squaring the base is coarsened (by splitting, see
            // `Dist::coarsen`, whose cost in tightness is of second order in the step
            // over the spread of the losses) while it holds more than `COARSEN_ABOVE`
            // points and its step stays below 1/`STEPS_PER_SPREAD` of its standard
            // deviation: the FFTs stay small whatever k (the spread grows like √k), and
            // the answer stays within a hair of the uncoarsened one.
            let mut result: Option<Dist> = None;
            let mut base = d.clone();
            let mut rest = k;
            loop {
                if rest & 1 == 1 {
                    result = Some(match result {
                        None => base.clone(),
                        Some(r) => r.compose(&base, self.tail),
                    });
                }
                rest >>= 1;
                if rest == 0 {
                    break;
                }
                let spread = base.spread();
                while base.mass.len() > COARSEN_ABOVE && 2.0 * base.step * STEPS_PER_SPREAD <= spread {
                    base.coarsen();
                }
                base = base.square(self.tail);
            }
            result.unwrap_or(base)
        };
        Ok(Pld {
            tail: self.tail,
            forward: power(&self.forward),
            backward: self.backward.as_ref().map(power),
            closed: self.closed.repeat(k).unwrap_or_default(),
        })
    }

    /// The same PLD with each direction coarsened by splitting (certified, see
    /// [`Dist::coarsen`]) while it holds more than `max_points` points and its step
    /// stays below 1/`steps_per_spread` of its spread — the rule of
    /// [`self_compose`](Self::self_compose) (2¹⁰, 16), for compositions grown one
    /// release at a time (the online accountant).
    pub(crate) fn compacted(&self, max_points: usize, steps_per_spread: f64) -> Pld {
        let compact = |d: &Dist| {
            let mut d = d.clone();
            let spread = d.spread();
            while d.mass.len() > max_points && 2.0 * d.step * steps_per_spread <= spread {
                d.coarsen();
            }
            d
        };
        Pld {
            tail: self.tail,
            forward: compact(&self.forward),
            backward: self.backward.as_ref().map(compact),
            closed: self.closed.clone(),
        }
    }

    fn directions(&self) -> impl Iterator<Item = &Dist> {
        core::iter::once(&self.forward).chain(self.backward.as_ref())
    }

    /// A certified upper bound on `δ(ε)`, the smallest δ for which the releases are
    /// (ε, δ)-DP (`ε ≥ 0`; `+∞` gives the mass of infinite loss): the smaller of the
    /// PLD's answer and the best closed form known for the same releases (see
    /// [`delta_certified`](Self::delta_certified)).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is NaN or negative.
    pub fn delta_for_epsilon(&self, epsilon: f64) -> Result<f64, Error> {
        Ok(self.delta_certified(epsilon)?.delta)
    }

    /// The PLD's own certified `δ(ε)`, without the closed forms.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is NaN or negative.
    pub fn pld_delta_for_epsilon(&self, epsilon: f64) -> Result<f64, Error> {
        if epsilon.is_nan() || epsilon < 0.0 {
            return Err(Error::InvalidEpsilon { value: epsilon });
        }
        Ok(self.directions().map(|d| d.delta(epsilon)).fold(0.0, f64::max))
    }

    /// A certified `δ(ε)` and the rule that gave it: the minimum of the PLD's answer
    /// and of every closed form in [`closed_forms`](Self::closed_forms) (each an upper
    /// bound, so the minimum is one too); ties go to the PLD.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is NaN or negative.
    pub fn delta_certified(&self, epsilon: f64) -> Result<Certified, Error> {
        let pld = self.pld_delta_for_epsilon(epsilon)?;
        let mut best = Certified {
            epsilon,
            delta: pld,
            bound: Bound::Pld,
        };
        if let Some((d, bound)) = self.closed.delta(epsilon)?
            && d < pld
        {
            best.delta = d;
            best.bound = bound;
        }
        Ok(best)
    }

    /// A certified upper bound on the smallest ε for which the releases are
    /// (ε, δ)-DP, `δ ∈ (0, 1)`: the smaller of the PLD's answer and the best closed form
    /// known for the same releases (see [`epsilon_certified`](Self::epsilon_certified)).
    /// A typed error when neither answers (e.g. the PLD's mass of infinite loss,
    /// including the charged tails, is at least δ, and no closed form is known).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDelta`] if `delta` is not in (0, 1); [`Error::Unattainable`] if
    /// neither the PLD (its mass of infinite loss, with the charged tails, is at least δ)
    /// nor a closed form gives a finite ε.
    pub fn epsilon_for_delta(&self, delta: f64) -> Result<f64, Error> {
        Ok(self.epsilon_certified(delta)?.epsilon)
    }

    /// The PLD's own certified ε(δ), without the closed forms.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDelta`] if `delta` is not in (0, 1); [`Error::Unattainable`] if the
    /// mass of infinite loss (with the charged tails) is at least δ.
    pub fn pld_epsilon_for_delta(&self, delta: f64) -> Result<f64, Error> {
        let delta = crate::privacy::check_delta(delta)?;
        let mut worst = 0.0f64;
        for d in self.directions() {
            match d.epsilon(delta) {
                Some(e) => worst = worst.max(e),
                None => {
                    return Err(Error::Unattainable {
                        what: "no finite epsilon reaches this delta: the mass of infinite loss \
                               (including tails charged by the grid) is at least delta; use a \
                               larger delta or Grid::with_tail with a smaller tail",
                    });
                }
            }
        }
        Ok(worst)
    }

    /// A certified ε(δ) and the rule that gave it: the minimum of the PLD's answer and
    /// of every closed form in [`closed_forms`](Self::closed_forms) — optimal
    /// composition for pure steps, heterogeneous advanced composition, sequential
    /// composition, zCDP and RDP (each an upper bound, rounded up, so the minimum is one
    /// too); ties go to the PLD. Never above any of them.
    ///
    /// ```
    /// use dpmech::composition::closed::Bound;
    /// use dpmech::composition::optimal;
    /// use dpmech::composition::pld::{Grid, Pld};
    /// // 1000 randomized responses at ε = 0.1, δ = 1e-9: optimal composition is exact
    /// // for them, so it beats the PLD's discretisation, and is reported.
    /// let all = Pld::randomized_response(0.1, Grid::default())?.self_compose(1000)?;
    /// let answer = all.epsilon_certified(1e-9)?;
    /// assert!(answer.epsilon <= optimal::epsilon(1000, 0.1, 1e-9)?);
    /// assert_eq!(answer.bound, Bound::Optimal);
    /// // 1000 Laplace releases: the PLD wins (22.83 against optimal's 23.28).
    /// let laplace = Pld::laplace(0.1, Grid::default())?.self_compose(1000)?;
    /// assert_eq!(laplace.epsilon_certified(1e-9)?.bound, Bound::Pld);
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDelta`] if `delta` is not in (0, 1); [`Error::Unattainable`] if
    /// neither the PLD (its mass of infinite loss, with the charged tails, is at least δ)
    /// nor a closed form gives a finite ε.
    pub fn epsilon_certified(&self, delta: f64) -> Result<Certified, Error> {
        let delta = crate::privacy::check_delta(delta)?;
        let pld = self.pld_epsilon_for_delta(delta);
        let closed = self.closed.epsilon(delta)?;
        match (pld, closed) {
            (Ok(p), Some((c, bound))) if c < p => Ok(Certified {
                epsilon: c,
                delta,
                bound,
            }),
            (Ok(p), _) => Ok(Certified {
                epsilon: p,
                delta,
                bound: Bound::Pld,
            }),
            (Err(_), Some((c, bound))) => Ok(Certified {
                epsilon: c,
                delta,
                bound,
            }),
            (Err(e), None) => Err(e),
        }
    }

    /// The guarantee `(ε, δ)` with ε = [`epsilon_for_delta`](Self::epsilon_for_delta)`(δ)`.
    ///
    /// # Errors
    ///
    /// Those of [`epsilon_for_delta`](Self::epsilon_for_delta).
    pub fn privacy_loss(&self, delta: f64) -> Result<PrivacyLoss, Error> {
        let epsilon = self.epsilon_for_delta(delta)?;
        if epsilon == 0.0 {
            return Ok(PrivacyLoss::Approximate {
                epsilon: f64::MIN_POSITIVE,
                delta,
            });
        }
        PrivacyLoss::approximate(epsilon, delta)
    }

    /// The grid step currently used (it may have grown beyond the requested one, see
    /// the module docs).
    pub fn step(&self) -> f64 {
        self.directions().map(Dist::step).fold(0.0, f64::max)
    }

    /// Number of finite grid points held (both directions).
    pub fn len(&self) -> usize {
        self.directions().map(|d| d.mass.len()).sum()
    }

    /// Whether no finite grid point is held (all mass at infinite loss).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The inverse question: the smallest noise parameter `σ` (to a relative 10⁻³) for
/// which `k` releases of `mechanism(σ)` are `(ε, δ)`-DP by the certified PLD — e.g. the
/// noise multiplier of DP-SGD. The returned `σ` itself is certified to fit; larger
/// noise must make the mechanism more private (monotone in `σ`).
///
/// `σ` is searched in `[2⁻¹⁰, 2²⁰]`: a typed error if even `σ = 10⁶` does not fit;
/// if the floor `2⁻¹⁰` already fits it is returned as is (a smaller σ may fit too: the
/// search does not go below it). A target ε above 700 is refused: the PLD builders
/// refuse such an ε too (`e^ε` overflows `f64`), every σ of the range would fit any
/// mechanism whose loss stays finite, and the answer would be the search's floor, not
/// a property of the mechanism.
///
/// Cost: at most 31 calls of `mechanism` and of [`Pld::self_compose`]`(k)` (up to 21
/// doublings of σ then 10 bisection steps, or up to 10 halvings then 10 bisection steps,
/// or 11 calls when the floor fits); `k` above [`MAX_SELF_COMPOSITIONS`] (or 0) and ε
/// above 700 are refused before the first.
///
/// ```
/// use dpmech::composition::pld::{Grid, Pld, smallest_noise};
/// // 100 Gaussian releases within (1, 1e-5): σ ≈ 10 × the one-release analytic σ (3.73).
/// let sigma = smallest_noise(100, 1.0, 1e-5, |s| Pld::gaussian(s, 1.0, Grid::default()))?;
/// assert!(sigma > 37.3 && sigma < 37.3 * 1.01);
/// // An ε that is no privacy guarantee is refused before any PLD is built.
/// assert!(smallest_noise(100, 1e300, 1e-5, |s| Pld::gaussian(s, 1.0, Grid::default())).is_err());
/// # Ok::<(), dpmech::Error>(())
/// ```
///
/// # Errors
///
/// * [`Error::InvalidParameter`] (`k`) if `k = 0` or `k > MAX_SELF_COMPOSITIONS`;
/// * [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
///   [`Error::InvalidParameter`] (`epsilon`) if it is above 700;
///   [`Error::InvalidDelta`] if `delta` is not in (0, 1);
/// * any error `mechanism` returns for a σ tried;
/// * [`Error::Unattainable`] if even σ = 10⁶ does not fit.
pub fn smallest_noise<F>(k: u64, epsilon: f64, delta: f64, mechanism: F) -> Result<f64, Error>
where
    F: Fn(f64) -> Result<Pld, Error>,
{
    check_count(k)?;
    let epsilon = crate::privacy::check_epsilon(epsilon)?;
    if epsilon > MAX_TARGET_EPSILON {
        return Err(Error::InvalidParameter {
            name: "epsilon",
            value: epsilon,
            reason: "smallest_noise answers targets epsilon <= 700, as the PLD builders: beyond, \
                     e^epsilon overflows and every noise of the search range fits",
        });
    }
    let delta = crate::privacy::check_delta(delta)?;
    let fits = |sigma: f64| -> Result<bool, Error> {
        let pld = mechanism(sigma)?.self_compose(k)?;
        match pld.epsilon_for_delta(delta) {
            Ok(e) => Ok(e <= epsilon),
            Err(Error::Unattainable { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    };
    let (mut lo, mut hi) = (1.0f64, 1.0f64);
    if fits(hi)? {
        while lo > SIGMA_FLOOR {
            if !fits(lo / 2.0)? {
                break;
            }
            lo /= 2.0;
        }
        if lo <= SIGMA_FLOOR {
            // The floor fits: returned as is (see the docs), without bisecting below it.
            return Ok(lo);
        }
        hi = lo;
        lo /= 2.0;
    } else {
        while !fits(hi)? {
            if hi >= 1e6 {
                return Err(Error::Unattainable {
                    what: "no noise up to sigma = 1e6 keeps these releases within the target",
                });
            }
            lo = hi;
            hi *= 2.0;
        }
    }
    while hi / lo > 1.001 {
        let mid = (lo * hi).sqrt();
        if fits(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

/// The largest target ε of [`smallest_noise`] (that of the PLD builders).
const MAX_TARGET_EPSILON: f64 = 700.0;

/// The smallest σ [`smallest_noise`] tries, `2⁻¹⁰`.
const SIGMA_FLOOR: f64 = 1.0 / 1024.0;

/// A composition count in `1..=MAX_SELF_COMPOSITIONS`.
fn check_count(k: u64) -> Result<u64, Error> {
    if k == 0 {
        return Err(Error::InvalidParameter {
            name: "k",
            value: 0.0,
            reason: "self-composition needs k >= 1",
        });
    }
    if k > MAX_SELF_COMPOSITIONS {
        return Err(Error::InvalidParameter {
            name: "k",
            value: k as f64,
            reason: "at most 2^32 (4294967296) releases per self-composition \
                     (MAX_SELF_COMPOSITIONS): the cost grows with k",
        });
    }
    Ok(k)
}

#[cfg(test)]
mod tests;
