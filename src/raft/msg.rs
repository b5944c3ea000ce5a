//! Domain RPCs: the raft core's view of Kafka's KRaft messages, one struct per request and
//! response, flattened to the single `__cluster_metadata-0` partition. Every wire field the raft
//! layer reads or writes is here; constants (MinBytes, sessions, rack, ...) are filled in by
//! `convert`. `partition_ok` is false when a message does not name exactly that one partition.

use super::log::Batch;
use super::types::{Endpoints, Epoch, HostPort, NodeId, Offset, OffsetAndEpoch, ReplicaKey};
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;

/// Correlation id of an outbound request, assigned by the core; responses must echo it.
pub type CorrelationId = u32;

/// Identifies an inbound request for its reply; assigned by the driver, opaque to the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

/// Which API a message belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiKind {
    Vote,
    BeginQuorumEpoch,
    EndQuorumEpoch,
    Fetch,
    FetchSnapshot,
    DescribeQuorum,
    AddRaftVoter,
    RemoveRaftVoter,
    UpdateRaftVoter,
    /// Sent by a leader to a voter being added, for its supported kraft.version range.
    ApiVersions,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Vote(VoteRequest),
    BeginQuorumEpoch(BeginQuorumEpochRequest),
    EndQuorumEpoch(EndQuorumEpochRequest),
    Fetch(FetchRequest),
    FetchSnapshot(FetchSnapshotRequest),
    DescribeQuorum(DescribeQuorumRequest),
    AddRaftVoter(AddVoterRequest),
    RemoveRaftVoter(RemoveVoterRequest),
    UpdateRaftVoter(UpdateVoterRequest),
    ApiVersions,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    Vote(VoteResponse),
    BeginQuorumEpoch(QuorumEpochResponse),
    EndQuorumEpoch(QuorumEpochResponse),
    Fetch(FetchResponse),
    FetchSnapshot(FetchSnapshotResponse),
    DescribeQuorum(DescribeQuorumResponse),
    AddRaftVoter(VoterChangeResponse),
    RemoveRaftVoter(VoterChangeResponse),
    UpdateRaftVoter(UpdateVoterResponse),
    ApiVersions(ApiVersionsResponse),
}

impl Request {
    pub fn api(&self) -> ApiKind {
        match self {
            Request::Vote(_) => ApiKind::Vote,
            Request::BeginQuorumEpoch(_) => ApiKind::BeginQuorumEpoch,
            Request::EndQuorumEpoch(_) => ApiKind::EndQuorumEpoch,
            Request::Fetch(_) => ApiKind::Fetch,
            Request::FetchSnapshot(_) => ApiKind::FetchSnapshot,
            Request::DescribeQuorum(_) => ApiKind::DescribeQuorum,
            Request::AddRaftVoter(_) => ApiKind::AddRaftVoter,
            Request::RemoveRaftVoter(_) => ApiKind::RemoveRaftVoter,
            Request::UpdateRaftVoter(_) => ApiKind::UpdateRaftVoter,
            Request::ApiVersions => ApiKind::ApiVersions,
        }
    }
}

impl Response {
    pub fn api(&self) -> ApiKind {
        match self {
            Response::Vote(_) => ApiKind::Vote,
            Response::BeginQuorumEpoch(_) => ApiKind::BeginQuorumEpoch,
            Response::EndQuorumEpoch(_) => ApiKind::EndQuorumEpoch,
            Response::Fetch(_) => ApiKind::Fetch,
            Response::FetchSnapshot(_) => ApiKind::FetchSnapshot,
            Response::DescribeQuorum(_) => ApiKind::DescribeQuorum,
            Response::AddRaftVoter(_) => ApiKind::AddRaftVoter,
            Response::RemoveRaftVoter(_) => ApiKind::RemoveRaftVoter,
            Response::UpdateRaftVoter(_) => ApiKind::UpdateRaftVoter,
            Response::ApiVersions(_) => ApiKind::ApiVersions,
        }
    }

