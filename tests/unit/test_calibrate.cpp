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
  CHECK(r.err ==
        "gpuadvisor: error: " + bad +
            ": not a format calibrate reads (it reads llama-bench markdown or -o json/jsonl, vLLM bench serve "
            "(benchmark_serving.py) JSON, vLLM benchmark_throughput.py JSON, SGLang bench_serving result and JSON, "
            "torchtune, torchtitan, Megatron-LM, NeMo and Hugging Face Trainer training logs, nvidia-smi --query-gpu "
            "CSV)\n");
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

namespace {

// calibrate's JSON for `args` (the fixtures named relative to tests/fixtures/calibrate).
util::Json calibrate_json(std::vector<std::string> files, std::vector<std::string> flags) {
  std::vector<std::string> args{"calibrate"};
  for (auto& f : files) args.push_back(source_path("tests/fixtures/calibrate/" + f));
  for (auto& f : flags) args.push_back(f);
  args.insert(args.end(), {"--format", "json", "-o", temp_path("training.json")});
  auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return util::Json::parse(r.out);
}

const util::Json* measurement(const util::Json& j, const std::string& kind, const std::string& file_part) {
  for (const auto& m : j["measurements"])
    if (m["kind"] == kind && m["source"].get<std::string>().find(file_part) != std::string::npos) return &m;
  return nullptr;
}

}  // namespace

// Training logs as the frameworks print them (tests/fixtures/calibrate/SOURCES.md): a steady rate
// (the median of the steps after the first fifth) and the peak memory; the workload from the flags.
TEST_CASE("calibrate: torchtitan, torchtune, Megatron-LM, NeMo and HF Trainer logs", "[calibrate][training]") {
  SECTION("torchtitan: tokens/s per GPU and reserved memory; the log names the device and NGPU") {
    auto j = calibrate_json({"torchtitan-8xh100-llama3-8b-seq8192.log"},
                            {"--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--zero", "fsdp", "--batch", "1",
                             "--seq-len", "8192", "--checkpointing", "selective"});
    CHECK(j["files"][0]["format"] == "torchtitan training log");
    const auto* rate = measurement(j, "train_tokens_per_s_per_gpu", "torchtitan");
    const auto* mem = measurement(j, "train_memory", "torchtitan");
    REQUIRE(rate);
    REQUIRE(mem);
    CHECK((*rate)["gpus"] == 8);  // NGPU=8
    CHECK((*rate)["measured"].get<double>() > 5000);
    CHECK((*mem)["measured"].get<double>() == Approx(49.66));  // the peak "memory: 49.66GiB(52.28%)"
    CHECK(j["scope"]["engines"] == util::Json::array({"training"}));
  }
  SECTION("torchtune: tokens_per_second_per_gpu and peak_memory_alloc") {
    auto j = calibrate_json({"torchtune-llama4-scout-full-distributed.log"},
                            {"--model", "llama-4-scout", "--gpu", "h100-sxm", "--gpus", "4", "--zero", "fsdp"});
    CHECK(j["files"][0]["format"] == "torchtune training log");
    const auto* mem = measurement(j, "train_memory", "torchtune");
    REQUIRE(mem);
    CHECK((*mem)["measured"].get<double>() > 27);
  }
  SECTION("Megatron-LM: TFLOP/s per GPU (the excerpt has no argument block: --gpus and --tp say the layout)") {
    auto j = calibrate_json(
        {"megatron-16xh100-mixtral-8x7b-tp4.log"},
        {"--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--gpus", "16", "--tp", "4", "--seq-len", "4096"});
    const auto* rate = measurement(j, "train_tflops_per_gpu", "megatron");
    REQUIRE(rate);
    CHECK((*rate)["gpus"] == 16);
    CHECK((*rate)["measured"].get<double>() == Approx(130.1));  // iterations 10-12: 137.5, 130.1, 128.1
  }
  SECTION("HF Trainer: samples/s made tokens/s per GPU with --seq-len and --gpus; without them, skipped") {
    auto j = calibrate_json({"hf-trainer-llama3-8b-medusa-bs4-seq1024.log"},
                            {"--model", "llama-3.1-8b", "--gpu", "a100-80gb-sxm", "--gpus", "8", "--seq-len", "1024",
                             "--batch", "4", "--zero", "fsdp", "--checkpointing", "full"});
    const auto* rate = measurement(j, "train_tokens_per_s_per_gpu", "hf-trainer");
    REQUIRE(rate);
    CHECK((*rate)["measured"].get<double>() == Approx(12.476 * 1024 / 8));
    auto k = calibrate_json({"hf-trainer-llama3-8b-medusa-bs4-seq1024.log"},
                            {"--model", "llama-3.1-8b", "--gpu", "a100-80gb-sxm"});
    REQUIRE(k["skipped"].size() == 1);
    CHECK(k["skipped"][0]["reason"] == "the log reports samples/s: give --seq-len (tokens per sample) and --gpus");
  }
  SECTION("Megatron-LM's arguments block gives the layout and the sequence length") {
    // world_size 8, tensor_model_parallel_size 4, pipeline_model_parallel_size 2, seq_length 8192;
    // iterations 1-6 and 17: 233.3, 248.4, 249.5, 249.8, 249.6, 250.9, 250.9 TFLOP/s per GPU, the
    // first fifth left out: the median of the other six.
    auto j = calibrate_json({"megatron-8xmi300x-gpt-28b-tp4pp2.log"}, {"--model", "28B", "--gpu", "mi300x"});
    CHECK(j["files"][0]["format"] == "Megatron-LM training log");
    const auto* rate = measurement(j, "train_tflops_per_gpu", "megatron");
    REQUIRE(rate);
    CHECK((*rate)["gpus"] == 8);
    CHECK((*rate)["engine"] == "training");
    CHECK((*rate)["measured"].get<double>() == Approx((249.6 + 249.8) / 2));
  }
  SECTION("NeMo: the progress bar's step time and consumed samples") {
    // global_step=5, consumed_samples=12288 (a global batch of 12288 / 6 = 2048), 49.50 s per step:
    // 2048 / 49.5 samples/s x 4096 tokens / 16 GPUs.
    auto j = calibrate_json({"nemo-16xh100-llama2-7b-gbs2048.log"},
                            {"--model", "llama-2-7b", "--gpu", "h100-sxm", "--gpus", "16", "--seq-len", "4096"});
    CHECK(j["files"][0]["format"] == "NeMo training log");
    const auto* rate = measurement(j, "train_tokens_per_s_per_gpu", "nemo");
    REQUIRE(rate);
    CHECK((*rate)["measured"].get<double>() == Approx(2048 / 49.5 * 4096 / 16));
  }
  SECTION("HF Trainer's memory metrics: the stage's start, alloc_delta and peaked_delta summed") {
    // before_init_mem_gpu 4747206656 + init_mem_gpu_alloc_delta 0 + train_mem_gpu_alloc_delta
    // 126487040 + train_mem_gpu_peaked_delta 11016635392 bytes, in GiB.
    auto j = calibrate_json({"hf-trainer-memory-metrics.log"},
                            {"--model", "llama-3.1-8b", "--gpu", "a100-80gb-sxm", "--seq-len", "4096"});
    const auto* mem = measurement(j, "train_memory", "hf-trainer-memory");
    REQUIRE(mem);
    CHECK((*mem)["measured"].get<double>() ==
          Approx((4747206656.0 + 126487040.0 + 11016635392.0) / (1024.0 * 1024 * 1024)));
  }
}

