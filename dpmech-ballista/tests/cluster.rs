//! Private releases on an embedded Ballista cluster (a scheduler and executors in this
//! process, on loopback): bit-identical to one node, the noise key never sent, the
//! budget charged before anything is submitted.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::*;
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::ScalarUDF;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use dpmech::Accountant;
use dpmech_ballista::{ClusterOptions, EmbeddedCluster, physical_codec};
use dpmech_datafusion::{DpError, PrivateSession};

/// Every test is bounded in time: a hung cluster fails the test instead of CI.
async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(300), f)
        .await
        .expect("the cluster test took over 300 s")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cluster_releases_are_bit_identical_to_one_node() {
    bounded(async {
        let table = visits(20_000, 3);
        for executors in [1, 2] {
            let cluster = EmbeddedCluster::start(executors).await.unwrap();
            for partitions in [1, 4, 16] {
                for (name, q) in queries() {
                    let here = release(&one_node(table.clone(), partitions, &q), &q, 7).await;
                    let there =
                        release(&on_cluster(&cluster.url(), table.clone(), partitions, &q), &q, 7).await;
                    assert!(!here.rows.is_empty(), "{name}");
                    assert_eq!(
                        there, here,
                        "{name}: {executors} executors, {partitions} partitions"
                    );
                    // A prepared release (planned once, re-keyed per run) on the
                    // cluster too.
                    if executors == 2 && partitions == 4 {
                        let session = on_cluster(&cluster.url(), table.clone(), partitions, &q);
                        let prepared = session.prepare(&q).await.unwrap();
                        assert_eq!(
                            prepared.release_with_key(key(7)).await.unwrap(),
                            here,
                            "{name}: prepared on the cluster"
                        );
                    }
                    // And one node does not depend on its partitions either.
                    assert_eq!(
                        here,
                        release(&one_node(table.clone(), 1, &q), &q, 7).await,
                        "{name}"
                    );
                }
            }
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_noise_key_is_never_sent_to_the_scheduler_or_the_executors() {
    bounded(async {
        // The client and both executors reach the scheduler only through a relay that
        // records every byte: the plans the client submits and the tasks the executors
        // receive.
        let cluster = EmbeddedCluster::start(0).await.unwrap();
        let relay = Relay::start(cluster.scheduler()).await;
        cluster.add_executor(relay.address).await.unwrap();
        cluster.add_executor(relay.address).await.unwrap();
        let table = visits(20_000, 3);
        for (name, q) in queries() {
            let session = on_cluster(&format!("df://{}", relay.address), table.clone(), 4, &q);
            let there = release(&session, &q, 42).await;
            assert_eq!(
                there,
                release(&one_node(table.clone(), 4, &q), &q, 42).await,
                "{name}"
            );
        }
        let recorded = relay.recorded();
        let all: Vec<u8> = recorded.concat();
        // Positive control: the capture holds the plans and the tasks (dpmech's function
        // names travel in both, in several connections).
        let with_plans = recorded
            .iter()
            .filter(|s| contains(s, b"dpmech_unit_fingerprint"))
            .count();
        assert!(with_plans >= 2, "the relay saw {with_plans} streams with a plan");
        // The key: neither whole nor any 8 of its bytes in a row.
        let key = key_bytes(42);
        assert!(!contains(&all, &key));
        for word in key.chunks(8) {
            assert!(!contains(&all, word), "8 bytes of the key were sent");
        }
        println!(
            "{} bytes recorded in {} streams, {with_plans} with a plan; no byte run of the key",
            all.len(),
            recorded.len()
        );
    })
    .await
}

/// The cluster's codec, counting what it decodes (the scheduler decodes every submitted
/// plan, the executors every task).
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn PhysicalExtensionCodec>,
    decoded: Arc<AtomicUsize>,
}

impl PhysicalExtensionCodec for Counting {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.decoded.fetch_add(1, Ordering::SeqCst);
        self.inner.try_decode(buf, inputs, ctx, converter)
    }
    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        self.inner.try_encode(node, buf, converter)
    }
    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.decoded.fetch_add(1, Ordering::SeqCst);
        self.inner.try_decode_udf(name, buf)
    }
    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udf(node, buf)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refused_charge_submits_nothing() {
    bounded(async {
        let decoded = Arc::new(AtomicUsize::new(0));
        let options = ClusterOptions {
            physical_codec: Arc::new(Counting {
                inner: physical_codec(),
                decoded: decoded.clone(),
            }),
            ..ClusterOptions::default()
        };
        let cluster = EmbeddedCluster::start_with(1, options).await.unwrap();
        let relay = Relay::start(cluster.scheduler()).await;
        let table = visits(5_000, 2);
        let q = &queries()[0].1;
        // A budget for one release of the query and not two.
        let dpmech::PrivacyLoss::Pure { epsilon } = q.privacy_loss().unwrap() else {
            panic!("the first query is pure ε-DP")
        };
        let accountant = Arc::new(Accountant::pure(1.5 * epsilon).unwrap());
        let config = datafusion::prelude::SessionConfig::new().with_target_partitions(2);
        let mut session: PrivateSession =
            dpmech_ballista::private_session(&format!("df://{}", relay.address), config, accountant.clone())
                .unwrap();
        session
            .register_private("visits", table, "user_id", BOUNDS)
            .unwrap();
        session.release_with_key(q, key(1)).await.unwrap();
        // The first release's connection closes in the background (an HTTP/2 GOAWAY of
        // 17 bytes once its channel is dropped): let its traffic settle before counting.
        let mut bytes = relay.total_bytes();
        loop {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let now = relay.total_bytes();
            if now == bytes {
                break;
            }
            bytes = now;
        }
        let decodes = decoded.load(Ordering::SeqCst);
        assert!(bytes > 0 && decodes > 0, "the first release ran on the cluster");
        let refused = session.release_with_key(q, key(2)).await;
        assert!(
            matches!(
                refused,
                Err(DpError::Privacy(dpmech::Error::BudgetExceeded { .. }))
            ),
            "{refused:?}"
        );
        // Nothing reached the scheduler: no byte through the relay, no plan decoded.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(relay.total_bytes(), bytes);
        assert_eq!(decoded.load(Ordering::SeqCst), decodes);
        assert_eq!(accountant.charges(), 1);
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_the_cluster_cannot_finish_fails_with_a_typed_error_at_its_deadline() {
    bounded(async {
        // A scheduler without executors: the job is accepted and never runs.
        let cluster = EmbeddedCluster::start(0).await.unwrap();
        let deadline = Duration::from_secs(2);
        let runner = dpmech_ballista::ClusterRunner::new(&cluster.url())
            .unwrap()
            .with_deadline(deadline);
        let q = &queries()[0].1;
        let ctx = datafusion::prelude::SessionContext::new_with_config(
            datafusion::prelude::SessionConfig::new().with_target_partitions(2),
        );
        let mut session = PrivateSession::new(ctx, accountant(q)).with_runner(Arc::new(runner));
        session
            .register_private("visits", visits(5_000, 2), "user_id", BOUNDS)
            .unwrap();
        let start = std::time::Instant::now();
        let failed = session.release_with_key(q, key(3)).await;
        let took = start.elapsed();
        let Err(DpError::DataFusion(datafusion::error::DataFusionError::External(e))) = &failed else {
            panic!("{failed:?}")
        };
        assert!(
            matches!(
                e.downcast_ref::<dpmech_ballista::ClusterError>(),
                Some(dpmech_ballista::ClusterError::Deadline { deadline: d, .. }) if *d == deadline
            ),
            "{e}"
        );
        // The deadline holds (plus the few seconds the cancellation may take), and the
        // release was charged once, before it was submitted.
        assert!(
            took >= deadline && took < deadline + Duration::from_secs(6),
            "{took:?}"
        );
        assert_eq!(session.accountant().charges(), 1);
        println!("refused after {took:?}: {e}");
    })
    .await
}
