#include <catch2/catch.hpp>

#include <fstream>
#include <list>

#include "cli_fixture.h"
#include "gpuadvisor/rules/recommend.h"

using namespace gpuadvisor;

namespace {
const catalog::ModelSet& models() {
  static const auto m = catalog::ModelSet::load({});
  return m;
}

rules::Recommendation run(const std::string& model, const std::string& task, std::optional<double> budget,
                          const std::vector<std::string>& rule_files = {}) {
  static const auto cat = catalog::Catalog::load({});
  static const auto prices = catalog::Prices::load({});
  // Outcomes point at their rules: the rule sets must outlive the recommendations.
  static std::list<rules::RuleSet> keep;
  const auto& rs = keep.emplace_back(rules::RuleSet::load(rule_files));
  rules::Request req;
  estimate::WorkloadInput in;
  in.model = model;
  if (!task.empty()) in.task = task;
  req.base = estimate::make_workload(in, models(), &req.set);
  req.budget_usd = budget;
  return rules::recommend(req, {cat, rs, catalog::Efficiency::embedded(), prices});
}

double best_score(const rules::Recommendation& r) { return r.plans.empty() ? 0 : r.candidates[r.plans.front()].score; }
}  // namespace

TEST_CASE("recommend: the headline, 10B within $3,000", "[recommend]") {
  auto r = run("10B", "", 3000);
  REQUIRE_FALSE(r.plans.empty());
  for (auto i : r.plans) {
    const auto& c = r.candidates[i];
    INFO(c.label());
    CHECK(c.accepted);
    REQUIRE(c.price_usd);
    CHECK(*c.price_usd <= 3000);
    CHECK(c.memory_need_bytes <= c.gpu->memory_bytes * 0.9);
  }
  SECTION("the RTX 4090 in fp16 is a near miss that fits in a lower precision") {
    bool found = false;
    for (const auto& c : r.candidates)
      if (c.gpu->id == "rtx-4090" && c.count == 1 && c.w.precision == "fp16") {
        found = true;
        CHECK_FALSE(c.accepted);
        CHECK(c.hint.rfind("fits in ", 0) == 0);
      }
    CHECK(found);
  }
}

TEST_CASE("recommend: never recommends a candidate that violates a constraint", "[recommend][property]") {
  for (const char* model : {"7B", "llama-3.1-8b", "mixtral-8x7b", "70B"})
    for (const char* task : {"inference", "qlora"})
      for (double budget : {1000.0, 5000.0, 40000.0}) {
        auto r = run(model, task, budget);
        for (auto i : r.plans)
          for (const auto& o : r.candidates[i].outcomes)
            if (o.rule->kind == rules::Kind::constraint) CHECK((o.passed || !o.applicable));
      }
}

TEST_CASE("recommend: raising the budget never lowers the best score", "[recommend][property]") {
  for (const char* model : {"7B", "13B", "llama-3.1-8b", "qwen2.5-32b"}) {
    double prev = 0;
    for (double budget : {500.0, 1000.0, 2000.0, 3000.0, 5000.0, 10000.0, 50000.0, 200000.0}) {
      double s = best_score(run(model, "", budget));
      INFO(model << " at $" << budget);
      CHECK(s >= prev);
      prev = s;
    }
  }
}

TEST_CASE("recommend: 70B full training within $50k is a no, QLoRA is a yes", "[recommend]") {
  auto r = run("llama-3.1-70b", "train", 50000);
  CHECK(r.plans.empty());
  REQUIRE_FALSE(r.way_out.empty());
  bool qlora = false;
  for (const auto& w : r.way_out) qlora = qlora || w.find("--task qlora") != std::string::npos;
  CHECK(qlora);
  CHECK_FALSE(run("llama-3.1-70b", "qlora", 50000).plans.empty());
}

TEST_CASE("recommend: an edge scenario with a 30 W limit gets an edge device", "[recommend]") {
  auto r = test::run_cli({"recommend", "--model", "yolov8s", "--task", "inference", "--scenario", "edge", "--power-limit", "30W",
                          "--format", "json"});
  REQUIRE(r.code == 0);
  auto j = util::Json::parse(r.out);
  REQUIRE_FALSE(j["plans"].empty());
  for (const auto& p : j["plans"]) CHECK(p["gpu_id"].get<std::string>().rfind("jetson", 0) == 0);
}

