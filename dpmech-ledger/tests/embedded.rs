//! The embedded (SQLite) ledger: resume in every mode, shares, restart under SIGKILL,
//! eight concurrent processes, and faults (read-only and full file systems, truncated
//! and edited files).

use crate::common;

use crate::common::{
    CONCURRENT_BUDGET, Scratch, UNIT, WORKER, check_concurrent, concurrent_worker, kind, spawn_worker,
};
use dpmech::audit::CountingRng;
use dpmech::composition::ledger::{LedgerErrorKind, LedgerRecord, LedgerStore};
use dpmech::composition::{Charge, Plan, PlanRule};
use dpmech::sensitivity::Neighbouring;
use dpmech::{Accountant, Error, Laplace, PrivacyLoss};
use dpmech_ledger::{SqliteAdmin, SqliteLedger, embedded, link};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn open(path: &Path, analyst: &str) -> Result<Accountant, Error> {
    Accountant::open(SqliteLedger::open(path, "ds", analyst)?)
}

/// Every mode resumes bit for bit: same spent, remaining, ledger (labels, analysts,
/// relations), and a charge refused before the restart is refused after it.
#[test]
fn every_mode_resumes_from_the_file() {
    let dir = Scratch::new("resume");
    let plan = Plan {
        steps: 5,
        per_step_epsilon: 0.1,
        rule: PlanRule::Advanced { delta_slack: 1e-6 },
    };
    let modes: Vec<(&str, Accountant, Vec<PrivacyLoss>)> = vec![
        (
            "pure",
            Accountant::pure(1.0).unwrap(),
            vec![PrivacyLoss::pure(0.25).unwrap(); 3],
        ),
        (
            "approximate",
            Accountant::approximate(1.0, 1e-6)
                .unwrap()
                .with_relation(Neighbouring::Substitute),
            vec![
                PrivacyLoss::approximate(0.25, 1e-7).unwrap(),
                PrivacyLoss::pure(0.25).unwrap(),
            ],
        ),
        (
            "zcdp",
            Accountant::zcdp(0.5).unwrap(),
            vec![PrivacyLoss::pure(0.5).unwrap(), PrivacyLoss::zcdp(0.125).unwrap()],
        ),
        (
            "approximate-zcdp",
            Accountant::approximate_zcdp(0.5, 1e-6).unwrap(),
            vec![
                PrivacyLoss::approximate_zcdp(0.125, 1e-7).unwrap(),
                PrivacyLoss::zcdp(0.125).unwrap(),
            ],
        ),
        (
            "renyi-filter",
            Accountant::filter(PrivacyLoss::approximate(1.0, 1e-6).unwrap()).unwrap(),
            vec![PrivacyLoss::pure(0.05).unwrap(); 20],
        ),
        (
            "plan",
            Accountant::with_plan(plan).unwrap(),
            vec![PrivacyLoss::pure(0.1).unwrap(); 4],
        ),
    ];
    for (name, acc, charges) in modes {
        let path = dir.path(&format!("{name}.sqlite"));
        let acc = embedded(&path, "ds", "alice", acc).unwrap();
        for (i, c) in charges.iter().enumerate() {
            acc.spend(Charge::new(*c).labelled(format!("{name}-{i}")))
                .unwrap();
        }
        let (spent, remaining, ledger) = (acc.spent(), acc.remaining(), acc.ledger());
        let level = acc.filter_level();
        drop(acc);
        let resumed = open(&path, "alice").unwrap();
        assert_eq!(resumed.spent(), spent, "{name}");
        assert_eq!(resumed.remaining(), remaining, "{name}");
        assert_eq!(resumed.ledger(), ledger, "{name}");
        // The Rényi filter's running sum is restored exactly (None outside a filter).
        assert_eq!(resumed.filter_level(), level, "{name}");
        assert_eq!(level.is_some(), name == "renyi-filter");
        assert!(
            ledger.iter().all(|e| e.analyst.as_deref() == Some("alice")),
            "{name}"
        );
        // A budget that does not match the file is refused.
        let other = embedded(&path, "ds", "alice", Accountant::pure(9.0).unwrap()).unwrap_err();
        assert_eq!(kind(&other), Some(LedgerErrorKind::Mismatch), "{name}: {other}");
        let wrong = Accountant::pure(9.0)
            .unwrap()
            .with_ledger(SqliteLedger::open(&path, "ds", "bob").unwrap());
        assert_eq!(
            kind(&wrong.unwrap_err()),
            Some(LedgerErrorKind::Mismatch),
            "{name}"
        );
    }
    // The plan's steps are used up across the restart: 4 of 5 taken, one left.
    let plan_acc = open(&dir.path("plan.sqlite"), "bob").unwrap();
    plan_acc.spend(PrivacyLoss::pure(0.1).unwrap()).unwrap();
    assert!(matches!(
        plan_acc.spend(PrivacyLoss::pure(0.1).unwrap()),
        Err(Error::BudgetExceeded { .. })
    ));
    // An unknown data set is refused, not created by an analyst.
    let unknown = Accountant::open(SqliteLedger::open(dir.path("pure.sqlite"), "nope", "alice").unwrap());
    assert_eq!(kind(&unknown.unwrap_err()), Some(LedgerErrorKind::Denied));
}

