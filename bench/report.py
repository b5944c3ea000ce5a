#!/usr/bin/env python3
"""`make bench-report`: docs/performance.md and docs/performance/*.png from target/bench/*.json.

Reads whatever JSON the benches left (floor, storage, raft + raft-<impl>-linger<N> (and raft.json's
"tls" section, from the mutual-TLS run), image + image-<partitions>, snapshot, failover, controller
(with W3 over mutual TLS as "w3_tls" and under 1 s scrapes as "w3_scraped"; raft.json's "scrape"
section is W1's: bench/report_scrape.py), tls, run) and fills issue #14's goals table with the
kraftd/Java ratios of the same run. A missing input is written as "not measured in this run"; a
file older than the `make bench` run that wrote run.json is from another run: listed, not used.
Nothing is ever estimated in place of a measurement.

controller.json is written by the load generator's driver (compat/tests/controller_bench/mod.rs,
`make bench-controller`); CONTROLLER_FIGURES below lists the paths read from it (also printed
in docs/performance.md).

Environment: BENCH_OUT (target/bench), BENCH_DOC (docs/performance.md); plots go to
docs/performance/ beside it. Needs matplotlib for the plots (the Makefile's venv); without it the
markdown is still written and says the plots were skipped.
"""

import datetime
import glob
import json
import os
import platform
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.environ.get("BENCH_OUT", os.path.join(REPO, "target", "bench"))
DOC = os.environ.get("BENCH_DOC", os.path.join(REPO, "docs", "performance.md"))
PLOTS = os.path.join(os.path.dirname(DOC), "performance")
# What the report reads from target/bench/controller.json: results.<impl>.<path> for impl kraftd
# and java (the driver's own shape); any figure may be absent.
CONTROLLER_FIGURES = [
    ("W2", "CreateTopics storm wall time, s", ("w2", "wall_s")),
    ("W2", "records/s", ("w2", "records_per_s")),
    ("W2", "CreateTopics p99, ms", ("w2", "request_latency", "p99_ms")),
    ("churn", "AlterPartition records/s", ("churn", "records_per_s")),
    ("churn", "AlterPartition p99, ms", ("churn", "request_latency", "p99_ms")),
    ("W3", "heartbeat p99, ms", ("w3", "heartbeat_latency", "p99_ms")),
    ("W3", "active controller CPU, s", ("w3", "controllers", "active", "cpu_s")),
    ("W3", "all controllers' CPU, s", ("w3", "controllers", "cpu_s_all")),
    ("W3", "active controller RSS, MiB", ("w3", "controllers", "active", "rss_mib")),
    ("W3", "spurious fencings (must be 0)", ("w3", "spurious_fencings")),
    ("W3 over mTLS", "heartbeat p99, ms", ("w3_tls", "heartbeat_latency", "p99_ms")),
    ("W3 over mTLS", "active controller CPU, s", ("w3_tls", "controllers", "active", "cpu_s")),
    ("W3 over mTLS", "all controllers' CPU, s", ("w3_tls", "controllers", "cpu_s_all")),
    ("W3 over mTLS", "active controller RSS, MiB", ("w3_tls", "controllers", "active", "rss_mib")),
    ("W3 over mTLS", "spurious fencings (must be 0)", ("w3_tls", "spurious_fencings")),
]
# What the report reads from target/bench/tls.json (`make bench-tls`): results.<impl>.<path>.
TLS_FIGURES = [
    ("(a) one connection", "TCP connect to ApiVersions answer p50, ms", ("connection", "to_api_versions_answer", "p50_ms")),
    ("(a) one connection", "TCP connect to ApiVersions answer p99, ms", ("connection", "to_api_versions_answer", "p99_ms")),
    ("(a) one connection", "to the client's end of the handshake p50, ms",
     ("connection", "to_client_handshake_end", "p50_ms")),
    ("(b) one core", "connections/s (handshake, ApiVersions, close)", ("accept_rate", "connections_per_s")),
    ("(b) one core", "controller CPU per connection, ms", ("accept_rate", "server_cpu_ms_per_connection")),
    ("(b) one core", "controller's core busy, %", ("accept_rate", "server_cpu_pct_of_core")),
    ("(b) one core", "connection p99 under that load, ms", ("accept_rate", "latency", "p99_ms")),
    ("", "controller RSS at the end, MiB", ("rss_mib",)),
]


