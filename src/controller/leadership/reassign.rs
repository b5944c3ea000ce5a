//! AlterPartitionReassignments (v0-1), decided as Kafka 4.4's
//! `ReplicationControlManager.alterPartitionReassignments` decides it: each partition of the
//! request either starts (or replaces) a reassignment, with the target replicas first and the
//! replicas being removed after them (`PartitionReassignmentReplicas`), or cancels the one in
//! progress, back to the original replicas (`PartitionReassignmentRevert`). The partition
//! change builder then completes a reassignment at once where the ISR already allows it, and
//! otherwise AlterPartition completes it later (`change.rs`).
//!
//! Every partition is decided against the same image (Java reads its state before any of the
//! request's records are replayed), so a partition named twice gets two records.

use std::collections::BTreeSet;

use super::{Election, Leadership};
use crate::controller::replication::{PartitionRegistration, Topic};
use crate::controller::result::ControllerResult;
use crate::controller::topics::create::validate_manual_assignment;
use crate::controller::topics::{AssignmentError, MAX_RECORDS_PER_USER_OP};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_partition_reassignments_response as response;
use crate::protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse,
};
use crate::protocol::records::MetadataRecordAndVersion;

/// Why one partition's reassignment is refused: Java's exception, code and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReassignError {
    #[error("Unable to find a topic named {0}.")]
    UnknownTopic(String),
    #[error("Unable to find partition {topic}:{partition}.")]
    UnknownPartition { topic: String, partition: i32 },
    /// A cancellation of a partition that is not being reassigned.
    #[error("No partition reassignment is in progress.")]
    NoReassignmentInProgress,
    /// A cancellation when every replica is one being added (`PartitionReassignmentRevert`).
    #[error("Invalid replica assignment: addingReplicas contains all replicas.")]
    AllReplicasAdding,
    /// A cancellation that would leave no original replica in the ISR, on a topic that does
    /// not allow unclean elections.
    #[error(
        "Unable to revert partition assignment for {topic}:{partition} because it would require \
         an unclean leader election."
    )]
    UncleanRevert { topic: String, partition: i32 },
    #[error("{0}")]
    Assignment(AssignmentError),
    /// The replica count changes, and the request (v0, or v1 without
    /// `AllowReplicationFactorChange`) does not allow it (KIP-860).
    #[error("The replication factor is changed from {from} to {to}")]
    ReplicationFactorChanged { from: usize, to: usize },
    /// The request already wrote `MAX_RECORDS_PER_USER_OP` records (Java's bounded record
    /// list throws for this partition).
    #[error("Cannot add another element to the list because it would exceed the maximum length of {MAX_RECORDS_PER_USER_OP}")]
    TooManyRecords,
}

impl ReassignError {
    pub fn error_code(&self) -> ErrorCode {
        match self {
            ReassignError::UnknownTopic(_) | ReassignError::UnknownPartition { .. } => {
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
            }
            ReassignError::NoReassignmentInProgress => ErrorCode::NO_REASSIGNMENT_IN_PROGRESS,
            ReassignError::AllReplicasAdding
            | ReassignError::UncleanRevert { .. }
            | ReassignError::Assignment(_) => ErrorCode::INVALID_REPLICA_ASSIGNMENT,
            ReassignError::ReplicationFactorChanged { .. } => ErrorCode::INVALID_REPLICATION_FACTOR,
            ReassignError::TooManyRecords => ErrorCode::UNKNOWN_SERVER_ERROR,
        }
    }

    /// The response's message: `ApiError.fromThrowable` leaves out a message that is the
    /// code's own text, and any message of an unexpected error.
    pub fn message(&self) -> Option<String> {
        match self {
            ReassignError::NoReassignmentInProgress | ReassignError::TooManyRecords => None,
            other => Some(other.to_string()),
        }
    }
}

/// One partition's outcome, by topic name as the request named them.
pub type ReassignOutcomes = Vec<(String, Vec<(i32, Result<(), ReassignError>)>)>;

