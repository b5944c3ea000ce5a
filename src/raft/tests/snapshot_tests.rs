//! Snapshots (creation, FetchSnapshot on both sides) and DescribeQuorum.

use super::*;
use crate::raft::mem_log::LogInspect;
use crate::raft::msg::{
    DescribeQuorumRequest, FetchResponse, FetchSnapshotRequest, FetchSnapshotResponse,
};
use crate::raft::snapshot::{SnapshotError, POSITION_OUT_OF_RANGE};
use crate::raft::types::OffsetAndEpoch;

const VOTERS: &[NodeId] = &[1, 2, 3];

/// Leader 1 of epoch 2 with 4 data records and a committed snapshot at 3, log cleaned to it.
fn leader_with_snapshot() -> TestRaft {
    let (mut l, _) = leader(1, VOTERS, 2, log_with(vec![data(0, 1, 3), data(3, 1, 1)]));
    request(&mut l, 5, 1, Request::Fetch(fetch_request(2, 2, 4, 1)));
    request(&mut l, 6, 2, Request::Fetch(fetch_request(2, 2, 5, 2)));
    assert_eq!(l.high_watermark(), Some(5));
    take_snapshot(&mut l, OffsetAndEpoch::new(3, 1), 0, &[b"a".to_vec()]).unwrap();
    assert!(l.delete_before_snapshot(OffsetAndEpoch::new(3, 1)));
    l.take_actions();
    l
}

fn fetch_snapshot(position: i64, max_bytes: i32) -> FetchSnapshotRequest {
    FetchSnapshotRequest {
        cluster_id: Some(CLUSTER.into()),
        replica_key: key(3),
        max_bytes,
        partition_ok: true,
        current_leader_epoch: 2,
        snapshot_id: OffsetAndEpoch::new(3, 1),
        position,
    }
}