    /// A response carrying only a top-level error, as Kafka's network layer synthesizes for a
    /// disconnect (`BROKER_NOT_AVAILABLE`) or a version mismatch (`UNSUPPORTED_VERSION`).
    pub fn top_level_error(api: ApiKind, error: ErrorCode) -> Response {
        match api {
            ApiKind::Vote => Response::Vote(VoteResponse {
                error,
                ..VoteResponse::default()
            }),
            ApiKind::BeginQuorumEpoch => Response::BeginQuorumEpoch(QuorumEpochResponse {
                error,
                ..Default::default()
            }),
            ApiKind::EndQuorumEpoch => Response::EndQuorumEpoch(QuorumEpochResponse {
                error,
                ..Default::default()
            }),
            ApiKind::Fetch => Response::Fetch(FetchResponse {
                error,
                ..FetchResponse::default()
            }),
            ApiKind::FetchSnapshot => Response::FetchSnapshot(FetchSnapshotResponse {
                error,
                ..Default::default()
            }),
            ApiKind::DescribeQuorum => Response::DescribeQuorum(DescribeQuorumResponse {
                error,
                ..Default::default()
            }),
            ApiKind::AddRaftVoter => Response::AddRaftVoter(VoterChangeResponse::error(error)),
            ApiKind::RemoveRaftVoter => {
                Response::RemoveRaftVoter(VoterChangeResponse::error(error))
            }
            ApiKind::UpdateRaftVoter => Response::UpdateRaftVoter(UpdateVoterResponse {
                error,
                ..Default::default()
            }),
            ApiKind::ApiVersions => Response::ApiVersions(ApiVersionsResponse {
                error,
                kraft_version: None,
            }),
        }
    }
}

