//! The PostgreSQL ledger against a real server started by the test (initdb into a
//! scratch directory, `postgres` on 127.0.0.1): resume, shares, eight processes on
//! separate connections, the server stopped mid-session, an edited ledger.

use crate::common::{
    CONCURRENT_BUDGET, PgServer, Scratch, UNIT, WORKER, check_concurrent, concurrent_worker, kind,
    spawn_worker,
};
use dpmech::audit::CountingRng;
use dpmech::composition::Charge;
use dpmech::composition::ledger::LedgerErrorKind;
use dpmech::{Accountant, Error, Laplace, PrivacyLoss};
use dpmech_ledger::{PgAdmin, PgLedger, postgres};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn open(conninfo: &str, dataset: &str, analyst: &str) -> Result<Accountant, Error> {
    Accountant::open(PgLedger::connect(conninfo, dataset, analyst)?)
}

/// The child side of the process test; runs only when re-executed by it.
#[test]
#[ignore = "entry point of the child processes started by the other tests"]
fn child_entry() {
    let Ok(job) = std::env::var(WORKER) else {
        return;
    };
    let args: Vec<&str> = job.split('\t').collect();
    match args[..] {
        ["concurrent", conninfo, id, log] => concurrent_worker(
            || open(conninfo, "conc", &format!("w{id}")).unwrap(),
            id.parse().unwrap(),
            std::path::Path::new(log),
        ),
        _ => panic!("unknown job {job:?}"),
    }
}

/// All PostgreSQL tests share one server (starting one takes seconds); each uses its
/// own data set.
#[test]
fn postgres_ledger() {
    let Some(mut server) = PgServer::start() else {
        return;
    };
    let conninfo = server.conninfo();
    resume_shares_and_mismatch(&conninfo);
    eight_processes_on_separate_connections(&conninfo);
    an_edited_ledger_refuses_to_open(&conninfo);
    connection_lost_inside_the_transaction(&conninfo);
    // Last: the server stopped in the middle of a session.
    server_stopped_mid_session(&mut server);
}

fn resume_shares_and_mismatch(conninfo: &str) {
    let acc = postgres(conninfo, "resume", "alice", Accountant::zcdp(1.0).unwrap()).unwrap();
    acc.spend(Charge::new(PrivacyLoss::pure(0.5).unwrap()).labelled("q1"))
        .unwrap();
    acc.spend(PrivacyLoss::zcdp(0.25).unwrap()).unwrap();
    let (spent, ledger) = (acc.spent(), acc.ledger());
    drop(acc);
    let resumed = open(conninfo, "resume", "alice").unwrap();
    assert_eq!(resumed.spent(), spent);
    assert_eq!(resumed.ledger(), ledger);
    let other = postgres(conninfo, "resume", "alice", Accountant::zcdp(2.0).unwrap()).unwrap_err();
    assert_eq!(kind(&other), Some(LedgerErrorKind::Mismatch));
    // Shares: alice is limited to ρ = 0.5 in all, bob only by the total.
    let admin = PgAdmin::connect(conninfo).unwrap();
    admin
        .set_share("resume", "alice", Some(PrivacyLoss::zcdp(0.5).unwrap()))
        .unwrap();
    let alice = open(conninfo, "resume", "alice").unwrap();
    let bob = open(conninfo, "resume", "bob").unwrap();
    // Alice has spent ρ = 0.375: 0.25 more would pass her share, 0.125 fills it.
    assert!(matches!(
        alice.spend(PrivacyLoss::zcdp(0.25).unwrap()),
        Err(Error::BudgetExceeded { .. })
    ));
    alice.spend(PrivacyLoss::zcdp(0.125).unwrap()).unwrap();
    bob.spend(PrivacyLoss::zcdp(0.5).unwrap()).unwrap();
    assert!(matches!(
        bob.spend(PrivacyLoss::zcdp(0.25).unwrap()),
        Err(Error::BudgetExceeded { .. })
    ));
    assert!(matches!(
        open(conninfo, "missing", "alice"),
        Err(Error::Ledger {
            kind: LedgerErrorKind::Denied,
            ..
        })
    ));
}

