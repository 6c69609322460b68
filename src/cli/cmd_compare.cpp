// gpuadvisor compare: GPUs side by side, value metrics, and a workload's estimate on each.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "context.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/perf.h"
#include "gpuadvisor/report/html.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"
#include "html_pages.h"

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
       },
       1},
      {"fp16_tflops_per_w", "FP16 TFLOPS per W", true,
       [](const Gpu& g, bool) -> std::optional<double> {
         auto f = g.peak_flops(Precision::fp16);
         if (!f || !g.tdp_w) return std::nullopt;
         return *f / 1e12 / *g.tdp_w;
       },
       2},
      {"bandwidth_gbs_per_kusd", "GB/s per $1k", true,
       [](const Gpu& g, bool used) -> std::optional<double> {
         auto p = g.price_usd(used);
         if (!p) return std::nullopt;
         return g.memory_bandwidth_gbs / (*p / 1000);
       },
       1},
      {"memory_gib_per_kusd", "GiB per $1k", true,
       [](const Gpu& g, bool used) -> std::optional<double> {
         auto p = g.price_usd(used);
         if (!p) return std::nullopt;
         return g.memory_bytes / 0x1p30 / (*p / 1000);
       },
       2},
  };
  return m;
}

// A value metric with its decimals and thousands separators ("1,337.1").
std::string metric_text(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  const auto dot = s.find('.');
  const std::size_t start = s[0] == '-' ? 1 : 0;
  for (auto pos = dot == std::string::npos ? s.size() : dot; pos > start + 3; pos -= 3) s.insert(pos - 3, ",");
  return s;
}

