#pragma once
/// The memory estimator: per GPU, what a workload needs, line by line, with the formula behind
/// each line and the assumptions made (docs/methodology.md, "Memory").
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/estimate/workload.h"

namespace gpuadvisor::util {
class JsonSink;
}

namespace gpuadvisor::estimate {

/// The lines of an estimate, in the order they are listed.
enum class MemoryLineId {
  weights,
  quantization_constants,
  gradients,
  master_weights,
  optimizer_state,
  adapters,
  activations,
  logits,
  kv_cache,
  gather_buffers,
  cuda_context,
  fragmentation
};
inline constexpr std::size_t kMemoryLineCount = 12;
/// The line's id in MemoryLine::id and in JSON ("kv_cache").
std::string_view line_id(MemoryLineId id);

struct MemoryLine {
  MemoryLineId id;
  std::string label;  ///< for people
  double per_gpu_bytes = 0;
  double total_bytes = 0;  ///< summed over all GPUs of the job
  std::string formula;     ///< how it was computed, in one line
  bool host = false;       ///< held in host RAM (offload, paged optimizer, llama.cpp CPU layers), not on the GPU
};

struct MemoryEstimate {
  std::vector<MemoryLine> lines;
  double per_gpu_bytes = 0;       ///< GPU lines of one GPU
  double total_bytes = 0;         ///< GPU lines over all GPUs
  double per_gpu_host_bytes = 0;  ///< host RAM lines of one GPU's process
  double host_bytes = 0;          ///< host RAM lines over all processes of the job
  bool activations_known = true;  ///< false for vision presets without a published figure
  std::vector<std::string> assumptions;

