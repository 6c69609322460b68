#include "gpuadvisor/estimate/cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuadvisor/estimate/platform.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::estimate {

std::optional<CloudQuote> cheapest_rent(const catalog::Gpu& gpu, int count, int together,
                                        const catalog::Prices& prices) {
  std::optional<CloudQuote> best;
  for (const auto& inst : prices.instances) {
    if (inst.gpu_id != gpu.id || !inst.usd_per_hour || inst.gpu_count <= 0 || inst.gpu_count < together) continue;
    CloudQuote q;
    q.instance = &inst;
    q.instances = static_cast<int>(std::ceil(static_cast<double>(count) / inst.gpu_count));
    q.usd_per_hour = q.instances * *inst.usd_per_hour;
    if (!best || q.usd_per_hour < best->usd_per_hour) best = q;
  }
  return best;
}

std::optional<double> breakeven_hours(double purchase_usd, double energy_usd_per_hour, double rent_usd_per_hour) {
  const double margin = rent_usd_per_hour - energy_usd_per_hour;
  if (margin <= 0) return std::nullopt;
  return purchase_usd / margin;
}

ResaleFit fit_resale(const std::vector<catalog::Gpu>& gpus) {
  ResaleFit fit;
  std::vector<double> age, ratio;  // years since launch (mid-year) at the used price's date; log(used / launch)
  for (const auto& g : gpus) {
    if (!g.used.usd || !g.launch_msrp_usd || !g.release_year || g.used.as_of.size() < 4) continue;
    const int year = std::atoi(g.used.as_of.substr(0, 4).c_str());
    const int month = g.used.as_of.size() >= 7 ? std::atoi(g.used.as_of.substr(5, 2).c_str()) : 7;
    if (year < 1990 || month < 1 || month > 12 || *g.used.usd <= 0 || *g.launch_msrp_usd <= 0) continue;
    age.push_back(year + (month - 1) / 12.0 - (*g.release_year + 0.5));
    ratio.push_back(std::log(*g.used.usd / *g.launch_msrp_usd));
    fit.gpu_ids.push_back(g.id);
    const std::string segment(catalog::kSegmentNames.name(g.segment));
    if (std::find(fit.segments.begin(), fit.segments.end(), segment) == fit.segments.end())
      fit.segments.push_back(segment);
    fit.as_of = std::max(fit.as_of, g.used.as_of);
  }
  if (!fit.usable()) return fit;
  const double n = static_cast<double>(age.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < age.size(); ++i) mx += age[i] / n, my += ratio[i] / n;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < age.size(); ++i)
    sxx += (age[i] - mx) * (age[i] - mx), sxy += (age[i] - mx) * (ratio[i] - my);
  if (sxx <= 0) {
    fit.gpu_ids.clear();  // all of one age: no slope
    return fit;
  }
  const double slope = sxy / sxx;
  double ssr = 0;
  for (std::size_t i = 0; i < age.size(); ++i) {
    const double r = ratio[i] - (my + slope * (age[i] - mx));
    ssr += r * r;
  }
  const double se = std::sqrt(ssr / (n - 2) / sxx);
  const double k = std::max(0.0, -slope);  // a card that gains value with age is not planned on
  fit.loss_per_year = 1 - std::exp(-k);
  fit.loss_low = 1 - std::exp(-std::max(0.0, k - se));
  fit.loss_high = 1 - std::exp(-(k + se));
  return fit;
}

double resale_usd(double price_usd, double months, double loss_per_year) {
  return price_usd * std::pow(1 - loss_per_year, months / 12);
}

