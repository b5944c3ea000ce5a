//! `kraftd dump-log <files or dirs> [--json]`: what `kafka-dump-log.sh --cluster-metadata-decoder
//! --files ...` prints for metadata log segments (`.log`) and snapshots (`.checkpoint`), in the
//! same line shapes, plus the reason and position of any torn or corrupt tail.
//!
//! Exit status 1 when any file could not be read completely: a torn or corrupt tail, a batch
//! whose CRC does not match, a record that does not decode, or a file that is not a segment or
//! snapshot. Never panics on any input (every decode is bounds-checked).

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{json, Value};

use crate::log::snapshot::{parse_file_name, SnapshotFileKind};
use crate::protocol::records::{
    split_batches, BatchView, ControlRecord, ControlRecordType, MetadataRecordAndVersion, SplitEnd,
};

#[derive(Debug, Args, PartialEq, Eq)]
pub struct DumpLogArgs {
    /// Segment (.log) or snapshot (.checkpoint) files, or directories holding them
    #[arg(value_name = "FILE_OR_DIR", required = true)]
    pub paths: Vec<PathBuf>,
    /// One JSON object per line (a file line, then one line per batch with its records)
    #[arg(long)]
    pub json: bool,
}

/// Runs the command: prints to stdout, problems to stderr; returns the exit code.
pub fn run(args: &DumpLogArgs) -> i32 {
    let mut ok = true;
    let mut out = std::io::stdout().lock();
    for path in &args.paths {
        let files = match expand(path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("kraftd dump-log: {e}");
                ok = false;
                continue;
            }
        };
        for file in files {
            let mut text = String::new();
            let good = dump_file(&file, args.json, &mut text);
            use std::io::Write as _;
            let _ = out.write_all(text.as_bytes());
            ok &= good;
        }
    }
    if ok {
        0
    } else {
        1
    }
}

/// Why a path given to `dump-log` cannot be dumped. (Problems inside a file are printed with
/// its dump.)
#[derive(Debug, thiserror::Error)]
pub enum DumpLogError {
    #[error("{}: {source}", .path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} holds no log segment (.log) or snapshot (.checkpoint) files", .dir.display())]
    NoLogFiles { dir: PathBuf },
    #[error("{} is not a Kafka log segment (<offset>.log) or snapshot (<offset>-<epoch>.checkpoint)", .path.display())]
    NotALogFile { path: PathBuf },
}

