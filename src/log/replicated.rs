//! The narrow, synchronous interface the raft layer uses to reach the metadata log, shaped
//! after Kafka's `RaftLog` (`ReplicatedLog` before 4.x).
//!
//! Offsets are Kafka offsets; `epoch` is a leader epoch. Appends take whole, already-built v2
//! batches (the raft layer builds them with their final base offset and partition leader
//! epoch); reads return whole batches. Nothing is durable until [`ReplicatedLog::flush`]
//! returns: a crash loses the unflushed tail, never anything below
//! [`ReplicatedLog::flushed_offset`].

pub use super::snapshot::OffsetAndEpoch;
pub use super::snapshot_io::{SnapshotReader, SnapshotWriter};

use super::error::{LogError, Result};

/// The offsets an append wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogAppendInfo {
    pub first_offset: i64,
    pub last_offset: i64,
}

/// Which records a read may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Only batches entirely below the high watermark.
    Committed,
    /// Everything up to the log end offset.
    Uncommitted,
}

/// What a read returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFetchInfo {
    /// Whole batches, starting with the one holding the requested offset; empty at the end.
    pub records: Vec<u8>,
    /// The offset that was asked for.
    pub start_offset: i64,
}

/// Kafka's `ValidOffsetAndEpoch`: how a follower's fetch position relates to this log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidOffsetAndEpoch {
    /// The position is on this log.
    Valid(OffsetAndEpoch),
    /// The follower diverged: truncate to (at most) this end offset and epoch.
    Diverging(OffsetAndEpoch),
    /// The position is below the log start: fetch this snapshot instead.
    Snapshot(OffsetAndEpoch),
}

/// The metadata log as the raft layer sees it. Implemented by [`super::FileLog`] (the
/// `__cluster_metadata-0` directory) and [`super::MemoryLog`] (tests; loses its unflushed tail
/// on `crash()`).
pub trait ReplicatedLog {
    /// Appends batches written by this leader in `epoch`: each batch's partition leader epoch
    /// must be `epoch`, offsets must continue at the end offset. Call
    /// [`ReplicatedLog::initialize_leader_epoch`] first when the epoch starts.
    fn append_as_leader(&mut self, batches: &[u8], epoch: i32) -> Result<LogAppendInfo>;

    /// Appends batches fetched from the leader of `epoch`: epochs ≤ `epoch` and never below the
    /// log's latest epoch; offsets must continue at the end offset.
    fn append_as_follower(&mut self, batches: &[u8], epoch: i32) -> Result<LogAppendInfo>;

    /// Whole batches from the one holding `start_offset`: at most `max_bytes` of them but at
    /// least one (if any). Out of range below the log start or above the end offset.
    fn read(
        &self,
        start_offset: i64,
        isolation: Isolation,
        max_bytes: usize,
    ) -> Result<LogFetchInfo>;

    /// The epoch of the last batch, or of the latest snapshot for an empty log (0 if none).
    fn last_fetched_epoch(&self) -> i32;

    /// The largest epoch ≤ `epoch` and the offset where it ends (Kafka's `endOffsetForEpoch`).
    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch;

    /// The epoch of the record at `offset`: from the leader-epoch cache for offsets in the log,
    /// the earliest snapshot's epoch for the offset just below it; `None` otherwise.
    fn epoch_for_offset(&self, offset: i64) -> Option<i32>;

    /// The log end offset: the offset the next appended record gets.
    fn end_offset(&self) -> i64;

    /// Every offset below this one survives a crash.
    fn flushed_offset(&self) -> i64;

    fn high_watermark(&self) -> i64;

    /// Sets the high watermark (clamped to [log start, end offset]). Kept in memory only.
    fn update_high_watermark(&mut self, offset: i64);

    /// The first offset still in the log (the latest retained snapshot covers what is below).
    fn start_offset(&self) -> i64;

    /// Records that `epoch` starts at the current end offset (a new leader, before its first
    /// append).
    fn initialize_leader_epoch(&mut self, epoch: i32) -> Result<()>;