CostEstimate estimate_cost(const Workload& w, const catalog::Gpu& gpu, const PerfEstimate& perf, bool fits,
                           const catalog::Prices& prices, const CostOptions& o) {
  CostEstimate c;
  c.fits = fits;
  const double N = w.gpus;

  // How long the job runs: from the throughput estimate for --tokens, or --hours.
  if (o.hours) {
    c.job_hours = *o.hours;
    c.job_hours_from = "--hours";
  } else if (perf.available && perf.time_s) {
    c.job_hours = perf.time_s->typical / 3600;
    c.job_hours_from = "estimate";
  }

  // Buying: count x price (street, used with --used, else launch MSRP).
  c.gpu_price_usd = gpu.price_usd(o.used);
  c.price_kind = gpu.price_kind(o.used);
  if (c.gpu_price_usd) {
    c.purchase_usd = *c.gpu_price_usd * N;
    if (c.price_kind == "msrp")
      c.assumptions.push_back(fmt::format("{} has no street price: launch MSRP used", gpu.name));
  } else {
    if (gpu.out_of_production())
      c.assumptions.push_back(fmt::format("{} is {}: not sold new, purchase cost unknown{}", gpu.name,
                                          gpu.out_of_production_words(),
                                          o.used ? " (no used price known)" : " (--used prices it used where known)"));
    else
      c.assumptions.push_back(fmt::format("{} has no known price: purchase cost unknown", gpu.name));
  }

  // The host the GPUs go into (estimate/platform.h): its price and its own power.
  if (gpu.tdp_w)
    c.power_w = *gpu.tdp_w * N;
  else
    c.assumptions.push_back(fmt::format(
        "{} has no published power: energy cost, break-even and total cost of ownership unknown", gpu.name));
  const Host host = host_for(gpu, w.gpus, prices);
  c.assumptions.push_back("host: " + describe(host, gpu, w.gpus) +
                          (host.fits() ? "" : "; no host price or power included"));
  if (host.needed && host.fits()) {
    c.host_platform = host.platform;
    c.host_boxes = host.boxes;
    c.host_price_usd = host.price_usd;
    c.host_price_includes_gpus = host.price_includes_gpus;
    if (host.power_w && c.power_w) *c.power_w += *host.power_w;
    if (host.price_usd && host.price_includes_gpus) {
      c.purchase_usd = *host.price_usd;  // whole systems, GPUs included
    } else if (c.purchase_usd) {
      if (host.price_usd)
        *c.purchase_usd += *host.price_usd;
      else
        c.assumptions.push_back("host price unknown: the purchase cost is the GPUs' alone");
    }
  }
  // Every price used that is more than 12 months old is named.
  if (!o.today.empty()) {
    const catalog::Price* price = gpu.price_record(c.price_kind);
    if (price && price->usd && !c.host_price_includes_gpus)
      if (auto st = catalog::stale_price(gpu.id + ": " + c.price_kind + " price", *price->usd, price->as_of, o.today))
        c.stale_prices.push_back(*st);
    if (c.host_platform && c.host_platform->price_usd)
      if (auto st = catalog::stale_price("host " + c.host_platform->id + ": price", *c.host_platform->price_usd,
                                         c.host_platform->price_as_of, o.today))
        c.stale_prices.push_back(*st);
    if (!o.kwh_as_of.empty())
      if (auto st = catalog::stale_price("electricity", o.kwh_usd, o.kwh_as_of, o.today))
        c.stale_prices.push_back(*st + " per kWh");
  }
  if (c.power_w) {
    c.usd_per_hour_energy = *c.power_w / 1000 * o.pue * o.kwh_usd;
    c.assumptions.push_back(fmt::format("energy: GPUs at TDP while busy, PUE {}, ${}/kWh{}", o.pue, o.kwh_usd,
                                        o.kwh_from.empty() ? "" : " (" + o.kwh_from + ")"));
  }
  if (c.job_hours && c.power_w) {
    c.job_energy_kwh = *c.power_w / 1000 * o.pue * *c.job_hours;
    c.job_energy_usd = *c.job_energy_kwh * o.kwh_usd;
    if (c.purchase_usd) c.job_own_usd = *c.purchase_usd + *c.job_energy_usd;
  }

  // Renting: the on-demand instances with this GPU, enough of each for N GPUs, cheapest first.
  for (const auto& inst : prices.instances) {
    if (inst.gpu_id != gpu.id || !inst.usd_per_hour) continue;
    CloudQuote q;
    q.instance = &inst;
    q.instances = static_cast<int>(std::ceil(N / inst.gpu_count));
    q.usd_per_hour = q.instances * *inst.usd_per_hour;
    if (c.job_hours) q.job_usd = q.usd_per_hour * *c.job_hours;
    c.cloud.push_back(q);
  }
  std::stable_sort(c.cloud.begin(), c.cloud.end(),
                   [](const CloudQuote& a, const CloudQuote& b) { return a.usd_per_hour < b.usd_per_hour; });

  // Break-even: purchase + energy x H = rent x H, in busy hours; months at the utilisation.
  if (c.purchase_usd && c.usd_per_hour_energy && !c.cloud.empty()) {
    c.breakeven_hours = breakeven_hours(*c.purchase_usd, *c.usd_per_hour_energy, c.cloud.front().usd_per_hour);
    if (c.breakeven_hours) c.breakeven_months = *c.breakeven_hours / (kHoursPerMonth * o.utilization);
  }
  if (c.purchase_usd && c.usd_per_hour_energy) {
    double busy = o.years * kHoursPerYear * o.utilization;
    c.tco_usd = *c.purchase_usd + busy * *c.usd_per_hour_energy;
    if (!c.cloud.empty()) c.cloud_over_horizon_usd = busy * c.cloud.front().usd_per_hour;
    c.assumptions.push_back(
        fmt::format("total cost of ownership over {} years at {:.0f}% utilisation (purchase + energy; no "
                    "maintenance, space or staff)",
                    o.years, o.utilization * 100));
  }
  return c;
}

