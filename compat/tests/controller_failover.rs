//! Three kraftd controllers (static voters) serving three stock Kafka 4.4 brokers, and the
//! active controller killed with SIGKILL while clients produce:
//! - `kafka-metadata-quorum --bootstrap-server <broker>` describes the quorum (status and
//!   replication) through a broker, before and after the failover;
//! - a verifying client workload (`compat/java/ExactlyOnceWorkload.java`) sends 100,000
//!   messages through an idempotent producer (acks=all) and 10,000 through a transactional
//!   producer (every fifth transaction aborted), then reads both topics as a read_committed
//!   consumer group (`__consumer_offsets` and `__transaction_state` auto-created); every
//!   acknowledged message is consumed exactly once and no error reaches the clients;
//! - midway the active kraftd is killed: another takes over, no live broker is ever fenced, a
//!   topic is created, grown and deleted through a broker while the workload runs, and no
//!   producer-id block is handed out twice;
//! - the killed kraftd restarts and catches up; a broker killed after the failover is fenced
//!   by the new active controller; Java's image of both kraftd logs equals kraftd's.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use kraftd::protocol::codec::{ApiMessage, Message};
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::messages::{AllocateProducerIdsRequest, AllocateProducerIdsResponse};
use serde_json::Value;

use crate::harness::image_compare::assert_image_equals_javas;
use crate::harness::java_probe::spawn_program;
use crate::harness::kraftd_quorum::KraftdQuorum;
use crate::harness::quorum_probe::{describe_quorum, round_trip, voter_end};
use crate::harness::workload::log_view::LogView;
use crate::harness::{Kafka, TestDir, Tool};
use crate::topics::workload::parse_describe;

const BROKERS: [i32; 3] = [11, 12, 13];
/// Idempotent messages, transactions and messages per transaction, and the idempotent rate
/// per second (the transactional producer goes at a tenth of it): about 20 s of production.
const WORKLOAD: [&str; 4] = ["100000", "100", "100", "5000"];
/// The workload's progress line after which the active controller is killed.
const KILL_AFTER: &str = "acked 20000";
const WAIT: Duration = Duration::from_secs(120);
const WORKLOAD_TIMEOUT: Duration = Duration::from_secs(300);
/// What a broker's metadata loader and publishers log on a fault (the fault handler's line,
/// which also counts `metadata-load-error-count` and the publisher's fault metric).
const BROKER_METADATA_FAULTS: [&str; 2] = [
    "Encountered metadata loading fault",
    "Encountered metadata publishing fault",
];

