//! Fault plans of the memory storage: each operation fails as planned, a failed disk stays
//! failed until the crash, and recovery cuts a torn tail exactly where the file log's recovery
//! cuts the same bytes.

use super::*;
use crate::log::memory_faults::{FaultKind, FaultPlan, ImpossibleFault, StorageOp};
use crate::log::scan::ScanStop;
use crate::raft::{LogError as RaftLogError, SnapshotHeader};

fn plan(op: StorageOp, after: u64, kind: FaultKind) -> FaultPlan {
    FaultPlan {
        op,
        after,
        kind,
        torn_permille: 500,
    }
}

/// The OS error of a storage error.
fn errno(e: &LogError) -> Option<i32> {
    match e {
        LogError::Io { source, .. } => source.raw_os_error(),
        _ => None,
    }
}

/// The OS error of a fault the raft core's log trait reports.
fn fault_errno(e: &RaftLogError) -> Option<i32> {
    assert!(e.is_fault(), "{e} is a fault");
    e.os_error().and_then(|o| o.raw_os_error())
}

fn append_one(log: &mut MemoryLog, epoch: i32) -> Result<LogAppendInfo, LogError> {
    let b = batch(log.end_offset(), 2, epoch, 1_000);
    log.append_bytes_as_leader(&b, epoch)
}

#[test]
fn the_planned_append_fails_with_its_os_error_and_every_later_write_fails_until_the_crash() {
    let mut log = MemoryLog::new();
    log.plan_fault(plan(StorageOp::Append, 2, FaultKind::Enospc))
        .unwrap();
    append_one(&mut log, 1).unwrap();
    append_one(&mut log, 1).unwrap();
    log.flush().unwrap();
    let e = append_one(&mut log, 1).unwrap_err();
    assert_eq!(errno(&e), Some(28), "{e}");
    assert_eq!(
        e.path(),
        Some(Path::new("00000000000000000000.log")),
        "the error names the segment: {e}"
    );
    assert_eq!(
        log.end_offset(),
        4,
        "nothing of the failed append is in the log"
    );
    let fired = log.injected_fault().expect("the fault fired").clone();
    assert_eq!(
        (fired.op, fired.kind),
        (StorageOp::Append, FaultKind::Enospc)
    );
    // A full disk stays full: a later append and a truncation fail the same way.
    assert_eq!(errno(&append_one(&mut log, 1).unwrap_err()), Some(28));
    assert_eq!(fault_errno(&log.truncate_to(2).unwrap_err()), Some(28));
    assert_eq!(log.end_offset(), 4);

    log.crash().unwrap();
    assert!(
        log.injected_fault().is_none(),
        "the crash clears the faults"
    );
    assert_eq!(log.last_recovery(), &memory_log::MemoryRecovery::default());
    append_one(&mut log, 1).unwrap();
    log.flush().unwrap();
    assert_eq!(log.end_offset(), 6);
}

#[test]
fn a_failed_flush_keeps_nothing_it_was_to_make_durable() {
    let mut log = MemoryLog::new();
    append_one(&mut log, 1).unwrap();
    log.flush().unwrap();
    log.plan_fault(plan(StorageOp::Flush, 0, FaultKind::Eio))
        .unwrap();
    // A flush with nothing dirty is no fsync: it cannot fail and does not count.
    log.flush().unwrap();
    append_one(&mut log, 1).unwrap();
    let e = log.flush().unwrap_err();
    assert_eq!(fault_errno(&e), Some(5), "{e}");
    assert_eq!(log.flushed_end_offset(), 2);
    log.crash().unwrap();
    assert_eq!(log.end_offset(), 2, "the unflushed batch is lost");
}

