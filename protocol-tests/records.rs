//! Record batches written by real Apache Kafka (how: protocol-tests/records/README.md).
//!
//! Every vector must split into the batches Kafka's reader saw, with the same header fields and
//! records; control and metadata records must decode to the JSON Kafka's converters wrote;
//! uncompressed batches must re-encode byte for byte with `BatchBuilder`; compressed ones (every
//! codec) must decode to the same records; a flipped bit must fail the CRC; a cut anywhere must
//! be reported as a torn tail at the start of the cut batch. Each test collects all its
//! failures before failing.

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its clock, threads and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

#[path = "records/support.rs"]
mod support;

use kraftd::protocol::messages::KAFKA_VERSION;
use kraftd::protocol::records::{
    split_batches, BatchView, ControlRecordType, SplitEnd, METADATA_RECORD_TYPES,
};
use serde_json::{json, Value};
use support::{check_eq, check_record, fail, manifest, rebuild, report, vectors};

#[test]
fn manifest_matches_this_build() {
    let m = manifest();
    assert_eq!(
        m["kafkaVersion"], KAFKA_VERSION,
        "vectors and codecs from different Kafka releases"
    );
    let kafka: Vec<Value> = m["metadataRecordTypes"].as_array().unwrap().clone();
    let ours: Vec<Value> = METADATA_RECORD_TYPES
        .iter()
        .map(|t| {
            json!({"id": t.id, "name": t.kafka_name, "class": t.schema_name,
                   "lowestVersion": t.lowest_version, "highestVersion": t.highest_version})
        })
        .collect();
    assert_eq!(ours, kafka, "MetadataRecordType differs from Kafka's");
    let control: Vec<(i64, String)> = m["controlRecordTypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_i64().unwrap(),
                t["name"].as_str().unwrap().to_string(),
            )
        })
        .filter(|(_, n)| n != "UNKNOWN")
        .collect();
    let ours: Vec<(i64, String)> = ControlRecordType::ALL
        .iter()
        .map(|t| (t.id() as i64, t.name().to_string()))
        .collect();
    assert_eq!(ours, control, "ControlRecordType differs from Kafka's");
}

#[test]
fn every_vector_decodes_as_kafka_read_it() {
    let mut failures = Vec::new();
    let mut codecs = std::collections::BTreeSet::new();
    let mut records_seen = 0;
    for v in vectors() {
        let split = split_batches(&v.bytes);
        if !split.end.is_clean() {
            fail(
                &mut failures,
                format!("{}: does not end cleanly: {:?}", v.name, split.end),
            );
        }
        let kafka = v.doc["batches"].as_array().unwrap();
        if split.batches.len() != kafka.len() {
            fail(
                &mut failures,
                format!(
                    "{}: {} batches, Kafka read {}",
                    v.name,
                    split.batches.len(),
                    kafka.len()
                ),
            );
            continue;
        }
        let format = v.doc["valueFormat"].as_str().unwrap();
        for (i, (b, k)) in split.batches.iter().zip(kafka).enumerate() {
            let at = format!("{} batch {i}", v.name);
            let f = &mut failures;
            if let Err(e) = b.validate() {
                fail(f, format!("{at}: {e}"));
            }
            let compression = b.compression().unwrap();
            codecs.insert(compression.name());
            check_eq(f, &at, "position", json!(b.position()), &k["position"]);
            check_eq(f, &at, "sizeInBytes", json!(b.size()), &k["sizeInBytes"]);
            check_eq(
                f,
                &at,
                "baseOffset",
                json!(b.base_offset()),
                &k["baseOffset"],
            );
            check_eq(
                f,
                &at,
                "lastOffset",
                json!(b.last_offset()),
                &k["lastOffset"],
            );
            check_eq(
                f,
                &at,
                "partitionLeaderEpoch",
                json!(b.partition_leader_epoch()),
                &k["partitionLeaderEpoch"],
            );
            check_eq(f, &at, "magic", json!(b.magic()), &k["magic"]);
            check_eq(f, &at, "crc", json!(b.compute_crc()), &k["crc"]);
            check_eq(
                f,
                &at,
                "compression",
                json!(compression.name()),
                &k["compression"],
            );
            check_eq(
                f,
                &at,
                "timestampType",
                json!(b.timestamp_type().name()),
                &k["timestampType"],
            );
            check_eq(
                f,
                &at,
                "isTransactional",
                json!(b.is_transactional()),
                &k["isTransactional"],
            );
            check_eq(
                f,
                &at,
                "isControlBatch",
                json!(b.is_control()),
                &k["isControlBatch"],
            );
            check_eq(
                f,
                &at,
                "hasDeleteHorizon",
                json!(b.delete_horizon_ms().is_some()),
                &k["hasDeleteHorizon"],
            );
            check_eq(
                f,
                &at,
                "baseTimestamp",
                json!(b.base_timestamp()),
                &k["baseTimestamp"],
            );
            check_eq(
                f,
                &at,
                "maxTimestamp",
                json!(b.max_timestamp()),
                &k["maxTimestamp"],
            );
            check_eq(
                f,
                &at,
                "producerId",
                json!(b.producer_id()),
                &k["producerId"],
            );
            check_eq(
                f,
                &at,
                "producerEpoch",
                json!(b.producer_epoch()),
                &k["producerEpoch"],
            );
            check_eq(
                f,
                &at,
                "baseSequence",
                json!(b.base_sequence()),
                &k["baseSequence"],
            );
            check_eq(
                f,
                &at,
                "countOrNull",
                json!(b.record_count()),
                &k["countOrNull"],
            );
            let records = match b.records() {
                Ok(r) => r,
                Err(e) => {
                    fail(f, format!("{at}: {e}"));
                    continue;
                }
            };
            let kr = k["records"].as_array().unwrap();
            let ours: Vec<_> = records.iter().collect();
            if ours.len() != kr.len() {
                fail(
                    f,
                    format!("{at}: {} records, Kafka read {}", ours.len(), kr.len()),
                );
            }
            for (j, (r, kj)) in ours.iter().zip(kr).enumerate() {
                let at = format!("{at} record {j}");
                match r {
                    Ok(r) => check_record(f, &at, b, r, kj, format),
                    Err(e) => fail(f, format!("{at}: {e}")),
                }
                records_seen += 1;
            }
        }
    }
    assert_eq!(codecs.len(), 5, "vectors cover every codec: {codecs:?}");
    assert!(records_seen > 1000, "{records_seen} records");
    report(failures);
}

