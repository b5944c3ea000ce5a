//! The interop checklist (spec §12): what kraftd must never do to a Java raft peer, and what it
//! must do to keep one healthy. One test per applicable trap; each doc comment says what Java does
//! when the trap is sprung.
//!
//! Items without a test of their own here, and why:
//! * Item 9 (a VotersRecord changing more than one voter): kraftd does no reconfiguration (no
//!   AddRaftVoter/RemoveRaftVoter/UpdateRaftVoter): its only VotersRecords copy the bootstrap voter set (own entry refreshed) at an epoch start
//!   and into snapshots; `kraft_version_and_voters_records_only_copy_the_known_voter_set`.
//! * Item 11 (a KRaftVersionRecord level > 1): kraftd only copies the kraft.version it read from
//!   the bootstrap checkpoint or a snapshot; the same test checks the level.
//! * Item 12's "(0, 0)" half: `no_snapshot_is_made_at_0_0_even_when_asked` is ignored, a known
//!   gap of the core (the server's snapshot policy never asks for it).
//! * ApiVersions / PartitionMaxBytes / MinBytes: handled by the server and `raft::convert`, not
//!   by the sans-IO core.
//! * Long-polling Fetch: `replication_tests::leader_serves_records_and_commits_once_a_majority_has_
//!   its_epoch_start`, `a_parked_fetch_completes_when_the_leader_appends` and
//!   `kip_1166_a_follower_behind_on_the_high_watermark_is_answered_at_once`.
//! * fsync before the next Fetch: `replication_tests::follower_appends_flushes_and_takes_the_
//!   leaders_high_watermark`.
//! * On-disk layout (§7): `src/log` and `src/server/node` tests, not the core.

use super::*;
use crate::protocol::records::{split_batches, ControlRecord as WireControl, ControlRecordType};
use crate::raft::convert::records::{decode_batches, encode_batches};
use crate::raft::log::{ControlRecord, Records};
use crate::raft::mem_log::LogInspect;
use crate::raft::msg::*;
use crate::raft::role::Role;
use crate::raft::snapshot::POSITION_OUT_OF_RANGE;
use crate::raft::time::Rng;
use crate::raft::types::OffsetAndEpoch;

const VOTERS: &[NodeId] = &[1, 2, 3];

fn pick<T: Copy>(rng: &mut Rng, items: &[T]) -> T {
    *rng.pick(items).expect("non-empty")
}

/// (top-level error, partition error) of a response.
fn errors(r: &Response) -> [ErrorCode; 2] {
    match r {
        Response::Vote(v) => [v.error, v.partition_error],
        Response::BeginQuorumEpoch(q) | Response::EndQuorumEpoch(q) => [q.error, q.partition_error],
        Response::Fetch(f) => [f.error, f.partition_error],
        Response::FetchSnapshot(s) => [s.error, s.partition_error],
        Response::DescribeQuorum(d) => [d.error, d.partition_error],
        Response::AddRaftVoter(v) | Response::RemoveRaftVoter(v) => [v.error, ErrorCode::NONE],
        Response::UpdateRaftVoter(u) => [u.error, ErrorCode::NONE],
        Response::ApiVersions(a) => [a.error, ErrorCode::NONE],
    }
}

/// (leader id, leader epoch, endpoint) of a response that carries NodeEndpoints.
fn named_leader(r: &Response) -> Option<(NodeId, Epoch, Option<HostPort>)> {
    match r {
        Response::Vote(v) => Some((v.leader_id, v.leader_epoch, v.leader_endpoint.clone())),
        Response::BeginQuorumEpoch(q) | Response::EndQuorumEpoch(q) => {
            Some((q.leader_id, q.leader_epoch, q.leader_endpoint.clone()))
        }
        Response::Fetch(f) => Some((f.leader_id, f.leader_epoch, f.leader_endpoint.clone())),
        Response::FetchSnapshot(s) => {
            Some((s.leader_id, s.leader_epoch, s.leader_endpoint.clone()))
        }
        Response::UpdateRaftVoter(u) => {
            Some((u.leader_id, u.leader_epoch, u.leader_address.clone()))
        }
        Response::DescribeQuorum(_)
        | Response::AddRaftVoter(_)
        | Response::RemoveRaftVoter(_)
        | Response::ApiVersions(_) => None,
    }
}

fn fetch_reply(r: &Response) -> FetchResponse {
    match r {
        Response::Fetch(f) => f.clone(),
        other => panic!("not a fetch response: {other:?}"),
    }
}

