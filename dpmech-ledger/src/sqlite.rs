//! The embedded store: one SQLite file (WAL, `synchronous = FULL`).

use crate::chain::{Raw, corrupt, next_record, verify};
use dpmech::Error;
use dpmech::PrivacyLoss;
use dpmech::composition::ledger::{
    LedgerErrorKind, LedgerHeader, LedgerRecord, LedgerSnapshot, LedgerStore, encode_loss, ledger_error,
};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior, params};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// How long a charge waits for another process's charge to commit.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS dp_datasets (
    name TEXT PRIMARY KEY, header TEXT NOT NULL,
    head_seq INTEGER NOT NULL, head_hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dp_entries (
    dataset TEXT NOT NULL, seq INTEGER NOT NULL, record TEXT NOT NULL, hash TEXT NOT NULL,
    PRIMARY KEY (dataset, seq));
CREATE TABLE IF NOT EXISTS dp_shares (
    dataset TEXT NOT NULL, analyst TEXT NOT NULL, share TEXT NOT NULL,
    PRIMARY KEY (dataset, analyst));
";

/// A SQLite error as a ledger error: a malformed file is `Corrupt`, anything else
/// (read-only, full disk, I/O, busy too long) `Unavailable`.
fn sql(e: rusqlite::Error) -> Error {
    let kind = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => LedgerErrorKind::Corrupt,
        _ => LedgerErrorKind::Unavailable,
    };
    ledger_error(kind, format!("sqlite: {e}"))
}

fn connect(path: &Path, create: bool) -> Result<Connection, Error> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
    // Every commit fsyncs the write-ahead log before it returns.
    conn.pragma_update(None, "synchronous", "FULL").map_err(sql)?;
    // Reading the schema forces SQLite to read the file: a file that is not a database
    // (e.g. truncated inside its header) is refused here.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))
        .map_err(sql)?;
    Ok(conn)
}

