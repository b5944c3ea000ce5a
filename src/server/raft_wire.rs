//! The KRaft RPCs on the wire: which keys and versions kraftd serves and sends, and the byte
//! level on both sides of the raft core's domain messages (`raft::convert` does the mapping).
//! Inbound requests are decoded here and handed to the node loop; outbound requests are
//! encoded here at the version negotiated with the peer.

use crate::controller::acls::operation;
use crate::protocol::codec::{ApiMessage, DecodeError, EncodeError, Message};
use crate::protocol::frame;
use crate::protocol::messages as wire;
use crate::raft::convert::{self, WireRequest, WireResponse};
use crate::raft::{ApiKind, Request, Response};

/// A raft API with the versions kraftd both serves and sends: those of Kafka 4.4's controller.
/// (Fetch below v13 carries no topic id: answered INVALID_REQUEST, as Java's raft client
/// answers it, and never sent.)
#[derive(Debug, Clone, Copy)]
pub struct RaftApi {
    pub kind: ApiKind,
    pub key: i16,
    pub name: &'static str,
    pub min_version: i16,
    pub max_version: i16,
    /// The operation Kafka 4.4's `ControllerApis` requires on the cluster before raft sees a
    /// request (`AuthHelper.authorizeClusterOperation`); `None`: not authorized (ApiVersions).
    pub cluster_operation: Option<i8>,
}

pub const RAFT_APIS: [RaftApi; 10] = [
    RaftApi {
        kind: ApiKind::Fetch,
        key: wire::FetchRequest::API_KEY,
        name: "Fetch",
        min_version: 4,
        max_version: 18,
        cluster_operation: Some(operation::CLUSTER_ACTION),
    },
    RaftApi {
        kind: ApiKind::Vote,
        key: wire::VoteRequest::API_KEY,
        name: "Vote",
        min_version: 0,
        max_version: 2,
        cluster_operation: Some(operation::CLUSTER_ACTION),
    },
    RaftApi {
        kind: ApiKind::BeginQuorumEpoch,
        key: wire::BeginQuorumEpochRequest::API_KEY,
        name: "BeginQuorumEpoch",
        min_version: 0,
        max_version: 1,
        cluster_operation: Some(operation::CLUSTER_ACTION),
    },
    RaftApi {
        kind: ApiKind::EndQuorumEpoch,
        key: wire::EndQuorumEpochRequest::API_KEY,
        name: "EndQuorumEpoch",
        min_version: 0,
        max_version: 1,
        cluster_operation: Some(operation::CLUSTER_ACTION),
    },
    RaftApi {
        kind: ApiKind::DescribeQuorum,
        key: wire::DescribeQuorumRequest::API_KEY,
        name: "DescribeQuorum",
        min_version: 0,
        max_version: 2,
        cluster_operation: Some(operation::DESCRIBE),
    },
    RaftApi {
        kind: ApiKind::FetchSnapshot,
        key: wire::FetchSnapshotRequest::API_KEY,
        name: "FetchSnapshot",
        min_version: 0,
        max_version: 1,
        cluster_operation: Some(operation::CLUSTER_ACTION),
    },
    RaftApi {
        kind: ApiKind::AddRaftVoter,
        key: wire::AddRaftVoterRequest::API_KEY,
        name: "AddRaftVoter",
        min_version: 0,
        max_version: 1,
        cluster_operation: Some(operation::ALTER),
    },
    RaftApi {
        kind: ApiKind::RemoveRaftVoter,
        key: wire::RemoveRaftVoterRequest::API_KEY,
        name: "RemoveRaftVoter",
        min_version: 0,
        max_version: 0,
        cluster_operation: Some(operation::ALTER),
    },
    RaftApi {
        kind: ApiKind::UpdateRaftVoter,
        key: wire::UpdateRaftVoterRequest::API_KEY,
        name: "UpdateRaftVoter",
        min_version: 0,
        max_version: 0,
        cluster_operation: Some(operation::CLUSTER_ACTION),
    },
    // Served by the front end (`api_versions.rs`), sent by the raft core to a voter it adds.
    RaftApi {
        kind: ApiKind::ApiVersions,
        key: wire::ApiVersionsRequest::API_KEY,
        name: "ApiVersions",
        min_version: 0,
        max_version: 5,
        cluster_operation: None,
    },
];

