//! BeginQuorumEpoch (api key 53) and EndQuorumEpoch (api key 54), v0-1.

use super::{endpoints, leader_endpoint, single};
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{
    begin_quorum_epoch_request as breq, begin_quorum_epoch_response as bresp,
    end_quorum_epoch_request as ereq, end_quorum_epoch_response as eresp,
};
use crate::raft::config::METADATA_TOPIC;
use crate::raft::msg::{BeginQuorumEpochRequest, EndQuorumEpochRequest, QuorumEpochResponse};
use crate::raft::types::{uuid_opt, ReplicaKey};

pub fn begin_request_to_wire(
    r: &BeginQuorumEpochRequest,
    version: i16,
) -> breq::BeginQuorumEpochRequest {
    let v1 = version >= 1;
    breq::BeginQuorumEpochRequest {
        cluster_id: r.cluster_id.clone(),
        voter_id: if v1 { r.voter_id } else { -1 },
        topics: vec![breq::TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![breq::PartitionData {
                partition_index: 0,
                voter_directory_id: if v1 {
                    r.voter_directory_id.unwrap_or(Uuid::ZERO)
                } else {
                    Uuid::ZERO
                },
                leader_id: r.leader_id,
                leader_epoch: r.leader_epoch,
                ..Default::default()
            }],
            ..Default::default()
        }],
        leader_endpoints: if v1 {
            r.leader_endpoints
                .iter()
                .map(|(name, hp)| breq::LeaderEndpoint {
                    name: name.clone(),
                    host: hp.host.clone(),
                    port: hp.port,
                    ..Default::default()
                })
                .collect()
        } else {
            Vec::new()
        },
        ..Default::default()
    }
}

pub fn begin_request_from_wire(w: &breq::BeginQuorumEpochRequest) -> BeginQuorumEpochRequest {
    let p = single(&w.topics)
        .filter(|t| t.topic_name == METADATA_TOPIC)
        .and_then(|t| single(&t.partitions))
        .filter(|p| p.partition_index == 0);
    let d = breq::PartitionData::default();
    let pd = p.unwrap_or(&d);
    BeginQuorumEpochRequest {
        cluster_id: w.cluster_id.clone(),
        voter_id: w.voter_id,
        voter_directory_id: uuid_opt(pd.voter_directory_id),
        partition_ok: p.is_some(),
        leader_id: pd.leader_id,
        leader_epoch: pd.leader_epoch,
        leader_endpoints: endpoints(
            w.leader_endpoints
                .iter()
                .map(|e| (e.name.as_str(), e.host.as_str(), e.port)),
        ),
    }
}

pub fn end_request_to_wire(r: &EndQuorumEpochRequest, version: i16) -> ereq::EndQuorumEpochRequest {
    let v1 = version >= 1;
    ereq::EndQuorumEpochRequest {
        cluster_id: r.cluster_id.clone(),
        topics: vec![ereq::TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![ereq::PartitionData {
                partition_index: 0,
                leader_id: r.leader_id,
                leader_epoch: r.leader_epoch,
                preferred_successors: if v1 {
                    Vec::new()
                } else {
                    r.preferred_candidates.iter().map(|k| k.id).collect()
                },
                preferred_candidates: if v1 {
                    r.preferred_candidates
                        .iter()
                        .map(|k| ereq::ReplicaInfo {
                            candidate_id: k.id,
                            candidate_directory_id: k.wire_directory_id(),
                            ..Default::default()
                        })
                        .collect()
                } else {
                    Vec::new()
                },
                ..Default::default()
            }],
            ..Default::default()
        }],
        leader_endpoints: if v1 {
            r.leader_endpoints
                .iter()
                .map(|(name, hp)| ereq::LeaderEndpoint {
                    name: name.clone(),
                    host: hp.host.clone(),
                    port: hp.port,
                    ..Default::default()
                })
                .collect()
        } else {
            Vec::new()
        },
        ..Default::default()
    }
}

pub fn end_request_from_wire(w: &ereq::EndQuorumEpochRequest) -> EndQuorumEpochRequest {
    let p = single(&w.topics)
        .filter(|t| t.topic_name == METADATA_TOPIC)
        .and_then(|t| single(&t.partitions))
        .filter(|p| p.partition_index == 0);
    let d = ereq::PartitionData::default();
    let pd = p.unwrap_or(&d);
    // v0 carries ids (PreferredSuccessors), v1 keys (PreferredCandidates).
    let preferred_candidates = if pd.preferred_candidates.is_empty() {
        pd.preferred_successors
            .iter()
            .map(|&id| ReplicaKey::of_id(id))
            .collect()
    } else {
        pd.preferred_candidates
            .iter()
            .map(|c| ReplicaKey::from_wire(c.candidate_id, c.candidate_directory_id))
            .collect()
    };
    EndQuorumEpochRequest {
        cluster_id: w.cluster_id.clone(),
        partition_ok: p.is_some(),
        leader_id: pd.leader_id,
        leader_epoch: pd.leader_epoch,
        preferred_candidates,
        leader_endpoints: endpoints(
            w.leader_endpoints
                .iter()
                .map(|e| (e.name.as_str(), e.host.as_str(), e.port)),
        ),
    }
}

macro_rules! epoch_response {
    ($to:ident, $from:ident, $m:ident, $t:ident) => {
        pub fn $to(r: &QuorumEpochResponse, version: i16) -> $m::$t {
            if r.error != ErrorCode::NONE {
                return $m::$t {
                    error_code: r.error.0,
                    ..Default::default()
                };
            }
            let node_endpoints = match (&r.leader_endpoint, version >= 1 && r.leader_id >= 0) {
                (Some(hp), true) => {
                    vec![$m::NodeEndpoint {
                        node_id: r.leader_id,
                        host: hp.host.clone(),
                        port: hp.port,
                        ..Default::default()
                    }]
                }
                _ => Vec::new(),
            };
            $m::$t {
                error_code: 0,
                topics: vec![$m::TopicData {
                    topic_name: METADATA_TOPIC.into(),
                    partitions: vec![$m::PartitionData {
                        partition_index: 0,
                        error_code: r.partition_error.0,
                        leader_id: r.leader_id,
                        leader_epoch: r.leader_epoch,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                node_endpoints,
                ..Default::default()
            }
        }

        pub fn $from(w: &$m::$t) -> QuorumEpochResponse {
            let p = single(&w.topics)
                .filter(|t| t.topic_name == METADATA_TOPIC)
                .and_then(|t| single(&t.partitions))
                .filter(|p| p.partition_index == 0);
            match p {
                Some(p) => QuorumEpochResponse {
                    error: ErrorCode(w.error_code),
                    partition_ok: true,
                    partition_error: ErrorCode(p.error_code),
                    leader_id: p.leader_id,
                    leader_epoch: p.leader_epoch,
                    leader_endpoint: leader_endpoint(
                        p.leader_id,
                        w.node_endpoints
                            .iter()
                            .map(|e| (e.node_id, e.host.as_str(), i64::from(e.port))),
                    ),
                },
                None => QuorumEpochResponse {
                    error: ErrorCode(w.error_code),
                    ..QuorumEpochResponse::default()
                },
            }
        }
    };
}

epoch_response!(
    begin_response_to_wire,
    begin_response_from_wire,
    bresp,
    BeginQuorumEpochResponse
);
epoch_response!(
    end_response_to_wire,
    end_response_from_wire,
    eresp,
    EndQuorumEpochResponse
);
