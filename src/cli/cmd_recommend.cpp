// gpuadvisor recommend: ranked, explained GPU plans for a workload within budget, power and scenario.
#include <fmt/format.h>

#include "context.h"
#include "gpuadvisor/rules/recommend.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::cli {
namespace {

struct RecommendFlags {
  estimate::WorkloadInput in;
  std::string budget, power_limit, scenario, max_gpus, prefer, top = "5";
  bool used = false, explain = false, pareto = false;
  std::string batch_file;
};

rules::Request make_request(Context& ctx, const RecommendFlags& o, const estimate::WorkloadInput* in = nullptr) {
  rules::Request r;
  r.base = in ? estimate::make_workload(*in, ctx.models(), &r.set) : ctx.workload(o.in, &r.set);
  if (!o.budget.empty()) {
    auto b = util::parse_money(o.budget);
    if (!b) throw Error("--budget: " + b.error());
    if (*b <= 0) throw Error(fmt::format("--budget: must be positive, got {}", util::quote(o.budget)));
    r.budget_usd = *b;
  }
  if (!o.power_limit.empty()) {
    auto p = util::parse_power(o.power_limit);
    if (!p) throw Error("--power-limit: " + p.error());
    if (*p <= 0) throw Error(fmt::format("--power-limit: must be positive, got {}", util::quote(o.power_limit)));
    r.power_limit_w = *p;
  }
  static const std::vector<std::string> scenarios = {"personal", "workstation", "datacenter", "edge"};
  if (o.scenario == "cloud")
    throw Error("--scenario cloud: recommend plans purchases; 'gpuadvisor cost --gpu ID' prices renting each GPU");
  if (!o.scenario.empty() && std::find(scenarios.begin(), scenarios.end(), o.scenario) == scenarios.end())
    throw Error(fmt::format("--scenario: expected one of personal, workstation, datacenter, edge, got {}{}",
                            util::quote(o.scenario), util::did_you_mean(o.scenario, scenarios)));
  r.scenario = o.scenario;
  int def = o.scenario == "edge" ? 1 : o.scenario == "personal" ? 2 : o.scenario == "workstation" ? 4 : 8;
  r.max_gpus = def;
  if (!o.max_gpus.empty()) {
    auto n = util::parse_int(o.max_gpus, 1, 4096);
    if (!n) throw Error("--max-gpus: " + n.error());
    r.max_gpus = static_cast<int>(*n);
    r.max_gpus_set = true;
  }
  if (!o.prefer.empty()) {
    static const std::vector<std::string> prefs = {"balanced", "cost", "speed", "efficiency"};
    auto it = std::find(prefs.begin(), prefs.end(), o.prefer);
    if (it == prefs.end())
      throw Error(fmt::format("--prefer: expected one of balanced, cost, speed, efficiency, got {}{}", util::quote(o.prefer),
                              util::did_you_mean(o.prefer, prefs)));
    r.prefer = static_cast<rules::Prefer>(it - prefs.begin());
  }
  auto top = util::parse_int(o.top, 1, 100);
  if (!top) throw Error("--top: " + top.error());
  r.top = static_cast<int>(*top);
  r.used = o.used;
  return r;
}

std::string speed_cell(const rules::Candidate& c) {
  const auto& p = c.perf;
  if (!p.available) return "n/a";
  if (p.images_per_s) return util::format_number(c.throughput) + " img/s";
  if (estimate::is_training(c.w.task)) {
    std::string s = util::format_number(c.throughput) + " tok/s";
    if (p.time_s) s += ", " + util::format_duration(p.time_s->typical * p.tokens_per_s.typical / c.throughput);
    return s;
  }
  return util::format_number(c.throughput) + " tok/s";
}

util::Json candidate_json(const rules::Candidate& c, int rank, bool outcomes) {
  util::Json j;
  if (rank > 0) j["rank"] = rank;
  j["gpu_id"] = c.gpu->id;
  j["gpu_name"] = c.gpu->name;
  j["count"] = c.count;
  j["precision"] = c.w.precision;
  j["task"] = estimate::name(c.w.task);
  j["tp"] = c.w.tp;
  j["zero"] = c.w.zero;
  j["checkpointing"] = c.w.checkpointing;
  j["total_price_usd"] = c.price_usd ? util::Json(*c.price_usd) : util::Json(nullptr);
  j["price_kind"] = c.price_kind.empty() ? util::Json(nullptr) : util::Json(c.price_kind);
  j["total_bytes"] = c.memory_need_bytes * c.count;
  j["per_gpu_bytes"] = c.memory_need_bytes;
  j["capacity_bytes"] = c.gpu->memory_bytes;
  j["fits"] = c.fit.fits;
  j["throughput"] = c.throughput;
  if (c.perf.time_s) j["time_s"] = c.perf.time_s->typical;
  j["power_cap_w"] = c.power_cap_w ? util::Json(*c.power_cap_w) : util::Json(nullptr);
  j["score"] = c.score;
  j["accepted"] = c.accepted;
  if (!c.reason.empty()) j["reason"] = c.reason;
  if (!c.hint.empty()) j["hint"] = c.hint;
  util::Json arr = util::Json::array();
  for (const auto& o : c.outcomes) {
    if (!outcomes && (o.passed || !o.applicable)) continue;
    util::Json x;
    x["rule"] = o.rule->id;
    x["kind"] = rules::name(o.rule->kind);
    x["severity"] = rules::name(o.rule->severity);
    x["outcome"] = !o.applicable ? "n/a" : o.passed ? "pass" : "fail";
    x["value"] = rules::to_json(c.metrics.get(o.rule->metric));
    if (!o.message.empty()) x["message"] = o.message;
    arr.push_back(x);
  }
  j["rules"] = arr;
  return j;
}

std::string failed_line(const rules::Candidate& c) {
  std::vector<std::string> parts;
  for (const auto& o : c.outcomes)
    if (o.applicable && !o.passed && o.rule->kind == rules::Kind::constraint) parts.push_back(o.message + " [" + o.rule->id + "]");
  std::string s = util::join(parts, "; ");
  if (!c.hint.empty()) s += "; " + c.hint;
  return s;
}

util::Json to_json(const rules::Request& req, const rules::Recommendation& rec, const RecommendFlags& o) {
  const std::size_t top = std::min<std::size_t>(rec.plans.size(), static_cast<std::size_t>(req.top));
  util::Json j;
  j["workload"] = estimate::to_json(req.base);
  j["budget_usd"] = req.budget_usd ? util::Json(*req.budget_usd) : util::Json(nullptr);
  j["power_limit_w"] = req.power_limit_w ? util::Json(*req.power_limit_w) : util::Json(nullptr);
  j["scenario"] = req.scenario.empty() ? util::Json(nullptr) : util::Json(req.scenario);
  j["prefer"] = rules::name(rec.prefer);
  j["score_unit"] = rec.score_unit;
  j["defaults"] = rec.defaults;
  util::Json plans = util::Json::array();
  for (std::size_t i = 0; i < top; ++i) plans.push_back(candidate_json(rec.candidates[rec.plans[i]], static_cast<int>(i + 1), true));
  j["plans"] = plans;
  util::Json rej = util::Json::array();
  for (auto i : rec.rejected) rej.push_back(candidate_json(rec.candidates[i], 0, o.explain));
  j["rejected"] = rej;
  if (o.pareto) {
    util::Json p = util::Json::array();
    for (auto i : rec.pareto) p.push_back(candidate_json(rec.candidates[i], 0, false));
    j["pareto"] = p;
  }
  j["way_out"] = rec.way_out;
  j["assumptions"] = req.base.assumptions;
  return j;
}

void run_recommend(Context& ctx, const RecommendFlags& o) {
  auto ruleset = rules::RuleSet::load(ctx.rule_files);
  rules::Data data{ctx.catalog(), ruleset, ctx.efficiency(), ctx.prices()};
  if (!o.batch_file.empty()) {
    static const std::vector<std::string> own = {"budget", "power_limit", "scenario", "max_gpus", "used", "prefer", "top"};
    run_batch(ctx, o.batch_file, o.in, own, [&](const estimate::WorkloadInput& in, const util::Fields& line, Exit& code) {
      RecommendFlags flags = o;
      auto text = [&](const std::string& key, std::string& into) {
        if (!line.has(key)) return;
        const auto& v = line.raw(key);
        into = v.is_string() ? v.get<std::string>() : v.dump();
      };
      text("budget", flags.budget);
      text("power_limit", flags.power_limit);
      text("scenario", flags.scenario);
      text("max_gpus", flags.max_gpus);
      text("prefer", flags.prefer);
      text("top", flags.top);
      if (line.has("used")) flags.used = line.boolean("used");
      auto req = make_request(ctx, flags, &in);
      auto rec = rules::recommend(req, data);
      if (rec.plans.empty()) code = Exit::no;
      return to_json(req, rec, flags);
    });
    return;
  }
  auto f = ctx.output_format(kTabular);
  auto req = make_request(ctx, o);
  auto rec = rules::recommend(req, data);
  if (rec.plans.empty()) ctx.exit = Exit::no;
  const std::size_t top = std::min<std::size_t>(rec.plans.size(), static_cast<std::size_t>(req.top));

  if (f == report::Format::json) {
    auto j = report::envelope("recommend");
    const util::Json body = to_json(req, rec, o);
    for (auto& [k, v] : body.items()) j[k] = v;
    ctx.out << report::dump(j);
    return;
  }
  using report::Align;
  auto plan_table = [&](const std::vector<std::size_t>& idx, std::size_t n, bool ranked) {
    report::Table t({{"#", Align::right}, {"GPU"}, {"Count", Align::right}, {"Precision"}, {"Price", Align::right},
                     {"Memory/GPU", Align::right}, {"Speed", Align::right}, {"Score", Align::right}, {"Why"}});
    for (std::size_t k = 0; k < n && k < idx.size(); ++k) {
      const auto& c = rec.candidates[idx[k]];
      std::string price = c.price_usd ? util::format_money(*c.price_usd) + (c.price_kind == "street" ? "" : " " + c.price_kind) : "unknown";
      std::string why = c.reason;
      for (const auto& oc : c.outcomes)
        if (oc.applicable && !oc.passed && oc.rule->kind == rules::Kind::advice) why += "; " + oc.rule->id;
      std::string layout = c.w.precision;
      if (estimate::is_training(c.w.task) && c.count > 1)
        layout += fmt::format(" {}{}", c.w.zero ? fmt::format("z{}", c.w.zero) : "dp", c.w.tp > 1 ? fmt::format(" tp{}", c.w.tp) : "");
      if (c.w.checkpointing == "full" && c.w.task != estimate::Task::qlora) layout += " ckpt";
      t.add({ranked ? std::to_string(k + 1) : "-", c.gpu->id, std::to_string(c.count), layout, price,
             fmt::format("{} / {}", util::format_bytes(c.memory_need_bytes), util::format_bytes(c.gpu->memory_bytes)), speed_cell(c),
             util::format_number(c.score), why});
    }
    return t;
  };

  ctx.out << ctx.style.bold(describe(req.base));
  if (req.budget_usd) ctx.out << fmt::format(", budget {}", util::format_money(*req.budget_usd));
  if (req.power_limit_w) ctx.out << fmt::format(", power limit {} W", util::format_number(*req.power_limit_w));
  if (!req.scenario.empty()) ctx.out << ", " << req.scenario;
  ctx.out << "\n\n";
  if (top > 0) {
    ctx.out << plan_table(rec.plans, top, true).render(f, ctx.style);
    const auto& best = rec.candidates[rec.plans.front()];
    ctx.out << fmt::format("\nBest: {} x {} in {}, {}{}. Score: {}.\n", best.count, best.gpu->name, best.w.precision,
                           best.price_usd ? util::format_money(*best.price_usd) : "price unknown", best.power_cap_w
                               ? fmt::format(", capped to {} W per GPU", util::format_number(*best.power_cap_w)) : "",
                           rec.score_unit);
    std::vector<std::string> warnings;
    for (std::size_t k = 0; k < top; ++k)
      for (const auto& oc : rec.candidates[rec.plans[k]].outcomes)
        if (oc.applicable && !oc.passed && oc.rule->kind == rules::Kind::advice)
          warnings.push_back(fmt::format("{}: {} [{}]", rec.candidates[rec.plans[k]].gpu->id, oc.message, oc.rule->id));
    if (!warnings.empty()) {
      ctx.out << "\nNotes:\n";
      for (const auto& wn : warnings) ctx.out << "  - " << wn << "\n";
    }
  } else {
    ctx.out << ctx.style.bad("Nothing fits.") << " Ways out:\n";
    for (const auto& w : rec.way_out) ctx.out << "  - " << w << "\n";
  }
  if (!rec.rejected.empty()) {
    ctx.out << "\nNearest rejected:\n";
    for (auto i : rec.rejected) {
      const auto& c = rec.candidates[i];
      ctx.out << fmt::format("  - {} x{} {}: {}\n", c.gpu->id, c.count, c.w.precision, failed_line(c));
    }
  }
  if (o.pareto && !rec.pareto.empty()) {
    ctx.out << "\nPareto front (price vs speed, no plan both cheaper and faster):\n";
    ctx.out << plan_table(rec.pareto, rec.pareto.size(), false).render(f, ctx.style);
  }
  if (o.explain) {
    ctx.out << "\nEvery rule, per plan shown:\n";
    std::vector<std::size_t> shown(rec.plans.begin(), rec.plans.begin() + static_cast<long>(top));
    shown.insert(shown.end(), rec.rejected.begin(), rec.rejected.end());
    for (auto i : shown) {
      const auto& c = rec.candidates[i];
      ctx.out << fmt::format("  {} ({}):\n", c.label(), c.accepted ? "accepted" : "rejected");
      for (const auto& oc : c.outcomes)
        ctx.out << fmt::format("    {:<26} {:<5} {}\n", oc.rule->id, !oc.applicable ? "n/a" : oc.passed ? "pass" : "FAIL",
                               oc.passed ? rules::to_string(c.metrics.get(oc.rule->metric)) : oc.message);
    }
  }
  ctx.out << "\nAssumed:\n";
  for (const auto& d : rec.defaults) ctx.out << "  - " << d << "\n";
  for (const auto& a : req.base.assumptions)
    if (a.find("task:") != 0 && a.find("precision:") != 0) ctx.out << "  - " << a << "\n";
}

}  // namespace

