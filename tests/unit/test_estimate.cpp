#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "cli_fixture.h"
#include "gpuadvisor/estimate/cost.h"
#include "gpuadvisor/estimate/perf.h"
#include "test_data.h"

using namespace gpuadvisor;
using estimate::WorkloadInput;

namespace {

using test::eff;
using test::gpus;
using test::models;
constexpr double kYear = 365.25 * 86400;
}  // namespace

TEST_CASE("estimate::perf: GPT-3 takes years on 8 A100s, not days, and does not fit 16 RTX 4090s", "[perf][gpt3]") {
  WorkloadInput in;
  in.model = "gpt-3-175b";
  in.task = "train";
  in.tokens = "300B";
  in.gpus = "8";
  estimate::WorkloadSet set;
  auto w = estimate::make_workload(in, models(), &set);
  const auto& a100 = *gpus().find("a100-80gb-sxm");
  auto p = estimate::estimate_perf(w, a100, eff());
  // 6 x 175e9 x 300e9 = 3.15e23 FLOPs plus attention.
  CHECK(p.total_flops == Approx(6 * 175e9 * 300e9).epsilon(0.05));
  REQUIRE(p.time_s);
  CHECK(p.time_s->typical > 5 * kYear);
  CHECK(p.time_s->low > 1 * kYear);
  CHECK_FALSE(estimate::fit(estimate::plan_layout(w, set, a100, eff()), a100, eff()).fits);
  in.gpus = "16";
  auto w16 = estimate::make_workload(in, models(), &set);
  const auto& rtx = *gpus().find("rtx-4090");
  CHECK_FALSE(estimate::fit(estimate::plan_layout(w16, set, rtx, eff()), rtx, eff()).fits);
  SECTION("on 1024 A100s it takes days and fits with ZeRO-3") {
    in.gpus = "1024";
    auto big = estimate::plan_layout(estimate::make_workload(in, models(), &set), set, a100, eff());
    CHECK(estimate::fit(big, a100, eff()).fits);
    auto pb = estimate::estimate_perf(big, a100, eff());
    CHECK(pb.time_s->typical < 90 * 86400.0);
    CHECK(pb.time_s->typical > 5 * 86400.0);
  }
}

TEST_CASE("estimate::perf: decode of a 7-8B fp16 model is bandwidth-bound and below bandwidth / weights",
          "[perf][decode]") {
  WorkloadInput in;
  in.model = "llama-3.1-8b";
  in.precision = "fp16";
  in.seq_len = "512";
  auto w = estimate::make_workload(in, models());
  for (const char* id : {"rtx-4090", "rtx-3090", "a100-80gb-sxm", "h100-sxm"}) {
    const auto& g = *gpus().find(id);
    auto p = estimate::estimate_perf(w, g, eff());
    INFO(id);
    CHECK(p.bound == "memory bandwidth");
    CHECK(p.decode_tokens_per_s.high < g.bandwidth_bytes_per_s() / (8030261248.0 * 2));
    CHECK(p.decode_tokens_per_s.low < p.decode_tokens_per_s.typical);
  }
  // llama.cpp token generation of LLaMA 2 7B F16 on an RTX 4090 is published at 60.78 tokens/s
  // (shared/reference/published-measurements.json, C-llamacpp2-04). One step is the weights read
  // at the engine's fitted share of the bandwidth plus its fixed cost per layer.
  in.model = "llama-2-7b";
  in.engine = "llama.cpp";
  auto p = estimate::estimate_perf(estimate::make_workload(in, models()), *gpus().find("rtx-4090"), eff());
  const auto& t = p.decode_terms;
  CHECK(t.memory_s == Approx(p.decode_bytes_per_step / (1008e9 * p.bandwidth_efficiency)));
  CHECK(t.overhead_s == Approx(32 * eff().get("decode-layer-overhead-llama.cpp").typical));
  CHECK(t.step_s == Approx(t.memory_s + t.overhead_s));
  CHECK(p.decode_tokens_per_s.typical == Approx(1 / t.step_s));
  CHECK(p.decode_tokens_per_s.typical == Approx(60.78).epsilon(0.15));
}

