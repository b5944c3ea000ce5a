//! When to snapshot, and what a snapshot holds.
//!
//! Kafka's controller snapshots its metadata image once `metadata.log.max.record.bytes.between.
//! snapshots` bytes of committed batches have been applied since the last one, or
//! `metadata.log.max.snapshot.interval.ms` has passed with new data. Committed batches are
//! replayed into the controller here, and a snapshot holds the controller's published image
//! (`Controller::snapshot`), in Java's `ImageWriter` record order. It is written on a thread of
//! its own (`snapshot_job`); the raft loop only opens it and, once sealed, freezes it.

use std::sync::mpsc;
use std::time::Duration;

use tracing::{info, warn};

use super::event::Event;
use super::snapshot_job::{self, SnapshotJobError, SnapshotOutcome};
use crate::controller::{Controller, ReplayError};
use crate::raft::{
    FatalError, Instant, LogError, Offset, OffsetAndEpoch, QuorumStateStore, Raft, RaftLog,
    Records, SnapshotError,
};

/// Why applying newly committed batches must stop the node.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    #[error(transparent)]
    Log(#[from] LogError),
    /// A committed batch could not be read (the reader names the offset and the file).
    #[error(transparent)]
    Read(#[from] FatalError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

impl CommitError {
    /// The node's fatal error for it.
    pub fn fatal(&self) -> FatalError {
        match self {
            CommitError::Log(e) => FatalError::storage(e),
            CommitError::Read(e) => e.clone(),
            CommitError::Replay(e) => FatalError::CorruptRecord {
                offset: e.offset,
                detail: e.to_string(),
            },
        }
    }
}

/// Bytes of committed batches replayed per turn of the node loop: a log of a million
/// partitions is replayed over many turns, and the loop answers its peers in between.
const REPLAY_BYTES_PER_TURN: u64 = 4 << 20;

/// Where replay stands after a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    /// Every committed batch is replayed.
    CaughtUp,
    /// More committed batches wait for the next turn.
    Behind,
}

pub struct SnapshotPolicy {
    max_bytes: u64,
    max_interval: Option<Duration>,
    /// Committed batches below this offset have been counted.
    counted_to: Offset,
    /// Bytes of committed data batches since the last snapshot.
    bytes_since: u64,
    /// The epoch of the last counted batch (the epoch of a snapshot ending at `counted_to`).
    last_epoch: i32,
    /// The timestamp of the last counted batch (that snapshot's last contained log timestamp).
    last_timestamp: i64,
    last_snapshot_at: Instant,
    /// The snapshot being written on its thread, and how long the raft loop spent opening it.
    /// Invariant: at most one at a time.
    in_flight: Option<(OffsetAndEpoch, Duration)>,
    /// Where a snapshot job reports back.
    events: mpsc::Sender<Event>,
}

impl SnapshotPolicy {
    pub fn new(
        max_bytes: u64,
        max_interval: Option<Duration>,
        now: Instant,
        events: mpsc::Sender<Event>,
    ) -> SnapshotPolicy {
        SnapshotPolicy {
            max_bytes,
            max_interval,
            counted_to: 0,
            bytes_since: 0,
            last_epoch: 0,
            last_timestamp: 0,
            last_snapshot_at: now,
            in_flight: None,
            events,
        }
    }

    /// Counts newly committed batches (replaying each into the controller, if any), at most
    /// `REPLAY_BYTES_PER_TURN` of them, and snapshots when caught up and due. `Behind`: call
    /// again on the loop's next turn.
    pub fn on_commit<L: RaftLog, S: QuorumStateStore>(
        &mut self,
        raft: &mut Raft<L, S>,
        now: Instant,
        mut controller: Option<&mut Controller>,
    ) -> Result<Replay, CommitError> {
        if raft.high_watermark().is_none() {
            return Ok(Replay::CaughtUp);
        }
        if raft.committed_batches(self.counted_to).is_err() {
            // The log now starts at a snapshot (ours or the leader's): count from there.
            self.bytes_since = 0;
            match raft.latest_snapshot_reader()? {
                Some(snapshot) => {
                    self.counted_to = snapshot.id().offset;
                    self.last_epoch = snapshot.id().epoch;
                    self.last_timestamp = snapshot.last_contained_log_timestamp();
                    // Streamed: the first unreadable batch ends the records and halts.
                    let mut unreadable = None;
                    let records = snapshot
                        .records()
                        .map_while(|r| r.map_err(|e| unreadable = Some(e)).ok());
                    if let Some(c) = controller.as_deref_mut() {
                        c.load_snapshot(self.counted_to - 1, records)?;
                    }
                    if let Some(e) = unreadable {
                        return Err(e.into());
                    }
                }
                None => self.counted_to = raft.log().start_offset(),
            }
        }
        let Ok(batches) = raft.committed_batches(self.counted_to) else {
            return Ok(Replay::CaughtUp);
        };
        let mut budget = REPLAY_BYTES_PER_TURN;
        for b in batches {
            if budget == 0 {
                return Ok(Replay::Behind);
            }
            let b = b?;
            budget = budget.saturating_sub(b.size_in_bytes() as u64);
            if !b.is_control() {
                self.bytes_since += b.size_in_bytes() as u64;
            }
            match (&b.records, controller.as_deref_mut()) {
                (Records::Data(values), Some(c)) => {
                    c.replay_committed_batch(b.base_offset, values)?
                }
                (_, Some(c)) => c.skip_committed_control_batch(b.last_offset()),
                (_, None) => {}
            }
            self.last_epoch = b.epoch;
            self.last_timestamp = b.append_time;
            self.counted_to = b.next_offset();
        }
        let Some(controller) = controller else {
            // A bare raft node replays nothing, so it has no image to snapshot.
            return Ok(Replay::CaughtUp);
        };
        let due_bytes = self.bytes_since >= self.max_bytes;
        let due_time = self.bytes_since > 0
            && self
                .max_interval
                .is_some_and(|i| now >= self.last_snapshot_at + i);
        if (due_bytes || due_time) && self.in_flight.is_none() {
            self.start(raft, controller)?;
        }
        Ok(Replay::CaughtUp)
    }

    /// Opens a snapshot of the controller's published image at the last counted batch and
    /// hands it to a thread of its own.
    fn start<L: RaftLog, S: QuorumStateStore>(
        &mut self,
        raft: &mut Raft<L, S>,
        controller: &Controller,
    ) -> Result<Option<OffsetAndEpoch>, CommitError> {
        let started = std::time::Instant::now();
        let id = OffsetAndEpoch::new(self.counted_to, self.last_epoch);
        if raft
            .log()
            .latest_snapshot_id()
            .is_some_and(|s| s.offset >= id.offset)
        {
            self.bytes_since = 0;
            return Ok(None);
        }
        let (offset, records) = match controller.snapshot() {
            Ok(snapshot) => snapshot,
            Err(e) => {
                warn!(target: "kraftd::raft", "could not snapshot the image at {id}: {e}");
                self.bytes_since = 0;
                return Ok(None);
            }
        };
        if offset + 1 != id.offset {
            // A metadata transaction is open: the published image is behind the commit point.
            // The snapshot waits for its end, as Java's does.
            return Ok(None);
        }
        let writer = match raft.snapshot_writer(id, self.last_timestamp) {
            Ok(w) => w,
            Err(SnapshotError::Log(e)) if e.is_fault() => return Err(e.into()),
            Err(SnapshotError::Halted) => return Ok(None),
            Err(e) => {
                warn!(target: "kraftd::raft", "could not create snapshot {id}: {e}");
                self.bytes_since = 0;
                return Ok(None);
            }
        };
        let Err(e) = snapshot_job::spawn(writer, records, offset, self.events.clone()) else {
            self.in_flight = Some((id, started.elapsed()));
            return Ok(Some(id));
        };
        warn!(target: "kraftd::raft", "could not start a thread to write snapshot {id}: {e}");
        Ok(None)
    }

    /// A snapshot job is done: freezes its sealed snapshot (a rename). A fault while it was
    /// written is the node's.
    pub fn on_written<L: RaftLog, S: QuorumStateStore>(
        &mut self,
        raft: &mut Raft<L, S>,
        now: Instant,
        outcome: SnapshotOutcome,
    ) -> Result<(), CommitError> {
        let opening = match self.in_flight.take() {
            Some((id, opening)) if id == outcome.id => opening,
            other => {
                self.in_flight = other;
                return Ok(());
            }
        };
        let sealed = match outcome.result {
            Ok(sealed) => sealed,
            Err(SnapshotJobError::Log(e)) if e.is_fault() => return Err(e.into()),
            Err(e) => {
                warn!(target: "kraftd::raft", "could not create snapshot {}: {e}", outcome.id);
                self.bytes_since = 0;
                return Ok(());
            }
        };
        let freezing = std::time::Instant::now();
        let (records, bytes, elapsed) = (sealed.records, sealed.bytes, sealed.elapsed);
        match raft.freeze_snapshot(sealed.writer) {
            Ok(()) => {
                info!(
                    target: "kraftd::raft",
                    "created snapshot {} of the image ({records} records, {bytes} bytes) in {} ms on its own thread; \
                     the raft loop spent {} us opening it and {} us freezing it",
                    outcome.id,
                    elapsed.as_millis(),
                    opening.as_micros(),
                    freezing.elapsed().as_micros()
                );
                self.bytes_since = 0;
                self.last_snapshot_at = now;
                raft.maybe_clean(now);
                Ok(())
            }
            Err(SnapshotError::Log(e)) if e.is_fault() => Err(e.into()),
            // The core has emitted its fatal action; the node loop halts on it.
            Err(SnapshotError::Halted) => Ok(()),
            Err(e) => {
                warn!(target: "kraftd::raft", "could not create snapshot {}: {e}", outcome.id);
                self.bytes_since = 0;
                Ok(())
            }
        }
    }
}
