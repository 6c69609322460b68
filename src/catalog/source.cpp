#include "gpuadvisor/catalog/source.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "gpuadvisor/util/units.h"

namespace gpuadvisor::catalog {
namespace {

Source parse_source(const util::Fields& s) {
  Source out;
  out.title = s.opt_str("title").value_or("");
  out.url = s.opt_str("url").value_or("");
  if (out.url.empty()) {
    // Repository sources name repo and path instead of a URL.
    auto repo = s.opt_str("repo"), path = s.opt_str("path");
    if (repo) out.url = *repo + (path ? "/" + *path : "");
  }
  if (s.has("fields")) {
    const auto& fl = s.raw("fields");
    if (!fl.is_array()) s.fail("fields", "expected an array of field names, got " + util::json_snippet(fl));
    for (const auto& x : fl)
      if (x.is_string()) out.fields.push_back(x.get<std::string>());
  }
  return out;
}

}  // namespace

Source read_source(const util::Fields& f, const std::string& key) {
  return parse_source(util::Fields(f.doc(), f.raw(key), f.pointer(key), ""));
}

std::vector<Source> read_sources(const util::Fields& f, const std::string& key) {
  std::vector<Source> out;
  if (!f.has(key)) return out;
  const auto& arr = f.raw(key);
  if (!arr.is_array()) f.fail(key, "expected an array of sources, got " + util::json_snippet(arr));
  for (std::size_t i = 0; i < arr.size(); ++i)
    out.push_back(parse_source(util::Fields(f.doc(), arr[i], f.pointer(key) + "/" + std::to_string(i), "")));
  return out;
}

util::Json source_json(const Source& s) {
  util::Json j;
  j["title"] = s.title;
  j["url"] = s.url;
  if (!s.fields.empty()) j["fields"] = s.fields;
  return j;
}

util::Json sources_json(const std::vector<Source>& sources) {
  util::Json arr = util::Json::array();
  for (const auto& s : sources) arr.push_back(source_json(s));
  return arr;
}

std::optional<int> months_of(const std::string& date) {
  if (date.size() < 7 || date[4] != '-') return std::nullopt;
  int y = 0, m = 0;
  auto r1 = std::from_chars(date.data(), date.data() + 4, y);
  auto r2 = std::from_chars(date.data() + 5, date.data() + 7, m);
  if (r1.ec != std::errc() || r2.ec != std::errc() || r1.ptr != date.data() + 4 || m < 1 || m > 12) return std::nullopt;
  if (date.size() != 7 && (date.size() != 10 || date[7] != '-')) return std::nullopt;
  return y * 12 + (m - 1);
}

std::optional<std::string> stale_price(std::string_view what, double usd, const std::string& as_of,
                                       const std::string& today) {
  const auto now = months_of(today);
  if (!now) return std::nullopt;
  auto then = months_of(as_of);
  if (!then && as_of.size() == 4 &&
      std::all_of(as_of.begin(), as_of.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    then = months_of(as_of + "-01");
  if (then && *now - *then <= 12) return std::nullopt;
  return fmt::format("{} {} {}", what, util::format_money(usd), then ? "from " + as_of : std::string("with no date"));
}

}  // namespace gpuadvisor::catalog
