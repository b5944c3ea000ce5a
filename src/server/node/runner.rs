//! The node loop: the only owner of the raft core and the log. It waits for the next event or
//! the core's next deadline, steps the core, and carries out the actions in order: requests to
//! peers, answers to connections, high-watermark publication, quorum-view updates.
//!
//! It runs on its own thread because the log's fsyncs block; tokio only carries bytes.

use std::collections::HashMap;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use tokio::sync::{oneshot, watch};
use tracing::{debug, error, info, warn};

use super::activation;
use super::clock::NodeClock;
use super::event::{Appended, Event, LeaderView, NodeHandle};
use super::metrics_sample::LoopMetrics;
use super::purgatory::Purgatory;
use super::quorum_access::NodeQuorum;
use super::registration::Registrations;
use super::snapshots::{Replay, SnapshotPolicy};
use super::turn_budget::TurnBudget;
use crate::controller::quorum::{ControllerSettings, QuorumController, Write};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::NoOpRecord;
use crate::protocol::records::MetadataRecordAndVersion;
use crate::raft::FatalError;
use crate::raft::{
    Action, ApiKind, CorrelationId, Input, Instant, NodeId, Offset, ProposeError, QuorumStateStore,
    Raft, RaftConfig, RaftLog, RequestId, Response,
};
use crate::server::config::SecurityProtocol;
use crate::server::context::{ControllerEndpoint, ServerContext};
use crate::server::metrics::health::{LoopHealth, StoppedOnDrop};
use crate::server::peer::{Completion, FailKind, OutboundRequest, PeerSettings, Peers};
use crate::server::raft_wire::{decode_response, encode_request_body, raft_api};

/// How the node runs, beyond the raft core's own settings.
#[derive(Debug, Clone)]
pub struct NodeSettings {
    pub raft: RaftConfig,
    pub peer: PeerSettings,
    /// Each listener's security protocol (`listener.security.protocol.map`), for this node's
    /// controller registration.
    pub listener_protocols: std::collections::BTreeMap<String, SecurityProtocol>,
    /// `metadata.max.idle.interval.ms`: the leader appends a NoOpRecord this often (None: never).
    pub noop_interval: Option<Duration>,
    /// How long a graceful shutdown may wait for a successor (Kafka's raft shutdown: 5 s).
    pub shutdown_timeout: Duration,
    /// `metadata.log.max.record.bytes.between.snapshots`.
    pub snapshot_max_bytes: u64,
    /// `metadata.log.max.snapshot.interval.ms` (None: 0, never by time).
    pub snapshot_max_interval: Option<Duration>,
    /// What the quorum controller knows of its configuration.
    pub controller: ControllerSettings,
    /// Committed records are metadata records, replayed into the controller. False for a bare
    /// raft node (`test-raft-server`), whose records are opaque bytes, as in Kafka's
    /// TestRaftServer, which runs no controller.
    pub replay_metadata: bool,
    /// What the loop publishes for the HTTP probes every turn.
    pub health: Arc<LoopHealth>,
}

impl NodeSettings {
    /// The controller channel's connections (`NodeLoop::controller_channel`): the peers'
    /// timeouts and backoff, a client id of their own.
    pub fn controller_channel_peer(&self) -> PeerSettings {
        PeerSettings {
            client_id: "controller-registration-channel",
            // Not the raft channel: its traffic is not raft-channel-metrics'.
            channel: Arc::default(),
            ..self.peer.clone()
        }
    }
}

