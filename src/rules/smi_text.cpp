// nvidia-smi's two text outputs, read into the same capture as its CSV: the boxed table plain
// `nvidia-smi` prints, and the `nvidia-smi -q` report. Each carries fewer fields than inspect's
// --query-gpu list; the checks that need the others say "not captured".
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "gpuadvisor/rules/inspect.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::rules {
namespace {

using Values = std::map<std::string, std::string>;

std::vector<std::string> tokens(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// A number with its unit glued on ("45C", "20W", "585MiB", "3%"), as the table prints it; the unit
// must be the one given. "N/A" and anything else: nullopt.
std::optional<std::string> with_unit(std::string_view tok, std::string_view unit) {
  if (!util::ends_with(tok, unit)) return std::nullopt;
  std::string_view n = tok.substr(0, tok.size() - unit.size());
  if (!util::parse_number(n)) return std::nullopt;
  return std::string(n);
}

// The capture's fields, in the order of inspect's query; every row has a cell for each ("[N/A]"
// where this GPU did not show it).
SmiCapture to_capture(const std::string& origin, SmiShape shape, const std::vector<std::pair<int, Values>>& gpus) {
  SmiCapture cap;
  cap.origin = origin;
  cap.shape = shape;
  cap.has_header = true;
  for (auto f : smi_query_fields(0)) {
    const std::string name(f);
    if (std::any_of(gpus.begin(), gpus.end(), [&](const auto& g) { return g.second.count(name) > 0; }))
      cap.fields.push_back(name);
  }
  for (std::size_t i = 0; i < cap.fields.size(); ++i) cap.column.emplace(cap.fields[i], i);
  for (const auto& [line, values] : gpus) {
    SmiRow row;
    row.line = line;
    for (const auto& f : cap.fields) {
      auto it = values.find(f);
      row.cells.push_back(it == values.end() ? "[N/A]" : it->second);
    }
    cap.rows.push_back(std::move(row));
  }
  return cap;
}

Result<SmiCapture> no_gpus(const std::string& origin, std::string_view what) {
  return Result<SmiCapture>::fail(
      fmt::format("{}: nvidia-smi's {} output with no GPU in it (cut short?); capture with: {}", origin, what,
                  smi_query_command()));
}

// The value as the CSV would print it: "N/A" and "Not Supported" in brackets, units dropped.
std::string cell(std::string v) {
  v = util::trim(v);
  if (v == "N/A" || v == "Not Supported" || v == "Unknown Error" || v == "Requested functionality has been deprecated")
    return "[" + v + "]";
  for (std::string_view unit : {" MiB", " W", " C", " %", " MHz"})
    if (util::ends_with(v, unit)) return v.substr(0, v.size() - unit.size());
  if (v.size() > 1 && v.back() == 'x' && all_digits(std::string_view(v).substr(0, v.size() - 1)))
    return v.substr(0, v.size() - 1);  // link width "16x"
  return v;
}

}  // namespace

// "00000000:3B:00.0" (table and -q) or "0000:3b:00.0".
bool looks_like_bus_id(std::string_view s) {
  auto colon = s.find(':');
  auto dot = s.rfind('.');
  return colon != std::string_view::npos && dot != std::string_view::npos && dot > colon &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'; });
}

std::optional<std::string> parse_pci_device_id(std::string_view s) {
  if (s.size() != 10 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return std::nullopt;
  if (!std::all_of(s.begin() + 2, s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  if (util::lower(s.substr(6)) != "10de") return std::nullopt;
  return "0x" + util::lower(s.substr(2, 4));
}

// Both are recognised in the first lines (a pasted table often starts with the date line).
bool looks_like_smi_table(std::string_view text) {
  std::string_view head = text.substr(0, 2048);
  if (head.find("NVIDIA-SMI has failed") != std::string_view::npos) return false;
  // Drivers from R610 print "KMD Version" where older ones print "Driver Version".
  if (head.find("NVIDIA-SMI ") != std::string_view::npos &&
      (head.find("Driver Version") != std::string_view::npos || head.find("KMD Version") != std::string_view::npos))
    return true;
  // A paste that starts inside the box.
  std::string first = util::trim(head.substr(0, head.find('\n')));
  return util::starts_with(first, "+---") || util::starts_with(first, "|===") || util::starts_with(first, "| NVIDIA");
}

bool looks_like_smi_query(std::string_view text) {
  std::string_view head = text.substr(0, 2048);
  return head.find("==NVSMI LOG==") != std::string_view::npos ||
         (head.find("Driver Version") != std::string_view::npos &&
          head.find("Attached GPUs") != std::string_view::npos);
}

Result<SmiCapture> parse_smi_table(std::string_view text, const std::string& origin) {
  std::string driver;
  std::vector<std::pair<int, Values>> gpus;
  int row_of_gpu = 0;  // 1 after a GPU's first line, 2 after its second
  bool in_gpus = true;
  util::LineReader lines(text);
  std::string_view line;
  while (lines.next(line)) {
    std::string t = util::trim(line);
    for (std::string_view label : {"Driver Version:", "KMD Version:"})
      if (auto p = t.find(label); p != std::string::npos) {
        auto tok = tokens(std::string_view(t).substr(p + label.size()));
        if (!tok.empty()) driver = tok.front();
      }
    // The processes and MIG-device tables below the GPUs have rows of the same shape.
    if (t.find("Processes:") != std::string::npos || t.find("MIG devices:") != std::string::npos) in_gpus = false;
    if (!in_gpus || !util::starts_with(t, "|")) continue;
    auto parts = util::split(t, '|');
    std::vector<std::string> cells;
    for (std::size_t i = 1; i + 1 < parts.size(); ++i) cells.push_back(parts[i]);
    if (cells.size() < 3) continue;
    auto c0 = tokens(cells[0]), c1 = tokens(cells[1]), c2 = tokens(cells[2]);
    // A GPU's first line: "|   0  NVIDIA A100-SXM4-80GB   On  | 00000000:07:00.0 Off |   0 |"; on
    // Windows the last word is the driver model (WDDM or TCC), not persistence.
    const bool persistence = !c0.empty() && (c0.back() == "On" || c0.back() == "Off");
    const bool driver_model = !c0.empty() && (c0.back() == "WDDM" || c0.back() == "TCC" || c0.back() == "MCDM");
    if (c0.size() >= 3 && all_digits(c0.front()) && (persistence || driver_model) && !c1.empty() &&
        looks_like_bus_id(c1.front())) {
      Values v;
      v["index"] = c0.front();
      std::vector<std::string> name(c0.begin() + 1, c0.end() - 1);
      v["name"] = util::join(name, " ");
      if (persistence) v["persistence_mode"] = c0.back() == "On" ? "Enabled" : "Disabled";
      v["pci.bus_id"] = c1.front();
      if (!driver.empty()) v["driver_version"] = driver;
      // Volatile Uncorr. ECC: a count with ECC on, "Off" with it off, "N/A" where the card has none.
      if (!c2.empty() && all_digits(c2.back())) {
        v["ecc.mode.current"] = "Enabled";
        v["ecc.errors.uncorrected.volatile.total"] = c2.back();
      } else if (!c2.empty() && c2.back() == "Off") {
        v["ecc.mode.current"] = "Disabled";
      } else if (!c2.empty() && c2.back() == "On") {
        v["ecc.mode.current"] = "Enabled";  // MIG mode shows "On" in place of the count
      }
      gpus.emplace_back(lines.number(), std::move(v));
      row_of_gpu = 1;
      continue;
    }
    if (gpus.empty() || row_of_gpu == 0) continue;
    Values& v = gpus.back().second;
    if (row_of_gpu == 1) {
      // "| 30%   45C    P8    20W / 450W |    585MiB / 24564MiB |   3%   Default |"
      for (std::size_t i = 0; i < c0.size(); ++i) {
        if (auto c = with_unit(c0[i], "C"); c && !v.count("temperature.gpu")) v["temperature.gpu"] = *c;
        if (c0[i].size() >= 2 && c0[i][0] == 'P' && all_digits(std::string_view(c0[i]).substr(1))) v["pstate"] = c0[i];
        if (auto w = with_unit(c0[i], "W")) {
          const bool after_slash = i > 0 && c0[i - 1] == "/";
          v[after_slash ? "power.limit" : "power.draw"] = *w;
        }
      }
      if (c1.size() >= 3 && c1[1] == "/")
        if (auto m = with_unit(c1[2], "MiB")) v["memory.total"] = *m;
      if (!c2.empty())
        if (auto u = with_unit(c2.front(), "%")) v["utilization.gpu"] = *u;
      row_of_gpu = 2;
      continue;
    }
    // The third line (drivers from R450 on MIG-capable cards, every card from R525): "MIG M.".
    if (c0.empty() && c1.empty() && c2.size() == 1 && (c2[0] == "Enabled" || c2[0] == "Disabled"))
      v["mig.mode.current"] = c2[0];
    row_of_gpu = 0;
  }
  if (gpus.empty()) return no_gpus(origin, "table");
  return to_capture(origin, SmiShape::table, gpus);
}

Result<SmiCapture> parse_smi_query(std::string_view text, const std::string& origin) {
  std::string driver;
  std::vector<std::pair<int, Values>> gpus;
  std::vector<std::pair<std::size_t, std::string>> sections;  // indent, name: the path to a key
  // ECC counts are summed over SRAM and DRAM (R550 on) or read from the per-kind totals (older).
  std::map<std::string, std::optional<double>> ecc_sums;
  auto flush_ecc = [&] {
    if (gpus.empty()) return;
    for (const auto& [f, sum] : ecc_sums) gpus.back().second[f] = sum ? fmt::format("{}", *sum) : "[N/A]";
    ecc_sums.clear();
  };
  util::LineReader lines(text);
  std::string_view line;
  while (lines.next(line)) {
    std::string_view raw = line;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::string t = util::trim(raw);
    if (t.empty()) continue;
    const std::size_t indent = raw.find_first_not_of(" \t");
    // "GPU 00000000:07:00.0" starts a GPU.
    if (indent == 0 && util::starts_with(t, "GPU ") && looks_like_bus_id(t.substr(4))) {
      flush_ecc();
      Values v;
      v["index"] = std::to_string(gpus.size());
      v["pci.bus_id"] = t.substr(4);
      if (!driver.empty()) v["driver_version"] = driver;
      gpus.emplace_back(lines.number(), std::move(v));
      sections.clear();
      continue;
    }
    auto colon = t.find(" : ");
    std::string key = util::trim(colon == std::string::npos ? (util::ends_with(t, ":") ? t.substr(0, t.size() - 1) : t)
                                                            : t.substr(0, colon));
    const bool has_value = colon != std::string::npos || util::ends_with(t, " :");
    std::string value = colon == std::string::npos ? "" : util::trim(t.substr(colon + 3));
    while (!sections.empty() && sections.back().first >= indent) sections.pop_back();
    if (!has_value) {
      sections.emplace_back(indent, key);
      continue;
    }
    if (key == "Driver Version" && gpus.empty()) {
      driver = value;
      continue;
    }
    if (gpus.empty()) continue;
    std::string path;
    for (const auto& s : sections) path += s.second + "/";
    path += key;
    Values& v = gpus.back().second;
    static const std::map<std::string, std::string, std::less<>> kPaths = {
        {"Product Name", "name"},
        {"Serial Number", "serial"},
        {"PCI/Device Id", "pci.device_id"},
        {"VBIOS Version", "vbios_version"},
        {"Persistence Mode", "persistence_mode"},
        {"MIG Mode/Current", "mig.mode.current"},
        {"MIG Mode/Pending", "mig.mode.pending"},
        {"PCI/GPU Link Info/PCIe Generation/Max", "pcie.link.gen.max"},
        {"PCI/GPU Link Info/PCIe Generation/Current", "pcie.link.gen.current"},
        {"PCI/GPU Link Info/Link Width/Max", "pcie.link.width.max"},
        {"PCI/GPU Link Info/Link Width/Current", "pcie.link.width.current"},
        {"Performance State", "pstate"},
        {"FB Memory Usage/Total", "memory.total"},
        {"Utilization/Gpu", "utilization.gpu"},
        {"ECC Mode/Current", "ecc.mode.current"},
        {"Retired Pages/Single Bit ECC", "retired_pages.single_bit_ecc.count"},
        {"Retired Pages/Double Bit ECC", "retired_pages.double_bit.count"},
        {"Retired Pages/Pending Page Blacklist", "retired_pages.pending"},
        {"Retired Pages/Pending", "retired_pages.pending"},
        {"Remapped Rows/Correctable Error", "remapped_rows.correctable"},
        {"Remapped Rows/Uncorrectable Error", "remapped_rows.uncorrectable"},
        {"Remapped Rows/Pending", "remapped_rows.pending"},
        {"Remapped Rows/Remapping Failure Occurred", "remapped_rows.failure"},
        {"Temperature/GPU Current Temp", "temperature.gpu"},
        {"Temperature/GPU T.Limit Temp", "temperature.gpu.tlimit"},
        {"Power Readings/Power Draw", "power.draw"},
        {"GPU Power Readings/Power Draw", "power.draw"},
        {"GPU Power Readings/Instantaneous Power Draw", "power.draw"},
        {"Power Readings/Power Limit", "power.limit"},
        {"GPU Power Readings/Current Power Limit", "power.limit"},
        {"Power Readings/Default Power Limit", "power.default_limit"},
        {"GPU Power Readings/Default Power Limit", "power.default_limit"},
        {"Power Readings/Max Power Limit", "power.max_limit"},
        {"GPU Power Readings/Max Power Limit", "power.max_limit"},
    };
    if (auto it = kPaths.find(path); it != kPaths.end()) {
      // Drivers from R535 print "Pending : Yes" under Remapped Rows and R470 "Pending Page Blacklist".
      if (!(it->second == "power.draw" && v.count("power.draw"))) v[it->second] = cell(value);
      continue;
    }
    // ECC counts: "ECC Errors/Volatile/DRAM Correctable" (R550+), ".../Single Bit/Total" (older).
    for (std::string_view scope : {"Volatile", "Aggregate"}) {
      const std::string prefix = fmt::format("ECC Errors/{}/", scope);
      if (!util::starts_with(path, prefix)) continue;
      std::string rest = path.substr(prefix.size());
      const bool old_total = util::ends_with(rest, "/Total");
      const bool uncorrected = rest.find("Uncorrectable") != std::string::npos || util::starts_with(rest, "Double Bit");
      const bool corrected = !uncorrected && (rest.find("Correctable") != std::string::npos ||
                                              (util::starts_with(rest, "Single Bit") && old_total));
      if ((!corrected && !uncorrected) || (util::starts_with(rest, "Double Bit") && !old_total)) continue;
      const std::string field = fmt::format("ecc.errors.{}.{}.total", uncorrected ? "uncorrected" : "corrected",
                                            scope == "Volatile" ? "volatile" : "aggregate");
      auto& sum = ecc_sums[field];
      if (auto n = util::parse_number(value)) sum = sum.value_or(0) + *n;
    }
  }
  flush_ecc();
  if (gpus.empty()) return no_gpus(origin, "-q");
  return to_capture(origin, SmiShape::query, gpus);
}

}  // namespace gpuadvisor::rules
