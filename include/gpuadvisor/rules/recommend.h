#pragma once
/// recommend: every catalog GPU x count x plan (precision; training layout), evaluated against
/// the rules; constraints filter, a score ranks, ties break deterministically. Also `fit`, the
/// reverse question: which models fit a given GPU.
#include <optional>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/prices.h"
#include "gpuadvisor/estimate/cost.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/perf.h"
#include "gpuadvisor/estimate/platform.h"
#include "gpuadvisor/estimate/serve.h"
#include "gpuadvisor/rules/rules.h"

namespace gpuadvisor::rules {

enum class Prefer { balanced, cost, speed, efficiency };

/// The GPU segments a scenario takes ("" takes every segment).
std::vector<catalog::Segment> scenario_segments(const std::string& scenario);

/// The most GPUs one plan may have (--max-gpus).
inline constexpr int kMaxPlanGpus = 4096;
std::string_view name(Prefer p);

/// Which catalog GPUs a ranking considers (--gpu, --exclude, --vendor, --cuda-only, --segment,
/// --new-only, --max-power); empty lists admit every GPU.
struct CandidateFilter {
  std::vector<const catalog::Gpu*> only;     ///< --gpu: only these
  std::vector<const catalog::Gpu*> exclude;  ///< --exclude: not these
  std::vector<catalog::Vendor> vendors;      ///< --vendor
  bool cuda_only = false;                    ///< NVIDIA cards: CUDA software runs unchanged
  std::vector<catalog::Segment> segments;    ///< --segment
  bool new_only = false;                     ///< in production: cards sold new today
  std::optional<double> max_power_w;         ///< per GPU, its rated power (TDP)

  bool admits(const catalog::Gpu& g) const;
  bool any() const;
  /// One line each for what is set ("only rtx-4090, rtx-3090 (--gpu)"); empty when nothing is.
  std::vector<std::string> describe() const;
};

struct Request {
  estimate::Workload base;
  estimate::WorkloadSet set;
  std::optional<double> budget_usd;     ///< purchase budget; with cloud a rent budget (see budget_per_hour)
  bool cloud = false;                   ///< rent: the candidates are the cloud instances, not purchases
  bool budget_per_hour = false;         ///< with cloud: budget_usd is a rate in $/h, else the total for the job
  std::vector<std::string> providers;   ///< with cloud: only these providers (empty: all)
  std::optional<double> power_limit_w;  ///< total for the plan
  std::string scenario;                 ///< "", personal, workstation, datacenter, edge, cloud
  int max_gpus = 8;
  bool max_gpus_set = false;
  bool used = false;
  std::string today;             ///< YYYY-MM-DD: prices older than 12 months before it are flagged (stale_prices)
  std::optional<Prefer> prefer;  ///< default: efficiency at the edge, else cost (value: price per speed)
  int top = 5;
  CandidateFilter filter;
  /// Training by a deadline (--deadline, with --tokens): per GPU type the fewest GPUs that finish
  /// in time; plans ranked by the job's total cost (purchase and energy).
  std::optional<double> deadline_s;
  std::optional<int> months;  ///< buy or rent over this many months, resale value counted
  /// Serving targets (--serve): plans are replicas of a tensor-parallel group, as many as the
  /// targets need; ranked by cost.
  std::optional<estimate::ServeTarget> serve;
};

struct Candidate {
  const catalog::Gpu* gpu = nullptr;
  int count = 1;
  estimate::Workload w;
  estimate::FitResult fit;
  double memory_need_bytes = 0;
  estimate::PerfEstimate perf;
  const catalog::CloudInstance* instance = nullptr;  ///< cloud plans
  std::optional<double> price_usd;                   ///< purchase: total; cloud: the job's rent when known, else $/h
  std::optional<double> usd_per_hour;                ///< cloud: the instance's rate
  std::optional<double> rent_hours;                  ///< cloud: hours the job takes (training or generating --tokens)
  std::optional<double> rent_usd;                    ///< cloud: usd_per_hour x rent_hours
  std::string price_kind;
  std::optional<double> power_cap_w;   ///< per GPU, when the plan runs power-capped
  estimate::Host host;                 ///< the host the GPUs go into, priced into price_usd
  double throughput = 0;               ///< typical, after any power cap
  std::optional<double> energy_usd;    ///< purchases with --tokens: electricity for the job (GPUs and host at TDP, PUE)
  std::optional<double> job_cost_usd;  ///< purchase price + energy_usd
  std::optional<estimate::ServeMetrics> serve;  ///< --serve: the service this plan gives
  /// Purchases shown: the cheapest on-demand rent of the same GPUs, and when buying pays off.
  std::optional<estimate::CloudQuote> rent;
  std::optional<double> breakeven_months;  ///< at the default utilisation; nullopt: rent costs no more than power
  std::optional<double> rent_job_usd;      ///< with a known job length: renting for the job
  /// With Request::months: what the plan sells for then, and what buying (price less resale, plus
  /// energy) and renting cost over those months at the default utilisation.
  std::optional<double> resale_usd, buy_over_months_usd, rent_over_months_usd;
  /// One per recommend rule, with the value of its metric. The failed ones carry their message in
  /// the plans and the nearest rejected (what is shown); explain() makes them for the others.
  std::vector<Outcome> outcomes;
  bool accepted = false;
  double score = 0;             ///< what ranks the plans (higher first), advice penalties taken
  std::optional<double> value;  ///< the plan's value in plain units (Recommendation::value_unit)
  std::string reason;           ///< one line: why this plan
  std::string hint;             ///< for rejected: what would make it fit ("fits in int8")

