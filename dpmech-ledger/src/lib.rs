//! Durable, shared privacy ledgers for [`dpmech`] accountants: a budget that survives a
//! restart and that several processes — and several analysts — draw on without
//! overspending.
//!
//! Two stores implement [`dpmech::composition::ledger::LedgerStore`]:
//!
//! * [`SqliteLedger`] — **embedded, one file**, no server. SQLite in WAL mode with
//!   `synchronous = FULL`: a charge is a `BEGIN IMMEDIATE` transaction (one writer at a
//!   time across processes, others wait up to the busy timeout) committed with an fsync
//!   of the write-ahead log before the charge returns.
//! * [`PgLedger`] — **PostgreSQL**, for a team: one transaction per charge that locks
//!   the data set's row (`SELECT … FOR UPDATE`), reads the records committed since,
//!   checks the budget inside the transaction and commits (durable with the server's
//!   default `synchronous_commit = on`).
//!
//! ```no_run
//! use dpmech::{Accountant, Laplace};
//! // Embedded: the first call creates the data set with this budget, later ones resume it.
//! let acc = dpmech_ledger::embedded("budget.sqlite", "patients", "alice", Accountant::pure(1.0)?)?;
//! // PostgreSQL: the same, on a server the team shares.
//! let acc = dpmech_ledger::postgres("host=db.internal user=dp dbname=dp", "patients", "alice", Accountant::pure(1.0)?)?;
//! # Ok::<(), dpmech::Error>(())
//! ```
//!
//! # Budgets per data set and per analyst
//!
//! One ledger per data set (its name is the key); its header fixes the total budget,
//! the mode and the relation, and every analyst's charges count against it. An admin
//! handle ([`SqliteAdmin`], [`PgAdmin`]) creates data sets and sets each analyst's
//! share (a budget of the same kind that the analyst's own charges must also fit). An
//! analyst's handle ([`SqliteLedger`], [`PgLedger`]) only reads and appends: it has no
//! call that changes a budget or a share. (Against someone with write access to the
//! file or the tables this is an API boundary, not a protection: on PostgreSQL, give
//! analysts' roles `INSERT` on `dp_entries` and `UPDATE` on `dp_datasets` only.)
//!
//! # Verification: a hash chain
//!
//! Each record stores `hᵢ = SHA-256(hᵢ₋₁ ‖ recordᵢ)`, with `h₀ = SHA-256(data set ‖
//! header)`; the data set's row keeps the last sequence number and hash (the *head*),
//! updated in the same transaction as the append. On opening, the whole chain is
//! recomputed, and every record is replayed under the budget's rule. A ledger refuses
//! to open ([`LedgerErrorKind::Corrupt`](dpmech::composition::ledger::LedgerErrorKind))
//! when
//!
//! * a record, or the header, was edited (its hash or the next one's no longer match);
//! * records were removed or reordered in the middle (the sequence numbers are not
//!   contiguous, or the chain breaks);
//! * records were removed at the end (the head names a record that is not there) or
//!   the file was truncated (SQLite reports a malformed database);
//! * a record's loss does not decode, is not a valid charge of the budget's kind, or
//!   takes the total above the budget.
//!
//! It does **not** protect against someone who can write the store and rewrites it
//! consistently — e.g. deletes the last records *and* moves the head back, or
//! recomputes the chain after an edit: SHA-256 is not keyed, and the head is kept in
//! the same store. Detecting that needs the head hash kept elsewhere (e.g. printed in
//! each release's audit log); [`SqliteLedger::head`] returns it for that purpose.

#![forbid(unsafe_code)]

mod chain;
mod pg;
mod sqlite;

pub use chain::{genesis, link};
pub use pg::{PgAdmin, PgLedger};
pub use sqlite::{SqliteAdmin, SqliteLedger};

use dpmech::{Accountant, Error};

/// An accountant backed by the embedded ledger at `path` for data set `dataset`,
/// charging as `analyst`: the data set is created with `accountant`'s budget if the
/// file does not hold it yet, then the accountant resumes from the ledger.
///
/// # Errors
///
/// [`Error::Ledger`]: `Unavailable` if the file cannot be opened or written;
/// `Mismatch` if the data set exists with another budget, mode or relation; `Corrupt`
/// if its contents do not verify.
pub fn embedded(
    path: impl AsRef<std::path::Path>,
    dataset: &str,
    analyst: &str,
    accountant: Accountant,
) -> Result<Accountant, Error> {
    SqliteAdmin::open(path.as_ref())?.create(dataset, &accountant.ledger_header())?;
    accountant.with_ledger(SqliteLedger::open(path, dataset, analyst)?)
}

/// An accountant backed by the PostgreSQL ledger at `conninfo` (a libpq-style
/// connection string, e.g. `host=127.0.0.1 port=5432 user=dp dbname=dp`) for data set
/// `dataset`, charging as `analyst`; the tables and the data set are created if absent.
///
/// # Errors
///
/// As [`embedded`], with `Unavailable` when the server cannot be reached.
pub fn postgres(
    conninfo: &str,
    dataset: &str,
    analyst: &str,
    accountant: Accountant,
) -> Result<Accountant, Error> {
    PgAdmin::connect(conninfo)?.create(dataset, &accountant.ledger_header())?;
    accountant.with_ledger(PgLedger::connect(conninfo, dataset, analyst)?)
}