/// A request a Java peer could send: right cluster (or none), right partition, sane fields.
fn well_formed_request(rng: &mut Rng) -> Request {
    let from = pick(rng, &[2, 3]);
    let epoch = pick(rng, &[1, 2, 3, 4]);
    let cluster_id = pick(rng, &[Some(CLUSTER), None]).map(String::from);
    match rng.below(6) {
        0 => {
            let pre_vote = rng.below(2) == 0;
            Request::Vote(VoteRequest {
                cluster_id,
                voter_id: pick(rng, &[-1, 1]),
                voter_directory_id: None,
                partition_ok: true,
                candidate_epoch: epoch,
                candidate_key: key(from),
                last_offset_epoch: rng.below(epoch as u64 + pre_vote as u64) as Epoch,
                last_offset: pick(rng, &[0, 1, 2, 5]),
                pre_vote,
            })
        }
        1 => Request::BeginQuorumEpoch(BeginQuorumEpochRequest {
            cluster_id,
            voter_id: pick(rng, &[-1, 1]),
            voter_directory_id: None,
            partition_ok: true,
            leader_id: from,
            leader_epoch: epoch,
            leader_endpoints: Endpoints::single("CONTROLLER", addr(from)),
        }),
        2 => Request::EndQuorumEpoch(EndQuorumEpochRequest {
            cluster_id,
            partition_ok: true,
            leader_id: from,
            leader_epoch: epoch,
            preferred_candidates: vec![key(1), key(5 - from)],
            leader_endpoints: Endpoints::empty(),
        }),
        3 => Request::Fetch(FetchRequest {
            cluster_id,
            max_wait_ms: pick(rng, &[0, 500]),
            fetch_offset: pick(rng, &[0, 1, 2, 3]),
            last_fetched_epoch: rng.below(epoch as u64 + 1) as Epoch,
            high_watermark: pick(rng, &[None, Some(-1), Some(1)]),
            ..fetch_request(pick(rng, &[2, 3, 4]), epoch, 0, 0)
        }),
        4 => Request::FetchSnapshot(FetchSnapshotRequest {
            cluster_id,
            replica_key: key(from),
            max_bytes: pick(rng, &[10, 1 << 20]),
            partition_ok: true,
            current_leader_epoch: epoch,
            snapshot_id: OffsetAndEpoch::new(pick(rng, &[2, 3]), 1),
            position: pick(rng, &[0, 5]),
        }),
        _ => Request::DescribeQuorum(DescribeQuorumRequest { partition_ok: true }),
    }
}

/// Feeds well-formed requests and the passing of time to nodes in every role; `check` sees each
/// reply with the request it answers.
fn for_every_reply_to_well_formed_requests(check: impl Fn(u64, &Response)) {
    for seed in 0..200u64 {
        let mut rng = Rng::new(seed);
        let mut node = match rng.below(5) {
            0 => start(1, VOTERS, None, MemLog::new()).0,
            1 => leader(1, VOTERS, 2, log_with(vec![data(0, 1, 2)])).0,
            2 => follower(1, VOTERS, 2, 2, log_with(vec![data(0, 1, 2)])),
            3 => start(4, VOTERS, None, MemLog::new()).0, // an observer
            _ => {
                let (mut l, _) = leader(1, VOTERS, 2, log_with(vec![data(0, 1, 2)]));
                l.begin_shutdown(Instant(2), std::time::Duration::from_secs(5));
                l
            }
        };
        let mut now = 10;
        for step in 0..60u64 {
            now += rng.below(400);
            let actions = if rng.below(3) == 0 {
                tick(&mut node, now)
            } else {
                request(&mut node, now, step, well_formed_request(&mut rng))
            };
            for (_, r) in replies(&actions) {
                check(seed, &r);
            }
            if node.fatal_error().is_some() {
                break;
            }
        }
    }
}

/// Java's raft client throws `ClusterAuthorizationException` out of `poll()` on a top-level
/// CLUSTER_AUTHORIZATION_FAILED, and its fault handler stops the process (§12 item 1).
#[test]
fn never_answers_with_cluster_authorization_failed() {
    for_every_reply_to_well_formed_requests(|seed, r| {
        assert!(
            !errors(r).contains(&ErrorCode::CLUSTER_AUTHORIZATION_FAILED),
            "seed {seed}: {r:?}"
        );
    });
}

