#include "gpuadvisor/util/units.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

#include "gpuadvisor/util/text.h"

namespace gpuadvisor::util {
namespace {

struct Split {
  double value;
  std::string unit;  // trimmed, original case
};

// Removes thousands separators when they are well formed (every comma followed by 3 digits).
Result<std::string> strip_commas(std::string_view s, std::string_view expected) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != ',') {
      out.push_back(s[i]);
      continue;
    }
    bool ok = i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]));
    for (std::size_t k = 1; ok && k <= 3; ++k)
      ok = i + k < s.size() && std::isdigit(static_cast<unsigned char>(s[i + k]));
    if (ok && i + 4 < s.size()) ok = !std::isdigit(static_cast<unsigned char>(s[i + 4]));
    if (!ok) return Result<std::string>::fail(fmt::format("expected {}, got {}", expected, quote(s)));
  }
  return out;
}

// Splits "1.5 TB" into 1.5 and "TB". The number must be finite and not negative.
Result<Split> split_number(std::string_view raw, std::string_view expected, bool commas) {
  std::string text = trim(raw);
  auto bad = [&] { return Result<Split>::fail(fmt::format("expected {}, got {}", expected, quote(raw))); };
  if (text.empty()) return bad();
  if (commas) {
    auto s = strip_commas(text, expected);
    if (!s) return Result<Split>::fail(s.error());
    text = *s;
  }
  if (text[0] == '-')
    return Result<Split>::fail(fmt::format("expected {}, got a negative value {}", expected, quote(raw)));
  if (text[0] == '+') text.erase(0, 1);
  // Only digits, one dot and an exponent may form the number; from_chars alone would accept
  // "inf" and "nan".
  std::size_t i = 0;
  bool digits = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, digits = true;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, digits = true;
  }
  if (!digits) return bad();
  if (i + 1 < text.size() && (text[i] == 'e' || text[i] == 'E') &&
      (std::isdigit(static_cast<unsigned char>(text[i + 1])) ||
       ((text[i + 1] == '+' || text[i + 1] == '-') && i + 2 < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[i + 2]))))) {
    i += 2;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  }
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, v);
  if (ec != std::errc() || ptr != text.data() + i || !std::isfinite(v)) return bad();
  return Split{v, trim(std::string_view(text).substr(i))};
}

Result<double> scaled(std::string_view raw, double v, double scale, double max) {
  double r = v * scale;
  if (!std::isfinite(r) || r > max)
    return Result<double>::fail(fmt::format("{} is too large (at most {})", quote(raw), format_number(max)));
  return r;
}

}  // namespace

Result<double> parse_number(std::string_view text) {
  const char* expected = "a number";
  auto s = split_number(text, expected, false);
  if (!s) return Result<double>::fail(s.error());
  if (!s->unit.empty()) return Result<double>::fail(fmt::format("expected {}, got {}", expected, quote(text)));
  return s->value;
}

Result<long long> parse_int(std::string_view text, long long lo, long long hi) {
  std::string t = trim(text);
  long long v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size())
    return Result<long long>::fail(fmt::format("expected a whole number, got {}", quote(text)));
  if (v < lo || v > hi)
    return Result<long long>::fail(fmt::format("expected a whole number from {} to {}, got {}", lo, hi, quote(text)));
  return v;
}

Result<double> parse_count(std::string_view text) {
  const char* expected = "a count like 10B, 350M, 1.5T or 175e9";
  auto s = split_number(text, expected, true);
  if (!s) return Result<double>::fail(s.error());
  std::string u = lower(s->unit);
  double scale;
  if (u.empty())
    scale = 1;
  else if (u == "k")
    scale = 1e3;
  else if (u == "m")
    scale = 1e6;
  else if (u == "b" || u == "g")
    scale = 1e9;
  else if (u == "t")
    scale = 1e12;
  else
    return Result<double>::fail(fmt::format("expected {}, got {}", expected, quote(text)));
  return scaled(text, s->value, scale, 1e18);
}

Result<double> parse_bytes(std::string_view text) {
  const char* expected = "a size like 24GB, 24GiB or 80G";
  auto s = split_number(text, expected, true);
  if (!s) return Result<double>::fail(s.error());
  std::string u = lower(s->unit);
  if (!u.empty() && u.back() == 'b' && u != "b") u.pop_back();  // "gb" -> "g", "gib" -> "gi"
  double scale;
  if (u.empty() || u == "b")
    scale = 1;
  else if (u == "k" && s->unit.size() == 2)
    scale = 1e3;  // KB
  else if (u == "m" && s->unit.size() == 2)
    scale = 1e6;
  else if (u == "g" && s->unit.size() == 2)
    scale = 1e9;
  else if (u == "t" && s->unit.size() == 2)
    scale = 1e12;
  else if (u == "k" || u == "ki")
    scale = 0x1p10;
  else if (u == "m" || u == "mi")
    scale = 0x1p20;
  else if (u == "g" || u == "gi")
    scale = 0x1p30;
  else if (u == "t" || u == "ti")
    scale = 0x1p40;
  else
    return Result<double>::fail(fmt::format("expected {}, got {}", expected, quote(text)));
  return scaled(text, s->value, scale, 1e18);
}

