//! An in-memory metadata log for tests and simulations: the same rules as the file log (both
//! are [`LogCore`]), with storage that keeps only what was flushed when [`MemoryLog::crash`]
//! simulates a hard kill and restart. Frozen snapshots are durable, as files would be.
//!
//! A [`FaultPlan`] makes one operation fail as a disk does (`memory_faults.rs`). A torn write
//! leaves a prefix of its bytes on the medium; the crash keeps them, and recovery scans every
//! segment with the file log's rules (`segment::recover`), cutting the torn batch.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::core::{LogConfig, LogCore};
use super::epoch_cache::{EpochCache, EpochEntry};
use super::error::{LogError, Result};
use super::memory_faults::{self, FaultKind, FaultPlan, Faults, ImpossibleFault, InjectedFault};
use super::memory_faults::{StorageOp, Strike};
use super::segment::{self, BatchMeta, Cut};
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
    faults: Faults,
    /// The written bytes past the flushed batches that a torn write left on the medium.
    reached: Option<Reached>,
    /// A snapshot whose write was torn: its `.part` file, removed at the next start.
    torn_snapshot: Option<OffsetAndEpoch>,
    /// What the last crash recovery found.
    recovery: MemoryRecovery,
}

/// What a torn write left on the medium past the flushed batches.
#[derive(Debug, Clone)]
struct Reached {
    /// How many unflushed batches are on the medium whole.
    whole: usize,
    /// Then the first bytes of the next batch, in the segment starting at `segment`.
    partial: Vec<u8>,
    segment: i64,
}

