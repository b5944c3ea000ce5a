//! The dumper on metadata logs written record by record (with kraftd's batch builder), to pin
//! what Kafka's loader publishes where a Java cluster rarely goes: metadata transactions that
//! span batches, an aborted transaction, control batches, a v0 PartitionRecord, config keys
//! the image does not hold, the bootstrap checkpoint, and a record Kafka's loader refuses.

use std::fs;
use std::path::Path;

use kraftd::protocol::codec::Uuid;
use kraftd::protocol::messages::{
    AbortTransactionRecord, BeginTransactionRecord, ConfigRecord, EndTransactionRecord,
    FeatureLevelRecord, LeaderChangeMessage, PartitionChangeRecord, PartitionRecord,
    SnapshotFooterRecord, SnapshotHeaderRecord, TopicRecord,
};
use kraftd::protocol::records::{
    BatchBuilder, ControlRecord, MetadataRecord, MetadataRecordAndVersion,
};
use serde_json::{json, Value};

use crate::harness::{dump_java_image, run_image_dumper, TestDir};

const EPOCH: i32 = 1;
const TIMESTAMP: i64 = 1_700_000_000_000;
const METADATA_VERSION_4_4_IV2: i16 = 33;
/// `DirectoryId.MIGRATING`, the zero uuid: what Java fills in for a PartitionRecord v0.
const MIGRATING: &str = "AAAAAAAAAAAAAAAAAAAAAA";
const TOPIC: u8 = 2;
const BROKER_LOGGER: u8 = 8;

/// Batches appended one after another from offset 0, as one segment's bytes.
struct SegmentWriter {
    bytes: Vec<u8>,
    next_offset: i64,
}

impl SegmentWriter {
    fn new() -> SegmentWriter {
        SegmentWriter {
            bytes: Vec::new(),
            next_offset: 0,
        }
    }

    /// A data batch of `records` (each at version 0); returns its last offset.
    fn data(&mut self, records: Vec<MetadataRecord>) -> i64 {
        let mut batch = BatchBuilder::new(self.next_offset).partition_leader_epoch(EPOCH);
        for record in records {
            let record = MetadataRecordAndVersion::new(record, 0);
            batch.append_metadata(TIMESTAMP, &record).unwrap();
        }
        self.finish(batch)
    }

    fn control(&mut self, record: ControlRecord) -> i64 {
        let mut batch = BatchBuilder::new_control(self.next_offset).partition_leader_epoch(EPOCH);
        batch.append_control(TIMESTAMP, &record).unwrap();
        self.finish(batch)
    }

    fn finish(&mut self, batch: BatchBuilder) -> i64 {
        self.next_offset = batch.next_offset();
        batch.write_to(&mut self.bytes).unwrap();
        self.next_offset - 1
    }

    fn write(&self, log_dir: &Path) {
        fs::write(log_dir.join("00000000000000000000.log"), &self.bytes).unwrap();
    }
}

fn leader_change() -> ControlRecord {
    ControlRecord::LeaderChange(LeaderChangeMessage {
        leader_id: 1,
        ..Default::default()
    })
}

fn topic(name: &str, id: Uuid) -> MetadataRecord {
    TopicRecord {
        name: name.to_string(),
        topic_id: id,
        ..Default::default()
    }
    .into()
}

fn config(resource_type: u8, resource: &str, key: &str, value: &str) -> MetadataRecord {
    ConfigRecord {
        resource_type: resource_type as i8,
        resource_name: resource.to_string(),
        name: key.to_string(),
        value: Some(value.to_string()),
        ..Default::default()
    }
    .into()
}

fn begin() -> MetadataRecord {
    BeginTransactionRecord::default().into()
}

/// The bootstrap checkpoint `kafka-storage format` writes, here with a topic in it.
fn write_bootstrap_checkpoint(log_dir: &Path, topic_id: Uuid) {
    let mut out = Vec::new();
    let mut header = BatchBuilder::new_control(0).partition_leader_epoch(0);
    let header_record = SnapshotHeaderRecord {
        last_contained_log_timestamp: TIMESTAMP,
        ..Default::default()
    };
    header
        .append_control(TIMESTAMP, &ControlRecord::SnapshotHeader(header_record))
        .unwrap();
    header.write_to(&mut out).unwrap();
    let mut data = BatchBuilder::new(header.next_offset()).partition_leader_epoch(0);
    let record = MetadataRecordAndVersion::new(topic("bootstrap-only", topic_id), 0);
    data.append_metadata(TIMESTAMP, &record).unwrap();
    data.write_to(&mut out).unwrap();
    let mut footer = BatchBuilder::new_control(data.next_offset()).partition_leader_epoch(0);
    let footer_record = ControlRecord::SnapshotFooter(SnapshotFooterRecord::default());
    footer.append_control(TIMESTAMP, &footer_record).unwrap();
    footer.write_to(&mut out).unwrap();
    let name = "00000000000000000000-0000000000.checkpoint";
    fs::write(log_dir.join(name), out).unwrap();
}