fn snapshot_reply(r: &Response) -> FetchSnapshotResponse {
    match r {
        Response::FetchSnapshot(f) => f.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn snapshot_creation_is_checked_against_the_high_watermark_and_the_log() {
    let (mut l, _) = leader(1, VOTERS, 2, log_with(vec![data(0, 1, 3)]));
    let id = OffsetAndEpoch::new(3, 1);
    assert!(matches!(
        take_snapshot(&mut l, id, 0, &[]),
        Err(SnapshotError::AboveHighWatermark { .. })
    ));
    request(&mut l, 5, 1, Request::Fetch(fetch_request(2, 2, 4, 2)));
    assert_eq!(l.high_watermark(), Some(4));
    assert!(matches!(
        take_snapshot(&mut l, OffsetAndEpoch::new(4, 1), 0, &[]),
        Err(SnapshotError::InvalidId(_))
    ));
    assert!(matches!(
        take_snapshot(&mut l, OffsetAndEpoch::new(2, 1), 0, &[]),
        Err(SnapshotError::NotBatchBoundary(2))
    ));
    take_snapshot(&mut l, id, 0, &[]).unwrap();
}

#[test]
fn leader_redirects_a_fetch_below_its_log_start_to_the_snapshot() {
    let mut l = leader_with_snapshot();
    let actions = request(&mut l, 10, 3, Request::Fetch(fetch_request(3, 2, 1, 1)));
    match reply(&actions) {
        Response::Fetch(FetchResponse {
            snapshot_id,
            records,
            ..
        }) => {
            assert_eq!(snapshot_id, Some(OffsetAndEpoch::new(3, 1)));
            assert!(records.is_empty());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn fetch_snapshot_serves_chunks_and_checks_positions() {
    let mut l = leader_with_snapshot();
    let size = l.log().snapshot_size(OffsetAndEpoch::new(3, 1)).unwrap() as i64;
    let first = snapshot_reply(&reply(&request(
        &mut l,
        10,
        1,
        Request::FetchSnapshot(fetch_snapshot(0, 10)),
    )));
    assert_eq!(
        (
            first.partition_error,
            first.size,
            first.position,
            first.bytes.len()
        ),
        (NONE, size, 0, 10)
    );
    assert_eq!(first.snapshot_id, Some(OffsetAndEpoch::new(3, 1)));
    let rest = snapshot_reply(&reply(&request(
        &mut l,
        11,
        2,
        Request::FetchSnapshot(fetch_snapshot(10, 1 << 20)),
    )));
    assert_eq!(rest.bytes.len() as i64, size - 10);
    let beyond = snapshot_reply(&reply(&request(
        &mut l,
        12,
        3,
        Request::FetchSnapshot(fetch_snapshot(size, 10)),
    )));
    assert_eq!(beyond.partition_error, POSITION_OUT_OF_RANGE);
    let missing = FetchSnapshotRequest {
        snapshot_id: OffsetAndEpoch::new(2, 1),
        ..fetch_snapshot(0, 10)
    };
    let missing = snapshot_reply(&reply(&request(
        &mut l,
        13,
        4,
        Request::FetchSnapshot(missing),
    )));
    assert_eq!(missing.partition_error, ErrorCode::SNAPSHOT_NOT_FOUND);
    let foreign = FetchSnapshotRequest {
        partition_ok: false,
        ..fetch_snapshot(0, 10)
    };
    let foreign = snapshot_reply(&reply(&request(
        &mut l,
        14,
        5,
        Request::FetchSnapshot(foreign),
    )));
    assert_eq!(
        foreign.partition_error,
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
    );
}

#[test]
fn the_bootstrap_checkpoint_is_never_served() {
    let mut log = MemLog::new();
    log.format_bootstrap(1, None);
    let (mut l, _) = leader(1, VOTERS, 1, log);
    let req = FetchSnapshotRequest {
        snapshot_id: OffsetAndEpoch::new(0, 0),
        current_leader_epoch: 1,
        ..fetch_snapshot(0, 10)
    };
    let r = snapshot_reply(&reply(&request(&mut l, 10, 1, Request::FetchSnapshot(req))));
    assert_eq!(r.partition_error, ErrorCode::SNAPSHOT_NOT_FOUND);
    // And a fetch at offset 0 is served from the log, not redirected to (0, 0).
    let f = reply(&request(
        &mut l,
        11,
        2,
        Request::Fetch(fetch_request(2, 1, 0, 0)),
    ));
    assert!(matches!(
        f,
        Response::Fetch(FetchResponse {
            snapshot_id: None,
            ..
        })
    ));
}

#[test]
fn follower_downloads_a_snapshot_in_chunks_and_restarts_its_log_there() {
    let mut source = leader_with_snapshot();
    let (mut f, corr, _) = follower_fetching(3, VOTERS, 2, 1, MemLog::new());
    let redirect = FetchResponse {
        partition_ok: true,
        leader_id: 1,
        leader_epoch: 2,
        snapshot_id: Some(OffsetAndEpoch::new(3, 1)),
        ..FetchResponse::default()
    };
    let mut actions = respond(&mut f, 10, 1, corr, Response::Fetch(redirect));
    let mut t = 11;
    loop {
        let (corr, req) = sends(&actions)
            .into_iter()
            .find_map(|(_, c, r)| match r {
                Request::FetchSnapshot(s) => Some((c, s)),
                _ => None,
            })
            .expect("FetchSnapshot while downloading");
        let small = FetchSnapshotRequest {
            max_bytes: 16,
            ..req
        };
        let chunk = reply(&request(&mut source, t, t, Request::FetchSnapshot(small)));
        actions = respond(&mut f, t, 1, corr, chunk);
        t += 1;
        if actions.contains(&Action::LoadSnapshot(OffsetAndEpoch::new(3, 1))) {
            break;
        }
    }
    assert_eq!((f.log().start_offset(), f.log().end_offset()), (3, 3));
    assert_eq!(f.high_watermark(), Some(3));
    assert_eq!(
        next_fetch(&actions).map(|(_, r)| (r.fetch_offset, r.last_fetched_epoch)),
        Some((3, 1))
    );
}

#[test]
fn describe_quorum_reports_voters_and_observers_from_the_leader_only() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    request(&mut l, 100, 1, Request::Fetch(fetch_request(2, 1, 1, 1)));
    request(&mut l, 150, 2, Request::Fetch(fetch_request(4, 1, 0, 0)));
    let actions = request(
        &mut l,
        200,
        3,
        Request::DescribeQuorum(DescribeQuorumRequest { partition_ok: true }),
    );
    let Response::DescribeQuorum(d) = reply(&actions) else {
        panic!()
    };
    assert_eq!((d.leader_id, d.leader_epoch, d.high_watermark), (1, 1, 1));
    let voters: Vec<_> = d
        .voters
        .iter()
        .map(|v| (v.replica_key.id, v.log_end_offset, v.last_fetch_timestamp))
        .collect();
    assert_eq!(voters, vec![(1, 1, 200), (2, 1, 100), (3, -1, -1)]);
    let observers: Vec<_> = d
        .observers
        .iter()
        .map(|v| (v.replica_key, v.log_end_offset))
        .collect();
    assert_eq!(observers, vec![(key(4), 0)]);
    assert_eq!(d.nodes.len(), 3);
    let f = follower(2, VOTERS, 1, 1, MemLog::new());
    let mut f = f;
    let actions = request(
        &mut f,
        5,
        1,
        Request::DescribeQuorum(DescribeQuorumRequest { partition_ok: true }),
    );
    let Response::DescribeQuorum(d) = reply(&actions) else {
        panic!()
    };
    assert_eq!(d.partition_error, ErrorCode::NOT_LEADER_OR_FOLLOWER);
    assert!(d.partition_error_message.is_some());
}
