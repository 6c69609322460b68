#include "gpuadvisor/rules/recommend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gpuadvisor/catalog/engine.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::rules {
namespace {

using catalog::Precision;
using estimate::Task;

// Precisions to try for a plan, best quality first; the first that fits is the plan's.
std::vector<std::string> precisions_for(const estimate::Workload& w, const estimate::WorkloadSet& set,
                                        const catalog::Gpu& gpu) {
  if (set.precision) return {w.precision};
  const bool bf16 = gpu.peak_flops(Precision::bf16).has_value();
  switch (w.task) {
    case Task::train:
    case Task::lora:
      return {bf16 ? "bf16" : "fp16"};
    case Task::qlora:
      return {"nf4"};
    case Task::inference: {
      // Diffusion pipelines run in 16-bit (diffusers); detection and classification also in int8
      // (TensorRT with calibration), as deployed on Jetson.
      if (w.model.vision && w.model.vision->diffusion) return {"fp16"};
      if (w.model.vision && !w.model.is_transformer()) return {"fp16", "int8"};
      // Where the engine of the plain formats does not run (vLLM on an Apple GPU), the ladder is
      // llama.cpp's GGUF formats, as people run models there.
      const auto* int4 = estimate::find_format("int4");
      if (int4 && !catalog::engine(estimate::default_engine(*int4)).runs_on(gpu.vendor))
        return {"fp16", "q8_0", "q4_k_m"};
      return {"fp16", "fp8", "int8", "int4"};
    }
  }
  return {w.precision};
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
    // An unknown price is a data gap, nearer than a GPU the scenario excludes.
    d += o.rule->id == "price-known" ? 25 : o.rule->id == "scenario-segment" ? 30 : 10;
    if (o.rule->id == "memory-fit") d += std::max(0.0, 0.10 - c.fit.headroom_bytes / c.fit.capacity_bytes);
    if (o.rule->id == "budget" && c.price_usd && req.budget_usd)
      d += std::min(5.0, std::log2(*c.price_usd / *req.budget_usd));
    if (o.rule->id == "deadline" && c.perf.time_s && req.deadline_s)
      d += std::min(9.9, std::log2(c.perf.time_s->typical / *req.deadline_s));  // below a second failure
    if (o.rule->id == "cloud-budget" && req.budget_usd) {
      const auto rent = req.budget_per_hour ? c.usd_per_hour : c.rent_usd;
      if (rent) d += std::min(5.0, std::log2(*rent / *req.budget_usd));
    }
  }
  return d;
}

// Hours a rented instance takes for the job: training the workload's tokens, or generating them
// at the batch's decode rate. Unknown without --tokens.
std::optional<double> job_hours(const Candidate& c) {
  if (c.w.tokens <= 0 || !c.perf.available || c.throughput <= 0) return std::nullopt;
  if (estimate::is_training(c.w.task))
    return c.perf.time_s ? std::optional<double>(c.perf.time_s->typical / 3600) : std::nullopt;
  if (c.perf.images_per_s || c.perf.decode_total_tokens_per_s.typical <= 0) return std::nullopt;
  return c.w.tokens / c.perf.decode_total_tokens_per_s.typical / 3600;
}

// The options rules read thresholds from (threshold_from) and messages show.
Metrics options_of(const Request& req) {
  Metrics options;
  if (req.budget_usd)
    options.set(
        "budget", *req.budget_usd,
        req.cloud && req.budget_per_hour ? util::format_rate(*req.budget_usd) : util::format_money(*req.budget_usd));
  if (req.power_limit_w) options.set("power_limit", *req.power_limit_w, util::format_number(*req.power_limit_w) + " W");
  if (req.deadline_s) options.set("deadline", *req.deadline_s, util::format_duration(*req.deadline_s));
  if (req.serve && req.serve->tokens_per_user_s)
    options.set("tokens_per_user_s", *req.serve->tokens_per_user_s, util::format_number(*req.serve->tokens_per_user_s));
  if (req.serve && req.serve->ttft_s)
    options.set("ttft", *req.serve->ttft_s, util::format_duration(*req.serve->ttft_s));
  options.set("scenario", req.scenario.empty() ? std::string("any") : req.scenario);
  if (req.base.headroom) options.set("headroom", *req.base.headroom, fmt::format("{:.0f}%", *req.base.headroom * 100));
  return options;
}

// What evaluating a candidate needs besides the GPU, worked out once per search: the options, the
// base workload without the texts no candidate reads (the assumptions made building it, the
// model's sources), the recommend rules, and the memory headroom the memory-fit rule asks for.
struct Search {
  const Request& req;
  const Data& data;
  Metrics options;
  estimate::Workload base;
  std::vector<const Rule*> rules;
  double need_share = 0.10;
  std::vector<catalog::Segment> segments;  ///< the GPU segments the scenario allows
  bool datacenter = false;                 ///< the scenario is a datacenter

  Search(const Request& r, const Data& d)
      : req(r),
        data(d),
        options(options_of(r)),
        base(r.base),
        segments(scenario_segments(r.scenario)),
        datacenter(r.scenario == "datacenter") {
    base.assumptions.clear();
    base.model.assumptions.clear();
    base.model.sources.clear();
    base.model.notes.clear();
    for (const auto& rule : d.rules.rules())
      if (rule.scope == "recommend") rules.push_back(&rule);
    if (const auto* mf = d.rules.find("memory-fit"); mf && std::holds_alternative<double>(mf->threshold))
      need_share = std::get<double>(mf->threshold);
    // --headroom: the memory-fit rule takes its share from the option (threshold_from).
    if (r.base.headroom) need_share = *r.base.headroom;
  }
};

// Fills `c`, a new candidate in place in the list (a candidate is large: no copy, no move). With
// `render`, the outcomes of failed rules get their messages: recommend renders them only for the
// candidates it shows (render_messages), most of the others fail the budget and are never read.
// Electricity per busy hour of `count` GPUs in their host: the GPUs and the host at rated power,
// times the PUE and the price per kWh of data/cloud.json; nullopt when the GPU's power or the price
// is unknown.
std::optional<double> energy_usd_per_hour(const catalog::Gpu& gpu, int count, const estimate::Host& host,
                                          const catalog::Prices& prices) {
  if (!gpu.tdp_w || prices.kwh_usd.value <= 0) return std::nullopt;
  const double watts = *gpu.tdp_w * count + (host.fits() ? host.power_w.value_or(0) : 0);
  const double pue = prices.pue.value > 0 ? prices.pue.value : 1;
  return watts / 1000 * pue * prices.kwh_usd.value;
}