  double line(MemoryLineId id) const;       ///< per-GPU bytes of a line on the GPU, 0 if absent
  double host_line(MemoryLineId id) const;  ///< per-GPU-process bytes of a line in host RAM, 0 if absent
  /// The same by the line's JSON id ("kv_cache"); an unknown id is a programming error (throws).
  double line(std::string_view id) const;
  double host_line(std::string_view id) const;
};

/// The breakdown for a workload on `w.gpus` GPUs. Pure: no I/O. Without `explain` the lines
/// carry no formulas (the numbers are the same; searches and batch runs skip the text).
MemoryEstimate estimate_memory(const Workload& w, const catalog::Efficiency& eff, bool explain = true);

/// The numbers of estimate_memory without its text: per-GPU bytes by line (0 when absent), and
/// their sum, equal to the bit to MemoryEstimate::per_gpu_bytes. No allocation: this is what the
/// searches (fit, plan_layout) and the speed estimator run, many times per candidate.
struct MemoryBytes {
  std::array<double, kMemoryLineCount> lines{};  ///< GPU bytes by line
  double per_gpu_bytes = 0;
  double host_bytes = 0;                              ///< host RAM of one GPU's process
  std::array<double, kMemoryLineCount> host_lines{};  ///< host RAM bytes by line
  bool activations_known = true;
  double operator[](MemoryLineId id) const { return lines[static_cast<std::size_t>(id)]; }
  double host(MemoryLineId id) const { return host_lines[static_cast<std::size_t>(id)]; }
};
MemoryBytes memory_bytes(const Workload& w, const catalog::Efficiency& eff);
/// The same for the workload at another batch and sequence length (no copy of the workload).
MemoryBytes memory_bytes(const Workload& w, long long batch, long long seq_len, const catalog::Efficiency& eff);

/// Prompt tokens an inference engine prefills at once (vLLM and llama.cpp use chunks of ~2,048):
/// activation memory at inference grows with the context up to this length only.
inline constexpr double kPrefillChunk = 2048;

/// Bytes per element of a KV-cache precision.
double kv_bytes_per_element(std::string_view kv_precision);
/// KV-cache bytes per token of context (whole model, one sequence, before tensor parallelism).
double kv_bytes_per_token(const catalog::Model& m, std::string_view kv_precision);
/// Activation bytes of one transformer layer for one micro-batch in 16-bit, no recomputation:
/// Korthikanti et al. 2022, eq. 1, s*b*h*(34 + 5*a*s/h), generalised term by term to gated MLPs
/// and grouped KV heads (equal to the paper's for GPT-style layers); `flash` drops 5*a*s^2*b.
double activation_bytes_per_layer(const catalog::Model& m, double seq, double batch, bool flash);

/// torchtitan's op-level selective checkpointing (selective_ac_option = "op", torchtitan
/// parallelize_llama.py, _apply_ac_to_transformer_block): within a layer the outputs of the matmuls
/// in forward order q, k, v, o, gate, up, down are kept except every second one (k, o, up), and the
/// attention output; the rest is recomputed. Elements kept per token of one layer, the layer's input
/// included (16-bit each).
double op_checkpoint_kept_per_token(const catalog::Model& m);
/// Parameters per token, over all layers, of the matmuls that policy recomputes in the backward
/// pass (k, o and up of a gated MLP; the active experts' width for a mixture of experts): the
/// recomputation adds 2 FLOPs per such parameter and token.
double op_checkpoint_recomputed_params(const catalog::Model& m);

/// Chunks of tokens a chunked loss computes the logits in (torchtune's LinearCrossEntropyLoss,
/// num_output_chunks = 8): one chunk's logits are alive at a time.
inline constexpr double kLossChunks = 8;
/// Parameters of the largest single tensor (an embedding or LM head for most LLMs; DeepSpeed's
/// estimator's largest_layer_params) and of one transformer layer (an FSDP unit).
double largest_tensor_params(const catalog::Model& m);
double layer_params(const catalog::Model& m);

/// Fraction of GPU memory left free by default: serving engines do not allocate all of it
/// (vLLM's gpu_memory_utilization defaults to 0.9), and a job planned to the last byte fails.
inline constexpr double kDefaultHeadroom = 0.10;

struct FitResult {
  bool fits = false;
  double capacity_bytes = 0;
  double usable_bytes = 0;               ///< capacity x (1 - headroom)
  double headroom_bytes = 0;             ///< usable - need (negative: short by)
  std::optional<long long> max_batch;    ///< largest batch that fits (nullopt: not even 1)
  std::optional<long long> max_seq_len;  ///< longest sequence/context at this batch
  bool max_seq_capped = false;           ///< max_seq_len is the model's own limit
  bool activations_unknown = false;      ///< no per-sample activation figure: no max_batch
  /// Inference: KV-cache tokens per GPU that fit beside everything else (16-token blocks), and
  /// how many sequences of the context that is (vLLM's "maximum concurrency").
  std::optional<long long> kv_capacity_tokens;
  std::optional<double> max_concurrency;
};

/// The share of GPU memory a workload keeps free: its --headroom, else kDefaultHeadroom.
inline double headroom_of(const Workload& w) { return w.headroom.value_or(kDefaultHeadroom); }

/// Does the workload fit on `gpu` (w.gpus of them), keeping `headroom` of its memory free (by
/// default the workload's)? With the largest batch and context that fit.
FitResult fit(const Workload& w, const catalog::Gpu& gpu, const catalog::Efficiency& eff,
              std::optional<double> headroom = std::nullopt);

/// For training, the first parallel layout that fits, in order of cost to speed:
/// data parallel, then ZeRO stages 1-3, then tensor parallelism within a node (2, 4, 8), then
/// full activation recomputation. Fields the user set (`set`) stay as they are. Returns the
/// workload unchanged when it already fits, is not training, or nothing fits (then the most
/// memory-saving layout tried). The choice is recorded in the assumptions.
Workload plan_layout(Workload w, const WorkloadSet& set, const catalog::Gpu& gpu, const catalog::Efficiency& eff,
                     std::optional<double> headroom = std::nullopt);

/// The estimate as JSON; `detail` adds the line-by-line breakdown with formulas and the assumptions.
util::Json to_json(const MemoryEstimate& m, bool detail = true);
/// The same members written to a sink (util/json_sink.h): to_json is write() into a JsonTree.
void write(util::JsonSink& o, const MemoryEstimate& m, bool detail = true);

}  // namespace gpuadvisor::estimate
