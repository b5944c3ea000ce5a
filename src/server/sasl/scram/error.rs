//! Why a SCRAM exchange failed, on either side: what kraftd logs ([`ScramError`]'s `Display`,
//! which names the user and the step and says what to do, never a password, salted password,
//! key or proof), what Java's exception says ([`ScramError::java_text`]), and what the client
//! is told ([`ScramError::reply`]), as Kafka's `SaslServerAuthenticator` tells it.

use super::messages::{Malformed, MessageKind};
use super::ScramMechanism;

/// What a Kafka server sends a client whose SCRAM exchange failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureReply {
    /// Java's mechanism threw a `SaslException`: a SaslAuthenticate response with
    /// SASL_AUTHENTICATION_FAILED and [`invalid_credentials_message`], whatever the cause.
    InvalidCredentials,
    /// Java threw a `SaslAuthenticationException`: SASL_AUTHENTICATION_FAILED with its message.
    Message(String),
    /// Java threw a runtime exception (`IllegalArgumentException`): the connection is closed
    /// without a response.
    CloseConnection,
}

/// `SaslServerAuthenticator`'s text for a `SaslException`: "Authentication failed during
/// authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256" (or "during
/// re-authentication").
pub fn invalid_credentials_message(mechanism: &str, reauthenticating: bool) -> String {
    let during = if reauthenticating {
        "re-authentication"
    } else {
        "authentication"
    };
    format!("Authentication failed during {during} due to invalid credentials with SASL mechanism {mechanism}")
}

/// A failed SCRAM step, server or client side.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} authentication failed: {kind}", mechanism.name())]
pub struct ScramError {
    pub mechanism: ScramMechanism,
    pub kind: ScramErrorKind,
}

/// The first `limit` characters of text a peer sent, quoted and escaped for a log line.
fn shown(text: &str) -> String {
    const LIMIT: usize = 200;
    let mut s: String = text.chars().take(LIMIT).collect();
    if s.len() < text.len() {
        s.push_str("...");
    }
    format!("{s:?}")
}

/// What went wrong. Users and nonces are the client's claims, shown escaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScramErrorKind {
    // --- The server's side (kraftd authenticating a client).
    #[error(
        "the client-first message {} is malformed: {reason}; the client must send \
         n,,n=<user>,r=<nonce> (RFC 5802, without channel binding)", shown(.text)
    )]
    MalformedClientFirst { text: String, reason: Malformed },
    #[error(
        "the user name {} is not a valid saslname; the client must escape ',' as =2C and '=' \
         as =3D", shown(.saslname)
    )]
    InvalidSaslName { saslname: String },
    #[error(
        "the client asked for delegation-token authentication (tokenauth=true) as token {}, \
         which kraftd does not accept on controller listeners; the client must use a user's \
         SCRAM credential instead", shown(.token_id)
    )]
    TokenAuthentication { token_id: String },
    #[error(
        "no {mechanism} credential for user {} in the cluster metadata; create one with \
         kafka-configs --alter --entity-type users --entity-name <user> --add-config \
         '{mechanism}=[password=...]', or have the client use another mechanism",
        shown(.user), mechanism = .mechanism.name()
    )]
    UnknownUser {
        user: String,
        mechanism: ScramMechanism,
    },
    #[error(
        "user {} asked to act as authorization id {}; the client must leave the gs2 header's \
         a= out or equal to its user name", shown(.user), shown(.authzid)
    )]
    AuthorizationIdMismatch { user: String, authzid: String },
    #[error(
        "the stored credential of user {} has {iterations} iterations, below the minimum \
         {minimum}; reset it with kafka-configs --add-config '<mechanism>=[iterations=4096,\
         password=...]'", shown(.user)
    )]
    IterationsBelowMinimum {
        user: String,
        iterations: i32,
        minimum: i32,
    },
    #[error(
        "the stored credential of user {} has an empty StoredKey or ServerKey (Java refuses \
         an empty HMAC key and drops the connection); reset the credential", shown(.user)
    )]
    EmptyStoredKey { user: String },
    #[error(
        "the client-final message of user {} is malformed: {reason} (the message is not shown: \
         it carries the client's proof); the client must send c=biws,r=<nonce>,p=<proof>",
        shown(.user)
    )]
    MalformedClientFinal { user: String, reason: Malformed },
    #[error(
        "the client-final nonce of user {} is not the one the server sent; the client must \
         echo the server-first message's r= exactly", shown(.user)
    )]
    NonceMismatch { user: String },
    #[error(
        "the proof of user {} is {got} bytes where {expected} are needed (Java drops the \
         connection); the client must use the same mechanism for the proof as for the exchange",
        shown(.user)
    )]
    ProofLength {
        user: String,
        expected: usize,
        got: usize,
    },
    #[error(
        "the proof of user {} does not match the stored credential: a wrong password, or a \
         credential changed since; the client should check its password", shown(.user)
    )]
    InvalidProof { user: String },
    #[error("the server nonce is empty or not printable ASCII without ','; this is a kraftd bug")]
    InvalidServerNonce,
    /// A message after the exchange completed or failed.
    #[error(
        "a message arrived in state {state}, after the exchange ended; the peer must start a \
         new exchange"
    )]
    UnexpectedMessage { client: bool, state: &'static str },

    // --- The client's side (kraftd authenticating to a server).
    #[error(
        "the server's {} message {} is malformed: {reason}; the server does not speak SCRAM \
         as Kafka does", .message.java_name(), shown(.text)
    )]
    MalformedServerMessage {
        message: MessageKind,
        text: String,
        reason: Malformed,
    },
    #[error(
        "the server's nonce does not start with the client's; the server is not answering \
         this exchange (or is not a SCRAM server)"
    )]
    ServerNonceMismatch,
    #[error(
        "the server asked for {iterations} iterations, below the minimum {minimum}; the \
         credential on the server must be reset with more iterations"
    )]
    ServerIterationsBelowMinimum { iterations: i32, minimum: i32 },
    #[error(
        "the server asked for {iterations} iterations, above Kafka's maximum {maximum}: \
         refused rather than spend that much CPU; the credential on the server must be reset \
         with fewer iterations"
    )]
    ServerIterationsAboveMaximum { iterations: i32, maximum: i32 },
    #[error("the client's password is empty (Java refuses an empty HMAC key); configure one")]
    EmptyPassword,
    #[error(
        "the server answered with error {}; check the user and password configured for \
         this client", shown(.error)
    )]
    ServerError { error: String },
    #[error(
        "the server's signature does not match the password: the server does not hold this \
         user's credential (or is not the server it claims to be)"
    )]
    InvalidServerSignature,
}

