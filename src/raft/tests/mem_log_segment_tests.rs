//! `MemLog` with modelled segments: rolls, one-segment Fetch reads, refusals, and segments
//! after truncation, crash and cleaning. Sizes are the batches' real v2 encodings.

use super::data;
use crate::raft::convert::records::encode_batches;
use crate::raft::log::{Batch, LogError, RaftLog, SnapshotHeader};
use crate::raft::mem_log::{LogInspect, MemLog};
use crate::raft::types::OffsetAndEpoch;

/// The encoded size of `batches`.
fn size_of(batches: &[Batch]) -> u64 {
    let mut out = Vec::new();
    encode_batches(batches, &mut out).unwrap();
    out.len() as u64
}

/// The encoded size of one `data(_, 1, 1)` batch (the same at every small offset).
fn one() -> u64 {
    size_of(&[data(0, 1, 1)])
}

/// Seven one-record batches in segments that hold three each.
fn log_of_seven() -> MemLog {
    let mut log = MemLog::with_segment_bytes(3 * one() + one() / 2);
    for offset in 0..7 {
        log.append_as_leader(data(offset, 1, 1)).unwrap();
    }
    RaftLog::flush(&mut log).unwrap();
    log
}

fn offsets(batches: &[Batch]) -> Vec<i64> {
    batches.iter().map(|b| b.base_offset).collect()
}

#[test]
fn appends_roll_a_segment_when_the_active_one_would_overflow() {
    let log = log_of_seven();
    assert_eq!(log.segment_bases(), &[0, 3, 6][..]);
    assert_eq!(MemLog::new().segment_bases(), &[0][..]);
}

#[test]
fn a_fetch_read_stops_at_the_segment_end_and_a_plain_read_does_not() {
    let log = log_of_seven();
    let fetch = |from, max| offsets(&log.read_for_fetch(from, max).unwrap());
    assert_eq!(fetch(1, 1 << 20), [1, 2]);
    assert_eq!(fetch(3, 1 << 20), [3, 4, 5]);
    assert_eq!(
        fetch(3, (2 * one() + one() / 2) as usize),
        [3, 4],
        "max bytes still count"
    );
    assert_eq!(offsets(&log.read(1, 1 << 20).unwrap()), [1, 2, 3, 4, 5, 6]);
}

#[test]
fn an_append_larger_than_a_segment_is_refused() {
    let two = vec![data(0, 1, 1), data(1, 1, 1)];
    let size = size_of(&two);
    let mut log = MemLog::with_segment_bytes(size - 1);
    assert!(matches!(
        log.append_as_follower(two),
        Err(LogError::LargerThanSegment { size: s, segment_bytes })
            if s as u64 == size && segment_bytes == size - 1
    ));
    assert_eq!(RaftLog::end_offset(&log), 0);
    assert!(
        log.append_as_leader(data(0, 1, 40)).is_err(),
        "forty records"
    );
}

#[test]
fn a_follower_append_rolls_once_for_the_whole_response() {
    let mut log = MemLog::with_segment_bytes(3 * one() + one() / 2);
    log.append_as_follower(vec![data(0, 1, 1)]).unwrap();
    log.append_as_follower(vec![data(1, 1, 1), data(2, 1, 1), data(3, 1, 1)])
        .unwrap();
    assert_eq!(log.segment_bases(), &[0, 1][..]);
}

#[test]
fn truncation_drops_the_segments_at_and_above_the_cut_and_a_crash_keeps_a_rolled_one() {
    let mut log = log_of_seven();
    RaftLog::truncate_to(&mut log, 3).unwrap();
    // As the file log's SegmentLog: a segment based at the cut would be empty, so it goes.
    assert_eq!(
        log.segment_bases(),
        &[0][..],
        "segments at and above 3 deleted"
    );
    log.append_as_leader(data(3, 2, 1)).unwrap();
    assert_eq!(log.segment_bases(), &[0, 3][..], "the full segment rolled");
    log.crash().unwrap();
    // The unflushed batch is lost; the rolled segment (a file on disk) stays, empty.
    assert_eq!(log.segment_bases(), &[0, 3][..]);
    assert_eq!(RaftLog::end_offset(&log), 3);
}

#[test]
fn cleaning_keeps_the_segment_holding_the_new_log_start() {
    let mut log = log_of_seven();
    let id = OffsetAndEpoch::new(4, 1);
    let header = SnapshotHeader {
        id,
        last_contained_log_timestamp: 0,
        kraft_version: 0,
        voters: None,
    };
    log.write_snapshot(header, &[]).unwrap();
    assert!(RaftLog::delete_before_snapshot(&mut log, id).unwrap());
    assert_eq!(log.segment_bases(), &[3, 6][..]);
    assert_eq!(offsets(&log.read_for_fetch(4, 1 << 20).unwrap()), [4, 5]);
}
