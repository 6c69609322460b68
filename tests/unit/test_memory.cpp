#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_fixture.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/estimate/memory.h"
#include "test_data.h"

using namespace gpuadvisor;
using estimate::WorkloadInput;

namespace {

using test::eff;
using test::models;

estimate::Workload make(WorkloadInput in) { return estimate::make_workload(in, models()); }

double model_states(const estimate::MemoryEstimate& m) {
  return m.line("weights") + m.line("gradients") + m.line("master_weights") + m.line("optimizer_state");
}

}  // namespace

TEST_CASE("estimate::memory: ZeRO paper, 7.5B parameters on 64 GPUs (Rajbhandari et al. 2020, Figure 1)",
          "[memory][zero]") {
  WorkloadInput in;
  in.model = "7.5B";
  in.task = "train";
  in.precision = "fp16";
  in.gpus = "64";
  // Model states per device: 120 GB baseline, 31.4 GB stage 1, 16.6 GB stage 2, 1.9 GB stage 3.
  // The paper counts K = 12 bytes of optimizer state and no fp32 gradient partition; DeepSpeed
  // allocates one (4 bytes per parameter over the GPUs): beside the full 16-bit gradients at
  // stage 1, instead of the 16-bit partition at stages 2 and 3 (DeepSpeed's estimator: 18P/N at
  // stage 3, the paper 16P/N).
  const double expected[] = {120e9, 31.4e9, 16.6e9, 1.9e9};
  const double fp32_partition[] = {0, 7.5e9 * 4 / 64, 7.5e9 * 2 / 64, 7.5e9 * 2 / 64};
  for (int stage = 0; stage <= 3; ++stage) {
    in.zero = std::to_string(stage);
    auto m = estimate::estimate_memory(make(in), eff());
    INFO("stage " << stage);
    CHECK(model_states(m) == Approx(expected[stage] + fp32_partition[stage]).epsilon(0.02));
  }
}

// DeepSpeed's own estimator (deepspeed.runtime.zero.stage3.estimate_zero3_model_states_mem_needs,
// docs "Memory Requirements"): per GPU, largest_layer_memory + 18 x params / GPUs, with
// largest_layer_memory = 4 x the largest layer's parameters; worked here for Llama 3.1 8B on
// 8 GPUs (largest layer: the 128,256 x 4,096 embedding).
TEST_CASE("estimate::memory: ZeRO-3 model states as DeepSpeed's estimator counts them", "[memory][zero]") {
  WorkloadInput in;
  in.model = "llama-3.1-8b";
  in.task = "train";
  in.gpus = "8";
  in.zero = "3";
  auto m = estimate::estimate_memory(make(in), eff());
  const double P = 8030261248.0, largest = 128256.0 * 4096;
  CHECK(model_states(m) == Approx(18 * P / 8));
  CHECK(m.line("gather_buffers") == Approx(4 * largest));
  // The estimator's total: 18 x 8.03B / 8 + 4 x 525.3M = 20.17 GB.
  CHECK(model_states(m) + m.line("gather_buffers") == Approx(20.17e9).epsilon(0.005));
  SECTION("parameters offloaded: only the gathered layer stays (offload_param=cpu: largest_layer_memory)") {
    in.offload = "params";
    auto o = estimate::estimate_memory(make(in), eff());
    CHECK(model_states(o) == 0);
    CHECK(o.line("gather_buffers") == Approx(4 * largest));
    // Host RAM: 18 bytes per parameter in all (the estimator adds a 1.5 buffer factor on top).
    CHECK(o.host_bytes == Approx(18 * P));
  }
}

TEST_CASE("estimate::memory: weights", "[memory]") {
  WorkloadInput in;
  in.model = "gpt-3-175b";
  in.precision = "fp16";
  in.task = "inference";
  auto m = estimate::estimate_memory(make(in), eff());
  SECTION("175B parameters in fp16 are 350 GB") { CHECK(m.line("weights") == 350e9); }
  SECTION("int4 carries its group scales as a separate line") {
    in.precision = "int4";
    auto q = estimate::estimate_memory(make(in), eff());
    CHECK(q.line("weights") == 175e9 * 4 / 8);
    CHECK(q.line("quantization_constants") == Approx(175e9 * 0.125 / 8));
  }
  SECTION("NF4 keeps embeddings and the LM head in 16-bit") {
    WorkloadInput l;
    l.model = "llama-3.1-8b";
    l.precision = "nf4";
    auto q = estimate::estimate_memory(make(l), eff());
    const double emb = 2.0 * 128256 * 4096;
    CHECK(q.line("weights") == Approx((8030261248.0 - emb) * 4 / 8 + emb * 2));
  }
}

