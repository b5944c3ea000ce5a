//! Writing and reading a 100 MiB snapshot holds about one batch in memory: the state machine
//! streams its records into the writer in chunks, the writer puts every full batch (at most
//! 8 MiB) into the `.checkpoint.part` file at once, and the reader yields the frozen file's
//! batches one at a time. Peak resident memory is measured around each (Linux: VmHWM, reset
//! through /proc/self/clear_refs), in a process of its own (this file is one test binary with
//! one test).

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a test harness owns its files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::PathBuf;
use std::time::Duration;

use kraftd::log::{FileLog, LogConfig};
use kraftd::protocol::codec::Uuid;
use kraftd::raft::{
    Endpoints, HostPort, Input, Instant, MemQuorumStateStore, OffsetAndEpoch, Raft, RaftConfig,
    RaftLog, Randomness,
};

const SNAPSHOT_MIB: usize = 100;
const RECORD_BYTES: usize = 1024;
/// One batch of records (8 MiB) being built and one being encoded, with room for the
/// allocator: a writer that gathered the snapshot would need more than 100 MiB.
const BOUND_MIB: u64 = 40;

fn status_kib(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{key} in /proc/self/status"))
}

/// Resets the peak to the current resident size; returns that size (KiB).
fn reset_peak() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting VmHWM (Linux 4.0+)");
    status_kib("VmRSS:")
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A single voter that leads and has committed one record.
fn leader(dir: &Scratch) -> Raft<FileLog, MemQuorumStateStore> {
    let log = FileLog::open(&dir.0.join("__cluster_metadata-0"), LogConfig::default()).unwrap();
    let address = HostPort::new("localhost", 9093);
    let mut cfg = RaftConfig::new(Some(1), Uuid::from_u64s(7, 1), "snapshot-memory");
    cfg.listeners = Endpoints::single("CONTROLLER", address.clone());
    cfg.static_voters = vec![(1, address)];
    cfg.randomness = Randomness::Seeded(1);
    cfg.append_linger = Duration::ZERO;
    let mut raft = Raft::new(cfg, log, MemQuorumStateStore::new(), Instant(0));
    let mut t = 0;
    while !raft.is_leader() {
        t += 10;
        raft.step(Instant(t), Input::Tick);
        assert!(t < 10_000, "a single voter leads");
    }
    let epoch = raft.epoch();
    let proposed = raft
        .propose(Instant(t), epoch, vec![b"x".to_vec()])
        .unwrap();
    while raft.high_watermark() <= Some(proposed.last_offset) {
        t += 10;
        raft.step(Instant(t), Input::Tick);
    }
    raft
}

/// Chunk `i` of the state machine's records (generated as written, never all at once).
fn chunk(i: usize) -> Vec<Vec<u8>> {
    (0..1024)
        .map(|j| {
            let mut v = vec![(i ^ j) as u8; RECORD_BYTES];
            v[..8].copy_from_slice(&((i * 1024 + j) as u64).to_be_bytes());
            v
        })
        .collect()
}

#[test]
fn a_100_mib_snapshot_is_written_and_read_in_bounded_memory() {
    let dir = Scratch(
        std::env::temp_dir().join(format!("kraftd-snapshot-memory-{}", std::process::id())),
    );
    let _ = std::fs::remove_dir_all(&dir.0);
    let mut raft = leader(&dir);
    let id = OffsetAndEpoch::new(raft.high_watermark().unwrap(), raft.epoch());

    let base = reset_peak();
    let mut writer = raft.snapshot_writer(id, 1_000).unwrap();
    for i in 0..SNAPSHOT_MIB {
        writer.append(chunk(i)).unwrap();
    }
    raft.freeze_snapshot(writer).unwrap();
    let written_mib = (status_kib("VmHWM:") - base) / 1024;
    let size = raft.log().snapshot_size(id).unwrap();
    assert!(size > (SNAPSHOT_MIB as u64) << 20, "{size} bytes");

    let base = reset_peak();
    let reader = raft
        .snapshot_reader(id)
        .unwrap()
        .expect("the frozen snapshot");
    let mut records = 0;
    for (i, record) in reader.records().enumerate() {
        let record = record.unwrap();
        assert_eq!(record.len(), RECORD_BYTES);
        assert_eq!(record[..8], (i as u64).to_be_bytes());
        records += 1;
    }
    let read_mib = (status_kib("VmHWM:") - base) / 1024;
    assert_eq!(records, SNAPSHOT_MIB * 1024);

    eprintln!(
        "a {} MiB snapshot: peak memory +{written_mib} MiB writing, +{read_mib} MiB reading",
        size >> 20
    );
    assert!(
        written_mib < BOUND_MIB,
        "writing took {written_mib} MiB more"
    );
    assert!(read_mib < BOUND_MIB, "reading took {read_mib} MiB more");
}
