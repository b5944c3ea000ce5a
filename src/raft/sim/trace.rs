//! One-line summaries of messages for transcripts.

use crate::protocol::errors::ErrorCode;
use crate::raft::msg::{Request, Response};

fn err(e: ErrorCode) -> String {
    if e == ErrorCode::NONE {
        String::new()
    } else {
        format!(" {}", e.name())
    }
}

/// Voter-change answers name their outcome, success included.
fn err_or_none(e: ErrorCode) -> String {
    format!(" {}", e.name())
}

pub fn request(r: &Request) -> String {
    match r {
        Request::Vote(v) => format!(
            "Vote{} e{} last={}@e{}",
            if v.pre_vote { "(pre)" } else { "" },
            v.candidate_epoch,
            v.last_offset,
            v.last_offset_epoch
        ),
        Request::BeginQuorumEpoch(b) => format!(
            "BeginQuorumEpoch e{} leader={}",
            b.leader_epoch, b.leader_id
        ),
        Request::EndQuorumEpoch(e) => format!(
            "EndQuorumEpoch e{} leader={} preferred={:?}",
            e.leader_epoch,
            e.leader_id,
            e.preferred_candidates
                .iter()
                .map(|k| k.id)
                .collect::<Vec<_>>()
        ),
        Request::Fetch(f) => format!(
            "Fetch e{} offset={} last_epoch={}",
            f.current_leader_epoch, f.fetch_offset, f.last_fetched_epoch
        ),
        Request::FetchSnapshot(f) => {
            format!(
                "FetchSnapshot e{} id={} position={}",
                f.current_leader_epoch, f.snapshot_id, f.position
            )
        }
        Request::DescribeQuorum(_) => "DescribeQuorum".into(),
        Request::AddRaftVoter(a) => format!(
            "AddRaftVoter {}{}",
            a.voter,
            if a.ack_when_committed {
                ""
            } else {
                " ack=written"
            }
        ),
        Request::RemoveRaftVoter(r) => format!("RemoveRaftVoter {}", r.voter),
        Request::UpdateRaftVoter(u) => format!(
            "UpdateRaftVoter e{} {} kraft={}..={}",
            u.current_leader_epoch,
            u.voter,
            u.supported_kraft_version.0,
            u.supported_kraft_version.1
        ),
        Request::ApiVersions => "ApiVersions".into(),
    }
}

pub fn response(r: &Response) -> String {
    match r {
        Response::Vote(v) => format!(
            "VoteResponse{}{} e{} leader={} granted={}",
            err(v.error),
            err(v.partition_error),
            v.leader_epoch,
            v.leader_id,
            v.vote_granted
        ),
        Response::BeginQuorumEpoch(b) => {
            format!(
                "BeginQuorumEpochResponse{}{} e{} leader={}",
                err(b.error),
                err(b.partition_error),
                b.leader_epoch,
                b.leader_id
            )
        }
        Response::EndQuorumEpoch(b) => {
            format!(
                "EndQuorumEpochResponse{}{} e{} leader={}",
                err(b.error),
                err(b.partition_error),
                b.leader_epoch,
                b.leader_id
            )
        }
        Response::Fetch(f) => {
            let mut s = format!(
                "FetchResponse{}{} e{} leader={} hw={}",
                err(f.error),
                err(f.partition_error),
                f.leader_epoch,
                f.leader_id,
                f.high_watermark
            );
            if let Some(d) = f.diverging_epoch {
                s += &format!(" diverging={d}");
            }
            if let Some(id) = f.snapshot_id {
                s += &format!(" snapshot={id}");
            }
            for b in &f.records {
                s += &format!(" {b}");
            }
            s
        }
        Response::FetchSnapshot(f) => format!(
            "FetchSnapshotResponse{}{} e{} position={} bytes={} size={}",
            err(f.error),
            err(f.partition_error),
            f.leader_epoch,
            f.position,
            f.bytes.len(),
            f.size
        ),
        Response::DescribeQuorum(d) => format!(
            "DescribeQuorumResponse{} leader={} hw={}",
            err(d.partition_error),
            d.leader_id,
            d.high_watermark
        ),
        Response::AddRaftVoter(a) => format!("AddRaftVoterResponse{}", err_or_none(a.error)),
        Response::RemoveRaftVoter(r) => {
            format!("RemoveRaftVoterResponse{}", err_or_none(r.error))
        }
        Response::UpdateRaftVoter(u) => format!(
            "UpdateRaftVoterResponse{} e{} leader={}",
            err_or_none(u.error),
            u.leader_epoch,
            u.leader_id
        ),
        Response::ApiVersions(a) => format!(
            "ApiVersionsResponse{} kraft={:?}",
            err(a.error),
            a.kraft_version
        ),
    }
}
