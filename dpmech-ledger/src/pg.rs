//! The PostgreSQL store: one transaction per charge, the data set's row locked.

use crate::chain::{Raw, corrupt, next_record, verify};
use crate::sqlite::check_header;
use dpmech::composition::ledger::{
    LedgerErrorKind, LedgerHeader, LedgerRecord, LedgerSnapshot, LedgerStore, encode_loss, ledger_error,
};
use dpmech::{Error, PrivacyLoss};
use postgres::{Client, GenericClient, NoTls};
use std::sync::{Mutex, MutexGuard};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS dp_datasets (
    name TEXT PRIMARY KEY, header TEXT NOT NULL,
    head_seq BIGINT NOT NULL, head_hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dp_entries (
    dataset TEXT NOT NULL REFERENCES dp_datasets (name), seq BIGINT NOT NULL,
    record TEXT NOT NULL, hash TEXT NOT NULL,
    PRIMARY KEY (dataset, seq));
CREATE TABLE IF NOT EXISTS dp_shares (
    dataset TEXT NOT NULL REFERENCES dp_datasets (name), analyst TEXT NOT NULL,
    share TEXT NOT NULL, PRIMARY KEY (dataset, analyst));
";

/// Any PostgreSQL error as `Unavailable` (the server is down, the connection was lost,
/// the transaction could not commit): the charge was not confirmed.
fn pg(e: postgres::Error) -> Error {
    ledger_error(LedgerErrorKind::Unavailable, format!("postgres: {e}"))
}

fn load(
    client: &mut impl GenericClient,
    dataset: &str,
    analyst: &str,
    after: u64,
    lock: bool,
) -> Result<Raw, Error> {
    let sql = if lock {
        "SELECT header, head_seq, head_hash FROM dp_datasets WHERE name = $1 FOR UPDATE"
    } else {
        "SELECT header, head_seq, head_hash FROM dp_datasets WHERE name = $1"
    };
    let Some(head) = client.query_opt(sql, &[&dataset]).map_err(pg)? else {
        return Err(ledger_error(
            LedgerErrorKind::Denied,
            format!("no data set {dataset:?} in this ledger (an admin creates it)"),
        ));
    };
    let share = client
        .query_opt(
            "SELECT share FROM dp_shares WHERE dataset = $1 AND analyst = $2",
            &[&dataset, &analyst],
        )
        .map_err(pg)?
        .map(|r| r.get(0));
    let mut raw = Raw {
        header: head.get(0),
        head_seq: head.get(1),
        head_hash: head.get(2),
        prev_hash: None,
        rows: Vec::new(),
        share,
    };
    if after == u64::MAX {
        return Ok(raw);
    }
    let after = i64::try_from(after).map_err(|_| corrupt("sequence number out of range"))?;
    if after > 0 {
        raw.prev_hash = client
            .query_opt(
                "SELECT hash FROM dp_entries WHERE dataset = $1 AND seq = $2",
                &[&dataset, &after],
            )
            .map_err(pg)?
            .map(|r| r.get(0));
    }
    raw.rows = client
        .query(
            "SELECT seq, record, hash FROM dp_entries WHERE dataset = $1 AND seq > $2 ORDER BY seq",
            &[&dataset, &after],
        )
        .map_err(pg)?
        .into_iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    Ok(raw)
}

/// An analyst's handle on one data set of a PostgreSQL ledger: reads and appends only
/// (see [`PgAdmin`] for budgets and shares). A lost connection is re-established on the
/// next call.
pub struct PgLedger {
    conninfo: String,
    client: Mutex<Option<Client>>,
    dataset: String,
    analyst: String,
}

impl PgLedger {
    /// Connects to the ledger at `conninfo` (libpq style, e.g. `host=127.0.0.1
    /// port=5432 user=dp dbname=dp connect_timeout=5`) for `dataset`, charging as
    /// `analyst`.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`] (`Unavailable`) if the server cannot be reached.
    pub fn connect(conninfo: &str, dataset: &str, analyst: &str) -> Result<Self, Error> {
        Ok(Self {
            conninfo: conninfo.to_owned(),
            client: Mutex::new(Some(Client::connect(conninfo, NoTls).map_err(pg)?)),
            dataset: dataset.to_owned(),
            analyst: analyst.to_owned(),
        })
    }

    /// The head of the chain, `(last sequence number, its hash)` (see
    /// [`SqliteLedger::head`](crate::SqliteLedger::head)).
    ///
    /// # Errors
    ///
    /// As [`LedgerStore::read`].
    pub fn head(&self) -> Result<(u64, String), Error> {
        let mut guard = self.client()?;
        let client = guard.as_mut().ok_or_else(|| corrupt("no connection"))?;
        let raw = load(client, &self.dataset, &self.analyst, u64::MAX, false)?;
        Ok((
            u64::try_from(raw.head_seq).map_err(|_| corrupt("negative head"))?,
            raw.head_hash,
        ))
    }

    /// The connection, re-established if it was closed.
    fn client(&self) -> Result<MutexGuard<'_, Option<Client>>, Error> {
        let mut guard = self.client.lock().unwrap_or_else(|e| e.into_inner());
        if guard.as_ref().is_none_or(Client::is_closed) {
            *guard = None;
            *guard = Some(Client::connect(&self.conninfo, NoTls).map_err(pg)?);
        }
        Ok(guard)
    }

    /// Runs `f` on the connection; on an error the connection is dropped if closed.
    fn with<T>(&self, f: impl FnOnce(&mut Client) -> Result<T, Error>) -> Result<T, Error> {
        let mut guard = self.client()?;
        let client = guard.as_mut().ok_or_else(|| corrupt("no connection"))?;
        let out = f(client);
        if out.is_err() && client.is_closed() {
            *guard = None;
        }
        out
    }
}