// llama.cpp with -ngl below all layers: each step reads the GPU's layers from its memory and the
// rest from host RAM, one after the other. The InventiveHQ -ngl sweep (tests/accuracy/
// extra-records.json, X-offload-01..06: Qwen2.5-Coder-14B Q4_K_M on an RTX 5060 Ti, DDR4-2400 in
// two channels = 38.4 GB/s) publishes 2.89 tokens/s with no layer on the GPU and 7.26 with 32 of 48.
TEST_CASE("estimate::perf: layers left on the CPU are read from host RAM", "[perf][decode][offload]") {
  WorkloadInput in;
  in.model = "qwen2.5-14b";
  in.precision = "q4_k_m";
  in.seq_len = "128";
  in.host_bandwidth = "38.4";
  const auto& g = *gpus().find("rtx-5060-ti-16gb");
  const double share = eff().get("decode-bandwidth-host").typical;
  auto at = [&](const char* layers) {
    in.gpu_layers = layers;
    return estimate::estimate_perf(estimate::make_workload(in, models()), g, eff());
  };
  const auto none = at("0");
  CHECK(none.bound == "host memory bandwidth");
  CHECK(none.decode_terms.memory_s == Approx(0).margin(1e-4));
  CHECK(none.decode_terms.step_s == Approx(none.decode_terms.host_s + none.decode_terms.memory_s));
  CHECK(none.decode_tokens_per_s.typical == Approx(2.89).epsilon(0.10));
  const auto most = at("32");
  CHECK(most.decode_tokens_per_s.typical == Approx(7.26).epsilon(0.15));
  CHECK(most.decode_terms.host_s > most.decode_terms.memory_s);
  // The host term is the bytes left in host RAM (less the token-embedding table, of which a step
  // reads one row) over the host's bandwidth at the fitted share.
  in.gpu_layers = "32";
  const auto w = estimate::make_workload(in, models());
  const auto mem = estimate::memory_bytes(w, eff());
  const double table = 152064.0 * 5120 * w.format().bits / 8;
  CHECK(most.decode_terms.host_s == Approx((mem.host_bytes - table) / (38.4e9 * share)));
  // All the layers on the GPU: no host term.
  in.gpu_layers = "48";
  const auto all = estimate::estimate_perf(estimate::make_workload(in, models()), g, eff());
  CHECK(all.decode_terms.host_s == 0);
  CHECK(all.decode_tokens_per_s.typical > 3 * most.decode_tokens_per_s.typical);
  // --host-bandwidth needs layers on the CPU.
  WorkloadInput bad;
  bad.model = "qwen2.5-14b";
  bad.host_bandwidth = "60";
  CHECK_THROWS_WITH(estimate::make_workload(bad, models()),
                    "--host-bandwidth: applies with --gpu-layers or --cpu-experts (llama.cpp weights left on the CPU)");
  bad.gpu_layers = "10";
  bad.host_bandwidth = "fast";
  CHECK_THROWS_WITH(estimate::make_workload(bad, models()),
                    Catch::Contains("--host-bandwidth: expected host RAM bandwidth in GB/s from 1 to 100,000"));
}

