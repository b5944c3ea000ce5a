//! Issue #14's controller workloads, driven by the load generator (bench/load) on a 3-kraftd
//! and a 3-Java 4.4 static quorum in one run, with the same sizes and settings:
//! - W2: a CreateTopics storm on 3 simulated brokers: wall time, records/s, request latency;
//! - churn: AlterPartition ISR shrink/expand from those brokers' partition leaders: changes
//!   (records)/s, request latency;
//! - W3: a fleet of simulated brokers registering, then heartbeating every
//!   `broker.heartbeat.interval.ms`: heartbeat latency, each controller's CPU and RSS, the
//!   generator's own CPU, spurious fencings.
//!
//! W2 and then churn run on one quorum; W3 on a new one (`KRAFTD_LOAD_W3_FRESH=0`, the smoke
//! run's way, runs it on the first, after them: its fleet then registers with a controller that
//! holds W2's partitions; the RSS before it joined is reported beside).
//!
//! `KRAFTD_LOAD_TRANSPORT=mtls` (or `both`, what `make bench-controller` passes) runs W3 once more
//! per implementation on a quorum of its own whose controller listeners are SSL with client
//! certificates required (`Transport::MutualTls`, the compat suite's CA, PKCS12 stores for
//! kraftd and Java alike): every simulated broker dials over mutual TLS with kraftd's own
//! client TLS (`PeerSettings::tls`), and the figures land beside PLAINTEXT's as `w3_tls`, with
//! the kraftd/Java ratios over TLS and each implementation's TLS/PLAINTEXT ratios.
//!
//! `KRAFTD_LOAD_SCRAPE=1` (what `make bench-controller` passes) runs W3 once more per
//! implementation on a quorum whose controllers serve Prometheus metrics, scraped once a second in
//! alternate phases of its measured window (scraped.rs): figures `w3_scraped`, with each
//! implementation's scraped/unscraped ratios. The smoke run in `make test` scrapes the W3 of its
//! one quorum instead, so that the scraper and its checks run in CI.
//!
//! `KRAFTD_LOAD_SIZE=full` (`make bench-controller`) or `quick` (`make bench-controller
//! QUICK=1`) writes `target/bench/controller.json` with the kraftd/Java ratios; without it a
//! smoke run of a few seconds per quorum runs in `make test`. Knobs override single sizes (see
//! [`Sizes::from_env`]). Timings are printed and written, never asserted: the driver asserts only
//! functional outcomes (every topic created, every ISR change accepted, every broker unfenced
//! and never fenced again), after writing the JSON. Requests refused or left unanswered on the
//! way (e.g. REQUEST_TIMED_OUT from a loaded Java controller) are counted in the JSON.

mod scraped;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::harness::mixed_quorum::{Member, Mixed, QuorumMode};
use crate::harness::netns::Placement;
use crate::harness::pki::StoreFormat;
use crate::harness::quorum_probe::leader_view_at;
use crate::harness::transport::{PerNode, Transport};
use crate::harness::Kafka;
use crate::load::churn::{churn, create_churn_topic, ChurnConfig};
use crate::load::client::Controllers;
use crate::load::fleet::{Fleet, FleetConfig};
use crate::load::stats::{finite, LatencySummary, ProcessSample};
use crate::load::topics::{count_existing, create_topics, TopicStorm};
use crate::load_generator::{controllers_of, runtime, FIRST_BROKER};

/// W3's brokers get ids from here on, clear of W2's.
const FLEET_FIRST_BROKER: i32 = 1000;

