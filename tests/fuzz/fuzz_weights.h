#pragma once
// Shared by the safetensors and GGUF targets: read the header from a file, check the totals, and
// use the file as --model-file for a memory estimate.
#include "fuzz_common.h"
#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/workload.h"

namespace gpuadvisor::fuzz {

inline void weights_file(const std::string& path) {
  guarded([&] {
    auto stats = catalog::read_model_file(path);
    check_number(stats.params, "tensor params");
    check_number(stats.bytes, "tensor bytes");
  });
  guarded([&] {
    static const auto models = catalog::ModelSet::load({});
    estimate::WorkloadInput in;
    in.model_file = path;
    auto w = estimate::make_workload(in, models);
    auto m = estimate::estimate_memory(w, catalog::Efficiency::embedded());
    check_number(m.per_gpu_bytes, "memory per_gpu_bytes");
  });
}

}  // namespace gpuadvisor::fuzz
