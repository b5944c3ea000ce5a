//! The leader side of replication: Fetch handling with long-polling (Kafka's fetch purgatory),
//! follower progress, the high watermark and check-quorum.

use super::config::MAX_BATCH_SIZE_BYTES;
use super::log::{RaftLog, ValidOffsetAndEpoch};
use super::msg::{FetchRequest, FetchResponse, RequestId, Response};
use super::node::{Action, Raft};
use super::quorum_state::QuorumStateStore;
use super::role::Role;
use super::time::Instant;
use super::types::OffsetAndEpoch;
use crate::protocol::errors::ErrorCode;

/// A Fetch waiting for new data (until `deadline` = arrival + MaxWaitMs).
#[derive(Debug, Clone)]
pub struct ParkedFetch {
    pub id: RequestId,
    pub listener: Option<String>,
    pub request: FetchRequest,
    pub deadline: Instant,
    /// The response computed on arrival; sent unchanged if nothing happens before `deadline`.
    pub timeout_response: FetchResponse,
}

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    /// Kafka's `buildEmptyFetchResponse`: no records, HW −1, the responder's view of the leader.
    pub(super) fn fetch_error_response(
        &self,
        error: ErrorCode,
        listener: Option<&str>,
    ) -> FetchResponse {
        FetchResponse {
            error: ErrorCode::NONE,
            partition_ok: true,
            partition_error: error,
            high_watermark: -1,
            log_start_offset: self.log.start_offset(),
            leader_id: self.leader_id().unwrap_or(-1),
            leader_epoch: self.epoch(),
            leader_endpoint: self.leader_endpoint_for(listener),
            ..FetchResponse::default()
        }
    }

    /// Kafka's `handleFetchRequest`. `None` when the request was parked.
    pub(super) fn handle_fetch_request(
        &mut self,
        now: Instant,
        id: RequestId,
        listener: Option<String>,
        r: FetchRequest,
    ) -> Option<FetchResponse> {
        if !self.valid_cluster_id(&r.cluster_id) {
            return Some(FetchResponse {
                error: ErrorCode::INCONSISTENT_CLUSTER_ID,
                ..FetchResponse::default()
            });
        }
        if !r.partition_ok {
            return Some(FetchResponse {
                error: ErrorCode::INVALID_REQUEST,
                ..FetchResponse::default()
            });
        }
        if r.max_wait_ms < 0
            || r.fetch_offset < 0
            || r.last_fetched_epoch < 0
            || r.last_fetched_epoch > r.current_leader_epoch
        {
            return Some(
                self.fetch_error_response(ErrorCode::INVALID_REQUEST, listener.as_deref()),
            );
        }
        let resp = self.try_complete_fetch(now, &r, listener.as_deref());
        let hw_behind = r
            .high_watermark
            .is_some_and(|theirs| resp.high_watermark > theirs);
        if resp.partition_error != ErrorCode::NONE
            || !resp.records.is_empty()
            || r.max_wait_ms == 0
            || resp.diverging_epoch.is_some()
            || resp.snapshot_id.is_some()
            || hw_behind
        {
            return Some(resp);
        }
        let deadline = now.plus_millis(r.max_wait_ms as u64);
        self.parked.push(ParkedFetch {
            id,
            listener,
            request: r,
            deadline,
            timeout_response: resp,
        });
        None
    }

    /// Kafka's `tryCompleteFetchRequest`: validate the fetch position, read, and credit the
    /// replica (progress, HW, check-quorum) for a VALID fetch only.
    fn try_complete_fetch(
        &mut self,
        now: Instant,
        r: &FetchRequest,
        listener: Option<&str>,
    ) -> FetchResponse {
        if let Some(e) = self.validate_leader_only_request(r.current_leader_epoch) {
            return self.fetch_error_response(e, listener);
        }
        if Some(r.replica_key.id) == self.local_id() {
            return self.fetch_error_response(ErrorCode::UNKNOWN_SERVER_ERROR, listener);
        }
        let latest = self.log.latest_snapshot_id();
        let valid = match latest {
            // An empty follower log and a real snapshot: always cheaper to send the snapshot.
            Some(s) if r.fetch_offset == 0 && s != OffsetAndEpoch::new(0, 0) => {
                ValidOffsetAndEpoch::Snapshot(s)
            }
            _ => self
                .log
                .validate_offset_and_epoch(r.fetch_offset, r.last_fetched_epoch),
        };
        let mut resp = self.fetch_error_response(ErrorCode::NONE, listener);
        match valid {
            ValidOffsetAndEpoch::Valid(_) => {
                let max = usize::try_from(r.max_bytes)
                    .unwrap_or(0)
                    .clamp(1, MAX_BATCH_SIZE_BYTES);
                let read = self.log.read_for_fetch(r.fetch_offset, max);
                resp.records = self.log_value(read).unwrap_or_default();
                let leader_end = self.log.end_offset();
                if let Role::Leader(l) = &mut self.role {
                    if l.update_replica(r.replica_key, r.fetch_offset, now, leader_end) {
                        l.update_check_quorum(r.replica_key.id, now);
                    }
                }
                self.maybe_update_leader_hw(now);
            }
            ValidOffsetAndEpoch::Diverging(d) => resp.diverging_epoch = Some(d),
            ValidOffsetAndEpoch::Snapshot(s) => resp.snapshot_id = Some(s),
        }
        resp.high_watermark = self.high_watermark.unwrap_or(-1);
        resp
    }

    /// Completes parked fetches that can now make progress: those below the new LEO, or all of
    /// them when the HW moved (Kafka 4.1+, KIP-1166).
    pub(super) fn complete_parked_fetches(&mut self, now: Instant, hw_moved: bool) {
        if self.parked.is_empty() {
            return;
        }
        let end = self.log.end_offset();
        let (ready, waiting): (Vec<ParkedFetch>, Vec<ParkedFetch>) =
            std::mem::take(&mut self.parked)
                .into_iter()
                .partition(|p| hw_moved || end > p.request.fetch_offset);
        self.parked = waiting;
        for p in ready {
            let resp = self.try_complete_fetch(now, &p.request, p.listener.as_deref());
            self.out.push(Action::Respond {
                id: p.id,
                response: Response::Fetch(resp),
            });
        }
    }

    /// Parked fetches whose MaxWaitMs passed get their arrival-time response.
    pub(super) fn expire_parked_fetches(&mut self, now: Instant) {
        if self.parked.iter().all(|p| p.deadline > now) {
            return;
        }
        let (expired, waiting): (Vec<ParkedFetch>, Vec<ParkedFetch>) =
            std::mem::take(&mut self.parked)
                .into_iter()
                .partition(|p| p.deadline <= now);
        self.parked = waiting;
        for p in expired {
            self.out.push(Action::Respond {
                id: p.id,
                response: Response::Fetch(p.timeout_response),
            });
        }
    }

    pub(super) fn poll_leader(&mut self, now: Instant) {
        self.expire_voter_change(now);
        let Role::Leader(l) = &self.role else { return };
        // Shutting down, no majority fetched within 1.5x the fetch timeout, or removed from the
        // committed voter set: step down.
        if self.shutdown.is_some() || now >= l.check_quorum_deadline() || l.resign_requested {
            let successors = l.successors_by_fetch_offset();
            return self.transition_to_resigned(now, successors);
        }
        self.append_due_proposals(now);
        self.maybe_send_begin_quorum_epoch(now);
    }
}