#[derive(Debug, Clone)]
struct Sizes {
    mode: String,
    w2_topics: usize,
    w2_partitions: i32,
    w2_per_request: usize,
    w2_concurrency: usize,
    churn_partitions: usize,
    churn_batch: usize,
    churn_seconds: u64,
    w3_brokers: usize,
    w3_seconds: u64,
    heartbeat_ms: u64,
    /// W3 on a new quorum (else after W2 and churn, on a cluster holding their partitions).
    w3_fresh: bool,
    impls: Vec<String>,
    /// W3 on PLAINTEXT controller listeners (with W2 and churn), and/or over mutual TLS.
    plaintext: bool,
    mtls: bool,
    /// W3 once more, scraped once a second in alternate phases of this length.
    scrape_phase: Option<Duration>,
    /// After that window, this long (none in smoke runs) scraped every `scrape_cost_every` in
    /// alternate phases as long as the window's, for each controller's CPU per scrape.
    scrape_cost_seconds: u64,
    scrape_cost_every: Duration,
}

impl Sizes {
    /// `KRAFTD_LOAD_SIZE` (smoke, quick, full) picks the defaults; each `KRAFTD_LOAD_<KNOB>`
    /// overrides one: W2_TOPICS, W2_PARTITIONS, W2_PER_REQUEST, W2_CONCURRENCY,
    /// CHURN_PARTITIONS, CHURN_BATCH, CHURN_SECONDS, W3_BROKERS, W3_SECONDS, HEARTBEAT_MS,
    /// W3_FRESH (1: W3 on a quorum of its own, the default but for smoke runs);
    /// `KRAFTD_LOAD_IMPLS` (kraftd,java) which quorums run; `KRAFTD_LOAD_TRANSPORT` (plaintext,
    /// mtls, both, or none: neither) on which controller listeners; `KRAFTD_LOAD_SCRAPE` (1: W3 under
    /// scrapes, the default for smoke runs) with SCRAPE_PHASE_S (5),
    /// SCRAPE_COST_S (full 120, quick 60, smoke 0) and SCRAPE_COST_EVERY_MS (100).
    fn from_env() -> Sizes {
        let mode = std::env::var("KRAFTD_LOAD_SIZE").unwrap_or_else(|_| "smoke".into());
        let transport =
            std::env::var("KRAFTD_LOAD_TRANSPORT").unwrap_or_else(|_| "plaintext".into());
        let (plaintext, mtls) = match transport.as_str() {
            "plaintext" => (true, false),
            "mtls" => (false, true),
            "both" => (true, true),
            // Only the scraped W3 (with KRAFTD_LOAD_SCRAPE=1).
            "none" => (false, false),
            other => {
                panic!("KRAFTD_LOAD_TRANSPORT must be plaintext, mtls, both or none, not {other:?}")
            }
        };
        // (W2 topics, churn partitions, churn s, W3 brokers, W3 s)
        let (topics, churn_partitions, churn_seconds, brokers, seconds) = match mode.as_str() {
            "full" => (10_000, 1_000, 60, 1_000, 300),
            "quick" => (1_000, 300, 20, 300, 60),
            "smoke" => (100, 30, 3, 20, 10),
            other => panic!("KRAFTD_LOAD_SIZE must be smoke, quick or full, not {other:?}"),
        };
        let w3_seconds = knob("W3_SECONDS", seconds);
        // The smoke run scrapes its one quorum's W3, so that make test runs the scraper.
        let scrape_phase = (knob::<u8>("SCRAPE", u8::from(mode == "smoke")) != 0)
            .then(|| Duration::from_secs(knob("SCRAPE_PHASE_S", 5)));
        let cost_seconds = match mode.as_str() {
            "full" => 120,
            "quick" => 60,
            _ => 0,
        };
        let scrape_cost_seconds = knob("SCRAPE_COST_S", cost_seconds);
        Sizes {
            w2_topics: knob("W2_TOPICS", topics),
            w2_partitions: knob("W2_PARTITIONS", 10),
            w2_per_request: knob("W2_PER_REQUEST", 10),
            w2_concurrency: knob("W2_CONCURRENCY", 8),
            churn_partitions: knob("CHURN_PARTITIONS", churn_partitions),
            churn_batch: knob("CHURN_BATCH", 50),
            churn_seconds: knob("CHURN_SECONDS", churn_seconds),
            w3_brokers: knob("W3_BROKERS", brokers),
            w3_seconds,
            // Kafka's default broker.heartbeat.interval.ms.
            heartbeat_ms: knob("HEARTBEAT_MS", 2000),
            // The smoke run saves a quorum start.
            w3_fresh: knob::<u8>("W3_FRESH", u8::from(mode != "smoke")) != 0,
            impls: crate::harness::env_list("KRAFTD_LOAD_IMPLS", "kraftd,java"),
            mode,
            plaintext,
            mtls,
            scrape_phase,
            scrape_cost_seconds,
            scrape_cost_every: Duration::from_millis(knob("SCRAPE_COST_EVERY_MS", 100)),
        }
    }

