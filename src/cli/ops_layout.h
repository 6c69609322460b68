#pragma once
// Text layout shared by compat, diagnose and inspect: their answers are sentences, wrapped at the
// terminal width (COLUMNS) with continuation lines aligned under the first.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuadvisor/catalog/source.h"

namespace gpuadvisor::cli::layout {

/// Display width of UTF-8 text (code points).
inline std::size_t columns(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

/// Splits `text` into lines of at most `width` columns at spaces; a longer word gets its own line.
inline std::vector<std::string> wrap(std::string_view text, std::size_t width) {
  width = std::max<std::size_t>(width, 20);
  std::vector<std::string> lines;
  std::string cur;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t sp = text.find(' ', pos);
    std::string_view word = text.substr(pos, sp == std::string_view::npos ? std::string_view::npos : sp - pos);
    pos = sp == std::string_view::npos ? text.size() : sp + 1;
    if (word.empty()) continue;
    if (!cur.empty() && columns(cur) + 1 + columns(word) > width) {
      lines.push_back(cur);
      cur.clear();
    }
    if (!cur.empty()) cur += ' ';
    cur += word;
  }
  if (!cur.empty() || lines.empty()) lines.push_back(cur);
  return lines;
}

/// `prefix` then `text` wrapped to `width`, continuation lines indented to the prefix's width.
inline std::string hanging(std::string_view prefix, std::string_view text, int width) {
  std::size_t indent = columns(prefix);
  std::size_t room = width > static_cast<int>(indent) + 20 ? static_cast<std::size_t>(width) - indent : 20;
  std::string out;
  auto lines = wrap(text, room);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string l = (i == 0 ? std::string(prefix) : std::string(indent, ' ')) + lines[i];
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  }
  return out;
}

/// Key/value lines with wrapped values; each value may have several paragraphs (one line each).
using KeyValues = std::vector<std::pair<std::string, std::vector<std::string>>>;
inline std::string key_values(const KeyValues& kv, int width) {
  std::size_t w = 0;
  for (const auto& [k, v] : kv) w = std::max(w, columns(k));
  std::string out;
  for (const auto& [k, vals] : kv) {
    for (std::size_t i = 0; i < vals.size(); ++i) {
      std::string key = i == 0 ? k : "";
      std::string prefix = key + std::string(w - columns(key) + 2, ' ');
      // List items ("- x", "2. x") hang under their text, not under the marker.
      std::string_view v = vals[i];
      std::size_t marker = 0;
      if (v.size() > 2 && v[0] == '-' && v[1] == ' ')
        marker = 2;
      else {
        std::size_t d = 0;
        while (d < v.size() && v[d] >= '0' && v[d] <= '9') ++d;
        if (d > 0 && d + 1 < v.size() && v[d] == '.' && v[d + 1] == ' ') marker = d + 2;
      }
      out += hanging(prefix + std::string(v.substr(0, marker)), v.substr(marker), width);
    }
  }
  return out;
}

/// "Title <url>" for a source.
inline std::string cite(const catalog::Source& s) { return s.url.empty() ? s.title : s.title + " <" + s.url + ">"; }

}  // namespace gpuadvisor::cli::layout
