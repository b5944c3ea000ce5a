//! Partition leadership, reassignments and directory assignments as a non-active controller
//! answers them.

use super::*;

pub fn elect_leaders(r: &ElectLeadersRequest, v: i16, ctx: &NonActive) -> ElectLeadersResponse {
    elect_leaders_failed(r, v, NOT_CONTROLLER, &ctx.message())
}

/// The answer of a request that failed as a whole: nothing for an empty partition list (a null
/// one means every partition), else [`elect_leaders_error`].
pub fn elect_leaders_failed(
    r: &ElectLeadersRequest,
    v: i16,
    code: i16,
    message: &str,
) -> ElectLeadersResponse {
    if r.topic_partitions.as_ref().is_some_and(|t| t.is_empty()) {
        return ElectLeadersResponse::default();
    }
    elect_leaders_error(r, v, code, Some(message.to_string()))
}

/// `ElectLeadersRequest.getErrorResponse`: the error at the top (v1+) and for every named
/// partition.
pub fn elect_leaders_error(
    r: &ElectLeadersRequest,
    v: i16,
    code: i16,
    message: Option<String>,
) -> ElectLeadersResponse {
    ElectLeadersResponse {
        error_code: if v >= 1 { code } else { 0 },
        replica_election_results: r
            .topic_partitions
            .iter()
            .flatten()
            .map(|t| ReplicaElectionResult {
                topic: t.topic.clone(),
                partition_result: t
                    .partitions
                    .iter()
                    .map(|&p| PartitionResult {
                        partition_id: p,
                        error_code: code,
                        error_message: message.clone(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub fn alter_partition_reassignments(
    r: &AlterPartitionReassignmentsRequest,
    _v: i16,
    ctx: &NonActive,
) -> AlterPartitionReassignmentsResponse {
    if r.topics.is_empty() {
        return AlterPartitionReassignmentsResponse::default();
    }
    alter_partition_reassignments_error(r, NOT_CONTROLLER, Some(ctx.message()))
}

/// The error at the top and for every partition named.
pub fn alter_partition_reassignments_error(
    r: &AlterPartitionReassignmentsRequest,
    code: i16,
    message: Option<String>,
) -> AlterPartitionReassignmentsResponse {
    AlterPartitionReassignmentsResponse {
        error_code: code,
        error_message: message.clone(),
        responses: r
            .topics
            .iter()
            .map(|t| reassign::ReassignableTopicResponse {
                name: t.name.clone(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| reassign::ReassignablePartitionResponse {
                        partition_index: p.partition_index,
                        error_code: code,
                        error_message: message.clone(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub fn list_partition_reassignments(
    r: &ListPartitionReassignmentsRequest,
    _v: i16,
    ctx: &NonActive,
) -> ListPartitionReassignmentsResponse {
    if r.topics.as_ref().is_some_and(|t| t.is_empty()) {
        return ListPartitionReassignmentsResponse {
            error_message: None,
            ..Default::default()
        };
    }
    // A Java follower lists the reassignments in its own copy of the metadata; kraftd holds
    // none yet, so it sends the client to the active controller.
    list_partition_reassignments_error(r, NOT_CONTROLLER, Some(ctx.message()))
}

/// The error at the top, and every partition named listed without replicas.
pub fn list_partition_reassignments_error(
    r: &ListPartitionReassignmentsRequest,
    code: i16,
    message: Option<String>,
) -> ListPartitionReassignmentsResponse {
    ListPartitionReassignmentsResponse {
        error_code: code,
        error_message: message,
        topics: r
            .topics
            .iter()
            .flatten()
            .map(|t| list_reassign::OngoingTopicReassignment {
                name: t.name.clone(),
                partitions: t
                    .partition_indexes
                    .iter()
                    .map(|&p| list_reassign::OngoingPartitionReassignment {
                        partition_index: p,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub fn alter_partition(
    r: &AlterPartitionRequest,
    _v: i16,
    _ctx: &NonActive,
) -> AlterPartitionResponse {
    AlterPartitionResponse {
        error_code: if r.topics.is_empty() {
            0
        } else {
            NOT_CONTROLLER
        },
        ..Default::default()
    }
}

pub fn assign_replicas_to_dirs(
    _r: &AssignReplicasToDirsRequest,
    _v: i16,
    _ctx: &NonActive,
) -> AssignReplicasToDirsResponse {
    AssignReplicasToDirsResponse {
        error_code: NOT_CONTROLLER,
        ..Default::default()
    }
}
