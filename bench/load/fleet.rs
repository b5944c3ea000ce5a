//! A fleet of simulated brokers, each doing what a Kafka broker's lifecycle manager does with
//! the active controller: BrokerRegistration, then BrokerHeartbeats, every 10 ms while it
//! catches up (`wantFence`, as in Kafka's STARTING state), then every `broker.heartbeat.interval.ms`
//! asking to be unfenced. Its metadata offset is the quorum's committed offset, which a watcher
//! reads from DescribeQuorum, as a real broker's would follow the metadata log.
//!
//! A heartbeat answered `isFenced` after the broker had been unfenced counts as a fencing.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::Rng;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use kraftd::protocol::codec::Uuid;
use kraftd::protocol::errors::ErrorCode;
use kraftd::protocol::features::SUPPORTED_FEATURES;
use kraftd::protocol::messages::broker_registration_request::{Feature, Listener};
use kraftd::protocol::messages::{
    BrokerHeartbeatRequest, BrokerHeartbeatResponse, BrokerRegistrationRequest,
    BrokerRegistrationResponse, DescribeQuorumResponse,
};
use kraftd::raft::convert::describe;
use kraftd::raft::msg::DescribeQuorumRequest;

use super::client::{ControllerClient, Controllers};
use super::error::LoadError;
use super::stats::{ErrorTally, Latencies};

/// Kafka's heartbeat period while a broker catches up (BrokerLifecycleManager, STARTING).
const CATCH_UP_HEARTBEAT: Duration = Duration::from_millis(10);
/// How often the watcher reads the committed offset.
const METADATA_POLL: Duration = Duration::from_millis(50);

#[derive(Debug, Clone)]
pub struct FleetConfig {
    pub cluster_id: String,
    /// Brokers `first_broker_id..first_broker_id + brokers`.
    pub first_broker_id: i32,
    pub brokers: usize,
    /// `broker.heartbeat.interval.ms`.
    pub heartbeat_interval: Duration,
    /// Each broker starts at a random point of this window, so that a steady fleet's heartbeats
    /// spread over the interval (zero: all register at once).
    pub start_spread: Duration,
}

/// What one broker has been through; shared between its task and the fleet.
#[derive(Default)]
struct BrokerCell {
    /// -1 until registered.
    epoch: AtomicI64,
    unfenced: AtomicBool,
    fencings: AtomicU64,
}

struct FleetState {
    config: FleetConfig,
    cells: Vec<BrokerCell>,
    /// The committed metadata offset brokers report as theirs.
    metadata_offset: AtomicI64,
    /// Heartbeats of unfenced brokers are timed only while this is set.
    measuring: AtomicBool,
    started: Instant,
    record: Mutex<Record>,
}

#[derive(Default)]
struct Record {
    registrations: Latencies,
    heartbeats: Latencies,
    /// Since the fleet started, when each broker was first unfenced.
    unfenced_after: Latencies,
    errors: ErrorTally,
}

impl FleetState {
    fn error(&self, kind: &str, broker: i32, what: impl std::fmt::Display) {
        let mut r = self.record.lock().expect("no task panics holding it");
        r.errors
            .add(kind, format!("broker {broker}: {kind}: {what}"));
    }
}

/// What a fleet reports; latencies of heartbeats only from the measured window.
#[derive(Debug, Clone)]
pub struct FleetReport {
    pub brokers: usize,
    pub registered: usize,
    pub unfenced: usize,
    pub fencings: u64,
    pub errors: ErrorTally,
    pub registrations: Latencies,
    pub unfenced_after: Latencies,
    pub heartbeats: Latencies,
}

