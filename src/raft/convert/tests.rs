//! Round trips domain -> generated type -> bytes -> generated type -> domain at every version,
//! and the record-batch codec against the spec's worked example.

use super::records::{decode_batches, encode_batches};
use super::*;
use crate::protocol::codec::{Message, Uuid};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::leader_change_message::{LeaderChangeMessage, Voter};
use crate::raft::log::{Batch, ControlRecord, Records};
use crate::raft::msg::*;
use crate::raft::types::{Endpoints, HostPort, OffsetAndEpoch, ReplicaKey};

fn bytes_round_trip_request(w: &WireRequest, v: i16) -> WireRequest {
    fn rt<M: Message>(m: &M, v: i16) -> M {
        M::decode_exact(&m.encode_to_vec(v).expect("encodes"), v).expect("decodes")
    }
    match w {
        WireRequest::Vote(m) => WireRequest::Vote(rt(m, v)),
        WireRequest::BeginQuorumEpoch(m) => WireRequest::BeginQuorumEpoch(rt(m, v)),
        WireRequest::EndQuorumEpoch(m) => WireRequest::EndQuorumEpoch(rt(m, v)),
        WireRequest::Fetch(m) => WireRequest::Fetch(rt(m, v)),
        WireRequest::FetchSnapshot(m) => WireRequest::FetchSnapshot(rt(m, v)),
        WireRequest::DescribeQuorum(m) => WireRequest::DescribeQuorum(rt(m, v)),
        WireRequest::AddRaftVoter(m) => WireRequest::AddRaftVoter(rt(m, v)),
        WireRequest::RemoveRaftVoter(m) => WireRequest::RemoveRaftVoter(rt(m, v)),
        WireRequest::UpdateRaftVoter(m) => WireRequest::UpdateRaftVoter(rt(m, v)),
        WireRequest::ApiVersions(m) => WireRequest::ApiVersions(rt(m, v)),
    }
}

fn bytes_round_trip_response(w: &WireResponse, v: i16) -> WireResponse {
    fn rt<M: Message>(m: &M, v: i16) -> M {
        M::decode_exact(&m.encode_to_vec(v).expect("encodes"), v).expect("decodes")
    }
    match w {
        WireResponse::Vote(m) => WireResponse::Vote(rt(m, v)),
        WireResponse::BeginQuorumEpoch(m) => WireResponse::BeginQuorumEpoch(rt(m, v)),
        WireResponse::EndQuorumEpoch(m) => WireResponse::EndQuorumEpoch(rt(m, v)),
        WireResponse::Fetch(m) => WireResponse::Fetch(rt(m, v)),
        WireResponse::FetchSnapshot(m) => WireResponse::FetchSnapshot(rt(m, v)),
        WireResponse::DescribeQuorum(m) => WireResponse::DescribeQuorum(rt(m, v)),
        WireResponse::AddRaftVoter(m) => WireResponse::AddRaftVoter(rt(m, v)),
        WireResponse::RemoveRaftVoter(m) => WireResponse::RemoveRaftVoter(rt(m, v)),
        WireResponse::UpdateRaftVoter(m) => WireResponse::UpdateRaftVoter(rt(m, v)),
        WireResponse::ApiVersions(m) => WireResponse::ApiVersions(rt(m, v)),
    }
}

fn request_at(r: &Request, v: i16) -> Request {
    let w = request_to_wire(r, v).expect("convertible");
    request_from_wire(&bytes_round_trip_request(&w, v))
}

fn response_at(r: &Response, v: i16) -> Response {
    let w = response_to_wire(r, v).expect("convertible");
    response_from_wire(&bytes_round_trip_response(&w, v)).expect("decodes")
}

fn key(id: i32) -> ReplicaKey {
    ReplicaKey::new(id, Some(Uuid::from_u64s(9, id as u64)))
}

fn vote() -> VoteRequest {
    VoteRequest {
        cluster_id: Some("c".into()),
        voter_id: 2,
        voter_directory_id: Some(Uuid::from_u64s(9, 2)),
        partition_ok: true,
        candidate_epoch: 5,
        candidate_key: key(1),
        last_offset_epoch: 4,
        last_offset: 100,
        pre_vote: false,
    }
}