impl DumpLogError {
    fn unreadable(path: &Path) -> impl FnOnce(std::io::Error) -> DumpLogError + '_ {
        move |source| DumpLogError::Unreadable {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A file stands for itself; a directory for its segments and snapshots (and those of its
/// `__cluster_metadata-0`), sorted by name.
fn expand(path: &Path) -> Result<Vec<PathBuf>, DumpLogError> {
    let meta = std::fs::metadata(path).map_err(DumpLogError::unreadable(path))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut dirs = vec![path.to_path_buf()];
    let inner = path.join(crate::log::PARTITION_DIR_NAME);
    if inner.is_dir() {
        dirs.push(inner);
    }
    let mut files = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(&dir).map_err(DumpLogError::unreadable(&dir))?;
        for entry in entries.flatten() {
            let p = entry.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if p.is_file() && (name.ends_with(".log") || name.ends_with(".checkpoint")) {
                files.push(p);
            }
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(DumpLogError::NoLogFiles {
            dir: path.to_path_buf(),
        });
    }
    Ok(files)
}

/// What kind of file a name says it is.
enum Kind {
    Segment(i64),
    Snapshot(i64, i32),
}

fn kind_of(path: &Path) -> Result<Kind, DumpLogError> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if let Some(stem) = name.strip_suffix(".log") {
        if let Ok(base) = stem.parse::<i64>() {
            return Ok(Kind::Segment(base));
        }
        // Any other .log name: read it as a segment starting at 0, as Java would fail to.
        return Ok(Kind::Segment(0));
    }
    if let Some((id, SnapshotFileKind::Frozen)) = parse_file_name(name) {
        return Ok(Kind::Snapshot(id.offset, id.epoch));
    }
    if name.ends_with(".checkpoint") {
        return Ok(Kind::Snapshot(-1, -1));
    }
    Err(DumpLogError::NotALogFile {
        path: path.to_path_buf(),
    })
}

/// Dumps one file into `out`; false when the file was not read cleanly.
pub fn dump_file(path: &Path, json: bool, out: &mut String) -> bool {
    let kind = match kind_of(path) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("kraftd dump-log: {e}");
            return false;
        }
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("kraftd dump-log: cannot read {}: {e}", path.display());
            return false;
        }
    };
    let mut ok = true;
    let file = path.display().to_string();
    if json {
        let mut head = json!({"file": file, "size": bytes.len()});
        match kind {
            Kind::Segment(base) => {
                head["type"] = "segment".into();
                head["baseOffset"] = base.into();
            }
            Kind::Snapshot(o, e) => {
                head["type"] = "snapshot".into();
                head["snapshotEndOffset"] = o.into();
                head["snapshotEpoch"] = e.into();
            }
        }
        line(out, &head);
    } else {
        out.push_str(&format!("Dumping {file}\n"));
        match kind {
            Kind::Segment(base) => out.push_str(&format!("Log starting offset: {base}\n")),
            Kind::Snapshot(o, e) => {
                out.push_str(&format!("Snapshot end offset: {o}, epoch: {e}\n"))
            }
        }
    }
    let split = split_batches(&bytes);
    for batch in &split.batches {
        ok &= dump_batch(batch, json, out);
    }
    let problem = match &split.end {
        SplitEnd::Clean => None,
        SplitEnd::Torn {
            position,
            needed,
            available,
        } => Some((
            *position,
            format!(
                "torn tail: the batch at position {position} needs {needed} bytes but only \
                 {available} remain (a partial write)"
            ),
        )),
        SplitEnd::Corrupt { position, error } => Some((
            *position,
            format!("corrupt data at position {position}: {error}"),
        )),
    };
    if let Some((position, why)) = problem {
        ok = false;
        let invalid = bytes.len() - position;
        if split.batches.is_empty() && position == 0 {
            eprintln!(
                "kraftd dump-log: {file} does not start with a Kafka record batch (v2): {why}"
            );
        } else {
            eprintln!("kraftd dump-log: {file}: {why}");
        }
        if json {
            line(
                out,
                &json!({"file": file, "error": why, "position": position, "invalidBytes": invalid}),
            );
        } else {
            out.push_str(&format!(
                "Found {invalid} invalid bytes at the end of {file} (position {position}): {why}\n"
            ));
        }
    }
    ok
}

fn line(out: &mut String, v: &Value) {
    out.push_str(&v.to_string());
    out.push('\n');
}

