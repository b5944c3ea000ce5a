//! The KRaft state machine: Kafka 4.4's raft layer (`KafkaRaftClient` and friends), sans-IO.
//!
//! * Inputs: requests, responses, send failures and the passing of time (`Raft::step`), plus
//!   proposals (`Raft::propose(now, epoch, records)`, fenced by the epoch they were decided in)
//!   and snapshot calls from the state machine.
//! * Outputs: `Action`s — messages to send, replies, commits (`Committed`), the leadership as
//!   the state machine may see it (`LeaderChange`), snapshot loads.
//! * The state machine reads back through `Raft::committed_batches(from)` (`committed.rs`) and
//!   writes and reads snapshots as streams of batches through `SnapshotWriter`/`SnapshotReader`
//!   (`snapshot_stream.rs`, `snapshot_writer.rs`, `snapshot_reader.rs`).
//! * Storage: the synchronous `RaftLog` and `QuorumStateStore` traits; quorum-state is written
//!   inside every durable transition before anything else happens.
//! * Time is `time::Instant` passed in; random choices come from `time::Randomness` in the
//!   config: a seeded `time::Rng`, or fixed choices for scripted tests.
//!
//! Roles (`role.rs`) are one type each; every role change goes through `transition.rs`.
//! Concerns are split by file: elections (`election.rs`), BeginQuorumEpoch/EndQuorumEpoch
//! (`quorum_epoch.rs`), replication (`fetch_leader.rs`, `fetch_follower.rs`), snapshots
//! (`snapshot.rs`), DescribeQuorum (`describe.rs`), proposals and the leader's append accumulator
//! (`propose.rs`, `accumulator.rs`). `convert/` maps the domain messages of
//! `msg.rs` to and from the generated wire types. `sim/` is the deterministic cluster harness
//! used by the scenario transcripts and the randomized simulation.

pub mod accumulator;
mod committed;
mod common;
pub mod config;
pub mod convert;
mod describe;
mod early_election;
mod election;
pub mod fatal;
mod fetch_follower;
mod fetch_leader;
mod invariants;
pub mod leader;
pub mod log;
mod log_core;
mod log_retention;
pub mod mem_log;
pub mod metrics;
pub mod msg;
mod node;
mod propose;
mod quorum_epoch;
pub mod quorum_state;
pub mod reconfig;
pub mod requests;
pub mod role;
#[cfg(any(test, feature = "testkit"))]
pub mod sim;
mod snapshot;
mod snapshot_reader;
mod snapshot_stream;
mod snapshot_writer;
pub mod time;
mod transition;
pub mod types;
pub mod voters;

#[cfg(test)]
mod tests;

pub use accumulator::{AccumulateError, AppendLimits, Proposed};
pub use committed::{CommittedBatches, CommittedReadError};
pub use config::RaftConfig;
pub use fatal::FatalError;
pub use fetch_leader::ParkedFetch;
pub use invariants::InvariantViolation;
pub use log::{
    Batch, ControlRecord, Encoded, LogError, RaftLog, Records, SnapshotHeader, ValidOffsetAndEpoch,
};
pub use mem_log::{LogInspect, MemLog};
pub use msg::{ApiKind, CorrelationId, Request, RequestId, Response};
pub use node::{Action, Input, ProposeError, Raft};
pub use quorum_state::{ElectionState, MemQuorumStateStore, QuorumStateError, QuorumStateStore};
pub use role::Role;
pub use snapshot::SnapshotError;
pub use snapshot_reader::SnapshotReader;
pub use snapshot_writer::SnapshotWriter;
pub use time::{Instant, Randomness, Rng};
pub use types::{
    Endpoints, Epoch, HostPort, NodeId, Offset, OffsetAndEpoch, ReplicaKey, VoterNode, VoterSet,
};
