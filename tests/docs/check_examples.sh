#!/usr/bin/env bash
# Runs every example in the documentation and compares its output with the page.
#
# The convention (docs/README.md, "Examples are tested"):
#   - A fenced block with the info string `console` is run. Its lines starting with `$ ` are
#     commands; the lines after a command, up to the next `$ ` line or the end of the block, are
#     its expected standard output, exactly.
#   - A command is `$ gpuadvisor ...`, possibly after environment assignments
#     (`$ LC_ALL=C gpuadvisor ...`), run by bash from the repository root with this build's binary
#     as `gpuadvisor`, so pipes (`| head -20`, `| grep ...`) and `2>&1` (to show standard error)
#     work. A line ending in `\` continues on the next line. Files a command writes go to a
#     scratch folder, not the working tree.
#   - `$ echo $?` shows the exit status of the command before it. A command that exits non-zero
#     must be followed by it, so that no page hides a failure.
#   - A command may not write to standard error unless it redirects it (`2>&1` shows it on the page).
#   - Any other `$ ` line in a console block is an error (unless the command before it prints that
#     very line: compare has a "$ per FP16 TFLOPS" row), and so is a `$ gpuadvisor` line in a fence
#     without an info string, or an indented console fence: nothing is skipped silently. Blocks meant to be read, not run
#     (installation, cmake, nvidia-smi, sudo), use `sh` or `bash` and are ignored.
#   - The environment is that of the golden tests: NO_COLOR=1 COLUMNS=100
#     GPUADVISOR_TODAY=2026-11-29 LC_ALL=C.UTF-8, and nothing else from the caller's.
#
# Usage: tests/docs/check_examples.sh [--binary PATH] [--update] [FILE.md...]
#   --binary PATH  the gpuadvisor to run (default: $GPUADVISOR_BIN, else build/gpuadvisor)
#   --update       rewrite the expected output in the pages with what the binary prints now
#   FILE.md        pages to check (default: docs/*.md and docs/**/*.md)
# Exit status: 0 every example matches; 1 an example differs or cannot be run; 2 usage error.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${GPUADVISOR_BIN:-$root/build/gpuadvisor}
update=0
files=()
while [ $# -gt 0 ]; do
  case $1 in
    --update) update=1 ;;
    --binary) [ $# -ge 2 ] || { echo "check_examples.sh: --binary needs a path" >&2; exit 2; }
              bin=$2; shift ;;
    --binary=*) bin=${1#--binary=} ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check_examples.sh: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1") ;;
  esac
  shift
done
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
[ -x "$bin" ] || { echo "check_examples.sh: no gpuadvisor binary at $bin (build it, or pass --binary PATH)" >&2; exit 2; }

cd "$root" || exit 2
if [ ${#files[@]} -eq 0 ]; then
  while IFS= read -r f; do files+=("$f"); done < <(find docs -name '*.md' -type f | LC_ALL=C sort)
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/ex"
ln -s "$bin" "$tmp/bin/gpuadvisor"

# Commands run in a scratch folder that mirrors the repository root with symbolic links, so that
# relative paths (docs/examples/..., tests/fixtures/...) resolve while files an example writes
# (`> report.html`) land in the scratch folder, not in the working tree.
mkdir -p "$tmp/root"
for e in "$root"/* "$root"/.[!.]*; do
  [ -e "$e" ] && ln -s "$e" "$tmp/root/${e##*/}"
done

run_env=(env -i "PATH=$tmp/bin:/usr/local/bin:/usr/bin:/bin" "HOME=$tmp" NO_COLOR=1 COLUMNS=100
         GPUADVISOR_TODAY=2026-11-29 LC_ALL=C.UTF-8 TERM=dumb)

checked=0 failed=0 nfiles=0
fail() { # file line message
  echo "$1:$2: $3"
  failed=$((failed + 1))
}

fi_=0
for f in "${files[@]}"; do
  [ -f "$f" ] || { echo "check_examples.sh: no such file: $f" >&2; exit 2; }
  fi_=$((fi_ + 1))
  prefix="f${fi_}_"
  manifest=$(awk -v mode=extract -v dir="$tmp/ex" -v prefix="$prefix" -f "$here/examples.awk" "$f")
  [ -n "$manifest" ] || continue
  nfiles=$((nfiles + 1))
  pending="" pending_line="" pending_rc=0 last_rc=0 keep_page=0
  while IFS=$'\t' read -r kind id line extra; do
    case $kind in
      error)
        fail "$f" "$line" "$extra"
        continue ;;
      run)
        if [ -n "$pending" ]; then
          fail "$f" "$pending_line" "exits $pending_rc: follow the command with '\$ echo \$?' to show it"
          pending=""
        fi
        checked=$((checked + 1))
        (cd "$tmp/root" && "${run_env[@]}" timeout 60 bash --noprofile --norc -c "$(cat "$tmp/ex/$id.cmd")" \
          </dev/null >"$tmp/ex/$id.out" 2>"$tmp/ex/$id.err")
        last_rc=$?
        # Compare lines: a missing final newline is not a difference.
        [ -s "$tmp/ex/$id.out" ] && [ -n "$(tail -c 1 "$tmp/ex/$id.out")" ] && echo >>"$tmp/ex/$id.out"
        if [ $last_rc = 124 ]; then
          fail "$f" "$line" "timed out after 60 s"
        elif [ $last_rc != 0 ]; then
          pending=$id pending_line=$line pending_rc=$last_rc
        fi
        # An expected line starting with '$ ' that the command does not print is a command the
        # checker does not run (the awk script takes it for output): say so, and never let
        # --update overwrite it.
        c=$(wc -l <"$tmp/ex/$id.cmd") k=0
        while IFS= read -r l; do
          k=$((k + 1))
          case $l in '$ '*) ;; *) continue ;; esac
          grep -Fxq -- "$l" "$tmp/ex/$id.out" && continue
          fail "$f" "$((line + c + k - 1))" "not a gpuadvisor command: '$l' (console blocks run '\$ gpuadvisor ...' and '\$ echo \$?'; use a sh block for other commands)"
          keep_page=1
        done <"$tmp/ex/$id.exp"
        if [ -s "$tmp/ex/$id.err" ]; then
          fail "$f" "$line" "writes to standard error (add 2>&1 to show it on the page):"
          head -5 "$tmp/ex/$id.err" | sed 's/^/    /'
          # A failing command (an old binary, a typo) must not wipe the page's output.
          [ $update = 1 ] && cp "$tmp/ex/$id.exp" "$tmp/ex/$id.out"
        fi ;;
      status)
        checked=$((checked + 1))
        pending=""
        echo "$last_rc" >"$tmp/ex/$id.out" ;;
    esac
    if [ $update = 0 ] && ! diff -u --label "$f:$line (in the page)" --label "$f:$line (printed now)" \
         "$tmp/ex/$id.exp" "$tmp/ex/$id.out" >"$tmp/diff"; then
      fail "$f" "$line" "the output differs from the page:"
      head -60 "$tmp/diff"
    fi
  done <<<"$manifest"
  if [ -n "$pending" ]; then
    fail "$f" "$pending_line" "exits $pending_rc: follow the command with '\$ echo \$?' to show it"
  fi
  if [ $update = 1 ] && [ $keep_page = 1 ]; then
    echo "$f: not updated: a '\$ ' line above is neither a command nor printed by the command before it; delete it (stale output) or make it a sh block, then run --update again"
  elif [ $update = 1 ]; then
    awk -v mode=rewrite -v dir="$tmp/ex" -v prefix="$prefix" -f "$here/examples.awk" "$f" >"$tmp/new.md"
    if ! cmp -s "$f" "$tmp/new.md"; then
      cat "$tmp/new.md" >"$f"
      echo "updated $f"
    fi
  fi
done

if [ $update = 1 ]; then
  echo "$checked examples in $nfiles files run and written back; $failed problems"
else
  echo "$checked examples in $nfiles files checked; $failed failed"
fi
[ $failed = 0 ]
