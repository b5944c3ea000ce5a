//! `kafka_server_raftmetrics_*` and `kafka_server_raftchannelmetrics_*`: Kafka's `raft-metrics`
//! and `raft-channel-metrics` groups (`kafka.server:type=raft-metrics` and
//! `type=raft-channel-metrics`) as the JMX exporter names them under Strimzi's rules
//! (compat/jmx-exporter-kraft.yaml): attributes ending in `-total` or `-max` are counters (the
//! exporter adds `_total` to a counter's name), `current-state` an untyped 1 labelled with the
//! state, every other attribute a gauge.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::sampler::RaftRates;
use super::text::{Exposition, Kind};
use crate::raft::metrics::RaftMetricsView;

const RAFT: &str = "kafka_server_raftmetrics_";
const CHANNEL: &str = "kafka_server_raftchannelmetrics_";

/// The raft-metrics families, Java's attribute descriptions as help.
pub fn raft_families(f: &mut Exposition, v: &RaftMetricsView, r: &RaftRates) {
    f.family(
        [RAFT, "current_state"],
        "The current state of this member; possible values are leader, candidate, voted, follower, unattached, observer",
        Kind::Untyped,
    );
    f.sample(&[("current_state", v.state)], 1.0);
    let gauges: [(&str, &str, f64); 13] = [
        ("current_leader", "The current quorum leader's id; -1 indicates unknown", v.leader as f64),
        ("current_vote", "The current voted id; -1 indicates not voted for anyone", v.vote as f64),
        ("current_epoch", "The current quorum epoch.", v.epoch as f64),
        ("high_watermark", "The high watermark maintained on this member; -1 if it is unknown", v.high_watermark as f64),
        ("log_end_offset", "The current raft log end offset.", v.log_end_offset as f64),
        ("log_end_epoch", "The current raft log end epoch.", v.log_end_epoch as f64),
        ("number_unknown_voter_connections", "Number of unknown voters whose connection information is not cached; would never be larger than quorum-size.", v.unknown_voter_connections as f64),
        ("number_of_voters", "Number of voters for a KRaft topic partition.", v.number_of_voters as f64),
        ("commit_latency_avg", "The average time in milliseconds to commit an entry in the raft log.", r.commit_latency_avg),
        ("election_latency_avg", "The average time in milliseconds spent on electing a new leader.", r.election_latency_avg),
        ("fetch_records_rate", "The average number of records fetched from the leader of the raft quorum.", r.fetch_records_rate),
        ("append_records_rate", "The average number of records appended per sec as the leader of the raft quorum.", r.append_records_rate),
        ("poll_idle_ratio_avg", "The ratio of time the Raft IO thread is idle as opposed to doing work (e.g. handling requests or replicating from the leader)", r.poll_idle_ratio_avg),
    ];
    for (attr, help, value) in gauges {
        f.gauge([RAFT, attr], help, value);
    }
    f.counter(
        [RAFT, "commit_latency_max_total"],
        "The maximum time in milliseconds to commit an entry in the raft log.",
        r.commit_latency_max,
    );
    f.counter(
        [RAFT, "election_latency_max_total"],
        "The maximum time in milliseconds spent on electing a new leader.",
        r.election_latency_max,
    );
    // Registered by Java's leader only.
    if let Some(n) = v.observers {
        f.gauge(
            [RAFT, "number_of_observers"],
            "Number of observers being tracked by the KRaft topic partition leader.",
            n as f64,
        );
    }
    if let Some(change) = v.uncommitted_voter_change {
        f.gauge(
            [RAFT, "uncommitted_voter_change"],
            "1 if there is a voter change that has not been committed, 0 otherwise.",
            if change { 1.0 } else { 0.0 },
        );
    }
}

/// The raft channel's traffic: what kraftd's connections to the other controllers (its raft
/// client's, `server::peer`) sent and received, framed requests and responses included.
#[derive(Debug, Default)]
pub struct ChannelCounters {
    pub requests: AtomicU64,
    pub responses: AtomicU64,
    pub bytes_out: AtomicU64,
    pub bytes_in: AtomicU64,
    /// Each peer's shortest request round trip per [`RTT_BUCKET`] of the last [`RTT_WINDOW`]:
    /// (the bucket's start, seconds), oldest first; at most a few buckets, whatever the rate
    /// (`kraftd_peer_rtt_seconds`, the shortest of them).
    round_trips: Mutex<BTreeMap<i32, VecDeque<(Instant, f64)>>>,
}

/// How long a request round trip counts towards its peer's RTT.
const RTT_WINDOW: Duration = Duration::from_secs(60);
/// The round trips of one bucket are kept as their shortest.
const RTT_BUCKET: Duration = Duration::from_secs(10);

impl ChannelCounters {
    pub fn sent(&self, bytes: usize) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes_out.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub fn received(&self, bytes: usize) {
        self.responses.fetch_add(1, Ordering::Relaxed);
        self.bytes_in.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// A response from `peer` came `took` after its request. Timed on the I/O side, where the
    /// request leaves and the response arrives.
    pub fn round_trip(&self, peer: i32, took: Duration) {
        let now = Instant::now();
        let took = took.as_secs_f64();
        if let Ok(mut m) = self.round_trips.lock() {
            let samples = m.entry(peer).or_default();
            match samples.back_mut() {
                Some((start, shortest)) if now.duration_since(*start) < RTT_BUCKET => {
                    *shortest = shortest.min(took);
                }
                _ => samples.push_back((now, took)),
            }
            while samples
                .front()
                .is_some_and(|(at, _)| now.duration_since(*at) > RTT_WINDOW)
            {
                samples.pop_front();
            }
        }
    }

    /// Each peer's shortest round trip of the last minute, by id: a Fetch that waited on the
    /// leader (a long poll) takes longer, one answered at once is the network's and the peer's
    /// own time. A peer asked nothing for a minute has none.
    pub fn round_trips(&self) -> Vec<(i32, f64)> {
        let now = Instant::now();
        let Ok(m) = self.round_trips.lock() else {
            return Vec::new();
        };
        m.iter()
            .filter_map(|(peer, samples)| {
                samples
                    .iter()
                    .filter(|(at, _)| now.duration_since(*at) <= RTT_WINDOW)
                    .map(|(_, s)| *s)
                    .reduce(f64::min)
                    .map(|s| (*peer, s))
            })
            .collect()
    }

    pub fn families(&self, f: &mut Exposition) {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64;
        let counters = [
            (
                "incoming_byte_total",
                "The total number of bytes read off all sockets",
                &self.bytes_in,
            ),
            (
                "outgoing_byte_total",
                "The total number of outgoing bytes sent to all servers",
                &self.bytes_out,
            ),
            (
                "request_total",
                "The total number of requests sent",
                &self.requests,
            ),
            (
                "response_total",
                "The total number of responses received",
                &self.responses,
            ),
        ];
        for (attr, help, c) in counters {
            f.counter([CHANNEL, attr], help, get(c));
        }
    }
}
