//! `kraftd dump-log` against `kafka-dump-log --cluster-metadata-decoder` (Kafka 4.4.0): Java
//! decodes a segment and a snapshot kraftd wrote holding every metadata record type, field for
//! field; kraftd decodes what a Java controller wrote, printing exactly what Java prints, and
//! re-encodes every batch to the same bytes.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use kraftd::log::{FileLog, LogConfig, OffsetAndEpoch};
use kraftd::protocol::codec::Uuid;
use kraftd::protocol::messages::voters_record::{Endpoint, KRaftVersionFeature, Voter};
use kraftd::protocol::messages::VotersRecord;
use kraftd::protocol::records::{
    split_batches, BatchBuilder, ControlRecord, MetadataRecordAndVersion, METADATA_RECORD_TYPES,
};
use kraftd::raft::{RaftLog, Records, SnapshotHeader};

use super::{assert_clean_failure, kraftd};
use crate::harness::{JavaController, Kafka, TestDir};

const START_TIMEOUT: Duration = Duration::from_secs(90);

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// One record of every metadata record type at every version, from the golden vectors Kafka
/// 4.4.0 encoded (protocol-tests/vectors/<Schema>/v<N>.bin: a value for every field).
fn every_metadata_record() -> Vec<MetadataRecordAndVersion> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol-tests/vectors");
    let mut out = Vec::new();
    for info in METADATA_RECORD_TYPES {
        for version in info.lowest_version..=info.highest_version {
            let path = root.join(info.schema_name).join(format!("v{version}.bin"));
            let body = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let mut value = vec![1u8];
            for n in [info.id as u32, version as u32] {
                assert!(n < 128, "one-byte varints");
                value.push(n as u8);
            }
            value.extend_from_slice(&body);
            let rec = MetadataRecordAndVersion::decode(&value)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(rec.encode().unwrap(), value, "{}", path.display());
            out.push(rec);
        }
    }
    assert!(out.len() >= METADATA_RECORD_TYPES.len());
    out
}

/// `payload: {...}` JSON of every metadata record in a dump.
fn payloads(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| l.split_once(" payload: "))
        .map(|(_, json)| serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}")))
        .collect()
}

fn expected_payload(rec: &MetadataRecordAndVersion) -> Value {
    serde_json::json!({
        "type": rec.record.kafka_name(), "version": rec.version, "data": rec.to_kafka_json(),
    })
}

/// Java's decoded JSON against what was written, field by field.
fn assert_same_payloads(java: &[Value], written: &[MetadataRecordAndVersion]) {
    assert_eq!(java.len(), written.len(), "records decoded by Java");
    for (j, w) in java.iter().zip(written) {
        let e = expected_payload(w);
        for field in ["type", "version"] {
            assert_eq!(j[field], e[field]);
        }
        let (jd, ed) = (
            j["data"].as_object().unwrap(),
            e["data"].as_object().unwrap(),
        );
        let mut keys: Vec<&String> = jd.keys().chain(ed.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            assert_eq!(
                jd.get(k),
                ed.get(k),
                "{} v{} field {k}",
                e["type"],
                e["version"]
            );
        }
    }
}

