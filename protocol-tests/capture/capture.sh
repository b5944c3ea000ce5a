#!/usr/bin/env bash
# Regenerates protocol-tests/vectors from real Apache Kafka (the `make vectors` target).
#
#   protocol-tests/capture/capture.sh [all|schemas|live]     (default: all)
#
#   schemas  Kafka's generated classes serialize a populated instance of each message at every
#            version (CaptureVectors.java) -> vectors/<Message>/v<N>[-<variant>].{bin,json}
#   live     a real Java controller answers real Kafka tools through frame_proxy.py
#            -> vectors/live/<n>-<Api>-v<N>-{request,response}.{bin,json}
#
# Environment: KAFKA_VERSION (default 4.4.0), VECTOR_SEED (default 20260404).
# Needs java + javac 17, python3, and Maven on the first run (to resolve the Kafka jars).
# Every process it starts is stopped on exit, by its pid.
set -euo pipefail

die() {
    echo "capture.sh: error: $*" >&2
    exit 1
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
vectors=$root/protocol-tests/vectors
kafka_version=${KAFKA_VERSION:-4.4.0}
seed=${VECTOR_SEED:-20260404}
what=${1:-all}
build=$root/target/protocol-tests
mkdir -p "$build"

# The Kafka classpath: compat/resolve-kafka when present (shared cache), else Maven directly.
if [[ -x $root/compat/resolve-kafka ]]; then
    cp_file=$(KAFKA_VERSION=$kafka_version "$root/compat/resolve-kafka")
else
    cp_file=$build/classpath-$kafka_version.txt
    (cd "$root/compat" && mvn -q -B -Dkafka.version="$kafka_version" dependency:build-classpath \
        -Dmdep.includeScope=runtime -Dmdep.outputFile="$cp_file") || die "Maven could not resolve Kafka $kafka_version"
fi
kafka_cp=$(cat "$cp_file")
log_dir=$(dirname "$cp_file")

command -v javac >/dev/null || die "javac not found; install a Java 17 JDK"
rm -rf "$build/classes"
javac -encoding UTF-8 -d "$build/classes" -cp "$kafka_cp" "$here/CaptureVectors.java"
run_java() { java -cp "$kafka_cp:$build/classes" "$@"; }

capture_schemas() {
    local tmp=$build/schemas.new
    rm -rf "$tmp"
    run_java CaptureVectors schemas "$tmp" "$seed"
    # Replace every schema directory (a message dropped from the list must not linger).
    find "$vectors" -mindepth 1 -maxdepth 1 ! -name live -exec rm -rf {} + 2>/dev/null || true
    mkdir -p "$vectors"
    mv "$tmp"/* "$vectors"/
    rmdir "$tmp"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for_port() {
    local port=$1 pid=$2 i
    for i in $(seq 1 120); do
        kill -0 "$pid" 2>/dev/null || return 1
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && return 0
        sleep 0.5
    done
    return 1
}

pids=()
stop_started_processes() {
    local pid
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
}
trap stop_started_processes EXIT

capture_live() {
    local work frames ctrl_port proxy_port cluster_id tool_log
    work=$(mktemp -d "$build/live-work.XXXXXX")
    frames=$work/frames
    mkdir -p "$frames"
    ctrl_port=$(free_port)
    proxy_port=$(free_port)
    # Fixed, so the captured responses carry a known cluster id: base64url("kraftd-golden-v1").
    cluster_id=a3JhZnRkLWdvbGRlbi12MQ
    # A controller-only node. It advertises the proxy, so the tools' second connection (to the
    # node DescribeCluster names) also goes through the proxy and is captured.
    cat >"$work/server.properties" <<EOF
process.roles=controller
node.id=1
listeners=CONTROLLER://127.0.0.1:$ctrl_port
advertised.listeners=CONTROLLER://127.0.0.1:$proxy_port
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT
controller.quorum.bootstrap.servers=127.0.0.1:$ctrl_port
log.dirs=$work/data
EOF
    local server_log4j=() tool_log4j=()
    [[ -f $log_dir/log4j2.properties ]] && server_log4j=("-Dlog4j2.configurationFile=$log_dir/log4j2.properties")
    [[ -f $log_dir/log4j2-tools.properties ]] && tool_log4j=("-Dlog4j2.configurationFile=$log_dir/log4j2-tools.properties")

    run_java "${tool_log4j[@]}" kafka.tools.StorageTool format --standalone \
        -t "$cluster_id" -c "$work/server.properties" >"$work/format.log" 2>&1 ||
        { cat "$work/format.log" >&2; die "kafka-storage format failed"; }

    python3 "$here/frame_proxy.py" "$proxy_port" "127.0.0.1:$ctrl_port" "$frames" &
    pids+=($!)
    # java itself, not a shell function, so that $! is the JVM's pid and the trap can stop it.
    java -Xmx512m "${server_log4j[@]}" -cp "$kafka_cp" kafka.Kafka "$work/server.properties" >"$work/controller.log" 2>&1 &
    local ctrl_pid=$!
    pids+=("$ctrl_pid")
    wait_for_port "$ctrl_port" "$ctrl_pid" ||
        { tail -n 40 "$work/controller.log" >&2; die "the Java controller did not start listening"; }

    # The exchanges: kafka-features describe (ApiVersions + DescribeCluster + the features'
    # ApiVersions), then kafka-metadata-quorum describe --status / --replication (DescribeQuorum).
    tool_log=$work/tools.log
    local tool
    for tool in "org.apache.kafka.tools.FeatureCommand --bootstrap-controller 127.0.0.1:$proxy_port describe" \
        "org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-controller 127.0.0.1:$proxy_port describe --status" \
        "org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-controller 127.0.0.1:$proxy_port describe --replication"; do
        echo "\$ $tool" >>"$tool_log"
        # shellcheck disable=SC2086 # the tool line is split into class and arguments on purpose
        timeout 120 java -Xmx256m "${tool_log4j[@]}" -cp "$kafka_cp" $tool >>"$tool_log" 2>&1 ||
            { cat "$tool_log" >&2; die "tool failed: $tool"; }
    done
    cat "$tool_log" >&2

    stop_started_processes
    pids=()
    ! kill -0 "$ctrl_pid" 2>/dev/null || die "the Java controller (pid $ctrl_pid) did not stop"
    # Kafka's own parsers describe each frame (.json) and must re-encode it byte for byte.
    run_java CaptureVectors describe-live "$frames"
    rm -rf "$vectors/live"
    mkdir -p "$vectors"
    mv "$frames" "$vectors/live"
    rm -rf "$work"
    echo "capture.sh: $(ls "$vectors/live" | grep -c -- '-request.bin$') live exchanges in $vectors/live" >&2
}

case $what in
all) capture_schemas && capture_live ;;
schemas) capture_schemas ;;
live) capture_live ;;
*) die "unknown argument '$what' (all, schemas or live)" ;;
esac
