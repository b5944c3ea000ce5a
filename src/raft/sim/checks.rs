//! Cluster-wide invariants, checked after every simulated event (Kafka's
//! `RaftEventSimulationTest` invariants): single leader per epoch, monotonic epochs, monotonic
//! leader high watermark, the high watermark present on a majority, consistent committed data
//! and snapshots, the snapshot at the log start; and of the replicated machines, one committed
//! state per committed offset (ConsistentImage).

use std::collections::BTreeMap;

use super::acknowledged::voter_sets_for;
use crate::raft::log::{Batch, RaftLog, ValidOffsetAndEpoch};
use crate::raft::mem_log::MemLog;
use crate::raft::quorum_state::{MemQuorumStateStore, QuorumStateStore};
use crate::raft::types::{Epoch, NodeId, Offset, OffsetAndEpoch, VoterSet};

/// FNV-1a.
pub fn digest(bytes: &[u8], mut h: u64) -> u64 {
    if h == 0 {
        h = 0xcbf2_9ce4_8422_2325;
    }
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn batch_digest(b: &Batch) -> u64 {
    digest(format!("{:?}|{:?}", b.epoch, b.records).as_bytes(), 0)
}

/// One node's state as the checker sees it (live or down).
pub struct NodeView<'a> {
    pub id: NodeId,
    pub directory_id: Option<crate::protocol::codec::Uuid>,
    /// A voter of the initial voter set (what the checks use before any voter set is recorded).
    pub is_voter: bool,
    pub log: &'a MemLog,
    pub store: &'a MemQuorumStateStore,
    /// Live nodes: their HW and whether they are the leader.
    pub high_watermark: Option<Offset>,
    pub leader_epoch: Option<Epoch>,
    /// Live nodes: the voter sets in their log since the latest snapshot, by offset.
    pub voter_history: &'a [(Offset, VoterSet)],
}

#[derive(Debug, Default)]
pub struct Checker {
    leaders: BTreeMap<Epoch, NodeId>,
    epochs: BTreeMap<NodeId, Epoch>,
    /// Largest HW any leader reported (MonotonicHighWatermark).
    max_leader_hw: Option<Offset>,
    /// The newest epoch in which a leader was seen.
    max_leader_epoch: Option<Epoch>,
    /// Committed batches seen so far, by base offset: (last offset, epoch, digest).
    committed: BTreeMap<Offset, (Offset, Epoch, u64)>,
    verified_below: BTreeMap<NodeId, Offset>,
    snapshots: BTreeMap<OffsetAndEpoch, u64>,
    /// (node, snapshot) pairs already compared.
    snapshots_checked: std::collections::BTreeSet<(NodeId, OffsetAndEpoch)>,
    /// The machines' committed digests by committed offset: (first node there, digest).
    images: BTreeMap<Offset, (NodeId, u64)>,
}

