//! Fetch (api key 1) as the raft layer uses it: v13+ (topic ids), ReplicaState from v15,
//! ReplicaDirectoryId from v17, HighWatermark (KIP-1166) from v18.

use super::records::{decode_batches, encode_batches};
use super::{single, ConvertError};
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{fetch_request as req, fetch_response as resp};
use crate::raft::config::METADATA_TOPIC_ID;
use crate::raft::msg::{ApiKind, FetchRequest, FetchResponse};
use crate::raft::types::{OffsetAndEpoch, ReplicaKey};

/// The lowest Fetch version the raft layer can use (topic ids).
pub const MIN_RAFT_FETCH_VERSION: i16 = 13;

pub fn request_to_wire(r: &FetchRequest, version: i16) -> Result<req::FetchRequest, ConvertError> {
    if version < MIN_RAFT_FETCH_VERSION {
        return Err(ConvertError::Unsupported {
            api: ApiKind::Fetch,
            version,
            what: "topic ids",
        });
    }
    let replica_state = version >= 15;
    Ok(req::FetchRequest {
        cluster_id: r.cluster_id.clone(),
        replica_id: if replica_state { -1 } else { r.replica_key.id },
        replica_state: req::ReplicaState {
            replica_id: if replica_state { r.replica_key.id } else { -1 },
            replica_epoch: -1,
            ..Default::default()
        },
        max_wait_ms: r.max_wait_ms,
        min_bytes: 0,
        max_bytes: r.max_bytes,
        isolation_level: 0,
        session_id: 0,
        session_epoch: -1,
        topics: vec![req::FetchTopic {
            topic_id: METADATA_TOPIC_ID,
            partitions: vec![req::FetchPartition {
                partition: 0,
                current_leader_epoch: r.current_leader_epoch,
                fetch_offset: r.fetch_offset,
                last_fetched_epoch: r.last_fetched_epoch,
                log_start_offset: -1,
                partition_max_bytes: 0,
                replica_directory_id: if version >= 17 {
                    r.replica_key.wire_directory_id()
                } else {
                    Uuid::ZERO
                },
                high_watermark: match r.high_watermark {
                    Some(hw) if version >= 18 => hw,
                    _ => i64::MAX,
                },
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    })
}

pub fn request_from_wire(w: &req::FetchRequest) -> FetchRequest {
    let p = single(&w.topics)
        .filter(|t| t.topic_id == METADATA_TOPIC_ID)
        .and_then(|t| single(&t.partitions))
        .filter(|p| p.partition == 0);
    let d = req::FetchPartition::default();
    let pd = p.unwrap_or(&d);
    // `FetchRequest.replicaId`: the old field unless −1, else ReplicaState.
    let id = if w.replica_id != -1 {
        w.replica_id
    } else {
        w.replica_state.replica_id
    };
    FetchRequest {
        cluster_id: w.cluster_id.clone(),
        replica_key: ReplicaKey::from_wire(id, pd.replica_directory_id),
        max_wait_ms: w.max_wait_ms,
        max_bytes: w.max_bytes,
        partition_ok: p.is_some(),
        current_leader_epoch: pd.current_leader_epoch,
        fetch_offset: pd.fetch_offset,
        last_fetched_epoch: pd.last_fetched_epoch,
        high_watermark: (pd.high_watermark != i64::MAX).then_some(pd.high_watermark),
    }
}

pub fn response_to_wire(
    r: &FetchResponse,
    version: i16,
) -> Result<resp::FetchResponse, ConvertError> {
    if r.error != ErrorCode::NONE {
        return Ok(resp::FetchResponse {
            error_code: r.error.0,
            ..Default::default()
        });
    }
    let mut records = Vec::new();
    encode_batches(&r.records, &mut records)?;
    let node_endpoints = match (&r.leader_endpoint, version >= 17 && r.leader_id >= 0) {
        (Some(hp), true) => vec![resp::NodeEndpoint {
            node_id: r.leader_id,
            host: hp.host.clone(),
            port: i32::from(hp.port),
            rack: None,
            ..Default::default()
        }],
        _ => Vec::new(),
    };
    let mut partition = resp::PartitionData {
        partition_index: 0,
        error_code: r.partition_error.0,
        high_watermark: r.high_watermark,
        log_start_offset: r.log_start_offset,
        current_leader: resp::LeaderIdAndEpoch {
            leader_id: r.leader_id,
            leader_epoch: r.leader_epoch,
            ..Default::default()
        },
        records: Some(records),
        ..Default::default()
    };
    if let Some(d) = r.diverging_epoch {
        partition.diverging_epoch = resp::EpochEndOffset {
            epoch: d.epoch,
            end_offset: d.offset,
            ..Default::default()
        };
    }
    if let Some(s) = r.snapshot_id {
        partition.snapshot_id = resp::SnapshotId {
            end_offset: s.offset,
            epoch: s.epoch,
            ..Default::default()
        };
    }
    Ok(resp::FetchResponse {
        throttle_time_ms: 0,
        error_code: 0,
        session_id: 0,
        responses: vec![resp::FetchableTopicResponse {
            topic_id: METADATA_TOPIC_ID,
            partitions: vec![partition],
            ..Default::default()
        }],
        node_endpoints,
        ..Default::default()
    })
}

pub fn response_from_wire(w: &resp::FetchResponse) -> Result<FetchResponse, ConvertError> {
    let p = single(&w.responses)
        .filter(|t| t.topic_id == METADATA_TOPIC_ID)
        .and_then(|t| single(&t.partitions))
        .filter(|p| p.partition_index == 0);
    let Some(p) = p else {
        return Ok(FetchResponse {
            error: ErrorCode(w.error_code),
            ..FetchResponse::default()
        });
    };
    let leader_id = p.current_leader.leader_id;
    let leader_endpoint = if leader_id >= 0 {
        w.node_endpoints
            .iter()
            .filter(|e| e.node_id == leader_id)
            .find_map(|e| {
                u16::try_from(e.port)
                    .ok()
                    .map(|port| crate::raft::types::HostPort::new(e.host.clone(), port))
            })
    } else {
        None
    };
    let records = match &p.records {
        Some(bytes) if !bytes.is_empty() => decode_batches(bytes)?,
        _ => Vec::new(),
    };
    Ok(FetchResponse {
        error: ErrorCode(w.error_code),
        partition_ok: true,
        partition_error: ErrorCode(p.error_code),
        high_watermark: p.high_watermark,
        log_start_offset: p.log_start_offset,
        // Kafka acts on a DivergingEpoch whose epoch is >= 0, and on a SnapshotId with either
        // field >= 0 (the core refuses negative ones).
        diverging_epoch: (p.diverging_epoch.epoch >= 0)
            .then(|| OffsetAndEpoch::new(p.diverging_epoch.end_offset, p.diverging_epoch.epoch)),
        leader_id,
        leader_epoch: p.current_leader.leader_epoch,
        snapshot_id: (p.snapshot_id.epoch >= 0 || p.snapshot_id.end_offset >= 0)
            .then(|| OffsetAndEpoch::new(p.snapshot_id.end_offset, p.snapshot_id.epoch)),
        records,
        leader_endpoint,
    })
}
