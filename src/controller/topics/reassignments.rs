//! ListPartitionReassignments (Kafka 4.4's `ReplicationControlManager.listPartitionReassignments`):
//! a read of the committed image that any controller answers, active or not. Without a topic
//! list, every partition being reassigned; with one, the listed partitions of the listed topics
//! that are being reassigned (unknown topics and partitions are left out).

use crate::controller::MetadataImage;

/// One partition being reassigned: its replicas, and those being added and removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ongoing {
    pub partition: i32,
    pub replicas: Vec<i32>,
    pub adding: Vec<i32>,
    pub removing: Vec<i32>,
}

/// The topics with partitions being reassigned, each with those partitions.
pub fn list_reassignments(
    image: &MetadataImage,
    topics: Option<&[(String, Vec<i32>)]>,
) -> Vec<(String, Vec<Ongoing>)> {
    let ongoing = |id, partitions: &mut dyn Iterator<Item = i32>| {
        let topic = image.topics.by_id.get(id)?;
        let found: Vec<Ongoing> = partitions
            .filter_map(|p| {
                let reg = topic.partitions.get(&p)?;
                (!reg.adding_replicas.is_empty() || !reg.removing_replicas.is_empty()).then(|| {
                    Ongoing {
                        partition: p,
                        replicas: reg.replicas.clone(),
                        adding: reg.adding_replicas.clone(),
                        removing: reg.removing_replicas.clone(),
                    }
                })
            })
            .collect();
        (!found.is_empty()).then(|| (topic.name.to_string(), found))
    };
    match topics {
        None => image
            .topics
            .by_id
            .iter()
            .filter_map(|(id, t)| ongoing(id, &mut t.partitions.keys().copied()))
            .collect(),
        Some(list) => list
            .iter()
            .filter_map(|(name, partitions)| {
                let id = image.topics.by_name.get(name.as_str())?;
                ongoing(id, &mut partitions.iter().copied())
            })
            .collect(),
    }
}
