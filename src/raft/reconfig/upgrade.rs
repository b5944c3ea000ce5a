//! The kraft.version upgrade at the leader (Kafka's `LeaderState.maybeAppendUpgradedKRaftVersion`,
//! reached through UpdateFeatures): at kraft.version 0 the leader knows every static voter's
//! directory id, listeners and supported range from their UpdateRaftVoter requests
//! (`LeaderState::upgrade_voters`); the upgrade writes them, with the new kraft.version, as one
//! control batch (KRaftVersionRecord, then VotersRecord). From then on voters are in the log.

use std::fmt;

use super::messages;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::k_raft_version_record::KRaftVersionRecord;
use crate::raft::log::{ControlRecord, RaftLog};
use crate::raft::node::Raft;
use crate::raft::quorum_state::QuorumStateStore;
use crate::raft::role::Role;
use crate::raft::time::Instant;
use crate::raft::types::{Epoch, VoterSet};
use crate::raft::voters::voters_record;

/// Why the leader refuses a kraft.version upgrade. `Display` is Java's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KraftUpgradeRefusal {
    /// Not the leader of `epoch` (the controller asked for an epoch it no longer leads).
    NotLeader {
        epoch: Epoch,
    },
    StaleEpoch {
        given: Epoch,
        current: Epoch,
    },
    UnknownLevel(i16),
    /// Another level was requested in this epoch and is being written.
    Concurrent {
        requested: i16,
        wanted: i16,
    },
    Downgrade {
        from: i16,
        to: i16,
    },
    /// The leader's copy of the static voters lacks a voter of the voter set (Java: an
    /// `IllegalStateException`).
    MissingVoters {
        known: Vec<i32>,
        voters: Vec<i32>,
    },
    /// Some voter did not report (through UpdateRaftVoter) that it supports the level.
    NotAllVotersSupport {
        level: i16,
    },
    /// Some voter's directory id is unknown (Java: an `IllegalStateException`).
    DirectoryIdsUnknown {
        voters: String,
    },
}

/// Java's `KRaftVersion.toString`.
fn kraft_version_name(level: i16) -> String {
    format!("KRAFT_VERSION_{level}")
}

impl fmt::Display for KraftUpgradeRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = crate::protocol::features::KRAFT_VERSION;
        match self {
            KraftUpgradeRefusal::NotLeader { epoch } => write!(
                f,
                "Upgrade kraft version failed because this node no longer leads epoch {epoch}"
            ),
            KraftUpgradeRefusal::StaleEpoch { given, current } => write!(
                f,
                "Upgrade kraft version failed because the given epoch {given} is stale. Current leader epoch is {current}"
            ),
            KraftUpgradeRefusal::UnknownLevel(l) => {
                write!(f, "No feature:{k} with feature level {l}")
            }
            KraftUpgradeRefusal::Concurrent { requested, wanted } => write!(
                f,
                "Invalid concurrent upgrade of {k} from version Version[kraftVersion={}] to {}",
                kraft_version_name(*requested),
                kraft_version_name(*wanted)
            ),
            KraftUpgradeRefusal::Downgrade { from, to } => write!(
                f,
                "Invalid upgrade of {k} from version {} to {} because the new version is a downgrade",
                kraft_version_name(*from),
                kraft_version_name(*to)
            ),
            KraftUpgradeRefusal::MissingVoters { known, voters } => write!(
                f,
                "Unable to update {k} to the new level due to missing voters {known:?} compared to {voters:?}"
            ),
            KraftUpgradeRefusal::NotAllVotersSupport { level } => write!(
                f,
                "Invalid upgrade of {k} to {} because not all of the voters support it",
                kraft_version_name(*level)
            ),
            KraftUpgradeRefusal::DirectoryIdsUnknown { voters } => write!(
                f,
                "Directory id must be known for all of the voters: {voters}; a voter reports its \
                 directory id with UpdateRaftVoter once it follows this leader: start every voter \
                 and retry"
            ),
        }
    }
}