    fn json(&self) -> Value {
        let transports: Vec<&str> = [
            self.plaintext.then_some("plaintext"),
            self.mtls.then_some("mtls"),
        ]
        .into_iter()
        .flatten()
        .collect();
        json!({
            "mode": self.mode,
            "w2": {"topics": self.w2_topics, "partitions": self.w2_partitions,
                   "replication_factor": 3, "brokers": 3,
                   "topics_per_request": self.w2_per_request, "concurrency": self.w2_concurrency},
            "churn": {"partitions": self.churn_partitions, "batch": self.churn_batch,
                      "seconds": self.churn_seconds, "brokers": 3},
            "w3": {"brokers": self.w3_brokers, "seconds": self.w3_seconds,
                   "heartbeat_interval_ms": self.heartbeat_ms, "own_quorum": self.w3_fresh},
            "transports": transports,
            "w3_scraped_phase_s": self.scrape_phase.map(|p| p.as_secs()),
            "w3_scrape_cost": {"seconds": self.scrape_cost_seconds,
                               "every_ms": self.scrape_cost_every.as_millis() as u64},
        })
    }
}

fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    crate::harness::env_number(&format!("KRAFTD_LOAD_{name}"), default)
}

#[test]
fn controller_load_on_kraftd_and_java() {
    let sizes = Sizes::from_env();
    eprintln!("controller bench: {sizes:?}");
    let mut results = Map::new();
    let mut failures = Vec::new();
    for name in &sizes.impls {
        let kraftd: &[i32] = match name.as_str() {
            "kraftd" => &[1, 2, 3],
            "java" => &[],
            other => panic!("KRAFTD_LOAD_IMPLS names kraftd and java, not {other:?}"),
        };
        // W3 on a quorum of its own, or after W2 and churn on the same one; then W3 over
        // mutual TLS on a quorum of its own.
        let plan: &[&[Workload]] = match (sizes.plaintext, sizes.w3_fresh) {
            (false, _) => &[],
            (true, true) => &[&[Workload::W2, Workload::Churn], &[Workload::W3]],
            (true, false) => &[&[Workload::W2, Workload::Churn, Workload::W3]],
        };
        let tls = Transport::MutualTls {
            kraftd: PerNode::Every(StoreFormat::Pkcs12),
        };
        let tls_plan: &[&[Workload]] = if sizes.mtls { &[&[Workload::W3]] } else { &[] };
        // Scraped: a W3 of its own; when W3 shares W2's quorum (the smoke run), that quorum.
        let scraped_plan: &[&[Workload]] = match sizes.scrape_phase {
            Some(_) if sizes.w3_fresh => &[&[Workload::W3]],
            _ => &[],
        };
        let shared_scraped = sizes.scrape_phase.is_some() && !sizes.w3_fresh;
        let runs = plan
            .iter()
            .map(|w| (Transport::Plaintext, *w, shared_scraped))
            .chain(tls_plan.iter().map(|w| (tls, *w, false)))
            .chain(
                scraped_plan
                    .iter()
                    .map(|w| (Transport::Plaintext, *w, true)),
            );
        let mut result = Map::new();
        for (transport, workloads, scrape) in runs {
            let (figures, failed) = run_quorum(name, kraftd, &sizes, transport, workloads, scrape);
            failures.extend(failed.into_iter().map(|f| format!("{name}: {f}")));
            result.extend(figures);
        }
        results.insert(name.clone(), Value::Object(result));
    }
    let ratios = ratios(&results);
    eprintln!("kraftd/java: {ratios}");
    let tls_ratios = tls_over_plaintext(&results);
    if sizes.mtls {
        eprintln!("W3 over mutual TLS / PLAINTEXT: {tls_ratios}");
    }
    let scraped_ratios = scraped::ratios(&results);
    if sizes.scrape_phase.is_some() {
        eprintln!("W3 scraped / unscraped: {scraped_ratios}");
    }
    let doc = json!({ "sizes": sizes.json(), "results": results, "ratios_kraftd_over_java": ratios,
                      "ratios_w3_tls_over_plaintext": tls_ratios,
                      "ratios_w3_scraped_over_unscraped": scraped_ratios });
    // `KRAFTD_LOAD_JSON`: another file name, for runs that must not replace make bench's.
    let name = std::env::var("KRAFTD_LOAD_JSON").unwrap_or_else(|_| {
        if sizes.mode == "smoke" {
            "controller-smoke.json".into()
        } else {
            "controller.json".into()
        }
    });
    let path = bench_dir().join(name);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("target/bench");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("json")).expect("write");
    eprintln!("wrote {}", path.display());
    assert!(
        failures.is_empty(),
        "functional failures:\n{}",
        failures.join("\n")
    );
}

