#include "gpuadvisor/report/output.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>

#include "gpuadvisor/util/text.h"
#include "gpuadvisor/version.h"

namespace gpuadvisor::report {
namespace {

constexpr std::string_view kFormatNames[] = {"table", "json", "csv", "markdown", "junit", "sarif", "text", "html"};

std::size_t width_of(std::string_view s) { return display_width(s); }

std::string pad(std::string_view s, std::size_t w, Align a) {
  std::size_t n = width_of(s);
  std::string fill(w > n ? w - n : 0, ' ');
  return a == Align::left ? std::string(s) + fill : fill + std::string(s);
}

// A CSV cell that is a number as spreadsheets read one: an optional sign, digits with an optional
// fraction, an optional exponent ("-1.5", "+3", "2.5e-05", "-.5"). fmt's "inf" and "nan" are not.
bool is_number(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  std::size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  }
  if (!digits) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const std::size_t at = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == at) return false;
  }
  return i == s.size();
}

std::string csv_cell(std::string_view s) {
  // OWASP's rule against CSV injection: a cell that starts with = + - @ (or tab, CR) is a formula
  // to a spreadsheet, so text that does gets a leading ' ; numbers are left as numbers, and so is
  // a lone "-" (the placeholder for none: there is nothing to evaluate).
  std::string cell;
  if (!s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos && !is_number(s) && s != "-")
    cell = "'";
  cell += s;
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

// The length of the http(s) autolink "<https://...>" at the start of s, or 0.
std::size_t autolink_at(std::string_view s) {
  std::size_t i = util::starts_with(s, "<https://") ? 9 : util::starts_with(s, "<http://") ? 8 : 0;
  if (!i) return 0;
  for (; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (s[i] == '>') return i + 1;
    if (s[i] == '<' || u <= 0x20) return 0;
  }
  return 0;
}

std::string md_cell(std::string_view s) {
  // Markdown renders inline HTML: a '<' that does not open an autolink is written as &lt;.
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') {
      if (const std::size_t n = autolink_at(s.substr(i))) {
        for (std::size_t k = i; k < i + n; ++k) out += s[k] == '|' ? std::string("\\|") : std::string(1, s[k]);
        i += n - 1;
      } else {
        out += "&lt;";
      }
      continue;
    }
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// The mark inside gpuadvisor's own colour sequences: "\x1b[" MARK "1m". Hex digits only, so that
// display_width() still skips the sequence up to its 'm'; random for each run, so that input
// cannot spell a sequence that passes.
const std::string& colour_mark() {
  static const std::string mark = [] {
    std::random_device rd;
    const std::uint64_t v = (std::uint64_t{rd()} << 32) ^ rd();
    return fmt::format("{:016x}", v);
  }();
  return mark;
}

// Appends s by the safe_text rule; `newline` keeps '\n', `unmark` writes marked colour sequences
// as plain SGR codes (the output stream) instead of keeping the mark (text still to be laid out).
// Returns the bytes consumed: unless `final`, a tail that may be the start of a marked sequence or
// of a C1 control waits for the next write.
std::size_t sanitize(std::string& out, std::string_view s, bool newline, bool unmark, bool final) {
  const std::string& mark = colour_mark();
  std::size_t done = 0, i = 0;
  auto flush_to = [&](std::size_t k) {
    util::append_escaped(out, s.substr(done, k - done), newline ? "\n" : "");
    done = k;
  };
  for (; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u != 0x1b && u != 0xC2) continue;
    const std::size_t need = u == 0x1b ? 2 + mark.size() : 2;
    if (!final && s.size() - i < need) {
      // The rest is too short to tell; wait for more when it could still become one.
      const std::string_view rest = s.substr(i + 1);
      if (u == 0xC2 || ("[" + mark).compare(0, rest.size(), rest) == 0) break;
    }
    if (u == 0x1b && s.size() - i >= need && s[i + 1] == '[' && s.compare(i + 2, mark.size(), mark) == 0) {
      flush_to(i);
      out += unmark ? std::string_view("\x1b[") : s.substr(i, need);
      i += need - 1;
      done = i + 1;
    }
  }
  flush_to(i);
  return i;
}

}  // namespace

