#include "gpuadvisor/estimate/workload.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "gpuadvisor/catalog/recipe.h"
#include "gpuadvisor/util/json_sink.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::estimate {
namespace {

using catalog::Precision;

constexpr std::string_view kTaskNames[] = {"inference", "train", "lora", "qlora"};

// Bits per weight of each storage format. Quantized formats carry scales (and zero points):
// int4 with one fp16 scale per group of 128 (4 + 16/128); GPTQ/AWQ add a 4-bit zero point per
// group (4 + 16/128 + 4/128, Frantar et al. 2023; Lin et al. 2024); NF4 with double quantization
// 4 + 8/64 + 32/(64*256) = 4.127 (Dettmers et al. 2023, section 3); GGUF averages as llama.cpp
// reports them (Q8_0: 34 bytes per 32 weights = 8.5; Q4_K_M ~4.85; Q5_K_M ~5.69).
using Kernel = WeightFormat::Kernel;
constexpr WeightFormat kFormats[] = {
    {"fp32", 32, 32, Precision::fp32, false, "IEEE single precision"},
    {"tf32", 32, 32, Precision::tf32, false, "fp32 storage, TF32 Tensor Core math"},
    {"fp16", 16, 16, Precision::fp16, false, "IEEE half precision"},
    {"bf16", 16, 16, Precision::bf16, false, "bfloat16"},
    {"fp8", 8, 8, Precision::fp8, false, "FP8 (E4M3) weights, per-tensor scales"},
    {"int8", 8, 8, Precision::int8, false, "8-bit integer weights, per-channel scales (negligible)"},
    {"int4", 4.125, 4, Precision::fp16, false, "4-bit weights, one fp16 scale per 128 (4 + 16/128 bits)", false,
     Kernel::weight_only},
    {"gptq-int4", 4.15625, 4, Precision::fp16, true, "GPTQ 4-bit, group 128: fp16 scale + 4-bit zero (4 + 20/128 bits)",
     false, Kernel::weight_only},
    {"awq-int4", 4.15625, 4, Precision::fp16, true, "AWQ 4-bit, group 128: fp16 scale + 4-bit zero (4 + 20/128 bits)",
     false, Kernel::weight_only},
    {"gptq-int8", 8.15625, 8, Precision::fp16, true, "GPTQ 8-bit, group 128: fp16 scale + 4-bit zero (8 + 20/128 bits)",
     false, Kernel::weight_only},
    {"nf4", 4.127, 4, Precision::bf16, true, "bitsandbytes NF4 with double quantization (4.127 bits, QLoRA paper)",
     false, Kernel::weight_only},
    {"q4_0", 4.5, 4, Precision::fp16, false, "GGUF Q4_0: 32 4-bit weights + one fp16 scale (4.5 bits)", true,
     Kernel::gguf_quant},
    {"q4_k_m", 4.85, 4, Precision::fp16, false, "GGUF Q4_K_M, ~4.85 bits per weight on average", true,
     Kernel::gguf_quant},
    {"q5_k_m", 5.69, 5, Precision::fp16, false, "GGUF Q5_K_M, ~5.69 bits per weight on average", true,
     Kernel::gguf_quant},
    {"q6_k", 6.5625, 6, Precision::fp16, false, "GGUF Q6_K: 210 bytes per 256 weights (6.5625 bits)", true,
     Kernel::gguf_quant},
    {"q8_0", 8.5, 8, Precision::fp16, false, "GGUF Q8_0: 32 int8 weights + one fp16 scale (8.5 bits)", true,
     Kernel::gguf_quant},
};

// Optimizer state per trainable parameter in mixed precision (ZeRO paper, Rajbhandari et al.
// 2020, section 3.1: Adam keeps an fp32 master copy, momentum and variance, K = 12).
// Without master weights (pure bf16 training) torch.optim keeps its states in the weights' dtype;
// bitsandbytes 8-bit states stay 8-bit; paged ones live in CUDA unified memory, which the driver
// moves to host RAM when the GPU runs short (bitsandbytes docs, "Paged optimizers").
constexpr OptimizerInfo kOptimizers[] = {
    {"adamw", 4, 8, false, false, "momentum and variance"},
    {"adam", 4, 8, false, false, "momentum and variance"},
    {"sgd", 4, 4, false, false, "momentum"},
    {"adafactor", 4, 0, false, false, "factored second moments (rows + columns, negligible)"},
    {"adamw-8bit", 4, 2, true, false, "8-bit momentum and variance (bitsandbytes)"},
    {"paged-adamw-8bit", 4, 2, true, true, "8-bit momentum and variance, paged (bitsandbytes PagedAdamW8bit)"},
    {"paged-adamw", 4, 8, false, true, "fp32 momentum and variance, paged (bitsandbytes PagedAdamW)"},
};

const std::vector<std::string> kLoraTargets = {"q", "k", "v", "o", "gate", "up", "down"};

[[noreturn]] void bad(const WorkloadInput& in, const std::string& key, const std::string& what) {
  throw Error(fmt::format("{}: {}", in.label(key), what));
}

template <typename T>
T need(const WorkloadInput& in, const std::string& key, Result<T> r) {
  if (!r) bad(in, key, r.error());
  return std::move(r).value();
}

std::vector<std::string> names_of(auto const& table) {
  std::vector<std::string> out;
  for (const auto& x : table) out.emplace_back(x.id);
  return out;
}

std::string choices(const std::vector<std::string>& all, const std::string& got) {
  return fmt::format("expected one of {}, got {}{}", util::join(all, ", "), util::quote(got),
                     util::did_you_mean(got, all));
}

}  // namespace

std::string WorkloadInput::label(const std::string& key) const {
  auto it = where.find(key);
  if (it != where.end()) return it->second;
  std::string flag = key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return "--" + flag;
}

std::string_view name(Task t) { return kTaskNames[static_cast<int>(t)]; }

std::optional<Task> task_from(std::string_view s) {
  for (int i = 0; i < 4; ++i)
    if (kTaskNames[i] == s) return static_cast<Task>(i);
  if (s == "training" || s == "full") return Task::train;
  if (s == "infer") return Task::inference;
  return std::nullopt;
}

std::span<const WeightFormat> weight_formats() { return kFormats; }
std::span<const OptimizerInfo> optimizers() { return kOptimizers; }

const WeightFormat* find_format(std::string_view id) {
  if (id == "gptq") id = "gptq-int4";
  if (id == "awq") id = "awq-int4";
  for (const auto& f : kFormats)
    if (f.id == id) return &f;
  return nullptr;
}

