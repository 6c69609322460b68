// The host a plan goes into (estimate/platform.h), on the shipped data/platforms.json.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "cli_fixture.h"
#include "gpuadvisor/catalog/source.h"
#include "gpuadvisor/estimate/platform.h"
#include "gpuadvisor/rules/recommend.h"
#include "gpuadvisor/util/units.h"
#include "test_data.h"

using namespace gpuadvisor;
using estimate::HostProblem;

namespace {
estimate::Host host(const char* gpu, int count) {
  return estimate::host_for(*test::gpus().find(gpu), count, test::prices());
}
}  // namespace

TEST_CASE("platform: one PCIe card goes into the buyer's computer; whole systems are planned alone", "[platform]") {
  auto one = host("rtx-5070-ti", 1);
  CHECK_FALSE(one.needed);
  CHECK(one.fits());
  CHECK(estimate::describe(one, *test::gpus().find("rtx-5070-ti"), 1) ==
        "one card goes into a computer you have (not priced)");
  CHECK(host("dgx-spark", 1).fits());
  CHECK(host("dgx-spark", 2).problem == HostProblem::whole_system);
  CHECK(host("jetson-agx-thor", 2).problem == HostProblem::whole_system);
}

TEST_CASE("platform: several PCIe cards get the cheapest priced host that takes and powers them", "[platform]") {
  // Two 300 W cards: the 2-GPU workstation (1,440 W circuit), priced at its itemised 2026-05 build.
  auto two = host("rtx-5070-ti", 2);
  REQUIRE(two.fits());
  CHECK(two.platform->id == "workstation-2gpu-1600w");
  CHECK(two.price_usd == Approx(1980));
  // Four 600 W cards: 2,400 W is over the 2-GPU workstation's circuit, within the 4-GPU one's 4,000 W.
  auto four = host("rtx-pro-6000-blackwell", 4);
  REQUIRE(four.fits());
  CHECK(four.platform->id == "workstation-4gpu");
  // Eight 575 W cards: only the 8-slot 4U server (8,000 W of supplies).
  auto eight = host("rtx-5090", 8);
  REQUIRE(eight.fits());
  CHECK(eight.platform->id == "server-8gpu-pcie-4u");
  CHECK(eight.boxes == 1);
  // Passively cooled datacenter cards go into servers only.
  auto l40s = host("l40s", 2);
  REQUIRE(l40s.fits());
  CHECK(l40s.platform->kind == "server");
  // More cards than any platform takes.
  auto nine = host("rtx-5090", 9);
  CHECK(nine.problem == HostProblem::no_slots);
  CHECK(estimate::describe(nine, *test::gpus().find("rtx-5090"), 9) ==
        "no workstation or server in data/platforms.json takes 9 x rtx-5090 (the largest takes 8)");
}

TEST_CASE("platform: SXM and OAM GPUs need their baseboard system, whatever the count", "[platform]") {
  auto h100 = host("h100-sxm", 2);
  REQUIRE(h100.fits());
  CHECK(h100.platform->id == "hgx-h100");
  CHECK(h100.price_includes_gpus);
  CHECK(h100.price_usd == Approx(199000));
  CHECK(h100.power_w == Approx(4600));
  auto sixteen = host("h100-sxm", 16);
  CHECK(sixteen.boxes == 2);
  CHECK(sixteen.price_usd == Approx(2 * 199000));
  CHECK(host("mi300x", 8).problem == HostProblem::no_baseboard);
}

