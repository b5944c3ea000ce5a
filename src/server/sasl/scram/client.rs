//! The client side of a SCRAM exchange, as Kafka 4.4's `ScramSaslClient` takes it (no
//! extensions: kraftd authenticates as a user, never with a delegation token):
//!
//! 1. client-first: `n,,n=<escaped user>,r=<client nonce>`;
//! 2. server-first: parsed; its nonce must start with the client's; fewer than 4096 iterations
//!    refused (as Java), and more than 16384 too (kraftd's own bound, which Java lacks: Kafka
//!    never stores more, and a server asking for more would have the client burn CPU); the
//!    password salted (`Hi`), and the client-final message `c=biws,r=<nonce>,p=<proof>` sent;
//! 3. server-final: an `e=` error refused; the `v=` ServerSignature checked in constant time.

use super::error::{ScramError, ScramErrorKind};
use super::messages::{
    escape_saslname, ClientFinal, ClientFirst, Malformed, MessageKind, ServerFinal, ServerFirst,
};
use super::{auth_message, ct_eq, xor, ScramMechanism};
use crate::server::config::Password;

#[derive(Clone)]
enum State {
    /// Before the server-first message (the client-first one is sent first, in any case).
    ReceiveServerFirst,
    ReceiveServerFinal(Box<Sent>),
    Complete,
    Failed,
}

impl State {
    /// Java's name of the state.
    fn name(&self) -> &'static str {
        match self {
            State::ReceiveServerFirst => "RECEIVE_SERVER_FIRST_MESSAGE",
            State::ReceiveServerFinal(_) => "RECEIVE_SERVER_FINAL_MESSAGE",
            State::Complete => "COMPLETE",
            State::Failed => "FAILED",
        }
    }
}

/// What the expected server signature is computed from (no password: the AuthMessage and the
/// ServerKey the salted password gives).
#[derive(Clone)]
struct Sent {
    server_signature: Vec<u8>,
}

/// kraftd authenticating to a SCRAM server as `user`.
#[derive(Clone)]
pub struct ScramClient {
    mechanism: ScramMechanism,
    client_first: ClientFirst,
    password: Password,
    state: State,
}

/// Never shows the password.
impl std::fmt::Debug for ScramClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramClient")
            .field("mechanism", &self.mechanism)
            .field("client_first", &self.client_first)
            .field("state", &self.state.name())
            .finish()
    }
}

impl ScramClient {
    /// An exchange as `user` with `password`; `client_nonce`: fresh randomness, printable
    /// ASCII without ',' (see [`super::messages::java_nonce`]).
    pub fn new(
        mechanism: ScramMechanism,
        user: &str,
        password: Password,
        client_nonce: String,
    ) -> ScramClient {
        ScramClient {
            mechanism,
            client_first: ClientFirst {
                authzid: String::new(),
                saslname: escape_saslname(user),
                nonce: client_nonce,
                extensions: Vec::new(),
            },
            password,
            state: State::ReceiveServerFirst,
        }
    }

    fn error(&self, kind: ScramErrorKind) -> ScramError {
        ScramError::new(self.mechanism, kind)
    }

    /// Whether the server has proven it holds the user's credential.
    pub fn is_complete(&self) -> bool {
        matches!(self.state, State::Complete)
    }

    /// Whether the server-first message has been answered, so the server-final one is next.
    pub fn awaits_server_final(&self) -> bool {
        matches!(self.state, State::ReceiveServerFinal(_))
    }

    /// The client-first message (`n,,n=<user>,r=<nonce>`), the same bytes however often asked.
    pub fn first_message(&self) -> Vec<u8> {
        self.client_first.to_message().into_bytes()
    }

    fn unexpected(&self) -> ScramError {
        self.error(ScramErrorKind::UnexpectedMessage {
            client: true,
            state: self.state.name(),
        })
    }

    /// Takes the server-first message; answers the client-final message.
    pub fn handle_server_first(&mut self, message: &[u8]) -> Result<Vec<u8>, ScramError> {
        if !matches!(self.state, State::ReceiveServerFirst) {
            return Err(self.unexpected());
        }
        self.state = State::Failed;
        let (reply, sent) = self
            .server_first(message)
            .map_err(|kind| self.error(kind))?;
        self.state = State::ReceiveServerFinal(Box::new(sent));
        Ok(reply)
    }

    fn server_first(&self, message: &[u8]) -> Result<(Vec<u8>, Sent), ScramErrorKind> {
        let server_first = ServerFirst::parse(message)
            .map_err(|reason| malformed(MessageKind::ServerFirst, message, reason))?;
        if !server_first.nonce.starts_with(&self.client_first.nonce) {
            return Err(ScramErrorKind::ServerNonceMismatch);
        }
        let (minimum, maximum) = (
            self.mechanism.min_iterations(),
            self.mechanism.max_iterations(),
        );
        let iterations = server_first.iterations;
        if iterations < minimum {
            return Err(ScramErrorKind::ServerIterationsBelowMinimum {
                iterations,
                minimum,
            });
        }
        if iterations > maximum {
            return Err(ScramErrorKind::ServerIterationsAboveMaximum {
                iterations,
                maximum,
            });
        }
        let salted = self
            .mechanism
            .hi(
                self.password.expose().as_bytes(),
                &server_first.salt,
                iterations.unsigned_abs(),
            )
            .map_err(|_| ScramErrorKind::EmptyPassword)?;
        let mut client_final = ClientFinal {
            channel_binding: b"n,,".to_vec(),
            nonce: server_first.nonce.clone(),
            proof: Vec::new(),
        };
        let auth = auth_message(&self.client_first, &server_first, &client_final);
        let client_key = self.mechanism.hmac(&salted, b"Client Key");
        let stored_key = self.mechanism.hash(&client_key);
        let client_signature = self.mechanism.hmac(&stored_key, auth.as_bytes());
        client_final.proof = xor(&client_key, &client_signature);
        let server_key = self.mechanism.hmac(&salted, b"Server Key");
        let sent = Sent {
            server_signature: self.mechanism.hmac(&server_key, auth.as_bytes()),
        };
        Ok((client_final.to_message().into_bytes(), sent))
    }

    /// Takes the server-final message: `Ok` once the server's signature is the expected one.
    pub fn handle_server_final(&mut self, message: &[u8]) -> Result<(), ScramError> {
        let state = std::mem::replace(&mut self.state, State::Failed);
        let State::ReceiveServerFinal(sent) = state else {
            self.state = state;
            return Err(self.unexpected());
        };
        let outcome = match ServerFinal::parse(message) {
            Err(reason) => Err(malformed(MessageKind::ServerFinal, message, reason)),
            Ok(ServerFinal::Error(error)) => Err(ScramErrorKind::ServerError { error }),
            Ok(ServerFinal::Verifier(v)) if ct_eq(&v, &sent.server_signature) => Ok(()),
            Ok(ServerFinal::Verifier(_)) => Err(ScramErrorKind::InvalidServerSignature),
        };
        outcome.map_err(|kind| self.error(kind))?;
        self.state = State::Complete;
        Ok(())
    }
}

fn malformed(message: MessageKind, bytes: &[u8], reason: Malformed) -> ScramErrorKind {
    ScramErrorKind::MalformedServerMessage {
        message,
        text: String::from_utf8_lossy(bytes).into_owned(),
        reason,
    }
}
