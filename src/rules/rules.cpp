#include "gpuadvisor/rules/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::rules {
namespace {

constexpr MetricInfo kMetrics[] = {
    {"memory_headroom_fraction", "share of each GPU's memory left after the job (negative: short)"},
    {"memory_need_bytes", "memory the job needs per GPU"},
    {"memory_capacity_bytes", "memory of one GPU"},
    {"total_price_usd",
     "count x unit price (street, used with --used, else launch MSRP) plus the host of a multi-GPU plan, or the whole "
     "system's price"},
    {"price_known", "whether any price is known for the GPU"},
    {"used_price", "whether the plan is priced at used-market prices"},
    {"total_tdp_w", "count x TDP, plus the host's own power where data/platforms.json gives it"},
    {"min_total_power_w",
     "count x the lowest configurable power (TDP when no range is published), plus the host's own power"},
    {"precision_supported", "whether the GPU has a dense peak for the plan's compute precision"},
    {"segment_allowed", "whether the GPU's segment suits the scenario"},
    {"pcie_only_multi_gpu_training", "training on more than one GPU without NVLink/NVSwitch/Infinity Fabric"},
    {"geforce_in_datacenter", "a GeForce/Titan card in the datacenter scenario"},
    {"vendor_nvidia", "whether the GPU is NVIDIA's (CUDA)"},
    {"gpus", "GPU count"},
    {"throughput", "tokens/s (decode per sequence for inference, training tokens/s) or images/s"},
    {"time_s", "time to finish --tokens"},
    {"flops_per_usd", "dense peak FLOP/s at the plan's precision per dollar"},
    {"bandwidth_gbs", "memory bandwidth of one GPU, GB/s"},
    {"rent_price_usd", "cloud plans: the hourly rate, or the whole job with --tokens"},
    {"host_fits", "whether a host platform takes the GPUs (slots, form factor, power; estimate/platform.h)"},
    {"power_known", "whether the GPU's power (tdp_w) is published"},
    {"serve_tokens_per_user_s", "--serve: the decode rate each user sees, prefill interference included"},
    {"serve_ttft_s", "--serve: mean time to first token (queueing for prefill, prefill, one decode step)"},
};
static_assert(std::size(kMetrics) == kMetricCount, "one Metric per known metric, in order");

Kind kind_from(const util::Fields& f, const std::string& s) {
  if (s == "constraint") return Kind::constraint;
  if (s == "advice") return Kind::advice;
  f.fail("kind", fmt::format("expected constraint or advice, got {}", util::quote(s)));
}

Severity severity_from(const util::Fields& f, const std::string& s) {
  if (s == "error") return Severity::error;
  if (s == "warning") return Severity::warning;
  if (s == "info") return Severity::info;
  f.fail("severity", fmt::format("expected error, warning or info, got {}", util::quote(s)));
}

Value value_from(const util::Json& j) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  return std::monostate{};
}

}  // namespace

// Every member, in order (found by argument-dependent look-up, so not in the unnamed namespace).
template <class Ar, util::serial::Of<Rule> T>
void fields(Ar& ar, T& r) {
  ar(r.id, r.kind, r.scope, r.metric, r.metric_id, r.op, r.threshold, r.threshold_from, r.when, r.weight, r.severity,
     r.message, r.fix, r.rationale, r.sources, r.as_of, r.origin, r.raw);
}

std::string encode(const std::vector<Rule>& rules) { return util::serial::encode(rules); }
void decode(std::string_view bytes, std::vector<Rule>& rules) {
  rules = util::serial::decode<std::vector<Rule>>(bytes);
}

std::string_view name(Kind k) { return k == Kind::constraint ? "constraint" : "advice"; }
std::string_view name(Severity s) {
  return s == Severity::error ? "error" : s == Severity::warning ? "warning" : "info";
}

std::string to_string(const Value& v) {
  if (std::holds_alternative<double>(v)) return util::format_number(std::get<double>(v));
  if (std::holds_alternative<bool>(v)) return std::get<bool>(v) ? "true" : "false";
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  return "unknown";
}

util::Json to_json(const Value& v) {
  if (std::holds_alternative<double>(v)) return std::get<double>(v);
  if (std::holds_alternative<bool>(v)) return std::get<bool>(v);
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  return nullptr;
}

std::string_view name(Metric m) { return kMetrics[static_cast<std::size_t>(m)].name; }

std::optional<Metric> metric_from(std::string_view n) {
  for (std::size_t i = 0; i < kMetricCount; ++i)
    if (kMetrics[i].name == n) return static_cast<Metric>(i);
  return std::nullopt;
}

const Metrics::Slot* Metrics::find(std::string_view key) const {
  // A known metric is never among the named ones (slot() puts it in its place), so the order of
  // the two look-ups does not matter; the short list goes first.
  for (const auto& n : named_)
    if (n.key == key) return &n;
  if (auto id = metric_from(key)) return &known_[static_cast<std::size_t>(*id)];
  return nullptr;
}

