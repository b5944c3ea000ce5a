//! The server side of a SCRAM exchange, step for step as Kafka 4.4's `ScramSaslServer`
//! (with the `ScramServerCallbackHandler` of a controller) takes it:
//!
//! 1. client-first: parsed (extensions other than `tokenauth` ignored); the user name
//!    unescaped; `tokenauth=true` refused (see below); the user's credential for this
//!    mechanism looked up (none: fails here, before any challenge, as Java does); a gs2
//!    authorization id other than the user name refused (compared as sent, still escaped, as
//!    Java does); a credential below 4096 iterations refused. Answer: the server-first message,
//!    `r=<client nonce><server nonce>,s=<salt>,i=<iterations>`.
//! 2. client-final: parsed; its nonce must be the combined one; the proof checked against the
//!    StoredKey (`H(ClientSignature XOR proof) == StoredKey`, in constant time); answer:
//!    `v=<ServerSignature>`, and the exchange is done for the user. Java never checks the
//!    channel binding `c=` (only that it is base64): neither does kraftd.
//!
//! Delegation tokens: a Java controller authenticates `tokenauth=true` against the tokens in
//! its metadata when `delegation.token.secret.key` is set. kraftd does not (yet): it refuses
//! every token, and the client sees what Java shows for an unknown token (the generic
//! invalid-credentials message); kraftd's log says why.

use std::sync::Arc;

use super::error::{ScramError, ScramErrorKind};
use super::messages::{
    is_valid_nonce, unescape_saslname, ClientFinal, ClientFirst, ServerFinal, ServerFirst,
};
use super::{auth_message, ct_eq, xor, ScramCredentials, ScramMechanism};
use crate::controller::scram::ScramCredential;

/// What the server answers a client message with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScramStep {
    /// The server-first message: the client must answer with its final message.
    Challenge(Vec<u8>),
    /// The server-final message; `user` is authenticated (the SASL authorization id).
    Done { reply: Vec<u8>, user: String },
}

/// What the first step established, for the second.
struct Exchange {
    client_first: ClientFirst,
    server_first: ServerFirst,
    credential: Arc<ScramCredential>,
    user: String,
}

enum State {
    ReceiveClientFirst,
    ReceiveClientFinal(Box<Exchange>),
    Complete,
    Failed,
}

impl State {
    /// Java's name of the state.
    fn name(&self) -> &'static str {
        match self {
            State::ReceiveClientFirst => "RECEIVE_CLIENT_FIRST_MESSAGE",
            State::ReceiveClientFinal(_) => "RECEIVE_CLIENT_FINAL_MESSAGE",
            State::Complete => "COMPLETE",
            State::Failed => "FAILED",
        }
    }
}

/// One client's SCRAM exchange with this server.
pub struct ScramServer {
    mechanism: ScramMechanism,
    credentials: Arc<ScramCredentials>,
    server_nonce: String,
    state: State,
}

/// Never shows the credential.
impl std::fmt::Debug for ScramServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramServer")
            .field("mechanism", &self.mechanism)
            .field("state", &self.state.name())
            .finish()
    }
}

impl ScramServer {
    /// An exchange against `credentials` (the snapshot current when the client started).
    /// `server_nonce`: fresh randomness, printable ASCII without ',' (see
    /// [`super::messages::java_nonce`] for Java's kind).
    pub fn new(
        mechanism: ScramMechanism,
        credentials: Arc<ScramCredentials>,
        server_nonce: String,
    ) -> ScramServer {
        ScramServer {
            mechanism,
            credentials,
            server_nonce,
            state: State::ReceiveClientFirst,
        }
    }

    pub fn mechanism(&self) -> ScramMechanism {
        self.mechanism
    }

    /// Whether the client has been authenticated.
    pub fn is_complete(&self) -> bool {
        matches!(self.state, State::Complete)
    }