// llama.cpp --cpu-moe: a mixture-of-experts model's routed experts in host RAM, attention, shared
// parts and the KV cache on the GPU. A step reads the k of E experts each token is routed to.
TEST_CASE("estimate: MoE experts kept on the CPU (--cpu-experts)", "[perf][memory][offload]") {
  WorkloadInput in;
  in.model = "qwen3-30b-a3b";
  in.precision = "q4_k_m";
  in.cpu_experts = "on";
  in.host_bandwidth = "38.4";
  const auto w = estimate::make_workload(in, models());
  REQUIRE(w.cpu_experts);
  const auto& m = w.model;
  const double routed = catalog::routed_expert_params(m);
  CHECK(routed == Approx(128.0 * 3 * 2048 * 768 * 48));  // 128 experts of 3 x 2048 x 768, 48 layers
  const auto mem = estimate::memory_bytes(w, eff());
  const double weights_gpu = mem[estimate::MemoryLineId::weights] + mem[estimate::MemoryLineId::quantization_constants];
  const double weights_host = mem.host_lines[static_cast<std::size_t>(estimate::MemoryLineId::weights)] +
                              mem.host_lines[static_cast<std::size_t>(estimate::MemoryLineId::quantization_constants)];
  CHECK(weights_host / (weights_gpu + weights_host) == Approx(routed / catalog::count_params(m)));
  CHECK(mem.host_lines[static_cast<std::size_t>(estimate::MemoryLineId::kv_cache)] == 0);  // the KV cache stays
  const auto p = estimate::estimate_perf(w, *gpus().find("rtx-5060-ti-16gb"), eff());
  CHECK(p.bound == "host memory bandwidth");
  CHECK(p.decode_terms.host_s ==
        Approx(weights_host * 8 / 128 / (38.4e9 * eff().get("decode-bandwidth-host").typical)));
  // Errors: dense models, training, and formats llama.cpp does not run.
  auto fails = [&](WorkloadInput x, const std::string& want) {
    CHECK_THROWS_WITH(estimate::make_workload(x, models()), Catch::Contains(want));
  };
  WorkloadInput dense = in;
  dense.model = "llama-3.1-8b";
  fails(dense, "--cpu-experts: Llama 3.1 8B has no routed experts to keep on the CPU");
  WorkloadInput fp16 = in;
  fp16.precision = "fp16";
  fails(fp16, "--cpu-experts: keeping experts on the CPU is llama.cpp's --cpu-moe, which runs GGUF weights, not fp16");
  WorkloadInput both = in;
  both.gpu_layers = "20";
  fails(both, "--cpu-experts: give --gpu-layers or --cpu-experts, not both");
}

TEST_CASE("estimate::perf: a machine with no published compute peak gets decode from bandwidth alone",
          "[perf][decode]") {
  WorkloadInput in;
  in.model = "llama-3.1-70b";
  in.precision = "q4_k_m";
  in.seq_len = "256";  // tg512 from an empty context: the mean context is 256 tokens
  auto w = estimate::make_workload(in, models());
  const auto& g = *gpus().find("apple-m2-ultra-192gb");
  REQUIRE_FALSE(g.any_peak());
  auto p = estimate::estimate_perf(w, g, eff());
  REQUIRE(p.available);
  CHECK_FALSE(p.compute_known);
  CHECK(p.bound == "memory bandwidth");
  CHECK(p.time_to_first_token_s == 0);
  CHECK(p.decode_tokens_per_s.typical ==
        Approx(1 / (p.decode_bytes_per_step / (p.bandwidth_efficiency * g.bandwidth_bytes_per_s()) +
                    p.decode_terms.overhead_s)));
  // llama.cpp tg512 of Llama 3 70B Q4_K_M on an M2 Ultra (800 GB/s) is published at 12.48 tokens/s
  // (shared/reference/published-measurements.json, C-llamacpp3-19); the estimate is within 10% of
  // it (vendor-apple is fitted on llama.cpp runs on M1 Max, M2 Ultra and M3 Max chips).
  CHECK(p.decode_tokens_per_s.typical == Approx(12.48).epsilon(0.10));
  CHECK(std::find(p.factors.begin(), p.factors.end(), "vendor-apple") != p.factors.end());
  CHECK(p.borrowed.empty());
  const auto j = estimate::to_json(p, w);
  CHECK(j["prefill_tokens_per_s"].is_null());
  CHECK(j["time_to_first_token_s"].is_null());
  CHECK(j["peak_flops_per_gpu"].is_null());
  // Below 16-bit math nothing is assumed: fp8 has no estimate, and training none either.
  in.precision = "fp8";
  CHECK_FALSE(estimate::estimate_perf(estimate::make_workload(in, models()), g, eff()).available);
  in.precision = "";
  in.task = "lora";
  in.model = "llama-3.1-8b";
  CHECK_FALSE(estimate::estimate_perf(estimate::make_workload(in, models()), g, eff()).available);
}

