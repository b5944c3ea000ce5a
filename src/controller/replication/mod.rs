//! Topics and partitions (Kafka's `TopicsImage`, replayed as `TopicsDelta` does).

mod index;
#[cfg(test)]
mod index_tests;
mod partition;

use std::sync::Arc;

use imbl::OrdMap;
use serde_json::{json, Value};

pub use index::{PartitionIndex, TopicPartition};
pub use partition::{
    election_kind, Election, PartitionRegistration, DIRECTORY_LOST, DIRECTORY_MIGRATING,
    DIRECTORY_UNASSIGNED, NO_LEADER, NO_LEADER_CHANGE,
};

use super::error::{InvariantViolation, Refusal};
use super::json::canonical;
use crate::protocol::codec::Uuid;
use crate::protocol::messages::{PartitionChangeRecord, PartitionRecord, TopicRecord};

#[derive(Debug, Clone, PartialEq)]
pub struct Topic {
    pub name: Arc<str>,
    pub id: Uuid,
    pub partitions: OrdMap<i32, Arc<PartitionRegistration>>,
}

/// Only `replay_*` below change the topics, so that the index stays in step with them.
#[derive(Clone, Default)]
pub struct TopicsImage {
    pub by_id: OrdMap<Uuid, Topic>,
    /// Invariant: each name maps to a topic of `by_id` with that name. A log may hold two ids
    /// with one name (Java's image accepts it, its controller never writes it): the name then
    /// maps to the later one.
    pub by_name: OrdMap<Arc<str>, Uuid>,
    /// Invariant: `PartitionIndex::of(by_id.values())`. Derived, so left out of equality.
    index: PartitionIndex,
}

// Two images with the same topics have the same index; comparing it would only cost time.
impl PartialEq for TopicsImage {
    fn eq(&self, other: &TopicsImage) -> bool {
        self.by_id == other.by_id && self.by_name == other.by_name
    }
}

impl std::fmt::Debug for TopicsImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TopicsImage")
            .field("by_id", &self.by_id)
            .field("by_name", &self.by_name)
            .finish_non_exhaustive()
    }
}

impl TopicsImage {
    pub fn replay_topic(&mut self, r: &TopicRecord) {
        let name: Arc<str> = r.name.as_str().into();
        if let Some(old) = self.by_id.get(&r.topic_id) {
            // A TopicRecord for a known id starts the topic over, without its partitions.
            self.index.remove_topic(old);
            let old_name = old.name.clone();
            self.remove_name(&old_name, r.topic_id);
        }
        self.by_name.insert(name.clone(), r.topic_id);
        let topic = Topic {
            name,
            id: r.topic_id,
            partitions: OrdMap::new(),
        };
        self.by_id.insert(r.topic_id, topic);
    }

    fn topic_mut(&mut self, record: &'static str, topic_id: Uuid) -> Result<&mut Topic, Refusal> {
        self.by_id
            .get_mut(&topic_id)
            .ok_or(Refusal::UnknownTopicId { record, topic_id })
    }

    pub fn replay_partition(&mut self, r: &PartitionRecord) -> Result<(), Refusal> {
        let p = PartitionRegistration::from_record(r)?;
        let topic = self.topic_mut("PartitionRecord", r.topic_id)?;
        let p = Arc::new(p);
        let old = topic.partitions.insert(r.partition_id, p.clone());
        self.index
            .update((r.topic_id, r.partition_id), old.as_deref(), Some(&p));
        Ok(())
    }

    pub fn replay_partition_change(&mut self, r: &PartitionChangeRecord) -> Result<(), Refusal> {
        let topic = self.topic_mut("PartitionChangeRecord", r.topic_id)?;
        let prev = topic
            .partitions
            .get(&r.partition_id)
            .ok_or(Refusal::UnknownPartition {
                topic_id: r.topic_id,
                partition: r.partition_id,
            })?;
        let merged = Arc::new(prev.merge(r)?);
        let old = topic.partitions.insert(r.partition_id, merged.clone());
        self.index
            .update((r.topic_id, r.partition_id), old.as_deref(), Some(&merged));
        Ok(())
    }

    /// Removes the topic; returns its name (its configs go with it).
    pub fn replay_remove_topic(&mut self, topic_id: Uuid) -> Result<Arc<str>, Refusal> {
        let topic = self
            .by_id
            .remove(&topic_id)
            .ok_or(Refusal::UnknownTopicId {
                record: "RemoveTopicRecord",
                topic_id,
            })?;
        self.index.remove_topic(&topic);
        self.remove_name(&topic.name, topic_id);
        Ok(topic.name)
    }

    fn remove_name(&mut self, name: &Arc<str>, id: Uuid) {
        if self.by_name.get(name) == Some(&id) {
            self.by_name.remove(name);
        }
    }

