//! Vote handling, pre-vote, candidacy and start-up states.

use super::*;
use crate::raft::msg::VoteResponse;
use crate::raft::role::Role;

const VOTERS: &[NodeId] = &[1, 2, 3];

#[test]
fn unattached_voter_grants_an_up_to_date_candidate_and_persists_the_vote_first() {
    let (mut n, _) = start(1, VOTERS, Some(ElectionState::unknown(2)), MemLog::new());
    let actions = request(
        &mut n,
        10,
        7,
        Request::Vote(vote_request(2, 3, 0, 0, false)),
    );
    // Epoch 3 > 2: first Unattached(3), then the vote; both written before the reply.
    assert_eq!(
        n.store().history[1..],
        [
            ElectionState::unknown(3),
            ElectionState {
                epoch: 3,
                leader_id: None,
                voted_key: Some(key(2))
            }
        ]
    );
    assert_eq!(
        reply(&actions),
        Response::Vote(VoteResponse {
            error: NONE,
            partition_ok: true,
            partition_error: NONE,
            leader_id: -1,
            leader_epoch: 3,
            vote_granted: true,
            leader_endpoint: None,
        })
    );
    assert!(matches!(n.role(), Role::Unattached(u) if u.voted_key == Some(key(2))));
}

#[test]
fn vote_is_refused_to_a_candidate_with_a_shorter_log() {
    let (mut n, _) = start(
        1,
        VOTERS,
        Some(ElectionState::unknown(1)),
        log_with(vec![data(0, 1, 3)]),
    );
    let actions = request(
        &mut n,
        10,
        7,
        Request::Vote(vote_request(2, 2, 2, 1, false)),
    );
    let v = vote_reply(&reply(&actions)).clone();
    assert!(!v.vote_granted);
    assert_eq!((v.partition_error, v.leader_epoch), (NONE, 2));
    assert_eq!(
        n.store().read_election_state().unwrap(),
        Some(ElectionState::unknown(2)),
        "epoch moved, no vote recorded"
    );
}

#[test]
fn a_voted_node_regrants_only_the_same_candidate() {
    let voted = ElectionState {
        epoch: 4,
        leader_id: None,
        voted_key: Some(key(2)),
    };
    let (mut n, _) = start(1, VOTERS, Some(voted), MemLog::new());
    let again = request(
        &mut n,
        10,
        1,
        Request::Vote(vote_request(2, 4, 0, 0, false)),
    );
    let other = request(
        &mut n,
        11,
        2,
        Request::Vote(vote_request(3, 4, 0, 0, false)),
    );
    assert!(vote_reply(&reply(&again)).vote_granted);
    assert!(!vote_reply(&reply(&other)).vote_granted);
}

#[test]
fn vote_request_validation_errors() {
    let (mut n, _) = start(1, VOTERS, Some(ElectionState::unknown(5)), MemLog::new());
    let cases = [
        (
            vote_request(2, 4, 0, 0, false),
            ErrorCode::FENCED_LEADER_EPOCH,
        ),
        (vote_request(2, 6, 0, 6, false), ErrorCode::INVALID_REQUEST), // last epoch >= candidate epoch
        (vote_request(2, 6, -1, 0, false), ErrorCode::INVALID_REQUEST),
        (
            VoteRequest {
                voter_id: 3,
                ..vote_request(2, 6, 0, 0, false)
            },
            ErrorCode::INVALID_VOTER_KEY,
        ),
    ];
    for (i, (req, expected)) in cases.into_iter().enumerate() {
        let actions = request(&mut n, 10, i as u64, Request::Vote(req));
        let v = vote_reply(&reply(&actions)).clone();
        assert_eq!(v.partition_error, expected, "case {i}");
        assert!(!v.vote_granted);
    }
    // A pre-vote may carry last epoch == its (current) epoch.
    let actions = request(&mut n, 20, 9, Request::Vote(vote_request(2, 6, 0, 6, true)));
    assert_eq!(vote_reply(&reply(&actions)).partition_error, NONE);
}

#[test]
fn top_level_errors_for_foreign_cluster_and_partition() {
    let (mut n, _) = start(1, VOTERS, None, MemLog::new());
    let foreign = VoteRequest {
        cluster_id: Some("other".into()),
        ..vote_request(2, 1, 0, 0, false)
    };
    let actions = request(&mut n, 1, 1, Request::Vote(foreign));
    assert_eq!(
        reply(&actions),
        Response::Vote(VoteResponse {
            error: ErrorCode::INCONSISTENT_CLUSTER_ID,
            ..VoteResponse::default()
        })
    );
    let wrong = VoteRequest {
        partition_ok: false,
        ..vote_request(2, 1, 0, 0, false)
    };
    let actions = request(&mut n, 2, 2, Request::Vote(wrong));
    assert_eq!(
        vote_reply(&reply(&actions)).error,
        ErrorCode::INVALID_REQUEST
    );
    let nameless = VoteRequest {
        cluster_id: None,
        ..vote_request(2, 1, 0, 0, false)
    };
    let actions = request(&mut n, 3, 3, Request::Vote(nameless));
    assert!(
        vote_reply(&reply(&actions)).vote_granted,
        "a null cluster id is accepted"
    );
}

