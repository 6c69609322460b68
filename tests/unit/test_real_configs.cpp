// The corpus of real Hugging Face config.json files (tests/fixtures/real/hf/, origins and
// published parameter counts in its SOURCES.json): every one is read, counted within 0.5% of its
// published count, and gives the KV bytes per token worked out from its config.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>

#include "cli_fixture.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/estimate/memory.h"

using namespace gpuadvisor;

TEST_CASE("real HF configs: published parameter counts and KV bytes per token", "[modelfiles][real]") {
  const std::string dir = test::source_path("tests/fixtures/real/hf/");
  auto sources = util::JsonDoc::load(dir + "SOURCES.json");
  REQUIRE(sources);
  std::set<std::string> types;
  int checked = 0;
  for (const auto& [name, rec] : sources->root().items()) {
    INFO(name);
    auto doc = util::JsonDoc::load(dir + name + "/config.json");
    REQUIRE(doc);
    catalog::Model m = catalog::model_from_hf_config(*doc);
    types.insert(doc->root()["model_type"].get<std::string>());
    const double total = catalog::count_params(m);
    // Published as the total, or (where the card gives only that precisely) without embeddings.
    const std::string counted = rec["counted"].get<std::string>();
    const double ours = counted == "non-embedding" ? total - m.embedding_params() : total;
    const double published = rec["published"].get<double>();
    INFO("counted " << ours << " (" << counted << "), published " << published);
    CHECK(std::fabs(ours - published) / published < 0.005);
    CHECK(m.tied_embeddings == rec["tied_embeddings"].get<bool>());
    const int mtp = rec.contains("mtp_layers") ? rec["mtp_layers"].get<int>() : 0;
    bool mtp_stated = false;
    for (const auto& a : m.assumptions)
      mtp_stated = mtp_stated || a.find("multi-token-prediction") != std::string::npos;
    CHECK(mtp_stated == (mtp > 0));
    CHECK(estimate::kv_bytes_per_token(m, "fp16") == rec["kv_bytes_per_token"].get<double>());
    CHECK(m.params == 0);
    ++checked;
  }
  CHECK(checked >= 75);
  CHECK(types.size() >= 40);
}
