//! `kraftd test-raft-server`: the counterpart of Kafka's `kafka.tools.TestRaftServer` (what
//! `test-kraft-server-start.sh` runs), for `make bench`. A raft node alone (no controller) on an
//! unformatted directory; while it leads it appends `--throughput` records a second of
//! `--record-size` zero bytes, one append call per record, and reports how long each took to
//! commit. See bench/raft/README.md for the contract with the driver.
//!
//! Like TestRaftServer: static voters, Kafka's defaults for every other raft setting, the
//! partition `__raft_performance_test-0`, cluster id `AAAAAAAAAAAAAAAAAAAAAA`, no NoOpRecords and
//! no snapshots. Pacing is open-loop with catch-up: record n is due n/throughput seconds after
//! the node became leader, and a late record is sent at once and timed from when it was sent.
//! With `--closed-loop N` it keeps N records in flight instead (each commit frees room for the
//! next), times them in µs as well, and ignores `--throughput`; bench/raft's Java probe does the
//! same through KafkaRaftClient (ClosedLoopWorkload.java).

use crate::server::run::RunError;
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use tokio::sync::oneshot;

use super::LoadConfigError;
use crate::log::{DirLock, FileLog, LockError, LogError};
use crate::protocol::codec::{Uuid, UuidParseError};
use crate::raft::{ProposeError, QuorumStateError};
use crate::server::http;
use crate::server::node::storage;
use crate::server::node::{self, Appended, NodeHandle};
use crate::server::run::{bind_controller_listeners, launch, spawn_http};

#[derive(Debug, Args, PartialEq, Eq)]
pub struct TestRaftServerArgs {
    /// The node's configuration (node.id, listeners, controller.quorum.voters, log.dirs, ...)
    #[arg(long = "config", value_name = "FILE")]
    pub config: PathBuf,
    /// Records appended per second while leading
    #[arg(long, default_value_t = 5000)]
    pub throughput: u32,
    /// Bytes per record
    #[arg(long = "record-size", default_value_t = 256)]
    pub record_size: usize,
    /// This replica's directory id
    #[arg(long = "replica-directory-id", value_name = "UUID")]
    pub replica_directory_id: String,
    /// How often to print a report line while leading
    #[arg(long = "report-interval-ms", default_value_t = 1000)]
    pub report_interval_ms: u64,
    /// Closed loop: keep this many records appended and not yet committed (0: open loop)
    #[arg(long = "closed-loop", value_name = "IN_FLIGHT", default_value_t = 0)]
    pub closed_loop: usize,
}