const OptimizerInfo* find_optimizer(std::string_view id) {
  if (id == "adam8bit" || id == "adamw8bit" || id == "adam-8bit" || id == "adamw_bnb_8bit" || id == "adamw_8bit")
    id = "adamw-8bit";
  if (id == "paged_adamw_8bit" || id == "pagedadamw8bit") id = "paged-adamw-8bit";
  if (id == "paged_adamw_32bit" || id == "paged_adamw") id = "paged-adamw";
  if (id == "adamw_torch" || id == "adamw_torch_fused") id = "adamw";
  for (const auto& o : kOptimizers)
    if (o.id == id) return &o;
  return nullptr;
}

const WeightFormat& Workload::format() const {
  const auto* f = find_format(precision);
  if (!f) throw Error("unknown precision " + precision, Exit::internal);
  return *f;
}

catalog::Engine default_engine(const WeightFormat& f) {
  if (f.gguf) return catalog::Engine::llamacpp;
  if (f.id == "nf4") return catalog::Engine::transformers;
  return catalog::Engine::vllm;
}

std::string default_precision(Task t) {
  switch (t) {
    case Task::inference:
      return "fp16";
    case Task::qlora:
      return "nf4";
    default:
      return "bf16";
  }
}

namespace {

// The first engine of data/engines.json that runs the format and the KV cache (and on the vendor's
// GPUs, when one is given); null when none does.
const catalog::EngineInfo* first_engine_for(std::string_view format, std::string_view kv,
                                            std::optional<catalog::Vendor> vendor = std::nullopt) {
  for (const auto& e : catalog::engines())
    if (e.runs_format(format) && e.runs_kv(kv) && (!vendor || e.runs_on(*vendor))) return &e;
  return nullptr;
}

}  // namespace

void apply_gpu_defaults(Workload& w, const WorkloadSet& set, const catalog::Gpu& gpu) {
  // The default engine where it does not run on the GPU's vendor (vLLM on an Apple GPU).
  if (!is_training(w.task) && !set.engine && !catalog::engine(w.engine).runs_on(gpu.vendor))
    if (const auto* e = first_engine_for(w.precision, w.kv_precision, gpu.vendor)) {
      for (auto& a : w.assumptions)
        if (util::starts_with(a, "engine:"))
          a = fmt::format("engine: {} ({} does not run on {} GPUs; --engine to choose)", catalog::name(e->id),
                          catalog::name(w.engine), catalog::kVendorNames.name(gpu.vendor));
      w.engine = e->id;
      w.split = e->split;
    }
  const bool pre_ampere = gpu.vendor == catalog::Vendor::nvidia &&
                          (gpu.architecture == "volta" || gpu.architecture == "turing" || gpu.architecture == "pascal");
  if (!set.flash_attention && pre_ampere && w.flash_attention && w.model.is_transformer()) {
    w.flash_attention = false;
    for (auto& a : w.assumptions)
      if (util::starts_with(a, "flash attention:"))
        a = fmt::format("flash attention: off (FlashAttention-2 needs Ampere or newer; {} is {})", gpu.id,
                        gpu.architecture);
  }
}

std::string check_layout(const Workload& w) {
  if (w.tp * w.pp > w.gpus || w.gpus % (w.tp * w.pp) != 0)
    return fmt::format("--tp {} x --pp {} does not divide --gpus {}", w.tp, w.pp, w.gpus);
  const bool layer_split = !is_training(w.task) && w.split == catalog::Split::layer;
  if (w.model.is_transformer() && layer_split) {
    if (w.tp * w.pp > w.model.layers)
      return fmt::format("{} GPUs exceed the model's {} layers", w.tp * w.pp, w.model.layers);
  } else if (w.model.is_transformer()) {
    if (w.model.heads % w.tp != 0)
      return fmt::format("--tp {} does not divide the model's {} attention heads", w.tp, w.model.heads);
    if (w.pp > w.model.layers) return fmt::format("--pp {} exceeds the model's {} layers", w.pp, w.model.layers);
  } else if (w.tp > 1 || w.pp > 1) {
    return fmt::format("--tp/--pp need a transformer model; {} has no layer shape", w.model.id);
  }
  return "";
}

int inference_tp(const Workload& w) {
  const int stage = std::max(1, w.gpus / std::max(1, w.pp));
  Workload probe = w;
  for (int tp = stage; tp > 1; --tp) {
    if (stage % tp) continue;
    probe.tp = tp;
    if (check_layout(probe).empty()) return tp;
  }
  return 1;
}

