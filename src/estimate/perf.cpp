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

// Appends a note or a factor id once, however many of the estimate's terms use it.
template <class T, class U>
void add_once(std::vector<T>& v, U&& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.emplace_back(std::forward<U>(x));
}

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
  if (gpu.segment == catalog::Segment::datacenter && gpu.has_fast_interconnect()) return FactorId::mfu_train_nvlink;
  return FactorId::mfu_train_pcie;
}

// GeForce cards run 16-bit Tensor Core math accumulating in fp16 at twice the fp32-accumulate rate
// the catalog stores (NVIDIA Ada whitepaper, Appendix A, Table 2); workstation and datacenter
// cards run both at the same rate.
bool geforce(const catalog::Gpu& gpu) {
  return gpu.vendor == catalog::Vendor::nvidia && gpu.segment == catalog::Segment::consumer;
}

}  // namespace

EngineFactor engine_factor(const catalog::Efficiency& eff, catalog::EngineFactor kind, catalog::Engine e) {
  const auto own = catalog::engine_factor(kind, e);
  if (const auto* f = eff.find(own)) return {f, std::nullopt};
  // An engine with no published runs of its own borrows from the engine it is most like, else vLLM.
  const auto from = catalog::engine(e).factors_from.value_or(catalog::Engine::vllm);
  return {&eff.get(catalog::engine_factor(kind, from)), from};
}

namespace {

FactorId scaling_factor(const catalog::Gpu& gpu, int gpus) {
  return gpu.fast_link_for(gpus) ? FactorId::scaling_nvlink : FactorId::scaling_pcie;
}

// Training MFU falls as a GPU's compute outgrows its memory bandwidth: the same kernels keep a
// smaller share of a faster GPU busy (H100 runs publish lower MFU than A100 runs of the same
// models). The fitted exponent scales MFU by (FLOPs per byte / the A100's)^-exponent, where the
// A100 SXM's 312 TFLOPS over 2,039 GB/s is the reference most published runs share.
constexpr double kReferenceFlopsPerByte = 312e12 / 2039e9;

}  // namespace

Range vendor_scaled(Range r, const catalog::Gpu& gpu, const catalog::Efficiency& eff, PerfEstimate& out, bool explain) {
  using catalog::Vendor;
  if (gpu.vendor == Vendor::nvidia) return r;
  const std::optional<FactorId> own = gpu.vendor == Vendor::amd     ? std::optional(FactorId::vendor_amd)
                                      : gpu.vendor == Vendor::intel ? std::optional(FactorId::vendor_intel)
                                      : gpu.vendor == Vendor::apple ? std::optional(FactorId::vendor_apple)
                                                                    : std::nullopt;
  if (const auto* f = own ? eff.find(*own) : nullptr) {
    add_once(out.factors, std::string_view(f->id));
    return r.scaled(f->typical);
  }
  // No published runs on this vendor's GPUs: the lowest factor fitted for another vendor's
  // non-CUDA software (a buyer is better served by the cautious one), with a wider range; without
  // any, NVIDIA's factors with a wider range.
  const catalog::Factor* other = nullptr;
  for (auto id : {FactorId::vendor_amd, FactorId::vendor_intel, FactorId::vendor_apple})
    if (const auto* f = eff.find(id); f && (!other || f->typical < other->typical)) other = f;
  const std::string_view vendor = catalog::kVendorNames.name(gpu.vendor);
  if (explain)
    add_once(out.borrowed, other ? fmt::format("vendor-{}: no published runs on {} GPUs to fit; {} ({:.2f}) is "
                                               "borrowed and the range reaches down to 60% of typical",
                                               vendor, vendor, other->id, other->typical)
                                 : fmt::format("vendor-{}: no published runs on {} GPUs to fit; NVIDIA's factors are "
                                               "used and the range reaches down to 60% of typical",
                                               vendor, vendor));
  // Not added to out.factors: a borrowed factor is not fitted to this vendor's runs.
  if (other) r = r.scaled(other->typical);
  return {r.low * 0.6, r.typical, r.high};
}

