//! Topics and partitions (Kafka's `TopicsImage`, replayed as `TopicsDelta` does).

mod partition;

use std::sync::Arc;

use imbl::OrdMap;
use serde_json::{json, Value};

pub use partition::{
    PartitionRegistration, DIRECTORY_LOST, DIRECTORY_MIGRATING, DIRECTORY_UNASSIGNED,
    NO_LEADER_CHANGE,
};

use super::error::Refusal;
use super::json::canonical;
use crate::protocol::codec::Uuid;
use crate::protocol::messages::{PartitionChangeRecord, PartitionRecord, TopicRecord};

#[derive(Debug, Clone, PartialEq)]
pub struct Topic {
    pub name: Arc<str>,
    pub id: Uuid,
    pub partitions: OrdMap<i32, Arc<PartitionRegistration>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TopicsImage {
    pub by_id: OrdMap<Uuid, Topic>,
    /// Invariant: each name maps to a topic of `by_id` with that name. A log may hold two ids
    /// with one name (Java's image accepts it, its controller never writes it): the name then
    /// maps to the later one.
    pub by_name: OrdMap<Arc<str>, Uuid>,
}

impl TopicsImage {
    pub fn replay_topic(&mut self, r: &TopicRecord) {
        let name: Arc<str> = r.name.as_str().into();
        if let Some(old) = self.by_id.get(&r.topic_id) {
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
        topic.partitions.insert(r.partition_id, Arc::new(p));
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
        let merged = prev.merge(r)?;
        topic.partitions.insert(r.partition_id, Arc::new(merged));
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
                topic.partitions.insert(p, Arc::new(reg));
            }
        }
        Ok(())
    }

    pub fn partition_count(&self) -> usize {
        self.by_id.values().map(|t| t.partitions.len()).sum()
    }

    pub fn check(&self) -> Result<(), String> {
        for (name, id) in &self.by_name {
            match self.by_id.get(id) {
                Some(t) if &t.name == name => {}
                _ => {
                    return Err(format!(
                        "topic name {name} maps to id {id}, which is not that topic"
                    ))
                }
            }
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
