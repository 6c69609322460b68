#pragma once
/// The rules engine: rules are data (data/rules.json, user files with --rules), each reading one
/// metric that the engine computes per candidate, comparing it with a threshold, and yielding an
/// outcome with a message. Constraints reject, advice warns (and may lower the score).
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "gpuadvisor/catalog/source.h"
#include "gpuadvisor/util/json.h"

namespace gpuadvisor::rules {

enum class Kind { constraint, advice };
enum class Severity { error, warning, info };
std::string_view name(Kind k);
std::string_view name(Severity s);

/// A metric value: unknown, a number, a flag or a word.
using Value = std::variant<std::monostate, double, bool, std::string>;
std::string to_string(const Value& v);
util::Json to_json(const Value& v);

struct Rule {
  std::string id;
  Kind kind = Kind::constraint;
  std::string scope = "recommend";  ///< recommend or check
  std::string metric;
  std::string op;                    ///< <=, >=, <, >, ==, !=
  Value threshold;                   ///< fixed threshold, or
  std::string threshold_from;        ///< the name of an option (budget, power_limit) that gives it
  std::string when;                  ///< the rule applies only when this option is set
  double weight = 0;                 ///< advice: the share of score lost when it fires
  Severity severity = Severity::error;
  std::string message;               ///< template with {metric} placeholders
  std::string fix;                   ///< how to fix it (check rules)
  std::string rationale;
  std::vector<catalog::Source> sources;
  std::string as_of;
  std::string origin;  ///< file:line
  util::Json raw;      ///< the record as written (policy files overlay it)
};

/// What the engine computes for a candidate, by metric name, with a display form for messages.
struct Metrics {
  std::map<std::string, Value> values;
  std::map<std::string, std::string> display;
  void set(const std::string& key, Value v, std::string shown = "");
  const Value& get(const std::string& key) const;
};

/// Metrics rules may read, with what they mean (docs/rules.md lists them).
struct MetricInfo {
  std::string_view name;
  std::string_view description;
};
std::span<const MetricInfo> known_metrics();

struct Outcome {
  const Rule* rule = nullptr;
  bool applicable = true;  ///< false when its option is not set or its metric is unknown
  bool passed = true;
  std::string message;     ///< rendered when it did not pass
};

class RuleSet {
 public:
  /// The embedded data/rules.json plus user files (rules replaced by id, thresholds included).
  static RuleSet load(const std::vector<std::string>& user_files);
  /// Parses one rules document; throws Error naming file, line and field. With `base`, a record
  /// whose id is already there may give only the fields it changes (a policy file:
  /// {"id": "quote-over-street", "threshold": 0.1}); the others are the base rule's.
  static std::vector<Rule> parse(const util::JsonDoc& doc, const RuleSet* base = nullptr);
  void merge(std::vector<Rule> rules);
  const std::vector<Rule>& rules() const { return rules_; }
  const Rule* find(const std::string& id) const;

 private:
  std::vector<Rule> rules_;
};

/// Evaluates a rule against a candidate's metrics; `options` give thresholds by name.
Outcome evaluate(const Rule& rule, const Metrics& m, const Metrics& options);
/// Fills {placeholders} from the metrics' display forms (then values); unknown ones stay as is.
std::string render(const std::string& templ, const Metrics& m, const Metrics& options);

}  // namespace gpuadvisor::rules
