//! Why a topic request, or one topic of it, is refused: each with the error code and the
//! message Kafka 4.4's controller answers with.

use std::fmt;

use super::names::InvalidName;
use super::placement::PlacementError;
use crate::controller::acls::authorizer::Denied;
use crate::controller::topic_configs::ConfigError;
use crate::protocol::errors::ErrorCode;

/// One topic refused.
#[derive(Debug, Clone, PartialEq)]
pub enum TopicError {
    InvalidName(InvalidName),
    /// Collides with an existing topic once `.` reads as `_`.
    Collides {
        name: String,
        existing: String,
    },
    AlreadyExists(String),
    Config(ConfigError),
    AssignmentWithReplicationFactor,
    AssignmentWithPartitionCount,
    Assignment(AssignmentError),
    NonPositiveReplicationFactor,
    NonPositivePartitionCount,
    /// The placer could not place the replicas (its reason), or every chosen broker is fenced
    /// or shutting down (`None`).
    Unreplicable {
        replication_factor: i16,
        reason: Option<PlacementError>,
    },
    /// `UnknownTopicOrPartitionException` without a message (CreatePartitions), or
    /// `ApiError(UNKNOWN_TOPIC_OR_PARTITION)` with the code's own (DeleteTopics by name).
    UnknownTopic {
        with_message: bool,
    },
    /// `UNKNOWN_TOPIC_ID` with the code's own message.
    UnknownTopicId,
    AlreadyHasPartitions(usize),
    NotAnIncrease {
        name: String,
        current: usize,
        requested: i32,
    },
    /// ControllerApis' refusals: `INVALID_REQUEST` with a fixed message.
    InvalidRequest(&'static str),
    /// The authorizer's refusal (DeleteTopics: `ApiError(TOPIC_AUTHORIZATION_FAILED)`).
    Denied(Denied),
}

/// A manual assignment refused (`INVALID_REPLICA_ASSIGNMENT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssignmentError {
    DuplicatePartition(i32),
    AllInactive(i32),
    NotConsecutive,
    EmptyReplicas,
    UnknownBroker(i32),
    AllDirectoriesCordoned(i32),
    BrokerTwice(i32),
    InconsistentReplicationFactor { replicas: usize, expected: usize },
    CountMismatch { additional: i64, given: usize },
}

impl fmt::Display for AssignmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssignmentError::DuplicatePartition(p) => {
                write!(f, "Found multiple manual partition assignments for partition {p}")
            }
            AssignmentError::AllInactive(p) => write!(
                f,
                "All brokers specified in the manual partition assignment for partition {p} are fenced or in controlled shutdown."
            ),
            AssignmentError::NotConsecutive => {
                f.write_str("partitions should be a consecutive 0-based integer sequence")
            }
            AssignmentError::EmptyReplicas => {
                f.write_str("The manual partition assignment includes an empty replica list.")
            }
            AssignmentError::UnknownBroker(b) => write!(
                f,
                "The manual partition assignment includes broker {b}, but no such broker is registered."
            ),
            AssignmentError::AllDirectoriesCordoned(b) => write!(
                f,
                "The manual partition assignment includes broker {b}, but all its log directories are cordoned."
            ),
            AssignmentError::BrokerTwice(b) => write!(
                f,
                "The manual partition assignment includes the broker {b} more than once."
            ),
            AssignmentError::InconsistentReplicationFactor { replicas, expected } => write!(
                f,
                "The manual partition assignment includes a partition with {replicas} replica(s), but this is not consistent with previous partitions, which have {expected} replica(s)."
            ),
            AssignmentError::CountMismatch { additional, given } => write!(
                f,
                "Attempted to add {additional} additional partition(s), but only {given} assignment(s) were specified."
            ),
        }
    }
}

