// check: procurement spec lint (src/rules/check.cpp, src/report/check_output.cpp, src/cli/cmd_check.cpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "cli_fixture.h"
#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/catalog/prices.h"
#include "gpuadvisor/report/check_output.h"
#include "gpuadvisor/rules/check.h"
#include "gpuadvisor/util/json.h"

using namespace gpuadvisor;
using test::run_cli;
using test::source_path;

namespace {

struct Data {
  catalog::Catalog cat = catalog::Catalog::load({});
  catalog::ModelSet models = catalog::ModelSet::load({});
  catalog::Prices prices = catalog::Prices::load({});
  rules::RuleSet rules = rules::RuleSet::load({});
  rules::CheckData data() const {
    return {cat, models, catalog::Efficiency::embedded(), prices, catalog::CompatTable::embedded()};
  }
  std::vector<const rules::Rule*> enabled() const { return rules::enabled_check_rules(rules, {}); }
};

const Data& shared() {
  static const Data d;
  return d;
}

rules::SpecResult check_file(const std::string& rel) {
  auto doc = util::JsonDoc::load(source_path(rel));
  REQUIRE(doc.ok());
  auto enabled = shared().enabled();
  return rules::check_spec(*doc, shared().data(), enabled);
}

bool fired(const rules::SpecResult& r, const std::string& id) {
  return std::any_of(r.findings.begin(), r.findings.end(), [&](const rules::Finding& f) { return f.rule->id == id; });
}

std::string ids(const rules::SpecResult& r) {
  std::string s;
  for (const auto& f : r.findings) s += f.rule->id + " ";
  return s;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// Tags open and close in order; enough to catch a broken document.
bool xml_balanced(const std::string& x) {
  std::vector<std::string> stack;
  for (std::size_t i = x.find('<'); i != std::string::npos; i = x.find('<', i + 1)) {
    auto end = x.find('>', i);
    if (end == std::string::npos) return false;
    std::string tag = x.substr(i + 1, end - i - 1);
    if (tag.empty() || tag[0] == '?' || tag[0] == '!') continue;
    if (tag.back() == '/') continue;
    std::string name = tag.substr(tag[0] == '/' ? 1 : 0);
    name = name.substr(0, name.find_first_of(" \t\n"));
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != name) return false;
      stack.pop_back();
    } else {
      stack.push_back(name);
    }
  }
  return stack.empty();
}

std::size_t count_of(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

const std::vector<std::string> kExamples = {
    "docs/examples/a100-used-overpriced.json", "docs/examples/h100-psu-undersized.json",
    "docs/examples/h100-training-server.json", "docs/examples/hopper-old-driver.json",
    "docs/examples/rtx4090-datacenter.json"};

std::vector<std::string> with_examples(std::vector<std::string> args) {
  for (const auto& e : kExamples) args.push_back(source_path(e));
  return args;
}

}  // namespace

TEST_CASE("check: every rule has a spec that trips it and one that passes it", "[check]") {
  for (const auto* rule : shared().enabled()) {
    DYNAMIC_SECTION(rule->id) {
      auto trip = check_file("tests/fixtures/specs/" + rule->id + ".trip.json");
      INFO("trip findings: " << ids(trip));
      CHECK(fired(trip, rule->id));
      auto pass = check_file("tests/fixtures/specs/" + rule->id + ".pass.json");
      INFO("pass findings: " << ids(pass));
      CHECK_FALSE(fired(pass, rule->id));
      // The passing spec gives the rule something to read: a pass is not a rule that never ran.
      CHECK(std::find(pass.not_applicable.begin(), pass.not_applicable.end(), rule) == pass.not_applicable.end());
    }
  }
  auto good = check_file("tests/fixtures/specs/good.json");
  INFO(ids(good));
  CHECK(good.findings.empty());
}

