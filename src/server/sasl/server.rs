//! One connection's SASL authentication on a controller listener, as Kafka 4.4's
//! `SaslServerAuthenticator` (with `KafkaChannel`'s and the socket server's share) runs it.
//! A pure state machine: each request frame goes in with the time, and out comes what to do.
//!
//! - Before authentication the client may send one ApiVersions (answered as after it), then
//!   a SaslHandshake (v0: the tokens that follow are bare size-prefixed frames; v1: they come
//!   in SaslAuthenticate requests). Anything else closes the connection at once, as Java
//!   does; so do malformed requests.
//! - A refused handshake or token fails the authentication: the answer (if Java builds one)
//!   is written after `connection.failed.authentication.delay.ms`, then the connection closes.
//! - Once authenticated, requests are served. With `connections.max.reauth.ms` set (KIP-368)
//!   the session expires: a SaslHandshake starts a re-authentication (at most one a second),
//!   which must keep the mechanism and the principal; any other request after the expiry
//!   closes the connection.

use std::sync::Arc;

use super::plain::PlainUsers;
use super::scram::{FailureReply, ScramServer, ScramStep};
use super::settings::ListenerSasl;
use super::Mechanism;
use crate::protocol::codec::{ApiMessage, Message};
use crate::protocol::errors::ErrorCode;
use crate::protocol::frame::{self, api_name, ParsedRequest};
use crate::protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, SaslAuthenticateRequest, SaslAuthenticateResponse,
    SaslHandshakeRequest, SaslHandshakeResponse,
};

/// Java allows a re-authentication to start at most once a second.
const MIN_REAUTH_INTERVAL_MS: i64 = 1000;

/// What the server side of a mechanism answers a client token with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExchangeStep {
    /// More to exchange: send this challenge.
    Challenge(Vec<u8>),
    /// Authenticated as `user`; send `reply`. `credential_expiry_ms`: when the credential
    /// itself expires (a delegation token's), which bounds the session.
    Done {
        reply: Vec<u8>,
        user: String,
        credential_expiry_ms: Option<i64>,
    },
}

/// Why a mechanism refused a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MechanismFailure {
    /// Java's `SaslAuthenticationException`: the client is sent this message.
    Refused(String),
    /// Java's other `SaslException`s: the client is told only that its credentials were
    /// invalid; the detail is for the log.
    InvalidCredentials(String),
    /// Java's runtime exceptions: the connection closes at once, unanswered.
    Close(String),
}

/// A running exchange of one mechanism.
pub enum Exchange {
    Plain(Arc<PlainUsers>),
    Scram(Box<ScramServer>),
}

impl Exchange {
    pub fn step(&mut self, token: &[u8]) -> Result<ExchangeStep, MechanismFailure> {
        match self {
            Exchange::Plain(users) => match users.authenticate(token) {
                Ok(user) => Ok(ExchangeStep::Done {
                    reply: Vec::new(),
                    user,
                    credential_expiry_ms: None,
                }),
                Err(e) => Err(MechanismFailure::Refused(e.to_string())),
            },
            Exchange::Scram(server) => match server.step(token) {
                Ok(ScramStep::Challenge(challenge)) => Ok(ExchangeStep::Challenge(challenge)),
                Ok(ScramStep::Done { reply, user }) => Ok(ExchangeStep::Done {
                    reply,
                    user,
                    credential_expiry_ms: None,
                }),
                Err(e) => Err(match e.reply() {
                    FailureReply::Message(m) => MechanismFailure::Refused(m),
                    FailureReply::InvalidCredentials => {
                        MechanismFailure::InvalidCredentials(e.to_string())
                    }
                    FailureReply::CloseConnection => MechanismFailure::Close(e.to_string()),
                }),
            },
        }
    }
}

