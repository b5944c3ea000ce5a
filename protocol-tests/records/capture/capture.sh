#!/usr/bin/env bash
# Regenerates protocol-tests/records/vectors from real Apache Kafka.
#
#   protocol-tests/records/capture/capture.sh [all|built|live]     (default: all)
#
#   built  Kafka's record builders write batches (CaptureRecords.java build): deterministic
#   live   kafka-storage format --standalone writes its bootstrap checkpoint, then a real
#          single-node Java controller runs for a few seconds and its first segment is copied;
#          Kafka's reader describes both (timestamps and ids differ run to run)
#
# Environment: KAFKA_VERSION (default 4.4.0). Needs java + javac 17 and the Kafka jars
# (compat/resolve-kafka). Reads the metadata-record schema vectors in protocol-tests/vectors.
# Every process it starts is stopped on exit, by its pid.
set -euo pipefail

die() {
    echo "records/capture.sh: error: $*" >&2
    exit 1
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
vectors=$root/protocol-tests/records/vectors
kafka_version=${KAFKA_VERSION:-4.4.0}
what=${1:-all}
build=$root/target/protocol-tests/records
mkdir -p "$build"

cp_file=$(KAFKA_VERSION=$kafka_version "$root/compat/resolve-kafka")
kafka_cp=$(cat "$cp_file")
log_dir=$(dirname "$cp_file")
command -v javac >/dev/null || die "javac not found; install a Java 17 JDK"
rm -rf "$build/classes"
javac -encoding UTF-8 -d "$build/classes" -cp "$kafka_cp" "$here/CaptureRecords.java"
run_java() { java -cp "$kafka_cp:$build/classes" "$@"; }

pids=()
stop_started_processes() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_started_processes EXIT

capture_built() {
    local tmp=$build/vectors.new
    rm -rf "$tmp"
    run_java CaptureRecords build "$tmp" "$root/protocol-tests/vectors"
    # Keep the live vectors across a rebuild of the others.
    if [[ -d $vectors ]]; then
        find "$vectors" -maxdepth 1 -name 'live-*' -exec mv {} "$tmp"/ \;
        python3 - "$vectors/manifest.json" "$tmp/manifest.json" <<'EOF'
import json, sys
old, new = sys.argv[1], sys.argv[2]
try:
    live = [v for v in json.load(open(old))["vectors"] if v["name"].startswith("live-")]
except FileNotFoundError:
    live = []
m = json.load(open(new))
m["vectors"] += live
json.dump(m, open(new, "w"), indent=2)
EOF
    fi
    rm -rf "$vectors"
    mv "$tmp" "$vectors"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

capture_live() {
    [[ -f $vectors/manifest.json ]] || die "run '$0 built' first"
    local work ctrl_port log4j=()
    work=$(mktemp -d "$build/live-work.XXXXXX")
    ctrl_port=$(free_port)
    cat >"$work/server.properties" <<EOF
process.roles=controller
node.id=1
listeners=CONTROLLER://127.0.0.1:$ctrl_port
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT
controller.quorum.bootstrap.servers=127.0.0.1:$ctrl_port
log.dirs=$work/data
EOF
    [[ -f $log_dir/log4j2.properties ]] && log4j=("-Dlog4j2.configurationFile=$log_dir/log4j2.properties")
    run_java "${log4j[@]}" kafka.tools.StorageTool format --standalone -t a3JhZnRkLWdvbGRlbi12MQ \
        -c "$work/server.properties" >"$work/format.log" 2>&1 ||
        { cat "$work/format.log" >&2; die "kafka-storage format failed"; }
    local checkpoint=$work/data/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint
    [[ -f $checkpoint ]] || die "format wrote no $checkpoint"
    cp "$checkpoint" "$work/format-checkpoint.bin"

    java -Xmx512m "${log4j[@]}" -cp "$kafka_cp" kafka.Kafka "$work/server.properties" >"$work/controller.log" 2>&1 &
    local ctrl_pid=$!
    pids+=("$ctrl_pid")
    local segment=$work/data/__cluster_metadata-0/00000000000000000000.log i
    # Wait until the controller has written its bootstrap records and a few more batches.
    for i in $(seq 1 120); do
        kill -0 "$ctrl_pid" 2>/dev/null || { tail -n 40 "$work/controller.log" >&2; die "the controller exited"; }
        if [[ -f $segment ]] && (($(stat -c %s "$segment") > 2000)); then break; fi
        sleep 0.5
    done
    sleep 3
    stop_started_processes
    pids=()
    ! kill -0 "$ctrl_pid" 2>/dev/null || die "the Java controller (pid $ctrl_pid) did not stop"
    (($(stat -c %s "$segment") > 0)) || die "the controller wrote an empty segment"

    run_java CaptureRecords describe "$vectors" live-format-checkpoint "$work/format-checkpoint.bin" \
        "kafka-storage format --standalone: __cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
    run_java CaptureRecords describe "$vectors" live-controller-segment "$segment" \
        "first segment (00000000000000000000.log) of a single-node Java controller after a few seconds"
    rm -rf "$work"
}

case $what in
all) capture_built && capture_live ;;
built) capture_built ;;
live) capture_live ;;
*) die "unknown argument '$what' (all, built or live)" ;;
esac