#[test]
fn vote_round_trips_at_every_version_and_pre_vote_needs_v2() {
    let r = Request::Vote(vote());
    assert_eq!(request_at(&r, 2), r);
    assert_eq!(request_at(&r, 1), r);
    let v0 = Request::Vote(VoteRequest {
        voter_id: -1,
        voter_directory_id: None,
        candidate_key: ReplicaKey::of_id(1),
        ..vote()
    });
    assert_eq!(
        request_at(&r, 0),
        v0,
        "v0 has no voter key nor directory ids"
    );
    let pre = Request::Vote(VoteRequest {
        pre_vote: true,
        ..vote()
    });
    assert_eq!(request_at(&pre, 2), pre);
    assert!(matches!(
        request_to_wire(&pre, 1),
        Err(ConvertError::Unsupported { .. })
    ));
    let resp = Response::Vote(VoteResponse {
        partition_ok: true,
        leader_id: 3,
        leader_epoch: 5,
        vote_granted: true,
        leader_endpoint: Some(HostPort::new("h3", 9093)),
        ..VoteResponse::default()
    });
    assert_eq!(response_at(&resp, 1), resp);
    let Response::Vote(mut v0) = resp.clone() else {
        unreachable!()
    };
    v0.leader_endpoint = None;
    assert_eq!(response_at(&resp, 0), Response::Vote(v0));
    let err = Response::Vote(VoteResponse {
        error: ErrorCode::INCONSISTENT_CLUSTER_ID,
        ..VoteResponse::default()
    });
    assert_eq!(response_at(&err, 2), err);
}

#[test]
fn begin_and_end_quorum_epoch_round_trip() {
    let endpoints = Endpoints::single("CONTROLLER", HostPort::new("h1", 9093));
    let begin = Request::BeginQuorumEpoch(BeginQuorumEpochRequest {
        cluster_id: None,
        voter_id: 2,
        voter_directory_id: Some(Uuid::from_u64s(9, 2)),
        partition_ok: true,
        leader_id: 1,
        leader_epoch: 7,
        leader_endpoints: endpoints.clone(),
    });
    assert_eq!(request_at(&begin, 1), begin);
    let end = EndQuorumEpochRequest {
        cluster_id: Some("c".into()),
        partition_ok: true,
        leader_id: 1,
        leader_epoch: 7,
        preferred_candidates: vec![key(3), key(2)],
        leader_endpoints: endpoints,
    };
    assert_eq!(
        request_at(&Request::EndQuorumEpoch(end.clone()), 1),
        Request::EndQuorumEpoch(end.clone())
    );
    let v0 = EndQuorumEpochRequest {
        preferred_candidates: vec![ReplicaKey::of_id(3), ReplicaKey::of_id(2)],
        leader_endpoints: Endpoints::empty(),
        ..end.clone()
    };
    assert_eq!(
        request_at(&Request::EndQuorumEpoch(end), 0),
        Request::EndQuorumEpoch(v0)
    );
    let resp = QuorumEpochResponse {
        partition_ok: true,
        partition_error: ErrorCode::FENCED_LEADER_EPOCH,
        leader_id: 1,
        leader_epoch: 8,
        leader_endpoint: Some(HostPort::new("h1", 9093)),
        ..QuorumEpochResponse::default()
    };
    assert_eq!(
        response_at(&Response::BeginQuorumEpoch(resp.clone()), 1),
        Response::BeginQuorumEpoch(resp.clone())
    );
    assert_eq!(
        response_at(&Response::EndQuorumEpoch(resp.clone()), 1),
        Response::EndQuorumEpoch(resp)
    );
}

fn leader_change_batch() -> Batch {
    let ids = |ids: &[i32]| {
        ids.iter()
            .map(|&id| Voter {
                voter_id: id,
                ..Voter::default()
            })
            .collect()
    };
    Batch {
        base_offset: 0,
        epoch: 1,
        append_time: 1_700_000_000_000,
        records: Records::Control(vec![ControlRecord::LeaderChange(LeaderChangeMessage {
            version: 0,
            leader_id: 1,
            voters: ids(&[1, 2, 3]),
            granting_voters: ids(&[1, 2]),
            ..LeaderChangeMessage::default()
        })]),
        encoded: Default::default(),
    }
}

