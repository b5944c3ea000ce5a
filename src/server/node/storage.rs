//! The raft core's storage over the real metadata log directory, wired: `raft::RaftLog` is
//! implemented once, for `log::LogCore`, so the core runs on the [`FileLog`] of
//! `__cluster_metadata-0` itself; `log::QuorumStateStore` has one file implementation,
//! [`FileQuorumStateStore`], on its `quorum-state`.
//!
//! A failed quorum-state write is fatal, as in Kafka: the store returns it and the raft core
//! halts through its fatal action (one error line, then the node stops).

use crate::log::{FileLog, FileQuorumStateStore, QuorumStateError, QuorumStateStore};
use crate::raft::NodeId;

/// The quorum-state store beside `log`, read once so that an unreadable file refuses the start
/// as Java's does (starting from epoch 0 could vote twice in an epoch). Data version 0 records
/// `static_voter_ids` (`controller.quorum.voters`) as its informational voters.
pub fn open_quorum_state(
    log: &FileLog,
    static_voter_ids: Vec<NodeId>,
) -> Result<FileQuorumStateStore, QuorumStateError> {
    let store = FileQuorumStateStore::new(log.dir(), static_voter_ids);
    store.read_election_state()?;
    Ok(store)
}

#[cfg(test)]
#[path = "storage_tests.rs"]
mod storage_tests;
