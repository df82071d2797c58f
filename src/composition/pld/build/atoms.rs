//! Point-mass builders: randomized response, the worst cases of a stated ε or (ε, δ)
//! guarantee, and their subsampled versions.

use super::{
    Buckets, U, amplified_up, certify, check_large_epsilon, check_sampling_rate, index_up, step_for,
};
use crate::Error;
use crate::composition::closed::ClosedForms;
use crate::composition::pld::dist::Dist;
use crate::composition::pld::{Grid, Pld};
use crate::privacy::check_categories;
use crate::privacy::{PrivacyLoss, check_delta, round};

impl Pld {
    /// Binary randomized response with `ε` (keep the bit with probability
    /// `e^ε/(1 + e^ε)`): loss `±ε`. This is also the worst case of every pure ε-DP
    /// mechanism, see [`pure`](Self::pure).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700.
    pub fn randomized_response(epsilon: f64, grid: Grid) -> Result<Pld, Error> {
        Self::k_ary_randomized_response(2, epsilon, grid)
    }

    /// k-ary randomized response with `ε` (the true value with probability
    /// `e^ε/(e^ε + k − 1)`): loss `+ε`, `0` (k − 2 outputs) or `−ε`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`k`) if `k < 2`;
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700.
    pub fn k_ary_randomized_response(k: u64, epsilon: f64, grid: Grid) -> Result<Pld, Error> {
        let atoms = randomized_response_atoms(k, epsilon)?;
        Ok(Self::atoms(&atoms, 0.0, grid)?.with_closed(certify(ClosedForms::pure(epsilon))))
    }

    /// The worst case of any pure ε-DP mechanism (its PLD dominates theirs: Kairouz,
    /// Oh & Viswanath 2015): randomized response with ε.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700.
    pub fn pure(epsilon: f64, grid: Grid) -> Result<Pld, Error> {
        Self::randomized_response(epsilon, grid)
    }

    /// The worst case of any (ε, δ)-DP mechanism: infinite loss with probability δ,
    /// otherwise randomized response with ε (Kairouz, Oh & Viswanath 2015).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDelta`] if `delta` is not in [0, 1);
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700.
    pub fn approximate(epsilon: f64, delta: f64, grid: Grid) -> Result<Pld, Error> {
        if delta == 0.0 {
            return Self::pure(epsilon, grid);
        }
        let (atoms, delta) = approximate_atoms(epsilon, delta)?;
        let closed = ClosedForms::approximate(epsilon, delta);
        Ok(Self::atoms(&atoms, delta, grid)?.with_closed(certify(closed)))
    }

    /// The worst-case PLD of a stated guarantee: [`pure`](Self::pure) for ε-DP,
    /// [`approximate`](Self::approximate) for (ε, δ)-DP. ρ-zCDP, approximate zCDP and random DP do not
    /// determine a PLD (build the mechanism's own, e.g. [`gaussian`](Self::gaussian)):
    /// a typed error. This is how any mechanism of this crate enters a PLD plan, via
    /// its `privacy_loss()`.
    ///
    /// # Errors
    ///
    /// * the variant of an invalid field of `loss` ([`Error::InvalidEpsilon`],
    ///   [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`] for γ);
    /// * [`Error::IncompatibleLoss`] for a zCDP, approximate-zCDP or random-DP `loss`;
    /// * [`Error::InvalidParameter`] (`epsilon`) if its ε is above 700.
    pub fn from_loss(loss: PrivacyLoss, grid: Grid) -> Result<Pld, Error> {
        match crate::composition::validate_loss(loss)? {
            PrivacyLoss::Pure { epsilon } => Self::pure(epsilon, grid),
            PrivacyLoss::Approximate { epsilon, delta } => Self::approximate(epsilon, delta, grid),
            PrivacyLoss::Zcdp { .. } | PrivacyLoss::ApproximateZcdp { .. } | PrivacyLoss::RandomDp { .. } => {
                Err(Error::IncompatibleLoss {
                    reason: "a zCDP, approximate-zCDP or random-DP statement does not determine a privacy loss \
                         distribution; build the mechanism's own PLD (e.g. Pld::gaussian)",
                })
            }
        }
    }

