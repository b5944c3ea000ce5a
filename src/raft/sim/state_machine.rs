//! The simulation's replicated state machine. [`SimStateMachine`] is the node's side of it: it
//! applies committed batches, loads snapshots when it falls behind the log start, takes
//! snapshots every few batches, and on a leader applies its own proposals ahead of the commit
//! and reverts them when the leadership is lost. What the state is lives behind
//! [`ReplicatedMachine`]: by default [`ValueList`], an append-only list of unique values (Kafka's
//! `ReplicatedCounter` in spirit); a test may replicate the metadata controller instead.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use super::checks::digest;
use crate::raft::accumulator::Proposed;
use crate::raft::log::{RaftLog, Records};
use crate::raft::mem_log::MemLog;
use crate::raft::node::Raft;
use crate::raft::quorum_state::MemQuorumStateStore;
use crate::raft::types::{Epoch, Offset, OffsetAndEpoch};
use crate::raft::Instant;

pub type SimRaft = Raft<MemLog, MemQuorumStateStore>;

/// What a leader's machine decides its next proposal with.
pub struct Deciding<'a> {
    /// The proposal's number (1, 2, … across the cluster): the same number, the same choices.
    pub n: u64,
    pub now: Instant,
    /// The leader's raft: its epoch, voters and next offset, and what a decision may ask of it.
    pub raft: &'a mut SimRaft,
    /// The node stands in for a Java controller (it has Kafka's election rules).
    pub java: bool,
}

/// One proposal a machine decided: its record values and how the transcript names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub records: Vec<Vec<u8>>,
    pub label: String,
}

/// The state every replica derives from the committed log. Offsets are the records' own; a
/// batch's are `base_offset..base_offset + values.len()`. Errors are the machine refusing
/// what it was given: the simulation fails with them.
pub trait ReplicatedMachine: Send {
    /// The records of the next proposal, decided from this machine's latest state: what is
    /// committed and what this leader wrote since. `None`: nothing to write now.
    fn decide(&mut self, deciding: Deciding<'_>) -> Option<Proposal>;
    /// Whether `decide` reads the state. Then only a leader whose machine has every record
    /// below its next proposal decides (Kafka's active controller); otherwise any leader does.
    fn decides_from_state(&self) -> bool;
    /// A committed data batch, not applied before.
    fn apply_committed(&mut self, base_offset: Offset, values: &[Vec<u8>]) -> Result<(), String>;
    /// A committed control batch ending at `last_offset` (raft's own records).
    fn skip_control(&mut self, last_offset: Offset);
    /// The leader's own proposal, applied before it is committed.
    fn apply_written(&mut self, landed: Proposed, values: &[Vec<u8>]) -> Result<(), String>;
    /// The leader's own proposal, not applied ahead: it does not follow everything the machine
    /// holds (`Some`: where it landed), or raft refused it (`None`).
    fn not_written_ahead(&mut self, _landed: Option<Proposed>) -> Result<(), String> {
        Ok(())
    }
    /// Everything through `last_offset` (the end of a batch of its own writes) is committed.
    fn on_committed(&mut self, last_offset: Offset);
    /// The leadership is lost: what was written and not committed never happened.
    fn renounce(&mut self) -> Result<(), String>;
    /// Starts over from a snapshot holding everything through `last_offset`.
    fn load_snapshot(&mut self, last_offset: Offset, values: &[Vec<u8>]) -> Result<(), String>;
    /// The record values of a snapshot of the committed state; `None` when the committed
    /// state cannot be a snapshot now (the simulation tries again after the next batch).
    fn snapshot(&self) -> Result<Option<Vec<Vec<u8>>>, String>;
    /// A fingerprint of the committed state: equal states, equal digests.
    fn committed_digest(&self) -> u64;
    /// A fingerprint of the latest state (speculative writes included), comparable with
    /// `committed_digest`.
    fn latest_digest(&self) -> u64;
    /// The machine's own invariants.
    fn check(&self) -> Result<(), String>;
    /// What the latest state holds, in a few words (for transcripts).
    fn describe(&self) -> String;
}

/// Makes a node's machine: at the start and at every restart.
#[derive(Clone)]
pub struct MachineFactory(pub Arc<dyn Fn() -> Box<dyn ReplicatedMachine> + Send + Sync>);

impl MachineFactory {
    pub fn new(f: impl Fn() -> Box<dyn ReplicatedMachine> + Send + Sync + 'static) -> Self {
        MachineFactory(Arc::new(f))
    }
    pub fn make(&self) -> Box<dyn ReplicatedMachine> {
        (self.0)()
    }
}

impl Default for MachineFactory {
    fn default() -> Self {
        MachineFactory::new(|| Box::<ValueList>::default())
    }
}

impl fmt::Debug for MachineFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MachineFactory")
    }
}

