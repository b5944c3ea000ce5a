//! The streaming snapshot writer and reader over a memory log: batches cut at the maximum
//! batch size, the header and footer batches, records back in order, refusals and faults.

use super::*;
use crate::log::{LogConfig, MemoryLog};
use crate::protocol::records::split_batches;
use crate::raft::log::{ControlRecord, LogError, SnapshotHeader};
use crate::raft::mem_log::LogInspect;
use crate::raft::types::{OffsetAndEpoch, VoterSet};
use crate::raft::voters::voters_record;
use crate::raft::SnapshotReader;

fn header(id: OffsetAndEpoch, kraft_version: i16) -> SnapshotHeader {
    let voters = VoterSet::from_static("CONTROLLER", &[(1, addr(1)), (2, addr(2))]);
    SnapshotHeader {
        id,
        last_contained_log_timestamp: 1_234,
        kraft_version,
        voters: (kraft_version >= 1).then(|| voters_record(&voters)),
    }
}

fn record(i: usize, len: usize) -> Vec<u8> {
    let mut v = vec![(i % 251) as u8; len];
    v[..8.min(len)].copy_from_slice(&(i as u64).to_be_bytes()[..8.min(len)]);
    v
}

fn log_with_batch_size(max_batch_size: usize) -> MemoryLog {
    MemoryLog::with_config(LogConfig {
        max_batch_size,
        ..LogConfig::default()
    })
}

#[test]
fn records_appended_in_chunks_come_back_in_batches_of_at_most_the_batch_size() {
    let mut log = log_with_batch_size(4096);
    let id = OffsetAndEpoch::new(40, 3);
    let mut writer = log.create_snapshot(header(id, 1)).unwrap();
    let records: Vec<Vec<u8>> = (0..2_002).map(|i| record(i, 10 + i % 300)).collect();
    for chunk in records.chunks(7) {
        writer.append(chunk).unwrap();
    }
    assert_eq!(writer.record_count(), 2_002);
    assert!(
        writer.size_in_bytes() > 0,
        "full batches are written as they fill"
    );
    log.freeze_snapshot(writer).unwrap();

    let size = log.snapshot_size(id).unwrap() as usize;
    let bytes = log.read_snapshot_chunk(id, 0, size).unwrap().unwrap();
    let split = split_batches(&bytes);
    assert!(split.end.is_clean());
    assert!(split.batches.len() > 10, "{} batches", split.batches.len());
    assert!(split.batches.iter().all(|b| b.bytes().len() <= 4096));
    assert!(split
        .batches
        .iter()
        .all(|b| b.partition_leader_epoch() == 3));
    // As in Java's BatchAccumulator, the records of one append are never split.
    for b in split.batches.iter().filter(|b| !b.is_control()) {
        assert_eq!(b.records().unwrap().iter().count() % 7, 0);
    }
    // Offsets are snapshot-relative and contiguous.
    let mut next = 0;
    for b in &split.batches {
        assert_eq!(b.base_offset(), next);
        next = b.next_offset();
    }

    let reader = log.open_snapshot(id).unwrap().unwrap();
    assert_eq!(reader.header(), &header(id, 1));
    assert_eq!(reader.last_contained_log_timestamp(), 1_234);
    let batches: Vec<Batch> = reader.map(Result::unwrap).collect();
    assert_eq!(batches.len(), split.batches.len());
    let first = match &batches[0].records {
        Records::Control(r) => r.clone(),
        other => panic!("{other:?}"),
    };
    assert!(matches!(first[0], ControlRecord::SnapshotHeader(_)));
    assert!(matches!(first[1], ControlRecord::KRaftVersion(_)));
    assert!(matches!(first[2], ControlRecord::Voters(_)));
    assert!(matches!(
        &batches.last().unwrap().records,
        Records::Control(r) if matches!(r[..], [ControlRecord::SnapshotFooter(_)])
    ));
    let back = log.snapshot_records(id).unwrap().unwrap();
    assert_eq!(back, (header(id, 1), records));
}