#[test]
fn uncompressed_batches_re_encode_byte_for_byte() {
    let mut failures = Vec::new();
    let mut count = 0;
    for v in vectors() {
        for (i, b) in split_batches(&v.bytes).batches.iter().enumerate() {
            if b.compression().map(|c| c.name()) != Ok("none") {
                continue;
            }
            count += 1;
            match rebuild(b) {
                Ok(bytes) if bytes == b.bytes() => {}
                Ok(bytes) => {
                    let first = bytes.iter().zip(b.bytes()).position(|(x, y)| x != y);
                    fail(&mut failures, format!(
                        "{} batch {i}: rebuilt {} bytes (Kafka {}), first difference at byte {first:?}",
                        v.name, bytes.len(), b.size()
                    ));
                }
                Err(e) => fail(&mut failures, format!("{} batch {i}: {e}", v.name)),
            }
        }
    }
    assert!(count >= 40, "only {count} uncompressed batches");
    report(failures);
}

#[test]
fn compressed_batches_decode_to_the_same_records_as_uncompressed_ones() {
    let vs = vectors();
    let find = |n: &str| vs.iter().find(|v| v.name == n).unwrap();
    let plain = find("data-keys-headers");
    let plain_batch = split_batches(&plain.bytes).batches[0];
    let plain_records = plain_batch.records().unwrap();
    let expected: Vec<_> = plain_records.iter().map(Result::unwrap).collect();
    for codec in ["gzip", "snappy", "lz4", "zstd"] {
        let v = find(&format!("compressed-{codec}-small"));
        let b = split_batches(&v.bytes).batches[0];
        assert_eq!(b.compression().unwrap().name(), codec);
        let records = b.records().unwrap();
        assert!(records.is_decompressed());
        assert_eq!(records.payload(), plain_batch.records_bytes(), "{codec}");
        let got: Vec<_> = records.iter().map(Result::unwrap).collect();
        assert_eq!(got, expected, "{codec}");
        // And rebuilt uncompressed, it is the uncompressed batch Kafka wrote.
        assert_eq!(rebuild(&b).unwrap(), plain.bytes, "{codec}");
    }
}

#[test]
fn crc_validation_catches_a_flipped_bit() {
    let mut failures = Vec::new();
    for v in vectors() {
        for b in split_batches(&v.bytes).batches {
            let bytes = b.bytes().to_vec();
            let step = (bytes.len() / 300).max(1);
            for i in (17..bytes.len()).step_by(step) {
                for bit in [0x01u8, 0x80] {
                    let mut m = bytes.clone();
                    m[i] ^= bit;
                    let view = BatchView::parse(&m).unwrap();
                    if view.validate().is_ok() {
                        fail(
                            &mut failures,
                            format!(
                                "{} batch at {}: flip {bit:#x} at byte {i} not caught",
                                v.name,
                                b.position()
                            ),
                        );
                    }
                }
            }
            // The partition leader epoch is outside the CRC, as in Kafka.
            let mut m = bytes.clone();
            m[12] ^= 0x40;
            if BatchView::parse(&m).unwrap().validate().is_err() {
                fail(
                    &mut failures,
                    format!("{}: the epoch must not be covered by the CRC", v.name),
                );
            }
        }
    }
    report(failures);
}

#[test]
fn torn_tails_are_detected_where_the_cut_batch_starts() {
    let mut failures = Vec::new();
    for v in vectors().into_iter().filter(|v| v.bytes.len() <= 16 * 1024) {
        let starts: Vec<usize> = split_batches(&v.bytes)
            .batches
            .iter()
            .map(BatchView::position)
            .collect();
        for cut in 0..v.bytes.len() {
            let s = split_batches(&v.bytes[..cut]);
            let complete = starts.iter().filter(|&&p| p < cut).count();
            let start = starts
                .iter()
                .copied()
                .filter(|&p| p <= cut)
                .max()
                .unwrap_or(0);
            let ok = match &s.end {
                SplitEnd::Clean => starts.contains(&cut) && s.batches.len() == complete,
                SplitEnd::Torn {
                    position,
                    available,
                    ..
                } => {
                    *position == start
                        && *available == cut - start
                        && s.batches.len() == complete - 1
                }
                SplitEnd::Corrupt { .. } => false,
            };
            if !ok {
                fail(
                    &mut failures,
                    format!(
                        "{} cut at {cut}: {} batches, {:?}",
                        v.name,
                        s.batches.len(),
                        s.end
                    ),
                );
            }
        }
    }
    report(failures);
}

#[test]
fn mutated_vectors_never_panic() {
    for v in vectors().into_iter().filter(|v| v.bytes.len() <= 4096) {
        let mut input = vec![0u8];
        input.extend_from_slice(&v.bytes);
        let step = (input.len() / 200).max(1);
        for i in (1..input.len()).step_by(step) {
            let mut m = input.clone();
            m[i] ^= 0x5a;
            kraftd::fuzzing::record_batches(&m);
        }
        kraftd::fuzzing::record_batches(&input);
    }
}