TEST_CASE("estimate::memory: KV cache", "[memory][kv]") {
  const auto* llama = models().find("llama-3.1-8b");
  REQUIRE(llama);
  // 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 128 KiB per token.
  CHECK(estimate::kv_bytes_per_token(*llama, "fp16") == 128 * 1024);
  CHECK(estimate::kv_bytes_per_token(*llama, "fp8") == 64 * 1024);
  // DeepSeek-V3 caches the MLA latent: 61 layers x (512 + 64) x 2 bytes.
  CHECK(estimate::kv_bytes_per_token(*models().find("deepseek-v3"), "fp16") == 61 * 576 * 2);
  WorkloadInput in;
  in.model = "llama-3.1-8b";
  in.seq_len = "8192";
  in.batch = "4";
  auto m = estimate::estimate_memory(make(in), eff());
  CHECK(m.line("kv_cache") == 128.0 * 1024 * 8192 * 4);
  SECTION("tensor parallelism splits the KV heads") {
    in.gpus = "2";
    auto t = estimate::estimate_memory(make(in), eff());
    CHECK(t.line("kv_cache") == 128.0 * 1024 * 8192 * 4 / 2);
    CHECK(t.line("weights") == Approx(8030261248.0 * 2 / 2));
  }
}

TEST_CASE("estimate::memory: sliding-window layers keep only their window of KV", "[memory][kv]") {
  // Gemma 3 27B (Gemma 3 Technical Report: five local layers of 1,024 tokens per global layer):
  // 10 global layers hold every token, 52 local layers the last 1,024; 16 KV heads of 128.
  WorkloadInput in;
  in.model = "gemma-3-27b";
  in.seq_len = "131072";
  auto m = estimate::estimate_memory(make(in), eff());
  CHECK(m.line("kv_cache") == Approx(2.0 * (10 * 131072.0 + 52 * 1024.0) * 16 * 128 * 2).epsilon(1e-12));
  // At or under the window every layer holds the whole context.
  in.seq_len = "1024";
  CHECK(estimate::estimate_memory(make(in), eff()).line("kv_cache") == 2.0 * 62 * 1024 * 16 * 128 * 2);
  // gpt-oss-20b: half of its 24 layers attend to the last 128 tokens (config layer_types).
  in.model = "gpt-oss-20b";
  in.seq_len = "8192";
  CHECK(estimate::estimate_memory(make(in), eff()).line("kv_cache") ==
        Approx(2.0 * (12 * 8192.0 + 12 * 128.0) * 8 * 64 * 2).epsilon(1e-12));
}

TEST_CASE("presets with a real config carry the config's sliding-window layout", "[memory][kv][real]") {
  const std::pair<const char*, const char*> pairs[] = {
      {"gemma-2-9b", "gemma-2-9b"},
      {"gemma-2-27b", "google--gemma-2-27b"},
      {"gemma-3-4b", "google--gemma-3-4b-it"},
      {"gemma-3-27b", "google--gemma-3-27b-it"},
      {"llama-4-maverick", "meta-llama--Llama-4-Maverick-17B-128E-Instruct"},
      {"mistral-7b", "mistral-7b"},
      {"gpt-oss-20b", "openai--gpt-oss-20b"},
      {"gpt-oss-120b", "openai--gpt-oss-120b"},
      {"phi-3-mini", "phi-3-mini"},
      {"llama-3.1-8b", "llama-3.1-8b"},
      {"qwen2.5-7b", "qwen2.5-7b"},
  };
  for (const auto& [preset, dir] : pairs) {
    INFO(preset);
    const auto* p = models().find(preset);
    REQUIRE(p);
    auto doc = util::JsonDoc::load(test::source_path(std::string("tests/fixtures/real/hf/") + dir + "/config.json"));
    REQUIRE(doc);
    auto c = catalog::model_from_hf_config(*doc);
    CHECK(p->sliding_layers == c.sliding_layers);
    CHECK(p->sliding_window == (c.sliding_layers ? c.sliding_window : 0));
  }
}

