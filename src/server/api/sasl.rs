//! SaslHandshake (key 17) and SaslAuthenticate (key 36) as requests to serve: on a PLAINTEXT or
//! SSL listener, and on a SASL listener once the connection is authenticated (its SASL exchange
//! is `server::sasl::server`'s). Both get the answer Java's controller gives there: the SASL
//! exchange is out of place.

use crate::protocol::codec::{DecodeError, Message};
use crate::protocol::errors::ErrorCode;
use crate::protocol::frame::ParsedRequest;
use crate::protocol::messages::{
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};

use super::{respond, Outcome};

pub(super) fn handshake(request: &ParsedRequest<'_>) -> Result<Outcome, DecodeError> {
    let version = request.api_version();
    SaslHandshakeRequest::decode_exact(request.body, version)?;
    let answer = SaslHandshakeResponse {
        error_code: ErrorCode::ILLEGAL_SASL_STATE.0,
        ..Default::default()
    };
    Ok(respond(request, &answer, version))
}

pub(super) fn authenticate(request: &ParsedRequest<'_>) -> Result<Outcome, DecodeError> {
    let version = request.api_version();
    SaslAuthenticateRequest::decode_exact(request.body, version)?;
    let answer = SaslAuthenticateResponse {
        error_code: ErrorCode::ILLEGAL_SASL_STATE.0,
        error_message: Some(
            "SaslAuthenticate request received after successful authentication".into(),
        ),
        ..Default::default()
    };
    Ok(respond(request, &answer, version))
}
