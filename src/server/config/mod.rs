//! kraftd's configuration: Kafka's `server.properties` keys and semantics for a KRaft
//! controller, read into a typed [`ControllerConfig`].
//!
//! ```no_run
//! use kraftd::server::config::ControllerConfig;
//! let overrides = vec![("node.id".to_string(), "2".to_string())];
//! let config = ControllerConfig::load("config/controller.properties".as_ref(), &overrides)?;
//! println!("node {} listens on {:?}", config.node_id, config.listeners);
//! # Ok::<(), kraftd::server::config::ConfigError>(())
//! ```
//!
//! Defaults and validators were checked against Kafka 4.4.0's `KafkaConfig.configDef()` and by
//! feeding edge cases to `KafkaConfig.fromProps`. Where kraftd is stricter than Kafka (ports
//! out of range, duplicate voters, negative voter ids, voters at 0.0.0.0, SASL mechanisms
//! other than PLAIN, combined broker+controller roles) the error says so.

mod address;
mod error;
mod keys;
mod password;
pub use crate::properties;
mod rules;
pub(crate) mod values;

#[cfg(test)]
mod tests;

use crate::controller::acls::authorizer::{AuthorizerConfig, STANDARD_AUTHORIZER};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use address::{Endpoint, HostPort, QuorumVoter, SecurityProtocol};
pub use error::ConfigError;
pub use keys::{classify, KeyKind};
pub use password::Password;
pub use properties::Properties;

use rules::{
    check_advertised, check_controller_listeners, check_no_zookeeper_migration, check_protocol,
    check_roles, log_dirs, parse_endpoints, quorum_config, security_protocols,
};
use values::{parse_bool, parse_int, parse_list, parse_long};

/// Kafka's default for `listeners` when unset.
pub const DEFAULT_LISTENERS: &str = "PLAINTEXT://:9092";
/// Kafka's default for `log.dir` (used when neither `log.dirs` nor `log.dir` is set).
pub const DEFAULT_LOG_DIR: &str = "/tmp/kafka-logs";

/// Everything a kraftd controller node reads from its configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerConfig {
    /// `node.id` (required, >= 0).
    pub node_id: i32,
    /// `listeners`; for a controller every entry is a controller listener.
    pub listeners: Vec<Endpoint>,
    /// `advertised.listeners` as configured (may be empty; see [`Self::advertised_controller_endpoints`]).
    pub advertised_listeners: Vec<Endpoint>,
    /// `controller.listener.names`; the first is the default listener for raft traffic.
    pub controller_listener_names: Vec<String>,
    /// Effective `listener.security.protocol.map` (Kafka's defaulting rules applied).
    pub listener_security_protocols: BTreeMap<String, SecurityProtocol>,
    /// The `ssl.*` settings of each controller listener whose protocol is SSL or SASL_SSL.
    pub tls: BTreeMap<String, crate::server::tls::TlsSettings>,
    /// The `sasl.*` settings of each SASL_PLAINTEXT or SASL_SSL controller listener.
    pub sasl: BTreeMap<String, crate::server::sasl::settings::ListenerSasl>,
    /// How connections to other controllers authenticate, when the first controller listener
    /// is a SASL one (`sasl.mechanism.controller.protocol`).
    pub sasl_client: Option<crate::server::sasl::settings::ClientSasl>,
    /// Connection limits and timers (`max.connections*`, `connections.max.idle.ms`, ...).
    pub connections: crate::server::limits::ConnectionSettings,
    pub quorum: QuorumConfig,
    /// `log.dirs`, else `log.dir`, else `/tmp/kafka-logs`. Relative paths are relative to the
    /// working directory, as in Kafka.
    pub log_dirs: Vec<PathBuf>,
    /// `metadata.log.dir`, else the first of `log_dirs`.
    pub metadata_log_dir: PathBuf,
    /// `socket.request.max.bytes`: the largest request frame accepted (default 100 MiB).
    pub socket_request_max_bytes: u32,
    pub metadata_log: MetadataLogConfig,
    pub controller: ControllerSettings,
    /// Kafka keys present but not used by kraftd (logged at debug).
    pub ignored_keys: Vec<String>,
    /// Every property as given, overrides applied (Kafka's `KafkaConfig.originals`): topic
    /// decisions read the log configs that stand in for topic configs from them.
    pub originals: BTreeMap<String, String>,
    /// Keys Kafka does not know either (each logged as a warning).
    pub unknown_keys: Vec<String>,
}

