#pragma once
/// `check`: lint a procurement spec (docs/procurement-check.md). A spec names the GPUs to buy, the
/// server they go into, the software they will run, the deployment, the budget and the workloads.
/// The checks are rules of scope "check" in data/rules.json: each reads one metric computed here
/// for a subject of the spec (the spec as a whole, one GPU line, one workload on one GPU line, one
/// software version), compares it with its threshold and, when it fails, yields a finding at the
/// line of the offending key. Pure: a parsed document in, findings out; no printing.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/catalog/prices.h"
#include "gpuadvisor/rules/rules.h"
#include "gpuadvisor/util/json.h"

namespace gpuadvisor::rules {

/// The metrics check rules may read (docs/procurement-check.md lists them).
std::span<const MetricInfo> check_metrics();

/// A rule's threshold as written: "0.9", "2", "true".
std::string threshold_text(const Rule& r);

/// Rejects a rules document whose check rules read a metric that `check` does not compute:
/// throws Error (exit 2) naming file:line of the metric field, with the closest metric.
void validate_check_rules(const util::JsonDoc& doc);
/// The same over a merged set (the embedded rules), naming each rule's origin.
void validate_check_rules(const RuleSet& rules);

/// The check rules of a set, in order, less those whose id matches a --disable glob.
std::vector<const Rule*> enabled_check_rules(const RuleSet& rules, std::span<const std::string> disable_globs);

/// Glob over rule ids, as clang-tidy has it: `*` any run of characters, `?` one character.
bool glob_match(std::string_view pattern, std::string_view text);
/// A list of globs ("power-*,-power-psu-headroom"; repeatable options are joined): the last
/// matching glob decides, a leading '-' deselects. False when none matches.
bool glob_list_match(std::span<const std::string> globs, std::string_view id);

/// The data a check reads.
struct CheckData {
  const catalog::Catalog& catalog;
  const catalog::ModelSet& models;
  const catalog::Efficiency& efficiency;
  const catalog::Prices& prices;
  const catalog::CompatTable& compat;
};

struct Finding {
  const Rule* rule = nullptr;
  Severity severity = Severity::error;  ///< the rule's, or error when promoted by --warnings-as-errors
  bool promoted = false;                ///< a warning made an error by --warnings-as-errors
  std::string message;                  ///< rendered, without the trailing [rule-id]
  std::string fix;                      ///< rendered
  std::string pointer;                  ///< JSON pointer of the offending key
  int line = 0;                         ///< its line (1-based); 0 when unknown
};

/// What one readable spec yielded.
struct SpecResult {
  std::string origin;                       ///< the file as named (JsonDoc::origin)
  std::string name;                         ///< the spec's `name`
  std::vector<Finding> findings;            ///< by line, then rule order
  std::vector<const Rule*> rules;           ///< the rules evaluated (for a test case per rule)
  std::vector<const Rule*> not_applicable;  ///< of those, the ones the spec gives nothing to read
  std::vector<std::string> assumptions;     ///< defaults taken (platform power, workload GPU counts)
};

/// Checks one spec document against `rules`. Throws Error (exit 2) naming file:line and field when
/// the spec is not a valid spec (wrong type, unknown field, unknown model, malformed version).
SpecResult check_spec(const util::JsonDoc& doc, const CheckData& data, std::span<const Rule* const> rules);

/// Promotes warnings whose rule id matches the globs to errors.
void apply_warnings_as_errors(SpecResult& r, std::span<const std::string> globs);

/// One spec named on the command line: checked, or why it could not be read.
struct SpecOutcome {
  std::string file;                  ///< as named ("<stdin>" for -)
  std::optional<SpecResult> result;  ///< absent when unreadable
  std::string error;                 ///< one line, "file:line: ..." when unreadable
};

/// Counts over a run.
struct CheckSummary {
  std::size_t specs = 0, unreadable = 0, errors = 0, warnings = 0, notes = 0;
};
CheckSummary summarize(std::span<const SpecOutcome> outcomes);

}  // namespace gpuadvisor::rules
