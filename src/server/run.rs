//! Start-up and shutdown of a controller process: read the data dir's identity, bind the
//! controller listeners, serve until SIGTERM or SIGINT.

use crate::raft::FatalError;
use std::sync::Arc;

use tracing::info;

use super::config::ControllerConfig;
use super::context::{ControllerEndpoint, QuorumView, ServerContext};
use super::node::{self, storage, NodeHandle};
use super::tls::LiveTls;
use super::{http, listener};
use crate::log::meta_properties::{MetaProperties, MetaPropertiesError};
use crate::log::MetadataDir;
use crate::raft::{Endpoints, HostPort};

/// Runs a controller until it is told to stop. Blocks the calling thread.
/// Why a node stopped other than on request.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The raft core halted (a storage fault, a state Java would throw on); its one error line
    /// naming the file, the operation and the OS error is already logged.
    #[error("{0}")]
    Halted(FatalError),
    /// It could not start or serve (configuration, sockets, signals).
    #[error("{0}")]
    Failed(String),
}

impl From<String> for RunError {
    fn from(why: String) -> RunError {
        RunError::Failed(why)
    }
}

pub fn run(config: ControllerConfig) -> Result<(), RunError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("kraftd-io")
        .enable_all()
        .build()
        .map_err(|e| format!("could not start the async runtime: {e}"))?;
    runtime.block_on(serve(config))
}