std::string markdown_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::size_t link = s[i] == '<' ? autolink_at(s.substr(i)) : 0;
    if (s[i] == '<' && !link) {
      out += "&lt;";
    } else if (link) {
      out.append(s.substr(i, link));
      i += link - 1;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string safe_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  sanitize(out, s, false, false, true);
  return out;
}

SafeStreambuf::~SafeStreambuf() { drain(true); }

void SafeStreambuf::drain(bool final) {
  if (pending_.empty() && (!final || line_.empty())) return;
  std::string out;
  out.reserve(pending_.size());
  const std::size_t used = sanitize(out, pending_, true, true, final);
  pending_.erase(0, used);
  if (wrap_ > 0) {
    line_ += out;
    out.clear();
    std::size_t start = 0;
    for (std::size_t nl; (nl = line_.find('\n', start)) != std::string::npos; start = nl + 1) {
      out += wrap_prose_line(std::string_view(line_).substr(start, nl - start), wrap_);
      out += '\n';
    }
    line_.erase(0, start);
    if (final && !line_.empty()) {
      out += wrap_prose_line(line_, wrap_);
      line_.clear();
    }
  }
  dest_->sputn(out.data(), static_cast<std::streamsize>(out.size()));
}

namespace {
// "FILE:LINE: error: ..." (the GCC diagnostic form that editors and CI jump from): kept whole.
bool is_diagnostic(std::string_view line) {
  const std::size_t space = std::min(line.find(' '), line.size());
  const std::string_view first = line.substr(0, space);
  if (first.size() < 4 || first.back() != ':') return false;
  const std::size_t colon = first.substr(0, first.size() - 1).rfind(':');
  if (colon == std::string_view::npos || colon + 2 >= first.size()) return false;
  const std::string_view digits = first.substr(colon + 1, first.size() - colon - 2);
  return digits.find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_unit(std::string_view w) {
  while (!w.empty() && (w.back() == ',' || w.back() == ';' || w.back() == '.' || w.back() == ')')) w.remove_suffix(1);
  static constexpr std::string_view kUnits[] = {"B",  "KiB",  "MiB",  "GiB",    "TiB",   "PiB",      "KB",     "MB",
                                                "GB", "TB",   "W",    "kW",     "MW",    "kWh",      "s",      "ms",
                                                "h",  "C",    "GB/s", "TB/s",   "tok/s", "tokens/s", "TFLOPS", "PFLOPS",
                                                "x",  "GPUs", "GPU",  "tokens", "days",  "hours"};
  return std::find(std::begin(kUnits), std::end(kUnits), w) != std::end(kUnits);
}
}  // namespace

std::string wrap_prose_line(std::string_view line, std::size_t width) {
  if (display_width(line) <= width || is_diagnostic(line)) return std::string(line);
  const std::size_t indent = std::min(line.find_first_not_of(' '), line.size());
  std::string_view rest = line.substr(indent);
  std::size_t prefix = indent;  // what the first line keeps before its words
  std::size_t hang = indent + 2;
  if (rest.starts_with("- ") || rest.starts_with("* ")) {
    prefix = hang = indent + 2;
  } else if (auto gap = rest.find("  "); gap != std::string_view::npos && gap > 0 && gap <= 24) {
    // "Key words     value": the value's column (a short key, then two spaces or more).
    prefix = hang = indent + std::min(rest.find_first_not_of(' ', gap), rest.size());
  }
  if (hang + 20 > width) hang = std::min<std::size_t>(indent, 2);
  std::string out(line.substr(0, prefix));
  std::string_view text = line.substr(out.size());
  std::size_t col = display_width(out);
  const std::string pad(hang, ' ');
  bool first_word = true;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = std::min(text.find(' ', pos), text.size());
    // A number keeps its unit on its line ("2.34 GiB", "700 W", "45.1 tok/s").
    if (end > pos && end < text.size() && std::isdigit(static_cast<unsigned char>(text[end - 1]))) {
      const std::size_t next = std::min(text.find(' ', end + 1), text.size());
      if (is_unit(text.substr(end + 1, next - end - 1))) end = next;
    }
    const std::string_view word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) {  // a run of spaces inside the text: kept while on the same line
      if (!first_word) {
        out += ' ';
        ++col;
      }
      continue;
    }
    const std::size_t w = display_width(word);
    if (!first_word && col + 1 + w > width) {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += '\n';
      out += pad;
      col = hang;
    } else if (!first_word) {
      out += ' ';
      ++col;
    }
    out += word;
    col += w;
    first_word = false;
  }
  return out;
}

