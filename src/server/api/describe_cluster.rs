//! DescribeCluster (key 60) on a controller listener (KIP-919): clients that bootstrap with
//! `--bootstrap-controller` send it first to discover the controllers.

use crate::protocol::codec::{DecodeError, Message};
use crate::protocol::errors::ErrorCode;
use crate::protocol::frame::ParsedRequest;
use crate::protocol::messages::describe_cluster_response::DescribeClusterBroker;
use crate::protocol::messages::{DescribeClusterRequest, DescribeClusterResponse};

use super::{respond, Outcome};
use crate::server::context::ServerContext;

const ENDPOINT_TYPE_BROKER: i8 = 1;
const ENDPOINT_TYPE_CONTROLLER: i8 = 2;

/// With no authorizer every cluster operation is allowed: Kafka's bit set of the operations a
/// CLUSTER resource supports (CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS,
/// ALTER_CONFIGS, IDEMPOTENT_WRITE).
const ALL_CLUSTER_OPERATIONS: i32 =
    (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12);

pub(super) fn handle(
    ctx: &ServerContext,
    listener: &str,
    request: &ParsedRequest<'_>,
) -> Result<Outcome, DecodeError> {
    let version = request.api_version();
    let body = DescribeClusterRequest::decode_exact(request.body, version)?;
    Ok(respond(
        request,
        &response(ctx, listener, version, &body),
        version,
    ))
}

fn response(
    ctx: &ServerContext,
    listener: &str,
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
            ALL_CLUSTER_OPERATIONS
        } else {
            i32::MIN
        },
        ..Default::default()
    }
}
