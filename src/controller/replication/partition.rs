//! Kafka's `PartitionRegistration`: one partition's replicas, ISR, ELR, directories and epochs,
//! built from a `PartitionRecord` and merged with each `PartitionChangeRecord` exactly as Java's
//! image does (including its defaults for records written before directories and ELR existed).

use serde_json::{json, Value};

use crate::controller::error::Refusal;
use crate::controller::json::uuids;
use crate::protocol::codec::Uuid;
use crate::protocol::messages::{PartitionChangeRecord, PartitionRecord};

/// `LeaderConstants.NO_LEADER`.
pub const NO_LEADER: i32 = -1;
/// `LeaderConstants.NO_LEADER_CHANGE`: a PartitionChangeRecord that leaves the leader alone.
pub const NO_LEADER_CHANGE: i32 = -2;
/// `LeaderRecoveryState.NO_CHANGE`.
const NO_RECOVERY_STATE_CHANGE: i8 = -1;
/// `DirectoryId.MIGRATING`, Uuid(0, 0): a replica placed before directories were tracked.
pub const DIRECTORY_MIGRATING: Uuid = Uuid::ZERO;
/// `DirectoryId.UNASSIGNED`, Uuid(0, 1): a new replica not yet placed in a log directory.
pub const DIRECTORY_UNASSIGNED: Uuid = Uuid([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
/// `DirectoryId.LOST`, Uuid(0, 2): a replica whose directory went offline.
pub const DIRECTORY_LOST: Uuid = Uuid([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);

/// How a partition's leader after a change was chosen, as Java's controller metrics tell
/// (`ControllerMetricsChanges.handlePartitionChange`): from the ISR (or no leader at all) is
/// clean; from the eligible leader replicas (KIP-966) is clean and counted apart; from any other
/// replica is unclean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Election {
    Clean,
    FromElr,
    Unclean,
}

/// The kind of election that gave `leader`, against the ISR and ELR before the change.
pub fn election_kind(leader: i32, prev_isr: &[i32], prev_elr: &[i32]) -> Election {
    if leader == NO_LEADER || prev_isr.contains(&leader) {
        Election::Clean
    } else if prev_elr.contains(&leader) {
        Election::FromElr
    } else {
        Election::Unclean
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRegistration {
    pub replicas: Vec<i32>,
    /// One per replica, in replica order (Java fills MIGRATING when a record carries none).
    pub directories: Vec<Uuid>,
    pub isr: Vec<i32>,
    pub removing_replicas: Vec<i32>,
    pub adding_replicas: Vec<i32>,
    pub elr: Vec<i32>,
    pub last_known_elr: Vec<i32>,
    pub leader: i32,
    /// 0 recovered, 1 recovering (`LeaderRecoveryState`).
    pub leader_recovery_state: i8,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
}

/// Where a partition is, for error messages.
#[derive(Debug, Clone, Copy)]
pub struct PartitionRef {
    pub record: &'static str,
    pub topic_id: Uuid,
    pub partition: i32,
}

impl PartitionRef {
    fn directories_mismatch(self, replicas: usize, directories: usize) -> Refusal {
        Refusal::DirectoriesMismatch {
            record: self.record,
            topic_id: self.topic_id,
            partition: self.partition,
            replicas,
            directories,
        }
    }
}

fn recovery_state(record: &'static str, value: i8) -> Result<i8, Refusal> {
    match value {
        0 | 1 => Ok(value),
        v => Err(Refusal::InvalidValue {
            record,
            field: "LeaderRecoveryState",
            value: v.into(),
        }),
    }
}

/// `defaultToMigrating`: directories that are all MIGRATING, or none at all, become one MIGRATING
/// per replica.
fn default_to_migrating(directories: Vec<Uuid>, replicas: usize) -> Vec<Uuid> {
    if directories.iter().all(|d| *d == DIRECTORY_MIGRATING) {
        vec![DIRECTORY_MIGRATING; replicas]
    } else {
        directories
    }
}

impl PartitionRegistration {
    pub fn from_record(r: &PartitionRecord) -> Result<PartitionRegistration, Refusal> {
        const RECORD: &str = "PartitionRecord";
        let at = PartitionRef {
            record: RECORD,
            topic_id: r.topic_id,
            partition: r.partition_id,
        };
        if !r.directories.is_empty() && r.directories.len() != r.replicas.len() {
            return Err(at.directories_mismatch(r.replicas.len(), r.directories.len()));
        }
        Ok(PartitionRegistration {
            replicas: r.replicas.clone(),
            directories: default_to_migrating(r.directories.clone(), r.replicas.len()),
            isr: r.isr.clone(),
            removing_replicas: r.removing_replicas.clone(),
            adding_replicas: r.adding_replicas.clone(),
            elr: r.eligible_leader_replicas.clone().unwrap_or_default(),
            last_known_elr: r.last_known_elr.clone().unwrap_or_default(),
            leader: r.leader,
            leader_recovery_state: recovery_state(RECORD, r.leader_recovery_state)?,
            leader_epoch: r.leader_epoch,
            partition_epoch: r.partition_epoch,
        })
    }

    /// `PartitionRegistration.merge`: every present field replaces, a new leader bumps the
    /// leader epoch, and every change bumps the partition epoch.
    pub fn merge(&self, r: &PartitionChangeRecord) -> Result<PartitionRegistration, Refusal> {
        const RECORD: &str = "PartitionChangeRecord";
        let at = PartitionRef {
            record: RECORD,
            topic_id: r.topic_id,
            partition: r.partition_id,
        };
        let replicas = r.replicas.clone().unwrap_or_else(|| self.replicas.clone());
        // Kafka 4.4 keeps the old directories when the record carries none, even when the
        // replicas change; the length check below then refuses a list that no longer fits.
        let directories = r
            .directories
            .clone()
            .unwrap_or_else(|| self.directories.clone());
        let (leader, leader_epoch) = if r.leader == NO_LEADER_CHANGE {
            (self.leader, self.leader_epoch)
        } else {
            (r.leader, self.leader_epoch + 1)
        };
        let leader_recovery_state = if r.leader_recovery_state == NO_RECOVERY_STATE_CHANGE {
            self.leader_recovery_state
        } else {
            recovery_state(RECORD, r.leader_recovery_state)?
        };
        let merged = PartitionRegistration {
            directories: default_to_migrating(directories, replicas.len()),
            replicas,
            isr: r.isr.clone().unwrap_or_else(|| self.isr.clone()),
            removing_replicas: r
                .removing_replicas
                .clone()
                .unwrap_or_else(|| self.removing_replicas.clone()),
            adding_replicas: r
                .adding_replicas
                .clone()
                .unwrap_or_else(|| self.adding_replicas.clone()),
            elr: r
                .eligible_leader_replicas
                .clone()
                .unwrap_or_else(|| self.elr.clone()),
            last_known_elr: r
                .last_known_elr
                .clone()
                .unwrap_or_else(|| self.last_known_elr.clone()),
            leader,
            leader_recovery_state,
            leader_epoch,
            partition_epoch: self.partition_epoch + 1,
        };
        if !merged.directories.is_empty() && merged.directories.len() != merged.replicas.len() {
            return Err(at.directories_mismatch(merged.replicas.len(), merged.directories.len()));
        }
        Ok(merged)
    }

    /// The change ClearElrRecord makes, if the partition has any ELR state (`maybeClearElr`).
    pub fn cleared_elr(&self) -> Option<PartitionRegistration> {
        if self.elr.is_empty() && self.last_known_elr.is_empty() {
            return None;
        }
        let mut p = self.clone();
        p.elr.clear();
        p.last_known_elr.clear();
        p.partition_epoch += 1;
        Some(p)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "replicas": self.replicas,
            "directories": uuids(&self.directories),
            "isr": self.isr,
            "removingReplicas": self.removing_replicas,
            "addingReplicas": self.adding_replicas,
            "elr": self.elr,
            "lastKnownElr": self.last_known_elr,
            "leader": self.leader,
            "leaderRecoveryState": self.leader_recovery_state,
            "leaderEpoch": self.leader_epoch,
            "partitionEpoch": self.partition_epoch,
        })
    }
}

#[cfg(test)]
mod election_tests {
    use super::*;

    #[test]
    fn a_leader_from_the_isr_or_none_is_clean_from_the_elr_counted_apart_else_unclean() {
        let (isr, elr) = ([1, 2], [3]);
        assert_eq!(election_kind(2, &isr, &elr), Election::Clean);
        assert_eq!(election_kind(NO_LEADER, &isr, &elr), Election::Clean);
        assert_eq!(election_kind(3, &isr, &elr), Election::FromElr);
        assert_eq!(election_kind(4, &isr, &elr), Election::Unclean);
        // The last ISR member gone, another replica takes over: unclean.
        assert_eq!(election_kind(2, &[], &[]), Election::Unclean);
    }
}
