#!/usr/bin/env bash
# Checks that the generated man page renders without a groff warning and has the usual sections.
#   man.sh GPUADVISOR_BINARY
# Exits 77 (skipped) when groff is not installed.
set -u
bin=${1:?usage: man.sh GPUADVISOR_BINARY}
if ! command -v groff >/dev/null 2>&1; then
  echo "SKIP: groff is not installed"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" man >"$tmp/gpuadvisor.1" || { echo "FAIL: gpuadvisor man"; exit 1; }
fail=0
warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$tmp/gpuadvisor.1" 2>&1)
if [ -n "$warnings" ]; then echo "FAIL: groff warnings:"; echo "$warnings" | head -20; fail=1; fi
for s in NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES "SEE ALSO"; do
  grep -qx "\.SH $s" "$tmp/gpuadvisor.1" || { echo "FAIL: no section $s"; fail=1; }
done
if command -v man >/dev/null 2>&1; then
  out=$(MANWIDTH=100 man -l "$tmp/gpuadvisor.1" 2>&1 >"$tmp/rendered")
  if [ -n "$out" ]; then echo "FAIL: man -l says:"; echo "$out" | head; fail=1; fi
  grep -q "gpuadvisor catalog list" "$tmp/rendered" || { echo "FAIL: rendered page lacks 'gpuadvisor catalog list'"; fail=1; }
fi
[ $fail = 0 ] && echo "man page renders cleanly"
exit $fail
