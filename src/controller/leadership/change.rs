//! One partition's change, decided as Kafka 4.4's `PartitionChangeBuilder` decides it: a
//! target ISR, replicas or recovery state goes in, a leader is elected (cleanly from the ISR,
//! from the ELR, the last known leader, or uncleanly), the ELR and last known ELR follow
//! KIP-966, a reassignment completes once its replicas are in sync, and the result is one
//! `PartitionChangeRecord` carrying only what changed, or nothing when nothing would.
//!
//! Every list the builder keeps has Java's element order, which the record carries: the ELR
//! is drawn from a `java.util.HashSet` and keeps its iteration order.

use std::collections::BTreeMap;

use crate::controller::java::{hash_map_capacity, hash_order};
use crate::controller::metadata_version::MetadataVersion;
use crate::controller::replication::{PartitionRegistration, NO_LEADER_CHANGE};
use crate::protocol::codec::Uuid;
use crate::protocol::messages::PartitionChangeRecord;
use crate::protocol::records::MetadataRecordAndVersion;

pub use crate::controller::replication::NO_LEADER;
/// `LeaderRecoveryState.RECOVERED` and `RECOVERING`.
pub const RECOVERED: i8 = 0;
pub const RECOVERING: i8 = 1;

/// How a leader may be chosen (`PartitionChangeBuilder.Election`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Election {
    /// The first replica if it may lead, else as `Online`.
    Preferred,
    /// From the ISR (or the ELR when the ISR is empty), keeping a leader that may stay.
    Online,
    /// As `Online`, then any live replica even outside the ISR (data may be lost).
    Unclean,
}

/// Whether a broker may lead the partition now (Java's `LeaderAcceptor`).
pub type Acceptor<'a> = &'a dyn Fn(i32) -> bool;

/// A change to one partition, built up and then decided by [`PartitionChange::build`].
pub struct PartitionChange<'a> {
    partition: &'a PartitionRegistration,
    topic_id: Uuid,
    partition_id: i32,
    acceptable: Acceptor<'a>,
    metadata_version: MetadataVersion,
    min_isr: usize,
    elr_enabled: bool,
    target_isr: Vec<i32>,
    target_replicas: Vec<i32>,
    target_removing: Vec<i32>,
    target_adding: Vec<i32>,
    target_elr: Vec<i32>,
    // No target last known ELR: Kafka's controller always keeps the last known leader there
    // (`useLastKnownLeaderInBalancedRecovery`), which `update_last_known_leader` writes.
    unclean_shutdown_replicas: Vec<i32>,
    election: Election,
    target_recovery_state: i8,
    /// Each replica's directory as the partition has it, with overrides (`setDirectory`).
    target_directories: BTreeMap<i32, Uuid>,
    /// The directory a replica without one gets (`DefaultDirProvider`).
    default_dir: &'a dyn Fn(i32) -> Uuid,
}

/// The leader an election found, and whether it was unclean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Elected {
    node: i32,
    unclean: bool,
}

