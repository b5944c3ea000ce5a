//! `FileLog` against `MemLog` (the reference semantics of `RaftLog`) on random operation
//! sequences, byte-exact storage of leader and follower batches, checkpoints and downloads.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::log::LogConfig;
use crate::log::{RollConfig, PARTITION_DIR_NAME};
use crate::protocol::messages::voters_record::Voter;
use crate::protocol::messages::{LeaderChangeMessage, VotersRecord};
use crate::protocol::records::batch::{ATTRIBUTES_OFFSET, CRC_OFFSET};
use crate::protocol::records::BatchBuilder;
use crate::protocol::records::{crc32c, BATCH_HEADER_SIZE};
use crate::raft::convert::records::{decode_batches, encode_batches};
use crate::raft::convert::snapshot::{decode_snapshot, encode_snapshot};
use crate::raft::log::{Batch, RaftLog, SnapshotHeader};
use crate::raft::log::{ControlRecord, Records};
use crate::raft::log::{Encoded, ValidOffsetAndEpoch};
use crate::raft::mem_log::{LogInspect, MemLog};
use crate::raft::types::{Epoch, Offset, OffsetAndEpoch};

/// A temporary directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "kraftd-node-storage-{name}-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn partition(&self) -> PathBuf {
        self.0.join(PARTITION_DIR_NAME)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Small segments, so that reads, truncations and deletions cross segment files.
fn small_segments() -> LogConfig {
    LogConfig {
        roll: RollConfig {
            segment_bytes: 600,
            segment_ms: i64::MAX,
        },
        ..LogConfig::default()
    }
}

fn values(base: Offset, count: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|i| format!("value {}", base + i as i64).into_bytes())
        .collect()
}

fn leader_batch(base: Offset, epoch: Epoch, count: usize, control: bool, ts: i64) -> Batch {
    let records = if control {
        Records::Control(vec![ControlRecord::LeaderChange(LeaderChangeMessage {
            leader_id: 1,
            ..Default::default()
        })])
    } else {
        Records::Data(values(base, count))
    };
    Batch {
        base_offset: base,
        epoch,
        append_time: ts,
        records,
        encoded: Encoded::default(),
    }
}

/// `b` with its fresh encoding attached (what a read of it returns).
fn with_encoding(b: &Batch) -> Batch {
    let mut bytes = Vec::new();
    encode_batches(std::slice::from_ref(b), &mut bytes).unwrap();
    decode_batches(&bytes).unwrap().remove(0)
}

/// Batches as a Java leader could send them: every record with its own timestamp when `skew`.
fn wire_batches(base: Offset, epoch: Epoch, sizes: &[usize], skew: bool, ts: i64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut next = base;
    for &n in sizes {
        let mut b = BatchBuilder::new(next).partition_leader_epoch(epoch);
        for (i, v) in values(next, n).iter().enumerate() {
            let t = if skew { ts + 3 * i as i64 } else { ts };
            b.append(t, None, Some(v), &[]).unwrap();
        }
        b.write_to(&mut out).unwrap();
        next = b.next_offset();
    }
    out
}