TEST_CASE("check: registry, docs and fixtures agree", "[check]") {
  const auto& rs = shared().rules;
  REQUIRE_NOTHROW(rules::validate_check_rules(rs));
  std::set<std::string> metrics;
  for (const auto& m : rules::check_metrics()) metrics.insert(std::string(m.name));
  std::size_t n = 0;
  for (const auto& r : rs.rules()) {
    if (r.scope != "check") continue;
    ++n;
    INFO(r.id);
    CHECK(metrics.count(r.metric) == 1);
    CHECK_FALSE(r.message.empty());
    CHECK_FALSE(r.fix.empty());
    CHECK_FALSE(r.rationale.empty());
    CHECK_FALSE(r.sources.empty());
    CHECK(std::filesystem::exists(source_path("docs/rules/" + r.id + ".md")));
    CHECK(std::filesystem::exists(source_path("tests/fixtures/specs/" + r.id + ".trip.json")));
    CHECK(std::filesystem::exists(source_path("tests/fixtures/specs/" + r.id + ".pass.json")));
    // A check rule must not shadow a recommend rule: ids are one namespace.
    CHECK(rs.find(r.id) == &r);
  }
  CHECK(n >= 14);
}

TEST_CASE("check: findings name the line of the offending key and the numbers", "[check]") {
  SECTION("8x H100 SXM on 2 x 3000 W fails power and says what it needs") {
    auto r = check_file("docs/examples/h100-psu-undersized.json");
    REQUIRE(r.findings.size() == 1);
    const auto& f = r.findings[0];
    CHECK(f.rule->id == "power-psu-headroom");
    CHECK(f.severity == rules::Severity::error);
    CHECK(f.line == 10);
    CHECK(f.pointer == "/server/psus");
    CHECK(contains(f.message, "10,200 W"));
    CHECK(contains(f.message, "6,000 W"));
    CHECK(contains(f.message, "needs at least 11,334 W"));
    CHECK(contains(f.fix, "4 x 3,000 W with N redundancy"));
  }
  SECTION("the good example passes every rule") {
    auto r = check_file("docs/examples/h100-training-server.json");
    INFO(ids(r));
    CHECK(r.findings.empty());
  }
  SECTION("an old software image for Hopper") {
    auto r = check_file("docs/examples/hopper-old-driver.json");
    CHECK(fired(r, "driver-too-old"));
    CHECK(fired(r, "cuda-too-old"));
    CHECK(fired(r, "framework-too-old"));
    for (const auto& f : r.findings) CHECK(f.line == 17);
  }
  SECTION("a used quote above the used-market price is a warning") {
    auto r = check_file("docs/examples/a100-used-overpriced.json");
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].rule->id == "quote-over-street");
    CHECK(r.findings[0].severity == rules::Severity::warning);
    CHECK(contains(r.findings[0].message, "131%"));
    CHECK(contains(r.findings[0].fix, "$8,125"));
  }
  SECTION("MIG instances are checked against the GPU's own record") {
    auto r = check_file("tests/fixtures/specs/mig-instances.trip.json");
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].rule->id == "mig-instances");
    CHECK(r.findings[0].pointer == "/gpus/0/mig_instances");
    CHECK(r.findings[0].line == 9);
    CHECK(r.findings[0].message == "NVIDIA GeForce RTX 5090 has no MIG, but gpus[0] asks for 2 MIG instances per GPU");
    auto spec = [](const std::string& text) {
      auto doc = util::JsonDoc::parse(text, "mig.json");
      REQUIRE(doc.ok());
      auto enabled = shared().enabled();
      return rules::check_spec(*doc, shared().data(), enabled);
    };
    auto a30 = spec(R"({"gpus": [{"id": "a30", "count": 1, "mig_instances": 7}]})");
    REQUIRE(a30.findings.size() == 1);
    CHECK(a30.findings[0].message ==
          "NVIDIA A30 has at most 4 MIG instances, but gpus[0] asks for 7 MIG instances per GPU");
    CHECK_FALSE(fired(spec(R"({"gpus": [{"id": "a30", "count": 1, "mig_instances": 4}]})"), "mig-instances"));
    CHECK_THROWS_WITH(spec(R"({"gpus": [{"id": "a30", "count": 1, "mig_instances": 0}]})"),
                      Catch::Contains("mig.json:1") && Catch::Contains("mig_instances"));
  }
  SECTION("redundancy is taken into account") {
    auto r = check_file("tests/fixtures/specs/good.json");
    CHECK_FALSE(fired(r, "power-psu-headroom"));  // 6 x 3.3 kW N+2: 13.2 kW carry 10.2 kW
  }
}

