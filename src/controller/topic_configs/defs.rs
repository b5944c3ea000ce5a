//! Kafka 4.4's topic config definitions (`LogConfig.configDefCopy()`), in definition order, with
//! the broker configs that stand in for each (`ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS`,
//! each with the factor its converter multiplies by). Written from what
//! `compat/java/TopicConfigProbe.java table` prints for the 4.4.0 jars; the compat test
//! `topics::config_table` checks that [`render_table`] still prints the same.

use super::ConfigType;

/// How Kafka checks a parsed value (`ConfigDef.Validator`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Validator {
    None,
    /// `ConfigDef.Range`: inclusive bounds, compared as doubles.
    Range {
        min: Option<i64>,
        max: Option<i64>,
    },
    /// `ConfigDef.ValidString`: one of these, case-sensitive.
    ValidString(&'static [&'static str]),
    /// `ConfigDef.ValidList`.
    ValidList {
        values: &'static [&'static str],
        empty_allowed: bool,
        null_allowed: bool,
    },
    /// The `LambdaValidator` of `compression.gzip.level`: 1 to 9, or -1.
    GzipLevel,
    /// `ThrottledReplicaListValidator`: `*`, or `partition:broker` pairs.
    ThrottledReplicas,
    /// `ShareGroupAutoOffsetResetStrategy.Validator` of the group config
    /// `share.auto.offset.reset`: `earliest`, `latest`, or `by_duration:` and a non-negative
    /// ISO-8601 duration.
    ShareAutoOffsetReset,
}

/// One topic config.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopicConfigDef {
    pub name: &'static str,
    pub ty: ConfigType,
    /// `ConfigDef.convertToString` of the default; `None` for a null default.
    pub default: Option<&'static str>,
    pub validator: Validator,
    /// Broker configs that give this one its value when a topic does not set it, in the order
    /// Kafka looks, with the factor to milliseconds (1: the value as it is).
    pub synonyms: &'static [(&'static str, i64)],
    pub internal: bool,
}

