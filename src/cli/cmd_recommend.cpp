// gpuadvisor recommend: ranked, explained GPU plans for a workload within budget, power and scenario.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "context.h"
#include "gpuadvisor/rules/recommend.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"
#include "html_pages.h"
#include "trace.h"

namespace gpuadvisor::cli {
namespace {

// The speed estimate of a plan by term, for --explain: the engine, what bounds it, and one decode
// step's parts (or the training MFU).
std::string speed_terms(const rules::Candidate& c) {
  const auto& p = c.perf;
  if (!p.available) return {};
  if (estimate::is_training(c.w.task) || p.images_per_s)
    return fmt::format("{}, {:.0f}% of {} TFLOPS {} per GPU{}", p.bound, p.mfu * 100,
                       util::format_number(p.peak_flops / 1e12), catalog::name(p.compute),
                       c.w.gpus > 1 ? fmt::format(", x {:.2f} multi-GPU scaling", p.scaling) : "");
  const auto& t = p.decode_terms;
  std::string s = fmt::format(
      "{} on {}, decode {:.1f} ms per step: weights and KV cache {:.1f} ms at {:.0f}% of "
      "the bandwidth",
      p.bound, catalog::name(c.w.engine), t.step_s * 1e3, t.memory_s * 1e3, p.bandwidth_efficiency * 100);
  if (t.compute_s > t.memory_s) s += fmt::format(" (compute {:.1f} ms)", t.compute_s * 1e3);
  if (t.overhead_s > 0) s += fmt::format(", per-step overhead {:.1f} ms", t.overhead_s * 1e3);
  if (t.allreduce_s > 0) s += fmt::format(", all-reduces {:.1f} ms", t.allreduce_s * 1e3);
  return s;
}

struct RecommendFlags {
  estimate::WorkloadInput in;
  std::string budget, power_limit, scenario, max_gpus, prefer, top = "5", provider;
  std::string only_gpus, exclude_gpus, vendor, segment, max_power;  // candidate filters
  std::string deadline, months;
  bool serve = false;
  std::string users, rps, prompt_tokens, output_tokens, ttft, tpot, tokens_per_user_s;  // --serve
  bool used = false, explain = false, pareto = false, cloud = false, cuda_only = false, new_only = false;
  std::string batch_file;
};

// "40/h", "$40/hour", "40 per hour": a rent rate. Returns the amount without the rate suffix.
std::optional<std::string> strip_rate(const std::string& budget) {
  std::string t = util::lower(util::trim(budget));
  for (std::string_view suffix : {"/hour", "/hr", "/h", " per hour", "per hour"})
    if (t.size() > suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0)
      return util::trim(t.substr(0, t.size() - suffix.size()));
  return std::nullopt;
}

// "a, b,c" -> {"a", "b", "c"}; an empty item is an error naming the flag.
std::vector<std::string> list_of(const std::string& flag, const std::string& value) {
  std::vector<std::string> out;
  for (const auto& item : util::split(value, ',')) {
    std::string t = util::trim(item);
    if (t.empty()) throw Error(fmt::format("{}: expected a comma-separated list, got {}", flag, util::quote(value)));
    out.push_back(t);
  }
  return out;
}

// The candidate filters, each value checked against what the catalog holds.
rules::CandidateFilter make_filter(Context& ctx, const RecommendFlags& o, rules::Request& r) {
  rules::CandidateFilter f;
  auto gpus = [&](const std::string& flag, const std::string& value, std::vector<const catalog::Gpu*>& into) {
    for (const auto& q : list_of(flag, value)) {
      auto g = ctx.catalog().resolve(q);
      if (!g) throw Error(flag + ": " + g.error());
      if (std::find(into.begin(), into.end(), *g) == into.end()) into.push_back(*g);
      auto others = ctx.catalog().also_matching(q, **g);
      if (!others.empty()) {
        std::vector<std::string> ids;
        for (const auto* x : others) ids.push_back(x->id);
        r.base.assumptions.push_back(fmt::format("{} {} is taken as {}; it also matches {} (give the id to choose)",
                                                 flag, util::quote(q), (*g)->id, util::join(ids, ", ")));
      }
    }
  };
  if (!o.only_gpus.empty()) gpus("--gpu", o.only_gpus, f.only);
  if (!o.exclude_gpus.empty()) gpus("--exclude", o.exclude_gpus, f.exclude);
  auto names = [&](const std::string& flag, const std::string& value, const auto& known, auto& into) {
    for (const auto& v : list_of(flag, value)) {
      const std::string l = util::lower(v);
      auto e = known.parse(l);
      if (!e)
        throw Error(fmt::format("{}: expected {}, got {}{}", flag, known.join_or(), util::quote(v), known.suggest(l)));
      if (std::find(into.begin(), into.end(), *e) == into.end()) into.push_back(*e);
    }
  };
  if (!o.vendor.empty()) names("--vendor", o.vendor, catalog::kVendorNames, f.vendors);
  if (!o.segment.empty()) names("--segment", o.segment, catalog::kSegmentNames, f.segments);
  if (!f.segments.empty() && !r.scenario.empty() && r.scenario != "cloud") {
    const auto takes = rules::scenario_segments(r.scenario);
    if (std::none_of(f.segments.begin(), f.segments.end(),
                     [&](auto x) { return std::find(takes.begin(), takes.end(), x) != takes.end(); }))
      throw Error(fmt::format("--segment {}: the {} scenario takes {} GPUs only; drop one of --segment and --scenario",
                              util::join(catalog::kSegmentNames.names_of(f.segments), ","), r.scenario,
                              util::join_list(catalog::kSegmentNames.names_of(takes), "and")));
  }
  f.cuda_only = o.cuda_only;
  f.new_only = o.new_only;
  if (o.new_only && o.used)
    throw Error("--new-only: leaves out the discontinued cards that --used prices; give one or the other");
  if (!o.max_power.empty()) {
    auto p = util::parse_power(o.max_power);
    if (!p) throw Error("--max-power: " + p.error());
    if (*p <= 0) throw Error(fmt::format("--max-power: must be positive, got {}", util::quote(o.max_power)));
    f.max_power_w = *p;
  }
  if (f.any()) {
    bool admitted = false;
    if (r.cloud) {
      for (const auto& inst : ctx.prices().instances)
        if (const auto* g = ctx.catalog().find(inst.gpu_id); g && f.admits(*g)) admitted = true;
    } else {
      for (const auto& g : ctx.catalog().gpus()) admitted = admitted || f.admits(g);
    }
    if (!admitted)
      throw Error(fmt::format("the candidate filters leave no {} ({})",
                              r.cloud ? "instance in the price list" : "GPU in the catalog",
                              util::join(f.describe(), "; ")));
  }
  return f;
}

// A duration flag whose bare number would be read as seconds ("--deadline 30", "--tpot 50"): a
// unit is required, and the examples fit the flag.
double duration_flag(const std::string& flag, const std::string& value, const char* examples) {
  const std::string t = util::trim(value);
  auto d = util::parse_duration(t);
  if (!d || t.empty() || std::isdigit(static_cast<unsigned char>(t.back())) || t.back() == '.')
    throw Error(
        fmt::format("{}: expected a duration with its unit, like {}, got {}", flag, examples, util::quote(value)));
  if (!(*d > 0)) throw Error(fmt::format("{}: must be positive, got {}", flag, util::quote(value)));
  return *d;
}

rules::Request make_request(Context& ctx, const RecommendFlags& o, const estimate::WorkloadInput* in = nullptr) {
  rules::Request r;
  r.base = in ? estimate::make_workload(*in, ctx.models(), &r.set) : ctx.workload(o.in, &r.set);
  r.cloud = o.cloud || o.scenario == "cloud";
  if (!o.budget.empty()) {
    auto rate = strip_rate(o.budget);
    if (rate && !r.cloud)
      throw Error(
          fmt::format("--budget: {} is a rent rate; add --cloud to plan renting, or give a purchase amount like 3000",
                      util::quote(o.budget)));
    auto b = util::parse_money(rate ? *rate : o.budget);
    if (!b) {
      if (r.cloud)
        throw Error(fmt::format("--budget: expected a rent budget like 40/h, $40/hour or 5000 (the whole job), got {}",
                                util::quote(o.budget)));
      throw Error("--budget: " + b.error());
    }
    if (*b <= 0) throw Error(fmt::format("--budget: must be positive, got {}", util::quote(o.budget)));
    r.budget_usd = *b;
    r.budget_per_hour = rate.has_value();
    if (r.cloud && !rate) {
      if (r.base.tokens <= 0)
        throw Error(fmt::format(
            "--budget: with --cloud, {} is the rent for the whole job, which needs --tokens (tokens to {}); "
            "for an hourly rate write {}/h",
            util::quote(o.budget), estimate::is_training(r.base.task) ? "train on" : "generate", util::trim(o.budget)));
      if (r.base.model.vision && !r.base.model.is_transformer())
        throw Error(fmt::format(
            "--budget: with --cloud, {} is the rent for a whole job, which has no length for a vision model; "
            "for an hourly rate write {}/h",
            util::quote(o.budget), util::trim(o.budget)));
    }
  }
  if (r.cloud) {
    if (o.used) throw Error("--used: does not apply with --cloud (rented instances have no used price)");
    if (!o.power_limit.empty())
      throw Error("--power-limit: does not apply with --cloud (the provider powers the instance)");
    if (!o.scenario.empty() && o.scenario != "cloud")
      throw Error(
          fmt::format("--scenario: {} plans a purchase; --cloud plans renting, so leave --scenario out or use cloud",
                      util::quote(o.scenario)));
  }
  if (!o.provider.empty()) {
    if (!r.cloud) throw Error("--provider: only applies with --cloud");
    std::vector<std::string> known;
    for (const auto& i : ctx.prices().instances)
      if (!i.provider.empty() && std::find(known.begin(), known.end(), i.provider) == known.end())
        known.push_back(i.provider);
    for (const auto& p : util::split(o.provider, ',')) {
      const std::string name = util::lower(util::trim(p));
      if (std::find(known.begin(), known.end(), name) == known.end())
        throw Error(fmt::format("--provider: {} is not in the price list (providers: {}){}", util::quote(util::trim(p)),
                                util::join(known, ", "), util::did_you_mean(name, known)));
      r.providers.push_back(name);
    }
  }
  if (!o.power_limit.empty()) {
    auto p = util::parse_power(o.power_limit);
    if (!p) throw Error("--power-limit: " + p.error());
    if (*p <= 0) throw Error(fmt::format("--power-limit: must be positive, got {}", util::quote(o.power_limit)));
    r.power_limit_w = *p;
  }
  static const std::vector<std::string> scenarios = {"personal", "workstation", "datacenter", "edge", "cloud"};
  if (!o.scenario.empty() && std::find(scenarios.begin(), scenarios.end(), o.scenario) == scenarios.end())
    throw Error(fmt::format("--scenario: expected one of personal, workstation, datacenter, edge, cloud, got {}{}",
                            util::quote(o.scenario), util::did_you_mean(o.scenario, scenarios)));
  r.scenario = r.cloud ? "cloud" : o.scenario;
  if (o.serve && !o.deadline.empty()) throw Error("--serve: plans inference; --deadline plans training");
  if (!o.deadline.empty()) {
    const double d = duration_flag("--deadline", o.deadline, "30d, 36h or 2w");
    if (!estimate::is_training(r.base.task))
      throw Error("--deadline: plans training by a date; add --task train, lora or qlora (and --tokens)");
    if (r.base.tokens <= 0)
      throw Error(
          fmt::format("--deadline: needs the job's length: add --tokens (tokens to train on, like 1T), or "
                      "--dataset-tokens with --epochs, to finish in {}",
                      util::quote(o.deadline)));
    r.deadline_s = d;
  }
  const bool any_serve_flag = !o.users.empty() || !o.rps.empty() || !o.prompt_tokens.empty() ||
                              !o.output_tokens.empty() || !o.ttft.empty() || !o.tpot.empty() ||
                              !o.tokens_per_user_s.empty();
  if (any_serve_flag && !o.serve)
    throw Error(
        "--users, --rps, --prompt-tokens, --output-tokens, --ttft, --tpot and --tokens-per-user-s size a service: "
        "add --serve");
  if (o.serve) {
    if (r.base.task != estimate::Task::inference)
      throw Error(fmt::format("--serve: plans inference; --task {} trains", estimate::name(r.base.task)));
    if (!r.base.model.is_transformer())
      throw Error(
          fmt::format("--serve: plans serving a language model; {} has no layer shape to batch", r.base.model.id));
    if (r.cloud) throw Error("--serve: plans GPUs to buy; price renting the plan it finds with 'gpuadvisor cost'");
    if (o.users.empty() == o.rps.empty())
      throw Error("--serve: give the load as --users N (concurrent streams) or --rps R (requests per second), one");
    estimate::ServeTarget t;
    auto positive = [](const std::string& flag, const std::string& v, Result<double> x) {
      if (!x) throw Error(flag + ": " + x.error());
      if (!(*x > 0)) throw Error(fmt::format("{}: must be positive, got {}", flag, util::quote(v)));
      return *x;
    };
    if (!o.users.empty()) {
      auto n = util::parse_int(o.users, 1, 1'000'000);
      if (!n) throw Error("--users: " + n.error());
      t.users = static_cast<double>(*n);
    }
    if (!o.rps.empty()) t.rps = positive("--rps", o.rps, util::parse_number(o.rps));
    auto tokens = [](const std::string& flag, const std::string& v) {
      auto n = util::parse_int(v, 1, 10'000'000);
      if (!n) throw Error(flag + ": " + n.error());
      return static_cast<long long>(*n);
    };
    if (!o.prompt_tokens.empty()) t.prompt_tokens = tokens("--prompt-tokens", o.prompt_tokens);
    if (!o.output_tokens.empty()) t.output_tokens = tokens("--output-tokens", o.output_tokens);
    if (r.base.model.max_context > 0 && t.prompt_tokens + t.output_tokens > r.base.model.max_context)
      throw Error(fmt::format("--prompt-tokens {} + --output-tokens {} exceed the model's context of {} tokens",
                              t.prompt_tokens, t.output_tokens, r.base.model.max_context));
    if (!o.ttft.empty()) t.ttft_s = duration_flag("--ttft", o.ttft, "2s or 500ms");
    if (!o.tpot.empty() && !o.tokens_per_user_s.empty())
      throw Error("--tpot and --tokens-per-user-s say the same (one is 1 / the other): give one");
    if (!o.tpot.empty()) t.tokens_per_user_s = 1 / duration_flag("--tpot", o.tpot, "50ms or 0.05s");
    if (!o.tokens_per_user_s.empty())
      t.tokens_per_user_s =
          positive("--tokens-per-user-s", o.tokens_per_user_s, util::parse_number(o.tokens_per_user_s));
    r.serve = t;
  }
  // A deadline may take a cluster: up to 2,048 GPUs unless the scenario or --max-gpus says less.
  const bool cluster = r.deadline_s && !r.cloud && (o.scenario.empty() || o.scenario == "datacenter");
  int def = o.scenario == "edge"          ? 1
            : o.scenario == "personal"    ? 2
            : o.scenario == "workstation" ? 4
            : cluster                     ? 2048
            : o.serve                     ? 64
                                          : 8;
  r.max_gpus = def;
  if (!o.max_gpus.empty()) {
    auto n = util::parse_int(o.max_gpus, 1, rules::kMaxPlanGpus);
    if (!n) throw Error("--max-gpus: " + n.error());
    r.max_gpus = static_cast<int>(*n);
    r.max_gpus_set = true;
  }
  if (!o.months.empty()) {
    auto n = util::parse_int(o.months, 1, 120);
    if (!n) throw Error("--months: " + n.error());
    if (r.cloud) throw Error("--months: weighs buying against renting; --cloud plans renting only");
    r.months = static_cast<int>(*n);
  }
  if (!o.prefer.empty()) {
    static const std::vector<std::string> prefs = {"balanced", "cost", "speed", "efficiency"};
    auto it = std::find(prefs.begin(), prefs.end(), o.prefer);
    if (it == prefs.end())
      throw Error(fmt::format("--prefer: expected one of balanced, cost, speed, efficiency, got {}{}",
                              util::quote(o.prefer), util::did_you_mean(o.prefer, prefs)));
    r.prefer = static_cast<rules::Prefer>(it - prefs.begin());
  }
  auto top = util::parse_int(o.top, 1, 100);
  if (!top) throw Error("--top: " + top.error());
  r.top = static_cast<int>(*top);
  r.used = o.used;
  r.today = ctx.today();
  r.filter = make_filter(ctx, o, r);
  return r;
}

std::string speed_cell(const rules::Candidate& c) {
  const auto& p = c.perf;
  if (!p.available) return "n/a";
  if (c.serve) return util::format_number(c.throughput) + " tok/s per user";
  if (p.images_per_s && p.steps_per_s && p.image_batch_s && c.w.batch == 1)
    return fmt::format("{} img/s, {} per image", util::format_number(c.throughput),
                       util::format_duration(p.image_batch_s->typical));
  if (p.images_per_s) return util::format_number(c.throughput) + " img/s";
  if (estimate::is_training(c.w.task)) {
    std::string s = util::format_number(c.throughput) + " tok/s";
    if (p.time_s && !c.rent_hours)
      s += ", " + util::format_duration(p.time_s->typical * p.tokens_per_s.typical / c.throughput);
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
  j["checkpointing"] = catalog::kCheckpointingNames.name(c.w.checkpointing);
  // Renting: the job's rent is its total price; unknown without --tokens.
  const auto total = c.instance ? c.rent_usd : c.price_usd;
  j["total_price_usd"] = total ? util::Json(*total) : util::Json(nullptr);
  j["price_kind"] = c.price_kind.empty() ? util::Json(nullptr) : util::Json(c.price_kind);
  if (c.instance) {
    util::Json inst;
    inst["id"] = c.instance->id;
    inst["provider"] = c.instance->provider;
    inst["instance"] = c.instance->instance;
    inst["region"] = c.instance->region.empty() ? util::Json(nullptr) : util::Json(c.instance->region);
    inst["as_of"] = c.instance->as_of.empty() ? util::Json(nullptr) : util::Json(c.instance->as_of);
    j["instance"] = inst;
    j["usd_per_hour"] = c.usd_per_hour ? util::Json(*c.usd_per_hour) : util::Json(nullptr);
    j["rent_hours"] = c.rent_hours ? util::Json(*c.rent_hours) : util::Json(nullptr);
  }
  j["total_bytes"] = c.memory_need_bytes * c.count;
  j["per_gpu_bytes"] = c.memory_need_bytes;
  j["capacity_bytes"] = c.gpu->memory_bytes;
  j["fits"] = c.fit.fits;
  j["throughput"] = c.throughput;
  j["throughput_unit"] = c.perf.images_per_s               ? "images/s"
                         : estimate::is_training(c.w.task) ? "training tokens/s"
                                                           : "decode tokens/s per sequence";
  if (c.perf.time_s) j["time_s"] = c.perf.time_s->typical;
  if (c.energy_usd) j["energy_usd"] = *c.energy_usd;
  if (c.rent) {
    j["rent"] = {{"instance_id", c.rent->instance->id},
                 {"instances", c.rent->instances},
                 {"usd_per_hour", c.rent->usd_per_hour},
                 {"breakeven_months", c.breakeven_months ? util::Json(*c.breakeven_months) : util::Json(nullptr)},
                 {"job_usd", c.rent_job_usd ? util::Json(*c.rent_job_usd) : util::Json(nullptr)}};
    if (c.rent_over_months_usd) j["rent"]["over_months_usd"] = *c.rent_over_months_usd;
  }
  if (c.resale_usd) j["resale_usd"] = *c.resale_usd;
  if (c.buy_over_months_usd) j["buy_over_months_usd"] = *c.buy_over_months_usd;
  if (c.serve) {
    const auto& sv = *c.serve;
    const bool known = sv.tokens_per_user_s > 0;  // a service that cannot run has no speed or wait
    j["serve"] = {{"tp", sv.tp},
                  {"replicas", sv.replicas},
                  {"users_per_replica", sv.streams_per_replica},
                  {"tokens_per_user_s", known ? util::Json(sv.tokens_per_user_s) : util::Json(nullptr)},
                  {"ttft_s", known ? util::Json(sv.ttft_s) : util::Json(nullptr)},
                  {"prefill_load", sv.prefill_load},
                  {"kv_users_per_replica", static_cast<long long>(sv.kv_streams)},
                  {"requests_per_s", sv.requests_per_s}};
  }
  if (c.job_cost_usd) j["job_cost_usd"] = *c.job_cost_usd;
  j["power_cap_w"] = c.power_cap_w ? util::Json(*c.power_cap_w) : util::Json(nullptr);
  j["score"] = c.score;
  j["value"] = c.value ? util::Json(*c.value) : util::Json(nullptr);
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
    x["value"] = rules::to_json(o.value);
    if (!o.message.empty()) x["message"] = o.message;
    arr.push_back(x);
  }
  j["rules"] = arr;
  return j;
}

std::string failed_line(const rules::Candidate& c) {
  std::vector<std::string> parts;
  for (const auto& o : c.outcomes)
    if (o.applicable && !o.passed && o.rule->kind == rules::Kind::constraint)
      parts.push_back(o.message + " [" + o.rule->id + "]");
  if (!c.hint.empty()) parts.push_back(c.hint);
  return util::join(parts, "; ");
}

util::Json to_json(const rules::Request& req, const rules::Recommendation& rec, const RecommendFlags& o) {
  const std::size_t top = std::min<std::size_t>(rec.plans.size(), static_cast<std::size_t>(req.top));
  util::Json j;
  j["workload"] = estimate::to_json(req.base);
  j["budget_usd"] = req.budget_usd ? util::Json(*req.budget_usd) : util::Json(nullptr);
  if (req.deadline_s) j["deadline_s"] = *req.deadline_s;
  if (req.months) j["months"] = *req.months;
  if (req.serve) {
    const auto& t = *req.serve;
    auto opt = [](const std::optional<double>& v) { return v ? util::Json(*v) : util::Json(nullptr); };
    j["serve_target"] = {{"users", opt(t.users)},
                         {"rps", opt(t.rps)},
                         {"prompt_tokens", t.prompt_tokens},
                         {"output_tokens", t.output_tokens},
                         {"ttft_s", opt(t.ttft_s)},
                         {"tokens_per_user_s", opt(t.tokens_per_user_s)}};
  }
  if (req.cloud)
    j["budget_per"] = req.budget_usd ? util::Json(req.budget_per_hour ? "hour" : "job") : util::Json(nullptr);
  j["power_limit_w"] = req.power_limit_w ? util::Json(*req.power_limit_w) : util::Json(nullptr);
  j["scenario"] = req.scenario.empty() ? util::Json(nullptr) : util::Json(req.scenario);
  j["prefer"] = rules::name(rec.prefer);
  j["score_unit"] = rec.score_unit;
  j["value_unit"] = rec.value_unit;
  j["defaults"] = rec.defaults;
  util::Json plans = util::Json::array();
  for (std::size_t i = 0; i < top; ++i)
    plans.push_back(candidate_json(rec.candidates[rec.plans[i]], static_cast<int>(i + 1), true));
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
  util::Json np = util::Json::array();
  for (const auto& x : rec.not_priced) {
    util::Json e = util::Json::object();
    e[req.cloud ? "instance_id" : "gpu_id"] = x.id;
    e["reason"] = x.reason;
    if (x.used_price_usd) e["used_price_usd"] = *x.used_price_usd;
    np.push_back(e);
  }
  j["not_priced"] = np;
  j["stale_prices"] = rec.stale_prices;
  j["assumptions"] = req.base.assumptions;
  return j;
}

void run_recommend(Context& ctx, const RecommendFlags& o) {
  auto ruleset = rules::RuleSet::load(ctx.rule_files);
  rules::Data data{ctx.catalog(), ruleset, ctx.efficiency(), ctx.prices()};
  if (!o.batch_file.empty()) {
    static const std::vector<std::string> own = {
        "budget",        "power_limit",   "scenario",  "max_gpus", "used",
        "prefer",        "top",           "cloud",     "provider", "gpu",
        "exclude",       "vendor",        "cuda_only", "segment",  "new_only",
        "max_power",     "deadline",      "serve",     "users",    "rps",
        "prompt_tokens", "output_tokens", "ttft",      "tpot",     "tokens_per_user_s",
        "months"};
    run_batch(ctx, o.batch_file, o.in, own,
              [&](const estimate::WorkloadInput& in, const util::Fields& line, Exit& code) {
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
                text("provider", flags.provider);
                text("gpu", flags.only_gpus);
                text("exclude", flags.exclude_gpus);
                text("vendor", flags.vendor);
                text("segment", flags.segment);
                text("max_power", flags.max_power);
                text("deadline", flags.deadline);
                text("months", flags.months);
                if (line.has("serve")) flags.serve = line.boolean("serve");
                text("users", flags.users);
                text("rps", flags.rps);
                text("prompt_tokens", flags.prompt_tokens);
                text("output_tokens", flags.output_tokens);
                text("ttft", flags.ttft);
                text("tpot", flags.tpot);
                text("tokens_per_user_s", flags.tokens_per_user_s);
                if (line.has("cuda_only")) flags.cuda_only = line.boolean("cuda_only");
                if (line.has("new_only")) flags.new_only = line.boolean("new_only");
                if (line.has("used")) flags.used = line.boolean("used");
                if (line.has("cloud")) flags.cloud = line.boolean("cloud");
                auto req = make_request(ctx, flags, &in);
                auto rec = rules::recommend(req, data);
                if (rec.plans.empty()) code = Exit::no;
                return to_json(req, rec, flags);
              });
    return;
  }
  auto f = ctx.output_format();
  auto req = make_request(ctx, o);
  auto rec = rules::recommend(req, data);
  trace_recommend(rec);
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
  const bool job_known = req.cloud && req.base.tokens > 0;
  auto plan_table = [&](const std::vector<std::size_t>& idx, std::size_t n, bool ranked) {
    std::vector<report::Column> cols = {{"#", Align::right},
                                        {"GPU"},
                                        {"Count", Align::right},
                                        {"Precision"},
                                        {"Price", Align::right},
                                        {"Memory/GPU", Align::right},
                                        {"Speed", Align::right},
                                        {rec.value_head, Align::right},
                                        {"Why"}};
    if (req.cloud) {
      cols[4] = {"Rate", Align::right};
      cols.insert(cols.begin() + 1, report::Column{"Instance"});
      if (job_known) cols.insert(cols.begin() + 6, report::Column{"Job", Align::right});
    }
    report::Table t(cols);
    for (std::size_t k = 0; k < n && k < idx.size(); ++k) {
      const auto& c = rec.candidates[idx[k]];
      std::string price = c.price_usd
                              ? util::format_money(*c.price_usd) + (c.price_kind == "street" ? "" : " " + c.price_kind)
                              : "unknown";
      if (c.instance) price = c.usd_per_hour ? util::format_rate(*c.usd_per_hour) : "unknown";
      std::string why = c.reason;
      for (const auto& oc : c.outcomes)
        if (oc.applicable && !oc.passed && oc.rule->kind == rules::Kind::advice)
          why += oc.rule->weight > 0 ? fmt::format("; {} (counts {:.0f}% against)", oc.rule->id, oc.rule->weight * 100)
                                     : "; " + oc.rule->id;
      std::string layout = c.w.precision;
      if (estimate::is_training(c.w.task) && c.count > 1)
        layout += fmt::format(" {}{}", c.w.zero ? fmt::format("z{}", c.w.zero) : "dp",
                              c.w.tp > 1 ? fmt::format(" tp{}", c.w.tp) : "");
      if (c.w.checkpointing == catalog::Checkpointing::full && c.w.task != estimate::Task::qlora) layout += " ckpt";
      std::vector<std::string> row = {
          ranked ? std::to_string(k + 1) : "-",
          c.gpu->id,
          util::format_int(c.count),
          layout,
          price,
          fmt::format("{} / {}", util::format_bytes(c.memory_need_bytes), util::format_bytes(c.gpu->memory_bytes)),
          speed_cell(c),
          value_cell(c, rec),
          why};
      if (req.cloud) {
        row.insert(row.begin() + 1, c.instance ? rules::instance_label(*c.instance) : "");
        if (job_known)
          row.insert(row.begin() + 6, c.rent_usd ? fmt::format("{}, {}", util::format_money(*c.rent_usd),
                                                               util::format_duration(*c.rent_hours * 3600))
                                                 : "unknown");
      }
      t.add(std::move(row));
    }
    return t;
  };
  if (f == report::Format::html) {
    ctx.out << recommend_html(ctx, req, rec, plan_table(rec.plans, top, true),
                              plan_table(rec.pareto, o.pareto ? rec.pareto.size() : 0, false));
    return;
  }

  if (f == report::Format::csv) {
    // For scripts: the plans alone, one row each with plain numbers in SI units (as the JSON keys);
    // empty fields are unknown. No rows when nothing fits.
    auto num = [](std::optional<double> v) { return v ? fmt::format("{}", *v) : std::string(); };
    std::vector<report::Column> cols;
    for (const char* h : {"rank", "gpu_id", "count", "precision", "task", "total_price_usd", "price_kind",
                          "per_gpu_bytes", "capacity_bytes", "throughput", "time_s", "score", "value"})
      cols.push_back({h});
    if (req.cloud)
      for (const char* h : {"instance_id", "usd_per_hour", "rent_hours"}) cols.push_back({h});
    cols.push_back({"reason"});
    report::Table t(cols);
    for (std::size_t k = 0; k < top; ++k) {
      const auto& c = rec.candidates[rec.plans[k]];
      std::vector<std::string> row = {std::to_string(k + 1),
                                      c.gpu->id,
                                      util::format_int(c.count),
                                      c.w.precision,
                                      std::string(estimate::name(c.w.task)),
                                      num(c.instance ? c.rent_usd : c.price_usd),
                                      c.price_kind,
                                      num(c.memory_need_bytes),
                                      num(c.gpu->memory_bytes),
                                      num(c.throughput),
                                      num(c.perf.time_s ? std::optional<double>(c.perf.time_s->typical) : std::nullopt),
                                      num(c.score),
                                      num(c.value)};
      if (req.cloud) {
        row.push_back(c.instance ? c.instance->id : "");
        row.push_back(num(c.usd_per_hour));
        row.push_back(num(c.rent_hours));
      }
      row.push_back(c.reason);
      t.add(std::move(row));
    }
    ctx.out << t.render(f, ctx.style);
    return;
  }
  // Markdown: the running text around the tables holds names too, and no '<' of theirs may open an
  // HTML tag (the tables are escaped already; escaping again leaves them as they are).
  std::ostringstream md;
  std::ostream& out = f == report::Format::markdown ? static_cast<std::ostream&>(md) : ctx.out;
  // The precision is each plan's own unless one was asked for.
  auto head = req.base;
  if (!req.set.precision && head.task == estimate::Task::inference) head.precision = "best precision that fits";
  if (req.serve) {
    out << ctx.style.bold(serve_headline(req));
  } else {
    out << ctx.style.bold(describe(head));
  }
  if (req.budget_usd && req.cloud)
    out << fmt::format(", rent budget {}", req.budget_per_hour ? util::format_rate(*req.budget_usd)
                                                               : util::format_money(*req.budget_usd) + " for the job");
  else if (req.budget_usd)
    out << fmt::format(", budget {}", util::format_money(*req.budget_usd));
  if (req.power_limit_w) out << fmt::format(", power limit {} W", util::format_number(*req.power_limit_w));
  if (!req.scenario.empty()) out << ", " << req.scenario;
  out << "\n\n";
  if (top > 0) {
    out << plan_table(rec.plans, top, true).render(f, ctx.style);
    const auto& best = rec.candidates[rec.plans.front()];
    if (best.instance)
      out << fmt::format(
          "\nBest: {}: {} x {} in {}, {}{}: {}.\n", rules::instance_label(*best.instance), best.count, best.gpu->name,
          best.w.precision,
          best.usd_per_hour ? util::format_rate(*best.usd_per_hour) + " " + best.price_kind : "rate unknown",
          best.rent_usd ? fmt::format(", {} for the job ({})", util::format_money(*best.rent_usd),
                                      util::format_duration(*best.rent_hours * 3600))
                        : "",
          value_words(best, rec));
    else
      out << fmt::format(
          "\nBest: {} x {} in {}, {}{}: {}.\n", util::format_int(best.count), best.gpu->name, best.w.precision,
          best.price_usd
              ? util::format_money(*best.price_usd) + (rec.value_is_job && best.rents_job_cheaper() ? " to buy" : "")
              : "price unknown",
          best.power_cap_w ? fmt::format(", capped to {} W per GPU", util::format_number(*best.power_cap_w)) : "",
          value_words(best, rec));
    std::vector<std::string> warnings;
    for (std::size_t k = 0; k < top; ++k)
      for (const auto& oc : rec.candidates[rec.plans[k]].outcomes)
        if (oc.applicable && !oc.passed && oc.rule->kind == rules::Kind::advice)
          warnings.push_back(fmt::format("{}: {} [{}]",
                                         rec.candidates[rec.plans[k]].instance
                                             ? rec.candidates[rec.plans[k]].instance->id
                                             : rec.candidates[rec.plans[k]].gpu->id,
                                         oc.message, oc.rule->id));
    if (!warnings.empty()) {
      out << "\nNotes:\n";
      for (const auto& wn : warnings) out << "  - " << wn << "\n";
    }
  } else {
    out << ctx.style.bad("Nothing fits.") << " Ways out:\n";
    for (const auto& w : rec.way_out) out << "  - " << w << "\n";
  }
  if (!rec.stale_prices.empty() && top > 0) {
    out << "\nPrices older than 12 months (get a current quote):\n";
    for (const auto& st : rec.stale_prices) out << "  - " << st << "\n";
  }
  if (!rec.not_priced.empty() && top > 0) {
    // Grouped by reason, in the order of the reasons' first appearance.
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    for (const auto& x : rec.not_priced) {
      const std::string& reason = x.reason;
      const std::string item =
          x.used_price_usd ? fmt::format("{} {} used", x.id, util::format_money(*x.used_price_usd)) : x.id;
      auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& grp) { return grp.first == reason; });
      if (g == groups.end())
        groups.push_back({reason, {item}});
      else
        g->second.push_back(item);
    }
    out << fmt::format("\nNot priced, but hold the workload (add a quote: {}):\n",
                       req.cloud ? "--prices FILE" : "--quotes FILE");
    for (const auto& [reason, items] : groups) out << fmt::format("  - {}: {}\n", reason, util::join(items, ", "));
  }
  if (!rec.rejected.empty()) {
    out << "\nNearest rejected:\n";
    for (auto i : rec.rejected) {
      const auto& c = rec.candidates[i];
      out << fmt::format("  - {}: {}\n", c.label(), failed_line(c));
    }
  }
  if (o.pareto && !rec.pareto.empty()) {
    out << "\nPareto front (price vs speed, no plan both cheaper and faster):\n";
    out << plan_table(rec.pareto, rec.pareto.size(), false).render(f, ctx.style);
  }
  if (o.explain) {
    out << "\nEvery rule, per plan shown:\n";
    std::vector<std::size_t> shown(rec.plans.begin(), rec.plans.begin() + static_cast<long>(top));
    shown.insert(shown.end(), rec.rejected.begin(), rec.rejected.end());
    for (auto i : shown) {
      const auto& c = rec.candidates[i];
      out << fmt::format("  {} ({}):\n", c.label(), c.accepted ? "accepted" : "rejected");
      if (const auto speed = speed_terms(c); !speed.empty()) out << "    speed: " << speed << "\n";
      for (const auto& oc : c.outcomes)
        out << fmt::format("    {:<26} {:<5} {}\n", oc.rule->id,
                           !oc.applicable                         ? "n/a"
                           : oc.passed                            ? "pass"
                           : oc.rule->kind == rules::Kind::advice ? "warn"
                                                                  : "FAIL",
                           !oc.applicable ? "-"
                           : oc.passed    ? rules::to_string(oc.value)
                                          : oc.message);
    }
  }
  out << "\nAssumed:\n";
  for (const auto& d : rec.defaults) out << "  - " << d << "\n";
  for (const auto& a : req.base.assumptions)
    if (a.find("task:") != 0 && a.find("precision:") != 0 &&
        !(req.serve && (a.find("batch:") == 0 || a.find("context:") == 0)))  // serving sets both per plan
      out << "  - " << a << "\n";
  if (f == report::Format::markdown) ctx.out << report::markdown_text(md.str());
}

}  // namespace

