//! The Kafka APIs kraftd serves on its controller listeners: which ones, at which versions, and
//! the dispatch from a request frame to a response frame (or a closed connection).
//!
//! The catalogue below is the single source of truth: ApiVersions advertises exactly it, and
//! dispatch refuses anything outside it the way Java's controller does.

mod api_versions;
#[cfg(test)]
mod authz_tests;
mod describe_cluster;
mod node_call;
pub mod not_controller;
mod raft_authz;
mod sasl;

use std::fmt;

use crate::protocol::codec::{ApiMessage, EncodeError, Message};
use crate::protocol::frame::{self, ParsedRequest};
use crate::protocol::messages;
use crate::raft::ApiKind;

pub use api_versions::supported_features;
use node_call::controller_call;
pub use node_call::{
    answer as answer_reply, AclRequest, ControllerReply, ControllerRequest, NodeCall,
};

use super::context::ServerContext;
use super::raft_wire;
use crate::controller::acls::authorizer::Denied;
use crate::controller::acls::{operation, resource, CLUSTER_NAME};
use crate::controller::principal::RequestPrincipal;

/// An API kraftd serves, with the versions it implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServedApi {
    pub key: i16,
    pub name: &'static str,
    pub min_version: i16,
    pub max_version: i16,
}

/// The APIs kraftd serves itself (raft, discovery, SASL's refusals after authentication,
/// Envelope), in api-key order. ApiVersions advertises these and the controller APIs of the
/// table (`not_controller::CONTROLLER_APIS` and `not_controller::NODE_ONLY_APIS`).
pub const SERVED_APIS: &[ServedApi] = &[
    raft_served(ApiKind::Fetch),
    ServedApi {
        key: messages::SaslHandshakeRequest::API_KEY,
        name: "SaslHandshake",
        min_version: 0,
        max_version: 1,
    },
    raft_served(ApiKind::ApiVersions),
    ServedApi {
        key: messages::SaslAuthenticateRequest::API_KEY,
        name: "SaslAuthenticate",
        min_version: 0,
        max_version: 2,
    },
    raft_served(ApiKind::Vote),
    raft_served(ApiKind::BeginQuorumEpoch),
    raft_served(ApiKind::EndQuorumEpoch),
    raft_served(ApiKind::DescribeQuorum),
    ServedApi {
        key: messages::EnvelopeRequest::API_KEY,
        name: "Envelope",
        min_version: 0,
        max_version: 0,
    },
    raft_served(ApiKind::FetchSnapshot),
    ServedApi {
        key: messages::DescribeClusterRequest::API_KEY,
        name: "DescribeCluster",
        min_version: 0,
        max_version: 2,
    },
    raft_served(ApiKind::AddRaftVoter),
    raft_served(ApiKind::RemoveRaftVoter),
    raft_served(ApiKind::UpdateRaftVoter),
];

/// The raft api of `kind` as ApiVersions advertises it: `SERVED_APIS` lists the raft apis
/// through this, so that their versions are written once, above.
const fn raft_served(kind: ApiKind) -> ServedApi {
    let mut i = 0;
    while i < raft_wire::RAFT_APIS.len() {
        let api = &raft_wire::RAFT_APIS[i];
        if api.kind as u8 == kind as u8 {
            return ServedApi {
                key: api.key,
                name: api.name,
                min_version: api.min_version,
                max_version: api.max_version,
            };
        }
        i += 1;
    }
    panic!("every raft api is listed");
}

/// Every API kraftd answers, in api-key order: what ApiVersions advertises.
pub fn served_apis() -> Vec<&'static ServedApi> {
    let mut all: Vec<&'static ServedApi> = SERVED_APIS
        .iter()
        .chain(not_controller::CONTROLLER_APIS)
        .chain(not_controller::NODE_ONLY_APIS)
        .collect();
    all.sort_by_key(|a| a.key);
    all
}

pub fn served_api(key: i16) -> Option<&'static ServedApi> {
    SERVED_APIS
        .iter()
        .chain(not_controller::CONTROLLER_APIS)
        .chain(not_controller::NODE_ONLY_APIS)
        .find(|a| a.key == key)
}

/// What the connection does with one request frame.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Write this complete response frame (size prefix included).
    Respond(Vec<u8>),
    /// Hand this raft request to the node loop and write the frame of its answer.
    Raft(RaftCall),
    /// Hand this request to the node loop and write the frame of its answer.
    Node(NodeCall),
    /// Close the connection; the reason is logged once, as Java logs it.
    Close(CloseReason),
}

