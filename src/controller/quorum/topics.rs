//! CreateTopics, DeleteTopics and CreatePartitions: the request is
//! screened as Kafka's `ControllerApis` screens it, decided by the controller
//! (`controller::topics`) against the latest state, and answered once the decision's records
//! commit (`NOT_CONTROLLER` for every topic if leadership is lost first). A node that is not
//! the active controller answers as a non-active Java controller does.

use tracing::{info, warn};

use std::collections::HashSet;

use super::not_active;
use super::{ControllerReply, Decision, QuorumAccess, QuorumController};
use crate::controller::acls::authorizer::{allows, Denied};
use crate::controller::acls::{operation, resource, CLUSTER_NAME};
use crate::controller::principal::RequestPrincipal;
use crate::controller::topic_configs::EffectiveConfig;
use crate::controller::topics::api::{
    screen_create_partitions, screen_create_topics, DUPLICATE_NAME, METADATA_TOPIC_PROHIBITED,
};
use crate::controller::topics::create::{create_topics, CreatedTopic, NewTopic};
use crate::controller::topics::delete::{delete_topics, Access};
use crate::controller::topics::names::CLUSTER_METADATA_TOPIC;
use crate::controller::topics::partitions::{create_partitions, NewPartitions};
use crate::controller::topics::reassignments::list_reassignments;
use crate::controller::topics::{usable_brokers, TopicError};
use crate::controller::ControllerResult;
use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use crate::protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult,
};
use crate::protocol::messages::delete_topics_response::DeletableTopicResult;
use crate::protocol::messages::list_partition_reassignments_response as listed;
use crate::protocol::messages::{
    CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse,
    DeleteTopicsRequest, DeleteTopicsResponse, ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
};

/// A CreateTopics result refusing `name`.
fn refused_topic(name: &str, code: ErrorCode, message: Option<String>) -> CreatableTopicResult {
    CreatableTopicResult {
        name: name.to_string(),
        error_code: code.0,
        error_message: message,
        ..Default::default()
    }
}

/// A created topic's result; its configs, partition count and replication factor only if the
/// requester may describe its configs (else `TOPIC_AUTHORIZATION_FAILED` in their place).
fn created_topic(name: &str, c: &CreatedTopic, describable: bool) -> CreatableTopicResult {
    let result = CreatableTopicResult {
        name: name.to_string(),
        topic_id: c.id,
        error_code: ErrorCode::NONE.0,
        error_message: None,
        ..Default::default()
    };
    if !describable {
        return CreatableTopicResult {
            topic_config_error_code: Denied::Topic.error_code().0,
            configs: Some(Vec::new()),
            ..result
        };
    }
    CreatableTopicResult {
        num_partitions: c.num_partitions,
        replication_factor: c.replication_factor,
        configs: Some(c.configs.iter().map(config_entry).collect()),
        ..result
    }
}

fn config_entry(c: &EffectiveConfig) -> CreatableTopicConfigs {
    CreatableTopicConfigs {
        name: c.name.to_string(),
        value: c.value.clone(),
        read_only: false,
        config_source: c.source.id(),
        is_sensitive: false,
        ..Default::default()
    }
}

/// `CreateTopicsRequest.getErrorResponse`: every topic of the request with the error.
fn create_topics_failed(
    r: &CreateTopicsRequest,
    code: ErrorCode,
    message: &str,
) -> CreateTopicsResponse {
    CreateTopicsResponse {
        topics: r
            .topics
            .iter()
            .map(|t| refused_topic(&t.name, code, Some(message.to_string())))
            .collect(),
        ..Default::default()
    }
}

fn new_topic(t: &crate::protocol::messages::create_topics_request::CreatableTopic) -> NewTopic {
    NewTopic {
        name: t.name.clone(),
        num_partitions: t.num_partitions,
        replication_factor: t.replication_factor,
        assignments: t
            .assignments
            .iter()
            .map(|a| (a.partition_index, a.broker_ids.clone()))
            .collect(),
        configs: t
            .configs
            .iter()
            .map(|c| (c.name.clone(), c.value.clone()))
            .collect(),
    }
}

fn describe(e: &TopicError) -> String {
    format!(
        "{} ({})",
        e.error_code().name(),
        e.message().unwrap_or_default()
    )
}

