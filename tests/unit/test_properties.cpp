// Property tests (issue 8): invariants of the estimators, the recommender and the JSON outputs over
// randomly generated workloads and catalogs. The generator is a std::mt19937 with a fixed seed, so
// a failure reproduces exactly; INFO lines name the case. Tag: [property].
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cli_fixture.h"
#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/catalog/prices.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/perf.h"
#include "gpuadvisor/estimate/workload.h"
#include "gpuadvisor/rules/recommend.h"
#include "gpuadvisor/rules/rules.h"
#include "gpuadvisor/util/json.h"
#include "test_data.h"

using namespace gpuadvisor;
using estimate::WorkloadInput;

namespace {

using test::eff;
using test::gpus;
using test::models;
using test::prices;
using test::rule_set;

constexpr std::uint32_t kSeed = 20261129;
constexpr double kRel = 1e-9;  // relative slack for floating-point noise

class Gen {
 public:
  explicit Gen(std::uint32_t seed) : rng_(seed) {}
  int integer(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool coin(double p = 0.5) { return uniform(0, 1) < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(integer(0, static_cast<int>(v.size()) - 1))];
  }
  /// A bare size between 10^lo and 10^hi parameters, as an exact integer string.
  std::string size(double lo = 8, double hi = 11.5) {
    return std::to_string(static_cast<long long>(std::pow(10.0, uniform(lo, hi))));
  }
  std::mt19937& rng() { return rng_; }

 private:
  std::mt19937 rng_;
};

const std::vector<std::string> kTasks = {"inference", "train", "lora", "qlora"};

/// Transformer presets (those with a context to vary).
const std::vector<std::string>& transformer_presets() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> v;
    for (const auto& m : models().models())
      if (m.is_transformer() && m.params < 2e11) v.push_back(m.id);
    return v;
  }();
  return ids;
}

/// A random workload input: model (bare size or preset), task and the knobs that do not change
/// the parallel layout.
WorkloadInput random_input(Gen& g, bool bare_size) {
  WorkloadInput in;
  in.model = bare_size || transformer_presets().empty() ? g.size() : g.pick(transformer_presets());
  in.task = g.pick(kTasks);
  if (in.task == "inference") {
    in.precision = g.pick(std::vector<std::string>{"", "fp16", "bf16", "fp8", "int8", "int4", "awq-int4", "q4_k_m"});
    in.kv_precision = g.pick(std::vector<std::string>{"", "fp16", "fp8", "int8"});
  } else if (in.task == "qlora") {
    in.precision = "";
  } else {
    in.precision = g.pick(std::vector<std::string>{"", "bf16", "fp16"});
    in.optimizer = g.pick(std::vector<std::string>{"", "adamw", "sgd", "adafactor", "adamw-8bit"});
    in.checkpointing = g.pick(std::vector<std::string>{"", "none", "selective", "full"});
  }
  if (in.task == "lora" || in.task == "qlora") in.lora_rank = std::to_string(g.pick(std::vector<int>{8, 16, 64}));
  in.flash_attention = g.coin(0.8) ? "" : "off";
  in.batch = std::to_string(g.integer(1, 16));
  in.seq_len = std::to_string(g.pick(std::vector<int>{128, 256, 512, 1024, 2048, 4096}));
  return in;
}

/// Memory per GPU, or a negative value when the input is not a valid workload.
// Per-GPU bytes; without the layer ZeRO-3 gathers when `gathered` is false: a small model on few
// GPUs saves less by sharding its weights than DeepSpeed's gathered largest layer costs (gpt2 on 2
// GPUs: 119 MiB saved, 147 MiB gathered), so stage 3 can need more than stage 2, as it does.
double per_gpu(const WorkloadInput& in, bool gathered = true) {
  try {
    const auto m = estimate::estimate_memory(estimate::make_workload(in, models()), eff());
    return m.per_gpu_bytes - (gathered ? 0 : m.line("gather_buffers"));
  } catch (const Error&) {
    return -1;
  }
}

std::string describe(const WorkloadInput& in) {
  return "model " + in.model + ", task " + in.task + ", precision " + in.precision + ", batch " + in.batch +
         ", seq_len " + in.seq_len + ", gpus " + in.gpus + ", zero " + in.zero + ", checkpointing " + in.checkpointing +
         ", optimizer " + in.optimizer + ", flash " + in.flash_attention;
}