SafeStreambuf::int_type SafeStreambuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  pending_ += traits_type::to_char_type(c);
  if (pending_.size() > hold_) drain(false);
  return c;
}

std::streamsize SafeStreambuf::xsputn(const char* s, std::streamsize n) {
  pending_.append(s, static_cast<std::size_t>(n));
  if (pending_.size() > hold_) drain(false);
  return n;
}

int SafeStreambuf::sync() {
  drain(true);
  return dest_->pubsync();
}

std::size_t display_width(std::string_view s) {
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

std::string ascii(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // Decode one UTF-8 sequence; a malformed one becomes a single '?'.
    std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    char32_t cp = len == 4 ? c & 0x07u : len == 3 ? c & 0x0Fu : c & 0x1Fu;
    bool ok = len > 1 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    i += ok ? len : 1;
    if (!ok) {
      out += '?';
      continue;
    }
    switch (cp) {
      case 0x00A0:
        out += ' ';
        break;
      case 0x00B1:
        out += "+/-";
        break;
      case 0x00B5:
      case 0x03BC:
        out += 'u';
        break;
      case 0x00B7:
      case 0x2022:
        out += '*';
        break;
      case 0x00D7:
        out += 'x';
        break;
      case 0x2013:
      case 0x2212:
        out += '-';
        break;
      case 0x2014:
        out += "--";
        break;
      case 0x2018:
      case 0x2019:
        out += '\'';
        break;
      case 0x201C:
      case 0x201D:
        out += '"';
        break;
      case 0x2026:
        out += "...";
        break;
      case 0x2190:
        out += "<-";
        break;
      case 0x2192:
        out += "->";
        break;
      case 0x2191:
        out += '^';
        break;
      case 0x2193:
        out += 'v';
        break;
      case 0x2248:
        out += '~';
        break;
      case 0x2260:
        out += "!=";
        break;
      case 0x2264:
        out += "<=";
        break;
      case 0x2265:
        out += ">=";
        break;
      default:
        if (cp >= 0x2500 && cp <= 0x257F) {
          // Box drawing: light and heavy horizontals and verticals, corners and crossings.
          const bool horizontal = cp == 0x2500 || cp == 0x2501 || cp == 0x2550;
          const bool vertical = cp == 0x2502 || cp == 0x2503 || cp == 0x2551;
          out += horizontal ? '-' : vertical ? '|' : '+';
        } else if (cp >= 0x2580 && cp <= 0x259F) {
          out += '#';
        } else {
          out += '?';
        }
    }
  }
  return out;
}

std::string truncate(std::string_view s, std::size_t width, const Style& style) {
  if (display_width(s) <= width) return std::string(s);
  const std::string_view dots = style.sym("\u2026", "...");
  const std::size_t keep = width > display_width(dots) ? width - display_width(dots) : 0;
  std::string out;
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80 && n++ == keep) break;
    out += s[i];
  }
  if (width < display_width(dots)) return out + std::string(width - keep, '.');
  return out + std::string(dots);
}

std::vector<std::string> wrap(std::string_view s, std::size_t width, const Style& style) {
  std::vector<std::string> lines;
  std::string cur;
  width = std::max<std::size_t>(width, 1);
  for (const auto& word : util::split(std::string(s), ' ')) {
    if (word.empty()) continue;
    if (!cur.empty() && display_width(cur) + 1 + display_width(word) <= width) {
      cur += ' ' + word;
      continue;
    }
    if (!cur.empty()) lines.push_back(cur);
    cur = truncate(word, width, style);
  }
  if (!cur.empty() || lines.empty()) lines.push_back(cur);
  return lines;
}

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
  int cols = 0;
  const bool tty = isatty(STDOUT_FILENO);
  if (winsize ws{}; tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) cols = ws.ws_col;
  return detect([](const char* name) { return static_cast<const char*>(std::getenv(name)); }, tty, cols);
}

