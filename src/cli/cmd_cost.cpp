// gpuadvisor cost: what a workload costs to buy, power or rent; break-even and TCO.
#include <fmt/format.h>

#include "context.h"
#include "gpuadvisor/estimate/cost.h"
#include "gpuadvisor/report/html.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"
#include "html_pages.h"
#include "trace.h"

namespace gpuadvisor::cli {
namespace {

struct CostFlags {
  estimate::WorkloadInput in;
  std::string gpu, hours, kwh, region, pue, utilization = "", years = "";
  bool used = false;
};

double positive(const std::string& flag, const std::string& text, Result<double> r, double lo, double hi) {
  if (!r) throw Error(flag + ": " + r.error());
  if (!(*r > lo && *r <= hi))
    throw Error(fmt::format("{}: expected a value above {} and at most {}, got {}", flag, lo, hi, util::quote(text)));
  return *r;
}

estimate::CostOptions cost_options(Context& ctx, const CostFlags& o) {
  estimate::CostOptions c;
  const auto& p = ctx.prices();
  if (!o.kwh.empty() && !o.region.empty())
    throw Error("--kwh-price and --region: give one (a price, or the region whose price to use)");
  if (!o.kwh.empty()) {
    auto kwh = util::parse_money(o.kwh);
    if (!kwh || !(*kwh > 0))
      throw Error(fmt::format("--kwh-price: expected a price per kWh in USD above 0, like 0.15 or $0.15, got {}",
                              util::quote(o.kwh)));
    c.kwh_usd = positive("--kwh-price", o.kwh, kwh, 0, 100);
    c.kwh_from = "--kwh-price";
  } else if (!o.region.empty()) {
    std::vector<std::string> ids;
    const catalog::Region* found = nullptr;
    for (const auto& r : p.regions) {
      ids.push_back(r.id);
      if (r.id == util::lower(o.region)) found = &r;
    }
    if (!found)
      throw Error(fmt::format("--region: unknown region {} (known: {}){}", util::quote(o.region), util::join(ids, ", "),
                              util::did_you_mean(util::lower(o.region), ids)));
    if (!found->usd_per_kwh)
      throw Error(fmt::format("--region {}: no USD price per kWh is published in the data ({}); give --kwh-price",
                              found->id, found->notes.substr(0, found->notes.find(';'))));
    c.kwh_usd = *found->usd_per_kwh;
    c.kwh_from = fmt::format("region {}, {}, as of {}", found->id, found->kind, found->as_of);
    c.kwh_as_of = found->as_of;
  } else {
    c.kwh_usd = p.kwh_usd.value;
    c.kwh_from = fmt::format("the US commercial average, as of {}; --region or --kwh-price for yours", p.kwh_usd.as_of);
    c.kwh_as_of = p.kwh_usd.as_of;
  }
  c.pue = o.pue.empty() ? p.pue.value : positive("--pue", o.pue, util::parse_number(o.pue), 0.99, 5);
  if (!o.utilization.empty()) {
    std::string u = o.utilization;
    bool pct = u.back() == '%';
    if (pct) u.pop_back();
    c.utilization = positive("--utilization", o.utilization, util::parse_number(u), 0, pct ? 100 : 1) / (pct ? 100 : 1);
  }
  if (!o.years.empty()) c.years = positive("--years", o.years, util::parse_number(o.years), 0, 50);
  if (!o.hours.empty())
    c.hours =
        positive("--hours", o.hours,
                 util::parse_duration(o.hours + (std::isdigit(static_cast<unsigned char>(o.hours.back())) ? "h" : "")),
                 0, 1e12) /
        3600;
  c.used = o.used;
  c.today = ctx.today();
  return c;
}

// CSV: one record, plain numbers with the units in the column names; unknown is an empty cell.
// The rent columns are the cheapest instance's.
report::Table cost_csv(const estimate::CostEstimate& c, const estimate::Workload& w, const catalog::Gpu& gpu,
                       bool fits) {
  const auto num = report::csv_number;
  const estimate::CloudQuote* cheapest = c.cloud.empty() ? nullptr : &c.cloud.front();
  report::Table t({{"gpu_id"},
                   {"gpus"},
                   {"fits"},
                   {"time_s"},
                   {"price_kind"},
                   {"gpu_price_usd"},
                   {"host_platform"},
                   {"host_price_usd"},
                   {"purchase_usd"},
                   {"power_w"},
                   {"energy_usd_per_hour"},
                   {"job_energy_kwh"},
                   {"job_energy_usd"},
                   {"job_own_usd"},
                   {"rent_instance"},
                   {"rent_instances"},
                   {"rent_usd_per_hour"},
                   {"rent_job_usd"},
                   {"breakeven_hours"},
                   {"breakeven_months"},
                   {"tco_usd"},
                   {"rent_over_horizon_usd"}});
  t.add({gpu.id,
         std::to_string(w.gpus),
         fits ? "true" : "false",
         num(c.job_hours ? std::optional<double>(*c.job_hours * 3600) : std::nullopt),
         c.price_kind,
         num(c.gpu_price_usd),
         c.host_platform ? c.host_platform->id : "",
         num(c.host_price_usd),
         num(c.purchase_usd),
         num(c.power_w),
         num(c.usd_per_hour_energy),
         num(c.job_energy_kwh),
         num(c.job_energy_usd),
         num(c.job_own_usd),
         cheapest ? cheapest->instance->id : "",
         cheapest ? std::to_string(cheapest->instances) : "",
         num(cheapest ? std::optional<double>(cheapest->usd_per_hour) : std::nullopt),
         num(cheapest ? cheapest->job_usd : std::nullopt),
         num(c.breakeven_hours),
         num(c.breakeven_months),
         num(c.tco_usd),
         num(c.cloud_over_horizon_usd)});
  return t;
}

void run_cost(Context& ctx, const CostFlags& o) {
  auto f = ctx.output_format();
  if (o.gpu.empty()) throw Error("--gpu is required: which GPU to price (e.g. --gpu a100-80gb-sxm)");
  const auto& gpu = ctx.gpu(o.gpu);
  estimate::WorkloadSet set;
  auto w = estimate::plan_layout(ctx.workload(o.in, &set), set, gpu, ctx.efficiency());
  auto co = cost_options(ctx, o);
  auto fit = estimate::fit(w, gpu, ctx.efficiency());
  auto perf = estimate::estimate_perf(w, gpu, ctx.efficiency());
  trace_workload(w, &gpu);
  trace_perf(perf, gpu);
  auto cost = estimate::estimate_cost(w, gpu, perf, fit.fits, ctx.prices(), co);
  if (!fit.fits) ctx.exit = Exit::no;

  if (f == report::Format::json) {
    auto j = report::envelope("cost");
    j["workload"] = estimate::to_json(w);
    j["gpu_id"] = gpu.id;
    j["count"] = w.gpus;
    j["fits"] = fit.fits;
    if (!fit.fits) j["per_gpu_shortfall_bytes"] = -fit.headroom_bytes;
    // When it does not fit, the figures are what it would take if it did, and say so.
    j["hypothetical"] = !fit.fits;
    const util::Json cj = estimate::to_json(cost);
    for (auto& [k, v] : cj.items())
      if (k != "fits") j[k] = v;
    util::Json all = w.assumptions;  // the workload's own defaults first, as in the text output
    for (const auto& a : cj["assumptions"]) all.push_back(a);
    j["assumptions"] = all;
    ctx.out << report::dump(j);
    return;
  }
  if (f == report::Format::csv) {
    ctx.out << cost_csv(cost, w, gpu, fit.fits).render(f, ctx.style);
    return;
  }
  const std::string on = fmt::format("{} x {}", w.gpus, gpu.name);
  std::vector<std::pair<std::string, std::string>> kv;
  if (cost.job_hours)
    kv.push_back({"Time", fmt::format("{} ({})", util::format_duration(*cost.job_hours * 3600),
                                      cost.job_hours_from == "estimate" && perf.time_s
                                          ? fmt::format("range {} to {}", util::format_duration(perf.time_s->low),
                                                        util::format_duration(perf.time_s->high))
                                          : "from --hours")});
  kv.push_back({"Buy", cost.purchase_usd && cost.host_price_includes_gpus
                           ? fmt::format("{} ({} x {} system with {} GPUs)", util::format_money(*cost.purchase_usd),
                                         cost.host_boxes, cost.host_platform->id, cost.host_platform->gpu_slots)
                       : cost.purchase_usd
                           ? fmt::format("{} ({} x {} {}{})", util::format_money(*cost.purchase_usd), w.gpus,
                                         util::format_money(*cost.gpu_price_usd), cost.price_kind,
                                         cost.host_price_usd  ? fmt::format(" + host {} {}", cost.host_platform->id,
                                                                            util::format_money(*cost.host_price_usd))
                                         : cost.host_platform ? " + host, price unknown"
                                                              : "")
                           : "unknown (no price for this GPU)"});
  if (cost.power_w && cost.usd_per_hour_energy)
    kv.push_back({"Power", fmt::format("{}, {} per busy hour",
                                       *cost.power_w >= 1e4 ? util::format_number(*cost.power_w / 1000) + " kW"
                                                            : util::format_number(*cost.power_w) + " W",
                                       util::format_cents(*cost.usd_per_hour_energy))});
  else
    kv.push_back({"Power", fmt::format("unknown ({} has no published power)", gpu.name)});
  if (cost.job_energy_usd)
    kv.push_back({"Energy for the job", fmt::format("{} ({} kWh)", util::format_money(*cost.job_energy_usd),
                                                    util::format_number(*cost.job_energy_kwh))});
  if (cost.job_own_usd) kv.push_back({"Own: buy + energy", util::format_money(*cost.job_own_usd)});
  if (cost.cloud.empty()) kv.push_back({"Rent", "no cloud price for this GPU in the data (--prices FILE adds one)"});
  for (std::size_t i = 0; i < cost.cloud.size() && i < 3; ++i) {
    const auto& q = cost.cloud[i];
    kv.push_back({i == 0 ? "Rent" : " ",
                  fmt::format("{} x {} {} at {}{}{}", q.instances, q.instance->provider, q.instance->instance,
                              util::format_rate(q.usd_per_hour), q.job_usd ? ": " + util::format_money(*q.job_usd) : "",
                              q.instance->as_of.empty() ? "" : " (" + q.instance->as_of + ")")});
  }
  if (cost.breakeven_hours)
    kv.push_back({"Break-even", fmt::format("{} busy hours, {:.1f} months at {:.0f}% utilisation",
                                            util::format_number(*cost.breakeven_hours), *cost.breakeven_months,
                                            co.utilization * 100)});
  else if (cost.purchase_usd && !cost.cloud.empty())
    kv.push_back({"Break-even", "never: renting costs less per hour than the energy to run it"});
  if (cost.tco_usd)
    kv.push_back(
        {fmt::format("TCO, {} years", co.years),
         fmt::format("own {}{}", util::format_money(*cost.tco_usd),
                     cost.cloud_over_horizon_usd ? ", rent " + util::format_money(*cost.cloud_over_horizon_usd) : "")});
  const std::string no_fit = fmt::format(
      ": the job needs {} more per GPU than the {} usable on each {}. No layout of "
      "{} GPUs holds it; the figures below are what it would take if it did.",
      util::format_bytes(-fit.headroom_bytes), util::format_bytes(fit.usable_bytes), gpu.name, w.gpus);
  if (f == report::Format::html) {
    namespace html = report::html;
    html::Page page("Cost", describe(w) + ", on " + on);
    if (!fit.fits) page.p("Does not fit" + no_fit, "bad");
    page.h2("Money").kv(kv);
    // The job's money, part by part; then owning against renting over the horizon.
    std::vector<html::Segment> job;
    if (cost.purchase_usd)
      job.push_back({fmt::format("Buy {} x {}", w.gpus, gpu.id), *cost.purchase_usd,
                     util::format_money(*cost.purchase_usd), false});
    if (cost.job_energy_usd)
      job.push_back({"Energy for the job", *cost.job_energy_usd, util::format_money(*cost.job_energy_usd), false});
    if (cost.job_own_usd)
      job.push_back({"Own: buy + energy", *cost.job_own_usd, util::format_money(*cost.job_own_usd), false});
    for (std::size_t i = 0; i < cost.cloud.size() && i < 3; ++i)
      if (cost.cloud[i].job_usd)
        job.push_back({fmt::format("Rent {} {}", cost.cloud[i].instance->provider, cost.cloud[i].instance->instance),
                       *cost.cloud[i].job_usd, util::format_money(*cost.cloud[i].job_usd), false});
    std::vector<html::Segment> horizon;
    if (cost.tco_usd) horizon.push_back({"Own: buy + energy", *cost.tco_usd, util::format_money(*cost.tco_usd), false});
    if (cost.cloud_over_horizon_usd && !cost.cloud.empty())
      horizon.push_back({"Rent: " + cost.cloud.front().instance->provider + " " + cost.cloud.front().instance->instance,
                         *cost.cloud_over_horizon_usd, util::format_money(*cost.cloud_over_horizon_usd), false});
    if (!job.empty() || !horizon.empty()) {
      page.h2("Cost components");
      if (!job.empty())
        page.figure(html::bar_chart(job, "This job",
                                    cost.job_hours ? "for " + util::format_duration(*cost.job_hours * 3600) : ""));
      if (!horizon.empty())
        page.figure(
            html::bar_chart(horizon, fmt::format("Over {} years", co.years),
                            fmt::format("at {:.0f}% utilisation", co.utilization * 100)),
            cost.breakeven_hours
                ? fmt::format("Buying breaks even after {} busy hours ({:.1f} months at {:.0f}% utilisation).",
                              util::format_number(*cost.breakeven_hours), *cost.breakeven_months, co.utilization * 100)
                : "");
    }
    std::vector<std::string> assumptions = w.assumptions;
    assumptions.insert(assumptions.end(), perf.assumptions.begin(), perf.assumptions.end());
    assumptions.insert(assumptions.end(), cost.assumptions.begin(), cost.assumptions.end());
    page.h2("Assumptions").list(assumptions);
    ctx.out << page.str(html_footer(ctx, "cost"));
    return;
  }
  if (f == report::Format::markdown) {
    // The same facts as the terminal page: header, verdict, figures, stale prices, assumptions.
    ctx.out << "**" << report::markdown_text(describe(w)) << "**, on " << report::markdown_text(on) << "\n\n";
    if (!fit.fits) ctx.out << "Does not fit" << report::markdown_text(no_fit) << "\n\n";
    ctx.out << report::key_values(kv, f, ctx.style);
    if (!cost.stale_prices.empty()) {
      ctx.out << "\nPrices older than 12 months (get a current quote):\n\n";
      for (const auto& st : cost.stale_prices) ctx.out << "- " << report::markdown_text(st) << "\n";
    }
    ctx.out << "\nAssumptions:\n\n";
    for (const auto* list : {&w.assumptions, &perf.assumptions, &cost.assumptions})
      for (const auto& a : *list) ctx.out << "- " << report::markdown_text(a) << "\n";
    return;
  }
  ctx.out << ctx.style.bold(describe(w)) << "\non " << on << "\n";
  if (auto choice = ctx.gpu_choice(o.gpu); !choice.empty()) ctx.out << choice << "\n";
  ctx.out << "\n";
  if (!fit.fits) ctx.out << ctx.style.bad("Does not fit") << no_fit << "\n\n";
  ctx.out << report::key_values(kv, ctx.style);
  if (!cost.stale_prices.empty()) {
    ctx.out << "\nPrices older than 12 months (get a current quote):\n";
    for (const auto& st : cost.stale_prices) ctx.out << "  - " << st << "\n";
  }
  ctx.out << "\nAssumptions:\n";
  for (const auto& a : w.assumptions) ctx.out << "  - " << a << "\n";
  for (const auto& a : perf.assumptions) ctx.out << "  - " << a << "\n";
  for (const auto& a : cost.assumptions) ctx.out << "  - " << a << "\n";
}

}  // namespace

void setup_cost(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CostFlags>();
  auto* cmd = app.add_subcommand("cost", "Money: buy, power or rent the GPUs for a workload; break-even and TCO");
  add_workload_options(*cmd, o->in, ctx);
  cmd->add_option("--gpu", o->gpu, "GPU to price (id, alias or loose name); --gpus N for N of them");
  cmd->add_option("--hours", o->hours, "Job length when not derived from --tokens (hours, or 30d, 2w)");
  cmd->add_flag("--used", o->used, "Use used-market prices where known");
  cmd->add_option("--kwh-price", o->kwh,
                  "Electricity price per kWh in USD (default: the US commercial average in data/cloud.json)");
  cmd->add_option("--region", o->region,
                  "Use this region's dated electricity price from data/cloud.json (us, cn; eu and uk are published in "
                  "EUR/GBP only)");
  cmd->add_option("--pue", o->pue,
                  "Power usage effectiveness of the facility (default: the industry average in data/cloud.json)");
  cmd->add_option("--utilization", o->utilization,
                  "Share of time the GPUs are busy, for break-even and TCO (default 70%)");
  cmd->add_option("--years", o->years, "TCO horizon in years (default 3)");
  add_format_option(*cmd, ctx, kTabularHtml, "html: a page with charts");
  add_catalog_option(*cmd, ctx);
  add_prices_option(*cmd, ctx);
  cmd->footer(
      "Exit status: 0, or 1 when the workload does not fit (the figures are then marked hypothetical).\n"
      "Examples:\n"
      "  gpuadvisor cost --model gpt-3-175b --task train --tokens 300B --gpu a100-80gb-sxm --gpus 1024\n"
      "  gpuadvisor cost --model llama-3.1-8b --task qlora --tokens 100M --gpu rtx-4090 --used\n"
      "  gpuadvisor cost --model llama-3.1-70b --precision int4 --gpu a100-80gb-sxm --hours 720 --kwh-price 0.25");
  cmd->callback([&ctx, o] { run_cost(ctx, *o); });
}

}  // namespace gpuadvisor::cli