TEST_CASE("estimate::activation_bytes_per_layer reduces to Korthikanti et al. for GPT layers",
          "[memory][activations]") {
  // A GPT-3-style layer: h = 12288, a = 96, plain MLP 4h, MHA. Eq. (1): s*b*h*(34 + 5*a*s/h).
  catalog::Model gpt = *models().find("gpt-3-175b");
  const double s = 2048, b = 1, h = 12288, a = 96;
  CHECK(estimate::activation_bytes_per_layer(gpt, s, b, false) == Approx(s * b * h * (34 + 5 * a * s / h)));
  CHECK(estimate::activation_bytes_per_layer(gpt, s, b, true) == Approx(s * b * h * 34));
  SECTION("a hand-computed Llama 3.1 8B layer (GQA, SwiGLU)") {
    const auto& m = *models().find("llama-3.1-8b");
    // 2h + 2qd + 4kvd + 2qd + h + 4h + 2h + h + 6i with h = qd = 4096, kvd = 1024, i = 14336.
    const double per_token = 2 * 4096 + 2 * 4096 + 4 * 1024 + 2 * 4096 + 4096 + 4 * 4096 + 2 * 4096 + 4096 + 6 * 14336;
    CHECK(estimate::activation_bytes_per_layer(m, 4096, 2, true) == Approx(4096 * 2 * per_token));
  }
}

TEST_CASE("estimate: torchtitan's op-level selective checkpointing keeps every other matmul output",
          "[memory][activations]") {
  // torchtitan parallelize_llama.py (_apply_ac_to_transformer_block, selective_ac_option "op"):
  // the matmuls of a Llama block run q, k, v, o, w1 (gate), w3 (up), w2 (down); the 1st, 3rd, 5th
  // and 7th outputs are saved with the SDPA output; the block's input is the checkpoint's input.
  const auto& m = *models().find("llama-3.1-8b");
  // input h + attention output qd + q qd + v kvd + gate i + down h.
  CHECK(estimate::op_checkpoint_kept_per_token(m) == 4096 + 4096 + 4096 + 1024 + 14336 + 4096);
  // Recomputed: k (h x kvd), o (qd x h), up (h x i) in each of the 32 layers.
  CHECK(estimate::op_checkpoint_recomputed_params(m) == 32.0 * (4096 * 1024 + 4096 * 4096 + 4096 * 14336));

  WorkloadInput in;
  in.model = "llama-3.1-8b";
  in.task = "train";
  in.batch = "2";
  in.seq_len = "8192";
  in.checkpointing = "selective-op";
  auto w = make(in);
  CHECK(w.checkpointing == catalog::Checkpointing::selective_op);
  // Between no recomputation and full recomputation, in memory and in FLOPs.
  const double op = estimate::estimate_memory(w, eff()).line("activations");
  w.checkpointing = catalog::Checkpointing::none;
  const double none = estimate::estimate_memory(w, eff()).line("activations");
  w.checkpointing = catalog::Checkpointing::full;
  const double full = estimate::estimate_memory(w, eff()).line("activations");
  CHECK(full < op);
  CHECK(op < none);
  // 32 layers x 2 bytes x 16,384 tokens x 31,744 kept + one layer's activations, times the
  // fitted factor; the same factor scales the no-recomputation line.
  const double kept = 32 * 2.0 * 16384 * 31744 + estimate::activation_bytes_per_layer(m, 8192, 2, true);
  CHECK(op / none == Approx(kept / (32 * estimate::activation_bytes_per_layer(m, 8192, 2, true))));
}

TEST_CASE("estimate::memory: the breakdown adds up", "[memory]") {
  WorkloadInput in;
  in.model = "llama-3.1-8b";
  in.task = "qlora";
  in.batch = "4";
  in.seq_len = "2048";
  auto m = estimate::estimate_memory(make(in), eff());
  double sum = 0;
  for (const auto& l : m.lines) sum += l.per_gpu_bytes;
  CHECK(sum == Approx(m.per_gpu_bytes));
  CHECK(m.line("adapters") > 0);
  CHECK(m.line("gradients") == 0);  // the frozen base has no gradients
}

