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
use super::snapshot_job::{self, SnapshotOutcome};
use crate::controller::{Controller, ReplayError, SnapshotLoad};
use crate::raft::{
    FatalError, Instant, LogError, Offset, OffsetAndEpoch, QuorumStateStore, Raft, RaftLog,
    Records, SnapshotError, SnapshotReader,
};
use crate::server::image_snapshot::ImageSnapshotError;

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

/// Bytes of committed batches (or of a snapshot being loaded) replayed per turn of the node
/// loop: a million partitions are replayed over many turns, and the loop answers its peers in
/// between.
const REPLAY_BYTES_PER_TURN: u64 = 4 << 20;

/// Where replay stands after a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    /// Every committed batch is replayed.
    CaughtUp,
    /// More wait for the next turn.
    Behind,
}

/// A snapshot being loaded into the controller, a few batches per turn.
struct Loading {
    reader: SnapshotReader,
    load: SnapshotLoad,
}

pub struct SnapshotPolicy {
    max_bytes: u64,
    max_interval: Option<Duration>,
    /// Committed batches below this offset have been counted.
    counted_to: Offset,
    /// Bytes of committed data batches since the last snapshot was started.
    bytes_since: u64,
    /// The epoch of the last counted batch (the epoch of a snapshot ending at `counted_to`).
    last_epoch: i32,
    /// The timestamp of the last counted batch (that snapshot's last contained log timestamp).
    last_timestamp: i64,
    last_snapshot_at: Instant,
    /// The snapshot the controller is loading. Invariant: while it is `Some`, nothing after
    /// `counted_to` is replayed.
    loading: Option<Loading>,
    /// The snapshot being written on its thread, and how long the raft loop spent opening it.
    /// Invariant: at most one at a time; the thread always reports back.
    in_flight: Option<(OffsetAndEpoch, Duration)>,
    /// Where a snapshot job reports back.
    events: mpsc::Sender<Event>,
    /// Snapshots loaded into the controller (Java's loader's HandleLoadSnapshotCount).
    snapshot_loads: u64,
    /// The last snapshot this node wrote, for its gauges.
    last_written: Option<WrittenSnapshot>,
}

/// A snapshot this node wrote: its size, how long writing took, and when it was frozen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WrittenSnapshot {
    pub records: u64,
    pub bytes: u64,
    pub duration: Duration,
    pub at: Instant,
}

impl SnapshotPolicy {
    /// The last snapshot this node wrote, if any since it started.
    pub fn last_written(&self) -> Option<WrittenSnapshot> {
        self.last_written
    }

    /// Snapshots loaded into the controller so far.
    pub fn snapshot_loads(&self) -> u64 {
        self.snapshot_loads
    }

