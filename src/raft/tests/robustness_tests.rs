//! Arbitrary (well-typed) inputs from confused or hostile peers must never panic the core or
//! break its invariants (which `take_actions` checks in tests). Kafka throws on some of them;
//! a Rust node answers or ignores them instead. Only the conditions Java treats as fatal for
//! its own data may stop the node.

use super::*;
use crate::raft::msg::*;
use crate::raft::time::Rng;
use crate::raft::types::OffsetAndEpoch;

fn pick<T: Copy>(rng: &mut Rng, items: &[T]) -> T {
    *rng.pick(items).expect("non-empty")
}

fn random_request(rng: &mut Rng) -> Request {
    let id = pick(rng, &[-1, 1, 2, 3, 4]);
    let epoch = pick(rng, &[0, 1, 2, 3, 4]);
    let offset = pick(rng, &[-1i64, 0, 1, 2, 5, 9]);
    let partition_ok = rng.below(8) != 0;
    let cluster_id = pick(rng, &[Some(CLUSTER), None, Some("other")]).map(String::from);
    match rng.below(6) {
        0 => Request::Vote(VoteRequest {
            cluster_id,
            voter_id: pick(rng, &[-1, 1, 2]),
            voter_directory_id: None,
            partition_ok,
            candidate_epoch: epoch,
            candidate_key: key(id),
            last_offset_epoch: pick(rng, &[0, 1, 2, 5]),
            last_offset: offset,
            pre_vote: rng.below(2) == 0,
        }),
        1 => Request::BeginQuorumEpoch(BeginQuorumEpochRequest {
            cluster_id,
            voter_id: pick(rng, &[-1, 1, 2]),
            voter_directory_id: None,
            partition_ok,
            leader_id: id,
            leader_epoch: epoch,
            leader_endpoints: if rng.below(2) == 0 {
                Endpoints::empty()
            } else {
                Endpoints::single("CONTROLLER", addr(id))
            },
        }),
        2 => Request::EndQuorumEpoch(EndQuorumEpochRequest {
            cluster_id,
            partition_ok,
            leader_id: id,
            leader_epoch: epoch,
            preferred_candidates: vec![key(1), key(2)],
            leader_endpoints: Endpoints::empty(),
        }),
        3 => Request::Fetch(FetchRequest {
            cluster_id,
            replica_key: key(id),
            max_wait_ms: pick(rng, &[-1, 0, 500]),
            max_bytes: pick(rng, &[-1, 0, 100, 1 << 20]),
            partition_ok,
            current_leader_epoch: epoch,
            fetch_offset: offset,
            last_fetched_epoch: pick(rng, &[-1, 0, 1, 2, 3]),
            high_watermark: pick(rng, &[None, Some(-1), Some(3)]),
        }),
        4 => Request::FetchSnapshot(FetchSnapshotRequest {
            cluster_id,
            replica_key: key(id),
            max_bytes: pick(rng, &[-1, 0, 10]),
            partition_ok,
            current_leader_epoch: epoch,
            snapshot_id: OffsetAndEpoch::new(offset, epoch),
            position: pick(rng, &[-1, 0, 5, 1000]),
        }),
        _ => Request::DescribeQuorum(DescribeQuorumRequest { partition_ok }),
    }
}

