//! Writing a snapshot as a stream of batches (Kafka's `RecordsSnapshotWriter`): the header
//! control batch when it is created, data batches of at most the maximum batch size as records
//! are appended, the footer control batch when it is frozen. Only the open batch is held in
//! memory; every full batch goes to the snapshot's partial file (`<id>-<n>.checkpoint.part`)
//! at once, and `RaftLog::freeze_snapshot` makes the file durable (fsync, rename, fsync of the
//! directory). A writer dropped unfrozen deletes its partial file. A large snapshot is
//! [`SnapshotWriter::seal`]ed first, on the thread that wrote it: the footer, validation and
//! fsync happen there, and the freeze on the log's thread is only the rename.

use std::path::{Path, PathBuf};

use super::log::{LogError, SnapshotHeader};
use super::types::OffsetAndEpoch;
use crate::log::{LogError as StorageError, RawSnapshotWriter};
use crate::protocol::messages::{KRaftVersionRecord, SnapshotFooterRecord, SnapshotHeaderRecord};
use crate::protocol::records::{
    BatchBuilder, BuildError, ControlRecord as Wire, BATCH_HEADER_SIZE,
};

/// Bytes of record framing (varints) a data record adds to its value, at most.
const RECORD_OVERHEAD: usize = 21;

/// A snapshot being written: append the state machine's records, then hand it to
/// `Raft::freeze_snapshot` (or `RaftLog::freeze_snapshot`); drop it to abandon it.
#[derive(Debug)]
pub struct SnapshotWriter {
    raw: RawSnapshotWriter,
    header: SnapshotHeader,
    max_batch_size: usize,
    /// The open data batch (snapshot-relative offsets).
    batch: BatchBuilder,
    /// Reused to encode a full batch before it is written.
    encoded: Vec<u8>,
    records: u64,
    data_batches: u64,
}

fn refused(id: OffsetAndEpoch) -> impl Fn(BuildError) -> LogError {
    move |e| {
        LogError::Refused(StorageError::InvalidAppend(format!(
            "snapshot {id} does not encode: {e}"
        )))
    }
}

fn write_failed(source: StorageError) -> LogError {
    LogError::Storage {
        operation: "write a snapshot",
        source,
    }
}

impl SnapshotWriter {
    /// Starts writing `header.id` into `raw`: the header control batch (SnapshotHeader, then
    /// KRaftVersion and Voters from kraft.version 1) is written at once. Every batch carries
    /// the snapshot's epoch and, as its timestamp, the last contained log timestamp (no clock
    /// is read here; Java stamps them with its clock).
    pub(crate) fn start(
        mut raw: RawSnapshotWriter,
        header: SnapshotHeader,
        max_batch_size: usize,
    ) -> Result<SnapshotWriter, LogError> {
        let mut records = vec![Wire::SnapshotHeader(SnapshotHeaderRecord {
            version: 0,
            last_contained_log_timestamp: header.last_contained_log_timestamp,
            ..Default::default()
        })];
        if header.kraft_version >= 1 {
            records.push(Wire::KRaftVersion(KRaftVersionRecord {
                version: 0,
                k_raft_version: header.kraft_version,
                ..Default::default()
            }));
            records.extend(header.voters.clone().map(Wire::KRaftVoters));
        }
        let control = control_batch(&header, 0, &records)?;
        let mut encoded = Vec::new();
        control.write_to(&mut encoded).map_err(refused(header.id))?;
        raw.append(&encoded).map_err(write_failed)?;
        let batch = data_batch(&header, control.next_offset());
        Ok(SnapshotWriter {
            raw,
            header,
            max_batch_size,
            batch,
            encoded,
            records: 0,
            data_batches: 0,
        })
    }

    /// A snapshot file of its own in `dir`, outside any log (a tool writing an image):
    /// `<id>.checkpoint` once [`SnapshotWriter::freeze_in`] renames it into place.
    pub fn create_in(
        dir: &Path,
        header: SnapshotHeader,
        max_batch_size: usize,
    ) -> Result<SnapshotWriter, LogError> {
        let raw =
            RawSnapshotWriter::create_file(dir, header.id).map_err(|source| LogError::Storage {
                operation: "create a snapshot",
                source,
            })?;
        SnapshotWriter::start(raw, header, max_batch_size)
    }

    /// Seals a writer made by [`SnapshotWriter::create_in`] and renames it into place in
    /// `dir`; returns the file's path.
    pub fn freeze_in(self, dir: &Path) -> Result<PathBuf, LogError> {
        let raw = self.finish()?;
        let (path, _) = raw.freeze_file(dir).map_err(|source| LogError::Storage {
            operation: "freeze a snapshot",
            source,
        })?;
        Ok(path)
    }