#[test]
fn pre_vote_is_granted_by_a_follower_only_before_it_fetched_and_never_recorded() {
    let mut f = follower(1, VOTERS, 3, 2, log_with(vec![data(0, 3, 1)]));
    let writes = f.store().history.len();
    let actions = request(&mut f, 5, 1, Request::Vote(vote_request(3, 3, 1, 3, true)));
    assert!(vote_reply(&reply(&actions)).vote_granted);
    assert_eq!(f.store().history.len(), writes, "a pre-vote writes nothing");
    if let Role::Follower(s) = &mut f.role {
        s.has_fetched_from_leader = true;
    }
    let actions = request(&mut f, 6, 2, Request::Vote(vote_request(3, 3, 1, 3, true)));
    assert!(!vote_reply(&reply(&actions)).vote_granted);
    // A binding vote in the follower's epoch is always refused.
    let actions = request(&mut f, 7, 3, Request::Vote(vote_request(3, 3, 1, 2, false)));
    assert!(!vote_reply(&reply(&actions)).vote_granted);
}

#[test]
fn leader_refuses_every_vote_in_its_epoch() {
    let (mut l, _) = leader(1, VOTERS, 2, MemLog::new());
    let pre = request(&mut l, 5, 1, Request::Vote(vote_request(2, 2, 10, 2, true)));
    assert!(!vote_reply(&reply(&pre)).vote_granted);
    assert!(l.is_leader());
}

#[test]
fn election_timeout_starts_a_pre_vote_then_a_candidacy_then_leadership() {
    let (mut n, _) = start(1, VOTERS, None, MemLog::new());
    let Role::Unattached(u) = n.role() else {
        panic!()
    };
    let deadline = u.election_deadline.0;
    assert!(
        (1000..2000).contains(&deadline),
        "T + rand[0, T): {deadline}"
    );
    let actions = tick(&mut n, deadline);
    assert!(matches!(n.role(), Role::Prospective(p) if p.epoch == 0));
    assert_eq!(n.store().history.len(), 1, "Prospective is memory-only");
    assert_eq!(n.metrics_view(Instant(deadline)).elections_started, 0);
    let votes: Vec<_> = sends(&actions)
        .into_iter()
        .filter(|(_, _, r)| matches!(r, Request::Vote(_)))
        .collect();
    assert_eq!(votes.len(), 2);
    for (_, _, r) in &votes {
        let Request::Vote(v) = r else { unreachable!() };
        assert!(v.pre_vote && v.candidate_epoch == 0 && v.last_offset == 0);
    }
    // One grant makes a majority of three: Candidate(1), votes for itself, asks again.
    let (to, corr, _) = votes[0].clone();
    let actions = respond(&mut n, deadline + 2, to, corr, granted(0));
    assert!(matches!(n.role(), Role::Candidate(c) if c.epoch == 1));
    assert_eq!(n.metrics_view(Instant(deadline + 2)).elections_started, 1);
    assert_eq!(
        n.store().read_election_state().unwrap(),
        Some(ElectionState {
            epoch: 1,
            leader_id: None,
            voted_key: Some(key(1))
        })
    );
    let binding: Vec<_> = sends(&actions)
        .into_iter()
        .filter(|(_, _, r)| matches!(r, Request::Vote(v) if !v.pre_vote))
        .collect();
    assert_eq!(binding.len(), 2);
    let (to, corr, _) = binding[0].clone();
    let actions = respond(&mut n, deadline + 4, to, corr, granted(1));
    assert!(n.is_leader());
    assert_eq!(
        n.store().read_election_state().unwrap(),
        Some(ElectionState {
            epoch: 1,
            leader_id: Some(1),
            voted_key: None
        })
    );
    // LeaderChange at offset 0, flushed; BeginQuorumEpoch to both other voters.
    assert_eq!(n.log().end_offset(), 1);
    assert_eq!(n.log().flushed_end_offset(), 1);
    let begins = sends(&actions)
        .iter()
        .filter(|(_, _, r)| matches!(r, Request::BeginQuorumEpoch(_)))
        .count();
    assert_eq!(begins, 2);
}

