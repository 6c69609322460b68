// gpuadvisor check SPEC...: lint procurement specs for CI (docs/procurement-check.md).
#include <fmt/format.h>

#include <algorithm>

#include "context.h"
#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/report/check_output.h"
#include "gpuadvisor/rules/check.h"
#include "gpuadvisor/util/text.h"

namespace gpuadvisor::cli {
namespace {

struct CheckOptions {
  std::vector<std::string> specs;
  std::string format = "text";
  std::string fail_on = "error";
  bool list_rules = false;
  std::vector<std::string> warnings_as_errors;
  std::vector<std::string> disable;
  std::string batch_file;
};

// table is text's other name: every command takes --format table for its terminal output.
constexpr report::Format kCheckFormats[] = {report::Format::text, report::Format::table, report::Format::json,
                                            report::Format::junit, report::Format::sarif};

// The embedded rules plus --rules files; a check rule must read a metric that check computes.
rules::RuleSet load_rules(const Context& ctx) {
  auto rs = rules::RuleSet::load(ctx.rule_files);
  for (const auto& f : ctx.rule_files) {
    auto doc = util::JsonDoc::load(f);  // already read once by load(); this pass gives the metric's line
    if (!doc) throw Error(doc.error());
    rules::validate_check_rules(*doc);
  }
  rules::validate_check_rules(rs);
  return rs;
}

void list_rules(Context& ctx, const rules::RuleSet& rs, const CheckOptions& o, report::Format f) {
  std::vector<const rules::Rule*> all;
  for (const auto& r : rs.rules())
    if (r.scope == "check") all.push_back(&r);
  auto enabled = [&](const rules::Rule* r) { return !rules::glob_list_match(o.disable, r->id); };
  auto as_error = [&](const rules::Rule* r) {
    return r->severity == rules::Severity::error ||
           (r->severity == rules::Severity::warning && rules::glob_list_match(o.warnings_as_errors, r->id));
  };
  if (f == report::Format::json) {
    auto j = report::envelope("check --list-rules");
    util::Json arr = util::Json::array();
    for (const auto* r : all) {
      util::Json x;
      x["id"] = r->id;
      x["severity"] = rules::name(r->severity);
      x["enabled"] = enabled(r);
      x["as_error"] = as_error(r);
      x["metric"] = r->metric;
      x["op"] = r->op;
      x["threshold"] = rules::to_json(r->threshold);
      x["message"] = r->message;
      x["fix"] = r->fix;
      x["rationale"] = r->rationale;
      x["sources"] = catalog::sources_json(r->sources);
      x["doc"] = report::rule_doc_path(r->id);
      x["origin"] = r->origin;
      arr.push_back(x);
    }
    j["rules"] = arr;
    ctx.out << report::dump(j);
    return;
  }
  if (f != report::Format::text) throw Error("--list-rules: expected --format text or json");
  report::Table t({{"ID"}, {"Severity"}, {"Enabled"}, {"Test"}});
  std::size_t on = 0;
  for (const auto* r : all) {
    bool e = enabled(r);
    on += e ? 1 : 0;
    std::string sev(rules::name(r->severity));
    if (r->severity == rules::Severity::warning && as_error(r)) sev += " (as error)";
    t.add({r->id, sev, e ? "yes" : "no", fmt::format("{} {} {}", r->metric, r->op, rules::threshold_text(*r))});
  }
  ctx.out << t.render(report::Format::table, ctx.style);
  ctx.out << fmt::format(
      "\n{} of {} check rules enabled. docs/rules/ID.md explains each; --rules FILE overrides them by id.\n", on,
      all.size());
}

// A glob of --disable or --warnings-as-errors that matches no check rule is a typo that would turn
// a CI gate off in silence: exit 2 with the nearest rule id.
void require_globs_match(const rules::RuleSet& rs, const char* flag, const std::vector<std::string>& globs) {
  std::vector<std::string> ids;
  for (const auto& r : rs.rules())
    if (r.scope == "check") ids.push_back(r.id);
  for (const auto& item : globs)
    for (const auto& raw : util::split(item, ',')) {
      std::string g(util::trim(raw));
      if (!g.empty() && g[0] == '-') g.erase(0, 1);
      if (g.empty()) continue;
      const std::vector<std::string> one = {g};
      if (std::none_of(ids.begin(), ids.end(),
                       [&](const std::string& id) { return rules::glob_list_match(one, id); })) {
        // A glob is compared with the globs that would match (each id's "family-*"), an id with the ids.
        std::vector<std::string> names = ids;
        if (g.find_first_of("*?") != std::string::npos)
          for (const auto& id : ids)
            if (auto dash = id.find('-'); dash != std::string::npos) {
              std::string family = id.substr(0, dash) + "-*";
              if (std::find(names.begin(), names.end(), family) == names.end()) names.push_back(family);
            }
        throw Error(fmt::format("{}: {} matches no check rule{} (gpuadvisor check --list-rules)", flag, util::quote(g),
                                util::did_you_mean(g, names)));
      }
    }
}

// --batch-file: one spec per line, one compact JSON result per line: the spec's entry of the JSON
// report ("file" names the batch file), after the line number. A line that is not a valid spec
// gives {"line": N, "error": "..."}. Each line's exit code is that of a run on that spec alone.
void run_batch_check(Context& ctx, const rules::RuleSet& rs, const CheckOptions& o, report::Format f) {
  if (!o.specs.empty()) throw Error("check: give spec files or --batch-file, not both");
  if (f != report::Format::text && f != report::Format::table && f != report::Format::json)
    throw Error(fmt::format("--format {}: --batch-file writes JSON Lines, one result per spec", o.format));
  const auto enabled = rules::enabled_check_rules(rs, o.disable);
  const rules::CheckData data{ctx.catalog(), ctx.models(), ctx.efficiency(), ctx.prices(),
                              catalog::CompatTable::embedded()};
  const std::string file = o.batch_file == "-" ? "<stdin>" : o.batch_file;
  run_batch_lines(ctx, o.batch_file, [&](const util::JsonDoc& doc, Exit& code) {
    rules::SpecOutcome out;
    out.file = file;
    out.result = rules::check_spec(doc, data, enabled);
    rules::apply_warnings_as_errors(*out.result, o.warnings_as_errors);
    const std::vector<rules::SpecOutcome> one{std::move(out)};
    auto s = rules::summarize(one);
    if (s.errors > 0 || (o.fail_on == "warning" && s.warnings > 0)) code = Exit::no;
    auto j = report::check_json(one, o.fail_on);
    return util::Json(std::move(j["specs"][0]));
  });
}

void run_check(Context& ctx, const CheckOptions& o) {
  auto fr = report::parse_format(o.format, kCheckFormats);
  if (!fr) throw Error(fr.error());
  const report::Format f = *fr;
  static const std::vector<std::string> fail_choices = {"error", "warning"};
  if (std::find(fail_choices.begin(), fail_choices.end(), o.fail_on) == fail_choices.end())
    throw Error(fmt::format("--fail-on: expected error or warning, got {}{}", util::quote(o.fail_on),
                            util::did_you_mean(o.fail_on, fail_choices)));

  const auto rs = load_rules(ctx);
  require_globs_match(rs, "--disable", o.disable);
  require_globs_match(rs, "--warnings-as-errors", o.warnings_as_errors);
  if (o.list_rules) {
    list_rules(ctx, rs, o, f);
    return;
  }
  if (!o.batch_file.empty()) {
    run_batch_check(ctx, rs, o, f);
    return;
  }
  if (o.specs.empty())
    throw Error("check: give one or more spec files (globs are expanded by the shell; - reads standard input)");
  if (std::count(o.specs.begin(), o.specs.end(), "-") > 1)
    throw Error("check: standard input (-) can be named only once");

  const auto enabled = rules::enabled_check_rules(rs, o.disable);
  const rules::CheckData data{ctx.catalog(), ctx.models(), ctx.efficiency(), ctx.prices(),
                              catalog::CompatTable::embedded()};

  std::vector<rules::SpecOutcome> outcomes;
  for (const auto& path : o.specs) {
    rules::SpecOutcome out;
    out.file = path == "-" ? "<stdin>" : path;
    auto doc = util::JsonDoc::load(path);
    if (!doc) {
      out.error = doc.error();
    } else {
      try {
        auto r = rules::check_spec(*doc, data, enabled);
        rules::apply_warnings_as_errors(r, o.warnings_as_errors);
        out.result = std::move(r);
      } catch (const Error& e) {
        // A bad spec stops that spec only: the others are still checked and reported.
        out.error = e.what();
      }
    }
    // One line each, whatever the file's name holds (the stream escapes the rest, not newlines).
    if (!out.result) ctx.err << "gpuadvisor: error: " << util::escape_controls(out.error) << "\n";
    outcomes.push_back(std::move(out));
  }

  switch (f) {
    case report::Format::json:
      ctx.out << report::dump(report::check_json(outcomes, o.fail_on));
      break;
    case report::Format::junit:
      ctx.out << report::check_junit(outcomes, o.fail_on);
      break;
    case report::Format::sarif:
      ctx.out << report::dump(report::check_sarif(outcomes, enabled, o.fail_on));
      break;
    default:
      ctx.out << report::check_text(outcomes, ctx.style);
      break;
  }

  auto s = rules::summarize(outcomes);
  const bool failed = s.errors > 0 || (o.fail_on == "warning" && s.warnings > 0);
  ctx.exit = s.unreadable ? Exit::usage : failed ? Exit::no : Exit::ok;
}

}  // namespace

void setup_check(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand("check", "Lint procurement specs (GPUs, server, software, budget, workloads) for CI");
  cmd->add_option("specs", o->specs, "Spec files (JSON; docs/procurement-check.md); - reads standard input")
      ->type_name("SPEC");
  cmd->add_option("--format", o->format, format_help(kCheckFormats, "table is the same as text"))->type_name("FORMAT");
  cmd->add_option("--fail-on", o->fail_on, "Exit 1 when a finding is at least this severe: error (default) or warning")
      ->type_name("SEVERITY");
  cmd->add_option("--rules", ctx.rule_files,
                  "Policy file: rules that replace the shipped ones by id (thresholds included); repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  cmd->add_flag("--list-rules", o->list_rules, "List the check rules, their severities and tests, and exit");
  cmd->add_option("--batch-file", o->batch_file,
                  "JSON Lines: one spec per line; one JSON result per line (- reads standard input)")
      ->type_name("FILE")
      ->allow_extra_args(false);
  cmd->add_option(
         "--warnings-as-errors", o->warnings_as_errors,
         "Treat warnings of the rules matching these globs as errors (comma-separated; * and ?; -glob excludes)")
      ->type_name("GLOBS")
      ->allow_extra_args(false);
  cmd->add_option("--disable", o->disable, "Skip the rules matching these globs (comma-separated; * and ?); repeatable")
      ->type_name("GLOBS")
      ->allow_extra_args(false);
  cmd->add_option("--catalog", ctx.catalog_files, "Extra GPU catalog file (JSON, as data/gpus.json); repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  cmd->add_option("--models", ctx.model_files, "Extra model presets file (JSON, as data/models.json); repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  cmd->add_option("--prices", ctx.price_files, "Extra prices/servers file (JSON, as data/cloud.json); repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  cmd->footer(
      "Exit status: 0 no finding reaches --fail-on; 1 one does; 2 a spec or rules file cannot be read\n"
      "(the other specs are still checked and reported). With --batch-file, the worst line's.\n"
      "Examples:\n"
      "  gpuadvisor check docs/examples/h100-*.json\n"
      "  gpuadvisor check docs/examples/h100-*.json --format sarif > check.sarif\n"
      "  gpuadvisor check docs/examples/h100-training-server.json --fail-on warning "
      "--warnings-as-errors='quote-*,host-ram-*'\n"
      "  gpuadvisor check docs/examples/rtx4090-datacenter.json --disable no-ecc-production-training --rules "
      "docs/examples/policies/team-policy.json\n"
      "  cat docs/examples/h100-training-server.json | gpuadvisor check -\n"
      "  gpuadvisor check --batch-file docs/examples/specs.jsonl\n"
      "  gpuadvisor check --list-rules");
  cmd->callback([&ctx, o] { run_check(ctx, *o); });
}

}  // namespace gpuadvisor::cli
