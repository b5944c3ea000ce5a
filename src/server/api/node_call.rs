//! The requests the node loop answers besides the raft RPCs: what a connection hands it
//! (`NodeCall`, `NodeRequest`), what comes back (`NodeResponse`), and the decoding of a request
//! body into one (`controller_call`).

use super::{CloseReason, Enveloped, Outcome};
use crate::controller::principal::RequestPrincipal;
use crate::protocol::codec::{ApiMessage, Message};
use crate::protocol::frame;
use crate::protocol::messages;

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
    /// `DescribeConfigs` (key 32), answered by every controller from its committed image.
    DescribeConfigs(messages::DescribeConfigsRequest, i16),
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
    pub(super) fn forwarded(self) -> NodeRequest {
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
    DescribeConfigs(messages::DescribeConfigsResponse),
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
            // Every controller describes configs: never NOT_CONTROLLER.
            NodeResponse::DescribeConfigs(_) => return false,
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
        super::in_envelope(outer, self.not_controller(), &bytes)
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
            // Answered at once from the committed image: nothing waits for a commit.
            NodeResponse::DescribeConfigs(r) => NodeResponse::DescribeConfigs(r.clone()),
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
            NodeResponse::DescribeConfigs(r) => frame::encode_response(key, v, corr, r, v),
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

/// A request the active controller serves from the node loop: BrokerRegistration,
/// BrokerHeartbeat, UnregisterBroker, UpdateFeatures, CreateTopics, DeleteTopics,
/// CreatePartitions, ListPartitionReassignments, AlterPartition and ElectLeaders (`None` for
/// any other api). Bytes after the body are ignored, as Kafka ignores them.
pub(super) fn controller_call(
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
        messages::DescribeConfigsRequest::API_KEY => {
            messages::DescribeConfigsRequest::decode_prefix(body, version)
                .map(|r| NodeRequest::DescribeConfigs(r, version))
        }
        _ => return None,
    })
}
