//! Malformed and hostile requests to the APIs an active controller serves for brokers and
//! tools: the very same requests, in the same order, to a Java 4.4 controller and to kraftd
//! (the same cluster id, the same two raw-registered fake brokers 11 and 12, unfenced by one
//! heartbeat each, and topics `t` and `u` placed by hand), the answers compared field by field,
//! then both must keep serving (ApiVersions and a valid CreateTopics), and the topics and
//! brokers of both logs (as Java's image reads them) must be equal; kraftd's log must read the
//! same in Java's image as in kraftd's.
//! - `cases`: a wrong cluster id, stale and unknown broker epochs, unknown topic ids and
//!   names, partition counts above the limit;
//! - `bulk`: CreateTopics and DeleteTopics of 100,000 topics in one request, while ApiVersions
//!   keeps being answered (kraftd's memory is reported and bounded);
//! - `frames`: truncated, garbled and padded bodies of each of these APIs.

mod bulk;
mod cases;
mod frames;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::{Duration, Instant};

use kraftd::protocol::codec::{ApiMessage, Message, Uuid};
use kraftd::protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic,
};
use kraftd::protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, BrokerHeartbeatRequest, BrokerHeartbeatResponse,
    BrokerRegistrationResponse, CreateTopicsRequest, CreateTopicsResponse,
};
use serde_json::{json, Value};

use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::{assert_image_equals_javas, image_differences};
use crate::harness::mixed_quorum::Member;
use crate::harness::quorum_probe::try_round_trip_frame;
use crate::harness::{dump_java_image, random_kafka_uuid, TestDir};
use crate::security::producer_ids::registration;
use crate::topics::cluster::TopicCluster;

pub(crate) const BROKERS: [i32; 2] = [11, 12];

/// What the cases need to know of one controller: its cluster id, the fake brokers' epochs
/// and the topic ids (random on each side, so masked in the answers).
pub(crate) struct Ctx {
    pub cluster_id: String,
    pub epochs: BTreeMap<i32, i64>,
    pub ids: BTreeMap<String, Uuid>,
}

impl Ctx {
    pub fn epoch(&self, broker: i32) -> i64 {
        self.epochs[&broker]
    }

    pub fn id(&self, topic: &str) -> Uuid {
        self.ids[topic]
    }

    /// `text` with topic ids shown as their topic's name, and (if `epochs`) the fake brokers'
    /// epochs, and one either side, as `E11`, `E11-1`, `E11+1`: offsets differ between the two
    /// logs (Java's idle NoOpRecords come when they come).
    pub fn mask(&self, text: &str, epochs: bool) -> String {
        let mut out = text.to_string();
        for (name, id) in &self.ids {
            out = out.replace(&id.to_string(), &format!("<id of {name}>"));
        }
        out = mask_after(&out, "broker_epoch: ", "<an epoch>");
        if epochs {
            for (b, e) in &self.epochs {
                for (d, suffix) in [(0, ""), (-1, "-1"), (1, "+1")] {
                    out = mask_number(&out, e + d, &format!("E{b}{suffix}"));
                }
            }
        }
        out
    }
}

/// Replaces each whole decimal number equal to `n` in `text` by `with`.
fn mask_number(text: &str, n: i64, with: &str) -> String {
    let wanted = n.to_string();
    let mut out = String::new();
    let mut digits = String::new();
    for ch in text.chars().chain(std::iter::once('\0')) {
        if ch.is_ascii_digit() {
            digits.push(ch);
            continue;
        }
        if !digits.is_empty() {
            out.push_str(if digits == wanted { with } else { &digits });
            digits.clear();
        }
        if ch != '\0' {
            out.push(ch);
        }
    }
    out
}

/// Replaces a non-negative number right after `marker` (a freshly assigned broker epoch).
fn mask_after(text: &str, marker: &str, with: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let (head, tail) = rest.split_at(at + marker.len());
        out.push_str(head);
        let n = tail.chars().take_while(|c| c.is_ascii_digit()).count();
        out.push_str(if n > 0 { with } else { "" });
        rest = &tail[n..];
    }
    out.push_str(rest);
    out
}

/// Sends `request` at `version` and renders the answer (`A` decoded, as Debug), or why none.
pub(crate) fn exchange<Q: Message + ApiMessage, A: Message + Debug>(
    c: &TopicCluster,
    version: i16,
    request: &Q,
    timeout: Duration,
) -> Result<A, String> {
    let frame = kraftd::protocol::frame::encode_request(
        Q::API_KEY,
        version,
        7,
        Some("compat-bad-input"),
        request,
    )
    .expect("the request encodes");
    let body = try_round_trip_frame(c.controller.port, Q::API_KEY, version, &frame, timeout)?;
    A::decode_exact(&body, version).map_err(|e| format!("an undecodable answer: {e:?}"))
}

