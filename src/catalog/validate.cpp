#include "gpuadvisor/catalog/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::catalog {
namespace {

constexpr ValidationRule kRules[] = {
    {"duplicate-id", Severity::error, "two records share an id"},
    {"duplicate-alias", Severity::error, "an alias is used by two records or equals another record's id"},
    {"unknown-architecture", Severity::error,
     "the architecture is not one gpuadvisor knows, or belongs to another vendor"},
    {"bandwidth-formula", Severity::error, "memory bandwidth differs from data rate x bus width / 8 by more than 2%"},
    {"tensor-below-vector", Severity::error,
     "a tensor/matrix peak (tf32, fp16, bf16, fp8) is below the vector fp32 peak (GPUs with tensor_cores 0 are exempt: "
     "their fp16 runs on the vector units)"},
    {"precision-order", Severity::error,
     "a lower precision has a lower peak than a higher one (fp8 < fp16, fp4 < fp8, int4 < int8)"},
    {"non-positive-value", Severity::error, "memory, bandwidth, TDP, a peak or a price is zero or negative"},
    {"beyond-datasheet", Severity::error,
     "a value no GPU comes near: TDP above 5 kW, memory above 16 TiB, memory or interconnect bandwidth above 100 TB/s, "
     "a peak above 100 PFLOPS"},
    {"control-character", Severity::error,
     "a name or alias holds a control character (ESC, BEL, a line break...): it would drive the terminal it is shown "
     "on"},
    {"power-range", Severity::error, "the configurable power range does not contain the TDP"},
    {"compute-capability", Severity::error,
     "an NVIDIA GPU without a compute capability like 8.9, or another vendor's with one"},
    {"missing-source", Severity::error, "the record or one of its prices has no source"},
    {"missing-as-of", Severity::error, "the record or one of its prices has no as_of date in YYYY-MM or YYYY-MM-DD"},
    {"stale-price", Severity::warning, "a price is older than 12 months"},
    {"missing-price", Severity::warning, "no street price, used price or launch MSRP is known"},
    {"missing-power", Severity::warning, "no TDP or published maximum power: energy cost and power limits are unknown"},
    {"missing-status", Severity::warning,
     "no production status (in_production, end_of_life, discontinued) with a source"},
    {"new-price-out-of-production", Severity::error,
     "a street (new) price on a card that is end of life or discontinued"},
    {"mig-unsourced", Severity::error, "MIG instances are given, but no source backs mig_instances"},
};

struct Checker {
  std::vector<Finding>& out;
  const Gpu& g;
  void add(std::string_view rule, std::string message) {
    Severity sev = Severity::error;
    for (const auto& r : kRules)
      if (r.id == rule) sev = r.severity;
    out.push_back({std::string(rule), sev, g.id, g.origin, std::move(message)});
  }
};

// The largest figure any datasheet gives, times a few (data/gpus.json, 2026-11): a value above
// one of these is a unit slip or a made-up number, and would only make the estimates nonsense.
struct Bound {
  const char* field;
  double max;
  const char* unit;
  const char* why;
};
// The largest TDP in data/gpus.json is 1,400 W (MI355X, GB300): 5 kW is 3.5 times that.
constexpr Bound kTdpBound{"tdp_w", 5000, "W", "5 kW"};
// The most memory is 512 GiB (Apple M3 Ultra, unified); the most HBM 288 GB (B300, MI355X).
constexpr Bound kMemoryBound{"memory_bytes", 17592186044416.0, "bytes", "16 TiB"};
// The fastest memory is 8 TB/s (MI355X, B200); the fastest interconnect 1.8 TB/s (NVLink 5).
constexpr Bound kBandwidthBound{"memory_bandwidth_gbs", 100000, "GB/s", "100 TB/s"};
constexpr Bound kInterconnectBound{"interconnect_gbs", 100000, "GB/s", "100 TB/s"};
// The highest peak is 15 PFLOPS (GB300, dense fp4); 100 PFLOPS is 6.7 times that.
constexpr double kPeakBoundTflops = 100000;

// A figure for a message: grouped digits, or 1e+308 where digits would fill the line.
std::string figure(double v) { return std::fabs(v) < 1e15 ? util::format_number(v) : fmt::format("{:.3g}", v); }

void check_values(Checker& c) {
  const Gpu& g = c.g;
  auto positive = [&](const char* field, std::optional<double> v) {
    if (v && !(*v > 0))
      c.add("non-positive-value", fmt::format("{} must be positive, got {}", field, util::format_number(*v)));
  };
  auto bounded = [&](const Bound& b, std::optional<double> v) {
    if (v && *v > b.max)
      c.add("beyond-datasheet",
            fmt::format("{} {} {} is above any GPU's (at most {}): a unit slip?", b.field, figure(*v), b.unit, b.why));
  };
  // tdp_w may be unknown (optional) for machines that publish no power figure; then there is nothing to check.
  const std::optional<double> tdp = g.tdp_w;
  positive("memory_bytes", g.memory_bytes);
  positive("memory_bandwidth_gbs", g.memory_bandwidth_gbs);
  positive("tdp_w", tdp);
  positive("launch_msrp_usd", g.launch_msrp_usd);
  positive("street_price_usd", g.street.usd);
  positive("used_price_usd", g.used.usd);
  positive("interconnect_gbs", g.interconnect_gbs);
  bounded(kTdpBound, tdp);
  bounded(kMemoryBound, g.memory_bytes);
  bounded(kBandwidthBound, g.memory_bandwidth_gbs);
  bounded(kInterconnectBound, g.interconnect_gbs);
  for (auto p : kPrecisions) {
    auto v = g.peak_tflops[static_cast<std::size_t>(p)];
    if (v && !(*v > 0))
      c.add("non-positive-value", fmt::format("peak_tflops.{} must be positive, got {}", name(p), *v));
    if (v && *v > kPeakBoundTflops)
      c.add("beyond-datasheet",
            fmt::format("peak_tflops.{} {} is above any GPU's (at most 100 PFLOPS = 100000 TFLOPS): a unit slip?",
                        name(p), figure(*v)));
  }
}

}  // namespace

