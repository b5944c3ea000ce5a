//! One answer per API, as a Java controller that is not the active one gives it. Most are the
//! request class's `getErrorResponse(NotControllerException)`; the checks Java's
//! `ControllerApis` makes before it reaches its quorum controller come first where their
//! answer does not depend on metadata (the quorum controller also answers an empty request
//! at once, without asking whether it is active).

use std::collections::{BTreeSet, HashSet};

use crate::protocol::codec::Uuid;

use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_client_quotas_response as quotas;
use crate::protocol::messages::alter_configs_response as alter_configs_resp;
use crate::protocol::messages::alter_partition_reassignments_response as reassign;
use crate::protocol::messages::alter_user_scram_credentials_response as scram;
use crate::protocol::messages::create_acls_response::AclCreationResult;
use crate::protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use crate::protocol::messages::create_topics_response::CreatableTopicResult;
use crate::protocol::messages::delete_acls_response::DeleteAclsFilterResult;
use crate::protocol::messages::delete_topics_response::DeletableTopicResult;
use crate::protocol::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use crate::protocol::messages::incremental_alter_configs_response as incremental_resp;
use crate::protocol::messages::list_partition_reassignments_response as list_reassign;
use crate::protocol::messages::*;

/// What a controller that is not the active one needs to know to answer as Java does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonActive {
    /// The node this controller believes leads the quorum, when that is another node. kraftd
    /// never names itself here: a controller that is active answers for itself.
    pub active_elsewhere: Option<i32>,
    /// `delete.topic.enable`.
    pub delete_topic_enable: bool,
    /// The request came inside an Envelope (a broker forwarded it).
    pub forwarded: bool,
}

impl NonActive {
    /// The answer context of controller `own`, which knows `leader` as the leader.
    pub fn of(own: i32, leader: Option<i32>, delete_topic_enable: bool) -> NonActive {
        NonActive {
            active_elsewhere: leader.filter(|&l| l != own),
            delete_topic_enable,
            forwarded: false,
        }
    }

    /// Java's `NotControllerException` message (`ControllerExceptions.newWrongControllerException`).
    pub fn message(&self) -> String {
        match self.active_elsewhere {
            Some(id) => format!("The active controller appears to be node {id}."),
            None => "No controller appears to be active.".to_string(),
        }
    }
}

const NOT_CONTROLLER: i16 = ErrorCode::NOT_CONTROLLER.0;

/// Kafka's `Errors.NOT_CONTROLLER.message()`, used where Java takes the code's own text.
const NOT_CONTROLLER_TEXT: &str = "This is not the correct controller for this cluster.";

/// Kafka's config resource types (`ConfigResource.Type`) that exist; others are UNKNOWN.
fn known_resource_type(id: i8) -> bool {
    // TOPIC 2, BROKER 4, BROKER_LOGGER 8, CLIENT_METRICS 16, GROUP 32.
    matches!(id, 2 | 4 | 8 | 16 | 32)
}