void evaluate_candidate(Candidate& c, const Search& search, const catalog::Gpu& gpu, int count,
                        const std::string& precision, const catalog::CloudInstance* inst, bool render,
                        const estimate::ServeMetrics* serve = nullptr) {
  const Request& req = search.req;
  const Data& data = search.data;
  c.gpu = &gpu;
  c.instance = inst;
  c.count = count;
  c.w = search.base;
  c.w.precision = precision;
  c.w.gpus = count;
  if (!estimate::is_training(c.w.task) && !req.set.tp && !req.set.pp) c.w.tp = count;
  if (serve) {
    // Serving: `replicas` copies over `tp` GPUs each, every copy decoding its share of the streams.
    c.serve = *serve;
    c.w = estimate::serve_workload(c.w, serve->tp, serve->streams_per_replica, *req.serve);
    c.w.gpus = count;
  }
  if (estimate::is_training(c.w.task))
    c.w = estimate::plan_layout(std::move(c.w), req.set, gpu, data.eff);
  else
    estimate::apply_gpu_defaults(c.w, req.set, gpu);
  c.memory_need_bytes = estimate::memory_bytes(c.w, data.eff).per_gpu_bytes;
  c.fit.capacity_bytes = gpu.memory_bytes;
  c.fit.usable_bytes = gpu.memory_bytes;
  c.fit.headroom_bytes = gpu.memory_bytes - c.memory_need_bytes;
  c.fit.fits = c.fit.headroom_bytes >= 0;
  if (serve) {
    estimate::Workload one = c.w;  // one replica
    one.gpus = serve->tp;
    c.perf = estimate::estimate_perf(one, gpu, data.eff, false);
    c.throughput = serve->tokens_per_user_s;
  } else {
    c.perf = estimate::estimate_perf(c.w, gpu, data.eff, false);
    c.throughput = throughput_of(c.perf, c.w);
  }

  // Price: count x unit price to buy; to rent, the instance's rate (and the job's rent when its
  // length is known).
  std::optional<double> unit;
  if (inst) {
    c.price_kind = inst->pricing;
    c.rent_hours = job_hours(c);
    if (inst->usd_per_hour) {
      c.usd_per_hour = *inst->usd_per_hour;
      unit = *inst->usd_per_hour / count;
      if (c.rent_hours) c.rent_usd = *c.rent_hours * *c.usd_per_hour;
      c.price_usd = c.rent_usd ? c.rent_usd : c.usd_per_hour;
    }
  } else {
    unit = gpu.price_usd(req.used);
    c.price_kind = gpu.price_kind(req.used);
    // The host the cards go into (estimate/platform.h): its price is part of the plan's.
    // GPUs that must share a box: a serving replica's group, else all of them (PCIe training is
    // planned in one server: beyond it a cluster network is needed, which is not priced).
    c.host = estimate::host_for(gpu, count, serve ? serve->tp : count, data.prices);
    if (!c.host.needed || !c.host.fits()) {
      if (unit) c.price_usd = *unit * count;
    } else if (c.host.price_usd && c.host.price_includes_gpus) {
      c.price_usd = *c.host.price_usd;  // whole systems, GPUs included
      unit = *c.price_usd / count;
      c.price_kind = "system";
    } else if (unit && c.host.price_usd) {
      c.price_usd = *unit * count + *c.host.price_usd;
    } else {
      unit.reset();  // the GPUs or their host have no price: the plan cannot be priced
    }
  }

  // Energy for a job of known length, on a purchase.
  if (!inst && c.perf.time_s)
    if (auto per_hour = energy_usd_per_hour(gpu, count, c.host, data.prices)) {
      c.energy_usd = *per_hour * c.perf.time_s->typical / 3600;
      if (c.price_usd) c.job_cost_usd = *c.price_usd + *c.energy_usd;
    }

  // Power: a configurable range lets the plan run capped at the limit.
  // Unknown power (nothing published): the power rules read an unknown metric and are n/a.
  const std::optional<double> min_power = gpu.power_min_w ? gpu.power_min_w : gpu.tdp_w;
  if (req.power_limit_w && gpu.tdp_w && min_power && *gpu.tdp_w * count > *req.power_limit_w &&
      *min_power * count <= *req.power_limit_w) {
    c.power_cap_w = *req.power_limit_w / count;
    c.throughput *= *c.power_cap_w / *gpu.tdp_w;  // speed assumed proportional to power when capped
  }

  // What the rules read; each outcome keeps the value of its metric.
  Metrics m;
  const double headroom = c.fit.headroom_bytes / gpu.memory_bytes;
  // Numbers are set with how a message shows them (Shown): their text is only made for the
  // messages of the rules a candidate fails.
  m.set(Metric::memory_headroom_fraction, headroom, Shown::percent);
  m.set(Metric::memory_need_bytes, c.memory_need_bytes, Shown::bytes);
  m.set(Metric::memory_capacity_bytes, gpu.memory_bytes, Shown::bytes);
  const double need_share = search.need_share;
  c.fit.usable_bytes = gpu.memory_bytes * (1 - need_share);
  c.fit.fits = headroom >= need_share;
  // Renting: the cloud-budget rule reads the rate or the job's rent; the purchase budget rule
  // does not apply (no total_price_usd).
  const auto rent = req.budget_per_hour ? c.usd_per_hour : c.rent_usd;
  auto rent_shown = [&] {
    if (!req.budget_per_hour && c.rent_usd)
      return fmt::format("{}, {} at {}", util::format_money(*c.rent_usd), util::format_duration(*c.rent_hours * 3600),
                         util::format_rate(*c.usd_per_hour));
    return c.usd_per_hour ? util::format_rate(*c.usd_per_hour) : std::string("unknown");
  };
  if (inst) {
    m.set("rent_price_usd", rent ? Value(*rent) : Value(), rent_shown());
    m.set(Metric::price_known, rent.has_value());
  } else {
    m.set(Metric::total_price_usd, c.price_usd ? Value(*c.price_usd) : Value(), Shown::money);
    m.set(Metric::price_known, unit.has_value());
  }
  m.set(Metric::used_price, c.price_kind == "used");
  const double host_w = c.host.fits() ? c.host.power_w.value_or(0) : 0;
  m.set(Metric::total_tdp_w, gpu.tdp_w ? Value(*gpu.tdp_w * count + host_w) : Value(), Shown::watts);
  m.set(Metric::min_total_power_w, min_power ? Value(*min_power * count + host_w) : Value(), Shown::watts);
  m.set(Metric::host_fits, c.host.fits());
  m.set(Metric::power_known, gpu.tdp_w.has_value());
  // The precision the math runs at: the format's (NF4 and int4 bases dequantize to 16-bit).
  Precision compute = c.w.format().compute;
  // A quantized base (NF4) dequantizes to a compute dtype of choice: fp16 where the GPU has no bf16
  // (bitsandbytes bnb_4bit_compute_dtype), as QLoRA runs on Turing and Volta.
  if (compute == Precision::bf16 && c.w.format().payload_bits < 16 && !gpu.peak_flops(Precision::bf16) &&
      gpu.peak_flops(Precision::fp16))
    compute = Precision::fp16;
  // A GPU that publishes no peak at all: 16-bit math is unknown (n/a), lower precisions unsupported.
  if (!gpu.any_peak() && catalog::is_wide(compute))
    m.set(Metric::precision_supported, Value());
  else
    m.set(Metric::precision_supported, gpu.peak_flops(compute).has_value());
  const auto& segs = search.segments;
  m.set(Metric::segment_allowed, std::find(segs.begin(), segs.end(), gpu.segment) != segs.end());
  m.set(Metric::pcie_only_multi_gpu_training,
        estimate::is_training(c.w.task) && count > 1 && !gpu.fast_link_for(count));
  m.set(Metric::geforce_in_datacenter,
        search.datacenter && gpu.segment == catalog::Segment::consumer && gpu.vendor == catalog::Vendor::nvidia);
  m.set(Metric::vendor_nvidia, gpu.vendor == catalog::Vendor::nvidia);
  m.set(Metric::gpus, static_cast<double>(count), Shown::count);
  m.set(Metric::throughput, c.throughput);
  if (c.perf.time_s) m.set(Metric::time_s, c.perf.time_s->typical, Shown::duration);
  if (c.serve && c.serve->tokens_per_user_s > 0) {
    m.set(Metric::serve_tokens_per_user_s, c.serve->tokens_per_user_s);
    m.set(Metric::serve_ttft_s, c.serve->ttft_s, Shown::duration);
  }
  if (c.price_usd && c.perf.available && c.perf.compute_known)
    m.set(Metric::flops_per_usd, c.perf.peak_flops * count / *c.price_usd);
  m.set(Metric::bandwidth_gbs, gpu.memory_bandwidth_gbs);

  // Texts only messages read, made when one does: most candidates fail no rule that shows them,
  // and those that do read two or three.
  m.texts = [&](std::string_view key) -> std::optional<std::string> {
    auto known = [](std::optional<double> v, Shown how) { return v ? show(*v, how) : std::string("unknown"); };
    if (key == "memory_need") return show(c.memory_need_bytes, Shown::bytes);
    if (key == "streams" && c.serve) return show(static_cast<double>(c.serve->streams_per_replica), Shown::count);
    if (key == "prefill_load" && c.serve) return show(c.serve->prefill_load, Shown::percent);
    if (key == "memory_capacity") return show(gpu.memory_bytes, Shown::bytes);
    if (key == "count") return show(count, Shown::count);
    if (key == "min_total_power")
      return known(min_power ? std::optional<double>(*min_power * count) : std::nullopt, Shown::watts);
    if (key == "min_power") return known(min_power, Shown::watts);
    if (key == "unit_price")
      return inst ? (unit ? util::format_rate(*unit) : std::string("unknown")) : known(unit, Shown::money);
    if (key == "total_price" && !inst) return known(c.price_usd, Shown::money);
    if (key == "rent_price" && inst) return rent_shown();
    if (key == "instance" && inst) return instance_label(*inst);
    if (key == "pricing" && inst) return inst->pricing;
    if (key == "memory_parts") {
      // What the memory is made of, for the memory-fit message.
      std::vector<std::string> parts;
      double other = 0;
      // Quantization scales count with the weights (a GGUF or GPTQ file holds both).
      using estimate::MemoryLineId;
      const auto mem = estimate::estimate_memory(c.w, data.eff, false);
      for (const auto& l : mem.lines) {
        if (l.host) continue;
        switch (l.id) {
          case MemoryLineId::weights:
            parts.push_back(
                fmt::format("{} {} {}", precision, l.label,
                            util::format_bytes(l.per_gpu_bytes + mem.line(MemoryLineId::quantization_constants))));
            break;
          case MemoryLineId::kv_cache:
          case MemoryLineId::activations:
          case MemoryLineId::optimizer_state:
          case MemoryLineId::gradients:
          case MemoryLineId::master_weights:
          case MemoryLineId::adapters:
          case MemoryLineId::logits:
            parts.push_back(fmt::format("{} {}", l.label, util::format_bytes(l.per_gpu_bytes)));
            break;
          case MemoryLineId::quantization_constants:
            break;
          default:
            other += l.per_gpu_bytes;
        }
      }
      parts.push_back("overheads " + util::format_bytes(other));
      return util::join(parts, " + ");
    }
    if (key == "memory_verdict")
      return headroom < 0
                 ? fmt::format("short by {}", util::format_bytes(-c.fit.headroom_bytes))
                 : fmt::format("only {:.0f}% left, below the {:.0f}% headroom", headroom * 100, need_share * 100);
    if (key == "price_kind") return c.price_kind;
    if (key == "host") return estimate::describe(c.host, gpu, count);
    if (key == "price_parts") {
      // What the total is made of, for the budget message.
      if (c.price_kind == "system")
        return fmt::format("{} x {} system with {} GPUs", c.host.boxes, c.host.platform->id,
                           c.host.platform->gpu_slots);
      const auto unit_price = gpu.price_usd(req.used);
      std::string parts = fmt::format("{} x {} {}", count, known(unit_price, Shown::money), c.price_kind);
      if (c.host.needed && c.host.fits())
        parts += fmt::format(" + host {}{} {}", c.host.boxes > 1 ? fmt::format("{} x ", c.host.boxes) : "",
                             c.host.platform->id,
                             c.host.price_usd ? util::format_money(*c.host.price_usd) : std::string("price unknown"));
      return parts;
    }
    if (key == "compute_precision") return std::string(catalog::name(compute));
    if (key == "architecture") return gpu.architecture;
    if (key == "precision") return precision;
    if (key == "precision_requirement")
      return std::string(compute == Precision::bf16   ? "Ampere or newer"
                         : compute == Precision::fp8  ? "Ada, Hopper or newer"
                         : compute == Precision::int8 ? "INT8 Tensor Cores"
                                                      : "a published peak");
    const std::string segment(catalog::kSegmentNames.name(gpu.segment));
    if (key == "segment") return segment;
    if (key == "segment_article")  // "an edge GPU", "a consumer GPU"
      return (std::string_view("aeiou").find(segment[0]) == std::string_view::npos ? "a " : "an ") + segment;
    if (key == "scenario_segments") return util::join(catalog::kSegmentNames.names_of(segs), ", ");
    if (key == "scaling_percent") return fmt::format("{:.0f}%", c.perf.scaling * 100);
    if (key == "vendor") return std::string(catalog::display_name(gpu.vendor));
    if (key == "gpu") return gpu.name;
    return std::nullopt;
  };

  c.accepted = true;
  c.outcomes.reserve(search.rules.size());
  for (const Rule* r : search.rules) {
    auto o = evaluate(*r, m, search.options, render);
    if (o.applicable && !o.passed && r->kind == Kind::constraint) c.accepted = false;
    c.outcomes.push_back(std::move(o));
  }
  if (!c.perf.available) c.accepted = false;
  if (c.serve && !c.serve->feasible) {
    // A service that cannot run at all (prefill saturated, no peak to time it): no target to compare.
    c.accepted = false;
    if (c.serve->tokens_per_user_s <= 0) c.hint = c.serve->why_not;
  }
}

