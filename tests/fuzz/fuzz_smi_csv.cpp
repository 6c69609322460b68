// nvidia-smi CSV (inspect --from FILE): parse_smi_csv, then the checks against the embedded
// catalog and compat tables. Failures are Results with one-line messages.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/rules/inspect.h"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto catalog = catalog::Catalog::load({});
  const auto& compat = catalog::CompatTable::embedded();
  fuzz::guarded([&] {
    auto cap = rules::parse_smi_csv(fuzz::as_string(data, size), "fuzz.csv");
    fuzz::check_result_message(cap);
    if (!cap) return;
    for (const auto& row : cap->rows)
      if (row.line < 1) fuzz::finding("SMI row without a line number");
    auto rep = rules::inspect(*cap, catalog, compat);
    fuzz::check_result_message(rep);
    if (!rep) return;
    std::size_t items = 0;
    for (const auto& c : rep->cards) {
      items += c.items.size();
      for (const auto& i : c.items)
        if (i.check.empty()) fuzz::finding("inspect item without a check id");
    }
    if (rep->passes + rep->warnings + rep->failures != items) fuzz::finding("inspect counts do not add up");
  });
  return 0;
}
