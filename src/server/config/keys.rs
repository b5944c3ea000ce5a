//! Which keys kraftd reads, which ones Kafka knows but kraftd ignores, and which are unknown
//! (probably typos). Operators often share one file between brokers and controllers, so
//! Kafka's own keys are accepted quietly; anything else gets a warning with a suggestion.

/// Every key `ControllerConfig` reads. Keep in sync with `mod.rs` (a test checks it).
pub const USED_KEYS: &[&str] = &[
    "advertised.listeners",
    "authorizer.class.name",
    "broker.heartbeat.interval.ms",
    "broker.id",
    "broker.session.timeout.ms",
    "controller.listener.names",
    "controller.quorum.append.linger.ms",
    "controller.quorum.auto.join.enable",
    "controller.quorum.bootstrap.servers",
    "controller.quorum.election.backoff.max.ms",
    "controller.quorum.election.timeout.ms",
    "controller.quorum.fetch.max.bytes",
    "controller.quorum.fetch.snapshot.max.bytes",
    "controller.quorum.fetch.timeout.ms",
    "controller.quorum.request.timeout.ms",
    "controller.quorum.retry.backoff.ms",
    "controller.quorum.voters",
    "default.replication.factor",
    "delegation.token.expiry.check.interval.ms",
    "delegation.token.expiry.time.ms",
    "delegation.token.max.lifetime.ms",
    "delegation.token.secret.key",
    "delete.topic.enable",
    "internal.metadata.delete.delay.millis",
    "internal.metadata.log.segment.bytes",
    "internal.metadata.max.batch.size.in.bytes",
    "listener.security.protocol.map",
    "listeners",
    "log.dir",
    "log.dirs",
    "metadata.log.dir",
    "metadata.log.max.record.bytes.between.snapshots",
    "metadata.log.max.snapshot.interval.ms",
    "metadata.log.segment.bytes",
    "metadata.log.segment.ms",
    "metadata.max.idle.interval.ms",
    "metadata.max.retention.bytes",
    "metadata.max.retention.ms",
    "min.insync.replicas",
    "node.id",
    "num.partitions",
    "process.roles",
    "socket.request.max.bytes",
];

/// Keys of Kafka 4.0 that 4.4 dropped and `ControllerConfig` still reads, so that kraftd can
/// start from a Java 4.0 controller's `server.properties`.
pub const KAFKA_4_0_KEYS: &[&str] = &["metadata.log.segment.min.bytes"];

/// `StandardAuthorizer`'s own keys (read with `authorizer.class.name`; not `KafkaConfig` keys).
pub const AUTHORIZER_KEYS: &[&str] = &["super.users", "allow.everyone.if.no.acl.found"];

use crate::controller::describe_configs::table::broker_configs;

/// How kraftd treats a key it found in the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyKind {
    /// Read by `ControllerConfig`.
    Used,
    /// A Kafka key kraftd has no use for (broker settings, SSL, ...): logged at debug.
    KafkaIgnored,
    /// Not a Kafka 4.4 key: warned about, with the closest known key if one is near.
    Unknown { suggestion: Option<&'static str> },
}

/// All server keys of Kafka 4.4.0 (`KafkaConfig.configDef`).
fn kafka_keys() -> impl Iterator<Item = &'static str> {
    broker_configs()
        .iter()
        .filter(|d| d.in_kafka_config)
        .map(|d| d.name)
}

pub fn classify(key: &str) -> KeyKind {
    if USED_KEYS.contains(&key)
        || KAFKA_4_0_KEYS.contains(&key)
        || AUTHORIZER_KEYS.contains(&key)
        || crate::server::tls::TLS_KEYS.contains(&key)
        || crate::server::sasl::settings::SASL_KEYS.contains(&key)
        || crate::server::limits::LIMIT_KEYS.contains(&key)
        || crate::server::http::HTTP_KEYS.contains(&key)
    {
        KeyKind::Used
    } else if kafka_keys().any(|k| k == key) || key.starts_with("listener.name.") {
        // `listener.name.<listener>.<setting>` is Kafka's per-listener override family.
        KeyKind::KafkaIgnored
    } else {
        KeyKind::Unknown {
            suggestion: suggest(key),
        }
    }
}

/// The known key closest to `key` by edit distance, if it is within 2 edits.
fn suggest(key: &str) -> Option<&'static str> {
    USED_KEYS
        .iter()
        .copied()
        .chain(kafka_keys())
        .map(|k| (edit_distance(key, k, 3), k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance, giving up (returning `cap`) once every path exceeds `cap`.
fn edit_distance(a: &str, b: &str, cap: usize) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) >= cap {
        return cap;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        if cur.iter().all(|&d| d >= cap) {
            return cap;
        }
        prev = cur;
    }
    prev[b.len()].min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn used_keys_are_kafka_keys() {
        // kraftd invents no key names: everything it reads is a Kafka 4.4 key.
        for k in USED_KEYS {
            assert!(kafka_keys().any(|x| x == *k), "{k} is not a Kafka 4.4 key");
        }
        assert!(
            USED_KEYS.windows(2).all(|w| w[0] < w[1]),
            "keep USED_KEYS sorted"
        );
        // ... but for a few of Kafka 4.0's that 4.4 no longer has.
        for k in KAFKA_4_0_KEYS {
            assert!(!kafka_keys().any(|x| x == *k), "{k} is a Kafka 4.4 key");
            assert_eq!(classify(k), KeyKind::Used);
        }
    }

    #[test]
    fn classification() {
        assert_eq!(classify("node.id"), KeyKind::Used);
        assert_eq!(classify("log.retention.hours"), KeyKind::KafkaIgnored);
        assert_eq!(classify("ssl.keystore.location"), KeyKind::Used);
        assert_eq!(classify("ssl.keymanager.algorithm"), KeyKind::KafkaIgnored);
        // The per-listener family is matched as a family (a listener's name is free).
        assert_eq!(
            classify("listener.name.controller.ssl.keystore.location"),
            KeyKind::KafkaIgnored
        );
        assert_eq!(classify("authorizer.class.name"), KeyKind::Used);
        assert_eq!(classify("super.users"), KeyKind::Used);
        assert_eq!(
            classify("node.idd"),
            KeyKind::Unknown {
                suggestion: Some("node.id")
            }
        );
        assert_eq!(
            classify("controller.quorum.voter"),
            KeyKind::Unknown {
                suggestion: Some("controller.quorum.voters")
            }
        );
        assert_eq!(
            classify("completely.made.up"),
            KeyKind::Unknown { suggestion: None }
        );
        assert_eq!(
            classify("cluster.id"),
            KeyKind::Unknown { suggestion: None }
        );
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("kitten", "sitting", 9), 3);
        assert_eq!(edit_distance("abc", "abc", 3), 0);
        assert_eq!(edit_distance("", "abcdef", 3), 3);
        assert_eq!(edit_distance("node.idd", "node.id", 3), 1);
    }
}
