#!/usr/bin/env python3
"""Raft commit benchmark: kraftd against Kafka's own kafka.tools.TestRaftServer, side by side in one run.

For each implementation and each `controller.quorum.append.linger.ms` value this starts a 3-voter
quorum on loopback (three processes, each with its own data dir and port, in its own process group),
waits for a leader, lets the leader's workload run through a warm-up, then measures for a fixed
duration and reports commit latency p50 / p99 / p99.9 and committed records/s. What is measured, and
the JSON line format both implementations print, is specified in bench/raft/README.md.

  java    Kafka 4.4.0's kafka.tools.TestRaftServer (the class bin/test-kraft-server-start.sh runs),
          from the pinned jars, launched through bench/raft/TestRaftServerProbe.java, which runs it
          unchanged and adds the JSON interval lines (full latency histogram, committed records).
  kraftd  `kraftd test-raft-server --config F --throughput N --record-size S --replica-directory-id ID`
          (the driver fails if the binary lacks the subcommand).

Results: target/bench/raft-<impl>-linger<N>.json per run, target/bench/raft.json with every run and
the kraftd/java ratios, and a table on stdout. Per-run logs and configs: target/bench/raft/<impl>-linger<N>/.

--transport mtls runs both quorums with the CONTROLLER listener on SSL and ssl.client.auth=required
(stores made once per run by bench/pki.py, openssl + keytool; kraftd and Java read the same PKCS12
files): results in target/bench/raft-tls-<impl>-linger<N>.json and target/bench/raft-tls.json, and
a "tls" section in raft.json (when a PLAINTEXT run wrote one) with the TLS medians, the kraftd/java
ratios over TLS and each implementation's TLS/PLAINTEXT ratios. Logs: target/bench/raft/tls-*/.

Knobs (flags, or the environment variable in brackets):
  --impls java,kraftd        [RAFT_BENCH_IMPLS]
  --lingers 0,25             [RAFT_BENCH_LINGERS]        controller.quorum.append.linger.ms values
  --throughput 5000          [RAFT_BENCH_THROUGHPUT]     offered load, records/s (TestRaftServer --throughput)
  --record-size 256          [RAFT_BENCH_RECORD_SIZE]
  --duration 30              [RAFT_BENCH_DURATION_S]     measured seconds
  --warmup 10                [RAFT_BENCH_WARMUP_S]       seconds of leader workload discarded first
  --closed-loop 1            [RAFT_BENCH_CLOSED_LOOP]    after the open-loop runs, closed-loop runs with these
                                                         numbers of records in flight (µs latencies); "" = none
  --saturation 256,...,65536 [RAFT_BENCH_SATURATION]     then, per impl, closed loop with these windows in turn
                                                         until the committed rate stops rising (+10 %); "" = none
  --closed-lingers 0,25      [RAFT_BENCH_CLOSED_LINGERS] lingers of both (default: --lingers)
  --repeat 1                 [RAFT_BENCH_REPEAT]         runs per (impl, linger); odd repeats run kraftd first
  --transport plaintext|mtls [RAFT_BENCH_TRANSPORT]    mtls: SSL controller listeners, client certificates required
  --scrape 0|1               [RAFT_BENCH_SCRAPE]         1: then W1 under 1 s Prometheus scrapes (scrape_phases.py):
                                                         per impl, closed loop with 1 in flight and with the
                                                         window its saturation sweep peaked at, measured
  --scrape-duration 300      [RAFT_BENCH_SCRAPE_S]       for this many seconds (more in flight: the next knob)
  --scrape-saturated-duration 200 [RAFT_BENCH_SCRAPE_SATURATED_S]  (Java's saturation writes some
                                                         275 MB/s over its 3 logs: 300 s filled this
                                                         project's 68 GB free)
  --scrape-phase 5           [RAFT_BENCH_SCRAPE_PHASE_S] in alternate scraped and unscraped phases of this length
                                                         ("scrape" in raft.json)
  --scrape-windows ""        [RAFT_BENCH_SCRAPE_WINDOWS] these windows instead, for every impl
  [BENCH_JMX_AGENT]          the JMX exporter javaagent jar (--scrape with Java; make bench-raft sets it)
  --kraftd PATH              [KRAFTD]                    default $CARGO_TARGET_DIR|target /release/kraftd
  --java-main probe|kafka    [RAFT_BENCH_JAVA_MAIN]      kafka: run kafka.tools.TestRaftServer's own main
                                                         and use only its 5 s println (p75/p99/p99.9, no p50)
  [RAFT_BENCH_JAVA_OPTS]     JVM options (default: those bin/test-kraft-server-start.sh gets from
                             kafka-run-class.sh: 1 GB heap, G1, MaxGCPauseMillis=20, ...)
  [BENCH_JAVA_CP]            Kafka classpath (default: from compat/resolve-kafka)
  [RAFT_BENCH_DIR]           scratch root (default target/bench/raft); [RAFT_BENCH_KEEP_DATA=1] keeps logs' data
"""