/// Starts the node loop on its own thread. The loop ends after a graceful shutdown (`Ok`) or
/// when the core reports a fatal condition (`Err`, as Java halts).
pub fn start<L, S>(
    settings: NodeSettings,
    log: L,
    store: S,
    ctx: Arc<ServerContext>,
    runtime: tokio::runtime::Handle,
) -> (NodeHandle, std::thread::JoinHandle<Result<(), FatalError>>)
where
    L: RaftLog + Send + 'static,
    S: QuorumStateStore + Send + 'static,
{
    let (events_tx, events) = mpsc::channel();
    let (hw_tx, hw_rx) = watch::channel(-1);
    let (leader_tx, leader_rx) = watch::channel(LeaderView {
        epoch: 0,
        leader_id: None,
    });
    let handle = NodeHandle {
        events: events_tx.clone(),
        high_watermark: hw_rx,
        leader: leader_rx,
    };
    let thread = std::thread::Builder::new()
        .name("kraftd-raft".into())
        .spawn(move || {
            let _guard = runtime.enter();
            // The probes see the loop stopped however it ends (return, halt or panic).
            let _stopped = StoppedOnDrop(settings.health.clone());
            // Completions come from tokio tasks; one forwarder puts them on the loop's channel.
            let (completions, mut completion_rx) = tokio::sync::mpsc::unbounded_channel();
            let forward = events_tx.clone();
            runtime.spawn(async move {
                while let Some(c) = completion_rx.recv().await {
                    if forward.send(Event::Completion(c)).is_err() {
                        return;
                    }
                }
            });
            let peers = Peers::start(Vec::new(), settings.peer.clone(), completions.clone());
            let controller_channel = Peers::start(
                Vec::new(),
                settings.controller_channel_peer(),
                completions.clone(),
            );
            let clock = NodeClock::new();
            let raft = Raft::new(settings.raft.clone(), log, store, clock.now());
            let snapshots = SnapshotPolicy::new(
                settings.snapshot_max_bytes,
                settings.snapshot_max_interval,
                clock.now(),
                events_tx.clone(),
            );
            let mut node = NodeLoop {
                raft,
                clock,
                events,
                completions,
                peers,
                controller_channel,
                in_flight: HashMap::new(),
                next_token: 0,
                replies: HashMap::new(),
                next_request: 0,
                hw: hw_tx,
                leader: leader_tx,
                ctx,
                noop_deadline: None,
                shutting_down: false,
                published: None,
                snapshots,
                replay_pending: false,
                activated_epoch: None,
                controller: QuorumController::new(settings.controller.clone()),
                registrations: Registrations::new(),
                purgatory: Purgatory::default(),
                metrics: LoopMetrics::default(),
                settings,
            };
            node.run()
        })
        .expect("spawn the raft thread");
    (handle, thread)
}

pub(super) struct NodeLoop<L: RaftLog, S: QuorumStateStore> {
    pub(super) raft: Raft<L, S>,
    pub(super) clock: NodeClock,
    pub(super) events: mpsc::Receiver<Event>,
    pub(super) completions: tokio::sync::mpsc::UnboundedSender<Completion>,
    pub(super) peers: Peers,
    /// Connections for this node's requests to the active controller (ControllerRegistration),
    /// apart from raft's, as Java's controllers keep a channel of their own for them: a Java
    /// leader answers one connection's requests in order and holds a registration's answer
    /// until its record commits, which may need this node's next Fetch, queued behind it.
    pub(super) controller_channel: Peers,
    /// Outbound requests in flight: token -> (peer, correlation id, api).
    pub(super) in_flight: HashMap<u64, (NodeId, CorrelationId, ApiKind)>,
    pub(super) next_token: u64,
    /// Inbound requests waiting for the core's answer.
    pub(super) replies: HashMap<RequestId, oneshot::Sender<Response>>,
    pub(super) next_request: u64,
    pub(super) hw: watch::Sender<Offset>,
    pub(super) leader: watch::Sender<LeaderView>,
    pub(super) ctx: Arc<ServerContext>,
    /// When the leader next writes a NoOpRecord (None unless leading).
    pub(super) noop_deadline: Option<Instant>,
    pub(super) shutting_down: bool,
    /// The (leader, voter ids) last written to the quorum view.
    pub(super) published: Option<(Option<NodeId>, Vec<NodeId>)>,
    pub(super) snapshots: SnapshotPolicy,
    /// Committed batches wait to be replayed: the high watermark moved since the snapshot
    /// policy last looked, or its last turn left some for the next.
    pub(super) replay_pending: bool,
    /// The leader epoch whose activation check is done (NoOps wait for it).
    pub(super) activated_epoch: Option<i32>,
    /// The quorum controller: the metadata image and every decision made on it.
    pub(super) controller: QuorumController,
    /// This node's own controller registration.
    pub(super) registrations: Registrations,
    /// Replies waiting for their records to commit.
    pub(super) purgatory: Purgatory,
    /// What `/metrics` reports beyond the core's and the controller's state.
    pub(super) metrics: LoopMetrics,
    pub(super) settings: NodeSettings,
}

