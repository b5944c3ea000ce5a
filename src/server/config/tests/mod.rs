//! ControllerConfig: every key's parsing, Kafka's defaults, overrides, errors, and the shipped
//! files under `config/`. Expected behaviour was checked against Kafka 4.4.0's KafkaConfig.

use super::*;

mod network;

pub(super) const BASE: &str = "process.roles=controller
node.id=1
listeners=CONTROLLER://127.0.0.1:9093
controller.listener.names=CONTROLLER
controller.quorum.bootstrap.servers=127.0.0.1:9093
log.dirs=/var/kraftd
";

pub(super) fn with(extra: &str) -> Result<ControllerConfig, ConfigError> {
    ControllerConfig::parse(&format!("{BASE}{extra}\n"), &[])
}

/// BASE with the line starting with `key=` removed.
pub(super) fn without(key: &str) -> String {
    BASE.lines()
        .filter(|l| !l.starts_with(&format!("{key}=")))
        .map(|l| format!("{l}\n"))
        .collect()
}

pub(super) fn err(text: &str) -> String {
    ControllerConfig::parse(text, &[]).unwrap_err().to_string()
}

pub(super) fn err_with(extra: &str) -> String {
    with(extra).unwrap_err().to_string()
}

fn ov(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn minimal_config_gets_kafka_defaults() {
    let c = with("").unwrap();
    assert_eq!(c.node_id, 1);
    assert_eq!(
        c.listeners,
        vec![Endpoint {
            listener_name: "CONTROLLER".into(),
            host: "127.0.0.1".into(),
            port: 9093
        }]
    );
    assert!(c.advertised_listeners.is_empty());
    assert_eq!(c.controller_listener_names, vec!["CONTROLLER"]);
    assert_eq!(c.default_listener_name(), "CONTROLLER");
    assert_eq!(c.log_dirs, vec![PathBuf::from("/var/kraftd")]);
    assert_eq!(c.metadata_log_dir, PathBuf::from("/var/kraftd"));
    assert_eq!(c.socket_request_max_bytes, 104_857_600);
    assert!(!c.is_static_quorum());
    let q = &c.quorum;
    assert_eq!(
        q.bootstrap_servers,
        vec![HostPort {
            host: "127.0.0.1".into(),
            port: 9093
        }]
    );
    assert_eq!(
        (
            q.election_timeout_ms,
            q.fetch_timeout_ms,
            q.election_backoff_max_ms,
            q.append_linger_ms
        ),
        (1000, 2000, 1000, 25)
    );
    assert_eq!((q.request_timeout_ms, q.retry_backoff_ms), (2000, 20));
    assert!(!q.auto_join_enable);
    assert_eq!(
        (q.fetch_max_bytes, q.fetch_snapshot_max_bytes),
        (1_048_576, 1_048_576)
    );
    let m = &c.metadata_log;
    assert_eq!(m.segment_bytes, 1_073_741_824);
    assert_eq!(m.segment_min_bytes, 8_388_608);
    assert_eq!(m.segment_ms, 604_800_000);
    assert_eq!(m.max_retention_bytes, 104_857_600);
    assert_eq!(m.max_retention_ms, 604_800_000);
    assert_eq!(m.max_idle_interval_ms, 500);
    assert_eq!(m.max_record_bytes_between_snapshots, 20_971_520);
    assert_eq!(m.max_snapshot_interval_ms, 3_600_000);
    assert_eq!(
        (m.internal_segment_bytes, m.internal_max_batch_size_bytes),
        (None, 8_388_608)
    );
    assert_eq!(m.internal_delete_delay_ms, 60_000);
    assert_eq!(m.effective_segment_bytes(), 1_073_741_824);
    let s = &c.controller;
    assert_eq!(
        (s.broker_session_timeout_ms, s.broker_heartbeat_interval_ms),
        (9000, 2000)
    );
    assert_eq!(
        (
            s.num_partitions,
            s.default_replication_factor,
            s.delete_topic_enable
        ),
        (1, 1, true)
    );
    // Kafka's default map, with the controller listener added as PLAINTEXT.
    let names: Vec<&str> = c
        .listener_security_protocols
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        names,
        [
            "CONTROLLER",
            "PLAINTEXT",
            "SASL_PLAINTEXT",
            "SASL_SSL",
            "SSL"
        ]
    );
    assert_eq!(
        c.listener_security_protocols["CONTROLLER"],
        SecurityProtocol::Plaintext
    );
    assert!(c.ignored_keys.is_empty() && c.unknown_keys.is_empty());
}

