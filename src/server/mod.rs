//! The runtime: sockets, the node loop, and the CLI glue. Nothing depends on this module.

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// the process's clock, tasks, threads and files live here.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

pub mod api;
pub mod cli;
pub mod config;
pub mod context;
pub mod disk_space;
pub mod doctor;
pub mod http;
pub mod image_snapshot;
pub mod limits;
pub mod listener;
#[cfg(test)]
mod listener_tests;
pub mod metrics;
pub mod node;
pub mod peer;
pub mod raft_wire;
pub(crate) mod run;
pub mod sasl;
pub mod tls;

pub use run::run;
