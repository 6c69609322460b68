// The units parser (every flag and profile field with a unit goes through it): every parse_*
// function on the input text; accepted values must be finite, not negative, and format without
// trouble. The formatters also get raw doubles from the input bytes, and quote() must keep any
// text on one line.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fuzz_common.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

using namespace gpuadvisor;

namespace {

void format_all(double v) {
  (void)util::format_bytes(v);
  (void)util::format_count(v);
  (void)util::format_money(v);
  (void)util::format_duration(v);
  (void)util::format_number(v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::as_string(data, size);
  fuzz::guarded([&] {
    using Parser = Result<double> (*)(std::string_view);
    const std::pair<const char*, Parser> parsers[] = {
        {"parse_count", util::parse_count},       {"parse_bytes", util::parse_bytes},
        {"parse_money", util::parse_money},       {"parse_power", util::parse_power},
        {"parse_duration", util::parse_duration}, {"parse_number", util::parse_number},
    };
    for (const auto& [what, parse] : parsers) {
      auto r = parse(text);
      fuzz::check_result_message(r);
      if (!r) continue;
      fuzz::check_number(*r, what);
      format_all(*r);
    }
    for (auto [lo, hi] : {std::pair<long long, long long>{0, 3}, {1, 1 << 20}, {LLONG_MIN, LLONG_MAX}}) {
      auto r = util::parse_int(text, lo, hi);
      fuzz::check_result_message(r);
      if (r && (*r < lo || *r > hi)) fuzz::finding("parse_int out of range");
    }
    std::string q = util::quote(text);
    if (q.find('\n') != std::string::npos || q.find('\r') != std::string::npos)
      fuzz::finding("quote() output spans lines: " + q);
    // Raw doubles: every finite value must format.
    for (std::size_t i = 0; i + sizeof(double) <= size && i < 64; i += sizeof(double)) {
      double v;
      std::memcpy(&v, data + i, sizeof v);
      if (std::isfinite(v)) format_all(v);
    }
  });
  return 0;
}
