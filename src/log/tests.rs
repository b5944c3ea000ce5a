//! Tests of the metadata log over both storages, and of the file log's recovery.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::log::storage::Storage;
use crate::protocol::messages::{SnapshotFooterRecord, SnapshotHeaderRecord};
use crate::protocol::records::{BatchBuilder, ControlRecord};
// The log's rules are the raft core's trait, implemented once for every `LogCore`.
use crate::raft::{RaftLog, ValidOffsetAndEpoch};

mod file_recovery;
mod memory_faults;
mod snapshots;

pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kraftd-log-{name}-{}-{}",
        std::process::id(),
        rand::random::<u32>()
    ));
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// One data batch of `count` records at `base` in `epoch`, every record at `ts`.
pub(crate) fn batch(base: i64, count: usize, epoch: i32, ts: i64) -> Vec<u8> {
    let mut b = BatchBuilder::new(base).partition_leader_epoch(epoch);
    for i in 0..count {
        let value = format!("record {}", base + i as i64);
        b.append(ts, None, Some(value.as_bytes()), &[]).unwrap();
    }
    b.build().unwrap()
}

/// A snapshot's bytes: header (with `ts`), `records` data records, footer.
pub(crate) fn snapshot_bytes(epoch: i32, ts: i64, records: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut h = BatchBuilder::new_control(0).partition_leader_epoch(epoch);
    let header = SnapshotHeaderRecord {
        version: 0,
        last_contained_log_timestamp: ts,
        ..Default::default()
    };
    h.append_control(ts, &ControlRecord::SnapshotHeader(header))
        .unwrap();
    h.write_to(&mut out).unwrap();
    let mut next = 1;
    if records > 0 {
        out.extend(batch(1, records, epoch, ts));
        next += records as i64;
    }
    let mut f = BatchBuilder::new_control(next).partition_leader_epoch(epoch);
    f.append_control(
        ts,
        &ControlRecord::SnapshotFooter(SnapshotFooterRecord::default()),
    )
    .unwrap();
    f.write_to(&mut out).unwrap();
    out
}

pub(crate) fn small_segments() -> LogConfig {
    LogConfig {
        roll: RollConfig {
            segment_bytes: 400,
            segment_ms: i64::MAX,
        },
        ..LogConfig::default()
    }
}

/// Appends `n` batches of 2 records as leader of `epoch`.
pub(crate) fn append_n<S: Storage>(log: &mut LogCore<S>, n: usize, epoch: i32) {
    for _ in 0..n {
        let b = batch(log.end_offset(), 2, epoch, 1_000);
        log.append_bytes_as_leader(&b, epoch).unwrap();
    }
}

fn read_all<S: Storage>(log: &LogCore<S>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offset = log.start_offset();
    while offset < log.end_offset() {
        let r = log
            .read_bytes(offset, Isolation::Uncommitted, 1 << 20)
            .unwrap()
            .records;
        assert!(!r.is_empty(), "no progress at {offset}");
        let split = crate::protocol::records::split_batches(&r);
        offset = split.batches.last().unwrap().next_offset();
        out.extend(r);
    }
    out
}

