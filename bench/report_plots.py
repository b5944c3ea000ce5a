"""The PNG plots of docs/performance.md (used by bench/report.py): latency CDFs, the physical
floor's distributions, RSS against partitions, failover timelines. Each plot is drawn only from
the JSON present; a plot without input is not drawn (and an old PNG of it is removed)."""

import json
import os
import re

COLORS = {"kraftd": "tab:orange", "java": "tab:blue"}


def _cdf(hist):
    """[(value, count)] ascending -> (xs, fraction <= x)."""
    total = sum(c for _, c in hist)
    xs, ys, cum = [], [], 0
    for v, c in hist:
        cum += c
        xs.append(v)
        ys.append(cum / total)
    return xs, ys


def _raft_runs(paths):
    """(label, impl, linger, closed-loop window, [(µs, count)]) of every per-run raft JSON."""
    runs = []
    for path in paths:
        m = re.fullmatch(r"raft-(\w+)-linger(\d+)(?:-closed(\d+))?\.json", os.path.basename(path))
        if not m:
            continue  # a repeat's file; the plain one holds the run (or the medians, without histogram)
        with open(path) as f:
            res = json.load(f)
        # Whole-ms buckets hold (v - 1, v + 1) ms (wall-clock ms on both ends): drawn at v + 0.5.
        hist = res.get("latency_us_hist") or [[v * 1000 + 500, c] for v, c in res.get("latency_ms_hist", [])]
        window = int(m.group(3) or 0)
        if hist:
            label = f"{m.group(1)}, linger {m.group(2)} ms" + (f", {window} in flight" if window else "")
            runs.append((label, m.group(1), int(m.group(2)), window, hist))
    return runs


def _latency_cdf(plt, paths, floor):
    runs = _raft_runs(paths)
    if not runs:
        return None
    panels = [("open loop, TestRaftServer's whole ms (drawn at the bucket's middle)", [r for r in runs if not r[3]]),
              ("closed loop, µs", [r for r in runs if r[3]])]
    panels = [p for p in panels if p[1]]
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5), squeeze=False, sharey=True)
    styles = ["-", "--", ":", "-."]
    for ax, (title, group) in zip(axes[0], panels):
        variants = sorted({(linger, window) for _, _, linger, window, _ in group})
        for label, impl, linger, window, hist in group:
            xs, ys = _cdf([(max(v, 1) / 1000.0, c) for v, c in hist])
            ax.step(xs, ys, where="post", label=label, color=COLORS.get(impl),
                    linestyle=styles[variants.index((linger, window)) % len(styles)])
        if floor:
            for q, style in (("p50_us", ":"), ("p99_us", "-.")):
                ax.axvline(floor["commit_floor_kraftd"][q] / 1000.0, color="gray", linestyle=style,
                           label=f"commit floor {q[:-3]}")
        ax.set_xscale("log")
        ax.set_xlabel("commit latency, ms (log scale)")
        ax.set_title(f"W1 {title}", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0, 0].set_ylabel("fraction of records")
    fig.suptitle("W1: raft commit latency, 3 voters on loopback")
    fig.tight_layout()
    return fig


