#include "gpuadvisor/rules/inspect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::rules {
namespace {

// The query, in nvidia-smi's own field names (nvidia-smi --help-query-gpu).
constexpr std::string_view kFields[] = {
    "index",
    "name",
    "pci.bus_id",
    "pci.device_id",
    "serial",
    "driver_version",
    "vbios_version",
    "memory.total",
    "pstate",
    "utilization.gpu",
    "temperature.gpu",
    "temperature.gpu.tlimit",
    "power.draw",
    "power.limit",
    "power.default_limit",
    "power.max_limit",
    "clocks_throttle_reasons.active",
    "pcie.link.gen.current",
    "pcie.link.gen.max",
    "pcie.link.width.current",
    "pcie.link.width.max",
    "persistence_mode",
    "ecc.mode.current",
    "ecc.errors.corrected.volatile.total",
    "ecc.errors.uncorrected.volatile.total",
    "ecc.errors.corrected.aggregate.total",
    "ecc.errors.uncorrected.aggregate.total",
    "retired_pages.single_bit_ecc.count",
    "retired_pages.double_bit.count",
    "retired_pages.pending",
    "remapped_rows.correctable",
    "remapped_rows.uncorrectable",
    "remapped_rows.pending",
    "remapped_rows.failure",
    "mig.mode.current",
    "mig.mode.pending",
};

// Other spellings nvidia-smi accepts or prints for the same fields. Drivers from 535 print
// clocks_event_reasons.* headers for clocks_throttle_reasons.* queries.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"clocks_event_reasons.active", "clocks_throttle_reasons.active"},
    {"gpu_name", "name"},
    {"gpu_bus_id", "pci.bus_id"},
    {"gpu_serial", "serial"},
    {"retired_pages.sbe", "retired_pages.single_bit_ecc.count"},
    {"retired_pages.dbe", "retired_pages.double_bit.count"},
    {"retired_pages.double_bit_ecc.count", "retired_pages.double_bit.count"},
    {"persistence-mode", "persistence_mode"},
};

// The fields a check reads (the rest identify the card).
constexpr std::string_view kCheckedFields[] = {
    "memory.total",
    "temperature.gpu",
    "power.limit",
    "power.default_limit",
    "clocks_throttle_reasons.active",
    "pcie.link.gen.current",
    "pcie.link.gen.max",
    "pcie.link.width.current",
    "pcie.link.width.max",
    "persistence_mode",
    "ecc.mode.current",
    "ecc.errors.uncorrected.volatile.total",
    "ecc.errors.uncorrected.aggregate.total",
    "driver_version",
};

constexpr std::string_view kChecks[] = {
    "gpu-lost",      "identify",         "memory-size", "ecc-mode", "ecc-uncorrected", "ecc-corrected",
    "retired-pages", "remapped-rows",    "temperature", "throttle", "power-cap",       "pcie-gen",
    "pcie-width",    "persistence-mode", "mig",         "driver",   "capture",
};

// Clocks throttle (event) reason bits, nvml.h nvmlClocksThrottleReason*.
struct ReasonBit {
  unsigned long long bit;
  std::string_view name;
  Verdict verdict;
};
constexpr ReasonBit kReasons[] = {
    {0x1, "GPU idle", Verdict::pass},
    {0x2, "applications clocks setting", Verdict::pass},
    {0x4, "software power cap", Verdict::pass},
    {0x8, "hardware slowdown", Verdict::fail},
    {0x10, "sync boost", Verdict::pass},
    {0x20, "software thermal slowdown", Verdict::warn},
    {0x40, "hardware thermal slowdown", Verdict::fail},
    {0x80, "hardware power brake slowdown", Verdict::fail},
    {0x100, "display clocks setting", Verdict::pass},
};

// Without temperature.gpu.tlimit the slowdown threshold is unknown; warn above this (issue 7).
constexpr double kHotC = 85;
// Margin to the slowdown threshold below which a card is running hot.
constexpr double kMarginWarnC = 10;

std::string canonical(std::string_view header) {
  std::string h = util::trim(header);
  if (auto b = h.find(" ["); b != std::string::npos) h = util::trim(h.substr(0, b));
  if (auto b = h.find('['); b != std::string::npos) h = util::trim(h.substr(0, b));
  for (const auto& [from, to] : kAliases)
    if (h == from) return std::string(to);
  return h;
}

bool known_field(std::string_view f) {
  return std::find(std::begin(kFields), std::end(kFields), f) != std::end(kFields);
}

Verdict worse(Verdict a, Verdict b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }

std::string fmt_num(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f}", v);
  return fmt::format("{:.2f}", v);
}

// Typed access to one row's cells with errors that name the line and the field.
class Row {
 public:
  Row(const SmiRow& r, const SmiCapture& cap) : r_(r), cap_(cap) {}

  bool captured(std::string_view f) const { return cap_.cell(r_, f) != nullptr; }
  std::string text(std::string_view f) const {
    const std::string* c = cap_.cell(r_, f);
    return c ? *c : "";
  }
  /// Captured and a real value (not [N/A], [Not Supported], ...).
  bool has(std::string_view f) const { return captured(f) && !unavailable(text(f)); }
  static bool unavailable(const std::string& v) {
    std::string l = util::lower(v);
    return l.empty() || (l.front() == '[' && l.back() == ']') || l == "n/a" || l == "not supported" ||
           l == "unknown error";
  }
  static bool lost(const std::string& v) { return util::lower(v).find("gpu is lost") != std::string::npos; }