impl QuorumController {
    pub(super) fn create_topics(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: CreateTopicsRequest,
        who: &RequestPrincipal,
    ) -> Decision {
        let names: Vec<&str> = request.topics.iter().map(|t| t.name.as_str()).collect();
        let screen = screen_create_topics(&names);
        // ControllerApis: CREATE on the cluster, else on each topic; the configs of a created
        // topic are returned only with DESCRIBE_CONFIGS on it.
        let cluster_create =
            self.authorized(who, resource::CLUSTER, CLUSTER_NAME, operation::CREATE);
        let topic_may = |op: i8, name: &str| self.authorized(who, resource::TOPIC, name, op);
        let creatable: HashSet<&str> = screen
            .unique
            .iter()
            .filter(|n| cluster_create || topic_may(operation::CREATE, n))
            .map(String::as_str)
            .collect();
        let describable: HashSet<String> = screen
            .unique
            .iter()
            .filter(|n| topic_may(operation::DESCRIBE_CONFIGS, n))
            .cloned()
            .collect();
        let decided: Vec<usize> = screen
            .decided
            .iter()
            .copied()
            .filter(|i| creatable.contains(request.topics[*i].name.as_str()))
            .collect();
        let refused = screen
            .unique
            .iter()
            .any(|n| n != CLUSTER_METADATA_TOPIC && !creatable.contains(n.as_str()));
        // A non-active controller asks its quorum controller unless the authorizer left
        // nothing to ask.
        let nothing_to_ask = refused && decided.is_empty();
        if !self.acting(quorum) && !nothing_to_ask {
            let r = not_active::create_topics(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::CreateTopics(r));
        }
        let mut after: Vec<CreatableTopicResult> = screen
            .duplicates
            .iter()
            .map(|n| refused_topic(n, ErrorCode::INVALID_REQUEST, Some(DUPLICATE_NAME.into())))
            .collect();
        for name in &screen.unique {
            if name == CLUSTER_METADATA_TOPIC {
                let message = Some(METADATA_TOPIC_PROHIBITED.into());
                after.push(refused_topic(name, ErrorCode::INVALID_REQUEST, message));
            } else if !creatable.contains(name.as_str()) {
                let denied = Denied::TopicCreation;
                after.push(refused_topic(
                    name,
                    denied.error_code(),
                    Some(denied.to_string()),
                ));
            }
        }
        if refused {
            warn!(target: "kraftd::controller", "CreateTopics from {who}: not authorized to create {}", 
                screen.unique.iter().filter(|n| *n != CLUSTER_METADATA_TOPIC && !creatable.contains(n.as_str())).cloned().collect::<Vec<_>>().join(", "));
        }
        let topics: Vec<NewTopic> = decided
            .iter()
            .map(|i| new_topic(&request.topics[*i]))
            .collect();
        if topics.is_empty() {
            let r = CreateTopicsResponse {
                topics: after,
                ..Default::default()
            };
            return Decision::Answer(ControllerReply::CreateTopics(r));
        }
        let state = self.machine.latest_state();
        let active = self.active.as_ref().expect("acting");
        let brokers = usable_brokers(&state.image, &active.sessions);
        let result = create_topics(
            &state.image,
            &brokers,
            &self.settings.topics,
            &topics,
            request.validate_only,
            &mut self.topic_random,
        );
        let prefix = if request.validate_only {
            "Validate-only CreateTopics"
        } else {
            "CreateTopics"
        };
        match &result.reply {
            Ok(outcomes) => {
                let described: Vec<String> = outcomes
                    .iter()
                    .map(|(n, o)| match o {
                        Ok(_) => format!("{n}: SUCCESS"),
                        Err(e) => format!("{n}: {}", describe(e)),
                    })
                    .collect();
                info!(target: "kraftd::controller", "{prefix} result(s): {}", described.join(", "));
            }
            Err(e) => {
                warn!(target: "kraftd::controller", "{prefix} refused with POLICY_VIOLATION: {e}")
            }
        }
        let message = self.non_active(quorum).message();
        Decision::write_either(result, |outcome| {
            let r = match outcome {
                Ok(Ok(outcomes)) => {
                    let mut topics: Vec<CreatableTopicResult> = outcomes
                        .iter()
                        .map(|(name, o)| match o {
                            Ok(c) => created_topic(name, c, describable.contains(name)),
                            Err(e) => refused_topic(name, e.error_code(), e.message()),
                        })
                        .collect();
                    topics.extend(after.iter().cloned());
                    CreateTopicsResponse {
                        topics,
                        ..Default::default()
                    }
                }
                Ok(Err(e)) => create_topics_failed(&request, e.error_code(), &e.to_string()),
                Err(_) => create_topics_failed(&request, ErrorCode::NOT_CONTROLLER, &message),
            };
            ControllerReply::CreateTopics(r)
        })
    }