void setup_recommend(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RecommendFlags>();
  auto* cmd = app.add_subcommand("recommend", "Ranked GPU plans for a workload within budget, power and scenario, with reasons");
  add_workload_options(*cmd, o->in, ctx);
  auto* c = "Constraints";
  cmd->add_option("--budget", o->budget, "Purchase budget in USD (3000, $3,000, 3k)")->group(c);
  cmd->add_option("--power-limit", o->power_limit, "Total power limit (30W, 0.7kW)")->group(c);
  cmd->add_option("--scenario", o->scenario, "personal, workstation, datacenter or edge")->group(c);
  cmd->add_option("--max-gpus", o->max_gpus, "Most GPUs in a plan (default: 1 edge, 2 personal, 4 workstation, else 8)")->group(c);
  cmd->add_flag("--used", o->used, "Include used-market prices where known")->group(c);
  cmd->add_option("--prefer", o->prefer, "Ranking: balanced, cost, speed or efficiency")->group(c);
  cmd->add_option("--top", o->top, "How many plans to show (default 5)");
  cmd->add_option("--batch-file", o->batch_file,
                  "JSON Lines: one workload per line (profile fields, plus budget, power_limit, scenario, max_gpus, used, prefer, top)")
      ->type_name("FILE|-");
  cmd->add_flag("--explain", o->explain, "Show every rule's outcome for each plan shown");
  cmd->add_flag("--pareto", o->pareto, "Also list the plans not dominated on price and speed");
  cmd->add_option("--rules", ctx.rule_files, "Extra rules or overrides (JSON, as data/rules.json); repeatable")->type_name("FILE");
  add_format_option(*cmd, ctx);
  add_catalog_option(*cmd, ctx);
  cmd->footer(
      "Exit status: 0 with plans, 1 when nothing fits (the output says the cheapest ways out), 2 bad input.\n"
      "Examples:\n"
      "  gpuadvisor recommend --model 10B --budget 3000\n"
      "  gpuadvisor recommend --model llama-3.1-70b --task qlora --budget 50000 --explain\n"
      "  gpuadvisor recommend --model yolov8s --scenario edge --power-limit 30W\n"
      "  gpuadvisor recommend --model llama-3.1-8b --task lora --budget 10k --used --prefer cost --format json");
  cmd->callback([&ctx, o] { run_recommend(ctx, *o); });
}

}  // namespace gpuadvisor::cli