TEST_CASE("check: globs select rules as clang-tidy does", "[check]") {
  CHECK(rules::glob_match("power-*", "power-psu-headroom"));
  CHECK(rules::glob_match("*", "anything"));
  CHECK(rules::glob_match("pcie-?lots", "pcie-slots"));
  CHECK_FALSE(rules::glob_match("pcie-?", "pcie-slots"));
  CHECK_FALSE(rules::glob_match("power", "power-psu-headroom"));
  std::vector<std::string> g = {"*-too-old,-cuda-*"};
  CHECK(rules::glob_list_match(g, "driver-too-old"));
  CHECK_FALSE(rules::glob_list_match(g, "cuda-too-old"));
  CHECK_FALSE(rules::glob_list_match(g, "pcie-slots"));
  std::vector<std::string> repeated = {"pcie-*", "quote-over-street"};
  CHECK(rules::glob_list_match(repeated, "quote-over-street"));
  CHECK(rules::glob_list_match(repeated, "pcie-generation"));
}

TEST_CASE("check: escaping for XML and URIs", "[check]") {
  CHECK(report::xml_escape("a&b<c>\"d'e") == "a&amp;b&lt;c&gt;&quot;d&apos;e");
  CHECK(report::xml_escape(std::string("bell\x07") + "\n") == "bell\xEF\xBF\xBD\n");
  CHECK(report::path_to_uri("specs/a b.json") == "specs/a%20b.json");
  CHECK(report::path_to_uri("/abs/x.json") == "file:///abs/x.json");
}

TEST_CASE("check: exit codes and options", "[check]") {
  SECTION("the examples: findings with rule ids and lines, exit 1") {
    auto r = run_cli(with_examples({"check"}));
    CHECK(r.code == 1);
    CHECK(contains(r.out, "h100-psu-undersized.json:10: error: "));
    CHECK(contains(r.out, "[power-psu-headroom]"));
    CHECK(contains(r.out, "hopper-old-driver.json:17: error: "));
    CHECK(contains(r.out, "[licence-geforce-datacenter]"));
    CHECK(contains(r.out, "[quote-over-street]"));
    CHECK(contains(r.out, "5 specs checked: 5 errors, 2 warnings"));
    CHECK(r.err.empty());
  }
  SECTION("a clean spec exits 0") {
    auto r = run_cli({"check", source_path("docs/examples/h100-training-server.json")});
    CHECK(r.code == 0);
    CHECK(contains(r.out, "1 spec checked: 0 errors, 0 warnings"));
  }
  SECTION("--fail-on warning") {
    auto spec = source_path("docs/examples/a100-used-overpriced.json");
    CHECK(run_cli({"check", spec}).code == 0);
    CHECK(run_cli({"check", spec, "--fail-on", "warning"}).code == 1);
    auto bad = run_cli({"check", spec, "--fail-on", "warnings"});
    CHECK(bad.code == 2);
    CHECK(contains(bad.err, "did you mean 'warning'?"));
  }
  SECTION("--warnings-as-errors=<glob>") {
    auto r = run_cli({"check", source_path("docs/examples/a100-used-overpriced.json"), "--warnings-as-errors=quote-*"});
    CHECK(r.code == 1);
    CHECK(contains(r.out, ": error: the quote of"));
  }
  SECTION("--disable <glob>, repeatable, before the specs") {
    auto r = run_cli({"check", "--disable", "licence-*", "--disable", "no-ecc-*,multi-gpu-*",
                      source_path("docs/examples/rtx4090-datacenter.json")});
    CHECK(r.code == 0);
    CHECK(contains(r.out, "0 errors, 0 warnings"));
  }
  SECTION("--rules: a policy file replaces a rule by id, thresholds included") {
    auto r = run_cli({"check", source_path("docs/examples/a100-used-overpriced.json"), "--rules",
                      source_path("tests/fixtures/specs/policy-strict.json")});
    CHECK(r.code == 1);
    CHECK(contains(r.out, "over our 10% purchasing policy"));
  }
  SECTION("--rules: an unknown metric in a check rule names file:line and a suggestion") {
    auto r = run_cli({"check", source_path("docs/examples/h100-training-server.json"), "--rules",
                      source_path("tests/fixtures/specs/policy-bad-metric.json")});
    CHECK(r.code == 2);
    CHECK(contains(r.err,
                   "policy-bad-metric.json:8: rule 'quote-over-street': field 'metric': unknown check metric "
                   "\"quote_over_reference_fractoin\", did you mean 'quote_over_reference_fraction'?"));
  }
  SECTION("--list-rules") {
    auto r = run_cli({"check", "--list-rules", "--disable", "pcie-*"});
    CHECK(r.code == 0);
    for (const auto* rule : shared().enabled()) CHECK(contains(r.out, rule->id));
    CHECK(contains(r.out, "14 of 16 check rules enabled"));
  }
  SECTION("no spec") {
    auto r = run_cli({"check"});
    CHECK(r.code == 2);
    CHECK(contains(r.err, "give one or more spec files"));
  }
  SECTION("an unknown format") {
    auto r = run_cli({"check", "--format", "sarf", source_path("tests/fixtures/specs/good.json")});
    CHECK(r.code == 2);
    CHECK(contains(r.err, "did you mean 'sarif'?"));
  }
}

