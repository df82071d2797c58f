//! The hook for a **durable, shared privacy ledger**: a [`LedgerStore`] keeps an
//! accountant's budget and every accepted charge outside the process, so a budget
//! survives a restart and is shared by every process (and analyst) that opens it.
//!
//! The core crate defines the hook and its text codec and keeps no dependency; the
//! stores (an embedded single file, PostgreSQL) are in the `dpmech-ledger` crate.
//!
//! # The protocol
//!
//! [`LedgerStore::charge`] is one atomic step: the store takes its lock (a file lock,
//! a database transaction), reads the records committed since the accountant last
//! looked — by any process — and hands them to the accountant's decision, which replays
//! them under its own composition rule (Σε, Σδ, Σρ, a plan's steps, the Rényi filter's
//! `Σ Rᵢ(α)`), checks the new charge against the budget and the analyst's share, and
//! returns the record to append (or an error: then nothing is written). The store
//! appends it and **commits durably before returning**; only then does
//! [`Accountant::release`](crate::Accountant::release) draw noise. Hence:
//!
//! * a charge that returned `Ok` is on stable storage before any noise exists;
//! * a refused charge, or one whose commit failed, writes nothing and draws nothing;
//! * a process killed after the commit leaves a charge that is spent whether or not its
//!   noise was released (the safe side).
//!
//! The [`LedgerHeader`] fixes the budget, the mode and the relation: an accountant
//! whose configuration differs refuses to attach ([`LedgerErrorKind::Mismatch`]), and
//! [`Accountant::open`](crate::Accountant::open) resumes from the header alone.
//!
//! ```
//! use dpmech::composition::ledger::{LedgerHeader, LedgerRecord};
//! use dpmech::{Accountant, PrivacyLoss};
//! let header = Accountant::pure(1.0)?.ledger_header();
//! assert_eq!(header.encode(), "dpmech-ledger/1\tpure 1.0\tsequence\tadd-remove\tno-plan");
//! assert_eq!(LedgerHeader::decode(&header.encode())?, header);
//! # Ok::<(), dpmech::Error>(())
//! ```

use super::accountant::{Adaptivity, LedgerEntry, Plan, PlanRule};
use crate::Error;
use crate::privacy::PrivacyLoss;
use crate::sensitivity::Neighbouring;
use std::fmt;

/// What went wrong with a ledger store (the `kind` of [`Error::Ledger`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LedgerErrorKind {
    /// The store cannot be read or written now (read-only file, full disk, a stopped
    /// server, a lost connection, a lock held too long): the charge was not made and no
    /// noise was drawn; it is safe to retry.
    Unavailable,
    /// The stored contents do not verify (a broken hash chain, a truncated or edited
    /// ledger, a record that does not decode or whose loss is not a valid charge, a
    /// total above the budget): the ledger refuses to open rather than start from zero.
    Corrupt,
    /// The ledger holds a different budget, mode or relation than the accountant.
    Mismatch,
    /// The data set (or the analyst) is not known to the store, or the handle is not
    /// allowed to do this.
    Denied,
}

impl fmt::Display for LedgerErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unavailable => "unavailable",
            Self::Corrupt => "corrupt",
            Self::Mismatch => "mismatch",
            Self::Denied => "denied",
        })
    }
}

/// An [`Error::Ledger`] of `kind` with `detail`.
pub fn ledger_error(kind: LedgerErrorKind, detail: impl Into<String>) -> Error {
    Error::Ledger {
        kind,
        detail: detail.into(),
    }
}

/// The fixed part of a ledger: the budget, the mode and the relation it protects.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LedgerHeader {
    /// The data set's total budget (for a plan: the plan's total).
    pub budget: PrivacyLoss,
    /// Fixed sequence or privacy filter.
    pub adaptivity: Adaptivity,
    /// The declared plan, if any.
    pub plan: Option<Plan>,
    /// The neighbouring relation the budget protects.
    pub relation: Neighbouring,
}

/// One committed record: its position in the ledger (1, 2, …) and the charge.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerRecord {
    /// The record's sequence number: 1 for the first, each next one +1.
    pub seq: u64,
    /// The charge (its `analyst` is the store handle's analyst).
    pub entry: LedgerEntry,
}