def controller_figure(ctrl, impl, path):
    v = ((ctrl or {}).get("results") or {}).get(impl)
    for key in path:
        v = v.get(key) if isinstance(v, dict) else None
    return v


# How each goal row is measured; printed under the goals table.
GOAL_NOTES = [
    "W1 closed loop: 1 record in flight, timed in µs from its append call to its commit; open loop: "
    "TestRaftServer's workload at a fixed offered rate, whole ms. The floor is the kraftd-order commit floor "
    "below, p99.",
    "W1 saturation: the highest committed records/s over the closed-loop runs (bench/raft/closed_loop.py).",
    "W2, W3: `make bench-controller` (the load generator in bench/load; sizes under W2, W3 below); W3's CPU is "
    "the active controller's over the heartbeat window.",
    "W4: from the kill -9 of the active controller to the new leader's first commit, and from a SIGTERM "
    "to the new leader (`make bench-failover`).",
    "W5 snapshot load: loading the image bench's snapshot, `kraftd metadata-state` against Kafka's own image "
    "loader (bench/image/LoadImage.java), each one process, so Java's figure includes JVM start-up.",
    "W5 cold start: the snapshot bench's single-node controller (`kraftd start`, Java's `kafka.Kafka`) started on "
    "the synthesized log, from the process start until a DescribeQuorum poll shows it leading with the high "
    "watermark at the log end, and until its CPU falls quiet (image loaded). Its log holds the records, not the "
    "issue's snapshot plus 100,000 records.",
    "W6: the controller process's peak RSS (VmHWM) in the snapshot bench, at that bench's size; "
    "docs/performance/rss-vs-partitions.png has the image bench's sizes.",
    "A quick run (`make bench-quick`) uses small sizes and short windows: its ratios are indicative only.",
]

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_plots  # noqa: E402  bench/report_plots.py: the PNGs
import report_scrape  # noqa: E402  bench/report_scrape.py: W1 and W3 under 1 s scrapes
from report_text import NOT_MEASURED, table  # noqa: E402  bench/report_text.py


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def inputs():
    """run.json, and every JSON present with its time and whether it predates the last
    `make bench` (run.json's start): such a file is from another run and is not used."""
    run = read_json(os.path.join(OUT, "run.json"))
    since = run.get("started_unix") if run else None
    rows = []
    for path in sorted(glob.glob(os.path.join(OUT, "*.json"))):
        mtime = os.path.getmtime(path)
        stale = since is not None and mtime < since - 1 and not path.endswith("run.json")
        when = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        rows.append((os.path.basename(path), when, stale))
    return run, rows


def sh(*argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=REPO).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def loads(raft):
    """The host's 1-minute load average before each raft run: the machine may be shared."""
    vals = [r["host"]["loadavg_before"][0] for r in (raft or {}).get("runs", []) if r.get("host")]
    return f"{min(vals):.2f} to {max(vals):.2f} over {len(vals)} runs" if vals else NOT_MEASURED


def machine(floor, run, raft):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "0")
    fs = (floor or {}).get("filesystem") or {}
    fs_text = f"{fs['type']} on {fs['device']}" if fs else sh("stat", "-f", "-c", "%T", OUT) or "?"
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    dirty = [l for l in sh("git", "status", "--porcelain").splitlines() if "docs/performance" not in l]
    return [("cores", str(os.cpu_count())), ("CPU", cpu), ("memory", f"{int(mem) / 1048576:.1f} GiB"),
            ("load average (1 min) at the raft runs' starts", loads(raft)),
            ("kernel", platform.release()), ("data dir filesystem", fs_text),
            ("Java", java[0] if java else "?"),
            ("git commit measured", (run or {}).get("git_commit") or "unknown (no run.json: the benches ran one by one)"),
            ("git commit of this report", sh("git", "rev-parse", "--short", "HEAD") + (" (with uncommitted changes)" if dirty else ""))]


def num(v, nd=None):
    if v is None:
        return NOT_MEASURED
    if isinstance(v, float) and nd is None:
        nd = 0 if abs(v) >= 100 else (1 if abs(v) >= 10 else 2)
    return f"{v:,.{nd}f}" if isinstance(v, float) else f"{v:,}"


def ratio(k, j):
    return k / j if k is not None and j not in (None, 0) else None