  std::optional<double> num(std::string_view f) const {
    if (!has(f)) return std::nullopt;
    std::string v = text(f);
    // Values carry units ("24564 MiB", "450.00 W", "41 %") unless captured with nounits.
    std::string n = v;
    if (auto sp = n.find(' '); sp != std::string::npos) n = n.substr(0, sp);
    auto parsed = util::parse_number(n);
    if (!parsed) fail(f, fmt::format("expected a number, got {}", util::quote(v)));
    return *parsed;
  }
  std::optional<bool> flag(std::string_view f) const {
    if (!has(f)) return std::nullopt;
    std::string l = util::lower(text(f));
    if (l == "yes" || l == "enabled" || l == "active" || l == "on") return true;
    if (l == "no" || l == "disabled" || l == "not active" || l == "off") return false;
    fail(f, fmt::format("expected Yes/No or Enabled/Disabled, got {}", util::quote(text(f))));
  }
  std::optional<unsigned long long> hex(std::string_view f) const {
    if (!has(f)) return std::nullopt;
    std::string v = text(f);
    std::string_view s = v;
    if (util::starts_with(util::lower(v), "0x")) s.remove_prefix(2);
    unsigned long long x = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x, 16);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
      fail(f, fmt::format("expected a bitmask like 0x0000000000000004, got {}", util::quote(v)));
    return x;
  }
  std::optional<int> pstate(std::string_view f) const {
    if (!has(f)) return std::nullopt;
    std::string v = text(f);
    int n = -1;
    if (v.size() >= 2 && (v[0] == 'P' || v[0] == 'p')) {
      auto [p, ec] = std::from_chars(v.data() + 1, v.data() + v.size(), n);
      if (ec == std::errc() && p == v.data() + v.size() && n >= 0 && n <= 15) return n;
    }
    fail(f, fmt::format("expected a performance state P0 to P15, got {}", util::quote(v)));
  }

  [[noreturn]] void fail(std::string_view f, const std::string& what) const {
    throw Error(fmt::format("{}:{}: field '{}': {}", cap_.origin, r_.line, f, what));
  }

 private:
  const SmiRow& r_;
  const SmiCapture& cap_;
};

// Whether a captured memory size (MiB) is the card's, within 10% (unknown: yes).
bool same_memory(const catalog::Gpu& g, std::optional<double> mem_mib) {
  return !mem_mib || std::fabs(*mem_mib * 1048576.0 / g.memory_bytes - 1.0) <= 0.1;
}

// Every catalog id, name and alias, squashed ("NVIDIA A100-SXM4-80GB" -> "nvidiaa100sxm480gb"), built
// once per capture. Identification is exact: a loose match would take a Quadro RTX 4000 (Turing) for
// the RTX 4000 Ada or an H20 for the H200.
class NameIndex {
 public:
  explicit NameIndex(const catalog::Catalog& cat) {
    for (const auto& g : cat.gpus()) {
      add(g.id, &g);
      add(g.name, &g);
      for (const auto& a : g.aliases) add(a, &g);
      for (const auto& d : g.pci_device_ids) by_device_[d].push_back(&g);
    }
  }
  /// The records listing a PCI device id ("0x2684"): one, or boards that differ only in memory.
  const std::vector<const catalog::Gpu*>& with_device(const std::string& id) const {
    static const std::vector<const catalog::Gpu*> kNone;
    auto it = by_device_.find(id);
    return it == by_device_.end() ? kNone : it->second;
  }
  const catalog::Gpu* find(std::string_view name) const {
    auto it = by_name_.find(util::squash(util::lower(name)));
    return it == by_name_.end() ? nullptr : it->second;
  }
  /// The records a name cut short by nvidia-smi's table ("NVIDIA RTX 6000 Ada Gene...") may be:
  /// those whose name or alias it begins, of the reported memory size (within 10%), in id order.
  std::vector<const catalog::Gpu*> starting(std::string_view prefix, std::optional<double> mem_mib) const {
    std::vector<const catalog::Gpu*> out;
    const std::string p = util::squash(util::lower(prefix));
    if (p.size() < 6) return out;
    for (const auto& [key, g] : by_name_) {
      if (!util::starts_with(key, p)) continue;
      if (!same_memory(*g, mem_mib)) continue;
      if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
    }
    std::sort(out.begin(), out.end(), [](const auto* x, const auto* y) { return x->id < y->id; });
    return out;
  }

 private:
  void add(std::string_view n, const catalog::Gpu* g) { by_name_.try_emplace(util::squash(util::lower(n)), g); }
  std::unordered_map<std::string, const catalog::Gpu*> by_name_;
  std::unordered_map<std::string, std::vector<const catalog::Gpu*>> by_device_;
};

// The name without the brand words nvidia-smi puts first ("NVIDIA GeForce RTX 4090" -> "RTX 4090").
std::string strip_brand(const std::string& name) {
  std::string stripped = name;
  for (std::string_view p : {"NVIDIA ", "GeForce ", "Tesla ", "Quadro "})
    if (util::starts_with(stripped, p)) stripped = stripped.substr(p.size());
  return stripped;
}

// Whether `cut` ends inside the last word of the card's name or an alias: the rest of that name
// has no space in it ("NVIDIA RTX 6000 Ada Gene" + "ration"), so no other word could follow.
bool completes_last_word(std::string_view cut, const catalog::Gpu& g) {
  if (cut.empty() || cut.back() == ' ') return false;
  auto completes = [&](const std::string& n) {
    const std::string l = util::lower(n), c = util::lower(cut);
    return util::starts_with(l, c) && l.find(' ', c.size()) == std::string::npos;
  };
  if (completes(g.name) || completes(strip_brand(g.name))) return true;
  return std::any_of(g.aliases.begin(), g.aliases.end(), completes);
}

// The card a PCI device id names: the one record listing it, or of those listing it the one of the
// reported memory size (a board sold with two memory sizes has one id). None when no record lists
// it, or none listing it has this memory (a modified card: the name decides).
const catalog::Gpu* identify_by_device(const NameIndex& index, const std::string& device,
                                       std::optional<double> mem_mib) {
  const catalog::Gpu* found = nullptr;
  for (const auto* g : index.with_device(device)) {
    if (!same_memory(*g, mem_mib)) continue;
    if (found) return nullptr;  // two of this memory size too: the id does not decide
    found = g;
  }
  return found;
}

