//! The node loop's authorizer checks, as Kafka 4.4's `ControllerApis` makes them before it
//! hands a request to its quorum controller. The engine is `controller::acls::authorizer`,
//! reading the committed ACLs; this file says which operation each API needs on the cluster
//! (`AuthHelper.authorizeClusterOperation`) and answers a refusal with the API's error
//! response (`getErrorResponse(ClusterAuthorizationException)`), whose shape and message differ
//! from API to API. Without an authorizer every check passes.

use std::collections::BTreeSet;

use super::runner::NodeLoop;
use crate::controller::acls::authorizer::{self, allows, Denied, NotReady};
use crate::controller::acls::{operation, resource, CLUSTER_NAME};
use crate::controller::principal::RequestPrincipal;
use crate::protocol::messages::alter_partition_reassignments_response as reassign;
use crate::protocol::messages::alter_user_scram_credentials_response as scram;
use crate::protocol::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use crate::protocol::messages::list_partition_reassignments_response as listed;
use crate::protocol::messages::*;
use crate::raft::{QuorumStateStore, RaftLog};
use crate::server::api::{not_controller, NodeRequest, NodeResponse};

/// The operation `ControllerApis` requires on the cluster before it serves `request`, and the
/// API's name; `None` for the APIs it authorizes otherwise (topics, configs, ACLs, tokens).
pub(super) fn cluster_operation(request: &NodeRequest) -> Option<(&'static str, i8)> {
    use operation::{ALTER, ALTER_CONFIGS, CLUSTER_ACTION, DESCRIBE};
    Some(match request {
        NodeRequest::Register(_) => ("ControllerRegistration", CLUSTER_ACTION),
        NodeRequest::BrokerRegistration(..) => ("BrokerRegistration", CLUSTER_ACTION),
        NodeRequest::BrokerHeartbeat(..) => ("BrokerHeartbeat", CLUSTER_ACTION),
        NodeRequest::AlterPartition(..) => ("AlterPartition", CLUSTER_ACTION),
        NodeRequest::AllocateProducerIds(..) => ("AllocateProducerIds", CLUSTER_ACTION),
        NodeRequest::AssignReplicasToDirs(..) => ("AssignReplicasToDirs", CLUSTER_ACTION),
        NodeRequest::UnregisterBroker(..) => ("UnregisterBroker", ALTER),
        NodeRequest::UnregisterController(..) => ("UnregisterController", ALTER),
        NodeRequest::UpdateFeatures(..) => ("UpdateFeatures", ALTER),
        NodeRequest::ElectLeaders(..) => ("ElectLeaders", ALTER),
        NodeRequest::AlterPartitionReassignments(..) => ("AlterPartitionReassignments", ALTER),
        NodeRequest::AlterUserScramCredentials(..) => ("AlterUserScramCredentials", ALTER),
        NodeRequest::ListPartitionReassignments(..) => ("ListPartitionReassignments", DESCRIBE),
        NodeRequest::AlterClientQuotas(..) => ("AlterClientQuotas", ALTER_CONFIGS),
        _ => return None,
    })
}

impl<L: RaftLog, S: QuorumStateStore> NodeLoop<L, S> {
    /// Whether `who` may do `op` on `(resource_type, name)`: the committed ACLs, as Java's
    /// authorizer sees published images (always, without an authorizer); `NotReady` for all
    /// but super users until the node first catches up (the authorizer's first load).
    pub(super) fn authorize(
        &self,
        who: &RequestPrincipal,
        resource_type: i8,
        name: &str,
        op: i8,
    ) -> Result<bool, NotReady> {
        let (_, stable) = self.controller.stable_image();
        let acls = self.caught_up.then_some(&stable.acls);
        allows(
            self.ctx.authorizer.as_ref(),
            acls,
            who,
            resource_type,
            name,
            op,
        )
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
        let verdict = self.authorize(who, resource::CLUSTER, CLUSTER_NAME, op);
        authorizer::cluster_operation(verdict, api, who, op)
    }

