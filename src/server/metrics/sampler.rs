//! What the node loop measures between the raft core's steps, for the `raft-metrics` sensors
//! Java records inside its raft client: commit and election latency, the append and fetch
//! record rates, the poll idle ratio; and the controller event manager's queue and processing
//! times. Pure bookkeeping: the loop passes the core's view and the time.

use std::collections::VecDeque;

use super::window::{Reservoir, Window};
use crate::raft::metrics::RaftMetricsView;

/// The sensors' values at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RaftRates {
    pub commit_latency_avg: f64,
    pub commit_latency_max: f64,
    pub election_latency_avg: f64,
    pub election_latency_max: f64,
    pub append_records_rate: f64,
    pub fetch_records_rate: f64,
    pub poll_idle_ratio_avg: f64,
}

/// Bounds the leader's appends awaiting their commit (one entry per turn that appended).
const MAX_PENDING_COMMITS: usize = 4096;

/// The loop's raft sensors.
#[derive(Debug, Default)]
pub struct RaftSensors {
    commit_latency: Window,
    election_latency: Window,
    append_records: Window,
    fetch_records: Window,
    poll_idle: Window,
    /// When the election in progress began (Java: becoming prospective or candidate).
    election_start_ms: Option<u64>,
    /// The log end offset seen last, and in which state.
    last_end: Option<i64>,
    /// Leader only: (log end offset after an append, when it was seen), oldest first.
    awaiting_commit: VecDeque<(i64, u64)>,
}

impl RaftSensors {
    /// One look at the core after a loop turn, at `now_ms`.
    pub fn observe(&mut self, view: &RaftMetricsView, now_ms: u64) {
        let electing = matches!(
            view.state,
            "prospective" | "prospective-voted" | "candidate"
        );
        if electing {
            self.election_start_ms.get_or_insert(now_ms);
        } else if view.leader >= 0 {
            // Java: on becoming leader or follower, the election (if any) took this long.
            if let Some(start) = self.election_start_ms.take() {
                self.election_latency
                    .record(now_ms.saturating_sub(start) as f64, now_ms);
            }
        }
        let leading = view.state == "leader";
        if let Some(last) = self.last_end {
            let grown = view.log_end_offset - last;
            if grown > 0 {
                if leading {
                    self.append_records.record(grown as f64, now_ms);
                    if self.awaiting_commit.len() < MAX_PENDING_COMMITS {
                        self.awaiting_commit
                            .push_back((view.log_end_offset, now_ms));
                    }
                } else if matches!(view.state, "follower" | "observer") {
                    self.fetch_records.record(grown as f64, now_ms);
                }
            }
        }
        self.last_end = Some(view.log_end_offset);
        if !leading {
            self.awaiting_commit.clear();
        }
        while let Some(&(end, at)) = self.awaiting_commit.front() {
            if view.high_watermark < end {
                break;
            }
            self.commit_latency
                .record(now_ms.saturating_sub(at) as f64, now_ms);
            self.awaiting_commit.pop_front();
        }
    }

    /// One loop turn: `idle_ms` waiting for an event, `busy_ms` handling it (Java's
    /// `updatePollStart` / `updatePollEnd`).
    pub fn poll(&mut self, idle_ms: u64, busy_ms: u64, now_ms: u64) {
        let total = idle_ms + busy_ms;
        if total > 0 {
            self.poll_idle.record(idle_ms as f64 / total as f64, now_ms);
        }
    }

    pub fn rates(&self, now_ms: u64) -> RaftRates {
        RaftRates {
            commit_latency_avg: self.commit_latency.avg(now_ms),
            commit_latency_max: self.commit_latency.max(now_ms),
            election_latency_avg: self.election_latency.avg(now_ms),
            election_latency_max: self.election_latency.max(now_ms),
            append_records_rate: self.append_records.rate(now_ms),
            fetch_records_rate: self.fetch_records.rate(now_ms),
            poll_idle_ratio_avg: self.poll_idle.avg(now_ms),
        }
    }
}

/// Java's `ControllerEventManager` histograms and the counters of its event queue.
#[derive(Debug, Default)]
pub struct EventSensors {
    /// From a request's arrival on the loop's channel to its handling (EventQueueTimeMs).
    pub queue_time: Reservoir,
    /// Its handling (EventQueueProcessingTimeMs).
    pub processing_time: Reservoir,
    /// Controller operations begun (EventQueueOperationsStartedCount).
    pub started: u64,
}

impl EventSensors {
    pub fn handled(&mut self, queued_ms: u64, processing_ms: u64) {
        self.started += 1;
        self.queue_time.record(queued_ms as f64);
        self.processing_time.record(processing_ms as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(state: &'static str, leader: i32, end: i64, hw: i64) -> RaftMetricsView {
        RaftMetricsView {
            state,
            leader,
            vote: -1,
            epoch: 1,
            high_watermark: hw,
            log_end_offset: end,
            log_end_epoch: 1,
            number_of_voters: 3,
            unknown_voter_connections: 0,
            observers: None,
            uncommitted_voter_change: None,
            fetching_from_leader: false,
            is_voter: true,
            elections_started: 0,
        }
    }

    #[test]
    fn an_election_is_timed_from_prospective_to_a_known_leader() {
        let mut s = RaftSensors::default();
        s.observe(&view("follower", 1, 10, 10), 1_000);
        s.observe(&view("prospective", -1, 10, 10), 2_000);
        s.observe(&view("candidate", -1, 10, 10), 2_100);
        s.observe(&view("leader", 2, 11, 10), 2_250);
        let r = s.rates(3_000);
        assert_eq!(r.election_latency_avg, 250.0);
        assert_eq!(r.election_latency_max, 250.0);
        assert!(r.commit_latency_avg.is_nan());
        // The leader's append (10 -> 11) commits 40 ms later.
        s.observe(&view("leader", 2, 11, 11), 2_290);
        assert_eq!(s.rates(3_000).commit_latency_max, 40.0);
        assert!((s.rates(3_000).append_records_rate - 1.0 / 30.0).abs() < 1e-9);
        assert_eq!(s.rates(3_000).fetch_records_rate, 0.0);
    }

    #[test]
    fn a_follower_fetches_and_the_idle_ratio_averages_polls() {
        let mut s = RaftSensors::default();
        s.observe(&view("follower", 1, 0, 0), 0);
        s.observe(&view("follower", 1, 60, 60), 100);
        assert!((s.rates(200).fetch_records_rate - 2.0).abs() < 1e-9);
        s.poll(90, 10, 100);
        s.poll(50, 50, 200);
        assert!((s.rates(300).poll_idle_ratio_avg - 0.7).abs() < 1e-9);
    }
}
