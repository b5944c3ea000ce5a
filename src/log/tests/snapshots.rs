//! Snapshots: creation rules, files, reading in chunks, deletion before a snapshot, retention,
//! and recovery of snapshot files on open.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::log::storage::Storage;

fn write_snapshot<S: Storage>(log: &mut LogCore<S>, id: OffsetAndEpoch, ts: i64) {
    let mut w = log
        .create_new_snapshot(id)
        .unwrap()
        .expect("a new snapshot");
    let bytes = snapshot_bytes(id.epoch, ts, 3);
    w.append(&bytes[..10]).unwrap();
    w.append(&bytes[10..]).unwrap();
    log.freeze_snapshot(w).unwrap();
}

fn snapshot_rules<S: Storage>(log: &mut LogCore<S>) {
    append_n(log, 10, 1); // offsets 0..20, batches of 2
    let id = OffsetAndEpoch::new(8, 1);
    assert!(log
        .create_new_snapshot(id)
        .unwrap_err()
        .to_string()
        .contains("high watermark"));
    log.update_high_watermark(20);
    assert!(log
        .create_new_snapshot(OffsetAndEpoch::new(9, 1))
        .unwrap_err()
        .to_string()
        .contains("batch boundary"));
    assert!(log
        .create_new_snapshot(OffsetAndEpoch::new(8, 2))
        .unwrap_err()
        .to_string()
        .contains("not valid"));
    write_snapshot(log, id, 1_000);
    assert!(
        log.create_new_snapshot(id).unwrap().is_none(),
        "exists already"
    );
    assert_eq!(
        (log.earliest_snapshot_id(), log.latest_snapshot_id()),
        (Some(id), Some(id))
    );
    let reader = log.open_snapshot(id).unwrap().unwrap();
    let bytes = snapshot_bytes(1, 1_000, 3);
    assert_eq!(reader.size_in_bytes(), bytes.len() as u64);
    assert_eq!(reader.read(5, 7).unwrap(), &bytes[5..12]);
    assert!(reader.read(bytes.len() as u64, 7).unwrap().is_empty());
    assert_eq!(reader.read_all().unwrap(), bytes);
    // An unchecked snapshot ahead of the log (downloaded) makes the log restart at its end.
    let ahead = OffsetAndEpoch::new(30, 2);
    let mut w = log.create_new_snapshot_unchecked(ahead).unwrap().unwrap();
    w.append(&snapshot_bytes(2, 5_000, 0)).unwrap();
    log.freeze_snapshot(w).unwrap();
    // A snapshot that is not one is refused at freeze.
    let mut w = log
        .create_new_snapshot_unchecked(OffsetAndEpoch::new(12, 1))
        .unwrap()
        .unwrap();
    w.append(&batch(0, 1, 1, 0)).unwrap();
    let err = log.freeze_snapshot(w).unwrap_err().to_string();
    assert!(err.contains("SnapshotHeaderRecord"), "{err}");
    assert!(log.truncate_to_latest_snapshot().unwrap());
    assert_eq!(
        (log.start_offset(), log.end_offset(), log.high_watermark()),
        (30, 30, 30)
    );
    assert_eq!(
        log.earliest_snapshot_id(),
        Some(ahead),
        "older snapshots are forgotten"
    );
    assert_eq!(log.last_fetched_epoch(), 2);
    assert_eq!(
        log.epoch_for_offset(29),
        Some(2),
        "just below the log start: the snapshot's"
    );
    assert_eq!(log.end_offset_for_epoch(2), OffsetAndEpoch::new(30, 2));
    assert_eq!(
        log.validate_offset_and_epoch(10, 1).unwrap(),
        ValidOffsetAndEpoch::Snapshot(ahead)
    );
    assert_eq!(
        log.validate_offset_and_epoch(30, 2).unwrap(),
        ValidOffsetAndEpoch::Valid(ahead)
    );
    assert!(matches!(
        log.read_bytes(29, Isolation::Uncommitted, 10),
        Err(LogError::OffsetOutOfRange { .. })
    ));
    log.append_bytes_as_follower(&batch(30, 2, 2, 0), 2)
        .unwrap();
    assert_eq!(log.end_offset(), 32);
}

#[test]
fn snapshot_rules_in_memory() {
    snapshot_rules(&mut MemoryLog::with_config(LogConfig::default()));
}

#[test]
fn snapshot_rules_in_files() {
    let dir = scratch("snap-rules");
    let mut log = FileLog::open(&dir, small_segments()).unwrap();
    snapshot_rules(&mut log);
    let name = dir.join("00000000000000000030-0000000002.checkpoint");
    assert!(name.exists());
    assert_eq!(
        fs::metadata(&name).unwrap().permissions().mode() & 0o777,
        0o400,
        "read-only as Java leaves it"
    );
    assert!(!dir
        .join("00000000000000000008-0000000001.checkpoint")
        .exists());
    let leftovers: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".part") || n.contains(".deleted"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    drop(log);
    let log = FileLog::open(&dir, small_segments()).unwrap();
    assert_eq!((log.start_offset(), log.end_offset()), (30, 32));
    fs::remove_dir_all(dir).unwrap();
}