/// Java asserts it never sends an invalid request: INVALID_REQUEST in a response makes
/// `maybeHandleCommonResponse` throw IllegalStateException, which is fatal (§12 item 2, §3.3).
#[test]
fn never_answers_a_well_formed_request_with_invalid_request() {
    for_every_reply_to_well_formed_requests(|seed, r| {
        assert!(
            !errors(r).contains(&ErrorCode::INVALID_REQUEST),
            "seed {seed}: {r:?}"
        );
    });
}

/// Java crashes (IllegalArgumentException) when told to follow a leader with an empty endpoint
/// map, so every answer naming a leader carries its NodeEndpoints (§12 item 3).
#[test]
fn a_fetch_answer_names_the_leader_with_its_endpoint() {
    let mut f = follower(1, VOTERS, 3, 2, MemLog::new());
    let fetch = reply(&request(
        &mut f,
        1,
        1,
        Request::Fetch(fetch_request(4, 3, 0, 0)),
    ));
    assert_eq!(named_leader(&fetch), Some((2, 3, Some(addr(2)))));
    let vote = reply(&request(
        &mut f,
        2,
        2,
        Request::Vote(vote_request(3, 3, 0, 0, true)),
    ));
    assert_eq!(named_leader(&vote), Some((2, 3, Some(addr(2)))));
    let (mut l, _) = leader(1, VOTERS, 2, MemLog::new());
    let fetch = reply(&request(
        &mut l,
        5,
        3,
        Request::Fetch(fetch_request(4, 1, 0, 0)),
    ));
    assert_eq!(
        fetch_reply(&fetch).partition_error,
        ErrorCode::FENCED_LEADER_EPOCH
    );
    assert_eq!(named_leader(&fetch), Some((1, 2, Some(addr(1)))));
    // And in every role, for every well-formed request.
    for_every_reply_to_well_formed_requests(|seed, r| {
        if let Some((id, _, endpoint)) = named_leader(r) {
            assert!(id < 0 || endpoint.is_some(), "seed {seed}: {r:?}");
        }
    });
}

/// Java's `hasConsistentLeader` throws IllegalStateException when a response names a different
/// leader for an epoch whose leader it already knows (§12 item 4).
#[test]
fn never_reports_two_leaders_for_one_epoch() {
    let mut f = follower(1, VOTERS, 3, 2, MemLog::new());
    // A confused peer claims epoch 3 for node 3: refused, and never repeated to others.
    let begin = BeginQuorumEpochRequest {
        cluster_id: Some(CLUSTER.into()),
        voter_id: 1,
        voter_directory_id: None,
        partition_ok: true,
        leader_id: 3,
        leader_epoch: 3,
        leader_endpoints: Endpoints::single("CONTROLLER", addr(3)),
    };
    let r = reply(&request(&mut f, 1, 1, Request::BeginQuorumEpoch(begin)));
    assert_eq!(named_leader(&r).map(|(id, e, _)| (id, e)), Some((2, 3)));
    assert_eq!(f.leader_id(), Some(2));
    let fetch = reply(&request(
        &mut f,
        2,
        2,
        Request::Fetch(fetch_request(3, 3, 0, 0)),
    ));
    assert_eq!(named_leader(&fetch).map(|(id, e, _)| (id, e)), Some((2, 3)));
    // A leader never names another node for its own epoch.
    let (mut l, _) = leader(1, VOTERS, 2, MemLog::new());
    let vote = reply(&request(
        &mut l,
        5,
        3,
        Request::Vote(vote_request(2, 2, 9, 1, false)),
    ));
    assert_eq!(named_leader(&vote).map(|(id, e, _)| (id, e)), Some((1, 2)));
    assert!(!vote_reply(&vote).vote_granted);
}

