//! What mutual TLS costs per connection, kraftd against a Java 4.4 controller in one run
//! (`make bench-tls`; target/bench/tls.json with the kraftd/Java ratios). Each is a
//! single-node controller whose CONTROLLER listener is SSL with `ssl.client.auth=required`,
//! started from the compat suite's CA with the same PKCS12 stores (`Transport::MutualTls`):
//!
//! - (a) the cost of one connection: from the TCP connect to the first ApiVersions answer over a
//!   new mutual-TLS connection (and, within it, to the client's end of the handshake), p50/p99
//!   over `connections` connections opened one after the other, after `warmup` unmeasured ones;
//! - (b) the connections one core accepts: the controller pinned to core 0 (the test thread
//!   that starts it is pinned there first, so the process inherits it from birth and the JVM
//!   sizes itself for one CPU), the client's `concurrency` threads pinned to core 1, each
//!   opening a connection, completing the handshake, asking ApiVersions, reading the answer,
//!   sending close_notify and closing, for `seconds`; connections/s, the controller's CPU share
//!   of its core, the client's CPU (if the controller's core is not near 100 % busy, the client
//!   was the limit, and the figure is a floor for the controller, not its capacity).
//!
//! Every handshake is a full one: the client keeps no sessions (rustls `Resumption::disabled`).
//! The client is the harness's (rustls with the `ring` provider, the harness's certificate);
//! server certificates are verified, the IP included.
//!
//! `KRAFTD_TLS_BENCH=full|quick` runs it; unset, the test does nothing (it needs a controller of
//! each kind of its own, too dear for `make test`). Knobs: `KRAFTD_TLS_BENCH_CONNECTIONS`,
//! `_WARMUP`, `_SECONDS`, `_CONCURRENCY`, `_IMPLS` (kraftd,java). Java runs with
//! `KRAFTD_BENCH_JAVA_OPTS` (the Makefile passes Kafka's start scripts' options). Timings are
//! printed and written, never asserted; the test fails only when no connection was answered.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use serde_json::{json, Map, Value};

use kraftd::protocol::codec::ApiMessage;
use kraftd::protocol::frame::encode_request;
use kraftd::protocol::messages::ApiVersionsRequest;

use crate::failover_bench::bench_dir;
use crate::harness::kraftd_quorum::KraftdQuorum;
use crate::harness::pki::StoreFormat;
use crate::harness::transport::{client_config, PerNode, Role, Transport};
use crate::harness::{free_port, JavaController, TestDir};
use crate::load::stats::{finite, Latencies, ProcessSample};

/// The controller's core and the client's.
const SERVER_CORE: usize = 0;
const CLIENT_CORE: usize = 1;
const CORRELATION_ID: i32 = 7;
const IO_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
struct Knobs {
    mode: String,
    connections: usize,
    warmup: usize,
    seconds: u64,
    concurrency: usize,
    impls: Vec<String>,
}

impl Knobs {
    fn from_env() -> Option<Knobs> {
        let mode = std::env::var("KRAFTD_TLS_BENCH").ok()?;
        let (connections, warmup, seconds) = match mode.as_str() {
            "full" => (2000, 1000, 20),
            "quick" => (300, 200, 5),
            other => panic!("KRAFTD_TLS_BENCH must be full or quick, not {other:?}"),
        };
        Some(Knobs {
            connections: knob("CONNECTIONS", connections),
            warmup: knob("WARMUP", warmup),
            seconds: knob("SECONDS", seconds),
            concurrency: knob("CONCURRENCY", 8),
            impls: crate::harness::env_list("KRAFTD_TLS_BENCH_IMPLS", "kraftd,java"),
            mode,
        })
    }
}

fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    crate::harness::env_number(&format!("KRAFTD_TLS_BENCH_{name}"), default)
}

