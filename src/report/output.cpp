#include "gpuadvisor/report/output.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "gpuadvisor/util/text.h"
#include "gpuadvisor/version.h"

namespace gpuadvisor::report {
namespace {

constexpr std::string_view kFormatNames[] = {"table", "json", "csv", "markdown", "junit", "sarif", "text"};

// Display width of UTF-8 text: count code points, not bytes.
std::size_t width_of(std::string_view s) {
  std::size_t n = 0;
  bool esc = false;
  for (unsigned char c : s) {
    if (c == 0x1b) esc = true;
    if (esc) {
      if (c == 'm') esc = false;
      continue;
    }
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string pad(std::string_view s, std::size_t w, Align a) {
  std::size_t n = width_of(s);
  std::string fill(w > n ? w - n : 0, ' ');
  return a == Align::left ? std::string(s) + fill : fill + std::string(s);
}

std::string csv_cell(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string md_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string_view name(Format f) { return kFormatNames[static_cast<std::size_t>(f)]; }

Result<Format> parse_format(std::string_view s, std::span<const Format> allowed) {
  std::vector<std::string> names;
  for (auto f : allowed) {
    if (name(f) == s) return f;
    names.emplace_back(name(f));
  }
  return Result<Format>::fail(fmt::format("--format: expected one of {}, got {}{}", util::join(names, ", "),
                                          util::quote(s), util::did_you_mean(s, names)));
}

Style Style::detect() {
  Style st;
  st.color = isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
  if (const char* c = std::getenv("COLUMNS")) {
    int w = std::atoi(c);
    if (w >= 40 && w <= 1000) st.width = w;
  }
  const char* lang = std::getenv("LC_ALL");
  if (!lang || !*lang) lang = std::getenv("LC_CTYPE");
  if (!lang || !*lang) lang = std::getenv("LANG");
  std::string l = util::lower(lang ? lang : "");
  st.unicode = l.find("utf-8") != std::string::npos || l.find("utf8") != std::string::npos;
  return st;
}

std::string Style::bold(std::string_view s) const { return color ? fmt::format("\x1b[1m{}\x1b[0m", s) : std::string(s); }
std::string Style::dim(std::string_view s) const { return color ? fmt::format("\x1b[2m{}\x1b[0m", s) : std::string(s); }
std::string Style::good(std::string_view s) const { return color ? fmt::format("\x1b[32m{}\x1b[0m", s) : std::string(s); }
std::string Style::bad(std::string_view s) const { return color ? fmt::format("\x1b[31m{}\x1b[0m", s) : std::string(s); }

void Table::add(std::vector<std::string> row) {
  row.resize(cols_.size());
  rows_.push_back(std::move(row));
}

std::string Table::render(Format f, const Style& style) const {
  std::string out;
  if (f == Format::csv) {
    for (std::size_t i = 0; i < cols_.size(); ++i) out += (i ? "," : "") + csv_cell(cols_[i].header);
    out += "\n";
    for (const auto& r : rows_) {
      for (std::size_t i = 0; i < r.size(); ++i) out += (i ? "," : "") + csv_cell(r[i]);
      out += "\n";
    }
    return out;
  }
  std::vector<std::size_t> w(cols_.size());
  for (std::size_t i = 0; i < cols_.size(); ++i) w[i] = width_of(cols_[i].header);
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], width_of(r[i]));
  if (f == Format::markdown) {
    out += "|";
    for (std::size_t i = 0; i < cols_.size(); ++i) out += " " + md_cell(cols_[i].header) + " |";
    out += "\n|";
    for (std::size_t i = 0; i < cols_.size(); ++i) out += cols_[i].align == Align::right ? " ---: |" : " --- |";
    out += "\n";
    for (const auto& r : rows_) {
      out += "|";
      for (std::size_t i = 0; i < r.size(); ++i) out += " " + md_cell(r[i]) + " |";
      out += "\n";
    }
    return out;
  }
  // Aligned text: two spaces between columns; trailing spaces trimmed.
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string l;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      std::string cell = pad(cells[i], w[i], cols_[i].align);
      l += (i ? "  " : "") + cell;
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return (header ? style.bold(l) : l) + "\n";
  };
  std::vector<std::string> hdr;
  for (const auto& c : cols_) hdr.push_back(c.header);
  out += line(hdr, true);
  for (const auto& r : rows_) out += line(r, false);
  return out;
}

std::string key_values(const std::vector<std::pair<std::string, std::string>>& kv, const Style& style) {
  std::size_t w = 0;
  for (const auto& [k, v] : kv) w = std::max(w, width_of(k));
  std::string out;
  for (const auto& [k, v] : kv) {
    if (k.empty()) {
      out += "\n";
      continue;
    }
    out += style.bold(pad(k, w, Align::left)) + "  " + v + "\n";
  }
  return out;
}

std::string key_values(const std::vector<std::pair<std::string, std::string>>& kv, Format f, const Style& style) {
  if (f == Format::table) return key_values(kv, style);
  Table t({{"field"}, {"value"}});
  for (const auto& [k, v] : kv) t.add({k, v});
  return t.render(f, style);
}

util::Json envelope(std::string_view command) {
  util::Json j;
  j["schema_version"] = 1;
  j["gpuadvisor_version"] = kVersion;
  j["command"] = command;
  return j;
}

std::string dump(const util::Json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string bar(double fraction, int width, const Style& style) {
  if (!std::isfinite(fraction) || fraction < 0) fraction = 0;
  fraction = std::min(fraction, 1.0);
  double cells = fraction * width;
  int full = static_cast<int>(cells);
  std::string out;
  if (!style.unicode) return std::string(static_cast<std::size_t>(full), '#');
  for (int i = 0; i < full; ++i) out += "\u2588";
  static const char* partial[] = {"", "\u258F", "\u258E", "\u258D", "\u258C", "\u258B", "\u258A", "\u2589"};
  int eighth = static_cast<int>((cells - full) * 8);
  if (full < width && eighth > 0) out += partial[eighth];
  return out;
}

}  // namespace gpuadvisor::report
