//! The controller's state machine: metadata records in, the metadata image out.
//!
//! Synchronous and free of raft (shared/docs/architecture.md): the node loop feeds it records with their
//! offsets and tells it what has committed. `Controller::replay` is the only mutator; followers,
//! snapshot loading and the leader's own decisions share it, so every replica derives the same
//! image from the same bytes.
//!
//! State ahead of the commit point lives on a [`Timeline`]: a leader that loses leadership
//! reverts to the committed state, and an aborted metadata transaction reverts to the state
//! before it began.

pub mod acls;
pub mod activation;
pub mod brokers;
pub mod cluster;
pub mod config_changes;
pub mod config_names;
pub mod configs;
pub mod controller_registration;
pub mod describe_configs;
pub mod error;
pub mod features;
#[cfg(any(test, feature = "testkit"))]
#[doc(hidden)]
pub mod fuzz_model;
pub mod image;
pub mod java;
pub mod json;
pub mod leadership;
pub mod metadata_version;
pub mod principal;
pub mod producer_ids;
pub mod quorum;
pub mod quotas;
pub mod replication;
pub mod result;
pub mod scram;
pub mod snapshot;
pub mod timeline;
pub mod tokens;
pub mod topic_configs;
pub mod topics;

#[cfg(test)]
mod tests;

pub use error::{InvariantViolation, Refusal, ReplayError};
pub use image::MetadataImage;
pub use result::ControllerResult;
pub use snapshot::{SnapshotError, SnapshotLoad, SnapshotRecords};
pub use timeline::{NoSuchVersion, Timeline};

use crate::protocol::records::{MetadataRecord, MetadataRecordAndVersion, Offset};
use replication::{election_kind, Election};

/// A metadata transaction that has begun and not ended (`BeginTransactionRecord`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenTransaction {
    /// The offset of the BeginTransactionRecord.
    pub begun_at: Offset,
    /// The offset whose state an abort returns to: the last record before the Begin.
    pub revert_to: Offset,
}

/// What the timeline versions: the image plus the transaction state, which reverts with it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ControllerState {
    pub image: MetadataImage,
    pub transaction: Option<OpenTransaction>,
    /// The offset of each registered broker's `RegisterBrokerRecord` (Java's
    /// `registerBrokerRecordOffsets`; a registration loaded from a snapshot has the snapshot's
    /// last offset). A heartbeat reporting this offset is caught up. Invariant: the keys are
    /// the image's brokers.
    pub registration_offsets: imbl::OrdMap<i32, Offset>,
    /// Partition leaders elected uncleanly or from the ELR, as Java's controller metrics count
    /// them (`ControllerMetricsChanges`), since this process started.
    pub elections: ElectionCounts,
}

/// Counts of partition leader elections by kind (see [`replication::election_kind`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ElectionCounts {
    pub unclean: u64,
    pub from_elr: u64,
}

#[derive(Debug, Clone)]
pub struct Controller {
    timeline: Timeline<ControllerState>,
    /// The last committed offset the node reported (-1: none). Invariant: versions are kept
    /// back to `retain_from()`, so a renounce and an abort can always revert.
    committed: Offset,
}

impl Default for Controller {
    fn default() -> Self {
        Controller::new()
    }
}

impl Controller {
    /// An empty image before offset 0.
    pub fn new() -> Controller {
        Controller {
            timeline: Timeline::new(ControllerState::default(), -1),
            committed: -1,
        }
    }

    /// The latest image, including records not yet committed (what a leader decides against).
    pub fn image(&self) -> &MetadataImage {
        &self.timeline.latest().image
    }

    /// The offset of the last record replayed.
    pub fn last_applied(&self) -> Offset {
        self.timeline.latest_offset()
    }

    pub fn committed(&self) -> Offset {
        self.committed
    }

    /// The latest state, including records not yet committed.
    pub fn latest_state(&self) -> &ControllerState {
        self.timeline.latest()
    }

    pub fn open_transaction(&self) -> Option<OpenTransaction> {
        self.timeline.latest().transaction
    }

    /// The offset of the published image: committed, and before any transaction open there
    /// (Java's `lastStableOffset`; brokers never see half a transaction).
    pub fn stable_offset(&self) -> Offset {
        let committed = self.committed_point();
        match self.committed_state().transaction {
            Some(t) => committed.min(t.revert_to),
            None => committed,
        }
    }

    /// The published image and its offset: what snapshots hold and what reads that must see
    /// only committed data read.
    pub fn stable_image(&self) -> (Offset, &MetadataImage) {
        let offset = self.stable_offset();
        let state = self
            .timeline
            .at(offset)
            .expect("versions are kept back to the stable offset");
        (offset, &state.image)
    }

