//! Raft as the quorum controller reads it while deciding ([`QuorumAccess`]), and the one
//! thing it asks of raft: a kraft.version upgrade.

use crate::controller::features::update::{KraftVersionAccess, RaftRefusal};
use crate::controller::quorum::QuorumAccess;
use crate::protocol::records::Offset;
use crate::raft::{Instant, QuorumStateStore, Raft, RaftLog};

/// Raft as the quorum controller reads it while deciding, at `now` (the node loop's, and the
/// controller simulation's over its in-memory raft).
pub struct NodeQuorum<'a, L: RaftLog, S: QuorumStateStore> {
    pub raft: &'a mut Raft<L, S>,
    pub now: Instant,
    pub shutting_down: bool,
}

impl<L: RaftLog, S: QuorumStateStore> KraftVersionAccess for NodeQuorum<'_, L, S> {
    fn kraft_version(&self) -> i16 {
        self.raft.kraft_version()
    }

    fn upgrade_kraft_version(
        &mut self,
        level: i16,
        validate_only: bool,
    ) -> Result<(), RaftRefusal> {
        let epoch = self.raft.epoch();
        self.raft
            .upgrade_kraft_version(self.now, epoch, level, validate_only)
            .map(|_| ())
            .map_err(|e| RaftRefusal {
                code: e.error_code(),
                message: e.to_string(),
            })
    }
}

impl<L: RaftLog, S: QuorumStateStore> QuorumAccess for NodeQuorum<'_, L, S> {
    fn epoch(&self) -> i32 {
        self.raft.epoch()
    }

    fn leader_id(&self) -> Option<i32> {
        self.raft.leader_id()
    }

    fn is_leader(&self) -> bool {
        self.raft.is_leader()
    }

    fn shutting_down(&self) -> bool {
        self.shutting_down
    }

    fn next_proposal_offset(&self) -> Option<Offset> {
        self.raft.next_proposal_offset()
    }

    fn voter_ids(&self) -> Vec<i32> {
        self.raft.voters().ids().collect()
    }
}
