#!/usr/bin/env bash
# Hostile inputs through the real command line (issue 8): deeply nested JSON, inputs over the size
# limit, NaN/Infinity/1e308, negative and zero counts, non-UTF-8, binary and empty files. Each
# case must end with the expected exit code (2 for a rejected input) and, when rejected, exactly
# one line on stderr; every case must finish within LIMIT_S seconds and LIMIT_MB of resident
# memory (address space capped at 2 GiB, or ASan's hard_rss_limit_mb when ASAN=1), and no output
# may print "nan" or "inf".
# Usage: tests/fuzz/edge_cases.sh GPUADVISOR_BINARY   (from anywhere; exits 1 when a case fails)
# The ctest `fuzz_edge_cases` runs it on an ASan+UBSan build of the CLI (tests/fuzz/CMakeLists.txt).
set -u
bin=$(realpath "${1:?usage: edge_cases.sh GPUADVISOR_BINARY}")
limit_s=${LIMIT_S:-5}
limit_mb=${LIMIT_MB:-512}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export NO_COLOR=1 COLUMNS=100 GPUADVISOR_TODAY=2026-11-29 LC_ALL=C.UTF-8
unset GPUADVISOR_CATALOG
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
have_time=0
[ -x /usr/bin/time ] && have_time=1

# Inputs.
head -c 100000 /dev/zero | tr '\0' '[' >"$t/deep.json"
{ for _ in $(seq 20000); do printf '{"a":'; done; printf 1; head -c 20000 /dev/zero | tr '\0' '}'; } >"$t/deep-obj.json"
{ printf '{"schema_version": 1, "gpus": ['; head -c $((100 << 20)) /dev/zero | tr '\0' ' '; printf ']}'; } >"$t/big.json"
: >"$t/empty.json"
printf '  \n\t ' >"$t/blank.json"
head -c 4096 /dev/urandom >"$t/binary.bin"
printf '{"schema_version": 1, "gpus": [{"id": "x", "memory_bytes": NaN}]}' >"$t/nan.json"
printf '{"schema_version": 1, "gpus": [{"id": "x", "memory_bytes": Infinity}]}' >"$t/inf.json"
printf '{"schema_version": 1, "gpus": [{"id": "x", "memory_bytes": 1e400}]}' >"$t/e400.json"
printf '{"schema_version": 1, "gpus": [{"id": "\xff\xfe", "name": "x"}]}' >"$t/nonutf8.json"
good=tests/fixtures/catalog/good.json
sed 's/"memory_bandwidth_gbs": 1008/"memory_bandwidth_gbs": 1e308/' $good >"$t/bw-1e308.json"
sed 's/"tdp_w": 450/"tdp_w": -450/' $good >"$t/tdp-negative.json"
sed 's/"memory_bytes": 25769803776/"memory_bytes": 0/' $good >"$t/memory-zero.json"
sed 's/"fp16": 165.2/"fp16": 1e308/' $good >"$t/tflops-1e308.json"
sed 's/"street_price_usd": 1800/"street_price_usd": 0/' $good >"$t/price-zero.json"
for p in 'gpus:-1' 'gpus:0' 'batch:0' 'batch:1e308' 'seq_len:-4096' 'tp:0' 'lora_rank:-1' 'mfu:0' 'mfu:1e308'; do
  printf '{"model": "7B", "task": "train", "%s": %s}' "${p%%:*}" "${p#*:}" >"$t/profile-${p%%:*}-${p#*:}.json"
done
printf '{"model": "7\xffB"}' >"$t/profile-nonutf8.json"
printf '{"model": "7B", "batch": "NaN"}' >"$t/profile-batch-nan.json"
: >"$t/empty.gguf"
: >"$t/empty.safetensors"
cp "$t/binary.bin" "$t/binary.gguf"
cp "$t/binary.bin" "$t/binary.safetensors"
: >"$t/empty.csv"
: >"$t/empty.log"

