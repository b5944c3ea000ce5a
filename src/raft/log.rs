//! The narrow synchronous log the raft core needs, shaped after Kafka's `ReplicatedLog`
//! (`RaftLog` in Kafka 4.4), and the entry type it stores.
//!
//! The one log trait of the project: the raft core reaches `src/log` only through it, and it is
//! implemented once, for `log::LogCore` (src/raft/log_core.rs). Kafka's algorithms over the log
//! (`validateOffsetAndEpoch`, `truncateToEndOffset`) are provided methods here.

use std::fmt;

use super::snapshot_reader::SnapshotReader;
use super::snapshot_writer::SnapshotWriter;
use super::types::{Epoch, Offset, OffsetAndEpoch};
use crate::log::fsync_latency::FsyncLatency;
use crate::protocol::messages::k_raft_version_record::KRaftVersionRecord;
use crate::protocol::messages::leader_change_message::LeaderChangeMessage;
use crate::protocol::messages::snapshot_footer_record::SnapshotFooterRecord;
use crate::protocol::messages::snapshot_header_record::SnapshotHeaderRecord;
use crate::protocol::messages::voters_record::VotersRecord;

/// A KRaft control record (control batch key types 2-6), as Kafka's generated messages.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlRecord {
    LeaderChange(LeaderChangeMessage),
    SnapshotHeader(SnapshotHeaderRecord),
    SnapshotFooter(SnapshotFooterRecord),
    KRaftVersion(KRaftVersionRecord),
    Voters(VotersRecord),
}

/// The records of one batch: all control or all data (Kafka never mixes them).
#[derive(Debug, Clone, PartialEq)]
pub enum Records {
    Control(Vec<ControlRecord>),
    /// Opaque data record values (the metadata serde's frames; the raft layer never parses them).
    Data(Vec<Vec<u8>>),
}

/// One record batch: offsets, epoch and records. This is the raft core's log entry: typed
/// records, plus (when it came from disk or the wire) the exact v2 bytes it was decoded from.
///
/// Invariant: at least one record; offsets `base_offset..=last_offset()` are contiguous; when
/// `encoded` is set, its bytes decode to exactly these fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub base_offset: Offset,
    /// The batch's `PartitionLeaderEpoch`: the epoch of the leader that wrote it.
    pub epoch: Epoch,
    /// Batch timestamp (ms), shared by every record.
    pub append_time: i64,
    pub records: Records,
    /// The v2 bytes this batch was read from, so that it is stored and forwarded byte for byte
    /// as its leader wrote it (Java's compression and attributes included).
    pub encoded: Encoded,
}

/// A cache of a batch's v2 encoding. It is not part of the batch's identity: two batches with
/// the same offsets, epoch and records are equal whatever their encodings.
#[derive(Clone, Default)]
pub struct Encoded(pub Option<std::sync::Arc<[u8]>>);

impl Encoded {
    pub fn bytes(&self) -> Option<&[u8]> {
        self.0.as_deref()
    }
}

impl PartialEq for Encoded {
    fn eq(&self, _: &Encoded) -> bool {
        true
    }
}

impl fmt::Debug for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(b) => write!(f, "Encoded({} bytes)", b.len()),
            None => write!(f, "Encoded(none)"),
        }
    }
}

impl Batch {
    /// Does this control batch change the voter set?
    pub fn has_voters_record(&self) -> bool {
        matches!(&self.records, Records::Control(r)
            if r.iter().any(|c| matches!(c, ControlRecord::Voters(_))))
    }

    pub fn record_count(&self) -> usize {
        match &self.records {
            Records::Control(r) => r.len(),
            Records::Data(r) => r.len(),
        }
    }
    pub fn last_offset(&self) -> Offset {
        self.base_offset + self.record_count() as Offset - 1
    }
    pub fn next_offset(&self) -> Offset {
        self.base_offset + self.record_count() as Offset
    }
    pub fn is_control(&self) -> bool {
        matches!(self.records, Records::Control(_))
    }
    /// The v2 size: exact when the encoding is known, else 61 header bytes plus ~8 bytes of
    /// framing and the value per record.
    pub fn size_in_bytes(&self) -> usize {
        if let Some(b) = self.encoded.bytes() {
            return b.len();
        }
        61 + match &self.records {
            Records::Control(r) => r.len() * 48,
            Records::Data(r) => r.iter().map(|v| v.len() + 8).sum(),
        }
    }
}

