#pragma once
/// The workload: one struct shared by every command that takes one (memory, estimate, cost,
/// compare, recommend, check). Built from flags and/or a JSON profile, validated, with the
/// defaults it took recorded as assumptions.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/engine.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/catalog/recipe.h"
#include "gpuadvisor/util/json.h"

namespace gpuadvisor::util {
class JsonSink;
}

namespace gpuadvisor::estimate {

enum class Task { inference, train, lora, qlora };
std::string_view name(Task t);
std::optional<Task> task_from(std::string_view s);
inline bool is_training(Task t) { return t != Task::inference; }

/// How weights are stored, and the precision the math runs at.
struct WeightFormat {
  std::string_view id;
  double bits;          ///< average bits per weight, quantization scales included
  double payload_bits;  ///< bits of the quantized values alone (the rest are constants)
  catalog::Precision compute;
  bool embeddings_16bit;  ///< embeddings and LM head stay 16-bit (bitsandbytes, GPTQ, AWQ)
  std::string_view note;  ///< where the bits figure comes from
  bool gguf = false;      ///< a llama.cpp GGUF format (llama.cpp is the engine that runs it)
  /// Decode kernels with their own fitted factor against 16-bit weights on the same engine: GGUF
  /// quantized blocks, and the weight-only integer kernels of GPTQ, AWQ, NF4 and int4.
  enum class Kernel { dense, gguf_quant, weight_only } kernel = Kernel::dense;
};
std::span<const WeightFormat> weight_formats();
const WeightFormat* find_format(std::string_view id);

/// Optimizer state per trainable parameter, beyond the weights and gradients.
struct OptimizerInfo {
  std::string_view id;
  double master_bytes;  ///< fp32 master copy in mixed precision (0 in pure fp32 training)
  double state_bytes;   ///< momentum/variance etc. in fp32 (or 8-bit) beside fp32 master weights
  bool eight_bit;       ///< 8-bit states (bitsandbytes): their size does not follow the weights' dtype
  bool paged;           ///< bitsandbytes paged optimizer: states in CUDA unified memory, paged to host RAM
  std::string_view note;
};
std::span<const OptimizerInfo> optimizers();
const OptimizerInfo* find_optimizer(std::string_view id);

/// What the user asked for, as text, before validation (flags or profile fields).
struct WorkloadInput {
  std::string model, model_config, model_file;
  std::string task, precision, optimizer, batch, seq_len, gpus, zero, tp, pp, checkpointing, flash_attention;
  std::string lora_rank, lora_targets, kv_precision, tokens, mfu;
  std::string recipe, master_weights, gradient_dtype, optimizer_in_backward, chunked_loss, packed, activation_offload;
  std::string offload, gpu_layers, cpu_experts;
  std::string host_bandwidth;          ///< GB/s of host RAM, for the layers --gpu-layers leaves on the CPU
  std::string engine;                  ///< an inference engine (data/engines.json)
  std::string split;                   ///< layer or tensor: how the engine splits a model over GPUs
  std::string headroom;                ///< share of GPU memory to keep free (10%, 0.1)
  std::string steps;                   ///< denoising steps per image (diffusion models)
  std::string epochs, dataset_tokens;  ///< training tokens as passes over a dataset, instead of tokens
  std::string profile;                 ///< --profile FILE
  /// Where each field came from, for messages: "--batch" or "profile.json:4: field 'batch'".
  std::map<std::string, std::string> where;
  /// The label for field `key` (a flag name unless a profile set it).
  std::string label(const std::string& key) const;
};

/// Host RAM bandwidth when --host-bandwidth is not given: two channels of DDR5-5600, the desktop
/// host of data/platforms.json (2 x 64-bit channels x 5,600 MT/s = 89.6 GB/s).
inline constexpr double kDefaultHostBandwidth = 89.6e9;

struct Workload {
  catalog::Model model;
  Task task = Task::inference;
  std::string precision;  ///< a WeightFormat id
  std::string optimizer = "adamw";
  long long batch = 1;
  long long seq_len = 0;
  int gpus = 1;
  int zero = 0;
  int tp = 1;
  int pp = 1;
  catalog::Checkpointing checkpointing = catalog::Checkpointing::none;
  bool flash_attention = true;
  int lora_rank = 16;
  std::vector<std::string> lora_targets;  ///< q, k, v, o, gate, up, down
  std::string kv_precision = "fp16";
  double tokens = 0;  ///< training tokens, 0 = not given
  std::optional<double> mfu;
  std::string recipe;                                 ///< a data/recipes.json id, or empty
  bool master_weights = true;                         ///< fp32 master copy beside 16-bit weights (mixed precision)
  bool fp32_gradients = false;                        ///< gradients kept in fp32 (Megatron-LM's main_grad)
  bool optimizer_in_backward = false;                 ///< each parameter stepped as its gradient is made
  bool chunked_loss = false;                          ///< logits and loss computed in chunks of tokens
  bool packed = false;                                ///< sequences packed to seq_len (no padding)
  bool activation_offload = false;                    ///< checkpointed layer inputs kept in host RAM
  bool fsdp = false;                                  ///< ZeRO-3 as PyTorch FSDP (units gathered) rather than DeepSpeed
  catalog::Offload offload = catalog::Offload::none;  ///< ZeRO-Offload, FSDP CPU offload
  std::optional<int> gpu_layers;                      ///< llama.cpp -ngl: layers on the GPU, the rest in host RAM
  /// Theoretical bandwidth of the host RAM the CPU layers are read from, bytes/s (--host-bandwidth;
  /// kDefaultHostBandwidth without it).
  double host_bandwidth = 0;
  /// llama.cpp --cpu-moe: a mixture-of-experts model's routed experts in host RAM, the rest on the GPU.
  bool cpu_experts = false;
  catalog::Engine engine = catalog::Engine::vllm;  ///< the inference engine (inference only)
  catalog::Split split = catalog::Split::tensor;   ///< how the engine splits one replica over tp GPUs
  std::optional<double> headroom;                  ///< --headroom: share of GPU memory kept free
  int steps = 0;                         ///< denoising steps per image of a diffusion model; 0 for every other model
  std::vector<std::string> assumptions;  ///< every default taken, in words

