#include "gpuadvisor/util/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace gpuadvisor::util {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

namespace {

// ASCII letters and digits, lowered; 0 for anything else (names are compared in ASCII: the
// program runs in the C locale, where std::isalnum is the same).
constexpr char squashed_char(char c) {
  if (c >= 'A' && c <= 'Z') return static_cast<char>(c - 'A' + 'a');
  if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return c;
  return 0;
}

}  // namespace

std::string squash(std::string_view s) {
  std::string out;
  for (char c : s)
    if (char k = squashed_char(c)) out.push_back(k);
  return out;
}

bool squashes_to(std::string_view s, std::string_view squashed) {
  std::size_t i = 0;
  for (char c : s) {
    const char k = squashed_char(c);
    if (!k) continue;
    if (i == squashed.size() || k != squashed[i]) return false;
    ++i;
  }
  return i == squashed.size();
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

namespace {

template <class S>
std::string join_of(std::span<const S> parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

}  // namespace

std::string join(std::span<const std::string> parts, std::string_view sep) { return join_of(parts, sep); }
std::string join(std::span<const std::string_view> parts, std::string_view sep) { return join_of(parts, sep); }

std::string join_list(std::span<const std::string> parts, std::string_view last) {
  if (parts.size() < 2) return parts.empty() ? "" : parts[0];
  return join_of(parts.first(parts.size() - 1), ", ") + " " + std::string(last) + " " + parts.back();
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions ("jsno" -> "json" is 1).
  // Three rows of the shorter word's length (a transposition looks two rows back), not a table.
  if (a.size() < b.size()) std::swap(a, b);
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::size_t> back(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], back[j - 2] + 1);
    }
    std::swap(back, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::optional<std::string> closest(std::string_view word, std::span<const std::string> candidates) {
  // A plausible typo: at most a third of the word changed, and never more than 3 edits. The
  // distance is at least the difference in length, so candidates further apart than the limit are
  // never compared, and a word longer than any candidate plus the limit costs nothing.
  const std::size_t limit = std::min<std::size_t>(3, std::max<std::size_t>(1, word.size() / 3));
  std::string w;
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const auto& c : candidates) {
    const std::size_t gap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
    if (gap > limit) continue;
    if (w.empty()) w = lower(word);
    std::size_t d = edit_distance(w, lower(c));
    if (!best || d < best_d) {
      best = c;
      best_d = d;
    }
  }
  if (best && best_d <= limit) return best;
  return std::nullopt;
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  auto c = closest(word, candidates);
  return c ? fmt::format(", did you mean '{}'?", *c) : std::string();
}

std::string quote(std::string_view s, std::size_t max_len) {
  std::string out = "\"";
  std::size_t n = 0;
  for (char ch : s) {
    if (n++ >= max_len) {
      out += "...";
      break;
    }
    auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20 || u >= 0x7f) {
      append_escaped(out, u);
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

namespace {

bool is_c1_at(std::string_view s, std::size_t i) {
  return static_cast<unsigned char>(s[i]) == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
         static_cast<unsigned char>(s[i + 1]) <= 0x9F;
}

}  // namespace

bool has_control(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i)
    if (is_control(static_cast<unsigned char>(s[i])) || is_c1_at(s, i)) return true;
  return false;
}

void append_escaped(std::string& out, unsigned char u) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[u >> 4];
  out += kHex[u & 0xF];
}

void append_escaped(std::string& out, std::string_view s, std::string_view keep) {
  std::size_t done = 0;  // bytes of s already appended
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    const bool c1 = is_c1_at(s, i);
    if (!c1 && (!is_control(u) || keep.find(s[i]) != std::string_view::npos)) continue;
    out.append(s.substr(done, i - done));
    if (u < 0x20) {
      append_escaped(out, u);
    } else {
      // DEL and the C1 controls as their code point, \u007f: JSON strings may hold them raw (only
      // C0 must be escaped there), and this is their JSON escape, so JSON output stays valid.
      const auto cp = c1 ? static_cast<unsigned char>(s[++i]) : u;
      out += "\\u00";
      std::string hex;
      append_escaped(hex, cp);
      out += hex.substr(2);
    }
    done = i + 1;
  }
  out.append(s.substr(done));
}

std::string escape_controls(std::string_view s, std::string_view keep) {
  std::string out;
  out.reserve(s.size());
  append_escaped(out, s, keep);
  return out;
}

}  // namespace gpuadvisor::util

namespace gpuadvisor::util {
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
}  // namespace gpuadvisor::util
