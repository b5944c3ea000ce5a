//! `Raft`: the sans-IO KRaft node. Inputs are requests, responses and the passing of time;
//! outputs are `Action`s. The log and the quorum-state store are synchronous traits.

use super::config::RaftConfig;
use super::fatal::FatalError;
use super::log::{LogError, RaftLog};
use super::msg::{CorrelationId, Request, RequestId, Response};
use super::quorum_state::{ElectionState, QuorumStateStore};
use super::requests::RequestManager;
use super::role::{
    CandidateState, EpochElection, FollowerState, ResignedState, Role, UnattachedState,
};
use super::time::{Chooser, Instant};
use super::types::{
    Endpoints, Epoch, HostPort, NodeId, Offset, OffsetAndEpoch, ReplicaKey, VoterSet,
};
use super::voters::ControlState;
use crate::protocol::errors::ErrorCode;

/// Something that happened to the node.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Time passed; only timers run.
    Tick,
    /// An inbound request; `listener` is the listener it arrived on (`None` = default).
    Request {
        id: RequestId,
        listener: Option<String>,
        request: Request,
    },
    /// The response to an outbound request.
    Response {
        from: NodeId,
        corr: CorrelationId,
        response: Response,
    },
    /// The driver could not get a response for request `corr` to `to` (Kafka's synthetic
    /// responses): disconnect or timeout -> `BROKER_NOT_AVAILABLE`, authentication ->
    /// `NETWORK_EXCEPTION`, no common version -> `UNSUPPORTED_VERSION`.
    SendFailed {
        to: NodeId,
        corr: CorrelationId,
        error: ErrorCode,
    },
    /// The connection for request `corr` to `to` was refused: nothing listens at its address,
    /// so its process is gone (a live but stalled process still accepts connections). Fails
    /// the request as `SendFailed` with `BROKER_NOT_AVAILABLE` does, and tells a follower that
    /// its leader is gone (`RaftConfig::early_election_step`).
    ConnectionRefused { to: NodeId, corr: CorrelationId },
}

/// An effect for the driver, to be carried out in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send a request to `to` at `address` (unknown only for ids without endpoints).
    Send {
        to: NodeId,
        address: Option<HostPort>,
        corr: CorrelationId,
        request: Request,
    },
    /// Answer inbound request `id`.
    Respond { id: RequestId, response: Response },
    /// The high watermark moved up: every offset below `upto` is committed. Never decreases.
    Committed { upto: Offset },
    /// The state machine's view of the leadership changed (Kafka's `handleLeaderChange`):
    /// `leader` leads `epoch` (`None`: unknown, or this node resigned). A new local leader is
    /// announced only once a record of its own epoch is committed, after the `Committed`
    /// that makes everything before it readable; other nodes when they learn the leader.
    LeaderChange {
        epoch: Epoch,
        leader: Option<NodeId>,
        local: bool,
    },
    /// The log now starts at this downloaded snapshot: the state machine must load it.
    LoadSnapshot(OffsetAndEpoch),
    /// A VotersRecord at `offset` was appended (not yet committed), by this node as leader or
    /// from its leader: `voters` is the voter set in force from there (informational: logs,
    /// transcripts, checks).
    VotersChanged {
        offset: Offset,
        voters: VoterSet,
        as_leader: bool,
    },
    /// The role changed (informational: listeners, metrics, transcripts).
    RoleChanged {
        epoch: Epoch,
        role: &'static str,
        leader: Option<NodeId>,
        voted: Option<ReplicaKey>,
    },
    /// Java would throw or halt here; the node must stop. Nothing is processed afterwards.
    Fatal(FatalError),
}

/// Why a proposal was refused (Kafka's `prepareAppend` exceptions).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProposeError {
    /// The proposal was decided in another epoch than the current one.
    #[error("proposed in epoch {proposed}, but the current epoch is {current}")]
    EpochMismatch { proposed: Epoch, current: Epoch },
    #[error("not the leader (epoch {epoch}, leader {leader:?})")]
    NotLeader {
        epoch: Epoch,
        leader: Option<NodeId>,
    },
    #[error("empty proposal")]
    Empty,
    /// Too large for a batch, or too many batches waiting (backpressure).
    #[error(transparent)]
    Refused(#[from] super::accumulator::AccumulateError),
    /// The node has halted (a storage fault or an illegal state); nothing is appended.
    #[error("the node has stopped: {0}")]
    Stopped(FatalError),
}

