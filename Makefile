# kraftd: the two set-up commands are `make run` and `make test` (see README.md).
SHELL := /bin/bash
CARGO ?= cargo
KAFKA_VERSION ?= 4.4.0
export KAFKA_VERSION
CONFIG ?= config/controller.properties
# Compat tests start JVMs that mostly wait (and map Kafka's classes from a shared archive, see
# compat/harness/cds.rs): three at a time keep a 2-core machine busy without starving any.
COMPAT_THREADS ?= 3
FUZZ_SECONDS ?= 60
# The release binary, wherever cargo puts it (CARGO_TARGET_DIR is honoured).
KRAFTD ?= $(or $(CARGO_TARGET_DIR),target)/release/kraftd
# The test-only code (Cargo.toml's `testkit` feature: raft::sim, fuzzing, the sample requests),
# which tests and fuzz targets need. Every cargo command below that compiles passes it, except
# `make build`'s: that one builds the shipped binary without it (BUILD_FEATURES, empty). The steps
# of `make test` and `make bench` that build kraftd to run it (run-smoke, demo, bench-raft, ...)
# set BUILD_FEATURES to TEST_FEATURES: one feature set per run, so cargo compiles kraftd once.
TEST_FEATURES := --features testkit
BUILD_FEATURES ?=

.PHONY: run build test run-smoke unit compat-deps compat vectors-test fmt-check clippy fuzz codegen vectors help

help:
	@echo "make run          start a single-node controller from $(CONFIG)"
	@echo "make demo         kraftd, one stock Kafka broker, a topic, messages produced and consumed; then stops them"
	@echo "make test         everything CI runs: format check, clippy, unit, protocol vectors, fuzz smoke, compat against Kafka $(KAFKA_VERSION)"
	@echo "make fuzz         run each cargo-fuzz target for FUZZ_SECONDS (needs nightly and cargo-fuzz)"
	@echo "make soak-failover  SOAK_MINUTES of produce/consume while the active kraftd is killed every 30 s"
	@echo "make soak-election  SOAK_KILLS (200) kill -9s of the leader of a 3-kraftd, a 3-Java and a 2-Java + 1-kraftd"
	@echo "                  quorum; every election within 30 s; figures in target/bench/election_soak.json"
	@echo "make soak         SOAK_MINUTES of Java->kraftd->Java rolling replacement with kill -9s and a partitioned"
	@echo "                  controller (network namespace, needs root); SOAK_SEED=<n> replays a run's draws"
	@echo "make bench        every benchmark against Java 4.4 (one at a time), then docs/performance.md and its plots"
	@echo "make bench-quick  the same at small sizes; make bench-report: only the page and plots"
	@echo "make codegen      regenerate src/protocol/messages from the pinned Kafka jars"
	@echo "make vectors      recapture protocol-tests/vectors from real Kafka"
	@echo "make image-dump   Kafka's own image of a metadata log as JSON: DIR=<__cluster_metadata-0> [AT=offset] [SNAPSHOT=file]"

build:
	$(CARGO) build --release $(BUILD_FEATURES)

run: build
	@# First start: format the metadata dir as a single-node dynamic quorum. Later starts:
	@# --ignore-formatted leaves it as it is (the cluster id must stay the same, hence fixed).
	$(KRAFTD) format --standalone --ignore-formatted -t $${KRAFTD_CLUSTER_ID:-MkU3OEVBNTcwNTJENDM2Qg} -c $(CONFIG)
	$(KRAFTD) start $(CONFIG)

test: fmt-check clippy unit run-smoke compat demo

fmt-check:
	$(CARGO) fmt --all -- --check

# Every target (lib, bins, tests, benches, compat), warnings as errors. clippy.toml keeps the clock,
# randomness, threads and file I/O out of src/raft; the generated src/protocol/messages allow clippy::all.
clippy:
	$(CARGO) clippy --release --all-targets $(TEST_FEATURES) -- -D warnings

# Unit, handler, protocol-vector, codec-oracle and wire-robustness tests, the fuzz bodies as property
# tests, and the snapshot writer's and reader's peak memory (a test binary of its own).
unit:
	$(CARGO) test --release $(TEST_FEATURES) --lib --test protocol_vectors --test codec_oracle --test protocol_records --test wire --test log_crash --test raft_scenarios --test raft_sim --test controller_sim --test snapshot_memory
	cd bench/raft && python3 -m unittest -q test_scrape_phases

