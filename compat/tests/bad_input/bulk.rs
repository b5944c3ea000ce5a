//! CreateTopics naming 100,000 topics in one request (~2 MB), and other large requests, each sent while
//! another connection keeps asking ApiVersions; the answers (100,000 results) are rendered as
//! runs of equal results, topic names masked, and how long each took is reported.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kraftd::protocol::messages::create_topics_request::CreatableTopic;
use kraftd::protocol::messages::delete_topics_request::DeleteTopicState;
use kraftd::protocol::messages::{
    CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse,
};

use super::{api_versions_latency, exchange, Answers};
use crate::topics::cluster::TopicCluster;

pub const MANY: usize = 100_000;

/// Sends one bulk request; its rendered answer.
type Send<'a> = Box<dyn Fn() -> String + 'a>;

#[derive(Debug, Default)]
pub struct Report {
    /// Each bulk request and how long its answer took.
    pub took: Vec<(&'static str, Duration)>,
    /// The slowest ApiVersions answer while bulk requests were being decided.
    pub slowest_api_versions: Duration,
    pub peak_rss_kib: Option<u64>,
}

fn names(n: usize, prefix: &str) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i:06}")).collect()
}

fn create(names: &[String], partitions: i32, validate_only: bool) -> CreateTopicsRequest {
    CreateTopicsRequest {
        topics: names
            .iter()
            .map(|n| CreatableTopic {
                name: n.clone(),
                num_partitions: partitions,
                replication_factor: 1,
                ..Default::default()
            })
            .collect(),
        timeout_ms: 60_000,
        validate_only,
        ..Default::default()
    }
}

/// Runs of equal lines: `line` once, with `x count` when repeated.
fn runs(lines: impl IntoIterator<Item = String>) -> String {
    let mut out: Vec<(String, usize)> = Vec::new();
    for l in lines {
        match out.last_mut() {
            Some((last, n)) if *last == l => *n += 1,
            _ => out.push((l, 1)),
        }
    }
    out.iter()
        .map(|(l, n)| {
            if *n > 1 {
                format!("{l} x {n}")
            } else {
                l.clone()
            }
        })
        .collect::<Vec<_>>()
        .join("\n      ")
}

/// A CreateTopics answer: whether the results name the request's topics in its order, then
/// the results (names masked) as runs.
fn render_created(r: &CreateTopicsResponse, sent: &[String]) -> String {
    let in_order =
        r.topics.len() == sent.len() && r.topics.iter().zip(sent).all(|(t, n)| t.name == *n);
    let lines = r.topics.iter().map(|t| {
        let mut t = t.clone();
        t.name = "*".into();
        t.topic_id = Default::default();
        format!("{t:?}")
    });
    format!(
        "throttle {} results {} in request order {in_order}\n      {}",
        r.throttle_time_ms,
        r.topics.len(),
        runs(lines)
    )
}

/// A DeleteTopics answer (results sorted: Java shuffles them), names masked.
fn render_deleted(r: &DeleteTopicsResponse) -> String {
    let mut lines: Vec<String> = r
        .responses
        .iter()
        .map(|t| {
            let mut t = t.clone();
            t.name = Some("*".into());
            format!("{t:?}")
        })
        .collect();
    lines.sort();
    format!(
        "throttle {} results {}\n      {}",
        r.throttle_time_ms,
        r.responses.len(),
        runs(lines)
    )
}

/// Runs `send` while another thread asks ApiVersions every 50 ms; its answer (or why none),
/// how long it took, and the slowest ApiVersions meanwhile.
fn timed(c: &TopicCluster, send: impl FnOnce() -> String) -> (String, Duration, Duration) {
    let port = c.controller.port;
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let prober = s.spawn(|| {
            let mut slowest = Duration::ZERO;
            while !done.load(Ordering::Relaxed) {
                let took = api_versions_latency(port).unwrap_or(Duration::from_secs(3600));
                slowest = slowest.max(took);
                std::thread::sleep(Duration::from_millis(50));
            }
            slowest
        });
        let started = Instant::now();
        let answer = send();
        let took = started.elapsed();
        done.store(true, Ordering::Relaxed);
        (answer, took, prober.join().expect("the prober"))
    })
}

pub fn run(c: &TopicCluster, answers: &mut Answers) -> Report {
    use kraftd::protocol::errors::ErrorCode as E;
    let t = Duration::from_secs(120);
    let mut report = Report::default();
    let many = names(MANY, "bulk");
    let cases: Vec<(&'static str, i16, Send<'_>)> = vec![
        (
            "100,000 topics of 1 partition",
            E::POLICY_VIOLATION.0,
            Box::new(|| {
                let r = create(&many, 1, false);
                exchange(c, 7, &r, t).map_or_else(|e| e, |a| render_created(&a, &many))
            }),
        ),
        (
            "100,000 topics of 1 partition, validate only",
            E::POLICY_VIOLATION.0,
            Box::new(|| {
                let r = create(&many, 1, true);
                exchange(c, 7, &r, t).map_or_else(|e| e, |a| render_created(&a, &many))
            }),
        ),
        (
            "100,000 topics of 0 partitions",
            E::INVALID_PARTITIONS.0,
            Box::new(|| {
                let r = create(&many, 0, false);
                exchange(c, 7, &r, t).map_or_else(|e| e, |a| render_created(&a, &many))
            }),
        ),
        (
            "50 times the same topic",
            E::INVALID_REQUEST.0,
            Box::new(|| {
                // Java takes minutes over many copies of one name (5,000: no answer within 2
                // minutes; 100,000: BoundedListTooLongException after 2 minutes).
                let same = vec!["same".to_string(); 50];
                let r = create(&same, 1, false);
                exchange(c, 7, &r, t).map_or_else(|e| e, |a| render_created(&a, &same))
            }),
        ),
        (
            "5,001 topics: 10,002 records",
            E::POLICY_VIOLATION.0,
            Box::new(|| {
                let some = names(5_001, "some");
                let r = create(&some, 1, false);
                exchange(c, 7, &r, t).map_or_else(|e| e, |a| render_created(&a, &some))
            }),
        ),
        (
            "deleting 10,000 unknown topics",
            E::UNKNOWN_TOPIC_OR_PARTITION.0,
            Box::new(|| {
                let r = DeleteTopicsRequest {
                    // Java takes minutes over 100,000: its lookups are quadratic too.
                    topics: many[..10_000]
                        .iter()
                        .map(|n| DeleteTopicState {
                            name: Some(n.clone()),
                            ..Default::default()
                        })
                        .collect(),
                    timeout_ms: 60_000,
                    ..Default::default()
                };
                exchange(c, 6, &r, t).map_or_else(|e| e, |a| render_deleted(&a))
            }),
        ),
    ];
    for (name, expected, send) in cases {
        let (answer, elapsed, slowest) = timed(c, send);
        report.slowest_api_versions = report.slowest_api_versions.max(slowest);
        report.took.push((name, elapsed));
        answers.push((name.to_string(), Some(expected), answer));
    }
    report
}
