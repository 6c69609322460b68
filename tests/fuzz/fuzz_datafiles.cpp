// The other data files a user can pass (--models, --prices, --rules) and the embedded tables'
// parsers (compat, xid, errors, efficiency): the first input byte picks the parser, the rest is
// the JSON document.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/catalog/prices.h"
#include "gpuadvisor/report/output.h"
#include "gpuadvisor/rules/rules.h"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const char kind = static_cast<char>(data[0]);
  fuzz::guarded([&] {
    auto doc = util::JsonDoc::parse(fuzz::as_string(data + 1, size - 1), "fuzz.json");
    fuzz::check_result_message(doc);
    if (!doc) return;
    switch (kind) {
      case 'm': {
        catalog::ModelSet set;
        set.merge(catalog::ModelSet::parse(*doc));
        for (const auto& m : set.models()) {
          fuzz::check_number(m.params, "model params");
          (void)report::dump(catalog::to_output_json(m));
          (void)set.resolve(m.id);
        }
        break;
      }
      case 'p': {
        catalog::Prices p;
        catalog::Prices::parse_into(*doc, p);
        for (const auto& i : p.instances)
          if (i.usd_per_hour) fuzz::check_number(*i.usd_per_hour, "usd_per_hour");
        break;
      }
      case 'r': {
        rules::RuleSet set;
        set.merge(rules::RuleSet::parse(*doc));
        rules::Metrics none;
        for (const auto& r : set.rules()) {
          auto o = rules::evaluate(r, none, none);
          (void)rules::render(r.message, none, none);
          (void)o;
        }
        break;
      }
      case 'c':
        (void)catalog::CompatTable::parse(*doc);
        break;
      case 'x':
        (void)catalog::XidTable::parse(*doc);
        break;
      case 'e': {
        auto t = catalog::ErrorTable::parse(*doc);
        (void)t.match("CUDA error: out of memory");
        break;
      }
      case 'f':
        (void)catalog::Efficiency::parse(*doc);
        break;
      default:
        break;
    }
  });
  return 0;
}
