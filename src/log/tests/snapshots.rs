//! Snapshots over both storages, through the raft core's trait (`RaftLog`, implemented for
//! every `LogCore`): files, reading in chunks and in batches, full truncation to a snapshot
//! ahead of the log, deletion before a snapshot, retention, and recovery of snapshot files on
//! open.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::log::storage::Storage;
use crate::raft::{LogError as RaftLogError, RaftLog, SnapshotHeader, ValidOffsetAndEpoch};

fn header(id: OffsetAndEpoch, ts: i64) -> SnapshotHeader {
    SnapshotHeader {
        id,
        last_contained_log_timestamp: ts,
        kraft_version: 0,
        voters: None,
    }
}

/// A snapshot of three data records, streamed in two appends.
fn write_snapshot<S: Storage>(log: &mut LogCore<S>, id: OffsetAndEpoch, ts: i64) {
    let mut w = log.create_snapshot(header(id, ts)).unwrap();
    w.append([b"record 1".to_vec()]).unwrap();
    w.append([b"record 2".to_vec(), b"record 3".to_vec()])
        .unwrap();
    log.freeze_snapshot(w).unwrap();
}

/// Downloads `bytes` as snapshot `id`, in two chunks.
fn download<S: Storage>(
    log: &mut LogCore<S>,
    id: OffsetAndEpoch,
    bytes: &[u8],
) -> Result<OffsetAndEpoch, RaftLogError> {
    log.begin_snapshot_download(id)?;
    log.append_snapshot_download(&bytes[..10])?;
    log.append_snapshot_download(&bytes[10..])?;
    log.complete_snapshot_download()
}

fn snapshot_rules<S: Storage>(log: &mut LogCore<S>) {
    append_n(log, 10, 1); // offsets 0..20, batches of 2
    log.update_high_watermark(20);
    let id = OffsetAndEpoch::new(8, 1);
    write_snapshot(log, id, 1_000);
    assert!(
        matches!(
            log.create_snapshot(header(id, 0)),
            Err(RaftLogError::SnapshotExists(_))
        ),
        "exists already"
    );
    assert_eq!(
        (log.earliest_snapshot_id(), log.latest_snapshot_id()),
        (Some(id), Some(id))
    );
    // Read back in chunks (FetchSnapshot) and as batches: header, data, footer.
    let bytes = snapshot_bytes(1, 1_000, 3);
    assert_eq!(log.snapshot_size(id), Some(bytes.len() as u64));
    assert_eq!(
        log.read_snapshot_chunk(id, 5, 7).unwrap().unwrap(),
        &bytes[5..12]
    );
    assert_eq!(
        log.read_snapshot_chunk(id, bytes.len() as u64, 7).unwrap(),
        None
    );
    let reader = log.open_snapshot(id).unwrap().unwrap();
    assert_eq!(reader.header(), &header(id, 1_000));
    let batches: Vec<_> = reader.map(Result::unwrap).collect();
    assert_eq!(batches.len(), 3);
    assert!(batches[0].is_control() && batches[2].is_control() && !batches[1].is_control());
    // A downloaded snapshot ahead of the log makes the log restart at its end.
    let ahead = OffsetAndEpoch::new(30, 2);
    assert_eq!(
        download(log, ahead, &snapshot_bytes(2, 5_000, 0)).unwrap(),
        ahead
    );
    // A download that is not a snapshot is refused when it completes.
    let err = download(log, OffsetAndEpoch::new(12, 1), &batch(0, 1, 1, 0)).unwrap_err();
    assert!(
        matches!(&err, RaftLogError::NotTheSnapshot { .. })
            && err.to_string().contains("SnapshotHeaderRecord"),
        "{err}"
    );
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
    assert_eq!(log.end_offset_for_epoch(2), OffsetAndEpoch::new(30, 2));
    assert_eq!(
        log.validate_offset_and_epoch(10, 1),
        ValidOffsetAndEpoch::Snapshot(ahead)
    );
    assert_eq!(
        log.validate_offset_and_epoch(30, 2),
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
    assert!(!log.maybe_clean(2_400, 40).unwrap());
    assert!(log.maybe_clean(2_600, 40).unwrap() || log.start_offset() == 24);
    assert_eq!(log.start_offset(), 24);
    assert_eq!(log.earliest_snapshot_id(), Some(OffsetAndEpoch::new(24, 1)));
    assert!(
        !log.maybe_clean(i64::MAX / 2, 40).unwrap(),
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
        !log.maybe_clean(0, 40).unwrap(),
        "one snapshot: nothing may go"
    );
    write_snapshot(&mut log, OffsetAndEpoch::new(36, 1), 0);
    assert!(log.maybe_clean(0, 40).unwrap());
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
        .create_snapshot(header(OffsetAndEpoch::new(30, 1), 0))
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

fn part_files(dir: &std::path::Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".checkpoint.part"))
        .collect()
}

