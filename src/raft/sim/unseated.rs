//! The election-timing property (issue #14): no voter becomes a candidate while a leader has
//! reached a majority for two fetch timeouts. Pre-vote promises it (a voter that fetches from
//! a live leader refuses pre-votes), and kraftd's early election must keep it: it starts only
//! on a refused connection, so a leader cut off by refusals counts as not reaching that voter.
//!
//! "Reaching" is about the links: the leader is up, holds the highest epoch of the live nodes,
//! and the links to a majority of its voters are neither cut nor refusing, on a network that
//! loses nothing (with loss a follower may miss every fetch and time out, as in Kafka). The
//! property holds only where pre-vote does: not where Vote v1 is all a quorum speaks.

use std::collections::BTreeMap;

use super::Cluster;
use crate::raft::time::Instant;
use crate::raft::types::{Epoch, NodeId};

#[derive(Debug, Default)]
pub(super) struct HealthyLeaders {
    /// Leader -> (its epoch, since when it has reached a majority without a break).
    since: BTreeMap<NodeId, (Epoch, Instant)>,
}

impl Cluster {
    /// Records which leaders reach a majority now; called after every event and fault.
    pub(super) fn observe_leader_health(&mut self) {
        let lossless = self.net.faults.drop == 0.0;
        let max_epoch = self
            .nodes
            .values()
            .filter_map(|n| n.raft.as_ref().map(|r| r.epoch()))
            .max();
        let mut healthy = BTreeMap::new();
        for (&id, node) in &self.nodes {
            let Some(r) = node.raft.as_ref() else {
                continue;
            };
            if !lossless || !r.is_leader() || Some(r.epoch()) != max_epoch {
                continue;
            }
            let voters = r.voters();
            let reached = voters
                .ids()
                .filter(|&v| v == id || self.reachable(id, v))
                .count();
            if reached >= voters.majority() {
                let since = match self.healthy_leaders.since.get(&id) {
                    Some((e, t)) if *e == r.epoch() => *t,
                    _ => self.now,
                };
                healthy.insert(id, (r.epoch(), since));
            }
        }
        self.healthy_leaders.since = healthy;
    }

    /// `candidate` became a candidate in `epoch`: no leader of an earlier epoch may have been
    /// reaching a majority for two fetch timeouts.
    pub(super) fn check_no_leader_unseated(
        &self,
        candidate: NodeId,
        epoch: Epoch,
    ) -> Result<(), String> {
        if self.opts.wire.as_ref().is_some_and(|w| w.vote < 2) {
            return Ok(());
        }
        let window = 2 * self.opts.fetch_timeout.as_millis() as u64;
        for (leader, (leader_epoch, since)) in &self.healthy_leaders.since {
            if *leader_epoch < epoch && self.now.saturating_since(*since) >= window {
                return Err(format!(
                    "t={}: n{candidate} became a candidate in e{epoch} while n{leader}, leader of \
                     e{leader_epoch}, has reached a majority since t={since}",
                    self.now
                ));
            }
        }
        Ok(())
    }
}