import argparse
import base64
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pki as bench_pki  # noqa: E402  bench/pki.py: the mutual-TLS runs' CA and stores
import processes  # noqa: E402  bench/processes.py: children in their own process groups
import closed_loop  # noqa: E402  bench/raft/closed_loop.py: closed-loop figures and summaries
import scrape_phases  # noqa: E402  bench/raft/scrape_phases.py: W1 under 1 s Prometheus scrapes

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(REPO, "bench", "raft")
KAFKA_VERSION = os.environ.get("KAFKA_VERSION", "4.4.0")
NODES = 3
REPORT_INTERVAL_MS = 1000
# What bin/test-kraft-server-start.sh runs the JVM with: KAFKA_HEAP_OPTS="-Xmx1G -Xms1G" and
# kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS.
DEFAULT_JAVA_OPTS = ("-Xms1g -Xmx1g -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 "
                     "-XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent "
                     "-XX:MaxInlineLevel=15 -Djava.awt.headless=true")
# TestRaftServer's own summary, printed every 5 s by the leader (WriteStats.printSummary).
KAFKA_LINE = re.compile(r"Throughput \(bytes/second\): ([0-9.]+), Latency \(ms\): ([0-9.NaInfity]+) p75 "
                        r"([0-9.NaInfity]+) p99 ([0-9.NaInfity]+) p999")
WORKLOAD_DIED = re.compile(r"ERROR \[raft-workload-generator\]|Exiting raft server due to fatal exception")
QUANTILES = (("p50_ms", 500), ("p99_ms", 990), ("p999_ms", 999))  # per mille
JMX_RULES = os.path.join(REPO, "compat", "jmx-exporter-kraft.yaml")


