#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>

#include "cli_fixture.h"
#include "gpuadvisor/catalog/validate.h"

using namespace gpuadvisor;
using catalog::Catalog;

namespace {

util::Json good_record() {
  auto doc = util::JsonDoc::load(test::source_path("tests/fixtures/catalog/good.json"));
  REQUIRE(doc);
  return doc->root()["gpus"][0];
}

// Parses one record (as a one-record catalog) and validates it.
std::vector<catalog::Finding> findings_for(const util::Json& rec) {
  util::Json file;
  file["schema_version"] = 1;
  file["gpus"] = util::Json::array({rec});
  auto doc = util::JsonDoc::parse(file.dump(2), "mem.json");
  REQUIRE(doc);
  return catalog::validate(Catalog::parse(*doc), "2026-11-29");
}

bool has_rule(const std::vector<catalog::Finding>& f, std::string_view rule) {
  return std::any_of(f.begin(), f.end(), [&](const catalog::Finding& x) { return x.rule == rule; });
}

}  // namespace

TEST_CASE("catalog: the embedded catalog", "[catalog]") {
  auto cat = Catalog::load({});
  SECTION("holds at least 45 GPUs, each with a source") {
    REQUIRE(cat.gpus().size() >= 45);
    for (const auto& g : cat.gpus()) CHECK_FALSE(g.sources.empty());
  }
  SECTION("validates without errors") {
    auto f = catalog::validate(cat.gpus(), "2026-11-29");
    for (const auto& x : f) {
      INFO(x.gpu_id << ": " << x.message << " [" << x.rule << "]");
      CHECK(x.severity == catalog::Severity::warning);
    }
  }
  SECTION("covers the GPUs the product promises") {
    for (const char* id : {"v100-sxm2-32gb",
                           "t4",
                           "a10",
                           "a30",
                           "a40",
                           "a100-40gb-pcie",
                           "a100-40gb-sxm",
                           "a100-80gb-pcie",
                           "a100-80gb-sxm",
                           "l4",
                           "l40",
                           "l40s",
                           "h100-pcie",
                           "h100-sxm",
                           "h100-nvl",
                           "h200",
                           "b200",
                           "rtx-a2000",
                           "rtx-a4000",
                           "rtx-a5000",
                           "rtx-a6000",
                           "rtx-4000-ada",
                           "rtx-5000-ada",
                           "rtx-6000-ada",
                           "titan-rtx",
                           "rtx-2080-ti",
                           "rtx-3060-12gb",
                           "rtx-3080",
                           "rtx-3090",
                           "rtx-3090-ti",
                           "rtx-4060-ti-16gb",
                           "rtx-4070-ti-super",
                           "rtx-4080-super",
                           "rtx-4090",
                           "rtx-5080",
                           "rtx-5090",
                           "jetson-agx-orin-64gb",
                           "jetson-agx-orin-32gb",
                           "jetson-orin-nx-16gb",
                           "jetson-orin-nano-8gb",
                           "mi250x",
                           "mi300x",
                           "mi325x",
                           "rx-7900-xtx",
                           "gaudi2",
                           "gaudi3"}) {
      INFO(id);
      CHECK(cat.find(id) != nullptr);
    }
  }
  SECTION("RTX 4090: 1008 GB/s = 21 Gbps x 384 bit / 8, 24 GiB") {
    const auto* g = cat.find("rtx-4090");
    REQUIRE(g);
    CHECK(g->memory_bandwidth_gbs == 1008);
    CHECK(*g->memory_data_rate_gbps * *g->memory_bus_bits / 8 == Approx(1008));
    CHECK(g->memory_bytes == 24.0 * (1ull << 30));
  }
}