# `make run` as a fresh checkout would do it: it must come up, answer ApiVersions on 9093 and
# serve /metrics on 9404.
# Built with the tests' features (TEST_FEATURES), which add no behaviour, to share their build.
run-smoke: BUILD_FEATURES = $(TEST_FEATURES)
run-smoke: build
	@rm -rf target/run-smoke && mkdir -p target/run-smoke
	@if python3 -c 'import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(("127.0.0.1",9093))!=0)'; then \
	  echo "run-smoke: 127.0.0.1:9093 is already in use; stop whatever listens there first"; exit 1; fi
	@# setsid: `make run` and the kraftd it starts get a process group of their own to stop.
	@setsid $(MAKE) --no-print-directory run BUILD_FEATURES="$(BUILD_FEATURES)" > target/run-smoke/make-run.log 2>&1 < /dev/null & pid=$$!; \
	  ok=0; python3 compat/api-versions-probe.py 127.0.0.1 9093 120 || ok=$$?; \
	  [ $$ok -ne 0 ] || python3 compat/metrics-probe.py 127.0.0.1:9404 || ok=$$?; \
	  kill -TERM -- -$$pid 2>/dev/null; sleep 1; kill -KILL -- -$$pid 2>/dev/null; \
	  if [ $$ok -ne 0 ]; then echo "make run did not answer ApiVersions, or its /metrics lacked a family:"; cat target/run-smoke/make-run.log; exit 1; fi; \
	  python3 -c 'import socket,sys,time; t=time.time()+10; c=lambda: socket.socket().connect_ex(("127.0.0.1",9093))==0; \
	    [time.sleep(0.1) for _ in iter(lambda: c() and time.time()<t, False)]; sys.exit(1 if c() else 0)' \
	    || { echo "run-smoke: kraftd still listens on 9093 after make run was stopped"; exit 1; }

compat-deps:
	compat/resolve-kafka

# A new user's first five minutes (demo/demo.sh): its own ports (29093, 29092) and target/demo,
# so it never meets `make run` or run-smoke on 9093 nor touches ./data.
.PHONY: demo
demo: BUILD_FEATURES = $(TEST_FEATURES)
demo: build
	KRAFTD=$(KRAFTD) demo/demo.sh

# Real Apache Kafka against kraftd. Never skipped: a missing Java or Kafka fails the run.
compat: compat-deps
	$(CARGO) test --release $(TEST_FEATURES) --test compat -- --test-threads=$(COMPAT_THREADS)

# Every cargo-fuzz target that fuzz/Cargo.toml declares ([[bin]] names), so a new one is run
# without being listed twice.
FUZZ_TARGETS := $(shell awk '/^\[\[bin\]\]/ {bin = 1; next} bin && /^name/ {gsub(/"/, "", $$3); print $$3; bin = 0}' fuzz/Cargo.toml)

fuzz:
	@set -e; for target in $(FUZZ_TARGETS); do \
	  echo "fuzz: $$target for $(FUZZ_SECONDS) s"; \
	  (cd fuzz && $(CARGO) +nightly fuzz run $$target -- -max_total_time=$(FUZZ_SECONDS)); \
	done

# The controller-failover scenario as a soak (compat/tests/controller_failover.rs): 3 kraftd voters
# and 3 stock brokers under the verifying workload for SOAK_MINUTES, the active controller killed
# with SIGKILL about every 30 s and restarted; every acknowledged message consumed exactly once.
SOAK_MINUTES ?= 10
.PHONY: soak-failover
soak-failover: compat-deps
	KRAFTD_SOAK_MINUTES=$(SOAK_MINUTES) $(CARGO) test --release $(TEST_FEATURES) --test compat -- \
	  controller_failover --test-threads=1 --nocapture

