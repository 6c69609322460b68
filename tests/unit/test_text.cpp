#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "gpuadvisor/util/text.h"

using namespace gpuadvisor;

TEST_CASE("util::squashes_to is squash(s) == squashed", "[text]") {
  const char* samples[] = {"",           "-",         "H100 SXM",     "h100-sxm",
                           "h100sxm",    "H100",      "Llama 3.1 8B", "llama-3.1-8b",
                           "llama3.18b", "RTX 4090 ", "rtx-4090-d",   "\xc3\xa9t\xc3\xa9",
                           "A100 80GB",  "a10080gb"};
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

TEST_CASE("util::edit_distance and did_you_mean: small answers, bounded work on long words", "[text]") {
  CHECK(util::edit_distance("jsno", "json") == 1);
  CHECK(util::edit_distance("kitten", "sitting") == 3);
  CHECK(util::edit_distance("", "abc") == 3);
  CHECK(util::edit_distance("abc", "") == 3);
  CHECK(util::edit_distance("ca", "abc") == 3);  // optimal string alignment, not Damerau
  CHECK(util::edit_distance("batch_size", "batch") == 5);
  const std::vector<std::string> names = {"batch", "seq_len", "gpus", "model"};
  CHECK(util::did_you_mean("bacth", names) == ", did you mean 'batch'?");
  CHECK(util::did_you_mean("MODEL", names) == ", did you mean 'model'?");
  CHECK(util::did_you_mean("zzzzzz", names).empty());
  // A megabyte-long unknown word: no candidate is within 3 characters of its length, so none is
  // compared (a full table per candidate took 2.5 s and 175 MB).
  const std::string huge(1 << 20, 'x');
  const auto start = std::chrono::steady_clock::now();
  CHECK(util::did_you_mean(huge, names).empty());
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 0.1);
}