TEST_CASE("estimate::memory: monotonic in params, batch and context; never up with ZeRO or GPUs",
          "[memory][property]") {
  // Properties over a grid of workloads.
  for (const char* task : {"inference", "train", "lora", "qlora"}) {
    for (const char* model : {"1B", "7B", "70B", "llama-3.1-8b", "mixtral-8x7b"}) {
      WorkloadInput in;
      in.model = model;
      in.task = task;
      double prev_b = 0;
      for (int b : {1, 2, 4, 16}) {
        in.batch = std::to_string(b);
        double v = estimate::estimate_memory(make(in), eff()).per_gpu_bytes;
        CHECK(v >= prev_b);
        prev_b = v;
      }
      in.batch = "1";
      double prev_s = 0;
      for (int s : {128, 512, 2048, 8192}) {
        in.seq_len = std::to_string(s);
        double v = estimate::estimate_memory(make(in), eff()).per_gpu_bytes;
        CHECK(v >= prev_s);
        prev_s = v;
      }
      in.seq_len.clear();
      if (std::string(task) != "inference") {
        in.gpus = "8";
        double prev_z = 1e300;
        for (int z = 0; z <= 3; ++z) {
          in.zero = std::to_string(z);
          double v = estimate::estimate_memory(make(in), eff()).per_gpu_bytes;
          CHECK(v <= prev_z);
          prev_z = v;
        }
        in.zero.clear();
        in.gpus.clear();
      }
      double prev_g = 1e300;
      for (int g : {1, 2, 4, 8}) {
        in.gpus = std::to_string(g);
        if (std::string(task) != "inference") in.zero = "3";
        double v = estimate::estimate_memory(make(in), eff()).per_gpu_bytes;
        CHECK(v <= prev_g);
        prev_g = v;
      }
    }
  }
  double prev = 0;
  for (const char* size : {"1B", "3B", "7B", "13B", "34B", "70B"}) {
    WorkloadInput in;
    in.model = size;
    double v = estimate::estimate_memory(make(in), eff()).per_gpu_bytes;
    CHECK(v > prev);
    prev = v;
  }
}

TEST_CASE("estimate::fit: 10B in fp16 does not fit a 24 GB card; int8 does", "[memory][fit]") {
  auto cat = catalog::Catalog::load({});
  const auto& gpu = *cat.find("rtx-4090");
  WorkloadInput in;
  in.model = "10B";
  in.precision = "fp16";
  auto r = estimate::fit(make(in), gpu, eff());
  CHECK_FALSE(r.fits);
  CHECK(r.headroom_bytes < 0);
  in.precision = "int8";
  auto q = estimate::fit(make(in), gpu, eff());
  CHECK(q.fits);
  REQUIRE(q.max_seq_len);
  CHECK(*q.max_seq_len >= 4096);
  REQUIRE(q.max_batch);
  CHECK(*q.max_batch >= 1);
}

TEST_CASE("workload validation: exit 2 with the flag and the bad value", "[workload]") {
  auto err = [](std::vector<std::string> args) {
    args.insert(args.begin(), "memory");
    auto r = test::run_cli(args);
    CHECK(r.code == 2);
    return r.err;
  };
  CHECK(err({"--model", "7B", "--batch", "0"}) ==
        "gpuadvisor: error: --batch: expected a whole number from 1 to 1000000, got \"0\"\n");
  CHECK(err({"--model", "llama-3.1-8b", "--gpus", "3", "--tp", "3"}) ==
        "gpuadvisor: error: --tp: --tp 3 does not divide the model's 32 attention heads\n");
  CHECK(err({"--model", "lama-3.1-8b"}) ==
        "gpuadvisor: error: --model: unknown model \"lama-3.1-8b\", did you mean 'llama-3.1-8b'? (see 'gpuadvisor "
        "models list'; a bare size like 7B also works)\n");
  CHECK(err({"--model", "7B", "--task", "train", "--precision", "nf4"}) ==
        "gpuadvisor: error: --precision: full training needs fp32, tf32, fp16, bf16 or fp8 weights, got nf4 (4-bit "
        "bases train with --task qlora)\n");
  CHECK(err({"--model", "7B", "--precision", "fp17"}) ==
        "gpuadvisor: error: --precision: expected one of fp32, tf32, fp16, bf16, fp8, int8, int4, gptq-int4, awq-int4, "
        "gptq-int8, nf4, q4_0, q4_k_m, q5_k_m, q6_k, q8_0, got \"fp17\", did you mean 'fp16'?\n");
  CHECK(err({"--model", "NaN"}).find("--model: unknown model \"NaN\"") != std::string::npos);
  CHECK(err({"--model", "7B", "--zero", "2"}) ==
        "gpuadvisor: error: --zero: ZeRO shards training state; it does not apply to --task inference\n");
  CHECK(err({"--model", "7B", "--mfu", "1.5"}) ==
        "gpuadvisor: error: --mfu: expected a utilisation between 0 and 1 (e.g. 0.4), got \"1.5\"\n");
}