def goal_row(figure, goal, k, j, unit, met_fn):
    r = ratio(k, j)
    met = "—" if r is None else ("yes" if met_fn(r) else "**no**")
    return [figure, goal, num(k) + (f" {unit}" if k is not None and unit else ""),
            num(j) + (f" {unit}" if j is not None and unit else ""),
            "—" if r is None else f"{r:.3g}", met]


def quorum(failover, name):
    for q in (failover or {}).get("quorums", []):
        if q["quorum"] == name:
            return q
    return None


def step(image, name, key):
    for s in (image or {}).get("steps", []):
        if s["step"] == name:
            return s[key]
    return None


def by_impl(res, impl):
    return next((r for r in (res or {}).get("results", []) if r.get("impl") == impl), None)


def goals(raft, floor, ctrl, failover, image, snapshot):
    med = (raft or {}).get("medians", {})
    k0, j0 = med.get("kraftd-linger0", {}), med.get("java-linger0", {})
    floor_p99_ms = floor["commit_floor_kraftd"]["p99_us"] / 1000 if floor else None
    closed = {(r[0], r[1], r[2]): r for r in ((raft or {}).get("closed_loop") or {}).get("rows", [])}
    kc, jc = closed.get(("kraftd", 0, 1)), closed.get(("java", 0, 1))
    rows = []
    for label, k99, j99 in [("W1 p99 at linger 0, closed loop (1 in flight)", kc and kc[4] / 1000, jc and jc[4] / 1000),
                            ("W1 p99 at linger 0, open loop" + (f" ({raft['offered_rate']:,} records/s)" if raft else ""),
                             k0.get("p99_ms"), j0.get("p99_ms"))]:
        r = ratio(k99, j99)
        within = None if k99 is None or floor_p99_ms is None else k99 <= 2 * floor_p99_ms
        met = "—" if r is None or within is None else ("yes" if r <= 0.1 and within else "**no**")
        rows.append([label, "≤ 0.1, and ≤ 2× the floor" + (f" ({2 * floor_p99_ms:.1f} ms)" if floor_p99_ms else ""),
                     num(k99) + (" ms" if k99 is not None else ""), num(j99) + (" ms" if j99 is not None else ""),
                     "—" if r is None else f"{r:.3g}" + ("" if within is None else f"; {k99 / floor_p99_ms:.2f}× floor"),
                     met])
    sat = ((raft or {}).get("saturation") or {}).get("max_committed_records_per_s", {})
    rows.append(goal_row("W1 records/s at saturation", "≥ 5", sat.get("kraftd"), sat.get("java"), "/s", lambda x: x >= 5))
    fig = lambda impl, *path: controller_figure(ctrl, impl, path)  # noqa: E731
    rows.append(goal_row("W2 wall time", "≤ 0.2", fig("kraftd", "w2", "wall_s"), fig("java", "w2", "wall_s"),
                         "s", lambda x: x <= 0.2))
    fencings = fig("kraftd", "w3", "spurious_fencings")
    rows.append(goal_row("W3 CPU of the active controller" + ("" if fencings is None else f" ({fencings} spurious fencings)"),
                         "≤ 0.2, 0 spurious fencings", fig("kraftd", "w3", "controllers", "active", "cpu_s"),
                         fig("java", "w3", "controllers", "active", "cpu_s"), "s",
                         lambda x: x <= 0.2 and fencings == 0))
    kq, jq = quorum(failover, "3 kraftd"), quorum(failover, "3 java")
    med_of = lambda q, k: q["summary"][k]["median"] if q and q["summary"].get(k) else None  # noqa: E731
    fparts = (failover or {}).get("partitions")
    held = f", {fparts:,} partitions" if fparts else ""
    rows.append(goal_row(f"W4 kill -9, kraftd-only quorum (kill to first commit, median{held})", "≤ 0.5",
                         med_of(kq, "committed_ms"), med_of(jq, "committed_ms"), "ms", lambda x: x <= 0.5))
    rows.append(sigterm_row(failover, floor, med_of, held))
    mixed = quorum(failover, "2 java + 1 kraftd")
    if mixed:
        wins, kills = mixed["summary"].get("wins", {}).get("kraftd", 0), mixed["summary"]["kills"]
        share = wins / kills if kills else None
        rows.append(["kraftd's election wins, 2 Java + 1 kraftd", "30–70 % over 20 kills", f"{wins} of {kills}", "",
                     "—", "—" if share is None or kills < 20 else ("yes" if 0.3 <= share <= 0.7 else "**no**")])
    else:
        rows.append(["kraftd's election wins, 2 Java + 1 kraftd", "30–70 % over 20 kills", NOT_MEASURED, "", "—", "—"])
    parts = image and image["topics"] * image["partitions_per_topic"]
    rows.append(goal_row(f"W5 cold start: snapshot load{f' ({parts:,} partitions)' if parts else ''}", "≤ 0.1",
                         step(image, "kraftd load snapshot", "seconds"), step(image, "java load snapshot", "seconds"),
                         "s", lambda x: x <= 0.1))
    ks, js = by_impl(snapshot, "kraftd"), by_impl(snapshot, "java")
    sparts = snapshot and snapshot["topics"] * snapshot["partitions_per_topic"]
    start = lambda r, k: r and (r.get("startup") or {}).get(k)  # noqa: E731
    for key, what in [("leader_s", "leads with its log replicated"), ("quiet_s", "has loaded its image (CPU quiet)")]:
        rows.append(goal_row(f"W5 cold start of the controller process{f' ({sparts:,} partitions in its log)' if sparts else ''}: "
                             f"start until it {what}", "≤ 0.1", start(ks, key), start(js, key), "s", lambda x: x <= 0.1))
    rows.append(goal_row(f"W6 controller peak RSS{f' ({sparts:,} partitions)' if sparts else ''}", "≤ 0.1",
                         ks and ks["rss_mib"]["vmhwm_at_end"], js and js["rss_mib"]["vmhwm_at_end"], "MiB",
                         lambda x: x <= 0.1))
    return rows


