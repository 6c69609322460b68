#include "gpuadvisor/catalog/efficiency.h"

#include <fmt/format.h>

#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/catalog/snapshot.h"

namespace gpuadvisor::catalog {
namespace {

constexpr std::string_view kFactorNames[kFactorIdCount] = {
    "activation-memory-factor",
    "cuda-context-bytes",
    "allocator-fragmentation",
    "prefill-mfu",
    "mfu-finetune-lora",
    "mfu-train-datacenter-nvlink",
    "mfu-train-pcie",
    "decode-bandwidth-efficiency",
    "decode-bandwidth-efficiency-quantized",
    "decode-bandwidth-efficiency-quantized-gptq-awq",
    "scaling-nvlink",
    "scaling-pcie",
};

[[noreturn]] void fail_missing(std::string_view id) {
  throw Error(fmt::format("efficiency factor '{}' missing from data", id), Exit::internal);
}

}  // namespace

std::string_view factor_name(FactorId id) { return kFactorNames[static_cast<std::size_t>(id)]; }

void Efficiency::index() {
  for (std::size_t i = 0; i < kFactorIdCount; ++i) {
    auto it = factors_.find(kFactorNames[i]);
    known_[i] = it == factors_.end() ? nullptr : &it->second;
  }
}

const Factor& Efficiency::missing(FactorId id) { fail_missing(factor_name(id)); }

Efficiency Efficiency::parse(const util::JsonDoc& doc) {
  Efficiency e;
  util::Fields top(doc, doc.root(), "", "");
  const auto& arr = top.raw("factors");
  if (!arr.is_array()) top.fail("factors", "expected an array");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    util::Fields f(doc, arr[i], "/factors/" + std::to_string(i), "");
    Factor x;
    x.id = f.str("id");
    x.kind = f.opt_str("kind").value_or("");
    x.low = f.num("low");
    x.typical = f.num("typical");
    x.high = f.num("high");
    if (!(x.low <= x.typical && x.typical <= x.high))
      f.fail("typical", fmt::format("expected low <= typical <= high, got {} {} {}", x.low, x.typical, x.high));
    x.method = f.opt_str("method").value_or("");
    if (f.has("derived_from"))
      for (const auto& d : f.raw("derived_from"))
        if (d.is_string()) x.derived_from.push_back(d.get<std::string>());
    x.sources = read_sources(f);
    e.factors_[x.id] = std::move(x);
  }
  e.index();
  return e;
}

const Efficiency& Efficiency::embedded() {
  static const Efficiency e = [] {
    Efficiency out;
    if (auto snap = embedded::snapshot("efficiency.json"))
      decode(*snap, out);
    else
      out = parse(embedded::doc("efficiency.json"));
    return out;
  }();
  return e;
}

const Factor& Efficiency::get(std::string_view id) const {
  auto it = factors_.find(id);
  if (it == factors_.end()) fail_missing(id);
  return it->second;
}

}  // namespace gpuadvisor::catalog
