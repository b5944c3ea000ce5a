//! Fetch on both sides: validation, long-polling, diverging epochs, the high watermark.

use super::*;
use crate::raft::msg::FetchResponse;
use crate::raft::role::Role;
use crate::raft::types::OffsetAndEpoch;

const VOTERS: &[NodeId] = &[1, 2, 3];

fn fetch_reply(r: &Response) -> FetchResponse {
    match r {
        Response::Fetch(f) => f.clone(),
        other => panic!("not a fetch response: {other:?}"),
    }
}

#[test]
fn a_non_leader_answers_fetch_with_its_view_of_the_leader() {
    let mut f = follower(1, VOTERS, 3, 2, MemLog::new());
    let actions = request(&mut f, 1, 1, Request::Fetch(fetch_request(3, 3, 0, 0)));
    assert_eq!(
        fetch_reply(&reply(&actions)),
        FetchResponse {
            partition_ok: true,
            partition_error: ErrorCode::NOT_LEADER_OR_FOLLOWER,
            high_watermark: -1,
            log_start_offset: 0,
            leader_id: 2,
            leader_epoch: 3,
            leader_endpoint: Some(addr(2)),
            ..FetchResponse::default()
        }
    );
    let older = request(&mut f, 2, 2, Request::Fetch(fetch_request(3, 2, 0, 0)));
    assert_eq!(
        fetch_reply(&reply(&older)).partition_error,
        ErrorCode::FENCED_LEADER_EPOCH
    );
    let newer = request(&mut f, 3, 3, Request::Fetch(fetch_request(3, 4, 0, 0)));
    assert_eq!(
        fetch_reply(&reply(&newer)).partition_error,
        ErrorCode::UNKNOWN_LEADER_EPOCH
    );
    let bad = request(&mut f, 4, 4, Request::Fetch(fetch_request(3, 3, 0, 4)));
    assert_eq!(
        fetch_reply(&reply(&bad)).partition_error,
        ErrorCode::INVALID_REQUEST,
        "last epoch > current epoch"
    );
}

#[test]
fn leader_serves_records_and_commits_once_a_majority_has_its_epoch_start() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    assert_eq!(l.high_watermark(), None);
    let actions = request(&mut l, 5, 1, Request::Fetch(fetch_request(2, 1, 0, 0)));
    let r = fetch_reply(&reply(&actions));
    assert_eq!(
        (r.partition_error, r.high_watermark, r.records.len()),
        (NONE, -1, 1)
    );
    assert!(r.records[0].is_control());
    // Follower 2 now has offset 0 (the LeaderChange): fetching at 1 commits it.
    let actions = request(&mut l, 6, 2, Request::Fetch(fetch_request(2, 1, 1, 1)));
    assert!(actions.contains(&Action::Committed { upto: 1 }));
    assert!(
        replies(&actions).is_empty(),
        "nothing new: parked until MaxWaitMs"
    );
    let parked_deadline = l.next_deadline();
    assert_eq!(parked_deadline, Instant(506));
    // The parked fetch times out with the response computed on arrival.
    let actions = tick(&mut l, 506);
    assert_eq!(fetch_reply(&reply(&actions)).high_watermark, 1);
}

#[test]
fn a_parked_fetch_completes_when_the_leader_appends() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    request(&mut l, 5, 1, Request::Fetch(fetch_request(2, 1, 0, 0)));
    assert!(replies(&request(
        &mut l,
        6,
        2,
        Request::Fetch(fetch_request(2, 1, 1, 1))
    ))
    .is_empty());
    let proposed = l.propose(Instant(7), 1, vec![b"v".to_vec()]).unwrap();
    assert_eq!((proposed.base_offset, proposed.last_offset), (1, 1));
    // Offsets are assigned at once; the batch reaches the log at the next step.
    assert!(l.take_actions().is_empty());
    let actions = l.step(Instant(7), Input::Tick);
    let r = fetch_reply(&reply(&actions));
    assert_eq!(r.records.len(), 1);
    assert_eq!(r.records[0].base_offset, 1);
}

#[test]
fn kip_1166_a_follower_behind_on_the_high_watermark_is_answered_at_once() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    request(&mut l, 5, 1, Request::Fetch(fetch_request(2, 1, 0, 0)));
    let behind = FetchRequest {
        high_watermark: Some(-1),
        ..fetch_request(2, 1, 1, 1)
    };
    let actions = request(&mut l, 6, 2, Request::Fetch(behind));
    assert_eq!(fetch_reply(&reply(&actions)).high_watermark, 1);
}

