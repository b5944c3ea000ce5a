//! Dispatch and the processing shared by every RPC (Kafka's `handleRequest`/`handleResponse`,
//! `validate*Request`, `maybeHandleCommonResponse`, `maybeTransition`), plus the leader's append
//! path and the high-watermark bookkeeping.

use super::config::SUPPORTED_KRAFT_VERSIONS;
use super::log::{Batch, RaftLog};
use super::msg::{ApiVersionsResponse, CorrelationId, Request, RequestId, Response};
use super::node::{Action, Raft};
use super::quorum_state::QuorumStateStore;
use super::role::Role;
use super::time::Instant;
use super::types::{Endpoints, Epoch, HostPort, NodeId, Offset};
use crate::protocol::errors::ErrorCode;

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    pub(super) fn handle_request(
        &mut self,
        now: Instant,
        id: RequestId,
        listener: Option<String>,
        request: Request,
    ) {
        let l = listener.as_deref();
        let response = match request {
            Request::Vote(r) => Response::Vote(self.handle_vote_request(now, &r, l)),
            Request::BeginQuorumEpoch(r) => {
                Response::BeginQuorumEpoch(self.handle_begin_quorum_epoch_request(now, &r, l))
            }
            Request::EndQuorumEpoch(r) => {
                Response::EndQuorumEpoch(self.handle_end_quorum_epoch_request(now, &r, l))
            }
            Request::FetchSnapshot(r) => {
                Response::FetchSnapshot(self.handle_fetch_snapshot_request(now, &r, l))
            }
            Request::DescribeQuorum(r) => {
                Response::DescribeQuorum(self.handle_describe_quorum_request(now, &r))
            }
            Request::Fetch(r) => match self.handle_fetch_request(now, id, listener, r) {
                Some(resp) => Response::Fetch(resp),
                None => return, // parked
            },
            Request::AddRaftVoter(r) => match self.handle_add_voter_request(now, id, &r) {
                Some(resp) => Response::AddRaftVoter(resp),
                None => return, // answered when done
            },
            Request::RemoveRaftVoter(r) => match self.handle_remove_voter_request(now, id, &r) {
                Some(resp) => Response::RemoveRaftVoter(resp),
                None => return, // answered when committed
            },
            Request::UpdateRaftVoter(r) => {
                Response::UpdateRaftVoter(self.handle_update_voter_request(now, l, &r))
            }
            // What the raft layer knows of itself (the front end answers real clients).
            Request::ApiVersions => Response::ApiVersions(ApiVersionsResponse {
                error: ErrorCode::NONE,
                kraft_version: Some(SUPPORTED_KRAFT_VERSIONS),
            }),
        };
        self.out.push(Action::Respond { id, response });
    }

    pub(super) fn handle_response(
        &mut self,
        now: Instant,
        from: NodeId,
        corr: CorrelationId,
        response: Response,
    ) {
        match self.requests.in_flight_api(from, corr) {
            None => return, // late, duplicated, or from before a transition
            Some(api) if api != response.api() => {
                self.requests.on_response(from, false, now); // not an answer to our request
                return;
            }
            Some(_) => {}
        }
        let handled = match response {
            Response::Vote(r) => self.handle_vote_response(now, from, &r),
            Response::BeginQuorumEpoch(r) => self.handle_begin_quorum_epoch_response(now, from, &r),
            Response::EndQuorumEpoch(r) => self.handle_end_quorum_epoch_response(now, from, &r),
            Response::Fetch(r) => self.handle_fetch_response(now, from, r),
            Response::FetchSnapshot(r) => self.handle_fetch_snapshot_response(now, from, r),
            Response::ApiVersions(r) => self.handle_api_versions_response(now, from, &r),
            Response::UpdateRaftVoter(r) => self.handle_update_voter_response(now, &r),
            Response::AddRaftVoter(r) | Response::RemoveRaftVoter(r) => {
                self.handle_voter_change_response(&r)
            }
            Response::DescribeQuorum(_) => false, // never sent by the core
        };
        if self.requests.is_expected(from, corr) {
            self.requests.on_response(from, handled, now);
        }
    }

    /// Kafka's `hasValidClusterId`: null is accepted; otherwise an exact match.
    pub(super) fn valid_cluster_id(&self, cluster_id: &Option<String>) -> bool {
        cluster_id
            .as_deref()
            .is_none_or(|c| c == self.cfg.cluster_id)
    }

    /// Vote, BeginQuorumEpoch, EndQuorumEpoch (`validateVoterOnlyRequest`).
    pub(super) fn validate_voter_only_request(
        &self,
        sender: NodeId,
        epoch: Epoch,
    ) -> Option<ErrorCode> {
        if epoch < self.epoch() {
            Some(ErrorCode::FENCED_LEADER_EPOCH)
        } else if sender < 0 {
            Some(ErrorCode::INVALID_REQUEST)
        } else {
            None
        }
    }

    /// Fetch, FetchSnapshot (`validateLeaderOnlyRequest`).
    pub(super) fn validate_leader_only_request(&self, epoch: Epoch) -> Option<ErrorCode> {
        if epoch < self.epoch() {
            Some(ErrorCode::FENCED_LEADER_EPOCH)
        } else if epoch > self.epoch() {
            Some(ErrorCode::UNKNOWN_LEADER_EPOCH)
        } else if !self.is_leader() {
            Some(ErrorCode::NOT_LEADER_OR_FOLLOWER)
        } else if self.shutdown.is_some() {
            Some(ErrorCode::BROKER_NOT_AVAILABLE)
        } else {
            None
        }
    }

    /// Kafka's `isValidVoterKey`: a request addressed to a voter key must be addressed to us.
    pub(super) fn valid_voter_key(
        &self,
        voter_id: NodeId,
        voter_dir: Option<crate::protocol::codec::Uuid>,
    ) -> bool {
        if voter_id < 0 {
            return true;
        }
        match self.local {
            Some(l) => l.id == voter_id && voter_dir.is_none_or(|d| l.directory_id == Some(d)),
            None => false,
        }
    }

    /// The known leader's endpoints (ours when leading or resigned).
    pub(super) fn leader_endpoints(&self) -> Endpoints {
        match &self.role {
            Role::Leader(_) | Role::Resigned(_) => self.cfg.listeners.clone(),
            Role::Follower(f) => f.leader_endpoints.clone(),
            Role::Prospective(p) => p.leader_endpoints.clone(),
            _ => Endpoints::empty(),
        }
    }

    /// The known leader's address on `listener` (default listener when `None`), for the
    /// NodeEndpoints of responses.
    pub(super) fn leader_endpoint_for(&self, listener: Option<&str>) -> Option<HostPort> {
        self.leader_id()?;
        self.leader_endpoints()
            .get(listener.unwrap_or(&self.cfg.default_listener))
            .cloned()
    }

    /// Leader endpoints named by a response: its NodeEndpoints entry (on our default listener),
    /// else the voter set's listeners for that id.
    pub(super) fn response_leader_endpoints(
        &self,
        leader: Option<NodeId>,
        endpoint: &Option<HostPort>,
    ) -> Endpoints {
        match (leader, endpoint) {
            (None, _) => Endpoints::empty(),
            (Some(_), Some(hp)) => Endpoints::single(&self.cfg.default_listener, hp.clone()),
            (Some(id), None) => self.voters().listeners(id),
        }
    }

    /// Kafka's `maybeHandleCommonResponse`. `Some(handled)` ends processing; `None` continues
    /// with the API-specific handler.
    pub(super) fn maybe_handle_common_response(
        &mut self,
        now: Instant,
        error: ErrorCode,
        leader: Option<NodeId>,
        epoch: Epoch,
        endpoints: Endpoints,
    ) -> Option<bool> {
        if epoch < self.epoch() || error == ErrorCode::UNKNOWN_LEADER_EPOCH {
            return Some(true); // stale
        }
        if !self.consistent_leader(leader, epoch) {
            // Java throws (`hasConsistentLeader`); we neither act on it nor use the response.
            return Some(false);
        }
        if epoch > self.epoch()
            || error == ErrorCode::FENCED_LEADER_EPOCH
            || error == ErrorCode::NOT_LEADER_OR_FOLLOWER
        {
            self.maybe_transition(now, leader, epoch, endpoints);
            return Some(true);
        }
        if let Some(l) = leader {
            if self.should_follow_same_epoch(l, &endpoints) {
                // An observer can discover the leader and use this very response.
                self.transition_to_follower(now, epoch, l, endpoints);
                return if error == ErrorCode::NONE {
                    None
                } else {
                    Some(true)
                };
            }
        }
        if error == ErrorCode::BROKER_NOT_AVAILABLE {
            Some(false)
        } else if error == ErrorCode::INVALID_VOTER_KEY {
            Some(true)
        } else if error == ErrorCode::INVALID_REQUEST {
            // Java throws here (it never sends invalid requests); we back off instead.
            Some(false)
        } else {
            None
        }
    }

    /// Same epoch, a leader named: follow it if we know no leader, or only fewer endpoints
    /// (Kafka's rule, extended to Unattached-with-leader-id as the spec recommends).
    fn should_follow_same_epoch(&self, leader: NodeId, endpoints: &Endpoints) -> bool {
        if Some(leader) == self.local_id() || endpoints.is_empty() {
            return false;
        }
        match self.role.leader_id(self.local_id()) {
            None => true,
            Some(known) => known == leader && endpoints.len() > self.leader_endpoints().len(),
        }
    }

    /// Kafka's `hasConsistentLeader`: naming us, we must lead that epoch; naming someone in our
    /// epoch, it must be the leader we know (if any).
    fn consistent_leader(&self, leader: Option<NodeId>, epoch: Epoch) -> bool {
        let Some(l) = leader else { return true };
        if Some(l) == self.local_id() {
            return epoch == self.epoch()
                && matches!(self.role, Role::Leader(_) | Role::Resigned(_));
        }
        epoch != self.epoch() || self.leader_id().is_none_or(|known| known == l)
    }

    /// Kafka's `maybeTransition`: move to a higher epoch, or follow a newly learned leader.
    pub(super) fn maybe_transition(
        &mut self,
        now: Instant,
        leader: Option<NodeId>,
        epoch: Epoch,
        endpoints: Endpoints,
    ) {
        if !self.consistent_leader(leader, epoch) {
            return; // Java throws (`hasConsistentLeader`); we refuse to act on it
        }
        if epoch > self.epoch() {
            match leader {
                Some(l) if !endpoints.is_empty() => {
                    self.transition_to_follower(now, epoch, l, endpoints)
                }
                _ => self.transition_to_unattached(now, epoch, leader),
            }
        } else if epoch == self.epoch() {
            if let Some(l) = leader {
                if self.should_follow_same_epoch(l, &endpoints) {
                    self.transition_to_follower(now, epoch, l, endpoints);
                }
            }
        }
    }

    /// Appends a batch as leader: log, voter history, flush (the leader flushes before it
    /// counts itself), own progress, HW, then wakes parked fetches.
    pub(super) fn append_as_leader(&mut self, now: Instant, batch: Batch) -> bool {
        let appended = self.log.append_as_leader(batch.clone());
        if self.log_value(appended).is_none() {
            return false;
        }
        self.apply_control_batch(&batch);
        let flushed = self.log.flush();
        if self.log_value(flushed).is_none() {
            return false;
        }
        let end = self.log.end_offset();
        let voters_changed = batch.has_voters_record();
        if let Role::Leader(l) = &mut self.role {
            if voters_changed {
                l.update_voter_set(self.control.latest_voters(), now);
            }
            l.update_local_end_offset(end, now);
        }
        self.maybe_update_leader_hw(now);
        self.complete_parked_fetches(now, false);
        true
    }

    /// Records an appended batch's control records; a new voter set is announced.
    pub(super) fn apply_control_batch(&mut self, batch: &Batch) {
        self.control.apply_batch(batch);
        if batch.has_voters_record() {
            let offset = self.control.latest_voters_offset().unwrap_or(-1);
            self.out.push(Action::VotersChanged {
                offset,
                voters: self.control.latest_voters().clone(),
                as_leader: self.is_leader(),
            });
        }
    }

    /// Recomputes the leader's HW; on a move, reports it and (KIP-1166) wakes parked fetches.
    pub(super) fn maybe_update_leader_hw(&mut self, now: Instant) {
        let Role::Leader(l) = &self.role else { return };
        if let Some(hw) = l.high_watermark_candidate(self.high_watermark) {
            self.set_high_watermark(hw);
            self.complete_parked_fetches(now, true);
            self.voter_change_on_high_watermark();
        }
    }

    /// Raises the local HW (never lowers it) and reports it.
    pub(super) fn set_high_watermark(&mut self, hw: Offset) {
        if self.high_watermark.is_none_or(|cur| hw > cur) {
            self.high_watermark = Some(hw);
        }
        if self.reported_hw.is_none_or(|r| hw > r) {
            self.reported_hw = Some(hw);
            self.out.push(Action::Committed { upto: hw });
        }
    }
}
