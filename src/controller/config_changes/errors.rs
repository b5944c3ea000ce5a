//! Why a config resource's change is refused: each case with the error code and the message
//! Kafka 4.4's controller answers with (`ConfigurationControlManager`,
//! `ControllerConfigurationValidator`, the existence checker of `QuorumController`).

use std::fmt;

use super::group::GroupConfigError;
use crate::controller::topic_configs::ConfigError;
use crate::controller::topics::names::InvalidName;
use crate::protocol::errors::ErrorCode;

/// The longest config value a record may carry (`Short.MAX_VALUE` UTF-16 units).
pub const MAX_CONFIG_VALUE_LENGTH: usize = 32767;

#[derive(Debug, Clone, PartialEq)]
pub enum ChangeError {
    /// APPEND or SUBTRACT on a config whose type is not LIST (or that is not defined).
    NotAList {
        op: &'static str,
        key: String,
    },
    BrokerMinIsrWithElr,
    ClusterMinIsrRemovalWithElr,
    CordonedLogDirsUnsupported,
    CordonedLogDirsNotSubset,
    ValueTooLong,
    DefaultTopic,
    InvalidTopicName(InvalidName),
    BrokerNameNotANumber,
    NegativeBrokerId,
    DefaultGroup,
    /// A topic's configs (`LogConfig.validate`).
    TopicConfig(ConfigError),
    UnknownTopic(String),
    BrokerNotRegistered(i32),
    /// ControllerApis refuses a resource type it cannot authorize (legacy AlterConfigs of
    /// BROKER_LOGGER).
    UnexpectedResourceType(&'static str),
    /// `ClientMetricsConfigs.validate`'s own refusals (INVALID_REQUEST or INVALID_CONFIG).
    ClientMetrics {
        code: ErrorCode,
        message: String,
    },
    /// A client-metrics config value `ConfigDef.parse` refuses.
    ClientMetricsConfig(ConfigError),
    /// A group's configs (`GroupConfig.validate`).
    GroupConfig(GroupConfigError),
}

impl ChangeError {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            ChangeError::NotAList { .. }
            | ChangeError::BrokerMinIsrWithElr
            | ChangeError::ClusterMinIsrRemovalWithElr
            | ChangeError::CordonedLogDirsUnsupported
            | ChangeError::CordonedLogDirsNotSubset
            | ChangeError::ValueTooLong
            | ChangeError::TopicConfig(_)
            | ChangeError::ClientMetricsConfig(_)
            | ChangeError::GroupConfig(_) => ErrorCode::INVALID_CONFIG,
            ChangeError::ClientMetrics { code, .. } => *code,
            ChangeError::DefaultTopic
            | ChangeError::BrokerNameNotANumber
            | ChangeError::NegativeBrokerId
            | ChangeError::DefaultGroup
            | ChangeError::UnexpectedResourceType(_) => ErrorCode::INVALID_REQUEST,
            ChangeError::InvalidTopicName(_) => ErrorCode::INVALID_TOPIC_EXCEPTION,
            ChangeError::UnknownTopic(_) => ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            ChangeError::BrokerNotRegistered(_) => ErrorCode::BROKER_ID_NOT_REGISTERED,
        }
    }
}

impl fmt::Display for ChangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangeError::NotAList { op, key } => {
                write!(f, "Can't {op} to key {key} because its type is not LIST.")
            }
            ChangeError::BrokerMinIsrWithElr => f.write_str(
                "Broker-level min.insync.replicas cannot be altered while ELR is enabled.",
            ),
            ChangeError::ClusterMinIsrRemovalWithElr => f.write_str(
                "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.",
            ),
            ChangeError::CordonedLogDirsUnsupported => f.write_str(
                "The cordoned.log.dirs configuration value cannot be set because it requires metadata.version >= 4.3-IV0",
            ),
            // Java's message has the two spaces.
            ChangeError::CordonedLogDirsNotSubset => f.write_str(
                "When updating cordoned.log.dirs via controllers,  the new value must be a subset of the current configuration value.",
            ),
            ChangeError::ValueTooLong => f.write_str(
                "The configuration value cannot be added because it exceeds the maximum value size of 32767 bytes.",
            ),
            ChangeError::DefaultTopic => f.write_str("Default topic resources are not allowed."),
            ChangeError::InvalidTopicName(e) => write!(f, "{e}"),
            ChangeError::BrokerNameNotANumber => {
                f.write_str("Unable to parse broker name as a base 10 number.")
            }
            ChangeError::NegativeBrokerId => f.write_str("Invalid negative broker ID."),
            ChangeError::DefaultGroup => f.write_str("Default group resources are not allowed."),
            ChangeError::TopicConfig(e) | ChangeError::ClientMetricsConfig(e) => write!(f, "{e}"),
            ChangeError::ClientMetrics { message, .. } => f.write_str(message),
            ChangeError::UnknownTopic(name) => write!(f, "The topic '{name}' does not exist."),
            ChangeError::BrokerNotRegistered(id) => write!(f, "No node with id {id} found."),
            ChangeError::UnexpectedResourceType(t) => write!(f, "Unexpected resource type {t}."),
            ChangeError::GroupConfig(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ChangeError {}