#[test]
fn a_lost_pre_vote_returns_to_following_the_known_leader() {
    let mut f = follower(1, VOTERS, 3, 2, MemLog::new());
    let deadline = match f.role() {
        Role::Follower(s) => s.fetch_deadline.0,
        _ => panic!(),
    };
    assert_eq!(deadline, 2000, "fetch timeout");
    let actions = tick(&mut f, deadline);
    assert!(matches!(f.role(), Role::Prospective(_)));
    let votes = sends(&actions);
    let rejected = Response::Vote(VoteResponse {
        partition_ok: true,
        leader_id: 2,
        leader_epoch: 3,
        ..VoteResponse::default()
    });
    for (to, corr, _) in votes
        .into_iter()
        .filter(|(_, _, r)| matches!(r, Request::Vote(_)))
    {
        respond(&mut f, deadline + 1, to, corr, rejected.clone());
    }
    assert!(
        matches!(f.role(), Role::Follower(s) if s.leader_id == 2 && s.epoch == 3),
        "{}",
        f.role()
    );
    assert_eq!(f.epoch(), 3, "a pre-vote never bumps the epoch");
}

#[test]
fn unsupported_version_for_pre_vote_falls_back_to_a_candidacy() {
    let mut f = follower(1, VOTERS, 3, 2, MemLog::new());
    let actions = tick(&mut f, 2000);
    let (to, corr, _) = sends(&actions)
        .into_iter()
        .find(|(_, _, r)| matches!(r, Request::Vote(_)))
        .unwrap();
    f.step(
        Instant(2001),
        Input::SendFailed {
            to,
            corr,
            error: ErrorCode::UNSUPPORTED_VERSION,
        },
    );
    assert!(matches!(f.role(), Role::Candidate(c) if c.epoch == 4));
}

#[test]
fn start_up_states_follow_quorum_state() {
    // Our own leadership on file: Resigned in that epoch.
    let (n, _) = start(
        1,
        VOTERS,
        Some(ElectionState {
            epoch: 5,
            leader_id: Some(1),
            voted_key: None,
        }),
        MemLog::new(),
    );
    assert!(matches!(n.role(), Role::Resigned(r) if r.epoch == 5));
    // Our own vote: resume the candidacy.
    let (n, actions) = start(
        1,
        VOTERS,
        Some(ElectionState {
            epoch: 5,
            leader_id: None,
            voted_key: Some(key(1)),
        }),
        MemLog::new(),
    );
    assert!(matches!(n.role(), Role::Candidate(c) if c.epoch == 5));
    assert_eq!(sends(&actions).len(), 2);
    // A file older than the log: Unattached in the log's epoch.
    let (n, _) = start(
        1,
        VOTERS,
        Some(ElectionState::unknown(1)),
        log_with(vec![data(0, 4, 1)]),
    );
    assert!(matches!(n.role(), Role::Unattached(u) if u.epoch == 4));
    // A known leader with endpoints: Follower.
    let (n, _) = start(
        1,
        VOTERS,
        Some(ElectionState {
            epoch: 5,
            leader_id: Some(3),
            voted_key: None,
        }),
        MemLog::new(),
    );
    assert!(matches!(n.role(), Role::Follower(f) if f.leader_id == 3));
    // An observer starts Unattached with no election timer.
    let (n, _) = start(4, VOTERS, None, MemLog::new());
    assert!(matches!(n.role(), Role::Unattached(u) if u.election_deadline == Instant::NEVER));
}

#[test]
fn a_single_voter_elects_itself_at_start() {
    let (n, actions) = start(1, &[1], None, MemLog::new());
    assert!(n.is_leader());
    assert_eq!(
        n.high_watermark(),
        Some(1),
        "its LeaderChange is committed by itself"
    );
    assert!(actions.contains(&Action::Committed { upto: 1 }));
}

#[test]
fn a_candidate_waits_out_its_election_timeout_then_pre_votes_again() {
    let state = ElectionState {
        epoch: 2,
        leader_id: None,
        voted_key: Some(key(1)),
    };
    let (mut n, actions) = start(1, VOTERS, Some(state), MemLog::new());
    let rejected = Response::Vote(VoteResponse {
        partition_ok: true,
        leader_epoch: 2,
        ..VoteResponse::default()
    });
    for (to, corr, _) in sends(&actions) {
        respond(&mut n, 10, to, corr, rejected.clone());
    }
    assert!(
        matches!(n.role(), Role::Candidate(_)),
        "Kafka 4.4 has no candidate backoff: it waits"
    );
    let deadline = match n.role() {
        Role::Candidate(c) => c.election_deadline.0,
        _ => unreachable!(),
    };
    tick(&mut n, deadline);
    assert!(matches!(n.role(), Role::Prospective(p) if p.epoch == 2));
}