TEST_CASE("catalog: loose names resolve", "[catalog]") {
  auto cat = Catalog::load({});
  CHECK((*cat.resolve("4090"))->id == "rtx-4090");
  CHECK((*cat.resolve("RTX 4090"))->id == "rtx-4090");
  CHECK((*cat.resolve("H100 SXM"))->id == "h100-sxm");
  CHECK((*cat.resolve("a100-80"))->id == "a100-80gb-sxm");
  SECTION("unknown names suggest the closest id") {
    auto r = cat.resolve("rtx-4909");
    REQUIRE_FALSE(r);
    CHECK(r.error() == "unknown GPU \"rtx-4909\", did you mean 'rtx-4090'? (see 'gpuadvisor catalog list')");
  }
  SECTION("ambiguous names list the candidates") {
    auto r = cat.resolve("jetson orin");
    REQUIRE_FALSE(r);
    CHECK(r.error() ==
          "GPU \"jetson orin\" is ambiguous: it matches jetson-agx-orin-64gb, jetson-agx-orin-32gb, "
          "jetson-orin-nx-16gb, jetson-orin-nano-8gb");
  }
  SECTION("an exact alias wins and names the other loose matches") {
    const auto* a100 = *cat.resolve("a100");
    CHECK(a100->id == "a100-80gb-sxm");
    std::vector<std::string> also;
    for (const auto* g : cat.also_matching("a100", *a100)) also.push_back(g->id);
    CHECK(also == std::vector<std::string>{"a100-40gb-pcie", "a100-40gb-sxm", "a100-80gb-pcie"});
    CHECK(cat.also_matching("a100-80gb-sxm", *a100).empty());  // the id itself: nothing to say
    CHECK(cat.also_matching("h100 sxm", **cat.resolve("h100 sxm")).empty());
  }
}

TEST_CASE("catalog: user catalogs add and replace by id", "[catalog]") {
  auto cat = Catalog::load({test::source_path("tests/fixtures/catalog/good.json")});
  REQUIRE(cat.find("test-gpu"));
  auto base = Catalog::load({});
  CHECK(cat.gpus().size() == base.gpus().size() + 1);
  auto rec = good_record();
  rec["id"] = "rtx-4090";
  rec["aliases"] = util::Json::array();
  rec["tdp_w"] = 400;
  util::Json file;
  file["gpus"] = util::Json::array({rec});
  auto doc = util::JsonDoc::parse(file.dump(), "override.json");
  base.merge(Catalog::parse(*doc));
  CHECK(base.find("rtx-4090")->tdp_w == 400);
  CHECK(base.gpus().size() == Catalog::load({}).gpus().size());
}

TEST_CASE("catalog: schema errors name file, line and field", "[catalog]") {
  try {
    Catalog::load({test::source_path("tests/fixtures/catalog/bad-field.json")});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find(
              "bad-field.json:10: GPU 'bad-field': field 'memory_bytes': expected a whole number, got \"24 gigs\"") !=
          std::string::npos);
    CHECK(e.code() == Exit::usage);
  }
  try {
    Catalog::load({test::source_path("tests/fixtures/catalog/truncated.json")});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("truncated.json:3:1: malformed JSON:") != std::string::npos);
  }
}

