//! [`ClusterRunner`]: a [`PlanRunner`] that submits a release's physical plan to a
//! Ballista scheduler and collects the exact partials from the executors — exactly
//! once each, or not at all.
//!
//! # Why the runner checks what the cluster returns
//!
//! Ballista 55 recovers from a lost executor by re-running its tasks: a stage whose
//! input lived on the lost executor is rolled back and run again, and the output of
//! every final-stage task that succeeds is *appended* to the job's result locations
//! (shuffle files carry the task's attempt slot in their name, so a re-run writes a new
//! file beside the old one). A job that lost an executor late can therefore report two
//! locations for one output partition, or one on an executor that is gone; its
//! recovery paths for fetch failures have also been seen to read map output twice
//! (issue 42: values inflated by 25–50 %, or no answer at all). The crate's privacy
//! rests on each unit's bounded contribution being counted once, so the runner does not
//! take part in that recovery:
//!
//! * the scheduler of this crate fails a job at its first failed task or failed fetch
//!   (Ballista's `task_max_failures = stage_max_failures = 1`, see
//!   [`ClusterOptions`](crate::ClusterOptions)) instead of re-running stages inside it;
//! * the runner accepts a finished job only if its result has **exactly one location
//!   for each output partition** of the plan, each partition it fetches has the
//!   number of rows its writer reported, and the partials **prove that each bounded row
//!   was merged exactly once** ([`check_complete`](dpmech_datafusion::check_complete):
//!   every bounding task tags its rows and ends with a marker row, so a task's output
//!   merged twice or lost — the inflated values of issue 42, in a job whose locations
//!   looked complete — is caught at the client);
//! * anything else — a failed job, a result with a partition twice or missing, a fetch
//!   that fails — discards the job (it is cancelled) and **resubmits the same plan
//!   whole**, at most [`attempts`](ClusterRunner::with_attempts) times. The plan carries
//!   the same derived keys, so a resubmission computes the same partials; the release
//!   was charged once, before the first submission, and its noise is drawn once, at the
//!   client, after the runner returns;
//! * an executor retries a failed shuffle fetch 3 times, 200 ms apart (Ballista's
//!   default is 3 s apart: a fetch from a lost executor held its task 9 s), so a job
//!   that lost an executor fails soon and is resubmitted
//!   ([`with_fetch_retries`](ClusterRunner::with_fetch_retries));
//! * all of it within one [`deadline`](ClusterRunner::with_deadline) (default
//!   [`DEFAULT_DEADLINE`], 3 minutes): past it the job is cancelled and the release
//!   fails with [`ClusterError::Deadline`]; after the last attempt it fails with
//!   [`ClusterError::Incomplete`]. A release on the cluster thus returns the values
//!   one node returns, or one of these errors — never other values.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ballista_core::client::BallistaClient;
use ballista_core::serde::protobuf::execute_query_params::Query;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::protobuf::{
    CancelJobParams, ExecuteQueryParams, GetJobStatusParams, KeyValuePair, PartitionLocation, SuccessfulJob,
    execute_query_result, job_status,
};
use datafusion::arrow::array::RecordBatch;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use datafusion_proto::physical_plan::{AsExecutionPlan, PhysicalExtensionCodec};
use datafusion_proto::protobuf::PhysicalPlanNode;
use dpmech_datafusion::PlanRunner;
use futures::TryStreamExt;
use tonic::transport::Channel;

use crate::ClusterError;
use crate::codec::physical_codec;

/// How long a release waits for the cluster by default, over all its attempts: 3
/// minutes.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(180);

/// How many times a release submits its plan by default before it gives up: 3.
pub const DEFAULT_ATTEMPTS: u32 = 3;

/// How often an executor retries a failed shuffle fetch by default before its task
/// fails: 3 times.
pub const DEFAULT_FETCH_RETRIES: u8 = 3;

/// How long an executor waits between the retries of a failed shuffle fetch by
/// default: 200 ms. Ballista's own default, 3 s, made a fetch from a lost executor
/// cost 9 s before its task failed and the runner could resubmit the job.
pub const DEFAULT_FETCH_RETRY_WAIT: Duration = Duration::from_millis(200);

