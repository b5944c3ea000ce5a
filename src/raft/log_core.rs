//! The one implementation of [`RaftLog`]: Kafka's `KafkaRaftLog` rules live in `log::LogCore`
//! (epoch cache, truncation, snapshots, retention) over any `log::storage::Storage`; this file
//! only turns the raft core's typed batches and snapshots into their v2 bytes and back, and
//! names the operation of every storage fault. Files in production (`log::FileLog`), memory in
//! tests and the simulation (`MemLog`).

use super::convert::records::{decode_batches, encode_batches};
use super::convert::snapshot::{decode_snapshot, encode_snapshot};
use super::log::{Batch, LogError, RaftLog, SnapshotContents};
use super::types::{Epoch, Offset, OffsetAndEpoch};
use crate::log::storage::Storage;
use crate::log::{Isolation, LogCore, LogError as StorageError};
use crate::protocol::records::split_batches;

/// Bytes asked of the storage per read call, so that `read(start, usize::MAX)` (the start-up
/// replay of the whole log) never holds more than this plus one batch of raw bytes at a time.
const READ_CHUNK: usize = 1 << 20;

/// A closure naming the operation of a storage error. A segment-size refusal stays a refusal.
fn during(operation: &'static str) -> impl FnOnce(StorageError) -> LogError {
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

trait LogCoreExt {
    fn latest_epoch(&self) -> Option<Epoch>;
    fn append(&mut self, batches: &[Batch], leader: bool) -> Result<(), LogError>;
    fn decode(&self, bytes: &[u8]) -> Result<Vec<Batch>, LogError>;
    fn read_one_segment(&self, from: Offset, max_bytes: usize) -> Result<Vec<Batch>, LogError>;
}

impl<S: Storage> LogCoreExt for LogCore<S> {
    fn latest_epoch(&self) -> Option<Epoch> {
        self.epoch_entries().last().map(|e| e.epoch)
    }

    fn append(&mut self, batches: &[Batch], leader: bool) -> Result<(), LogError> {
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

    /// Decodes whole batches read from storage. Bytes below the end offset that do not decode
    /// are a fault naming the offset and the segment: nothing is skipped.
    fn decode(&self, bytes: &[u8]) -> Result<Vec<Batch>, LogError> {
        let split = split_batches(bytes);
        let mut out = Vec::with_capacity(split.batches.len());
        for view in &split.batches {
            let offset = view.base_offset();
            let undecodable = |reason: String| LogError::UndecodableBatch {
                offset,
                file: self.storage().segment_path(offset),
                reason,
            };
            match decode_batches(view.bytes()) {
                Ok(mut one) if one.len() == 1 => out.push(one.remove(0)),
                Ok(_) => return Err(undecodable("not exactly one batch".into())),
                Err(e) => return Err(undecodable(e.to_string())),
            }
        }
        if !split.end.is_clean() {
            let offset = out.last().map_or(-1, Batch::next_offset);
            return Err(LogError::UndecodableBatch {
                offset,
                file: self.storage().segment_path(offset.max(0)),
                reason: format!("{:?}", split.end),
            });
        }
        Ok(out)
    }

    fn read_one_segment(&self, from: Offset, max_bytes: usize) -> Result<Vec<Batch>, LogError> {
        let offset = from.max(self.start_offset());
        if offset >= self.end_offset() {
            return Ok(Vec::new());
        }
        let info = LogCore::read_bytes(
            self,
            offset,
            Isolation::Uncommitted,
            max_bytes.min(READ_CHUNK),
        )
        .map_err(during("read the metadata log"))?;
        self.decode(&info.records)
    }
}

impl<S: Storage> RaftLog for LogCore<S> {
    fn start_offset(&self) -> Offset {
        LogCore::start_offset(self)
    }

    fn end_offset(&self) -> Offset {
        LogCore::end_offset(self)
    }

    fn flushed_end_offset(&self) -> Offset {
        // A log start moved above the flushed offset is covered by its snapshot (durable).
        let (start, end) = (RaftLog::start_offset(self), RaftLog::end_offset(self));
        self.flushed_offset().clamp(start, end.max(start))
    }

    fn last_fetched_epoch(&self) -> Epoch {
        LogCore::last_fetched_epoch(self)
    }

    fn end_offset_for_epoch(&self, epoch: Epoch) -> OffsetAndEpoch {
        LogCore::end_offset_for_epoch(self, epoch)
    }

    fn append_as_leader(&mut self, batch: Batch) -> Result<(), LogError> {
        check_append(&batch, RaftLog::end_offset(self), self.latest_epoch())?;
        self.append(std::slice::from_ref(&batch), true)
    }

    fn append_as_follower(&mut self, batches: Vec<Batch>) -> Result<(), LogError> {
        let (mut expected, mut last) = (RaftLog::end_offset(self), self.latest_epoch());
        for b in &batches {
            check_append(b, expected, last)?;
            expected = b.next_offset();
            last = Some(b.epoch);
        }
        if batches.is_empty() {
            return Ok(());
        }
        // encode_batches writes each batch's `encoded` bytes as they are: the leader's bytes.
        self.append(&batches, false)
    }

    fn read(&self, from: Offset, max_bytes: usize) -> Result<Vec<Batch>, LogError> {
        let end = RaftLog::end_offset(self);
        let mut offset = from.max(RaftLog::start_offset(self));
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

    fn truncate_to(&mut self, offset: Offset) -> Result<(), LogError> {
        if offset >= RaftLog::end_offset(self) {
            return Ok(());
        }
        LogCore::truncate_to(self, offset).map_err(during("truncate the metadata log"))
    }

    fn flush(&mut self) -> Result<(), LogError> {
        LogCore::flush(self).map_err(during("flush the metadata log"))
    }

    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        LogCore::latest_snapshot_id(self)
    }

    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        LogCore::earliest_snapshot_id(self)
    }

    fn read_snapshot(&self, id: OffsetAndEpoch) -> Result<Option<SnapshotContents>, LogError> {
        let Some(reader) = LogCore::open_snapshot(self, id).map_err(during("open a snapshot"))?
        else {
            return Ok(None);
        };
        let bytes = reader.read_all().map_err(during("read a snapshot"))?;
        decode_snapshot(id, &bytes)
            .map(Some)
            .map_err(|reason| LogError::UndecodableSnapshot { id, reason })
    }

    fn snapshot_size(&self, id: OffsetAndEpoch) -> Option<u64> {
        LogCore::snapshot_size(self, id)
    }

    fn read_snapshot_chunk(
        &self,
        id: OffsetAndEpoch,
        position: u64,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, LogError> {
        let Some(reader) = LogCore::open_snapshot(self, id).map_err(during("open a snapshot"))?
        else {
            return Ok(None);
        };
        if position >= reader.size_in_bytes() {
            return Ok(None);
        }
        let chunk = reader.read(position, max_bytes.max(1));
        chunk.map(Some).map_err(during("read a snapshot"))
    }

    fn create_snapshot(&mut self, contents: SnapshotContents) -> Result<(), LogError> {
        let id = contents.id;
        if self.snapshot_size(id).is_some() {
            return Err(LogError::SnapshotExists(id));
        }
        // Batches carry the snapshot's last contained timestamp: no clock is read here.
        let stamp = contents.last_contained_log_timestamp;
        let bytes =
            encode_snapshot(&contents, stamp, self.config().max_batch_size).map_err(|e| {
                LogError::Refused(StorageError::InvalidAppend(format!(
                    "snapshot {id} does not encode: {e}"
                )))
            })?;
        // The core has checked the id (<= HW, valid, batch boundary); the checked path would
        // compare it with the log's own HW, which only the core maintains.
        let created = self.create_new_snapshot_unchecked(id);
        let Some(mut writer) = created.map_err(during("create a snapshot"))? else {
            return Err(LogError::SnapshotExists(id));
        };
        writer.append(&bytes).map_err(during("write a snapshot"))?;
        self.freeze_snapshot(writer)
            .map_err(during("freeze a snapshot"))
    }

    fn begin_snapshot_download(&mut self, id: OffsetAndEpoch) -> Result<(), LogError> {
        LogCore::begin_snapshot_download(self, id).map_err(during("create a snapshot download"))
    }

    fn snapshot_download(&self) -> Option<(OffsetAndEpoch, u64)> {
        LogCore::snapshot_download(self)
    }

    fn append_snapshot_download(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        if LogCore::snapshot_download(self).is_none() {
            return Err(LogError::NoDownload);
        }
        LogCore::append_snapshot_download(self, bytes)
            .map_err(during("write a downloaded snapshot"))
    }

    fn complete_snapshot_download(&mut self) -> Result<OffsetAndEpoch, LogError> {
        let Some((id, _)) = LogCore::snapshot_download(self) else {
            return Err(LogError::NoDownload);
        };
        match LogCore::complete_snapshot_download(self) {
            Ok(id) => Ok(id),
            Err(e @ StorageError::Io { .. }) => Err(during("freeze a downloaded snapshot")(e)),
            Err(e) => Err(LogError::NotTheSnapshot {
                id,
                reason: e.to_string(),
            }),
        }
    }

    fn abort_snapshot_download(&mut self) {
        LogCore::abort_snapshot_download(self)
    }

    fn truncate_to_latest_snapshot(&mut self) -> Result<bool, LogError> {
        LogCore::truncate_to_latest_snapshot(self)
            .map_err(during("truncate the metadata log to its latest snapshot"))
    }

    fn delete_before_snapshot(&mut self, id: OffsetAndEpoch) -> Result<bool, LogError> {
        if self.snapshot_size(id).is_none()
            || id.offset <= RaftLog::start_offset(self)
            || id.offset > RaftLog::end_offset(self)
        {
            return Ok(false);
        }
        // The caller guarantees id.offset <= HW; the log checks that against its own.
        if self.high_watermark() < id.offset {
            self.update_high_watermark(id.offset);
        }
        LogCore::delete_before_snapshot(self, id)
            .map_err(during("delete the metadata log before a snapshot"))?;
        Ok(RaftLog::start_offset(self) == id.offset)
    }

    fn maybe_clean(&mut self, now_ms: i64, high_watermark: Offset) -> Result<bool, LogError> {
        self.update_high_watermark(high_watermark);
        LogCore::apply_retention(self, now_ms).map_err(during("apply the metadata log's retention"))
    }
}
