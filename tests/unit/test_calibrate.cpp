// gpuadvisor calibrate: benchmark outputs read by content, the fit, the calibration file, and
// --calibration applying it only to the GPUs and engines measured (docs/calibrate.md).
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "cli_fixture.h"
#include "gpuadvisor/estimate/measurement.h"
#include "gpuadvisor/estimate/perf.h"
#include "gpuadvisor/util/json.h"
#include "test_data.h"

using namespace gpuadvisor;
using namespace gpuadvisor::test;

namespace {

std::string temp_path(const std::string& name) { return "/tmp/gpuadvisor-test-" + name; }

// The model's own decode rate for Llama 3.1 8B Q4_K_M on an RTX 3090 at `tokens` generated, with
// decode-bandwidth-llama.cpp at `bw`.
double decode_rate(double bw, long long tokens) {
  estimate::WorkloadInput in;
  in.model = "llama-3.1-8b";
  in.precision = "q4_k_m";
  in.seq_len = std::to_string(tokens / 2);
  auto w = estimate::make_workload(in, models());
  const auto e = estimate::with_typical(eff(), "decode-bandwidth-llama.cpp", bw);
  return estimate::estimate_perf(w, *gpus().find("rtx-3090"), e, false).decode_tokens_per_s.typical;
}

}  // namespace

TEST_CASE("calibrate: runs made by the model with a known factor give that factor back", "[calibrate]") {
  // A llama-bench table as the tool prints it, with rates the estimator gives at bandwidth 0.70.
  const std::string bench = temp_path("roundtrip.md");
  {
    std::ofstream f(bench);
    f << "ggml_cuda_init: found 1 CUDA devices:\n"
         "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n"
         "| model                          |       size |     params | backend    | ngl | test       |    t/s |\n"
         "| ------------------------------ | ---------: | ---------: | ---------- | --: | ---------- | -----: |\n";
    for (long long n : {128, 512, 1024, 4096})
      f << fmt::format("| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | tg{} | {:.4f} ± 0.1 |\n", n,
                       decode_rate(0.70, n));
  }
  const std::string out = temp_path("roundtrip-calibration.json");
  std::remove(out.c_str());
  auto r = run_cli({"calibrate", bench, "--model", "llama-3.1-8b", "-o", out, "--format", "json"});
  REQUIRE(r.code == 0);
  auto doc = util::JsonDoc::load(out);
  REQUIRE(doc);
  const auto& j = doc->root();
  CHECK(j["scope"]["gpus"] == util::Json::array({"rtx-3090"}));
  CHECK(j["scope"]["engines"] == util::Json::array({"llama.cpp"}));
  CHECK(j["measurements"].size() == 4);
  CHECK(j["measurements"][0]["source"].get<std::string>() == bench + ":5");
  // Four decode runs move the bandwidth and the per-layer cost; together they reproduce the runs.
  CHECK(j["median_error_after"].get<double>() < 0.01);
  CHECK(j["median_error_before"].get<double>() > 0.05);

  // --calibration moves the estimate to the user's rate, and says so, on the GPU measured only.
  auto base = run_cli({"estimate", "--model", "llama-3.1-8b", "--precision", "q4_k_m", "--gpu", "rtx-3090", "--seq-len",
                       "256", "--format", "json"});
  auto mine = run_cli({"estimate", "--model", "llama-3.1-8b", "--precision", "q4_k_m", "--gpu", "rtx-3090", "--seq-len",
                       "256", "--format", "json", "--calibration", out});
  REQUIRE(base.code == 0);
  REQUIRE(mine.code == 0);
  const double b = util::Json::parse(base.out)["decode_tokens_per_s"].get<double>();
  const double m = util::Json::parse(mine.out)["decode_tokens_per_s"].get<double>();
  CHECK(m == Approx(decode_rate(0.70, 512)).epsilon(0.02));
  CHECK(m < b);
  CHECK(mine.out.find("calibrated from 4 of your measurements") != std::string::npos);
  auto other = run_cli({"estimate", "--model", "llama-3.1-8b", "--precision", "q4_k_m", "--gpu", "rtx-4090", "--format",
                        "json", "--calibration", out});
  CHECK(other.out.find("calibrated from") == std::string::npos);
}

TEST_CASE("calibrate: fewer runs than a factor needs fit nothing and write no file", "[calibrate]") {
  const std::string bench = temp_path("two.md");
  {
    std::ofstream f(bench);
    f << "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6\n"
         "| model | size | params | backend | ngl | test | t/s |\n"
         "| --- | --- | --- | --- | --- | --- | --- |\n"
         "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 110.0 ± 0.1 |\n"
         "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CPU | 0 | tg128 | 11.0 ± 0.1 |\n";
  }
  const std::string out = temp_path("two-calibration.json");
  std::remove(out.c_str());
  auto r = run_cli({"calibrate", bench, "--model", "llama-3.1-8b", "-o", out});
  CHECK(r.code == 0);
  CHECK(r.out.find("Nothing fitted: a factor moves only where at least 3 matched measurements use it (1 "
                   "matched)") != std::string::npos);
  CHECK(r.out.find("runs on the CPU") != std::string::npos);
  CHECK(!std::ifstream(out).good());
}

TEST_CASE("calibrate: a file of no known format is exit 2 naming the formats", "[calibrate]") {
  const std::string bad = temp_path("notes.txt");
  std::ofstream(bad) << "hello\n";
  auto r = run_cli({"calibrate", bad});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuadvisor: error: " + bad +
                     ": not a format calibrate reads (it reads llama-bench markdown or -o json/jsonl, vLLM bench serve "
                     "(benchmark_serving.py) JSON, vLLM benchmark_throughput.py JSON, nvidia-smi --query-gpu CSV)\n");
  auto c = run_cli({"estimate", "--model", "7B", "--gpu", "t4", "--calibration", bad});
  CHECK(c.code == 2);
}

TEST_CASE("calibrate: a README among the outputs is skipped and said; a mixture-of-experts row needs --model",
          "[calibrate]") {
  const std::string out = temp_path("moe-calibration.json");
  auto r = run_cli({"calibrate", source_path("tests/fixtures/calibrate/SOURCES.md"),
                    source_path("tests/fixtures/calibrate/llama-bench-rtx4090-qwen36-b8820.md"), "-o", out, "--format",
                    "json"});
  CHECK(r.code == 0);
  const auto j = util::Json::parse(r.out);
  std::string reasons;
  for (const auto& x : j["skipped"])
    reasons += x["source"].get<std::string>() + ": " + x["reason"].get<std::string>() + "\n";
  CHECK(reasons.find("SOURCES.md: not a format calibrate reads") != std::string::npos);
  CHECK(reasons.find("\"qwen35moe 35B.A3B Q4_K - Medium\" is a mixture-of-experts model: its parameter count does not "
                     "give its shape (give --model)") != std::string::npos);
}
