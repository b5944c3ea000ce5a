//! SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka 4.4 speaks them:
//! [`ScramServer`] authenticates a client against the credentials in the controller's
//! metadata image ([`ScramCredentials`], published by the node loop through
//! `ServerContext::scram_credentials`), [`ScramClient`] authenticates kraftd to a server.
//!
//! Both follow Kafka's `ScramSaslServer` and `ScramSaslClient` step for step (checked against
//! them by `compat/tests/security/scram_sasl.rs`): the message grammar of `ScramMessages`
//! ([`messages`]), the AuthMessage Java rebuilds from parsed parts, its checks in its order,
//! and what a client is told when one fails ([`ScramError::reply`]). Randomness (nonces) is
//! always an argument. Passwords, salted passwords, keys and proofs never appear in an error,
//! a log line or a `Debug` output.

pub mod client;
pub mod credentials;
pub mod error;
pub mod messages;
pub mod server;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod transcript_tests;

pub use crate::controller::scram::keys::ScramMechanism;
pub use client::ScramClient;
pub use credentials::{credential_for, ScramCredentials};
pub use error::{invalid_credentials_message, FailureReply, ScramError, ScramErrorKind};
pub use messages::java_nonce;
pub use server::{ScramServer, ScramStep};

use messages::{ClientFinal, ClientFirst, ServerFirst};

/// `ScramFormatter.authMessage`: client-first-bare, server-first and client-final without
/// proof, joined by commas, each as Java rebuilds it from its parsed parts.
fn auth_message(first: &ClientFirst, server: &ServerFirst, last: &ClientFinal) -> String {
    format!(
        "{},{},{}",
        first.bare(),
        server.to_message(),
        last.without_proof()
    )
}

/// `ScramFormatter.xor` of two arrays of the same length (the callers check it).
fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

/// `MessageDigest.isEqual`: equal length and bytes, in time independent of where they differ.
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
