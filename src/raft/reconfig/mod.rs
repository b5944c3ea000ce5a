//! Voter changes at kraft.version 1 (KIP-853): AddRaftVoter, RemoveRaftVoter and UpdateRaftVoter
//! at the leader (Kafka's `AddVoterHandler`, `RemoveVoterHandler`, `UpdateVoterHandler`).
//!
//! Each change appends a VotersRecord as its own control batch. The new voter set takes effect
//! when it is appended (`ControlState::apply_batch`, then `LeaderState::update_voter_set`), not
//! when it commits. At most one add or remove is in progress ([`PendingVoterChange`]), and none
//! starts while the latest VotersRecord is uncommitted, so no two uncommitted voter sets ever
//! exist (Kafka's `AtMostOneUncommittedVoterSet`). An add or remove is answered once the HW passes
//! its record; a removed leader then resigns. Expiry answers `REQUEST_TIMED_OUT`, a lost
//! leadership `NOT_LEADER_OR_FOLLOWER`.

mod add;
mod follower;
mod messages;
mod remove;
mod update;
mod upgrade;

pub use upgrade::KraftUpgradeRefusal;

use super::log::{ControlRecord, RaftLog};
use super::msg::{RequestId, Response, VoterChangeResponse};
use super::node::{Action, Raft};
use super::quorum_state::QuorumStateStore;
use super::role::Role;
use super::time::Instant;
use super::types::{Endpoints, Offset, ReplicaKey, VoterSet};
use super::voters::voters_record;
use crate::protocol::errors::ErrorCode;

/// Which change is in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Add,
    Remove,
}

impl ChangeKind {
    /// As Java's messages name the request ("Add voter request ...").
    fn noun(self) -> &'static str {
        match self {
            ChangeKind::Add => "Add",
            ChangeKind::Remove => "Remove",
        }
    }

    /// As Java's messages name the operation ("doesn't support adding voter ...").
    fn gerund(self) -> &'static str {
        match self {
            ChangeKind::Add => "adding",
            ChangeKind::Remove => "removing",
        }
    }
}

