//! DescribeQuorum (api key 55), v0-2.

use super::{endpoints, single};
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{describe_quorum_request as req, describe_quorum_response as resp};
use crate::raft::config::METADATA_TOPIC;
use crate::raft::msg::{DescribeQuorumRequest, DescribeQuorumResponse, ReplicaDescription};
use crate::raft::types::ReplicaKey;

pub fn request_to_wire(_r: &DescribeQuorumRequest) -> req::DescribeQuorumRequest {
    req::DescribeQuorumRequest {
        topics: vec![req::TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![req::PartitionData {
                partition_index: 0,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

pub fn request_from_wire(w: &req::DescribeQuorumRequest) -> DescribeQuorumRequest {
    let ok = single(&w.topics)
        .filter(|t| t.topic_name == METADATA_TOPIC)
        .and_then(|t| single(&t.partitions))
        .is_some_and(|p| p.partition_index == 0);
    DescribeQuorumRequest { partition_ok: ok }
}

fn replica_to_wire(r: &ReplicaDescription, version: i16) -> resp::ReplicaState {
    resp::ReplicaState {
        replica_id: r.replica_key.id,
        replica_directory_id: if version >= 2 {
            r.replica_key.wire_directory_id()
        } else {
            Uuid::ZERO
        },
        log_end_offset: r.log_end_offset,
        last_fetch_timestamp: if version >= 1 {
            r.last_fetch_timestamp
        } else {
            -1
        },
        last_caught_up_timestamp: if version >= 1 {
            r.last_caught_up_timestamp
        } else {
            -1
        },
        ..Default::default()
    }
}

pub fn response_to_wire(r: &DescribeQuorumResponse, version: i16) -> resp::DescribeQuorumResponse {
    let v2 = version >= 2;
    if r.error != ErrorCode::NONE {
        return resp::DescribeQuorumResponse {
            error_code: r.error.0,
            error_message: if v2 {
                r.error_message.clone()
            } else {
                Some(String::new())
            },
            ..Default::default()
        };
    }
    let partition = if r.partition_error != ErrorCode::NONE {
        // Kafka answers errors with the other fields at their schema defaults.
        resp::PartitionData {
            partition_index: 0,
            error_code: r.partition_error.0,
            error_message: if v2 {
                r.partition_error_message.clone()
            } else {
                Some(String::new())
            },
            ..Default::default()
        }
    } else {
        resp::PartitionData {
            partition_index: 0,
            error_code: 0,
            leader_id: r.leader_id,
            leader_epoch: r.leader_epoch,
            high_watermark: r.high_watermark,
            current_voters: r
                .voters
                .iter()
                .map(|v| replica_to_wire(v, version))
                .collect(),
            observers: r
                .observers
                .iter()
                .map(|v| replica_to_wire(v, version))
                .collect(),
            ..Default::default()
        }
    };
    resp::DescribeQuorumResponse {
        error_code: 0,
        topics: vec![resp::TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![partition],
            ..Default::default()
        }],
        nodes: if v2 {
            r.nodes
                .iter()
                .map(|(id, listeners)| resp::Node {
                    node_id: *id,
                    listeners: listeners
                        .iter()
                        .map(|(name, hp)| resp::Listener {
                            name: name.clone(),
                            host: hp.host.clone(),
                            port: hp.port,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect()
        } else {
            Vec::new()
        },
        ..Default::default()
    }
}

fn replica_from_wire(s: &resp::ReplicaState) -> ReplicaDescription {
    ReplicaDescription {
        replica_key: ReplicaKey::from_wire(s.replica_id, s.replica_directory_id),
        log_end_offset: s.log_end_offset,
        last_fetch_timestamp: s.last_fetch_timestamp,
        last_caught_up_timestamp: s.last_caught_up_timestamp,
    }
}

pub fn response_from_wire(w: &resp::DescribeQuorumResponse) -> DescribeQuorumResponse {
    let p = single(&w.topics)
        .filter(|t| t.topic_name == METADATA_TOPIC)
        .and_then(|t| single(&t.partitions))
        .filter(|p| p.partition_index == 0);
    let base = DescribeQuorumResponse {
        error: ErrorCode(w.error_code),
        error_message: w.error_message.clone().filter(|m| !m.is_empty()),
        ..DescribeQuorumResponse::default()
    };
    let Some(p) = p else { return base };
    if p.error_code != 0 {
        return DescribeQuorumResponse {
            partition_ok: true,
            partition_error: ErrorCode(p.error_code),
            partition_error_message: p.error_message.clone().filter(|m| !m.is_empty()),
            ..base
        };
    }
    DescribeQuorumResponse {
        partition_ok: true,
        leader_id: p.leader_id,
        leader_epoch: p.leader_epoch,
        high_watermark: p.high_watermark,
        voters: p.current_voters.iter().map(replica_from_wire).collect(),
        observers: p.observers.iter().map(replica_from_wire).collect(),
        nodes: w
            .nodes
            .iter()
            .map(|n| {
                (
                    n.node_id,
                    endpoints(
                        n.listeners
                            .iter()
                            .map(|l| (l.name.as_str(), l.host.as_str(), l.port)),
                    ),
                )
            })
            .collect(),
        ..base
    }
}
