#pragma once
/// Money: buying, powering and renting the GPUs for a workload; break-even and total cost of
/// ownership (docs/methodology.md, "Cost").
#include <optional>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/prices.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/perf.h"

namespace gpuadvisor::estimate {

/// Hours in an average year (365.25 days) and month.
inline constexpr double kHoursPerYear = 8766;
inline constexpr double kHoursPerMonth = kHoursPerYear / 12;

struct CostOptions {
  double kwh_usd = 0;           ///< electricity price
  std::string kwh_from;         ///< where kwh_usd came from, in words
  std::string kwh_as_of;        ///< the date of kwh_usd, when it is the data's
  std::string today;            ///< YYYY-MM-DD: prices older than 12 months before it are flagged
  double pue = 1;               ///< facility overhead on IT power
  double utilization = 0.7;     ///< share of calendar time the GPUs are busy (break-even, TCO)
  double years = 3;             ///< TCO horizon
  bool used = false;            ///< used-market prices where known
  std::optional<double> hours;  ///< job length when no --tokens (or to override)
};

struct CloudQuote {
  const catalog::CloudInstance* instance = nullptr;
  int instances = 0;
  double usd_per_hour = 0;  ///< for all instances needed
  std::optional<double> job_usd;
};

struct CostEstimate {
  bool fits = true;
  std::optional<double> job_hours;
  std::string job_hours_from;  ///< "estimate", "--hours" or ""
  std::optional<double> gpu_price_usd;
  std::string price_kind;  ///< street, used, msrp
  std::optional<double> purchase_usd;
  std::optional<double> power_w;  ///< GPUs (+ the host's own power where known), before PUE; nullopt: GPU power unknown
  const catalog::Platform* host_platform = nullptr;  ///< the host of a multi-GPU plan (estimate/platform.h)
  int host_boxes = 0;
  std::optional<double> host_price_usd;       ///< included in purchase_usd when known
  bool host_price_includes_gpus = false;      ///< host_price_usd is whole systems with their GPUs: purchase_usd is that
  std::optional<double> usd_per_hour_energy;  ///< nullopt: GPU power unknown
  std::optional<double> job_energy_kwh, job_energy_usd, job_own_usd;
  std::vector<CloudQuote> cloud;           ///< cheapest first
  std::optional<double> breakeven_hours;   ///< busy hours at which buying beats renting
  std::optional<double> breakeven_months;  ///< at the utilisation
  std::optional<double> tco_usd;           ///< purchase + energy over the horizon
  std::optional<double> cloud_over_horizon_usd;
  std::vector<std::string> stale_prices;  ///< prices used that are more than 12 months old, in words
  std::vector<std::string> assumptions;
};

/// The cheapest on-demand way to rent `count` of `gpu`: whole instances with that GPU and at least
/// `together` GPUs each (the GPUs that must share a machine), enough of them; nullopt when the
/// price list has none with a rate.
std::optional<CloudQuote> cheapest_rent(const catalog::Gpu& gpu, int count, int together,
                                        const catalog::Prices& prices);

/// Busy hours after which buying (purchase + energy per hour) costs less than renting at
/// `rent_usd_per_hour`; nullopt when renting costs no more than the energy.
std::optional<double> breakeven_hours(double purchase_usd, double energy_usd_per_hour, double rent_usd_per_hour);

/// How a card's resale value falls with age, fitted on the catalog's used-market prices against
/// launch prices: log(used / launch) = a - k x age in years, by least squares over every card with
/// both and a release year. The market level a (today's shortage or glut) cancels out for a card
/// bought now: after m months it sells for the price paid x exp(-k m / 12).
struct ResaleFit {
  double loss_per_year = 0;                    ///< 1 - exp(-k): the share of its value a card loses in a year
  double loss_low = 0, loss_high = 0;          ///< the same at k less and more one standard error
  std::vector<std::string> gpu_ids;            ///< the cards fitted
  std::vector<std::string> segments;           ///< their segments (consumer, workstation, ...), each once
  std::string as_of;                           ///< the newest used price's date (YYYY-MM)
  static constexpr std::size_t kMinCards = 3;  ///< fewer leave no standard error: no fit
  bool usable() const { return gpu_ids.size() >= kMinCards; }
};
ResaleFit fit_resale(const std::vector<catalog::Gpu>& gpus);

/// What a card bought for `price_usd` sells for after `months`, at `loss_per_year`.
double resale_usd(double price_usd, double months, double loss_per_year);

CostEstimate estimate_cost(const Workload& w, const catalog::Gpu& gpu, const PerfEstimate& perf, bool fits,
                           const catalog::Prices& prices, const CostOptions& o);

util::Json to_json(const CostEstimate& c);

}  // namespace gpuadvisor::estimate
