//! W3 under Prometheus scrapes (`KRAFTD_LOAD_SCRAPE=1`, what `make bench-controller` passes):
//! W3 once more per implementation on a quorum whose controllers serve Prometheus metrics
//! (kraftd on `kraftd.http.listener`, Java through the JMX exporter javaagent under
//! compat/jmx-exporter-kraft.yaml). Its measured window alternates between phases in which every
//! controller is scraped once a second and phases in which nothing scrapes, in the order off, on,
//! on, off, off, on, ... so that a drift of the machine's speed falls on both arms alike. Each
//! arm sums its phases' CPU per controller and heartbeat latencies; the figures are the scraped
//! arm's over the unscraped arm's.
//!
//! Pairing inside one window, rather than comparing with the plain W3 on another quorum, keeps
//! the leader, the fleet and the host's load the same for both arms: two W3 runs differ by more
//! than the few per cent measured here.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::{at, sample};
use crate::harness::metrics::scrape;
use crate::load::fleet::Fleet;
use crate::load::stats::{finite, Latencies, ProcessSample};

const SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// What the scraper thread saw.
#[derive(Debug, Default)]
pub struct Tally {
    pub scrapes: u64,
    pub failed: u64,
    /// The first few failures, as `addr: why`.
    pub failures: Vec<String>,
    /// Samples per controller in its last scrape, and of those `kafka_server_raftmetrics_*`.
    pub samples: Map<String, Value>,
    pub raft_samples: Map<String, Value>,
}

impl Tally {
    /// Why the scrapes do not count: none answered, some failed, or a controller's carried no
    /// raft metrics. `None` when every one of them did.
    pub fn failure(&self) -> Option<String> {
        let no_raft = self.raft_samples.values().any(|v| v.as_u64() == Some(0));
        (self.scrapes == 0 || self.failed > 0 || no_raft).then(|| {
            format!(
                "scrapes: {} answered, {} failed {:?}, raft samples {:?}",
                self.scrapes, self.failed, self.failures, self.raft_samples
            )
        })
    }

    /// Its counts into a run's figures.
    pub fn add_to(self, figures: &mut Value) {
        figures["scrapes"] = json!(self.scrapes);
        figures["samples_per_scrape"] = Value::Object(self.samples);
        figures["raft_metrics_samples"] = Value::Object(self.raft_samples);
    }
}

/// A thread scraping every controller once a second while switched on.
pub struct Scraper {
    on: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    tally: Arc<Mutex<Tally>>,
    thread: Option<JoinHandle<()>>,
}

impl Scraper {
    /// Starts switched off.
    pub fn start(addrs: Vec<SocketAddr>) -> Scraper {
        let (on, done) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let tally = Arc::new(Mutex::new(Tally::default()));
        let (on2, done2, tally2) = (on.clone(), done.clone(), tally.clone());
        let thread = std::thread::spawn(move || {
            while !done2.load(Ordering::Relaxed) {
                if !on2.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                let tick = Instant::now();
                for addr in &addrs {
                    let outcome = scrape(*addr);
                    let mut t = tally2.lock().expect("not poisoned");
                    match outcome {
                        Ok(body) => {
                            let samples = body.lines().filter(|l| !l.starts_with('#'));
                            let (n, raft) = samples.fold((0, 0), |(n, raft), l| {
                                let is_raft = l.starts_with("kafka_server_raftmetrics_");
                                (n + 1, raft + usize::from(is_raft))
                            });
                            t.scrapes += 1;
                            t.samples.insert(addr.to_string(), json!(n));
                            t.raft_samples.insert(addr.to_string(), json!(raft));
                        }
                        Err(e) => {
                            t.failed += 1;
                            if t.failures.len() < 5 {
                                t.failures.push(e);
                            }
                        }
                    }
                }
                std::thread::sleep(SCRAPE_INTERVAL.saturating_sub(tick.elapsed()));
            }
        });
        Scraper {
            on,
            done,
            tally,
            thread: Some(thread),
        }
    }

    fn switch(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
    }

    pub fn stop(mut self) -> Tally {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().expect("the scraper thread does not panic");
        }
        std::mem::take(&mut *self.tally.lock().expect("not poisoned"))
    }
}

/// One arm's sums over its phases.
#[derive(Default)]
struct Arm {
    wall: Duration,
    active_cpu: f64,
    all_cpu: f64,
    heartbeats: Latencies,
    phases: usize,
    /// The active controller's CPU seconds per second in each phase.
    active_per_phase: Vec<f64>,
}

impl Arm {
    /// The mean of the phases' active CPU per second and its standard error.
    fn active_mean_se(&self) -> (f64, f64) {
        let v = &self.active_per_phase;
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        (mean, (var / n).sqrt())
    }

    fn json(&self) -> Value {
        let secs = self.wall.as_secs_f64();
        let hb = self.heartbeats.summary();
        json!({"phases": self.phases, "wall_s": secs, "active_cpu_per_s_by_phase": self.active_per_phase,
               "active_cpu_s": self.active_cpu, "all_controllers_cpu_s": self.all_cpu,
               "active_cpu_per_s": finite(self.active_cpu / secs),
               "all_controllers_cpu_per_s": finite(self.all_cpu / secs),
               "heartbeat_latency": hb.json()})
    }
}

/// The figures compared, as (name, path below an arm).
const FIGURES: [(&str, &[&str]); 4] = [
    ("active_cpu", &["active_cpu_per_s"]),
    ("all_controllers_cpu", &["all_controllers_cpu_per_s"]),
    ("heartbeat_p50", &["heartbeat_latency", "p50_ms"]),
    ("heartbeat_p99", &["heartbeat_latency", "p99_ms"]),
];