/// The behaviour both storages must share.
fn common_behaviour<S: Storage>(log: &mut LogCore<S>) {
    assert_eq!((log.start_offset(), log.end_offset()), (0, 0));
    assert_eq!(log.last_fetched_epoch(), 0);
    log.initialize_leader_epoch(1).unwrap();
    append_n(log, 3, 1);
    assert_eq!(log.end_offset(), 6);
    // A new leader epoch.
    log.initialize_leader_epoch(3).unwrap();
    let info = log
        .append_bytes_as_leader(&batch(6, 4, 3, 2_000), 3)
        .unwrap();
    assert_eq!((info.first_offset, info.last_offset), (6, 9));
    assert_eq!(log.last_fetched_epoch(), 3);
    assert_eq!(log.end_offset_for_epoch(1), OffsetAndEpoch::new(6, 1));
    assert_eq!(log.end_offset_for_epoch(2), OffsetAndEpoch::new(6, 1));
    assert_eq!(log.end_offset_for_epoch(3), OffsetAndEpoch::new(10, 3));
    assert_eq!(
        log.end_offset_for_epoch(4),
        OffsetAndEpoch::new(10, 3),
        "undefined: LEO, last epoch"
    );
    // Reads: whole batches, at least one, respecting max bytes and isolation.
    let one = log
        .read_bytes(2, Isolation::Uncommitted, 1)
        .unwrap()
        .records;
    assert_eq!(
        one,
        batch(2, 2, 1, 1_000),
        "the batch holding offset 2, although larger than 1 byte"
    );
    assert_eq!(
        log.read_bytes(3, Isolation::Uncommitted, 1)
            .unwrap()
            .records,
        one,
        "offset inside a batch"
    );
    assert!(
        log.read_bytes(0, Isolation::Committed, 1 << 20)
            .unwrap()
            .records
            .is_empty(),
        "HW is 0"
    );
    log.update_high_watermark(4);
    let committed = log
        .read_bytes(0, Isolation::Committed, 1 << 20)
        .unwrap()
        .records;
    assert_eq!(committed.len(), 2 * one.len());
    assert!(log
        .read_bytes(10, Isolation::Uncommitted, 100)
        .unwrap()
        .records
        .is_empty());
    assert!(matches!(
        log.read_bytes(11, Isolation::Uncommitted, 100),
        Err(LogError::OffsetOutOfRange { .. })
    ));
    // Appends that break the rules.
    let bad = [
        (batch(11, 1, 3, 0), 3, false, "starts at offset 11"),
        (batch(10, 1, 2, 0), 2, false, "below the log's latest epoch"),
        (batch(10, 1, 4, 0), 3, false, "may not append"),
        (batch(10, 1, 5, 0), 5, true, "may not append"),
    ];
    for (bytes, epoch, leader, needle) in bad {
        let r = if leader {
            log.append_bytes_as_leader(&bytes[..], epoch - 1)
        } else {
            log.append_bytes_as_follower(&bytes[..], epoch)
        };
        let err = r.unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
    }
    let torn = batch(10, 1, 3, 0);
    assert!(log
        .append_bytes_as_follower(&torn[..torn.len() - 1], 3)
        .unwrap_err()
        .to_string()
        .contains("incomplete"));
    let mut flipped = torn.clone();
    *flipped.last_mut().unwrap() ^= 1;
    assert!(log
        .append_bytes_as_follower(&flipped, 3)
        .unwrap_err()
        .to_string()
        .contains("CRC"));
    // Follower appends several batches at once.
    let mut two = batch(10, 1, 3, 0);
    two.extend(batch(11, 1, 4, 0));
    log.append_bytes_as_follower(&two, 4).unwrap();
    assert_eq!(log.end_offset(), 12);
    // Truncation: never below the high watermark; drops epochs.
    assert!(log
        .truncate_to(3)
        .unwrap_err()
        .to_string()
        .contains("high watermark"));
    log.truncate_to(8).unwrap();
    assert_eq!(
        log.end_offset(),
        6,
        "the batch holding offset 8 starts at 6"
    );
    assert_eq!(log.last_fetched_epoch(), 1);
    assert_eq!(
        log.truncate_to_end_offset(OffsetAndEpoch::new(5, 1))
            .unwrap(),
        5
    );
    assert_eq!(
        log.end_offset(),
        4,
        "the batch holding offset 5 starts at 4"
    );
    // Divergence checks.
    assert_eq!(
        log.validate_offset_and_epoch(4, 1),
        ValidOffsetAndEpoch::Valid(OffsetAndEpoch::new(4, 1))
    );
    assert_eq!(
        log.validate_offset_and_epoch(5, 1),
        ValidOffsetAndEpoch::Diverging(OffsetAndEpoch::new(4, 1))
    );
    assert_eq!(
        log.validate_offset_and_epoch(4, 2),
        ValidOffsetAndEpoch::Diverging(OffsetAndEpoch::new(4, 1))
    );
    log.flush().unwrap();
    assert_eq!(log.flushed_end_offset(), 4);
}

#[test]
fn memory_log_behaviour() {
    common_behaviour(&mut MemoryLog::with_config(LogConfig::default()));
}

#[test]
fn file_log_behaviour() {
    let dir = scratch("common");
    common_behaviour(&mut FileLog::open(&dir, LogConfig::default()).unwrap());
    common_behaviour_small_segments(&scratch("common-small"));
    fs::remove_dir_all(dir).unwrap();
}

