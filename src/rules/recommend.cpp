#include "gpuadvisor/rules/recommend.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::rules {
namespace {

using catalog::Precision;
using estimate::Task;

// Precisions to try for a plan, best quality first; the first that fits is the plan's.
std::vector<std::string> precisions_for(const estimate::Workload& w, const estimate::WorkloadSet& set, const catalog::Gpu& gpu) {
  if (set.precision) return {w.precision};
  const bool bf16 = gpu.peak_flops(Precision::bf16).has_value();
  switch (w.task) {
    case Task::train:
    case Task::lora: return {bf16 ? "bf16" : "fp16"};
    case Task::qlora: return {"nf4"};
    case Task::inference:
      if (w.model.vision && !w.model.is_transformer()) return {"fp16", "int8"};
      return {"fp16", "fp8", "int8", "int4"};
  }
  return {w.precision};
}

std::vector<std::string> scenario_segments(const std::string& scenario) {
  if (scenario == "personal" || scenario == "workstation") return {"consumer", "workstation"};
  if (scenario == "edge") return {"edge"};
  if (scenario == "datacenter") return {"consumer", "workstation", "datacenter"};
  return {"consumer", "workstation", "datacenter", "edge"};
}

double throughput_of(const estimate::PerfEstimate& p, const estimate::Workload& w) {
  if (!p.available) return 0;
  if (p.images_per_s) return p.images_per_s->typical;
  return estimate::is_training(w.task) ? p.tokens_per_s.typical : p.decode_tokens_per_s.typical;
}

std::string throughput_unit(const estimate::Workload& w) {
  if (w.model.vision && !w.model.is_transformer()) return "images/s";
  return estimate::is_training(w.task) ? "tokens/s" : "tokens/s per sequence";
}

// How far a rejected candidate is from acceptance (smaller is nearer): failed constraints first,
// then by how much the worst one misses.
double distance(const Candidate& c, const Request& req) {
  // A near miss on precision (a lower one of the same GPU fits) comes first; an unknown price is
  // not a near miss at all.
  double d = c.hint.empty() ? 5 : 0;
  for (const auto& o : c.outcomes) {
    if (o.passed || o.rule->kind != Kind::constraint) continue;
    d += o.rule->id == "price-known" ? 50 : 10;
    if (o.rule->id == "memory-fit") d += std::max(0.0, 0.10 - c.fit.headroom_bytes / c.fit.capacity_bytes);
    if (o.rule->id == "budget" && c.price_usd && req.budget_usd) d += std::min(5.0, std::log2(*c.price_usd / *req.budget_usd));
  }
  return d;
}

Candidate evaluate_candidate(const Request& req, const Data& data, const catalog::Gpu& gpu, int count,
                             const std::string& precision, const Metrics& options) {
  Candidate c;
  c.gpu = &gpu;
  c.count = count;
  c.w = req.base;
  c.w.precision = precision;
  c.w.gpus = count;
  if (!estimate::is_training(c.w.task) && !req.set.tp && !req.set.pp) c.w.tp = count;
  if (estimate::is_training(c.w.task)) c.w = estimate::plan_layout(c.w, req.set, gpu, data.eff);
  else estimate::apply_gpu_defaults(c.w, req.set, gpu);
  auto mem = estimate::estimate_memory(c.w, data.eff, false);
  c.memory_need_bytes = mem.per_gpu_bytes;
  c.fit.capacity_bytes = gpu.memory_bytes;
  c.fit.usable_bytes = gpu.memory_bytes;
  c.fit.headroom_bytes = gpu.memory_bytes - mem.per_gpu_bytes;
  c.fit.fits = c.fit.headroom_bytes >= 0;
  c.perf = estimate::estimate_perf(c.w, gpu, data.eff);
  c.throughput = throughput_of(c.perf, c.w);

  // Price: count x unit price.
  auto unit = gpu.price_usd(req.used);
  c.price_kind = gpu.price_kind(req.used);
  if (unit) c.price_usd = *unit * count;

  // Power: a configurable range lets the plan run capped at the limit.
  const double min_power = gpu.power_min_w.value_or(gpu.tdp_w);
  if (req.power_limit_w && gpu.tdp_w * count > *req.power_limit_w && min_power * count <= *req.power_limit_w) {
    c.power_cap_w = *req.power_limit_w / count;
    c.throughput *= *c.power_cap_w / gpu.tdp_w;  // speed assumed proportional to power when capped
  }

  auto& m = c.metrics;
  const double headroom = c.fit.headroom_bytes / gpu.memory_bytes;
  m.set("memory_headroom_fraction", headroom, fmt::format("{:.0f}%", headroom * 100));
  m.set("memory_need_bytes", c.memory_need_bytes, util::format_bytes(c.memory_need_bytes));
  m.set("memory_need", c.memory_need_bytes, util::format_bytes(c.memory_need_bytes));
  m.set("memory_capacity_bytes", gpu.memory_bytes, util::format_bytes(gpu.memory_bytes));
  m.set("memory_capacity", gpu.memory_bytes, util::format_bytes(gpu.memory_bytes));
  {
    // What the memory is made of, for the memory-fit message.
    std::vector<std::string> parts;
    double other = 0;
    for (const auto& l : mem.lines) {
      if (l.id == "weights" || l.id == "kv_cache" || l.id == "activations" || l.id == "optimizer_state" || l.id == "gradients" ||
          l.id == "master_weights")
        parts.push_back(fmt::format("{}{} {}", l.id == "weights" ? precision + " " : "", l.label, util::format_bytes(l.per_gpu_bytes)));
      else
        other += l.per_gpu_bytes;
    }
    parts.push_back("overheads " + util::format_bytes(other));
    m.set("memory_parts", util::join(parts, " + "));
  }
  double need_share = 0.10;
  if (const auto* mf = data.rules.find("memory-fit"); mf && std::holds_alternative<double>(mf->threshold))
    need_share = std::get<double>(mf->threshold);
  c.fit.usable_bytes = gpu.memory_bytes * (1 - need_share);
  c.fit.fits = headroom >= need_share;
  m.set("memory_verdict", std::string(headroom < 0 ? fmt::format("short by {}", util::format_bytes(-c.fit.headroom_bytes))
                                                   : fmt::format("only {:.0f}% left, below the {:.0f}% headroom", headroom * 100,
                                                                 need_share * 100)));
  m.set("total_price_usd", c.price_usd ? Value(*c.price_usd) : Value(), c.price_usd ? util::format_money(*c.price_usd) : "unknown");
  m.set("total_price", c.price_usd ? Value(*c.price_usd) : Value(), c.price_usd ? util::format_money(*c.price_usd) : "unknown");
  m.set("unit_price", unit ? Value(*unit) : Value(), unit ? util::format_money(*unit) : "unknown");
  m.set("price_kind", c.price_kind);
  m.set("price_known", unit.has_value());
  m.set("used_price", c.price_kind == "used");
  m.set("total_tdp_w", gpu.tdp_w * count, util::format_number(gpu.tdp_w * count) + " W");
  m.set("min_total_power_w", min_power * count, util::format_number(min_power * count) + " W");
  m.set("min_total_power", min_power * count, util::format_number(min_power * count) + " W");
  m.set("min_power", min_power, util::format_number(min_power) + " W");
  // The precision the math runs at: the format's (NF4 and int4 bases dequantize to 16-bit).
  const Precision compute = c.w.format().compute;
  const bool supported = gpu.peak_flops(compute).has_value();
  m.set("precision_supported", supported);
  m.set("compute_precision", std::string(catalog::name(compute)));
  m.set("architecture", gpu.architecture);
  m.set("precision", precision);
  m.set("precision_requirement",
        std::string(compute == Precision::bf16 ? "Ampere or newer" : compute == Precision::fp8 ? "Ada, Hopper or newer"
                    : compute == Precision::int8 ? "INT8 Tensor Cores" : "a published peak"));
  const auto segs = scenario_segments(req.scenario);
  m.set("segment_allowed", std::find(segs.begin(), segs.end(), gpu.segment) != segs.end());
  m.set("segment", gpu.segment);
  m.set("scenario_segments", util::join(segs, ", "));
  m.set("pcie_only_multi_gpu_training", estimate::is_training(c.w.task) && count > 1 && !gpu.has_fast_interconnect());
  m.set("scaling_percent", fmt::format("{:.0f}%", c.perf.scaling * 100));
  m.set("geforce_in_datacenter", req.scenario == "datacenter" && gpu.segment == "consumer" && gpu.vendor == "nvidia");
  m.set("vendor_nvidia", gpu.vendor == "nvidia");
  m.set("vendor", gpu.vendor == "amd" ? "AMD" : gpu.vendor == "intel" ? "Intel" : "NVIDIA");
  m.set("gpus", static_cast<double>(count), std::to_string(count));
  m.set("count", static_cast<double>(count), std::to_string(count));
  m.set("gpu", gpu.name);
  m.set("throughput", c.throughput);
  if (c.perf.time_s) m.set("time_s", c.perf.time_s->typical, util::format_duration(c.perf.time_s->typical));
  if (c.price_usd && c.perf.available) m.set("flops_per_usd", c.perf.peak_flops * count / *c.price_usd);
  m.set("bandwidth_gbs", gpu.memory_bandwidth_gbs);

  c.accepted = true;
  for (const auto& r : data.rules.rules()) {
    if (r.scope != "recommend") continue;
    auto o = evaluate(r, m, options);
    if (o.applicable && !o.passed && r.kind == Kind::constraint) c.accepted = false;
    c.outcomes.push_back(std::move(o));
  }
  if (!c.perf.available) c.accepted = false;
  return c;
}

double score_of(const Candidate& c, Prefer p) {
  double t = c.throughput;
  if (t <= 0) return 0;
  double watts = c.power_cap_w ? *c.power_cap_w * c.count : c.gpu->tdp_w * c.count;
  double s = 0;
  switch (p) {
    case Prefer::speed: s = t; break;
    case Prefer::efficiency: s = t / (watts / 1000); break;
    case Prefer::cost: s = c.price_usd ? t / (*c.price_usd / 1000) : 0; break;
    case Prefer::balanced: s = c.price_usd ? t / std::sqrt(*c.price_usd / 1000) : 0; break;
  }
  for (const auto& o : c.outcomes)
    if (o.applicable && !o.passed && o.rule->kind == Kind::advice) s *= 1 - o.rule->weight;
  return s;
}

std::string score_unit(Prefer p, const std::string& tu) {
  switch (p) {
    case Prefer::speed: return tu;
    case Prefer::efficiency: return tu + " per kW";
    case Prefer::cost: return tu + " per $1k";
    case Prefer::balanced: return tu + " per sqrt($1k)";
  }
  return tu;
}

}  // namespace

