//! The state machine's side of the leader (Kafka's `RaftClient.prepareAppend` and listener
//! notifications): proposals fenced by the epoch they were decided in, the accumulator's batches
//! reaching the log, and the leadership announced to the state machine.

use super::accumulator::Proposed;
use super::log::RaftLog;
use super::node::{Action, ProposeError, Raft};
use super::quorum_state::QuorumStateStore;
use super::role::Role;
use super::time::Instant;
use super::types::{Epoch, NodeId};

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// Proposes data records decided in `epoch` (Kafka's `prepareAppend`): they get their
    /// offsets now and reach the log as one batch (with other proposals) once the linger
    /// expires or the batch is full; with a zero linger, at the next `step`. They are committed once the
    /// HW passes `last_offset` in `epoch`. The caller then drains `take_actions()` and calls
    /// `step` by `next_deadline()`.
    pub fn propose(
        &mut self,
        now: Instant,
        epoch: Epoch,
        records: Vec<Vec<u8>>,
    ) -> Result<Proposed, ProposeError> {
        if let Some(why) = &self.fatal {
            return Err(ProposeError::Stopped(why.clone()));
        }
        if records.is_empty() {
            return Err(ProposeError::Empty);
        }
        let current = self.epoch();
        if epoch != current {
            return Err(ProposeError::EpochMismatch {
                proposed: epoch,
                current,
            });
        }
        let (epoch, leader) = (self.epoch(), self.leader_id());
        let Role::Leader(l) = &mut self.role else {
            return Err(ProposeError::NotLeader { epoch, leader });
        };
        // Even with a zero linger the batch waits for the next `step`, so that every proposal
        // of one turn of the driver lands in one batch (Kafka's raft thread drains whatever
        // accumulated since its last poll), not one batch and one fsync per proposal.
        let proposed = l.accumulator.append(now, records)?;
        if let Role::Leader(l) = &self.role {
            self.next_deadline = self
                .next_deadline
                .min(l.accumulator.drain_deadline().max(now));
        }
        Ok(proposed)
    }

    /// Appends the accumulator's batches that are due (full, or past the linger).
    pub(super) fn append_due_proposals(&mut self, now: Instant) {
        let Role::Leader(l) = &mut self.role else {
            return;
        };
        let batches = l.accumulator.drain(now);
        self.append_batches(now, batches);
    }

    /// Appends every batch of the accumulator (control batches; leadership ending).
    pub(super) fn append_all_proposals(&mut self, now: Instant) {
        let Role::Leader(l) = &mut self.role else {
            return;
        };
        let batches = l.accumulator.drain_all();
        self.append_batches(now, batches);
    }

    fn append_batches(&mut self, now: Instant, batches: Vec<super::log::Batch>) {
        for batch in batches {
            if !self.append_as_leader(now, batch) {
                return;
            }
        }
    }

    /// The leadership as the state machine may see it: a local leader only once its epoch start
    /// is committed (before that, as after resigning, no leader it could write through).
    fn leader_for_state_machine(&self) -> Option<NodeId> {
        match &self.role {
            Role::Leader(l) => self
                .high_watermark
                .filter(|hw| *hw > l.epoch_start_offset)
                .and(self.local_id()),
            Role::Resigned(_) => None,
            role => role.leader_id(self.local_id()),
        }
    }

    /// Emits `Action::LeaderChange` when the state machine's view of the leadership changed.
    pub(super) fn maybe_announce_leader(&mut self) {
        let view = (self.epoch(), self.leader_for_state_machine());
        if self.announced_leader == Some(view) {
            return;
        }
        self.announced_leader = Some(view);
        let (epoch, leader) = view;
        self.out.push(Action::LeaderChange {
            epoch,
            leader,
            local: leader.is_some() && leader == self.local_id(),
        });
    }
}