// Sets `field` to each of `values` in turn and checks that memory per GPU never rises along them.
// False when one of them does not make a valid workload (the walk stops there).
bool never_rises(WorkloadInput in, std::string WorkloadInput::*field, const std::vector<std::string>& values,
                 bool gathered = true) {
  double prev = 0;
  for (std::size_t k = 0; k < values.size(); ++k) {
    in.*field = values[k];
    const double v = per_gpu(in, gathered);
    if (v < 0) return false;
    INFO(describe(in));
    if (k > 0) CHECK(v <= prev * (1 + kRel));
    prev = v;
  }
  return true;
}

}  // namespace

TEST_CASE("property: memory never decreases with parameters", "[property][memory]") {
  Gen g(kSeed);
  int checked = 0;
  for (int i = 0; i < 300; ++i) {
    WorkloadInput in = random_input(g, true);
    const double p1 = std::pow(10.0, g.uniform(8, 11));
    const double p2 = p1 * g.uniform(1.0, 1.5);
    // Within one shape (the bare-size rule's width band): a wider shape spreads the same
    // parameters over fewer layers, which can hold fewer activations; that is a different model.
    if (gpuadvisor::catalog::model_from_size(p1).hidden != gpuadvisor::catalog::model_from_size(p2).hidden) continue;
    in.model = std::to_string(static_cast<long long>(p1));
    double a = per_gpu(in);
    in.model = std::to_string(static_cast<long long>(p2));
    double b = per_gpu(in);
    if (a < 0 || b < 0) continue;
    INFO(describe(in) << "; params " << static_cast<long long>(p1) << " -> " << in.model);
    CHECK(b >= a * (1 - kRel));
    ++checked;
  }
  CHECK(checked >= 150);
}

TEST_CASE("property: memory never decreases with batch or context", "[property][memory]") {
  Gen g(kSeed + 1);
  int checked = 0;
  for (int i = 0; i < 300; ++i) {
    WorkloadInput in = random_input(g, g.coin());
    const bool vary_batch = g.coin();
    long long lo = 0, hi = 0;
    if (vary_batch) {
      lo = g.integer(1, 32);
      hi = lo + g.integer(1, 32);
      in.batch = std::to_string(lo);
    } else {
      lo = g.pick(std::vector<int>{64, 128, 512, 1000, 2048});
      hi = lo + g.integer(1, 2048);
      in.seq_len = std::to_string(lo);
    }
    double a = per_gpu(in);
    (vary_batch ? in.batch : in.seq_len) = std::to_string(hi);
    double b = per_gpu(in);
    if (a < 0 || b < 0) continue;
    INFO(describe(in) << "; " << (vary_batch ? "batch " : "seq_len ") << lo << " -> " << hi);
    CHECK(b >= a * (1 - kRel));
    ++checked;
  }
  CHECK(checked >= 200);
}

TEST_CASE("property: memory never increases with the ZeRO stage, the gathered layer aside",
          "[property][memory][zero]") {
  Gen g(kSeed + 2);
  int checked = 0;
  for (int i = 0; i < 200; ++i) {
    WorkloadInput in = random_input(g, g.coin());
    in.task = g.pick(std::vector<std::string>{"train", "lora", "qlora"});
    if (in.task == "qlora") in.precision.clear();
    in.gpus = std::to_string(g.pick(std::vector<int>{2, 4, 8, 16, 64}));
    if (never_rises(in, &WorkloadInput::zero, {"0", "1", "2", "3"}, false)) ++checked;
  }
  CHECK(checked >= 150);
}

TEST_CASE("property: with ZeRO-3, memory per GPU never increases with the GPU count", "[property][memory][zero]") {
  Gen g(kSeed + 3);
  int checked = 0;
  for (int i = 0; i < 200; ++i) {
    WorkloadInput in = random_input(g, g.coin());
    in.task = g.pick(std::vector<std::string>{"train", "lora", "qlora"});
    if (in.task == "qlora") in.precision.clear();
    in.zero = "3";
    if (never_rises(in, &WorkloadInput::gpus, {"1", "2", "4", "8", "32", "128"})) ++checked;
  }
  CHECK(checked >= 150);
}