#[test]
fn a_snapshot_file_is_streamed_in_and_out_and_a_dropped_writer_deletes_its_part() {
    let dir = scratch("snap-stream");
    let mut log = FileLog::open(&dir, LogConfig::default()).unwrap();
    append_n(&mut log, 10, 1);
    log.flush().unwrap();
    let id = OffsetAndEpoch::new(20, 1);
    let mut w = log.create_snapshot(header(id, 7)).unwrap();
    assert_eq!(
        part_files(&dir).len(),
        1,
        "the header batch is in the .part"
    );
    let header_bytes = w.size_in_bytes();
    // 3 MiB in one batch (below 8 MiB): more than the reader's 1 MiB window.
    let big: Vec<Vec<u8>> = (0..48u8).map(|i| vec![i; 64 << 10]).collect();
    w.append(&big[..24]).unwrap();
    w.append(&big[24..]).unwrap();
    assert_eq!(
        w.size_in_bytes(),
        header_bytes,
        "the open batch is not written yet"
    );
    log.freeze_snapshot(w).unwrap();
    assert!(part_files(&dir).is_empty());
    let reader = log.open_snapshot(id).unwrap().unwrap();
    assert_eq!(reader.header(), &header(id, 7));
    let records: Vec<Vec<u8>> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records, big);

    // An abandoned writer's partial file goes when it is dropped, not at the next open.
    let mut w = log
        .create_snapshot(header(OffsetAndEpoch::new(10, 1), 0))
        .unwrap();
    w.append(&big[..1]).unwrap();
    assert_eq!(part_files(&dir).len(), 1);
    drop(w);
    assert!(part_files(&dir).is_empty());
    assert_eq!(log.snapshot_ids(), [id]);
    drop(log);
    // What was frozen is there after a restart.
    let log = FileLog::open(&dir, LogConfig::default()).unwrap();
    let (_, data) = crate::raft::mem_log::LogInspect::snapshot_records(&log, id)
        .unwrap()
        .unwrap();
    assert_eq!(data, big);
    fs::remove_dir_all(dir).unwrap();
}

/// The node's path: the snapshot is written and sealed on a thread of its own, and the log's
/// freeze is then only the rename. Until the freeze nothing is visible but the `.part` file;
/// a sealed writer takes no more records.
#[test]
fn a_snapshot_sealed_on_another_thread_freezes_by_a_rename() {
    let dir = scratch("snap-sealed");
    let mut log = FileLog::open(&dir, small_segments()).unwrap();
    let id = OffsetAndEpoch::new(0, 0);
    let w = log.create_snapshot(header(id, 77)).unwrap();
    let w = std::thread::spawn(move || {
        let mut w = w;
        w.append([b"record 1".to_vec(), b"record 2".to_vec()])
            .unwrap();
        w.seal().unwrap();
        w.seal().unwrap(); // sealing twice changes nothing
        assert!(matches!(
            w.append([b"late".to_vec()]),
            Err(RaftLogError::Refused(_))
        ));
        w
    })
    .join()
    .unwrap();
    let names = || -> Vec<String> {
        fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.contains(".checkpoint"))
            .collect()
    };
    assert!(
        names().iter().all(|n| n.ends_with(".part")),
        "only the partial file exists before the freeze: {:?}",
        names()
    );
    assert_eq!(log.snapshot_size(id), None);
    log.freeze_snapshot(w).unwrap();
    assert_eq!(names(), vec![snapshot::file_name(id)]);
    let reader = log.open_snapshot(id).unwrap().expect("frozen");
    assert_eq!(reader.last_contained_log_timestamp(), 77);
    let records: Vec<Vec<u8>> = reader.records().collect::<Result<_, _>>().unwrap();
    assert_eq!(records, vec![b"record 1".to_vec(), b"record 2".to_vec()]);
}
