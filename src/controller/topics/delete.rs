//! DeleteTopics at the active controller, as Kafka 4.4's `ControllerApis.deleteTopics` and
//! `ReplicationControlManager.deleteTopics` decide it: entries naming neither or both a name
//! and an id are refused, names and ids given twice are refused, ids and names are resolved
//! against the committed image (Java's reads run at the last stable offset), a name that maps
//! to an id also given is refused, and every topic left is removed (one RemoveTopicRecord each,
//! one batch) if the latest image still has it. The results are shuffled, as Java shuffles
//! them so that their order tells nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::errors::TopicError;
use super::TopicRandom;
use crate::controller::acls::authorizer::Denied;
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

/// What the requester may do to a topic: `ControllerApis` filters the names by DESCRIBE and
/// DELETE on each topic (both granted by DELETE on the cluster).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub describe: bool,
    pub delete: bool,
}

impl Access {
    pub const ALL: Access = Access {
        describe: true,
        delete: true,
    };
}

fn unauthorized(name: Option<String>, id: Uuid) -> Deletion {
    Deletion {
        name,
        id,
        outcome: Err(TopicError::Denied(Denied::Topic)),
    }
}

/// Names (as v0-5 send them) and entries of a name or an id (v6+); `access` says what the
/// requester may do to each topic, by name.
pub fn delete_topics(
    latest: &MetadataImage,
    stable: &MetadataImage,
    names: &[String],
    entries: &[(Option<String>, Uuid)],
    access: impl Fn(&str) -> Access,
    random: &mut TopicRandom,
) -> ControllerResult<Vec<Deletion>> {
    let mut results = Vec::new();
    let refuse = |name: Option<String>, id: Uuid, m: &'static str| Deletion {
        name,
        id,
        outcome: Err(TopicError::InvalidRequest(m)),
    };
    // Sets beside the lists: a request may name 100,000 topics. A name (id) given twice is
    // refused once and dropped from those provided; the rest keep their first order.
    let mut provided_names: Vec<String> = Vec::new();
    let mut seen_names: HashSet<String> = HashSet::new();
    let mut duplicate_names: Vec<String> = Vec::new();
    let mut duplicate_name_set: HashSet<String> = HashSet::new();
    let mut add_name = |n: &String| {
        if seen_names.insert(n.clone()) {
            provided_names.push(n.clone());
        } else if duplicate_name_set.insert(n.clone()) {
            duplicate_names.push(n.clone());
        }
    };
    for n in names {
        add_name(n);
    }
    let mut provided_ids: Vec<Uuid> = Vec::new();
    let mut seen_ids: HashSet<Uuid> = HashSet::new();
    let mut duplicate_ids: Vec<Uuid> = Vec::new();
    let mut duplicate_id_set: HashSet<Uuid> = HashSet::new();
    for (name, id) in entries {
        match (name, *id == Uuid::ZERO) {
            (None, true) => results.push(refuse(None, Uuid::ZERO, NEITHER)),
            (None, false) => {
                if seen_ids.insert(*id) {
                    provided_ids.push(*id);
                } else if duplicate_id_set.insert(*id) {
                    duplicate_ids.push(*id);
                }
            }
            (Some(n), true) => add_name(n),
            (Some(_), false) => results.push(refuse(name.clone(), *id, BOTH)),
        }
    }
    provided_names.retain(|n| !duplicate_name_set.contains(n));
    provided_ids.retain(|id| !duplicate_id_set.contains(id));
    for n in &duplicate_names {
        results.push(refuse(Some(n.clone()), Uuid::ZERO, DUPLICATE_NAME));
    }
    for id in &duplicate_ids {
        results.push(refuse(None, *id, DUPLICATE_ID));
    }
    // The topics to delete, by id, in insertion order (a slot emptied when refused after all).
    let mut to_delete: Vec<Option<(Uuid, String)>> = Vec::new();
    let mut slot_of: HashMap<Uuid, usize> = HashMap::new();
    for id in &provided_ids {
        match stable.topics.by_id.get(id) {
            None => results.push(Deletion {
                name: None,
                id: *id,
                outcome: Err(TopicError::UnknownTopicId),
            }),
            Some(t) => {
                // An id the requester may not delete: its name only if it may describe it.
                let may = access(&t.name);
                if !may.delete {
                    results.push(unauthorized(may.describe.then(|| t.name.to_string()), *id));
                    continue;
                }
                slot_of.insert(*id, to_delete.len());
                to_delete.push(Some((*id, t.name.to_string())));
            }
        }
    }
    let mut refused_ids: BTreeSet<Uuid> = duplicate_ids.iter().copied().collect();
    for name in &provided_names {
        // A name the requester may not describe is refused before it is looked up.
        let may = access(name);
        if !may.describe {
            results.push(unauthorized(Some(name.clone()), Uuid::ZERO));
            continue;
        }
        match stable.topics.by_name.get(name.as_str()) {
            Some(_) if !may.delete => results.push(unauthorized(Some(name.clone()), Uuid::ZERO)),
            None => results.push(Deletion {
                name: Some(name.clone()),
                id: Uuid::ZERO,
                outcome: Err(TopicError::UnknownTopic { with_message: true }),
            }),
            Some(id) => {
                let already = slot_of.remove(id);
                if refused_ids.contains(id) || already.is_some() {
                    refused_ids.insert(*id);
                    if let Some(i) = already {
                        to_delete[i] = None;
                    }
                    results.push(refuse(Some(name.clone()), *id, NAME_MAPS_TO_GIVEN_ID));
                } else {
                    slot_of.insert(*id, to_delete.len());
                    to_delete.push(Some((*id, name.clone())));
                }
            }
        }
    }
    let to_delete: Vec<(Uuid, String)> = to_delete.into_iter().flatten().collect();
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
