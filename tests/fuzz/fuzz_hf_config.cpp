// Hugging Face config.json (--model-config FILE): model_from_hf_config and the parameter counts,
// then the workload built from the file as the CLI builds it, its memory and its speed on a GPU.
#include <cstddef>
#include <cstdint>

#include "../unit/test_data.h"
#include "fuzz_common.h"
#include "fuzz_tempfile.h"
#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/perf.h"
#include "gpuadvisor/estimate/workload.h"
#include "gpuadvisor/report/output.h"

using namespace gpuadvisor;

namespace {

using test::gpus;
using test::models;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::guarded([&] {
    auto doc = util::JsonDoc::parse(fuzz::as_string(data, size), "config.json");
    fuzz::check_result_message(doc);
    if (!doc) return;
    auto m = catalog::model_from_hf_config(*doc);
    double params = catalog::count_params(m);
    double active = catalog::count_active_params(m);
    fuzz::check_number(params, "count_params");
    fuzz::check_number(active, "count_active_params");
    m.params = params;
    fuzz::check_number(m.params_per_token(), "params_per_token");
    fuzz::check_number(m.embedding_params(), "embedding_params");
    (void)report::dump(catalog::to_output_json(m));
  });
  // The same file as --model-config, inference and training.
  fuzz::guarded([&] {
    std::string path = fuzz::write_temp("config.json", data, size);
    const auto& eff = catalog::Efficiency::embedded();
    const catalog::Gpu* gpu = gpus().find("h100-sxm");
    for (const char* task : {"inference", "train"}) {
      estimate::WorkloadInput in;
      in.model_config = path;
      in.task = task;
      auto w = estimate::make_workload(in, models());
      auto mem = estimate::estimate_memory(w, eff);
      fuzz::check_number(mem.per_gpu_bytes, "memory per_gpu_bytes");
      for (const auto& l : mem.lines)
        fuzz::check_number(l.per_gpu_bytes, ("memory line " + std::string(estimate::line_id(l.id))).c_str());
      if (gpu) {
        auto f = estimate::fit(w, *gpu, eff);
        fuzz::check_number(f.usable_bytes, "fit usable_bytes");
        auto p = estimate::estimate_perf(w, *gpu, eff);
        if (p.available) {
          fuzz::check_number(p.tokens_per_s.typical, "tokens_per_s");
          fuzz::check_number(p.decode_tokens_per_s.typical, "decode_tokens_per_s");
          fuzz::check_number(p.prefill_tokens_per_s.typical, "prefill_tokens_per_s");
        }
      }
    }
  });
  return 0;
}
