//! Group configs as Kafka 4.4's `GroupConfig.validate` checks them on a controller: known names
//! (in the order of Java's `HashMap` of the group's configs), no duplicate rack-aware tags,
//! `ConfigDef.parse` of the definitions, then each value against the bounds the controller's
//! own group-coordinator and share-group configs set.

use std::collections::BTreeMap;
use std::fmt;

use crate::controller::describe_configs::table::{broker_config, BrokerDefault};
use crate::controller::java::{hash_map_capacity, hash_order, string_hash, trim};
use crate::controller::topic_configs::parse::{parse_value, Value};
use crate::controller::topic_configs::{ConfigError, ConfigType, TopicConfigDef, Validator};

const fn int(
    name: &'static str,
    default: &'static str,
    min: i64,
    synonym: &'static [(&'static str, i64)],
    internal: bool,
) -> TopicConfigDef {
    TopicConfigDef {
        name,
        ty: ConfigType::Int,
        default: Some(default),
        validator: Validator::Range {
            min: Some(min),
            max: None,
        },
        synonyms: synonym,
        internal,
    }
}

const fn boolean(
    name: &'static str,
    default: &'static str,
    synonym: &'static [(&'static str, i64)],
    internal: bool,
) -> TopicConfigDef {
    TopicConfigDef {
        name,
        ty: ConfigType::Boolean,
        default: Some(default),
        validator: Validator::None,
        synonyms: synonym,
        internal,
    }
}

const fn string(
    name: &'static str,
    default: Option<&'static str>,
    validator: Validator,
    synonym: &'static [(&'static str, i64)],
) -> TopicConfigDef {
    TopicConfigDef {
        name,
        ty: ConfigType::String,
        default,
        validator,
        synonyms: synonym,
        internal: false,
    }
}

const CONSUMER_SESSION: &str = "consumer.session.timeout.ms";
const CONSUMER_HEARTBEAT: &str = "consumer.heartbeat.interval.ms";
const SHARE_SESSION: &str = "share.session.timeout.ms";
const SHARE_HEARTBEAT: &str = "share.heartbeat.interval.ms";
const STREAMS_SESSION: &str = "streams.session.timeout.ms";
const STREAMS_HEARTBEAT: &str = "streams.heartbeat.interval.ms";
const RACK_TAGS: &str = "streams.rack.aware.assignment.tags";
const ASSIGNOR_NAME: &str = "streams.assignor.name";
const DLQ_TOPIC: &str = "errors.deadletterqueue.topic.name";