/// The KRaft node. `L` is the metadata log, `S` the quorum-state store.
pub struct Raft<L: RaftLog, S: QuorumStateStore> {
    pub(super) cfg: RaftConfig,
    /// (node id, directory id); `None` for a node without id (observer only).
    pub(super) local: Option<ReplicaKey>,
    pub(super) log: L,
    pub(super) store: S,
    /// Election jitter and bootstrap choices (`RaftConfig::randomness`).
    pub(super) chooser: Chooser,
    pub(super) role: Role,
    /// Counts role changes; a poll loops while it moves.
    pub(super) transitions: u64,
    /// Elections this node started as a candidate (for metrics; monotonic).
    pub(super) elections_started: u64,
    pub(super) control: ControlState,
    /// Offsets below it are committed. Invariant: <= the log end offset; monotonic except that a
    /// new leader starts unknown (`None`) and re-establishes it at a value >= the old one.
    pub(super) high_watermark: Option<Offset>,
    /// The largest HW ever reported through `Action::Committed` (monotonicity check).
    pub(super) reported_hw: Option<Offset>,
    pub(super) requests: RequestManager,
    /// Long-polling Fetches (Kafka's fetch purgatory). Invariant: empty unless Leader.
    pub(super) parked: Vec<super::fetch_leader::ParkedFetch>,
    pub(super) out: Vec<Action>,
    pub(super) next_deadline: Instant,
    pub(super) fatal: Option<FatalError>,
    /// The last `now` seen (time must not go back).
    pub(super) now: Instant,
    /// Set by `begin_shutdown`: the deadline of a graceful shutdown (Kafka's `GracefulShutdown`).
    /// Invariant: until it passes, `next_deadline` is no later, so that a driver with nothing
    /// else to wake it still sees the shutdown complete.
    pub(super) shutdown: Option<Instant>,
    /// The (epoch, leader) last told to the state machine (`Action::LeaderChange`).
    pub(super) announced_leader: Option<(Epoch, Option<NodeId>)>,
}

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// Opens the node (Kafka's `KafkaRaftClient.initialize` + `QuorumState.initialize`): brings
    /// the log in line with its latest snapshot, rebuilds the voter history, reads quorum-state,
    /// picks the initial role and writes it back. Actions produced (e.g. a single voter
    /// electing itself) wait in `take_actions()`.
    ///
    /// The voter history comes from where Kafka's `KRaftControlRecordStateMachine` takes it:
    /// the latest snapshot (its header batch), then the log's control batches from that
    /// snapshot's end offset on. Nothing below the snapshot is read, nor any data record.
    pub fn new(cfg: RaftConfig, mut log: L, store: S, now: Instant) -> Self {
        let local = cfg
            .node_id
            .map(|id| ReplicaKey::new(id, super::types::uuid_opt(cfg.directory_id)));
        let static_voters = VoterSet::from_static(&cfg.default_listener, &cfg.static_voters);
        let mut control = ControlState::new(static_voters);
        // A fault while opening is the node's first (and only) action.
        let opened = (|| -> Result<(), LogError> {
            log.truncate_to_latest_snapshot()?;
            let mut from = log.start_offset();
            if let Some(id) = log.latest_snapshot_id() {
                if let Some(snapshot) = log.open_snapshot(id)? {
                    control.load_snapshot(snapshot.header());
                    from = from.max(id.offset);
                }
            }
            for b in log.read_control_batches(from)? {
                control.apply_batch(&b);
            }
            Ok(())
        })();
        let requests = RequestManager::new(cfg.request_timeout, cfg.retry_backoff);
        let chooser = Chooser::new(&cfg.randomness);
        let placeholder = Role::Unattached(UnattachedState {
            epoch: 0,
            leader_id: None,
            voted_key: None,
            election_deadline: Instant::NEVER,
        });
        let mut raft = Raft {
            cfg,
            local,
            log,
            store,
            chooser,
            role: placeholder,
            transitions: 0,
            elections_started: 0,
            control,
            high_watermark: None,
            reported_hw: None,
            requests,
            parked: Vec::new(),
            out: Vec::new(),
            next_deadline: now,
            fatal: None,
            now,
            shutdown: None,
            announced_leader: None,
        };
        if let Err(e) = opened {
            raft.halt(FatalError::storage(&e));
            return raft;
        }
        raft.initialize(now);
        raft.poll(now);
        raft
    }

    fn initialize(&mut self, now: Instant) {
        let election = match self.store.read_election_state() {
            Ok(stored) => stored.unwrap_or_else(|| ElectionState::unknown(0)),
            Err(e) => return self.halt(FatalError::quorum_state(&e)),
        };
        let log_epoch = self.log.last_fetched_epoch();
        let local = self.local;
        let is_voter = self.is_voter();
        let timeout = if is_voter {
            now.plus_millis(self.chooser.election_timeout(self.cfg.election_timeout))
        } else {
            Instant::NEVER
        };
        let unattached = |epoch, leader_id, voted_key| {
            Role::Unattached(UnattachedState {
                epoch,
                leader_id,
                voted_key,
                election_deadline: timeout,
            })
        };
        let role = if election.epoch < log_epoch {
            unattached(log_epoch, None, None)
        } else if local.is_some() && election.leader_id == local.map(|k| k.id) {
            // A restarted leader neither votes nor leads again in its epoch.
            Role::Resigned(ResignedState {
                epoch: election.epoch,
                election_deadline: now
                    .plus_millis(self.chooser.election_timeout(self.cfg.election_timeout)),
                unacked_voters: Default::default(),
                preferred_successors: Vec::new(),
            })
        } else if let (Some(l), Some(v)) = (local, election.voted_key) {
            if v.id == l.id
                && (v.directory_id.is_none() || v.directory_id == l.directory_id)
                && is_voter
            {
                Role::Candidate(CandidateState {
                    epoch: election.epoch,
                    election: EpochElection::new(self.voters().ids(), l.id),
                    election_deadline: timeout,
                })
            } else {
                unattached(election.epoch, None, Some(v))
            }
        } else if let Some(v) = election.voted_key {
            unattached(election.epoch, None, Some(v))
        } else if let Some(leader) = election.leader_id {
            let endpoints = self.voters().listeners(leader);
            if endpoints.is_empty() || Some(leader) == local.map(|k| k.id) {
                unattached(election.epoch, Some(leader), None)
            } else {
                self.new_follower(election.epoch, leader, endpoints, None, now)
            }
        } else {
            unattached(election.epoch, None, None)
        };
        self.transition(now, role, true);
        if self.is_only_voter()
            && matches!(
                self.role,
                Role::Unattached(_) | Role::Follower(_) | Role::Resigned(_)
            )
        {
            self.transition_to_prospective(now);
        } else if matches!(self.role, Role::Candidate(_)) {
            self.maybe_become_leader(now);
        }
    }

    pub(super) fn new_follower(
        &mut self,
        epoch: Epoch,
        leader_id: NodeId,
        leader_endpoints: Endpoints,
        voted_key: Option<ReplicaKey>,
        now: Instant,
    ) -> Role {
        Role::Follower(FollowerState {
            epoch,
            leader_id,
            leader_endpoints,
            voted_key,
            fetch_deadline: now + self.cfg.fetch_timeout,
            has_fetched_from_leader: false,
            early_election_at: None,
            fetching_snapshot: None,
            // Kafka's update-voter-set period starts with the follower state.
            voter_update_at: now + self.cfg.fetch_timeout,
            has_updated_leader: false,
        })
    }

    /// Handles one input, then runs the timers. Returns the actions to carry out, in order.
    pub fn step(&mut self, now: Instant, input: Input) -> Vec<Action> {
        if self.fatal.is_none() {
            self.advance_time(now);
            match input {
                Input::Tick => {}
                Input::Request {
                    id,
                    listener,
                    request,
                } => self.handle_request(now, id, listener, request),
                Input::Response {
                    from,
                    corr,
                    response,
                } => self.handle_response(now, from, corr, response),
                Input::SendFailed { to, corr, error } => self.send_failed(now, to, corr, error),
                Input::ConnectionRefused { to, corr } => {
                    self.note_connection_refused(now, to);
                    self.send_failed(now, to, corr, ErrorCode::BROKER_NOT_AVAILABLE);
                }
            }
            self.poll(now);
        }
        self.take_actions()
    }

    fn send_failed(&mut self, now: Instant, to: NodeId, corr: CorrelationId, error: ErrorCode) {
        if let Some(api) = self.requests.in_flight_api(to, corr) {
            self.handle_response(now, to, corr, Response::top_level_error(api, error));
        }
    }

    fn advance_time(&mut self, now: Instant) {
        debug_assert!(now >= self.now, "time went back: {} < {}", now, self.now);
        self.now = self.now.max(now);
    }

    /// Drains the pending actions. Nothing after a fatal action is returned: the code that
    /// ran on after the fault (a send after a quorum-state write that failed) acted on a state
    /// that is not durable.
    pub fn take_actions(&mut self) -> Vec<Action> {
        #[cfg(any(test, debug_assertions))]
        if self.fatal.is_none() {
            if let Err(e) = self.check_invariants() {
                panic!("raft invariant broken on node {:?}: {e}", self.local_id());
            }
        }
        let mut out = std::mem::take(&mut self.out);
        if let Some(i) = out.iter().position(|a| matches!(a, Action::Fatal(_))) {
            out.truncate(i + 1);
        }
        out
    }

    /// When `step(now, Input::Tick)` must next be called, at the latest.
    pub fn next_deadline(&self) -> Instant {
        self.next_deadline
    }

    pub(super) fn poll(&mut self, now: Instant) {
        if self.fatal.is_some() {
            return;
        }
        self.expire_parked_fetches(now);
        for _ in 0..8 {
            let before = self.transitions;
            match &self.role {
                Role::Leader(_) => self.poll_leader(now),
                Role::Candidate(_) => self.poll_candidate(now),
                Role::Prospective(_) => self.poll_prospective(now),
                Role::Follower(_) => self.poll_follower(now),
                Role::Unattached(_) => self.poll_unattached(now),
                Role::Resigned(_) => self.poll_resigned(now),
            }
            if self.transitions == before || self.fatal.is_some() {
                break;
            }
        }
        self.maybe_announce_leader();
        self.next_deadline = self.compute_next_deadline(now);
    }

    fn compute_next_deadline(&self, now: Instant) -> Instant {
        let role = match &self.role {
            // Shutting down, only requests (and parked fetches) have timers left, and the
            // shutdown's own deadline while ahead: with every peer gone nothing else wakes the
            // driver. Past it the shutdown is complete and the driver stops the node.
            _ if self.shutdown.is_some() => {
                self.shutdown.filter(|d| *d > now).unwrap_or(Instant::NEVER)
            }
            // A voter removed while unattached no longer elects; its fetches have timers.
            Role::Unattached(_) if !self.is_voter() => Instant::NEVER,
            Role::Unattached(s) => s.election_deadline,
            Role::Prospective(s) => s.election_deadline,
            Role::Candidate(s) => s.election_deadline,
            Role::Leader(s) => s
                .check_quorum_deadline()
                .min(s.begin_quorum_deadline)
                .min(s.accumulator.drain_deadline()),
            // An observer past its fetch timeout keeps asking bootstrap servers (request timers).
            Role::Follower(s) if s.fetch_deadline <= now && !self.is_voter() => Instant::NEVER,
            // Only a voter elects early (one removed from the voters may still hold the time).
            Role::Follower(s) if self.is_voter() => s
                .early_election_at
                .map_or(s.fetch_deadline, |e| e.min(s.fetch_deadline)),
            Role::Follower(s) => s.fetch_deadline,
            Role::Resigned(s) => s.election_deadline,
        };
        let parked = self
            .parked
            .iter()
            .map(|p| p.deadline)
            .min()
            .unwrap_or(Instant::NEVER);
        role.min(parked)
            .min(self.voter_change_deadline())
            .min(self.requests.next_change(now))
            .max(now)
    }

    /// Records a fatal condition (Java would throw); the node stops.
    pub(super) fn fail(&mut self, why: String) {
        self.halt(FatalError::Illegal(why));
    }

    pub(super) fn halt(&mut self, why: FatalError) {
        if self.fatal.is_none() {
            self.out.push(Action::Fatal(why.clone()));
            self.fatal = Some(why);
        }
    }

    /// The value of a log operation; on an error, the node's fatal action and `None` (a
    /// refusal of what the core itself built is a bug, a fault is a halt).
    pub(super) fn log_value<T>(&mut self, result: Result<T, LogError>) -> Option<T> {
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                self.halt(FatalError::storage(&e));
                None
            }
        }
    }

    pub(super) fn send(
        &mut self,
        now: Instant,
        to: NodeId,
        address: Option<HostPort>,
        request: Request,
    ) {
        let corr = self.requests.on_send(to, request.api(), now);
        self.out.push(Action::Send {
            to,
            address,
            corr,
            request,
        });
    }

    // ---- accessors ----

    pub fn role(&self) -> &Role {
        &self.role
    }
    pub fn epoch(&self) -> Epoch {
        self.role.epoch()
    }
    pub fn local_id(&self) -> Option<NodeId> {
        self.local.map(|k| k.id)
    }
    pub fn leader_id(&self) -> Option<NodeId> {
        self.role.leader_id(self.local_id())
    }
    pub fn is_leader(&self) -> bool {
        matches!(self.role, Role::Leader(_))
    }
    /// The leader's epoch start offset (its LeaderChange record), when leading.
    pub fn leader_epoch_start_offset(&self) -> Option<Offset> {
        match &self.role {
            Role::Leader(l) => Some(l.epoch_start_offset),
            _ => None,
        }
    }
    pub fn high_watermark(&self) -> Option<Offset> {
        self.high_watermark
    }
    /// The offset the leader's next proposal gets (Kafka's `nextWriteOffset`), when leading.
    pub fn next_proposal_offset(&self) -> Option<Offset> {
        match &self.role {
            Role::Leader(l) => Some(l.accumulator.next_offset()),
            _ => None,
        }
    }
    pub fn log(&self) -> &L {
        &self.log
    }
    pub fn store(&self) -> &S {
        &self.store
    }
    pub fn config(&self) -> &RaftConfig {
        &self.cfg
    }
    pub fn voters(&self) -> &VoterSet {
        self.control.latest_voters()
    }
    pub fn kraft_version(&self) -> i16 {
        self.control.kraft_version()
    }
    /// The voter set in force at `offset` (uncommitted VotersRecords take effect when appended).
    pub fn voters_at(&self, offset: Offset) -> &VoterSet {
        self.control.voters_at(offset)
    }
    /// The voter sets recorded since the latest snapshot, by offset (−1: the bootstrap
    /// checkpoint's); empty for static voters.
    pub fn voter_history(&self) -> &[(Offset, VoterSet)] {
        self.control.voter_history()
    }
    pub fn fatal_error(&self) -> Option<&FatalError> {
        self.fatal.as_ref()
    }
    /// Is the local replica a voter of the latest voter set?
    pub fn is_voter(&self) -> bool {
        self.local
            .is_some_and(|k| self.control.latest_voters().is_voter(&k))
    }
    pub fn is_only_voter(&self) -> bool {
        self.local
            .is_some_and(|k| self.control.latest_voters().is_only_voter(&k))
    }
    /// Makes everything appended durable (before a clean stop).
    pub fn flush(&mut self) -> Result<(), LogError> {
        self.log.flush()
    }
    /// Gives back the log and the store (e.g. to simulate a crash and restart).
    pub fn into_parts(self) -> (L, S) {
        (self.log, self.store)
    }
}