/// Eight processes × 200 charges, each on its own connection, one budget.
fn eight_processes_on_separate_connections(conninfo: &str) {
    let dir = Scratch::new("pgconc");
    PgAdmin::connect(conninfo)
        .unwrap()
        .create(
            "conc",
            &Accountant::pure(CONCURRENT_BUDGET).unwrap().ledger_header(),
        )
        .unwrap();
    let started = Instant::now();
    let logs: Vec<_> = (0..8).map(|i| dir.path(&format!("w{i}.log"))).collect();
    let children: Vec<_> = (0..8)
        .map(|i| {
            spawn_worker(
                concat!(module_path!(), "::child_entry"),
                &format!("concurrent\t{conninfo}\t{i}\t{}", logs[i].display()),
            )
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let acc = open(conninfo, "conc", "check").unwrap();
    let (a, r) = check_concurrent(&acc, &logs);
    eprintln!(
        "postgres concurrency: 8 x 200 charges, {a} accepted, {r} refused, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

fn an_edited_ledger_refuses_to_open(conninfo: &str) {
    let mut client = ::postgres::Client::connect(conninfo, ::postgres::NoTls).unwrap();
    let edits = [
        // ε of record 3 halved.
        "UPDATE dp_entries SET record = replace(record, 'pure 0.0009765625\tpure 0.0009765625', \
         'pure 0.0009765625\tpure 0.00048828125') WHERE dataset = $1 AND seq = 3",
        // Record 3 removed (the middle), record 5 removed (the end: the head names it).
        "DELETE FROM dp_entries WHERE dataset = $1 AND seq = 3",
        "DELETE FROM dp_entries WHERE dataset = $1 AND seq = 5",
        // The budget raised.
        "UPDATE dp_datasets SET header = replace(header, 'pure 1.0', 'pure 10.0') WHERE name = $1",
    ];
    for (i, edit) in edits.iter().enumerate() {
        let dataset = format!("edit{i}");
        let acc = postgres(conninfo, &dataset, "alice", Accountant::pure(1.0).unwrap()).unwrap();
        for _ in 0..5 {
            acc.spend(PrivacyLoss::pure(UNIT).unwrap()).unwrap();
        }
        assert!(open(conninfo, &dataset, "bob").is_ok());
        assert_eq!(client.execute(*edit, &[&dataset]).unwrap(), 1, "{edit}");
        let err = open(conninfo, &dataset, "bob").unwrap_err();
        assert_eq!(kind(&err), Some(LedgerErrorKind::Corrupt), "{edit}: {err}");
    }
}

/// The accountant's connection is terminated while its charge waits inside its
/// transaction (another client holds the data set's row lock): a typed error, no noise
/// drawn, nothing recorded; the next charge reconnects.
fn connection_lost_inside_the_transaction(conninfo: &str) {
    let acc = Arc::new(postgres(conninfo, "lost", "alice", Accountant::pure(1.0).unwrap()).unwrap());
    acc.spend(PrivacyLoss::pure(0.125).unwrap()).unwrap();
    let mut blocker = ::postgres::Client::connect(conninfo, ::postgres::NoTls).unwrap();
    let mut holding = blocker.transaction().unwrap();
    holding
        .query("SELECT 1 FROM dp_datasets WHERE name = 'lost' FOR UPDATE", &[])
        .unwrap();
    let charging = std::thread::spawn({
        let acc = acc.clone();
        move || {
            let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(4));
            let out = acc.release(&Laplace::new(1.0, 0.125).unwrap(), 1.0, &mut rng);
            (out, rng.draws())
        }
    });
    let mut admin = ::postgres::Client::connect(conninfo, ::postgres::NoTls).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let killed: i64 = admin
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE wait_event_type = 'Lock' AND datname = current_database()",
                &[],
            )
            .unwrap()
            .get(0);
        if killed == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the charge never waited for the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (out, draws) = charging.join().unwrap();
    let err = out.unwrap_err();
    assert_eq!(kind(&err), Some(LedgerErrorKind::Unavailable), "{err}");
    assert_eq!(draws, 0, "noise drawn for a charge whose transaction was cut");
    holding.rollback().unwrap();
    assert_eq!(acc.spent(), PrivacyLoss::Pure { epsilon: 0.125 });
    acc.spend(PrivacyLoss::pure(0.125).unwrap()).unwrap(); // reconnected
    let resumed = open(conninfo, "lost", "bob").unwrap();
    assert_eq!(resumed.charges(), 2);
    assert_eq!(resumed.spent(), PrivacyLoss::Pure { epsilon: 0.25 });
}

/// The server stops while an accountant is open: its charge is a typed error and no
/// noise is drawn; after a restart the ledger verifies and charging goes on.
fn server_stopped_mid_session(server: &mut PgServer) {
    let conninfo = server.conninfo();
    let acc = postgres(&conninfo, "stop", "alice", Accountant::pure(1.0).unwrap()).unwrap();
    let mechanism = Laplace::new(1.0, 0.125).unwrap();
    let mut rng = CountingRng::new(ChaCha20Rng::seed_from_u64(3));
    acc.release(&mechanism, 1.0, &mut rng).unwrap();
    server.stop();
    let draws = rng.draws();
    let err = acc.release(&mechanism, 1.0, &mut rng).unwrap_err();
    assert_eq!(kind(&err), Some(LedgerErrorKind::Unavailable), "{err}");
    assert_eq!(
        rng.draws(),
        draws,
        "noise drawn for a charge the server never took"
    );
    assert_eq!(acc.spent(), PrivacyLoss::Pure { epsilon: 0.125 });
    server.run();
    // The same accountant reconnects and charges again; a fresh one sees both charges.
    acc.release(&mechanism, 1.0, &mut rng).unwrap();
    let resumed = open(&conninfo, "stop", "bob").unwrap();
    assert_eq!(resumed.spent(), PrivacyLoss::Pure { epsilon: 0.25 });
}
