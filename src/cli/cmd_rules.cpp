// gpuadvisor rules list | show: the rules recommend and check apply.
#include <fmt/format.h>

#include <algorithm>

#include "context.h"
#include "gpuadvisor/rules/rules.h"
#include "gpuadvisor/util/text.h"

namespace gpuadvisor::cli {
namespace {

std::string flag(std::string option) {
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}

// CSV: one record a rule (list and show alike), the threshold a plain number where it is one.
std::string rules_csv(const std::vector<const rules::Rule*>& rows, const report::Style& style) {
  report::Table t({{"id"},
                   {"scope"},
                   {"kind"},
                   {"severity"},
                   {"metric"},
                   {"op"},
                   {"threshold"},
                   {"threshold_from"},
                   {"when"},
                   {"weight"},
                   {"as_of"},
                   {"defined_at"}});
  for (const auto* r : rows) {
    const auto* num = std::get_if<double>(&r->threshold);
    t.add({r->id, r->scope, std::string(rules::name(r->kind)), std::string(rules::name(r->severity)), r->metric, r->op,
           num                                                    ? report::csv_number(*num)
           : std::holds_alternative<std::monostate>(r->threshold) ? std::string()
                                                                  : rules::to_string(r->threshold),
           r->threshold_from, r->when, report::csv_number(r->weight), r->as_of, r->origin});
  }
  return t.render(report::Format::csv, style);
}

// One rule as data: what data/rules.json holds, resolved (policy files applied), plus its page.
util::Json rule_json(const rules::Rule& r) {
  util::Json x;
  x["id"] = r.id;
  x["kind"] = rules::name(r.kind);
  x["scope"] = r.scope;
  x["severity"] = rules::name(r.severity);
  x["metric"] = r.metric;
  x["op"] = r.op;
  x["threshold"] = r.threshold_from.empty() ? rules::to_json(r.threshold) : util::Json(nullptr);
  x["threshold_from"] = r.threshold_from.empty() ? util::Json(nullptr) : util::Json(r.threshold_from);
  x["when"] = r.when.empty() ? util::Json(nullptr) : util::Json(r.when);
  x["weight"] = r.weight;
  x["message"] = r.message;
  x["fix"] = r.fix.empty() ? util::Json(nullptr) : util::Json(r.fix);
  x["rationale"] = r.rationale;
  x["sources"] = catalog::sources_json(r.sources);
  x["as_of"] = r.as_of.empty() ? util::Json(nullptr) : util::Json(r.as_of);
  x["defined_at"] = r.origin;
  x["doc"] = "docs/rules/" + r.id + ".md";
  return x;
}

void run_list(Context& ctx, bool ids) {
  auto f = ctx.output_format();
  auto rs = rules::RuleSet::load(ctx.rule_files);
  if (ids) {  // for scripts and shell completion
    for (const auto& r : rs.rules()) ctx.out << r.id << '\n';
    return;
  }
  if (f == report::Format::json) {
    auto j = report::envelope("rules list");
    util::Json arr = util::Json::array();
    for (const auto& r : rs.rules()) arr.push_back(rule_json(r));
    j["rules"] = arr;
    ctx.out << report::dump(j);
    return;
  }
  if (f == report::Format::csv) {
    std::vector<const rules::Rule*> all;
    for (const auto& r : rs.rules()) all.push_back(&r);
    ctx.out << rules_csv(all, ctx.style);
    return;
  }
  report::Table t({{"ID"}, {"Scope"}, {"Kind"}, {"Severity"}, {"Test"}});
  for (const auto& r : rs.rules())
    t.add({r.id, r.scope, std::string(rules::name(r.kind)), std::string(rules::name(r.severity)),
           fmt::format("{} {} {}", r.metric, r.op,
                       r.threshold_from.empty() ? rules::to_string(r.threshold) : "--" + flag(r.threshold_from))});
  ctx.out << t.render(f, ctx.style);
  if (f == report::Format::table)
    ctx.out << fmt::format("\n{} rules. 'gpuadvisor rules show ID' or docs/rules/ID.md for each.\n", rs.rules().size());
}

void run_show(Context& ctx, const std::string& id) {
  auto f = ctx.output_format();
  auto rs = rules::RuleSet::load(ctx.rule_files);
  const auto* r = rs.find(id);
  if (!r) {
    std::vector<std::string> ids;
    for (const auto& x : rs.rules()) ids.push_back(x.id);
    throw Error(fmt::format("unknown rule {}{}", util::quote(id), util::did_you_mean(id, ids)));
  }
  std::vector<std::pair<std::string, std::string>> kv = {
      {"ID", r->id},
      {"Kind", fmt::format("{} ({}, {})", rules::name(r->kind), r->scope, rules::name(r->severity))},
      {"Test",
       fmt::format("{} {} {}", r->metric, r->op,
                   r->threshold_from.empty() ? rules::to_string(r->threshold) : "--" + flag(r->threshold_from))},
      {"Message", r->message},
      {"Why", r->rationale}};
  if (r->weight > 0) kv.push_back({"Score weight", fmt::format("{:.0f}% of the score when it fires", r->weight * 100)});
  if (!r->fix.empty()) kv.push_back({"Fix", r->fix});
  for (std::size_t i = 0; i < r->sources.size(); ++i)
    kv.push_back({i == 0 ? "Sources" : " ",
                  r->sources[i].title + (r->sources[i].url.empty() ? "" : " <" + r->sources[i].url + ">")});
  kv.push_back({"Defined at", r->origin});
  if (f == report::Format::json) {
    auto j = report::envelope("rules show");
    const util::Json rule = rule_json(*r);
    for (const auto& [k, v] : rule.items()) j[k] = v;
    ctx.out << report::dump(j);
    return;
  }
  if (f == report::Format::csv) {
    ctx.out << rules_csv({r}, ctx.style);
    return;
  }
  ctx.out << report::key_values(kv, f, ctx.style);
}

}  // namespace

void setup_rules(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("rules", "List and explain the rules that recommend and check apply");
  cmd->require_subcommand(1);
  cmd->footer(
      "Examples:\n  gpuadvisor rules list\n  gpuadvisor rules show memory-fit\n  gpuadvisor rules list --rules "
      "docs/examples/policies/team-policy.json");
  auto* list = cmd->add_subcommand("list", "List every rule with its test");
  list->add_option("--rules", ctx.rule_files, "Extra rules or overrides; repeatable")->type_name("FILE");
  auto ids = std::make_shared<bool>(false);
  list->add_flag("--ids", *ids, "Print only the ids, one a line (for scripts and shell completion)");
  add_format_option(*list, ctx, kTabular);
  list->footer(
      "Examples:\n  gpuadvisor rules list\n  gpuadvisor rules list --ids\n"
      "  gpuadvisor rules list --rules docs/examples/policies/team-policy.json --format json");
  list->callback([&ctx, ids] { run_list(ctx, *ids); });
  auto id = std::make_shared<std::string>();
  auto* show = cmd->add_subcommand("show", "Show one rule: test, message, rationale and sources");
  show->add_option("id", *id, "Rule id")->required();
  show->add_option("--rules", ctx.rule_files, "Extra rules or overrides; repeatable")->type_name("FILE");
  add_format_option(*show, ctx, kTabular);
  show->footer(
      "Examples:\n  gpuadvisor rules show memory-fit\n  gpuadvisor rules show budget --format json\n"
      "  gpuadvisor rules show max-two-gpus --rules docs/examples/policies/team-policy.json");
  show->callback([&ctx, id] { run_show(ctx, *id); });
}

}  // namespace gpuadvisor::cli
