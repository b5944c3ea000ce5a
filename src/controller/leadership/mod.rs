//! Partition leadership and ISR decisions at the active controller (Kafka 4.4's
//! `ReplicationControlManager` with its `PartitionChangeBuilder`): what a broker being fenced,
//! unfenced, shut down, re-registered or unregistered does to the partitions ([`Leadership`]),
//! AlterPartition from partition leaders ([`alter_partition`]), leader elections
//! ([`elections`]), partition reassignments ([`reassign`]) and replicas' log directories
//! ([`directories`]). Each decision reads the latest image and returns `PartitionChangeRecord`s;
//! nothing here mutates the controller.

pub mod alter_partition;
pub mod change;
pub mod directories;
pub mod elections;
pub mod reassign;
#[cfg(test)]
mod reassign_tests;
#[cfg(test)]
mod tests;

pub use change::{Election, PartitionChange, NO_LEADER, RECOVERED, RECOVERING};

use crate::controller::configs::{BROKER_RESOURCE, TOPIC_RESOURCE};
use crate::controller::metadata_version::MetadataVersion;
use crate::controller::replication::{PartitionRegistration, Topic, TopicPartition, TopicsImage};
use crate::controller::snapshot::ELR_FEATURE;
use crate::controller::topic_configs::effective_topic_config;
use crate::controller::topics::{default_dir, is_active, TopicsContext};
use crate::controller::MetadataImage;
use crate::protocol::codec::Uuid;
use crate::protocol::records::MetadataRecordAndVersion;

/// `min.insync.replicas`, which decides when ISR members become eligible leaders.
const MIN_INSYNC_REPLICAS: &str = "min.insync.replicas";
/// `unclean.leader.election.enable`.
const UNCLEAN_LEADER_ELECTION_ENABLE: &str = "unclean.leader.election.enable";

/// The partitions a leadership change walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partitions {
    /// Those with the broker in their ISR (`BrokersToIsrs.partitionsWithBrokerInIsr`).
    WithInIsr(i32),
    /// Those with the broker in their ELR (`BrokersToElrs.partitionsWithBrokerInElr`).
    WithInElr(i32),
    /// Those without a leader (`partitionsWithNoLeader`).
    Leaderless,
    /// Those whose replica on the broker is in this directory (`directoriesToPartitions`).
    InDirectory(i32, Uuid),
}

impl Partitions {
    fn includes(self, p: &PartitionRegistration) -> bool {
        match self {
            Partitions::WithInIsr(b) => p.isr.contains(&b),
            Partitions::WithInElr(b) => p.elr.contains(&b),
            Partitions::Leaderless => p.leader == NO_LEADER,
            Partitions::InDirectory(b, dir) => p
                .replicas
                .iter()
                .zip(&p.directories)
                .any(|(r, d)| *r == b && *d == dir),
        }
    }

    /// The image's index of these partitions, in image order; `None` where there is none
    /// (a directory going offline is rare enough to walk every partition).
    fn indexed(
        self,
        topics: &TopicsImage,
    ) -> Option<Box<dyn Iterator<Item = &TopicPartition> + '_>> {
        match self {
            Partitions::WithInIsr(b) => Some(Box::new(topics.with_in_isr(b))),
            Partitions::WithInElr(b) => Some(Box::new(topics.with_in_elr(b))),
            Partitions::Leaderless => Some(Box::new(topics.leaderless())),
            Partitions::InDirectory(..) => None,
        }
    }
}

/// What every leadership decision reads: the latest image, its metadata.version and ELR
/// feature, and the controller's own configs (a topic's effective `min.insync.replicas`
/// falls back to them).
pub struct Leadership<'a> {
    pub image: &'a MetadataImage,
    pub topics: &'a TopicsContext,
    pub metadata_version: MetadataVersion,
    /// `eligible.leader.replicas.version` is finalized at 1 or more.
    pub elr_enabled: bool,
}