pub fn raft_api(kind: ApiKind) -> &'static RaftApi {
    RAFT_APIS
        .iter()
        .find(|a| a.kind == kind)
        .expect("every raft api is listed")
}

/// Whether a raft answer says this node is not the leader (Java's cue, for a forwarded
/// DescribeQuorum, to answer the Envelope with NOT_CONTROLLER).
pub fn reports_not_leader(response: &Response) -> bool {
    use crate::protocol::errors::ErrorCode;
    match response {
        Response::DescribeQuorum(d) => {
            d.error == ErrorCode::NOT_LEADER_OR_FOLLOWER
                || d.partition_error == ErrorCode::NOT_LEADER_OR_FOLLOWER
        }
        _ => false,
    }
}

pub fn raft_api_by_key(key: i16) -> Option<&'static RaftApi> {
    RAFT_APIS.iter().find(|a| a.key == key)
}

/// Decodes an inbound raft request body.
pub fn decode_request(kind: ApiKind, version: i16, body: &[u8]) -> Result<Request, DecodeError> {
    Ok(convert::request_from_wire(&decode_wire(
        kind, version, body,
    )?))
}

/// Decodes an inbound raft request body into Kafka's message type.
pub fn decode_wire(kind: ApiKind, version: i16, body: &[u8]) -> Result<WireRequest, DecodeError> {
    Ok(match kind {
        ApiKind::Vote => WireRequest::Vote(wire::VoteRequest::decode_exact(body, version)?),
        ApiKind::BeginQuorumEpoch => WireRequest::BeginQuorumEpoch(
            wire::BeginQuorumEpochRequest::decode_exact(body, version)?,
        ),
        ApiKind::EndQuorumEpoch => {
            WireRequest::EndQuorumEpoch(wire::EndQuorumEpochRequest::decode_exact(body, version)?)
        }
        ApiKind::Fetch => WireRequest::Fetch(wire::FetchRequest::decode_exact(body, version)?),
        ApiKind::FetchSnapshot => {
            WireRequest::FetchSnapshot(wire::FetchSnapshotRequest::decode_exact(body, version)?)
        }
        ApiKind::DescribeQuorum => {
            WireRequest::DescribeQuorum(wire::DescribeQuorumRequest::decode_exact(body, version)?)
        }
        ApiKind::AddRaftVoter => {
            WireRequest::AddRaftVoter(wire::AddRaftVoterRequest::decode_exact(body, version)?)
        }
        ApiKind::RemoveRaftVoter => {
            WireRequest::RemoveRaftVoter(wire::RemoveRaftVoterRequest::decode_exact(body, version)?)
        }
        ApiKind::UpdateRaftVoter => {
            WireRequest::UpdateRaftVoter(wire::UpdateRaftVoterRequest::decode_exact(body, version)?)
        }
        ApiKind::ApiVersions => {
            WireRequest::ApiVersions(wire::ApiVersionsRequest::decode_exact(body, version)?)
        }
    })
}

/// Encodes the complete response frame to an inbound raft request.
pub fn encode_response_frame(
    api_key: i16,
    version: i16,
    correlation_id: i32,
    response: &Response,
) -> Result<Vec<u8>, EncodeError> {
    let w = convert::response_to_wire(response, version).map_err(|e| {
        EncodeError::Invalid(format!("{} v{version}: {e}", frame::api_name(api_key)))
    })?;
    let f = |body: &dyn ErasedMessage| body.frame(api_key, version, correlation_id);
    match &w {
        WireResponse::Vote(m) => f(m),
        WireResponse::BeginQuorumEpoch(m) => f(m),
        WireResponse::EndQuorumEpoch(m) => f(m),
        WireResponse::Fetch(m) => f(m),
        WireResponse::FetchSnapshot(m) => f(m),
        WireResponse::DescribeQuorum(m) => f(m),
        WireResponse::AddRaftVoter(m) => f(m),
        WireResponse::RemoveRaftVoter(m) => f(m),
        WireResponse::UpdateRaftVoter(m) => f(m),
        WireResponse::ApiVersions(m) => f(m),
    }
}

