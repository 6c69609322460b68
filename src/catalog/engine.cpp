#include "gpuadvisor/catalog/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/text.h"

namespace gpuadvisor::catalog {
namespace {

bool has(const std::vector<std::string>& v, std::string_view s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::vector<std::string> strings(const util::Fields& f, const std::string& key) {
  std::vector<std::string> out;
  const auto& arr = f.raw(key);
  if (!arr.is_array() || arr.empty()) f.fail(key, "expected a non-empty array of strings");
  for (const auto& v : arr) {
    if (!v.is_string()) f.fail(key, "expected strings, got " + util::json_snippet(v));
    out.push_back(v.get<std::string>());
  }
  return out;
}

Split split_of(const util::Fields& f, const std::string& key, const std::string& text) {
  auto s = kSplitNames.parse(text);
  if (!s) f.fail(key, fmt::format("expected layer or tensor, got {}", util::quote(text)));
  return *s;
}

Engine engine_of(const util::Fields& f, const std::string& key, const std::string& text) {
  auto e = kEngineNames.parse(text);
  if (!e)
    f.fail(key, fmt::format("expected one of {}, got {}{}", kEngineNames.join_or(), util::quote(text),
                            kEngineNames.suggest(text)));
  return *e;
}

}  // namespace

bool EngineInfo::runs_format(std::string_view f) const { return has(weight_formats, f); }
bool EngineInfo::runs_kv(std::string_view f) const { return has(kv_formats, f); }
bool EngineInfo::runs_on(Vendor vendor) const {
  return std::find(vendors.begin(), vendors.end(), vendor) != vendors.end();
}
bool EngineInfo::offers(Split s) const { return std::find(splits.begin(), splits.end(), s) != splits.end(); }

std::vector<EngineInfo> parse_engines(const util::JsonDoc& doc) {
  util::Fields top(doc, doc.root(), "", "");
  const auto& arr = top.raw("engines");
  if (!arr.is_array()) top.fail("engines", "expected an array of engines, got " + util::json_snippet(arr));
  std::vector<EngineInfo> out(kEngineCount);
  std::vector<bool> seen(kEngineCount, false);
  for (std::size_t i = 0; i < arr.size(); ++i) {
    util::Fields f(doc, arr[i], "/engines/" + std::to_string(i), "");
    EngineInfo e;
    e.id = engine_of(f, "id", f.str("id"));
    if (seen[static_cast<std::size_t>(e.id)]) f.fail("id", "engine listed twice");
    e.name = f.str("name");
    e.split = split_of(f, "split", f.str("split"));
    for (const auto& s : strings(f, "splits")) e.splits.push_back(split_of(f, "splits", s));
    if (!e.offers(e.split)) f.fail("splits", "must include the default split");
    e.weight_formats = strings(f, "weight_formats");
    e.kv_formats = strings(f, "kv_formats");
    for (const auto& v : strings(f, "vendors")) {
      auto vendor = kVendorNames.parse(v);
      if (!vendor) f.fail("vendors", kVendorNames.expected(v));
      e.vendors.push_back(*vendor);
    }
    if (f.has("memory_fraction") && !f.raw("memory_fraction").is_null()) {
      double m = f.num("memory_fraction");
      if (!(m > 0 && m <= 1)) f.fail("memory_fraction", fmt::format("expected a share in (0, 1], got {}", m));
      e.memory_fraction = m;
    }
    const std::string acc = f.str("geforce_accumulate");
    if (acc != "fp16" && acc != "fp32") f.fail("geforce_accumulate", "expected fp16 or fp32, got " + util::quote(acc));
    e.geforce_fp16_accumulate = acc == "fp16";
    e.pytorch = f.boolean("pytorch");
    const std::string prefill = f.str("prefill");
    if (prefill != "chunked" && prefill != "whole")
      f.fail("prefill", "expected chunked or whole, got " + util::quote(prefill));
    e.whole_prompt_prefill = prefill == "whole";
    if (auto from = f.opt_str("factors_from")) e.factors_from = engine_of(f, "factors_from", *from);
    e.sources = read_sources(f);
    if (e.sources.empty()) f.fail("sources", "an engine needs at least one source");
    e.as_of = f.str("as_of");
    seen[static_cast<std::size_t>(e.id)] = true;
    out[static_cast<std::size_t>(e.id)] = std::move(e);
  }
  for (std::size_t i = 0; i < kEngineCount; ++i)
    if (!seen[i]) top.fail("engines", fmt::format("engine {} missing", kEngineNames.names[i]));
  return out;
}

const std::vector<EngineInfo>& engines() {
  static const std::vector<EngineInfo> all = [] {
    auto doc = embedded::doc("engines.json");
    try {
      return parse_engines(doc);
    } catch (const Error& e) {
      throw Error(e.what(), Exit::internal);
    }
  }();
  return all;
}

const EngineInfo& engine(Engine e) { return engines()[static_cast<std::size_t>(e)]; }

}  // namespace gpuadvisor::catalog
