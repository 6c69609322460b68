#!/usr/bin/env bash
# Regenerates the seed corpora under tests/fuzz/corpus/<target>/ from the test fixtures and
# data/*.json. Seeds added by hand or merged from long runs (files named m-*) are kept.
# Usage: tests/fuzz/make_seeds.sh   (from anywhere)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
c=$root/tests/fuzz/corpus
cd "$root"
seed() {  # seed TARGET NAME FILE
  mkdir -p "$c/$1"
  cp "$3" "$c/$1/$2"
}

# catalog: every GPU catalog we have.
# Large documents are cut to a few records each (small inputs fuzz faster; the records cover
# every field the shipped data uses).
first_records() {  # first_records FILE ARRAY_KEY N [PREFIX]: the document with ARRAY_KEY cut to N records
  python3 - "$@" <<'PY'
import json, sys
path, key, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
prefix = sys.argv[4] if len(sys.argv) > 4 else ""
doc = json.load(open(path))
doc[key] = doc[key][:n]
sys.stdout.write(prefix + json.dumps(doc, indent=1) + "\n")
PY
}
mkdir -p "$c/catalog"
for n in 1 3; do first_records data/gpus.json gpus $n >"$c/catalog/data-gpus-$n.json"; done
for f in tests/fixtures/catalog/*.json; do seed catalog "fixture-$(basename "$f")" "$f"; done

# profile: hand-written workload profiles.
mkdir -p "$c/profile"
printf '%s\n' '{"model": "llama-3.1-8b", "task": "qlora", "batch": 4, "seq_len": 2048}' >"$c/profile/qlora.json"
printf '%s\n' '{"model": "70B", "task": "train", "precision": "bf16", "gpus": 64, "zero": 3, "tp": 8, "pp": 2, "checkpointing": "full", "tokens": "2T"}' >"$c/profile/train-70b.json"
printf '%s\n' '{"model": "mixtral-8x7b", "precision": "int4", "batch": 16, "seq_len": 32768, "kv_precision": "fp8", "flash_attention": false}' >"$c/profile/moe-inference.json"
printf '%s\n' '{"model": "7B", "task": "lora", "lora_rank": 64, "lora_targets": ["q", "v"], "optimizer": "adamw-8bit", "mfu": 0.4}' >"$c/profile/lora.json"
printf '%s\n' '{"model": "deepseek-v3", "precision": "fp8", "gpus": 8, "tp": 8}' >"$c/profile/deepseek.json"
printf '%s\n' '{"model": "resnet-50", "task": "train", "batch": 256}' >"$c/profile/vision.json"
printf '%s\n' '{"model": "1.5T", "task": "train", "gpus": "4096", "zero": "fsdp", "seq_len": "8k"}' >"$c/profile/huge.json"

# hf_config: the Hugging Face configs.
for d in tests/fixtures/hf/*/; do seed hf_config "$(basename "$d").json" "$d/config.json"; done

