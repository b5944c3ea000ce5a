//! The metadata controller as the raft simulation's replicated machine. On a kraftd node the
//! machine is a `QuorumController`, driven as the node loop drives it: its leader activates
//! once per epoch (on an empty log it writes the bootstrap records; over an open transaction
//! it writes Kafka's abort), runs its periodic decisions when due (fencing brokers whose
//! sessions expired, elections, the token sweep), and otherwise decides the next request the
//! simulated brokers and admin tools send (`requests`, built by tests/controller_requests);
//! what it decides to write is the proposal, replayed at once when it follows everything the
//! controller holds (`on_written`). A node with Kafka's election rules stands in for a Java
//! controller (`java_stand_in`): it writes records directly, metadata transactions across
//! batches among them, which kraftd leaders then inherit. Followers replay committed batches,
//! a leader renounces what it wrote ahead when it loses the leadership, snapshots are images
//! (`Controller::snapshot`), and the digest is of the committed controller state. Shared by
//! the seeded run (tests/controller_sim.rs) and the scenario scripts (tests/raft_scenarios.rs,
//! `machine=controller`).

mod draws;
pub mod java_stand_in;
mod requests;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kraftd::controller::principal::RequestPrincipal;
use kraftd::controller::quorum::{Decision, Landed, QuorumController, Then, Write};
use kraftd::controller::{ControllerState, SnapshotError};
use kraftd::protocol::records::{MetadataRecord, MetadataRecordAndVersion, Offset};
use kraftd::raft::accumulator::Proposed;
use kraftd::raft::sim::checks::digest;
use kraftd::raft::sim::state_machine::{Deciding, MachineFactory, Proposal, ReplicatedMachine};
use kraftd::server::node::NodeQuorum;

use crate::controller_requests::args::Args;
use crate::controller_requests::{build, node_setup, Ask, Known, NodeSetup, Requester};

/// Directives a kraftd leader tries per proposal before it writes nothing this time.
const ATTEMPTS: u64 = 8;
/// The super user the simulated admin tools and brokers authenticate as.
const ADMIN: &str = "admin";

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
    /// Of them, those a kraftd controller's activation aborted.
    pub inherited_aborted_by_kraftd: u64,
    /// Transactions a leader ended or aborted itself (written, maybe never committed).
    pub transactions_ended: u64,
    pub snapshots_loaded: u64,
    pub snapshot_records_loaded: u64,
    pub snapshots_taken: u64,
    /// Snapshots not taken because a committed transaction was open.
    pub snapshots_deferred: u64,
    /// Proposals a kraftd controller decided: activation records, periodic decisions, and
    /// requests it decided to write.
    pub activations: u64,
    pub periodic_writes: u64,
    pub requests_written: u64,
    /// Requests a kraftd controller answered without writing (refusals and reads).
    pub requests_answered: u64,
    /// Proposals a stand-in for a Java controller wrote.
    pub stand_in_proposals: u64,
}

pub type Tally = Arc<Mutex<ControllerTally>>;

/// A factory of controller machines that count into `tally`, of a cluster formatted at
/// `metadata_version`. Their clients (brokers, admin tools) are one set for the whole run:
/// what they learned outlives any controller.
pub fn factory(tally: Tally, metadata_version: i16) -> MachineFactory {
    let clients: Clients = Arc::default();
    // Every node of the run reads the same properties: parsed once, not at every (re)start.
    let setup = setup(metadata_version);
    MachineFactory::new(move || {
        Box::new(ControllerMachine::new(
            tally.clone(),
            clients.clone(),
            &setup,
            metadata_version,
        ))
    })
}

/// What the simulated brokers and clients learned from the answers they got.
pub type Clients = Arc<Mutex<Requester>>;

