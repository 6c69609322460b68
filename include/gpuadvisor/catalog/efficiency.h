#pragma once
/// Efficiency factors derived from published measurements (data/efficiency.json,
/// docs/calibration.md): MFU, bandwidth efficiency, scaling, memory overheads. Each has a low,
/// typical and high value; estimates use typical and report the range.
#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

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
  activation_memory,      ///< activation-memory-factor
  cuda_context,           ///< cuda-context-bytes
  fragmentation,          ///< allocator-fragmentation
  prefill_mfu,            ///< prefill-mfu
  mfu_finetune_lora,      ///< mfu-finetune-lora
  mfu_train_nvlink,       ///< mfu-train-datacenter-nvlink
  mfu_train_pcie,         ///< mfu-train-pcie
  decode_bandwidth,       ///< decode-bandwidth-efficiency
  decode_bandwidth_gguf,  ///< decode-bandwidth-efficiency-quantized
  decode_bandwidth_int4,  ///< decode-bandwidth-efficiency-quantized-gptq-awq
  scaling_nvlink,         ///< scaling-nvlink
  scaling_pcie,           ///< scaling-pcie
};
inline constexpr std::size_t kFactorIdCount = 12;
/// The factor's id in data/efficiency.json ("prefill-mfu"); static storage.
std::string_view factor_name(FactorId id);

class Efficiency {
 public:
  Efficiency() { index(); }
  explicit Efficiency(std::map<std::string, Factor, std::less<>> factors) : factors_(std::move(factors)) { index(); }
  Efficiency(const Efficiency& o) : factors_(o.factors_) { index(); }
  Efficiency& operator=(const Efficiency& o) {
    if (this != &o) {
      factors_ = o.factors_;
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
  const std::map<std::string, Factor, std::less<>>& all() const { return factors_; }
  bool operator==(const Efficiency& o) const { return factors_ == o.factors_; }

 private:
  void index();
  [[noreturn]] static const Factor& missing(FactorId id);

  std::map<std::string, Factor, std::less<>> factors_;  // transparent: look-ups by literal allocate nothing
  std::array<const Factor*, kFactorIdCount> known_{};   // into factors_, null where the data lacks one
};

}  // namespace gpuadvisor::catalog