/// A Java follower asked to truncate below its high watermark throws (it would lose committed
/// data) and stops (§12 item 5). With Fetch v18 the follower tells the leader its HW.
#[test]
fn never_sends_a_diverging_epoch_below_the_followers_high_watermark() {
    // Leader log: epoch 1 at [0, 3), epoch 3 at [3, 5); the leader of epoch 4 adds a LeaderChange.
    let log = log_with(vec![data(0, 1, 3), data(3, 3, 2)]);
    let (mut l, _) = leader(1, VOTERS, 4, log);
    // (fetch offset, last fetched epoch, follower HW): followers whose committed prefix matches.
    let cases = [
        (6, 2, 3),
        (5, 1, 3),
        (4, 1, 0),
        (7, 3, 5),
        (9, 3, 5),
        (3, 2, 2),
    ];
    for (i, (offset, last_epoch, hw)) in cases.into_iter().enumerate() {
        let req = FetchRequest {
            high_watermark: Some(hw),
            ..fetch_request(2, 4, offset, last_epoch)
        };
        let r = fetch_reply(&reply(&request(
            &mut l,
            5 + i as u64,
            i as u64,
            Request::Fetch(req),
        )));
        let d = r.diverging_epoch.expect("diverges");
        assert!(d.offset >= hw, "case {i}: {d:?} below HW {hw}");
        assert!(
            d.offset <= offset,
            "case {i}: {d:?} is past the fetch offset"
        );
    }
}

/// A Java follower appends Fetch records at its LEO and rejects batches it cannot parse
/// (bad CRC, timestamp deltas, headers, keys, unknown control types), which is fatal (item 6).
#[test]
fn fetch_answers_start_at_the_fetch_offset_with_batches_java_parses() {
    let log = log_with(vec![data(0, 1, 3), data(3, 1, 2), data(5, 2, 1)]);
    let (mut l, _) = leader(1, VOTERS, 3, log);
    l.propose(Instant(2), 3, vec![b"a".to_vec(), b"bc".to_vec()])
        .unwrap();
    l.take_actions();
    let epochs = [(0, 0), (3, 1), (5, 1), (6, 2), (7, 3)];
    for (i, (offset, last_epoch)) in epochs.into_iter().enumerate() {
        let req = Request::Fetch(fetch_request(2, 3, offset, last_epoch));
        let r = fetch_reply(&reply(&request(&mut l, 5 + i as u64, i as u64, req)));
        assert!(!r.records.is_empty(), "fetch at {offset}");
        assert_eq!(r.records[0].base_offset, offset, "records start at the LEO");
        let mut bytes = Vec::new();
        encode_batches(&r.records, &mut bytes).unwrap();
        let split = split_batches(&bytes);
        assert!(split.end.is_clean());
        for b in &split.batches {
            b.validate().expect("CRC and layout");
            for rec in b.records().unwrap().iter() {
                let rec = rec.unwrap();
                assert_eq!(rec.timestamp_delta, 0);
                assert!(rec.headers.is_empty());
                if b.is_control() {
                    WireControl::decode(rec.key, rec.value).expect("a known control type");
                } else {
                    assert!(rec.key.is_none() && rec.value.is_some());
                }
            }
        }
        assert_eq!(decode_batches(&bytes).unwrap(), r.records);
    }
}

/// Java's `FollowerState.updateHighWatermark` throws on a non-monotonic update (item 7); −1
/// (unknown) is ignored by Java.
#[test]
fn the_high_watermark_sent_to_a_follower_never_goes_back() {
    for seed in 0..50u64 {
        let mut rng = Rng::new(seed);
        // Epoch 1 left [0, 5); the new leader of epoch 2 writes its LeaderChange at 5.
        let (mut l, _) = leader(1, VOTERS, 2, log_with(vec![data(0, 1, 5)]));
        let mut last_sent = -1;
        let mut fetched2 = 5;
        for step in 0..40u64 {
            let now = 10 + step;
            if rng.below(3) == 0 {
                l.propose(Instant(now), 2, vec![vec![1]]).unwrap();
                l.take_actions();
            }
            let end = l.log().end_offset();
            // Follower 2 only moves forward; 3 (an observer-like laggard) may restart lower.
            let (from, offset) = if rng.below(2) == 0 {
                fetched2 = rng.below((end - fetched2 + 1) as u64) as Offset + fetched2;
                (2, fetched2)
            } else {
                (3, rng.below((end + 1) as u64) as Offset)
            };
            let last_epoch = if offset > 5 {
                2
            } else if offset > 0 {
                1
            } else {
                0
            };
            let req = FetchRequest {
                max_wait_ms: 0,
                ..fetch_request(from, 2, offset, last_epoch)
            };
            let r = fetch_reply(&reply(&request(&mut l, now, step, Request::Fetch(req))));
            if from == 2 && r.high_watermark >= 0 {
                assert!(r.high_watermark >= last_sent, "seed {seed} step {step}");
                assert!(r.high_watermark >= 5, "the old epoch's data was committed");
                last_sent = r.high_watermark;
            }
        }
        assert!(last_sent > 5, "seed {seed}: the follower saw the HW move");
    }
}

