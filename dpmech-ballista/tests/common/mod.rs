//! Data, sessions and a recording relay shared by the cluster tests.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::TableProvider;
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use dpmech::Accountant;
use dpmech::statistics::Bounds;
use dpmech_datafusion::{ContributionBounds, GroupedQuery, PrivateSession, Release, ReleaseKey};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const BOUNDS: ContributionBounds = ContributionBounds {
    max_groups: 3,
    max_rows_per_group: 2,
};

/// xorshift64*: fixed-seed data (not noise).
pub struct Gen(pub u64);
impl Gen {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// `rows` visits `(user_id, day, country, duration)` of 1000 users over 10 days, in
/// `partitions` memory partitions (they travel inside the plan).
pub fn visits(rows: usize, partitions: usize) -> Arc<dyn TableProvider> {
    let mut g = Gen(0x1234_5678_9abc_def1);
    let (mut users, mut days, mut countries, mut durations) = (vec![], vec![], vec![], vec![]);
    for _ in 0..rows {
        let user = (g.next() % 1000) as i64;
        users.push(user);
        days.push(1 + (user + (g.next() % 4) as i64) % 10);
        countries.push(["fr", "de", "it", "es", "pl", "rare"][(g.next() % 6) as usize]);
        durations.push((g.next() % 4000) as f64);
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("user_id", DataType::Int64, false),
        Field::new("day", DataType::Int64, false),
        Field::new("country", DataType::Utf8, false),
        Field::new("duration", DataType::Float64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(users)),
            Arc::new(Int64Array::from(days)),
            Arc::new(StringArray::from(countries)),
            Arc::new(Float64Array::from(durations)),
        ],
    )
    .unwrap();
    let mut parts = vec![Vec::new(); partitions];
    for (i, start) in (0..rows).step_by(1000).enumerate() {
        parts[i % partitions].push(batch.slice(start, 1000.min(rows - start)));
    }
    Arc::new(MemTable::try_new(schema, parts).unwrap())
}

/// The same visits as [`visits`], `rows` of them, written as CSV to `path` (executors
/// scan it themselves: a table too large to travel inside a plan).
pub fn write_visits_csv(rows: usize, path: &std::path::Path) {
    use std::io::Write;
    let mut g = Gen(0x1234_5678_9abc_def1);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(out, "user_id,day,country,duration").unwrap();
    for _ in 0..rows {
        let user = g.next() % 1000;
        let day = 1 + (user + g.next() % 4) % 10;
        let country = ["fr", "de", "it", "es", "pl", "rare"][(g.next() % 6) as usize];
        writeln!(out, "{user},{day},{country},{}", g.next() % 4000).unwrap();
    }
    out.flush().unwrap();
}

/// The releases every cluster test compares: public and private keys, count, sum and
/// mean, ε-DP and zCDP.
pub fn queries() -> Vec<(&'static str, GroupedQuery)> {
    let days: Vec<String> = (1..=10).map(|d| d.to_string()).collect();
    let b = Bounds::new(0.0, 3600.0).unwrap();
    vec![
        (
            "public keys, ε",
            GroupedQuery::new("visits", "day")
                .public_keys(days.clone())
                .count(0.5)
                .sum("duration", b, 0.5)
                .mean("duration", b, 0.5)
                .median("duration", b, 0.5)
                .quantile("duration", b, 0.9, 0.5)
                .variance("duration", b, 0.5)
                .bounds("duration", 0.5),
        ),
        (
            "private keys, ε",
            GroupedQuery::new("visits", "country")
                .private_keys(0.5, 1e-3)
                .count(0.5)
                .mean("duration", b, 0.5)
                .std_dev("duration", b, 0.5),
        ),
        (
            "private keys, ρ",
            GroupedQuery::new("visits", "country")
                .private_keys(0.5, 1e-3)
                .zcdp()
                .count(0.1)
                .variance("duration", b, 0.1),
        ),
        (
            "public keys, ρ",
            GroupedQuery::new("visits", "day")
                .public_keys(days)
                .zcdp()
                .count(0.1)
                .sum("duration", b, 0.1)
                .median("duration", b, 0.1),
        ),
    ]
}

/// A budget large enough for every test's releases of `q`'s kind (ρ-zCDP or (ε, δ)).
pub fn accountant(q: &GroupedQuery) -> Arc<Accountant> {
    Arc::new(match q.privacy_loss().unwrap() {
        dpmech::PrivacyLoss::Zcdp { .. } => Accountant::zcdp(1e6).unwrap(),
        dpmech::PrivacyLoss::ApproximateZcdp { .. } => Accountant::approximate_zcdp(1e6, 0.5).unwrap(),
        _ => Accountant::approximate(1e6, 0.5).unwrap(),
    })
}

/// A one-node session over `table`, planned with `partitions` target partitions.
pub fn one_node(table: Arc<dyn TableProvider>, partitions: usize, q: &GroupedQuery) -> PrivateSession {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    let mut s = PrivateSession::new(ctx, accountant(q));
    s.register_private("visits", table, "user_id", BOUNDS).unwrap();
    s
}

/// A session over `table` whose releases run on the scheduler at `url`.
pub fn on_cluster(
    url: &str,
    table: Arc<dyn TableProvider>,
    partitions: usize,
    q: &GroupedQuery,
) -> PrivateSession {
    let config = SessionConfig::new().with_target_partitions(partitions);
    let mut s = dpmech_ballista::private_session(url, config, accountant(q)).unwrap();
    s.register_private("visits", table, "user_id", BOUNDS).unwrap();
    s
}

/// A release key with 32 distinct, unremarkable bytes.
pub fn key(salt: u8) -> ReleaseKey {
    ReleaseKey::from_bytes_insecure(key_bytes(salt))
}

/// The bytes of [`key`].
pub fn key_bytes(salt: u8) -> [u8; 32] {
    let mut k = [0u8; 32];
    let mut g = Gen(0xdead_beef_0000_0001 ^ u64::from(salt));
    for b in &mut k {
        *b = g.next() as u8;
    }
    k
}

pub async fn release(s: &PrivateSession, q: &GroupedQuery, salt: u8) -> Release {
    s.release_with_key(q, key(salt)).await.unwrap()
}

/// A TCP relay on loopback in front of `target` that keeps every byte it forwards, in
/// both directions, per connection.
#[derive(Clone)]
pub struct Relay {
    pub address: SocketAddr,
    pub streams: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Relay {
    pub async fn start(target: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let relay = Relay {
            address: listener.local_addr().unwrap(),
            streams: Arc::new(Mutex::new(Vec::new())),
        };
        let streams = relay.streams.clone();
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let Ok(outbound) = TcpStream::connect(target).await else {
                    continue;
                };
                let (ri, wi) = inbound.into_split();
                let (ro, wo) = outbound.into_split();
                tokio::spawn(pump(ri, wo, streams.clone()));
                tokio::spawn(pump(ro, wi, streams.clone()));
            }
        });
        relay
    }

    /// Every byte forwarded so far, one buffer per direction of each connection.
    pub fn recorded(&self) -> Vec<Vec<u8>> {
        self.streams.lock().unwrap().clone()
    }

    pub fn total_bytes(&self) -> usize {
        self.recorded().iter().map(Vec::len).sum()
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    streams: Arc<Mutex<Vec<Vec<u8>>>>,
) {
    let slot = {
        let mut s = streams.lock().unwrap();
        s.push(Vec::new());
        s.len() - 1
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        streams.lock().unwrap()[slot].extend_from_slice(&buf[..n]);
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// Whether `needle` occurs in `haystack`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
