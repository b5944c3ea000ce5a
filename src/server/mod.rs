//! The runtime: sockets, the node loop, and the CLI glue. Nothing depends on this module.
pub mod api;
pub mod cli;
pub mod config;
pub mod context;
pub mod listener;
pub mod node;
pub mod peer;
pub(crate) mod run;

pub use run::run;