TEST_CASE("platform: a user's platform replaces the shipped one by id", "[platform]") {
  const std::string path = "/tmp/gpuadvisor-test-platforms.json";
  std::ofstream(path)
      << R"({"platforms": [{"id": "workstation-2gpu-1600w", "kind": "workstation", "form_factor": "pcie",
    "gpu_slots": 2, "system_max_power_w": 1440, "host_power_w": 400, "price_usd": 2500,
    "price_source": {"title": "my quote", "url": "https://example.com/q"}, "price_as_of": "2026-11"}]})";
  auto p = catalog::Prices::load({path});
  const auto& gpu = *test::gpus().find("rtx-5090");
  // 2 x 575 W + 400 W host = 1,550 W: over the 1,440 W circuit; the 4-GPU workstation takes them.
  auto h = estimate::host_for(gpu, 2, p);
  REQUIRE(h.fits());
  CHECK(h.platform->id == "workstation-4gpu");
  std::ofstream("/tmp/gpuadvisor-test-bad-platform.json")
      << R"({"platforms": [{"id": "x", "kind": "desk", "form_factor": "pcie", "gpu_slots": 2}]})";
  auto bad = test::run_cli({"cost", "--model", "7B", "--gpu", "rtx-5090", "--gpus", "2", "--prices",
                            "/tmp/gpuadvisor-test-bad-platform.json"});
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "gpuadvisor: error: /tmp/gpuadvisor-test-bad-platform.json:1: field 'kind': expected one of workstation, "
        "server, hgx, got \"desk\"\n");
}

TEST_CASE("market: a price more than 12 months old is named in every output that uses it", "[market]") {
  CHECK_FALSE(catalog::stale_price("street price", 749, "2026-01", "2026-12-02"));
  CHECK(catalog::stale_price("street price", 749, "2025-11", "2026-12-02") == "street price $749 from 2025-11");
  CHECK(catalog::stale_price("price", 199000, "2024", "2026-12-02") == "price $199,000 from 2024");
  CHECK(catalog::stale_price("price", 5, "", "2026-12-02") == "price $5 with no date");
  ::setenv("GPUADVISOR_TODAY", "2026-12-02", 1);
  auto cost = test::run_cli({"cost", "--model", "7B", "--gpu", "rtx-5090", "--gpus", "8", "--hours", "100", "--region",
                             "cn", "--format", "json"});
  REQUIRE(cost.code == 0);
  auto j = util::Json::parse(cost.out);
  CHECK(j["stale_prices"] ==
        util::Json::parse(
            R"(["host server-8gpu-pcie-4u: price $12,000 from 2025-05", "electricity $0.09 from 2024-03 per kWh"])"));
  CHECK(j["host"]["platform_id"] == "server-8gpu-pcie-4u");
  auto rec = test::run_cli({"recommend", "--model", "llama-3.1-70b", "--task", "lora", "--budget", "400000",
                            "--scenario", "datacenter", "--gpu", "h100-sxm", "--format", "json"});
  REQUIRE(rec.code == 0);
  auto r = util::Json::parse(rec.out);
  CHECK(r["plans"][0]["gpu_id"] == "h100-sxm");
  CHECK(r["plans"][0]["price_kind"] == "system");
  bool flagged = false;
  for (const auto& s : r["stale_prices"])
    flagged = flagged || s.get<std::string>() == "host hgx-h100: price $199,000 from 2024";
  CHECK(flagged);
  ::unsetenv("GPUADVISOR_TODAY");
}

TEST_CASE("market: --region picks a dated electricity price; a region without a USD figure is exit 2", "[market]") {
  auto eu = test::run_cli({"cost", "--model", "7B", "--gpu", "rtx-5090", "--hours", "10", "--region", "eu"});
  CHECK(eu.code == 2);
  CHECK(eu.err ==
        "gpuadvisor: error: --region eu: no USD price per kWh is published in the data (EUR 0.1902/kWh as published); "
        "give --kwh-price\n");
  auto typo = test::run_cli({"cost", "--model", "7B", "--gpu", "rtx-5090", "--hours", "10", "--region", "xx"});
  CHECK(typo.code == 2);
  CHECK(typo.err == "gpuadvisor: error: --region: unknown region \"xx\" (known: us, eu, cn, uk)\n");
  auto cn = test::run_cli({"cost", "--model", "7B", "--gpu", "rtx-5090", "--hours", "10", "--region", "CN"});
  CHECK(cn.code == 0);
  CHECK(cn.out.find("$0.09/kWh (region cn, business, as of 2024-03)") != std::string::npos);
}

