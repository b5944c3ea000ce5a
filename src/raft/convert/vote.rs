//! Vote (api key 52), v0-2.

use super::{leader_endpoint, single, ConvertError};
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{vote_request as req, vote_response as resp};
use crate::raft::config::METADATA_TOPIC;
use crate::raft::msg::{ApiKind, VoteRequest, VoteResponse};
use crate::raft::types::{uuid_opt, ReplicaKey};

pub fn request_to_wire(r: &VoteRequest, version: i16) -> Result<req::VoteRequest, ConvertError> {
    if r.pre_vote && version < 2 {
        return Err(ConvertError::Unsupported {
            api: ApiKind::Vote,
            version,
            what: "PreVote",
        });
    }
    let v1 = version >= 1;
    Ok(req::VoteRequest {
        cluster_id: r.cluster_id.clone(),
        voter_id: if v1 { r.voter_id } else { -1 },
        topics: vec![req::TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![req::PartitionData {
                partition_index: 0,
                replica_epoch: r.candidate_epoch,
                replica_id: r.candidate_key.id,
                replica_directory_id: if v1 {
                    r.candidate_key.wire_directory_id()
                } else {
                    Uuid::ZERO
                },
                voter_directory_id: if v1 {
                    r.voter_directory_id.unwrap_or(Uuid::ZERO)
                } else {
                    Uuid::ZERO
                },
                last_offset_epoch: r.last_offset_epoch,
                last_offset: r.last_offset,
                pre_vote: r.pre_vote,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    })
}

pub fn request_from_wire(w: &req::VoteRequest) -> VoteRequest {
    let p = single(&w.topics)
        .filter(|t| t.topic_name == METADATA_TOPIC)
        .and_then(|t| single(&t.partitions))
        .filter(|p| p.partition_index == 0);
    let d = req::PartitionData::default();
    let pd = p.unwrap_or(&d);
    VoteRequest {
        cluster_id: w.cluster_id.clone(),
        voter_id: w.voter_id,
        voter_directory_id: uuid_opt(pd.voter_directory_id),
        partition_ok: p.is_some(),
        candidate_epoch: pd.replica_epoch,
        candidate_key: ReplicaKey::from_wire(pd.replica_id, pd.replica_directory_id),
        last_offset_epoch: pd.last_offset_epoch,
        last_offset: pd.last_offset,
        pre_vote: pd.pre_vote,
    }
}

pub fn response_to_wire(r: &VoteResponse, version: i16) -> resp::VoteResponse {
    if r.error != ErrorCode::NONE {
        return resp::VoteResponse {
            error_code: r.error.0,
            ..Default::default()
        };
    }
    let node_endpoints = match (&r.leader_endpoint, version >= 1 && r.leader_id >= 0) {
        (Some(hp), true) => vec![resp::NodeEndpoint {
            node_id: r.leader_id,
            host: hp.host.clone(),
            port: hp.port,
            ..Default::default()
        }],
        _ => Vec::new(),
    };
    resp::VoteResponse {
        error_code: 0,
        topics: vec![resp::TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![resp::PartitionData {
                partition_index: 0,
                error_code: r.partition_error.0,
                leader_id: r.leader_id,
                leader_epoch: r.leader_epoch,
                vote_granted: r.vote_granted,
                ..Default::default()
            }],
            ..Default::default()
        }],
        node_endpoints,
        ..Default::default()
    }
}

pub fn response_from_wire(w: &resp::VoteResponse) -> VoteResponse {
    let p = single(&w.topics)
        .filter(|t| t.topic_name == METADATA_TOPIC)
        .and_then(|t| single(&t.partitions))
        .filter(|p| p.partition_index == 0);
    match p {
        Some(p) => VoteResponse {
            error: ErrorCode(w.error_code),
            partition_ok: true,
            partition_error: ErrorCode(p.error_code),
            leader_id: p.leader_id,
            leader_epoch: p.leader_epoch,
            vote_granted: p.vote_granted,
            leader_endpoint: leader_endpoint(
                p.leader_id,
                w.node_endpoints
                    .iter()
                    .map(|e| (e.node_id, e.host.as_str(), i64::from(e.port))),
            ),
        },
        None => VoteResponse {
            error: ErrorCode(w.error_code),
            ..VoteResponse::default()
        },
    }
}