/// Two handles (as two processes would) on one file see each other's charges.
#[test]
fn two_handles_share_one_budget() {
    let dir = Scratch::new("share");
    let path = dir.path("l.sqlite");
    let a = embedded(&path, "ds", "alice", Accountant::pure(1.0).unwrap()).unwrap();
    let b = embedded(&path, "ds", "bob", Accountant::pure(1.0).unwrap()).unwrap();
    a.spend(PrivacyLoss::pure(0.75).unwrap()).unwrap();
    // b has not read a's charge yet, but its charge reads it inside the lock.
    let err = b.spend(PrivacyLoss::pure(0.5).unwrap()).unwrap_err();
    assert_eq!(
        err,
        Error::BudgetExceeded {
            requested: PrivacyLoss::Pure { epsilon: 0.5 },
            remaining: PrivacyLoss::Pure { epsilon: 0.25 },
        }
    );
    b.spend(PrivacyLoss::pure(0.25).unwrap()).unwrap();
    a.refresh().unwrap();
    assert_eq!(a.spent(), PrivacyLoss::Pure { epsilon: 1.0 });
    let who: Vec<_> = a.ledger().into_iter().map(|e| e.analyst.unwrap()).collect();
    assert_eq!(who, ["alice", "bob"]);
}

/// Per-analyst shares: an analyst cannot exceed their share, the total holds across
/// analysts, and a share lowered below what was spent stops the analyst.
#[test]
fn shares_limit_each_analyst_and_the_total_holds() {
    let dir = Scratch::new("shares");
    let path = dir.path("l.sqlite");
    let admin = SqliteAdmin::open(&path).unwrap();
    admin
        .create("ds", &Accountant::pure(1.0).unwrap().ledger_header())
        .unwrap();
    admin
        .set_share("ds", "alice", Some(PrivacyLoss::pure(0.25).unwrap()))
        .unwrap();
    let alice = open(&path, "alice").unwrap();
    let bob = open(&path, "bob").unwrap();
    assert_eq!(alice.share(), Some(PrivacyLoss::Pure { epsilon: 0.25 }));
    alice.spend(PrivacyLoss::pure(0.125).unwrap()).unwrap();
    alice.spend(PrivacyLoss::pure(0.125).unwrap()).unwrap();
    let refused = alice.spend(PrivacyLoss::pure(0.125).unwrap()).unwrap_err();
    assert!(
        matches!(refused, Error::BudgetExceeded { remaining: PrivacyLoss::Pure { epsilon } , .. } if epsilon == 0.0)
    );
    bob.spend(PrivacyLoss::pure(0.75).unwrap()).unwrap(); // bob has no share: the total limits him
    assert!(bob.spend(PrivacyLoss::pure(UNIT).unwrap()).is_err());
    // Raising alice's share does not raise the total.
    admin
        .set_share("ds", "alice", Some(PrivacyLoss::pure(0.5).unwrap()))
        .unwrap();
    assert!(matches!(
        alice.spend(PrivacyLoss::pure(UNIT).unwrap()),
        Err(Error::BudgetExceeded { .. })
    ));
    // A share lowered below what alice spent: resumed, she is over it and refused.
    let dir2 = Scratch::new("shares2");
    let p2 = dir2.path("l.sqlite");
    let admin2 = SqliteAdmin::open(&p2).unwrap();
    admin2
        .create("ds", &Accountant::pure(1.0).unwrap().ledger_header())
        .unwrap();
    let alice2 = open(&p2, "alice").unwrap();
    alice2.spend(PrivacyLoss::pure(0.5).unwrap()).unwrap();
    admin2
        .set_share("ds", "alice", Some(PrivacyLoss::pure(0.25).unwrap()))
        .unwrap();
    assert!(matches!(
        alice2.spend(PrivacyLoss::pure(UNIT).unwrap()),
        Err(Error::BudgetExceeded { .. })
    ));
    let bob2 = open(&p2, "bob").unwrap();
    bob2.spend(PrivacyLoss::pure(0.5).unwrap()).unwrap();
    // A share of another kind than the budget is refused.
    admin2
        .set_share("ds", "carol", Some(PrivacyLoss::zcdp(0.1).unwrap()))
        .unwrap();
    assert!(matches!(open(&p2, "carol"), Err(Error::IncompatibleLoss { .. })));
}

