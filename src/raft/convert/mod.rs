//! The edge between the raft core's domain messages (`msg.rs`) and Kafka's generated wire
//! types (`protocol::messages`): one submodule per API, each with `*_to_wire(domain, version)`
//! and `*_from_wire(wire)`. `to_wire` produces a message valid at `version` (fields absent from
//! that version left at their defaults) and refuses what cannot be said at it (a pre-vote below
//! Vote v2, Fetch below v13): the driver reports that as `UNSUPPORTED_VERSION`, which is how
//! Kafka's network client fails such a send. `from_wire` never fails on shape: a message that
//! does not name exactly `__cluster_metadata-0` gets `partition_ok = false` and the core answers
//! it as Kafka does. Record batches go through `records` (Kafka's v2 format).

pub mod describe;
pub mod fetch;
pub mod fetch_snapshot;
pub mod quorum_epoch;
pub mod records;
pub mod snapshot;
pub mod vote;
pub mod voters;

#[cfg(test)]
mod tests;

use super::msg::{ApiKind, Request, Response};
use super::types::{Endpoints, HostPort, NodeId};
use crate::protocol::messages as wire;

/// What cannot be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// The message cannot be expressed at this version (answer: `UNSUPPORTED_VERSION`).
    #[error("{api:?} v{version} cannot carry {what}")]
    Unsupported {
        api: ApiKind,
        version: i16,
        what: &'static str,
    },
    /// Record batches that do not decode (bad CRC, unknown control type, ...).
    #[error("records: {0}")]
    Records(String),
}

/// A raft request as Kafka's generated types.
#[derive(Debug, Clone, PartialEq)]
pub enum WireRequest {
    Vote(wire::VoteRequest),
    BeginQuorumEpoch(wire::BeginQuorumEpochRequest),
    EndQuorumEpoch(wire::end_quorum_epoch_request::EndQuorumEpochRequest),
    Fetch(wire::fetch_request::FetchRequest),
    FetchSnapshot(wire::fetch_snapshot_request::FetchSnapshotRequest),
    DescribeQuorum(wire::DescribeQuorumRequest),
    AddRaftVoter(wire::AddRaftVoterRequest),
    RemoveRaftVoter(wire::RemoveRaftVoterRequest),
    UpdateRaftVoter(wire::UpdateRaftVoterRequest),
    ApiVersions(wire::ApiVersionsRequest),
}

/// A raft response as Kafka's generated types.
#[derive(Debug, Clone, PartialEq)]
pub enum WireResponse {
    Vote(wire::vote_response::VoteResponse),
    BeginQuorumEpoch(wire::BeginQuorumEpochResponse),
    EndQuorumEpoch(wire::end_quorum_epoch_response::EndQuorumEpochResponse),
    Fetch(wire::fetch_response::FetchResponse),
    FetchSnapshot(wire::fetch_snapshot_response::FetchSnapshotResponse),
    DescribeQuorum(wire::DescribeQuorumResponse),
    AddRaftVoter(wire::AddRaftVoterResponse),
    RemoveRaftVoter(wire::RemoveRaftVoterResponse),
    UpdateRaftVoter(wire::UpdateRaftVoterResponse),
    ApiVersions(wire::ApiVersionsResponse),
}

pub fn request_to_wire(r: &Request, version: i16) -> Result<WireRequest, ConvertError> {
    Ok(match r {
        Request::Vote(v) => WireRequest::Vote(vote::request_to_wire(v, version)?),
        Request::BeginQuorumEpoch(b) => {
            WireRequest::BeginQuorumEpoch(quorum_epoch::begin_request_to_wire(b, version))
        }
        Request::EndQuorumEpoch(e) => {
            WireRequest::EndQuorumEpoch(quorum_epoch::end_request_to_wire(e, version))
        }
        Request::Fetch(f) => WireRequest::Fetch(fetch::request_to_wire(f, version)?),
        Request::FetchSnapshot(f) => {
            WireRequest::FetchSnapshot(fetch_snapshot::request_to_wire(f, version))
        }
        Request::DescribeQuorum(d) => WireRequest::DescribeQuorum(describe::request_to_wire(d)),
        Request::AddRaftVoter(a) => {
            WireRequest::AddRaftVoter(voters::add_request_to_wire(a, version))
        }
        Request::RemoveRaftVoter(r) => {
            WireRequest::RemoveRaftVoter(voters::remove_request_to_wire(r))
        }
        Request::UpdateRaftVoter(u) => {
            WireRequest::UpdateRaftVoter(voters::update_request_to_wire(u))
        }
        Request::ApiVersions => WireRequest::ApiVersions(voters::api_versions_request_to_wire()),
    })
}

