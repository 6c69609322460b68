#pragma once
/// `catalog validate`: checks that keep the data honest, each with a stable rule id.
#include <span>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/gpu.h"

namespace gpuadvisor::catalog {

enum class Severity { error, warning };
std::string_view name(Severity s);

struct ValidationRule {
  std::string_view id;
  Severity severity;
  std::string_view summary;
};
/// Every validation rule, in the order they are documented (docs/catalog.md).
std::span<const ValidationRule> validation_rules();

struct Finding {
  std::string rule;
  Severity severity;
  std::string gpu_id;
  std::string where;  ///< "file:line"
  std::string message;
};

/// The value checks of validate() for one record (non-positive-value, beyond-datasheet): a user
/// catalog's records must pass them to be loaded at all, since no estimate means anything with a
/// TDP of 0 W or a peak of 1e308 TFLOPS.
std::vector<Finding> value_findings(const Gpu& g);

/// Validates records; `today` is a date "YYYY-MM-DD" against which prices are judged stale.
std::vector<Finding> validate(const std::vector<Gpu>& gpus, const std::string& today);

}  // namespace gpuadvisor::catalog
