//! The leader's state (Kafka's `LeaderState`): follower progress, the high-watermark rule,
//! check-quorum and the BeginQuorumEpoch heartbeat.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::accumulator::BatchAccumulator;
use super::config::{RaftConfig, OBSERVER_SESSION_TIMEOUT};
use super::reconfig::PendingVoterChange;
use super::time::Instant;
use super::types::{Epoch, NodeId, Offset, ReplicaKey, VoterNode, VoterSet};

/// What the leader knows of one replica.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaState {
    pub key: ReplicaKey,
    /// The replica's LEO as of its last valid fetch (the leader's own flushed LEO for itself).
    pub end_offset: Option<Offset>,
    pub last_fetch: Option<Instant>,
    pub last_caught_up: Option<Instant>,
    /// The leader's LEO at the replica's previous fetch (caught-up bookkeeping).
    pub leader_end_at_last_fetch: Option<Offset>,
}

impl ReplicaState {
    fn new(key: ReplicaKey) -> Self {
        ReplicaState {
            key,
            end_offset: None,
            last_fetch: None,
            last_caught_up: None,
            leader_end_at_last_fetch: None,
        }
    }

    /// Kafka's `ReplicaState.updateFollowerState`.
    fn update(&mut self, key: ReplicaKey, fetch_offset: Offset, now: Instant, leader_end: Offset) {
        if fetch_offset >= leader_end {
            self.last_caught_up = Some(now);
        } else if let (Some(prev_end), Some(prev_fetch)) =
            (self.leader_end_at_last_fetch, self.last_fetch)
        {
            if fetch_offset >= prev_end {
                self.last_caught_up = Some(
                    self.last_caught_up
                        .map_or(prev_fetch, |t| t.max(prev_fetch)),
                );
            }
        }
        self.key = key;
        self.end_offset = Some(fetch_offset);
        self.last_fetch = Some(now);
        self.leader_end_at_last_fetch = Some(leader_end);
    }
}

#[derive(Debug, Clone)]
pub struct LeaderState {
    pub epoch: Epoch,
    /// The LEO when elected: the offset of this epoch's LeaderChange record.
    pub epoch_start_offset: Offset,
    pub local: ReplicaKey,
    /// Voters that granted the vote (LeaderChange `GrantingVoters`), the leader included.
    pub granting_voters: BTreeSet<NodeId>,
    /// Progress of every voter of the latest voter set (uncommitted included). Invariant: holds
    /// the leader unless a VotersRecord of this epoch removed it (it resigns once that commits).
    pub voters: BTreeMap<NodeId, ReplicaState>,
    /// Progress of observers (non-voters with an id) that fetched; the leader itself once
    /// removed.
    pub observers: BTreeMap<ReplicaKey, ReplicaState>,
    /// Expiry of check-quorum: a majority must fetch within 1.5x the fetch timeout.
    pub check_quorum_deadline: Instant,
    check_quorum_timeout: Duration,
    /// Voters (other than the leader) that fetched since the check-quorum timer last reset.
    fetched_voters: BTreeSet<NodeId>,
    /// When to look again for voters that need a BeginQuorumEpoch.
    pub begin_quorum_deadline: Instant,
    begin_quorum_period: Duration,
    /// Proposals of this epoch not yet in the log (Kafka keeps it in `LeaderState` too).
    pub accumulator: BatchAccumulator,
    /// The add or remove in progress. Invariant: at most one, and none while another
    /// VotersRecord is uncommitted (checked before one starts).
    pub voter_change: Option<PendingVoterChange>,
    /// A removal of this leader committed: resign at the next poll.
    pub resign_requested: bool,
    /// Kraft.version 0: the static voters as UpdateRaftVoter requests report them (directory
    /// ids, listeners, kraft.version ranges), for an upgrade to kraft.version 1. `None` at
    /// kraft.version 1.
    pub upgrade_voters: Option<VoterSet>,
    /// The kraft.version this leader was asked to upgrade to and wrote (Kafka's
    /// `KRaftVersionUpgrade.Version`). Invariant: `Some` only with `upgrade_voters` `None`.
    pub requested_kraft_version: Option<i16>,
}