impl fmt::Display for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.records {
            Records::Control(r) => {
                let names: Vec<&str> = r
                    .iter()
                    .map(|c| match c {
                        ControlRecord::LeaderChange(_) => "LeaderChange",
                        ControlRecord::SnapshotHeader(_) => "SnapshotHeader",
                        ControlRecord::SnapshotFooter(_) => "SnapshotFooter",
                        ControlRecord::KRaftVersion(_) => "KRaftVersion",
                        ControlRecord::Voters(_) => "Voters",
                    })
                    .collect();
                names.join("+")
            }
            Records::Data(r) => format!("data x{}", r.len()),
        };
        write!(
            f,
            "[{}..{} e{} {}]",
            self.base_offset,
            self.last_offset(),
            self.epoch,
            kind
        )
    }
}

/// What a snapshot's header batch says. On disk a snapshot is Kafka's checkpoint: a header
/// control batch (SnapshotHeader, then KRaftVersion and VotersRecord when kraft.version >= 1),
/// data batches, a footer batch; it is written and read as a stream of batches
/// (`SnapshotWriter`, `SnapshotReader`).
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotHeader {
    /// (end offset, epoch): every record with offset < end offset is included; the epoch is that
    /// of the record at end offset − 1.
    pub id: OffsetAndEpoch,
    pub last_contained_log_timestamp: i64,
    /// kraft.version as of end offset − 1.
    pub kraft_version: i16,
    /// The voter set as of end offset − 1, when kraft.version >= 1 and one exists.
    pub voters: Option<VotersRecord>,
}

/// Kafka's `ValidOffsetAndEpoch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidOffsetAndEpoch {
    Valid(OffsetAndEpoch),
    /// The fetcher must truncate to (at most) this end offset of this epoch.
    Diverging(OffsetAndEpoch),
    /// The fetcher must fetch this (latest) snapshot.
    Snapshot(OffsetAndEpoch),
}

/// Why a log operation failed: a refusal (the caller's input breaks a rule of the log; the
/// log is unchanged) or a fault (storage failed or holds bytes that do not decode; the node must
/// stop, as Kafka halts on a storage error).
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("append at offset {got} but the log end offset is {expected}")]
    NonContiguous { expected: Offset, got: Offset },
    #[error("append of epoch {got} after epoch {last}")]
    EpochRegression { last: Epoch, got: Epoch },
    #[error("empty batch")]
    EmptyBatch,
    #[error("snapshot {0} already exists")]
    SnapshotExists(OffsetAndEpoch),
    #[error("no snapshot download is in progress")]
    NoDownload,
    #[error("the downloaded bytes of snapshot {id} are not that snapshot: {reason}")]
    NotTheSnapshot { id: OffsetAndEpoch, reason: String },
    /// Kafka's `RecordBatchTooLargeException`: one append larger than a log segment.
    #[error("an append of {size} bytes exceeds the segment size of {segment_bytes} bytes")]
    LargerThanSegment { size: usize, segment_bytes: u64 },
    /// The log refused batches the raft core built or received (CRC, size, epoch rules).
    #[error("the metadata log refused an append: {0}")]
    Refused(crate::log::LogError),
    /// A batch stored below the end offset does not decode: the log is corrupt there.
    #[error("the batch at offset {offset} in {} does not decode: {reason}; the metadata log is corrupt, restore it from a replica", file.display())]
    UndecodableBatch {
        offset: Offset,
        file: std::path::PathBuf,
        reason: String,
    },
    /// A retained snapshot does not decode.
    #[error("snapshot {id} does not decode: {reason}; delete it so that it is fetched again from the leader")]
    UndecodableSnapshot { id: OffsetAndEpoch, reason: String },
    /// Storage failed (I/O, a corrupt file); `operation` says what the log was doing.
    #[error("could not {operation}: {source}")]
    Storage {
        operation: &'static str,
        source: crate::log::LogError,
    },
}

impl LogError {
    /// A fault (storage or corrupt bytes), as opposed to a refusal of the caller's input.
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            LogError::UndecodableBatch { .. }
                | LogError::UndecodableSnapshot { .. }
                | LogError::Storage { .. }
        )
    }

    /// The file a fault concerns, when one is known.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            LogError::UndecodableBatch { file, .. } => Some(file),
            LogError::Storage { source, .. } | LogError::Refused(source) => source.path(),
            _ => None,
        }
    }

    /// The OS error of an I/O fault.
    pub fn os_error(&self) -> Option<&std::io::Error> {
        match self {
            LogError::Storage {
                source: crate::log::LogError::Io { source, .. },
                ..
            } => Some(source),
            _ => None,
        }
    }
}

