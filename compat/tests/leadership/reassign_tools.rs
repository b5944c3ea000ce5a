//! `kafka-reassign-partitions` on three stock Kafka 4.4 brokers, each with two log directories,
//! served by one kraftd controller (AlterPartitionReassignments forwarded by a broker in an
//! Envelope, completed by the leaders' AlterPartition; every new replica's directory reported
//! by its broker in AssignReplicasToDirs):
//! - a topic with data moves onto another broker set with `--execute`; `--verify` reports it
//!   complete, `kafka-topics --describe` shows the new replicas, every record is consumed;
//! - a throttled move of a topic holding megabytes stays in progress: `--list` shows it
//!   (ListPartitionReassignments), `--cancel` reverts it to the original replica;
//! - every replica ends in a directory of its broker (none left UNASSIGNED), and Java's image
//!   of kraftd's log equals kraftd's.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::{assert_image_equals_javas, kraftd_image};
use crate::harness::{Kafka, Output, TestDir, Tool};
use crate::topics::cluster::TopicCluster;
use crate::topics::workload::{parse_describe, produce, Described};

const BROKERS: [i32; 3] = [11, 12, 13];
const MOVING: &str = "moving";
const SLOW: &str = "slow";
const WAIT: Duration = Duration::from_secs(60);
/// `DirectoryId.UNASSIGNED` as the image JSON shows it.
const UNASSIGNED: &str = "AAAAAAAAAAAAAAAAAAAAAQ";

fn describe(kafka: &Kafka, broker: &str, topic: &str) -> BTreeMap<i32, Described> {
    let out = kafka.run(
        Tool::Topics,
        &["--bootstrap-server", broker, "--describe", "--topic", topic],
    );
    if out.success() {
        parse_describe(&out.stdout, topic)
    } else {
        BTreeMap::new()
    }
}