#[test]
fn a_torn_append_is_cut_by_recovery_where_the_file_log_cuts_the_same_bytes() {
    let mut log = MemoryLog::new();
    append_one(&mut log, 1).unwrap();
    append_one(&mut log, 1).unwrap();
    log.flush().unwrap();
    let on_disk = read_all(&log);
    log.plan_fault(FaultPlan {
        torn_permille: 300,
        ..plan(StorageOp::Append, 0, FaultKind::TornWrite)
    })
    .unwrap();
    let torn = batch(4, 2, 1, 1_000);
    let e = log.append_bytes_as_leader(&torn, 1).unwrap_err();
    assert_eq!(errno(&e), Some(5), "a torn write fails with EIO: {e}");
    log.crash().unwrap();
    let cut = log
        .last_recovery()
        .cut
        .clone()
        .expect("recovery cut the torn batch");
    let reached = torn.len() * 300 / 1000;
    assert_eq!(cut.dropped_bytes, reached as u64);
    assert!(
        matches!(cut.stop, ScanStop::Torn { position, .. } if position == on_disk.len() as u64),
        "{:?}",
        cut.stop
    );
    assert_eq!(log.end_offset(), 4);
    assert_eq!(read_all(&log), on_disk);

    // The same bytes in a segment file: the file log's recovery cuts at the same place.
    let dir = scratch("torn-append");
    let mut medium = on_disk.clone();
    medium.extend_from_slice(&torn[..reached]);
    fs::write(dir.join("00000000000000000000.log"), &medium).unwrap();
    let file = FileLog::open(&dir, LogConfig::default()).unwrap();
    let file_cut = &file.open_report().cuts[0];
    assert_eq!(
        (&file_cut.stop, file_cut.dropped_bytes),
        (&cut.stop, cut.dropped_bytes)
    );
    assert_eq!(file.end_offset(), log.end_offset());
    drop(file);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_torn_flush_keeps_the_whole_batches_before_the_tear() {
    let mut log = MemoryLog::new();
    append_one(&mut log, 1).unwrap();
    log.flush().unwrap();
    for _ in 0..3 {
        append_one(&mut log, 1).unwrap();
    }
    let size = batch(0, 2, 1, 1_000).len();
    // Half of three unflushed batches reach the medium: the first whole, the second in part.
    log.plan_fault(plan(StorageOp::Flush, 0, FaultKind::TornWrite))
        .unwrap();
    assert_eq!(fault_errno(&log.flush().unwrap_err()), Some(5));
    log.crash().unwrap();
    let recovery = log.last_recovery();
    assert_eq!(recovery.kept_unflushed_batches, 1);
    let cut = recovery.cut.as_ref().expect("the second batch is torn");
    assert_eq!(cut.dropped_bytes as usize, 3 * size / 2 - size);
    assert_eq!((log.end_offset(), log.flushed_end_offset()), (4, 4));
}

#[test]
fn a_torn_snapshot_is_not_kept_and_its_part_file_goes_at_the_next_start() {
    let mut log = MemoryLog::new();
    append_one(&mut log, 1).unwrap();
    log.flush().unwrap();
    log.update_high_watermark(2);
    log.plan_fault(plan(StorageOp::Snapshot, 0, FaultKind::TornWrite))
        .unwrap();
    let id = OffsetAndEpoch::new(2, 1);
    let mut w = log
        .create_snapshot(SnapshotHeader {
            id,
            last_contained_log_timestamp: 1_000,
            kraft_version: 0,
            voters: None,
        })
        .unwrap();
    w.append([b"record 1".to_vec()]).unwrap();
    let e = log.freeze_snapshot(w).unwrap_err();
    assert_eq!(fault_errno(&e), Some(5), "{e}");
    assert_eq!(log.latest_snapshot_id(), None);
    log.crash().unwrap();
    assert_eq!(log.last_recovery().removed_partial_snapshot, Some(id));
    assert_eq!(log.latest_snapshot_id(), None);
    assert_eq!(log.end_offset(), 2);
}

#[test]
fn a_failed_truncation_changes_nothing_and_a_truncation_cannot_be_torn() {
    let mut log = MemoryLog::new();
    for _ in 0..3 {
        append_one(&mut log, 1).unwrap();
    }
    log.flush().unwrap();
    assert_eq!(
        log.plan_fault(plan(StorageOp::Truncate, 0, FaultKind::TornWrite)),
        Err(ImpossibleFault {
            op: StorageOp::Truncate,
            kind: FaultKind::TornWrite
        })
    );
    log.plan_fault(plan(StorageOp::Truncate, 0, FaultKind::Eio))
        .unwrap();
    assert_eq!(fault_errno(&log.truncate_to(2).unwrap_err()), Some(5));
    assert_eq!(log.end_offset(), 6);
    log.crash().unwrap();
    log.truncate_to(2).unwrap();
    assert_eq!(log.end_offset(), 2);
}
