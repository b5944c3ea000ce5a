//! The voter-change APIs: AddRaftVoter (80, v0-1), RemoveRaftVoter (81, v0), UpdateRaftVoter
//! (82, v0), and the ApiVersions exchange a leader has with a voter it adds (18: only the
//! error and `SupportedFeatures["kraft.version"]` matter to raft).

use super::endpoints;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::{
    add_raft_voter_request as add_req, api_versions_response as av_resp,
    update_raft_voter_request as upd_req, update_raft_voter_response as upd_resp,
    AddRaftVoterResponse, ApiVersionsRequest, RemoveRaftVoterRequest, RemoveRaftVoterResponse,
};
use crate::raft::msg::{
    AddVoterRequest, ApiVersionsResponse, RemoveVoterRequest, UpdateVoterRequest,
    UpdateVoterResponse, VoterChangeResponse,
};
use crate::raft::types::{HostPort, ReplicaKey};

use crate::protocol::features::KRAFT_VERSION as KRAFT_VERSION_FEATURE;

pub fn add_request_to_wire(r: &AddVoterRequest, version: i16) -> add_req::AddRaftVoterRequest {
    add_req::AddRaftVoterRequest {
        cluster_id: r.cluster_id.clone(),
        timeout_ms: r.timeout_ms,
        voter_id: r.voter.id,
        voter_directory_id: r.voter.wire_directory_id(),
        listeners: r
            .listeners
            .iter()
            .map(|(name, hp)| add_req::Listener {
                name: name.clone(),
                host: hp.host.clone(),
                port: hp.port,
                ..Default::default()
            })
            .collect(),
        // v0 has no field: the leader always waits for the commit.
        ack_when_committed: version < 1 || r.ack_when_committed,
        ..Default::default()
    }
}

pub fn add_request_from_wire(w: &add_req::AddRaftVoterRequest) -> AddVoterRequest {
    AddVoterRequest {
        cluster_id: w.cluster_id.clone(),
        timeout_ms: w.timeout_ms,
        voter: ReplicaKey::from_wire(w.voter_id, w.voter_directory_id),
        listeners: endpoints(
            w.listeners
                .iter()
                .map(|l| (l.name.as_str(), l.host.as_str(), l.port)),
        ),
        ack_when_committed: w.ack_when_committed,
    }
}

pub fn remove_request_to_wire(r: &RemoveVoterRequest) -> RemoveRaftVoterRequest {
    RemoveRaftVoterRequest {
        cluster_id: r.cluster_id.clone(),
        voter_id: r.voter.id,
        voter_directory_id: r.voter.wire_directory_id(),
        ..Default::default()
    }
}

pub fn remove_request_from_wire(w: &RemoveRaftVoterRequest) -> RemoveVoterRequest {
    RemoveVoterRequest {
        cluster_id: w.cluster_id.clone(),
        voter: ReplicaKey::from_wire(w.voter_id, w.voter_directory_id),
    }
}

pub fn add_response_to_wire(r: &VoterChangeResponse) -> AddRaftVoterResponse {
    AddRaftVoterResponse {
        error_code: r.error.0,
        error_message: r.message.clone(),
        ..Default::default()
    }
}

pub fn add_response_from_wire(w: &AddRaftVoterResponse) -> VoterChangeResponse {
    VoterChangeResponse {
        error: ErrorCode(w.error_code),
        message: w.error_message.clone(),
    }
}

pub fn remove_response_to_wire(r: &VoterChangeResponse) -> RemoveRaftVoterResponse {
    RemoveRaftVoterResponse {
        error_code: r.error.0,
        error_message: r.message.clone(),
        ..Default::default()
    }
}

pub fn remove_response_from_wire(w: &RemoveRaftVoterResponse) -> VoterChangeResponse {
    VoterChangeResponse {
        error: ErrorCode(w.error_code),
        message: w.error_message.clone(),
    }
}