/// The `controller.quorum.*` settings (Kafka's `QuorumConfig`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumConfig {
    /// `controller.quorum.voters`: a static quorum when non-empty.
    pub voters: Vec<QuorumVoter>,
    /// `controller.quorum.bootstrap.servers`: discovery addresses of a dynamic quorum.
    pub bootstrap_servers: Vec<HostPort>,
    pub election_timeout_ms: u32,
    pub fetch_timeout_ms: u32,
    pub election_backoff_max_ms: u32,
    pub append_linger_ms: u32,
    pub request_timeout_ms: u32,
    pub retry_backoff_ms: u32,
    pub auto_join_enable: bool,
    pub fetch_max_bytes: u32,
    pub fetch_snapshot_max_bytes: u32,
}

/// The `metadata.*` settings of the metadata log and its snapshots (Kafka's `MetadataLogConfig`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataLogConfig {
    /// `metadata.log.segment.bytes` (>= [`Self::segment_min_bytes`]); see
    /// [`Self::effective_segment_bytes`].
    pub segment_bytes: u32,
    /// The floor of `metadata.log.segment.bytes`: 8 MiB, or Kafka 4.0's test-only
    /// `metadata.log.segment.min.bytes` (>= 12), which 4.4 dropped for
    /// `internal.metadata.log.segment.bytes`. A Java 4.0 controller's `server.properties` with
    /// small segments thus means the same to kraftd.
    pub segment_min_bytes: u32,
    pub segment_ms: i64,
    /// `metadata.max.retention.bytes`; -1 means no size limit.
    pub max_retention_bytes: i64,
    /// `metadata.max.retention.ms`; -1 means no age limit.
    pub max_retention_ms: i64,
    /// `metadata.max.idle.interval.ms`: NoOpRecord period; 0 disables.
    pub max_idle_interval_ms: u32,
    pub max_record_bytes_between_snapshots: u64,
    /// `metadata.log.max.snapshot.interval.ms`; 0 disables time-based snapshots.
    pub max_snapshot_interval_ms: u64,
    /// `internal.metadata.log.segment.bytes`: Kafka's test-only override that skips the 8 MiB floor.
    pub internal_segment_bytes: Option<u32>,
    /// `internal.metadata.max.batch.size.in.bytes` (8 MiB).
    pub internal_max_batch_size_bytes: u32,
    /// `internal.metadata.delete.delay.millis`: delay before deleting files marked deleted.
    pub internal_delete_delay_ms: i64,
}

impl MetadataLogConfig {
    pub fn effective_segment_bytes(&self) -> u32 {
        self.internal_segment_bytes.unwrap_or(self.segment_bytes)
    }
}

/// Broker-facing settings the controller state machine itself applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerSettings {
    /// `broker.session.timeout.ms`: a broker without heartbeats this long is fenced.
    pub broker_session_timeout_ms: u32,
    /// `broker.heartbeat.interval.ms`.
    pub broker_heartbeat_interval_ms: u32,
    /// `num.partitions`: partitions of a CreateTopics request that asks for the default.
    pub num_partitions: u32,
    /// `default.replication.factor`, likewise.
    pub default_replication_factor: u32,
    /// `delete.topic.enable`.
    pub delete_topic_enable: bool,
    /// `min.insync.replicas`: the cluster-wide default a new cluster's activation writes.
    pub min_insync_replicas: u32,
    /// `auto.leader.rebalance.enable`: the active controller moves leaderships back to
    /// preferred replicas.
    pub auto_leader_rebalance_enable: bool,
    /// `leader.imbalance.check.interval.seconds`: how often it looks.
    pub leader_imbalance_check_interval_seconds: u32,
    /// `authorizer.class.name` (only `StandardAuthorizer`) with `super.users` and
    /// `allow.everyone.if.no.acl.found`; `None`: no authorizer (ACL APIs are
    /// SECURITY_DISABLED, every request is allowed).
    pub authorizer: Option<AuthorizerConfig>,
    /// `delegation.token.secret.key`, `.max.lifetime.ms`, `.expiry.time.ms`,
    /// `.expiry.check.interval.ms`.
    pub delegation_tokens: crate::controller::tokens::decide::TokenSettings,
}

/// `authorizer.class.name`: empty or absent is no authorizer; kraftd implements only
/// `StandardAuthorizer` (the ACLs live in the metadata log it serves).
fn authorizer(r: &Reader<'_>) -> Result<Option<AuthorizerConfig>, ConfigError> {
    let class = r.raw("authorizer.class.name").map_or("", str::trim);
    if class.is_empty() {
        return Ok(None);
    }
    if class != STANDARD_AUTHORIZER {
        return Err(ConfigError::Unsupported(format!(
            "authorizer.class.name={class} is not supported: kraftd implements only \
             {STANDARD_AUTHORIZER} (set that, or remove the key for no authorizer)"
        )));
    }
    AuthorizerConfig::parse(
        r.raw("super.users"),
        r.raw("allow.everyone.if.no.acl.found"),
    )
    .map(Some)
    .map_err(ConfigError::from)
}