/// W3's measured window of `length` in alternate phases of `phase`, scraped and not; returns
/// the arms' figures and every heartbeat timed (both arms).
pub async fn alternate(
    scraper: &Scraper,
    fleet: &Fleet,
    pids: &[(i32, u32)],
    leader: i32,
    length: Duration,
    phase: Duration,
) -> (Value, Latencies) {
    let (mut on, mut off) = (Arm::default(), Arm::default());
    let phases = (length.as_secs_f64() / phase.as_secs_f64())
        .round()
        .max(2.0) as usize;
    for i in 0..phases {
        // off, on, on, off, off, on, ...
        let scraped = matches!(i % 4, 1 | 2);
        scraper.switch(scraped);
        fleet.begin_measuring();
        let (before, started) = (sample(pids), Instant::now());
        tokio::time::sleep(phase).await;
        let (after, wall) = (sample(pids), started.elapsed());
        let heartbeats = fleet.report().heartbeats;
        let arm = if scraped { &mut on } else { &mut off };
        for ((id, b), (_, a)) in before.iter().zip(&after) {
            let cpu = a.cpu_since(b).as_secs_f64();
            arm.all_cpu += cpu;
            if *id == leader {
                arm.active_cpu += cpu;
                arm.active_per_phase.push(cpu / wall.as_secs_f64());
            }
        }
        arm.wall += wall;
        arm.phases += 1;
        arm.heartbeats.extend(heartbeats);
    }
    scraper.switch(false);
    let (on_json, off_json) = (on.json(), off.json());
    let ratios: Map<String, Value> = FIGURES
        .iter()
        .map(|(name, path)| {
            let r = at(&on_json, path)
                .zip(at(&off_json, path))
                .map(|(a, b)| a / b);
            (name.to_string(), r.map_or(Value::Null, finite))
        })
        .collect();
    // The active CPU ratio's 95 % interval (normal approximation over the phases; the slow drift
    // the phase order cancels in the means still widens it, so it errs wide).
    let ((m_on, se_on), (m_off, se_off)) = (on.active_mean_se(), off.active_mean_se());
    let r = m_on / m_off;
    let half = 1.96 * r * ((se_on / m_on).powi(2) + (se_off / m_off).powi(2)).sqrt();
    let interval = json!([finite(r - half), finite(r + half)]);
    let mut all = on.heartbeats;
    all.extend(off.heartbeats);
    let figures = json!({"phase_s": phase.as_secs_f64(), "scrape_interval_s": SCRAPE_INTERVAL.as_secs_f64(),
                         "scraped": on_json, "unscraped": off_json,
                         "ratios_scraped_over_unscraped": ratios,
                         "active_cpu_ratio_95": interval});
    (figures, all)
}

/// Scrapes back to back per controller in [`cost_per_scrape`].
const BURST: u32 = 300;

/// Each controller's CPU per scrape, in ms, under W3's load: [`BURST`] scrapes back to back,
/// less what it spends in as long unscraped (measured over 5 s just before). The direct figure
/// behind the phases' ratios. `targets`: (node id, process id, metrics address).
pub fn cost_per_scrape(targets: Vec<(i32, u32, SocketAddr)>) -> Map<String, Value> {
    let mut out = Map::new();
    for (id, pid, addr) in targets {
        let cpu = || ProcessSample::read(pid).map(|s| s.cpu.as_secs_f64());
        let (Some(c0), t0) = (cpu(), Instant::now()) else {
            continue;
        };
        std::thread::sleep(Duration::from_secs(5));
        let Some(c1) = cpu() else { continue };
        let base_per_s = (c1 - c0) / t0.elapsed().as_secs_f64();
        let (started, mut bytes) = (Instant::now(), 0);
        for _ in 0..BURST {
            bytes = scrape(addr).map(|b| b.len()).unwrap_or(0);
        }
        let Some(c2) = cpu() else { continue };
        let wall = started.elapsed().as_secs_f64();
        let per_scrape_ms = 1000.0 * ((c2 - c1) - base_per_s * wall) / f64::from(BURST);
        out.insert(
            id.to_string(),
            json!({"cpu_ms_per_scrape": finite(per_scrape_ms),
                   "base_cpu_ms_per_s": finite(1000.0 * base_per_s), "exposition_bytes": bytes}),
        );
    }
    out
}

/// Each implementation's scraped/unscraped W3 ratios, from `w3_scraped`.
pub fn ratios(results: &Map<String, Value>) -> Value {
    results
        .iter()
        .filter_map(|(name, r)| {
            let ratios = r
                .get("w3_scraped")?
                .get("scrape")?
                .get("ratios_scraped_over_unscraped")?;
            Some((name.clone(), ratios.clone()))
        })
        .collect::<Map<_, _>>()
        .into()
}

/// The scrapes' check fails a run whose scrapes fail or carry no raft metrics.
#[test]
fn scrapes_of_nothing_or_of_no_raft_metrics_fail_the_run() {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    let run = |addr: SocketAddr| {
        let scraper = Scraper::start(vec![addr]);
        scraper.switch(true);
        std::thread::sleep(Duration::from_millis(300));
        scraper.stop().failure()
    };
    // Nothing listens there.
    let dead = SocketAddr::from(([127, 0, 0, 1], crate::harness::free_port()));
    assert!(run(dead).is_some(), "a refused scrape must fail the run");

    // An exporter without kafka_server_raftmetrics_*.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("an address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.read(&mut [0u8; 1024]);
            let body = "# TYPE up gauge\nup 1\n";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let why = run(addr).expect("scrapes without raft metrics must fail the run");
    assert!(why.contains("raft samples"), "{why}");
}