Style Style::detect(const std::function<const char*(const char*)>& env, bool tty, int tty_columns) {
  auto get = [&](const char* name) -> std::string_view {
    const char* v = env(name);
    return v ? v : "";
  };
  Style st;
  st.color = tty && env("NO_COLOR") == nullptr;
  if (auto c = get("COLUMNS"); !c.empty()) {
    int w = std::atoi(std::string(c).c_str());
    if (w >= 40 && w <= 1000) st.width = w;
  } else if (tty && tty_columns >= 40) {
    st.width = std::min(tty_columns, 1000);
  }
  // The first of LC_ALL, LC_CTYPE, LANG that is set decides; none set is the "C" locale.
  std::string_view locale = get("LC_ALL");
  if (locale.empty()) locale = get("LC_CTYPE");
  if (locale.empty()) locale = get("LANG");
  std::string l = util::lower(locale);
  st.unicode = l.find("utf-8") != std::string::npos || l.find("utf8") != std::string::npos;
  if (auto a = get("GPUADVISOR_ASCII"); !a.empty() && a != "0") st.unicode = false;
  return st;
}

std::string Style::text(std::string_view s) const { return unicode ? std::string(s) : ascii(s); }

std::string Style::bold(std::string_view s) const {
  return color ? fmt::format("\x1b[{0}1m{1}\x1b[{0}0m", colour_mark(), s) : std::string(s);
}
std::string Style::dim(std::string_view s) const {
  return color ? fmt::format("\x1b[{0}2m{1}\x1b[{0}0m", colour_mark(), s) : std::string(s);
}
std::string Style::good(std::string_view s) const {
  return color ? fmt::format("\x1b[{0}32m{1}\x1b[{0}0m", colour_mark(), s) : std::string(s);
}
std::string Style::bad(std::string_view s) const {
  return color ? fmt::format("\x1b[{0}31m{1}\x1b[{0}0m", colour_mark(), s) : std::string(s);
}

Table::Table(std::vector<Column> columns) : cols_(std::move(columns)) {
  for (auto& c : cols_) c.header = safe_text(c.header);
}