TEST_CASE("check: unreadable specs exit 2 with file:line; the others are still reported", "[check]") {
  auto spec = [](const std::string& name) { return source_path("tests/fixtures/specs/" + name); };
  SECTION("malformed, with a good spec after it") {
    auto r = run_cli({"check", spec("malformed.json"), source_path("docs/examples/h100-psu-undersized.json")});
    CHECK(r.code == 2);
    CHECK(contains(r.err, "malformed.json:5:1: malformed JSON"));
    CHECK(contains(r.out, "h100-psu-undersized.json:10: error: "));
    CHECK(contains(r.out, "2 specs checked: 1 error, 0 warnings; 1 could not be read"));
  }
  SECTION("a file that does not exist") {
    auto r = run_cli({"check", spec("no-such-file.json"), spec("good.json")});
    CHECK(r.code == 2);
    CHECK(contains(r.err, "no-such-file.json: cannot open file"));
    CHECK(contains(r.out, "2 specs checked: 0 errors"));
  }
  SECTION("empty") {
    auto r = run_cli({"check", spec("empty.json")});
    CHECK(r.code == 2);
    CHECK(contains(r.err, "empty.json: empty file, expected JSON"));
  }
  SECTION("huge") {
    auto path = std::filesystem::temp_directory_path() / "gpuadvisor-check-huge.json";
    {
      std::ofstream f(path, std::ios::binary);
      std::string block(1 << 20, ' ');
      for (std::size_t i = 0; i <= (util::kMaxInputBytes >> 20); ++i) f << block;
    }
    auto r = run_cli({"check", path.string(), spec("good.json")});
    std::filesystem::remove(path);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "file larger than 64 MiB"));
    CHECK(contains(r.out, "2 specs checked"));
  }
  SECTION("more GPU lines or workloads than a spec may have") {
    auto path = std::filesystem::temp_directory_path() / "gpuadvisor-check-lines.json";
    auto write = [&](const std::string& key, const std::string& item, int n) {
      std::string items;
      for (int i = 0; i < n; ++i) items += (i ? "," : "") + item;
      std::ofstream f(path, std::ios::binary);
      if (key == "gpus")
        f << "{\"gpus\": [" << items << "]}";
      else
        f << "{\"gpus\": [{\"id\": \"h100-sxm\", \"count\": 1}], \"" << key << "\": [" << items << "]}";
    };
    write("gpus", R"({"id": "h100-sxm", "count": 1})", 65);
    auto r = run_cli({"check", path.string()});
    CHECK(r.code == 2);
    CHECK(contains(r.err,
                   "gpuadvisor-check-lines.json:1: field 'gpus': 65 GPU lines, at most 64 (a line is a GPU model with "
                   "its count)"));
    write("workloads", R"({"model": "7B"})", 65);
    r = run_cli({"check", path.string()});
    CHECK(r.code == 2);
    CHECK(contains(r.err, "field 'workloads': 65 workloads, at most 64 (each is checked on every GPU line)"));
    write("workloads", R"({"model": "7B"})", 64);
    r = run_cli({"check", path.string()});
    std::filesystem::remove(path);
    CHECK(r.code != 2);
  }
  SECTION("wrongly typed") {
    auto r = run_cli({"check", spec("wrong-type.json")});
    CHECK(r.code == 2);
    CHECK(contains(r.err, "wrong-type.json:4: gpus[0]: field 'count': expected a whole number, got \"eight\""));
  }
  SECTION("an unknown field gets a suggestion") {
    auto r = run_cli({"check", spec("unknown-field.json")});
    CHECK(r.code == 2);
    CHECK(contains(r.err, "unknown-field.json:7: server: field 'psu': unknown field, did you mean 'psus'?"));
  }
  SECTION("a CUDA version that is no release") {
    auto r = run_cli({"check", spec("bad-version.json")});
    CHECK(r.code == 2);
    CHECK(contains(r.err, "bad-version.json:6: software: field 'cuda': "));
  }
  SECTION("a version written as a number") {
    auto r = run_cli({"check", spec("number-version.json")});
    CHECK(r.code == 2);
    CHECK(contains(r.err,
                   "number-version.json:6: software: field 'cuda': expected a version string like \"12.4\", got 12.1"));
  }
  SECTION("an unknown model in a workload") {
    auto r = run_cli({"check", spec("unknown-model.json")});
    CHECK(r.code == 2);
    CHECK(contains(r.err, "unknown-model.json:7: field 'model'"));
  }
  SECTION("structured formats still carry the readable specs") {
    auto r = run_cli({"check", "--format", "json", spec("malformed.json"), spec("good.json")});
    CHECK(r.code == 2);
    auto j = util::Json::parse(r.out);
    CHECK(j["summary"]["specs"] == 2);
    CHECK(j["summary"]["unreadable"] == 1);
    CHECK(j["specs"][0]["readable"] == false);
    CHECK(j["specs"][1]["readable"] == true);
  }
}

