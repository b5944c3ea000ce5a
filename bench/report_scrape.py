"""docs/performance.md's "Under Prometheus scrapes" section (issue #30's cost goal: scraping every
second moves neither W1 nor W3 by more than 2 %), from raft.json's "scrape" section
(bench/raft/scrape_phases.py) and controller.json's `w3_scraped` (compat/tests/controller_bench/
scraped.rs). Both pair scraped and unscraped phases inside one run; a ratio is the scraped
phases' figure over the unscraped phases'.
"""

from report_text import NOT_MEASURED, table

GOAL = 0.02  # at most 2 % worse


def _fmt(v):
    return "—" if v is None else f"{v:.3f}"


def _within(figures):
    """Whether scrapes cost at most 2 %, from (ratio, its 95 % interval, whether a higher ratio
    is worse) per figure: "yes" when no ratio and no interval's worse end is more than 2 % worse
    than unscraped; "**no**" when a ratio is; else not resolved by this run. One-sided: the goal
    is a cost, and a scraped arm that ran faster (W1 with 1 in flight did) costs nothing."""
    if any(r is None for r, _, _ in figures):
        return "—"
    worse = lambda v, higher: v - 1.0 if higher else 1.0 - v  # noqa: E731
    if any(worse(r, higher) > GOAL for r, _, higher in figures):
        return "**no**"
    for _, interval, higher in figures:
        if not interval or None in interval:
            return "not resolved: no 95 % interval"
        lo, hi = interval
        if worse(hi if higher else lo, higher) > GOAL:
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
        latency = sc.get("latency_ratio_95") or {}
        rows.append([impl, window, f"{off.get('p99_us', '—')} / {on.get('p99_us', '—')}",
                     f"{off.get('committed_records_per_s', '—')} / {on.get('committed_records_per_s', '—')}",
                     _fmt(r.get("p50_us")), _fmt(r.get("p99_us")), _interval(latency.get("p99_us")),
                     _fmt(r.get("committed_records_per_s")),
                     _interval(sc.get("records_per_s_ratio_95")), sc.get("scrapes", "—"),
                     _within([(r.get("p50_us"), latency.get("p50_us"), True),
                              (r.get("p99_us"), latency.get("p99_us"), True)])
                     if window == "1" else
                     _within([(r.get("committed_records_per_s"), sc.get("records_per_s_ratio_95"), False)])])
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
        spaced = sc.get("spaced") or {}
        cost = spaced.get("cost_per_scrape") or {}
        per_scrape = ", ".join(
            f"{'**' + n + '**' if c.get('active') else n}: {_fmt(c.get('cpu_ms_per_scrape'))} "
            f"({_interval(c.get('cpu_ms_per_scrape_95'))})"
            for n, c in sorted(cost.items())) or "—"
        active = next((c for c in cost.values() if c.get("active")), {})
        at_1 = active.get("ratio_at_1_per_s_95")
        ms = lambda v: "—" if v is None else f"{1000 * v:.1f}"  # noqa: E731
        rows.append([impl, f"{ms(off.get('active_cpu_per_s'))} / {ms(on.get('active_cpu_per_s'))}",
                     _fmt(r.get("active_cpu")), _interval(sc.get("active_cpu_ratio_95")),
                     _fmt(r.get("all_controllers_cpu")),
                     _fmt(r.get("heartbeat_p50")), _fmt(r.get("heartbeat_p99")), sc.get("scrapes", "—"),
                     _fmt(spaced.get("scrapes_per_s_per_controller")), per_scrape,
                     _fmt(active.get("ratio_at_1_per_s")), _interval(at_1),
                     _within([(active.get("ratio_at_1_per_s"), at_1, True)])])
    return rows


def section(raft, ctrl):
    text = ["Issue #30's cost goal: scraping every node's `/metrics` once a second moves neither W1 nor W3 by more "
            "than 2 %. kraftd serves `kraftd.http.listener`; Java runs Prometheus's JMX exporter javaagent under "
            "compat/jmx-exporter-kraft.yaml (Strimzi's naming), which walks the JVM's MBeans at every scrape. "
            "Each run alternates scraped and unscraped phases (off, on, on, off, ...); a ratio is the scraped "
            "phases' figure over the unscraped phases' in the same run, so the leader, its log and the host's "
            "load are the same for both. \"within 2 %\" asks it of the p50 and p99 with 1 record in flight "
            "and of the rate at saturation (W1), and of the active controller's CPU at one scrape a second "
            "(W3), each no more than 2 % worse scraped, its 95 % interval's worse end included (one-sided: the "
            "goal is a cost): the rate's and the CPU's intervals by normal approximation over 1 s intervals or "
            "phases, the latencies' by bootstrap over whole phases.", ""]
    w1 = w1_rows(raft)
    text += ["W1 (`make bench-raft`, RAFT_BENCH_SCRAPE=1): closed loop, linger 0, 1 record in flight and each "
             "implementation's saturation window.", "",
             table(["impl", "in flight", "p99 µs unscraped / scraped", "records/s unscraped / scraped",
                     "p50 ratio", "p99 ratio", "p99 ratio, 95 %", "records/s ratio", "records/s ratio, 95 %",
                     "scrapes", "within 2 %"], w1)
             if w1 else f"W1 under scrapes: {NOT_MEASURED}.", ""]
    w3 = w3_rows(ctrl)
    cost = ((ctrl or {}).get("sizes") or {}).get("w3_scrape_cost") or {}
    phase = ((ctrl or {}).get("sizes") or {}).get("w3_scraped_phase_s", "—")
    text += [f"W3 (`make bench-controller`, CONTROLLER_BENCH_SCRAPE=1): the same fleet on a quorum of its own "
             f"whose controllers serve metrics, in {phase} s phases scraped once a second or not; then, the fleet "
             f"still heartbeating, {cost.get('seconds', '—')} s of such phases scraped every "
             f"{cost.get('every_ms', '—')} ms or not, whose difference over the scrapes made gives each "
             "controller's CPU per scrape (95 % interval over the phases), and from it what one scrape a second "
             "adds to the active controller's unscraped CPU (a linear extrapolation: a lone scrape may cost more "
             "than one of these). \"within 2 %\" asks it of that last ratio and its interval.", "",
             table(["impl", "active CPU ms/s unscraped / scraped", "active CPU ratio", "active CPU ratio, 95 %",
                     "all controllers' CPU ratio",
                     "heartbeat p50 ratio", "heartbeat p99 ratio", "scrapes", "spaced scrapes/s per node",
                     "CPU ms per scrape, by node (95 %; active in bold)",
                     "active CPU ratio at 1 scrape/s", "its 95 %", "within 2 %"], w3)
             if w3 else f"W3 under scrapes: {NOT_MEASURED}."]
    return "\n".join(text)