#[test]
fn three_kraftd_controllers_serve_brokers_through_a_leader_kill_under_load() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let mut q = KraftdQuorum::start(&dir, 3);
    let mut brokers = q.start_brokers(&dir, &BROKERS);
    let bootstrap = brokers
        .iter()
        .map(|b| b.bootstrap_server())
        .collect::<Vec<_>>()
        .join(",");
    let via = brokers[0].bootstrap_server();
    let first = q.wait_for_leader(|_| true);
    assert_quorum_described_through(kafka, &via, first, &[1, 2, 3], &BROKERS);
    for (topic, partitions) in [("eos-idempotent", "12"), ("eos-transactional", "6")] {
        topics(
            kafka,
            &via,
            &[
                "--create",
                "--topic",
                topic,
                "--partitions",
                partitions,
                "--replication-factor",
                "3",
                "--config",
                "min.insync.replicas=2",
            ],
        );
    }

    // The workload runs; a fifth of the way in, the active controller dies.
    let mut args = vec![bootstrap.as_str()];
    args.extend(WORKLOAD);
    let mut workload = spawn_program("ExactlyOnceWorkload", &args, &dir, "exactly-once-workload");
    assert!(
        workload.wait_for_log(KILL_AFTER, WAIT),
        "the workload did not log {KILL_AFTER:?}"
    );
    let blocks_before = LogView::read(&metadata_dir(&dir, first))
        .producer_id_blocks
        .len();
    assert!(
        blocks_before > 0,
        "the brokers took no producer-id block before the kill"
    );
    q.node(first).kill9();
    let killed = Instant::now();
    let next = q.wait_for_leader(|id| id != first);
    eprintln!(
        "kraftd {next} leads {:?} after kraftd {first} was killed",
        killed.elapsed()
    );

    // The new active controller serves topic changes while the workload runs.
    topics(
        kafka,
        &via,
        &[
            "--create",
            "--topic",
            "after-failover",
            "--partitions",
            "12",
            "--replication-factor",
            "3",
        ],
    );
    topics(
        kafka,
        &via,
        &["--alter", "--topic", "after-failover", "--partitions", "16"],
    );
    let described = describe_until(kafka, &via, "after-failover", |d| d.len() == 16);
    assert!(
        described.values().all(|p| p.isr.len() == 3),
        "{described:?}"
    );
    topics(kafka, &via, &["--delete", "--topic", "after-failover"]);

    // A block asked for after the failover starts past every block handed out before it.
    let view = LogView::read(&metadata_dir(&dir, next));
    let epoch = view.brokers[&BROKERS[0]].epoch;
    let request = AllocateProducerIdsRequest {
        broker_id: BROKERS[0],
        broker_epoch: epoch,
        ..Default::default()
    };
    let body = round_trip(
        q.port(next),
        AllocateProducerIdsRequest::API_KEY,
        0,
        &request,
    )
    .expect("the new active controller answers AllocateProducerIds");
    let block = AllocateProducerIdsResponse::decode_exact(&body, 0).unwrap();
    assert_eq!(ErrorCode(block.error_code), ErrorCode::NONE, "{block:?}");

    let status = workload.wait_exit(WORKLOAD_TIMEOUT);
    let output = fs::read_to_string(dir.log_path("exactly-once-workload")).unwrap();
    let summary: Value = output
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("the workload printed no summary ({status:?}):\n{output}"));
    eprintln!("workload: {summary}");
    assert!(status.success() && summary["ok"] == true, "{summary}");
    assert_eq!(summary["idempotent_acked"], 100_000);
    assert_eq!(summary["idempotent_consumed"], 100_000);
    assert_eq!(summary["transactional_committed"], 8_000);
    assert_eq!(summary["transactional_consumed"], 8_000);

    // No live broker was fenced, before, during or after the failover.
    let view = LogView::read(&metadata_dir(&dir, next));
    assert!(view.fencings.is_empty(), "fenced: {:?}", view.fencings);
    for b in &mut brokers {
        assert!(b.is_running(), "broker {} exited", b.node_id());
        assert!(view.is_active(b.node_id()), "broker {}", b.node_id());
    }
    assert_blocks_never_reused(&view.producer_id_blocks, &block);
    assert_quorum_described_through(kafka, &via, next, &[1, 2, 3], &BROKERS);

    // The killed controller comes back and catches up.
    q.node(first).restart(&dir);
    let deadline = Instant::now() + WAIT;
    loop {
        let d = describe_quorum(q.port(next)).expect("the leader answers DescribeQuorum");
        if voter_end(&d, first) >= Some(d.high_watermark) && d.high_watermark > view.end_offset {
            break;
        }
        assert!(Instant::now() < deadline, "kraftd {first} did not catch up");
        std::thread::sleep(Duration::from_millis(200));
    }

    // The new active controller does keep the brokers' sessions: one that dies now is fenced.
    let mut dead = brokers.pop().expect("three brokers");
    dead.kill9();
    let killed = Instant::now();
    let deadline = killed + WAIT;
    while LogView::read(&metadata_dir(&dir, next)).fencings != [dead.node_id()] {
        assert!(
            Instant::now() < deadline,
            "broker {} not fenced",
            dead.node_id()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "broker {} fenced {:?} after its kill",
        dead.node_id(),
        killed.elapsed()
    );

    for b in &mut brokers {
        let log = fs::read_to_string(b.log_path()).unwrap_or_default();
        for fault in BROKER_METADATA_FAULTS {
            assert!(!log.contains(fault), "broker {}: {fault}", b.node_id());
        }
        b.stop(Duration::from_secs(60));
    }
    q.stop();
    for id in [next, first] {
        let (offset, _, _) = assert_image_equals_javas(&q.metadata_log(&dir, id), None);
        eprintln!("Java's image of kraftd {id}'s log equals kraftd's at offset {offset}");
    }
}