# Elections under repeated kill -9 (compat/tests/election_soak.rs; `make test` runs one kill): a
# 3-kraftd, a 3-Java and a 2-Java + 1-kraftd static quorum in turn, each with SOAK_KILLS kill -9s
# of whichever voter leads, the killed voter restarted 5-10 s later; fails if a kill is not
# followed by a new leader within 30 s. Prints per quorum the kills, the longest leaderless
# window, the median and p99 from kill to new leader, and writes target/bench/election_soak.json.
# About 10 s per kill; SOAK_KILLS=5 for a quick check.
SOAK_KILLS ?= 200
# SOAK_QUORUMS=kraftd,java,mixed (all three when empty) picks the quorums.
SOAK_QUORUMS ?=
.PHONY: soak-election
soak-election: compat-deps
	KRAFTD_SOAK_KILLS=$(SOAK_KILLS) KRAFTD_SOAK_QUORUMS=$(SOAK_QUORUMS) $(CARGO) test --release $(TEST_FEATURES) --test compat -- \
	  election_soak --test-threads=1 --nocapture

# The rolling replacement as a soak (compat/tests/rolling_soak.rs): every Java controller of a
# live cluster replaced by kraftd and back, in a loop for SOAK_MINUTES, with kill -9s of any
# controller (between steps and within them) and voter 3, in a network namespace of its own, cut
# off for 10-20 s; checks after every fault, exactly once and equal images at the end. Prints the
# seed of its random draws; SOAK_SEED=<n> replays them. Needs root (ip netns). `make test` runs
# one loop of it.
SOAK_SEED ?=
.PHONY: soak
soak: compat-deps
	KRAFTD_SOAK_MINUTES=$(SOAK_MINUTES) KRAFTD_SOAK_SEED=$(SOAK_SEED) $(CARGO) test --release \
	  $(TEST_FEATURES) --test compat -- rolling_soak --test-threads=1 --nocapture

# The seeded raft simulation (tests/raft_sim.rs): `make sim SEEDS=100000`. A failing seed prints
# the command that replays it.
SEEDS ?= 500
.PHONY: sim sim-controller
sim:
	SIM_SEEDS=$(SEEDS) $(CARGO) test --release $(TEST_FEATURES) --test raft_sim -- --nocapture

# The same simulation with the metadata controller as every node's replicated machine
# (tests/controller_sim.rs): `make sim-controller SEEDS=100000`.
sim-controller:
	SIM_SEEDS=$(SEEDS) $(CARGO) test --release $(TEST_FEATURES) --test controller_sim -- --nocapture

codegen:
	codegen/run.sh

# Kafka 4.4's own image of a metadata log, as canonical JSON (compat/image-dumper/FORMAT.md):
# `make image-dump DIR=<...>/__cluster_metadata-0 [AT=offset] [SNAPSHOT=<file>.checkpoint]`.
IMAGE_DUMPER_CLASSES := target/compat/image-dumper-classes
.PHONY: image-dump image-dumper-deps
# compat-deps, quietly: stdout carries only the JSON.
image-dumper-deps:
	@compat/resolve-kafka > /dev/null