#[test]
fn every_numeric_key_parses_and_validates() {
    // (key, a valid value, what the field then holds, an invalid value)
    type Get = fn(&ControllerConfig) -> i64;
    let cases: &[(&str, &str, Get, &str)] = &[
        (
            "controller.quorum.election.timeout.ms",
            "0",
            |c| c.quorum.election_timeout_ms.into(),
            "-1",
        ),
        (
            "controller.quorum.fetch.timeout.ms",
            "5000",
            |c| c.quorum.fetch_timeout_ms.into(),
            "x",
        ),
        (
            "controller.quorum.election.backoff.max.ms",
            "7",
            |c| c.quorum.election_backoff_max_ms.into(),
            "-5",
        ),
        (
            "controller.quorum.append.linger.ms",
            "0",
            |c| c.quorum.append_linger_ms.into(),
            "1.5",
        ),
        (
            "controller.quorum.request.timeout.ms",
            "3000",
            |c| c.quorum.request_timeout_ms.into(),
            "",
        ),
        (
            "controller.quorum.retry.backoff.ms",
            "100",
            |c| c.quorum.retry_backoff_ms.into(),
            "2147483648",
        ),
        (
            "controller.quorum.fetch.max.bytes",
            "1",
            |c| c.quorum.fetch_max_bytes.into(),
            "0",
        ),
        (
            "controller.quorum.fetch.snapshot.max.bytes",
            "2",
            |c| c.quorum.fetch_snapshot_max_bytes.into(),
            "0",
        ),
        (
            "socket.request.max.bytes",
            "1000",
            |c| c.socket_request_max_bytes.into(),
            "0",
        ),
        (
            "metadata.log.segment.bytes",
            "8388608",
            |c| c.metadata_log.segment_bytes.into(),
            "8388607",
        ),
        (
            "metadata.log.segment.ms",
            "-1",
            |c| c.metadata_log.segment_ms,
            "1d",
        ),
        (
            "metadata.max.retention.bytes",
            "-1",
            |c| c.metadata_log.max_retention_bytes,
            "lots",
        ),
        (
            "metadata.max.retention.ms",
            "-1",
            |c| c.metadata_log.max_retention_ms,
            "9223372036854775808",
        ),
        (
            "metadata.max.idle.interval.ms",
            "0",
            |c| c.metadata_log.max_idle_interval_ms.into(),
            "-1",
        ),
        (
            "metadata.log.max.record.bytes.between.snapshots",
            "1",
            |c| c.metadata_log.max_record_bytes_between_snapshots as i64,
            "0",
        ),
        (
            "metadata.log.max.snapshot.interval.ms",
            "0",
            |c| c.metadata_log.max_snapshot_interval_ms as i64,
            "-1",
        ),
        (
            "internal.metadata.log.segment.bytes",
            "1024",
            |c| c.metadata_log.effective_segment_bytes().into(),
            "0",
        ),
        (
            "internal.metadata.max.batch.size.in.bytes",
            "4096",
            |c| c.metadata_log.internal_max_batch_size_bytes.into(),
            "0",
        ),
        (
            "internal.metadata.delete.delay.millis",
            "0",
            |c| c.metadata_log.internal_delete_delay_ms,
            "soon",
        ),
        (
            "broker.session.timeout.ms",
            "18000",
            |c| c.controller.broker_session_timeout_ms.into(),
            "0",
        ),
        (
            "broker.heartbeat.interval.ms",
            "500",
            |c| c.controller.broker_heartbeat_interval_ms.into(),
            "-1",
        ),
        (
            "num.partitions",
            "3",
            |c| c.controller.num_partitions.into(),
            "0",
        ),
        (
            "default.replication.factor",
            "3",
            |c| c.controller.default_replication_factor.into(),
            "0",
        ),
    ];
    for (key, good, get, bad) in cases {
        let c = with(&format!("{key}= {good} ")).unwrap_or_else(|e| panic!("{key}={good}: {e}"));
        assert_eq!(get(&c), good.parse::<i64>().unwrap(), "{key}");
        let m = err_with(&format!("{key}={bad}"));
        assert!(
            m.starts_with(&format!("invalid value '{bad}' for {key}: expected ")),
            "{m}"
        );
    }
}

