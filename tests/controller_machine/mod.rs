//! The metadata controller as the raft simulation's replicated machine: followers replay
//! committed batches, the leader applies its own proposals ahead of the commit and renounces
//! them when it loses the leadership, snapshots are images (`Controller::snapshot`), and the
//! digest is of the committed controller state. Shared by the seeded run (tests/controller_sim.rs)
//! and the scenario scripts (tests/raft_scenarios.rs, `machine=controller`).

pub mod workload;

use std::sync::{Arc, Mutex};

use kraftd::controller::{Controller, ControllerState, SnapshotError};
use kraftd::protocol::records::{MetadataRecord, MetadataRecordAndVersion, Offset};
use kraftd::raft::sim::checks::digest;
use kraftd::raft::sim::state_machine::{MachineFactory, Proposal, ReplicatedMachine};

/// What the controller machines of one run did, across nodes and restarts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControllerTally {
    /// Records a leader applied ahead of their commit.
    pub records_written_ahead: u64,
    /// Committed records a replica replayed (not its own writes).
    pub records_replayed: u64,
    /// Renounces that reverted writes never committed.
    pub renounces_reverting_writes: u64,
    /// Of them, those that reverted a transaction begun and not committed.
    pub transactions_reverted: u64,
    /// Renounces that left a committed transaction open (its next leader aborts it).
    pub transactions_left_open: u64,
    /// Transactions a leader inherited open and aborted.
    pub inherited_aborted: u64,
    /// Transactions a leader ended or aborted itself (written, maybe never committed).
    pub transactions_ended: u64,
    pub snapshots_loaded: u64,
    pub snapshot_records_loaded: u64,
    pub snapshots_taken: u64,
    /// Snapshots not taken because a committed transaction was open.
    pub snapshots_deferred: u64,
}

pub type Tally = Arc<Mutex<ControllerTally>>;

/// A factory of controller machines that count into `tally`.
pub fn factory(tally: Tally) -> MachineFactory {
    MachineFactory::new(move || Box::new(ControllerMachine::new(tally.clone())))
}

pub struct ControllerMachine {
    controller: Controller,
    /// The offset of the BeginTransactionRecord this leader wrote, while that transaction is
    /// open in its latest state.
    own_transaction: Option<Offset>,
    tally: Tally,
}

fn encode(r: &MetadataRecord) -> Vec<u8> {
    MetadataRecordAndVersion::new(r.clone(), r.info().highest_version)
        .encode()
        .expect("the workload's records encode")
}

/// Of what every replica derives alike from the same records. The brokers' registration
/// offsets are left out: a replica that loaded a snapshot knows them as the snapshot's offset,
/// as Java's controllers do.
fn state_digest(offset: Offset, state: &ControllerState) -> u64 {
    let replicated = format!(
        "{offset}|{:?}|{:?}|{}",
        state.image, state.transaction, state.has_records
    );
    digest(replicated.as_bytes(), 0)
}

impl ControllerMachine {
    pub fn new(tally: Tally) -> ControllerMachine {
        ControllerMachine {
            controller: Controller::new(),
            own_transaction: None,
            tally,
        }
    }

    fn count(&self, f: impl FnOnce(&mut ControllerTally)) {
        f(&mut self.tally.lock().expect("tally"));
    }
}

impl ReplicatedMachine for ControllerMachine {
    fn decide(&self, n: u64) -> Proposal {
        let open = self.controller.open_transaction();
        let own = open.is_some() && open.map(|t| t.begun_at) == self.own_transaction;
        let decided = workload::decide(self.controller.image(), open, own, n);
        Proposal {
            records: decided.records.iter().map(encode).collect(),
            label: decided.labels.join(", "),
        }
    }

    fn decides_from_state(&self) -> bool {
        true
    }

    fn apply_committed(&mut self, base_offset: Offset, values: &[Vec<u8>]) -> Result<(), String> {
        self.controller
            .replay_committed_batch(base_offset, values)
            .map_err(|e| e.to_string())?;
        self.count(|t| t.records_replayed += values.len() as u64);
        Ok(())
    }

    fn skip_control(&mut self, last_offset: Offset) {
        self.controller.skip_committed_control_batch(last_offset);
    }

