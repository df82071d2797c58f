//! The audit's result and its human-readable report.

use super::events::Direction;
use crate::PrivacyLoss;
use core::fmt;

/// The outcome of an audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// No event certified a privacy loss above the claimed ε.
    Pass,
    /// Some event certified, with confidence `1 − α`, a privacy loss above the claimed ε:
    /// the claim is false (or the auditor was unlucky, which happens with probability
    /// at most α for a mechanism that satisfies its claim).
    Fail,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pass => "PASS",
            Self::Fail => "FAIL",
        })
    }
}

/// One event certified on the certification half, with its confidence bounds.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CertifiedEvent {
    /// The event, in words (e.g. `x ≥ 3`, `x ∈ {true}`).
    pub description: String,
    /// Which input is in the numerator of the loss.
    pub direction: Direction,
    /// How many certification draws of the numerator input fell in the event.
    pub count_numerator: u64,
    /// How many certification draws of the denominator input fell in the event.
    pub count_denominator: u64,
    /// Clopper–Pearson lower bound on `Pr[M(numerator) ∈ E]`.
    pub p_numerator_lower: f64,
    /// Clopper–Pearson upper bound on `Pr[M(denominator) ∈ E]`.
    pub p_denominator_upper: f64,
    /// `ln((p_numerator_lower − δ) / p_denominator_upper)`, rounded down
    /// (−∞ when the numerator is not above δ).
    pub loss_lower_bound: f64,
}

/// The result of an [`Auditor`](super::Auditor) run. `Display` prints a readable report.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuditReport {
    /// Which test ran (integer histogram, real thresholds, categorical, float structure).
    pub test: &'static str,
    /// PASS or FAIL.
    pub verdict: Verdict,
    /// The audited claim.
    pub claimed: PrivacyLoss,
    /// The certified lower bound on the privacy loss ε (at the claimed δ): with
    /// probability at least `1 − α` the mechanism's true ε is at least this. Never
    /// below 0.
    pub lower_bound: f64,
    /// Every certified (event, direction) pair, best first.
    pub events: Vec<CertifiedEvent>,
    /// Draws per input used to choose the events.
    pub selection_samples: usize,
    /// Fresh draws per input used to certify them.
    pub certification_samples: usize,
    /// The false-alarm probability bound, split by Bonferroni over the intervals.
    pub alpha: f64,
    /// The seed of the audit's random streams.
    pub seed: u64,
}

impl AuditReport {
    /// `true` for [`Verdict::Pass`].
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }

    /// The event behind the certified lower bound, if any event certified a finite one.
    pub fn witness(&self) -> Option<&CertifiedEvent> {
        self.events.first().filter(|e| e.loss_lower_bound.is_finite())
    }
}

impl fmt::Display for AuditReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let eps = self.claimed.epsilon().unwrap_or(f64::NAN);
        writeln!(f, "privacy audit: {}  [{}]", self.verdict, self.test)?;
        writeln!(f, "  claimed          {}", self.claimed)?;
        writeln!(
            f,
            "  certified        ε ≥ {:.4}  ({} the claimed ε = {eps})",
            self.lower_bound,
            if self.verdict == Verdict::Fail {
                "above"
            } else {
                "not above"
            }
        )?;
        writeln!(
            f,
            "  confidence       1 − α with α = {:e} (Bonferroni over {} intervals)",
            self.alpha,
            2 * self.events.len()
        )?;
        writeln!(
            f,
            "  samples          {} per input to choose events, {} fresh per input to certify",
            self.selection_samples, self.certification_samples
        )?;
        writeln!(f, "  seed             {}", self.seed)?;
        match self.witness() {
            Some(w) => {
                let (a, b) = w.direction.names();
                writeln!(f, "  witness event    E = {}", w.description)?;
                writeln!(
                    f,
                    "                   Pr[M({a}) ∈ E] ≥ {:.6e} ({}/{}),  Pr[M({b}) ∈ E] ≤ {:.6e} ({}/{})",
                    w.p_numerator_lower,
                    w.count_numerator,
                    self.certification_samples,
                    w.p_denominator_upper,
                    w.count_denominator,
                    self.certification_samples
                )?;
            }
            None => writeln!(f, "  witness event    none (no event certified a positive loss)")?,
        }
        if !self.events.is_empty() {
            writeln!(f, "  certified events (loss bound, direction, event):")?;
            for e in &self.events {
                let (a, b) = e.direction.names();
                writeln!(
                    f,
                    "    {:>9.4}  {a}/{b}  {}  [{}, {}]",
                    e.loss_lower_bound, e.description, e.count_numerator, e.count_denominator
                )?;
            }
        }
        Ok(())
    }
}