TEST_CASE(
    "market: --quotes prices a GPU or a whole system for one run; a bad file is exit 2 naming file:line and field",
    "[market]") {
  const std::string q = test::source_path("docs/examples/quotes.csv");
  auto one =
      test::run_cli({"cost", "--model", "7B", "--gpu", "rtx-5090", "--hours", "10", "--quotes", q, "--format", "json"});
  REQUIRE(one.code == 0);
  auto j = util::Json::parse(one.out);
  CHECK(j["price_kind"] == "quote");
  CHECK(j["purchase_usd"] == 2899);
  auto sys = test::run_cli({"cost", "--model", "7B", "--gpu", "h100-sxm", "--gpus", "8", "--hours", "10", "--quotes", q,
                            "--format", "json"});
  REQUIRE(sys.code == 0);
  auto s = util::Json::parse(sys.out);
  CHECK(s["purchase_usd"] == 280000);
  CHECK(s["host"]["platform_id"] == "quote-8x-h100-sxm");
  CHECK(s["host"]["price_includes_gpus"] == true);
  auto rec = test::run_cli({"recommend", "--model", "llama-3.1-70b", "--task", "qlora", "--budget", "300000",
                            "--scenario", "datacenter", "--quotes", q, "--format", "json"});
  REQUIRE(rec.code == 0);
  auto r = util::Json::parse(rec.out);
  CHECK(r["plans"][0]["gpu_id"] == "h100-sxm");
  CHECK(r["plans"][0]["total_price_usd"] == 280000);
  auto typo = test::run_cli({"cost", "--model", "7B", "--gpu", "rtx-5090", "--hours", "10", "--quotes",
                             test::source_path("tests/fixtures/quotes/typo.csv")});
  CHECK(typo.code == 2);
  CHECK(typo.err.find("typo.csv:2: gpu: unknown GPU \"rtx-5909\", did you mean 'rtx-5090'?") != std::string::npos);
  const std::string bad = "/tmp/gpuadvisor-test-quotes.json";
  std::ofstream(bad)
      << R"({"quotes": [{"gpu": "h100-sxm", "count": 8, "price_usd": [1], "vendor": "Y", "date": "2026-11"}]})";
  auto b = test::run_cli({"cost", "--model", "7B", "--gpu", "h100-sxm", "--hours", "10", "--quotes", bad});
  CHECK(b.code == 2);
  CHECK(b.err ==
        "gpuadvisor: error: /tmp/gpuadvisor-test-quotes.json:1: field 'price_usd': expected a number or a string, got "
        "[1]\n");
  // A CSV line of a million commas is refused at the 65th field, not split into a million strings.
  const std::string wide = "/tmp/gpuadvisor-test-quotes-wide.csv";
  std::ofstream(wide) << std::string(1'000'000, ',') << "\n";
  auto w = test::run_cli({"cost", "--model", "7B", "--gpu", "h100-sxm", "--hours", "10", "--quotes", wide});
  CHECK(w.code == 2);
  CHECK(w.err ==
        "gpuadvisor: error: /tmp/gpuadvisor-test-quotes-wide.csv:1: more than 64 fields on the line (a quote has "
        "gpu, price_usd, vendor, date and count)\n");
}

TEST_CASE("check: a --disable or --warnings-as-errors glob that matches no check rule is exit 2", "[check][cli]") {
  const std::string spec = test::source_path("docs/examples/rtx4090-datacenter.json");
  auto off = test::run_cli({"check", spec, "--disable", "nosuchrule"});
  CHECK(off.code == 2);
  CHECK(off.err ==
        "gpuadvisor: error: --disable: \"nosuchrule\" matches no check rule (gpuadvisor check --list-rules)\n");
  auto typo = test::run_cli({"check", spec, "--warnings-as-errors", "qoute-*"});
  CHECK(typo.code == 2);
  CHECK(typo.err ==
        "gpuadvisor: error: --warnings-as-errors: \"qoute-*\" matches no check rule, did you mean 'quote-*'? "
        "(gpuadvisor check --list-rules)\n");
  auto near = test::run_cli({"check", spec, "--disable", "no-ecc-production-trainin"});
  CHECK(near.code == 2);
  CHECK(near.err.find("did you mean 'no-ecc-production-training'?") != std::string::npos);
  CHECK(test::run_cli({"check", spec, "--warnings-as-errors", "quote-*,-quote-over-street"}).code != 2);
  // QLoRA in data parallelism all-reduces only the adapters: no PCIe warning for it.
  CHECK(test::run_cli({"check", spec}).out.find("multi-gpu-training-no-nvlink") == std::string::npos);
}