    /// Removes everything from `offset` on. Refused below the high watermark.
    fn truncate_to(&mut self, offset: i64) -> Result<()>;

    /// If the latest snapshot is ahead of the log, empties the log and restarts it at the
    /// snapshot's end offset. Returns whether it did.
    fn truncate_to_latest_snapshot(&mut self) -> Result<bool>;

    /// Moves the log start to `snapshot_id`'s end offset (which must be a retained snapshot,
    /// above the log start, at most the latest snapshot and the high watermark), deletes the
    /// segments entirely below it and forgets older snapshots. Returns whether segments went.
    fn delete_before_snapshot(&mut self, snapshot_id: OffsetAndEpoch) -> Result<bool>;

    /// Makes everything appended durable.
    fn flush(&mut self) -> Result<()>;

    /// Applies `metadata.max.retention.bytes` / `.ms` with `now_ms` as the current time.
    fn maybe_clean(&mut self, now_ms: i64) -> Result<bool>;

    /// Starts a snapshot the log can validate (end offset within [log start, high watermark], a
    /// batch boundary, a valid position). `None` if below the log start or it already exists.
    fn create_new_snapshot(&mut self, id: OffsetAndEpoch) -> Result<Option<SnapshotWriter>>;

    /// Starts a snapshot without checks (one downloaded from the leader). `None` if it exists.
    fn create_new_snapshot_unchecked(
        &mut self,
        id: OffsetAndEpoch,
    ) -> Result<Option<SnapshotWriter>>;

    /// Validates, makes durable and publishes a snapshot (Java's `freeze` + `onSnapshotFrozen`).
    fn freeze_snapshot(&mut self, writer: SnapshotWriter) -> Result<()>;

    fn read_snapshot(&self, id: OffsetAndEpoch) -> Result<Option<SnapshotReader>>;

    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch>;

    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch>;

    fn latest_snapshot(&self) -> Result<Option<SnapshotReader>> {
        match self.latest_snapshot_id() {
            Some(id) => self.read_snapshot(id),
            None => Ok(None),
        }
    }

    /// Kafka's `validateOffsetAndEpoch` for a follower fetching at (`offset`, `epoch`).
    fn validate_offset_and_epoch(&self, offset: i64, epoch: i32) -> Result<ValidOffsetAndEpoch> {
        let start = self.start_offset();
        if start == 0 && offset == 0 {
            return Ok(ValidOffsetAndEpoch::Valid(OffsetAndEpoch::new(0, 0)));
        }
        if let Some(earliest) = self.earliest_snapshot_id() {
            if offset < start
                || (offset == start && epoch != earliest.epoch)
                || epoch < earliest.epoch
            {
                let latest = self.latest_snapshot_id().ok_or_else(|| {
                    LogError::InvalidState(format!(
                        "log start offset {start} is above zero but there is no snapshot"
                    ))
                })?;
                return Ok(ValidOffsetAndEpoch::Snapshot(latest));
            }
        }
        let end = self.end_offset_for_epoch(epoch);
        if end.epoch != epoch || end.offset < offset {
            Ok(ValidOffsetAndEpoch::Diverging(end))
        } else {
            Ok(ValidOffsetAndEpoch::Valid(OffsetAndEpoch::new(
                offset, epoch,
            )))
        }
    }

    /// Truncates to where a leader said this log diverges (Kafka's `truncateToEndOffset`);
    /// returns the offset truncated to.
    fn truncate_to_end_offset(&mut self, end: OffsetAndEpoch) -> Result<i64> {
        let offset = if end.epoch == 0 {
            end.offset.min(self.end_offset())
        } else {
            let local = self.end_offset_for_epoch(end.epoch);
            if local.epoch == end.epoch {
                local.offset.min(end.offset)
            } else {
                local.offset
            }
        };
        self.truncate_to(offset)?;
        Ok(offset)
    }
}
