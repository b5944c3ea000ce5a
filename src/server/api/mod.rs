//! The Kafka APIs kraftd serves on its controller listeners: which ones, at which versions, and
//! the dispatch from a request frame to a response frame (or a closed connection).
//!
//! The catalogue below is the single source of truth: ApiVersions advertises exactly it, and
//! dispatch refuses anything outside it the way Java's controller does.

mod api_versions;
mod describe_cluster;
pub mod not_controller;
pub mod raft;

use std::fmt;

use crate::controller::principal::RequestPrincipal;
use crate::protocol::codec::{ApiMessage, EncodeError, Message};
use crate::protocol::frame::{self, ParsedRequest};
use crate::protocol::messages;
use crate::raft::ApiKind;

pub use api_versions::supported_features;

use super::context::ServerContext;

/// An API kraftd serves, with the versions it implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServedApi {
    pub key: i16,
    pub name: &'static str,
    pub min_version: i16,
    pub max_version: i16,
}

/// The APIs kraftd serves itself (raft, discovery, controller registration, Envelope), in
/// api-key order. ApiVersions advertises these and `not_controller::CONTROLLER_APIS`.
pub const SERVED_APIS: &[ServedApi] = &[
    raft::served(ApiKind::Fetch),
    raft::served(ApiKind::ApiVersions),
    raft::served(ApiKind::Vote),
    raft::served(ApiKind::BeginQuorumEpoch),
    raft::served(ApiKind::EndQuorumEpoch),
    raft::served(ApiKind::DescribeQuorum),
    ServedApi {
        key: messages::EnvelopeRequest::API_KEY,
        name: "Envelope",
        min_version: 0,
        max_version: 0,
    },
    raft::served(ApiKind::FetchSnapshot),
    ServedApi {
        key: messages::DescribeClusterRequest::API_KEY,
        name: "DescribeCluster",
        min_version: 0,
        max_version: 2,
    },
    ServedApi {
        key: messages::ControllerRegistrationRequest::API_KEY,
        name: "ControllerRegistration",
        min_version: 0,
        max_version: 0,
    },
    raft::served(ApiKind::AddRaftVoter),
    raft::served(ApiKind::RemoveRaftVoter),
    raft::served(ApiKind::UpdateRaftVoter),
];

/// Every API kraftd answers, in api-key order: what ApiVersions advertises.
pub fn served_apis() -> Vec<&'static ServedApi> {
    let mut all: Vec<&'static ServedApi> = SERVED_APIS
        .iter()
        .chain(not_controller::CONTROLLER_APIS)
        .collect();
    all.sort_by_key(|a| a.key);
    all
}

pub fn served_api(key: i16) -> Option<&'static ServedApi> {
    SERVED_APIS
        .iter()
        .chain(not_controller::CONTROLLER_APIS)
        .find(|a| a.key == key)
}

/// What the connection does with one request frame.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Write this complete response frame (size prefix included).
    Respond(Vec<u8>),
    /// Hand this raft request to the node loop and write the frame of its answer.
    Raft(RaftCall),
    /// Hand this request to the node loop and write the frame of its answer.
    Node(NodeCall),
    /// Close the connection; the reason is logged once, as Java logs it.
    Close(CloseReason),
}

/// A decoded raft request waiting for the node loop's answer.
#[derive(Debug, PartialEq)]
pub struct RaftCall {
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    pub request: crate::raft::Request,
    /// The Envelope this request came in, if a broker forwarded it.
    pub enveloped: Option<Enveloped>,
}

/// The outer Envelope of a forwarded raft request (DescribeQuorum), answered around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Enveloped {
    pub version: i16,
    pub correlation_id: i32,
}

/// A decoded request the node loop answers (besides the raft RPCs).
#[derive(Debug, PartialEq)]
pub struct NodeCall {
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    pub request: NodeRequest,
    /// The Envelope this request came in, if a broker forwarded it (UnregisterBroker).
    pub enveloped: Option<Enveloped>,
    /// The principal the Envelope named; `None` for a direct request, which is the
    /// connection's (the listener knows its address).
    pub principal: Option<RequestPrincipal>,
}

