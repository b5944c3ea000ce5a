//! kraftd's early election on a refused leader connection, and the coin of a prospective whose
//! pre-vote was refused by the voter now asking it (`early_election.rs`).

use super::*;
use crate::raft::config::ElectionRules;
use crate::raft::msg::FetchResponse;
use crate::raft::role::Role;

const VOTERS: &[NodeId] = &[1, 2, 3];

fn fetch_ok() -> Response {
    Response::Fetch(FetchResponse {
        partition_ok: true,
        high_watermark: 1,
        leader_id: 2,
        leader_epoch: 3,
        ..FetchResponse::default()
    })
}

/// Voter `id` of `VOTERS`, following 2 in epoch 3, after one successful fetch at t=10; and
/// the correlation id of the Fetch it then sent.
fn fetched_follower(id: NodeId) -> (TestRaft, CorrelationId) {
    fetched_follower_with(cfg(id, VOTERS))
}

fn fetched_follower_with(c: RaftConfig) -> (TestRaft, CorrelationId) {
    let state = ElectionState {
        epoch: 3,
        leader_id: Some(2),
        voted_key: None,
    };
    let (mut f, actions) = start_with(c, Some(state), log_with(vec![data(0, 3, 1)]));
    let (corr, _) = next_fetch(&actions).expect("a fetch at start");
    let actions = respond(&mut f, 10, 2, corr, fetch_ok());
    assert!(matches!(f.role(), Role::Follower(s) if s.has_fetched_from_leader));
    let (corr, _) = next_fetch(&actions).expect("the next fetch");
    (f, corr)
}

/// Fetch `corr` to the leader fails at `now` (`refused`: nothing listens there).
fn fetch_fails(f: &mut TestRaft, now: u64, corr: CorrelationId, refused: bool) -> Vec<Action> {
    let input = if refused {
        Input::ConnectionRefused { to: 2, corr }
    } else {
        Input::SendFailed {
            to: 2,
            corr,
            error: ErrorCode::BROKER_NOT_AVAILABLE,
        }
    };
    f.step(Instant(now), input)
}

fn pre_vote_granted(f: &mut TestRaft, now: u64, id: u64, from: NodeId) -> bool {
    let actions = request(f, now, id, Request::Vote(vote_request(from, 3, 1, 3, true)));
    vote_reply(&reply(&actions)).vote_granted
}

#[test]
fn the_first_survivor_by_id_pre_votes_as_soon_as_the_leader_refuses() {
    let (mut f, corr) = fetched_follower(1);
    let actions = fetch_fails(&mut f, 100, corr, true);
    assert!(
        matches!(f.role(), Role::Prospective(p) if p.epoch == 3),
        "rank 0 starts at once, not at the fetch timeout (t=2010): {}",
        f.role()
    );
    let pre_votes: Vec<NodeId> = sends(&actions)
        .into_iter()
        .filter(|(_, _, r)| matches!(r, Request::Vote(v) if v.pre_vote))
        .map(|(to, _, _)| to)
        .collect();
    assert!(pre_votes.contains(&3), "asks voter 3: {pre_votes:?}");
}

#[test]
fn the_next_survivor_grants_pre_votes_and_starts_one_step_later() {
    let (mut f, corr) = fetched_follower(3);
    assert!(
        !pre_vote_granted(&mut f, 50, 1, 1),
        "a live leader: refused"
    );
    fetch_fails(&mut f, 100, corr, true);
    let Role::Follower(s) = f.role() else {
        panic!("{}", f.role())
    };
    assert_eq!(
        s.early_election_at,
        Some(Instant(150)),
        "rank 1, one 50 ms step"
    );
    assert!(
        pre_vote_granted(&mut f, 120, 2, 1),
        "the leader is gone: granted"
    );
    assert!(
        matches!(f.role(), Role::Follower(_)),
        "a pre-vote changes nothing"
    );
    tick(&mut f, 150);
    assert!(matches!(f.role(), Role::Prospective(_)), "{}", f.role());
}