/// The largest gRPC message the runner reads (a job status with its locations, a batch
/// of partials).
const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// Runs release plans on the Ballista cluster whose scheduler is at a `df://host:port`
/// address.
///
/// The plan is submitted whole, as a physical plan: the scheduler cuts it into stages
/// at its repartitions, the executors scan, bound and pre-aggregate the rows, and the
/// client fetches only the final stage's per-group partials. The plan carries the keys
/// derived for the bounding order, never the release key: the noise is drawn at the
/// client, once, after the final merge.
///
/// A job is accepted only if it returns each output partition exactly once; a job that
/// fails or returns anything else is cancelled and the plan resubmitted whole (see the
/// module docs), within a deadline of [`DEFAULT_DEADLINE`] unless
/// [`with_deadline`](Self::with_deadline) says otherwise.
///
/// ```
/// use std::time::Duration;
/// use dpmech_ballista::ClusterRunner;
/// let runner = ClusterRunner::new("df://127.0.0.1:50050")?
///     .with_deadline(Duration::from_secs(60))
///     .with_attempts(2)
///     .with_fetch_retries(3, Duration::from_millis(200));
/// assert_eq!(runner.deadline(), Duration::from_secs(60));
/// # Ok::<(), dpmech_ballista::ClusterError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ClusterRunner {
    scheduler_url: String,
    codec: Arc<dyn PhysicalExtensionCodec>,
    deadline: Duration,
    attempts: u32,
    fetch_retries: u8,
    fetch_retry_wait: Duration,
    /// Why jobs were discarded, shared by the runner's clones.
    discarded: Arc<Mutex<Vec<String>>>,
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
            deadline: DEFAULT_DEADLINE,
            attempts: DEFAULT_ATTEMPTS,
            fetch_retries: DEFAULT_FETCH_RETRIES,
            fetch_retry_wait: DEFAULT_FETCH_RETRY_WAIT,
            discarded: Arc::default(),
        })
    }

    /// The runner with releases bounded by `deadline` of waiting for the cluster, over
    /// all attempts (default [`DEFAULT_DEADLINE`]).
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The same as [`with_deadline`](Self::with_deadline) (the name of earlier
    /// versions).
    pub fn with_timeout(self, timeout: Duration) -> Self {
        self.with_deadline(timeout)
    }

    /// The runner submitting a release's plan at most `attempts` times (at least once;
    /// default [`DEFAULT_ATTEMPTS`]).
    pub fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts.max(1);
        self
    }

    /// The runner whose jobs retry a failed shuffle fetch `retries` times, `wait` apart,
    /// before the task fails (defaults [`DEFAULT_FETCH_RETRIES`],
    /// [`DEFAULT_FETCH_RETRY_WAIT`]). A fetch from a lost executor fails each retry, so
    /// `retries × wait` is what a late executor loss adds before the runner resubmits
    /// the job; a transient error is retried at no cost to the release's values.
    pub fn with_fetch_retries(mut self, retries: u8, wait: Duration) -> Self {
        self.fetch_retries = retries;
        self.fetch_retry_wait = wait;
        self
    }

    /// How long a release waits for the cluster, over all its attempts.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// Why this runner and its clones discarded submitted jobs so far, oldest first (a
    /// failed job, a result with a partition missing or twice, a failed fetch, partials
    /// that do not prove that every bounded row was merged once): what an operator logs.
    pub fn discarded_jobs(&self) -> Vec<String> {
        self.discarded.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The settings a job is submitted with: the session's options, then the runner's
    /// shuffle-fetch retries (Ballista's client options, read by the executors).
    fn settings(&self, state: &SessionState) -> Vec<KeyValuePair> {
        let setting = |key: &str, value: String| KeyValuePair {
            key: key.to_string(),
            value: Some(value),
        };
        let wait_ms = u64::try_from(self.fetch_retry_wait.as_millis()).unwrap_or(u64::MAX);
        state
            .config()
            .options()
            .entries()
            .into_iter()
            .map(|e| KeyValuePair {
                key: e.key,
                value: e.value,
            })
            .chain([
                setting(
                    ballista_core::config::BALLISTA_CLIENT_IO_RETRIES_TIMES,
                    self.fetch_retries.to_string(),
                ),
                setting(
                    ballista_core::config::BALLISTA_CLIENT_IO_RETRY_WAIT_TIME_MS,
                    wait_ms.to_string(),
                ),
            ])
            .collect()
    }

    /// The scheduler's gRPC address (`http://host:port`).
    pub fn scheduler_url(&self) -> &str {
        &self.scheduler_url
    }

    async fn scheduler(&self) -> Result<SchedulerGrpcClient<Channel>> {
        Ok(SchedulerGrpcClient::connect(self.scheduler_url.clone())
            .await
            .map_err(|e| external(ClusterError::Unreachable(format!("{}: {e}", self.scheduler_url))))?
            .max_decoding_message_size(MAX_MESSAGE)
            .max_encoding_message_size(MAX_MESSAGE))
    }

    /// Submits `plan` once and waits for its job; `Ok(Err(reason))` for a job that
    /// cannot be trusted (to be resubmitted), `Err` for an error that a resubmission
    /// would repeat (the plan cannot be encoded, the scheduler refuses it).
    async fn attempt(
        &self,
        encoded: &[u8],
        settings: &[KeyValuePair],
        state: &SessionState,
        partitions: usize,
        job: &Mutex<Option<String>>,
    ) -> Result<std::result::Result<Vec<RecordBatch>, String>> {
        let mut scheduler = self.scheduler().await?;
        let mut request = tonic::Request::new(ExecuteQueryParams {
            query: Some(Query::PhysicalPlan(encoded.to_vec())),
            settings: settings.to_vec(),
            session_id: state.session_id().to_string(),
            operation_id: operation_id(),
        });
        ballista_core::version::insert_version_header(request.metadata_mut());
        let submitted = scheduler
            .execute_query(request)
            .await
            .map_err(|e| DataFusionError::Execution(format!("the scheduler refused the release: {e}")))?
            .into_inner();
        let job_id = match submitted.result {
            Some(execute_query_result::Result::Success(ok)) => ok.job_id,
            other => {
                return Err(DataFusionError::Execution(format!(
                    "the scheduler refused the release: {other:?}"
                )));
            }
        };
        *job.lock().unwrap_or_else(|e| e.into_inner()) = Some(job_id.clone());
        let finished = loop {
            let status = scheduler
                .get_job_status(GetJobStatusParams {
                    job_id: job_id.clone(),
                })
                .await;
            // A scheduler that cannot answer is treated as a failed attempt.
            let status = match status {
                Ok(s) => s.into_inner().status.and_then(|s| s.status),
                Err(e) => return Ok(Err(format!("job {job_id}: status unavailable: {e}"))),
            };
            match status {
                Some(job_status::Status::Successful(done)) => break done,
                Some(job_status::Status::Failed(failed)) => {
                    return Ok(Err(format!("job {job_id} failed: {}", failed.error)));
                }
                _ => tokio::time::sleep(Duration::from_millis(25)).await,
            }
        };
        let locations = match complete_locations(finished, partitions) {
            Ok(l) => l,
            Err(reason) => return Ok(Err(format!("job {job_id}: {reason}"))),
        };
        let mut batches = Vec::new();
        for location in locations {
            match fetch(location).await {
                Ok(mut b) => batches.append(&mut b),
                Err(reason) => return Ok(Err(format!("job {job_id}: {reason}"))),
            }
        }
        // The partials prove that every bounded row was merged exactly once (the
        // bounding operator's check tags and markers), whatever the job's recovery did.
        if let Err(e) = dpmech_datafusion::check_complete(&batches) {
            return Ok(Err(format!("job {job_id}: {e}")));
        }
        *job.lock().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(Ok(batches))
    }

    /// Cancels `job` (best effort, a few seconds at most: the release has failed).
    async fn cancel(&self, job: Option<String>) {
        let Some(job_id) = job else { return };
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            if let Ok(mut s) = self.scheduler().await {
                let _ = s.cancel_job(CancelJobParams { job_id }).await;
            }
        })
        .await;
    }
}

