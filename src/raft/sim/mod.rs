//! A deterministic in-memory cluster for scenario transcripts and randomized simulation: nodes
//! are `Raft<MemLog, MemQuorumStateStore>` with a replicated machine on top (a list of values
//! unless `SimOptions::machine` says otherwise; see `state_machine`), connected
//! by a simulated network, driven by a manual clock. The same seed gives the same trace; with
//! `SimOptions::fixed_timing` (scenario scripts, `script`) nothing is drawn at random at all.

pub mod acknowledged;
pub mod admin;
pub mod chaos;
pub mod checks;
mod engine;
pub mod faults;
pub mod kill_loop;
pub mod liveness;
pub mod network;
pub mod script;
pub mod state_machine;
pub mod trace;
mod unseated;
pub mod wire;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::protocol::codec::Uuid;
use crate::raft::config::{ElectionRules, RaftConfig};
use crate::raft::mem_log::{LogInspect, MemLog};
use crate::raft::msg::{CorrelationId, RequestId};
use crate::raft::quorum_state::MemQuorumStateStore;
use crate::raft::time::{Instant, Randomness, Rng};
use crate::raft::types::{Endpoints, HostPort, NodeId, ReplicaKey, VoterNode, VoterSet};
use crate::raft::voters::voters_record;

use acknowledged::Acknowledged;
use checks::Checker;
use faults::FaultLog;
use network::Network;
use state_machine::{MachineFactory, MachineLog, SimRaft, SimStateMachine};

/// How much of the run goes into the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// Nothing kept (still hashed for determinism checks).
    Quiet,
    /// Role changes, high watermarks, snapshots, faults.
    Roles,
    /// Everything, every message included.
    Messages,
}

#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Voters get ids 1..=voters, observers the ids after them.
    pub voters: usize,
    pub observers: usize,
    /// 0: static `controller.quorum.voters`; 1: bootstrap checkpoint with a VotersRecord.
    pub kraft_version: i16,
    /// Seeds every random choice, unless `fixed_timing` is set.
    pub seed: u64,
    pub election_timeout: Duration,
    pub fetch_timeout: Duration,
    pub request_timeout: Duration,
    pub fetch_max_wait: Duration,
    /// The state machine snapshots every this many applied batches (0: never).
    pub snapshot_every: usize,
    pub verbosity: Verbosity,
    /// Pass every message through the wire codecs at these versions (`None`: in memory only).
    pub wire: Option<wire::WireVersions>,
    /// `None`: `seed` drives election jitter, bootstrap choices and the network. `Some`: no
    /// random draws anywhere, so that a scripted transcript cannot depend on a generator.
    pub fixed_timing: Option<FixedTiming>,
    /// Model Kafka's `metadata.log.segment.bytes` in every node's log (`None`: one segment).
    pub segment_bytes: Option<usize>,
    /// `controller.quorum.fetch.max.bytes` and `.fetch.snapshot.max.bytes` of every node.
    pub fetch_max_bytes: u32,
    pub fetch_snapshot_max_bytes: u32,
    /// The leaders' `controller.quorum.append.linger.ms` (0: proposals reach the log at once).
    pub append_linger: Duration,
    /// `controller.quorum.auto.join.enable` on every node (observers add themselves).
    pub auto_join: bool,
    /// Observers are controllers at kraft.version 0 too: they flush as they follow, so that
    /// they may become voters after a kraft.version upgrade (brokers do not flush).
    pub observers_flush: bool,
    /// What every node replicates (default: the list of values).
    pub machine: MachineFactory,
    /// A request to a node that is down comes back refused (`Input::ConnectionRefused`), as
    /// a killed process's port refuses on a live host; otherwise it goes unanswered, as to a
    /// host that is gone.
    pub refused_connections: bool,
    /// The election rules of each node (`ElectionRules::Kraftd` when absent): `Kafka` makes a
    /// stand-in for a Java voter.
    pub election_rules: BTreeMap<NodeId, ElectionRules>,
}

