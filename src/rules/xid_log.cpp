#include "gpuadvisor/rules/xid_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <unordered_map>
#include <unordered_set>

#include "gpuadvisor/util/text.h"

namespace gpuadvisor::rules {
namespace {

constexpr std::string_view kMarker = "NVRM: Xid";
constexpr std::string_view kDriver = "NVRM:";
constexpr std::size_t kMaxWarnings = 100;  // kept with their text; the rest are only counted
constexpr std::size_t kMaxGroups = 10000;  // GPU x code groups listed; events beyond are only counted

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool all_hex(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_hex); }

std::vector<std::string_view> words_of(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool looks_iso_date(std::string_view w) {  // 2024-03-05...
  return w.size() >= 10 && is_digit(w[0]) && is_digit(w[3]) && w[4] == '-' && is_digit(w[5]) && w[7] == '-';
}
bool looks_clock(std::string_view w) {  // 03:14:07, 03:14:07.123
  return w.size() >= 8 && is_digit(w[0]) && w[2] == ':' && w[5] == ':';
}

std::string shorten(std::string s, std::size_t n) {
  if (s.size() > n) s = s.substr(0, n - 3) + "...";
  return s;
}

// The first word of `text` that is a PCI address ("0000:01:00.0:" -> "0000:01:00").
std::string pci_in(std::string_view text) {
  for (auto w : words_of(text)) {
    while (!w.empty() && (w.back() == ':' || w.back() == ',' || w.back() == ')')) w.remove_suffix(1);
    while (!w.empty() && w.front() == '(') w.remove_prefix(1);
    if (w.find(':') == std::string_view::npos) continue;
    auto p = normalise_pci(w);
    if (!p.empty()) return p;
  }
  return "";
}

}  // namespace

std::string normalise_pci(std::string_view text) {
  std::string_view t = text;
  if (t.size() > 4 && (t.substr(0, 4) == "PCI:" || t.substr(0, 4) == "pci:")) t.remove_prefix(4);
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= t.size(); ++i)
    if (i == t.size() || t[i] == ':') {
      parts.push_back(t.substr(start, i - start));
      start = i + 1;
    }
  if (parts.size() != 2 && parts.size() != 3) return "";
  std::string_view domain = parts.size() == 3 ? parts[0] : std::string_view("0000");
  std::string_view bus = parts[parts.size() - 2];
  std::string_view dev = parts.back();
  if (auto dot = dev.find('.'); dot != std::string_view::npos) {
    if (!all_hex(dev.substr(dot + 1))) return "";
    dev = dev.substr(0, dot);
  }
  // Old drivers pad the bus to four digits without a domain ("Xid (0003:00): 8").
  while (bus.size() > 2 && bus.front() == '0') bus.remove_prefix(1);
  if (!all_hex(domain) || domain.size() > 8 || !all_hex(bus) || bus.size() > 2 || !all_hex(dev) || dev.size() > 2)
    return "";
  while (domain.size() > 4 && domain.front() == '0') domain.remove_prefix(1);
  std::string out = util::lower(std::string(4 - std::min<std::size_t>(4, domain.size()), '0') + std::string(domain));
  out += ':';
  out += util::lower(std::string(2 - bus.size(), '0') + std::string(bus));
  out += ':';
  out += util::lower(std::string(2 - dev.size(), '0') + std::string(dev));
  return out;
}

