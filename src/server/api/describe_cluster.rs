//! DescribeCluster (key 60) on a controller listener (KIP-919): clients that bootstrap with
//! `--bootstrap-controller` send it first to discover the controllers. Kafka 4.4's
//! `ControllerApis.handleDescribeCluster` checks, in order: a finalized metadata.version that
//! has controller registration (3.7-IV0), ALTER on the cluster, then the endpoint type
//! (`AuthHelper.computeDescribeClusterResponse`).

use crate::controller::acls::authorizer::Denied;
use crate::controller::acls::operation;
use crate::controller::metadata_version::MetadataVersion;
use crate::controller::principal::RequestPrincipal;
use crate::protocol::codec::{DecodeError, Message};
use crate::protocol::errors::ErrorCode;
use crate::protocol::features::METADATA_VERSION;
use crate::protocol::frame::ParsedRequest;
use crate::protocol::messages::describe_cluster_response::DescribeClusterBroker;
use crate::protocol::messages::{DescribeClusterRequest, DescribeClusterResponse};

use super::{respond, Outcome};
use crate::server::context::ServerContext;

const ENDPOINT_TYPE_BROKER: i8 = 1;
const ENDPOINT_TYPE_CONTROLLER: i8 = 2;

/// What refuses a DescribeCluster before its endpoint type is looked at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Refused {
    /// The node has not published a metadata.version yet (`FinalizedFeatures.isUnknown`).
    #[error("There is no finalized MetadataVersion, so direct-to-controller communication is not supported.")]
    NoMetadataVersion,
    /// The metadata.version predates controller registration (3.7-IV0).
    #[error(
        "Direct-to-controller communication is not supported with the current MetadataVersion."
    )]
    OldMetadataVersion,
    #[error("{0}")]
    Denied(Denied),
}

impl Refused {
    /// `DescribeClusterRequest.getErrorResponse`: `ApiError.fromThrowable`, the exception's
    /// code and message (none for UNKNOWN_SERVER_ERROR).
    fn response(&self) -> DescribeClusterResponse {
        let (code, message) = match self {
            Refused::Denied(d) => (d.error_code(), d.exception_message()),
            other => (ErrorCode::UNSUPPORTED_VERSION, Some(other.to_string())),
        };
        DescribeClusterResponse {
            error_code: code.0,
            error_message: message,
            ..Default::default()
        }
    }
}

pub(super) fn handle(
    ctx: &ServerContext,
    listener: &str,
    who: &RequestPrincipal,
    request: &ParsedRequest<'_>,
) -> Result<Outcome, DecodeError> {
    let version = request.api_version();
    let body = DescribeClusterRequest::decode_exact(request.body, version)?;
    let response = match admit(ctx, who) {
        Ok(()) => response(ctx, listener, who, version, &body),
        Err(refused) => refused.response(),
    };
    Ok(respond(request, &response, version))
}

/// The metadata.version and the authorizer's checks, in Java's order.
fn admit(ctx: &ServerContext, who: &RequestPrincipal) -> Result<(), Refused> {
    let finalized = ctx.finalized_features();
    let level = *finalized
        .levels
        .get(METADATA_VERSION)
        .ok_or(Refused::NoMetadataVersion)?;
    if !MetadataVersion::from_level(level).is_ok_and(|v| v.is_controller_registration_supported()) {
        return Err(Refused::OldMetadataVersion);
    }
    ctx.authorize_cluster_operation("DescribeCluster", who, operation::ALTER)
        .map_err(Refused::Denied)
}

fn response(
    ctx: &ServerContext,
    listener: &str,
    who: &RequestPrincipal,
    version: i16,
    body: &DescribeClusterRequest,
) -> DescribeClusterResponse {
    // v0 cannot name an endpoint type, so it always means brokers; Java then says
    // INVALID_REQUEST rather than the v1+ endpoint-type errors.
    let refuse = |code: ErrorCode, v1_code: ErrorCode, message: String| DescribeClusterResponse {
        error_code: if version == 0 { code.0 } else { v1_code.0 },
        error_message: Some(message),
        ..Default::default()
    };
    match body.endpoint_type {
        ENDPOINT_TYPE_CONTROLLER => {}
        ENDPOINT_TYPE_BROKER => {
            return refuse(
                ErrorCode::INVALID_REQUEST,
                ErrorCode::MISMATCHED_ENDPOINT_TYPE,
                "The request was sent to an endpoint of type CONTROLLER, but we wanted an \
                 endpoint of type BROKER"
                    .into(),
            )
        }
        other => {
            return refuse(
                ErrorCode::INVALID_REQUEST,
                ErrorCode::UNSUPPORTED_ENDPOINT_TYPE,
                format!("Unsupported endpoint type {other}"),
            )
        }
    }
    let controllers: Vec<DescribeClusterBroker> = ctx
        .controller_endpoints(listener)
        .into_iter()
        .map(|c| DescribeClusterBroker {
            broker_id: c.node_id,
            host: c.host,
            port: c.port as i32,
            rack: None,
            is_fenced: false,
            ..Default::default()
        })
        .collect();
    // Name the leader only if it is among the listed nodes, so a client is never pointed at a
    // node it has no address for.
    let controller_id = ctx
        .leader_id()
        .filter(|id| controllers.iter().any(|c| c.broker_id == *id))
        .unwrap_or(-1);
    DescribeClusterResponse {
        throttle_time_ms: 0,
        error_code: ErrorCode::NONE.0,
        error_message: None,
        endpoint_type: ENDPOINT_TYPE_CONTROLLER,
        cluster_id: ctx.cluster_id.clone().unwrap_or_default(),
        controller_id,
        brokers: controllers,
        cluster_authorized_operations: if body.include_cluster_authorized_operations {
            ctx.authorized_cluster_operations(who)
        } else {
            i32::MIN
        },
        ..Default::default()
    }
}