impl LedgerStore for PgLedger {
    fn analyst(&self) -> &str {
        &self.analyst
    }

    fn read(&self, after: u64) -> Result<LedgerSnapshot, Error> {
        self.with(|client| {
            let mut tx = client
                .build_transaction()
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .map_err(pg)?;
            let raw = load(&mut tx, &self.dataset, &self.analyst, after, false)?;
            tx.commit().map_err(pg)?;
            verify(&self.dataset, after, raw)
        })
    }

    fn charge(
        &self,
        after: u64,
        decide: &mut dyn FnMut(&LedgerSnapshot) -> Result<LedgerRecord, Error>,
    ) -> Result<(), Error> {
        self.with(|client| {
            // READ COMMITTED with the data set's row locked: charges on one data set
            // are serialised, and each statement after the lock sees every record
            // committed before it.
            let mut tx = client.transaction().map_err(pg)?;
            let raw = load(&mut tx, &self.dataset, &self.analyst, after, true)?;
            let (seq, text, hash) = next_record(&self.dataset, after, raw, decide)?; // an error rolls back
            tx.execute(
                "INSERT INTO dp_entries (dataset, seq, record, hash) VALUES ($1, $2, $3, $4)",
                &[&self.dataset, &seq, &text, &hash],
            )
            .map_err(pg)?;
            tx.execute(
                "UPDATE dp_datasets SET head_seq = $2, head_hash = $3 WHERE name = $1",
                &[&self.dataset, &seq, &hash],
            )
            .map_err(pg)?;
            tx.commit().map_err(pg)
        })
    }
}

/// The admin's handle on a PostgreSQL ledger: creates the tables and data sets and sets
/// analysts' shares.
pub struct PgAdmin {
    client: Mutex<Client>,
}

impl std::fmt::Debug for PgLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The connection string may hold a password: not printed.
        f.debug_struct("PgLedger")
            .field("dataset", &self.dataset)
            .field("analyst", &self.analyst)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for PgAdmin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgAdmin").finish_non_exhaustive()
    }
}

impl PgAdmin {
    /// Connects to `conninfo` and creates the ledger's tables if absent.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`] (`Unavailable`) if the server cannot be reached or the tables
    /// cannot be created.
    pub fn connect(conninfo: &str) -> Result<Self, Error> {
        let mut client = Client::connect(conninfo, NoTls).map_err(pg)?;
        client.batch_execute(SCHEMA).map_err(pg)?;
        Ok(Self {
            client: Mutex::new(client),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Client> {
        self.client.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates `dataset` with `header`, or checks that it already has exactly it.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`]: `Mismatch` for another header; `Unavailable` on a server error.
    pub fn create(&self, dataset: &str, header: &LedgerHeader) -> Result<(), Error> {
        let text = header.encode();
        let genesis = crate::chain::genesis(dataset, &text);
        let mut client = self.lock();
        client
            .execute(
                "INSERT INTO dp_datasets (name, header, head_seq, head_hash) VALUES ($1, $2, 0, $3) \
                 ON CONFLICT (name) DO NOTHING",
                &[&dataset, &text, &genesis],
            )
            .map_err(pg)?;
        let stored: String = client
            .query_one("SELECT header FROM dp_datasets WHERE name = $1", &[&dataset])
            .map_err(pg)?
            .get(0);
        check_header(dataset, &stored, &text)
    }

    /// Sets (`Some`) or removes (`None`) `analyst`'s share of `dataset`.
    ///
    /// # Errors
    ///
    /// [`Error::Ledger`] (`Denied`) for an unknown data set; `Unavailable` on a server
    /// error.
    pub fn set_share(&self, dataset: &str, analyst: &str, share: Option<PrivacyLoss>) -> Result<(), Error> {
        let mut client = self.lock();
        if client
            .query_opt("SELECT 1 FROM dp_datasets WHERE name = $1", &[&dataset])
            .map_err(pg)?
            .is_none()
        {
            return Err(ledger_error(
                LedgerErrorKind::Denied,
                format!("no data set {dataset:?}"),
            ));
        }
        match share {
            Some(loss) => client.execute(
                "INSERT INTO dp_shares (dataset, analyst, share) VALUES ($1, $2, $3) \
                 ON CONFLICT (dataset, analyst) DO UPDATE SET share = excluded.share",
                &[&dataset, &analyst, &encode_loss(loss)],
            ),
            None => client.execute(
                "DELETE FROM dp_shares WHERE dataset = $1 AND analyst = $2",
                &[&dataset, &analyst],
            ),
        }
        .map(drop)
        .map_err(pg)
    }
}