/// The timing of a run without randomness.
#[derive(Debug, Clone, Default)]
pub struct FixedTiming {
    /// A node's every election timeout is `election_timeout + jitter` (0 when absent).
    pub election_jitter: BTreeMap<NodeId, Duration>,
    /// Every message takes this long at first (links can be changed with `Network::set_delay`).
    pub delay_ms: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        let defaults = RaftConfig::new(None, Uuid::ONE, "");
        SimOptions {
            voters: 3,
            observers: 0,
            kraft_version: 0,
            seed: 0,
            election_timeout: Duration::from_millis(1000),
            fetch_timeout: Duration::from_millis(2000),
            request_timeout: Duration::from_millis(1000),
            fetch_max_wait: Duration::from_millis(500),
            snapshot_every: 0,
            verbosity: Verbosity::Roles,
            wire: None,
            fixed_timing: None,
            segment_bytes: None,
            fetch_max_bytes: defaults.fetch_max_bytes,
            fetch_snapshot_max_bytes: defaults.fetch_snapshot_max_bytes,
            append_linger: Duration::ZERO,
            auto_join: false,
            observers_flush: false,
            machine: MachineFactory::default(),
            refused_connections: false,
            election_rules: BTreeMap::new(),
        }
    }
}

/// One simulated process.
pub struct SimNode {
    pub id: NodeId,
    pub is_voter: bool,
    pub cfg: RaftConfig,
    /// `None` while crashed.
    pub raft: Option<SimRaft>,
    /// The durable state of a crashed node.
    down: Option<(MemLog, MemQuorumStateStore)>,
    pub sm: SimStateMachine,
    /// Inbound requests awaiting a reply: id -> (requester, id it addressed, correlation id);
    /// the requester is `admin::ADMIN` for an operator's request.
    pending: BTreeMap<RequestId, (NodeId, NodeId, CorrelationId)>,
    last_role: String,
    pub restarts: u64,
    /// Down after halting on a storage fault, not restarted yet.
    pub faulted: bool,
}

impl SimNode {
    pub fn is_up(&self) -> bool {
        self.raft.is_some()
    }
    pub fn log(&self) -> &MemLog {
        match (&self.raft, &self.down) {
            (Some(r), _) => r.log(),
            (None, Some((l, _))) => l,
            _ => unreachable!("a node is up or down"),
        }
    }
    pub fn store(&self) -> &MemQuorumStateStore {
        match (&self.raft, &self.down) {
            (Some(r), _) => r.store(),
            (None, Some((_, s))) => s,
            _ => unreachable!("a node is up or down"),
        }
    }
    /// The role as the transcript last showed it ("down" while crashed).
    pub fn role_line(&self) -> &str {
        &self.last_role
    }
}

pub struct Cluster {
    pub opts: SimOptions,
    pub now: Instant,
    pub nodes: BTreeMap<NodeId, SimNode>,
    pub net: Network,
    pub rng: Rng,
    next_request_id: u64,
    next_value: u64,
    /// Kept lines (per `opts.verbosity`).
    pub transcript: Vec<String>,
    /// Hash of every role-level line (and message line when kept): equal seeds, equal hashes.
    pub trace_hash: u64,
    checker: Checker,
    /// The leaders that reach a majority, and since when (`unseated.rs`).
    healthy_leaders: unseated::HealthyLeaders,
    /// Every record acknowledged as committed, for the durability check.
    pub acknowledged: Acknowledged,
    /// What the storage faults did.
    pub faults: FaultLog,
    /// Values proposed and the offset they were appended at (by the leader that took them).
    pub proposed: u64,
    /// What the replicated machines did.
    pub machines: MachineLog,
    /// The operator's voter changes.
    pub voter_changes: admin::VoterChangeLog,
    /// Every voter set a node reported committed, by offset (for the durability check).
    committed_voter_sets: BTreeMap<crate::raft::types::Offset, VoterSet>,
    /// Every voter set a leader appended (committed or not), by offset.
    appended_voter_sets: Vec<(crate::raft::types::Offset, VoterSet)>,
}

/// The simulated cluster's `cluster.id`.
pub const CLUSTER_ID: &str = "sim-cluster-id";

pub fn address(id: NodeId) -> HostPort {
    HostPort::new(format!("node{id}"), 9000 + id as u16)
}

pub fn directory_id(id: NodeId) -> Uuid {
    Uuid::from_u64s(0x5151_0000 + id as u64, 0x1000 + id as u64)
}

fn node_of(address: &HostPort) -> Option<NodeId> {
    address.host.strip_prefix("node")?.parse().ok()
}