/// An ApiVersions v3 round trip; how long it took.
pub(crate) fn api_versions_latency(port: u16) -> Result<Duration, String> {
    let started = Instant::now();
    let frame = kraftd::protocol::frame::encode_request(
        18,
        3,
        9,
        Some("compat-bad-input"),
        &ApiVersionsRequest {
            client_software_name: "probe".into(),
            client_software_version: "1".into(),
            ..Default::default()
        },
    )
    .expect("encodes");
    let body = try_round_trip_frame(port, 18, 3, &frame, Duration::from_secs(60))?;
    let r = ApiVersionsResponse::decode_exact(&body, 3).map_err(|e| format!("{e:?}"))?;
    if r.error_code != 0 {
        return Err(format!("ApiVersions answered {}", r.error_code));
    }
    Ok(started.elapsed())
}

/// A topic placed by hand: partition i on `assignments[i]`.
fn topic(name: &str, assignments: &[&[i32]]) -> CreatableTopic {
    CreatableTopic {
        name: name.into(),
        num_partitions: -1,
        replication_factor: -1,
        assignments: assignments
            .iter()
            .enumerate()
            .map(|(p, b)| CreatableReplicaAssignment {
                partition_index: p as i32,
                broker_ids: b.to_vec(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Registers the fake brokers and unfences them with one heartbeat each (the session timeout
/// is long enough for the whole test), then creates `t` (2 partitions: [11, 12], [12, 11])
/// and `u` (1 partition: [12]).
fn prepare(c: &TopicCluster) -> Ctx {
    let mut ctx = Ctx {
        cluster_id: c.cluster_id.clone(),
        epochs: BTreeMap::new(),
        ids: BTreeMap::new(),
    };
    let t = Duration::from_secs(30);
    for b in BROKERS {
        let r: BrokerRegistrationResponse = exchange(c, 4, &registration(&c.cluster_id, b), t)
            .expect("BrokerRegistration is answered");
        assert_eq!(r.error_code, 0, "broker {b}: {r:?}");
        ctx.epochs.insert(b, r.broker_epoch);
    }
    for b in BROKERS {
        let deadline = Instant::now() + t;
        loop {
            let hb = BrokerHeartbeatRequest {
                broker_id: b,
                broker_epoch: ctx.epoch(b),
                current_metadata_offset: 1_000_000,
                ..Default::default()
            };
            let r: BrokerHeartbeatResponse =
                exchange(c, 1, &hb, t).expect("BrokerHeartbeat is answered");
            assert_eq!(r.error_code, 0, "broker {b}: {r:?}");
            if !r.is_fenced {
                break;
            }
            assert!(Instant::now() < deadline, "broker {b} stays fenced: {r:?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    let create = CreateTopicsRequest {
        topics: vec![topic("t", &[&[11, 12], &[12, 11]]), topic("u", &[&[12]])],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let r: CreateTopicsResponse = exchange(c, 7, &create, t).expect("CreateTopics is answered");
    for topic in &r.topics {
        assert_eq!(topic.error_code, 0, "{r:?}");
        ctx.ids.insert(topic.name.clone(), topic.topic_id);
    }
    ctx
}

/// Topics (name, partitions with replicas, ISR and leader) and brokers (id, fenced) of Java's
/// image of `log`: what must be equal between the two runs (ids and epochs are not).
fn projection(log: &std::path::Path) -> Value {
    let image = dump_java_image(log, None);
    let topics: BTreeMap<String, Value> = image["topics"]
        .as_object()
        .map(|t| {
            t.values()
                .map(|t| {
                    let parts: BTreeMap<String, Value> = t["partitions"]
                        .as_object()
                        .map(|p| {
                            p.iter()
                                .map(|(i, p)| {
                                    let keep = [
                                        "replicas",
                                        "isr",
                                        "leader",
                                        "leaderEpoch",
                                        "partitionEpoch",
                                    ];
                                    let kept: serde_json::Map<String, Value> = keep
                                        .iter()
                                        .map(|k| (k.to_string(), p[*k].clone()))
                                        .collect();
                                    (i.clone(), Value::Object(kept))
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    (t["name"].as_str().unwrap_or("?").to_string(), json!(parts))
                })
                .collect()
        })
        .unwrap_or_default();
    let brokers: BTreeMap<String, Value> = image["cluster"]["brokers"]
        .as_object()
        .map(|b| {
            b.iter()
                .map(|(id, b)| (id.clone(), json!({"fenced": b["fenced"].clone()})))
                .collect()
        })
        .unwrap_or_default();
    json!({"topics": topics, "brokers": brokers})
}

/// Everything one controller answers, in order: (section, case, Java's expected code if any,
/// rendered answer).
pub(crate) type Answers = Vec<(String, Option<i16>, String)>;

fn run_all(kind: Kind, dir: &TestDir, cluster_id: &str) -> (Answers, Value, bulk::Report) {
    let props = [("broker.session.timeout.ms", "600000".to_string())];
    let mut c = TopicCluster::controller_with_id(dir, kind, &props, &[], cluster_id);
    let ctx = prepare(&c);
    let mut answers: Answers = Vec::new();
    for case in cases::cases() {
        let answer = (case.send)(&c, &ctx);
        answers.push((case.name.to_string(), case.expected, answer));
    }
    let report = bulk::run(&c, &mut answers);
    frames::run(&c, &mut answers);
    for (name, _, answer) in &answers {
        eprintln!("{kind}: {name}: {answer}");
    }
    // Still serving: ApiVersions, and a valid CreateTopics.
    let latency = api_versions_latency(c.controller.port).expect("ApiVersions after all");
    // Placed by hand: Java's random placement cannot be drawn alike in two runs.
    let after = CreateTopicsRequest {
        topics: vec![topic("after", &[&[11, 12], &[12, 11], &[11, 12]])],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let r: CreateTopicsResponse = exchange(&c, 7, &after, Duration::from_secs(30))
        .expect("CreateTopics after all is answered");
    assert_eq!(r.topics[0].error_code, 0, "{kind}: {r:?}");
    eprintln!("{kind}: serving after the bad input (ApiVersions in {latency:?})");
    let report = bulk::Report {
        peak_rss_kib: match &c.controller.member {
            Member::Kraftd(k, _) => peak_rss_kib(k.pid()),
            Member::Java(j) => peak_rss_kib(j.pid()),
        },
        ..report
    };
    let log = c.controller.metadata_dir().join("__cluster_metadata-0");
    stop(&mut c);
    let image = projection(&log);
    if kind == Kind::Kraftd {
        let (offset, _, _) = assert_image_equals_javas(&log, None);
        eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
    }
    (answers, image, report)
}

/// SIGTERM, then SIGKILL if the controller has not stopped within 30 s (after the large
/// requests Java's shutdown can linger); what it committed is on disk either way.
fn stop(c: &mut TopicCluster) {
    c.controller.member.sigterm();
    let deadline = Instant::now() + Duration::from_secs(30);
    while c.controller.is_running() {
        if Instant::now() > deadline {
            eprintln!("{}: not stopped 30 s after SIGTERM: killed", c.kind());
            c.controller.member.kill9();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The process's peak resident set (VmHWM), in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn malformed_and_hostile_requests_get_javas_answers_and_both_keep_serving() {
    let dir = TestDir::new();
    let cluster_id = random_kafka_uuid();
    let (java, java_image, java_report) = run_all(Kind::Java, &dir, &cluster_id);
    let (kraftd, kraftd_image, kraftd_report) = run_all(Kind::Kraftd, &dir, &cluster_id);
    eprintln!("Java:   {java_report:?}\nkraftd: {kraftd_report:?}");
    let mut failures = Vec::new();
    eprintln!("Bad input, the same requests to Java 4.4 and to kraftd:");
    for ((name, expected, j), (_, _, k)) in java.iter().zip(&kraftd) {
        eprintln!("  {name}:\n    java:   {j}");
        if let Some(code) = expected {
            if !j.contains(&format!("error_code: {code},")) {
                failures.push(format!("{name}: Java answered {j}, not error code {code}"));
            }
        }
        if j != k {
            eprintln!("    kraftd: {k}");
            failures.push(format!("{name}:\n    java:   {j}\n    kraftd: {k}"));
        }
    }
    assert_eq!(java.len(), kraftd.len(), "as many answers");
    let diffs = image_differences(&java_image, &kraftd_image);
    if !diffs.is_empty() {
        failures.push(format!("the images differ:\n  {}", diffs.join("\n  ")));
    }
    // kraftd answers ApiVersions while it refuses 100,000 topics, and its memory stays bounded.
    let slowest = kraftd_report.slowest_api_versions;
    if slowest > Duration::from_secs(5) {
        failures.push(format!("kraftd took {slowest:?} to answer ApiVersions"));
    }
    match kraftd_report.peak_rss_kib {
        Some(kib) if kib < 1024 * 1024 => {}
        other => failures.push(format!("kraftd's peak memory: {other:?} KiB")),
    }
    assert!(
        failures.is_empty(),
        "{} of {} answers differ:\n{}",
        failures.len(),
        java.len(),
        failures.join("\n")
    );
}