void run_compare(Context& ctx, const CompareOptions& o) {
  auto f = ctx.output_format();
  if (o.gpus.size() < 2)
    throw Error("compare needs at least two GPUs, e.g. 'gpuadvisor compare a100-80gb-sxm h100-sxm rtx-4090'");
  std::vector<const Gpu*> gpus;
  for (const auto& q : o.gpus) {
    auto r = ctx.catalog().resolve(q);
    if (!r) throw Error(r.error());
    gpus.push_back(*r);
  }
  const bool with_workload =
      !o.in.model.empty() || !o.in.model_config.empty() || !o.in.profile.empty() || !o.in.model_file.empty();
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
      results.push_back(
          {w, estimate::fit(w, *gpus[i], ctx.efficiency()), estimate::estimate_perf(w, *gpus[i], ctx.efficiency())});
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
      g["price_kind"] =
          gpus[i]->price_kind(o.used).empty() ? util::Json(nullptr) : util::Json(gpus[i]->price_kind(o.used));
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

  if (f == report::Format::csv) {
    // For scripts: one row per GPU, plain numbers in SI units named as the JSON keys; an empty field
    // is unknown.
    auto num = [](std::optional<double> v) { return v ? fmt::format("{}", *v) : std::string(); };
    std::vector<report::Column> cols;
    for (const char* h : {"id", "name", "architecture", "memory_bytes", "memory_type", "memory_bandwidth_bytes_per_s",
                          "peak_fp16_flops", "peak_bf16_flops", "peak_fp8_flops", "tdp_w", "interconnect",
                          "interconnect_bytes_per_s", "price_usd", "price_kind"})
      cols.push_back({h});
    for (const auto& m : metrics()) cols.push_back({m.key});
    if (base)
      for (const char* h : {"model", "task", "fits", "throughput", "throughput_unit", "time_s"}) cols.push_back({h});
    report::Table t(cols);
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const Gpu& g = *gpus[i];
      std::vector<std::string> r = {
          g.id,
          g.name,
          g.architecture,
          num(g.memory_bytes),
          g.memory_type,
          num(g.memory_bandwidth_gbs * 1e9),
          num(g.peak_flops(Precision::fp16)),
          num(g.peak_flops(Precision::bf16)),
          num(g.peak_flops(Precision::fp8)),
          num(g.tdp_w),
          g.interconnect.value_or(""),
          num(g.interconnect_gbs ? std::optional<double>(*g.interconnect_gbs * 1e9) : std::nullopt),
          num(g.price_usd(o.used)),
          g.price_kind(o.used)};
      for (std::size_t m = 0; m < metrics().size(); ++m) r.push_back(num(vals[m][i]));
      if (base) {
        const auto& p = results[i].perf;
        const auto& w = results[i].w;
        std::optional<double> tput, time;
        std::string unit;
        if (p.available) {
          if (p.images_per_s)
            tput = p.images_per_s->typical, unit = "images/s";
          else if (estimate::is_training(w.task))
            tput = p.tokens_per_s.typical, unit = "tokens/s";
          else
            tput = p.decode_tokens_per_s.typical, unit = "tokens/s per sequence";
          if (p.time_s) time = p.time_s->typical;
        }
        r.push_back(w.model.id);
        r.push_back(std::string(estimate::name(w.task)));
        r.push_back(results[i].fit.fits ? "true" : "false");
        r.push_back(num(tput));
        r.push_back(unit);
        r.push_back(num(time));
      }
      t.add(std::move(r));
    }
    ctx.out << t.render(f, ctx.style);
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
  auto peak = [](const Gpu& g, Precision p) {
    auto v = g.peak_flops(p);
    return v ? util::format_number(*v / 1e12) : std::string("-");
  };
  row("Architecture", [](std::size_t, const Gpu& g) { return g.architecture; });
  row("Memory", [](std::size_t, const Gpu& g) { return util::format_bytes(g.memory_bytes) + " " + g.memory_type; });
  row("Bandwidth GB/s", [](std::size_t, const Gpu& g) { return util::format_number(g.memory_bandwidth_gbs); });
  row("FP16 TFLOPS", [&](std::size_t, const Gpu& g) { return peak(g, Precision::fp16); });
  row("BF16 TFLOPS", [&](std::size_t, const Gpu& g) { return peak(g, Precision::bf16); });
  row("FP8 TFLOPS", [&](std::size_t, const Gpu& g) { return peak(g, Precision::fp8); });
  row("TDP W",
      [](std::size_t, const Gpu& g) { return g.tdp_w ? util::format_number(*g.tdp_w) : std::string("unknown"); });
  row("GPU link", [](std::size_t, const Gpu& g) {
    return g.interconnect ? *g.interconnect + (g.interconnect_gbs ? " " + util::format_number(*g.interconnect_gbs) : "")
                          : std::string("PCIe only");
  });
  row("Price", [&](std::size_t, const Gpu& g) {
    auto p = g.price_usd(o.used);
    return p ? util::format_money(*p) + (g.price_kind(o.used) == "street" ? "" : " (" + g.price_kind(o.used) + ")")
             : "-";
  });
  const std::string star = f == report::Format::table ? " *" : " (best)";
  // How far each GPU is from the best in a metric: 1 for the best, less for the others.
  auto relative = [&](std::size_t m, std::size_t i) {
    const auto& v = vals[m][i];
    if (!v || best[m] < 0 || *v <= 0) return 0.0;
    const double b = *vals[m][best[m]];
    return metrics()[m].higher_better ? *v / b : b / *v;
  };
  for (std::size_t m = 0; m < metrics().size(); ++m)
    row(metrics()[m].label, [&](std::size_t i, const Gpu&) {
      if (!vals[m][i]) return std::string("-");
      return metric_text(*vals[m][i], metrics()[m].decimals) + (best[m] == static_cast<int>(i) ? star : "");
    });
  if (base) {
    row("Fits", [&](std::size_t i, const Gpu&) {
      const auto& r = results[i];
      return r.fit.fits ? fmt::format("yes ({} GPU{})", r.w.gpus, r.w.gpus > 1 ? "s" : "") : "no";
    });
    const bool training = estimate::is_training(base->task);
    std::string label = base->model.vision && !base->model.is_transformer() ? "Images/s"
                        : training                                          ? "Tokens/s"
                                                                            : "Decode tok/s";
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
  const std::string footnote = fmt::format("Peaks are dense; prices are street prices unless marked{}.",
                                           o.used ? ", used-market where known" : "");
  if (f == report::Format::html) {
    namespace html = report::html;
    std::vector<std::string> names;
    for (const auto* g : gpus) names.push_back(g->name);
    html::Page page("GPU comparison", util::join(names, " vs "));
    if (base) page.h2("Workload").p(describe(*base));
    page.h2("Side by side").table(t).p("(best) marks the best in the row. " + footnote, "muted");
    std::vector<std::string> charts;
    for (std::size_t m = 0; m < metrics().size(); ++m) {
      std::vector<html::Segment> bars;
      for (std::size_t i = 0; i < gpus.size(); ++i)
        if (vals[m][i])
          bars.push_back({gpus[i]->id, *vals[m][i], metric_text(*vals[m][i], metrics()[m].decimals),
                          best[m] == static_cast<int>(i)});
      if (!bars.empty())
        charts.push_back(html::bar_chart(bars, metrics()[m].label,
                                         metrics()[m].higher_better ? "higher is better" : "lower is better", 520));
    }
    if (!charts.empty()) page.h2("Value metrics").figures(charts);
    if (base) {
      std::vector<html::Segment> bars;
      for (std::size_t i = 0; i < gpus.size(); ++i)
        if (results[i].fit.fits && results[i].perf.available)
          bars.push_back({gpus[i]->id, speed(results[i]), util::format_number(speed(results[i])),
                          best_speed == static_cast<int>(i)});
      if (!bars.empty())
        page.h2("Speed on the workload")
            .figure(html::bar_chart(bars,
                                    base->model.vision && !base->model.is_transformer() ? "Images/s"
                                    : estimate::is_training(base->task)                 ? "Tokens/s"
                                                                                        : "Decode tokens/s",
                                    "higher is better; GPUs the workload does not fit are left out"));
    }
    ctx.out << page.str(html_footer(ctx, "compare"));
    return;
  }
  ctx.out << t.render(f, ctx.style);
  if (f == report::Format::markdown && base)
    ctx.out << "\nWorkload: " << report::markdown_text(describe(*base)) << "\n";
  if (f == report::Format::table) {
    // Each value metric as bars relative to the best GPU, drawn as the memory breakdown draws shares.
    std::size_t idw = 0, vw = 0;
    for (const auto* g : gpus) idw = std::max(idw, g->id.size());
    for (std::size_t m = 0; m < metrics().size(); ++m)
      for (std::size_t i = 0; i < gpus.size(); ++i)
        if (vals[m][i]) vw = std::max(vw, metric_text(*vals[m][i], metrics()[m].decimals).size());
    const int room = ctx.style.width - static_cast<int>(2 + idw + 2 + vw + 2 + 5 + 2);
    const int bw = std::clamp(room, 5, report::kBarWidth);
    ctx.out << "\nRelative to the best in each row (100%):\n";
    for (std::size_t m = 0; m < metrics().size(); ++m) {
      ctx.out << fmt::format("{} ({} is better)\n", metrics()[m].label,
                             metrics()[m].higher_better ? "higher" : "lower");
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        const std::string v = vals[m][i] ? metric_text(*vals[m][i], metrics()[m].decimals) : "-";
        std::string line = fmt::format("  {:<{}}  {:>{}}", gpus[i]->id, idw, v, vw);
        if (vals[m][i])
          line += fmt::format("  {:>3.0f}% {}", relative(m, i) * 100, report::bar(relative(m, i), bw, ctx.style));
        if (best[m] == static_cast<int>(i)) line += " *";
        ctx.out << line << "\n";
      }
    }
    ctx.out << "\n* best in the row. " << footnote << "\n";
    if (base) ctx.out << "Workload: " << describe(*base) << "\n";
  }
}

}  // namespace

void setup_compare(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CompareOptions>();
  auto* cmd =
      app.add_subcommand("compare", "GPUs side by side: specs, value metrics, and a workload's estimate on each");
  cmd->add_option("gpus", o->gpus, "Two or more GPU ids, aliases or loose names")->required()->type_name("GPU");
  cmd->add_flag("--used", o->used, "Use used-market prices where known");
  add_workload_options(*cmd, o->in, ctx);
  add_format_option(*cmd, ctx, kTabularHtml, "html: a page with charts");
  add_catalog_option(*cmd, ctx);
  cmd->footer(
      "Examples:\n"
      "  gpuadvisor compare a100-80gb-sxm h100-sxm rtx-4090\n"
      "  gpuadvisor compare rtx-3090 rtx-4090 rtx-5090 --model llama-3.1-8b --precision int4 --used\n"
      "  gpuadvisor compare h100-sxm h200 b200 --model llama-3.1-70b --task train --tokens 1T --gpus 64 --format json");
  cmd->callback([&ctx, o] { run_compare(ctx, *o); });
}

}  // namespace gpuadvisor::cli
