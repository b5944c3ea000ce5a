//! kraftd's two departures from Kafka's election timing (issue #14), both within pre-vote's
//! rules, so that neither can unseat a leader that still reaches a majority:
//!
//! - **Early election.** A follower whose leader refuses its connection knows the leader's
//!   process is gone (a live process accepts connections even while stalled), so it pre-votes
//!   after `RaftConfig::early_election_step x rank` instead of waiting out the fetch timeout,
//!   and grants pre-votes meanwhile. A voter that still fetches from a live leader refuses
//!   them, as Kafka's followers do. A follower told by EndQuorumEpoch that its leader resigned
//!   knows the same, and grants pre-votes until its own backoff is over; Kafka's follower
//!   refuses them until then, so the preferred successor waits for the next voter's backoff.
//! - **Even odds when the timeouts race.** With pre-vote the voter that times out first loses:
//!   its pre-vote reaches the other while that one still follows the old leader and refuses,
//!   then the other times out and gets the first one's grant. The order is decided by which
//!   follower last heard from the leader, i.e. by speed, so a faster kraftd beside Java
//!   followers would lose every election. A prospective asked for a pre-vote by a voter that
//!   refused its own, with logs equal, tosses a coin: grant (Kafka's behaviour), or refuse and
//!   ask that voter again at once, which now grants it as a prospective itself.
//!
//! A prospective whose leader is gone does not go back to following it at its election
//! deadline, as Kafka's does; it renews its round. Kafka's prospective asks every voter afresh
//! each time it comes back through follower, so kraftd's must not keep what no longer holds
//! (issue #36). A refusal counts only while it is current:
//!
//! - it expires at the round's election deadline, and every voter that has not granted is
//!   asked again;
//! - it expires at once when that voter asks for our vote and we refuse it: a voter that
//!   pre-votes follows no leader any more, and it refused us only while it did. (A voter whose
//!   pre-vote we grant keeps its refusal until the deadline: we yield that round to it, and
//!   asking it again would make us both candidates of one epoch.)
//!
//! Without this a Java voter that refused while it still followed the dead leader was never
//! asked again, and refused by kraftd's longer log in turn: no leader, for good.
//!
//! `ElectionRules::Kafka` turns every departure off (the simulation's stand-in for a Java
//! voter).

use super::log::RaftLog;
use super::msg::VoteRequest;
use super::node::Raft;
use super::quorum_state::QuorumStateStore;
use super::role::Role;
use super::time::Instant;
use super::types::{NodeId, OffsetAndEpoch};

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// `Input::ConnectionRefused` from `to`: a voter following `to` schedules its early
    /// election. The voters that survive pre-vote in order of id, one step apart.
    pub(super) fn note_connection_refused(&mut self, now: Instant, to: NodeId) {
        if self.shutdown.is_some() || !self.is_voter() {
            return;
        }
        let Some(local) = self.local_id() else { return };
        let Role::Follower(f) = &self.role else {
            return;
        };
        if f.leader_id != to {
            return;
        }
        let rank = self
            .voters()
            .ids()
            .filter(|&id| id != to && id < local)
            .count() as u32;
        self.schedule_early_election(now + self.cfg.early_election_step * rank);
    }

    /// EndQuorumEpoch from the leader we follow: it resigned, so pre-votes are granted from now
    /// on and ours starts after the backoff of our place among its preferred successors.
    pub(super) fn note_leader_resigned(&mut self, now: Instant, backoff_ms: u64) {
        if let Role::Follower(f) = &mut self.role {
            f.fetch_deadline = now.plus_millis(backoff_ms);
        }
        self.schedule_early_election(now.plus_millis(backoff_ms));
    }

    /// The leader is known to be gone: the election starts at `at`, or earlier if it was
    /// already due earlier, and never after the fetch timeout.
    fn schedule_early_election(&mut self, at: Instant) {
        // An observer never elects; its fetch deadline alone decides when it looks elsewhere.
        if !self.is_voter() || !self.cfg.election_rules.departs_from_kafka() {
            return;
        }
        if let Role::Follower(f) = &mut self.role {
            let earliest = f.early_election_at.map_or(at, |e| e.min(at));
            f.early_election_at = Some(earliest.min(f.fetch_deadline));
        }
    }

    /// A successful Fetch or FetchSnapshot response from the leader: it is alive.
    pub(super) fn fetched_from_leader(&mut self, now: Instant) {
        let timeout = self.cfg.fetch_timeout;
        if let Role::Follower(f) = &mut self.role {
            f.fetch_deadline = now + timeout;
            f.has_fetched_from_leader = true;
            f.early_election_at = None;
        }
    }

    /// A voter follower's time to pre-vote: its fetch timeout, or its early election.
    pub(super) fn follower_election_due(&self, now: Instant) -> bool {
        let Role::Follower(f) = &self.role else {
            return false;
        };
        now >= f.fetch_deadline || f.early_election_at.is_some_and(|at| now >= at)
    }

    /// A prospective whose leader is gone, at its election deadline: a new deadline and the same
    /// round, in which every voter that has not granted is asked again (its refusal expired).
    /// False for any other prospective.
    pub(super) fn renew_pre_vote_of_a_gone_leader(&mut self, now: Instant) -> bool {
        if !matches!(&self.role, Role::Prospective(p) if p.leader_gone) {
            return false;
        }
        let deadline = self.election_deadline(now);
        let expire = self.cfg.election_rules.refusals_expire();
        if let Role::Prospective(p) = &mut self.role {
            p.election_deadline = deadline;
            if expire {
                p.election.forget_refusals();
            }
        }
        true
    }

    /// We refused the vote `voter` asked for: if it had refused our pre-vote, that refusal is
    /// stale (a voter that asks follows no leader), so it is asked again.
    pub(super) fn expire_refusal_of(&mut self, voter: NodeId) {
        if !self.cfg.election_rules.refusals_expire() {
            return;
        }
        if let Role::Prospective(p) = &mut self.role {
            p.election.forget_refusal(voter);
        }
    }

    /// Whether a prospective refuses `r`, a pre-vote it would grant, to ask its sender again:
    /// the sender refused our pre-vote earlier in this round and our logs are equal. Refused
    /// or not, the decision is a coin's. A refusal forgets the sender's answer, so that the
    /// next poll asks it again.
    pub(super) fn contests_pre_vote(&mut self, r: &VoteRequest) -> bool {
        let theirs = OffsetAndEpoch::new(r.last_offset, r.last_offset_epoch);
        let candidate = r.candidate_key.id;
        let equal_logs = theirs == self.log.end_offset_and_epoch();
        let Role::Prospective(p) = &self.role else {
            return false;
        };
        if !self.cfg.election_rules.departs_from_kafka() {
            return false;
        }
        if !r.pre_vote || !equal_logs || p.election.vote_of(candidate) != Some(false) {
            return false;
        }
        if !self.chooser.contest() {
            return false;
        }
        if let Role::Prospective(p) = &mut self.role {
            p.election.forget_refusal(candidate);
        }
        true
    }
}
