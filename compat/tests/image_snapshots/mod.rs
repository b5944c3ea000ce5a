//! Snapshots are images, both ways: a Java 4.4 controller and broker, driven by Kafka's admin
//! client, leave a metadata log with Java's snapshots in it.
//!
//! - kraftd loads Java's snapshot, and its image equals the Java dumper's;
//! - kraftd writes a snapshot of the log at the same offset: it gets Java's file name, holds
//!   the same record types at the same versions, and Java's dumper reads it as the same image,
//!   alone and followed by the rest of the log;
//! - after 10,000 NoOps and 1,000 changes of one config key, kraftd's snapshot holds one record
//!   for that key, as Java's does, at about Java's size.

mod from_kraftd;
mod java;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kraftd::log::snapshot::parse_file_name;
use kraftd::protocol::records::{MetadataRecord, MetadataRecordAndVersion};
use kraftd::raft::convert::records::decode_batches;
use kraftd::raft::log::{ControlRecord, Records};
use serde_json::Value;

use crate::harness::{
    dump_java_image, dump_java_image_from_snapshot, dump_java_snapshot, JavaBroker, JavaController,
    KraftdProcess, Quorum, TestDir, KRAFTD_COMMAND_TIMEOUT,
};

const START_TIMEOUT: Duration = Duration::from_secs(90);
const STOP_TIMEOUT: Duration = Duration::from_secs(60);
const AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
const TOPIC: &str = "imaged";

/// A Java controller (1) with StandardAuthorizer and a broker (2), both started.
fn java_cluster(dir: &TestDir, controller_props: &[(&str, &str)]) -> (JavaController, JavaBroker) {
    let mut builder = JavaController::builder(1)
        .prop("authorizer.class.name", AUTHORIZER)
        .prop("super.users", "User:ANONYMOUS");
    for (k, v) in controller_props {
        builder = builder.prop(k, v);
    }
    let mut controller = builder.start(dir);
    let mut broker =
        JavaBroker::builder(2, Quorum::Bootstrap(vec![controller.controller_endpoint()]))
            .cluster_id(controller.cluster_id())
            .prop("authorizer.class.name", AUTHORIZER)
            .prop("super.users", "User:ANONYMOUS")
            .start(dir);
    controller.wait_until_leader(START_TIMEOUT);
    broker.wait_until_started(START_TIMEOUT);
    (controller, broker)
}

fn admin(dir: &TestDir, args: &[&str]) {
    let out = java::run("AdminWorkload", args, &dir.subdir("scratch"));
    assert!(out.success(), "AdminWorkload {args:?} failed:\n{out}");
}

/// The frozen snapshots of a partition directory, (end offset, path), oldest first; the
/// bootstrap checkpoint 0-0 is not a snapshot of the log.
fn snapshots(log: &Path) -> Vec<(i64, PathBuf)> {
    let mut out: Vec<(i64, PathBuf)> = fs::read_dir(log)
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name()?.to_str()?.to_string();
            match parse_file_name(&name) {
                Some((id, kraftd::log::snapshot::SnapshotFileKind::Frozen)) if id.offset > 0 => {
                    Some((id.offset, path))
                }
                _ => None,
            }
        })
        .collect();
    out.sort();
    out
}

/// Polls until the controller has written a snapshot ending after `offset`.
fn wait_for_snapshot_after(log: &Path, offset: i64, timeout: Duration) -> (i64, PathBuf) {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(s) = snapshots(log)
            .into_iter()
            .rev()
            .find(|(end, _)| *end > offset)
        {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "no snapshot after offset {offset} in {} within {timeout:?}: {:?}",
            log.display(),
            snapshots(log)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A copy of the log's segments without its snapshots, so that replay starts at offset 0.
fn segments_only(dir: &TestDir, log: &Path, name: &str) -> PathBuf {
    let out = dir.subdir(name);
    for e in fs::read_dir(log).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "log") {
            fs::copy(&path, out.join(path.file_name().unwrap())).unwrap();
        }
    }
    out
}

fn kraftd(args: &[&str]) -> String {
    let out = KraftdProcess::run(args, &[], KRAFTD_COMMAND_TIMEOUT * 4);
    assert!(out.success(), "kraftd {args:?} failed:\n{out}");
    out.stdout
}

