#!/usr/bin/env bash
# Runs fuzz targets for longer than the ctest smoke (docs/fuzzing.md).
# Usage: tests/fuzz/run_long.sh [SECONDS] [JOBS] [TARGET...]
#   SECONDS  per target (default 600); JOBS  targets at a time (default: nproc)
#   TARGET   names without the fuzz_ prefix (default: every fuzz_* built in BUILD)
# Environment: BUILD (default build-fuzz); MAX_LEN (default 4194304): the largest input tried, big
# enough to reach the size caps (2,000,000 JSON values are 4 MB of "[0,0,...]", 100,000 CSV
# columns or Xid lines a few MB; libFuzzer's own default is the largest seed, a few KB). FORK=1
# runs in libFuzzer's fork mode and keeps going after a finding (-ignore_crashes/-ignore_timeouts/-ignore_ooms), for a target with a finding
# that is known and not fixed yet. Each target grows its own corpus under
# $BUILD/tests/fuzz/run/long/corpus/<target> (seeded from tests/fuzz/corpus/<target>), writes
# crash/timeout/OOM reproducers to $BUILD/tests/fuzz/run/long/artifacts/<target>/ and its log to
# $BUILD/tests/fuzz/run/long/logs/<target>.log. A finding stops that target; the summary says so.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
secs=${1:-600}
jobs=${2:-$(nproc)}
shift $(($# > 2 ? 2 : $#))
build=${BUILD:-build-fuzz}
bin=$build/tests/fuzz
out=$bin/run/long
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$bin"/fuzz_*; do [ -x "$f" ] && targets+=("${f##*/fuzz_}"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "run_long.sh: no fuzz targets in $bin (build gpuadvisor_fuzzers first)" >&2; exit 2; }
declare -A dict=([catalog]=json-catalog [profile]=json-profile [hf_config]=json-hf [safetensors]=safetensors
                 [gguf]=gguf [units]=units [cli]=cli [smi_csv]=smi [xid_log]=xid [datafiles]=json-datafiles
                 [spec]=json-spec)
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export NO_COLOR=1 GPUADVISOR_TODAY=2026-11-29
run_one() {
  local t=$1
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t" "$out/logs"
  local args=(-max_total_time="$secs" -rss_limit_mb=2048 -timeout=5 -print_final_stats=1 -max_len="${MAX_LEN:-4194304}"
              -artifact_prefix="$out/artifacts/$t/")
  [ "${FORK:-0}" = 1 ] && args+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  local d=tests/fuzz/${dict[$t]:-none}.dict
  [ -f "$d" ] && args+=(-dict="$d")
  local extra=()
  [ -d tests/fuzz/regressions/$t ] && extra+=(tests/fuzz/regressions/$t)
  if "$bin/fuzz_$t" "${args[@]}" "$out/corpus/$t" "tests/fuzz/corpus/$t" "${extra[@]}" \
      </dev/null >"$out/logs/$t.log" 2>&1; then
    echo "$t: ok, $(grep -E '^stat::number_of_executed_units' "$out/logs/$t.log" | awk '{print $2}') runs, $(ls "$out/corpus/$t" | wc -l) corpus files"
  else
    echo "$t: FINDING (exit $?), see $out/logs/$t.log and $out/artifacts/$t/"
  fi
}
export -f run_one
export secs out bin FORK MAX_LEN
export DICTS="$(declare -p dict)"
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'eval "$DICTS"; run_one "$1"' _ {}