# safetensors and GGUF: the weight-file fixtures (index files go to safetensors: '{' inputs are
# tried as model.safetensors.index.json).
for f in tests/fixtures/modelfiles/*.safetensors tests/fixtures/modelfiles/garbage.bin; do seed safetensors "$(basename "$f")" "$f"; done
seed safetensors sharded-index.json tests/fixtures/modelfiles/sharded/model.safetensors.index.json
seed safetensors missing-shards-index.json tests/fixtures/modelfiles/missing-shards/model.safetensors.index.json
seed safetensors shard1.safetensors tests/fixtures/modelfiles/sharded/model-00001-of-00002.safetensors
for f in tests/fixtures/modelfiles/*.gguf; do seed gguf "$(basename "$f")" "$f"; done

# units: what people type.
mkdir -p "$c/units"
i=0
for v in 10B 7b 350M 1.5T 125k 175e9 7,000,000,000 24GB 24GiB 80G 512MiB '$3,000' 3k 1.2M 30W 0.7kW 700 3600s 90min 24h 30d 2w 1.5y \
         0.5 1e308 -1 0 +5 '1 TB' 2048; do
  i=$((i + 1)); printf '%s' "$v" >"$c/units/u$i"
done

# cli: argument vectors, NUL-separated (golden commands without shell pipes, README examples).
mkdir -p "$c/cli"
i=0
cli_seed() {
  i=$((i + 1))
  eval "set -- $1"
  local first=1
  : >"$c/cli/a$i"
  for a in "$@"; do
    [ $first = 1 ] || printf '\0' >>"$c/cli/a$i"
    printf '%s' "$a" >>"$c/cli/a$i"
    first=0
  done
}
while IFS= read -r line; do cli_seed "${line%%|*}"; done < <(cat tests/golden/*/*/cmd)
while IFS= read -r line; do [ -n "$line" ] && cli_seed "$line"; done <<'CMDS'
recommend --model 10B --budget 3000
recommend --model llama-3.1-70b --task qlora --budget 5000 --format json
recommend --model 7B --task train --tokens 300B --scenario cloud --prefer cost
recommend --model 13B --power-limit 1000 --max-gpus 4 --used --top 3
memory --model llama-3.1-8b --task qlora --gpu rtx-4090
memory --model 70B --task train --gpus 8 --zero 3 --format json
memory --model-config tests/fixtures/hf/mixtral-8x7b/config.json --context 32768
memory --model-file tests/fixtures/modelfiles/tiny.gguf
estimate --model llama-3.1-8b --gpu h100 --task train --tokens 1T --gpus 8
estimate --model mixtral-8x7b --gpu a100-80 --batch 32 --format json
cost --model 7B --task train --tokens 300B --gpu h100 --gpus 8
compare 4090 a100-80 h100 --model 13B
fit --gpu rtx-3090 --gpus 2
models list --format json
models show llama-3.1-8b
rules list
compat --gpu v100 --cuda 12.4 --framework pytorch
compat --arch hopper --driver 525.60
diagnose --log tests/fixtures/logs/dmesg-xid.log
diagnose CUDA error: out of memory
inspect --from tests/fixtures/inspect/h100-ecc.csv
inspect --from tests/fixtures/inspect/a100-healthy.csv --format json
check --help
--version
--help
CMDS

# bench: the calibrate fixtures (real benchmark outputs).
for f in tests/fixtures/calibrate/*; do [ "$(basename "$f")" = SOURCES.md ] || seed bench "$(basename "$f")" "$f"; done
# smi_csv and xid_log: the inspect and log fixtures.
for f in tests/fixtures/inspect/*; do seed smi_csv "$(basename "$f")" "$f"; done
for f in tests/fixtures/logs/*; do seed xid_log "$(basename "$f")" "$f"; done
# The real captures and logs under 6 KB (tables, -q sections, header-less CSV; every log style).
for f in tests/fixtures/real/nvidia-smi/*.csv tests/fixtures/real/nvidia-smi/*.txt; do
  [ "$(wc -c <"$f")" -le 6144 ] && seed smi_csv "real-$(basename "$f")" "$f"
done
for f in tests/fixtures/real/logs/*.log; do
  [ "$(wc -c <"$f")" -le 6144 ] && seed xid_log "real-$(basename "$f")" "$f"
done

# datafiles: first byte picks the parser (m models, p prices, r rules, c compat, x xid, e errors,
# f efficiency).
mkdir -p "$c/datafiles"
for spec in m:models:models p:cloud:instances r:rules:rules c:compat:architectures x:xid:xids e:errors:errors \
            f:efficiency:factors; do
  IFS=: read -r k n key <<<"$spec"
  first_records "data/$n.json" "$key" 4 "$k" >"$c/datafiles/$n.json"
done

# spec: procurement specs, once their fixtures exist.
if [ -d tests/fixtures/specs ]; then
  for f in tests/fixtures/specs/*.json; do [ -f "$f" ] && seed spec "$(basename "$f")" "$f"; done
fi
echo "seeds written to $c"