namespace {

std::optional<bool> parse_switch(const WorkloadInput& in, const std::string& key, const std::string& text) {
  if (text.empty()) return std::nullopt;
  const std::string v = util::lower(text);
  if (v == "on" || v == "true" || v == "yes" || v == "1") return true;
  if (v == "off" || v == "false" || v == "no" || v == "0") return false;
  bad(in, key, choices({"on", "off"}, text));
}

std::string recipe_ids() {
  std::vector<std::string> ids;
  for (const auto& r : catalog::recipes()) ids.push_back(r.id);
  return util::join(ids, ", ");
}

// The training options that change memory: a recipe's defaults, each overridden by its own flag;
// without a recipe, the Hugging Face Trainer's defaults (the most used trainer), said so.
void training_options(const WorkloadInput& in, Workload& w, WorkloadSet& s) {
  const bool lora = w.task == Task::lora || w.task == Task::qlora;
  const catalog::Recipe* recipe = nullptr;
  if (!in.recipe.empty()) {
    if (!is_training(w.task)) bad(in, "recipe", "a fine-tuning recipe applies to --task train, lora or qlora");
    std::vector<std::string> ids;
    for (const auto& r : catalog::recipes()) ids.push_back(r.id);
    recipe = catalog::find_recipe(util::lower(in.recipe));
    if (!recipe) bad(in, "recipe", choices(ids, in.recipe));
    w.recipe = recipe->id;
  }
  static const catalog::RecipeDefaults kNone;
  const catalog::RecipeDefaults& r = recipe ? (lora ? recipe->adapter : recipe->full) : kNone;
  std::vector<std::string> from_recipe;    // what the recipe set, in words
  std::vector<std::string> taken;          // gpuadvisor's own defaults taken, in words
  std::vector<std::string> adapter_taken;  // the same, from the adapter recipes all frameworks share

  auto only_training = [&](const std::string& key, const std::string& text) {
    if (!text.empty() && !is_training(w.task)) bad(in, key, "applies to training (--task train, lora or qlora)");
  };
  for (const auto& [key, text] :
       std::vector<std::pair<std::string, std::string>>{{"master_weights", in.master_weights},
                                                        {"gradient_dtype", in.gradient_dtype},
                                                        {"optimizer_in_backward", in.optimizer_in_backward},
                                                        {"chunked_loss", in.chunked_loss},
                                                        {"packed", in.packed},
                                                        {"activation_offload", in.activation_offload},
                                                        {"offload", in.offload}})
    only_training(key, text);
  if (!is_training(w.task)) return;

  // Optimizer.
  if (in.optimizer.empty()) {
    if (r.optimizer) {
      const auto* o = find_optimizer(*r.optimizer);
      if (!o) throw Error(fmt::format("recipe {}: unknown optimizer {}", recipe->id, *r.optimizer), Exit::internal);
      w.optimizer = std::string(o->id);
      from_recipe.push_back(fmt::format("optimizer {}", o->id));
    } else {
      taken.push_back("optimizer AdamW");
    }
  }
  // Master weights: an fp32 copy beside 16-bit weights, or none (pure bf16 training).
  if (!in.master_weights.empty()) {
    const std::string v = util::lower(in.master_weights);
    if (v == "fp32" || v == "on" || v == "true" || v == "yes")
      w.master_weights = true;
    else if (v == "none" || v == "off" || v == "false" || v == "no")
      w.master_weights = false;
    else
      bad(in, "master_weights", choices({"fp32", "none"}, in.master_weights));
  } else if (r.master_weights) {
    w.master_weights = *r.master_weights;
    from_recipe.push_back(w.master_weights ? "fp32 master weights" : "no fp32 master weights (pure bf16)");
  } else if (w.task == Task::train) {
    taken.push_back("fp32 master weights (mixed precision)");
  }
  if (!in.gradient_dtype.empty()) {
    const std::string v = util::lower(in.gradient_dtype);
    if (v != "bf16" && v != "fp16" && v != "fp32")
      bad(in, "gradient_dtype", choices({"bf16", "fp16", "fp32"}, in.gradient_dtype));
    w.fp32_gradients = v == "fp32";
  } else if (r.gradient_dtype) {
    w.fp32_gradients = *r.gradient_dtype == "fp32";
    if (w.fp32_gradients) from_recipe.push_back("fp32 gradients");
  }
  if (auto v = parse_switch(in, "optimizer_in_backward", in.optimizer_in_backward))
    w.optimizer_in_backward = *v;
  else if (r.optimizer_in_backward) {
    w.optimizer_in_backward = *r.optimizer_in_backward;
    if (w.optimizer_in_backward) from_recipe.push_back("optimizer step in the backward pass");
  }
  // Activation checkpointing: QLoRA runs always use it (the QLoRA paper's recipe and every
  // framework's QLoRA example); elsewhere the Trainer's default is off.
  if (in.checkpointing.empty()) {
    if (r.checkpointing) {
      w.checkpointing = *r.checkpointing;
      from_recipe.push_back(
          fmt::format("activation checkpointing {}", catalog::kCheckpointingNames.name(w.checkpointing)));
    } else if (lora) {
      w.checkpointing = catalog::Checkpointing::full;
      adapter_taken.push_back(
          "activation checkpointing full (on in the adapter recipes of torchtune, Unsloth, Axolotl and LLaMA-Factory)");
    } else {
      taken.push_back("activation checkpointing none");
    }
  }
  if (auto v = parse_switch(in, "activation_offload", in.activation_offload))
    w.activation_offload = *v;
  else if (r.activation_offload) {
    w.activation_offload = *r.activation_offload;
    if (w.activation_offload) from_recipe.push_back("checkpointed activations offloaded to host RAM");
  }
  if (w.activation_offload && w.checkpointing != catalog::Checkpointing::full)
    bad(in, "activation_offload", "offloads the checkpointed layer inputs: it needs --checkpointing full");
  if (auto v = parse_switch(in, "chunked_loss", in.chunked_loss))
    w.chunked_loss = *v;
  else if (r.chunked_loss) {
    w.chunked_loss = *r.chunked_loss;
    if (w.chunked_loss) from_recipe.push_back("chunked cross-entropy loss");
  } else if (lora) {
    w.chunked_loss = true;
    adapter_taken.push_back(
        "chunked cross-entropy loss (torchtune's and Unsloth's; the whole logits with --chunked-loss=off)");
  } else {
    taken.push_back("loss over the whole logits");
  }
  if (auto v = parse_switch(in, "packed", in.packed))
    w.packed = *v;
  else if (r.packed) {
    w.packed = *r.packed;
    if (w.packed) from_recipe.push_back("packed sequences");
  }
  // Sharding: a recipe's ZeRO stage applies on several GPUs only.
  if (in.zero.empty() && r.zero && w.dp() > 1) {
    w.zero = *r.zero;
    s.zero = true;
    from_recipe.push_back(fmt::format("ZeRO-{}", w.zero));
  }
  if (util::lower(in.zero) == "fsdp" || (r.sharding && *r.sharding == "fsdp")) w.fsdp = true;
  if (!in.offload.empty()) {
    // "params" (the flag's word), "parameters" and "all" are optimizer+params.
    static const std::map<std::string, catalog::Offload, std::less<>> words = {
        {"none", catalog::Offload::none},
        {"optimizer", catalog::Offload::optimizer},
        {"optimizer+params", catalog::Offload::optimizer_params},
        {"params", catalog::Offload::optimizer_params},
        {"parameters", catalog::Offload::optimizer_params},
        {"all", catalog::Offload::optimizer_params}};
    auto it = words.find(util::lower(in.offload));
    if (it == words.end()) bad(in, "offload", choices({"none", "optimizer", "params"}, in.offload));
    w.offload = it->second;
    s.offload = true;
  } else if (r.offload) {
    w.offload = *r.offload;
  }
  if (w.offload == catalog::Offload::optimizer_params && w.zero < 3) {
    if (!in.zero.empty()) bad(in, "offload", "offloading parameters needs ZeRO-3 or FSDP (--zero 3)");
    w.zero = 3;
    s.zero = true;
    w.assumptions.push_back("ZeRO-3: parameters offload to host RAM shards them (ZeRO-Infinity, FSDP CPU offload)");
  }
  if (w.optimizer_in_backward && w.zero > 0 && !w.fsdp)
    bad(in, "optimizer_in_backward",
        "DeepSpeed ZeRO steps the optimizer on its own partitions; use it without --zero or with FSDP");

  if (recipe) {
    const auto& src = recipe->sources.front();
    w.assumptions.push_back(fmt::format("recipe {}: {} ({})", recipe->id, util::join(from_recipe, ", "), src.title));
  }
  if (!adapter_taken.empty())
    w.assumptions.push_back(
        fmt::format("fine-tuning defaults: {} (--recipe for one framework's)", util::join(adapter_taken, "; ")));
  if (!taken.empty())
    w.assumptions.push_back(
        fmt::format("fine-tuning defaults: {}, as the Hugging Face Trainer does (the most used "
                    "trainer; --recipe {} for another framework's)",
                    util::join(taken, ", "), recipe_ids()));
}

}  // namespace

