#!/usr/bin/env python3
"""The raft loop's stall while a large image snapshot is written (`make bench-snapshot`, issue #10):
kraftd and Kafka 4.4's controller side by side in one run.

1. synthesize a metadata log of TOPICS x PARTITIONS partitions (bench/image/synth_metadata_log.rs,
   epoch 1) and, for each implementation, format a single-node static-quorum controller directory
   (`kraftd format`, Kafka's `kafka.tools.StorageTool format`) and put the segment in place of the
   empty log (a copy each);
2. start the controller (`kraftd start`, Kafka's `kafka.Kafka` with process.roles=controller), in a
   process group of its own, NoOps every IDLE_MS, and snapshots by time
   (`metadata.log.max.snapshot.interval.ms` = INTERVAL_S; the byte trigger set out of reach), or by
   bytes when MAX_BYTES is set. The time trigger is the default because Java's SnapshotGenerator
   starts counting bytes only once its loader has caught up (the replayed log does not count), while
   kraftd counts the replayed log and snapshots the moment its replay ends: with a byte trigger the
   two snapshot the full image at unrelated moments, and kraftd's first has no quiet time before it;
3. a probe sends DescribeQuorum v2 (answered by the raft thread in both: KafkaRaftClient, kraftd's
   node loop) every PROBE_MS over one connection and records each round trip and the high
   watermark it reports; another thread polls the partition directory every POLL_MS for
   `<id>-<n>.checkpoint.part` (the snapshot being written) and `<id>.checkpoint` (frozen), and the
   process's CPU time and RSS;
4. the node is "quiet" once its CPU use over the last second stays under QUIET_CPU cores (replay,
   loading and JIT are over); the measured snapshot is the first one that starts at least BASELINE_S
   after that. Windows: before = the BASELINE_S before its .part appeared; during = from the .part
   appearing to its .checkpoint existing (a round trip counts when it overlaps that); after = the
   AFTER_S after it.

Reported per implementation: snapshot wall time (directory) and bytes; the raft loop's own time
kraftd logs (open + freeze) and each side's log lines; DescribeQuorum RTT p50/p99/max before,
during and after; the longest time between successive high-watermark advances overlapping the
snapshot (and before it, for scale); CPU seconds the process used while it was written; RSS before
it, the largest RSS sampled while it was written, and VmHWM (peak RSS of the whole run) at the
end; the longest RTT while starting (kraftd replays the log on its raft loop). Ratios kraftd/java.
Results: target/bench/snapshot.json, a table on stdout; per-implementation logs, configs and the
probe's samples in DIR/<impl>/ (kept); the data directories and the synthesized log are removed
unless KEEP is set.

Environment (the Makefile's bench-snapshot target sets the first ones):
  KRAFTD, SYNTH                   the binaries
  BENCH_JAVA_CP                   Kafka's classpath (target/compat/kafka-4.4.0/classpath.txt)
  BENCH_JAVA_TOOLS_LOG4J          log4j2 config for StorageTool (stderr, WARN)
  SNAPSHOT_BENCH_TOPICS (1000), SNAPSHOT_BENCH_PARTITIONS (1000), SNAPSHOT_BENCH_REPLICAS (3)
  SNAPSHOT_BENCH_IMPLS (java,kraftd)     run in this order
  SNAPSHOT_BENCH_INTERVAL_S (60)         metadata.log.max.snapshot.interval.ms
  SNAPSHOT_BENCH_MAX_BYTES (unset)       set: metadata.log.max.record.bytes.between.snapshots, no timer
  SNAPSHOT_BENCH_IDLE_MS (50)            metadata.max.idle.interval.ms (NoOps)
  SNAPSHOT_BENCH_PROBE_MS (5), SNAPSHOT_BENCH_POLL_MS (5)
  SNAPSHOT_BENCH_BASELINE_S (10), SNAPSHOT_BENCH_AFTER_S (10), SNAPSHOT_BENCH_QUIET_CPU (0.2)
  SNAPSHOT_BENCH_TIMEOUT_S (900)         per implementation, start to the end of the after window
  SNAPSHOT_BENCH_JAVA_OPTS               default: Kafka's kafka-run-class.sh JVM options with -Xmx6g
  SNAPSHOT_BENCH_DIR (target/bench/snapshot), SNAPSHOT_BENCH_KEEP (unset: remove the data)
"""