#[derive(Debug, PartialEq)]
pub enum NodeRequest {
    /// `ControllerRegistration` (key 70), answered once its record is committed.
    Register(crate::protocol::messages::ControllerRegistrationRequest),
    /// `BrokerRegistration` (key 62) at its version (the non-active answer depends on it).
    BrokerRegistration(messages::BrokerRegistrationRequest, i16),
    /// `BrokerHeartbeat` (key 63).
    BrokerHeartbeat(messages::BrokerHeartbeatRequest, i16),
    /// `UnregisterBroker` (key 64).
    UnregisterBroker(messages::UnregisterBrokerRequest, i16),
    /// `UpdateFeatures` (key 57): its answer's shape depends on the version.
    UpdateFeatures(messages::UpdateFeaturesRequest, i16),
    /// `CreateTopics` (key 19).
    CreateTopics(messages::CreateTopicsRequest, i16),
    /// `DeleteTopics` (key 20).
    DeleteTopics(messages::DeleteTopicsRequest, i16),
    /// `CreatePartitions` (key 37).
    CreatePartitions(messages::CreatePartitionsRequest, i16),
    /// `ListPartitionReassignments` (key 46), read from the committed image.
    ListPartitionReassignments(messages::ListPartitionReassignmentsRequest, i16),
    /// `AlterPartition` (key 56), from partition leaders.
    AlterPartition(messages::AlterPartitionRequest, i16),
    /// `ElectLeaders` (key 43).
    ElectLeaders(messages::ElectLeadersRequest, i16),
    /// `AlterPartitionReassignments` (key 45).
    AlterPartitionReassignments(messages::AlterPartitionReassignmentsRequest, i16),
    /// `AssignReplicasToDirs` (key 73), from brokers.
    AssignReplicasToDirs(messages::AssignReplicasToDirsRequest, i16),
    /// `AllocateProducerIds` (key 67).
    AllocateProducerIds(messages::AllocateProducerIdsRequest, i16),
    /// `AlterClientQuotas` (key 49).
    AlterClientQuotas(messages::AlterClientQuotasRequest, i16),
    /// `AlterUserScramCredentials` (key 51).
    AlterUserScramCredentials(messages::AlterUserScramCredentialsRequest, i16),
    /// `CreateDelegationToken` (key 38), and whether a broker forwarded it.
    CreateDelegationToken(messages::CreateDelegationTokenRequest, i16, bool),
    /// `RenewDelegationToken` (key 39), and whether a broker forwarded it.
    RenewDelegationToken(messages::RenewDelegationTokenRequest, i16, bool),
    /// `ExpireDelegationToken` (key 40), and whether a broker forwarded it.
    ExpireDelegationToken(messages::ExpireDelegationTokenRequest, i16, bool),
    /// `AlterConfigs` (key 33), and whether a broker forwarded it.
    AlterConfigs(messages::AlterConfigsRequest, i16, bool),
    /// `IncrementalAlterConfigs` (key 44), and whether a broker forwarded it.
    IncrementalAlterConfigs(messages::IncrementalAlterConfigsRequest, i16, bool),
    /// `UnregisterController` (key 94).
    UnregisterController(messages::UnregisterControllerRequest, i16),
    /// `CreateAcls` (30), `DeleteAcls` (31) and `DescribeAcls` (29, direct only).
    Acls(AclRequest, i16),
}

/// The ACL requests, answered by `node::acl_flow`.
#[derive(Debug, PartialEq)]
pub enum AclRequest {
    Create(messages::CreateAclsRequest),
    Delete(messages::DeleteAclsRequest),
    Describe(messages::DescribeAclsRequest),
}

impl NodeRequest {
    /// The request as it came inside an Envelope (config checks depend on it).
    fn forwarded(self) -> NodeRequest {
        match self {
            NodeRequest::AlterConfigs(r, v, _) => NodeRequest::AlterConfigs(r, v, true),
            NodeRequest::IncrementalAlterConfigs(r, v, _) => {
                NodeRequest::IncrementalAlterConfigs(r, v, true)
            }
            NodeRequest::CreateDelegationToken(r, v, _) => {
                NodeRequest::CreateDelegationToken(r, v, true)
            }
            NodeRequest::RenewDelegationToken(r, v, _) => {
                NodeRequest::RenewDelegationToken(r, v, true)
            }
            NodeRequest::ExpireDelegationToken(r, v, _) => {
                NodeRequest::ExpireDelegationToken(r, v, true)
            }
            other => other,
        }
    }
}