const catalog::Gpu* identify(const NameIndex& index, const std::string& name, std::optional<double> mem_mib) {
  std::vector<std::string> tries = {name};
  const std::string stripped = strip_brand(name);
  if (stripped != name) tries.push_back(stripped);
  if (mem_mib) {
    // "NVIDIA GeForce RTX 4060 Ti" names both memory sizes; the reported memory picks one.
    auto gb = static_cast<long>(std::lround(*mem_mib / 1024.0));
    tries.push_back(fmt::format("{} {}gb", stripped, gb));
  }
  for (const auto& t : tries)
    if (const auto* g = index.find(t)) return g;
  return nullptr;
}

class CardChecks {
 public:
  CardChecks(const Row& row, CardReport& card, const catalog::CompatTable& compat)
      : row_(row), card_(card), compat_(compat) {}

  void add(std::string_view check, Verdict v, std::string message) {
    card_.items.push_back({std::string(check), v, std::move(message)});
    card_.verdict = worse(card_.verdict, v);
  }

  void memory_size(const catalog::Gpu& g) {
    auto mib = row_.num("memory.total");
    if (!mib) return;
    double ratio = *mib * 1048576.0 / g.memory_bytes;
    // nvidia-smi reports a little less than the marketed size (reserved memory; ECC on older parts).
    if (ratio < 0.90 || ratio > 1.02)
      add("memory-size", Verdict::warn,
          fmt::format("reports {} MiB, the catalog's {} has {}: another variant, or a modified card", fmt_num(*mib),
                      g.name, util::format_bytes(g.memory_bytes)));
    else
      add("memory-size", Verdict::pass,
          fmt::format("{} MiB, as expected for {} ({})", fmt_num(*mib), g.id, util::format_bytes(g.memory_bytes)));
  }

  // A count for a message: the number, "n/a" ([N/A] in the capture) or "not captured".
  std::string count(std::string_view f, const std::optional<double>& v) const {
    return v ? fmt_num(*v) : row_.captured(f) ? "n/a" : "not captured";
  }

  void ecc() {
    const catalog::Gpu* g = card_.gpu;
    if (row_.captured("ecc.mode.current")) {
      auto on = row_.flag("ecc.mode.current");
      if (on && *on)
        add("ecc-mode", Verdict::pass, "ECC is enabled");
      else if (on && g && !g->ecc)
        add("ecc-mode", Verdict::pass, "ECC is disabled (this card has no ECC)");
      else if (on)
        add("ecc-mode", Verdict::warn,
            "ECC is disabled: memory errors go undetected; enable it with 'sudo nvidia-smi -e 1' and reboot");
      else if (g && g->ecc)
        add("ecc-mode", Verdict::warn, "the ECC mode is not reported, but this card has ECC");
      else
        add("ecc-mode", Verdict::pass, "ECC is not available on this card: memory errors cannot be counted");
    }
    auto uv = row_.num("ecc.errors.uncorrected.volatile.total");
    auto ua = row_.num("ecc.errors.uncorrected.aggregate.total");
    if (uv || ua) {
      double worst = std::max(uv.value_or(0), ua.value_or(0));
      std::string counts = fmt::format("{} volatile (since the driver loaded), {} aggregate (lifetime)",
                                       count("ecc.errors.uncorrected.volatile.total", uv),
                                       count("ecc.errors.uncorrected.aggregate.total", ua));
      if (worst > 0)
        add("ecc-uncorrected", Verdict::fail,
            "uncorrected ECC errors: " + counts +
                ": the memory has lost data; do not accept the card without a memory test");
      else
        add("ecc-uncorrected", Verdict::pass, "no uncorrected ECC errors: " + counts);
    }
    auto cv = row_.num("ecc.errors.corrected.volatile.total");
    auto ca = row_.num("ecc.errors.corrected.aggregate.total");
    if (cv || ca) {
      double worst = std::max(cv.value_or(0), ca.value_or(0));
      std::string counts = fmt::format("{} volatile, {} aggregate", count("ecc.errors.corrected.volatile.total", cv),
                                       count("ecc.errors.corrected.aggregate.total", ca));
      if (worst > 0)
        add("ecc-corrected", Verdict::warn,
            "corrected ECC errors: " + counts +
                ": corrected, but watch the count and the retired pages or remapped rows for growth");
      else
        add("ecc-corrected", Verdict::pass, "no corrected ECC errors: " + counts);
    }
  }

  void retired_pages() {
    auto sbe = row_.num("retired_pages.single_bit_ecc.count");
    auto dbe = row_.num("retired_pages.double_bit.count");
    auto pending = row_.flag("retired_pages.pending");
    if (!sbe && !dbe && !pending) return;  // Ampere and newer remap rows instead
    double n = sbe.value_or(0) + dbe.value_or(0);
    std::string counts =
        fmt::format("{} retired ({} after repeated single-bit errors, {} after double-bit errors)", fmt_num(n),
                    count("retired_pages.single_bit_ecc.count", sbe), count("retired_pages.double_bit.count", dbe));
    if (pending && *pending)
      add("retired-pages", Verdict::fail,
          "pages are pending retirement: the memory has had ECC errors; reboot to retire them, then test the memory; " +
              counts);
    else if (n > 0)
      add("retired-pages", Verdict::warn,
          "pages " + counts + ": the driver hides them, but they show past memory errors");
    else
      add("retired-pages", Verdict::pass, "no retired pages");
  }

