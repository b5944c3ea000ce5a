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

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::{at, sample};
use crate::harness::metrics::KeptScrape;
use crate::load::fleet::Fleet;
use crate::load::stats::{finite, Latencies};

/// How often Prometheus scrapes in the goal's terms (the window's phases).
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

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

/// A thread scraping every controller once an interval while switched on, one after another.
pub struct Scraper {
    interval: Duration,
    on: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    tally: Arc<Mutex<Tally>>,
    thread: Option<JoinHandle<()>>,
}

impl Scraper {
    /// Starts switched off.
    pub fn start(addrs: Vec<SocketAddr>, interval: Duration) -> Scraper {
        let (on, done) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let tally = Arc::new(Mutex::new(Tally::default()));
        let (on2, done2, tally2) = (on.clone(), done.clone(), tally.clone());
        let thread = std::thread::spawn(move || {
            let mut kept: Vec<KeptScrape> = addrs.iter().copied().map(KeptScrape::new).collect();
            while !done2.load(Ordering::Relaxed) {
                if !on2.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                let tick = Instant::now();
                for (addr, conn) in addrs.iter().zip(&mut kept) {
                    // Switched off mid-tick: the rest wait, so no scrape falls in an off phase.
                    if !on2.load(Ordering::Relaxed) {
                        break;
                    }
                    let outcome = conn.scrape();
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
                std::thread::sleep(interval.saturating_sub(tick.elapsed()));
            }
        });
        Scraper {
            interval,
            on,
            done,
            tally,
            thread: Some(thread),
        }
    }

    fn switch(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
    }

    fn scrapes(&self) -> u64 {
        self.tally.lock().expect("not poisoned").scrapes
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
    /// Each controller's CPU seconds per second in each phase.
    by_node: BTreeMap<i32, Vec<f64>>,
}

/// The mean of per-phase figures and its standard error; `None` under two phases (a smoke
/// run's), which have no spread to speak of.
fn mean_se(v: &[f64]) -> Option<(f64, f64)> {
    let n = v.len() as f64;
    (v.len() >= 2).then(|| {
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, (var / n).sqrt())
    })
}

impl Arm {
    /// The active controller's CPU seconds per second in each phase.
    fn active_per_phase(&self, leader: i32) -> &[f64] {
        self.by_node.get(&leader).map_or(&[], Vec::as_slice)
    }

    fn json(&self, leader: i32) -> Value {
        let secs = self.wall.as_secs_f64();
        let hb = self.heartbeats.summary();
        json!({"phases": self.phases, "wall_s": secs, "active_cpu_per_s_by_phase": self.active_per_phase(leader),
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
            let per_s = cpu / wall.as_secs_f64();
            arm.by_node.entry(*id).or_default().push(per_s);
            arm.all_cpu += cpu;
            if *id == leader {
                arm.active_cpu += cpu;
            }
        }
        arm.wall += wall;
        arm.phases += 1;
        arm.heartbeats.extend(heartbeats);
    }
    scraper.switch(false);
    let (on_json, off_json) = (on.json(leader), off.json(leader));
    let ratios: Map<String, Value> = FIGURES
        .iter()
        .map(|(name, path)| {
            let r = at(&on_json, path)
                .zip(at(&off_json, path))
                .map(|(a, b)| a / b);
            (name.to_string(), r.map_or(Value::Null, finite))
        })
        .collect();
    // The active CPU ratio's 95 % interval (normal approximation over the phases, which with 12
    // to 30 phases an arm is some 5-10 % narrower than Student's t; the slow drift the phase order
    // cancels in the means widens it the other way).
    let active = (on.active_per_phase(leader), off.active_per_phase(leader));
    let interval = match (mean_se(active.0), mean_se(active.1)) {
        (Some((m_on, se_on)), Some((m_off, se_off))) => {
            let r = m_on / m_off;
            let half = 1.96 * r * ((se_on / m_on).powi(2) + (se_off / m_off).powi(2)).sqrt();
            json!([finite(r - half), finite(r + half)])
        }
        _ => Value::Null,
    };
    // Every tick scrapes every controller once (a failed scrape fails the run).
    let per_node = scraper.scrapes() as f64 / pids.len().max(1) as f64;
    let scrapes_per_s = per_node / on.wall.as_secs_f64();
    let cost = cost_per_scrape(&on, &off, scrapes_per_s, leader);
    let mut all = on.heartbeats;
    all.extend(off.heartbeats);
    let figures = json!({"phase_s": phase.as_secs_f64(), "scrape_interval_s": scraper.interval.as_secs_f64(),
                         "scrapes_per_s_per_controller": finite(scrapes_per_s),
                         "scraped": on_json, "unscraped": off_json,
                         "ratios_scraped_over_unscraped": ratios,
                         "active_cpu_ratio_95": interval, "cost_per_scrape": cost});
    (figures, all)
}

/// Each controller's CPU per scrape in ms: the scraped phases' mean CPU per second less the
/// unscraped phases', over the scrapes a second each controller got, with its 95 % interval;
/// and what one scrape a second adds to its unscraped CPU, as a ratio (`ratio_at_1_per_s`).
fn cost_per_scrape(on: &Arm, off: &Arm, scrapes_per_s: f64, leader: i32) -> Map<String, Value> {
    let mut out = Map::new();
    for (id, on_phases) in &on.by_node {
        let Some(off_phases) = off.by_node.get(id) else {
            continue;
        };
        let (Some((m_on, se_on)), Some((m_off, se_off))) =
            (mean_se(on_phases), mean_se(off_phases))
        else {
            continue;
        };
        let per_scrape = (m_on - m_off) / scrapes_per_s;
        let half = 1.96 * (se_on.powi(2) + se_off.powi(2)).sqrt() / scrapes_per_s;
        let at_1_per_s = |cost: f64| finite(1.0 + cost / SCRAPE_INTERVAL.as_secs_f64() / m_off);
        out.insert(
            id.to_string(),
            json!({"active": *id == leader,
                   "cpu_ms_per_scrape": finite(1000.0 * per_scrape),
                   "cpu_ms_per_scrape_95": [finite(1000.0 * (per_scrape - half)), finite(1000.0 * (per_scrape + half))],
                   "unscraped_cpu_ms_per_s": finite(1000.0 * m_off),
                   "ratio_at_1_per_s": at_1_per_s(per_scrape),
                   "ratio_at_1_per_s_95": [at_1_per_s(per_scrape - half), at_1_per_s(per_scrape + half)]}),
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
        let scraper = Scraper::start(vec![addr], Duration::from_millis(100));
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
