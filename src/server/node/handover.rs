//! Until kraftd serves everything an active controller serves (ACLs, SCRAM, delegation tokens
//! and reassignments are still answered NOT_CONTROLLER), a kraftd that leads a mixed quorum
//! leaves brokers and admin tools without part of their controller. So when brokers need a
//! controller (some are registered in the committed log, or one asked this epoch) a leading
//! kraftd hands leadership over at once (EndQuorumEpoch), naming the voters whose connections
//! said they run Java (`ClientSoftwareName` "apache-kafka-java") as the first successors.
//! With no Java voter known it keeps leading (resigning would only pass the problem to another
//! kraftd), says so once per epoch, and still hands over if a Java voter connects later.

use std::collections::{BTreeMap, BTreeSet};

use crate::raft::{Epoch, NodeId};

/// The `ClientSoftwareName` of Kafka's Java clients, controllers' raft clients included.
pub const JAVA_CLIENT_SOFTWARE: &str = "apache-kafka-java";

/// What the leader should do about brokers that need an active controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handover {
    /// Nothing: not leading, no broker needs a controller, or already handled this epoch.
    Stay,
    /// Resign, naming these voters first.
    Resign { preferred: Vec<NodeId> },
    /// Brokers need a controller and no voter known to serve them exists: warn once.
    Strand,
}

/// What the handover decision reads, gathered by the node loop.
#[derive(Debug, Default)]
pub struct HandoverState {
    /// Each peer's software, as its latest connection named it.
    software: BTreeMap<NodeId, String>,
    /// The epoch in which a broker or admin client last asked for the active controller.
    wanted_in: Option<Epoch>,
    /// The epoch this node resigned in.
    resigned: Option<Epoch>,
    /// The epoch it warned in that no Java voter is known (one may still show up).
    warned: Option<Epoch>,
}

impl HandoverState {
    /// Notes the software a replica's connection named.
    pub fn saw_software(&mut self, replica: NodeId, software: &str) {
        if self.software.get(&replica).map(String::as_str) != Some(software) {
            self.software.insert(replica, software.to_string());
        }
    }

    /// A broker or admin client asked for the active controller during `epoch`.
    pub fn wanted(&mut self, epoch: Epoch) {
        self.wanted_in = Some(epoch);
    }

    /// Whether `id` is known to run a Java controller.
    pub fn is_java(&self, id: NodeId) -> bool {
        self.software.get(&id).map(String::as_str) == Some(JAVA_CLIENT_SOFTWARE)
    }

    /// Decides for a leader of `epoch` whose activation is done (the epoch's LeaderChange is
    /// committed), with `brokers` registered and these `voters` (itself included).
    pub fn decide(
        &mut self,
        epoch: Epoch,
        local: NodeId,
        brokers: usize,
        voters: &BTreeSet<NodeId>,
    ) -> Handover {
        let needed = brokers > 0 || self.wanted_in == Some(epoch);
        if !needed || self.resigned == Some(epoch) {
            return Handover::Stay;
        }
        let preferred: Vec<NodeId> = voters
            .iter()
            .copied()
            .filter(|&v| v != local && self.is_java(v))
            .collect();
        if !preferred.is_empty() {
            self.resigned = Some(epoch);
            Handover::Resign { preferred }
        } else if self.warned != Some(epoch) {
            self.warned = Some(epoch);
            Handover::Strand
        } else {
            Handover::Stay
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voters() -> BTreeSet<NodeId> {
        [1, 2, 3].into_iter().collect()
    }

    #[test]
    fn a_leader_with_registered_brokers_hands_over_to_the_java_voters() {
        let mut h = HandoverState::default();
        h.saw_software(2, "kraftd");
        h.saw_software(3, JAVA_CLIENT_SOFTWARE);
        assert_eq!(
            h.decide(5, 1, 3, &voters()),
            Handover::Resign { preferred: vec![3] }
        );
        // Once per epoch.
        assert_eq!(h.decide(5, 1, 3, &voters()), Handover::Stay);
        assert_eq!(
            h.decide(7, 1, 3, &voters()),
            Handover::Resign { preferred: vec![3] }
        );
    }

    #[test]
    fn a_broker_request_in_this_epoch_counts_before_any_broker_is_registered() {
        let mut h = HandoverState::default();
        h.saw_software(2, JAVA_CLIENT_SOFTWARE);
        assert_eq!(h.decide(4, 1, 0, &voters()), Handover::Stay);
        h.wanted(3);
        assert_eq!(
            h.decide(4, 1, 0, &voters()),
            Handover::Stay,
            "an older epoch's ask"
        );
        h.wanted(4);
        assert_eq!(
            h.decide(4, 1, 0, &voters()),
            Handover::Resign { preferred: vec![2] }
        );
    }

    #[test]
    fn without_a_java_voter_the_leader_stays_and_warns_once() {
        let mut h = HandoverState::default();
        h.saw_software(2, "kraftd");
        h.saw_software(3, "kraftd");
        assert_eq!(h.decide(2, 1, 1, &voters()), Handover::Strand);
        assert_eq!(h.decide(2, 1, 1, &voters()), Handover::Stay);
        // An observer that runs Java is no successor: only voters are.
        h.saw_software(9, JAVA_CLIENT_SOFTWARE);
        assert_eq!(h.decide(3, 1, 1, &voters()), Handover::Strand);
        // A Java voter that connects later in the epoch still gets leadership.
        h.saw_software(3, JAVA_CLIENT_SOFTWARE);
        assert_eq!(
            h.decide(3, 1, 1, &voters()),
            Handover::Resign { preferred: vec![3] }
        );
    }

    #[test]
    fn software_follows_the_latest_connection() {
        let mut h = HandoverState::default();
        h.saw_software(2, JAVA_CLIENT_SOFTWARE);
        // The Java controller on node 2 was replaced by kraftd on its data directory.
        h.saw_software(2, "kraftd");
        assert_eq!(h.decide(1, 1, 1, &voters()), Handover::Strand);
    }
}