/// A decoded raft request waiting for the node loop's answer.
#[derive(Debug, PartialEq)]
pub struct RaftCall {
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    pub request: crate::raft::Request,
    /// The Envelope this request came in, if a broker forwarded it.
    pub enveloped: Option<Enveloped>,
}

/// The outer Envelope of a forwarded raft request (DescribeQuorum), answered around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Enveloped {
    pub version: i16,
    pub correlation_id: i32,
}

/// The response frame for the node's answer to a raft call; `Close` if it cannot be encoded.
pub fn answer_frame(
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    enveloped: Option<Enveloped>,
    response: &crate::raft::Response,
) -> Outcome {
    let close = |error| {
        Outcome::Close(CloseReason::Encode {
            api_key,
            api_version,
            error,
        })
    };
    let bytes =
        match raft_wire::encode_response_frame(api_key, api_version, correlation_id, response) {
            Ok(bytes) => bytes,
            Err(error) => return close(error),
        };
    let Some(outer) = enveloped else {
        return Outcome::Respond(bytes);
    };
    // Java turns a forwarded DescribeQuorum that this node cannot answer (it does not lead)
    // into an envelope-level NOT_CONTROLLER, so the broker forwards it to the leader.
    in_envelope(outer, raft_wire::reports_not_leader(response), &bytes)
}

/// The Envelope answer around an inner response frame: an inner NOT_CONTROLLER fails the
/// whole Envelope, so that the broker forwards the request to the new leader.
fn in_envelope(outer: Enveloped, inner_not_controller: bool, inner: &[u8]) -> Outcome {
    let envelope = if inner_not_controller {
        not_controller::envelope_error(crate::protocol::errors::ErrorCode::NOT_CONTROLLER)
    } else {
        not_controller::wrap_frame(inner)
    };
    match frame::encode_response(
        messages::EnvelopeRequest::API_KEY,
        outer.version,
        outer.correlation_id,
        &envelope,
        outer.version,
    ) {
        Ok(bytes) => Outcome::Respond(bytes),
        Err(error) => Outcome::Close(CloseReason::Encode {
            api_key: messages::EnvelopeRequest::API_KEY,
            api_version: outer.version,
            error,
        }),
    }
}

/// Why a connection is closed instead of answered.
#[derive(Debug, PartialEq, Eq)]
pub enum CloseReason {
    BadHeader(frame::HeaderError),
    NotServed {
        api_key: i16,
        api_version: i16,
        correlation_id: i32,
    },
    UnsupportedVersion {
        api_key: i16,
        api_version: i16,
        correlation_id: i32,
    },
    BadBody {
        api_key: i16,
        api_version: i16,
        correlation_id: i32,
        error: String,
    },
    Encode {
        api_key: i16,
        api_version: i16,
        error: EncodeError,
    },
    /// A raft request arrived but no node loop can answer it.
    NodeUnavailable {
        api_key: i16,
        why: String,
    },
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::BadHeader(e) => write!(f, "{e}"),
            CloseReason::NotServed { api_key, api_version, correlation_id } => write!(
                f,
                "api key {api_key} ({}) version {api_version} (correlation id {correlation_id}) \
                 is not served on a controller listener",
                frame::api_name(*api_key)
            ),
            CloseReason::UnsupportedVersion { api_key, api_version, correlation_id } => {
                let api = served_api(*api_key).expect("only served apis reach version checks");
                write!(
                    f,
                    "unsupported {} version {api_version} (correlation id {correlation_id}); \
                     kraftd serves versions {}-{}",
                    api.name, api.min_version, api.max_version
                )
            }
            CloseReason::BadBody { api_key, api_version, correlation_id, error } => write!(
                f,
                "malformed {} v{api_version} request body (correlation id {correlation_id}): {error}",
                frame::api_name(*api_key)
            ),
            CloseReason::NodeUnavailable { api_key, why } => write!(
                f,
                "cannot answer {}: {why}",
                frame::api_name(*api_key)
            ),
            CloseReason::Encode { api_key, api_version, error } => write!(
                f,
                "could not encode the {} v{api_version} response: {error}",
                frame::api_name(*api_key)
            ),
        }
    }
}

