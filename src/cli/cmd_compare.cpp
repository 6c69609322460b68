// gpuadvisor compare: GPUs side by side, value metrics, and a workload's estimate on each.
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "context.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/perf.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::cli {
namespace {

using catalog::Gpu;
using catalog::Precision;

struct CompareOptions {
  estimate::WorkloadInput in;
  std::vector<std::string> gpus;
  bool used = false;
};

// A value metric: its JSON key, its label, and whether more is better.
struct Metric {
  std::string key, label;
  bool higher_better;
  std::function<std::optional<double>(const Gpu&, bool used)> get;
  int decimals;
};

const std::vector<Metric>& metrics() {
  static const std::vector<Metric> m = {
      {"usd_per_fp16_tflops", "$ per FP16 TFLOPS", false,
       [](const Gpu& g, bool used) -> std::optional<double> {
         auto p = g.price_usd(used);
         auto f = g.peak_flops(Precision::fp16);
         if (!p || !f) return std::nullopt;
         return *p / (*f / 1e12);
       }, 1},
      {"fp16_tflops_per_w", "FP16 TFLOPS per W", true,
       [](const Gpu& g, bool) -> std::optional<double> {
         auto f = g.peak_flops(Precision::fp16);
         if (!f) return std::nullopt;
         return *f / 1e12 / g.tdp_w;
       }, 2},
      {"bandwidth_gbs_per_kusd", "GB/s per $1k", true,
       [](const Gpu& g, bool used) -> std::optional<double> {
         auto p = g.price_usd(used);
         if (!p) return std::nullopt;
         return g.memory_bandwidth_gbs / (*p / 1000);
       }, 1},
      {"memory_gib_per_kusd", "GiB per $1k", true,
       [](const Gpu& g, bool used) -> std::optional<double> {
         auto p = g.price_usd(used);
         if (!p) return std::nullopt;
         return g.memory_bytes / 0x1p30 / (*p / 1000);
       }, 2},
  };
  return m;
}

void run_compare(Context& ctx, const CompareOptions& o) {
  auto f = ctx.output_format(kTabular);
  if (o.gpus.size() < 2) throw Error("compare needs at least two GPUs, e.g. 'gpuadvisor compare a100-80gb-sxm h100-sxm rtx-4090'");
  std::vector<const Gpu*> gpus;
  for (const auto& q : o.gpus) {
    auto r = ctx.catalog().resolve(q);
    if (!r) throw Error(r.error());
    gpus.push_back(*r);
  }
  const bool with_workload = !o.in.model.empty() || !o.in.model_config.empty() || !o.in.profile.empty() || !o.in.model_file.empty();
  estimate::WorkloadSet set;
  std::optional<estimate::Workload> base;
  if (with_workload) base = ctx.workload(o.in, &set);

  // Value metrics per GPU and the best of each row.
  std::vector<std::vector<std::optional<double>>> vals(metrics().size());
  std::vector<int> best(metrics().size(), -1);
  for (std::size_t m = 0; m < metrics().size(); ++m) {
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      auto v = metrics()[m].get(*gpus[i], o.used);
      vals[m].push_back(v);
      if (v && (best[m] < 0 || (metrics()[m].higher_better ? *v > *vals[m][best[m]] : *v < *vals[m][best[m]])))
        best[m] = static_cast<int>(i);
    }
  }
  struct WorkloadResult {
    estimate::Workload w;
    estimate::FitResult fit;
    estimate::PerfEstimate perf;
  };
  std::vector<WorkloadResult> results;
  int best_speed = -1;
  auto speed = [&](const WorkloadResult& r) {
    if (!r.perf.available || !r.fit.fits) return 0.0;
    if (r.perf.images_per_s) return r.perf.images_per_s->typical;
    return estimate::is_training(r.w.task) ? r.perf.tokens_per_s.typical : r.perf.decode_tokens_per_s.typical;
  };
  if (base) {
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      auto w = estimate::plan_layout(*base, set, *gpus[i], ctx.efficiency());
      results.push_back({w, estimate::fit(w, *gpus[i], ctx.efficiency()), estimate::estimate_perf(w, *gpus[i], ctx.efficiency())});
      if (speed(results.back()) > 0 && (best_speed < 0 || speed(results.back()) > speed(results[best_speed])))
        best_speed = static_cast<int>(i);
    }
  }

  if (f == report::Format::json) {
    auto j = report::envelope("compare");
    if (base) j["workload"] = estimate::to_json(*base);
    util::Json arr = util::Json::array();
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      util::Json g = catalog::to_output_json(*gpus[i]);
      g.erase("sources");
      g["price_usd"] = gpus[i]->price_usd(o.used) ? util::Json(*gpus[i]->price_usd(o.used)) : util::Json(nullptr);
      g["price_kind"] = gpus[i]->price_kind(o.used).empty() ? util::Json(nullptr) : util::Json(gpus[i]->price_kind(o.used));
      util::Json mv;
      for (std::size_t m = 0; m < metrics().size(); ++m) {
        mv[metrics()[m].key] = vals[m][i] ? util::Json(*vals[m][i]) : util::Json(nullptr);
        mv[metrics()[m].key + "_best"] = best[m] == static_cast<int>(i);
      }
      g["metrics"] = mv;
      if (base) {
        util::Json wj = estimate::to_json(results[i].perf, results[i].w);
        wj["fits"] = results[i].fit.fits;
        wj["fastest"] = best_speed == static_cast<int>(i);
        g["estimate"] = wj;
      }
      arr.push_back(g);
    }
    j["gpus"] = arr;
    ctx.out << report::dump(j);
    return;
  }

  using report::Align;
  std::vector<report::Column> cols = {{""}};
  for (const auto* g : gpus) cols.push_back({g->id, Align::right});
  report::Table t(cols);
  auto row = [&](const std::string& label, auto&& cell) {
    std::vector<std::string> r = {label};
    for (std::size_t i = 0; i < gpus.size(); ++i) r.push_back(cell(i, *gpus[i]));
    t.add(r);
  };
  auto peak = [](const Gpu& g, Precision p) { auto v = g.peak_flops(p); return v ? util::format_number(*v / 1e12) : std::string("-"); };
  row("Architecture", [](std::size_t, const Gpu& g) { return g.architecture; });
  row("Memory", [](std::size_t, const Gpu& g) { return util::format_bytes(g.memory_bytes) + " " + g.memory_type; });
  row("Bandwidth GB/s", [](std::size_t, const Gpu& g) { return util::format_number(g.memory_bandwidth_gbs); });
  row("FP16 TFLOPS", [&](std::size_t, const Gpu& g) { return peak(g, Precision::fp16); });
  row("BF16 TFLOPS", [&](std::size_t, const Gpu& g) { return peak(g, Precision::bf16); });
  row("FP8 TFLOPS", [&](std::size_t, const Gpu& g) { return peak(g, Precision::fp8); });
  row("TDP W", [](std::size_t, const Gpu& g) { return util::format_number(g.tdp_w); });
  row("GPU link", [](std::size_t, const Gpu& g) {
    return g.interconnect ? *g.interconnect + (g.interconnect_gbs ? " " + util::format_number(*g.interconnect_gbs) : "")
                          : std::string("PCIe only");
  });
  row("Price", [&](std::size_t, const Gpu& g) {
    auto p = g.price_usd(o.used);
    return p ? util::format_money(*p) + (g.price_kind(o.used) == "street" ? "" : " (" + g.price_kind(o.used) + ")") : "-";
  });
  const std::string star = f == report::Format::table ? " *" : " (best)";
  for (std::size_t m = 0; m < metrics().size(); ++m)
    row(metrics()[m].label, [&](std::size_t i, const Gpu&) {
      if (!vals[m][i]) return std::string("-");
      return fmt::format("{:.{}f}", *vals[m][i], metrics()[m].decimals) + (best[m] == static_cast<int>(i) ? star : "");
    });
  if (base) {
    row("Fits", [&](std::size_t i, const Gpu&) {
      const auto& r = results[i];
      return r.fit.fits ? fmt::format("yes ({} GPU{})", r.w.gpus, r.w.gpus > 1 ? "s" : "") : "no";
    });
    const bool training = estimate::is_training(base->task);
    std::string label = base->model.vision && !base->model.is_transformer() ? "Images/s" : training ? "Tokens/s" : "Decode tok/s";
    row(label, [&](std::size_t i, const Gpu&) {
      const auto& r = results[i];
      if (!r.perf.available) return std::string("n/a");
      double v = speed(r);
      if (!r.fit.fits) return std::string("-");
      return util::format_number(v) + (best_speed == static_cast<int>(i) ? star : "");
    });
    if (training && base->tokens > 0)
      row("Time", [&](std::size_t i, const Gpu&) {
        const auto& r = results[i];
        return r.fit.fits && r.perf.time_s ? util::format_duration(r.perf.time_s->typical) : std::string("-");
      });
  }
  ctx.out << t.render(f, ctx.style);
  if (f == report::Format::table) {
    ctx.out << "\n* best in the row. Peaks are dense; prices are street prices unless marked"
            << (o.used ? ", used-market where known" : "") << ".\n";
    if (base) ctx.out << "Workload: " << describe(*base) << "\n";
  }
}

}  // namespace

void setup_compare(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CompareOptions>();
  auto* cmd = app.add_subcommand("compare", "GPUs side by side: specs, value metrics, and a workload's estimate on each");
  cmd->add_option("gpus", o->gpus, "Two or more GPU ids, aliases or loose names")->required();
  cmd->add_flag("--used", o->used, "Use used-market prices where known");
  add_workload_options(*cmd, o->in, ctx);
  add_format_option(*cmd, ctx);
  add_catalog_option(*cmd, ctx);
  cmd->footer(
      "Examples:\n"
      "  gpuadvisor compare a100-80gb-sxm h100-sxm rtx-4090\n"
      "  gpuadvisor compare rtx-3090 rtx-4090 rtx-5090 --model llama-3.1-8b --precision int4 --used\n"
      "  gpuadvisor compare h100-sxm h200 b200 --model llama-3.1-70b --task train --tokens 1T --gpus 64 --format json");
  cmd->callback([&ctx, o] { run_compare(ctx, *o); });
}

}  // namespace gpuadvisor::cli