/// What a store holds for one data set and one analyst, as read inside its lock.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerSnapshot {
    /// The data set's header.
    pub header: LedgerHeader,
    /// The records after the sequence number asked for, in order.
    pub records: Vec<LedgerRecord>,
    /// The analyst's share of the budget (same kind as the budget), if the admin set one.
    pub share: Option<PrivacyLoss>,
}

/// A durable ledger for one data set, seen by one analyst: the storage side of an
/// accountant built with [`Accountant::with_ledger`](crate::Accountant::with_ledger).
///
/// The handle only reads and appends: setting budgets and shares is the job of a
/// separate admin API of each store, so an analyst's handle cannot raise its own limit.
///
/// # Contract
///
/// * [`charge`](Self::charge) holds an exclusive lock (or a serializable transaction)
///   across read, `decide` and append, so two charges from any processes never both see
///   the same last record;
/// * it calls `decide` at most once per attempt, with the records after `after`
///   (verified: their chain, their order); a store may retry a transaction that the
///   database aborted, calling `decide` again on the new snapshot;
/// * when `decide` returns `Err`, nothing is written and the error is returned as is;
/// * when it returns a record, the record is committed to stable storage (fsync,
///   `COMMIT`) before `charge` returns `Ok`; when that cannot be ensured, `charge`
///   returns [`Error::Ledger`] with [`LedgerErrorKind::Unavailable`].
pub trait LedgerStore: Send + Sync + fmt::Debug {
    /// The analyst this handle charges for (recorded in every entry).
    fn analyst(&self) -> &str;

    /// The header, the records with `seq > after` and the analyst's share.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`]: `Unavailable` if the store cannot be read, `Corrupt` if its
    /// contents do not verify, `Denied` for an unknown data set.
    fn read(&self, after: u64) -> Result<LedgerSnapshot, Error>;

    /// Atomically: lock, read the records with `seq > after`, let `decide` return the
    /// record to append (its `seq` is the next one), append it and commit durably.
    ///
    /// # Errors
    ///
    /// The error `decide` returned (nothing written), or [`Error::Ledger`] as for
    /// [`read`](Self::read) and when the append cannot be committed.
    fn charge(
        &self,
        after: u64,
        decide: &mut dyn FnMut(&LedgerSnapshot) -> Result<LedgerRecord, Error>,
    ) -> Result<(), Error>;
}

const MAGIC: &str = "dpmech-ledger/1";

impl LedgerHeader {
    /// The header as one line of text (the form stores keep and hash): the format tag,
    /// the budget, `sequence` or `filter`, the relation and the plan, tab-separated.
    /// Floats are written in Rust's shortest form that parses back to the same bits.
    pub fn encode(&self) -> String {
        let mode = match self.adaptivity {
            Adaptivity::FixedSequence => "sequence",
            Adaptivity::Filter => "filter",
        };
        let plan = match self.plan {
            None => "no-plan".to_owned(),
            Some(Plan {
                steps,
                per_step_epsilon,
                rule: PlanRule::Advanced { delta_slack },
            }) => format!("advanced {steps} {per_step_epsilon:?} {delta_slack:?}"),
            Some(Plan {
                steps,
                per_step_epsilon,
                rule: PlanRule::Optimal { delta },
            }) => format!("optimal {steps} {per_step_epsilon:?} {delta:?}"),
        };
        format!(
            "{MAGIC}\t{}\t{mode}\t{}\t{plan}",
            encode_loss(self.budget),
            encode_relation(self.relation)
        )
    }

