#pragma once
/// Renderers for `check` results: compiler-style text, the JSON envelope, JUnit XML and SARIF
/// 2.1.0 (docs/procurement-check.md). Pure functions of the results; no I/O.
#include <span>
#include <string>
#include <string_view>

#include "gpuadvisor/report/output.h"
#include "gpuadvisor/rules/check.h"
#include "gpuadvisor/util/json.h"

namespace gpuadvisor::report {

/// Where the rule pages live (named in SARIF help texts and JSON "doc"); docs/rules/<id>.md in the source tree.
std::string rule_doc_path(std::string_view id);  ///< "docs/rules/<id>.md"

/// XML text and attribute escaping: & < > " ' and control characters other than tab/newline.
std::string xml_escape(std::string_view s);
/// A relative path or file name as a URI reference (percent-encoding); absolute paths become file:// URIs.
std::string path_to_uri(std::string_view path);

/// Compiler style, one line per finding: "a.json:14: error: message [rule-id]", an indented
/// "fix:" line under it, and a summary line. Unreadable specs are not listed (they go to stderr).
std::string check_text(std::span<const rules::SpecOutcome> outcomes, const Style& style);
/// The JSON envelope with one entry per spec and a summary.
util::Json check_json(std::span<const rules::SpecOutcome> outcomes, std::string_view fail_on);
/// JUnit XML: a testsuite per spec, a testcase per spec and rule, a failure per rule that fired;
/// an unreadable spec is a testsuite with one errored testcase.
/// A finding is a <failure> when it fails the run (errors; warnings too with fail_on "warning"),
/// as the exit code does; the others pass, their text in <system-out>.
std::string check_junit(std::span<const rules::SpecOutcome> outcomes, const std::string& fail_on = "error");
/// SARIF 2.1.0: one run, the check rules as reportingDescriptors, a result per finding with its
/// physical location; unreadable specs as tool execution notifications. A result's level is
/// "error" when it fails the run (errors; warnings too with fail_on "warning"), as the exit code
/// does; else its severity's ("warning", "note"), which code-scanning gates do not fail on.
util::Json check_sarif(std::span<const rules::SpecOutcome> outcomes, std::span<const rules::Rule* const> rules,
                       const std::string& fail_on = "error");

}  // namespace gpuadvisor::report