impl Checker {
    pub fn check(&mut self, nodes: &[NodeView<'_>]) -> Result<(), String> {
        // AtMostOneUncommittedVoterSet: past the largest HW any node knows, no log holds two
        // voter sets (a follower's own HW may lag behind the commit of the first).
        let committed = nodes
            .iter()
            .filter_map(|n| n.high_watermark)
            .chain(self.max_leader_hw)
            .max();
        for n in nodes {
            self.check_election_state(n)?;
            self.check_log(n)?;
            self.check_committed(n)?;
            // Java refuses a VotersRecord that changes more than one voter at once.
            for pair in n.voter_history.windows(2) {
                let (a, b) = (&pair[0].1, &pair[1].1);
                let changed = a.ids().filter(|id| b.node(*id).is_none()).count()
                    + b.ids().filter(|id| a.node(*id).is_none()).count();
                if changed > 1 {
                    return Err(format!(
                        "OneVoterAtATime: n{} has voter sets {:?} then {:?} at offset {}",
                        n.id,
                        a.ids().collect::<Vec<_>>(),
                        b.ids().collect::<Vec<_>>(),
                        pair[1].0
                    ));
                }
            }
            if let Some(hw) = committed {
                // A set loaded from a snapshot (recorded at its end offset − 1) is committed.
                let log_start = n.log.latest_snapshot_id().map_or(0, |s| s.offset);
                let past: Vec<Offset> = n
                    .voter_history
                    .iter()
                    .map(|(o, _)| *o)
                    .filter(|o| *o >= hw && *o >= log_start)
                    .collect();
                if past.len() > 1 {
                    return Err(format!(
                        "AtMostOneUncommittedVoterSet: n{} has voter sets at offsets {past:?}, past the high watermark {hw}",
                        n.id
                    ));
                }
            }
        }
        self.check_leader_hw(nodes)?;
        self.check_majority_has_hw(nodes)
    }

    /// ConsistentImage: a replica's machine reached committed offset `offset` with committed
    /// state `digest`; every replica has the same state there.
    pub fn check_image(&mut self, node: NodeId, offset: Offset, digest: u64) -> Result<(), String> {
        let (first, known) = *self.images.entry(offset).or_insert((node, digest));
        if known != digest {
            return Err(format!(
                "ConsistentImage: n{node}'s committed state at offset {offset} (digest {digest:016x}) differs from n{first}'s ({known:016x})"
            ));
        }
        Ok(())
    }

    /// ConsistentImage after a renounce: the former leader's latest state (`digest`) is the
    /// committed state at its committed offset `offset`, writes never committed reverted.
    pub fn check_renounced(&self, node: NodeId, offset: Offset, digest: u64) -> Result<(), String> {
        if offset < 0 {
            return Ok(());
        }
        match self.images.get(&offset) {
            Some((_, known)) if *known == digest => Ok(()),
            Some((first, known)) => Err(format!(
                "ConsistentImage: n{node} renounced to committed offset {offset}, but its state (digest {digest:016x}) is not the committed one n{first} reached there ({known:016x})"
            )),
            None => Err(format!(
                "ConsistentImage: n{node} renounced to committed offset {offset}, which no machine reached"
            )),
        }
    }

    /// MonotonicHighWatermark: the HW of the newest leader never goes back.
    fn check_leader_hw(&mut self, nodes: &[NodeView<'_>]) -> Result<(), String> {
        let newest = nodes
            .iter()
            .filter(|n| n.leader_epoch.is_some())
            .max_by_key(|n| n.leader_epoch);
        // A deposed leader (of an epoch below the newest one ever seen) does not count.
        let newest = newest.filter(|n| n.leader_epoch >= self.max_leader_epoch);
        if let Some(n) = newest {
            self.max_leader_epoch = n.leader_epoch;
            if let Some(hw) = n.high_watermark {
                if self.max_leader_hw.is_some_and(|m| hw < m) {
                    return Err(format!(
                        "MonotonicHighWatermark: leader {} reports {hw} after {:?}",
                        n.id, self.max_leader_hw
                    ));
                }
                self.max_leader_hw = Some(hw);
            }
        }
        Ok(())
    }

    fn check_election_state(&mut self, n: &NodeView<'_>) -> Result<(), String> {
        let Ok(Some(e)) = n.store.read_election_state() else {
            return Ok(());
        };
        let prev = self.epochs.insert(n.id, e.epoch).unwrap_or(0);
        if e.epoch < prev {
            return Err(format!(
                "MonotonicEpoch: node {} went from epoch {prev} to {}",
                n.id, e.epoch
            ));
        }
        if let Some(l) = e.leader_id {
            let known = *self.leaders.entry(e.epoch).or_insert(l);
            if known != l {
                return Err(format!(
                    "SingleLeader: epoch {} has leaders {known} and {l} (node {})",
                    e.epoch, n.id
                ));
            }
        }
        Ok(())
    }

    fn check_log(&mut self, n: &NodeView<'_>) -> Result<(), String> {
        let log = n.log;
        let start = log.start_offset();
        if let Some(earliest) = log.earliest_snapshot_id() {
            // The log start may be below the earliest snapshot: after a restart it is the first
            // segment's base offset (Java's `UnifiedLog` recovery), and the segment holding
            // the snapshot's end offset is kept whole. Never above it: the records between
            // them would be in neither.
            if earliest.offset < start {
                return Err(format!(
                    "SnapshotAtLogStart: node {} snapshot {earliest} below log start {start}",
                    n.id
                ));
            }
            if earliest != OffsetAndEpoch::new(0, 0) {
                if let ValidOffsetAndEpoch::Diverging(d) =
                    RaftLog::validate_offset_and_epoch(log, earliest.offset, earliest.epoch)
                {
                    return Err(format!(
                        "SnapshotAtLogStart: node {} earliest snapshot {earliest} diverges at {d}",
                        n.id
                    ));
                }
            }
        } else if start > 0 {
            return Err(format!(
                "SnapshotAtLogStart: node {} starts at {start} without a snapshot",
                n.id
            ));
        }
        for id in log.snapshot_ids() {
            if id == OffsetAndEpoch::new(0, 0) || !self.snapshots_checked.insert((n.id, id)) {
                continue;
            }
            let read = RaftLog::open_snapshot(log, id).and_then(|s| {
                s.map(|s| s.records().collect::<Result<Vec<_>, _>>())
                    .transpose()
            });
            let Ok(Some(data)) = read else {
                return Err(format!("node {} cannot read snapshot {id}", n.id));
            };
            let d = data.iter().fold(0, |h, v| digest(v, h));
            let known = *self.snapshots.entry(id).or_insert(d);
            if known != d {
                return Err(format!(
                    "ConsistentCommittedData: snapshot {id} differs on node {}",
                    n.id
                ));
            }
        }
        Ok(())
    }

    fn check_committed(&mut self, n: &NodeView<'_>) -> Result<(), String> {
        let Some(hw) = n.high_watermark else {
            return Ok(());
        };
        let from = self
            .verified_below
            .get(&n.id)
            .copied()
            .unwrap_or(0)
            .max(n.log.start_offset());
        if from >= hw {
            return Ok(());
        }
        let mut next = from;
        // From the batch holding `from`: what was verified before is not read again.
        let batches = RaftLog::read(n.log, from, usize::MAX)
            .map_err(|e| format!("node {} cannot read its log from {from}: {e}", n.id))?;
        let first = batches.partition_point(|b| b.next_offset() <= from);
        for b in &batches[first..] {
            if b.last_offset() >= hw {
                break;
            }
            let mine = (b.last_offset(), b.epoch, batch_digest(b));
            let known = *self.committed.entry(b.base_offset).or_insert(mine);
            if known != mine {
                return Err(format!(
                    "ConsistentCommittedData: node {} has {b} at {} but another node committed {:?}",
                    n.id, b.base_offset, known
                ));
            }
            next = b.next_offset();
        }
        self.verified_below.insert(n.id, next);
        Ok(())
    }

    /// MajorityReachedHighWatermark: a majority of voters hold the leader's HW durably.
    /// With voter changes: a majority of the voter set in force at the leader's last committed
    /// offset, or of a later one (the leader counts its latest set, uncommitted included).
    fn check_majority_has_hw(&self, nodes: &[NodeView<'_>]) -> Result<(), String> {
        let static_voters: Vec<NodeId> =
            nodes.iter().filter(|n| n.is_voter).map(|n| n.id).collect();
        for leader in nodes.iter().filter(|n| n.leader_epoch.is_some()) {
            let Some(hw) = leader.high_watermark else {
                continue;
            };
            let history = leader.voter_history;
            let at = history.iter().rposition(|(o, _)| *o < hw).unwrap_or(0);
            let (committed, appended) = history.split_at((at + 1).min(history.len()));
            let candidates = voter_sets_for(committed, appended, nodes, &static_voters);
            let holding = |ids: &Vec<NodeId>| {
                nodes
                    .iter()
                    .filter(|n| ids.contains(&n.id) && n.log.flushed_end_offset() >= hw)
                    .count()
            };
            if !candidates.iter().any(|ids| holding(ids) > ids.len() / 2) {
                return Err(format!(
                    "MajorityReachedHighWatermark: leader {} HW {hw} is durable on no majority of the voter sets {candidates:?}",
                    leader.id
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Checker;

    #[test]
    fn consistent_image_refuses_two_states_at_one_committed_offset() {
        let mut c = Checker::default();
        c.check_image(1, 4, 0xaa).unwrap();
        c.check_image(2, 4, 0xaa).unwrap();
        c.check_image(2, 7, 0xbb).unwrap();
        let e = c.check_image(3, 7, 0xcc).unwrap_err();
        assert!(e.starts_with("ConsistentImage: n3"), "{e}");
        assert!(e.contains("offset 7") && e.contains("n2's"), "{e}");
    }

    #[test]
    fn a_renounce_must_return_to_the_committed_state() {
        let mut c = Checker::default();
        c.check_image(1, 4, 0xaa).unwrap();
        c.check_renounced(1, 4, 0xaa).unwrap();
        c.check_renounced(1, -1, 0xdd).unwrap();
        let e = c.check_renounced(1, 4, 0xdd).unwrap_err();
        assert!(e.contains("renounced to committed offset 4"), "{e}");
        let e = c.check_renounced(1, 5, 0xaa).unwrap_err();
        assert!(e.contains("which no machine reached"), "{e}");
    }
}
