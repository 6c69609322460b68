#!/usr/bin/env bash
# Runs the generated completion script of one shell and checks what it offers for typed lines.
#   complete.sh bash|zsh|fish GPUADVISOR_BINARY
# bash: the completion function is called with COMP_WORDS/COMP_CWORD as bash sets them.
# zsh: a syntax check (zsh -n), then the function with compsys stubbed (compadd, _describe, ...
# print their candidates), so the walk over the words is what is tested.
# fish: a syntax check (fish -n), then 'complete -C LINE'.
# Exits 77 (skipped) when the shell is not installed. Run from the repository root.
set -u
shell=${1:?usage: complete.sh bash|zsh|fish GPUADVISOR_BINARY}
bin=$(cd "$(dirname "${2:?usage: complete.sh bash|zsh|fish GPUADVISOR_BINARY}")" && pwd)/$(basename "$2")
if ! command -v "$shell" >/dev/null 2>&1; then
  echo "SKIP: $shell is not installed"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The scripts call 'gpuadvisor' (the first word of the line) for ids: put the binary on PATH.
mkdir "$tmp/bin" && ln -s "$bin" "$tmp/bin/gpuadvisor"
export PATH="$tmp/bin:$PATH"
unset GPUADVISOR_CATALOG
"$bin" completion "$shell" >"$tmp/script" || { echo "FAIL: gpuadvisor completion $shell"; exit 1; }

# Candidates for a line; the cursor is at its end, so a trailing space starts an empty word.
# Words are separated by single spaces; bash's split of --opt=value into --opt, =, value is done
# here as bash does it.
candidates() {
  local line=$1
  case $shell in
    bash)
      bash --norc --noprofile -c '
        source "$1"
        line=$2
        read -ra COMP_WORDS <<<"${line//=/ = }"
        [[ $line == *" " || $line == *"=" ]] && COMP_WORDS+=("")
        # "--gpu=" leaves "=" as the current word, as bash does.
        [[ $line == *"=" ]] && unset "COMP_WORDS[${#COMP_WORDS[@]}-1]"
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE=$line COMP_POINT=${#line}
        COMPREPLY=()
        _gpuadvisor gpuadvisor "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf "%s\n" "${COMPREPLY[@]}"' _ "$tmp/script" "$line" | sed '/^$/d' | sort
      ;;
    zsh)
      zsh -f -c '
        compdef() { : }
        _describe() { shift 3; local -a _stub_specs; _stub_specs=("${(@P)1}"); print -rl -- "${(@)_stub_specs%%:*}" }
        compadd() {
          if [[ $1 == -a ]]; then print -rl -- "${(@P)2}"; else [[ $1 == -- ]] && shift; print -rl -- "$@"; fi
        }
        _files() { print -r -- "<files>" }
        _message() { print -r -- "<value>" }
        compset() { PREFIX=${PREFIX#*=} }
        source "$1"
        words=(${(s: :)2})
        [[ $2 == *" " ]] && words+=("")
        CURRENT=${#words}
        _gpuadvisor' _ "$tmp/script" "$line" | sort -u | {
          # compsys filters by the word being completed; the stubs do not.
          cur=${line##* }; cur=${cur#*=}
          while IFS= read -r w; do [[ $w == "<"* || $w == "$cur"* ]] && printf '%s\n' "$w"; done
        }
      ;;
    fish)
      fish --no-config -c 'source $argv[1]; complete -C $argv[2]' "$tmp/script" "$line" | cut -f1 | sed -e "s/^.*=//" -e "s:/$::" | sort
      ;;
  esac
}

fail=0 n=0
# expect LINE WORD...: the candidates are exactly these words.
expect() {
  local line=$1; shift
  n=$((n + 1))
  local got want
  got=$(candidates "$line")
  want=$(printf '%s\n' "$@" | sed '/^$/d' | sort)
  if [ "$got" != "$want" ]; then
    echo "FAIL [$shell] '$line': expected $(echo $want), got $(echo $got)"
    fail=$((fail + 1))
  fi
}
# expect_has LINE WORD...: the candidates include these words (and maybe more).
expect_has() {
  local line=$1; shift
  n=$((n + 1))
  local got w
  got=$(candidates "$line")
  for w in "$@"; do
    if ! grep -qxF -- "$w" <<<"$got"; then
      echo "FAIL [$shell] '$line': '$w' missing from: $(echo $got | cut -c1-300)"
      fail=$((fail + 1))
      return
    fi
  done
}

case $shell in
  zsh) zsh -n "$tmp/script" || { echo "FAIL: zsh -n"; exit 1; } ;;
  fish) fish -n "$tmp/script" || { echo "FAIL: fish -n"; exit 1; } ;;
  bash) bash -n "$tmp/script" || { echo "FAIL: bash -n"; exit 1; } ;;
esac

gpus_40=$("$bin" catalog list --ids | grep '^rtx-40')
h1=$("$bin" catalog list --ids | grep '^h1')
llama31=$("$bin" models list --ids | grep '^llama-3.1-')
files="tests/fixtures/catalog"
[ "$shell" = zsh ] && files="<files>"  # _files is stubbed

expect "gpuadvisor catalog sh" show
expect "gpuadvisor -v catalog sh" show
expect "gpuadvisor models l" list
expect "gpuadvisor rules " list show
expect_has "gpuadvisor " recommend memory estimate cost compare fit catalog models check rules compat diagnose \
  inspect completion man
expect "gpuadvisor memory --gpu rtx-40" $gpus_40
expect_has "gpuadvisor memory --gpu rtx-40" rtx-4090
expect "gpuadvisor memory --model llama-3.1-8b --task qlora --gpu rtx-40" $gpus_40
expect "gpuadvisor catalog show rtx-40" $gpus_40
expect "gpuadvisor compare rtx-4090 h1" $h1
expect "gpuadvisor models show llama-3.1-" $llama31
expect "gpuadvisor estimate --model llama-3.1-" $llama31
expect "gpuadvisor rules show memory-f" memory-fit
expect "gpuadvisor memory --task " inference train lora qlora
expect "gpuadvisor memory --precision q" q4_0 q4_k_m q5_k_m q6_k q8_0
expect "gpuadvisor estimate --engine " llama.cpp vllm sglang trt-llm transformers exllamav2
expect "gpuadvisor recommend --scenario e" edge
expect "gpuadvisor recommend --prefer " balanced cost speed efficiency
expect "gpuadvisor catalog list --format " table json csv markdown
expect "gpuadvisor check --format " text table json junit sarif
expect "gpuadvisor completion " bash zsh fish
expect "gpuadvisor catalog list --so" --sort
expect_has "gpuadvisor memory --g" --gpu --gpus
expect_has "gpuadvisor recommend --" --budget --scenario --prefer --model --task --format --help
expect "gpuadvisor memory --model-config tests/fixtures/catal" "$files"
expect "gpuadvisor memory --gpu=rtx-40" $gpus_40
# GPUs from a user catalog on the line, and from GPUADVISOR_CATALOG.
expect "gpuadvisor memory --catalog tests/fixtures/catalog/good.json --gpu test-" test-gpu
GPUADVISOR_CATALOG=$PWD/tests/fixtures/catalog/good.json expect "gpuadvisor fit --gpu test-" test-gpu
expect "gpuadvisor fit --gpu test-"

echo "[$shell] $((n - fail)) passed, $fail failed"
[ $fail = 0 ]