/// TestRaftServer's partition directory and cluster id.
const PARTITION: &str = "__raft_performance_test-0";
const CLUSTER_ID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// Why `test-raft-server` could not start its node or keep up its load. (A halt of the node
/// itself is [`RunError::Halted`].)
#[derive(Debug, thiserror::Error)]
pub enum TestRaftServerError {
    #[error("--throughput must be positive")]
    ZeroThroughput,
    #[error("--replica-directory-id: {0}")]
    BadDirectoryId(#[source] UuidParseError),
    #[error(transparent)]
    Config(#[from] LoadConfigError),
    #[error("could not start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("create {}: {source}", .dir.display())]
    CreateDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("open {}: {source}", .dir.display())]
    OpenLog {
        dir: PathBuf,
        #[source]
        source: LogError,
    },
    #[error("could not read quorum-state: {0}")]
    QuorumState(#[source] QuorumStateError),
    /// The node refused or dropped an append while this node led.
    #[error("append refused: {reason}")]
    AppendRefused { reason: String },
    #[error("a record appended while leading epoch {epoch} landed in epoch {landed}")]
    WrongEpoch { epoch: i32, landed: i32 },
    #[error("append answered out of order: offset {offset} after {previous:?}")]
    OutOfOrder {
        offset: i64,
        previous: Option<Landed>,
    },
    #[error("the node loop dropped an append")]
    AppendDropped,
    /// The node loop stopped taking appends.
    #[error("{reason}")]
    NodeStopped { reason: String },
    #[error("write a report line: {0}")]
    Report(#[source] std::io::Error),
}

impl From<TestRaftServerError> for RunError {
    fn from(e: TestRaftServerError) -> RunError {
        RunError::Failed(e.to_string())
    }
}

pub fn run(args: &TestRaftServerArgs) -> Result<(), RunError> {
    use TestRaftServerError as E;
    if args.throughput == 0 {
        return Err(E::ZeroThroughput.into());
    }
    let directory_id = Uuid::parse(&args.replica_directory_id).map_err(E::BadDirectoryId)?;
    let config = super::load_config(&args.config).map_err(E::Config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("kraftd-io")
        .enable_all()
        .build()
        .map_err(E::Runtime)?;
    runtime.block_on(async {
        let dir = &config.metadata_log_dir;
        std::fs::create_dir_all(dir).map_err(|source| E::CreateDir {
            dir: dir.clone(),
            source,
        })?;
        let _lock = DirLock::try_lock(dir).map_err(E::Lock)?;
        let partition = dir.join(PARTITION);
        let log =
            FileLog::open(&partition, node::log_config(&config)).map_err(|source| E::OpenLog {
                dir: partition.clone(),
                source,
            })?;
        let voter_ids = config.quorum.voters.iter().map(|v| v.id).collect();
        let store = storage::open_quorum_state(&log, voter_ids).map_err(E::QuorumState)?;
        let bound = bind_controller_listeners(&config).await?;
        // `kraftd.http.listener`, as `kraftd start` reads it: make bench scrapes it (bench/raft).
        let http_socket = match http::listener_address(&config.originals)? {
            Some(addr) => Some(http::bind(addr).await?),
            None => None,
        };
        let mut settings = node::node_settings(
            &config,
            CLUSTER_ID,
            directory_id,
            bound.endpoints(),
            rand::random(),
        );
        // A bare raft node: no controller writes NoOps or snapshots.
        settings.noop_interval = None;
        settings.controller.activation_min_insync_replicas = None;
        settings.replay_metadata = false;
        settings.snapshot_max_bytes = u64::MAX;
        settings.snapshot_max_interval = None;
        let running = launch(&config, bound, CLUSTER_ID, settings.clone(), log, store);
        if let Some(socket) = http_socket {
            spawn_http(socket, running.handle.clone(), &settings, dir)?;
        }
        let workload = Workload::new(args, config.node_id, running.handle.clone());
        running
            .run_until_stopped(async move { workload.run().await.map_err(|e| e.to_string()) })
            .await
    })
}

fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Records appended and not yet seen committed, oldest first.
struct Pending {
    /// Where the batch landed, once the node loop has appended it.
    reply: oneshot::Receiver<Result<Appended, ProposeError>>,
    appended_ms: i64,
    appended: Instant,
}

/// An appended record whose offset is known: (last offset, appended ms, appended instant).
type Landed = (i64, i64, Instant);

struct Workload {
    node_id: i32,
    node: NodeHandle,
    throughput: u32,
    record: Vec<u8>,
    report_interval: Duration,
    closed_loop: usize,
}

/// One report interval's commits.
#[derive(Default)]
struct Interval {
    records: u64,
    latency_ms: BTreeMap<i64, u64>,
    /// Closed loop only: µs rounded down to 3 significant digits (`micros_bucket`).
    latency_us: BTreeMap<u64, u64>,
}

/// µs rounded down to 3 significant digits (1% resolution), as the Java probe buckets them.
fn micros_bucket(micros: u64) -> u64 {
    let mut scale = 1;
    while micros / scale >= 1000 {
        scale *= 10;
    }
    micros / scale * scale
}

impl Workload {
    fn new(args: &TestRaftServerArgs, node_id: i32, node: NodeHandle) -> Workload {
        Workload {
            node_id,
            node,
            throughput: args.throughput,
            record: vec![0u8; args.record_size],
            report_interval: Duration::from_millis(args.report_interval_ms.max(1)),
            closed_loop: args.closed_loop,
        }
    }

    /// Waits for leadership, then generates load until leadership is lost; forever.
    async fn run(self) -> Result<(), TestRaftServerError> {
        let mut leader = self.node.leader();
        loop {
            let view = *leader.borrow_and_update();
            if view.leader_id == Some(self.node_id) {
                self.lead(view.epoch).await?;
            } else if leader.changed().await.is_err() {
                return Ok(());
            }
        }
    }

    /// One epoch of leadership: appends (paced, or `closed_loop` in flight), commit timing, a
    /// report line per interval.
    async fn lead(&self, epoch: i32) -> Result<(), TestRaftServerError> {
        let mut leader = self.node.leader();
        let mut hw = self.node.high_watermark_updates();
        let start = wall_ms();
        let mut count: u64 = 0;
        let mut pending: VecDeque<Pending> = VecDeque::new();
        // Offsets known for the front of `pending` (the node answered its append).
        let mut landed: VecDeque<Landed> = VecDeque::new();
        let mut interval = Interval::default();
        let mut interval_start = wall_ms();
        let mut next_report = tokio::time::Instant::now() + self.report_interval;
        if self.closed_loop > 0 {
            tracing::info!(
                target: "kraftd::bench",
                "leading epoch {epoch}: {} records of {} bytes in flight",
                self.closed_loop,
                self.record.len()
            );
        } else {
            tracing::info!(
                target: "kraftd::bench",
                "leading epoch {epoch}: appending {} records/s of {} bytes",
                self.throughput,
                self.record.len()
            );
        }
        loop {
            // Open loop: record n is due n/throughput s after the start. Closed loop: now, while
            // the window has room; then nothing until a commit frees some.
            let now = wall_ms();
            let due = if self.closed_loop == 0 {
                start + ((count + 1) as f64 * 1000.0 / self.throughput as f64).round() as i64
            } else if pending.len() + landed.len() < self.closed_loop {
                now
            } else {
                now + self.report_interval.as_millis() as i64
            };
            if due <= now {
                let reply = self
                    .node
                    .append_queued(vec![self.record.clone()])
                    .map_err(|e| TestRaftServerError::NodeStopped {
                        reason: e.to_string(),
                    })?;
                pending.push_back(Pending {
                    reply,
                    appended_ms: now,
                    appended: Instant::now(),
                });
                count += 1;
                continue;
            }
            let wait = Duration::from_millis((due - now) as u64);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = tokio::time::sleep_until(next_report) => {
                    let end = wall_ms();
                    self.report(epoch, interval_start, end, std::mem::take(&mut interval))?;
                    interval_start = end;
                    next_report += self.report_interval;
                }
                changed = hw.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let (committed, committed_ms) = (Instant::now(), wall_ms());
                    let high_watermark = *hw.borrow_and_update();
                    if let Err(e) = collect_landed(&mut pending, &mut landed, epoch) {
                        let view = *self.node.leader().borrow();
                        if view.epoch == epoch && view.leader_id == Some(self.node_id) {
                            return Err(e);
                        }
                        // Leadership moved on; the refused appends are expected.
                        return Ok(());
                    }
                    while let Some(&(offset, appended_ms, appended)) = landed.front() {
                        if offset >= high_watermark {
                            break;
                        }
                        landed.pop_front();
                        interval.records += 1;
                        *interval.latency_ms.entry((committed_ms - appended_ms).max(0)).or_default() += 1;
                        let micros = committed.duration_since(appended).as_micros() as u64;
                        *interval.latency_us.entry(micros_bucket(micros)).or_default() += 1;
                    }
                }
                changed = leader.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let view = *leader.borrow_and_update();
                    if view.epoch != epoch || view.leader_id != Some(self.node_id) {
                        tracing::info!(target: "kraftd::bench", "no longer leading epoch {epoch}");
                        return Ok(());
                    }
                }
            }
        }
    }

    fn report(
        &self,
        epoch: i32,
        start_ms: i64,
        end_ms: i64,
        i: Interval,
    ) -> Result<(), TestRaftServerError> {
        let hist: Vec<String> = i
            .latency_ms
            .iter()
            .map(|(ms, n)| format!("[{ms},{n}]"))
            .collect();
        let micros = if self.closed_loop > 0 {
            let us: Vec<String> = i
                .latency_us
                .iter()
                .map(|(us, n)| format!("[{us},{n}]"))
                .collect();
            format!(",\"latency_us_hist\":[{}]", us.join(","))
        } else {
            String::new()
        };
        let line = format!(
            "{{\"raft_bench\":1,\"impl\":\"kraftd\",\"node_id\":{},\"leader_epoch\":{epoch},\
             \"start_ms\":{start_ms},\"end_ms\":{end_ms},\"records\":{},\"bytes\":{},\
             \"latency_ms_hist\":[{}]{micros}}}",
            self.node_id,
            i.records,
            i.records * self.record.len() as u64,
            hist.join(",")
        );
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}")
            .and_then(|_| out.flush())
            .map_err(TestRaftServerError::Report)
    }
}