fail=0 n=0
# case EXPECTED_EXIT ARGS...   (EXPECTED_EXIT "2" = rejected with one line; "0|1" = an answer)
case_() {
  local want=$1
  shift
  n=$((n + 1))
  local start=$EPOCHREALTIME
  (
    # ASan reserves terabytes of address space: its own hard_rss_limit_mb applies there instead.
    [ "${ASAN:-0}" = 1 ] || ulimit -v $((2048 * 1024))
    if [ $have_time = 1 ]; then
      exec /usr/bin/time -f '%M' -o "$t/rss" timeout -k 2 "$limit_s" "$bin" "$@" </dev/null >"$t/out" 2>"$t/err"
    else
      exec timeout -k 2 "$limit_s" "$bin" "$@" </dev/null >"$t/out" 2>"$t/err"
    fi
  )
  local code=$? end=$EPOCHREALTIME
  local ms lines rss=0 why=""
  ms=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.0f", (b - a) * 1000}')
  lines=$(wc -l <"$t/err")
  if [ $have_time = 1 ]; then
    rss=$(tail -n 1 "$t/rss" 2>/dev/null)
    case $rss in '' | *[!0-9]*) rss=0 ;; *) rss=$((rss / 1024)) ;; esac
  fi
  if [ $code = 124 ] || [ $code = 137 ]; then why="timed out after ${limit_s}s"
  elif [ "$want" = 2 ] && [ $code != 2 ]; then why="exit $code, expected 2"
  elif [ "$want" = 2 ] && [ "$lines" != 1 ]; then why="$lines lines on stderr, expected 1"
  elif [ "$want" != 2 ] && [ $code != 0 ] && [ $code != 1 ]; then why="exit $code, expected 0 or 1"
  elif [ "$rss" -gt "$limit_mb" ]; then why="max RSS ${rss} MB over ${limit_mb} MB"
  elif grep -qiwE 'nan|-?inf|infinity' "$t/out"; then why="prints nan/inf: $(grep -m1 -iwE 'nan|-?inf|infinity' "$t/out" | cut -c1-100)"
  fi
  local shown="${*//$t\//}"
  if [ -n "$why" ]; then
    fail=1
    printf 'FAIL  %-70s %s\n      stderr: %s\n' "$shown" "$why" "$(head -c 300 "$t/err" | tr '\n' '|')"
  else
    printf 'ok    %-70s exit %s, %s ms, %s MB\n' "$shown" "$code" "$ms" "$rss"
  fi
}

for f in deep deep-obj big empty blank nan inf e400 nonutf8; do case_ 2 catalog list --catalog "$t/$f.json"; done
case_ 2 catalog list --catalog "$t/binary.bin"
# Impossible values are refused at load, by every command (docs/catalog.md): exit 2, one line.
for f in bw-1e308 tdp-negative memory-zero tflops-1e308 price-zero; do
  case_ 2 recommend --model 7B --budget 3000 --catalog "$t/$f.json"
done
for f in "$t"/profile-*.json; do case_ 2 memory --profile "$f"; done
case_ 2 memory --profile "$t/deep.json"
case_ 2 memory --profile "$t/empty.json"
for f in empty.gguf empty.safetensors binary.gguf binary.safetensors; do case_ 2 memory --model-file "$t/$f"; done
case_ 2 memory --model-config "$t/empty.json"
case_ 2 memory --model-config "$t/deep.json"
case_ 2 memory --model-config "$t/binary.bin"
for a in 0 -1 1e308 nan inf 0x10; do case_ 2 memory --model 7B --gpus "$a"; done
for a in 0 -1 1e308 nan; do case_ 2 memory --model 7B --batch "$a"; done
for a in 0 -1 1e308; do case_ 2 memory --model 7B --seq-len "$a"; done
for a in 0 -7B 1e308 nan inf $'7\xffB' ''; do case_ 2 memory --model "$a"; done
for a in 0 -1 nan inf 1e308; do case_ 2 recommend --model 7B --budget "$a"; done
for a in 0 -1; do case_ 2 recommend --model 7B --power-limit "$a"; done
for a in 0 100000; do case_ 2 recommend --model 7B --max-gpus "$a"; done
for a in 0 -1 nan 1e308; do case_ 2 estimate --model 7B --gpu h100 --task train --tokens "$a"; done
for a in 0 2 -1 nan; do case_ 2 estimate --model 7B --gpu h100 --mfu "$a"; done
case_ 2 inspect --from "$t/empty.csv"
case_ 2 inspect --from "$t/binary.bin"
case_ 2 diagnose --log "$t/binary.bin"
case_ "0|1|2" diagnose --log "$t/empty.log"
case_ 2 catalog list --catalog -
# Character devices: stat() says 0 bytes, reading never ends.
case_ 2 catalog list --catalog /dev/zero
case_ 2 memory --model-config /dev/urandom
case_ 2 diagnose --log /dev/zero
case_ 2 check "$t/empty.json"
case_ 2 check "$t/deep.json"
case_ 2 check "$t/binary.bin"
echo "$n cases, $([ $fail = 0 ] && echo 'all ok' || echo 'some FAILED')"
exit $fail
