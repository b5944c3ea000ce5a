//! The error messages of Kafka's voter-change handlers, worded as Java words them (an admin
//! client prints them), with Java's `ReplicaKey` and `Optional` spellings.

use crate::raft::types::{Offset, ReplicaKey, VoterSet};

/// Java's `ReplicaKey.toString` (as Kafka 4.4 prints it in these messages).
pub fn replica_key(k: &ReplicaKey) -> String {
    match k.directory_id {
        Some(d) => format!("ReplicaKey(id={}, directoryId={d})", k.id),
        None => format!("ReplicaKey(id={}, directoryId=<undefined>)", k.id),
    }
}

/// Java's `Set<ReplicaKey>.toString` (in id order; Java's hash order is not reproducible).
pub fn voter_keys(v: &VoterSet) -> String {
    let keys: Vec<String> = v.nodes().map(|n| replica_key(&n.key)).collect();
    format!("[{}]", keys.join(", "))
}

pub fn cluster_id_mismatch(given: &str, ours: &str) -> String {
    format!("The given id \"{given}\" doesn't match the cluster id \"{ours}\"")
}

pub const PREVIOUS_CHANGE_PENDING: &str =
    "Request timed out waiting for leader to handle previous voter change request";

pub const NO_HIGH_WATERMARK: &str =
    "Request timed out waiting for leader to establish HWM and fence previous voter changes";

/// `verb` is "adding" or "removing".
pub fn kraft_version_unsupported(verb: &str, kraft_version: i16) -> String {
    format!(
        "Cluster doesn't support {verb} voter because the kraft.version feature is {kraft_version}"
    )
}

pub fn latest_change_uncommitted(latest: Option<Offset>, hw: Offset) -> String {
    let at = latest.map_or("Optional.empty".to_string(), |o| format!("Optional[{o}]"));
    format!(
        "Request timed out waiting for voters to commit the latest voter change at {at} with HWM {hw}"
    )
}

/// Kafka's default message of `REQUEST_TIMED_OUT` (an expired change carries it).
pub const TIMED_OUT: &str = "The request timed out.";
