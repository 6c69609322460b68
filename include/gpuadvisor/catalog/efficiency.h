#pragma once
/// Efficiency factors derived from published measurements (data/efficiency.json,
/// docs/calibration.md): MFU, bandwidth efficiency, scaling, memory overheads. Each has a low,
/// typical and high value; estimates use typical and report the range.
#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/engine.h"
#include "gpuadvisor/catalog/source.h"

namespace gpuadvisor::catalog {

struct Factor {
  std::string id;
  std::string kind;
  double low = 0, typical = 0, high = 0;
  std::string method;
  std::vector<std::string> derived_from;  ///< reference record ids
  std::vector<Source> sources;

  bool operator==(const Factor&) const = default;
};

/// The factors the estimators read. Looked up by these, a factor costs an array index instead
/// of a search by name: the searches of `recommend` and `fit` read them many times per candidate.
enum class FactorId {
  activation_memory,          ///< activation-memory-factor
  cuda_context,               ///< cuda-context-bytes
  fragmentation,              ///< allocator-fragmentation
  prefill_mfu,                ///< prefill-mfu (vision inference, and engines with no fit of their own)
  mfu_finetune_lora,          ///< mfu-finetune-lora
  mfu_train_nvlink,           ///< mfu-train-datacenter-nvlink
  mfu_train_pcie,             ///< mfu-train-pcie
  decode_quant_gguf,          ///< decode-quant-gguf: GGUF quantized weights against 16-bit, same engine
  decode_quant_weight_only,   ///< decode-quant-weight-only: GPTQ/AWQ/NF4/int4 kernels against 16-bit
  scaling_nvlink,             ///< scaling-nvlink
  scaling_pcie,               ///< scaling-pcie
  allreduce_pcie,             ///< allreduce-latency-pcie: seconds per tensor-parallel all-reduce
  allreduce_nvlink,           ///< allreduce-latency-nvlink
  mfu_intensity_exponent,     ///< mfu-intensity-exponent: training MFU against FLOPs per byte
  mfu_train_fp8,              ///< mfu-train-fp8: fp8 training MFU as a share of bf16's
  vendor_amd,                 ///< vendor-amd: AMD GPUs' efficiency against NVIDIA's (ROCm kernels)
  vendor_intel,               ///< vendor-intel: Intel Gaudi and Arc against NVIDIA
  vendor_apple,               ///< vendor-apple: Apple GPUs (Metal) against NVIDIA
  vision_mfu,                 ///< vision-mfu: detection and classification inference (TensorRT runs)
  vision_pass_overhead,       ///< vision-pass-overhead: seconds per forward pass beside the FLOPs
  diffusion_mfu,              ///< diffusion-mfu: the denoiser's passes (diffusers runs)
  diffusion_step_overhead,    ///< diffusion-step-overhead: seconds per denoising step beside the FLOPs
  diffusion_consumer,         ///< diffusion-consumer: GeForce, workstation and edge GPUs against diffusion-mfu
  vision_pass_overhead_edge,  ///< vision-pass-overhead-edge: the per-pass cost on edge modules (Jetson)
  decode_bandwidth_host,      ///< decode-bandwidth-host: llama.cpp's share of host RAM bandwidth, CPU layers
  logits_memory,              ///< logits-memory-factor: the loss's logit tensors against 6 bytes per element
  // Per engine, in catalog::Engine order (engine_factor()).
  decode_bandwidth_first,                                         ///< decode-bandwidth-<engine>
  decode_overhead_first = decode_bandwidth_first + kEngineCount,  ///< decode-layer-overhead-<engine>, s per layer
  prefill_mfu_first = decode_overhead_first + kEngineCount,       ///< prefill-mfu-<engine>
  /// prefill-consumer-<engine>: on GeForce, workstation and edge GPUs against the engine's own
  /// (datacenter) value, where the engine has runs on both
  prefill_consumer_first = prefill_mfu_first + kEngineCount,
  count_ = prefill_consumer_first + kEngineCount,
};
inline constexpr std::size_t kFactorIdCount = static_cast<std::size_t>(FactorId::count_);
enum class EngineFactor { decode_bandwidth, decode_overhead, prefill_mfu, prefill_consumer };
/// The engine's own factor of a kind.
constexpr FactorId engine_factor(EngineFactor k, Engine engine) {
  const auto first = k == EngineFactor::decode_bandwidth  ? FactorId::decode_bandwidth_first
                     : k == EngineFactor::decode_overhead ? FactorId::decode_overhead_first
                     : k == EngineFactor::prefill_mfu     ? FactorId::prefill_mfu_first
                                                          : FactorId::prefill_consumer_first;
  return static_cast<FactorId>(static_cast<std::size_t>(first) + static_cast<std::size_t>(engine));
}
/// The factor's id in data/efficiency.json ("prefill-mfu"); static storage.
std::string_view factor_name(FactorId id);

class Efficiency;

/// A user's calibration (gpuadvisor calibrate): factors fitted to their own runs, used only for
/// the GPUs and engines those runs were made on.
struct CalibrationScope {
  std::vector<std::string> gpus;          ///< catalog ids
  std::vector<std::string> engines;       ///< engine names (data/engines.json)
  std::shared_ptr<const Efficiency> eff;  ///< the published factors with the user's in their place
  std::string label;                      ///< "calibrated from 14 of your measurements (file, date)"
};

class Efficiency {
 public:
  Efficiency() { index(); }
  explicit Efficiency(std::map<std::string, Factor, std::less<>> factors) : factors_(std::move(factors)) { index(); }
  Efficiency(const Efficiency& o) : factors_(o.factors_), scope_(o.scope_) { index(); }
  Efficiency& operator=(const Efficiency& o) {
    if (this != &o) {
      factors_ = o.factors_;
      scope_ = o.scope_;
      index();
    }
    return *this;
  }
  // Moving a map moves its nodes: the indexed pointers stay valid.
  Efficiency(Efficiency&&) noexcept = default;
  Efficiency& operator=(Efficiency&&) noexcept = default;