    pub fn id(&self) -> OffsetAndEpoch {
        self.header.id
    }

    pub fn header(&self) -> &SnapshotHeader {
        &self.header
    }

    /// Data records appended so far.
    pub fn record_count(&self) -> u64 {
        self.records
    }

    /// Bytes written to the snapshot so far (the open batch not included).
    pub fn size_in_bytes(&self) -> u64 {
        self.raw.size_in_bytes()
    }

    /// Appends the next data records (Kafka's `SnapshotWriter.append`). As Java's
    /// `BatchAccumulator` does, the records of one append stay whole in one batch: the open
    /// batch is written first when they would not fit in it. Records that cannot fit in any
    /// batch are refused; a failed write is a fault (the node must stop).
    pub fn append<I>(&mut self, records: I) -> Result<(), LogError>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        if self.raw.is_sealed() {
            return Err(LogError::Refused(StorageError::InvalidAppend(format!(
                "snapshot {} is sealed: nothing can be appended to it",
                self.header.id
            ))));
        }
        let group: Vec<I::Item> = records.into_iter().collect();
        let group_bytes: usize = group
            .iter()
            .map(|v| v.as_ref().len() + RECORD_OVERHEAD)
            .sum();
        if BATCH_HEADER_SIZE + group_bytes > self.max_batch_size {
            // Kafka's RecordBatchTooLargeException: no batch can hold them.
            return Err(LogError::Refused(StorageError::InvalidAppend(format!(
                "{} records of {group_bytes} bytes cannot be in one batch of snapshot {}: its batches hold at most {} bytes",
                group.len(),
                self.header.id,
                self.max_batch_size
            ))));
        }
        if !self.batch.is_empty() && self.batch.size_in_bytes() + group_bytes > self.max_batch_size
        {
            self.write_batch()?;
        }
        let stamp = self.header.last_contained_log_timestamp;
        for value in &group {
            self.batch
                .append(stamp, None, Some(value.as_ref()), &[])
                .map_err(refused(self.header.id))?;
            self.records += 1;
        }
        Ok(())
    }

    /// Data batches written so far (the open one not included).
    pub fn data_batch_count(&self) -> u64 {
        self.data_batches
    }

    fn write_batch(&mut self) -> Result<(), LogError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let next = data_batch(&self.header, self.batch.next_offset());
        let full = std::mem::replace(&mut self.batch, next);
        self.data_batches += 1;
        self.encoded.clear();
        full.write_to(&mut self.encoded)
            .map_err(refused(self.header.id))?;
        self.raw.append(&self.encoded).map_err(write_failed)
    }

    /// Completes the snapshot away from the log: writes the open batch and the footer, then
    /// validates and fsyncs the bytes. Nothing can be appended after it; the freeze that follows
    /// is a rename. A failed write or fsync is a fault (the node must stop).
    pub fn seal(&mut self) -> Result<(), LogError> {
        if self.raw.is_sealed() {
            return Ok(());
        }
        self.write_batch()?;
        let footer = Wire::SnapshotFooter(SnapshotFooterRecord {
            version: 0,
            ..Default::default()
        });
        let control = control_batch(&self.header, self.batch.next_offset(), &[footer])?;
        self.encoded.clear();
        control
            .write_to(&mut self.encoded)
            .map_err(refused(self.header.id))?;
        self.raw.append(&self.encoded).map_err(write_failed)?;
        self.raw.seal().map_err(|source| LogError::Storage {
            operation: "seal a snapshot",
            source,
        })?;
        Ok(())
    }

    /// The raw snapshot, complete and sealed, to be frozen.
    pub(crate) fn finish(mut self) -> Result<RawSnapshotWriter, LogError> {
        self.seal()?;
        Ok(self.raw)
    }
}

fn data_batch(header: &SnapshotHeader, base_offset: i64) -> BatchBuilder {
    BatchBuilder::new(base_offset).partition_leader_epoch(header.id.epoch)
}

fn control_batch(
    header: &SnapshotHeader,
    base_offset: i64,
    records: &[Wire],
) -> Result<BatchBuilder, LogError> {
    let mut b = BatchBuilder::new_control(base_offset).partition_leader_epoch(header.id.epoch);
    for r in records {
        b.append_control(header.last_contained_log_timestamp, r)
            .map_err(refused(header.id))?;
    }
    Ok(b)
}
