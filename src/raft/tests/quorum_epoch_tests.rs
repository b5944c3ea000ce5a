//! BeginQuorumEpoch, EndQuorumEpoch, check-quorum and resignation.

use super::*;
use crate::raft::msg::{BeginQuorumEpochRequest, EndQuorumEpochRequest, QuorumEpochResponse};
use crate::raft::role::Role;

const VOTERS: &[NodeId] = &[1, 2, 3];

fn begin(leader: NodeId, epoch: Epoch) -> BeginQuorumEpochRequest {
    BeginQuorumEpochRequest {
        cluster_id: Some(CLUSTER.into()),
        voter_id: 1,
        voter_directory_id: Some(dir(1)),
        partition_ok: true,
        leader_id: leader,
        leader_epoch: epoch,
        leader_endpoints: Endpoints::single("CONTROLLER", addr(leader)),
    }
}

fn end(leader: NodeId, epoch: Epoch, preferred: &[NodeId]) -> EndQuorumEpochRequest {
    EndQuorumEpochRequest {
        cluster_id: Some(CLUSTER.into()),
        partition_ok: true,
        leader_id: leader,
        leader_epoch: epoch,
        preferred_candidates: preferred.iter().map(|&id| key(id)).collect(),
        leader_endpoints: Endpoints::empty(),
    }
}

fn epoch_reply(r: &Response) -> QuorumEpochResponse {
    match r {
        Response::BeginQuorumEpoch(b) | Response::EndQuorumEpoch(b) => b.clone(),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn begin_quorum_epoch_makes_a_voter_follow_the_new_leader() {
    let voted = ElectionState {
        epoch: 3,
        leader_id: None,
        voted_key: Some(key(2)),
    };
    let (mut n, _) = start(1, VOTERS, Some(voted), MemLog::new());
    let actions = request(&mut n, 10, 1, Request::BeginQuorumEpoch(begin(2, 3)));
    assert_eq!(
        epoch_reply(&reply(&actions)),
        QuorumEpochResponse {
            error: NONE,
            partition_ok: true,
            partition_error: NONE,
            leader_id: 2,
            leader_epoch: 3,
            leader_endpoint: Some(addr(2)),
        }
    );
    assert!(matches!(n.role(), Role::Follower(f) if f.leader_id == 2));
    // Kafka 4.x keeps the vote of the epoch alongside the leader.
    assert_eq!(
        n.store().read_election_state().unwrap(),
        Some(ElectionState {
            epoch: 3,
            leader_id: Some(2),
            voted_key: Some(key(2))
        })
    );
    // The first Fetch goes to the new leader at once.
    assert_eq!(sends(&actions)[0].0, 2);
}

#[test]
fn begin_quorum_epoch_for_another_voter_key_is_refused_after_the_transition() {
    let (mut n, _) = start(1, VOTERS, Some(ElectionState::unknown(2)), MemLog::new());
    let other = BeginQuorumEpochRequest {
        voter_id: 3,
        ..begin(2, 3)
    };
    let actions = request(&mut n, 10, 1, Request::BeginQuorumEpoch(other));
    assert_eq!(
        epoch_reply(&reply(&actions)).partition_error,
        ErrorCode::INVALID_VOTER_KEY
    );
    assert!(
        matches!(n.role(), Role::Follower(f) if f.epoch == 3),
        "Kafka transitions first"
    );
    let stale = request(&mut n, 11, 2, Request::BeginQuorumEpoch(begin(3, 2)));
    assert_eq!(
        epoch_reply(&reply(&stale)).partition_error,
        ErrorCode::FENCED_LEADER_EPOCH
    );
}

#[test]
fn leader_heartbeats_voters_that_stopped_fetching() {
    let (mut l, actions) = leader(1, VOTERS, 1, MemLog::new());
    let begins: Vec<(NodeId, CorrelationId)> = sends(&actions)
        .into_iter()
        .filter(|(_, _, r)| matches!(r, Request::BeginQuorumEpoch(_)))
        .map(|(to, corr, _)| (to, corr))
        .collect();
    assert_eq!(begins.iter().map(|b| b.0).collect::<Vec<_>>(), vec![2, 3]);
    let ack = QuorumEpochResponse {
        partition_ok: true,
        leader_id: 1,
        leader_epoch: 1,
        ..QuorumEpochResponse::default()
    };
    for (to, corr) in begins {
        respond(&mut l, 5, to, corr, Response::BeginQuorumEpoch(ack.clone()));
    }
    // Voter 2 fetches; 1 s later only voter 3 (never fetched) gets another BeginQuorumEpoch.
    request(&mut l, 900, 1, Request::Fetch(fetch_request(2, 1, 1, 1)));
    let actions = tick(&mut l, 1001);
    let begins: Vec<NodeId> = sends(&actions)
        .into_iter()
        .filter(|(_, _, r)| matches!(r, Request::BeginQuorumEpoch(_)))
        .map(|(to, _, _)| to)
        .collect();
    assert_eq!(begins, vec![3]);
}

#[test]
fn leader_resigns_when_no_majority_fetched_within_check_quorum() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    assert_eq!(
        l.next_deadline(),
        Instant(1001),
        "the BeginQuorumEpoch timer first"
    );
    tick(&mut l, 2999);
    assert!(l.is_leader());
    let actions = tick(&mut l, 3001);
    assert!(
        matches!(l.role(), Role::Resigned(r) if r.epoch == 1),
        "1.5 x fetch timeout = 3000 ms"
    );
    let ends = sends(&actions)
        .iter()
        .filter(|(_, _, r)| matches!(r, Request::EndQuorumEpoch(_)))
        .count();
    assert_eq!(ends, 2);
}

#[test]
fn a_fetch_from_a_majority_keeps_the_leader_in_office() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    request(&mut l, 2500, 1, Request::Fetch(fetch_request(2, 1, 1, 1)));
    tick(&mut l, 3001);
    assert!(l.is_leader());
    tick(&mut l, 5501);
    assert!(!l.is_leader(), "the credit lasts one check-quorum period");
}