fn bench_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("bench")
}

fn pid(m: &Member) -> u32 {
    match m {
        Member::Java(j) => j.pid(),
        Member::Kraftd(k, _) => k.pid(),
    }
}

/// Each controller's /proc reading, by node id.
fn sample(pids: &[(i32, u32)]) -> Vec<(i32, ProcessSample)> {
    pids.iter()
        .filter_map(|&(id, pid)| Some((id, ProcessSample::read(pid)?)))
        .collect()
}

/// CPU seconds and the share of one core per controller over a window, and their RSS at its end.
fn window(
    before: &[(i32, ProcessSample)],
    after: &[(i32, ProcessSample)],
    wall: Duration,
    leader: i32,
) -> Value {
    let mut nodes = Map::new();
    let mut total = 0.0;
    for ((id, b), (_, a)) in before.iter().zip(after) {
        let cpu = a.cpu_since(b).as_secs_f64();
        total += cpu;
        nodes.insert(
            id.to_string(),
            json!({"cpu_s": cpu, "cpu_pct": 100.0 * cpu / wall.as_secs_f64(),
                   "rss_mib": a.rss_kib as f64 / 1024.0, "peak_rss_mib": a.peak_rss_kib as f64 / 1024.0,
                   "active": *id == leader}),
        );
    }
    let active = nodes
        .get(&leader.to_string())
        .cloned()
        .unwrap_or(Value::Null);
    json!({"wall_s": wall.as_secs_f64(), "cpu_s_all": total, "active": active, "nodes": nodes})
}

fn latency(s: LatencySummary, what: &str, kind: &str) -> Value {
    eprintln!("  {kind} {what}: {}", s.line());
    s.json()
}

/// Which workloads one quorum runs, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workload {
    W2,
    Churn,
    W3,
}