Metrics::Slot* Metrics::find(std::string_view key) {
  return const_cast<Slot*>(static_cast<const Metrics&>(*this).find(key));
}

Metrics::Slot& Metrics::slot(std::string_view key) {
  if (auto* s = find(key)) return *s;
  if (named_.empty()) named_.reserve(32);  // a candidate's display-only values, without regrowing
  named_.emplace_back();
  named_.back().key = std::string(key);
  return named_.back();
}

void Metrics::set(std::string_view key, Value v, std::string shown) {
  Slot& s = slot(key);
  s.value = std::move(v);
  // As before: a display text, once given, stays until another replaces it.
  if (!shown.empty()) s.shown = std::move(shown);
  s.set = true;
}

void Metrics::set(std::string_view key, Value v, Shown how) {
  Slot& s = slot(key);
  s.value = std::move(v);
  s.how = how;
  s.shown.clear();
  s.set = true;
}

void Metrics::set(Metric key, Value v, Shown how) {
  Slot& s = known_[static_cast<std::size_t>(key)];
  s.value = std::move(v);
  s.how = how;
  s.shown.clear();
  s.set = true;
}

const Value& Metrics::get(std::string_view key) const {
  static const Value none;
  const Slot* s = find(key);
  return s ? s->value : none;
}

std::optional<std::string> Metrics::display(std::string_view key) const {
  const Slot* s = find(key);
  if (!s || !s->set) return texts ? texts(key) : std::nullopt;
  if (!s->shown.empty()) return s->shown;
  const Value& v = s->value;
  if (!std::holds_alternative<double>(v)) return to_string(v);
  return show(std::get<double>(v), s->how);
}

std::string show(double x, Shown how) {
  switch (how) {
    case Shown::bytes:
      return util::format_bytes(x);
    case Shown::money:
      return util::format_money(x);
    case Shown::percent:
      return fmt::format("{:.0f}%", x * 100);
    case Shown::watts:
      return util::format_number(x) + " W";
    case Shown::count:
      return std::to_string(static_cast<long long>(x));
    case Shown::duration:
      return util::format_duration(x);
    case Shown::value:
      break;
  }
  return util::format_number(x);
}

std::span<const MetricInfo> known_metrics() { return kMetrics; }

std::vector<Rule> RuleSet::parse(const util::JsonDoc& doc, const RuleSet* base) {
  util::Fields top(doc, doc.root(), "", "");
  const auto& arr = top.raw("rules");
  if (!arr.is_array()) top.fail("rules", "expected an array of rules, got " + util::json_snippet(arr));
  std::vector<std::string> metric_names;
  for (const auto& m : kMetrics) metric_names.emplace_back(m.name);
  std::vector<Rule> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string ptr = "/rules/" + std::to_string(i);
    std::string label;
    if (arr[i].is_object() && arr[i].contains("id") && arr[i]["id"].is_string())
      label = "rule '" + arr[i]["id"].get<std::string>() + "'";
    // A partial record overrides the fields it names of the base rule with the same id.
    util::Json record = arr[i];
    if (base && record.is_object() && record.contains("id") && record["id"].is_string())
      if (const Rule* b = base->find(record["id"].get<std::string>()); b && b->raw.is_object()) {
        util::Json merged = b->raw;
        for (auto& [k, v] : record.items()) merged[k] = v;
        if (record.contains("threshold_from") && !record.contains("threshold")) merged.erase("threshold");
        if (record.contains("threshold") && !record.contains("threshold_from")) merged.erase("threshold_from");
        record = std::move(merged);
      }
    util::Fields f(doc, record, ptr, label);
    static const std::vector<std::string> fields = {
        "id",     "kind",     "scope",   "metric", "op",        "threshold", "threshold_from", "when",
        "weight", "severity", "message", "fix",    "rationale", "sources",   "as_of",          "notes"};
    if (record.is_object())
      for (auto& [k, v] : record.items())
        if (std::find(fields.begin(), fields.end(), k) == fields.end())
          f.fail(k, "unknown field" + util::did_you_mean(k, fields));
    Rule r;
    r.id = f.str("id");
    for (char c : r.id)
      if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
        f.fail("id", fmt::format("expected a kebab-case id, got {}", util::quote(r.id)));
    r.kind = kind_from(f, f.opt_str("kind").value_or("constraint"));
    r.scope = f.opt_str("scope").value_or("recommend");
    if (r.scope != "recommend" && r.scope != "check")
      f.fail("scope", fmt::format("expected recommend or check, got {}", util::quote(r.scope)));
    r.metric = f.str("metric");
    if (r.scope == "recommend") {
      r.metric_id = metric_from(r.metric);
      if (!r.metric_id)
        f.fail("metric",
               fmt::format("unknown metric {}{}", util::quote(r.metric), util::did_you_mean(r.metric, metric_names)));
    }
    r.op = f.opt_str("op").value_or("==");
    static const std::vector<std::string> ops = {"<=", ">=", "<", ">", "==", "!="};
    if (std::find(ops.begin(), ops.end(), r.op) == ops.end())
      f.fail("op", fmt::format("expected one of <=, >=, <, >, ==, !=, got {}", util::quote(r.op)));
    if (f.has("threshold")) r.threshold = value_from(f.raw("threshold"));
    r.threshold_from = f.opt_str("threshold_from").value_or("");
    r.when = f.opt_str("when").value_or("");
    if (std::holds_alternative<std::monostate>(r.threshold) && r.threshold_from.empty())
      f.fail("threshold", "a rule needs a threshold or threshold_from");
    r.weight = f.opt_num("weight").value_or(0);
    if (r.weight < 0 || r.weight > 1)
      f.fail("weight", fmt::format("expected a share of the score from 0 to 1, got {}", r.weight));
    r.severity = severity_from(f, f.opt_str("severity").value_or(r.kind == Kind::constraint ? "error" : "warning"));
    r.message = f.str("message");
    r.fix = f.opt_str("fix").value_or("");
    r.rationale = f.opt_str("rationale").value_or("");
    r.sources = catalog::read_sources(f);
    r.as_of = f.opt_str("as_of").value_or("");
    r.origin = doc.where(ptr);
    r.raw = record;
    out.push_back(std::move(r));
  }
  return out;
}

