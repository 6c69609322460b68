#include "gpuadvisor/report/check_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "gpuadvisor/util/text.h"
#include "gpuadvisor/version.h"

namespace gpuadvisor::report {
namespace {

using rules::Finding;
using rules::Severity;
using rules::SpecOutcome;

// Compiler diagnostics say "note" where the rules say "info".
std::string_view diag_name(Severity s) {
  return s == Severity::error ? "error" : s == Severity::warning ? "warning" : "note";
}
std::string_view sarif_level(Severity s) {
  return s == Severity::error ? "error" : s == Severity::warning ? "warning" : "note";
}

// Whether a finding fails the run, as the exit code has it: errors always, warnings with
// --fail-on warning. JUnit's <failure> and SARIF's "error" level follow it.
bool fails_gate(Severity s, std::string_view fail_on) {
  return s == Severity::error || (s == Severity::warning && fail_on == "warning");
}

std::string location(const std::string& file, int line) { return line > 0 ? fmt::format("{}:{}", file, line) : file; }

std::string diag_line(const std::string& file, const Finding& f) {
  return fmt::format("{}: {}: {} [{}]", location(file, f.line), diag_name(f.severity), f.message, f.rule->id);
}

std::string plural(std::size_t n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

// "what the rule tests", for SARIF shortDescription and --list-rules.
std::string test_of(const rules::Rule& r) {
  std::string desc;
  for (const auto& m : rules::check_metrics())
    if (m.name == r.metric) desc = std::string(m.description);
  std::string t = fmt::format("{} {} {}", r.metric, r.op, rules::threshold_text(r));
  return desc.empty() ? t : fmt::format("{}: {}", t, desc);
}

// The line of an unreadable spec's error, when it starts "<file>:<line>:".
int error_line(const SpecOutcome& o) {
  if (o.error.compare(0, o.file.size() + 1, o.file + ":") != 0) return 0;
  int line = 0;
  for (std::size_t i = o.file.size() + 1; i < o.error.size() && std::isdigit(static_cast<unsigned char>(o.error[i]));
       ++i)
    line = line * 10 + (o.error[i] - '0');
  return line;
}

}  // namespace

std::string rule_doc_path(std::string_view id) { return fmt::format("docs/rules/{}.md", id); }

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters even as references; keep tab, newline, return.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += "\xEF\xBF\xBD";
        else
          out += c;
    }
  }
  return out;
}