  void remapped_rows() {
    auto corr = row_.num("remapped_rows.correctable");
    auto unc = row_.num("remapped_rows.uncorrectable");
    auto pending = row_.flag("remapped_rows.pending");
    auto failure = row_.flag("remapped_rows.failure");
    if (!corr && !unc && !pending && !failure) {
      // Captured but not reported on a card that has row remapping (Ampere and newer): say so rather
      // than leave the check out. nvidia-smi reports "[N/A]" for them with MIG mode on, for example.
      bool asked = row_.captured("remapped_rows.pending") || row_.captured("remapped_rows.correctable");
      const auto* g = card_.gpu;
      bool has_remap = g && g->ecc &&
                       !(g->architecture == "kepler" || g->architecture == "maxwell" || g->architecture == "pascal" ||
                         g->architecture == "volta" || g->architecture == "turing");
      const bool mig = util::lower(row_.text("mig.mode.current")) == "enabled";
      if (asked && (has_remap || mig))
        add("remapped-rows", Verdict::warn,
            fmt::format(
                "nvidia-smi did not report the remapped-row counters{}: the check could not run; read them with "
                "'nvidia-smi -q -d ROW_REMAPPER'",
                mig ? " (MIG mode is enabled)" : ""));
      return;  // before Ampere: retired pages instead
    }
    std::string counts =
        fmt::format("rows remapped: {} after uncorrectable errors, {} after correctable errors",
                    count("remapped_rows.uncorrectable", unc), count("remapped_rows.correctable", corr));
    if (failure && *failure)
      add("remapped-rows", Verdict::fail,
          "row remapping failed: the memory could not be repaired; take the card out of service; " + counts);
    else if (pending && *pending)
      add("remapped-rows", Verdict::fail,
          "a row remap is pending: the memory has had errors; reset the GPU to apply it, then test the memory; " +
              counts);
    else if (unc.value_or(0) + corr.value_or(0) > 0)
      add("remapped-rows", Verdict::warn, counts + ": repaired, but they show past memory errors");
    else
      add("remapped-rows", Verdict::pass, "no remapped rows, none pending");
  }

  void temperature(bool idle) {
    auto t = row_.num("temperature.gpu");
    if (!t) return;
    auto margin = row_.num("temperature.gpu.tlimit");
    std::string when = idle ? "; measured at idle, re-check under load" : "";
    if (margin) {
      double slowdown = *t + *margin;
      if (*margin <= 0)
        add("temperature", Verdict::fail,
            fmt::format(
                "{} C: at or above the slowdown threshold ({} C): the card is throttling; check airflow, fans and "
                "thermal paste",
                fmt_num(*t), fmt_num(slowdown)));
      else if (*margin < kMarginWarnC)
        add("temperature", Verdict::warn,
            fmt::format("{} C: only {} C below the slowdown threshold ({} C){}", fmt_num(*t), fmt_num(*margin),
                        fmt_num(slowdown), when));
      else
        add("temperature", Verdict::pass,
            fmt::format("{} C, {} C below the slowdown threshold ({} C){}", fmt_num(*t), fmt_num(*margin),
                        fmt_num(slowdown), when));
      return;
    }
    if (*t > kHotC)
      add("temperature", Verdict::warn,
          fmt::format(
              "{} C: above {} C; the slowdown threshold is not in the capture (temperature.gpu.tlimit needs driver "
              "R530 or newer), and most GPUs slow down not far above this",
              fmt_num(*t), fmt_num(kHotC)));
    else
      add("temperature", Verdict::pass,
          fmt::format("{} C; the slowdown threshold is not in the capture{}", fmt_num(*t), when));
  }

  void throttle() {
    auto mask = row_.hex("clocks_throttle_reasons.active");
    if (!mask) return;
    Verdict v = Verdict::pass;
    std::vector<std::string> active;
    for (const auto& r : kReasons)
      if (*mask & r.bit) {
        active.emplace_back(r.name);
        v = worse(v, r.verdict);
      }
    std::string list = active.empty() ? "none" : util::join(active, ", ");
    std::string hex = row_.text("clocks_throttle_reasons.active");
    if (v == Verdict::fail)
      add("throttle", v,
          fmt::format(
              "clocks held down by {} ({}): overheating or the power supply asserting its brake signal; check cooling "
              "and the PSU and cables",
              list, hex));
    else if (v == Verdict::warn)
      add("throttle", v, fmt::format("clocks reduced by {} ({}): the card is too warm", list, hex));
    else
      add("throttle", v, fmt::format("no slowdown: active reasons {} ({})", list, hex));
  }

  void power(const catalog::Gpu* g) {
    auto limit = row_.num("power.limit");
    auto def = row_.num("power.default_limit");
    if (limit && !def && g && g->tdp_w) {
      // No default limit (the table does not show it; some drivers print [Unknown Error]): the
      // limit against the card's rated power instead.
      const std::string why =
          row_.captured("power.default_limit")
              ? fmt::format("the default limit reads {}", util::quote(row_.text("power.default_limit"), 30))
              : std::string("the default limit is not in the capture");
      if (*limit < *g->tdp_w * 0.98)
        add("power-cap", Verdict::warn,
            fmt::format("capped at {} W of the {} W {} is rated for ({}): someone ran 'nvidia-smi -pl', or a "
                        "lower-power variant",
                        fmt_num(*limit), fmt_num(*g->tdp_w), g->name, why));
      else
        add("power-cap", Verdict::pass,
            fmt::format("power limit {} W, the {} W {} is rated for ({})", fmt_num(*limit), fmt_num(*g->tdp_w), g->name,
                        why));
      return;
    }
    if (!limit || !def) return;
    Verdict v = Verdict::pass;
    std::string msg;
    if (*limit < *def * 0.98) {
      v = Verdict::warn;
      msg = fmt::format(
          "capped at {} W of its default {} W: someone ran 'nvidia-smi -pl'; it will run slower under load; "
          "restore with 'sudo nvidia-smi -pl {}'",
          fmt_num(*limit), fmt_num(*def), fmt_num(*def));
    } else {
      msg = fmt::format("power limit {} W (default {} W)", fmt_num(*limit), fmt_num(*def));
    }
    if (g && g->tdp_w && *def < *g->tdp_w * 0.9) {
      v = Verdict::warn;
      msg += fmt::format("; the default limit is below the {} W of {}: a lower-power variant or a modified vBIOS",
                         fmt_num(*g->tdp_w), g->name);
    }
    add("power-cap", v, msg);
  }