/// Every topic config, in Kafka's definition order (the order `ConfigDef.parse` checks them).
pub const TOPIC_CONFIG_DEFS: &[TopicConfigDef] = &[
    TopicConfigDef {
        name: "segment.bytes",
        ty: ConfigType::Int,
        default: Some("1073741824"),
        validator: Validator::Range {
            min: Some(1048576),
            max: None,
        },
        synonyms: &[("log.segment.bytes", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "segment.ms",
        ty: ConfigType::Long,
        default: Some("604800000"),
        validator: Validator::Range {
            min: Some(1),
            max: None,
        },
        synonyms: &[("log.roll.ms", 1), ("log.roll.hours", 3600000)],
        internal: false,
    },
    TopicConfigDef {
        name: "segment.jitter.ms",
        ty: ConfigType::Long,
        default: Some("0"),
        validator: Validator::Range {
            min: Some(0),
            max: None,
        },
        synonyms: &[
            ("log.roll.jitter.ms", 1),
            ("log.roll.jitter.hours", 3600000),
        ],
        internal: false,
    },
    TopicConfigDef {
        name: "segment.index.bytes",
        ty: ConfigType::Int,
        default: Some("10485760"),
        validator: Validator::Range {
            min: Some(4),
            max: None,
        },
        synonyms: &[("log.index.size.max.bytes", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "flush.messages",
        ty: ConfigType::Long,
        default: Some("9223372036854775807"),
        validator: Validator::Range {
            min: Some(1),
            max: None,
        },
        synonyms: &[("log.flush.interval.messages", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "flush.ms",
        ty: ConfigType::Long,
        default: Some("9223372036854775807"),
        validator: Validator::Range {
            min: Some(0),
            max: None,
        },
        synonyms: &[
            ("log.flush.interval.ms", 1),
            ("log.flush.scheduler.interval.ms", 1),
        ],
        internal: false,
    },
    TopicConfigDef {
        name: "retention.bytes",
        ty: ConfigType::Long,
        default: Some("-1"),
        validator: Validator::None,
        synonyms: &[("log.retention.bytes", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "retention.ms",
        ty: ConfigType::Long,
        default: Some("604800000"),
        validator: Validator::Range {
            min: Some(-1),
            max: None,
        },
        synonyms: &[
            ("log.retention.ms", 1),
            ("log.retention.minutes", 60000),
            ("log.retention.hours", 3600000),
        ],
        internal: false,
    },
    TopicConfigDef {
        name: "max.message.bytes",
        ty: ConfigType::Int,
        default: Some("1048588"),
        validator: Validator::Range {
            min: Some(0),
            max: None,
        },
        synonyms: &[("message.max.bytes", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "max.decompressed.message.bytes",
        ty: ConfigType::Int,
        default: Some("2147483639"),
        validator: Validator::Range {
            min: Some(1),
            max: Some(2147483639),
        },
        synonyms: &[("max.decompressed.message.bytes", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "index.interval.bytes",
        ty: ConfigType::Int,
        default: Some("4096"),
        validator: Validator::Range {
            min: Some(0),
            max: None,
        },
        synonyms: &[("log.index.interval.bytes", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "delete.retention.ms",
        ty: ConfigType::Long,
        default: Some("86400000"),
        validator: Validator::Range {
            min: Some(0),
            max: None,
        },
        synonyms: &[("log.cleaner.delete.retention.ms", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "min.compaction.lag.ms",
        ty: ConfigType::Long,
        default: Some("0"),
        validator: Validator::Range {
            min: Some(0),
            max: None,
        },
        synonyms: &[("log.cleaner.min.compaction.lag.ms", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "max.compaction.lag.ms",
        ty: ConfigType::Long,
        default: Some("9223372036854775807"),
        validator: Validator::Range {
            min: Some(1),
            max: None,
        },
        synonyms: &[("log.cleaner.max.compaction.lag.ms", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "file.delete.delay.ms",
        ty: ConfigType::Long,
        default: Some("60000"),
        validator: Validator::Range {
            min: Some(0),
            max: None,
        },
        synonyms: &[("log.segment.delete.delay.ms", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "min.cleanable.dirty.ratio",
        ty: ConfigType::Double,
        default: Some("0.5"),
        validator: Validator::Range {
            min: Some(0),
            max: Some(1),
        },
        synonyms: &[("log.cleaner.min.cleanable.ratio", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "cleanup.policy",
        ty: ConfigType::List,
        default: Some("delete"),
        validator: Validator::ValidList {
            values: &["compact", "delete"],
            empty_allowed: true,
            null_allowed: false,
        },
        synonyms: &[("log.cleanup.policy", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "unclean.leader.election.enable",
        ty: ConfigType::Boolean,
        default: Some("false"),
        validator: Validator::None,
        synonyms: &[("unclean.leader.election.enable", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "min.insync.replicas",
        ty: ConfigType::Int,
        default: Some("1"),
        validator: Validator::Range {
            min: Some(1),
            max: None,
        },
        synonyms: &[("min.insync.replicas", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "compression.type",
        ty: ConfigType::String,
        default: Some("producer"),
        validator: Validator::ValidString(&[
            "uncompressed",
            "zstd",
            "lz4",
            "snappy",
            "gzip",
            "producer",
        ]),
        synonyms: &[("compression.type", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "compression.gzip.level",
        ty: ConfigType::Int,
        default: Some("-1"),
        validator: Validator::GzipLevel,
        synonyms: &[("compression.gzip.level", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "compression.lz4.level",
        ty: ConfigType::Int,
        default: Some("9"),
        validator: Validator::Range {
            min: Some(1),
            max: Some(17),
        },
        synonyms: &[("compression.lz4.level", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "compression.zstd.level",
        ty: ConfigType::Int,
        default: Some("3"),
        validator: Validator::Range {
            min: Some(-131072),
            max: Some(22),
        },
        synonyms: &[("compression.zstd.level", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "preallocate",
        ty: ConfigType::Boolean,
        default: Some("false"),
        validator: Validator::None,
        synonyms: &[("log.preallocate", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "message.timestamp.type",
        ty: ConfigType::String,
        default: Some("CreateTime"),
        validator: Validator::ValidString(&["CreateTime", "LogAppendTime"]),
        synonyms: &[("log.message.timestamp.type", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "message.timestamp.before.max.ms",
        ty: ConfigType::Long,
        default: Some("9223372036854775807"),
        validator: Validator::Range {
            min: Some(0),
            max: None,
        },
        synonyms: &[("log.message.timestamp.before.max.ms", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "message.timestamp.after.max.ms",
        ty: ConfigType::Long,
        default: Some("3600000"),
        validator: Validator::Range {
            min: Some(0),
            max: None,
        },
        synonyms: &[("log.message.timestamp.after.max.ms", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "leader.replication.throttled.replicas",
        ty: ConfigType::List,
        default: Some(""),
        validator: Validator::ThrottledReplicas,
        synonyms: &[],
        internal: false,
    },
    TopicConfigDef {
        name: "follower.replication.throttled.replicas",
        ty: ConfigType::List,
        default: Some(""),
        validator: Validator::ThrottledReplicas,
        synonyms: &[],
        internal: false,
    },
    TopicConfigDef {
        name: "remote.storage.enable",
        ty: ConfigType::Boolean,
        default: Some("false"),
        validator: Validator::None,
        synonyms: &[],
        internal: false,
    },
    TopicConfigDef {
        name: "local.retention.ms",
        ty: ConfigType::Long,
        default: Some("-2"),
        validator: Validator::Range {
            min: Some(-2),
            max: None,
        },
        synonyms: &[("log.local.retention.ms", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "local.retention.bytes",
        ty: ConfigType::Long,
        default: Some("-2"),
        validator: Validator::Range {
            min: Some(-2),
            max: None,
        },
        synonyms: &[("log.local.retention.bytes", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "remote.log.copy.disable",
        ty: ConfigType::Boolean,
        default: Some("false"),
        validator: Validator::None,
        synonyms: &[],
        internal: false,
    },
    TopicConfigDef {
        name: "remote.copy.lag.ms",
        ty: ConfigType::Long,
        default: Some("0"),
        validator: Validator::Range {
            min: Some(-1),
            max: None,
        },
        synonyms: &[("log.remote.copy.lag.ms", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "remote.copy.lag.bytes",
        ty: ConfigType::Long,
        default: Some("-1"),
        validator: Validator::Range {
            min: Some(-1),
            max: None,
        },
        synonyms: &[("log.remote.copy.lag.bytes", 1)],
        internal: false,
    },
    TopicConfigDef {
        name: "remote.log.delete.on.disable",
        ty: ConfigType::Boolean,
        default: Some("false"),
        validator: Validator::None,
        synonyms: &[],
        internal: false,
    },
    TopicConfigDef {
        name: "errors.deadletterqueue.group.enable",
        ty: ConfigType::Boolean,
        default: Some("false"),
        validator: Validator::None,
        synonyms: &[],
        internal: false,
    },
    TopicConfigDef {
        name: "internal.segment.bytes",
        ty: ConfigType::Int,
        default: None,
        validator: Validator::None,
        synonyms: &[],
        internal: true,
    },
];

impl Validator {
    /// The validator as the probe prints it: Java's class name and `toString`.
    fn render(&self) -> String {
        let join = |v: &[&str]| v.join(", ");
        match self {
            Validator::None => "-".into(),
            Validator::Range { min, max } => match (min, max) {
                (Some(lo), Some(hi)) => format!("Range [{lo},...,{hi}]"),
                (Some(lo), None) => format!("Range [{lo},...]"),
                (None, Some(hi)) => format!("Range [...,{hi}]"),
                (None, None) => "Range [...]".into(),
            },
            Validator::ValidString(v) => format!("ValidString [{}]", join(v)),
            Validator::ValidList {
                values: [],
                empty_allowed,
                null_allowed,
            } => format!("ValidList  empty={empty_allowed} null={null_allowed}"),
            Validator::ValidList {
                values,
                empty_allowed,
                null_allowed,
            } => format!(
                "ValidList [{}] empty={empty_allowed} null={null_allowed}",
                join(values)
            ),
            Validator::GzipLevel => "LambdaValidator [1,...,9] or -1".into(),
            Validator::ThrottledReplicas => {
                "ThrottledReplicaListValidator [partitionId]:[brokerId],[partitionId]:[brokerId],..."
                    .into()
            }
            Validator::ShareAutoOffsetReset => {
                "Validator [latest, earliest, by_duration:PnDTnHnMn.nS]".into()
            }
        }
    }
}

/// The table as `compat/java/TopicConfigProbe.java table` prints Kafka's: one line per config,
/// name, type, default, validator, synonyms (`name:value-of-1-converted`), internal.
pub fn render_table() -> String {
    render_defs(TOPIC_CONFIG_DEFS)
}

/// `defs` as [`render_table`] prints the topic configs.
pub fn render_defs(defs: &[TopicConfigDef]) -> String {
    let mut out = String::new();
    for d in defs {
        let synonyms: Vec<String> = d
            .synonyms
            .iter()
            .map(|(name, factor)| format!("{name}:{factor}"))
            .collect();
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            d.name,
            d.ty.name(),
            d.default.unwrap_or("<null>"),
            d.validator.render(),
            synonyms.join(","),
            d.internal
        ));
    }
    out
}