fn random_response(rng: &mut Rng, api: ApiKind) -> Response {
    let error = pick(
        rng,
        &[
            ErrorCode::NONE,
            ErrorCode::NONE,
            ErrorCode::BROKER_NOT_AVAILABLE,
            ErrorCode::INCONSISTENT_CLUSTER_ID,
        ],
    );
    let partition_error = pick(
        rng,
        &[
            ErrorCode::NONE,
            ErrorCode::NONE,
            ErrorCode::FENCED_LEADER_EPOCH,
            ErrorCode::NOT_LEADER_OR_FOLLOWER,
            ErrorCode::UNKNOWN_LEADER_EPOCH,
            ErrorCode::INVALID_REQUEST,
            ErrorCode::SNAPSHOT_NOT_FOUND,
        ],
    );
    let leader_id = pick(rng, &[-1, 1, 2, 3]);
    let leader_epoch = pick(rng, &[0, 1, 2, 3, 4]);
    let leader_endpoint = if rng.below(2) == 0 {
        None
    } else {
        Some(addr(leader_id.max(1)))
    };
    let partition_ok = rng.below(8) != 0;
    match api {
        ApiKind::Vote => Response::Vote(VoteResponse {
            error,
            partition_ok,
            partition_error,
            leader_id,
            leader_epoch,
            vote_granted: rng.below(2) == 0,
            leader_endpoint,
        }),
        ApiKind::BeginQuorumEpoch | ApiKind::EndQuorumEpoch => {
            let r = QuorumEpochResponse {
                error,
                partition_ok,
                partition_error,
                leader_id,
                leader_epoch,
                leader_endpoint,
            };
            if api == ApiKind::BeginQuorumEpoch {
                Response::BeginQuorumEpoch(r)
            } else {
                Response::EndQuorumEpoch(r)
            }
        }
        ApiKind::Fetch => Response::Fetch(FetchResponse {
            error,
            partition_ok,
            partition_error,
            high_watermark: pick(rng, &[-1, 0, 1, 2, 7]),
            log_start_offset: 0,
            diverging_epoch: pick(
                rng,
                &[
                    None,
                    Some(OffsetAndEpoch::new(1, 1)),
                    Some(OffsetAndEpoch::new(0, 0)),
                ],
            ),
            leader_id,
            leader_epoch,
            snapshot_id: pick(
                rng,
                &[
                    None,
                    None,
                    Some(OffsetAndEpoch::new(2, 1)),
                    Some(OffsetAndEpoch::new(-1, 0)),
                ],
            ),
            records: if rng.below(3) == 0 {
                vec![data(pick(rng, &[0, 1, 2]), leader_epoch.max(1), 1)]
            } else {
                vec![]
            },
            leader_endpoint,
        }),
        ApiKind::FetchSnapshot => Response::FetchSnapshot(FetchSnapshotResponse {
            error,
            partition_ok,
            partition_error,
            snapshot_id: Some(OffsetAndEpoch::new(2, 1)),
            leader_id,
            leader_epoch,
            size: 10,
            position: pick(rng, &[0, 3]),
            bytes: vec![0; 3],
            leader_endpoint,
        }),
        ApiKind::DescribeQuorum => Response::DescribeQuorum(DescribeQuorumResponse::default()),
        ApiKind::AddRaftVoter => Response::AddRaftVoter(VoterChangeResponse::error(error)),
        ApiKind::RemoveRaftVoter => Response::RemoveRaftVoter(VoterChangeResponse::error(error)),
        ApiKind::UpdateRaftVoter => Response::UpdateRaftVoter(UpdateVoterResponse {
            error,
            leader_id,
            leader_epoch,
            leader_address: leader_endpoint,
        }),
        ApiKind::ApiVersions => Response::ApiVersions(ApiVersionsResponse {
            error,
            kraft_version: pick(rng, &[None, Some((0, 0)), Some((0, 1))]),
        }),
    }
}

#[test]
fn random_inputs_never_panic_or_break_invariants() {
    let voters = &[1, 2, 3];
    for seed in 0..300u64 {
        let mut rng = Rng::new(seed);
        let mut node = match rng.below(4) {
            0 => start(1, voters, None, MemLog::new()).0,
            1 => leader(1, voters, 2, log_with(vec![data(0, 1, 2)])).0,
            2 => follower(1, voters, 2, 2, log_with(vec![data(0, 1, 2)])),
            _ => start(4, voters, None, MemLog::new()).0, // an observer
        };
        let mut in_flight: Vec<(NodeId, CorrelationId, ApiKind)> = Vec::new();
        let mut now = 10;
        for step in 0..60u64 {
            now += rng.below(400);
            let actions = match rng.below(4) {
                0 => request(&mut node, now, step, random_request(&mut rng)),
                1 if !in_flight.is_empty() => {
                    let (to, corr, api) =
                        in_flight.remove(rng.below(in_flight.len() as u64) as usize);
                    respond(&mut node, now, to, corr, random_response(&mut rng, api))
                }
                // A refused connection, for a request in flight or a stale one.
                2 if !in_flight.is_empty() => {
                    let (to, corr, _) =
                        in_flight.remove(rng.below(in_flight.len() as u64) as usize);
                    let corr = if rng.chance(0.2) { corr + 1000 } else { corr };
                    node.step(Instant(now), Input::ConnectionRefused { to, corr })
                }
                _ => tick(&mut node, now),
            };
            for (to, corr, r) in sends(&actions) {
                in_flight.push((to, corr, r.api()));
            }
            if let Some(why) = node.fatal_error().map(|e| e.to_string()) {
                // Only Java's own fatal conditions may stop the node.
                assert!(
                    why.contains("below the high watermark")
                        || why.contains("not ahead of the log"),
                    "seed {seed}: {why}"
                );
                break;
            }
        }
    }
}