#[test]
fn a_disconnect_or_timeout_waits_out_the_fetch_timeout() {
    let (mut f, corr) = fetched_follower(1);
    fetch_fails(&mut f, 100, corr, false);
    let Role::Follower(s) = f.role() else {
        panic!("{}", f.role())
    };
    assert_eq!(
        s.early_election_at, None,
        "a stalled leader is not a gone one"
    );
    assert!(!pre_vote_granted(&mut f, 200, 1, 3));
    tick(&mut f, 2009);
    assert!(matches!(f.role(), Role::Follower(_)));
    tick(&mut f, 2010);
    assert!(matches!(f.role(), Role::Prospective(_)), "{}", f.role());
}

#[test]
fn a_leader_that_answers_again_is_followed_again() {
    let mut c = cfg(3, VOTERS);
    c.early_election_step = std::time::Duration::from_millis(1000);
    let (mut f, corr) = fetched_follower_with(c);
    let mut actions = fetch_fails(&mut f, 100, corr, true);
    // Until its early election (t=1100) the follower fetches from the other voters while it
    // backs off from the leader (Kafka 4.x); then the leader answers again.
    let mut leader_fetch = None;
    for t in 101..1100 {
        for (to, corr, r) in sends(&actions) {
            match (to, r) {
                (2, Request::Fetch(_)) => leader_fetch = Some((t, corr)),
                (_, Request::Fetch(_)) => {
                    let error = ErrorCode::BROKER_NOT_AVAILABLE;
                    f.step(Instant(t), Input::SendFailed { to, corr, error });
                }
                _ => {}
            }
        }
        if leader_fetch.is_some() {
            break;
        }
        actions = tick(&mut f, t);
    }
    let (t, corr) = leader_fetch.expect("a fetch to the leader before t=1100");
    respond(&mut f, t, 2, corr, fetch_ok());
    let Role::Follower(s) = f.role() else {
        panic!("{}", f.role())
    };
    assert_eq!(s.early_election_at, None);
    assert!(
        !pre_vote_granted(&mut f, t, 3, 1),
        "the leader is alive again"
    );
    tick(&mut f, 1100);
    assert!(matches!(f.role(), Role::Follower(_)), "{}", f.role());
}

/// Voter 1 with `seed`, prospective after voter 3 refused its pre-vote (still following 2);
/// then voter 3, timed out too, asks 1 for a pre-vote with an equal log. Returns whether 1
/// granted, and whether it asked 3 again.
fn prospective_asked_by_the_voter_that_refused_it(seed: u64) -> (bool, bool) {
    let mut c = cfg(1, VOTERS);
    c.randomness = crate::raft::time::Randomness::Seeded(seed);
    let state = ElectionState {
        epoch: 3,
        leader_id: Some(2),
        voted_key: None,
    };
    let (mut f, _) = start_with(c, Some(state), log_with(vec![data(0, 3, 1)]));
    let actions = tick(&mut f, 2000);
    let (_, corr, _) = sends(&actions)
        .into_iter()
        .find(|(to, _, r)| *to == 3 && matches!(r, Request::Vote(_)))
        .expect("a pre-vote to 3");
    let refused = Response::Vote(crate::raft::msg::VoteResponse {
        error: NONE,
        partition_ok: true,
        partition_error: NONE,
        leader_id: 2,
        leader_epoch: 3,
        vote_granted: false,
        leader_endpoint: None,
    });
    respond(&mut f, 2005, 3, corr, refused);
    assert!(matches!(f.role(), Role::Prospective(_)), "{}", f.role());
    let actions = request(
        &mut f,
        2100,
        9,
        Request::Vote(vote_request(3, 3, 1, 3, true)),
    );
    let granted = vote_reply(&reply(&actions)).vote_granted;
    let asked_again = sends(&actions)
        .iter()
        .any(|(to, _, r)| *to == 3 && matches!(r, Request::Vote(v) if v.pre_vote));
    (granted, asked_again)
}

#[test]
fn a_prospective_asked_by_the_voter_that_refused_it_tosses_a_coin() {
    let outcomes: Vec<(bool, bool)> = (0..200)
        .map(prospective_asked_by_the_voter_that_refused_it)
        .collect();
    for (seed, (granted, asked_again)) in outcomes.iter().enumerate() {
        assert_ne!(
            granted, asked_again,
            "seed {seed}: grants and waits, or refuses and asks again at once"
        );
    }
    let grants = outcomes.iter().filter(|(g, _)| *g).count();
    assert!(
        (70..=130).contains(&grants),
        "a fair coin over 200 seeds: {grants} grants"
    );
}

