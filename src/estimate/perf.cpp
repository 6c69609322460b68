#include "gpuadvisor/estimate/perf.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::estimate {
namespace {

using catalog::Precision;

Range factor_range(const catalog::Factor& f) { return {f.low, f.typical, f.high}; }

Range times(const Range& a, const Range& b) { return {a.low * b.low, a.typical * b.typical, a.high * b.high}; }

// Attention FLOPs per token beyond the 2N of the weights, forward pass: 2 x layers x heads x
// head_dim x s for causal attention (QK^T and AV over s/2 keys on average; PaLM, Chowdhery et
// al. 2022, appendix B counts 4LHQT for full attention).
double attention_forward_flops(const catalog::Model& m, double s) {
  if (!m.is_transformer()) return 0;
  return 2.0 * (m.layers + m.encoder_layers) * m.heads * static_cast<double>(m.head_dim) * s;
}

using catalog::FactorId;

// The share of time a training run loses to interruptions, at the scale it was published for.
constexpr double kLostAtLlama3 = 0.10;
constexpr double kLlama3Gpus = 16384;

FactorId mfu_factor(const Workload& w, const catalog::Gpu& gpu) {
  if (w.task == Task::lora || w.task == Task::qlora) return FactorId::mfu_finetune_lora;
  // The datacenter factor comes from SXM/HBM systems; consumer and workstation cards, and PCIe
  // datacenter cards without a fast link, calibrate lower.
  if (std::string_view(gpu.segment) == "datacenter" && gpu.has_fast_interconnect()) return FactorId::mfu_train_nvlink;
  return FactorId::mfu_train_pcie;
}

FactorId bandwidth_factor(const Workload& w) {
  const std::string_view p = w.precision;
  if (w.format().gguf) return FactorId::decode_bandwidth_gguf;
  if (p == "gptq-int4" || p == "awq-int4" || p == "int4" || p == "nf4") return FactorId::decode_bandwidth_int4;
  return FactorId::decode_bandwidth;
}

FactorId scaling_factor(const catalog::Gpu& gpu, int gpus) {
  return gpu.fast_link_for(gpus) ? FactorId::scaling_nvlink : FactorId::scaling_pcie;
}

}  // namespace

std::optional<std::pair<Precision, double>> compute_peak(const Workload& w, const catalog::Gpu& gpu) {
  Precision p = w.format().compute;
  if (is_training(w.task) && w.task != Task::train) p = Precision::bf16;  // adapters train in 16-bit
  if (w.task == Task::train && std::string_view(w.precision) == "fp8") p = Precision::fp8;
  auto peak = gpu.peak_flops(p);
  if (!peak && p == Precision::bf16) {
    p = Precision::fp16;
    peak = gpu.peak_flops(p);
  }
  if (!peak && p == Precision::tf32) {
    p = Precision::fp32;
    peak = gpu.peak_flops(p);
  }
  if (!peak) return std::nullopt;
  return std::make_pair(p, *peak);
}

Range scaling(const catalog::Gpu& gpu, int gpus, const catalog::Efficiency& eff) {
  if (gpus <= 1) return {1, 1, 1};
  // The factors are per-GPU efficiencies at 8 GPUs; each doubling costs the same share, and the
  // published 8-to-128-GPU runs hold near the 8-GPU value, so the loss stops growing after 8.
  const auto& f = eff.get(scaling_factor(gpu, gpus));
  double doublings = std::min(std::log2(static_cast<double>(gpus)), 3.0) / 3.0;
  return {std::pow(f.low, doublings), std::pow(f.typical, doublings), std::pow(f.high, doublings)};
}

