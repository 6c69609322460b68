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

/// One decode step's time, by term (typical factors).
struct DecodeTerms {
  double memory_s = 0;     ///< weights and KV cache read at the achievable bandwidth
  double compute_s = 0;    ///< the batch's FLOPs (overlaps the read: the larger counts)
  double overhead_s = 0;   ///< fixed per-layer cost: kernel launches, synchronisation
  double allreduce_s = 0;  ///< tensor parallelism: two all-reduces per layer
  double host_s = 0;       ///< llama.cpp layers on the CPU (--gpu-layers): read from host RAM
  double step_s = 0;       ///< max(memory, compute) + overhead + all-reduces + host layers
};

/// An engine's factor of a kind, or the one it borrows (see catalog::EngineInfo::factors_from).
struct EngineFactor {
  const catalog::Factor* factor;
  std::optional<catalog::Engine> borrowed_from;
};
EngineFactor engine_factor(const catalog::Efficiency& eff, catalog::EngineFactor kind, catalog::Engine e);

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
  double recompute_flops_per_token = 0;  ///< the part of flops_per_token that recomputation adds
  Range tokens_per_s;                    ///< whole job
  double step_time_s = 0;                ///< one optimizer step of batch x seq x dp tokens
  std::optional<Range> time_s;           ///< for w.tokens
  double total_flops = 0;

  // Inference (per replica of w.gpus GPUs).
  Range prefill_tokens_per_s;
  double prefill_peak_flops = 0;    ///< the peak prefill runs against (fp16 accumulate on GeForce where used)
  Range decode_tokens_per_s;        ///< per sequence
  Range decode_total_tokens_per_s;  ///< all sequences of the batch
  double time_to_first_token_s = 0;
  double decode_bytes_per_step = 0;  ///< per GPU
  double bandwidth_efficiency = 0;
  DecodeTerms decode_terms;
  std::optional<catalog::Engine> engine;  ///< inference only

  // Vision presets.
  std::optional<Range> images_per_s;
  std::optional<Range> image_batch_s;  ///< inference: seconds for one batch on one GPU (per image at batch 1)
  std::optional<Range> steps_per_s;    ///< diffusion inference: denoising steps per second (a progress bar's it/s)

  std::vector<std::string_view> factors;  ///< ids of the efficiency factors used (catalog::factor_name)
  std::vector<std::string> assumptions;
  std::vector<std::string> borrowed;  ///< factors borrowed from another engine or vendor, in words (explain)
};

/// The compute precision a workload's math runs at, and the GPU's dense peak there (falling back
/// from bf16 to fp16 and from tf32 to fp32 where the catalog has no figure).
std::optional<std::pair<catalog::Precision, double>> compute_peak(const Workload& w, const catalog::Gpu& gpu);

/// Training MFU for the workload on the GPU: the task's factor, scaled by the GPU's compute per
/// byte of bandwidth and for fp8 (the factors used are added to out.factors).
Range training_mfu(const Workload& w, const catalog::Gpu& gpu, const catalog::Efficiency& eff, PerfEstimate& out,
                   bool explain);

/// An efficiency on a non-NVIDIA GPU: scaled by the vendor's fitted factor (AMD, Intel), or kept
/// with a wider range where no run on that vendor was published (noted in out.borrowed with
/// `explain`).
Range vendor_scaled(Range r, const catalog::Gpu& gpu, const catalog::Efficiency& eff, PerfEstimate& out, bool explain);

/// Per-GPU efficiency of `gpus` GPUs relative to one, over the GPU's interconnect.
Range scaling(const catalog::Gpu& gpu, int gpus, const catalog::Efficiency& eff);

/// Without `explain` the estimate carries no assumptions and no borrowed notes (the numbers are the same; recommend
/// evaluates hundreds of candidates and prints none of them).
PerfEstimate estimate_perf(const Workload& w, const catalog::Gpu& gpu, const catalog::Efficiency& eff,
                           bool explain = true);

util::Json to_json(const PerfEstimate& p, const Workload& w);
util::Json to_json(const Range& r);

}  // namespace gpuadvisor::estimate