  void pcie(const catalog::Gpu* g, bool idle, const std::string& idle_why) {
    auto gc = row_.num("pcie.link.gen.current"), gm = row_.num("pcie.link.gen.max");
    if (gc && gm) {
      Verdict v = Verdict::pass;
      std::string msg;
      if (*gc < *gm && idle) {
        msg = fmt::format("Gen{} of Gen{} at idle ({}): the link slows down when idle; check it under load",
                          fmt_num(*gc), fmt_num(*gm), idle_why);
      } else if (*gc < *gm) {
        v = Verdict::warn;
        msg = fmt::format(
            "Gen{} of Gen{} under load: re-seat the card, check the riser and the slot's PCIe setting in the BIOS",
            fmt_num(*gc), fmt_num(*gm));
      } else {
        msg = fmt::format("Gen{}, the maximum for this card and slot", fmt_num(*gc));
      }
      if (g && g->pcie_generation && *gm < *g->pcie_generation) {
        v = worse(v, Verdict::warn);
        msg += fmt::format("; the slot or platform limits it to Gen{} (the card supports Gen{})", fmt_num(*gm),
                           *g->pcie_generation);
      }
      add("pcie-gen", v, msg);
    }
    auto wc = row_.num("pcie.link.width.current"), wm = row_.num("pcie.link.width.max");
    if (wc && wm) {
      Verdict v = Verdict::pass;
      std::string msg;
      if (*wc < *wm) {
        v = Verdict::fail;
        msg = fmt::format(
            "x{} of x{}: the link trained narrower than the card and slot allow: re-seat the card, check the "
            "slot and riser, and re-check under load",
            fmt_num(*wc), fmt_num(*wm));
      } else {
        msg = fmt::format("x{}, the maximum for this card and slot", fmt_num(*wc));
      }
      if (g && g->pcie_lanes && *wm < *g->pcie_lanes) {
        v = worse(v, Verdict::warn);
        msg += fmt::format("; the slot provides x{} (the card supports x{})", fmt_num(*wm), *g->pcie_lanes);
      }
      add("pcie-width", v, msg);
    }
  }

  void persistence() {
    if (!row_.captured("persistence_mode")) return;
    auto on = row_.flag("persistence_mode");
    if (!on)
      add("persistence-mode", Verdict::pass, "not reported (not applicable on Windows)");
    else if (*on)
      add("persistence-mode", Verdict::pass, "persistence mode is on");
    else
      add("persistence-mode", Verdict::warn,
          "persistence mode is off: the driver tears the GPU down when no program uses it, so jobs start slower and "
          "settings such as the power limit are lost; run nvidia-persistenced");
  }

  // MIG mode against the GPU's own record: a mode change waits for a GPU reset, and a card whose
  // record has no MIG should not report it on.
  void mig(const catalog::Gpu* g) {
    if (!row_.captured("mig.mode.current")) return;
    const std::string cur = util::lower(row_.text("mig.mode.current"));
    const std::string pend = row_.captured("mig.mode.pending") ? util::lower(row_.text("mig.mode.pending")) : "";
    const bool on = cur == "enabled", known = on || cur == "disabled";
    const std::string count =
        g && g->mig_instances && *g->mig_instances > 0 ? fmt::format(" (up to {} instances)", *g->mig_instances) : "";
    if (known && (pend == "enabled" || pend == "disabled") && pend != cur)
      add("mig", Verdict::warn,
          fmt::format(
              "MIG mode is {} but {} is pending: it takes effect at the next GPU reset ('nvidia-smi -r -i <index>' "
              "with no processes on the GPU) or reboot",
              cur, pend));
    else if (on && g && g->mig_instances && *g->mig_instances == 0)
      add("mig", Verdict::warn,
          fmt::format(
              "nvidia-smi reports MIG mode enabled, but the catalog's {} has no MIG: check that the card is the one "
              "identified",
              g->id));
    else if (on)
      add("mig", Verdict::pass,
          fmt::format(
              "MIG mode is enabled{}: CUDA programs see the MIG instances, not the whole GPU (nvidia-smi mig -lgi "
              "lists them)",
              count));
    else if (known && !count.empty())
      add("mig", Verdict::pass, fmt::format("MIG mode is disabled; this GPU supports MIG{}", count));
  }

  void driver(const catalog::Gpu* g) {
    if (!row_.has("driver_version")) return;
    std::string text = row_.text("driver_version");
    auto d = catalog::parse_version(text);
    if (!d)
      row_.fail("driver_version", fmt::format("expected a driver version like 535.104.05, got {}", util::quote(text)));
    const auto* newest = compat_.newest_cuda_for_driver(*d, false);
    std::string up_to =
        newest ? fmt::format("runs CUDA toolkits up to {} (Linux, CUDA release notes Table 3)", newest->cuda)
               : "older than every toolkit in the table";
    const catalog::ArchCompat* arch = g ? compat_.arch(g->architecture) : nullptr;
    if (arch) {
      std::string cc = g->compute_capability.value_or("");
      auto fc = arch->first_cuda_for(cc);
      const auto* row = fc ? compat_.cuda(*catalog::parse_version(*fc)) : nullptr;
      if (row && row->min_driver_linux && *d < *catalog::parse_version(*row->min_driver_linux)) {
        add("driver", Verdict::fail,
            fmt::format(
                "driver {} is older than {}, the driver of CUDA {}, the first toolkit for this architecture; {}", text,
                *row->min_driver_linux, *fc, up_to));
        return;
      }
    }
    add("driver", newest ? Verdict::pass : Verdict::warn, fmt::format("driver {} {}", text, up_to));
  }

