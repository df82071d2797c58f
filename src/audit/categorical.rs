//! Audits of categorical outputs (any hashable type), of `(output, draws)` jointly, and
//! of the float structure of real outputs.

use super::events::Shape;
use super::{AuditReport, Auditor, CountingRng, FloatStructure, list};
use crate::Error;
use core::fmt::Debug;
use core::hash::Hash;
use rand_chacha::ChaCha20Rng;
use std::collections::HashMap;

impl Auditor {
    /// Audits a mechanism with categorical outputs of any hashable type: categories,
    /// `Vec<bool>`, tuples such as `(value, draws)`. Events are single outcomes and
    /// likelihood-ratio-ranked unions of outcomes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when a setting is out of range (`samples`, `alpha`,
    /// `events`, `bins`; see [`MAX_SAMPLES`](super::MAX_SAMPLES),
    /// [`MAX_EVENTS`](super::MAX_EVENTS), [`MAX_BINS`](super::MAX_BINS)) or the draws
    /// cannot be allocated.
    pub fn audit_categorical<T, F, G>(&self, mut on_d: F, mut on_d_prime: G) -> Result<AuditReport, Error>
    where
        T: Eq + Hash + Clone + Debug,
        F: FnMut(&mut ChaCha20Rng) -> T,
        G: FnMut(&mut ChaCha20Rng) -> T,
    {
        self.validate()?;
        let [mut r_d1, mut r_dp1, mut r_d2, mut r_dp2] = self.streams();
        let (n1, n2) = self.halves();
        let mut index: HashMap<T, usize> = HashMap::new();
        let mut values: Vec<T> = Vec::new();
        let mut h1: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
        for (side, (rng, f)) in [
            (&mut r_d1, &mut on_d as &mut dyn FnMut(&mut ChaCha20Rng) -> T),
            (&mut r_dp1, &mut on_d_prime),
        ]
        .into_iter()
        .enumerate()
        {
            for _ in 0..n1 {
                let x = f(rng);
                let cell = *index.entry(x).or_insert_with_key(|k| {
                    values.push(k.clone());
                    values.len() - 1
                });
                for h in h1.iter_mut() {
                    if h.len() < values.len() {
                        h.resize(values.len(), 0);
                    }
                }
                h1[side][cell] += 1;
            }
        }
        let cells = values.len();
        let mut h2 = [vec![0u64; cells], vec![0u64; cells]];
        for (side, (rng, f)) in [
            (&mut r_d2, &mut on_d as &mut dyn FnMut(&mut ChaCha20Rng) -> T),
            (&mut r_dp2, &mut on_d_prime),
        ]
        .into_iter()
        .enumerate()
        {
            for _ in 0..n2 {
                if let Some(&c) = index.get(&f(rng)) {
                    h2[side][c] += 1;
                }
            }
        }
        let describe = |shape: &Shape| {
            let cells = shape.cells();
            match cells.as_slice() {
                [one] => format!("x = {:?}", values[*one]),
                _ => format!("x ∈ {{{}}}", list(&cells, ", ", |c| format!("{:?}", values[c]))),
            }
        };
        Ok(self.finish(
            "categorical outputs: outcomes and likelihood-ratio unions",
            false,
            &h1,
            &h2,
            describe,
        ))
    }

    /// Audits `(output, draws)` jointly, where `draws` counts the 64-bit words the
    /// mechanism drew from its generator (see [`CountingRng`]). The closures receive a
    /// counting wrapper, which is itself a `CryptoRng`. A FAIL here while the output
    /// alone passes means the number of draws — hence the running time — leaks.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when a setting is out of range (`samples`, `alpha`,
    /// `events`, `bins`; see [`MAX_SAMPLES`](super::MAX_SAMPLES),
    /// [`MAX_EVENTS`](super::MAX_EVENTS), [`MAX_BINS`](super::MAX_BINS)) or the draws
    /// cannot be allocated.
    pub fn audit_with_draw_count<T, F, G>(&self, mut on_d: F, mut on_d_prime: G) -> Result<AuditReport, Error>
    where
        T: Eq + Hash + Clone + Debug,
        F: FnMut(&mut CountingRng<&mut ChaCha20Rng>) -> T,
        G: FnMut(&mut CountingRng<&mut ChaCha20Rng>) -> T,
    {
        let mut report = self.audit_categorical(
            |rng| {
                let mut counting = CountingRng::new(rng);
                let out = on_d(&mut counting);
                (out, counting.draws())
            },
            |rng| {
                let mut counting = CountingRng::new(rng);
                let out = on_d_prime(&mut counting);
                (out, counting.draws())
            },
        )?;
        report.test = "(output, random words drawn) jointly";
        Ok(report)
    }

    /// The float-leak check (Mironov 2012): audits the [`FloatStructure`] — sign,
    /// binade and finest power-of-two grid — of real outputs. A mechanism that
    /// returns exact multiples of a data-independent grid passes whenever it is ε-DP;
    /// a textbook float sampler whose low-order bits depend on the input fails.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] when a setting is out of range (`samples`, `alpha`,
    /// `events`, `bins`; see [`MAX_SAMPLES`](super::MAX_SAMPLES),
    /// [`MAX_EVENTS`](super::MAX_EVENTS), [`MAX_BINS`](super::MAX_BINS)) or the draws
    /// cannot be allocated.
    pub fn audit_float_leak<F, G>(&self, mut on_d: F, mut on_d_prime: G) -> Result<AuditReport, Error>
    where
        F: FnMut(&mut ChaCha20Rng) -> f64,
        G: FnMut(&mut ChaCha20Rng) -> f64,
    {
        let mut report = self.audit_categorical(
            |rng| FloatStructure::of(on_d(rng)),
            |rng| FloatStructure::of(on_d_prime(rng)),
        )?;
        report.test = "float structure (Mironov 2012): sign, binade, finest power-of-two grid";
        Ok(report)
    }
}