TEST_CASE("cli: memory JSON gives the same numbers as the table, in bytes", "[cli][memory]") {
  auto r = test::run_cli({"memory", "--model", "llama-3.1-8b", "--task", "qlora", "--batch", "4", "--seq-len", "2048",
                          "--format", "json"});
  REQUIRE(r.code == 0);
  auto j = util::Json::parse(r.out);
  double sum = 0;
  for (const auto& l : j["breakdown"]) sum += l["bytes"].get<double>();
  CHECK(sum == Approx(j["total_bytes"].get<double>()));
  CHECK(j["weights_bytes"].get<double>() > 0);
  CHECK(j["schema_version"] == 1);
}

// Batch lines are written as text (util::JsonText), single runs as a tree: the same members.
TEST_CASE("cli: a memory --batch-file line is the single run's JSON without breakdown and assumptions",
          "[cli][memory][batch]") {
  const auto lines_path = test::source_path("tests/golden/memory/batch-file/lines.jsonl");
  auto batch = test::run_cli({"memory", "--batch-file", lines_path});
  std::istringstream in_lines(util::read_file(lines_path).value()), out_lines(batch.out);
  const auto profile = std::filesystem::temp_directory_path() / "gpuadvisor-test-batch-profile.json";
  std::string line, result;
  int line_no = 0, compared = 0;
  while (std::getline(in_lines, line)) {
    ++line_no;
    if (line.empty()) continue;
    REQUIRE(std::getline(out_lines, result));
    auto got = util::Json::parse(result);
    REQUIRE(got["line"] == line_no);
    if (got.contains("error")) continue;
    auto fields = util::Json::parse(line);
    std::vector<std::string> args = {"memory", "--profile", profile.string(), "--format", "json"};
    for (const char* own : {"gpu", "headroom"})
      if (fields.contains(own)) {
        args.push_back(std::string("--") + own);
        args.push_back(fields[own].is_string() ? fields[own].get<std::string>() : fields[own].dump());
        fields.erase(own);
      }
    { std::ofstream(profile) << fields.dump(); }
    auto single = test::run_cli(args);
    INFO(line);
    REQUIRE(single.err.empty());
    auto want = util::Json::parse(single.out);
    for (const char* drop : {"schema_version", "gpuadvisor_version", "command", "breakdown", "assumptions"})
      want.erase(drop);
    got.erase("line");
    CHECK(got.dump() == want.dump());
    ++compared;
  }
  std::filesystem::remove(profile);
  CHECK(compared >= 6);
}

