//! Topic lifecycle decisions at the active controller: CreateTopics ([`create`]), DeleteTopics
//! ([`delete`]) and CreatePartitions ([`partitions`]), as Kafka 4.4's
//! `ReplicationControlManager` decides them, with the request-level screening Kafka's
//! `ControllerApis` does first ([`api`]). Replicas are placed by [`placement`] (Kafka's
//! `StripedReplicaPlacer`); topic configs are checked by `controller::topic_configs`.
//!
//! [`reassignments`] lists partitions being reassigned. Every decision reads the latest state and returns records and a reply; nothing here
//! mutates the controller.

pub mod api;
pub mod create;
pub mod delete;
mod errors;
pub mod names;
pub mod partitions;
pub mod placement;
pub mod reassignments;

#[cfg(test)]
mod tests;

pub use errors::{AssignmentError, BatchError, TopicError};

use crate::controller::brokers::BrokerSessions;
use crate::controller::java::{hash_map_capacity, hash_order, JavaRandom};
use crate::controller::metadata_version::MetadataVersion;
use crate::controller::replication::{DIRECTORY_MIGRATING, DIRECTORY_UNASSIGNED};
use crate::controller::topic_configs::StaticLogConfig;
use crate::controller::MetadataImage;
use crate::protocol::codec::Uuid;
use crate::protocol::messages::PartitionRecord;
use crate::protocol::records::MetadataRecordAndVersion;
use placement::UsableBroker;

/// `QuorumController.MAX_RECORDS_PER_USER_OP`: the most records one request may write.
pub const MAX_RECORDS_PER_USER_OP: usize = 10_000;
/// `ReplicationControlManager.MAX_PARTITIONS_PER_BATCH`.
pub const MAX_PARTITIONS_PER_BATCH: i64 = 10_000;

/// What the controller knows of itself for topic decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicsContext {
    /// This controller's node id (its dynamic broker configs count for effective values).
    pub node_id: i32,
    /// `num.partitions`.
    pub default_partitions: i32,
    /// `default.replication.factor`.
    pub default_replication_factor: i16,
    /// The controller's own log configs.
    pub statics: StaticLogConfig,
}

/// The randomness topic decisions draw from: the replica placer's `java.util.Random` and the
/// source of new topic ids (Java draws those from a `SecureRandom` of their own).
#[derive(Debug, Clone)]
pub struct TopicRandom {
    pub placer: JavaRandom,
    pub ids: JavaRandom,
}

impl TopicRandom {
    pub fn seeded(seed: u64) -> TopicRandom {
        TopicRandom {
            placer: JavaRandom::new(seed as i64),
            ids: JavaRandom::new(!seed as i64),
        }
    }
}

/// The brokers replicas may go to, as Kafka's `BrokerHeartbeatManager.usableBrokers` lists
/// them: every broker with a heartbeat state that is not shutting down and has a directory
/// that is not cordoned, with its rack and its fencing, in the iteration order of Java's
/// `HashMap<Integer, ...>`.
pub fn usable_brokers(image: &MetadataImage, sessions: &BrokerSessions) -> Vec<UsableBroker> {
    let usable: Vec<(i32, UsableBroker)> = sessions
        .states()
        .filter(|(_, s)| s.controlled_shutdown_offset.is_none())
        .filter_map(|(id, s)| {
            let b = image.cluster.brokers.get(&id)?;
            has_uncordoned_dirs(&b.directories, b.cordoned_directories.as_deref()).then(|| {
                (
                    id,
                    UsableBroker {
                        id,
                        rack: b.rack.clone(),
                        fenced: s.fenced,
                    },
                )
            })
        })
        .collect();
    let capacity = hash_map_capacity(usable.len());
    hash_order(usable, capacity)
}

/// `BrokerRegistration.hasUncordonedDirs`.
fn has_uncordoned_dirs(dirs: &[Uuid], cordoned: Option<&[Uuid]>) -> bool {
    match cordoned {
        None => true,
        Some(_) if dirs.is_empty() => true,
        Some(c) => dirs.iter().any(|d| !c.contains(d)),
    }
}

/// `ClusterControlManager.isActive`: registered, unfenced and not in controlled shutdown.
pub fn is_active(image: &MetadataImage, broker: i32) -> bool {
    image
        .cluster
        .brokers
        .get(&broker)
        .is_some_and(|b| !b.fenced && !b.in_controlled_shutdown)
}

/// The directory a new replica on `broker` is assigned (`ClusterControlManager.defaultDir`):
/// its only directory, else UNASSIGNED; MIGRATING for a broker that reports none.
pub fn default_dir(image: &MetadataImage, broker: i32) -> Uuid {
    match image.cluster.brokers.get(&broker) {
        None => DIRECTORY_UNASSIGNED,
        Some(b) => match b.directories.as_slice() {
            [] => DIRECTORY_MIGRATING,
            [only] => *only,
            _ => DIRECTORY_UNASSIGNED,
        },
    }
}

/// A new partition's record (`buildPartitionRegistration` + `PartitionRegistration.toRecord`):
/// ISR the active replicas in replica order (`isr`, never empty), the first of them leading,
/// epochs 0, directories from MV 3.7-IV2, at the record version the metadata.version writes.
fn partition_record(
    image: &MetadataImage,
    mv: MetadataVersion,
    topic_id: Uuid,
    partition: i32,
    replicas: &[i32],
    isr: Vec<i32>,
) -> MetadataRecordAndVersion {
    let directories = if mv.is_directory_assignment_supported() {
        replicas.iter().map(|b| default_dir(image, *b)).collect()
    } else {
        Vec::new()
    };
    let record = PartitionRecord {
        partition_id: partition,
        topic_id,
        replicas: replicas.to_vec(),
        leader: isr[0],
        isr,
        removing_replicas: Vec::new(),
        adding_replicas: Vec::new(),
        leader_recovery_state: 0,
        leader_epoch: 0,
        partition_epoch: 0,
        directories,
        eligible_leader_replicas: None,
        last_known_elr: None,
        ..Default::default()
    };
    MetadataRecordAndVersion::new(record, mv.partition_record_version())
}

/// The active replicas of `replicas`, in order.
fn active_of(image: &MetadataImage, replicas: &[i32]) -> Vec<i32> {
    replicas
        .iter()
        .copied()
        .filter(|b| is_active(image, *b))
        .collect()
}

/// The finalized metadata.version (the activation records always set one).
pub(crate) fn metadata_version(image: &MetadataImage) -> MetadataVersion {
    finalized_metadata_version(image)
        .expect("an active controller has a finalized metadata.version")
}

/// The finalized metadata.version, if the image has one (a bare raft node's has none).
pub(crate) fn finalized_metadata_version(image: &MetadataImage) -> Option<MetadataVersion> {
    image
        .features
        .metadata_version()
        .and_then(|l| MetadataVersion::from_level(l).ok())
}