fn common_behaviour_small_segments(dir: &Path) {
    let mut log = FileLog::open(dir, small_segments()).unwrap();
    common_behaviour(&mut log);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn memory_log_crash_loses_exactly_the_unflushed_tail() {
    let mut log = MemoryLog::with_config(LogConfig::default());
    append_n(&mut log, 3, 1);
    log.flush().unwrap();
    log.initialize_leader_epoch(2).unwrap();
    append_n(&mut log, 2, 2);
    log.update_high_watermark(8);
    assert_eq!((log.flushed_end_offset(), log.end_offset()), (6, 10));
    assert_eq!(
        log.persisted_epochs(),
        &[EpochEntry {
            epoch: 1,
            start_offset: 0
        }]
    );
    log.crash().unwrap();
    assert_eq!(
        (
            log.end_offset(),
            log.flushed_end_offset(),
            log.high_watermark()
        ),
        (6, 6, 0)
    );
    assert_eq!(log.last_fetched_epoch(), 1);
    assert_eq!(read_all(&log), read_all_after_rebuild(6));
}

fn read_all_after_rebuild(end: i64) -> Vec<u8> {
    let mut log = MemoryLog::with_config(LogConfig::default());
    append_n(&mut log, (end / 2) as usize, 1);
    read_all(&log)
}

#[test]
fn file_log_survives_reopen_with_epochs_and_checkpoint() {
    let dir = scratch("reopen");
    let mut log = FileLog::open(&dir, small_segments()).unwrap();
    assert_eq!(
        fs::read_to_string(dir.join("partition.metadata")).unwrap(),
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    );
    log.initialize_leader_epoch(1).unwrap();
    append_n(&mut log, 10, 1);
    log.initialize_leader_epoch(4).unwrap();
    append_n(&mut log, 10, 4);
    log.flush().unwrap();
    let before = read_all(&log);
    let segments = log.segment_paths();
    assert!(segments.len() > 3, "400-byte segments roll: {segments:?}");
    assert_eq!(segments[1].file_name().unwrap().to_str().unwrap().len(), 24);
    assert_eq!(
        fs::read_to_string(dir.join("leader-epoch-checkpoint")).unwrap(),
        "0\n2\n1 0\n4 20\n"
    );
    assert!(
        !dir.join("00000000000000000000.index").exists(),
        "kraftd writes no index files"
    );
    drop(log);
    let log = FileLog::open(&dir, small_segments()).unwrap();
    assert_eq!(log.end_offset(), 40);
    assert_eq!(read_all(&log), before);
    assert_eq!(
        log.epoch_entries(),
        &[
            EpochEntry {
                epoch: 1,
                start_offset: 0
            },
            EpochEntry {
                epoch: 4,
                start_offset: 20
            }
        ]
    );
    assert!(log.open_report().cuts.is_empty());
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn segments_roll_by_batch_timestamps() {
    let dir = scratch("roll-ms");
    let config = LogConfig {
        roll: RollConfig {
            segment_bytes: 1 << 30,
            segment_ms: 1_000,
        },
        ..LogConfig::default()
    };
    let mut log = FileLog::open(&dir, config).unwrap();
    for (i, ts) in [0i64, 500, 1_000, 1_001, 1_500, 2_002]
        .into_iter()
        .enumerate()
    {
        log.append_bytes_as_leader(&batch(i as i64, 1, 0, ts), 0)
            .unwrap();
    }
    // A new segment when a batch is more than 1 s newer than the segment's first batch.
    let names: Vec<String> = log
        .segment_paths()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "00000000000000000000.log",
            "00000000000000000003.log",
            "00000000000000000005.log"
        ]
    );
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn truncation_across_segments_removes_files_and_index_companions() {
    let dir = scratch("truncate");
    let mut log = FileLog::open(&dir, small_segments()).unwrap();
    append_n(&mut log, 20, 0);
    log.flush().unwrap();
    let segments = log.segment_paths();
    // Java's files next to a segment: an index and a producer snapshot beyond the new end.
    let second = segments[1].clone();
    let base: i64 = second
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    fs::write(second.with_extension("index"), [0u8; 8]).unwrap();
    fs::write(dir.join(format!("{:020}.snapshot", 30)), b"x").unwrap();
    log.truncate_to(base + 2).unwrap();
    assert_eq!(log.end_offset(), base + 2);
    assert!(
        !second.with_extension("index").exists(),
        "a truncated segment's index goes"
    );
    assert!(
        !dir.join(format!("{:020}.snapshot", 30)).exists(),
        "a producer snapshot past the end goes"
    );
    assert_eq!(log.segment_paths(), &segments[..2]);
    for p in &segments[2..] {
        assert!(!p.exists(), "{} must be deleted", p.display());
    }
    drop(log);
    let log = FileLog::open(&dir, small_segments()).unwrap();
    assert_eq!(log.end_offset(), base + 2);
    fs::remove_dir_all(dir).unwrap();
}
