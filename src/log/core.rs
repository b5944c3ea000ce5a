//! The metadata log's rules (Kafka's `KafkaRaftLog` on top of `UnifiedLog`), over any
//! [`Storage`]: leader-epoch cache, high watermark, log start offset, snapshot bookkeeping and
//! retention.

use std::collections::BTreeMap;

use super::append::{self, Appender};
use super::epoch_cache::{EpochCache, EpochEntry};
use super::error::{LogError, Result};
use super::replicated::{
    Isolation, LogAppendInfo, LogFetchInfo, OffsetAndEpoch, SnapshotReader, SnapshotWriter,
    ValidOffsetAndEpoch,
};
use super::segment_log::RollConfig;
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

/// A metadata log over `S`. See [`super::FileLog`] and [`super::MemoryLog`].
#[derive(Debug)]
pub struct LogCore<S: Storage> {
    pub(crate) storage: S,
    pub(crate) config: LogConfig,
    epochs: EpochCache,
    persisted_epochs: Option<Vec<EpochEntry>>,
    log_start: i64,
    high_watermark: i64,
    snapshots: BTreeMap<OffsetAndEpoch, SnapshotMeta>,
    /// The snapshot download in progress, and whether that snapshot already exists (then the
    /// bytes go to memory and are only validated).
    download: Option<(SnapshotWriter, bool)>,
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
        log.truncate_to_latest_snapshot()?;
        log.persist_epochs()?;
        Ok(log)
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
    /// Size of a retained snapshot.
    pub fn snapshot_size(&self, id: OffsetAndEpoch) -> Option<u64> {
        self.snapshots.get(&id).map(|m| m.size)
    }
    pub fn snapshot_ids(&self) -> Vec<OffsetAndEpoch> {
        self.snapshots.keys().copied().collect()
    }

    /// Writes the leader-epoch checkpoint if the durable part of the cache changed.
    fn persist_epochs(&mut self) -> Result<()> {
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

    /// Forgets (and deletes) the snapshots older than `id`.
    fn remove_snapshots_before(&mut self, id: OffsetAndEpoch) -> Result<()> {
        let older: Vec<OffsetAndEpoch> = self.snapshots.range(..id).map(|(k, _)| *k).collect();
        for old in older {
            self.snapshots.remove(&old);
            self.storage.delete_snapshot(old)?;
        }
        Ok(())
    }

    /// Java's `cleanSnapshots`: for consecutive snapshots (S, next), while `should_go(S)`, move
    /// the log start to `next`; stop at the first that may stay or whose move deletes nothing.
    fn clean_snapshots(
        &mut self,
        mut should_go: impl FnMut(&Self, OffsetAndEpoch) -> bool,
    ) -> Result<bool> {
        let ids = self.snapshot_ids();
        let mut cleaned = false;
        for pair in ids.windows(2) {
            if !should_go(self, pair[0]) || !self.delete_before_snapshot(pair[1])? {
                break;
            }
            cleaned = true;
        }
        Ok(cleaned)
    }
}

/// The operations of the metadata log. The raft core reaches them through
/// `raft::RaftLog`, implemented once for every `LogCore` (src/raft/log_core.rs).
impl<S: Storage> LogCore<S> {
    pub fn append_bytes_as_leader(&mut self, batches: &[u8], epoch: i32) -> Result<LogAppendInfo> {
        self.append(batches, Appender::Leader(epoch))
    }

    pub fn append_bytes_as_follower(
        &mut self,
        batches: &[u8],
        epoch: i32,
    ) -> Result<LogAppendInfo> {
        self.append(batches, Appender::Follower(epoch))
    }

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

    pub fn last_fetched_epoch(&self) -> i32 {
        match self.epochs.latest_epoch() {
            Some(e) => e,
            None => self.latest_snapshot_id().map_or(0, |s| s.epoch),
        }
    }

    pub fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
        let end = self.storage.end_offset();
        match (
            self.epochs.end_offset_for(epoch, end),
            self.earliest_snapshot_id(),
        ) {
            (Some((e, o)), Some(s)) if o == s.offset && e == epoch => s,
            (Some((e, o)), _) => OffsetAndEpoch::new(o, e),
            (None, _) => OffsetAndEpoch::new(end, self.last_fetched_epoch()),
        }
    }