    /// The last offset both committed and applied: what a renounce reverts to.
    pub fn committed_point(&self) -> Offset {
        self.committed.min(self.last_applied())
    }

    /// The state at the committed point: the image every replica has at that offset, with any
    /// transaction open there.
    pub fn committed_state(&self) -> &ControllerState {
        self.timeline
            .at(self.committed_point())
            .expect("versions are kept back to the committed point")
    }

    /// The oldest offset a revert may return to: the stable offset, or the start of a
    /// transaction opened since (an abort returns there).
    fn retain_from(&self) -> Offset {
        match self.open_transaction() {
            Some(t) => self.stable_offset().min(t.revert_to),
            None => self.stable_offset(),
        }
    }

    /// Applies one record at `offset`, which must follow every record applied so far. The only
    /// mutator of controller state. A record Java's loader would refuse is refused here, and
    /// nothing of it is applied.
    pub fn replay(&mut self, record: &MetadataRecord, offset: Offset) -> Result<(), ReplayError> {
        if offset <= self.last_applied() {
            return Err(Refusal::OutOfOrder {
                last_applied: self.last_applied(),
            }
            .at(offset));
        }
        // The first record past the commit point: keep the committed state, which a renounce
        // reverts to.
        if offset > self.committed && self.last_applied() <= self.committed {
            self.timeline.keep_version();
        }
        match record {
            MetadataRecord::BeginTransaction(_) => {
                if let Some(t) = self.open_transaction() {
                    return Err(Refusal::TransactionAlreadyOpen {
                        open_since: t.begun_at,
                    }
                    .at(offset));
                }
                self.timeline.keep_version();
                let revert_to = self.last_applied();
                self.timeline.latest_mut().transaction = Some(OpenTransaction {
                    begun_at: offset,
                    revert_to,
                });
            }
            MetadataRecord::EndTransaction(_) => {
                if self.open_transaction().is_none() {
                    return Err(no_transaction("EndTransactionRecord", offset));
                }
                self.timeline.latest_mut().transaction = None;
            }
            MetadataRecord::AbortTransaction(_) => {
                let t = self
                    .open_transaction()
                    .ok_or_else(|| no_transaction("AbortTransactionRecord", offset))?;
                // The transaction's records stay in the history of their offsets: a leader's
                // abort that never commits is itself reverted to them.
                self.timeline
                    .restore(t.revert_to)
                    .expect("the version before an open transaction is kept");
            }
            // Each part checks a record before changing anything, so a refused record leaves
            // the image as it was.
            other => {
                let state = self.timeline.latest_mut();
                let before = match other {
                    MetadataRecord::PartitionChange(r) => state
                        .image
                        .topics
                        .partition((r.topic_id, r.partition_id))
                        .map(|(_, p)| p.clone()),
                    _ => None,
                };
                state.image.replay(other).map_err(|r| r.at(offset))?;
                if let (Some(prev), MetadataRecord::PartitionChange(r)) = (before, other) {
                    let next = state.image.topics.partition((r.topic_id, r.partition_id));
                    if let Some((_, next)) = next {
                        match election_kind(next.leader, &prev.isr, &prev.elr) {
                            Election::Unclean => state.elections.unclean += 1,
                            Election::FromElr => state.elections.from_elr += 1,
                            Election::Clean => {}
                        }
                    }
                }
                match other {
                    MetadataRecord::RegisterBroker(r) => {
                        state.registration_offsets.insert(r.broker_id, offset);
                    }
                    MetadataRecord::UnregisterBroker(r) => {
                        state.registration_offsets.remove(&r.broker_id);
                    }
                    _ => {}
                }
            }
        }
        self.timeline.advance(offset);
        Ok(())
    }

    /// A committed control batch (raft's own records: leader changes, voters) ends at `last`.
    /// It changes no state but moves the offset, as Java's loader counts it.
    pub fn skip_committed_control_batch(&mut self, last: Offset) {
        if last <= self.last_applied() {
            return;
        }
        self.committed = self.committed.max(last);
        self.timeline.advance(last);
        self.timeline.release_through(self.retain_from());
    }

    /// Decodes and applies one record value.
    pub fn replay_value(&mut self, value: &[u8], offset: Offset) -> Result<(), ReplayError> {
        let decoded = MetadataRecordAndVersion::decode(value)
            .map_err(|e| Refusal::Undecodable(e).at(offset))?;
        self.replay(&decoded.record, offset)
    }