std::string path_to_uri(std::string_view path) {
  std::string out;
  if (!path.empty() && path[0] == '/') out = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string check_text(std::span<const SpecOutcome> outcomes, const Style& style) {
  std::string out;
  for (const auto& o : outcomes) {
    if (!o.result) continue;
    for (const auto& f : o.result->findings) {
      std::string sev(diag_name(f.severity));
      if (f.severity == Severity::error) sev = style.bad(sev);
      out += fmt::format("{}: {}: {} [{}]\n", location(o.file, f.line), sev, f.message, f.rule->id);
      if (!f.fix.empty()) out += fmt::format("    fix: {}\n", f.fix);
    }
  }
  auto s = rules::summarize(outcomes);
  out += fmt::format("{} checked: {}, {}", plural(s.specs, "spec"), plural(s.errors, "error"),
                     plural(s.warnings, "warning"));
  if (s.notes) out += ", " + plural(s.notes, "note");
  if (s.unreadable) out += fmt::format("; {} could not be read", s.unreadable);
  out += "\n";
  return out;
}

util::Json check_json(std::span<const SpecOutcome> outcomes, std::string_view fail_on) {
  auto j = envelope("check");
  j["fail_on"] = fail_on;
  util::Json specs = util::Json::array();
  for (const auto& o : outcomes) {
    util::Json x;
    x["file"] = o.file;
    x["readable"] = o.result.has_value();
    if (!o.result) {
      x["error"] = o.error;
      specs.push_back(x);
      continue;
    }
    x["name"] = o.result->name;
    std::size_t errors = 0, warnings = 0;
    util::Json findings = util::Json::array();
    for (const auto& f : o.result->findings) {
      if (f.severity == Severity::error) ++errors;
      if (f.severity == Severity::warning) ++warnings;
      util::Json y;
      y["rule_id"] = f.rule->id;
      y["severity"] = rules::name(f.severity);
      y["promoted"] = f.promoted;
      y["line"] = f.line > 0 ? util::Json(f.line) : util::Json(nullptr);
      y["pointer"] = f.pointer;
      y["message"] = f.message;
      y["fix"] = f.fix;
      y["doc"] = rule_doc_path(f.rule->id);
      findings.push_back(y);
    }
    x["errors"] = errors;
    x["warnings"] = warnings;
    x["findings"] = findings;
    x["rules_checked"] = o.result->rules.size();
    x["assumptions"] = o.result->assumptions;
    specs.push_back(x);
  }
  j["specs"] = specs;
  auto s = rules::summarize(outcomes);
  util::Json sum;
  sum["specs"] = s.specs;
  sum["unreadable"] = s.unreadable;
  sum["errors"] = s.errors;
  sum["warnings"] = s.warnings;
  sum["notes"] = s.notes;
  j["summary"] = sum;
  return j;
}

std::string check_junit(std::span<const SpecOutcome> outcomes, const std::string& fail_on) {
  std::string body;
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  for (const auto& o : outcomes) {
    const std::string file = xml_escape(o.file);
    if (!o.result) {
      ++tests;
      ++errors;
      body += fmt::format(
          "  <testsuite name=\"{0}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
          "    <testcase name=\"spec-readable\" classname=\"{0}\">\n"
          "      <error message=\"{1}\" type=\"input-error\">{1}</error>\n"
          "    </testcase>\n"
          "  </testsuite>\n",
          file, xml_escape(o.error));
      continue;
    }
    const auto& r = *o.result;
    std::string cases;
    std::size_t suite_failures = 0, suite_skipped = 0;
    for (const rules::Rule* rule : r.rules) {
      std::vector<const Finding*> hits;
      for (const auto& f : r.findings)
        if (f.rule == rule) hits.push_back(&f);
      if (hits.empty()) {
        if (std::find(r.not_applicable.begin(), r.not_applicable.end(), rule) != r.not_applicable.end()) {
          ++suite_skipped;
          cases += fmt::format(
              "    <testcase name=\"{}\" classname=\"{}\">\n"
              "      <skipped message=\"the spec gives nothing this rule reads ({})\"/>\n"
              "    </testcase>\n",
              xml_escape(rule->id), file, xml_escape(rule->metric));
        } else {
          cases += fmt::format("    <testcase name=\"{}\" classname=\"{}\"/>\n", xml_escape(rule->id), file);
        }
        continue;
      }
      Severity worst = Severity::info;
      std::string text;
      for (const auto* f : hits) {
        if (f->severity < worst) worst = f->severity;  // error < warning < info in the enum
        text += diag_line(o.file, *f) + "\n";
        if (!f->fix.empty()) text += "    fix: " + f->fix + "\n";
      }
      // What does not fail the run (as the exit code has it) passes, its findings shown.
      if (!fails_gate(worst, fail_on)) {
        cases += fmt::format(
            "    <testcase name=\"{}\" classname=\"{}\">\n"
            "      <system-out>{}</system-out>\n"
            "    </testcase>\n",
            xml_escape(rule->id), file, xml_escape(text));
        continue;
      }
      ++suite_failures;
      std::string message =
          hits.size() == 1 ? hits[0]->message : fmt::format("{} findings; first: {}", hits.size(), hits[0]->message);
      cases += fmt::format(
          "    <testcase name=\"{}\" classname=\"{}\">\n"
          "      <failure message=\"{}\" type=\"{}\">{}</failure>\n"
          "    </testcase>\n",
          xml_escape(rule->id), file, xml_escape(message), diag_name(worst), xml_escape(text));
    }
    tests += r.rules.size();
    failures += suite_failures;
    skipped += suite_skipped;
    body += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n", file,
                        r.rules.size(), suite_failures, suite_skipped);
    if (!r.name.empty())
      body += fmt::format("    <properties>\n      <property name=\"spec\" value=\"{}\"/>\n    </properties>\n",
                          xml_escape(r.name));
    body += cases;
    body += "  </testsuite>\n";
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"gpuadvisor check\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
      "skipped=\"{}\">\n{}</testsuites>\n",
      tests, failures, errors, skipped, body);
}

