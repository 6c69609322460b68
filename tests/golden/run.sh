#!/usr/bin/env bash
# Runs every golden case and compares stdout, stderr and the exit code byte for byte.
# A case is a folder tests/golden/<command>/<case>/ with:
#   cmd        the arguments, one shell line (run with the gpuadvisor binary, from the repo root)
#   stdout     expected standard output
#   stderr     expected standard error (optional; absent means empty)
#   exit       expected exit code (optional; absent means 0)
#   stdin      fed to standard input (optional)
#   env        extra environment for this case (optional): one VAR=value per line, or -u VAR to
#              unset one; applied with env(1) over the fixed environment below
# Regenerate after an intended change: tests/golden/run.sh build/gpuadvisor --update
set -u
bin=${1:?usage: run.sh GPUADVISOR_BINARY [--update]}
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
export NO_COLOR=1 COLUMNS=100 GPUADVISOR_TODAY=2026-11-29 LC_ALL=C.UTF-8
unset GPUADVISOR_CATALOG
fail=0 n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for dir in $(find "$here" -mindepth 2 -maxdepth 2 -type d | sort); do
  [ -f "$dir/cmd" ] || continue
  n=$((n + 1))
  name=${dir#"$here"/}
  args=$(cat "$dir/cmd")
  input=/dev/null
  [ -f "$dir/stdin" ] && input="$dir/stdin"
  envs=()
  if [ -f "$dir/env" ]; then
    while IFS= read -r e || [ -n "$e" ]; do
      case "$e" in
        '' | '#'*) ;;
        -u\ *) envs+=(-u "${e#-u }") ;;
        *) envs+=("$e") ;;
      esac
    done <"$dir/env"
  fi
  eval "env \"\${envs[@]}\" \"$bin\" $args" <"$input" >"$tmp/stdout" 2>"$tmp/stderr"
  code=$?
  if [ "$update" = "--update" ]; then
    cp "$tmp/stdout" "$dir/stdout"
    if [ -s "$tmp/stderr" ]; then cp "$tmp/stderr" "$dir/stderr"; else rm -f "$dir/stderr"; fi
    if [ "$code" != 0 ]; then echo "$code" >"$dir/exit"; else rm -f "$dir/exit"; fi
    continue
  fi
  want_code=0
  [ -f "$dir/exit" ] && want_code=$(cat "$dir/exit")
  [ -f "$dir/stderr" ] || : >"$tmp/want_stderr"
  [ -f "$dir/stderr" ] && cp "$dir/stderr" "$tmp/want_stderr"
  ok=1
  if [ "$code" != "$want_code" ]; then echo "FAIL $name: exit $code, expected $want_code"; ok=0; fi
  if ! diff -u "$dir/stdout" "$tmp/stdout" >"$tmp/diff"; then echo "FAIL $name: stdout differs"; head -40 "$tmp/diff"; ok=0; fi
  if ! diff -u "$tmp/want_stderr" "$tmp/stderr" >"$tmp/diff"; then echo "FAIL $name: stderr differs"; head -20 "$tmp/diff"; ok=0; fi
  [ $ok = 1 ] || fail=$((fail + 1))
done
[ "$update" = "--update" ] && { echo "updated $n golden cases"; exit 0; }
echo "$((n - fail)) passed, $fail failed"
[ $fail = 0 ]
