//! Kafka's cross-key rules for a controller (roles, listeners and their protocols, the quorum,
//! log directories), with kraftd's own limits on top. Each check returns the first problem.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::address::{self, Endpoint, SecurityProtocol};
use super::values::{parse_list, trim_java};
use super::{ConfigError, QuorumConfig, Reader, DEFAULT_LOG_DIR};

pub(super) fn check_roles(r: &Reader<'_>) -> Result<(), ConfigError> {
    const HINT: &str = "set process.roles=controller";
    let raw = r.raw("process.roles").map(trim_java).unwrap_or_default();
    let roles = r.list("process.roles")?.unwrap_or_default();
    if roles.is_empty() {
        return Err(ConfigError::missing("process.roles", HINT));
    }
    if let Some(bad) = roles.iter().find(|x| *x != "broker" && *x != "controller") {
        return Err(ConfigError::invalid(
            "process.roles",
            raw,
            format!("a list of the roles broker and controller (lower case); '{bad}' is not one"),
        ));
    }
    let broker = roles.iter().any(|x| x == "broker");
    if !roles.iter().any(|x| x == "controller") {
        return Err(ConfigError::Unsupported(format!(
            "process.roles={raw}: kraftd runs only the controller role; {HINT} and run brokers with Java Kafka"
        )));
    }
    if broker {
        return Err(ConfigError::Unsupported(format!(
            "process.roles={raw}: kraftd cannot co-locate a broker with the controller; {HINT} \
             and run the broker as a separate Java Kafka process"
        )));
    }
    Ok(())
}

/// `zookeeper.metadata.migration.enable=true` marks a controller of a ZooKeeper-to-KRaft
/// migration. Kafka 4.x has no migration (a 4.4 controller starts with the key set and ignores
/// it, without a word); kraftd joins a quorum only once the migration is over, so it says so
/// rather than start as if it took part. `false`, as a migrated 3.9 config may still say, is fine.
pub(super) fn check_no_zookeeper_migration(r: &Reader<'_>) -> Result<(), ConfigError> {
    const KEY: &str = "zookeeper.metadata.migration.enable";
    if r.bool(KEY, false)? {
        return Err(ConfigError::Unsupported(format!(
            "{KEY}=true: kraftd cannot take part in a ZooKeeper to KRaft migration (Kafka 4.x has \
             none either); finish the migration with the Java controllers of its release, then \
             remove {KEY} (or set it to false) and start kraftd in their place"
        )));
    }
    Ok(())
}

pub(super) fn parse_endpoints(
    r: &Reader<'_>,
    key: &str,
    default: &str,
) -> Result<Vec<Endpoint>, ConfigError> {
    let items = parse_list(key, r.raw(key).unwrap_or(default))?;
    let eps = items
        .iter()
        .map(|e| address::parse_endpoint(key, e))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, a) in eps.iter().enumerate() {
        for b in &eps[..i] {
            if a.listener_name == b.listener_name {
                return Err(ConfigError::Inconsistent(format!(
                    "{key} names listener {} twice ({b} and {a}): each listener needs its own name",
                    a.listener_name
                )));
            }
            if key == "listeners"
                && a.port == b.port
                && a.port != 0
                && !address::ports_may_be_shared(a, b)
            {
                return Err(ConfigError::Inconsistent(format!(
                    "{key}: {b} and {a} use the same port {}: give each listener its own port",
                    a.port
                )));
            }
        }
    }
    Ok(eps)
}

