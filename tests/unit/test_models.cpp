#include <catch2/catch.hpp>
#include <cmath>

#include "cli_fixture.h"
#include "gpuadvisor/catalog/model.h"

using namespace gpuadvisor;
using catalog::ModelSet;

TEST_CASE("catalog::count_params matches the published counts of the presets", "[models]") {
  auto set = ModelSet::load({});
  REQUIRE(set.models().size() >= 30);
  int checked = 0;
  for (const auto& m : set.models()) {
    if (!m.is_transformer()) continue;
    double counted = catalog::count_params(m);
    double rel = std::fabs(counted - m.params) / m.params;
    INFO(m.id << ": counted " << counted << ", published " << m.params);
    // Exact published counts within 0.5%; counts published rounded to whole millions (Falcon
    // "40B", BERT-large "340M") within the rounding.
    bool rounded = std::fmod(m.params, 1e6) == 0;
    CHECK(rel < (rounded ? 0.035 : 0.005));
    ++checked;
  }
  CHECK(checked >= 25);
}