#[test]
fn booleans() {
    let c = with("controller.quorum.auto.join.enable=TRUE\ndelete.topic.enable=false").unwrap();
    assert!(c.quorum.auto_join_enable);
    assert!(!c.controller.delete_topic_enable);
    assert_eq!(
        err_with("controller.quorum.auto.join.enable=yes"),
        "invalid value 'yes' for controller.quorum.auto.join.enable: expected true or false"
    );
}

#[test]
fn node_id() {
    assert_eq!(
        err(&without("node.id")),
        "missing required configuration node.id: set node.id=<a non-negative integer unique in the cluster>"
    );
    assert_eq!(
        err_with("node.id=abc"),
        "invalid value 'abc' for node.id: expected a non-negative integer"
    );
    assert!(err_with("node.id=-1").contains("expected a non-negative integer"));
    // broker.id is node.id's deprecated alias: allowed when equal.
    assert!(with("broker.id=1").is_ok());
    assert!(err_with("broker.id=2").starts_with("broker.id=2 differs from node.id=1"));
}

#[test]
fn a_zookeeper_migration_is_refused_at_start_up() {
    let m = err_with("zookeeper.metadata.migration.enable=true");
    assert!(
        m.starts_with("zookeeper.metadata.migration.enable=true: kraftd cannot take part in a ZooKeeper to KRaft migration")
            && m.contains("finish the migration with the Java controllers"),
        "{m}"
    );
    assert!(err_with("zookeeper.metadata.migration.enable=TRUE ").contains("cannot take part"));
    // A migrated 3.9 controller's config may keep the key, false, and its zookeeper.connect.
    assert!(with("zookeeper.metadata.migration.enable=false").is_ok());
    assert!(with("zookeeper.connect=zk:2181").is_ok());
    assert!(err_with("zookeeper.metadata.migration.enable=yes")
        .starts_with("invalid value 'yes' for zookeeper.metadata.migration.enable"));
}

#[test]
fn process_roles() {
    assert!(
        err(&without("process.roles")).starts_with("missing required configuration process.roles")
    );
    assert!(err_with("process.roles=").starts_with("missing required configuration process.roles"));
    assert!(with("process.roles= controller , controller").is_ok());
    let m = err_with("process.roles=broker,controller");
    assert!(
        m.contains("cannot co-locate a broker") && m.contains("set process.roles=controller"),
        "{m}"
    );
    assert!(err_with("process.roles=broker").contains("kraftd runs only the controller role"));
    assert!(err_with("process.roles=Controller")
        .starts_with("invalid value 'Controller' for process.roles"));
    assert!(err_with("process.roles=controller,").contains("without empty entries"));
}