impl LeaderState {
    pub fn new(
        epoch: Epoch,
        epoch_start_offset: Offset,
        local: ReplicaKey,
        voters: &VoterSet,
        granting_voters: BTreeSet<NodeId>,
        now: Instant,
        cfg: &RaftConfig,
    ) -> Self {
        let fetch_timeout = cfg.fetch_timeout;
        let check_quorum_timeout = fetch_timeout * 3 / 2;
        LeaderState {
            epoch,
            epoch_start_offset,
            local,
            granting_voters,
            voters: voters
                .nodes()
                .map(|n| (n.key.id, ReplicaState::new(n.key)))
                .collect(),
            observers: BTreeMap::new(),
            check_quorum_deadline: now + check_quorum_timeout,
            check_quorum_timeout,
            fetched_voters: BTreeSet::new(),
            begin_quorum_deadline: now,
            begin_quorum_period: fetch_timeout / 2,
            accumulator: BatchAccumulator::new(epoch, epoch_start_offset, cfg.append_limits()),
            voter_change: None,
            resign_requested: false,
            upgrade_voters: None,
            requested_kraft_version: None,
        }
    }

    /// At kraft.version 0, Kafka's `KRaftVersionUpgrade.Voters`: the static voters with this
    /// leader's own entry as it is (key, listeners, supported range).
    pub fn seed_upgrade_voters(&mut self, voters: &VoterSet, cfg: &RaftConfig) {
        self.upgrade_voters = Some(voters.with_node(VoterNode {
            key: self.local,
            listeners: cfg.listeners.clone(),
            supported_kraft_version: super::config::SUPPORTED_KRAFT_VERSIONS,
        }));
    }

    /// The leader's own progress: among the voters, or the observers once removed.
    pub fn local_state(&self) -> Option<&ReplicaState> {
        self.voters
            .get(&self.local.id)
            .filter(|s| s.key.entry_matches(&self.local))
            .or_else(|| self.observers.get(&self.local))
    }

    /// Kafka's `updateVoterAndObserverStates`: the latest voter set was appended. Voters keep
    /// their progress (an observer becoming a voter brings its own); removed voters become
    /// observers. A leader that was its only voter starts the check-quorum timer afresh:
    /// its deadline was never kept while alone, and the new voter gets a whole timeout to fetch
    /// (Kafka keeps the stale timer, so its leader may resign as soon as a second voter joins).
    pub fn update_voter_set(&mut self, set: &VoterSet, now: Instant) {
        let was_alone = self.check_quorum_deadline() == Instant::NEVER;
        let mut old = std::mem::take(&mut self.voters);
        for n in set.nodes() {
            let mut state = match old.remove(&n.key.id) {
                Some(s) if n.key.entry_matches(&s.key) || s.key.entry_matches(&n.key) => s,
                other => {
                    if let Some(s) = other {
                        self.observers.entry(s.key).or_insert(s);
                    }
                    self.observers
                        .remove(&n.key)
                        .unwrap_or_else(|| ReplicaState::new(n.key))
                }
            };
            state.key = n.key;
            self.voters.insert(n.key.id, state);
        }
        for (_, s) in old {
            self.observers.entry(s.key).or_insert(s);
        }
        self.fetched_voters
            .retain(|id| self.voters.contains_key(id));
        if was_alone && self.check_quorum_deadline() != Instant::NEVER {
            self.fetched_voters.clear();
            self.check_quorum_deadline = now + self.check_quorum_timeout;
        }
    }

    /// The leader's own (flushed) end offset changed.
    pub fn update_local_end_offset(&mut self, end: Offset, now: Instant) {
        let local = self.local;
        let s = match self.voters.get_mut(&local.id) {
            Some(s) if s.key.entry_matches(&local) => s,
            _ => self
                .observers
                .entry(local)
                .or_insert_with(|| ReplicaState::new(local)),
        };
        s.end_offset = Some(end);
        s.last_fetch = Some(now);
        s.last_caught_up = Some(now);
        s.leader_end_at_last_fetch = Some(end);
    }