/// What the connection needs from the rest of the server.
pub trait Services {
    /// The answer to an ApiVersions request frame, as after authentication.
    fn api_versions(&self, frame: &[u8]) -> ApiVersionsAnswer;
    /// A fresh exchange of `mechanism` (PLAIN: its users; SCRAM: the current credentials).
    fn exchange(&self, mechanism: Mechanism) -> Option<Exchange>;
}

/// How an ApiVersions request was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiVersionsAnswer {
    /// Answered with the API table: a SaslHandshake must follow.
    Accepted(Vec<u8>),
    /// Answered with an error (a version too new, invalid client software): the client may
    /// try again.
    Refused(Vec<u8>),
    /// Not answerable: the connection closes.
    Close(String),
}

/// What the connection does after a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write this response frame and read on.
    Reply(Vec<u8>),
    /// Authenticated: the frame is a request to serve.
    Serve,
    /// Authentication failed: after `connection.failed.authentication.delay.ms`, write
    /// `reply` (when Java sends one) and close.
    Fail {
        reply: Option<Vec<u8>>,
        why: SaslFailure,
    },
    /// Close at once, answering nothing.
    Close(SaslFailure),
}

/// Why a connection's authentication ended it. One log line each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SaslFailure {
    #[error("{0}; the client must authenticate with SASL first (ApiVersions, SaslHandshake, SaslAuthenticate)")]
    Malformed(String),
    #[error("{api} (api key {api_key}) before authentication; the client must authenticate with SASL first (is it configured with security.protocol={protocol}?)")]
    BeforeAuthentication {
        api_key: i16,
        api: &'static str,
        protocol: &'static str,
    },
    #[error("a second ApiVersions before authentication; the client must send SaslHandshake next")]
    RepeatedApiVersions,
    #[error("SASL mechanism '{requested}' is not enabled (enabled: {}); configure the client with sasl.mechanism set to one of them", enabled.join(","))]
    UnsupportedMechanism {
        requested: String,
        enabled: Vec<String>,
    },
    #[error("{reauth}authentication with {mechanism} failed: {message}; check the client's credentials", reauth = if *.reauthentication { "re-" } else { "" })]
    Refused {
        mechanism: Mechanism,
        message: String,
        reauthentication: bool,
    },
    #[error(
        "{message}; a client must re-authenticate with the mechanism and principal it first used"
    )]
    Reauthentication { message: String },
    #[error("a SASL token of {size} bytes is over sasl.server.max.receive.size ({max}); the client is not speaking SASL, or the limit is too low")]
    OversizedToken { size: i64, max: usize },
    #[error("{api} (api key {api_key}) during SASL authentication, where only SaslAuthenticate is expected")]
    UnexpectedRequest { api_key: i16, api: &'static str },
    #[error("the SASL session expired and {api} (api key {api_key}) is not a SaslHandshake; the client must re-authenticate before connections.max.reauth.ms passes")]
    SessionExpired { api_key: i16, api: &'static str },
    #[error("SASL mechanism {0} is enabled but cannot run here; check the listener's JAAS configuration")]
    MechanismUnavailable(Mechanism),
}

/// The authenticated identity of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated {
    pub user: String,
    pub mechanism: Mechanism,
    /// When the session expires (`None`: never).
    pub expires_at_ms: Option<i64>,
}

enum State {
    Initial,
    HandshakeOrVersions,
    Handshake,
    Authenticate {
        mechanism: Mechanism,
        exchange: Exchange,
        /// SaslHandshake v1+: tokens come in SaslAuthenticate requests.
        headers: bool,
    },
    /// A re-authentication asked for another mechanism (answered NONE, as Java does); the
    /// next frame fails it.
    ReauthBadMechanism(String),
    Complete,
    Failed,
}

/// One connection's SASL state.
pub struct Session {
    config: Arc<ListenerSasl>,
    state: State,
    authenticated: Option<Authenticated>,
    /// The identity being re-authenticated.
    previous: Option<Authenticated>,
    last_reauth_start_ms: Option<i64>,
}