TEST_CASE("recommend: hourly rates keep cents and thousands separators", "[recommend]") {
  CHECK(util::format_rate(2.69) == "$2.69/h");
  CHECK(util::format_cents(0.452) == "$0.45");
  CHECK(util::format_cents(1234567.891) == "$1,234,567.89");
  CHECK(util::format_rate(1832.956) == "$1,832.96/h");
  CHECK(util::format_rate(13.78) == "$13.78/h");
  CHECK(util::format_rate(0.5) == "$0.50/h");
}

TEST_CASE("check --format junit: a warning fails the report only when it fails the run", "[check][cli]") {
  const std::string spec = test::source_path("docs/examples/rtx4090-datacenter.json");
  const std::string warn = "<testcase name=\"no-ecc-production-training\"";
  auto plain = test::run_cli({"check", spec, "--format", "junit"});
  auto at = plain.out.find(warn);
  REQUIRE(at != std::string::npos);
  CHECK(plain.out.compare(plain.out.find('\n', at) + 1, 18, "      <system-out>") == 0);
  auto strict = test::run_cli({"check", spec, "--format", "junit", "--fail-on", "warning"});
  at = strict.out.find(warn);
  REQUIRE(at != std::string::npos);
  CHECK(strict.out.compare(strict.out.find('\n', at) + 1, 16, "      <failure m") == 0);
  CHECK(strict.code == 1);
}

TEST_CASE("memory JSON: byte counts are whole bytes; kept_free_bytes is the share the headroom keeps",
          "[memory][cli]") {
  auto r = test::run_cli({"memory", "--model", "10B", "--gpu", "rtx-5090", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto g = util::Json::parse(r.out)["gpu"];
  CHECK(g["usable_bytes"].is_number_integer());
  CHECK(g["spare_bytes"].is_number_integer());
  // 32 GiB with 10% kept free.
  CHECK(g["kept_free_bytes"].get<std::int64_t>() == 34359738368 - g["usable_bytes"].get<std::int64_t>());
  CHECK(g["usable_bytes"].get<std::int64_t>() == 30923764531);
}

TEST_CASE("cli: a flag given twice and a negative electricity price get errors about themselves", "[cli]") {
  auto twice = test::run_cli({"recommend", "--model", "7B", "--budget", "3000", "--budget", "4000"});
  CHECK(twice.code == 2);
  CHECK(twice.err == "gpuadvisor: error: --budget: given 2 times; give it once\n");
  auto neg = test::run_cli({"cost", "--model", "7B", "--gpu", "rtx-5090", "--hours", "10", "--kwh-price", "-1"});
  CHECK(neg.code == 2);
  CHECK(neg.err ==
        "gpuadvisor: error: --kwh-price: expected a price per kWh in USD above 0, like 0.15 or $0.15, got \"-1\"\n");
}

TEST_CASE("cli: --help names what each flag takes, never CLI11's TEXT", "[cli]") {
  for (const char* cmd :
       {"recommend", "memory", "estimate", "cost", "compare", "fit", "check", "inspect", "diagnose", "compat"}) {
    INFO(cmd);
    auto r = test::run_cli({cmd, "--help"});
    CHECK(r.out.find(" TEXT") == std::string::npos);
  }
  CHECK(test::run_cli({"recommend", "--help"}).out.find("  --top N ") != std::string::npos);
  CHECK(test::run_cli({"recommend", "--help"}).out.find("  --task TASK ") != std::string::npos);
}
