//! The controller APIs that brokers and admin clients send (registration, heartbeats, topic and
//! config changes, ACLs, ...), answered the way a Java controller that is not the active one
//! answers them: `NOT_CONTROLLER` in every error field of the response, so the sender looks
//! for the active controller elsewhere. A kraftd node that is not the active controller (a
//! follower, an observer, or a leader whose epoch has not committed yet) answers with these,
//! so that brokers that reach it are not stranded.
//!
//! Java's controller checks a few things before it asks its (inactive) quorum controller, and
//! answers those without `NOT_CONTROLLER`; kraftd does the same where the answer does not need
//! metadata it lacks (empty requests, duplicates, unknown resource types, delegation tokens on
//! a PLAINTEXT listener, ACLs without an authorizer). See `replies.rs`.

mod envelope;
#[cfg(any(test, feature = "testkit"))]
pub mod samples;

use crate::protocol::codec::{ApiMessage, DecodeError, EncodeError, Message};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages;

use crate::controller::quorum::not_active as replies;
pub use crate::controller::quorum::not_active::{
    allocate_producer_ids, alter_client_quotas, alter_client_quotas_failed, alter_partition,
    alter_partition_reassignments, alter_user_scram_credentials, assign_replicas_to_dirs,
    broker_heartbeat, broker_registration, create_acls, create_delegation_token, create_partitions,
    create_partitions_failed, create_topics, delete_acls, delete_topics, describe_acls,
    elect_leaders, elect_leaders_failed, expire_delegation_token, renew_delegation_token,
    unregister_broker, update_features, NonActive,
};
pub use envelope::{answer_envelope, envelope_error, wrap_frame, EnvelopeAnswer};

/// An encoded answer and whether it reports `NOT_CONTROLLER` anywhere (Java's
/// `errorCounts().containsKey(NOT_CONTROLLER)`, which decides an Envelope's own error).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub body: Vec<u8>,
    pub not_controller: bool,
}