impl Cluster {
    pub fn new(opts: SimOptions) -> Cluster {
        let mut c = Cluster {
            now: Instant(0),
            nodes: BTreeMap::new(),
            net: Network::default(),
            rng: Rng::new(opts.seed ^ 0x5eed_5eed),
            next_request_id: 1,
            next_value: 1,
            transcript: Vec::new(),
            trace_hash: 0,
            checker: Checker::default(),
            healthy_leaders: Default::default(),
            acknowledged: Acknowledged::new(opts.machine.clone()),
            faults: FaultLog::default(),
            proposed: 0,
            machines: MachineLog::default(),
            voter_changes: admin::VoterChangeLog::default(),
            committed_voter_sets: BTreeMap::new(),
            appended_voter_sets: Vec::new(),
            opts,
        };
        let total = c.opts.voters + c.opts.observers;
        if let Some(fixed) = &c.opts.fixed_timing {
            c.net.use_fixed_delays(fixed.delay_ms);
        }
        for id in 1..=total as NodeId {
            let is_voter = id as usize <= c.opts.voters;
            let mut log = match c.opts.segment_bytes {
                Some(bytes) => MemLog::with_segment_bytes(bytes as u64),
                None => MemLog::new(),
            };
            if c.opts.kraft_version >= 1 && is_voter {
                log.format_bootstrap(1, Some(voters_record(&c.bootstrap_voters())));
            }
            let node = SimNode {
                id,
                is_voter,
                cfg: c.node_config(id, 0),
                raft: None,
                down: Some((log, MemQuorumStateStore::new())),
                sm: SimStateMachine::new(c.opts.machine.make()),
                pending: BTreeMap::new(),
                last_role: "down".into(),
                restarts: 0,
                faulted: false,
            };
            c.nodes.insert(id, node);
        }
        let ids: Vec<NodeId> = c.nodes.keys().copied().collect();
        for id in ids {
            if let Err(e) = c.start(id) {
                panic!("starting n{id}: {e}");
            }
        }
        c
    }

    fn bootstrap_voters(&self) -> VoterSet {
        VoterSet::new((1..=self.opts.voters as NodeId).map(|id| VoterNode {
            key: ReplicaKey::new(id, Some(directory_id(id))),
            listeners: Endpoints::single("CONTROLLER", address(id)),
            supported_kraft_version: (0, 1),
        }))
    }

    fn node_config(&self, id: NodeId, restarts: u64) -> RaftConfig {
        let o = &self.opts;
        let mut c = RaftConfig::new(Some(id), directory_id(id), CLUSTER_ID);
        c.listeners = Endpoints::single("CONTROLLER", address(id));
        let voters: Vec<(NodeId, HostPort)> =
            (1..=o.voters as NodeId).map(|v| (v, address(v))).collect();
        if o.kraft_version == 0 {
            c.static_voters = voters;
        } else {
            // Every node is a controller that may become a voter: list them all, as an operator
            // keeps `controller.quorum.bootstrap.servers` naming the quorum as it changes.
            let all = (o.voters + o.observers) as NodeId;
            c.bootstrap_servers = (1..=all).map(address).collect();
        }
        c.election_timeout = o.election_timeout;
        c.fetch_timeout = o.fetch_timeout;
        c.request_timeout = o.request_timeout;
        c.fetch_max_wait = o.fetch_max_wait;
        c.fetch_max_bytes = o.fetch_max_bytes;
        c.fetch_snapshot_max_bytes = o.fetch_snapshot_max_bytes;
        c.election_backoff_max = Duration::from_millis(1000);
        c.append_linger = o.append_linger;
        c.auto_join = o.auto_join;
        c.election_rules = o.election_rules.get(&id).copied().unwrap_or_default();
        // Observers play brokers, which do not flush (a crash loses their unflushed tail); at
        // kraft.version 1, or when asked, they are controllers that may be added as voters, and
        // flush (Java's controllers always flush as followers).
        c.always_flush = id as usize <= o.voters || o.kraft_version >= 1 || o.observers_flush;
        c.randomness = match &o.fixed_timing {
            Some(fixed) => Randomness::Fixed {
                election_jitter: fixed.election_jitter.get(&id).copied().unwrap_or_default(),
            },
            None => Randomness::Seeded(
                o.seed
                    .wrapping_mul(0x9E37_79B9)
                    .wrapping_add((id as u64) << 32)
                    .wrapping_add(restarts),
            ),
        };
        c
    }