    /// Parses [`encode`](Self::encode)'s form.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`] with [`LedgerErrorKind::Corrupt`] if `text` is not a header.
    pub fn decode(text: &str) -> Result<Self, Error> {
        let bad = || ledger_error(LedgerErrorKind::Corrupt, format!("not a ledger header: {text:?}"));
        let f: Vec<&str> = text.split('\t').collect();
        let [MAGIC, budget, mode, relation, plan] = f[..] else {
            return Err(bad());
        };
        let adaptivity = match mode {
            "sequence" => Adaptivity::FixedSequence,
            "filter" => Adaptivity::Filter,
            _ => return Err(bad()),
        };
        let p: Vec<&str> = plan.split(' ').collect();
        let plan = match p[..] {
            ["no-plan"] => None,
            [rule, k, e0, d] => {
                let d = parse_f64(d).ok_or_else(bad)?;
                Some(Plan {
                    steps: k.parse().map_err(|_| bad())?,
                    per_step_epsilon: parse_f64(e0).ok_or_else(bad)?,
                    rule: match rule {
                        "advanced" => PlanRule::Advanced { delta_slack: d },
                        "optimal" => PlanRule::Optimal { delta: d },
                        _ => return Err(bad()),
                    },
                })
            }
            _ => return Err(bad()),
        };
        Ok(Self {
            budget: decode_loss(budget).ok_or_else(bad)?,
            adaptivity,
            plan,
            relation: decode_relation(relation).ok_or_else(bad)?,
        })
    }
}

impl LedgerRecord {
    /// The record as one line of text (the form stores keep and hash): sequence number,
    /// time (ms since the Unix epoch), analyst, label (`~` for none, else `'` and the
    /// label), the relation the loss was stated for, the requested and the charged loss,
    /// tab-separated; `\`, tab and newline in strings are escaped.
    pub fn encode(&self) -> String {
        let e = &self.entry;
        let label = e
            .label
            .as_deref()
            .map_or_else(|| "~".to_owned(), |l| format!("'{}", escape(l)));
        format!(
            "{}\t{}\t{}\t{label}\t{}\t{}\t{}",
            self.seq,
            e.unix_millis,
            escape(e.analyst.as_deref().unwrap_or("")),
            encode_relation(e.relation),
            encode_loss(e.requested),
            encode_loss(e.charged)
        )
    }

    /// Parses [`encode`](Self::encode)'s form. The losses are only parsed here: whether
    /// they are valid charges for a budget is checked when an accountant replays them.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`] with [`LedgerErrorKind::Corrupt`] if `text` is not a record.
    pub fn decode(text: &str) -> Result<Self, Error> {
        let bad = || ledger_error(LedgerErrorKind::Corrupt, format!("not a ledger record: {text:?}"));
        let f: Vec<&str> = text.split('\t').collect();
        let [seq, millis, analyst, label, relation, requested, charged] = f[..] else {
            return Err(bad());
        };
        let label = match label.as_bytes().first() {
            Some(b'~') if label.len() == 1 => None,
            Some(b'\'') => Some(unescape(&label[1..]).ok_or_else(bad)?),
            _ => return Err(bad()),
        };
        Ok(Self {
            seq: seq.parse().map_err(|_| bad())?,
            entry: LedgerEntry {
                label,
                requested: decode_loss(requested).ok_or_else(bad)?,
                charged: decode_loss(charged).ok_or_else(bad)?,
                relation: decode_relation(relation).ok_or_else(bad)?,
                analyst: Some(unescape(analyst).ok_or_else(bad)?),
                unix_millis: millis.parse().map_err(|_| bad())?,
            },
        })
    }
}

/// A loss as text: `pure ε`, `approximate ε δ`, `zcdp ρ`, `approximate-zcdp ρ δ`,
/// `random ε γ` (floats in shortest round-trip form).
pub fn encode_loss(loss: PrivacyLoss) -> String {
    match loss {
        PrivacyLoss::Pure { epsilon } => format!("pure {epsilon:?}"),
        PrivacyLoss::Approximate { epsilon, delta } => format!("approximate {epsilon:?} {delta:?}"),
        PrivacyLoss::Zcdp { rho } => format!("zcdp {rho:?}"),
        PrivacyLoss::ApproximateZcdp { rho, delta } => format!("approximate-zcdp {rho:?} {delta:?}"),
        PrivacyLoss::RandomDp { epsilon, gamma } => format!("random {epsilon:?} {gamma:?}"),
    }
}

