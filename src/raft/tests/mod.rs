//! Handler tests: one input into a hand-built node, then assertions on the exact actions, the
//! new role and what was persisted. Helpers build nodes in a given state.

mod early_election_tests;
mod election_tests;
mod interop_tests;
mod mem_log_segment_tests;
mod propose_tests;
mod quorum_epoch_tests;
mod replication_tests;
mod robustness_tests;
mod snapshot_stream_tests;
mod snapshot_tests;

use crate::protocol::codec::Uuid;
use crate::protocol::errors::ErrorCode;
use crate::raft::config::RaftConfig;
use crate::raft::log::{Batch, RaftLog, Records};
use crate::raft::mem_log::MemLog;
use crate::raft::msg::{
    CorrelationId, FetchRequest, Request, RequestId, Response, VoteRequest, VoteResponse,
};
use crate::raft::node::{Action, Input, Raft};
use crate::raft::quorum_state::{ElectionState, MemQuorumStateStore, QuorumStateStore};
use crate::raft::time::Instant;
use crate::raft::types::{Endpoints, Epoch, HostPort, NodeId, Offset, ReplicaKey};

pub(super) type TestRaft = Raft<MemLog, MemQuorumStateStore>;

pub(super) const CLUSTER: &str = "test-cluster";

pub(super) fn addr(id: NodeId) -> HostPort {
    HostPort::new(format!("host{id}"), 9000 + id.max(0) as u16)
}

pub(super) fn key(id: NodeId) -> ReplicaKey {
    ReplicaKey::new(id, Some(dir(id)))
}

pub(super) fn dir(id: NodeId) -> Uuid {
    Uuid::from_u64s(7, id as u64)
}

pub(super) fn cfg(id: NodeId, voters: &[NodeId]) -> RaftConfig {
    let mut c = RaftConfig::new(Some(id), dir(id), CLUSTER);
    c.listeners = Endpoints::single("CONTROLLER", addr(id));
    c.static_voters = voters.iter().map(|&v| (v, addr(v))).collect();
    c.randomness = crate::raft::time::Randomness::Seeded(1);
    // Proposals reach the log at once unless a test is about the linger.
    c.append_linger = std::time::Duration::ZERO;
    c
}

/// The state machine's snapshot of `data` at `id`, streamed through the writer.
pub(super) fn take_snapshot(
    raft: &mut TestRaft,
    id: crate::raft::types::OffsetAndEpoch,
    last_contained_log_timestamp: i64,
    data: &[Vec<u8>],
) -> Result<(), crate::raft::SnapshotError> {
    let mut writer = raft.snapshot_writer(id, last_contained_log_timestamp)?;
    writer
        .append(data)
        .map_err(crate::raft::SnapshotError::Log)?;
    raft.freeze_snapshot(writer)
}

/// A retained snapshot's bytes, as stored.
pub(super) fn snapshot_file(raft: &TestRaft, id: crate::raft::types::OffsetAndEpoch) -> Vec<u8> {
    let size = raft.log().snapshot_size(id).expect("the snapshot exists");
    raft.log()
        .read_snapshot_chunk(id, 0, size as usize)
        .expect("memory reads")
        .expect("a non-empty snapshot")
}

/// A batch of `n` data records.
pub(super) fn data(base: Offset, epoch: Epoch, n: usize) -> Batch {
    Batch {
        base_offset: base,
        epoch,
        append_time: 0,
        records: Records::Data((0..n).map(|i| vec![i as u8]).collect()),
        encoded: Default::default(),
    }
}

/// A flushed log holding `batches`.
pub(super) fn log_with(batches: Vec<Batch>) -> MemLog {
    let mut log = MemLog::new();
    log.append_as_follower(batches).expect("contiguous");
    RaftLog::flush(&mut log).expect("memory flush");
    log
}

/// Starts node `id` at t=0 from a persisted state and a log; returns it and its first actions.
pub(super) fn start(
    id: NodeId,
    voters: &[NodeId],
    state: Option<ElectionState>,
    log: MemLog,
) -> (TestRaft, Vec<Action>) {
    start_with(cfg(id, voters), state, log)
}

/// Starts a node at t=0 with its own config.
pub(super) fn start_with(
    config: RaftConfig,
    state: Option<ElectionState>,
    log: MemLog,
) -> (TestRaft, Vec<Action>) {
    let store = state.map(MemQuorumStateStore::with).unwrap_or_default();
    let mut raft = Raft::new(config, log, store, Instant(0));
    let actions = raft.take_actions();
    (raft, actions)
}

pub(super) fn sends(actions: &[Action]) -> Vec<(NodeId, CorrelationId, Request)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send {
                to, corr, request, ..
            } => Some((*to, *corr, request.clone())),
            _ => None,
        })
        .collect()
}

pub(super) fn replies(actions: &[Action]) -> Vec<(RequestId, Response)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Respond { id, response } => Some((*id, response.clone())),
            _ => None,
        })
        .collect()
}