/// The metadata log of the raft core, shaped after Kafka's `ReplicatedLog` (`RaftLog` in Kafka
/// 4.4), synchronous. Offsets are Kafka offsets; "the log" is the batches from
/// `start_offset()` to `end_offset()` plus the snapshots. Every operation that touches storage
/// returns its fault as a value ([`LogError::is_fault`]); the raft core turns it into its fatal
/// action.
///
/// Implemented once, for `log::LogCore` over any `log::storage::Storage` (src/raft/log_core.rs):
/// files in production, memory in tests and the simulation (`MemLog`, which loses its unflushed
/// tail on `crash()`).
pub trait RaftLog {
    /// First offset still in the log: 0, or the end offset of the snapshot the log was cleaned
    /// or fully truncated to. Invariant: `start_offset() <= end_offset()`.
    fn start_offset(&self) -> Offset;

    /// Log end offset (LEO): the offset the next appended record gets.
    fn end_offset(&self) -> Offset;

    /// End of the durable prefix: every offset below it survives a crash.
    /// Invariant: `start_offset() <= flushed_end_offset() <= end_offset()`.
    fn flushed_end_offset(&self) -> Offset;

    /// How long the log's fsyncs took, where it has a disk (for metrics; never read by the core).
    fn fsync_latency(&self) -> Option<&FsyncLatency> {
        None
    }

    /// Kafka's `lastFetchedEpoch`: the epoch of the last batch, else the latest snapshot's
    /// epoch, else 0.
    fn last_fetched_epoch(&self) -> Epoch;

    /// Kafka's `endOffsetForEpoch` (leader-epoch cache lookup with the KRaft snapshot wrapper).
    fn end_offset_for_epoch(&self, epoch: Epoch) -> OffsetAndEpoch;

    /// Appends one batch written by the local leader. `batch.base_offset` must equal
    /// `end_offset()` and its epoch must be >= the last batch's. Not durable until `flush`.
    fn append_as_leader(&mut self, batch: Batch) -> Result<(), LogError>;

    /// Appends batches received from the leader: contiguous, the first at `end_offset()`, epochs
    /// non-decreasing. Not durable until `flush`. On a refusal nothing is appended.
    fn append_as_follower(&mut self, batches: Vec<Batch>) -> Result<(), LogError>;

    /// Whole batches from the batch holding `from` (in `[start_offset(), end_offset()]`), in
    /// order, until about `max_bytes`; at least one batch when any exists even if larger.
    fn read(&self, from: Offset, max_bytes: usize) -> Result<Vec<Batch>, LogError>;

    /// What a Fetch response carries from `from`: like `read`, but from one segment only. Java's
    /// log reads stop at a segment's end, and a Java follower refuses (fatally) an append larger
    /// than its segment size.
    fn read_for_fetch(&self, from: Offset, max_bytes: usize) -> Result<Vec<Batch>, LogError>;

    /// Removes every offset >= `offset` (a batch boundary, >= `start_offset()`). The removal is
    /// durable on return. No effect when `offset >= end_offset()`.
    fn truncate_to(&mut self, offset: Offset) -> Result<(), LogError>;

    /// Makes everything appended so far durable.
    fn flush(&mut self) -> Result<(), LogError>;

    /// The control batches from the batch holding `from` (in `[start_offset(), end_offset()]`)
    /// to the log end offset: what Kafka's `KRaftControlRecordStateMachine` scans the log for.
    /// Data batches are stepped over without decoding their records.
    fn read_control_batches(&self, from: Offset) -> Result<Vec<Batch>, LogError>;

    /// Id of the newest snapshot (including the bootstrap checkpoint (0, 0)), if any.
    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch>;

    /// Id of the oldest snapshot still kept, if any.
    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch>;

    /// Opens a frozen snapshot to read it batch by batch, if it exists (its header batch is
    /// read at once).
    fn open_snapshot(&self, id: OffsetAndEpoch) -> Result<Option<SnapshotReader>, LogError>;

    /// Size in bytes of a frozen snapshot, if it exists.
    fn snapshot_size(&self, id: OffsetAndEpoch) -> Option<u64>;

