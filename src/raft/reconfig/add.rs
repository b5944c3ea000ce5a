//! AddRaftVoter at the leader (Kafka's `handleAddVoterRequest` and `AddVoterHandler`): checks,
//! an ApiVersions to the new voter for its kraft.version range, then the VotersRecord.

use super::messages as m;
use super::{ChangeKind, ChangeStage, PendingVoterChange};
use crate::protocol::errors::ErrorCode;
use crate::raft::log::RaftLog;
use crate::raft::msg::{
    AddVoterRequest, ApiVersionsResponse, Request, RequestId, VoterChangeResponse,
};
use crate::raft::node::Raft;
use crate::raft::quorum_state::QuorumStateStore;
use crate::raft::role::Role;
use crate::raft::time::Instant;
use crate::raft::types::{NodeId, VoterNode};

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// `None`: the request waits (for the new voter's ApiVersions, then the commit).
    pub(in crate::raft) fn handle_add_voter_request(
        &mut self,
        now: Instant,
        id: RequestId,
        r: &AddVoterRequest,
    ) -> Option<VoterChangeResponse> {
        let refuse = |code, msg: String| Some(VoterChangeResponse::with_message(code, msg));
        if let Err(refusal) = self.validate_change_request(ChangeKind::Add, &r.cluster_id, &r.voter)
        {
            return Some(refusal);
        }
        let listener = self.cfg.default_listener.clone();
        let Some(address) = r.listeners.get(&listener).cloned() else {
            return refuse(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "Add voter request didn't include the endpoint ({:?}) for the default listener {listener}",
                    r.listeners
                ),
            );
        };
        if let Err(refusal) = self.change_preconditions(now, ChangeKind::Add) {
            return Some(refusal);
        }
        let voters = self.voters();
        if voters.node(r.voter.id).is_some() {
            return refuse(
                ErrorCode::DUPLICATE_VOTER,
                format!(
                    "The voter id for {} is already part of the set of voters {}.",
                    m::replica_key(&r.voter),
                    m::voter_keys(voters)
                ),
            );
        }
        if !self.requests.is_ready(r.voter.id, now) {
            return refuse(
                ErrorCode::REQUEST_TIMED_OUT,
                format!(
                    "New voter {} is not ready to receive requests",
                    m::replica_key(&r.voter)
                ),
            );
        }
        self.send(now, r.voter.id, Some(address), Request::ApiVersions);
        let deadline = now + self.cfg.request_timeout;
        if let Role::Leader(l) = &mut self.role {
            l.voter_change = Some(PendingVoterChange {
                kind: ChangeKind::Add,
                reply_to: Some(id),
                deadline,
                stage: ChangeStage::AwaitingApiVersions {
                    voter: r.voter,
                    listeners: r.listeners.clone(),
                    ack_when_committed: r.ack_when_committed,
                },
            });
        }
        None
    }

    /// The new voter's ApiVersions answer (Kafka's `handleApiVersionsResponse`). Returns whether
    /// it was handled (false: back off from that node).
    pub(in crate::raft) fn handle_api_versions_response(
        &mut self,
        now: Instant,
        from: NodeId,
        r: &ApiVersionsResponse,
    ) -> bool {
        let Role::Leader(l) = &self.role else {
            return true;
        };
        let Some(PendingVoterChange {
            stage:
                ChangeStage::AwaitingApiVersions {
                    voter,
                    listeners,
                    ack_when_committed,
                },
            ..
        }) = &l.voter_change
        else {
            return true;
        };
        if voter.id != from {
            return true;
        }
        let (voter, listeners, ack_when_committed) =
            (*voter, listeners.clone(), *ack_when_committed);
        if r.error != ErrorCode::NONE {
            self.end_voter_change(VoterChangeResponse::with_message(
                ErrorCode::REQUEST_TIMED_OUT,
                format!(
                    "Aborted add voter operation for since API_VERSIONS returned an error {}",
                    r.error.name()
                ),
            ));
            return false;
        }
        let kraft = self.control.kraft_version();
        let range = r
            .kraft_version
            .filter(|(min, max)| *min <= kraft && kraft <= *max);
        let Some(range) = range else {
            let shown = r
                .kraft_version
                .map_or("(min: 0, max: 0)".to_string(), |(a, b)| {
                    // Java's message lacks the closing parenthesis here.
                    format!("(min: {a}, max: {b}")
                });
            self.end_voter_change(VoterChangeResponse::with_message(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "Aborted add voter operation for {} since the kraft.version range {shown} doesn't support the finalized version {kraft}",
                    m::replica_key(&voter)
                ),
            ));
            return true;
        };
        let caught_up =
            matches!(&self.role, Role::Leader(l) if l.is_caught_up_observer(&voter, now));
        if !caught_up {
            self.end_voter_change(VoterChangeResponse::with_message(
                ErrorCode::REQUEST_TIMED_OUT,
                format!(
                    "Aborted add voter operation for {} since it is lagging behind",
                    m::replica_key(&voter)
                ),
            ));
            return true;
        }
        let set = self.voters().with_node(VoterNode {
            key: voter,
            listeners,
            supported_kraft_version: range,
        });
        let Some(offset) = self.append_voters_record(now, &set) else {
            return true;
        };
        let answer_now = match &mut self.role {
            Role::Leader(l) => l.voter_change.as_mut().and_then(|change| {
                change.stage = ChangeStage::Appended { offset };
                // AckWhenCommitted false: answered once written; still pending until committed.
                (!ack_when_committed)
                    .then(|| change.reply_to.take())
                    .flatten()
            }),
            _ => return true,
        };
        if let Some(id) = answer_now {
            self.answer_change(
                ChangeKind::Add,
                id,
                VoterChangeResponse::error(ErrorCode::NONE),
            );
        }
        true
    }
}