/// Parses [`encode_loss`]'s form (not validated: see [`LedgerRecord::decode`]).
pub fn decode_loss(text: &str) -> Option<PrivacyLoss> {
    let f: Vec<&str> = text.split(' ').collect();
    let num = |i: usize| f.get(i).copied().and_then(parse_f64);
    let loss = match (f.first().copied()?, f.len()) {
        ("pure", 2) => PrivacyLoss::Pure { epsilon: num(1)? },
        ("approximate", 3) => PrivacyLoss::Approximate {
            epsilon: num(1)?,
            delta: num(2)?,
        },
        ("zcdp", 2) => PrivacyLoss::Zcdp { rho: num(1)? },
        ("approximate-zcdp", 3) => PrivacyLoss::ApproximateZcdp {
            rho: num(1)?,
            delta: num(2)?,
        },
        ("random", 3) => PrivacyLoss::RandomDp {
            epsilon: num(1)?,
            gamma: num(2)?,
        },
        _ => return None,
    };
    Some(loss)
}

/// A float written by `{:?}` (finite only: a ledger never holds NaN or ∞).
fn parse_f64(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|x| x.is_finite())
}

fn encode_relation(relation: Neighbouring) -> &'static str {
    match relation {
        Neighbouring::AddRemove => "add-remove",
        Neighbouring::Substitute => "substitute",
    }
}

fn decode_relation(text: &str) -> Option<Neighbouring> {
    match text {
        "add-remove" => Some(Neighbouring::AddRemove),
        "substitute" => Some(Neighbouring::Substitute),
        _ => None,
    }
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.push(match chars.next()? {
                '\\' => '\\',
                't' => '\t',
                'n' => '\n',
                'r' => '\r',
                _ => return None,
            });
        } else {
            out.push(c);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_headers_round_trip_bit_for_bit() {
        let rec = LedgerRecord {
            seq: 7,
            entry: LedgerEntry {
                label: Some("mean\tage\\x\n".into()),
                requested: PrivacyLoss::Approximate {
                    epsilon: 0.1,
                    delta: 1e-9,
                },
                charged: PrivacyLoss::Zcdp {
                    rho: 0.1f64.next_up(),
                },
                relation: Neighbouring::Substitute,
                analyst: Some("alice".into()),
                unix_millis: 1_700_000_000_123,
            },
        };
        let text = rec.encode();
        assert_eq!(text.lines().count(), 1);
        assert_eq!(LedgerRecord::decode(&text).unwrap(), rec);
        let unlabelled = LedgerRecord {
            entry: LedgerEntry {
                label: None,
                ..rec.entry
            },
            ..rec
        };
        assert_eq!(LedgerRecord::decode(&unlabelled.encode()).unwrap(), unlabelled);
        let h = LedgerHeader {
            budget: PrivacyLoss::Approximate {
                epsilon: 1.0,
                delta: 1e-6,
            },
            adaptivity: Adaptivity::FixedSequence,
            plan: Some(Plan {
                steps: 10,
                per_step_epsilon: 0.1,
                rule: PlanRule::Optimal { delta: 1e-6 },
            }),
            relation: Neighbouring::AddRemove,
        };
        assert_eq!(LedgerHeader::decode(&h.encode()).unwrap(), h);
    }

    #[test]
    fn malformed_text_is_corrupt() {
        for bad in [
            "",
            "1\t2\talice\t~\tadd-remove\tpure 0.1",
            "1\t2\talice\tx\tadd-remove\tpure 0.1\tpure 0.1",
            "1\t2\talice\t~\tadd-remove\tpure NaN\tpure 0.1",
            "1\t2\talice\t~\tsideways\tpure 0.1\tpure 0.1",
            "x\t2\talice\t~\tadd-remove\tpure 0.1\tpure 0.1",
        ] {
            let err = LedgerRecord::decode(bad).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Ledger {
                        kind: LedgerErrorKind::Corrupt,
                        ..
                    }
                ),
                "{bad:?}"
            );
        }
        assert!(LedgerHeader::decode("dpmech-ledger/2\tpure 1\tsequence\tadd-remove\tno-plan").is_err());
    }
}