/// Runs `workloads` on a new quorum whose controller listeners are on `transport`; returns
/// their figures by name (`_tls` appended over mutual TLS, `_scraped` when `scrape`: the
/// controllers serve Prometheus metrics, and W3 is scraped in alternate phases) and what went
/// wrong functionally. W2's three brokers register first and heartbeat throughout.
fn run_quorum(
    kind: &str,
    kraftd: &[i32],
    sizes: &Sizes,
    transport: Transport,
    workloads: &[Workload],
    scrape: bool,
) -> (Map<String, Value>, Vec<String>) {
    let suffix = match (transport, scrape) {
        (Transport::Plaintext, false) => "",
        (Transport::Plaintext, true) => "_scraped",
        (Transport::MutualTls { .. }, _) => "_tls",
        (Transport::SaslSsl { .. }, _) => panic!("the load generator speaks no SASL"),
    };
    let mut q = Mixed::start_observed(
        Kafka::get(),
        QuorumMode::Static,
        Placement::default(),
        transport,
        kraftd,
        &[],
        &[],
        scrape,
    );
    let leader = q.wait_for_leader(0).leader_id;
    let controllers = controllers_of(&q);
    controllers.set_leader(leader);
    let mut run = Run {
        kind: format!(
            "{kind}{}",
            match suffix {
                "_tls" => " (mTLS)",
                "_scraped" => " (scraped)",
                _ => "",
            }
        ),
        suffix,
        sizes: sizes.clone(),
        pids: q
            .voters
            .iter()
            .map(|v| v.id)
            .zip(q.members.iter().map(pid))
            .collect(),
        controllers,
        cluster_id: q.cluster_id.clone(),
        metrics_addrs: q.metrics_addrs.iter().flatten().copied().collect(),
        failures: Vec::new(),
        out: Map::new(),
    };
    runtime().block_on(async {
        let base = Fleet::start(
            run.controllers.clone(),
            run.fleet(FIRST_BROKER, 3, Duration::ZERO),
        );
        if let Err(e) = base.wait_unfenced(Duration::from_secs(120)).await {
            run.failures.push(format!("W2's brokers: {e}"));
            return;
        }
        for w in workloads {
            match w {
                Workload::W2 => run.w2().await,
                Workload::Churn => run.churn(&base).await,
                Workload::W3 => run.w3(&base).await,
            }
        }
        let b = base.stop().await;
        // W2's brokers ran through every workload: never fenced, still unfenced. Refused or
        // unanswered requests are figures (a loaded Java controller answers REQUEST_TIMED_OUT).
        if !b.errors.is_empty() {
            eprintln!("  {kind}: W2's brokers' errors: {:?}", b.errors);
        }
        if b.fencings > 0 || b.unfenced != b.brokers {
            run.failures.push(format!(
                "W2's brokers: {} of {} unfenced at the end, {} fencings, errors {:?}",
                b.unfenced, b.brokers, b.fencings, b.errors
            ));
        }
    });
    let end = leader_view_at(&q.addrs()).map(|d| d.leader_id);
    let names: Vec<String> = workloads.iter().map(|w| format!("{w:?}")).collect();
    let quorum = json!({"workloads": names, "leader_at_start": leader, "leader_at_end": end,
                        "controller_protocol": transport.controller_protocol()});
    run.out.insert(
        format!("quorum_{}{suffix}", names.join("_")).to_lowercase(),
        quorum,
    );
    q.assert_java_healthy();
    q.stop();
    (run.out, run.failures)
}

/// One quorum's run: where its controllers are, and what it found so far.
struct Run {
    kind: String,
    /// Appended to the workloads' names in the figures: `_tls` over mutual TLS.
    suffix: &'static str,
    sizes: Sizes,
    /// Each controller's node id and process id.
    pids: Vec<(i32, u32)>,
    controllers: Arc<Controllers>,
    cluster_id: String,
    /// Every controller's Prometheus endpoint, on a quorum started to be scraped.
    metrics_addrs: Vec<SocketAddr>,
    failures: Vec<String>,
    out: Map<String, Value>,
}

impl Run {
    fn fleet(&self, first: i32, brokers: usize, spread: Duration) -> FleetConfig {
        FleetConfig {
            cluster_id: self.cluster_id.clone(),
            first_broker_id: first,
            brokers,
            heartbeat_interval: Duration::from_millis(self.sizes.heartbeat_ms),
            start_spread: spread,
        }
    }

