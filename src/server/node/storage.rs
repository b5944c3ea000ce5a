//! The raft core's storage traits over the real metadata log directory: [`DiskLog`] is
//! `raft::RaftLog` over a [`FileLog`] (`__cluster_metadata-0`), [`DiskQuorumStateStore`] is
//! `raft::QuorumStateStore` over its `quorum-state` file.
//!
//! `DiskLog` answers as `raft::MemLog` (the reference semantics) does. Where `FileLog` differs
//! it bridges: `last_fetched_epoch`, `end_offset_for_epoch` and the snapshot order (raft's
//! `OffsetAndEpoch` compares epoch first, `log`'s offset first) are computed here from
//! `FileLog`'s epoch entries and snapshot ids; the trait's preconditions are checked here, so
//! `FileLog` only fails on I/O; `FileLog`'s own high watermark is raised as the core vouches.
//!
//! I/O errors are fatal ([`fatal_io`]), as Kafka halts on a storage error; corrupt bytes are
//! never a panic: reads stop at the first batch that does not decode.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::error;

use crate::log::quorum_state::{
    ElectionState as FileElectionState, FileQuorumStateStore, QuorumStateStore as _,
    ReplicaKey as FileReplicaKey,
};
use crate::log::{
    FileLog, Isolation, LogConfig, LogError as StoreError, ReplicatedLog, SnapshotReader,
    SnapshotWriter,
};
use crate::protocol::records::split_batches;
use crate::raft::convert::records::{decode_batches, encode_batches};
pub use crate::raft::convert::snapshot::{decode_snapshot, encode_snapshot};
use crate::raft::log::{Batch, LogError, RaftLog, SnapshotContents};
use crate::raft::quorum_state::{ElectionState, QuorumStateStore};
use crate::raft::types::{Epoch, NodeId, Offset, OffsetAndEpoch, ReplicaKey};

/// Bytes asked of `FileLog` per read call, so that `read(start, usize::MAX)` (the start-up
/// replay of the whole log) never holds more than this plus one batch of raw bytes at a time.
const READ_CHUNK: usize = 1 << 20;

/// Logs why the metadata log cannot go on and exits with status 1. Kafka halts the process on
/// a storage error in the raft thread (an fsync that failed may have lost data the quorum
/// counts on), and so does kraftd: `op` names the operation, `err` the file and the cause.
pub fn fatal_io(op: &str, err: &StoreError) -> ! {
    error!(
        target: "kraftd::raft",
        "Halting: the metadata log could not {op}: {err}"
    );
    std::process::exit(1)
}

/// `r`'s value; on an error, [`fatal_io`] for the operation `op()` names.
fn or_halt<T>(r: Result<T, StoreError>, op: impl FnOnce() -> String) -> T {
    r.unwrap_or_else(|e| fatal_io(&op(), &e))
}

fn wall_clock_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// `raft::RaftLog` over the file-backed metadata log.
#[derive(Debug)]
pub struct DiskLog {
    log: FileLog,
    /// The download in progress: a `.part` file, or a memory buffer that is only validated
    /// when the snapshot already exists (`true`).
    download: Option<(SnapshotWriter, bool)>,
}

impl DiskLog {
    /// Wraps an opened (recovered) log.
    pub fn new(log: FileLog) -> DiskLog {
        DiskLog {
            log,
            download: None,
        }
    }

    /// Opens (creating if needed) the partition directory `dir` (`.../__cluster_metadata-0`).
    /// The caller holds the metadata log directory's lock.
    pub fn open(dir: &Path, config: LogConfig) -> Result<DiskLog, StoreError> {
        FileLog::open(dir, config).map(DiskLog::new)
    }

    pub fn file_log(&self) -> &FileLog {
        &self.log
    }

    /// Tells the log the raft high watermark. `FileLog` needs it for retention
    /// ([`DiskLog::apply_retention`] never moves the log start above it).
    pub fn update_high_watermark(&mut self, offset: Offset) {
        self.log.update_high_watermark(offset);
    }

