//! The principal a TLS client certificate maps to, as Kafka's `DefaultKafkaPrincipalBuilder`
//! builds it on an SSL listener: `User:` followed by
//!
//! - `ANONYMOUS` when the client sent no certificate (`ssl.client.auth` `none` or `requested`);
//! - otherwise the certificate's subject as Java's `X500Principal.getName()` prints it
//!   ([`subject_name`], RFC 2253), passed through `ssl.principal.mapping.rules`
//!   ([`PrincipalMapper`], Kafka's `SslPrincipalMapper`).
//!
//! Both halves follow Java 17 and Kafka 4.4 to the character, established against them by the
//! compat test `security::principal_mapping` (Kafka's own classes through
//! `compat/java/PrincipalMappingProbe.java`). Where a Java behaviour cannot be reproduced (regex
//! features the linear-time `regex` crate lacks, see [`rules`]), kraftd refuses the rule at
//! start-up, naming it, rather than map names differently.

mod dn;
mod java_regex;
pub mod rules;
#[cfg(any(test, feature = "testkit"))]
pub mod samples;
#[cfg(test)]
mod tests;

pub use dn::{subject_name, CertificateNameError};
pub use rules::{MapError, MappingRulesError, PrincipalMapper};

use rustls_pki_types::CertificateDer;

/// The name Kafka gives a client that authenticated with no certificate.
pub const ANONYMOUS: &str = "ANONYMOUS";

/// Why a client certificate gives no principal: the connection fails authentication, as it
/// does in Kafka when its principal builder throws.
#[derive(Debug, thiserror::Error)]
pub enum PrincipalError {
    #[error(transparent)]
    Subject(#[from] CertificateNameError),
    #[error(transparent)]
    Mapping(#[from] MapError),
}

/// The name of the `User` principal of a TLS client: [`ANONYMOUS`] without a certificate, else
/// its end-entity certificate's subject through `mapper`.
pub fn principal_name(
    peer: Option<&CertificateDer<'_>>,
    mapper: &PrincipalMapper,
) -> Result<String, PrincipalError> {
    match peer {
        None => Ok(ANONYMOUS.to_string()),
        Some(cert) => Ok(mapper.map(&subject_name(cert)?)?),
    }
}