PerfEstimate estimate_perf(const Workload& w, const catalog::Gpu& gpu, const catalog::Efficiency& eff, bool explain) {
  PerfEstimate out;
  const auto& m = w.model;
  auto peak = compute_peak(w, gpu);
  // A GPU that publishes no peak at all (Apple publishes no FLOPS) still has a published memory
  // bandwidth: single-stream decode, which is bandwidth-bound, is estimated from it alone.
  // Only 16-bit math is assumed there (weight-only formats such as GGUF dequantize to it).
  const bool decode_only = !peak && !gpu.any_peak() && catalog::is_wide(w.format().compute) && !is_training(w.task) &&
                           m.is_transformer() && !m.vision;
  if (!peak && !decode_only) {
    out.available = false;
    out.reason = fmt::format("{} has no published {} peak", gpu.name, catalog::name(w.format().compute));
    return out;
  }
  out.compute = peak ? peak->first : w.format().compute;
  out.peak_flops = peak ? peak->second : 0;
  out.compute_known = peak.has_value();
  // llama.cpp splits a GGUF model's layers over the GPUs (its default --split-mode layer): a token
  // passes through them in turn, so they hold more but one stream runs no faster, and no
  // all-reduce is paid. Each group of tp GPUs computes at one GPU's rate.
  const bool layer_split = w.format().gguf && !is_training(w.task) && w.tp > 1;
  const double N = layer_split ? static_cast<double>(w.gpus) / w.tp : w.gpus;
  const Range sc = layer_split ? Range{1, 1, 1} : scaling(gpu, w.gpus, eff);
  out.scaling = sc.typical;
  if (w.gpus > 1 && !layer_split) out.factors.push_back(catalog::factor_name(scaling_factor(gpu, w.gpus)));
  if (explain && layer_split)
    out.assumptions.push_back(fmt::format(
        "llama.cpp splits the GGUF layers over {} GPUs (--split-mode layer): a token passes through them in turn, "
        "so they hold the model but decode no faster than one",
        w.tp));
  const double s = static_cast<double>(w.seq_len), b = static_cast<double>(w.batch);
  const double P = m.params_per_token();
  if (explain && out.compute_known)
    out.assumptions.push_back(fmt::format("{} peak {} TFLOPS dense per GPU", catalog::name(out.compute),
                                          util::format_number(out.peak_flops / 1e12)));
  if (explain && !out.compute_known)
    out.assumptions.push_back(
        fmt::format("{} publishes no compute peak: decode from memory bandwidth alone (bandwidth-bound "
                    "at batch 1); prefill and time to first token unknown",
                    gpu.name));

  if (m.vision && !m.is_transformer()) {
    if (!m.vision->gflops_per_image) {
      out.available = false;
      out.reason = fmt::format("no published FLOPs per image for {}", m.name);
      return out;
    }
    const double fwd = *m.vision->gflops_per_image * 1e9;
    const double per_image = is_training(w.task) ? 3 * fwd : fwd;  // backward ~ 2x forward
    const FactorId fid = is_training(w.task) ? mfu_factor(w, gpu) : FactorId::prefill_mfu;
    const auto& f = eff.get(fid);
    out.factors.push_back(catalog::factor_name(fid));
    Range mfu = w.mfu ? Range{*w.mfu, *w.mfu, *w.mfu} : factor_range(f);
    out.mfu = mfu.typical;
    out.images_per_s = times(mfu, sc).scaled(N * out.peak_flops / per_image);
    out.bound = "compute";
    if (explain)
      out.assumptions.push_back(fmt::format("{} GFLOPs per image forward{}", util::format_number(fwd / 1e9),
                                            is_training(w.task) ? ", x3 for forward and backward" : ""));
    return out;
  }

  if (is_training(w.task)) {
    const bool recompute = w.checkpointing == "full";
    const double attn = attention_forward_flops(m, s);
    double per_token;
    if (w.task == Task::train) {
      // 6N: forward 2N, backward 4N (Kaplan et al. 2020); full recomputation adds a forward.
      per_token = (recompute ? 8 : 6) * P + (recompute ? 4 : 3) * 2 * attn;
      if (explain)
        out.assumptions.push_back(fmt::format("{}N FLOPs per token{} plus attention", recompute ? 8 : 6,
                                              recompute ? " (full recomputation adds a forward pass)" : ""));
    } else {
      // LoRA: forward 2N, backward through the frozen base 2N (no weight gradients), adapters
      // negligible; recomputation adds a forward.
      per_token = (recompute ? 6 : 4) * P + (recompute ? 4 : 3) * 2 * attn;
      if (explain)
        out.assumptions.push_back(
            fmt::format("{}N FLOPs per token (LoRA: no weight gradients for the frozen base{}) plus attention",
                        recompute ? 6 : 4, recompute ? ", recomputation adds a forward pass" : ""));
    }
    out.flops_per_token = per_token;
    const FactorId fid = mfu_factor(w, gpu);
    Range mfu = w.mfu ? Range{*w.mfu, *w.mfu, *w.mfu} : factor_range(eff.get(fid));
    if (!w.mfu)
      out.factors.push_back(catalog::factor_name(fid));
    else if (explain)
      out.assumptions.push_back(fmt::format("MFU {} (--mfu)", *w.mfu));
    out.mfu = mfu.typical;
    out.tokens_per_s = times(mfu, sc).scaled(N * out.peak_flops / per_token);
    out.step_time_s = b * s * w.dp() / out.tokens_per_s.typical;
    out.bound = sc.typical < 0.85 ? "interconnect" : "compute";
    if (w.tokens > 0) {
      out.total_flops = per_token * w.tokens;
      // Failures stop a job and it restarts from its last checkpoint. Llama 3 405B lost under 10%
      // of 54 days to 466 interruptions on 16,384 H100s ("higher than 90% effective training
      // time", Llama 3 Herd of Models, arXiv 2407.21783, section 3.3.4); each GPU and its host
      // fail independently, so the share lost grows with the GPU count from that point.
      const double lost = std::min(0.5, kLostAtLlama3 * N / kLlama3Gpus);
      out.time_s = out.tokens_per_s.inverse().scaled(w.tokens / (1 - lost));
      if (explain && lost >= 0.001)
        out.assumptions.push_back(fmt::format(
            "interruptions: about {:.1f}% of the time lost to failures and restarts on {} GPUs (Llama 3 405B "
            "lost under 10% on 16,384 H100s; the share taken to grow with the GPU count)",
            lost * 100, util::format_int(w.gpus)));
    }
    return out;
  }

  // Inference. Prefill is compute-bound: 2N FLOPs per token plus attention.
  const auto& pf = eff.get(FactorId::prefill_mfu);
  if (out.compute_known) out.factors.push_back(catalog::factor_name(FactorId::prefill_mfu));
  Range pmfu = w.mfu ? Range{*w.mfu, *w.mfu, *w.mfu} : factor_range(pf);
  out.mfu = pmfu.typical;
  const double prefill_flops = 2 * P + attention_forward_flops(m, s);
  out.flops_per_token = prefill_flops;
  out.prefill_tokens_per_s = times(pmfu, sc).scaled(N * out.peak_flops / prefill_flops);
  // All b prompts are prefilled before the first generated token of the batch.
  if (out.compute_known) out.time_to_first_token_s = s * b / out.prefill_tokens_per_s.typical;

  // Decode reads every weight (the active experts for MoE: at batch b, up to b x k of E experts)
  // and the KV cache once per step: bandwidth-bound at small batch, compute-bound at large.
  const auto mem = memory_bytes(w, eff);
  double weight_bytes = mem[MemoryLineId::weights] + mem[MemoryLineId::quantization_constants];
  if (m.moe) {
    double active_share = std::min(1.0, (P / m.params) * b);
    weight_bytes *= std::max(active_share, P / m.params);
  }
  const double kv_bytes = mem[MemoryLineId::kv_cache];
  out.decode_bytes_per_step = weight_bytes + kv_bytes;
  const FactorId bid = bandwidth_factor(w);
  const auto& bf = eff.get(bid);
  out.factors.push_back(catalog::factor_name(bid));
  Range bw = factor_range(bf);
  out.bandwidth_efficiency = bw.typical;
  // Per step: memory time on each GPU (its shard) vs compute time for the batch.
  // A layer split reads every GPU's shard one after another in each step.
  const double shards_in_turn = layer_split ? w.tp : 1;
  Range mem_rate = bw.scaled(gpu.bandwidth_bytes_per_s() / (out.decode_bytes_per_step * shards_in_turn));  // steps/s
  // Unknown compute: no compute limit is applied (the estimate holds where decode is bandwidth-bound).
  Range cmp_rate = out.compute_known ? pmfu.scaled(N * out.peak_flops / (b * prefill_flops))
                                     : Range{HUGE_VAL, HUGE_VAL, HUGE_VAL};  // steps/s
  Range steps = {std::min(mem_rate.low, cmp_rate.low), std::min(mem_rate.typical, cmp_rate.typical),
                 std::min(mem_rate.high, cmp_rate.high)};
  if (w.gpus > 1) steps = times(steps, {sc.low, sc.typical, sc.high});
  out.bound = mem_rate.typical <= cmp_rate.typical ? "memory bandwidth" : "compute";
  if (out.bound == "memory bandwidth" && w.gpus > 1 && sc.typical < 0.85) out.bound = "interconnect";
  out.decode_tokens_per_s = steps;
  out.decode_total_tokens_per_s = steps.scaled(b);
  if (explain)
    out.assumptions.push_back(fmt::format("decode reads {} per GPU per step at {:.0f}% of {} GB/s",
                                          util::format_bytes(out.decode_bytes_per_step), bw.typical * 100,
                                          util::format_number(gpu.memory_bandwidth_gbs)));
  return out;
}