/// Looks up raw values and applies Kafka's defaults and validators.
pub(crate) struct Reader<'a>(pub(crate) &'a Properties);

impl Reader<'_> {
    pub(crate) fn raw(&self, key: &str) -> Option<&str> {
        self.0.get(key)
    }
    pub(crate) fn int(&self, key: &str, default: i32, min: i32) -> Result<i32, ConfigError> {
        self.raw(key)
            .map_or(Ok(default), |v| parse_int(key, v, min))
    }
    /// An INT whose validator is `atLeast(min >= 0)`, as u32.
    pub(crate) fn uint(&self, key: &str, default: u32, min: u32) -> Result<u32, ConfigError> {
        let min = i32::try_from(min).unwrap_or(i32::MAX);
        self.int(key, default as i32, min).map(|v| v as u32)
    }
    pub(crate) fn long(&self, key: &str, default: i64, min: i64) -> Result<i64, ConfigError> {
        self.raw(key)
            .map_or(Ok(default), |v| parse_long(key, v, min))
    }
    pub(crate) fn bool(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        self.raw(key).map_or(Ok(default), |v| parse_bool(key, v))
    }
    pub(crate) fn list(&self, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
        self.raw(key).map(|v| parse_list(key, v)).transpose()
    }
}

impl ControllerConfig {
    /// Reads `path` (Kafka's `.properties` format), applies `overrides` (they win) and validates.
    pub fn load(path: &Path, overrides: &[(String, String)]) -> Result<Self, ConfigError> {
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| ConfigError::Io {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        Self::parse_named(&shown, &properties::decode_bytes(&bytes), overrides)
    }

    /// Like [`Self::load`] for text already in memory (tests, embedded configs).
    pub fn parse(text: &str, overrides: &[(String, String)]) -> Result<Self, ConfigError> {
        Self::parse_named("<config>", text, overrides)
    }

    fn parse_named(
        name: &str,
        text: &str,
        overrides: &[(String, String)],
    ) -> Result<Self, ConfigError> {
        let props = Properties::parse(text).map_err(|source| ConfigError::Syntax {
            path: name.to_owned(),
            source,
        })?;
        Self::from_properties(&props, overrides)
    }

    /// Builds the configuration from parsed properties plus `--override` pairs.
    pub fn from_properties(
        props: &Properties,
        overrides: &[(String, String)],
    ) -> Result<Self, ConfigError> {
        let mut props = props.clone();
        for (k, v) in overrides {
            props.insert(k.clone(), v.clone());
        }
        let (ignored_keys, unknown_keys) = report_keys(&props);
        let r = Reader(&props);

        let node_id = match r.raw("node.id") {
            Some(v) => parse_int("node.id", v, 0)?,
            None => {
                return Err(ConfigError::missing(
                    "node.id",
                    "set node.id=<a non-negative integer unique in the cluster>",
                ))
            }
        };
        check_roles(&r)?;
        check_no_zookeeper_migration(&r)?;
        if let Some(v) = r.raw("broker.id") {
            let broker_id = parse_int("broker.id", v, i32::MIN)?;
            if broker_id != node_id {
                return Err(ConfigError::Inconsistent(format!(
                    "broker.id={broker_id} differs from node.id={node_id}: broker.id is the \
                     deprecated name of node.id; remove it or give it the same value"
                )));
            }
        }

        let listeners_defaulted = r.raw("listeners").is_none();
        let listeners = parse_endpoints(&r, "listeners", DEFAULT_LISTENERS)?;
        if listeners.is_empty() {
            return Err(ConfigError::missing(
                "listeners",
                "set listeners=CONTROLLER://host:port",
            ));
        }
        let controller_listener_names = match r.list("controller.listener.names")? {
            Some(names) if !names.is_empty() => names,
            _ => {
                return Err(ConfigError::missing(
                    "controller.listener.names",
                    "set it to the names of this node's listeners, e.g. controller.listener.names=CONTROLLER",
                ))
            }
        };
        check_controller_listeners(&listeners, &controller_listener_names, listeners_defaulted)?;
        let advertised_listeners = parse_endpoints(&r, "advertised.listeners", "")?;
        check_advertised(&advertised_listeners, &listeners)?;
        let listener_security_protocols =
            security_protocols(&r, &listeners, &controller_listener_names)?;
        for ep in listeners.iter().chain(&advertised_listeners) {
            check_protocol(&listener_security_protocols, &ep.listener_name)?;
        }
        let (tls, sasl, sasl_client) =
            listener_security(&r, &controller_listener_names, &listener_security_protocols)?;
        let connections =
            crate::server::limits::ConnectionSettings::read(&r, &controller_listener_names)?;

        let quorum = quorum_config(&r, node_id)?;
        let (log_dirs, metadata_log_dir) = log_dirs(&r)?;
        // Kafka 4.0 checks the segment size against the floor when it opens the log; kraftd
        // checks it here.
        let segment_min_bytes = r.uint("metadata.log.segment.min.bytes", 8 * 1024 * 1024, 12)?;
        let metadata_log = MetadataLogConfig {
            segment_bytes: r.uint("metadata.log.segment.bytes", 1 << 30, segment_min_bytes)?,
            segment_min_bytes,
            segment_ms: r.long("metadata.log.segment.ms", 7 * 24 * 3_600_000, i64::MIN)?,
            max_retention_bytes: r.long(
                "metadata.max.retention.bytes",
                100 * 1024 * 1024,
                i64::MIN,
            )?,
            max_retention_ms: r.long("metadata.max.retention.ms", 7 * 24 * 3_600_000, i64::MIN)?,
            max_idle_interval_ms: r.uint("metadata.max.idle.interval.ms", 500, 0)?,
            max_record_bytes_between_snapshots: r.long(
                "metadata.log.max.record.bytes.between.snapshots",
                20 * 1024 * 1024,
                1,
            )? as u64,
            max_snapshot_interval_ms: r.long(
                "metadata.log.max.snapshot.interval.ms",
                3_600_000,
                0,
            )? as u64,
            internal_segment_bytes: r
                .raw("internal.metadata.log.segment.bytes")
                .map(|v| parse_int("internal.metadata.log.segment.bytes", v, 1).map(|n| n as u32))
                .transpose()?,
            internal_max_batch_size_bytes: r.uint(
                "internal.metadata.max.batch.size.in.bytes",
                crate::protocol::records::MAX_BATCH_SIZE_BYTES as u32,
                1,
            )?,
            internal_delete_delay_ms: r.long(
                "internal.metadata.delete.delay.millis",
                60_000,
                i64::MIN,
            )?,
        };
        // Kafka has no validators on these; kraftd wants them positive to stay meaningful.
        let controller = ControllerSettings {
            broker_session_timeout_ms: r.uint("broker.session.timeout.ms", 9000, 1)?,
            broker_heartbeat_interval_ms: r.uint("broker.heartbeat.interval.ms", 2000, 1)?,
            num_partitions: r.uint("num.partitions", 1, 1)?,
            default_replication_factor: r.uint("default.replication.factor", 1, 1)?,
            delete_topic_enable: r.bool("delete.topic.enable", true)?,
            min_insync_replicas: r.uint("min.insync.replicas", 1, 1)?,
            auto_leader_rebalance_enable: r.bool("auto.leader.rebalance.enable", true)?,
            leader_imbalance_check_interval_seconds: r.uint(
                "leader.imbalance.check.interval.seconds",
                300,
                1,
            )?,
            authorizer: authorizer(&r)?,
            delegation_tokens: crate::controller::tokens::decide::TokenSettings {
                // Unset or empty: tokens are disabled.
                secret_key: r
                    .raw("delegation.token.secret.key")
                    .filter(|k| !k.is_empty())
                    .map(str::to_string),
                max_lifetime_ms: r.long(
                    "delegation.token.max.lifetime.ms",
                    crate::controller::tokens::decide::DEFAULT_MAX_LIFETIME_MS,
                    1,
                )?,
                expiry_time_ms: r.long(
                    "delegation.token.expiry.time.ms",
                    crate::controller::tokens::decide::DEFAULT_EXPIRY_TIME_MS,
                    1,
                )?,
                expiry_check_interval_ms: r.long(
                    "delegation.token.expiry.check.interval.ms",
                    crate::controller::tokens::decide::DEFAULT_EXPIRY_CHECK_INTERVAL_MS,
                    1,
                )?,
            },
        };
        Ok(ControllerConfig {
            node_id,
            listeners,
            advertised_listeners,
            controller_listener_names,
            listener_security_protocols,
            tls,
            sasl,
            sasl_client,
            connections,
            quorum,
            log_dirs,
            metadata_log_dir,
            socket_request_max_bytes: r.uint("socket.request.max.bytes", 104_857_600, 1)?,
            metadata_log,
            controller,
            ignored_keys,
            unknown_keys,
            originals: props
                .iter()
                .map(|(k, e)| (k.to_string(), e.value.clone()))
                .collect(),
        })
    }

    /// The default controller listener: the first of `controller.listener.names`. Raft traffic
    /// to other voters and the endpoint in `controller.quorum.voters` refer to it.
    pub fn default_listener_name(&self) -> &str {
        &self.controller_listener_names[0]
    }

    /// What this node tells others for each controller listener, in `controller.listener.names`
    /// order: the `advertised.listeners` entry of that name, else the `listeners` one. An empty
    /// host is left for the runtime to fill in (Kafka uses the machine's host name).
    pub fn advertised_controller_endpoints(&self) -> Vec<Endpoint> {
        self.controller_listener_names
            .iter()
            .filter_map(|name| {
                let find =
                    |eps: &[Endpoint]| eps.iter().find(|e| &e.listener_name == name).cloned();
                find(&self.advertised_listeners).or_else(|| find(&self.listeners))
            })
            .collect()
    }

    /// True for a static quorum (`controller.quorum.voters` set, kraft.version 0).
    pub fn is_static_quorum(&self) -> bool {
        !self.quorum.voters.is_empty()
    }
}

/// The TLS and SASL settings of every controller listener, and how outbound connections
/// authenticate (as the first controller listener's protocol says).
#[allow(clippy::type_complexity)]
fn listener_security(
    r: &Reader<'_>,
    names: &[String],
    protocols: &BTreeMap<String, SecurityProtocol>,
) -> Result<
    (
        BTreeMap<String, crate::server::tls::TlsSettings>,
        BTreeMap<String, crate::server::sasl::settings::ListenerSasl>,
        Option<crate::server::sasl::settings::ClientSasl>,
    ),
    ConfigError,
> {
    use crate::server::sasl::settings::{ClientSasl, ListenerSasl};
    let (mut tls, mut sasl) = (BTreeMap::new(), BTreeMap::new());
    for name in names {
        let Some(&protocol) = protocols.get(name) else {
            continue;
        };
        if matches!(protocol, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl) {
            let mut settings = crate::server::tls::TlsSettings::read(name, |k| r.raw(k))?;
            // Kafka asks SASL_SSL clients for certificates only when the listener's own
            // ssl.client.auth says so; a bare one applies to SSL listeners alone.
            let prefixed = format!(
                "{}ssl.client.auth",
                crate::server::tls::listener_prefix(name)
            );
            if protocol == SecurityProtocol::SaslSsl && r.raw(&prefixed).is_none() {
                settings.client_auth = crate::server::tls::ClientAuth::None;
            }
            tls.insert(name.clone(), settings);
        }
        if matches!(
            protocol,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        ) {
            sasl.insert(
                name.clone(),
                ListenerSasl::read(name, protocol, |k| r.raw(k))?,
            );
        }
    }
    let first = &names[0];
    let client = match protocols.get(first) {
        Some(SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl) => {
            Some(ClientSasl::read(first, |k| r.raw(k))?)
        }
        _ => None,
    };
    Ok((tls, sasl, client))
}

/// Classifies every key and logs unknown ones; returns (ignored, unknown) key lists.
fn report_keys(props: &Properties) -> (Vec<String>, Vec<String>) {
    let (mut ignored, mut unknown) = (Vec::new(), Vec::new());
    for (key, entry) in props.iter() {
        let origin = match entry.line {
            0 => "--override".to_owned(),
            n => format!("line {n}"),
        };
        match classify(key) {
            KeyKind::Used => {}
            KeyKind::KafkaIgnored => {
                tracing::debug!("{key} ({origin}) is a Kafka setting kraftd does not use; ignored");
                ignored.push(key.to_owned());
            }
            KeyKind::Unknown { suggestion } => {
                match suggestion {
                    Some(s) => tracing::warn!(
                        "unknown configuration key '{key}' ({origin}) ignored; did you mean '{s}'?"
                    ),
                    None => tracing::warn!("unknown configuration key '{key}' ({origin}) ignored"),
                }
                unknown.push(key.to_owned());
            }
        }
    }
    if !ignored.is_empty() {
        tracing::info!(
            "{} Kafka settings that kraftd does not use were ignored (listed at debug level)",
            ignored.len()
        );
    }
    (ignored, unknown)
}
