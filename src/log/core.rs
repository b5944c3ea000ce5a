//! The metadata log's state over any [`Storage`] (what Kafka's `UnifiedLog` keeps for
//! `KafkaRaftLog`): the stored batches, the leader-epoch cache and its checkpoint, the log start
//! offset, the high watermark, the retained snapshots and the download in progress.
//!
//! The raft core reaches it through one trait, `raft::RaftLog`, implemented once for every
//! `LogCore` (src/raft/log_core.rs): Kafka's `KafkaRaftLog` rules (truncation, snapshots,
//! retention) live there, one method each, so that no inherent method here shadows one of
//! them. What is left here is the state, what opening a log does (Kafka's `createLog` checks,
//! and its restart at a latest snapshot ahead of the log), and the byte-level appends and
//! reads that the trait's typed batches go through.

use std::collections::BTreeMap;

use super::append::{self, Appender};
use super::epoch_cache::{EpochCache, EpochEntry};
use super::error::{LogError, Result};
use super::replicated::{Isolation, LogAppendInfo, LogFetchInfo, OffsetAndEpoch};
use super::segment_log::RollConfig;
use super::snapshot_io::RawSnapshotWriter;
use super::storage::{SnapshotMeta, Storage};

/// The metadata log's settings, with Kafka 4.4.0's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogConfig {
    /// `metadata.log.segment.bytes` (default 1 GiB, minimum 8 MiB in Kafka) and
    /// `metadata.log.segment.ms` (default 7 days).
    pub roll: RollConfig,
    /// `internal.metadata.max.batch.size.in.bytes` (8 MiB).
    pub max_batch_size: usize,
    /// `metadata.max.retention.bytes` (100 MiB; negative disables).
    pub retention_bytes: i64,
    /// `metadata.max.retention.ms` (7 days; negative disables).
    pub retention_ms: i64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            roll: RollConfig::default(),
            max_batch_size: crate::protocol::records::MAX_BATCH_SIZE_BYTES,
            retention_bytes: 100 << 20,
            retention_ms: 7 * 24 * 60 * 60 * 1000,
        }
    }
}

/// A snapshot being downloaded from the leader (FetchSnapshot), byte for byte.
#[derive(Debug)]
pub(crate) struct SnapshotDownload {
    pub(crate) writer: RawSnapshotWriter,
    /// The snapshot exists already: the bytes go to memory and are only validated.
    pub(crate) existing: bool,
}

/// A metadata log over `S`. See [`super::FileLog`] and [`super::MemoryLog`].
///
/// Invariants: `log_start <= high_watermark <= storage.end_offset()`; when `log_start > 0` a
/// retained snapshot ends at or after it; `epochs` holds the epochs of the stored batches.
#[derive(Debug)]
pub struct LogCore<S: Storage> {
    pub(crate) storage: S,
    pub(crate) config: LogConfig,
    pub(crate) epochs: EpochCache,
    persisted_epochs: Option<Vec<EpochEntry>>,
    pub(crate) log_start: i64,
    pub(crate) high_watermark: i64,
    pub(crate) snapshots: BTreeMap<OffsetAndEpoch, SnapshotMeta>,
    pub(crate) download: Option<SnapshotDownload>,
}

impl<S: Storage> LogCore<S> {
    /// Assembles a log from opened storage: `epochs` rebuilt from its batches, the retained
    /// snapshots, and the checkpoint file's entries as found (`None` if absent or unreadable).
    pub(crate) fn assemble(
        storage: S,
        config: LogConfig,
        epochs: EpochCache,
        snapshots: BTreeMap<OffsetAndEpoch, SnapshotMeta>,
        persisted_epochs: Option<Vec<EpochEntry>>,
    ) -> Result<LogCore<S>> {
        let log_start = storage.base_offset();
        if log_start > 0 && !snapshots.keys().any(|id| id.offset >= log_start) {
            return Err(LogError::InvalidState(format!(
                "Inconsistent snapshot state: the log starts at offset {log_start} but no snapshot \
                 ends at or after it (latest: {:?}); the records below offset {log_start} are lost",
                snapshots.keys().last()
            )));
        }
        let mut log = LogCore {
            storage,
            config,
            epochs,
            persisted_epochs,
            log_start,
            high_watermark: log_start,
            snapshots,
            download: None,
        };
        // Kafka's `KafkaRaftLog.createLog`: a latest snapshot ahead of the log (a crash after
        // a download, or a snapshot above the flushed end) restarts the log at its end offset.
        if let Some(snapshot) = log.snapshot_ahead_of_log() {
            log.restart_at_snapshot(snapshot)?;
        }
        log.persist_epochs()?;
        Ok(log)
    }

    /// The latest snapshot when it is ahead of the log (a newer epoch than the log's last
    /// batch, or the same epoch and a larger end offset): the log must restart at it.
    pub(crate) fn snapshot_ahead_of_log(&self) -> Option<OffsetAndEpoch> {
        let latest = self.snapshots.keys().next_back().copied()?;
        let end = self.storage.end_offset();
        let log_epoch = self.epochs.latest_epoch();
        if log_epoch.is_none() && end == latest.offset && self.log_start == end {
            return None; // already an empty log at the snapshot
        }
        let log_epoch = log_epoch.unwrap_or(0);
        let ahead = latest.epoch > log_epoch || (latest.epoch == log_epoch && latest.offset > end);
        ahead.then_some(latest)
    }