    /// Up to `max_bytes` raw bytes of a frozen snapshot from `position` (< size).
    fn read_snapshot_chunk(
        &self,
        id: OffsetAndEpoch,
        position: u64,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, LogError>;

    /// Starts a snapshot made locally (Kafka's `createNewSnapshotUnchecked` and
    /// `RecordsSnapshotWriter`): its header batch is written at once, records are appended to
    /// the writer in batches of at most the maximum batch size, `freeze_snapshot` makes it
    /// durable; dropping the writer deletes what was written. The raft core has already
    /// checked the id (<= HW, valid for the log, at a batch boundary); an existing id is
    /// refused ([`LogError::SnapshotExists`]).
    fn create_snapshot(&mut self, header: SnapshotHeader) -> Result<SnapshotWriter, LogError>;

    /// Writes the writer's last batch and footer, then makes the snapshot durable and visible
    /// (fsync, rename into place, fsync of the directory).
    fn freeze_snapshot(&mut self, writer: SnapshotWriter) -> Result<(), LogError>;

    /// Starts downloading snapshot `id` from the leader (Kafka's `createNewSnapshotUnchecked`:
    /// a `.part` file), replacing any download in progress.
    fn begin_snapshot_download(&mut self, id: OffsetAndEpoch) -> Result<(), LogError>;

    /// The download in progress and the bytes received so far.
    fn snapshot_download(&self) -> Option<(OffsetAndEpoch, u64)>;

    /// Appends the next chunk of the download in progress.
    fn append_snapshot_download(&mut self, bytes: &[u8]) -> Result<(), LogError>;

    /// Freezes the finished download into a snapshot (fsync + rename); refused
    /// ([`LogError::NotTheSnapshot`]) if the bytes are not a snapshot with the expected id.
    /// Ends the download either way.
    fn complete_snapshot_download(&mut self) -> Result<OffsetAndEpoch, LogError>;

    /// Abandons the download in progress (deletes the `.part`).
    fn abort_snapshot_download(&mut self);

    /// If the latest snapshot is ahead of the log, empties the log and restarts it at the
    /// snapshot's end offset, forgetting older snapshots. Durable on return. Returns whether it
    /// truncated.
    fn truncate_to_latest_snapshot(&mut self) -> Result<bool, LogError>;

    /// Moves the log start offset up to snapshot `id`'s end offset, deleting older segments and
    /// snapshots (Kafka's `deleteBeforeSnapshot`). The caller guarantees `id.offset <= HW`.
    /// Returns whether the log start moved there.
    fn delete_before_snapshot(&mut self, id: OffsetAndEpoch) -> Result<bool, LogError>;

    /// Kafka's retention (`metadata.max.retention.bytes` / `.ms`): drops snapshots past it
    /// (always keeping the latest) and moves the log start up to the oldest one kept, never
    /// beyond `high_watermark`. Returns whether the log start moved.
    fn maybe_clean(&mut self, now_ms: i64, high_watermark: Offset) -> Result<bool, LogError>;

    /// (LEO, last fetched epoch).
    fn end_offset_and_epoch(&self) -> OffsetAndEpoch {
        OffsetAndEpoch::new(self.end_offset(), self.last_fetched_epoch())
    }

    /// Kafka's `validateOffsetAndEpoch`: is a fetcher at (offset, epoch) consistent with this log?
    fn validate_offset_and_epoch(&self, offset: Offset, epoch: Epoch) -> ValidOffsetAndEpoch {
        if self.start_offset() == 0 && offset == 0 {
            return ValidOffsetAndEpoch::Valid(OffsetAndEpoch::new(0, 0));
        }
        if let Some(earliest) = self.earliest_snapshot_id() {
            if offset < self.start_offset()
                || (offset == self.start_offset() && epoch != earliest.epoch)
                || epoch < earliest.epoch
            {
                let latest = self.latest_snapshot_id().unwrap_or(earliest);
                return ValidOffsetAndEpoch::Snapshot(latest);
            }
        }
        let end = self.end_offset_for_epoch(epoch);
        if end.epoch != epoch || end.offset < offset {
            ValidOffsetAndEpoch::Diverging(end)
        } else {
            ValidOffsetAndEpoch::Valid(OffsetAndEpoch::new(offset, epoch))
        }
    }

    /// Kafka's `truncateToEndOffset`, for a DivergingEpoch (end offset, epoch) from the leader.
    /// Returns the truncation offset.
    fn truncate_to_end_offset(&mut self, end: OffsetAndEpoch) -> Result<Offset, LogError> {
        let target = self.truncation_offset(end);
        self.truncate_to(target)?;
        Ok(target)
    }

    /// Where `truncate_to_end_offset(end)` would truncate (Kafka refuses a point below the HW).
    fn truncation_offset(&self, end: OffsetAndEpoch) -> Offset {
        let target = if end.epoch == 0 {
            end.offset.min(self.end_offset())
        } else {
            let local = self.end_offset_for_epoch(end.epoch);
            if local.epoch == end.epoch {
                local.offset.min(end.offset)
            } else {
                local.offset
            }
        };
        target.max(self.start_offset())
    }
}