/// `alterPartitionReassignments`: each partition of the request, in request order.
pub fn alter_partition_reassignments(
    leadership: &Leadership,
    request: &AlterPartitionReassignmentsRequest,
) -> ControllerResult<ReassignOutcomes> {
    let allow_rf_change = request.allow_replication_factor_change;
    let mut records = Vec::new();
    let mut outcomes = Vec::new();
    for t in &request.topics {
        let mut topic_outcomes = Vec::new();
        for p in &t.partitions {
            let outcome = alter_one(
                leadership,
                &t.name,
                p.partition_index,
                p.replicas.as_deref(),
                allow_rf_change,
            )
            .and_then(|record| match record {
                Some(_) if records.len() >= MAX_RECORDS_PER_USER_OP => {
                    Err(ReassignError::TooManyRecords)
                }
                Some(r) => {
                    records.push(r);
                    Ok(())
                }
                None => Ok(()),
            });
            topic_outcomes.push((p.partition_index, outcome));
        }
        outcomes.push((t.name.clone(), topic_outcomes));
    }
    ControllerResult::new(records, outcomes)
}

/// Java's answer: per topic, per partition, the code and message; no top-level message.
pub fn reassign_response(
    outcomes: &ReassignOutcomes,
    allow_rf_change: bool,
) -> AlterPartitionReassignmentsResponse {
    AlterPartitionReassignmentsResponse {
        error_message: None,
        allow_replication_factor_change: allow_rf_change,
        responses: outcomes
            .iter()
            .map(|(name, partitions)| response::ReassignableTopicResponse {
                name: name.clone(),
                partitions: partitions
                    .iter()
                    .map(|(p, r)| response::ReassignablePartitionResponse {
                        partition_index: *p,
                        error_code: r
                            .as_ref()
                            .err()
                            .map_or(ErrorCode::NONE, |e| e.error_code())
                            .0,
                        error_message: r.as_ref().err().and_then(ReassignError::message),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// `alterPartitionReassignment`: one partition's record, if it changes anything.
fn alter_one(
    leadership: &Leadership,
    topic_name: &str,
    partition_id: i32,
    target: Option<&[i32]>,
    allow_rf_change: bool,
) -> Result<Option<MetadataRecordAndVersion>, ReassignError> {
    let image = leadership.image;
    let topic = image
        .topics
        .by_name
        .get(topic_name)
        .and_then(|id| image.topics.by_id.get(id))
        .ok_or_else(|| ReassignError::UnknownTopic(topic_name.to_string()))?;
    let partition =
        topic
            .partitions
            .get(&partition_id)
            .ok_or_else(|| ReassignError::UnknownPartition {
                topic: topic_name.to_string(),
                partition: partition_id,
            })?;
    match target {
        None => cancel(leadership, topic, partition_id, partition),
        Some(target) => change(
            leadership,
            topic,
            partition_id,
            partition,
            target,
            allow_rf_change,
        ),
    }
}

/// `isReassignmentInProgress`.
pub fn is_reassigning(p: &PartitionRegistration) -> bool {
    !p.adding_replicas.is_empty() || !p.removing_replicas.is_empty()
}

/// `cancelPartitionReassignment`: back to the original replicas, without those being added in
/// the ISR; an ISR left empty takes the first original replica, which only a topic allowing
/// unclean elections accepts.
fn cancel(
    leadership: &Leadership,
    topic: &Topic,
    partition_id: i32,
    partition: &PartitionRegistration,
) -> Result<Option<MetadataRecordAndVersion>, ReassignError> {
    if !is_reassigning(partition) {
        return Err(ReassignError::NoReassignmentInProgress);
    }
    let revert = Revert::of(partition)?;
    let unclean_enabled = leadership.unclean_enabled(topic);
    if revert.unclean && !unclean_enabled {
        return Err(ReassignError::UncleanRevert {
            topic: topic.name.to_string(),
            partition: partition_id,
        });
    }
    let acceptable = |r: i32| leadership.is_active(r) && leadership.online_replica(partition, r);
    let default_dir = |b| leadership.default_dir(b);
    let mut change = leadership.change(topic, partition_id, partition, &acceptable, &default_dir);
    if unclean_enabled {
        change = change.election(Election::Unclean);
    }
    Ok(change
        .target_isr(revert.isr)
        .target_replicas(revert.replicas)
        .target_removing(Vec::new())
        .target_adding(Vec::new())
        .build())
}

/// `changePartitionReassignment`: the target checked as a manual assignment (and, unless
/// allowed, for the same replica count), then the replicas, adding and removing sets.
fn change(
    leadership: &Leadership,
    topic: &Topic,
    partition_id: i32,
    partition: &PartitionRegistration,
    target: &[i32],
    allow_rf_change: bool,
) -> Result<Option<MetadataRecordAndVersion>, ReassignError> {
    validate_manual_assignment(leadership.image, target, None)
        .map_err(ReassignError::Assignment)?;
    if !allow_rf_change {
        let from = reassignment_set_size(partition);
        if from != target.len() {
            return Err(ReassignError::ReplicationFactorChanged {
                from,
                to: target.len(),
            });
        }
    }
    let plan = Plan::of(&partition.replicas, target);
    let acceptable = |r: i32| leadership.is_active(r) && leadership.online_replica(partition, r);
    let default_dir = |b| leadership.default_dir(b);
    let mut change = leadership.change(topic, partition_id, partition, &acceptable, &default_dir);
    // Java sets only what differs or is non-empty: an empty adding or removing set keeps the
    // partition's own.
    if plan.replicas != partition.replicas {
        change = change.target_replicas(plan.replicas);
    }
    if !plan.removing.is_empty() {
        change = change.target_removing(plan.removing);
    }
    if !plan.adding.is_empty() {
        change = change.target_adding(plan.adding);
    }
    Ok(change.build())
}

/// `validatePartitionReplicationFactorUnchanged`'s current size: the replicas a reassignment
/// in progress ends with, else the replica count.
fn reassignment_set_size(p: &PartitionRegistration) -> usize {
    if !is_reassigning(p) {
        return p.replicas.len();
    }
    let mut set: BTreeSet<i32> = p
        .replicas
        .iter()
        .chain(&p.adding_replicas)
        .copied()
        .collect();
    for r in &p.removing_replicas {
        set.remove(r);
    }
    set.len()
}

/// `PartitionReassignmentReplicas` from the current and target replicas: those removed and
/// those added, each in ascending order (a `TreeSet`), and the replicas while reassigning,
/// the target followed by those being removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub removing: Vec<i32>,
    pub adding: Vec<i32>,
    pub replicas: Vec<i32>,
}

impl Plan {
    pub fn of(current: &[i32], target: &[i32]) -> Plan {
        let difference = |a: &[i32], b: &[i32]| -> Vec<i32> {
            let set: BTreeSet<i32> = a.iter().filter(|r| !b.contains(r)).copied().collect();
            set.into_iter().collect()
        };
        let removing = difference(current, target);
        let adding = difference(target, current);
        let mut replicas = target.to_vec();
        replicas.extend(&removing);
        Plan {
            removing,
            adding,
            replicas,
        }
    }
}

/// `PartitionReassignmentRevert`: the original replicas (those not being added) and the ISR
/// without the replicas being added; an ISR left empty takes the first original replica, an
/// unclean choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revert {
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub unclean: bool,
}

impl Revert {
    pub fn of(p: &PartitionRegistration) -> Result<Revert, ReassignError> {
        let adding = &p.adding_replicas;
        let replicas: Vec<i32> = p
            .replicas
            .iter()
            .filter(|r| !adding.contains(r))
            .copied()
            .collect();
        let mut isr: Vec<i32> = p
            .isr
            .iter()
            .filter(|r| !adding.contains(r))
            .copied()
            .collect();
        let mut unclean = false;
        if isr.is_empty() {
            let first = *replicas.first().ok_or(ReassignError::AllReplicasAdding)?;
            isr.push(first);
            unclean = true;
        }
        Ok(Revert {
            replicas,
            isr,
            unclean,
        })
    }
}