void RuleSet::merge(std::vector<Rule> rules) {
  for (auto& r : rules) {
    auto it = std::find_if(rules_.begin(), rules_.end(), [&](const Rule& x) { return x.id == r.id; });
    if (it != rules_.end())
      *it = std::move(r);
    else
      rules_.push_back(std::move(r));
  }
}

RuleSet RuleSet::load(const std::vector<std::string>& user_files) {
  RuleSet s;
  if (auto snap = embedded::snapshot("rules.json"))
    decode(*snap, s.rules_);
  else
    s.merge(parse(embedded::doc("rules.json")));
  for (const auto& f : user_files) {
    auto d = util::JsonDoc::load(f);
    if (!d) throw Error(d.error());
    s.merge(parse(*d, &s));
  }
  return s;
}

const Rule* RuleSet::find(const std::string& id) const {
  for (const auto& r : rules_)
    if (r.id == id) return &r;
  return nullptr;
}

std::string render(const std::string& templ, const Metrics& m, const Metrics& options) {
  std::string out;
  out.reserve(templ.size() + 64);
  for (std::size_t i = 0; i < templ.size(); ++i) {
    if (templ[i] == '{') {
      auto end = templ.find('}', i);
      if (end != std::string::npos) {
        const std::string_view key(templ.data() + i + 1, end - i - 1);
        auto shown = m.display(key);
        if (!shown) shown = options.display(key);
        if (shown) {
          out += *shown;
          i = end;
          continue;
        }
      }
    }
    out += templ[i];
  }
  return out;
}

Outcome evaluate(const Rule& rule, const Metrics& m, const Metrics& options, bool render) {
  Outcome o;
  o.rule = &rule;
  o.value = rule.metric_id ? m.get(*rule.metric_id) : m.get(rule.metric);
  if (!rule.when.empty() && std::holds_alternative<std::monostate>(options.get(rule.when))) {
    o.applicable = false;
    return o;
  }
  Value threshold = rule.threshold;
  if (!rule.threshold_from.empty()) {
    // The option's value where it is given; else the rule's own threshold, if it has one.
    if (const Value& from = options.get(rule.threshold_from); !std::holds_alternative<std::monostate>(from))
      threshold = from;
    if (std::holds_alternative<std::monostate>(threshold)) {
      o.applicable = false;
      return o;
    }
  }
  const Value& v = o.value;
  if (std::holds_alternative<std::monostate>(v)) {
    o.applicable = false;
    return o;
  }
  int cmp = 0;
  bool comparable = true;
  if (std::holds_alternative<double>(v) && std::holds_alternative<double>(threshold)) {
    double a = std::get<double>(v), b = std::get<double>(threshold);
    cmp = a < b ? -1 : a > b ? 1 : 0;
  } else if (v.index() == threshold.index()) {
    cmp = v == threshold ? 0 : 1;
    // Only == and != compare values without an order (the parser admits no other op starting
    // with = or !).
    if (rule.op[0] != '=' && rule.op[0] != '!') comparable = false;
  } else {
    comparable = false;
  }
  if (!comparable) {
    o.applicable = false;
    return o;
  }
  // The parser admits <=, >=, <, >, == and != alone.
  const std::string& op = rule.op;
  const bool or_equal = op.size() == 2 && op[1] == '=';
  switch (op[0]) {
    case '<':
      o.passed = cmp < 0 || (or_equal && cmp == 0);
      break;
    case '>':
      o.passed = cmp > 0 || (or_equal && cmp == 0);
      break;
    case '=':
      o.passed = cmp == 0;
      break;
    default:
      o.passed = cmp != 0;
      break;
  }
  if (!o.passed && render) o.message = rules::render(rule.message, m, options);
  return o;
}

}  // namespace gpuadvisor::rules