    /// Applies `metadata.max.retention.bytes`/`.ms` (Kafka's `maybeClean`): deletes old
    /// snapshots and the segments they cover, up to the high watermark. Returns whether the log
    /// start moved. The raft core reaches it through `RaftLog::maybe_clean` (`Raft::maybe_clean`),
    /// which also trims its voter history.
    pub fn apply_retention(&mut self, now_ms: i64) -> bool {
        or_halt(self.log.maybe_clean(now_ms), || "apply retention".into())
    }

    fn snapshot_reader(&self, id: OffsetAndEpoch) -> Option<SnapshotReader> {
        or_halt(self.log.read_snapshot(id), || format!("open snapshot {id}"))
    }

    /// Snapshot ids in the raft order (epoch, then offset).
    fn snapshot_ids(&self) -> impl Iterator<Item = OffsetAndEpoch> {
        self.log.snapshot_ids().into_iter()
    }

    fn latest_epoch(&self) -> Option<Epoch> {
        self.log.epoch_entries().last().map(|e| e.epoch)
    }

    /// The trait's append rules (those of `MemLog`), so that `FileLog` sees only valid input.
    fn check_append(batch: &Batch, expected: Offset, last: Option<Epoch>) -> Result<(), LogError> {
        if batch.record_count() == 0 {
            return Err(LogError::EmptyBatch);
        }
        if batch.base_offset != expected {
            return Err(LogError::NonContiguous {
                expected,
                got: batch.base_offset,
            });
        }
        match last {
            Some(last) if batch.epoch < last => Err(LogError::EpochRegression {
                last,
                got: batch.epoch,
            }),
            _ => Ok(()),
        }
    }

    /// What `FileLog` refused although the trait's checks passed: a batch it cannot store
    /// (too large, negative epoch, bad CRC in supplied bytes). `raft::LogError` has no
    /// storage variant, so this travels as its one free-text error.
    fn refused(what: &str, e: impl std::fmt::Display) -> LogError {
        error!(target: "kraftd::raft", "The metadata log refused {what}: {e}");
        LogError::Download(format!("the metadata log refused {what}: {e}"))
    }

    fn append(&mut self, batches: &[Batch], leader: bool) -> Result<(), LogError> {
        let mut bytes = Vec::new();
        encode_batches(batches, &mut bytes).map_err(|e| Self::refused("an append", e))?;
        let epoch = batches.iter().map(|b| b.epoch).max().unwrap_or(0);
        let result = if leader {
            self.log.append_as_leader(&bytes, epoch)
        } else {
            self.log.append_as_follower(&bytes, epoch)
        };
        match result {
            Ok(_) => Ok(()),
            Err(e @ StoreError::Io { .. }) => fatal_io("append", &e),
            Err(e) => Err(Self::refused("an append", e)),
        }
    }

    /// Decodes the whole batches of `bytes` (raw log bytes from `from`), stopping at the first
    /// one that does not decode. Returns the batches and whether all of `bytes` decoded.
    fn decode_valid(&self, bytes: &[u8]) -> (Vec<Batch>, bool) {
        let split = split_batches(bytes);
        let mut out = Vec::with_capacity(split.batches.len());
        for view in &split.batches {
            match decode_batches(view.bytes()) {
                Ok(mut one) if one.len() == 1 => out.push(one.remove(0)),
                Ok(_) => return (out, false),
                Err(e) => {
                    error!(
                        target: "kraftd::raft",
                        "Unreadable batch at offset {} of the metadata log in {}: {e}; reading stops before it",
                        view.base_offset(),
                        self.log.dir().display()
                    );
                    return (out, false);
                }
            }
        }
        (out, split.end.is_clean())
    }
}

impl RaftLog for DiskLog {
    fn maybe_clean(&mut self, now_ms: i64, high_watermark: Offset) -> bool {
        self.update_high_watermark(high_watermark);
        self.apply_retention(now_ms)
    }

    fn start_offset(&self) -> Offset {
        self.log.start_offset()
    }

    fn end_offset(&self) -> Offset {
        self.log.end_offset()
    }

    fn flushed_end_offset(&self) -> Offset {
        // A log start moved above the flushed offset is covered by its snapshot (durable).
        let (start, end) = (self.log.start_offset(), self.log.end_offset());
        self.log.flushed_offset().clamp(start, end.max(start))
    }