    /// A follower's path: a batch known to be committed, applied record by record.
    pub fn replay_committed_batch<V: AsRef<[u8]>>(
        &mut self,
        base_offset: Offset,
        values: &[V],
    ) -> Result<(), ReplayError> {
        let Some(last) = (base_offset + values.len() as Offset).checked_sub(1) else {
            return Ok(());
        };
        if last <= self.last_applied() && base_offset > self.committed_point() {
            // A leader's own batch, applied when it was written: now it is committed.
            self.on_committed(last);
            return Ok(());
        }
        self.committed = self.committed.max(last);
        for (i, value) in values.iter().enumerate() {
            self.replay_value(value.as_ref(), base_offset + i as Offset)?;
        }
        self.timeline.release_through(self.retain_from());
        Ok(())
    }

    /// A leader's path: its own batch, written but not yet committed. A version is kept at its
    /// end so that the commit point can stop there.
    pub fn replay_written_batch(
        &mut self,
        base_offset: Offset,
        records: &[MetadataRecord],
    ) -> Result<(), ReplayError> {
        for (i, record) in records.iter().enumerate() {
            self.replay(record, base_offset + i as Offset)?;
        }
        self.timeline.keep_version();
        Ok(())
    }

    /// A leader's own batch as encoded values (what it proposed), written but not yet
    /// committed; see `replay_written_batch`.
    pub fn replay_written_values<V: AsRef<[u8]>>(
        &mut self,
        base_offset: Offset,
        values: &[V],
    ) -> Result<(), ReplayError> {
        for (i, value) in values.iter().enumerate() {
            self.replay_value(value.as_ref(), base_offset + i as Offset)?;
        }
        self.timeline.keep_version();
        Ok(())
    }

    /// Everything through `upto` is committed. Raft commits whole batches, so `upto` is the last
    /// offset of a batch (a renounce reverts to a batch end).
    pub fn on_committed(&mut self, upto: Offset) {
        self.committed = self.committed.max(upto);
        self.timeline.release_through(self.retain_from());
    }

    /// Leadership lost: whatever was written and not committed never happened here.
    pub fn renounce(&mut self) -> Result<(), NoSuchVersion> {
        let to = self.committed_point();
        self.timeline.revert_to(to)?;
        self.timeline.release_through(self.retain_from());
        Ok(())
    }

    /// The records of a snapshot of the stable image, and the offset it holds everything up to.
    /// The stream owns a copy of the image: replay may go on while it is written.
    pub fn snapshot(&self) -> Result<(Offset, SnapshotRecords), SnapshotError> {
        let (offset, image) = self.stable_image();
        Ok((offset, image.snapshot_records()?))
    }

    /// Starts over from a snapshot whose last contained offset is `last_offset`: its records
    /// replace the image.
    pub fn load_snapshot<V: AsRef<[u8]>>(
        &mut self,
        last_offset: Offset,
        values: impl IntoIterator<Item = V>,
    ) -> Result<(), ReplayError> {
        let mut load = SnapshotLoad::new(last_offset);
        for value in values {
            load.replay_value(value.as_ref())?;
        }
        self.finish_snapshot_load(load);
        Ok(())
    }

    /// Starts over from a snapshot loaded with [`SnapshotLoad`].
    pub fn finish_snapshot_load(&mut self, load: SnapshotLoad) {
        let registration_offsets = load
            .image
            .cluster
            .brokers
            .keys()
            .map(|id| (*id, load.last_offset))
            .collect();
        let state = ControllerState {
            image: load.image,
            transaction: None,
            registration_offsets,
            // Counted since the process started, a loaded snapshot or not (Java's meters).
            elections: self.committed_state().elections,
        };
        self.timeline = Timeline::new(state, load.last_offset);
        self.committed = load.last_offset;
    }

    /// Checks every invariant of the state and of its versions.
    pub fn check(&self) -> Result<(), InvariantViolation> {
        self.timeline.check()?;
        self.image().check()?;
        let state = self.latest_state();
        if !state
            .registration_offsets
            .keys()
            .eq(state.image.cluster.brokers.keys())
        {
            return Err(InvariantViolation::RegistrationOffsetsMismatch);
        }
        if let Some(first) = self.timeline.kept().first() {
            if *first > self.retain_from() {
                return Err(InvariantViolation::OldestVersionTooNew {
                    oldest: *first,
                    needed: self.retain_from(),
                });
            }
        }
        Ok(())
    }
}

fn no_transaction(record: &'static str, offset: Offset) -> ReplayError {
    Refusal::NoOpenTransaction { record }.at(offset)
}