/// An error of this crate as a DataFusion error (the [`PlanRunner`] interface), from
/// which callers can downcast it.
fn external(e: ClusterError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// A unique id for one submission.
fn operation_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "dpmech-{}-{nanos}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The locations of a finished job if it has exactly one for each of the plan's
/// `partitions` output partitions (in partition order), or why not.
fn complete_locations(
    job: SuccessfulJob,
    partitions: usize,
) -> std::result::Result<Vec<PartitionLocation>, String> {
    let mut by_partition: BTreeMap<usize, PartitionLocation> = BTreeMap::new();
    let reported = job.partition_location.len();
    for location in job.partition_location {
        let id = location
            .partition_id
            .as_ref()
            .ok_or("a result location without a partition id")?
            .partition_id as usize;
        if id >= partitions {
            return Err(format!("a result for partition {id} of a plan of {partitions}"));
        }
        if by_partition.insert(id, location).is_some() {
            return Err(format!(
                "partition {id} reported twice ({reported} locations for {partitions} partitions): \
                 a stage was re-run inside the job"
            ));
        }
    }
    if by_partition.len() != partitions {
        return Err(format!(
            "{} of {partitions} partitions reported",
            by_partition.len()
        ));
    }
    Ok(by_partition.into_values().collect())
}

/// The batches of one result partition, checked against the row count its writer
/// reported.
async fn fetch(location: PartitionLocation) -> std::result::Result<Vec<RecordBatch>, String> {
    let layout = location.layout();
    let executor = location
        .executor_meta
        .ok_or("a result location without an executor")?;
    let id = location
        .partition_id
        .ok_or("a result location without a partition id")?;
    let partition = id.partition_id;
    let port = u16::try_from(executor.port).map_err(|_| "an executor port out of range")?;
    let mut client = BallistaClient::try_new(&executor.host, port, MAX_MESSAGE, false, None, 1, 100, 0, 0)
        .await
        .map_err(|e| format!("executor {} unreachable: {e}", executor.id))?;
    let stream = client
        .fetch_partition(&executor.id, &id.into(), location.file_id, layout, true)
        .await
        .map_err(|e| format!("partition {partition} from executor {}: {e}", executor.id))?;
    let batches: Vec<RecordBatch> = stream
        .try_collect()
        .await
        .map_err(|e| format!("partition {partition} from executor {}: {e}", executor.id))?;
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if let Some(stats) = location.partition_stats
        && stats.num_rows >= 0
        && stats.num_rows as usize != rows
    {
        return Err(format!(
            "partition {partition}: {rows} rows fetched, {} written",
            stats.num_rows
        ));
    }
    Ok(batches)
}

#[async_trait::async_trait]
impl PlanRunner for ClusterRunner {
    async fn collect(&self, plan: Arc<dyn ExecutionPlan>, state: &SessionState) -> Result<Vec<RecordBatch>> {
        let partitions = plan.output_partitioning().partition_count();
        let mut encoded = Vec::new();
        PhysicalPlanNode::try_from_physical_plan(plan, self.codec.as_ref())?.try_encode(&mut encoded)?;
        let settings = self.settings(state);
        let job = Mutex::new(None);
        let mut failures = Vec::new();
        let attempts = async {
            for _ in 0..self.attempts {
                match self.attempt(&encoded, &settings, state, partitions, &job).await? {
                    Ok(batches) => return Ok(batches),
                    Err(reason) => {
                        self.discarded
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(reason.clone());
                        failures.push(reason);
                        let stale = job.lock().unwrap_or_else(|e| e.into_inner()).take();
                        self.cancel(stale).await;
                    }
                }
            }
            Err::<Vec<RecordBatch>, _>(external(ClusterError::Incomplete {
                attempts: self.attempts,
                reasons: failures.join("; "),
            }))
        };
        match tokio::time::timeout(self.deadline, attempts).await {
            Ok(result) => result,
            Err(_) => {
                let stale = job.lock().unwrap_or_else(|e| e.into_inner()).take();
                self.cancel(stale).await;
                Err(external(ClusterError::Deadline {
                    scheduler: self.scheduler_url.clone(),
                    deadline: self.deadline,
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballista_core::serde::protobuf::PartitionId;

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

    #[test]
    fn the_deadline_is_short_by_default_and_configurable() {
        let runner = ClusterRunner::new("df://127.0.0.1:1").unwrap();
        assert_eq!(runner.deadline(), Duration::from_secs(180));
        assert_eq!(runner.attempts, 3);
        let runner = runner.with_deadline(Duration::from_millis(1500)).with_attempts(0);
        assert_eq!(runner.deadline(), Duration::from_millis(1500));
        assert_eq!(runner.attempts, 1);
    }

    #[test]
    fn jobs_carry_the_runners_fetch_retries() {
        let state = datafusion::prelude::SessionContext::new().state();
        let value = |settings: &[KeyValuePair], key: &str| -> Option<String> {
            let mut found = settings.iter().filter(|s| s.key == key);
            let first = found.next()?.value.clone();
            assert!(found.next().is_none(), "{key} set twice");
            first
        };
        let runner = ClusterRunner::new("df://127.0.0.1:1").unwrap();
        let settings = runner.settings(&state);
        assert_eq!(
            value(&settings, "ballista.client.io_retries_times").as_deref(),
            Some("3")
        );
        assert_eq!(
            value(&settings, "ballista.client.io_retry_wait_time_ms").as_deref(),
            Some("200")
        );
        // The session's own options go along.
        assert!(value(&settings, "datafusion.execution.target_partitions").is_some());
        let settings = runner
            .with_fetch_retries(1, Duration::from_secs(2))
            .settings(&state);
        assert_eq!(
            value(&settings, "ballista.client.io_retries_times").as_deref(),
            Some("1")
        );
        assert_eq!(
            value(&settings, "ballista.client.io_retry_wait_time_ms").as_deref(),
            Some("2000")
        );
    }

    /// A location of `partition` written by task `task`.
    fn location(partition: u32, task: u32) -> PartitionLocation {
        PartitionLocation {
            map_partition_id: task,
            partition_id: Some(PartitionId {
                job_id: "j".into(),
                stage_id: 3,
                partition_id: partition,
            }),
            ..PartitionLocation::default()
        }
    }

    fn job(locations: Vec<PartitionLocation>) -> SuccessfulJob {
        SuccessfulJob {
            partition_location: locations,
            ..SuccessfulJob::default()
        }
    }

    #[test]
    fn a_result_is_accepted_only_with_each_partition_exactly_once() {
        // One location per partition, in any order: accepted, in partition order.
        let ok = complete_locations(job(vec![location(1, 1), location(0, 0), location(2, 2)]), 3).unwrap();
        let order: Vec<u32> = ok
            .iter()
            .map(|l| l.partition_id.as_ref().unwrap().partition_id)
            .collect();
        assert_eq!(order, [0, 1, 2]);
        // A partition re-run inside the job and reported again (Ballista appends the
        // re-run's location beside the first): refused.
        let twice = complete_locations(job(vec![location(0, 0), location(1, 1), location(1, 0)]), 2);
        assert!(twice.unwrap_err().contains("reported twice"));
        // A partition missing, or one the plan does not have: refused.
        assert!(complete_locations(job(vec![location(0, 0)]), 2).is_err());
        assert!(complete_locations(job(vec![location(0, 0), location(5, 1)]), 2).is_err());
        assert!(complete_locations(job(vec![]), 1).is_err());
        let mut anonymous = location(0, 0);
        anonymous.partition_id = None;
        assert!(complete_locations(job(vec![anonymous]), 1).is_err());
    }
}
