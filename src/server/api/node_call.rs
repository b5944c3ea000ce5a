//! The requests the node loop answers besides the raft RPCs: what a connection hands it
//! (`NodeCall`, holding a `ControllerRequest`), the frame of the `ControllerReply` that comes
//! back, and the decoding of a request body into one (`controller_call`).

use super::{CloseReason, Enveloped, Outcome};
use crate::controller::principal::RequestPrincipal;
pub use crate::controller::quorum::request::{AclRequest, ControllerReply, ControllerRequest};
use crate::protocol::codec::{ApiMessage, Message};
use crate::protocol::frame;
use crate::protocol::messages;

/// A decoded request the node loop answers (besides the raft RPCs).
#[derive(Debug, PartialEq)]
pub struct NodeCall {
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    pub request: ControllerRequest,
    /// The Envelope this request came in, if a broker forwarded it (UnregisterBroker).
    pub enveloped: Option<Enveloped>,
    /// The principal the Envelope named; `None` for a direct request, which is the
    /// connection's (the listener knows its address).
    pub principal: Option<RequestPrincipal>,
}

/// The frame answering request `key` v`v` (correlation id `corr`) with `reply`: the response
/// itself, or inside the Envelope it came in.
pub fn answer(
    reply: &ControllerReply,
    key: i16,
    v: i16,
    corr: i32,
    enveloped: Option<Enveloped>,
) -> Outcome {
    let framed = frame(reply, key, v, corr);
    let Some(outer) = enveloped else {
        return framed;
    };
    let Outcome::Respond(bytes) = framed else {
        return framed;
    };
    super::in_envelope(outer, reply.not_controller(), &bytes)
}

