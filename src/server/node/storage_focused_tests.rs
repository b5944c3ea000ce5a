//! Focused `FileLog` tests: byte-exact follower batches, reads and Fetch answers across
//! segments, checkpoints, downloads, retention.

use super::*;
use crate::protocol::records::split_batches;
use crate::raft::LogError;

/// Kafka's v2 batch with its records section gzip-compressed, as a Java leader configured
/// with compression would write it.
fn gzip_batch(base: Offset, epoch: Epoch, count: usize) -> Vec<u8> {
    let plain = wire_batches(base, epoch, &[count], true, 1_000);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain[BATCH_HEADER_SIZE..]).unwrap();
    let mut out = plain[..BATCH_HEADER_SIZE].to_vec();
    out.extend(gz.finish().unwrap());
    let len = (out.len() - 12) as i32; // batch length: everything after offset and length
    out[8..12].copy_from_slice(&len.to_be_bytes());
    let attributes = i16::from_be_bytes([out[ATTRIBUTES_OFFSET], out[ATTRIBUTES_OFFSET + 1]]) | 1;
    out[ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2].copy_from_slice(&attributes.to_be_bytes());
    let crc = crc32c(&out[ATTRIBUTES_OFFSET..]);
    out[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    out
}

#[test]
fn follower_batches_are_stored_and_read_back_byte_for_byte() {
    let dir = Scratch::new("verbatim");
    let mut log = FileLog::open(&dir.partition(), LogConfig::default()).unwrap();
    let mut sent = gzip_batch(0, 1, 3);
    sent.extend(wire_batches(3, 1, &[2], true, 2_000));
    let mut b = BatchBuilder::new(5)
        .partition_leader_epoch(1)
        .log_append_time(9_999);
    b.append(4_000, None, Some(b"appended".as_slice()), &[])
        .unwrap();
    b.write_to(&mut sent).unwrap();
    let batches = decode_batches(&sent).unwrap();
    assert_eq!(batches.len(), 3);
    let mut reencoded = Vec::new();
    encode_batches(
        &batches
            .iter()
            .map(|b| Batch {
                encoded: Encoded::default(),
                ..b.clone()
            })
            .collect::<Vec<_>>(),
        &mut reencoded,
    )
    .unwrap();
    assert_ne!(reencoded, sent, "a fresh encoding would differ");
    log.append_as_follower(batches.clone()).unwrap();
    RaftLog::flush(&mut log).unwrap();
    let segment = std::fs::read(&log.segment_paths()[0]).unwrap();
    assert_eq!(segment, sent, "the segment holds the leader's bytes");
    let read = log.read(0, usize::MAX).unwrap();
    assert_same_batches(&read, &batches);
    let mut again = Vec::new();
    encode_batches(&read, &mut again).unwrap();
    assert_eq!(again, sent, "and forwards them unchanged");

    // A leader batch is stored as its fresh encoding.
    let b = leader_batch(6, 2, 2, false, 3_000);
    log.append_as_leader(b.clone()).unwrap();
    let read = log.read(6, 1).unwrap();
    assert_same_batches(&read, &[with_encoding(&b)]);
}

#[test]
fn reads_span_segments_and_respect_the_budget() {
    let dir = Scratch::new("reads");
    let mut log = FileLog::open(&dir.partition(), small_segments()).unwrap();
    for i in 0..30 {
        log.append_as_leader(leader_batch(i * 3, 1, 3, false, 1_000))
            .unwrap();
    }
    assert!(log.segment_paths().len() > 3);
    let read = |from, max| log.read(from, max).unwrap();
    let all = read(0, usize::MAX);
    assert_eq!(all.len(), 30);
    let seven: usize = all[..7].iter().map(Batch::size_in_bytes).sum();
    assert_eq!(read(0, 0).len(), 1, "at least one batch");
    assert_eq!(read(0, seven).len(), 7);
    assert_eq!(read(0, seven - 1).len(), 6);
    assert_eq!(read(4, seven).first().map(|b| b.base_offset), Some(3));
    assert!(read(90, 100).is_empty());
}

