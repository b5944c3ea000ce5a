//! The state machine's snapshots as streams (Kafka's `RaftClient.createSnapshot` and the
//! listener's snapshot reader): a writer created at a committed offset and epoch, appended to
//! in chunks and frozen (or dropped, which deletes what it wrote), and a reader yielding the
//! batches of a frozen snapshot. Both hold about one batch in memory, whatever the snapshot's
//! size (`snapshot_writer.rs`, `snapshot_reader.rs`).

use super::log::{LogError, RaftLog, SnapshotHeader};
use super::node::Raft;
use super::quorum_state::QuorumStateStore;
use super::snapshot::SnapshotError;
use super::snapshot_reader::SnapshotReader;
use super::snapshot_writer::SnapshotWriter;
use super::types::OffsetAndEpoch;

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// Starts the state machine's snapshot of everything below `id.offset` (Kafka's
    /// `createSnapshot`): the id must be at or below the HW, at or above the log start, valid
    /// for the log and at a batch boundary. The kraft.version and voter set as of
    /// `id.offset − 1` go in its header batch, written at once.
    pub fn snapshot_writer(
        &mut self,
        id: OffsetAndEpoch,
        last_contained_log_timestamp: i64,
    ) -> Result<SnapshotWriter, SnapshotError> {
        self.check_snapshot_id(id)?;
        let (kraft_version, voters) = self.snapshot_header(id);
        let header = SnapshotHeader {
            id,
            last_contained_log_timestamp,
            kraft_version,
            voters,
        };
        let created = self.log.create_snapshot(header);
        self.snapshot_result(created)
    }

    /// Makes a written snapshot durable (checked again: the log may have moved meanwhile).
    pub fn freeze_snapshot(&mut self, writer: SnapshotWriter) -> Result<(), SnapshotError> {
        self.check_snapshot_id(writer.id())?;
        let frozen = self.log.freeze_snapshot(writer);
        self.snapshot_result(frozen)
    }

    /// A storage fault is the node's fatal action; a refusal is the caller's to handle.
    fn snapshot_result<T>(&mut self, result: Result<T, LogError>) -> Result<T, SnapshotError> {
        match result {
            Ok(v) => Ok(v),
            Err(e) if e.is_fault() => {
                self.log_value(Err::<(), _>(e));
                Err(SnapshotError::Halted)
            }
            Err(e) => Err(SnapshotError::Log(e)),
        }
    }

    /// The batches of snapshot `id`, if it exists; a fault opening it is an `Err`.
    pub fn snapshot_reader(&self, id: OffsetAndEpoch) -> Result<Option<SnapshotReader>, LogError> {
        self.log.open_snapshot(id)
    }

    /// The latest snapshot's batches (the bootstrap checkpoint included).
    pub fn latest_snapshot_reader(&self) -> Result<Option<SnapshotReader>, LogError> {
        match self.log.latest_snapshot_id() {
            Some(id) => self.snapshot_reader(id),
            None => Ok(None),
        }
    }
}