/// The default machine: every committed data value, in order. Proposal `n` is the value `n`
/// as 8 big-endian bytes (`v{n}` in transcripts).
#[derive(Debug, Clone, Default)]
pub struct ValueList {
    /// Every committed value (snapshot contents).
    pub data: Vec<Vec<u8>>,
    /// Of `data`, folded value by value.
    digest: u64,
    /// The leader's own writes not yet committed: (last offset, values), oldest first.
    written: VecDeque<(Offset, Vec<Vec<u8>>)>,
}

impl ValueList {
    fn extend(&mut self, values: &[Vec<u8>]) {
        self.digest = values.iter().fold(self.digest, |h, v| digest(v, h));
        self.data.extend_from_slice(values);
    }
}

impl ReplicatedMachine for ValueList {
    fn decide(&mut self, d: Deciding<'_>) -> Option<Proposal> {
        Some(Proposal {
            records: vec![d.n.to_be_bytes().to_vec()],
            label: format!("v{}", d.n),
        })
    }
    fn decides_from_state(&self) -> bool {
        false
    }
    fn apply_committed(&mut self, _base: Offset, values: &[Vec<u8>]) -> Result<(), String> {
        self.extend(values);
        Ok(())
    }
    fn skip_control(&mut self, _last_offset: Offset) {}
    fn apply_written(&mut self, landed: Proposed, values: &[Vec<u8>]) -> Result<(), String> {
        self.written
            .push_back((landed.last_offset, values.to_vec()));
        Ok(())
    }
    fn on_committed(&mut self, last_offset: Offset) {
        while self.written.front().is_some_and(|(l, _)| *l <= last_offset) {
            let (_, values) = self.written.pop_front().expect("front");
            self.extend(&values);
        }
    }
    fn renounce(&mut self) -> Result<(), String> {
        self.written.clear();
        Ok(())
    }
    fn load_snapshot(&mut self, _last_offset: Offset, values: &[Vec<u8>]) -> Result<(), String> {
        *self = ValueList::default();
        self.extend(values);
        Ok(())
    }
    fn snapshot(&self) -> Result<Option<Vec<Vec<u8>>>, String> {
        Ok(Some(self.data.clone()))
    }
    fn committed_digest(&self) -> u64 {
        self.digest
    }
    fn latest_digest(&self) -> u64 {
        self.written
            .iter()
            .flat_map(|(_, values)| values)
            .fold(self.digest, |h, v| digest(v, h))
    }
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
    fn describe(&self) -> String {
        let ahead: usize = self.written.iter().map(|(_, v)| v.len()).sum();
        format!("{} values", self.data.len() + ahead)
    }
}

/// What the machines of one run did, across restarts (for reports).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MachineLog {
    /// Proposals a leader's machine applied before they committed.
    pub written_ahead: u64,
    /// Proposals a leader's machine did not take ahead (a control batch came between).
    pub not_taken_ahead: u64,
    /// Leaderships lost by a machine that had claimed one.
    pub renounces: u64,
    /// Of them, those that reverted writes never committed.
    pub renounces_reverting_writes: u64,
    pub snapshots_loaded: u64,
    pub snapshots_written: u64,
    /// Committed states compared across replicas (one per batch end a machine reached).
    pub states_compared: u64,
}

impl MachineLog {
    /// Adds another run's counts (totals of many seeds).
    pub fn add(&mut self, other: &MachineLog) {
        self.written_ahead += other.written_ahead;
        self.not_taken_ahead += other.not_taken_ahead;
        self.renounces += other.renounces;
        self.renounces_reverting_writes += other.renounces_reverting_writes;
        self.snapshots_loaded += other.snapshots_loaded;
        self.snapshots_written += other.snapshots_written;
        self.states_compared += other.states_compared;
    }
}

