//! What `KafkaConfigSchema` of a Kafka 4.4 controller knows of config types: the topic configs
//! (`LogConfig`) and the broker configs (`KafkaConfig.configDef`); no other resource type has
//! a schema there, so nothing else is a list or has a default.

use crate::controller::configs::{BROKER_RESOURCE, TOPIC_RESOURCE};
use crate::controller::topic_configs::{topic_config_def, ConfigType};

/// Every broker config of type LIST in `KafkaConfig.configDef` of the 4.4.0 jars, with
/// `ConfigDef.convertToString` of its default (`None`: no default, or null). Sorted by name.
pub const BROKER_LIST_CONFIGS: &[(&str, Option<&str>)] = &[
    ("advertised.listeners", None),
    ("config.providers", Some("")),
    ("controller.listener.names", None),
    ("controller.quorum.bootstrap.servers", Some("")),
    ("controller.quorum.voters", Some("")),
    ("cordoned.log.dirs", Some("")),
    ("early.start.listeners", None),
    ("group.consumer.assignors", Some("uniform,range")),
    (
        "group.coordinator.rebalance.protocols",
        Some("classic,consumer,streams"),
    ),
    ("group.share.assignors", Some("simple")),
    ("group.streams.assignors", Some("sticky")),
    ("group.streams.rack.aware.assignment.tags", Some("")),
    ("kafka.metrics.reporters", Some("")),
    ("listeners", Some("PLAINTEXT://:9092")),
    ("log.cleanup.policy", Some("delete")),
    ("log.dir", Some("/tmp/kafka-logs")),
    ("log.dirs", None),
    (
        "metric.reporters",
        Some("org.apache.kafka.common.metrics.JmxReporter"),
    ),
    ("process.roles", None),
    ("sasl.enabled.mechanisms", Some("GSSAPI")),
    ("sasl.kerberos.principal.to.local.rules", Some("DEFAULT")),
    ("sasl.oauthbearer.expected.audience", Some("")),
    ("ssl.cipher.suites", Some("")),
    ("ssl.enabled.protocols", Some("TLSv1.2,TLSv1.3")),
];

fn broker_list(key: &str) -> Option<Option<&'static str>> {
    BROKER_LIST_CONFIGS
        .binary_search_by(|(n, _)| n.cmp(&key))
        .ok()
        .map(|i| BROKER_LIST_CONFIGS[i].1)
}

/// `KafkaConfigSchema.isSplittable`: whether `key` is a LIST config of resource type `kind`.
pub fn is_list(kind: i8, key: &str) -> bool {
    match kind {
        TOPIC_RESOURCE => topic_config_def(key).is_some_and(|d| d.ty == ConfigType::List),
        BROKER_RESOURCE => broker_list(key).is_some(),
        _ => false,
    }
}

/// `KafkaConfigSchema.getDefault` for a LIST config (the only ones APPEND and SUBTRACT read).
pub fn default_value(kind: i8, key: &str) -> Option<&'static str> {
    match kind {
        TOPIC_RESOURCE => topic_config_def(key).and_then(|d| d.default),
        BROKER_RESOURCE => broker_list(key).flatten(),
        _ => None,
    }
}
