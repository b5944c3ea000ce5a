//! What Kafka 4.4's `ControllerApis` does with CreateTopics and CreatePartitions before its
//! quorum controller sees them: names given more than once are answered `Duplicate topic
//! name.` (after the controller's results, in the order of Java's `HashSet` of them), the
//! metadata topic is refused, and CreatePartitions hands its topics on in `HashSet` order.

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
}

fn set_order(names: Vec<String>, max_len: usize) -> Vec<String> {
    hash_order(
        names.into_iter().map(|n| (string_hash(&n), n)).collect(),
        hash_map_capacity(max_len),
    )
}

pub fn screen_create_topics(names: &[&str]) -> CreateScreen {
    let mut unique: Vec<&str> = Vec::new();
    let mut duplicates: Vec<&str> = Vec::new();
    for n in names {
        if duplicates.contains(n) {
            continue;
        }
        if unique.contains(n) {
            unique.retain(|u| u != n);
            duplicates.push(n);
        } else {
            unique.push(n);
        }
    }
    let decided = names
        .iter()
        .enumerate()
        .filter(|(_, n)| !duplicates.contains(n) && **n != CLUSTER_METADATA_TOPIC)
        .map(|(i, _)| i)
        .collect();
    let count = duplicates.len();
    CreateScreen {
        decided,
        duplicates: set_order(duplicates.iter().map(|s| s.to_string()).collect(), count),
        metadata_topic: unique.contains(&CLUSTER_METADATA_TOPIC),
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
    let mut unique: Vec<&str> = Vec::new();
    let mut duplicates: Vec<&str> = Vec::new();
    for n in names {
        if unique.contains(n) {
            if !duplicates.contains(n) {
                duplicates.push(n);
            }
        } else {
            unique.push(n);
        }
    }
    let dup_count = duplicates.len();
    let duplicates = set_order(
        duplicates.iter().map(|s| s.to_string()).collect(),
        dup_count,
    );
    let all = unique.len();
    let remaining: Vec<String> = unique
        .iter()
        .filter(|n| !duplicates.iter().any(|d| d == *n))
        .map(|s| s.to_string())
        .collect();
    let decided = set_order(remaining, all)
        .into_iter()
        .map(|n| {
            names
                .iter()
                .position(|x| *x == n)
                .expect("a requested name")
        })
        .collect();
    PartitionsScreen {
        duplicates,
        decided,
    }
}