pub fn create_topics(r: &CreateTopicsRequest, _v: i16, ctx: &NonActive) -> CreateTopicsResponse {
    // ControllerApis drops duplicates and the metadata topic before asking the quorum
    // controller, which answers an empty request at once.
    let mut seen = HashSet::new();
    let mut duplicate = BTreeSet::new();
    for t in &r.topics {
        if !seen.insert(t.name.as_str()) {
            duplicate.insert(t.name.as_str());
        }
    }
    let asks_controller = r
        .topics
        .iter()
        .any(|t| !duplicate.contains(t.name.as_str()) && t.name != "__cluster_metadata");
    if asks_controller {
        let message = ctx.message();
        return CreateTopicsResponse {
            topics: r
                .topics
                .iter()
                .map(|t| CreatableTopicResult {
                    name: t.name.clone(),
                    error_code: NOT_CONTROLLER,
                    error_message: Some(message.clone()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
    }
    let mut topics: Vec<CreatableTopicResult> = duplicate
        .iter()
        .map(|name| CreatableTopicResult {
            name: name.to_string(),
            error_code: ErrorCode::INVALID_REQUEST.0,
            error_message: Some("Duplicate topic name.".into()),
            ..Default::default()
        })
        .collect();
    if seen.contains("__cluster_metadata") && !duplicate.contains("__cluster_metadata") {
        topics.push(CreatableTopicResult {
            name: "__cluster_metadata".into(),
            error_code: ErrorCode::INVALID_REQUEST.0,
            error_message: Some(
                "Creation of internal topic __cluster_metadata is prohibited.".into(),
            ),
            ..Default::default()
        });
    }
    CreateTopicsResponse {
        topics,
        ..Default::default()
    }
}

pub fn delete_topics(r: &DeleteTopicsRequest, v: i16, ctx: &NonActive) -> DeleteTopicsResponse {
    // The request names topics by name (v0-5) or by name or id (v6+).
    let named: Vec<(Option<String>, Uuid)> = if v < 6 {
        r.topic_names
            .iter()
            .map(|n| (Some(n.clone()), Uuid::ZERO))
            .collect()
    } else {
        r.topics
            .iter()
            .map(|t| (t.name.clone(), t.topic_id))
            .collect()
    };
    let all_failed = |code: ErrorCode| DeleteTopicsResponse {
        responses: named
            .iter()
            .map(|(name, id)| DeletableTopicResult {
                name: name.clone(),
                topic_id: *id,
                error_code: code.0,
                error_message: None,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    if !ctx.delete_topic_enable {
        return all_failed(if v < 3 {
            ErrorCode::INVALID_REQUEST
        } else {
            ErrorCode::TOPIC_DELETION_DISABLED
        });
    }
    // What Java refuses before resolving names and ids: entries with neither or both, and
    // duplicates. If anything is left, the active controller must resolve and delete it
    // (kraftd holds no topics yet), and Java's answer is then NOT_CONTROLLER for every entry.
    let mut refused = Vec::new();
    let (mut names, mut ids) = (Vec::new(), Vec::new());
    for (name, id) in &named {
        match (name, *id == Uuid::ZERO) {
            (None, true) => refused.push((
                None,
                Uuid::ZERO,
                "Neither topic name nor id were specified.",
            )),
            (Some(_), false) => refused.push((
                name.clone(),
                *id,
                "You may not specify both topic name and topic id.",
            )),
            (Some(n), true) => names.push(n.clone()),
            (None, false) => ids.push(*id),
        }
    }
    if any_unique(&names) || any_unique(&ids) {
        return all_failed(ErrorCode::NOT_CONTROLLER);
    }
    let mut duplicate_names: Vec<String> = names.clone();
    duplicate_names.sort();
    duplicate_names.dedup();
    let mut duplicate_ids: Vec<Uuid> = ids.clone();
    duplicate_ids.sort_by_key(|u| u.to_string());
    duplicate_ids.dedup();
    let results = refused
        .into_iter()
        .map(|(name, topic_id, message)| (name, topic_id, message.to_string()))
        .chain(
            duplicate_names
                .into_iter()
                .map(|n| (Some(n), Uuid::ZERO, "Duplicate topic name.".to_string())),
        )
        .chain(
            duplicate_ids
                .into_iter()
                .map(|id| (None, id, "Duplicate topic id.".to_string())),
        )
        .map(|(name, topic_id, message)| DeletableTopicResult {
            name,
            topic_id,
            error_code: ErrorCode::INVALID_REQUEST.0,
            error_message: if v >= 5 { Some(message) } else { None },
            ..Default::default()
        })
        .collect();
    DeleteTopicsResponse {
        responses: results,
        ..Default::default()
    }
}

/// Whether some entry of `all` occurs once (and so is not refused as a duplicate).
fn any_unique<T: PartialEq>(all: &[T]) -> bool {
    all.iter()
        .any(|x| all.iter().filter(|y| *y == x).count() == 1)
}

pub fn create_partitions(
    r: &CreatePartitionsRequest,
    _v: i16,
    ctx: &NonActive,
) -> CreatePartitionsResponse {
    if r.topics.is_empty() {
        return CreatePartitionsResponse::default();
    }
    create_partitions_failed(r, ErrorCode::NOT_CONTROLLER, &ctx.message())
}

/// `CreatePartitionsRequest.getErrorResponse`: every topic fails with `code` and `message`.
pub fn create_partitions_failed(
    r: &CreatePartitionsRequest,
    code: ErrorCode,
    message: &str,
) -> CreatePartitionsResponse {
    CreatePartitionsResponse {
        results: r
            .topics
            .iter()
            .map(|t| CreatePartitionsTopicResult {
                name: t.name.clone(),
                error_code: code.0,
                error_message: Some(message.to_string()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// The resources AlterConfigs and IncrementalAlterConfigs screen before the quorum
/// controller: unknown types and duplicates get their own errors; `None` for the rest.
fn screen_config_resources<'a>(
    resources: impl Iterator<Item = (i8, &'a str)> + Clone,
) -> (Vec<(i8, String, ErrorCode, String)>, bool) {
    let mut seen = HashSet::new();
    let mut duplicate = HashSet::new();
    let mut screened = Vec::new();
    for (ty, name) in resources.clone() {
        if !known_resource_type(ty) {
            screened.push((
                ty,
                name.to_string(),
                ErrorCode::UNSUPPORTED_VERSION,
                format!("Unknown resource type {ty}."),
            ));
        } else if !duplicate.contains(&(ty, name)) && !seen.insert((ty, name)) {
            seen.remove(&(ty, name));
            duplicate.insert((ty, name));
            screened.push((
                ty,
                name.to_string(),
                ErrorCode::INVALID_REQUEST,
                "Duplicate resource.".to_string(),
            ));
        }
    }
    (screened, !seen.is_empty())
}

/// The per-resource answers of AlterConfigs and IncrementalAlterConfigs: NOT_CONTROLLER for
/// every resource if any reaches the quorum controller, else the screening's own errors.
fn config_resource_results<T>(
    resources: &[(i8, &str)],
    ctx: &NonActive,
    entry: impl Fn(i8, &str, ErrorCode, String) -> T,
) -> Vec<T> {
    let (screened, asks_controller) = screen_config_resources(resources.iter().copied());
    if asks_controller {
        resources
            .iter()
            .map(|&(ty, name)| entry(ty, name, ErrorCode::NOT_CONTROLLER, ctx.message()))
            .collect()
    } else {
        screened
            .into_iter()
            .map(|(ty, name, code, message)| entry(ty, &name, code, message))
            .collect()
    }
}

pub fn alter_configs(r: &AlterConfigsRequest, _v: i16, ctx: &NonActive) -> AlterConfigsResponse {
    let resources: Vec<(i8, &str)> = r
        .resources
        .iter()
        .map(|c| (c.resource_type, c.resource_name.as_str()))
        .collect();
    AlterConfigsResponse {
        responses: config_resource_results(&resources, ctx, |ty, name, code, message| {
            alter_configs_resp::AlterConfigsResourceResponse {
                error_code: code.0,
                error_message: Some(message),
                resource_type: ty,
                resource_name: name.to_string(),
                ..Default::default()
            }
        }),
        ..Default::default()
    }
}

pub fn incremental_alter_configs(
    r: &IncrementalAlterConfigsRequest,
    _v: i16,
    ctx: &NonActive,
) -> IncrementalAlterConfigsResponse {
    // BROKER_LOGGER resources are the controller's own log levels, which it sets itself;
    // kraftd has no runtime loggers to change, so it leaves them to the active controller
    // with the rest.
    let resources: Vec<(i8, &str)> = r
        .resources
        .iter()
        .map(|c| (c.resource_type, c.resource_name.as_str()))
        .collect();
    IncrementalAlterConfigsResponse {
        responses: config_resource_results(&resources, ctx, |ty, name, code, message| {
            incremental_resp::AlterConfigsResourceResponse {
                error_code: code.0,
                error_message: Some(message),
                resource_type: ty,
                resource_name: name.to_string(),
                ..Default::default()
            }
        }),
        ..Default::default()
    }
}

pub fn describe_acls(_r: &DescribeAclsRequest, _v: i16, _ctx: &NonActive) -> DescribeAclsResponse {
    // Without an authorizer (AclApis' message names the broker even on a controller).
    DescribeAclsResponse {
        error_code: ErrorCode::SECURITY_DISABLED.0,
        error_message: Some("No Authorizer is configured on the broker".into()),
        ..Default::default()
    }
}

pub fn create_acls(r: &CreateAclsRequest, _v: i16, _ctx: &NonActive) -> CreateAclsResponse {
    // kraftd runs no authorizer: Java's answer without one is SECURITY_DISABLED.
    CreateAclsResponse {
        results: r
            .creations
            .iter()
            .map(|_| AclCreationResult {
                error_code: ErrorCode::SECURITY_DISABLED.0,
                error_message: Some("No Authorizer is configured.".into()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub fn delete_acls(r: &DeleteAclsRequest, _v: i16, _ctx: &NonActive) -> DeleteAclsResponse {
    DeleteAclsResponse {
        filter_results: r
            .filters
            .iter()
            .map(|_| DeleteAclsFilterResult {
                error_code: ErrorCode::SECURITY_DISABLED.0,
                error_message: Some("No Authorizer is configured.".into()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Java refuses delegation-token requests that arrive directly over PLAINTEXT (kraftd's only
/// listener protocol); forwarded ones go on to the quorum controller.
fn token_requests_allowed(ctx: &NonActive) -> bool {
    ctx.forwarded
}

pub fn create_delegation_token(
    r: &CreateDelegationTokenRequest,
    v: i16,
    ctx: &NonActive,
) -> CreateDelegationTokenResponse {
    let code = if token_requests_allowed(ctx) {
        ErrorCode::NOT_CONTROLLER
    } else {
        ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    };
    // A PLAINTEXT connection's principal is User:ANONYMOUS; the token's owner is the one the
    // request names, or the requester.
    // A PLAINTEXT connection's principal is User:ANONYMOUS. Refused directly, the answer
    // names the owner the request gives (or the requester); refused by the quorum
    // controller, it names ANONYMOUS for both.
    let (owner_type, owner_name) = match (&r.owner_principal_type, &r.owner_principal_name) {
        (t, Some(n)) if !n.is_empty() && !ctx.forwarded => {
            (t.clone().unwrap_or_default(), n.clone())
        }
        _ => ("User".to_string(), "ANONYMOUS".to_string()),
    };
    let mut reply = CreateDelegationTokenResponse {
        error_code: code.0,
        principal_type: owner_type,
        principal_name: owner_name,
        issue_timestamp_ms: -1,
        expiry_timestamp_ms: -1,
        max_timestamp_ms: -1,
        token_id: String::new(),
        hmac: Vec::new(),
        ..Default::default()
    };
    if v > 2 {
        reply.token_requester_principal_type = "User".into();
        reply.token_requester_principal_name = "ANONYMOUS".into();
    }
    reply
}

/// Renew and Expire answer alike: NOT_CONTROLLER once past the PLAINTEXT check, else
/// Java's refusal with its error timestamp (-1). Returns (error code, expiry timestamp).
fn token_change_answer(ctx: &NonActive) -> (i16, i64) {
    if token_requests_allowed(ctx) {
        (NOT_CONTROLLER, 0)
    } else {
        (ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.0, -1)
    }
}

pub fn renew_delegation_token(
    _r: &RenewDelegationTokenRequest,
    _v: i16,
    ctx: &NonActive,
) -> RenewDelegationTokenResponse {
    let (error_code, expiry_timestamp_ms) = token_change_answer(ctx);
    RenewDelegationTokenResponse {
        error_code,
        expiry_timestamp_ms,
        ..Default::default()
    }
}

pub fn expire_delegation_token(
    _r: &ExpireDelegationTokenRequest,
    _v: i16,
    ctx: &NonActive,
) -> ExpireDelegationTokenResponse {
    let (error_code, expiry_timestamp_ms) = token_change_answer(ctx);
    ExpireDelegationTokenResponse {
        error_code,
        expiry_timestamp_ms,
        ..Default::default()
    }
}

/// Kafka 4.4's `ControllerApis` advertises DescribeDelegationToken but has no handler for it
/// (brokers describe tokens from their own image): "Unsupported ApiKey", answered through the
/// request's error response, UNKNOWN_SERVER_ERROR and no tokens, active or not.
pub fn describe_delegation_token(
    _r: &DescribeDelegationTokenRequest,
    _v: i16,
    _ctx: &NonActive,
) -> DescribeDelegationTokenResponse {
    DescribeDelegationTokenResponse {
        error_code: ErrorCode::UNKNOWN_SERVER_ERROR.0,
        ..Default::default()
    }
}

pub fn elect_leaders(r: &ElectLeadersRequest, v: i16, ctx: &NonActive) -> ElectLeadersResponse {
    elect_leaders_failed(r, v, NOT_CONTROLLER, &ctx.message())
}

/// `ElectLeadersRequest.getErrorResponse`: the error at the top (v1+) and for every named
/// partition.
pub fn elect_leaders_failed(
    r: &ElectLeadersRequest,
    v: i16,
    code: i16,
    message: &str,
) -> ElectLeadersResponse {
    // A null partition list means every partition; an empty one, nothing to do.
    if r.topic_partitions.as_ref().is_some_and(|t| t.is_empty()) {
        return ElectLeadersResponse::default();
    }
    ElectLeadersResponse {
        error_code: if v >= 1 { code } else { 0 },
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
                        error_message: Some(message.to_string()),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub fn alter_partition_reassignments(
    r: &AlterPartitionReassignmentsRequest,
    _v: i16,
    ctx: &NonActive,
) -> AlterPartitionReassignmentsResponse {
    if r.topics.is_empty() {
        return AlterPartitionReassignmentsResponse::default();
    }
    let message = ctx.message();
    AlterPartitionReassignmentsResponse {
        error_code: NOT_CONTROLLER,
        error_message: Some(message.clone()),
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
                        error_code: NOT_CONTROLLER,
                        error_message: Some(message.clone()),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub fn list_partition_reassignments(
    r: &ListPartitionReassignmentsRequest,
    _v: i16,
    ctx: &NonActive,
) -> ListPartitionReassignmentsResponse {
    if r.topics.as_ref().is_some_and(|t| t.is_empty()) {
        return ListPartitionReassignmentsResponse {
            error_message: None,
            ..Default::default()
        };
    }
    // A Java follower lists the reassignments in its own copy of the metadata; kraftd holds
    // none yet, so it sends the client to the active controller.
    ListPartitionReassignmentsResponse {
        error_code: NOT_CONTROLLER,
        error_message: Some(ctx.message()),
        topics: r
            .topics
            .iter()
            .flatten()
            .map(|t| list_reassign::OngoingTopicReassignment {
                name: t.name.clone(),
                partitions: t
                    .partition_indexes
                    .iter()
                    .map(|&p| list_reassign::OngoingPartitionReassignment {
                        partition_index: p,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub fn alter_client_quotas(
    r: &AlterClientQuotasRequest,
    _v: i16,
    _ctx: &NonActive,
) -> AlterClientQuotasResponse {
    alter_client_quotas_failed(r, NOT_CONTROLLER, NOT_CONTROLLER_TEXT)
}

/// Every entity of `r` refused with `code` and `message`.
pub fn alter_client_quotas_failed(
    r: &AlterClientQuotasRequest,
    code: i16,
    message: &str,
) -> AlterClientQuotasResponse {
    AlterClientQuotasResponse {
        entries: r
            .entries
            .iter()
            .map(|e| quotas::EntryData {
                error_code: code,
                error_message: Some(message.into()),
                entity: e
                    .entity
                    .iter()
                    .map(|d| quotas::EntityData {
                        entity_type: d.entity_type.clone(),
                        entity_name: d.entity_name.clone(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Kafka 4.4's `ControllerApis` advertises DescribeUserScramCredentials but has no handler for
/// it: `handle` throws "Unsupported ApiKey", answered through the request's error response
/// (UNKNOWN_SERVER_ERROR, whose message `ApiError` drops) with one result per user named, its
/// user left empty. Active or not, a controller answers so; brokers describe credentials.
/// Asked for every user (a null list), Java's error response throws (NullPointerException on
/// the null list) and the request is never answered; kraftd answers the error without results.
pub fn describe_user_scram_credentials(
    r: &DescribeUserScramCredentialsRequest,
    _v: i16,
    _ctx: &NonActive,
) -> DescribeUserScramCredentialsResponse {
    let unsupported = ErrorCode::UNKNOWN_SERVER_ERROR.0;
    DescribeUserScramCredentialsResponse {
        error_code: unsupported,
        error_message: None,
        results: r
            .users
            .iter()
            .flatten()
            .map(
                |_| describe_user_scram_credentials_response::DescribeUserScramCredentialsResult {
                    error_code: unsupported,
                    error_message: None,
                    ..Default::default()
                },
            )
            .collect(),
        ..Default::default()
    }
}

pub fn alter_user_scram_credentials(
    r: &AlterUserScramCredentialsRequest,
    _v: i16,
    ctx: &NonActive,
) -> AlterUserScramCredentialsResponse {
    // One result per user, sorted by name (Java collects them into a set).
    let users: BTreeSet<&str> = r
        .deletions
        .iter()
        .map(|d| d.name.as_str())
        .chain(r.upsertions.iter().map(|u| u.name.as_str()))
        .collect();
    let message = ctx.message();
    AlterUserScramCredentialsResponse {
        results: users
            .into_iter()
            .map(|user| scram::AlterUserScramCredentialsResult {
                user: user.to_string(),
                error_code: NOT_CONTROLLER,
                error_message: Some(message.clone()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub fn alter_partition(
    r: &AlterPartitionRequest,
    _v: i16,
    _ctx: &NonActive,
) -> AlterPartitionResponse {
    AlterPartitionResponse {
        error_code: if r.topics.is_empty() {
            0
        } else {
            NOT_CONTROLLER
        },
        ..Default::default()
    }
}

pub fn update_features(
    _r: &UpdateFeaturesRequest,
    _v: i16,
    ctx: &NonActive,
) -> UpdateFeaturesResponse {
    UpdateFeaturesResponse {
        error_code: NOT_CONTROLLER,
        error_message: Some(ctx.message()),
        ..Default::default()
    }
}

pub fn broker_registration(
    _r: &BrokerRegistrationRequest,
    _v: i16,
    _ctx: &NonActive,
) -> BrokerRegistrationResponse {
    BrokerRegistrationResponse {
        error_code: NOT_CONTROLLER,
        ..Default::default()
    }
}

pub fn broker_heartbeat(
    _r: &BrokerHeartbeatRequest,
    _v: i16,
    _ctx: &NonActive,
) -> BrokerHeartbeatResponse {
    BrokerHeartbeatResponse {
        error_code: NOT_CONTROLLER,
        ..Default::default()
    }
}

pub fn unregister_broker(
    _r: &UnregisterBrokerRequest,
    _v: i16,
    ctx: &NonActive,
) -> UnregisterBrokerResponse {
    // Kafka 4.4 fills in the message here, unlike for the other broker lifecycle APIs.
    UnregisterBrokerResponse {
        error_code: NOT_CONTROLLER,
        error_message: Some(ctx.message()),
        ..Default::default()
    }
}

pub fn unregister_controller(
    _r: &UnregisterControllerRequest,
    _v: i16,
    ctx: &NonActive,
) -> UnregisterControllerResponse {
    // Java's `getErrorResponse`: the NotControllerException's code and message.
    UnregisterControllerResponse {
        error_code: NOT_CONTROLLER,
        error_message: Some(ctx.message()),
        ..Default::default()
    }
}

pub fn allocate_producer_ids(
    _r: &AllocateProducerIdsRequest,
    _v: i16,
    _ctx: &NonActive,
) -> AllocateProducerIdsResponse {
    AllocateProducerIdsResponse {
        error_code: NOT_CONTROLLER,
        ..Default::default()
    }
}

pub fn assign_replicas_to_dirs(
    _r: &AssignReplicasToDirsRequest,
    _v: i16,
    _ctx: &NonActive,
) -> AssignReplicasToDirsResponse {
    AssignReplicasToDirsResponse {
        error_code: NOT_CONTROLLER,
        ..Default::default()
    }
}