fn kraftd_image(args: &[&str]) -> Value {
    let mut all = vec!["metadata-state"];
    all.extend(args);
    all.push("--json");
    let stdout = kraftd(&all);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// `kraftd metadata-state LOG --at AT --write-snapshot OUT`: the file written.
fn kraftd_snapshot(log: &Path, at: i64, out: &Path) -> PathBuf {
    let at = at.to_string();
    kraftd(&[
        "metadata-state",
        path(log),
        "--at",
        &at,
        "--write-snapshot",
        path(out),
    ]);
    let written = snapshots(out);
    assert_eq!(written.len(), 1, "{written:?}");
    written[0].1.clone()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The metadata records of a snapshot file.
fn records(snapshot: &Path) -> Vec<MetadataRecordAndVersion> {
    let bytes = fs::read(snapshot).unwrap();
    let mut out = Vec::new();
    for b in decode_batches(&bytes).unwrap() {
        if let Records::Data(values) = b.records {
            out.extend(
                values
                    .iter()
                    .map(|v| MetadataRecordAndVersion::decode(v).unwrap()),
            );
        }
    }
    out
}

/// The raft control records of a snapshot file (header, kraft.version, voters, footer).
fn control_records(file: &Path) -> Vec<ControlRecord> {
    let bytes = fs::read(file).unwrap();
    decode_batches(&bytes)
        .unwrap()
        .into_iter()
        .filter_map(|b| match b.records {
            Records::Control(records) => Some(records),
            Records::Data(_) => None,
        })
        .flatten()
        .collect()
}

/// How many records of each type and version.
fn census(records: &[MetadataRecordAndVersion]) -> BTreeMap<(&'static str, i16), usize> {
    let mut out = BTreeMap::new();
    for r in records {
        *out.entry((r.record.schema_name(), r.version)).or_default() += 1;
    }
    out
}

fn stop(controller: &mut JavaController, broker: &mut JavaBroker) {
    broker.stop(STOP_TIMEOUT);
    controller.stop(STOP_TIMEOUT);
}

#[test]
fn snapshots_are_images_both_ways_between_kraftd_and_java() {
    let dir = TestDir::new();
    let (mut controller, mut broker) = java_cluster(
        &dir,
        &[
            ("metadata.log.max.record.bytes.between.snapshots", "2048"),
            ("metadata.max.idle.interval.ms", "50"),
        ],
    );
    let bootstrap = broker.bootstrap_server();
    admin(&dir, &["everything", &bootstrap, TOPIC, "3"]);
    let log = controller.metadata_log_dir();
    let after_workload = kraftd_image(&[path(&segments_only(&dir, &log, "at-workload"))]);
    let workload_end = after_workload["offset"].as_i64().unwrap();
    let (end, java_snapshot) = wait_for_snapshot_after(&log, workload_end, START_TIMEOUT);
    stop(&mut controller, &mut broker);

    // What kraftd replays from the log alone at the snapshot's offset is the reference image,
    // and it holds what the workload made (so the comparisons below are not of empty images).
    let history = segments_only(&dir, &log, "log-only");
    let at = (end - 1).to_string();
    let reference = kraftd_image(&[path(&history), "--at", &at]);
    assert_eq!(reference["offset"], end - 1, "{reference}");
    for part in ["topics", "configs", "clientQuotas", "scram", "acls"] {
        assert_ne!(
            reference[part],
            serde_json::json!({}),
            "{part} in {reference}"
        );
    }
    assert!(
        reference["producerIds"]["nextProducerId"].as_i64().unwrap() > 0,
        "{reference}"
    );

    // Java's snapshot, loaded by kraftd (alone in a directory) and by Java.
    let alone = dir.subdir("java-snapshot");
    fs::copy(
        &java_snapshot,
        alone.join(java_snapshot.file_name().unwrap()),
    )
    .unwrap();
    assert_eq!(kraftd_image(&[path(&alone)]), reference);
    assert_eq!(dump_java_snapshot(&java_snapshot), reference);

    // kraftd's snapshot of the log at that offset: Java's name, Java's record types and
    // versions, and Java's image of it is the reference.
    let ours = kraftd_snapshot(&history, end - 1, &dir.subdir("kraftd-snapshot"));
    assert_eq!(ours.file_name(), java_snapshot.file_name());
    let (our_control, java_control) = (control_records(&ours), control_records(&java_snapshot));
    assert!(
        java_control
            .iter()
            .any(|r| matches!(r, ControlRecord::Voters(_))),
        "a standalone quorum's snapshot holds its voters: {java_control:?}"
    );
    assert_eq!(our_control, java_control);
    assert_eq!(census(&records(&ours)), census(&records(&java_snapshot)));
    assert_eq!(dump_java_snapshot(&ours), reference);

    // Followed by the rest of the log, in Java and in kraftd, it gives the image of the whole log.
    let whole = dump_java_image(&history, None);
    assert!(whole["offset"].as_i64().unwrap() > end - 1, "{whole}");
    assert_eq!(dump_java_image_from_snapshot(&history, &ours, None), whole);
    let continued = dir.subdir("kraftd-snapshot-and-log");
    fs::copy(&ours, continued.join(ours.file_name().unwrap())).unwrap();
    for e in fs::read_dir(&history).unwrap() {
        let p = e.unwrap().path();
        fs::copy(&p, continued.join(p.file_name().unwrap())).unwrap();
    }
    assert_eq!(kraftd_image(&[path(&continued)]), whole);
    assert_eq!(kraftd_image(&[path(&log)]), whole);
}

const NOOPS: usize = 10_000;
const CHANGES: usize = 1_000;
const KEY: &str = "retention.ms";

/// The number of NoOps in the log, from `metadata-state`'s summary.
fn noops(log: &Path) -> usize {
    let report = kraftd(&["metadata-state", path(log)]);
    report
        .lines()
        .find_map(|l| l.trim().strip_prefix("NO_OP_RECORD "))
        .map_or(0, |n| n.parse().unwrap())
}

fn config_records_for_key(records: &[MetadataRecordAndVersion]) -> usize {
    records
        .iter()
        .filter(|r| matches!(&r.record, MetadataRecord::Config(c) if c.resource_name == TOPIC && c.name == KEY))
        .count()
}

fn size(p: &Path) -> u64 {
    fs::metadata(p).unwrap().len()
}

#[test]
fn a_snapshot_holds_the_state_not_the_history() {
    let dir = TestDir::new();
    let (mut controller, mut broker) = java_cluster(
        &dir,
        &[
            ("metadata.log.max.record.bytes.between.snapshots", "65536"),
            ("metadata.max.idle.interval.ms", "1"),
        ],
    );
    let bootstrap = broker.bootstrap_server();
    admin(&dir, &["everything", &bootstrap, TOPIC, "3"]);
    admin(
        &dir,
        &["churn", &bootstrap, TOPIC, KEY, &CHANGES.to_string()],
    );
    let log = controller.metadata_log_dir();
    let deadline = Instant::now() + Duration::from_secs(300);
    while noops(&segments_only(&dir, &log, "noops")) < NOOPS {
        assert!(
            Instant::now() < deadline,
            "the controller wrote fewer than {NOOPS} NoOps in 5 minutes"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    let history = segments_only(&dir, &log, "noops");
    let churned = kraftd_image(&[path(&history)])["offset"].as_i64().unwrap();
    let (end, java_snapshot) = wait_for_snapshot_after(&log, churned, START_TIMEOUT);
    stop(&mut controller, &mut broker);
    let history = segments_only(&dir, &log, "log-only");

    let ours = kraftd_snapshot(&history, end - 1, &dir.subdir("kraftd-snapshot"));
    let (kraftd_records, java_records) = (records(&ours), records(&java_snapshot));
    assert_eq!(config_records_for_key(&kraftd_records), 1);
    assert_eq!(config_records_for_key(&java_records), 1);
    assert_eq!(census(&kraftd_records), census(&java_records));
    assert_eq!(
        dump_java_snapshot(&ours),
        dump_java_snapshot(&java_snapshot)
    );

    let segments: Vec<PathBuf> = fs::read_dir(&history)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let logged: Vec<MetadataRecordAndVersion> = segments.iter().flat_map(|s| records(s)).collect();
    assert_eq!(
        config_records_for_key(&logged),
        CHANGES + 1,
        "the topic's creation and each change"
    );
    let log_bytes: u64 = segments.iter().map(|s| size(s)).sum();
    let (kraftd_bytes, java_bytes) = (size(&ours), size(&java_snapshot));
    println!(
        "state, not history: the log holds {} NoOps and {} records of {KEY} in {log_bytes} bytes; \
         Java's snapshot {} (through offset {}) is {java_bytes} bytes ({} records), kraftd's {kraftd_bytes} bytes ({} records)",
        logged.iter().filter(|r| matches!(r.record, MetadataRecord::NoOp(_))).count(),
        CHANGES + 1,
        java_snapshot.file_name().unwrap().to_string_lossy(),
        end - 1,
        java_records.len(),
        kraftd_records.len(),
    );
    // The same records, so within a few bytes of Java's: batch framing and endpoint order.
    assert!(
        kraftd_bytes.abs_diff(java_bytes) * 20 < java_bytes,
        "{kraftd_bytes} vs {java_bytes}"
    );
    assert!(
        kraftd_bytes * 20 < log_bytes,
        "{kraftd_bytes} vs the log's {log_bytes}"
    );
}
