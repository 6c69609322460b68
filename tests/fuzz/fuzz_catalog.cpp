// Catalog JSON (--catalog FILE): JsonDoc::parse -> Catalog::parse -> catalog::validate, then what
// `catalog list/show/export` do with the records: resolve, both JSON forms, and the export
// round trip (an accepted catalog, exported, must be accepted again and export the same).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/validate.h"
#include "gpuadvisor/report/output.h"

using namespace gpuadvisor;

namespace {

util::Json export_doc(const std::vector<catalog::Gpu>& gpus) {
  util::Json j;
  j["schema_version"] = 1;
  util::Json arr = util::Json::array();
  for (const auto& g : gpus) arr.push_back(catalog::to_data_json(g));
  j["gpus"] = arr;
  return j;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::guarded([&] {
    auto doc = util::JsonDoc::parse(fuzz::as_string(data, size), "fuzz.json");
    fuzz::check_result_message(doc);
    if (!doc) return;
    auto gpus = catalog::Catalog::parse(*doc);
    auto findings = catalog::validate(gpus, "2026-11-29");
    for (const auto& f : findings)
      if (f.message.empty()) fuzz::finding("validation finding without a message: " + f.rule);

    catalog::Catalog cat;
    cat.merge(gpus);
    for (const auto& g : cat.gpus()) {
      fuzz::check_number(g.memory_bytes, "memory_bytes");
      (void)cat.resolve(g.id);
      (void)cat.resolve(g.name);
      (void)report::dump(catalog::to_output_json(g));
    }
    if (!cat.gpus().empty()) (void)cat.resolve("4090");

    // Export round trip.
    std::string first = report::dump(export_doc(cat.gpus()));
    auto again = util::JsonDoc::parse(first, "export.json");
    if (!again) fuzz::finding("exported catalog does not parse: " + again.error());
    std::vector<catalog::Gpu> back;
    try {
      back = catalog::Catalog::parse(*again);
    } catch (const Error& e) {
      fuzz::finding(std::string("exported catalog is rejected: ") + e.what());
    }
    std::string second = report::dump(export_doc(back));
    if (first != second) fuzz::finding("catalog export does not round-trip:\n" + first + "\n---\n" + second);
  });
  return 0;
}
