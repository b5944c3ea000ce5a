//! The persisted election state (Kafka's `ElectionState`, the `quorum-state` file) and the
//! store the core writes it through.

use std::fmt;

use super::types::{Epoch, NodeId, ReplicaKey};
use crate::protocol::codec::Uuid;
use crate::protocol::messages::quorum_state_data::{QuorumStateData, Voter};

/// What `quorum-state` holds: the epoch, the leader if known, the vote cast in this epoch.
/// Kafka 4.x may hold both a leader and a vote of the same epoch (the vote is kept when the
/// node learns the leader, which prevents voting twice in an epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectionState {
    pub epoch: Epoch,
    pub leader_id: Option<NodeId>,
    pub voted_key: Option<ReplicaKey>,
}

impl ElectionState {
    pub fn unknown(epoch: Epoch) -> Self {
        ElectionState {
            epoch,
            leader_id: None,
            voted_key: None,
        }
    }

    /// The `QuorumStateData` Kafka writes: data version 0 at kraft.version 0 (with the
    /// informational voter ids), 1 at kraft.version 1 (with the voted directory id).
    pub fn to_quorum_state_data(&self, voter_ids: &[NodeId]) -> QuorumStateData {
        QuorumStateData {
            cluster_id: String::new(),
            leader_id: self.leader_id.unwrap_or(-1),
            leader_epoch: self.epoch,
            voted_id: self.voted_key.map_or(-1, |k| k.id),
            voted_directory_id: self
                .voted_key
                .and_then(|k| k.directory_id)
                .unwrap_or(Uuid::ZERO),
            applied_offset: 0,
            current_voters: Some(
                voter_ids
                    .iter()
                    .map(|&id| Voter {
                        voter_id: id,
                        ..Voter::default()
                    })
                    .collect(),
            ),
            ..QuorumStateData::default()
        }
    }

    pub fn from_quorum_state_data(d: &QuorumStateData) -> Self {
        ElectionState {
            epoch: d.leader_epoch,
            leader_id: (d.leader_id >= 0).then_some(d.leader_id),
            voted_key: (d.voted_id >= 0)
                .then(|| ReplicaKey::from_wire(d.voted_id, d.voted_directory_id)),
        }
    }
}

impl fmt::Display for ElectionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "epoch={}", self.epoch)?;
        if let Some(l) = self.leader_id {
            write!(f, " leader={l}")?;
        }
        if let Some(v) = self.voted_key {
            write!(f, " voted={v}")?;
        }
        Ok(())
    }
}

/// Why the election state could not be made durable. The core halts on it (Kafka's raft
/// thread dies on a failed quorum-state write): acting on a state that a restart would not
/// find could vote twice in an epoch.
#[derive(Debug, thiserror::Error)]
#[error("could not write the election state {state}: {source}")]
pub struct QuorumStateError {
    pub state: ElectionState,
    #[source]
    pub source: crate::log::LogError,
}

impl QuorumStateError {
    /// The file the write concerned, when known.
    pub fn file(&self) -> Option<&std::path::Path> {
        self.source.path()
    }

    /// The OS error of an I/O failure.
    pub fn os_error(&self) -> Option<&std::io::Error> {
        match &self.source {
            crate::log::LogError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Where the election state lives (Kafka's `QuorumStateStore`). The core calls `write` inside
/// every durable transition *before* it changes its role or emits anything, so a vote or a
/// candidacy is on disk before any message that depends on it leaves.
pub trait QuorumStateStore {
    /// The last state written, `None` if there is none (a missing file: epoch 0, no leader).
    fn read(&self) -> Option<ElectionState>;
    /// Replaces the state durably (tmp file, fsync, atomic rename) before returning. The file's
    /// data version follows `kraft_version` (0 -> v0, 1 -> v1). On an error nothing may be
    /// assumed durable; the core halts.
    fn write(&mut self, state: &ElectionState, kraft_version: i16) -> Result<(), QuorumStateError>;
}

/// In-memory store for tests and the simulation; survives `MemLog::crash` (writes are durable).
#[derive(Debug, Clone, Default)]
pub struct MemQuorumStateStore {
    state: Option<ElectionState>,
    /// Every write, oldest first (tests assert on it).
    pub history: Vec<ElectionState>,
}

impl MemQuorumStateStore {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn with(state: ElectionState) -> Self {
        MemQuorumStateStore {
            state: Some(state),
            history: Vec::new(),
        }
    }
}

impl QuorumStateStore for MemQuorumStateStore {
    fn read(&self) -> Option<ElectionState> {
        self.state.clone()
    }
    fn write(
        &mut self,
        state: &ElectionState,
        _kraft_version: i16,
    ) -> Result<(), QuorumStateError> {
        self.state = Some(state.clone());
        self.history.push(state.clone());
        Ok(())
    }
}
