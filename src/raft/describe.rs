//! DescribeQuorum: the leader's view of voters and observers (`handleDescribeQuorumRequest`).

use super::leader::ReplicaState;
use super::log::RaftLog;
use super::msg::{DescribeQuorumRequest, DescribeQuorumResponse, ReplicaDescription};
use super::node::Raft;
use super::quorum_state::QuorumStateStore;
use super::role::Role;
use super::time::Instant;
use crate::protocol::errors::ErrorCode;

const UNKNOWN_TOPIC_OR_PARTITION_MESSAGE: &str = "This server does not host this topic-partition.";
pub(super) const NOT_LEADER_OR_FOLLOWER_MESSAGE: &str = "For requests intended only for the leader, this error indicates that the \
broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not \
a replica of the topic partition.";

fn describe(s: &ReplicaState) -> ReplicaDescription {
    ReplicaDescription {
        replica_key: s.key,
        log_end_offset: s.end_offset.unwrap_or(-1),
        last_fetch_timestamp: s.last_fetch.map_or(-1, Instant::as_i64),
        last_caught_up_timestamp: s.last_caught_up.map_or(-1, Instant::as_i64),
    }
}

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    pub(super) fn handle_describe_quorum_request(
        &mut self,
        now: Instant,
        r: &DescribeQuorumRequest,
    ) -> DescribeQuorumResponse {
        let error = |code, msg: &str| DescribeQuorumResponse {
            partition_ok: true,
            partition_error: code,
            partition_error_message: Some(msg.to_string()),
            ..DescribeQuorumResponse::default()
        };
        if !r.partition_ok {
            return error(
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                UNKNOWN_TOPIC_OR_PARTITION_MESSAGE,
            );
        }
        let Role::Leader(l) = &self.role else {
            return error(
                ErrorCode::NOT_LEADER_OR_FOLLOWER,
                NOT_LEADER_OR_FOLLOWER_MESSAGE,
            );
        };
        let voters = self
            .voters()
            .nodes()
            .map(|n| {
                // Voters are named by the voter set's key, as Java does: a static voter (kraft.version
                // 0) shows no directory id even though its fetches carry one.
                if Some(n.key.id) == self.local_id() {
                    ReplicaDescription {
                        replica_key: n.key,
                        log_end_offset: self.log.end_offset(),
                        last_fetch_timestamp: now.as_i64(),
                        last_caught_up_timestamp: now.as_i64(),
                    }
                } else {
                    l.voters
                        .get(&n.key.id)
                        .map(|s| ReplicaDescription {
                            replica_key: n.key,
                            ..describe(s)
                        })
                        .unwrap_or(ReplicaDescription {
                            replica_key: n.key,
                            log_end_offset: -1,
                            last_fetch_timestamp: -1,
                            last_caught_up_timestamp: -1,
                        })
                }
            })
            .collect();
        DescribeQuorumResponse {
            partition_ok: true,
            leader_id: self.local_id().unwrap_or(-1),
            leader_epoch: l.epoch,
            high_watermark: self.high_watermark.unwrap_or(-1),
            voters,
            observers: l.live_observers(now).map(describe).collect(),
            nodes: self
                .voters()
                .nodes()
                .map(|n| (n.key.id, n.listeners.clone()))
                .collect(),
            ..DescribeQuorumResponse::default()
        }
    }
}
