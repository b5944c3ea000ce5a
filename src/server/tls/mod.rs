//! TLS on controller listeners and on every connection kraftd opens (rustls, with the `ring`
//! provider), configured by Kafka's `ssl.*` keys.
//!
//! - `keystore`: key and trust stores as Kafka reads them: JKS, PKCS12 and PEM, from files or
//!   inline PEM values;
//! - `principal`: the principal a client certificate maps to: its subject as Java's
//!   `X500Principal` names it, through `ssl.principal.mapping.rules`.

pub mod keystore;
pub mod principal;
