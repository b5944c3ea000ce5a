//! kraftd: a KRaft controller that speaks Kafka's binary protocol.
//!
//! Modules depend one way: `protocol` is the leaf; `server` uses everything and nothing uses it.
pub mod protocol;
pub mod server;
