//! The node loop's answer to a scrape (`Event::Metrics`) and what it measures every turn for
//! it: the raft sensors, the controller's event times, leader changes, and the probes' view.

use super::runner::NodeLoop;
use crate::raft::{Instant, QuorumStateStore, RaftLog};
use crate::server::metrics::controller::{ControllerSample, EventManagerSample};
use crate::server::metrics::sampler::{EventSensors, RaftSensors};
use crate::server::metrics::Sample;

/// What the loop keeps for its metrics between scrapes.
#[derive(Debug, Default)]
pub(super) struct LoopMetrics {
    pub(super) raft: RaftSensors,
    pub(super) events: EventSensors,
    /// Leaders seen to take office (Java's NewActiveControllersCount), and the last seen.
    new_active_controllers: u64,
    last_leader: Option<(i32, i32)>,
}

impl<L: RaftLog, S: QuorumStateStore> NodeLoop<L, S> {
    /// After a turn (`idle_ms` waiting for its first event, `busy_ms` on the rest): the
    /// sensors look at the core, and the probes' view is published.
    pub(super) fn after_turn(&mut self, now: Instant, idle_ms: u64, busy_ms: u64) {
        let view = self.raft.metrics_view(now);
        let m = &mut self.metrics;
        m.raft.observe(&view, now.0);
        m.raft.poll(idle_ms, busy_ms, now.0);
        if view.leader >= 0 && m.last_leader != Some((view.epoch, view.leader)) {
            m.new_active_controllers += 1;
            m.last_leader = Some((view.epoch, view.leader));
        }
        self.settings
            .health
            .turn_ended(view.leader, view.fetching_from_leader);
    }

    /// The state a scrape reports, at `now`.
    pub(super) fn metrics_sample(&self, now: Instant) -> Sample {
        let raft = self.raft.metrics_view(now);
        let rates = self.metrics.raft.rates(now.0);
        let machine = self.controller.machine();
        let mut controller = ControllerSample {
            active: self.controller.active_epoch().is_some(),
            last_applied_offset: machine.last_applied(),
            last_committed_offset: machine.committed(),
            last_applied_timestamp: self.snapshots.last_timestamp(),
            // As Java computes it: this node's clock minus the record's (the leader's when it
            // appended), below zero when this clock is behind, all of `now` before any record.
            // The doctor reads a node's clock as the sum of the two.
            last_applied_lag_ms: now.0 as i64 - self.snapshots.last_timestamp(),
            new_active_controllers: self.metrics.new_active_controllers,
            operations_started: self.metrics.events.started,
            ignored_static_voters: !self.settings.raft.static_voters.is_empty()
                && self.raft.kraft_version() >= 1,
            ..ControllerSample::default()
        };
        controller.count_image(&machine.committed_state().image);
        controller.since_last_heartbeat_ms = self
            .controller
            .broker_last_contacts()
            .into_iter()
            .map(|(id, last)| (id, last.map_or(0, |at| now.0.saturating_sub(at))))
            .collect();
        let ev = &self.metrics.events;
        let events = EventManagerSample {
            avg_idle_ratio: rates.poll_idle_ratio_avg,
            queue_time_count: ev.queue_time.count(),
            queue_time_ms: ev.queue_time.quantiles(),
            processing_time_count: ev.processing_time.count(),
            processing_time_ms: ev.processing_time.quantiles(),
        };
        Sample {
            raft,
            rates,
            controller,
            events,
        }
    }
}