    /// Adds a line to the transcript (prefixed with the time).
    pub fn emit(&mut self, level: Verbosity, line: String) {
        if level == Verbosity::Messages && self.opts.verbosity < Verbosity::Messages {
            return; // neither kept nor hashed: formatting every message is the costly part
        }
        let line = format!("t={} {line}", self.now);
        self.trace_hash = checks::digest(line.as_bytes(), self.trace_hash);
        if level <= self.opts.verbosity && self.opts.verbosity != Verbosity::Quiet {
            self.transcript.push(line);
        }
    }

    /// A free-form note in the transcript.
    pub fn note(&mut self, text: &str) {
        self.emit(Verbosity::Roles, format!("# {text}"));
    }

    /// The live leader with the highest epoch.
    pub fn leader(&self) -> Option<NodeId> {
        self.nodes
            .values()
            .filter_map(|n| {
                n.raft
                    .as_ref()
                    .filter(|r| r.is_leader())
                    .map(|r| (r.epoch(), n.id))
            })
            .max()
            .map(|(_, id)| id)
    }

    pub fn raft(&self, id: NodeId) -> Option<&SimRaft> {
        self.nodes.get(&id).and_then(|n| n.raft.as_ref())
    }

    /// Hard-kills a node: unflushed data is lost, queued messages to and from it vanish.
    pub fn crash(&mut self, id: NodeId) {
        let Some(lost) = self
            .nodes
            .get(&id)
            .and_then(|n| n.raft.as_ref())
            .map(|r| r.log().end_offset_lost_on_crash())
        else {
            return;
        };
        self.take_down(id);
        self.emit(
            Verbosity::Roles,
            format!("n{id}: crash (lost {lost} unflushed offsets)"),
        );
    }

    /// The process of a live node ends: its log keeps what is durable (recovered as at a
    /// start), its state machine and its messages are gone.
    fn take_down(&mut self, id: NodeId) {
        let Some(node) = self.nodes.get_mut(&id) else {
            return;
        };
        let Some(raft) = node.raft.take() else { return };
        let (mut log, store) = raft.into_parts();
        log.crash().expect("a memory log reopens after a crash");
        node.down = Some((log, store));
        node.sm = SimStateMachine::new(self.opts.machine.make());
        let pending = std::mem::take(&mut node.pending);
        node.last_role = "down".into();
        self.net.drop_node(id);
        if self.opts.refused_connections {
            // A killed process's connections are reset: what it was answering (a parked
            // Fetch, say) fails at once, and the requester's next connection is refused.
            for (requester, via, corr) in pending.into_values() {
                if requester != admin::ADMIN {
                    let error = crate::protocol::errors::ErrorCode::BROKER_NOT_AVAILABLE;
                    let env = network::Envelope::Failed {
                        to: requester,
                        via,
                        corr,
                        error,
                    };
                    self.net.send(self.now, env, &mut self.rng);
                }
            }
        }
    }

    /// Restarts a crashed node from its durable state; then every record acknowledged as
    /// committed must still be durable on a majority of the voters.
    pub fn restart(&mut self, id: NodeId) -> Result<(), String> {
        if self.nodes.get(&id).is_some_and(|n| !n.is_up()) {
            let restarts = self.nodes[&id].restarts + 1;
            let cfg = self.node_config(id, restarts);
            let node = self.nodes.get_mut(&id).expect("node");
            node.restarts = restarts;
            node.cfg = cfg;
            if std::mem::take(&mut node.faulted) {
                self.faults.restarts_after_fault += 1;
            }
            self.emit(Verbosity::Roles, format!("n{id}: restart"));
            self.start(id)?;
            self.check_acknowledged(None)?;
        }
        Ok(())
    }

    fn start(&mut self, id: NodeId) -> Result<(), String> {
        let node = self.nodes.get_mut(&id).expect("node");
        let (log, store) = node.down.take().expect("down");
        let raft = SimRaft::new(node.cfg.clone(), log, store, self.now);
        node.raft = Some(raft);
        self.after_step(id, Vec::new())
    }
}

impl MemLog {
    /// Offsets a crash would lose now (for transcripts).
    pub fn end_offset_lost_on_crash(&self) -> i64 {
        use crate::raft::log::RaftLog;
        self.end_offset() - self.flushed_end_offset()
    }
}
