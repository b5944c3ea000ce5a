//! TLS on controller listeners and on every connection kraftd opens (rustls, with the `ring`
//! provider), configured by Kafka's `ssl.*` keys.
//!
//! - `settings`: one listener's `ssl.*` keys, read and checked as Kafka reads them;
//! - `keystore`: key and trust stores as Kafka reads them: JKS, PKCS12 and PEM, from files or
//!   inline PEM values;
//! - `context`: the rustls configurations a listener accepts and dials with; `live`: the same,
//!   rebuilt when a store file changes; `accept`: a server-side handshake and its principal;
//!   `timeouts`: handshake timeouts logged without flooding;
//! - `principal`: the principal a client certificate maps to: its subject as Java's
//!   `X500Principal` names it, through `ssl.principal.mapping.rules`.

mod accept;
mod context;
pub mod keystore;
mod live;
pub mod principal;
mod settings;
mod timeouts;

pub use accept::{accept, AcceptError, HANDSHAKE_TIMEOUT};
pub use context::{java_cipher_suites, ListenerTls, TlsError};
pub use live::{LiveTls, RELOAD_CHECK_INTERVAL};
pub(crate) use settings::listener_value;
pub use settings::{
    listener_prefix, ClientAuth, KeyStoreSource, TlsSettings, TlsVersion, TrustStoreSource,
    TLS_KEYS,
};
pub use timeouts::{TimeoutLog, QUIET_PERIOD};