/// Java's follower throws when the SnapshotId changes mid-download, when Position is not the one
/// it asked for, or when Size never lets it finish (item 8).
#[test]
fn fetch_snapshot_answers_keep_the_snapshot_id_and_position() {
    let (mut l, _) = leader(1, VOTERS, 2, log_with(vec![data(0, 1, 3), data(3, 1, 1)]));
    request(&mut l, 5, 1, Request::Fetch(fetch_request(2, 2, 5, 2)));
    assert_eq!(l.high_watermark(), Some(5));
    let first = OffsetAndEpoch::new(3, 1);
    take_snapshot(&mut l, first, 0, &[vec![7; 40]]).unwrap();
    let ask = |position, max_bytes| FetchSnapshotRequest {
        cluster_id: Some(CLUSTER.into()),
        replica_key: key(3),
        max_bytes,
        partition_ok: true,
        current_leader_epoch: 2,
        snapshot_id: first,
        position,
    };
    let (mut position, mut size, mut t) = (0, None, 10);
    loop {
        if t == 12 {
            // A newer snapshot appears mid-download: the download keeps its id.
            take_snapshot(&mut l, OffsetAndEpoch::new(5, 2), 0, &[]).unwrap();
        }
        let req = Request::FetchSnapshot(ask(position, 16));
        let Response::FetchSnapshot(r) = reply(&request(&mut l, t, t, req)) else {
            panic!()
        };
        assert_eq!(r.partition_error, NONE);
        assert_eq!((r.snapshot_id, r.position), (Some(first), position));
        assert_eq!(*size.get_or_insert(r.size), r.size, "the size is stable");
        assert!(!r.bytes.is_empty());
        position += r.bytes.len() as i64;
        assert!(position <= r.size);
        if position == r.size {
            break;
        }
        t += 1;
    }
    assert!(t > 12, "several chunks");
    let beyond = reply(&request(
        &mut l,
        99,
        99,
        Request::FetchSnapshot(ask(position, 16)),
    ));
    assert_eq!(errors(&beyond)[1], POSITION_OUT_OF_RANGE);
}

/// The control records in one encoding: (type, key, value) of every record of a control batch.
fn control_records(bytes: &[u8]) -> Vec<(WireControl, Vec<u8>, Vec<u8>)> {
    let split = split_batches(bytes);
    assert!(split.end.is_clean());
    let mut out = Vec::new();
    for b in split.batches.iter().filter(|b| b.is_control()) {
        b.validate().unwrap();
        for rec in b.records().unwrap().iter() {
            let rec = rec.unwrap();
            let c = WireControl::decode(rec.key, rec.value).unwrap();
            out.push((c, rec.key.unwrap().to_vec(), rec.value.unwrap().to_vec()));
        }
    }
    out
}

/// Leader 1 of epoch 1 at kraft.version 1 (bootstrap checkpoint), its LeaderChange committed and
/// a snapshot at (1, 1); returns it and that snapshot's checkpoint bytes.
fn leader_with_kraft_v1_snapshot() -> (TestRaft, Vec<u8>) {
    let mut log = MemLog::new();
    log.format_bootstrap(1, None);
    let (mut l, _) = leader(1, VOTERS, 1, log);
    // The epoch-start batch: LeaderChange, then the bootstrap kraft.version and voters copied.
    let end = l.log().end_offset();
    request(&mut l, 5, 1, Request::Fetch(fetch_request(2, 1, end, 1)));
    assert_eq!(l.high_watermark(), Some(end));
    let id = OffsetAndEpoch::new(end, 1);
    take_snapshot(&mut l, id, 0, &[b"x".to_vec()]).unwrap();
    let bytes = snapshot_file(&l, id);
    (l, bytes)
}