TEST_CASE("check: SARIF 2.1.0 carries the required properties", "[check]") {
  auto r = run_cli(with_examples({"check", "--format", "sarif"}));
  CHECK(r.code == 1);
  auto s = util::Json::parse(r.out);
  CHECK(s["version"] == "2.1.0");
  CHECK(contains(s["$schema"].get<std::string>(), "sarif"));
  REQUIRE(s["runs"].is_array());
  REQUIRE(s["runs"].size() == 1);
  const auto& run = s["runs"][0];
  const auto& driver = run["tool"]["driver"];
  CHECK(driver["name"] == "gpuadvisor");
  CHECK(driver["version"].is_string());
  CHECK_FALSE(driver.contains("informationUri"));  // no project URL is invented
  REQUIRE(driver["rules"].is_array());
  std::set<std::string> rule_ids;
  for (const auto& d : driver["rules"]) {
    REQUIRE(d["id"].is_string());
    rule_ids.insert(d["id"].get<std::string>());
    CHECK_FALSE(d["shortDescription"]["text"].get<std::string>().empty());
    CHECK_FALSE(d["fullDescription"]["text"].get<std::string>().empty());
    CHECK(contains(d["help"]["text"].get<std::string>(), "docs/rules/" + d["id"].get<std::string>() + ".md"));
    std::string level = d["defaultConfiguration"]["level"];
    CHECK((level == "error" || level == "warning" || level == "note"));
  }
  CHECK(rule_ids.count("power-psu-headroom") == 1);
  REQUIRE(run["results"].is_array());
  CHECK(run["results"].size() == 7);
  for (const auto& res : run["results"]) {
    REQUIRE(res["ruleId"].is_string());
    CHECK(rule_ids.count(res["ruleId"].get<std::string>()) == 1);
    auto idx = res["ruleIndex"].get<std::size_t>();
    REQUIRE(idx < driver["rules"].size());
    CHECK(driver["rules"][idx]["id"] == res["ruleId"]);
    std::string level = res["level"];
    CHECK((level == "error" || level == "warning" || level == "note"));
    CHECK_FALSE(res["message"]["text"].get<std::string>().empty());
    const auto& loc = res["locations"][0]["physicalLocation"];
    CHECK(contains(loc["artifactLocation"]["uri"].get<std::string>(), "docs/examples/"));
    CHECK(loc["region"]["startLine"].get<int>() >= 1);
  }
  CHECK(run["invocations"][0]["executionSuccessful"] == true);
}

