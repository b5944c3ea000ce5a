//! The controller's request model: every request the quorum controller decides
//! ([`ControllerRequest`]) and its reply ([`ControllerReply`]). The listener decodes a frame into
//! one of these once, at the edge (`server::api`), and encodes the reply back; everything in
//! between speaks these types.

use crate::protocol::messages;

#[derive(Debug, PartialEq)]
pub enum ControllerRequest {
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

/// The ACL requests, answered by `quorum::acls`.
#[derive(Debug, PartialEq)]
pub enum AclRequest {
    Create(messages::CreateAclsRequest),
    Delete(messages::DeleteAclsRequest),
    Describe(messages::DescribeAclsRequest),
}

impl ControllerRequest {
    /// The request as it came inside an Envelope (config checks depend on it).
    pub fn forwarded(self) -> ControllerRequest {
        match self {
            ControllerRequest::AlterConfigs(r, v, _) => ControllerRequest::AlterConfigs(r, v, true),
            ControllerRequest::IncrementalAlterConfigs(r, v, _) => {
                ControllerRequest::IncrementalAlterConfigs(r, v, true)
            }
            ControllerRequest::CreateDelegationToken(r, v, _) => {
                ControllerRequest::CreateDelegationToken(r, v, true)
            }
            ControllerRequest::RenewDelegationToken(r, v, _) => {
                ControllerRequest::RenewDelegationToken(r, v, true)
            }
            ControllerRequest::ExpireDelegationToken(r, v, _) => {
                ControllerRequest::ExpireDelegationToken(r, v, true)
            }
            other => other,
        }
    }
}

#[derive(Debug, PartialEq)]
pub enum ControllerReply {
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

impl ControllerReply {
    /// Whether the answer reports `NOT_CONTROLLER` (an Envelope then fails as a whole).
    pub fn not_controller(&self) -> bool {
        const NOT_CONTROLLER: i16 = crate::protocol::errors::ErrorCode::NOT_CONTROLLER.0;
        let code = match self {
            ControllerReply::Register(r) => r.error_code,
            ControllerReply::BrokerRegistration(r) => r.error_code,
            ControllerReply::BrokerHeartbeat(r) => r.error_code,
            ControllerReply::UnregisterBroker(r) => r.error_code,
            ControllerReply::UnregisterController(r) => r.error_code,
            ControllerReply::UpdateFeatures(r) => r.error_code,
            ControllerReply::ListPartitionReassignments(r) => r.error_code,
            ControllerReply::AlterPartition(r) => r.error_code,
            ControllerReply::AlterPartitionReassignments(r) => r.error_code,
            ControllerReply::AssignReplicasToDirs(r) => r.error_code,
            ControllerReply::ElectLeaders(r) => {
                return r.error_code == NOT_CONTROLLER
                    || r.replica_election_results.iter().any(|t| {
                        t.partition_result
                            .iter()
                            .any(|p| p.error_code == NOT_CONTROLLER)
                    })
            }
            ControllerReply::AllocateProducerIds(r) => r.error_code,
            ControllerReply::CreateDelegationToken(r) => r.error_code,
            ControllerReply::RenewDelegationToken(r) => r.error_code,
            ControllerReply::ExpireDelegationToken(r) => r.error_code,
            // Java's `errorCounts().containsKey(NOT_CONTROLLER)`: any result's error.
            ControllerReply::CreateTopics(r) => {
                return r.topics.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            ControllerReply::DeleteTopics(r) => {
                return r.responses.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            ControllerReply::CreatePartitions(r) => {
                return r.results.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            ControllerReply::AlterClientQuotas(r) => {
                return r.entries.iter().any(|e| e.error_code == NOT_CONTROLLER)
            }
            ControllerReply::AlterUserScramCredentials(r) => {
                return r.results.iter().any(|e| e.error_code == NOT_CONTROLLER)
            }
            ControllerReply::AlterConfigs(r) => {
                return r.responses.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            ControllerReply::IncrementalAlterConfigs(r) => {
                return r.responses.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            ControllerReply::CreateAcls(r) => {
                return r.results.iter().any(|t| t.error_code == NOT_CONTROLLER)
            }
            ControllerReply::DeleteAcls(r) => {
                return r
                    .filter_results
                    .iter()
                    .any(|t| t.error_code == NOT_CONTROLLER)
            }
            ControllerReply::DescribeAcls(r) => r.error_code,
            // Every controller describes configs: never NOT_CONTROLLER.
            ControllerReply::DescribeConfigs(_) => return false,
        };
        code == NOT_CONTROLLER
    }

    /// This kind of response with only `code` set (a reply whose records were not committed).
    pub fn with_error(&self, code: crate::protocol::errors::ErrorCode) -> ControllerReply {
        let e = code.0;
        match self {
            ControllerReply::Register(_) => {
                ControllerReply::Register(messages::ControllerRegistrationResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            ControllerReply::BrokerRegistration(_) => {
                ControllerReply::BrokerRegistration(messages::BrokerRegistrationResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            ControllerReply::BrokerHeartbeat(_) => {
                ControllerReply::BrokerHeartbeat(messages::BrokerHeartbeatResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            ControllerReply::UnregisterBroker(_) => {
                ControllerReply::UnregisterBroker(messages::UnregisterBrokerResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            ControllerReply::UnregisterController(_) => {
                ControllerReply::UnregisterController(messages::UnregisterControllerResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            ControllerReply::UpdateFeatures(_) => {
                ControllerReply::UpdateFeatures(messages::UpdateFeaturesResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            // Their answers carry the error per topic: the handlers build those themselves.
            ControllerReply::CreateTopics(r) => ControllerReply::CreateTopics(r.clone()),
            ControllerReply::DeleteTopics(r) => ControllerReply::DeleteTopics(r.clone()),
            ControllerReply::CreatePartitions(r) => ControllerReply::CreatePartitions(r.clone()),
            ControllerReply::AlterPartitionReassignments(r) => {
                ControllerReply::AlterPartitionReassignments(r.clone())
            }
            ControllerReply::AlterClientQuotas(r) => ControllerReply::AlterClientQuotas(r.clone()),
            // The token handlers build their refusals themselves.
            ControllerReply::CreateDelegationToken(r) => {
                ControllerReply::CreateDelegationToken(r.clone())
            }
            ControllerReply::RenewDelegationToken(r) => {
                ControllerReply::RenewDelegationToken(r.clone())
            }
            ControllerReply::ExpireDelegationToken(r) => {
                ControllerReply::ExpireDelegationToken(r.clone())
            }
            ControllerReply::AlterUserScramCredentials(r) => {
                ControllerReply::AlterUserScramCredentials(r.clone())
            }
            ControllerReply::AlterConfigs(r) => ControllerReply::AlterConfigs(r.clone()),
            ControllerReply::IncrementalAlterConfigs(r) => {
                ControllerReply::IncrementalAlterConfigs(r.clone())
            }
            // The ACL handlers build their refusals themselves.
            ControllerReply::CreateAcls(r) => ControllerReply::CreateAcls(r.clone()),
            ControllerReply::DeleteAcls(r) => ControllerReply::DeleteAcls(r.clone()),
            ControllerReply::DescribeAcls(r) => ControllerReply::DescribeAcls(r.clone()),
            // Answered at once from the committed image: nothing waits for a commit.
            ControllerReply::DescribeConfigs(r) => ControllerReply::DescribeConfigs(r.clone()),
            ControllerReply::ListPartitionReassignments(_) => {
                ControllerReply::ListPartitionReassignments(
                    messages::ListPartitionReassignmentsResponse {
                        error_code: e,
                        ..Default::default()
                    },
                )
            }
            ControllerReply::AlterPartition(_) => {
                ControllerReply::AlterPartition(messages::AlterPartitionResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            ControllerReply::ElectLeaders(_) => {
                ControllerReply::ElectLeaders(messages::ElectLeadersResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            ControllerReply::AllocateProducerIds(_) => {
                ControllerReply::AllocateProducerIds(messages::AllocateProducerIdsResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
            ControllerReply::AssignReplicasToDirs(_) => {
                ControllerReply::AssignReplicasToDirs(messages::AssignReplicasToDirsResponse {
                    error_code: e,
                    ..Default::default()
                })
            }
        }
    }
}