void Table::add(std::vector<std::string> row) {
  row.resize(cols_.size());
  for (auto& c : row) c = safe_text(c);
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
  // Aligned text: two spaces between columns; trailing spaces trimmed. In ASCII mode the cells
  // are transliterated first, since that can change their widths.
  std::vector<std::string> hdr;
  for (const auto& c : cols_) hdr.push_back(style.text(c.header));
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : rows_) {
    std::vector<std::string> t;
    for (const auto& c : r) t.push_back(style.text(c));
    rows.push_back(std::move(t));
  }
  const std::size_t n = cols_.size(), none = n;
  for (std::size_t i = 0; i < n; ++i) {
    w[i] = width_of(hdr[i]);
    for (const auto& r : rows) w[i] = std::max(w[i], width_of(r[i]));
  }
  std::size_t gap = 2;  // spaces between columns
  auto line = [&](const std::vector<std::string>& cells, bool header, std::size_t skip) {
    std::string l;
    bool first = true;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i == skip) continue;
      l += (first ? "" : std::string(gap, ' ')) + pad(cells[i], w[i], cols_[i].align);
      first = false;
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return (header ? style.bold(l) : l) + "\n";
  };
  auto total = [&](std::size_t skip) {
    std::size_t t = 0, k = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (i != skip) t += w[i] + (k++ ? gap : 0);
    return t;
  };
  const auto limit = static_cast<std::size_t>(std::max(style.width, 1));
  if (total(none) <= limit || n < 2) {
    out += line(hdr, true, none);
    for (const auto& r : rows) out += line(r, false, none);
    return out;
  }
  // Too wide. First, headers wider than their cells go on two lines ("inference" over "fp16"),
  // split at the space nearest their middle; headers that do not split sit on the lower line.
  {
    std::vector<std::string> top(n), bottom = hdr;
    std::vector<std::size_t> w2 = w;
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t cells = 0;
      for (const auto& r : rows) cells = std::max(cells, width_of(r[i]));
      if (width_of(hdr[i]) <= cells) continue;
      std::size_t best = std::string::npos, best_w = width_of(hdr[i]);
      for (std::size_t k = hdr[i].find(' '); k != std::string::npos; k = hdr[i].find(' ', k + 1)) {
        const std::size_t hw = std::max(width_of(hdr[i].substr(0, k)), width_of(hdr[i].substr(k + 1)));
        if (hw < best_w) best = k, best_w = hw;
      }
      if (best == std::string::npos) continue;
      top[i] = hdr[i].substr(0, best);
      bottom[i] = hdr[i].substr(best + 1);
      w2[i] = std::max(cells, best_w);
    }
    // Then one space between columns instead of two.
    std::swap(w, w2);
    for (gap = 2; gap >= 1; --gap) {
      if (total(none) > limit) continue;
      if (w != w2) out += line(top, true, none);
      out += line(bottom, true, none);
      for (const auto& r : rows) out += line(r, false, none);
      return out;
    }
    gap = 2;
    std::swap(w, w2);
  }
  // Still too wide. The widest free-text column gives way next: it is the one that wraps well.
  std::size_t free = none;
  for (std::size_t i = 1; i < n; ++i)
    if (cols_[i].align == Align::left && (free == none || w[i] > w[free])) free = i;
  constexpr std::size_t kMinWrap = 16;
  if (free != none) {
    const std::size_t rest = total(free);
    const std::size_t avail = limit > rest + 2 ? limit - rest - 2 : 0;
    if (avail >= kMinWrap && avail >= width_of(hdr[free])) {
      // Wrap in place: continuation lines carry only the free column.
      w[free] = avail;
      out += line(hdr, true, none);
      for (const auto& r : rows) {
        auto parts = wrap(r[free], avail, style);
        std::vector<std::string> cells = r;
        for (std::size_t k = 0; k < parts.size(); ++k) {
          if (k) cells.assign(n, "");
          cells[free] = parts[k];
          out += line(cells, false, none);
        }
      }
      return out;
    }
    if (rest <= limit) {
      // The free column on its own lines under each row, aligned with the second column.
      const std::string indent(w[0] + 2, ' ');
      const std::string label = hdr[free] + ": ";
      const std::size_t room = std::max<std::size_t>(
          limit > indent.size() + width_of(label) ? limit - indent.size() - width_of(label) : 0, kMinWrap);
      out += line(hdr, true, free);
      for (const auto& r : rows) {
        out += line(r, false, free);
        if (r[free].empty()) continue;
        auto parts = wrap(r[free], room, style);
        for (std::size_t k = 0; k < parts.size(); ++k)
          out += indent + (k ? std::string(width_of(label), ' ') : label) + parts[k] + "\n";
      }
      return out;
    }
  }
  // Still too wide: one block per row, "header  value" lines under the row's first cell.
  std::size_t kw = 0;
  for (std::size_t i = 1; i < n; ++i) kw = std::max(kw, width_of(hdr[i]));
  const std::size_t room = std::max<std::size_t>(limit > kw + 4 ? limit - kw - 4 : 0, kMinWrap);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto& r = rows[k];
    if (k) out += "\n";
    out += style.bold(hdr[0].empty() ? r[0] : hdr[0] + " " + r[0]) + "\n";
    for (std::size_t i = 1; i < n; ++i) {
      if (r[i].empty()) continue;
      auto parts = wrap(r[i], room, style);
      for (std::size_t p = 0; p < parts.size(); ++p) {
        std::string l = "  " + pad(p ? "" : hdr[i], kw, Align::left) + "  " + parts[p];
        while (!l.empty() && l.back() == ' ') l.pop_back();
        out += l + "\n";
      }
    }
  }
  return out;
}

std::string csv_number(std::optional<double> v) {
  if (!v) return {};
  return std::fabs(*v) >= 1e6 ? fmt::format("{:.0f}", *v) : fmt::format("{:.6g}", *v);
}

std::string key_values(const std::vector<std::pair<std::string, std::string>>& kv, const Style& style) {
  std::size_t w = 0;
  for (const auto& [k, v] : kv) w = std::max(w, width_of(safe_text(k)));
  std::string out;
  for (const auto& [k, v] : kv) {
    if (k.empty()) {
      out += "\n";
      continue;
    }
    out += style.bold(pad(style.text(safe_text(k)), w, Align::left)) + "  " + style.text(safe_text(v)) + "\n";
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

std::string dump(const util::Json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; }

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
