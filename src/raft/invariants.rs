//! Per-node invariants, checked after every step in debug builds and tests (etcd's discipline:
//! a broken invariant is a bug, never "log and continue").

use super::log::RaftLog;
use super::node::Raft;
use super::quorum_state::{ElectionState, QuorumStateError, QuorumStateStore};
use super::role::Role;
use super::time::Instant;
use super::types::{Endpoints, Epoch, NodeId};
use crate::protocol::records::Offset;

/// A broken invariant of a raft node: a bug, never a state to log and continue from. Each
/// variant names the invariant and carries the values that break it; the node's role is given
/// as it displays.
#[derive(Debug, thiserror::Error)]
pub enum InvariantViolation {
    #[error("log offsets out of order: start {start} flushed {flushed} end {end}")]
    LogOffsetsOutOfOrder {
        start: Offset,
        flushed: Offset,
        end: Offset,
    },
    #[error("high watermark {hw} above the log end offset {end}")]
    HighWatermarkAboveEnd { hw: Offset, end: Offset },
    #[error("high watermark {hw} was never reported")]
    HighWatermarkNotReported { hw: Offset },
    #[error("shutting down until {shutdown}, but the next deadline is {next_deadline}")]
    ShutdownPastNextDeadline {
        shutdown: Instant,
        next_deadline: Instant,
    },
    #[error("parked fetches while not leader")]
    ParkedFetchesWhileNotLeader,
    #[error("epoch {epoch} below the log's last epoch {log_epoch}")]
    EpochBelowLog { epoch: Epoch, log_epoch: Epoch },
    #[error("{0}")]
    ElectionStateUnreadable(#[source] QuorumStateError),
    #[error("{role} but quorum-state holds {stored:?}")]
    ElectionStateEpoch {
        role: String,
        stored: Option<ElectionState>,
    },
    #[error("{role} must be persisted as {expected}, quorum-state holds {stored:?}")]
    ElectionStateNotPersisted {
        role: String,
        expected: ElectionState,
        stored: Option<ElectionState>,
    },
    #[error("{role} with leader {leader_id} endpoints {endpoints:?}")]
    FollowerLeader {
        role: String,
        leader_id: NodeId,
        endpoints: Endpoints,
    },
    #[error("voter follower has unflushed data: flushed {flushed} end {end}")]
    VoterFollowerUnflushed { flushed: Offset, end: Offset },
    #[error("early election at {early_election_at:?} after the fetch timeout {fetch_deadline}")]
    EarlyElectionAfterFetchTimeout {
        early_election_at: Option<Instant>,
        fetch_deadline: Instant,
    },
    #[error("an early election under Kafka's rules")]
    EarlyElectionUnderKafkaRules,
    #[error("unattached with a vote for itself")]
    UnattachedVotedForItself,
    #[error("leader is not a voter")]
    LeaderNotVoter,
    #[error("leader log: epoch start {epoch_start} flushed {flushed} end {end}")]
    LeaderLog {
        epoch_start: Offset,
        flushed: Offset,
        end: Offset,
    },
    #[error("leader's own progress {own:?} is not its log end offset {end}")]
    LeaderOwnProgress { own: Option<Offset>, end: Offset },
    #[error("a kraft.version upgrade was written but the static voters are still open to updates")]
    UpgradeWrittenWithVotersOpen,
    #[error("leader elected at kraft.version {kraft_version} with upgrade voters {upgrade_voters} and requested upgrade {requested:?}")]
    UpgradeStateAtKraftVersion {
        kraft_version: i16,
        upgrade_voters: bool,
        requested: Option<i16>,
    },
    #[error("leader HW {hw} not past its epoch start {epoch_start}")]
    LeaderHighWatermarkBeforeEpochStart { hw: Offset, epoch_start: Offset },
    #[error("{role} is not a voter")]
    NotAVoter { role: String },
    #[error("a prospective renewing its round under Kafka's rules")]
    ProspectiveRenewingUnderKafkaRules,
}

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// Checks the node's invariants; the first broken one is returned.
    pub fn check_invariants(&self) -> Result<(), InvariantViolation> {
        use InvariantViolation as V;
        let (start, flushed, end) = (
            self.log.start_offset(),
            self.log.flushed_end_offset(),
            self.log.end_offset(),
        );
        if !(start <= flushed && flushed <= end) {
            return Err(V::LogOffsetsOutOfOrder {
                start,
                flushed,
                end,
            });
        }
        if let Some(hw) = self.high_watermark {
            if hw > end {
                return Err(V::HighWatermarkAboveEnd { hw, end });
            }
            if self.reported_hw.is_none_or(|r| hw > r) {
                return Err(V::HighWatermarkNotReported { hw });
            }
        }
        if let Some(deadline) = self.shutdown.filter(|d| *d > self.now) {
            if self.next_deadline > deadline {
                return Err(V::ShutdownPastNextDeadline {
                    shutdown: deadline,
                    next_deadline: self.next_deadline,
                });
            }
        }
        if !self.parked.is_empty() && !self.is_leader() {
            return Err(V::ParkedFetchesWhileNotLeader);
        }
        if self.epoch() < self.log.last_fetched_epoch() {
            return Err(V::EpochBelowLog {
                epoch: self.epoch(),
                log_epoch: self.log.last_fetched_epoch(),
            });
        }
        let stored = self
            .store
            .read_election_state()
            .map_err(V::ElectionStateUnreadable)?;
        match &self.role {
            Role::Prospective(_) | Role::Resigned(_) => {
                if stored.as_ref().map(|s| s.epoch) != Some(self.epoch()) {
                    return Err(V::ElectionStateEpoch {
                        role: self.role.to_string(),
                        stored,
                    });
                }
            }
            role => {
                // A file written at data version 0 keeps no voted directory id.
                let expected = role.election_state(self.local);
                let without_directory = expected.persisted_at(0);
                if stored.as_ref() != Some(&expected) && stored.as_ref() != Some(&without_directory)
                {
                    return Err(V::ElectionStateNotPersisted {
                        role: role.to_string(),
                        expected,
                        stored,
                    });
                }
            }
        }
        let local_id = self.local_id();
        let departs = self.cfg.election_rules.departs_from_kafka();
        match &self.role {
            Role::Follower(f) => {
                if Some(f.leader_id) == local_id || f.leader_endpoints.is_empty() {
                    return Err(V::FollowerLeader {
                        role: self.role.to_string(),
                        leader_id: f.leader_id,
                        endpoints: f.leader_endpoints.clone(),
                    });
                }
                if self.is_voter() && flushed != end {
                    return Err(V::VoterFollowerUnflushed { flushed, end });
                }
                if f.early_election_at.is_some_and(|at| at > f.fetch_deadline) {
                    return Err(V::EarlyElectionAfterFetchTimeout {
                        early_election_at: f.early_election_at,
                        fetch_deadline: f.fetch_deadline,
                    });
                }
                if f.early_election_at.is_some() && !departs {
                    return Err(V::EarlyElectionUnderKafkaRules);
                }
            }
            Role::Unattached(u) => {
                if u.voted_key.is_some_and(|v| Some(v.id) == local_id) {
                    return Err(V::UnattachedVotedForItself);
                }
            }
            Role::Leader(l) => {
                // Only a VotersRecord of its own epoch can have removed a leader (it resigns
                // once that commits).
                let removed_in_epoch = self
                    .control
                    .latest_voters_offset()
                    .is_some_and(|o| o >= l.epoch_start_offset);
                if !self.is_voter() && !removed_in_epoch {
                    return Err(V::LeaderNotVoter);
                }
                if l.epoch_start_offset > end || flushed != end {
                    return Err(V::LeaderLog {
                        epoch_start: l.epoch_start_offset,
                        flushed,
                        end,
                    });
                }
                let own = l.local_state().and_then(|s| s.end_offset);
                if own != Some(end) {
                    return Err(V::LeaderOwnProgress { own, end });
                }
                if l.requested_kraft_version.is_some() && l.upgrade_voters.is_some() {
                    return Err(V::UpgradeWrittenWithVotersOpen);
                }
                if (l.upgrade_voters.is_some() || l.requested_kraft_version.is_some())
                    != (self.control.kraft_version_at(l.epoch_start_offset - 1) == 0)
                {
                    return Err(V::UpgradeStateAtKraftVersion {
                        kraft_version: self.control.kraft_version_at(l.epoch_start_offset - 1),
                        upgrade_voters: l.upgrade_voters.is_some(),
                        requested: l.requested_kraft_version,
                    });
                }
                if let Some(hw) = self.high_watermark {
                    if hw <= l.epoch_start_offset {
                        return Err(V::LeaderHighWatermarkBeforeEpochStart {
                            hw,
                            epoch_start: l.epoch_start_offset,
                        });
                    }
                }
            }
            Role::Candidate(_) => {
                if !self.is_voter() {
                    return Err(V::NotAVoter {
                        role: self.role.to_string(),
                    });
                }
            }
            Role::Prospective(p) => {
                if !self.is_voter() {
                    return Err(V::NotAVoter {
                        role: self.role.to_string(),
                    });
                }
                if p.leader_gone && !departs {
                    return Err(V::ProspectiveRenewingUnderKafkaRules);
                }
            }
            Role::Resigned(_) => {}
        }
        Ok(())
    }
}
