//! Helpers of protocol-tests/records.rs: loading the vectors, comparing with Kafka's reading,
//! rebuilding a batch with `BatchBuilder`.

use std::fs;
use std::path::{Path, PathBuf};

use kraftd::protocol::records::{
    crc32c, BatchView, ControlRecord, MetadataRecordAndVersion, Record,
};
use serde_json::{json, Value};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol-tests/records/vectors")
}

pub fn manifest() -> Value {
    let path = dir().join("manifest.json");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run protocol-tests/records/capture/capture.sh",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap()
}

pub struct Vector {
    pub name: String,
    pub bytes: Vec<u8>,
    pub doc: Value,
}

pub fn vectors() -> Vec<Vector> {
    let m = manifest();
    let list = m["vectors"].as_array().expect("vectors");
    assert!(list.len() >= 30, "only {} vectors", list.len());
    list.iter()
        .map(|v| {
            let name = v["name"].as_str().unwrap().to_string();
            let bytes = fs::read(dir().join(format!("{name}.bin"))).unwrap();
            let doc: Value = serde_json::from_str(
                &fs::read_to_string(dir().join(format!("{name}.json"))).unwrap(),
            )
            .unwrap();
            Vector { name, bytes, doc }
        })
        .collect()
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Kafka's description of a byte string: hex up to 32 bytes, else size and CRC-32C.
pub fn describe_bytes(b: Option<&[u8]>) -> Value {
    match b {
        None => Value::Null,
        Some(b) if b.len() <= 32 => Value::from(hex(b)),
        Some(b) => json!({"size": b.len(), "crc32c": crc32c(b)}),
    }
}

pub fn fail(failures: &mut Vec<String>, what: String) {
    if failures.len() < 200 {
        failures.push(what);
    }
}

pub fn check_eq(failures: &mut Vec<String>, at: &str, field: &str, ours: Value, kafka: &Value) {
    if &ours != kafka {
        fail(
            failures,
            format!("{at}: {field}: kraftd {ours}, Kafka {kafka}"),
        );
    }
}

pub fn report(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Rebuilds a batch with `BatchBuilder` from its header fields and records.
pub fn rebuild(b: &BatchView<'_>) -> Result<Vec<u8>, String> {
    use kraftd::protocol::records::{BatchBuilder, TimestampType};
    let mut builder = BatchBuilder::new(b.base_offset())
        .partition_leader_epoch(b.partition_leader_epoch())
        .control(b.is_control())
        .transactional(b.is_transactional())
        .producer(b.producer_id(), b.producer_epoch(), b.base_sequence());
    if b.timestamp_type() == TimestampType::LogAppendTime {
        builder = builder.log_append_time(b.max_timestamp());
    }
    if let Some(h) = b.delete_horizon_ms() {
        builder = builder.delete_horizon_ms(h);
    }
    let records = b.records().map_err(|e| e.to_string())?;
    for r in records.iter() {
        let r = r.map_err(|e| e.to_string())?;
        let ts = b.base_timestamp() + r.timestamp_delta;
        builder
            .append_raw(r.offset, ts, r.key, r.value, &r.headers)
            .map_err(|e| e.to_string())?;
    }
    builder.build().map_err(|e| e.to_string())
}

pub fn check_record(
    failures: &mut Vec<String>,
    at: &str,
    batch: &BatchView<'_>,
    r: &Record<'_>,
    k: &Value,
    format: &str,
) {
    check_eq(failures, at, "offset", json!(r.offset), &k["offset"]);
    check_eq(
        failures,
        at,
        "timestamp",
        json!(r.timestamp),
        &k["timestamp"],
    );
    check_eq(
        failures,
        at,
        "sizeInBytes",
        json!(r.size_in_bytes),
        &k["sizeInBytes"],
    );
    check_eq(failures, at, "key", describe_bytes(r.key), &k["key"]);
    check_eq(failures, at, "value", describe_bytes(r.value), &k["value"]);
    let headers: Vec<Value> = r
        .headers
        .iter()
        .map(|h| json!({"key": h.key_str().unwrap_or("<not utf-8>"), "value": h.value.map(hex)}))
        .collect();
    check_eq(failures, at, "headers", Value::from(headers), &k["headers"]);
    if batch.is_control() {
        match ControlRecord::decode(r.key, r.value) {
            Ok(c) => {
                let kc = &k["control"];
                check_eq(
                    failures,
                    at,
                    "control type",
                    json!(c.record_type().id()),
                    &kc["type"],
                );
                check_eq(
                    failures,
                    at,
                    "control name",
                    json!(c.record_type().name()),
                    &kc["typeName"],
                );
                check_eq(failures, at, "control json", c.to_kafka_json(), &kc["json"]);
                let value = c.value_bytes().unwrap();
                if Some(&value[..]) != r.value || Some(&c.key_bytes()[..]) != r.key {
                    fail(
                        failures,
                        format!("{at}: control record does not re-encode identically"),
                    );
                }
            }
            Err(e) => fail(failures, format!("{at}: control record: {e}")),
        }
    } else if format == "metadata" {
        match MetadataRecordAndVersion::decode(r.value.unwrap_or_default()) {
            Ok(m) => {
                let km = &k["metadata"];
                check_eq(
                    failures,
                    at,
                    "metadata type",
                    json!(m.record.record_type()),
                    &km["type"],
                );
                check_eq(
                    failures,
                    at,
                    "metadata name",
                    json!(m.record.kafka_name()),
                    &km["typeName"],
                );
                check_eq(
                    failures,
                    at,
                    "metadata version",
                    json!(m.version),
                    &km["version"],
                );
                check_eq(
                    failures,
                    at,
                    "metadata json",
                    m.to_kafka_json(),
                    &km["json"],
                );
                if Some(&m.encode().unwrap()[..]) != r.value {
                    fail(
                        failures,
                        format!(
                            "{at}: {} does not re-encode identically",
                            m.record.schema_name()
                        ),
                    );
                }
            }
            Err(e) => fail(failures, format!("{at}: metadata record: {e}")),
        }
    }
}