/// What recovery after a crash found ([`MemoryLog::last_recovery`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryRecovery {
    /// Unflushed batches that a torn write had put on the medium whole: they survive.
    pub kept_unflushed_batches: usize,
    /// Where recovery cut a segment (a torn batch at its end).
    pub cut: Option<Cut>,
    /// A snapshot whose write was torn: its `.part` was removed.
    pub removed_partial_snapshot: Option<OffsetAndEpoch>,
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
            faults: Faults::default(),
            reached: None,
            torn_snapshot: None,
            recovery: MemoryRecovery::default(),
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

    /// A hard kill and restart: everything not flushed is lost unless a torn write put it on
    /// the medium, recovery cuts the segments at the first batch that is not whole, faults are
    /// cleared, then the log is opened again (epochs rebuilt, high watermark unknown,
    /// truncation to a newer snapshot).
    pub fn crash(&mut self) -> Result<()> {
        let mut storage = std::mem::take(&mut self.storage);
        storage.recover_after_crash()?;
        *self = Self::reopen(storage, self.config)?;
        Ok(())
    }

    /// Makes one operation fail as `plan` says; every write after it fails too, until
    /// [`MemoryLog::crash`].
    pub fn plan_fault(&mut self, plan: FaultPlan) -> std::result::Result<(), ImpossibleFault> {
        self.storage.faults.arm(plan)
    }

    /// Cancels the planned fault if it has not fired.
    pub fn cancel_fault_plan(&mut self) {
        self.storage.faults.cancel();
    }

    /// Whether a fault is planned or has fired (until the next crash).
    pub fn has_fault_plan(&self) -> bool {
        self.storage.faults.is_planned()
    }

    /// The planned fault, once it fired (until the next crash).
    pub fn injected_fault(&self) -> Option<&InjectedFault> {
        self.storage.faults.fired()
    }

    /// What the last crash recovery found.
    pub fn last_recovery(&self) -> &MemoryRecovery {
        &self.storage.recovery
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

    /// The name of the segment holding `offset` (the active one past the end), for errors.
    fn segment_file(&self, offset: i64) -> std::path::PathBuf {
        Storage::segment_path(self, offset)
    }

    /// Whether `op` fails now; for a torn write, what reached the medium first.
    fn strike(&mut self, op: StorageOp, file: &Path) -> Option<Strike> {
        self.faults.strike(op, file)
    }

    /// A flush torn at `permille`: a prefix of the unflushed batches' bytes is on the medium.
    fn tear_flush(&mut self, permille: u16) {
        let unflushed = &self.batches[self.flushed..];
        let total: usize = unflushed.iter().map(|b| b.bytes.len()).sum();
        let mut left = memory_faults::torn_len(total, permille);
        for (whole, b) in unflushed.iter().enumerate() {
            if left < b.bytes.len() {
                let segment = self.segment_base_of(b.meta.base_offset);
                self.reached = Some(Reached {
                    whole,
                    partial: b.bytes[..left].to_vec(),
                    segment,
                });
                return;
            }
            left -= b.bytes.len();
        }
    }

    fn segment_base_of(&self, offset: i64) -> i64 {
        let i = self.segment_bases.partition_point(|&b| b <= offset);
        self.segment_bases[i.saturating_sub(1)]
    }

    /// The medium after a crash, then recovery with the file log's rules: every segment
    /// scanned from its start, the first that does not end cleanly cut at its last whole
    /// batch, every later one deleted. Everything recovered is durable; faults are cleared.
    fn recover_after_crash(&mut self) -> Result<()> {
        let reached = self.reached.take();
        let whole = reached.as_ref().map_or(0, |r| r.whole);
        self.batches.truncate(self.flushed + whole);
        let end = self.end();
        self.segment_bases.retain(|&b| b <= end);
        let mut medium: Vec<(i64, Vec<u8>)> = self
            .segment_bases
            .iter()
            .map(|&b| (b, Vec::new()))
            .collect();
        for b in &self.batches {
            let i = self
                .segment_bases
                .partition_point(|&s| s <= b.meta.base_offset)
                - 1;
            medium[i].1.extend_from_slice(&b.bytes);
        }
        if let Some(r) = &reached {
            if let Some((_, bytes)) = medium.iter_mut().find(|(base, _)| *base == r.segment) {
                bytes.extend_from_slice(&r.partial);
            }
        }
        let mut batches = Vec::with_capacity(self.batches.len());
        let mut cut = None;
        let mut expected = self.base;
        for (i, (base, bytes)) in medium.iter().enumerate() {
            let name = Path::new(&segment::file_name(*base)).to_path_buf();
            let outcome = segment::recover(
                &bytes[..],
                bytes.len() as u64,
                *base,
                expected,
                |position, meta| {
                    let at = position as usize;
                    batches.push(MemBatch {
                        meta: *meta,
                        bytes: bytes[at..at + meta.size].to_vec(),
                    });
                    expected = meta.last_offset + 1;
                },
            )
            .map_err(LogError::io("read segment", &name))?;
            if let Some(stop) = outcome.stop {
                cut = Some(Cut {
                    path: name,
                    stop,
                    dropped_bytes: bytes.len() as u64 - outcome.valid_len,
                });
                self.segment_bases.truncate(i + 1);
                break;
            }
        }
        self.batches = batches;
        self.flushed = self.batches.len();
        self.faults = Faults::default();
        self.recovery = MemoryRecovery {
            kept_unflushed_batches: whole,
            cut,
            removed_partial_snapshot: self.torn_snapshot.take(),
        };
        Ok(())
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
        let file = self.segment_file(self.end());
        match self.strike(StorageOp::Append, &file) {
            None => {}
            Some(strike) => {
                if let Strike::Planned {
                    kind: FaultKind::TornWrite,
                    torn_permille,
                } = strike
                {
                    let segment = *self
                        .segment_bases
                        .last()
                        .expect("a log always has a segment");
                    self.reached = Some(Reached {
                        whole: self.batches.len() - self.flushed,
                        partial: bytes[..memory_faults::torn_len(bytes.len(), torn_permille)]
                            .to_vec(),
                        segment,
                    });
                }
                return Err(strike.error(StorageOp::Append, &file));
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
        let file = self.segment_file(offset);
        if let Some(strike) = self.strike(StorageOp::Truncate, &file) {
            return Err(strike.error(StorageOp::Truncate, &file));
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
        let file = self.segment_file(self.base);
        if let Some(strike) = self.strike(StorageOp::Truncate, &file) {
            return Err(strike.error(StorageOp::Truncate, &file));
        }
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
            let file = self.segment_file(self.base);
            if let Some(strike) = self.strike(StorageOp::Truncate, &file) {
                return Err(strike.error(StorageOp::Truncate, &file));
            }
            self.segment_bases.drain(..segments);
            self.base = self.segment_bases[0];
            let gone = self.index_of(self.base);
            self.batches.drain(..gone);
            self.flushed = self.flushed.saturating_sub(gone);
        }
        Ok(segments)
    }
    fn flush(&mut self) -> Result<()> {
        if self.flushed == self.batches.len() {
            return Ok(()); // nothing dirty: no fsync
        }
        let first_dirty = self.batches[self.flushed].meta.base_offset;
        let file = self.segment_file(first_dirty);
        if let Some(strike) = self.strike(StorageOp::Flush, &file) {
            if let Strike::Planned {
                kind: FaultKind::TornWrite,
                torn_permille,
            } = strike
            {
                self.tear_flush(torn_permille);
            }
            return Err(strike.error(StorageOp::Flush, &file));
        }
        self.flushes += 1;
        self.flushed = self.batches.len();
        Ok(())
    }
    fn write_epoch_checkpoint(&mut self, entries: &[EpochEntry]) -> Result<()> {
        if let Some(strike) = self.faults.again() {
            let file = Path::new(super::epoch_cache::CHECKPOINT_FILE_NAME);
            return Err(strike.error_doing("write", file));
        }
        self.epoch_checkpoint = entries.to_vec();
        Ok(())
    }
    fn create_snapshot(&mut self, id: OffsetAndEpoch) -> Result<RawSnapshotWriter> {
        Ok(RawSnapshotWriter::memory(id))
    }
    fn freeze_snapshot(&mut self, writer: RawSnapshotWriter) -> Result<SnapshotMeta> {
        let id = writer.id();
        let file = Path::new(&super::snapshot::file_name(id)).to_path_buf();
        if let Some(strike) = self.strike(StorageOp::Snapshot, &file) {
            if let Strike::Planned {
                kind: FaultKind::TornWrite,
                ..
            } = strike
            {
                self.torn_snapshot = Some(id);
            }
            return Err(strike.error(StorageOp::Snapshot, &file));
        }
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
        if let Some(strike) = self.faults.again() {
            let file = Path::new(&super::snapshot::file_name(id)).to_path_buf();
            return Err(strike.error_doing("rename snapshot for deletion", &file));
        }
        self.snapshots.remove(&id);
        Ok(())
    }
}