#[test]
fn an_empty_snapshot_is_a_header_and_a_footer() {
    let mut log = MemLog::new();
    let id = OffsetAndEpoch::new(0, 0);
    log.format_bootstrap(0, None);
    let reader = log.open_snapshot(id).unwrap().unwrap();
    assert_eq!(reader.header().kraft_version, 0);
    assert_eq!(reader.map(Result::unwrap).count(), 2);
    assert!(matches!(
        log.create_snapshot(header(id, 0)),
        Err(LogError::SnapshotExists(i)) if i == id
    ));
}

#[test]
fn a_dropped_writer_leaves_no_snapshot() {
    let mut log = MemLog::new();
    let id = OffsetAndEpoch::new(5, 1);
    let mut writer = log.create_snapshot(header(id, 0)).unwrap();
    writer.append([b"x".to_vec()]).unwrap();
    drop(writer);
    assert_eq!(log.latest_snapshot_id(), None);
    assert!(log.open_snapshot(id).unwrap().is_none());
    // The id is free again.
    let writer = log.create_snapshot(header(id, 0)).unwrap();
    log.freeze_snapshot(writer).unwrap();
    assert_eq!(log.latest_snapshot_id(), Some(id));
}

#[test]
fn a_record_larger_than_a_batch_is_refused_not_a_fault() {
    let mut log = log_with_batch_size(1024);
    let mut writer = log
        .create_snapshot(header(OffsetAndEpoch::new(5, 1), 0))
        .unwrap();
    // The open batch fills up to the limit, then a new one starts: never an error.
    for i in 0..50 {
        writer.append([record(i, 100)]).unwrap();
    }
    // Kafka's RecordBatchTooLargeException: records no batch can hold are refused, one record
    // or the records of one append (which stay in one batch).
    for refused in [vec![vec![7u8; 10_000]], vec![record(0, 100); 10]] {
        let err = writer.append(&refused).unwrap_err();
        assert!(
            matches!(err, LogError::Refused(_)) && !err.is_fault(),
            "{err}"
        );
        assert!(err.to_string().contains("cannot be in one batch"), "{err}");
    }
    assert_eq!(writer.record_count(), 50);
    log.freeze_snapshot(writer).unwrap();
    let (_, data) = log
        .snapshot_records(OffsetAndEpoch::new(5, 1))
        .unwrap()
        .unwrap();
    assert_eq!(data, (0..50).map(|i| record(i, 100)).collect::<Vec<_>>());
}

#[test]
fn bytes_that_are_not_a_snapshot_do_not_open() {
    let id = OffsetAndEpoch::new(9, 2);
    let mut log = MemLog::new();
    log.write_snapshot(header(id, 0), &[b"a".to_vec(), b"b".to_vec()])
        .unwrap();
    let size = log.snapshot_size(id).unwrap() as usize;
    let bytes = log.read_snapshot_chunk(id, 0, size).unwrap().unwrap();
    // A data batch first.
    let data_only = split_batches(&bytes).batches[1].bytes().to_vec();
    let err = SnapshotReader::from_bytes(id, data_only).unwrap_err();
    assert!(err.to_string().contains("control batch"), "{err}");
    // A torn tail: the header opens, the reader ends with an error naming the position.
    let torn = bytes[..bytes.len() - 5].to_vec();
    let items: Vec<_> = SnapshotReader::from_bytes(id, torn).unwrap().collect();
    let err = items.last().unwrap().as_ref().unwrap_err();
    assert!(matches!(err, LogError::UndecodableSnapshot { .. }), "{err}");
    assert!(err.is_fault() && err.to_string().contains("needs"), "{err}");
    // A flipped bit: a CRC error, then nothing more.
    let mut flipped = bytes.clone();
    let at = split_batches(&bytes).batches[1].position() + 70;
    flipped[at] ^= 1;
    let items: Vec<_> = SnapshotReader::from_bytes(id, flipped).unwrap().collect();
    assert_eq!(items.len(), 2, "the header, then the error");
    assert!(items[1].is_err());
    assert!(SnapshotReader::from_bytes(id, Vec::new()).is_err());
}