  const WeightFormat& format() const;
  /// A language model, whose inference runs on an LLM engine (vision models run as TensorRT or
  /// diffusers runs, outside catalog::Engine).
  bool llm() const { return !model.vision || model.is_transformer(); }
  int dp() const { return gpus / (tp * pp); }
};

/// Which fields were set explicitly (so that recommend can vary the others).
struct WorkloadSet {
  bool precision = false, gpus = false, batch = false, seq_len = false, task = false, tp = false, zero = false;
  bool pp = false, checkpointing = false, flash_attention = false, offload = false, engine = false;
};

/// Validates the input and fills defaults. Throws Error (exit 2) naming the flag or profile field.
Workload make_workload(const WorkloadInput& in, const catalog::ModelSet& models, WorkloadSet* set = nullptr);

/// Reads a profile (JSON workload) into WorkloadInput; flags already set in `flags` win.
/// Keys in `skip` belong to the caller (e.g. "gpu" in a batch line) and are left alone.
WorkloadInput merge_profile(const util::JsonDoc& doc, const std::string& pointer, WorkloadInput flags,
                            const std::vector<std::string>& skip = {});

/// The engine a format runs on when --engine is not given: GGUF on llama.cpp, NF4 on transformers
/// (bitsandbytes), everything else on vLLM.
catalog::Engine default_engine(const WeightFormat& f);

/// The default weight format for a task (fp16 inference, bf16 training, nf4 for QLoRA).
std::string default_precision(Task t);

/// Defaults that depend on the GPU: FlashAttention-2 runs on Ampere and newer NVIDIA GPUs (Dao,
/// "FlashAttention-2", 2023), so on Volta and Turing attention scores are kept unless
/// --flash-attention says otherwise. Recorded in the assumptions.
void apply_gpu_defaults(Workload& w, const WorkloadSet& set, const catalog::Gpu& gpu);

/// Re-checks the parallel layout after a change of gpus/tp/pp (recommend varies them).
/// Returns an error message or "".
std::string check_layout(const Workload& w);

/// Inference over w.gpus GPUs (w.pp stages) when --tp is not given: the widest tensor-parallel
/// degree that divides the GPUs of a stage and passes check_layout (the model's heads), at least 1;
/// the other GPUs hold replicas. 12 heads over 8 GPUs: tp 4 x 2 replicas; a CNN: tp 1.
/// make_workload, fit and recommend all take the layout from here.
int inference_tp(const Workload& w);

util::Json to_json(const Workload& w);
/// The same members written to a sink (util/json_sink.h): to_json(w) is write() into a JsonTree.
void write(util::JsonSink& o, const Workload& w);

}  // namespace gpuadvisor::estimate