#[test]
fn fetch_round_trips_from_v13_with_real_record_batches() {
    let req = FetchRequest {
        cluster_id: Some("c".into()),
        replica_key: key(2),
        max_wait_ms: 500,
        max_bytes: 1 << 20,
        partition_ok: true,
        current_leader_epoch: 3,
        fetch_offset: 10,
        last_fetched_epoch: 2,
        high_watermark: Some(8),
    };
    for v in 13..=18 {
        let mut expected = req.clone();
        if v < 17 {
            expected.replica_key.directory_id = None;
        }
        if v < 18 {
            expected.high_watermark = None;
        }
        assert_eq!(
            request_at(&Request::Fetch(req.clone()), v),
            Request::Fetch(expected),
            "v{v}"
        );
    }
    assert!(matches!(
        request_to_wire(&Request::Fetch(req), 12),
        Err(ConvertError::Unsupported { .. })
    ));
    let data = Batch {
        base_offset: 1,
        epoch: 1,
        append_time: 5,
        records: Records::Data(vec![b"a".to_vec(), b"bc".to_vec()]),
        encoded: Default::default(),
    };
    let resp = FetchResponse {
        partition_ok: true,
        high_watermark: 1,
        log_start_offset: 0,
        leader_id: 1,
        leader_epoch: 1,
        records: vec![leader_change_batch(), data],
        leader_endpoint: Some(HostPort::new("h1", 9093)),
        ..FetchResponse::default()
    };
    assert_eq!(
        response_at(&Response::Fetch(resp.clone()), 17),
        Response::Fetch(resp.clone())
    );
    let diverging = FetchResponse {
        records: vec![],
        diverging_epoch: Some(OffsetAndEpoch::new(4, 2)),
        ..resp.clone()
    };
    assert_eq!(
        response_at(&Response::Fetch(diverging.clone()), 13),
        Response::Fetch(FetchResponse {
            leader_endpoint: None,
            ..diverging
        })
    );
    let snapshot = FetchResponse {
        records: vec![],
        snapshot_id: Some(OffsetAndEpoch::new(40, 2)),
        ..resp
    };
    assert_eq!(
        response_at(&Response::Fetch(snapshot.clone()), 17),
        Response::Fetch(snapshot.clone())
    );
    // Java fills NodeEndpoints only from v17 (`RaftUtil.singletonFetchResponse`).
    assert_eq!(
        response_at(&Response::Fetch(snapshot.clone()), 16),
        Response::Fetch(FetchResponse {
            leader_endpoint: None,
            ..snapshot
        })
    );
}

#[test]
fn the_leader_change_batch_matches_the_spec_worked_example() {
    // kraft-raft-spec.md §6.5(a): leader 1, epoch 1, offset 0, voters {1,2,3}, granted by {1,2}.
    let hex = "00000000000000000000005e00000001021735ab2b0020000000000000018bcf\
               e568000000018bcfe56800ffffffffffffffffffffffffffff00000001580000\
               0008000000024400000000000104000000010000000002000000000300030000\
               00010000000002000000";
    let expected: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let mut out = Vec::new();
    encode_batches(&[leader_change_batch()], &mut out).unwrap();
    assert_eq!(out, expected);
    assert_eq!(decode_batches(&out).unwrap(), vec![leader_change_batch()]);
    // A torn tail (a Fetch response cut at its size limit) is dropped; a bad CRC is an error.
    assert_eq!(decode_batches(&out[..out.len() - 5]).unwrap(), vec![]);
    let mut corrupt = out.clone();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 1;
    assert!(decode_batches(&corrupt).is_err());
}

#[test]
fn fetch_snapshot_and_describe_quorum_round_trip() {
    let req = FetchSnapshotRequest {
        cluster_id: Some("c".into()),
        replica_key: key(3),
        max_bytes: 1024,
        partition_ok: true,
        current_leader_epoch: 2,
        snapshot_id: OffsetAndEpoch::new(30, 2),
        position: 64,
    };
    assert_eq!(
        request_at(&Request::FetchSnapshot(req.clone()), 1),
        Request::FetchSnapshot(req)
    );
    let resp = FetchSnapshotResponse {
        partition_ok: true,
        snapshot_id: Some(OffsetAndEpoch::new(30, 2)),
        leader_id: 1,
        leader_epoch: 2,
        size: 100,
        position: 64,
        bytes: vec![1, 2, 3],
        leader_endpoint: Some(HostPort::new("h1", 9093)),
        ..FetchSnapshotResponse::default()
    };
    assert_eq!(
        response_at(&Response::FetchSnapshot(resp.clone()), 1),
        Response::FetchSnapshot(resp)
    );
    let dq = DescribeQuorumResponse {
        partition_ok: true,
        leader_id: 1,
        leader_epoch: 2,
        high_watermark: 9,
        voters: vec![ReplicaDescription {
            replica_key: key(1),
            log_end_offset: 10,
            last_fetch_timestamp: 5,
            last_caught_up_timestamp: 5,
        }],
        observers: vec![],
        nodes: vec![(
            1,
            Endpoints::single("CONTROLLER", HostPort::new("h1", 9093)),
        )],
        ..DescribeQuorumResponse::default()
    };
    assert_eq!(
        response_at(&Response::DescribeQuorum(dq.clone()), 2),
        Response::DescribeQuorum(dq)
    );
    let req = Request::DescribeQuorum(DescribeQuorumRequest { partition_ok: true });
    assert_eq!(request_at(&req, 0), req);
}