pub fn update_request_to_wire(r: &UpdateVoterRequest) -> upd_req::UpdateRaftVoterRequest {
    upd_req::UpdateRaftVoterRequest {
        cluster_id: r.cluster_id.clone(),
        current_leader_epoch: r.current_leader_epoch,
        voter_id: r.voter.id,
        voter_directory_id: r.voter.wire_directory_id(),
        listeners: r
            .listeners
            .iter()
            .map(|(name, hp)| upd_req::Listener {
                name: name.clone(),
                host: hp.host.clone(),
                port: hp.port,
                ..Default::default()
            })
            .collect(),
        k_raft_version_feature: upd_req::KRaftVersionFeature {
            min_supported_version: r.supported_kraft_version.0,
            max_supported_version: r.supported_kraft_version.1,
            ..Default::default()
        },
        ..Default::default()
    }
}

pub fn update_request_from_wire(w: &upd_req::UpdateRaftVoterRequest) -> UpdateVoterRequest {
    UpdateVoterRequest {
        cluster_id: w.cluster_id.clone(),
        current_leader_epoch: w.current_leader_epoch,
        voter: ReplicaKey::from_wire(w.voter_id, w.voter_directory_id),
        listeners: endpoints(
            w.listeners
                .iter()
                .map(|l| (l.name.as_str(), l.host.as_str(), l.port)),
        ),
        supported_kraft_version: (
            w.k_raft_version_feature.min_supported_version,
            w.k_raft_version_feature.max_supported_version,
        ),
    }
}

pub fn update_response_to_wire(r: &UpdateVoterResponse) -> upd_resp::UpdateRaftVoterResponse {
    upd_resp::UpdateRaftVoterResponse {
        error_code: r.error.0,
        current_leader: upd_resp::CurrentLeader {
            leader_id: r.leader_id,
            leader_epoch: r.leader_epoch,
            host: r
                .leader_address
                .as_ref()
                .map(|a| a.host.clone())
                .unwrap_or_default(),
            port: r.leader_address.as_ref().map_or(0, |a| i32::from(a.port)),
            ..Default::default()
        },
        ..Default::default()
    }
}

pub fn update_response_from_wire(w: &upd_resp::UpdateRaftVoterResponse) -> UpdateVoterResponse {
    let l = &w.current_leader;
    UpdateVoterResponse {
        error: ErrorCode(w.error_code),
        leader_id: l.leader_id,
        leader_epoch: l.leader_epoch,
        leader_address: (!l.host.is_empty())
            .then(|| {
                u16::try_from(l.port)
                    .ok()
                    .map(|p| HostPort::new(&l.host, p))
            })
            .flatten(),
    }
}

pub fn api_versions_request_to_wire() -> ApiVersionsRequest {
    ApiVersionsRequest {
        client_software_name: "kraftd".into(),
        client_software_version: env!("CARGO_PKG_VERSION").into(),
        ..Default::default()
    }
}

/// What a node that serves the raft layer answers (the simulation's stand-in for the front
/// end's full answer): the error and the kraft.version range.
pub fn api_versions_response_to_wire(r: &ApiVersionsResponse) -> av_resp::ApiVersionsResponse {
    av_resp::ApiVersionsResponse {
        error_code: r.error.0,
        supported_features: r
            .kraft_version
            .map(|(min, max)| av_resp::SupportedFeatureKey {
                name: KRAFT_VERSION_FEATURE.into(),
                min_version: min,
                max_version: max,
                ..Default::default()
            })
            .into_iter()
            .collect(),
        ..Default::default()
    }
}

pub fn api_versions_response_from_wire(w: &av_resp::ApiVersionsResponse) -> ApiVersionsResponse {
    ApiVersionsResponse {
        error: ErrorCode(w.error_code),
        kraft_version: w
            .supported_features
            .iter()
            .find(|f| f.name == KRAFT_VERSION_FEATURE)
            .map(|f| (f.min_version, f.max_version)),
    }
}
