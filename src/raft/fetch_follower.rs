//! The fetcher side of replication, for followers (voters and observers) and for discovery by
//! Unattached replicas: when and where to send Fetch, and how to apply its response
//! (diverging-epoch truncation, snapshot redirect, append + flush, high watermark).

use super::log::RaftLog;
use super::msg::{FetchRequest, FetchResponse, FetchSnapshotRequest, Request};
use super::node::Raft;
use super::quorum_state::QuorumStateStore;
use super::role::Role;
use super::time::{ms, Instant};
use super::types::{HostPort, NodeId, ReplicaKey};
use crate::protocol::errors::ErrorCode;

impl<L: RaftLog, S: QuorumStateStore> Raft<L, S> {
    pub(super) fn poll_follower(&mut self, now: Instant) {
        let Role::Follower(f) = &self.role else {
            return;
        };
        let expired = now >= f.fetch_deadline;
        if self.is_voter() {
            if self.shutdown.is_some() {
                return; // a voter that is leaving neither fetches nor starts elections
            }
            if self.follower_election_due(now) {
                return self.transition_to_prospective(now);
            }
            if !self.maybe_send_update_voter(now) {
                self.maybe_send_fetch_to_best_node(now);
            }
        } else if expired {
            self.maybe_send_fetch_to_any_bootstrap(now);
        } else if !self.maybe_auto_join(now) {
            self.maybe_send_fetch_to_best_node(now);
        }
    }

    /// Fetch (or FetchSnapshot) from the leader; if its connection timed out or is backing off,
    /// ask a bootstrap server instead, to discover a leader change (Kafka 4.x).
    fn maybe_send_fetch_to_best_node(&mut self, now: Instant) {
        let Role::Follower(f) = &self.role else {
            return;
        };
        let leader = f.leader_id;
        let address = f.leader_endpoints.get(&self.cfg.default_listener).cloned();
        if self.requests.has_timed_out(leader, now) {
            self.requests.reset(leader);
            self.maybe_send_fetch_to_any_bootstrap(now);
        } else if self.requests.is_backing_off(leader, now) {
            self.maybe_send_fetch_to_any_bootstrap(now);
        } else if !self.requests.any_in_flight(now) && self.requests.is_ready(leader, now) {
            let request = match f.fetching_snapshot {
                Some(id) => self.fetch_snapshot_request(id),
                None => self.fetch_request(),
            };
            self.send(now, leader, address, request);
        }
    }

    /// Fetch to a random READY bootstrap server, only when nothing is in flight anywhere (so a
    /// replica never has two Fetches out). Bootstrap servers are
    /// `controller.quorum.bootstrap.servers` (ids −2, −3, …) or else the static voters.
    pub(super) fn maybe_send_fetch_to_any_bootstrap(&mut self, now: Instant) {
        if self.requests.any_in_flight(now) {
            return;
        }
        let local = self.local_id();
        let servers: Vec<(NodeId, HostPort)> = if self.cfg.bootstrap_servers.is_empty() {
            self.cfg
                .static_voters
                .iter()
                .filter(|(id, _)| Some(*id) != local)
                .cloned()
                .collect()
        } else {
            self.cfg
                .bootstrap_servers
                .iter()
                .enumerate()
                .map(|(i, hp)| (-2 - i as NodeId, hp.clone()))
                .collect()
        };
        // Never ourselves (a bootstrap list names every voter; Java would ask itself).
        let ready: Vec<(NodeId, HostPort)> = servers
            .into_iter()
            .filter(|(_, hp)| !self.cfg.listeners.iter().any(|(_, own)| own == hp))
            .filter(|(id, _)| self.requests.is_ready(*id, now))
            .collect();
        if let Some((id, hp)) = self.chooser.pick(&ready).cloned() {
            let request = self.fetch_request();
            self.send(now, id, Some(hp), request);
        }
    }

    fn local_key_or_none(&self) -> ReplicaKey {
        self.local.unwrap_or(ReplicaKey::new(
            -1,
            super::types::uuid_opt(self.cfg.directory_id),
        ))
    }

