//! UpdateRaftVoter at the leader (Kafka's `handleUpdateVoterRequest` and `UpdateVoterHandler`):
//! a voter publishes its listeners and supported kraft.version range. At kraft.version 1 a
//! changed entry is appended as a VotersRecord and answered at once (not after the commit). At
//! kraft.version 0 the entry goes into the leader's in-memory copy of the static voters, which
//! a later kraft.version upgrade writes (Kafka 4.1+, KAFKA-16538).

use crate::protocol::errors::ErrorCode;
use crate::raft::log::RaftLog;
use crate::raft::msg::{UpdateVoterRequest, UpdateVoterResponse};
use crate::raft::node::Raft;
use crate::raft::quorum_state::QuorumStateStore;
use crate::raft::role::Role;
use crate::raft::time::Instant;
use crate::raft::types::VoterNode;

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    pub(in crate::raft) fn handle_update_voter_request(
        &mut self,
        now: Instant,
        listener: Option<&str>,
        r: &UpdateVoterRequest,
    ) -> UpdateVoterResponse {
        let answer = |raft: &Self, error| UpdateVoterResponse {
            error,
            leader_id: raft.leader_id().unwrap_or(-1),
            leader_epoch: raft.epoch(),
            leader_address: raft.leader_endpoint_for(listener),
        };
        if !self.valid_cluster_id(&r.cluster_id) {
            return answer(self, ErrorCode::INCONSISTENT_CLUSTER_ID);
        }
        if let Some(e) = self.validate_leader_only_request(r.current_leader_epoch) {
            return answer(self, e);
        }
        let (min, max) = r.supported_kraft_version;
        if r.voter.id < 0
            || r.voter.directory_id.is_none()
            || r.listeners.get(&self.cfg.default_listener).is_none()
            || min < 0
            || max < 0
            || max < min
        {
            return answer(self, ErrorCode::INVALID_REQUEST);
        }
        if self.voter_change_pending(now) || self.high_watermark.is_none() {
            return answer(self, ErrorCode::REQUEST_TIMED_OUT);
        }
        let node = VoterNode {
            key: r.voter,
            listeners: r.listeners.clone(),
            supported_kraft_version: r.supported_kraft_version,
        };
        let kraft = self.control.kraft_version();
        if kraft < 1 {
            let error = self.update_upgrade_voter(node);
            return answer(self, error);
        }
        if self.latest_voters_committed() != Some(true) {
            return answer(self, ErrorCode::REQUEST_TIMED_OUT);
        }
        if !(min..=max).contains(&kraft) {
            return answer(self, ErrorCode::INVALID_REQUEST);
        }
        // Kafka's `VoterSet.updateVoter`: the entry must match the key (an entry without a
        // directory id matches any); the updated entry takes the request's key.
        let voters = self.voters();
        if !voters.is_voter(&r.voter) {
            return answer(self, ErrorCode::VOTER_NOT_FOUND);
        }
        // Java appends even an unchanged entry (its followers only ask when theirs differs).
        let updated = voters.with_node(node);
        self.append_voters_record(now, &updated);
        answer(self, ErrorCode::NONE)
    }

    /// The leader's answer to this follower's UpdateRaftVoter: only the common handling (the
    /// leader it names). Returns whether it was handled.
    pub(in crate::raft) fn handle_update_voter_response(
        &mut self,
        now: Instant,
        r: &UpdateVoterResponse,
    ) -> bool {
        let leader = (r.leader_id >= 0).then_some(r.leader_id);
        let endpoints = self.response_leader_endpoints(leader, &r.leader_address);
        if let Some(handled) =
            self.maybe_handle_common_response(now, r.error, leader, r.leader_epoch, endpoints)
        {
            return handled;
        }
        if r.error == ErrorCode::NONE {
            if let Role::Follower(f) = &mut self.role {
                f.has_updated_leader = true;
            }
        }
        true
    }

    /// Kraft.version 0: records the voter's key and listeners in the leader's copy of the
    /// static voters (matched by id: static entries have no directory id).
    fn update_upgrade_voter(&mut self, node: VoterNode) -> ErrorCode {
        let Role::Leader(l) = &mut self.role else {
            return ErrorCode::NOT_LEADER_OR_FOLLOWER;
        };
        let Some(upgrade) = &mut l.upgrade_voters else {
            // An upgrade is being written: the voters are fixed.
            return ErrorCode::REQUEST_TIMED_OUT;
        };
        if upgrade.node(node.key.id).is_none() {
            return ErrorCode::VOTER_NOT_FOUND;
        }
        *upgrade = upgrade.with_node(node);
        ErrorCode::NONE
    }
}
