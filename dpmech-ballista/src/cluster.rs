//! The cluster's processes: a scheduler and executors that carry dpmech's plan codec,
//! either in this process ([`EmbeddedCluster`], for a laptop or a test) or as separate
//! processes ([`run_scheduler`], [`run_executor`], behind this crate's two binaries).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::serde::BallistaCodec;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::utils::default_config_producer;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::{create_scheduler, start_grpc_service_with_listener};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};

use crate::ClusterError;
use crate::codec::physical_codec;

/// How a cluster's processes are configured.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// The physical codec of the scheduler and the executors (default:
    /// [`physical_codec`](crate::physical_codec)).
    pub physical_codec: Arc<dyn PhysicalExtensionCodec>,
    /// How long the scheduler waits for a silent executor before it reschedules its
    /// tasks (default 10 s; executors poll for work several times a second).
    pub executor_timeout: Duration,
    /// Task slots per executor (default 2).
    pub slots: usize,
    /// The directory where an executor process writes its shuffle files (default: a
    /// new temporary directory).
    pub work_dir: Option<String>,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            physical_codec: physical_codec(),
            executor_timeout: Duration::from_secs(10),
            slots: 2,
            work_dir: None,
        }
    }
}

/// The scheduler's configuration for `options`, listening at `address`.
fn scheduler_config(address: SocketAddr, options: &ClusterOptions) -> SchedulerConfig {
    let timeout = options.executor_timeout.as_secs().max(2);
    SchedulerConfig {
        bind_host: address.ip().to_string(),
        external_host: address.ip().to_string(),
        bind_port: address.port(),
        override_physical_codec: Some(options.physical_codec.clone()),
        // Executors poll for tasks (the scheduler needs no route back to them).
        scheduling_policy: TaskSchedulingPolicy::PullStaged,
        executor_timeout_seconds: timeout,
        expire_dead_executor_interval_seconds: 1,
        no_executors_grace_period_seconds: timeout,
        // A failed task or a failed shuffle fetch fails the job instead of re-running
        // stages inside it: Ballista's in-job recovery can report a partition twice or
        // read map output twice; the client resubmits the whole plan instead (module
        // `runner`).
        task_max_failures: 1,
        stage_max_failures: 1,
        ..SchedulerConfig::default()
    }
}

/// A scheduler bound to its address, not yet serving.
struct BoundScheduler {
    address: SocketAddr,
    listener: tokio::net::TcpListener,
    config: SchedulerConfig,
}

impl BoundScheduler {
    async fn bind(address: SocketAddr, options: &ClusterOptions) -> Result<Self, ClusterError> {
        let listener = tokio::net::TcpListener::bind(address).await?;
        let address = listener.local_addr()?;
        Ok(BoundScheduler {
            address,
            listener,
            config: scheduler_config(address, options),
        })
    }

    /// Serves until the process (or the runtime) ends.
    async fn serve(self) -> Result<(), ClusterError> {
        self.config.validate()?;
        let cluster = BallistaCluster::new_from_config(&self.config).await?;
        let scheduler =
            create_scheduler::<LogicalPlanNode, PhysicalPlanNode>(cluster, Arc::new(self.config)).await?;
        start_grpc_service_with_listener(self.listener, scheduler).await?;
        Ok(())
    }
}

/// Runs a scheduler at `address` until the process ends (the scheduler binary).
///
/// # Errors
///
/// [`ClusterError::Io`] if the address cannot be bound, [`ClusterError::Ballista`] if
/// the scheduler fails.
pub async fn run_scheduler(address: SocketAddr, options: &ClusterOptions) -> Result<(), ClusterError> {
    BoundScheduler::bind(address, options).await?.serve().await
}

/// Where an executor process listens and which scheduler it serves.
#[derive(Debug, Clone)]
pub struct ExecutorAddresses {
    /// The host to bind and advertise (e.g. `127.0.0.1`).
    pub host: String,
    /// The Arrow Flight port, from which shuffles and results are fetched.
    pub flight_port: u16,
    /// The executor's gRPC port.
    pub grpc_port: u16,
    /// The scheduler's host.
    pub scheduler_host: String,
    /// The scheduler's port.
    pub scheduler_port: u16,
}

