//! kraftd: a KRaft controller that speaks Kafka's binary protocol.
//!
//! Modules depend one way: `protocol` and `properties` are leaves; `log` uses `protocol`;
//! `raft` uses `log` and `protocol`; `controller` uses `protocol` and `properties`; `server`
//! joins them all, and nothing uses it.
pub mod controller;
pub mod log;
pub mod properties;
pub mod protocol;
pub mod raft;
pub mod server;

#[cfg(any(test, feature = "testkit"))]
#[doc(hidden)]
pub mod fuzzing;
