#include "gpuadvisor/catalog/efficiency.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/catalog/snapshot.h"

namespace gpuadvisor::catalog {
namespace {

constexpr std::string_view kFactorNames[] = {
    "activation-memory-factor",
    "cuda-context-bytes",
    "allocator-fragmentation",
    "prefill-mfu",
    "mfu-finetune-lora",
    "mfu-train-datacenter-nvlink",
    "mfu-train-pcie",
    "decode-quant-gguf",
    "decode-quant-weight-only",
    "scaling-nvlink",
    "scaling-pcie",
    "allreduce-latency-pcie",
    "allreduce-latency-nvlink",
    "mfu-intensity-exponent",
    "mfu-train-fp8",
    "vendor-amd",
    "vendor-intel",
    "vendor-apple",
    "vision-mfu",
    "vision-pass-overhead",
    "diffusion-mfu",
    "diffusion-step-overhead",
    "diffusion-consumer",
    "vision-pass-overhead-edge",
    "decode-bandwidth-host",
    "logits-memory-factor",
    "decode-bandwidth-llama.cpp",
    "decode-bandwidth-vllm",
    "decode-bandwidth-sglang",
    "decode-bandwidth-trt-llm",
    "decode-bandwidth-transformers",
    "decode-bandwidth-exllamav2",
    "decode-layer-overhead-llama.cpp",
    "decode-layer-overhead-vllm",
    "decode-layer-overhead-sglang",
    "decode-layer-overhead-trt-llm",
    "decode-layer-overhead-transformers",
    "decode-layer-overhead-exllamav2",
    "prefill-mfu-llama.cpp",
    "prefill-mfu-vllm",
    "prefill-mfu-sglang",
    "prefill-mfu-trt-llm",
    "prefill-mfu-transformers",
    "prefill-mfu-exllamav2",
    "prefill-consumer-llama.cpp",
    "prefill-consumer-vllm",
    "prefill-consumer-sglang",
    "prefill-consumer-trt-llm",
    "prefill-consumer-transformers",
    "prefill-consumer-exllamav2",
};

// One name per FactorId, in order: a factor added to the enum without a name fails here.
static_assert(std::size(kFactorNames) == kFactorIdCount);

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

Efficiency Efficiency::with_scope(CalibrationScope scope) const {
  Efficiency e = *this;
  e.scope_ = std::make_shared<const CalibrationScope>(std::move(scope));
  return e;
}

const Efficiency& Efficiency::for_run(std::string_view gpu_id, std::string_view engine) const {
  if (!scope_ || !scope_->eff) return *this;
  auto has = [](const std::vector<std::string>& v, std::string_view x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  return has(scope_->gpus, gpu_id) && has(scope_->engines, engine) ? *scope_->eff : *this;
}

const Efficiency& Efficiency::for_training_memory() const {
  if (!scope_ || !scope_->eff) return *this;
  const auto& e = scope_->engines;
  return std::find(e.begin(), e.end(), "training") != e.end() ? *scope_->eff : *this;
}

Efficiency Efficiency::with(Factor f) const {
  auto factors = factors_;
  std::string id = f.id;
  factors[id] = std::move(f);
  return Efficiency(std::move(factors));
}

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