/// A voter add or remove in progress at the leader (Kafka's `AddVoterHandlerState` /
/// `RemoveVoterHandlerState`). Lives in `LeaderState`, so it ends with the leadership.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingVoterChange {
    pub kind: ChangeKind,
    /// The request still to be answered; `None` once answered early (AckWhenCommitted false).
    pub reply_to: Option<RequestId>,
    /// `controller.quorum.request.timeout.ms` after the request: then `REQUEST_TIMED_OUT`.
    pub deadline: Instant,
    pub stage: ChangeStage,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ChangeStage {
    /// An add waits for the new voter's ApiVersions answer (its kraft.version range).
    AwaitingApiVersions {
        voter: ReplicaKey,
        listeners: Endpoints,
        ack_when_committed: bool,
    },
    /// The VotersRecord is appended at `offset`; done when the HW passes it.
    Appended { offset: Offset },
}

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// Answers `request` of `kind` (AddRaftVoter and RemoveRaftVoter share the answer's shape).
    fn answer_change(&mut self, kind: ChangeKind, id: RequestId, answer: VoterChangeResponse) {
        let response = match kind {
            ChangeKind::Add => Response::AddRaftVoter(answer),
            ChangeKind::Remove => Response::RemoveRaftVoter(answer),
        };
        self.out.push(Action::Respond { id, response });
    }

    /// Kafka's `isOperationPending`: expires an overdue change first.
    fn voter_change_pending(&mut self, now: Instant) -> bool {
        self.expire_voter_change(now);
        matches!(&self.role, Role::Leader(l) if l.voter_change.is_some())
    }

    /// Ends the pending change, answering its request with `answer` if not yet answered.
    fn end_voter_change(&mut self, answer: VoterChangeResponse) {
        let Role::Leader(l) = &mut self.role else {
            return;
        };
        if let Some(change) = l.voter_change.take() {
            if let Some(id) = change.reply_to {
                self.answer_change(change.kind, id, answer);
            }
        }
    }

    /// A change past its deadline is answered `REQUEST_TIMED_OUT`.
    pub(super) fn expire_voter_change(&mut self, now: Instant) {
        let overdue = matches!(&self.role, Role::Leader(l)
            if l.voter_change.as_ref().is_some_and(|c| now >= c.deadline));
        if overdue {
            self.end_voter_change(VoterChangeResponse::with_message(
                ErrorCode::REQUEST_TIMED_OUT,
                messages::TIMED_OUT,
            ));
        }
    }

    /// The pending change's deadline, for the node's next deadline.
    pub(super) fn voter_change_deadline(&self) -> Instant {
        match &self.role {
            Role::Leader(l) => l
                .voter_change
                .as_ref()
                .map_or(Instant::NEVER, |c| c.deadline),
            _ => Instant::NEVER,
        }
    }

    /// The leadership ended: the pending change's request gets `NOT_LEADER_OR_FOLLOWER`.
    pub(super) fn abandon_voter_change(&mut self, old: &mut Role) {
        if let Role::Leader(l) = old {
            if let Some(change) = l.voter_change.take() {
                if let Some(id) = change.reply_to {
                    self.answer_change(
                        change.kind,
                        id,
                        VoterChangeResponse::with_message(
                            ErrorCode::NOT_LEADER_OR_FOLLOWER,
                            super::describe::NOT_LEADER_OR_FOLLOWER_MESSAGE,
                        ),
                    );
                }
            }
        }
    }

    /// The HW moved: a change whose record it passed is done. A leader that the committed
    /// voter set no longer holds resigns (Kafka resigns only when its own pending removal
    /// completes, so a leader whose removal timed out before committing led on outside the
    /// voter set; the Raft rule is to step down once the set without it commits).
    pub(super) fn voter_change_on_high_watermark(&mut self) {
        let Some(hw) = self.high_watermark else {
            return;
        };
        let done = matches!(&self.role, Role::Leader(l) if l.voter_change.as_ref().is_some_and(
            |c| matches!(c.stage, ChangeStage::Appended { offset } if hw > offset)));
        if done {
            self.end_voter_change(VoterChangeResponse::error(ErrorCode::NONE));
        }
        let removal_committed = !self.is_voter() && self.latest_voters_committed() == Some(true);
        if removal_committed {
            if let Role::Leader(l) = &mut self.role {
                l.resign_requested = true;
            }
        }
    }

    /// The checks Kafka makes of an add or remove before anything specific to it: the cluster
    /// id, the leadership, and a valid voter key.
    fn validate_change_request(
        &self,
        kind: ChangeKind,
        cluster_id: &Option<String>,
        voter: &ReplicaKey,
    ) -> Result<(), VoterChangeResponse> {
        if !self.valid_cluster_id(cluster_id) {
            let given = cluster_id.as_deref().unwrap_or("null");
            return Err(VoterChangeResponse::with_message(
                ErrorCode::INCONSISTENT_CLUSTER_ID,
                messages::cluster_id_mismatch(given, &self.cfg.cluster_id),
            ));
        }
        if let Some(e) = self.validate_leader_only_request(self.epoch()) {
            // Java answers these with an empty message, not a null one.
            return Err(VoterChangeResponse::with_message(e, ""));
        }
        if voter.id < 0 || voter.directory_id.is_none() {
            return Err(VoterChangeResponse::with_message(
                ErrorCode::INVALID_REQUEST,
                format!("{} voter request didn't include a valid voter", kind.noun()),
            ));
        }
        Ok(())
    }

    /// What must hold before a change starts (Kafka's handler preconditions): none pending,
    /// the HW known in this epoch, kraft.version 1, and the latest voter set committed.
    fn change_preconditions(
        &mut self,
        now: Instant,
        kind: ChangeKind,
    ) -> Result<(), VoterChangeResponse> {
        let refuse = |code, msg: String| Err(VoterChangeResponse::with_message(code, msg));
        if self.voter_change_pending(now) {
            return refuse(
                ErrorCode::REQUEST_TIMED_OUT,
                messages::PREVIOUS_CHANGE_PENDING.into(),
            );
        }
        let Some(hw) = self.high_watermark else {
            return refuse(
                ErrorCode::REQUEST_TIMED_OUT,
                messages::NO_HIGH_WATERMARK.into(),
            );
        };
        let kraft = self.control.kraft_version();
        if kraft < 1 {
            return refuse(
                ErrorCode::UNSUPPORTED_VERSION,
                messages::kraft_version_unsupported(kind.gerund(), kraft),
            );
        }
        if self.latest_voters_committed() != Some(true) {
            return refuse(
                ErrorCode::REQUEST_TIMED_OUT,
                messages::latest_change_uncommitted(self.control.latest_voters_offset(), hw),
            );
        }
        Ok(())
    }

    /// Whether the latest VotersRecord is committed (Kafka: an entry exists and its offset is
    /// below the HW). `None` when the HW is unknown.
    fn latest_voters_committed(&self) -> Option<bool> {
        let hw = self.high_watermark?;
        Some(self.control.latest_voters_offset().is_some_and(|o| o < hw))
    }

    /// Appends `voters` as a VotersRecord in its own control batch; returns its offset.
    /// `None` when not leading, or when the append halted the node.
    fn append_voters_record(&mut self, now: Instant, voters: &VoterSet) -> Option<Offset> {
        let Role::Leader(l) = &mut self.role else {
            return None;
        };
        let offset = l
            .accumulator
            .append_control(now, vec![ControlRecord::Voters(voters_record(voters))]);
        self.append_all_proposals(now);
        self.fatal.is_none().then_some(offset)
    }
}