import bisect
import json
import math
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import processes  # noqa: E402  bench/processes.py: children in their own process groups

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KAFKA_VERSION = os.environ.get("KAFKA_VERSION", "4.4.0")
CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"
PARTITION = "__cluster_metadata-0"
# kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS, with a heap that holds 1M partitions twice
# (the controller's and the loader's image).
DEFAULT_JAVA_OPTS = ("-Xmx6g -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 "
                     "-XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent "
                     "-XX:MaxInlineLevel=15 -Djava.awt.headless=true")
# Java's controller at INFO logs every replayed PartitionRecord; only what the bench reads.
JAVA_LOG4J = """status = warn
name = snapshot-bench
appender.console.type = Console
appender.console.name = CONSOLE
appender.console.target = SYSTEM_OUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d{ISO8601}] %p [%t] %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.console.ref = CONSOLE
shutdownHook = disable
logger.raft.name = org.apache.kafka.raft
logger.raft.level = INFO
logger.image.name = org.apache.kafka.image
logger.image.level = INFO
logger.qc.name = org.apache.kafka.controller.QuorumController
logger.qc.level = INFO
logger.server.name = kafka.server.KafkaRaftServer
logger.server.level = INFO
"""
SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})(?:-\d+)?\.checkpoint(\.part)?$")
LOG_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d),(\d{3})\]")
KRAFTD_DONE = re.compile(r"created snapshot (\d+)@e(\d+) of the image \((\d+) records, (\d+) bytes\) in (\d+) ms "
                         r"on its own thread; the raft loop spent (\d+) us opening it and (\d+) us freezing it")
JAVA_START = re.compile(r"Creating new KRaft snapshot file snapshot (\d{20})-(\d{10})")
JAVA_DONE = re.compile(r"Successfully wrote snapshot (\d{20})-(\d{10})")



