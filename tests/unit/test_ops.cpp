#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cli_fixture.h"
#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/rules/inspect.h"
#include "gpuadvisor/rules/xid_log.h"
#include "gpuadvisor/util/text.h"

using namespace gpuadvisor;
using catalog::Answer;
using catalog::CompatTable;
using catalog::parse_version;
using rules::Verdict;

namespace {

catalog::Version V(const char* s) { return *parse_version(s); }

catalog::CompatReport ask(const std::string& gpu_query, std::optional<std::string> cuda = {},
                          std::optional<std::string> driver = {}, std::optional<catalog::Framework> fw = {},
                          std::optional<std::string> version = {}) {
  static const auto cat = catalog::Catalog::load({});
  const auto& g = **cat.resolve(gpu_query);
  catalog::CompatQuery q;
  q.gpu_id = g.id;
  q.gpu_name = g.name;
  q.vendor = g.vendor;
  q.arch = g.architecture;
  q.cc = g.compute_capability.value_or("");
  if (cuda) q.cuda = V(cuda->c_str());
  if (driver) q.driver = V(driver->c_str());
  q.framework = fw;
  if (version) q.framework_version = V(version->c_str());
  auto r = catalog::evaluate_compat(CompatTable::embedded(), q);
  REQUIRE(r);
  return *r;
}

const catalog::CompatCheck& check(const catalog::CompatReport& r, const std::string& id) {
  auto it = std::find_if(r.checks.begin(), r.checks.end(), [&](const catalog::CompatCheck& c) { return c.id == id; });
  REQUIRE(it != r.checks.end());
  return *it;
}

std::string read(const std::string& rel) {
  std::ifstream in(test::source_path(rel), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

rules::SmiCapture capture(const std::string& fixture) {
  auto c = rules::parse_smi_csv(read("tests/fixtures/inspect/" + fixture), fixture);
  INFO((c ? std::string() : c.error()));
  REQUIRE(c);
  return *c;
}

rules::InspectReport inspect_fixture(const std::string& fixture) {
  static const auto cat = catalog::Catalog::load({});
  auto r = rules::inspect(capture(fixture), cat, CompatTable::embedded());
  REQUIRE(r);
  return *r;
}

Verdict verdict_of(const rules::CardReport& c, const std::string& check_id) {
  auto it =
      std::find_if(c.items.begin(), c.items.end(), [&](const rules::InspectItem& i) { return i.check == check_id; });
  INFO(check_id);
  REQUIRE(it != c.items.end());
  return it->verdict;
}

bool has_item(const rules::CardReport& c, const std::string& check_id) {
  return std::any_of(c.items.begin(), c.items.end(), [&](const rules::InspectItem& i) { return i.check == check_id; });
}

std::string parse_error(const std::string& fixture) {
  auto c = rules::parse_smi_csv(read("tests/fixtures/inspect/" + fixture), fixture);
  REQUIRE_FALSE(c);
  return c.error();
}

// Shell builtins only: PATH holds nothing but the fake nvidia-smi.
std::string print_file(const std::string& rel) {
  return "while IFS= read -r l; do printf '%s\\n' \"$l\"; done < '" + test::source_path(rel) + "'\n";
}

// Runs a command with PATH pointing at a folder holding a fake nvidia-smi script.
struct FakeSmi {
  std::filesystem::path dir;
  std::string old_path;
  explicit FakeSmi(const std::string& script) {
    char tmpl[] = "/tmp/gpuadvisor-smi-XXXXXX";
    REQUIRE(mkdtemp(tmpl));
    dir = tmpl;
    if (!script.empty()) {
      std::ofstream(dir / "nvidia-smi") << "#!/bin/sh\n" << script;
      std::filesystem::permissions(dir / "nvidia-smi", std::filesystem::perms::owner_all);
    }
    old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
    setenv("PATH", dir.c_str(), 1);
  }
  ~FakeSmi() {
    setenv("PATH", old_path.c_str(), 1);
    std::filesystem::remove_all(dir);
  }
};

}  // namespace

TEST_CASE("ops::version", "[compat]") {
  SECTION("parses dotted versions and ignores local suffixes") {
    CHECK(V("12.4").parts == std::vector<long>{12, 4});
    CHECK(V("525.60.13").parts == std::vector<long>{525, 60, 13});
    CHECK(V("2.0.1+cu118").text == "2.0.1");
    CHECK(V("v0.4.12").text == "0.4.12");
    CHECK(V("12.4.1").prefix(2) == "12.4");
    CHECK(V("12").prefix(2) == "12.0");
  }
  SECTION("compares numerically, missing parts as 0") {
    CHECK(V("12.4") > V("11.8"));
    CHECK(V("11.10") > V("11.8"));
    CHECK(V("525.60") < V("525.60.13"));
    CHECK(V("12") == V("12.0"));
    CHECK(V("535.104.05") > V("535.54.03"));
    CHECK((catalog::compare_versions("450.80.02", "450.36.06") > 0));
  }
  SECTION("rejects what is not a version, quoting it") {
    for (const char* bad : {"", "abc", "12.", ".4", "12..4", "1.2.3.4.5.6.7", "12.x"}) {
      auto r = parse_version(bad);
      INFO(bad);
      CHECK_FALSE(r);
    }
    CHECK(parse_version("abc").error() == "expected a version like 12.4 or 535.104.05, got \"abc\"");
  }
}

TEST_CASE("ops::compat tables", "[compat]") {
  const auto& t = CompatTable::embedded();
  SECTION("every architecture of the errata, with its first toolkit") {
    CHECK(t.arch("volta")->first_cuda == "9.0");
    CHECK(t.arch("turing")->first_cuda == "10.0");
    CHECK(t.arch("ampere")->first_cuda_for("8.0") == "11.0");
    CHECK(t.arch("ampere")->first_cuda_for("8.6") == "11.1");
    CHECK_FALSE(t.arch("ampere")->first_cuda_for("8.7"));  // not checked
    CHECK(t.arch("ada")->first_cuda == "11.8");
    CHECK(t.arch("hopper")->first_cuda == "11.8");
    CHECK(t.arch("blackwell")->first_cuda == "12.8");
    CHECK(t.arch("volta")->last_cuda == "12.9");
  }
  SECTION("framework releases follow the errata, not the article") {
    using catalog::Framework;
    CHECK(t.arch("ampere")->framework_for(Framework::pytorch, "8.0").first == "1.7");
    CHECK(t.arch("ampere")->framework_for(Framework::pytorch, "8.6").first == "1.8");
    CHECK(t.arch("ampere")->framework_for(Framework::tensorflow, "8.0").first == "2.4");
    CHECK(t.arch("hopper")->framework_for(Framework::pytorch, "9.0").first == "2.0");   // not 2.1
    CHECK(t.arch("hopper")->framework_for(Framework::jax, "9.0").first == "0.4.12");    // not 0.4.1
    CHECK(t.arch("ada")->framework_for(Framework::tensorflow, "8.9").first == "2.12");  // not 2.11
    CHECK_FALSE(t.arch("ada")->framework_for(Framework::pytorch, "8.9").first);         // no sm_89 wheels
    CHECK(t.arch("ada")->framework_for(Framework::pytorch, "8.9").runs_from == "1.8");
  }
  SECTION("drivers per toolkit (CUDA release notes, Table 3) and minor version compatibility (Table 2)") {
    const auto* c118 = t.cuda(V("11.8"));
    REQUIRE(c118);
    CHECK(c118->min_driver_linux == "520.61.05");
    CHECK(c118->minor_compat_linux == "450.80.02");
    CHECK(t.cuda(V("12.0"))->min_driver_linux == "525.60.13");
    CHECK(t.cuda(V("12.4.1"))->cuda == "12.4");
    CHECK(t.cuda(V("12.7")) == nullptr);
    CHECK(t.newest_cuda_for_driver(V("535.104.05"), false)->cuda == "12.2");
    CHECK(t.newest_cuda_for_driver(V("525.60.13"), false)->cuda == "12.0");
    CHECK(t.newest_cuda_for_driver(V("525.60"), false)->cuda == "11.8");
    CHECK(t.newest_cuda_for_driver(V("400"), false) == nullptr);
  }
  SECTION("framework release series") {
    using catalog::Framework;
    CHECK(t.release(Framework::pytorch, V("2.0.1"))->version == "2.0");
    CHECK(t.release(Framework::pytorch, V("2.0.1"))->cuda == std::vector<std::string>{"11.7", "11.8"});
    CHECK(t.release(Framework::tensorflow, V("2.12"))->cuda == std::vector<std::string>{"11.8"});
    CHECK(t.release(Framework::pytorch, V("1.1")) == nullptr);
  }
}

TEST_CASE("ops::compat tables: current toolkits, frameworks and Blackwell capabilities", "[compat]") {
  using catalog::Framework;
  const auto& t = CompatTable::embedded();
  SECTION("CUDA 13.1 to 13.5 with their Linux drivers (release notes Table 3; Table 2: 13.x from branch 580)") {
    struct Row {
      const char* cuda;
      std::optional<std::string> linux_driver;
    };
    for (const auto& [cuda, linux_driver] :
         {Row{"13.0", "580.65.06"}, Row{"13.1", "590.44.01"}, Row{"13.2", "595.45.04"}, Row{"13.3", "610.43.02"},
          Row{"13.4", "615"}, Row{"13.5", std::nullopt}}) {
      INFO(cuda);
      const auto* row = t.cuda(V(cuda));
      REQUIRE(row);
      CHECK(row->min_driver_linux == linux_driver);
      CHECK_FALSE(row->min_driver_windows);  // N/A: the Windows driver is not bundled from 13.1
      CHECK(row->minor_compat_linux == "580");
      CHECK_FALSE(row->sources.empty());
      CHECK_FALSE(row->as_of.empty());
    }
    CHECK(t.cuda_releases().back().cuda == "13.5");
    CHECK(t.newest_cuda_for_driver(V("590.44.01"), false)->cuda == "13.1");
    CHECK(t.newest_cuda_for_driver(V("595.58.03"), false)->cuda == "13.2");
    CHECK(t.newest_cuda_for_driver(V("610.43.02"), false)->cuda == "13.3");
    CHECK(t.newest_cuda_for_driver(V("615.10"), false)->cuda == "13.4");
  }
  SECTION("TensorFlow 2.19 to 2.21: tested with CUDA 12.5 and cuDNN 9.3") {
    for (const char* v : {"2.19", "2.20", "2.21"}) {
      INFO(v);
      const auto* rel = t.release(Framework::tensorflow, V(v));
      REQUIRE(rel);
      CHECK(rel->cuda == std::vector<std::string>{"12.5"});
      CHECK(rel->cudnn == "9.3");
      CHECK_FALSE(rel->sources.empty());
    }
    CHECK(t.releases(Framework::tensorflow).back()->version == "2.21");
  }
  SECTION("PyTorch 2.10 to 2.14: the CUDA builds of the release compatibility matrix") {
    CHECK(t.release(Framework::pytorch, V("2.10"))->cuda == std::vector<std::string>{"12.6", "12.8", "13.0"});
    CHECK(t.release(Framework::pytorch, V("2.11.0"))->cuda == std::vector<std::string>{"12.6", "12.8", "13.0"});
    CHECK(t.release(Framework::pytorch, V("2.12"))->cuda == std::vector<std::string>{"12.6", "13.0", "13.2"});
    CHECK(t.release(Framework::pytorch, V("2.13"))->cuda == std::vector<std::string>{"12.6", "13.0", "13.2"});
    CHECK(t.release(Framework::pytorch, V("2.14.1"))->cuda == std::vector<std::string>{"12.6", "13.0", "13.2"});
    CHECK(t.releases(Framework::pytorch).back()->version == "2.14");
    CHECK(catalog::parse_framework_release(t, Framework::pytorch, "2.15"));  // newer than the table
  }
  SECTION("JAX releases with the toolkits of their CUDA plugins (the release tags' .bazelrc)") {
    const auto* j0432 = t.release(Framework::jax, V("0.4.32"));
    REQUIRE(j0432);
    CHECK(j0432->cuda == std::vector<std::string>{"12.3"});
    CHECK(j0432->package("12.3") == "jax-cuda12-plugin");
    CHECK(t.release(Framework::jax, V("0.6.0"))->cuda == std::vector<std::string>{"12.8"});
    CHECK(t.release(Framework::jax, V("0.7.1"))->cuda == std::vector<std::string>{"12.9"});
    const auto* j072 = t.release(Framework::jax, V("0.7.2"));
    REQUIRE(j072);  // the first with a CUDA 13 plugin
    CHECK(j072->cuda == std::vector<std::string>{"12.9", "13.0"});
    CHECK(j072->package("13.0") == "jax-cuda13-plugin");
    CHECK(t.release(Framework::jax, V("0.11.0"))->cuda == std::vector<std::string>{"12.9", "13.0"});
    CHECK(t.release(Framework::jax, V("0.9.0.1"))->version == "0.9.0");  // a build of the 0.9.0 series
    CHECK(catalog::parse_framework_release(t, Framework::jax, "0.4.39").error() ==
          "JAX 0.4.39 is not a release in the table; the nearest are 0.4.38 and 0.5.0");
    CHECK(catalog::parse_framework_release(t, Framework::jax, "0.4.12"));  // older than the table
    CHECK(catalog::parse_framework_release(t, Framework::jax, "0.12.0"));  // newer than the table
    CHECK(catalog::parse_framework_release(t, Framework::jax, "99.1").error() ==
          "JAX 99.1 does not exist: the newest release in the table is 0.11.0");
  }
  SECTION("Blackwell 10.3 (B300), 11.0 (Jetson Thor, sm_101 before CUDA 13.0) and 12.1 (GB10)") {
    const auto* bw = t.arch("blackwell");
    REQUIRE(bw);
    CHECK(bw->compute_capabilities == std::vector<std::string>{"10.0", "10.3", "11.0", "12.0", "12.1"});
    CHECK(bw->first_cuda_for("10.0") == "12.8");
    CHECK(bw->first_cuda_for("10.3") == "12.9");
    CHECK(bw->first_cuda_for("11.0") == "13.0");
    CHECK(bw->first_cuda_for("12.0") == "12.8");
    CHECK(bw->first_cuda_for("12.1") == "12.9");
    CHECK(t.arch_for_cc("11.0") == bw);
    CHECK(catalog::resolve_arch(t, "sm_101").error() ==
          "NVIDIA renumbered compute capability 10.1 to 11.0: ask with --arch 11.0");
    CHECK(catalog::resolve_arch(t, "sm_110")->cc == "11.0");
    // PyTorch: native sm_100/sm_120 from 2.7, sm_110 from 2.9 (aarch64 CUDA 13.0 wheels); no sm_103/sm_121 wheels.
    CHECK(bw->framework_for(Framework::pytorch, "12.0").first == "2.7");
    CHECK(bw->framework_for(Framework::pytorch, "11.0").first == "2.9");
    CHECK_FALSE(bw->framework_for(Framework::pytorch, "10.3").first);
    CHECK(bw->framework_for(Framework::pytorch, "10.3").runs_from == "2.7");
    CHECK(bw->framework_for(Framework::pytorch, "12.1").runs_from == "2.7");
    CHECK(bw->framework_for(Framework::jax, "10.0").first == "0.6.0");
    CHECK_FALSE(bw->framework_for(Framework::jax, "11.0").first);
    CHECK_FALSE(bw->framework_for(Framework::jax, "11.0").runs_from);
  }
}

TEST_CASE("ops::compat: Blackwell capabilities and current releases", "[compat]") {
  using catalog::Framework;
  auto by_cc = [](const std::string& cc, std::optional<std::string> cuda, std::optional<catalog::Framework> fw = {},
                  std::optional<std::string> version = {}) {
    catalog::CompatQuery q;
    q.arch = "blackwell";
    q.cc = cc;
    if (cuda) q.cuda = V(cuda->c_str());
    q.framework = fw;
    if (version) q.framework_version = V(version->c_str());
    auto r = catalog::evaluate_compat(CompatTable::embedded(), q);
    REQUIRE(r);
    return *r;
  };
  SECTION("RTX 5090: the first PyTorch with sm_120 kernels is 2.7, in its CUDA 12.8 wheels") {
    auto r = ask("rtx-5090", {}, {}, Framework::pytorch);
    CHECK(r.answer == Answer::yes);
    CHECK(check(r, "framework").detail ==
          "the first release with prebuilt Blackwell (sm_120) support is 2.7 (its CUDA 12.8 build)");
    auto old = ask("rtx-5090", {}, {}, Framework::pytorch, "2.6");
    CHECK(old.answer == Answer::no);
    CHECK(check(old, "framework").needed == "PyTorch 2.7 or newer (its CUDA 12.8 build)");
    CHECK(check(ask("rtx-5090", {}, {}, Framework::pytorch, "2.7"), "framework").detail ==
          "PyTorch 2.7 has prebuilt Blackwell (sm_120) support in its CUDA 12.8 build (its CUDA 11.8 and 12.6 builds "
          "have no "
          "sm_120 code)");
  }
  SECTION("PyTorch 2.12 on RTX 5090: the CUDA 13.0 build, as 2.12 has no CUDA 12.8 build") {
    CHECK(check(ask("rtx-5090", {}, {}, Framework::pytorch, "2.12"), "framework").detail ==
          "PyTorch 2.12 has prebuilt Blackwell (sm_120) support in its CUDA 13.0 build (its CUDA 12.6 build has no "
          "sm_120 "
          "code)");
    auto cu128 = ask("rtx-5090", "12.8", {}, Framework::pytorch, "2.12");
    CHECK(check(cu128, "framework-cuda").answer == Answer::limited);
  }
  SECTION("Jetson Thor (11.0): CUDA 13.0 and the CUDA 13.0 build of PyTorch 2.9") {
    CHECK(check(by_cc("11.0", "12.9"), "cuda").answer == Answer::no);
    CHECK(check(by_cc("11.0", "12.9"), "cuda").needed == "CUDA 13.0 or newer");
    CHECK(check(by_cc("11.0", "13.0"), "cuda").answer == Answer::yes);
    auto pt = by_cc("11.0", {}, Framework::pytorch, "2.9");
    CHECK(check(pt, "framework").detail ==
          "PyTorch 2.9 has prebuilt Blackwell (sm_110) support in its CUDA 13.0 build (its CUDA 12.6 and 12.8 builds "
          "have no "
          "sm_110 code)");
    CHECK(by_cc("11.0", {}, Framework::pytorch, "2.8").answer == Answer::no);
    CHECK(by_cc("11.0", {}, Framework::jax).answer == Answer::unknown);
  }
  SECTION("B300 (10.3) and GB10 (12.1): CUDA 12.9, and the frameworks' sm_100 / sm_120 code") {
    CHECK(check(by_cc("10.3", "12.8"), "cuda").answer == Answer::limited);  // builds sm_100, which runs on sm_103
    CHECK(check(by_cc("12.1", "12.9"), "cuda").answer == Answer::yes);
    CHECK(by_cc("12.1", {}, Framework::pytorch, "2.6").answer == Answer::no);
    CHECK(by_cc("10.3", {}, Framework::pytorch, "2.7").answer == Answer::yes);
  }
  SECTION("JAX names the plugin of the build") {
    auto r = ask("h100-sxm", {}, {}, Framework::jax, "0.8.0");
    CHECK(check(r, "framework").detail ==
          "JAX 0.8.0 has prebuilt Hopper (sm_90) support in its CUDA 12.9 build (jax-cuda12-plugin)");
    CHECK(check(ask("h100-sxm", "13.0", {}, Framework::jax, "0.8.0"), "framework").detail ==
          "JAX 0.8.0 has prebuilt Hopper (sm_90) support in its CUDA 13.0 build (jax-cuda13-plugin)");  // the asked
                                                                                                        // toolkit's
    auto limited = ask("h100-sxm", "12.4", {}, Framework::jax, "0.8.0");
    CHECK(check(limited, "framework-cuda").answer == Answer::limited);
    CHECK(check(limited, "framework-cuda").detail == "JAX 0.8.0 has official builds for CUDA 12.9 and 13.0 only");
  }
  SECTION("the newest toolkits: drivers and minor version compatibility") {
    auto full = check(ask("h100-sxm", "13.3", "610.43.02"), "driver");
    CHECK(full.answer == Answer::yes);
    auto minor = check(ask("h100-sxm", "13.2", "580.65.06"), "driver");
    CHECK(minor.answer == Answer::limited);
    CHECK(minor.needed == "driver 595.45.04 or newer for full CUDA 13.2 support");
    auto branch = check(ask("h100-sxm", "13.4", "580.65.06"), "driver");  // 13.4: the release notes name branch R615
    CHECK(branch.answer == Answer::limited);
    CHECK(branch.needed == "driver branch 615 or newer for full CUDA 13.4 support");
    CHECK(check(ask("h100-sxm", "13.4", "615.20"), "driver").answer == Answer::yes);
    auto unknown = check(ask("h100-sxm", "13.5", "620.10"), "driver");
    CHECK(unknown.answer == Answer::unknown);
  }
}

TEST_CASE("ops::compat", "[compat]") {
  using catalog::Framework;
  SECTION("H100 with PyTorch 1.12: no, and the first release that works is 2.0 (its CUDA 11.8 build)") {
    auto r = ask("h100-sxm", {}, {}, Framework::pytorch, "1.12");
    CHECK(r.answer == Answer::no);
    const auto& c = check(r, "framework");
    CHECK(c.detail ==
          "PyTorch 1.12 has no prebuilt Hopper (sm_90) support: the first release with it is 2.0; 1.12 builds use CUDA "
          "10.2, 11.3 and 11.6, and sm_90 code needs CUDA 11.8 or newer");
    CHECK(c.needed == "PyTorch 2.0 or newer (its CUDA 11.8 build)");
  }
  SECTION("H100 with PyTorch 2.0: yes, in the CUDA 11.8 build only") {
    auto r = ask("h100-sxm", {}, {}, Framework::pytorch, "2.0.1");
    CHECK(r.answer == Answer::yes);
    CHECK(check(r, "framework").detail ==
          "PyTorch 2.0.1 has prebuilt Hopper (sm_90) support in its CUDA 11.8 build (its CUDA 11.7 build has no sm_90 "
          "code)");
  }
  SECTION("Ada runs PyTorch's sm_86 code from 1.8; TensorFlow needs 2.12") {
    CHECK(ask("rtx-4090", {}, {}, Framework::pytorch, "1.7").answer == Answer::no);
    CHECK(ask("rtx-4090", {}, {}, Framework::pytorch, "1.13").answer == Answer::yes);
    auto tf = ask("rtx-4090", {}, {}, Framework::tensorflow, "2.11");
    CHECK(tf.answer == Answer::no);
    CHECK(check(tf, "framework").needed == "TensorFlow 2.12 or newer (its CUDA 11.8 build)");
  }
  SECTION("the CUDA toolkit: native code, binary-compatible code, dropped architectures") {
    CHECK(check(ask("h100-sxm", "11.7"), "cuda").answer == Answer::no);
    CHECK(check(ask("h100-sxm", "12.4"), "cuda").detail == "CUDA 12.4 builds native sm_90 code (first toolkit: 11.8)");
    auto ada = check(ask("rtx-4090", "11.7"), "cuda");
    CHECK(ada.answer == Answer::limited);
    CHECK(ada.detail ==
          "CUDA 11.7 cannot build native sm_89 code (the first toolkit that can is 11.8), but the sm_86 code it builds "
          "runs "
          "on sm_89 (binary compatibility within compute capability 8.x)");
    auto volta = check(ask("v100-sxm2-32gb", "13.0"), "cuda");
    CHECK(volta.answer == Answer::no);
    CHECK(volta.needed == "CUDA 12.9 or older");
    CHECK(check(ask("jetson-agx-orin-64gb", "11.4"), "cuda").answer == Answer::unknown);
  }
  SECTION("the driver: Table 3, minor version compatibility, and never older than the architecture's first toolkit") {
    auto full = check(ask("h100-sxm", "12.2", "535.104.05"), "driver");
    CHECK(full.answer == Answer::yes);
    auto minor = check(ask("h100-sxm", "12.4", "525.60.13"), "driver");
    CHECK(minor.answer == Answer::limited);
    CHECK(minor.needed == "driver 550.54.14 or newer for full CUDA 12.4 support");
    auto old = check(ask("rtx-4090", "11.7", "515.65.01"), "driver");
    CHECK(old.answer == Answer::no);
    CHECK(old.subject == "driver 515.65.01 for CUDA 11.8 (sm_89 code)");
    CHECK(old.needed == "driver 520.61.05 or newer");
    CHECK(check(ask("h100-sxm", {}, "525.60"), "driver").answer == Answer::yes);  // CUDA 11.8 needs 520.61.05
  }
  SECTION("another vendor's GPU: CUDA does not run on it") {
    auto r = ask("mi300x", "12.4");
    CHECK(r.answer == Answer::no);
    CHECK(r.arch == nullptr);
    CHECK(check(r, "cuda").needed == "an NVIDIA GPU");
  }
  SECTION("what users type is checked against the tables") {
    const auto& t = CompatTable::embedded();
    CHECK(catalog::parse_cuda_release(t, "12.7").error() ==
          "CUDA 12.7 is not a toolkit release in the table; the nearest are 12.6 and 12.8");
    CHECK(catalog::parse_cuda_release(t, "9.2"));   // older than the table: answered from the architecture data
    CHECK(catalog::parse_cuda_release(t, "13.6"));  // newer than the table
    CHECK(catalog::parse_cuda_release(t, "twelve").error() == "expected a CUDA version like 12.4, got \"twelve\"");
    CHECK(catalog::parse_framework_release(t, Framework::pytorch, "1.14").error() ==
          "PyTorch 1.14 is not a release in the table; the nearest are 1.13 and 2.0");
    CHECK(catalog::parse_framework_release(t, Framework::pytorch, "2.7"));
    CHECK(catalog::resolve_arch(t, "hoper").error() ==
          "unknown architecture \"hoper\", did you mean 'hopper'? (expected volta, turing, ampere, ada, hopper, "
          "blackwell, or a "
          "compute capability like 8.6)");
    auto sm86 = catalog::resolve_arch(t, "sm_86");
    REQUIRE(sm86);
    CHECK(sm86->arch->id == "ampere");
    CHECK(sm86->cc == "8.6");
    CHECK(catalog::resolve_arch(t, "Ada Lovelace")->arch->id == "ada");
  }
}

TEST_CASE("ops::compat command", "[compat]") {
  SECTION("says no with exit 1 and names the first release that works") {
    auto r = test::run_cli({"compat", "--gpu", "h100-sxm", "--framework", "pytorch", "--version", "1.12"});
    CHECK(r.code == 1);
    CHECK(r.out.find("Answer: no. Needed: PyTorch 2.0 or newer (its CUDA 11.8 build).") != std::string::npos);
  }
  SECTION("a summary alone exits 0") {
    auto r = test::run_cli({"compat", "--arch", "hopper", "--format", "json"});
    CHECK(r.code == 0);
    auto j = util::Json::parse(r.out);
    CHECK(j["command"] == "compat");
    CHECK(j["cuda"]["first"] == "11.8");
    CHECK(j["frameworks"]["pytorch"]["first"] == "2.0");
    CHECK(j["answer"] == "yes");
  }
  SECTION("usage errors exit 2 with one line and a suggestion") {
    auto r = test::run_cli({"compat", "--gpu", "h100-sxm", "--framework", "pytroch"});
    CHECK(r.code == 2);
    CHECK(r.err ==
          "gpuadvisor: error: --framework: expected one of pytorch, tensorflow, jax, got \"pytroch\", did you mean "
          "'pytorch'?\n");
    r = test::run_cli({"compat", "--gpu", "h100-sxm", "--cuda", "12.7"});
    CHECK(r.code == 2);
    CHECK(
        r.err ==
        "gpuadvisor: error: --cuda: CUDA 12.7 is not a toolkit release in the table; the nearest are 12.6 and 12.8\n");
    r = test::run_cli({"compat", "--gpu", "rtx-4909"});
    CHECK(r.code == 2);
    CHECK(r.err.find("did you mean 'rtx-4090'?") != std::string::npos);
    r = test::run_cli({"compat", "--gpu", "h100-sxm", "--version", "2.0"});
    CHECK(r.err == "gpuadvisor: error: --version: needs --framework (pytorch, tensorflow or jax)\n");
    r = test::run_cli({"compat"});
    CHECK(r.code == 2);
    r = test::run_cli({"compat", "--gpu", "h100", "--arch", "hopper"});
    CHECK(r.err == "gpuadvisor: error: --gpu and --arch: give one of them, not both\n");
  }
  SECTION("MIG is the GPU's own fact: its record's count, none on GeForce, not known without a count") {
    auto b200 = test::run_cli({"compat", "--gpu", "b200"});
    CHECK(b200.out.find("MIG (up to 7 instances)") != std::string::npos);
    auto j = util::Json::parse(test::run_cli({"compat", "--gpu", "a30", "--format", "json"}).out);
    CHECK(j["features"]["mig"] == true);
    CHECK(j["features"]["mig_instances"] == 4);
    j = util::Json::parse(test::run_cli({"compat", "--gpu", "rtx-5090", "--format", "json"}).out);
    CHECK(j["features"]["mig"] == false);  // Blackwell, but GeForce: no MIG
    CHECK(j["features"]["mig_instances"] == 0);
    j = util::Json::parse(test::run_cli({"compat", "--arch", "blackwell", "--format", "json"}).out);
    CHECK(j["features"]["mig"] == true);  // on some products of the architecture
    CHECK(j["features"]["mig_instances"].is_null());
    auto unknown = test::run_cli({"compat", "--catalog", test::source_path("tests/fixtures/catalog/mig-unknown.json"),
                                  "--gpu", "mig-unknown-gpu", "--format", "json"});
    REQUIRE(unknown.code == 0);
    j = util::Json::parse(unknown.out);
    CHECK(j["features"]["mig"].is_null());
    CHECK(j["features"]["mig_instances"].is_null());
  }
  SECTION("versions that do not exist exit 2, as the help promises") {
    auto r = test::run_cli({"compat", "--gpu", "h100-sxm", "--framework", "pytorch", "--version", "99.1"});
    CHECK(r.code == 2);
    CHECK(r.err.find("PyTorch 99.1 does not exist") != std::string::npos);
    r = test::run_cli({"compat", "--gpu", "h100-sxm", "--driver", "9999"});
    CHECK(r.code == 2);
    CHECK(r.err.find("--driver: \"9999\" is not an NVIDIA driver version") != std::string::npos);
    r = test::run_cli({"compat", "--gpu", "h100-sxm", "--framework", "jax", "--version", "0.4.39"});
    CHECK(r.code == 2);
  }
  SECTION("rtx-5090 with PyTorch names 2.7 and its CUDA 12.8 wheels; JSON names the plugin of a JAX build") {
    auto r = test::run_cli({"compat", "--gpu", "rtx-5090", "--framework", "pytorch"});
    CHECK(r.code == 0);
    CHECK(r.out.find("PyTorch       2.7 or newer (its CUDA 12.8 build)") != std::string::npos);
    r = test::run_cli({"compat", "--gpu", "b200", "--format", "json"});
    auto j = util::Json::parse(r.out);
    CHECK(j["frameworks"]["jax"]["first"] == "0.6.0");
    CHECK(j["frameworks"]["jax"]["build_cuda"] == "12.8");
    CHECK(j["frameworks"]["jax"]["build_package"] == "jax-cuda12-plugin");
    CHECK(j["frameworks"]["pytorch"]["build_package"].is_null());
  }
}

TEST_CASE("ops::xid", "[diagnose]") {
  const auto& t = catalog::XidTable::embedded();
  SECTION("Xid 43 is NVIDIA's 'GPU stopped processing', an application fault, not a VRAM failure") {
    const auto* x = t.find(43);
    REQUIRE(x);
    CHECK(x->name == "GPU stopped processing");
    CHECK(x->category == "application");
    CHECK(x->meaning.find("VRAM") == std::string::npos);
    CHECK(x->meaning.find("memory") == std::string::npos);
  }
  SECTION("Xid 13 is a Graphics Engine Exception from the application, not power") {
    const auto* x = t.find(13);
    REQUIRE(x);
    CHECK(x->name == "Graphics Engine Exception");
    CHECK(x->category == "application");
    CHECK(x->meaning.find("power") == std::string::npos);
  }
  SECTION("memory faults, the missing power cable, and the bus") {
    for (int code : {48, 63, 64, 92, 94, 95}) {
      INFO(code);
      REQUIRE(t.find(code));
      CHECK(t.find(code)->category == "memory");
    }
    CHECK(t.find(54)->name == "Auxiliary power is not connected to the GPU board");
    CHECK(t.find(79)->name == "GPU has fallen off the bus");
    CHECK(t.find(79)->severity == catalog::XidSeverity::critical);
  }
  SECTION("every record has a source") {
    for (const auto& x : t.all()) {
      INFO(x.code);
      CHECK_FALSE(x.sources.empty());
    }
  }
}

TEST_CASE("ops::errors", "[diagnose]") {
  const auto& t = catalog::ErrorTable::embedded();
  auto first = [&](const char* text) {
    auto m = t.match(text);
    return m.empty() ? std::string() : m.front()->id;
  };
  CHECK(first("CUDNN_STATUS_NOT_INITIALIZED") == "cudnn-status-not-initialized");
  CHECK(first("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED") == "cudnn-status-not-initialized");
  CHECK(first("RuntimeError: CUDA error: out of memory") == "cuda-out-of-memory");
  CHECK(first("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB") == "cuda-out-of-memory");
  CHECK(first("RuntimeError: CUDA error: no kernel image is available for execution on the device") ==
        "cuda-no-kernel-image");
  CHECK(first("CUDA driver version is insufficient for CUDA runtime version") == "cuda-driver-insufficient");
  CHECK(first("cuda-out-of-memory") == "cuda-out-of-memory");
  CHECK(t.match("NOT_INITIALIZED").size() == 2);  // cuDNN and cuBLAS
  CHECK(t.match("something else entirely").empty());
  for (const auto& e : t.all()) {
    INFO(e.id);
    CHECK_FALSE(e.sources.empty());
  }
}

TEST_CASE("ops::xid log scan", "[diagnose]") {
  const auto& table = catalog::XidTable::embedded();
  SECTION("dmesg: grouped by GPU and code, critical first") {
    auto s = rules::scan_xid_log(read("tests/fixtures/logs/dmesg-xid.log"), "dmesg-xid.log", table);
    REQUIRE(s);
    CHECK(s->lines == 20);
    CHECK(s->events == 6);  // the driver's "GPU has fallen off the bus." line echoes Xid 79
    CHECK(s->critical == 1);
    CHECK(s->gpus == std::vector<std::string>{"0000:18:00", "0000:3b:00"});
    REQUIRE(s->groups.size() == 4);
    CHECK(s->groups[0].code == 79);
    CHECK(s->groups[0].pci == "0000:3b:00");
    CHECK(s->groups[0].first_time == "8123.456810");
    CHECK(s->groups[1].code == 13);
    CHECK(s->groups[1].count == 2);
    CHECK(s->groups[3].code == 43);
  }
  SECTION("journalctl: timestamps and the recovery-action companion") {
    auto s = rules::scan_xid_log(read("tests/fixtures/logs/journal-xid.log"), "journal-xid.log", table);
    REQUIRE(s);
    // 48 twice, 119 twice (a GSP timeout: NVIDIA's action is a GPU reset), 154 stating "GPU Reset Required"
    CHECK(s->critical == 5);
    REQUIRE(s->groups.size() >= 3);
    CHECK(s->groups[0].code == 119);
    CHECK(s->groups[0].count == 2);
    CHECK(s->groups[1].code == 48);
    CHECK(s->groups[1].count == 2);
    CHECK(s->groups[1].first_time == "Mar 05 03:14:07");
    CHECK(s->groups[1].last_time == "Mar 05 03:20:51");
    CHECK(s->groups[2].code == 154);
    CHECK(s->groups[2].label == "GPU Reset Required");
  }
  SECTION("older drivers print the address without 'PCI:'; unknown codes rank after errors") {
    auto s = rules::scan_xid_log(read("tests/fixtures/logs/syslog-old-format.log"), "old.log", table);
    REQUIRE(s);
    REQUIRE(s->groups.size() == 2);
    CHECK(s->groups[0].code == 122);
    CHECK(s->groups[0].info == nullptr);
    CHECK_FALSE(s->groups[0].severity);
    CHECK(s->groups[0].pci == "0000:01:00");
    CHECK(s->groups[1].first_time == "2024-01-12T22:41:03.518220+00:00");
  }
  SECTION("a malformed line is a warning naming the line, and the scan goes on") {
    auto s = rules::scan_xid_log(read("tests/fixtures/logs/malformed-xid.log"), "malformed-xid.log", table);
    REQUIRE(s);
    CHECK(s->events == 1);
    REQUIRE(s->warnings.size() == 1);
    CHECK(s->warnings[0].line == 2);
    CHECK(s->warnings[0].what ==
          "malformed Xid line skipped: no Xid number after the address; expected 'NVRM: Xid "
          "(PCI:0000:3b:00): 79, ...', got \"NVRM: Xid (PCI:0000:18:00): pid=24561, name=python3, truncated\"");
    auto cut = rules::scan_xid_log(
        "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n[ 2.0] NVRM: Xid (PCI:0000:3b", "cut.log",
        table);
    REQUIRE(cut);
    CHECK(cut->events == 1);
    CHECK(cut->critical == 1);
    CHECK(cut->warnings_total == 1);
    auto b = rules::scan_xid_log(std::string("ok line\nbin\0ary\n", 16), "b.log", table);
    REQUIRE_FALSE(b);
    CHECK(b.error() == "b.log:2: binary data (a NUL byte), expected kernel log text (dmesg, journalctl -k or syslog)");
    CHECK(rules::scan_xid_log("", "empty.log", table)->events == 0);
  }
}

TEST_CASE("ops::diagnose command", "[diagnose]") {
  SECTION("diagnose 43 gives NVIDIA's meaning") {
    auto r = test::run_cli({"diagnose", "43"});
    CHECK(r.code == 0);
    CHECK(r.out.rfind("Xid 43: GPU stopped processing\n", 0) == 0);
    CHECK(r.out.find("VRAM") == std::string::npos);
    CHECK(test::run_cli({"diagnose", "xid", "48"}).out.rfind("Xid 48: Double Bit ECC Error\n", 0) == 0);
    CHECK(test::run_cli({"diagnose", "Xid79"}).code == 0);
  }
  SECTION("error texts, and what is not known") {
    CHECK(test::run_cli({"diagnose", "CUDNN_STATUS_NOT_INITIALIZED"})
              .out.rfind("cudnn-status-not-initialized (cudnn)\n", 0) == 0);
    auto r = test::run_cli({"diagnose", "CUDNN_STATUS_NOT_INITIALISED"});
    CHECK(r.code == 2);
    CHECK(r.err.find("did you mean 'CUDNN_STATUS_NOT_INITIALIZED'?") != std::string::npos);
    r = test::run_cli({"diagnose", "999"});
    CHECK(r.code == 2);
    CHECK(r.err.rfind("gpuadvisor: error: Xid 999 is not in gpuadvisor's table (8, 13, ", 0) == 0);
    CHECK(test::run_cli({"diagnose"}).code == 2);
  }
  SECTION("a log with a critical Xid exits 1; without, 0; unreadable, 2") {
    CHECK(test::run_cli({"diagnose", "--log", test::source_path("tests/fixtures/logs/dmesg-xid.log")}).code == 1);
    CHECK(test::run_cli({"diagnose", "--log", test::source_path("tests/fixtures/logs/syslog-no-xid.log")}).code == 0);
    CHECK(test::run_cli({"diagnose", "--log", test::source_path("tests/fixtures/inspect/garbage.bin")}).code == 2);
    auto r = test::run_cli({"diagnose", "--log", "/nonexistent/kern.log"});
    CHECK(r.code == 2);
    CHECK(r.err == "gpuadvisor: error: --log: /nonexistent/kern.log: cannot open file: no such file or directory\n");
    CHECK(test::run_cli({"diagnose", "79", "--log", "x"}).code == 2);
  }
}

TEST_CASE("rules::inspect parse", "[inspect]") {
  SECTION("headers with units, renamed headers, [N/A] cells, CRLF") {
    auto c = capture("h100-ecc.csv");
    REQUIRE(c.rows.size() == 2);
    CHECK(c.fields[6] == "memory.total");
    CHECK(std::find(c.fields.begin(), c.fields.end(), "clocks_throttle_reasons.active") != c.fields.end());
    CHECK(*c.cell(c.rows[1], "ecc.errors.uncorrected.volatile.total") == "2");
    CHECK(*c.cell(c.rows[1], "remapped_rows.failure") == "No");
    CHECK(c.rows[1].line == 3);
  }
  SECTION("the query asks nvidia-smi for every field the checks read") {
    auto full = rules::smi_query_fields(0);
    CHECK(full.size() == 36);
    CHECK(std::find(full.begin(), full.end(), "mig.mode.pending") != full.end());
    CHECK(std::find(full.begin(), full.end(), "temperature.gpu.tlimit") != full.end());
    auto older = rules::smi_query_fields(2);
    CHECK(std::find(older.begin(), older.end(), "temperature.gpu.tlimit") == older.end());
    CHECK(std::find(older.begin(), older.end(), "remapped_rows.pending") == older.end());
    CHECK(std::find(older.begin(), older.end(), "mig.mode.current") == older.end());
  }
  SECTION("bad input: one line naming file:line and what") {
    CHECK(parse_error("header-only.csv") ==
          "header-only.csv:1: a header but no GPU rows (nvidia-smi saw no GPUs, or the capture was cut short)");
    CHECK(parse_error("truncated-row.csv") ==
          "truncated-row.csv:3: expected 33 values as in the header (line 1), got 12 (a truncated row?)");
    CHECK(parse_error("empty.csv") ==
          "empty.csv: empty input, expected the CSV output of nvidia-smi --query-gpu=... --format=csv");
    CHECK(parse_error("garbage.bin").rfind("garbage.bin:1: binary data (byte 0x", 0) == 0);
    // No header and no GPU name among the cells: nothing to identify a card by.
    auto nameless = rules::parse_smi_csv("0, 34, 61.23 W, 400.00 W\n", "nn.csv");
    REQUIRE_FALSE(nameless);
    CHECK(
        nameless.error() ==
        "nn.csv:1: expected the CSV header nvidia-smi prints (\"name, pci.bus_id, ...\"), got \"0, 34, 61.23 W, 400.00 "
        "W\"");
    CHECK(rules::parse_smi_csv("index, temperature.gpu\n0, 56\n", "k.csv").error() ==
          "k.csv:1: the header has no 'name' column, which inspect identifies each card by; capture with: " +
              rules::smi_query_command());
    auto none = rules::parse_smi_csv("No devices were found\n", "smi");
    CHECK(none.error() == "smi:1: nvidia-smi found no GPUs (\"No devices were found\")");
    auto dup = rules::parse_smi_csv("name, name\nA, B\n", "dup");
    CHECK(dup.error() == "dup:1: column 'name' appears twice in the header");
    std::string many = "index, name\n";
    for (std::size_t i = 0; i <= rules::kMaxSmiRows; ++i) many += std::to_string(i) + ", NVIDIA A100-SXM4-80GB\n";
    auto over = rules::parse_smi_csv(many, "many");
    CHECK(over.error() ==
          "many:8194: more than 8,192 GPU rows in one capture (at most 1,024 eight-GPU servers); split it by host");
    many.erase(many.rfind("8192, "));
    auto at_cap = rules::parse_smi_csv(many, "many");
    REQUIRE(at_cap);
    CHECK(at_cap->rows.size() == rules::kMaxSmiRows);
    CHECK(*at_cap->cell(at_cap->rows.back(), "index") == "8191");
    CHECK(at_cap->cell(at_cap->rows.back(), "serial") == nullptr);
  }
  SECTION("a cell that cannot be read names line and field") {
    static const auto cat = catalog::Catalog::load({});
    auto r = rules::inspect(capture("bad-value.csv"), cat, CompatTable::embedded());
    REQUIRE_FALSE(r);
    CHECK(r.error() == "bad-value.csv:2: field 'temperature.gpu': expected a number, got \"hot\"");
  }
}

TEST_CASE("rules::inspect checks", "[inspect]") {
  SECTION("a healthy A100 pair passes everything") {
    auto r = inspect_fixture("a100-healthy.csv");
    CHECK(r.verdict == Verdict::pass);
    CHECK(r.failures == 0);
    CHECK(r.warnings == 0);
    REQUIRE(r.cards.size() == 2);
    REQUIRE(r.cards[0].gpu);
    CHECK(r.cards[0].gpu->id == "a100-80gb-sxm");
    CHECK_FALSE(has_item(r.cards[0], "retired-pages"));  // Ampere remaps rows instead
  }
  SECTION("an H100 with uncorrected ECC errors and a pending remap fails") {
    auto r = inspect_fixture("h100-ecc.csv");
    CHECK(r.verdict == Verdict::fail);
    CHECK(r.cards[0].verdict == Verdict::pass);
    CHECK(r.cards[1].gpu->id == "h100-sxm");
    CHECK(verdict_of(r.cards[1], "ecc-uncorrected") == Verdict::fail);
    CHECK(verdict_of(r.cards[1], "ecc-corrected") == Verdict::warn);
    CHECK(verdict_of(r.cards[1], "remapped-rows") == Verdict::fail);
  }
  SECTION("an RTX 4090 on an x8 link fails the width check") {
    auto r = inspect_fixture("rtx4090-pcie-x8.csv");
    CHECK(r.verdict == Verdict::fail);
    const auto& c = r.cards[0];
    CHECK(c.gpu->id == "rtx-4090");
    CHECK(verdict_of(c, "pcie-width") == Verdict::fail);
    CHECK(verdict_of(c, "pcie-gen") == Verdict::pass);
    CHECK(verdict_of(c, "persistence-mode") == Verdict::warn);
    CHECK(verdict_of(c, "ecc-mode") == Verdict::pass);  // no ECC on a GeForce card is not a fault
    CHECK(verdict_of(c, "temperature") == Verdict::pass);
  }
  SECTION("a power-capped, hot card on an older driver warns") {
    auto r = inspect_fixture("rtx3090-power-capped.csv");
    CHECK(r.verdict == Verdict::warn);
    const auto& c = r.cards[0];
    CHECK(verdict_of(c, "power-cap") == Verdict::warn);
    CHECK(c.items[static_cast<std::size_t>(
                      std::find_if(c.items.begin(), c.items.end(),
                                   [](const rules::InspectItem& i) { return i.check == "power-cap"; }) -
                      c.items.begin())]
              .message.rfind("capped at 280 W of its default 350 W", 0) == 0);
    CHECK(verdict_of(c, "temperature") == Verdict::warn);  // 86 C, no slowdown threshold captured
    CHECK(verdict_of(c, "throttle") == Verdict::warn);     // software thermal slowdown
  }
  SECTION("a V100 with pages pending retirement fails") {
    auto r = inspect_fixture("v100-retired-pages.csv");
    CHECK(verdict_of(r.cards[0], "retired-pages") == Verdict::fail);
    CHECK(verdict_of(r.cards[0], "ecc-uncorrected") == Verdict::fail);  // 3 aggregate
    CHECK_FALSE(has_item(r.cards[0], "remapped-rows"));
  }
  SECTION("a partial capture says what it could not check") {
    auto r = inspect_fixture("minimal-ecc.csv");
    CHECK(verdict_of(r.cards[0], "capture") == Verdict::warn);
    CHECK(r.cards[0].gpu->id == "a100-40gb-sxm");
  }
  SECTION("a lost GPU fails at once") {
    static const auto cat = catalog::Catalog::load({});
    auto cap = rules::parse_smi_csv(
        "name, pci.bus_id, temperature.gpu\nNVIDIA H100 80GB HBM3, 00000000:18:00.0, [GPU is lost]\n", "lost");
    REQUIRE(cap);
    auto r = rules::inspect(*cap, cat, CompatTable::embedded());
    REQUIRE(r);
    CHECK(verdict_of(r->cards[0], "gpu-lost") == Verdict::fail);
  }
  SECTION("the next steps name real tools, and the schedule does not repaste on a calendar") {
    auto r = inspect_fixture("a100-healthy.csv");
    std::string steps;
    for (const auto& s : r.next_steps) steps += s + "\n";
    CHECK(steps.find("gpu-burn") != std::string::npos);
    CHECK(steps.find("dcgmi diag -r 3") != std::string::npos);
    CHECK(steps.find("stress --gpu") == std::string::npos);
    REQUIRE(r.maintenance.size() == 3);
    CHECK(r.maintenance[1].second.find("not on a calendar") != std::string::npos);
  }
}

TEST_CASE("rules::inspect command", "[inspect]") {
  SECTION("exit 1 on a FAIL item, 0 otherwise, 2 on bad input") {
    CHECK(test::run_cli({"inspect", "--from", test::source_path("tests/fixtures/inspect/h100-ecc.csv")}).code == 1);
    CHECK(test::run_cli({"inspect", "--from", test::source_path("tests/fixtures/inspect/rtx4090-pcie-x8.csv")}).code ==
          1);
    CHECK(test::run_cli({"inspect", "--from", test::source_path("tests/fixtures/inspect/a100-healthy.csv")}).code == 0);
    CHECK(test::run_cli({"inspect", "--from", test::source_path("tests/fixtures/inspect/rtx3090-power-capped.csv")})
              .code == 0);
    auto r = test::run_cli({"inspect", "--from", test::source_path("tests/fixtures/inspect/empty.csv")});
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  SECTION("without --from: nvidia-smi from PATH, with a fixed argument list and no shell") {
    FakeSmi smi(
        "case \"$1\" in --query-gpu=index,name,pci.bus_id,*) ;; *) echo \"bad args: $*\" >&2; exit 9;; esac\n"
        "[ \"$2\" = --format=csv ] && [ $# -eq 2 ] || exit 9\n" +
        print_file("tests/fixtures/inspect/a100-healthy.csv"));
    auto r = test::run_cli({"inspect", "--format", "json"});
    INFO(r.err);
    CHECK(r.code == 0);
    auto j = util::Json::parse(r.out);
    CHECK(j["source"] == "nvidia-smi");
    CHECK(j["gpus"].size() == 2);
  }
  SECTION("an older driver that rejects a field gets the shorter list") {
    FakeSmi smi(
        "case \"$1\" in *tlimit*) echo 'Field \"temperature.gpu.tlimit\" is not a valid field to query.'; exit 2;; "
        "esac\n" +
        print_file("tests/fixtures/inspect/rtx3090-power-capped.csv"));
    auto r = test::run_cli({"inspect"});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("capped at 280 W") != std::string::npos);
  }
  SECTION("nvidia-smi failing, or missing") {
    {
      FakeSmi smi("echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"; exit 9\n");
      auto r = test::run_cli({"inspect"});
      CHECK(r.code == 2);
      CHECK(r.err ==
            "gpuadvisor: error: nvidia-smi exited with status 9: \"NVIDIA-SMI has failed because it couldn't "
            "communicate with "
            "the NVIDIA driver.\"\n");
    }
    FakeSmi none("");
    auto r = test::run_cli({"inspect"});
    CHECK(r.code == 2);
    CHECK(r.err == "gpuadvisor: error: nvidia-smi not found on PATH; use --nvidia-smi PATH or --from FILE\n");
    auto p = test::run_cli({"inspect", "--nvidia-smi", "/nonexistent/nvidia-smi"});
    CHECK(p.code == 2);
    CHECK(
        p.err ==
        "gpuadvisor: error: --nvidia-smi: \"/nonexistent/nvidia-smi\" not found or not executable; use --from FILE\n");
  }
}

TEST_CASE("fit without --gpu fits the GPUs nvidia-smi lists", "[inspect][fit]") {
  SECTION("one kind: that GPU, as many as listed, said above the table and in JSON") {
    FakeSmi smi(print_file("tests/fixtures/inspect/a100-healthy.csv"));
    auto r = test::run_cli({"fit", "--kind", "decoder"});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.out.rfind("Detected by nvidia-smi: 2 x NVIDIA A100 80GB SXM4 (a100-80gb-sxm)\n\n", 0) == 0);
    CHECK(r.out.find("On 2 x NVIDIA A100 80GB SXM4") != std::string::npos);
    auto j = util::Json::parse(test::run_cli({"fit", "--format", "json"}).out);
    CHECK(j["gpu_id"] == "a100-80gb-sxm");
    CHECK(j["count"] == 2);
    CHECK(j["detected"]["count"] == 2);
    CHECK(j["detected"]["not_in_catalog"].empty());
    // --gpus still wins over the count nvidia-smi lists.
    CHECK(util::Json::parse(test::run_cli({"fit", "--gpus", "8", "--format", "json"}).out)["count"] == 8);
  }
  SECTION("cards not in the catalog are left out and named") {
    FakeSmi smi(
        "echo 'name, memory.total [MiB]'; echo 'NVIDIA A100-SXM4-40GB, 40960 MiB'; "
        "echo 'NVIDIA Future Card 9000, 1000 MiB'\n");
    auto r = test::run_cli({"fit", "--kind", "vision"});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(
        r.out.rfind("Detected by nvidia-smi: 1 x NVIDIA A100 40GB SXM4 (a100-40gb-sxm); not in the catalog, left out:\n"
                    "  NVIDIA Future Card 9000\n",
                    0) == 0);
  }
  SECTION("two kinds, none in the catalog, or no nvidia-smi: exit 2 asking for --gpu") {
    {
      FakeSmi smi("echo name; echo 'NVIDIA A100-SXM4-40GB'; echo 'NVIDIA GeForce RTX 4090'\n");
      auto r = test::run_cli({"fit"});
      CHECK(r.code == 2);
      CHECK(r.err ==
            "gpuadvisor: error: nvidia-smi lists more than one kind of GPU (1 x a100-40gb-sxm and 1 x rtx-4090); name "
            "one with --gpu\n");
    }
    {
      FakeSmi smi("echo name; echo 'NVIDIA Future Card 9000'\n");
      auto r = test::run_cli({"fit"});
      CHECK(r.code == 2);
      CHECK(
          r.err ==
          "gpuadvisor: error: nvidia-smi lists 1 GPU (NVIDIA Future Card 9000), none of them in the catalog; name one "
          "with --gpu\n");
    }
    FakeSmi none("");
    auto r = test::run_cli({"fit"});
    CHECK(r.code == 2);
    CHECK(r.err == "gpuadvisor: error: nvidia-smi not found on PATH; use --nvidia-smi PATH or --gpu NAME\n");
  }
}

TEST_CASE("rules::inspect docs", "[inspect]") {
  std::string doc = read("docs/inspect.md");
  SECTION("docs/inspect.md shows the exact --query-gpu list") {
    std::string list;
    for (auto f : rules::smi_query_fields(0)) list += (list.empty() ? "" : ",") + std::string(f);
    CHECK(doc.find("nvidia-smi --query-gpu=" + list + " --format=csv") != std::string::npos);
  }
  SECTION("every check id has a row in the checks table") {
    for (auto id : rules::inspect_checks()) {
      INFO(id);
      CHECK(doc.find("| `" + std::string(id) + "`") != std::string::npos);
    }
  }
}

TEST_CASE("ops::xid log scan: addresses, timestamps, recovery actions, Xid-less messages", "[diagnose]") {
  const auto& table = catalog::XidTable::embedded();
  SECTION("PCI addresses are normalised") {
    CHECK(rules::normalise_pci("0000:3b:00.0") == "0000:3b:00");
    CHECK(rules::normalise_pci("0000:3b:00") == "0000:3b:00");
    CHECK(rules::normalise_pci("PCI:0000:3B:00") == "0000:3b:00");
    CHECK(rules::normalise_pci("00000000:3B:00.0") == "0000:3b:00");
    CHECK(rules::normalise_pci("3b:00.0") == "0000:3b:00");
    CHECK(rules::normalise_pci("0009:1:0") == "0009:01:00");
    CHECK(rules::normalise_pci("0x26:0x56") == "");
    CHECK(rules::normalise_pci("hello") == "");
    auto s =
        rules::scan_xid_log("NVRM: Xid (PCI:0000:3b:00.0): 79, a\nNVRM: Xid (PCI:0000:3b:00): 79, b\n", "x", table);
    REQUIRE(s);
    CHECK(s->gpus == std::vector<std::string>{"0000:3b:00"});
    REQUIRE(s->groups.size() == 1);
    CHECK(s->groups[0].count == 2);
  }
  SECTION("every timestamp style") {
    CHECK(rules::log_timestamp("[ 8123.456810] ") == "8123.456810");
    CHECK(rules::log_timestamp("[Tue Mar  5 03:14:07 2024] ") == "Tue Mar  5 03:14:07 2024");
    CHECK(rules::log_timestamp("2024-03-05T03:14:07,123456+00:00 ") == "2024-03-05T03:14:07,123456+00:00");
    CHECK(rules::log_timestamp("Mar 05 03:14:07 host kernel: ") == "Mar 05 03:14:07");
    CHECK(rules::log_timestamp("Mar  5 03:14:07.123456 host kernel: ") == "Mar  5 03:14:07.123456");
    CHECK(rules::log_timestamp("2024-03-05T03:14:07+0000 host kernel: ") == "2024-03-05T03:14:07+0000");
    CHECK(rules::log_timestamp("Tue 2024-03-05 03:14:07 UTC host kernel: ") == "Tue 2024-03-05 03:14:07 UTC");
    CHECK(rules::log_timestamp("1709608447.123456 host kernel: ") == "1709608447.123456");
    CHECK(rules::log_timestamp("4,1234,8123456810,-;") == "8123.456810");
    CHECK(rules::log_timestamp("<4>Mar  5 03:14:07 host kernel: ") == "Mar  5 03:14:07");
    CHECK(rules::log_timestamp("192.168.11.119: kern: warning: [2026-04-22T21:30:51.870495804Z]: ") ==
          "2026-04-22T21:30:51.870495804Z");
    CHECK(rules::log_timestamp("<4>1 2024-03-05T03:14:07.123Z host kernel - - - ") == "2024-03-05T03:14:07.123Z");
    CHECK(rules::log_timestamp("kern  :warn  : [ 8123.456810] ") == "8123.456810");
    CHECK(rules::log_timestamp("2024-03-05 03:14:07 host kernel: ") == "2024-03-05 03:14:07");
    CHECK(rules::log_timestamp("kernel: ") == "");
  }
  SECTION("an old driver's four-digit bus, and an address elided when posting") {
    auto s = rules::scan_xid_log(
        "NVRM: Xid (0003:00): 8, Channel 00000001\n"
        "NVRM: Xid (PCI:...): 145, pid=2, name=x\n",
        "x", table);
    REQUIRE(s);
    CHECK(s->gpus == std::vector<std::string>{"0000:03:00", "unknown"});
    CHECK(s->events == 2);
    REQUIRE(s->warnings.size() == 1);
    CHECK(s->warnings[0].what ==
          "the PCI address \"PCI:...\" is not like 0000:3b:00: the Xid is counted under an unknown GPU");
  }
  SECTION("Xid 154's stated recovery action sets its severity") {
    auto s = rules::scan_xid_log(
        "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)\n"
        "NVRM: Xid (PCI:0000:02:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)\n",
        "x", table);
    REQUIRE(s);
    REQUIRE(s->groups.size() == 2);
    CHECK(s->critical == 1);
    CHECK(s->groups[0].pci == "0000:01:00");
    CHECK(s->groups[0].label == "GPU Reset Required");
    CHECK(s->groups[1].severity == catalog::XidSeverity::info);
    CHECK(s->groups[1].label == "None");
  }
  SECTION("resets are critical: 109, 119, 120, and every RESET_GPU or worse in NVIDIA's catalog") {
    for (int code : {46, 109, 119, 120, 136, 143, 151, 155, 156, 158}) {
      INFO(code);
      REQUIRE(table.find(code));
      CHECK(table.find(code)->severity == catalog::XidSeverity::critical);
    }
    for (const auto& x : table.all()) {
      INFO(x.code);
      if (x.immediate_action == "RESET_GPU" || x.immediate_action == "RESTART_BM" || x.immediate_action == "RESTART_VM")
        CHECK(x.severity == catalog::XidSeverity::critical);
    }
    for (int code = 143; code <= 161; ++code) {
      INFO(code);
      if (code != 152 && code != 153) CHECK(table.find(code));
    }
    CHECK(table.find(51));
    CHECK(table.find(137)->mnemonic == "NVLINK_FLA_PRIV_ERR");
  }
  SECTION("the Xid-less 'fallen off the bus' message of newer drivers") {
    auto s = rules::scan_xid_log("[30709.1] NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.\n", "x", table);
    REQUIRE(s);
    REQUIRE(s->groups.size() == 1);
    CHECK(s->groups[0].code == 0);
    REQUIRE(s->groups[0].log_message);
    CHECK(s->groups[0].log_message->id == "fallen-off-the-bus");
    CHECK(s->groups[0].pci == "0000:01:00");
    CHECK(s->critical == 1);
  }
}

TEST_CASE("rules::inspect identifies cards exactly, reads captures without a header, names the command", "[inspect]") {
  static const auto cat = catalog::Catalog::load({});
  const auto& compat = CompatTable::embedded();
  auto gpu_of = [&](const std::string& name, const std::string& mib) -> std::string {
    auto c = rules::parse_smi_csv("name, memory.total [MiB]\n" + name + ", " + mib + " MiB\n", "x.csv");
    REQUIRE(c);
    auto r = rules::inspect(*c, cat, compat);
    REQUIRE(r);
    return r->cards[0].gpu ? r->cards[0].gpu->id : "not in the catalog";
  };
  SECTION("cards that share words with a catalog card are not taken for it") {
    CHECK(gpu_of("Quadro RTX 4000", "8192") != "rtx-4000-ada");
    CHECK(gpu_of("NVIDIA H20", "97871") != "h200");
    CHECK(gpu_of("NVIDIA GeForce RTX 4060 Ti", "8188") != "rtx-4060-ti-16gb");
    CHECK(gpu_of("NVIDIA GeForce RTX 4060 Ti", "16380") == "rtx-4060-ti-16gb");
    CHECK(gpu_of("NVIDIA A100-SXM4-80GB", "81920") == "a100-80gb-sxm");
    CHECK(gpu_of("NVIDIA H100 80GB HBM3", "81559") == "h100-sxm");
    CHECK(gpu_of("Tesla V100-SXM2-32GB", "32768") == "v100-sxm2-32gb");
  }
  SECTION("the PCI device id identifies the card first, then the exact name") {
    CHECK(rules::parse_pci_device_id("0x268410DE") == "0x2684");
    CHECK(rules::parse_pci_device_id("0x1eb110de") == "0x1eb1");
    CHECK_FALSE(rules::parse_pci_device_id("0x744c1002"));  // AMD's vendor id
    CHECK_FALSE(rules::parse_pci_device_id("0x2684"));
    auto card = [&](const std::string& name, const std::string& device, const std::string& mib) {
      auto c = rules::parse_smi_csv(
          "name, pci.device_id, memory.total [MiB]\n" + name + ", " + device + ", " + mib + " MiB\n", "d.csv");
      REQUIRE(c);
      auto r = rules::inspect(*c, cat, compat);
      REQUIRE(r);
      return r->cards[0];
    };
    auto identify = [](const rules::CardReport& c) {
      for (const auto& i : c.items)
        if (i.check == "identify") return i;
      return rules::InspectItem{};
    };
    // Turing's Quadro RTX 4000 (pci.ids 0x1eb1), whatever the name says.
    auto quadro = card("Quadro RTX 4000", "0x1EB110DE", "7982");
    REQUIRE(quadro.gpu);
    CHECK(quadro.gpu->id == "quadro-rtx-4000");
    CHECK(quadro.pci_device_id == "0x1eb1");
    CHECK(identify(quadro).message == "NVIDIA Quadro RTX 4000 (quadro-rtx-4000, turing), by its PCI device 0x1eb1");
    // The id names the board: an RTX 4090 D (0x2685) reporting the plain 4090's name is the 4090 D.
    CHECK(card("NVIDIA GeForce RTX 4090", "0x268510DE", "24564").gpu->id == "rtx-4090d");
    // One id, two memory sizes (pci.ids 0x2803 and the thamada/gls capture): the memory decides; the
    // 8 GB card is not in the catalog.
    CHECK(card("NVIDIA GeForce RTX 4060 Ti", "0x280310DE", "16380").gpu->id == "rtx-4060-ti-16gb");
    auto eight = card("NVIDIA GeForce RTX 4060 Ti", "0x280310DE", "8188");
    CHECK_FALSE(eight.gpu);
    CHECK(identify(eight).message ==
          "\"NVIDIA GeForce RTX 4060 Ti\" (PCI device 0x2803) is not in the catalog: card-specific checks skipped "
          "(add it with --catalog FILE)");
    CHECK(card("NVIDIA RTX PRO 5000 Blackwell", "0x2BB310DE", "48935").gpu->id == "rtx-pro-5000-blackwell");
    CHECK(card("NVIDIA RTX PRO 5000 72GB Blackwell", "0x2BB310DE", "73400").gpu->id == "rtx-pro-5000-blackwell-72gb");
    // A card with its memory changed keeps its id: the name decides, the memory check says so.
    auto modded = card("NVIDIA GeForce RTX 4090", "0x268410DE", "49140");
    CHECK(modded.gpu->id == "rtx-4090");
    CHECK(std::any_of(modded.items.begin(), modded.items.end(),
                      [](const auto& i) { return i.check == "memory-size" && i.verdict == rules::Verdict::warn; }));
    // Named like a catalog card but a device id no card has: another board.
    auto other = card("NVIDIA GeForce RTX 4090", "0x2FFF10DE", "24564");
    CHECK(identify(other).verdict == rules::Verdict::warn);
    CHECK(identify(other).message ==
          "\"NVIDIA GeForce RTX 4090\" is named like the NVIDIA GeForce RTX 4090 (rtx-4090), but its PCI device 0x2fff "
          "is not that card's (0x2684) nor any catalog card's: a board the catalog does not list; checks use the "
          "rtx-4090");
    auto bad = rules::parse_smi_csv("name, pci.device_id\nNVIDIA GeForce RTX 4090, 0x2684\n", "b.csv");
    REQUIRE(bad);
    auto rep = rules::inspect(*bad, cat, compat);
    REQUIRE_FALSE(rep);
    CHECK(rep.error() ==
          "b.csv:2: field 'pci.device_id': expected an NVIDIA PCI device id such as 0x268410DE, got \"0x2684\"");
  }
  SECTION("header-less lists with and without pci.device_id of the same length are told apart") {
    // The query without mig.mode.* (34 fields) and an older one without pci.device_id but with
    // the mig fields, without temperature.gpu.tlimit (34 too).
    auto row_of = [](std::vector<std::string_view> fields) {
      std::string row;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) row += ", ";
        row += fields[i] == "name"            ? "NVIDIA A100-SXM4-80GB"
               : fields[i] == "memory.total"  ? "81920 MiB"
               : fields[i] == "pci.device_id" ? "0x20B210DE"
               : fields[i] == "serial"        ? "1564720004631"
                                              : "[N/A]";
      }
      return row + "\n";
    };
    auto with_device = rules::smi_query_fields(0);
    std::erase_if(with_device, [](std::string_view f) { return f.starts_with("mig.mode."); });
    auto without = rules::smi_query_fields(1);
    std::erase_if(without, [](std::string_view f) { return f == "pci.device_id"; });
    REQUIRE(with_device.size() == without.size());
    auto a = rules::parse_smi_csv(row_of(with_device), "a.csv");
    REQUIRE(a);
    CHECK(*a->cell(a->rows[0], "pci.device_id") == "0x20B210DE");
    CHECK(*a->cell(a->rows[0], "serial") == "1564720004631");
    auto b = rules::parse_smi_csv(row_of(without), "b.csv");
    REQUIRE(b);
    CHECK(b->cell(b->rows[0], "pci.device_id") == nullptr);
    CHECK(*b->cell(b->rows[0], "serial") == "1564720004631");
    CHECK(*b->cell(b->rows[0], "mig.mode.current") == "[N/A]");
  }
  SECTION("a csv,noheader capture of the documented field list is read, and said so") {
    auto fields = rules::smi_query_fields(0);
    std::string row;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i) row += ", ";
      row += fields[i] == "name" ? "NVIDIA A100-SXM4-80GB" : fields[i] == "memory.total" ? "81920 MiB" : "[N/A]";
    }
    auto c = rules::parse_smi_csv(row + "\n" + row + "\n", "nh.csv");
    REQUIRE(c);
    CHECK_FALSE(c->has_header);
    CHECK(c->rows.size() == 2);
    CHECK(*c->cell(c->rows[0], "name") == "NVIDIA A100-SXM4-80GB");
  }
  SECTION("a capture without a header of another field list: the cells told by their look") {
    auto c = rules::parse_smi_csv(read("tests/fixtures/inspect/no-header.csv"), "no-header.csv");
    REQUIRE(c);
    CHECK(c->guessed_columns);
    CHECK_FALSE(c->has_header);
    CHECK(c->fields == std::vector<std::string>{"column.1", "name", "pci.bus_id", "column.4", "driver_version"});
    // Of several MiB cells (used, free, total) the largest is the total.
    auto m = rules::parse_smi_csv("NVIDIA A100-SXM4-80GB, 4 MiB, 81920 MiB, 81916 MiB\n", "m.csv");
    REQUIRE(m);
    CHECK(*m->cell(m->rows[0], "memory.total") == "81920 MiB");
  }
  SECTION("a power limit without its default is judged against the card's rated power") {
    auto item = [&](const std::string& text) {
      auto c = rules::parse_smi_csv(text, "p.csv");
      REQUIRE(c);
      auto r = rules::inspect(*c, cat, compat);
      REQUIRE(r);
      for (const auto& i : r->cards[0].items)
        if (i.check == "power-cap") return i;
      return rules::InspectItem{};
    };
    auto capped = item(
        "name, power.limit [W], power.default_limit [W]\nNVIDIA GeForce RTX 2080 Ti, 210.00 W, [Unknown "
        "Error]\n");
    CHECK(capped.verdict == rules::Verdict::warn);
    CHECK(capped.message ==
          "capped at 210 W of the 250 W NVIDIA GeForce RTX 2080 Ti is rated for (the default limit reads \"[Unknown "
          "Error]\"): someone ran 'nvidia-smi -pl', or a lower-power variant");
    auto rated = item("name, power.limit [W]\nNVIDIA GeForce RTX 4090, 450.00 W\n");
    CHECK(rated.verdict == rules::Verdict::pass);
    CHECK(
        rated.message ==
        "power limit 450 W, the 450 W NVIDIA GeForce RTX 4090 is rated for (the default limit is not in the capture)");
  }
  SECTION("table and -q outputs without a GPU in them name the command to capture with") {
    auto t = rules::parse_smi_csv("+-----------------------------------------------------------------------------+\n",
                                  "t.txt");
    REQUIRE_FALSE(t);
    CHECK(t.error() == "t.txt: nvidia-smi's table output with no GPU in it (cut short?); capture with: " +
                           rules::smi_query_command());
    auto q = rules::parse_smi_csv("\n==============NVSMI LOG==============\n\nTimestamp : Mon\n", "q.txt");
    REQUIRE_FALSE(q);
    CHECK(q.error() ==
          "q.txt: nvidia-smi's -q output with no GPU in it (cut short?); capture with: " + rules::smi_query_command());
  }
  SECTION("MIG mode against the GPU's own record: a pending change, a card without MIG, the instances") {
    auto mig_items = [&](const std::string& row) {
      auto c = rules::parse_smi_csv("name, memory.total [MiB], mig.mode.current, mig.mode.pending\n" + row + "\n",
                                    "mig.csv");
      REQUIRE(c);
      auto r = rules::inspect(*c, cat, compat);
      REQUIRE(r);
      std::vector<rules::InspectItem> out;
      for (const auto& i : r->cards[0].items)
        if (i.check == "mig") out.push_back(i);
      return out;
    };
    auto on = mig_items("NVIDIA A100-SXM4-80GB, 81920 MiB, Enabled, Enabled");
    REQUIRE(on.size() == 1);
    CHECK(on[0].verdict == Verdict::pass);
    CHECK(on[0].message ==
          "MIG mode is enabled (up to 7 instances): CUDA programs see the MIG instances, not the whole GPU (nvidia-smi "
          "mig "
          "-lgi lists them)");
    auto pending = mig_items("NVIDIA H100 80GB HBM3, 81559 MiB, Disabled, Enabled");
    REQUIRE(pending.size() == 1);
    CHECK(pending[0].verdict == Verdict::warn);
    CHECK(pending[0].message.find("MIG mode is disabled but enabled is pending") == 0);
    auto geforce = mig_items("NVIDIA GeForce RTX 4090, 24564 MiB, Enabled, Enabled");
    REQUIRE(geforce.size() == 1);
    CHECK(geforce[0].verdict == Verdict::warn);
    CHECK(geforce[0].message.find("the catalog's rtx-4090 has no MIG") != std::string::npos);
    CHECK(mig_items("NVIDIA GeForce RTX 4090, 24564 MiB, [N/A], [N/A]").empty());  // no MIG, nothing to say
    // A capture without a header from before the mig.mode.* fields (33 values) is still read.
    auto lines = util::split(read("tests/fixtures/inspect/a100-healthy.csv"), '\n');
    auto old_capture = rules::parse_smi_csv(lines.at(1) + "\n", "old.csv");
    REQUIRE(old_capture);
    CHECK_FALSE(old_capture->has_header);
    CHECK(old_capture->fields.size() == 33);
    auto off = mig_items("NVIDIA A100-SXM4-80GB, 81920 MiB, Disabled, Disabled");
    REQUIRE(off.size() == 1);
    CHECK(off[0].message == "MIG mode is disabled; this GPU supports MIG (up to 7 instances)");
  }
  SECTION("the remapped-row counters captured but not reported are a WARN, not a silent pass") {
    auto c = rules::parse_smi_csv(
        "name, memory.total [MiB], mig.mode.current, remapped_rows.correctable, remapped_rows.uncorrectable, "
        "remapped_rows.pending, remapped_rows.failure\n"
        "NVIDIA A100-SXM4-80GB, 81920 MiB, Enabled, [N/A], [N/A], [N/A], [N/A]\n",
        "mig.csv");
    REQUIRE(c);
    auto r = rules::inspect(*c, cat, compat);
    REQUIRE(r);
    bool warned = false;
    for (const auto& i : r->cards[0].items)
      if (i.check == "remapped-rows") {
        warned = i.verdict == rules::Verdict::warn && i.message.find("MIG mode is enabled") != std::string::npos;
      }
    CHECK(warned);
  }
}

