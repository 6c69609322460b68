#include "gpuadvisor/catalog/recipe.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/text.h"

namespace gpuadvisor::catalog {
namespace {

std::optional<std::string> one_of(const util::Fields& f, const std::string& key,
                                  const std::vector<std::string>& allowed) {
  auto v = f.opt_str(key);
  if (v && std::find(allowed.begin(), allowed.end(), *v) == allowed.end())
    f.fail(key, fmt::format("expected one of {}, got {}", util::join(allowed, ", "), util::quote(*v)));
  return v;
}

RecipeDefaults parse_defaults(const util::Fields& f) {
  static const std::vector<std::string> known = {
      "master_weights", "gradient_dtype",     "optimizer",    "optimizer_in_backward",
      "checkpointing",  "activation_offload", "chunked_loss", "packed",
      "zero",           "sharding",           "offload"};
  for (auto& [key, val] : f.object().items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      f.fail(key, "unknown field" + util::did_you_mean(key, known));
  RecipeDefaults d;
  d.master_weights = f.opt_bool("master_weights");
  d.gradient_dtype = one_of(f, "gradient_dtype", {"bf16", "fp16", "fp32"});
  d.optimizer = f.opt_str("optimizer");
  d.optimizer_in_backward = f.opt_bool("optimizer_in_backward");
  d.checkpointing = f.opt_enumerated("checkpointing", kCheckpointingNames);
  d.activation_offload = f.opt_bool("activation_offload");
  d.chunked_loss = f.opt_bool("chunked_loss");
  d.packed = f.opt_bool("packed");
  if (auto z = f.opt_integer("zero", 0, 3)) d.zero = static_cast<int>(*z);
  d.sharding = one_of(f, "sharding", {"deepspeed", "fsdp"});
  d.offload = f.opt_enumerated("offload", kOffloadNames);
  return d;
}

}  // namespace

std::vector<Recipe> parse_recipes(const util::JsonDoc& doc) {
  util::Fields top(doc, doc.root(), "", "");
  const auto& arr = top.raw("recipes");
  if (!arr.is_array()) top.fail("recipes", "expected an array of recipes, got " + util::json_snippet(arr));
  std::vector<Recipe> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string p = "/recipes/" + std::to_string(i);
    util::Fields f(doc, arr[i], p, "");
    Recipe r;
    r.id = f.str("id");
    r.name = f.str("name");
    r.full = parse_defaults(util::Fields(doc, f.raw("full"), f.pointer("full"), ""));
    r.adapter = parse_defaults(util::Fields(doc, f.raw("adapter"), f.pointer("adapter"), ""));
    r.sources = read_sources(f);
    if (r.sources.empty()) f.fail("sources", "a recipe needs at least one source");
    r.as_of = f.str("as_of");
    if (!months_of(r.as_of)) f.fail("as_of", "expected a date like 2026-04, got " + util::quote(r.as_of));
    out.push_back(std::move(r));
  }
  return out;
}

const std::vector<Recipe>& recipes() {
  // A small file, parsed on first use (only workloads that name a recipe need it).
  static const std::vector<Recipe> all = [] {
    auto doc = embedded::doc("recipes.json");
    try {
      return parse_recipes(doc);
    } catch (const Error& e) {
      throw Error(e.what(), Exit::internal);
    }
  }();
  return all;
}

const Recipe* find_recipe(const std::string& id) {
  for (const auto& r : recipes())
    if (r.id == id) return &r;
  return nullptr;
}

}  // namespace gpuadvisor::catalog