    /// Kafka's `isReplicaCaughtUp`, what a voter being added must be: an observer that has once
    /// reached the leader's end offset and fetched within the last hour.
    pub fn is_caught_up_observer(&self, key: &ReplicaKey, now: Instant) -> bool {
        const WITHIN: Duration = Duration::from_secs(3600);
        self.observers.get(key).is_some_and(|s| {
            s.last_caught_up.is_some()
                && s.last_fetch
                    .is_some_and(|t| now.saturating_since(t) < super::time::ms(WITHIN))
        })
    }

    /// A valid Fetch from `replica` at `fetch_offset`. Returns whether it was a voter.
    pub fn update_replica(
        &mut self,
        replica: ReplicaKey,
        fetch_offset: Offset,
        now: Instant,
        leader_end: Offset,
    ) -> bool {
        if let Some(s) = self
            .voters
            .get_mut(&replica.id)
            .filter(|s| s.key.entry_matches(&replica))
        {
            s.update(replica, fetch_offset, now, leader_end);
            true
        } else {
            if replica.id >= 0 {
                self.observers
                    .entry(replica)
                    .or_insert_with(|| ReplicaState::new(replica))
                    .update(replica, fetch_offset, now, leader_end);
            }
            false
        }
    }

    pub fn is_voter(&self, replica: &ReplicaKey) -> bool {
        self.voters
            .get(&replica.id)
            .is_some_and(|s| s.key.entry_matches(replica))
    }

    /// Kafka's `maybeUpdateHighWatermark`: the largest offset on a majority of voters, if it is
    /// past `epoch_start_offset` (the leader's own epoch is committed) and above `current`.
    pub fn high_watermark_candidate(&self, current: Option<Offset>) -> Option<Offset> {
        let mut offsets: Vec<Option<Offset>> = self.voters.values().map(|s| s.end_offset).collect();
        // Descending, unknown last.
        offsets.sort_by(|a, b| b.cmp(a));
        let candidate = offsets.get(self.voters.len() / 2).copied().flatten()?;
        (candidate > self.epoch_start_offset && current.is_none_or(|hw| candidate > hw))
            .then_some(candidate)
    }

    /// A voter fetched (Fetch or FetchSnapshot): credit for check-quorum.
    pub fn update_check_quorum(&mut self, voter: NodeId, now: Instant) {
        if voter == self.local.id || !self.voters.contains_key(&voter) {
            return;
        }
        self.fetched_voters.insert(voter);
        let needed = self.majority() - usize::from(self.voters.contains_key(&self.local.id));
        if self.fetched_voters.len() >= needed {
            self.fetched_voters.clear();
            self.check_quorum_deadline = now + self.check_quorum_timeout;
        }
    }

    /// `NEVER` for a single-voter quorum.
    pub fn check_quorum_deadline(&self) -> Instant {
        if self.voters.len() == 1 && self.voters.contains_key(&self.local.id) {
            Instant::NEVER
        } else {
            self.check_quorum_deadline
        }
    }

    fn majority(&self) -> usize {
        self.voters.len() / 2 + 1
    }

    /// Voters other than the leader that have not fetched in the last `fetch timeout / 2`
    /// (Kafka 4.x `needToSendBeginQuorumRequests`).
    pub fn voters_needing_begin_quorum(&self, now: Instant) -> Vec<NodeId> {
        self.voters
            .values()
            .filter(|s| s.key.id != self.local.id)
            .filter(|s| {
                s.last_fetch.is_none_or(|t| {
                    now.saturating_since(t) >= super::time::ms(self.begin_quorum_period)
                })
            })
            .map(|s| s.key.id)
            .collect()
    }

    pub fn reset_begin_quorum_timer(&mut self, now: Instant) {
        self.begin_quorum_deadline = now + self.begin_quorum_period;
    }

    /// Other voters by descending fetch offset; ties by ascending key; unknown offsets last.
    pub fn successors_by_fetch_offset(&self) -> Vec<ReplicaKey> {
        let mut v: Vec<&ReplicaState> = self
            .voters
            .values()
            .filter(|s| s.key.id != self.local.id)
            .collect();
        v.sort_by(|a, b| b.end_offset.cmp(&a.end_offset).then(a.key.cmp(&b.key)));
        v.into_iter().map(|s| s.key).collect()
    }

