//! The simulated network: a time-ordered queue of messages with per-message delay, loss,
//! duplication and directional partitions. Deterministic for a given seed. With fixed delays
//! (scenario scripts) it draws nothing: every link has its delay, nothing is lost unless a
//! script drops it, and a held link keeps its messages until the script delivers them.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

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
    /// The requester's connection to `via` was refused (`Input::ConnectionRefused`): the node
    /// is down (`SimOptions::refused_connections`) or the link refuses (`Network::refuse`).
    Refused {
        to: NodeId,
        via: NodeId,
        corr: CorrelationId,
    },
}

impl Envelope {
    pub fn endpoints(&self) -> (NodeId, NodeId) {
        match self {
            Envelope::Request { from, to, .. } | Envelope::Response { from, to, .. } => {
                (*from, *to)
            }
            Envelope::Failed { to, .. } | Envelope::Refused { to, .. } => (*to, *to),
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

/// Delays of a network without randomness, in milliseconds.
#[derive(Debug, Clone, Default)]
pub struct FixedDelays {
    pub default_ms: u64,
    /// Directed links with a delay of their own: (from, to) -> ms.
    pub links: BTreeMap<(NodeId, NodeId), u64>,
}

#[derive(Debug, Default)]
pub struct Network {
    queue: BinaryHeap<Reverse<(Instant, u64)>>,
    messages: BTreeMap<u64, Envelope>,
    seq: u64,
    /// Directed links that drop everything: (from, to).
    blocked: BTreeSet<(NodeId, NodeId)>,
    /// Directed links whose connections are refused, as a firewall that resets them would:
    /// (from, to). Requests on them come back as `Envelope::Refused`.
    refusing: BTreeSet<(NodeId, NodeId)>,
    pub faults: Faults,
    /// When set, `faults` and the generator are not used.
    fixed: Option<FixedDelays>,
    /// Directed links whose messages wait in `held` when due.
    held_links: BTreeSet<(NodeId, NodeId)>,
    /// Due messages of held links and when they fell due, in that order.
    held: Vec<(Instant, Envelope)>,
}

impl Network {
    /// From now on every message takes `default_ms` and none is lost or duplicated at random.
    pub fn use_fixed_delays(&mut self, default_ms: u64) {
        self.fixed = Some(FixedDelays {
            default_ms,
            links: BTreeMap::new(),
        });
    }

    /// With fixed delays: the delay of one directed link, or (`None`) of every link.
    pub fn set_delay(&mut self, link: Option<(NodeId, NodeId)>, ms: u64) -> Result<(), String> {
        let fixed = self
            .fixed
            .as_mut()
            .ok_or("delays are random in a seeded network")?;
        match link {
            Some(link) => {
                fixed.links.insert(link, ms);
            }
            None => {
                fixed.default_ms = ms;
                fixed.links.clear();
            }
        }
        Ok(())
    }

    /// Queues a message, applying loss, delay and duplication.
    pub fn send(&mut self, now: Instant, env: Envelope, rng: &mut Rng) {
        let (from, to) = env.endpoints();
        if let Some(fixed) = &self.fixed {
            let delay = fixed.links.get(&(from, to)).copied();
            let at = now.plus_millis(delay.unwrap_or(fixed.default_ms));
            if !self.blocked.contains(&(from, to)) {
                self.enqueue(at, env);
            }
            return;
        }
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
            self.enqueue(at, env.clone());
        }
    }

    fn enqueue(&mut self, at: Instant, env: Envelope) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq)));
        self.messages.insert(self.seq, env);
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
            if self.held_links.contains(&env.endpoints()) {
                self.held.push((t, env));
            } else if !self.blocked.contains(&env.endpoints()) {
                return Some(env);
            }
        }
        None
    }

    /// Whether a partition drops everything on the directed link `from -> to`.
    pub fn is_blocked(&self, from: NodeId, to: NodeId) -> bool {
        self.blocked.contains(&(from, to))
    }

    /// Whether connections from `from` to `to` are refused.
    pub fn is_refusing(&self, from: NodeId, to: NodeId) -> bool {
        self.refusing.contains(&(from, to))
    }

    /// Refuses connections from `from` to `to` until `heal`.
    pub fn refuse(&mut self, from: NodeId, to: NodeId) {
        self.refusing.insert((from, to));
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

    /// Lifts every partition and hold; held messages are due again at once.
    pub fn heal(&mut self) {
        self.blocked.clear();
        self.refusing.clear();
        self.held_links.clear();
        for (due, env) in std::mem::take(&mut self.held) {
            self.enqueue(due, env);
        }
    }

    /// Messages on `link` wait when due, until `take_link` or `heal`.
    pub fn hold(&mut self, link: (NodeId, NodeId)) {
        self.held_links.insert(link);
    }

    /// Removes every message on the directed `link`, held or in flight, in delivery order.
    pub fn take_link(&mut self, link: (NodeId, NodeId)) -> Vec<Envelope> {
        let (taken, held): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|(_, e)| e.endpoints() == link);
        self.held = held;
        let mut taken: Vec<Envelope> = taken.into_iter().map(|(_, e)| e).collect();
        let mut in_flight: Vec<(Instant, u64)> = self
            .queue
            .iter()
            .map(|Reverse(k)| *k)
            .filter(|(_, seq)| self.messages[seq].endpoints() == link)
            .collect();
        in_flight.sort();
        let seqs: BTreeSet<u64> = in_flight.iter().map(|(_, s)| *s).collect();
        self.queue.retain(|Reverse((_, s))| !seqs.contains(s));
        taken.extend(
            in_flight
                .iter()
                .filter_map(|(_, s)| self.messages.remove(s)),
        );
        taken
    }

    pub fn is_partitioned(&self) -> bool {
        !self.blocked.is_empty() || !self.refusing.is_empty()
    }

    /// Drops every queued message to or from `node` (it crashed).
    pub fn drop_node(&mut self, node: NodeId) {
        let unrelated = |e: &Envelope| {
            let (f, t) = e.endpoints();
            f != node && t != node
        };
        self.held.retain(|(_, e)| unrelated(e));
        self.messages.retain(|_, e| unrelated(e));
        let live: BTreeSet<u64> = self.messages.keys().copied().collect();
        self.queue.retain(|Reverse((_, s))| live.contains(s));
    }
}
