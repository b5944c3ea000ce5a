#!/usr/bin/env bash
# `make demo`: kraftd's first five minutes. Starts a single-node kraftd controller (the `make run`
# config, with its own ports and a data dir under target/demo, so ./data is left alone) and one
# stock Kafka broker from the pinned jars, creates a topic, produces a few messages with
# kafka-console-producer, consumes them with kafka-console-consumer, and stops everything it
# started, also on failure or Ctrl-C.
#
#   KRAFTD                 the kraftd binary (default target/release/kraftd; `make demo` builds it)
#   KAFKA_VERSION          the Kafka release of the broker and tools (default 4.4.0)
#   DEMO_CONTROLLER_PORT   kraftd's CONTROLLER listener (default 29093; `make run` uses 9093)
#   DEMO_BROKER_PORT       the broker's PLAINTEXT listener (default 29092)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

KRAFTD=${KRAFTD:-target/release/kraftd}
KAFKA_VERSION=${KAFKA_VERSION:-4.4.0}
export KAFKA_VERSION
CONTROLLER_PORT=${DEMO_CONTROLLER_PORT:-29093}
BROKER_PORT=${DEMO_BROKER_PORT:-29092}
DIR=target/demo
TOPIC=demo-greetings
MESSAGES=("hello from kraftd" "a second message" "and a third")

# Headings in bold on a terminal, plain in a log.
if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
say() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"; }
fail() {
    echo "demo: FAILED: $*" >&2
    for log in "$DIR/kraftd.log" "$DIR/broker.log"; do
        [[ -s $log ]] && { echo "--- last lines of $log:" >&2; tail -n 25 "$log" >&2; }
    done
    exit 1
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Everything started here is stopped on any exit: success, failure or Ctrl-C.
pids=()
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if ((${#pids[@]} > 0)); then
        say "stopping the broker and kraftd"
        # The broker first, then the controller. The broker asks for a controlled shutdown,
        # which kraftd grants once its leaderships have moved; anything still running after
        # 10 s is killed (its data is only this demo's).
        for pid in "${pids[@]}"; do
            kill -TERM "$pid" 2>/dev/null || continue
            for _ in $(seq 1 100); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
            kill -KILL "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        done
        echo "stopped; logs and data are in $DIR/"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[[ -x $KRAFTD ]] || fail "$KRAFTD not found; run 'make build' first (make demo does)"
for port in "$CONTROLLER_PORT" "$BROKER_PORT"; do
    port_busy "$port" && fail "127.0.0.1:$port is in use; stop what listens there or set DEMO_CONTROLLER_PORT / DEMO_BROKER_PORT"
done

say "resolving Apache Kafka $KAFKA_VERSION (jars from Maven Central, cached in target/compat/)"
classpath_file=$(compat/resolve-kafka)
CLASSPATH=$(cat "$classpath_file")
export CLASSPATH
kafka_dir=$(dirname "$classpath_file")
# The storage tool's main class moved between releases; pick the one these jars have.
storage_tool=$(grep -x -m1 -e kafka.tools.StorageTool -e org.apache.kafka.tools.StorageTool "$kafka_dir/classes.txt") ||
    fail "no StorageTool class in the Kafka $KAFKA_VERSION jars"
tool() { # tool <main class> <args...>: one of Kafka's command-line tools, warnings only on stderr
    java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
        -Dlog4j2.configurationFile="$kafka_dir/log4j2-tools.properties" "$@"
}

rm -rf "$DIR" && mkdir -p "$DIR"
cluster_id=$("$KRAFTD" random-uuid)

say "formatting and starting kraftd on 127.0.0.1:$CONTROLLER_PORT (config/controller.properties, data in $DIR/kraftd-1)"
sed -e "s#^listeners=.*#listeners=CONTROLLER://127.0.0.1:$CONTROLLER_PORT#" \
    -e "s#^controller.quorum.bootstrap.servers=.*#controller.quorum.bootstrap.servers=127.0.0.1:$CONTROLLER_PORT#" \
    -e "s#^log.dirs=.*#log.dirs=$DIR/kraftd-1#" \
    config/controller.properties >"$DIR/controller.properties"
"$KRAFTD" format --standalone -t "$cluster_id" -c "$DIR/controller.properties"
"$KRAFTD" start "$DIR/controller.properties" >"$DIR/kraftd.log" 2>&1 &
pids=($!)

say "formatting and starting a stock Kafka $KAFKA_VERSION broker on 127.0.0.1:$BROKER_PORT (log: $DIR/broker.log)"
cat >"$DIR/broker.properties" <<EOF
process.roles=broker
node.id=2
listeners=PLAINTEXT://127.0.0.1:$BROKER_PORT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
controller.quorum.bootstrap.servers=127.0.0.1:$CONTROLLER_PORT
log.dirs=$DIR/broker-2
# One broker: the internal topics cannot have the default three replicas.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
EOF
tool "$storage_tool" format -t "$cluster_id" -c "$DIR/broker.properties" >/dev/null
java -Xmx512m -XX:+UseSerialGC -Dlog4j2.configurationFile="$kafka_dir/log4j2.properties" \
    kafka.Kafka "$DIR/broker.properties" >"$DIR/broker.log" 2>&1 &
# The broker is stopped before kraftd (see cleanup).
pids=($! "${pids[@]}")

echo "waiting for the broker to register with kraftd and be unfenced..."
for _ in $(seq 1 240); do
    grep -q "Transitioning from RECOVERY to RUNNING" "$DIR/broker.log" && break
    kill -0 "${pids[0]}" 2>/dev/null || fail "the broker exited"
    kill -0 "${pids[1]}" 2>/dev/null || fail "kraftd exited"
    sleep 0.5
done
grep -q "Transitioning from RECOVERY to RUNNING" "$DIR/broker.log" || fail "the broker was not unfenced within 120 s"
echo "the broker is running"

bootstrap=127.0.0.1:$BROKER_PORT
say "kafka-topics --create --topic $TOPIC (the broker forwards CreateTopics to kraftd)"
tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" \
    --create --topic "$TOPIC" --partitions 1 --replication-factor 1
tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" --describe --topic "$TOPIC"

say "kafka-console-producer: ${#MESSAGES[@]} messages"
# Idempotent (the default): the broker gets its producer ids from kraftd.
printf '%s\n' "${MESSAGES[@]}" | tool org.apache.kafka.tools.ConsoleProducer \
    --bootstrap-server "$bootstrap" --topic "$TOPIC" \
    --producer-property acks=all
printf '  sent: %s\n' "${MESSAGES[@]}"

say "kafka-console-consumer --from-beginning"
consumed=$(tool org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$bootstrap" \
    --topic "$TOPIC" --from-beginning --max-messages "${#MESSAGES[@]}" --timeout-ms 60000)
sed 's/^/  received: /' <<<"$consumed"
[[ $consumed == "$(printf '%s\n' "${MESSAGES[@]}")" ]] ||
    fail "consumed messages differ from the ones produced"

say "done: a stock Kafka broker ran on kraftd, and messages went in and out"