TEST_CASE("check: JUnit has a testsuite per spec and a testcase per spec and rule", "[check]") {
  auto r = run_cli(with_examples({"check", "--format", "junit", source_path("tests/fixtures/specs/malformed.json")}));
  CHECK(r.code == 2);
  CHECK(contains(r.out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
  CHECK(xml_balanced(r.out));
  CHECK(count_of(r.out, "<testsuite ") == 6);
  const std::size_t rules = shared().enabled().size();
  CHECK(count_of(r.out, "<testcase ") == 5 * rules + 1);
  // One per rule that fired an error per spec; the 2 rules that fired only warnings pass (the
  // exit code counts errors), their findings in <system-out>.
  CHECK(count_of(r.out, "<failure ") == 5);
  CHECK(count_of(r.out, "<system-out>") == 2);
  CHECK(count_of(r.out, "<error ") == 1);  // the malformed spec
  CHECK(contains(r.out, "failures=\"5\" errors=\"1\""));
  CHECK(contains(r.out, "cap the GPUs&apos; power"));  // escaped
}

TEST_CASE("check: the spec's fixed choices are parsed once, with the choices and a suggestion on a typo", "[check]") {
  auto spec = [](const std::string& text) {
    auto doc = util::JsonDoc::parse(text, "choices.json");
    REQUIRE(doc.ok());
    auto enabled = shared().enabled();
    return rules::check_spec(*doc, shared().data(), enabled);
  };
  CHECK_THROWS_WITH(spec(R"({"gpus": [{"id": "a30", "count": 1}], "deployment": "datacentre"})"),
                    Catch::Contains("choices.json:1") &&
                        Catch::Contains("expected one of datacenter, workstation, edge, got \"datacentre\", did you "
                                        "mean 'datacenter'?"));
  CHECK_THROWS_WITH(spec(R"({"gpus": [{"id": "a30", "count": 1, "condition": "refurbished"}]})"),
                    Catch::Contains("expected one of new, used, got \"refurbished\""));
  CHECK_THROWS_WITH(spec(R"({"gpus": [{"id": "a30", "count": 1}], "server": {"interconnect": "infiniband"}})"),
                    Catch::Contains("expected one of nvlink, nvswitch, pcie, got \"infiniband\""));
  // A consumer card in a datacenter deployment: the enum drives the rule as the text did.
  CHECK(fired(spec(R"({"gpus": [{"id": "rtx-4090", "count": 1}], "deployment": "datacenter"})"),
              "licence-geforce-datacenter"));
  CHECK_FALSE(fired(spec(R"({"gpus": [{"id": "rtx-4090", "count": 1}], "deployment": "workstation"})"),
                    "licence-geforce-datacenter"));
}