impl std::error::Error for KraftUpgradeRefusal {}

impl KraftUpgradeRefusal {
    /// The error code an UpdateFeatures response carries. Java fails over on its
    /// `IllegalStateException`s (UNKNOWN_SERVER_ERROR); kraftd refuses them as invalid updates
    /// and keeps leading.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            KraftUpgradeRefusal::NotLeader { .. } | KraftUpgradeRefusal::StaleEpoch { .. } => {
                ErrorCode::NOT_CONTROLLER
            }
            _ => ErrorCode::INVALID_UPDATE_VERSION,
        }
    }
}

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// Upgrades kraft.version to `level` as the leader of `epoch`, unless `validate_only`.
    /// `Ok(false)`: nothing to write (already at `level`, or its upgrade is being written).
    pub fn upgrade_kraft_version(
        &mut self,
        now: Instant,
        epoch: Epoch,
        level: i16,
        validate_only: bool,
    ) -> Result<bool, KraftUpgradeRefusal> {
        let current_epoch = self.epoch();
        let persisted = self.control.kraft_version();
        let latest_ids: Vec<i32> = self.voters().ids().collect();
        let Role::Leader(l) = &mut self.role else {
            return Err(KraftUpgradeRefusal::NotLeader { epoch });
        };
        if epoch < current_epoch {
            return Err(KraftUpgradeRefusal::StaleEpoch {
                given: epoch,
                current: current_epoch,
            });
        }
        if epoch > current_epoch {
            return Err(KraftUpgradeRefusal::NotLeader { epoch });
        }
        let (min, max) = crate::protocol::features::SUPPORTED_KRAFT_VERSIONS;
        if !(min..=max).contains(&level) {
            return Err(KraftUpgradeRefusal::UnknownLevel(level));
        }
        if let Some(requested) = l.requested_kraft_version {
            return if requested == level {
                Ok(false)
            } else {
                Err(KraftUpgradeRefusal::Concurrent {
                    requested,
                    wanted: level,
                })
            };
        }
        if persisted == level {
            return Ok(false);
        }
        if persisted > level {
            return Err(KraftUpgradeRefusal::Downgrade {
                from: persisted,
                to: level,
            });
        }
        let voters: VoterSet = match &l.upgrade_voters {
            Some(v) => v.clone(),
            None => {
                return Err(KraftUpgradeRefusal::MissingVoters {
                    known: Vec::new(),
                    voters: latest_ids,
                })
            }
        };
        let known: Vec<i32> = voters.ids().collect();
        if known != latest_ids {
            return Err(KraftUpgradeRefusal::MissingVoters {
                known,
                voters: latest_ids,
            });
        }
        if !voters
            .nodes()
            .all(|n| (n.supported_kraft_version.0..=n.supported_kraft_version.1).contains(&level))
        {
            tracing::info!(
                target: "kraftd::raft",
                "Not all voters support kraft version {level}: {}",
                messages::voter_keys(&voters)
            );
            return Err(KraftUpgradeRefusal::NotAllVotersSupport { level });
        }
        if voters.nodes().any(|n| n.key.directory_id.is_none()) {
            return Err(KraftUpgradeRefusal::DirectoryIdsUnknown {
                voters: messages::voter_keys(&voters),
            });
        }
        if validate_only {
            return Ok(true);
        }
        l.requested_kraft_version = Some(level);
        l.upgrade_voters = None;
        l.accumulator.append_control(
            now,
            vec![
                ControlRecord::KRaftVersion(KRaftVersionRecord {
                    version: 0,
                    k_raft_version: level,
                    ..KRaftVersionRecord::default()
                }),
                ControlRecord::Voters(voters_record(&voters)),
            ],
        );
        tracing::info!(
            target: "kraftd::raft",
            "upgrading kraft.version from {persisted} to {level} with voters {}",
            messages::voter_keys(&voters)
        );
        self.append_all_proposals(now);
        Ok(true)
    }
}
