//! The controller load generator of issue #14: a controller's clients, simulated over its
//! binary protocol with kraftd's own codecs, as brokers and admin clients talk to it.
//!
//! - [`fleet`]: N brokers registering and heartbeating (W3; and the brokers of W2 and churn);
//! - [`topics`]: CreateTopics storms (W2);
//! - [`churn`]: AlterPartition ISR shrink/expand from the partition leaders;
//! - [`client`]: the channel to the active controller they share; [`stats`]: percentiles and
//!   /proc readings.
//!
//! Used by the driver `compat/tests/controller_bench/mod.rs` (`make bench-controller`) and by the
//! generator's own tests (`compat/tests/load_generator.rs`), which start the quorums.

pub mod churn;
pub mod client;
pub mod error;
pub mod fleet;
pub mod stats;
pub mod topics;
