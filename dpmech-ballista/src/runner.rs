//! [`ClusterRunner`]: a [`PlanRunner`] that submits a release's physical plan to a
//! Ballista scheduler and collects the exact partials from the executors.

use std::sync::Arc;
use std::time::Duration;

use ballista_core::execution_plans::execute_physical_plan;
use ballista_core::extension::SessionConfigExt;
use datafusion::arrow::array::RecordBatch;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use datafusion_proto::protobuf::PhysicalPlanNode;
use dpmech_datafusion::PlanRunner;
use futures::TryStreamExt;

use crate::ClusterError;
use crate::codec::physical_codec;

/// Runs release plans on the Ballista cluster whose scheduler is at a `df://host:port`
/// address.
///
/// The plan is submitted whole, as a physical plan (Ballista's `execute_physical_plan`):
/// the scheduler cuts it into stages at its repartitions, the executors scan, bound and
/// pre-aggregate the rows, and the client fetches only the final stage's per-group
/// partials. The plan carries the keys derived for the bounding order, never the
/// release key: the noise is drawn at the client, once, after the final merge.
///
/// A release waits at most [`timeout`](Self::with_timeout) for the cluster (default 30
/// minutes); past it, the release fails (it was charged, and releases nothing).
#[derive(Debug, Clone)]
pub struct ClusterRunner {
    scheduler_url: String,
    codec: Arc<dyn PhysicalExtensionCodec>,
    timeout: Duration,
}

impl ClusterRunner {
    /// A runner for the scheduler at `address` (`df://host:port`; `http://host:port`
    /// is accepted too).
    ///
    /// # Errors
    ///
    /// [`ClusterError::Address`] for an address without a host and a port.
    pub fn new(address: &str) -> Result<Self, ClusterError> {
        let rest = address
            .strip_prefix("df://")
            .or_else(|| address.strip_prefix("http://"))
            .ok_or_else(|| ClusterError::Address(address.to_string()))?;
        let (host, port) = rest
            .trim_end_matches('/')
            .rsplit_once(':')
            .ok_or_else(|| ClusterError::Address(address.to_string()))?;
        if host.is_empty() || port.parse::<u16>().is_err() {
            return Err(ClusterError::Address(address.to_string()));
        }
        Ok(ClusterRunner {
            scheduler_url: format!("http://{host}:{port}"),
            codec: physical_codec(),
            timeout: Duration::from_secs(30 * 60),
        })
    }

    /// The runner with releases bounded by `timeout` of waiting for the cluster.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The scheduler's gRPC address (`http://host:port`).
    pub fn scheduler_url(&self) -> &str {
        &self.scheduler_url
    }
}

#[async_trait::async_trait]
impl PlanRunner for ClusterRunner {
    async fn collect(&self, plan: Arc<dyn ExecutionPlan>, state: &SessionState) -> Result<Vec<RecordBatch>> {
        let config = state.config().clone();
        let job = async {
            let stream = execute_physical_plan::<PhysicalPlanNode>(
                self.scheduler_url.clone(),
                &config.ballista_config(),
                plan,
                self.codec.as_ref(),
                state.session_id().to_string(),
                config.clone(),
            )
            .await?;
            stream.try_collect::<Vec<_>>().await
        };
        tokio::time::timeout(self.timeout, job).await.map_err(|_| {
            DataFusionError::Execution(format!(
                "the cluster at {} did not finish the release within {:?}",
                self.scheduler_url, self.timeout
            ))
        })?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_need_a_scheme_a_host_and_a_port() {
        assert_eq!(
            ClusterRunner::new("df://127.0.0.1:50050")
                .unwrap()
                .scheduler_url(),
            "http://127.0.0.1:50050"
        );
        assert_eq!(
            ClusterRunner::new("http://localhost:7/").unwrap().scheduler_url(),
            "http://localhost:7"
        );
        for bad in [
            "127.0.0.1:50050",
            "df://:50050",
            "df://host",
            "df://host:port",
            "df://host:70000",
        ] {
            assert!(
                matches!(ClusterRunner::new(bad), Err(ClusterError::Address(_))),
                "{bad}"
            );
        }
    }
}