def log(msg):
    print(f"raft-bench: {msg}", file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# processes


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def random_directory_id():
    while True:
        uid = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
        if not uid.startswith("-"):
            return uid


# ---------------------------------------------------------------------------------------------
# implementations


class Java:
    name = "java"

    def __init__(self, args):
        self.main = args.java_main
        self.opts = os.environ.get("RAFT_BENCH_JAVA_OPTS", DEFAULT_JAVA_OPTS).split()
        cp = os.environ.get("BENCH_JAVA_CP")
        if not cp:
            try:
                res = subprocess.run([os.path.join(REPO, "compat", "resolve-kafka")], check=True,
                                     stdout=subprocess.PIPE, text=True)
            except (OSError, subprocess.CalledProcessError) as e:
                raise BenchError(f"compat/resolve-kafka failed: {e}")
            with open(res.stdout.strip().splitlines()[-1]) as f:
                cp = f.read().strip()
        self.kafka_cp = cp
        # Prometheus's JMX exporter javaagent (compat/resolve-kafka's jmx-exporter-agent.txt), for --scrape.
        self.jmx_agent = os.environ.get("BENCH_JMX_AGENT")
        classes = os.path.join(args.dir, "java-classes")
        srcs = [os.path.join(HERE, f) for f in ("TestRaftServerProbe.java", "ClosedLoopWorkload.java")]
        cls = os.path.join(classes, "TestRaftServerProbe.class")
        newest = max(os.path.getmtime(f) for f in srcs)
        if self.main == "probe" and (not os.path.exists(cls) or os.path.getmtime(cls) < newest):
            os.makedirs(classes, exist_ok=True)
            log(f"compiling {', '.join(os.path.relpath(f, REPO) for f in srcs)}")
            subprocess.run(["javac", "-nowarn", "-d", classes, "-cp", cp, *srcs], check=True)
        self.cp = f"{classes}:{cp}"

    def available(self):
        return None

    def command(self, config, directory_id, throughput, record_size, run_dir, window=0, metrics_port=None):
        log4j = os.path.join(run_dir, "log4j2.properties")
        with open(log4j, "w") as f:
            # Logs go to stderr (node<i>.err) so stdout holds only TestRaftServer's println and the
            # probe's JSON lines. Raft at INFO: role transitions, for reading a run afterwards.
            f.write("status = warn\nname = raft-bench\nshutdownHook = disable\n"
                    "appender.console.type = Console\nappender.console.name = CONSOLE\n"
                    "appender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\n"
                    "appender.console.layout.pattern = [%d{ISO8601}] %p [%t] %m (%c)%n\n"
                    "rootLogger.level = WARN\nrootLogger.appenderRef.console.ref = CONSOLE\n"
                    "logger.raft.name = org.apache.kafka.raft\nlogger.raft.level = INFO\n")
        main = "TestRaftServerProbe" if self.main == "probe" else "kafka.tools.TestRaftServer"
        agent = []
        if metrics_port:
            if not self.jmx_agent:
                raise BenchError("--scrape needs BENCH_JMX_AGENT, the JMX exporter javaagent jar "
                                 "(make bench-raft sets it from compat/resolve-kafka)")
            # The compat suite's Strimzi-style rules; the probe registers raft-metrics with JMX.
            agent = [f"-javaagent:{self.jmx_agent}=127.0.0.1:{metrics_port}:{JMX_RULES}", "-Draftbench.jmx=true"]
        argv = ["java", *self.opts, *agent, f"-Dlog4j2.configurationFile={log4j}", "-cp", self.cp, main,
                "--config", config, "--throughput", str(throughput), "--record-size", str(record_size),
                "--replica-directory-id", directory_id]
        if self.main == "probe":
            argv += ["--report-interval-ms", str(REPORT_INTERVAL_MS)]
        if window:
            # The probe stops TestRaftServer's own generator; its rate no longer matters.
            argv += ["--closed-loop", str(window)]
        return argv


class Kraftd:
    name = "kraftd"

    def __init__(self, args):
        self.bin = args.kraftd

    def available(self):
        """None when usable; raises BenchError when the binary or its subcommand is missing."""
        if not os.access(self.bin, os.X_OK):
            raise BenchError(f"{self.bin} not found; build it first (cargo build --release) or pass --kraftd")
        try:
            res = subprocess.run([self.bin, "test-raft-server", "--help"], stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            raise BenchError(f"`{self.bin} test-raft-server --help` did not return within 30 s")
        if res.returncode != 0:
            msg = (res.stderr or res.stdout).strip().splitlines()
            raise BenchError(f"`{self.bin} test-raft-server --help` failed "
                             f"({msg[0] if msg else 'exit ' + str(res.returncode)}); rebuild kraftd (make build)")
        return None

    def command(self, config, directory_id, throughput, record_size, run_dir, window=0, metrics_port=None):
        # metrics_port: kraftd.http.listener is in the node's config (write_configs).
        return [self.bin, "test-raft-server", "--config", config, "--throughput", str(throughput),
                "--record-size", str(record_size), "--replica-directory-id", directory_id,
                *(["--closed-loop", str(window)] if window else [])]


# ---------------------------------------------------------------------------------------------
# one run


def percentile(hist, per_mille, total):
    """TestRaftServer's rule (Kafka's Percentiles.value): the smallest latency L such that more than
    q of the samples are <= L. hist: sorted [(latency_ms, count)]."""
    cum = 0
    for value, count in hist:
        cum += count
        if cum * 1000 > per_mille * total:
            return value
    return hist[-1][0] if hist else None


def write_configs(run_dir, linger_ms, pki=None, http_ports=None):
    """Each node's properties; with `pki`, the CONTROLLER listener on SSL with client auth required
    (TestRaftServer's KafkaRaftManager dials its peers with the first controller listener's
    protocol and listener.name.controller.ssl.* settings, kraftd likewise)."""
    ports = free_ports(NODES)
    voters = ",".join(f"{i + 1}@127.0.0.1:{p}" for i, p in enumerate(ports))
    configs = []
    for i, port in enumerate(ports):
        node = i + 1
        data = os.path.join(run_dir, f"data{node}")
        path = os.path.join(run_dir, f"node{node}.properties")
        with open(path, "w") as f:
            f.write(f"# raft-bench node {node} (TestRaftServer forces process.roles=controller itself)\n"
                    f"process.roles=controller\nnode.id={node}\n"
                    f"listeners=CONTROLLER://127.0.0.1:{port}\ncontroller.listener.names=CONTROLLER\n"
                    f"controller.quorum.voters={voters}\nlog.dirs={data}\n"
                    f"controller.quorum.append.linger.ms={linger_ms}\n")
            for k, v in (pki.listener_props(f"controller-{node}") if pki else {}).items():
                f.write(f"{k}={v}\n")
            if http_ports:
                f.write(f"kraftd.http.listener=127.0.0.1:{http_ports[i]}\n")
        configs.append(path)
    return configs, ports


def parse_new_lines(path, state):
    """Yields the complete lines appended to path since the last call (state: dict with 'pos')."""
    try:
        with open(path, "rb") as f:
            f.seek(state.get("pos", 0))
            data = f.read()
    except OSError:
        return []
    end = data.rfind(b"\n")
    if end < 0:
        return []
    state["pos"] = state.get("pos", 0) + end + 1
    return data[: end + 1].decode(errors="replace").splitlines()


def run_one(impl, linger_ms, args, window=0, scrape_phase_s=None):
    """One (impl, linger) run: open loop, or closed loop with `window` records in flight. With
    `scrape_phase_s`, every node serves Prometheus metrics and the measured time alternates between
    phases scraped once a second and phases not scraped (scrape_phases.py); the run measures
    args.scrape_duration seconds (args.scrape_saturated_duration with more than 1 in flight; at
    saturation the committed rate varies by about 8 % from one second to the next, so resolving
    2 % in its ratio takes some 130 intervals an arm)."""
    mode = (f"-closed{window}" if window else "") + ("-scraped" if scrape_phase_s else "")
    tls = "tls-" if args.pki else ""
    run_dir = os.path.join(args.dir, f"{tls}{impl.name}-linger{linger_ms}{mode}")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    metrics_ports = free_ports(NODES) if scrape_phase_s else [None] * NODES
    configs, ports = write_configs(run_dir, linger_ms, args.pki,
                                   metrics_ports if scrape_phase_s and impl.name == "kraftd" else None)
    scraper = scrape_phases.PhasedScraper([f"http://127.0.0.1:{p}/metrics" for p in metrics_ports],
                                          scrape_phase_s) if scrape_phase_s else None
    mode = (" over mTLS" if args.pki else "") + mode
    load_before = os.getloadavg()
    procs = []
    for i, config in enumerate(configs):
        node = i + 1
        argv = impl.command(config, random_directory_id(), args.throughput, args.record_size, run_dir, window,
                            metrics_ports[i])
        with open(os.path.join(run_dir, f"node{node}.cmd"), "w") as f:
            f.write(" ".join(argv) + "\n")
        procs.append(processes.spawn(argv, run_dir, os.path.join(run_dir, f"node{node}.out"),
                           os.path.join(run_dir, f"node{node}.err")))
    log(f"{impl.name} linger.ms={linger_ms}{mode}: started nodes {[p.pid for p in procs]} in {os.path.relpath(run_dir, REPO)}")

    tls_check = None     # with --transport mtls: what each node's listener did for bench/pki.py's probe
    states = [{} for _ in procs]
    err_states = [{} for _ in procs]
    zero_streak = 0      # consecutive measured intervals without a commit
    intervals = []       # measured JSON interval lines
    kafka_lines = []     # TestRaftServer's own println, leader only
    first_ms = None      # start_ms of the first interval with commits (leader's workload running)
    leader = None        # (node_id, leader_epoch) of the first measured interval
    leader_changes = 0
    measured_ms = 0
    started = time.monotonic()
    last_line = time.monotonic()
    warm_ms = args.warmup * 1000
    if not scraper:
        want_ms = args.duration * 1000
    else:
        want_ms = (args.scrape_duration if window <= 1 else args.scrape_saturated_duration) * 1000
    try:
        while True:
            for i, proc in enumerate(procs):
                if proc.poll() is not None:
                    raise BenchError(f"{impl.name} node {i + 1} exited with {proc.returncode} during the run:\n"
                                     f"{processes.tail(os.path.join(run_dir, f'node{i + 1}.err'))}\n"
                                     f"{processes.tail(os.path.join(run_dir, f'node{i + 1}.out'), 10)}")
            for i, st in enumerate(err_states):
                for line in parse_new_lines(os.path.join(run_dir, f"node{i + 1}.err"), st):
                    # TestRaftServer's generator thread dies on any exception but NotLeaderException
                    # (e.g. "number of batches 10 reached 10" when the offered load exceeds what the
                    # quorum commits); the process stays up, committing nothing. Fail the run instead.
                    if WORKLOAD_DIED.search(line):
                        raise BenchError(f"{impl.name} node {i + 1}: the workload generator died "
                                         f"(offered load too high?):\n{processes.tail(os.path.join(run_dir, f'node{i + 1}.err'), 15)}")
            for i, st in enumerate(states):
                for line in parse_new_lines(os.path.join(run_dir, f"node{i + 1}.out"), st):
                    m = KAFKA_LINE.search(line)
                    if m:
                        last_line = time.monotonic()
                        kafka_lines.append({"node_id": i + 1, "at_s": round(time.monotonic() - started, 1),
                                            "bytes_per_s": float(m.group(1)), "p75_ms": float(m.group(2)),
                                            "p99_ms": float(m.group(3)), "p999_ms": float(m.group(4))})
                        if first_ms is None and args.java_main == "kafka" and impl.name == "java":
                            first_ms = time.time() * 1000
                        continue
                    if not line.startswith("{") or '"raft_bench"' not in line:
                        continue
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        raise BenchError(f"{impl.name} node {i + 1} printed a malformed JSON line: {line!r}")
                    last_line = time.monotonic()
                    if first_ms is None:
                        if rec["records"] > 0:
                            if args.pki:
                                # Every listener must be mutual TLS (a node that ignored the
                                # SSL settings would serve PLAINTEXT here).
                                try:
                                    tls_check = {str(n + 1): bench_pki.check_listener(args.pki, port, f"controller-{n + 1}")
                                                 for n, port in enumerate(ports)}
                                except bench_pki.PkiError as e:
                                    raise BenchError(f"{impl.name}: {e}")
                                log(f"{impl.name}: all {NODES} listeners are mutual TLS "
                                    f"({tls_check['1'].get('tls_version')}, {tls_check['1'].get('cipher')})")
                            first_ms = rec["start_ms"]
                            log(f"{impl.name} linger.ms={linger_ms}: node {rec['node_id']} leads epoch "
                                f"{rec['leader_epoch']} and commits; warming up {args.warmup} s")
                        continue
                    if rec["start_ms"] < first_ms + warm_ms or measured_ms >= want_ms:
                        continue
                    key = (rec["node_id"], rec["leader_epoch"])
                    if leader is None:
                        leader = key
                    elif key != leader:
                        leader_changes += 1
                        leader = key
                    intervals.append(rec)
                    measured_ms += rec["end_ms"] - rec["start_ms"]
                    zero_streak = zero_streak + 1 if rec["records"] == 0 else 0
                    if zero_streak >= 10:
                        raise BenchError(f"{impl.name}: the leader committed nothing for {zero_streak} intervals; "
                                         f"logs in {run_dir}")
            if args.java_main == "kafka" and impl.name == "java" and first_ms is not None:
                if time.time() * 1000 >= first_ms + warm_ms + want_ms:
                    break
            elif measured_ms >= want_ms:
                break
            if scraper and scraper.ident is None and first_ms is not None and time.time() * 1000 >= first_ms + warm_ms:
                scraper.start()
                log(f"{impl.name}: scraping {NODES} nodes once a second in alternate {scrape_phase_s:g} s phases")
            if first_ms is None and time.monotonic() - started > args.startup_timeout:
                raise BenchError(f"{impl.name}: no leader committed records within {args.startup_timeout} s; logs in {run_dir}")
            if first_ms is not None and time.monotonic() - last_line > 15:
                raise BenchError(f"{impl.name}: no report line for 15 s; logs in {run_dir}")
            time.sleep(0.2)
    finally:
        if scraper and scraper.is_alive():
            scraper.stop()
        for proc in procs:
            processes.stop(proc)
        if not os.environ.get("RAFT_BENCH_KEEP_DATA"):
            for node in range(1, NODES + 1):
                shutil.rmtree(os.path.join(run_dir, f"data{node}"), ignore_errors=True)

    result = {
        "impl": impl.name, "linger_ms": linger_ms, "record_size": args.record_size,
        "offered_rate": None if window else args.throughput, "closed_loop": window,
        "transport": args.transport,
    }
    if tls_check:
        result["tls_check"] = tls_check
    if args.java_main == "kafka" and impl.name == "java":
        # Only TestRaftServer's own summary: windowed (30 s x 2 samples) p75/p99/p99.9 capped at 250 ms,
        # and bytes/s from a Rate that under-reports during its first 30 s.
        last = kafka_lines[-1] if kafka_lines else None
        result.update({"source": "kafka-println", "p50_ms": None,
                       "p75_ms": last and last["p75_ms"], "p99_ms": last and last["p99_ms"],
                       "p999_ms": last and last["p999_ms"],
                       "committed_records_per_s": last and round(last["bytes_per_s"] / args.record_size, 1)})
    else:
        hist = {}
        records = 0
        byte_count = 0
        for rec in intervals:
            for value, count in rec["latency_ms_hist"]:
                hist[value] = hist.get(value, 0) + count
            records += rec["records"]
            byte_count += rec["bytes"]
        hist = sorted(hist.items())
        total = sum(c for _, c in hist)
        if total != records:
            raise BenchError(f"{impl.name}: histogram counts {total} != records {records}")
        secs = measured_ms / 1000.0
        result["source"] = "json-intervals"
        for key, q in QUANTILES:
            result[key] = percentile(hist, q, total) if total else None
        result["p75_ms"] = percentile(hist, 750, total) if total else None
        result.update({
            "committed_records_per_s": round(records / secs, 1) if secs else 0.0,
            "committed_bytes_per_s": round(byte_count / secs, 1) if secs else 0.0,
            "mean_ms": round(sum(v * c for v, c in hist) / total, 3) if total else None,
            "max_ms": hist[-1][0] if hist else None,
            "records": records,
            "measured_s": secs,
            "intervals": len(intervals),
            "leader_node": intervals[0]["node_id"] if intervals else None,
            "leader_epoch": intervals[0]["leader_epoch"] if intervals else None,
            "leader_changes": leader_changes,
            "latency_ms_hist": [[v, c] for v, c in hist],
        })
        if window:
            result.update(closed_loop.micros_figures(intervals))
        if scraper:
            result["scrape"] = scrape_phases.compare(scraper, intervals)
            sc = result["scrape"]
            if not sc["scrapes"] or sc["failed_scrapes"] or not all(sc["raft_metrics_samples"].values()):
                raise BenchError(f"{impl.name}: scrapes failed or found no kafka_server_raftmetrics_* samples: "
                                 f"{sc['scrapes']} answered, {sc['failed_scrapes']} failed {sc['failures']}, "
                                 f"raft samples {sc['raft_metrics_samples']}; logs in {run_dir}")
        if leader_changes:
            log(f"WARNING {impl.name} linger.ms={linger_ms}: the leader changed {leader_changes} time(s) "
                "during the measured window; the numbers include the failover")
    # The machine's state, since the comparison only holds between runs on a similarly loaded host.
    result["host"] = {"cpus": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
                      "loadavg_after": [round(x, 2) for x in os.getloadavg()]}
    result.update({"warmup_s": args.warmup, "duration_s": args.duration, "nodes": NODES,
                   "kafka_version": KAFKA_VERSION, "kafka_reported": kafka_lines[-3:],
                   "java_main": args.java_main if impl.name == "java" else None,
                   "logs": os.path.relpath(run_dir, REPO)})
    return result


# ---------------------------------------------------------------------------------------------


def fmt(v, nd=1):
    if v is None:
        return "-"
    return f"{v:.{nd}f}" if isinstance(v, float) else str(v)


def main():
    env = os.environ.get
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impls", default=env("RAFT_BENCH_IMPLS", "java,kraftd"))
    ap.add_argument("--lingers", default=env("RAFT_BENCH_LINGERS", "0,25"))
    ap.add_argument("--throughput", type=int, default=int(env("RAFT_BENCH_THROUGHPUT", "5000")))
    ap.add_argument("--record-size", type=int, default=int(env("RAFT_BENCH_RECORD_SIZE", "256")))
    ap.add_argument("--duration", type=float, default=float(env("RAFT_BENCH_DURATION_S", "30")))
    ap.add_argument("--warmup", type=float, default=float(env("RAFT_BENCH_WARMUP_S", "10")))
    ap.add_argument("--closed-loop", default=env("RAFT_BENCH_CLOSED_LOOP", "1"))
    ap.add_argument("--saturation", default=env("RAFT_BENCH_SATURATION", "256,1024,4096,16384,65536"))
    ap.add_argument("--closed-lingers", default=env("RAFT_BENCH_CLOSED_LINGERS", ""))
    ap.add_argument("--scrape", choices=("0", "1"), default=env("RAFT_BENCH_SCRAPE", "0"))
    ap.add_argument("--scrape-duration", type=float, default=float(env("RAFT_BENCH_SCRAPE_S", "300")))
    ap.add_argument("--scrape-saturated-duration", type=float,
                    default=float(env("RAFT_BENCH_SCRAPE_SATURATED_S", "200")))
    ap.add_argument("--scrape-windows", default=env("RAFT_BENCH_SCRAPE_WINDOWS", ""))
    ap.add_argument("--scrape-phase", type=float, default=float(env("RAFT_BENCH_SCRAPE_PHASE_S", "5")))
    ap.add_argument("--repeat", type=int, default=int(env("RAFT_BENCH_REPEAT", "1")))
    ap.add_argument("--startup-timeout", type=float, default=float(env("RAFT_BENCH_STARTUP_S", "120")))
    ap.add_argument("--transport", choices=("plaintext", "mtls"), default=env("RAFT_BENCH_TRANSPORT", "plaintext"))
    ap.add_argument("--kraftd", default=env("KRAFTD", os.path.join(target, "release", "kraftd")))
    ap.add_argument("--java-main", choices=("probe", "kafka"), default=env("RAFT_BENCH_JAVA_MAIN", "probe"))
    ap.add_argument("--dir", default=env("RAFT_BENCH_DIR", os.path.join(REPO, "target", "bench", "raft")))
    ap.add_argument("--out", default=os.path.join(REPO, "target", "bench"))
    args = ap.parse_args()
    args.dir = os.path.abspath(args.dir)
    lingers = [int(x) for x in args.lingers.split(",") if x.strip()]
    windows = [int(x) for x in args.closed_loop.split(",") if x.strip() and int(x) > 0]
    closed_lingers = [int(x) for x in (args.closed_lingers or args.lingers).split(",") if x.strip()]
    names = [x.strip() for x in args.impls.split(",") if x.strip()]
    if not set(names) <= {"java", "kraftd"}:
        ap.error(f"--impls: unknown implementation in {args.impls!r}")

    processes.install()
    os.makedirs(args.dir, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    # Output names: raft-... for PLAINTEXT, raft-tls-... for mutual TLS.
    stem = "raft-tls" if args.transport == "mtls" else "raft"
    args.pki = None
    if args.transport == "mtls":
        try:
            args.pki = bench_pki.Pki(os.path.join(args.dir, "pki"))
            for node in range(1, NODES + 1):
                args.pki.keystore(f"controller-{node}")
        except bench_pki.PkiError as e:
            log(f"error: cannot make the TLS stores: {e}")
            return 1
        log(f"mutual TLS: a CA and {NODES} PKCS12 key stores in {os.path.relpath(args.pki.dir, REPO)}")

    # Results of earlier invocations must not pass for this one's (e.g. a kraftd file when kraftd is skipped).
    for name in names:
        for linger in set(lingers) | set(closed_lingers):
            for f in os.listdir(args.out):
                if re.fullmatch(rf"{stem}-{name}-linger{linger}(-closed\d+)?(-r\d+)?\.json", f):
                    os.remove(os.path.join(args.out, f))
    impls = []
    skipped = {}
    try:
        for name in names:
            impl = Java(args) if name == "java" else Kraftd(args)
            reason = impl.available()
            if reason:
                log(f"skipping {name}: {reason}")
                skipped[name] = reason
            else:
                impls.append(impl)
        runs = []

        def record(impl, linger, window, rep, res):
            res["repeat"] = rep
            runs.append(res)
            suffix = (f"-closed{window}" if window else "") + (f"-r{rep}" if args.repeat > 1 else "")
            with open(os.path.join(args.out, f"{stem}-{impl.name}-linger{linger}{suffix}.json"), "w") as f:
                json.dump(res, f, indent=2)
                f.write("\n")
            print(json.dumps({k: res.get(k) for k in ("impl", "transport", "linger_ms", "closed_loop", "offered_rate", "p50_ms",
                                                      "p99_ms", "p999_ms", "p50_us", "p99_us",
                                                      "committed_records_per_s")}), flush=True)

        plan = [(linger, 0) for linger in lingers] + [(l, w) for w in windows for l in closed_lingers]
        for rep in range(args.repeat):
            for linger, window in plan:
                for impl in (impls if rep % 2 == 0 else list(reversed(impls))):
                    record(impl, linger, window, rep, run_one(impl, linger, args, window))
        sweep = [int(x) for x in args.saturation.split(",") if x.strip() and int(x) > 0]
        for linger in closed_lingers if sweep else []:
            for impl in impls:
                closed_loop.saturation_sweep(lambda w: run_one(impl, linger, args, w), sweep,
                                             lambda w, res: record(impl, linger, w, 0, res), log)
        scrape = scrape_runs(impls, closed_lingers[0], args, runs) if args.scrape == "1" else None
    except BenchError as e:
        log(f"error: {e}")
        processes.stop_all()
        return 1

    # Summary: medians over repeats, and kraftd/java ratios per linger.
    closed, saturation = closed_loop.summaries(runs)
    runs_all, runs = runs, [r for r in runs if not r["closed_loop"]]
    summary = {}
    for res in runs:
        summary.setdefault((res["impl"], res["linger_ms"]), []).append(res)

    def median(vals):
        vals = sorted(v for v in vals if v is not None)
        if not vals:
            return None
        mid = len(vals) // 2
        return float(vals[mid]) if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2.0

    keys = ("p50_ms", "p99_ms", "p999_ms", "committed_records_per_s")
    table = {f"{i}-linger{l}": {k: median([r[k] for r in rs]) for k in keys} for (i, l), rs in summary.items()}
    ratios = {}
    for linger in lingers:
        j, k = table.get(f"java-linger{linger}"), table.get(f"kraftd-linger{linger}")
        if j and k:
            ratios[f"linger{linger}"] = {key: (round(k[key] / j[key], 3) if j[key] else None) for key in keys}
    out = {"kafka_version": KAFKA_VERSION, "transport": args.transport, "offered_rate": args.throughput, "record_size": args.record_size,
           "duration_s": args.duration, "warmup_s": args.warmup, "repeat": args.repeat, "skipped": skipped,
           "medians": table, "ratios_kraftd_over_java": ratios, "closed_loop": closed, "saturation": saturation,
           "scrape": scrape,
           "runs": [{k: v for k, v in r.items() if k not in ("latency_ms_hist", "latency_us_hist")} for r in runs_all]}
    if args.repeat > 1:
        # raft-<impl>-linger<N>.json: medians over the repeats (each repeat is in its -r<k> file).
        for (name, linger), rs in summary.items():
            res = {"impl": name, "linger_ms": linger, "record_size": args.record_size,
                   "offered_rate": args.throughput, **table[f"{name}-linger{linger}"],
                   "aggregate": f"median of {len(rs)} repeats",
                   "repeats": [{k: r[k] for k in ("repeat", "p50_ms", "p99_ms", "p999_ms",
                                                  "committed_records_per_s", "host")} for r in rs]}
            with open(os.path.join(args.out, f"{stem}-{name}-linger{linger}.json"), "w") as f:
                json.dump(res, f, indent=2)
                f.write("\n")
    with open(os.path.join(args.out, f"{stem}.json"), "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    if args.pki:
        merge_tls(os.path.join(args.out, "raft.json"), out)

    print(f"\nraft commit benchmark{' over mutual TLS' if args.pki else ''}: 3 voters on loopback, {args.record_size}-byte records, "
          f"offered {args.throughput} records/s, {args.duration:g} s measured after {args.warmup:g} s warm-up")
    print(f"{'impl':8} {'linger':>6} {'p50 ms':>8} {'p99 ms':>8} {'p99.9 ms':>9} {'records/s':>11}")
    for (name, linger), _ in sorted(summary.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        row = table[f"{name}-linger{linger}"]
        print(f"{name:8} {linger:>6} {fmt(row['p50_ms']):>8} {fmt(row['p99_ms']):>8} {fmt(row['p999_ms']):>9} "
              f"{fmt(row['committed_records_per_s']):>11}")
    for row in (closed or {}).get("rows", []):
        print("closed loop: " + " ".join(f"{h}={v}" for h, v in zip(closed["header"], row)))
    for name, reason in skipped.items():
        print(f"{name}: skipped: {reason}")
    print(f"JSON: {os.path.relpath(os.path.join(args.out, stem + '.json'), REPO)}")
    return 0


def scrape_runs(impls, linger, args, runs):
    """W1 under 1 s scrapes: per implementation, a closed-loop run with 1 record in flight and one
    with the window at which its saturation sweep peaked (if the sweep ran), each alternating
    scraped and unscraped phases. Returns raft.json's "scrape" section."""
    _, saturation = closed_loop.summaries(runs)
    peak = {row[0]: row[2] for row in (saturation or {}).get("rows", [])}
    given = [int(x) for x in args.scrape_windows.split(",") if x.strip()]
    section = {"description": "W1 with every node's /metrics scraped once a second (kraftd: kraftd.http.listener; "
                              "Java: Prometheus's JMX exporter javaagent under compat/jmx-exporter-kraft.yaml, "
                              "TestRaftServer's raft-metrics registered with JMX) in alternate phases of one run; "
                              "ratios are the scraped phases' figure over the unscraped phases'.",
               "linger_ms": linger, "runs": {}}
    for impl in impls:
        for window in given or sorted({1, peak.get(impl.name, 1)}):
            res = run_one(impl, linger, args, window, scrape_phase_s=args.scrape_phase)
            sc = res["scrape"]
            section["runs"][f"{impl.name}-closed{window}"] = sc
            log(f"{impl.name} {window} in flight under 1 s scrapes: scraped/unscraped "
                + ", ".join(f"{k} {v}" for k, v in sc["ratios_scraped_over_unscraped"].items())
                + f" ({sc['scrapes']} scrapes, {sc['samples_per_scrape']} samples each)")
    return section


def merge_tls(plain_path, tls):
    """raft.json's "tls" section: the TLS run's medians, kraftd/java ratios and closed-loop rows,
    and per implementation and linger TLS/PLAINTEXT ratios against the PLAINTEXT medians there."""
    try:
        with open(plain_path) as f:
            plain = json.load(f)
    except (OSError, ValueError):
        log(f"no PLAINTEXT {os.path.relpath(plain_path, REPO)} to put the TLS figures beside; "
            "they are in raft-tls.json only")
        return
    over_plain = {}
    for key, row in tls["medians"].items():
        base = plain.get("medians", {}).get(key)
        if base:
            over_plain[key] = {k: (round(row[k] / base[k], 3) if row[k] is not None and base[k] else None)
                               for k in row}
    plain["tls"] = {"transport": "mtls", "source": "raft-tls.json", "medians": tls["medians"],
                    "ratios_kraftd_over_java": tls["ratios_kraftd_over_java"],
                    "ratios_tls_over_plaintext": over_plain, "closed_loop": tls["closed_loop"],
                    "saturation": tls["saturation"], "skipped": tls["skipped"],
                    # The TLS runs follow the PLAINTEXT ones, minutes later: on a shared machine the
                    # TLS/PLAINTEXT ratios hold only if the load stayed alike.
                    "loadavg_before_runs": [r["host"]["loadavg_before"][0] for r in tls["runs"] if r.get("host")]}
    with open(plain_path, "w") as f:
        json.dump(plain, f, indent=2)
        f.write("\n")
    log(f"TLS figures added to {os.path.relpath(plain_path, REPO)} (\"tls\")")


if __name__ == "__main__":
    sys.exit(main())
