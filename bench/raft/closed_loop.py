"""Closed-loop runs of the raft bench (raft_bench.py --closed-loop, --saturation): figures, the
saturation sweep and the summaries.

In a closed-loop run the leader keeps N records appended and not yet committed (kraftd
`test-raft-server --closed-loop N`, Java TestRaftServerProbe --closed-loop N through
ClosedLoopWorkload.java), and both time each record in µs, bucketed to 3 significant digits
(`latency_us_hist`). N = 1 is the latency of one commit round on an otherwise idle quorum. The
saturation sweep raises N until the committed rate stops rising: the best rate is the throughput
at saturation (with back-pressure, unlike TestRaftServer's open loop, whose generator dies when it
overruns). Where the rate stops rising differs by implementation (on a 2-core VM kraftd levelled
off near 256 in flight, Java still rose at 16384), so no single N would do.
"""

RISE = 1.10  # a window must beat the best rate so far by 10 % for the sweep to go on


def saturation_sweep(run, windows, record, log):
    """run(window) -> result; record(window, result); stops at the first window whose committed
    rate is not RISE x the best before it."""
    best = 0.0
    for window in windows:
        res = run(window)
        res["saturation_sweep"] = True
        record(window, res)
        rate = res["committed_records_per_s"] or 0.0
        if best and rate < RISE * best:
            log(f"{res['impl']}: {rate:.0f} records/s with {window} in flight, not {RISE:.2f} x {best:.0f}: saturated")
            return
        best = max(best, rate)


QUANTILES_US = (("p50_us", 500), ("p99_us", 990), ("p999_us", 999))  # per mille


def quantiles_us(hist, keys=None):
    """The QUANTILES_US named in `keys` (all by default) of a {µs: count} histogram: for each, the
    least value whose cumulative count passes that share of the total. {} when it is empty."""
    wanted = sorted((q, key) for key, q in QUANTILES_US if keys is None or key in keys)
    total = sum(hist.values())
    out, cum = {}, 0
    for value in sorted(hist) if total else []:
        cum += hist[value]
        while wanted and cum * 1000 > wanted[0][0] * total:
            out[wanted.pop(0)[1]] = value
    return out


def merged_us_hist(intervals):
    """The intervals' latency_us_hist summed into one {µs: count}."""
    hist = {}
    for rec in intervals:
        for value, count in rec.get("latency_us_hist", []):
            hist[value] = hist.get(value, 0) + count
    return hist


def micros_figures(intervals):
    """p50/p99/p99.9/mean/max in µs over the intervals' latency_us_hist, and the merged histogram."""
    hist = merged_us_hist(intervals)
    out = quantiles_us(hist)
    hist = sorted(hist.items())
    total = sum(c for _, c in hist)
    if not total:
        return {}
    out.update({"mean_us": round(sum(v * c for v, c in hist) / total, 1), "max_us": hist[-1][0],
                "latency_us_hist": [[v, c] for v, c in hist]})
    return out


def summaries(runs):
    """raft.json's "closed_loop" and "saturation" sections from the closed-loop results (medians
    over repeats are not taken here: with repeats, the last run of each key is shown)."""
    runs = [r for r in runs if r.get("closed_loop")]
    if not runs:
        return None, None
    latest = {}
    for r in runs:
        latest[(r["impl"], r["linger_ms"], r["closed_loop"])] = r
    rows = [[impl, linger, window, r.get("p50_us"), r.get("p99_us"), r.get("p999_us"), r["committed_records_per_s"]]
            for (impl, linger, window), r in sorted(latest.items(), key=lambda kv: (kv[0][2], kv[0][1], kv[0][0]))]
    closed = {"description": "N records in flight, each timed from its append call to its commit, µs resolution "
                             "(1 %, 3 significant digits).",
              "header": ["impl", "linger ms", "in flight", "p50 µs", "p99 µs", "p99.9 µs", "committed records/s"],
              "rows": rows}
    best = {}
    for (impl, linger, window), r in latest.items():
        rate = r["committed_records_per_s"]
        if rate and rate > best.get(impl, (0,))[0]:
            best[impl] = (rate, linger, window)
    sat_rows = [[impl, linger, window, rate] for impl, (rate, linger, window) in sorted(best.items())]
    saturation = {"description": "the highest committed records/s of the closed-loop runs; the sweep raised the "
                                 "records in flight until the rate rose by less than 10 %.",
                  "header": ["impl", "linger ms", "in flight", "committed records/s"], "rows": sat_rows,
                  "max_committed_records_per_s": {impl: v[0] for impl, v in best.items()}}
    return closed, saturation
