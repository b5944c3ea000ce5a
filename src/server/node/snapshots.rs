//! When to snapshot, and what a snapshot holds.
//!
//! Kafka's controller snapshots its metadata image once `metadata.log.max.record.bytes.between.
//! snapshots` bytes of committed batches have been applied since the last one, or
//! `metadata.log.max.snapshot.interval.ms` has passed with new data. Committed batches are
//! replayed into the controller here. Until snapshots are written from its image, a snapshot
//! holds every data record of the previous snapshot and of the log up to its end offset, minus
//! NoOpRecords and transaction markers (which no image keeps, and which Java's snapshots never
//! hold); replaying it gives the same image as replaying the log.

use std::time::Duration;

use tracing::{info, warn};

use crate::controller::{Controller, ReplayError};
use crate::raft::{
    FatalError, Instant, LogError, Offset, OffsetAndEpoch, QuorumStateStore, Raft, RaftLog,
    Records, SnapshotError,
};

/// Why applying newly committed batches must stop the node.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    #[error(transparent)]
    Log(#[from] LogError),
    /// A committed batch could not be read (the reader names the offset and the file).
    #[error(transparent)]
    Read(#[from] FatalError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

impl CommitError {
    /// The node's fatal error for it.
    pub fn fatal(&self) -> FatalError {
        match self {
            CommitError::Log(e) => FatalError::storage(e),
            CommitError::Read(e) => e.clone(),
            CommitError::Replay(e) => FatalError::CorruptRecord {
                offset: e.offset,
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
    /// The timestamp of the last counted batch (that snapshot's last contained log timestamp).
    last_timestamp: i64,
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
            last_timestamp: 0,
            last_snapshot_at: now,
        }
    }

    /// Counts newly committed batches (replaying each into the controller, if any) and
    /// snapshots when due. Returns the snapshot made.
    pub fn on_commit<L: RaftLog, S: QuorumStateStore>(
        &mut self,
        raft: &mut Raft<L, S>,
        now: Instant,
        mut controller: Option<&mut Controller>,
    ) -> Result<Option<OffsetAndEpoch>, CommitError> {
        if raft.high_watermark().is_none() {
            return Ok(None);
        }
        if raft.committed_batches(self.counted_to).is_err() {
            // The log now starts at a snapshot (ours or the leader's): count from there.
            self.bytes_since = 0;
            match raft.latest_snapshot_reader()? {
                Some(snapshot) => {
                    self.counted_to = snapshot.id().offset;
                    self.last_epoch = snapshot.id().epoch;
                    self.last_timestamp = snapshot.last_contained_log_timestamp();
                    // Streamed: the first unreadable batch ends the records and halts.
                    let mut unreadable = None;
                    let records = snapshot
                        .records()
                        .map_while(|r| r.map_err(|e| unreadable = Some(e)).ok());
                    if let Some(c) = controller.as_deref_mut() {
                        c.load_snapshot(self.counted_to - 1, records)?;
                    }
                    if let Some(e) = unreadable {
                        return Err(e.into());
                    }
                }
                None => self.counted_to = raft.log().start_offset(),
            }
        }
        let Ok(batches) = raft.committed_batches(self.counted_to) else {
            return Ok(None);
        };
        for b in batches {
            let b = b?;
            if !b.is_control() {
                self.bytes_since += b.size_in_bytes() as u64;
            }
            match (&b.records, controller.as_deref_mut()) {
                (Records::Data(values), Some(c)) => {
                    c.replay_committed_batch(b.base_offset, values)?
                }
                (_, Some(c)) => c.skip_committed_control_batch(b.last_offset()),
                (_, None) => {}
            }
            self.last_epoch = b.epoch;
            self.last_timestamp = b.append_time;
            self.counted_to = b.next_offset();
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
        match write_state_at(raft, id, self.last_timestamp)? {
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

/// Writes the state below `id.offset` as a snapshot, streamed batch by batch: the data records
/// of the latest snapshot, then the committed batches' up to there, NoOps left out. A fault
/// reading or writing them is the outer `Err` (the node must halt; the dropped writer deletes
/// its partial file); the inner result is the snapshot's.
fn write_state_at<L: RaftLog, S: QuorumStateStore>(
    raft: &mut Raft<L, S>,
    id: OffsetAndEpoch,
    last_contained_log_timestamp: i64,
) -> Result<Result<(), SnapshotError>, CommitError> {
    let mut writer = match raft.snapshot_writer(id, last_contained_log_timestamp) {
        Ok(w) => w,
        Err(e) => return Ok(Err(e)),
    };
    let mut from = raft.log().start_offset();
    if let Some(snapshot) = raft
        .latest_snapshot_reader()?
        .filter(|s| s.id().offset <= id.offset)
    {
        from = from.max(snapshot.id().offset);
        for batch in snapshot {
            if let Records::Data(values) = batch?.records {
                if let Err(e) = writer.append(values.iter().filter(|v| !is_stateless(v))) {
                    return refused_or_fault(e);
                }
            }
        }
    }
    let Ok(batches) = raft.committed_batches(from) else {
        return Ok(Err(SnapshotError::BelowLogStart {
            offset: from,
            start: raft.log().start_offset(),
        }));
    };
    for b in batches {
        let b = b?;
        if b.next_offset() > id.offset {
            break;
        }
        if let Records::Data(values) = b.records {
            if let Err(e) = writer.append(values.iter().filter(|v| !is_stateless(v))) {
                return refused_or_fault(e);
            }
        }
    }
    Ok(raft.freeze_snapshot(writer))
}

/// A writer's refusal is the snapshot's (it is abandoned); a fault is the node's.
fn refused_or_fault(e: LogError) -> Result<Result<(), SnapshotError>, CommitError> {
    if e.is_fault() {
        Err(e.into())
    } else {
        Ok(Err(SnapshotError::Log(e)))
    }
}
