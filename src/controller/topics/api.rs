//! What Kafka 4.4's `ControllerApis` does with CreateTopics and CreatePartitions before its
//! quorum controller sees them: names given more than once are answered `Duplicate topic
//! name.` (after the controller's results, in the order of Java's `HashSet` of them), the
//! metadata topic is refused, and CreatePartitions hands its topics on in `HashSet` order.

use std::collections::{HashMap, HashSet};

use super::names::CLUSTER_METADATA_TOPIC;
use crate::controller::java::{hash_map_capacity, hash_order, string_hash};

pub const DUPLICATE_NAME: &str = "Duplicate topic name.";
pub const METADATA_TOPIC_PROHIBITED: &str =
    "Creation of internal topic __cluster_metadata is prohibited.";

/// How a CreateTopics request splits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateScreen {
    /// Indexes of the topics the controller decides, in request order.
    pub decided: Vec<usize>,
    /// Names given more than once, in the order Java answers them.
    pub duplicates: Vec<String>,
    /// `__cluster_metadata` was asked for (once).
    pub metadata_topic: bool,
    /// The names given once, in the order Java's `HashSet` of them iterates (after the
    /// duplicates, Java answers the metadata topic and the topics it may not create so).
    pub unique: Vec<String>,
}

fn set_order(names: Vec<String>, max_len: usize) -> Vec<String> {
    hash_order(
        names.into_iter().map(|n| (string_hash(&n), n)).collect(),
        hash_map_capacity(max_len),
    )
}

pub fn screen_create_topics(names: &[&str]) -> CreateScreen {
    // Sets, not lists: a request may name 100,000 topics.
    let (seen, duplicates) = seen_and_duplicates(names);
    let decided = names
        .iter()
        .enumerate()
        .filter(|(_, n)| !duplicates.contains(n) && **n != CLUSTER_METADATA_TOPIC)
        .map(|(i, _)| i)
        .collect();
    let count = duplicates.len();
    // The set of names given once held at most this many at a time (a duplicate leaves it).
    let (mut held, mut most) = (0usize, 0usize);
    let mut state: HashMap<&str, bool> = HashMap::new();
    for n in names {
        match state.get(n) {
            None => {
                state.insert(n, true);
                held += 1;
                most = most.max(held);
            }
            Some(true) => {
                state.insert(n, false);
                held -= 1;
            }
            Some(false) => {}
        }
    }
    let mut unique: Vec<String> = Vec::new();
    for n in names {
        if state.get(n) == Some(&true) {
            state.insert(n, false);
            unique.push(n.to_string());
        }
    }
    CreateScreen {
        decided,
        metadata_topic: seen.contains(CLUSTER_METADATA_TOPIC)
            && !duplicates.contains(CLUSTER_METADATA_TOPIC),
        duplicates: set_order(duplicates.iter().map(|s| s.to_string()).collect(), count),
        unique: hash_order(
            unique.into_iter().map(|n| (string_hash(&n), n)).collect(),
            hash_map_capacity(most),
        ),
    }
}

/// The names given, and those given more than once (in the order their second mention came).
fn seen_and_duplicates<'a>(names: &[&'a str]) -> (HashSet<&'a str>, IndexedSet<'a>) {
    let mut seen = HashSet::new();
    let mut duplicates = IndexedSet::default();
    for n in names {
        if !seen.insert(*n) {
            duplicates.insert(n);
        }
    }
    (seen, duplicates)
}

/// Names in insertion order, with a set to look them up.
#[derive(Default)]
struct IndexedSet<'a> {
    order: Vec<&'a str>,
    set: HashSet<&'a str>,
}

impl<'a> IndexedSet<'a> {
    fn insert(&mut self, n: &'a str) {
        if self.set.insert(n) {
            self.order.push(n);
        }
    }

    fn contains(&self, n: &str) -> bool {
        self.set.contains(n)
    }

    fn len(&self) -> usize {
        self.order.len()
    }

    fn iter(&self) -> impl Iterator<Item = &&'a str> {
        self.order.iter()
    }
}

/// How a CreatePartitions request splits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionsScreen {
    /// Names given more than once, answered first, in Java's order.
    pub duplicates: Vec<String>,
    /// Indexes of the topics the controller decides, in the order Java hands them on.
    pub decided: Vec<usize>,
}

pub fn screen_create_partitions(names: &[&str]) -> PartitionsScreen {
    let (_, dups) = seen_and_duplicates(names);
    let dup_count = dups.len();
    let duplicates = set_order(dups.iter().map(|s| s.to_string()).collect(), dup_count);
    // Each name's first index, in request order.
    let mut first: HashMap<&str, usize> = HashMap::new();
    let mut unique: Vec<&str> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if !first.contains_key(n) {
            first.insert(n, i);
            unique.push(n);
        }
    }
    let all = unique.len();
    let remaining: Vec<String> = unique
        .iter()
        .filter(|n| !dups.contains(n))
        .map(|s| s.to_string())
        .collect();
    let decided = set_order(remaining, all)
        .into_iter()
        .map(|n| first[n.as_str()])
        .collect();
    PartitionsScreen {
        duplicates,
        decided,
    }
}
