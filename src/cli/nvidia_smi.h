#pragma once
// The local nvidia-smi, run without a shell: its CSV for inspect, and the GPUs it lists for fit.
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/gpu.h"

namespace gpuadvisor::cli {

/// Runs `exe --query-gpu=<inspect's fields> --format=csv` and returns its output; an older driver
/// that rejects a field gets the next, shorter list (docs/inspect.md). Throws Error when nvidia-smi
/// is missing, fails or hangs; `instead` names the flag that avoids running it ("--from FILE").
std::string query_nvidia_smi(const std::string& exe, std::string_view instead);

/// The GPUs the local nvidia-smi lists, identified in the catalog: one kind and how many. Throws
/// Error when none is in the catalog or the machine mixes kinds (the caller asks for --gpu).
struct DetectedGpus {
  const catalog::Gpu* gpu = nullptr;
  int count = 0;
  std::vector<std::string> unidentified;  ///< names of listed cards that are not in the catalog
};
DetectedGpus detect_gpus(const std::string& exe, const catalog::Catalog& catalog);

}  // namespace gpuadvisor::cli