fn metadata_dir(dir: &TestDir, id: i32) -> PathBuf {
    dir.subdir(format!("kraftd-{id}"))
}

/// Every ProducerIdsRecord hands out the block right after the previous one, and the block
/// granted to the test is among them.
fn assert_blocks_never_reused(blocks: &[(i32, i64)], granted: &AllocateProducerIdsResponse) {
    let nexts: Vec<i64> = blocks.iter().map(|&(_, next)| next).collect();
    assert!(
        nexts.windows(2).all(|w| w[0] < w[1]),
        "producer-id blocks out of order: {blocks:?}"
    );
    let end = granted.producer_id_start + i64::from(granted.producer_id_len);
    let at = nexts.iter().position(|&n| n == end);
    assert!(
        at.is_some_and(|i| i == 0 || nexts[i - 1] == granted.producer_id_start),
        "granted {granted:?}, log {blocks:?}"
    );
    eprintln!("{} producer-id blocks, none reused", blocks.len());
}

fn topics(kafka: &Kafka, via: &str, args: &[&str]) {
    let mut all = vec!["--bootstrap-server", via];
    all.extend_from_slice(args);
    let out = kafka.run(Tool::Topics, &all);
    assert!(out.success(), "kafka-topics {args:?}: {out}");
}

fn describe_until(
    kafka: &Kafka,
    via: &str,
    topic: &str,
    done: impl Fn(&BTreeMap<i32, crate::topics::workload::Described>) -> bool,
) -> BTreeMap<i32, crate::topics::workload::Described> {
    let deadline = Instant::now() + WAIT;
    loop {
        let out = kafka.run(
            Tool::Topics,
            &["--bootstrap-server", via, "--describe", "--topic", topic],
        );
        let d = parse_describe(&out.stdout, topic);
        if out.success() && done(&d) {
            return d;
        }
        assert!(Instant::now() < deadline, "{topic}: {out}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// `kafka-metadata-quorum --bootstrap-server <broker> describe --status` names `leader`, and
/// `describe --replication` lists `voters` (the leader as such) and `observers`.
pub(crate) fn assert_quorum_described_through(
    kafka: &Kafka,
    via: &str,
    leader: i32,
    voters: &[i32],
    observers: &[i32],
) {
    let status = kafka.run(
        Tool::MetadataQuorum,
        &["--bootstrap-server", via, "describe", "--status"],
    );
    assert!(status.success(), "{status}");
    assert!(
        status
            .stdout
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["LeaderId:", &leader.to_string()]),
        "{status}"
    );
    let replication = kafka.run(
        Tool::MetadataQuorum,
        &["--bootstrap-server", via, "describe", "--replication"],
    );
    assert!(replication.success(), "{replication}");
    let rows: Vec<Vec<&str>> = replication
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    let status_of = |id: i32| {
        rows.iter()
            .find(|r| r.first() == Some(&id.to_string().as_str()))
            .and_then(|r| r.last().copied())
    };
    for &id in voters {
        let expected = if id == leader { "Leader" } else { "Follower" };
        assert!(
            status_of(id).is_some() && (id != leader || status_of(id) == Some(expected)),
            "voter {id}: {replication}"
        );
    }
    for &id in observers {
        assert_eq!(status_of(id), Some("Observer"), "{replication}");
    }
}
