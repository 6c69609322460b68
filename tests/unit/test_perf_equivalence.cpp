// The fast paths give the answers of the slow ones (docs/performance.md): fit's solved largest
// batch and context against a plain binary search over the full estimate, and the number-only
// memory estimate against the explained one, bit for bit, over random workloads and every GPU.
// The generator is a std::mt19937 with a fixed seed, so a failure reproduces exactly.
#include <catch2/catch.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/workload.h"
#include "gpuadvisor/rules/rules.h"
#include "gpuadvisor/util/json.h"
#include "test_data.h"

using namespace gpuadvisor;

namespace {

using test::eff;
using test::gpus;
using test::models;

// fit() as it was: a binary search over the full estimate, one workload copy per probe.
estimate::FitResult fit_by_search(const estimate::Workload& w, const catalog::Gpu& gpu, double headroom) {
  estimate::FitResult r;
  r.capacity_bytes = gpu.memory_bytes;
  r.usable_bytes = gpu.memory_bytes * (1 - headroom);
  auto est = estimate::estimate_memory(w, eff(), false);
  r.fits = est.per_gpu_bytes <= r.usable_bytes;
  r.activations_unknown = !est.activations_known;
  r.headroom_bytes = r.usable_bytes - est.per_gpu_bytes;
  auto fits_with = [&](long long batch, long long seq) {
    estimate::Workload x = w;
    x.batch = batch;
    x.seq_len = seq;
    return estimate::estimate_memory(x, eff(), false).per_gpu_bytes <= r.usable_bytes;
  };
  auto largest = [&](long long lo, long long hi, auto&& ok) -> std::optional<long long> {
    if (!ok(lo)) return std::nullopt;
    while (lo < hi) {
      long long mid = lo + (hi - lo + 1) / 2;
      if (ok(mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo;
  };
  if (!r.activations_unknown) r.max_batch = largest(1, 1 << 20, [&](long long b) { return fits_with(b, w.seq_len); });
  if (w.model.is_transformer()) {
    long long cap = w.model.max_context > 0 ? w.model.max_context : (1LL << 24);
    r.max_seq_len = largest(1, cap, [&](long long s) { return fits_with(w.batch, s); });
    r.max_seq_capped = r.max_seq_len && *r.max_seq_len == cap && w.model.max_context > 0;
  }
  return r;
}

std::string describe(const estimate::WorkloadInput& in, const std::string& gpu) {
  return "model " + in.model + ", task " + in.task + ", precision " + in.precision + ", batch " + in.batch +
         ", seq_len " + in.seq_len + ", gpus " + in.gpus + ", checkpointing " + in.checkpointing + ", flash " +
         in.flash_attention + ", kv " + in.kv_precision + " on " + gpu;
}

// Random workloads over every preset and bare sizes, all tasks, the knobs memory depends on.
std::vector<std::pair<estimate::WorkloadInput, estimate::Workload>> random_workloads(int n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](const std::vector<std::string>& v) {
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  auto coin = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  std::vector<std::string> names;
  for (const auto& m : models().models()) names.push_back(m.id);
  for (const char* s : {"125M", "1.3B", "7B", "10B", "34B", "70B", "180B"}) names.push_back(s);
  std::vector<std::pair<estimate::WorkloadInput, estimate::Workload>> out;
  while (static_cast<int>(out.size()) < n) {
    estimate::WorkloadInput in;
    in.model = pick(names);
    in.task = pick({"inference", "inference", "train", "lora", "qlora"});
    if (in.task == "inference") {
      in.precision = pick({"", "fp16", "fp8", "int8", "int4", "awq-int4", "q4_k_m", "fp32"});
      in.kv_precision = pick({"", "fp16", "fp8", "int4"});
    } else if (in.task != "qlora") {
      in.precision = pick({"", "bf16", "fp32"});
      in.checkpointing = pick({"", "none", "selective", "full"});
      in.optimizer = pick({"", "adamw", "sgd", "adamw-8bit"});
    }
    in.flash_attention = coin(0.7) ? "" : "off";
    in.batch = pick({"1", "2", "3", "8", "32", "100"});
    in.seq_len = pick({"", "1", "100", "2047", "2048", "2049", "4096", "30000"});
    in.gpus = pick({"", "1", "2", "4", "8"});
    if (in.task != "inference" && in.gpus != "" && in.gpus != "1") in.zero = pick({"", "0", "1", "3"});
    try {
      auto w = estimate::make_workload(in, models());
      out.emplace_back(in, std::move(w));
    } catch (const Error&) {
      // not a valid layout for this model (tp that does not divide the heads, ...): draw again
    }
  }
  return out;
}

}  // namespace

TEST_CASE("perf equivalence: solved fit equals the binary search", "[perf][memory][fit]") {
  const auto workloads = random_workloads(150, 20261129);
  const auto& all = gpus().gpus();
  std::mt19937 rng(8);
  int checked = 0, with_batch = 0, with_seq = 0;
  for (const auto& [in, w] : workloads) {
    // A few GPUs per workload, and headrooms that move the limit around.
    for (int k = 0; k < 4; ++k) {
      const auto& g = all[std::uniform_int_distribution<std::size_t>(0, all.size() - 1)(rng)];
      const double headroom = k == 0 ? estimate::kDefaultHeadroom : std::uniform_real_distribution<double>(0, 0.8)(rng);
      INFO(describe(in, g.id) << ", headroom " << headroom);
      const auto fast = estimate::fit(w, g, eff(), headroom);
      const auto slow = fit_by_search(w, g, headroom);
      CHECK(fast.fits == slow.fits);
      CHECK(fast.headroom_bytes == slow.headroom_bytes);
      CHECK(fast.activations_unknown == slow.activations_unknown);
      CHECK(fast.max_batch == slow.max_batch);
      CHECK(fast.max_seq_len == slow.max_seq_len);
      CHECK(fast.max_seq_capped == slow.max_seq_capped);
      with_batch += slow.max_batch && *slow.max_batch > 1 ? 1 : 0;
      with_seq += slow.max_seq_len && *slow.max_seq_len > 1 && !slow.max_seq_capped ? 1 : 0;
      ++checked;
    }
  }
  CHECK(checked == 600);
  CHECK(with_batch >= 100);  // the cases exercise the search, not only its ends
  CHECK(with_seq >= 50);
}

TEST_CASE("perf equivalence: number-only memory equals the explained estimate", "[perf][memory]") {
  for (const auto& [in, w] : random_workloads(300, 8)) {
    INFO(describe(in, "-"));
    const auto full = estimate::estimate_memory(w, eff());
    const auto quiet = estimate::estimate_memory(w, eff(), false);
    const auto bytes = estimate::memory_bytes(w, eff());
    CHECK(bytes.per_gpu_bytes == full.per_gpu_bytes);
    CHECK(quiet.per_gpu_bytes == full.per_gpu_bytes);
    CHECK(bytes.activations_known == full.activations_known);
    REQUIRE(quiet.lines.size() == full.lines.size());
    for (std::size_t i = 0; i < full.lines.size(); ++i) {
      CHECK(quiet.lines[i].id == full.lines[i].id);
      CHECK(quiet.lines[i].per_gpu_bytes == full.lines[i].per_gpu_bytes);
      CHECK(quiet.lines[i].formula.empty());
      CHECK(!full.lines[i].formula.empty());
    }
    // Every line present in the explained estimate, by id, at the same bytes; the others are 0.
    for (std::size_t id = 0; id < estimate::kMemoryLineCount; ++id) {
      const auto line = static_cast<estimate::MemoryLineId>(id);
      CHECK(bytes[line] == full.line(std::string(estimate::line_id(line))));
    }
  }
}

TEST_CASE("perf equivalence: the shallow line index agrees with the full one", "[perf][json]") {
  // Records' lines come from an index of the first two levels; a deeper pointer builds the full
  // index. Both must count lines the same way through values they walk over.
  const std::string text =
      "{\n  \"a\": [\n    {\"x\": [1,\n 2], \"s\": \"br{ace\\\"\"},\n    {\n      \"id\": \"two\"\n    }\n  ],\n"
      "  \"b\": {\"c\": {\"d\": [[\n\n]]}},\n  \"e\": 3\n}\n";
  auto doc = util::JsonDoc::parse(text, "t.json");
  REQUIRE(doc);
  CHECK(doc->line_of("") == 1);
  CHECK(doc->line_of("/a") == 2);
  CHECK(doc->line_of("/a/0") == 3);
  CHECK(doc->line_of("/a/1") == 5);
  CHECK(doc->line_of("/b") == 9);
  CHECK(doc->line_of("/e") == 12);
  CHECK(doc->line_of("/a/1/id") == 6);  // full index from here on
  CHECK(doc->line_of("/b/c/d") == 9);
  CHECK(doc->line_of("/e") == 12);
  CHECK(doc->line_of("/a/9") == 0);
  // The catalog: every record opens with '{' on its own line and its id on the next.
  auto cat = util::JsonDoc::parse(std::string(*embedded::find("gpus.json")), "gpus.json");
  REQUIRE(cat);
  for (std::size_t i = 0; i < cat->root()["gpus"].size(); ++i) {
    const std::string ptr = "/gpus/" + std::to_string(i);
    INFO(ptr);
    CHECK(cat->line_of(ptr) + 1 == cat->line_of(ptr + "/id"));
  }
}

TEST_CASE("perf equivalence: metrics by id and lazily shown text", "[perf][rules]") {
  using rules::Metric;
  using rules::Shown;
  // The enum follows known_metrics() one to one.
  const auto known = rules::known_metrics();
  REQUIRE(known.size() == rules::kMetricCount);
  CHECK(rules::name(Metric::memory_headroom_fraction) == "memory_headroom_fraction");
  CHECK(rules::name(Metric::gpus) == "gpus");
  CHECK(rules::name(Metric::bandwidth_gbs) == "bandwidth_gbs");
  CHECK(rules::name(Metric::rent_price_usd) == "rent_price_usd");
  for (std::size_t i = 0; i < known.size(); ++i) CHECK(rules::metric_from(known[i].name) == static_cast<Metric>(i));

  rules::Metrics m;
  m.set(Metric::memory_headroom_fraction, 0.234, Shown::percent);
  m.set(Metric::memory_need_bytes, 25769803776.0, Shown::bytes);
  m.set(Metric::total_price_usd, rules::Value(), Shown::money);
  m.set("min_power", 150.0, Shown::watts);
  m.set(Metric::gpus, 2.0, Shown::count);
  m.set("segment", std::string("consumer"));
  m.set("note", 1.5, "one and a half");
  m.texts = [](std::string_view key) -> std::optional<std::string> {
    if (key == "lazy") return std::string("made on demand");
    return std::nullopt;
  };
  rules::Metrics options;
  options.set("budget", 3000.0, Shown::money);
  // Set by name or by id, read either way.
  CHECK(std::get<double>(m.get("gpus")) == 2.0);
  CHECK(std::get<double>(m.get(Metric::memory_need_bytes)) == 25769803776.0);
  CHECK(std::holds_alternative<std::monostate>(m.get(Metric::time_s)));
  CHECK(std::holds_alternative<std::monostate>(m.get("not-set")));
  CHECK(rules::render(
            "{memory_headroom_fraction} {memory_need_bytes} {total_price_usd} {min_power} {gpus} {segment} {note}", m,
            options) == "23% 24.00 GiB unknown 150 W 2 consumer one and a half");
  CHECK(rules::render("{lazy}, {budget}, {missing}", m, options) == "made on demand, $3,000, {missing}");
}
