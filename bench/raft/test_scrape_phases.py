"""The bootstrap interval of scrape_phases.py resolves a real shift and holds 1 for none
(`python3 -m unittest` from bench/raft; `make unit` runs it)."""

import random
import unittest

import scrape_phases


def phases(scale, count, draw):
    """`count` phases of five 1 s intervals whose latencies (µs) are log-normal, times `scale`,
    with a stall in one phase out of eight (a tail that comes in bursts, as a disk's does)."""
    out = []
    for p in range(count):
        stall = 4.0 if p % 8 == 3 else 1.0
        intervals = []
        for _ in range(5):
            hist = {}
            for _ in range(300):
                v = int(scale * stall * 1000 * draw.lognormvariate(0, 0.3))
                hist[v] = hist.get(v, 0) + 1
            intervals.append({"latency_us_hist": sorted(hist.items())})
        out.append(intervals)
    return out


class QuantileRatios(unittest.TestCase):
    def test_the_same_latencies_hold_one(self):
        draw = random.Random(1)
        iv = scrape_phases.quantile_ratios_95(phases(1.0, 24, draw), phases(1.0, 24, draw), resamples=200)
        for key in ("p50_us", "p99_us"):
            lo, hi = iv[key]
            self.assertLessEqual(lo, 1.0, (key, iv))
            self.assertGreaterEqual(hi, 1.0, (key, iv))

    def test_a_ten_per_cent_shift_is_resolved(self):
        draw = random.Random(2)
        iv = scrape_phases.quantile_ratios_95(phases(1.1, 24, draw), phases(1.0, 24, draw), resamples=200)
        lo, _ = iv["p50_us"]
        self.assertGreater(lo, 1.0, iv)

    def test_too_few_phases_give_none(self):
        draw = random.Random(3)
        self.assertIsNone(scrape_phases.quantile_ratios_95(phases(1.0, 1, draw), phases(1.0, 4, draw)))


if __name__ == "__main__":
    unittest.main()
