// embedded::snapshot() for the programs built without snapshots: gpuadvisor_snapshot, which makes
// them, and the fuzz build, whose loaders parse the embedded JSON.
#include "gpuadvisor/catalog/embedded.h"

namespace gpuadvisor::embedded {

std::optional<std::string_view> snapshot(std::string_view) { return std::nullopt; }

}  // namespace gpuadvisor::embedded
