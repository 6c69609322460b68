#include <catch2/catch.hpp>

#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/catalog/snapshot.h"
#include "gpuadvisor/util/serial.h"
#include "test_data.h"

using namespace gpuadvisor;

namespace {

// Record for record, named by id when one differs.
template <class T>
void check_same(const std::vector<T>& snapshot, const std::vector<T>& json) {
  REQUIRE(snapshot.size() == json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    INFO(json[i].id);
    CHECK(snapshot[i] == json[i]);
  }
}

}  // namespace

// The binary loads its embedded records from the snapshot made at build time; these tests hold
// the snapshot to what the JSON parsers make of the same files, field for field (operator== on
// every record), so that a member missing from a `fields` list fails here.
TEST_CASE("catalog::snapshot: the embedded snapshot holds what the JSON parsers make of data/*.json", "[snapshot]") {
  for (const char* name : {"gpus.json", "models.json", "cloud.json", "efficiency.json", "rules.json"}) {
    INFO(name);
    CHECK(embedded::snapshot(name).has_value());
  }
  CHECK_FALSE(embedded::snapshot("compat.json").has_value());

  SECTION("GPUs") {
    catalog::Catalog json;
    json.merge(catalog::Catalog::parse(embedded::doc("gpus.json")));
    check_same(test::gpus().gpus(), json.gpus());
    // Records keep the line they came from, for messages.
    CHECK(test::gpus().gpus().front().origin.rfind("<embedded>/gpus.json:", 0) == 0);
  }
  SECTION("models") {
    catalog::ModelSet json;
    json.merge(catalog::ModelSet::parse(embedded::doc("models.json")));
    check_same(test::models().models(), json.models());
  }
  SECTION("prices") {
    catalog::Prices json;
    catalog::Prices::parse_into(embedded::doc("cloud.json"), json);
    catalog::Prices::parse_into(embedded::doc("platforms.json"), json);
    CHECK(test::prices() == json);
    CHECK_FALSE(json.instances.empty());
  }
  SECTION("efficiency factors") { CHECK(test::eff() == catalog::Efficiency::parse(embedded::doc("efficiency.json"))); }
  SECTION("rules, with each record as written") {
    rules::RuleSet json;
    json.merge(rules::RuleSet::parse(embedded::doc("rules.json")));
    check_same(test::rule_set().rules(), json.rules());
    CHECK(test::rule_set().rules().front().raw.is_object());
  }
}

TEST_CASE("util::serial: values round-trip and bad bytes are an internal error", "[snapshot]") {
  using Value = std::variant<std::monostate, double, bool, std::string>;
  const std::vector<std::optional<Value>> values = {std::nullopt, Value{}, Value{2.5}, Value{true},
                                                    Value{std::string("x\0y", 3)}};
  CHECK(util::serial::decode<std::vector<std::optional<Value>>>(util::serial::encode(values)) == values);

  const auto j = util::Json::parse(R"({"a": [1, -2, 3.5, "s", null, true, {"b": {}}], "c": 18446744073709551615})");
  const auto back = util::serial::decode<util::Json>(util::serial::encode(j));
  CHECK(back == j);
  CHECK(back.dump() == j.dump());  // key order and number kinds kept

  const std::string bytes = catalog::encode(test::gpus().gpus());
  std::vector<catalog::Gpu> out;
  const std::string truncated = bytes.substr(0, bytes.size() - 1), trailing = bytes + "x";
  for (const std::string& bad : {truncated, trailing}) {
    try {
      catalog::decode(bad, out);
      FAIL("decoded bad bytes");
    } catch (const Error& e) {
      CHECK(e.code() == Exit::internal);
      CHECK(std::string(e.what()).rfind("data snapshot: ", 0) == 0);
    }
  }
}