// torchtune README, "Memory and training speed" (pytorch/torchtune@bd2a0fc): Llama 3.1 8B, batch 2,
// packed to 2,048 tokens, on one RTX 4090: full fine-tune 18.9 GiB, LoRA 16.2 GiB, QLoRA 7.4 GiB
// peak memory, with the single-device recipes (8B_full_single_device.yaml: bf16, PagedAdamW8bit,
// optimizer_in_bwd, activation checkpointing; 8B_lora/qlora_single_device.yaml: rank 8 on
// q, v, output projections and the MLP). Their peak is PyTorch's: the CUDA context and the
// fragmentation reserve are left out of the comparison; within 10%.
TEST_CASE("estimate::memory: torchtune single-device recipes against their published peaks", "[memory][recipe]") {
  constexpr double GiB = 1024.0 * 1024 * 1024;
  WorkloadInput in;
  in.model = "llama-3.1-8b";
  in.recipe = "torchtune";
  in.batch = "2";
  in.seq_len = "2048";
  auto allocated = [](const estimate::MemoryEstimate& m) {
    return m.per_gpu_bytes - m.line("cuda_context") - m.line("fragmentation");
  };
  SECTION("full fine-tune: no master copy, the paged 8-bit optimizer in host RAM, one gradient at a time") {
    in.task = "train";
    auto w = make(in);
    CHECK_FALSE(w.master_weights);
    CHECK(w.optimizer == "paged-adamw-8bit");
    CHECK(w.optimizer_in_backward);
    auto m = estimate::estimate_memory(w, eff());
    CHECK(m.line("master_weights") == 0);
    CHECK(m.line("optimizer_state") == 0);
    CHECK(m.host_line("optimizer_state") == Approx(8030261248.0 * 2));
    CHECK(m.line("gradients") == Approx(128256.0 * 4096 * 2));
    CHECK(allocated(m) / GiB == Approx(18.9).epsilon(0.10));
    const auto* g = test::gpus().find("rtx-4090");
    REQUIRE(g);
    CHECK(estimate::fit(w, *g, eff()).fits);
  }
  SECTION("LoRA") {
    in.task = "lora";
    in.lora_rank = "8";
    in.lora_targets = "q,v,o,gate,up,down";
    auto m = estimate::estimate_memory(make(in), eff());
    CHECK(allocated(m) / GiB == Approx(16.2).epsilon(0.10));
  }
  SECTION("QLoRA, --precision bf16 naming the compute dtype over the NF4 base") {
    in.task = "qlora";
    in.precision = "bf16";
    in.lora_rank = "8";
    in.lora_targets = "q,v,o,gate,up,down";
    auto w = make(in);
    CHECK(w.precision == "nf4");
    auto m = estimate::estimate_memory(w, eff());
    CHECK(allocated(m) / GiB == Approx(7.4).epsilon(0.10));
  }
}

TEST_CASE("estimate::memory: recipe and training flags", "[memory][recipe]") {
  WorkloadInput in;
  in.model = "llama-3.1-8b";
  in.task = "train";
  SECTION("a flag overrides the recipe") {
    in.recipe = "torchtune";
    in.master_weights = "fp32";
    in.optimizer = "adamw";
    auto w = make(in);
    CHECK(w.master_weights);
    CHECK(w.optimizer == "adamw");
    CHECK(w.optimizer_in_backward);
  }
  SECTION("chunked loss holds one of 8 chunks of the logits") {
    auto whole = estimate::estimate_memory(make(in), eff());
    in.chunked_loss = "on";
    auto chunked = estimate::estimate_memory(make(in), eff());
    CHECK(chunked.line("logits") == Approx(whole.line("logits") / 8));
    // 16-bit logits and their fp32 copy, times the fitted factor (the loss's fp32 gradient too).
    CHECK(whole.line("logits") == Approx(2048.0 * 128256 * 6 * eff().get("logits-memory-factor").typical));
  }
  SECTION("without master weights torch.optim keeps AdamW states in bf16") {
    in.master_weights = "none";
    auto m = estimate::estimate_memory(make(in), eff());
    CHECK(m.line("master_weights") == 0);
    CHECK(m.line("optimizer_state") == Approx(8030261248.0 * 4));
  }
  SECTION("Megatron-LM: 18 bytes per parameter (bf16 weights, fp32 gradients, fp32 master and Adam)") {
    in.recipe = "megatron";
    auto m = estimate::estimate_memory(make(in), eff());
    CHECK(model_states(m) == Approx(8030261248.0 * 18));
  }
  SECTION("ZeRO-Offload moves the fp32 master, optimizer state and gradient partition to host RAM") {
    in.gpus = "8";
    in.zero = "2";
    in.offload = "optimizer";
    auto m = estimate::estimate_memory(make(in), eff());
    CHECK(m.line("optimizer_state") == 0);
    CHECK(m.line("master_weights") == 0);
    CHECK(m.per_gpu_host_bytes == Approx(8030261248.0 * 16 / 8));
    CHECK(m.host_bytes == Approx(8030261248.0 * 16));
  }
  SECTION("errors name the flag") {
    in.recipe = "torchtun";
    CHECK_THROWS_WITH(make(in), Catch::Contains("--recipe: expected one of torchtune,") &&
                                    Catch::Contains("did you mean 'torchtune'"));
    in.recipe = "";
    in.task = "inference";
    in.chunked_loss = "on";
    CHECK_THROWS_WITH(make(in), "--chunked-loss: applies to training (--task train, lora or qlora)");
  }
}

