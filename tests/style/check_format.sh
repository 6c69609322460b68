#!/usr/bin/env bash
# Every C++ source and header follows .clang-format (ctest clang-format). Fix with:
#   find src include tests \( -name '*.cpp' -o -name '*.h' \) | xargs clang-format-14 -i
# Usage: tests/style/check_format.sh CLANG_FORMAT [SOURCE_DIR]
set -euo pipefail
tool=${1:?usage: check_format.sh CLANG_FORMAT [SOURCE_DIR]}
cd "${2:-$(dirname "$0")/../..}"
mapfile -t files < <(find src include tests \( -name '*.cpp' -o -name '*.h' \) -not -path '*/golden/*' | sort)
bad=0
for f in "${files[@]}"; do
  if ! "$tool" --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (clang-format -i $f)"
    bad=$((bad + 1))
  fi
done
echo "${#files[@]} files checked; $bad not as .clang-format says"
[ "$bad" = 0 ]
