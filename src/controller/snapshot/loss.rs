//! What an image holds that the records of a metadata.version cannot: Java's
//! `ImageWriterOptions.handleLoss`, as values. Java's snapshot writer throws on the first one;
//! here the caller sees them all and decides.

use std::fmt;

use super::super::metadata_version::MetadataVersion;
use crate::protocol::codec::Uuid;

/// One part of the image left out of a snapshot, and the metadata.version it was written at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} cannot be written at metadata.version {}: {}", .metadata_version.name(), .what.remedy())]
pub struct Loss {
    pub what: Lost,
    pub metadata_version: MetadataVersion,
}

/// What was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lost {
    /// `RegisterBrokerRecord.IsMigratingZkBroker` (v2+).
    MigratingZkBroker { broker: i32 },
    /// `RegisterBrokerRecord.LogDirs` (v3+).
    BrokerDirectories { broker: i32 },
    /// `RegisterBrokerRecord.CordonedLogDirs` (v4+).
    CordonedDirectories { broker: i32 },
    /// Every `RegisterControllerRecord`.
    ControllerRegistrations { count: usize },
    /// A partition's directories other than MIGRATING (`PartitionRecord.Directories`, v1+).
    PartitionDirectories { topic_id: Uuid, partition: i32 },
    /// A partition's ELR or last known ELR (`PartitionRecord` v2+ tagged fields). Java drops
    /// these without a word when eligible.leader.replicas.version is 0; it is reported here.
    PartitionElr { topic_id: Uuid, partition: i32 },
    /// Every `UserScramCredentialRecord`.
    ScramCredentials { count: usize },
    /// Every `DelegationTokenRecord`.
    DelegationTokens { count: usize },
}

impl Lost {
    /// What would have kept it.
    pub fn remedy(&self) -> &'static str {
        match self {
            Lost::MigratingZkBroker { .. } => "it needs 3.4-IV0 or later",
            Lost::BrokerDirectories { .. } | Lost::PartitionDirectories { .. } => {
                "directory assignment needs 3.7-IV2 or later"
            }
            Lost::CordonedDirectories { .. } => "cordoned directories need 4.3-IV0 or later",
            Lost::ControllerRegistrations { .. } => {
                "controller registrations need 3.7-IV0 or later"
            }
            Lost::PartitionElr { .. } => {
                "ELR is written only with eligible.leader.replicas.version 1 and 4.0-IV1 or later"
            }
            Lost::ScramCredentials { .. } => "SCRAM credentials need 3.5-IV2 or later",
            Lost::DelegationTokens { .. } => "delegation tokens need 3.6-IV2 or later",
        }
    }
}

impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lost::MigratingZkBroker { broker } => {
                write!(f, "the ZooKeeper migration state of broker {broker}")
            }
            Lost::BrokerDirectories { broker } => {
                write!(f, "the online log directories of broker {broker}")
            }
            Lost::CordonedDirectories { broker } => {
                write!(f, "the cordoned log directories of broker {broker}")
            }
            Lost::ControllerRegistrations { count } => {
                write!(f, "{count} controller registrations")
            }
            Lost::PartitionDirectories {
                topic_id,
                partition,
            } => write!(
                f,
                "the replica directories of partition {partition} of topic id {topic_id}"
            ),
            Lost::PartitionElr {
                topic_id,
                partition,
            } => write!(
                f,
                "the eligible leader replicas of partition {partition} of topic id {topic_id}"
            ),
            Lost::ScramCredentials { count } => write!(f, "{count} SCRAM credentials"),
            Lost::DelegationTokens { count } => write!(f, "{count} delegation tokens"),
        }
    }
}