 private:
  const Row& row_;
  CardReport& card_;
  const catalog::CompatTable& compat_;
};

CardReport evaluate(const SmiRow& r, const SmiCapture& cap, const NameIndex& index,
                    const catalog::CompatTable& compat) {
  Row row(r, cap);
  CardReport card;
  card.line = r.line;
  card.index = row.text("index");
  card.name = row.text("name");
  card.pci_bus_id = row.text("pci.bus_id");
  if (row.has("pci.device_id")) {
    auto id = parse_pci_device_id(row.text("pci.device_id"));
    if (!id)
      row.fail("pci.device_id", fmt::format("expected an NVIDIA PCI device id such as 0x268410DE, got {}",
                                            util::quote(row.text("pci.device_id"))));
    card.pci_device_id = *id;
  }
  card.serial = row.has("serial") ? row.text("serial") : "";
  card.driver_version = row.has("driver_version") ? row.text("driver_version") : "";
  card.vbios_version = row.has("vbios_version") ? row.text("vbios_version") : "";
  CardChecks c(row, card, compat);

  std::vector<std::string> lost;
  for (std::size_t i = 0; i < r.cells.size(); ++i)
    if (Row::lost(r.cells[i])) lost.push_back(cap.fields[i]);
  if (!lost.empty() || Row::lost(card.name)) {
    c.add("gpu-lost", Verdict::fail,
          "nvidia-smi reports the GPU is lost: it fell off the bus (Xid 79); reboot, then check the card's seating, "
          "slot, "
          "power cables and cooling");
    return card;
  }
  if (!row.has("name")) row.fail("name", fmt::format("expected the GPU name, got {}", util::quote(card.name)));

  auto mem = row.num("memory.total");
  // The PCI device id first: names are ambiguous ("Quadro RTX 4000" vs "RTX 4000 Ada") and
  // cut short by the table; then the exact name.
  bool by_device = false;
  if (!card.pci_device_id.empty()) {
    card.gpu = identify_by_device(index, card.pci_device_id, mem);
    by_device = card.gpu != nullptr;
  }
  if (!card.gpu) card.gpu = identify(index, card.name, mem);
  // Named like a catalog card whose PCI device ids do not include this one: another board.
  const bool other_board = card.gpu && !by_device && !card.pci_device_id.empty() && !card.gpu->pci_device_ids.empty() &&
                           index.with_device(card.pci_device_id).empty();
  std::vector<const catalog::Gpu*> maybe;  // a name the table cut short: the cards it may be
  if (!card.gpu && util::ends_with(card.name, "...")) {
    const std::string cut = card.name.substr(0, card.name.size() - 3);
    maybe = index.starting(cut, mem);
    if (maybe.empty()) {
      const auto stripped = strip_brand(cut);
      maybe = index.starting(stripped, mem);
    }
    // Cut inside the last word of the one card it may be ("... Ada Gene..." for "... Ada
    // Generation"): that card. Cut where another word could follow ("RTX 2080 ..."): unknown.
    if (maybe.size() == 1 && completes_last_word(cut, *maybe.front())) card.gpu = maybe.front();
  }
  if (other_board) {
    c.add("identify", Verdict::warn,
          fmt::format("{} is named like the {} ({}), but its PCI device {} is not that card's ({}) nor any catalog "
                      "card's: a board the catalog does not list; checks use the {}",
                      util::quote(card.name, 80), card.gpu->name, card.gpu->id, card.pci_device_id,
                      util::join(card.gpu->pci_device_ids, ", "), card.gpu->id));
  } else if (card.gpu)
    c.add("identify", Verdict::pass,
          fmt::format("{} ({}, {}){}", card.gpu->name, card.gpu->id, card.gpu->architecture,
                      by_device                           ? fmt::format(", by its PCI device {}", card.pci_device_id)
                      : util::ends_with(card.name, "...") ? ", the one catalog card the cut-short name completes to"
                                                          : ""));
  else if (util::ends_with(card.name, "...")) {
    // The table cuts long names to its column: the name is not known, so neither is the card.
    std::vector<std::string> ids;
    for (const auto* g : maybe) ids.push_back(g->id);
    c.add("identify", Verdict::warn,
          fmt::format(
              "the table cut the name short ({}){}: card-specific checks skipped; 'nvidia-smi "
              "--query-gpu=name --format=csv' prints it whole",
              util::quote(card.name, 80),
              ids.empty()
                  ? (mem ? ", and no catalog card of this memory size begins so" : ", and no catalog card begins so")
                  : fmt::format(", which could be {} or a card not in the catalog", util::join_list(ids, "or"))));
  } else
    c.add("identify", Verdict::warn,
          fmt::format("{}{} is not in the catalog: card-specific checks skipped (add it with --catalog FILE)",
                      util::quote(card.name, 80),
                      card.pci_device_id.empty() ? "" : fmt::format(" (PCI device {})", card.pci_device_id)));
  if (card.gpu) c.memory_size(*card.gpu);
  c.ecc();
  c.retired_pages();
  c.remapped_rows();

  auto ps = row.pstate("pstate");
  auto util_pct = row.num("utilization.gpu");
  // Idle: nothing running (datacenter GPUs stay in P0 when idle) or a low-power state.
  bool idle = (util_pct && *util_pct < 5) || (ps && *ps >= 8);
  std::string idle_why = util_pct && *util_pct < 5 ? fmt::format("{}% busy", fmt_num(*util_pct))
                         : ps                      ? fmt::format("P{}", *ps)
                                                   : "";
  c.temperature(idle);
  c.throttle();
  c.power(card.gpu);
  c.pcie(card.gpu, idle, idle_why);
  c.persistence();
  c.mig(card.gpu);
  c.driver(card.gpu);

  std::vector<std::string> missing;
  for (auto f : kCheckedFields)
    if (!row.captured(f)) missing.emplace_back(f);
  if (!missing.empty())
    c.add("capture", Verdict::warn,
          fmt::format("not captured: {}: those checks were skipped (capture with the field list in docs/inspect.md)",
                      util::join(missing, ", ")));
  return card;
}

}  // namespace