    fn apply_written(&mut self, base_offset: Offset, values: &[Vec<u8>]) -> Result<(), String> {
        let records = values
            .iter()
            .map(|v| MetadataRecordAndVersion::decode(v).map(|r| r.record))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let inherited = self
            .controller
            .open_transaction()
            .is_some_and(|t| Some(t.begun_at) != self.own_transaction);
        self.controller
            .replay_written_batch(base_offset, &records)
            .map_err(|e| e.to_string())?;
        for (i, r) in records.iter().enumerate() {
            match r {
                MetadataRecord::BeginTransaction(_) => {
                    self.own_transaction = Some(base_offset + i as Offset)
                }
                MetadataRecord::EndTransaction(_) | MetadataRecord::AbortTransaction(_) => {
                    self.own_transaction = None;
                    self.count(|t| match inherited {
                        true => t.inherited_aborted += 1,
                        false => t.transactions_ended += 1,
                    });
                }
                _ => {}
            }
        }
        self.count(|t| t.records_written_ahead += records.len() as u64);
        Ok(())
    }

    fn on_committed(&mut self, last_offset: Offset) {
        self.controller.on_committed(last_offset);
    }

    fn renounce(&mut self) -> Result<(), String> {
        let c = &self.controller;
        let reverting = c.last_applied() > c.committed_point();
        let open_before = c.open_transaction();
        self.controller.renounce().map_err(|e| e.to_string())?;
        self.own_transaction = None;
        let open_after = self.controller.open_transaction();
        self.count(|t| {
            t.renounces_reverting_writes += u64::from(reverting);
            t.transactions_reverted += u64::from(open_before.is_some() && open_after.is_none());
            t.transactions_left_open += u64::from(open_after.is_some());
        });
        Ok(())
    }

    fn load_snapshot(&mut self, last_offset: Offset, values: &[Vec<u8>]) -> Result<(), String> {
        self.controller
            .load_snapshot(last_offset, values)
            .map_err(|e| e.to_string())?;
        self.own_transaction = None;
        self.count(|t| {
            t.snapshots_loaded += 1;
            t.snapshot_records_loaded += values.len() as u64;
        });
        Ok(())
    }

    fn snapshot(&self) -> Result<Option<Vec<Vec<u8>>>, String> {
        let c = &self.controller;
        if c.stable_offset() != c.committed_point() {
            // A committed transaction is open: the committed state is not an image yet.
            self.count(|t| t.snapshots_deferred += 1);
            return Ok(None);
        }
        let (_, mut records) = match c.snapshot() {
            Ok(s) => s,
            Err(SnapshotError::NoMetadataVersion) => return Ok(None),
            Err(e) => return Err(e.to_string()),
        };
        let values = records
            .by_ref()
            .map(|r| r.encode())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        if let Some(loss) = records.losses().first() {
            return Err(format!("the snapshot loses image content: {loss}"));
        }
        self.count(|t| t.snapshots_taken += 1);
        Ok(Some(values))
    }

    fn committed_digest(&self) -> u64 {
        let c = &self.controller;
        state_digest(c.committed_point(), c.committed_state())
    }

    fn latest_digest(&self) -> u64 {
        let c = &self.controller;
        state_digest(c.last_applied(), c.latest_state())
    }

    fn check(&self) -> Result<(), String> {
        self.controller.check().map_err(|e| e.to_string())
    }

    /// `2 brokers (1 fenced), 1 topics, 3 partitions, 1 quotas, mv 33, transaction open at 9`.
    fn describe(&self) -> String {
        let image = self.controller.image();
        let brokers = &image.cluster.brokers;
        let fenced = brokers.values().filter(|b| b.fenced).count();
        let mut line = format!(
            "{} brokers ({fenced} fenced), {} topics, {} partitions, {} quotas, mv {}",
            brokers.len(),
            image.topics.by_id.len(),
            image.topics.partition_count(),
            image.client_quotas.entities.len(),
            image
                .features
                .metadata_version()
                .map_or("none".into(), |v| v.to_string()),
        );
        if let Some(t) = self.controller.open_transaction() {
            line += &format!(", transaction open at {}", t.begun_at);
        }
        line
    }
}