  std::string label() const;  ///< "rtx-4090 x1 int8", "lambda-8x-h100-sxm bf16"
  /// A job of known length that costs less to rent than to buy (purchase and energy).
  bool rents_job_cheaper() const { return rent_job_usd && job_cost_usd && *rent_job_usd < *job_cost_usd; }
};

struct Recommendation {
  Prefer prefer = Prefer::cost;
  std::string score_unit;
  /// What each plan's value counts, in the words a buyer compares by: "$ per tok/s", "$ per
  /// user", "job cost", "$ per M tokens", "tok/s per kW"; value_head is its short column name.
  std::string value_unit;
  std::string value_head;
  bool value_in_usd = true;           ///< the value is dollars (shown as money), not a rate such as tok/s per kW
  bool value_is_job = false;          ///< the value is the whole job's cost (--deadline)
  std::vector<std::string> defaults;  ///< what was assumed, in words
  std::vector<Candidate> candidates;  ///< every candidate evaluated
  std::vector<std::size_t> plans;     ///< indices into candidates, best first (one per GPU model)
  std::vector<std::size_t> rejected;  ///< the nearest rejected candidates
  std::vector<std::size_t> pareto;    ///< accepted plans not dominated on (price, time)
  std::vector<std::string> way_out;   ///< when nothing fits: the cheapest ways out
  struct NotPriced {
    std::string id;      ///< GPU id (instance id with --cloud)
    std::string reason;  ///< "no price", "discontinued, priced used with --used", "host ... has no price", ...
    std::optional<double> used_price_usd;  ///< the used price --used would plan, when that is the reason
  };
  std::vector<std::string> stale_prices;  ///< the plans shown priced with a price older than 12 months, in words
  std::vector<NotPriced> not_priced;      ///< GPUs (or instances) that hold the workload but have no price to plan with
};

struct Data {
  const catalog::Catalog& catalog;
  const RuleSet& rules;
  const catalog::Efficiency& eff;
  const catalog::Prices& prices;
};

Recommendation recommend(const Request& req, const Data& data);
/// Renders the messages of a candidate's failed rules, for one that recommend did not show.
void explain(Candidate& c, const Request& req, const Data& data);

/// "lambda 8x-h100-sxm": provider and instance name, for messages and tables.
std::string instance_label(const catalog::CloudInstance& inst);

/// The reverse question: for one GPU (x count), which presets fit for each task.
struct FitRow {
  const catalog::Model* model = nullptr;
  std::string plan;  ///< "inference fp16", "qlora nf4", ...
  bool fits = false;
  std::optional<long long> max_seq_len;
  std::optional<long long> max_batch;
  bool max_seq_capped = false;
  std::string layout;  ///< inference whose heads do not split over every GPU: "tp 4 x 2 replicas"
};
std::vector<FitRow> fit_models(const catalog::Gpu& gpu, int gpus, const catalog::ModelSet& models,
                               const catalog::Efficiency& eff, double headroom);

}  // namespace gpuadvisor::rules
