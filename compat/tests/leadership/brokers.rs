//! Partition leadership on stock brokers served by one kraftd controller (the `make run`
//! shape) with three Kafka 4.4 brokers: a topic of 6 partitions with 3 replicas is produced
//! to, then
//! - a broker is killed (SIGKILL): once its session expires it is fenced, every partition it
//!   led gets a new leader and it leaves every ISR;
//! - restarted, it is unfenced and the leaders bring it back into every ISR (AlterPartition);
//! - another broker is stopped with SIGTERM: its controlled shutdown moves its leaderships and
//!   ISR places away first, and it exits well within its shutdown time;
//! - restarted too, `kafka-leader-election --election-type preferred` moves every leadership
//!   back to its first replica;
//! - `kafka-metadata-quorum --bootstrap-server <broker> describe` shows the quorum;
//! - every record produced before, between and after is consumed;
//! - Java's image of kraftd's log equals kraftd's.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::assert_image_equals_javas;
use crate::harness::{Kafka, TestDir, Tool};
use crate::topics::cluster::{TopicCluster, RUNNING};
use crate::topics::workload::{parse_describe, produce, Described};

const BROKERS: [i32; 3] = [11, 12, 13];
const TOPIC: &str = "moves";
const WAIT: Duration = Duration::from_secs(90);

fn describe(kafka: &Kafka, broker: &str) -> BTreeMap<i32, Described> {
    let out = kafka.run(
        Tool::Topics,
        &["--bootstrap-server", broker, "--describe", "--topic", TOPIC],
    );
    if out.success() {
        parse_describe(&out.stdout, TOPIC)
    } else {
        BTreeMap::new()
    }
}

/// Describes the topic through `broker` until `done` holds.
fn describe_until(
    kafka: &Kafka,
    broker: &str,
    what: &str,
    done: impl Fn(&BTreeMap<i32, Described>) -> bool,
) -> BTreeMap<i32, Described> {
    let deadline = Instant::now() + WAIT;
    loop {
        let d = describe(kafka, broker);
        if d.len() == 6 && done(&d) {
            return d;
        }
        assert!(Instant::now() < deadline, "{what}: {TOPIC} is {d:?}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn without(d: &BTreeMap<i32, Described>, broker: i32) -> bool {
    d.values()
        .all(|p| p.leader != broker && p.leader >= 0 && !p.isr.contains(&broker))
}

#[test]
fn fenced_and_shut_down_brokers_leave_leaderships_and_isrs_and_come_back() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let mut c = TopicCluster::start(&dir, Kind::Kraftd, &BROKERS);
    let bootstrap = c.brokers[0].bootstrap_server();
    let out = kafka.run(
        Tool::Topics,
        &[
            "--bootstrap-server",
            &bootstrap,
            "--create",
            "--topic",
            TOPIC,
            "--partitions",
            "6",
            "--replication-factor",
            "3",
        ],
    );
    out.assert_success();
    // `make run`'s single controller, described through a broker.
    crate::controller_failover::assert_quorum_described_through(
        kafka,
        &bootstrap,
        1,
        &[1],
        &BROKERS,
    );
    let start = describe_until(kafka, &bootstrap, "created", |d| {
        d.values()
            .all(|p| p.isr.len() == 3 && p.leader == p.replicas[0])
    });
    let mut produced: Vec<String> = Vec::new();
    let mut produce_batch = |label: &str, via: &str| {
        let lines: Vec<String> = (0..20).map(|i| format!("{label}-{i}")).collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        produce(kafka, via, TOPIC, &refs).assert_success();
        produced.extend(lines);
    };
    produce_batch("before", &bootstrap);

    // Broker 12 dies: fenced when its session expires, it leaves every leadership and ISR.
    let killed = 1;
    let led_by_killed = start.values().filter(|p| p.leader == 12).count();
    assert!(led_by_killed > 0, "broker 12 leads nothing: {start:?}");
    c.brokers[killed].kill9();
    let fenced_at = Instant::now();
    describe_until(kafka, &bootstrap, "broker 12 fenced", |d| without(d, 12));
    eprintln!(
        "broker 12 (leader of {led_by_killed} partition(s)) killed: fenced and out of every ISR after {:?}",
        fenced_at.elapsed()
    );
    produce_batch("while-12-down", &bootstrap);

    // Restarted, it is unfenced and caught up: the leaders add it back to every ISR.
    c.brokers[killed].restart(&dir);
    assert!(
        c.brokers[killed].wait_for_log(RUNNING, WAIT),
        "broker 12 did not rejoin"
    );
    describe_until(kafka, &bootstrap, "broker 12 back in sync", |d| {
        d.values().all(|p| p.isr.len() == 3)
    });

    // Broker 13 stops: its controlled shutdown moves its leaderships away before it exits.
    let stopped = 2;
    let before = describe(kafka, &bootstrap);
    assert!(
        before.values().any(|p| p.leader == 13),
        "13 leads nothing: {before:?}"
    );
    let asked = Instant::now();
    c.brokers[stopped].sigterm();
    c.brokers[stopped].wait_exit(WAIT);
    let took = asked.elapsed();
    // The JVM exits with 143 on SIGTERM; the controller's grant is in the broker's log.
    assert!(
        c.brokers[stopped].wait_for_log(
            "The controller has asked us to exit controlled shutdown.",
            Duration::from_secs(1)
        ),
        "broker 13 was not granted its controlled shutdown; log {}",
        c.brokers[stopped].log_path().display()
    );
    let d = describe_until(kafka, &bootstrap, "broker 13 shut down", |d| without(d, 13));
    assert!(
        took < Duration::from_secs(30),
        "broker 13's controlled shutdown took {took:?}"
    );
    eprintln!("broker 13 shut down in a controlled way in {took:?}; now {d:?}");
    produce_batch("while-13-down", &bootstrap);

    // Back again, and the preferred leaders are elected by the tool.
    c.brokers[stopped].restart(&dir);
    assert!(
        c.brokers[stopped].wait_for_log(RUNNING, WAIT),
        "broker 13 did not rejoin"
    );
    describe_until(kafka, &bootstrap, "broker 13 back in sync", |d| {
        d.values().all(|p| p.isr.len() == 3)
    });
    let out = kafka.run(
        Tool::LeaderElection,
        &[
            "--bootstrap-server",
            &bootstrap,
            "--election-type",
            "preferred",
            "--all-topic-partitions",
        ],
    );
    assert!(out.success(), "{out}");
    let d = describe_until(kafka, &bootstrap, "preferred leaders", |d| {
        d.values().all(|p| p.leader == p.replicas[0])
    });
    eprintln!("preferred leaders elected: {d:?}");
    produce_batch("after", &bootstrap);

    // Nothing acknowledged was lost.
    let consumed = kafka.console_consume(&bootstrap, TOPIC, produced.len(), 60_000);
    let mut got: Vec<&str> = consumed.stdout.lines().collect();
    got.sort();
    let mut want: Vec<&str> = produced.iter().map(String::as_str).collect();
    want.sort();
    assert_eq!(got, want, "{consumed}");

    let log = c.controller.metadata_dir().join("__cluster_metadata-0");
    c.stop();
    let (offset, _, _) = assert_image_equals_javas(&log, None);
    eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
}