    pub fn epoch_for_offset(&self, offset: i64) -> Option<i32> {
        if offset >= self.log_start && offset < self.storage.end_offset() {
            return self.epochs.epoch_for_offset(offset);
        }
        self.earliest_snapshot_id()
            .filter(|s| offset == s.offset - 1 && offset < self.log_start)
            .map(|s| s.epoch)
    }

    pub fn end_offset(&self) -> i64 {
        self.storage.end_offset()
    }

    pub fn flushed_offset(&self) -> i64 {
        self.storage.flushed_offset()
    }

    pub fn high_watermark(&self) -> i64 {
        self.high_watermark
    }

    pub fn update_high_watermark(&mut self, offset: i64) {
        self.high_watermark = offset.clamp(self.log_start, self.storage.end_offset());
    }

    pub fn start_offset(&self) -> i64 {
        self.log_start
    }

    pub fn initialize_leader_epoch(&mut self, epoch: i32) -> Result<()> {
        self.epochs.assign(epoch, self.storage.end_offset());
        Ok(())
    }

    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        if offset < self.high_watermark {
            return Err(LogError::InvalidState(format!(
                "cannot truncate the metadata log to offset {offset}, below the high watermark {}",
                self.high_watermark
            )));
        }
        let end = self.storage.truncate_to(offset)?;
        self.epochs.truncate_from_end(end);
        self.persist_epochs()
    }

    pub fn truncate_to_latest_snapshot(&mut self) -> Result<bool> {
        let Some(latest) = self.latest_snapshot_id() else {
            return Ok(false);
        };
        let end = self.storage.end_offset();
        if self.epochs.latest_epoch().is_none() && end == latest.offset && self.log_start == end {
            return Ok(false); // already an empty log at the snapshot: nothing to truncate
        }
        let log_epoch = self.epochs.latest_epoch().unwrap_or(0);
        let ahead = latest.epoch > log_epoch
            || (latest.epoch == log_epoch && latest.offset > self.storage.end_offset());
        if !ahead {
            return Ok(false);
        }
        tracing::info!(
            "Truncating the metadata log fully to the latest snapshot {latest}, which is ahead of its end offset {}",
            self.storage.end_offset()
        );
        self.storage.truncate_fully_and_start_at(latest.offset)?;
        self.epochs.clear();
        self.log_start = latest.offset;
        self.high_watermark = latest.offset;
        self.remove_snapshots_before(latest)?;
        self.persist_epochs()?;
        Ok(true)
    }

    pub fn delete_before_snapshot(&mut self, id: OffsetAndEpoch) -> Result<bool> {
        let Some(latest) = self.latest_snapshot_id() else {
            return Ok(false);
        };
        if !self.snapshots.contains_key(&id)
            || self.log_start >= id.offset
            || id.offset > latest.offset
            || id.offset > self.high_watermark
        {
            return Ok(false);
        }
        self.log_start = id.offset;
        self.epochs.truncate_from_start(id.offset);
        let deleted = self.storage.delete_below(id.offset)?;
        self.remove_snapshots_before(id)?;
        self.persist_epochs()?;
        Ok(deleted > 0)
    }

    pub fn flush(&mut self) -> Result<()> {
        self.storage.flush()?;
        self.persist_epochs()
    }

    pub fn apply_retention(&mut self, now_ms: i64) -> Result<bool> {
        let mut cleaned = false;
        if self.config.retention_bytes >= 0 {
            let limit = self.config.retention_bytes as u64;
            let mut snapshot_total: u64 = self.snapshots.values().map(|m| m.size).sum();
            cleaned |= self.clean_snapshots(|log, id| {
                let size = log.snapshots[&id].size;
                if log.storage.size() + snapshot_total > limit {
                    snapshot_total -= size;
                    true
                } else {
                    false
                }
            })?;
        }
        if self.config.retention_ms >= 0 {
            let retention = self.config.retention_ms;
            cleaned |= self.clean_snapshots(|log, id| {
                now_ms - log.snapshots[&id].last_contained_log_timestamp > retention
            })?;
        }
        Ok(cleaned)
    }

    pub fn create_new_snapshot(&mut self, id: OffsetAndEpoch) -> Result<Option<SnapshotWriter>> {
        if id.offset < self.log_start {
            tracing::info!(
                "Not creating snapshot {id}: it is below the log start offset {}",
                self.log_start
            );
            return Ok(None);
        }
        if id.offset > self.high_watermark {
            return Err(LogError::InvalidState(format!(
                "cannot create a snapshot with an id ({id}) greater than the high watermark ({})",
                self.high_watermark
            )));
        }
        match self.validate_offset_and_epoch(id.offset, id.epoch)? {
            ValidOffsetAndEpoch::Valid(_) => {}
            other => {
                return Err(LogError::InvalidState(format!(
                    "snapshot id {id} is not valid for the log: {other:?}"
                )))
            }
        }
        if !self.storage.is_batch_boundary(id.offset) {
            return Err(LogError::InvalidState(format!(
                "snapshot id {id} does not end at a batch boundary"
            )));
        }
        self.create_new_snapshot_unchecked(id)
    }

    pub fn create_new_snapshot_unchecked(
        &mut self,
        id: OffsetAndEpoch,
    ) -> Result<Option<SnapshotWriter>> {
        if self.snapshots.contains_key(&id) {
            return Ok(None);
        }
        self.storage.create_snapshot(id).map(Some)
    }

    pub fn freeze_snapshot(&mut self, writer: SnapshotWriter) -> Result<()> {
        let id = writer.id();
        let meta = self.storage.freeze_snapshot(writer)?;
        self.snapshots.insert(id, meta);
        Ok(())
    }

    pub fn open_snapshot(&self, id: OffsetAndEpoch) -> Result<Option<SnapshotReader>> {
        if !self.snapshots.contains_key(&id) {
            return Ok(None);
        }
        self.storage.open_snapshot(id).map(Some)
    }

    pub fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshots.keys().next_back().copied()
    }

    pub fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshots.keys().next().copied()
    }

    pub fn latest_snapshot(&self) -> Result<Option<SnapshotReader>> {
        match self.latest_snapshot_id() {
            Some(id) => self.open_snapshot(id),
            None => Ok(None),
        }
    }

    /// Kafka's `validateOffsetAndEpoch` for a follower fetching at (`offset`, `epoch`).
    pub fn validate_offset_and_epoch(
        &self,
        offset: i64,
        epoch: i32,
    ) -> Result<ValidOffsetAndEpoch> {
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
    pub fn truncate_to_end_offset(&mut self, end: OffsetAndEpoch) -> Result<i64> {
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

    /// Starts downloading snapshot `id` from the leader (Kafka's `createNewSnapshotUnchecked`:
    /// a `.part` file), replacing any download in progress. A download of a snapshot that
    /// already exists goes to memory and is only validated.
    pub fn begin_snapshot_download(&mut self, id: OffsetAndEpoch) -> Result<()> {
        self.download = None; // dropping a writer removes its .part
        self.download = Some(match self.create_new_snapshot_unchecked(id)? {
            Some(writer) => (writer, false),
            None => (SnapshotWriter::memory(id), true),
        });
        Ok(())
    }

    /// The download in progress and the bytes received so far.
    pub fn snapshot_download(&self) -> Option<(OffsetAndEpoch, u64)> {
        let (w, _) = self.download.as_ref()?;
        Some((w.id(), w.size_in_bytes()))
    }

    /// Appends the next chunk of the download in progress.
    pub fn append_snapshot_download(&mut self, bytes: &[u8]) -> Result<()> {
        match &mut self.download {
            Some((w, _)) => w.append(bytes),
            None => Err(LogError::InvalidState(
                "no snapshot download is in progress".into(),
            )),
        }
    }

    /// Validates, makes durable and publishes the finished download. Ends it either way.
    pub fn complete_snapshot_download(&mut self) -> Result<OffsetAndEpoch> {
        let (w, existing) = self
            .download
            .take()
            .ok_or_else(|| LogError::InvalidState("no snapshot download is in progress".into()))?;
        let id = w.id();
        if existing {
            w.freeze_memory().map(|_| ())?;
        } else {
            self.freeze_snapshot(w)?;
        }
        Ok(id)
    }

    /// Abandons the download in progress (deletes its `.part`).
    pub fn abort_snapshot_download(&mut self) {
        self.download = None;
    }
}
