#!/usr/bin/env bash
# `make bench-profile`: where kraftd spends its CPU in the workloads whose goals it misses
# (issue #14), as perf profiles in target/bench/profiles/:
#   snapshot-load.txt  `kraftd metadata-state` loading a snapshot of 1,000 topics x 1,000
#                      partitions (the image bench's size; W5, W6)
#   controller.txt     the 3 kraftd controllers through bench-controller's quick W2, churn and W3
# Each .txt is `perf report` of a dwarf call-graph recording: self time by symbol, then the
# callers of the hottest. Needs perf.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
kraftd=$(realpath "$target/release/kraftd")
out=$target/bench/profiles
work=$target/bench/profile-image
mkdir -p "$out"
command -v perf >/dev/null || { echo "bench-profile: perf is not installed" >&2; exit 1; }

report() { # <perf.data> <title> <txt>
  { echo "# $2"; echo "# $(date -u '+%F %T UTC'), commit $(git rev-parse --short HEAD)"; echo
    perf report -i "$1" --stdio --no-children --sort symbol --percent-limit 1.5 -g none 2>/dev/null | grep -v '^$'
    echo; echo "# callers of the hottest symbols (self time)"
    perf report -i "$1" --stdio --no-children --sort symbol --percent-limit 4 \
      -g caller,0.5,callee,function,percent --max-stack 12 2>/dev/null | grep -v "^$"
  } >"$3"
  echo "bench-profile: wrote $3"
}

rm -rf "$work"
"$target/release/examples/synth_metadata_log" "$work/log" 1000 1000 3 >/dev/null
"$kraftd" metadata-state "$work/log" --write-snapshot "$work/snapshot" >/dev/null
echo "bench-profile: kraftd loading the snapshot in $work/snapshot"
perf record -q -F 999 --call-graph dwarf,16384 -o "$out/snapshot-load.data" -- \
  "$kraftd" metadata-state "$work/snapshot" >/dev/null
report "$out/snapshot-load.data" "kraftd metadata-state: loading a snapshot of 1,000,000 partitions" \
  "$out/snapshot-load.txt"
rm -rf "$work"

echo "bench-profile: bench-controller quick, kraftd only, profiling its 3 controllers"
KRAFTD_LOAD_SIZE=quick KRAFTD_LOAD_IMPLS=kraftd KRAFTD_LOAD_W3_FRESH=0 \
  KRAFTD_LOAD_JSON=profiles/controller.json \
  cargo test --release --features testkit --test compat -- controller_load --test-threads=1 --nocapture \
  >"$out/controller-run.log" 2>&1 &
run=$!
pids=""
for _ in $(seq 600); do
  pids=$(pgrep -d, -f "^$kraftd start" || true)
  [ "$(echo "$pids" | tr ',' '\n' | grep -c .)" -ge 3 ] && break
  sleep 0.5
done
[ -n "$pids" ] || { echo "bench-profile: the controllers never started" >&2; kill $run; exit 1; }
perf record -q -F 199 --call-graph dwarf,8192 -p "$pids" -o "$out/controller.data" &
rec=$!
wait $run || { echo "bench-profile: the controller run failed (see $out/controller-run.log)" >&2; }
kill -INT $rec 2>/dev/null || true
wait $rec || true
report "$out/controller.data" "3 kraftd controllers through quick W2 (CreateTopics), churn and W3 (heartbeats)" \
  "$out/controller.txt"