util::Json check_sarif(std::span<const SpecOutcome> outcomes, std::span<const rules::Rule* const> rules,
                       const std::string& fail_on) {
  util::Json driver;
  driver["name"] = "gpuadvisor";
  driver["version"] = kVersion;
  driver["semanticVersion"] = kVersion;
  util::Json descriptors = util::Json::array();
  for (const auto* r : rules) {
    util::Json d;
    d["id"] = r->id;
    d["shortDescription"] = {{"text", test_of(*r)}};
    d["fullDescription"] = {{"text", r->rationale.empty() ? test_of(*r) : r->rationale}};
    // The fix is a template filled per finding (it is in each result's message); the rule's help
    // says why and where the page is.
    std::string help =
        fmt::format("{}\n\nSee {} for what it checks and how to fix it.", r->rationale, rule_doc_path(r->id));
    d["help"] = {{"text", help}};
    d["defaultConfiguration"] = {{"level", sarif_level(r->severity)}};
    d["properties"] = {{"tags", {"procurement", "gpuadvisor"}}};
    descriptors.push_back(d);
  }
  driver["rules"] = descriptors;

  util::Json results = util::Json::array();
  util::Json notifications = util::Json::array();
  util::Json artifacts = util::Json::array();
  for (const auto& o : outcomes) {
    util::Json artifact;
    artifact["location"] = {{"uri", path_to_uri(o.file)}};
    artifacts.push_back(artifact);
    if (!o.result) {
      util::Json n;
      n["level"] = "error";
      n["message"] = {{"text", o.error}};
      util::Json loc;
      loc["physicalLocation"]["artifactLocation"]["uri"] = path_to_uri(o.file);
      if (int line = error_line(o); line > 0) loc["physicalLocation"]["region"]["startLine"] = line;
      n["locations"] = util::Json::array({loc});
      notifications.push_back(n);
      continue;
    }
    for (const auto& f : o.result->findings) {
      util::Json res;
      res["ruleId"] = f.rule->id;
      auto idx = std::find(rules.begin(), rules.end(), f.rule);
      if (idx != rules.end()) res["ruleIndex"] = idx - rules.begin();
      res["level"] = fails_gate(f.severity, fail_on) ? std::string_view("error") : sarif_level(f.severity);
      res["message"] = {{"text", f.fix.empty() ? f.message : fmt::format("{}. Fix: {}", f.message, f.fix)}};
      util::Json phys;
      phys["artifactLocation"]["uri"] = path_to_uri(o.file);
      if (f.line > 0) phys["region"]["startLine"] = f.line;
      util::Json loc;
      loc["physicalLocation"] = phys;
      res["locations"] = util::Json::array({loc});
      results.push_back(res);
    }
  }

  util::Json invocation;
  invocation["executionSuccessful"] = notifications.empty();
  if (!notifications.empty()) invocation["toolExecutionNotifications"] = notifications;

  util::Json run;
  run["tool"]["driver"] = driver;
  run["invocations"] = util::Json::array({invocation});
  run["artifacts"] = artifacts;
  run["results"] = results;

  util::Json sarif;
  sarif["$schema"] = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
  sarif["version"] = "2.1.0";
  sarif["runs"] = util::Json::array({run});
  return sarif;
}

}  // namespace gpuadvisor::report