std::string log_timestamp(std::string_view before) {
  std::string_view b = before;
  auto trim_left = [&] {
    while (!b.empty() && (b.front() == ' ' || b.front() == '\t')) b.remove_prefix(1);
  };
  trim_left();
  // syslog priority "<4>"
  if (!b.empty() && b.front() == '<') {
    auto close = b.find('>');
    if (close != std::string_view::npos && close <= 4) b.remove_prefix(close + 1);
  }
  // /dev/kmsg: "priority,sequence,microseconds,flags;message"
  {
    std::size_t i = 0, commas = 0;
    std::size_t usec_start = 0, usec_end = 0;
    while (i < b.size() && (is_digit(b[i]) || b[i] == ',') && commas < 3) {
      if (b[i] == ',') {
        ++commas;
        if (commas == 2) usec_start = i + 1;
        if (commas == 3) usec_end = i;
      }
      ++i;
    }
    if (commas == 3 && b.find(';', i) != std::string_view::npos && usec_end > usec_start) {
      std::string_view us = b.substr(usec_start, usec_end - usec_start);
      if (us.size() <= 6) return fmt::format("0.{:0>6}", us);
      return fmt::format("{}.{}", us.substr(0, us.size() - 6), us.substr(us.size() - 6));
    }
  }
  // dmesg -x: "kern  :warn  : [ 8123.456] ..."
  if (b.size() > 5 && b.substr(0, 4) == "kern") {
    auto c1 = b.find(':');
    auto c2 = c1 == std::string_view::npos ? c1 : b.find(':', c1 + 1);
    if (c2 != std::string_view::npos && c2 < 20) {
      b.remove_prefix(c2 + 1);
      trim_left();
    }
  }
  if (!b.empty() && b.front() == '[') {
    auto close = b.find(']');
    if (close != std::string_view::npos) return util::trim(b.substr(1, close - 1));
  }
  auto w = words_of(b);
  if (w.empty()) return "";
  // Several words: the text from the first to the last, as written ("Mar  5 03:14:07").
  auto span = [](std::string_view first, std::string_view last) {
    return std::string(first.data(), static_cast<std::size_t>(last.data() + last.size() - first.data()));
  };
  if (w.size() >= 2 && w[0] == "1" && looks_iso_date(w[1])) return std::string(w[1]);  // RFC 5424
  if (looks_iso_date(w[0])) {
    if (w[0].size() == 10 && w.size() >= 2 && looks_clock(w[1])) return span(w[0], w[1]);
    return std::string(w[0]);
  }
  // journalctl -o short-full: "Tue 2024-03-05 03:14:07 UTC"
  if (w.size() >= 3 && w[0].size() == 3 && is_alpha(w[0][0]) && looks_iso_date(w[1]) && looks_clock(w[2])) {
    if (w.size() >= 4 && w[3].size() >= 3 &&
        std::all_of(w[3].begin(), w[3].end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); }))
      return span(w[0], w[3]);
    return span(w[0], w[2]);
  }
  // syslog / journalctl short: "Mar  5 03:14:07", "Mar 05 03:14:07.123456"
  if (w.size() >= 3 && w[0].size() == 3 && is_alpha(w[0][0]) && is_digit(w[1][0]) && looks_clock(w[2]))
    return span(w[0], w[2]);
  // journalctl -o short-unix: "1709608447.123456"
  if (w[0].size() >= 10 && std::all_of(w[0].begin(), w[0].end(), [](char c) { return is_digit(c) || c == '.'; }))
    return std::string(w[0]);
  // A bracketed time after a host and facility (Talos: "10.0.0.1: kern: warning: [2026-04-22T21:30:51Z]:").
  if (auto open = b.find('['); open != std::string_view::npos) {
    auto close = b.find(']', open);
    if (close != std::string_view::npos) {
      const std::string in = util::trim(b.substr(open + 1, close - open - 1));
      if (looks_iso_date(in) ||
          (!in.empty() && std::all_of(in.begin(), in.end(), [](char c) { return is_digit(c) || c == '.'; })))
        return std::string(in);
    }
  }
  return "";
}

int severity_rank(std::optional<catalog::XidSeverity> s) {
  if (!s) return 2;
  switch (*s) {
    case catalog::XidSeverity::critical:
      return 4;
    case catalog::XidSeverity::error:
      return 3;
    case catalog::XidSeverity::warning:
      return 1;
    case catalog::XidSeverity::info:
      return 0;
  }
  return 2;
}