util::Json to_json(const Range& r) {
  util::Json j;
  j["low"] = r.low;
  j["typical"] = r.typical;
  j["high"] = r.high;
  return j;
}

util::Json to_json(const PerfEstimate& p, const Workload& w) {
  util::Json j;
  j["available"] = p.available;
  if (!p.available) {
    j["reason"] = p.reason;
    return j;
  }
  j["compute_precision"] = catalog::name(p.compute);
  j["compute_known"] = p.compute_known;
  j["peak_flops_per_gpu"] = p.compute_known ? util::Json(p.peak_flops) : util::Json(nullptr);
  j["mfu"] = p.compute_known ? util::Json(p.mfu) : util::Json(nullptr);
  j["scaling_efficiency"] = p.scaling;
  j["bound"] = p.bound;
  if (p.images_per_s) {
    j["images_per_s"] = p.images_per_s->typical;
    j["images_per_s_range"] = to_json(*p.images_per_s);
  } else if (is_training(w.task)) {
    j["flops_per_token"] = p.flops_per_token;
    j["tokens_per_s"] = p.tokens_per_s.typical;
    j["tokens_per_s_range"] = to_json(p.tokens_per_s);
    j["step_time_s"] = p.step_time_s;
    if (p.time_s) {
      j["total_flops"] = p.total_flops;
      j["time_s"] = p.time_s->typical;
      j["time_s_range"] = to_json(*p.time_s);
    }
  } else {
    j["prefill_tokens_per_s"] = p.compute_known ? util::Json(p.prefill_tokens_per_s.typical) : util::Json(nullptr);
    j["prefill_tokens_per_s_range"] = p.compute_known ? to_json(p.prefill_tokens_per_s) : util::Json(nullptr);
    j["decode_tokens_per_s"] = p.decode_tokens_per_s.typical;
    j["decode_tokens_per_s_range"] = to_json(p.decode_tokens_per_s);
    j["decode_total_tokens_per_s"] = p.decode_total_tokens_per_s.typical;
    j["time_to_first_token_s"] = p.compute_known ? util::Json(p.time_to_first_token_s) : util::Json(nullptr);
    j["decode_bytes_per_step"] = static_cast<std::int64_t>(std::llround(p.decode_bytes_per_step));  // whole bytes
    j["bandwidth_efficiency"] = p.bandwidth_efficiency;
  }
  j["factors"] = p.factors;
  j["assumptions"] = p.assumptions;
  return j;
}

}  // namespace gpuadvisor::estimate