impl<L: RaftLog, S: QuorumStateStore> NodeLoop<L, S> {
    fn run(&mut self) -> Result<(), FatalError> {
        let first = self.raft.take_actions();
        self.execute(first)?;
        info!(
            target: "kraftd::raft",
            "raft node {} started at epoch {} as {}",
            self.raft.local_id().map_or("(none)".into(), |i| i.to_string()),
            self.raft.epoch(),
            self.raft.role().name()
        );
        self.publish_acls();
        self.publish_scram();
        loop {
            let deadline = self.next_deadline();
            let waiting = std::time::Instant::now();
            let first = match self.clock.until(deadline) {
                None => self
                    .events
                    .recv()
                    .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
                Some(wait) => self.events.recv_timeout(wait),
            };
            let turn = std::time::Instant::now();
            self.settings.health.turn_started();
            let mut actions = Vec::new();
            match first {
                Ok(event) => {
                    let mut budget = TurnBudget::default();
                    budget.count(&event);
                    self.handle(event, &mut actions)?;
                    while !budget.spent() {
                        match self.events.try_recv() {
                            Ok(event) => {
                                budget.count(&event);
                                self.handle(event, &mut actions)?
                            }
                            Err(_) => break,
                        }
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                // Every handle is gone: nothing can reach the node any more.
                Err(mpsc::RecvTimeoutError::Disconnected) => self.begin_shutdown(),
            }
            let now = self.clock.now();
            actions.extend(self.raft.step(now, Input::Tick));
            // A halted core takes no more work: its fatal action is carried out next, and
            // nothing else reports the fault a second time.
            if self.raft.fatal_error().is_none() {
                self.maybe_renounce()?;
                self.maybe_activate(now)?;
                self.maybe_write_noop(now)?;
                self.run_periodic(now)?;
            }
            actions.extend(self.raft.take_actions());
            self.execute(actions)?;
            if std::mem::take(&mut self.replay_pending) {
                // Committed batches may be another leader's: what this node wrote ahead as the
                // leader is reverted first.
                self.maybe_renounce()?;
                let replay = self
                    .snapshots
                    .on_commit(
                        &mut self.raft,
                        self.clock.now(),
                        self.settings
                            .replay_metadata
                            .then_some(self.controller.machine_mut()),
                    )
                    .map_err(|e| self.halt(e.fatal()))?;
                // The rest is replayed on the next turns, between events.
                self.replay_pending = replay == Replay::Behind;
                if replay == Replay::CaughtUp && self.raft.high_watermark().is_some() {
                    self.controller.caught_up();
                }
                self.publish_features();
                self.publish_acls();
                self.publish_scram();
                // A new leader activates as soon as its controller has caught up.
                if self.raft.fatal_error().is_none() {
                    self.maybe_activate(self.clock.now())?;
                }
            }
            self.maybe_renounce()?;
            self.release_parked();
            self.maybe_register_self(self.clock.now())?;
            let (idle, busy) = (turn - waiting, turn.elapsed());
            self.after_turn(
                self.clock.now(),
                idle.as_millis() as u64,
                busy.as_millis() as u64,
            );
            if self.shutting_down && self.raft.is_shutdown_complete(self.clock.now()) {
                self.raft
                    .flush()
                    .map_err(|e| self.halt(FatalError::storage(&e)))?;
                info!(
                    target: "kraftd::raft",
                    "raft node stopped at epoch {} (leader {:?}); log flushed",
                    self.raft.epoch(),
                    self.raft.leader_id()
                );
                return Ok(());
            }
        }
    }

    /// Stops the node the way Java halts: one error line naming the file, the operation and
    /// the OS error, then whatever can still be flushed. The caller exits non-zero.
    pub(super) fn halt(&mut self, why: FatalError) -> FatalError {
        error!(target: "kraftd::raft", "Halting: {why}");
        // Best effort: the log may be what failed, and the halt line is already out.
        let _ = self.raft.flush();
        why
    }

    fn next_deadline(&mut self) -> Instant {
        if self.replay_pending {
            // Committed batches are still to be replayed: no waiting.
            return Instant(0);
        }
        let d = self.raft.next_deadline();
        let d = self.noop_deadline.map_or(d, |t| d.min(t));
        let quorum = NodeQuorum {
            raft: &mut self.raft,
            now: self.clock.now(),
            shutting_down: self.shutting_down,
        };
        let due = self.controller.next_deadline(&quorum);
        due.map_or(d, |t| d.min(Instant(t)))
    }

    fn handle(&mut self, event: Event, actions: &mut Vec<Action>) -> Result<(), FatalError> {
        let now = self.clock.now();
        match event {
            Event::Inbound {
                listener,
                request,
                reply,
            } => {
                let id = RequestId(self.next_request);
                self.next_request += 1;
                self.replies.insert(id, reply);
                actions.extend(self.raft.step(
                    now,
                    Input::Request {
                        id,
                        listener: Some(listener),
                        request,
                    },
                ));
            }
            Event::Completion(c) => {
                if let Some(input) = self.completion_input(c) {
                    actions.extend(self.raft.step(now, input));
                }
            }
            Event::Append { records, reply } => {
                // The core's accumulator assigns the offsets now and appends after the linger.
                let epoch = self.raft.epoch();
                let landed = self.raft.propose(now, epoch, records).map(|p| Appended {
                    epoch: p.epoch,
                    last_offset: p.last_offset,
                });
                let _ = reply.send(landed);
            }
            Event::Node {
                listener: _,
                principal,
                request,
                reply,
                queued,
            } => {
                let started = std::time::Instant::now();
                let mut quorum = NodeQuorum {
                    raft: &mut self.raft,
                    now,
                    shutting_down: self.shutting_down,
                };
                let decision = self
                    .controller
                    .handle(now.0, &principal, request, &mut quorum);
                self.carry_out(now, decision, reply)?;
                self.metrics.events.handled(
                    started.saturating_duration_since(queued).as_millis() as u64,
                    started.elapsed().as_millis() as u64,
                );
            }
            Event::Metrics { reply, disk_of } => {
                let mut sample = self.metrics_sample(now);
                // One statvfs, on this thread rather than the HTTP side's blocking pool: the hop
                // there cost each scrape two thread wake-ups, more than the call. A filesystem
                // that hangs statvfs (a dead NFS server) hangs this loop's own writes to it
                // anyway; one that hangs statvfs alone (a broken FUSE daemon) would stall the
                // loop too, and /healthz then says so.
                sample.kraftd.metadata_dir = crate::server::disk_space::disk_space(&disk_of).ok();
                let _ = reply.send(Box::new(sample));
            }
            Event::SnapshotWritten(outcome) => self
                .snapshots
                .on_written(&mut self.raft, now, *outcome)
                .map_err(|e| self.halt(e.fatal()))?,
            Event::Shutdown => self.begin_shutdown(),
        }
        Ok(())
    }

    fn begin_shutdown(&mut self) {
        if !self.shutting_down {
            self.shutting_down = true;
            info!(
                target: "kraftd::raft",
                "shutting down: {} resigns and waits up to {:?} for a successor",
                self.raft.role().name(),
                self.settings.shutdown_timeout
            );
            let now = self.clock.now();
            self.raft
                .begin_shutdown(now, self.settings.shutdown_timeout);
        }
    }

    /// Maps a peer completion to the core's input (`None` for a stale token).
    fn completion_input(&mut self, c: Completion) -> Option<Input> {
        match c {
            Completion::Response {
                token,
                version,
                body,
                ..
            } => {
                if self.registrations.own_token == Some(token) {
                    self.own_registration_answered(Ok((version, body)));
                    return None;
                }
                let (to, corr, api) = self.in_flight.remove(&token)?;
                match decode_response(api, version, &body) {
                    Ok(response) => Some(Input::Response {
                        from: to,
                        corr,
                        response,
                    }),
                    Err(e) => {
                        warn!(
                            target: "kraftd::raft",
                            "unreadable {api:?} v{version} response from node {to}: {e}; treating it as a disconnect"
                        );
                        Some(Input::SendFailed {
                            to,
                            corr,
                            error: ErrorCode::BROKER_NOT_AVAILABLE,
                        })
                    }
                }
            }
            Completion::Failed {
                token,
                reason,
                kind,
                ..
            } => {
                if self.registrations.own_token == Some(token) {
                    self.own_registration_answered(Err(reason));
                    return None;
                }
                let (to, corr, api) = self.in_flight.remove(&token)?;
                debug!(target: "kraftd::raft", "{api:?} to node {to} failed: {reason}");
                Some(match kind {
                    FailKind::Refused => Input::ConnectionRefused { to, corr },
                    FailKind::Disconnected
                    | FailKind::Unresolved
                    | FailKind::NoPath
                    | FailKind::TimedOut
                    | FailKind::Tls
                    | FailKind::Sasl => Input::SendFailed {
                        to,
                        corr,
                        error: ErrorCode::BROKER_NOT_AVAILABLE,
                    },
                    FailKind::UnsupportedVersion => Input::SendFailed {
                        to,
                        corr,
                        error: ErrorCode::UNSUPPORTED_VERSION,
                    },
                })
            }
        }
    }

    /// The leader's periodic NoOpRecord (Kafka's `metadata.max.idle.interval.ms`), which keeps
    /// the high watermark and followers' fetch positions moving on an idle cluster.
    fn maybe_write_noop(&mut self, now: Instant) -> Result<(), FatalError> {
        let Some(interval) = self.settings.noop_interval else {
            return Ok(());
        };
        if !self.raft.is_leader()
            || self.shutting_down
            || self.activated_epoch != Some(self.raft.epoch())
        {
            self.noop_deadline = None;
            return Ok(());
        }
        match self.noop_deadline {
            None => self.noop_deadline = Some(now + interval),
            Some(d) if now >= d => {
                let noop = MetadataRecordAndVersion::new(NoOpRecord::default(), 0)
                    .encode()
                    .expect("NoOpRecord v0 encodes");
                if self.settings.replay_metadata {
                    let noop = Write {
                        records: vec![noop],
                        reply: None,
                        then: None,
                    };
                    self.write(now, noop, None)?;
                } else {
                    match self.raft.propose(now, self.raft.epoch(), vec![noop]) {
                        // The halt line names the fault; this is not a second report of it.
                        Ok(_) | Err(ProposeError::Stopped(_)) => {}
                        Err(e) => {
                            warn!(target: "kraftd::raft", "could not append a NoOpRecord: {e}")
                        }
                    }
                }
                self.noop_deadline = Some(now + interval);
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// A new leader's first write once its LeaderChange is committed (and with it every record
    /// before): Kafka's activation records, the bootstrap if the log holds no metadata.version
    /// yet, the abort of a metadata transaction a previous leader left open.
    fn maybe_activate(&mut self, now: Instant) -> Result<(), FatalError> {
        let Some(start) = self.raft.leader_epoch_start_offset() else {
            return Ok(());
        };
        let epoch = self.raft.epoch();
        if self.activated_epoch == Some(epoch)
            || self.raft.high_watermark().is_none_or(|hw| hw <= start)
        {
            return Ok(());
        }
        // The controller decides on an image holding every record before the epoch (as Java's
        // controller activates only once it has replayed them).
        // It also holds the epoch's LeaderChange batch, so that its own records follow the last
        // one it applied.
        if self.settings.replay_metadata && self.controller.machine().last_applied() < start {
            return Ok(());
        }
        self.activated_epoch = Some(epoch);
        if !self.settings.replay_metadata {
            return Ok(());
        }
        // The bootstrap checkpoint is read only if the log holds no metadata yet.
        let log = self.raft.log();
        let mut unreadable = None;
        let activation = self.controller.activate(now.0, epoch, || {
            activation::bootstrap_records(log).unwrap_or_else(|e| {
                unreadable = Some(e);
                None
            })
        });
        if let Some(e) = unreadable {
            return Err(self.halt(e));
        }
        match activation {
            Some(write) => self.write(now, write, None),
            None => Ok(()),
        }
    }

    fn execute(&mut self, actions: Vec<Action>) -> Result<(), FatalError> {
        for action in actions {
            match action {
                Action::Send {
                    to,
                    address,
                    corr,
                    request,
                } => self.send(to, address, corr, request),
                Action::Respond { id, response } => {
                    if let Some(reply) = self.replies.remove(&id) {
                        let _ = reply.send(response);
                    }
                }
                Action::Committed { upto: hw } => {
                    self.hw.send_replace(hw);
                    self.replay_pending = true;
                }
                Action::LeaderChange {
                    epoch,
                    leader,
                    local,
                } => debug!(
                    target: "kraftd::raft",
                    "the state machine learns leader {leader:?} of epoch {epoch} (local: {local})"
                ),
                Action::VotersChanged { offset, voters, .. } => {
                    let described: Vec<String> = voters
                        .nodes()
                        .map(|n| {
                            let endpoints: Vec<String> = n
                                .listeners
                                .iter()
                                .map(|(name, hp)| format!("{name}://{}:{}", hp.host, hp.port))
                                .collect();
                            format!("{} [{}]", n.key, endpoints.join(", "))
                        })
                        .collect();
                    info!(
                        target: "kraftd::raft",
                        "the voter set is now {{{}}} (VotersRecord at offset {offset}, in force from its append)",
                        described.join(", ")
                    );
                }
                Action::LoadSnapshot(id) => {
                    info!(target: "kraftd::raft", "the log now starts at snapshot {id}");
                }
                Action::RoleChanged {
                    epoch,
                    role,
                    leader,
                    voted,
                } => {
                    self.leader.send_replace(LeaderView {
                        epoch,
                        leader_id: leader,
                    });
                    info!(
                        target: "kraftd::raft",
                        "now {role} at epoch {epoch} (leader {}, voted {})",
                        leader.map_or("none".into(), |l| l.to_string()),
                        voted.map_or("none".into(), |v| v.to_string())
                    );
                }
                Action::Fatal(why) => return Err(self.halt(why)),
            }
        }
        self.publish_quorum_view();
        Ok(())
    }

    fn send(
        &mut self,
        to: NodeId,
        address: Option<crate::raft::HostPort>,
        corr: CorrelationId,
        request: crate::raft::Request,
    ) {
        let api = raft_api(request.api());
        let token = self.next_token;
        self.next_token += 1;
        self.in_flight.insert(token, (to, corr, api.kind));
        let Some(address) = address else {
            // Kafka's synthetic response for a node without a known address.
            let _ = self.completions.send(Completion::Failed {
                peer: to,
                token,
                reason: format!("no address known for node {to}"),
                kind: FailKind::Disconnected,
            });
            return;
        };
        let outbound = OutboundRequest {
            token,
            api_key: api.key,
            min_version: api.min_version,
            max_version: api.max_version,
            encode_body: Box::new(move |v| encode_request_body(&request, v)),
        };
        self.send_to_peer(to, &address, outbound);
    }

    /// Queues a request on the connection to `to` at `address` (opened or moved as needed).
    pub(super) fn send_to_peer(
        &mut self,
        to: NodeId,
        address: &crate::raft::HostPort,
        request: OutboundRequest,
    ) {
        self.peers.ensure(
            to,
            &address.to_string(),
            self.settings.peer.clone(),
            &self.completions,
        );
        self.peers.send(to, request, &self.completions);
    }

    /// Queues a request for the active controller `to` at `address` on the controller channel.
    pub(super) fn send_to_active_controller(
        &mut self,
        to: NodeId,
        address: &crate::raft::HostPort,
        request: OutboundRequest,
    ) {
        let settings = self.settings.controller_channel_peer();
        self.controller_channel
            .ensure(to, &address.to_string(), settings, &self.completions);
        self.controller_channel.send(to, request, &self.completions);
    }

    /// Writes the leader and the voters' endpoints to the view request handlers read
    /// (DescribeCluster names the active controller from it).
    fn publish_quorum_view(&mut self) {
        let leader = self.raft.leader_id();
        let voter_ids: Vec<NodeId> = self.raft.voters().ids().collect();
        let current = (leader, voter_ids);
        if self.published.as_ref() == Some(&current) {
            return;
        }
        let own = self.ctx.node_id;
        let others: Vec<ControllerEndpoint> = self
            .raft
            .voters()
            .nodes()
            .filter(|n| n.key.id != own)
            .flat_map(|n| {
                n.listeners
                    .iter()
                    .map(move |(name, addr)| ControllerEndpoint {
                        node_id: n.key.id,
                        listener: name.clone(),
                        host: addr.host.clone(),
                        port: addr.port,
                    })
            })
            .collect();
        self.ctx.update_quorum(|view| {
            view.leader_id = leader;
            view.controllers.retain(|c| c.node_id == own);
            view.controllers.extend(others);
        });
        self.published = Some(current);
    }
}