TEST_CASE("estimate::perf: doubling GPUs never more than doubles throughput", "[perf][property]") {
  for (const char* task : {"train", "inference", "lora"}) {
    for (const char* gpu : {"h100-sxm", "rtx-4090", "a100-80gb-pcie", "mi300x"}) {
      WorkloadInput in;
      in.model = "llama-3.1-8b";  // 32 heads: tensor parallelism up to 32 divides them
      in.task = task;
      double prev = 0;
      for (int n : {1, 2, 4, 8, 16, 32}) {
        in.gpus = std::to_string(n);
        auto w = estimate::make_workload(in, models());
        auto p = estimate::estimate_perf(w, *gpus().find(gpu), eff());
        double t = std::string(task) == "inference" ? p.prefill_tokens_per_s.typical : p.tokens_per_s.typical;
        INFO(task << " " << gpu << " x" << n);
        if (prev > 0) {
          CHECK(t <= 2 * prev * (1 + 1e-9));
          CHECK(t >= prev);
        }
        prev = t;
      }
    }
  }
}

TEST_CASE("estimate::perf: an NVLink bridge joins a pair; more bridged cards scale as PCIe", "[perf][scaling]") {
  WorkloadInput in;
  in.model = "llama-3.1-8b";
  in.task = "train";
  const auto& rtx3090 = *gpus().find("rtx-3090");
  REQUIRE(rtx3090.interconnect == std::optional<std::string>("nvlink-bridge"));
  auto factor = [&](int n) {
    in.gpus = std::to_string(n);
    auto p = estimate::estimate_perf(estimate::make_workload(in, models()), rtx3090, eff());
    REQUIRE(p.factors.size() >= 2);
    return std::find(p.factors.begin(), p.factors.end(), "scaling-nvlink") != p.factors.end() ? "nvlink" : "pcie";
  };
  CHECK(std::string(factor(2)) == "nvlink");
  CHECK(std::string(factor(4)) == "pcie");
  CHECK(std::string(factor(8)) == "pcie");
  // NVSwitch systems keep the fast link at any count.
  in.gpus = "8";
  auto h = estimate::estimate_perf(estimate::make_workload(in, models()), *gpus().find("h100-sxm"), eff());
  CHECK(std::find(h.factors.begin(), h.factors.end(), "scaling-nvlink") != h.factors.end());
}

TEST_CASE("estimate::cost: break-even and energy against a hand computation", "[cost]") {
  WorkloadInput in;
  in.model = "llama-3.1-8b";
  in.gpus = "8";
  auto w = estimate::make_workload(in, models());
  const auto& h100 = *gpus().find("h100-sxm");
  catalog::Prices prices;
  catalog::CloudInstance inst;
  inst.id = "test-8x";
  inst.gpu_id = "h100-sxm";
  inst.gpu_count = 8;
  inst.usd_per_hour = 40;
  prices.instances.push_back(inst);
  estimate::CostOptions o;
  o.kwh_usd = 0.10;
  o.pue = 1.5;
  o.utilization = 0.5;
  o.years = 3;
  o.hours = 100;
  auto perf = estimate::estimate_perf(w, h100, eff());
  auto c = estimate::estimate_cost(w, h100, perf, true, prices, o);
  // Purchase: 8 x street price. Energy: 8 x 700 W x 1.5 x $0.10 = $0.84 per hour (no platform data).
  REQUIRE(c.purchase_usd);
  CHECK(*c.purchase_usd == 8 * *h100.street.usd);
  CHECK(c.usd_per_hour_energy == Approx(0.84));
  CHECK(*c.job_energy_usd == Approx(84));
  // Break-even: purchase / (40 - 0.84) busy hours; months at 50% of 730.5 h.
  double h = *c.purchase_usd / (40 - 0.84);
  CHECK(*c.breakeven_hours == Approx(h));
  CHECK(*c.breakeven_months == Approx(h / (8766.0 / 12 * 0.5)));
  // TCO over 3 years at 50%: purchase + 3 x 8766 x 0.5 x $0.84.
  CHECK(*c.tco_usd == Approx(*c.purchase_usd + 3 * 8766 * 0.5 * 0.84));
  REQUIRE(c.cloud.size() == 1);
  CHECK(*c.cloud[0].job_usd == Approx(4000));
}

