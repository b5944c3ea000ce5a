//! The simulation's replicated state machine: an append-only list of unique values (Kafka's
//! `ReplicatedCounter` in spirit). It applies committed batches, loads snapshots when it falls
//! behind the log start, and takes snapshots every few batches.

use crate::raft::log::{RaftLog, Records};
use crate::raft::mem_log::MemLog;
use crate::raft::node::Raft;
use crate::raft::quorum_state::MemQuorumStateStore;
use crate::raft::types::{Epoch, Offset, OffsetAndEpoch};

pub type SimRaft = Raft<MemLog, MemQuorumStateStore>;

#[derive(Debug, Clone, Default)]
pub struct SimStateMachine {
    /// The next offset to apply. Invariant: every offset below it is committed and applied.
    pub next_offset: Offset,
    /// Epoch and timestamp of the last applied batch (snapshot ids).
    pub last_epoch: Epoch,
    pub last_timestamp: i64,
    /// Every applied data value, in order (snapshot contents).
    pub data: Vec<Vec<u8>>,
    batches_since_snapshot: usize,
    /// Snapshots loaded (for invariants and transcripts).
    pub snapshots_loaded: u64,
    /// The leader epoch in which this state machine applied past the epoch start offset.
    pub claimed_epoch: Option<Epoch>,
}

/// What one apply pass did.
#[derive(Debug, Default)]
pub struct Applied {
    pub loaded_snapshot: Option<OffsetAndEpoch>,
    pub batches: usize,
}

impl SimStateMachine {
    /// Applies everything committed (below the HW); loads the latest snapshot first when the log
    /// no longer holds the next offset. Takes a snapshot every `snapshot_every` batches (0: never).
    pub fn catch_up(&mut self, raft: &mut SimRaft, snapshot_every: usize) -> Applied {
        let mut out = Applied::default();
        if raft.committed_batches(self.next_offset).is_err() {
            // A log fault here is the node's too: the batch is read again after its restart.
            if let Ok(Some(s)) = raft.latest_snapshot_reader() {
                let (id, timestamp) = (s.id(), s.last_contained_log_timestamp());
                if let Ok(data) = s.records().collect() {
                    self.next_offset = id.offset;
                    self.last_epoch = id.epoch;
                    self.last_timestamp = timestamp;
                    self.snapshots_loaded += 1;
                    out.loaded_snapshot = Some(id);
                    self.data = data;
                }
            }
        }
        if let Ok(batches) = raft.committed_batches(self.next_offset) {
            // A read fault ends the pass; the batch is read again later.
            for b in batches.map_while(Result::ok) {
                if b.base_offset != self.next_offset {
                    break;
                }
                self.next_offset = b.next_offset();
                self.last_epoch = b.epoch;
                self.last_timestamp = b.append_time;
                if let Records::Data(values) = b.records {
                    self.data.extend(values);
                }
                self.batches_since_snapshot += 1;
                out.batches += 1;
            }
        }
        if snapshot_every > 0
            && self.batches_since_snapshot >= snapshot_every
            && self.next_offset > 0
        {
            let id = OffsetAndEpoch::new(self.next_offset, self.last_epoch);
            if raft.log().snapshot_size(id).is_none() {
                if let Ok(mut writer) = raft.snapshot_writer(id, self.last_timestamp) {
                    if writer.append(&self.data).is_ok() && raft.freeze_snapshot(writer).is_ok() {
                        self.batches_since_snapshot = 0;
                    }
                }
            }
        }
        out
    }
}