pub struct ControllerMachine {
    controller: QuorumController,
    /// The bootstrap checkpoint's record values (what `kafka-storage format` writes).
    bootstrap: Vec<Vec<u8>>,
    /// The metadata.version of the bootstrap checkpoint.
    bootstrap_metadata_version: i16,
    /// What its node is, learned at its first decision: a stand-in for a Java controller, or
    /// kraftd. Until then it only replays.
    java: Option<bool>,
    /// What follows the decision being proposed, once it lands.
    then: Option<Then>,
    /// The offset of the BeginTransactionRecord this leader wrote, while that transaction is
    /// open in its latest state.
    own_transaction: Option<Offset>,
    clients: Clients,
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
    let replicated = format!("{offset}|{:?}|{:?}", state.image, state.transaction);
    digest(replicated.as_bytes(), 0)
}

/// The controller's settings, as a 3-voter node's properties give them, with what the
/// workload needs switched on: an authorizer (the admin a super user), delegation tokens, a
/// short broker session (so silent brokers are fenced within a seed) and preferred-leader
/// rebalancing.
fn setup(metadata_version: i16) -> NodeSetup {
    let properties = [
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("super.users", "User:admin"),
        ("delegation.token.secret.key", "sim-secret"),
        ("delegation.token.expiry.check.interval.ms", "2000"),
        ("broker.session.timeout.ms", "3000"),
        ("leader.imbalance.check.interval.seconds", "2"),
    ];
    node_setup(
        1,
        &[1, 2, 3],
        0x5eed,
        metadata_version,
        &BTreeMap::new(),
        properties
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
    .expect("the simulation's controller settings")
}

fn admin() -> RequestPrincipal {
    RequestPrincipal {
        principal_type: "User".into(),
        name: ADMIN.into(),
        token_authenticated: false,
        host: std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
    }
}

impl ControllerMachine {
    pub fn new(
        tally: Tally,
        clients: Clients,
        setup: &NodeSetup,
        metadata_version: i16,
    ) -> ControllerMachine {
        ControllerMachine {
            controller: QuorumController::new(setup.settings.clone()),
            bootstrap: setup.bootstrap.clone(),
            bootstrap_metadata_version: metadata_version,
            java: None,
            then: None,
            own_transaction: None,
            clients,
            tally,
        }
    }

    fn count(&self, f: impl FnOnce(&mut ControllerTally)) {
        f(&mut self.tally.lock().expect("tally"));
    }

    /// A kraftd leader's next write: the activation, a periodic decision, or the first request
    /// of `ATTEMPTS` it decides to write.
    fn decide_as_kraftd(&mut self, d: Deciding<'_>) -> Option<Proposal> {
        let now = d.now.millis();
        let epoch = d.raft.epoch();
        let mut quorum = NodeQuorum {
            raft: d.raft,
            now: d.now,
            shutting_down: false,
        };
        if !self.controller.is_caught_up() {
            // A leader that may decide holds every committed record.
            self.controller.caught_up();
        }
        if self.controller.active_epoch() != Some(epoch) {
            let bootstrap = self.bootstrap.clone();
            let activation = self.controller.activate(now, epoch, || Some(bootstrap));
            if let Some(write) = activation {
                self.count(|t| t.activations += 1);
                return Some(self.propose(write, format!("activate e{epoch}")));
            }
        }
        if let Some(write) = self.controller.tick(now, &quorum) {
            self.count(|t| t.periodic_writes += 1);
            return Some(self.propose(write, "periodic".into()));
        }
        let principal = admin();
        for attempt in 0..ATTEMPTS {
            let (line, ask) = self.next_request(d.n, attempt, now);
            let learn = ask.learn;
            let decision = self
                .controller
                .handle(now, &principal, ask.request, &mut quorum);
            // The client learns from the answer it will get (if the write commits).
            let answer = match &decision {
                Decision::Answer(answer) => Some(answer),
                Decision::Write(w) => w.reply.as_ref().map(|r| &r.committed),
            };
            if let Some(answer) = answer {
                self.clients.lock().expect("clients").learn(learn, answer);
            }
            match decision {
                Decision::Write(write) if !write.records.is_empty() => {
                    self.count(|t| t.requests_written += 1);
                    return Some(self.propose(write, format!("{line} (v{})", ask.version)));
                }
                _ => self.count(|t| t.requests_answered += 1),
            }
        }
        None
    }

    /// The request a client sends in draw `attempt` of proposal `n`, from the published image
    /// and what the clients learned.
    fn next_request(&self, n: u64, attempt: u64, now: u64) -> (String, Ask) {
        let machine = self.controller.machine();
        let (_, image) = machine.stable_image();
        let clients = self.clients.lock().expect("clients");
        // A broker a Java controller registered knows its epoch from that answer.
        let mut requester = Requester {
            broker_epochs: clients.broker_epochs.clone(),
            tokens: clients.tokens.clone(),
        };
        drop(clients);
        for b in image.cluster.brokers.values() {
            requester.broker_epochs.entry(b.id).or_insert(b.epoch);
        }
        let line = requests::directive(image, requester.tokens.len(), n, attempt, now);
        let known = Known {
            image,
            committed: machine.committed_point(),
            requester: &requester,
        };
        let mut args = Args::parse(&line).expect("the workload's directives parse");
        let ask = build(&known, &mut args)
            .unwrap_or_else(|e| panic!("the workload's directive `{line}`: {e}"));
        (line, ask)
    }

    fn propose(&mut self, write: Write, label: String) -> Proposal {
        self.then = write.then;
        Proposal {
            records: write.records,
            label,
        }
    }

    /// Counts the transactions this leader's write begins and ends.
    fn count_transactions(
        &mut self,
        base_offset: Offset,
        records: &[MetadataRecord],
        mut inherited: bool,
    ) {
        for (i, r) in records.iter().enumerate() {
            match r {
                MetadataRecord::BeginTransaction(_) => {
                    self.own_transaction = Some(base_offset + i as Offset)
                }
                MetadataRecord::EndTransaction(_) | MetadataRecord::AbortTransaction(_) => {
                    self.own_transaction = None;
                    let kraftd = self.java == Some(false);
                    self.count(|t| match inherited {
                        true => {
                            t.inherited_aborted += 1;
                            t.inherited_aborted_by_kraftd += u64::from(kraftd);
                        }
                        false => t.transactions_ended += 1,
                    });
                    // Kafka's activation aborts an inherited transaction and may begin its own.
                    inherited = false;
                }
                _ => {}
            }
        }
    }
}

impl ReplicatedMachine for ControllerMachine {
    fn decide(&mut self, d: Deciding<'_>) -> Option<Proposal> {
        self.java = Some(d.java);
        self.then = None;
        if !d.java {
            return self.decide_as_kraftd(d);
        }
        let c = self.controller.machine();
        let open = c.open_transaction();
        let own = open.is_some() && open.map(|t| t.begun_at) == self.own_transaction;
        let decided =
            java_stand_in::decide(c.image(), open, own, d.n, self.bootstrap_metadata_version);
        self.count(|t| t.stand_in_proposals += 1);
        Some(Proposal {
            records: decided.records.iter().map(encode).collect(),
            label: format!("(java) {}", decided.labels.join(", ")),
        })
    }

    fn decides_from_state(&self) -> bool {
        true
    }

    fn apply_committed(&mut self, base_offset: Offset, values: &[Vec<u8>]) -> Result<(), String> {
        self.controller
            .machine_mut()
            .replay_committed_batch(base_offset, values)
            .map_err(|e| e.to_string())?;
        self.count(|t| t.records_replayed += values.len() as u64);
        Ok(())
    }

    fn skip_control(&mut self, last_offset: Offset) {
        self.controller
            .machine_mut()
            .skip_committed_control_batch(last_offset);
    }

    fn apply_written(&mut self, p: Proposed, values: &[Vec<u8>]) -> Result<(), String> {
        let records = values
            .iter()
            .map(|v| MetadataRecordAndVersion::decode(v).map(|r| r.record))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let inherited = self
            .controller
            .machine()
            .open_transaction()
            .is_some_and(|t| Some(t.begun_at) != self.own_transaction);
        if self.java == Some(false) {
            // Kafka's activation guarantee: an active controller writes nothing into a
            // transaction another leader left open before it aborts it.
            let aborts_first = matches!(records.first(), Some(MetadataRecord::AbortTransaction(_)));
            if inherited && !aborts_first {
                return Err(format!(
                    "kraftd wrote {}..={} into the transaction a previous leader left open",
                    p.base_offset, p.last_offset
                ));
            }
            // The node loop's way: the controller hears where its records landed and replays
            // them itself when they follow everything it holds, as they do here.
            let landed = Landed {
                epoch: p.epoch,
                base_offset: p.base_offset,
                last_offset: p.last_offset,
            };
            self.controller
                .on_written(Some(landed), values, self.then.take())
                .map_err(|e| e.to_string())?;
            let applied = self.controller.machine().last_applied();
            if applied != p.last_offset {
                return Err(format!(
                    "the controller did not take its own write at {}..={} (it holds through {applied})",
                    p.base_offset, p.last_offset
                ));
            }
        } else {
            self.controller
                .machine_mut()
                .replay_written_batch(p.base_offset, &records)
                .map_err(|e| e.to_string())?;
        }
        self.count_transactions(p.base_offset, &records, inherited);
        self.count(|t| t.records_written_ahead += records.len() as u64);
        Ok(())
    }

    fn not_written_ahead(&mut self, landed: Option<Proposed>) -> Result<(), String> {
        if self.java != Some(false) {
            return Ok(());
        }
        let before = self.controller.machine().last_applied();
        let landed = landed.map(|p| Landed {
            epoch: p.epoch,
            base_offset: p.base_offset,
            last_offset: p.last_offset,
        });
        self.controller
            .on_written(landed, &[], self.then.take())
            .map_err(|e| e.to_string())?;
        match self.controller.machine().last_applied() == before {
            true => Ok(()),
            false => Err("the controller took a write that does not follow what it holds".into()),
        }
    }

    fn on_committed(&mut self, last_offset: Offset) {
        self.controller.machine_mut().on_committed(last_offset);
    }

    fn renounce(&mut self) -> Result<(), String> {
        let c = self.controller.machine();
        let reverting = c.last_applied() > c.committed_point();
        let open_before = c.open_transaction();
        let renounced = self.controller.renounce().map_err(|e| e.to_string())?;
        if renounced.is_none() {
            // Not active (a stand-in's leadership, or one that never decided): the state
            // machine alone reverts what was written ahead.
            self.controller
                .machine_mut()
                .renounce()
                .map_err(|e| e.to_string())?;
        }
        self.own_transaction = None;
        let open_after = self.controller.machine().open_transaction();
        self.count(|t| {
            t.renounces_reverting_writes += u64::from(reverting);
            t.transactions_reverted += u64::from(open_before.is_some() && open_after.is_none());
            t.transactions_left_open += u64::from(open_after.is_some());
        });
        Ok(())
    }

    fn load_snapshot(&mut self, last_offset: Offset, values: &[Vec<u8>]) -> Result<(), String> {
        self.controller
            .machine_mut()
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
        let c = self.controller.machine();
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
        let c = self.controller.machine();
        state_digest(c.committed_point(), c.committed_state())
    }

    fn latest_digest(&self) -> u64 {
        let c = self.controller.machine();
        state_digest(c.last_applied(), c.latest_state())
    }

    fn check(&self) -> Result<(), String> {
        self.controller.machine().check().map_err(|e| e.to_string())
    }

    /// `2 brokers (1 fenced), 1 topics, 3 partitions, 1 quotas, mv 33, transaction open at 9`.
    fn describe(&self) -> String {
        let image = self.controller.machine().image();
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
        if let Some(t) = self.controller.machine().open_transaction() {
            line += &format!(", transaction open at {}", t.begun_at);
        }
        line
    }
}
