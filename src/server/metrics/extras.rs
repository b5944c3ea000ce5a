//! kraftd's own gauges and counters, under a `kraftd_` prefix: what Java does not export and an
//! operator of the quorum needs (the runbook's disk, snapshot, replication and election
//! questions). docs/monitoring.md lists them.

use super::text::Exposition;
use crate::log::fsync_latency::FsyncLatency;
use crate::raft::metrics::VoterProgress;
use crate::server::disk_space::DiskSpace;

/// The metadata log directory's filesystem gauges (the doctor's `disk` check reads them).
pub const METADATA_DIR_FREE_BYTES: &str = "kraftd_metadata_dir_free_bytes";
pub const METADATA_DIR_SIZE_BYTES: &str = "kraftd_metadata_dir_size_bytes";

/// The last snapshot this node wrote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SnapshotGauges {
    pub bytes: u64,
    pub records: u64,
    pub duration_seconds: f64,
    /// Seconds since it was written.
    pub age_seconds: f64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct KraftdSample {
    /// The metadata log directory's filesystem (None when statvfs failed).
    pub metadata_dir: Option<DiskSpace>,
    pub fsync: Option<FsyncLatency>,
    pub last_snapshot: Option<SnapshotGauges>,
    /// Elections this node started (it became a candidate).
    pub elections_started: u64,
    /// Leaders this node saw take office (a new epoch with a known leader).
    pub leader_changes: u64,
    /// On the leader: each other voter's replication.
    pub voters: Vec<VoterProgress>,
    /// The last round trip of a request (other than a long-polling Fetch) to each peer.
    pub peer_rtt_seconds: Vec<(i32, f64)>,
    /// On a follower: the leader's clock minus this node's, estimated from the append times of
    /// the batches it replicates (the least-delayed one of the last minute), and the leader.
    pub leader_clock_offset_ms: Option<(i32, i64)>,
}

pub fn kraftd_families(f: &mut Exposition, s: &KraftdSample) {
    if let Some(d) = s.metadata_dir {
        f.gauge(
            METADATA_DIR_FREE_BYTES,
            "Bytes an unprivileged writer can still allocate on the metadata log directory's filesystem.",
            d.free_bytes as f64,
        );
        f.gauge(
            METADATA_DIR_SIZE_BYTES,
            "Size in bytes of the metadata log directory's filesystem.",
            d.total_bytes as f64,
        );
    }
    if let Some(h) = &s.fsync {
        f.histogram(
            "kraftd_log_fsync_duration_seconds",
            "How long flushing the metadata log to disk (fsync of every dirty segment) took.",
            &h.cumulative(),
            h.count,
            h.sum_seconds,
        );
    }
    if let Some(snap) = s.last_snapshot {
        let gauges = [
            (
                "kraftd_snapshot_last_bytes",
                "Size of the last snapshot this node wrote.",
                snap.bytes as f64,
            ),
            (
                "kraftd_snapshot_last_records",
                "Records in the last snapshot this node wrote.",
                snap.records as f64,
            ),
            (
                "kraftd_snapshot_last_duration_seconds",
                "How long writing the last snapshot took.",
                snap.duration_seconds,
            ),
            (
                "kraftd_snapshot_age_seconds",
                "Seconds since this node last wrote a snapshot.",
                snap.age_seconds,
            ),
        ];
        for (name, help, value) in gauges {
            f.gauge(name, help, value);
        }
    }
    f.counter(
        "kraftd_elections_started_total",
        "Elections this node started as a candidate.",
        s.elections_started as f64,
    );
    f.counter(
        "kraftd_leader_changes_total",
        "Leaders this node saw take office.",
        s.leader_changes as f64,
    );
    f.gauge_by(
        "kraftd_voter_fetch_lag_records",
        "On the leader: records between its log end and each voter's, as of the voter's last fetch.",
        "voter",
        s.voters
            .iter()
            .filter_map(|v| v.lag_records.map(|l| (v.id, l as f64))),
    );
    f.gauge_by(
        "kraftd_voter_last_fetch_age_seconds",
        "On the leader: seconds since each voter's last fetch.",
        "voter",
        s.voters
            .iter()
            .filter_map(|v| v.since_last_fetch_ms.map(|ms| (v.id, ms as f64 / 1000.0))),
    );
    f.gauge_by(
        "kraftd_peer_rtt_seconds",
        "The last round trip of a request (a long-polling Fetch aside) to each controller.",
        "peer",
        s.peer_rtt_seconds.iter().copied(),
    );
    f.gauge_by(
        "kraftd_leader_clock_offset_ms",
        "On a follower: the leader's wall clock minus this node's, estimated from the append times of the batches it replicates.",
        "leader",
        s.leader_clock_offset_ms
            .iter()
            .map(|&(id, ms)| (id, ms as f64)),
    );
}