std::string_view name(Prefer p) {
  switch (p) {
    case Prefer::balanced: return "balanced";
    case Prefer::cost: return "cost";
    case Prefer::speed: return "speed";
    case Prefer::efficiency: return "efficiency";
  }
  return "balanced";
}

std::string Candidate::label() const { return fmt::format("{} x{} {}", gpu->id, count, w.precision); }

Recommendation recommend(const Request& req, const Data& data) {
  Recommendation out;
  out.prefer = req.prefer ? *req.prefer : req.scenario == "edge" ? Prefer::efficiency : req.budget_usd ? Prefer::balanced : Prefer::speed;
  const std::string tu = throughput_unit(req.base);
  out.score_unit = score_unit(out.prefer, tu);
  if (!req.set.task) out.defaults.push_back("task: inference (set --task train|lora|qlora for training)");
  if (!req.set.precision)
    out.defaults.push_back(estimate::is_training(req.base.task)
                               ? fmt::format("precision: {} for {}", req.base.task == Task::qlora ? "nf4" : "bf16 (fp16 where the GPU has no bf16)",
                                             estimate::name(req.base.task))
                               : "precision: the best that fits each GPU, in order fp16, fp8, int8, int4");
  out.defaults.push_back(fmt::format("GPU counts: 1 to {}{}", req.max_gpus, req.max_gpus_set ? "" : " (--max-gpus)"));
  out.defaults.push_back(fmt::format("ranking: {} ({}; --prefer cost|speed|efficiency|balanced)", name(out.prefer), out.score_unit));
  if (req.scenario.empty()) out.defaults.push_back("scenario: any (--scenario personal|workstation|datacenter|edge)");
  out.defaults.push_back(req.used ? "prices: used-market where known, else street, else launch MSRP"
                                  : "prices: street where known, else launch MSRP (--used for used-market prices)");

  Metrics options;
  if (req.budget_usd) options.set("budget", *req.budget_usd, util::format_money(*req.budget_usd));
  if (req.power_limit_w) options.set("power_limit", *req.power_limit_w, util::format_number(*req.power_limit_w) + " W");
  options.set("scenario", req.scenario.empty() ? std::string("any") : req.scenario);

  std::vector<int> counts;
  if (req.set.gpus) counts = {req.base.gpus};
  else
    for (int n = 1; n <= req.max_gpus; n *= 2) counts.push_back(n);

  for (const auto& gpu : data.catalog.gpus()) {
    for (int n : counts) {
      for (const auto& p : precisions_for(req.base, req.set, gpu)) {
        estimate::Workload probe = req.base;
        probe.gpus = n;
        probe.precision = p;
        if (!estimate::is_training(probe.task) && !req.set.tp && !req.set.pp) probe.tp = n;
        if (!estimate::check_layout(probe).empty() && !estimate::is_training(probe.task)) continue;
        out.candidates.push_back(evaluate_candidate(req, data, gpu, n, p, options));
      }
    }
  }
  for (auto& c : out.candidates) c.score = c.accepted ? score_of(c, out.prefer) : 0;

  // Plans: per GPU model and count the first accepted precision (best quality); then one plan per
  // GPU model, best score first.
  std::map<std::pair<std::string, int>, std::size_t> chosen;
  for (std::size_t i = 0; i < out.candidates.size(); ++i) {
    const auto& c = out.candidates[i];
    auto key = std::make_pair(c.gpu->id, c.count);
    if (c.accepted && !chosen.count(key)) chosen[key] = i;
  }
  std::vector<std::size_t> accepted;
  for (const auto& [k, i] : chosen) accepted.push_back(i);
  auto better = [&](std::size_t a, std::size_t b) {
    const auto& x = out.candidates[a];
    const auto& y = out.candidates[b];
    if (x.score != y.score) return x.score > y.score;
    double px = x.price_usd.value_or(1e300), py = y.price_usd.value_or(1e300);
    if (px != py) return px < py;
    if (x.gpu->id != y.gpu->id) return x.gpu->id < y.gpu->id;
    return x.count < y.count;
  };
  std::sort(accepted.begin(), accepted.end(), better);
  std::set<std::string> seen;
  for (auto i : accepted) {
    if (seen.insert(out.candidates[i].gpu->id).second) out.plans.push_back(i);
  }

  // Pareto front on (price, time per unit of work = 1 / throughput) among accepted plans.
  for (auto i : accepted) {
    const auto& c = out.candidates[i];
    if (!c.price_usd) continue;
    bool dominated = false;
    for (auto j : accepted) {
      const auto& d = out.candidates[j];
      if (j == i || !d.price_usd) continue;
      if (*d.price_usd <= *c.price_usd && d.throughput >= c.throughput && (*d.price_usd < *c.price_usd || d.throughput > c.throughput)) {
        dominated = true;
        break;
      }
    }
    if (!dominated) out.pareto.push_back(i);
  }
  std::sort(out.pareto.begin(), out.pareto.end(), [&](std::size_t a, std::size_t b) {
    return *out.candidates[a].price_usd < *out.candidates[b].price_usd;
  });

  // Reasons and hints.
  for (auto i : out.plans) {
    auto& c = out.candidates[i];
    std::string why = fmt::format("{} in {} with {:.0f}% memory to spare", util::format_bytes(c.memory_need_bytes),
                                  util::format_bytes(c.gpu->memory_bytes), 100 * c.fit.headroom_bytes / c.gpu->memory_bytes);
    if (c.power_cap_w) why += fmt::format(", power-capped to {} W", util::format_number(*c.power_cap_w));
    c.reason = why;
  }
  for (auto& c : out.candidates) {
    if (c.accepted) continue;
    // The same GPU and count at a lower precision that is accepted.
    for (const auto& [k, i] : chosen)
      if (k.first == c.gpu->id && k.second == c.count) c.hint = "fits in " + out.candidates[i].w.precision;
  }

  // Nearest rejected: per GPU model its nearest rejected candidate.
  std::vector<std::size_t> rej;
  for (std::size_t i = 0; i < out.candidates.size(); ++i)
    if (!out.candidates[i].accepted && out.candidates[i].perf.available) rej.push_back(i);
  std::stable_sort(rej.begin(), rej.end(), [&](std::size_t a, std::size_t b) {
    double da = distance(out.candidates[a], req), db = distance(out.candidates[b], req);
    if (da != db) return da < db;
    return out.candidates[a].gpu->id < out.candidates[b].gpu->id;
  });
  std::set<std::string> rseen;
  for (auto i : rej) {
    if (out.rejected.size() >= static_cast<std::size_t>(std::max(3, req.top))) break;
    if (rseen.insert(out.candidates[i].gpu->id).second) out.rejected.push_back(i);
  }

  // Ways out when nothing is accepted.
  if (out.plans.empty()) {
    // 1. The cheapest candidate that fails only the budget.
    const Candidate* cheapest = nullptr;
    for (const auto& c : out.candidates) {
      bool only_budget = c.perf.available && c.price_usd;
      for (const auto& o : c.outcomes)
        if (o.applicable && !o.passed && o.rule->kind == Kind::constraint && o.rule->id != "budget") only_budget = false;
      if (only_budget && (!cheapest || *c.price_usd < *cheapest->price_usd)) cheapest = &c;
    }
    if (cheapest && req.budget_usd)
      out.way_out.push_back(fmt::format("raise the budget to {}: {} x {} ({})", util::format_money(*cheapest->price_usd),
                                        cheapest->count, cheapest->gpu->name, cheapest->w.precision));
    // 2. A lighter plan: QLoRA for training, 4-bit for inference at a fixed precision.
    auto try_alt = [&](Request alt, const std::string& what) {
      auto r = recommend(alt, data);
      if (!r.plans.empty()) {
        // The cheapest way out, not the best-scored plan.
        std::size_t best = r.plans.front();
        for (auto i : r.plans)
          if (r.candidates[i].price_usd && (!r.candidates[best].price_usd || *r.candidates[i].price_usd < *r.candidates[best].price_usd))
            best = i;
        const auto& c = r.candidates[best];
        out.way_out.push_back(fmt::format("{}: {} x {} ({}) fits for {}", what, c.count, c.gpu->name, c.w.precision,
                                          c.price_usd ? util::format_money(*c.price_usd) : "an unknown price"));
      }
    };
    if (req.base.task == Task::train || req.base.task == Task::lora) {
      Request alt = req;
      alt.base.task = Task::qlora;
      alt.base.precision = "nf4";
      alt.base.checkpointing = "full";
      alt.base.lora_targets = {"q", "k", "v", "o", "gate", "up", "down"};
      alt.set.precision = false;
      try_alt(alt, "use --task qlora (4-bit base, trained adapters)");
    } else if (req.set.precision && req.base.format().bits > 4.2) {
      Request alt = req;
      alt.set.precision = true;
      alt.base.precision = "int4";
      try_alt(alt, "use --precision int4");
    }
    // 3. More GPUs than --max-gpus allowed.
    if (!req.set.gpus && req.max_gpus < 64) {
      Request alt = req;
      alt.max_gpus = req.max_gpus * 8;
      auto r = recommend(alt, data);
      if (!r.plans.empty()) {
        const auto& c = r.candidates[r.plans.front()];
        out.way_out.push_back(fmt::format("use {} GPUs (--max-gpus {}): {} x {} ({})", c.count, c.count, c.count, c.gpu->name,
                                          c.price_usd ? util::format_money(*c.price_usd) : "unknown price"));
      }
    }
    if (out.way_out.empty()) out.way_out.push_back("no GPU in the catalog holds this workload within the constraints");
  }
  return out;
}