/// The node's driver of its machine.
pub struct SimStateMachine {
    /// The next offset to apply. Invariant: every offset below it is committed and applied.
    pub next_offset: Offset,
    /// Epoch and timestamp of the last applied batch (snapshot ids).
    pub last_epoch: Epoch,
    pub last_timestamp: i64,
    pub machine: Box<dyn ReplicatedMachine>,
    batches_since_snapshot: usize,
    /// Snapshots loaded (for invariants and transcripts).
    pub snapshots_loaded: u64,
    /// The leader epoch in which this state machine applied past the epoch start offset.
    pub claimed_epoch: Option<Epoch>,
    /// The epoch this machine acts as the leader's in, from its claim until it renounces.
    active_epoch: Option<Epoch>,
    /// The end of the leader's own writes applied ahead of the commit (`None`: none).
    /// Invariant: `Some(end)` has `end > next_offset`.
    written_end: Option<Offset>,
    /// The end of the last proposal of this leader that its machine did not take.
    not_taken_end: Offset,
}

/// What one apply pass did.
#[derive(Debug, Default)]
pub struct Applied {
    pub loaded_snapshot: Option<OffsetAndEpoch>,
    pub wrote_snapshot: bool,
    pub batches: usize,
    /// Each committed offset the machine reached (batch ends, a loaded snapshot's last
    /// offset) with its committed digest there.
    pub reached: Vec<(Offset, u64)>,
}

/// A renounce: the committed offset it reverted to and the machine's latest digest after it.
#[derive(Debug)]
pub struct Renounced {
    pub committed: Offset,
    pub latest_digest: u64,
    pub reverted_writes: bool,
}

impl SimStateMachine {
    pub fn new(machine: Box<dyn ReplicatedMachine>) -> SimStateMachine {
        SimStateMachine {
            next_offset: 0,
            last_epoch: 0,
            last_timestamp: 0,
            machine,
            batches_since_snapshot: 0,
            snapshots_loaded: 0,
            claimed_epoch: None,
            active_epoch: None,
            written_end: None,
            not_taken_end: 0,
        }
    }

    /// `Action::LeaderChange` made this node's machine the leader's for `epoch`.
    pub fn claim(&mut self, epoch: Epoch) {
        self.claimed_epoch = Some(epoch);
        self.active_epoch = Some(epoch);
    }

    /// How many offsets of its own writes this leader's machine holds ahead of the commit.
    pub fn written_ahead(&self) -> Offset {
        self.written_end.map_or(0, |end| end - self.next_offset)
    }

    /// Whether this leader's machine may decide the next proposal now.
    pub fn may_decide(&self, raft: &SimRaft) -> bool {
        if !self.machine.decides_from_state() {
            return true;
        }
        let holds_every_record = raft
            .leader_epoch_start_offset()
            .is_some_and(|start| self.next_offset > start)
            && self.not_taken_end <= self.next_offset;
        self.active_epoch == Some(raft.epoch()) && holds_every_record
    }

    /// A proposal of this leader reached its accumulator at `p`: its machine applies it ahead
    /// of the commit when it follows everything the machine holds. Whether it did.
    pub fn written(&mut self, p: Proposed, values: &[Vec<u8>]) -> Result<bool, String> {
        let end = self.written_end.unwrap_or(self.next_offset);
        if self.active_epoch != Some(p.epoch) || p.base_offset != end {
            self.not_taken_end = self.not_taken_end.max(p.last_offset + 1);
            self.machine
                .not_written_ahead(Some(p))
                .map_err(|e| format!("its own proposal at offset {}: {e}", p.base_offset))?;
            return Ok(false);
        }
        self.machine
            .apply_written(p, values)
            .map_err(|e| format!("its own proposal at offset {}: {e}", p.base_offset))?;
        self.written_end = Some(p.last_offset + 1);
        Ok(true)
    }

    /// Renounces when the machine acted as the leader's and the node no longer leads that
    /// epoch (another leader, a resignation, a shutdown).
    pub fn maybe_renounce(&mut self, raft: &SimRaft) -> Result<Option<Renounced>, String> {
        let Some(epoch) = self.active_epoch else {
            return Ok(None);
        };
        if raft.is_leader() && raft.epoch() == epoch {
            return Ok(None);
        }
        self.machine.renounce()?;
        self.active_epoch = None;
        self.not_taken_end = 0;
        Ok(Some(Renounced {
            committed: self.next_offset - 1,
            latest_digest: self.machine.latest_digest(),
            reverted_writes: self.written_end.take().is_some(),
        }))
    }