    /// Answers the client's next message. After an error the exchange has failed: any further
    /// message is refused.
    pub fn step(&mut self, client_message: &[u8]) -> Result<ScramStep, ScramError> {
        let state = std::mem::replace(&mut self.state, State::Failed);
        let result = match state {
            State::ReceiveClientFirst => self.client_first(client_message).map(|exchange| {
                let reply = exchange.server_first.to_message().into_bytes();
                self.state = State::ReceiveClientFinal(exchange);
                ScramStep::Challenge(reply)
            }),
            State::ReceiveClientFinal(exchange) => {
                self.client_final(&exchange, client_message).map(|reply| {
                    self.state = State::Complete;
                    ScramStep::Done {
                        reply,
                        user: exchange.user.clone(),
                    }
                })
            }
            ended @ (State::Complete | State::Failed) => {
                let kind = ScramErrorKind::UnexpectedMessage {
                    client: false,
                    state: ended.name(),
                };
                self.state = ended;
                return Err(self.error(kind));
            }
        };
        result.map_err(|kind| self.error(kind))
    }

    fn error(&self, kind: ScramErrorKind) -> ScramError {
        ScramError::new(self.mechanism, kind)
    }

    fn client_first(&self, message: &[u8]) -> Result<Box<Exchange>, ScramErrorKind> {
        let client_first =
            ClientFirst::parse(message).map_err(|reason| ScramErrorKind::MalformedClientFirst {
                text: String::from_utf8_lossy(message).into_owned(),
                reason,
            })?;
        let unsupported: Vec<&str> = client_first
            .extensions
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| *k != "tokenauth")
            .collect();
        if !unsupported.is_empty() {
            // Names only, as Java logs them: a value could be anything.
            tracing::debug!(
                target: "kraftd::sasl",
                "SCRAM extensions {unsupported:?} are not supported and are ignored (supported: tokenauth)"
            );
        }
        let Some(user) = unescape_saslname(&client_first.saslname) else {
            return Err(ScramErrorKind::InvalidSaslName {
                saslname: client_first.saslname.clone(),
            });
        };
        if client_first.token_authenticated() {
            return Err(ScramErrorKind::TokenAuthentication { token_id: user });
        }
        let Some(credential) = self.credentials.get(self.mechanism, &user) else {
            return Err(ScramErrorKind::UnknownUser {
                user,
                mechanism: self.mechanism,
            });
        };
        if !client_first.authzid.is_empty() && client_first.authzid != user {
            return Err(ScramErrorKind::AuthorizationIdMismatch {
                user,
                authzid: client_first.authzid.clone(),
            });
        }
        let minimum = self.mechanism.min_iterations();
        if credential.iterations < minimum {
            return Err(ScramErrorKind::IterationsBelowMinimum {
                user,
                iterations: credential.iterations,
                minimum,
            });
        }
        if !is_valid_nonce(&self.server_nonce) {
            return Err(ScramErrorKind::InvalidServerNonce);
        }
        let server_first = ServerFirst {
            nonce: format!("{}{}", client_first.nonce, self.server_nonce),
            salt: credential.salt.clone(),
            iterations: credential.iterations,
        };
        Ok(Box::new(Exchange {
            client_first,
            server_first,
            credential: Arc::clone(credential),
            user,
        }))
    }

    fn client_final(&self, exchange: &Exchange, message: &[u8]) -> Result<Vec<u8>, ScramErrorKind> {
        let user = || exchange.user.clone();
        let client_final =
            ClientFinal::parse(message).map_err(|reason| ScramErrorKind::MalformedClientFinal {
                user: user(),
                reason,
            })?;
        if client_final.nonce != exchange.server_first.nonce {
            return Err(ScramErrorKind::NonceMismatch { user: user() });
        }
        let credential = &exchange.credential;
        if credential.stored_key.is_empty() {
            return Err(ScramErrorKind::EmptyStoredKey { user: user() });
        }
        let auth = auth_message(
            &exchange.client_first,
            &exchange.server_first,
            &client_final,
        );
        let client_signature = self.mechanism.hmac(&credential.stored_key, auth.as_bytes());
        if client_final.proof.len() != client_signature.len() {
            return Err(ScramErrorKind::ProofLength {
                user: user(),
                expected: client_signature.len(),
                got: client_final.proof.len(),
            });
        }
        let client_key = xor(&client_signature, &client_final.proof);
        if !ct_eq(&self.mechanism.hash(&client_key), &credential.stored_key) {
            return Err(ScramErrorKind::InvalidProof { user: user() });
        }
        if credential.server_key.is_empty() {
            return Err(ScramErrorKind::EmptyStoredKey { user: user() });
        }
        let signature = self.mechanism.hmac(&credential.server_key, auth.as_bytes());
        Ok(ServerFinal::Verifier(signature).to_message().into_bytes())
    }
}
