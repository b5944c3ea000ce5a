//! The persisted election state and the store the core writes it through: one trait
//! (`log::quorum_state::QuorumStateStore`, Kafka's `QuorumStateStore`) with the file store in
//! `src/log` and the memory store here, for tests and the simulation.

pub use crate::log::quorum_state::{ElectionState, QuorumStateError, QuorumStateStore};

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
    fn read_election_state(&self) -> Result<Option<ElectionState>, QuorumStateError> {
        Ok(self.state.clone())
    }
    fn write_election_state(
        &mut self,
        state: &ElectionState,
        _kraft_version: i16,
    ) -> Result<(), QuorumStateError> {
        self.state = Some(state.clone());
        self.history.push(state.clone());
        Ok(())
    }
}
