#!/usr/bin/env python3
"""The metadata image at scale (`make bench-image`): kraftd and Kafka's own image side by side.

1. synthesize a metadata log of TOPICS x PARTITIONS partitions (bench/image/synth_metadata_log.rs);
2. kraftd replays it; replays it and writes the image as a snapshot; loads the snapshot
   (each `kraftd metadata-state`, so each step is one process measured by /usr/bin/time -v);
3. Kafka 4.4's own loader (the image dumper's MetadataDelta/MetadataImage replay, bench/image/
   LoadImage.java) loads the same snapshot and replays the same log;
4. both print the image as the canonical JSON (the dumper, `metadata-state --json`), which must
   be the same text.

Wall time and peak RSS of every step go to stdout and target/bench/image.json.

Environment: KRAFTD, SYNTH (the binaries), BENCH_JAVA_CP (the dumper's classes and Kafka's
classpath), BENCH_JAVA_LOG4J, IMAGE_BENCH_TOPICS (1000), IMAGE_BENCH_PARTITIONS (1000),
IMAGE_BENCH_REPLICAS (3), IMAGE_BENCH_JAVA_OPTS (-Xmx4g), IMAGE_BENCH_DIR (target/bench/image),
IMAGE_BENCH_JSON (image.json, beside IMAGE_BENCH_DIR; the Makefile's size sweep names one per size).
"""

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys


def env(name, default=None):
    value = os.environ.get(name, default)
    if value is None:
        sys.exit(f"image_bench: set {name} (see the Makefile's bench-image target)")
    return value


def timed(name, argv, stdout=subprocess.DEVNULL):
    """Runs argv under /usr/bin/time -v; returns (seconds, peak RSS in MiB)."""
    stats = os.path.join(WORK, f"{name}.time")
    result = subprocess.run(["/usr/bin/time", "-v", "-o", stats] + argv, stdout=stdout,
                            stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"image_bench: {name} failed ({' '.join(argv)}):\n{result.stderr}")
    fields = {}
    with open(stats) as f:
        for line in f:
            key, _, value = line.strip().rpartition(": ")
            fields[key] = value
    clock = fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":")
    seconds = sum(float(part) * 60 ** i for i, part in enumerate(reversed(clock)))
    rss_mib = int(fields["Maximum resident set size (kbytes)"]) / 1024
    print(f"{name:<34} {seconds:8.2f} s {rss_mib:9.0f} MiB", flush=True)
    return {"step": name, "seconds": round(seconds, 2), "peak_rss_mib": round(rss_mib)}


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


kraftd, synth = env("KRAFTD"), env("SYNTH")
java_cp, log4j = env("BENCH_JAVA_CP"), env("BENCH_JAVA_LOG4J")
topics = env("IMAGE_BENCH_TOPICS", "1000")
partitions = env("IMAGE_BENCH_PARTITIONS", "1000")
replicas = env("IMAGE_BENCH_REPLICAS", "3")
java_opts = env("IMAGE_BENCH_JAVA_OPTS", "-Xmx4g").split()
WORK = os.path.abspath(env("IMAGE_BENCH_DIR", "target/bench/image"))

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
log_dir, snap_dir = os.path.join(WORK, "log"), os.path.join(WORK, "snapshot")
partition_dir = os.path.join(log_dir, "__cluster_metadata-0")
java = ["java", f"-Dlog4j2.configurationFile={log4j}", "-cp", java_cp] + java_opts

print(f"{topics} topics x {partitions} partitions x {replicas} replicas", flush=True)
steps = [timed("synthesize the log", [synth, log_dir, topics, partitions, replicas])]
steps.append(timed("kraftd replay", [kraftd, "metadata-state", log_dir]))
steps.append(timed("java replay", java + ["LoadImage", partition_dir]))
steps.append(timed("kraftd replay + write snapshot",
                   [kraftd, "metadata-state", log_dir, "--write-snapshot", snap_dir]))
snapshot = glob.glob(os.path.join(snap_dir, "*.checkpoint"))[0]
steps.append(timed("kraftd load snapshot", [kraftd, "metadata-state", snap_dir]))
steps.append(timed("java load snapshot", java + ["LoadImage", "--snapshot", snapshot]))
outputs = {}
for name, argv in [
    ("kraftd load snapshot + JSON", [kraftd, "metadata-state", snap_dir, "--json"]),
    ("java dumper load snapshot + JSON", java + ["ImageDumper", "--snapshot", snapshot]),
    ("kraftd replay log + JSON", [kraftd, "metadata-state", log_dir, "--json"]),
    ("java dumper replay log + JSON", java + ["ImageDumper", partition_dir]),
]:
    out = os.path.join(WORK, name.replace(" ", "-").replace("+", "and") + ".json")
    with open(out, "w") as f:
        steps.append(timed(name, argv, stdout=f))
    outputs[name] = digest(out)
    os.remove(out)

same_snapshot = outputs["kraftd load snapshot + JSON"] == outputs["java dumper load snapshot + JSON"]
same_log = outputs["kraftd replay log + JSON"] == outputs["java dumper replay log + JSON"]
segment = glob.glob(os.path.join(partition_dir, "*.log"))[0]
report = {
    "topics": int(topics), "partitions_per_topic": int(partitions), "replicas": int(replicas),
    "log_bytes": os.path.getsize(segment), "snapshot_bytes": os.path.getsize(snapshot),
    "java_opts": java_opts, "steps": steps,
    "json_identical": {"snapshot": same_snapshot, "log": same_log},
}
print(f"log {report['log_bytes']} bytes, snapshot {report['snapshot_bytes']} bytes; "
      f"kraftd's JSON == Java's: snapshot {same_snapshot}, log {same_log}")
with open(os.path.join(os.path.dirname(WORK), env("IMAGE_BENCH_JSON", "image.json")), "w") as f:
    json.dump(report, f, indent=2)
shutil.rmtree(WORK)
if not (same_snapshot and same_log):
    sys.exit("image_bench: kraftd's image JSON differs from Java's")
