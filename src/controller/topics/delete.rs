//! DeleteTopics at the active controller, as Kafka 4.4's `ControllerApis.deleteTopics` and
//! `ReplicationControlManager.deleteTopics` decide it: entries naming neither or both a name
//! and an id are refused, names and ids given twice are refused, ids and names are resolved
//! against the committed image (Java's reads run at the last stable offset), a name that maps
//! to an id also given is refused, and every topic left is removed (one RemoveTopicRecord each,
//! one batch) if the latest image still has it. The results are shuffled, as Java shuffles
//! them so that their order tells nothing.

use std::collections::{BTreeMap, BTreeSet};

use super::errors::TopicError;
use super::TopicRandom;
use crate::controller::java::{hash_map_capacity, hash_order, uuid_hash};
use crate::controller::{ControllerResult, MetadataImage};
use crate::protocol::codec::Uuid;
use crate::protocol::messages::RemoveTopicRecord;
use crate::protocol::records::MetadataRecordAndVersion;

/// One result: the name and id as Java reports them, and the outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Deletion {
    pub name: Option<String>,
    pub id: Uuid,
    pub outcome: Result<(), TopicError>,
}

const NEITHER: &str = "Neither topic name nor id were specified.";
const BOTH: &str = "You may not specify both topic name and topic id.";
const DUPLICATE_NAME: &str = "Duplicate topic name.";
const DUPLICATE_ID: &str = "Duplicate topic id.";
const NAME_MAPS_TO_GIVEN_ID: &str =
    "The provided topic name maps to an ID that was already supplied.";

/// Names (as v0-5 send them) and entries of a name or an id (v6+).
pub fn delete_topics(
    latest: &MetadataImage,
    stable: &MetadataImage,
    names: &[String],
    entries: &[(Option<String>, Uuid)],
    random: &mut TopicRandom,
) -> ControllerResult<Vec<Deletion>> {
    let mut results = Vec::new();
    let refuse = |name: Option<String>, id: Uuid, m: &'static str| Deletion {
        name,
        id,
        outcome: Err(TopicError::InvalidRequest(m)),
    };
    let mut provided_names: Vec<String> = Vec::new();
    let mut duplicate_names: Vec<String> = Vec::new();
    let add_name = |n: &String, provided: &mut Vec<String>, dups: &mut Vec<String>| {
        if dups.contains(n) || provided.contains(n) {
            if !dups.contains(n) {
                dups.push(n.clone());
            }
            provided.retain(|p| p != n);
        } else {
            provided.push(n.clone());
        }
    };
    for n in names {
        add_name(n, &mut provided_names, &mut duplicate_names);
    }
    let mut provided_ids: Vec<Uuid> = Vec::new();
    let mut duplicate_ids: Vec<Uuid> = Vec::new();
    for (name, id) in entries {
        match (name, *id == Uuid::ZERO) {
            (None, true) => results.push(refuse(None, Uuid::ZERO, NEITHER)),
            (None, false) => {
                if duplicate_ids.contains(id) || provided_ids.contains(id) {
                    if !duplicate_ids.contains(id) {
                        duplicate_ids.push(*id);
                    }
                    provided_ids.retain(|p| p != id);
                } else {
                    provided_ids.push(*id);
                }
            }
            (Some(n), true) => add_name(n, &mut provided_names, &mut duplicate_names),
            (Some(_), false) => results.push(refuse(name.clone(), *id, BOTH)),
        }
    }
    for n in &duplicate_names {
        results.push(refuse(Some(n.clone()), Uuid::ZERO, DUPLICATE_NAME));
    }
    for id in &duplicate_ids {
        results.push(refuse(None, *id, DUPLICATE_ID));
    }
    // The topics to delete, by id, in insertion order.
    let mut to_delete: Vec<(Uuid, String)> = Vec::new();
    for id in &provided_ids {
        match stable.topics.by_id.get(id) {
            None => results.push(Deletion {
                name: None,
                id: *id,
                outcome: Err(TopicError::UnknownTopicId),
            }),
            Some(t) => to_delete.push((*id, t.name.to_string())),
        }
    }
    let mut refused_ids: BTreeSet<Uuid> = duplicate_ids.iter().copied().collect();
    for name in &provided_names {
        match stable.topics.by_name.get(name.as_str()) {
            None => results.push(Deletion {
                name: Some(name.clone()),
                id: Uuid::ZERO,
                outcome: Err(TopicError::UnknownTopic { with_message: true }),
            }),
            Some(id) => {
                let already = to_delete.iter().position(|(i, _)| i == id);
                if refused_ids.contains(id) || already.is_some() {
                    refused_ids.insert(*id);
                    if let Some(i) = already {
                        to_delete.remove(i);
                    }
                    results.push(refuse(Some(name.clone()), *id, NAME_MAPS_TO_GIVEN_ID));
                } else {
                    to_delete.push((*id, name.clone()));
                }
            }
        }
    }
    // Java's `HashMap<Uuid, String>` of the topics to delete, in its iteration order.
    let capacity = hash_map_capacity(to_delete.len());
    let ordered = hash_order(
        to_delete
            .into_iter()
            .map(|(id, name)| (uuid_hash(&id), (id, name)))
            .collect(),
        capacity,
    );
    let mut records = Vec::new();
    let mut deleted: BTreeMap<Uuid, ()> = BTreeMap::new();
    for (id, name) in ordered {
        let outcome = if latest.topics.by_id.contains_key(&id) && !deleted.contains_key(&id) {
            deleted.insert(id, ());
            records.push(MetadataRecordAndVersion::new(
                RemoveTopicRecord {
                    topic_id: id,
                    ..Default::default()
                },
                0,
            ));
            Ok(())
        } else {
            Err(TopicError::UnknownTopicId)
        };
        results.push(Deletion {
            name: Some(name),
            id,
            outcome,
        });
    }
    random.ids.shuffle(&mut results);
    ControllerResult::new(records, results)
}
