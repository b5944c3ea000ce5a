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

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// `None`: the request waits for its VotersRecord to commit.
    pub(in crate::raft) fn handle_remove_voter_request(
        &mut self,
        now: Instant,
        id: RequestId,
        r: &RemoveVoterRequest,
    ) -> Option<VoterChangeResponse> {
        if let Err(refusal) = self
            .validate_change_request(ChangeKind::Remove, &r.cluster_id, &r.voter)
            .and_then(|()| self.change_preconditions(now, ChangeKind::Remove))
        {
            return Some(refusal);
        }
        // Kafka's `VoterSet.removeVoter`: the exact key (id and directory id), never the last.
        let voters = self.voters();
        let exact = voters.node(r.voter.id).is_some_and(|n| n.key == r.voter);
        if !exact || voters.len() < 2 {
            return Some(VoterChangeResponse::with_message(
                ErrorCode::VOTER_NOT_FOUND,
                format!(
                    "Cannot remove voter {} from the set of voters {}",
                    m::replica_key(&r.voter),
                    m::voter_keys(voters)
                ),
            ));
        }
        let remaining = voters.without(r.voter.id);
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
