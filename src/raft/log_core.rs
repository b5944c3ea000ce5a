//! The one implementation of [`RaftLog`]: Kafka's `KafkaRaftLog` over the state of
//! `log::LogCore` (stored batches, epoch cache, log start offset, high watermark, retained
//! snapshots) and any `log::storage::Storage`. Each rule is one trait method here (truncation,
//! snapshots, downloads, retention in `log_retention.rs`); `LogCore` keeps no method of the
//! same name. Typed batches become their v2 bytes and back, and every storage fault names its
//! operation. Files in production (`log::FileLog`), memory in tests and the simulation
//! (`MemLog`).

use super::convert::records::{decode_batches, encode_batches};
use super::log::{Batch, LogError, RaftLog, SnapshotHeader};
use super::snapshot_reader::SnapshotReader;
use super::snapshot_writer::SnapshotWriter;
use super::types::{Epoch, Offset, OffsetAndEpoch};
use crate::log::core::SnapshotDownload;
use crate::log::fsync_latency::FsyncLatency;
use crate::log::storage::Storage;
use crate::log::{Isolation, LogCore, LogError as StorageError, RawSnapshotWriter};
use crate::protocol::records::{split_batches, BatchView};

/// Bytes asked of the storage per read call, so that a read of the whole log never holds more
/// than this plus one batch of raw bytes at a time.
const READ_CHUNK: usize = 1 << 20;

/// A closure naming the operation of a storage error. A segment-size refusal stays a refusal.
pub(super) fn during(operation: &'static str) -> impl FnOnce(StorageError) -> LogError {
    move |source| match source {
        StorageError::LargerThanSegment {
            size,
            segment_bytes,
        } => LogError::LargerThanSegment {
            size,
            segment_bytes,
        },
        source => LogError::Storage { operation, source },
    }
}

/// The trait's append rules, checked before any byte is encoded.
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

/// Steps of the trait's operations (none is an operation of the trait itself).
impl<S: Storage> LogCore<S> {
    fn append_batches(&mut self, batches: &[Batch], leader: bool) -> Result<(), LogError> {
        let mut bytes = Vec::new();
        encode_batches(batches, &mut bytes).map_err(|e| {
            LogError::Refused(StorageError::InvalidAppend(format!(
                "the batches do not encode: {e}"
            )))
        })?;
        let epoch = batches.iter().map(|b| b.epoch).max().unwrap_or(0);
        let appended = if leader {
            self.append_bytes_as_leader(&bytes, epoch)
        } else {
            self.append_bytes_as_follower(&bytes, epoch)
        };
        match appended {
            Ok(_) => Ok(()),
            Err(e @ StorageError::InvalidAppend(_)) => Err(LogError::Refused(e)),
            Err(e) => Err(during("append to the metadata log")(e)),
        }
    }

    /// One batch read from storage, decoded. Bytes below the end offset that do not decode are a
    /// fault naming the offset and the segment: nothing is skipped.
    fn decode_stored(&self, view: &BatchView<'_>) -> Result<Batch, LogError> {
        let offset = view.base_offset();
        let undecodable = |reason: String| LogError::UndecodableBatch {
            offset,
            file: self.storage.segment_path(offset),
            reason,
        };
        match decode_batches(view.bytes()) {
            Ok(mut one) if one.len() == 1 => Ok(one.remove(0)),
            Ok(_) => Err(undecodable("not exactly one batch".into())),
            Err(e) => Err(undecodable(e.to_string())),
        }
    }

    /// The stored bytes from the batch holding `offset`, one segment at most, as views handed
    /// to `visit`; a torn or corrupt end below the log end offset is a fault.
    fn scan_one_segment(
        &self,
        offset: Offset,
        max_bytes: usize,
        mut visit: impl FnMut(&BatchView<'_>) -> Result<(), LogError>,
    ) -> Result<Option<Offset>, LogError> {
        let info = self
            .read_bytes(offset, Isolation::Uncommitted, max_bytes.min(READ_CHUNK))
            .map_err(during("read the metadata log"))?;
        let split = split_batches(&info.records);
        let mut next = None;
        for view in &split.batches {
            visit(view)?;
            next = Some(view.next_offset());
        }
        if !split.end.is_clean() {
            let at = next.unwrap_or(offset);
            return Err(LogError::UndecodableBatch {
                offset: at,
                file: self.storage.segment_path(at.max(0)),
                reason: format!("{:?}", split.end),
            });
        }
        Ok(next)
    }

    fn read_one_segment(&self, from: Offset, max_bytes: usize) -> Result<Vec<Batch>, LogError> {
        let offset = from.max(self.log_start);
        if offset >= self.storage.end_offset() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        self.scan_one_segment(offset, max_bytes, |view| {
            out.push(self.decode_stored(view)?);
            Ok(())
        })?;
        Ok(out)
    }
}

impl<S: Storage> RaftLog for LogCore<S> {
    fn start_offset(&self) -> Offset {
        self.log_start
    }