    /// Observers that fetched within the observer session timeout.
    pub fn live_observers(&self, now: Instant) -> impl Iterator<Item = &ReplicaState> {
        self.observers.values().filter(move |s| {
            s.last_fetch.is_some_and(|t| {
                now.saturating_since(t) < super::time::ms(OBSERVER_SESSION_TIMEOUT)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raft::types::HostPort;

    fn leader(n: i32) -> LeaderState {
        let voters = VoterSet::from_static(
            "C",
            &(1..=n)
                .map(|i| (i, HostPort::new("h", 9000 + i as u16)))
                .collect::<Vec<_>>(),
        );
        LeaderState::new(
            3,
            10,
            ReplicaKey::of_id(1),
            &voters,
            [1].into(),
            Instant(0),
            &RaftConfig::new(Some(1), crate::protocol::codec::Uuid::ONE, "c"),
        )
    }

    #[test]
    fn hw_is_the_majority_offset_past_the_epoch_start() {
        let mut l = leader(3);
        l.update_local_end_offset(15, Instant(0));
        assert_eq!(
            l.high_watermark_candidate(None),
            None,
            "only the leader has an offset"
        );
        l.update_replica(ReplicaKey::of_id(2), 10, Instant(1), 15);
        assert_eq!(
            l.high_watermark_candidate(None),
            None,
            "10 is the epoch start, not past it"
        );
        l.update_replica(ReplicaKey::of_id(3), 12, Instant(2), 15);
        assert_eq!(l.high_watermark_candidate(None), Some(12));
        assert_eq!(
            l.high_watermark_candidate(Some(12)),
            None,
            "never the same or lower"
        );
    }

    #[test]
    fn single_voter_hw_follows_the_leader_and_check_quorum_never_expires() {
        let mut l = leader(1);
        l.update_local_end_offset(11, Instant(0));
        assert_eq!(l.high_watermark_candidate(None), Some(11));
        assert_eq!(l.check_quorum_deadline(), Instant::NEVER);
    }

    #[test]
    fn a_second_voter_gets_a_whole_check_quorum_timeout_to_fetch() {
        let mut l = leader(1);
        let two = VoterSet::from_static(
            "C",
            &[(1, HostPort::new("h", 9001)), (2, HostPort::new("h", 9002))],
        );
        l.update_voter_set(&two, Instant(60_000));
        assert_eq!(l.check_quorum_deadline(), Instant(63_000));
        l.update_check_quorum(2, Instant(61_000));
        assert_eq!(l.check_quorum_deadline(), Instant(64_000));
        let three = VoterSet::from_static(
            "C",
            &[
                (1, HostPort::new("h", 9001)),
                (2, HostPort::new("h", 9002)),
                (3, HostPort::new("h", 9003)),
            ],
        );
        l.update_voter_set(&three, Instant(62_000));
        assert_eq!(
            l.check_quorum_deadline(),
            Instant(64_000),
            "only a leader that was alone restarts the timer"
        );
    }

    #[test]
    fn check_quorum_resets_after_a_majority_fetched() {
        let mut l = leader(5);
        assert_eq!(l.check_quorum_deadline(), Instant(3000));
        l.update_check_quorum(2, Instant(100));
        assert_eq!(l.check_quorum_deadline(), Instant(3000));
        l.update_check_quorum(3, Instant(200));
        assert_eq!(l.check_quorum_deadline(), Instant(3200));
    }

    #[test]
    fn caught_up_time_follows_kafka() {
        let mut l = leader(3);
        l.update_replica(ReplicaKey::of_id(2), 5, Instant(100), 20);
        assert_eq!(l.voters[&2].last_caught_up, None);
        // Reached the leader's LEO of its previous fetch: caught up as of that fetch.
        l.update_replica(ReplicaKey::of_id(2), 20, Instant(200), 30);
        assert_eq!(l.voters[&2].last_caught_up, Some(Instant(100)));
        l.update_replica(ReplicaKey::of_id(2), 30, Instant(300), 30);
        assert_eq!(l.voters[&2].last_caught_up, Some(Instant(300)));
    }
}
