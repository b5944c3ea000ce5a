//! Elections: Vote requests and responses (KIP-996 pre-vote included) and the timers of the
//! roles that have no leader (Unattached, Prospective, Candidate).

use super::log::RaftLog;
use super::msg::{Request, VoteRequest, VoteResponse};
use super::node::Raft;
use super::quorum_state::QuorumStateStore;
use super::role::Role;
use super::time::Instant;
use super::types::{NodeId, OffsetAndEpoch, ReplicaKey};
use crate::protocol::errors::ErrorCode;

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    fn vote_response(
        &self,
        partition_error: ErrorCode,
        granted: bool,
        listener: Option<&str>,
    ) -> VoteResponse {
        VoteResponse {
            error: ErrorCode::NONE,
            partition_ok: true,
            partition_error,
            leader_id: self.leader_id().unwrap_or(-1),
            leader_epoch: self.epoch(),
            vote_granted: granted,
            leader_endpoint: self.leader_endpoint_for(listener),
        }
    }

    /// Kafka's `handleVoteRequest`.
    pub(super) fn handle_vote_request(
        &mut self,
        now: Instant,
        r: &VoteRequest,
        listener: Option<&str>,
    ) -> VoteResponse {
        if !self.valid_cluster_id(&r.cluster_id) {
            return VoteResponse {
                error: ErrorCode::INCONSISTENT_CLUSTER_ID,
                ..VoteResponse::default()
            };
        }
        if !r.partition_ok {
            return VoteResponse {
                error: ErrorCode::INVALID_REQUEST,
                ..VoteResponse::default()
            };
        }
        let bad_epoch = if r.pre_vote {
            r.last_offset_epoch > r.candidate_epoch
        } else {
            r.last_offset_epoch >= r.candidate_epoch
        };
        if r.last_offset < 0 || r.last_offset_epoch < 0 || bad_epoch {
            return self.vote_response(ErrorCode::INVALID_REQUEST, false, listener);
        }
        if let Some(e) = self.validate_voter_only_request(r.candidate_key.id, r.candidate_epoch) {
            return self.vote_response(e, false, listener);
        }
        if r.candidate_epoch > self.epoch() {
            self.transition_to_unattached(now, r.candidate_epoch, None);
        }
        if !self.valid_voter_key(r.voter_id, r.voter_directory_id) {
            return self.vote_response(ErrorCode::INVALID_VOTER_KEY, false, listener);
        }
        if Some(r.candidate_key.id) == self.local_id() {
            // Only a confused peer asks us to vote for ourselves (Java would throw on recording it).
            return self.vote_response(ErrorCode::NONE, false, listener);
        }
        let theirs = OffsetAndEpoch::new(r.last_offset, r.last_offset_epoch);
        let up_to_date = theirs >= self.log.end_offset_and_epoch();
        let granted = self.can_grant_vote(&r.candidate_key, up_to_date, r.pre_vote)
            && !self.contests_pre_vote(r);
        if !granted {
            self.expire_refusal_of(r.candidate_key.id);
        }
        let unvoted = matches!(self.role, Role::Unattached(_) | Role::Prospective(_))
            && self.role.voted_key().is_none();
        if granted && !r.pre_vote && unvoted {
            self.add_vote(now, r.candidate_key);
        }
        self.vote_response(ErrorCode::NONE, granted, listener)
    }

    /// Kafka 4.x `EpochState.canGrantVote(key, isLogUpToDate, isPreVote)`.
    fn can_grant_vote(&self, candidate: &ReplicaKey, up_to_date: bool, pre_vote: bool) -> bool {
        let unattached_rule = |leader: Option<NodeId>, voted: Option<ReplicaKey>| {
            if pre_vote {
                up_to_date
            } else if let Some(v) = voted {
                v.id == candidate.id
                    && (v.directory_id.is_none() || v.directory_id == candidate.directory_id)
            } else if leader.is_some() {
                false
            } else {
                up_to_date
            }
        };
        match &self.role {
            Role::Unattached(s) => unattached_rule(s.leader_id, s.voted_key),
            Role::Prospective(s) => unattached_rule(s.leader_id, s.voted_key),
            // kraftd: a follower whose leader refused its connection, or resigned, knows it
            // is gone (early_election.rs).
            Role::Follower(s) => {
                pre_vote
                    && up_to_date
                    && (!s.has_fetched_from_leader || s.early_election_at.is_some())
            }
            Role::Candidate(_) | Role::Resigned(_) => pre_vote && up_to_date,
            Role::Leader(_) => false,
        }
    }

    /// Kafka's `handleVoteResponse`. Returns whether it was handled (else back off).
    pub(super) fn handle_vote_response(
        &mut self,
        now: Instant,
        from: NodeId,
        r: &VoteResponse,
    ) -> bool {
        if r.error != ErrorCode::NONE {
            if r.error == ErrorCode::UNSUPPORTED_VERSION
                && matches!(self.role, Role::Prospective(_))
            {
                // The peer cannot do Vote v2: the quorum may not support pre-vote.
                self.transition_to_candidate(now);
                return true;
            }
            return self.handle_top_level_error(r.error);
        }
        if !r.partition_ok {
            return false;
        }
        let leader = (r.leader_id >= 0).then_some(r.leader_id);
        let endpoints = self.response_leader_endpoints(leader, &r.leader_endpoint);
        if let Some(handled) = self.maybe_handle_common_response(
            now,
            r.partition_error,
            leader,
            r.leader_epoch,
            endpoints,
        ) {
            return handled;
        }
        if r.partition_error != ErrorCode::NONE {
            return false;
        }
        let granted = r.vote_granted;
        let outcome = match &mut self.role {
            Role::Prospective(p) => {
                p.election.record(from, granted);
                Some((true, p.election.is_lost()))
            }
            Role::Candidate(c) => {
                c.election.record(from, granted);
                Some((false, c.election.is_lost()))
            }
            _ => None,
        };
        match outcome {
            Some((true, lost)) if granted || lost => {
                if granted {
                    self.maybe_become_candidate(now);
                } else {
                    self.prospective_after_election_loss(now);
                }
            }
            // A lost election waits for its timeout, then pre-votes again (Kafka 4.4 has no
            // candidate backoff).
            Some((false, _)) if granted => self.maybe_become_leader(now),
            _ => {}
        }
        true
    }

    /// Kafka's `handleTopLevelError`.
    pub(super) fn handle_top_level_error(&mut self, error: ErrorCode) -> bool {
        if error == ErrorCode::CLUSTER_AUTHORIZATION_FAILED {
            self.fail(format!("response with {error}"));
        }
        false
    }

    /// A lost or timed-out pre-vote: back to following the known leader, else Unattached.
    fn prospective_after_election_loss(&mut self, now: Instant) {
        let Role::Prospective(p) = &self.role else {
            return;
        };
        let (epoch, leader, endpoints) = (p.epoch, p.leader_id, p.leader_endpoints.clone());
        match leader {
            Some(l) if !endpoints.is_empty() => {
                self.transition_to_follower(now, epoch, l, endpoints)
            }
            _ => self.transition_to_unattached(now, epoch, leader),
        }
    }

    pub(super) fn poll_unattached(&mut self, now: Instant) {
        let Role::Unattached(s) = &self.role else {
            return;
        };
        if self.shutdown.is_some() && self.is_voter() {
            // Stay put until the shutdown completes or a new epoch moves us.
        } else if self.is_voter() && now >= s.election_deadline {
            self.transition_to_prospective(now);
        } else {
            self.maybe_send_fetch_to_any_bootstrap(now);
        }
    }

    pub(super) fn poll_prospective(&mut self, now: Instant) {
        let Role::Prospective(p) = &self.role else {
            return;
        };
        if self.shutdown.is_some() {
            // Keep asking until a leader appears or the shutdown times out (Kafka).
            self.send_vote_requests(now, true);
        } else if p.election.is_lost()
            || (now >= p.election_deadline && !self.renew_pre_vote_of_a_gone_leader(now))
        {
            self.prospective_after_election_loss(now);
        } else {
            self.send_vote_requests(now, true);
        }
    }

    pub(super) fn poll_candidate(&mut self, now: Instant) {
        let Role::Candidate(c) = &self.role else {
            return;
        };
        if self.shutdown.is_some() {
            self.send_vote_requests(now, false);
        } else if now >= c.election_deadline {
            self.transition_to_prospective(now);
        } else {
            self.send_vote_requests(now, false);
        }
    }

    /// Vote requests to every voter whose vote is unrecorded, while the election can be won.
    fn send_vote_requests(&mut self, now: Instant, pre_vote: bool) {
        let unrecorded = match &self.role {
            Role::Prospective(p) if !p.election.is_lost() => p.election.unrecorded(),
            Role::Candidate(c) if !c.election.is_lost() => c.election.unrecorded(),
            _ => return,
        };
        let Some(local) = self.local else { return };
        let end = self.log.end_offset_and_epoch();
        for id in unrecorded {
            if !self.requests.is_ready(id, now) {
                continue;
            }
            let voter = self.voters().node(id).map(|n| n.key);
            let request = Request::Vote(VoteRequest {
                cluster_id: Some(self.cfg.cluster_id.clone()),
                voter_id: id,
                voter_directory_id: voter.and_then(|k| k.directory_id),
                partition_ok: true,
                candidate_epoch: self.epoch(),
                candidate_key: local,
                last_offset_epoch: end.epoch,
                last_offset: end.offset,
                pre_vote,
            });
            let address = self
                .voters()
                .address(id, &self.cfg.default_listener)
                .cloned();
            self.send(now, id, address, request);
        }
    }
}
