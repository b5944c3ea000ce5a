#!/usr/bin/env bash
# `make bench-profile`: where kraftd spends its CPU in the workloads whose goals it misses
# (issue #14), as perf profiles in target/bench/profiles/:
#   snapshot-load.txt  `kraftd metadata-state` loading the image bench's snapshot (W5, W6)
#   controller.txt     the 3 kraftd controllers through bench-controller's quick W2, churn and W3
# Each .txt is `perf report` of a dwarf call-graph recording: self time by symbol, then the
# callers of the hottest. Needs perf, and the image bench's snapshot (`make bench-image`).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
kraftd=$(realpath "$target/release/kraftd")
out=$target/bench/profiles
snapshot=$target/bench/image/snapshot
mkdir -p "$out"
command -v perf >/dev/null || { echo "bench-profile: perf is not installed" >&2; exit 1; }

report() { # <perf.data> <title> <txt>
  { echo "# $2"; echo "# $(date -u '+%F %T UTC'), commit $(git rev-parse --short HEAD)"; echo
    perf report -i "$1" --stdio --no-children --sort symbol --percent-limit 1.5 -g none 2>/dev/null | grep -v '^$'
    echo; echo "# callers of the hottest symbols (self time)"
    perf report -i "$1" --stdio --no-children --sort symbol --percent-limit 4 \
      -g caller,0.5,callee,function,percent --max-stack 12 2>/dev/null | grep -v '^$' | head -400
  } >"$3"
  echo "bench-profile: wrote $3"
}

if [ -d "$snapshot" ]; then
  echo "bench-profile: kraftd loading $snapshot"
  perf record -q -F 999 --call-graph dwarf,16384 -o "$out/snapshot-load.data" -- \
    "$kraftd" metadata-state "$snapshot" >/dev/null
  report "$out/snapshot-load.data" "kraftd metadata-state: loading the image bench's snapshot" \
    "$out/snapshot-load.txt"
else
  echo "bench-profile: no snapshot at $snapshot (run make bench-image first); skipping its profile" >&2
  exit 1
fi

echo "bench-profile: bench-controller quick, kraftd only, profiling its 3 controllers"
KRAFTD_LOAD_SIZE=quick KRAFTD_LOAD_IMPLS=kraftd KRAFTD_LOAD_W3_FRESH=0 \
  cargo test --release --test compat -- controller_load --test-threads=1 --nocapture \
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