def floor_section(floor, raft):
    if not floor:
        return f"Physical floor: {NOT_MEASURED} (`make bench-floor`)."
    rows = []
    writers = floor["fsync"].get("writers", 1)
    for label, key in [("fdatasync of a %d B append, 1 writer alone" % floor["write_bytes"], "fsync_one_writer"),
                       ("fdatasync of a %d B append, %d writers at once" % (floor["write_bytes"], writers), "fsync"),
                       ("loopback TCP round trip", "rtt"),
                       ("3-voter commit floor, kraftd's order", "commit_floor_kraftd"),
                       ("3-voter commit floor, leader fsync overlapped (Java's order)", "commit_floor_overlapped")]:
        v = floor.get(key)
        if not v:
            continue
        rows.append([label, num(v["p50_us"], 0), num(v["p99_us"], 0), num(v["p999_us"], 0)])
    for row in ((raft or {}).get("closed_loop") or {}).get("rows", []):
        if row[1] == 0 and row[2] == 1:
            rows.append([f"W1 {row[0]}, linger 0, closed loop, 1 in flight", num(row[3], 0), num(row[4], 0),
                         num(row[5], 0)])
    for name, run in sorted(((raft or {}).get("medians") or {}).items()):
        if name.endswith("linger0"):
            rows.append([f"W1 {name.replace('-linger0', '')}, linger 0, open loop (whole ms)",
                         *(num(run[k] * 1000.0, 0) if run.get(k) is not None else NOT_MEASURED
                           for k in ("p50_ms", "p99_ms", "p999_ms"))])
    return "\n".join([
        table(["µs", "p50", "p99", "p99.9"], rows), "",
        f"Measured in `{os.path.relpath(floor['data_dir'], REPO)}` (where bench-raft's nodes write), "
        f"{floor['fsync']['samples']} fdatasyncs and {floor['rtt']['samples']} round trips. A record commits on an "
        "idle 3-voter kraftd quorum when the leader has appended and fsynced it (kraftd fsyncs *before* it counts "
        "itself and wakes the followers' parked Fetches), one follower has received it, appended and fsynced it, "
        "and that follower's next Fetch has reported the durable end: `fsync_leader + min over 2 followers (RTT + "
        "fsync_follower)`. Java wakes the Fetches first and fsyncs meanwhile: `max(fsync_leader, min(RTT + "
        "fsync_follower))`. Both are drawn from the measured samples (not sums of percentiles), with the fdatasync "
        f"of {writers} concurrent writers, as bench-raft's three voters share one filesystem: on ext4 a lone "
        "fdatasync waits for a journal commit of its own, concurrent ones share commits, and the two "
        "distributions differ by an order of magnitude at p50 (first two rows)."])


