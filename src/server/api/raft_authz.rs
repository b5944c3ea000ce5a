//! The authorizer's check of the raft APIs, made before raft sees a request, as Kafka 4.4's
//! `ControllerApis` makes it: each raft handler starts with
//! `AuthHelper.authorizeClusterOperation` (the operation is `RaftApi::cluster_operation`), and a
//! refusal is the request's error response (`getErrorResponse`), whose shape differs from API to
//! API. The check reads the ACLs the node loop publishes (`ServerContext::authorize`).

use crate::controller::acls::authorizer::Denied;
use crate::controller::principal::RequestPrincipal;
use crate::protocol::codec::{EncodeError, Message};
use crate::protocol::frame;
use crate::protocol::messages as wire;
use crate::protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use crate::raft::convert::WireRequest;
use crate::server::context::ServerContext;
use crate::server::raft_wire::RaftApi;

/// Java's `FetchResponse.INVALID_HIGH_WATERMARK`, which an error response's partitions carry.
const INVALID_HIGH_WATERMARK: i64 = -1;

/// The refusal of `request` (api `api`) from `who`: `None` if it may go to raft, else the
/// error response's frame.
pub(super) fn refusal(
    ctx: &ServerContext,
    who: &RequestPrincipal,
    api: &RaftApi,
    version: i16,
    correlation_id: i32,
    request: &WireRequest,
) -> Option<Result<Vec<u8>, EncodeError>> {
    let op = api.cluster_operation?;
    let denied = ctx.authorize_cluster_operation(api.name, who, op).err()?;
    Some(error_frame(
        api.key,
        version,
        correlation_id,
        request,
        &denied,
    ))
}

/// `getErrorResponse` of each raft request, framed as the answer to it.
fn error_frame(
    key: i16,
    version: i16,
    correlation_id: i32,
    request: &WireRequest,
    denied: &Denied,
) -> Result<Vec<u8>, EncodeError> {
    fn framed<M: Message>(key: i16, v: i16, corr: i32, body: &M) -> Result<Vec<u8>, EncodeError> {
        frame::encode_response(key, v, corr, body, v)
    }
    let (key, v, corr) = (key, version, correlation_id);
    let error_code = denied.error_code().0;
    match request {
        WireRequest::Vote(_) => framed(
            key,
            v,
            corr,
            &wire::VoteResponse {
                error_code,
                ..Default::default()
            },
        ),
        WireRequest::BeginQuorumEpoch(_) => framed(
            key,
            v,
            corr,
            &wire::BeginQuorumEpochResponse {
                error_code,
                ..Default::default()
            },
        ),
        WireRequest::EndQuorumEpoch(_) => framed(
            key,
            v,
            corr,
            &wire::EndQuorumEpochResponse {
                error_code,
                ..Default::default()
            },
        ),
        WireRequest::Fetch(r) => framed(key, v, corr, &fetch_error(r, v, error_code)),
        WireRequest::FetchSnapshot(_) => framed(
            key,
            v,
            corr,
            &wire::FetchSnapshotResponse {
                error_code,
                ..Default::default()
            },
        ),
        // `getTopLevelErrorResponse`: the code's own message.
        WireRequest::DescribeQuorum(_) => framed(
            key,
            v,
            corr,
            &wire::DescribeQuorumResponse {
                error_code,
                error_message: Some(denied.code_message()),
                ..Default::default()
            },
        ),
        WireRequest::AddRaftVoter(_) => framed(
            key,
            v,
            corr,
            &wire::AddRaftVoterResponse {
                error_code,
                error_message: Some(denied.code_message()),
                ..Default::default()
            },
        ),
        WireRequest::RemoveRaftVoter(_) => framed(
            key,
            v,
            corr,
            &wire::RemoveRaftVoterResponse {
                error_code,
                error_message: Some(denied.code_message()),
                ..Default::default()
            },
        ),
        // No message, and no leader named.
        WireRequest::UpdateRaftVoter(_) => framed(
            key,
            v,
            corr,
            &wire::UpdateRaftVoterResponse {
                error_code,
                ..Default::default()
            },
        ),
        WireRequest::ApiVersions(_) => unreachable!("ApiVersions is not authorized"),
    }
}

/// `FetchRequest.getErrorResponse`: the code at the top level, the request's session id, and
/// below v13 (topics by name) every asked partition with the code
/// (`FetchResponse.partitionResponse`: high watermark -1, empty records).
fn fetch_error(r: &wire::FetchRequest, version: i16, error_code: i16) -> wire::FetchResponse {
    let responses = if version < 13 {
        r.topics
            .iter()
            .map(|t| FetchableTopicResponse {
                topic: t.topic.clone(),
                topic_id: t.topic_id,
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| PartitionData {
                        partition_index: p.partition,
                        error_code,
                        high_watermark: INVALID_HIGH_WATERMARK,
                        records: Some(Vec::new()),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect()
    } else {
        Vec::new()
    };
    wire::FetchResponse {
        error_code,
        session_id: r.session_id,
        responses,
        ..Default::default()
    }
}