/// Handles one request frame (size prefix removed) received on a controller listener from a
/// connection authenticated as `connection`.
pub fn handle(
    ctx: &ServerContext,
    listener: &str,
    connection: &RequestPrincipal,
    bytes: &[u8],
) -> Outcome {
    let request = match frame::parse_request(bytes) {
        Ok(r) => r,
        Err(e) => return Outcome::Close(CloseReason::BadHeader(e)),
    };
    let (api_key, api_version, correlation_id) = (
        request.api_key(),
        request.api_version(),
        request.correlation_id(),
    );
    let Some(api) = served_api(api_key) else {
        return Outcome::Close(CloseReason::NotServed {
            api_key,
            api_version,
            correlation_id,
        });
    };
    if !(api.min_version..=api.max_version).contains(&api_version) {
        if api_key == messages::ApiVersionsRequest::API_KEY {
            // KIP-511: answer in v0 so any client can read it, naming the versions we serve.
            return respond(&request, &api_versions::unsupported_version_response(), 0);
        }
        return Outcome::Close(CloseReason::UnsupportedVersion {
            api_key,
            api_version,
            correlation_id,
        });
    }
    // The APIs the controller serves go to the node loop, which answers them as the active
    // controller or as a non-active one.
    if let Some(decoded) = controller_call(api_key, api_version, request.body) {
        return match decoded {
            Ok(request) => Outcome::Node(NodeCall {
                api_key,
                api_version,
                correlation_id,
                request,
                enveloped: None,
                principal: None,
            }),
            Err(error) => Outcome::Close(CloseReason::BadBody {
                api_key,
                api_version,
                correlation_id,
                error: error.to_string(),
            }),
        };
    }
    // Only these APIs need the non-active view (a read of the quorum view); raft traffic,
    // the hot path, skips it.
    if let Some(answered) = not_controller::answers(api_key)
        .then(|| not_controller::answer(api_key, api_version, request.body, &ctx.non_active()))
        .flatten()
    {
        return match answered {
            Ok(a) => respond(
                &request,
                &crate::protocol::codec::RawBody(a.body),
                api_version,
            ),
            Err(not_controller::AnswerError::Decode(error)) => {
                Outcome::Close(CloseReason::BadBody {
                    api_key,
                    api_version,
                    correlation_id,
                    error: error.to_string(),
                })
            }
            Err(not_controller::AnswerError::Encode(error)) => {
                Outcome::Close(CloseReason::Encode {
                    api_key,
                    api_version,
                    error,
                })
            }
        };
    }
    let result = match api_key {
        messages::ApiVersionsRequest::API_KEY => api_versions::handle(ctx, &request),
        messages::EnvelopeRequest::API_KEY => envelope(ctx, connection, &request),
        messages::SaslHandshakeRequest::API_KEY => sasl::handshake(&request),
        messages::SaslAuthenticateRequest::API_KEY => sasl::authenticate(&request),
        messages::DescribeClusterRequest::API_KEY => {
            describe_cluster::handle(ctx, listener, connection, &request)
        }
        key => match raft_wire::raft_api_by_key(key) {
            Some(api) => raft_call(
                ctx,
                connection,
                api,
                (api_version, correlation_id),
                request.body,
                None,
            ),
            None => unreachable!("every served api has a handler"),
        },
    };
    match result {
        Ok(outcome) => outcome,
        Err(error) => Outcome::Close(CloseReason::BadBody {
            api_key,
            api_version,
            correlation_id,
            error: error.to_string(),
        }),
    }
}