    /// Applies everything committed (below the HW); loads the latest snapshot first when the log
    /// no longer holds the next offset. Takes a snapshot every `snapshot_every` batches (0: never).
    pub fn catch_up(
        &mut self,
        raft: &mut SimRaft,
        snapshot_every: usize,
    ) -> Result<Applied, String> {
        let mut out = Applied::default();
        if raft.committed_batches(self.next_offset).is_err() {
            // A log fault here is the node's too: the batch is read again after its restart.
            if let Ok(Some(s)) = raft.latest_snapshot_reader() {
                let (id, timestamp) = (s.id(), s.last_contained_log_timestamp());
                if let Ok(data) = s.records().collect::<Result<Vec<_>, _>>() {
                    self.machine
                        .load_snapshot(id.offset - 1, &data)
                        .map_err(|e| format!("snapshot {id}: {e}"))?;
                    self.next_offset = id.offset;
                    self.last_epoch = id.epoch;
                    self.last_timestamp = timestamp;
                    self.written_end = None;
                    self.snapshots_loaded += 1;
                    out.loaded_snapshot = Some(id);
                    out.reached
                        .push((id.offset - 1, self.machine.committed_digest()));
                }
            }
        }
        if let Ok(batches) = raft.committed_batches(self.next_offset) {
            // A read fault ends the pass; the batch is read again later.
            for b in batches.map_while(Result::ok) {
                if b.base_offset != self.next_offset {
                    break;
                }
                match (&b.records, self.written_end) {
                    (records, Some(end)) => {
                        // Its own writes: applied already, now committed.
                        if b.next_offset() > end || !matches!(records, Records::Data(_)) {
                            return Err(format!(
                                "committed batch {b} is not one of the writes it applied ahead (below {end})"
                            ));
                        }
                        self.machine.on_committed(b.last_offset());
                        if b.next_offset() == end {
                            self.written_end = None;
                        }
                    }
                    (Records::Data(values), None) => self
                        .machine
                        .apply_committed(b.base_offset, values)
                        .map_err(|e| format!("committed batch {b}: {e}"))?,
                    (Records::Control(_), None) => self.machine.skip_control(b.last_offset()),
                }
                self.next_offset = b.next_offset();
                self.last_epoch = b.epoch;
                self.last_timestamp = b.append_time;
                self.batches_since_snapshot += 1;
                out.batches += 1;
                out.reached
                    .push((b.last_offset(), self.machine.committed_digest()));
            }
        }
        if snapshot_every > 0
            && self.batches_since_snapshot >= snapshot_every
            && self.next_offset > 0
        {
            let id = OffsetAndEpoch::new(self.next_offset, self.last_epoch);
            if raft.log().snapshot_size(id).is_none() {
                let data = self
                    .machine
                    .snapshot()
                    .map_err(|e| format!("snapshot at {id}: {e}"))?;
                if let Some(data) = data {
                    if let Ok(mut writer) = raft.snapshot_writer(id, self.last_timestamp) {
                        // One append is one batch: the records go in groups, as the node writes them.
                        if data.chunks(1024).all(|c| writer.append(c).is_ok())
                            && raft.freeze_snapshot(writer).is_ok()
                        {
                            self.batches_since_snapshot = 0;
                            out.wrote_snapshot = true;
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::{ReplicatedMachine, ValueList};

    fn landed(base_offset: i64, last_offset: i64) -> crate::raft::accumulator::Proposed {
        crate::raft::accumulator::Proposed {
            epoch: 1,
            base_offset,
            last_offset,
        }
    }

    fn v(n: u64) -> Vec<u8> {
        n.to_be_bytes().to_vec()
    }

    #[test]
    fn the_value_list_commits_its_own_writes_and_renounces_the_rest() {
        let mut leader = ValueList::default();
        let mut follower = ValueList::default();
        leader.apply_committed(0, &[v(1)]).unwrap();
        follower.apply_committed(0, &[v(1)]).unwrap();
        leader.apply_written(landed(1, 1), &[v(2)]).unwrap();
        leader.apply_written(landed(2, 3), &[v(3), v(4)]).unwrap();
        assert_eq!(leader.committed_digest(), follower.committed_digest());
        assert_ne!(leader.latest_digest(), leader.committed_digest());

        leader.on_committed(1);
        follower.apply_committed(1, &[v(2)]).unwrap();
        assert_eq!(leader.committed_digest(), follower.committed_digest());
        assert_eq!(leader.data, follower.data);

        leader.renounce().unwrap();
        assert_eq!(leader.latest_digest(), follower.committed_digest());
        leader.on_committed(3);
        assert_eq!(
            leader.data,
            vec![v(1), v(2)],
            "renounced writes never commit"
        );
    }
}