#[test]
fn a_prospective_grants_a_voter_that_never_refused_it() {
    let (mut f, corr) = fetched_follower(1);
    fetch_fails(&mut f, 100, corr, true);
    assert!(matches!(f.role(), Role::Prospective(_)));
    assert!(
        pre_vote_granted(&mut f, 101, 5, 3),
        "Kafka's rule: up to date, granted"
    );
}

fn leader_2_resigns() -> Request {
    Request::EndQuorumEpoch(crate::raft::msg::EndQuorumEpochRequest {
        cluster_id: Some(CLUSTER.into()),
        partition_ok: true,
        leader_id: 2,
        leader_epoch: 3,
        preferred_candidates: vec![key(1), key(3)],
        leader_endpoints: Endpoints::empty(),
    })
}

#[test]
fn an_observer_told_that_its_leader_resigned_never_schedules_an_election() {
    // Controller simulation seed 1000: an observer given an election time it cannot act on
    // was due at that time forever.
    let (mut f, _) = fetched_follower_with(cfg(4, VOTERS));
    request(&mut f, 100, 2, leader_2_resigns());
    let Role::Follower(s) = f.role() else {
        panic!("{}", f.role())
    };
    assert_eq!(s.early_election_at, None);
}

#[test]
fn a_follower_told_that_its_leader_resigned_grants_pre_votes_until_its_own_backoff() {
    let (mut f, _) = fetched_follower(3);
    assert!(
        !pre_vote_granted(&mut f, 50, 1, 1),
        "a live leader: refused"
    );
    // Leader 2 resigns naming 1 then 3: voter 3's backoff is (1000 >> 1) << 0 = 500 ms.
    request(&mut f, 100, 2, leader_2_resigns());
    let Role::Follower(s) = f.role() else {
        panic!("{}", f.role())
    };
    assert_eq!(s.early_election_at, Some(Instant(600)), "its own backoff");
    assert!(
        pre_vote_granted(&mut f, 101, 3, 1),
        "the preferred successor's pre-vote, at once: granted (Kafka refuses it until t=600)"
    );
    tick(&mut f, 599);
    assert!(matches!(f.role(), Role::Follower(_)), "{}", f.role());
    tick(&mut f, 600);
    assert!(matches!(f.role(), Role::Prospective(_)), "{}", f.role());
}

/// Voter 1 under `rules`, prospective at t=100 because leader 2 refused its connection, whose
/// pre-vote voter 3 refused at t=105 while it still followed 2 (issue #36).
fn refused_by_a_follower_of_the_gone_leader(rules: ElectionRules) -> TestRaft {
    let mut c = cfg(1, VOTERS);
    c.election_rules = rules;
    let (mut f, corr) = fetched_follower_with(c);
    let actions = fetch_fails(&mut f, 100, corr, true);
    assert!(matches!(f.role(), Role::Prospective(p) if p.leader_gone));
    let (_, corr, _) = pre_vote_to(&actions, 3).expect("a pre-vote to 3");
    respond(&mut f, 105, 3, corr, refused_following_2());
    assert!(matches!(f.role(), Role::Prospective(_)), "{}", f.role());
    f
}

fn refused_following_2() -> Response {
    Response::Vote(crate::raft::msg::VoteResponse {
        error: NONE,
        partition_ok: true,
        partition_error: NONE,
        leader_id: 2,
        leader_epoch: 3,
        vote_granted: false,
        leader_endpoint: None,
    })
}

fn pre_vote_to(actions: &[Action], to: NodeId) -> Option<(NodeId, CorrelationId, Request)> {
    sends(actions)
        .into_iter()
        .find(|(id, _, r)| *id == to && matches!(r, Request::Vote(v) if v.pre_vote))
}

/// Voter 3, timed out in turn, asks for a pre-vote with a log one batch shorter than ours.
fn shorter_pre_vote_from_3(f: &mut TestRaft, now: u64) -> Vec<Action> {
    request(f, now, 7, Request::Vote(vote_request(3, 3, 0, 0, true)))
}

