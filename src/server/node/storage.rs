//! The raft core's storage over the real metadata log directory: [`DiskLog`] is the
//! [`FileLog`] of `__cluster_metadata-0` (the raft trait is implemented once, for the log core),
//! [`DiskQuorumStateStore`] is `raft::QuorumStateStore` over its `quorum-state` file.
//!
//! A failed quorum-state write is fatal, as in Kafka: the store returns it and the raft core
//! halts through its fatal action (one error line, then the node stops).

use std::path::Path;

use crate::log::quorum_state::{
    ElectionState as FileElectionState, FileQuorumStateStore, QuorumStateStore as _,
    ReplicaKey as FileReplicaKey,
};
use crate::log::{FileLog, LogError as StoreError};
pub use crate::raft::convert::snapshot::{decode_snapshot, encode_snapshot};
use crate::raft::quorum_state::{ElectionState, QuorumStateError, QuorumStateStore};
use crate::raft::types::{NodeId, ReplicaKey};

/// The raft core's log over the file-backed metadata log: `raft::RaftLog` is implemented once,
/// for `log::LogCore`, so this is the file log itself.
pub type DiskLog = FileLog;

/// `raft::QuorumStateStore` over `__cluster_metadata-0/quorum-state`, in Java's format: data
/// version 0 at kraft.version 0 (with the static voter ids as `currentVoters`, and no voted
/// directory id, as Java drops it there), 1 at kraft.version 1. Writes are atomic and durable
/// (tmp, fsync, rename, fsync the directory); a failed write is fatal, as in Kafka.
#[derive(Debug)]
pub struct DiskQuorumStateStore {
    file: FileQuorumStateStore,
    static_voter_ids: Vec<NodeId>,
    /// The last state read or written (what `read` answers without touching the disk).
    current: Option<ElectionState>,
}

impl DiskQuorumStateStore {
    /// Reads the existing file (Java's or kraftd's). An unreadable file is an error: starting
    /// from epoch 0 could vote twice in an epoch.
    pub fn open(
        file: FileQuorumStateStore,
        static_voter_ids: Vec<NodeId>,
    ) -> Result<DiskQuorumStateStore, StoreError> {
        let current = file.read()?.map(|f| ElectionState {
            epoch: f.state.epoch,
            leader_id: f.state.leader_id,
            voted_key: f
                .state
                .voted_key
                .map(|k| ReplicaKey::new(k.id, k.directory_id)),
        });
        Ok(DiskQuorumStateStore {
            file,
            static_voter_ids,
            current,
        })
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

impl QuorumStateStore for DiskQuorumStateStore {
    fn read(&self) -> Option<ElectionState> {
        self.current.clone()
    }

    fn write(&mut self, state: &ElectionState, kraft_version: i16) -> Result<(), QuorumStateError> {
        let data_version = if kraft_version >= 1 { 1 } else { 0 };
        let file_state = FileElectionState {
            epoch: state.epoch,
            leader_id: state.leader_id,
            voted_key: state.voted_key.map(|k| FileReplicaKey {
                id: k.id,
                directory_id: k.directory_id.filter(|_| data_version == 1),
            }),
            voters: if data_version == 0 {
                self.static_voter_ids.clone()
            } else {
                Vec::new()
            },
        };
        self.file
            .write(&file_state, data_version)
            .map_err(|source| QuorumStateError {
                state: state.clone(),
                source,
            })?;
        self.current = Some(state.clone());
        Ok(())
    }
}

#[cfg(test)]
#[path = "storage_tests.rs"]
mod storage_tests;