// The messages of a candidate's failed rules, made by evaluating it again with them.
void render_messages(Candidate& c, const Search& search) {
  if (std::all_of(c.outcomes.begin(), c.outcomes.end(),
                  [](const Outcome& o) { return o.passed || !o.message.empty(); }))
    return;
  Candidate again;
  evaluate_candidate(again, search, *c.gpu, c.count, c.w.precision, c.instance, true, c.serve ? &*c.serve : nullptr);
  c.outcomes = std::move(again.outcomes);
}

// A score less the advice penalties: each advice rule that fires cuts it by its weight.
double advised(double s, const Candidate& c) {
  for (const auto& o : c.outcomes)
    if (o.applicable && !o.passed && o.rule->kind == Kind::advice) s *= 1 - o.rule->weight;
  return s;
}

// The plan's rated GPU power; 0 when unknown (no performance per watt: last by efficiency).
double plan_watts(const Candidate& c) {
  return c.power_cap_w ? *c.power_cap_w * c.count : c.gpu->tdp_w.value_or(0) * c.count;
}

// What a plan costs its buyer: the price, or with --months what the months cost it (the less of
// buying, less resale plus energy, and renting the same GPUs).
std::optional<double> outlay(const Candidate& c) {
  if (!c.buy_over_months_usd) return c.price_usd;
  return c.rent_over_months_usd ? std::min(*c.buy_over_months_usd, *c.rent_over_months_usd) : *c.buy_over_months_usd;
}

double score_of(const Candidate& c, Prefer p) {
  double t = c.throughput;
  if (t <= 0) return 0;
  const double watts = plan_watts(c);
  double s = 0;
  if (c.instance) {
    // Renting: what an hour buys. Units per dollar = throughput x 3600 / ($/h).
    const double rate = c.usd_per_hour.value_or(0);
    switch (p) {
      case Prefer::speed:
        s = t;
        break;
      case Prefer::efficiency:
        s = watts > 0 ? t / (watts / 1000) : 0;
        break;
      case Prefer::cost:
        s = rate > 0 ? t * 3600 / rate : 0;
        break;
      case Prefer::balanced:
        s = rate > 0 ? t / std::sqrt(rate) : 0;
        break;
    }
  } else {
    switch (p) {
      case Prefer::speed:
        s = t;
        break;
      case Prefer::efficiency:
        s = watts > 0 ? t / (watts / 1000) : 0;
        break;
      case Prefer::cost:
        s = outlay(c) ? t / (*outlay(c) / 1000) : 0;
        break;
      case Prefer::balanced:
        s = outlay(c) ? t / std::sqrt(*outlay(c) / 1000) : 0;
        break;
    }
  }
  return advised(s, c);
}

// Plans whose scores are within this share of the best of them are of equal value: well inside
// the range of any speed estimate (docs/calibration.md), so the order among them is decided by
// what a buyer prefers at equal value: fewer cards, then the faster.
constexpr double kEqualValue = 0.05;

// How plans are ranked and what their value column counts, in a buyer's words.
struct Ranking {
  std::string value_unit, value_head, words;
};

Ranking ranking_words(Prefer p, const estimate::Workload& w, bool cloud, bool by_job_cost, bool by_serve_cost,
                      const std::optional<estimate::ServeTarget>& serve, std::optional<int> months) {
  const bool images = w.model.vision && !w.model.is_transformer();
  const std::string rate = images ? "image/s" : "tok/s";
  const std::string what = images                          ? "images/s"
                           : estimate::is_training(w.task) ? "training tokens/s"
                                                           : "decode tokens/s per sequence";
  const std::string other = "--prefer speed|cost|efficiency|balanced to rank otherwise";
  if (by_job_cost) return {"job cost (buying or renting, the less)", "Job cost", ""};
  if (by_serve_cost) {
    const bool users = serve && serve->users;
    return {fmt::format("{}{}", users ? "$ per user served" : "$ per request/s served",
                        months ? fmt::format(" over {} months", *months) : ""),
            users ? "$/user" : "$/req/s", ""};
  }
  const std::string per_kw = rate + " per kW";
  switch (p) {
    case Prefer::efficiency:
      return {per_kw, rate + "/kW",
              fmt::format("ranking: efficiency, the most {} per kW of rated GPU power first; {}", what, other)};
    case Prefer::speed:
    case Prefer::balanced:
    case Prefer::cost:
      break;
  }
  Ranking r = cloud    ? Ranking{images ? "$ per 1k images" : "$ per M tokens", images ? "$/1k img" : "$/M tok", ""}
              : months ? Ranking{fmt::format("$ per {} over {} months", rate, *months), "$/" + rate, ""}
                       : Ranking{"$ per " + rate, "$/" + rate, ""};
  const std::string priced =
      cloud    ? fmt::format("the hourly rate over the {} it buys", what)
      : months ? fmt::format(
                     "what {} months cost the plan, the less of buying it (price less resale, plus energy) and "
                     "renting the same GPUs, over its {}",
                     *months, what)
               : fmt::format("the plan's price, the host included where several cards need one, over its {}", what);
  switch (p) {
    case Prefer::cost:
      r.words = fmt::format(
          "ranking: value, the lowest {} first ({}); at equal value (within {}%) fewer cards first, then the "
          "faster; advice rules that fire (non-CUDA software, used cards) count against a plan by their weight; {}",
          r.value_unit, priced, kEqualValue * 100, other);
      break;
    case Prefer::speed:
      r.words = fmt::format("ranking: speed, the most {} first, whatever the price; {}", what, other);
      break;
    case Prefer::balanced:
      r.words = fmt::format(
          "ranking: balanced, {} over the square root of the {}, between the fastest and the best value; {}", what,
          cloud ? "hourly rate" : "price", other);
      break;
    case Prefer::efficiency:
      break;
  }
  return r;
}

// What the job costs: buying (purchase and energy) or renting the same GPUs for it, the less.
std::optional<double> job_cost(const Candidate& c) { return c.rents_job_cheaper() ? c.rent_job_usd : c.job_cost_usd; }

// The plan's value in the units of ranking_words (nullopt: unknown).
std::optional<double> value_of(const Candidate& c, Prefer p, bool by_job_cost, bool by_serve_cost, double load) {
  const double t = c.throughput;
  if (by_job_cost) return job_cost(c);
  if (by_serve_cost) return outlay(c) && load > 0 ? std::optional<double>(*outlay(c) / load) : std::nullopt;
  if (p == Prefer::efficiency) {
    const double watts = plan_watts(c);
    return watts > 0 ? std::optional<double>(t / (watts / 1000)) : std::nullopt;
  }
  if (t <= 0) return std::nullopt;
  if (c.instance) {
    if (!c.usd_per_hour) return std::nullopt;
    const double per = c.perf.images_per_s ? 1e3 : 1e6;  // $ per 1k images, per M tokens
    return *c.usd_per_hour / (t * 3600) * per;
  }
  return outlay(c) ? std::optional<double>(*outlay(c) / t) : std::nullopt;
}

// With a deadline, plans are ranked by what the whole job costs: tokens trained per dollar of
// purchase and energy (the job is fixed, so more per dollar is cheaper), less the advice penalties.
double job_cost_score(const Candidate& c) {
  const auto cost = job_cost(c);
  if (!cost || *cost <= 0) return 0;
  return advised(c.w.tokens / *cost, c);
}

// --serve: the load served per $1,000 of the plan's price (fixed load: more is cheaper), less the
// advice penalties, as every ranking takes them.
double serve_score(const Candidate& c, double load) {
  const auto cost = outlay(c);
  if (!cost || *cost <= 0) return 0;
  return advised(load / (*cost / 1000), c);
}

// GPUs to try beyond 8 for a deadline: training throughput per GPU holds beyond 8 GPUs
// (docs/calibration.md, scaling), so the count scales with time / deadline, in whole 8-GPU servers.
long long count_for_deadline(int count, double time_s, double deadline_s) {
  const double need = std::min(count * time_s / deadline_s, 1e12);
  if (need <= 8) return 8;
  return static_cast<long long>(std::ceil(need / 8 - 1e-9)) * 8;
}

std::string score_unit(Prefer p, const std::string& tu, bool cloud) {
  if (cloud) {
    // "tokens/s per sequence" -> "tokens per $" for the cost ranking.
    std::string per_dollar =
        tu.substr(0, tu.find("/s")) + (tu.find("per sequence") != std::string::npos ? " per sequence" : "") + " per $";
    switch (p) {
      case Prefer::speed:
        return tu;
      case Prefer::efficiency:
        return tu + " per kW";
      case Prefer::cost:
        return per_dollar;
      case Prefer::balanced:
        return tu + " per sqrt($/h)";
    }
  }
  switch (p) {
    case Prefer::speed:
      return tu;
    case Prefer::efficiency:
      return tu + " per kW";
    case Prefer::cost:
      return tu + " per $1k";
    case Prefer::balanced:
      return tu + " per sqrt($1k)";
  }
  return tu;
}

}  // namespace

std::vector<catalog::Segment> scenario_segments(const std::string& scenario) {
  using catalog::Segment;
  if (scenario == "personal" || scenario == "workstation") return {Segment::consumer, Segment::workstation};
  if (scenario == "edge") return {Segment::edge};
  if (scenario == "datacenter") return {Segment::consumer, Segment::workstation, Segment::datacenter};
  return {Segment::consumer, Segment::workstation, Segment::datacenter, Segment::edge};
}

