//! The file-backed metadata log: `<metadata.log.dir>/__cluster_metadata-0`.
//!
//! Opening does what Java's `KafkaRaftLog.createLog` does on every start (Java always treats
//! the metadata log as uncleanly shut down): recover every segment (CRC, contiguous offsets;
//! cut a torn or corrupt tail, delete later segments), rebuild the leader-epoch cache from the
//! batches, remove `.part`/`.deleted` snapshot leftovers and snapshots below the log start,
//! check that a log starting above 0 has a snapshot covering its start, and truncate to the
//! latest snapshot if it is ahead of the log. kraftd also validates every retained snapshot
//! (CRCs, header and footer) and refuses to open with a corrupt one, naming the file.
//!
//! The caller holds the metadata log directory's [`super::DirLock`].

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::core::{LogConfig, LogCore};
use super::epoch_cache::{self, EpochCache, EpochEntry};
use super::error::{LogError, Result};
use super::fsutil;
use super::fsync_latency::FsyncLatency;
use super::partition_metadata;
use super::segment::BatchMeta;
use super::segment_log::{OpenReport, SegmentLog};
use super::snapshot::OffsetAndEpoch;
use super::snapshot_io::{self, RawSnapshotReader, RawSnapshotWriter};
use super::storage::{SnapshotMeta, Storage};

/// The metadata partition's directory name.
pub const PARTITION_DIR_NAME: &str = "__cluster_metadata-0";

/// The metadata log in files.
pub type FileLog = LogCore<FileStorage>;

#[derive(Debug)]
pub struct FileStorage {
    dir: PathBuf,
    segments: SegmentLog,
    report: OpenReport,
}

impl FileLog {
    /// Opens (creating if needed) the partition directory `dir`, recovering it.
    pub fn open(dir: &Path, config: LogConfig) -> Result<FileLog> {
        if !dir.exists() {
            fs::create_dir_all(dir).map_err(LogError::io("create", dir))?;
            fsutil::fsync_dir(fsutil::parent_dir(dir))?;
        }
        partition_metadata::ensure(dir, &partition_metadata::METADATA_TOPIC_ID)?;
        let mut epochs = EpochCache::new();
        let (segments, report) = SegmentLog::open(dir, config.roll, |m: &BatchMeta| {
            if epochs.latest_epoch().is_some_and(|e| m.epoch < e) {
                tracing::warn!(
                    "batch at offset {} has epoch {}, below the previous batch's {:?}; ignored by the epoch cache",
                    m.base_offset,
                    m.epoch,
                    epochs.latest_epoch()
                );
            } else {
                epochs.assign(m.epoch, m.base_offset);
            }
        })?;
        let log_start = segments.base_offset();
        let (ids, removed) = snapshot_io::list_and_clean(dir)?;
        for path in &removed {
            tracing::info!("Deleted unneeded snapshot file {}", path.display());
        }
        let mut snapshots = BTreeMap::new();
        for id in ids {
            if id.offset < log_start {
                snapshot_io::delete_file(dir, id)?;
                tracing::info!(
                    "Deleted snapshot {id}: it is below the log start offset {log_start}"
                );
                continue;
            }
            let meta = validate_snapshot(dir, id, log_start, segments.end_offset())?;
            snapshots.insert(id, meta);
        }
        let persisted = match epoch_cache::read_checkpoint(dir) {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!("{e}; rewriting it from the segments");
                None
            }
        };
        let storage = FileStorage {
            dir: dir.to_path_buf(),
            segments,
            report,
        };
        LogCore::assemble(storage, config, epochs, snapshots, persisted)
    }

    /// The partition directory.
    pub fn dir(&self) -> &Path {
        &self.storage.dir
    }

    /// What recovery repaired when the log was opened.
    pub fn open_report(&self) -> &OpenReport {
        &self.storage.report
    }

    pub fn segment_paths(&self) -> Vec<PathBuf> {
        self.storage.segments.segment_paths()
    }
}