    fn last_fetched_epoch(&self) -> Epoch {
        if let Some(e) = self.latest_epoch() {
            return e;
        }
        // Unlike FileLog, an empty log takes the snapshot's epoch only if it starts there.
        match self.latest_snapshot_id() {
            Some(s) if s.offset == self.start_offset() && s.offset == self.end_offset() => s.epoch,
            _ => 0,
        }
    }

    fn end_offset_for_epoch(&self, epoch: Epoch) -> OffsetAndEpoch {
        let entries = self.log.epoch_entries();
        let leo = self.end_offset();
        let found = match entries.last() {
            Some(latest) if latest.epoch == epoch => Some(OffsetAndEpoch::new(leo, epoch)),
            _ => entries.iter().find(|e| e.epoch > epoch).map(|higher| {
                let floor = entries.iter().rev().find(|e| e.epoch <= epoch);
                OffsetAndEpoch::new(higher.start_offset, floor.map_or(epoch, |f| f.epoch))
            }),
        };
        match found {
            None => OffsetAndEpoch::new(leo, self.last_fetched_epoch()),
            Some(f) => match self.earliest_snapshot_id() {
                Some(s) if f.offset == s.offset && f.epoch == epoch => s,
                _ => f,
            },
        }
    }

    fn append_as_leader(&mut self, batch: Batch) -> Result<(), LogError> {
        // No initialize_leader_epoch: FileLog's append records a new epoch at the batch's base
        // offset itself, exactly where MemLog records it; initializing first would leave an
        // epoch entry behind if the append were refused.
        Self::check_append(&batch, self.end_offset(), self.latest_epoch())?;
        self.append(std::slice::from_ref(&batch), true)
    }

    fn append_as_follower(&mut self, batches: Vec<Batch>) -> Result<(), LogError> {
        let (mut expected, mut last) = (self.end_offset(), self.latest_epoch());
        for b in &batches {
            Self::check_append(b, expected, last)?;
            expected = b.next_offset();
            last = Some(b.epoch);
        }
        if batches.is_empty() {
            return Ok(());
        }
        // encode_batches writes each batch's `encoded` bytes as they are: the leader's bytes.
        self.append(&batches, false)
    }

    fn read_for_fetch(&self, from: Offset, max_bytes: usize) -> Vec<Batch> {
        // One FileLog read: it never crosses a segment boundary, as Java's does not.
        let offset = from.max(self.start_offset());
        if offset >= self.end_offset() {
            return Vec::new();
        }
        match self
            .log
            .read(offset, Isolation::Uncommitted, max_bytes.min(READ_CHUNK))
        {
            Ok(info) => self.decode_valid(&info.records).0,
            Err(e @ StoreError::Io { .. }) => fatal_io("read", &e),
            Err(e) => {
                error!(target: "kraftd::raft", "Cannot read the metadata log at offset {offset}: {e}");
                Vec::new()
            }
        }
    }

    fn read(&self, from: Offset, max_bytes: usize) -> Vec<Batch> {
        let end = self.end_offset();
        let mut offset = from.max(self.start_offset());
        let (mut out, mut size) = (Vec::new(), 0usize);
        // FileLog reads at most one segment per call: loop until the budget or the end.
        while offset < end {
            let budget = max_bytes.saturating_sub(size).min(READ_CHUNK);
            if budget == 0 && !out.is_empty() {
                break;
            }
            let bytes = match self.log.read(offset, Isolation::Uncommitted, budget) {
                Ok(info) => info.records,
                Err(e @ StoreError::Io { .. }) => fatal_io("read", &e),
                Err(e) => {
                    error!(target: "kraftd::raft", "Cannot read the metadata log at offset {offset}: {e}");
                    break;
                }
            };
            if bytes.is_empty() {
                break;
            }
            let (batches, clean) = self.decode_valid(&bytes);
            if batches.is_empty() {
                break;
            }
            for b in batches {
                let s = b.size_in_bytes();
                if !out.is_empty() && size.saturating_add(s) > max_bytes {
                    return out;
                }
                size += s;
                offset = b.next_offset();
                out.push(b);
            }
            if !clean {
                break;
            }
        }
        out
    }