def _floor_cdf(plt, floor):
    if not floor:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    writers = floor["fsync"].get("writers", 1)
    for key, label in (("fsync_one_writer", f"fdatasync after a {floor['write_bytes']} B append, 1 writer alone"),
                       ("fsync", f"fdatasync after a {floor['write_bytes']} B append, {writers} writers at once"),
                       ("rtt", "loopback TCP round trip")):
        if key not in floor:
            continue
        xs, ys = _cdf(floor[key]["hist_us"])
        ax.step(xs, ys, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("µs (log scale)")
    ax.set_ylabel("fraction")
    ax.set_title(f"Physical floor: data dir on {floor.get('filesystem', {}).get('type', '?')}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def _rss_vs_partitions(plt, paths, snapshot):
    points = {}  # series -> [(partitions, MiB)]
    for path in paths:
        if not re.fullmatch(r"image(-\d+)?\.json", os.path.basename(path)):
            continue
        with open(path) as f:
            img = json.load(f)
        parts = img["topics"] * img["partitions_per_topic"]
        for s in img["steps"]:
            if s["step"] in ("kraftd load snapshot", "java load snapshot", "kraftd replay", "java replay"):
                points.setdefault(s["step"] + " (image bench)", []).append((parts, s["peak_rss_mib"]))
    for r in (snapshot or {}).get("results", []):
        vm = r.get("rss_mib", {}).get("vmhwm_at_end")
        if vm:
            parts = snapshot["topics"] * snapshot["partitions_per_topic"]
            points.setdefault(f"{r['impl']} controller peak RSS (snapshot bench)", []).append((parts, vm))
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    for series, pts in sorted(points.items()):
        pts.sort()
        impl = series.split()[0]
        ax.plot([p for p, _ in pts], [m for _, m in pts], marker="o" if "snapshot bench" not in series else "s",
                linestyle="--" if "replay" in series else "-", color=COLORS.get(impl), label=series,
                alpha=1.0 if "load" in series or "controller" in series else 0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("partitions (log scale)")
    ax.set_ylabel("peak RSS, MiB (log scale)")
    ax.set_title("W6: memory against partitions")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def _failover_timeline(plt, failover):
    quorums = [q for q in (failover or {}).get("quorums", []) if q.get("kills")]
    if not quorums:
        return None
    fig, axes = plt.subplots(len(quorums), 1, figsize=(9, 1.6 + 0.35 * sum(len(q["kills"]) for q in quorums)),
                             sharex=True, squeeze=False)
    for ax, q in zip(axes[:, 0], quorums):
        for i, kill in enumerate(q["kills"]):
            detect = min((d for d in kill.get("detection_ms", {}).values() if d is not None), default=None)
            elected, committed = kill.get("elected_ms"), kill.get("committed_ms")
            color = COLORS.get((kill.get("winner") or {}).get("kind"), "gray")
            if committed is not None:
                ax.barh(i, committed, color=color, alpha=0.25, height=0.6)
            if detect is not None:
                ax.plot(detect, i, "|", color="black", markersize=12)
            if elected is not None:
                ax.plot(elected, i, "o", color=color)
            if committed is not None:
                ax.plot(committed, i, "D", color=color)
        ax.set_yticks(range(len(q["kills"])))
        ax.set_yticklabels([f"kill {i + 1}" for i in range(len(q["kills"]))], fontsize=7)
        ax.set_title(f"{q['quorum']}: | first pre-vote, o new leader, ◆ first commit (colour: winner)", fontsize=9)
        ax.invert_yaxis()
        ax.grid(True, axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("ms after kill -9 of the active controller")
    fig.tight_layout()
    return fig


def write_all(plot_dir, paths, data):
    """Writes the PNGs from `paths` (the JSON files of this run) and `data` (report.py's loaded
    inputs); returns ([(file, title)], note) where note explains why plots are missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "Plots skipped: matplotlib is not installed (`make bench-report` installs it in a venv)."
    wanted = [
        ("latency-cdf.png", "W1 commit latency CDF", lambda: _latency_cdf(plt, paths, data["floor"])),
        ("floor-cdf.png", "Physical floor: fdatasync and loopback RTT", lambda: _floor_cdf(plt, data["floor"])),
        ("rss-vs-partitions.png", "Peak RSS against partitions", lambda: _rss_vs_partitions(plt, paths, data["snapshot"])),
        ("failover-timeline.png", "Failover timelines per kill", lambda: _failover_timeline(plt, data["failover"])),
    ]
    written = []
    for name, title, draw in wanted:
        path = os.path.join(plot_dir, name)
        fig = draw()
        if fig is None:
            if os.path.exists(path):
                os.remove(path)
            continue
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        written.append((name, title))
    return written, None
