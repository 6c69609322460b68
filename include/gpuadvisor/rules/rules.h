#pragma once
/// The rules engine: rules are data (data/rules.json, user files with --rules), each reading one
/// metric that the engine computes per candidate, comparing it with a threshold, and yielding an
/// outcome with a message. Constraints reject, advice warns (and may lower the score).
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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

/// The metrics recommend computes for every candidate, in the order of known_metrics(). A
/// recommend rule's metric is resolved to one of these when the rule is loaded, and a candidate
/// keeps their values in a fixed array: reading one costs no string comparison.
enum class Metric : std::uint8_t {
  memory_headroom_fraction,
  memory_need_bytes,
  memory_capacity_bytes,
  total_price_usd,
  price_known,
  used_price,
  total_tdp_w,
  min_total_power_w,
  precision_supported,
  segment_allowed,
  pcie_only_multi_gpu_training,
  geforce_in_datacenter,
  vendor_nvidia,
  gpus,
  throughput,
  time_s,
  flops_per_usd,
  bandwidth_gbs,
  rent_price_usd,
  host_fits,
  power_known,
  serve_tokens_per_user_s,
  serve_ttft_s
};
inline constexpr std::size_t kMetricCount = 23;
std::string_view name(Metric m);
std::optional<Metric> metric_from(std::string_view name);

struct Rule {
  std::string id;
  Kind kind = Kind::constraint;
  std::string scope = "recommend";  ///< recommend or check
  std::string metric;
  std::optional<Metric> metric_id;  ///< the metric resolved, for recommend rules
  std::string op;                   ///< <=, >=, <, >, ==, !=
  Value threshold;                  ///< fixed threshold, or
  std::string threshold_from;       ///< the name of an option (budget, power_limit) that gives it
  std::string when;                 ///< the rule applies only when this option is set
  double weight = 0;                ///< advice: the share of score lost when it fires
  Severity severity = Severity::error;
  std::string message;  ///< template with {metric} placeholders
  std::string fix;      ///< how to fix it (check rules)
  std::string rationale;
  std::vector<catalog::Source> sources;
  std::string as_of;
  std::string origin;  ///< file:line
  util::Json raw;      ///< the record as written (policy files overlay it)

  bool operator==(const Rule&) const = default;
};

/// How a number is shown in messages; the text is made only when a message reads it.
enum class Shown : std::uint8_t { value, bytes, money, percent, watts, count, duration };

/// A number as `how` shows it: "24.00 GiB", "$1,599", "83%", "450 W", "4", "3.2 days".
std::string show(double x, Shown how);

/// What the engine computes for a candidate (or a check subject), by metric name, with a display
/// form for messages. The known metrics (Metric) sit in a fixed array; other names (display-only
/// values, check's metrics, options) in a short list.
class Metrics {
 public:
  /// A value with its display text ("" shows the value itself).
  void set(std::string_view key, Value v, std::string shown = "");
  /// A value shown as `how` (24 GB, $1,599, 83%, 450 W): formatted only when a message reads it.
  void set(std::string_view key, Value v, Shown how);
  void set(Metric key, Value v, Shown how = Shown::value);
  const Value& get(std::string_view key) const;
  const Value& get(Metric key) const { return known_[static_cast<std::size_t>(key)].value; }
  /// The text a message shows for `key`: its display text, else its value formatted; nullopt when
  /// it is not set (and `texts` does not know it either).
  std::optional<std::string> display(std::string_view key) const;
  /// Texts made on demand, for keys nothing set: messages read a few, most candidates none.
  /// Whoever sets it keeps what it refers to alive while messages are rendered.
  std::function<std::optional<std::string>(std::string_view key)> texts;

 private:
  struct Slot {
    Value value;
    Shown how = Shown::value;
    std::string shown;
    bool set = false;
  };
  struct Named : Slot {
    std::string key;
  };
  Slot* find(std::string_view key);
  const Slot* find(std::string_view key) const;
  Slot& slot(std::string_view key);
  std::array<Slot, kMetricCount> known_;
  std::vector<Named> named_;
};

/// Metrics rules may read, with what they mean (docs/rules.md lists them).
struct MetricInfo {
  std::string_view name;
  std::string_view description;
};
std::span<const MetricInfo> known_metrics();

struct Outcome {
  const Rule* rule = nullptr;
  Value value;             ///< the rule's metric for the subject (unknown: monostate)
  bool applicable = true;  ///< false when its option is not set or its metric is unknown
  bool passed = true;
  std::string message;  ///< rendered when it did not pass
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

/// The snapshot form of rules (as catalog/snapshot.h for the catalog's records).
std::string encode(const std::vector<Rule>& rules);
/// Throws an internal Error when the bytes are not what encode() wrote.
void decode(std::string_view bytes, std::vector<Rule>& rules);

/// Evaluates a rule against a candidate's metrics; `options` give thresholds by name. Without
/// `render` a failed rule's message is left empty (recommend renders those it shows).
Outcome evaluate(const Rule& rule, const Metrics& m, const Metrics& options, bool render = true);
/// Fills {placeholders} from the metrics' display forms (then values); unknown ones stay as is.
std::string render(const std::string& templ, const Metrics& m, const Metrics& options);

}  // namespace gpuadvisor::rules
