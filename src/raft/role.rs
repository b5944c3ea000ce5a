//! One type per role (Kafka's `EpochState` implementations) and the vote tally. Roles are plain
//! data: every change of role goes through `transition.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::leader::LeaderState;
use super::quorum_state::ElectionState;
use super::time::Instant;
use super::types::{Endpoints, Epoch, NodeId, OffsetAndEpoch, ReplicaKey};

/// The node's role in its current epoch.
#[derive(Debug, Clone)]
pub enum Role {
    Unattached(UnattachedState),
    Prospective(ProspectiveState),
    Candidate(CandidateState),
    Leader(Box<LeaderState>),
    Follower(FollowerState),
    Resigned(ResignedState),
}

/// Epoch known, leader unknown or unreachable (no endpoints). Also "Unattached-voted".
#[derive(Debug, Clone)]
pub struct UnattachedState {
    pub epoch: Epoch,
    /// A leader id known without endpoints (Kafka 4.x); found later via BeginQuorumEpoch/Fetch.
    pub leader_id: Option<NodeId>,
    /// The binding vote cast in `epoch`. Invariant: never the local replica.
    pub voted_key: Option<ReplicaKey>,
    /// `Instant::NEVER` for observers.
    pub election_deadline: Instant,
}

/// KIP-996 pre-vote: asks for non-binding votes in the current epoch. Memory-only.
#[derive(Debug, Clone)]
pub struct ProspectiveState {
    pub epoch: Epoch,
    /// Kept from the state it came from, to go back to following on a lost pre-vote.
    pub leader_id: Option<NodeId>,
    pub leader_endpoints: Endpoints,
    pub voted_key: Option<ReplicaKey>,
    pub election: EpochElection,
    pub election_deadline: Instant,
    /// Started early, because the leader refused a connection or resigned
    /// (`early_election.rs`): at the deadline it renews the round instead of going back to a
    /// leader that is gone, and asks again every voter that has not granted.
    pub leader_gone: bool,
}

/// Voted for itself in `epoch`, collecting binding votes.
#[derive(Debug, Clone)]
pub struct CandidateState {
    pub epoch: Epoch,
    pub election: EpochElection,
    pub election_deadline: Instant,
}

/// Knows the leader of `epoch` and its endpoints; fetches from it.
#[derive(Debug, Clone)]
pub struct FollowerState {
    pub epoch: Epoch,
    /// Invariant: never the local id; `leader_endpoints` non-empty.
    pub leader_id: NodeId,
    pub leader_endpoints: Endpoints,
    /// A vote cast earlier in this epoch, kept (Kafka 4.x).
    pub voted_key: Option<ReplicaKey>,
    /// Voters: no successful Fetch/FetchSnapshot response by then -> Prospective. Observers:
    /// fetch from a bootstrap server instead.
    pub fetch_deadline: Instant,
    /// Set by the first successful fetch in this state; until then pre-votes are granted.
    pub has_fetched_from_leader: bool,
    /// Voters: the leader refused a connection (its process is gone), so pre-vote at this
    /// time, before `fetch_deadline`, and grant pre-votes meanwhile. Cleared by a successful
    /// fetch. Invariant: not after `fetch_deadline`.
    pub early_election_at: Option<Instant>,
    /// The snapshot being downloaded (FetchSnapshot instead of Fetch until done). The bytes
    /// live in the log's download.
    pub fetching_snapshot: Option<OffsetAndEpoch>,
    /// No UpdateRaftVoter (voter) or auto-join request (observer) before this: one per fetch
    /// timeout (Kafka's update-voter-set period).
    pub voter_update_at: Instant,
    /// This leader acknowledged our UpdateRaftVoter (kraft.version 0 sends one per leader).
    pub has_updated_leader: bool,
}

/// A former leader of `epoch` that stopped leading. Memory-only.
#[derive(Debug, Clone)]
pub struct ResignedState {
    pub epoch: Epoch,
    pub election_deadline: Instant,
    /// Voters that have not yet acknowledged EndQuorumEpoch.
    pub unacked_voters: BTreeSet<NodeId>,
    /// Other voters by descending fetch offset (sent as PreferredCandidates).
    pub preferred_successors: Vec<ReplicaKey>,
}

impl Role {
    pub fn epoch(&self) -> Epoch {
        match self {
            Role::Unattached(s) => s.epoch,
            Role::Prospective(s) => s.epoch,
            Role::Candidate(s) => s.epoch,
            Role::Leader(s) => s.epoch,
            Role::Follower(s) => s.epoch,
            Role::Resigned(s) => s.epoch,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Role::Unattached(_) => "Unattached",
            Role::Prospective(_) => "Prospective",
            Role::Candidate(_) => "Candidate",
            Role::Leader(_) => "Leader",
            Role::Follower(_) => "Follower",
            Role::Resigned(_) => "Resigned",
        }
    }