def raft_section(raft):
    if not raft:
        return f"W1: {NOT_MEASURED} (`make bench-raft`)."
    rows = []
    for name, run in sorted(raft["medians"].items(), key=lambda kv: (int(kv[0].split("linger")[1]), kv[0])):
        impl, linger = name.split("-linger")
        rows.append([impl, linger, num(run["p50_ms"]), num(run["p99_ms"]), num(run["p999_ms"]),
                     num(run["committed_records_per_s"], 0)])
    text = [table(["impl", "linger ms", "p50 ms", "p99 ms", "p99.9 ms", "committed records/s"], rows)
            if rows else f"Open loop: {NOT_MEASURED}.", "",
            f"Open loop: {raft['offered_rate']:,} records/s of {raft['record_size']} B offered, "
            f"{raft['warmup_s']:g} s warm-up, {raft['duration_s']:g} s measured, {raft['repeat']} repeat(s); "
            "latency in whole ms (TestRaftServer's own resolution, kept for kraftd so both are measured alike)."]
    for mode, title in (("closed_loop", "Closed loop"), ("saturation", "Saturation")):
        sect = raft.get(mode)
        if not sect:
            text += ["", f"{title}: {NOT_MEASURED}."]
            continue
        text += ["", f"{title}: {sect.get('description', '')}", "",
                 table(list(sect["header"]), [[num(c) if isinstance(c, (int, float)) else c for c in row]
                                              for row in sect["rows"]])]
    return "\n".join(text + ["", raft_tls_section(raft)])


def raft_tls_section(raft):
    """The mutual-TLS run (`raft_bench.py --transport mtls`), from raft.json's "tls" section."""
    tls = raft.get("tls")
    if not tls:
        return f"Over mutual TLS: {NOT_MEASURED} (`make bench-raft` with mtls in RAFT_BENCH_TRANSPORTS)."
    rows = []
    for name, run in sorted(tls["medians"].items(), key=lambda kv: (int(kv[0].split("linger")[1]), kv[0])):
        impl, linger = name.split("-linger")
        other = tls["medians"].get(("java" if impl == "kraftd" else "kraftd") + "-linger" + linger) or {}
        kj = ratio(run["p99_ms"], other.get("p99_ms")) if impl == "kraftd" else None
        over = (tls.get("ratios_tls_over_plaintext") or {}).get(name) or {}
        rows.append([impl, linger, num(run["p50_ms"]), num(run["p99_ms"]), num(run["committed_records_per_s"], 0),
                     "" if kj is None else f"{kj:.3g}",
                     " / ".join("—" if over.get(k) is None else f"{over[k]:.3g}"
                                for k in ("p50_ms", "p99_ms", "committed_records_per_s"))])
    text = ["Over mutual TLS: both quorums' CONTROLLER listeners on SSL with `ssl.client.auth=required`, every voter "
            "dialling its peers with its own certificate (stores made once per run by bench/pki.py with openssl and "
            "keytool; kraftd and Java read the same PKCS12 files; each listener checked to refuse PLAINTEXT and "
            "certificate-less clients). Same open-loop load as above.", "",
            table(["impl", "linger ms", "p50 ms", "p99 ms", "committed records/s", "kraftd/Java p99",
                   "TLS/PLAINTEXT p50 / p99 / records/s"], rows), "",
            "kraftd/Java compares adjacent runs on the same transport; TLS/PLAINTEXT compares an "
            "implementation's TLS run with its PLAINTEXT run, a bench step apart, so on a shared machine it holds only "
            f"if the load stayed alike: 1-minute load average at the PLAINTEXT runs' starts {loads(raft)}, at the TLS "
            f"runs' starts {loads({'runs': [{'host': {'loadavg_before': [v]}} for v in tls.get('loadavg_before_runs', [])]})}."]
    closed = tls.get("closed_loop")
    if closed:
        text += ["", "Closed loop over mutual TLS:", "",
                 table(list(closed["header"]), [[num(c) if isinstance(c, (int, float)) else c for c in row]
                                                for row in closed["rows"]])]
    return "\n".join(text)


