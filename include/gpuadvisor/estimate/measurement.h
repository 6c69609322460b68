#pragma once
/// Published or user measurements of speed and memory, matched to a workload and a GPU, and the estimator's
/// prediction of each; and the least-squares fit of the efficiency factors to them with k-fold
/// cross-validation (docs/calibration.md). The project's own calibration program
/// (tests/accuracy) and `calibrate` use the same code.
#include <optional>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/estimate/perf.h"
#include "gpuadvisor/estimate/workload.h"
#include "gpuadvisor/util/names.h"

namespace gpuadvisor::estimate {

enum class MeasureKind {
  decode,
  decode_total,
  prefill,
  train_per_gpu,
  train_mfu,
  train_tflops,
  images,
  diffusion_steps,
  train_memory,     ///< peak GPU memory of a training or fine-tuning run
  inference_memory  ///< GPU memory of an inference run
};
inline constexpr util::Names<MeasureKind, 10> kMeasureKindNames{
    {"decode_tokens_per_s", "decode_total_tokens_per_s", "prefill_tokens_per_s", "train_tokens_per_s_per_gpu",
     "train_mfu", "train_tflops_per_gpu", "images_per_s", "diffusion_steps_per_s", "train_memory", "inference_memory"}};
inline bool is_memory(MeasureKind k) { return k == MeasureKind::train_memory || k == MeasureKind::inference_memory; }

/// What a memory figure counts. PyTorch's max_memory_allocated leaves out the CUDA context and the
/// allocator's cache, max_memory_reserved the context only; nvidia-smi (NVML "used") counts both.
enum class MemoryCounts { allocated, reserved, device };
inline constexpr util::Names<MemoryCounts, 3> kMemoryCountsNames{{"allocated", "reserved", "device"}};
/// Which part of the memory a figure is: all of it, the model states (weights, gradients, master
/// copy, optimizer state: DeepSpeed's estimator, the ZeRO paper), the weights alone, or the KV cache.
enum class MemoryPart { all, states, weights, kv_cache };
inline constexpr util::Names<MemoryPart, 4> kMemoryPartNames{{"all", "states", "weights", "kv_cache"}};

struct MemoryMeasure {
  double unit_bytes = 1e9;  ///< bytes per unit of `expected` (GB 1e9, GiB 2^30, MB, MiB)
  MemoryCounts counts = MemoryCounts::allocated;
  MemoryPart part = MemoryPart::all;
  bool per_job = false;  ///< summed over every GPU of the run
};

struct Measurement {
  std::string id;
  std::string where;  ///< file:line of the record
  MeasureKind kind = MeasureKind::decode;
  double expected = 0;
  std::string gpu;
  WorkloadInput in;
  long long prompt_tokens = 0, generated_tokens = 0;  ///< inference; 0 = not given
  double image_size = 0;                              ///< vision: the input's side in pixels; 0 = not given
  MemoryMeasure memory;                               ///< memory kinds: what the figure counts
};

/// A measurement made ready: its workload laid out on its GPU. `skip` says why one cannot be.
struct Prepared {
  const Measurement* m = nullptr;
  Workload w;
  const catalog::Gpu* gpu = nullptr;
  std::string skip;
};

/// Reads records (tests/accuracy/perf-records.json's format; docs/calibration.md). Records marked
/// "usable": false are left out. Throws Error naming file:line on a malformed record.
std::vector<Measurement> read_measurements(const util::JsonDoc& doc);
Prepared prepare(const Measurement& m, const catalog::Catalog& cat, const catalog::ModelSet& models);

/// The estimator's value for a measurement (same unit), with its low-high range; nullopt when
/// it gives none (no peak for the precision).
struct Predicted {
  double value = 0, low = 0, high = 0;
  std::vector<std::string_view> factors;
};
std::optional<Predicted> predict(const Prepared& p, const catalog::Efficiency& eff);

/// `eff` with factor `id`'s typical value set to `v` (low and high widened to hold it).
catalog::Efficiency with_typical(const catalog::Efficiency& eff, const std::string& id, double v);
/// The factors records are fitted to, by kind (shares, multipliers, exponents, per-step
/// latencies, and the activation-memory multiplier); not the CUDA context or allocator share,
/// which no record measures apart, nor scaling, which multi-GPU runs cannot tell from MFU.
std::vector<std::string> speed_factor_ids(const catalog::Efficiency& eff);
/// `eff` with each of `ids` at the neutral value of its kind that a fit starts from (0.5 for
/// shares, 1 for multipliers, 0.1 for exponents, 10 us for latencies), so that a fit does not
/// depend on the values it replaces.
catalog::Efficiency neutral_start(const catalog::Efficiency& eff, const std::vector<std::string>& ids);

/// Fewer records than this leave a factor as it was: one or two runs fit their own noise.
inline constexpr int kMinRecordsPerFactor = 3;

struct FactorFit {
  std::string id;
  double before = 0, after = 0;
  int records = 0;  ///< records whose prediction uses the factor
};

/// Least squares on log(predicted / measured) over `records`, one factor at a time (golden
/// section on the factor's logarithm within bounds by its kind), repeated until it settles.
/// Only factors at least kMinRecordsPerFactor records use move. `fits` (if given) receives one line per factor fitted.
catalog::Efficiency fit_factors(const std::vector<const Prepared*>& records, const catalog::Efficiency& start,
                                const std::vector<std::string>& factor_ids, std::vector<FactorFit>* fits = nullptr);

/// One held-out prediction of a k-fold cross-validation.
struct HeldOut {
  const Prepared* p;
  Predicted got;
  int fold;
};
/// Why a measurement cannot be fitted although it can be estimated, or "": a training rate above
/// what the GPU reaches at its whole peak under the estimator's FLOP count.
std::string implausible(const Prepared& p);

/// Folds are assigned by a hash of the record id, so that they do not change when records are added.
int fold_of(const std::string& id, int folds);
std::vector<HeldOut> cross_validate(const std::vector<const Prepared*>& records, const catalog::Efficiency& start,
                                    const std::vector<std::string>& factor_ids, int folds);

}  // namespace gpuadvisor::estimate
