//! Topic configs as a Kafka 4.4 controller checks and reports them: the definitions
//! ([`defs`], from Kafka's `LogConfig`), `ConfigDef`'s parsing and validators ([`parse`]),
//! the controller's validation of a new topic's configs ([`validate`], Kafka's
//! `ControllerConfigurationValidator` and `LogConfig.validate`), and the effective configs a
//! CreateTopics response lists ([`effective`], Kafka's `KafkaConfigSchema`).

pub mod defs;
pub mod effective;
pub mod parse;
pub mod validate;

#[cfg(test)]
mod tests;

use std::fmt;

pub use defs::{TopicConfigDef, Validator, TOPIC_CONFIG_DEFS};
pub use effective::{
    effective_topic_config, effective_topic_configs, ConfigSource, EffectiveConfig,
};
pub use validate::{validate_topic_configs, StaticLogConfig};

/// `ConfigDef.Type`: the types topic configs use, and those only broker configs use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigType {
    Boolean,
    String,
    Int,
    Long,
    Double,
    List,
    Short,
    Class,
    Password,
}

impl ConfigType {
    /// The type of Kafka's name for it (`ConfigDef.Type.valueOf`).
    pub fn from_name(name: &str) -> Option<ConfigType> {
        [
            ConfigType::Boolean,
            ConfigType::String,
            ConfigType::Int,
            ConfigType::Long,
            ConfigType::Double,
            ConfigType::List,
            ConfigType::Short,
            ConfigType::Class,
            ConfigType::Password,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }

    /// `DescribeConfigsResponse.ConfigType` id of the type (0 is UNKNOWN).
    pub fn describe_id(self) -> i8 {
        match self {
            ConfigType::Boolean => 1,
            ConfigType::String => 2,
            ConfigType::Int => 3,
            ConfigType::Short => 4,
            ConfigType::Long => 5,
            ConfigType::Double => 6,
            ConfigType::List => 7,
            ConfigType::Class => 8,
            ConfigType::Password => 9,
        }
    }

    /// Kafka's name of the type (`ConfigDef.Type.toString`).
    pub fn name(self) -> &'static str {
        match self {
            ConfigType::Boolean => "BOOLEAN",
            ConfigType::String => "STRING",
            ConfigType::Int => "INT",
            ConfigType::Long => "LONG",
            ConfigType::Double => "DOUBLE",
            ConfigType::List => "LIST",
            ConfigType::Short => "SHORT",
            ConfigType::Class => "CLASS",
            ConfigType::Password => "PASSWORD",
        }
    }
}

/// The definition of topic config `name`.
pub fn topic_config_def(name: &str) -> Option<&'static TopicConfigDef> {
    TOPIC_CONFIG_DEFS.iter().find(|d| d.name == name)
}

/// Why a topic's configs are refused: every case is INVALID_CONFIG, and `Display` is Java's
/// message.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigError {
    /// `ConfigException(name, value, reason)`: the value as Java prints it (the raw text for a
    /// parse failure, the parsed value for a validator's refusal).
    InvalidValue {
        name: String,
        value: String,
        reason: InvalidReason,
    },
    /// `ValidList`: an empty list where none is allowed.
    EmptyList { name: String, valid: String },
    /// `ValidList`: the same entry twice.
    DuplicateListValues { name: String },
    /// `ValidList`: an empty entry.
    EmptyListValue { name: String },
    /// `LogConfig.validateNames`.
    UnknownName(String),
    /// A config without a value (`ReplicationControlManager.computeConfigChanges`).
    NullValues(Vec<String>),
    /// `LogConfig.validateValues`.
    CompactionLag { min: i64, max: i64 },
    /// `remote.storage.enable=true` on a controller whose tiered storage is off.
    TieredStorageDisabled,
    /// `LogConfig.validateTurningOffRemoteStorageWithDelete`: a topic that had remote storage
    /// loses it without `remote.log.delete.on.disable=true`.
    RemoteStorageOffWithoutDelete,
}

/// What a value breaks (the message after the value in `ConfigException`).
#[derive(Debug, Clone, PartialEq)]
pub enum InvalidReason {
    NotANumber(ConfigType),
    NotABoolean,
    AtLeast(i64),
    NoMoreThan(i64),
    OneOf(&'static [&'static str]),
    GzipLevel,
    /// `ThrottledReplicaListValidator`, naming the config.
    ThrottledReplicas(String),
    /// `ShareGroupAutoOffsetResetStrategy.Validator`, naming the config and the value.
    ShareAutoOffsetReset {
        name: String,
        value: String,
    },
}

impl fmt::Display for InvalidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidReason::NotANumber(t) => write!(f, "Not a number of type {}", t.name()),
            InvalidReason::NotABoolean => f.write_str("Expected value to be either true or false"),
            InvalidReason::AtLeast(min) => write!(f, "Value must be at least {min}"),
            InvalidReason::NoMoreThan(max) => write!(f, "Value must be no more than {max}"),
            InvalidReason::OneOf(values) => {
                write!(f, "String must be one of: {}", values.join(", "))
            }
            InvalidReason::GzipLevel => f.write_str("Value must be between 1 and 9 or equal to -1"),
            InvalidReason::ThrottledReplicas(name) => write!(
                f,
                "{name} must be the literal '*' or a list of replicas in the following format: \
                 [partitionId]:[brokerId],[partitionId]:[brokerId],..."
            ),
            InvalidReason::ShareAutoOffsetReset { name, value } => write!(
                f,
                "Invalid value `{value}` for configuration {name}. The value must be either \
                 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."
            ),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::InvalidValue {
                name,
                value,
                reason,
            } => write!(f, "Invalid value {value} for configuration {name}: {reason}"),
            ConfigError::EmptyList { name, valid } => write!(
                f,
                "Configuration '{name}' must not be empty. Valid values include: {valid}"
            ),
            ConfigError::DuplicateListValues { name } => {
                write!(f, "Configuration '{name}' values must not be duplicated.")
            }
            ConfigError::EmptyListValue { name } => {
                write!(f, "Configuration '{name}' values must not be empty.")
            }
            ConfigError::UnknownName(name) => write!(f, "Unknown topic config name: {name}"),
            ConfigError::NullValues(names) => write!(
                f,
                "Null value not supported for topic configs: {}",
                names.join(",")
            ),
            ConfigError::CompactionLag { min, max } => write!(
                f,
                "conflict topic config setting min.compaction.lag.ms ({min}) > max.compaction.lag.ms ({max})"
            ),
            ConfigError::TieredStorageDisabled => f.write_str(
                "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.",
            ),
            ConfigError::RemoteStorageOffWithoutDelete => f.write_str(
                "It is invalid to disable remote storage without deleting remote data. If you want to keep the remote data and turn to read only, please set `remote.storage.enable=true,remote.log.copy.disable=true`. If you want to disable remote storage and delete all remote data, please set `remote.storage.enable=false,remote.log.delete.on.disable=true`.",
            ),
        }
    }
}

impl std::error::Error for ConfigError {}
