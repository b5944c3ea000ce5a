//! An in-memory metadata log for tests and simulations: the same rules as the file log (both
//! are [`LogCore`]), with storage that keeps only what was flushed when [`MemoryLog::crash`]
//! simulates a hard kill and restart. Frozen snapshots are durable, as files would be.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::core::{LogConfig, LogCore};
use super::epoch_cache::{EpochCache, EpochEntry};
use super::error::{LogError, Result};
use super::segment::BatchMeta;
use super::snapshot::OffsetAndEpoch;
use super::snapshot_io::{RawSnapshotReader, RawSnapshotWriter};
use super::storage::{SnapshotMeta, Storage};

/// The metadata log in memory.
pub type MemoryLog = LogCore<MemoryStorage>;

#[derive(Debug, Clone)]
struct MemBatch {
    meta: BatchMeta,
    bytes: Vec<u8>,
}

/// Batches in memory, cut into segments as [`super::segment_log::SegmentLog`] cuts files.
#[derive(Debug, Clone)]
pub struct MemoryStorage {
    /// Offset of the first batch (or where the log starts when empty).
    base: i64,
    batches: Vec<MemBatch>,
    /// Base offset of every segment, increasing, never empty (the first is `base`).
    segment_bases: Vec<i64>,
    /// `metadata.log.segment.bytes`.
    segment_bytes: u64,
    /// Number of `flush` calls that made new data durable (tests count fsyncs with it).
    flushes: u64,
    /// How many of `batches` are durable.
    flushed: usize,
    snapshots: BTreeMap<OffsetAndEpoch, (Arc<Vec<u8>>, SnapshotMeta)>,
    epoch_checkpoint: Vec<EpochEntry>,
}

impl Default for MemoryStorage {
    fn default() -> Self {
        MemoryStorage {
            base: 0,
            batches: Vec::new(),
            segment_bases: vec![0],
            segment_bytes: LogConfig::default().roll.segment_bytes,
            flushes: 0,
            flushed: 0,
            snapshots: BTreeMap::new(),
            epoch_checkpoint: Vec::new(),
        }
    }
}

impl Default for MemoryLog {
    fn default() -> MemoryLog {
        MemoryLog::new()
    }
}

impl MemoryLog {
    /// An empty log starting at offset 0, with Kafka's default settings.
    pub fn new() -> MemoryLog {
        Self::with_config(LogConfig::default())
    }

    /// An empty log starting at offset 0.
    pub fn with_config(config: LogConfig) -> MemoryLog {
        let storage = MemoryStorage {
            segment_bytes: config.roll.segment_bytes,
            ..MemoryStorage::default()
        };
        Self::reopen(storage, config).expect("an empty memory log opens")
    }

    /// An empty log of segments of at most `segment_bytes` each.
    pub fn with_segment_bytes(segment_bytes: u64) -> MemoryLog {
        let mut config = LogConfig::default();
        config.roll.segment_bytes = segment_bytes;
        Self::with_config(config)
    }

    /// Base offsets of the segments.
    pub fn segment_bases(&self) -> &[i64] {
        &self.storage.segment_bases
    }

    /// How many flushes made new data durable.
    pub fn flushes(&self) -> u64 {
        self.storage.flushes
    }

    fn reopen(storage: MemoryStorage, config: LogConfig) -> Result<MemoryLog> {
        let mut epochs = EpochCache::new();
        for b in &storage.batches {
            epochs.assign(b.meta.epoch, b.meta.base_offset);
        }
        let snapshots = storage
            .snapshots
            .iter()
            .filter(|(id, _)| id.offset >= storage.base)
            .map(|(id, (_, meta))| (*id, *meta))
            .collect();
        let persisted = Some(storage.epoch_checkpoint.clone());
        LogCore::assemble(storage, config, epochs, snapshots, persisted)
    }

    /// A hard kill and restart: everything not flushed is lost, then the log is opened again
    /// (epochs rebuilt, high watermark unknown, truncation to a newer snapshot).
    pub fn crash(&mut self) -> Result<()> {
        let mut storage = std::mem::take(&mut self.storage);
        storage.batches.truncate(storage.flushed);
        let end = storage.end();
        storage.segment_bases.retain(|&b| b <= end);
        *self = Self::reopen(storage, self.config)?;
        Ok(())
    }

    /// The leader-epoch checkpoint as last persisted.
    pub fn persisted_epochs(&self) -> &[EpochEntry] {
        &self.storage.epoch_checkpoint
    }
}

impl MemoryStorage {
    fn end(&self) -> i64 {
        self.batches
            .last()
            .map_or(self.base, |b| b.meta.last_offset + 1)
    }

    /// Bytes in the segment starting at `base`.
    fn segment_size(&self, base: i64) -> u64 {
        self.batches
            .iter()
            .rev()
            .take_while(|b| b.meta.base_offset >= base)
            .map(|b| b.bytes.len() as u64)
            .sum()
    }

