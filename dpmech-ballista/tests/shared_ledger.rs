//! An SQL session on one node and a client of the Ballista cluster sharing one durable
//! ledger (the embedded file of `dpmech-ledger`): releases from both count against one
//! budget, each recorded with who charged, and the budget survives both sessions.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use datafusion::prelude::{SessionConfig, SessionContext};
use dpmech::composition::ledger::LedgerStore;
use dpmech::{Accountant, Error, PrivacyLoss};
use dpmech_ballista::EmbeddedCluster;
use dpmech_datafusion::{DpError, PrivateSession};
use dpmech_ledger::SqliteLedger;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_sql_session_and_a_cluster_client_share_one_budget() {
    tokio::time::timeout(Duration::from_secs(300), async {
        let dir = std::env::temp_dir().join(format!("dpmech-shared-ledger-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("visits.sqlite");
        let (_, q) = queries().into_iter().next().unwrap(); // public keys, ε-DP
        let per_release = q.privacy_loss().unwrap().epsilon().unwrap();
        // Room for two releases, not three.
        let budget = || Accountant::approximate(2.5 * per_release, 0.5).unwrap();
        let table = visits(20_000, 3);

        let here = Arc::new(dpmech_ledger::embedded(&path, "visits", "notebook", budget()).unwrap());
        let mut one_node = PrivateSession::new(SessionContext::new(), here.clone());
        one_node
            .register_private("visits", table.clone(), "user_id", BOUNDS)
            .unwrap();

        let cluster = EmbeddedCluster::start(1).await.unwrap();
        let there = Arc::new(dpmech_ledger::embedded(&path, "visits", "cluster", budget()).unwrap());
        let mut client =
            dpmech_ballista::private_session(&cluster.url(), SessionConfig::new(), there.clone()).unwrap();
        client
            .register_private("visits", table, "user_id", BOUNDS)
            .unwrap();

        one_node.release_with_key(&q, key(1)).await.unwrap();
        client.release_with_key(&q, key(2)).await.unwrap();
        // The third release, from either side, finds the budget spent by both.
        for session in [&one_node, &client] {
            let refused = session.release_with_key(&q, key(3)).await.unwrap_err();
            assert!(
                matches!(refused, DpError::Privacy(Error::BudgetExceeded { .. })),
                "{refused}"
            );
        }
        drop((one_node, client, here, there));

        // A fresh process's view: both releases, each with who charged, and nothing else.
        let resumed = Accountant::open(SqliteLedger::open(&path, "visits", "audit").unwrap()).unwrap();
        let who: Vec<_> = resumed.ledger().into_iter().map(|e| e.analyst.unwrap()).collect();
        assert_eq!(who, ["notebook", "cluster"]);
        // Two charges of ε: 2ε exactly (doubling is exact in binary).
        let spent = resumed.spent();
        assert!(matches!(spent, PrivacyLoss::Approximate { .. }), "{spent}");
        assert_eq!(spent.epsilon(), Some(2.0 * per_release));
        assert_eq!(
            SqliteLedger::open(&path, "visits", "audit")
                .unwrap()
                .read(0)
                .unwrap()
                .records
                .len(),
            2
        );
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await
    .expect("the shared-ledger test took over 300 s");
}
