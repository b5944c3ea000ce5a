//! `MemLog` with modelled segments: rolls, one-segment Fetch reads, refusals, and segments
//! after truncation, crash and cleaning.

use super::data;
use crate::raft::log::{LogError, RaftLog, SnapshotContents};
use crate::raft::mem_log::MemLog;
use crate::raft::types::OffsetAndEpoch;

/// `data(_, _, 1)` batches are 70 bytes (`Batch::size_in_bytes` without an encoding): three
/// fit in a 240-byte segment.
fn log_of_seven() -> MemLog {
    let mut log = MemLog::with_segment_bytes(240);
    for offset in 0..7 {
        log.append_as_leader(data(offset, 1, 1)).unwrap();
    }
    log.flush();
    log
}

fn offsets(batches: &[crate::raft::log::Batch]) -> Vec<i64> {
    batches.iter().map(|b| b.base_offset).collect()
}

#[test]
fn appends_roll_a_segment_when_the_active_one_would_overflow() {
    let log = log_of_seven();
    assert_eq!(log.segment_bases(), Some(&[0, 3, 6][..]));
    assert_eq!(MemLog::new().segment_bases(), None);
}

#[test]
fn a_fetch_read_stops_at_the_segment_end_and_a_plain_read_does_not() {
    let log = log_of_seven();
    assert_eq!(offsets(&log.read_for_fetch(1, 1 << 20)), [1, 2]);
    assert_eq!(offsets(&log.read_for_fetch(3, 1 << 20)), [3, 4, 5]);
    assert_eq!(
        offsets(&log.read_for_fetch(3, 150)),
        [3, 4],
        "max bytes still count"
    );
    assert_eq!(offsets(&log.read(1, 1 << 20)), [1, 2, 3, 4, 5, 6]);
}

#[test]
fn an_append_larger_than_a_segment_is_refused() {
    let mut log = MemLog::with_segment_bytes(130);
    let two = vec![data(0, 1, 1), data(1, 1, 1)];
    assert_eq!(
        log.append_as_follower(two),
        Err(LogError::LargerThanSegment {
            size: 140,
            segment_bytes: 130
        })
    );
    assert_eq!(log.end_offset(), 0);
    assert!(log.append_as_leader(data(0, 1, 10)).is_err(), "151 bytes");
}

#[test]
fn a_follower_append_rolls_once_for_the_whole_response() {
    let mut log = MemLog::with_segment_bytes(240);
    log.append_as_follower(vec![data(0, 1, 1)]).unwrap();
    log.append_as_follower(vec![data(1, 1, 1), data(2, 1, 1), data(3, 1, 1)])
        .unwrap();
    assert_eq!(log.segment_bases(), Some(&[0, 1][..]));
}

#[test]
fn truncation_and_crash_drop_the_segments_above_and_keep_one_at_the_cut() {
    let mut log = log_of_seven();
    log.truncate_to(3);
    assert_eq!(
        log.segment_bases(),
        Some(&[0, 3][..]),
        "an empty segment at 3"
    );
    log.append_as_leader(data(3, 2, 1)).unwrap();
    log.crash();
    assert_eq!(log.segment_bases(), Some(&[0, 3][..]));
    assert_eq!(log.end_offset(), 3);
}

#[test]
fn cleaning_keeps_the_segment_holding_the_new_log_start() {
    let mut log = log_of_seven();
    let id = OffsetAndEpoch::new(4, 1);
    log.create_snapshot(SnapshotContents {
        id,
        last_contained_log_timestamp: 0,
        kraft_version: 0,
        voters: None,
        data: Vec::new(),
    })
    .unwrap();
    assert!(log.delete_before_snapshot(id));
    assert_eq!(log.segment_bases(), Some(&[3, 6][..]));
    assert_eq!(offsets(&log.read_for_fetch(4, 1 << 20)), [4, 5]);
}