/// The cluster id from meta.properties, checking that the directory belongs to this node.
fn read_identity(config: &ControllerConfig) -> Result<Option<String>, String> {
    match MetaProperties::read_from_dir(&config.metadata_log_dir) {
        Ok(meta) => {
            if meta.node_id != Some(config.node_id) {
                return Err(format!(
                    "{} belongs to node {}, but node.id is {}: point metadata.log.dir at this \
                     node's own directory",
                    config.metadata_log_dir.join("meta.properties").display(),
                    meta.node_id.map_or("(none)".to_string(), |n| n.to_string()),
                    config.node_id
                ));
            }
            Ok(meta.cluster_id)
        }
        // As Java's start-up refuses an unformatted directory.
        Err(MetaPropertiesError::Missing { .. }) => Err(format!(
            "No `meta.properties` found in {} (have you run `kraftd format` or \
             `kafka-storage.sh format` to format the directory?)",
            config.metadata_log_dir.display()
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Serves `/metrics`, `/healthz` and `/readyz` for the node behind `node` on `socket` until the
/// runtime stops; `/readyz` writes to `metadata_dir`.
pub(crate) fn spawn_http(
    socket: tokio::net::TcpListener,
    node: NodeHandle,
    settings: &node::NodeSettings,
    metadata_dir: &std::path::Path,
) -> Result<(), String> {
    let addr = socket.local_addr().map_err(|e| e.to_string())?;
    let state = http::HttpState {
        node: Some(node),
        health: settings.health.clone(),
        channel: settings.peer.channel.clone(),
        metadata_dir: metadata_dir.to_path_buf(),
        process: Some(crate::server::metrics::process::ProcessMetrics::for_self()),
        last_exposition_bytes: Default::default(),
    };
    tokio::spawn(http::serve(socket, Arc::new(state)));
    info!(target: "kraftd::http", "serving /metrics, /healthz and /readyz on http://{addr}");
    Ok(())
}

/// What a node calls itself when a listener's host is empty, as Kafka uses the host name.
fn local_host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

async fn serve(config: ControllerConfig) -> Result<(), RunError> {
    let node_id = config.node_id;
    let cluster_id = read_identity(&config)?.ok_or_else(|| {
        format!(
            "{} has no cluster.id: format the directory with `kraftd format` or \
             `kafka-storage.sh format`",
            config.metadata_log_dir.join("meta.properties").display()
        )
    })?;
    let http_addr = http::listener_address(&config.originals)?;
    let bound = bind_controller_listeners(&config).await?;
    let http_socket = match http_addr {
        Some(addr) => Some(http::bind(addr).await?),
        None => None,
    };
    let dir = MetadataDir::open(&config.metadata_log_dir, node_id, node::log_config(&config))
        .map_err(|e| format!("could not open the metadata log directory: {e}"))?;
    let directory_id = dir.directory_id;
    let (file_log, _lock) = dir.into_parts();
    let static_voter_ids: Vec<i32> = config.quorum.voters.iter().map(|v| v.id).collect();
    let store = storage::open_quorum_state(&file_log, static_voter_ids)
        .map_err(|e| format!("could not read quorum-state: {e}"))?;
    let settings = node::node_settings(
        &config,
        &cluster_id,
        directory_id,
        bound.endpoints(),
        rand::random(),
    );
    let running = launch(
        &config,
        bound,
        &cluster_id,
        settings.clone(),
        file_log,
        store,
    );
    if let Some(socket) = http_socket {
        let dir = &config.metadata_log_dir;
        spawn_http(socket, running.handle.clone(), &settings, dir)?;
    }
    info!(
        target: "kraftd::server",
        "kraftd {} started (cluster id {cluster_id}, node {node_id}, directory id {directory_id})",
        env!("CARGO_PKG_VERSION"),
    );
    running.run_until_stopped(std::future::pending()).await
}

/// The controller listeners' sockets (with the TLS and SASL of the secure ones) and this node's advertised
/// endpoints on them.
pub(crate) struct BoundListeners {
    sockets: Vec<(String, tokio::net::TcpListener, listener::Security)>,
    pub controllers: Vec<ControllerEndpoint>,
}

impl BoundListeners {
    /// This node's endpoints, as the raft core advertises them.
    pub fn endpoints(&self) -> Endpoints {
        let mut e = Endpoints::empty();
        for c in &self.controllers {
            e.insert(&c.listener, HostPort::new(c.host.clone(), c.port));
        }
        e
    }
}

/// Binds every controller listener (port 0 picks a free port, then advertised as bound).
pub(crate) async fn bind_controller_listeners(
    config: &ControllerConfig,
) -> Result<BoundListeners, String> {
    let mut bound = Vec::new();
    for name in &config.controller_listener_names {
        let endpoint = config
            .listeners
            .iter()
            .find(|e| &e.listener_name == name)
            .ok_or_else(|| format!("controller listener {name} is not in listeners"))?;
        let host = if endpoint.host.is_empty() {
            "0.0.0.0"
        } else {
            endpoint.host.as_str()
        };
        let addr = if host.contains(':') {
            format!("[{host}]:{}", endpoint.port)
        } else {
            format!("{host}:{}", endpoint.port)
        };
        // Stores are read before binding: a bad one stops the start-up with nothing bound.
        let tls = config
            .tls
            .get(name)
            .map(LiveTls::load)
            .transpose()
            .map_err(|e| e.to_string())?;
        let socket = listener::bind(name, &addr).await?;
        let port = socket.local_addr().map_err(|e| e.to_string())?.port();
        let security = listener::Security {
            tls,
            sasl: config.sasl.get(name).cloned().map(Arc::new),
        };
        bound.push((name.clone(), socket, port, security));
    }
    let controllers = config
        .advertised_controller_endpoints()
        .into_iter()
        .map(|e| {
            let bound_port = bound
                .iter()
                .find(|(n, ..)| *n == e.listener_name)
                .map(|b| b.2);
            ControllerEndpoint {
                node_id: config.node_id,
                host: if e.host.is_empty() {
                    local_host_name()
                } else {
                    e.host.clone()
                },
                port: if e.port == 0 {
                    bound_port.unwrap_or(0)
                } else {
                    e.port
                },
                listener: e.listener_name,
            }
        })
        .collect();
    Ok(BoundListeners {
        sockets: bound.into_iter().map(|(n, s, _, t)| (n, s, t)).collect(),
        controllers,
    })
}

/// A started node: its loop's handle and thread.
pub(crate) struct RunningNode {
    pub handle: NodeHandle,
    thread: std::thread::JoinHandle<Result<(), FatalError>>,
}

/// Starts the node loop over `log` and `store` and serves the listeners.
pub(crate) fn launch<L, S>(
    config: &ControllerConfig,
    bound: BoundListeners,
    cluster_id: &str,
    settings: node::NodeSettings,
    log: L,
    store: S,
) -> RunningNode
where
    L: crate::raft::RaftLog + Send + 'static,
    S: crate::raft::QuorumStateStore + Send + 'static,
{
    let mut ctx = ServerContext::new(
        config.node_id,
        Some(cluster_id.to_string()),
        config.socket_request_max_bytes as usize,
        QuorumView {
            controllers: bound.controllers.clone(),
            ..Default::default()
        },
    );
    ctx.delete_topic_enable = config.controller.delete_topic_enable;
    ctx.authorizer = config.controller.authorizer.clone();
    ctx.connections = Arc::new(crate::server::limits::ConnectionLimits::new(
        config.connections.clone(),
    ));
    let ctx = Arc::new(ctx);
    // Kafka dials other controllers with the first controller listener's security settings.
    let mut settings = settings;
    settings.peer.tls = bound
        .sockets
        .iter()
        .find(|(name, ..)| name.as_str() == config.default_listener_name())
        .and_then(|(.., security)| security.tls.clone());
    settings.peer.sasl = config.sasl_client.clone().map(Arc::new);
    let (handle, thread) = node::start(
        settings,
        log,
        store,
        ctx.clone(),
        tokio::runtime::Handle::current(),
    );
    for (name, socket, security) in bound.sockets {
        if let Some(tls) = &security.tls {
            tokio::spawn(tls.clone().watch());
        }
        tokio::spawn(listener::serve(
            socket,
            name,
            ctx.clone(),
            Some(handle.clone()),
            security,
        ));
    }
    RunningNode { handle, thread }
}

impl RunningNode {
    /// Runs until SIGTERM/SIGINT (then a graceful shutdown), until the node loop stops on its
    /// own (a fatal error), or until `work` fails (then a graceful shutdown, and its error).
    pub async fn run_until_stopped(
        self,
        work: impl std::future::Future<Output = Result<(), String>>,
    ) -> Result<(), RunError> {
        let RunningNode { handle, thread, .. } = self;
        let raft_done = tokio::task::spawn_blocking(move || {
            thread
                .join()
                .map_err(|_| RunError::Failed("the raft thread panicked".to_string()))?
                .map_err(RunError::Halted)
        });
        tokio::pin!(raft_done);
        tokio::pin!(work);
        let mut work_result = Ok(());
        // A halted node loop ends the select with its result: a JoinHandle is polled to
        // completion once only.
        let joined = tokio::select! {
            signal = wait_for_shutdown_signal() => {
                signal.map_err(RunError::Failed)?;
                info!(target: "kraftd::server", "shutting down");
                handle.shutdown();
                None
            }
            r = &mut work => {
                work_result = r;
                handle.shutdown();
                None
            }
            joined = &mut raft_done => Some(joined),
        };
        let joined = match joined {
            Some(joined) => joined,
            None => raft_done.await,
        };
        let result = joined
            .unwrap_or_else(|e| Err(RunError::Failed(format!("the raft thread failed: {e}"))));
        if result.is_ok() {
            info!(target: "kraftd::server", "stopped");
        }
        result.and(work_result.map_err(RunError::Failed))
    }
}

async fn wait_for_shutdown_signal() -> Result<(), String> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).map_err(|e| format!("SIGTERM handler: {e}"))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("SIGINT handler: {e}"))?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}
