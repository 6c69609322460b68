#pragma once
// The embedded data, loaded once per test binary, for tests that call the library directly.
#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/catalog/prices.h"
#include "gpuadvisor/rules/rules.h"

namespace gpuadvisor::test {

inline const catalog::ModelSet& models() {
  static const auto m = catalog::ModelSet::load({});
  return m;
}
inline const catalog::Catalog& gpus() {
  static const auto c = catalog::Catalog::load({});
  return c;
}
inline const catalog::Prices& prices() {
  static const auto p = catalog::Prices::load({});
  return p;
}
inline const rules::RuleSet& rule_set() {
  static const auto r = rules::RuleSet::load({});
  return r;
}
inline const catalog::Efficiency& eff() { return catalog::Efficiency::embedded(); }

}  // namespace gpuadvisor::test
