// GGUF header (--model-file X.gguf): an input is a whole .gguf file.
#include <cstddef>
#include <cstdint>

#include "fuzz_tempfile.h"
#include "fuzz_weights.h"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::weights_file(fuzz::write_temp("fuzz.gguf", data, size));
  return 0;
}
