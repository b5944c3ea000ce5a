//! `cargo bench --bench raft_startup`: how long a node takes to start on a large metadata log
//! (`FileLog::open`, then `Raft::new`, which rebuilds the voter history from the latest
//! snapshot and the log's control batches after it), and how much memory `Raft::new` takes.
//! A measurement, never a timed test; not part of `make test`.
//!
//! Knobs (environment): BENCH_STARTUP_LOG_MB (1024) of 100-byte records in batches of 1000,
//! BENCH_STARTUP_SNAPSHOT_MB (0; else a snapshot of that size ending at 3/4 of the log, whose
//! header batch carries kraft.version 1 and a voter set), BENCH_DIR (target/bench/data).
//! Run it in a process of its own per setting: the memory figure is the process's peak.

// clippy.toml keeps the clock, randomness, threads and file I/O out of src/raft;
// a benchmark owns its clock and files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::PathBuf;
use std::time::Instant as WallClock;

use kraftd::log::{FileLog, LogConfig};
use kraftd::protocol::codec::Uuid;
use kraftd::protocol::messages::voters_record::Voter;
use kraftd::protocol::messages::VotersRecord;
use kraftd::protocol::records::BatchBuilder;
use kraftd::raft::{
    HostPort, Instant, MemQuorumStateStore, OffsetAndEpoch, Raft, RaftConfig, RaftLog,
    SnapshotHeader,
};

fn env(key: &str, default: u64) -> u64 {
    std::env::var(key).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|e| panic!("{key}={v}: not a number: {e}"))
    })
}

fn status_kib(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{key} in /proc/self/status"))
}

fn main() {
    let log_mb = env("BENCH_STARTUP_LOG_MB", 1024);
    let snapshot_mb = env("BENCH_STARTUP_SNAPSHOT_MB", 0);
    let root = std::env::var("BENCH_DIR").map_or_else(
        |_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench/data"),
        PathBuf::from,
    );
    let dir = root.join(format!("raft-startup-{}", std::process::id()));
    let part = dir.join("__cluster_metadata-0");
    let value = {
        let mut v = vec![7u8; 100];
        v[0] = 1;
        v
    };
    {
        let mut log = FileLog::open(&part, LogConfig::default()).unwrap();
        log.initialize_leader_epoch(1).unwrap();
        let mut written = 0u64;
        while written < log_mb << 20 {
            let mut b = BatchBuilder::new(log.end_offset()).partition_leader_epoch(1);
            for _ in 0..1000 {
                b.append(0, None, Some(&value), &[]).unwrap();
            }
            let bytes = b.build().unwrap();
            written += bytes.len() as u64;
            log.append_bytes_as_leader(&bytes, 1).unwrap();
        }
        log.flush().unwrap();
        if snapshot_mb > 0 {
            let end = log.end_offset() / 4 * 3 / 1000 * 1000;
            let voters = VotersRecord {
                voters: vec![Voter {
                    voter_id: 1,
                    ..Default::default()
                }],
                ..Default::default()
            };
            let header = SnapshotHeader {
                id: OffsetAndEpoch::new(end, 1),
                last_contained_log_timestamp: 0,
                kraft_version: 1,
                voters: Some(voters),
            };
            let mut writer = log.create_snapshot(header).unwrap();
            for _ in 0..(snapshot_mb << 20) / 100 / 1000 {
                writer.append(std::iter::repeat_n(&value, 1000)).unwrap();
            }
            log.freeze_snapshot(writer).unwrap();
        }
    }
    let opened_at = WallClock::now();
    let log = FileLog::open(&part, LogConfig::default()).unwrap();
    let opened = opened_at.elapsed();
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting VmHWM (Linux 4.0+)");
    let base = status_kib("VmRSS:");
    let mut cfg = RaftConfig::new(Some(1), Uuid::from_u64s(7, 1), "raft-startup");
    cfg.static_voters = vec![(1, HostPort::new("localhost", 9093))];
    let started_at = WallClock::now();
    let raft = Raft::new(cfg, log, MemQuorumStateStore::new(), Instant(0));
    let started = started_at.elapsed();
    let grew = (status_kib("VmHWM:") - base) / 1024;
    assert_eq!(raft.fatal_error(), None);
    println!(
        "log {log_mb} MiB, snapshot {snapshot_mb} MiB: FileLog::open {:.0} ms, Raft::new {:.0} ms, Raft::new peak memory +{grew} MiB",
        opened.as_secs_f64() * 1e3,
        started.as_secs_f64() * 1e3
    );
    drop(raft);
    std::fs::remove_dir_all(&dir).unwrap();
}