impl<'a> Leadership<'a> {
    /// `None` when the image has no metadata.version Kafka 4.4 knows (an active controller's
    /// always has one: the activation records write it).
    pub fn new(image: &'a MetadataImage, topics: &'a TopicsContext) -> Option<Leadership<'a>> {
        let metadata_version = image
            .features
            .metadata_version()
            .and_then(|l| MetadataVersion::from_level(l).ok())?;
        Some(Leadership {
            image,
            topics,
            metadata_version,
            elr_enabled: image
                .features
                .levels
                .get(ELR_FEATURE)
                .is_some_and(|l| *l >= 1),
        })
    }

    /// A topic's effective config (`ConfigurationControlManager.getTopicConfig`).
    fn topic_config(&self, topic: &str, key: &str) -> Option<String> {
        let configs = &self.image.configs.resources;
        let own = configs.get(&(TOPIC_RESOURCE, topic.to_string()));
        let node = configs.get(&(BROKER_RESOURCE, self.topics.node_id.to_string()));
        let cluster = configs.get(&(BROKER_RESOURCE, String::new()));
        effective_topic_config(key, own, node, cluster, &self.topics.statics)
    }

    /// `getTopicEffectiveMinIsr`: the topic's `min.insync.replicas`, at most its replication
    /// factor (partition 0's replica count).
    pub fn min_isr(&self, topic: &Topic) -> usize {
        let configured = self
            .topic_config(&topic.name, MIN_INSYNC_REPLICAS)
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(1);
        let replication_factor = topic.partitions.get(&0).map_or(0, |p| p.replicas.len());
        configured.clamp(0, i64::MAX).min(replication_factor as i64) as usize
    }

    /// `uncleanLeaderElectionEnabledForTopic`.
    pub fn unclean_enabled(&self, topic: &Topic) -> bool {
        self.topic_config(&topic.name, UNCLEAN_LEADER_ELECTION_ENABLE)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    /// `ClusterControlManager.isActive`.
    pub fn is_active(&self, broker: i32) -> bool {
        is_active(self.image, broker)
    }

    /// `LeaderAcceptor`: `acceptable`, and the replica's directory is online on its broker.
    pub fn online_replica(&self, partition: &PartitionRegistration, broker: i32) -> bool {
        let Some(dir) = partition
            .replicas
            .iter()
            .position(|r| *r == broker)
            .and_then(|i| partition.directories.get(i))
        else {
            // Java throws for a replica the partition does not have; no caller asks.
            return false;
        };
        self.image
            .cluster
            .brokers
            .get(&broker)
            .is_some_and(|b| directory_is_online(*dir, &b.directories))
    }

    /// The directory a replica without one gets (`ClusterControlManager.defaultDir`).
    pub fn default_dir(&self, broker: i32) -> Uuid {
        default_dir(self.image, broker)
    }

    /// A change to one partition with Java's defaults for it: its topic's min ISR, the ELR
    /// feature, and an unclean election where the topic enables it.
    pub fn change<'b>(
        &'b self,
        topic: &'b Topic,
        partition_id: i32,
        partition: &'b PartitionRegistration,
        acceptable: change::Acceptor<'b>,
        default_dir: &'b dyn Fn(i32) -> Uuid,
    ) -> PartitionChange<'b> {
        PartitionChange::new(
            partition,
            topic.id,
            partition_id,
            acceptable,
            self.metadata_version,
            self.min_isr(topic),
            self.elr_enabled,
            default_dir,
        )
    }

    /// `generateLeaderAndIsrUpdates`: for each partition of `which`, `remove` leaves the ISR
    /// and may not lead, `add` may lead although the image still shows it fenced, and
    /// `unclean_shutdown` leaves the ISR and the ELR and may not lead (`NO_LEADER`: none).
    pub fn updates(
        &self,
        which: Partitions,
        remove: i32,
        add: i32,
        unclean_shutdown: i32,
    ) -> Vec<MetadataRecordAndVersion> {
        let mut records = Vec::new();
        let topics = &self.image.topics;
        if let Some(indexed) = which.indexed(topics) {
            for &partition in indexed {
                let (topic, p) = topics
                    .partition(partition)
                    .expect("the index names only partitions of the image");
                debug_assert!(which.includes(p), "{which:?} indexes {partition:?}");
                records.extend(self.update(topic, partition.1, p, remove, add, unclean_shutdown));
            }
            return records;
        }
        for topic in topics.by_id.values() {
            for (id, p) in &topic.partitions {
                if which.includes(p) {
                    records.extend(self.update(topic, *id, p, remove, add, unclean_shutdown));
                }
            }
        }
        records
    }

    /// One partition of [`Self::updates`].
    pub fn update(
        &self,
        topic: &Topic,
        id: i32,
        p: &PartitionRegistration,
        remove: i32,
        add: i32,
        unclean_shutdown: i32,
    ) -> Option<MetadataRecordAndVersion> {
        let default_dir = |b| self.default_dir(b);
        let acceptable = |r: i32| {
            r != remove
                && r != unclean_shutdown
                && (r == add || self.is_active(r))
                && self.online_replica(p, r)
        };
        let mut change = self
            .change(topic, id, p, &acceptable, &default_dir)
            .target_isr(
                p.isr
                    .iter()
                    .copied()
                    .filter(|r| *r != remove && *r != unclean_shutdown)
                    .collect(),
            );
        if self.unclean_enabled(topic) {
            change = change.election(Election::Unclean);
        }
        if unclean_shutdown != NO_LEADER {
            change = change.unclean_shutdown_replicas(vec![unclean_shutdown]);
        }
        change.build()
    }

    /// `handleBrokerFenced` (without its fencing record): the broker leaves every ISR and
    /// leadership.
    pub fn broker_fenced(&self, broker: i32) -> Vec<MetadataRecordAndVersion> {
        self.updates(Partitions::WithInIsr(broker), broker, NO_LEADER, NO_LEADER)
    }

    /// `handleBrokerInControlledShutdown` (without its record): as fencing.
    pub fn broker_in_controlled_shutdown(&self, broker: i32) -> Vec<MetadataRecordAndVersion> {
        self.broker_fenced(broker)
    }

    /// `handleBrokerUnfenced` (after its unfencing record): leaderless partitions may elect
    /// the broker.
    pub fn broker_unfenced(&self, broker: i32) -> Vec<MetadataRecordAndVersion> {
        self.updates(Partitions::Leaderless, NO_LEADER, broker, NO_LEADER)
    }

    /// `handleBrokerShutdown`: a new incarnation registers. With ELR on, one that did not shut
    /// down cleanly (its previous broker epoch is not the registered one) leaves the ISRs and
    /// ELRs as an unclean shutdown; otherwise it leaves the ISRs.
    pub fn broker_restarted(&self, broker: i32, clean: bool) -> Vec<MetadataRecordAndVersion> {
        if self.elr_enabled && !clean {
            let mut records =
                self.updates(Partitions::WithInIsr(broker), NO_LEADER, NO_LEADER, broker);
            records.extend(self.updates(
                Partitions::WithInElr(broker),
                NO_LEADER,
                NO_LEADER,
                broker,
            ));
            records
        } else {
            self.broker_fenced(broker)
        }
    }

    /// `handleDirectoriesOffline` for one directory (without the registration change): the
    /// broker's replicas there leave their ISRs and leaderships.
    pub fn replicas_offline(&self, broker: i32, dir: Uuid) -> Vec<MetadataRecordAndVersion> {
        self.updates(
            Partitions::InDirectory(broker, dir),
            broker,
            NO_LEADER,
            NO_LEADER,
        )
    }

    /// `handleBrokerUnregistered` (without its record): the broker leaves every ISR and ELR.
    /// Both passes read the image as it was, as Java's do (a broker is never in both the ISR
    /// and the ELR of one partition, so no partition changes twice).
    pub fn broker_unregistered(&self, broker: i32) -> Vec<MetadataRecordAndVersion> {
        let mut records = self.broker_fenced(broker);
        records.extend(self.updates(Partitions::WithInElr(broker), broker, NO_LEADER, NO_LEADER));
        records
    }
}

/// `DirectoryId.isOnline`: unassigned and migrating replicas count as online, lost ones do
/// not, and a broker that reports no directories has every directory online.
fn directory_is_online(dir: Uuid, online: &[Uuid]) -> bool {
    use crate::controller::replication::{
        DIRECTORY_LOST, DIRECTORY_MIGRATING, DIRECTORY_UNASSIGNED,
    };
    if dir == DIRECTORY_UNASSIGNED || dir == DIRECTORY_MIGRATING {
        return true;
    }
    if dir == DIRECTORY_LOST {
        return false;
    }
    online.is_empty() || online.contains(&dir)
}
