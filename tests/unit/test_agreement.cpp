// One answer everywhere: for random workloads and GPUs, `memory` (plan_layout + fit), `fit`
// (fit_models), `recommend` (its memory-fit rule on the same GPU, count and precision) and `check`
// (its workload-fit rule on a spec of those GPUs and that workload) agree on whether the job fits.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/rules/check.h"
#include "gpuadvisor/rules/recommend.h"
#include "gpuadvisor/util/json.h"
#include "test_data.h"

using namespace gpuadvisor;

namespace {

struct Plan {
  const char* label;  // as fit_models names it
  const char* task;
  const char* precision;
};
constexpr Plan kPlans[] = {{"inference fp16", "inference", "fp16"}, {"inference int8", "inference", "int8"},
                           {"inference int4", "inference", "int4"}, {"lora bf16", "lora", "bf16"},
                           {"qlora nf4", "qlora", "nf4"},           {"train bf16", "train", "bf16"}};

int cases() {
  // GPUADVISOR_AGREEMENT_CASES overrides the count (a longer run: 100000).
  if (const char* n = std::getenv("GPUADVISOR_AGREEMENT_CASES")) return std::max(1, std::atoi(n));
  return 10000;
}

// check: whether workload-fit passes on a spec of `count` x `gpu` running the workload.
bool check_fits(const catalog::Gpu& gpu, int count, const Plan& plan, const std::string& model) {
  static const catalog::CompatTable& compat = catalog::CompatTable::embedded();
  static const std::vector<const rules::Rule*> fit_rule = [] {
    std::vector<const rules::Rule*> v;
    for (const auto& r : test::rule_set().rules())
      if (r.id == "workload-fit") v.push_back(&r);
    return v;
  }();
  util::Json spec = {{"schema_version", 1},
                     {"name", "agreement"},
                     {"gpus", {{{"id", gpu.id}, {"count", count}}}},
                     {"workloads", {{{"model", model}, {"task", plan.task}, {"precision", plan.precision}}}}};
  auto doc = util::JsonDoc::parse(spec.dump(), "agreement.json");
  REQUIRE(doc.ok());
  const rules::CheckData data{test::gpus(), test::models(), test::eff(), test::prices(), compat};
  const auto r = rules::check_spec(*doc, data, fit_rule);
  return r.findings.empty();
}

}  // namespace

TEST_CASE("memory, fit, recommend and check agree on what fits, over random workloads and GPUs",
          "[agreement][property]") {
  const auto& models = test::models();
  const auto& cat = test::gpus();
  std::vector<const catalog::Model*> decoders;
  for (const auto& m : models.models())
    if (m.is_transformer() && !m.vision) decoders.push_back(&m);
  std::vector<const catalog::Gpu*> gpus;
  for (const auto& g : cat.gpus()) gpus.push_back(&g);
  const int counts[] = {1, 2, 4, 8};
  std::mt19937 rng(20261203);
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const int n = cases();
  int compared = 0, fits = 0;
  for (int i = 0; i < n; ++i) {
    const auto* m = decoders[pick(decoders.size())];
    const auto& plan = kPlans[pick(std::size(kPlans))];
    const auto* gpu = gpus[pick(gpus.size())];
    const int count = counts[pick(std::size(counts))];
    INFO(m->id << ", " << plan.label << ", " << count << " x " << gpu->id);
    estimate::WorkloadInput in;
    in.model = m->id;
    in.task = plan.task;
    in.precision = plan.precision;
    in.gpus = std::to_string(count);
    estimate::WorkloadSet set;
    estimate::Workload w;
    try {
      w = estimate::make_workload(in, models, &set);
    } catch (const Error&) {
      continue;  // a plan the model cannot take
    }
    // Inference whose heads do not split over every GPU: recommend plans no such layout.
    if (!estimate::is_training(w.task) && w.tp != count) continue;
    // memory: the layout it plans, then fit.
    auto planned = estimate::plan_layout(w, set, *gpu, test::eff(), estimate::kDefaultHeadroom);
    const bool memory_fits = estimate::fit(planned, *gpu, test::eff(), estimate::kDefaultHeadroom).fits;
    // fit: the same row of its table.
    bool fit_fits = false, fit_found = false;
    for (const auto& row : rules::fit_models(*gpu, count, models, test::eff(), estimate::kDefaultHeadroom))
      if (row.model == m && row.plan == plan.label) {
        fit_found = true;
        fit_fits = row.fits;
      }
    // recommend: the candidate of this GPU, count and precision.
    rules::Request req;
    req.base = w;
    req.set = set;
    req.max_gpus = count;
    req.filter.only = {gpu};
    const auto rec = rules::recommend(req, {cat, test::rule_set(), test::eff(), test::prices()});
    std::optional<bool> rec_fits;
    for (const auto& c : rec.candidates)
      if (c.gpu == gpu && c.count == count && c.w.precision == w.precision) rec_fits = c.fit.fits;
    if (!fit_found || !rec_fits) continue;
    ++compared;
    fits += memory_fits;
    CHECK(memory_fits == fit_fits);
    CHECK(memory_fits == *rec_fits);
    // check reads a spec; every tenth draw keeps the run short.
    if (i % 10 == 0) CHECK(memory_fits == check_fits(*gpu, count, plan, m->id));
  }
  // Most draws are comparable, and both answers occur.
  CHECK(compared > n / 2);
  CHECK(fits > compared / 10);
  CHECK(fits < compared * 9 / 10);
}