$(IMAGE_DUMPER_CLASSES)/ImageDumper.class: compat/image-dumper/*.java | image-dumper-deps
	@rm -rf $(IMAGE_DUMPER_CLASSES) && mkdir -p $(IMAGE_DUMPER_CLASSES)
	javac -Xlint:all -Werror -encoding UTF-8 -d $(IMAGE_DUMPER_CLASSES) \
	  -cp "$$(cat target/compat/kafka-$(KAFKA_VERSION)/classpath.txt)" compat/image-dumper/*.java
image-dump: image-dumper-deps $(IMAGE_DUMPER_CLASSES)/ImageDumper.class
	@if [ -z "$(DIR)$(SNAPSHOT)" ]; then echo "usage: make image-dump DIR=<__cluster_metadata-0 dir> [AT=offset] [SNAPSHOT=file.checkpoint]"; exit 2; fi
	@java -Xmx2g -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
	  -Dlog4j2.configurationFile=target/compat/kafka-$(KAFKA_VERSION)/log4j2-tools.properties \
	  -cp "$(IMAGE_DUMPER_CLASSES):$$(cat target/compat/kafka-$(KAFKA_VERSION)/classpath.txt)" \
	  ImageDumper $(DIR) $(if $(AT),--at $(AT)) $(if $(SNAPSHOT),--snapshot $(SNAPSHOT))

vectors:
	protocol-tests/capture/capture.sh

# Benchmarks, each side by side with Java Kafka in one run and reported as ratios; never a timed test.
# `bench-storage`: kraftd's metadata log against Kafka's own KafkaRaftLog (target/bench/storage.json).
#   Knobs: BENCH_RECOVERY_MB (1024), BENCH_REPEAT (1), BENCH_BATCHES_1, BENCH_BATCHES_100, BENCH_MAX_SECS,
#   BENCH_DIR (target/bench/data); see bench/storage.rs.
# `bench-raft`: a 3-voter kraftd quorum (`kraftd test-raft-server`) against Kafka's kafka.tools.TestRaftServer:
#   commit latency p50/p99/p99.9 and committed records/s, 256-byte records, linger 0 and 25 ms
#   (target/bench/raft.json). Knobs: RAFT_BENCH_DURATION_S (30), RAFT_BENCH_WARMUP_S (10),
#   RAFT_BENCH_THROUGHPUT (5000), RAFT_BENCH_LINGERS (0,25), RAFT_BENCH_REPEAT (1); see bench/raft/README.md.
#   Then the same over mutual TLS (both quorums' CONTROLLER listeners on SSL, ssl.client.auth=required,
#   stores made once per run by bench/pki.py): target/bench/raft-tls.json and a "tls" section in raft.json
#   (kraftd/Java over TLS, TLS/PLAINTEXT per implementation). RAFT_BENCH_TRANSPORTS (plaintext,mtls)
#   picks the runs; RAFT_BENCH_TLS_LINGERS (RAFT_BENCH_LINGERS, else 0,25) and RAFT_BENCH_TLS_SATURATION
#   (empty: no saturation sweep over TLS) size the TLS run. RAFT_BENCH_SCRAPE (1): the PLAINTEXT run
#   ends with W1 under 1 s Prometheus scrapes, per implementation 1 record in flight and its saturation
#   window, RAFT_BENCH_SCRAPE_S (300; the saturation window RAFT_BENCH_SCRAPE_SATURATED_S, 200: Java's fills ~55 GB) measured
#   in alternate scraped and unscraped RAFT_BENCH_SCRAPE_PHASE_S (5) phases ("scrape" in raft.json).
# `bench-image`: the metadata image at scale (target/bench/image.json): a synthesized log of
#   IMAGE_BENCH_TOPICS (1000) x IMAGE_BENCH_PARTITIONS (1000) partitions x IMAGE_BENCH_REPLICAS (3),
#   replayed, written as a snapshot and loaded back by kraftd, and the same snapshot and log loaded by
#   Java's image dumper, each step one process under /usr/bin/time -v (wall time, peak RSS).
#   Knobs: IMAGE_DUMPER_SOURCES (compat/image-dumper), IMAGE_BENCH_JAVA_OPTS (-Xmx4g); see bench/image/image_bench.py.
#   IMAGE_BENCH_SIZES (10x1000,100x1000: topics x partitions) runs smaller images first, one
#   target/bench/image-<partitions>.json each, for RSS against partitions.
# `bench-snapshot`: the raft loop's stall while the full image is written as a snapshot (issue #10,
#   target/bench/snapshot.json): a synthesized log of SNAPSHOT_BENCH_TOPICS (1000) x
#   SNAPSHOT_BENCH_PARTITIONS (1000) partitions x SNAPSHOT_BENCH_REPLICAS (3) under a single-node
#   `kraftd start` and Java's kafka.Kafka controller, one after the other, each snapshotting by time
#   (SNAPSHOT_BENCH_INTERVAL_S, 60; or by bytes with SNAPSHOT_BENCH_MAX_BYTES) with NoOps every
#   SNAPSHOT_BENCH_IDLE_MS (50); a DescribeQuorum probe every SNAPSHOT_BENCH_PROBE_MS (5) gives the RTT
#   p50/p99/max and high-watermark gaps in the SNAPSHOT_BENCH_BASELINE_S (10) before the snapshot, while
#   it is written, and the SNAPSHOT_BENCH_AFTER_S (10) after; plus snapshot wall time, bytes, kraftd's
#   raft-loop time (open + freeze), CPU and RSS. Knobs also: SNAPSHOT_BENCH_IMPLS (java,kraftd),
#   SNAPSHOT_BENCH_QUIET_CPU (0.2), SNAPSHOT_BENCH_TIMEOUT_S (900), SNAPSHOT_BENCH_JAVA_OPTS (-Xmx6g, G1),
#   SNAPSHOT_BENCH_DIR (target/bench/snapshot), SNAPSHOT_BENCH_KEEP=1 keeps the data directories;
#   see bench/snapshot/snapshot_bench.py. Quick run: SNAPSHOT_BENCH_TOPICS=100 SNAPSHOT_BENCH_PARTITIONS=100.
# `bench-failover`: the active controller of a 3-kraftd, a 3-Java and a 2-Java + 1-kraftd static
#   quorum killed FAILOVER_KILLS (20) times each, at a random point of its cycle: time until a new
#   leader, until its first commit, each follower's first pre-vote, and who wins the mixed
#   quorum's elections; then the leader of the 3-kraftd and the 3-Java quorum stopped with SIGTERM
#   FAILOVER_KILLS times each (target/bench/failover.json; compat/tests/failover_bench.rs). Each
#   quorum first gets FAILOVER_PARTITIONS (100,000) partitions on 3 simulated brokers.
# `bench-controller`: the controller's own work under load from the generator in bench/load, on a
#   3-kraftd and a 3-Java quorum in one run (compat/tests/controller_bench/mod.rs; target/bench/controller.json
#   with kraftd/Java ratios): W2, a CreateTopics storm of CONTROLLER_BENCH_TOPICS (10000) x 10 partitions,
#   RF 3, on 3 simulated brokers (wall time, records/s); AlterPartition churn, ISR shrink/expand from
#   their leaders over 1000 partitions for 60 s (records/s, p50/p99); W3, CONTROLLER_BENCH_BROKERS (1000)
#   simulated brokers registering, then heartbeating every 2 s for CONTROLLER_BENCH_SECONDS (300), on
#   a quorum of its own (heartbeat p99, CPU and RSS of each controller, the generator's CPU, spurious
#   fencings). QUICK=1: 1000 topics, 300 partitions for 20 s, 300 brokers for 60 s. Other knobs:
#   KRAFTD_LOAD_* (bench/load/README.md). Java runs with the JVM options of Kafka's start scripts.
#   CONTROLLER_BENCH_TRANSPORT (both; or plaintext, mtls): W3 once more per implementation on a quorum
#   whose controller listeners are SSL with client certificates required, the fleet dialling over
#   mutual TLS (figures "w3_tls" in controller.json, beside PLAINTEXT's, with ratios).
#   CONTROLLER_BENCH_SCRAPE (1): W3 once more per implementation on a quorum serving Prometheus metrics,
#   scraped once a second in alternate 5 s phases of its window ("w3_scraped": scraped/unscraped ratios),
#   then scraped every 100 ms in alternate phases for 120 s (each controller's CPU per scrape).
# `bench-tls`: the cost of a mutual-TLS connection (compat/tests/tls_bench.rs; target/bench/tls.json):
#   a single-node kraftd and a single-node Java controller, same PKCS12 stores, SSL listener with
#   ssl.client.auth=required: (a) TCP connect to the first ApiVersions answer over a new connection,
#   p50/p99 over TLS_BENCH_CONNECTIONS (2000, after 1000 unmeasured); (b) the controller pinned to
#   core 0 and TLS_BENCH_CONCURRENCY (8) client threads on core 1 opening full-handshake connections
#   (ApiVersions, close) for TLS_BENCH_SECONDS (20): connections/s, the controller's CPU per
#   connection and whether its core was saturated. QUICK=1: 300 connections, 5 s.
#
# `make bench`: every bench above plus `bench-floor` (the physical floor: fdatasync of the data dir,
#   loopback RTT, the 3-voter commit floor; target/bench/floor.json; knobs in bench/floor.rs), one at
#   a time, then `bench-report`; a failed bench does not stop the others (the report says
#   "not measured in this run"), but `make bench` fails at the end. Step times: target/bench/run.json.
# `make bench-quick` (= BENCH_QUICK=1 make bench): every bench at small sizes, about 15 minutes.
#   Any knob set on the command line or in the environment still wins.
# `make bench-report`: docs/performance.md and docs/performance/*.png from the target/bench/*.json
#   present (bench/report.py, matplotlib in a venv under target/bench-venv).
# Quick mode's sizes, each where the command line and the environment leave the knob unset
# (QUICK=1: bench-controller's quick sizes).
BENCH_QUICK_KNOBS := QUICK=1 FAILOVER_KILLS=2 FAILOVER_PARTITIONS=10000 FLOOR_SYNCS=300 FLOOR_PINGS=3000 \
  BENCH_RECOVERY_MB=64 BENCH_BATCHES_1=2000 BENCH_BATCHES_100=200 BENCH_WARMUP_1=200 \
  BENCH_WARMUP_100=20 BENCH_MAX_SECS=5 \
  RAFT_BENCH_DURATION_S=5 RAFT_BENCH_WARMUP_S=4 RAFT_BENCH_CLOSED_LINGERS=0 \
  RAFT_BENCH_SATURATION=1024,16384 \
  IMAGE_BENCH_TOPICS=100 IMAGE_BENCH_PARTITIONS=1000 IMAGE_BENCH_SIZES=10x100,100x100 \
  SNAPSHOT_BENCH_TOPICS=100 SNAPSHOT_BENCH_PARTITIONS=100 SNAPSHOT_BENCH_INTERVAL_S=10 \
  SNAPSHOT_BENCH_BASELINE_S=3 SNAPSHOT_BENCH_AFTER_S=3 RAFT_BENCH_TLS_LINGERS=0 RAFT_BENCH_SCRAPE_S=20 \
  RAFT_BENCH_SCRAPE_SATURATED_S=20
ifeq ($(BENCH_QUICK),1)
$(foreach knob,$(BENCH_QUICK_KNOBS),$(eval export $(subst =, ?= ,$(knob))))
endif
FAILOVER_KILLS ?= 20
FAILOVER_PARTITIONS ?= 100000
CONTROLLER_BENCH_JAVA_OPTS ?= -Xmx1G -Xms1G -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
  -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 \
  -Djava.awt.headless=true
IMAGE_BENCH_TOPICS ?= 1000
IMAGE_BENCH_PARTITIONS ?= 1000
IMAGE_BENCH_SIZES ?= 10x1000,100x1000
# In this order, one at a time (each side by side with Java).
BENCH_STEPS ?= bench-floor bench-storage bench-raft bench-image bench-snapshot bench-failover \
  bench-controller bench-tls bench-scrape
comma := ,
BENCH_VENV := $(or $(CARGO_TARGET_DIR),target)/bench-venv
.PHONY: bench bench-quick bench-report bench-profile bench-floor bench-storage bench-raft bench-image bench-snapshot bench-failover bench-scrape \
  bench-controller bench-tls
bench bench-profile bench-image bench-raft bench-snapshot bench-scrape: BUILD_FEATURES = $(TEST_FEATURES)
bench: build
	@# The recipe runs sub-makes, so `make -n` would run it too: only say what it would do.
	@$(if $(findstring n,$(firstword -$(MAKEFLAGS))),echo "make bench: $(BENCH_STEPS) then bench-report"; exit 0;) \
	mkdir -p target/bench; start=$$(date +%s); failed=""; steps=""; \
	git=$$(git rev-parse --short HEAD)$$(git status --porcelain | grep -qv ' docs/performance' && echo ' (with uncommitted changes)'); \
	for step in $(BENCH_STEPS); do \
	  t0=$$(date +%s); status=ok; \
	  $(MAKE) --no-print-directory $$step || { status=failed; failed="$$failed $$step"; }; \
	  steps="$$steps$${steps:+,}{\"step\":\"$$step\",\"seconds\":$$(( $$(date +%s) - t0 )),\"status\":\"$$status\"}"; \
	done; \
	echo "{\"quick\":$(if $(filter 1,$(BENCH_QUICK)),true,false),\"started_unix\":$$start,\"git_commit\":\"$$git\",\"seconds\":$$(( $$(date +%s) - start )),\"steps\":[$$steps]}" > target/bench/run.json; \
	$(MAKE) --no-print-directory bench-report || failed="$$failed bench-report"; \
	echo "make bench: $$(( $$(date +%s) - start )) s$${failed:+; failed:$$failed}"; test -z "$$failed"

bench-quick:
	@$(MAKE) --no-print-directory bench BENCH_QUICK=1

$(BENCH_VENV)/.matplotlib:
	python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install --quiet --disable-pip-version-check matplotlib
	@touch $@

bench-report: $(BENCH_VENV)/.matplotlib
	$(BENCH_VENV)/bin/python bench/report.py

bench-floor:
	$(CARGO) bench $(TEST_FEATURES) --bench floor

# One Prometheus scrape's CPU at 100,000 partitions (bench/scrape.rs): target/bench/scrape.json.
bench-scrape:
	$(CARGO) bench $(TEST_FEATURES) --bench scrape

bench-controller: compat-deps
	KRAFTD_LOAD_SIZE=$(if $(QUICK),quick,full) \
	  $(if $(CONTROLLER_BENCH_TOPICS),KRAFTD_LOAD_W2_TOPICS=$(CONTROLLER_BENCH_TOPICS)) \
	  $(if $(CONTROLLER_BENCH_BROKERS),KRAFTD_LOAD_W3_BROKERS=$(CONTROLLER_BENCH_BROKERS)) \
	  $(if $(CONTROLLER_BENCH_SECONDS),KRAFTD_LOAD_W3_SECONDS=$(CONTROLLER_BENCH_SECONDS)) \
	  KRAFTD_LOAD_TRANSPORT=$(CONTROLLER_BENCH_TRANSPORT) KRAFTD_LOAD_SCRAPE=$(CONTROLLER_BENCH_SCRAPE) \
	  KRAFTD_BENCH_JAVA_OPTS="$(CONTROLLER_BENCH_JAVA_OPTS)" \
	  $(CARGO) test --release $(TEST_FEATURES) --test compat -- controller_load --test-threads=1 --nocapture

bench-tls: compat-deps
	KRAFTD_TLS_BENCH=$(if $(QUICK),quick,full) \
	  $(if $(TLS_BENCH_CONNECTIONS),KRAFTD_TLS_BENCH_CONNECTIONS=$(TLS_BENCH_CONNECTIONS)) \
	  $(if $(TLS_BENCH_SECONDS),KRAFTD_TLS_BENCH_SECONDS=$(TLS_BENCH_SECONDS)) \
	  $(if $(TLS_BENCH_CONCURRENCY),KRAFTD_TLS_BENCH_CONCURRENCY=$(TLS_BENCH_CONCURRENCY)) \
	  KRAFTD_BENCH_JAVA_OPTS="$(CONTROLLER_BENCH_JAVA_OPTS)" \
	  $(CARGO) test --release $(TEST_FEATURES) --test compat -- tls_bench --test-threads=1 --nocapture

# `bench-profile`: perf profiles of kraftd where it misses a goal (bench/profile.sh;
#   target/bench/profiles/*.txt): loading the image bench's snapshot, and the 3 controllers through
#   bench-controller's quick workloads. Not part of `make bench` (perf slows what it watches).
bench-profile: compat-deps build
	$(CARGO) build --release $(TEST_FEATURES) --example synth_metadata_log
	bench/profile.sh

bench-failover: compat-deps
	KRAFTD_FAILOVER_KILLS=$(FAILOVER_KILLS) KRAFTD_FAILOVER_PARTITIONS=$(FAILOVER_PARTITIONS) $(CARGO) test --release $(TEST_FEATURES) --test compat -- \
	  failover_bench --test-threads=1 --nocapture

bench-storage: compat-deps
	@mkdir -p target/bench/java-classes
	javac -nowarn -d target/bench/java-classes -cp "$$(cat target/compat/kafka-$(KAFKA_VERSION)/classpath.txt)" bench/java/StorageBench.java
	BENCH_JAVA_CP="$(CURDIR)/target/bench/java-classes:$$(cat target/compat/kafka-$(KAFKA_VERSION)/classpath.txt)" \
	  BENCH_JAVA_LOG4J="$(CURDIR)/target/compat/kafka-$(KAFKA_VERSION)/log4j2-tools.properties" \
	  $(CARGO) bench $(TEST_FEATURES) --bench storage

IMAGE_DUMPER_SOURCES ?= compat/image-dumper
bench-image: compat-deps build
	@mkdir -p target/bench/image-dumper
	javac -nowarn -encoding UTF-8 -d target/bench/image-dumper -cp "$$(cat target/compat/kafka-$(KAFKA_VERSION)/classpath.txt)" $(IMAGE_DUMPER_SOURCES)/*.java bench/image/LoadImage.java
	$(CARGO) build --release $(TEST_FEATURES) --example synth_metadata_log
	@# IMAGE_BENCH_SIZES: the smaller images first, one image-<partitions>.json each (RSS against
	@# partitions in the report); image.json is the run at IMAGE_BENCH_TOPICS x IMAGE_BENCH_PARTITIONS.
	@set -e; for size in $(subst $(comma), ,$(IMAGE_BENCH_SIZES)) $(IMAGE_BENCH_TOPICS)x$(IMAGE_BENCH_PARTITIONS); do \
	  topics=$${size%x*}; parts=$${size#*x}; \
	  out=$$([ $$size = $(IMAGE_BENCH_TOPICS)x$(IMAGE_BENCH_PARTITIONS) ] && echo image.json || echo image-$$((topics * parts)).json); \
	  echo "bench-image: $$topics topics x $$parts partitions -> target/bench/$$out"; \
	  IMAGE_BENCH_TOPICS=$$topics IMAGE_BENCH_PARTITIONS=$$parts IMAGE_BENCH_JSON=$$out \
	  BENCH_JAVA_CP="$(CURDIR)/target/bench/image-dumper:$$(cat target/compat/kafka-$(KAFKA_VERSION)/classpath.txt)" \
	  BENCH_JAVA_LOG4J="$(CURDIR)/target/compat/kafka-$(KAFKA_VERSION)/log4j2-tools.properties" \
	  KRAFTD=$(abspath $(KRAFTD)) SYNTH=$(abspath $(or $(CARGO_TARGET_DIR),target)/release/examples/synth_metadata_log) \
	  python3 bench/image/image_bench.py; \
	done

RAFT_BENCH_TRANSPORTS ?= plaintext,mtls
RAFT_BENCH_TLS_LINGERS ?= $(or $(RAFT_BENCH_LINGERS),0$(comma)25)
RAFT_BENCH_TLS_SATURATION ?=
CONTROLLER_BENCH_TRANSPORT ?= both
CONTROLLER_BENCH_SCRAPE ?= 1
RAFT_BENCH_SCRAPE ?= 1
# PLAINTEXT first (it writes raft.json), then mutual TLS (raft-tls.json, and its figures into raft.json);
# a failed run does not stop the other, the step fails at the end.
bench-raft: compat-deps build
	@export BENCH_JAVA_CP="$$(cat target/compat/kafka-$(KAFKA_VERSION)/classpath.txt)" KRAFTD=$(abspath $(KRAFTD)) \
	  BENCH_JMX_AGENT="$$(cat target/compat/kafka-$(KAFKA_VERSION)/jmx-exporter-agent.txt)"; status=0; \
	$(if $(filter plaintext,$(subst $(comma), ,$(RAFT_BENCH_TRANSPORTS))),python3 bench/raft/raft_bench.py --scrape $(RAFT_BENCH_SCRAPE) || status=1;) \
	$(if $(filter mtls,$(subst $(comma), ,$(RAFT_BENCH_TRANSPORTS))),python3 bench/raft/raft_bench.py --transport mtls \
	  --lingers "$(RAFT_BENCH_TLS_LINGERS)" --saturation "$(RAFT_BENCH_TLS_SATURATION)" || status=1;) \
	exit $$status

bench-snapshot: compat-deps build
	$(CARGO) build --release $(TEST_FEATURES) --example synth_metadata_log
	BENCH_JAVA_CP="$$(cat target/compat/kafka-$(KAFKA_VERSION)/classpath.txt)" \
	  BENCH_JAVA_TOOLS_LOG4J="$(CURDIR)/target/compat/kafka-$(KAFKA_VERSION)/log4j2-tools.properties" \
	  KRAFTD=$(abspath $(KRAFTD)) SYNTH=$(abspath $(or $(CARGO_TARGET_DIR),target)/release/examples/synth_metadata_log) \
	  python3 bench/snapshot/snapshot_bench.py