/// Runs an executor until the process ends or the scheduler stops it (the executor
/// binary).
///
/// # Errors
///
/// [`ClusterError::Ballista`] if the executor cannot start or fails.
pub async fn run_executor(
    addresses: ExecutorAddresses,
    options: &ClusterOptions,
) -> Result<(), ClusterError> {
    let config = ExecutorProcessConfig {
        bind_host: addresses.host.clone(),
        external_host: Some(addresses.host),
        port: addresses.flight_port,
        grpc_port: addresses.grpc_port,
        scheduler_host: addresses.scheduler_host,
        scheduler_port: addresses.scheduler_port,
        scheduler_connect_timeout_seconds: 30,
        vcores: options.slots,
        task_scheduling_policy: TaskSchedulingPolicy::PullStaged,
        override_physical_codec: Some(options.physical_codec.clone()),
        work_dir: options.work_dir.clone(),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config)).await?;
    Ok(())
}

/// A scheduler and executors in this process, on the loopback interface: a cluster for a
/// laptop, a test or an example. They run on the current Tokio runtime and stop with it.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use dpmech::Accountant;
/// use dpmech_ballista::EmbeddedCluster;
/// let cluster = EmbeddedCluster::start(2).await?; // a scheduler and two executors
/// let session = cluster.private_session(Arc::new(Accountant::pure(1.0)?))?;
/// # let _ = session; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct EmbeddedCluster {
    scheduler: SocketAddr,
    options: ClusterOptions,
}

impl EmbeddedCluster {
    /// A scheduler and `executors` executors with the default options.
    ///
    /// # Errors
    ///
    /// [`ClusterError`] if a process cannot start.
    pub async fn start(executors: usize) -> Result<Self, ClusterError> {
        Self::start_with(executors, ClusterOptions::default()).await
    }

    /// A scheduler and `executors` executors with `options`.
    ///
    /// # Errors
    ///
    /// [`ClusterError`] if a process cannot start.
    pub async fn start_with(executors: usize, options: ClusterOptions) -> Result<Self, ClusterError> {
        let bound = BoundScheduler::bind(SocketAddr::from(([127, 0, 0, 1], 0)), &options).await?;
        let scheduler = bound.address;
        tokio::spawn(bound.serve());
        let cluster = EmbeddedCluster { scheduler, options };
        for _ in 0..executors {
            cluster.add_executor(scheduler).await?;
        }
        Ok(cluster)
    }

    /// Starts one more executor, which reaches the scheduler at `scheduler` (its own
    /// address, or a relay in front of it).
    ///
    /// # Errors
    ///
    /// [`ClusterError`] if the scheduler cannot be reached within 30 s.
    pub async fn add_executor(&self, scheduler: SocketAddr) -> Result<(), ClusterError> {
        let url = format!("http://{scheduler}");
        let mut attempts = 0;
        let client = loop {
            match SchedulerGrpcClient::connect(url.clone()).await {
                Ok(client) => break client,
                Err(_) if attempts < 300 => {
                    attempts += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(ClusterError::Unreachable(format!("{url}: {e}"))),
            }
        };
        let runtime = RuntimeEnvBuilder::new().build_arc()?;
        let codec: BallistaCodec = BallistaCodec::new(
            Arc::new(ballista_core::serde::BallistaLogicalExtensionCodec::default()),
            self.options.physical_codec.clone(),
        );
        ballista_executor::new_standalone_executor_from_builder(
            client,
            self.options.slots,
            Arc::new(default_config_producer),
            Arc::new(move |_| Ok(runtime.clone())),
            codec,
            Default::default(),
        )
        .await?;
        Ok(())
    }

    /// The scheduler's address.
    pub fn scheduler(&self) -> SocketAddr {
        self.scheduler
    }

    /// The scheduler's address as `df://host:port`.
    pub fn url(&self) -> String {
        format!("df://{}", self.scheduler)
    }
}
