//! The one place where the role changes (Kafka's `QuorumState.transitionTo*`). A durable
//! transition writes quorum-state *before* the role changes and before anything is emitted.

use std::collections::BTreeSet;

use super::leader::LeaderState;
use super::log::{ControlRecord, RaftLog};
use super::msg::Response;
use super::node::{Action, Raft};
use super::quorum_state::QuorumStateStore;
use super::role::{
    CandidateState, EpochElection, ProspectiveState, ResignedState, Role, UnattachedState,
};
use super::time::Instant;
use super::types::{Endpoints, Epoch, NodeId, ReplicaKey, VoterNode};
use super::voters::voters_record;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::k_raft_version_record::KRaftVersionRecord;
use crate::protocol::messages::leader_change_message::{LeaderChangeMessage, Voter};

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// Replaces the role. Durable: quorum-state is written first. Every transition forgets the
    /// requests in flight; leaving leadership answers parked fetches `NOT_LEADER_OR_FOLLOWER`.
    pub(super) fn transition(&mut self, now: Instant, new: Role, durable: bool) {
        if durable {
            let election = new.election_state(self.local);
            if let Err(e) = self
                .store
                .write_election_state(&election, self.control.kraft_version())
            {
                // Not durable: the role must not change, nothing may be emitted that depends
                // on it. The node stops.
                self.halt(super::fatal::FatalError::quorum_state(&e));
                return;
            }
        }
        let was_leader = matches!(self.role, Role::Leader(_));
        if matches!(new, Role::Leader(_)) {
            // A new leader does not keep the HW it knew: it must re-establish it in its epoch.
            self.high_watermark = None;
        }
        let mut old = std::mem::replace(&mut self.role, new);
        self.transitions += 1;
        self.requests.reset_all();
        if was_leader && !matches!(self.role, Role::Leader(_)) {
            self.fail_parked_fetches(now, ErrorCode::NOT_LEADER_OR_FOLLOWER);
            self.abandon_voter_change(&mut old);
        }
        self.out.push(Action::RoleChanged {
            epoch: self.role.epoch(),
            role: self.role.name(),
            leader: self.role.leader_id(self.local_id()),
            voted: self.role.voted_key(),
        });
    }

    fn illegal(&mut self, what: String) {
        debug_assert!(
            false,
            "illegal transition on node {:?}: {what}",
            self.local_id()
        );
        self.fail(format!("illegal transition: {what}"));
    }

    pub(super) fn election_deadline(&mut self, now: Instant) -> Instant {
        now.plus_millis(self.chooser.election_timeout(self.cfg.election_timeout))
    }

    /// Unattached in `epoch` (higher, or the same from Prospective), leader unknown or known
    /// without endpoints. Keeps the vote within the same epoch. Timer: observers never; from
    /// Candidate/Unattached/live Prospective the remaining time carries over; else random.
    pub(super) fn transition_to_unattached(
        &mut self,
        now: Instant,
        epoch: Epoch,
        leader_id: Option<NodeId>,
    ) {
        let current = self.epoch();
        if epoch < current || (epoch == current && !matches!(self.role, Role::Prospective(_))) {
            return self.illegal(format!("{} -> Unattached(e{epoch})", self.role));
        }
        let election_deadline = if !self.is_voter() {
            Instant::NEVER
        } else {
            match &self.role {
                Role::Candidate(s) => s.election_deadline,
                Role::Unattached(s) => s.election_deadline,
                Role::Prospective(s) if !s.election.is_lost() => s.election_deadline,
                _ => self.election_deadline(now),
            }
        };
        let voted_key = if epoch == current {
            self.role.voted_key()
        } else {
            None
        };
        self.transition(
            now,
            Role::Unattached(UnattachedState {
                epoch,
                leader_id,
                voted_key,
                election_deadline,
            }),
            true,
        );
    }

    /// Records a binding vote for `candidate` in the current epoch (Unattached or Prospective
    /// without a vote); resets the election timer.
    pub(super) fn add_vote(&mut self, now: Instant, candidate: ReplicaKey) {
        if Some(candidate.id) == self.local_id() || self.role.voted_key().is_some() {
            return self.illegal(format!("{} -> vote for {candidate}", self.role));
        }
        let deadline = self.election_deadline(now);
        let new = match &self.role {
            Role::Unattached(s) => Role::Unattached(UnattachedState {
                voted_key: Some(candidate),
                election_deadline: deadline,
                ..s.clone()
            }),
            Role::Prospective(s) => Role::Prospective(ProspectiveState {
                voted_key: Some(candidate),
                election_deadline: deadline,
                ..s.clone()
            }),
            _ => return self.illegal(format!("{} -> vote for {candidate}", self.role)),
        };
        self.transition(now, new, true);
    }

    /// Follower of `leader` in `epoch`: a higher epoch, or the same epoch when no leader was
    /// known (or only its id) or the new endpoint map is larger.
    pub(super) fn transition_to_follower(
        &mut self,
        now: Instant,
        epoch: Epoch,
        leader: NodeId,
        endpoints: Endpoints,
    ) {
        let current = self.epoch();
        let bad = endpoints.is_empty()
            || Some(leader) == self.local_id()
            || epoch < current
            || (epoch == current
                && match &self.role {
                    Role::Follower(f) => {
                        f.leader_id != leader || f.leader_endpoints.len() >= endpoints.len()
                    }
                    Role::Leader(_) | Role::Resigned(_) => true,
                    r => r.leader_id(self.local_id()).is_some_and(|l| l != leader),
                });
        if bad {
            return self.illegal(format!(
                "{} -> Follower(e{epoch} leader={leader})",
                self.role
            ));
        }
        let voted = if epoch == current {
            self.role.voted_key()
        } else {
            None
        };
        let new = self.new_follower(epoch, leader, endpoints, voted, now);
        self.transition(now, new, true);
    }

    /// Prospective (pre-vote) in the current epoch; memory-only. Wins at once when alone.
    pub(super) fn transition_to_prospective(&mut self, now: Instant) {
        let Some(local) = self.local.filter(|_| self.is_voter()) else {
            return self.illegal(format!("{} -> Prospective as an observer", self.role));
        };
        if matches!(self.role, Role::Leader(_) | Role::Prospective(_)) {
            return self.illegal(format!("{} -> Prospective", self.role));
        }
        let (leader_id, leader_endpoints, leader_gone) = match &self.role {
            Role::Follower(f) => (
                Some(f.leader_id),
                f.leader_endpoints.clone(),
                f.early_election_at.is_some(),
            ),
            Role::Unattached(u) => (u.leader_id, Endpoints::empty(), false),
            _ => (None, Endpoints::empty(), false),
        };
        let new = Role::Prospective(ProspectiveState {
            epoch: self.epoch(),
            leader_id,
            leader_endpoints,
            voted_key: self.role.voted_key(),
            election: EpochElection::new(self.voters().ids(), local.id),
            election_deadline: self.election_deadline(now),
            leader_gone,
        });
        self.transition(now, new, false);
        self.maybe_become_candidate(now);
    }

    /// Prospective with a majority of pre-votes -> Candidate(epoch + 1), voting for itself.
    pub(super) fn maybe_become_candidate(&mut self, now: Instant) {
        if let Role::Prospective(p) = &self.role {
            if p.election.is_won() {
                self.transition_to_candidate(now);
            }
        }
    }

    pub(super) fn transition_to_candidate(&mut self, now: Instant) {
        let Some(local) = self.local.filter(|_| self.is_voter()) else {
            return self.illegal(format!("{} -> Candidate as an observer", self.role));
        };
        if !matches!(self.role, Role::Prospective(_)) {
            return self.illegal(format!("{} -> Candidate", self.role));
        }
        let new = Role::Candidate(CandidateState {
            epoch: self.epoch() + 1,
            election: EpochElection::new(self.voters().ids(), local.id),
            election_deadline: self.election_deadline(now),
        });
        self.elections_started += 1;
        self.transition(now, new, true);
        self.maybe_become_leader(now);
    }

    /// Candidate with a majority of votes -> Leader: writes the start-of-epoch control batch.
    pub(super) fn maybe_become_leader(&mut self, now: Instant) {
        let granted: BTreeSet<NodeId> = match &self.role {
            Role::Candidate(c) if c.election.is_won() => c.election.granted().collect(),
            _ => return,
        };
        let Some(local) = self.local else { return };
        let epoch = self.epoch();
        let start = self.log.end_offset();
        let voters = self.voters().clone();
        let mut leader = LeaderState::new(
            epoch,
            start,
            local,
            &voters,
            granted.clone(),
            now,
            &self.cfg,
        );
        if self.control.kraft_version() == 0 {
            leader.seed_upgrade_voters(&voters, &self.cfg);
        }
        self.transition(now, Role::Leader(Box::new(leader)), true);

        // LeaderChangeMessage v0 (no directory ids), then KRaftVersion + Voters when the
        // bootstrap voter set must be copied into the log or our own entry changed.
        let ids = |it: &mut dyn Iterator<Item = NodeId>| -> Vec<Voter> {
            it.map(|id| Voter {
                voter_id: id,
                ..Voter::default()
            })
            .collect()
        };
        let mut records = vec![ControlRecord::LeaderChange(LeaderChangeMessage {
            version: 0,
            leader_id: local.id,
            voters: ids(&mut voters.ids()),
            granting_voters: ids(&mut granted.iter().copied()),
            ..LeaderChangeMessage::default()
        })];
        let kraft = self.control.kraft_version();
        if kraft >= 1 {
            let me = VoterNode {
                key: local,
                listeners: self.cfg.listeners.clone(),
                supported_kraft_version: super::config::SUPPORTED_KRAFT_VERSIONS,
            };
            let from_bootstrap = self.control.latest_voters_offset() == Some(-1);
            if from_bootstrap || voters.node(local.id) != Some(&me) {
                let updated = voters.with_node(me);
                records.push(ControlRecord::KRaftVersion(KRaftVersionRecord {
                    version: 0,
                    k_raft_version: kraft,
                    ..KRaftVersionRecord::default()
                }));
                records.push(ControlRecord::Voters(voters_record(&updated)));
            }
        }
        if let Role::Leader(l) = &mut self.role {
            l.accumulator.append_control(now, records);
        }
        self.append_all_proposals(now);
    }

    /// Leader -> Resigned (same epoch, memory-only): stop writing, tell the voters.
    pub(super) fn transition_to_resigned(
        &mut self,
        now: Instant,
        preferred_successors: Vec<ReplicaKey>,
    ) {
        if !matches!(self.role, Role::Leader(_)) {
            return self.illegal(format!("{} -> Resigned", self.role));
        }
        // Still the leader of the epoch: what was proposed reaches the log before it stops.
        self.append_all_proposals(now);
        let unacked_voters = self
            .voters()
            .ids()
            .filter(|id| Some(*id) != self.local_id())
            .collect();
        let new = Role::Resigned(ResignedState {
            epoch: self.epoch(),
            election_deadline: self.election_deadline(now),
            unacked_voters,
            preferred_successors,
        });
        self.transition(now, new, false);
    }

    /// Answers every parked fetch with `error` (leadership lost).
    pub(super) fn fail_parked_fetches(&mut self, _now: Instant, error: ErrorCode) {
        for p in std::mem::take(&mut self.parked) {
            let response = self.fetch_error_response(error, p.listener.as_deref());
            self.out.push(Action::Respond {
                id: p.id,
                response: Response::Fetch(response),
            });
        }
    }
}