fn dump_batch(batch: &BatchView<'_>, json: bool, out: &mut String) -> bool {
    let mut ok = true;
    let crc_ok = batch.verify_crc().is_ok();
    ok &= crc_ok;
    let compression = match batch.compression() {
        Ok(c) => c.name().to_owned(),
        Err(e) => {
            ok = false;
            format!("invalid ({e})")
        }
    };
    let count = batch.record_count();
    let last_seq = if batch.base_sequence() < 0 {
        -1
    } else {
        batch
            .base_sequence()
            .wrapping_add(batch.last_offset_delta())
    };
    let ts_name = match batch.timestamp_type() {
        crate::protocol::records::TimestampType::CreateTime => "CreateTime",
        _ => "LogAppendTime",
    };
    let horizon = batch
        .delete_horizon_ms()
        .map_or("OptionalLong.empty".to_owned(), |h| {
            format!("OptionalLong[{h}]")
        });
    let mut records_json = Vec::new();
    let mut record_lines = String::new();
    match batch.records() {
        Ok(records) => {
            for r in records.iter() {
                let r = match r {
                    Ok(r) => r,
                    Err(e) => {
                        ok = false;
                        let msg = format!("cannot read the records: {e}");
                        record_lines.push_str(&format!("| error: {msg}\n"));
                        records_json.push(json!({ "error": msg }));
                        break;
                    }
                };
                let (text, value, good) = describe_record(batch.is_control(), r.key, r.value);
                ok &= good;
                let key_size = r.key.map_or(-1, |k| k.len() as i64);
                let value_size = r.value.map_or(-1, |v| v.len() as i64);
                let seq = if batch.base_sequence() < 0 {
                    -1
                } else {
                    batch.base_sequence().wrapping_add(r.offset_delta)
                };
                let header_keys: Vec<String> = r
                    .headers
                    .iter()
                    .map(|h| String::from_utf8_lossy(h.key).into_owned())
                    .collect();
                record_lines.push_str(&format!(
                    "| offset: {} {ts_name}: {} keySize: {key_size} valueSize: {value_size} \
                     sequence: {seq} headerKeys: [{}] {text}\n",
                    r.offset,
                    r.timestamp,
                    header_keys.join(",")
                ));
                let mut rj = json!({
                    "offset": r.offset, "timestamp": r.timestamp, "keySize": key_size,
                    "valueSize": value_size, "sequence": seq, "headerKeys": header_keys,
                });
                for (k, v) in value.as_object().into_iter().flatten() {
                    rj[k] = v.clone();
                }
                records_json.push(rj);
            }
        }
        Err(e) => {
            ok = false;
            let msg = format!("cannot read the records: {e}");
            record_lines.push_str(&format!("| error: {msg}\n"));
            records_json.push(json!({ "error": msg }));
        }
    }
    if json {
        line(
            out,
            &json!({
                "baseOffset": batch.base_offset(), "lastOffset": batch.last_offset(),
                "count": count, "baseSequence": batch.base_sequence(), "lastSequence": last_seq,
                "producerId": batch.producer_id(), "producerEpoch": batch.producer_epoch(),
                "partitionLeaderEpoch": batch.partition_leader_epoch(),
                "isTransactional": batch.is_transactional(), "isControl": batch.is_control(),
                "deleteHorizonMs": batch.delete_horizon_ms(), "position": batch.position(),
                "timestampType": ts_name, "baseTimestamp": batch.base_timestamp(),
                "maxTimestamp": batch.max_timestamp(), "size": batch.size(),
                "magic": batch.magic(), "compression": compression,
                "crc": batch.stored_crc(), "computedCrc": batch.compute_crc(), "isValid": crc_ok,
                "records": records_json,
            }),
        );
    } else {
        out.push_str(&format!(
            "baseOffset: {} lastOffset: {} count: {count} baseSequence: {} lastSequence: \
             {last_seq} producerId: {} producerEpoch: {} partitionLeaderEpoch: {} \
             isTransactional: {} isControl: {} deleteHorizonMs: {horizon} position: {} \
             {ts_name}: {} size: {} magic: {} compresscodec: {compression} crc: {} isvalid: \
             {crc_ok}\n",
            batch.base_offset(),
            batch.last_offset(),
            batch.base_sequence(),
            batch.producer_id(),
            batch.producer_epoch(),
            batch.partition_leader_epoch(),
            batch.is_transactional(),
            batch.is_control(),
            batch.position(),
            batch.max_timestamp(),
            batch.size(),
            batch.magic(),
            batch.stored_crc(),
        ));
        if !crc_ok {
            out.push_str(&format!(
                "| CRC mismatch: stored {} computed {}\n",
                batch.stored_crc(),
                batch.compute_crc()
            ));
        }
        out.push_str(&record_lines);
    }
    ok
}

fn control_name(t: ControlRecordType) -> &'static str {
    match t {
        ControlRecordType::Abort => "endTxnMarker: ABORT",
        ControlRecordType::Commit => "endTxnMarker: COMMIT",
        ControlRecordType::LeaderChange => "LeaderChange:", // (Java 4.4's colon)
        ControlRecordType::SnapshotHeader => "SnapshotHeader",
        ControlRecordType::SnapshotFooter => "SnapshotFooter",
        ControlRecordType::KRaftVersion => "KRaftVersion",
        ControlRecordType::KRaftVoters => "KRaftVoters",
    }
}