Range training_mfu(const Workload& w, const catalog::Gpu& gpu, const catalog::Efficiency& eff, PerfEstimate& out,
                   bool explain) {
  if (w.mfu) {
    if (explain) out.assumptions.push_back(fmt::format("MFU {} (--mfu)", *w.mfu));
    return {*w.mfu, *w.mfu, *w.mfu};
  }
  const FactorId fid = mfu_factor(w, gpu);
  out.factors.push_back(catalog::factor_name(fid));
  Range mfu = factor_range(eff.get(fid));
  double k = 1;
  if (const auto* ex = eff.find(FactorId::mfu_intensity_exponent); ex && gpu.memory_bandwidth_gbs > 0) {
    out.factors.push_back(catalog::factor_name(FactorId::mfu_intensity_exponent));
    const double intensity = out.peak_flops / gpu.bandwidth_bytes_per_s();
    k = std::pow(intensity / kReferenceFlopsPerByte, -ex->typical);
    if (explain && std::fabs(k - 1) > 0.01)
      out.assumptions.push_back(fmt::format(
          "MFU x {:.2f}: {:.0f} FLOPs per byte of memory bandwidth against the A100's {:.0f} (fitted exponent {:.2f})",
          k, intensity, kReferenceFlopsPerByte, ex->typical));
  }
  if (out.compute == catalog::Precision::fp8) {
    if (const auto* f8 = eff.find(FactorId::mfu_train_fp8)) {
      out.factors.push_back(catalog::factor_name(FactorId::mfu_train_fp8));
      k *= f8->typical;
      if (explain)
        out.assumptions.push_back(fmt::format(
            "fp8 training keeps {:.0f}% of the bf16 utilisation against the fp8 peak (fitted: attention, norms and "
            "the optimizer stay in 16 and 32 bits)",
            f8->typical * 100));
    }
  }
  return vendor_scaled(mfu.scaled(std::min(k, 1 / std::max(mfu.high, 1e-9))), gpu, eff, out, explain);
}

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

