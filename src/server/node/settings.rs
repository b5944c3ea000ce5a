//! From `ControllerConfig` (Kafka's property names) to the settings of the log, the raft core
//! and the node loop.

use std::sync::Arc;
use std::time::Duration;

use crate::controller::quorum::ControllerSettings;
use crate::controller::topic_configs::StaticLogConfig;
use crate::controller::topics::TopicsContext;
use crate::log::segment_log::RollConfig;
use crate::log::LogConfig;
use crate::protocol::codec::Uuid;
use crate::raft::{Endpoints, HostPort, RaftConfig, Randomness};
use crate::server::config::ControllerConfig;
use crate::server::peer::PeerSettings;

use super::NodeSettings;

/// Kafka's raft shutdown wait (`KafkaRaftClientDriver`'s 5 s).
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

pub fn log_config(config: &ControllerConfig) -> LogConfig {
    let m = &config.metadata_log;
    LogConfig {
        roll: RollConfig {
            segment_bytes: m.effective_segment_bytes() as u64,
            segment_ms: m.segment_ms,
        },
        max_batch_size: m.internal_max_batch_size_bytes as usize,
        retention_bytes: m.max_retention_bytes,
        retention_ms: m.max_retention_ms,
    }
}

/// The node's settings. `listeners` are this node's advertised controller endpoints (ports
/// resolved after binding); `seed` feeds the core's election-timeout jitter.
pub fn node_settings(
    config: &ControllerConfig,
    cluster_id: &str,
    directory_id: Uuid,
    listeners: Endpoints,
    seed: u64,
) -> NodeSettings {
    let q = &config.quorum;
    let ms = |v: u32| Duration::from_millis(v as u64);
    let mut raft = RaftConfig::new(Some(config.node_id), directory_id, cluster_id);
    raft.listeners = listeners;
    raft.default_listener = config.default_listener_name().to_string();
    raft.static_voters = q
        .voters
        .iter()
        .map(|v| (v.id, HostPort::new(v.address.host.clone(), v.address.port)))
        .collect();
    raft.bootstrap_servers = q
        .bootstrap_servers
        .iter()
        .map(|b| HostPort::new(b.host.clone(), b.port))
        .collect();
    raft.election_timeout = ms(q.election_timeout_ms);
    raft.fetch_timeout = ms(q.fetch_timeout_ms);
    raft.election_backoff_max = ms(q.election_backoff_max_ms);
    raft.request_timeout = ms(q.request_timeout_ms);
    raft.retry_backoff = ms(q.retry_backoff_ms);
    raft.append_linger = ms(q.append_linger_ms);
    raft.fetch_max_bytes = q.fetch_max_bytes;
    raft.fetch_snapshot_max_bytes = q.fetch_snapshot_max_bytes;
    raft.auto_join = q.auto_join_enable;
    raft.randomness = Randomness::Seeded(seed);
    let idle = config.metadata_log.max_idle_interval_ms;
    let controller = ControllerSettings {
        node_id: config.node_id,
        cluster_id: cluster_id.to_string(),
        static_voter_ids: raft.static_voters.iter().map(|(id, _)| *id).collect(),
        delete_topic_enable: config.controller.delete_topic_enable,
        authorizer: config.controller.authorizer.clone(),
        broker_session_timeout_ms: config.controller.broker_session_timeout_ms.into(),
        activation_min_insync_replicas: Some(config.controller.min_insync_replicas),
        topics: TopicsContext {
            node_id: config.node_id,
            default_partitions: i32::try_from(config.controller.num_partitions).unwrap_or(i32::MAX),
            default_replication_factor: i16::try_from(config.controller.default_replication_factor)
                .unwrap_or(i16::MAX),
            statics: StaticLogConfig {
                originals: config.originals.clone(),
            },
        },
        topic_seed: seed.rotate_left(17) ^ 0x746f_7069_6373,
        leader_rebalance_interval_ms: config
            .controller
            .auto_leader_rebalance_enable
            .then(|| u64::from(config.controller.leader_imbalance_check_interval_seconds) * 1000),
        tokens: config.controller.delegation_tokens.clone(),
    };
    NodeSettings {
        peer: PeerSettings {
            request_timeout: raft.request_timeout,
            retry_backoff: raft.retry_backoff,
            max_backoff: raft.election_backoff_max.max(raft.retry_backoff),
            client_id: "raft-client",
            // Set where the listeners are bound (`run::launch`).
            tls: None,
            sasl: None,
            channel: Arc::default(),
        },
        health: Arc::default(),
        raft,
        listener_protocols: config.listener_security_protocols.clone(),
        noop_interval: (idle > 0).then(|| ms(idle)),
        shutdown_timeout: SHUTDOWN_TIMEOUT,
        controller,
        replay_metadata: true,
        snapshot_max_bytes: config.metadata_log.max_record_bytes_between_snapshots,
        snapshot_max_interval: (config.metadata_log.max_snapshot_interval_ms > 0)
            .then(|| Duration::from_millis(config.metadata_log.max_snapshot_interval_ms)),
    }
}
