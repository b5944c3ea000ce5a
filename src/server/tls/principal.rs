//! The principal a client certificate maps to (interface in progress):
//! - `subject_name(&CertificateDer) -> String`: the subject as Java's
//!   `X500Principal.getName()` (RFC 2253) gives it, which is what Kafka's SSL principal builder
//!   maps;
//! - `PrincipalMapper::parse(ssl.principal.mapping.rules)` and `PrincipalMapper::map(name)`:
//!   Kafka's `SslPrincipalMapper`.
