//! `make bench-scrape`: the CPU cost of one Prometheus scrape of kraftd at 100,000 partitions
//! (issue 30): the node loop's part (counting the committed image: topics, partitions, offline
//! and imbalanced partitions, brokers), and the HTTP side's (the families and their text).
//! For scale, the same counts by a full walk of every partition, which a scrape no longer does
//! (the image's partition index keeps them on every replay).
//!
//! Then W3's shape: a leader's scrape with SCRAPE_FLEET (1000) registered brokers, each with its
//! two per-broker gauges (registration state, time since its last heartbeat), and `process_*`,
//! as `/metrics` renders it; and `process_*` alone, read as kraftd reads it and as the
//! `prometheus` crate's process collector (procfs) would.
//!
//! Knobs (environment): SCRAPE_TOPICS (100), SCRAPE_PARTITIONS (1000 per topic), SCRAPE_BROKERS
//! (6), SCRAPE_FLEET (1000), SCRAPE_ROUNDS (200). Output: a summary on stdout,
//! target/bench/scrape.json.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::time::Instant;

use kraftd::controller::Controller;
use kraftd::raft::metrics::RaftMetricsView;
use kraftd::server::metrics::controller::{ControllerSample, EventManagerSample};
use kraftd::server::metrics::extras::KraftdSample;
use kraftd::server::metrics::loader::LoaderSample;
use kraftd::server::metrics::raft::ChannelCounters;
use kraftd::server::metrics::sampler::RaftRates;
use kraftd::server::metrics::text::Format;
use kraftd::server::metrics::{render, Sample};
use serde_json::json;

#[path = "synth_records.rs"]
mod synth_records;

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A controller holding `topics` × `partitions` partitions of 3 replicas on `brokers` brokers.
fn controller(topics: usize, partitions: usize, brokers: usize) -> Controller {
    let mut c = Controller::new();
    let records = synth_records::setup(brokers)
        .into_iter()
        .chain((0..topics).flat_map(|t| synth_records::topic(t, partitions, 3, brokers)));
    for (offset, r) in records.enumerate() {
        c.replay(&r, offset as i64).expect("the record replays");
    }
    c
}

fn sample(controller: ControllerSample) -> Sample {
    Sample {
        raft: RaftMetricsView {
            state: "leader",
            leader: 1,
            vote: 1,
            epoch: 3,
            high_watermark: 100_000,
            log_end_offset: 100_001,
            log_end_epoch: 3,
            number_of_voters: 3,
            unknown_voter_connections: 0,
            observers: Some(6),
            uncommitted_voter_change: Some(false),
            fetching_from_leader: true,
            is_voter: true,
            elections_started: 0,
        },
        rates: RaftRates {
            commit_latency_avg: 2.0,
            commit_latency_max: 5.0,
            election_latency_avg: 100.0,
            election_latency_max: 100.0,
            append_records_rate: 10.0,
            fetch_records_rate: 0.0,
            poll_idle_ratio_avg: 0.9,
        },
        controller,
        events: EventManagerSample::default(),
        loader: LoaderSample::default(),
        kraftd: KraftdSample::default(),
    }
}

/// Microseconds per round of `f`, over `rounds` rounds (after one to warm up).
fn per_round(rounds: usize, mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    for _ in 0..rounds {
        f();
    }
    start.elapsed().as_secs_f64() * 1e6 / rounds as f64
}

fn main() {
    let topics = knob("SCRAPE_TOPICS", 100);
    let partitions = knob("SCRAPE_PARTITIONS", 1000);
    let brokers = knob("SCRAPE_BROKERS", 6);
    let rounds = knob("SCRAPE_ROUNDS", 200);
    let c = controller(topics, partitions, brokers);
    let image = &c.latest_state().image;
    let total = topics * partitions;

    let count_us = per_round(rounds, || {
        let mut s = ControllerSample::default();
        s.count_image(image);
        std::hint::black_box(s);
    });
    let walk_us = per_round(rounds.min(50), || {
        let (mut n, mut offline, mut imbalanced) = (0u64, 0u64, 0u64);
        for topic in image.topics.by_id.values() {
            for p in topic.partitions.values() {
                n += 1;
                offline += u64::from(p.leader < 0);
                imbalanced += u64::from(p.replicas.first() != Some(&p.leader));
            }
        }
        std::hint::black_box((n, offline, imbalanced));
    });
    let mut counted = ControllerSample::default();
    counted.count_image(image);
    assert_eq!(
        counted.partitions as usize, total,
        "the index counts every partition"
    );
    let s = sample(counted);
    let channel = ChannelCounters::default();
    let mut bytes = 0;
    let render_us = per_round(rounds, || {
        let text = render(&s, &channel, None, Format::Text, bytes);
        bytes = text.len();
        std::hint::black_box(text);
    });
    // W3's shape: every broker of a fleet registered and heartbeating, on the leader.
    let fleet = knob("SCRAPE_FLEET", 1000);
    let fleet_controller = controller(1, 10, fleet);
    let mut counted = ControllerSample::default();
    counted.count_image(&fleet_controller.latest_state().image);
    counted.since_last_heartbeat_ms = (0..fleet as i32).map(|id| (id, 1_000)).collect();
    let fleet_sample = sample(counted);
    let process = kraftd::server::metrics::process::ProcessMetrics::for_self();
    let mut fleet_bytes = 0;
    let fleet_us = per_round(rounds, || {
        let text = render(
            &fleet_sample,
            &channel,
            Some(&process),
            Format::Text,
            fleet_bytes,
        );
        fleet_bytes = text.len();
        std::hint::black_box(text);
    });
    println!(
        "scrape of a leader with {fleet} brokers (their per-broker gauges and process_*): \
         {fleet_us:.1} us rendering {fleet_bytes} bytes"
    );
    let process_us = per_round(rounds, || {
        std::hint::black_box(process.sample());
    });
    let crates = prometheus::process_collector::ProcessCollector::for_self();
    let crate_process_us = per_round(rounds, || {
        std::hint::black_box(prometheus::core::Collector::collect(&crates));
    });
    println!(
        "process_*: {process_us:.1} us read as kraftd reads it, {crate_process_us:.1} us through \
         the prometheus crate's collector"
    );
    let summary = json!({
        "fleet_brokers": fleet,
        "fleet_render_us": fleet_us,
        "fleet_exposition_bytes": fleet_bytes,
        "process_us": process_us,
        "crate_process_collector_us": crate_process_us,
        "partitions": total,
        "topics": topics,
        "brokers": brokers,
        "rounds": rounds,
        "count_image_us": count_us,
        "full_walk_us": walk_us,
        "render_us": render_us,
        "exposition_bytes": bytes,
        "scrape_cpu_us": count_us + render_us,
    });
    println!(
        "scrape at {total} partitions: {:.1} us of CPU ({count_us:.1} us counting the image on the node loop, \
         {render_us:.1} us rendering {bytes} bytes); a full walk of the partitions would take {walk_us:.0} us",
        count_us + render_us
    );
    std::fs::create_dir_all("target/bench").expect("target/bench");
    std::fs::write("target/bench/scrape.json", summary.to_string()).expect("write scrape.json");
}
