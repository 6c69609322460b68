// The host a plan goes into (estimate/platform.h), on the shipped data/platforms.json.
#include <catch2/catch.hpp>

#include <fstream>

#include "gpuadvisor/estimate/platform.h"
#include "cli_fixture.h"
#include "test_data.h"

using namespace gpuadvisor;
using estimate::HostProblem;

namespace {
estimate::Host host(const char* gpu, int count) { return estimate::host_for(*test::gpus().find(gpu), count, test::prices()); }
}  // namespace

TEST_CASE("platform: one PCIe card goes into the buyer's computer; whole systems are planned alone", "[platform]") {
  auto one = host("rtx-5070-ti", 1);
  CHECK_FALSE(one.needed);
  CHECK(one.fits());
  CHECK(estimate::describe(one, *test::gpus().find("rtx-5070-ti"), 1) == "one card goes into a computer you have (not priced)");
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
  std::ofstream(path) << R"({"platforms": [{"id": "workstation-2gpu-1600w", "kind": "workstation", "form_factor": "pcie",
    "gpu_slots": 2, "system_max_power_w": 1440, "host_power_w": 400, "price_usd": 2500,
    "price_source": {"title": "my quote", "url": "https://example.com/q"}, "price_as_of": "2026-11"}]})";
  auto p = catalog::Prices::load({path});
  const auto& gpu = *test::gpus().find("rtx-5090");
  // 2 x 575 W + 400 W host = 1,550 W: over the 1,440 W circuit; the 4-GPU workstation takes them.
  auto h = estimate::host_for(gpu, 2, p);
  REQUIRE(h.fits());
  CHECK(h.platform->id == "workstation-4gpu");
  std::ofstream("/tmp/gpuadvisor-test-bad-platform.json") << R"({"platforms": [{"id": "x", "kind": "desk", "form_factor": "pcie", "gpu_slots": 2}]})";
  auto bad = test::run_cli({"cost", "--model", "7B", "--gpu", "rtx-5090", "--gpus", "2", "--prices", "/tmp/gpuadvisor-test-bad-platform.json"});
  CHECK(bad.code == 2);
  CHECK(bad.err == "gpuadvisor: error: /tmp/gpuadvisor-test-bad-platform.json:1: field 'kind': expected one of workstation, server, hgx, got \"desk\"\n");
}
