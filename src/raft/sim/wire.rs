//! Passing simulated messages through the real wire path: domain -> generated type -> bytes at
//! a negotiated version -> generated type -> domain. A request that cannot be said at the
//! version fails the send with `UNSUPPORTED_VERSION`, as Kafka's network client does once it
//! is connected to the peer (e.g. a pre-vote to a peer that only speaks Vote v1, like a Kafka
//! 3.9 controller); to a peer it cannot reach, the request is lost like any other.

use crate::protocol::codec::Message;
use crate::protocol::errors::ErrorCode;
use crate::raft::convert::{self, ConvertError, WireRequest, WireResponse};
use crate::raft::msg::{ApiKind, Request, Response};

/// The API versions every pair of simulated nodes negotiated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireVersions {
    pub vote: i16,
    pub begin_quorum_epoch: i16,
    pub end_quorum_epoch: i16,
    pub fetch: i16,
    pub fetch_snapshot: i16,
    pub describe_quorum: i16,
}

impl WireVersions {
    /// What Kafka 4.4 peers negotiate.
    pub fn latest() -> Self {
        WireVersions {
            vote: 2,
            begin_quorum_epoch: 1,
            end_quorum_epoch: 1,
            fetch: 18,
            fetch_snapshot: 1,
            describe_quorum: 2,
        }
    }

    fn version(&self, api: ApiKind) -> i16 {
        match api {
            ApiKind::Vote => self.vote,
            ApiKind::BeginQuorumEpoch => self.begin_quorum_epoch,
            ApiKind::EndQuorumEpoch => self.end_quorum_epoch,
            ApiKind::Fetch => self.fetch,
            ApiKind::FetchSnapshot => self.fetch_snapshot,
            ApiKind::DescribeQuorum => self.describe_quorum,
            // The highest a Kafka 4.4 controller serves; every simulated peer speaks them.
            ApiKind::AddRaftVoter => 1,
            ApiKind::RemoveRaftVoter | ApiKind::UpdateRaftVoter => 0,
            ApiKind::ApiVersions => 3,
        }
    }

    /// The request as the receiver decodes it, or the error the sender's network layer reports.
    pub fn pass_request(&self, r: &Request) -> Result<Request, ErrorCode> {
        let v = self.version(r.api());
        let w = match convert::request_to_wire(r, v) {
            Ok(w) => w,
            Err(ConvertError::Unsupported { .. }) => return Err(ErrorCode::UNSUPPORTED_VERSION),
            Err(e) => panic!("request {r:?} does not convert: {e}"),
        };
        let w = match w {
            WireRequest::Vote(m) => WireRequest::Vote(rt(&m, v)),
            WireRequest::BeginQuorumEpoch(m) => WireRequest::BeginQuorumEpoch(rt(&m, v)),
            WireRequest::EndQuorumEpoch(m) => WireRequest::EndQuorumEpoch(rt(&m, v)),
            WireRequest::Fetch(m) => WireRequest::Fetch(rt(&m, v)),
            WireRequest::FetchSnapshot(m) => WireRequest::FetchSnapshot(rt(&m, v)),
            WireRequest::DescribeQuorum(m) => WireRequest::DescribeQuorum(rt(&m, v)),
            WireRequest::AddRaftVoter(m) => WireRequest::AddRaftVoter(rt(&m, v)),
            WireRequest::RemoveRaftVoter(m) => WireRequest::RemoveRaftVoter(rt(&m, v)),
            WireRequest::UpdateRaftVoter(m) => WireRequest::UpdateRaftVoter(rt(&m, v)),
            WireRequest::ApiVersions(m) => WireRequest::ApiVersions(rt(&m, v)),
        };
        Ok(convert::request_from_wire(&w))
    }

    /// The response as the requester decodes it.
    pub fn pass_response(&self, r: &Response) -> Result<Response, String> {
        let v = self.version(r.api());
        let w = convert::response_to_wire(r, v)
            .map_err(|e| format!("response {r:?} does not convert: {e}"))?;
        let w = match w {
            WireResponse::Vote(m) => WireResponse::Vote(rt(&m, v)),
            WireResponse::BeginQuorumEpoch(m) => WireResponse::BeginQuorumEpoch(rt(&m, v)),
            WireResponse::EndQuorumEpoch(m) => WireResponse::EndQuorumEpoch(rt(&m, v)),
            WireResponse::Fetch(m) => WireResponse::Fetch(rt(&m, v)),
            WireResponse::FetchSnapshot(m) => WireResponse::FetchSnapshot(rt(&m, v)),
            WireResponse::DescribeQuorum(m) => WireResponse::DescribeQuorum(rt(&m, v)),
            WireResponse::AddRaftVoter(m) => WireResponse::AddRaftVoter(rt(&m, v)),
            WireResponse::RemoveRaftVoter(m) => WireResponse::RemoveRaftVoter(rt(&m, v)),
            WireResponse::UpdateRaftVoter(m) => WireResponse::UpdateRaftVoter(rt(&m, v)),
            WireResponse::ApiVersions(m) => WireResponse::ApiVersions(rt(&m, v)),
        };
        convert::response_from_wire(&w).map_err(|e| format!("response {r:?} does not decode: {e}"))
    }
}

fn rt<M: Message>(m: &M, v: i16) -> M {
    let bytes = m
        .encode_to_vec(v)
        .unwrap_or_else(|e| panic!("{} v{v} does not encode: {e}", M::NAME));
    M::decode_exact(&bytes, v).unwrap_or_else(|e| panic!("{} v{v} does not decode: {e}", M::NAME))
}
