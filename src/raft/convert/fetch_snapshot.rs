//! FetchSnapshot (api key 59), v0-1. The partition is looked up by topic *name*.

use super::{leader_endpoint, single};
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{fetch_snapshot_request as req, fetch_snapshot_response as resp};
use crate::raft::config::METADATA_TOPIC;
use crate::raft::msg::{FetchSnapshotRequest, FetchSnapshotResponse};
use crate::raft::types::{OffsetAndEpoch, ReplicaKey};

pub fn request_to_wire(r: &FetchSnapshotRequest, version: i16) -> req::FetchSnapshotRequest {
    req::FetchSnapshotRequest {
        cluster_id: r.cluster_id.clone(),
        replica_id: r.replica_key.id,
        max_bytes: r.max_bytes,
        topics: vec![req::TopicSnapshot {
            name: METADATA_TOPIC.into(),
            partitions: vec![req::PartitionSnapshot {
                partition: 0,
                current_leader_epoch: r.current_leader_epoch,
                snapshot_id: req::SnapshotId {
                    end_offset: r.snapshot_id.offset,
                    epoch: r.snapshot_id.epoch,
                    ..Default::default()
                },
                position: r.position,
                replica_directory_id: if version >= 1 {
                    r.replica_key.wire_directory_id()
                } else {
                    Uuid::ZERO
                },
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

pub fn request_from_wire(w: &req::FetchSnapshotRequest) -> FetchSnapshotRequest {
    // Kafka's `FetchSnapshotRequest.forTopicPartition`: found by name and index.
    let p = w
        .topics
        .iter()
        .filter(|t| t.name == METADATA_TOPIC)
        .flat_map(|t| t.partitions.iter())
        .find(|p| p.partition == 0);
    let d = req::PartitionSnapshot::default();
    let pd = p.unwrap_or(&d);
    FetchSnapshotRequest {
        cluster_id: w.cluster_id.clone(),
        replica_key: ReplicaKey::from_wire(w.replica_id, pd.replica_directory_id),
        max_bytes: w.max_bytes,
        partition_ok: p.is_some(),
        current_leader_epoch: pd.current_leader_epoch,
        snapshot_id: OffsetAndEpoch::new(pd.snapshot_id.end_offset, pd.snapshot_id.epoch),
        position: pd.position,
    }
}

pub fn response_to_wire(r: &FetchSnapshotResponse, version: i16) -> resp::FetchSnapshotResponse {
    if r.error != ErrorCode::NONE {
        return resp::FetchSnapshotResponse {
            error_code: r.error.0,
            ..Default::default()
        };
    }
    let ok = r.partition_error == ErrorCode::NONE;
    let id = r.snapshot_id.unwrap_or(OffsetAndEpoch::new(0, 0));
    let node_endpoints = match (&r.leader_endpoint, version >= 1 && r.leader_id >= 0) {
        (Some(hp), true) => vec![resp::NodeEndpoint {
            node_id: r.leader_id,
            host: hp.host.clone(),
            port: hp.port,
            ..Default::default()
        }],
        _ => Vec::new(),
    };
    resp::FetchSnapshotResponse {
        throttle_time_ms: 0,
        error_code: 0,
        topics: vec![resp::TopicSnapshot {
            name: METADATA_TOPIC.into(),
            partitions: vec![resp::PartitionSnapshot {
                index: 0,
                error_code: r.partition_error.0,
                snapshot_id: resp::SnapshotId {
                    end_offset: id.offset,
                    epoch: id.epoch,
                    ..Default::default()
                },
                current_leader: resp::LeaderIdAndEpoch {
                    leader_id: r.leader_id,
                    leader_epoch: r.leader_epoch,
                    ..Default::default()
                },
                // Kafka's error answers leave these at their schema defaults (0).
                size: if ok { r.size } else { 0 },
                position: if ok { r.position } else { 0 },
                unaligned_records: r.bytes.clone(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        node_endpoints,
        ..Default::default()
    }
}

pub fn response_from_wire(w: &resp::FetchSnapshotResponse) -> FetchSnapshotResponse {
    let p = single(&w.topics)
        .filter(|t| t.name == METADATA_TOPIC)
        .and_then(|t| single(&t.partitions))
        .filter(|p| p.index == 0);
    let Some(p) = p else {
        return FetchSnapshotResponse {
            error: ErrorCode(w.error_code),
            ..FetchSnapshotResponse::default()
        };
    };
    let error = ErrorCode(p.error_code);
    FetchSnapshotResponse {
        error: ErrorCode(w.error_code),
        partition_ok: true,
        partition_error: error,
        snapshot_id: (error == ErrorCode::NONE)
            .then(|| OffsetAndEpoch::new(p.snapshot_id.end_offset, p.snapshot_id.epoch)),
        leader_id: p.current_leader.leader_id,
        leader_epoch: p.current_leader.leader_epoch,
        size: if error == ErrorCode::NONE { p.size } else { -1 },
        position: if error == ErrorCode::NONE {
            p.position
        } else {
            -1
        },
        bytes: p.unaligned_records.clone(),
        leader_endpoint: leader_endpoint(
            p.current_leader.leader_id,
            w.node_endpoints
                .iter()
                .map(|e| (e.node_id, e.host.as_str(), i64::from(e.port))),
        ),
    }
}
