//! Reading a frozen snapshot as a stream of batches (Kafka's `RecordsSnapshotReader`): the
//! header batch is read when it is opened (its timestamp, kraft.version and voters are what the
//! raft core needs); the batches, the header and footer included, then come one at a time,
//! read in bounded windows, so memory stays at about one batch whatever the snapshot's size.

use std::sync::Arc;

use super::convert::records::decode_batches;
use super::log::{Batch, ControlRecord, LogError, Records, SnapshotHeader};
use super::types::OffsetAndEpoch;
use crate::log::scan::MAX_BATCH_SIZE_ON_DISK;
use crate::log::RawSnapshotReader;
use crate::protocol::records::{batches, SplitEnd};

/// Bytes read from the snapshot per refill of the window (more when one batch is larger).
const WINDOW: usize = 1 << 20;

/// A frozen snapshot's batches, in order.
#[derive(Debug)]
pub struct SnapshotReader {
    raw: RawSnapshotReader,
    header: SnapshotHeader,
    /// Bytes read from the snapshot and not yet returned, from `window_start`.
    window: Vec<u8>,
    window_start: u64,
    /// Where the next batch starts in `window`.
    consumed: usize,
    /// Set after a fault: nothing more is read.
    failed: bool,
}

impl SnapshotReader {
    /// Opens `raw` and reads its header batch, which must be a control batch starting with a
    /// SnapshotHeaderRecord (KRaftVersion and Voters may follow in it, as Kafka writes them).
    pub fn open(raw: RawSnapshotReader) -> Result<SnapshotReader, LogError> {
        let id = raw.id();
        let mut reader = SnapshotReader {
            raw,
            header: SnapshotHeader {
                id,
                last_contained_log_timestamp: 0,
                kraft_version: 0,
                voters: None,
            },
            window: Vec::new(),
            window_start: 0,
            consumed: 0,
            failed: false,
        };
        let first = reader
            .next_batch()?
            .ok_or_else(|| undecodable(id, "it holds no batch"))?;
        let Records::Control(records) = &first.records else {
            return Err(undecodable(id, "the first batch is not a control batch"));
        };
        let Some(ControlRecord::SnapshotHeader(h)) = records.first() else {
            return Err(undecodable(
                id,
                "the first batch does not start with a SnapshotHeaderRecord",
            ));
        };
        reader.header.last_contained_log_timestamp = h.last_contained_log_timestamp;
        for r in records {
            match r {
                ControlRecord::KRaftVersion(k) => reader.header.kraft_version = k.k_raft_version,
                ControlRecord::Voters(v) => reader.header.voters = Some(v.clone()),
                _ => {}
            }
        }
        // Batches are returned from the first one on.
        reader.consumed = 0;
        Ok(reader)
    }

    /// Snapshot `id` held in memory as `bytes` (a tool or a test checking bytes).
    pub fn from_bytes(id: OffsetAndEpoch, bytes: Vec<u8>) -> Result<SnapshotReader, LogError> {
        Self::open(RawSnapshotReader::memory(id, Arc::new(bytes)))
    }

    /// The snapshot's id: it holds the state of every offset below `id.offset`.
    pub fn id(&self) -> OffsetAndEpoch {
        self.header.id
    }

    /// What the header batch says: the last contained log timestamp, and the kraft.version and
    /// voter set as of `id.offset − 1`.
    pub fn header(&self) -> &SnapshotHeader {
        &self.header
    }

    pub fn last_contained_log_timestamp(&self) -> i64 {
        self.header.last_contained_log_timestamp
    }

    pub fn size_in_bytes(&self) -> u64 {
        self.raw.size_in_bytes()
    }

    /// The data records, in order (control batches skipped).
    pub fn records(self) -> impl Iterator<Item = Result<Vec<u8>, LogError>> {
        self.flat_map(|batch| {
            let values = match batch {
                Ok(Batch {
                    records: Records::Data(values),
                    ..
                }) => values.into_iter().map(Ok).collect(),
                Ok(_) => Vec::new(),
                Err(e) => vec![Err(e)],
            };
            values.into_iter()
        })
    }

    /// The next whole batch, reading more of the snapshot as needed; `None` at its end.
    fn next_batch(&mut self) -> Result<Option<Batch>, LogError> {
        let id = self.header.id;
        loop {
            let rest = &self.window[self.consumed..];
            let mut it = batches(rest).with_max_batch_size(MAX_BATCH_SIZE_ON_DISK);
            if let Some(view) = it.next() {
                let batch = decode_batches(view.bytes())
                    .map_err(|e| {
                        let at = self.window_start + self.consumed as u64;
                        undecodable(id, &format!("the batch at byte {at}: {e}"))
                    })?
                    .pop()
                    .ok_or_else(|| undecodable(id, "a batch that decodes to nothing"))?;
                self.consumed += view.size();
                return Ok(Some(batch));
            }
            let read_to = self.window_start + self.window.len() as u64;
            let at = self.window_start + self.consumed as u64;
            let needed = match it.end() {
                Some(SplitEnd::Clean) | None => WINDOW,
                Some(SplitEnd::Torn { needed, .. }) if read_to < self.raw.size_in_bytes() => {
                    (*needed).max(WINDOW)
                }
                Some(SplitEnd::Torn {
                    needed, available, ..
                }) => {
                    return Err(undecodable(
                        id,
                        &format!("the last batch, at byte {at}, needs {needed} bytes but only {available} are there"),
                    ))
                }
                Some(SplitEnd::Corrupt { error, .. }) => {
                    return Err(undecodable(
                        id,
                        &format!("the bytes at {at} are not a batch: {}", error.kind),
                    ))
                }
            };
            if read_to >= self.raw.size_in_bytes() {
                return Ok(None);
            }
            // Keep the unread tail, then read on from the end of the window.
            self.window.drain(..self.consumed);
            self.window_start = at;
            self.consumed = 0;
            let more = self
                .raw
                .read(read_to, needed)
                .map_err(|source| LogError::Storage {
                    operation: "read a snapshot",
                    source,
                })?;
            if more.is_empty() {
                return Ok(None);
            }
            self.window.extend_from_slice(&more);
        }
    }
}

fn undecodable(id: OffsetAndEpoch, reason: &str) -> LogError {
    LogError::UndecodableSnapshot {
        id,
        reason: reason.to_string(),
    }
}

impl Iterator for SnapshotReader {
    type Item = Result<Batch, LogError>;

    fn next(&mut self) -> Option<Result<Batch, LogError>> {
        if self.failed {
            return None;
        }
        match self.next_batch() {
            Ok(batch) => batch.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}
