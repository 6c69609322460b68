// JsonText writes the bytes that Json::dump() writes for the tree JsonTree builds from the same
// calls: batch runs print the text, single runs the tree, and the two must not drift.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpuadvisor/util/json_sink.h"

using namespace gpuadvisor;
using util::Json;

namespace {

std::string dumped(const Json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// Both ways from one description of the members.
template <class Members>
void check_same(Members&& members) {
  Json tree = Json::object();
  util::JsonTree t(tree);
  members(static_cast<util::JsonSink&>(t));
  std::string text = "{";
  util::JsonText x(text);
  members(static_cast<util::JsonSink&>(x));
  text += "}";
  CHECK(text == dumped(tree));
}

}  // namespace

TEST_CASE("JsonText writes what dump() writes of the JsonTree", "[json_sink]") {
  check_same([](util::JsonSink&) {});
  check_same([](util::JsonSink& o) {
    o("plain", "text");
    o("empty", "");
    o("quote", std::string("say \"hi\"\\ now"));
    o("control", std::string("tab\there\nline\x01\x1f"));
    o("utf8", std::string("llam\xc3\xa1 \xe2\x82\xac"));
    o("invalid", std::string("bad \xff\xfe byte"));
    o("view", std::string_view("a view"));
    o("key \"quoted\"", 1);
  });
  check_same([](util::JsonSink& o) {
    o("zero", 0);
    o("neg", -1);
    o("ll", 9007199254740993LL);
    o("min", std::numeric_limits<long long>::min());
    o("umax", std::numeric_limits<std::uint64_t>::max());
    o("t", true);
    o("f", false);
    o("whole", 16.0);
    o("tenth", 0.1);
    o("third", 1.0 / 3);
    o("big", 1e308);
    o("tiny", 4.9e-324);
    o("negzero", -0.0);
    o("small", 1e-7);
    o("large", 123456789012345680000.0);
    o("bits", 4.127);
    o("nan", std::nan(""));
    o("inf", std::numeric_limits<double>::infinity());
    o("ninf", -std::numeric_limits<double>::infinity());
  });
  check_same([](util::JsonSink& o) {
    o("null", Json(nullptr));
    o("jint", Json(42));
    o("juint", Json(std::uint64_t{18446744073709551615ULL}));
    o("jfloat", Json(2.5));
    o("jstr", Json("s\"\xc3\xa9"));
    o("jarr", Json::parse(R"([1, "two", {"three": [3.0, null]}])"));
    o("jobj", Json::parse(R"({"b": 1, "a": {"c": true}})"));
    o("strings", std::vector<std::string>{"q", "k", "v\"", "\xff"});
    o("no strings", std::vector<std::string>{});
    const std::string_view views[] = {"scaling-nvlink", "prefill-mfu"};
    o("views", std::span<const std::string_view>(views));
    o.object("nested", [](util::JsonSink& n) {
      n("x", 1);
      n.object("deeper", [](util::JsonSink& d) { d("y", "z"); });
      n.object("empty", [](util::JsonSink&) {});
    });
    o.objects("none", 0, [](std::size_t, util::JsonSink&) {});
    o.objects("two", 2, [](std::size_t i, util::JsonSink& e) {
      e("i", i);
      e("half", static_cast<double>(i) / 2);
    });
  });
}

TEST_CASE("append_json_number agrees with dump() over random doubles", "[json_sink]") {
  std::mt19937_64 rng(20261201);
  for (int i = 0; i < 20000; ++i) {
    std::uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (i % 2)
      v = static_cast<double>(rng() % 100000000) / std::pow(10.0, static_cast<double>(rng() % 12));  // decimal-looking
    std::string text;
    util::append_json_number(text, v);
    INFO(bits);
    REQUIRE(text == dumped(Json(v)));
  }
}

TEST_CASE("JsonText continues after members the caller wrote", "[json_sink]") {
  std::string text = "{\"line\":3";
  util::JsonText x(text, false);
  x("a", 1);
  text += "}";
  CHECK(text == R"({"line":3,"a":1})");
}
