//! The hash chain over a data set's records and the verification both stores share.

use dpmech::Error;
use dpmech::composition::ledger::{
    LedgerErrorKind, LedgerHeader, LedgerRecord, LedgerSnapshot, decode_loss, ledger_error,
};

/// A store's decision callback (see [`dpmech::composition::ledger::LedgerStore::charge`]).
pub(crate) type Decide<'a> = &'a mut dyn FnMut(&LedgerSnapshot) -> Result<LedgerRecord, Error>;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

/// `h₀ = SHA-256(dataset ‖ 0x00 ‖ header)` in lower-case hex: the hash the first
/// record links to (so a record cannot be moved to another data set or header).
pub fn genesis(dataset: &str, header: &str) -> String {
    let mut h = Sha256::new();
    h.update(dataset.as_bytes());
    h.update([0u8]);
    h.update(header.as_bytes());
    hex(&h.finalize())
}

/// `hᵢ = SHA-256(hᵢ₋₁ ‖ 0x00 ‖ recordᵢ)` in lower-case hex, `prev` being `hᵢ₋₁` in hex
/// and `record` the record's [`encode`](LedgerRecord::encode)d text.
pub fn link(prev: &str, record: &str) -> String {
    let mut h = Sha256::new();
    h.update(prev.as_bytes());
    h.update([0u8]);
    h.update(record.as_bytes());
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// What a store read for one data set inside its lock, before verification.
pub(crate) struct Raw {
    /// The header's text.
    pub header: String,
    /// The head: the last record's sequence number (0: none) and hash.
    pub head_seq: i64,
    pub head_hash: String,
    /// The hash of record `after` (`None` if it is missing); unused when `after = 0`.
    pub prev_hash: Option<String>,
    /// The records with `seq > after`, in order: (seq, text, hash).
    pub rows: Vec<(i64, String, String)>,
    /// The analyst's share, as text.
    pub share: Option<String>,
}

pub(crate) fn corrupt(detail: impl Into<String>) -> Error {
    ledger_error(LedgerErrorKind::Corrupt, detail)
}

/// Verifies `raw` (read for the records after `after`) and decodes it. With
/// `after = u64::MAX` only the header is read.
pub(crate) fn verify(dataset: &str, after: u64, raw: Raw) -> Result<LedgerSnapshot, Error> {
    let header = LedgerHeader::decode(&raw.header)?;
    let share = match raw.share {
        None => None,
        Some(text) => {
            Some(decode_loss(&text).ok_or_else(|| corrupt(format!("share {text:?} is not a loss")))?)
        }
    };
    let head_seq = u64::try_from(raw.head_seq).map_err(|_| corrupt("negative head"))?;
    if after == u64::MAX {
        return Ok(LedgerSnapshot {
            header,
            records: Vec::new(),
            share,
        });
    }
    if after > head_seq {
        return Err(corrupt(format!(
            "the ledger of {dataset:?} ends at record {head_seq}, but record {after} was read before: it was truncated"
        )));
    }
    let mut prev = if after == 0 {
        genesis(dataset, &raw.header)
    } else {
        raw.prev_hash
            .ok_or_else(|| corrupt(format!("record {after} of {dataset:?} is missing")))?
    };
    let mut seq = after;
    let mut records = Vec::with_capacity(raw.rows.len());
    for (row_seq, text, hash) in raw.rows {
        seq += 1;
        if u64::try_from(row_seq).ok() != Some(seq) {
            return Err(corrupt(format!(
                "record {row_seq} found where record {seq} belongs"
            )));
        }
        let expected = link(&prev, &text);
        if expected != hash {
            return Err(corrupt(format!(
                "record {seq} of {dataset:?} does not match its hash: edited"
            )));
        }
        let record = LedgerRecord::decode(&text)?;
        if record.seq != seq {
            return Err(corrupt(format!("record {seq} names itself {}", record.seq)));
        }
        records.push(record);
        prev = hash;
    }
    if seq != head_seq || prev != raw.head_hash {
        return Err(corrupt(format!(
            "the ledger of {dataset:?} holds records up to {seq} but its head names record {head_seq}: truncated or edited"
        )));
    }
    Ok(LedgerSnapshot {
        header,
        records,
        share,
    })
}

/// Inside a store's lock: verifies `raw`, lets `decide` choose the next record and
/// returns what to append — `(seq, text, hash)` — or `decide`'s error (write nothing).
pub(crate) fn next_record(
    dataset: &str,
    after: u64,
    raw: Raw,
    decide: Decide<'_>,
) -> Result<(i64, String, String), Error> {
    let head_hash = raw.head_hash.clone();
    let snapshot = verify(dataset, after, raw)?;
    let head = after + snapshot.records.len() as u64;
    let record = decide(&snapshot)?;
    if record.seq != head + 1 {
        return Err(corrupt(format!(
            "record {} offered after record {head}",
            record.seq
        )));
    }
    let text = record.encode();
    let hash = link(&head_hash, &text);
    let seq = i64::try_from(record.seq).map_err(|_| corrupt("sequence number out of range"))?;
    Ok((seq, text, hash))
}
