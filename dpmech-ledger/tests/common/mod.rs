//! Shared helpers: scratch directories, re-running this test binary as a child process,
//! and a throw-away PostgreSQL server on loopback.
#![allow(dead_code)]

use dpmech::composition::Charge;
use dpmech::composition::ledger::LedgerErrorKind;
use dpmech::{Accountant, Error, PrivacyLoss};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A scratch directory removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "dpmech-ledger-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The environment variable that makes this test binary's `child_entry` test act as a
/// worker; its value says what to do.
pub const WORKER: &str = "DPMECH_LEDGER_WORKER";

/// Starts this test binary as a worker child running test `entry` with `job`.
pub fn spawn_worker(entry: &str, job: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .arg(child_test(entry))
        .args(["--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(WORKER, job)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The test name libtest knows for `module_path!()` (`main::embedded`) and an entry point
/// in it: `embedded::child_entry`, as `--exact` needs it (the tests are modules of one
/// binary).
fn child_test(entry_in_module: &str) -> String {
    let (module, entry) = entry_in_module.rsplit_once("::").expect("module::entry");
    let in_binary = module.split_once("::").map_or("", |(_, rest)| rest);
    format!("{in_binary}::{entry}")
}

/// The PostgreSQL binaries directory (Debian: /usr/lib/postgresql/<version>/bin), or a
/// panic naming the package. `DPMECH_LEDGER_SKIP_POSTGRES=1` makes the caller skip
/// (returns `None` and prints that it skipped).
pub fn postgres_bin() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("postgres").exists() && b.join("initdb").exists())
        .collect();
    found.sort();
    if let Some(bin) = found.pop() {
        return Some(bin);
    }
    if std::env::var_os("DPMECH_LEDGER_SKIP_POSTGRES").is_some() {
        eprintln!("SKIPPED: PostgreSQL tests (DPMECH_LEDGER_SKIP_POSTGRES is set)");
        return None;
    }
    panic!(
        "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin: install the Debian \
         package `postgresql` (apt-get install -y postgresql), or set DPMECH_LEDGER_SKIP_POSTGRES=1 to skip"
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs `cmd` as the `postgres` user when this process is root (PostgreSQL refuses to
/// run as root).
fn as_postgres(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A throw-away PostgreSQL server: `initdb` into a scratch directory, `postgres` on
/// 127.0.0.1 and a free port; stopped (SIGQUIT, then SIGKILL) and removed on drop.
pub struct PgServer {
    bin: PathBuf,
    pub dir: Scratch,
    pub port: u16,
    child: Option<Child>,
}

impl PgServer {
    /// `None` only when the tests were explicitly told to skip PostgreSQL.
    pub fn start() -> Option<Self> {
        let bin = postgres_bin()?;
        let dir = Scratch::new("pg");
        if is_root() {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir.0)
                .status()
                .unwrap()
                .success();
            assert!(ok, "chown of the PostgreSQL scratch directory failed");
        }
        let data = dir.path("data");
        let out = as_postgres(&bin.join("initdb"))
            .args(["-D"])
            .arg(&data)
            .args(["-U", "dp", "-A", "trust", "--no-sync", "-E", "UTF8"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut server = Self {
            bin,
            dir,
            port: free_port(),
            child: None,
        };
        server.run();
        Some(server)
    }

    /// Starts the server process (again) and waits until it accepts connections.
    pub fn run(&mut self) {
        let child = as_postgres(&self.bin.join("postgres"))
            .arg("-D")
            .arg(self.dir.path("data"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-k"])
            .arg(&self.dir.0)
            .args([
                "-c",
                "max_connections=40",
                "-c",
                "fsync=on",
                "-c",
                "synchronous_commit=on",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if postgres::Client::connect(&self.conninfo(), postgres::NoTls).is_ok() {
                return;
            }
            assert!(Instant::now() < deadline, "PostgreSQL did not start within 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the server (fast shutdown) and waits for it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // runuser forwards SIGTERM to the server: a "smart" shutdown would wait for
            // clients, so ask the server itself for a fast one through its pid file.
            let pid = std::fs::read_to_string(self.dir.path("data").join("postmaster.pid"))
                .ok()
                .and_then(|s| s.lines().next().map(str::to_owned));
            if let Some(pid) = pid {
                let _ = Command::new("kill").args(["-INT", &pid]).status();
            }
            let deadline = Instant::now() + Duration::from_secs(30);
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn conninfo(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=dp dbname=postgres connect_timeout=5",
            self.port
        )
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// 2⁻¹⁰: sums of up to 2⁴³ of these are exact in f64, so totals compare with `==`.
pub const UNIT: f64 = 1.0 / 1024.0;

/// The budget of the concurrency tests: 1000 units of 2⁻¹⁰.
pub const CONCURRENT_BUDGET: f64 = 1000.0 * UNIT;

/// 200 charges of 1, 2 or 3 units, logged as accepted (`A label units`) or refused
/// (`R label units`) after the charge returned.
pub fn concurrent_worker(open: impl FnOnce() -> Accountant, id: u64, log: &Path) {
    let acc = open();
    let mut rng = ChaCha20Rng::seed_from_u64(1000 + id);
    let mut out = String::new();
    for i in 0..200 {
        let units = 1 + rng.next_u64() % 3;
        let label = format!("w{id}-{i}");
        let charge = Charge::new(PrivacyLoss::pure(units as f64 * UNIT).unwrap()).labelled(label.clone());
        match acc.spend(charge) {
            Ok(()) => out.push_str(&format!("A {label} {units}\n")),
            Err(Error::BudgetExceeded { .. }) => out.push_str(&format!("R {label} {units}\n")),
            Err(e) => panic!("worker {id}: {e}"),
        }
    }
    std::fs::write(log, out).unwrap();
}

/// Checks the outcome of the concurrency test against the workers' logs.
pub fn check_concurrent(acc: &Accountant, logs: &[std::path::PathBuf]) -> (usize, usize) {
    let mut accepted = BTreeMap::new();
    let mut refused = BTreeSet::new();
    for log in logs {
        for line in std::fs::read_to_string(log).unwrap().lines() {
            let f: Vec<&str> = line.split(' ').collect();
            let units: u64 = f[2].parse().unwrap();
            match f[0] {
                "A" => assert!(accepted.insert(f[1].to_owned(), units).is_none()),
                _ => assert!(refused.insert(f[1].to_owned())),
            }
        }
    }
    assert_eq!(accepted.len() + refused.len(), 8 * 200, "every worker finished");
    let ledger = acc.ledger();
    let on_file: BTreeMap<String, u64> = ledger
        .iter()
        .map(|e| {
            let units = e.charged.epsilon().unwrap() / UNIT;
            (e.label.clone().unwrap(), units as u64)
        })
        .collect();
    assert_eq!(on_file.len(), ledger.len(), "no label twice");
    assert_eq!(on_file, accepted, "the ledger holds exactly the accepted charges");
    assert!(
        refused.iter().all(|r| !on_file.contains_key(r)),
        "a refused charge is on file"
    );
    let total: u64 = accepted.values().sum();
    assert!(total <= 1000, "over budget: {total} units");
    assert_eq!(
        acc.spent(),
        PrivacyLoss::Pure {
            epsilon: total as f64 * UNIT
        }
    );
    // The budget was contended to the end: what is left is less than the largest charge.
    assert!(total > 1000 - 3, "{total} units spent of 1000");
    (accepted.len(), refused.len())
}

/// The kind of a ledger error (`None` for any other error).
pub fn kind(e: &Error) -> Option<LedgerErrorKind> {
    match e {
        Error::Ledger { kind, .. } => Some(*kind),
        _ => None,
    }
}
