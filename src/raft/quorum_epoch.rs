//! BeginQuorumEpoch (the leader's announcement and heartbeat to voters that are not fetching)
//! and EndQuorumEpoch (graceful resignation with preferred successors), both sides, and the
//! Resigned role's timers.

use super::log::RaftLog;
use super::msg::{BeginQuorumEpochRequest, EndQuorumEpochRequest, QuorumEpochResponse, Request};
use super::node::Raft;
use super::quorum_state::QuorumStateStore;
use super::role::Role;
use super::time::{strict_exponential_backoff, Instant};
use super::types::NodeId;
use crate::protocol::errors::ErrorCode;

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    fn quorum_epoch_response(
        &self,
        partition_error: ErrorCode,
        listener: Option<&str>,
    ) -> QuorumEpochResponse {
        QuorumEpochResponse {
            error: ErrorCode::NONE,
            partition_ok: true,
            partition_error,
            leader_id: self.leader_id().unwrap_or(-1),
            leader_epoch: self.epoch(),
            leader_endpoint: self.leader_endpoint_for(listener),
        }
    }

    /// Kafka's `handleBeginQuorumEpochRequest`.
    pub(super) fn handle_begin_quorum_epoch_request(
        &mut self,
        now: Instant,
        r: &BeginQuorumEpochRequest,
        listener: Option<&str>,
    ) -> QuorumEpochResponse {
        if !self.valid_cluster_id(&r.cluster_id) {
            return QuorumEpochResponse {
                error: ErrorCode::INCONSISTENT_CLUSTER_ID,
                ..Default::default()
            };
        }
        if !r.partition_ok {
            return QuorumEpochResponse {
                error: ErrorCode::INVALID_REQUEST,
                ..Default::default()
            };
        }
        if let Some(e) = self.validate_voter_only_request(r.leader_id, r.leader_epoch) {
            return self.quorum_epoch_response(e, listener);
        }
        let endpoints = if r.leader_endpoints.is_empty() {
            self.voters().listeners(r.leader_id)
        } else {
            r.leader_endpoints.clone()
        };
        self.maybe_transition(now, Some(r.leader_id), r.leader_epoch, endpoints);
        if !self.valid_voter_key(r.voter_id, r.voter_directory_id) {
            return self.quorum_epoch_response(ErrorCode::INVALID_VOTER_KEY, listener);
        }
        self.quorum_epoch_response(ErrorCode::NONE, listener)
    }

    /// BeginQuorumEpoch/EndQuorumEpoch responses: common handling only (acknowledgement).
    fn handle_quorum_epoch_response(
        &mut self,
        now: Instant,
        r: &QuorumEpochResponse,
    ) -> Option<bool> {
        if r.error != ErrorCode::NONE {
            return Some(self.handle_top_level_error(r.error));
        }
        if !r.partition_ok {
            return Some(false);
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
            return Some(handled);
        }
        if r.partition_error != ErrorCode::NONE {
            return Some(false);
        }
        None
    }

    pub(super) fn handle_begin_quorum_epoch_response(
        &mut self,
        now: Instant,
        _from: NodeId,
        r: &QuorumEpochResponse,
    ) -> bool {
        self.handle_quorum_epoch_response(now, r).unwrap_or(true)
    }

    /// Kafka's `handleEndQuorumEpochRequest`: follow the resigning leader's epoch, and if it is
    /// our leader, start an election after the strict exponential backoff of our rank.
    pub(super) fn handle_end_quorum_epoch_request(
        &mut self,
        now: Instant,
        r: &EndQuorumEpochRequest,
        listener: Option<&str>,
    ) -> QuorumEpochResponse {
        if !self.valid_cluster_id(&r.cluster_id) {
            return QuorumEpochResponse {
                error: ErrorCode::INCONSISTENT_CLUSTER_ID,
                ..Default::default()
            };
        }
        if !r.partition_ok {
            return QuorumEpochResponse {
                error: ErrorCode::INVALID_REQUEST,
                ..Default::default()
            };
        }
        if let Some(e) = self.validate_voter_only_request(r.leader_id, r.leader_epoch) {
            return self.quorum_epoch_response(e, listener);
        }
        let endpoints = if r.leader_endpoints.is_empty() {
            self.voters().listeners(r.leader_id)
        } else {
            r.leader_endpoints.clone()
        };
        self.maybe_transition(now, Some(r.leader_id), r.leader_epoch, endpoints);
        let max = self.cfg.election_backoff_max;
        if let (Role::Follower(f), Some(local)) = (&self.role, self.local) {
            if f.leader_id == r.leader_id {
                let position = r.preferred_candidates.iter().position(|k| {
                    k.id == local.id
                        && (k.directory_id.is_none() || k.directory_id == local.directory_id)
                });
                let backoff =
                    strict_exponential_backoff(max, position, r.preferred_candidates.len());
                self.note_leader_resigned(now, backoff);
            }
        }
        self.quorum_epoch_response(ErrorCode::NONE, listener)
    }

    pub(super) fn handle_end_quorum_epoch_response(
        &mut self,
        now: Instant,
        from: NodeId,
        r: &QuorumEpochResponse,
    ) -> bool {
        match self.handle_quorum_epoch_response(now, r) {
            Some(handled) => handled,
            None => {
                if let Role::Resigned(s) = &mut self.role {
                    s.unacked_voters.remove(&from);
                }
                true
            }
        }
    }

    /// Resigned: EndQuorumEpoch to every voter that has not acknowledged; on the election
    /// timeout, Unattached in the next epoch (Kafka 4.x).
    pub(super) fn poll_resigned(&mut self, now: Instant) {
        let Role::Resigned(s) = &self.role else {
            return;
        };
        let (epoch, deadline) = (s.epoch, s.election_deadline);
        let unacked: Vec<NodeId> = s.unacked_voters.iter().copied().collect();
        let preferred = s.preferred_successors.clone();
        if now >= deadline && self.shutdown.is_none() {
            return self.transition_to_unattached(now, epoch + 1, None);
        }
        let Some(local) = self.local else { return };
        for id in unacked {
            if self.requests.is_ready(id, now) {
                let request = Request::EndQuorumEpoch(EndQuorumEpochRequest {
                    cluster_id: Some(self.cfg.cluster_id.clone()),
                    partition_ok: true,
                    leader_id: local.id,
                    leader_epoch: epoch,
                    preferred_candidates: preferred.clone(),
                    leader_endpoints: self.cfg.listeners.clone(),
                });
                let address = self
                    .voters()
                    .address(id, &self.cfg.default_listener)
                    .cloned();
                self.send(now, id, address, request);
            }
        }
    }

    /// Leader: BeginQuorumEpoch to voters that have not fetched lately, every fetch timeout / 2.
    pub(super) fn maybe_send_begin_quorum_epoch(&mut self, now: Instant) {
        let Role::Leader(l) = &self.role else { return };
        if now < l.begin_quorum_deadline {
            return;
        }
        let (epoch, targets) = (l.epoch, l.voters_needing_begin_quorum(now));
        let Some(local) = self.local else { return };
        for id in targets {
            if self.requests.is_ready(id, now) {
                let voter = self.voters().node(id).map(|n| n.key);
                let request = Request::BeginQuorumEpoch(BeginQuorumEpochRequest {
                    cluster_id: Some(self.cfg.cluster_id.clone()),
                    voter_id: id,
                    voter_directory_id: voter.and_then(|k| k.directory_id),
                    partition_ok: true,
                    leader_id: local.id,
                    leader_epoch: epoch,
                    leader_endpoints: self.cfg.listeners.clone(),
                });
                let address = self
                    .voters()
                    .address(id, &self.cfg.default_listener)
                    .cloned();
                self.send(now, id, address, request);
            }
        }
        if let Role::Leader(l) = &mut self.role {
            l.reset_begin_quorum_timer(now);
        }
    }

    /// Starts a graceful shutdown (Kafka's `KafkaRaftClientDriver.initiateShutdown`, 5 s by
    /// default): a leader resigns at once (EndQuorumEpoch names its successors), voters stop
    /// fetching and starting elections, leader-only requests get `BROKER_NOT_AVAILABLE`, Vote
    /// requests are still answered. Poll `is_shutdown_complete`.
    pub fn begin_shutdown(&mut self, now: Instant, timeout: std::time::Duration) {
        if self.shutdown.is_none() {
            self.shutdown = Some(now + timeout);
            self.poll(now);
        }
    }

    /// Kafka's `maybeCompleteShutdown`: done when an observer, the only voter, once a remote
    /// leader is known, or at the deadline.
    pub fn is_shutdown_complete(&self, now: Instant) -> bool {
        match self.shutdown {
            None => false,
            Some(deadline) => {
                let remote_leader = self.leader_id().is_some_and(|l| Some(l) != self.local_id());
                !self.is_voter() || self.is_only_voter() || remote_leader || now >= deadline
            }
        }
    }

    /// Kafka's `resign(epoch)`: the leader steps down (Resigned + EndQuorumEpoch, naming its
    /// successors in fetch-offset order) so that a successor is elected quickly. Returns false
    /// when not the leader.
    pub fn resign(&mut self, now: Instant) -> bool {
        let Role::Leader(l) = &self.role else {
            return false;
        };
        let successors = l.successors_by_fetch_offset();
        self.transition_to_resigned(now, successors);
        self.poll(now);
        true
    }
}