TEST_CASE("property: throughput is never more than linear in the GPU count", "[property][perf]") {
  Gen g(kSeed + 4);
  const auto& all = gpus().gpus();
  int checked = 0;
  for (int i = 0; i < 300; ++i) {
    WorkloadInput in = random_input(g, g.coin());
    const bool training = in.task != "inference";
    if (training) in.zero = std::to_string(g.integer(0, 3));
    const catalog::Gpu& gpu = all[static_cast<std::size_t>(g.integer(0, static_cast<int>(all.size()) - 1))];
    const int n1 = g.pick(std::vector<int>{1, 2, 4});
    const int n2 = n1 * g.pick(std::vector<int>{2, 4});
    auto rate = [&](int n) -> double {
      in.gpus = std::to_string(n);
      try {
        auto w = estimate::make_workload(in, models());
        auto p = estimate::estimate_perf(w, gpu, eff());
        if (!p.available) return -1;
        return training ? p.tokens_per_s.typical : p.decode_total_tokens_per_s.typical;
      } catch (const Error&) {
        return -1;
      }
    };
    double a = rate(n1), b = rate(n2);
    if (a <= 0 || b <= 0) continue;
    INFO(describe(in) << "; GPU " << gpu.id << ", gpus " << n1 << " -> " << n2 << ": " << a << " -> " << b);
    CHECK(b <= a * n2 / n1 * (1 + kRel));
    ++checked;
  }
  CHECK(checked >= 150);
}

namespace {

/// A random catalog: a random subset of the real GPUs with perturbed prices, memory, TDP and
/// power range, some prices removed.
catalog::Catalog random_catalog(Gen& g) {
  std::vector<catalog::Gpu> v;
  for (const auto& gpu : gpus().gpus()) {
    if (!g.coin(0.4)) continue;
    catalog::Gpu x = gpu;
    x.id = gpu.id + "-r" + std::to_string(g.integer(0, 9));
    if (x.street.usd && g.coin(0.7))
      x.street.usd = *x.street.usd * g.uniform(0.3, 2.0);
    else if (g.coin(0.2))
      x.street.usd.reset();
    if (x.used.usd && g.coin(0.5)) x.used.usd = *x.used.usd * g.uniform(0.3, 1.5);
    if (g.coin(0.3)) x.memory_bytes = std::round(x.memory_bytes * g.pick(std::vector<double>{0.5, 1.5, 2.0}));
    if (x.tdp_w && g.coin(0.3))
      x.tdp_w = std::max(10.0, std::round(*x.tdp_w * g.uniform(0.5, 1.5)));
    else if (g.coin(0.05))
      x.tdp_w.reset();  // power not published
    if (x.tdp_w && x.power_min_w && *x.power_min_w > *x.tdp_w) x.power_min_w = x.tdp_w;
    if (x.tdp_w && x.power_max_w && *x.power_max_w < *x.tdp_w) x.power_max_w = x.tdp_w;
    v.push_back(std::move(x));
  }
  catalog::Catalog c;
  c.merge(std::move(v));
  return c;
}

rules::Request random_request(Gen& g) {
  rules::Request req;
  WorkloadInput in;
  in.model = g.coin(0.6) ? g.size(8.5, 11) : g.pick(transformer_presets());
  in.task = g.pick(kTasks);
  if (g.coin(0.2))
    in.precision = in.task == "inference" ? g.pick(std::vector<std::string>{"fp16", "int8", "int4"})
                   : in.task == "qlora"   ? "nf4"
                                          : "bf16";
  if (g.coin(0.3)) in.batch = std::to_string(g.integer(1, 8));
  req.base = estimate::make_workload(in, models(), &req.set);
  if (g.coin(0.8)) req.budget_usd = std::pow(10.0, g.uniform(2.5, 5.5));
  if (g.coin(0.3)) req.power_limit_w = g.uniform(150, 6000);
  req.scenario = g.pick(std::vector<std::string>{"", "", "personal", "workstation", "datacenter", "edge"});
  req.max_gpus = g.pick(std::vector<int>{1, 2, 4, 8});
  req.max_gpus_set = true;
  req.used = g.coin(0.2);
  if (g.coin(0.5)) req.prefer = static_cast<rules::Prefer>(g.integer(0, 3));
  return req;
}

}  // namespace

TEST_CASE("property: recommend never returns a plan that breaks a constraint", "[property][recommend]") {
  Gen g(kSeed + 5);
  int plans = 0;
  for (int i = 0; i < 100; ++i) {
    auto cat = random_catalog(g);
    rules::Request req;
    try {
      req = random_request(g);
    } catch (const Error&) {
      continue;
    }
    rules::Data data{cat, rule_set(), eff(), prices()};
    auto r = rules::recommend(req, data);
    for (auto idx : r.plans) {
      REQUIRE(idx < r.candidates.size());
      const auto& c = r.candidates[idx];
      INFO("case " << i << ": " << c.label() << ", " << c.w.model.id << " " << estimate::name(c.w.task));
      CHECK(c.accepted);
      for (const auto& o : c.outcomes) {
        if (o.rule->kind != rules::Kind::constraint) continue;
        INFO("rule " << o.rule->id << ": " << o.message);
        CHECK((o.passed || !o.applicable));
      }
      if (req.budget_usd) {
        REQUIRE(c.price_usd.has_value());
        CHECK(*c.price_usd <= *req.budget_usd * (1 + kRel));
      }
      CHECK(c.memory_need_bytes <= c.gpu->memory_bytes * (1 - estimate::kDefaultHeadroom) * (1 + kRel));
      if (req.power_limit_w) {
        REQUIRE(c.gpu->tdp_w.has_value());  // a plan of unknown power never passes a power limit
        const double watts = c.power_cap_w ? *c.power_cap_w * c.count : *c.gpu->tdp_w * c.count;
        CHECK(watts <= *req.power_limit_w * (1 + kRel));
      }
      CHECK(c.perf.available);
      CHECK(std::isfinite(c.score));
      CHECK(c.score >= 0);  // 0 when the ranking needs a price the plan does not have
      ++plans;
    }
  }
  CHECK(plans >= 100);
}