#[test]
fn a_refusal_expires_when_its_voter_asks_for_a_pre_vote_we_refuse() {
    let mut f = refused_by_a_follower_of_the_gone_leader(ElectionRules::Kraftd);
    let actions = shorter_pre_vote_from_3(&mut f, 300);
    assert!(!vote_reply(&reply(&actions)).vote_granted, "a shorter log");
    assert!(
        pre_vote_to(&actions, 3).is_some(),
        "3 follows no leader any more: asked again at once"
    );
}

#[test]
fn a_gone_leaders_prospective_asks_every_voter_that_has_not_granted_at_its_deadline() {
    let mut f = refused_by_a_follower_of_the_gone_leader(ElectionRules::Kraftd);
    let Role::Prospective(p) = f.role() else {
        unreachable!()
    };
    let deadline = p.election_deadline.millis();
    assert!(pre_vote_to(&tick(&mut f, deadline - 1), 3).is_none());
    let actions = tick(&mut f, deadline);
    assert!(matches!(f.role(), Role::Prospective(p) if p.leader_gone));
    assert!(
        pre_vote_to(&actions, 3).is_some(),
        "the refusal expired with the round"
    );
}

#[test]
fn the_planted_rule_before_issue_36_never_asks_again() {
    // The rule the checks must catch (tests/raft_scenarios.rs, tests/raft_sim.rs).
    let mut f = refused_by_a_follower_of_the_gone_leader(ElectionRules::KraftdKeepingStaleRefusals);
    assert!(pre_vote_to(&shorter_pre_vote_from_3(&mut f, 300), 3).is_none());
    for t in 301..10_000 {
        assert!(pre_vote_to(&tick(&mut f, t), 3).is_none(), "t={t}");
    }
    assert!(matches!(f.role(), Role::Prospective(_)), "{}", f.role());
}

#[test]
fn under_kafkas_rules_a_refused_connection_waits_out_the_fetch_timeout() {
    let mut c = cfg(1, VOTERS);
    c.election_rules = ElectionRules::Kafka;
    let (mut f, corr) = fetched_follower_with(c);
    fetch_fails(&mut f, 100, corr, true);
    assert!(matches!(f.role(), Role::Follower(s) if s.early_election_at.is_none()));
    assert!(!pre_vote_granted(&mut f, 200, 1, 3), "KIP-996: refused");
    tick(&mut f, 2009);
    assert!(matches!(f.role(), Role::Follower(_)), "{}", f.role());
    tick(&mut f, 2010);
    assert!(
        matches!(f.role(), Role::Prospective(p) if !p.leader_gone),
        "{}",
        f.role()
    );
}

#[test]
fn under_kafkas_rules_a_resigned_leaders_follower_refuses_pre_votes_until_its_backoff() {
    let mut c = cfg(3, VOTERS);
    c.election_rules = ElectionRules::Kafka;
    let (mut f, _) = fetched_follower_with(c);
    request(&mut f, 100, 2, leader_2_resigns());
    assert!(!pre_vote_granted(&mut f, 101, 3, 1), "Kafka refuses it");
    tick(&mut f, 599);
    assert!(matches!(f.role(), Role::Follower(_)), "{}", f.role());
    tick(&mut f, 600);
    assert!(matches!(f.role(), Role::Prospective(_)), "{}", f.role());
}

#[test]
fn under_kafkas_rules_a_prospective_never_contests() {
    for seed in 0..50 {
        let mut c = cfg(1, VOTERS);
        c.randomness = crate::raft::time::Randomness::Seeded(seed);
        c.election_rules = ElectionRules::Kafka;
        let state = ElectionState {
            epoch: 3,
            leader_id: Some(2),
            voted_key: None,
        };
        let (mut f, _) = start_with(c, Some(state), log_with(vec![data(0, 3, 1)]));
        let actions = tick(&mut f, 2000);
        let (_, corr, _) = pre_vote_to(&actions, 3).expect("a pre-vote to 3");
        respond(&mut f, 2005, 3, corr, refused_following_2());
        assert!(pre_vote_granted(&mut f, 2100, 9, 3), "seed {seed}");
    }
}