    fn end_offset(&self) -> Offset {
        self.storage.end_offset()
    }

    fn flushed_end_offset(&self) -> Offset {
        // A log start moved above the flushed offset is covered by its snapshot (durable).
        let (start, end) = (self.log_start, self.storage.end_offset());
        self.storage.flushed_offset().clamp(start, end.max(start))
    }

    fn fsync_latency(&self) -> Option<&FsyncLatency> {
        self.storage.fsync_latency()
    }

    fn last_fetched_epoch(&self) -> Epoch {
        match self.epochs.latest_epoch() {
            Some(e) => e,
            None => self.latest_snapshot_id().map_or(0, |s| s.epoch),
        }
    }

    fn end_offset_for_epoch(&self, epoch: Epoch) -> OffsetAndEpoch {
        let end = self.storage.end_offset();
        match (
            self.epochs.end_offset_for(epoch, end),
            self.earliest_snapshot_id(),
        ) {
            // The epoch ends where the log starts: Kafka answers with the snapshot's id.
            (Some((e, o)), Some(s)) if o == s.offset && e == epoch => s,
            (Some((e, o)), _) => OffsetAndEpoch::new(o, e),
            (None, _) => OffsetAndEpoch::new(end, self.last_fetched_epoch()),
        }
    }

    fn append_as_leader(&mut self, batch: Batch) -> Result<(), LogError> {
        check_append(&batch, self.end_offset(), self.epochs.latest_epoch())?;
        self.append_batches(std::slice::from_ref(&batch), true)
    }

    fn append_as_follower(&mut self, batches: Vec<Batch>) -> Result<(), LogError> {
        let (mut expected, mut last) = (self.end_offset(), self.epochs.latest_epoch());
        for b in &batches {
            check_append(b, expected, last)?;
            expected = b.next_offset();
            last = Some(b.epoch);
        }
        if batches.is_empty() {
            return Ok(());
        }
        // encode_batches writes each batch's `encoded` bytes as they are: the leader's bytes.
        self.append_batches(&batches, false)
    }

    fn read(&self, from: Offset, max_bytes: usize) -> Result<Vec<Batch>, LogError> {
        let end = self.end_offset();
        let mut offset = from.max(self.log_start);
        let (mut out, mut size) = (Vec::new(), 0usize);
        // Storage reads stop at a segment's end: loop until the budget or the end.
        while offset < end {
            let budget = max_bytes.saturating_sub(size);
            if budget == 0 && !out.is_empty() {
                break;
            }
            let batches = self.read_one_segment(offset, budget)?;
            if batches.is_empty() {
                break;
            }
            for b in batches {
                let s = b.size_in_bytes();
                if !out.is_empty() && size.saturating_add(s) > max_bytes {
                    return Ok(out);
                }
                size += s;
                offset = b.next_offset();
                out.push(b);
            }
        }
        Ok(out)
    }

    fn read_for_fetch(&self, from: Offset, max_bytes: usize) -> Result<Vec<Batch>, LogError> {
        self.read_one_segment(from, max_bytes)
    }

    fn read_control_batches(&self, from: Offset) -> Result<Vec<Batch>, LogError> {
        let end = self.end_offset();
        let mut offset = from.max(self.log_start);
        let mut out = Vec::new();
        while offset < end {
            let next = self.scan_one_segment(offset, READ_CHUNK, |view| {
                if view.is_control() {
                    out.push(self.decode_stored(view)?);
                }
                Ok(())
            })?;
            match next {
                Some(next) if next > offset => offset = next,
                _ => break,
            }
        }
        Ok(out)
    }

    fn truncate_to(&mut self, offset: Offset) -> Result<(), LogError> {
        if offset >= self.end_offset() {
            return Ok(());
        }
        let failed = during("truncate the metadata log");
        if offset < self.high_watermark {
            // Kafka throws: committed records are never removed.
            return Err(failed(StorageError::InvalidState(format!(
                "cannot truncate the metadata log to offset {offset}, below the high watermark {}",
                self.high_watermark
            ))));
        }
        match self.storage.truncate_to(offset) {
            Ok(end) => {
                self.epochs.truncate_from_end(end);
                self.persist_epochs()
                    .map_err(during("truncate the metadata log"))
            }
            Err(e) => Err(failed(e)),
        }
    }