/// A Java follower refuses, fatally, an append larger than its segment size
/// (`RecordBatchTooLargeException`), and Java's own leader never answers a Fetch with batches
/// from two segments: neither does kraftd.
#[test]
fn a_fetch_answer_never_crosses_a_segment_boundary() {
    let dir = Scratch::new("fetch-segments");
    let mut log = FileLog::open(&dir.partition(), small_segments()).unwrap();
    for i in 0..30 {
        log.append_as_leader(leader_batch(i * 3, 1, 3, false, 1_000))
            .unwrap();
    }
    let segments: Vec<Offset> = log
        .segment_paths()
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.trim_end_matches(".log").parse().unwrap()
        })
        .collect();
    assert!(segments.len() > 3, "{segments:?}");
    for from in (0..90).step_by(3) {
        let answer = log.read_for_fetch(from, usize::MAX).unwrap();
        assert!(!answer.is_empty(), "nothing at {from}");
        let first = answer[0].base_offset;
        let segment_end = segments
            .iter()
            .copied()
            .find(|&s| s > first)
            .unwrap_or(i64::MAX);
        assert!(
            answer.iter().all(|b| b.last_offset() < segment_end),
            "a fetch from {from} crosses the segment boundary at {segment_end}"
        );
        let bytes: usize = answer.iter().map(Batch::size_in_bytes).sum();
        assert!(
            bytes <= small_segments().roll.segment_bytes as usize,
            "{bytes} bytes"
        );
    }
    // The budget still applies, and at least one batch comes back.
    assert_eq!(log.read_for_fetch(0, 0).unwrap().len(), 1);
}

#[test]
fn snapshots_are_kafka_checkpoints() {
    let dir = Scratch::new("snapshots");
    let partition = dir.partition();
    std::fs::create_dir_all(&partition).unwrap();
    // The bootstrap checkpoint `kafka-storage format --standalone` writes.
    let bootstrap = crate::log::bootstrap::Bootstrap {
        metadata_version: 33,
        features: Default::default(),
        kraft_version: 1,
        voters: Some(voters_record().voters),
        scram: Default::default(),
    };
    let zero = OffsetAndEpoch::new(0, 0);
    std::fs::write(
        partition.join(crate::log::snapshot::file_name(zero)),
        bootstrap.checkpoint_bytes(1_000).unwrap(),
    )
    .unwrap();
    let mut log = FileLog::open(&partition, LogConfig::default()).unwrap();
    let (h, data) = log.snapshot_records(zero).unwrap().unwrap();
    assert_eq!((h.kraft_version, h.voters), (1, Some(voters_record())));
    assert_eq!(data.len(), 1, "the metadata.version FeatureLevelRecord");

    for e in 1..=4 {
        let end = RaftLog::end_offset(&log);
        log.append_as_leader(leader_batch(end, e, 2, false, 5))
            .unwrap();
    }
    for (kraft_version, records) in [(0, 0), (1, 5000)] {
        let id = OffsetAndEpoch::new(2 + 2 * kraft_version as i64, 1 + kraft_version as i32);
        let (header, data) = contents(id, kraft_version, records, 77);
        log.write_snapshot(header.clone(), &data).unwrap();
        assert!(matches!(
            log.create_snapshot(header.clone()),
            Err(LogError::SnapshotExists(i)) if i == id
        ));
        assert_eq!(log.snapshot_records(id).unwrap(), Some((header, data)));
        let size = log.snapshot_size(id).unwrap();
        let mut bytes = Vec::new();
        while let Some(chunk) = log
            .read_snapshot_chunk(id, bytes.len() as u64, 1000)
            .unwrap()
        {
            bytes.extend(chunk);
        }
        assert_eq!(bytes.len() as u64, size);
        crate::log::snapshot::validate_bytes(&bytes).unwrap();
    }
    // Many records split into several data batches, each below the batch size limit.
    let (header, data) = contents(OffsetAndEpoch::new(9, 1), 0, 5000, 1);
    let bytes = encode_snapshot(&header, &data, 4096).unwrap();
    let split = split_batches(&bytes);
    assert!(split.batches.len() > 10);
    assert!(split.batches.iter().all(|b| b.bytes().len() <= 4096));
    let back = decode_snapshot(OffsetAndEpoch::new(9, 1), bytes.clone()).unwrap();
    assert_eq!(back, (header, data));
    assert!(decode_snapshot(zero, bytes[..bytes.len() - 1].to_vec()).is_err());
}

