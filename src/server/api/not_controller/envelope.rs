//! Envelope (key 58): a request a broker forwards on behalf of a client, with the client's
//! principal and address. Java unwraps it, runs the inner request, and answers with the inner
//! response inside the envelope, except that an inner answer carrying `NOT_CONTROLLER` becomes
//! an envelope-level `NOT_CONTROLLER` with no response data, so the broker looks for the
//! active controller and forwards again (`RequestChannel.buildResponseSend`).

use super::{answer, AnswerError, NonActive};
use crate::controller::principal::{client_address, decode_principal, RequestPrincipal};
use crate::protocol::codec::{ApiMessage, RawBody};
use crate::protocol::errors::ErrorCode;
use crate::protocol::frame;
use crate::protocol::messages::{DescribeQuorumRequest, EnvelopeRequest, EnvelopeResponse};

/// The APIs Kafka 4.4 lets a broker forward (`ApiKeys.forwardable`).
const FORWARDABLE: &[i16] = &[
    19, 20, 30, 31, 33, 37, 38, 39, 40, 43, 44, 45, 46, 49, 51, 55, 57, 64, 67, 80, 81, 94,
];

/// What becomes of an Envelope.
#[derive(Debug, PartialEq)]
pub enum EnvelopeAnswer {
    /// The envelope's answer.
    Ready(EnvelopeResponse),
    /// A forwarded DescribeQuorum: raft answers `body` (at `version`, correlation id
    /// `correlation_id`), and the answer goes back inside an envelope.
    DescribeQuorum {
        version: i16,
        correlation_id: i32,
        body: Vec<u8>,
        /// The client's principal and address, as the broker forwarded them.
        principal: RequestPrincipal,
    },
    /// A forwarded request the node loop answers (as the active controller or
    /// not), and the answer goes back inside an envelope.
    Node {
        key: i16,
        version: i16,
        correlation_id: i32,
        body: Vec<u8>,
        /// The client's principal and address, as the broker forwarded them.
        principal: RequestPrincipal,
    },
}

fn failed(code: ErrorCode) -> EnvelopeAnswer {
    EnvelopeAnswer::Ready(envelope_error(code))
}

/// An envelope-level error, with no response inside.
pub fn envelope_error(code: ErrorCode) -> EnvelopeResponse {
    EnvelopeResponse {
        response_data: None,
        error_code: code.0,
        ..Default::default()
    }
}

/// An envelope holding an inner response frame (size prefix included, as `frame` writes it).
pub fn wrap_frame(framed: &[u8]) -> EnvelopeResponse {
    EnvelopeResponse {
        // The frame's 4-byte size prefix is not part of the payload (Java's
        // `buildResponseEnvelopePayload` writes header and body).
        response_data: Some(framed[4..].to_vec()),
        error_code: ErrorCode::NONE.0,
        ..Default::default()
    }
}

/// Answers an Envelope request body as a non-active controller, in Java's order of checks.
/// `Err` only when the envelope itself does not decode (the connection is then closed).
pub fn answer_envelope(
    envelope: &EnvelopeRequest,
    ctx: &NonActive,
) -> Result<EnvelopeAnswer, AnswerError> {
    let Some(data) = envelope
        .request_principal
        .as_deref()
        .and_then(decode_principal)
    else {
        return Ok(failed(ErrorCode::PRINCIPAL_DESERIALIZATION_FAILURE));
    };
    let Some(host) = client_address(&envelope.client_host_address) else {
        return Ok(failed(ErrorCode::INVALID_REQUEST));
    };
    let principal = RequestPrincipal::forwarded(data, host);
    let Ok(inner) = frame::parse_request(&envelope.request_data) else {
        return Ok(failed(ErrorCode::UNSUPPORTED_VERSION));
    };
    let (key, version, correlation_id) =
        (inner.api_key(), inner.api_version(), inner.correlation_id());
    if !FORWARDABLE.contains(&key) {
        return Ok(failed(ErrorCode::INVALID_REQUEST));
    }
    // DescribeQuorum is forwardable, and answered by raft rather than here.
    if key == DescribeQuorumRequest::API_KEY {
        return Ok(EnvelopeAnswer::DescribeQuorum {
            version,
            correlation_id,
            body: inner.body.to_vec(),
            principal,
        });
    }
    // The APIs the node loop answers (as the active controller or not).
    if super::super::node_call::node_api(key) {
        return Ok(EnvelopeAnswer::Node {
            key,
            version,
            correlation_id,
            body: inner.body.to_vec(),
            principal,
        });
    }
    let forwarded = NonActive {
        forwarded: true,
        ..ctx.clone()
    };
    // An inner request kraftd cannot read (an API it does not serve, a version outside the
    // schema's range, a malformed body) is Java's UNSUPPORTED_VERSION: the broker then closes
    // the client's connection so that it reads ApiVersions again.
    let answered = match answer(key, version, inner.body, &forwarded) {
        Some(Ok(a)) => a,
        Some(Err(AnswerError::Decode(_))) | None => {
            return Ok(failed(ErrorCode::UNSUPPORTED_VERSION))
        }
        Some(Err(e)) => return Err(e),
    };
    if answered.not_controller {
        return Ok(failed(ErrorCode::NOT_CONTROLLER));
    }
    Ok(EnvelopeAnswer::Ready(wrap(
        key,
        version,
        correlation_id,
        answered.body,
    )?))
}

/// An envelope holding an inner response body of api `key` at `version`.
fn wrap(
    key: i16,
    version: i16,
    correlation_id: i32,
    body: Vec<u8>,
) -> Result<EnvelopeResponse, AnswerError> {
    let framed = frame::encode_response(key, version, correlation_id, &RawBody(body), version)?;
    Ok(wrap_frame(&framed))
}