namespace {

// A vision model: FLOPs per image at the fitted share of the peak, plus a fitted cost per forward
// pass (kernel launches, pre- and post-processing) that dominates small models at batch 1 on
// small GPUs. A diffusion model makes steps x guidance passes of its denoiser, then one decoder
// pass; training makes one denoiser pass per image (forward and backward).
PerfEstimate vision_perf(const Workload& w, const catalog::Gpu& gpu, const catalog::Efficiency& eff, bool explain,
                         double N, Range sc, PerfEstimate out) {
  const auto& v = *w.model.vision;
  const auto& d = v.diffusion;
  const std::optional<double> pass_gflops = d ? d->gflops_per_step : v.gflops_per_image;
  if (!pass_gflops) {
    out.available = false;
    out.reason = fmt::format("no published FLOPs per {} for {}", d ? "denoising step" : "image", w.model.name);
    return out;
  }
  const double pass = *pass_gflops * 1e9;
  const double b = static_cast<double>(w.batch);
  if (is_training(w.task)) {
    const double per_image = 3 * pass;  // backward ~ 2x forward
    Range mfu = training_mfu(w, gpu, eff, out, explain);
    out.mfu = mfu.typical;
    out.images_per_s = times(mfu, sc).scaled(N * out.peak_flops / per_image);
    out.bound = "compute";
    if (explain)
      out.assumptions.push_back(fmt::format("{} GFLOPs per {} forward, x3 for forward and backward",
                                            util::format_number(pass / 1e9), d ? "denoiser pass" : "image"));
    return out;
  }
  if (d && !d->gflops_decoder) {
    out.available = false;
    out.reason = fmt::format("no published FLOPs for {}'s image decoder", w.model.name);
    return out;
  }
  // Passes per batch: the denoiser's steps x guidance (each pass carries the whole batch), or one.
  const double steps = d ? static_cast<double>(w.steps) : 1;
  const double per_step = d ? pass * d->guidance_passes : pass;
  const double decoder = d ? *d->gflops_decoder * 1e9 : 0;
  const FactorId mfu_id = d ? FactorId::diffusion_mfu : FactorId::vision_mfu;
  // Edge modules (Jetson) pay more per pass (slower host cores and clocks) where runs on them tell.
  const catalog::Factor* edge_floor =
      gpu.segment == catalog::Segment::edge && !d ? eff.find(FactorId::vision_pass_overhead_edge) : nullptr;
  const catalog::Factor& floor_f =
      edge_floor ? *edge_floor : eff.get(d ? FactorId::diffusion_step_overhead : FactorId::vision_pass_overhead);
  out.factors.push_back(catalog::factor_name(mfu_id));
  Range mfu = w.mfu ? Range{*w.mfu, *w.mfu, *w.mfu} : factor_range(eff.get(mfu_id));
  // GeForce, workstation and edge cards keep a larger share of their peak in the denoiser's
  // convolutions than datacenter ones, where runs on both tell.
  if (const auto* c = d && !w.mfu && gpu.segment != catalog::Segment::datacenter
                          ? eff.find(FactorId::diffusion_consumer)
                          : nullptr) {
    out.factors.push_back(c->id);
    mfu = mfu.scaled(c->typical);
  }
  if (!w.mfu) mfu = vendor_scaled(mfu, gpu, eff, out, explain);
  const Range floor = factor_range(floor_f);
  out.factors.push_back(floor_f.id);
  out.mfu = mfu.typical;
  // The decoder in fp32 where the pipeline upcasts it (TF32 where the GPU has it: PyTorch lets
  // cuDNN convolutions use TF32 by default).
  double decoder_peak = out.peak_flops;
  if (d && d->decoder_fp32) {
    auto p32 = gpu.peak_flops(catalog::Precision::tf32);
    if (!p32) p32 = gpu.peak_flops(catalog::Precision::fp32);
    if (p32) decoder_peak = std::min(decoder_peak, *p32);
  }
  // Seconds for one batch on one GPU (the GPUs run batches side by side), and for its denoising
  // steps alone.
  auto denoise_s = [&](double u, double f) { return steps * (b * per_step / (out.peak_flops * u) + f); };
  auto batch_s = [&](double u, double f) { return denoise_s(u, f) + b * decoder / (decoder_peak * u); };
  const Range t{batch_s(mfu.high, floor.low), batch_s(mfu.typical, floor.typical), batch_s(mfu.low, floor.high)};
  out.images_per_s = times(Range{b / t.high, b / t.typical, b / t.low}, sc).scaled(N);
  out.image_batch_s = t;
  if (d)
    out.steps_per_s = Range{steps / denoise_s(mfu.low, floor.high), steps / denoise_s(mfu.typical, floor.typical),
                            steps / denoise_s(mfu.high, floor.low)};
  const double overhead_s = steps * floor.typical;
  out.bound = t.typical - overhead_s >= overhead_s ? "compute" : "per-step overhead";
  if (explain) {
    if (d)
      out.assumptions.push_back(
          fmt::format("{} steps x {} denoiser pass{} of {} GFLOPs per image, then the decoder's {} GFLOPs", w.steps,
                      d->guidance_passes, d->guidance_passes == 1 ? "" : "es (classifier-free guidance)",
                      util::format_number(pass / 1e9), util::format_number(decoder / 1e9)));
    else
      out.assumptions.push_back(fmt::format("{} GFLOPs per image forward", util::format_number(pass / 1e9)));
    out.assumptions.push_back(fmt::format(
        "{} per batch of {}: compute at {:.0f}% of the peak, plus {} ms per {}", util::format_duration(t.typical),
        w.batch, mfu.typical * 100, util::format_number(floor.typical * 1e3), d ? "denoising step" : "forward pass"));
  }
  return out;
}

}  // namespace

