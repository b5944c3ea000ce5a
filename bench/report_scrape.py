"""docs/performance.md's "Under Prometheus scrapes" section (issue #30's cost goal: scraping every
second moves neither W1 nor W3 by more than 2 %), from raft.json's "scrape" section
(bench/raft/scrape_phases.py) and controller.json's `w3_scraped` (compat/tests/controller_bench/
scraped.rs). Both pair scraped and unscraped phases inside one run; a ratio is the scraped
phases' figure over the unscraped phases'.
"""

from report_text import NOT_MEASURED, table

GOAL = 0.02  # at most 2 % either way


def _fmt(v):
    return "—" if v is None else f"{v:.3f}"


def _within(ratios, keys, interval=None):
    """"yes" when every ratio in `keys` is within 2 % and the 95 % interval (if any) lies inside
    it; "**no**" when a ratio or the whole interval is outside; else not resolved by this run."""
    vals = [ratios.get(k) for k in keys]
    if any(v is None for v in vals):
        return "—"
    if not all(abs(v - 1.0) <= GOAL for v in vals):
        return "**no**"
    if interval and None not in interval:
        lo, hi = interval
        if lo < 1.0 - GOAL or hi > 1.0 + GOAL:
            return f"not resolved: 95 % {lo:.3f}–{hi:.3f}"
    return "yes"


def _interval(iv):
    return "—" if not iv or None in iv else f"{iv[0]:.3f}–{iv[1]:.3f}"


def w1_rows(raft):
    runs = ((raft or {}).get("scrape") or {}).get("runs") or {}
    rows = []
    for name, sc in sorted(runs.items(), key=lambda kv: (int(kv[0].split("closed")[1]), kv[0])):
        impl, window = name.split("-closed")
        r = sc.get("ratios_scraped_over_unscraped") or {}
        on, off = sc.get("scraped") or {}, sc.get("unscraped") or {}
        rows.append([impl, window, f"{off.get('p99_us', '—')} / {on.get('p99_us', '—')}",
                     f"{off.get('committed_records_per_s', '—')} / {on.get('committed_records_per_s', '—')}",
                     _fmt(r.get("p50_us")), _fmt(r.get("p99_us")), _fmt(r.get("committed_records_per_s")),
                     _interval(sc.get("records_per_s_ratio_95")), sc.get("scrapes", "—"),
                     _within(r, ("p50_us", "p99_us")) if window == "1" else
                     _within(r, ("committed_records_per_s",), sc.get("records_per_s_ratio_95"))])
    return rows


def w3_rows(ctrl):
    results = (ctrl or {}).get("results") or {}
    rows = []
    for impl in ("kraftd", "java"):
        sc = ((results.get(impl) or {}).get("w3_scraped") or {}).get("scrape")
        if not sc:
            continue
        r = sc.get("ratios_scraped_over_unscraped") or {}
        on, off = sc.get("scraped") or {}, sc.get("unscraped") or {}
        nodes = (((results.get(impl) or {}).get("w3_scraped") or {}).get("controllers") or {}).get("nodes") or {}
        cost = sc.get("cost_per_scrape") or {}
        per_scrape = ", ".join(
            f"{'**' + n + '**' if (nodes.get(n) or {}).get('active') else n}: {_fmt(c.get('cpu_ms_per_scrape'))}"
            for n, c in sorted(cost.items())) or "—"
        ms = lambda v: "—" if v is None else f"{1000 * v:.1f}"  # noqa: E731
        rows.append([impl, f"{ms(off.get('active_cpu_per_s'))} / {ms(on.get('active_cpu_per_s'))}",
                     _fmt(r.get("active_cpu")), _interval(sc.get("active_cpu_ratio_95")),
                     _fmt(r.get("all_controllers_cpu")),
                     _fmt(r.get("heartbeat_p50")), _fmt(r.get("heartbeat_p99")), sc.get("scrapes", "—"),
                     per_scrape, _within(r, ("active_cpu", "heartbeat_p99"), sc.get("active_cpu_ratio_95"))])
    return rows


def section(raft, ctrl):
    text = ["Issue #30's cost goal: scraping every node's `/metrics` once a second moves neither W1 nor W3 by more "
            "than 2 %. kraftd serves `kraftd.http.listener`; Java runs Prometheus's JMX exporter javaagent under "
            "compat/jmx-exporter-kraft.yaml (Strimzi's naming), which walks the JVM's MBeans at every scrape. "
            "Each run alternates scraped and unscraped phases (off, on, on, off, ...); a ratio is the scraped "
            "phases' figure over the unscraped phases' in the same run, so the leader, its log and the host's "
            "load are the same for both. \"within 2 %\" asks it of the p50 and p99 with 1 record in flight "
            "and of the rate at saturation (W1), and of the active controller's CPU and the heartbeat p99 (W3); "
            "the rate and the CPU with their 95 % intervals (normal approximation over 1 s intervals or "
            "phases).", ""]
    w1 = w1_rows(raft)
    text += ["W1 (`make bench-raft`, RAFT_BENCH_SCRAPE=1): closed loop, linger 0, 1 record in flight and each "
             "implementation's saturation window.", "",
             table(["impl", "in flight", "p99 µs unscraped / scraped", "records/s unscraped / scraped",
                     "p50 ratio", "p99 ratio", "records/s ratio", "records/s ratio, 95 %", "scrapes", "within 2 %"], w1)
             if w1 else f"W1 under scrapes: {NOT_MEASURED}.", ""]
    w3 = w3_rows(ctrl)
    text += ["W3 (`make bench-controller`, CONTROLLER_BENCH_SCRAPE=1): the same fleet on a quorum of its own "
             "whose controllers serve metrics; after its window, each controller's CPU per scrape from 300 scrapes back "
             "to back, less its unscraped CPU over as long.", "",
             table(["impl", "active CPU ms/s unscraped / scraped", "active CPU ratio", "active CPU ratio, 95 %",
                     "all controllers' CPU ratio",
                     "heartbeat p50 ratio", "heartbeat p99 ratio", "scrapes",
                     "CPU ms per scrape, by node (active in bold)", "within 2 %"], w3)
             if w3 else f"W3 under scrapes: {NOT_MEASURED}."]
    return "\n".join(text)
