#pragma once
/// Fine-tuning recipes (data/recipes.json): the defaults of a framework that change training
/// memory, each with the config file or docs it comes from (docs/workload.md, "Recipes").
#include <optional>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/source.h"
#include "gpuadvisor/util/json.h"
#include "gpuadvisor/util/names.h"

namespace gpuadvisor::catalog {

/// Activation checkpointing of a training run: none; selective (Korthikanti et al. 2022: only the
/// attention scores recomputed); selective-op (torchtitan's op-level policy: the output of every
/// other matmul and of attention kept, the rest recomputed); full (each layer's input kept, the
/// layer recomputed in the backward pass).
enum class Checkpointing { none, selective, selective_op, full };
inline constexpr util::Names<Checkpointing, 4> kCheckpointingNames{{"none", "selective", "selective-op", "full"}};

/// Training state kept in host RAM (ZeRO-Offload, ZeRO-Infinity, FSDP CPU offload).
enum class Offload { none, optimizer, optimizer_params };
inline constexpr util::Names<Offload, 3> kOffloadNames{{"none", "optimizer", "optimizer+params"}};

/// One set of defaults; a field left out keeps gpuadvisor's own default.
struct RecipeDefaults {
  std::optional<bool> master_weights;         ///< an fp32 copy beside the 16-bit weights
  std::optional<std::string> gradient_dtype;  ///< bf16 or fp32
  std::optional<std::string> optimizer;       ///< an --optimizer id
  std::optional<bool> optimizer_in_backward;
  std::optional<Checkpointing> checkpointing;
  std::optional<bool> activation_offload;
  std::optional<bool> chunked_loss;
  std::optional<bool> packed;
  std::optional<int> zero;
  std::optional<std::string> sharding;  ///< deepspeed or fsdp
  std::optional<Offload> offload;
};

struct Recipe {
  std::string id, name;
  RecipeDefaults full;     ///< --task train
  RecipeDefaults adapter;  ///< --task lora and qlora
  std::vector<Source> sources;
  std::string as_of;
};

/// The recipes of data/recipes.json, parsed once. Throws Error naming file:line on a bad record.
const std::vector<Recipe>& recipes();
std::vector<Recipe> parse_recipes(const util::JsonDoc& doc);
const Recipe* find_recipe(const std::string& id);

}  // namespace gpuadvisor::catalog