    /// The election state this role persists (or would, for memory-only roles).
    pub fn election_state(&self, local: Option<ReplicaKey>) -> ElectionState {
        let local_id = local.map(|k| k.id);
        match self {
            Role::Unattached(s) => ElectionState {
                epoch: s.epoch,
                leader_id: s.leader_id,
                voted_key: s.voted_key,
            },
            Role::Prospective(s) => ElectionState {
                epoch: s.epoch,
                leader_id: s.leader_id,
                voted_key: s.voted_key,
            },
            Role::Candidate(s) => ElectionState {
                epoch: s.epoch,
                leader_id: None,
                voted_key: local,
            },
            Role::Leader(s) => ElectionState {
                epoch: s.epoch,
                leader_id: local_id,
                voted_key: None,
            },
            Role::Follower(s) => ElectionState {
                epoch: s.epoch,
                leader_id: Some(s.leader_id),
                voted_key: s.voted_key,
            },
            Role::Resigned(s) => ElectionState {
                epoch: s.epoch,
                leader_id: local_id,
                voted_key: None,
            },
        }
    }

    /// The leader id this role knows, if any.
    pub fn leader_id(&self, local_id: Option<NodeId>) -> Option<NodeId> {
        match self {
            Role::Unattached(s) => s.leader_id,
            Role::Prospective(s) => s.leader_id,
            Role::Candidate(_) => None,
            Role::Leader(_) | Role::Resigned(_) => local_id,
            Role::Follower(s) => Some(s.leader_id),
        }
    }

    pub fn voted_key(&self) -> Option<ReplicaKey> {
        match self {
            Role::Unattached(s) => s.voted_key,
            Role::Prospective(s) => s.voted_key,
            Role::Follower(s) => s.voted_key,
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Role::Unattached(s) => {
                write!(f, "Unattached(e{}", s.epoch)?;
                if let Some(l) = s.leader_id {
                    write!(f, " leader={l}")?;
                }
                if let Some(v) = s.voted_key {
                    write!(f, " voted={v}")?;
                }
                write!(f, ")")
            }
            Role::Prospective(s) => write!(f, "Prospective(e{})", s.epoch),
            Role::Candidate(s) => write!(f, "Candidate(e{})", s.epoch),
            Role::Leader(s) => write!(f, "Leader(e{})", s.epoch),
            Role::Follower(s) => write!(f, "Follower(e{} leader={})", s.epoch, s.leader_id),
            Role::Resigned(s) => write!(f, "Resigned(e{})", s.epoch),
        }
    }
}

/// Kafka's `EpochElection`: the votes of one (pre-)election among a fixed voter set.
/// Invariant: the local voter is recorded as granted. A grant, once recorded, is final for the
/// round; a refusal may expire (`early_election.rs`), and the voter is then asked again.
#[derive(Debug, Clone)]
pub struct EpochElection {
    votes: BTreeMap<NodeId, Option<bool>>,
}

impl EpochElection {
    pub fn new(voters: impl IntoIterator<Item = NodeId>, local: NodeId) -> Self {
        let mut votes: BTreeMap<NodeId, Option<bool>> =
            voters.into_iter().map(|id| (id, None)).collect();
        votes.insert(local, Some(true));
        EpochElection { votes }
    }
    /// Records a vote; false if the voter is unknown or already voted otherwise.
    pub fn record(&mut self, voter: NodeId, granted: bool) -> bool {
        match self.votes.get_mut(&voter) {
            Some(v @ None) => {
                *v = Some(granted);
                true
            }
            Some(Some(prev)) => *prev == granted,
            None => false,
        }
    }
    fn majority(&self) -> usize {
        self.votes.len() / 2 + 1
    }
    pub fn granted(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.votes
            .iter()
            .filter(|(_, v)| **v == Some(true))
            .map(|(id, _)| *id)
    }
    /// A majority granted.
    pub fn is_won(&self) -> bool {
        self.granted().count() >= self.majority()
    }
    /// A majority can no longer be reached.
    pub fn is_lost(&self) -> bool {
        let rejected = self.votes.values().filter(|v| **v == Some(false)).count();
        self.votes.len() - rejected < self.majority()
    }
    /// The answer `voter` gave (`None`: none yet, or not a voter).
    pub fn vote_of(&self, voter: NodeId) -> Option<bool> {
        self.votes.get(&voter).copied().flatten()
    }
    /// Forgets `voter`'s refusal, if it refused, to ask it again (a grant stays).
    pub fn forget_refusal(&mut self, voter: NodeId) {
        if let Some(v @ Some(false)) = self.votes.get_mut(&voter) {
            *v = None;
        }
    }
    /// Forgets every refusal, to ask those voters again.
    pub fn forget_refusals(&mut self) {
        for v in self.votes.values_mut().filter(|v| **v == Some(false)) {
            *v = None;
        }
    }
    pub fn unrecorded(&self) -> Vec<NodeId> {
        self.votes
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(id, _)| *id)
            .collect()
    }
}