TEST_CASE("inference over N GPUs without --tp: the widest split the heads allow, the rest replicas", "[workload]") {
  auto layout = [](const std::string& model, const std::string& gpus) {
    estimate::WorkloadInput in;
    in.model = model;
    in.gpus = gpus;
    auto w = estimate::make_workload(in, test::models());
    return std::pair{w.tp, w.dp()};
  };
  CHECK(layout("gpt2", "8") == std::pair{4, 2});          // 12 heads
  CHECK(layout("llama-3.1-8b", "8") == std::pair{8, 1});  // 32 heads
  CHECK(layout("llama-3.1-8b", "6") == std::pair{2, 3});
  CHECK(layout("yolov8s", "2") == std::pair{1, 2});  // no layer shape to split
  // memory plans what fit plans, instead of refusing the GPU count.
  auto r = test::run_cli({"memory", "--model", "gpt2", "--gpus", "8"});
  CHECK(r.code == 0);
  CHECK(r.out.find("layout: tensor parallel 4 x 2 replicas: the model's 12 attention heads do not split over 8 "
                   "GPUs") != std::string::npos);
  // fit shows the longest context that fits, as memory does, not a bare "no".
  auto f = test::run_cli({"fit", "--gpu", "rtx-3060-12gb"});
  auto at = f.out.find("Model llama-2-13b");
  REQUIRE(at != std::string::npos);
  CHECK(f.out.substr(at, 400).find("inference int4  3,456\n") != std::string::npos);
  auto m = test::run_cli({"memory", "--model", "llama-2-13b", "--precision", "int4", "--gpu", "rtx-3060-12gb"});
  CHECK(m.out.find("Longest context at batch 1: 3,456 tokens.") != std::string::npos);
}

namespace {

// The first number after `label` on a line of `text` ("GPU KV cache size: 476,016 tokens"), commas
// dropped; -1 when no line has it.
double logged(const std::string& text, const std::string& label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return -1;
  std::string digits;
  for (std::size_t i = at + label.size(); i < text.size(); ++i) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.')
      digits += c;
    else if (c == ',' && !digits.empty())
      continue;
    else if (!digits.empty())
      break;
  }
  return digits.empty() ? -1 : std::stod(digits);
}