#[derive(Debug, PartialEq)]
pub enum NodeResponse {
    Register(crate::protocol::messages::ControllerRegistrationResponse),
    BrokerRegistration(messages::BrokerRegistrationResponse),
    BrokerHeartbeat(messages::BrokerHeartbeatResponse),
    UnregisterBroker(messages::UnregisterBrokerResponse),
    UpdateFeatures(messages::UpdateFeaturesResponse),
    CreateTopics(messages::CreateTopicsResponse),
    DeleteTopics(messages::DeleteTopicsResponse),
    CreatePartitions(messages::CreatePartitionsResponse),
    ListPartitionReassignments(messages::ListPartitionReassignmentsResponse),
    AlterPartition(messages::AlterPartitionResponse),
    ElectLeaders(messages::ElectLeadersResponse),
    AlterPartitionReassignments(messages::AlterPartitionReassignmentsResponse),
    AssignReplicasToDirs(messages::AssignReplicasToDirsResponse),
    AllocateProducerIds(messages::AllocateProducerIdsResponse),
    AlterClientQuotas(messages::AlterClientQuotasResponse),
    AlterUserScramCredentials(messages::AlterUserScramCredentialsResponse),
    AlterConfigs(messages::AlterConfigsResponse),
    IncrementalAlterConfigs(messages::IncrementalAlterConfigsResponse),
    UnregisterController(messages::UnregisterControllerResponse),
    CreateAcls(messages::CreateAclsResponse),
    DeleteAcls(messages::DeleteAclsResponse),
    DescribeAcls(messages::DescribeAclsResponse),
    /// Boxed: the largest answer by far.
    CreateDelegationToken(Box<messages::CreateDelegationTokenResponse>),
    RenewDelegationToken(messages::RenewDelegationTokenResponse),
    ExpireDelegationToken(messages::ExpireDelegationTokenResponse),
}

