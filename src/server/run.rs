//! Start-up and shutdown of a controller process: read the data dir's identity, bind the
//! controller listeners, serve until SIGTERM or SIGINT.

use std::sync::Arc;

use tracing::info;

use super::config::ControllerConfig;
use super::context::{ControllerEndpoint, QuorumView, ServerContext};
use super::listener;
use crate::log::meta_properties::{MetaProperties, MetaPropertiesError};

/// Runs a controller until it is told to stop. Blocks the calling thread.
pub fn run(config: ControllerConfig) -> Result<(), String> {
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

/// What a node calls itself when a listener's host is empty, as Kafka uses the host name.
fn local_host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

async fn serve(config: ControllerConfig) -> Result<(), String> {
    let node_id = config.node_id;
    let cluster_id = read_identity(&config)?;
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
        let socket = listener::bind(name, &addr).await?;
        let port = socket.local_addr().map_err(|e| e.to_string())?.port();
        bound.push((name.clone(), socket, port));
    }
    let controllers = config
        .advertised_controller_endpoints()
        .into_iter()
        .map(|e| {
            let bound_port = bound
                .iter()
                .find(|(n, _, _)| *n == e.listener_name)
                .map(|b| b.2);
            ControllerEndpoint {
                node_id,
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
    let ctx = Arc::new(ServerContext::new(
        node_id,
        cluster_id.clone(),
        config.socket_request_max_bytes as usize,
        QuorumView {
            leader_id: sole_voter_leader(&config),
            controllers,
            ..Default::default()
        },
    ));
    for (name, socket, _) in bound {
        tokio::spawn(listener::serve(socket, name, ctx.clone()));
    }
    info!(
        target: "kraftd::server",
        "kraftd {} started (cluster id {})",
        env!("CARGO_PKG_VERSION"),
        cluster_id.as_deref().unwrap_or("unknown: not formatted")
    );
    wait_for_shutdown_signal().await?;
    info!(target: "kraftd::server", "shutting down");
    Ok(())
}

/// The leader that needs no election: this node, when the configured quorum is this node alone
/// (static voters naming only itself, or bootstrap servers naming only its own listener).
/// Admin clients that bootstrap from controllers send their calls to the active controller, so
/// one must be named. Until consensus runs, no other leader is ever claimed.
fn sole_voter_leader(config: &ControllerConfig) -> Option<i32> {
    let own = config
        .listeners
        .iter()
        .find(|e| e.listener_name == config.default_listener_name())?;
    let is_own =
        |host: &str, port: u16| port == own.port && (host == own.host || own.host.is_empty());
    let alone = if config.is_static_quorum() {
        matches!(config.quorum.voters.as_slice(), [v] if v.id == config.node_id)
    } else {
        matches!(config.quorum.bootstrap_servers.as_slice(), [b] if is_own(&b.host, b.port))
    };
    alone.then_some(config.node_id)
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
