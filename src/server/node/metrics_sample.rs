//! The node loop's answer to a scrape (`Event::Metrics`) and what it measures every turn for
//! it: the raft sensors, the controller's event times, leader changes, and the probes' view.

use std::collections::VecDeque;

use super::runner::NodeLoop;
use crate::raft::{Instant, QuorumStateStore, RaftLog};
use crate::server::metrics::controller::{ControllerSample, EventManagerSample};
use crate::server::metrics::extras::{KraftdSample, SnapshotGauges};
use crate::server::metrics::loader::LoaderSample;
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
    leader_clock: LeaderClock,
}

/// How long a follower's samples of the leader's clock are kept.
const CLOCK_WINDOW_MS: u64 = 60_000;

/// A follower's estimate of the leader's clock offset: each newly replayed batch's append time
/// (the leader's clock) minus the time it was replayed here, which the replication delay makes
/// lower than the true offset; the highest of the last minute is the least delayed.
#[derive(Debug, Default)]
struct LeaderClock {
    leader: Option<i32>,
    last_timestamp: i64,
    /// (when, batch time minus local time), oldest first.
    samples: VecDeque<(u64, i64)>,
}

impl LeaderClock {
    fn observe(&mut self, follows: Option<i32>, batch_timestamp: i64, now_ms: u64) {
        if follows != self.leader {
            self.samples.clear();
            self.leader = follows;
        }
        if follows.is_some() && batch_timestamp != self.last_timestamp && batch_timestamp > 0 {
            self.samples
                .push_back((now_ms, batch_timestamp - now_ms as i64));
        }
        self.last_timestamp = batch_timestamp;
        while self
            .samples
            .front()
            .is_some_and(|(at, _)| now_ms.saturating_sub(*at) > CLOCK_WINDOW_MS)
        {
            self.samples.pop_front();
        }
    }

    fn estimate(&self) -> Option<(i32, i64)> {
        let best = self.samples.iter().map(|(_, off)| *off).max()?;
        Some((self.leader?, best))
    }
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
        // Only a caught-up follower's batches are fresh: replaying a backlog (after a restart,
        // a snapshot) would read minutes-old append times as a clock offset.
        let caught_up = view.fetching_from_leader && !self.replay_pending;
        let follows = (view.state == "follower" || view.state == "observer")
            .then_some(view.leader)
            .filter(|l| *l >= 0 && caught_up);
        m.leader_clock
            .observe(follows, self.snapshots.last_timestamp(), now.0);
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
        let committed = machine.committed_state();
        controller.unclean_elections = committed.elections.unclean;
        controller.elr_elections = committed.elections.from_elr;
        let image = &committed.image;
        controller.count_image(image);
        let loader = LoaderSample {
            avg_idle_ratio: rates.poll_idle_ratio_avg,
            current_controller_id: raft.leader,
            metadata_version: image.features.metadata_version().unwrap_or(0),
            snapshot_loads: self.snapshots.snapshot_loads(),
            finalized: LoaderSample::finalized_levels(self.raft.kraft_version(), |name| {
                image.features.levels.get(name).copied()
            }),
        };
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
        let kraftd = KraftdSample {
            // Read by the loop's scrape event, which names the directory.
            metadata_dir: None,
            fsync: self.raft.log().fsync_latency().cloned(),
            last_snapshot: self.snapshots.last_written().map(|w| SnapshotGauges {
                bytes: w.bytes,
                records: w.records,
                duration_seconds: w.duration.as_secs_f64(),
                age_seconds: now.0.saturating_sub(w.at.0) as f64 / 1000.0,
            }),
            elections_started: raft.elections_started,
            leader_changes: self.metrics.new_active_controllers,
            voters: self.raft.voter_progress(now),
            peer_rtt_seconds: Vec::new(),
            leader_clock_offset_ms: self.metrics.leader_clock.estimate(),
        };
        Sample {
            raft,
            rates,
            controller,
            events,
            loader,
            kraftd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LeaderClock;

    #[test]
    fn the_least_delayed_batch_of_the_last_minute_estimates_the_leaders_clock() {
        let mut c = LeaderClock::default();
        // Leader 2's batches, appended at its clock, replayed here 40, 5 and 90 ms later by
        // this clock; its clock runs 1 s ahead.
        c.observe(Some(2), 1_000_960, 1_000);
        c.observe(Some(2), 1_001_995, 2_000);
        c.observe(Some(2), 1_002_910, 3_000);
        assert_eq!(c.estimate(), Some((2, 999_995)));
        // The same batch again is no new sample; a minute later the old ones are gone.
        c.observe(Some(2), 1_002_910, 63_500);
        assert_eq!(c.estimate(), None);
        // A new leader starts over.
        c.observe(Some(2), 1_063_490, 64_000);
        c.observe(Some(3), 64_010, 64_020);
        assert_eq!(c.estimate(), Some((3, -10)));
        c.observe(None, 64_500, 65_000);
        assert_eq!(c.estimate(), None);
    }
}