std::string_view name(Prefer p) {
  switch (p) {
    case Prefer::balanced:
      return "balanced";
    case Prefer::cost:
      return "cost";
    case Prefer::speed:
      return "speed";
    case Prefer::efficiency:
      return "efficiency";
  }
  return "balanced";
}

std::string instance_label(const catalog::CloudInstance& inst) {
  return inst.provider.empty() ? inst.instance : inst.provider + " " + inst.instance;
}

void explain(Candidate& c, const Request& req, const Data& data) { render_messages(c, Search(req, data)); }

std::string Candidate::label() const {
  if (instance) return fmt::format("{} {}", instance->id, w.precision);
  return fmt::format("{} x{} {}", gpu->id, count, w.precision);
}

// A candidate that holds the workload but has no price to plan with, and why, in a few words.
static Recommendation::NotPriced not_priced_entry(const Candidate& c, bool used) {
  const std::string id = c.instance ? c.instance->id : c.gpu->id;
  auto why = [&](std::string reason, std::optional<double> used_usd = std::nullopt) {
    return Recommendation::NotPriced{id, std::move(reason), used_usd};
  };
  if (c.instance) return why("no rate");
  const auto& g = *c.gpu;
  if (!g.price_usd(used)) {
    if (g.out_of_production()) {
      const std::string st(g.out_of_production_words());
      if (used || !g.used.usd) return why(st + ", no used price");
      return why(st + ", priced used with --used", g.used.usd);
    }
    if (!g.status && g.launch_msrp_usd) return why("production status unknown, launch MSRP not planned");
    return why("no price");
  }
  if (c.host.needed && c.host.platform && !c.host.price_usd)
    return why(fmt::format("host {} has no price", c.host.platform->id));
  return why("no price");
}

// --serve: the precisions a service is planned in: 16-bit, and FP8 where the GPU runs it (both keep
// the model's quality); 8- and 4-bit only when --precision asks.
std::vector<std::string> serve_precisions(const Request& req, const catalog::Gpu& gpu) {
  if (req.set.precision) return {req.base.precision};
  // FP8 first where the GPU runs it: the same answers at half the bytes per step (serving engines
  // ship FP8 checkpoints of the models people serve); fp16 where it does not.
  if (gpu.peak_flops(Precision::fp8)) return {"fp8", "fp16"};
  return {"fp16"};
}

bool meets(const estimate::ServeMetrics& m, const estimate::ServeTarget& t) {
  return m.feasible && (!t.tokens_per_user_s || m.tokens_per_user_s >= *t.tokens_per_user_s) &&
         (!t.ttft_s || m.ttft_s <= *t.ttft_s);
}

// The fewest replicas of `tp` GPUs that meet every target, within `max_gpus`; else the service at
// the most replicas (the nearest miss). More replicas never serve worse (fewer streams each, or
// fewer requests each), so doubling then halving finds the fewest.
estimate::ServeMetrics fewest_replicas(const estimate::Workload& base, const catalog::Gpu& gpu, int tp, int max_gpus,
                                       const estimate::ServeTarget& t, const catalog::Efficiency& eff,
                                       double headroom) {
  int most = std::max(1, max_gpus / tp);
  if (t.users) most = std::min(most, static_cast<int>(std::ceil(*t.users)));
  auto at = [&](int r) { return estimate::serve_metrics(base, gpu, tp, r, t, eff, headroom); };
  int lo = 0, hi = 1;  // lo fails (0: none tried), hi is tried next
  estimate::ServeMetrics m = at(1);
  while (!meets(m, t)) {
    if (hi >= most) return m;
    lo = hi;
    hi = std::min(most, hi * 2);
    m = at(hi);
  }
  estimate::ServeMetrics best = m;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    auto x = at(mid);
    if (meets(x, t)) {
      hi = mid;
      best = x;
    } else {
      lo = mid;
    }
  }
  return best;
}

bool CandidateFilter::admits(const catalog::Gpu& g) const {
  auto listed = [&](const std::vector<const catalog::Gpu*>& l) { return std::find(l.begin(), l.end(), &g) != l.end(); };
  auto in = [](const auto& l, auto v) { return l.empty() || std::find(l.begin(), l.end(), v) != l.end(); };
  if (!only.empty() && !listed(only)) return false;
  if (listed(exclude)) return false;
  if (!in(vendors, g.vendor) || !in(segments, g.segment)) return false;
  if (cuda_only && !g.runs_cuda()) return false;
  if (new_only && !g.in_production()) return false;
  if (max_power_w && (!g.tdp_w || *g.tdp_w > *max_power_w)) return false;
  return true;
}

bool CandidateFilter::any() const {
  return !only.empty() || !exclude.empty() || !vendors.empty() || cuda_only || !segments.empty() || new_only ||
         max_power_w;
}

std::vector<std::string> CandidateFilter::describe() const {
  std::vector<std::string> out;
  auto ids = [](const std::vector<const catalog::Gpu*>& l) {
    std::vector<std::string> v;
    for (const auto* g : l) v.push_back(g->id);
    return util::join(v, ", ");
  };
  if (!only.empty()) out.push_back(fmt::format("GPUs: only {} (--gpu)", ids(only)));
  if (!exclude.empty()) out.push_back(fmt::format("GPUs: not {} (--exclude)", ids(exclude)));
  if (!vendors.empty())
    out.push_back(fmt::format("vendors: {} (--vendor)", util::join(catalog::kVendorNames.names_of(vendors), ", ")));
  if (cuda_only) out.push_back("CUDA only: NVIDIA GPUs (--cuda-only)");
  if (!segments.empty())
    out.push_back(fmt::format("segments: {} (--segment)", util::join(catalog::kSegmentNames.names_of(segments), ", ")));
  if (new_only)
    out.push_back(
        "new only: GPUs the catalog lists as in production (--new-only); discontinued ones and ones of "
        "unknown status are left out");
  if (max_power_w)
    out.push_back(
        fmt::format("power per GPU: at most {} W rated (--max-power); GPUs without a published power are "
                    "left out",
                    util::format_number(*max_power_w)));
  return out;
}

namespace {

// The cheapest on-demand rent of the plan's GPUs, when buying pays off, and with --months what
// buying (less resale, plus energy) and renting cost over them.
void buy_or_rent(Candidate& c, const Request& req, const Data& data, const estimate::ResaleFit& resale,
                 double utilization) {
  if (c.instance || !c.price_usd) return;
  if (req.months && resale.usable())
    c.resale_usd = estimate::resale_usd(*c.price_usd, *req.months, resale.loss_per_year);
  // The GPUs that must share a rented machine: a serving replica's group, a training job's node
  // (up to 8), a split model's GPUs.
  const int together = c.serve ? c.serve->tp : std::min(c.count, 8);
  c.rent = estimate::cheapest_rent(*c.gpu, c.count, together, data.prices);
  const auto energy_per_hour = energy_usd_per_hour(*c.gpu, c.count, c.host, data.prices);
  const double hours = req.months ? *req.months * estimate::kHoursPerMonth * utilization : 0;
  if (c.resale_usd && energy_per_hour) c.buy_over_months_usd = *c.price_usd - *c.resale_usd + *energy_per_hour * hours;
  if (!c.rent) return;
  if (c.perf.time_s && estimate::is_training(c.w.task))
    c.rent_job_usd = c.rent->usd_per_hour * c.perf.time_s->typical / 3600;
  if (c.resale_usd) c.rent_over_months_usd = c.rent->usd_per_hour * hours;
  if (!energy_per_hour) return;
  if (auto h = estimate::breakeven_hours(*c.price_usd, *energy_per_hour, c.rent->usd_per_hour))
    c.breakeven_months = *h / (estimate::kHoursPerMonth * utilization);
}

// The resale assumption, in words: the fitted loss per year, its range and what it was fitted on.
std::string resale_words(int months, const estimate::ResaleFit& fit, double utilization) {
  if (!fit.usable())
    return fmt::format(
        "resale after {} months: unknown, fewer than {} cards in the catalog have a used and a launch price to fit "
        "how value falls",
        months, estimate::ResaleFit::kMinCards);
  return fmt::format(
      "resale after {} months: a plan loses about {:.0f}% of its price a year ({:.0f}% to {:.0f}%), fitted on the "
      "used prices of {} cards in the catalog against their launch prices and ages (to {}; {} cards, applied to "
      "every plan, host included); buying = price less resale plus energy, renting = the hourly rate, both at "
      "{:.0f}% use",
      months, fit.loss_per_year * 100, fit.loss_low * 100, fit.loss_high * 100, fit.gpu_ids.size(), fit.as_of,
      util::join(fit.segments, " and "), utilization * 100);
}

}  // namespace