TEST_CASE("calibrate: a NeMo log of its first two steps only is skipped and says why", "[calibrate][training]") {
  // The progress bar's updates, separated by carriage returns as tqdm writes them.
  const std::string path = temp_path("nemo-early.log");
  std::ofstream(path) << "Epoch 0: :   7%|7         | 1/15 [00:59<13:46, reduced_train_loss=11.50, global_step=0.000, "
                         "consumed_samples=2048.0, train_step_timing in s=59.10]\r"
                         "Epoch 0: :  13%|#3        | 2/15 [01:48<11:44, reduced_train_loss=11.49, global_step=1.000, "
                         "consumed_samples=4096.0, train_step_timing in s=49.60]\n";
  auto r = run_cli({"calibrate", path, "--model", "llama-2-7b", "--gpu", "h100-sxm", "--seq-len", "4096", "--format",
                    "json", "-o", temp_path("nemo-early.json")});
  std::remove(path.c_str());
  REQUIRE(r.code == 0);
  auto j = util::Json::parse(r.out);
  CHECK(j["files"][0]["format"] == "NeMo training log");
  REQUIRE(j["skipped"].size() == 1);
  CHECK(j["skipped"][0]["reason"] == "only the first two steps: no steady rate after start-up");
}

// SGLang bench_serving: the printed result block and the --output-file JSON Lines. The decode rate
// per sequence is 1000 / the mean inter-token latency (or TPOT) at the concurrency measured; older
// JSON gives none, and Little's law over completed / duration x mean end-to-end latency stands in.
TEST_CASE("calibrate: SGLang bench_serving results", "[calibrate]") {
  auto j =
      calibrate_json({"sglang-bench-serving-8xh200-deepseek-r1.log", "sglang-bench-serving-h100-sxm-sharegpt.jsonl"},
                     {"--model", "llama-3.1-8b", "--gpu", "h100-sxm"});
  CHECK(j["files"][0]["format"] == "SGLang bench_serving result");
  CHECK(j["files"][1]["format"] == "SGLang bench_serving JSON");
  const auto* block = measurement(j, "decode_tokens_per_s", "deepseek");
  REQUIRE(block);
  CHECK((*block)["measured"].get<double>() == Approx(1000 / 36.34));  // Mean ITL (ms): 36.34
  CHECK((*block)["batch"] == 48);                                     // Concurrency: 48.35
  CHECK((*block)["engine"] == "sglang");
  CHECK((*block)["prompt_tokens"] == 1000);
  const auto* line = measurement(j, "decode_tokens_per_s", "sharegpt.jsonl:2");
  REQUIRE(line);
  CHECK((*line)["measured"].get<double>() == Approx(1000 / 5.3678154945373535));  // median_itl_ms
  CHECK((*line)["batch"] == 2);                                                   // 300 / 152.4 s x 1.1425 s
}