/// Reads a data set's header, head, the records after `after` and the share.
fn load(conn: &Connection, dataset: &str, analyst: &str, after: u64) -> Result<Raw, Error> {
    let head: Option<(String, i64, String)> = conn
        .query_row(
            "SELECT header, head_seq, head_hash FROM dp_datasets WHERE name = ?1",
            params![dataset],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(sql)?;
    let Some((header, head_seq, head_hash)) = head else {
        return Err(ledger_error(
            LedgerErrorKind::Denied,
            format!("no data set {dataset:?} in this ledger (an admin creates it)"),
        ));
    };
    let share = conn
        .query_row(
            "SELECT share FROM dp_shares WHERE dataset = ?1 AND analyst = ?2",
            params![dataset, analyst],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql)?;
    let mut raw = Raw {
        header,
        head_seq,
        head_hash,
        prev_hash: None,
        rows: Vec::new(),
        share,
    };
    if after == u64::MAX {
        return Ok(raw);
    }
    let after = i64::try_from(after).map_err(|_| corrupt("sequence number out of range"))?;
    if after > 0 {
        raw.prev_hash = conn
            .query_row(
                "SELECT hash FROM dp_entries WHERE dataset = ?1 AND seq = ?2",
                params![dataset, after],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT seq, record, hash FROM dp_entries WHERE dataset = ?1 AND seq > ?2 ORDER BY seq",
        )
        .map_err(sql)?;
    raw.rows = stmt
        .query_map(params![dataset, after], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(sql)?
        .collect::<Result<_, _>>()
        .map_err(sql)?;
    Ok(raw)
}

/// An analyst's handle on one data set of an embedded ledger file: reads and appends
/// only (see [`SqliteAdmin`] for budgets and shares).
///
/// ```no_run
/// use dpmech::Accountant;
/// use dpmech_ledger::{SqliteAdmin, SqliteLedger};
/// let admin = SqliteAdmin::open("budget.sqlite")?;
/// admin.create("patients", &Accountant::pure(1.0)?.ledger_header())?;
/// admin.set_share("patients", "alice", Some(dpmech::PrivacyLoss::pure(0.25)?))?;
/// let acc = Accountant::open(SqliteLedger::open("budget.sqlite", "patients", "alice")?)?;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug)]
pub struct SqliteLedger {
    conn: Mutex<Connection>,
    dataset: String,
    analyst: String,
}

impl SqliteLedger {
    /// Opens the existing ledger file at `path` for `dataset`, charging as `analyst`.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`]: `Unavailable` if the file does not exist or cannot be opened
    /// for writing; `Corrupt` if it is not a database.
    pub fn open(path: impl AsRef<Path>, dataset: &str, analyst: &str) -> Result<Self, Error> {
        Ok(Self {
            conn: Mutex::new(connect(path.as_ref(), false)?),
            dataset: dataset.to_owned(),
            analyst: analyst.to_owned(),
        })
    }

    /// The head of the chain, `(last sequence number, its hash)`: keep it outside the
    /// file (e.g. in an audit log) to detect a later consistent rewrite or truncation.
    ///
    /// # Errors
    ///
    /// As [`LedgerStore::read`].
    pub fn head(&self) -> Result<(u64, String), Error> {
        let raw = load(&self.lock(), &self.dataset, &self.analyst, u64::MAX)?;
        Ok((
            u64::try_from(raw.head_seq).map_err(|_| corrupt("negative head"))?,
            raw.head_hash,
        ))
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl LedgerStore for SqliteLedger {
    fn analyst(&self) -> &str {
        &self.analyst
    }

    fn read(&self, after: u64) -> Result<LedgerSnapshot, Error> {
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(sql)?;
        let raw = load(&tx, &self.dataset, &self.analyst, after)?;
        drop(tx);
        verify(&self.dataset, after, raw)
    }

    fn charge(
        &self,
        after: u64,
        decide: &mut dyn FnMut(&LedgerSnapshot) -> Result<LedgerRecord, Error>,
    ) -> Result<(), Error> {
        let mut conn = self.lock();
        // IMMEDIATE: the write lock is taken now, so no other process appends between
        // this read and this append.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let raw = load(&tx, &self.dataset, &self.analyst, after)?;
        let (seq, text, hash) = next_record(&self.dataset, after, raw, decide)?; // an error rolls back
        tx.execute(
            "INSERT INTO dp_entries (dataset, seq, record, hash) VALUES (?1, ?2, ?3, ?4)",
            params![self.dataset, seq, text, hash],
        )
        .map_err(sql)?;
        tx.execute(
            "UPDATE dp_datasets SET head_seq = ?2, head_hash = ?3 WHERE name = ?1",
            params![self.dataset, seq, hash],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)
    }
}

/// The admin's handle on an embedded ledger file: creates data sets and sets analysts'
/// shares. Analysts charge through [`SqliteLedger`], which cannot do either.
#[derive(Debug)]
pub struct SqliteAdmin {
    conn: Connection,
}

impl SqliteAdmin {
    /// Opens (creating if needed) the ledger file at `path`.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`]: `Unavailable` if the file cannot be created or written;
    /// `Corrupt` if it is not a database.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let conn = connect(path.as_ref(), true)?;
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(sql)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(ledger_error(
                LedgerErrorKind::Unavailable,
                format!("the ledger file cannot use write-ahead logging (journal mode {mode})"),
            ));
        }
        conn.execute_batch(SCHEMA).map_err(sql)?;
        Ok(Self { conn })
    }

    /// Creates `dataset` with `header` (budget, mode, relation), or checks that it
    /// already has exactly this header.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`]: `Mismatch` if the data set exists with another header;
    /// `Unavailable` if the file cannot be written.
    pub fn create(&self, dataset: &str, header: &LedgerHeader) -> Result<(), Error> {
        let text = header.encode();
        let genesis = crate::chain::genesis(dataset, &text);
        self.conn
            .execute(
                "INSERT INTO dp_datasets (name, header, head_seq, head_hash) VALUES (?1, ?2, 0, ?3) \
                 ON CONFLICT (name) DO NOTHING",
                params![dataset, text, genesis],
            )
            .map_err(sql)?;
        let stored: String = self
            .conn
            .query_row(
                "SELECT header FROM dp_datasets WHERE name = ?1",
                params![dataset],
                |r| r.get(0),
            )
            .map_err(sql)?;
        check_header(dataset, &stored, &text)
    }

    /// Sets (`Some`) or removes (`None`) `analyst`'s share of `dataset`: a budget of
    /// the data set's kind that the analyst's own charges must fit, besides the total.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`] (`Denied`) for an unknown data set; `Unavailable` if the file
    /// cannot be written.
    pub fn set_share(&self, dataset: &str, analyst: &str, share: Option<PrivacyLoss>) -> Result<(), Error> {
        let known: Option<i64> = self
            .conn
            .query_row(
                "SELECT 1 FROM dp_datasets WHERE name = ?1",
                params![dataset],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
        if known.is_none() {
            return Err(ledger_error(
                LedgerErrorKind::Denied,
                format!("no data set {dataset:?}"),
            ));
        }
        match share {
            Some(loss) => self.conn.execute(
                "INSERT INTO dp_shares (dataset, analyst, share) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (dataset, analyst) DO UPDATE SET share = excluded.share",
                params![dataset, analyst, encode_loss(loss)],
            ),
            None => self.conn.execute(
                "DELETE FROM dp_shares WHERE dataset = ?1 AND analyst = ?2",
                params![dataset, analyst],
            ),
        }
        .map(drop)
        .map_err(sql)
    }
}

/// `Mismatch` unless the stored header is the expected one.
pub(crate) fn check_header(dataset: &str, stored: &str, expected: &str) -> Result<(), Error> {
    if stored == expected {
        Ok(())
    } else {
        Err(ledger_error(
            LedgerErrorKind::Mismatch,
            format!("data set {dataset:?} holds `{stored}`, not `{expected}`"),
        ))
    }
}