std::string fixture_text(const std::string& name) {
  std::ifstream f(test::source_path("tests/fixtures/real/serving/" + name));
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

// vLLM prints the KV cache it could allocate and how many requests of max_model_len that holds
// (tests/fixtures/real/serving/SOURCES.md: vLLM 0.19 on H100 80GB, gpu_memory_utilization 0.95).
// The estimate plans the same GPU with 5% kept free: within 4% of the logged capacity where the
// KV cache is most of the GPU. Qwen2.5-72B over two GPUs leaves 3 GiB for it, so a small
// difference in the rest (vLLM sees 79.19 GiB of the 80 GiB card; the all-reduce buffers of tensor
// parallelism) moves the capacity by a quarter: there the check is on the KV bytes, within 1 GiB.
TEST_CASE("estimate::fit: KV cache capacity and maximum concurrency as vLLM logs them", "[memory][kv][real]") {
  struct Case {
    const char* file;
    const char* model;
    const char* gpus;
    const char* kv;
  };
  const Case cases[] = {
      {"vllm-0.19-llama-3.1-8b-h100-tp1.log", "llama-3.1-8b", "1", ""},
      {"vllm-0.19-llama-3.1-8b-h100-tp1-kvfp8.log", "llama-3.1-8b", "1", "fp8"},
      {"vllm-0.19-llama-3.1-8b-h100-tp2.log", "llama-3.1-8b", "2", ""},
      {"vllm-0.19-qwen2.5-7b-h100-tp1.log", "qwen2.5-7b", "1", ""},
      {"vllm-0.19-qwen2.5-72b-h100-tp2.log", "qwen2.5-72b", "2", ""},
  };
  const auto* gpu = test::gpus().find("h100-sxm");
  REQUIRE(gpu);
  for (const auto& c : cases) {
    INFO(c.file);
    const std::string text = fixture_text(c.file);
    const double tokens = logged(text, "GPU KV cache size:");
    const double context = logged(text, "Maximum concurrency for");
    const double concurrency = logged(text, "tokens per request:");
    REQUIRE(tokens > 0);
    REQUIRE(context == 8192);
    WorkloadInput in;
    in.model = c.model;
    in.gpus = c.gpus;
    in.engine = "vllm";
    in.precision = "bf16";
    in.kv_precision = c.kv;
    in.seq_len = "8192";
    const auto w = make(in);
    const auto f = estimate::fit(w, *gpu, eff(), 0.05);
    REQUIRE(f.kv_capacity_tokens);
    REQUIRE(f.max_concurrency);
    const double per_token = estimate::kv_bytes_per_token(w.model, w.kv_precision) / w.tp;
    if (std::string(c.model) == "qwen2.5-72b") {
      CHECK(std::fabs(*f.kv_capacity_tokens - tokens) * per_token < 1.0 * (1 << 30));
    } else {
      CHECK(*f.kv_capacity_tokens == Approx(tokens).epsilon(0.04));
      CHECK(*f.max_concurrency == Approx(concurrency).epsilon(0.04));
    }
  }
}

// llama.cpp's load log for -ngl 20 of Mistral 7B's 33 (32 layers and the output layer), Q4_K_M
// at n_ctx 768 (tests/fixtures/real/serving/SOURCES.md, arXiv:2509.11947 appendix B): the GPU
// holds 20 layers' weights (CUDA0 model buffer 2,495.31 MiB; the embeddings and output layer stay
// on the CPU) and 20 layers' KV cache (CUDA0 KV buffer 60.00 MiB, CPU KV buffer 36.00 MiB).
TEST_CASE("estimate::memory: llama.cpp partial offload as its load log prints the buffers", "[memory][kv][real]") {
  const std::string text = fixture_text("llamacpp-mistral-7b-q4km-ngl20.log");
  const double gpu_weights = logged(text, "CUDA0 model buffer size =");
  const double gpu_kv = logged(text, "CUDA0 KV buffer size =");
  const double cpu_kv = logged(text, "CPU KV buffer size =");
  REQUIRE(gpu_weights == Approx(2495.31));
  REQUIRE(gpu_kv == 60);
  REQUIRE(cpu_kv == 36);
  WorkloadInput in;
  in.model = "mistral-7b";
  in.precision = "q4_k_m";
  in.gpu_layers = "20";
  in.seq_len = "768";
  const auto m = estimate::estimate_memory(make(in), eff());
  constexpr double MiB = 1024.0 * 1024;
  CHECK((m.line("weights") + m.line("quantization_constants")) / MiB == Approx(gpu_weights).epsilon(0.03));
  CHECK(m.line("kv_cache") / MiB == Approx(gpu_kv).epsilon(0.001));
  CHECK(m.host_line("kv_cache") / MiB == Approx(cpu_kv).epsilon(0.001));
}

// transformers' generate() prefills the whole prompt in one pass; serving engines take it in
// chunks. Qwen2.5-72B-Instruct in bf16 over three A100 80GB (device_map="auto": whole layers per
// GPU), a 30,720-token prompt and 2,048 new tokens: torch.cuda.max_memory_allocated() summed over
// the GPUs is 164.79 GiB (QwenLM/Qwen2.5 docs/source/benchmark/speed_benchmark.rst @010c37c,
// "72B (Transformer)"; shared/reference, B-qwen25-15).
TEST_CASE("estimate::memory: transformers holds the whole prompt's activations, vLLM a chunk", "[memory][engine]") {
  WorkloadInput in;
  in.model = "qwen2.5-72b";
  in.precision = "bf16";
  in.gpus = "3";
  in.seq_len = std::to_string(30720 + 2048);
  in.engine = "transformers";
  const auto w = make(in);
  REQUIRE(w.split == catalog::Split::layer);
  const auto m = estimate::estimate_memory(w, eff());
  const double per_token = 2.0 * (4 * 8192 + 3 * 29568);
  CHECK(m.line("activations") == Approx((30720 + 2048) * per_token));  // every GPU runs all tokens through its layers
  const double allocated = m.per_gpu_bytes - m.line("cuda_context") - m.line("fragmentation");
  CHECK(3 * allocated / (1024.0 * 1024 * 1024) == Approx(164.79).epsilon(0.05));
  in.engine = "vllm";
  in.gpus = "4";
  const auto v = estimate::estimate_memory(make(in), eff());
  CHECK(v.line("activations") == Approx(estimate::kPrefillChunk * per_token / 4));  // 2,048 tokens, tensor parallel 4
}