/// Why a request could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("{0}")]
    Decode(#[from] DecodeError),
    #[error("{0}")]
    Encode(#[from] EncodeError),
}

fn encode<M: Message + KafkaJson>(reply: &M, version: i16) -> Result<Answer, AnswerError> {
    Ok(Answer {
        body: reply.encode_to_vec(version)?,
        not_controller: reports(&reply.kafka_json(version), ErrorCode::NOT_CONTROLLER),
    })
}

/// Whether any `errorCode` field in Kafka's JSON form of a message holds `code`.
fn reports(json: &serde_json::Value, code: ErrorCode) -> bool {
    match json {
        serde_json::Value::Object(fields) => fields.iter().any(|(name, value)| {
            (name == "errorCode" && value.as_i64() == Some(code.0 as i64)) || reports(value, code)
        }),
        serde_json::Value::Array(items) => items.iter().any(|v| reports(v, code)),
        _ => false,
    }
}

/// Kafka's JSON form of a reply, through the generated converters.
trait KafkaJson {
    fn kafka_json(&self, version: i16) -> serde_json::Value;
}

/// The table of APIs answered here, in api-key order: name, request and response types, and
/// the function that builds the answer. The api key and the versions served are the request
/// schema's (Kafka 4.4's).
macro_rules! controller_apis {
    ($($name:literal, $req:ident, $resp:ident, $reply:path;)*) => {
        $(impl KafkaJson for messages::$resp {
            fn kafka_json(&self, version: i16) -> serde_json::Value {
                self.to_kafka_json(version)
            }
        })*

        /// Every API answered here, with the versions served, in api-key order.
        pub const CONTROLLER_APIS: &[super::ServedApi] = &[$(super::ServedApi {
            key: <messages::$req as ApiMessage>::API_KEY,
            name: $name,
            min_version: <messages::$req as Message>::LOWEST_VERSION,
            max_version: <messages::$req as Message>::HIGHEST_VERSION,
        },)*];

        /// Answers one request body of api `key` at `version` as a non-active controller.
        /// `None` if `key` is not answered here.
        pub fn answer(
            key: i16,
            version: i16,
            body: &[u8],
            ctx: &NonActive,
        ) -> Option<Result<Answer, AnswerError>> {
            match key {
                $(<messages::$req as ApiMessage>::API_KEY => Some((|| {
                    let request = <messages::$req as Message>::decode_exact(body, version)?;
                    let reply: messages::$resp = $reply(&request, version, ctx);
                    encode(&reply, version)
                })()),)*
                _ => None,
            }
        }

        /// Kafka's JSON form of a response body of api `key` at `version` (for comparing
        /// answers with Java's). `None` if `key` is not answered here.
        pub fn response_json(
            key: i16,
            version: i16,
            body: &[u8],
        ) -> Option<Result<serde_json::Value, DecodeError>> {
            match key {
                $(<messages::$req as ApiMessage>::API_KEY => Some(
                    <messages::$resp as Message>::decode_exact(body, version)
                        .map(|m| m.to_kafka_json(version)),
                ),)*
                _ => None,
            }
        }
    };
}

controller_apis! {
    "CreateTopics", CreateTopicsRequest, CreateTopicsResponse, replies::create_topics;
    "DeleteTopics", DeleteTopicsRequest, DeleteTopicsResponse, replies::delete_topics;
    "DescribeAcls", DescribeAclsRequest, DescribeAclsResponse, replies::describe_acls;
    "CreateAcls", CreateAclsRequest, CreateAclsResponse, replies::create_acls;
    "DeleteAcls", DeleteAclsRequest, DeleteAclsResponse, replies::delete_acls;
    "AlterConfigs", AlterConfigsRequest, AlterConfigsResponse, replies::alter_configs;
    "CreatePartitions", CreatePartitionsRequest, CreatePartitionsResponse, replies::create_partitions;
    "CreateDelegationToken", CreateDelegationTokenRequest, CreateDelegationTokenResponse, replies::create_delegation_token;
    "RenewDelegationToken", RenewDelegationTokenRequest, RenewDelegationTokenResponse, replies::renew_delegation_token;
    "ExpireDelegationToken", ExpireDelegationTokenRequest, ExpireDelegationTokenResponse, replies::expire_delegation_token;
    "DescribeDelegationToken", DescribeDelegationTokenRequest, DescribeDelegationTokenResponse, replies::describe_delegation_token;
    "ElectLeaders", ElectLeadersRequest, ElectLeadersResponse, replies::elect_leaders;
    "IncrementalAlterConfigs", IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, replies::incremental_alter_configs;
    "AlterPartitionReassignments", AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, replies::alter_partition_reassignments;
    "ListPartitionReassignments", ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse, replies::list_partition_reassignments;
    "AlterClientQuotas", AlterClientQuotasRequest, AlterClientQuotasResponse, replies::alter_client_quotas;
    "DescribeUserScramCredentials", DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse, replies::describe_user_scram_credentials;
    "AlterUserScramCredentials", AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse, replies::alter_user_scram_credentials;
    "AlterPartition", AlterPartitionRequest, AlterPartitionResponse, replies::alter_partition;
    "UpdateFeatures", UpdateFeaturesRequest, UpdateFeaturesResponse, replies::update_features;
    "BrokerRegistration", BrokerRegistrationRequest, BrokerRegistrationResponse, replies::broker_registration;
    "BrokerHeartbeat", BrokerHeartbeatRequest, BrokerHeartbeatResponse, replies::broker_heartbeat;
    "UnregisterBroker", UnregisterBrokerRequest, UnregisterBrokerResponse, replies::unregister_broker;
    "AllocateProducerIds", AllocateProducerIdsRequest, AllocateProducerIdsResponse, replies::allocate_producer_ids;
    "AssignReplicasToDirs", AssignReplicasToDirsRequest, AssignReplicasToDirsResponse, replies::assign_replicas_to_dirs;
    "UnregisterController", UnregisterControllerRequest, UnregisterControllerResponse, replies::unregister_controller;
}

/// Whether api `key` is answered here.
pub fn answers(key: i16) -> bool {
    CONTROLLER_APIS.iter().any(|a| a.key == key)
}

#[cfg(test)]
mod tests;