#[test]
fn tls_connection_cost_on_kraftd_and_java() {
    let Some(knobs) = Knobs::from_env() else {
        eprintln!("tls bench: not run (KRAFTD_TLS_BENCH=quick|full runs it: make bench-tls)");
        return;
    };
    let cores = online_cores();
    eprintln!("tls bench: {knobs:?}; {cores} cores");
    let mut results = Map::new();
    let mut failures = Vec::new();
    for name in &knobs.impls {
        let figures = run_impl(name, &knobs, cores >= 2);
        if figures["accept_rate"]["connections"].as_u64() == Some(0)
            || figures["connection"]["answered"].as_u64() == Some(0)
        {
            failures.push(format!("{name}: no connection was answered: {figures}"));
        }
        results.insert(name.clone(), figures);
    }
    let ratios = ratios(&results);
    eprintln!("tls bench: kraftd/java: {ratios}");
    let doc = json!({
        "knobs": {"mode": knobs.mode, "connections": knobs.connections, "warmup": knobs.warmup,
                  "seconds": knobs.seconds, "concurrency": knobs.concurrency},
        "setup": {"listener": "SSL, ssl.client.auth=required", "stores": "PKCS12 (both), EC P-256 keys",
                  "client": "rustls (ring), full handshakes (no resumption), ApiVersions v3 then close_notify",
                  "server_core": SERVER_CORE, "client_core": CLIENT_CORE, "cores": cores,
                  "loadavg": loadavg()},
        "results": results,
        "ratios_kraftd_over_java": ratios,
    });
    let path = bench_dir().join("tls.json");
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("target/bench");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("json")).expect("write");
    eprintln!("wrote {}", path.display());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One controller of kind `name`, started pinned to [`SERVER_CORE`] (when `pin`), and both parts
/// of the bench against it from [`CLIENT_CORE`].
fn run_impl(name: &str, knobs: &Knobs, pin: bool) -> Value {
    let dir = TestDir::new();
    let tls = Transport::MutualTls {
        kraftd: PerNode::Every(StoreFormat::Pkcs12),
    };
    if pin {
        pin_this_thread(Some(SERVER_CORE));
    }
    let started = Instant::now();
    let (server, port, pid) = Server::start(name, &dir, tls);
    eprintln!(
        "tls bench: {name}: single-node controller (pid {pid}) leads after {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if pin {
        pin_this_thread(Some(CLIENT_CORE));
    }
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let client = Client::new(addr);
    let affinity = cpus_allowed(pid);

    for _ in 0..knobs.warmup {
        let _ = client.connection();
    }
    let (mut total, mut handshake) = (Latencies::default(), Latencies::default());
    let mut errors = 0u64;
    for n in 0..knobs.connections {
        match client.connection() {
            Ok((hs, all)) => {
                handshake.record(hs);
                total.record(all);
            }
            Err(_) => errors += 1,
        }
        if (n + 1) % 1000 == 0 {
            eprintln!(
                "tls bench: {name}: (a) {} of {} connections",
                n + 1,
                knobs.connections
            );
        }
    }
    let (t, h) = (total.summary(), handshake.summary());
    eprintln!(
        "tls bench: {name}: (a) connect to ApiVersions answer: {}",
        t.line()
    );
    let connection = json!({"answered": t.count, "errors": errors, "warmup": knobs.warmup,
                            "to_api_versions_answer": t.json(), "to_client_handshake_end": h.json()});

    let rate = accept_rate(name, &client, pid, knobs);
    let out = json!({"pid": pid, "cpus_allowed": affinity, "connection": connection,
                     "accept_rate": rate, "rss_mib": ProcessSample::read(pid).map(|s| s.rss_kib as f64 / 1024.0)});
    drop(server);
    if pin {
        pin_this_thread(None);
    }
    out
}