    /// ClearElrRecord: the ELR of one topic, or of every topic when the name is empty.
    pub fn replay_clear_elr(&mut self, topic_name: &str) -> Result<(), Refusal> {
        let ids: Vec<Uuid> = if topic_name.is_empty() {
            self.by_id.keys().copied().collect()
        } else {
            let id = self
                .by_name
                .get(topic_name)
                .ok_or_else(|| Refusal::UnknownTopicName {
                    name: topic_name.to_string(),
                })?;
            vec![*id]
        };
        for id in ids {
            let topic = self
                .by_id
                .get_mut(&id)
                .expect("ids were just read from the image");
            let cleared: Vec<(i32, PartitionRegistration)> = topic
                .partitions
                .iter()
                .filter_map(|(p, reg)| reg.cleared_elr().map(|c| (*p, c)))
                .collect();
            for (p, reg) in cleared {
                let reg = Arc::new(reg);
                let old = topic.partitions.insert(p, reg.clone());
                self.index.update((id, p), old.as_deref(), Some(&reg));
            }
        }
        Ok(())
    }

    /// The partitions with `broker` in their ISR, in image order (topics by id, then
    /// partitions by id).
    pub fn with_in_isr(&self, broker: i32) -> impl Iterator<Item = &TopicPartition> {
        self.index.with_in_isr(broker)
    }

    /// The partitions with `broker` in their ELR, in image order.
    pub fn with_in_elr(&self, broker: i32) -> impl Iterator<Item = &TopicPartition> {
        self.index.with_in_elr(broker)
    }

    /// The partitions without a leader, in image order.
    pub fn leaderless(&self) -> impl Iterator<Item = &TopicPartition> {
        self.index.leaderless()
    }

    /// How many partitions have no leader (offline).
    pub fn leaderless_count(&self) -> usize {
        self.index.leaderless_count()
    }

    /// How many partitions are not led by their first replica.
    pub fn not_preferred_count(&self) -> usize {
        self.index.not_preferred_count()
    }

    /// One partition of the image, with its topic.
    pub fn partition(
        &self,
        (topic_id, partition_id): TopicPartition,
    ) -> Option<(&Topic, &Arc<PartitionRegistration>)> {
        let topic = self.by_id.get(&topic_id)?;
        Some((topic, topic.partitions.get(&partition_id)?))
    }

    pub fn partition_count(&self) -> usize {
        self.by_id.values().map(|t| t.partitions.len()).sum()
    }

    pub fn check(&self) -> Result<(), InvariantViolation> {
        for (name, id) in &self.by_name {
            match self.by_id.get(id) {
                Some(t) if &t.name == name => {}
                _ => {
                    return Err(InvariantViolation::TopicNameMismatch {
                        name: name.to_string(),
                        id: *id,
                    })
                }
            }
        }
        if self.index != PartitionIndex::of(self.by_id.values()) {
            return Err(InvariantViolation::PartitionIndexStale);
        }
        Ok(())
    }

    pub fn to_json(&self) -> Value {
        self.by_id
            .iter()
            .map(|(id, t)| {
                let partitions: serde_json::Map<String, Value> = t
                    .partitions
                    .iter()
                    .map(|(p, reg)| (p.to_string(), reg.to_json()))
                    .collect();
                (
                    id.to_string(),
                    json!({"name": &*t.name, "partitions": partitions}),
                )
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    }

    /// The same canonical JSON as `to_json`, written one partition at a time: a million
    /// partitions never stand in memory as one document.
    pub fn write_json(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        // Keys in the order `canonical` sorts them: by their text.
        let mut ids: Vec<(String, &Topic)> = self
            .by_id
            .iter()
            .map(|(id, t)| (id.to_string(), t))
            .collect();
        ids.sort_by(|a, b| a.0.cmp(&b.0));
        out.write_all(b"{")?;
        for (i, (id, topic)) in ids.into_iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut *out, &id)?;
            out.write_all(b":{\"name\":")?;
            serde_json::to_writer(&mut *out, &*topic.name)?;
            out.write_all(b",\"partitions\":{")?;
            let mut partitions: Vec<(String, &PartitionRegistration)> = topic
                .partitions
                .iter()
                .map(|(p, reg)| (p.to_string(), &**reg))
                .collect();
            partitions.sort_by(|a, b| a.0.cmp(&b.0));
            for (j, (p, reg)) in partitions.into_iter().enumerate() {
                if j > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, &p)?;
                out.write_all(b":")?;
                serde_json::to_writer(&mut *out, &canonical(reg.to_json()))?;
            }
            out.write_all(b"}}")?;
        }
        out.write_all(b"}")
    }
}
