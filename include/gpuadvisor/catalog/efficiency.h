#pragma once
/// Efficiency factors derived from published measurements (data/efficiency.json,
/// docs/calibration.md): MFU, bandwidth efficiency, scaling, memory overheads. Each has a low,
/// typical and high value; estimates use typical and report the range.
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

class Efficiency {
 public:
  Efficiency() = default;
  explicit Efficiency(std::map<std::string, Factor, std::less<>> factors) : factors_(std::move(factors)) {}
  /// The embedded data/efficiency.json.
  static const Efficiency& embedded();
  static Efficiency parse(const util::JsonDoc& doc);
  /// A factor by id; throws an internal error if the data lacks it.
  const Factor& get(std::string_view id) const;
  const std::map<std::string, Factor, std::less<>>& all() const { return factors_; }
  bool operator==(const Efficiency&) const = default;

 private:
  std::map<std::string, Factor, std::less<>> factors_;  // transparent: look-ups by literal allocate nothing
};

}  // namespace gpuadvisor::catalog