namespace {

// A way out for a language model no single GPU within the budget holds: llama.cpp's partial
// offload. For each one-GPU plan that only the memory check rejects, the most layers that fit on the
// GPU in a GGUF format (the user's, else Q4_K_M), the rest read from host RAM at the default host
// bandwidth (for a mixture of experts, also its routed experts alone in host RAM); the fastest
// such plan, the cheaper of two within 5%, in words. PCIe cards only: the default host is a desktop's.
std::optional<std::string> offload_way_out(const Request& req, const Recommendation& out, const Data& data) {
  const auto& base = req.base;
  if (is_training(base.task) || !base.llm() || !base.model.is_transformer() || base.model.layers <= 1 || req.cloud ||
      req.serve)
    return std::nullopt;
  const bool user_gguf = req.set.precision && base.format().gguf;
  if (req.set.precision && !user_gguf) return std::nullopt;  // a format llama.cpp does not run
  const Candidate* best = nullptr;
  estimate::Workload best_w;
  double best_speed = 0;
  for (const auto& c : out.candidates) {
    // A card in a PC's slot: a module or SoC shares its memory with the CPU, so there is no host RAM beside it.
    if (c.count != 1 || c.instance || !c.price_usd || (req.budget_usd && *c.price_usd > *req.budget_usd) ||
        c.gpu->form_factor != catalog::FormFactor::pcie)
      continue;
    const bool only_memory = std::all_of(c.outcomes.begin(), c.outcomes.end(), [](const Outcome& o) {
      return !o.applicable || o.passed || o.rule->kind != Kind::constraint || o.rule->id == "memory-fit";
    });
    if (!only_memory || c.fit.fits) continue;
    estimate::Workload w = c.w;
    if (!user_gguf) w.precision = "q4_k_m";
    w.engine = catalog::Engine::llamacpp;
    w.split = catalog::Split::layer;
    w.gpus = w.tp = w.pp = 1;
    w.host_bandwidth = estimate::kDefaultHostBandwidth;
    auto consider = [&](const estimate::Workload& x) {
      const auto perf = estimate::estimate_perf(x, *c.gpu, data.eff, false);
      if (!perf.available) return;
      // The fastest; within 5% of it (the host's RAM sets the pace), the cheaper card.
      const double v = perf.decode_tokens_per_s.typical;
      if (!best || v > best_speed * 1.05 || (v > best_speed / 1.05 && *c.price_usd < *best->price_usd)) {
        best = &c;
        best_w = x;
        best_speed = v;
      }
    };
    // A mixture of experts: its routed experts in host RAM (llama.cpp --cpu-moe), where the rest fits.
    if (w.model.moe && catalog::routed_expert_params(w.model) > 0) {
      estimate::Workload x = w;
      x.cpu_experts = true;
      if (estimate::fit(x, *c.gpu, data.eff).fits) consider(x);
    }
    // The most layers that fit: fitting only shrinks as layers move to the GPU.
    int lo = 0, hi = w.model.layers - 1;
    w.gpu_layers = 0;
    if (!estimate::fit(w, *c.gpu, data.eff).fits) continue;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      w.gpu_layers = mid;
      if (estimate::fit(w, *c.gpu, data.eff).fits)
        lo = mid;
      else
        hi = mid - 1;
    }
    w.gpu_layers = lo;
    consider(w);
  }
  if (!best) return std::nullopt;
  const auto mem = estimate::memory_bytes(best_w, data.eff);
  if (best_w.cpu_experts)
    return fmt::format(
        "keep the experts in host RAM (llama.cpp --cpu-moe, --cpu-experts): 1 x {} ({}) holds the rest, about {:.1f} "
        "tok/s at {} GB/s of host RAM (--host-bandwidth), {} of host RAM beside it; {}",
        best->gpu->name, best_w.precision, best_speed, util::format_number(best_w.host_bandwidth / 1e9),
        util::format_bytes(mem.host_bytes), util::format_money(*best->price_usd));
  return fmt::format(
      "offload layers to host RAM (llama.cpp --gpu-layers {}): 1 x {} ({}) holds {} of {} layers, about {:.1f} tok/s "
      "at {} GB/s of host RAM (--host-bandwidth), {} of host RAM beside it; {}",
      *best_w.gpu_layers, best->gpu->name, best_w.precision, *best_w.gpu_layers, best_w.model.layers, best_speed,
      util::format_number(best_w.host_bandwidth / 1e9), util::format_bytes(mem.host_bytes),
      util::format_money(*best->price_usd));
}

}  // namespace

