#!/usr/bin/env bash
# Installs what the build and the tests need, builds with warnings as errors, runs every test,
# builds the .deb and checks it installs and runs, builds and runs the tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer, then runs each libFuzzer target for ~10 s.
# This is the README's test command and what CI runs (.ci/run).
# CI_STAGES picks stages (default: all, in this order): CI_STAGES="release package" tests/ci.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
stages=" ${CI_STAGES:-release package asan fuzz} "
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"

packages="cmake make g++ libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev catch2 python3 chromium"
# The .deb (dpkg-dev and file for its Depends), the completion and man page tests (zsh, fish,
# groff-base, man-db), the fuzz smoke (clang 14 and its libFuzzer runtime) and the style check
# (clang-format 14).
packages="$packages dpkg-dev file zsh fish groff-base man-db clang libclang-rt-14-dev clang-format-14"
missing=""
for p in $packages; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

if [[ $stages == *" release "* ]]; then
  echo "== release build (-Werror)"
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGPUADVISOR_WERROR=ON >/dev/null
  cmake --build build -j"$jobs"
  ctest --test-dir build --output-on-failure -j"$jobs"
fi

if [[ $stages == *" package "* ]]; then
  echo "== .deb: build, install, run, remove"
  # The release build above (or an existing one) is packaged; the machine is left as found.
  if dpkg -s gpuadvisor >/dev/null 2>&1; then
    echo "gpuadvisor is already installed as a package here; not replacing it" >&2
    exit 1
  fi
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGPUADVISOR_WERROR=ON >/dev/null
  cmake --build build -j"$jobs"
  rm -f build/gpuadvisor_*.deb
  (cd build && cpack -G DEB >/dev/null)
  deb=$(ls build/gpuadvisor_*.deb)
  depends=$(dpkg-deb -f "$deb" Depends)
  echo "$deb: Depends: $depends"
  # fmt and spdlog are built in, libstdc++ and libgcc linked statically: libc is all it needs.
  [[ $depends == *libc6* && $depends != *libfmt* && $depends != *libspdlog* && $depends != *libstdc++* ]] ||
    { echo "$deb: Depends should be libc6 alone, is: $depends" >&2; exit 1; }
  contents=$(dpkg-deb -c "$deb")
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "./$deb" >/dev/null
  trap 'DEBIAN_FRONTEND=noninteractive $SUDO apt-get remove -y -qq gpuadvisor >/dev/null' EXIT
  dpkg -S /usr/bin/gpuadvisor >/dev/null
  /usr/bin/gpuadvisor --version
  /usr/bin/gpuadvisor recommend --model 10B --budget 3000 >/dev/null
  for f in /usr/share/bash-completion/completions/gpuadvisor /usr/share/zsh/vendor-completions/_gpuadvisor \
           /usr/share/fish/vendor_completions.d/gpuadvisor.fish /usr/share/doc/gpuadvisor/LICENSE; do
    if [ ! -s "$f" ] && [[ $contents != *" .$f"* ]]; then echo "$deb: no $f" >&2; exit 1; fi
  done
  bash -c 'source /usr/share/bash-completion/completions/gpuadvisor && complete -p gpuadvisor' >/dev/null
  man=/usr/share/man/man1/gpuadvisor.1.gz
  if [ -f "$man" ]; then
    warnings=$(zcat "$man" | groff -man -Tutf8 -ww -z 2>&1)
    [ -z "$warnings" ] || { echo "$man: $warnings" >&2; exit 1; }
    [[ $(MANWIDTH=80 man -l "$man") == *"gpuadvisor catalog list"* ]] || { echo "$man does not render" >&2; exit 1; }
  else
    # Container images often tell dpkg to skip /usr/share/man (path-exclude); check the package.
    [[ $contents == *" .$man"* ]] || { echo "$deb: no $man" >&2; exit 1; }
    echo "$man is in the package (this system does not install man pages)"
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get remove -y -qq gpuadvisor >/dev/null
  trap - EXIT
  if dpkg -s gpuadvisor >/dev/null 2>&1; then echo "gpuadvisor is still installed" >&2; exit 1; fi
fi

if [[ $stages == *" asan "* ]]; then
  echo "== ASan+UBSan build"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUADVISOR_SANITIZE=ON -DGPUADVISOR_WERROR=ON >/dev/null
  cmake --build build-asan -j"$jobs"
  GPUADVISOR_AGREEMENT_CASES=1000 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j"$jobs"
fi

if [[ $stages == *" fuzz "* ]]; then
  echo "== fuzz smoke (clang, libFuzzer: each target ~10 s, then the hostile-input script)"
  cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DGPUADVISOR_FUZZ=ON -DGPUADVISOR_TESTS=ON \
        -DGPUADVISOR_WERROR=ON >/dev/null
  cmake --build build-fuzz --target gpuadvisor_fuzzers -j"$jobs"
  ctest --test-dir build-fuzz -L fuzz --output-on-failure -j"$jobs"
fi