pub(super) fn part_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".part")
        })
        .count()
}

#[test]
fn snapshot_downloads_freeze_validate_and_clean_up() {
    let dir = Scratch::new("download");
    let partition = dir.partition();
    let mut file = FileLog::open(&partition, LogConfig::default()).unwrap();
    let log: &mut dyn RaftLog = &mut file;
    log.append_as_leader(leader_batch(0, 1, 2, false, 5))
        .unwrap();
    let id = OffsetAndEpoch::new(50, 3);
    let (header, data) = contents(id, 1, 40, 9);
    let bytes = encode_snapshot(&header, &data, 1 << 20).unwrap();

    assert!(log.append_snapshot_download(b"x").is_err(), "no download");
    log.begin_snapshot_download(id).unwrap();
    log.append_snapshot_download(&bytes[..100]).unwrap();
    assert_eq!(log.snapshot_download(), Some((id, 100)));
    assert_eq!(part_files(&partition), 1);
    log.abort_snapshot_download();
    assert_eq!((log.snapshot_download(), part_files(&partition)), (None, 0));

    log.begin_snapshot_download(id).unwrap();
    log.append_snapshot_download(&bytes[..bytes.len() - 1])
        .unwrap();
    assert!(log.complete_snapshot_download().is_err(), "a torn footer");
    assert_eq!((log.snapshot_download(), part_files(&partition)), (None, 0));
    assert_eq!(log.latest_snapshot_id(), None);

    log.begin_snapshot_download(OffsetAndEpoch::new(7, 7))
        .unwrap();
    log.begin_snapshot_download(id).unwrap(); // replaces the first
    for chunk in bytes.chunks(333) {
        log.append_snapshot_download(chunk).unwrap();
    }
    assert_eq!(log.complete_snapshot_download().unwrap(), id);
    assert_eq!(part_files(&partition), 0);
    assert!(log.truncate_to_latest_snapshot().unwrap());
    assert!(!log.truncate_to_latest_snapshot().unwrap());
    assert_eq!((log.start_offset(), log.end_offset()), (50, 50));
    assert_eq!(log.last_fetched_epoch(), 3);
    let reader = log.open_snapshot(id).unwrap().unwrap();
    assert_eq!(reader.header(), &header);
    let records: Result<Vec<Vec<u8>>, _> = reader.records().collect();
    assert_eq!(records.unwrap(), data);

    // The same snapshot again: validated in memory, the frozen file left alone.
    log.begin_snapshot_download(id).unwrap();
    log.append_snapshot_download(&bytes).unwrap();
    assert_eq!(part_files(&partition), 0);
    assert_eq!(log.complete_snapshot_download().unwrap(), id);
    assert_eq!(log.snapshot_size(id), Some(bytes.len() as u64));
}

