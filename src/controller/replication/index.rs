//! Derived indexes over the image's partitions (Java's `BrokersToIsrs`, `BrokersToElrs` and
//! the leaderless set of `ReplicationControlManager`): broker fencing, unfencing and
//! registration visit only the partitions they change, not all of them. Nothing here is part
//! of the image as Java dumps it; `TopicsImage` keeps it in step on every replay.

use imbl::{HashMap, OrdSet};

use super::partition::{PartitionRegistration, NO_LEADER};
use super::Topic;
use crate::protocol::codec::Uuid;

/// A partition by (topic id, partition id): ordered as the image walks its topics and their
/// partitions, so an indexed walk emits records in the order a full walk would.
pub type TopicPartition = (Uuid, i32);

/// Persistent like the rest of the image: a version of it stays an O(1) clone.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct PartitionIndex {
    /// Invariant: per broker, the partitions whose ISR holds it; no broker maps to an empty set.
    in_isr: HashMap<i32, OrdSet<TopicPartition>>,
    /// Invariant: per broker, the partitions whose ELR holds it; no broker maps to an empty set.
    in_elr: HashMap<i32, OrdSet<TopicPartition>>,
    /// Invariant: the partitions whose leader is `NO_LEADER`.
    leaderless: OrdSet<TopicPartition>,
    /// Invariant: how many partitions are not led by their first replica (Java's
    /// `PreferredReplicaImbalanceCount`, kept by its metrics publisher the same way).
    not_preferred: usize,
}

impl std::fmt::Debug for PartitionIndex {
    // The full index would repeat the whole image in every Debug print of it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionIndex")
            .field("isr_brokers", &self.in_isr.len())
            .field("elr_brokers", &self.in_elr.len())
            .field("leaderless", &self.leaderless.len())
            .field("not_preferred", &self.not_preferred)
            .finish()
    }
}

impl PartitionIndex {
    /// The index of `topics` by a full walk: what the maintained one must equal.
    pub fn of<'a>(topics: impl IntoIterator<Item = &'a Topic>) -> PartitionIndex {
        let mut index = PartitionIndex::default();
        for topic in topics {
            index.add_topic(topic);
        }
        index
    }

    /// The partitions with `broker` in their ISR, in image order.
    pub fn with_in_isr(&self, broker: i32) -> impl Iterator<Item = &TopicPartition> {
        self.in_isr.get(&broker).into_iter().flatten()
    }

    /// The partitions with `broker` in their ELR, in image order.
    pub fn with_in_elr(&self, broker: i32) -> impl Iterator<Item = &TopicPartition> {
        self.in_elr.get(&broker).into_iter().flatten()
    }

    /// The partitions without a leader, in image order.
    pub fn leaderless(&self) -> impl Iterator<Item = &TopicPartition> {
        self.leaderless.iter()
    }

    /// How many partitions have no leader.
    pub fn leaderless_count(&self) -> usize {
        self.leaderless.len()
    }

    /// How many partitions are not led by their first replica.
    pub fn not_preferred_count(&self) -> usize {
        self.not_preferred
    }

    /// A partition's registration changes from `old` (none: new) to `new` (none: removed).
    pub fn update(
        &mut self,
        partition: TopicPartition,
        old: Option<&PartitionRegistration>,
        new: Option<&PartitionRegistration>,
    ) {
        let isr = |p: Option<&PartitionRegistration>| p.map(|p| p.isr.clone()).unwrap_or_default();
        let elr = |p: Option<&PartitionRegistration>| p.map(|p| p.elr.clone()).unwrap_or_default();
        move_members(&mut self.in_isr, partition, &isr(old), &isr(new));
        move_members(&mut self.in_elr, partition, &elr(old), &elr(new));
        if new.is_some_and(|p| p.leader == NO_LEADER) {
            self.leaderless.insert(partition);
        } else if old.is_some_and(|p| p.leader == NO_LEADER) {
            self.leaderless.remove(&partition);
        }
        let not_preferred = |p: Option<&PartitionRegistration>| {
            p.is_some_and(|p| p.replicas.first() != Some(&p.leader))
        };
        // Saturating: a broken invariant shows in `TopicsImage::check`, not as a wrapped count.
        self.not_preferred = self
            .not_preferred
            .saturating_sub(usize::from(not_preferred(old)));
        self.not_preferred += usize::from(not_preferred(new));
    }

    /// Every partition of a topic joins the index.
    pub fn add_topic(&mut self, topic: &Topic) {
        for (id, p) in &topic.partitions {
            self.update((topic.id, *id), None, Some(p));
        }
    }

    /// Every partition of a topic leaves the index.
    pub fn remove_topic(&mut self, topic: &Topic) {
        for (id, p) in &topic.partitions {
            self.update((topic.id, *id), Some(p), None);
        }
    }
}

/// The partition leaves the sets of the brokers only in `old` and joins those only in `new`.
fn move_members(
    sets: &mut HashMap<i32, OrdSet<TopicPartition>>,
    partition: TopicPartition,
    old: &[i32],
    new: &[i32],
) {
    for broker in old.iter().filter(|b| !new.contains(b)) {
        if let Some(set) = sets.get_mut(broker) {
            set.remove(&partition);
            if set.is_empty() {
                sets.remove(broker);
            }
        }
    }
    for broker in new.iter().filter(|b| !old.contains(b)) {
        sets.entry(*broker).or_default().insert(partition);
    }
}