def tls_section(tls):
    if not tls:
        return f"Mutual-TLS connection cost: {NOT_MEASURED} (target/bench/tls.json from `make bench-tls` is absent)."
    rows = []
    res = tls.get("results") or {}
    for part, label, path in TLS_FIGURES:
        k, j = (controller_figure(tls, impl, path) for impl in ("kraftd", "java"))
        r = ratio(k, j)
        rows.append([part, label, num(k), num(j), "—" if r is None else f"{r:.3g}"])
    sat = {impl: controller_figure(tls, impl, ("accept_rate", "server_core_saturated")) for impl in ("kraftd", "java")}
    unsaturated = "not saturated (the client or the machine was the limit: the rate is a floor, not its capacity)"
    bound = [f"{impl}'s core was {'saturated' if v else unsaturated}"
             for impl, v in sat.items() if v is not None and impl in res]
    setup, knobs = tls.get("setup") or {}, tls.get("knobs") or {}
    return "\n".join([
        table(["part", "figure", "kraftd", "Java", "kraftd/Java"], rows), "",
        f"A single-node controller of each kind, the SSL listener with `ssl.client.auth=required`, the same PKCS12 "
        f"stores. (a): {knobs.get('connections', '?')} connections one after the other after "
        f"{knobs.get('warmup', '?')} unmeasured ones; (b): the controller pinned to core {setup.get('server_core', '?')}, "
        f"{knobs.get('concurrency', '?')} client threads on core {setup.get('client_core', '?')} for "
        f"{knobs.get('seconds', '?')} s. Every handshake is a full one (the client keeps no sessions); the client is "
        f"rustls. Load average at the end: {setup.get('loadavg', '?')}." + (" " + "; ".join(bound) + "." if bound else "")])


def sigterm_row(failover, floor, med_of, held):
    """W4 SIGTERM: from the signal to the new leader (median). "1 RTT + 1 election" on this
    machine's floor: the EndQuorumEpoch's round trip, then a pre-vote and a vote round trip,
    each vote persisted (quorum-state fsync) by the voter and the candidate: 3 RTT + 2 fsyncs,
    at their p99."""
    kq, jq = quorum(failover, "3 kraftd, SIGTERM"), quorum(failover, "3 java, SIGTERM")
    k, j = med_of(kq, "elected_ms"), med_of(jq, "elected_ms")
    bound = floor and 3 * floor["rtt"]["p99_us"] / 1000 + 2 * floor["fsync"]["p99_us"] / 1000
    r = ratio(k, j)
    goal = "≤ 1 RTT + 1 election" + (f" ({bound:.1f} ms: 3 RTT + 2 fsyncs, p99)" if bound else "")
    met = "—" if k is None or not bound else ("yes" if k <= bound else "**no**")
    return [f"W4 SIGTERM (signal to new leader, median{held})", goal,
            NOT_MEASURED if k is None else f"{num(k)} ms", NOT_MEASURED if j is None else f"{num(j)} ms",
            "—" if r is None else f"{r:.3g}", met]


def failover_section(failover):
    if not failover:
        return f"W4: {NOT_MEASURED} (`make bench-failover`)."
    rows = []
    for q in failover["quorums"]:
        s = q["summary"]
        m = lambda k, f: num(s[k][f]) if s.get(k) else NOT_MEASURED  # noqa: E731
        rows.append([q["quorum"], s["kills"], m("first_pre_vote_ms", "median"), m("elected_ms", "median"),
                     m("elected_ms", "max"), m("committed_ms", "median"), m("committed_ms", "max"),
                     ", ".join(f"{k} {v}" for k, v in sorted(s.get("wins", {}).items()))])
    parts = failover.get("partitions")
    held = (f"Each quorum held {parts:,} partitions (topics of 10, RF 3) on 3 simulated brokers, which heartbeat "
            "through the kills. ") if parts else "Each quorum held only its bootstrap records. "
    return held + "Timed from the signal; each voter's first pre-vote is read from its own log.\n\n" + \
        table(["quorum", "kills", "first pre-vote ms (median)", "new leader ms (median)", "(max)",
               "first commit ms (median)", "(max)", "wins"], rows)