Workload make_workload(const WorkloadInput& in, const catalog::ModelSet& models, WorkloadSet* set) {
  Workload w;
  WorkloadSet local;
  WorkloadSet& s = set ? *set : local;

  // The model: a preset, a bare size, a Hugging Face config, and/or a weight file. A directory
  // given as --model-file is a model folder: its config.json and the weights beside it.
  std::string model_config = in.model_config;
  std::string model_file = in.model_file;
  std::vector<std::string> folder_notes;
  if (!model_file.empty()) {
    std::error_code ec;
    if (std::filesystem::is_directory(model_file, ec)) {
      const std::filesystem::path dir(model_file);
      if (model_config.empty() && std::filesystem::is_regular_file(dir / "config.json", ec))
        model_config = (dir / "config.json").string();
      std::vector<std::string> found;
      for (const char* name : {"model.safetensors.index.json", "model.safetensors"})
        if (std::filesystem::is_regular_file(dir / name, ec)) found.push_back((dir / name).string());
      if (found.empty()) {
        std::vector<std::string> ggufs, safetensors;
        for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
          std::string n = e.path().filename().string(), low = util::lower(n);
          if (!e.is_regular_file(ec)) continue;
          if (util::ends_with(low, ".gguf") &&
              (low.find("-of-") == std::string::npos || low.find("-00001-of-") != std::string::npos))
            ggufs.push_back(e.path().string());
          else if (util::ends_with(low, ".safetensors.index.json") || util::ends_with(low, ".safetensors"))
            safetensors.push_back(e.path().string());
        }
        std::sort(ggufs.begin(), ggufs.end());
        std::sort(safetensors.begin(), safetensors.end());
        if (safetensors.size() == 1)
          found = safetensors;
        else if (safetensors.empty() && ggufs.size() == 1)
          found = ggufs;
        else if (safetensors.size() + ggufs.size() > 1)
          throw Error(fmt::format("--model-file {}: the folder holds {} weight files ({}{}); give one of them",
                                  model_file, safetensors.size() + ggufs.size(),
                                  util::join(safetensors.empty() ? ggufs : safetensors, ", ").substr(0, 200),
                                  safetensors.size() + ggufs.size() > 3 ? ", ..." : ""));
      }
      if (found.empty() && model_config.empty())
        throw Error(
            fmt::format("--model-file {}: the folder has no config.json and no .safetensors, "
                        ".safetensors.index.json or .gguf weights",
                        model_file));
      model_file = found.empty() ? std::string() : found.front();
      folder_notes.push_back(
          fmt::format("model folder {}: {}{}", in.model_file, model_config.empty() ? "" : "config " + model_config,
                      model_file.empty() ? ", no weight files"
                                         : (model_config.empty() ? "" : ", ") + std::string("weights ") + model_file));
    }
  }
  if (!model_config.empty()) {
    auto doc = util::JsonDoc::load(model_config);
    if (!doc) throw Error(doc.error());
    w.model = catalog::model_from_hf_config(*doc);
    w.model.params = catalog::count_params(w.model);
    w.model.assumptions.push_back(fmt::format("model from {}: {} parameters counted from the architecture",
                                              model_config, util::format_number(w.model.params)));
  } else if (!in.model.empty()) {
    if (auto size = util::parse_count(in.model)) {
      if (*size < 1e3)
        bad(in, "model", fmt::format("a model of {} parameters is too small to plan GPUs for", util::quote(in.model)));
      w.model = catalog::model_from_size(*size);
    } else {
      auto m = models.resolve(in.model);
      // "1e300" or "-7B" read as a size gone wrong, not as an unknown preset name.
      if (!m && !in.model.empty() && (std::isdigit(static_cast<unsigned char>(in.model[0])) || in.model[0] == '-') &&
          (size.error().find("too large") != std::string::npos || size.error().find("negative") != std::string::npos))
        bad(in, "model", size.error());
      if (!m) bad(in, "model", m.error());
      w.model = **m;
    }
  } else if (model_file.empty()) {
    throw Error(
        "no model: give --model NAME|SIZE (e.g. --model llama-3.1-8b or --model 7B), --model-config or --model-file");
  }
  if (!model_file.empty()) {
    auto stats = catalog::read_model_file(model_file);
    if (w.model.id.empty()) {
      auto from_gguf = catalog::model_from_gguf(stats);
      if (stats.shape && from_gguf) {
        w.model = *from_gguf;
      } else {
        w.model.kind = catalog::ModelKind::decoder;
        w.model.assumptions.push_back(
            stats.shape ? from_gguf.error() + " (add --model or --model-config for it)"
                        : "no architecture given with --model-file: KV cache and activations are not estimated "
                          "(add --model or --model-config for the shape)");
      }
      w.model.id = std::filesystem::path(model_file).filename().string();
      w.model.name = w.model.id;
    }
    if (stats.params > 0) w.model.params = stats.params;
    if (!stats.note.empty()) w.model.assumptions.push_back(fmt::format("{}: {}", model_file, stats.note));
    w.model.tensors = stats;
  }
  for (auto& n : folder_notes) w.model.assumptions.insert(w.model.assumptions.begin(), n);
  for (auto& a : w.model.assumptions) w.assumptions.push_back(a);

  // Task and precision.
  if (!in.task.empty()) {
    auto t = task_from(in.task);
    if (!t) bad(in, "task", choices({"inference", "train", "lora", "qlora"}, in.task));
    w.task = *t;
    s.task = true;
  } else {
    w.assumptions.push_back("task: inference (set --task train|lora|qlora for training)");
  }
  if (!in.precision.empty()) {
    const auto* f = find_format(util::lower(in.precision));
    if (!f) bad(in, "precision", choices(names_of(kFormats), in.precision));
    w.precision = std::string(f->id);
    s.precision = true;
  } else {
    w.precision = default_precision(w.task);
    w.assumptions.push_back(fmt::format("precision: {} (the default for {})", w.precision, name(w.task)));
  }
  // QLoRA's base is NF4 by definition: a 16-bit precision names the compute dtype over it.
  if (w.task == Task::qlora && s.precision &&
      (w.precision == "bf16" || w.precision == "fp16" || w.precision == "fp32")) {
    w.assumptions.push_back(
        fmt::format("precision: {} compute over an NF4 base (QLoRA quantizes the base to NF4; "
                    "--precision int4, gptq-int4, awq-int4 or int8 for another base)",
                    w.precision));
    w.precision = "nf4";
  }
  const auto& fmt_ = w.format();
  if (w.task == Task::train && fmt_.bits < 8)
    bad(in, "precision",
        fmt::format(
            "full training needs fp32, tf32, fp16, bf16 or fp8 weights, got {} (4-bit bases train with --task qlora)",
            w.precision));
  if (w.task == Task::train && fmt_.id == "int8")
    bad(in, "precision",
        "full training needs fp32, tf32, fp16, bf16 or fp8 weights, got int8 (8-bit bases train with --task lora)");
  if (w.task == Task::qlora && fmt_.bits > 8.5)
    bad(in, "precision",
        fmt::format("QLoRA trains adapters on a quantized base (nf4, int4, gptq-int4, awq-int4, int8), got {}",
                    w.precision));

  if (!in.kv_precision.empty()) {
    std::string k = util::lower(in.kv_precision);
    static const std::vector<std::string> kv = {"fp32", "fp16", "bf16", "fp8", "int8", "int4"};
    if (std::find(kv.begin(), kv.end(), k) == kv.end()) bad(in, "kv_precision", choices(kv, in.kv_precision));
    w.kv_precision = k;
  }
  // Denoising steps (diffusion models only).
  if (const auto& v = w.model.vision; v && v->diffusion) {
    w.steps = v->diffusion->default_steps;
    if (!in.steps.empty()) {
      const auto n = util::parse_number(in.steps);
      if (!n || *n != std::floor(*n) || *n < 1 || *n > 1000)
        bad(in, "steps",
            fmt::format("expected a whole number of denoising steps from 1 to 1,000, got {}", util::quote(in.steps)));
      w.steps = static_cast<int>(*n);
    } else if (!is_training(w.task)) {
      w.assumptions.push_back(fmt::format("denoising steps: {} per image (--steps)", w.steps));
    }
  } else if (!in.steps.empty()) {
    bad(in, "steps",
        fmt::format("only diffusion models (sd-1.5, sdxl) denoise in steps; {} runs one forward pass per {}",
                    w.model.name, w.model.vision ? "image" : "token"));
  }
  // Engine (inference of language models only).
  if (!in.engine.empty() && !w.llm()) {
    bad(in, "engine",
        fmt::format("names a language-model engine; {} is estimated as {} runs", w.model.name,
                    w.model.vision->diffusion ? "diffusers (PyTorch)" : "TensorRT"));
  } else if (!in.engine.empty()) {
    if (is_training(w.task))
      bad(in, "engine", "names an inference engine; training speed and memory follow --recipe and --zero");
    std::string e = util::lower(in.engine);
    if (e == "llamacpp" || e == "llama-cpp" || e == "llama-bench" || e == "llama-server") e = "llama.cpp";
    if (e == "tensorrt-llm" || e == "trtllm" || e == "tensorrt") e = "trt-llm";
    if (e == "hf" || e == "hf-transformers") e = "transformers";
    if (e == "exllama" || e == "exl2") e = "exllamav2";
    auto id = catalog::kEngineNames.parse(e);
    if (!id) bad(in, "engine", choices(catalog::kEngineNames.list(), in.engine));
    w.engine = *id;
    s.engine = true;
  } else if (!is_training(w.task) && w.llm()) {
    w.engine = default_engine(fmt_);
    std::string why = fmt::format("the default for {} weights", w.precision);
    // Where the default does not keep the KV cache asked for, the first engine that runs both.
    if (!catalog::engine(w.engine).runs_kv(w.kv_precision))
      if (const auto* e = first_engine_for(w.precision, w.kv_precision)) {
        why = fmt::format("{} keeps no {} KV cache", catalog::name(w.engine), w.kv_precision);
        w.engine = e->id;
      }
    w.assumptions.push_back(fmt::format("engine: {} ({}; --engine to choose)", catalog::name(w.engine), why));
  }
  if (!is_training(w.task)) {
    const auto& info = catalog::engine(w.engine);
    w.split = info.split;
    if (!in.split.empty()) {
      std::string sp = util::lower(in.split);
      if (sp == "row" || sp == "tp" || sp == "tensor-parallel") sp = "tensor";
      auto v = catalog::kSplitNames.parse(sp);
      if (!v) bad(in, "split", choices(catalog::kSplitNames.list(), in.split));
      if (!info.offers(*v))
        bad(in, "split", fmt::format("{} does not split a model by {}", catalog::name(w.engine), sp));
      w.split = *v;
    }
    if (!info.runs_format(w.precision)) {
      std::vector<std::string> can;
      for (const auto& other : catalog::engines())
        if (other.runs_format(w.precision)) can.emplace_back(catalog::name(other.id));
      bad(in, s.engine ? "engine" : "precision",
          fmt::format("{} does not run {} weights; {} {}", catalog::name(w.engine), w.precision,
                      can.size() == 1 ? "the engine that does is" : "engines that do:", util::join_list(can, "and")));
    }
    if (!info.runs_kv(w.kv_precision))
      bad(in, "kv_precision",
          fmt::format("{} keeps no {} KV cache; it offers {}", catalog::name(w.engine), w.kv_precision,
                      util::join_list(info.kv_formats, "and")));
  }

  // Optimizer (training only).
  if (!in.optimizer.empty()) {
    const auto* o = find_optimizer(util::lower(in.optimizer));
    if (!o) bad(in, "optimizer", choices(names_of(kOptimizers), in.optimizer));
    w.optimizer = std::string(o->id);
  }

  // Sizes.
  if (!in.batch.empty()) {
    w.batch = need(in, "batch", util::parse_int(in.batch, 1, 1'000'000));
    s.batch = true;
  } else {
    w.assumptions.push_back("batch: 1");
  }
  const long long ctx_default = is_training(w.task) ? 2048 : 4096;
  if (!in.seq_len.empty()) {
    w.seq_len = need(in, "seq_len", util::parse_int(in.seq_len, 1, 100'000'000));
    s.seq_len = true;
    if (w.model.max_context > 0 && w.seq_len > w.model.max_context)
      w.assumptions.push_back(
          fmt::format("sequence length {} exceeds the model's trained context of {}", w.seq_len, w.model.max_context));
  } else if (w.model.is_transformer()) {
    w.seq_len = w.model.max_context > 0 ? std::min<long long>(ctx_default, w.model.max_context) : ctx_default;
    w.assumptions.push_back(
        fmt::format("{}: {} tokens", is_training(w.task) ? "sequence length" : "context", w.seq_len));
  }
  if (!in.gpus.empty()) {
    w.gpus = static_cast<int>(need(in, "gpus", util::parse_int(in.gpus, 1, 100'000)));
    s.gpus = true;
  }
  if (!in.tp.empty()) {
    w.tp = static_cast<int>(need(in, "tp", util::parse_int(in.tp, 1, 100'000)));
    s.tp = true;
  }
  if (!in.pp.empty()) {
    w.pp = static_cast<int>(need(in, "pp", util::parse_int(in.pp, 1, 100'000)));
    s.pp = true;
  }
  if (!in.zero.empty()) {
    std::string z = util::lower(in.zero);
    if (z == "fsdp")
      w.zero = 3;
    else
      w.zero = static_cast<int>(need(in, "zero", util::parse_int(in.zero, 0, 3)));
    if (!is_training(w.task)) bad(in, "zero", "ZeRO shards training state; it does not apply to --task inference");
    s.zero = true;
  }
  if (!in.tp.empty() || !in.pp.empty() || !in.gpus.empty()) {
    // Inference over several GPUs splits the model by tensor parallelism unless told otherwise.
    if (!is_training(w.task) && in.tp.empty() && in.pp.empty()) {
      w.tp = inference_tp(w);
      if (w.split == catalog::Split::layer && w.tp > 1)
        w.assumptions.push_back(
            fmt::format("layout: {} splits the layers over {} GPUs (one stream passes through "
                        "them in turn)",
                        catalog::name(w.engine), w.tp));
      else if (w.tp < w.gpus)
        w.assumptions.push_back(fmt::format(
            "layout: tensor parallel {} x {} replicas: {} over {} GPUs (set --tp to choose)", w.tp, w.gpus / w.tp,
            w.model.is_transformer() ? fmt::format("the model's {} attention heads do not split", w.model.heads)
                                     : std::string("a model without a layer shape does not split"),
            w.gpus));
    }
    if (auto msg = check_layout(w); !msg.empty()) bad(in, !in.tp.empty() ? "tp" : !in.pp.empty() ? "pp" : "gpus", msg);
  }

  if (!in.checkpointing.empty()) {
    // on/true and off/false are full and none.
    std::string c = util::lower(in.checkpointing);
    auto v = c == "off" || c == "false" ? std::optional(catalog::Checkpointing::none)
             : c == "on" || c == "true" ? std::optional(catalog::Checkpointing::full)
                                        : catalog::kCheckpointingNames.parse(c);
    if (!v) bad(in, "checkpointing", choices(catalog::kCheckpointingNames.list(), in.checkpointing));
    w.checkpointing = *v;
    s.checkpointing = true;
  }
  if (!in.flash_attention.empty()) {
    s.flash_attention = true;
    std::string f = util::lower(in.flash_attention);
    if (f == "on" || f == "true" || f == "yes" || f == "1")
      w.flash_attention = true;
    else if (f == "off" || f == "false" || f == "no" || f == "0")
      w.flash_attention = false;
    else
      bad(in, "flash_attention", choices({"on", "off"}, in.flash_attention));
  } else if (w.model.is_transformer()) {
    w.assumptions.push_back("flash attention: on (no s x s attention scores kept)");
  }

  if (w.task == Task::lora || w.task == Task::qlora) {
    if (!in.lora_rank.empty())
      w.lora_rank = static_cast<int>(need(in, "lora_rank", util::parse_int(in.lora_rank, 1, 65536)));
    std::string t =
        in.lora_targets.empty() ? (w.task == Task::qlora ? "all" : "q,k,v,o") : util::lower(in.lora_targets);
    if (t == "all") t = "q,k,v,o,gate,up,down";
    if (t == "attn" || t == "attention") t = "q,k,v,o";
    if (t == "mlp") t = "gate,up,down";
    for (auto& x : util::split(t, ',')) {
      std::string v = util::trim(x);
      if (util::ends_with(v, "_proj")) v = v.substr(0, v.size() - 5);
      if (std::find(kLoraTargets.begin(), kLoraTargets.end(), v) == kLoraTargets.end())
        bad(in, "lora_targets", choices({"q", "k", "v", "o", "gate", "up", "down", "all", "attn", "mlp"}, v));
      if (std::find(w.lora_targets.begin(), w.lora_targets.end(), v) == w.lora_targets.end())
        w.lora_targets.push_back(v);
    }
    if (in.lora_rank.empty() || in.lora_targets.empty())
      w.assumptions.push_back(fmt::format("LoRA rank {} on {}", w.lora_rank, util::join(w.lora_targets, ",")));
  } else if (!in.lora_rank.empty() || !in.lora_targets.empty()) {
    bad(in, !in.lora_rank.empty() ? "lora_rank" : "lora_targets", "applies to --task lora or qlora");
  }

  training_options(in, w, s);

  if (!in.gpu_layers.empty()) {
    if (is_training(w.task)) bad(in, "gpu_layers", "llama.cpp's partial offload applies to --task inference");
    if (!w.model.is_transformer() || w.model.layers <= 0)
      bad(in, "gpu_layers", "needs a transformer model with layers");
    long long n = need(in, "gpu_layers", util::parse_int(in.gpu_layers, 0, 100'000));
    if (w.tp > 1 || w.pp > 1 || w.gpus > 1)
      bad(in, "gpu_layers", "partial offload is planned for one GPU; drop --gpus/--tp/--pp");
    if (n > w.model.layers) {
      w.assumptions.push_back(fmt::format("--gpu-layers {}: all {} layers on the GPU", n, w.model.layers));
      n = w.model.layers;
    }
    w.gpu_layers = static_cast<int>(n);
    if (n < w.model.layers) {
      if (in.host_bandwidth.empty()) {
        w.host_bandwidth = kDefaultHostBandwidth;
        w.assumptions.push_back(
            "host RAM: 89.6 GB/s (two channels of DDR5-5600) for the layers on the CPU; --host-bandwidth for yours "
            "(channels x MT/s x 8 bytes)");
      }
    }
  }
  if (auto v = parse_switch(in, "cpu_experts", in.cpu_experts); v && *v) {
    if (is_training(w.task)) bad(in, "cpu_experts", "llama.cpp's --cpu-moe applies to --task inference");
    if (!w.model.moe || catalog::routed_expert_params(w.model) <= 0)
      bad(in, "cpu_experts", fmt::format("{} has no routed experts to keep on the CPU", w.model.name));
    if (!in.gpu_layers.empty()) bad(in, "cpu_experts", "give --gpu-layers or --cpu-experts, not both");
    if (w.engine != catalog::Engine::llamacpp)
      bad(in, "cpu_experts",
          fmt::format(
              "keeping experts on the CPU is llama.cpp's --cpu-moe, which runs GGUF weights, not {} (--precision "
              "q4_k_m, for one)",
              w.precision));
    if (w.tp > 1 || w.pp > 1 || w.gpus > 1)
      bad(in, "cpu_experts", "experts on the CPU are planned for one GPU; drop --gpus/--tp/--pp");
    w.cpu_experts = true;
    if (in.host_bandwidth.empty()) {
      w.host_bandwidth = kDefaultHostBandwidth;
      w.assumptions.push_back(
          "host RAM: 89.6 GB/s (two channels of DDR5-5600) for the experts on the CPU; --host-bandwidth for yours "
          "(channels x MT/s x 8 bytes)");
    }
  }
  if (!in.host_bandwidth.empty()) {
    if (in.gpu_layers.empty() && !w.cpu_experts)
      bad(in, "host_bandwidth", "applies with --gpu-layers or --cpu-experts (llama.cpp weights left on the CPU)");
    std::string v = in.host_bandwidth;
    for (std::string_view unit : {"GB/s", "gb/s", "GBps"})
      if (v.size() > unit.size() && v.ends_with(unit)) v.resize(v.size() - unit.size());
    auto gbs = util::parse_number(v);
    if (!gbs || !(*gbs >= 1 && *gbs <= 100'000))
      bad(in, "host_bandwidth",
          fmt::format("expected host RAM bandwidth in GB/s from 1 to 100,000 (e.g. 89.6 for two channels of "
                      "DDR5-5600), got {}",
                      util::quote(in.host_bandwidth)));
    w.host_bandwidth = *gbs * 1e9;
  }
  if (!in.tokens.empty()) {
    w.tokens = need(in, "tokens", util::parse_count(in.tokens));
    if (w.tokens <= 0) bad(in, "tokens", "must be positive");
  }
  if (!in.epochs.empty() && in.dataset_tokens.empty())
    bad(in, "epochs", "counts passes over a dataset: add --dataset-tokens (its size in tokens, like 2B)");
  if (!in.dataset_tokens.empty()) {
    if (!in.tokens.empty()) bad(in, "dataset_tokens", "give --tokens, or --dataset-tokens with --epochs, not both");
    const double size = need(in, "dataset_tokens", util::parse_count(in.dataset_tokens));
    if (size <= 0) bad(in, "dataset_tokens", "must be positive");
    double epochs = 1;
    if (!in.epochs.empty()) {
      epochs = need(in, "epochs", util::parse_number(in.epochs));
      if (!(epochs > 0 && epochs <= 1000))
        bad(in, "epochs",
            fmt::format("expected a number of passes from 0 to 1,000 (e.g. 3 or 0.5), got {}", util::quote(in.epochs)));
    }
    w.tokens = epochs * size;
    w.assumptions.push_back(fmt::format("training tokens: {} {} over {} dataset tokens = {}{}",
                                        fmt::format("{:g}", epochs), epochs == 1 ? "epoch" : "epochs",
                                        util::format_count(size), util::format_count(w.tokens),
                                        in.epochs.empty() ? " (--epochs)" : ""));
  }
  if (!in.headroom.empty()) {
    std::string h = in.headroom;
    const bool pct = h.back() == '%';
    if (pct) h.pop_back();
    auto v = util::parse_number(h);
    if (!v || *v < 0 || (pct ? *v : *v * 100) >= 90)
      bad(in, "headroom",
          fmt::format("expected a share of GPU memory to keep free, like 10% or 0.1 (0 to below 90%), got {}",
                      util::quote(in.headroom)));
    w.headroom = pct ? *v / 100 : *v;
  }
  if (!in.mfu.empty()) {
    double m = need(in, "mfu", util::parse_number(in.mfu));
    if (!(m > 0 && m <= 1))
      bad(in, "mfu", fmt::format("expected a utilisation between 0 and 1 (e.g. 0.4), got {}", util::quote(in.mfu)));
    w.mfu = m;
  }
  return w;
}

WorkloadInput merge_profile(const util::JsonDoc& doc, const std::string& pointer, WorkloadInput flags,
                            const std::vector<std::string>& skip) {
  const util::Json& root = pointer.empty() ? doc.root() : doc.root().at(util::Json::json_pointer(pointer));
  util::Fields f(doc, root, pointer, "profile");
  static const std::vector<std::string> keys = {"model",
                                                "model_config",
                                                "model_file",
                                                "task",
                                                "precision",
                                                "optimizer",
                                                "batch",
                                                "seq_len",
                                                "gpus",
                                                "zero",
                                                "tp",
                                                "pp",
                                                "checkpointing",
                                                "flash_attention",
                                                "lora_rank",
                                                "lora_targets",
                                                "kv_precision",
                                                "tokens",
                                                "mfu",
                                                "recipe",
                                                "master_weights",
                                                "gradient_dtype",
                                                "optimizer_in_backward",
                                                "chunked_loss",
                                                "packed",
                                                "activation_offload",
                                                "offload",
                                                "gpu_layers",
                                                "host_bandwidth",
                                                "cpu_experts",
                                                "engine",
                                                "split",
                                                "headroom",
                                                "steps",
                                                "epochs",
                                                "dataset_tokens"};
  const std::filesystem::path base = doc.origin() == "<stdin>" ? "" : std::filesystem::path(doc.origin()).parent_path();
  // "file:line" of each field; the fields of a one-line document (a batch line) share one.
  int at_line = -1;
  std::string at;
  for (auto& [key, val] : root.items()) {
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::vector<std::string> known = keys;
      known.insert(known.end(), skip.begin(), skip.end());
      f.fail(key, "unknown field" + util::did_you_mean(key, known));
    }
    std::string text;
    if (val.is_string())
      text = val.get<std::string>();
    else if (val.is_number_integer() || val.is_number_unsigned())
      text = val.dump();
    else if (val.is_number_float())
      text = fmt::format("{}", val.get<double>());
    else if (val.is_boolean())
      text = val.get<bool>() ? "on" : "off";
    else if (val.is_array() && key == "lora_targets") {
      std::vector<std::string> parts;
      for (const auto& x : val) {
        if (!x.is_string()) f.fail(key, "expected an array of strings, got " + util::json_snippet(val));
        parts.push_back(x.get<std::string>());
      }
      text = util::join(parts, ",");
    } else if (val.is_null()) {
      continue;
    } else {
      f.fail(key, "expected a string or a number, got " + util::json_snippet(val));
    }
    if ((key == "model_config" || key == "model_file") && !text.empty() && std::filesystem::path(text).is_relative())
      text = (base / text).string();
    // Flags win over the profile.
    std::string WorkloadInput::*field = nullptr;
    static const std::vector<std::pair<std::string, std::string WorkloadInput::*>> members = {
        {"model", &WorkloadInput::model},
        {"model_config", &WorkloadInput::model_config},
        {"model_file", &WorkloadInput::model_file},
        {"task", &WorkloadInput::task},
        {"precision", &WorkloadInput::precision},
        {"optimizer", &WorkloadInput::optimizer},
        {"batch", &WorkloadInput::batch},
        {"seq_len", &WorkloadInput::seq_len},
        {"gpus", &WorkloadInput::gpus},
        {"zero", &WorkloadInput::zero},
        {"tp", &WorkloadInput::tp},
        {"pp", &WorkloadInput::pp},
        {"checkpointing", &WorkloadInput::checkpointing},
        {"flash_attention", &WorkloadInput::flash_attention},
        {"lora_rank", &WorkloadInput::lora_rank},
        {"lora_targets", &WorkloadInput::lora_targets},
        {"kv_precision", &WorkloadInput::kv_precision},
        {"tokens", &WorkloadInput::tokens},
        {"mfu", &WorkloadInput::mfu},
        {"recipe", &WorkloadInput::recipe},
        {"master_weights", &WorkloadInput::master_weights},
        {"gradient_dtype", &WorkloadInput::gradient_dtype},
        {"optimizer_in_backward", &WorkloadInput::optimizer_in_backward},
        {"chunked_loss", &WorkloadInput::chunked_loss},
        {"packed", &WorkloadInput::packed},
        {"activation_offload", &WorkloadInput::activation_offload},
        {"offload", &WorkloadInput::offload},
        {"gpu_layers", &WorkloadInput::gpu_layers},
        {"host_bandwidth", &WorkloadInput::host_bandwidth},
        {"cpu_experts", &WorkloadInput::cpu_experts},
        {"engine", &WorkloadInput::engine},
        {"split", &WorkloadInput::split},
        {"headroom", &WorkloadInput::headroom},
        {"steps", &WorkloadInput::steps},
        {"epochs", &WorkloadInput::epochs},
        {"dataset_tokens", &WorkloadInput::dataset_tokens}};
    for (const auto& [k, m] : members)
      if (k == key) field = m;
    if (field && (flags.*field).empty()) {
      flags.*field = text;
      const std::string field_pointer = f.pointer(key);
      if (const int line = doc.line_of(field_pointer); line != at_line) {
        at_line = line;
        at = doc.where(field_pointer);
      }
      flags.where[key] = at + ": field '" + key + "'";
    }
  }
  return flags;
}

void write(util::JsonSink& o, const Workload& w) {
  o("model", w.model.id);
  o("model_name", w.model.name);
  if (w.model.params > 0)
    o("params", util::json_number(w.model.params));
  else
    o("params", util::Json(nullptr));  // unknown: an index whose shards are not beside it
  o("task", name(w.task));
  o("precision", w.precision);
  o("bits_per_weight", w.format().bits);
  if (is_training(w.task)) o("optimizer", w.optimizer);
  o("batch", w.batch);
  o("seq_len", w.seq_len);
  o("gpus", w.gpus);
  o("tp", w.tp);
  o("pp", w.pp);
  o("dp", w.dp());
  if (is_training(w.task)) {
    o("zero", w.zero);
    o("checkpointing", catalog::kCheckpointingNames.name(w.checkpointing));
    if (!w.recipe.empty()) o("recipe", w.recipe);
    o("master_weights", w.task == Task::train && w.master_weights && w.format().bits < 32);
    o("gradient_dtype", w.fp32_gradients || w.format().bits >= 32 ? "fp32" : w.precision == "fp16" ? "fp16" : "bf16");
    o("optimizer_in_backward", w.optimizer_in_backward);
    o("chunked_loss", w.chunked_loss);
    o("packed", w.packed);
    o("activation_offload", w.activation_offload);
    o("offload", catalog::kOffloadNames.name(w.offload));
  }
  if (w.gpu_layers) o("gpu_layers", *w.gpu_layers);
  if (w.host_bandwidth > 0) o("host_bandwidth_gbs", w.host_bandwidth / 1e9);
  if (w.cpu_experts) o("cpu_experts", true);
  o("flash_attention", w.flash_attention);
  if (w.task == Task::lora || w.task == Task::qlora) {
    o("lora_rank", w.lora_rank);
    o("lora_targets", w.lora_targets);
  }
  if (!is_training(w.task) && w.llm()) {
    o("kv_precision", w.kv_precision);
    o("engine", catalog::name(w.engine));
    o("split", catalog::kSplitNames.name(w.split));
  }
  if (w.steps > 0 && !is_training(w.task)) o("steps", w.steps);
  if (w.tokens > 0) o("tokens", util::json_number(w.tokens));
}

util::Json to_json(const Workload& w) {
  return util::json_tree([&](util::JsonSink& o) { write(o, w); });
}

}  // namespace gpuadvisor::estimate