impl Session {
    pub fn new(config: Arc<ListenerSasl>) -> Session {
        Session {
            config,
            state: State::Initial,
            authenticated: None,
            previous: None,
            last_reauth_start_ms: None,
        }
    }

    /// The authenticated identity, once there is one (kept through re-authentication).
    pub fn authenticated(&self) -> Option<&Authenticated> {
        self.authenticated.as_ref()
    }

    /// Whether frames are authentication frames (bounded by `sasl.server.max.receive.size`)
    /// rather than requests to serve.
    pub fn authenticating(&self) -> bool {
        !matches!(self.state, State::Complete)
    }

    /// The largest frame accepted now: `sasl.server.max.receive.size` while authenticating.
    pub fn max_frame(&self, request_max: usize) -> usize {
        if self.authenticating() {
            self.config.max_receive_size
        } else {
            request_max
        }
    }

    /// A frame whose size prefix is over [`Self::max_frame`] (or negative) while
    /// authenticating: Java fails the authentication without an answer.
    pub fn oversized(&mut self, size: i64) -> Action {
        self.state = State::Failed;
        Action::Fail {
            reply: None,
            why: SaslFailure::OversizedToken {
                size,
                max: self.config.max_receive_size,
            },
        }
    }

    /// One frame (size prefix removed), received at `now_ms` (wall clock).
    pub fn receive(&mut self, frame: &[u8], now_ms: i64, services: &dyn Services) -> Action {
        let action = match self.state {
            State::Complete => self.authenticated_request(frame, now_ms, services),
            State::Initial | State::HandshakeOrVersions | State::Handshake => {
                self.kafka_request(frame, services)
            }
            State::Authenticate { .. } => self.token(frame, now_ms),
            State::ReauthBadMechanism(ref message) => Action::Fail {
                reply: None,
                why: SaslFailure::Reauthentication {
                    message: message.clone(),
                },
            },
            // The connection is closing; nothing more is read.
            State::Failed => Action::Close(SaslFailure::Malformed(
                "a frame after a failed authentication".into(),
            )),
        };
        if matches!(action, Action::Fail { .. } | Action::Close(_)) {
            self.state = State::Failed;
        }
        action
    }

    /// A request on an authenticated connection: served, or the start of a
    /// re-authentication, or (the session expired) the end of the connection.
    fn authenticated_request(
        &mut self,
        frame: &[u8],
        now_ms: i64,
        services: &dyn Services,
    ) -> Action {
        // Too short for an api key: served, which closes it as a bad header.
        let Some(key) = frame.first_chunk::<2>() else {
            return Action::Serve;
        };
        let api_key = i16::from_be_bytes(*key);
        let Some(current) = self.authenticated.clone() else {
            return Action::Serve;
        };
        if api_key == SaslHandshakeRequest::API_KEY && current.expires_at_ms.is_some() {
            let too_soon = self
                .last_reauth_start_ms
                .is_some_and(|last| now_ms - last < MIN_REAUTH_INTERVAL_MS);
            if !too_soon {
                self.last_reauth_start_ms = Some(now_ms);
                self.previous = Some(current);
                self.state = State::Handshake;
                // Java handles this handshake in its socket server, where a refusal (an
                // unsupported mechanism) closes the connection at once, unanswered.
                return match self.kafka_request(frame, services) {
                    Action::Fail { why, .. } => Action::Close(why),
                    other => other,
                };
            }
        }
        if current.expires_at_ms.is_some_and(|at| now_ms > at) {
            return Action::Close(SaslFailure::SessionExpired {
                api_key,
                api: api_name(api_key),
            });
        }
        Action::Serve
    }