def controller_section(ctrl):
    if not ctrl:
        return f"W2, W3: {NOT_MEASURED} (target/bench/controller.json from `make bench-controller` is absent)."
    rows = []
    for workload, label, path in CONTROLLER_FIGURES:
        k, j = controller_figure(ctrl, "kraftd", path), controller_figure(ctrl, "java", path)
        r = ratio(k, j)
        rows.append([workload, label, num(k), num(j), "—" if r is None else f"{r:.3g}"])
    sizes = ctrl.get("sizes") or {}
    over = ctrl.get("ratios_w3_tls_over_plaintext") or {}
    tls_rows = [[impl] + ["—" if r.get(k) is None else f"{r[k]:.3g}"
                          for k in ("heartbeat_p99", "active_cpu", "all_controllers_cpu", "active_rss")]
                for impl, r in sorted(over.items())]
    tls_text = ("\n\nW3 over mutual TLS (controller listeners on SSL with client certificates required, the fleet "
                "dialling with kraftd's own client TLS) against W3 on PLAINTEXT, each implementation's TLS figure over "
                "its PLAINTEXT one (quorums started one after the other, minutes apart: on a shared machine these hold "
                "only if the load stayed alike):\n\n" + table(["impl", "heartbeat p99", "active CPU", "all controllers' CPU",
                                                   "active RSS"], tls_rows)) if tls_rows else ""
    return table(["workload", "figure", "kraftd", "Java", "kraftd/Java"], rows) + tls_text + \
        ("\n\nSizes: `" + json.dumps(sizes) + "`" if sizes else "")


def image_section(image, snapshot):
    text = []
    if image:
        text.append(f"Image bench ({image['topics']:,} topics × {image['partitions_per_topic']:,} partitions × "
                    f"{image['replicas']} replicas; each step one process under `/usr/bin/time -v`):\n")
        text.append(table(["step", "s", "peak RSS MiB"], [[s["step"], num(s["seconds"], 2), s["peak_rss_mib"]]
                                                          for s in image["steps"]]))
    else:
        text.append(f"Image bench: {NOT_MEASURED}.")
    if snapshot:
        text.append(f"\nSnapshot bench ({snapshot['topics']:,} × {snapshot['partitions_per_topic']:,} partitions, "
                    f"a running single-node controller; W7):\n")
        rows = []
        ks, js = by_impl(snapshot, "kraftd"), by_impl(snapshot, "java")
        for label, get in [("snapshot write wall time s", lambda r: r["snapshot"]["wall_s"]),
                           ("snapshot bytes", lambda r: r["snapshot"]["bytes"]),
                           ("DescribeQuorum RTT p99 while writing ms", lambda r: r["rtt"]["during"]["p99_ms"]),
                           ("longest high-watermark gap while writing ms",
                            lambda r: r["high_watermark"]["longest_gap_ms_during"]),
                           ("CPU while writing s", lambda r: r["cpu_s_during"]),
                           ("RSS before the snapshot MiB", lambda r: r["rss_mib"]["before"]),
                           ("peak RSS (VmHWM) MiB", lambda r: r["rss_mib"]["vmhwm_at_end"]),
                           ("start to leader s", lambda r: r["startup"]["leader_s"])]:
            def safe(r):
                try:
                    return get(r) if r else None
                except (KeyError, TypeError):
                    return None
            k, j = safe(ks), safe(js)
            r = ratio(k, j)
            rows.append([label, num(k), num(j), "—" if r is None else f"{r:.3g}"])
        text.append(table(["figure", "kraftd", "Java", "kraftd/Java"], rows))
    else:
        text.append(f"\nSnapshot bench: {NOT_MEASURED}.")
    return "\n".join(text)


def storage_section(storage):
    if not storage:
        return f"Storage: {NOT_MEASURED} (`make bench-storage`)."
    rows = [[r["label"], r["unit"], num(r["kraftd"]), num(r["java"]), f"{r['speed_ratio_kraftd_over_java']:.3g}×"]
            for r in storage["results"]]
    return table(["figure", "unit", "kraftd", "Java", "speed-up"], rows) + \
        "\n\n(speed-up > 1: kraftd faster; for recovery time Java's seconds over kraftd's.)"


def commands(run):
    quick = run and run.get("quick")
    lines = ["```", "make bench          # every bench, full sizes, then the report",
             "make bench-quick    # the same at small sizes (BENCH_QUICK=1 make bench)",
             "make bench-report   # only this page and the plots, from target/bench/*.json",
             "```", "", "Each step alone: " + ", ".join(f"`make {s['step']}`" for s in (run or {}).get("steps", [])) + "."
             if run else "Each step alone: `make bench-floor`, `make bench-storage`, `make bench-raft`, "
             "`make bench-image`, `make bench-snapshot`, `make bench-failover`; knobs in the Makefile's bench section."]
    if run:
        lines += ["", f"This page comes from `make {'bench-quick' if quick else 'bench'}` started "
                  f"{datetime.datetime.fromtimestamp(run['started_unix'], datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, "
                  f"{run['seconds']} s wall time in all" + (" (quick mode: small sizes; not the figures the goals are "
                                                             "judged on)" if quick else "") + ":", "",
                  table(["step", "s", "status"], [[f"`make {s['step']}`", s["seconds"], s["status"]]
                                                  for s in run["steps"]])]
    return "\n".join(lines)