    fn truncate_to(&mut self, offset: Offset) {
        if offset >= self.end_offset() {
            return;
        }
        // FileLog refuses to go below its high watermark: the core never asks for that.
        or_halt(self.log.truncate_to(offset), || {
            format!("truncate to {offset}")
        });
    }

    fn flush(&mut self) {
        or_halt(self.log.flush(), || "flush".into());
    }

    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshot_ids().max()
    }

    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshot_ids().min()
    }

    fn read_snapshot(&self, id: OffsetAndEpoch) -> Option<SnapshotContents> {
        let reader = self.snapshot_reader(id)?;
        let bytes = or_halt(reader.read_all(), || format!("read snapshot {id}"));
        match decode_snapshot(id, &bytes) {
            Ok(c) => Some(c),
            Err(why) => {
                error!(
                    target: "kraftd::raft",
                    "Snapshot {} in {} cannot be read: {why}",
                    crate::log::snapshot::file_name(id),
                    self.log.dir().display()
                );
                None
            }
        }
    }

    fn snapshot_size(&self, id: OffsetAndEpoch) -> Option<u64> {
        self.snapshot_reader(id).map(|r| r.size_in_bytes())
    }

    fn read_snapshot_chunk(
        &self,
        id: OffsetAndEpoch,
        position: u64,
        max_bytes: usize,
    ) -> Option<Vec<u8>> {
        let reader = self.snapshot_reader(id)?;
        if position >= reader.size_in_bytes() {
            return None;
        }
        let chunk = reader.read(position, max_bytes.max(1));
        Some(or_halt(chunk, || format!("read snapshot {id}")))
    }

    fn create_snapshot(&mut self, contents: SnapshotContents) -> Result<(), LogError> {
        let id = contents.id;
        if self.snapshot_ids().any(|s| s == id) {
            return Err(LogError::SnapshotExists(id));
        }
        let bytes = encode_snapshot(&contents, wall_clock_ms(), self.log.config().max_batch_size)
            .map_err(|e| Self::refused(&format!("snapshot {id}"), e))?;
        // The core has checked the id (<= HW, valid, batch boundary); FileLog's checked path
        // would compare it with FileLog's own HW, which the core does not maintain.
        let created = self.log.create_new_snapshot_unchecked(id);
        let Some(mut writer) = or_halt(created, || format!("create snapshot {id}")) else {
            return Err(LogError::SnapshotExists(id));
        };
        or_halt(writer.append(&bytes), || format!("write snapshot {id}"));
        match self.log.freeze_snapshot(writer) {
            Ok(()) => Ok(()),
            Err(e @ StoreError::Io { .. }) => fatal_io(&format!("freeze snapshot {id}"), &e),
            Err(e) => Err(Self::refused(&format!("snapshot {id}"), e)),
        }
    }

    fn begin_snapshot_download(&mut self, id: OffsetAndEpoch) {
        self.download = None; // dropping a writer removes its .part
        let created = self.log.create_new_snapshot_unchecked(id);
        self.download = Some(match or_halt(created, || format!("create snapshot {id}")) {
            Some(writer) => (writer, false),
            None => (SnapshotWriter::memory(id), true),
        });
    }

    fn snapshot_download(&self) -> Option<(OffsetAndEpoch, u64)> {
        let (w, _) = self.download.as_ref()?;
        Some((w.id(), w.size_in_bytes()))
    }

    fn append_snapshot_download(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        let Some((w, _)) = &mut self.download else {
            return Err(LogError::Download("no download in progress".into()));
        };
        or_halt(w.append(bytes), || "write a downloaded snapshot".into());
        Ok(())
    }

    fn complete_snapshot_download(&mut self) -> Result<OffsetAndEpoch, LogError> {
        let (w, existing) = self
            .download
            .take()
            .ok_or_else(|| LogError::Download("no download in progress".into()))?;
        let id = w.id();
        let result = if existing {
            w.freeze_memory().map(|_| ())
        } else {
            self.log.freeze_snapshot(w)
        };
        match result {
            Ok(()) => Ok(id),
            Err(e @ StoreError::Io { .. }) => fatal_io(&format!("freeze snapshot {id}"), &e),
            Err(e) => Err(LogError::Download(format!(
                "bytes of {id} are not that snapshot: {e}"
            ))),
        }
    }

    fn abort_snapshot_download(&mut self) {
        self.download = None;
    }

    fn truncate_to_latest_snapshot(&mut self) -> bool {
        let Some(latest) = self.latest_snapshot_id() else {
            return false;
        };
        // MemLog's rule: FileLog's counts an empty log as epoch 0 even when it starts at the
        // latest snapshot, and would "truncate" (and report it) for nothing.
        let last = self.last_fetched_epoch();
        if !(latest.epoch > last || (latest.epoch == last && latest.offset > self.end_offset())) {
            return false;
        }
        or_halt(self.log.truncate_to_latest_snapshot(), || {
            "truncate to the latest snapshot".into()
        })
    }

    fn delete_before_snapshot(&mut self, id: OffsetAndEpoch) -> bool {
        if !self.snapshot_ids().any(|s| s == id)
            || id.offset <= self.start_offset()
            || id.offset > self.end_offset()
        {
            return false;
        }
        // The caller guarantees id.offset <= HW; FileLog checks that against its own.
        if self.log.high_watermark() < id.offset {
            self.log.update_high_watermark(id.offset);
        }
        or_halt(self.log.delete_before_snapshot(id), || {
            format!("delete the log before snapshot {id}")
        });
        self.start_offset() == id.offset
    }
}