fn topic_names(image: &Value) -> Vec<String> {
    let topics = image["topics"].as_object().expect("topics");
    topics
        .values()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn java_image_dumper_publishes_metadata_transactions_as_kafkas_loader_does() {
    let dir = TestDir::new();
    let log_dir = dir.subdir("__cluster_metadata-0");
    let (committed_id, aborted_id) = (Uuid([1; 16]), Uuid([2; 16]));
    write_bootstrap_checkpoint(&log_dir, Uuid([3; 16]));

    let mut log = SegmentWriter::new();
    let leader_change_at = log.control(leader_change());
    let features_at = log.data(vec![FeatureLevelRecord {
        name: "metadata.version".into(),
        feature_level: METADATA_VERSION_4_4_IV2,
        ..Default::default()
    }
    .into()]);
    // A transaction over three batches: Begin and TopicRecord, PartitionRecord, End.
    let first_begin_batch = log.data(vec![begin(), topic("committed", committed_id)]);
    let partition_at = log.data(vec![PartitionRecord {
        partition_id: 0,
        topic_id: committed_id,
        replicas: vec![1, 2],
        isr: vec![1, 2],
        leader: 1,
        leader_epoch: 0,
        partition_epoch: 0,
        ..Default::default()
    }
    .into()]);
    let end_at = log.data(vec![EndTransactionRecord::default().into()]);
    // A transaction that is aborted.
    let second_begin_batch = log.data(vec![begin(), topic("aborted", aborted_id)]);
    let abort_at = log.data(vec![AbortTransactionRecord::default().into()]);
    // One supported topic config, one key LogConfig does not know, one BROKER_LOGGER config.
    let configs_at = log.data(vec![
        config(TOPIC, "committed", "retention.ms", "1000"),
        config(TOPIC, "committed", "not.a.topic.config", "x"),
        config(BROKER_LOGGER, "1", "kafka.server", "DEBUG"),
    ]);
    let last = log.control(leader_change());
    log.write(&log_dir);

    let at = |offset: i64| dump_java_image(&log_dir, Some(offset));
    let empty = at(-1);
    assert_eq!(
        empty["offset"], -1,
        "the bootstrap checkpoint is not loaded: {empty}"
    );
    assert_eq!(empty["topics"], json!({}), "{empty}");

    // A control batch moves the offset and changes nothing else.
    let after_control = at(leader_change_at);
    assert_eq!(after_control["offset"], leader_change_at);
    assert_eq!(after_control["features"], json!({}));

    let features = at(features_at);
    assert_eq!(features["offset"], features_at);
    assert_eq!(
        features["features"],
        json!({"metadata.version": METADATA_VERSION_4_4_IV2})
    );

    // Inside the open transaction the image stays the one before its Begin record.
    for offset in [first_begin_batch, partition_at, end_at - 1] {
        let image = at(offset);
        assert_eq!(image["offset"], features_at, "at {offset}: {image}");
        assert_eq!(image["topics"], json!({}), "at {offset}: {image}");
    }
    let committed = at(end_at);
    assert_eq!(committed["offset"], end_at, "{committed}");
    assert_eq!(topic_names(&committed), ["committed"], "{committed}");
    let partition = &committed["topics"][committed_id.to_string()]["partitions"]["0"];
    assert_eq!(
        partition["directories"],
        json!([MIGRATING, MIGRATING]),
        "{partition}"
    );
    assert_eq!(partition["elr"], json!([]), "{partition}");
    assert_eq!(partition["lastKnownElr"], json!([]), "{partition}");
    assert_eq!(partition["leader"], 1, "{partition}");

    // The aborted transaction's topic is never visible; the abort moves the offset.
    let open = at(second_begin_batch);
    assert_eq!(open["offset"], end_at, "{open}");
    assert_eq!(topic_names(&open), ["committed"], "{open}");
    let aborted = at(abort_at);
    assert_eq!(aborted["offset"], abort_at, "{aborted}");
    assert_eq!(topic_names(&aborted), ["committed"], "{aborted}");

    // Only the config key the image supports is kept; BROKER_LOGGER configs are never held.
    let whole = dump_java_image(&log_dir, None);
    assert_eq!(whole["offset"], last, "{whole}");
    assert_eq!(
        whole["configs"],
        json!({"2:committed": {"retention.ms": "1000"}}),
        "{whole}"
    );
    assert_eq!(at(configs_at)["configs"], whole["configs"]);
    assert_eq!(topic_names(&whole), ["committed"], "{whole}");
}

/// Kafka 4.4's MetadataBatchLoader drops an aborted transaction only when it flushes in the
/// aborted state, at the end of a commit; a record after the AbortTransactionRecord in the same
/// batch carries the aborted records into the image. (Java controllers write the abort in a
/// batch of its own, or followed by a new Begin; QuorumController itself reverts them.)
#[test]
fn java_image_dumper_keeps_records_aborted_mid_batch_as_kafkas_loader_does() {
    let dir = TestDir::new();
    let log_dir = dir.subdir("__cluster_metadata-0");
    let mut log = SegmentWriter::new();
    let leaked_id = Uuid([4; 16]);
    log.data(vec![
        begin(),
        topic("aborted-then-leaked", leaked_id),
        AbortTransactionRecord::default().into(),
        config(TOPIC, "aborted-then-leaked", "retention.ms", "1000"),
    ]);
    log.write(&log_dir);
    let image = dump_java_image(&log_dir, None);
    assert_eq!(topic_names(&image), ["aborted-then-leaked"], "{image}");
}

#[test]
fn java_image_dumper_fails_naming_the_offset_of_a_record_kafka_refuses() {
    let dir = TestDir::new();
    let log_dir = dir.subdir("__cluster_metadata-0");
    let mut log = SegmentWriter::new();
    log.control(leader_change());
    // A partition change for a topic that was never created.
    let refused_at = log.data(vec![PartitionChangeRecord {
        topic_id: Uuid([9; 16]),
        leader: 1,
        ..Default::default()
    }
    .into()]);
    log.write(&log_dir);

    let out = run_image_dumper(&[log_dir.to_str().unwrap()]);
    out.assert_failure();
    assert!(
        out.stderr
            .contains(&format!("offsets {refused_at}-{refused_at}")),
        "the error names the batch:\n{out}"
    );
    assert!(out.stderr.contains("refused"), "{out}");
    // Before it, the log is fine.
    assert_eq!(
        dump_java_image(&log_dir, Some(refused_at - 1))["offset"],
        refused_at - 1
    );
}
