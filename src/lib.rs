//! kraftd: a KRaft controller that speaks Kafka's binary protocol.
//!
//! Modules depend one way: `protocol` is the leaf; `server` uses everything and nothing uses it.
pub mod log;
pub mod properties {
    //! Java `.properties` parsing, shared by configuration and `meta.properties`.
    pub use crate::server::config::properties::*;
}
pub mod protocol;
pub mod server;

#[doc(hidden)]
pub mod fuzzing;