fn voters_record() -> VotersRecord {
    VotersRecord {
        version: 0,
        voters: vec![Voter {
            voter_id: 1,
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A snapshot's header and data records.
fn contents(
    id: OffsetAndEpoch,
    kraft_version: i16,
    records: usize,
    ts: i64,
) -> (SnapshotHeader, Vec<Vec<u8>>) {
    let header = SnapshotHeader {
        id,
        last_contained_log_timestamp: ts,
        kraft_version,
        voters: (kraft_version >= 1).then(voters_record),
    };
    (header, values(id.offset, records))
}

/// The same operations on both logs, and every observable answer compared after each.
struct Pair {
    mem: MemLog,
    disk: Option<FileLog>,
    dir: Scratch,
    /// The raft high watermark: never truncated below, snapshots only at or below it.
    hw: Offset,
    epoch: Epoch,
    ts: i64,
}

impl Pair {
    fn new() -> Pair {
        let dir = Scratch::new("pair");
        let disk = FileLog::open(&dir.partition(), small_segments()).unwrap();
        Pair {
            mem: MemLog::with_config(small_segments()),
            disk: Some(disk),
            dir,
            hw: 0,
            epoch: 1,
            ts: 1_700_000_000_000,
        }
    }

    fn disk(&mut self) -> &mut FileLog {
        self.disk.as_mut().unwrap()
    }

    /// The memory log through the trait (`LogCore`'s byte-level inherent methods are not it).
    fn m(&mut self) -> &mut dyn RaftLog {
        &mut self.mem
    }

    /// The file log through the trait.
    fn d(&mut self) -> &mut dyn RaftLog {
        self.disk.as_mut().unwrap()
    }

    /// Batch boundaries of the log at or above `from`, the end offset included.
    fn boundaries(&self, from: Offset) -> Vec<Offset> {
        let mut out: Vec<Offset> = self.mem.batches().iter().map(|b| b.base_offset).collect();
        out.push(self.mem.end_offset());
        out.retain(|&o| o >= from.max(self.mem.start_offset()));
        out
    }

    fn pick<T: Copy>(items: &[T], sel: u8) -> Option<T> {
        (!items.is_empty()).then(|| items[sel as usize % items.len()])
    }

    fn max_epoch(&self) -> Epoch {
        let snap = self.mem.latest_snapshot_id().map_or(0, |s| s.epoch);
        self.epoch.max(snap).max(self.mem.last_fetched_epoch())
    }

    fn apply(&mut self, op: &Op) {
        self.ts += 10;
        let (end, ts) = (self.mem.end_offset(), self.ts);
        match *op {
            Op::Leader(records, bump, control) => {
                self.epoch = self.max_epoch() + bump as i32;
                let b = leader_batch(end, self.epoch, records as usize, control, ts);
                let expected = self.m().append_as_leader(with_encoding(&b));
                same(self.d().append_as_leader(b), expected, "leader append");
            }
            Op::Follower(ref sizes, bump, skew) => {
                self.epoch = self.max_epoch() + bump as i32;
                let bytes = wire_batches(end, self.epoch, sizes, skew, ts);
                let batches = decode_batches(&bytes).unwrap();
                let expected = self.m().append_as_follower(batches.clone());
                same(
                    self.d().append_as_follower(batches),
                    expected,
                    "follower append",
                );
            }
            Op::BadAppend(kind) => {
                let last = self.mem.batches().last().map(|b| b.epoch);
                let bad = match kind % 4 {
                    0 => leader_batch(end + 1, self.epoch, 1, false, ts),
                    1 if last.is_some_and(|e| e > 0) => {
                        leader_batch(end, last.unwrap() - 1, 1, false, ts)
                    }
                    2 => Batch {
                        records: Records::Data(Vec::new()),
                        ..leader_batch(end, self.epoch, 1, false, ts)
                    },
                    _ => {
                        // A good batch then a gap: nothing may be appended.
                        let good = leader_batch(end, self.max_epoch(), 1, false, ts);
                        let gap = leader_batch(end + 5, self.max_epoch(), 1, false, ts);
                        let expected = self.m().append_as_follower(vec![good.clone(), gap.clone()]);
                        assert!(expected.is_err());
                        same(
                            self.d().append_as_follower(vec![good, gap]),
                            expected,
                            "gap",
                        );
                        return;
                    }
                };
                let expected = self.m().append_as_leader(bad.clone());
                assert!(expected.is_err(), "{bad}");
                same(self.d().append_as_leader(bad), expected, "bad append");
            }
            Op::Read(from, max_bytes) => {
                let start = self.mem.start_offset();
                let from = start + from as i64 % (end - start + 1);
                let m = self.m().read(from, max_bytes as usize).unwrap();
                let d = self.d().read(from, max_bytes as usize).unwrap();
                assert_same_batches(&d, &m);
            }
            Op::Truncate(sel) => {
                if let Some(to) = Self::pick(&self.boundaries(self.hw), sel) {
                    self.m().truncate_to(to).unwrap();
                    self.d().truncate_to(to).unwrap();
                }
            }
            Op::TruncateToEnd(back, epoch) => {
                let d = OffsetAndEpoch::new(
                    (end - back as i64).max(0),
                    epoch as i32 % (self.max_epoch() + 2),
                );
                let target = self.m().truncation_offset(d);
                assert_eq!(self.d().truncation_offset(d), target, "{d}");
                if target >= self.hw && self.boundaries(0).contains(&target) {
                    assert_eq!(self.m().truncate_to_end_offset(d).unwrap(), target);
                    assert_eq!(self.d().truncate_to_end_offset(d).unwrap(), target);
                }
            }
            Op::Flush => {
                self.m().flush().unwrap();
                self.d().flush().unwrap();
            }
            Op::Hw(sel) => {
                if let Some(hw) = Self::pick(&self.boundaries(self.hw), sel) {
                    self.hw = hw;
                    self.mem.update_high_watermark(hw);
                    self.disk().update_high_watermark(hw);
                }
            }
            Op::Snapshot(sel, kraft_version, n) => self.snapshot(sel, kraft_version, n),
            Op::Download(ahead, bump, chunk, how) => self.download(ahead, bump, chunk, how),
            Op::DeleteBefore(sel) => {
                let ids: Vec<_> = self
                    .mem
                    .snapshot_ids()
                    .into_iter()
                    .filter(|s| s.offset <= self.hw)
                    .collect();
                if let Some(id) = Self::pick(&ids, sel) {
                    let expected = self.m().delete_before_snapshot(id);
                    same(
                        self.d().delete_before_snapshot(id),
                        expected,
                        "delete before",
                    );
                }
            }
            Op::TruncateToLatest => {
                let expected = self.m().truncate_to_latest_snapshot();
                same(
                    self.d().truncate_to_latest_snapshot(),
                    expected,
                    "truncate to latest",
                );
            }
            Op::Reopen => self.reopen(),
        }
    }

    fn snapshot(&mut self, sel: u8, kraft_version: bool, records: u8) {
        let Some(offset) = Self::pick(&self.boundaries(0), sel).filter(|&o| o <= self.hw) else {
            return;
        };
        let epoch = match self
            .mem
            .batches()
            .iter()
            .find(|b| b.next_offset() == offset)
        {
            Some(b) => b.epoch,
            None => self.mem.earliest_snapshot_id().map_or(0, |s| s.epoch),
        };
        if !matches!(
            self.m().validate_offset_and_epoch(offset, epoch),
            ValidOffsetAndEpoch::Valid(_)
        ) {
            return;
        }
        let id = OffsetAndEpoch::new(offset, epoch);
        let (header, data) = contents(id, kraft_version as i16, records as usize, self.ts);
        let expected = self.mem.write_snapshot(header.clone(), &data);
        let disk = self.disk.as_mut().unwrap();
        same(
            disk.write_snapshot(header, &data),
            expected,
            "create snapshot",
        );
    }

    fn download(&mut self, ahead: u8, bump: bool, chunk: u16, how: u8) {
        let id = OffsetAndEpoch::new(
            self.m().end_offset() + 1 + ahead as i64,
            self.max_epoch() + bump as i32,
        );
        let (header, data) = contents(id, 1, 3, self.ts);
        let mut staging = MemLog::new();
        staging.write_snapshot(header.clone(), &data).unwrap();
        let mut mem_bytes = staging
            .read_snapshot_chunk(id, 0, usize::MAX)
            .unwrap()
            .unwrap();
        let mut disk_bytes = encode_snapshot(&header, &data, 1 << 20).unwrap();
        if how % 4 == 2 {
            mem_bytes.truncate(mem_bytes.len() - 3);
            disk_bytes.truncate(disk_bytes.len() - 3);
        }
        self.m().begin_snapshot_download(id).unwrap();
        self.d().begin_snapshot_download(id).unwrap();
        for part in mem_bytes.chunks(chunk as usize) {
            self.m().append_snapshot_download(part).unwrap();
        }
        for part in disk_bytes.chunks(chunk as usize) {
            self.d().append_snapshot_download(part).unwrap();
        }
        let written = disk_bytes.len() as u64;
        assert_eq!(self.d().snapshot_download(), Some((id, written)));
        match how % 4 {
            0 => {
                assert_eq!(self.m().complete_snapshot_download().unwrap(), id);
                assert_eq!(self.d().complete_snapshot_download().unwrap(), id);
                assert!(self.m().truncate_to_latest_snapshot().unwrap());
                assert!(self.d().truncate_to_latest_snapshot().unwrap());
                self.hw = id.offset;
                self.epoch = self.epoch.max(id.epoch);
            }
            1 => {
                self.m().abort_snapshot_download();
                self.d().abort_snapshot_download();
            }
            2 => {
                assert!(self.m().complete_snapshot_download().is_err());
                assert!(self.d().complete_snapshot_download().is_err());
            }
            _ => {} // left in progress: the next download or a restart replaces it
        }
    }

    /// A clean restart (flush, reopen). Java's log start after a restart is the first segment's
    /// base offset, which may be below where `deleteBeforeSnapshot` had moved it; the next
    /// deletion before the earliest snapshot brings it back, and then everything must match.
    fn reopen(&mut self) {
        self.m().flush().unwrap();
        self.d().flush().unwrap();
        self.disk = None;
        self.disk = Some(FileLog::open(&self.dir.partition(), small_segments()).unwrap());
        self.mem.crash().unwrap();
        let start = self.mem.start_offset();
        assert!(self.disk().start_offset() <= start);
        if self.disk().start_offset() < start {
            let earliest = self.mem.earliest_snapshot_id().unwrap();
            assert_eq!(earliest.offset, start);
            assert!(self.d().delete_before_snapshot(earliest).unwrap());
        }
        let partition = self.dir.partition();
        assert_eq!(
            focused::part_files(&partition),
            0,
            "no download survives a restart"
        );
    }

    fn check(&mut self) {
        let mut ids = self.disk.as_ref().unwrap().snapshot_ids();
        ids.sort();
        assert_eq!(ids, self.mem.snapshot_ids(), "snapshots");
        let max_epoch = self.max_epoch() + 1;
        let boundaries = self.boundaries(0);
        let mem: &dyn RaftLog = &self.mem;
        let disk: &dyn RaftLog = self.disk.as_ref().unwrap();
        assert_eq!(disk.start_offset(), mem.start_offset(), "start");
        assert_eq!(disk.end_offset(), mem.end_offset(), "end");
        assert_eq!(
            disk.flushed_end_offset(),
            mem.flushed_end_offset(),
            "flushed"
        );
        assert_eq!(disk.last_fetched_epoch(), mem.last_fetched_epoch(), "lfe");
        assert_eq!(disk.latest_snapshot_id(), mem.latest_snapshot_id());
        assert_eq!(disk.earliest_snapshot_id(), mem.earliest_snapshot_id());
        assert_eq!(
            disk.snapshot_download().map(|d| d.0),
            mem.snapshot_download().map(|d| d.0)
        );
        for e in -1..=max_epoch {
            assert_eq!(
                disk.end_offset_for_epoch(e),
                mem.end_offset_for_epoch(e),
                "end_offset_for_epoch({e})"
            );
        }
        let mut offsets = boundaries;
        let (start, end) = (mem.start_offset(), mem.end_offset());
        offsets.extend([0, (start - 1).max(0), start + 1, end + 1]);
        for &o in &offsets {
            for e in 0..=max_epoch {
                assert_eq!(
                    disk.validate_offset_and_epoch(o, e),
                    mem.validate_offset_and_epoch(o, e),
                    "validate({o}, {e})"
                );
            }
        }
        assert_same_batches(
            &disk.read(start, usize::MAX).unwrap(),
            &mem.read(start, usize::MAX).unwrap(),
        );
        for id in ids {
            assert_eq!(
                self.disk.as_ref().unwrap().snapshot_records(id).unwrap(),
                self.mem.snapshot_records(id).unwrap(),
                "{id}"
            );
            let size = disk.snapshot_size(id).unwrap();
            assert_eq!(mem.snapshot_size(id), Some(size), "{id}: the same bytes");
            let last = disk.read_snapshot_chunk(id, size - 1, 10).unwrap();
            assert_eq!(last.map(|c| c.len()), Some(1));
            assert_eq!(disk.read_snapshot_chunk(id, size, 10).unwrap(), None);
        }
    }
}

/// The same answer from both logs: equal values, or errors that say the same.
fn same<T: PartialEq + std::fmt::Debug>(
    disk: Result<T, crate::raft::LogError>,
    mem: Result<T, crate::raft::LogError>,
    what: &str,
) {
    let text = |r: Result<T, crate::raft::LogError>| r.map_err(|e| e.to_string());
    assert_eq!(text(disk), text(mem), "{what}");
}

/// Equal batches, and equal bytes: the stored bytes are what was appended.
fn assert_same_batches(disk: &[Batch], mem: &[Batch]) {
    assert_eq!(disk, mem);
    for (d, m) in disk.iter().zip(mem) {
        assert_eq!(d.encoded.bytes(), m.encoded.bytes(), "bytes of {m}");
    }
}

/// One step; `u8` selectors pick among the valid choices at the time.
#[derive(Debug, Clone)]
enum Op {
    /// Records, new epoch, control batch.
    Leader(u8, bool, bool),
    /// Batch sizes, new epoch, records with their own timestamps (bytes only Java writes).
    Follower(Vec<usize>, bool, bool),
    /// An append both must refuse.
    BadAppend(u8),
    /// From offset (any, batch boundary or not), max bytes.
    Read(u8, u16),
    Truncate(u8),
    /// Kafka's truncateToEndOffset for a DivergingEpoch: offset below the end, epoch.
    TruncateToEnd(u8, u8),
    Flush,
    Hw(u8),
    /// Snapshot at a boundary <= HW: selector, kraft.version 1, data records.
    Snapshot(u8, bool, u8),
    /// Offset ahead, new epoch, chunk size, how it ends (complete, abort, corrupt, left).
    Download(u8, bool, u16, u8),
    DeleteBefore(u8),
    TruncateToLatest,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    use proptest::bool::weighted;
    use proptest::collection::vec;
    prop_oneof![
        6 => (1u8..5, weighted(0.2), weighted(0.2)).prop_map(|(n, b, c)| Op::Leader(n, b, c)),
        4 => (vec(1usize..5, 1..4), weighted(0.2), any::<bool>())
            .prop_map(|(n, b, s)| Op::Follower(n, b, s)),
        1 => any::<u8>().prop_map(Op::BadAppend),
        2 => (any::<u8>(), 0u16..400).prop_map(|(f, m)| Op::Read(f, m)),
        2 => any::<u8>().prop_map(Op::Truncate),
        1 => (0u8..12, any::<u8>()).prop_map(|(b, e)| Op::TruncateToEnd(b, e)),
        3 => Just(Op::Flush),
        3 => any::<u8>().prop_map(Op::Hw),
        3 => (any::<u8>(), any::<bool>(), 0u8..4).prop_map(|(s, k, n)| Op::Snapshot(s, k, n)),
        1 => (0u8..20, any::<bool>(), 1u16..300, any::<u8>())
            .prop_map(|(a, b, c, e)| Op::Download(a, b, c, e)),
        2 => any::<u8>().prop_map(Op::DeleteBefore),
        1 => Just(Op::TruncateToLatest),
        1 => Just(Op::Reopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn disk_log_behaves_as_mem_log(ops in proptest::collection::vec(op(), 1..60)) {
        let mut pair = Pair::new();
        for op in &ops {
            pair.apply(op);
            pair.check();
        }
        pair.apply(&Op::Reopen);
        pair.check();
    }
}

#[path = "storage_focused_tests.rs"]
mod focused;
