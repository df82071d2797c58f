//! An accountant backed by a durable [`LedgerStore`]: opened from (or checked against)
//! the ledger's header, resumed by replaying its records under the accountant's own
//! rule, and charged inside the store's lock, committed before anything is drawn.

use super::{Accountant, Adaptivity, LedgerEntry, State, Totals};
use crate::Error;
use crate::composition::ledger::{
    LedgerErrorKind, LedgerHeader, LedgerRecord, LedgerSnapshot, LedgerStore, ledger_error,
};
use crate::privacy::PrivacyLoss;

impl Accountant {
    /// The header a ledger for this accountant holds: budget, mode, plan, relation.
    pub fn ledger_header(&self) -> LedgerHeader {
        LedgerHeader {
            budget: self.budget,
            adaptivity: self.adaptivity,
            plan: self.plan,
            relation: self.relation,
        }
    }

    /// A fresh in-memory accountant configured as `header` says.
    ///
    /// # Errors
    ///
    /// Those of [`Accountant::new`], [`Accountant::filter`] or [`Accountant::with_plan`]
    /// for the header's budget; [`Error::Ledger`] (`Corrupt`) if the plan's total is
    /// not the header's budget.
    pub fn from_header(header: &LedgerHeader) -> Result<Self, Error> {
        let acc = match (header.plan, header.adaptivity) {
            (Some(plan), _) => Self::with_plan(plan)?,
            (None, Adaptivity::Filter) => Self::filter(header.budget)?,
            (None, _) => Self::new(header.budget)?,
        };
        let acc = acc.with_relation(header.relation);
        if acc.ledger_header() != *header {
            return Err(ledger_error(
                LedgerErrorKind::Corrupt,
                format!("the header {} does not describe a budget", header.encode()),
            ));
        }
        Ok(acc)
    }

    /// Resumes the accountant a ledger describes: built from its header, then every
    /// record replayed (see [`with_ledger`](Self::with_ledger)).
    ///
    /// # Errors
    ///
    /// As [`with_ledger`](Self::with_ledger), and those of [`from_header`](Self::from_header).
    pub fn open(store: impl LedgerStore + 'static) -> Result<Self, Error> {
        let header = store.read(u64::MAX)?.header;
        Self::from_header(&header)?.with_ledger(store)
    }