Result<double> parse_money(std::string_view raw) {
  const char* expected = "an amount in USD like 3000, $3,000, 3k or 1.2M";
  std::string text = trim(raw);
  if (!text.empty() && text[0] == '$') text.erase(0, 1);
  auto s = split_number(text, expected, true);
  if (!s) return Result<double>::fail(fmt::format("expected {}, got {}", expected, quote(raw)));
  std::string u = lower(s->unit);
  if (u == "usd") u.clear();
  double scale;
  if (u.empty())
    scale = 1;
  else if (u == "k")
    scale = 1e3;
  else if (u == "m")
    scale = 1e6;
  else if (u == "b")
    scale = 1e9;
  else
    return Result<double>::fail(fmt::format("expected {}, got {}", expected, quote(raw)));
  return scaled(raw, s->value, scale, 1e13);
}

Result<double> parse_power(std::string_view text) {
  const char* expected = "a power like 30W, 0.7kW or 700";
  auto s = split_number(text, expected, true);
  if (!s) return Result<double>::fail(s.error());
  std::string u = lower(s->unit);
  double scale;
  if (u.empty() || u == "w")
    scale = 1;
  else if (u == "kw")
    scale = 1e3;
  else if (u == "mw" && s->unit == "MW")
    scale = 1e6;
  else
    return Result<double>::fail(fmt::format("expected {}, got {}", expected, quote(text)));
  return scaled(text, s->value, scale, 1e9);
}

Result<double> parse_duration(std::string_view text) {
  const char* expected = "a duration like 3600s, 90min, 24h, 30d, 2w or 1.5y";
  auto s = split_number(text, expected, false);
  if (!s) return Result<double>::fail(s.error());
  std::string u = lower(s->unit);
  double scale;
  if (u.empty() || u == "s")
    scale = 1;
  else if (u == "ms")
    scale = 1e-3;
  else if (u == "min" || u == "m")
    scale = 60;
  else if (u == "h")
    scale = 3600;
  else if (u == "d")
    scale = 86400;
  else if (u == "w")
    scale = 7 * 86400;
  else if (u == "mo")
    scale = 365.25 / 12 * 86400;
  else if (u == "y")
    scale = 365.25 * 86400;
  else
    return Result<double>::fail(fmt::format("expected {}, got {}", expected, quote(text)));
  return scaled(text, s->value, scale, 1e12);
}

std::string format_bytes(double b) {
  const double a = std::fabs(b);
  // The larger unit from 1000 of the smaller one, so that no figure reads "1000.0 MiB".
  if (a >= 1000 * 0x1p50) return fmt::format("{:.2f} EiB", b / 0x1p60);
  if (a >= 1000 * 0x1p40) return fmt::format("{:.2f} PiB", b / 0x1p50);
  if (a >= 1000 * 0x1p30) return fmt::format("{:.2f} TiB", b / 0x1p40);
  if (a >= 1000 * 0x1p20) return fmt::format("{:.2f} GiB", b / 0x1p30);
  if (a >= 1000 * 0x1p10) return fmt::format("{:.1f} MiB", b / 0x1p20);
  if (a >= 1000) return fmt::format("{:.1f} KiB", b / 0x1p10);
  return fmt::format("{:.0f} B", b);
}

std::string format_count(double n) {
  const double a = std::fabs(n);
  auto f = [](double v, const char* u) {
    std::string s = fmt::format("{:.2f}", v);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s + u;
  };
  if (a >= 1e12) return f(n / 1e12, "T");
  if (a >= 1e9) return f(n / 1e9, "B");
  if (a >= 1e6) return f(n / 1e6, "M");
  if (a >= 1e3) return f(n / 1e3, "k");
  return f(n, "");
}

std::string format_money(double usd) {
  const double a = std::fabs(usd);
  if (a >= 1e7) return fmt::format("${:.2f}M", usd / 1e6);
  // Whole dollars from $100; cents below, where they matter ($57.20, $0.45).
  if (a >= 1000) return "$" + format_number(std::round(usd));
  if (a >= 100 || a == std::round(a)) return fmt::format("${:.0f}", std::round(usd));
  return fmt::format("${:.2f}", usd);
}

namespace {
// "1832" -> "1,832": a comma between each group of three digits from the right.
std::string group_thousands(std::string digits) {
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}
}  // namespace

std::string format_cents(double usd) {
  const long long cents = std::llround(std::fabs(usd) * 100);
  return fmt::format("{}${}.{:02}", usd < 0 && cents > 0 ? "-" : "", group_thousands(std::to_string(cents / 100)),
                     cents % 100);
}

std::string format_rate(double usd_per_hour) { return format_cents(usd_per_hour) + "/h"; }

std::string format_duration(double s) {
  if (!std::isfinite(s)) return "never";
  if (s >= 365.25 * 86400) return fmt::format("{:.1f} years", s / (365.25 * 86400));
  if (s >= 2 * 86400) return fmt::format("{:.1f} days", s / 86400);
  if (s >= 3600) return fmt::format("{:.1f} h", s / 3600);
  if (s >= 60) return fmt::format("{:.1f} min", s / 60);
  if (s >= 1) return fmt::format("{:.1f} s", s);
  return fmt::format("{:.1f} ms", s * 1e3);
}

std::string format_number(double v) {
  if (!std::isfinite(v)) return "n/a";
  double a = std::fabs(v);
  if (a >= 1000) {
    const std::string out = group_thousands(fmt::format("{:.0f}", a));
    return v < 0 ? "-" + out : out;
  }
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  if (a == 0) return "0";
  return fmt::format("{:.3g}", v);
}

std::string format_int(long long n) {
  const std::string digits = group_thousands(std::to_string(n < 0 ? -n : n));
  return n < 0 ? "-" + digits : digits;
}

}  // namespace gpuadvisor::util