TEST_CASE("recommend: a user rules file changes the outcome as documented", "[recommend][rules]") {
  // Without headroom the RTX 4090 holds 10B in fp16 (23.4 of 24 GiB); the default 10% rejects it.
  const std::string path = "/tmp/gpuadvisor-test-rules.json";
  std::ofstream(path) << R"({"rules": [{"id": "memory-fit", "kind": "constraint", "metric": "memory_headroom_fraction",
    "op": ">=", "threshold": 0.0, "severity": "error", "message": "needs {memory_need}"}]})";
  auto strict = run("10B", "", 3000);
  auto loose = run("10B", "", 3000, {path});
  auto accepted_fp16 = [](const rules::Recommendation& r) {
    for (const auto& c : r.candidates)
      if (c.gpu->id == "rtx-4090" && c.count == 1 && c.w.precision == "fp16") return c.accepted;
    return false;
  };
  CHECK_FALSE(accepted_fp16(strict));
  CHECK(accepted_fp16(loose));
  SECTION("a policy file may give only the fields it changes") {
    const std::string partial = "/tmp/gpuadvisor-test-policy.json";
    std::ofstream(partial) << R"({"rules": [{"id": "memory-fit", "threshold": 0.0}]})";
    auto rs = rules::RuleSet::load({partial});
    const auto* r = rs.find("memory-fit");
    REQUIRE(r);
    CHECK(std::get<double>(r->threshold) == 0.0);
    CHECK(r->metric == "memory_headroom_fraction");
    CHECK_FALSE(r->rationale.empty());
    CHECK(accepted_fp16(run("10B", "", 3000, {partial})));
  }
}

TEST_CASE("rules: the registry, the docs and the tests agree", "[rules]") {
  auto rs = rules::RuleSet::load({});
  for (const auto& r : rs.rules()) {
    INFO(r.id);
    std::ifstream doc(test::source_path("docs/rules/" + r.id + ".md"));
    CHECK(doc.good());
    CHECK_FALSE(r.sources.empty());
    CHECK_FALSE(r.rationale.empty());
  }
  SECTION("every recommend rule trips on some candidate of a fixture workload and passes on another") {
    std::map<std::string, std::pair<bool, bool>> seen;  // id -> (passed somewhere, failed somewhere)
    auto note = [&](const rules::Recommendation& rec) {
      for (const auto& c : rec.candidates)
        for (const auto& o : c.outcomes)
          if (o.applicable) (o.passed ? seen[o.rule->id].first : seen[o.rule->id].second) = true;
    };
    note(run("10B", "", 3000));
    note(run("llama-3.1-8b", "train", 100000));
    auto edge = test::run_cli({"recommend", "--model", "yolov8s", "--scenario", "edge", "--power-limit", "30W"});
    CHECK(edge.code == 0);
    static const auto cat = catalog::Catalog::load({});
    static const auto prices = catalog::Prices::load({});
    rules::Request req;
    estimate::WorkloadInput in;
    in.model = "llama-3.1-8b";
    in.task = "lora";
    req.base = estimate::make_workload(in, models(), &req.set);
    req.scenario = "datacenter";
    req.used = true;
    req.power_limit_w = 2000;
    note(rules::recommend(req, {cat, rs, catalog::Efficiency::embedded(), prices}));
    for (const auto& r : rs.rules()) {
      if (r.scope != "recommend") continue;
      INFO(r.id);
      CHECK(seen[r.id].first);
      CHECK(seen[r.id].second);
    }
  }
}

TEST_CASE("cli: recommend JSON and exit codes", "[cli][recommend]") {
  auto r = test::run_cli({"recommend", "--model", "10B", "--budget", "3000", "--format", "json"});
  REQUIRE(r.code == 0);
  auto j = util::Json::parse(r.out);
  REQUIRE_FALSE(j["plans"].empty());
  for (const char* key : {"rank", "gpu_id", "count", "total_price_usd", "total_bytes", "fits", "score", "rules"})
    CHECK(j["plans"][0].contains(key));
  auto no = test::run_cli({"recommend", "--model", "llama-3.1-70b", "--task", "train", "--budget", "50000"});
  CHECK(no.code == 1);
  CHECK(no.out.find("Nothing fits.") != std::string::npos);
  CHECK(test::run_cli({"recommend", "--model", "10B", "--budget", "three grand"}).err ==
        "gpuadvisor: error: --budget: expected an amount in USD like 3000, $3,000, 3k or 1.2M, got \"three grand\"\n");
  CHECK(test::run_cli({"recommend", "--model", "10B", "--scenario", "edgy"}).err ==
        "gpuadvisor: error: --scenario: expected one of personal, workstation, datacenter, edge, got \"edgy\", did you mean 'edge'?\n");
}
