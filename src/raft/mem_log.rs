//! `MemLog`: the metadata log for tests and the simulation. It is the production log core
//! (`log::LogCore`: epoch cache, truncation, snapshots, retention, segments) over memory
//! storage, so the simulation runs the rules the node runs; `crash()` drops everything not
//! flushed and reopens the log as start-up does.

use super::log::{Batch, RaftLog, SnapshotContents};
use super::types::OffsetAndEpoch;
use crate::log::storage::Storage;
use crate::log::LogCore;
use crate::protocol::messages::voters_record::VotersRecord;

/// The metadata log in memory.
pub type MemLog = crate::log::MemoryLog;

/// What tests and transcripts read from any log, beyond the trait.
pub trait LogInspect {
    /// All batches, decoded (panics on a storage fault: test logs have none unless injected).
    fn batches(&self) -> Vec<Batch>;
    /// Writes the bootstrap checkpoint (0, 0) as `kafka-storage format` does for a dynamic
    /// quorum.
    fn format_bootstrap(&mut self, kraft_version: i16, voters: Option<VotersRecord>);
}

impl<S: Storage> LogInspect for LogCore<S> {
    fn batches(&self) -> Vec<Batch> {
        RaftLog::read(self, RaftLog::start_offset(self), usize::MAX)
            .unwrap_or_else(|e| panic!("reading the whole log: {e}"))
    }

    fn format_bootstrap(&mut self, kraft_version: i16, voters: Option<VotersRecord>) {
        let contents = SnapshotContents {
            id: OffsetAndEpoch::new(0, 0),
            last_contained_log_timestamp: 0,
            kraft_version,
            voters,
            data: Vec::new(),
        };
        self.create_snapshot(contents)
            .unwrap_or_else(|e| panic!("writing the bootstrap checkpoint: {e}"));
    }
}
