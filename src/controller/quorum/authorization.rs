//! The authorizer checks, as Kafka 4.4's `ControllerApis` makes them before it hands a request
//! to its quorum controller. The engine is `controller::acls::authorizer`,
//! reading the committed ACLs; this file says which operation each API needs on the cluster
//! (`AuthHelper.authorizeClusterOperation`) and answers a refusal with the API's error
//! response (`getErrorResponse(ClusterAuthorizationException)`), whose shape and message differ
//! from API to API. Without an authorizer every check passes.

use std::collections::BTreeSet;

use super::not_active;
use super::request::ControllerRequest;
use super::{ControllerReply, QuorumController};
use crate::controller::acls::authorizer::{Authorizer, Denied, NotReady};
use crate::controller::acls::operation;
use crate::controller::principal::RequestPrincipal;
use crate::protocol::messages::alter_partition_reassignments_response as reassign;
use crate::protocol::messages::alter_user_scram_credentials_response as scram;
use crate::protocol::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use crate::protocol::messages::list_partition_reassignments_response as listed;
use crate::protocol::messages::*;

/// The operation `ControllerApis` requires on the cluster before it serves `request`, and the
/// API's name; `None` for the APIs it authorizes otherwise (topics, configs, ACLs, tokens).
pub(super) fn cluster_operation(request: &ControllerRequest) -> Option<(&'static str, i8)> {
    use operation::{ALTER, ALTER_CONFIGS, CLUSTER_ACTION, DESCRIBE};
    Some(match request {
        ControllerRequest::Register(_) => ("ControllerRegistration", CLUSTER_ACTION),
        ControllerRequest::BrokerRegistration(..) => ("BrokerRegistration", CLUSTER_ACTION),
        ControllerRequest::BrokerHeartbeat(..) => ("BrokerHeartbeat", CLUSTER_ACTION),
        ControllerRequest::AlterPartition(..) => ("AlterPartition", CLUSTER_ACTION),
        ControllerRequest::AllocateProducerIds(..) => ("AllocateProducerIds", CLUSTER_ACTION),
        ControllerRequest::AssignReplicasToDirs(..) => ("AssignReplicasToDirs", CLUSTER_ACTION),
        ControllerRequest::UnregisterBroker(..) => ("UnregisterBroker", ALTER),
        ControllerRequest::UnregisterController(..) => ("UnregisterController", ALTER),
        ControllerRequest::UpdateFeatures(..) => ("UpdateFeatures", ALTER),
        ControllerRequest::ElectLeaders(..) => ("ElectLeaders", ALTER),
        ControllerRequest::AlterPartitionReassignments(..) => {
            ("AlterPartitionReassignments", ALTER)
        }
        ControllerRequest::AlterUserScramCredentials(..) => ("AlterUserScramCredentials", ALTER),
        ControllerRequest::ListPartitionReassignments(..) => {
            ("ListPartitionReassignments", DESCRIBE)
        }
        ControllerRequest::AlterClientQuotas(..) => ("AlterClientQuotas", ALTER_CONFIGS),
        _ => return None,
    })
}

impl QuorumController {
    /// The authorizer over the committed ACLs, as Java's authorizer sees published images;
    /// not loaded until the node first catches up (the authorizer's first load).
    fn authorizer(&self) -> Authorizer<'_> {
        let (_, stable) = self.machine.stable_image();
        Authorizer {
            config: self.settings.authorizer.as_ref(),
            acls: self.caught_up.then_some(&stable.acls),
        }
    }

    /// Whether `who` may do `op` on `(resource_type, name)` (always, without an authorizer);
    /// `NotReady` for all but super users until the first load.
    pub(super) fn authorize(
        &self,
        who: &RequestPrincipal,
        resource_type: i8,
        name: &str,
        op: i8,
    ) -> Result<bool, NotReady> {
        self.authorizer().allows(who, resource_type, name, op)
    }

    /// [`Self::authorize`] for the checks made on parts of a request (each topic, each config
    /// resource, a token's owner): before the first load they refuse the part, where Java
    /// answers the whole request UNKNOWN_SERVER_ERROR (docs/notes/security.md, "Not done").
    pub(super) fn authorized(
        &self,
        who: &RequestPrincipal,
        resource_type: i8,
        name: &str,
        op: i8,
    ) -> bool {
        self.authorize(who, resource_type, name, op)
            .unwrap_or(false)
    }

    /// `AuthHelper.authorizeClusterOperation`: `Ok` if `who` may do `op` on the cluster, as
    /// `api` needs, else the refusal to answer with (logged).
    pub(super) fn authorize_cluster_operation(
        &self,
        api: &'static str,
        who: &RequestPrincipal,
        op: i8,
    ) -> Result<(), Denied> {
        self.authorizer().cluster_operation(api, who, op)
    }

    /// The refusal of a request whose sender lacks the cluster operation its API needs, as
    /// the API's error response; `None` when it may go on.
    pub(super) fn cluster_refusal(
        &self,
        request: &ControllerRequest,
        who: &RequestPrincipal,
    ) -> Option<ControllerReply> {
        let (api, op) = cluster_operation(request)?;
        let denied = self.authorize_cluster_operation(api, who, op).err()?;
        Some(error_response(request, &denied))
    }
}