/// Vote (api key 52), v0-2. v2 renames Candidate* to Replica* and adds `PreVote`.
#[derive(Debug, Clone, PartialEq)]
pub struct VoteRequest {
    pub cluster_id: Option<String>,
    /// The receiving voter's id (v1+; −1 = unset) and directory id (v1+; zero = unknown).
    pub voter_id: NodeId,
    pub voter_directory_id: Option<Uuid>,
    pub partition_ok: bool,
    /// Candidate: its new (bumped) epoch. Pre-vote: the sender's current epoch.
    pub candidate_epoch: Epoch,
    /// Sender id and directory id (v1+).
    pub candidate_key: ReplicaKey,
    /// Sender's last fetched epoch and log end offset (LEO, not the last record's offset).
    pub last_offset_epoch: Epoch,
    pub last_offset: Offset,
    /// v2+; cannot be sent at v0-1 (not ignorable).
    pub pre_vote: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VoteResponse {
    pub error: ErrorCode,
    pub partition_ok: bool,
    pub partition_error: ErrorCode,
    /// The responder's known leader (−1 none) and its epoch after handling the request.
    pub leader_id: NodeId,
    pub leader_epoch: Epoch,
    pub vote_granted: bool,
    /// NodeEndpoints (v1+): the leader's address on the listener the request arrived on.
    pub leader_endpoint: Option<HostPort>,
}

impl Default for VoteResponse {
    fn default() -> Self {
        VoteResponse {
            error: ErrorCode::NONE,
            partition_ok: false,
            partition_error: ErrorCode::NONE,
            leader_id: -1,
            leader_epoch: -1,
            vote_granted: false,
            leader_endpoint: None,
        }
    }
}

/// BeginQuorumEpoch (api key 53), v0-1.
#[derive(Debug, Clone, PartialEq)]
pub struct BeginQuorumEpochRequest {
    pub cluster_id: Option<String>,
    /// Receiving voter id (v1+, −1 unset) and directory id (v1+).
    pub voter_id: NodeId,
    pub voter_directory_id: Option<Uuid>,
    pub partition_ok: bool,
    pub leader_id: NodeId,
    pub leader_epoch: Epoch,
    /// All listeners of the leader (v1+).
    pub leader_endpoints: Endpoints,
}

/// EndQuorumEpoch (api key 54), v0-1.
#[derive(Debug, Clone, PartialEq)]
pub struct EndQuorumEpochRequest {
    pub cluster_id: Option<String>,
    pub partition_ok: bool,
    pub leader_id: NodeId,
    pub leader_epoch: Epoch,
    /// Best first. v0 carries ids only (`PreferredSuccessors`), v1 keys (`PreferredCandidates`).
    pub preferred_candidates: Vec<ReplicaKey>,
    /// v1+; Java leaves it empty.
    pub leader_endpoints: Endpoints,
}

/// The response of BeginQuorumEpoch and of EndQuorumEpoch (identical layouts).
#[derive(Debug, Clone, PartialEq)]
pub struct QuorumEpochResponse {
    pub error: ErrorCode,
    pub partition_ok: bool,
    pub partition_error: ErrorCode,
    pub leader_id: NodeId,
    pub leader_epoch: Epoch,
    /// NodeEndpoints (v1+).
    pub leader_endpoint: Option<HostPort>,
}

impl Default for QuorumEpochResponse {
    fn default() -> Self {
        QuorumEpochResponse {
            error: ErrorCode::NONE,
            partition_ok: false,
            partition_error: ErrorCode::NONE,
            leader_id: -1,
            leader_epoch: -1,
            leader_endpoint: None,
        }
    }
}

/// Fetch (api key 1): the fields the raft layer uses (v13+; raft needs topic ids).
#[derive(Debug, Clone, PartialEq)]
pub struct FetchRequest {
    pub cluster_id: Option<String>,
    /// `ReplicaId` (v<15) or `ReplicaState.ReplicaId` (v15+), −1 for none; directory id v17+.
    pub replica_key: ReplicaKey,
    pub max_wait_ms: i32,
    pub max_bytes: i32,
    pub partition_ok: bool,
    pub current_leader_epoch: Epoch,
    pub fetch_offset: Offset,
    pub last_fetched_epoch: Epoch,
    /// v18 (KIP-1166): the fetcher's HW, −1 if unknown; `None` when not sent (v<18).
    pub high_watermark: Option<Offset>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FetchResponse {
    pub error: ErrorCode,
    pub partition_ok: bool,
    pub partition_error: ErrorCode,
    /// Leader HW, −1 when not established and in error responses.
    pub high_watermark: Offset,
    pub log_start_offset: Offset,
    pub diverging_epoch: Option<OffsetAndEpoch>,
    /// CurrentLeader: responder's leader id (−1 none) and epoch.
    pub leader_id: NodeId,
    pub leader_epoch: Epoch,
    pub snapshot_id: Option<OffsetAndEpoch>,
    pub records: Vec<Batch>,
    /// NodeEndpoints (v16+, Java fills it from v17).
    pub leader_endpoint: Option<HostPort>,
}

impl Default for FetchResponse {
    fn default() -> Self {
        FetchResponse {
            error: ErrorCode::NONE,
            partition_ok: false,
            partition_error: ErrorCode::NONE,
            high_watermark: -1,
            log_start_offset: -1,
            diverging_epoch: None,
            leader_id: -1,
            leader_epoch: -1,
            snapshot_id: None,
            records: Vec::new(),
            leader_endpoint: None,
        }
    }
}

/// FetchSnapshot (api key 59), v0-1.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchSnapshotRequest {
    pub cluster_id: Option<String>,
    pub replica_key: ReplicaKey,
    pub max_bytes: i32,
    /// The partition is looked up by topic *name*; a mismatch is a partition-level
    /// `UNKNOWN_TOPIC_OR_PARTITION`.
    pub partition_ok: bool,
    pub current_leader_epoch: Epoch,
    pub snapshot_id: OffsetAndEpoch,
    pub position: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FetchSnapshotResponse {
    pub error: ErrorCode,
    pub partition_ok: bool,
    pub partition_error: ErrorCode,
    pub snapshot_id: Option<OffsetAndEpoch>,
    pub leader_id: NodeId,
    pub leader_epoch: Epoch,
    /// Total snapshot size in bytes.
    pub size: i64,
    /// Echo of the request's position.
    pub position: i64,
    /// Raw snapshot bytes `[position, position + n)`; not batch-aligned.
    pub bytes: Vec<u8>,
    pub leader_endpoint: Option<HostPort>,
}

impl Default for FetchSnapshotResponse {
    fn default() -> Self {
        FetchSnapshotResponse {
            error: ErrorCode::NONE,
            partition_ok: false,
            partition_error: ErrorCode::NONE,
            snapshot_id: None,
            leader_id: -1,
            leader_epoch: -1,
            size: -1,
            position: -1,
            bytes: Vec::new(),
            leader_endpoint: None,
        }
    }
}

/// DescribeQuorum (api key 55), v0-2.
#[derive(Debug, Clone, PartialEq)]
pub struct DescribeQuorumRequest {
    pub partition_ok: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DescribeQuorumResponse {
    pub error: ErrorCode,
    pub error_message: Option<String>,
    pub partition_ok: bool,
    pub partition_error: ErrorCode,
    pub partition_error_message: Option<String>,
    pub leader_id: NodeId,
    pub leader_epoch: Epoch,
    pub high_watermark: Offset,
    pub voters: Vec<ReplicaDescription>,
    pub observers: Vec<ReplicaDescription>,
    /// v2: every voter with its listeners.
    pub nodes: Vec<(NodeId, Endpoints)>,
}

impl Default for DescribeQuorumResponse {
    fn default() -> Self {
        DescribeQuorumResponse {
            error: ErrorCode::NONE,
            error_message: None,
            partition_ok: false,
            partition_error: ErrorCode::NONE,
            partition_error_message: None,
            leader_id: -1,
            leader_epoch: -1,
            high_watermark: -1,
            voters: Vec::new(),
            observers: Vec::new(),
            nodes: Vec::new(),
        }
    }
}

/// DescribeQuorum's `ReplicaState`; −1 marks unknown values.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaDescription {
    pub replica_key: ReplicaKey,
    pub log_end_offset: Offset,
    pub last_fetch_timestamp: i64,
    pub last_caught_up_timestamp: i64,
}

/// AddRaftVoter (api key 80), v0-1: an admin client (or an auto-joining observer) asks the
/// leader to add `voter`.
#[derive(Debug, Clone, PartialEq)]
pub struct AddVoterRequest {
    pub cluster_id: Option<String>,
    /// Not used by the raft layer (Kafka's operation timer is the request timeout).
    pub timeout_ms: i32,
    /// Invalid unless the id is >= 0 and the directory id known.
    pub voter: ReplicaKey,
    pub listeners: Endpoints,
    /// v1+ (default true): false answers once the VotersRecord is written, not committed.
    pub ack_when_committed: bool,
}

/// RemoveRaftVoter (api key 81), v0.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoveVoterRequest {
    pub cluster_id: Option<String>,
    pub voter: ReplicaKey,
}

/// The answer to AddRaftVoter and RemoveRaftVoter (same shape on the wire).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VoterChangeResponse {
    pub error: ErrorCode,
    pub message: Option<String>,
}