    /// A PLD from point masses and the mass at `+∞` (the same in both directions).
    fn atoms(atoms: &[Atom], infinity: f64, grid: Grid) -> Result<Pld, Error> {
        let points: Vec<(f64, f64)> = atoms.iter().map(|a| (a.loss_up, a.mass)).collect();
        let h = atom_step(&[&points], None, grid)?;
        Ok(Pld::symmetric(atom_dist(&points, infinity, h), grid))
    }

    /// **Poisson subsampling** with rate `q ∈ (0, 1]` (each record enters the
    /// mechanism's input independently with probability `q`; add/remove neighbours) of
    /// the worst case of a stated guarantee: `ε`-DP ([`pure`](Self::pure)) or
    /// `(ε, δ)`-DP ([`approximate`](Self::approximate)). Valid for **every** mechanism
    /// with that guarantee, e.g. any mechanism of this crate through its
    /// `privacy_loss()`; the Gaussian and the Laplace have tighter builders of their own
    /// ([`poisson_subsampled_gaussian`](Self::poisson_subsampled_gaussian),
    /// [`poisson_subsampled_laplace`](Self::poisson_subsampled_laplace)).
    ///
    /// A worst-case pair `(P, Q)` dominates the mechanism, and then `(qP + (1 − q)Q, Q)`
    /// (remove) and `(Q, qP + (1 − q)Q)` (add) dominate the subsampled mechanism (Zhu,
    /// Dong & Wang 2022, Theorem 11): an outcome of loss `l` gets loss
    /// `ln(1 + q(eˡ − 1))`, resp. `−ln(1 + q(eˡ − 1))` under `Q`. Both directions are
    /// kept and every answer takes the worse.
    ///
    /// ```
    /// use dpmech::PrivacyLoss;
    /// use dpmech::composition::pld::{Grid, Pld};
    /// // A 1-DP release on a 1 % Poisson sample, 1000 times:
    /// let step = Pld::poisson_subsampled(PrivacyLoss::pure(1.0)?, 0.01, Grid::default())?;
    /// let eps = step.self_compose(1000)?.epsilon_for_delta(1e-6)?;
    /// assert!(eps < 4.0); // sequential composition of the subsampled ε' = ln(1 + q(e − 1)): 17.0
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// * the variant of an invalid field of `loss` ([`Error::InvalidEpsilon`],
    ///   [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`] for γ);
    /// * [`Error::IncompatibleLoss`] for a zCDP, approximate-zCDP or random-DP `loss`;
    /// * [`Error::InvalidParameter`] (`epsilon`) if its ε is above 700;
    /// * [`Error::InvalidParameter`] (`q`) if `q` is not in (0, 1].
    pub fn poisson_subsampled(loss: PrivacyLoss, q: f64, grid: Grid) -> Result<Pld, Error> {
        match crate::composition::validate_loss(loss)? {
            PrivacyLoss::Pure { epsilon } => {
                let pld = Self::subsampled_atoms(&randomized_response_atoms(2, epsilon)?, 0.0, q, grid)?;
                Ok(pld.with_closed(certify(ClosedForms::pure(amplified_up(epsilon, q)))))
            }
            PrivacyLoss::Approximate { epsilon, delta } => {
                let (atoms, delta_atoms) = approximate_atoms(epsilon, delta)?;
                let pld = Self::subsampled_atoms(&atoms, delta_atoms, q, grid)?;
                let closed = ClosedForms::approximate(amplified_up(epsilon, q), round::mul_up(q, delta));
                Ok(pld.with_closed(certify(closed)))
            }
            PrivacyLoss::Zcdp { .. } | PrivacyLoss::ApproximateZcdp { .. } | PrivacyLoss::RandomDp { .. } => {
                Err(Error::IncompatibleLoss {
                    reason: "a zCDP, approximate-zCDP or random-DP statement does not determine a privacy loss \
                         distribution; use Pld::poisson_subsampled_gaussian for the Gaussian",
                })
            }
        }
    }