/// The child side of the process tests; runs only when re-executed by them.
#[test]
#[ignore = "entry point of the child processes started by the other tests"]
fn child_entry() {
    let Ok(job) = std::env::var(WORKER) else {
        return;
    };
    let args: Vec<&str> = job.split('\t').collect();
    match args[..] {
        ["restart", path, log] => restart_worker(Path::new(path), Path::new(log)),
        ["concurrent", path, id, log] => concurrent_worker(
            || open(Path::new(path), &format!("w{id}")).unwrap(),
            id.parse().unwrap(),
            Path::new(log),
        ),
        _ => panic!("unknown job {job:?}"),
    }
}

fn restart_worker(path: &Path, log: &Path) {
    let acc = open(path, "restarts").unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(std::process::id().into());
    let mechanism = Laplace::new(1.0, UNIT).unwrap();
    let mut released = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(log)
        .unwrap();
    while acc.charges() < 1000 {
        // Up to 1 ms between charges: on a disk with fast fsync a run still lasts past
        // the parent's kill delay, so the kills keep coming.
        std::thread::sleep(Duration::from_micros(rng.next_u64() % 1000));
        let y = acc.release(&mechanism, 0.0, &mut rng).unwrap();
        // Only now does the noisy value exist outside the accountant: record it.
        // One write(2) of one short line to an O_APPEND file: a kill cannot split it.
        released
            .write_all(format!("{} {y}\n", acc.charges()).as_bytes())
            .unwrap();
    }
}

/// 1000 charges, the writer killed with SIGKILL at random points and restarted: each
/// time the file opens and verifies, and the resumed total is at least the charges
/// whose noise was released and at most one more.
#[test]
fn sigkill_at_random_points_never_loses_a_released_charge() {
    let dir = Scratch::new("restart");
    let path = dir.path("l.sqlite");
    let log = dir.path("released.log");
    embedded(&path, "ds", "setup", Accountant::pure(2.0).unwrap()).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(39);
    let job = format!("restart\t{}\t{}", path.display(), log.display());
    let (mut kills, mut in_flight, started) = (0u32, 0u32, Instant::now());
    let (mut charged_before, mut released_before) = (0u64, 0usize);
    loop {
        let mut child = spawn_worker(concat!(module_path!(), "::child_entry"), &job);
        std::thread::sleep(Duration::from_micros(5_000 + rng.next_u64() % 60_000));
        let finished = child.try_wait().unwrap().is_some();
        child.kill().ok(); // SIGKILL
        let status = child.wait().unwrap();
        kills += u32::from(!finished);
        let acc = open(&path, "check").unwrap_or_else(|e| panic!("after kill {kills}: {e}"));
        // Each released line names the record its noise was paid by.
        let released: Vec<u64> = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|l| l.split(' ').next().unwrap().parse().unwrap())
            .collect();
        let charged = acc.charges();
        assert_eq!(
            acc.spent(),
            PrivacyLoss::Pure {
                epsilon: charged as f64 * UNIT
            }
        );
        // Never below: every released charge is on file.
        assert!(
            released.iter().all(|&seq| seq <= charged),
            "kill {kills}: a released charge is missing from the file"
        );
        // Never above by more than the charge in flight at this kill.
        let new_charges = charged - charged_before;
        let new_released = (released.len() - released_before) as u64;
        assert!(
            new_charges == new_released || new_charges == new_released + 1,
            "kill {kills}: {new_charges} charges committed in this run, {new_released} released"
        );
        in_flight += u32::from(new_charges == new_released + 1);
        (charged_before, released_before) = (charged, released.len());
        if finished {
            assert!(status.success(), "the worker failed: {status}");
        }
        if charged >= 1000 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "restart test too slow"
        );
    }
    eprintln!(
        "restart: 1000 charges, {kills} SIGKILLs, {in_flight} with a charge on file whose noise was not released, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(kills >= 10, "too few kills ({kills}) to exercise restarts");
}

