//! The simulated network: a time-ordered queue of messages with per-message delay, loss,
//! duplication and directional partitions. Deterministic for a given seed.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use crate::protocol::errors::ErrorCode;
use crate::raft::msg::{CorrelationId, Request, Response};
use crate::raft::time::{Instant, Rng};
use crate::raft::types::NodeId;

/// A message on the wire. `via` is the id the requester addressed (a bootstrap server's
/// synthetic id, or the node id); responses are delivered as coming from `via`.
#[derive(Debug, Clone)]
pub enum Envelope {
    Request {
        from: NodeId,
        to: NodeId,
        via: NodeId,
        corr: CorrelationId,
        request: Request,
    },
    Response {
        from: NodeId,
        to: NodeId,
        via: NodeId,
        corr: CorrelationId,
        response: Response,
    },
    /// The requester's own network layer failed the send (e.g. no common API version); it
    /// learns so as `Input::SendFailed`.
    Failed {
        to: NodeId,
        via: NodeId,
        corr: CorrelationId,
        error: ErrorCode,
    },
}

impl Envelope {
    pub fn endpoints(&self) -> (NodeId, NodeId) {
        match self {
            Envelope::Request { from, to, .. } | Envelope::Response { from, to, .. } => {
                (*from, *to)
            }
            Envelope::Failed { to, .. } => (*to, *to),
        }
    }
}

/// Fault settings; all probabilities per message.
#[derive(Debug, Clone)]
pub struct Faults {
    pub drop: f64,
    pub duplicate: f64,
    pub min_delay_ms: u64,
    pub max_delay_ms: u64,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            drop: 0.0,
            duplicate: 0.0,
            min_delay_ms: 1,
            max_delay_ms: 5,
        }
    }
}

#[derive(Debug, Default)]
pub struct Network {
    queue: BinaryHeap<Reverse<(Instant, u64)>>,
    messages: std::collections::BTreeMap<u64, Envelope>,
    seq: u64,
    /// Directed links that drop everything: (from, to).
    blocked: BTreeSet<(NodeId, NodeId)>,
    pub faults: Faults,
}

impl Network {
    /// Queues a message, applying loss, delay and duplication.
    pub fn send(&mut self, now: Instant, env: Envelope, rng: &mut Rng) {
        let (from, to) = env.endpoints();
        if self.blocked.contains(&(from, to)) || rng.chance(self.faults.drop) {
            return;
        }
        let copies = if rng.chance(self.faults.duplicate) {
            2
        } else {
            1
        };
        for _ in 0..copies {
            let spread = self
                .faults
                .max_delay_ms
                .saturating_sub(self.faults.min_delay_ms)
                + 1;
            let at = now.plus_millis(self.faults.min_delay_ms + rng.below(spread));
            self.seq += 1;
            self.queue.push(Reverse((at, self.seq)));
            self.messages.insert(self.seq, env.clone());
        }
    }

    /// Time of the next delivery.
    pub fn next_delivery(&self) -> Option<Instant> {
        self.queue.peek().map(|Reverse((t, _))| *t)
    }

    /// Pops the next message due at or before `now`. Messages on links blocked since they were
    /// sent are dropped at delivery.
    pub fn pop_due(&mut self, now: Instant) -> Option<Envelope> {
        while let Some(Reverse((t, seq))) = self.queue.peek().copied() {
            if t > now {
                return None;
            }
            self.queue.pop();
            let env = self.messages.remove(&seq).expect("queued message");
            if !self.blocked.contains(&env.endpoints()) {
                return Some(env);
            }
        }
        None
    }

    pub fn block(&mut self, from: NodeId, to: NodeId) {
        self.blocked.insert((from, to));
    }

    /// Cuts `node` off from every node in `others`, both ways.
    pub fn isolate(&mut self, node: NodeId, others: impl IntoIterator<Item = NodeId>) {
        for o in others {
            if o != node {
                self.block(node, o);
                self.block(o, node);
            }
        }
    }

    pub fn heal(&mut self) {
        self.blocked.clear();
    }

    pub fn is_partitioned(&self) -> bool {
        !self.blocked.is_empty()
    }

    /// Drops every queued message to or from `node` (it crashed).
    pub fn drop_node(&mut self, node: NodeId) {
        self.messages.retain(|_, e| {
            let (f, t) = e.endpoints();
            f != node && t != node
        });
        let live: BTreeSet<u64> = self.messages.keys().copied().collect();
        self.queue.retain(|Reverse((_, s))| live.contains(s));
    }
}
