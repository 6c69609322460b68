// The calibration code (estimate/measurement.h): reading speed records, predicting them, and the
// least-squares fit with cross-validation that writes data/efficiency.json (docs/calibration.md).
#include <catch2/catch.hpp>
#include <cmath>

#include "cli_fixture.h"
#include "gpuadvisor/estimate/measurement.h"
#include "test_data.h"

using namespace gpuadvisor;
using namespace gpuadvisor::test;

namespace {

std::vector<estimate::Measurement> records() {
  auto doc = util::JsonDoc::load(source_path("tests/accuracy/perf-records.json"));
  REQUIRE(doc);
  return estimate::read_measurements(*doc);
}

}  // namespace

TEST_CASE("measurement: the reference speed records are read and matched to workloads", "[calibration]") {
  const auto ms = records();
  CHECK(ms.size() >= 150);  // the usable ones of 185
  int matched = 0;
  for (const auto& m : ms) {
    auto p = estimate::prepare(m, gpus(), models());
    if (p.skip.empty() && estimate::predict(p, eff())) ++matched;
  }
  CHECK(matched >= 130);
  // A llama-bench tg128 row reads at the mean context of 64 tokens on llama.cpp.
  auto it = std::find_if(ms.begin(), ms.end(), [](const auto& m) { return m.id == "C-llamacpp2-04"; });
  REQUIRE(it != ms.end());
  auto p = estimate::prepare(*it, gpus(), models());
  REQUIRE(p.skip.empty());
  CHECK(p.w.engine == catalog::Engine::llamacpp);
  CHECK(it->kind == estimate::MeasureKind::decode);
}

TEST_CASE("measurement: a bad record names its file, line and field", "[calibration]") {
  auto doc = util::JsonDoc::parse(R"([{"id": "x", "kind": "decode_tokens_per_sec", "expected": 1, "gpu": "rtx-4090",
 "model": "7B"}])",
                                  "records.json");
  REQUIRE(doc);
  try {
    estimate::read_measurements(*doc);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("records.json:1") != std::string::npos);
    CHECK(std::string(e.what()).find("kind") != std::string::npos);
    CHECK(std::string(e.what()).find("did you mean 'decode_tokens_per_s'") != std::string::npos);
  }
}

TEST_CASE("measurement: fitting measurements made by the model recovers the factors that made them", "[calibration]") {
  // Measurements generated with known factors, then fitted from the neutral start the
  // calibration program uses: the fit must find the factors again.
  const auto ms = records();
  std::vector<estimate::Prepared> prepared;
  for (const auto& m : ms) prepared.push_back(estimate::prepare(m, gpus(), models()));
  auto truth = estimate::with_typical(eff(), "decode-bandwidth-llama.cpp", 0.71);
  truth = estimate::with_typical(truth, "decode-layer-overhead-llama.cpp", 6e-5);
  truth = estimate::with_typical(truth, "mfu-train-datacenter-nvlink", 0.41);
  std::vector<estimate::Measurement> made;
  for (const auto& p : prepared)
    if (p.skip.empty())
      if (auto got = estimate::predict(p, truth)) {
        auto m = *p.m;
        m.expected = got->value;
        made.push_back(m);
      }
  REQUIRE(made.size() >= 100);
  std::vector<estimate::Prepared> again;
  for (const auto& m : made) again.push_back(estimate::prepare(m, gpus(), models()));
  std::vector<const estimate::Prepared*> use;
  for (const auto& p : again) use.push_back(&p);
  auto start = estimate::with_typical(truth, "decode-bandwidth-llama.cpp", 0.5);
  start = estimate::with_typical(start, "decode-layer-overhead-llama.cpp", 1e-5);
  start = estimate::with_typical(start, "mfu-train-datacenter-nvlink", 0.5);
  std::vector<estimate::FactorFit> fits;
  const auto fitted = estimate::fit_factors(
      use, start, {"decode-bandwidth-llama.cpp", "decode-layer-overhead-llama.cpp", "mfu-train-datacenter-nvlink"},
      &fits);
  CHECK(fitted.get("decode-bandwidth-llama.cpp").typical == Approx(0.71).epsilon(0.02));
  CHECK(fitted.get("decode-layer-overhead-llama.cpp").typical == Approx(6e-5).epsilon(0.05));
  CHECK(fitted.get("mfu-train-datacenter-nvlink").typical == Approx(0.41).epsilon(0.02));
  CHECK(fits.size() == 3);
  // Held out fold by fold, the same data is predicted within a few percent.
  const auto held = estimate::cross_validate(
      use, start, {"decode-bandwidth-llama.cpp", "decode-layer-overhead-llama.cpp", "mfu-train-datacenter-nvlink"}, 5);
  REQUIRE(held.size() >= 100);
  for (const auto& h : held) CHECK(std::fabs(h.got.value / h.p->m->expected - 1) < 0.03);
}

TEST_CASE("measurement: folds come from the record id and do not move", "[calibration]") {
  CHECK(estimate::fold_of("C-llamacpp2-04", 5) == estimate::fold_of("C-llamacpp2-04", 5));
  int counts[5] = {};
  for (const auto& m : records()) ++counts[estimate::fold_of(m.id, 5)];
  for (int c : counts) CHECK(c >= 15);  // about a fifth each
}
