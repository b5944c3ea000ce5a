//! A Kafka 4.0 cluster on kraftd: kraftd formatted at `--release-version 4.0-IV3` (Kafka 4.0's
//! latest metadata.version), stock Kafka 4.0.x brokers (a second Kafka release next to the
//! 4.4 one, see `Kafka::kafka_4_0`) register, are unfenced, create a topic with replication
//! factor 3, produce and consume through it, and one that dies is fenced. The same workload
//! then runs on a Java 4.4 controller formatted at 4.0-IV3: every record kraftd wrote must be at
//! a version Java writes at that metadata.version, and Java's image of kraftd's log must equal
//! kraftd's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use kraftd::protocol::records::{split_batches, MetadataRecordAndVersion};

use crate::harness::dynamic_quorum::Kind;
use crate::harness::image_compare::assert_image_equals_javas;
use crate::harness::quorum_probe::read_log_batches;
use crate::harness::{Kafka, Output, TestDir};
use crate::topics::cluster::TopicCluster;
use crate::topics::workload::produce;

const RELEASE: &str = "4.0-IV3";
const BROKERS: [i32; 3] = [101, 102, 103];
const TOPIC: &str = "orders40";
const TIMEOUT: Duration = Duration::from_secs(60);

/// Record type name -> the versions a log holds records of that type at.
type RecordVersions = BTreeMap<&'static str, BTreeSet<i16>>;

/// The workload on a controller of `kind`; returns the record versions of its log and the
/// stopped controller's `__cluster_metadata-0` directory.
fn run_on(dir: &TestDir, kind: Kind) -> (RecordVersions, std::path::PathBuf) {
    let k40 = Kafka::kafka_4_0();
    let mut c = TopicCluster::controller_only(dir, kind, &[], &["--release-version", RELEASE]);
    c.add_brokers_of(dir, k40, &BROKERS);
    let broker = c.bootstrap_server();
    let create = [
        "--create",
        "--topic",
        TOPIC,
        "--partitions",
        "3",
        "--replication-factor",
        "3",
    ];
    retry(&format!("{kind}: create {TOPIC}"), || {
        k40.topics(&broker, &create)
    });
    let lines = ["alpha", "beta", "gamma", "delta"];
    retry(&format!("{kind}: produce"), || {
        produce(k40, &broker, TOPIC, &lines)
    });
    let consumed = k40.console_consume(&broker, TOPIC, lines.len(), 30_000);
    let mut got: Vec<&str> = consumed.stdout.lines().collect();
    got.sort();
    let mut want = lines.to_vec();
    want.sort();
    assert_eq!(
        got, want,
        "{kind}: consumed through 4.0 brokers:\n{consumed}"
    );
    // A broker that dies is fenced when its session expires.
    let lost = *BROKERS.last().unwrap();
    c.brokers.last_mut().unwrap().kill9();
    let metadata_dir = c.controller.metadata_dir();
    let deadline = Instant::now() + TIMEOUT;
    while !is_fenced(&metadata_dir, lost) {
        assert!(
            Instant::now() < deadline,
            "{kind}: broker {lost} was not fenced within {TIMEOUT:?}"
        );
        thread::sleep(Duration::from_millis(500));
    }
    let features = Kafka::get().finalized_features(&c.controller.endpoint());
    assert_eq!(
        features.get("metadata.version").map(String::as_str),
        Some(RELEASE),
        "{kind}: {features:?}"
    );
    let log = c.controller.metadata_dir().join("__cluster_metadata-0");
    c.stop();
    (record_versions(&log), log)
}

fn retry(what: &str, mut run: impl FnMut() -> Output) {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let out = run();
        if out.success() {
            return;
        }
        assert!(Instant::now() < deadline, "{what} kept failing:\n{out}");
        thread::sleep(Duration::from_millis(500));
    }
}

/// Whether the log in `metadata_dir` fences broker `id` (a `FenceBrokerRecord` or a
/// `BrokerRegistrationChangeRecord` with fenced = 1).
fn is_fenced(metadata_dir: &Path, id: i32) -> bool {
    use kraftd::protocol::records::MetadataRecord;
    records(metadata_dir).iter().any(|r| match &r.record {
        MetadataRecord::FenceBroker(f) => f.id == id,
        MetadataRecord::BrokerRegistrationChange(c) => c.broker_id == id && c.fenced == 1,
        _ => false,
    })
}

/// The metadata records in the log segments of `metadata_dir`.
fn records(metadata_dir: &Path) -> Vec<MetadataRecordAndVersion> {
    let mut out = Vec::new();
    for (_, _, bytes) in read_log_batches(metadata_dir) {
        for batch in split_batches(&bytes).batches {
            if batch.is_control() {
                continue;
            }
            for r in batch.records().expect("a readable batch").iter() {
                let value = r.expect("a readable record").value.expect("a value");
                out.push(MetadataRecordAndVersion::decode(value).expect("a metadata record"));
            }
        }
    }
    out
}

fn record_versions(log: &Path) -> RecordVersions {
    let mut out = RecordVersions::new();
    for record in records(log.parent().unwrap()) {
        out.entry(record.record.kafka_name())
            .or_default()
            .insert(record.version);
    }
    out
}

#[test]
fn kafka_4_0_brokers_run_on_kraftd_at_metadata_version_4_0() {
    let dir = TestDir::new();
    let (kraftd, kraftd_log) = run_on(&dir, Kind::Kraftd);
    let (offset, topics, partitions) = assert_image_equals_javas(&kraftd_log, None);
    eprintln!("Java's image of kraftd's 4.0-IV3 log equals kraftd's at offset {offset} ({topics} topics, {partitions} partitions)");
    let (java, _) = run_on(&dir, Kind::Java);
    eprintln!("record versions at {RELEASE}: kraftd {kraftd:?}\n  java {java:?}");
    let unlike: Vec<String> = kraftd
        .iter()
        .filter(|(name, versions)| java.get(*name) != Some(versions))
        .map(|(name, versions)| format!("{name}: kraftd {versions:?}, java {:?}", java.get(name)))
        .collect();
    assert!(
        unlike.is_empty(),
        "kraftd wrote records at versions Java does not write at {RELEASE}:\n{}",
        unlike.join("\n")
    );
}
