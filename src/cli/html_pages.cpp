#include "html_pages.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"
#include "gpuadvisor/version.h"

namespace gpuadvisor::cli {
namespace {

namespace html = report::html;

// What the best plan's money and watts are made of: the GPUs, the host they go into, and the
// power of both at full load (estimate/platform.h decides the host).
std::string cost_and_power(const rules::Candidate& c) {
  if (c.instance) return {};
  const auto& g = *c.gpu;
  std::string money;
  if (c.host.needed && c.host.price_usd && c.host.price_includes_gpus)
    money = fmt::format("{} for {} whole system{} with the GPUs", util::format_money(*c.price_usd), c.host.boxes,
                        c.host.boxes > 1 ? "s" : "");
  else if (auto unit = g.price_usd(c.price_kind == "used"); unit)
    money =
        fmt::format("{} x {} ({}){}", c.count, util::format_money(*unit), c.price_kind,
                    c.host.needed ? (c.host.price_usd ? fmt::format(" + host {}", util::format_money(*c.host.price_usd))
                                                      : " + host, price unknown")
                                  : "");
  else
    money = "price unknown";
  std::string watts = "power unknown (not published)";
  if (g.tdp_w) {
    const double gpus_w = (c.power_cap_w ? *c.power_cap_w : *g.tdp_w) * c.count;
    const double host_w = c.host.fits() ? c.host.power_w.value_or(0) : 0;
    watts = fmt::format("{} x {} W{} = {} W at full load", c.count, util::format_number(gpus_w / c.count),
                        host_w > 0 ? fmt::format(" + host {} W", util::format_number(host_w)) : "",
                        util::format_number(gpus_w + host_w));
  }
  return fmt::format("Cost: {}. Host: {}. Power: {}.", money, estimate::describe(c.host, g, c.count), watts);
}

// Terms a page uses, each with one line for the reader who is not a GPU engineer. Only those
// that occur on the page are shown.
std::vector<std::string> glossary(const rules::Recommendation& rec, const std::vector<std::size_t>& shown) {
  static const std::pair<const char*, const char*> kTerms[] = {
      {"fp16", "fp16 / bf16: 16-bit numbers, the usual precision of model weights"},
      {"fp8", "fp8: 8-bit floating point; needs Hopper, Ada, Blackwell or MI300-class hardware"},
      {"int8", "int8: 8-bit integer weights (quantized), about half the memory of fp16"},
      {"int4", "int4 (GPTQ, AWQ): 4-bit integer weights, about a quarter of the memory of fp16"},
      {"nf4", "nf4: the 4-bit weight format of QLoRA (bitsandbytes); the adapters train in 16-bit"},
      {"q4_k_m", "q4_k_m, q5_k_m, q8_0: llama.cpp's GGUF quantized formats (about 4.8, 5.7 and 8.5 bits per weight)"},
      {" z", "z1, z2, z3: ZeRO stages, how far the optimizer state, gradients and weights are split across the GPUs"},
      {" tp", "tp N: tensor parallelism, each layer split over N GPUs"},
      {"msrp", "msrp: the maker's launch price, used only for cards still in production with no street price"},
      {"used", "used: a used-market price; check the card before paying"},
      {"system", "system: the price of a whole server with its GPUs"},
  };
  std::string text;
  for (auto i : shown) {
    const auto& c = rec.candidates[i];
    text += " " + std::string(c.w.precision) + (c.w.zero ? fmt::format(" z{}", c.w.zero) : "") +
            (c.w.tp > 1 ? " tp" : "") + " " + c.price_kind;
  }
  std::vector<std::string> out;
  for (const auto& [term, line] : kTerms)
    if (text.find(term) != std::string::npos) out.push_back(line);
  out.push_back("Memory/GPU: what the job needs on each GPU, against its capacity (a share is kept free as headroom)");
  const bool by_value = rec.prefer == rules::Prefer::cost || rec.prefer == rules::Prefer::efficiency;
  out.push_back(rec.value_head + ": each plan's " + rec.value_unit +
                (by_value ? ", what the plans are ranked by"
                          : fmt::format("; the plans are ranked by {}", rules::name(rec.prefer))));
  return out;
}

// The memory of one plan as a stacked bar, with its GPU's capacity and the usable part marked.
std::string memory_bar(const estimate::MemoryEstimate& mem, const rules::Candidate& c) {
  std::vector<html::Segment> segs;
  for (const auto& l : mem.lines)
    if (!l.host) segs.push_back({l.label, l.per_gpu_bytes, util::format_bytes(l.per_gpu_bytes), false});
  std::vector<html::Marker> marks = {
      {c.fit.usable_bytes, "usable " + util::format_bytes(c.fit.usable_bytes)},
      {c.gpu->memory_bytes, "capacity " + util::format_bytes(c.gpu->memory_bytes)},
  };
  return html::stacked_bar(segs, fmt::format("Memory per GPU of {}", c.label()), marks);
}

}  // namespace

std::string html_footer(const Context& ctx, std::string_view command) {
  return fmt::format(
      "gpuadvisor {} {}, {}. Estimates from public datasheets and published measurements "
      "(docs/methodology.md); each figure is as good as its sources.",
      kVersion, command, ctx.today());
}

std::string recommend_html(Context& ctx, const rules::Request& req, const rules::Recommendation& rec,
                           const report::Table& plans, const report::Table& pareto) {
  const std::size_t top = std::min<std::size_t>(rec.plans.size(), static_cast<std::size_t>(req.top));
  html::Page page("GPU recommendation", req.serve ? serve_headline(req) : describe(req.base));

  std::vector<std::pair<std::string, std::string>> kv;
  if (req.budget_usd)
    kv.push_back({"Budget", req.cloud
                                ? (req.budget_per_hour ? util::format_rate(*req.budget_usd) + " rent"
                                                       : util::format_money(*req.budget_usd) + " rent for the job")
                                : util::format_money(*req.budget_usd)});
  if (req.power_limit_w) kv.push_back({"Power limit", util::format_number(*req.power_limit_w) + " W"});
  kv.push_back({"Scenario", req.scenario.empty() ? "any" : req.scenario});
  if (req.cloud)
    kv.push_back(
        {"Instances", fmt::format("one per plan, from the {} in the price list", ctx.prices().instances.size())});
  else
    kv.push_back({"GPUs per plan", fmt::format("1 to {}", req.max_gpus)});
  kv.push_back({"Ranking", fmt::format("{}: {}", rules::name(rec.prefer), rec.value_unit)});
  page.h2("Workload and constraints").kv(kv);

  if (top > 0) {
    const auto& best = rec.candidates[rec.plans.front()];
    std::string price = best.price_usd ? util::format_money(*best.price_usd) : "price unknown";
    if (best.instance) {
      price = best.usd_per_hour ? util::format_rate(*best.usd_per_hour) : "rate unknown";
      if (best.rent_usd) price += fmt::format(", {} for the job", util::format_money(*best.rent_usd));
    }
    page.p(fmt::format(
               "Best: {}{} x {} in {}, {}{}: {}.", best.instance ? rules::instance_label(*best.instance) + ": " : "",
               best.count, best.gpu->name, best.w.precision, price,
               best.power_cap_w ? fmt::format(", capped to {} W per GPU", util::format_number(*best.power_cap_w)) : "",
               value_words(best, rec)),
           "good");
    if (auto cp = cost_and_power(best); !cp.empty()) page.p(cp);
  } else {
    page.p("Nothing fits within the constraints.", "bad");
  }

  // Every plan (one per GPU model) and every plan on the front, each once.
  std::vector<std::size_t> shown = rec.plans;
  for (auto i : rec.pareto)
    if (std::find(shown.begin(), shown.end(), i) == shown.end()) shown.push_back(i);
  html::Scatter sc;
  sc.title = "Price and speed of each plan";
  sc.x_label = !req.cloud ? "Price (USD)" : req.base.tokens > 0 ? "Rent for the job (USD)" : "Rent per hour (USD)";
  const bool images = top > 0 && rec.candidates[rec.plans.front()].perf.images_per_s.has_value();
  sc.y_label = images ? "Speed (images/s)" : "Speed (tokens/s)";
  sc.x_format = html::short_money;
  sc.y_format = [](double v) { return util::format_number(v); };
  std::size_t unpriced = 0;
  for (auto i : shown) {
    const auto& c = rec.candidates[i];
    if (!c.price_usd) {
      ++unpriced;
      continue;
    }
    const auto rank = std::find(rec.plans.begin(), rec.plans.end(), i) - rec.plans.begin();
    const bool ranked = static_cast<std::size_t>(rank) < top;
    html::Point p;
    p.x = *c.price_usd;
    p.y = c.throughput;
    p.rank = ranked ? static_cast<int>(rank) + 1 : 0;
    p.label = ranked ? fmt::format("{}. {}", rank + 1, c.label()) : "";
    p.tip = fmt::format("{}: {}, {} {}/s, score {}", c.label(), util::format_money(*c.price_usd),
                        util::format_number(c.throughput), images ? "images" : "tokens", util::format_number(c.score));
    if (std::find(rec.pareto.begin(), rec.pareto.end(), i) != rec.pareto.end()) sc.front.push_back(sc.points.size());
    sc.points.push_back(std::move(p));
  }
  if (!shown.empty()) {
    page.h2("Price and speed");
    page.figure(
        html::scatter(sc),
        fmt::format(
            "Each point is a plan: the best one for each GPU model{} ({} in all), and the plans on the Pareto front. "
            "The numbered ones are the top {} of the table.{}",
            req.cloud ? " and count" : "", sc.points.size(), top,
            unpriced ? fmt::format(" {} plan{} without a known price {} not shown.", unpriced, unpriced > 1 ? "s" : "",
                                   unpriced > 1 ? "are" : "is")
                     : ""));
  }

  if (top > 0) {
    page.h2("Ranked plans").table(plans);
    std::vector<std::string> notes;
    for (std::size_t k = 0; k < top; ++k) {
      const auto& c = rec.candidates[rec.plans[k]];
      for (const auto& oc : c.outcomes)
        if (oc.applicable && !oc.passed && oc.rule->kind == rules::Kind::advice)
          notes.push_back(fmt::format("{}: {} [{}]", c.instance ? c.instance->id : c.gpu->id, oc.message, oc.rule->id));
    }
    if (!notes.empty()) page.h2("Notes").list(notes);
    const auto& best = rec.candidates[rec.plans.front()];
    const auto mem = estimate::estimate_memory(best.w, ctx.efficiency());
    page.h2("Memory of the best plan")
        .figure(memory_bar(mem, best),
                fmt::format("{} per GPU of {} ({} usable after the headroom kept free).",
                            util::format_bytes(mem.per_gpu_bytes), util::format_bytes(best.gpu->memory_bytes),
                            util::format_bytes(best.fit.usable_bytes)));
  } else if (!rec.way_out.empty()) {
    page.h2("Ways out").list(rec.way_out);
  }
  if (!pareto.empty()) page.h2("Pareto front (price vs speed, no plan both cheaper and faster)").table(pareto);
  if (!rec.rejected.empty()) {
    std::vector<std::string> rejected;
    for (auto i : rec.rejected) {
      const auto& c = rec.candidates[i];
      std::vector<std::string> parts;
      for (const auto& o : c.outcomes)
        if (o.applicable && !o.passed && o.rule->kind == rules::Kind::constraint)
          parts.push_back(o.message + " [" + o.rule->id + "]");
      std::string s = util::join(parts, "; ");
      if (!c.hint.empty()) s += "; " + c.hint;
      rejected.push_back(c.label() + ": " + s);
    }
    page.h2("Nearest rejected").list(rejected);
  }
  std::vector<std::string> assumed = rec.defaults;
  for (const auto& a : req.base.assumptions)
    if (a.find("task:") != 0 && a.find("precision:") != 0) assumed.push_back(a);
  page.h2("Assumed").list(assumed);
  if (top > 0) {
    std::vector<std::size_t> listed(rec.plans.begin(), rec.plans.begin() + static_cast<std::ptrdiff_t>(top));
    page.h2("Terms on this page").list(glossary(rec, listed));
  }
  return page.str(html_footer(ctx, "recommend"));
}

// A plan's value in its ranking's unit: dollars as money, rates as numbers.
std::string value_cell(const rules::Candidate& c, const rules::Recommendation& rec) {
  if (!c.value) return "unknown";
  if (!rec.value_in_usd) return util::format_number(*c.value);
  return *c.value >= 1000 ? util::format_money(*c.value) : "$" + util::format_number(*c.value);
}

// The same in words: "$16.6 per tok/s", "$80,425 for the job, renting", "312 tok/s per kW".
std::string value_words(const rules::Candidate& c, const rules::Recommendation& rec) {
  const std::string cell = value_cell(c, rec);
  if (rec.value_is_job)
    return cell + (c.rents_job_cheaper() ? " for the job, renting" : " for the job, buying (purchase and energy)");
  // "$ per tok/s" reads "$16.6 per tok/s" after the amount.
  if (rec.value_in_usd) return cell + rec.value_unit.substr(rec.value_unit.find(' '));
  return cell + " " + rec.value_unit;
}

std::string serve_headline(const rules::Request& req) {
  // Serving: the load and the targets, not one batch.
  const auto& t = *req.serve;
  std::string line = fmt::format("{} ({} params), serving {}, prompts of {} tokens, outputs of {}", req.base.model.name,
                                 util::format_count(req.base.model.params),
                                 t.users ? fmt::format("{} users", util::format_int(static_cast<long long>(*t.users)))
                                         : fmt::format("{} requests/s", util::format_number(*t.rps)),
                                 util::format_int(t.prompt_tokens), util::format_int(t.output_tokens));
  if (t.tokens_per_user_s)
    line += fmt::format(", at least {} tok/s per user", util::format_number(*t.tokens_per_user_s));
  if (t.ttft_s) line += fmt::format(", first token within {}", util::format_duration(*t.ttft_s));
  return line;
}

}  // namespace gpuadvisor::cli