    /// Sampling **without replacement** (a uniformly random subset of fixed size `m` of
    /// the `n` records, `γ = m/n ∈ (0, 1]`) under **substitution** neighbours, of the
    /// worst case of a stated guarantee: `ε`-DP or `(ε, δ)`-DP under substitution. The
    /// subsample's profile is `γ·δ_M(ε)` at `e^ε′ = 1 + γ(e^ε − 1)` (Balle, Barthe &
    /// Gaboardi 2018, tight for these worst cases); the PLD is the symmetric pair with
    /// that curve (see
    /// [`sampled_without_replacement_gaussian`](Self::sampled_without_replacement_gaussian)):
    /// with `g = ln(1 + γ(e^ε − 1))`, P-masses `(1 − δ)(γe^ε + 1 − γ)/(1 + e^ε)` at `+g`,
    /// `(1 − δ)/(1 + e^ε)` at `−g`, `(1 − γ)(e^ε − 1 + 2δ)/(1 + e^ε)` at 0 and `γδ` at
    /// `+∞`.
    ///
    /// ```
    /// use dpmech::PrivacyLoss;
    /// use dpmech::composition::pld::{Grid, Pld};
    /// // A 1-DP release on batches of 1 % of the records, 1000 times:
    /// let step = Pld::sampled_without_replacement(PrivacyLoss::pure(1.0)?, 0.01, Grid::default())?;
    /// let eps = step.self_compose(1000)?.epsilon_for_delta(1e-6)?;
    /// assert!(eps < 4.0);
    /// # Ok::<(), dpmech::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// * [`Error::InvalidParameter`] (`q`) if `gamma` is not in (0, 1];
    /// * the variant of an invalid field of `loss` ([`Error::InvalidEpsilon`],
    ///   [`Error::InvalidDelta`], [`Error::InvalidRho`], [`Error::InvalidParameter`]
    ///   for γ); here an `Approximate` δ must lie in (0, 1);
    /// * [`Error::IncompatibleLoss`] for a zCDP, approximate-zCDP or random-DP `loss`;
    /// * [`Error::InvalidParameter`] (`epsilon`) if its ε is above 700.
    pub fn sampled_without_replacement(loss: PrivacyLoss, gamma: f64, grid: Grid) -> Result<Pld, Error> {
        check_sampling_rate(gamma)?;
        let (epsilon, delta) = match crate::composition::validate_loss(loss)? {
            PrivacyLoss::Pure { epsilon } => (check_large_epsilon(epsilon)?, 0.0),
            PrivacyLoss::Approximate { epsilon, delta } => {
                (check_large_epsilon(epsilon)?, check_delta(delta)?)
            }
            PrivacyLoss::Zcdp { .. } | PrivacyLoss::ApproximateZcdp { .. } | PrivacyLoss::RandomDp { .. } => {
                return Err(Error::IncompatibleLoss {
                    reason: "a zCDP, approximate-zCDP or random-DP statement does not determine a privacy loss \
                             distribution; use Pld::sampled_without_replacement_gaussian",
                });
            }
        };
        if gamma == 1.0 {
            return Self::from_loss(loss, grid);
        }
        let e_up = round::exp_up(epsilon);
        let denominator = round::add_down(1.0, round::exp_down(epsilon));
        let (keep, drop) = (round::sub_up(1.0, delta), round::sub_up(1.0, gamma));
        let (g_down, g_up) = subsampled_loss(epsilon, gamma);
        let up = round::add_up(round::mul_up(gamma, e_up), drop);
        let atoms = [
            Atom {
                loss_down: g_down,
                loss_up: g_up,
                mass: round::div_up(round::mul_up(keep, up), denominator),
            },
            Atom {
                loss_down: -g_up,
                loss_up: -g_down,
                mass: round::div_up(keep, denominator),
            },
            Atom::exact(
                0.0,
                round::div_up(
                    round::mul_up(drop, round::add_up(round::exp_m1_up(epsilon), 2.0 * delta)),
                    denominator,
                ),
            ),
        ];
        Self::atoms(&atoms, round::mul_up(gamma, delta), grid)
    }