fn validate_snapshot(
    dir: &Path,
    id: OffsetAndEpoch,
    log_start: i64,
    log_end: i64,
) -> Result<SnapshotMeta> {
    let path = dir.join(super::snapshot::file_name(id));
    match snapshot_io::validate_file(&path) {
        Ok(summary) => Ok(SnapshotMeta {
            size: fs::metadata(&path)
                .map_err(LogError::io("stat", &path))?
                .len(),
            last_contained_log_timestamp: summary.last_contained_log_timestamp,
        }),
        Err(LogError::Corrupt {
            path,
            position,
            reason,
        }) => {
            let advice = if id.offset == log_start && log_start > 0 {
                format!(
                    "it is the only copy of the records below the log start offset {log_start}; \
                     restore it, or replace this node's data by fetching from the leader"
                )
            } else if id.offset <= log_end && log_start == 0 {
                "the log still holds every record it covers: remove the file to let kraftd start"
                    .to_string()
            } else {
                "remove the file only if the log or a newer snapshot covers its records".to_string()
            };
            Err(LogError::Corrupt {
                path,
                position,
                reason: format!("{reason}; refusing to open the metadata log: {advice}"),
            })
        }
        Err(e) => Err(e),
    }
}

impl Storage for FileStorage {
    fn base_offset(&self) -> i64 {
        self.segments.base_offset()
    }
    fn end_offset(&self) -> i64 {
        self.segments.end_offset()
    }
    fn flushed_offset(&self) -> i64 {
        self.segments.flushed_offset()
    }
    fn size(&self) -> u64 {
        self.segments.size()
    }
    fn is_batch_boundary(&self, offset: i64) -> bool {
        self.segments.is_batch_boundary(offset)
    }
    fn append(&mut self, bytes: &[u8], metas: &[BatchMeta]) -> Result<()> {
        self.segments.append(bytes, metas)
    }
    fn read(&self, offset: i64, max_bytes: usize, upper_bound: i64) -> Result<Vec<u8>> {
        self.segments.read(offset, max_bytes, upper_bound)
    }
    fn truncate_to(&mut self, offset: i64) -> Result<i64> {
        self.segments.truncate_to(offset)
    }
    fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<()> {
        self.segments.truncate_fully_and_start_at(offset)
    }
    fn delete_below(&mut self, offset: i64) -> Result<usize> {
        self.segments.delete_segments_below(offset)
    }
    fn flush(&mut self) -> Result<()> {
        self.segments.flush()
    }
    fn fsync_latency(&self) -> Option<&FsyncLatency> {
        Some(self.segments.fsync_latency())
    }
    fn write_epoch_checkpoint(&mut self, entries: &[EpochEntry]) -> Result<()> {
        epoch_cache::write_checkpoint(&self.dir, entries)
    }
    fn create_snapshot(&mut self, id: OffsetAndEpoch) -> Result<RawSnapshotWriter> {
        RawSnapshotWriter::create_file(&self.dir, id)
    }
    fn freeze_snapshot(&mut self, writer: RawSnapshotWriter) -> Result<SnapshotMeta> {
        let size = writer.size_in_bytes();
        let (_, summary) = writer.freeze_file(&self.dir)?;
        Ok(SnapshotMeta {
            size,
            last_contained_log_timestamp: summary.last_contained_log_timestamp,
        })
    }
    fn open_snapshot(&self, id: OffsetAndEpoch) -> Result<RawSnapshotReader> {
        RawSnapshotReader::open_file(&self.dir, id)
    }
    fn segment_bases(&self) -> Vec<i64> {
        self.segments.segment_bases()
    }
    fn segment_path(&self, offset: i64) -> PathBuf {
        let bases = self.segments.segment_bases();
        let base = bases.iter().rev().find(|&&b| b <= offset).or(bases.first());
        self.dir
            .join(super::segment::file_name(base.copied().unwrap_or(0)))
    }
    fn delete_snapshot(&mut self, id: OffsetAndEpoch) -> Result<()> {
        tracing::info!("Deleting snapshot {id} (older than the log start offset)");
        snapshot_io::delete_file(&self.dir, id)
    }
}