#[test]
fn log_dirs() {
    let c = with("log.dirs= /a , ./b ").unwrap();
    assert_eq!(c.log_dirs, vec![PathBuf::from("/a"), PathBuf::from("./b")]);
    assert_eq!(c.metadata_log_dir, PathBuf::from("/a"));
    let c = with("metadata.log.dir=/meta").unwrap();
    assert_eq!(c.metadata_log_dir, PathBuf::from("/meta"));
    let base = without("log.dirs");
    let c = ControllerConfig::parse(&format!("{base}log.dir=/single"), &[]).unwrap();
    assert_eq!(c.log_dirs, vec![PathBuf::from("/single")]);
    let c =
        ControllerConfig::parse(&format!("{base}log.dir=/single\nlog.dirs=/x,/y"), &[]).unwrap();
    assert_eq!(
        c.log_dirs,
        vec![PathBuf::from("/x"), PathBuf::from("/y")],
        "log.dirs wins"
    );
    let c = ControllerConfig::parse(&base, &[]).unwrap();
    assert_eq!(
        c.log_dirs,
        vec![PathBuf::from("/tmp/kafka-logs")],
        "Kafka's default"
    );
    assert!(err_with("log.dirs=").starts_with("missing required configuration log.dirs"));
    assert!(err_with("log.dirs=/a,").contains("without empty entries"));
    assert!(
        err_with("metadata.log.dir=  ").contains("remove the line to use the first of log.dirs")
    );
}

#[test]
fn overrides_win_and_are_validated() {
    let o = ov(&[
        ("node.id", "7"),
        ("controller.quorum.voters", "7@h:1"),
        ("controller.quorum.append.linger.ms", "5"),
    ]);
    let c = ControllerConfig::parse(BASE, &o).unwrap();
    assert_eq!((c.node_id, c.quorum.append_linger_ms), (7, 5));
    assert_eq!(c.quorum.voters[0].id, 7);
    let m = ControllerConfig::parse(BASE, &ov(&[("node.id", "x")]))
        .unwrap_err()
        .to_string();
    assert_eq!(
        m,
        "invalid value 'x' for node.id: expected a non-negative integer"
    );
    let c = ControllerConfig::parse(BASE, &ov(&[("node.idd", "3")])).unwrap();
    assert_eq!(c.unknown_keys, vec!["node.idd"]);
}

#[test]
fn unknown_and_ignored_keys() {
    let c = with("node.idd=3\nlog.retention.hours=1\nlistener.name.controller.ssl.keystore.type=JKS\nfoo=bar").unwrap();
    assert_eq!(c.unknown_keys, vec!["foo", "node.idd"]);
    assert_eq!(
        c.ignored_keys,
        vec![
            "listener.name.controller.ssl.keystore.type",
            "log.retention.hours"
        ]
    );
}

#[test]
fn used_keys_match_what_the_builder_reads() {
    // Every key in USED_KEYS must change the outcome when given a bad value: proof it is read.
    // Paths and the token secret are free-form text, and log.dir loses to log.dirs, so those
    // are checked elsewhere.
    let free_form = [
        "log.dir",
        "log.dirs",
        "metadata.log.dir",
        "delegation.token.secret.key",
    ];
    let read = keys::USED_KEYS.iter().chain(keys::KAFKA_4_0_KEYS);
    for key in read.filter(|k| !free_form.contains(k)) {
        let r = with(&format!("{key}=\\u0000not valid"));
        assert!(
            r.is_err(),
            "{key} is listed as used but a bad value was accepted"
        );
    }
}

#[test]
fn syntax_and_io_errors() {
    let m = err("node.id=1\nbad=\\uZZZZ");
    assert_eq!(m, "<config>: line 2: malformed \\uXXXX escape '\\uZZZZ'");
    let m = ControllerConfig::load(Path::new("/nonexistent/server.properties"), &[])
        .unwrap_err()
        .to_string();
    assert!(
        m.starts_with("cannot read /nonexistent/server.properties: "),
        "{m}"
    );
}