impl VoterChangeResponse {
    pub fn error(error: ErrorCode) -> Self {
        VoterChangeResponse {
            error,
            message: None,
        }
    }

    pub fn with_message(error: ErrorCode, message: impl Into<String>) -> Self {
        VoterChangeResponse {
            error,
            message: Some(message.into()),
        }
    }
}

/// UpdateRaftVoter (api key 82), v0: a voter tells the leader its listeners and supported
/// kraft.version range.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateVoterRequest {
    pub cluster_id: Option<String>,
    pub current_leader_epoch: Epoch,
    pub voter: ReplicaKey,
    pub listeners: Endpoints,
    pub supported_kraft_version: (i16, i16),
}

#[derive(Debug, Clone, PartialEq)]
pub struct UpdateVoterResponse {
    pub error: ErrorCode,
    /// The leader as the answering node knows it (−1 / epoch −1 when unknown).
    pub leader_id: NodeId,
    pub leader_epoch: Epoch,
    /// The leader's address on the listener the request came in on, when known.
    pub leader_address: Option<HostPort>,
}

impl Default for UpdateVoterResponse {
    fn default() -> Self {
        UpdateVoterResponse {
            error: ErrorCode::NONE,
            leader_id: -1,
            leader_epoch: -1,
            leader_address: None,
        }
    }
}

/// The part of an ApiVersions answer the raft layer reads: the error and the
/// `SupportedFeatures` range of `kraft.version` (absent: the node cannot take part in a
/// dynamic quorum).
#[derive(Debug, Clone, PartialEq)]
pub struct ApiVersionsResponse {
    pub error: ErrorCode,
    pub kraft_version: Option<(i16, i16)>,
}