    /// Empties the log and restarts it at `snapshot`'s end offset (log start = end = high
    /// watermark), forgetting the older snapshots. Durable on return.
    pub(crate) fn restart_at_snapshot(&mut self, snapshot: OffsetAndEpoch) -> Result<()> {
        tracing::info!(
            "Truncating the metadata log fully to the latest snapshot {snapshot}, which is ahead of its end offset {}",
            self.storage.end_offset()
        );
        self.storage.truncate_fully_and_start_at(snapshot.offset)?;
        self.epochs.clear();
        self.log_start = snapshot.offset;
        self.high_watermark = snapshot.offset;
        self.remove_snapshots_before(snapshot)?;
        self.persist_epochs()
    }

    /// Forgets (and deletes) the snapshots older than `id`.
    pub(crate) fn remove_snapshots_before(&mut self, id: OffsetAndEpoch) -> Result<()> {
        let older: Vec<OffsetAndEpoch> = self.snapshots.range(..id).map(|(k, _)| *k).collect();
        for old in older {
            self.snapshots.remove(&old);
            self.storage.delete_snapshot(old)?;
        }
        Ok(())
    }

    pub fn storage(&self) -> &S {
        &self.storage
    }
    pub fn config(&self) -> &LogConfig {
        &self.config
    }
    pub fn epoch_entries(&self) -> &[EpochEntry] {
        self.epochs.entries()
    }
    /// The retained snapshots, oldest first.
    pub fn snapshot_ids(&self) -> Vec<OffsetAndEpoch> {
        self.snapshots.keys().copied().collect()
    }

    /// Writes the leader-epoch checkpoint if the durable part of the cache changed.
    pub(crate) fn persist_epochs(&mut self) -> Result<()> {
        let flushed = self.storage.flushed_offset();
        let durable: Vec<EpochEntry> = self
            .epochs
            .entries()
            .iter()
            .copied()
            .filter(|e| e.start_offset < flushed)
            .collect();
        if self.persisted_epochs.as_ref() != Some(&durable) {
            self.storage.write_epoch_checkpoint(&durable)?;
            self.persisted_epochs = Some(durable);
        }
        Ok(())
    }

    fn append(&mut self, bytes: &[u8], appender: Appender) -> Result<LogAppendInfo> {
        // Kafka's RecordBatchTooLargeException: no segment could hold this append.
        let segment_bytes = self.config.roll.segment_bytes;
        if bytes.len() as u64 > segment_bytes {
            return Err(LogError::LargerThanSegment {
                size: bytes.len(),
                segment_bytes,
            });
        }
        let metas = append::validate(
            bytes,
            self.storage.end_offset(),
            self.epochs.latest_epoch(),
            appender,
            self.config.max_batch_size,
        )?;
        self.storage.append(bytes, &metas)?;
        for m in &metas {
            self.epochs.assign(m.epoch, m.base_offset);
        }
        Ok(LogAppendInfo {
            first_offset: metas[0].base_offset,
            last_offset: metas[metas.len() - 1].last_offset,
        })
    }

    /// Appends whole v2 batches written by the leader of `epoch` (every batch of that epoch).
    pub fn append_bytes_as_leader(&mut self, batches: &[u8], epoch: i32) -> Result<LogAppendInfo> {
        self.append(batches, Appender::Leader(epoch))
    }

    /// Appends whole v2 batches received from the leader of `epoch` (epochs up to it).
    pub fn append_bytes_as_follower(
        &mut self,
        batches: &[u8],
        epoch: i32,
    ) -> Result<LogAppendInfo> {
        self.append(batches, Appender::Follower(epoch))
    }

    /// Whole batches from the one holding `start`, up to `max_bytes` (at least one), from one
    /// segment at most.
    pub fn read_bytes(
        &self,
        start: i64,
        isolation: Isolation,
        max_bytes: usize,
    ) -> Result<LogFetchInfo> {
        let end = self.storage.end_offset();
        if start < self.log_start || start > end {
            return Err(LogError::OffsetOutOfRange {
                offset: start,
                start: self.log_start,
                end,
            });
        }
        let upper = match isolation {
            Isolation::Committed => self.high_watermark,
            Isolation::Uncommitted => end,
        };
        Ok(LogFetchInfo {
            records: self.storage.read(start, max_bytes, upper)?,
            start_offset: start,
        })
    }

    /// Starts a new leader epoch at the log end offset.
    pub fn initialize_leader_epoch(&mut self, epoch: i32) -> Result<()> {
        self.epochs.assign(epoch, self.storage.end_offset());
        Ok(())
    }

    pub fn high_watermark(&self) -> i64 {
        self.high_watermark
    }

    /// Moves the high watermark, clamped to `[log start, log end]`.
    pub fn update_high_watermark(&mut self, offset: i64) {
        self.high_watermark = offset.clamp(self.log_start, self.storage.end_offset());
    }
}
