//! Prometheus metrics under the names Prometheus's JMX exporter gives a Java controller's beans
//! under Strimzi's rules (compat/jmx-exporter-kraft.yaml; docs/monitoring.md lists them), so
//! that dashboards and alerts written for Java read kraftd unchanged.
//!
//! * `raft`: `kafka_server_raftmetrics_*` and `kafka_server_raftchannelmetrics_*`;
//! * `controller`: `kafka_controller_*`;
//! * `loader`: `kafka_server_metadataloader_*`;
//! * `extras`: kraftd's own `kraftd_*` (disk, fsync, snapshots, per-voter replication, ...);
//! * `process`: `process_*`, as every Prometheus client library exports them;
//! * `sampler`: what the node loop measures between the raft core's steps (latencies, rates);
//! * `window`: Kafka's sampled statistics and Yammer's percentiles, time an argument;
//! * `health`: what the probes read of the loop (liveness, leader, caught up);
//! * `text`: the exposition, written as it is built, in the text format 0.0.4 or OpenMetrics.
//!
//! The node loop answers a scrape with a [`Sample`] (its own state, read between two events);
//! [`render`] writes it with the raft channel's counters and the `process_*` families.

pub mod controller;
pub mod extras;
pub mod health;
pub mod loader;
pub mod process;
pub mod raft;
pub mod sampler;
pub mod text;
pub mod window;

use controller::{ControllerSample, EventManagerSample};
use extras::KraftdSample;
use loader::LoaderSample;
use process::ProcessMetrics;
use raft::ChannelCounters;
use sampler::RaftRates;
use text::{Exposition, Format};

use crate::raft::metrics::RaftMetricsView;

/// The families Java's controllers export and kraftd exports under the same names (the oracle
/// checks compare these; `kraftd_*` are kraftd's own).
pub const JAVA_FAMILY_PREFIXES: [&str; 4] = [
    "kafka_server_raftmetrics_",
    "kafka_controller_",
    "kafka_server_raftchannelmetrics_",
    "kafka_server_metadataloader_",
];

/// The node's state at one scrape, as the loop reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub raft: RaftMetricsView,
    pub rates: RaftRates,
    pub controller: ControllerSample,
    pub events: EventManagerSample,
    pub loader: LoaderSample,
    pub kraftd: KraftdSample,
}

/// The exposition of a sample, the raft channel's counters and, if given, the process's
/// `process_*`, in `format`; `capacity` bytes reserved up front.
pub fn render(
    sample: &Sample,
    channel: &ChannelCounters,
    process: Option<&ProcessMetrics>,
    format: Format,
    capacity: usize,
) -> Vec<u8> {
    let mut f = Exposition::new(format, capacity);
    raft::raft_families(&mut f, &sample.raft, &sample.rates);
    channel.families(&mut f);
    controller::controller_families(&mut f, &sample.controller, &sample.events);
    loader::loader_families(&mut f, &sample.loader);
    extras::kraftd_families(&mut f, &sample.kraftd);
    if let Some(p) = process.and_then(ProcessMetrics::sample) {
        p.families(&mut f);
    }
    f.finish()
}

#[cfg(test)]
mod tests;
