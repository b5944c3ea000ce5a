"""W1 under Prometheus scrapes (raft_bench.py --scrape): one closed-loop run per implementation and
window whose measured time alternates between phases in which every node's /metrics is scraped once
a second and phases in which nothing scrapes, in the order off, on, on, off, off, on, ... (so that a
drift in the machine's speed over the run falls on both arms alike). Each report interval that lies
wholly inside one phase counts toward that phase's arm; the arms' figures (p50/p99 commit latency
in µs, committed records/s) are then compared, scraped over unscraped.

Pairing inside one run, rather than two runs one after the other, keeps the leader, its log and
the host's load the same for both arms, so the comparison resolves a few per cent where two
separate runs differ by more than that from one to the next.
"""

import math
import random
import threading
import time
import http.client
import urllib.parse

import closed_loop

SCRAPE_INTERVAL_S = 1.0


def wall_ms():
    return time.time() * 1000.0


class PhasedScraper(threading.Thread):
    """Scrapes `urls` every second during 'on' phases of `phase_s` seconds; records each phase's
    wall-clock span, and each scrape's outcome."""

    def __init__(self, urls, phase_s):
        super().__init__(name="raft-bench-scraper", daemon=True)
        self.urls = urls
        self.phase_s = phase_s
        self.phases = []       # (start_ms, end_ms, scraped)
        self.scrapes = 0       # answered 200 with Prometheus text
        self.failures = []     # (url, why), the first few
        self.failed = 0
        self.series = {}       # url -> lines of samples in its last scrape
        self.raft_series = {}  # url -> kafka_server_raftmetrics_* samples in its last scrape
        self._done = threading.Event()
        self._conns = {}       # url -> http.client.HTTPConnection, kept open

    def stop(self):
        self._done.set()
        self.join(timeout=30)

    def _get(self, url):
        """GET on the url's kept connection (Prometheus keeps one open between scrapes); an
        exporter that closed it idle gets a new one."""
        for fresh in (url not in self._conns, True):
            if fresh:
                parts = urllib.parse.urlsplit(url)
                self._conns[url] = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
            conn = self._conns[url]
            try:
                conn.request("GET", urllib.parse.urlsplit(url).path or "/")
                resp = conn.getresponse()
                body = resp.read().decode(errors="replace")
                if resp.getheader("connection", "").lower() == "close":
                    conn.close()
                    del self._conns[url]
                return resp.status, body
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                del self._conns[url]
                if fresh:
                    raise OSError(str(e)) from e
        raise AssertionError("the second try is on a fresh connection")

    def _scrape(self, url):
        try:
            status, body = self._get(url)
            if status != 200:
                raise OSError(f"HTTP {status}")
        except OSError as e:
            self.failed += 1
            if len(self.failures) < 5:
                self.failures.append((url, str(e)))
            return
        samples = [ln for ln in body.splitlines() if ln and not ln.startswith("#")]
        self.series[url] = len(samples)
        self.raft_series[url] = sum(1 for ln in samples if ln.startswith("kafka_server_raftmetrics_"))
        self.scrapes += 1

    def run(self):
        index = 0
        while not self._done.is_set():
            # off, on, on, off, off, on, on, off, ...
            scraped = (index % 4) in (1, 2)
            start = wall_ms()
            end = start + self.phase_s * 1000.0
            while not self._done.is_set() and wall_ms() < end:
                if scraped:
                    tick = time.monotonic()
                    for url in self.urls:
                        self._scrape(url)
                    self._done.wait(max(0.0, SCRAPE_INTERVAL_S - (time.monotonic() - tick)))
                else:
                    self._done.wait(min(0.2, max(0.0, (end - wall_ms()) / 1000.0)))
            self.phases.append((start, min(end, wall_ms()), scraped))
            index += 1

    def arm_of(self, interval):
        """True (scraped), False (unscraped) or None (straddles a phase edge, or outside them)."""
        placed = self.phase_of(interval)
        return None if placed is None else self.phases[placed][2]

    def phase_of(self, interval):
        """The index of the phase holding the interval wholly, or None."""
        for i, (start, end, _) in enumerate(self.phases):
            if start <= interval["start_ms"] and interval["end_ms"] <= end:
                return i
        return None


