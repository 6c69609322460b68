#include "gpuadvisor/rules/xid_log.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "gpuadvisor/util/text.h"

namespace gpuadvisor::rules {
namespace {

constexpr std::string_view kMarker = "NVRM: Xid";

bool is_hex_or_colon(char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'; }

// The log's own timestamp: "[ 8123.456789] ..." (dmesg), "[Tue Mar  5 03:14:07 2024] ..." (dmesg -T),
// "Mar  5 03:14:07 host kernel: ..." (syslog, journalctl), "2024-03-05T03:14:07.123+00:00 host kernel: ...".
std::string timestamp_of(std::string_view before) {
  std::string b = util::trim(before);
  if (!b.empty() && b[0] == '[') {
    auto close = b.find(']');
    if (close != std::string::npos) return util::trim(b.substr(1, close - 1));
  }
  auto words = util::split(b, ' ');
  words.erase(std::remove(words.begin(), words.end(), std::string()), words.end());
  if (words.empty()) return "";
  if (std::isdigit(static_cast<unsigned char>(words[0][0])) && words[0].find('T') != std::string::npos) return words[0];
  if (words.size() >= 3 && words[0].size() == 3 && std::isalpha(static_cast<unsigned char>(words[0][0])) &&
      words[2].find(':') != std::string::npos)
    return words[0] + " " + words[1] + " " + words[2];
  return "";
}

std::string shorten(std::string s, std::size_t n) {
  if (s.size() > n) s = s.substr(0, n - 3) + "...";
  return s;
}

}  // namespace

int severity_rank(const catalog::XidInfo* info) {
  if (!info) return 2;
  switch (info->severity) {
    case catalog::XidSeverity::critical: return 4;
    case catalog::XidSeverity::error: return 3;
    case catalog::XidSeverity::warning: return 1;
    case catalog::XidSeverity::info: return 0;
  }
  return 2;
}

Result<XidScan> scan_xid_log(std::string_view text, const std::string& origin, const catalog::XidTable& table) {
  using R = Result<XidScan>;
  XidScan scan;
  scan.origin = origin;
  util::LineReader lines(text);
  std::string_view line;
  while (lines.next(line)) {
    const int line_no = lines.number();
    if (line.find('\0') != std::string_view::npos)
      return R::fail(fmt::format("{}:{}: binary data (a NUL byte), expected kernel log text (dmesg, journalctl -k or syslog)",
                                 origin, line_no));
    auto at = line.find(kMarker);
    if (at == std::string_view::npos) continue;
    auto malformed = [&](std::string_view what) {
      return R::fail(fmt::format("{}:{}: malformed Xid line: {}; expected 'NVRM: Xid (PCI:0000:3b:00): 79, ...', got {}",
                                 origin, line_no, what, util::quote(line.substr(at), 80)));
    };
    std::string_view rest = line.substr(at + kMarker.size());
    while (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
    if (rest.empty() || rest[0] != '(') return malformed("no '(' before the PCI address");
    auto close = rest.find(')');
    if (close == std::string_view::npos) return malformed("no ')' after the PCI address");
    std::string pci(rest.substr(1, close - 1));
    if (util::starts_with(pci, "PCI:")) pci = pci.substr(4);
    if (pci.empty() || !std::all_of(pci.begin(), pci.end(), is_hex_or_colon) || pci.find(':') == std::string::npos)
      return malformed("the PCI address is not like 0000:3b:00");
    pci = util::lower(pci);
    rest = rest.substr(close + 1);
    if (rest.empty() || rest[0] != ':') return malformed("no ':' after the PCI address");
    rest.remove_prefix(1);
    while (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
    int code = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), code);
    if (ec != std::errc() || p == rest.data() || code <= 0) return malformed("no Xid number after the address");
    rest.remove_prefix(static_cast<std::size_t>(p - rest.data()));
    if (!rest.empty() && rest[0] != ',' && rest[0] != ' ') return malformed("the Xid number is followed by text");
    while (!rest.empty() && (rest[0] == ',' || rest[0] == ' ')) rest.remove_prefix(1);
    XidEvent ev;
    ev.line = line_no;
    ev.code = code;
    ev.pci = pci;
    ev.timestamp = timestamp_of(line.substr(0, at));
    ev.message = shorten(util::trim(rest), 120);
    scan.events.push_back(std::move(ev));
  }
  scan.lines = static_cast<std::size_t>(lines.number());

  for (const auto& ev : scan.events) {
    if (std::find(scan.gpus.begin(), scan.gpus.end(), ev.pci) == scan.gpus.end()) scan.gpus.push_back(ev.pci);
    auto it = std::find_if(scan.groups.begin(), scan.groups.end(),
                           [&](const XidGroup& g) { return g.pci == ev.pci && g.code == ev.code; });
    if (it == scan.groups.end()) {
      XidGroup g;
      g.pci = ev.pci;
      g.code = ev.code;
      g.info = table.find(ev.code);
      g.first_line = ev.line;
      g.first_time = ev.timestamp;
      g.sample = ev.message;
      scan.groups.push_back(g);
      it = scan.groups.end() - 1;
    }
    it->count++;
    it->last_line = ev.line;
    it->last_time = ev.timestamp;
    if (it->info && it->info->severity == catalog::XidSeverity::critical) scan.critical++;
  }
  std::stable_sort(scan.groups.begin(), scan.groups.end(), [](const XidGroup& a, const XidGroup& b) {
    int ra = severity_rank(a.info), rb = severity_rank(b.info);
    if (ra != rb) return ra > rb;
    if (a.count != b.count) return a.count > b.count;
    if (a.pci != b.pci) return a.pci < b.pci;
    return a.code < b.code;
  });
  return scan;
}

}  // namespace gpuadvisor::rules