impl NodeResponse {
    /// Whether the answer reports `NOT_CONTROLLER` (an Envelope then fails as a whole).
    pub fn not_controller(&self) -> bool {
        const NOT_CONTROLLER: i16 = crate::protocol::errors::ErrorCode::NOT_CONTROLLER.0;
        let code = match self {
            NodeResponse::Register(r) => r.error_code,
            NodeResponse::BrokerRegistration(r) => r.error_code,
            NodeResponse::BrokerHeartbeat(r) => r.error_code,
            NodeResponse::UnregisterBroker(r) => r.error_code,
            NodeResponse::UnregisterController(r) => r.error_code,
            NodeResponse::UpdateFeatures(r) => r.error_code,
            NodeResponse::ListPartitionReassignments(r) => r.error_code,
            NodeResponse::AlterPartition(r) => r.error_code,
            NodeResponse::AlterPartitionReassignments(r) => r.error_code,
            NodeResponse::AssignReplicasToDirs(r) => r.error_code,
            NodeResponse::ElectLeaders(r) => {
                return r.error_code == NOT_CONTROLLER
                    || r.replica_election_results.iter().any(|t| {
                        t.partition_result
                            .iter()
                            .any(|p| p.error_code == NOT_CONTROLLER)
                    })
            }
            NodeResponse::AllocateProducerIds(r) => r.error_code,
            NodeResponse::CreateDelegationToken(r) => r.error_code,
            NodeResponse::RenewDelegationToken(r) => r.error_code,
            NodeResponse::ExpireDelegationToken(r) => r.error_code,
            // Java's `errorCounts().containsKey(NOT_CONTROLLER)`: any result's error.
            NodeResponse::CreateTopics(r) => {
                return r.topics.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            NodeResponse::DeleteTopics(r) => {
                return r.responses.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            NodeResponse::CreatePartitions(r) => {
                return r.results.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            NodeResponse::AlterClientQuotas(r) => {
                return r.entries.iter().any(|e| e.error_code == NOT_CONTROLLER)
            }
            NodeResponse::AlterUserScramCredentials(r) => {
                return r.results.iter().any(|e| e.error_code == NOT_CONTROLLER)
            }
            NodeResponse::AlterConfigs(r) => {
                return r.responses.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            NodeResponse::IncrementalAlterConfigs(r) => {
                return r.responses.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            NodeResponse::CreateAcls(r) => {
                return r.results.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            NodeResponse::DeleteAcls(r) => {
                return r
                    .filter_results
                    .iter()
                    .any(|t| t.error_code == NOT_CONTROLLER)
            }
            NodeResponse::DescribeAcls(r) => r.error_code,
        };
        code == NOT_CONTROLLER
    }

    /// The frame answering request `key` v`v` (correlation id `corr`): the response itself,
    /// or inside the Envelope it came in.
    pub fn answer(&self, key: i16, v: i16, corr: i32, enveloped: Option<Enveloped>) -> Outcome {
        let framed = self.frame(key, v, corr);
        let Some(outer) = enveloped else {
            return framed;
        };
        let Outcome::Respond(bytes) = framed else {
            return framed;
        };
        // As for a forwarded DescribeQuorum: an inner NOT_CONTROLLER fails the envelope.
        let envelope = if self.not_controller() {
            not_controller::envelope_error(crate::protocol::errors::ErrorCode::NOT_CONTROLLER)
        } else {
            not_controller::wrap_frame(&bytes)
        };
        match frame::encode_response(
            messages::EnvelopeRequest::API_KEY,
            outer.version,
            outer.correlation_id,
            &envelope,
            outer.version,
        ) {
            Ok(bytes) => Outcome::Respond(bytes),
            Err(error) => Outcome::Close(CloseReason::Encode {
                api_key: messages::EnvelopeRequest::API_KEY,
                api_version: outer.version,
                error,
            }),
        }
    }

    /// This kind of response with only `code` set (a reply whose records were not committed).
    pub fn with_error(&self, code: crate::protocol::errors::ErrorCode) -> NodeResponse {
        let e = code.0;
        match self {
            NodeResponse::Register(_) => {
                NodeResponse::Register(messages::ControllerRegistrationResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            NodeResponse::BrokerRegistration(_) => {
                NodeResponse::BrokerRegistration(messages::BrokerRegistrationResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            NodeResponse::BrokerHeartbeat(_) => {
                NodeResponse::BrokerHeartbeat(messages::BrokerHeartbeatResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            NodeResponse::UnregisterBroker(_) => {
                NodeResponse::UnregisterBroker(messages::UnregisterBrokerResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            NodeResponse::UnregisterController(_) => {
                NodeResponse::UnregisterController(messages::UnregisterControllerResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            NodeResponse::UpdateFeatures(_) => {
                NodeResponse::UpdateFeatures(messages::UpdateFeaturesResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            // Their answers carry the error per topic: the flows build those themselves.
            NodeResponse::CreateTopics(r) => NodeResponse::CreateTopics(r.clone()),
            NodeResponse::DeleteTopics(r) => NodeResponse::DeleteTopics(r.clone()),
            NodeResponse::CreatePartitions(r) => NodeResponse::CreatePartitions(r.clone()),
            NodeResponse::AlterPartitionReassignments(r) => {
                NodeResponse::AlterPartitionReassignments(r.clone())
            }
            NodeResponse::AlterClientQuotas(r) => NodeResponse::AlterClientQuotas(r.clone()),
            // The token flows build their refusals themselves.
            NodeResponse::CreateDelegationToken(r) => {
                NodeResponse::CreateDelegationToken(r.clone())
            }
            NodeResponse::RenewDelegationToken(r) => NodeResponse::RenewDelegationToken(r.clone()),
            NodeResponse::ExpireDelegationToken(r) => {
                NodeResponse::ExpireDelegationToken(r.clone())
            }
            NodeResponse::AlterUserScramCredentials(r) => {
                NodeResponse::AlterUserScramCredentials(r.clone())
            }
            NodeResponse::AlterConfigs(r) => NodeResponse::AlterConfigs(r.clone()),
            NodeResponse::IncrementalAlterConfigs(r) => {
                NodeResponse::IncrementalAlterConfigs(r.clone())
            }
            // The ACL flows build their refusals themselves.
            NodeResponse::CreateAcls(r) => NodeResponse::CreateAcls(r.clone()),
            NodeResponse::DeleteAcls(r) => NodeResponse::DeleteAcls(r.clone()),
            NodeResponse::DescribeAcls(r) => NodeResponse::DescribeAcls(r.clone()),
            NodeResponse::ListPartitionReassignments(_) => {
                NodeResponse::ListPartitionReassignments(
                    messages::ListPartitionReassignmentsResponse {
                        error_code: e,
                        ..Default::default()
                    },
                )
            }
            NodeResponse::AlterPartition(_) => {
                NodeResponse::AlterPartition(messages::AlterPartitionResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            NodeResponse::ElectLeaders(_) => {
                NodeResponse::ElectLeaders(messages::ElectLeadersResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            NodeResponse::AllocateProducerIds(_) => {
                NodeResponse::AllocateProducerIds(messages::AllocateProducerIdsResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            NodeResponse::AssignReplicasToDirs(_) => {
                NodeResponse::AssignReplicasToDirs(messages::AssignReplicasToDirsResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
        }
    }

    /// The complete response frame.
    pub fn frame(&self, key: i16, v: i16, corr: i32) -> Outcome {
        let encoded = match self {
            NodeResponse::Register(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::BrokerRegistration(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::BrokerHeartbeat(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::UnregisterBroker(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::UnregisterController(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::UpdateFeatures(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::CreateTopics(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::DeleteTopics(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::CreatePartitions(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::ListPartitionReassignments(r) => {
                frame::encode_response(key, v, corr, r, v)
            }
            NodeResponse::AlterPartition(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::CreateAcls(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::DeleteAcls(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::DescribeAcls(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::ElectLeaders(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::AlterPartitionReassignments(r) => {
                frame::encode_response(key, v, corr, r, v)
            }
            NodeResponse::AssignReplicasToDirs(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::AllocateProducerIds(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::AlterClientQuotas(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::CreateDelegationToken(r) => {
                frame::encode_response(key, v, corr, r.as_ref(), v)
            }
            NodeResponse::RenewDelegationToken(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::ExpireDelegationToken(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::AlterUserScramCredentials(r) => {
                frame::encode_response(key, v, corr, r, v)
            }
            NodeResponse::AlterConfigs(r) => frame::encode_response(key, v, corr, r, v),
            NodeResponse::IncrementalAlterConfigs(r) => frame::encode_response(key, v, corr, r, v),
        };
        match encoded {
            Ok(bytes) => Outcome::Respond(bytes),
            Err(error) => Outcome::Close(CloseReason::Encode {
                api_key: key,
                api_version: v,
                error,
            }),
        }
    }
}

/// The response frame for the node's answer to a raft call; `Close` if it cannot be encoded.
pub fn answer_frame(
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    enveloped: Option<Enveloped>,
    response: &crate::raft::Response,
) -> Outcome {
    let close = |error| {
        Outcome::Close(CloseReason::Encode {
            api_key,
            api_version,
            error,
        })
    };
    let bytes = match raft::encode_response_frame(api_key, api_version, correlation_id, response) {
        Ok(bytes) => bytes,
        Err(error) => return close(error),
    };
    let Some(outer) = enveloped else {
        return Outcome::Respond(bytes);
    };
    // Java turns a forwarded DescribeQuorum that this node cannot answer (it does not lead)
    // into an envelope-level NOT_CONTROLLER, so the broker forwards it to the leader.
    let envelope = if raft::reports_not_leader(response) {
        not_controller::envelope_error(crate::protocol::errors::ErrorCode::NOT_CONTROLLER)
    } else {
        not_controller::wrap_frame(&bytes)
    };
    match frame::encode_response(
        messages::EnvelopeRequest::API_KEY,
        outer.version,
        outer.correlation_id,
        &envelope,
        outer.version,
    ) {
        Ok(bytes) => Outcome::Respond(bytes),
        Err(error) => close(error),
    }
}

/// Why a connection is closed instead of answered.
#[derive(Debug, PartialEq, Eq)]
pub enum CloseReason {
    BadHeader(frame::HeaderError),
    NotServed {
        api_key: i16,
        api_version: i16,
        correlation_id: i32,
    },
    UnsupportedVersion {
        api_key: i16,
        api_version: i16,
        correlation_id: i32,
    },
    BadBody {
        api_key: i16,
        api_version: i16,
        correlation_id: i32,
        error: String,
    },
    Encode {
        api_key: i16,
        api_version: i16,
        error: EncodeError,
    },
    /// A raft request arrived but no node loop can answer it.
    NodeUnavailable {
        api_key: i16,
        why: String,
    },
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::BadHeader(e) => write!(f, "{e}"),
            CloseReason::NotServed { api_key, api_version, correlation_id } => write!(
                f,
                "api key {api_key} ({}) version {api_version} (correlation id {correlation_id}) \
                 is not served on a controller listener",
                frame::api_name(*api_key)
            ),
            CloseReason::UnsupportedVersion { api_key, api_version, correlation_id } => {
                let api = served_api(*api_key).expect("only served apis reach version checks");
                write!(
                    f,
                    "unsupported {} version {api_version} (correlation id {correlation_id}); \
                     kraftd serves versions {}-{}",
                    api.name, api.min_version, api.max_version
                )
            }
            CloseReason::BadBody { api_key, api_version, correlation_id, error } => write!(
                f,
                "malformed {} v{api_version} request body (correlation id {correlation_id}): {error}",
                frame::api_name(*api_key)
            ),
            CloseReason::NodeUnavailable { api_key, why } => write!(
                f,
                "cannot answer {}: {why}",
                frame::api_name(*api_key)
            ),
            CloseReason::Encode { api_key, api_version, error } => write!(
                f,
                "could not encode the {} v{api_version} response: {error}",
                frame::api_name(*api_key)
            ),
        }
    }
}

/// Handles one request frame (size prefix removed) received on a controller listener.
pub fn handle(ctx: &ServerContext, listener: &str, bytes: &[u8]) -> Outcome {
    let request = match frame::parse_request(bytes) {
        Ok(r) => r,
        Err(e) => return Outcome::Close(CloseReason::BadHeader(e)),
    };
    let (api_key, api_version, correlation_id) = (
        request.api_key(),
        request.api_version(),
        request.correlation_id(),
    );
    let Some(api) = served_api(api_key) else {
        return Outcome::Close(CloseReason::NotServed {
            api_key,
            api_version,
            correlation_id,
        });
    };
    if !(api.min_version..=api.max_version).contains(&api_version) {
        if api_key == messages::ApiVersionsRequest::API_KEY {
            // KIP-511: answer in v0 so any client can read it, naming the versions we serve.
            return respond(&request, &api_versions::unsupported_version_response(), 0);
        }
        return Outcome::Close(CloseReason::UnsupportedVersion {
            api_key,
            api_version,
            correlation_id,
        });
    }
    // The APIs the controller serves go to the node loop, which answers them as the active
    // controller or as a non-active one.
    if let Some(decoded) = controller_call(api_key, api_version, request.body) {
        return match decoded {
            Ok(request) => Outcome::Node(NodeCall {
                api_key,
                api_version,
                correlation_id,
                request,
                enveloped: None,
                principal: None,
            }),
            Err(error) => Outcome::Close(CloseReason::BadBody {
                api_key,
                api_version,
                correlation_id,
                error: error.to_string(),
            }),
        };
    }
    // Only these APIs need the non-active view (a read of the quorum view); raft traffic,
    // the hot path, skips it.
    if let Some(answered) = not_controller::answers(api_key)
        .then(|| not_controller::answer(api_key, api_version, request.body, &ctx.non_active()))
        .flatten()
    {
        return match answered {
            Ok(a) => respond(
                &request,
                &crate::protocol::codec::RawBody(a.body),
                api_version,
            ),
            Err(not_controller::AnswerError::Decode(error)) => {
                Outcome::Close(CloseReason::BadBody {
                    api_key,
                    api_version,
                    correlation_id,
                    error: error.to_string(),
                })
            }
            Err(not_controller::AnswerError::Encode(error)) => {
                Outcome::Close(CloseReason::Encode {
                    api_key,
                    api_version,
                    error,
                })
            }
        };
    }
    let result = match api_key {
        messages::ApiVersionsRequest::API_KEY => api_versions::handle(ctx, &request),
        messages::EnvelopeRequest::API_KEY => envelope(ctx, &request),
        messages::DescribeClusterRequest::API_KEY => {
            describe_cluster::handle(ctx, listener, &request)
        }
        messages::ControllerRegistrationRequest::API_KEY => {
            messages::ControllerRegistrationRequest::decode_exact(request.body, api_version).map(
                |r| {
                    Outcome::Node(NodeCall {
                        api_key,
                        api_version,
                        correlation_id,
                        request: NodeRequest::Register(r),
                        enveloped: None,
                        principal: None,
                    })
                },
            )
        }
        key => match raft::raft_api_by_key(key) {
            Some(api) => raft::decode_request(api.kind, api_version, request.body).map(|r| {
                Outcome::Raft(RaftCall {
                    api_key,
                    api_version,
                    correlation_id,
                    request: r,
                    enveloped: None,
                })
            }),
            None => unreachable!("every served api has a handler"),
        },
    };
    match result {
        Ok(outcome) => outcome,
        Err(error) => Outcome::Close(CloseReason::BadBody {
            api_key,
            api_version,
            correlation_id,
            error: error.to_string(),
        }),
    }
}

/// A request the active controller serves from the node loop: BrokerRegistration,
/// BrokerHeartbeat, UnregisterBroker, UpdateFeatures, CreateTopics, DeleteTopics,
/// CreatePartitions, ListPartitionReassignments, AlterPartition and ElectLeaders (`None` for
/// any other api). Bytes after the body are ignored, as Kafka ignores them.
fn controller_call(
    key: i16,
    version: i16,
    body: &[u8],
) -> Option<Result<NodeRequest, crate::protocol::codec::DecodeError>> {
    use messages::{
        AlterPartitionRequest, BrokerHeartbeatRequest, BrokerRegistrationRequest,
        CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest, ElectLeadersRequest,
        ListPartitionReassignmentsRequest, UnregisterBrokerRequest, UpdateFeaturesRequest,
    };
    Some(match key {
        BrokerRegistrationRequest::API_KEY => {
            BrokerRegistrationRequest::decode_prefix(body, version)
                .map(|r| NodeRequest::BrokerRegistration(r, version))
        }
        BrokerHeartbeatRequest::API_KEY => BrokerHeartbeatRequest::decode_prefix(body, version)
            .map(|r| NodeRequest::BrokerHeartbeat(r, version)),
        UnregisterBrokerRequest::API_KEY => UnregisterBrokerRequest::decode_prefix(body, version)
            .map(|r| NodeRequest::UnregisterBroker(r, version)),
        UpdateFeaturesRequest::API_KEY => UpdateFeaturesRequest::decode_prefix(body, version)
            .map(|r| NodeRequest::UpdateFeatures(r, version)),
        CreateTopicsRequest::API_KEY => CreateTopicsRequest::decode_prefix(body, version)
            .map(|r| NodeRequest::CreateTopics(r, version)),
        DeleteTopicsRequest::API_KEY => DeleteTopicsRequest::decode_prefix(body, version)
            .map(|r| NodeRequest::DeleteTopics(r, version)),
        CreatePartitionsRequest::API_KEY => CreatePartitionsRequest::decode_prefix(body, version)
            .map(|r| NodeRequest::CreatePartitions(r, version)),
        ListPartitionReassignmentsRequest::API_KEY => {
            ListPartitionReassignmentsRequest::decode_prefix(body, version)
                .map(|r| NodeRequest::ListPartitionReassignments(r, version))
        }
        AlterPartitionRequest::API_KEY => AlterPartitionRequest::decode_prefix(body, version)
            .map(|r| NodeRequest::AlterPartition(r, version)),
        ElectLeadersRequest::API_KEY => ElectLeadersRequest::decode_prefix(body, version)
            .map(|r| NodeRequest::ElectLeaders(r, version)),
        messages::AlterPartitionReassignmentsRequest::API_KEY => {
            messages::AlterPartitionReassignmentsRequest::decode_exact(body, version)
                .map(|r| NodeRequest::AlterPartitionReassignments(r, version))
        }
        messages::AssignReplicasToDirsRequest::API_KEY => {
            messages::AssignReplicasToDirsRequest::decode_exact(body, version)
                .map(|r| NodeRequest::AssignReplicasToDirs(r, version))
        }
        messages::AllocateProducerIdsRequest::API_KEY => {
            messages::AllocateProducerIdsRequest::decode_prefix(body, version)
                .map(|r| NodeRequest::AllocateProducerIds(r, version))
        }
        messages::AlterClientQuotasRequest::API_KEY => {
            messages::AlterClientQuotasRequest::decode_prefix(body, version)
                .map(|r| NodeRequest::AlterClientQuotas(r, version))
        }
        messages::AlterUserScramCredentialsRequest::API_KEY => {
            messages::AlterUserScramCredentialsRequest::decode_exact(body, version)
                .map(|r| NodeRequest::AlterUserScramCredentials(r, version))
        }
        messages::AlterConfigsRequest::API_KEY => {
            messages::AlterConfigsRequest::decode_prefix(body, version)
                .map(|r| NodeRequest::AlterConfigs(r, version, false))
        }
        messages::IncrementalAlterConfigsRequest::API_KEY => {
            messages::IncrementalAlterConfigsRequest::decode_prefix(body, version)
                .map(|r| NodeRequest::IncrementalAlterConfigs(r, version, false))
        }
        messages::UnregisterControllerRequest::API_KEY => {
            messages::UnregisterControllerRequest::decode_exact(body, version)
                .map(|r| NodeRequest::UnregisterController(r, version))
        }
        messages::CreateAclsRequest::API_KEY => {
            messages::CreateAclsRequest::decode_exact(body, version)
                .map(|r| NodeRequest::Acls(AclRequest::Create(r), version))
        }
        messages::DeleteAclsRequest::API_KEY => {
            messages::DeleteAclsRequest::decode_exact(body, version)
                .map(|r| NodeRequest::Acls(AclRequest::Delete(r), version))
        }
        messages::DescribeAclsRequest::API_KEY => {
            messages::DescribeAclsRequest::decode_exact(body, version)
                .map(|r| NodeRequest::Acls(AclRequest::Describe(r), version))
        }
        messages::CreateDelegationTokenRequest::API_KEY => {
            messages::CreateDelegationTokenRequest::decode_exact(body, version)
                .map(|r| NodeRequest::CreateDelegationToken(r, version, false))
        }
        messages::RenewDelegationTokenRequest::API_KEY => {
            messages::RenewDelegationTokenRequest::decode_exact(body, version)
                .map(|r| NodeRequest::RenewDelegationToken(r, version, false))
        }
        messages::ExpireDelegationTokenRequest::API_KEY => {
            messages::ExpireDelegationTokenRequest::decode_exact(body, version)
                .map(|r| NodeRequest::ExpireDelegationToken(r, version, false))
        }
        _ => return None,
    })
}

/// An Envelope from a broker: its answer, or the forwarded DescribeQuorum for raft to answer.
fn envelope(
    ctx: &ServerContext,
    request: &ParsedRequest<'_>,
) -> Result<Outcome, crate::protocol::codec::DecodeError> {
    let body = messages::EnvelopeRequest::decode_exact(request.body, request.api_version())?;
    let answer = match not_controller::answer_envelope(&body, &ctx.non_active()) {
        Ok(a) => a,
        Err(not_controller::AnswerError::Encode(error)) => {
            return Ok(Outcome::Close(CloseReason::Encode {
                api_key: messages::EnvelopeRequest::API_KEY,
                api_version: request.api_version(),
                error,
            }))
        }
        Err(not_controller::AnswerError::Decode(e)) => return Err(e),
    };
    match answer {
        not_controller::EnvelopeAnswer::Ready(response) => {
            Ok(respond(request, &response, request.api_version()))
        }
        not_controller::EnvelopeAnswer::Node {
            key,
            version,
            correlation_id,
            body,
            principal,
        } => match controller_call(key, version, &body) {
            Some(Ok(inner)) => Ok(Outcome::Node(NodeCall {
                api_key: key,
                api_version: version,
                correlation_id,
                request: inner.forwarded(),
                enveloped: Some(Enveloped {
                    version: request.api_version(),
                    correlation_id: request.correlation_id(),
                }),
                principal: Some(principal),
            })),
            // Java: an inner request that does not parse is an envelope-level
            // UNSUPPORTED_VERSION.
            _ => Ok(respond(
                request,
                &not_controller::envelope_error(
                    crate::protocol::errors::ErrorCode::UNSUPPORTED_VERSION,
                ),
                request.api_version(),
            )),
        },
        not_controller::EnvelopeAnswer::DescribeQuorum {
            version,
            correlation_id,
            body,
        } => {
            let api = raft::raft_api(ApiKind::DescribeQuorum);
            match raft::decode_request(api.kind, version, &body) {
                Ok(r) => Ok(Outcome::Raft(RaftCall {
                    api_key: api.key,
                    api_version: version,
                    correlation_id,
                    request: r,
                    enveloped: Some(Enveloped {
                        version: request.api_version(),
                        correlation_id: request.correlation_id(),
                    }),
                })),
                // Java: an inner request that does not parse is an envelope-level
                // UNSUPPORTED_VERSION.
                Err(_) => Ok(respond(
                    request,
                    &not_controller::envelope_error(
                        crate::protocol::errors::ErrorCode::UNSUPPORTED_VERSION,
                    ),
                    request.api_version(),
                )),
            }
        }
    }
}

/// Encodes `body` as the response to `request` at `body_version`.
fn respond<M: Message>(request: &ParsedRequest<'_>, body: &M, body_version: i16) -> Outcome {
    match frame::encode_response(
        request.api_key(),
        request.api_version(),
        request.correlation_id(),
        body,
        body_version,
    ) {
        Ok(bytes) => Outcome::Respond(bytes),
        Err(error) => Outcome::Close(CloseReason::Encode {
            api_key: request.api_key(),
            api_version: request.api_version(),
            error,
        }),
    }
}
