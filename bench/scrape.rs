//! `make bench-scrape`: the CPU cost of one Prometheus scrape of kraftd at 100,000 partitions
//! (issue 30): the node loop's part (counting the committed image: topics, partitions, offline
//! and imbalanced partitions, brokers), and the HTTP side's (the families and their text).
//! For scale, the same counts by a full walk of every partition, which a scrape no longer does
//! (the image's partition index keeps them on every replay).
//!
//! Knobs (environment): SCRAPE_TOPICS (100), SCRAPE_PARTITIONS (1000 per topic), SCRAPE_BROKERS
//! (6), SCRAPE_ROUNDS (200). Output: a summary on stdout, target/bench/scrape.json.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::time::Instant;

use kraftd::controller::Controller;
use kraftd::protocol::codec::Uuid;
use kraftd::protocol::messages::register_broker_record::BrokerEndpoint;
use kraftd::protocol::messages::{
    FeatureLevelRecord, PartitionRecord, RegisterBrokerRecord, TopicRecord,
};
use kraftd::protocol::records::MetadataRecord;
use kraftd::raft::metrics::RaftMetricsView;
use kraftd::server::metrics::controller::{ControllerSample, EventManagerSample};
use kraftd::server::metrics::extras::KraftdSample;
use kraftd::server::metrics::loader::LoaderSample;
use kraftd::server::metrics::raft::ChannelCounters;
use kraftd::server::metrics::sampler::RaftRates;
use kraftd::server::metrics::text::Format;
use kraftd::server::metrics::{node_families, render, Sample};
use serde_json::json;

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn uuid(kind: u8, n: u64) -> Uuid {
    let mut b = [0u8; 16];
    b[0] = kind;
    b[8..].copy_from_slice(&n.to_be_bytes());
    Uuid(b)
}

/// A controller holding `topics` × `partitions` partitions of 3 replicas on `brokers` brokers.
fn controller(topics: usize, partitions: usize, brokers: usize) -> Controller {
    let mut c = Controller::new();
    let mut offset = 0;
    let mut replay = |c: &mut Controller, r: MetadataRecord| {
        c.replay(&r, offset).expect("the record replays");
        offset += 1;
    };
    replay(
        &mut c,
        FeatureLevelRecord {
            name: "metadata.version".into(),
            feature_level: 33,
            ..Default::default()
        }
        .into(),
    );
    for b in 0..brokers {
        replay(
            &mut c,
            RegisterBrokerRecord {
                broker_id: b as i32,
                incarnation_id: uuid(1, b as u64),
                broker_epoch: b as i64 + 1,
                end_points: vec![BrokerEndpoint {
                    name: "PLAINTEXT".into(),
                    host: format!("broker-{b}"),
                    port: 9092,
                    ..Default::default()
                }],
                log_dirs: vec![uuid(2, b as u64)],
                ..Default::default()
            }
            .into(),
        );
    }
    for t in 0..topics {
        let topic_id = uuid(3, t as u64);
        replay(
            &mut c,
            TopicRecord {
                name: format!("topic-{t:05}"),
                topic_id,
                ..Default::default()
            }
            .into(),
        );
        for p in 0..partitions {
            let first = (t + p) % brokers;
            let placed: Vec<i32> = (0..3).map(|r| ((first + r) % brokers) as i32).collect();
            replay(
                &mut c,
                PartitionRecord {
                    partition_id: p as i32,
                    topic_id,
                    directories: placed.iter().map(|b| uuid(2, *b as u64)).collect(),
                    isr: placed.clone(),
                    leader: placed[0],
                    replicas: placed,
                    ..Default::default()
                }
                .into(),
            );
        }
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
            voter_progress: Vec::new(),
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
        let text = render(node_families(&s, &channel), None, Format::Text);
        bytes = text.len();
        std::hint::black_box(text);
    });
    let summary = json!({
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