/// A store whose writes fail as a full disk does.
struct FullDiskStore;

impl QuorumStateStore for FullDiskStore {
    fn read_election_state(&self) -> Result<Option<ElectionState>, crate::raft::QuorumStateError> {
        Ok(None)
    }
    fn write_election_state(
        &mut self,
        state: &ElectionState,
        _kraft_version: i16,
    ) -> Result<(), crate::raft::QuorumStateError> {
        Err(crate::raft::QuorumStateError::Unwritable {
            state: state.clone(),
            source: crate::log::LogError::Io {
                op: "write",
                path: "/meta/__cluster_metadata-0/quorum-state".into(),
                source: std::io::Error::from_raw_os_error(28),
            },
        })
    }
}

/// Kafka's raft thread dies on a failed quorum-state write: the core emits one fatal action
/// naming the file and the OS error, changes no role and sends nothing after it.
#[test]
fn a_failed_quorum_state_write_halts_the_node_before_it_acts() {
    let mut raft = Raft::new(cfg(1, &[1]), MemLog::new(), FullDiskStore, Instant(0));
    let mut actions = raft.take_actions();
    let mut t = 0;
    while raft.fatal_error().is_none() && t < 60_000 {
        t += 50;
        actions = raft.step(Instant(t), Input::Tick);
    }
    let why = raft.fatal_error().cloned().expect("the node halts");
    assert!(
        matches!(
            &why,
            crate::raft::FatalError::Storage { file: Some(f), errno: Some(28), .. }
                if f.ends_with("quorum-state")
        ),
        "{why}"
    );
    assert!(matches!(actions.last(), Some(Action::Fatal(w)) if *w == why));
    assert!(
        !actions.iter().any(|a| matches!(a, Action::Send { .. })),
        "{actions:?}"
    );
    assert!(!raft.is_leader(), "no role needing the write is taken");
    assert!(raft.step(Instant(t + 10_000), Input::Tick).is_empty());
}

/// A store whose file does not parse.
struct CorruptStore;

impl QuorumStateStore for CorruptStore {
    fn read_election_state(&self) -> Result<Option<ElectionState>, crate::raft::QuorumStateError> {
        let path = std::path::Path::new("/meta/__cluster_metadata-0/quorum-state");
        Err(crate::raft::QuorumStateError::Unreadable {
            source: crate::log::LogError::corrupt(path, None, "missing key 'data_version'"),
        })
    }
    fn write_election_state(
        &mut self,
        _state: &ElectionState,
        _kraft_version: i16,
    ) -> Result<(), crate::raft::QuorumStateError> {
        panic!("a node that cannot read its election state must not write one")
    }
}

/// Kafka's `QuorumState.initialize` throws on a quorum-state it cannot read: the node starts
/// from no election state of its own (epoch 0 could vote twice), it halts naming the file.
#[test]
fn an_unreadable_quorum_state_halts_the_node_at_start_up() {
    let mut raft = Raft::new(cfg(1, &[1]), MemLog::new(), CorruptStore, Instant(0));
    let actions = raft.take_actions();
    let why = raft.fatal_error().cloned().expect("the node halts");
    assert!(
        matches!(&why, crate::raft::FatalError::Storage { file: Some(f), .. } if f.ends_with("quorum-state")),
        "{why}"
    );
    assert!(why.to_string().contains("data_version"), "{why}");
    assert_eq!(actions, vec![Action::Fatal(why)]);
}
