#!/usr/bin/env bash
# End-to-end cost of one `gpuadvisor recommend --model 10B --budget 3000`: process start, loading
# the embedded data, the search and the output. Prints the median and spread of the wall time
# (bash's $EPOCHREALTIME around the run, microsecond resolution) and the maximum resident set
# size reported by `/usr/bin/time -v`, each over RUNS runs (docs/performance.md).
# Usage: tests/bench/e2e.sh [BINARY] [RUNS]   (defaults: build-bench/gpuadvisor, 50)
set -euo pipefail
bin=${1:-build-bench/gpuadvisor}
runs=${2:-50}
args=(recommend --model 10B --budget 3000)
[ -x "$bin" ] || { echo "e2e.sh: no executable at $bin (build it first)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "e2e.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
export NO_COLOR=1 COLUMNS=100
unset GPUADVISOR_CATALOG
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" "${args[@]}" >/dev/null  # warm the page cache

# Wall time, the binary alone.
: >"$tmp/wall"
for _ in $(seq "$runs"); do
  t0=$EPOCHREALTIME
  "$bin" "${args[@]}" >/dev/null
  t1=$EPOCHREALTIME
  echo "$t0 $t1" | awk '{printf "%.3f\n", ($2 - $1) * 1000}' >>"$tmp/wall"
done

# Peak RSS and /usr/bin/time's own view of the wall time.
: >"$tmp/rss"
: >"$tmp/twall"
for _ in $(seq "$runs"); do
  /usr/bin/time -v "$bin" "${args[@]}" >/dev/null 2>"$tmp/v"
  awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/v" >>"$tmp/rss"
  awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); print p[n] * 1000}' "$tmp/v" >>"$tmp/twall"
done

stats() {  # min median p90 max of a column of numbers
  sort -n "$1" | awk '{v[NR] = $1} END {printf "min %s  median %s  p90 %s  max %s", v[1], v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.5)], v[NR]}'
}
echo "gpuadvisor ${args[*]}  ($runs runs, $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
echo "wall ms (EPOCHREALTIME):      $(stats "$tmp/wall")"
echo "wall ms (/usr/bin/time -v):   $(stats "$tmp/twall")   (10 ms resolution)"
echo "max RSS KiB (/usr/bin/time):  $(stats "$tmp/rss")"