  /// The embedded data/efficiency.json.
  static const Efficiency& embedded();
  static Efficiency parse(const util::JsonDoc& doc);
  /// A factor by id; throws an internal error if the data lacks it.
  const Factor& get(std::string_view id) const;
  const Factor& get(FactorId id) const {
    const Factor* f = known_[static_cast<std::size_t>(id)];
    return f ? *f : missing(id);
  }
  /// Null where the data has no such factor (an engine with no fit of its own).
  const Factor* find(FactorId id) const { return known_[static_cast<std::size_t>(id)]; }
  /// A copy with one factor replaced or added (the fitting program varies them).
  Efficiency with(Factor f) const;
  const std::map<std::string, Factor, std::less<>>& all() const { return factors_; }
  /// A copy that answers for(gpu, engine) with the calibration's factors inside its scope.
  Efficiency with_scope(CalibrationScope scope) const;
  /// The factors for a GPU and engine ("training" for training runs): the calibration's inside its
  /// scope, these otherwise.
  const Efficiency& for_run(std::string_view gpu_id, std::string_view engine) const;
  /// The memory factors of training: a calibration's from training logs, whatever the GPU (they
  /// describe the framework's allocations, not the card), else these.
  const Efficiency& for_training_memory() const;
  const CalibrationScope* scope() const { return scope_.get(); }
  bool operator==(const Efficiency& o) const { return factors_ == o.factors_; }

 private:
  void index();
  [[noreturn]] static const Factor& missing(FactorId id);

  std::map<std::string, Factor, std::less<>> factors_;  // transparent: look-ups by literal allocate nothing
  std::shared_ptr<const CalibrationScope> scope_;
  std::array<const Factor*, kFactorIdCount> known_{};  // into factors_, null where the data lacks one
};

}  // namespace gpuadvisor::catalog