    /// Poisson subsampling with rate `q` (add/remove, as in
    /// [`poisson_subsampled`](Self::poisson_subsampled)) of k-ary randomized response
    /// with `ε` — e.g. a local-DP survey of a random subset.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`k`) if `k < 2`;
    /// [`Error::InvalidEpsilon`] if `epsilon` is not finite and positive;
    /// [`Error::InvalidParameter`] (`epsilon`) if it is above 700;
    /// [`Error::InvalidParameter`] (`q`) if `q` is not in (0, 1].
    pub fn poisson_subsampled_randomized_response(
        k: u64,
        epsilon: f64,
        q: f64,
        grid: Grid,
    ) -> Result<Pld, Error> {
        let pld = Self::subsampled_atoms(&randomized_response_atoms(k, epsilon)?, 0.0, q, grid)?;
        Ok(pld.with_closed(certify(ClosedForms::pure(amplified_up(epsilon, q)))))
    }

    /// The subsampled pair of a mechanism given by its loss atoms, with `delta` of mass
    /// where only `P` (and, for the symmetric worst case, only `Q`) puts mass.
    pub(super) fn subsampled_atoms(atoms: &[Atom], delta: f64, q: f64, grid: Grid) -> Result<Pld, Error> {
        check_sampling_rate(q)?;
        if q == 1.0 {
            return Self::atoms(atoms, delta, grid);
        }
        let stay = round::sub_up(1.0, q);
        // Remove: P' = qP + (1 − q)Q against Q. An atom of P-mass p and loss l has Q-mass
        // p·e^(−l) (upper bound from the lower end of l); its new loss is g(l).
        let mut forward: Vec<(f64, f64)> = atoms
            .iter()
            .map(|a| {
                let q_mass = round::mul_up(a.mass, round::exp_up(-a.loss_down));
                let mass = round::add_up(round::mul_up(q, a.mass), round::mul_up(stay, q_mass));
                (subsampled_loss(a.loss_up, q).1, mass)
            })
            .collect();
        // Add: Q against P' — mass p·e^(−l), loss −g(l).
        let mut backward: Vec<(f64, f64)> = atoms
            .iter()
            .map(|a| {
                let q_mass = round::mul_up(a.mass, round::exp_up(-a.loss_down));
                (-subsampled_loss(a.loss_down, q).0, q_mass)
            })
            .collect();
        if delta > 0.0 {
            // The worst case's Q-only mass δ: loss ln(1 − q) forward (P'-mass (1 − q)δ),
            // −ln(1 − q) backward; its P-only mass δ: +∞ forward with P'-mass qδ.
            let ln_stay = (-q).ln_1p();
            let slack = 4.0 * U * (1.0 + ln_stay.abs());
            forward.push((ln_stay + slack, round::mul_up(stay, delta)));
            backward.push((-ln_stay + slack, delta));
        }
        let h = atom_step(&[&forward, &backward], None, grid)?;
        Ok(Pld {
            tail: grid.tail,
            forward: atom_dist(&forward, round::mul_up(q, delta), h),
            backward: Some(atom_dist(&backward, 0.0, h)),
            closed: ClosedForms::default(),
        })
    }
}

/// A point mass of a worst-case pair: the true loss lies in `[loss_down, loss_up]` and
/// its P-mass is at most `mass`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Atom {
    pub(super) loss_down: f64,
    pub(super) loss_up: f64,
    pub(super) mass: f64,
}