/// A kraft.version 1 voter set of one, as a snapshot's header batch carries it.
fn one_voter() -> VotersRecord {
    VotersRecord {
        version: 0,
        voters: vec![Voter {
            voter_id: 1,
            voter_directory_id: Uuid::parse("J8aAPcfLQt2bqs1JT_rMgQ").unwrap(),
            endpoints: vec![Endpoint {
                name: "CONTROLLER".into(),
                host: "localhost".into(),
                port: 9093,
                ..Default::default()
            }],
            k_raft_version_feature: KRaftVersionFeature {
                min_supported_version: 0,
                max_supported_version: 1,
                ..Default::default()
            },
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[test]
fn java_decodes_a_segment_and_a_snapshot_kraftd_wrote_with_every_metadata_record_type() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let part = dir.subdir("data/__cluster_metadata-0");
    let records = every_metadata_record();
    let epoch = 3;
    // Small batches, so that the snapshot writer cuts its records into several.
    let config = LogConfig {
        max_batch_size: 2048,
        ..LogConfig::default()
    };
    let mut log = FileLog::open(&part, config).unwrap();
    log.initialize_leader_epoch(epoch).unwrap();
    for chunk in records.chunks(7) {
        let mut b = BatchBuilder::new(log.end_offset()).partition_leader_epoch(epoch);
        let ts = now_ms();
        for rec in chunk {
            b.append_metadata(ts, rec).unwrap();
        }
        log.append_bytes_as_leader(&b.build().unwrap(), epoch)
            .unwrap();
    }
    log.flush().unwrap();
    let end = log.end_offset();
    log.update_high_watermark(end);
    // A snapshot at the end holding the same records, streamed through kraftd's snapshot
    // writer in chunks: header batch (with kraft.version 1 and the voters), data batches of at
    // most the maximum batch size, footer.
    let id = OffsetAndEpoch::new(end, epoch);
    let header = SnapshotHeader {
        id,
        last_contained_log_timestamp: now_ms(),
        kraft_version: 1,
        voters: Some(one_voter()),
    };
    let mut writer = log.create_snapshot(header.clone()).unwrap();
    for chunk in records.chunks(11) {
        let values: Vec<Vec<u8>> = chunk.iter().map(|r| r.encode().unwrap()).collect();
        writer.append(&values).unwrap();
    }
    log.freeze_snapshot(writer).unwrap();
    let segments = log.segment_paths();
    // Read back as Java's reader would: the header batch, then every record in order.
    let reader = log
        .open_snapshot(id)
        .unwrap()
        .expect("the snapshot is retained");
    assert_eq!(reader.header(), &header);
    let batches: Vec<_> = reader.map(Result::unwrap).collect();
    let data_batches = batches.iter().filter(|b| !b.is_control()).count();
    assert!(data_batches > 1, "{data_batches} data batches");
    let read: Vec<Vec<u8>> = batches
        .into_iter()
        .filter_map(|b| match b.records {
            Records::Data(values) => Some(values),
            Records::Control(_) => None,
        })
        .flatten()
        .collect();
    let written: Vec<Vec<u8>> = records.iter().map(|r| r.encode().unwrap()).collect();
    assert_eq!(read, written);
    drop(log);
    let snapshot = part.join(format!("{end:020}-{epoch:010}.checkpoint"));
    assert!(snapshot.exists(), "{}", snapshot.display());

    for file in segments.iter().chain([&snapshot]) {
        let java = kafka.dump_log(&[file.as_path()], &["--cluster-metadata-decoder"]);
        java.assert_success();
        assert!(
            !java.stdout.contains("isvalid: false") && !java.stderr.contains("Exception"),
            "{java}"
        );
        assert_same_payloads(&payloads(&java.stdout), &records);
        // kraftd prints the very same text.
        let ours = kraftd(&["dump-log", file.to_str().unwrap()]);
        ours.assert_success();
        assert_eq!(ours.stdout, java.stdout, "{}", file.display());
        if file == &snapshot {
            for control in [
                "SnapshotHeader",
                "KRaftVersion",
                "KRaftVoters",
                "SnapshotFooter",
            ] {
                assert!(java.stdout.contains(control), "{control}: {java}");
            }
        }
    }
    // Every record type is there.
    let types: std::collections::BTreeSet<i16> =
        records.iter().map(|r| r.record.record_type()).collect();
    assert_eq!(types.len(), METADATA_RECORD_TYPES.len());

    // A torn tail: reported with its position, non-zero exit, nothing printed twice.
    let torn = dir.join("torn/00000000000000000000.log");
    fs::create_dir_all(torn.parent().unwrap()).unwrap();
    let whole = fs::read(&segments[0]).unwrap();
    let cut = split_batches(&whole).batches[1].position() + 30;
    fs::write(&torn, &whole[..cut]).unwrap();
    let out = kraftd(&["dump-log", torn.to_str().unwrap()]);
    assert_clean_failure(&out, "torn tail");
    let json = kraftd(&["dump-log", "--json", torn.to_str().unwrap()]);
    json.assert_failure();
    let lines: Vec<Value> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.last().unwrap()["position"],
        split_batches(&whole).batches[1].position()
    );
}

/// Waits until Java has written two snapshots other than the bootstrap checkpoint. The second
/// one's offset is past the first's, so the log then holds records written after the first
/// snapshot too: on an idle controller, its periodic NoOp records.
fn wait_for_two_snapshots(part: &Path, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        let found = fs::read_dir(part)
            .unwrap()
            .flatten()
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.ends_with(".checkpoint") && !n.starts_with("00000000000000000000-")
            })
            .count();
        if found >= 2 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "fewer than two snapshots in {}",
            part.display()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn kraftd_decodes_and_re_encodes_what_a_java_controller_wrote() {
    let kafka = Kafka::get();
    let dir = TestDir::new();
    let mut java = JavaController::builder(1)
        .prop("metadata.log.max.record.bytes.between.snapshots", "1")
        .prop("metadata.log.max.snapshot.interval.ms", "500")
        .start(&dir);
    java.wait_until_leader(START_TIMEOUT);
    let part = java.metadata_log_dir();
    wait_for_two_snapshots(&part, START_TIMEOUT);
    java.stop(Duration::from_secs(60));
    let mut files: Vec<PathBuf> = fs::read_dir(&part)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "log" || e == "checkpoint")
        })
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    let mut decoded = String::new();
    for file in &files {
        let java_out = kafka.dump_log(&[file.as_path()], &["--cluster-metadata-decoder"]);
        java_out.assert_success();
        let ours = kraftd(&["dump-log", file.to_str().unwrap()]);
        ours.assert_success();
        assert!(
            !ours.stdout.contains("isvalid: false") && !ours.stdout.contains("error:"),
            "{ours}"
        );
        assert_eq!(ours.stdout, java_out.stdout, "{}", file.display());
        decoded.push_str(&ours.stdout);
        // Re-encoding each batch from its decoded parts gives the same bytes.
        let bytes = fs::read(file).unwrap();
        let split = split_batches(&bytes);
        assert!(split.end.is_clean(), "{}: {:?}", file.display(), split.end);
        for batch in &split.batches {
            let mut b = BatchBuilder::new(batch.base_offset())
                .partition_leader_epoch(batch.partition_leader_epoch())
                .control(batch.is_control())
                .producer(
                    batch.producer_id(),
                    batch.producer_epoch(),
                    batch.base_sequence(),
                )
                .transactional(batch.is_transactional());
            for r in batch.records().unwrap().iter() {
                let r = r.unwrap();
                if batch.is_control() {
                    let rec = ControlRecord::decode(r.key, r.value).unwrap();
                    assert_eq!(rec.value_bytes().unwrap(), r.value.unwrap());
                } else {
                    let rec = MetadataRecordAndVersion::decode(r.value.unwrap()).unwrap();
                    assert_eq!(rec.encode().unwrap(), r.value.unwrap());
                }
                b.append_raw(r.offset, r.timestamp, r.key, r.value, &r.headers)
                    .unwrap();
            }
            assert_eq!(
                b.build().unwrap(),
                batch.bytes(),
                "{} at {}",
                file.display(),
                batch.position()
            );
        }
    }
    // The start-of-epoch, bootstrap and NoOp records, and a snapshot, were all seen.
    for needle in [
        "LeaderChange",
        "KRaftVoters",
        "BEGIN_TRANSACTION_RECORD",
        "FEATURE_LEVEL_RECORD",
        "END_TRANSACTION_RECORD",
        "NO_OP_RECORD",
        "SnapshotFooter",
    ] {
        assert!(decoded.contains(needle), "{needle} not in:\n{decoded}");
    }
    // The whole directory at once, as JSON lines.
    let json = kraftd(&[
        "dump-log",
        "--json",
        part.parent().unwrap().to_str().unwrap(),
    ]);
    json.assert_success();
    for l in json.stdout.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert!(v.get("error").is_none(), "{l}");
    }
}