/// The text after `headerKeys: [...]`, the JSON fields for `--json`, and whether it decoded.
pub fn describe_record(
    control: bool,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> (String, Value, bool) {
    if control {
        return match ControlRecord::decode(key, value) {
            Ok(rec @ (ControlRecord::Abort(_) | ControlRecord::Commit(_))) => {
                let name = control_name(rec.record_type());
                let epoch = rec.to_kafka_json()["coordinatorEpoch"].clone();
                (
                    format!("{name} coordinatorEpoch: {epoch}"),
                    json!({"control": rec.record_type().name(), "data": rec.to_kafka_json()}),
                    true,
                )
            }
            Ok(rec) => {
                let data = rec.to_kafka_json();
                (
                    format!("{} {data}", control_name(rec.record_type())),
                    json!({"control": rec.record_type().name(), "data": data}),
                    true,
                )
            }
            Err(e) => (
                format!("error: undecodable control record: {e}"),
                json!({"error": format!("undecodable control record: {e}")}),
                false,
            ),
        };
    }
    let Some(value) = value else {
        return (
            "error: metadata record with a null value".into(),
            json!({"error": "metadata record with a null value"}),
            false,
        );
    };
    match MetadataRecordAndVersion::decode(value) {
        Ok(rec) => {
            let payload = json!({
                "type": rec.record.kafka_name(), "version": rec.version, "data": rec.to_kafka_json(),
            });
            (
                format!("payload: {payload}"),
                json!({ "payload": payload }),
                true,
            )
        }
        Err(e) => (
            format!("error: undecodable metadata record: {e}"),
            json!({"error": format!("undecodable metadata record: {e}")}),
            false,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::FeatureLevelRecord;
    use crate::protocol::records::BatchBuilder;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("kraftd-dump-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn segment() -> Vec<u8> {
        let mut b = BatchBuilder::new(0).partition_leader_epoch(1);
        let rec = MetadataRecordAndVersion::new(
            FeatureLevelRecord {
                name: "metadata.version".into(),
                feature_level: 33,
                ..Default::default()
            },
            0,
        );
        b.append_metadata(1_700_000_000_000, &rec).unwrap();
        b.build().unwrap()
    }

    #[test]
    fn dumps_a_segment_and_reports_torn_and_corrupt_tails() {
        let dir = scratch("seg");
        let mut bytes = segment();
        let path = dir.join("00000000000000000000.log");
        std::fs::write(&path, &bytes).unwrap();
        let mut out = String::new();
        assert!(dump_file(&path, false, &mut out), "{out}");
        assert!(out.contains("isvalid: true"), "{out}");
        assert!(out.contains("\"FEATURE_LEVEL_RECORD\""), "{out}");
        let mut json = String::new();
        assert!(dump_file(&path, true, &mut json));
        for l in json.lines() {
            serde_json::from_str::<Value>(l).unwrap();
        }
        // Torn tail.
        bytes.extend_from_slice(&segment()[..30]);
        std::fs::write(&path, &bytes).unwrap();
        let mut out = String::new();
        assert!(!dump_file(&path, false, &mut out));
        assert!(out.contains("torn tail"), "{out}");
        // Flipped CRC byte.
        let mut bad = segment();
        bad[20] ^= 0xff;
        std::fs::write(&path, &bad).unwrap();
        let mut out = String::new();
        assert!(!dump_file(&path, false, &mut out));
        // Foreign content and a foreign name.
        std::fs::write(
            &path,
            b"hello, this is not a kafka segment at all.......................",
        )
        .unwrap();
        let mut out = String::new();
        assert!(!dump_file(&path, false, &mut out));
        assert!(out.contains("invalid bytes"), "{out}");
        let other = dir.join("notes.txt");
        std::fs::write(&other, b"x").unwrap();
        assert!(!dump_file(&other, false, &mut String::new()));
        std::fs::write(&path, b"").unwrap();
        assert!(
            dump_file(&path, false, &mut String::new()),
            "an empty segment is clean"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn random_bytes_never_panic() {
        let dir = scratch("fuzz");
        let path = dir.join("00000000000000000000.log");
        let base = segment();
        for i in 0..base.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut b = base.clone();
                b[i] ^= flip;
                std::fs::write(&path, &b).unwrap();
                dump_file(&path, i % 2 == 0, &mut String::new());
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
