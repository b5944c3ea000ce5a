//! The control-record state machine (Kafka's `KRaftControlRecordStateMachine` with
//! `VoterSetHistory`): which voter set and kraft.version hold at each offset, from the latest
//! snapshot (or bootstrap checkpoint) plus every control batch appended after it.

use super::log::{Batch, ControlRecord, Records, SnapshotHeader};
use super::types::{Endpoints, HostPort, Offset, ReplicaKey, VoterNode, VoterSet};
use crate::protocol::messages::voters_record::{
    Endpoint, KRaftVersionFeature, Voter, VotersRecord,
};

/// Voter-set and kraft.version history.
///
/// Invariants: both histories are sorted by strictly increasing offset; offsets are >= −1
/// (−1 = loaded from the bootstrap checkpoint at (0, 0)).
#[derive(Debug, Clone)]
pub struct ControlState {
    /// `controller.quorum.voters`; used only while `voter_history` is empty.
    static_voters: VoterSet,
    voter_history: Vec<(Offset, VoterSet)>,
    kraft_history: Vec<(Offset, i16)>,
}

impl ControlState {
    pub fn new(static_voters: VoterSet) -> Self {
        ControlState {
            static_voters,
            voter_history: Vec::new(),
            kraft_history: Vec::new(),
        }
    }

    /// The voter set in force now: the last one recorded (committed or not), else the static one.
    pub fn latest_voters(&self) -> &VoterSet {
        self.voter_history
            .last()
            .map_or(&self.static_voters, |(_, v)| v)
    }

    /// Offset of the latest VotersRecord (−1 for the bootstrap checkpoint), if any.
    pub fn latest_voters_offset(&self) -> Option<Offset> {
        self.voter_history.last().map(|(o, _)| *o)
    }

    /// The voter set in force at `offset`.
    pub fn voters_at(&self, offset: Offset) -> &VoterSet {
        self.voter_history
            .iter()
            .rev()
            .find(|(o, _)| *o <= offset)
            .map_or(&self.static_voters, |(_, v)| v)
    }

    /// The voter sets recorded since the latest snapshot (the one before it kept), by offset.
    pub fn voter_history(&self) -> &[(Offset, VoterSet)] {
        &self.voter_history
    }

    /// The kraft.version in force now (0 when never recorded).
    pub fn kraft_version(&self) -> i16 {
        self.kraft_history.last().map_or(0, |(_, v)| *v)
    }

    pub fn kraft_version_at(&self, offset: Offset) -> i16 {
        self.kraft_history
            .iter()
            .rev()
            .find(|(o, _)| *o <= offset)
            .map_or(0, |(_, v)| *v)
    }

    /// Resets the history to what a snapshot's header batch holds, recorded at
    /// `end offset − 1` (Kafka's `KRaftControlRecordStateMachine` overrides the offset so).
    pub fn load_snapshot(&mut self, s: &SnapshotHeader) {
        self.voter_history.clear();
        self.kraft_history.clear();
        let at = s.id.offset - 1;
        if s.kraft_version > 0 {
            self.kraft_history.push((at, s.kraft_version));
        }
        if let Some(v) = &s.voters {
            self.voter_history.push((at, voter_set_from_record(v)));
        }
    }

    /// Scans an appended batch (leader or follower); uncommitted records take effect at once.
    pub fn apply_batch(&mut self, batch: &Batch) {
        let Records::Control(records) = &batch.records else {
            return;
        };
        for (i, r) in records.iter().enumerate() {
            let offset = batch.base_offset + i as Offset;
            match r {
                ControlRecord::Voters(v) => {
                    self.voter_history.push((offset, voter_set_from_record(v)))
                }
                ControlRecord::KRaftVersion(k) => {
                    self.kraft_history.push((offset, k.k_raft_version))
                }
                _ => {}
            }
        }
    }

    /// Forgets entries at and after `offset` (follower truncation).
    pub fn truncate_from(&mut self, offset: Offset) {
        self.voter_history.retain(|(o, _)| *o < offset);
        self.kraft_history.retain(|(o, _)| *o < offset);
    }

    /// Forgets entries older than needed at `offset` (log cleaning), keeping the last one before.
    pub fn trim_before(&mut self, offset: Offset) {
        fn trim<T>(h: &mut Vec<(Offset, T)>, offset: Offset) {
            let below = h.iter().filter(|(o, _)| *o < offset).count();
            if below > 1 {
                h.drain(..below - 1);
            }
        }
        trim(&mut self.voter_history, offset);
        trim(&mut self.kraft_history, offset);
    }
}

/// VotersRecord -> VoterSet (listener names upper-cased, as Java's `ListenerName.normalised`).
pub fn voter_set_from_record(r: &VotersRecord) -> VoterSet {
    VoterSet::new(r.voters.iter().map(|v| {
        let mut listeners = Endpoints::empty();
        for e in &v.endpoints {
            listeners.insert(&e.name, HostPort::new(e.host.clone(), e.port));
        }
        VoterNode {
            key: ReplicaKey::from_wire(v.voter_id, v.voter_directory_id),
            listeners,
            supported_kraft_version: (
                v.k_raft_version_feature.min_supported_version,
                v.k_raft_version_feature.max_supported_version,
            ),
        }
    }))
}

/// VoterSet -> VotersRecord (version 0, the only version Java reads).
pub fn voters_record(set: &VoterSet) -> VotersRecord {
    VotersRecord {
        version: 0,
        voters: set
            .nodes()
            .map(|n| Voter {
                voter_id: n.key.id,
                voter_directory_id: n.key.wire_directory_id(),
                endpoints: n
                    .listeners
                    .iter()
                    .map(|(name, hp)| Endpoint {
                        name: name.clone(),
                        host: hp.host.clone(),
                        port: hp.port,
                        ..Endpoint::default()
                    })
                    .collect(),
                k_raft_version_feature: KRaftVersionFeature {
                    min_supported_version: n.supported_kraft_version.0,
                    max_supported_version: n.supported_kraft_version.1,
                    ..KRaftVersionFeature::default()
                },
                ..Voter::default()
            })
            .collect(),
        ..VotersRecord::default()
    }
}