/// `raft::QuorumStateStore` over `__cluster_metadata-0/quorum-state`, in Java's format: data
/// version 0 at kraft.version 0 (with the static voter ids as `currentVoters`, and no voted
/// directory id, as Java drops it there), 1 at kraft.version 1. Writes are atomic and durable
/// (tmp, fsync, rename, fsync the directory); a failed write is fatal, as in Kafka.
#[derive(Debug)]
pub struct DiskQuorumStateStore {
    file: FileQuorumStateStore,
    static_voter_ids: Vec<NodeId>,
    /// The last state read or written (what `read` answers without touching the disk).
    current: Option<ElectionState>,
}

impl DiskQuorumStateStore {
    /// Reads the existing file (Java's or kraftd's). An unreadable file is an error: starting
    /// from epoch 0 could vote twice in an epoch.
    pub fn open(
        file: FileQuorumStateStore,
        static_voter_ids: Vec<NodeId>,
    ) -> Result<DiskQuorumStateStore, StoreError> {
        let current = file.read()?.map(|f| ElectionState {
            epoch: f.state.epoch,
            leader_id: f.state.leader_id,
            voted_key: f
                .state
                .voted_key
                .map(|k| ReplicaKey::new(k.id, k.directory_id)),
        });
        Ok(DiskQuorumStateStore {
            file,
            static_voter_ids,
            current,
        })
    }

    /// [`DiskQuorumStateStore::open`], halting on an unreadable file (Java refuses to start).
    pub fn new(file: FileQuorumStateStore, static_voter_ids: Vec<NodeId>) -> DiskQuorumStateStore {
        DiskQuorumStateStore::open(file, static_voter_ids)
            .unwrap_or_else(|e| fatal_io("read quorum-state", &e))
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

impl QuorumStateStore for DiskQuorumStateStore {
    fn read(&self) -> Option<ElectionState> {
        self.current.clone()
    }

    fn write(&mut self, state: &ElectionState, kraft_version: i16) {
        let data_version = if kraft_version >= 1 { 1 } else { 0 };
        let file_state = FileElectionState {
            epoch: state.epoch,
            leader_id: state.leader_id,
            voted_key: state.voted_key.map(|k| FileReplicaKey {
                id: k.id,
                directory_id: k.directory_id.filter(|_| data_version == 1),
            }),
            voters: if data_version == 0 {
                self.static_voter_ids.clone()
            } else {
                Vec::new()
            },
        };
        or_halt(self.file.write(&file_state, data_version), || {
            "write quorum-state".into()
        });
        self.current = Some(state.clone());
    }
}

#[cfg(test)]
#[path = "storage_tests.rs"]
mod storage_tests;