/// (b): `concurrency` client threads (on this thread's core) open connections as fast as the
/// controller answers, for `seconds`.
fn accept_rate(name: &str, client: &Client, pid: u32, knobs: &Knobs) -> Value {
    let stop = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let failed = AtomicU64::new(0);
    let first_error = Mutex::new(None::<String>);
    let latencies = Mutex::new(Latencies::default());
    let (before, me_before) = (
        ProcessSample::read(pid),
        ProcessSample::read(std::process::id()),
    );
    let began = Instant::now();
    thread::scope(|s| {
        for _ in 0..knobs.concurrency {
            s.spawn(|| {
                let mut mine = Latencies::default();
                while !stop.load(Ordering::Relaxed) {
                    match client.connection() {
                        Ok((_, all)) => {
                            mine.record(all);
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            failed.fetch_add(1, Ordering::Relaxed);
                            first_error.lock().expect("lock").get_or_insert(e);
                        }
                    }
                }
                latencies.lock().expect("lock").extend(mine);
            });
        }
        let until = began + Duration::from_secs(knobs.seconds);
        let mut next_log = began + Duration::from_secs(5);
        while Instant::now() < until {
            thread::sleep(Duration::from_millis(100));
            if Instant::now() >= next_log {
                let n = done.load(Ordering::Relaxed);
                eprintln!(
                    "tls bench: {name}: (b) {n} connections in {:.0} s",
                    began.elapsed().as_secs_f64()
                );
                next_log += Duration::from_secs(5);
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    let wall = began.elapsed().as_secs_f64();
    let (after, me_after) = (
        ProcessSample::read(pid),
        ProcessSample::read(std::process::id()),
    );
    let n = done.load(Ordering::Relaxed);
    let cpu = before
        .zip(after)
        .map(|(b, a)| a.cpu_since(&b).as_secs_f64());
    let client_cpu = me_before
        .zip(me_after)
        .map(|(b, a)| a.cpu_since(&b).as_secs_f64());
    let lat = latencies.into_inner().expect("lock").summary();
    let per_s = n as f64 / wall;
    eprintln!(
        "tls bench: {name}: (b) {n} connections in {wall:.1} s: {per_s:.0}/s; controller CPU {cpu:?} s, client CPU {client_cpu:?} s; {}",
        lat.line()
    );
    json!({
        "connections": n, "errors": failed.load(Ordering::Relaxed),
        "first_error": first_error.into_inner().expect("lock"),
        "seconds": wall, "connections_per_s": finite(per_s),
        "concurrency": knobs.concurrency, "latency": lat.json(),
        "server_cpu_s": cpu.map_or(Value::Null, finite),
        "server_cpu_pct_of_core": cpu.map_or(Value::Null, |c| finite(100.0 * c / wall)),
        "server_cpu_ms_per_connection": cpu.filter(|_| n > 0).map_or(Value::Null, |c| finite(1000.0 * c / n as f64)),
        // Below 90 % of its core the controller was not the limit (the client, or the machine's
        // other work, was): the rate is then a floor of what it accepts, not its capacity.
        "server_core_saturated": cpu.map(|c| c / wall >= 0.9),
        "client_cpu_s": client_cpu.map_or(Value::Null, finite),
        "client_cpu_pct_of_core": client_cpu.map_or(Value::Null, |c| finite(100.0 * c / wall)),
    })
}

/// The mutual-TLS client: the harness's certificate and CA, no session resumption.
struct Client {
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
    request: Vec<u8>,
}

impl Client {
    fn new(addr: SocketAddr) -> Client {
        let mut config = (*client_config()).clone();
        config.resumption = rustls::client::Resumption::disabled();
        let request = ApiVersionsRequest {
            client_software_name: "kraftd-tls-bench".into(),
            client_software_version: "1".into(),
            ..Default::default()
        };
        let request = encode_request(
            ApiVersionsRequest::API_KEY,
            3,
            CORRELATION_ID,
            Some("tls-bench"),
            &request,
        )
        .expect("an ApiVersions v3 request");
        Client {
            addr,
            config: Arc::new(config),
            request,
        }
    }

    /// One connection: connect, handshake, ApiVersions, answer, close_notify. Returns the time
    /// to the client's end of the handshake and to the answer, both from before the connect.
    fn connection(&self) -> Result<(Duration, Duration), String> {
        let began = Instant::now();
        let mut tcp = TcpStream::connect_timeout(&self.addr, IO_TIMEOUT)
            .map_err(|e| format!("connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        tcp.set_read_timeout(Some(IO_TIMEOUT))
            .map_err(|e| format!("socket: {e}"))?;
        let name = ServerName::IpAddress(self.addr.ip().into());
        let mut conn = rustls::ClientConnection::new(self.config.clone(), name)
            .map_err(|e| format!("TLS client: {e}"))?;
        while conn.is_handshaking() {
            conn.complete_io(&mut tcp)
                .map_err(|e| format!("handshake: {e}"))?;
        }
        let handshake = began.elapsed();
        let mut stream = rustls::Stream::new(&mut conn, &mut tcp);
        stream
            .write_all(&self.request)
            .map_err(|e| format!("write: {e}"))?;
        let mut head = [0u8; 8];
        stream
            .read_exact(&mut head)
            .map_err(|e| format!("no ApiVersions answer: {e}"))?;
        let size = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let correlation = i32::from_be_bytes([head[4], head[5], head[6], head[7]]);
        if correlation != CORRELATION_ID || size < 4 {
            return Err(format!(
                "a bad answer header: size {size}, correlation id {correlation}"
            ));
        }
        let mut rest = vec![0u8; size as usize - 4];
        stream
            .read_exact(&mut rest)
            .map_err(|e| format!("the answer was cut short: {e}"))?;
        let answered = began.elapsed();
        conn.send_close_notify();
        let _ = conn.complete_io(&mut tcp);
        Ok((handshake, answered))
    }
}

/// The controller under test.
enum Server {
    Kraftd(KraftdQuorum),
    Java(Box<JavaController>),
}

impl Server {
    /// A single-node controller of kind `name` on `transport`, leading; its port and pid.
    fn start(name: &str, dir: &TestDir, transport: Transport) -> (Server, u16, u32) {
        match name {
            "kraftd" => {
                let mut q = KraftdQuorum::start_secured(dir, 1, transport);
                let (port, pid) = (q.port(1), q.node(1).pid());
                (Server::Kraftd(q), port, pid)
            }
            "java" => {
                let port = free_port();
                transport.register([port]);
                let mut builder = JavaController::builder(1).controller_port(port);
                for (k, v) in transport.node_props(1, Role::Controller { kraftd: false }, None) {
                    builder = builder.prop(&k, v);
                }
                let mut java = builder.start(dir);
                java.wait_until_leader(Duration::from_secs(120));
                let pid = java.pid();
                (Server::Java(Box::new(java)), port, pid)
            }
            other => panic!("KRAFTD_TLS_BENCH_IMPLS names kraftd and java, not {other:?}"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        match self {
            Server::Kraftd(q) => q.stop(),
            Server::Java(j) => {
                j.stop(Duration::from_secs(30));
            }
        }
    }
}

/// Pins the calling thread (and so every thread and process it starts from now on) to `core`,
/// or lets it run on every core with `None`.
fn pin_this_thread(core: Option<usize>) {
    // SAFETY: a cpu_set_t zeroed then filled with CPU_SET; sched_setaffinity(0, ..) affects only
    // the calling thread.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in 0..online_cores() {
            if core.is_none_or(|only| only == c) {
                libc::CPU_SET(c, &mut set);
            }
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    assert_eq!(
        set,
        0,
        "sched_setaffinity({core:?}): {}",
        std::io::Error::last_os_error()
    );
}

/// The cores online (not those this thread may use: pinning narrows that).
fn online_cores() -> usize {
    // SAFETY: sysconf only reads a system setting.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// `Cpus_allowed_list` of process `pid` (its main thread), as /proc says.
fn cpus_allowed(pid: u32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_string())
}

fn loadavg() -> Value {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map_or(Value::Null, |l| {
            json!(l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        })
}

/// kraftd's figure over Java's for each headline figure both runs have.
fn ratios(results: &Map<String, Value>) -> Value {
    let (Some(k), Some(j)) = (results.get("kraftd"), results.get("java")) else {
        return Value::Null;
    };
    let figures: [(&str, &[&str]); 5] = [
        (
            "connection_p50",
            &["connection", "to_api_versions_answer", "p50_ms"],
        ),
        (
            "connection_p99",
            &["connection", "to_api_versions_answer", "p99_ms"],
        ),
        ("connections_per_s", &["accept_rate", "connections_per_s"]),
        (
            "server_cpu_ms_per_connection",
            &["accept_rate", "server_cpu_ms_per_connection"],
        ),
        ("rss", &["rss_mib"]),
    ];
    let at = |v: &Value, path: &[&str]| {
        path.iter()
            .try_fold(v, |v, k| v.get(k))
            .and_then(Value::as_f64)
    };
    figures
        .iter()
        .map(|(name, path)| {
            let r = at(k, path).zip(at(j, path)).map(|(a, b)| a / b);
            (name.to_string(), r.map_or(Value::Null, finite))
        })
        .collect::<Map<_, _>>()
        .into()
}
