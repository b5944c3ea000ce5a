//! Why a committed metadata record cannot be replayed. Java's loader throws at the same records
//! (its `MetadataDelta` and the control managers), and its fault handler stops the controller
//! there: acting on the records after one would diverge from the quorum.

use crate::protocol::codec::Uuid;
use crate::protocol::records::metadata::MetadataRecordError;
use crate::protocol::records::Offset;

/// A record that cannot be replayed, and where it is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the metadata record at offset {offset} cannot be replayed: {reason}; the controller stops, as Java's does: restore the metadata log from a healthy replica")]
pub struct ReplayError {
    pub offset: Offset,
    #[source]
    pub reason: Refusal,
}

/// What is wrong with the record, in the terms Java's loader uses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("it does not decode: {0}")]
    Undecodable(MetadataRecordError),
    #[error("{record} names broker {broker}, which is not registered")]
    UnknownBroker { record: &'static str, broker: i32 },
    #[error("{record} names broker {broker} at epoch {epoch}, but its registration has epoch {registered}")]
    BrokerEpochMismatch {
        record: &'static str,
        broker: i32,
        epoch: i64,
        registered: i64,
    },
    #[error("{record} has {field} = {value}, which is not a known value")]
    InvalidValue {
        record: &'static str,
        field: &'static str,
        value: i64,
    },
    #[error("{record} names topic id {topic_id}, which does not exist")]
    UnknownTopicId {
        record: &'static str,
        topic_id: Uuid,
    },
    #[error("ClearElrRecord names topic {name}, which does not exist")]
    UnknownTopicName { name: String },
    #[error("PartitionChangeRecord names partition {partition} of topic id {topic_id}, which does not exist")]
    UnknownPartition { topic_id: Uuid, partition: i32 },
    #[error("{record} for partition {partition} of topic id {topic_id} has {replicas} replicas but {directories} directories")]
    DirectoriesMismatch {
        record: &'static str,
        topic_id: Uuid,
        partition: i32,
        replicas: usize,
        directories: usize,
    },
    #[error("metadata.version feature level {level} is not one Kafka 4.4 knows")]
    UnknownMetadataVersion { level: i16 },
    #[error("RemoveAccessControlEntryRecord names ACL {id}, which does not exist")]
    UnknownAcl { id: Uuid },
    #[error(
        "BeginTransactionRecord while the transaction begun at offset {open_since} is still open"
    )]
    TransactionAlreadyOpen { open_since: Offset },
    #[error(
        "it follows the record at offset {last_applied}: records must be replayed in offset order"
    )]
    OutOfOrder { last_applied: Offset },
    #[error("{record} without an open transaction")]
    NoOpenTransaction { record: &'static str },
}

impl Refusal {
    pub fn at(self, offset: Offset) -> ReplayError {
        ReplayError {
            offset,
            reason: self,
        }
    }
}

/// A broken invariant of the controller's state: a bug in kraftd, never a state to go on from.
/// Each variant names the invariant and carries what breaks it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvariantViolation {
    #[error("broker {broker} is fenced and in controlled shutdown at once")]
    FencedAndShuttingDown { broker: i32 },
    #[error("a finalized feature at level ≤ 0: {levels:?}")]
    FeatureLevelNotPositive { levels: imbl::OrdMap<String, i16> },
    #[error("a config resource with no configs")]
    EmptyConfigResource,
    #[error("a quota entity with no quotas")]
    EmptyQuotaEntity,
    #[error("topic name {name} maps to id {id}, which is not that topic")]
    TopicNameMismatch { name: String, id: Uuid },
    #[error("the partition index is not what a walk of the partitions gives")]
    PartitionIndexStale,
    #[error("timeline versions out of order: {kept:?} (latest {latest})")]
    TimelineOutOfOrder { kept: Vec<Offset>, latest: Offset },
    #[error("the registration offsets do not name the registered brokers")]
    RegistrationOffsetsMismatch,
    #[error("the oldest kept version ({oldest}) is after the offset a revert may need ({needed})")]
    OldestVersionTooNew { oldest: Offset, needed: Offset },
}