/// `GroupConfig.CONFIG_DEF`, in definition order (the order `ConfigDef.parse` checks them),
/// each with its broker synonym (`GroupConfig.brokerSynonym`).
pub const GROUP_CONFIG_DEFS: &[TopicConfigDef] = &[
    int(
        CONSUMER_SESSION,
        "45000",
        1,
        &[("group.consumer.session.timeout.ms", 1)],
        false,
    ),
    int(
        CONSUMER_HEARTBEAT,
        "5000",
        1,
        &[("group.consumer.heartbeat.interval.ms", 1)],
        false,
    ),
    int(
        "consumer.assignment.interval.ms",
        "1000",
        0,
        &[("group.consumer.assignment.interval.ms", 1)],
        false,
    ),
    boolean(
        "consumer.assignor.offload.enable",
        "true",
        &[("group.consumer.assignor.offload.enable", 1)],
        true,
    ),
    int(
        SHARE_SESSION,
        "45000",
        1,
        &[("group.share.session.timeout.ms", 1)],
        false,
    ),
    int(
        SHARE_HEARTBEAT,
        "5000",
        1,
        &[("group.share.heartbeat.interval.ms", 1)],
        false,
    ),
    int(
        "share.record.lock.duration.ms",
        "30000",
        1000,
        &[("group.share.record.lock.duration.ms", 1)],
        false,
    ),
    int(
        "share.delivery.count.limit",
        "5",
        2,
        &[("group.share.delivery.count.limit", 1)],
        false,
    ),
    int(
        "share.partition.max.record.locks",
        "2000",
        100,
        &[("group.share.partition.max.record.locks", 1)],
        false,
    ),
    string(
        "share.auto.offset.reset",
        Some("latest"),
        Validator::ShareAutoOffsetReset,
        &[],
    ),
    string(
        "share.isolation.level",
        Some("read_uncommitted"),
        Validator::ValidString(&["read_committed", "read_uncommitted"]),
        &[],
    ),
    boolean("share.renew.acknowledge.enable", "true", &[], false),
    int(
        "share.assignment.interval.ms",
        "1000",
        0,
        &[("group.share.assignment.interval.ms", 1)],
        false,
    ),
    boolean(
        "share.assignor.offload.enable",
        "true",
        &[("group.share.assignor.offload.enable", 1)],
        true,
    ),
    int(
        STREAMS_SESSION,
        "45000",
        1,
        &[("group.streams.session.timeout.ms", 1)],
        false,
    ),
    int(
        STREAMS_HEARTBEAT,
        "5000",
        1,
        &[("group.streams.heartbeat.interval.ms", 1)],
        false,
    ),
    int(
        "streams.num.standby.replicas",
        "0",
        0,
        &[("group.streams.num.standby.replicas", 1)],
        false,
    ),
    int(
        "streams.initial.rebalance.delay.ms",
        "3000",
        0,
        &[("group.streams.initial.rebalance.delay.ms", 1)],
        false,
    ),
    int(
        "streams.assignment.interval.ms",
        "1000",
        0,
        &[("group.streams.assignment.interval.ms", 1)],
        false,
    ),
    boolean(
        "streams.assignor.offload.enable",
        "true",
        &[("group.streams.assignor.offload.enable", 1)],
        true,
    ),
    int(
        "streams.task.offset.interval.ms",
        "60000",
        1,
        &[("group.streams.task.offset.interval.ms", 1)],
        true,
    ),
    int(
        "streams.num.warmup.replicas",
        "2",
        0,
        &[("group.streams.num.warmup.replicas", 1)],
        true,
    ),
    TopicConfigDef {
        name: RACK_TAGS,
        ty: ConfigType::List,
        default: Some(""),
        validator: Validator::ValidList {
            values: &[],
            empty_allowed: true,
            null_allowed: false,
        },
        synonyms: &[("group.streams.rack.aware.assignment.tags", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "streams.acceptable.recovery.lag",
        ty: ConfigType::Long,
        default: Some("10000"),
        validator: Validator::Range {
            min: Some(0),
            max: None,
        },
        synonyms: &[("group.streams.acceptable.recovery.lag", 1)],
        internal: true,
    },
    string(
        ASSIGNOR_NAME,
        None,
        Validator::None,
        &[("group.streams.assignors", 1)],
    ),
    string(DLQ_TOPIC, Some(""), Validator::None, &[]),
    boolean(
        "errors.deadletterqueue.copy.record.enable",
        "false",
        &[],
        false,
    ),
];

/// An int bound of the controller's own config (`GroupCoordinatorConfig`, `ShareGroupConfig`):
/// its property, whose default is Kafka's (the broker config table).
#[derive(Debug, Clone, Copy)]
struct Bound(&'static str);

/// What a group value must lie within, checked in `GroupConfig.validateValues`' order.
enum Limit {
    Range(&'static str, Bound, Bound),
    Max(&'static str, Bound),
    Min(&'static str, Bound),
}

const LIMITS: &[Limit] = &[
    Limit::Range(
        CONSUMER_HEARTBEAT,
        Bound("group.consumer.min.heartbeat.interval.ms"),
        Bound("group.consumer.max.heartbeat.interval.ms"),
    ),
    Limit::Range(
        CONSUMER_SESSION,
        Bound("group.consumer.min.session.timeout.ms"),
        Bound("group.consumer.max.session.timeout.ms"),
    ),
    Limit::Range(
        "consumer.assignment.interval.ms",
        Bound("group.consumer.min.assignment.interval.ms"),
        Bound("group.consumer.max.assignment.interval.ms"),
    ),
    Limit::Range(
        SHARE_HEARTBEAT,
        Bound("group.share.min.heartbeat.interval.ms"),
        Bound("group.share.max.heartbeat.interval.ms"),
    ),
    Limit::Range(
        SHARE_SESSION,
        Bound("group.share.min.session.timeout.ms"),
        Bound("group.share.max.session.timeout.ms"),
    ),
    Limit::Range(
        "share.record.lock.duration.ms",
        Bound("group.share.min.record.lock.duration.ms"),
        Bound("group.share.max.record.lock.duration.ms"),
    ),
    Limit::Range(
        "share.delivery.count.limit",
        Bound("group.share.min.delivery.count.limit"),
        Bound("group.share.max.delivery.count.limit"),
    ),
    Limit::Range(
        "share.partition.max.record.locks",
        Bound("group.share.min.partition.max.record.locks"),
        Bound("group.share.max.partition.max.record.locks"),
    ),
    Limit::Range(
        "share.assignment.interval.ms",
        Bound("group.share.min.assignment.interval.ms"),
        Bound("group.share.max.assignment.interval.ms"),
    ),
    Limit::Range(
        STREAMS_HEARTBEAT,
        Bound("group.streams.min.heartbeat.interval.ms"),
        Bound("group.streams.max.heartbeat.interval.ms"),
    ),
    Limit::Range(
        STREAMS_SESSION,
        Bound("group.streams.min.session.timeout.ms"),
        Bound("group.streams.max.session.timeout.ms"),
    ),
    Limit::Max(
        "streams.num.standby.replicas",
        Bound("group.streams.max.standby.replicas"),
    ),
    Limit::Range(
        "streams.assignment.interval.ms",
        Bound("group.streams.min.assignment.interval.ms"),
        Bound("group.streams.max.assignment.interval.ms"),
    ),
    Limit::Min(
        "streams.task.offset.interval.ms",
        Bound("group.streams.min.task.offset.interval.ms"),
    ),
    Limit::Max(
        "streams.num.warmup.replicas",
        Bound("group.streams.max.warmup.replicas"),
    ),
];

/// Each group type's session timeout and heartbeat interval with the controller's defaults for
/// them: a session must outlast a heartbeat.
const SESSION_HEARTBEAT: &[(&str, Bound, &str, Bound)] = &[
    (
        CONSUMER_SESSION,
        Bound("group.consumer.session.timeout.ms"),
        CONSUMER_HEARTBEAT,
        Bound("group.consumer.heartbeat.interval.ms"),
    ),
    (
        SHARE_SESSION,
        Bound("group.share.session.timeout.ms"),
        SHARE_HEARTBEAT,
        Bound("group.share.heartbeat.interval.ms"),
    ),
    (
        STREAMS_SESSION,
        Bound("group.streams.session.timeout.ms"),
        STREAMS_HEARTBEAT,
        Bound("group.streams.heartbeat.interval.ms"),
    ),
];

/// Why group configs are refused (`InvalidConfigurationException`, or `ConfigException` of a
/// value; both answer INVALID_CONFIG).
#[derive(Debug, Clone, PartialEq)]
pub enum GroupConfigError {
    UnknownName(String),
    DuplicateRackTags,
    Value(ConfigError),
    OutOfRange {
        name: &'static str,
        min: i32,
        max: i32,
    },
    AboveMax {
        name: &'static str,
        max: i32,
    },
    BelowMin {
        name: &'static str,
        min: i32,
    },
    UnknownAssignor {
        name: String,
        registered: Vec<String>,
    },
    SessionNotAboveHeartbeat {
        session: &'static str,
        heartbeat: &'static str,
    },
    InternalDeadLetterTopic,
}

impl fmt::Display for GroupConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupConfigError::UnknownName(n) => write!(f, "Unknown group config name: {n}"),
            GroupConfigError::DuplicateRackTags => {
                write!(f, "{RACK_TAGS} must not contain duplicate tag keys.")
            }
            GroupConfigError::Value(e) => write!(f, "{e}"),
            GroupConfigError::OutOfRange { name, min, max } => {
                write!(f, "{name} must be in the range {min} to {max} inclusive.")
            }
            GroupConfigError::AboveMax { name, max } => {
                write!(f, "{name} must be less than or equal to {max}")
            }
            GroupConfigError::BelowMin { name, min } => {
                write!(f, "{name} must be greater than or equal to {min}")
            }
            GroupConfigError::UnknownAssignor { name, registered } => write!(
                f,
                "{ASSIGNOR_NAME} '{name}' is not a registered task assignor. Registered \
                 assignors are: [{}].",
                registered.join(", ")
            ),
            GroupConfigError::SessionNotAboveHeartbeat { session, heartbeat } => {
                write!(f, "{session} must be greater than {heartbeat}")
            }
            GroupConfigError::InternalDeadLetterTopic => {
                write!(f, "{DLQ_TOPIC}: DLQ topic name must not start with '__'")
            }
        }
    }
}

/// The controller's group-coordinator and share-group configs that group configs are checked
/// against, read from its properties as written (`KafkaConfig.groupCoordinatorConfig`,
/// `.shareGroupConfig`); an absent or unparsable value is Kafka's default.
#[derive(Debug, Clone, Copy)]
pub struct GroupLimits<'a>(pub &'a BTreeMap<String, String>);

impl GroupLimits<'_> {
    fn get(&self, bound: Bound) -> i32 {
        let default = || match broker_config(bound.0).map(|d| d.default) {
            Some(BrokerDefault::Value(v)) => v.parse().ok(),
            _ => None,
        };
        self.0
            .get(bound.0)
            .and_then(|v| trim(v).parse().ok())
            .or_else(default)
            .unwrap_or_else(|| panic!("{} is an int config of Kafka's with a default", bound.0))
    }

    /// `streamsGroupAssignorNames`: the names of `group.streams.assignors` (Kafka's one
    /// built-in assignor is `sticky`; kraftd loads no assignor classes, so a listed class name
    /// stands for itself).
    fn streams_assignors(&self) -> Vec<String> {
        self.0
            .get("group.streams.assignors")
            .map(|v| {
                v.split(',')
                    .map(|s| trim(s).to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_else(|| vec!["sticky".to_string()])
    }
}

/// `GroupConfig.validate` of a group's configs after the change.
pub fn validate(
    configs: &[(String, String)],
    limits: GroupLimits<'_>,
) -> Result<(), GroupConfigError> {
    let ordered = hash_order(
        configs
            .iter()
            .map(|(k, _)| (string_hash(k), k.as_str()))
            .collect(),
        hash_map_capacity(configs.len()),
    );
    if let Some(unknown) = ordered
        .iter()
        .find(|k| !GROUP_CONFIG_DEFS.iter().any(|d| d.name == **k))
    {
        return Err(GroupConfigError::UnknownName(unknown.to_string()));
    }
    let given = |n: &str| {
        configs
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.as_str())
    };
    if let Some(tags) = given(RACK_TAGS) {
        if !trim(tags).is_empty() {
            let pieces = split_on_commas(tags);
            let mut distinct = pieces.clone();
            distinct.sort_unstable();
            distinct.dedup();
            if distinct.len() != pieces.len() {
                return Err(GroupConfigError::DuplicateRackTags);
            }
        }
    }
    let mut parsed: BTreeMap<&str, Value> = BTreeMap::new();
    for def in GROUP_CONFIG_DEFS {
        if let Some(raw) = given(def.name) {
            let value = parse_value(def, raw).map_err(GroupConfigError::Value)?;
            parsed.insert(def.name, value);
        }
    }
    let int = |name: &str| match parsed.get(name) {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    };
    for limit in LIMITS {
        match *limit {
            Limit::Range(name, min, max) => {
                let (min, max) = (limits.get(min), limits.get(max));
                if int(name).is_some_and(|v| v < min || v > max) {
                    return Err(GroupConfigError::OutOfRange { name, min, max });
                }
            }
            Limit::Max(name, max) => {
                let max = limits.get(max);
                if int(name).is_some_and(|v| v > max) {
                    return Err(GroupConfigError::AboveMax { name, max });
                }
            }
            Limit::Min(name, min) => {
                let min = limits.get(min);
                if int(name).is_some_and(|v| v < min) {
                    return Err(GroupConfigError::BelowMin { name, min });
                }
            }
        }
    }
    if let Some(Value::String(name)) = parsed.get(ASSIGNOR_NAME) {
        let registered = limits.streams_assignors();
        if !registered.contains(name) {
            return Err(GroupConfigError::UnknownAssignor {
                name: name.clone(),
                registered,
            });
        }
    }
    for &(session, session_default, heartbeat, heartbeat_default) in SESSION_HEARTBEAT {
        if int(session).is_none() && int(heartbeat).is_none() {
            continue;
        }
        let s = int(session).unwrap_or_else(|| limits.get(session_default));
        let h = int(heartbeat).unwrap_or_else(|| limits.get(heartbeat_default));
        if s <= h {
            return Err(GroupConfigError::SessionNotAboveHeartbeat { session, heartbeat });
        }
    }
    if let Some(Value::String(topic)) = parsed.get(DLQ_TOPIC) {
        if topic.starts_with("__") {
            return Err(GroupConfigError::InternalDeadLetterTopic);
        }
    }
    Ok(())
}

/// Java's `s.split("\\s*,\\s*", -1)`: every piece kept, the whitespace around each comma gone.
fn split_on_commas(s: &str) -> Vec<&str> {
    let java_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0B' | '\x0C' | '\r');
    let pieces: Vec<&str> = s.split(',').collect();
    let last = pieces.len() - 1;
    pieces
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let p = if i > 0 {
                p.trim_start_matches(java_space)
            } else {
                p
            };
            if i < last {
                p.trim_end_matches(java_space)
            } else {
                p
            }
        })
        .collect()
}

#[cfg(test)]
mod bound_defaults {
    use super::*;

    /// Every bound is a broker config with an int default, so `GroupLimits::get` always has one.
    #[test]
    fn every_bound_has_kafkas_int_default() {
        let empty = BTreeMap::new();
        let limits = GroupLimits(&empty);
        let mut bounds = Vec::new();
        for limit in LIMITS {
            match limit {
                Limit::Range(_, min, max) => bounds.extend([*min, *max]),
                Limit::Max(_, b) | Limit::Min(_, b) => bounds.push(*b),
            }
        }
        for (_, session, _, heartbeat) in SESSION_HEARTBEAT {
            bounds.extend([*session, *heartbeat]);
        }
        let defaults: Vec<(&str, i32)> = bounds.iter().map(|b| (b.0, limits.get(*b))).collect();
        assert!(defaults.contains(&("group.consumer.max.session.timeout.ms", 60000)));
        assert!(defaults.contains(&("group.share.min.partition.max.record.locks", 100)));
        assert_eq!(defaults.len(), 33);
    }
}