impl TopicError {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            TopicError::InvalidName(_) | TopicError::Collides { .. } => {
                ErrorCode::INVALID_TOPIC_EXCEPTION
            }
            TopicError::AlreadyExists(_) => ErrorCode::TOPIC_ALREADY_EXISTS,
            TopicError::Config(_) => ErrorCode::INVALID_CONFIG,
            TopicError::AssignmentWithReplicationFactor
            | TopicError::AssignmentWithPartitionCount
            | TopicError::InvalidRequest(_) => ErrorCode::INVALID_REQUEST,
            TopicError::Assignment(_) => ErrorCode::INVALID_REPLICA_ASSIGNMENT,
            TopicError::NonPositiveReplicationFactor | TopicError::Unreplicable { .. } => {
                ErrorCode::INVALID_REPLICATION_FACTOR
            }
            TopicError::NonPositivePartitionCount
            | TopicError::AlreadyHasPartitions(_)
            | TopicError::NotAnIncrease { .. } => ErrorCode::INVALID_PARTITIONS,
            TopicError::UnknownTopic { .. } => ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            TopicError::UnknownTopicId => ErrorCode::UNKNOWN_TOPIC_ID,
            TopicError::Denied(d) => d.error_code(),
        }
    }

    /// The response's error message (Java's is null for a bare `UnknownTopicOrPartitionException`).
    pub fn message(&self) -> Option<String> {
        match self {
            TopicError::UnknownTopic {
                with_message: false,
            } => None,
            other => Some(other.to_string()),
        }
    }
}

impl fmt::Display for TopicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopicError::InvalidName(e) => e.fmt(f),
            TopicError::Collides { name, existing } => {
                write!(f, "Topic '{name}' collides with existing topic: {existing}")
            }
            TopicError::AlreadyExists(name) => write!(f, "Topic '{name}' already exists."),
            TopicError::Config(e) => e.fmt(f),
            TopicError::AssignmentWithReplicationFactor => f.write_str(
                "A manual partition assignment was specified, but replication factor was not set to -1.",
            ),
            TopicError::AssignmentWithPartitionCount => f.write_str(
                "A manual partition assignment was specified, but numPartitions was not set to -1.",
            ),
            TopicError::Assignment(e) => e.fmt(f),
            TopicError::NonPositiveReplicationFactor => f.write_str(
                "Replication factor must be larger than 0, or -1 to use the default value.",
            ),
            TopicError::NonPositivePartitionCount => {
                f.write_str("Number of partitions was set to an invalid non-positive value.")
            }
            TopicError::Unreplicable {
                replication_factor,
                reason,
            } => {
                write!(f, "Unable to replicate the partition {replication_factor} time(s): ")?;
                match reason {
                    Some(r) => r.fmt(f),
                    None => f.write_str(
                        "All brokers are currently fenced or in controlled shutdown.",
                    ),
                }
            }
            TopicError::UnknownTopic { .. } => {
                f.write_str("This server does not host this topic-partition.")
            }
            TopicError::UnknownTopicId => f.write_str("This server does not host this topic ID."),
            TopicError::AlreadyHasPartitions(n) => write!(f, "Topic already has {n} partition(s)."),
            TopicError::NotAnIncrease {
                name,
                current,
                requested,
            } => write!(
                f,
                "The topic {name} currently has {current} partition(s); {requested} would not be an increase."
            ),
            TopicError::InvalidRequest(m) => f.write_str(m),
            TopicError::Denied(d) => d.fmt(f),
        }
    }
}

impl std::error::Error for TopicError {}

/// A whole request refused (`PolicyViolationException`): every topic of it gets the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchError {
    /// More than 10,000 partitions in one CreateTopics.
    TooManyPartitions,
    /// More than 10,000 new partitions in one CreatePartitions.
    TooManyAdditionalPartitions,
    /// More than 10,000 records (`BoundedListTooLongException`, as the controller reports it).
    TooManyRecords,
}

impl BatchError {
    pub fn error_code(&self) -> ErrorCode {
        ErrorCode::POLICY_VIOLATION
    }
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BatchError::TooManyPartitions => "Excessively large number of partitions per request.",
            BatchError::TooManyAdditionalPartitions => {
                "Excessively large number of additional partitions per request."
            }
            BatchError::TooManyRecords => "Unable to perform excessively large batch operation.",
        })
    }
}

impl std::error::Error for BatchError {}