impl<'a> PartitionChange<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        partition: &'a PartitionRegistration,
        topic_id: Uuid,
        partition_id: i32,
        acceptable: Acceptor<'a>,
        metadata_version: MetadataVersion,
        min_isr: usize,
        elr_enabled: bool,
        default_dir: &'a dyn Fn(i32) -> Uuid,
    ) -> PartitionChange<'a> {
        PartitionChange {
            partition,
            topic_id,
            partition_id,
            acceptable,
            metadata_version,
            min_isr,
            elr_enabled,
            target_isr: partition.isr.clone(),
            target_replicas: partition.replicas.clone(),
            target_removing: partition.removing_replicas.clone(),
            target_adding: partition.adding_replicas.clone(),
            target_elr: partition.elr.clone(),
            unclean_shutdown_replicas: Vec::new(),
            election: Election::Online,
            target_recovery_state: partition.leader_recovery_state,
            target_directories: partition
                .replicas
                .iter()
                .copied()
                .zip(partition.directories.iter().copied())
                .collect(),
            default_dir,
        }
    }

    pub fn target_isr(mut self, isr: Vec<i32>) -> Self {
        self.target_isr = isr;
        self
    }

    pub fn target_replicas(mut self, replicas: Vec<i32>) -> Self {
        self.target_replicas = replicas;
        self
    }

    pub fn target_removing(mut self, removing: Vec<i32>) -> Self {
        self.target_removing = removing;
        self
    }

    pub fn target_adding(mut self, adding: Vec<i32>) -> Self {
        self.target_adding = adding;
        self
    }

    pub fn unclean_shutdown_replicas(mut self, replicas: Vec<i32>) -> Self {
        self.unclean_shutdown_replicas = replicas;
        self
    }

    pub fn election(mut self, election: Election) -> Self {
        self.election = election;
        self
    }

    pub fn target_recovery_state(mut self, state: i8) -> Self {
        self.target_recovery_state = state;
        self
    }

    pub fn directory(mut self, broker: i32, dir: Uuid) -> Self {
        self.target_directories.insert(broker, dir);
        self
    }

    /// The record that makes the change, or `None` when nothing would change.
    pub fn build(mut self) -> Option<MetadataRecordAndVersion> {
        let mut record = PartitionChangeRecord {
            topic_id: self.topic_id,
            partition_id: self.partition_id,
            ..Default::default()
        };
        self.complete_reassignment_if_needed();
        self.populate_target_elr();
        self.try_election(&mut record);
        self.bump_leader_epoch_for_reassignment(&mut record);
        self.update_record_elr(&mut record);
        // With ELR on, the ISR may become empty.
        if record.isr.is_none()
            && (!self.target_isr.is_empty() || self.elr_enabled)
            && self.target_isr != self.partition.isr
        {
            record.isr = Some(self.target_isr.clone());
        }
        self.bump_leader_epoch_for_isr_shrink(&mut record);
        self.update_last_known_leader(&mut record);
        self.set_assignment_changes(&mut record);
        if self.target_recovery_state != self.partition.leader_recovery_state {
            record.leader_recovery_state = self.target_recovery_state;
        }
        if is_no_op(&record) {
            return None;
        }
        Some(MetadataRecordAndVersion::new(
            record,
            self.metadata_version.partition_record_version(),
        ))
    }

    /// `PartitionReassignmentReplicas.maybeCompleteReassignment`: the removed replicas leave
    /// the ISR and the replicas, and the reassignment ends.
    fn complete_reassignment_if_needed(&mut self) {
        if self.target_removing.is_empty() && self.target_adding.is_empty() {
            return;
        }
        let removing = &self.target_removing;
        let mut isr = self.target_isr.clone();
        let mut replicas = self.target_replicas.clone();
        if !removing.is_empty() {
            isr.retain(|r| !removing.contains(r));
            if isr.is_empty() {
                return;
            }
            replicas.retain(|r| !removing.contains(r));
            if replicas.is_empty() {
                return;
            }
        }
        // Complete once every added replica is in sync; a reassignment that shrinks the
        // replica set (Kafka 4.1+, KIP-1102) waits for every remaining replica.
        let in_sync = |l: &[i32]| l.iter().all(|r| isr.contains(r));
        if !in_sync(&self.target_adding) {
            return;
        }
        if self.target_adding.len() < removing.len() && !in_sync(&replicas) {
            return;
        }
        self.target_isr = isr;
        self.target_replicas = replicas;
        self.target_removing.clear();
        self.target_adding.clear();
    }

    /// `maybePopulateTargetElr`: below min ISR, replicas that leave the ISR cleanly become
    /// eligible leaders; at or above it, the ELR is cleared.
    fn populate_target_elr(&mut self) {
        if !self.elr_enabled {
            return;
        }
        if self.target_isr.len() >= self.min_isr {
            self.target_elr.clear();
            return;
        }
        // `new HashSet<>(targetElr)`, then the current ISR added.
        let mut candidates = JavaIntSet::with_initial(&self.target_elr);
        for r in &self.partition.isr {
            candidates.add(*r);
        }
        let isr = &self.target_isr;
        let unclean = &self.unclean_shutdown_replicas;
        self.target_elr = candidates
            .iter()
            .filter(|r| !isr.contains(r) && !unclean.contains(r))
            .collect();
    }

    fn elect_leader(&self) -> Elected {
        let clean = |node| Elected {
            node,
            unclean: false,
        };
        if self.election == Election::Preferred {
            let preferred = self.target_replicas.first().copied().unwrap_or(NO_LEADER);
            if self.is_valid_new_leader(preferred) {
                return clean(preferred);
            }
        }
        if self.is_valid_new_leader(self.partition.leader) {
            return clean(self.partition.leader);
        }
        let skip = usize::from(self.election == Election::Preferred);
        if let Some(r) = self
            .target_replicas
            .iter()
            .skip(skip)
            .find(|r| self.is_valid_new_leader(**r))
        {
            return clean(*r);
        }
        if self.can_elect_last_known_leader() {
            return Elected {
                node: self.partition.last_known_elr[0],
                unclean: true,
            };
        }
        if self.election == Election::Unclean {
            if let Some(r) = self.target_replicas.iter().find(|r| (self.acceptable)(**r)) {
                return Elected {
                    node: *r,
                    unclean: true,
                };
            }
        }
        clean(NO_LEADER)
    }

    /// Whether the last known leader may be elected: ELR on, ISR and ELR empty, the last
    /// known ELR holds just the last leader, and it may lead now.
    fn can_elect_last_known_leader(&self) -> bool {
        self.elr_enabled
            && self.target_elr.is_empty()
            && self.target_isr.is_empty()
            && self.partition.last_known_elr.len() == 1
            && (self.acceptable)(self.partition.last_known_elr[0])
    }

    /// In the target ISR, or in the ELR when the ISR is empty, and acceptable.
    fn is_valid_new_leader(&self, replica: i32) -> bool {
        (self.target_isr.contains(&replica)
            || (self.target_isr.is_empty() && self.target_elr.contains(&replica)))
            && (self.acceptable)(replica)
    }

    fn try_election(&mut self, record: &mut PartitionChangeRecord) {
        let elected = self.elect_leader();
        if elected.node == self.partition.leader {
            return;
        }
        if self.target_elr.contains(&elected.node) {
            self.target_isr = vec![elected.node];
            self.target_elr.retain(|r| *r != elected.node);
        }
        record.leader = elected.node;
        if elected.unclean {
            // An unclean leader is alone in the ISR and recovers its log first.
            record.isr = Some(vec![elected.node]);
            if self.partition.leader_recovery_state != RECOVERING {
                record.leader_recovery_state = RECOVERING;
            }
        }
    }

    /// A replica removed by a reassignment forces a new leader epoch.
    fn bump_leader_epoch_for_reassignment(&self, record: &mut PartitionChangeRecord) {
        if record.leader != NO_LEADER_CHANGE {
            return;
        }
        if !self
            .partition
            .replicas
            .iter()
            .all(|r| self.target_replicas.contains(r))
        {
            record.leader = self.partition.leader;
        }
    }

    /// Before 3.6-IV0 brokers needed a new leader epoch whenever the ISR shrank (KAFKA-15021).
    fn bump_leader_epoch_for_isr_shrink(&self, record: &mut PartitionChangeRecord) {
        if !self
            .metadata_version
            .is_leader_epoch_bump_required_on_isr_shrink()
            || record.leader != NO_LEADER_CHANGE
        {
            return;
        }
        let Some(isr) = &record.isr else { return };
        if !self.partition.isr.iter().all(|r| isr.contains(r)) {
            record.leader = self.partition.leader;
        }
    }

    fn update_record_elr(&mut self, record: &mut PartitionChangeRecord) {
        let clean_election = record.isr.is_none();
        if !clean_election || !self.elr_enabled {
            self.target_elr.clear();
        }
        if self.target_elr != self.partition.elr {
            record.eligible_leader_replicas = Some(self.target_elr.clone());
        }
    }

    /// The last known ELR holds the last leader of a partition left without one (Kafka always
    /// uses it so: `useLastKnownLeaderInBalancedRecovery`), and is cleared once a leader is
    /// elected again.
    fn update_last_known_leader(&self, record: &mut PartitionChangeRecord) {
        if !self.elr_enabled {
            return;
        }
        let p = self.partition;
        if record.leader == NO_LEADER && p.last_known_elr.is_empty() {
            record.last_known_elr = Some(vec![p.leader]);
        } else if record.leader >= 0 && !p.last_known_elr.is_empty() {
            record.last_known_elr = Some(Vec::new());
        }
    }

    fn set_assignment_changes(&self, record: &mut PartitionChangeRecord) {
        let p = self.partition;
        if !self.target_replicas.is_empty() {
            if self.metadata_version.is_directory_assignment_supported() {
                let directories: Vec<Uuid> = self
                    .target_replicas
                    .iter()
                    .map(|r| {
                        self.target_directories
                            .get(r)
                            .copied()
                            .unwrap_or_else(|| (self.default_dir)(*r))
                    })
                    .collect();
                if directories != p.directories {
                    record.directories = Some(directories);
                }
            }
            if self.target_replicas != p.replicas {
                record.replicas = Some(self.target_replicas.clone());
            }
        }
        if self.target_removing != p.removing_replicas {
            record.removing_replicas = Some(self.target_removing.clone());
        }
        if self.target_adding != p.adding_replicas {
            record.adding_replicas = Some(self.target_adding.clone());
        }
    }
}