    /// Kafka's `buildFetchRequest`. A voter's fetch offset is durable (it flushed after appending).
    pub(super) fn fetch_request(&self) -> Request {
        let end = self.log.end_offset_and_epoch();
        Request::Fetch(FetchRequest {
            cluster_id: Some(self.cfg.cluster_id.clone()),
            replica_key: self.local_key_or_none(),
            max_wait_ms: i32::try_from(ms(self.cfg.fetch_max_wait)).unwrap_or(i32::MAX),
            max_bytes: i32::try_from(self.cfg.fetch_max_bytes).unwrap_or(i32::MAX),
            partition_ok: true,
            current_leader_epoch: self.epoch(),
            fetch_offset: end.offset,
            last_fetched_epoch: end.epoch,
            high_watermark: Some(self.high_watermark.unwrap_or(-1)),
        })
    }

    fn fetch_snapshot_request(&self, id: super::types::OffsetAndEpoch) -> Request {
        let position = self
            .log
            .snapshot_download()
            .filter(|(d, _)| *d == id)
            .map_or(0, |(_, n)| n);
        Request::FetchSnapshot(FetchSnapshotRequest {
            cluster_id: Some(self.cfg.cluster_id.clone()),
            replica_key: self.local_key_or_none(),
            max_bytes: i32::try_from(self.cfg.fetch_snapshot_max_bytes).unwrap_or(i32::MAX),
            partition_ok: true,
            current_leader_epoch: self.epoch(),
            snapshot_id: id,
            position: position as i64,
        })
    }

    /// Kafka's `handleFetchResponse`. Returns whether it was handled (else back off).
    pub(super) fn handle_fetch_response(
        &mut self,
        now: Instant,
        _from: NodeId,
        r: FetchResponse,
    ) -> bool {
        if r.error != ErrorCode::NONE {
            return self.handle_top_level_error(r.error);
        }
        if !r.partition_ok {
            return false;
        }
        let leader = (r.leader_id >= 0).then_some(r.leader_id);
        let endpoints = self.response_leader_endpoints(leader, &r.leader_endpoint);
        if let Some(handled) = self.maybe_handle_common_response(
            now,
            r.partition_error,
            leader,
            r.leader_epoch,
            endpoints,
        ) {
            return handled;
        }
        if r.partition_error != ErrorCode::NONE {
            return false;
        }
        if !matches!(self.role, Role::Follower(_)) {
            return true;
        }
        if let Some(d) = r.diverging_epoch {
            let target = self.log.truncation_offset(d);
            if target < self.log.end_offset()
                && self
                    .log
                    .read(target, 1)
                    .map(|r| r.first().map(|b| b.base_offset))
                    .unwrap_or(None)
                    != Some(target)
            {
                return false; // not a batch boundary of our log: no leader would say this
            }
            if let Some(hw) = self.high_watermark.filter(|hw| target.min(d.offset) < *hw) {
                self.fail(format!(
                    "diverging epoch {d} would truncate below the high watermark {hw}"
                ));
                return true;
            }
            let truncated = self.log.truncate_to_end_offset(d);
            let Some(at) = self.log_value(truncated) else {
                return true;
            };
            self.control.truncate_from(at);
        } else if let Some(s) = r.snapshot_id {
            if s.offset < 0 || s.epoch < 0 {
                return false;
            }
            self.start_snapshot_download(now, s);
        } else {
            if !r.records.is_empty() {
                let end = self.log.end_offset();
                if r.records[0].base_offset != end {
                    return false; // not at our LEO: a stale or reordered response
                }
                // Kafka 4.x (`appendAsFollower(records, epoch)`): no batch from a future epoch.
                if r.records.iter().any(|b| b.epoch > self.epoch()) {
                    return false;
                }
                match self.log.append_as_follower(r.records.clone()) {
                    Ok(()) => {}
                    Err(e) if e.is_fault() => {
                        self.log_value(Err::<(), _>(e));
                        return true;
                    }
                    Err(_refused) => return false,
                }
                for b in &r.records {
                    self.apply_control_batch(b);
                }
                if self.is_voter() || self.cfg.always_flush {
                    let flushed = self.log.flush();
                    if self.log_value(flushed).is_none() {
                        return true;
                    }
                }
            }
            if r.high_watermark >= 0 {
                let hw = r.high_watermark.min(self.log.end_offset());
                self.set_high_watermark(hw);
            }
        }
        self.fetched_from_leader(now);
        true
    }
}
