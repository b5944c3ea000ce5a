//! `MemLog`: the metadata log for tests and the simulation. It is the production log core
//! (`log::LogCore`: epoch cache, truncation, snapshots, retention, segments) over memory
//! storage, so the simulation runs the rules the node runs; `crash()` drops everything not
//! flushed and reopens the log as start-up does.

use super::log::{Batch, LogError, RaftLog, Records, SnapshotHeader};
use super::types::OffsetAndEpoch;
use crate::log::storage::Storage;
use crate::log::LogCore;
use crate::protocol::messages::voters_record::VotersRecord;

/// The metadata log in memory.
pub type MemLog = crate::log::MemoryLog;

/// A snapshot's header and data records, all in memory (tests only).
pub type WholeSnapshot = (SnapshotHeader, Vec<Vec<u8>>);

/// What tests and transcripts read from any log, beyond the trait.
pub trait LogInspect {
    /// All batches, decoded (panics on a storage fault: test logs have none unless injected).
    fn batches(&self) -> Vec<Batch>;
    /// Writes the bootstrap checkpoint (0, 0) as `kafka-storage format` does for a dynamic
    /// quorum.
    fn format_bootstrap(&mut self, kraft_version: i16, voters: Option<VotersRecord>);
    /// Writes and freezes a whole snapshot at once (the raft core has not checked `header.id`).
    fn write_snapshot(&mut self, header: SnapshotHeader, data: &[Vec<u8>]) -> Result<(), LogError>;
    /// A retained snapshot's header and data records.
    fn snapshot_records(&self, id: OffsetAndEpoch) -> Result<Option<WholeSnapshot>, LogError>;
}

impl<S: Storage> LogInspect for LogCore<S> {
    fn batches(&self) -> Vec<Batch> {
        RaftLog::read(self, RaftLog::start_offset(self), usize::MAX)
            .unwrap_or_else(|e| panic!("reading the whole log: {e}"))
    }

    fn format_bootstrap(&mut self, kraft_version: i16, voters: Option<VotersRecord>) {
        let header = SnapshotHeader {
            id: OffsetAndEpoch::new(0, 0),
            last_contained_log_timestamp: 0,
            kraft_version,
            voters,
        };
        self.write_snapshot(header, &[])
            .unwrap_or_else(|e| panic!("writing the bootstrap checkpoint: {e}"));
    }

    fn write_snapshot(&mut self, header: SnapshotHeader, data: &[Vec<u8>]) -> Result<(), LogError> {
        let mut writer = self.create_snapshot(header)?;
        // One append is one batch: the records go in groups, as the node writes them.
        for group in data.chunks(1024) {
            writer.append(group)?;
        }
        self.freeze_snapshot(writer)
    }

    fn snapshot_records(&self, id: OffsetAndEpoch) -> Result<Option<WholeSnapshot>, LogError> {
        let Some(reader) = self.open_snapshot(id)? else {
            return Ok(None);
        };
        let header = reader.header().clone();
        let mut data = Vec::new();
        for batch in reader {
            if let Records::Data(values) = batch?.records {
                data.extend(values);
            }
        }
        Ok(Some((header, data)))
    }
}