impl Atom {
    pub(super) fn exact(loss: f64, mass: f64) -> Self {
        Atom {
            loss_down: loss,
            loss_up: loss,
            mass,
        }
    }
}

/// One step for several atom lists, relative to `scale` (default: their largest loss).
pub(super) fn atom_step(lists: &[&[(f64, f64)]], scale: Option<f64>, grid: Grid) -> Result<f64, Error> {
    let (min, max) = lists
        .iter()
        .flat_map(|l| l.iter())
        .fold((0.0f64, 0.0f64), |(a, b), &(l, _)| (a.min(l), b.max(l)));
    step_for(max - min, scale.unwrap_or(max.max(-min)), grid)
}

/// One direction from point masses `(loss, mass upper bound)` on step `h`.
pub(super) fn atom_dist(points: &[(f64, f64)], infinity: f64, h: f64) -> Dist {
    let (min, max) = points
        .iter()
        .fold((0.0f64, 0.0f64), |(a, b), &(l, _)| (a.min(l), b.max(l)));
    let mut b = Buckets::new(h, index_up(min, h), index_up(max, h));
    for &(loss, mass) in points {
        b.add(loss, mass);
    }
    b.infinity = infinity;
    b.into_dist()
}

/// An enclosure `(down, up)` of `g(l) = ln(1 + q(eˡ − 1))`, the loss of an outcome of
/// loss `l` after Poisson subsampling with rate `q < 1` (expm1, the product and ln_1p
/// are each faithful, and `|d ln(1 + x)/dx · x| ≤ q/(1 − q)` bounds the propagation).
fn subsampled_loss(l: f64, q: f64) -> (f64, f64) {
    let x = q * l.exp_m1();
    let g = x.ln_1p();
    let slack = 8.0 * U * (g.abs() + x.abs() / (1.0 + x)) + f64::MIN_POSITIVE;
    (g - slack, g + slack)
}

/// k-ary randomized response with ε: with `w = e^(−ε)`, P-masses `1/(1 + (k−1)w)` at
/// `+ε`, `w/(1 + (k−1)w)` at `−ε` and `(k−2)w/(1 + (k−1)w)` at 0.
fn randomized_response_atoms(k: u64, epsilon: f64) -> Result<Vec<Atom>, Error> {
    let k = check_categories(k)?;
    let eps = check_large_epsilon(epsilon)?;
    let kf = round::u64_up(k);
    let w_down = round::exp_down(-eps);
    let w_up = round::exp_up(-eps);
    let denominator = round::add_down(1.0, round::mul_down(kf - 1.0, w_down));
    Ok(vec![
        Atom::exact(eps, round::div_up(1.0, denominator)),
        Atom::exact(-eps, round::div_up(w_up, denominator)),
        Atom::exact(0.0, round::div_up(round::mul_up(kf - 2.0, w_up), denominator)),
    ])
}

/// The (ε, δ) worst case (Kairouz, Oh & Viswanath 2015): P-masses `(1 − δ)/(1 + e^(−ε))`
/// at `+ε`, `(1 − δ)e^(−ε)/(1 + e^(−ε))` at `−ε`, δ where only P (and δ where only Q)
/// puts mass. Returns the atoms and δ (δ = 0 gives the pure case).
fn approximate_atoms(epsilon: f64, delta: f64) -> Result<(Vec<Atom>, f64), Error> {
    if delta == 0.0 {
        return Ok((randomized_response_atoms(2, epsilon)?, 0.0));
    }
    let delta = check_delta(delta)?;
    let eps = check_large_epsilon(epsilon)?;
    let keep = round::sub_up(1.0, delta);
    let w_down = round::exp_down(-eps);
    let denominator = round::add_down(1.0, w_down);
    let atoms = vec![
        Atom::exact(eps, round::mul_up(keep, round::div_up(1.0, denominator))),
        Atom::exact(
            -eps,
            round::mul_up(keep, round::div_up(round::exp_up(-eps), denominator)),
        ),
    ];
    Ok((atoms, delta))
}