/// The complete response frame of `reply`.
pub fn frame(reply: &ControllerReply, key: i16, v: i16, corr: i32) -> Outcome {
    let encoded = match reply {
        ControllerReply::Register(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::BrokerRegistration(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::BrokerHeartbeat(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::UnregisterBroker(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::UnregisterController(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::UpdateFeatures(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::CreateTopics(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::DeleteTopics(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::CreatePartitions(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::ListPartitionReassignments(r) => {
            frame::encode_response(key, v, corr, r, v)
        }
        ControllerReply::AlterPartition(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::CreateAcls(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::DeleteAcls(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::DescribeAcls(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::ElectLeaders(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::AlterPartitionReassignments(r) => {
            frame::encode_response(key, v, corr, r, v)
        }
        ControllerReply::AssignReplicasToDirs(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::AllocateProducerIds(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::AlterClientQuotas(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::CreateDelegationToken(r) => {
            frame::encode_response(key, v, corr, r.as_ref(), v)
        }
        ControllerReply::RenewDelegationToken(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::ExpireDelegationToken(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::AlterUserScramCredentials(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::AlterConfigs(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::IncrementalAlterConfigs(r) => frame::encode_response(key, v, corr, r, v),
        ControllerReply::DescribeConfigs(r) => frame::encode_response(key, v, corr, r, v),
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

/// A request the active controller serves from the node loop: BrokerRegistration,
/// BrokerHeartbeat, UnregisterBroker, UpdateFeatures, CreateTopics, DeleteTopics,
/// CreatePartitions, ListPartitionReassignments, AlterPartition and ElectLeaders (`None` for
/// any other api). Bytes after the body are ignored, as Kafka ignores them.
pub(super) fn controller_call(
    key: i16,
    version: i16,
    body: &[u8],
) -> Option<Result<ControllerRequest, crate::protocol::codec::DecodeError>> {
    use messages::{
        AlterPartitionRequest, BrokerHeartbeatRequest, BrokerRegistrationRequest,
        CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest, ElectLeadersRequest,
        ListPartitionReassignmentsRequest, UnregisterBrokerRequest, UpdateFeaturesRequest,
    };
    Some(match key {
        BrokerRegistrationRequest::API_KEY => {
            BrokerRegistrationRequest::decode_prefix(body, version)
                .map(|r| ControllerRequest::BrokerRegistration(r, version))
        }
        BrokerHeartbeatRequest::API_KEY => BrokerHeartbeatRequest::decode_prefix(body, version)
            .map(|r| ControllerRequest::BrokerHeartbeat(r, version)),
        UnregisterBrokerRequest::API_KEY => UnregisterBrokerRequest::decode_prefix(body, version)
            .map(|r| ControllerRequest::UnregisterBroker(r, version)),
        UpdateFeaturesRequest::API_KEY => UpdateFeaturesRequest::decode_prefix(body, version)
            .map(|r| ControllerRequest::UpdateFeatures(r, version)),
        CreateTopicsRequest::API_KEY => CreateTopicsRequest::decode_prefix(body, version)
            .map(|r| ControllerRequest::CreateTopics(r, version)),
        DeleteTopicsRequest::API_KEY => DeleteTopicsRequest::decode_prefix(body, version)
            .map(|r| ControllerRequest::DeleteTopics(r, version)),
        CreatePartitionsRequest::API_KEY => CreatePartitionsRequest::decode_prefix(body, version)
            .map(|r| ControllerRequest::CreatePartitions(r, version)),
        ListPartitionReassignmentsRequest::API_KEY => {
            ListPartitionReassignmentsRequest::decode_prefix(body, version)
                .map(|r| ControllerRequest::ListPartitionReassignments(r, version))
        }
        AlterPartitionRequest::API_KEY => AlterPartitionRequest::decode_prefix(body, version)
            .map(|r| ControllerRequest::AlterPartition(r, version)),
        ElectLeadersRequest::API_KEY => ElectLeadersRequest::decode_prefix(body, version)
            .map(|r| ControllerRequest::ElectLeaders(r, version)),
        messages::AlterPartitionReassignmentsRequest::API_KEY => {
            messages::AlterPartitionReassignmentsRequest::decode_exact(body, version)
                .map(|r| ControllerRequest::AlterPartitionReassignments(r, version))
        }
        messages::AssignReplicasToDirsRequest::API_KEY => {
            messages::AssignReplicasToDirsRequest::decode_exact(body, version)
                .map(|r| ControllerRequest::AssignReplicasToDirs(r, version))
        }
        messages::AllocateProducerIdsRequest::API_KEY => {
            messages::AllocateProducerIdsRequest::decode_prefix(body, version)
                .map(|r| ControllerRequest::AllocateProducerIds(r, version))
        }
        messages::AlterClientQuotasRequest::API_KEY => {
            messages::AlterClientQuotasRequest::decode_prefix(body, version)
                .map(|r| ControllerRequest::AlterClientQuotas(r, version))
        }
        messages::AlterUserScramCredentialsRequest::API_KEY => {
            messages::AlterUserScramCredentialsRequest::decode_exact(body, version)
                .map(|r| ControllerRequest::AlterUserScramCredentials(r, version))
        }
        messages::AlterConfigsRequest::API_KEY => {
            messages::AlterConfigsRequest::decode_prefix(body, version)
                .map(|r| ControllerRequest::AlterConfigs(r, version, false))
        }
        messages::IncrementalAlterConfigsRequest::API_KEY => {
            messages::IncrementalAlterConfigsRequest::decode_prefix(body, version)
                .map(|r| ControllerRequest::IncrementalAlterConfigs(r, version, false))
        }
        messages::UnregisterControllerRequest::API_KEY => {
            messages::UnregisterControllerRequest::decode_exact(body, version)
                .map(|r| ControllerRequest::UnregisterController(r, version))
        }
        messages::CreateAclsRequest::API_KEY => {
            messages::CreateAclsRequest::decode_exact(body, version)
                .map(|r| ControllerRequest::Acls(AclRequest::Create(r), version))
        }
        messages::DeleteAclsRequest::API_KEY => {
            messages::DeleteAclsRequest::decode_exact(body, version)
                .map(|r| ControllerRequest::Acls(AclRequest::Delete(r), version))
        }
        messages::DescribeAclsRequest::API_KEY => {
            messages::DescribeAclsRequest::decode_exact(body, version)
                .map(|r| ControllerRequest::Acls(AclRequest::Describe(r), version))
        }
        messages::CreateDelegationTokenRequest::API_KEY => {
            messages::CreateDelegationTokenRequest::decode_exact(body, version)
                .map(|r| ControllerRequest::CreateDelegationToken(r, version, false))
        }
        messages::RenewDelegationTokenRequest::API_KEY => {
            messages::RenewDelegationTokenRequest::decode_exact(body, version)
                .map(|r| ControllerRequest::RenewDelegationToken(r, version, false))
        }
        messages::ExpireDelegationTokenRequest::API_KEY => {
            messages::ExpireDelegationTokenRequest::decode_exact(body, version)
                .map(|r| ControllerRequest::ExpireDelegationToken(r, version, false))
        }
        messages::DescribeConfigsRequest::API_KEY => {
            messages::DescribeConfigsRequest::decode_prefix(body, version)
                .map(|r| ControllerRequest::DescribeConfigs(r, version))
        }
        _ => return None,
    })
}
