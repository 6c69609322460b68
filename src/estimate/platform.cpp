#include "gpuadvisor/estimate/platform.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuadvisor/util/units.h"

namespace gpuadvisor::estimate {
namespace {

std::string_view form_name(const catalog::Gpu& g) {
  return g.form_factor ? catalog::kFormFactorNames.name(*g.form_factor) : std::string_view();
}

std::string watts(double w) { return util::format_number(w) + " W"; }

// Callers check that the GPU's power is known first.
double load_w(const catalog::Platform& p, const catalog::Gpu& gpu, int n) {
  return gpu.tdp_w.value_or(0) * n + p.host_power_w.value_or(0);
}

// Whether one box of `p` holds `n` of `gpu` within its power limits.
bool powers(const catalog::Platform& p, const catalog::Gpu& gpu, int n) {
  if (p.max_gpu_tdp_w && gpu.tdp_w > *p.max_gpu_tdp_w) return false;  // nullopt compares below any number
  return !p.system_max_power_w || load_w(p, gpu, n) <= *p.system_max_power_w;
}

}  // namespace

Host host_for(const catalog::Gpu& gpu, int count, const catalog::Prices& prices) {
  return host_for(gpu, count, count, prices);
}

Host host_for(const catalog::Gpu& gpu, int count, int group, const catalog::Prices& prices) {
  group = std::clamp(group, 1, std::max(1, count));
  Host h;
  using catalog::FormFactor;
  const auto ff = gpu.form_factor;
  if (ff == FormFactor::soc || ff == FormFactor::module || ff == FormFactor::superchip) {
    // Whole systems: a unified-memory computer, a Jetson module on its carrier, a Grace superchip.
    if (count > 1) h.problem = HostProblem::whole_system;
    return h;
  }
  if (ff == FormFactor::sxm || ff == FormFactor::oam) {
    // Baseboard GPUs: only on a system built for them, however few are used.
    h.needed = true;
    for (const auto& p : prices.platforms)
      if (p.form_factor == ff && std::find(p.gpu_ids.begin(), p.gpu_ids.end(), gpu.id) != p.gpu_ids.end()) {
        h.platform = &p;
        break;
      }
    if (!h.platform) {
      h.problem = HostProblem::no_baseboard;
      return h;
    }
  } else {
    if (count <= 1) return h;  // one card: the buyer's own computer
    h.needed = true;
    if (!gpu.tdp_w) {
      h.problem = HostProblem::unknown_power;  // no host's power limit can be checked
      return h;
    }
    // Passively cooled datacenter cards need a server's airflow; others go in a workstation too.
    const bool server_only = gpu.segment == catalog::Segment::datacenter;
    const catalog::Platform* nearest = nullptr;
    for (const auto& p : prices.platforms) {
      if (p.form_factor != FormFactor::pcie || p.kind == "hgx" || (server_only && p.kind != "server")) continue;
      h.largest_slots = std::max(h.largest_slots, p.gpu_slots);
      if (p.gpu_slots < group) continue;
      if (!powers(p, gpu, std::min(count, p.gpu_slots / group * group))) {
        if (!nearest) nearest = &p;
        continue;
      }
      // The cheapest with a known price, for as many boxes as the groups need; when none has one,
      // the smallest.
      auto boxes = [&](const catalog::Platform& x) {
        return std::ceil(static_cast<double>(count) / (x.gpu_slots / group * group));
      };
      auto better = [&](const catalog::Platform& a, const catalog::Platform& b) {
        if (a.price_usd.has_value() != b.price_usd.has_value()) return a.price_usd.has_value();
        if (a.price_usd && *a.price_usd * boxes(a) != *b.price_usd * boxes(b))
          return *a.price_usd * boxes(a) < *b.price_usd * boxes(b);
        return a.gpu_slots < b.gpu_slots;
      };
      if (!h.platform || better(p, *h.platform)) h.platform = &p;
    }
    if (!h.platform) {
      h.platform = nearest;
      h.problem = nearest ? HostProblem::power : HostProblem::no_slots;
      return h;
    }
  }
  const auto& p = *h.platform;
  // Groups do not straddle boxes: a box holds as many whole groups as its slots take.
  const int per_box =
      ff == FormFactor::sxm || ff == FormFactor::oam ? p.gpu_slots : std::max(1, p.gpu_slots / group * group);
  h.boxes = static_cast<int>(std::ceil(static_cast<double>(count) / per_box));
  if (!gpu.tdp_w && (p.max_gpu_tdp_w || p.system_max_power_w)) {
    h.problem = HostProblem::unknown_power;
    return h;
  }
  if (!powers(p, gpu, std::min(count, per_box))) {
    h.problem = HostProblem::power;
    return h;
  }
  if (p.price_usd) h.price_usd = *p.price_usd * h.boxes;
  h.price_includes_gpus = p.price_includes_gpus;
  if (p.host_power_w) h.power_w = *p.host_power_w * h.boxes;
  return h;
}

std::string describe(const Host& h, const catalog::Gpu& gpu, int count) {
  switch (h.problem) {
    case HostProblem::whole_system:
      return fmt::format("{} is a whole system ({}): one is planned, not {} joined", gpu.id, form_name(gpu), count);
    case HostProblem::no_baseboard:
      return fmt::format(
          "{} is an {} module: it runs only on a baseboard system, and data/platforms.json has none for it "
          "(--prices FILE adds one)",
          gpu.id, gpu.form_factor == catalog::FormFactor::sxm ? "SXM" : "OAM");
    case HostProblem::no_slots:
      return fmt::format("no {} in data/platforms.json takes {} x {} (the largest takes {})",
                         gpu.segment == catalog::Segment::datacenter ? "server" : "workstation or server", count,
                         gpu.id, h.largest_slots);
    case HostProblem::unknown_power:
      return fmt::format("{} has no published power (tdp_w): no host's power limit can be checked for {} of them",
                         gpu.id, count);
    case HostProblem::power: {
      const auto& p = *h.platform;
      const int n = std::min(count, p.gpu_slots);
      if (p.max_gpu_tdp_w && gpu.tdp_w > *p.max_gpu_tdp_w)
        return fmt::format("no host in data/platforms.json powers {} x {}: {} takes GPUs of at most {} ({} has {})",
                           count, gpu.id, p.id, watts(*p.max_gpu_tdp_w), gpu.id, watts(*gpu.tdp_w));
      return fmt::format("no host in data/platforms.json powers {} x {}: {} may draw {}, {} x {}{} need {}", count,
                         gpu.id, p.id, watts(*p.system_max_power_w), n, watts(*gpu.tdp_w),
                         p.host_power_w ? " and the host" : "", watts(load_w(p, gpu, n)));
    }
    case HostProblem::none:
      break;
  }
  if (!h.needed)
    return !gpu.form_factor || gpu.form_factor == catalog::FormFactor::pcie
               ? "one card goes into a computer you have (not priced)"
               : fmt::format("{} is a whole system ({})", gpu.id, form_name(gpu));
  const auto& p = *h.platform;
  return fmt::format(
      "{}{} ({}, {} GPU slots{}): {}, {}", h.boxes > 1 ? fmt::format("{} x ", h.boxes) : "", p.id, p.kind, p.gpu_slots,
      p.system_max_power_w ? fmt::format(", up to {}", watts(*p.system_max_power_w)) : std::string(),
      h.price_usd
          ? util::format_money(*h.price_usd) +
                (h.price_includes_gpus ? fmt::format(" with {} GPUs{}", p.gpu_slots, h.boxes > 1 ? " each" : "") : "")
          : std::string("price unknown"),
      h.power_w ? watts(*h.power_w) + " of its own" : std::string("its own power unknown"));
}

}  // namespace gpuadvisor::estimate