    fn flush(&mut self) -> Result<(), LogError> {
        self.storage
            .flush()
            .and_then(|()| self.persist_epochs())
            .map_err(during("flush the metadata log"))
    }

    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshots.keys().next_back().copied()
    }

    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshots.keys().next().copied()
    }

    fn open_snapshot(&self, id: OffsetAndEpoch) -> Result<Option<SnapshotReader>, LogError> {
        if !self.snapshots.contains_key(&id) {
            return Ok(None);
        }
        let raw = self
            .storage
            .open_snapshot(id)
            .map_err(during("open a snapshot"))?;
        SnapshotReader::open(raw).map(Some)
    }

    fn snapshot_size(&self, id: OffsetAndEpoch) -> Option<u64> {
        self.snapshots.get(&id).map(|m| m.size)
    }

    fn read_snapshot_chunk(
        &self,
        id: OffsetAndEpoch,
        position: u64,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, LogError> {
        if !self.snapshots.contains_key(&id) {
            return Ok(None);
        }
        let raw = self
            .storage
            .open_snapshot(id)
            .map_err(during("open a snapshot"))?;
        if position >= raw.size_in_bytes() {
            return Ok(None);
        }
        let chunk = raw.read(position, max_bytes.max(1));
        chunk.map(Some).map_err(during("read a snapshot"))
    }

    fn create_snapshot(&mut self, header: SnapshotHeader) -> Result<SnapshotWriter, LogError> {
        if self.snapshots.contains_key(&header.id) {
            return Err(LogError::SnapshotExists(header.id));
        }
        let raw = self
            .storage
            .create_snapshot(header.id)
            .map_err(during("create a snapshot"))?;
        SnapshotWriter::start(raw, header, self.config.max_batch_size)
    }

    fn freeze_snapshot(&mut self, writer: SnapshotWriter) -> Result<(), LogError> {
        let id = writer.id();
        if self.snapshots.contains_key(&id) {
            return Err(LogError::SnapshotExists(id));
        }
        let raw = writer.finish()?;
        let meta = self
            .storage
            .freeze_snapshot(raw)
            .map_err(during("freeze a snapshot"))?;
        self.snapshots.insert(id, meta);
        Ok(())
    }

    fn begin_snapshot_download(&mut self, id: OffsetAndEpoch) -> Result<(), LogError> {
        self.download = None; // dropping a writer removes its .part
        let existing = self.snapshots.contains_key(&id);
        let writer = if existing {
            RawSnapshotWriter::memory(id)
        } else {
            self.storage
                .create_snapshot(id)
                .map_err(during("create a snapshot download"))?
        };
        self.download = Some(SnapshotDownload { writer, existing });
        Ok(())
    }

    fn snapshot_download(&self) -> Option<(OffsetAndEpoch, u64)> {
        let d = self.download.as_ref()?;
        Some((d.writer.id(), d.writer.size_in_bytes()))
    }

    fn append_snapshot_download(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        let Some(d) = &mut self.download else {
            return Err(LogError::NoDownload);
        };
        d.writer
            .append(bytes)
            .map_err(during("write a downloaded snapshot"))
    }

    fn complete_snapshot_download(&mut self) -> Result<OffsetAndEpoch, LogError> {
        let Some(SnapshotDownload { writer, existing }) = self.download.take() else {
            return Err(LogError::NoDownload);
        };
        let id = writer.id();
        let frozen = if existing {
            writer.freeze_memory().map(|_| None)
        } else {
            self.storage.freeze_snapshot(writer).map(Some)
        };
        match frozen {
            Ok(meta) => {
                if let Some(meta) = meta {
                    self.snapshots.insert(id, meta);
                }
                Ok(id)
            }
            Err(e @ StorageError::Io { .. }) => Err(during("freeze a downloaded snapshot")(e)),
            Err(e) => Err(LogError::NotTheSnapshot {
                id,
                reason: e.to_string(),
            }),
        }
    }

    fn abort_snapshot_download(&mut self) {
        self.download = None;
    }

    fn truncate_to_latest_snapshot(&mut self) -> Result<bool, LogError> {
        let Some(snapshot) = self.snapshot_ahead_of_log() else {
            return Ok(false);
        };
        self.restart_at_snapshot(snapshot)
            .map_err(during("truncate the metadata log to its latest snapshot"))?;
        Ok(true)
    }

    fn delete_before_snapshot(&mut self, id: OffsetAndEpoch) -> Result<bool, LogError> {
        if !self.snapshots.contains_key(&id)
            || id.offset <= self.log_start
            || id.offset > self.end_offset()
        {
            return Ok(false);
        }
        // The caller guarantees id.offset <= HW; the log checks that against its own.
        if self.high_watermark < id.offset {
            self.update_high_watermark(id.offset);
        }
        self.advance_log_start_to(id)?;
        Ok(self.log_start == id.offset)
    }

    fn maybe_clean(&mut self, now_ms: i64, high_watermark: Offset) -> Result<bool, LogError> {
        self.update_high_watermark(high_watermark);
        self.apply_retention(now_ms)
    }
}
