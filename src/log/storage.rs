//! What [`super::core::LogCore`] needs from where the bytes live: files
//! ([`super::file_log::FileStorage`]) or memory ([`super::memory_log::MemoryStorage`]). The
//! Kafka rules (epochs, high watermark, snapshot retention) live once, in the core.

use super::epoch_cache::EpochEntry;
use super::error::Result;
use super::segment::BatchMeta;
use super::snapshot::OffsetAndEpoch;
use super::snapshot_io::{RawSnapshotReader, RawSnapshotWriter};

/// A retained snapshot's facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotMeta {
    pub size: u64,
    pub last_contained_log_timestamp: i64,
}

pub trait Storage {
    /// The first offset stored (a segment base; may be below the log start offset).
    fn base_offset(&self) -> i64;
    fn end_offset(&self) -> i64;
    fn flushed_offset(&self) -> i64;
    /// Bytes of log data (what `metadata.max.retention.bytes` counts, with snapshots).
    fn size(&self) -> u64;
    fn is_batch_boundary(&self, offset: i64) -> bool;
    /// Appends validated batches at the end offset.
    fn append(&mut self, bytes: &[u8], metas: &[BatchMeta]) -> Result<()>;
    /// Whole batches from the one holding `offset`, ≤ `max_bytes` (at least one) ending at or
    /// before `upper_bound`.
    fn read(&self, offset: i64, max_bytes: usize, upper_bound: i64) -> Result<Vec<u8>>;
    /// Removes batches from the one holding `offset`; returns the new end offset.
    fn truncate_to(&mut self, offset: i64) -> Result<i64>;
    fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<()>;
    /// Drops stored data entirely below `offset`; returns how many units (segments) went.
    fn delete_below(&mut self, offset: i64) -> Result<usize>;
    fn flush(&mut self) -> Result<()>;
    /// How long flushes took, where the bytes live on a disk.
    fn fsync_latency(&self) -> Option<&super::fsync_latency::FsyncLatency> {
        None
    }
    /// Persists the leader-epoch cache (entries backed by flushed data).
    fn write_epoch_checkpoint(&mut self, entries: &[EpochEntry]) -> Result<()>;
    fn create_snapshot(&mut self, id: OffsetAndEpoch) -> Result<RawSnapshotWriter>;
    fn freeze_snapshot(&mut self, writer: RawSnapshotWriter) -> Result<SnapshotMeta>;
    fn open_snapshot(&self, id: OffsetAndEpoch) -> Result<RawSnapshotReader>;
    fn delete_snapshot(&mut self, id: OffsetAndEpoch) -> Result<()>;
    /// Base offset of every segment, oldest first.
    fn segment_bases(&self) -> Vec<i64>;
    /// The file (or, in memory, the name) of the segment holding `offset`, for errors.
    fn segment_path(&self, offset: i64) -> std::path::PathBuf {
        let bases = self.segment_bases();
        let base = bases.iter().rev().find(|&&b| b <= offset).or(bases.first());
        std::path::PathBuf::from(super::segment::file_name(base.copied().unwrap_or(0)))
    }
}
