//! What Kafka's `KafkaRaftMetrics` (the `raft-metrics` group) reads from the raft client's state,
//! read here from the core's: a plain value the server samples (`server::metrics`) and exposes.
//! Time is an argument, as everywhere in the core; rates and latencies are the sampler's, which
//! sees the core between steps.

use super::log::RaftLog;
use super::node::Raft;
use super::quorum_state::QuorumStateStore;
use super::role::Role;
use super::time::Instant;
use super::types::{Epoch, Offset};

/// The raft state behind `raft-metrics`, as Java computes each attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaftMetricsView {
    /// `current-state`: Java's name of the state (`leader`, `prospective`, `prospective-voted`,
    /// `candidate`, `unattached-voted`, `follower`, `observer`, `unattached`).
    pub state: &'static str,
    /// `current-leader`: -1 when unknown.
    pub leader: i32,
    /// `current-vote`: the id voted for in this epoch, -1 when none (a leader or candidate has
    /// voted for itself).
    pub vote: i32,
    pub epoch: Epoch,
    /// `high-watermark`: -1 when unknown.
    pub high_watermark: Offset,
    pub log_end_offset: Offset,
    /// `log-end-epoch`: the epoch of the last batch in the log.
    pub log_end_epoch: Epoch,
    pub number_of_voters: usize,
    /// Voters without an address on the controller listener.
    pub unknown_voter_connections: usize,
    /// `number-of-observers`, registered on the leader only (Java removes it otherwise).
    pub observers: Option<usize>,
    /// `uncommitted-voter-change`, registered on the leader only.
    pub uncommitted_voter_change: Option<bool>,
    /// A follower (voter or observer) had a successful fetch from the leader within the fetch
    /// timeout (its fetch deadline, which each successful fetch moves, has not passed). The
    /// readiness probe's "caught up"; true on the leader.
    pub fetching_from_leader: bool,
    pub is_voter: bool,
    /// Elections this node started as a candidate since it started.
    pub elections_started: u64,
}

/// A voter's replication as its leader sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VoterProgress {
    pub id: i32,
    /// The leader's log end minus the voter's log end at its last fetch; None before its
    /// first fetch in this epoch.
    pub lag_records: Option<i64>,
    /// Milliseconds since its last fetch; None before its first in this epoch.
    pub since_last_fetch_ms: Option<u64>,
}

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// The state `raft-metrics` exposes, at `now`.
    pub fn metrics_view(&self, now: Instant) -> RaftMetricsView {
        let local = self.local_id();
        let voted = self.role.voted_key().map(|k| k.id);
        let (state, vote) = match &self.role {
            Role::Leader(_) => ("leader", local),
            Role::Candidate(_) => ("candidate", local),
            Role::Prospective(_) if voted.is_some() => ("prospective-voted", voted),
            Role::Prospective(_) => ("prospective", None),
            Role::Unattached(_) if voted.is_some() => ("unattached-voted", voted),
            Role::Follower(_) if self.is_voter() => ("follower", voted),
            Role::Follower(_) => ("observer", voted),
            // Java has no name of its own for a resigned leader.
            Role::Unattached(_) | Role::Resigned(_) => ("unattached", voted),
        };
        let voters = self.voters();
        let listener = self.cfg.default_listener.as_str();
        let unknown = voters
            .nodes()
            .filter(|n| n.listeners.get(listener).is_none())
            .count();
        let hw = self.high_watermark.unwrap_or(-1);
        let (observers, uncommitted, fetching) = match &self.role {
            Role::Leader(l) => {
                let uncommitted = l.voter_change.is_some()
                    || self.control.latest_voters_offset().is_some_and(|o| o >= hw);
                (Some(l.live_observers(now).count()), Some(uncommitted), true)
            }
            Role::Follower(f) => (
                None,
                None,
                f.has_fetched_from_leader && now < f.fetch_deadline,
            ),
            _ => (None, None, false),
        };
        RaftMetricsView {
            state,
            leader: self.leader_id().unwrap_or(-1),
            vote: vote.unwrap_or(-1),
            epoch: self.epoch(),
            high_watermark: hw,
            log_end_offset: self.log.end_offset(),
            log_end_epoch: self.log.last_fetched_epoch(),
            number_of_voters: voters.len(),
            unknown_voter_connections: unknown,
            observers,
            uncommitted_voter_change: uncommitted,
            fetching_from_leader: fetching,
            is_voter: self.is_voter(),
            elections_started: self.elections_started,
        }
    }

    /// On the leader, each other voter's replication at `now` (empty on any other role): read
    /// for a scrape, not every turn.
    pub fn voter_progress(&self, now: Instant) -> Vec<VoterProgress> {
        let end = self.log.end_offset();
        match &self.role {
            Role::Leader(l) => l
                .voters
                .values()
                .filter(|r| Some(r.key.id) != self.local_id())
                .map(|r| VoterProgress {
                    id: r.key.id,
                    lag_records: r.end_offset.map(|e| (end - e).max(0)),
                    since_last_fetch_ms: r.last_fetch.map(|t| now.0.saturating_sub(t.0)),
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}
