//! The node runtime: one loop (on its own thread) owns the raft core and the metadata log; the
//! tokio side carries inbound requests to it and its outbound requests to peers.
//!
//! * `event`: the loop's single input channel and the handle other tasks hold.
//! * `runner`: the loop itself: events in, `Raft::step`, actions out.
//! * `clock`: wall-clock milliseconds that never go back.
//! * `metrics_sample`: what the loop measures for `/metrics` and the probes, and a scrape's
//!   sample.
//! * `activation`: what a new leader reads from its log to activate (the records are the
//!   quorum controller's decision).
//! * `registration`, `registration_flow`: this node's own controller registration (KIP-919).
//! * `quorum_access`: raft as the quorum controller reads it.
//! * `pipeline`, `purgatory`: the quorum controller (`controller::quorum`) driven: its
//!   decisions proposed, applied at once and answered once committed; parked replies fail with
//!   NOT_CONTROLLER when leadership is lost.
//! * `snapshots`: committed batches into the controller, and when to snapshot its image.
//! * `snapshot_job`: a snapshot of the image written on a thread of its own.
//! * `settings`: Kafka's property names to the node's settings.
//! * `storage`: the raft core's log and quorum-state traits over the files of `src/log`.

mod activation;
mod clock;
pub mod event;
mod metrics_sample;
mod pipeline;
mod purgatory;
mod quorum_access;
mod registration;
mod registration_flow;
mod runner;
mod settings;
mod snapshot_job;
mod snapshots;
pub mod storage;
mod turn_budget;

pub use event::{AppendError, Appended, LeaderView, NodeHandle, NodeStopped};
pub use quorum_access::NodeQuorum;
pub use runner::{start, NodeSettings};
pub use settings::{log_config, node_settings};