    /// W2: the CreateTopics storm.
    async fn w2(&mut self) {
        let (kind, sizes) = (&self.kind, &self.sizes);
        let storm = TopicStorm {
            prefix: "w2".into(),
            topics: sizes.w2_topics,
            partitions: sizes.w2_partitions,
            replication_factor: 3,
            per_request: sizes.w2_per_request,
            concurrency: sizes.w2_concurrency,
        };
        let before = sample(&self.pids);
        let s = create_topics(self.controllers.clone(), &storm).await;
        let cpu = window(
            &before,
            &sample(&self.pids),
            s.wall,
            self.controllers.leader_id(),
        );
        let existing = count_existing(self.controllers.clone(), &storm.names()).await;
        let records_per_s = storm.records() as f64 / s.wall.as_secs_f64();
        eprintln!(
            "  {kind} W2: {} topics x {} partitions in {:.2} s, {records_per_s:.0} records/s; {} created, {:?} refused",
            storm.topics, storm.partitions, s.wall.as_secs_f64(), s.created, s.errors.by_kind
        );
        if s.created != storm.topics || existing.as_ref().ok() != Some(&storm.topics) {
            self.failures.push(format!(
                "W2: {} of {} topics created, existing: {existing:?}; errors {:?}",
                s.created, storm.topics, s.errors
            ));
        }
        let w2 = json!({
            "wall_s": s.wall.as_secs_f64(), "records": storm.records(), "records_per_s": records_per_s,
            "requests": s.requests, "created": s.created, "errors": s.errors.json(),
            "request_latency": latency(s.latencies.summary(), "W2 CreateTopics", kind),
            "controllers": cpu,
        });
        self.out.insert("w2".into(), w2);
    }

    /// Churn: ISR shrink/expand from the three brokers.
    async fn churn(&mut self, base: &Fleet) {
        let (kind, sizes) = (&self.kind, &self.sizes);
        let controllers = self.controllers.clone();
        let brokers = base.broker_ids();
        let created = create_churn_topic(
            controllers.clone(),
            "churn",
            sizes.churn_partitions,
            &brokers,
        )
        .await;
        let (topic_id, partitions) = match created {
            Ok(c) => c,
            Err(e) => return self.failures.push(format!("churn topic: {e}")),
        };
        let config = ChurnConfig {
            batch: sizes.churn_batch,
            duration: Duration::from_secs(sizes.churn_seconds),
        };
        let before = sample(&self.pids);
        let c = churn(controllers.clone(), base, topic_id, partitions, &config).await;
        let cpu = window(
            &before,
            &sample(&self.pids),
            c.wall,
            controllers.leader_id(),
        );
        let per_s = c.changes as f64 / c.wall.as_secs_f64();
        eprintln!(
            "  {kind} churn: {} ISR changes in {} requests over {:.1} s, {per_s:.0} records/s; errors {:?}",
            c.changes, c.requests, c.wall.as_secs_f64(), c.errors.by_kind
        );
        if !c.errors.is_empty() || c.changes == 0 {
            self.failures.push(format!(
                "churn: {} changes, errors {:?}",
                c.changes, c.errors
            ));
        }
        let churn = json!({
            "wall_s": c.wall.as_secs_f64(), "isr_changes": c.changes, "records_per_s": per_s,
            "requests": c.requests, "errors": c.errors.json(),
            "request_latency": latency(c.latencies.summary(), "churn AlterPartition", kind),
            "controllers": cpu,
        });
        self.out.insert("churn".into(), churn);
    }