/// `changeRecordIsNoOp`: a record that changes nothing.
pub fn is_no_op(r: &PartitionChangeRecord) -> bool {
    r.isr.is_none()
        && r.eligible_leader_replicas.is_none()
        && r.last_known_elr.is_none()
        && r.leader == NO_LEADER_CHANGE
        && r.replicas.is_none()
        && r.removing_replicas.is_none()
        && r.adding_replicas.is_none()
        && r.leader_recovery_state == -1
        && r.directories.is_none()
}

/// A `java.util.HashSet<Integer>` as far as its iteration order goes: built from a collection
/// (its initial table sized for it), then grown by `add`.
struct JavaIntSet {
    /// Members in insertion order.
    members: Vec<i32>,
    capacity: usize,
}

impl JavaIntSet {
    /// `new HashSet<>(c)`: a table of `max(c.size() / .75 + 1, 16)`, rounded up to a power
    /// of two, then every element of `c` added.
    fn with_initial(initial: &[i32]) -> JavaIntSet {
        let wanted = ((initial.len() as f32 / 0.75) as usize + 1).max(16);
        let mut set = JavaIntSet {
            members: Vec::new(),
            capacity: wanted.next_power_of_two(),
        };
        for r in initial {
            set.add(*r);
        }
        set
    }

    fn add(&mut self, r: i32) {
        if !self.members.contains(&r) {
            self.members.push(r);
            self.capacity = self.capacity.max(hash_map_capacity(self.members.len()));
        }
    }

    /// The members in the set's iteration order (`Integer.hashCode` is the value).
    fn iter(&self) -> impl Iterator<Item = i32> {
        let entries = self.members.iter().map(|r| (*r, *r)).collect();
        hash_order(entries, self.capacity).into_iter()
    }
}