/// The only reply in `actions`.
pub(super) fn reply(actions: &[Action]) -> Response {
    let r = replies(actions);
    assert_eq!(r.len(), 1, "expected exactly one reply in {actions:#?}");
    r[0].1.clone()
}

pub(super) fn request(raft: &mut TestRaft, now: u64, id: u64, request: Request) -> Vec<Action> {
    raft.step(
        Instant(now),
        Input::Request {
            id: RequestId(id),
            listener: None,
            request,
        },
    )
}

pub(super) fn respond(
    raft: &mut TestRaft,
    now: u64,
    from: NodeId,
    corr: CorrelationId,
    response: Response,
) -> Vec<Action> {
    raft.step(
        Instant(now),
        Input::Response {
            from,
            corr,
            response,
        },
    )
}

pub(super) fn tick(raft: &mut TestRaft, now: u64) -> Vec<Action> {
    raft.step(Instant(now), Input::Tick)
}

pub(super) fn vote_request(
    candidate: NodeId,
    epoch: Epoch,
    last: Offset,
    last_epoch: Epoch,
    pre_vote: bool,
) -> VoteRequest {
    VoteRequest {
        cluster_id: Some(CLUSTER.into()),
        voter_id: -1,
        voter_directory_id: None,
        partition_ok: true,
        candidate_epoch: epoch,
        candidate_key: key(candidate),
        last_offset_epoch: last_epoch,
        last_offset: last,
        pre_vote,
    }
}

pub(super) fn granted(epoch: Epoch) -> Response {
    Response::Vote(VoteResponse {
        partition_ok: true,
        leader_epoch: epoch,
        vote_granted: true,
        ..VoteResponse::default()
    })
}

pub(super) fn fetch_request(
    replica: NodeId,
    epoch: Epoch,
    offset: Offset,
    last_epoch: Epoch,
) -> FetchRequest {
    FetchRequest {
        cluster_id: Some(CLUSTER.into()),
        replica_key: key(replica),
        max_wait_ms: 500,
        max_bytes: 1 << 20,
        partition_ok: true,
        current_leader_epoch: epoch,
        fetch_offset: offset,
        last_fetched_epoch: last_epoch,
        high_watermark: None,
    }
}

/// Node `id` elected leader of `epoch` (over `log`): it resumes its candidacy from quorum-state
/// and gets the other voters' grants. Returns the node and the actions of the winning step.
pub(super) fn leader(
    id: NodeId,
    voters: &[NodeId],
    epoch: Epoch,
    log: MemLog,
) -> (TestRaft, Vec<Action>) {
    leader_with(cfg(id, voters), epoch, log)
}

/// `leader` with its own config.
pub(super) fn leader_with(
    config: RaftConfig,
    epoch: Epoch,
    log: MemLog,
) -> (TestRaft, Vec<Action>) {
    let id = config.node_id.expect("a node id");
    let state = ElectionState {
        epoch,
        leader_id: None,
        voted_key: Some(key(id)),
    };
    let (mut raft, actions) = start_with(config, Some(state), log);
    let mut last = actions;
    for (to, corr, req) in sends(&last.clone()) {
        if matches!(req, Request::Vote(_)) && !raft.is_leader() {
            last = respond(&mut raft, 1, to, corr, granted(epoch));
        }
    }
    assert!(raft.is_leader(), "{}", raft.role());
    (raft, last)
}

/// Node `id`, a follower of `leader_id` in `epoch` (from quorum-state).
pub(super) fn follower(
    id: NodeId,
    voters: &[NodeId],
    epoch: Epoch,
    leader_id: NodeId,
    log: MemLog,
) -> TestRaft {
    let state = ElectionState {
        epoch,
        leader_id: Some(leader_id),
        voted_key: None,
    };
    start(id, voters, Some(state), log).0
}

pub(super) fn vote_reply(r: &Response) -> &VoteResponse {
    match r {
        Response::Vote(v) => v,
        other => panic!("not a vote response: {other:?}"),
    }
}

pub(super) const NONE: ErrorCode = ErrorCode::NONE;

/// A follower as `follower` builds it, with the Fetch it sent at start.
pub(super) fn follower_fetching(
    id: NodeId,
    voters: &[NodeId],
    epoch: Epoch,
    leader_id: NodeId,
    log: MemLog,
) -> (TestRaft, CorrelationId, FetchRequest) {
    let state = ElectionState {
        epoch,
        leader_id: Some(leader_id),
        voted_key: None,
    };
    let (raft, actions) = start(id, voters, Some(state), log);
    let (to, corr, req) = sends(&actions)
        .into_iter()
        .next()
        .expect("a fetch at start");
    assert_eq!(to, leader_id);
    match req {
        Request::Fetch(f) => (raft, corr, f),
        other => panic!("expected a fetch, got {other:?}"),
    }
}

/// The Fetch among `actions`, if any.
pub(super) fn next_fetch(actions: &[Action]) -> Option<(CorrelationId, FetchRequest)> {
    sends(actions).into_iter().find_map(|(_, corr, r)| match r {
        Request::Fetch(f) => Some((corr, f)),
        _ => None,
    })
}