    /// This accountant, backed by `store`: the ledger's header must be this accountant's
    /// [`ledger_header`](Self::ledger_header) (else [`LedgerErrorKind::Mismatch`]); its
    /// records are replayed under this budget's rule — each must be a valid charge of
    /// this budget's kind and the totals must stay within the budget, else the ledger
    /// is [`LedgerErrorKind::Corrupt`] and refused. From then on every charge is
    /// committed to the store before it counts and before any noise is drawn, and it
    /// sees the charges of every other process and analyst on the same ledger.
    ///
    /// [`spent`](Self::spent), [`remaining`](Self::remaining) and [`ledger`](Self::ledger)
    /// report what this accountant has read: as of its last charge, or of
    /// [`refresh`](Self::refresh).
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`]: `Mismatch` for another budget, mode, plan or relation;
    /// `Corrupt` for contents that do not verify; `Unavailable` if the store cannot be
    /// read; `Denied` for an unknown data set. Also [`Error::IncompatibleLoss`] if the
    /// analyst's share cannot be a budget of the ledger's kind.
    pub fn with_ledger(mut self, store: impl LedgerStore + 'static) -> Result<Self, Error> {
        let snapshot = store.read(0)?;
        let mine = self.ledger_header();
        if snapshot.header != mine {
            return Err(ledger_error(
                LedgerErrorKind::Mismatch,
                format!(
                    "the ledger holds `{}`, the accountant is `{}`",
                    snapshot.header.encode(),
                    mine.encode()
                ),
            ));
        }
        let analyst = store.analyst().to_owned();
        {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            *state = State::default();
            self.absorb(&mut state, &snapshot, &analyst)?;
        }
        self.store = Some(Box::new(store));
        Ok(self)
    }

    /// Reads the records other processes committed since this accountant last looked.
    /// Without a ledger store, does nothing.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`] as for [`with_ledger`](Self::with_ledger).
    pub fn refresh(&self) -> Result<(), Error> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        let mut state = self.lock();
        let snapshot = store.read(state.synced)?;
        self.absorb(&mut state, &snapshot, store.analyst())
    }

    /// The analyst's share of the budget, as last read from the ledger (`None` without
    /// a ledger store or when the admin set no share).
    pub fn share(&self) -> Option<PrivacyLoss> {
        self.lock().share.as_ref().map(|(s, _)| *s)
    }

    /// Replays `snapshot` (records after `state.synced`) into `state`, verifying each.
    fn absorb(&self, state: &mut State, snapshot: &LedgerSnapshot, analyst: &str) -> Result<(), Error> {
        let corrupt = |detail: String| ledger_error(LedgerErrorKind::Corrupt, detail);
        if state.share.as_ref().map(|(s, _)| *s) != snapshot.share {
            state.share = match snapshot.share {
                None => None,
                Some(share) => {
                    let header = LedgerHeader {
                        budget: share,
                        plan: None,
                        ..self.ledger_header()
                    };
                    if self.plan.is_some()
                        || std::mem::discriminant(&share) != std::mem::discriminant(&self.budget)
                    {
                        return Err(Error::IncompatibleLoss {
                            reason: "an analyst's share must be a budget of the ledger's kind (and a plan has no shares)",
                        });
                    }
                    let sub = Self::from_header(&header)?;
                    {
                        let mut sub_state = sub.lock();
                        for e in state
                            .ledger
                            .iter()
                            .filter(|e| e.analyst.as_deref() == Some(analyst))
                        {
                            let mut t = sub_state.totals;
                            // An analyst over a share lowered later stays over it.
                            if !sub.admit(&mut t, e.charged, sub.rdp_of(e.charged)?) {
                                t.over = true;
                            }
                            sub_state.totals = t;
                        }
                    }
                    Some((share, Box::new(sub)))
                }
            };
        }
        for record in &snapshot.records {
            if record.seq != state.synced + 1 {
                return Err(corrupt(format!(
                    "record {} follows record {}: the ledger is not contiguous",
                    record.seq, state.synced
                )));
            }
            let e = &record.entry;
            let charged = e.charged;
            // A plan's charges are exactly ε₀ (and `convert` would lock the state to
            // report a refusal); every other rule's charges are fixed points of `convert`.
            let valid = match &self.plan {
                Some(plan) => {
                    charged
                        == PrivacyLoss::Pure {
                            epsilon: plan.per_step_epsilon,
                        }
                }
                None => self.convert(charged).ok() == Some(charged),
            };
            if !valid {
                return Err(corrupt(format!(
                    "record {} is not a valid charge: {}",
                    record.seq,
                    record.encode()
                )));
            }
            if !self.admit(&mut state.totals, charged, self.rdp_of(charged)?) {
                return Err(corrupt(format!(
                    "record {} takes the total above the budget",
                    record.seq
                )));
            }
            if e.analyst.as_deref() == Some(analyst)
                && let Some((_, sub)) = &state.share
            {
                let mut sub_state = sub.lock();
                let mut t = sub_state.totals;
                if !sub.admit(&mut t, charged, sub.rdp_of(charged)?) {
                    t.over = true;
                }
                sub_state.totals = t;
            }
            state.ledger.push(e.clone());
            state.synced = record.seq;
        }
        Ok(())
    }

    /// Charges `entry` durably: inside the store's lock, replays what others committed,
    /// checks the budget and the analyst's share, and returns only after the store
    /// committed the record.
    pub(super) fn charge_durably(&self, mut entry: LedgerEntry, rdp: Option<f64>) -> Result<(), Error> {
        let Some(store) = &self.store else {
            return Err(ledger_error(LedgerErrorKind::Denied, "no ledger store"));
        };
        let analyst = store.analyst();
        entry.analyst = Some(analyst.to_owned());
        let mut state = self.lock();
        let mut accepted: Option<(Totals, Option<Totals>, LedgerRecord)> = None;
        store.charge(state.synced, &mut |snapshot| {
            accepted = None;
            self.absorb(&mut state, snapshot, analyst)?;
            let mut totals = state.totals;
            if !self.admit(&mut totals, entry.charged, rdp) {
                return Err(self.refusal(entry.requested, &state.totals));
            }
            let share_totals = match &state.share {
                None => None,
                Some((_, sub)) => {
                    let mut t = sub.lock().totals;
                    let before = t;
                    if !sub.admit(&mut t, entry.charged, sub.rdp_of(entry.charged)?) {
                        return Err(sub.refusal(entry.requested, &before));
                    }
                    Some(t)
                }
            };
            let record = LedgerRecord {
                seq: state.synced + 1,
                entry: entry.clone(),
            };
            accepted = Some((totals, share_totals, record.clone()));
            Ok(record)
        })?;
        let Some((totals, share_totals, record)) = accepted else {
            return Err(ledger_error(
                LedgerErrorKind::Unavailable,
                "the store returned without asking for a decision",
            ));
        };
        state.totals = totals;
        if let (Some(t), Some((_, sub))) = (share_totals, &state.share) {
            sub.lock().totals = t;
        }
        state.synced = record.seq;
        state.ledger.push(record.entry);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::composition::ledger::LedgerStore;
    use crate::composition::{Charge, Plan, PlanRule};
    use std::sync::{Arc, Mutex};

    /// The header, the records and one analyst's share.
    type Contents = (LedgerHeader, Vec<LedgerRecord>, Option<(String, PrivacyLoss)>);

    /// A store in memory, shared by handles: the protocol without a file.
    #[derive(Debug, Clone)]
    struct Memory {
        shared: Arc<Mutex<Contents>>,
        analyst: String,
    }

    impl Memory {
        fn new(header: LedgerHeader) -> Self {
            Self {
                shared: Arc::new(Mutex::new((header, Vec::new(), None))),
                analyst: "a".into(),
            }
        }

        fn as_analyst(&self, analyst: &str) -> Self {
            Self {
                analyst: analyst.into(),
                ..self.clone()
            }
        }
    }

    impl LedgerStore for Memory {
        fn analyst(&self) -> &str {
            &self.analyst
        }

        fn read(&self, after: u64) -> Result<LedgerSnapshot, Error> {
            let s = self.shared.lock().unwrap();
            Ok(LedgerSnapshot {
                header: s.0,
                records: s.1.iter().filter(|r| r.seq > after).cloned().collect(),
                share: s
                    .2
                    .as_ref()
                    .filter(|(who, _)| *who == self.analyst)
                    .map(|(_, l)| *l),
            })
        }

        fn charge(
            &self,
            after: u64,
            decide: &mut dyn FnMut(&LedgerSnapshot) -> Result<LedgerRecord, Error>,
        ) -> Result<(), Error> {
            let snapshot = self.read(after)?;
            let record = decide(&snapshot)?;
            self.shared.lock().unwrap().1.push(record);
            Ok(())
        }
    }

    #[test]
    fn charges_resume_and_are_shared() {
        let store = Memory::new(Accountant::zcdp(1.0).unwrap().ledger_header());
        let a = Accountant::zcdp(1.0).unwrap().with_ledger(store.clone()).unwrap();
        let b = Accountant::open(store.as_analyst("b")).unwrap();
        a.spend(Charge::new(PrivacyLoss::pure(1.0).unwrap()).labelled("x"))
            .unwrap(); // ρ = 1/2
        assert!(matches!(
            b.spend(PrivacyLoss::zcdp(0.75).unwrap()),
            Err(Error::BudgetExceeded { .. })
        ));
        b.spend(PrivacyLoss::zcdp(0.5).unwrap()).unwrap();
        let resumed = Accountant::open(store.as_analyst("c")).unwrap();
        assert_eq!(resumed.spent(), PrivacyLoss::Zcdp { rho: 1.0 });
        let who: Vec<_> = resumed.ledger().into_iter().map(|e| e.analyst.unwrap()).collect();
        assert_eq!(who, ["a", "b"]);
        let mismatch = Accountant::zcdp(2.0).unwrap().with_ledger(store).unwrap_err();
        assert!(matches!(
            mismatch,
            Error::Ledger {
                kind: LedgerErrorKind::Mismatch,
                ..
            }
        ));
    }

    #[test]
    fn records_that_are_not_valid_charges_are_corrupt() {
        let plan = Plan {
            steps: 3,
            per_step_epsilon: 0.1,
            rule: PlanRule::Optimal { delta: 1e-6 },
        };
        let store = Memory::new(Accountant::with_plan(plan).unwrap().ledger_header());
        let acc = Accountant::open(store.clone()).unwrap();
        acc.spend(PrivacyLoss::pure(0.05).unwrap()).unwrap();
        // A record charging more than ε₀ to a plan (refused, not a deadlock), one
        // charging zCDP to it, and one out of sequence.
        for (seq, charged) in [
            (2, PrivacyLoss::Pure { epsilon: 0.2 }),
            (2, PrivacyLoss::Zcdp { rho: 0.01 }),
            (5, PrivacyLoss::Pure { epsilon: 0.1 }),
        ] {
            let bad = store.clone();
            let mut entry = acc.ledger()[0].clone();
            entry.charged = charged;
            bad.shared.lock().unwrap().1.push(LedgerRecord { seq, entry });
            let err = Accountant::open(bad.clone()).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Ledger {
                        kind: LedgerErrorKind::Corrupt,
                        ..
                    }
                ),
                "{err}"
            );
            bad.shared.lock().unwrap().1.pop();
        }
        // More records than the plan has steps: above the budget, corrupt.
        let mut entry = acc.ledger()[0].clone();
        entry.charged = PrivacyLoss::Pure { epsilon: 0.1 };
        for seq in 2..=4 {
            store.shared.lock().unwrap().1.push(LedgerRecord {
                seq,
                entry: entry.clone(),
            });
        }
        assert!(matches!(
            Accountant::open(store),
            Err(Error::Ledger {
                kind: LedgerErrorKind::Corrupt,
                ..
            })
        ));
    }

    #[test]
    fn a_share_limits_its_analyst_only() {
        let store = Memory::new(
            Accountant::filter(PrivacyLoss::approximate(1.0, 1e-6).unwrap())
                .unwrap()
                .ledger_header(),
        );
        store.shared.lock().unwrap().2 = Some(("a".into(), PrivacyLoss::approximate(0.5, 1e-6).unwrap()));
        let a = Accountant::open(store.clone()).unwrap();
        let b = Accountant::open(store.as_analyst("b")).unwrap();
        let count = |acc: &Accountant| {
            let mut n = 0u64;
            while acc.spend(PrivacyLoss::pure(0.01).unwrap()).is_ok() {
                n += 1;
            }
            n
        };
        // In memory: how many 0.01 charges the share's filter and the total's allow.
        let share_alone = count(&Accountant::filter(PrivacyLoss::approximate(0.5, 1e-6).unwrap()).unwrap());
        let total_alone = count(&Accountant::filter(PrivacyLoss::approximate(1.0, 1e-6).unwrap()).unwrap());
        let (mut na, mut nb) = (0u64, 0u64);
        while a.spend(PrivacyLoss::pure(0.01).unwrap()).is_ok() {
            na += 1;
        }
        while b.spend(PrivacyLoss::pure(0.01).unwrap()).is_ok() {
            nb += 1;
        }
        // The share's own Rényi filter stops a; b goes on up to the total.
        assert_eq!(na, share_alone);
        assert_eq!(na + nb, total_alone);
        assert!(share_alone < total_alone);
        assert!(a.spend(PrivacyLoss::pure(0.01).unwrap()).is_err());
        let total = Accountant::open(store.as_analyst("c")).unwrap();
        assert!(total.spend(PrivacyLoss::pure(0.01).unwrap()).is_err());
        assert_eq!(total.charges(), na + nb);
    }
}