    /// Index of the batch holding `offset`.
    fn index_of(&self, offset: i64) -> usize {
        self.batches
            .partition_point(|b| b.meta.last_offset < offset)
    }
}

impl Storage for MemoryStorage {
    fn base_offset(&self) -> i64 {
        self.base
    }
    fn end_offset(&self) -> i64 {
        self.end()
    }
    fn flushed_offset(&self) -> i64 {
        match self.flushed {
            0 => self.base,
            n => self.batches[n - 1].meta.last_offset + 1,
        }
    }
    fn size(&self) -> u64 {
        self.batches.iter().map(|b| b.bytes.len() as u64).sum()
    }
    fn is_batch_boundary(&self, offset: i64) -> bool {
        offset == self.end() || self.batches.iter().any(|b| b.meta.base_offset == offset)
    }
    fn append(&mut self, bytes: &[u8], metas: &[BatchMeta]) -> Result<()> {
        // SegmentLog's roll: a non-empty active segment that would overflow is closed first.
        let active = *self
            .segment_bases
            .last()
            .expect("a log always has a segment");
        let active_size = self.segment_size(active);
        if let Some(first) = metas.first() {
            if active_size > 0 && active_size + bytes.len() as u64 > self.segment_bytes {
                self.segment_bases.push(first.base_offset);
            }
        }
        let mut at = 0;
        for meta in metas {
            self.batches.push(MemBatch {
                meta: *meta,
                bytes: bytes[at..at + meta.size].to_vec(),
            });
            at += meta.size;
        }
        Ok(())
    }
    fn read(&self, offset: i64, max_bytes: usize, upper_bound: i64) -> Result<Vec<u8>> {
        // One segment at most, as SegmentLog reads.
        let segment_end = self
            .segment_bases
            .iter()
            .copied()
            .find(|&b| b > offset)
            .unwrap_or(i64::MAX);
        let mut out = Vec::new();
        for b in &self.batches[self.index_of(offset)..] {
            if b.meta.base_offset >= segment_end
                || b.meta.last_offset >= upper_bound
                || (!out.is_empty() && out.len() + b.bytes.len() > max_bytes)
            {
                break;
            }
            out.extend_from_slice(&b.bytes);
        }
        Ok(out)
    }
    fn truncate_to(&mut self, offset: i64) -> Result<i64> {
        if offset >= self.end() {
            return Ok(self.end());
        }
        while self.segment_bases.len() > 1 && *self.segment_bases.last().unwrap() >= offset {
            self.segment_bases.pop();
        }
        let keep = self.index_of(offset);
        self.batches.truncate(keep);
        self.flushed = self.flushed.min(keep);
        Ok(self.end())
    }
    fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<()> {
        self.batches.clear();
        self.flushed = 0;
        self.base = offset;
        self.segment_bases = vec![offset];
        Ok(())
    }
    fn delete_below(&mut self, offset: i64) -> Result<usize> {
        // Whole segments only, the active one always stays (SegmentLog's rule).
        let segments = self
            .segment_bases
            .windows(2)
            .take_while(|w| w[1] <= offset)
            .count();
        if segments > 0 {
            self.segment_bases.drain(..segments);
            self.base = self.segment_bases[0];
            let gone = self.index_of(self.base);
            self.batches.drain(..gone);
            self.flushed = self.flushed.saturating_sub(gone);
        }
        Ok(segments)
    }
    fn flush(&mut self) -> Result<()> {
        if self.flushed != self.batches.len() {
            self.flushes += 1;
        }
        self.flushed = self.batches.len();
        Ok(())
    }
    fn write_epoch_checkpoint(&mut self, entries: &[EpochEntry]) -> Result<()> {
        self.epoch_checkpoint = entries.to_vec();
        Ok(())
    }
    fn create_snapshot(&mut self, id: OffsetAndEpoch) -> Result<RawSnapshotWriter> {
        Ok(RawSnapshotWriter::memory(id))
    }
    fn freeze_snapshot(&mut self, writer: RawSnapshotWriter) -> Result<SnapshotMeta> {
        let id = writer.id();
        let (bytes, summary) = writer.freeze_memory()?;
        let meta = SnapshotMeta {
            size: bytes.len() as u64,
            last_contained_log_timestamp: summary.last_contained_log_timestamp,
        };
        self.snapshots.insert(id, (Arc::new(bytes), meta));
        Ok(meta)
    }
    fn open_snapshot(&self, id: OffsetAndEpoch) -> Result<RawSnapshotReader> {
        let (bytes, _) = self.snapshots.get(&id).ok_or_else(|| {
            LogError::corrupt(
                Path::new(&super::snapshot::file_name(id)),
                None,
                "no such snapshot",
            )
        })?;
        Ok(RawSnapshotReader::memory(id, bytes.clone()))
    }
    fn segment_bases(&self) -> Vec<i64> {
        self.segment_bases.clone()
    }
    fn delete_snapshot(&mut self, id: OffsetAndEpoch) -> Result<()> {
        self.snapshots.remove(&id);
        Ok(())
    }
}