impl ScramError {
    pub fn new(mechanism: ScramMechanism, kind: ScramErrorKind) -> ScramError {
        ScramError { mechanism, kind }
    }

    /// What the client is told, as a Kafka 4.4 server tells it.
    pub fn reply(&self) -> FailureReply {
        use ScramErrorKind::*;
        match &self.kind {
            AuthorizationIdMismatch { .. } => FailureReply::Message(
                "Authentication failed: Client requested an authorization id that is different \
                 from username"
                    .to_string(),
            ),
            ProofLength { .. }
            | EmptyStoredKey { .. }
            | InvalidServerNonce
            | UnexpectedMessage { .. } => FailureReply::CloseConnection,
            _ => FailureReply::InvalidCredentials,
        }
    }

    /// The message of the exception Java's `ScramSaslServer` or `ScramSaslClient` throws in the
    /// same case (`None` where kraftd refuses and Java goes on). Java's text for a malformed
    /// client-final message ends with the message, proof included: here it ends with
    /// `[withheld]`.
    pub fn java_text(&self) -> Option<String> {
        use ScramErrorKind::*;
        let mechanism = self.mechanism.java_constant();
        Some(match &self.kind {
            MalformedClientFirst { text, .. } => {
                format!("Invalid SCRAM client first message format: {text}")
            }
            InvalidSaslName { .. } => {
                "Authentication failed: Credentials could not be obtained".to_string()
            }
            TokenAuthentication { token_id } => {
                format!("Token Authentication failed: Invalid tokenId : {token_id}")
            }
            UnknownUser { .. } => "Authentication failed: Invalid user credentials".to_string(),
            AuthorizationIdMismatch { .. } => {
                "Authentication failed: Client requested an authorization id that is different \
                 from username"
                    .to_string()
            }
            IterationsBelowMinimum {
                iterations,
                minimum,
                ..
            } => format!("Iterations {iterations} is less than the minimum {minimum} for {mechanism}"),
            EmptyStoredKey { .. } | EmptyPassword => "Empty key".to_string(),
            MalformedClientFinal { .. } => {
                "Invalid SCRAM client final message format: [withheld]".to_string()
            }
            NonceMismatch { .. } => "Invalid client nonce in the final client message.".to_string(),
            ProofLength { .. } => "Argument arrays must be of the same length".to_string(),
            InvalidProof { .. } => "Invalid client credentials".to_string(),
            InvalidServerNonce | ServerIterationsAboveMaximum { .. } => return None,
            UnexpectedMessage { client, state } => format!(
                "Unexpected challenge in Sasl {} state {state}",
                if *client { "client" } else { "server" }
            ),
            MalformedServerMessage {
                message,
                text,
                reason,
            } => match reason {
                Malformed::IterationsOverflow => {
                    "Invalid SCRAM server first message format: invalid iterations".to_string()
                }
                Malformed::IterationsNotPositive(i) => {
                    format!("Invalid SCRAM server first message format: invalid iterations {i}")
                }
                Malformed::Grammar(_) => {
                    format!("Invalid SCRAM {} message format: {text}", message.java_name())
                }
            },
            ServerNonceMismatch => {
                "Invalid server nonce: does not start with client nonce".to_string()
            }
            ServerIterationsBelowMinimum {
                iterations,
                minimum,
            } => format!(
                "Requested iterations {iterations} is less than the minimum {minimum} for {mechanism}"
            ),
            ServerError { error } => {
                format!("Sasl authentication using {mechanism} failed with error: {error}")
            }
            InvalidServerSignature => "Invalid server signature in server final message".to_string(),
        })
    }
}
