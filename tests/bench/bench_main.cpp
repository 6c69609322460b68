// Benchmarks of the parts a `recommend` run is made of (docs/performance.md):
//   BM_CatalogParse          the embedded data/gpus.json: JSON parse + Catalog::parse (what a
//                            --catalog file costs, and the embedded one before snapshots)
//   BM_CatalogLoad           the embedded catalog as the binary loads it: from its snapshot
//   BM_LoadAllData           everything a recommend process loads before it starts (snapshots)
//   BM_MemoryEstimate        one estimate_memory (with the formula text of every line)
//   BM_MemoryEstimateQuiet   one estimate_memory without the formula text (explain = false)
//   BM_MemoryBytes           the numbers alone (memory_bytes: what searches and estimate_perf run)
//   BM_EstimatePerf, BM_Fit  the other two parts of a candidate, alone
//   BM_CandidateEvaluation   memory_bytes + estimate_perf (explain = false) + fit for one GPU, as
//                            recommend evaluates a candidate (items = candidates)
//   BM_CandidateExplained    the same with the explained estimate_memory and estimate_perf (the
//                            definition before the number-only paths existed, for comparison)
//   BM_RecommendCore         rules::recommend on loaded data (items = candidates evaluated)
//   BM_RecommendCli          `recommend --model 10B --budget 3000` in-process via cli::run
#include <benchmark/benchmark.h>

#include <sstream>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/catalog/prices.h"
#include "gpuadvisor/catalog/snapshot.h"
#include "gpuadvisor/cli/cli.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/perf.h"
#include "gpuadvisor/estimate/workload.h"
#include "gpuadvisor/rules/recommend.h"
#include "gpuadvisor/rules/rules.h"

using namespace gpuadvisor;