std::vector<std::string_view> smi_query_fields(int level) {
  std::vector<std::string_view> out;
  for (auto f : kFields) {
    if (level >= 1 && f == "temperature.gpu.tlimit") continue;
    if (level >= 2 && (util::starts_with(f, "remapped_rows.") || util::starts_with(f, "mig.mode."))) continue;
    out.push_back(f);
  }
  return out;
}

std::string smi_query_command() {
  std::vector<std::string> names;
  for (auto f : smi_query_fields(0)) names.emplace_back(f);
  return "nvidia-smi --query-gpu=" + util::join(names, ",") + " --format=csv";
}

std::span<const std::string_view> inspect_checks() { return kChecks; }

std::string_view name(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "PASS";
    case Verdict::warn:
      return "WARN";
    case Verdict::fail:
      return "FAIL";
  }
  return "?";
}

namespace {

// A cell's look, for a capture without a header whose fields are not inspect's list.
bool looks_like_gpu_name(std::string_view c) {
  for (std::string_view brand : {"NVIDIA", "GeForce", "Quadro", "Tesla", "TITAN", "RTX", "GTX", "Jetson"})
    if (c.find(brand) != std::string_view::npos) return true;
  return false;
}
bool looks_like_driver(std::string_view c) {  // 535.104.05, 591.44
  auto parts = util::split(c, '.');
  if (parts.size() < 2 || parts.size() > 3 || parts[0].size() != 3) return false;
  return std::all_of(parts.begin(), parts.end(), [](const std::string& p) {
    return !p.empty() &&
           std::all_of(p.begin(), p.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
  });
}

std::optional<std::vector<std::string>> guess_columns(const std::vector<std::string>& raw) {
  std::vector<std::string> cols(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) cols[i] = fmt::format("column.{}", i + 1);  // not read
  bool named = false, bus = false, driver = false, device = false;
  std::optional<std::size_t> mem;
  double mem_max = -1;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::string c = util::trim(raw[i]);
    if (!named && looks_like_gpu_name(c)) {
      cols[i] = "name";
      named = true;
    } else if (!bus && looks_like_bus_id(c)) {
      cols[i] = "pci.bus_id";
      bus = true;
    } else if (!device && parse_pci_device_id(c)) {
      cols[i] = "pci.device_id";
      device = true;
    } else if (!driver && looks_like_driver(c)) {
      cols[i] = "driver_version";
      driver = true;
    } else if (util::ends_with(c, " MiB")) {
      // Of memory.used, .free and .total the total is the largest.
      auto v = util::parse_number(std::string_view(c).substr(0, c.size() - 4));
      if (v && *v > mem_max) {
        mem_max = *v;
        mem = i;
      }
    }
  }
  if (!named) return std::nullopt;
  if (mem) cols[*mem] = "memory.total";
  return cols;
}

void index_columns(SmiCapture& cap) {
  cap.column.clear();
  for (std::size_t i = 0; i < cap.fields.size(); ++i) cap.column.emplace(cap.fields[i], i);
}

void add_row(SmiCapture& cap, int line_no, const std::vector<std::string>& cells) {
  SmiRow row;
  row.line = line_no;
  row.cells.reserve(cells.size());
  for (const auto& c : cells) row.cells.push_back(util::trim(c));
  cap.rows.push_back(std::move(row));
}

}  // namespace