/// Moves the records whose appends have been answered from `pending` to `landed` as
/// (offset, appended ms), checking that they landed in order in this epoch.
fn collect_landed(
    pending: &mut VecDeque<Pending>,
    landed: &mut VecDeque<Landed>,
    epoch: i32,
) -> Result<(), TestRaftServerError> {
    while let Some(front) = pending.front_mut() {
        match front.reply.try_recv() {
            Ok(Ok(a)) => {
                if a.epoch != epoch {
                    return Err(TestRaftServerError::WrongEpoch {
                        epoch,
                        landed: a.epoch,
                    });
                }
                if landed.back().is_some_and(|&(o, _, _)| o >= a.last_offset) {
                    return Err(TestRaftServerError::OutOfOrder {
                        offset: a.last_offset,
                        previous: landed.back().copied(),
                    });
                }
                landed.push_back((a.last_offset, front.appended_ms, front.appended));
                pending.pop_front();
            }
            Ok(Err(e)) => {
                return Err(TestRaftServerError::AppendRefused {
                    reason: e.to_string(),
                })
            }
            Err(oneshot::error::TryRecvError::Empty) => return Ok(()),
            Err(oneshot::error::TryRecvError::Closed) => {
                return Err(TestRaftServerError::AppendDropped)
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::micros_bucket;

    #[test]
    fn micros_buckets_keep_three_significant_digits() {
        assert_eq!(micros_bucket(0), 0);
        assert_eq!(micros_bucket(999), 999);
        assert_eq!(micros_bucket(1234), 1230);
        assert_eq!(micros_bucket(56_789), 56_700);
        assert_eq!(micros_bucket(1_000_000), 1_000_000);
    }
}