pub struct Fleet {
    state: Arc<FleetState>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl Fleet {
    /// Starts the brokers and the metadata watcher. Call within a tokio runtime.
    pub fn start(controllers: Arc<Controllers>, config: FleetConfig) -> Fleet {
        let cells = (0..config.brokers)
            .map(|_| BrokerCell {
                epoch: AtomicI64::new(-1),
                ..BrokerCell::default()
            })
            .collect();
        let state = Arc::new(FleetState {
            config,
            cells,
            metadata_offset: AtomicI64::new(-1),
            measuring: AtomicBool::new(false),
            started: Instant::now(),
            record: Mutex::default(),
        });
        let (stop, stopped) = watch::channel(false);
        let mut tasks = vec![tokio::spawn(watch_metadata(
            state.clone(),
            controllers.clone(),
            stopped.clone(),
        ))];
        for index in 0..state.cells.len() {
            tasks.push(tokio::spawn(run_broker(
                index,
                state.clone(),
                controllers.clone(),
                stopped.clone(),
            )));
        }
        Fleet { state, stop, tasks }
    }

    pub fn broker_ids(&self) -> Vec<i32> {
        (0..self.state.cells.len())
            .map(|i| self.state.config.first_broker_id + i as i32)
            .collect()
    }

    /// The broker epoch the controller gave `broker` (-1: not registered, or not of this fleet).
    pub fn epoch(&self, broker: i32) -> i64 {
        usize::try_from(broker - self.state.config.first_broker_id)
            .ok()
            .and_then(|i| self.state.cells.get(i))
            .map_or(-1, |c| c.epoch.load(Ordering::Relaxed))
    }

    pub fn unfenced(&self) -> usize {
        self.state
            .cells
            .iter()
            .filter(|c| c.unfenced.load(Ordering::Relaxed))
            .count()
    }

    /// Waits until every broker is unfenced; returns the time since the fleet started.
    pub async fn wait_unfenced(&self, timeout: Duration) -> Result<Duration, LoadError> {
        let until = Instant::now() + timeout;
        loop {
            if self.unfenced() == self.state.cells.len() {
                return Ok(self.state.started.elapsed());
            }
            if Instant::now() >= until {
                let r = self.report();
                return Err(LoadError::Unexpected(format!(
                    "{} of {} brokers unfenced after {timeout:?}; errors: {:?}",
                    r.unfenced, r.brokers, r.errors
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Starts (or restarts) the window whose heartbeats are timed.
    pub fn begin_measuring(&self) {
        self.state.record.lock().expect("not poisoned").heartbeats = Latencies::default();
        self.state.measuring.store(true, Ordering::Relaxed);
    }

    pub fn end_measuring(&self) {
        self.state.measuring.store(false, Ordering::Relaxed);
    }

    pub fn report(&self) -> FleetReport {
        let r = self.state.record.lock().expect("not poisoned");
        let cells = &self.state.cells;
        FleetReport {
            brokers: cells.len(),
            registered: cells
                .iter()
                .filter(|c| c.epoch.load(Ordering::Relaxed) >= 0)
                .count(),
            unfenced: self.unfenced(),
            fencings: cells
                .iter()
                .map(|c| c.fencings.load(Ordering::Relaxed))
                .sum(),
            errors: r.errors.clone(),
            registrations: r.registrations.clone(),
            unfenced_after: r.unfenced_after.clone(),
            heartbeats: r.heartbeats.clone(),
        }
    }

    /// Stops every broker (they stop heartbeating; the controller will fence them once their
    /// sessions expire) and returns the final report.
    pub async fn stop(mut self) -> FleetReport {
        let _ = self.stop.send(true);
        for t in std::mem::take(&mut self.tasks) {
            let _ = t.await;
        }
        self.report()
    }
}

/// Sleeps for `d`; false if the fleet was stopped meanwhile.
async fn pause(d: Duration, stopped: &mut watch::Receiver<bool>) -> bool {
    if *stopped.borrow() {
        return false;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => !*stopped.borrow(),
        _ = stopped.changed() => false,
    }
}

async fn watch_metadata(
    state: Arc<FleetState>,
    controllers: Arc<Controllers>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut client = ControllerClient::new(controllers.clone(), "load-metadata-watcher");
    let request = describe::request_to_wire(&DescribeQuorumRequest { partition_ok: true });
    loop {
        match client.call::<_, DescribeQuorumResponse>(&request).await {
            Ok(answer) => {
                let d = describe::response_from_wire(&answer);
                if d.partition_error == ErrorCode::NONE && d.leader_id >= 0 {
                    controllers.set_leader(d.leader_id);
                    // The high watermark is the first uncommitted offset.
                    state
                        .metadata_offset
                        .fetch_max(d.high_watermark - 1, Ordering::Relaxed);
                }
            }
            Err(e) => state.error("metadata watcher", -1, e),
        }
        if !pause(METADATA_POLL, &mut stopped).await {
            return;
        }
    }
}

/// A BrokerRegistration as a Kafka 4.4 broker sends it: one PLAINTEXT listener on `port`
/// (never listened on: only the controller reads it), Kafka 4.4's feature ranges (kraftd's are
/// the same), which the finalized levels must fall within, and its log directories.
pub fn broker_registration(
    cluster_id: &str,
    broker: i32,
    incarnation_id: Uuid,
    log_dirs: Vec<Uuid>,
    port: u16,
) -> BrokerRegistrationRequest {
    BrokerRegistrationRequest {
        broker_id: broker,
        cluster_id: cluster_id.to_string(),
        incarnation_id,
        listeners: vec![Listener {
            name: "PLAINTEXT".into(),
            host: "127.0.0.1".into(),
            port,
            ..Default::default()
        }],
        features: SUPPORTED_FEATURES
            .iter()
            .map(|f| Feature {
                name: f.name.into(),
                min_supported_version: f.min,
                max_supported_version: f.max,
                ..Default::default()
            })
            .collect(),
        log_dirs,
        previous_broker_epoch: -1,
        ..Default::default()
    }
}

/// A new incarnation of `broker` with a fresh log directory, as a broker's first start.
fn registration(config: &FleetConfig, broker: i32) -> BrokerRegistrationRequest {
    let mut rng = rand::thread_rng();
    let port = 20_000 + (broker % 40_000) as u16;
    broker_registration(
        &config.cluster_id,
        broker,
        Uuid(rng.gen()),
        vec![Uuid(rng.gen())],
        port,
    )
}

async fn run_broker(
    index: usize,
    state: Arc<FleetState>,
    controllers: Arc<Controllers>,
    mut stopped: watch::Receiver<bool>,
) {
    let config = &state.config;
    let broker = config.first_broker_id + index as i32;
    let cell = &state.cells[index];
    let spread = config.start_spread.as_micros() as u64;
    let delay = rand::thread_rng().gen_range(0..spread.max(1));
    if !pause(Duration::from_micros(delay), &mut stopped).await {
        return;
    }
    let mut client = ControllerClient::new(controllers, "load-broker");
    let request = registration(config, broker);
    let epoch = loop {
        let sent = Instant::now();
        match client.call::<_, BrokerRegistrationResponse>(&request).await {
            Ok(r) if r.error_code == 0 => {
                let mut rec = state.record.lock().expect("not poisoned");
                rec.registrations.record(sent.elapsed());
                break r.broker_epoch;
            }
            Ok(r) => state.error("registration", broker, ErrorCode(r.error_code).name()),
            Err(e) => state.error("registration", broker, e),
        }
        if !pause(config.heartbeat_interval, &mut stopped).await {
            return;
        }
    };
    cell.epoch.store(epoch, Ordering::Relaxed);
    let mut caught_up = false;
    let mut ever_unfenced = false;
    loop {
        let beat = BrokerHeartbeatRequest {
            broker_id: broker,
            broker_epoch: epoch,
            current_metadata_offset: state.metadata_offset.load(Ordering::Relaxed),
            want_fence: !caught_up,
            ..Default::default()
        };
        let sent = Instant::now();
        let mut next = config.heartbeat_interval;
        match client.call::<_, BrokerHeartbeatResponse>(&beat).await {
            Ok(r) if r.error_code == 0 => {
                let took = sent.elapsed();
                let was_unfenced = cell.unfenced.load(Ordering::Relaxed);
                if was_unfenced && state.measuring.load(Ordering::Relaxed) {
                    state
                        .record
                        .lock()
                        .expect("not poisoned")
                        .heartbeats
                        .record(took);
                }
                if !caught_up {
                    caught_up = r.is_caught_up;
                    // Caught up: ask to be unfenced at once; until then, every 10 ms.
                    next = if caught_up {
                        Duration::ZERO
                    } else {
                        CATCH_UP_HEARTBEAT
                    };
                }
                if r.is_fenced && was_unfenced {
                    cell.fencings.fetch_add(1, Ordering::Relaxed);
                    state.error("fencing", broker, "fenced after it had been unfenced");
                }
                if !r.is_fenced && !ever_unfenced {
                    ever_unfenced = true;
                    let mut rec = state.record.lock().expect("not poisoned");
                    rec.unfenced_after.record(state.started.elapsed());
                }
                cell.unfenced.store(!r.is_fenced, Ordering::Relaxed);
            }
            Ok(r) => state.error("heartbeat", broker, ErrorCode(r.error_code).name()),
            Err(e) => state.error("heartbeat", broker, e),
        }
        if !pause(next, &mut stopped).await {
            return;
        }
    }
}
