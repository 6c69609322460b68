#pragma once
/// The performance estimator: FLOPs and bytes per token against a GPU's peaks and the calibrated
/// efficiency factors (docs/methodology.md, "Speed"). Every figure has a low-high range from the
/// spread of the factors it used.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/estimate/workload.h"

namespace gpuadvisor::estimate {

struct Range {
  double low = 0, typical = 0, high = 0;
  Range scaled(double k) const { return {low * k, typical * k, high * k}; }
  Range inverse() const { return {1 / high, 1 / typical, 1 / low}; }  ///< for times from rates
};

struct PerfEstimate {
  bool available = true;  ///< false when the GPU lacks a peak for the precision (see reason)
  std::string reason;
  catalog::Precision compute = catalog::Precision::fp16;
  double peak_flops = 0;  ///< per GPU, dense, at the compute precision; 0 when !compute_known
  /// false: the GPU has no published peak in any precision (Apple, Ryzen AI Max): inference decode
  /// is estimated from memory bandwidth alone; prefill and time to first token are unknown.
  bool compute_known = true;
  double mfu = 0;          ///< typical utilisation used
  double scaling = 1;      ///< per-GPU multi-GPU efficiency (1 on one GPU)
  std::string_view bound;  ///< compute, memory bandwidth, interconnect (a literal)

  // Training and fine-tuning.
  double flops_per_token = 0;
  Range tokens_per_s;           ///< whole job
  double step_time_s = 0;       ///< one optimizer step of batch x seq x dp tokens
  std::optional<Range> time_s;  ///< for w.tokens
  double total_flops = 0;

  // Inference (per replica of w.gpus GPUs).
  Range prefill_tokens_per_s;
  Range decode_tokens_per_s;        ///< per sequence
  Range decode_total_tokens_per_s;  ///< all sequences of the batch
  double time_to_first_token_s = 0;
  double decode_bytes_per_step = 0;  ///< per GPU
  double bandwidth_efficiency = 0;

  // Vision presets.
  std::optional<Range> images_per_s;

  std::vector<std::string_view> factors;  ///< ids of the efficiency factors used (catalog::factor_name)
  std::vector<std::string> assumptions;
};

/// The compute precision a workload's math runs at, and the GPU's dense peak there (falling back
/// from bf16 to fp16 and from tf32 to fp32 where the catalog has no figure).
std::optional<std::pair<catalog::Precision, double>> compute_peak(const Workload& w, const catalog::Gpu& gpu);

/// Per-GPU efficiency of `gpus` GPUs relative to one, over the GPU's interconnect.
Range scaling(const catalog::Gpu& gpu, int gpus, const catalog::Efficiency& eff);

/// Without `explain` the estimate carries no assumptions (the numbers are the same; recommend
/// evaluates hundreds of candidates and prints none of them).
PerfEstimate estimate_perf(const Workload& w, const catalog::Gpu& gpu, const catalog::Efficiency& eff,
                           bool explain = true);

util::Json to_json(const PerfEstimate& p, const Workload& w);
util::Json to_json(const Range& r);

}  // namespace gpuadvisor::estimate