    /// W3: the fleet registers, spread over one heartbeat interval, then heartbeats.
    async fn w3(&mut self, base: &Fleet) {
        let (kind, sizes) = (self.kind.clone(), self.sizes.clone());
        let interval = Duration::from_millis(sizes.heartbeat_ms);
        let controllers = self.controllers.clone();
        let idle = sample(&self.pids);
        let joined = Instant::now();
        let fleet = Fleet::start(
            controllers.clone(),
            self.fleet(FLEET_FIRST_BROKER, sizes.w3_brokers, interval),
        );
        let all_unfenced = fleet.wait_unfenced(Duration::from_secs(300)).await;
        let register_cpu = window(
            &idle,
            &sample(&self.pids),
            joined.elapsed(),
            controllers.leader_id(),
        );
        if let Err(e) = &all_unfenced {
            self.failures.push(format!("W3: {e}"));
        }
        fleet.begin_measuring();
        let (before, me) = (sample(&self.pids), ProcessSample::read(std::process::id()));
        let measured = Instant::now();
        let length = Duration::from_secs(sizes.w3_seconds);
        let mut phased = match sizes
            .scrape_phase
            .filter(|_| !self.metrics_addrs.is_empty())
        {
            None => {
                tokio::time::sleep(length).await;
                None
            }
            Some(phase) => {
                let scraper =
                    scraped::Scraper::start(self.metrics_addrs.clone(), scraped::SCRAPE_INTERVAL);
                let leader = controllers.leader_id();
                let (mut figures, heartbeats) =
                    scraped::alternate(&scraper, &fleet, &self.pids, leader, length, phase).await;
                let tally = scraper.stop();
                if let Some(why) = tally.failure() {
                    self.failures.push(format!("W3 scraped: {why}"));
                }
                eprintln!(
                    "  {kind} W3 scraped/unscraped: {} ({} scrapes, samples per controller {:?})",
                    figures["ratios_scraped_over_unscraped"], tally.scrapes, tally.samples
                );
                tally.add_to(&mut figures);
                Some((figures, heartbeats))
            }
        };
        let wall = measured.elapsed();
        let (after, me_after) = (sample(&self.pids), ProcessSample::read(std::process::id()));
        fleet.end_measuring();
        let cpu = window(&before, &after, wall, controllers.leader_id());
        let generator_cpu = me.zip(me_after).map(|(b, a)| a.cpu_since(&b).as_secs_f64());
        // After the window, the fleet still heartbeating: each controller's CPU per scrape,
        // scraped ten times as often in the same alternate phases, so that the difference
        // stands well above the phases' noise (once a second, it is about that noise's size).
        let cost_length = Duration::from_secs(sizes.scrape_cost_seconds);
        let cost_phase = sizes.scrape_phase.filter(|_| !cost_length.is_zero());
        if let (Some((figures, _)), Some(phase)) = (phased.as_mut(), cost_phase) {
            let every = sizes.scrape_cost_every;
            let scraper = scraped::Scraper::start(self.metrics_addrs.clone(), every);
            let leader = controllers.leader_id();
            let (spaced, _) =
                scraped::alternate(&scraper, &fleet, &self.pids, leader, cost_length, phase).await;
            let tally = scraper.stop();
            if let Some(why) = tally.failure() {
                self.failures.push(format!("W3 scrape cost: {why}"));
            }
            eprintln!("  {kind} W3 CPU per scrape: {}", spaced["cost_per_scrape"]);
            figures["spaced"] = spaced;
        }
        let r = fleet.stop().await;
        // Phases restart the heartbeat timing: their union is the whole window's.
        let hb = match &phased {
            Some((_, heartbeats)) => heartbeats.summary(),
            None => r.heartbeats.summary(),
        };
        eprintln!(
            "  {kind} W3: {} brokers unfenced after {:?}; {} fencings; heartbeat {}; active controller CPU {}; generator CPU {generator_cpu:?} s",
            r.unfenced, all_unfenced.as_ref().ok(), r.fencings, hb.line(), cpu["active"]
        );
        if !r.errors.is_empty() {
            eprintln!("  {kind} W3 errors: {:?}", r.errors);
        }
        if r.fencings > 0 || r.unfenced != r.brokers {
            self.failures.push(format!(
                "W3: {} fencings, errors {:?}",
                r.fencings, r.errors
            ));
        }
        let mut w3 = json!({
            "brokers": r.brokers, "registered": r.registered, "unfenced": r.unfenced,
            "spurious_fencings": r.fencings + base.report().fencings, "errors": r.errors.json(),
            "all_unfenced_after_s": all_unfenced.as_ref().ok().map(Duration::as_secs_f64),
            "registration_latency": latency(r.registrations.summary(), "W3 BrokerRegistration", &kind),
            "unfenced_after_start": latency(r.unfenced_after.summary(), "W3 unfenced after fleet start", &kind),
            "heartbeat_latency": hb.json(),
            "generator_cpu_s": generator_cpu.map_or(Value::Null, finite),
            "generator_cpu_pct": generator_cpu.map_or(Value::Null, |c| finite(100.0 * c / wall.as_secs_f64())),
            "registration_window": register_cpu,
            "rss_before_fleet_mib": idle.iter().map(|(id, s)| (id.to_string(), json!(s.rss_kib as f64 / 1024.0))).collect::<Map<_, _>>(),
            "controllers": cpu,
        });
        if let Some((figures, _)) = phased {
            w3["scrape"] = figures;
        }
        self.out.insert(format!("w3{}", self.suffix), w3);
    }
}