#[test]
fn resigned_leader_fails_parked_fetches_and_names_its_successors() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    request(&mut l, 5, 1, Request::Fetch(fetch_request(3, 1, 0, 0)));
    request(&mut l, 6, 2, Request::Fetch(fetch_request(2, 1, 1, 1)));
    assert!(l.resign(Instant(7)));
    let actions = l.take_actions();
    match reply(&actions) {
        Response::Fetch(f) => {
            assert_eq!(
                (f.partition_error, f.leader_id, f.leader_epoch),
                (ErrorCode::NOT_LEADER_OR_FOLLOWER, 1, 1)
            );
        }
        other => panic!("{other:?}"),
    }
    let end = sends(&actions)
        .into_iter()
        .find_map(|(_, _, r)| match r {
            Request::EndQuorumEpoch(e) => Some(e),
            _ => None,
        })
        .expect("EndQuorumEpoch");
    // Voter 2 fetched offset 1, voter 3 offset 0: best first.
    assert_eq!(end.preferred_candidates, vec![key(2), key(3)]);
}

#[test]
fn end_quorum_epoch_backoff_ranks_the_successors() {
    // 3 successors: the first starts at once, the second after (1000 >> 2) << 0 = 250 ms.
    let five = &[1, 2, 3, 4, 5];
    for (id, expected) in [(2, 0u64), (3, 250), (4, 500), (5, 1000)] {
        let mut f = follower(id, five, 4, 1, MemLog::new());
        request(
            &mut f,
            100,
            1,
            Request::EndQuorumEpoch(end(1, 4, &[2, 3, 4])),
        );
        match f.role() {
            Role::Follower(s) => {
                assert_eq!(s.fetch_deadline, Instant(100 + expected), "voter {id}")
            }
            Role::Prospective(_) => assert_eq!(expected, 0, "voter {id} started at once"),
            other => panic!("{other}"),
        }
    }
}

#[test]
fn resigned_leader_becomes_unattached_in_the_next_epoch_after_its_election_timeout() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    l.resign(Instant(5));
    let deadline = match l.role() {
        Role::Resigned(r) => r.election_deadline,
        _ => panic!(),
    };
    tick(&mut l, deadline.0);
    assert!(
        matches!(l.role(), Role::Unattached(u) if u.epoch == 2),
        "{}",
        l.role()
    );
}

#[test]
fn graceful_shutdown_resigns_then_completes_once_a_successor_leads() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    l.begin_shutdown(Instant(10), std::time::Duration::from_secs(5));
    let actions = l.take_actions();
    assert!(matches!(l.role(), Role::Resigned(_)));
    assert_eq!(
        sends(&actions)
            .iter()
            .filter(|(_, _, r)| matches!(r, Request::EndQuorumEpoch(_)))
            .count(),
        2
    );
    assert!(!l.is_shutdown_complete(Instant(11)));
    // Still answers votes; stays Resigned past its election timeout while shutting down.
    let vote = request(
        &mut l,
        12,
        1,
        Request::Vote(vote_request(2, 2, 1, 1, false)),
    );
    assert!(vote_reply(&reply(&vote)).vote_granted);
    request(&mut l, 20, 2, Request::BeginQuorumEpoch(begin(2, 2)));
    assert!(
        l.is_shutdown_complete(Instant(20)),
        "a remote leader is known"
    );
    let fetch = request(&mut l, 21, 3, Request::Fetch(fetch_request(3, 2, 0, 0)));
    assert!(
        matches!(reply(&fetch), Response::Fetch(f) if f.partition_error == ErrorCode::NOT_LEADER_OR_FOLLOWER)
    );
}

/// A driver sleeps until `next_deadline` when nothing arrives. With every other voter gone
/// (each request fails at once, as a refused connection does), a shutting-down leader must
/// still wake by its shutdown deadline and complete there, as Java's does after 5 s; it used
/// to report no deadline at all and hang.
#[test]
fn a_shutdown_with_every_peer_gone_completes_at_its_deadline() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    l.begin_shutdown(Instant(10), std::time::Duration::from_secs(5));
    let mut actions = l.take_actions();
    let mut now = 10;
    let mut wakes = 0;
    while !l.is_shutdown_complete(Instant(now)) {
        let mut failed = Vec::new();
        for (to, corr, _) in sends(&actions) {
            failed.extend(l.step(
                Instant(now),
                Input::SendFailed {
                    to,
                    corr,
                    error: ErrorCode::BROKER_NOT_AVAILABLE,
                },
            ));
        }
        if !failed.is_empty() {
            actions = failed;
            continue;
        }
        let next = l.next_deadline();
        assert!(
            next <= Instant(5010),
            "shutting down until 5010 with nothing to wake it before {next}"
        );
        now = next.0.max(now + 1);
        actions = l.step(Instant(now), Input::Tick);
        wakes += 1;
        assert!(wakes < 1000, "no end to the shutdown by {now}");
    }
    assert_eq!(
        now, 5010,
        "complete at the deadline, not before: no successor was elected"
    );
}