def log(msg):
    print(f"snapshot-bench: {msg}", file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


def env(name, default=None):
    value = os.environ.get(name, default)
    if value is None:
        raise BenchError(f"set {name} (see the Makefile's bench-snapshot target)")
    return value


# ---------------------------------------------------------------------------------------------
# processes


def run(argv, what):
    res = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if res.returncode != 0:
        raise BenchError(f"{what} failed ({' '.join(argv[:3])} ...):\n{res.stdout}{res.stderr}")
    return res.stdout


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def proc_status(pid, key):
    """A /proc/<pid>/status field in KiB (VmRSS, VmHWM), or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime
    except (OSError, IndexError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------
# DescribeQuorum v2 on the wire (request header v2, response header v1, both flexible)


def uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def describe_quorum_request(correlation_id):
    client = b"snapshot-bench"
    topic = PARTITION.rsplit("-", 1)[0].encode()
    header = struct.pack(">hhih", 55, 2, correlation_id, len(client)) + client + b"\x00"
    body = (uvarint(2) + uvarint(len(topic) + 1) + topic  # Topics[1]: TopicName
            + uvarint(2) + struct.pack(">i", 0) + b"\x00"  # Partitions[1]: PartitionIndex 0, tags
            + b"\x00" + b"\x00")  # topic tags, request tags
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("short response")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def uvarint(self):
        shift = value = 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def compact_bytes(self):
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1)

    def tagged_fields(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())


def parse_describe_quorum(correlation_id, data):
    """(error code, leader id, leader epoch, high watermark) of partition 0 of a v2 response."""
    r = Reader(data)
    if r.unpack(">i") != correlation_id:
        raise ValueError("correlation id mismatch")
    r.tagged_fields()
    error = r.unpack(">h")
    r.compact_bytes()  # ErrorMessage
    if error or r.uvarint() < 2:
        return error, -1, -1, -1
    r.compact_bytes()  # TopicName
    if r.uvarint() < 2:
        return -1, -1, -1, -1
    r.unpack(">i")  # PartitionIndex
    error = r.unpack(">h")
    r.compact_bytes()
    leader, epoch, hwm = r.unpack(">i"), r.unpack(">i"), r.unpack(">q")
    return error, leader, epoch, hwm


def recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed")
        buf += chunk
    return bytes(buf)


class Probe(threading.Thread):
    """DescribeQuorum every period over one connection: samples (sent, received, error, epoch, hwm),
    monotonic seconds. Reconnects (and counts it) if the connection drops."""

    def __init__(self, port, period_s):
        super().__init__(daemon=True)
        self.port, self.period = port, period_s
        self.samples = []
        self.reconnects = 0
        self.stop = threading.Event()

    def run(self):
        corr = 0
        while not self.stop.is_set():
            try:
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=1.0)
            except OSError:
                time.sleep(0.05)
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(300.0)
            try:
                while not self.stop.is_set():
                    corr += 1
                    sent = time.monotonic()
                    sock.sendall(describe_quorum_request(corr))
                    size = struct.unpack(">i", recv_exact(sock, 4))[0]
                    data = recv_exact(sock, size)
                    got = time.monotonic()
                    error, _leader, epoch, hwm = parse_describe_quorum(corr, data)
                    self.samples.append((sent, got, error, epoch, hwm))
                    pause = sent + self.period - time.monotonic()
                    if pause > 0:
                        time.sleep(pause)
            except (OSError, ConnectionError, ValueError, struct.error):
                self.reconnects += 1
            finally:
                sock.close()


class Poller(threading.Thread):
    """Polls the partition directory for snapshot files, and the process's CPU time and RSS."""

    def __init__(self, pid, partition_dir, period_s):
        super().__init__(daemon=True)
        self.pid, self.dir, self.period = pid, partition_dir, period_s
        self.part_seen = {}     # snapshot id (offset, epoch) -> first time its .part was seen
        self.frozen_seen = {}   # snapshot id -> first time its .checkpoint was seen
        self.sizes = {}         # snapshot id -> .checkpoint bytes
        self.part_missed = set()  # snapshots written within one poll: started after the poll before
        self.cpu = []           # (t, cpu seconds)
        self.rss = []           # (t, RSS KiB)
        self.stop = threading.Event()

    def run(self):
        next_stats = 0.0
        previous = time.monotonic()
        while not self.stop.is_set():
            now = time.monotonic()
            try:
                names = os.listdir(self.dir)
            except OSError:
                names = []
            for name in names:
                m = SNAPSHOT_NAME.match(name)
                if not m:
                    continue
                sid = (int(m.group(1)), int(m.group(2)))
                if m.group(3):
                    self.part_seen.setdefault(sid, now)
                elif sid not in self.frozen_seen:
                    self.frozen_seen[sid] = now
                    if sid not in self.part_seen:
                        self.part_seen[sid] = previous
                        self.part_missed.add(sid)
                    try:
                        self.sizes[sid] = os.path.getsize(os.path.join(self.dir, name))
                    except OSError:
                        pass
            if now >= next_stats:
                cpu, rss = proc_cpu_s(self.pid), proc_status(self.pid, "VmRSS")
                if cpu is not None:
                    self.cpu.append((now, cpu))
                if rss is not None:
                    self.rss.append((now, rss))
                next_stats = now + 0.1
            previous = now
            time.sleep(self.period)


# ---------------------------------------------------------------------------------------------
# the two controllers


def write_properties(path, port, data_dir, args):
    if args["max_bytes"]:
        trigger = (f"metadata.log.max.record.bytes.between.snapshots={args['max_bytes']}\n"
                   "metadata.log.max.snapshot.interval.ms=0\n")
    else:
        trigger = (f"metadata.log.max.record.bytes.between.snapshots={1 << 60}\n"
                   f"metadata.log.max.snapshot.interval.ms={int(args['interval_s'] * 1000)}\n")
    with open(path, "w") as f:
        f.write(f"# snapshot-bench: a single-node static quorum\n"
                f"process.roles=controller\nnode.id=1\n"
                f"listeners=CONTROLLER://127.0.0.1:{port}\ncontroller.listener.names=CONTROLLER\n"
                f"listener.security.protocol.map=CONTROLLER:PLAINTEXT\n"
                f"controller.quorum.voters=1@127.0.0.1:{port}\nlog.dirs={data_dir}\n"
                f"metadata.max.idle.interval.ms={args['idle_ms']}\n{trigger}"
                # The synthesized brokers never heartbeat: Java's controller would fence them after
                # 9 s and rewrite every partition (1M PartitionChangeRecords) during the measurement.
                f"broker.session.timeout.ms=2000000000\n")


class Kraftd:
    name = "kraftd"

    def __init__(self, args):
        self.bin = args["kraftd"]
        if not os.access(self.bin, os.X_OK):
            raise BenchError(f"{self.bin} not found; build it first (make build)")

    def format(self, config, run_dir):
        run([self.bin, "format", "-t", CLUSTER_ID, "-c", config], "kraftd format")

    def command(self, config, run_dir):
        return [self.bin, "start", config]

    def snapshot_lines(self, lines, to_mono):
        """{id: {...}} from the log: kraftd logs one line when a snapshot is frozen."""
        out = {}
        for line in lines:
            m = KRAFTD_DONE.search(line)
            if m:
                t = to_mono(line)
                out[(int(m.group(1)), int(m.group(2)))] = {
                    "records": int(m.group(3)), "bytes": int(m.group(4)), "thread_ms": int(m.group(5)),
                    "loop_open_us": int(m.group(6)), "loop_freeze_us": int(m.group(7)),
                    "logged_done": t, "line": line.strip()}
        return out


class Java:
    name = "java"

    def __init__(self, args):
        self.cp = args["java_cp"]
        self.tools_log4j = args["java_tools_log4j"]
        self.opts = args["java_opts"]

    def format(self, config, run_dir):
        run(["java", f"-Dlog4j2.configurationFile={self.tools_log4j}", "-cp", self.cp,
             "kafka.tools.StorageTool", "format", "-t", CLUSTER_ID, "-c", config], "Kafka's StorageTool format")

    def command(self, config, run_dir):
        log4j = os.path.join(run_dir, "log4j2.properties")
        with open(log4j, "w") as f:
            f.write(JAVA_LOG4J)
        return ["java", *self.opts, f"-Dlog4j2.configurationFile={log4j}", "-cp", self.cp, "kafka.Kafka", config]

    def snapshot_lines(self, lines, to_mono):
        out = {}
        for line in lines:
            m = JAVA_START.search(line) or JAVA_DONE.search(line)
            if m:
                sid = (int(m.group(1)), int(m.group(2)))
                key = "logged_start" if "Creating" in line else "logged_done"
                out.setdefault(sid, {})[key] = to_mono(line)
                out[sid].setdefault("lines", []).append(line.strip())
        return out


# ---------------------------------------------------------------------------------------------
# statistics


def quantile(sorted_vals, q):
    """Nearest rank: the smallest value with at least q of the samples at or below it."""
    if not sorted_vals:
        return None
    i = max(0, min(len(sorted_vals) - 1, math.ceil(q * len(sorted_vals)) - 1))
    return sorted_vals[i]


def rtt_stats(rtts_s):
    vals = sorted(r * 1000.0 for r in rtts_s)
    if not vals:
        return {"n": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    return {"n": len(vals), "p50_ms": round(quantile(vals, 0.50), 3), "p99_ms": round(quantile(vals, 0.99), 3),
            "max_ms": round(vals[-1], 3)}


def hwm_advances(samples):
    """Times (response received) at which the reported high watermark moved up."""
    out, last = [], None
    for _sent, got, error, _epoch, hwm in samples:
        if error or hwm < 0:
            continue
        if last is not None and hwm > last:
            out.append(got)
        last = hwm if last is None else max(last, hwm)
    return out


def longest_gap(advances, lo, hi):
    """The longest time between successive advances among the intervals overlapping [lo, hi]."""
    best = None
    for a, b in zip(advances, advances[1:]):
        if b >= lo and a <= hi:
            best = max(best or 0.0, b - a)
    return None if best is None else round(best * 1000.0, 1)


def cpu_between(cpu, lo, hi):
    """CPU seconds the process used between lo and hi (nearest samples)."""
    if not cpu:
        return None
    times = [t for t, _ in cpu]
    i, j = bisect.bisect_left(times, lo), bisect.bisect_right(times, hi) - 1
    i, j = max(0, i - 1), min(len(cpu) - 1, j + 1)
    return round(cpu[j][1] - cpu[i][1], 2)


def first_quiet(cpu, after, max_cpu):
    """The first time >= after + 1 s at which the process used < max_cpu cores over the last second."""
    for k, (t, c) in enumerate(cpu):
        if t < after + 1.0:
            continue
        j = k
        while j > 0 and cpu[j][0] > t - 1.0:
            j -= 1
        span = t - cpu[j][0]
        if span > 0.5 and (c - cpu[j][1]) / span < max_cpu:
            return t
    return None


# ---------------------------------------------------------------------------------------------
# one run


def run_one(impl, args, segment):
    run_dir = os.path.join(args["dir"], impl.name)
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    data_dir = os.path.join(run_dir, "data")
    port = free_port()
    config = os.path.join(run_dir, "controller.properties")
    write_properties(config, port, data_dir, args)
    impl.format(config, run_dir)
    partition_dir = os.path.join(data_dir, PARTITION)
    shutil.copyfile(segment, os.path.join(partition_dir, os.path.basename(segment)))
    out_path = os.path.join(run_dir, f"{impl.name}.log")
    argv = impl.command(config, run_dir)
    with open(os.path.join(run_dir, "command"), "w") as f:
        f.write(" ".join(argv) + "\n")
    load_before = os.getloadavg()
    # Log timestamps are wall-clock milliseconds; the probe's are monotonic.
    wall0, mono0 = time.time(), time.monotonic()

    def to_mono(line):
        m = LOG_TIME.match(line)
        if not m:
            return None
        t = datetime.strptime(f"{m.group(1)} {m.group(2)}", "%Y-%m-%d %H:%M:%S").timestamp() + int(m.group(3)) / 1000
        return t - wall0 + mono0

    started = time.monotonic()
    proc = processes.spawn(argv, run_dir, out_path)
    log(f"{impl.name}: started pid {proc.pid} on 127.0.0.1:{port} in {os.path.relpath(run_dir, REPO)}")
    probe = Probe(port, args["probe_ms"] / 1000.0)
    poller = Poller(proc.pid, partition_dir, args["poll_ms"] / 1000.0)
    poller.start()
    probe.start()
    end_offset = args["log_end_offset"]
    leader_at = quiet_at = target = None
    vmhwm = None
    deadline = started + args["timeout_s"]
    try:
        while True:
            if proc.poll() is not None:
                raise BenchError(f"{impl.name} exited with {proc.returncode}:\n{processes.tail(out_path)}")
            now = time.monotonic()
            if now > deadline:
                raise BenchError(f"{impl.name}: no measured snapshot within {args['timeout_s']} s "
                                 f"(leader {leader_at is not None}, quiet {quiet_at is not None}); "
                                 f"logs in {run_dir}")
            if leader_at is None:
                for s in list(probe.samples):
                    if s[2] == 0 and s[4] >= end_offset:
                        leader_at = s[1]
                        log(f"{impl.name}: leader at epoch {s[3]}, high watermark {s[4]}, "
                            f"{leader_at - started:.1f} s after start")
                        break
            if leader_at is not None and quiet_at is None:
                quiet_at = first_quiet(list(poller.cpu), leader_at, args["quiet_cpu"])
                if quiet_at is not None:
                    log(f"{impl.name}: quiet {quiet_at - started:.1f} s after start "
                        f"(CPU < {args['quiet_cpu']} cores over 1 s)")
            if quiet_at is not None and target is None:
                for sid, t in sorted(dict(poller.part_seen).items(), key=lambda kv: kv[1]):
                    if t >= quiet_at + args["baseline_s"]:
                        target = sid
                        log(f"{impl.name}: measuring snapshot {sid[0]}-{sid[1]} "
                            f"(started {t - started:.1f} s after start)")
                        break
            if target is not None and target in poller.frozen_seen:
                if now >= poller.frozen_seen[target] + args["after_s"]:
                    vmhwm = proc_status(proc.pid, "VmHWM")
                    break
            time.sleep(0.1)
    finally:
        probe.stop.set()
        poller.stop.set()
        processes.stop(proc, grace=20.0)
        probe.join(5)
        poller.join(5)
        if not args["keep"]:
            shutil.rmtree(data_dir, ignore_errors=True)

    with open(out_path, errors="replace") as f:
        lines = f.read().splitlines()
    logged = impl.snapshot_lines(lines, to_mono).get(target, {})
    samples = list(probe.samples)
    with open(os.path.join(run_dir, "probe.csv"), "w") as f:
        f.write("sent_s,rtt_ms,error,epoch,high_watermark\n")
        for sent, got, error, epoch, hwm in samples:
            f.write(f"{sent - started:.4f},{(got - sent) * 1000:.3f},{error},{epoch},{hwm}\n")

    start, end = poller.part_seen[target], poller.frozen_seen[target]
    b_lo, a_hi = start - args["baseline_s"], end + args["after_s"]
    before = [g - s for s, g, e, *_ in samples if s >= b_lo and g < start]
    during = [g - s for s, g, e, *_ in samples if g >= start and s <= end]
    after = [g - s for s, g, e, *_ in samples if s > end and s <= a_hi]
    startup = [g - s for s, g, e, *_ in samples if s < quiet_at]
    advances = hwm_advances(samples)
    advances_during = sum(1 for t in advances if start <= t <= end)
    rss_before = [r for t, r in poller.rss if b_lo <= t < start]
    rss_during = [r for t, r in poller.rss if start <= t <= end]
    other = sorted(f"{o}-{e}" for (o, e), t in poller.part_seen.items()
                   if (o, e) != target and (b_lo <= t <= a_hi or b_lo <= poller.frozen_seen.get((o, e), 0) <= a_hi))
    if other:
        log(f"WARNING {impl.name}: other snapshots overlap the measured windows: {other}")

    def rel(t):
        return None if t is None else round(t - started, 3)

    result = {
        "impl": impl.name,
        "snapshot": {
            "id": f"{target[0]}-{target[1]}", "bytes": poller.sizes.get(target),
            "wall_s": round(end - start, 3), "part_seen_s": rel(start), "frozen_seen_s": rel(end),
            # Written within one poll: the start is the poll before (wall_s is an upper bound).
            "part_missed": target in poller.part_missed,
            "logged": {k: (rel(v) if k.startswith("logged_") else v) for k, v in logged.items()},
        },
        "rtt": {"before": rtt_stats(before), "during": rtt_stats(during), "after": rtt_stats(after),
                "startup": rtt_stats(startup)},
        "high_watermark": {
            "longest_gap_ms_during": longest_gap(advances, start, end),
            "longest_gap_ms_before": longest_gap(advances, b_lo, start),
            "advances_during": advances_during,
            "advances_expected_during": int((end - start) * 1000 / args["idle_ms"]),
        },
        "cpu_s_during": cpu_between(poller.cpu, start, end),
        "rss_mib": {
            "before": round(max(rss_before) / 1024) if rss_before else None,
            "max_during": round(max(rss_during) / 1024) if rss_during else None,
            "vmhwm_at_end": round(vmhwm / 1024) if vmhwm else None,
        },
        "startup": {"leader_s": rel(leader_at), "quiet_s": rel(quiet_at)},
        "probe": {"samples": len(samples), "reconnects": probe.reconnects,
                  "errors": sum(1 for s in samples if s[2])},
        "other_snapshots_in_windows": other,
        "host": {"cpus": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
                 "loadavg_after": [round(x, 2) for x in os.getloadavg()]},
        "logs": os.path.relpath(run_dir, REPO),
    }
    if impl.name == "java":
        result["java_opts"] = impl.opts
    return result


# ---------------------------------------------------------------------------------------------


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


ROWS = [  # (label, getter, decimals)
    ("snapshot wall time (s)", lambda r: r["snapshot"]["wall_s"], 2),
    ("snapshot size (MB)", lambda r: r["snapshot"]["bytes"] and round(r["snapshot"]["bytes"] / 1e6, 1), 1),
    ("raft loop: open + freeze (ms)", lambda r: ("loop_open_us" in r["snapshot"]["logged"] or None) and round(
        (r["snapshot"]["logged"]["loop_open_us"] + r["snapshot"]["logged"]["loop_freeze_us"]) / 1000, 2), 2),
    ("RTT p50 before (ms)", lambda r: r["rtt"]["before"]["p50_ms"], 2),
    ("RTT p99 before (ms)", lambda r: r["rtt"]["before"]["p99_ms"], 2),
    ("RTT max before (ms)", lambda r: r["rtt"]["before"]["max_ms"], 2),
    ("RTT p50 during (ms)", lambda r: r["rtt"]["during"]["p50_ms"], 2),
    ("RTT p99 during (ms)", lambda r: r["rtt"]["during"]["p99_ms"], 2),
    ("RTT max during (ms)", lambda r: r["rtt"]["during"]["max_ms"], 2),
    ("RTT p50 after (ms)", lambda r: r["rtt"]["after"]["p50_ms"], 2),
    ("RTT p99 after (ms)", lambda r: r["rtt"]["after"]["p99_ms"], 2),
    ("RTT max after (ms)", lambda r: r["rtt"]["after"]["max_ms"], 2),
    ("HWM longest gap before (ms)", lambda r: r["high_watermark"]["longest_gap_ms_before"], 1),
    ("HWM longest gap during (ms)", lambda r: r["high_watermark"]["longest_gap_ms_during"], 1),
    ("HWM advances during / expected", lambda r: f"{r['high_watermark']['advances_during']}/"
                                                 f"{r['high_watermark']['advances_expected_during']}", 0),
    ("CPU used while writing (s)", lambda r: r["cpu_s_during"], 2),
    ("RSS before snapshot (MiB)", lambda r: r["rss_mib"]["before"], 0),
    ("RSS max during snapshot (MiB)", lambda r: r["rss_mib"]["max_during"], 0),
    ("peak RSS, VmHWM (MiB)", lambda r: r["rss_mib"]["vmhwm_at_end"], 0),
    ("startup: RTT max before quiet (ms)", lambda r: r["rtt"]["startup"]["max_ms"], 1),
    ("startup: quiet after (s)", lambda r: r["startup"]["quiet_s"], 1),
]


def main():
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")
    args = {
        "kraftd": env("KRAFTD", os.path.join(target, "release", "kraftd")),
        "synth": env("SYNTH", os.path.join(target, "release", "examples", "synth_metadata_log")),
        "topics": int(env("SNAPSHOT_BENCH_TOPICS", "1000")),
        "partitions": int(env("SNAPSHOT_BENCH_PARTITIONS", "1000")),
        "replicas": int(env("SNAPSHOT_BENCH_REPLICAS", "3")),
        "impls": [x.strip() for x in env("SNAPSHOT_BENCH_IMPLS", "java,kraftd").split(",") if x.strip()],
        "interval_s": float(env("SNAPSHOT_BENCH_INTERVAL_S", "60")),
        "max_bytes": int(os.environ.get("SNAPSHOT_BENCH_MAX_BYTES") or 0),
        "idle_ms": int(env("SNAPSHOT_BENCH_IDLE_MS", "50")),
        "probe_ms": float(env("SNAPSHOT_BENCH_PROBE_MS", "5")),
        "poll_ms": float(env("SNAPSHOT_BENCH_POLL_MS", "5")),
        "baseline_s": float(env("SNAPSHOT_BENCH_BASELINE_S", "10")),
        "after_s": float(env("SNAPSHOT_BENCH_AFTER_S", "10")),
        "quiet_cpu": float(env("SNAPSHOT_BENCH_QUIET_CPU", "0.2")),
        "timeout_s": float(env("SNAPSHOT_BENCH_TIMEOUT_S", "900")),
        "java_opts": env("SNAPSHOT_BENCH_JAVA_OPTS", DEFAULT_JAVA_OPTS).split(),
        "dir": os.path.abspath(env("SNAPSHOT_BENCH_DIR", os.path.join(REPO, "target", "bench", "snapshot"))),
        "keep": bool(os.environ.get("SNAPSHOT_BENCH_KEEP")),
    }
    if not set(args["impls"]) <= {"java", "kraftd"}:
        raise BenchError(f"SNAPSHOT_BENCH_IMPLS: unknown implementation in {args['impls']}")
    impls = []
    for name in args["impls"]:
        if name == "java":
            args["java_cp"] = env("BENCH_JAVA_CP")
            args["java_tools_log4j"] = env("BENCH_JAVA_TOOLS_LOG4J")
            impls.append(Java(args))
        else:
            impls.append(Kraftd(args))
    out_dir = os.path.join(REPO, "target", "bench")
    os.makedirs(out_dir, exist_ok=True)
    report_path = os.path.join(out_dir, "snapshot.json")
    if os.path.exists(report_path):
        os.remove(report_path)  # an earlier run's numbers must not pass for this one's
    shutil.rmtree(args["dir"], ignore_errors=True)
    os.makedirs(args["dir"])

    synth_dir = os.path.join(args["dir"], "synth")
    print(f"{args['topics']} topics x {args['partitions']} partitions x {args['replicas']} replicas", flush=True)
    said = run([args["synth"], synth_dir, str(args["topics"]), str(args["partitions"]), str(args["replicas"])],
               "synth_metadata_log")
    m = re.search(r": (\d+) records", said)
    if not m:
        raise BenchError(f"synth_metadata_log said {said!r}")
    args["log_end_offset"] = int(m.group(1))
    segment = os.path.join(synth_dir, PARTITION, "00000000000000000000.log")
    log_bytes = os.path.getsize(segment)
    log(f"synthesized {args['log_end_offset']} records, {log_bytes} bytes")

    results = []
    try:
        for impl in impls:
            res = run_one(impl, args, segment)
            results.append(res)
            print(json.dumps({"impl": res["impl"], "snapshot": res["snapshot"]["id"],
                              "wall_s": res["snapshot"]["wall_s"], "rtt_during": res["rtt"]["during"],
                              "hwm_gap_ms": res["high_watermark"]["longest_gap_ms_during"]}), flush=True)
    finally:
        if not args["keep"]:
            shutil.rmtree(synth_dir, ignore_errors=True)

    by = {r["impl"]: r for r in results}
    ratios = {}
    if "java" in by and "kraftd" in by:
        for label, get, _nd in ROWS:
            j, k = get(by["java"]), get(by["kraftd"])
            if isinstance(j, (int, float)) and isinstance(k, (int, float)) and j:
                ratios[label] = round(k / j, 3)
    trigger = (f"metadata.log.max.record.bytes.between.snapshots={args['max_bytes']}" if args["max_bytes"]
               else f"metadata.log.max.snapshot.interval.ms={int(args['interval_s'] * 1000)}")
    report = {
        "kafka_version": KAFKA_VERSION, "topics": args["topics"], "partitions_per_topic": args["partitions"],
        "replicas": args["replicas"], "log_records": args["log_end_offset"], "log_bytes": log_bytes,
        "trigger": trigger, "noop_interval_ms": args["idle_ms"], "probe_interval_ms": args["probe_ms"],
        "poll_interval_ms": args["poll_ms"], "baseline_s": args["baseline_s"], "after_s": args["after_s"],
        "quiet_cpu": args["quiet_cpu"], "results": results, "ratios_kraftd_over_java": ratios,
    }
    with open(report_path, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")

    names = [r["impl"] for r in results]
    print(f"\nsnapshot stall: {args['topics']} x {args['partitions']} partitions x {args['replicas']} replicas "
          f"(log {log_bytes / 1e6:.1f} MB), {trigger}, NoOps every {args['idle_ms']} ms, "
          f"DescribeQuorum every {args['probe_ms']:g} ms")
    header = f"{'':36}" + "".join(f"{n:>11}" for n in names) + (f"{'kraftd/java':>13}" if ratios else "")
    print(header)
    for label, get, nd in ROWS:
        row = f"{label:36}" + "".join(f"{fmt(get(by[n]), nd):>11}" for n in names)
        if ratios:
            row += f"{fmt(ratios.get(label), 3):>13}"
        print(row)
    print(f"JSON: {os.path.relpath(report_path, REPO)}")
    return 0


if __name__ == "__main__":
    processes.install()
    try:
        sys.exit(main())
    except BenchError as e:
        log(f"error: {e}")
        processes.stop_all()
        sys.exit(1)
