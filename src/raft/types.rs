//! Kafka's KRaft vocabulary: ids, epochs, offsets, replica keys, endpoints and voter sets.

use std::collections::BTreeMap;
use std::fmt;

use crate::protocol::codec::Uuid;

/// A replica's `node.id`. Negative values are sentinels on the wire (−1 = none; −2, −3, … are the
/// synthetic ids of `controller.quorum.bootstrap.servers` entries).
pub type NodeId = i32;
/// A leader epoch (≥ 0; epoch 0 never has a leader).
pub type Epoch = i32;
pub use crate::protocol::records::Offset;

pub use crate::log::snapshot::OffsetAndEpoch;

pub use crate::log::quorum_state::ReplicaKey;

/// The zero Uuid means "absent" on the wire.
pub fn uuid_opt(u: Uuid) -> Option<Uuid> {
    if u == Uuid::ZERO {
        None
    } else {
        Some(u)
    }
}

/// A host and port.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostPort {
    pub host: String,
    pub port: u16,
}

impl HostPort {
    pub fn new(host: impl Into<String>, port: u16) -> Self {
        HostPort {
            host: host.into(),
            port,
        }
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// Kafka's `Endpoints`: listener name -> address. Names are kept upper-cased, as Java's
/// `ListenerName.normalised` does when it reads them from the wire or a VotersRecord.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Endpoints(BTreeMap<String, HostPort>);

impl Endpoints {
    pub fn empty() -> Self {
        Endpoints::default()
    }
    pub fn single(listener: &str, address: HostPort) -> Self {
        let mut e = Endpoints::default();
        e.insert(listener, address);
        e
    }
    pub fn insert(&mut self, listener: &str, address: HostPort) {
        self.0.insert(listener.to_ascii_uppercase(), address);
    }
    pub fn get(&self, listener: &str) -> Option<&HostPort> {
        self.0.get(&listener.to_ascii_uppercase())
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn iter(&self) -> impl Iterator<Item = (&String, &HostPort)> {
        self.0.iter()
    }
}

/// One voter: its key, listeners and supported `kraft.version` range (Kafka's `VoterNode`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VoterNode {
    pub key: ReplicaKey,
    pub listeners: Endpoints,
    /// Supported kraft.version range (min, max). Static voters: (0, 0).
    pub supported_kraft_version: (i16, i16),
}

/// Kafka's `VoterSet`. Invariant: keyed by node id, so at most one entry per id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct VoterSet {
    voters: BTreeMap<NodeId, VoterNode>,
}

impl VoterSet {
    pub fn new(nodes: impl IntoIterator<Item = VoterNode>) -> Self {
        VoterSet {
            voters: nodes.into_iter().map(|n| (n.key.id, n)).collect(),
        }
    }

    /// The static voter set of `controller.quorum.voters` (kraft.version 0): no directory ids,
    /// one endpoint each on the default listener, supported range (0, 0).
    pub fn from_static(listener: &str, voters: &[(NodeId, HostPort)]) -> Self {
        VoterSet::new(voters.iter().map(|(id, addr)| VoterNode {
            key: ReplicaKey::of_id(*id),
            listeners: Endpoints::single(listener, addr.clone()),
            supported_kraft_version: (0, 0),
        }))
    }

    pub fn is_empty(&self) -> bool {
        self.voters.is_empty()
    }
    pub fn len(&self) -> usize {
        self.voters.len()
    }
    /// ⌊n/2⌋ + 1.
    pub fn majority(&self) -> usize {
        self.voters.len() / 2 + 1
    }
    pub fn ids(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.voters.keys().copied()
    }
    pub fn nodes(&self) -> impl Iterator<Item = &VoterNode> {
        self.voters.values()
    }
    pub fn node(&self, id: NodeId) -> Option<&VoterNode> {
        self.voters.get(&id)
    }
    /// Is `replica` a voter (Kafka's `isVoter`: id equal, and the entry's directory id absent or
    /// equal)?
    pub fn is_voter(&self, replica: &ReplicaKey) -> bool {
        self.voters
            .get(&replica.id)
            .is_some_and(|n| n.key.entry_matches(replica))
    }
    pub fn is_only_voter(&self, replica: &ReplicaKey) -> bool {
        self.voters.len() == 1 && self.is_voter(replica)
    }
    /// The voter's address on `listener`, if the voter and the listener are known.
    pub fn address(&self, id: NodeId, listener: &str) -> Option<&HostPort> {
        self.voters.get(&id).and_then(|n| n.listeners.get(listener))
    }
    /// This set with `node` as the entry of its id (Kafka's `addVoter` / `updateVoter` once
    /// checked).
    pub fn with_node(&self, node: VoterNode) -> VoterSet {
        let mut voters = self.voters.clone();
        voters.insert(node.key.id, node);
        VoterSet { voters }
    }

    /// This set without the entry of `id` (Kafka's `removeVoter` once checked).
    pub fn without(&self, id: NodeId) -> VoterSet {
        let mut voters = self.voters.clone();
        voters.remove(&id);
        VoterSet { voters }
    }

    pub fn listeners(&self, id: NodeId) -> Endpoints {
        self.voters
            .get(&id)
            .map(|n| n.listeners.clone())
            .unwrap_or_default()
    }
}