    /// ApiVersions or SaslHandshake, before the mechanism runs.
    fn kafka_request(&mut self, frame: &[u8], services: &dyn Services) -> Action {
        let initial = matches!(self.state, State::Initial);
        let request = match frame::parse_request(frame) {
            Ok(r) => r,
            Err(e) => return Action::Close(SaslFailure::Malformed(e.to_string())),
        };
        let api_key = request.api_key();
        if api_key != ApiVersionsRequest::API_KEY && api_key != SaslHandshakeRequest::API_KEY {
            return Action::Close(SaslFailure::BeforeAuthentication {
                api_key,
                api: api_name(api_key),
                protocol: self.config.protocol.name(),
            });
        }
        if api_key == ApiVersionsRequest::API_KEY {
            if !(initial || matches!(self.state, State::HandshakeOrVersions)) {
                return Action::Close(SaslFailure::RepeatedApiVersions);
            }
            return match services.api_versions(frame) {
                ApiVersionsAnswer::Accepted(reply) => {
                    self.state = State::Handshake;
                    Action::Reply(reply)
                }
                ApiVersionsAnswer::Refused(reply) => {
                    self.state = State::HandshakeOrVersions;
                    Action::Reply(reply)
                }
                ApiVersionsAnswer::Close(why) => Action::Close(SaslFailure::Malformed(why)),
            };
        }
        let version = request.api_version();
        let handshake = match (version <= SaslHandshakeRequest::HIGHEST_VERSION)
            .then(|| SaslHandshakeRequest::decode_exact(request.body, version))
        {
            Some(Ok(h)) => h,
            Some(Err(e)) => {
                return Action::Close(SaslFailure::Malformed(format!(
                    "malformed SaslHandshake v{version}: {e}"
                )))
            }
            None => {
                return Action::Close(SaslFailure::Malformed(format!(
                    "SaslHandshake v{version} is not a version Kafka speaks"
                )))
            }
        };
        self.handshake(&request, handshake.mechanism, services)
    }

    fn enabled_names(&self) -> Vec<String> {
        self.config
            .mechanisms
            .iter()
            .map(|m| m.mechanism.name().to_string())
            .collect()
    }

    fn handshake(
        &mut self,
        request: &ParsedRequest<'_>,
        requested: String,
        services: &dyn Services,
    ) -> Action {
        let enabled = self.enabled_names();
        let mechanism = Mechanism::from_name(&requested)
            .filter(|m| self.config.mechanisms.iter().any(|e| e.mechanism == *m));
        let Some(mechanism) = mechanism else {
            let answer = SaslHandshakeResponse {
                error_code: ErrorCode::UNSUPPORTED_SASL_MECHANISM.0,
                mechanisms: enabled.clone(),
                ..Default::default()
            };
            return Action::Fail {
                reply: encode(request, &answer).ok(),
                why: SaslFailure::UnsupportedMechanism { requested, enabled },
            };
        };
        let answer = SaslHandshakeResponse {
            error_code: ErrorCode::NONE.0,
            mechanisms: enabled,
            ..Default::default()
        };
        let reply = match encode(request, &answer) {
            Ok(r) => r,
            Err(why) => return Action::Close(why),
        };
        if let Some(previous) = &self.previous {
            if previous.mechanism != mechanism {
                self.state = State::ReauthBadMechanism(format!(
                    "SASL mechanism '{requested}' requested by client is not supported for \
                     re-authentication of mechanism '{}'",
                    previous.mechanism
                ));
                return Action::Reply(reply);
            }
        }
        let Some(exchange) = services.exchange(mechanism) else {
            return Action::Close(SaslFailure::MechanismUnavailable(mechanism));
        };
        self.state = State::Authenticate {
            mechanism,
            exchange,
            headers: request.api_version() >= 1,
        };
        Action::Reply(reply)
    }

