// The memory estimator against published measurements that were not used to derive its factors
// (tests/fixtures/calibration/holdout.json, docs/calibration.md). Each record carries its own
// tolerance, stated and justified there; records whose model or GPU is not in the data are
// skipped, and the test requires that most are checked. The speed records of the same file are
// fitted and cross-validated by the calibration program instead (tests/accuracy, `ctest -L
// accuracy`), which holds each out in turn.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "cli_fixture.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/util/units.h"

using namespace gpuadvisor;

namespace {

struct Check {
  std::string id;
  double expected, got, tolerance;
};

std::optional<Check> evaluate(const util::Json& r, const catalog::Catalog& cat, const catalog::ModelSet& models) {
  const auto& eff = catalog::Efficiency::embedded();
  const std::string kind = r["kind"];
  const auto& wj = r["workload"];
  const std::string model = r["model"];
  estimate::WorkloadInput in;
  if (models.find(model))
    in.model = model;
  else if (util::parse_count(model))
    in.model = model;
  else
    return std::nullopt;
  auto text = [](const util::Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  in.task = wj.value("task", "inference");
  if (wj.contains("quantization") && wj["quantization"].is_string())
    in.precision = wj["quantization"];
  else if (wj.contains("precision") && wj["precision"].is_string() &&
           estimate::find_format(wj["precision"].get<std::string>()))
    in.precision = wj["precision"];
  if (wj.contains("batch")) in.batch = text(wj["batch"]);
  if (wj.contains("micro_batch")) in.batch = text(wj["micro_batch"]);
  if (wj.contains("seq_len")) in.seq_len = text(wj["seq_len"]);
  if (wj.contains("context_tokens")) in.seq_len = text(wj["context_tokens"]);
  if (wj.contains("mean_context_tokens")) in.seq_len = text(wj["mean_context_tokens"]);
  if (kind == "prefill_tokens_per_s" && wj.contains("prompt_tokens")) in.seq_len = text(wj["prompt_tokens"]);
  if (wj.contains("gpus")) in.gpus = text(wj["gpus"]);
  if (wj.contains("zero")) in.zero = text(wj["zero"]);
  if (wj.contains("checkpointing")) in.checkpointing = wj["checkpointing"];
  if (wj.contains("optimizer")) in.optimizer = wj["optimizer"];
  if (wj.contains("kv_dtype")) in.kv_precision = wj["kv_dtype"];
  if (wj.contains("bytes_per_param")) {
    double b = wj["bytes_per_param"];
    in.precision = b == 2 ? "fp16" : b == 1 ? "int8" : b == 4 ? "fp32" : "int4";
  }
  estimate::Workload w;
  try {
    w = estimate::make_workload(in, models);
  } catch (const Error&) {
    return std::nullopt;
  }
  const double expected = r["expected"];
  const double tol = r["tolerance"];
  if (kind == "memory_bytes" || kind == "kv_bytes_per_token") {
    if (const auto* g = cat.find(r["gpu"].get<std::string>())) estimate::apply_gpu_defaults(w, {}, *g);
    auto m = estimate::estimate_memory(w, eff);
    const std::string measure = wj.value("measure", "");
    double got;
    if (measure == "weights_only")
      got = m.line("weights") + m.line("quantization_constants");
    else if (measure == "kv_cache_only" || measure == "kv_cache_per_token")
      got = m.line("kv_cache");
    else if (measure == "model_states_only")
      got = m.line("weights") + m.line("gradients") + m.line("master_weights") + m.line("optimizer_state");
    else if (measure == "nvml_used")
      got = m.per_gpu_bytes;
    else if (measure == "torch_allocated" || measure == "torch_max_allocated")
      got = m.per_gpu_bytes - m.line("cuda_context") - m.line("fragmentation");
    else
      return std::nullopt;
    return Check{r["id"], expected, got, tol};
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("calibration: estimators against held-out published measurements", "[calibration]") {
  auto doc = util::JsonDoc::load(test::source_path("tests/fixtures/calibration/holdout.json"));
  REQUIRE(doc);
  auto cat = catalog::Catalog::load({});
  auto models = catalog::ModelSet::load({});
  int checked = 0, within = 0;
  std::ostringstream report;
  for (const auto& r : doc->root()) {
    auto c = evaluate(r, cat, models);
    if (!c) continue;
    ++checked;
    double rel = std::fabs(c->got - c->expected) / c->expected;
    bool ok = rel <= c->tolerance;
    within += ok;
    report << (ok ? "  ok   " : "  MISS ") << c->id << ": estimated " << c->got << ", published " << c->expected << " ("
           << std::round(rel * 100) << "% off, tolerance " << c->tolerance * 100 << "%)\n";
  }
  INFO(report.str());
  CHECK(checked >= 20);  // of its 30 memory records
  // Every held-out record within its tolerance.
  CHECK(within == checked);
}
