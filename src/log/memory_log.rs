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
use super::snapshot_io::{SnapshotReader, SnapshotWriter};
use super::storage::{SnapshotMeta, Storage};

/// The metadata log in memory.
pub type MemoryLog = LogCore<MemoryStorage>;

#[derive(Debug, Clone)]
struct MemBatch {
    meta: BatchMeta,
    bytes: Vec<u8>,
}

#[derive(Debug, Clone, Default)]
pub struct MemoryStorage {
    /// Offset of the first batch (or where the log starts when empty).
    base: i64,
    batches: Vec<MemBatch>,
    /// How many of `batches` are durable.
    flushed: usize,
    snapshots: BTreeMap<OffsetAndEpoch, (Arc<Vec<u8>>, SnapshotMeta)>,
    epoch_checkpoint: Vec<EpochEntry>,
}

impl MemoryLog {
    /// An empty log starting at offset 0.
    pub fn new(config: LogConfig) -> MemoryLog {
        Self::reopen(MemoryStorage::default(), config).expect("an empty memory log opens")
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
        let mut out = Vec::new();
        for b in &self.batches[self.index_of(offset)..] {
            if b.meta.last_offset >= upper_bound
                || (!out.is_empty() && out.len() + b.bytes.len() > max_bytes)
            {
                break;
            }
            out.extend_from_slice(&b.bytes);
        }
        Ok(out)
    }
    fn truncate_to(&mut self, offset: i64) -> Result<i64> {
        let keep = self.index_of(offset);
        self.batches.truncate(keep);
        self.flushed = self.flushed.min(keep);
        Ok(self.end())
    }
    fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<()> {
        self.batches.clear();
        self.flushed = 0;
        self.base = offset;
        Ok(())
    }
    fn delete_below(&mut self, offset: i64) -> Result<usize> {
        let gone = self
            .batches
            .iter()
            .take_while(|b| b.meta.last_offset < offset)
            .count();
        if gone > 0 {
            self.base = self.batches[gone - 1].meta.last_offset + 1;
            self.batches.drain(..gone);
            self.flushed = self.flushed.saturating_sub(gone);
        }
        Ok(gone)
    }
    fn flush(&mut self) -> Result<()> {
        self.flushed = self.batches.len();
        Ok(())
    }
    fn write_epoch_checkpoint(&mut self, entries: &[EpochEntry]) -> Result<()> {
        self.epoch_checkpoint = entries.to_vec();
        Ok(())
    }
    fn create_snapshot(&mut self, id: OffsetAndEpoch) -> Result<SnapshotWriter> {
        Ok(SnapshotWriter::memory(id))
    }
    fn freeze_snapshot(&mut self, writer: SnapshotWriter) -> Result<SnapshotMeta> {
        let id = writer.id();
        let (bytes, summary) = writer.freeze_memory()?;
        let meta = SnapshotMeta {
            size: bytes.len() as u64,
            last_contained_log_timestamp: summary.last_contained_log_timestamp,
        };
        self.snapshots.insert(id, (Arc::new(bytes), meta));
        Ok(meta)
    }
    fn open_snapshot(&self, id: OffsetAndEpoch) -> Result<SnapshotReader> {
        let (bytes, _) = self.snapshots.get(&id).ok_or_else(|| {
            LogError::corrupt(
                Path::new(&super::snapshot::file_name(id)),
                None,
                "no such snapshot",
            )
        })?;
        Ok(SnapshotReader::memory(id, bytes.clone()))
    }
    fn delete_snapshot(&mut self, id: OffsetAndEpoch) -> Result<()> {
        self.snapshots.remove(&id);
        Ok(())
    }
}