#[test]
fn leader_sends_diverging_epoch_to_a_follower_with_an_extra_suffix() {
    // Leader log: epoch 1 at [0, 3), epoch 3 from 3. The follower has epoch 2 at [3, 6).
    let log = log_with(vec![data(0, 1, 3), data(3, 3, 2)]);
    let (mut l, _) = leader(1, VOTERS, 4, log);
    let actions = request(&mut l, 5, 1, Request::Fetch(fetch_request(2, 4, 6, 2)));
    let r = fetch_reply(&reply(&actions));
    assert_eq!(r.diverging_epoch, Some(OffsetAndEpoch::new(3, 1)));
    assert!(r.records.is_empty());
    // And no credit: its offset does not count for the HW.
    assert_eq!(l.high_watermark(), None);
}

#[test]
fn follower_appends_flushes_and_takes_the_leaders_high_watermark() {
    let (mut f, corr, fr) = follower_fetching(2, VOTERS, 1, 1, MemLog::new());
    assert_eq!(
        (
            fr.fetch_offset,
            fr.last_fetched_epoch,
            fr.current_leader_epoch,
            fr.max_wait_ms
        ),
        (0, 0, 1, 500)
    );
    assert_eq!(fr.high_watermark, Some(-1));
    let resp = FetchResponse {
        partition_ok: true,
        high_watermark: 5,
        log_start_offset: 0,
        leader_id: 1,
        leader_epoch: 1,
        records: vec![data(0, 1, 2)],
        ..FetchResponse::default()
    };
    let actions = respond(&mut f, 10, 1, corr, Response::Fetch(resp));
    assert_eq!(f.log().end_offset(), 2);
    assert_eq!(
        f.log().flushed_end_offset(),
        2,
        "a voter flushes before its next fetch"
    );
    assert_eq!(f.high_watermark(), Some(2), "min(LEO, leader HW)");
    assert!(actions.contains(&Action::Committed { upto: 2 }));
    let Role::Follower(s) = f.role() else {
        panic!()
    };
    assert_eq!(s.fetch_deadline, Instant(2010));
    assert!(s.has_fetched_from_leader);
    let next = next_fetch(&actions).map(|(_, f)| f.fetch_offset);
    assert_eq!(next, Some(2), "the next fetch acknowledges through 2");
}

#[test]
fn follower_truncates_on_diverging_epoch() {
    let (mut f, corr, _) = follower_fetching(
        2,
        VOTERS,
        4,
        1,
        log_with(vec![data(0, 1, 3), data(3, 2, 3)]),
    );
    let resp = FetchResponse {
        partition_ok: true,
        leader_id: 1,
        leader_epoch: 4,
        diverging_epoch: Some(OffsetAndEpoch::new(3, 1)),
        ..FetchResponse::default()
    };
    let actions = respond(&mut f, 5, 1, corr, Response::Fetch(resp));
    assert_eq!(f.log().end_offset(), 3);
    let next = next_fetch(&actions).map(|(_, f)| (f.fetch_offset, f.last_fetched_epoch));
    assert_eq!(next, Some((3, 1)));
}

#[test]
fn an_observer_discovers_the_leader_from_a_fenced_epoch_answer() {
    let (mut o, actions) = start(4, VOTERS, None, MemLog::new());
    let (to, corr, req) = sends(&actions)
        .into_iter()
        .next()
        .expect("a discovery fetch to a voter");
    assert!(VOTERS.contains(&to));
    let Request::Fetch(fr) = req else { panic!() };
    assert_eq!((fr.current_leader_epoch, fr.replica_key.id), (0, 4));
    let resp = FetchResponse {
        partition_ok: true,
        partition_error: ErrorCode::FENCED_LEADER_EPOCH,
        leader_id: 3,
        leader_epoch: 7,
        leader_endpoint: Some(addr(3)),
        ..FetchResponse::default()
    };
    let actions = respond(&mut o, 3, to, corr, Response::Fetch(resp));
    assert!(matches!(o.role(), Role::Follower(f) if f.leader_id == 3 && f.epoch == 7));
    let next = sends(&actions);
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].0, 3, "now fetches from the leader");
}

#[test]
fn the_high_watermark_never_goes_back() {
    let (mut f, mut corr, _) = follower_fetching(2, VOTERS, 1, 1, log_with(vec![data(0, 1, 4)]));
    for (t, hw) in [(1u64, 3i64), (3, 1)] {
        let resp = FetchResponse {
            partition_ok: true,
            high_watermark: hw,
            leader_id: 1,
            leader_epoch: 1,
            ..FetchResponse::default()
        };
        let actions = respond(&mut f, t, 1, corr, Response::Fetch(resp));
        corr = next_fetch(&actions).expect("fetches again").0;
    }
    assert_eq!(f.high_watermark(), Some(3));
}