TEST_CASE("catalog::validate: every rule has a fixture that trips it", "[catalog][validate]") {
  CHECK(findings_for(good_record()).empty());
  auto trips = [](const char* rule, auto mutate) {
    auto rec = good_record();
    mutate(rec);
    INFO(rule);
    CHECK(has_rule(findings_for(rec), rule));
  };
  trips("unknown-architecture", [](util::Json& r) { r["architecture"] = "lovelace"; });
  trips("unknown-architecture", [](util::Json& r) { r["architecture"] = "cdna3"; });
  trips("bandwidth-formula", [](util::Json& r) { r["memory_bandwidth_gbs"] = 1058; });
  trips("tensor-below-vector", [](util::Json& r) { r["peak_tflops"]["fp16"] = 50; });
  trips("precision-order", [](util::Json& r) { r["peak_tflops"]["fp8"] = 100; });
  trips("non-positive-value", [](util::Json& r) { r["tdp_w"] = 0; });
  trips("non-positive-value", [](util::Json& r) { r["street_price_usd"] = -5; });
  trips("non-positive-value", [](util::Json& r) { r["memory_bytes"] = 0; });
  trips("beyond-datasheet", [](util::Json& r) { r["tdp_w"] = 5001; });
  trips("beyond-datasheet", [](util::Json& r) { r["memory_bytes"] = 17592186044416ULL + 1; });
  trips("beyond-datasheet", [](util::Json& r) {
    r["memory_bandwidth_gbs"] = 100001;
    r.erase("memory_bus_bits");
    r.erase("memory_data_rate_gbps");
  });
  trips("beyond-datasheet", [](util::Json& r) { r["interconnect_gbs"] = 100001; });
  trips("beyond-datasheet", [](util::Json& r) { r["peak_tflops"]["int4"] = 1e308; });
  trips("control-character", [](util::Json& r) { r["name"] = "Test \x1b[2J GPU"; });
  trips("control-character", [](util::Json& r) { r["name"] = "Test\nGPU"; });
  trips("control-character", [](util::Json& r) { r["aliases"] = util::Json::array({"test\x07gpu"}); });
  {
    // At the bounds themselves nothing trips: they are the largest values allowed.
    auto rec = good_record();
    rec["tdp_w"] = 5000;
    rec["memory_bytes"] = 17592186044416ULL;
    rec["interconnect_gbs"] = 100000;
    rec["peak_tflops"]["int4"] = 100000;
    CHECK_FALSE(has_rule(findings_for(rec), "beyond-datasheet"));
  }
  trips("power-range", [](util::Json& r) { r["power_max_w"] = 300; });
  trips("compute-capability", [](util::Json& r) { r["compute_capability"] = nullptr; });
  trips("missing-source", [](util::Json& r) { r["sources"] = util::Json::array(); });
  trips("missing-source", [](util::Json& r) { r.erase("street_price_source"); });
  trips("missing-as-of", [](util::Json& r) { r["as_of"] = "recently"; });
  trips("stale-price", [](util::Json& r) { r["street_price_as_of"] = "2024-01"; });
  trips("missing-price", [](util::Json& r) {
    r.erase("street_price_usd");
    r.erase("launch_msrp_usd");
  });
  trips("missing-status", [](util::Json& r) { r.erase("status"); });
  trips("missing-status", [](util::Json& r) { r["status_source"] = nullptr; });
  trips("new-price-out-of-production", [](util::Json& r) { r["status"] = "discontinued"; });
  trips("mig-unsourced", [](util::Json& r) {
    r["mig_instances"] = 7;
    for (auto& src : r["sources"]) src["fields"] = util::Json::array({"memory_bandwidth_gbs"});
  });
  SECTION("duplicates across records") {
    util::Json file;
    auto a = good_record(), b = good_record();
    b["aliases"] = util::Json::array({"testgpu"});
    file["gpus"] = util::Json::array({a, b});
    auto doc = util::JsonDoc::parse(file.dump(), "dup.json");
    auto f = catalog::validate(Catalog::parse(*doc), "2026-11-29");
    CHECK(has_rule(f, "duplicate-id"));
    CHECK(has_rule(f, "duplicate-alias"));
  }
  SECTION("every rule is exercised above and documented") {
    std::ifstream doc(test::source_path("docs/catalog.md"));
    std::string text((std::istreambuf_iterator<char>(doc)), {});
    for (const auto& r : catalog::validation_rules()) {
      INFO(r.id);
      CHECK(text.find("`" + std::string(r.id) + "`") != std::string::npos);
    }
  }
}

TEST_CASE("cli: catalog commands", "[cli][catalog]") {
  SECTION("validate exits 1 naming the rule and the GPU on a wrong bandwidth") {
    auto r = test::run_cli({"catalog", "validate", test::source_path("tests/fixtures/catalog/wrong-bandwidth.json")});
    CHECK(r.code == 1);
    CHECK(r.out.find("bad-bandwidth") != std::string::npos);
    CHECK(r.out.find("[bandwidth-formula]") != std::string::npos);
  }
  SECTION("show of an unknown GPU exits 2") {
    auto r = test::run_cli({"catalog", "show", "rtx-4909"});
    CHECK(r.code == 2);
    CHECK(r.err ==
          "gpuadvisor: error: unknown GPU \"rtx-4909\", did you mean 'rtx-4090'? (see 'gpuadvisor catalog list')\n");
  }
  SECTION("a malformed --catalog exits 2 naming the file, line and field") {
    auto r =
        test::run_cli({"catalog", "list", "--catalog", test::source_path("tests/fixtures/catalog/bad-field.json")});
    CHECK(r.code == 2);
    CHECK(r.err.find("bad-field.json:10: GPU 'bad-field': field 'memory_bytes'") != std::string::npos);
  }
  SECTION("list --format json holds every GPU with a source") {
    auto r = test::run_cli({"catalog", "list", "--format", "json"});
    REQUIRE(r.code == 0);
    auto j = util::Json::parse(r.out);
    CHECK(j["schema_version"] == 1);
    CHECK(j["gpus"].size() >= 45);
    for (const auto& g : j["gpus"]) CHECK_FALSE(g["sources"].empty());
  }
  SECTION("unknown subcommand and format") {
    CHECK(test::run_cli({"catalog", "lsit"}).err ==
          "gpuadvisor: error: unknown catalog command \"lsit\", did you mean 'list'?\n");
    auto r = test::run_cli({"catalog", "list", "--format", "jsno"});
    CHECK(r.code == 2);
    CHECK(r.err ==
          "gpuadvisor: error: --format: expected one of table, json, csv, markdown, got \"jsno\", did you mean "
          "'json'?\n");
  }
}