// tests/fixtures/real/logs: kernel-log excerpts from public issues, each with the worst severity and
// exit code written in SOURCES from reading the lines.
TEST_CASE("real kernel logs give the expected worst severity and exit code", "[diagnose][real]") {
  const auto& table = catalog::XidTable::embedded();
  std::istringstream sources(read("tests/fixtures/real/logs/SOURCES"));
  std::string line;
  std::set<std::string> listed;
  while (std::getline(sources, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto cells = util::split(line, '|');
    REQUIRE(cells.size() == 6);
    std::string file = util::trim(cells[0]), severity = util::trim(cells[3]);
    int exit = std::stoi(util::trim(cells[4]));
    const auto warnings = static_cast<std::size_t>(std::stoi(util::trim(cells[5])));
    INFO(file);
    CHECK(util::starts_with(util::trim(cells[1]), "https://"));
    listed.insert(file);
    auto s = rules::scan_xid_log(read("tests/fixtures/real/logs/" + file), file, table);
    REQUIRE(s);
    CHECK(s->warnings.size() == warnings);
    CHECK((s->critical ? 1 : 0) == exit);
    if (severity == "none") {
      CHECK(s->groups.empty());
      continue;
    }
    REQUIRE_FALSE(s->groups.empty());
    CHECK(s->groups[0].severity);
    CHECK(std::string(catalog::name(s->groups[0].severity.value_or(catalog::XidSeverity::info))) == severity);
  }
  for (const auto& e : std::filesystem::directory_iterator(test::source_path("tests/fixtures/real/logs"))) {
    auto name = e.path().filename().string();
    if (name == "SOURCES") continue;
    INFO(name);
    CHECK(listed.count(name));
  }
  CHECK(listed.size() >= 24);
}

TEST_CASE("rules::inspect and the log scan never crash on damaged input", "[inspect][diagnose]") {
  static const auto cat = catalog::Catalog::load({});
  const auto& compat = CompatTable::embedded();
  const auto& xids = catalog::XidTable::embedded();
  std::string csv = read("tests/fixtures/inspect/h100-ecc.csv");
  std::string log = read("tests/fixtures/logs/journal-xid.log");
  // Every truncation, and bytes replaced with punctuation, digits and garbage at a fixed stride.
  std::vector<std::string> inputs;
  for (std::size_t n = 0; n <= csv.size(); n += 3) inputs.push_back(csv.substr(0, n));
  const std::string junk = ",[]x9\xff\t -.";
  for (std::size_t i = 0; i < csv.size(); i += 7) {
    std::string m = csv;
    m[i] = junk[i % junk.size()];
    inputs.push_back(m);
  }
  std::size_t ok = 0;
  for (const auto& in : inputs) {
    auto c = rules::parse_smi_csv(in, "fuzz.csv");
    if (!c) continue;
    auto r = rules::inspect(*c, cat, compat);
    if (r)
      ++ok;
    else
      CHECK(r.error().rfind("fuzz.csv:", 0) == 0);
  }
  CHECK(ok > 0);
  for (std::size_t n = 0; n <= log.size(); n += 5) {
    auto s = rules::scan_xid_log(log.substr(0, n), "fuzz.log", xids);
    if (!s) CHECK(s.error().rfind("fuzz.log:", 0) == 0);
  }
}

// tests/fixtures/real/nvidia-smi: captures from public repositories and issues (SOURCES names
// each one's origin, its shape and the card it must be identified as, card by card).
TEST_CASE("real nvidia-smi captures identify the right card or say they cannot", "[inspect][real]") {
  static const auto cat = catalog::Catalog::load({});
  const auto& compat = catalog::CompatTable::embedded();
  std::istringstream sources(read("tests/fixtures/real/nvidia-smi/SOURCES"));
  std::string line;
  std::set<std::string> listed, shapes;
  while (std::getline(sources, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto cells = util::split(line, '|');
    REQUIRE(cells.size() == 4);
    const std::string file = util::trim(cells[0]), shape = util::trim(cells[2]), expected = util::trim(cells[3]);
    INFO(file);
    CHECK(util::starts_with(util::trim(cells[1]), "https://"));
    listed.insert(file);
    shapes.insert(shape);
    auto cap = rules::parse_smi_csv(read("tests/fixtures/real/nvidia-smi/" + file), file);
    if (util::starts_with(expected, "refused: ")) {
      REQUIRE_FALSE(cap);
      CHECK(cap.error().find(expected.substr(9)) != std::string::npos);
      continue;
    }
    REQUIRE(cap);
    const auto want_shape = shape == "table"   ? rules::SmiShape::table
                            : shape == "query" ? rules::SmiShape::query
                                               : rules::SmiShape::csv;
    CHECK(cap->shape == want_shape);
    CHECK(cap->has_header == (shape != "csv-noheader"));
    auto rep = rules::inspect(*cap, cat, compat);
    REQUIRE(rep);
    std::vector<std::string> got;
    for (const auto& c : rep->cards)
      got.push_back(c.gpu ? c.gpu->id : util::ends_with(c.name, "...") ? "cut-short" : "not-in-catalog");
    std::vector<std::string> want;
    for (const auto& part : util::split(expected, ',')) {
      std::string p = util::trim(part);
      int n = 1;
      if (auto x = p.find(" x "); x != std::string::npos) {
        n = std::stoi(p.substr(x + 3));
        p = p.substr(0, x);
      }
      for (int i = 0; i < n; ++i) want.push_back(p);
    }
    CHECK(got == want);
  }
  for (const auto& e : std::filesystem::directory_iterator(test::source_path("tests/fixtures/real/nvidia-smi"))) {
    auto name = e.path().filename().string();
    if (name == "SOURCES") continue;
    INFO(name);
    CHECK(listed.count(name));
  }
  CHECK(listed.size() >= 20);
  CHECK(shapes == std::set<std::string>{"csv-header", "csv-noheader", "table", "query"});
}