/// Runs the tool until `done` holds for its output.
fn run_until(
    kafka: &Kafka,
    tool: Tool,
    args: &[&str],
    what: &str,
    done: impl Fn(&Output) -> bool,
) -> Output {
    let deadline = Instant::now() + WAIT;
    loop {
        let out = kafka.run(tool, args);
        if done(&out) {
            return out;
        }
        assert!(Instant::now() < deadline, "{what}: {out}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn plan(dir: &TestDir, name: &str, moves: &[(&str, i32, &[i32])]) -> String {
    let partitions: Vec<String> = moves
        .iter()
        .map(|(t, p, r)| {
            let replicas: Vec<String> = r.iter().map(i32::to_string).collect();
            format!(
                r#"{{"topic":"{t}","partition":{p},"replicas":[{}]}}"#,
                replicas.join(",")
            )
        })
        .collect();
    let path = dir.path().join(name);
    std::fs::write(
        &path,
        format!(r#"{{"version":1,"partitions":[{}]}}"#, partitions.join(",")),
    )
    .expect("the plan is written");
    path.display().to_string()
}

fn create(kafka: &Kafka, bootstrap: &str, topic: &str, assignment: &str) {
    kafka
        .run(
            Tool::Topics,
            &[
                "--bootstrap-server",
                bootstrap,
                "--create",
                "--topic",
                topic,
                "--replica-assignment",
                assignment,
            ],
        )
        .assert_success();
}

#[test]
fn reassign_partitions_moves_replicas_lists_and_cancels_on_stock_brokers() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    // Two log directories per broker (JBOD): new replicas are UNASSIGNED until their broker
    // says where it put them.
    let started = AtomicUsize::new(0);
    let mut c = TopicCluster::start_configured(&dir, Kind::Kraftd, &BROKERS, &[], |b| {
        let n = started.fetch_add(1, Ordering::SeqCst);
        let jbod = |d: &str| {
            dir.path()
                .join(format!("jbod-{n}-{d}"))
                .display()
                .to_string()
        };
        b.prop("log.dirs", format!("{},{}", jbod("a"), jbod("b")))
    });
    let bootstrap = c.brokers[0].bootstrap_server();
    let reassign = |args: &[&str]| {
        let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
        all.extend(args);
        kafka.run(Tool::ReassignPartitions, &all)
    };

    // 1. Two partitions on 11 and 12, with data, move onto 13 as well.
    create(kafka, &bootstrap, MOVING, "11:12,12:11");
    let lines: Vec<String> = (0..50).map(|i| format!("record-{i}")).collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    produce(kafka, &bootstrap, MOVING, &refs).assert_success();
    let moves = plan(
        &dir,
        "moves.json",
        &[(MOVING, 0, &[13, 12]), (MOVING, 1, &[12, 13])],
    );
    let executed = reassign(&["--reassignment-json-file", &moves, "--execute"]);
    assert!(
        executed.success()
            && executed
                .stdout
                .contains("Successfully started partition reassignments"),
        "{executed}"
    );
    run_until(
        kafka,
        Tool::ReassignPartitions,
        &[
            "--bootstrap-server",
            &bootstrap,
            "--reassignment-json-file",
            &moves,
            "--verify",
        ],
        "the moves complete",
        |out| out.success() && out.stdout.matches("is completed").count() == 2,
    );
    let deadline = Instant::now() + WAIT;
    let moved = loop {
        let d = describe(kafka, &bootstrap, MOVING);
        let want = [vec![13, 12], vec![12, 13]];
        if d.len() == 2
            && d.values()
                .zip(&want)
                .all(|(p, w)| &p.replicas == w && p.isr.len() == 2)
        {
            break d;
        }
        assert!(Instant::now() < deadline, "{MOVING} did not move: {d:?}");
        std::thread::sleep(Duration::from_millis(500));
    };
    eprintln!("moved: {moved:?}");
    let consumed = kafka.console_consume(&bootstrap, MOVING, lines.len(), 60_000);
    let mut got: Vec<&str> = consumed.stdout.lines().collect();
    got.sort();
    let mut want = refs.clone();
    want.sort();
    assert_eq!(got, want, "{consumed}");

    // 2. A throttled move of megabytes from 11 to 12 stays in progress: listed, then
    //    cancelled back to 11.
    create(kafka, &bootstrap, SLOW, "11");
    let big: Vec<String> = (0..4000)
        .map(|i| format!("{i:05}{}", "x".repeat(1000)))
        .collect();
    let big_refs: Vec<&str> = big.iter().map(String::as_str).collect();
    produce(kafka, &bootstrap, SLOW, &big_refs).assert_success();
    let slow = plan(&dir, "slow.json", &[(SLOW, 0, &[12])]);
    let executed = reassign(&[
        "--reassignment-json-file",
        &slow,
        "--execute",
        "--throttle",
        "1",
    ]);
    assert!(executed.success(), "{executed}");
    let listed = reassign(&["--list"]);
    assert!(
        listed.success()
            && listed.stdout.contains(&format!(
                "{SLOW}-0: replicas: 12,11. adding: 12. removing: 11."
            )),
        "{listed}"
    );
    let during = describe(kafka, &bootstrap, SLOW);
    assert_eq!(during[&0].replicas, vec![12, 11], "{during:?}");
    let cancelled = reassign(&["--reassignment-json-file", &slow, "--cancel"]);
    assert!(
        cancelled.success()
            && cancelled
                .stdout
                .contains("Successfully cancelled partition reassignment"),
        "{cancelled}"
    );
    let after = describe(kafka, &bootstrap, SLOW);
    assert_eq!(after[&0].replicas, vec![11], "{after:?}");
    let listed = reassign(&["--list"]);
    assert!(
        listed.success() && listed.stdout.contains("No partition reassignments found."),
        "{listed}"
    );

    let log = c.controller.metadata_dir().join("__cluster_metadata-0");
    // Every replica's directory is one its broker reported: with two directories per broker
    // the controller itself only ever writes UNASSIGNED, so AssignReplicasToDirs did this.
    let deadline = Instant::now() + WAIT;
    loop {
        let image = kraftd_image(&log, None);
        for b in BROKERS {
            let dirs = &image["cluster"]["brokers"][b.to_string()]["directories"];
            assert_eq!(dirs.as_array().map(Vec::len), Some(2), "broker {b}: {dirs}");
        }
        let unassigned: Vec<String> = image["topics"]
            .as_object()
            .expect("topics")
            .values()
            .flat_map(|t| {
                let name = t["name"].as_str().unwrap_or("?").to_string();
                t["partitions"]
                    .as_object()
                    .expect("partitions")
                    .iter()
                    .filter(|(_, p)| {
                        p["directories"]
                            .as_array()
                            .is_some_and(|d| d.iter().any(|d| d == UNASSIGNED))
                    })
                    .map(move |(i, _)| format!("{name}-{i}"))
                    .collect::<Vec<_>>()
            })
            .collect();
        if unassigned.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "replicas still UNASSIGNED: {unassigned:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    c.stop();
    let (offset, _, _) = assert_image_equals_javas(&log, None);
    eprintln!("Java's image of kraftd's log equals kraftd's at offset {offset}");
}