namespace {

// One record as a catalog file of its own, parsed.
catalog::Gpu parse_one(const util::Json& rec, const std::string& file_name) {
  util::Json file;
  file["gpus"] = util::Json::array({rec});
  auto doc = util::JsonDoc::parse(file.dump(), file_name);
  REQUIRE(doc);
  return Catalog::parse(*doc).front();
}

}  // namespace

TEST_CASE("catalog::Gpu::price_kind: no new price for a card out of production, MSRP only in production", "[catalog]") {
  auto parse = [](const util::Json& rec) { return parse_one(rec, "price.json"); };
  auto rec = good_record();
  rec["street_price_usd"] = 1000;
  rec["launch_msrp_usd"] = 1500;
  rec["used_price_usd"] = 600;
  rec["used_price_as_of"] = "2026-10";
  rec["used_price_source"] = rec["street_price_source"];
  CHECK(parse(rec).price_kind(false) == "street");
  CHECK(parse(rec).price_kind(true) == "used");
  rec["street_price_usd"] = nullptr;
  CHECK(parse(rec).price_kind(false) == "msrp");
  CHECK(*parse(rec).price_usd(false) == 1500);
  rec["status"] = "discontinued";
  CHECK(parse(rec).price_kind(false).empty());
  CHECK(!parse(rec).price_usd(false));
  CHECK(*parse(rec).price_usd(true) == 600);
  rec["street_price_usd"] = 1000;
  CHECK(parse(rec).price_kind(false).empty());  // a street price on a discontinued card is not planned
  rec["status"] = nullptr;
  rec["street_price_usd"] = nullptr;
  CHECK(parse(rec).price_kind(false).empty());  // no status: the launch MSRP is not a price one can pay today
  rec["status"] = "sold-out";
  CHECK_THROWS_WITH(parse(rec),
                    Catch::Contains("field 'status': expected one of in_production, end_of_life, discontinued"));
}

TEST_CASE("catalog: vendor, segment and form factor are read once into their enums", "[catalog]") {
  auto parse = [](const util::Json& rec) { return parse_one(rec, "enums.json"); };
  auto rec = good_record();
  rec["form_factor"] = "sxm";
  const auto g = parse(rec);
  CHECK(g.form_factor == catalog::FormFactor::sxm);
  CHECK(catalog::to_data_json(g)["form_factor"] == "sxm");
  rec["form_factor"] = nullptr;
  CHECK_FALSE(parse(rec).form_factor);
  // An export of a record without one writes "", and reads back the same.
  CHECK(catalog::to_data_json(parse(rec))["form_factor"] == "");
  rec["form_factor"] = "";
  CHECK_FALSE(parse(rec).form_factor);
  rec["form_factor"] = "mxm";
  CHECK_THROWS_WITH(parse(rec),
                    Catch::Contains("field 'form_factor': expected one of pcie, sxm, oam, module, soc, superchip, got "
                                    "\"mxm\""));
  rec["form_factor"] = "pcie";
  rec["segment"] = "datacentre";
  CHECK_THROWS_WITH(parse(rec), Catch::Contains("field 'segment': expected one of consumer, workstation, datacenter, "
                                                "edge, got \"datacentre\", did you mean 'datacenter'?"));
  rec["segment"] = "edge";
  rec["vendor"] = "Nvidia";
  CHECK_THROWS_WITH(parse(rec), Catch::Contains("field 'vendor': expected one of nvidia, amd, intel, apple"));
}
