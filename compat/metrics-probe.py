#!/usr/bin/env python3
"""`make run`'s /metrics as a new user's Prometheus sees it: usage: metrics-probe.py HOST:PORT.
Exits 0 when /metrics answers 200 with the families every node exports (raft's, the metadata
dir's space, process_*), each with a sample; 1 (and what is missing) otherwise."""

import sys
import time
import urllib.request

WANTED = [
    "kafka_server_raftmetrics_current_state",
    "kafka_server_raftmetrics_high_watermark",
    "kraftd_metadata_dir_free_bytes",
    "kraftd_metadata_dir_size_bytes",
    "process_cpu_seconds_total",
    "process_open_fds",
    "process_resident_memory_bytes",
]


def main():
    if len(sys.argv) != 2:
        print("usage: metrics-probe.py HOST:PORT")
        return 2
    url = f"http://{sys.argv[1]}/metrics"
    # The node may still be replaying its log: a few seconds of 503s or refusals are not failures.
    deadline, why = time.time() + 30, "no answer"
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                body = resp.read().decode()
            break
        except OSError as e:
            why = str(e)
            time.sleep(0.5)
    else:
        print(f"metrics-probe: GET {url}: {why}")
        return 1
    names = {line.split("{")[0].split(" ")[0] for line in body.splitlines() if line and not line.startswith("#")}
    missing = [w for w in WANTED if w not in names]
    if missing:
        print(f"metrics-probe: {url} lacks {', '.join(missing)}")
        return 1
    print(f"metrics-probe: {url} exports {len(names)} series names, every one wanted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