/// Java parses every KRaft control value at version 0 whatever it was written at: a body at
/// another version is misread or throws (item 10).
#[test]
fn control_records_are_written_at_version_0() {
    let (l, snapshot) = leader_with_kraft_v1_snapshot();
    let mut log = Vec::new();
    encode_batches(&l.log().batches(), &mut log).unwrap();
    let mut seen = Vec::new();
    for (c, key, value) in control_records(&log)
        .into_iter()
        .chain(control_records(&snapshot))
    {
        assert_eq!(key[..2], [0, 0], "key version 0");
        assert_eq!(c.value_bytes().unwrap(), value, "the v0 body, nothing more");
        let version = match &c {
            WireControl::LeaderChange(m) => m.version,
            WireControl::SnapshotHeader(m) => m.version,
            WireControl::SnapshotFooter(m) => m.version,
            WireControl::KRaftVersion(m) => m.version,
            WireControl::KRaftVoters(m) => m.version,
            other => panic!("{other:?} in the metadata log"),
        };
        assert_eq!(version, 0, "{c:?}");
        seen.push(c.record_type());
    }
    use ControlRecordType as T;
    for t in [
        T::LeaderChange,
        T::SnapshotHeader,
        T::KRaftVersion,
        T::KRaftVoters,
        T::SnapshotFooter,
    ] {
        assert!(seen.contains(&t), "{t:?} in {seen:?}");
    }
}

/// Items 9 and 11: Java refuses a VotersRecord changing more than one voter and a kraft.version
/// it does not know (> 1). kraftd does no reconfiguration: the only KRaftVersion/Voters records it
/// writes copy the bootstrap level and voter set (its own entry refreshed), in its log at the
/// start of an epoch and in its snapshots.
#[test]
fn kraft_version_and_voters_records_only_copy_the_known_voter_set() {
    let (l, snapshot) = leader_with_kraft_v1_snapshot();
    let mut log = Vec::new();
    encode_batches(&l.log().batches(), &mut log).unwrap();
    let mut checked = 0;
    for (c, _, _) in control_records(&log)
        .into_iter()
        .chain(control_records(&snapshot))
    {
        match c {
            WireControl::KRaftVersion(m) => assert_eq!(m.k_raft_version, 1, "the bootstrap's"),
            WireControl::KRaftVoters(m) => {
                let mut ids: Vec<_> = m.voters.iter().map(|v| v.voter_id).collect();
                ids.sort();
                assert_eq!(ids, VOTERS, "the same voters");
            }
            _ => continue,
        }
        checked += 1;
    }
    assert_eq!(
        checked, 4,
        "KRaftVersion + Voters in the log and in the snapshot"
    );
}

/// Java's snapshot reader requires a SnapshotHeader first and a SnapshotFooter last, and (0, 0)
/// is the bootstrap checkpoint: a state-machine snapshot there would be skipped or clash (12).
#[test]
fn snapshots_start_with_a_snapshot_header() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    let zero = OffsetAndEpoch::new(0, 0);
    assert!(
        take_snapshot(&mut l, zero, 0, &[]).is_err(),
        "nothing committed"
    );
    request(&mut l, 5, 1, Request::Fetch(fetch_request(2, 1, 1, 1)));
    assert_eq!(l.high_watermark(), Some(1));
    let id = OffsetAndEpoch::new(1, 1);
    take_snapshot(&mut l, id, 0, &[b"x".to_vec(), b"y".to_vec()]).unwrap();
    let bytes = snapshot_file(&l, id);
    let batches = decode_batches(&bytes).unwrap();
    let first = |b: &crate::raft::log::Batch| match &b.records {
        Records::Control(r) => r.first().cloned(),
        Records::Data(_) => None,
    };
    assert_eq!(batches[0].base_offset, 0);
    assert!(matches!(
        first(&batches[0]),
        Some(ControlRecord::SnapshotHeader(_))
    ));
    let last = batches.last().unwrap();
    assert!(matches!(
        first(last),
        Some(ControlRecord::SnapshotFooter(_))
    ));
    assert!(batches.iter().all(|b| b.epoch == 1));
}

/// Java sends ClusterId = null when it has none configured in the client; rejecting it with
/// INCONSISTENT_CLUSTER_ID would cut that peer off for good. Half the generated requests carry
/// no cluster id (Vote alone: `election_tests::top_level_errors_for_foreign_cluster_and_partition`).
#[test]
fn accepts_requests_with_a_null_cluster_id() {
    for_every_reply_to_well_formed_requests(|seed, r| {
        assert_ne!(
            errors(r)[0],
            ErrorCode::INCONSISTENT_CLUSTER_ID,
            "seed {seed}: {r:?}"
        );
    });
}