pub fn request_from_wire(w: &WireRequest) -> Request {
    match w {
        WireRequest::Vote(v) => Request::Vote(vote::request_from_wire(v)),
        WireRequest::BeginQuorumEpoch(b) => {
            Request::BeginQuorumEpoch(quorum_epoch::begin_request_from_wire(b))
        }
        WireRequest::EndQuorumEpoch(e) => {
            Request::EndQuorumEpoch(quorum_epoch::end_request_from_wire(e))
        }
        WireRequest::Fetch(f) => Request::Fetch(fetch::request_from_wire(f)),
        WireRequest::FetchSnapshot(f) => {
            Request::FetchSnapshot(fetch_snapshot::request_from_wire(f))
        }
        WireRequest::DescribeQuorum(d) => Request::DescribeQuorum(describe::request_from_wire(d)),
        WireRequest::AddRaftVoter(a) => Request::AddRaftVoter(voters::add_request_from_wire(a)),
        WireRequest::RemoveRaftVoter(r) => {
            Request::RemoveRaftVoter(voters::remove_request_from_wire(r))
        }
        WireRequest::UpdateRaftVoter(u) => {
            Request::UpdateRaftVoter(voters::update_request_from_wire(u))
        }
        WireRequest::ApiVersions(_) => Request::ApiVersions,
    }
}

pub fn response_to_wire(r: &Response, version: i16) -> Result<WireResponse, ConvertError> {
    Ok(match r {
        Response::Vote(v) => WireResponse::Vote(vote::response_to_wire(v, version)),
        Response::BeginQuorumEpoch(b) => {
            WireResponse::BeginQuorumEpoch(quorum_epoch::begin_response_to_wire(b, version))
        }
        Response::EndQuorumEpoch(e) => {
            WireResponse::EndQuorumEpoch(quorum_epoch::end_response_to_wire(e, version))
        }
        Response::Fetch(f) => WireResponse::Fetch(fetch::response_to_wire(f, version)?),
        Response::FetchSnapshot(f) => {
            WireResponse::FetchSnapshot(fetch_snapshot::response_to_wire(f, version))
        }
        Response::DescribeQuorum(d) => {
            WireResponse::DescribeQuorum(describe::response_to_wire(d, version))
        }
        Response::AddRaftVoter(a) => WireResponse::AddRaftVoter(voters::add_response_to_wire(a)),
        Response::RemoveRaftVoter(r) => {
            WireResponse::RemoveRaftVoter(voters::remove_response_to_wire(r))
        }
        Response::UpdateRaftVoter(u) => {
            WireResponse::UpdateRaftVoter(voters::update_response_to_wire(u))
        }
        Response::ApiVersions(a) => {
            WireResponse::ApiVersions(voters::api_versions_response_to_wire(a))
        }
    })
}

pub fn response_from_wire(w: &WireResponse) -> Result<Response, ConvertError> {
    Ok(match w {
        WireResponse::Vote(v) => Response::Vote(vote::response_from_wire(v)),
        WireResponse::BeginQuorumEpoch(b) => {
            Response::BeginQuorumEpoch(quorum_epoch::begin_response_from_wire(b))
        }
        WireResponse::EndQuorumEpoch(e) => {
            Response::EndQuorumEpoch(quorum_epoch::end_response_from_wire(e))
        }
        WireResponse::Fetch(f) => Response::Fetch(fetch::response_from_wire(f)?),
        WireResponse::FetchSnapshot(f) => {
            Response::FetchSnapshot(fetch_snapshot::response_from_wire(f))
        }
        WireResponse::DescribeQuorum(d) => {
            Response::DescribeQuorum(describe::response_from_wire(d))
        }
        WireResponse::AddRaftVoter(a) => Response::AddRaftVoter(voters::add_response_from_wire(a)),
        WireResponse::RemoveRaftVoter(r) => {
            Response::RemoveRaftVoter(voters::remove_response_from_wire(r))
        }
        WireResponse::UpdateRaftVoter(u) => {
            Response::UpdateRaftVoter(voters::update_response_from_wire(u))
        }
        WireResponse::ApiVersions(a) => {
            Response::ApiVersions(voters::api_versions_response_from_wire(a))
        }
    })
}

/// Exactly one item, by reference.
pub(super) fn single<T>(items: &[T]) -> Option<&T> {
    match items {
        [one] => Some(one),
        _ => None,
    }
}

/// Endpoints from `(name, host, port)` triples (names upper-cased, as Java's
/// `ListenerName.normalised`).
pub(super) fn endpoints<'a>(items: impl Iterator<Item = (&'a str, &'a str, u16)>) -> Endpoints {
    let mut e = Endpoints::empty();
    for (name, host, port) in items {
        e.insert(name, HostPort::new(host, port));
    }
    e
}

/// The leader's address among NodeEndpoints entries.
pub(super) fn leader_endpoint<'a>(
    leader: NodeId,
    items: impl Iterator<Item = (NodeId, &'a str, i64)>,
) -> Option<HostPort> {
    if leader < 0 {
        return None;
    }
    items
        .filter(|(id, _, _)| *id == leader)
        .find_map(|(_, host, port)| u16::try_from(port).ok().map(|p| HostPort::new(host, p)))
}