/// W3's headline figures, as (name, path below `w3` or `w3_tls`).
const W3_FIGURES: [(&str, &[&str]); 4] = [
    ("heartbeat_p99", &["heartbeat_latency", "p99_ms"]),
    ("active_cpu", &["controllers", "active", "cpu_s"]),
    ("all_controllers_cpu", &["controllers", "cpu_s_all"]),
    ("active_rss", &["controllers", "active", "rss_mib"]),
];

fn at(v: &Value, path: &[&str]) -> Option<f64> {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
}

/// Each implementation's W3 figures over mutual TLS divided by its PLAINTEXT ones.
fn tls_over_plaintext(results: &Map<String, Value>) -> Value {
    results
        .iter()
        .filter_map(|(name, r)| {
            let (plain, tls) = (r.get("w3")?, r.get("w3_tls")?);
            let figures: Map<String, Value> = W3_FIGURES
                .iter()
                .map(|(figure, path)| {
                    let ratio = at(tls, path).zip(at(plain, path)).map(|(t, p)| t / p);
                    (figure.to_string(), ratio.map_or(Value::Null, finite))
                })
                .collect();
            Some((name.clone(), Value::Object(figures)))
        })
        .collect::<Map<_, _>>()
        .into()
}

/// kraftd's figure over Java's for each headline figure both runs have.
fn ratios(results: &Map<String, Value>) -> Value {
    let (Some(k), Some(j)) = (results.get("kraftd"), results.get("java")) else {
        return Value::Null;
    };
    let tls: Vec<(String, Vec<&str>)> = W3_FIGURES
        .iter()
        .map(|(name, path)| {
            let full = std::iter::once("w3_tls").chain(path.iter().copied());
            (format!("w3_tls_{name}"), full.collect())
        })
        .collect();
    let figures: [(&str, &[&str]); 9] = [
        ("w2_wall_time", &["w2", "wall_s"]),
        ("w2_records_per_s", &["w2", "records_per_s"]),
        ("w2_request_p99", &["w2", "request_latency", "p99_ms"]),
        ("churn_records_per_s", &["churn", "records_per_s"]),
        ("churn_request_p99", &["churn", "request_latency", "p99_ms"]),
        ("w3_heartbeat_p99", &["w3", "heartbeat_latency", "p99_ms"]),
        ("w3_active_cpu", &["w3", "controllers", "active", "cpu_s"]),
        (
            "w3_all_controllers_cpu",
            &["w3", "controllers", "cpu_s_all"],
        ),
        ("w3_active_rss", &["w3", "controllers", "active", "rss_mib"]),
    ];
    let figures = figures
        .iter()
        .map(|(name, path)| (name.to_string(), path.to_vec()))
        .chain(tls);
    figures
        .map(|(name, path)| {
            let r = at(k, &path).zip(at(j, &path)).map(|(a, b)| a / b);
            (name, r.map_or(Value::Null, finite))
        })
        .collect::<Map<_, _>>()
        .into()
}