    pub(super) fn create_partitions(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: CreatePartitionsRequest,
        who: &RequestPrincipal,
    ) -> Decision {
        let names: Vec<&str> = request.topics.iter().map(|t| t.name.as_str()).collect();
        let screen = screen_create_partitions(&names);
        let mut before: Vec<CreatePartitionsTopicResult> = screen
            .duplicates
            .iter()
            .map(|n| CreatePartitionsTopicResult {
                name: n.clone(),
                error_code: ErrorCode::INVALID_REQUEST.0,
                error_message: Some(DUPLICATE_NAME.into()),
                ..Default::default()
            })
            .collect();
        // ControllerApis: ALTER on each topic; a refused one is answered without a message.
        let mut decided = Vec::new();
        for &i in &screen.decided {
            let name = &request.topics[i].name;
            if self.authorized(who, resource::TOPIC, name, operation::ALTER) {
                decided.push(i);
            } else {
                warn!(target: "kraftd::controller", "CreatePartitions of {name} refused for {who}: {}", Denied::Topic);
                before.push(CreatePartitionsTopicResult {
                    name: name.clone(),
                    error_code: Denied::Topic.error_code().0,
                    error_message: None,
                    ..Default::default()
                });
            }
        }
        // A non-active quorum controller answers an empty list at once.
        if !self.acting(quorum) && !decided.is_empty() {
            let r = not_active::create_partitions(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::CreatePartitions(r));
        }
        let topics: Vec<NewPartitions> = decided
            .iter()
            .map(|i| {
                let t = &request.topics[*i];
                NewPartitions {
                    name: t.name.clone(),
                    count: t.count,
                    assignments: t
                        .assignments
                        .as_ref()
                        .map(|a| a.iter().map(|x| x.broker_ids.clone()).collect()),
                }
            })
            .collect();
        if topics.is_empty() {
            let r = CreatePartitionsResponse {
                results: before,
                ..Default::default()
            };
            return Decision::Answer(ControllerReply::CreatePartitions(r));
        }
        let state = self.machine.latest_state();
        let active = self.active.as_ref().expect("acting");
        let brokers = usable_brokers(&state.image, &active.sessions);
        let result = create_partitions(
            &state.image,
            &brokers,
            &topics,
            request.validate_only,
            &mut self.topic_random,
        );
        match &result.reply {
            Ok(outcomes) => {
                let described: Vec<String> = outcomes
                    .iter()
                    .map(|(n, o)| match o {
                        Ok(()) => format!("{n}: SUCCESS"),
                        Err(e) => format!("{n}: {}", describe(e)),
                    })
                    .collect();
                info!(target: "kraftd::controller", "CreatePartitions result(s): {}", described.join(", "));
            }
            Err(e) => {
                warn!(target: "kraftd::controller", "CreatePartitions refused with POLICY_VIOLATION: {e}")
            }
        }
        let message = self.non_active(quorum).message();
        Decision::write_either(result, |outcome| {
            let r = match outcome {
                Ok(Ok(outcomes)) => {
                    let mut results = before.clone();
                    results.extend(
                        outcomes
                            .iter()
                            .map(|(name, o)| CreatePartitionsTopicResult {
                                name: name.clone(),
                                error_code: o.as_ref().map_or_else(|e| e.error_code().0, |_| 0),
                                error_message: o.as_ref().err().and_then(TopicError::message),
                                ..Default::default()
                            }),
                    );
                    CreatePartitionsResponse {
                        results,
                        ..Default::default()
                    }
                }
                Ok(Err(e)) => {
                    not_active::create_partitions_failed(&request, e.error_code(), &e.to_string())
                }
                Err(_) => not_active::create_partitions_failed(
                    &request,
                    ErrorCode::NOT_CONTROLLER,
                    &message,
                ),
            };
            ControllerReply::CreatePartitions(r)
        })
    }