Recommendation recommend(const Request& req, const Data& data) {
  Recommendation out;
  // Renting is always priced per hour: rank by speed per rate unless told otherwise.
  out.prefer = req.prefer ? *req.prefer : req.scenario == "edge" ? Prefer::efficiency : Prefer::cost;
  const std::string tu = throughput_unit(req.base);
  const bool by_job_cost = req.deadline_s && !req.prefer && !req.cloud;
  const bool by_serve_cost = req.serve && !req.prefer && !req.cloud;
  if (by_job_cost || by_serve_cost) out.prefer = Prefer::cost;  // cheapest first
  out.score_unit = by_job_cost     ? "training tokens per $ of purchase and energy for the job"
                   : by_serve_cost ? (req.serve->users ? "users served per $1k" : "requests/s served per $1k")
                                   : score_unit(out.prefer, tu, req.cloud);
  const Ranking ranking =
      ranking_words(out.prefer, req.base, req.cloud, by_job_cost, by_serve_cost, req.serve, req.months);
  out.value_unit = ranking.value_unit;
  out.value_head = ranking.value_head;
  out.value_in_usd = by_job_cost || by_serve_cost || out.prefer != Prefer::efficiency;
  out.value_is_job = by_job_cost;
  if (!req.set.task) out.defaults.push_back("task: inference (set --task train|lora|qlora for training)");
  if (!req.set.precision && !req.serve)
    out.defaults.push_back(
        estimate::is_training(req.base.task)
            ? fmt::format("precision: {} for {}",
                          req.base.task == Task::qlora ? "nf4" : "bf16 (fp16 where the GPU has no bf16)",
                          estimate::name(req.base.task))
            : "precision: the best that fits each GPU, in order fp16, fp8, int8, int4");
  if (req.cloud) {
    out.defaults.push_back(fmt::format(
        "instances: one rented instance per plan, from the {} in the price list{} (--prices FILE adds yours)",
        data.prices.instances.size(), req.providers.empty() ? "" : ", providers " + util::join(req.providers, ", ")));
    out.defaults.push_back(ranking.words);
    out.defaults.push_back("prices: on-demand hourly rates as listed; no storage, egress or reserved/spot discounts");
    if (req.base.tokens <= 0) out.defaults.push_back("job length: unknown (--tokens N prices the whole job)");
  } else {
    if (!req.serve)
      out.defaults.push_back(
          fmt::format("GPU counts: 1 to {}{}", req.max_gpus, req.max_gpus_set ? "" : " (--max-gpus)"));
    if (!by_job_cost && !by_serve_cost) out.defaults.push_back(ranking.words);
    if (req.scenario.empty())
      out.defaults.push_back("scenario: any (--scenario personal|workstation|datacenter|edge|cloud)");
    out.defaults.push_back(req.used ? "prices: used-market where known, else street, else launch MSRP"
                                    : "prices: street where known, else launch MSRP (--used for used-market prices)");
  }

  for (auto& d : req.filter.describe()) out.defaults.push_back(std::move(d));
  if (req.serve) {
    const auto& t = *req.serve;
    out.defaults.push_back(fmt::format(
        "serving: {}, prompts of {} tokens, outputs of {}; continuous batching on replicas of tp 1, 2, 4 or 8 GPUs, "
        "as many replicas as the targets need (up to --max-gpus {})",
        t.users ? fmt::format("{} concurrent users, each sending the next request when the last ends",
                              util::format_int(static_cast<long long>(*t.users)))
                : fmt::format("{} requests/s, Poisson arrivals", util::format_number(*t.rps)),
        util::format_int(t.prompt_tokens), util::format_int(t.output_tokens), req.max_gpus));
    out.defaults.push_back(
        "service model: each stream decodes at the step rate of its replica's batch, slowed by the share of time "
        "spent on prefill; first token = queueing for prefill (M/D/1 mean) + the prompt's prefill + one step; the "
        "batch is bounded by the KV cache (memory-fit)");
    if (!req.set.precision)
      out.defaults.push_back("precision: fp8 where the GPU runs it, else fp16 (--precision int4 plans 4-bit serving)");
    if (by_serve_cost)
      out.defaults.push_back(
          fmt::format("ranking: the plans that meet every target, cheapest first{}; advice rules that fire "
                      "(non-CUDA software, used cards) cut a plan's score by their weight; at equal value (within "
                      "{}%) fewer cards first, then the faster (--prefer to rank otherwise)",
                      req.months ? fmt::format(" by what {} months cost each (buying less resale plus energy, or "
                                               "renting, the less)",
                                               *req.months)
                                 : "",
                      kEqualValue * 100));
  }
  if (req.deadline_s) {
    out.defaults.push_back(fmt::format(
        "deadline: {} for {} tokens; {}", util::format_duration(*req.deadline_s), util::format_count(req.base.tokens),
        req.cloud ? "one instance per plan must finish in time"
                  : "per GPU type the fewest GPUs that finish in time (whole 8-GPU servers above 8)"));
    if (by_job_cost)
      out.defaults.push_back(fmt::format(
          "ranking: the job's total cost, the less of buying (purchase and energy: GPUs at rated power, and the "
          "host's where known, PUE {}, ${}/kWh, {}) and renting the same GPUs on demand for the job; advice rules "
          "that fire cut a plan's score by their weight; --prefer speed|cost|efficiency|balanced to rank otherwise",
          util::format_number(data.prices.pue.value), util::format_number(data.prices.kwh_usd.value),
          data.prices.kwh_usd.as_of.empty() ? "data/cloud.json" : "data/cloud.json, " + data.prices.kwh_usd.as_of));
  }

  const Search search(req, data);
  // The layout check of each (count, precision) runs on one copy of the base workload, not one each.
  estimate::Workload probe = search.base;
  // Room for every candidate (up to 4 counts x 4 precisions a GPU), so that none is moved.
  out.candidates.reserve((req.cloud ? data.prices.instances.size() : 8 * data.catalog.gpus().size()) * 4);
  auto add_candidates = [&](const catalog::Gpu& gpu, int n, const catalog::CloudInstance* inst) {
    for (const auto& p : precisions_for(req.base, req.set, gpu)) {
      probe.gpus = n;
      probe.precision = p;
      probe.tp = !estimate::is_training(probe.task) && !req.set.tp && !req.set.pp ? n : req.base.tp;
      // Inference plans split the model over all n GPUs (replicas would not speed up a sequence).
      if (!estimate::check_layout(probe).empty() && !estimate::is_training(probe.task)) continue;
      evaluate_candidate(out.candidates.emplace_back(), search, gpu, n, p, inst, false);
    }
  };
  if (req.cloud) {
    for (const auto& inst : data.prices.instances) {
      if (!req.providers.empty() &&
          std::find(req.providers.begin(), req.providers.end(), inst.provider) == req.providers.end())
        continue;
      if (req.set.gpus && inst.gpu_count != req.base.gpus) continue;
      if (req.max_gpus_set && inst.gpu_count > req.max_gpus) continue;
      const catalog::Gpu* gpu = data.catalog.find(inst.gpu_id);
      if (!gpu)
        throw Error(fmt::format("cloud instance {}: gpu_id {} is not in the catalog", util::quote(inst.id),
                                util::quote(inst.gpu_id)));
      if (req.filter.admits(*gpu)) add_candidates(*gpu, inst.gpu_count, &inst);
    }
  } else {
    std::vector<int> counts;
    const bool to_deadline = req.deadline_s && estimate::is_training(req.base.task) && !req.set.gpus;
    if (req.set.gpus)
      counts = {req.base.gpus};
    else
      for (int n = 1; n <= (to_deadline ? std::min(8, req.max_gpus) : req.max_gpus); n *= 2) counts.push_back(n);
    std::vector<std::string> untimed;  // --serve: GPUs without a compute peak
    std::vector<std::string> boards;   // several GPUs on one board: not one GPU
    for (const auto& gpu : data.catalog.gpus()) {
      if (!req.filter.admits(gpu)) continue;
      if (gpu.gpus_per_board > 1) {
        const auto segs = scenario_segments(req.scenario);  // said only where the scenario would take it
        if (std::find(segs.begin(), segs.end(), gpu.segment) != segs.end())
          boards.push_back(fmt::format("{} ({} GPUs)", gpu.id, gpu.gpus_per_board));
        continue;
      }
      if (req.serve) {
        // Without a published compute peak prefill cannot be timed: no service to plan, said once.
        if (!gpu.any_peak()) {
          untimed.push_back(gpu.id);
          continue;
        }
        // Serving: per precision and tensor-parallel group, the fewest replicas that meet the targets.
        for (const auto& p : serve_precisions(req, gpu))
          for (int tp = 1; tp <= std::min(8, req.max_gpus); tp *= 2) {
            if (req.set.tp && tp != req.base.tp) continue;
            probe.gpus = tp;
            probe.tp = tp;
            probe.pp = 1;
            probe.precision = p;
            if (!estimate::check_layout(probe).empty()) continue;
            // A group that cannot hold the model with one stream is no plan at any replica count.
            if (!estimate::fit(estimate::serve_workload(probe, tp, 1, *req.serve), gpu, data.eff, search.need_share)
                     .fits)
              continue;
            auto m = fewest_replicas(probe, gpu, tp, req.max_gpus, *req.serve, data.eff, search.need_share);
            // Baseboard GPUs come in whole systems: a plan that meets the targets uses every GPU it
            // pays for, as more replicas.
            if (meets(m, *req.serve)) {
              const auto host = estimate::host_for(gpu, tp * m.replicas, tp, data.prices);
              if (host.fits() && host.platform && host.price_includes_gpus) {
                const int full = host.boxes * host.platform->gpu_slots;
                if (full > tp * m.replicas && full <= req.max_gpus)
                  m = estimate::serve_metrics(probe, gpu, tp, full / tp, *req.serve, data.eff, search.need_share);
              }
            }
            evaluate_candidate(out.candidates.emplace_back(), search, gpu, tp * m.replicas, p, nullptr, false, &m);
          }
        continue;
      }
      const std::size_t first = out.candidates.size();
      for (int n : counts) add_candidates(gpu, n, nullptr);
      if (!to_deadline) continue;
      // Beyond 8: the count the time at the most GPUs tried so far asks for, until one finishes in
      // time or --max-gpus is reached (a few rounds: the estimate is nearly linear in the count).
      for (int round = 0; round < 4; ++round) {
        const Candidate* last = nullptr;  // the fastest that holds the job, at the most GPUs tried
        for (std::size_t i = first; i < out.candidates.size(); ++i) {
          const auto& c = out.candidates[i];
          if (!c.fit.fits || !c.perf.time_s) continue;
          if (!last || c.count > last->count ||
              (c.count == last->count && c.perf.time_s->typical < last->perf.time_s->typical))
            last = &c;
        }
        if (!last || last->perf.time_s->typical <= *req.deadline_s) break;
        const long long n = std::max(count_for_deadline(last->count, last->perf.time_s->typical, *req.deadline_s),
                                     static_cast<long long>(last->count / 8 + 1) * 8);
        if (n > req.max_gpus) {
          // Too many: the most --max-gpus allows, in whole servers, shows how near it comes.
          const int most = req.max_gpus / 8 * 8;
          if (most > last->count) add_candidates(gpu, most, nullptr);
          break;
        }
        add_candidates(gpu, static_cast<int>(n), nullptr);
      }
    }
    if (!boards.empty())
      out.defaults.push_back(fmt::format(
          "not planned as one GPU, boards of several GPUs that each see only their own memory: {}; plan the "
          "single-GPU card the board carries",
          util::join(boards, ", ")));
    if (!untimed.empty())
      out.defaults.push_back(fmt::format("not planned for serving, no published compute peak to time prefill with: {}",
                                         util::join(untimed, ", ")));
  }
  // A service runs around the clock; other work at the cost command's default utilisation.
  const double utilization = req.serve ? 1.0 : estimate::CostOptions{}.utilization;
  const auto resale = req.months ? estimate::fit_resale(data.catalog.gpus()) : estimate::ResaleFit{};
  // Where buying or renting ranks the plans (a deadline job may be rented; --months prices every
  // plan at what the months cost it), every accepted plan is weighed now; otherwise only the
  // plans shown, below.
  const bool weigh_all = by_job_cost || req.months.has_value();
  if (weigh_all)
    for (auto& c : out.candidates)
      if (c.accepted) buy_or_rent(c, req, data, resale, utilization);
  const double load = req.serve ? req.serve->users.value_or(req.serve->rps.value_or(0)) : 0;
  for (auto& c : out.candidates)
    c.score = !c.accepted     ? 0
              : by_job_cost   ? job_cost_score(c)
              : by_serve_cost ? serve_score(c, load)
                              : score_of(c, out.prefer);
  for (auto& c : out.candidates)
    if (c.accepted) c.value = value_of(c, out.prefer, by_job_cost, by_serve_cost, load);

  // Plans: per GPU model and count the first accepted precision (best quality); then one plan per
  // GPU model, best score first.
  // A plan is a GPU model and count (to buy) or an instance (to rent).
  auto plan_key = [](const Candidate& c) {
    return c.instance ? c.instance->id : fmt::format("{} x{}", c.gpu->id, c.count);
  };
  std::map<std::string, std::size_t> chosen;
  for (std::size_t i = 0; i < out.candidates.size(); ++i) {
    const auto& c = out.candidates[i];
    auto key = plan_key(c);
    if (c.accepted && !chosen.count(key)) chosen[key] = i;
  }
  std::vector<std::size_t> accepted;
  for (const auto& [k, i] : chosen) accepted.push_back(i);
  // At equal value: fewer cards, then the faster, the cheaper, the id.
  auto preferred = [&](std::size_t a, std::size_t b) {
    const auto& x = out.candidates[a];
    const auto& y = out.candidates[b];
    if (x.count != y.count) return x.count < y.count;
    if (x.throughput != y.throughput) return x.throughput > y.throughput;
    double px = x.price_usd.value_or(1e300), py = y.price_usd.value_or(1e300);
    if (px != py) return px < py;
    return plan_key(x) < plan_key(y);
  };
  std::sort(accepted.begin(), accepted.end(), [&](std::size_t a, std::size_t b) {
    const double sa = out.candidates[a].score, sb = out.candidates[b].score;
    return sa != sb ? sa > sb : preferred(a, b);
  });
  // Best score first; each run of plans within kEqualValue of the run's best is one tier, ordered
  // by preference.
  for (std::size_t i = 0; i < accepted.size();) {
    const double floor = out.candidates[accepted[i]].score * (1 - kEqualValue);
    std::size_t j = i + 1;
    while (j < accepted.size() && out.candidates[accepted[j]].score >= floor) ++j;
    std::sort(accepted.begin() + static_cast<long>(i), accepted.begin() + static_cast<long>(j), preferred);
    i = j;
  }
  // One plan per GPU model to buy; to rent, one per GPU model and count (the best instance).
  std::set<std::string> seen;
  for (auto i : accepted) {
    const auto& c = out.candidates[i];
    if (seen.insert(req.cloud ? fmt::format("{} x{}", c.gpu->id, c.count) : c.gpu->id).second) out.plans.push_back(i);
  }
  // Ranked by price, a plan with none has no place in the order: it is listed as not priced
  // instead, unless no plan has a price (then the unpriced ones are all there is to show).
  if (out.prefer == Prefer::cost &&
      std::any_of(out.plans.begin(), out.plans.end(), [&](std::size_t i) { return out.candidates[i].price_usd; })) {
    std::vector<std::size_t> priced;
    for (auto i : out.plans) {
      const auto& c = out.candidates[i];
      const std::string id = c.instance ? c.instance->id : c.gpu->id;
      if (c.price_usd)
        priced.push_back(i);
      else if (std::none_of(out.not_priced.begin(), out.not_priced.end(), [&](const auto& x) { return x.id == id; }))
        out.not_priced.push_back(not_priced_entry(c, req.used));
    }
    out.plans = std::move(priced);
  }

  // Pareto front on (price, time per unit of work = 1 / throughput) among accepted plans.
  for (auto i : accepted) {
    const auto& c = out.candidates[i];
    if (!c.price_usd) continue;
    bool dominated = false;
    for (auto j : accepted) {
      const auto& d = out.candidates[j];
      if (j == i || !d.price_usd) continue;
      if (*d.price_usd <= *c.price_usd && d.throughput >= c.throughput &&
          (*d.price_usd < *c.price_usd || d.throughput > c.throughput)) {
        dominated = true;
        break;
      }
    }
    if (!dominated) out.pareto.push_back(i);
  }
  std::sort(out.pareto.begin(), out.pareto.end(),
            [&](std::size_t a, std::size_t b) { return *out.candidates[a].price_usd < *out.candidates[b].price_usd; });

  // Buy or rent, for the plans shown (all were weighed above when that ranks them).
  if (req.months) out.defaults.push_back(resale_words(*req.months, resale, utilization));
  if (!weigh_all)
    for (std::size_t k = 0; k < out.plans.size() && k < static_cast<std::size_t>(std::max(1, req.top)); ++k)
      buy_or_rent(out.candidates[out.plans[k]], req, data, resale, utilization);

  // Plans meet a deadline at the typical speed; say once when the slow end of the best plan's
  // range would not.
  if (req.deadline_s && !out.plans.empty()) {
    const auto& best = out.candidates[out.plans.front()];
    if (best.perf.time_s && best.perf.time_s->high > *req.deadline_s)
      out.defaults.push_back(fmt::format(
          "deadline margin: plans finish in time at the typical speed; the first takes {} to {} over its range, so "
          "leave slack or take more GPUs",
          util::format_duration(best.perf.time_s->low), util::format_duration(best.perf.time_s->high)));
  }

  // Launch MSRPs beside street prices: say how far street prices run above MSRP where both are known.
  {
    std::vector<std::string> msrp;
    for (std::size_t k = 0; k < out.plans.size() && k < static_cast<std::size_t>(std::max(1, req.top)); ++k)
      if (const auto& c = out.candidates[out.plans[k]]; !c.instance && c.price_kind == "msrp")
        msrp.push_back(c.gpu->id);
    std::vector<double> ratio;
    for (const auto& g : data.catalog.gpus())
      if (g.in_production() && g.street.usd && g.launch_msrp_usd && *g.launch_msrp_usd > 0)
        ratio.push_back(*g.street.usd / *g.launch_msrp_usd);
    if (!msrp.empty() && !ratio.empty()) {
      std::sort(ratio.begin(), ratio.end());
      const std::size_t n = ratio.size();
      const double median = n % 2 ? ratio[n / 2] : (ratio[n / 2 - 1] + ratio[n / 2]) / 2;
      out.defaults.push_back(fmt::format(
          "launch MSRP, no street price known: {}; the {} in-production cards with both sell at {:.2f}x to {:.2f}x "
          "their MSRP (median {:.2f}x): expect to pay more, or add a quote (--quotes FILE)",
          util::join(msrp, ", "), n, ratio.front(), ratio.back(), median));
    }
  }

  // Reasons and hints.
  auto over_months = [&](const Candidate& c) {
    return fmt::format("; over {} months at {:.0f}% use buying costs {} ({} less {} resale, plus energy)", *req.months,
                       utilization * 100, util::format_money(*c.buy_over_months_usd), util::format_money(*c.price_usd),
                       util::format_money(*c.resale_usd));
  };
  for (auto i : out.plans) {
    auto& c = out.candidates[i];
    std::string why =
        fmt::format("{} in {} with {:.0f}% memory to spare", util::format_bytes(c.memory_need_bytes),
                    util::format_bytes(c.gpu->memory_bytes), 100 * c.fit.headroom_bytes / c.gpu->memory_bytes);
    if (c.power_cap_w) why += fmt::format(", power-capped to {} W", util::format_number(*c.power_cap_w));
    if (c.serve) {
      const auto& sv = *c.serve;
      const std::string layout = sv.replicas > 1 ? fmt::format("tp {} x {} replicas, {} users each", sv.tp, sv.replicas,
                                                               util::format_int(sv.streams_per_replica))
                                 : sv.tp > 1
                                     ? fmt::format("tp {}, {} users", sv.tp, util::format_int(sv.streams_per_replica))
                                     : fmt::format("{} users", util::format_int(sv.streams_per_replica));
      why = fmt::format(
          "{}: {} tok/s per user{}, first token {}{}, prefill {} of the time; KV cache room for {} users per "
          "replica ({} in {} each)",
          layout, util::format_number(sv.tokens_per_user_s),
          req.serve->tokens_per_user_s ? fmt::format(" ({} asked)", util::format_number(*req.serve->tokens_per_user_s))
                                       : "",
          util::format_duration(sv.ttft_s),
          req.serve->ttft_s ? fmt::format(" ({} asked)", util::format_duration(*req.serve->ttft_s)) : "",
          show(sv.prefill_load, Shown::percent), util::format_int(static_cast<long long>(sv.kv_streams)),
          util::format_bytes(c.memory_need_bytes), util::format_bytes(c.gpu->memory_bytes));
      // Near saturation the mean hides the tail: say so.
      if (sv.prefill_load > 0.6)
        why += fmt::format(
            "; prefill is busy {} of the time: waits well above the mean are common, and more traffic breaks the "
            "targets",
            show(sv.prefill_load, Shown::percent));
      if (sv.kv_streams > 0 && static_cast<double>(sv.streams_per_replica) > 0.8 * sv.kv_streams)
        why += fmt::format("; the KV cache is {} full",
                           show(static_cast<double>(sv.streams_per_replica) / sv.kv_streams, Shown::percent));
    }
    if (req.deadline_s && c.perf.time_s) {
      why += fmt::format("; done in {}, {} before the deadline", util::format_duration(c.perf.time_s->typical),
                         util::format_duration(*req.deadline_s - c.perf.time_s->typical));
    }
    if (req.deadline_s && c.energy_usd)
      why += fmt::format("; energy {}{}", util::format_money(*c.energy_usd),
                         c.job_cost_usd ? fmt::format(", {} in all", util::format_money(*c.job_cost_usd)) : "");
    if (c.rent) {
      const std::string rent =
          fmt::format("{}{} at {}{}", c.rent->instances > 1 ? fmt::format("{} x ", c.rent->instances) : "",
                      instance_label(*c.rent->instance), util::format_rate(c.rent->usd_per_hour),
                      c.rent->instances > 1 ? " in all" : "");
      if (c.buy_over_months_usd && c.rent_over_months_usd)
        why += fmt::format("{}, renting {} ({}): {}", over_months(c), util::format_money(*c.rent_over_months_usd), rent,
                           *c.buy_over_months_usd < *c.rent_over_months_usd ? "buy" : "rent");
      else if (c.rent_job_usd && c.job_cost_usd)
        why += fmt::format("; renting for the job: {} ({}), {} buying", util::format_money(*c.rent_job_usd), rent,
                           c.rents_job_cheaper() ? "less than" : "more than");
      else if (c.breakeven_months)
        why += fmt::format("; buy if it runs more than {} months at {:.0f}% use, else rent ({})",
                           util::format_number(*c.breakeven_months), utilization * 100, rent);
      else
        why += fmt::format("; rent: {} costs no more than the power of owning it", rent);
    }
    if (c.buy_over_months_usd && !c.rent_over_months_usd)
      why += over_months(c);
    else if (c.resale_usd && !c.rent_over_months_usd)
      why += fmt::format("; resale after {} months about {}", *req.months, util::format_money(*c.resale_usd));
    c.reason = why;
  }
  for (auto& c : out.candidates) {
    if (c.accepted) continue;
    // The same GPU and count at a lower precision that is accepted.
    if (auto it = chosen.find(plan_key(c)); it != chosen.end()) {
      c.hint = "fits in " + out.candidates[it->second].w.precision;
      continue;
    }
    // To buy: the same GPU with more of them, when only memory stands in the way.
    if (c.instance) continue;
    bool memory_only = true;
    for (const auto& o : c.outcomes)
      if (o.applicable && !o.passed && o.rule->kind == Kind::constraint && o.rule->id != "memory-fit")
        memory_only = false;
    if (!memory_only) continue;
    int fewest = 0;
    for (const auto& [k, i] : chosen) {
      const auto& a = out.candidates[i];
      if (a.gpu == c.gpu && a.count > c.count && (fewest == 0 || a.count < fewest)) fewest = a.count;
    }
    if (fewest) c.hint = fmt::format("fits on {} GPUs", fewest);
  }

  // Nearest rejected: per GPU model its nearest rejected candidate.
  std::vector<std::size_t> rej;
  // Candidates without a speed estimate are near misses only for a precision the user chose, when
  // a rule says why (--precision fp8 on Ampere); precisions tried by default are not misses.
  auto explained = [&](const Candidate& c) {
    if (c.perf.available) return true;
    if (!req.set.precision) return false;
    for (const auto& o : c.outcomes)
      if (o.applicable && !o.passed && o.rule->kind == Kind::constraint) return true;
    return false;
  };
  std::vector<double> dist(out.candidates.size());
  for (std::size_t i = 0; i < out.candidates.size(); ++i)
    if (!out.candidates[i].accepted && explained(out.candidates[i])) {
      rej.push_back(i);
      dist[i] = distance(out.candidates[i], req);
    }
  std::stable_sort(rej.begin(), rej.end(), [&](std::size_t a, std::size_t b) {
    if (dist[a] != dist[b]) return dist[a] < dist[b];
    return out.candidates[a].gpu->id < out.candidates[b].gpu->id;
  });
  // A GPU model (to rent: GPU and count) that has a plan shows a near miss only with its hint
  // ("fits in int8", "fits on 4 GPUs"), so that the list never reads as if it cannot do the job.
  std::set<std::string> planned, rseen;
  for (auto i : out.plans) {
    const auto& c = out.candidates[i];
    planned.insert(req.cloud ? fmt::format("{} x{}", c.gpu->id, c.count) : c.gpu->id);
  }
  for (auto i : rej) {
    if (out.rejected.size() >= static_cast<std::size_t>(std::max(3, req.top))) break;
    const auto& c = out.candidates[i];
    const std::string key = req.cloud ? fmt::format("{} x{}", c.gpu->id, c.count) : c.gpu->id;
    if (planned.count(key) && c.hint.empty()) continue;
    if (rseen.insert(key).second) out.rejected.push_back(i);
  }

  // The messages of the candidates shown: the plans and the nearest rejected.
  for (auto i : out.plans) render_messages(out.candidates[i], search);
  for (auto i : out.rejected) render_messages(out.candidates[i], search);

  // Prices older than 12 months behind the plans shown: every output that uses one says so.
  for (std::size_t k = 0; k < out.plans.size() && k < static_cast<std::size_t>(std::max(1, req.top)); ++k) {
    const auto& c = out.candidates[out.plans[k]];
    if (c.instance || req.today.empty()) continue;
    const auto& g = *c.gpu;
    const catalog::Price* price = g.price_record(c.price_kind);
    if (price && price->usd)
      if (auto st = catalog::stale_price(c.price_kind + " price", *price->usd, price->as_of, req.today))
        out.stale_prices.push_back(fmt::format("{}: {}", g.id, *st));
    if (c.host.needed && c.host.fits() && c.host.platform->price_usd)
      if (auto st = catalog::stale_price("price", *c.host.platform->price_usd, c.host.platform->price_as_of, req.today))
        out.stale_prices.push_back(fmt::format("host {}: {}", c.host.platform->id, *st));
  }
  std::sort(out.stale_prices.begin(), out.stale_prices.end());
  out.stale_prices.erase(std::unique(out.stale_prices.begin(), out.stale_prices.end()), out.stale_prices.end());

  // GPUs that hold the workload but cannot be priced: listed, never silently dropped.
  for (const auto& c : out.candidates) {
    bool only_price = c.perf.available;
    bool price_failed = false;
    for (const auto& o : c.outcomes) {
      if (!o.applicable || o.passed || o.rule->kind != Kind::constraint) continue;
      if (o.rule->id == "price-known")
        price_failed = true;
      else
        only_price = false;
    }
    const std::string id = c.instance ? c.instance->id : c.gpu->id;
    if (only_price && price_failed &&
        std::none_of(out.not_priced.begin(), out.not_priced.end(), [&](const auto& x) { return x.id == id; }))
      out.not_priced.push_back(not_priced_entry(c, req.used));
  }

  // Ways out when nothing is accepted.
  if (out.plans.empty()) {
    // 1. The cheapest candidate that fails only the budget.
    // Renting at a rate compares $/h; otherwise the total.
    auto budget_price = [&](const Candidate& c) {
      return req.cloud && req.budget_per_hour ? c.usd_per_hour : c.price_usd;
    };
    const Candidate* cheapest = nullptr;
    for (const auto& c : out.candidates) {
      bool only_budget = c.perf.available && budget_price(c);
      for (const auto& o : c.outcomes)
        if (o.applicable && !o.passed && o.rule->kind == Kind::constraint && o.rule->id != "budget" &&
            o.rule->id != "cloud-budget")
          only_budget = false;
      if (only_budget && (!cheapest || *budget_price(c) < *budget_price(*cheapest))) cheapest = &c;
    }
    if (cheapest && req.budget_usd) {
      const std::string what =
          cheapest->instance ? fmt::format("{} ({} x {}, {})", instance_label(*cheapest->instance), cheapest->count,
                                           cheapest->gpu->name, cheapest->w.precision)
                             : fmt::format("{} x {} ({})", cheapest->count, cheapest->gpu->name, cheapest->w.precision);
      const double need = *budget_price(*cheapest);
      out.way_out.push_back(
          fmt::format("raise the budget to {}: {}",
                      req.cloud && req.budget_per_hour ? util::format_rate(need) : util::format_money(need), what));
    }
    // 1b. A deadline no plan meets: the fastest plan, and the count it would take.
    if (req.deadline_s) {
      const Candidate* fastest = nullptr;
      for (const auto& c : out.candidates) {
        if (!c.fit.fits || !c.perf.time_s) continue;
        // Only plans that the deadline (or the budget) alone rejects.
        if (std::any_of(c.outcomes.begin(), c.outcomes.end(), [](const Outcome& o) {
              return o.applicable && !o.passed && o.rule->kind == Kind::constraint && o.rule->id != "deadline" &&
                     o.rule->id != "budget" && o.rule->id != "price-known";
            }))
          continue;
        if (!fastest || c.perf.time_s->typical < fastest->perf.time_s->typical) fastest = &c;
      }
      if (fastest && fastest->perf.time_s->typical > *req.deadline_s) {
        const long long need = count_for_deadline(fastest->count, fastest->perf.time_s->typical, *req.deadline_s);
        out.way_out.push_back(fmt::format(
            "no plan of at most {} GPUs finishes in {}: the fastest, {} x {} ({}), takes {}; about {} of them would "
            "({}), or a later --deadline, or fewer --tokens",
            util::format_int(req.max_gpus), util::format_duration(*req.deadline_s), util::format_int(fastest->count),
            fastest->gpu->name, fastest->w.precision, util::format_duration(fastest->perf.time_s->typical),
            util::format_int(need),
            need > kMaxPlanGpus ? fmt::format("more than the {} GPUs --max-gpus plans", util::format_int(kMaxPlanGpus))
            : fastest->gpu->form_factor == catalog::FormFactor::pcie
                ? std::string("PCIe cards are planned in one server: more need a cluster network, which is not planned")
                : fmt::format("--max-gpus {}", need)));
      }
    }
    // 2. A lighter plan: QLoRA for training, 4-bit for inference at a fixed precision.
    auto try_alt = [&](Request alt, const std::string& what) {
      auto r = recommend(alt, data);
      if (!r.plans.empty()) {
        // The cheapest way out, not the best-scored plan.
        std::size_t best = r.plans.front();
        for (auto i : r.plans)
          if (r.candidates[i].price_usd &&
              (!r.candidates[best].price_usd || *r.candidates[i].price_usd < *r.candidates[best].price_usd))
            best = i;
        const auto& c = r.candidates[best];
        if (c.instance)
          out.way_out.push_back(fmt::format("{}: {} ({} x {}, {}) fits for {}", what, instance_label(*c.instance),
                                            c.count, c.gpu->name, c.w.precision,
                                            c.rent_usd       ? util::format_money(*c.rent_usd)
                                            : c.usd_per_hour ? util::format_rate(*c.usd_per_hour)
                                                             : "an unknown price"));
        else
          out.way_out.push_back(fmt::format("{}: {} x {} ({}) fits for {}", what, c.count, c.gpu->name, c.w.precision,
                                            c.price_usd ? util::format_money(*c.price_usd) : "an unknown price"));
      }
    };
    if (req.base.task == Task::train || req.base.task == Task::lora) {
      Request alt = req;
      alt.base.task = Task::qlora;
      alt.base.precision = "nf4";
      alt.base.checkpointing = catalog::Checkpointing::full;
      alt.base.lora_targets = {"q", "k", "v", "o", "gate", "up", "down"};
      alt.set.precision = false;
      try_alt(alt, "use --task qlora (4-bit base, trained adapters)");
    } else if (req.set.precision && req.base.format().bits > 4.2) {
      Request alt = req;
      alt.set.precision = true;
      alt.base.precision = "int4";
      try_alt(alt, "use --precision int4");
    }
    // 2b. Layers in host RAM (llama.cpp partial offload).
    if (auto line = offload_way_out(req, out, data)) out.way_out.push_back(std::move(*line));
    // 3. More GPUs than --max-gpus allowed.
    if (!req.cloud && !req.set.gpus && req.max_gpus < 64) {
      Request alt = req;
      alt.max_gpus = req.max_gpus * 8;
      auto r = recommend(alt, data);
      if (!r.plans.empty()) {
        const auto& c = r.candidates[r.plans.front()];
        out.way_out.push_back(fmt::format("use {} GPUs (--max-gpus {}): {} x {} ({})", c.count, c.count, c.count,
                                          c.gpu->name,
                                          c.price_usd ? util::format_money(*c.price_usd) : "unknown price"));
      }
    }
    // Cards out of production with a used price: --used plans them; the rest need a quote.
    std::vector<std::string> unpriced, used;
    for (const auto& x : out.not_priced)
      if (x.used_price_usd && !req.used)
        used.push_back(fmt::format("{} {} used", x.id, util::format_money(*x.used_price_usd)));
      else
        unpriced.push_back(x.id);
    if (!used.empty())
      out.way_out.push_back(
          fmt::format("plan used cards (--used): {} (out of production, no new price)", util::join(used, ", ")));
    if (!unpriced.empty())
      out.way_out.push_back(
          fmt::format("drop --budget, or add a price ({}): {} hold{} the workload but {} no known price",
                      req.cloud ? "--prices FILE" : "--quotes FILE", util::join(unpriced, ", "),
                      unpriced.size() == 1 ? "s" : "", unpriced.size() == 1 ? "has" : "have"));
    if (out.way_out.empty() && req.serve)
      out.way_out.push_back(fmt::format(
          "no plan of at most {} GPUs meets every target: the nearest rejected below say which target each misses "
          "and by how much; relax {}, or raise --max-gpus",
          util::format_int(req.max_gpus),
          req.serve->ttft_s && req.serve->tokens_per_user_s ? "--ttft or --tokens-per-user-s (or shorten the prompts)"
          : req.serve->ttft_s                               ? "--ttft (or shorten the prompts)"
                                                            : "--tokens-per-user-s"));
    if (out.way_out.empty())
      out.way_out.push_back(
          req.cloud ? "no single instance in the price list holds this workload within the constraints (a plan is one "
                      "instance; multi-node jobs are not planned)"
                    : "no GPU in the catalog holds this workload within the constraints");
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
      std::string layout;
      // Inference splits the model over the GPUs by tensor parallelism; where the heads do not
      // divide (12 heads over 8 GPUs, a CNN), the widest split that does, with the rest as replicas
      // (estimate::inference_tp, as make_workload plans it).
      try {
        w = estimate::make_workload(in, models, &set);
      } catch (const Error&) {
        continue;  // a plan the model cannot take at all (its kind, its precision)
      }
      if (p.task == Task::inference && w.tp < gpus) layout = fmt::format("tp {} x {} replicas", w.tp, gpus / w.tp);
      w = estimate::plan_layout(std::move(w), set, gpu, eff, headroom);
      auto f = estimate::fit(w, gpu, eff, headroom);
      rows.push_back({&m, p.label, f.fits, f.max_seq_len, f.max_batch, f.max_seq_capped, layout});
    }
  }
  return rows;
}

}  // namespace gpuadvisor::rules
