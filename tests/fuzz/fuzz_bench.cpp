// Benchmark outputs (calibrate FILE...): read_bench_file tells llama-bench markdown and JSON,
// vLLM results and nvidia-smi CSV apart by content. Unknown input is an Error with one line.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "bench_files.h"
#include "fuzz_common.h"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::guarded([&] {
    const auto f = cli::read_bench_file("fuzz.txt", fuzz::as_string(data, size));
    if (f.format.empty()) fuzz::finding("a file read with no format named");
    for (const auto& r : f.runs) {
      if (r.line < 1) fuzz::finding("a run without a line number");
      if (r.skip.empty() && !(r.value > 0 && std::isfinite(r.value))) fuzz::finding("a usable run without a rate");
      if (r.batch < 1) fuzz::finding("a run with no batch");
    }
  });
  return 0;
}