std::vector<FitRow> fit_models(const catalog::Gpu& gpu, int gpus, const catalog::ModelSet& models,
                               const catalog::Efficiency& eff, double headroom) {
  struct Plan {
    const char* label;
    Task task;
    const char* precision;
  };
  static const Plan plans[] = {{"inference fp16", Task::inference, "fp16"}, {"inference int8", Task::inference, "int8"},
                               {"inference int4", Task::inference, "int4"}, {"lora bf16", Task::lora, "bf16"},
                               {"qlora nf4", Task::qlora, "nf4"},           {"train bf16", Task::train, "bf16"}};
  std::vector<FitRow> rows;
  for (const auto& m : models.models()) {
    for (const auto& p : plans) {
      if (!m.is_transformer() && p.task != Task::inference && p.task != Task::train) continue;
      estimate::WorkloadInput in;
      in.model = m.id;
      in.task = std::string(estimate::name(p.task));
      in.precision = p.precision;
      in.gpus = std::to_string(gpus);
      estimate::Workload w;
      estimate::WorkloadSet set;
      try {
        w = estimate::make_workload(in, models, &set);
      } catch (const Error&) {
        continue;  // e.g. tensor parallelism that does not divide the heads
      }
      w = estimate::plan_layout(w, set, gpu, eff, headroom);
      auto f = estimate::fit(w, gpu, eff, headroom);
      rows.push_back({&m, p.label, f.fits, f.max_seq_len, f.max_batch, f.max_seq_capped});
    }
  }
  return rows;
}

}  // namespace gpuadvisor::rules
