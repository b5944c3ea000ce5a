//! What the liveness phase requires once every fault is healed: one leader, followed by every
//! node with the leader's log and high watermark, except the nodes Kafka itself cannot bring
//! back (`stranded_by_a_removed_voter`).

use std::collections::BTreeSet;

use super::Cluster;
use crate::raft::log::RaftLog;
use crate::raft::role::Role;
use crate::raft::types::NodeId;

impl Cluster {
    /// `None` once one leader is followed by every live voter and every live node's log and
    /// high watermark equal the leader's; else what is still missing.
    pub fn not_converged(&self) -> Option<String> {
        self.not_converged_but(&BTreeSet::new())
    }

    /// As `not_converged`, but the nodes of `exempt` may be anywhere (they must be up).
    pub fn not_converged_but(&self, exempt: &BTreeSet<NodeId>) -> Option<String> {
        let Some(l) = self.leader() else {
            return Some("no leader".into());
        };
        let leader = self.raft(l).expect("up");
        let (epoch, end) = (leader.epoch(), leader.log().end_offset());
        if leader.high_watermark() != Some(end) {
            return Some(format!(
                "leader n{l} HW {:?} below its end offset {end}",
                leader.high_watermark()
            ));
        }
        for n in self.nodes.values() {
            let Some(r) = n.raft.as_ref() else {
                return Some(format!("n{} is down", n.id));
            };
            if n.id == l || exempt.contains(&n.id) {
                continue;
            }
            match r.role() {
                Role::Follower(f) if f.epoch == epoch && f.leader_id == l => {}
                other => {
                    return Some(format!(
                        "n{} is {other}, not a follower of n{l} in e{epoch}",
                        n.id
                    ))
                }
            }
            if r.log().end_offset() != end || r.high_watermark() != Some(end) {
                return Some(format!(
                    "n{} at end {} HW {:?}, leader at {end}",
                    n.id,
                    r.log().end_offset(),
                    r.high_watermark()
                ));
            }
        }
        None
    }

    /// Whether the quorum cannot pre-vote: Vote is negotiated below v2, as with Kafka 3.9
    /// peers (a pre-vote then fails with UNSUPPORTED_VERSION and the node becomes a candidate).
    pub fn without_pre_vote(&self) -> bool {
        self.opts.wire.as_ref().is_some_and(|w| w.vote < 2)
    }

    /// The nodes that Kafka, in a quorum without pre-vote (KIP-996), leaves unable to follow
    /// the leader for good; empty with pre-vote or when there are none.
    ///
    /// The source is a removed voter that never learned of its removal: outside the leader's
    /// voter set, it still counts itself a voter in the latest voter set of its own log (one
    /// only it holds, appended when it led), and that set shares no voter with the leader's.
    /// It campaigns for ever: each candidacy raises its epoch past the leader's, and its Vote
    /// requests reach only nodes outside the leader's voter set. Those move to its epoch
    /// (`KafkaRaftClient.handleVoteRequest` does so for any replica before looking at the
    /// vote) and know no leader there to tell it about. Such a node, at an epoch above the
    /// leader's, cannot follow either: the leader answers its fetches UNKNOWN_LEADER_EPOCH,
    /// which it ignores (`maybeHandleCommonResponse`), and nothing raises the leader's epoch,
    /// since the leader and its voters hear from neither node but through fetches. Kafka's
    /// operations guide says to shut a controller down before removing it until pre-vote is
    /// available; with pre-vote the removed voter asks in its own epoch, and an answer from a
    /// follower names the leader (tests/raft_scenarios/a_removed_voter_*).
    ///
    /// Stranded: every such removed voter above the leader's epoch, and every other node
    /// outside the leader's voter set that counts itself no voter, at an epoch above the
    /// leader's and no higher than the removed voters reached.
    pub fn stranded_by_a_removed_voter(&self) -> BTreeSet<NodeId> {
        let mut stranded = BTreeSet::new();
        if !self.without_pre_vote() {
            return stranded;
        }
        let Some(leader) = self.leader().and_then(|l| self.raft(l)) else {
            return stranded;
        };
        let (epoch, voters) = (leader.epoch(), leader.voters());
        let outside: Vec<(NodeId, _)> = self
            .nodes
            .values()
            .filter_map(|n| n.raft.as_ref().map(|r| (n.id, r)))
            .filter(|(id, r)| voters.node(*id).is_none() && r.epoch() > epoch)
            .collect();
        let mut highest = None;
        for (id, r) in &outside {
            if r.is_voter() && r.voters().ids().all(|v| voters.node(v).is_none()) {
                stranded.insert(*id);
                highest = highest.max(Some(r.epoch()));
            }
        }
        let Some(highest) = highest else {
            return stranded;
        };
        for (id, r) in &outside {
            if !r.is_voter() && r.epoch() <= highest {
                stranded.insert(*id);
            }
        }
        stranded
    }
}