TEST_CASE("cli: estimate and cost outputs", "[cli][perf][cost]") {
  auto r = test::run_cli({"estimate", "--model", "llama-3.1-8b", "--task", "inference", "--precision", "fp16", "--gpu",
                          "rtx-4090", "--format", "json"});
  REQUIRE(r.code == 0);
  auto j = util::Json::parse(r.out);
  CHECK(j["prefill_tokens_per_s"].get<double>() > 0);
  CHECK(j["decode_tokens_per_s"].get<double>() > 0);
  CHECK(j["bound"] == "memory bandwidth");
  auto c = test::run_cli({"cost", "--model", "gpt-3-175b", "--task", "train", "--tokens", "300B", "--gpu",
                          "a100-80gb-sxm", "--gpus", "1024", "--format", "json"});
  REQUIRE(c.code == 0);
  auto cj = util::Json::parse(c.out);
  CHECK(cj["fits"] == true);
  CHECK(cj["time_s"].get<double>() < 90 * 86400.0);
  CHECK(cj["purchase_usd"].get<double>() > 1e7);
  auto no = test::run_cli({"cost", "--model", "gpt-3-175b", "--task", "train", "--tokens", "300B", "--gpu",
                           "a100-80gb-sxm", "--gpus", "8"});
  CHECK(no.code == 1);
  CHECK(no.out.find("Does not fit") != std::string::npos);
  CHECK(no.out.find("years") != std::string::npos);
  CHECK(test::run_cli({"estimate", "--model", "7B"}).err ==
        "gpuadvisor: error: --gpu is required: which GPU to estimate on (e.g. --gpu rtx-4090)\n");
}

TEST_CASE("estimate::perf: llama.cpp's layer split of a GGUF model holds more but decodes no faster",
          "[perf][scaling]") {
  // llama.cpp's default --split-mode layer gives each GPU a run of layers; a token passes through
  // them in turn. Published: 2 x RTX 4090, Llama 3 70B Q4_K_M, tg512 19.22 tokens/s, about what
  // one GPU with the bandwidth would give for the whole model (shared/reference, C-llamacpp3-15).
  WorkloadInput in;
  in.model = "llama-3.1-70b";
  in.precision = "q4_k_m";
  const auto& g = *gpus().find("rtx-4090");
  auto one = estimate::estimate_perf(estimate::make_workload(in, models()), g, eff(), true);
  in.gpus = "2";
  auto w2 = estimate::make_workload(in, models());
  REQUIRE(w2.tp == 2);
  auto two = estimate::estimate_perf(w2, g, eff(), true);
  REQUIRE(one.available);
  REQUIRE(two.available);
  // Each GPU reads half per step, in turn: the step takes as long as one GPU reading all of it.
  CHECK(two.decode_bytes_per_step == Approx(one.decode_bytes_per_step / 2).epsilon(0.01));
  CHECK(two.decode_tokens_per_s.typical == Approx(one.decode_tokens_per_s.typical).epsilon(0.01));
  CHECK(two.prefill_tokens_per_s.typical == Approx(one.prefill_tokens_per_s.typical));
  CHECK(two.scaling == 1);
  CHECK(std::find(two.factors.begin(), two.factors.end(), "scaling-pcie") == two.factors.end());
  CHECK(std::any_of(two.assumptions.begin(), two.assumptions.end(), [](const std::string& a) {
    return a.find("llama.cpp splits the layers over 2 GPUs") != std::string::npos;
  }));
  // The same model in a format vLLM runs splits by tensor parallelism: two GPUs decode faster.
  in.precision = "awq-int4";
  auto tp2 = estimate::estimate_perf(estimate::make_workload(in, models()), g, eff());
  in.gpus.clear();
  auto tp1 = estimate::estimate_perf(estimate::make_workload(in, models()), g, eff());
  CHECK(tp2.decode_tokens_per_s.typical > 1.5 * tp1.decode_tokens_per_s.typical);
}