void setup_recommend(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RecommendFlags>();
  // An empty value ("--gpu ''") is a mistake, not "no filter".
  const CLI::Validator non_empty(
      [](std::string& v) { return util::trim(v).empty() ? std::string("expected a value, got an empty one") : ""; }, "",
      "non-empty");
  auto* cmd = app.add_subcommand("recommend",
                                 "Ranked GPU plans for a workload within budget, power and scenario, with reasons");
  add_workload_options(*cmd, o->in, ctx);
  auto* c = "Constraints";
  cmd->add_option("--budget", o->budget,
                  "Purchase budget in USD (3000, $3,000, 3k); with --cloud a rate (40/h) or the job's total")
      ->group(c);
  cmd->add_option("--power-limit", o->power_limit, "Total power limit (30W, 0.7kW)")->group(c);
  cmd->add_option("--scenario", o->scenario, "personal, workstation, datacenter, edge or cloud (= --cloud)")->group(c);
  cmd->add_flag("--cloud", o->cloud,
                "Rent instead of buy: plans are cloud instances; --budget 40/h is a rate, a plain amount the whole job "
                "(needs --tokens)")
      ->group(c);
  cmd->add_option("--provider", o->provider,
                  "With --cloud: only these providers, comma-separated (aws, gcp, azure, lambda, runpod, ...)")
      ->group(c);
  cmd->add_option("--max-gpus", o->max_gpus,
                  "Most GPUs in a plan (default: 1 edge, 2 personal, 4 workstation, 2,048 with --deadline, else 8)")
      ->group(c);
  cmd->add_flag("--used", o->used, "Include used-market prices where known")->group(c);
  cmd->add_option("--months", o->months,
                  "Buy or rent over this many months (1 to 120): resale value then, from the catalog's used prices")
      ->type_name("N")
      ->check(non_empty)
      ->group(c);
  cmd->add_option("--deadline", o->deadline,
                  "Train by then (30d, 36h, 2w; needs --tokens): per GPU type the fewest GPUs that finish in time, "
                  "ranked by the job's cost with energy")
      ->type_name("DURATION")
      ->check(non_empty)
      ->group(c);
  auto* sv = "Serving";
  cmd->add_flag("--serve", o->serve,
                "Size a service: the cheapest plans that serve the load (--users or --rps) within the targets")
      ->group(sv);
  cmd->add_option("--users", o->users, "Concurrent users (streams), each sending its next request when one ends")
      ->type_name("N")
      ->check(non_empty)
      ->group(sv);
  cmd->add_option("--rps", o->rps, "Requests per second (Poisson arrivals), instead of --users")
      ->type_name("R")
      ->check(non_empty)
      ->group(sv);
  cmd->add_option("--prompt-tokens", o->prompt_tokens, "Tokens per prompt (default 1,024)")
      ->type_name("N")
      ->check(non_empty)
      ->group(sv);
  cmd->add_option("--output-tokens", o->output_tokens, "Tokens per answer (default 256)")
      ->type_name("N")
      ->check(non_empty)
      ->group(sv);
  cmd->add_option("--ttft", o->ttft, "Time to first token, at most (mean, about the median): 2s, 500ms")
      ->type_name("DURATION")
      ->check(non_empty)
      ->group(sv);
  cmd->add_option("--tokens-per-user-s", o->tokens_per_user_s, "Decode rate each user sees, at least (tokens/s)")
      ->type_name("X")
      ->check(non_empty)
      ->group(sv);
  cmd->add_option("--tpot", o->tpot, "Time per output token, at most (= 1 / --tokens-per-user-s): 50ms")
      ->type_name("DURATION")
      ->check(non_empty)
      ->group(sv);
  auto* k = "Candidates";
  cmd->add_option("--gpu", o->only_gpus, "Only these GPUs: ids, aliases or loose names, comma-separated")
      ->type_name("LIST")
      ->check(non_empty)
      ->group(k);
  cmd->add_option("--exclude", o->exclude_gpus, "Not these GPUs, comma-separated")
      ->type_name("LIST")
      ->check(non_empty)
      ->group(k);
  cmd->add_option("--vendor", o->vendor, "Only these vendors: nvidia, amd, intel, apple (comma-separated)")
      ->type_name("LIST")
      ->check(non_empty)
      ->group(k);
  cmd->add_flag("--cuda-only", o->cuda_only, "Only GPUs that run CUDA software unchanged (NVIDIA)")->group(k);
  cmd->add_option("--segment", o->segment, "Only these segments: consumer, workstation, datacenter, edge")
      ->type_name("LIST")
      ->check(non_empty)
      ->group(k);
  cmd->add_flag("--new-only", o->new_only, "Only GPUs still in production (sold new)")->group(k);
  cmd->add_option("--max-power", o->max_power, "Most rated power per GPU (350W)")
      ->type_name("POWER")
      ->check(non_empty)
      ->group(k);
  cmd->add_option("--prefer", o->prefer,
                  "Ranking: cost (value: price per speed; the default but at the edge), speed, efficiency (edge "
                  "default) or balanced")
      ->group(c);
  cmd->add_option("--top", o->top, "How many plans to show (default 5)");
  cmd->add_option("--batch-file", o->batch_file,
                  "JSON Lines: one workload per line (profile fields, plus budget, power_limit, scenario, max_gpus, "
                  "used, prefer, top, and the candidate filters gpu, exclude, vendor, cuda_only, segment, new_only, "
                  "max_power)")
      ->type_name("FILE|-");
  cmd->add_flag("--explain", o->explain, "Show every rule's outcome for each plan shown");
  cmd->add_flag("--pareto", o->pareto, "Also list the plans not dominated on price and speed");
  cmd->add_option("--rules", ctx.rule_files, "Extra rules or overrides (JSON, as data/rules.json); repeatable")
      ->type_name("FILE");
  add_format_option(*cmd, ctx, kTabularHtml, "html: a page with charts");
  add_catalog_option(*cmd, ctx);
  add_prices_option(*cmd, ctx);
  cmd->footer(
      "Exit status: 0 with plans, 1 when nothing fits (the output says the cheapest ways out), 2 bad input.\n"
      "Examples:\n"
      "  gpuadvisor recommend --model 10B --budget 3000\n"
      "  gpuadvisor recommend --model 10B --budget 3000 --cuda-only --gpu rtx-4090,rtx-5090,rtx-3090\n"
      "  gpuadvisor recommend --model 7B --task train --tokens 1T --deadline 30d\n"
      "  gpuadvisor recommend --model llama-3.1-70b --serve --users 50 --tokens-per-user-s 20 --ttft 2s\n"
      "  gpuadvisor recommend --model llama-3.1-70b --task qlora --budget 50000 --explain\n"
      "  gpuadvisor recommend --model yolov8s --scenario edge --power-limit 30W\n"
      "  gpuadvisor recommend --model llama-3.1-8b --task lora --budget 10k --used --prefer cost --format json\n"
      "  gpuadvisor recommend --model llama-3.1-70b --task qlora --cloud --budget 5/h\n"
      "  gpuadvisor recommend --model llama-3.1-8b --task train --tokens 20B --cloud --budget 20k --prefer cost");
  cmd->callback([&ctx, o] { run_recommend(ctx, *o); });
}

}  // namespace gpuadvisor::cli
