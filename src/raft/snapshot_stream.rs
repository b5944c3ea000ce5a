//! The state machine's snapshots as streams (Kafka's `SnapshotWriter` / `SnapshotReader`): a
//! writer that takes records batch by batch, a reader that yields them one by one.
//!
//! The log trait still stores a snapshot whole (`RaftLog::create_snapshot` takes its
//! contents), so the writer gathers the records until it is frozen; the types are the seam a
//! streaming log writer slots in behind.

use super::log::{LogError, RaftLog, SnapshotContents};
use super::node::Raft;
use super::quorum_state::QuorumStateStore;
use super::snapshot::SnapshotError;
use super::types::OffsetAndEpoch;
use crate::protocol::messages::voters_record::VotersRecord;

/// A snapshot being written; `Raft::freeze_snapshot` makes it durable.
#[derive(Debug)]
pub struct SnapshotWriter {
    id: OffsetAndEpoch,
    last_contained_log_timestamp: i64,
    kraft_version: i16,
    voters: Option<VotersRecord>,
    records: Vec<Vec<u8>>,
}

impl SnapshotWriter {
    pub fn id(&self) -> OffsetAndEpoch {
        self.id
    }

    /// Appends the next batch of data records.
    pub fn append(&mut self, records: impl IntoIterator<Item = Vec<u8>>) {
        self.records.extend(records);
    }

    pub fn record_count(&self) -> usize {
        self.records.len()
    }
}

/// A frozen snapshot's data records, in order.
#[derive(Debug)]
pub struct SnapshotReader {
    id: OffsetAndEpoch,
    last_contained_log_timestamp: i64,
    records: std::vec::IntoIter<Vec<u8>>,
}

impl SnapshotReader {
    /// The snapshot's id: it holds the state of every offset below `id.offset`.
    pub fn id(&self) -> OffsetAndEpoch {
        self.id
    }

    pub fn last_contained_log_timestamp(&self) -> i64 {
        self.last_contained_log_timestamp
    }
}

impl Iterator for SnapshotReader {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        self.records.next()
    }
}

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// Starts the state machine's snapshot of everything below `id.offset` (Kafka's
    /// `createSnapshot`): the id must be at or below the HW, at or above the log start, valid
    /// for the log and at a batch boundary. The kraft.version and voter set as of
    /// `id.offset − 1` go in its header.
    pub fn snapshot_writer(
        &self,
        id: OffsetAndEpoch,
        last_contained_log_timestamp: i64,
    ) -> Result<SnapshotWriter, SnapshotError> {
        self.check_snapshot_id(id)?;
        let (kraft_version, voters) = self.snapshot_header(id);
        Ok(SnapshotWriter {
            id,
            last_contained_log_timestamp,
            kraft_version,
            voters,
            records: Vec::new(),
        })
    }

    /// Makes a written snapshot durable (checked again: the log may have moved meanwhile).
    pub fn freeze_snapshot(&mut self, writer: SnapshotWriter) -> Result<(), SnapshotError> {
        self.check_snapshot_id(writer.id)?;
        let contents = SnapshotContents {
            id: writer.id,
            last_contained_log_timestamp: writer.last_contained_log_timestamp,
            kraft_version: writer.kraft_version,
            voters: writer.voters,
            data: writer.records,
        };
        match self.log.create_snapshot(contents) {
            Ok(()) => Ok(()),
            Err(e) if e.is_fault() => {
                self.log_value(Err::<(), _>(e));
                Err(SnapshotError::Halted)
            }
            Err(e) => Err(SnapshotError::Log(e)),
        }
    }

    /// The data records of snapshot `id`, if it exists; a fault reading it is an `Err`.
    pub fn snapshot_reader(&self, id: OffsetAndEpoch) -> Result<Option<SnapshotReader>, LogError> {
        Ok(self.log.read_snapshot(id)?.map(|contents| SnapshotReader {
            id: contents.id,
            last_contained_log_timestamp: contents.last_contained_log_timestamp,
            records: contents.data.into_iter(),
        }))
    }

    /// The latest snapshot's records (the bootstrap checkpoint included).
    pub fn latest_snapshot_reader(&self) -> Result<Option<SnapshotReader>, LogError> {
        match self.log.latest_snapshot_id() {
            Some(id) => self.snapshot_reader(id),
            None => Ok(None),
        }
    }
}