TEST_CASE("estimate::fit_resale: recovers the rate it was made with; too few cards is no fit", "[cost][resale]") {
  // Cards made with used = launch x 1.4 x exp(-0.25 age): the fit finds k = 0.25 (the level 1.4
  // cancels) with no spread.
  auto card = [](const std::string& id, int year, double launch, const std::string& as_of, double k) {
    catalog::Gpu g;
    g.id = id;
    g.segment = catalog::Segment::consumer;
    g.release_year = year;
    g.launch_msrp_usd = launch;
    g.used.as_of = as_of;
    const double age = std::stoi(as_of.substr(0, 4)) + (std::stoi(as_of.substr(5, 2)) - 1) / 12.0 - (year + 0.5);
    g.used.usd = launch * 1.4 * std::exp(-k * age);
    return g;
  };
  std::vector<catalog::Gpu> cards = {card("a", 2020, 1500, "2026-07", 0.25), card("b", 2022, 800, "2026-01", 0.25),
                                     card("c", 2024, 600, "2026-09", 0.25), card("d", 2025, 2000, "2026-03", 0.25)};
  auto fit = estimate::fit_resale(cards);
  REQUIRE(fit.usable());
  CHECK(fit.loss_per_year == Approx(1 - std::exp(-0.25)));
  CHECK(fit.loss_low == Approx(fit.loss_per_year).margin(1e-9));
  CHECK(fit.loss_high == Approx(fit.loss_per_year).margin(1e-9));
  CHECK(fit.gpu_ids == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(fit.segments == std::vector<std::string>{"consumer"});
  CHECK(fit.as_of == "2026-09");
  CHECK(estimate::resale_usd(1000, 12, 0.2) == Approx(800));
  CHECK(estimate::resale_usd(1000, 24, 0.2) == Approx(640));
  // A card without a launch price or a used date is not fitted; two cards are too few.
  cards[2].launch_msrp_usd.reset();
  cards[3].used.as_of.clear();
  CHECK_FALSE(estimate::fit_resale(cards).usable());
  // Cards that gain value with age give no loss, not a negative one.
  std::vector<catalog::Gpu> rising = {card("a", 2020, 1500, "2026-07", -0.1), card("b", 2022, 800, "2026-01", -0.1),
                                      card("c", 2024, 600, "2026-09", -0.1)};
  CHECK(estimate::fit_resale(rising).loss_per_year == 0);
  // The catalog's own used prices give a fit.
  auto shipped = estimate::fit_resale(gpus().gpus());
  CHECK(shipped.gpu_ids.size() >= estimate::ResaleFit::kMinCards);
  CHECK(shipped.loss_low <= shipped.loss_per_year);
  CHECK(shipped.loss_per_year <= shipped.loss_high);
}

TEST_CASE("estimate::perf: a long run loses time to interruptions, in proportion to its GPUs", "[perf][train]") {
  // Llama 3 405B: under 10% of the time lost on 16,384 H100s (arXiv 2407.21783, section 3.3.4).
  const auto& g = *gpus().find("h100-sxm");
  auto lost_share = [&](int n) {
    WorkloadInput in;
    in.model = "7B";
    in.task = "train";
    in.tokens = "1T";
    in.gpus = std::to_string(n);
    auto p = estimate::estimate_perf(estimate::make_workload(in, models()), g, eff(), true);
    REQUIRE(p.time_s);
    return 1 - 1e12 / p.tokens_per_s.typical / p.time_s->typical;
  };
  CHECK(lost_share(16384) == Approx(0.10));
  CHECK(lost_share(1024) == Approx(0.10 * 1024 / 16384));
  CHECK(lost_share(8) == Approx(0.10 * 8 / 16384));
}

// SD 1.5's UNet: 338.7 G MACs per pass at 512x512 (BK-SDM issue #53, thop), so one step with
// classifier-free guidance is 2 x 677.5 GFLOPs; the VAE decoder 2,480 GFLOPs once per image.
TEST_CASE("estimate::perf: a diffusion image is steps x guidance UNet passes plus one decode", "[perf][vision]") {
  WorkloadInput in;
  in.model = "sd-1.5";
  in.steps = "20";
  estimate::WorkloadSet set;
  auto w20 = estimate::make_workload(in, models(), &set);
  CHECK(w20.steps == 20);
  in.steps = "40";
  auto w40 = estimate::make_workload(in, models(), &set);
  const auto& gpu = *gpus().find("a100-80gb-sxm");
  auto p20 = estimate::estimate_perf(w20, gpu, eff());
  auto p40 = estimate::estimate_perf(w40, gpu, eff());
  REQUIRE(p20.images_per_s);
  REQUIRE(p20.steps_per_s);
  REQUIRE(p20.image_batch_s);
  // Steps per second do not depend on how many steps an image takes.
  CHECK(p20.steps_per_s->typical == Approx(p40.steps_per_s->typical));
  // The decoder is paid once: twice the steps take less than twice the time.
  const double t20 = p20.image_batch_s->typical, t40 = p40.image_batch_s->typical;
  CHECK(t40 < 2 * t20);
  CHECK(t40 > 1.8 * t20);
  // The time is the steps' time plus the decoder's at the same utilisation.
  const double decoder_s = 2480.2e9 / (gpu.peak_flops(catalog::Precision::fp16).value() * p20.mfu);
  CHECK(t20 == Approx(20 / p20.steps_per_s->typical + decoder_s).epsilon(1e-6));
  CHECK(p20.images_per_s->typical == Approx(1 / t20));
  // Without --steps the model's default (30) is taken and said.
  in.steps.clear();
  auto w = estimate::make_workload(in, models(), &set);
  CHECK(w.steps == 30);
  CHECK(std::find(w.assumptions.begin(), w.assumptions.end(), "denoising steps: 30 per image (--steps)") !=
        w.assumptions.end());
}

TEST_CASE("estimate::perf: a small detector at batch 1 pays the per-pass cost; a large batch amortises it",
          "[perf][vision]") {
  WorkloadInput in;
  in.model = "yolov8n";
  in.precision = "fp16";
  estimate::WorkloadSet set;
  auto w1 = estimate::make_workload(in, models(), &set);
  in.batch = "32";
  auto w32 = estimate::make_workload(in, models(), &set);
  const auto& gpu = *gpus().find("a100-80gb-sxm");
  auto p1 = estimate::estimate_perf(w1, gpu, eff());
  auto p32 = estimate::estimate_perf(w32, gpu, eff());
  REQUIRE(p1.images_per_s);
  REQUIRE(p32.images_per_s);
  CHECK(p1.bound == "per-step overhead");
  CHECK(p32.images_per_s->typical > 3 * p1.images_per_s->typical);
  const double overhead = eff().get(catalog::FactorId::vision_pass_overhead).typical;
  CHECK(p1.image_batch_s->typical ==
        Approx(8.7e9 / (gpu.peak_flops(catalog::Precision::fp16).value() * p1.mfu) + overhead).epsilon(1e-6));
  // Jetson modules pay their own fitted per-pass cost.
  auto pj = estimate::estimate_perf(w1, *gpus().find("jetson-agx-orin-64gb"), eff());
  CHECK(std::find(pj.factors.begin(), pj.factors.end(), "vision-pass-overhead-edge") != pj.factors.end());
}