namespace {

const catalog::Catalog& gpus() {
  static const auto c = catalog::Catalog::load({});
  return c;
}
const catalog::ModelSet& models() {
  static const auto m = catalog::ModelSet::load({});
  return m;
}

estimate::Workload workload(const char* model, const char* task) {
  estimate::WorkloadInput in;
  in.model = model;
  in.task = task;
  return estimate::make_workload(in, models());
}

void BM_CatalogParse(benchmark::State& state) {
  const std::string text(*embedded::find("gpus.json"));
  for (auto _ : state) {
    auto doc = util::JsonDoc::parse(text, "gpus.json");
    auto parsed = catalog::Catalog::parse(*doc);
    benchmark::DoNotOptimize(parsed.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_CatalogParse)->Unit(benchmark::kMicrosecond);

void BM_CatalogLoad(benchmark::State& state) {
  for (auto _ : state) {
    auto c = catalog::Catalog::load({});
    benchmark::DoNotOptimize(c.gpus().data());
  }
}
BENCHMARK(BM_CatalogLoad)->Unit(benchmark::kMicrosecond);

void BM_LoadAllData(benchmark::State& state) {
  for (auto _ : state) {
    auto c = catalog::Catalog::load({});
    auto m = catalog::ModelSet::load({});
    auto r = rules::RuleSet::load({});
    auto p = catalog::Prices::load({});
    catalog::Efficiency e;
    catalog::decode(*embedded::snapshot("efficiency.json"), e);
    benchmark::DoNotOptimize(c.gpus().data());
    benchmark::DoNotOptimize(m.models().data());
    benchmark::DoNotOptimize(r.rules().data());
    benchmark::DoNotOptimize(p.instances.data());
    benchmark::DoNotOptimize(e.all().size());
  }
}
BENCHMARK(BM_LoadAllData)->Unit(benchmark::kMicrosecond);

void BM_MemoryEstimate(benchmark::State& state) {
  const auto w = workload("llama-3.1-8b", "qlora");
  const auto& eff = catalog::Efficiency::embedded();
  for (auto _ : state) {
    auto m = estimate::estimate_memory(w, eff);
    benchmark::DoNotOptimize(m.per_gpu_bytes);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_MemoryEstimate);

void BM_MemoryEstimateQuiet(benchmark::State& state) {
  const auto w = workload("llama-3.1-8b", "qlora");
  const auto& eff = catalog::Efficiency::embedded();
  for (auto _ : state) {
    auto m = estimate::estimate_memory(w, eff, false);
    benchmark::DoNotOptimize(m.per_gpu_bytes);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_MemoryEstimateQuiet);

void BM_MemoryBytes(benchmark::State& state) {
  const auto w = workload("llama-3.1-8b", "qlora");
  const auto& eff = catalog::Efficiency::embedded();
  for (auto _ : state) {
    auto m = estimate::memory_bytes(w, eff);
    benchmark::DoNotOptimize(m.per_gpu_bytes);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_MemoryBytes);

void BM_EstimatePerf(benchmark::State& state) {
  const auto w = workload("10B", "inference");
  const auto& eff = catalog::Efficiency::embedded();
  const auto& g = *gpus().find("rtx-4090");
  for (auto _ : state) {
    auto p = estimate::estimate_perf(w, g, eff);
    benchmark::DoNotOptimize(p.decode_tokens_per_s.typical);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_EstimatePerf);

// fit() finds the largest batch and context that fit: a few memory_bytes calls each.
void BM_Fit(benchmark::State& state) {
  const auto w = workload("10B", "inference");
  const auto& eff = catalog::Efficiency::embedded();
  const auto& g = *gpus().find("rtx-4090");
  for (auto _ : state) {
    auto f = estimate::fit(w, g, eff);
    benchmark::DoNotOptimize(f.fits);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_Fit);

// One candidate: the estimators recommend runs per (GPU, count, precision), round robin over the
// whole catalog so that no single GPU's branch is favoured.
template <bool Explained>
void candidate_evaluation(benchmark::State& state) {
  auto w = workload("10B", "inference");
  const auto& eff = catalog::Efficiency::embedded();
  const auto& all = gpus().gpus();
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& g = all[i++ % all.size()];
    double need;
    if constexpr (Explained)
      need = estimate::estimate_memory(w, eff).per_gpu_bytes;
    else
      need = estimate::memory_bytes(w, eff).per_gpu_bytes;
    auto p = estimate::estimate_perf(w, g, eff, Explained);
    auto f = estimate::fit(w, g, eff);
    benchmark::DoNotOptimize(need);
    benchmark::DoNotOptimize(p.decode_tokens_per_s.typical);
    benchmark::DoNotOptimize(f.fits);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
void BM_CandidateEvaluation(benchmark::State& state) { candidate_evaluation<false>(state); }
BENCHMARK(BM_CandidateEvaluation);
void BM_CandidateExplained(benchmark::State& state) { candidate_evaluation<true>(state); }
BENCHMARK(BM_CandidateExplained);

void BM_RecommendCore(benchmark::State& state) {
  const auto rs = rules::RuleSet::load({});
  const auto prices = catalog::Prices::load({});
  rules::Request req;
  estimate::WorkloadInput in;
  in.model = "10B";
  req.base = estimate::make_workload(in, models(), &req.set);
  req.budget_usd = 3000;
  rules::Data data{gpus(), rs, catalog::Efficiency::embedded(), prices};
  std::size_t candidates = 0;
  for (auto _ : state) {
    auto r = rules::recommend(req, data);
    candidates += r.candidates.size();
    benchmark::DoNotOptimize(r.plans.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(candidates));
  state.counters["candidates"] = static_cast<double>(candidates) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_RecommendCore)->Unit(benchmark::kMicrosecond);

void BM_RecommendCli(benchmark::State& state) {
  const std::vector<std::string> args = {"recommend", "--model", "10B", "--budget", "3000"};
  for (auto _ : state) {
    std::ostringstream out, err;
    int code = cli::run(args, out, err);
    if (code != 0) state.SkipWithError("recommend failed");
    benchmark::DoNotOptimize(out.str().size());
  }
}
BENCHMARK(BM_RecommendCli)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