Result<XidScan> scan_xid_log(std::string_view text, const std::string& origin, const catalog::XidTable& table) {
  using R = Result<XidScan>;
  XidScan scan;
  scan.origin = origin;
  std::unordered_map<std::string, std::size_t> group_of;  // pci, code, severity, label -> index in groups
  std::unordered_set<std::string> gpus;
  auto add = [&](int line_no, int code, const catalog::LogMessage* msg, std::string pci, std::string_view before,
                 std::string_view message) {
    const catalog::XidInfo* info = code ? table.find(code) : nullptr;
    std::optional<catalog::XidSeverity> sev;
    std::string label;
    if (msg)
      sev = msg->severity;
    else if (info) {
      sev = info->severity;
      for (const auto& m : info->message_severity) {
        std::string_view hay = message;
        if (!m.after.empty()) {
          auto a = hay.rfind(m.after);
          if (a != std::string_view::npos) hay.remove_prefix(a + m.after.size());
        }
        if (hay.find(m.contains) != std::string_view::npos) {
          sev = m.severity;
          label = m.label;
          break;
        }
      }
    }
    std::string key =
        fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", pci, code, msg ? msg->id : "", severity_rank(sev), label);
    if (group_of.size() >= kMaxGroups && !group_of.count(key)) {
      ++scan.events;
      ++scan.unlisted_events;
      if (sev == catalog::XidSeverity::critical) scan.critical++;
      return;
    }
    auto [it, fresh] = group_of.try_emplace(std::move(key), scan.groups.size());
    std::string ts = log_timestamp(before);
    if (fresh) {
      XidGroup g;
      g.pci = pci;
      g.code = code;
      g.info = info;
      g.log_message = msg;
      g.severity = sev;
      g.label = label;
      g.first_line = line_no;
      g.first_time = ts;
      g.sample = shorten(util::trim(message), 120);
      scan.groups.push_back(std::move(g));
    }
    auto& g = scan.groups[it->second];
    g.count++;
    g.last_line = line_no;
    g.last_time = std::move(ts);
    ++scan.events;
    if (sev == catalog::XidSeverity::critical) scan.critical++;
    if (gpus.insert(pci).second) scan.gpus.push_back(std::move(pci));
  };

  // The driver splits some messages over lines ("NVRM: The NVIDIA GPU 0000:b3:00.0" / "NVRM: (PCI ID:
  // 10de:26b5) installed in this system has" / "NVRM: fallen off the bus ..."): the last address an
  // NVRM line named, within a few lines, stands for a continuation line without one.
  std::string last_pci;
  int last_pci_line = -100;
  util::LineReader lines(text);
  std::string_view line;
  while (lines.next(line)) {
    const int line_no = lines.number();
    if (line.find('\0') != std::string_view::npos)
      return R::fail(
          fmt::format("{}:{}: binary data (a NUL byte), expected kernel log text (dmesg, journalctl -k or syslog)",
                      origin, line_no));
    auto drv = line.find(kDriver);
    if (drv == std::string_view::npos) continue;
    auto at = line.find(kMarker, drv);
    if (at == std::string_view::npos) {
      std::string pci = pci_in(line.substr(drv + kDriver.size()));
      if (!pci.empty()) {
        last_pci = pci;
        last_pci_line = line_no;
      } else if (line_no - last_pci_line <= 3) {
        pci = last_pci;
      }
      for (const auto& m : table.log_messages())
        if (line.find(m.contains, drv) != std::string_view::npos) {
          add(line_no, 0, &m, pci.empty() ? "unknown" : pci, line.substr(0, drv), line.substr(drv + kDriver.size()));
          break;
        }
      continue;
    }
    auto skip = [&](std::string_view what) {
      if (scan.warnings.size() < kMaxWarnings)
        scan.warnings.push_back(
            {line_no, fmt::format("malformed Xid line skipped: {}; expected 'NVRM: Xid (PCI:0000:3b:00): 79, "
                                  "...', got {}",
                                  what, util::quote(line.substr(at), 80))});
      ++scan.warnings_total;
    };
    std::string_view rest = line.substr(at + kMarker.size());
    while (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
    if (rest.empty() || rest[0] != '(') {
      skip("no '(' before the PCI address");
      continue;
    }
    auto close = rest.find(')');
    if (close == std::string_view::npos) {
      skip("no ')' after the PCI address (a cut-off line?)");
      continue;
    }
    std::string pci = normalise_pci(util::trim(rest.substr(1, close - 1)));
    if (pci.empty()) {
      // An address elided when posting ("(PCI:...)"): the Xid still counts, under an unknown GPU.
      if (scan.warnings.size() < kMaxWarnings)
        scan.warnings.push_back({line_no, fmt::format("the PCI address {} is not like 0000:3b:00: the Xid is counted "
                                                      "under an unknown GPU",
                                                      util::quote(rest.substr(1, close - 1), 40))});
      ++scan.warnings_total;
      pci = "unknown";
    }
    rest = rest.substr(close + 1);
    if (rest.empty() || rest[0] != ':') {
      skip("no ':' after the PCI address (a cut-off line?)");
      continue;
    }
    rest.remove_prefix(1);
    while (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
    int code = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), code);
    if (ec != std::errc() || p == rest.data() || code <= 0) {
      skip("no Xid number after the address");
      continue;
    }
    rest.remove_prefix(static_cast<std::size_t>(p - rest.data()));
    if (!rest.empty() && rest[0] != ',' && rest[0] != ' ') {
      skip("the Xid number is followed by text");
      continue;
    }
    while (!rest.empty() && (rest[0] == ',' || rest[0] == ' ')) rest.remove_prefix(1);
    add(line_no, code, nullptr, std::move(pci), line.substr(0, drv), rest);
  }
  scan.lines = static_cast<std::size_t>(lines.number());

  // A driver message that says the same as an Xid the same GPU also logged ("GPU has fallen off the
  // bus." beside Xid 79) is that Xid's echo, not another event.
  std::unordered_set<std::string> logged;  // pci and code of every Xid group
  for (const auto& g : scan.groups)
    if (g.code) logged.insert(fmt::format("{}\x1f{}", g.pci, g.code));
  std::erase_if(scan.groups, [&](const XidGroup& g) {
    if (!g.log_message || !g.log_message->same_as_xid ||
        !logged.count(fmt::format("{}\x1f{}", g.pci, *g.log_message->same_as_xid)))
      return false;
    scan.events -= static_cast<std::size_t>(g.count);
    if (g.severity == catalog::XidSeverity::critical) scan.critical -= static_cast<std::size_t>(g.count);
    return true;
  });

  std::sort(scan.groups.begin(), scan.groups.end(), [](const XidGroup& a, const XidGroup& b) {
    int ra = severity_rank(a.severity), rb = severity_rank(b.severity);
    if (ra != rb) return ra > rb;
    if (a.count != b.count) return a.count > b.count;
    if (a.pci != b.pci) return a.pci < b.pci;
    if ((a.code == 0) != (b.code == 0)) return a.code != 0;  // an Xid before the driver message beside it
    if (a.code != b.code) return a.code < b.code;
    return a.first_line < b.first_line;
  });
  return scan;
}

}  // namespace gpuadvisor::rules