def arm_figures(intervals):
    """An arm's committed records/s and closed-loop latency figures (µs), from its intervals."""
    records = sum(r["records"] for r in intervals)
    secs = sum(r["end_ms"] - r["start_ms"] for r in intervals) / 1000.0
    figures = closed_loop.micros_figures(intervals)
    figures.pop("latency_us_hist", None)
    return {"intervals": len(intervals), "measured_s": round(secs, 1), "records": records,
            "committed_records_per_s": round(records / secs, 1) if secs else None, **figures}


def rate_ratio_95(on, off):
    """The 95 % interval of the scraped/unscraped records/s ratio (normal approximation over the
    arms' 1 s intervals; the slow drift the phase order cancels in the means still widens it, so
    it errs wide). None with fewer than 2 intervals an arm."""
    def mean_se(intervals):
        rates = [r["records"] * 1000.0 / (r["end_ms"] - r["start_ms"]) for r in intervals]
        n = len(rates)
        if n < 2:
            return None
        mean = sum(rates) / n
        var = sum((x - mean) ** 2 for x in rates) / (n - 1)
        return mean, math.sqrt(var / n)
    a, b = mean_se(on), mean_se(off)
    if not a or not b or not a[0] or not b[0]:
        return None
    r = a[0] / b[0]
    half = 1.96 * r * math.sqrt((a[1] / a[0]) ** 2 + (b[1] / b[0]) ** 2)
    return [round(r - half, 4), round(r + half, 4)]


def quantile_ratios_95(phases_on, phases_off, keys=("p50_us", "p99_us"), resamples=400, seed=0):
    """The 95 % intervals of the scraped/unscraped latency quantile ratios, by bootstrap over whole
    phases (each arm's phases drawn with replacement, so that a stall and the latencies it delays
    stay together). A latency tail comes in bursts; this says whether a run resolves its ratio.
    None with fewer than 2 phases an arm. `seed`: the draws are an argument, repeatable."""
    if len(phases_on) < 2 or len(phases_off) < 2:
        return None

    def quantiles(hists):
        merged = {}
        for h in hists:
            for value, count in h.items():
                merged[value] = merged.get(value, 0) + count
        return closed_loop.quantiles_us(merged, keys)

    draw = random.Random(seed)
    hists_on = [closed_loop.merged_us_hist(p) for p in phases_on]
    hists_off = [closed_loop.merged_us_hist(p) for p in phases_off]
    ratios = {k: [] for k in keys}
    for _ in range(resamples):
        on = quantiles(draw.choices(hists_on, k=len(hists_on)))
        off = quantiles(draw.choices(hists_off, k=len(hists_off)))
        for k in keys:
            if on.get(k) is not None and off.get(k):
                ratios[k].append(on[k] / off[k])
    out = {}
    for k, rs in ratios.items():
        rs.sort()
        # Nearest rank, symmetric: the 2.5th and 97.5th percentiles of the resampled ratios.
        lo, hi = math.ceil(0.025 * len(rs)) - 1, math.ceil(0.975 * len(rs)) - 1
        out[k] = [round(rs[max(lo, 0)], 4), round(rs[hi], 4)] if rs else None
    return out


def compare(scraper, intervals):
    """The scrape section of one run: both arms, scraped/unscraped ratios, and the scrapes made."""
    arms = {True: [], False: []}
    by_phase = {}
    for rec in intervals:
        placed = scraper.phase_of(rec)
        if placed is not None:
            arms[scraper.phases[placed][2]].append(rec)
            by_phase.setdefault(placed, []).append(rec)
    phases = {arm: [recs for i, recs in sorted(by_phase.items()) if scraper.phases[i][2] == arm]
              for arm in (True, False)}
    on, off = arm_figures(arms[True]), arm_figures(arms[False])
    ratios = {}
    for key in ("p50_us", "p99_us", "p999_us", "mean_us", "committed_records_per_s"):
        a, b = on.get(key), off.get(key)
        ratios[key] = round(a / b, 4) if a is not None and b else None
    return {"phase_s": scraper.phase_s, "scrape_interval_s": SCRAPE_INTERVAL_S,
            "phases": len(scraper.phases), "scrapes": scraper.scrapes, "failed_scrapes": scraper.failed,
            "failures": [f"{u}: {w}" for u, w in scraper.failures],
            "samples_per_scrape": scraper.series, "raft_metrics_samples": scraper.raft_series,
            "scraped": on, "unscraped": off, "ratios_scraped_over_unscraped": ratios,
            "records_per_s_ratio_95": rate_ratio_95(arms[True], arms[False]),
            "latency_ratio_95": quantile_ratios_95(phases[True], phases[False])}