    /// The append timestamp of the last committed batch counted (replayed, for a controller).
    pub fn last_timestamp(&self) -> i64 {
        self.last_timestamp
    }

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
            loading: None,
            in_flight: None,
            events,
            snapshot_loads: 0,
            last_written: None,
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
        let mut budget = REPLAY_BYTES_PER_TURN;
        if self.loading.is_none() && raft.committed_batches(self.counted_to).is_err() {
            // The log now starts at a snapshot (ours or the leader's): count from there.
            self.bytes_since = 0;
            match raft.latest_snapshot_reader()? {
                Some(snapshot) => {
                    self.counted_to = snapshot.id().offset;
                    self.last_epoch = snapshot.id().epoch;
                    self.last_timestamp = snapshot.last_contained_log_timestamp();
                    if controller.is_some() {
                        let load = SnapshotLoad::new(self.counted_to - 1);
                        self.loading = Some(Loading {
                            reader: snapshot,
                            load,
                        });
                    }
                }
                None => self.counted_to = raft.log().start_offset(),
            }
        }
        if let (Some(loading), Some(c)) = (self.loading.as_mut(), controller.as_deref_mut()) {
            while budget > 0 {
                let Some(batch) = loading.reader.next() else {
                    let done = self.loading.take().expect("loading");
                    c.finish_snapshot_load(done.load);
                    self.snapshot_loads += 1;
                    break;
                };
                let batch = batch?;
                budget = budget.saturating_sub(batch.size_in_bytes() as u64);
                if let Records::Data(values) = &batch.records {
                    for v in values {
                        loading.load.replay_value(v)?;
                    }
                }
            }
            if self.loading.is_some() {
                return Ok(Replay::Behind);
            }
        }
        let Ok(batches) = raft.committed_batches(self.counted_to) else {
            return Ok(Replay::CaughtUp);
        };
        for b in batches {
            let b = b?;
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
            budget = budget.saturating_sub(b.size_in_bytes() as u64);
            if budget == 0 {
                return Ok(Replay::Behind);
            }
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
            self.start(raft, now, controller)?;
        }
        Ok(Replay::CaughtUp)
    }

    /// Opens a snapshot of the controller's published image at the last counted batch and
    /// hands it to a thread of its own. The count starts over as it is started (as Java's
    /// generator does when it schedules one), so what commits meanwhile counts for the next.
    fn start<L: RaftLog, S: QuorumStateStore>(
        &mut self,
        raft: &mut Raft<L, S>,
        now: Instant,
        controller: &Controller,
    ) -> Result<(), CommitError> {
        let started = std::time::Instant::now();
        let id = OffsetAndEpoch::new(self.counted_to, self.last_epoch);
        if raft
            .log()
            .latest_snapshot_id()
            .is_some_and(|s| s.offset >= id.offset)
        {
            self.bytes_since = 0;
            return Ok(());
        }
        let (offset, records) = match controller.snapshot() {
            Ok(snapshot) => snapshot,
            Err(e) => {
                warn!(target: "kraftd::raft", "could not snapshot the image at {id}: {e}");
                self.bytes_since = 0;
                return Ok(());
            }
        };
        if offset + 1 != id.offset {
            // A metadata transaction is open: the published image is behind the commit point.
            // The snapshot waits for its end, as Java's does.
            return Ok(());
        }
        let writer = match raft.snapshot_writer(id, self.last_timestamp) {
            Ok(w) => w,
            Err(SnapshotError::Log(e)) if e.is_fault() => return Err(e.into()),
            Err(SnapshotError::Halted) => return Ok(()),
            Err(e) => {
                warn!(target: "kraftd::raft", "could not create snapshot {id}: {e}");
                self.bytes_since = 0;
                return Ok(());
            }
        };
        self.bytes_since = 0;
        self.last_snapshot_at = now;
        let events = self.events.clone();
        let done = move |outcome| {
            let _ = events.send(Event::SnapshotWritten(Box::new(outcome)));
        };
        match snapshot_job::spawn(writer, records, offset, done) {
            Ok(()) => self.in_flight = Some((id, started.elapsed())),
            Err(e) => {
                warn!(target: "kraftd::raft", "could not start a thread to write snapshot {id}: {e}; the next snapshot is tried later")
            }
        }
        Ok(())
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
                // One job at a time, so this cannot be; its sealed file is dropped (removed).
                warn!(target: "kraftd::raft", "snapshot {} was written but {other:?} was expected; it is dropped", outcome.id);
                self.in_flight = other;
                return Ok(());
            }
        };
        let sealed = match outcome.result {
            Ok(sealed) => sealed,
            Err(ImageSnapshotError::Log(e)) if e.is_fault() => return Err(e.into()),
            Err(e) => {
                warn!(target: "kraftd::raft", "could not create snapshot {}: {e}", outcome.id);
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
                self.last_written = Some(WrittenSnapshot {
                    records,
                    bytes,
                    duration: elapsed,
                    at: now,
                });
                raft.maybe_clean(now);
                Ok(())
            }
            Err(SnapshotError::Log(e)) if e.is_fault() => Err(e.into()),
            // The core has emitted its fatal action; the node loop halts on it.
            Err(SnapshotError::Halted) => Ok(()),
            Err(e) => {
                warn!(target: "kraftd::raft", "could not create snapshot {}: {e}", outcome.id);
                Ok(())
            }
        }
    }
}