PerfEstimate estimate_perf(const Workload& w, const catalog::Gpu& gpu, const catalog::Efficiency& published,
                           bool explain) {
  PerfEstimate out;
  // A user's calibration answers for the GPUs and engines it was measured on.
  const bool engine_run = !is_training(w.task) && w.llm();
  const auto& eff = published.for_run(gpu.id, engine_run            ? catalog::name(w.engine)
                                              : is_training(w.task) ? std::string_view("training")
                                                                    : std::string_view());
  if (explain && &eff != &published) out.assumptions.push_back(published.scope()->label);
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
  const bool layer_split = w.split == catalog::Split::layer && !is_training(w.task) && w.tp > 1;
  const double N = layer_split ? static_cast<double>(w.gpus) / w.tp : w.gpus;
  const Range sc = layer_split ? Range{1, 1, 1} : scaling(gpu, w.gpus, eff);
  out.scaling = sc.typical;
  if (w.gpus > 1 && !layer_split) out.factors.push_back(catalog::factor_name(scaling_factor(gpu, w.gpus)));
  if (explain && layer_split)
    out.assumptions.push_back(fmt::format(
        "{} splits the layers over {} GPUs: a token passes through them in turn, so they hold the model but decode "
        "no faster than one",
        catalog::name(w.engine), w.tp));
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

  if (m.vision && !m.is_transformer()) return vision_perf(w, gpu, eff, explain, N, sc, std::move(out));

  if (is_training(w.task)) {
    const bool recompute = w.checkpointing == catalog::Checkpointing::full;
    auto op_note = [&](double extra, double n) {
      return w.checkpointing == catalog::Checkpointing::selective_op
                 ? fmt::format(", plus {:.2f}N recomputed (op-level selective: every other matmul of a layer)",
                               extra / n)
                 : std::string();
    };
    const double attn = attention_forward_flops(m, s);
    // Full recomputation adds a forward pass (2N and the attention); the op-level policy recomputes
    // every other matmul of a layer, and neither the attention nor the output layer.
    const double again = recompute ? 2 * P + 2 * attn
                         : w.checkpointing == catalog::Checkpointing::selective_op
                             ? 2 * op_checkpoint_recomputed_params(m)
                             : 0;
    double per_token;
    if (w.task == Task::train) {
      // 6N: forward 2N, backward 4N (Kaplan et al. 2020).
      per_token = 6 * P + 3 * 2 * attn + again;
      if (explain)
        out.assumptions.push_back(fmt::format("{}N FLOPs per token{} plus attention{}", recompute ? 8 : 6,
                                              recompute ? " (full recomputation adds a forward pass)" : "",
                                              op_note(again, P)));
    } else {
      // LoRA: forward 2N, backward through the frozen base 2N (no weight gradients), adapters
      // negligible.
      per_token = 4 * P + 3 * 2 * attn + again;
      if (explain)
        out.assumptions.push_back(
            fmt::format("{}N FLOPs per token (LoRA: no weight gradients for the frozen base{}) plus attention{}",
                        recompute ? 6 : 4, recompute ? ", recomputation adds a forward pass" : "", op_note(again, P)));
    }
    out.flops_per_token = per_token;
    out.recompute_flops_per_token = again;
    Range mfu = training_mfu(w, gpu, eff, out, explain);
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

  // Inference on an engine: it must run on the GPU's vendor.
  const auto& engine = catalog::engine(w.engine);
  if (!engine.runs_on(gpu.vendor)) {
    out.available = false;
    out.reason = fmt::format("{} does not run on {} GPUs", engine.name, catalog::kVendorNames.name(gpu.vendor));
    return out;
  }
  out.engine = w.engine;
  auto note_factor = [&](const EngineFactor& f) {
    out.factors.push_back(f.factor->id);
    if (explain && f.borrowed_from)
      add_once(out.borrowed, fmt::format("{}: no published runs to fit; {}'s decode and prefill factors are used",
                                         catalog::name(w.engine), catalog::name(*f.borrowed_from)));
  };

  // Prefill is compute-bound: 2N FLOPs per token plus attention, at the rate the engine's 16-bit
  // math runs on this GPU.
  const auto pf = engine_factor(eff, catalog::EngineFactor::prefill_mfu, w.engine);
  if (out.compute_known) note_factor(pf);
  Range pmfu = w.mfu ? Range{*w.mfu, *w.mfu, *w.mfu} : factor_range(*pf.factor);
  // GeForce, workstation and edge cards keep a different share of their peak than datacenter
  // ones, where an engine's runs on both tell (no factor: the engine's one value for all).
  if (!w.mfu && gpu.segment != catalog::Segment::datacenter)
    if (const auto* c = eff.find(catalog::engine_factor(catalog::EngineFactor::prefill_consumer, w.engine))) {
      out.factors.push_back(c->id);
      pmfu = pmfu.scaled(c->typical);
    }
  if (!w.mfu) pmfu = vendor_scaled(pmfu, gpu, eff, out, explain);
  out.mfu = pmfu.typical;
  const bool fp16_acc = engine.geforce_fp16_accumulate && geforce(gpu) &&
                        (out.compute == catalog::Precision::fp16 || out.compute == catalog::Precision::bf16);
  const double prefill_peak = out.peak_flops * (fp16_acc ? 2 : 1);
  out.prefill_peak_flops = prefill_peak;
  if (explain && fp16_acc && out.compute_known)
    out.assumptions.push_back(
        fmt::format("{} accumulates 16-bit matrix products in fp16 on GeForce cards: "
                    "prefill at {} TFLOPS, twice the fp32-accumulate peak",
                    catalog::name(w.engine), util::format_number(prefill_peak / 1e12)));
  const double prefill_flops = 2 * P + attention_forward_flops(m, s);
  out.flops_per_token = prefill_flops;
  out.prefill_tokens_per_s = times(pmfu, sc).scaled(N * prefill_peak / prefill_flops);
  // The first token of a request waits for its own prompt.
  if (out.compute_known) out.time_to_first_token_s = s / out.prefill_tokens_per_s.typical;
  if (explain && w.gpu_layers && *w.gpu_layers < m.layers && out.compute_known)
    out.assumptions.push_back(fmt::format(
        "prefill with {} of {} layers on the CPU: the rate is all layers' on the GPU, an upper bound (llama.cpp "
        "copies the CPU layers' weights to the GPU for each batch of prompt tokens; that copy is not counted)",
        m.layers - *w.gpu_layers, m.layers));

  // Decode reads every weight (the active experts for MoE: at batch b, up to b x k of E experts)
  // and the KV cache once per step: bandwidth-bound at small batch, compute-bound at large. Each
  // step also pays a fixed cost per layer (kernel launches, synchronisation) that dominates small
  // models on fast GPUs, and with tensor parallelism two all-reduces per layer over the link.
  const auto mem = memory_bytes(w, eff);
  double weight_bytes = mem[MemoryLineId::weights] + mem[MemoryLineId::quantization_constants];
  // The share of a MoE model's weights a step reads (the routed experts the batch reaches).
  const double moe_share = m.moe ? std::max(std::min(1.0, (P / m.params) * b), P / m.params) : 1.0;
  // With the routed experts in host RAM, the GPU holds the rest, all of it read each step.
  if (m.moe && !w.cpu_experts) weight_bytes *= moe_share;
  const double kv_bytes = mem[MemoryLineId::kv_cache];
  out.decode_bytes_per_step = weight_bytes + kv_bytes;
  const auto bwf = engine_factor(eff, catalog::EngineFactor::decode_bandwidth, w.engine);
  note_factor(bwf);
  Range bw = vendor_scaled(factor_range(*bwf.factor), gpu, eff, out, explain);
  const auto kernel = w.format().kernel;
  if (kernel != WeightFormat::Kernel::dense) {
    const FactorId qid =
        kernel == WeightFormat::Kernel::gguf_quant ? FactorId::decode_quant_gguf : FactorId::decode_quant_weight_only;
    bw = times(bw, factor_range(eff.get(qid)));
    out.factors.push_back(catalog::factor_name(qid));
  }
  out.bandwidth_efficiency = bw.typical;
  const auto ovf = engine_factor(eff, catalog::EngineFactor::decode_overhead, w.engine);
  note_factor(ovf);
  const double layers = m.is_transformer() ? m.layers + m.encoder_layers : 0;
  // A layer split reads every GPU's shard one after another in each step.
  const double shards_in_turn = layer_split ? w.tp : 1;
  const double read = out.decode_bytes_per_step * shards_in_turn / gpu.bandwidth_bytes_per_s();
  double allreduce = 0;
  bool allreduce_borrowed = false;
  if (!layer_split && w.tp > 1) {
    FactorId aid = gpu.fast_link_for(w.tp) ? FactorId::allreduce_nvlink : FactorId::allreduce_pcie;
    if (!eff.find(aid)) {
      // No published tensor-parallel runs over PCIe to fit: the NVLink latency, with the range
      // reaching down to half the speed.
      aid = FactorId::allreduce_nvlink;
      allreduce_borrowed = true;
      if (explain)
        out.borrowed.emplace_back(
            "allreduce-latency-pcie: no published tensor-parallel decode runs over PCIe to fit; the NVLink "
            "all-reduce latency is used and the range reaches down to half the speed");
    }
    allreduce = 2 * layers * eff.get(aid).typical;
    out.factors.push_back(catalog::factor_name(aid));
  }
  // Unknown compute: no compute limit is applied (the estimate holds where decode is bandwidth-bound).
  double compute = out.compute_known ? b * prefill_flops / (N * prefill_peak * pmfu.typical) : 0;
  // llama.cpp -ngl below all layers: the CPU runs the other layers from host RAM, one after the GPU's
  // in each step, at a share of the host's theoretical bandwidth; the per-layer cost is the GPU's
  // layers'.
  const bool cpu_layers = (w.gpu_layers || w.cpu_experts) && mem.host_bytes > 0;
  Range host_bw{};
  const double gpu_layers = w.gpu_layers ? std::min<double>(layers, *w.gpu_layers) : layers;
  // The GPU computes only its layers (the CPU's arithmetic hides under its reads at these batches).
  if (w.gpu_layers && layers > 0) compute *= gpu_layers / layers;
  if (cpu_layers) {
    const auto& hf = eff.get(FactorId::decode_bandwidth_host);
    host_bw = factor_range(hf);
    out.factors.push_back(hf.id);
  }
  // The token embeddings stay in host RAM but a step reads one row of them, not the table (an
  // untied model's; a tied one reads the whole matrix as its output layer).
  double host_weights = mem.host(MemoryLineId::weights) + mem.host(MemoryLineId::quantization_constants);
  if (cpu_layers && w.gpu_layers && !m.tied_embeddings && m.params > 0) {
    const double table = static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
    const double bytes_per_param = m.tensors ? m.tensors->bytes / m.params : w.format().bits / 8;
    host_weights = std::max(0.0, host_weights - table * bytes_per_param);
  }
  // Of the experts in host RAM a step reads those the batch's tokens are routed to: k of E each.
  if (m.moe && m.moe->experts > 0)
    host_weights *=
        w.cpu_experts ? std::min(1.0, b * m.moe->experts_per_token / static_cast<double>(m.moe->experts)) : moe_share;
  const double host_read = host_weights + mem.host(MemoryLineId::kv_cache);
  auto host_at = [&](double share) { return cpu_layers ? host_read / (w.host_bandwidth * share) : 0.0; };
  auto step_at = [&](double bw_eff, double host_share) {
    return std::max(read / bw_eff, compute) + gpu_layers * ovf.factor->typical + allreduce + host_at(host_share);
  };
  DecodeTerms& t = out.decode_terms;
  t.memory_s = read / bw.typical;
  t.compute_s = compute;
  t.overhead_s = gpu_layers * ovf.factor->typical;
  t.allreduce_s = allreduce;
  t.host_s = host_at(host_bw.typical);
  t.step_s = step_at(bw.typical, host_bw.typical);
  Range steps = {1 / step_at(bw.low, host_bw.low), 1 / t.step_s, 1 / step_at(bw.high, host_bw.high)};
  if (allreduce_borrowed) steps.low *= 0.5;
  if (w.gpus > 1 && !layer_split && w.tp == 1) steps = times(steps, sc);  // replicas share nothing per step
  const double busiest = std::max({t.memory_s, t.compute_s, t.overhead_s, t.allreduce_s, t.host_s});
  out.bound = busiest == t.host_s       ? "host memory bandwidth"
              : busiest == t.memory_s   ? "memory bandwidth"
              : busiest == t.compute_s  ? "compute"
              : busiest == t.overhead_s ? "per-step overhead"
                                        : "interconnect";
  out.decode_tokens_per_s = steps;
  out.decode_total_tokens_per_s = steps.scaled(b);
  if (explain) {
    std::string terms = fmt::format("weights and KV cache {:.1f} ms at {:.0f}% of {} GB/s", t.memory_s * 1e3,
                                    bw.typical * 100, util::format_number(gpu.memory_bandwidth_gbs));
    if (t.compute_s > t.memory_s) terms = fmt::format("compute {:.1f} ms for {} sequences", t.compute_s * 1e3, w.batch);
    if (t.overhead_s > 0)
      terms += fmt::format(", per-step overhead {:.1f} ms ({:g} layers)", t.overhead_s * 1e3, gpu_layers);
    if (t.allreduce_s > 0)
      terms += fmt::format(", all-reduces {:.1f} ms (2 per layer over tp {})", t.allreduce_s * 1e3, w.tp);
    if (t.host_s > 0)
      terms += fmt::format(", {} {:.1f} ms ({} from host RAM at {:.0f}% of {} GB/s)",
                           w.cpu_experts ? std::string("routed experts on the CPU")
                                         : fmt::format("{} CPU layers", m.layers - *w.gpu_layers),
                           t.host_s * 1e3, util::format_bytes(host_read), host_bw.typical * 100,
                           util::format_number(w.host_bandwidth / 1e9));
    if (!layer_split && w.tp > 1) {
      const double one = std::max(t.memory_s * w.tp, t.compute_s * w.tp) + t.overhead_s;
      out.assumptions.push_back(fmt::format(
          "tensor parallel over {} GPUs ({}): decode {:.2f}x one GPU's, as each reads 1/{} of the weights but the "
          "per-layer cost{} {} not shrink",
          w.tp, gpu.fast_link_for(w.tp) ? "fast link" : "PCIe", one / t.step_s, w.tp,
          t.allreduce_s > 0 ? " and the all-reduces" : "", t.allreduce_s > 0 ? "do" : "does"));
    }
    out.assumptions.push_back(fmt::format("decode {:.1f} ms per step on {}: {}; {} per GPU read per step",
                                          t.step_s * 1e3, catalog::name(w.engine), terms,
                                          util::format_bytes(out.decode_bytes_per_step)));
  }
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
    if (p.image_batch_s) {
      j["batch_seconds"] = p.image_batch_s->typical;
      j["batch_seconds_range"] = to_json(*p.image_batch_s);
    }
    if (w.steps > 0 && !is_training(w.task)) j["steps"] = w.steps;
    if (p.steps_per_s) j["steps_per_s"] = p.steps_per_s->typical;
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
    if (p.engine) j["engine"] = catalog::name(*p.engine);
    util::Json t;
    t["step_s"] = p.decode_terms.step_s;
    t["memory_s"] = p.decode_terms.memory_s;
    t["compute_s"] = p.decode_terms.compute_s;
    t["overhead_s"] = p.decode_terms.overhead_s;
    t["allreduce_s"] = p.decode_terms.allreduce_s;
    t["host_s"] = p.decode_terms.host_s;
    j["decode_terms"] = t;
  }
  j["factors"] = p.factors;
  j["borrowed_factors"] = p.borrowed;
  j["assumptions"] = p.assumptions;
  return j;
}

}  // namespace gpuadvisor::estimate