fn deletion_and_retention<S: Storage>(log: &mut LogCore<S>) {
    append_n(log, 20, 1); // 40 offsets
    log.update_high_watermark(40);
    for (o, ts) in [(8, 1_000), (16, 2_000), (24, 3_000)] {
        write_snapshot(log, OffsetAndEpoch::new(o, 1), ts);
    }
    assert!(
        !log.delete_before_snapshot(OffsetAndEpoch::new(10, 1))
            .unwrap(),
        "not a snapshot"
    );
    log.delete_before_snapshot(OffsetAndEpoch::new(16, 1))
        .unwrap();
    assert_eq!(log.start_offset(), 16);
    assert_eq!(log.earliest_snapshot_id(), Some(OffsetAndEpoch::new(16, 1)));
    assert!(log
        .open_snapshot(OffsetAndEpoch::new(8, 1))
        .unwrap()
        .is_none());
    assert!(
        !log.delete_before_snapshot(OffsetAndEpoch::new(16, 1))
            .unwrap(),
        "already there"
    );
    // Age: the snapshot at 16 (ts 2000) is older than 500 ms at now=2600, the one at 24 is not.
    assert!(!log.apply_retention(2_400).unwrap());
    assert!(log.apply_retention(2_600).unwrap() || log.start_offset() == 24);
    assert_eq!(log.start_offset(), 24);
    assert_eq!(log.earliest_snapshot_id(), Some(OffsetAndEpoch::new(24, 1)));
    assert!(
        !log.apply_retention(i64::MAX / 2).unwrap(),
        "the latest snapshot always stays"
    );
}

#[test]
fn deletion_and_retention_in_memory() {
    let config = LogConfig {
        retention_ms: 500,
        retention_bytes: -1,
        ..LogConfig::default()
    };
    deletion_and_retention(&mut MemoryLog::with_config(config));
}

#[test]
fn deletion_and_retention_in_files() {
    let dir = scratch("snap-retention");
    let config = LogConfig {
        retention_ms: 500,
        retention_bytes: -1,
        ..small_segments()
    };
    let mut log = FileLog::open(&dir, config).unwrap();
    deletion_and_retention(&mut log);
    let first = log.segment_paths()[0].clone();
    let base: i64 = first
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        base <= 24 && base > 0,
        "segments below the log start went: {base}"
    );
    drop(log);
    // After a restart the log starts at its first segment (no log-start checkpoint), as Java's.
    let log = FileLog::open(&dir, config).unwrap();
    assert_eq!(log.start_offset(), base);
    assert_eq!(log.earliest_snapshot_id(), Some(OffsetAndEpoch::new(24, 1)));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn retention_by_size() {
    let config = LogConfig {
        retention_bytes: 0,
        retention_ms: -1,
        ..small_segments()
    };
    let dir = scratch("snap-size");
    let mut log = FileLog::open(&dir, config).unwrap();
    append_n(&mut log, 20, 1);
    log.update_high_watermark(40);
    write_snapshot(&mut log, OffsetAndEpoch::new(20, 1), 0);
    assert!(
        !log.apply_retention(0).unwrap(),
        "one snapshot: nothing may go"
    );
    write_snapshot(&mut log, OffsetAndEpoch::new(36, 1), 0);
    assert!(log.apply_retention(0).unwrap());
    assert_eq!(log.start_offset(), 36);
    assert_eq!(log.snapshot_ids(), [OffsetAndEpoch::new(36, 1)]);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn open_cleans_partial_and_deleted_files_and_refuses_corrupt_snapshots() {
    let dir = scratch("snap-open");
    let mut log = FileLog::open(&dir, small_segments()).unwrap();
    append_n(&mut log, 20, 1);
    log.update_high_watermark(40);
    log.flush().unwrap();
    write_snapshot(&mut log, OffsetAndEpoch::new(20, 1), 0);
    // An abandoned writer leaves nothing behind.
    let w = log
        .create_new_snapshot(OffsetAndEpoch::new(30, 1))
        .unwrap()
        .unwrap();
    drop(w);
    drop(log);
    for name in [
        "00000000000000000030-0000000001-123.checkpoint.part",
        "00000000000000000004-0000000001.checkpoint.deleted",
    ] {
        fs::write(dir.join(name), b"x").unwrap();
    }
    let log = FileLog::open(&dir, small_segments()).unwrap();
    assert_eq!(log.snapshot_ids(), [OffsetAndEpoch::new(20, 1)]);
    let names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.contains(".part") && !n.contains(".deleted")),
        "{names:?}"
    );
    drop(log);
    // Corrupt the snapshot: opening names the file and refuses.
    let path = dir.join("00000000000000000020-0000000001.checkpoint");
    let mut perms = fs::metadata(&path).unwrap().permissions();
    perms.set_mode(0o600);
    fs::set_permissions(&path, perms).unwrap();
    let mut bytes = fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 1;
    fs::write(&path, &bytes).unwrap();
    let err = FileLog::open(&dir, small_segments())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("00000000000000000020-0000000001.checkpoint") && err.contains("CRC"),
        "{err}"
    );
    fs::remove_dir_all(&dir).unwrap();
    // A log starting at 20: the snapshot at 20 is the only copy of what is below.
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("00000000000000000020.log"), batch(20, 2, 1, 0)).unwrap();
    fs::write(&path, &bytes).unwrap();
    let err = FileLog::open(&dir, small_segments())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("00000000000000000020-0000000001.checkpoint") && err.contains("only copy"),
        "{err}"
    );
    fs::remove_dir_all(dir).unwrap();
}