def causes():
    """The profiled causes of the missed goals: prose kept beside this script (bench/causes.md),
    written from the run it cites; a run that changes a figure should update it."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "causes.md")
    try:
        with open(path) as f:
            return f.read().strip()
    except FileNotFoundError:
        return "Not written: bench/causes.md is absent."


def main():
    run, files = inputs()
    used = {name for name, _, stale in files if not stale}
    load = lambda name: read_json(os.path.join(OUT, name)) if name in used else None  # noqa: E731
    data = {name: load(name + ".json") for name in
            ("floor", "storage", "raft", "image", "snapshot", "failover", "controller", "tls")}
    os.makedirs(PLOTS, exist_ok=True)
    plots, plot_note = report_plots.write_all(PLOTS, [os.path.join(OUT, n) for n in sorted(used)], data)
    now = datetime.datetime.now(datetime.timezone.utc)
    doc = [
        "# Performance: kraftd against Kafka 4.4's Java controller", "",
        f"Generated by `make bench-report` (bench/report.py) on {now:%Y-%m-%d %H:%M UTC} from the JSON in "
        "`target/bench/`; every figure of a row comes from the same run on the same machine. "
        f"\"{NOT_MEASURED}\" marks a figure whose bench did not run or has not been written yet (issue #14).", "",
        "## Machine", "", table(["", ""], machine(data["floor"], run, data["raft"])), "",
        "## Goals (issue #14): ratios kraftd / Java from the same run", "",
        table(["figure", "goal", "kraftd", "Java", "kraftd/Java", "met?"],
              goals(data["raft"], data["floor"], data["controller"], data["failover"], data["image"],
                    data["snapshot"])), "",
        "\n".join(f"- {n}" for n in GOAL_NOTES), "",
        "## Where kraftd misses a goal, and why", "", causes(), "",
        "## Physical floor and W1 commit latency", "", floor_section(data["floor"], data["raft"]), "",
        "## W1: raft commit latency, 3 voters on loopback", "", raft_section(data["raft"]), "",
        "## W2, W3: controller workloads (load generator)", "", controller_section(data["controller"]), "",
        "## Under Prometheus scrapes: W1 and W3 scraped once a second", "",
        report_scrape.section(data["raft"], data["controller"]), "",
        "## Mutual TLS: the cost of a connection", "", tls_section(data["tls"]), "",
        "## W4: failover after kill -9 or SIGTERM of the active controller", "", failover_section(data["failover"]), "",
        "## W5, W6, W7: image, memory, snapshot", "", image_section(data["image"], data["snapshot"]), "",
        "## Metadata log storage", "", storage_section(data["storage"]), "",
        "## Plots", "", plot_note or "\n".join(f"![{t}](performance/{f})" for f, t in plots) or "No plot inputs.", "",
        "## Commands", "", commands(run), "",
        "## Inputs", "",
        table(["file", "written", ""], [[f"`target/bench/{n}`", w, "**from an earlier run: not used**" if s else ""]
                                        for n, w, s in files]) if files else "No JSON in target/bench.", "",
        "## controller.json (from `make bench-controller`)", "",
        "What bench/report.py reads: `results.<kraftd|java>.<path>`; any figure may be absent.", "",
        table(["workload", "figure", "path"], [[w, l, "`" + ".".join(p) + "`"] for w, l, p in CONTROLLER_FIGURES]),
        "", "## tls.json (from `make bench-tls`)", "",
        "What bench/report.py reads: `results.<kraftd|java>.<path>`; any figure may be absent.", "",
        table(["part", "figure", "path"], [[w, l, "`" + ".".join(p) + "`"] for w, l, p in TLS_FIGURES]),
        ""]
    with open(DOC, "w") as f:
        f.write("\n".join(doc))
    print(f"bench-report: wrote {os.path.relpath(DOC, REPO)} and {len(plots)} plot(s) in {os.path.relpath(PLOTS, REPO)}")


if __name__ == "__main__":
    main()