/// Encodes an outbound raft request body at `version`.
pub fn encode_request_body(request: &Request, version: i16) -> Result<Vec<u8>, EncodeError> {
    let w = convert::request_to_wire(request, version)
        .map_err(|e| EncodeError::Invalid(e.to_string()))?;
    match &w {
        WireRequest::Vote(m) => m.encode_to_vec(version),
        WireRequest::BeginQuorumEpoch(m) => m.encode_to_vec(version),
        WireRequest::EndQuorumEpoch(m) => m.encode_to_vec(version),
        WireRequest::Fetch(m) => m.encode_to_vec(version),
        WireRequest::FetchSnapshot(m) => m.encode_to_vec(version),
        WireRequest::DescribeQuorum(m) => m.encode_to_vec(version),
        WireRequest::AddRaftVoter(m) => m.encode_to_vec(version),
        WireRequest::RemoveRaftVoter(m) => m.encode_to_vec(version),
        WireRequest::UpdateRaftVoter(m) => m.encode_to_vec(version),
        WireRequest::ApiVersions(m) => m.encode_to_vec(version),
    }
}

/// Why a peer's answer to a raft request could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ResponseError {
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error(transparent)]
    Convert(#[from] convert::ConvertError),
}

/// Decodes the response body of an outbound raft request (records included).
pub fn decode_response(
    kind: ApiKind,
    version: i16,
    body: &[u8],
) -> Result<Response, ResponseError> {
    let e = ResponseError::Decode;
    let w = match kind {
        ApiKind::Vote => {
            WireResponse::Vote(wire::VoteResponse::decode_exact(body, version).map_err(e)?)
        }
        ApiKind::BeginQuorumEpoch => WireResponse::BeginQuorumEpoch(
            wire::BeginQuorumEpochResponse::decode_exact(body, version).map_err(e)?,
        ),
        ApiKind::EndQuorumEpoch => WireResponse::EndQuorumEpoch(
            wire::EndQuorumEpochResponse::decode_exact(body, version).map_err(e)?,
        ),
        ApiKind::Fetch => {
            WireResponse::Fetch(wire::FetchResponse::decode_exact(body, version).map_err(e)?)
        }
        ApiKind::FetchSnapshot => WireResponse::FetchSnapshot(
            wire::FetchSnapshotResponse::decode_exact(body, version).map_err(e)?,
        ),
        ApiKind::DescribeQuorum => WireResponse::DescribeQuorum(
            wire::DescribeQuorumResponse::decode_exact(body, version).map_err(e)?,
        ),
        ApiKind::AddRaftVoter => WireResponse::AddRaftVoter(
            wire::AddRaftVoterResponse::decode_exact(body, version).map_err(e)?,
        ),
        ApiKind::RemoveRaftVoter => WireResponse::RemoveRaftVoter(
            wire::RemoveRaftVoterResponse::decode_exact(body, version).map_err(e)?,
        ),
        ApiKind::UpdateRaftVoter => WireResponse::UpdateRaftVoter(
            wire::UpdateRaftVoterResponse::decode_exact(body, version).map_err(e)?,
        ),
        ApiKind::ApiVersions => WireResponse::ApiVersions(
            wire::ApiVersionsResponse::decode_exact(body, version).map_err(e)?,
        ),
    };
    Ok(convert::response_from_wire(&w)?)
}

/// `frame::encode_response` over the concrete response types.
trait ErasedMessage {
    fn frame(
        &self,
        api_key: i16,
        version: i16,
        correlation_id: i32,
    ) -> Result<Vec<u8>, EncodeError>;
}

impl<M: Message> ErasedMessage for M {
    fn frame(
        &self,
        api_key: i16,
        version: i16,
        correlation_id: i32,
    ) -> Result<Vec<u8>, EncodeError> {
        frame::encode_response(api_key, version, correlation_id, self, version)
    }
}