/// Kafka's rules for `process.roles=controller`: every controller listener name is a listener,
/// and every listener is a controller listener.
pub(super) fn check_controller_listeners(
    listeners: &[Endpoint],
    names: &[String],
    defaulted: bool,
) -> Result<(), ConfigError> {
    let shown: Vec<String> = listeners.iter().map(ToString::to_string).collect();
    let shown = shown.join(",");
    let default_hint = if defaulted {
        " (listeners is unset, so Kafka's default PLAINTEXT://:9092 applies; set listeners=CONTROLLER://host:port)"
    } else {
        ""
    };
    for name in names {
        if listeners.iter().any(|l| &l.listener_name == name) {
            continue;
        }
        if let Some(l) = listeners
            .iter()
            .find(|l| l.listener_name.eq_ignore_ascii_case(name))
        {
            return Err(ConfigError::Inconsistent(format!(
                "controller.listener.names contains {name}, but Kafka upper-cases the names in listeners \
                 (so {} is named {}) and matches this list exactly: write {} here",
                l, l.listener_name, l.listener_name
            )));
        }
        return Err(ConfigError::Inconsistent(format!(
            "controller.listener.names contains {name}, which is not a listener in listeners={shown}; \
             add a {name}://host:port listener or remove {name}{default_hint}"
        )));
    }
    if let Some(extra) = listeners.iter().find(|l| !names.contains(&l.listener_name)) {
        return Err(ConfigError::Inconsistent(format!(
            "listeners contains {extra}, but {} is not in controller.listener.names={}: a controller-only \
             node has only controller listeners{default_hint}",
            extra.listener_name,
            names.join(",")
        )));
    }
    Ok(())
}

pub(super) fn check_advertised(
    advertised: &[Endpoint],
    listeners: &[Endpoint],
) -> Result<(), ConfigError> {
    for ep in advertised {
        if ep.host == "0.0.0.0" || ep.host == "::" {
            return Err(ConfigError::invalid(
                "advertised.listeners",
                &ep.to_string(),
                "a routable host: others cannot connect to 0.0.0.0 or ::; use this node's host name or IP",
            ));
        }
        if !listeners
            .iter()
            .any(|l| l.listener_name == ep.listener_name)
        {
            // Kafka accepts this too; it has no effect on a controller.
            tracing::warn!(
                "advertised.listeners entry {ep} names no listener in listeners; it has no effect"
            );
        }
    }
    Ok(())
}

/// The effective protocol map. When the key is unset Kafka starts from its default map and, unless
/// an SSL or SASL listener is in play, maps every controller listener name to PLAINTEXT.
pub(super) fn security_protocols(
    r: &Reader<'_>,
    listeners: &[Endpoint],
    controller_names: &[String],
) -> Result<BTreeMap<String, SecurityProtocol>, ConfigError> {
    const KEY: &str = "listener.security.protocol.map";
    if let Some(v) = r.raw(KEY) {
        return address::parse_protocol_map(KEY, v);
    }
    let mut map: BTreeMap<String, SecurityProtocol> = SecurityProtocol::ALL
        .iter()
        .map(|p| (p.name().to_owned(), *p))
        .collect();
    let secure = |n: &str| matches!(n, "SSL" | "SASL_SSL" | "SASL_PLAINTEXT");
    let any_secure = controller_names.iter().any(|n| secure(n))
        || listeners.iter().any(|l| secure(&l.listener_name));
    if !any_secure {
        for name in controller_names {
            map.entry(name.clone())
                .or_insert(SecurityProtocol::Plaintext);
        }
    }
    Ok(map)
}

pub(super) fn check_protocol(
    map: &BTreeMap<String, SecurityProtocol>,
    name: &str,
) -> Result<(), ConfigError> {
    match map.get(name) {
        None => Err(ConfigError::Inconsistent(format!(
            "listener {name} has no security protocol: add {name}:PLAINTEXT to listener.security.protocol.map"
        ))),
        Some(_) => Ok(()),
    }
}

