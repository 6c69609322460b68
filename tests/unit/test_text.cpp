#include <catch2/catch.hpp>

#include <string>

#include "gpuadvisor/util/text.h"

using namespace gpuadvisor;

TEST_CASE("util::squashes_to is squash(s) == squashed", "[text]") {
  const char* samples[] = {"", "-", "H100 SXM", "h100-sxm", "h100sxm", "H100", "Llama 3.1 8B", "llama-3.1-8b",
                           "llama3.18b", "RTX 4090 ", "rtx-4090-d", "\xc3\xa9t\xc3\xa9", "A100 80GB", "a10080gb"};
  for (const char* s : samples)
    for (const char* q : samples) {
      const std::string squashed = util::squash(q);
      INFO(s << " vs " << q);
      CHECK(util::squashes_to(s, squashed) == (util::squash(s) == squashed));
    }
  CHECK(util::squashes_to("Llama 3.1 8B", "llama318b"));
  CHECK_FALSE(util::squashes_to("Llama 3.1 8B", "llama318"));
  CHECK_FALSE(util::squashes_to("Llama 3.1", "llama318b"));
}