util::Json to_json(const CostEstimate& c) {
  auto opt = [](const std::optional<double>& v) { return v ? util::Json(*v) : util::Json(nullptr); };
  util::Json j;
  j["fits"] = c.fits;
  j["time_s"] = c.job_hours ? util::Json(*c.job_hours * 3600) : util::Json(nullptr);
  j["time_from"] = c.job_hours_from.empty() ? util::Json(nullptr) : util::Json(c.job_hours_from);
  j["gpu_price_usd"] = opt(c.gpu_price_usd);
  j["price_kind"] = c.price_kind.empty() ? util::Json(nullptr) : util::Json(c.price_kind);
  j["purchase_usd"] = opt(c.purchase_usd);
  if (c.host_platform) {
    util::Json h;
    h["platform_id"] = c.host_platform->id;
    h["boxes"] = c.host_boxes;
    h["price_usd"] = opt(c.host_price_usd);
    h["price_includes_gpus"] = c.host_price_includes_gpus;
    j["host"] = h;
  } else {
    j["host"] = nullptr;
  }
  j["power_w"] = opt(c.power_w);
  j["stale_prices"] = c.stale_prices;
  j["energy_usd_per_hour"] = opt(c.usd_per_hour_energy);
  j["job_energy_kwh"] = opt(c.job_energy_kwh);
  j["job_energy_usd"] = opt(c.job_energy_usd);
  j["job_own_usd"] = opt(c.job_own_usd);
  util::Json cloud = util::Json::array();
  for (const auto& q : c.cloud) {
    util::Json x;
    x["instance_id"] = q.instance->id;
    x["provider"] = q.instance->provider;
    x["instance"] = q.instance->instance;
    x["gpus_per_instance"] = q.instance->gpu_count;
    x["instances"] = q.instances;
    x["usd_per_hour"] = q.usd_per_hour;
    x["job_usd"] = opt(q.job_usd);
    x["as_of"] = q.instance->as_of.empty() ? util::Json(nullptr) : util::Json(q.instance->as_of);
    cloud.push_back(x);
  }
  j["cloud"] = cloud;
  j["breakeven_hours"] = opt(c.breakeven_hours);
  j["breakeven_months"] = opt(c.breakeven_months);
  j["tco_usd"] = opt(c.tco_usd);
  j["cloud_over_horizon_usd"] = opt(c.cloud_over_horizon_usd);
  j["assumptions"] = c.assumptions;
  return j;
}

}  // namespace gpuadvisor::estimate