pub(super) fn quorum_config(r: &Reader<'_>, node_id: i32) -> Result<QuorumConfig, ConfigError> {
    const VOTERS: &str = "controller.quorum.voters";
    const BOOTSTRAP: &str = "controller.quorum.bootstrap.servers";
    let voters = r.list(VOTERS)?.unwrap_or_default();
    let voters = voters
        .iter()
        .map(|v| address::parse_voter(VOTERS, v))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, v) in voters.iter().enumerate() {
        if let Some(dup) = voters[..i].iter().find(|d| d.id == v.id) {
            return Err(ConfigError::Inconsistent(format!(
                "{VOTERS} lists voter {} twice ({dup} and {v}): each voter id must appear once",
                v.id
            )));
        }
    }
    let bootstrap = r.list(BOOTSTRAP)?.unwrap_or_default();
    let bootstrap_servers = bootstrap
        .iter()
        .map(|b| address::parse_host_port(BOOTSTRAP, b, "localhost:9093"))
        .collect::<Result<Vec<_>, _>>()?;
    if voters.is_empty() && bootstrap_servers.is_empty() {
        return Err(ConfigError::missing(
            "controller.quorum.bootstrap.servers or controller.quorum.voters",
            "set controller.quorum.bootstrap.servers=host:port,... (dynamic quorum) or \
             controller.quorum.voters=id@host:port,... (static quorum)",
        ));
    }
    if !voters.is_empty() && !voters.iter().any(|v| v.id == node_id) {
        let list: Vec<String> = voters.iter().map(ToString::to_string).collect();
        return Err(ConfigError::Inconsistent(format!(
            "node.id={node_id} is not in {VOTERS}={}: a controller of a static quorum must be one of \
             its voters; add {node_id}@host:port, or use {BOOTSTRAP} for a dynamic quorum",
            list.join(",")
        )));
    }
    Ok(QuorumConfig {
        voters,
        bootstrap_servers,
        election_timeout_ms: r.uint("controller.quorum.election.timeout.ms", 1000, 0)?,
        fetch_timeout_ms: r.uint("controller.quorum.fetch.timeout.ms", 2000, 0)?,
        election_backoff_max_ms: r.uint("controller.quorum.election.backoff.max.ms", 1000, 0)?,
        append_linger_ms: r.uint("controller.quorum.append.linger.ms", 25, 0)?,
        request_timeout_ms: r.uint("controller.quorum.request.timeout.ms", 2000, 0)?,
        retry_backoff_ms: r.uint("controller.quorum.retry.backoff.ms", 20, 0)?,
        auto_join_enable: r.bool("controller.quorum.auto.join.enable", false)?,
        fetch_max_bytes: r.uint("controller.quorum.fetch.max.bytes", 1024 * 1024, 1)?,
        fetch_snapshot_max_bytes: r.uint(
            "controller.quorum.fetch.snapshot.max.bytes",
            1024 * 1024,
            1,
        )?,
    })
}

/// `log.dirs` wins over `log.dir`; `metadata.log.dir` defaults to the first log dir.
pub(super) fn log_dirs(r: &Reader<'_>) -> Result<(Vec<PathBuf>, PathBuf), ConfigError> {
    let key = if r.raw("log.dirs").is_some() {
        "log.dirs"
    } else {
        "log.dir"
    };
    let dirs = parse_list(key, r.raw(key).unwrap_or(DEFAULT_LOG_DIR))?;
    if dirs.is_empty() {
        return Err(ConfigError::missing(
            key,
            format!("set {key}=<directory>[,<directory>...]"),
        ));
    }
    if r.raw("log.dirs").is_none()
        && r.raw("log.dir").is_none()
        && r.raw("metadata.log.dir").is_none()
    {
        tracing::warn!("neither log.dirs nor metadata.log.dir is set: the metadata log goes to Kafka's default {DEFAULT_LOG_DIR}, which may not survive a reboot");
    }
    let log_dirs: Vec<PathBuf> = dirs.into_iter().map(PathBuf::from).collect();
    let metadata_log_dir = match r.raw("metadata.log.dir").map(trim_java) {
        Some("") => {
            return Err(ConfigError::invalid(
                "metadata.log.dir",
                "",
                "a directory path (remove the line to use the first of log.dirs)",
            ))
        }
        Some(dir) => PathBuf::from(dir),
        None => log_dirs[0].clone(),
    };
    Ok((log_dirs, metadata_log_dir))
}
