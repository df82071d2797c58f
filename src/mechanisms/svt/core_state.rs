//! The streaming state shared by the sparse-vector types.

use super::Comparator;
use crate::sampling::BitSource;
use crate::{CryptoRng, Error};
use core::fmt;

/// Stream state: the (secret) current threshold noise, the number of queries answered
/// and of "above" answers. Not `Clone`, and its `Debug` omits the threshold noise.
pub(super) struct Stream {
    pub(super) comparator: Comparator,
    mechanism: &'static str,
    cutoff: usize,
    redraw_after_above: bool,
    threshold_noise: Option<i128>,
    answered: usize,
    positives: usize,
}

impl Stream {
    pub(super) fn new(
        comparator: Comparator,
        mechanism: &'static str,
        cutoff: usize,
        redraw_after_above: bool,
    ) -> Self {
        Self {
            comparator,
            mechanism,
            cutoff,
            redraw_after_above,
            threshold_noise: None,
            answered: 0,
            positives: 0,
        }
    }

    pub(super) fn is_halted(&self) -> bool {
        self.positives >= self.cutoff
    }

    pub(super) fn answered(&self) -> usize {
        self.answered
    }

    pub(super) fn positives(&self) -> usize {
        self.positives
    }

    pub(super) fn cutoff(&self) -> usize {
        self.cutoff
    }

    /// The typed error for a halted stream.
    pub(super) fn halted_error(&self) -> Error {
        Error::Halted {
            mechanism: self.mechanism,
            cutoff: self.cutoff,
        }
    }

    /// Every check that can fail, before any randomness: not halted, finite value,
    /// finite threshold.
    pub(super) fn check(&self, value: f64, threshold: f64) -> Result<(), Error> {
        if self.is_halted() {
            return Err(self.halted_error());
        }
        if !value.is_finite() {
            return Err(Error::NonFiniteValue {
                index: self.answered,
                value,
            });
        }
        super::check_threshold(threshold).map(|_| ())
    }

    /// [`check`](Self::check), then one comparison: ⊤ or ⊥.
    pub(super) fn query<R: CryptoRng + ?Sized>(
        &mut self,
        value: f64,
        threshold: f64,
        rng: &mut R,
    ) -> Result<super::Answer, Error> {
        self.check(value, threshold)?;
        Ok(if self.compare(value, threshold, rng) {
            super::Answer::Above
        } else {
            super::Answer::Below
        })
    }

    /// One comparison, after [`check`](Self::check) succeeded. The threshold noise is
    /// drawn at the first query (and after each "above" when re-drawing).
    pub(super) fn compare<R: CryptoRng + ?Sized>(&mut self, value: f64, threshold: f64, rng: &mut R) -> bool {
        self.compare_bits(value, threshold, &mut BitSource::new(rng))
    }

    /// [`compare`](Self::compare) from a shared bit source (batch paths: no random
    /// bits are discarded between queries).
    pub(super) fn compare_bits<R: CryptoRng + ?Sized>(
        &mut self,
        value: f64,
        threshold: f64,
        bits: &mut BitSource<'_, R>,
    ) -> bool {
        let sigma = match self.threshold_noise {
            Some(sigma) => sigma,
            None => {
                let sigma = self.comparator.draw_threshold_noise(bits);
                self.threshold_noise = Some(sigma);
                sigma
            }
        };
        let above = self.comparator.is_above(value, threshold, sigma, bits);
        self.answered += 1;
        if above {
            self.positives += 1;
            if self.redraw_after_above {
                self.threshold_noise = None;
            }
        }
        above
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(self.mechanism)
            .field("granularity", &self.comparator.granularity())
            .field("threshold_scale", &self.comparator.threshold_scale())
            .field("query_scale", &self.comparator.query_scale())
            .field("cutoff", &self.cutoff)
            .field("answered", &self.answered)
            .field("positives", &self.positives)
            .field("noisy_threshold", &"<secret>")
            .finish()
    }
}

/// Runs a validated batch through `stream` from one bit source, up to the halt.
pub(super) fn run_bits<R: CryptoRng + ?Sized>(
    stream: &mut Stream,
    values: &[f64],
    threshold: f64,
    rng: &mut R,
) -> Vec<super::Answer> {
    let mut bits = BitSource::new(rng);
    let mut answers = Vec::with_capacity(values.len());
    for &value in values {
        if stream.is_halted() {
            break;
        }
        answers.push(if stream.compare_bits(value, threshold, &mut bits) {
            super::Answer::Above
        } else {
            super::Answer::Below
        });
    }
    answers
}