/// Java counts a Fetch as the follower's heartbeat only when it is valid; a leader that took
/// fenced or invalid fetches as check-quorum credit would stay in office without a quorum.
#[test]
fn only_valid_fetches_count_as_heartbeats() {
    let (mut l, _) = leader(1, VOTERS, 2, MemLog::new());
    let fenced = request(&mut l, 2500, 1, Request::Fetch(fetch_request(2, 1, 1, 1)));
    assert_eq!(errors(&reply(&fenced))[1], ErrorCode::FENCED_LEADER_EPOCH);
    let invalid = request(&mut l, 2600, 2, Request::Fetch(fetch_request(3, 2, 1, 3)));
    assert_eq!(errors(&reply(&invalid))[1], ErrorCode::INVALID_REQUEST);
    tick(&mut l, 3001);
    assert!(matches!(l.role(), Role::Resigned(_)), "{}", l.role());
    // Valid fetches: `quorum_epoch_tests::a_fetch_from_a_majority_keeps_the_leader_in_office`.
}

/// Java stops answering leader-only RPCs while shutting down but keeps answering Vote, so the
/// rest of the quorum can elect a successor; a silent node would stall the election.
#[test]
fn a_vote_is_answered_while_shutting_down() {
    let mut f = follower(1, VOTERS, 2, 2, log_with(vec![data(0, 1, 2)]));
    f.begin_shutdown(Instant(5), std::time::Duration::from_secs(5));
    f.take_actions();
    let vote = reply(&request(
        &mut f,
        6,
        1,
        Request::Vote(vote_request(3, 3, 2, 1, false)),
    ));
    let v = vote_reply(&vote);
    assert_eq!(
        (v.partition_error, v.leader_epoch, v.vote_granted),
        (NONE, 3, true)
    );
    let pre = reply(&request(
        &mut f,
        7,
        2,
        Request::Vote(vote_request(2, 3, 2, 1, true)),
    ));
    assert_eq!(vote_reply(&pre).partition_error, NONE);
    // A resigned leader: `quorum_epoch_tests::graceful_shutdown_resigns_then_completes_once_a_
    // successor_leads`.
}

/// A vote answered before it is durable can be cast twice after a crash: two leaders in one
/// epoch, which Java detects (`hasConsistentLeader`) and dies on.
#[test]
fn the_granted_vote_is_persisted_before_the_answer() {
    let (mut n, _) = start(1, VOTERS, Some(ElectionState::unknown(2)), MemLog::new());
    let actions = request(
        &mut n,
        10,
        1,
        Request::Vote(vote_request(2, 3, 0, 0, false)),
    );
    assert!(vote_reply(&reply(&actions)).vote_granted);
    // Crash right after the answer: the restarted node still holds the vote.
    let (log, store) = n.into_parts();
    let mut n = Raft::new(cfg(1, VOTERS), log, store, Instant(20));
    n.take_actions();
    let other = request(
        &mut n,
        21,
        2,
        Request::Vote(vote_request(3, 3, 0, 0, false)),
    );
    assert!(!vote_reply(&reply(&other)).vote_granted);
    // A candidacy is persisted before its Vote requests go out.
    let (mut c, _) = start(1, VOTERS, Some(ElectionState::unknown(3)), MemLog::new());
    let mut t = 0;
    let sent = 'poll: loop {
        t += 100;
        assert!(t < 20_000, "no candidacy");
        let mut pending = tick(&mut c, t);
        while !pending.is_empty() {
            let mut next = Vec::new();
            for (to, corr, r) in sends(&pending) {
                match r {
                    // The store is written inside `step`, before the driver sends anything.
                    Request::Vote(v) if !v.pre_vote => {
                        break 'poll c.store().read_election_state().unwrap()
                    }
                    Request::Vote(v) => {
                        next.extend(respond(&mut c, t, to, corr, granted(v.candidate_epoch)))
                    }
                    _ => {}
                }
            }
            pending = next;
        }
    };
    assert_eq!(
        sent.map(|s| (s.epoch, s.voted_key)),
        Some((4, Some(key(1))))
    );
}

/// Item 12, second half: (0, 0) is the bootstrap checkpoint's id; a Java peer refuses any
/// other snapshot with that id. The core refuses to make one whatever the high watermark.
#[test]
fn no_snapshot_is_made_at_0_0_even_when_asked() {
    let (mut l, _) = leader(1, VOTERS, 1, MemLog::new());
    request(&mut l, 5, 1, Request::Fetch(fetch_request(2, 1, 1, 1)));
    assert_eq!(l.high_watermark(), Some(1));
    assert!(take_snapshot(&mut l, OffsetAndEpoch::new(0, 0), 0, &[]).is_err());
}