Result<SmiCapture> parse_smi_csv(std::string_view text, const std::string& origin) {
  using R = Result<SmiCapture>;
  if (util::starts_with(text, "\xEF\xBB\xBF")) text.remove_prefix(3);
  if (looks_like_smi_query(text)) return parse_smi_query(text, origin);
  if (looks_like_smi_table(text)) return parse_smi_table(text, origin);
  SmiCapture cap;
  cap.origin = origin;
  std::vector<std::string> cols;
  int header_line = 0;
  util::LineReader lines(text);
  std::string_view line;
  while (lines.next(line)) {
    const int line_no = lines.number();
    for (char ch : line) {
      auto u = static_cast<unsigned char>(ch);
      if (u < 0x20 && ch != '\t')
        return R::fail(
            fmt::format("{}:{}: binary data (byte 0x{:02x}), expected the CSV text of nvidia-smi "
                        "--query-gpu=... --format=csv",
                        origin, line_no, u));
    }
    if (util::trim(line).empty()) continue;
    auto cells = util::split(line, ',');
    if (cols.empty()) {
      // The header: nvidia-smi's field names, with units in brackets.
      std::string t = util::trim(line);
      if (util::lower(t).find("no devices were found") != std::string::npos)
        return R::fail(fmt::format("{}:{}: nvidia-smi found no GPUs (\"{}\")", origin, line_no, t));
      if (t.find("NVIDIA-SMI has failed") != std::string::npos || t.find("couldn't communicate") != std::string::npos)
        return R::fail(
            fmt::format("{}:{}: nvidia-smi could not reach the driver: {}", origin, line_no, util::quote(t, 100)));
      std::size_t known = 0;
      std::unordered_set<std::string> seen;
      for (const auto& c : cells) {
        std::string n = canonical(c);
        if (known_field(n)) ++known;
        if (!seen.insert(n).second) {
          if (known == 0) break;  // a data row ("595.80" twice), not a header: judged below
          return R::fail(fmt::format("{}:{}: column '{}' appears twice in the header", origin, line_no,
                                     n.size() > 60 ? n.substr(0, 57) + "..." : n));
        }
        cols.push_back(n);
      }
      if (known == 0) {
        // No header (--format=csv,noheader): read as the documented field list when the cell count
        // matches one of the three lists inspect asks nvidia-smi for.
        // Captures from before the mig.mode.* fields were asked for have the same lists without them.
        // Older ones also lack pci.device_id; a list with it is taken only where that cell is one
        // (0x268410DE), as some lists with and without it have the same length.
        bool matched = false;
        for (bool with_device : {true, false})
          for (int level = 0; level <= 2 && !matched; ++level)
            for (bool with_mig : {true, false}) {
              auto fields = smi_query_fields(level);
              std::erase_if(fields, [&](std::string_view f) {
                return (!with_mig && util::starts_with(f, "mig.mode.")) || (!with_device && f == "pci.device_id");
              });
              if (matched || fields.size() != cells.size()) continue;
              if (with_device) {
                auto at = std::find(fields.begin(), fields.end(), "pci.device_id") - fields.begin();
                if (!parse_pci_device_id(util::trim(cells[static_cast<std::size_t>(at)]))) continue;
              }
              cols.assign(fields.begin(), fields.end());
              matched = true;
            }
        if (!matched) {
          // Another field list without its header: the cells whose look gives them away (the
          // card's name, the memory total, the bus id, the driver version) are read; the rest not.
          if (auto guessed = guess_columns(cells)) {
            cols = std::move(*guessed);
            matched = true;
            cap.guessed_columns = true;
          }
        }
        if (!matched) {
          bool looks_like_data = util::lower(t).find("nvidia") != std::string::npos;
          return R::fail(
              fmt::format("{}:{}: expected the CSV header nvidia-smi prints (\"name, pci.bus_id, ...\"), got {}{}",
                          origin, line_no, util::quote(t, 60),
                          looks_like_data ? fmt::format("; a capture without a header (csv,noheader) is read only "
                                                        "with the documented field list ({} values per row, this "
                                                        "row has {}); 'gpuadvisor inspect --print-query' prints the "
                                                        "command",
                                                        smi_query_fields(0).size(), cells.size())
                                          : ""));
        }
        cap.has_header = false;
        cap.fields = cols;
        index_columns(cap);
        header_line = line_no - 1;
        add_row(cap, line_no, cells);
        continue;
      }
      header_line = line_no;
      cap.fields = cols;
      index_columns(cap);
      cap.header_units = t.find('[') != std::string::npos;
      if (!cap.column.count("name"))
        return R::fail(
            fmt::format("{}:{}: the header has no 'name' column, which inspect identifies each card by; "
                        "capture with: {}",
                        origin, line_no, smi_query_command()));
      continue;
    }
    if (cells.size() != cols.size())
      return R::fail(fmt::format(
          "{}:{}: expected {} values as {}, got {}{}", origin, line_no, cols.size(),
          cap.has_header ? fmt::format("in the header (line {})", header_line) : std::string("in the first row"),
          cells.size(), cells.size() < cols.size() ? " (a truncated row?)" : ""));
    if (cap.rows.size() == kMaxSmiRows)
      return R::fail(
          fmt::format("{}:{}: more than {} GPU rows in one capture (at most 1,024 eight-GPU servers); split "
                      "it by host",
                      origin, line_no, util::format_number(static_cast<double>(kMaxSmiRows))));
    add_row(cap, line_no, cells);
  }
  if (cols.empty())
    return R::fail(
        fmt::format("{}: empty input, expected the CSV output of nvidia-smi --query-gpu=... --format=csv", origin));
  if (cap.rows.empty())
    return R::fail(fmt::format("{}:{}: a header but no GPU rows (nvidia-smi saw no GPUs, or the capture was cut short)",
                               origin, header_line));
  return cap;
}

Result<InspectReport> inspect(const SmiCapture& capture, const catalog::Catalog& catalog,
                              const catalog::CompatTable& compat) {
  InspectReport rep;
  rep.origin = capture.origin;
  try {
    const NameIndex index(catalog);
    for (const auto& r : capture.rows) rep.cards.push_back(evaluate(r, capture, index, compat));
  } catch (const Error& e) {
    return Result<InspectReport>::fail(e.what());
  }
  for (const auto& c : rep.cards) {
    rep.verdict = worse(rep.verdict, c.verdict);
    for (const auto& i : c.items) {
      if (i.verdict == Verdict::pass)
        rep.passes++;
      else if (i.verdict == Verdict::warn)
        rep.warnings++;
      else
        rep.failures++;
    }
  }
  rep.next_steps = {
      "Stress the card for an hour with gpu-burn ('gpu_burn 3600') and run inspect again while it runs: temperature, "
      "throttle reasons and the PCIe link only mean something under load",
      "Run NVIDIA's diagnostics: 'dcgmi diag -r 3' (about 15 minutes; DCGM runs levels above 1 on datacenter GPUs "
      "only)",
      "Test the memory: 'dcgmi diag -r 4' adds DCGM's memtest on datacenter GPUs (DCGM 2.4 or newer); on other GPUs "
      "use "
      "a GPU memory tester such as memtest_vulkan",
      "Then scan the kernel log for Xid errors: 'journalctl -k | gpuadvisor diagnose --log -'",
  };
  rep.maintenance = {
      {"monthly",
       "blow the dust out of heatsinks, fans and filters (hold the fans still); check that every fan spins; run "
       "inspect "
       "and compare the ECC, retired-page and remapped-row counts with last month's"},
      {"quarterly",
       "compare temperatures under the same load with the acceptance run; after cleaning, replace thermal paste or "
       "pads "
       "only if they have drifted up, not on a calendar"},
      {"every 6 months",
       "inspect power connectors and risers (fully seated, no discolouration or melting); re-seat a card only when "
       "inspect shows a downgraded link or a connector is loose: contacts wear with every mating cycle"},
  };
  return rep;
}

}  // namespace gpuadvisor::rules
