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
        let log = raft.log();
        if self.next_offset < log.start_offset() {
            let latest = log.latest_snapshot_id();
            if let Some(s) = latest.and_then(|id| RaftLog::read_snapshot(log, id).ok().flatten()) {
                self.data = s.data;
                self.next_offset = s.id.offset;
                self.last_epoch = s.id.epoch;
                self.last_timestamp = s.last_contained_log_timestamp;
                self.snapshots_loaded += 1;
                out.loaded_snapshot = Some(s.id);
            }
        }
        let Some(hw) = raft.high_watermark() else {
            return out;
        };
        while self.next_offset < hw {
            // A log fault here is the node's too: it has halted, and the batch is read again
            // after its restart.
            let Ok(batches) = RaftLog::read(raft.log(), self.next_offset, 64 * 1024) else {
                break;
            };
            let mut progressed = false;
            for b in batches {
                if b.last_offset() >= hw || b.base_offset != self.next_offset {
                    break;
                }
                if let Records::Data(values) = &b.records {
                    self.data.extend(values.iter().cloned());
                }
                self.next_offset = b.next_offset();
                self.last_epoch = b.epoch;
                self.last_timestamp = b.append_time;
                self.batches_since_snapshot += 1;
                out.batches += 1;
                progressed = true;
            }
            if !progressed {
                break;
            }
        }
        if snapshot_every > 0
            && self.batches_since_snapshot >= snapshot_every
            && self.next_offset > 0
        {
            let id = OffsetAndEpoch::new(self.next_offset, self.last_epoch);
            if raft.log().snapshot_size(id).is_none()
                && raft
                    .create_snapshot(id, self.last_timestamp, self.data.clone())
                    .is_ok()
            {
                self.batches_since_snapshot = 0;
            }
        }
        out
    }
}