#[test]
fn retention_needs_the_high_watermark() {
    let dir = Scratch::new("retention");
    let config = LogConfig {
        retention_bytes: 0,
        ..small_segments()
    };
    let mut log = FileLog::open(&dir.partition(), config).unwrap();
    for i in 0..20 {
        log.append_as_leader(leader_batch(i * 3, 1, 3, false, 5))
            .unwrap();
    }
    RaftLog::flush(&mut log).unwrap();
    for offset in [30, 45] {
        let (header, data) = contents(OffsetAndEpoch::new(offset, 1), 0, 1, 5);
        log.write_snapshot(header, &data).unwrap();
    }
    assert!(
        !log.maybe_clean(10, 0).unwrap(),
        "the HW is still at the log start"
    );
    assert!(log.maybe_clean(10, 60).unwrap());
    assert_eq!(log.start_offset(), 45);
    assert_eq!(log.earliest_snapshot_id(), Some(OffsetAndEpoch::new(45, 1)));
}

/// Kafka's `KRaftControlRecordStateMachine` takes the voter history from the latest snapshot
/// and the log after it: the start-up reads nothing below the snapshot (here a batch whose
/// bytes rotted after the log was opened) and decodes only the control batches after it.
#[test]
fn raft_start_up_reads_the_voter_history_from_the_latest_snapshot_on() {
    use crate::raft::{Instant, MemQuorumStateStore, Raft, RaftConfig, SnapshotHeader};
    use std::os::unix::fs::FileExt;

    let dir = Scratch::new("start-up");
    let mut log = FileLog::open(&dir.partition(), LogConfig::default()).unwrap();
    for i in 0..5 {
        log.append_as_leader(leader_batch(i * 2, 1, 2, false, 5))
            .unwrap();
    }
    let snapshot = OffsetAndEpoch::new(10, 1);
    let header = SnapshotHeader {
        id: snapshot,
        last_contained_log_timestamp: 5,
        kraft_version: 1,
        voters: Some(voters_record()),
    };
    log.write_snapshot(header, &values(0, 3)).unwrap();
    let mut two = voters_record();
    two.voters.push(Voter {
        voter_id: 2,
        ..two.voters[0].clone()
    });
    let voters_batch = |base| Batch {
        base_offset: base,
        epoch: 2,
        append_time: 6,
        records: Records::Control(vec![ControlRecord::Voters(two.clone())]),
        encoded: Encoded::default(),
    };
    log.append_as_leader(voters_batch(10)).unwrap();
    log.append_as_leader(leader_batch(11, 2, 3, false, 7))
        .unwrap();
    RaftLog::flush(&mut log).unwrap();
    // Rot inside the records of the first batch (below the snapshot) and of the data batch
    // after the voters: neither is read at start-up.
    let segment = log.segment_paths()[0].clone();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&segment)
        .unwrap();
    let data_after = split_batches(&std::fs::read(&segment).unwrap()).batches[6].position();
    for at in [70, data_after + 70] {
        file.write_all_at(&[0xee], at as u64).unwrap();
    }
    let cfg = || {
        let mut c = RaftConfig::new(Some(3), crate::protocol::codec::Uuid::from_u64s(1, 3), "c");
        c.static_voters = vec![(1, crate::raft::HostPort::new("h", 1))];
        c
    };
    let raft = Raft::new(cfg(), log, MemQuorumStateStore::new(), Instant(0));
    assert_eq!(raft.fatal_error(), None);
    assert_eq!(raft.kraft_version(), 1, "from the snapshot's header batch");
    assert_eq!(
        raft.voters().ids().collect::<Vec<_>>(),
        [1, 2],
        "from the log"
    );
    // A control batch after the snapshot is read (and checked): rot there stops the start.
    let (mut log, _) = raft.into_parts();
    RaftLog::truncate_to(&mut log, 10).unwrap();
    log.append_as_leader(voters_batch(10)).unwrap();
    RaftLog::flush(&mut log).unwrap();
    let position = split_batches(&std::fs::read(&segment).unwrap()).batches[5].position();
    file.write_all_at(&[0xee], position as u64 + 70).unwrap();
    let raft = Raft::new(cfg(), log, MemQuorumStateStore::new(), Instant(0));
    let fatal = raft
        .fatal_error()
        .expect("a corrupt control batch halts the start");
    assert!(fatal.to_string().contains("offset 10"), "{fatal}");
}
