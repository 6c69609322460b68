// Kernel logs (diagnose --log FILE): scan_xid_log against the embedded Xid table; the error-text
// matcher (diagnose TEXT) gets the same input.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/rules/xid_log.h"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::as_string(data, size);
  fuzz::guarded([&] {
    auto scan = rules::scan_xid_log(text, "fuzz.log", catalog::XidTable::embedded());
    fuzz::check_result_message(scan);
    if (!scan) return;
    int total = 0;
    for (const auto& g : scan->groups) {
      if (g.count < 1 || g.first_line < 1 || g.first_line > g.last_line) fuzz::finding("bad Xid group");
      total += g.count;
    }
    if (static_cast<std::size_t>(total) != scan->events) fuzz::finding("Xid groups do not add up to the events");
    if (scan->critical > scan->events) fuzz::finding("more critical events than events");
  });
  fuzz::guarded([&] { (void)catalog::ErrorTable::embedded().match(text); });
  return 0;
}