TEST_CASE("property: raising the budget never lowers the best score", "[property][recommend]") {
  Gen g(kSeed + 6);
  int checked = 0;
  for (int i = 0; i < 50; ++i) {
    auto cat = random_catalog(g);
    rules::Request req;
    try {
      req = random_request(g);
    } catch (const Error&) {
      continue;
    }
    req.prefer = static_cast<rules::Prefer>(g.integer(0, 3));
    const double b1 = std::pow(10.0, g.uniform(2.5, 5));
    const double b2 = b1 * g.uniform(1.0, 10.0);
    rules::Data data{cat, rule_set(), eff(), prices()};
    // The best score among the plans; the first-ranked plan is within the 5% that counts as equal
    // value of it (fewer cards, then faster, win a tie: docs/recommend.md).
    auto best = [&](double budget) {
      req.budget_usd = budget;
      auto r = rules::recommend(req, data);
      double top = 0;
      for (auto p : r.plans) top = std::max(top, r.candidates[p].score);
      if (!r.plans.empty()) CHECK(r.candidates[r.plans.front()].score >= top * (1 - 0.05) * (1 - kRel));
      return top;
    };
    double s1 = best(b1), s2 = best(b2);
    INFO("case " << i << ": budget " << b1 << " -> " << b2 << ", best score " << s1 << " -> " << s2);
    CHECK(s2 >= s1 * (1 - kRel));
    ++checked;
  }
  CHECK(checked >= 40);
}

namespace {

void check_json_output(const std::vector<std::string>& args) {
  auto r = test::run_cli(args);
  std::string cmd;
  for (const auto& a : args) cmd += a + " ";
  INFO(cmd << "-> exit " << r.code << ", stderr: " << r.err);
  REQUIRE((r.code == 0 || r.code == 1));
  util::Json j;
  REQUIRE_NOTHROW(j = util::Json::parse(r.out));
  REQUIRE(j.is_object());
  CHECK(j.contains("schema_version"));
  CHECK(j.contains("command"));
  const std::string once = j.dump();
  const std::string twice = util::Json::parse(once).dump();
  CHECK(once == twice);
  CHECK(util::Json::parse(j.dump(2)) == j);
}

}  // namespace

TEST_CASE("property: JSON outputs parse and round-trip", "[property][json]") {
  Gen g(kSeed + 7);
  const auto& all = gpus().gpus();
  check_json_output({"catalog", "list", "--format", "json"});
  check_json_output({"models", "list", "--format", "json"});
  for (int i = 0; i < 12; ++i) {
    WorkloadInput in = random_input(g, g.coin());
    std::vector<std::string> w = {"--model", in.model, "--task", in.task, "--batch", in.batch, "--format", "json"};
    if (!in.precision.empty()) w.insert(w.end(), {"--precision", in.precision});
    const std::string gpu = all[static_cast<std::size_t>(g.integer(0, static_cast<int>(all.size()) - 1))].id;
    // Skip combinations the CLI rejects as input errors; the others must give JSON.
    auto probe = test::run_cli([&] {
      std::vector<std::string> a = {"memory"};
      a.insert(a.end(), w.begin(), w.end());
      return a;
    }());
    if (probe.code == 2) continue;
    std::vector<std::string> mem = {"memory", "--gpu", gpu};
    mem.insert(mem.end(), w.begin(), w.end());
    check_json_output(mem);
    std::vector<std::string> est = {"estimate", "--gpu", gpu};
    est.insert(est.end(), w.begin(), w.end());
    auto e = test::run_cli(est);
    if (e.code != 2) check_json_output(est);
    std::vector<std::string> rec = {"recommend", "--budget", std::to_string(g.integer(500, 50000)), "--max-gpus", "4"};
    rec.insert(rec.end(), w.begin(), w.end());
    check_json_output(rec);
  }
}