    /// A client token: bare (SaslHandshake v0) or in a SaslAuthenticate request.
    fn token(&mut self, frame: &[u8], now_ms: i64) -> Action {
        let State::Authenticate { headers, .. } = self.state else {
            unreachable!("tokens arrive while authenticating");
        };
        if !headers {
            return self.bare_token(frame, now_ms);
        }
        let request = match frame::parse_request(frame) {
            Ok(r) => r,
            Err(e) => return Action::Close(SaslFailure::Malformed(e.to_string())),
        };
        let (api_key, version) = (request.api_key(), request.api_version());
        if api_key != SaslAuthenticateRequest::API_KEY {
            return self.unexpected_request(&request);
        }
        if version > SaslAuthenticateRequest::HIGHEST_VERSION {
            return Action::Close(SaslFailure::Malformed(format!(
                "SaslAuthenticate v{version} is not a version Kafka speaks"
            )));
        }
        let body = match SaslAuthenticateRequest::decode_exact(request.body, version) {
            Ok(b) => b,
            Err(e) => {
                return Action::Close(SaslFailure::Malformed(format!(
                    "malformed SaslAuthenticate v{version}: {e}"
                )))
            }
        };
        let reauthentication = self.previous.is_some();
        let (mechanism, step) = self.step(&body.auth_bytes);
        let failed = |message: String, why: SaslFailure| {
            let answer = SaslAuthenticateResponse {
                error_code: ErrorCode::SASL_AUTHENTICATION_FAILED.0,
                error_message: Some(message),
                ..Default::default()
            };
            Action::Fail {
                reply: encode(&request, &answer).ok(),
                why,
            }
        };
        match step {
            Ok(ExchangeStep::Challenge(bytes)) => reply_or_close(encode(
                &request,
                &SaslAuthenticateResponse {
                    auth_bytes: bytes,
                    ..Default::default()
                },
            )),
            Ok(ExchangeStep::Done {
                reply,
                user,
                credential_expiry_ms,
            }) => {
                if let Some(message) = self.principal_change(&user) {
                    return failed(message.clone(), SaslFailure::Reauthentication { message });
                }
                let lifetime = self.complete(mechanism, user, credential_expiry_ms, now_ms);
                reply_or_close(encode(
                    &request,
                    &SaslAuthenticateResponse {
                        auth_bytes: reply,
                        session_lifetime_ms: lifetime,
                        ..Default::default()
                    },
                ))
            }
            Err(MechanismFailure::Refused(message)) => failed(
                message.clone(),
                SaslFailure::Refused {
                    mechanism,
                    message,
                    reauthentication,
                },
            ),
            Err(MechanismFailure::Close(detail)) => Action::Close(SaslFailure::Refused {
                mechanism,
                message: detail,
                reauthentication,
            }),
            Err(MechanismFailure::InvalidCredentials(detail)) => failed(
                format!(
                    "Authentication failed during {} due to invalid credentials with SASL \
                     mechanism {mechanism}",
                    if reauthentication {
                        "re-authentication"
                    } else {
                        "authentication"
                    }
                ),
                SaslFailure::Refused {
                    mechanism,
                    message: detail,
                    reauthentication,
                },
            ),
        }
    }

    /// A token after a SaslHandshake v0: answered bare; a refusal is not answered.
    fn bare_token(&mut self, token: &[u8], now_ms: i64) -> Action {
        let reauthentication = self.previous.is_some();
        let (mechanism, step) = self.step(token);
        match step {
            Ok(ExchangeStep::Challenge(bytes)) => Action::Reply(size_prefixed(&bytes)),
            Ok(ExchangeStep::Done {
                reply,
                user,
                credential_expiry_ms,
            }) => {
                if let Some(message) = self.principal_change(&user) {
                    return Action::Fail {
                        reply: None,
                        why: SaslFailure::Reauthentication { message },
                    };
                }
                self.complete(mechanism, user, credential_expiry_ms, now_ms);
                Action::Reply(size_prefixed(&reply))
            }
            Err(MechanismFailure::Refused(message)) => Action::Fail {
                reply: None,
                why: SaslFailure::Refused {
                    mechanism,
                    message,
                    reauthentication,
                },
            },
            // Java's SaslException is an IOException here: the connection just closes.
            Err(
                MechanismFailure::InvalidCredentials(message) | MechanismFailure::Close(message),
            ) => Action::Close(SaslFailure::Refused {
                mechanism,
                message,
                reauthentication,
            }),
        }
    }

