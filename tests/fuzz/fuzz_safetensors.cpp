// safetensors header (--model-file X.safetensors): an input is a whole .safetensors file. An input
// starting with '{' is also tried as model.safetensors.index.json next to two real shards.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "fuzz_tempfile.h"
#include "fuzz_weights.h"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Shards for index inputs, from the fixtures when the source tree is around.
  std::error_code ec;
  std::filesystem::path shards = std::filesystem::path(GPUADVISOR_SOURCE_DIR) / "tests/fixtures/modelfiles/sharded";
  for (const char* f : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"})
    std::filesystem::copy_file(shards / f, fuzz::temp_dir() / f, std::filesystem::copy_options::overwrite_existing, ec);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::weights_file(fuzz::write_temp("fuzz.safetensors", data, size));
  if (size > 0 && data[0] == '{') fuzz::weights_file(fuzz::write_temp("model.safetensors.index.json", data, size));
  return 0;
}