/// `getErrorResponse` of each API `cluster_operation` names: some carry the exception's
/// message, some the code's own, some no message at all.
fn error_response(request: &ControllerRequest, denied: &Denied) -> ControllerReply {
    let code = denied.error_code().0;
    let message = denied.exception_message();
    match request {
        ControllerRequest::Register(_) => {
            ControllerReply::Register(ControllerRegistrationResponse {
                error_code: code,
                error_message: Some(denied.code_message()),
                ..Default::default()
            })
        }
        ControllerRequest::BrokerRegistration(..) => {
            ControllerReply::BrokerRegistration(BrokerRegistrationResponse {
                error_code: code,
                ..Default::default()
            })
        }
        ControllerRequest::BrokerHeartbeat(..) => {
            ControllerReply::BrokerHeartbeat(BrokerHeartbeatResponse {
                error_code: code,
                ..Default::default()
            })
        }
        ControllerRequest::AlterPartition(..) => {
            ControllerReply::AlterPartition(AlterPartitionResponse {
                error_code: code,
                ..Default::default()
            })
        }
        ControllerRequest::AllocateProducerIds(..) => {
            ControllerReply::AllocateProducerIds(AllocateProducerIdsResponse {
                error_code: code,
                ..Default::default()
            })
        }
        ControllerRequest::AssignReplicasToDirs(..) => {
            ControllerReply::AssignReplicasToDirs(AssignReplicasToDirsResponse {
                error_code: code,
                ..Default::default()
            })
        }
        ControllerRequest::UnregisterBroker(..) => {
            ControllerReply::UnregisterBroker(UnregisterBrokerResponse {
                error_code: code,
                error_message: message,
                ..Default::default()
            })
        }
        ControllerRequest::UnregisterController(..) => {
            ControllerReply::UnregisterController(UnregisterControllerResponse {
                error_code: code,
                error_message: message,
                ..Default::default()
            })
        }
        // `UpdateFeaturesResponse.createWithErrors` with no feature results.
        ControllerRequest::UpdateFeatures(..) => {
            ControllerReply::UpdateFeatures(UpdateFeaturesResponse {
                error_code: code,
                error_message: message,
                ..Default::default()
            })
        }
        ControllerRequest::ElectLeaders(r, v) => {
            ControllerReply::ElectLeaders(ElectLeadersResponse {
                error_code: if *v >= 1 { code } else { 0 },
                replica_election_results: r
                    .topic_partitions
                    .iter()
                    .flatten()
                    .map(|t| ReplicaElectionResult {
                        topic: t.topic.clone(),
                        partition_result: t
                            .partitions
                            .iter()
                            .map(|&p| PartitionResult {
                                partition_id: p,
                                error_code: code,
                                error_message: message.clone(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
        }
        ControllerRequest::AlterPartitionReassignments(r, _) => {
            ControllerReply::AlterPartitionReassignments(AlterPartitionReassignmentsResponse {
                error_code: code,
                error_message: message.clone(),
                responses: r
                    .topics
                    .iter()
                    .map(|t| reassign::ReassignableTopicResponse {
                        name: t.name.clone(),
                        partitions: t
                            .partitions
                            .iter()
                            .map(|p| reassign::ReassignablePartitionResponse {
                                partition_index: p.partition_index,
                                error_code: code,
                                error_message: message.clone(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
        }
        // One result per user, sorted by name.
        ControllerRequest::AlterUserScramCredentials(r, _) => {
            let users: BTreeSet<&str> = r
                .deletions
                .iter()
                .map(|d| d.name.as_str())
                .chain(r.upsertions.iter().map(|u| u.name.as_str()))
                .collect();
            ControllerReply::AlterUserScramCredentials(AlterUserScramCredentialsResponse {
                results: users
                    .into_iter()
                    .map(|user| scram::AlterUserScramCredentialsResult {
                        user: user.to_string(),
                        error_code: code,
                        error_message: message.clone(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
        }
        ControllerRequest::ListPartitionReassignments(r, _) => {
            ControllerReply::ListPartitionReassignments(ListPartitionReassignmentsResponse {
                error_code: code,
                error_message: message,
                topics: r
                    .topics
                    .iter()
                    .flatten()
                    .map(|t| listed::OngoingTopicReassignment {
                        name: t.name.clone(),
                        partitions: t
                            .partition_indexes
                            .iter()
                            .map(|&p| listed::OngoingPartitionReassignment {
                                partition_index: p,
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
        }
        ControllerRequest::AlterClientQuotas(r, _) => ControllerReply::AlterClientQuotas(
            not_active::alter_client_quotas_failed(r, code, &denied.code_message()),
        ),
        other => unreachable!("{other:?} needs no cluster operation"),
    }
}
