//! When to snapshot, and what a snapshot holds until the controller's image exists.
//!
//! Kafka's controller snapshots its metadata image once `metadata.log.max.record.bytes.between.
//! snapshots` bytes of committed batches have been applied since the last one, or
//! `metadata.log.max.snapshot.interval.ms` has passed with new data. Until kraftd's controller
//! replays records into an image, the state is the committed records themselves: a snapshot
//! holds every data record of the previous snapshot and of the log up to its end offset, minus
//! NoOpRecords and transaction markers (which no image keeps, and which Java's snapshots never
//! hold). Replaying it gives the same state as replaying the log.

use std::time::Duration;

use tracing::{info, warn};

use super::replay::{Replay, ReplayError};
use crate::raft::{
    FatalError, Instant, LogError, Offset, OffsetAndEpoch, QuorumStateStore, Raft, RaftLog,
    Records, SnapshotError,
};

/// Why applying newly committed batches must stop the node.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

impl CommitError {
    /// The node's fatal error for it.
    pub fn fatal(&self) -> FatalError {
        match self {
            CommitError::Log(e) => FatalError::storage(e),
            CommitError::Replay(e) => FatalError::CorruptRecord {
                offset: e.offset(),
                detail: e.to_string(),
            },
        }
    }
}

/// Record types that carry no state: `NoOpRecord` (20) and the transaction markers
/// `BeginTransactionRecord` (23), `EndTransactionRecord` (24), `AbortTransactionRecord` (25).
const STATELESS_RECORD_TYPES: [u8; 4] = [20, 23, 24, 25];

/// Is `frame` (a metadata record value: frame version 1, then the type as a one-byte varint
/// for every type below 128) a record without state?
fn is_stateless(frame: &[u8]) -> bool {
    frame.len() >= 2 && frame[0] == 1 && STATELESS_RECORD_TYPES.contains(&frame[1])
}

pub struct SnapshotPolicy {
    max_bytes: u64,
    max_interval: Option<Duration>,
    /// Committed batches below this offset have been counted.
    counted_to: Offset,
    /// Bytes of committed data batches since the last snapshot.
    bytes_since: u64,
    /// The epoch of the last counted batch (the epoch of a snapshot ending at `counted_to`).
    last_epoch: i32,
    last_snapshot_at: Instant,
}

impl SnapshotPolicy {
    pub fn new(max_bytes: u64, max_interval: Option<Duration>, now: Instant) -> SnapshotPolicy {
        SnapshotPolicy {
            max_bytes,
            max_interval,
            counted_to: 0,
            bytes_since: 0,
            last_epoch: 0,
            last_snapshot_at: now,
        }
    }

    /// Counts newly committed batches (replaying each into `replay`) and snapshots when due.
    /// Returns the snapshot made.
    pub fn on_commit<L: RaftLog, S: QuorumStateStore>(
        &mut self,
        raft: &mut Raft<L, S>,
        now: Instant,
        replay: &mut Replay,
    ) -> Result<Option<OffsetAndEpoch>, CommitError> {
        let Some(hw) = raft.high_watermark() else {
            return Ok(None);
        };
        let log = raft.log();
        if self.counted_to < log.start_offset() {
            // The log now starts at a snapshot (ours or the leader's): count from there.
            self.counted_to = log.start_offset();
            self.bytes_since = 0;
            self.last_epoch = log.latest_snapshot_id().map_or(0, |s| s.epoch);
            if let Some(id) = log.latest_snapshot_id() {
                if let Some(s) = log.read_snapshot(id)? {
                    replay.load_snapshot(&s.data, s.id.offset)?;
                }
            }
        }
        while self.counted_to < hw {
            let batches = log.read(self.counted_to, 1 << 20)?;
            let mut progressed = false;
            for b in batches {
                if b.next_offset() > hw {
                    break;
                }
                if !b.is_control() {
                    self.bytes_since += b.size_in_bytes() as u64;
                }
                replay.apply_batch(&b)?;
                self.last_epoch = b.epoch;
                self.counted_to = b.next_offset();
                progressed = true;
            }
            if !progressed {
                break;
            }
        }
        let due_bytes = self.bytes_since >= self.max_bytes;
        let due_time = self.bytes_since > 0
            && self
                .max_interval
                .is_some_and(|i| now >= self.last_snapshot_at + i);
        if !(due_bytes || due_time) {
            return Ok(None);
        }
        let id = OffsetAndEpoch::new(self.counted_to, self.last_epoch);
        if raft
            .log()
            .latest_snapshot_id()
            .is_some_and(|s| s.offset >= id.offset)
        {
            self.bytes_since = 0;
            return Ok(None);
        }
        let (data, timestamp) = state_at(raft.log(), id.offset)?;
        match raft.create_snapshot(id, timestamp, data) {
            Ok(()) => {
                info!(
                    target: "kraftd::raft",
                    "created snapshot {id} after {} bytes of committed batches",
                    self.bytes_since
                );
                self.bytes_since = 0;
                self.last_snapshot_at = now;
                raft.maybe_clean(now);
                Ok(Some(id))
            }
            Err(SnapshotError::Log(e)) if e.is_fault() => Err(e.into()),
            // The core has emitted its fatal action; the node loop halts on it.
            Err(SnapshotError::Halted) => Ok(None),
            Err(e) => {
                warn!(target: "kraftd::raft", "could not create snapshot {id}: {e}");
                self.bytes_since = 0;
                Ok(None)
            }
        }
    }
}

/// The data records of the latest snapshot followed by the log's up to `end`, NoOps left out,
/// and the timestamp of the last batch included.
fn state_at<L: RaftLog>(log: &L, end: Offset) -> Result<(Vec<Vec<u8>>, i64), LogError> {
    let mut data = Vec::new();
    let mut timestamp = 0;
    let mut from = log.start_offset();
    let latest = match log.latest_snapshot_id() {
        Some(id) => log.read_snapshot(id)?,
        None => None,
    };
    if let Some(snapshot) = latest {
        if snapshot.id.offset <= end {
            data = snapshot.data;
            timestamp = snapshot.last_contained_log_timestamp;
            from = from.max(snapshot.id.offset);
        }
    }
    while from < end {
        let batches = log.read(from, 1 << 20)?;
        if batches.is_empty() {
            break;
        }
        for b in batches {
            if b.next_offset() > end {
                return Ok((data, timestamp));
            }
            timestamp = b.append_time;
            from = b.next_offset();
            if let Records::Data(values) = b.records {
                data.extend(values.into_iter().filter(|v| !is_stateless(v)));
            }
        }
    }
    Ok((data, timestamp))
}