#[test]
fn shipped_config_files_parse_and_validate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("config");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "properties") {
                files.push(path);
            }
        }
    }
    assert!(
        files.len() >= 4,
        "expected the single-node and three quorum files, found {files:?}"
    );
    for f in &files {
        let c = ControllerConfig::load(f, &[]).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(
            c.unknown_keys.is_empty(),
            "{}: unknown keys {:?}",
            f.display(),
            c.unknown_keys
        );
        assert!(
            c.metadata_log_dir.is_relative(),
            "{}: keep data dirs relative",
            f.display()
        );
    }
    let single = ControllerConfig::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("config/controller.properties"),
        &[],
    )
    .unwrap();
    assert_eq!(single.metadata_log_dir, PathBuf::from("./data/kraftd-1"));
    assert!(!single.is_static_quorum());
    for i in 1..=3 {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("config/quorum/controller-{i}.properties"));
        let c = ControllerConfig::load(&path, &[]).unwrap();
        assert_eq!(c.node_id, i);
        assert_eq!(c.quorum.voters.len(), 3);
        let me = c.quorum.voters.iter().find(|v| v.id == i).unwrap();
        assert_eq!(
            me.address.port, c.listeners[0].port,
            "node {i}'s voter entry is its own listener"
        );
    }
}

#[test]
fn delegation_tokens_need_a_non_empty_secret_key() {
    let c = with("").unwrap();
    assert_eq!(c.controller.delegation_tokens.secret_key, None);
    assert_eq!(c.controller.delegation_tokens.max_lifetime_ms, 604_800_000);
    assert_eq!(c.controller.delegation_tokens.expiry_time_ms, 86_400_000);
    assert_eq!(
        c.controller.delegation_tokens.expiry_check_interval_ms,
        3_600_000
    );
    let c = with("delegation.token.secret.key=").unwrap();
    assert_eq!(c.controller.delegation_tokens.secret_key, None);
    let c = with("delegation.token.secret.key=k3y\ndelegation.token.max.lifetime.ms=5\ndelegation.token.expiry.time.ms=3").unwrap();
    let t = &c.controller.delegation_tokens;
    assert_eq!(
        (t.secret_key.as_deref(), t.max_lifetime_ms, t.expiry_time_ms),
        (Some("k3y"), 5, 3)
    );
    assert!(
        !format!("{t:?}").contains("k3y"),
        "the secret is never printed"
    );
    assert!(with("delegation.token.max.lifetime.ms=0").is_err());
}

#[test]
fn the_token_sweep_interval_is_a_positive_long() {
    let c = with("delegation.token.expiry.check.interval.ms=1500").unwrap();
    assert_eq!(
        c.controller.delegation_tokens.expiry_check_interval_ms,
        1500
    );
    // Kafka's `atLeast(1)`.
    assert!(with("delegation.token.expiry.check.interval.ms=0").is_err());
    assert!(with("delegation.token.expiry.check.interval.ms=-5").is_err());
}

#[test]
fn a_kafka_4_0_controller_lowers_the_segment_floor_with_its_test_only_key() {
    // 4.0's way to 8 KiB segments (4.4's is internal.metadata.log.segment.bytes).
    let c = with("metadata.log.segment.bytes=8192\nmetadata.log.segment.min.bytes=8192").unwrap();
    let m = &c.metadata_log;
    assert_eq!((m.segment_bytes, m.segment_min_bytes), (8192, 8192));
    assert_eq!(m.effective_segment_bytes(), 8192);
    // Without it the floor is 8 MiB, as in both releases; below a lowered floor is refused too.
    let m = err_with("metadata.log.segment.bytes=8192");
    assert!(
        m.starts_with("invalid value '8192' for metadata.log.segment.bytes: expected "),
        "{m}"
    );
    let m = err_with("metadata.log.segment.bytes=4096\nmetadata.log.segment.min.bytes=8192");
    assert!(
        m.starts_with("invalid value '4096' for metadata.log.segment.bytes: expected "),
        "{m}"
    );
    // 4.0's own validator: at least a record batch header's 12 bytes.
    let m = err_with("metadata.log.segment.min.bytes=11");
    assert!(
        m.starts_with("invalid value '11' for metadata.log.segment.min.bytes: expected "),
        "{m}"
    );
    // kraftd does not warn about it as an unknown key.
    assert_eq!(
        keys::classify("metadata.log.segment.min.bytes"),
        keys::KeyKind::Used
    );
}
