// Workload profile (--profile FILE): merge_profile -> make_workload -> estimate_memory, and what
// memory/estimate/recommend do next for one GPU: fit and estimate_perf. Every number of an
// accepted workload must be finite and not negative.
#include <cstddef>
#include <cstdint>

#include "../unit/test_data.h"
#include "fuzz_common.h"
#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/perf.h"
#include "gpuadvisor/estimate/workload.h"
#include "gpuadvisor/report/output.h"
#include "gpuadvisor/util/json_sink.h"

using namespace gpuadvisor;

namespace {

using test::gpus;
using test::models;

void check_range(const estimate::Range& r, const char* what) {
  fuzz::check_number(r.low, what);
  fuzz::check_number(r.typical, what);
  fuzz::check_number(r.high, what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::guarded([&] {
    auto doc = util::JsonDoc::parse(fuzz::as_string(data, size), "profile.json");
    fuzz::check_result_message(doc);
    if (!doc) return;
    estimate::WorkloadInput flags;
    auto in = estimate::merge_profile(*doc, "", flags);
    if (!in.model_config.empty() || !in.model_file.empty() || !in.profile.empty()) return;  // paths: other targets
    estimate::WorkloadSet set;
    auto w = estimate::make_workload(in, models(), &set);
    const auto& eff = catalog::Efficiency::embedded();
    auto m = estimate::estimate_memory(w, eff);
    fuzz::check_number(m.per_gpu_bytes, "memory per_gpu_bytes");
    fuzz::check_number(m.total_bytes, "memory total_bytes");
    for (const auto& l : m.lines) {
      fuzz::check_number(l.per_gpu_bytes, ("memory line " + std::string(estimate::line_id(l.id))).c_str());
      fuzz::check_number(l.total_bytes, ("memory line " + std::string(estimate::line_id(l.id))).c_str());
    }
    (void)report::dump(estimate::to_json(m));
    (void)report::dump(estimate::to_json(w));
    // Batch lines are written as text, single runs as a tree: the same bytes (util/json_sink.h).
    {
      std::string text = "{";
      util::JsonText t(text);
      t.object("workload", [&](util::JsonSink& o) { estimate::write(o, w); });
      estimate::write(t, m, true);
      text += "}";
      util::Json tree = util::Json::object();
      tree["workload"] = estimate::to_json(w);
      const util::Json mj = estimate::to_json(m);
      for (const auto& [k, v] : mj.items()) tree[k] = v;
      if (text != tree.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
        fuzz::finding("JsonText differs from the tree's dump()");
    }

    // One datacenter and one consumer GPU: fit, the layout planner and the speed estimate.
    for (const char* id : {"h100-sxm", "rtx-4090"}) {
      const catalog::Gpu* g = gpus().find(id);
      if (!g) continue;
      auto f = estimate::fit(w, *g, eff);
      fuzz::check_number(f.usable_bytes, "fit usable_bytes");
      fuzz::check_number(f.headroom_bytes, "fit headroom_bytes", false);
      if (f.max_batch && *f.max_batch < 1) fuzz::finding("fit max_batch below 1");
      auto planned = estimate::plan_layout(w, set, *g, eff);
      auto p = estimate::estimate_perf(planned, *g, eff);
      if (p.available) {
        check_range(p.tokens_per_s, "tokens_per_s");
        check_range(p.prefill_tokens_per_s, "prefill_tokens_per_s");
        check_range(p.decode_tokens_per_s, "decode_tokens_per_s");
        fuzz::check_number(p.step_time_s, "step_time_s");
        if (p.time_s) check_range(*p.time_s, "time_s");
        (void)report::dump(estimate::to_json(p, planned));
      }
    }
  });
  return 0;
}