    pub(super) fn delete_topics(
        &mut self,
        quorum: &dyn QuorumAccess,
        version: i16,
        request: DeleteTopicsRequest,
        who: &RequestPrincipal,
    ) -> Decision {
        // With deletion disabled, or as a non-active controller, Java's answer needs no state.
        if !self.acting(quorum) || !self.settings.delete_topic_enable {
            let r = not_active::delete_topics(&request, version, &self.non_active(quorum));
            return Decision::Answer(ControllerReply::DeleteTopics(r));
        }
        let entries: Vec<(Option<String>, Uuid)> = request
            .topics
            .iter()
            .map(|t| (t.name.clone(), t.topic_id))
            .collect();
        // ControllerApis: DELETE on the cluster, else DESCRIBE and DELETE on each topic.
        let cluster_delete =
            self.authorized(who, resource::CLUSTER, CLUSTER_NAME, operation::DELETE);
        // What `Self::authorized` reads, apart from the controller that decides below.
        let (acls, authorizer) = (
            self.caught_up
                .then(|| self.machine.stable_image().1.acls.clone()),
            self.settings.authorizer.clone(),
        );
        let access = |name: &str| {
            let authorizer = authorizer.as_ref();
            let may = |op| {
                allows(authorizer, acls.as_ref(), who, resource::TOPIC, name, op).unwrap_or(false)
            };
            if cluster_delete {
                Access::ALL
            } else {
                Access {
                    describe: may(operation::DESCRIBE),
                    delete: may(operation::DELETE),
                }
            }
        };
        let (_, stable) = self.machine.stable_image();
        let result = delete_topics(
            self.machine.image(),
            stable,
            &request.topic_names,
            &entries,
            access,
            &mut self.topic_random,
        );
        let described: Vec<String> = result
            .reply
            .iter()
            .map(|d| {
                let who = d.name.clone().unwrap_or_else(|| d.id.to_string());
                match &d.outcome {
                    Ok(()) => format!("{who}: SUCCESS"),
                    Err(e) => format!("{who}: {}", describe(e)),
                }
            })
            .collect();
        info!(target: "kraftd::controller", "DeleteTopics result(s): {}", described.join(", "));
        let to_response =
            |deletions: &[crate::controller::topics::delete::Deletion]| DeleteTopicsResponse {
                responses: deletions
                    .iter()
                    .map(|d| DeletableTopicResult {
                        name: d.name.clone(),
                        topic_id: d.id,
                        error_code: d.outcome.as_ref().map_or_else(|e| e.error_code().0, |_| 0),
                        error_message: d.outcome.as_ref().err().and_then(TopicError::message),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
        if result.records.is_empty() {
            let r = to_response(&result.reply);
            return Decision::Answer(ControllerReply::DeleteTopics(r));
        }
        let non_active = self.non_active(quorum);
        let ControllerResult {
            records,
            reply: deletions,
        } = result;
        Decision::write(
            ControllerResult::new(records, deletions),
            |deletions| ControllerReply::DeleteTopics(to_response(&deletions)),
            ControllerReply::DeleteTopics(not_active::delete_topics(
                &request,
                version,
                &non_active,
            )),
        )
    }

    /// ListPartitionReassignments: a read of the committed image, which Java's controllers
    /// answer whether active or not.
    pub(super) fn list_partition_reassignments(
        &mut self,
        request: ListPartitionReassignmentsRequest,
    ) -> Decision {
        let topics: Option<Vec<(String, Vec<i32>)>> = request.topics.as_ref().map(|ts| {
            ts.iter()
                .map(|t| (t.name.clone(), t.partition_indexes.clone()))
                .collect()
        });
        let (_, stable) = self.machine.stable_image();
        let found = list_reassignments(stable, topics.as_deref());
        let r = ListPartitionReassignmentsResponse {
            error_message: None,
            topics: found
                .into_iter()
                .map(|(name, partitions)| listed::OngoingTopicReassignment {
                    name,
                    partitions: partitions
                        .into_iter()
                        .map(|p| listed::OngoingPartitionReassignment {
                            partition_index: p.partition,
                            replicas: p.replicas,
                            adding_replicas: p.adding,
                            removing_replicas: p.removing,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        Decision::Answer(ControllerReply::ListPartitionReassignments(r))
    }
}
