//! The simulation's durability check: every record any node ever acknowledged as committed
//! (`Action::Committed`) stays in the quorum's log, at its offset, with its value. It must be
//! durable on a majority of the voters at all times (in the flushed part of the log, or in a
//! snapshot that holds it), and in the log of every node once the cluster has converged. A
//! snapshot holds the acknowledged records below its end when it is exactly the snapshot a
//! fresh replicated machine takes after replaying them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::checks::NodeView;
use super::state_machine::MachineFactory;
use crate::raft::log::{Batch, ControlRecord, RaftLog, Records};
use crate::raft::mem_log::MemLog;
use crate::raft::types::{NodeId, Offset, OffsetAndEpoch, ReplicaKey, VoterSet};

/// A record as it was acknowledged.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    /// A data record's value (the simulation's values are unique).
    Data(Vec<u8>),
    Control(ControlRecord),
}

/// A record of a log, borrowed from its batch.
#[derive(Debug, Clone, Copy)]
enum Record<'a> {
    Data(&'a [u8]),
    Control(&'a ControlRecord),
}

impl Value {
    fn of(r: Record<'_>) -> Value {
        match r {
            Record::Data(d) => Value::Data(d.to_vec()),
            Record::Control(c) => Value::Control(c.clone()),
        }
    }

    fn is(&self, r: Record<'_>) -> bool {
        match (self, r) {
            (Value::Data(a), Record::Data(b)) => a.as_slice() == b,
            (Value::Control(a), Record::Control(b)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Data(v) => match <[u8; 8]>::try_from(v.as_slice()) {
                Ok(bytes) => write!(f, "v{}", u64::from_be_bytes(bytes)),
                Err(_) => write!(f, "data {v:?}"),
            },
            Value::Control(c) => write!(f, "{c:?}"),
        }
    }
}

/// The records of a batch with their offsets.
fn records(b: &Batch) -> Box<dyn Iterator<Item = (Offset, Record<'_>)> + '_> {
    let offsets = b.base_offset..;
    match &b.records {
        Records::Data(values) => Box::new(offsets.zip(values.iter().map(|v| Record::Data(v)))),
        Records::Control(controls) => Box::new(offsets.zip(controls.iter().map(Record::Control))),
    }
}

/// Every record acknowledged as committed, by offset.
#[derive(Debug)]
pub struct Acknowledged {
    records: BTreeMap<Offset, Value>,
    /// Per node: the offset below which its acknowledgements are recorded.
    recorded_below: BTreeMap<NodeId, Offset>,
    /// Snapshots found to hold exactly the acknowledged data below their end (a frozen
    /// snapshot never changes).
    snapshots_holding: BTreeSet<(NodeId, OffsetAndEpoch)>,
    /// Makes the machine that says what a snapshot of acknowledged records holds.
    machine: MachineFactory,
}

impl Acknowledged {
    pub fn new(machine: MachineFactory) -> Acknowledged {
        Acknowledged {
            records: BTreeMap::new(),
            recorded_below: BTreeMap::new(),
            snapshots_holding: BTreeSet::new(),
            machine,
        }
    }

    /// How many records were acknowledged.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Node `id` says every offset below `upto` is committed: records what its log holds
    /// there, which must agree with whatever was acknowledged before.
    pub fn acknowledge(&mut self, id: NodeId, log: &MemLog, upto: Offset) -> Result<(), String> {
        let from = self
            .recorded_below
            .get(&id)
            .copied()
            .unwrap_or(0)
            .max(log.start_offset());
        if from >= upto {
            return Ok(());
        }
        let read = RaftLog::read(log, from, usize::MAX)
            .map_err(|e| format!("n{id} acknowledges offsets below {upto} it cannot read: {e}"))?;
        let mut next = from;
        for (offset, record) in read.iter().flat_map(records) {
            if offset < from {
                continue;
            }
            if offset >= upto {
                break;
            }
            if offset != next {
                return Err(format!(
                    "AcknowledgedCommitted: n{id} acknowledges offsets below {upto} but its log skips from {next} to {offset}"
                ));
            }
            match self.records.get(&offset) {
                Some(known) if !known.is(record) => {
                    return Err(format!(
                        "AcknowledgedCommitted: n{id} acknowledges {} at offset {offset}, where {known} was acknowledged",
                        Value::of(record)
                    ))
                }
                Some(_) => {}
                None => {
                    self.records.insert(offset, Value::of(record));
                }
            }
            next = offset + 1;
        }
        if next < upto {
            return Err(format!(
                "AcknowledgedCommitted: n{id} acknowledges offsets below {upto} but its log ends at {next}"
            ));
        }
        self.recorded_below.insert(id, upto);
        Ok(())
    }

    /// Every acknowledged record is durable on a majority of the voters: with voter changes
    /// (`history`: the committed voter sets, by offset; `appended`: every set a leader
    /// appended), of the latest committed set or of one appended since.
    pub fn check_durable_on_majority(
        &mut self,
        nodes: &[NodeView<'_>],
        history: &[(Offset, VoterSet)],
        appended: &[(Offset, VoterSet)],
    ) -> Result<(), String> {
        let static_voters: Vec<NodeId> =
            nodes.iter().filter(|n| n.is_voter).map(|n| n.id).collect();
        let held: BTreeMap<NodeId, BTreeMap<Offset, bool>> = nodes
            .iter()
            .map(|v| Ok((v.id, self.held_by(v.id, v.log, v.log.flushed_end_offset())?)))
            .collect::<Result<_, String>>()?;
        for (offset, value) in &self.records {
            let candidates = voter_sets_for(history, appended, nodes, &static_voters);
            let durable = |ids: &Vec<NodeId>| {
                let holding = ids.iter().filter(|id| held[*id][offset]).count();
                holding > ids.len() / 2
            };
            if !candidates.iter().any(durable) {
                let on: Vec<String> = nodes
                    .iter()
                    .filter(|n| held[&n.id][offset])
                    .map(|n| format!("n{}", n.id))
                    .collect();
                return Err(format!(
                    "AcknowledgedCommitted: {value} at offset {offset} was acknowledged as committed but is durable on {on:?}, not a majority of any voter set since ({candidates:?}; history {:?})", history.iter().map(|(o, s)| (*o, s.ids().collect::<Vec<_>>())).collect::<Vec<_>>()
                ));
            }
        }
        Ok(())
    }

    /// Every acknowledged record is in every node's log (or in a snapshot it holds).
    pub fn check_everywhere(&mut self, nodes: &[NodeView<'_>]) -> Result<(), String> {
        for n in nodes {
            let held = self.held_by(n.id, n.log, n.log.end_offset())?;
            if let Some((offset, _)) = held.iter().find(|(_, held)| !**held) {
                return Err(format!(
                    "AcknowledgedCommitted: n{} lacks {} at offset {offset}, acknowledged as committed",
                    n.id, self.records[offset]
                ));
            }
        }
        Ok(())
    }

    /// Which acknowledged offsets `log` holds with their value: in its batches below `limit`,
    /// or in its latest snapshot when that holds exactly the acknowledged data below its end.
    fn held_by(
        &mut self,
        node: NodeId,
        log: &MemLog,
        limit: Offset,
    ) -> Result<BTreeMap<Offset, bool>, String> {
        let mut held: BTreeMap<Offset, bool> = self.records.keys().map(|&o| (o, false)).collect();
        if let Some(id) = log.latest_snapshot_id() {
            let holds = self.snapshots_holding.contains(&(node, id)) || {
                let holds = self.snapshot_holds(log, id)?;
                if holds {
                    self.snapshots_holding.insert((node, id));
                }
                holds
            };
            if holds {
                for (_, h) in held.range_mut(..id.offset) {
                    *h = true;
                }
            }
        }
        let from = log.start_offset();
        if let Ok(batches) = RaftLog::read(log, from, usize::MAX) {
            for (offset, record) in batches.iter().flat_map(records) {
                if offset >= limit {
                    break;
                }
                if let Some(h) = held.get_mut(&offset) {
                    *h |= self.records[&offset].is(record);
                }
            }
        }
        Ok(held)
    }

    /// Whether snapshot `id` of `log` is exactly what a fresh machine snapshots after replaying
    /// the acknowledged records below its end offset (every offset below it must have been
    /// acknowledged). Errors are the machine refusing acknowledged records.
    fn snapshot_holds(&self, log: &MemLog, id: OffsetAndEpoch) -> Result<bool, String> {
        if id.offset == 0 {
            return Ok(false);
        }
        let below: Vec<(&Offset, &Value)> = self.records.range(..id.offset).collect();
        if below.len() as i64 != id.offset {
            return Ok(false);
        }
        let mut machine = self.machine.make();
        let mut run: Vec<Vec<u8>> = Vec::new();
        let refused = |e: String| format!("replaying the acknowledged records below {id}: {e}");
        for (offset, value) in below {
            match value {
                Value::Data(d) => run.push(d.clone()),
                Value::Control(_) => {
                    if !run.is_empty() {
                        let base = offset - run.len() as Offset;
                        machine.apply_committed(base, &run).map_err(refused)?;
                        run.clear();
                    }
                    machine.skip_control(*offset);
                }
            }
        }
        if !run.is_empty() {
            let base = id.offset - run.len() as Offset;
            machine.apply_committed(base, &run).map_err(refused)?;
        }
        let Some(expected) = machine.snapshot().map_err(refused)? else {
            return Ok(false);
        };
        let data = RaftLog::open_snapshot(log, id).and_then(|s| {
            s.map(|s| s.records().collect::<Result<Vec<_>, _>>())
                .transpose()
        });
        Ok(match data {
            Ok(Some(data)) => data == expected,
            _ => false,
        })
    }
}

/// The node ids of each voter set a committed record must be durable on a majority of: the
/// latest committed one (`history`), and every one a leader appended after it (`appended`: a
/// leader counts its latest set before that commits). Consecutive sets differ by one voter, so
/// a record committed under an older set is on a majority of the next by the time that one
/// commits. Only the static voters when no voter set was recorded.
pub fn voter_sets_for(
    history: &[(Offset, VoterSet)],
    appended: &[(Offset, VoterSet)],
    nodes: &[NodeView<'_>],
    static_voters: &[NodeId],
) -> Vec<Vec<NodeId>> {
    let Some((latest, committed)) = history.last() else {
        return vec![static_voters.to_vec()];
    };
    std::iter::once(committed)
        .chain(
            appended
                .iter()
                .filter(|(o, _)| o > latest)
                .map(|(_, set)| set),
        )
        .map(|set| {
            nodes
                .iter()
                .filter(|n| set.is_voter(&ReplicaKey::new(n.id, n.directory_id)))
                .map(|n| n.id)
                .collect()
        })
        .collect()
}