    /// Publishes the committed ACLs for the checks made outside the loop, once the node has
    /// caught up.
    pub(super) fn publish_acls(&self) {
        if self.ctx.authorizer.is_some() && self.caught_up {
            self.ctx
                .publish_acls(&self.controller.stable_image().1.acls);
        }
    }

    /// The refusal of a request whose sender lacks the cluster operation its API needs, as
    /// the API's error response; `None` when it may go on.
    pub(super) fn cluster_refusal(
        &self,
        request: &NodeRequest,
        who: &RequestPrincipal,
    ) -> Option<NodeResponse> {
        let (api, op) = cluster_operation(request)?;
        let denied = self.authorize_cluster_operation(api, who, op).err()?;
        Some(error_response(request, &denied))
    }
}

/// `getErrorResponse` of each API `cluster_operation` names: some carry the exception's
/// message, some the code's own, some no message at all.
fn error_response(request: &NodeRequest, denied: &Denied) -> NodeResponse {
    let code = denied.error_code().0;
    let message = denied.exception_message();
    match request {
        NodeRequest::Register(_) => NodeResponse::Register(ControllerRegistrationResponse {
            error_code: code,
            error_message: Some(denied.code_message()),
            ..Default::default()
        }),
        NodeRequest::BrokerRegistration(..) => {
            NodeResponse::BrokerRegistration(BrokerRegistrationResponse {
                error_code: code,
                ..Default::default()
            })
        }
        NodeRequest::BrokerHeartbeat(..) => {
            NodeResponse::BrokerHeartbeat(BrokerHeartbeatResponse {
                error_code: code,
                ..Default::default()
            })
        }
        NodeRequest::AlterPartition(..) => NodeResponse::AlterPartition(AlterPartitionResponse {
            error_code: code,
            ..Default::default()
        }),
        NodeRequest::AllocateProducerIds(..) => {
            NodeResponse::AllocateProducerIds(AllocateProducerIdsResponse {
                error_code: code,
                ..Default::default()
            })
        }
        NodeRequest::AssignReplicasToDirs(..) => {
            NodeResponse::AssignReplicasToDirs(AssignReplicasToDirsResponse {
                error_code: code,
                ..Default::default()
            })
        }
        NodeRequest::UnregisterBroker(..) => {
            NodeResponse::UnregisterBroker(UnregisterBrokerResponse {
                error_code: code,
                error_message: message,
                ..Default::default()
            })
        }
        NodeRequest::UnregisterController(..) => {
            NodeResponse::UnregisterController(UnregisterControllerResponse {
                error_code: code,
                error_message: message,
                ..Default::default()
            })
        }
        // `UpdateFeaturesResponse.createWithErrors` with no feature results.
        NodeRequest::UpdateFeatures(..) => NodeResponse::UpdateFeatures(UpdateFeaturesResponse {
            error_code: code,
            error_message: message,
            ..Default::default()
        }),
        NodeRequest::ElectLeaders(r, v) => NodeResponse::ElectLeaders(ElectLeadersResponse {
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
        }),
        NodeRequest::AlterPartitionReassignments(r, _) => {
            NodeResponse::AlterPartitionReassignments(AlterPartitionReassignmentsResponse {
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
        NodeRequest::AlterUserScramCredentials(r, _) => {
            let users: BTreeSet<&str> = r
                .deletions
                .iter()
                .map(|d| d.name.as_str())
                .chain(r.upsertions.iter().map(|u| u.name.as_str()))
                .collect();
            NodeResponse::AlterUserScramCredentials(AlterUserScramCredentialsResponse {
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
        NodeRequest::ListPartitionReassignments(r, _) => {
            NodeResponse::ListPartitionReassignments(ListPartitionReassignmentsResponse {
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
        NodeRequest::AlterClientQuotas(r, _) => NodeResponse::AlterClientQuotas(
            not_controller::alter_client_quotas_failed(r, code, &denied.code_message()),
        ),
        other => unreachable!("{other:?} needs no cluster operation"),
    }
}
