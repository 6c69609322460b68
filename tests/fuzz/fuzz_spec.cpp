// Procurement specs (check SPEC.json): check_spec with every check rule of the embedded set,
// then --warnings-as-errors and the summary. Built once src/rules/check.cpp exists.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/catalog/prices.h"
#include "gpuadvisor/rules/check.h"
#include "gpuadvisor/rules/rules.h"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto catalog = catalog::Catalog::load({});
  static const auto models = catalog::ModelSet::load({});
  static const auto prices = catalog::Prices::load({});
  static const auto rules = rules::RuleSet::load({});
  static const auto enabled = rules::enabled_check_rules(rules, {});
  const rules::CheckData check_data{catalog, models, catalog::Efficiency::embedded(), prices,
                                    catalog::CompatTable::embedded()};
  fuzz::guarded([&] {
    auto doc = util::JsonDoc::parse(fuzz::as_string(data, size), "spec.json");
    fuzz::check_result_message(doc);
    if (!doc) return;
    auto r = rules::check_spec(*doc, check_data, enabled);
    for (const auto& f : r.findings) {
      if (!f.rule) fuzz::finding("check finding without a rule");
      if (f.message.find('\n') != std::string::npos) fuzz::finding("check finding message spans lines: " + f.message);
    }
    const std::string all[] = {"*"};
    rules::apply_warnings_as_errors(r, all);
    std::vector<rules::SpecOutcome> outcomes;
    outcomes.push_back({"spec.json", r, ""});
    auto s = rules::summarize(outcomes);
    if (s.specs != 1) fuzz::finding("summary does not count the spec");
  });
  return 0;
}