std::vector<Finding> value_findings(const Gpu& g) {
  std::vector<Finding> out;
  Checker c{out, g};
  check_values(c);
  return out;
}

std::string_view name(Severity s) { return s == Severity::error ? "error" : "warning"; }

std::span<const ValidationRule> validation_rules() { return kRules; }

std::vector<Finding> validate(const std::vector<Gpu>& gpus, const std::string& today) {
  std::vector<Finding> out;
  std::map<std::string, std::string> ids;      // squashed id -> id
  std::map<std::string, std::string> aliases;  // squashed alias -> owner id
  const auto now = months_of(today);

  for (const auto& g : gpus) {
    Checker c{out, g};
    if (!ids.emplace(g.id, g.id).second) c.add("duplicate-id", fmt::format("id '{}' is defined twice", g.id));
  }
  for (const auto& g : gpus) {
    Checker c{out, g};
    for (const auto& a : g.aliases) {
      std::string k = util::lower(a);
      if (ids.count(k) && ids[k] != g.id)
        c.add("duplicate-alias", fmt::format("alias '{}' is the id of another GPU", a));
      auto [it, fresh] = aliases.emplace(k, g.id);
      if (!fresh && it->second != g.id)
        c.add("duplicate-alias", fmt::format("alias '{}' is also an alias of '{}'", a, it->second));
      else if (!fresh)
        c.add("duplicate-alias", fmt::format("alias '{}' is listed twice", a));
    }
  }

  for (const auto& g : gpus) {
    Checker c{out, g};
    const auto* arch = find_architecture(g.architecture);
    if (!arch) {
      std::vector<std::string> known;
      for (const auto& a : architectures()) known.emplace_back(a.id);
      c.add("unknown-architecture",
            fmt::format("architecture '{}' is unknown{}", g.architecture, util::did_you_mean(g.architecture, known)));
    } else if (arch->vendor != g.vendor) {
      c.add("unknown-architecture", fmt::format("architecture '{}' is {}'s, but vendor is '{}'", g.architecture,
                                                kVendorNames.name(arch->vendor), kVendorNames.name(g.vendor)));
    }

    if (g.memory_bus_bits && g.memory_data_rate_gbps && g.memory_bandwidth_gbs > 0) {
      double computed = *g.memory_data_rate_gbps * *g.memory_bus_bits / 8.0;
      double diff = std::fabs(computed - g.memory_bandwidth_gbs) / g.memory_bandwidth_gbs;
      if (diff > 0.02)
        c.add("bandwidth-formula",
              fmt::format("memory_bandwidth_gbs {} differs from {} Gbps x {} bit / 8 = {} GB/s by {:.1f}%",
                          util::format_number(g.memory_bandwidth_gbs), *g.memory_data_rate_gbps, *g.memory_bus_bits,
                          util::format_number(computed), diff * 100));
    }

    auto peak = [&](Precision p) { return g.peak_tflops[static_cast<std::size_t>(p)]; };
    if (auto fp32 = peak(Precision::fp32); fp32 && g.tensor_cores.value_or(1) > 0) {
      for (auto p : {Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8})
        if (auto t = peak(p); t && *t < *fp32)
          c.add("tensor-below-vector", fmt::format("{} peak {} TFLOPS is below the fp32 vector peak {} TFLOPS", name(p),
                                                   util::format_number(*t), util::format_number(*fp32)));
    }
    for (auto [lo, hi] : {std::pair{Precision::fp8, Precision::fp16}, std::pair{Precision::fp4, Precision::fp8},
                          std::pair{Precision::int4, Precision::int8}, std::pair{Precision::fp16, Precision::tf32}}) {
      auto l = peak(lo), h = peak(hi);
      if (l && h && *l < *h)
        c.add("precision-order", fmt::format("{} peak {} is below {} peak {}", name(lo), util::format_number(*l),
                                             name(hi), util::format_number(*h)));
    }

    check_values(c);
    // Names and aliases are printed everywhere; ids are kebab-case by the schema already.
    auto plain = [&](const std::string& field, const std::string& v) {
      if (util::has_control(v))
        c.add("control-character", fmt::format("{} {} holds a control character", field, util::quote(v)));
    };
    plain("name", g.name);
    for (std::size_t i = 0; i < g.aliases.size(); ++i) plain(fmt::format("aliases[{}]", i), g.aliases[i]);

    if (!g.tdp_w)
      c.add("missing-power", "no tdp_w: energy cost, power limits and hosts cannot be checked for this GPU");
    const double tdp = g.tdp_w.value_or(0);
    if ((g.tdp_w && ((g.power_min_w && *g.power_min_w > tdp) || (g.power_max_w && *g.power_max_w < tdp))) ||
        (g.power_min_w && g.power_max_w && *g.power_min_w > *g.power_max_w))
      c.add("power-range",
            fmt::format("TDP {} W is outside the power range {}..{} W", g.tdp_w ? util::format_number(tdp) : "?",
                        g.power_min_w ? util::format_number(*g.power_min_w) : "?",
                        g.power_max_w ? util::format_number(*g.power_max_w) : "?"));

    if (g.vendor == Vendor::nvidia) {
      bool ok = g.compute_capability && g.compute_capability->size() >= 3 &&
                std::isdigit(static_cast<unsigned char>((*g.compute_capability)[0])) &&
                g.compute_capability->find('.') != std::string::npos;
      if (!ok) c.add("compute-capability", "NVIDIA GPU needs a compute_capability like \"8.9\"");
    } else if (g.compute_capability) {
      c.add("compute-capability",
            fmt::format("compute_capability is NVIDIA's; {} GPUs have none", kVendorNames.name(g.vendor)));
    }

    if (g.sources.empty()) c.add("missing-source", "no sources: every number needs a public source");
    for (std::size_t i = 0; i < g.sources.size(); ++i)
      if (g.sources[i].url.empty() && g.sources[i].title.empty())
        c.add("missing-source", fmt::format("source {} has neither title nor url", i + 1));
    if (!months_of(g.as_of))
      c.add("missing-as-of", fmt::format("as_of {} is not a date like 2026-11-29", util::quote(g.as_of)));

    for (auto [label, price] :
         {std::pair<const char*, const Price*>{"street_price", &g.street}, {"used_price", &g.used}}) {
      if (!price->usd) continue;
      if (!price->source) c.add("missing-source", fmt::format("{}_usd has no {}_source", label, label));
      auto m = months_of(price->as_of);
      if (!m) {
        c.add("missing-as-of", fmt::format("{}_usd has no {}_as_of date", label, label));
      } else if (now && *now - *m > 12) {
        c.add("stale-price", fmt::format("{} {} is from {}, more than 12 months before {}", label,
                                         util::format_money(*price->usd), price->as_of, today));
      }
    }
    if (!g.status)
      c.add("missing-status", "no status: launch MSRP is not planned for a card not known to be in production");
    else if (!g.status_source)
      c.add("missing-status", fmt::format("status {} has no status_source", kStatusNames.name(*g.status)));
    if (g.out_of_production() && g.street.usd)
      c.add("new-price-out-of-production",
            fmt::format("street_price {} on a card that is {}: it is not sold new (give a used_price instead)",
                        util::format_money(*g.street.usd), g.out_of_production_words()));
    // MIG is a per-product fact (not every Ampere or Blackwell card has it): a count needs its source.
    if (g.mig_instances && *g.mig_instances > 0 &&
        std::none_of(g.sources.begin(), g.sources.end(), [](const Source& src) {
          return src.fields.empty() ||
                 std::find(src.fields.begin(), src.fields.end(), "mig_instances") != src.fields.end();
        }))
      c.add("mig-unsourced",
            fmt::format("mig_instances {} has no source (a source whose fields name mig_instances, such as "
                        "NVIDIA's MIG User Guide, Supported GPUs)",
                        *g.mig_instances));
    if (!g.street.usd && !g.used.usd && !g.launch_msrp_usd)
      c.add("missing-price", "no street price, used price or launch MSRP: budget checks cannot price this GPU");
  }
  return out;
}

}  // namespace gpuadvisor::catalog
