#!/usr/bin/env bash
# End-to-end cost of one `gpuadvisor recommend --model 10B --budget 3000`: process start, loading
# the embedded data, the search and the output; and the rate of `memory --batch-file` over a
# generated file of workloads (docs/performance.md). Prints, over RUNS runs:
#   - the wall time (bash's $EPOCHREALTIME around the run, microsecond resolution): median, spread;
#   - the CPU time (user + sys) of the process: `perf stat` task-clock when perf works, else the
#     user and system times of /usr/bin/time -v (10 ms resolution). On a shared machine the CPU
#     time is the figure to trust: the wall time grows with the load, the CPU time hardly does;
#   - the maximum resident set size reported by `/usr/bin/time -v`;
#   - batch lines per CPU second (user + sys) of `memory --batch-file` over BATCH_LINES lines.
# Usage: tests/bench/e2e.sh [BINARY] [RUNS] [BATCH_LINES]   (defaults: build-bench/gpuadvisor, 50, 20000)
set -euo pipefail
bin=${1:-build-bench/gpuadvisor}
runs=${2:-50}
batch_lines=${3:-20000}
args=(recommend --model 10B --budget 3000)
[ -x "$bin" ] || { echo "e2e.sh: no executable at $bin (build it first)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "e2e.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
export NO_COLOR=1 COLUMNS=100
unset GPUADVISOR_CATALOG
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" "${args[@]}" >/dev/null  # warm the page cache

stats() {  # min median p90 max of a column of numbers
  sort -n "$1" | awk '{v[NR] = $1} END {printf "min %s  median %s  p90 %s  max %s", v[1], v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.5)], v[NR]}'
}

# Wall time, the binary alone.
: >"$tmp/wall"
for _ in $(seq "$runs"); do
  t0=$EPOCHREALTIME
  "$bin" "${args[@]}" >/dev/null
  t1=$EPOCHREALTIME
  echo "$t0 $t1" | awk '{printf "%.3f\n", ($2 - $1) * 1000}' >>"$tmp/wall"
done

# Peak RSS, CPU time and /usr/bin/time's own view of the wall time.
: >"$tmp/rss"
: >"$tmp/twall"
: >"$tmp/tcpu"
for _ in $(seq "$runs"); do
  /usr/bin/time -v "$bin" "${args[@]}" >/dev/null 2>"$tmp/v"
  awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/v" >>"$tmp/rss"
  awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); print p[n] * 1000}' "$tmp/v" >>"$tmp/twall"
  awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print (u + s) * 1000}' "$tmp/v" >>"$tmp/tcpu"
done

echo "gpuadvisor ${args[*]}  ($runs runs, $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg))"
echo "wall ms (EPOCHREALTIME):      $(stats "$tmp/wall")"
if perf stat -x, -e task-clock -r "$runs" -o "$tmp/perf" "$bin" "${args[@]}" >/dev/null 2>&1; then
  echo "CPU ms (perf task-clock):     mean $(awk -F, '/task-clock/ {printf "%.2f", $1}' "$tmp/perf")  (user + sys, $runs runs)"
fi
echo "CPU ms (/usr/bin/time -v):    $(stats "$tmp/tcpu")   (user + sys, 10 ms resolution)"
echo "wall ms (/usr/bin/time -v):   $(stats "$tmp/twall")   (10 ms resolution)"
echo "max RSS KiB (/usr/bin/time):  $(stats "$tmp/rss")"

# Batch: a fixed mix of workloads (presets and sizes, all tasks, half of them on a GPU, so that
# the largest batch and context are searched too), generated without randomness.
models=(llama-3.1-8b 10B mistral-7b 70B 1.5B qwen2.5-32b 350M 13B)
tasks=(inference train lora qlora inference)
gpus=(rtx-4090 h100-sxm a100-80gb-sxm l40s)
for i in $(seq 0 $((batch_lines - 1))); do
  line="{\"model\": \"${models[i % 8]}\", \"task\": \"${tasks[i % 5]}\", \"batch\": $((1 << (i % 6))), \"seq_len\": $((512 << (i % 4)))"
  [ $((i % 2)) = 0 ] && line+=", \"gpu\": \"${gpus[i / 2 % 4]}\""
  echo "$line}"
done >"$tmp/lines.jsonl"
for variant in all nogpu; do
  file=$tmp/lines.jsonl
  if [ $variant = nogpu ]; then grep -v '"gpu"' "$tmp/lines.jsonl" >"$tmp/nogpu.jsonl"; file=$tmp/nogpu.jsonl; fi
  n=$(wc -l <"$file")
  /usr/bin/time -f "%U %S %e" -o "$tmp/bt" "$bin" memory --batch-file "$file" >"$tmp/out.jsonl" || true
  read -r u s e < <(tail -n 1 "$tmp/bt")
  awk -v n="$n" -v u="$u" -v s="$s" -v e="$e" -v what="$variant" 'BEGIN {
    label = what == "all" ? "memory --batch-file, half on a GPU:" : "memory --batch-file, no GPU:      ";
    printf "%s %d lines, %.2f s CPU (user + sys), %.2f s wall: %.0f lines per CPU second\n", label, n, u + s, e, n / (u + s) }'
done
