//! RemoveRaftVoter at the leader (Kafka's `handleRemoveVoterRequest` and `RemoveVoterHandler`).

use super::messages as m;
use super::{ChangeKind, ChangeStage, PendingVoterChange};
use crate::protocol::errors::ErrorCode;
use crate::raft::log::RaftLog;
use crate::raft::msg::{RemoveVoterRequest, RequestId, VoterChangeResponse};
use crate::raft::node::Raft;
use crate::raft::quorum_state::QuorumStateStore;
use crate::raft::role::Role;
use crate::raft::time::Instant;
use crate::raft::types::VoterSet;

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// `None`: the request waits for its VotersRecord to commit.
    pub(in crate::raft) fn handle_remove_voter_request(
        &mut self,
        now: Instant,
        id: RequestId,
        r: &RemoveVoterRequest,
    ) -> Option<VoterChangeResponse> {
        let refuse = |code, msg: String| Some(VoterChangeResponse::with_message(code, msg));
        if !self.valid_cluster_id(&r.cluster_id) {
            let given = r.cluster_id.as_deref().unwrap_or("null");
            return refuse(
                ErrorCode::INCONSISTENT_CLUSTER_ID,
                m::cluster_id_mismatch(given, &self.cfg.cluster_id),
            );
        }
        if let Some(e) = self.validate_leader_only_request(self.epoch()) {
            // Java answers these with an empty message, not a null one.
            return Some(VoterChangeResponse::with_message(e, ""));
        }
        if r.voter.id < 0 || r.voter.directory_id.is_none() {
            return refuse(
                ErrorCode::INVALID_REQUEST,
                "Remove voter request didn't include a valid voter".into(),
            );
        }
        if self.voter_change_pending(now) {
            return refuse(
                ErrorCode::REQUEST_TIMED_OUT,
                m::PREVIOUS_CHANGE_PENDING.into(),
            );
        }
        let Some(hw) = self.high_watermark else {
            return refuse(ErrorCode::REQUEST_TIMED_OUT, m::NO_HIGH_WATERMARK.into());
        };
        let kraft = self.control.kraft_version();
        if kraft < 1 {
            return refuse(
                ErrorCode::UNSUPPORTED_VERSION,
                m::kraft_version_unsupported("removing", kraft),
            );
        }
        if self.latest_voters_committed() != Some(true) {
            return refuse(
                ErrorCode::REQUEST_TIMED_OUT,
                m::latest_change_uncommitted(self.control.latest_voters_offset(), hw),
            );
        }
        // Kafka's `VoterSet.removeVoter`: the exact key (id and directory id), never the last.
        let voters = self.voters();
        let exact = voters.node(r.voter.id).is_some_and(|n| n.key == r.voter);
        if !exact || voters.len() < 2 {
            return refuse(
                ErrorCode::VOTER_NOT_FOUND,
                format!(
                    "Cannot remove voter {} from the set of voters {}",
                    m::replica_key(&r.voter),
                    m::voter_keys(voters)
                ),
            );
        }
        let remaining = VoterSet::new(voters.nodes().filter(|n| n.key != r.voter).cloned());
        let offset = self.append_voters_record(now, &remaining)?;
        let deadline = now + self.cfg.request_timeout;
        if let Role::Leader(l) = &mut self.role {
            l.voter_change = Some(PendingVoterChange {
                kind: ChangeKind::Remove,
                reply_to: Some(id),
                deadline,
                stage: ChangeStage::Appended { offset },
            });
        }
        // Removing the other voter of two commits at once on the leader's own append.
        self.voter_change_on_high_watermark();
        None
    }
}
