//! The follower's side of voter changes (Kafka's `pollFollowerAsVoter` /
//! `pollFollowerAsObserver`): a voter publishes its entry with UpdateRaftVoter, and an observer
//! controller with `controller.quorum.auto.join.enable` asks to be added. At most one such
//! request per fetch timeout, sent to the leader instead of a Fetch, once the leader answered a
//! fetch in this epoch.

use crate::protocol::errors::ErrorCode;
use crate::raft::config::SUPPORTED_KRAFT_VERSIONS;
use crate::raft::log::RaftLog;
use crate::raft::msg::{
    AddVoterRequest, RemoveVoterRequest, Request, UpdateVoterRequest, VoterChangeResponse,
};
use crate::raft::node::Raft;
use crate::raft::quorum_state::QuorumStateStore;
use crate::raft::role::Role;
use crate::raft::time::Instant;
use crate::raft::types::VoterNode;

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// The leader, when a follower may send it a voter request now.
    fn voter_request_target(&self, now: Instant) -> Option<(i32, Option<crate::raft::HostPort>)> {
        let Role::Follower(f) = &self.role else {
            return None;
        };
        let ready = f.has_fetched_from_leader
            && now >= f.voter_update_at
            && !self.requests.any_in_flight(now)
            && self.requests.is_ready(f.leader_id, now);
        ready.then(|| {
            (
                f.leader_id,
                f.leader_endpoints.get(&self.cfg.default_listener).cloned(),
            )
        })
    }

    fn sent_voter_request(&mut self, now: Instant) {
        let period = self.cfg.fetch_timeout;
        if let Role::Follower(f) = &mut self.role {
            f.voter_update_at = now + period;
        }
    }

    /// A voter's UpdateRaftVoter: at kraft.version 1 when its entry (key, listeners, supported
    /// range) differs from what it is; at kraft.version 0 once per leader, so that the leader
    /// learns its directory id for an upgrade. Returns whether one was sent.
    pub(in crate::raft) fn maybe_send_update_voter(&mut self, now: Instant) -> bool {
        let Some(local) = self.local else {
            return false;
        };
        let Some((leader, address)) = self.voter_request_target(now) else {
            return false;
        };
        let me = VoterNode {
            key: local,
            listeners: self.cfg.listeners.clone(),
            supported_kraft_version: SUPPORTED_KRAFT_VERSIONS,
        };
        let needed = if self.control.kraft_version() >= 1 {
            self.voters().node(local.id) != Some(&me)
        } else {
            matches!(&self.role, Role::Follower(f) if !f.has_updated_leader)
        };
        if !needed || me.listeners.get(&self.cfg.default_listener).is_none() {
            return false;
        }
        let request = Request::UpdateRaftVoter(UpdateVoterRequest {
            cluster_id: Some(self.cfg.cluster_id.clone()),
            current_leader_epoch: self.epoch(),
            voter: local,
            listeners: me.listeners,
            supported_kraft_version: me.supported_kraft_version,
        });
        self.send(now, leader, address, request);
        self.sent_voter_request(now);
        true
    }

    /// Auto-join: an observer whose key is not a voter at kraft.version 1 asks the leader to
    /// remove the voter holding its id under another directory id (a replaced disk), else to
    /// add it (answered once written). Returns whether a request was sent.
    pub(in crate::raft) fn maybe_auto_join(&mut self, now: Instant) -> bool {
        let Some(local) = self.local else {
            return false;
        };
        if !self.cfg.auto_join || self.control.kraft_version() < 1 || self.is_voter() {
            return false;
        }
        let Some((leader, address)) = self.voter_request_target(now) else {
            return false;
        };
        let cluster_id = Some(self.cfg.cluster_id.clone());
        let request = match self.voters().node(local.id) {
            Some(stale) => Request::RemoveRaftVoter(RemoveVoterRequest {
                cluster_id,
                voter: stale.key,
            }),
            None => Request::AddRaftVoter(AddVoterRequest {
                cluster_id,
                timeout_ms: i32::try_from(self.cfg.request_timeout.as_millis()).unwrap_or(i32::MAX),
                voter: local,
                listeners: self.cfg.listeners.clone(),
                ack_when_committed: false,
            }),
        };
        self.send(now, leader, address, request);
        self.sent_voter_request(now);
        true
    }

    /// The leader's answer to an auto-join request: nothing to do but learn the leader it
    /// names; the next attempt waits a fetch timeout. Returns whether it was handled.
    pub(in crate::raft) fn handle_voter_change_response(
        &mut self,
        r: &VoterChangeResponse,
    ) -> bool {
        r.error != ErrorCode::BROKER_NOT_AVAILABLE
    }
}