/// Eight processes × 200 charges against one embedded budget.
#[test]
fn eight_processes_never_overspend_one_file() {
    let dir = Scratch::new("concurrent");
    let path = dir.path("l.sqlite");
    embedded(&path, "ds", "setup", Accountant::pure(CONCURRENT_BUDGET).unwrap()).unwrap();
    let started = Instant::now();
    let logs: Vec<_> = (0..8).map(|i| dir.path(&format!("w{i}.log"))).collect();
    let children: Vec<_> = (0..8)
        .map(|i| {
            spawn_worker(
                concat!(module_path!(), "::child_entry"),
                &format!("concurrent\t{}\t{i}\t{}", path.display(), logs[i].display()),
            )
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let acc = open(&path, "check").unwrap();
    let (a, r) = check_concurrent(&acc, &logs);
    eprintln!(
        "embedded concurrency: 8 x 200 charges, {a} accepted, {r} refused, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

fn corrupt_kind(path: &Path) -> Option<LedgerErrorKind> {
    open(path, "check").err().as_ref().and_then(kind)
}

fn sqlite(path: &Path, sql: &str) {
    let conn = rusqlite_conn(path);
    conn.execute_batch(sql).unwrap();
}

fn rusqlite_conn(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

/// A ledger of 20 charges, closed (so its write-ahead log is checkpointed into it).
fn twenty_charges(dir: &Scratch, name: &str) -> std::path::PathBuf {
    let path = dir.path(name);
    let acc = embedded(&path, "ds", "alice", Accountant::pure(1.0).unwrap()).unwrap();
    for i in 0..20 {
        acc.spend(Charge::new(PrivacyLoss::pure(UNIT * 2.0).unwrap()).labelled(format!("q{i}")))
            .unwrap();
    }
    path
}

/// Edited, truncated or shortened ledgers refuse to open; a consistent rewrite by
/// someone who can write the file is not detected by the chain alone, but by the head
/// kept elsewhere.
#[test]
fn ledgers_that_do_not_verify_refuse_to_open() {
    let dir = Scratch::new("verify");
    // An edited loss.
    let p = twenty_charges(&dir, "edited.sqlite");
    assert!(open(&p, "x").is_ok());
    sqlite(
        &p,
        "UPDATE dp_entries SET record = replace(record, 'pure 0.001953125', 'pure 0.0009765625') WHERE seq = 7",
    );
    assert_eq!(corrupt_kind(&p), Some(LedgerErrorKind::Corrupt));
    // An edited header (a larger budget).
    let p = twenty_charges(&dir, "header.sqlite");
    sqlite(
        &p,
        "UPDATE dp_datasets SET header = replace(header, 'pure 1.0', 'pure 100.0')",
    );
    assert_eq!(corrupt_kind(&p), Some(LedgerErrorKind::Corrupt));
    // A record removed in the middle, and one at the end.
    let p = twenty_charges(&dir, "middle.sqlite");
    sqlite(&p, "DELETE FROM dp_entries WHERE seq = 10");
    assert_eq!(corrupt_kind(&p), Some(LedgerErrorKind::Corrupt));
    let p = twenty_charges(&dir, "tail.sqlite");
    sqlite(&p, "DELETE FROM dp_entries WHERE seq = 20");
    assert_eq!(corrupt_kind(&p), Some(LedgerErrorKind::Corrupt));
    // A record whose loss is not a valid charge (negative ε), with a valid chain.
    let p = twenty_charges(&dir, "invalid.sqlite");
    {
        let store = SqliteLedger::open(&p, "ds", "mallory").unwrap();
        let (_, head) = store.head().unwrap();
        let mut rec = LedgerRecord::decode(
            &rusqlite_conn(&p)
                .query_row("SELECT record FROM dp_entries WHERE seq = 20", [], |r| {
                    r.get::<_, String>(0)
                })
                .unwrap(),
        )
        .unwrap();
        rec.seq = 21;
        rec.entry.charged = PrivacyLoss::Pure { epsilon: -1.0 };
        let text = rec.encode();
        let hash = link(&head, &text);
        let conn = rusqlite_conn(&p);
        conn.execute("INSERT INTO dp_entries VALUES ('ds', 21, ?1, ?2)", [&text, &hash])
            .unwrap();
        conn.execute("UPDATE dp_datasets SET head_seq = 21, head_hash = ?1", [&hash])
            .unwrap();
    }
    assert_eq!(corrupt_kind(&p), Some(LedgerErrorKind::Corrupt));
    // A truncated file: cut in half, and cut to 100 bytes.
    for (name, keep) in [("half.sqlite", 0.5), ("stub.sqlite", 0.0)] {
        let p = twenty_charges(&dir, name);
        assert!(
            !dir.path(&format!("{name}-wal")).exists(),
            "the WAL was checkpointed"
        );
        let len = std::fs::metadata(&p).unwrap().len();
        let cut = if keep == 0.0 {
            100
        } else {
            (len as f64 * keep) as u64
        };
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(cut)
            .unwrap();
        let err = open(&p, "check").err();
        assert!(err.is_some(), "{name}: a truncated ledger opened");
        assert_eq!(
            err.as_ref().and_then(kind),
            Some(LedgerErrorKind::Corrupt),
            "{name}: {err:?}"
        );
    }
    // Not detected by the chain: removing the last record and moving the head back
    // (a consistent rewrite). The head kept elsewhere detects it.
    let p = twenty_charges(&dir, "rewrite.sqlite");
    let kept_head = SqliteLedger::open(&p, "ds", "audit").unwrap().head().unwrap();
    sqlite(
        &p,
        "DELETE FROM dp_entries WHERE seq = 20; UPDATE dp_datasets SET head_seq = 19, \
         head_hash = (SELECT hash FROM dp_entries WHERE seq = 19)",
    );
    let rewritten = open(&p, "check").unwrap();
    assert_eq!(rewritten.charges(), 19);
    assert_ne!(
        SqliteLedger::open(&p, "ds", "audit").unwrap().head().unwrap(),
        kept_head
    );
}

/// A small tmpfs, unmounted on drop (the full-disk and read-only tests; needs root).
struct Tmpfs(Scratch);

impl Tmpfs {
    fn mount(size: &str) -> Option<Self> {
        if !common::is_root() {
            assert!(
                std::env::var_os("DPMECH_LEDGER_SKIP_MOUNT").is_some(),
                "the full-disk and read-only tests mount a tmpfs and need root; set DPMECH_LEDGER_SKIP_MOUNT=1 to skip them"
            );
            eprintln!("SKIPPED: tmpfs fault tests (DPMECH_LEDGER_SKIP_MOUNT is set)");
            return None;
        }
        let dir = Scratch::new("tmpfs");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir.0)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mount -t tmpfs failed");
        Some(Self(dir))
    }

    fn remount(&self, mode: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,{mode}")])
            .arg(&self.0.0)
            .status()
            .unwrap()
            .success();
        assert!(ok, "remount {mode} failed");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0.0).status();
    }
}

/// A full file system: the charge that cannot be committed is a typed error, no noise
/// is drawn, and nothing committed is lost; with space again, charging goes on.
#[test]
fn a_full_disk_is_a_typed_error_and_no_noise() {
    let Some(fs) = Tmpfs::mount("2m") else { return };
    let path = fs.0.path("l.sqlite");
    let acc = embedded(&path, "ds", "alice", Accountant::pure(1000.0).unwrap()).unwrap();
    let mechanism = Laplace::new(1.0, UNIT).unwrap();
    let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(1));
    acc.release(&mechanism, 1.0, &mut rng).unwrap();
    // Fill the file system.
    let mut filler = std::fs::File::create(fs.0.path("filler")).unwrap();
    let block = vec![0u8; 4096];
    while filler.write_all(&block).is_ok() {}
    drop(filler);
    let mut failure = None;
    for _ in 0..10_000 {
        let draws = rng.draws();
        let spent = acc.spent();
        match acc.release(&mechanism, 1.0, &mut rng) {
            Ok(_) => {}
            Err(e) => {
                assert_eq!(rng.draws(), draws, "noise drawn for a failed charge");
                assert_eq!(acc.spent(), spent, "a failed charge counted");
                failure = Some(e);
                break;
            }
        }
    }
    let err = failure.expect("a full disk never failed a charge");
    assert_eq!(kind(&err), Some(LedgerErrorKind::Unavailable), "{err}");
    let committed = acc.charges();
    std::fs::remove_file(fs.0.path("filler")).unwrap();
    // The space comes back once no process holds the filler open: a child that another
    // test forked in the instant before `drop(filler)` keeps the descriptor until it
    // executes its program (descriptors are close-on-exec). Wait, boundedly, until a
    // probe of 256 KiB fits, so the charge below meets a disk that has room.
    let probe = fs.0.path("probe");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::write(&probe, vec![0u8; 256 * 1024]).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the filler's space never came back"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::fs::remove_file(&probe).unwrap();
    acc.release(&mechanism, 1.0, &mut rng).unwrap();
    drop(acc);
    let resumed = open(&path, "check").unwrap();
    assert_eq!(resumed.charges(), committed + 1);
}

/// A read-only file system: opening for charging, or charging, is a typed error and
/// draws nothing; the ledger is intact once writable again.
#[test]
fn a_read_only_ledger_is_a_typed_error_and_no_noise() {
    let Some(fs) = Tmpfs::mount("4m") else { return };
    let path = fs.0.path("l.sqlite");
    {
        let acc = embedded(&path, "ds", "alice", Accountant::pure(1.0).unwrap()).unwrap();
        acc.spend(PrivacyLoss::pure(0.25).unwrap()).unwrap();
    }
    fs.remount("ro");
    let mechanism = Laplace::new(1.0, 0.25).unwrap();
    let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(2));
    let err = match open(&path, "alice") {
        Ok(acc) => {
            let e = acc.release(&mechanism, 1.0, &mut rng).unwrap_err();
            eprintln!("read-only: opened, the charge failed: {e}");
            e
        }
        Err(e) => {
            eprintln!("read-only: the open failed: {e}");
            e
        }
    };
    assert_eq!(kind(&err), Some(LedgerErrorKind::Unavailable), "{err}");
    assert_eq!(rng.draws(), 0);
    fs.remount("rw");
    let acc = open(&path, "alice").unwrap();
    assert_eq!(acc.spent(), PrivacyLoss::Pure { epsilon: 0.25 });
    acc.release(&mechanism, 1.0, &mut rng).unwrap();
}

/// The store's charge is the one a refused decision never writes.
#[test]
fn a_refused_charge_writes_nothing() {
    let dir = Scratch::new("refused");
    let path = dir.path("l.sqlite");
    let acc = embedded(&path, "ds", "alice", Accountant::pure(1.0).unwrap()).unwrap();
    acc.spend(PrivacyLoss::pure(0.5).unwrap()).unwrap();
    let head = SqliteLedger::open(&path, "ds", "x").unwrap().head().unwrap();
    assert!(acc.spend(PrivacyLoss::pure(0.75).unwrap()).is_err());
    assert!(acc.spend(PrivacyLoss::zcdp(0.1).unwrap()).is_err());
    assert_eq!(
        SqliteLedger::open(&path, "ds", "x").unwrap().head().unwrap(),
        head
    );
    let store = SqliteLedger::open(&path, "ds", "x").unwrap();
    assert_eq!(store.read(0).unwrap().records.len(), 1);
}