    fn step(&mut self, token: &[u8]) -> (Mechanism, Result<ExchangeStep, MechanismFailure>) {
        let State::Authenticate {
            mechanism,
            ref mut exchange,
            ..
        } = self.state
        else {
            unreachable!("tokens arrive while authenticating");
        };
        (mechanism, exchange.step(token))
    }

    /// Java's message when a re-authentication names another principal.
    fn principal_change(&self, user: &str) -> Option<String> {
        let previous = self.previous.as_ref()?;
        (previous.user != user).then(|| {
            format!(
                "Cannot change principals during re-authentication from User.{}: User.{user}",
                previous.user
            )
        })
    }

    /// Authenticated: the session's lifetime (Java's `calcCompletionTimesAndReturnSessionLifetimeMs`).
    fn complete(
        &mut self,
        mechanism: Mechanism,
        user: String,
        credential_expiry_ms: Option<i64>,
        now_ms: i64,
    ) -> i64 {
        let max_reauth = self
            .config
            .mechanisms
            .iter()
            .find(|m| m.mechanism == mechanism)
            .map_or(0, |m| m.reauth_ms);
        let max_reauth = (max_reauth > 0).then_some(max_reauth);
        let lifetime = match (credential_expiry_ms, max_reauth) {
            (None, None) => None,
            (None, Some(max)) => Some(max),
            (Some(expiry), None) => Some((expiry - now_ms).max(0)),
            (Some(expiry), Some(max)) => Some((expiry - now_ms).min(max).max(0)),
        };
        self.authenticated = Some(Authenticated {
            user,
            mechanism,
            expires_at_ms: lifetime.map(|l| now_ms.saturating_add(l)),
        });
        self.previous = None;
        self.state = State::Complete;
        lifetime.unwrap_or(0)
    }

    /// A request other than SaslAuthenticate while tokens are expected: Java answers it with
    /// its error response (ILLEGAL_SASL_STATE) after the delay, then closes. kraftd builds
    /// that answer for the SASL and ApiVersions requests; any other closes unanswered.
    fn unexpected_request(&mut self, request: &ParsedRequest<'_>) -> Action {
        let api_key = request.api_key();
        let reply = if api_key == SaslHandshakeRequest::API_KEY {
            encode(
                request,
                &SaslHandshakeResponse {
                    error_code: ErrorCode::ILLEGAL_SASL_STATE.0,
                    ..Default::default()
                },
            )
            .ok()
        } else if api_key == ApiVersionsRequest::API_KEY {
            encode(
                request,
                &ApiVersionsResponse {
                    error_code: ErrorCode::ILLEGAL_SASL_STATE.0,
                    ..Default::default()
                },
            )
            .ok()
        } else {
            None
        };
        Action::Fail {
            reply,
            why: SaslFailure::UnexpectedRequest {
                api_key,
                api: api_name(api_key),
            },
        }
    }
}

fn reply_or_close(reply: Result<Vec<u8>, SaslFailure>) -> Action {
    match reply {
        Ok(r) => Action::Reply(r),
        Err(why) => Action::Close(why),
    }
}

/// A response frame to `request`, at its version.
fn encode<M: Message>(request: &ParsedRequest<'_>, body: &M) -> Result<Vec<u8>, SaslFailure> {
    frame::encode_response(
        request.api_key(),
        request.api_version(),
        request.correlation_id(),
        body,
        request.api_version(),
    )
    .map_err(|e| {
        SaslFailure::Malformed(format!(
            "could not encode the {} answer: {e}",
            api_name(request.api_key())
        ))
    })
}

/// A bare token as SaslHandshake v0 frames it: a 4-byte size, then the bytes.
pub fn size_prefixed(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 4);
    out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
    out.extend_from_slice(bytes);
    out
}