/// An Envelope from a broker: its answer, or the forwarded DescribeQuorum for raft to answer.
fn envelope(
    ctx: &ServerContext,
    connection: &RequestPrincipal,
    request: &ParsedRequest<'_>,
) -> Result<Outcome, crate::protocol::codec::DecodeError> {
    let body = messages::EnvelopeRequest::decode_exact(request.body, request.api_version())?;
    // Only a connection holding CLUSTER_ACTION (a broker's) may forward, checked first.
    let verdict = ctx.authorize(
        connection,
        resource::CLUSTER,
        CLUSTER_NAME,
        operation::CLUSTER_ACTION,
    );
    let denied = match verdict {
        Ok(true) => None,
        Ok(false) => Some(Denied::Envelope {
            who: connection.to_string(),
        }),
        Err(not_ready) => Some(not_ready.into()),
    };
    if let Some(denied) = denied {
        let code = denied.error_code();
        tracing::warn!(target: "kraftd::controller", "Envelope refused with {}: {denied}", code.name());
        let refused = not_controller::envelope_error(code);
        return Ok(respond(request, &refused, request.api_version()));
    }
    let answer = match not_controller::answer_envelope(&body, &ctx.non_active()) {
        Ok(a) => a,
        Err(not_controller::AnswerError::Encode(error)) => {
            return Ok(Outcome::Close(CloseReason::Encode {
                api_key: messages::EnvelopeRequest::API_KEY,
                api_version: request.api_version(),
                error,
            }))
        }
        Err(not_controller::AnswerError::Decode(e)) => return Err(e),
    };
    match answer {
        not_controller::EnvelopeAnswer::Ready(response) => {
            Ok(respond(request, &response, request.api_version()))
        }
        not_controller::EnvelopeAnswer::Node {
            key,
            version,
            correlation_id,
            body,
            principal,
        } => match controller_call(key, version, &body) {
            Some(Ok(inner)) => Ok(Outcome::Node(NodeCall {
                api_key: key,
                api_version: version,
                correlation_id,
                request: inner.forwarded(),
                enveloped: Some(Enveloped {
                    version: request.api_version(),
                    correlation_id: request.correlation_id(),
                }),
                principal: Some(principal),
            })),
            // Java: an inner request that does not parse is an envelope-level
            // UNSUPPORTED_VERSION.
            _ => Ok(respond(
                request,
                &not_controller::envelope_error(
                    crate::protocol::errors::ErrorCode::UNSUPPORTED_VERSION,
                ),
                request.api_version(),
            )),
        },
        not_controller::EnvelopeAnswer::DescribeQuorum {
            version,
            correlation_id,
            body,
            principal,
        } => {
            let api = raft_wire::raft_api(ApiKind::DescribeQuorum);
            let outer = Enveloped {
                version: request.api_version(),
                correlation_id: request.correlation_id(),
            };
            match raft_call(
                ctx,
                &principal,
                api,
                (version, correlation_id),
                &body,
                Some(outer),
            ) {
                Ok(outcome) => Ok(outcome),
                // Java: an inner request that does not parse is an envelope-level
                // UNSUPPORTED_VERSION.
                Err(_) => Ok(respond(
                    request,
                    &not_controller::envelope_error(
                        crate::protocol::errors::ErrorCode::UNSUPPORTED_VERSION,
                    ),
                    request.api_version(),
                )),
            }
        }
    }
}

/// A raft request for the node loop, once `who` is authorized for it (`ControllerApis`
/// authorizes every raft API on the cluster before raft sees it); refused, its error
/// response, inside the Envelope `enveloped` when a broker forwarded it.
fn raft_call(
    ctx: &ServerContext,
    who: &RequestPrincipal,
    api: &'static raft_wire::RaftApi,
    (api_version, correlation_id): (i16, i32),
    body: &[u8],
    enveloped: Option<Enveloped>,
) -> Result<Outcome, crate::protocol::codec::DecodeError> {
    let wire = raft_wire::decode_wire(api.kind, api_version, body)?;
    let refused = raft_authz::refusal(ctx, who, api, api_version, correlation_id, &wire);
    Ok(match (refused, enveloped) {
        (None, _) => Outcome::Raft(RaftCall {
            api_key: api.key,
            api_version,
            correlation_id,
            request: crate::raft::convert::request_from_wire(&wire),
            enveloped,
        }),
        (Some(Ok(frame)), None) => Outcome::Respond(frame),
        (Some(Ok(frame)), Some(outer)) => in_envelope(outer, false, &frame),
        (Some(Err(error)), _) => Outcome::Close(CloseReason::Encode {
            api_key: api.key,
            api_version,
            error,
        }),
    })
}

/// Encodes `body` as the response to `request` at `body_version`.
fn respond<M: Message>(request: &ParsedRequest<'_>, body: &M, body_version: i16) -> Outcome {
    match frame::encode_response(
        request.api_key(),
        request.api_version(),
        request.correlation_id(),
        body,
        body_version,
    ) {
        Ok(bytes) => Outcome::Respond(bytes),
        Err(error) => Outcome::Close(CloseReason::Encode {
            api_key: request.api_key(),
            api_version: request.api_version(),
            error,
        }),
    }
}
